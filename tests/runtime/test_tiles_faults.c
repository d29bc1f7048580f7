// test_tiles_faults.c: tile runtime under injected faults (failed copy or kernel, lost devices: re-runs or a clear error; flipped bit) and concurrent callers.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <pthread.h>

#include "runtime/ts_tiles_l3.h"
#include "tiles_test.h"

static ts_sim_faults no_faults(void) {
    ts_sim_faults f;
    memset(&f, 0, sizeof f);
    f.device = -1;
    f.flip_bit = -1;
    return f;
}

// A failed copy on device 1 (a sticky stream error): device 1 is dropped for the call, its
// unfinished tiles are re-run on device 0, C is right (beta != 0: torn tiles were restored). The
// fault fires once, so the next call uses both devices again.
static void test_failed_copy(void **state) {
    (void)state;
    ts_sim_faults f = no_faults();
    f.device = 1;
    f.fail_copy = 2; // its first task's second load: it fires whatever the schedule
    // ... once device 1 has a task at all: unpaced, device 0 did the 35 tiles in a few ms, before a
    // loaded machine scheduled device 1's worker. Paced at 0.1 GFLOP/s (1.6 MFLOP tiles, 16 ms),
    // device 0 alone needs over 0.5 s.
    ts_devset *s = tt_open_faults_paced(2, &f, 0.1);
    assert_non_null(s);
    ts_tiles_opts o = tt_opts(64, 0);
    o.peer = 0; // no cascade through peer copies here: test_failed_copy_peer_cascade has them
    ts_tiles *rt = NULL;
    assert_int_equal(ts_tiles_create(s, &o, &rt), 0);
    tt_prob p;
    assert_int_equal(tt_make(&p, 'd', 'N', 'N', 400, 300, 200, 0, 81), 0);
    ts_tiles_stats st;
    assert_int_equal(tt_run(rt, &p, &st), 0);
    assert_true(tt_check(&p) <= 1.0);
    assert_int_equal(st.devices_failed, 1);
    assert_true(st.reruns >= 1);
    assert_int_equal(st.tiles_dev[0] + st.tiles_dev[1], st.tiles);
    assert_true(st.tiles_dev[1] < st.tiles / 2);
    memcpy(p.C, p.C0, (size_t)(p.ldc * p.n) * p.es);
    assert_int_equal(tt_run(rt, &p, &st), 0);
    assert_true(tt_check(&p) <= 1.0);
    assert_int_equal(st.devices_failed, 0);
    assert_int_equal(st.reruns, 0);
    tt_free(&p);
    ts_tiles_destroy(rt);
    ts_devset_close(s);
}

// A failed copy on one device with peer fetches on, many times: the copies of other devices that
// waited on its slots fail with it, and those devices are judged (streams drained, lock released)
// while it is judged too. They recover, so every call must finish right. Two devices: the device
// being judged used to count as dead to the other's judgement ("no worker left", ~3% of calls).
// Three: two healthy devices used to take each other down in turn, copying from a peer whose
// streams had failed but which was not marked dead yet, until they ran out of revivals (~3%).
static void cascade_calls(int ndev, int faulty, int fail_copy, int calls) {
    tt_prob p;
    assert_int_equal(tt_make(&p, 'd', 'N', 'N', 256, 256, 256, 0, 83), 0);
    int fired = 0;
    for (int it = 0; it < calls; it++) {
        ts_sim_faults f = no_faults();
        f.device = faulty;
        f.fail_copy = fail_copy;
        ts_devset *s = tt_open_faults(ndev, &f);
        assert_non_null(s);
        ts_tiles_opts o = tt_opts(64, 0);
        o.peer = 1;
        ts_tiles *rt = NULL;
        assert_int_equal(ts_tiles_create(s, &o, &rt), 0);
        memcpy(p.C, p.C0, (size_t)(p.ldc * p.n) * p.es);
        ts_tiles_stats st;
        int rc = tt_run(rt, &p, &st);
        if (rc != 0) fail_msg("%d devices, call %d: rc %d (%s)", ndev, it, rc, ts_error_last()->message);
        assert_true(tt_check(&p) <= 1.0);
        assert_true(st.devices_failed <= 1); // the others recovered when they failed with it
        fired += st.devices_failed;
        int64_t sum = 0;
        for (int d = 0; d < ndev; d++) sum += st.tiles_dev[d];
        assert_int_equal(sum, st.tiles);
        ts_tiles_destroy(rt);
        ts_devset_close(s);
    }
    print_message("%d devices: copy fault fired in %d of %d calls\n", ndev, fired, calls);
    assert_true(fired >= calls / 2); // the faulty device rarely ends a call with fewer copies
    tt_free(&p);
}

