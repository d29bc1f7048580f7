// test_core_pool.c: thread pool: parallel-for coverage and sums, many submits, wait, destroy with
// queued work, submit refused during destroy, nested parallel-for, pinning.
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/ts_error.h"
#include "core/ts_pool.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void sleep_ms(int ms) {
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&t, &t) != 0) {
    }
}

typedef struct {
    atomic_int_fast64_t sum;
    unsigned char *hit;
} pf_data;

static void pf_body(int64_t i, void *arg) {
    pf_data *d = arg;
    atomic_fetch_add(&d->sum, i);
    d->hit[i]++;
}

static void run_pfor(ts_pool *p, int64_t n) {
    pf_data d;
    atomic_init(&d.sum, 0);
    d.hit = calloc((size_t)(n > 0 ? n : 1), 1);
    assert_non_null(d.hit);
    ts_pool_parallel_for(p, n, pf_body, &d);
    for (int64_t i = 0; i < n; i++)
        if (d.hit[i] != 1) fail_msg("n=%lld: index %lld ran %d times", (long long)n, (long long)i, d.hit[i]);
    assert_true(atomic_load(&d.sum) == (n > 0 ? n * (n - 1) / 2 : 0));
    free(d.hit);
}

static void test_parallel_for(void **state) {
    (void)state;
    ts_pool *p = NULL;
    ts_pool_opts o = {.threads = 4};
    assert_int_equal(ts_pool_create(&o, &p), 0);
    assert_int_equal(ts_pool_size(p), 4);
    run_pfor(p, 1000000);
    static const int64_t sizes[] = {0, 1, 2, 3, 5, 31, 32, 33, 1000, 12345};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) run_pfor(p, sizes[k]);
    for (int rep = 0; rep < 200; rep++) run_pfor(p, 100); // many calls in a row: no lost wakeups
    ts_pool_destroy(p);
    run_pfor(NULL, 1000); // no pool: the caller does it all
}

static void count_task(void *arg) { atomic_fetch_add((atomic_int *)arg, 1); }

static void slow_task(void *arg) {
    sleep_ms(2);
    atomic_fetch_add((atomic_int *)arg, 1);
}

static void test_submit_and_wait(void **state) {
    (void)state;
    ts_pool *p = NULL;
    ts_pool_opts o = {.threads = 3};
    assert_int_equal(ts_pool_create(&o, &p), 0);
    atomic_int count;
    atomic_init(&count, 0);
    for (int k = 0; k < 20000; k++) assert_int_equal(ts_pool_submit(p, count_task, &count), 0);
    ts_pool_wait(p);
    assert_int_equal(atomic_load(&count), 20000);
    // wait really waits for slow tasks that are still queued.
    atomic_init(&count, 0);
    for (int k = 0; k < 30; k++) assert_int_equal(ts_pool_submit(p, slow_task, &count), 0);
    ts_pool_wait(p);
    assert_int_equal(atomic_load(&count), 30);
    ts_pool_wait(p); // nothing pending: returns at once
    assert_int_equal(ts_pool_submit(p, NULL, NULL), TS_ERR_ARG);
    ts_pool_destroy(p);
}

static void test_destroy_drains(void **state) {
    (void)state;
    ts_pool *p = NULL;
    ts_pool_opts o = {.threads = 2};
    assert_int_equal(ts_pool_create(&o, &p), 0);
    atomic_int count;
    atomic_init(&count, 0);
    for (int k = 0; k < 100; k++) assert_int_equal(ts_pool_submit(p, slow_task, &count), 0);
    for (int k = 0; k < 1000; k++) assert_int_equal(ts_pool_submit(p, count_task, &count), 0);
    ts_pool_destroy(p); // waits for all queued work
    assert_int_equal(atomic_load(&count), 1100);
    ts_pool_destroy(NULL);
}

typedef struct {
    ts_pool *pool;
    atomic_int go;
    int rc;
    atomic_int ran;
    atomic_int probes_queued, probes_ran;
} resubmit_data;

static void blocker(void *arg) {
    resubmit_data *d = arg;
    while (!atomic_load(&d->go)) sleep_ms(1);
}

static void resubmitter(void *arg) {
    resubmit_data *d = arg;
    d->rc = ts_pool_submit(d->pool, count_task, &d->ran);
}

// Releases the blocker once ts_pool_destroy has begun: a probe submit is refused from then on
// (TS_ERR_STATE). No sleep stands in for that order: on a loaded machine the main thread may take
// any time to reach ts_pool_destroy. Probes accepted before it are queued work that destroy drains.
static void *release_when_destroying(void *arg) {
    resubmit_data *d = arg;
    for (;;) {
        int rc = ts_pool_submit(d->pool, count_task, &d->probes_ran);
        if (rc == TS_ERR_STATE) break;
        if (rc != 0) return NULL; // (the main thread's asserts then fail: the blocker is never released)
        atomic_fetch_add(&d->probes_queued, 1);
        sleep_ms(1);
    }
    atomic_store(&d->go, 1);
    return NULL;
}

