// ts_pool.h: a fixed thread pool with optional core pinning, for parallel-for and task queues.
#ifndef TS_POOL_H
#define TS_POOL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ts_pool ts_pool;

typedef struct {
    int threads;       // >= 1; 0 = number of online cores
    int pin;           // 1: pin thread t to cpus[t % ncpus] (or core t % cores when cpus is NULL)
    const int *cpus;   // optional explicit core list
    int ncpus;
} ts_pool_opts;

int ts_pool_create(const ts_pool_opts *opts, ts_pool **out);
void ts_pool_destroy(ts_pool *p); // waits for queued work
int ts_pool_size(const ts_pool *p);

// Queue one task; runs on some pool thread. Returns TS_ERR_STATE after destroy began.
int ts_pool_submit(ts_pool *p, void (*fn)(void *arg), void *arg);
// Block until every task submitted so far has finished.
void ts_pool_wait(ts_pool *p);
// Run body(i, arg) for i in [0, n) spread over the pool threads and the caller; returns when done.
void ts_pool_parallel_for(ts_pool *p, int64_t n, void (*body)(int64_t i, void *arg), void *arg);

// Pin the calling thread to one core (returns 0, or TS_ERR_UNSUPPORTED where affinity is absent).
int ts_pin_current_thread(int core);

#ifdef __cplusplus
}
#endif

#endif