// Under AddressSanitizer (CI's second pass, ~3x slower) half as many calls.
#if defined(__SANITIZE_ADDRESS__)
#define CASCADE_CALLS 150
#else
#define CASCADE_CALLS 300
#endif

static void test_failed_copy_peer_cascade(void **state) {
    (void)state;
    cascade_calls(2, 1, 4, CASCADE_CALLS);
    cascade_calls(3, 2, 5, CASCADE_CALLS);
}

// A failed kernel on the only device, no CPU worker: no worker is left, a clear error naming the cause.
static void test_failed_kernel(void **state) {
    (void)state;
    ts_sim_faults f = no_faults();
    f.device = 0;
    f.fail_kernel = 3;
    ts_devset *s = tt_open_faults(1, &f);
    ts_tiles_opts o = tt_opts(64, 0);
    ts_tiles *rt = NULL;
    assert_int_equal(ts_tiles_create(s, &o, &rt), 0);
    tt_prob p;
    assert_int_equal(tt_make(&p, 'c', 'T', 'N', 300, 300, 300, 0, 82), 0);
    assert_int_equal(tt_run(rt, &p, NULL), TS_ERR_DEVICE);
    assert_non_null(strstr(ts_error_last()->message, "no worker left"));
    assert_non_null(strstr(ts_error_last()->message, "injected failure of kernel 3"));
    tt_free(&p);
    ts_tiles_destroy(rt);
    ts_devset_close(s);
}

// One device of 3 lost in the middle of a call (beta != 0, and beta == 0): the other two re-run
// its tiles and C is right; peer fetch off (a peer copy queued from the lost device would take the
// fetching device down with it; see docs/runtime.md). With peer fetch on and the CPU worker the
// result is right whichever devices go down. A lost device keeps failing: the next call re-runs too.
static void test_lost_device(void **state) {
    (void)state;
    for (int variant = 0; variant < 3; variant++) {
        ts_sim_faults f = no_faults();
        f.device = 1;
        f.lose_after = 10;
        ts_devset *s = tt_open_faults_paced(3, &f, 0.5); // ~0.2 s per call: device 1 gets tasks
        ts_tiles_opts o = tt_opts(64, variant == 2 ? TS_TILES_CPU_AUTO : 0);
        o.peer = variant == 2;
        ts_tiles *rt = NULL;
        assert_int_equal(ts_tiles_create(s, &o, &rt), 0);
        tt_prob p;
        assert_int_equal(tt_make(&p, 'd', 'N', 'T', 512, 512, 512, 0, 83), 0);
        if (variant == 1) { // beta 0: C is not read; poison it so that a missed tile shows
            p.beta[0] = 0;
            memset(p.C, 0xff, (size_t)(p.ldc * p.n) * p.es);
        }
        // (the lost device is never waited on: a call that hung on it would run into the test's
        // CTest TIMEOUT; no wall-clock bound here, which a loaded machine could break)
        ts_tiles_stats st;
        for (int call = 0; call < 2; call++) {
            if (call == 1) {
                if (variant == 1) memset(p.C, 0xff, (size_t)(p.ldc * p.n) * p.es);
                else memcpy(p.C, p.C0, (size_t)(p.ldc * p.n) * p.es);
            }
            assert_int_equal(tt_run(rt, &p, &st), 0);
            assert_true(tt_check(&p) <= 1.0);
            if (variant < 2) assert_true(st.devices_failed >= 1); // (with peers and the CPU, any number)
            assert_int_equal(st.tiles_dev[0] + st.tiles_dev[1] + st.tiles_dev[2] + st.tiles_cpu, st.tiles);
        }
        tt_free(&p);
        ts_tiles_destroy(rt);
        ts_devset_close(s);
    }
}

