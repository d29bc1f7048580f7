// ts_pool.c: fixed pthread pool: FIFO task queue, wait, dynamic parallel-for, optional pinning.
#define _GNU_SOURCE
#include "ts_pool.h"

#include "ts_error.h"
#include "ts_json.h"
#include "ts_log.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

typedef struct task {
    void (*fn)(void *);
    void *arg;
    struct task *next;
} task;

typedef struct {
    ts_pool *pool;
    int index;
    int core; // -1: not pinned
} worker_arg;

struct ts_pool {
    pthread_mutex_t mu;
    pthread_cond_t work;   // a task was queued, or shutdown began
    pthread_cond_t idle;   // pending dropped to zero
    task *head, *tail;
    long pending;          // queued + running
    int shutdown;
    int nthreads;
    pthread_t *threads;
    worker_arg *args;
};

int ts_pin_current_thread(int core) {
    if (core < 0 || core >= CPU_SETSIZE) TS_RAISE(TS_ERR_ARG, "core %d is out of range [0, %d)", core, CPU_SETSIZE);
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(core, &set);
    // pid 0 means the calling thread for sched_setaffinity on Linux.
    if (sched_setaffinity(0, sizeof set, &set) != 0) {
        int e = errno;
        if (e == ENOSYS) TS_RAISE(TS_ERR_UNSUPPORTED, "thread affinity is not supported here");
        TS_RAISE(TS_ERR_ARG, "cannot pin thread to core %d: %s", core, strerror(e));
    }
    return 0;
}

static void *worker_main(void *vp) {
    worker_arg *wa = vp;
    ts_pool *p = wa->pool;
    // Pinning is a performance hint: a refusal (e.g. a restricted cpuset) is reported, not fatal.
    if (wa->core >= 0 && ts_pin_current_thread(wa->core) < 0)
        ts_log(TS_LOG_WARN, "pool thread %d not pinned: %s", wa->index, ts_error_string());
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->head && !p->shutdown) pthread_cond_wait(&p->work, &p->mu);
        task *t = p->head;
        if (!t) break; // shutdown with an empty queue: queued work is always drained first
        p->head = t->next;
        if (!p->head) p->tail = NULL;
        pthread_mutex_unlock(&p->mu);
        t->fn(t->arg);
        free(t);
        pthread_mutex_lock(&p->mu);
        if (--p->pending == 0) pthread_cond_broadcast(&p->idle);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

// The t-th CPU of the calling process's allowed set (modulo its size): "core t" means a core this
// process may use, which is not always core t of the machine inside containers or cpusets.
static int allowed_core(int t) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return t % ts_cpu_cores();
    int n = CPU_COUNT(&set);
    if (n <= 0) return t % ts_cpu_cores();
    int want = t % n;
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (CPU_ISSET(c, &set) && want-- == 0) return c;
    }
    return t % ts_cpu_cores();
}

static void stop_threads(ts_pool *p, int started) {
    pthread_mutex_lock(&p->mu);
    p->shutdown = 1;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    for (int t = 0; t < started; t++) {
        int rc = pthread_join(p->threads[t], NULL);
        if (rc != 0) ts_log(TS_LOG_ERROR, "pool: pthread_join failed: %s", strerror(rc));
    }
}

static void free_pool(ts_pool *p) {
    pthread_cond_destroy(&p->idle);
    pthread_cond_destroy(&p->work);
    pthread_mutex_destroy(&p->mu);
    free(p->threads);
    free(p->args);
    free(p);
}

int ts_pool_create(const ts_pool_opts *opts, ts_pool **out) {
    ts_pool_opts o = {0, 0, NULL, 0};
    if (opts) o = *opts;
    if (!out) TS_RAISE(TS_ERR_ARG, "ts_pool_create: out is NULL");
    *out = NULL;
    if (o.threads < 0) TS_RAISE(TS_ERR_ARG, "pool threads = %d must be >= 0", o.threads);
    if (o.threads == 0) o.threads = ts_cpu_cores();
    if (o.pin && o.cpus) {
        if (o.ncpus <= 0) TS_RAISE(TS_ERR_ARG, "pool: cpu list given with ncpus = %d", o.ncpus);
        for (int i = 0; i < o.ncpus; i++) {
            if (o.cpus[i] < 0 || o.cpus[i] >= CPU_SETSIZE)
                TS_RAISE(TS_ERR_ARG, "pool: cpus[%d] = %d is out of range", i, o.cpus[i]);
        }
    }
    ts_pool *p = calloc(1, sizeof *p);
    if (!p) TS_RAISE(TS_ERR_NOMEM, "pool: out of memory");
    p->threads = calloc((size_t)o.threads, sizeof *p->threads);
    p->args = calloc((size_t)o.threads, sizeof *p->args);
    if (!p->threads || !p->args) {
        free(p->threads);
        free(p->args);
        free(p);
        TS_RAISE(TS_ERR_NOMEM, "pool: out of memory for %d threads", o.threads);
    }
    int rc = pthread_mutex_init(&p->mu, NULL);
    if (rc == 0 && (rc = pthread_cond_init(&p->work, NULL)) != 0) pthread_mutex_destroy(&p->mu);
    if (rc == 0 && (rc = pthread_cond_init(&p->idle, NULL)) != 0) {
        pthread_cond_destroy(&p->work);
        pthread_mutex_destroy(&p->mu);
    }
    if (rc != 0) {
        free(p->threads);
        free(p->args);
        free(p);
        TS_RAISE(TS_ERR_INTERNAL, "pool: pthread init failed: %s", strerror(rc));
    }
    p->nthreads = o.threads;
    for (int t = 0; t < o.threads; t++) {
        worker_arg *wa = &p->args[t];
        wa->pool = p;
        wa->index = t;
        wa->core = !o.pin ? -1 : o.cpus ? o.cpus[t % o.ncpus] : allowed_core(t);
        rc = pthread_create(&p->threads[t], NULL, worker_main, wa);
        if (rc != 0) {
            stop_threads(p, t);
            free_pool(p);
            TS_RAISE(TS_ERR_INTERNAL, "pool: pthread_create failed for thread %d: %s", t, strerror(rc));
        }
    }
    *out = p;
    return 0;
}