static void test_submit_refused_during_destroy(void **state) {
    (void)state;
    resubmit_data d;
    atomic_init(&d.go, 0);
    atomic_init(&d.ran, 0);
    atomic_init(&d.probes_queued, 0);
    atomic_init(&d.probes_ran, 0);
    d.rc = 1;
    ts_pool_opts o = {.threads = 1};
    assert_int_equal(ts_pool_create(&o, &d.pool), 0);
    assert_int_equal(ts_pool_submit(d.pool, blocker, &d), 0);
    assert_int_equal(ts_pool_submit(d.pool, resubmitter, &d), 0);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, release_when_destroying, &d), 0);
    ts_pool_destroy(d.pool);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(d.rc, TS_ERR_STATE);
    assert_int_equal(atomic_load(&d.ran), 0);
    assert_int_equal(atomic_load(&d.probes_ran), atomic_load(&d.probes_queued)); // drained
}

typedef struct {
    ts_pool *pool;
    atomic_int_fast64_t total;
} nested_data;

static void inner_body(int64_t i, void *arg) { atomic_fetch_add(&((nested_data *)arg)->total, 1); }

static void outer_body(int64_t i, void *arg) {
    nested_data *d = arg;
    // A parallel-for from inside a pool thread must not deadlock: the caller always takes part.
    ts_pool_parallel_for(d->pool, 1000, inner_body, d);
}

static void test_nested(void **state) {
    (void)state;
    nested_data d;
    ts_pool_opts o = {.threads = 2};
    assert_int_equal(ts_pool_create(&o, &d.pool), 0);
    atomic_init(&d.total, 0);
    ts_pool_parallel_for(d.pool, 16, outer_body, &d);
    assert_true(atomic_load(&d.total) == 16000);
    ts_pool_destroy(d.pool);
}

typedef struct {
    int want;
    atomic_int wrong;
    atomic_int seen;
} pin_data;

static void pin_check(void *arg) {
    pin_data *d = arg;
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0 || CPU_COUNT(&set) != 1 || !CPU_ISSET(d->want, &set))
        atomic_fetch_add(&d->wrong, 1);
    atomic_fetch_add(&d->seen, 1);
}

static void *pin_thread(void *arg) {
    int core = *(int *)arg;
    intptr_t ok = ts_pin_current_thread(core) == 0 && sched_getcpu() == core;
    return (void *)ok;
}

static void test_pinning(void **state) {
    (void)state;
    cpu_set_t set;
    CPU_ZERO(&set);
    assert_int_equal(sched_getaffinity(0, sizeof set, &set), 0);
    int first = -1;
    for (int c = 0; c < CPU_SETSIZE && first < 0; c++)
        if (CPU_ISSET(c, &set)) first = c;
    assert_true(first >= 0);
    // Explicit cpu list: every pool thread is confined to that core.
    pin_data d = {.want = first};
    atomic_init(&d.wrong, 0);
    atomic_init(&d.seen, 0);
    ts_pool *p = NULL;
    ts_pool_opts o = {.threads = 2, .pin = 1, .cpus = &first, .ncpus = 1};
    assert_int_equal(ts_pool_create(&o, &p), 0);
    for (int k = 0; k < 50; k++) assert_int_equal(ts_pool_submit(p, pin_check, &d), 0);
    ts_pool_wait(p);
    ts_pool_destroy(p);
    assert_int_equal(atomic_load(&d.seen), 50);
    assert_int_equal(atomic_load(&d.wrong), 0);
    // Pinning to allowed cores by index works too (no explicit list).
    ts_pool_opts o2 = {.threads = 2, .pin = 1};
    assert_int_equal(ts_pool_create(&o2, &p), 0);
    ts_pool_destroy(p);
    // Bad arguments.
    int bad = -1;
    ts_pool_opts o3 = {.threads = 1, .pin = 1, .cpus = &bad, .ncpus = 1};
    assert_int_equal(ts_pool_create(&o3, &p), TS_ERR_ARG);
    ts_pool_opts o4 = {.threads = -2};
    assert_int_equal(ts_pool_create(&o4, &p), TS_ERR_ARG);
    assert_int_equal(ts_pin_current_thread(-1), TS_ERR_ARG);
    assert_int_equal(ts_pin_current_thread(CPU_SETSIZE), TS_ERR_ARG);
    // ts_pin_current_thread in a throwaway thread (the test's main thread stays unpinned).
    pthread_t t;
    void *ok = NULL;
    assert_int_equal(pthread_create(&t, NULL, pin_thread, &first), 0);
    assert_int_equal(pthread_join(t, &ok), 0);
    assert_true((intptr_t)ok == 1);
    // Default size: the number of online cores.
    assert_int_equal(ts_pool_create(NULL, &p), 0);
    assert_true(ts_pool_size(p) >= 1);
    ts_pool_destroy(p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parallel_for),   cmocka_unit_test(test_submit_and_wait),
        cmocka_unit_test(test_destroy_drains), cmocka_unit_test(test_submit_refused_during_destroy),
        cmocka_unit_test(test_nested),         cmocka_unit_test(test_pinning),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