// The lost device had tiles in flight: the stats show them re-run (first call, fault after 10 ops).
// Paced at 0.5 GFLOP/s (8.4 MFLOP tiles, 17 ms; the other two alone need ~0.25 s for the 30): device
// 0 is lost only once its worker has queued 10 operations, which unpaced devices 1 and 2 could make
// impossible by finishing the call before a loaded machine scheduled it.
static void test_lost_device_reruns(void **state) {
    (void)state;
    ts_sim_faults f = no_faults();
    f.device = 0;
    f.lose_after = 10;
    ts_devset *s = tt_open_faults_paced(3, &f, 0.5);
    ts_tiles_opts o = tt_opts(64, 0);
    o.peer = 0;
    ts_tiles *rt = NULL;
    assert_int_equal(ts_tiles_create(s, &o, &rt), 0);
    tt_prob p;
    assert_int_equal(tt_make(&p, 'z', 'N', 'N', 384, 320, 256, 0, 85), 0);
    ts_tiles_stats st;
    assert_int_equal(tt_run(rt, &p, &st), 0);
    assert_true(tt_check(&p) <= 1.0);
    assert_int_equal(st.devices_failed, 1);
    assert_true(st.reruns >= 1);
    assert_true(st.tiles_dev[0] < st.tiles_dev[1] + st.tiles_dev[2]);
    tt_free(&p);
    ts_tiles_destroy(rt);
    ts_devset_close(s);
}

// Every device lost: without the CPU worker a clear error; with it, the CPU finishes the call right.
static void test_all_devices_lost(void **state) {
    (void)state;
    for (int cpu = 0; cpu < 2; cpu++) {
        ts_sim_faults f = no_faults();
        f.device = -1;
        f.lose_after = 30;
        ts_devset *s = tt_open_faults(2, &f);
        ts_tiles_opts o = tt_opts(64, cpu ? TS_TILES_CPU_AUTO : 0);
        ts_tiles *rt = NULL;
        assert_int_equal(ts_tiles_create(s, &o, &rt), 0);
        tt_prob p;
        assert_int_equal(tt_make(&p, 'd', 'N', 'N', 512, 512, 512, 0, 86), 0);
        ts_tiles_stats st;
        int rc = tt_run(rt, &p, &st);
        if (!cpu) {
            assert_true(rc == TS_ERR_DEVICE_LOST || rc == TS_ERR_DEVICE);
            assert_non_null(strstr(ts_error_last()->message, "no worker left"));
            assert_non_null(strstr(ts_error_last()->message, "lost"));
        } else {
            assert_int_equal(rc, 0);
            assert_true(tt_check(&p) <= 1.0);
            assert_int_equal(st.devices_failed, 2);
            assert_true(st.tiles_cpu > st.tiles / 2);
        }
        tt_free(&p);
        ts_tiles_destroy(rt);
        ts_devset_close(s);
    }
}

// A flipped bit in a copied tile (an exponent bit of the first element of the 3rd copy) makes
// the result wrong: the check catches it, so the other tests' checks can fail.
static void test_flipped_bit_is_caught(void **state) {
    (void)state;
    ts_sim_faults f = no_faults();
    f.device = 0;
    f.flip_copy = 3;
    f.flip_bit = 62;
    ts_devset *s = tt_open_faults(1, &f);
    ts_tiles_opts o = tt_opts(64, 0);
    o.save_c = 0; // the 3rd copy is then a load (with save_c it may be a C tile's saved copy)
    ts_tiles *rt = NULL;
    assert_int_equal(ts_tiles_create(s, &o, &rt), 0);
    tt_prob p;
    assert_int_equal(tt_make(&p, 'd', 'N', 'N', 200, 200, 200, 0, 84), 0);
    assert_int_equal(tt_run(rt, &p, NULL), 0); // the device does not know
    assert_true(tt_check(&p) > 1.0);
    // The same call again (the flip fires once): right.
    memcpy(p.C, p.C0, (size_t)(p.ldc * p.n) * p.es);
    assert_int_equal(tt_run(rt, &p, NULL), 0);
    assert_true(tt_check(&p) <= 1.0);
    tt_free(&p);
    ts_tiles_destroy(rt);
    ts_devset_close(s);
}

typedef struct {
    ts_tiles *rt;
    tt_prob p;
    int rc;
    double err;
} caller;

static void *call_thread(void *arg) {
    caller *c = arg;
    for (int r = 0; r < 3 && c->rc == 0; r++) {
        memcpy(c->p.C, c->p.C0, (size_t)(c->p.ldc * c->p.n) * c->p.es);
        c->rc = tt_run(c->rt, &c->p, NULL);
    }
    c->err = tt_check(&c->p);
    return NULL;
}