void ts_pool_destroy(ts_pool *p) {
    if (!p) return;
    stop_threads(p, p->nthreads);
    free_pool(p);
}

int ts_pool_size(const ts_pool *p) { return p ? p->nthreads : 0; }

int ts_pool_submit(ts_pool *p, void (*fn)(void *arg), void *arg) {
    if (!p || !fn) TS_RAISE(TS_ERR_ARG, "ts_pool_submit: pool or function is NULL");
    task *t = malloc(sizeof *t);
    if (!t) TS_RAISE(TS_ERR_NOMEM, "pool: out of memory for a task");
    t->fn = fn;
    t->arg = arg;
    t->next = NULL;
    pthread_mutex_lock(&p->mu);
    if (p->shutdown) {
        pthread_mutex_unlock(&p->mu);
        free(t);
        TS_RAISE(TS_ERR_STATE, "pool: submit after destroy began");
    }
    if (p->tail) p->tail->next = t;
    else p->head = t;
    p->tail = t;
    p->pending++;
    pthread_cond_signal(&p->work);
    pthread_mutex_unlock(&p->mu);
    return 0;
}

void ts_pool_wait(ts_pool *p) {
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    while (p->pending > 0) pthread_cond_wait(&p->idle, &p->mu);
    pthread_mutex_unlock(&p->mu);
}

// One parallel-for call. Helpers and the caller take chunks from `next`; the context is freed by
// whoever drops the last reference, so the caller returns as soon as all indices are done, even
// if some helper tasks have not started yet (they then find no work and leave).
typedef struct {
    atomic_int_fast64_t next;
    atomic_int_fast64_t done;
    atomic_int refs;
    int64_t n, chunk;
    void (*body)(int64_t, void *);
    void *arg;
    pthread_mutex_t mu;
    pthread_cond_t finished;
} pfor_ctx;

static void pfor_release(pfor_ctx *c) {
    if (atomic_fetch_sub(&c->refs, 1) == 1) {
        pthread_cond_destroy(&c->finished);
        pthread_mutex_destroy(&c->mu);
        free(c);
    }
}

static void pfor_run(pfor_ctx *c) {
    for (;;) {
        int64_t lo = atomic_fetch_add(&c->next, c->chunk);
        if (lo >= c->n) break;
        int64_t hi = lo + c->chunk < c->n ? lo + c->chunk : c->n;
        for (int64_t i = lo; i < hi; i++) c->body(i, c->arg);
        if (atomic_fetch_add(&c->done, hi - lo) + (hi - lo) == c->n) {
            pthread_mutex_lock(&c->mu);
            pthread_cond_broadcast(&c->finished);
            pthread_mutex_unlock(&c->mu);
        }
    }
}

static void pfor_helper(void *arg) {
    pfor_ctx *c = arg;
    pfor_run(c);
    pfor_release(c);
}

static void serial_for(int64_t n, void (*body)(int64_t, void *), void *arg) {
    for (int64_t i = 0; i < n; i++) body(i, arg);
}

void ts_pool_parallel_for(ts_pool *p, int64_t n, void (*body)(int64_t i, void *arg), void *arg) {
    if (n <= 0 || !body) return;
    int helpers = p ? p->nthreads : 0;
    pfor_ctx *c = (helpers == 0 || n == 1) ? NULL : malloc(sizeof *c);
    // Without a pool or memory for the context the caller does all the work alone.
    if (!c) {
        serial_for(n, body, arg);
        return;
    }
    if (pthread_mutex_init(&c->mu, NULL) != 0) {
        free(c);
        serial_for(n, body, arg);
        return;
    }
    if (pthread_cond_init(&c->finished, NULL) != 0) {
        pthread_mutex_destroy(&c->mu);
        free(c);
        serial_for(n, body, arg);
        return;
    }
    // About 8 chunks per participant balances uneven bodies without contending on `next`.
    int64_t parts = 8 * (int64_t)(helpers + 1);
    c->chunk = n / parts > 0 ? n / parts : 1;
    c->n = n;
    c->body = body;
    c->arg = arg;
    atomic_init(&c->next, 0);
    atomic_init(&c->done, 0);
    int64_t want = (n + c->chunk - 1) / c->chunk - 1; // the caller takes one chunk itself
    if (want < helpers) helpers = (int)want;
    atomic_init(&c->refs, helpers + 1);
    ts_error_info saved = *ts_error_last();
    for (int h = 0; h < helpers; h++) {
        // A refused helper (pool shutting down, no memory) only means less parallelism, so the
        // caller's last error is restored rather than replaced by the refusal.
        if (ts_pool_submit(p, pfor_helper, c) < 0) {
            pfor_release(c);
            if (saved.code) ts_error_set(saved.code, saved.file, saved.line, "%s", saved.message);
            else ts_error_clear();
        }
    }
    pfor_run(c);
    pthread_mutex_lock(&c->mu);
    while (atomic_load(&c->done) < n) pthread_cond_wait(&c->finished, &c->mu);
    pthread_mutex_unlock(&c->mu);
    pfor_release(c);
}