// Two threads calling ts_tiles_gemm on one runtime: the calls are serialised, both are right.
static void test_two_callers(void **state) {
    (void)state;
    const double sp[2] = {1.0, 0.5};
    ts_devset *s = tt_open(2, sp, 0, 0, 0);
    ts_tiles_opts o = tt_opts(64, TS_TILES_CPU_AUTO);
    ts_tiles *rt = NULL;
    assert_int_equal(ts_tiles_create(s, &o, &rt), 0);
    caller c[2];
    memset(c, 0, sizeof c);
    c[0].rt = c[1].rt = rt;
    assert_int_equal(tt_make(&c[0].p, 'd', 'N', 'T', 300, 260, 200, 1, 91), 0);
    assert_int_equal(tt_make(&c[1].p, 'z', 'C', 'N', 200, 230, 170, 0, 92), 0);
    pthread_t th[2];
    for (int i = 0; i < 2; i++) assert_int_equal(pthread_create(&th[i], NULL, call_thread, &c[i]), 0);
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(c[i].rc, 0);
        assert_true(c[i].err <= 1.0);
        tt_free(&c[i].p);
    }
    ts_tiles_destroy(rt);
    ts_devset_close(s);
}

// Two simulated devices with faults f, paced at 0.1 GFLOP/s (~0.2 s per call of the tests below:
// device 1 gets tasks), and a runtime on them with tiles of T and no peer copies.
static ts_tiles *paced_runtime(const ts_sim_faults *f, int64_t T, ts_devset **s) {
    *s = tt_open_faults_paced(2, f, 0.1);
    assert_non_null(*s);
    ts_tiles_opts o = tt_opts(T, 0);
    o.peer = 0;
    ts_tiles *rt = NULL;
    assert_int_equal(ts_tiles_create(*s, &o, &rt), 0);
    return rt;
}

// max |x - ref| and max |ref| over len elements.
static void max_diff(const double *ref, const double *x, int64_t len, double *dmax, double *rmax) {
    *dmax = 0, *rmax = 0;
    for (int64_t i = 0; i < len; i++) {
        if (fabs(x[i] - ref[i]) > *dmax) *dmax = fabs(x[i] - ref[i]);
        if (fabs(ref[i]) > *rmax) *rmax = fabs(ref[i]);
    }
}

// In-place TRMM (beta 0 inside: the tiles are operands, not loaded as C) and TRSM with a device
// lost mid-call: the torn tiles are restored from their saved copies and re-run; B equals the
// result of the same call on healthy devices (the same tile products in the same order: to
// rounding of a different association at most, bound 1e-12 relative).
static void test_inplace_l3_lost_device(void **state) {
    (void)state;
    const int64_t m = 320, n = 256, T = 64;
    double *A = malloc(sizeof(double) * (size_t)(m * m)), *B0 = malloc(sizeof(double) * (size_t)(m * n));
    double *B1 = malloc(sizeof(double) * (size_t)(m * n)), *B2 = malloc(sizeof(double) * (size_t)(m * n));
    assert_non_null(A), assert_non_null(B0), assert_non_null(B1), assert_non_null(B2);
    tt_fill('d', 91, A, sizeof(double) * (size_t)(m * m));
    tt_fill('d', 92, B0, sizeof(double) * (size_t)(m * n));
    for (int64_t i = 0; i < m; i++) A[i + i * m] += 4.0; // well conditioned for the solve
    const double alpha = 0.75;
    for (int solve = 0; solve < 2; solve++) {
        for (int faulty = 0; faulty < 2; faulty++) {
            ts_sim_faults f = no_faults();
            if (faulty) f.device = 1, f.lose_after = 25;
            ts_devset *s;
            ts_tiles *rt = paced_runtime(&f, T, &s);
            double *B = faulty ? B2 : B1;
            memcpy(B, B0, sizeof(double) * (size_t)(m * n));
            ts_tiles_stats st;
            int rc = solve ? ts_tiles_trsm(rt, 'd', 'L', 'L', 'N', 'N', m, n, &alpha, A, m, B, m, &st)
                           : ts_tiles_trmm(rt, 'd', 'L', 'L', 'N', 'N', m, n, &alpha, A, m, B, m, &st);
            assert_int_equal(rc, 0);
            if (faulty) {
                assert_int_equal(st.devices_failed, 1);
                assert_true(st.reruns >= 1);
            }
            ts_tiles_destroy(rt);
            ts_devset_close(s);
        }
        double dmax, bmax;
        max_diff(B1, B2, m * n, &dmax, &bmax);
        printf("# %s with a lost device: max |difference| %.3g of max |B| %.3g\n", solve ? "trsm" : "trmm", dmax, bmax);
        assert_true(dmax <= 1e-12 * bmax);
    }
    free(A), free(B0), free(B1), free(B2);
}

// A device lost in the middle of a write-back (sim fault `tear`: the Nth device-to-host copy writes
// half its columns and fails): the host tile is torn, and must be restored from its saved copy
// before the re-run, since the re-run reads it (TRMM and TRSM in place; GEMM with beta != 0). For
// each N in turn the result must equal the healthy run (1e-12 relative, as above); some N must hit
// a write-back of B or C (a failed device and a re-run), or the test would prove nothing.
static void test_torn_writeback(void **state) {
    (void)state;
    const int64_t m = 320, n = 256, T = 64;
    double *A = malloc(sizeof(double) * (size_t)(m * m)), *B0 = malloc(sizeof(double) * (size_t)(m * n));
    double *B1 = malloc(sizeof(double) * (size_t)(m * n)), *B2 = malloc(sizeof(double) * (size_t)(m * n));
    double *G = malloc(sizeof(double) * (size_t)(n * n));
    assert_non_null(A), assert_non_null(B0), assert_non_null(B1), assert_non_null(B2), assert_non_null(G);
    tt_fill('d', 93, A, sizeof(double) * (size_t)(m * m));
    tt_fill('d', 94, B0, sizeof(double) * (size_t)(m * n));
    tt_fill('d', 95, G, sizeof(double) * (size_t)(n * n));
    for (int64_t i = 0; i < m; i++) A[i + i * m] += 4.0;
    const double alpha = 0.75, beta = 0.5;
    for (int op = 0; op < 3; op++) { // TRMM, TRSM, GEMM (C = alpha B G + beta C, C is B)
        int torn_runs = 0;
        for (long k = 0; k <= 10; k++) { // k = 0: the healthy run
            ts_sim_faults f = no_faults();
            if (k) f.device = 1, f.tear_d2h = k;
            ts_devset *s;
            ts_tiles *rt = paced_runtime(&f, T, &s);
            double *B = k ? B2 : B1;
            memcpy(B, B0, sizeof(double) * (size_t)(m * n));
            ts_tiles_stats st;
            int rc;
            if (op == 0) rc = ts_tiles_trmm(rt, 'd', 'L', 'L', 'N', 'N', m, n, &alpha, A, m, B, m, &st);
            else if (op == 1) rc = ts_tiles_trsm(rt, 'd', 'L', 'L', 'N', 'N', m, n, &alpha, A, m, B, m, &st);
            else {
                // C (m x n, in B) = alpha A(:, 0:n) G + beta C: A's first n columns as the m x n operand
                rc = ts_tiles_gemm(rt, 'd', 'N', 'N', m, n, n, &alpha, A, m, G, n, &beta, B, m, &st);
            }
            assert_int_equal(rc, 0);
            if (k && st.devices_failed) {
                assert_true(st.reruns >= 1);
                torn_runs++;
            }
            ts_tiles_destroy(rt);
            ts_devset_close(s);
            if (!k) continue;
            double dmax, bmax;
            max_diff(B1, B2, m * n, &dmax, &bmax);
            if (dmax > 1e-12 * bmax)
                fail_msg("%s with device-to-host copy %ld torn: max |difference| %.3g of max |B| %.3g",
                         op == 0 ? "trmm" : op == 1 ? "trsm" : "gemm", k, dmax, bmax);
        }
        printf("# %s: %d of 10 torn copies failed the device mid-call, every result right\n",
               op == 0 ? "trmm" : op == 1 ? "trsm" : "gemm", torn_runs);
        assert_true(torn_runs >= 3);
    }
    free(A), free(B0), free(B1), free(B2), free(G);
}

int main(void) {
    ts_cpu_blas_set_threads(1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_failed_copy), cmocka_unit_test(test_failed_copy_peer_cascade),
        cmocka_unit_test(test_torn_writeback),
        cmocka_unit_test(test_failed_kernel),
        cmocka_unit_test(test_lost_device),
        cmocka_unit_test(test_lost_device_reruns),
        cmocka_unit_test(test_inplace_l3_lost_device),
        cmocka_unit_test(test_all_devices_lost),
        cmocka_unit_test(test_flipped_bit_is_caught),
        cmocka_unit_test(test_two_callers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
