// test_dev_gemm.c: GEMM and DTRSM on two simulated devices (copies in, kernel, copies out) vs the host.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "core/ts_error.h"
#include "kern_test_util.h"
#include "runtime/ts_engines.h"

static int setup(void **state) {
    ts_devset_opts o;
    if (ts_devset_opts_init(&o) < 0) return -1;
    o.backend = TS_BACKEND_SIM;
    o.sim_devices = 2;
    o.sim_mem_bytes = (size_t)64 << 20;
    o.sim_gflops = 0; // unpaced
    memset(&o.faults, 0, sizeof o.faults);
    o.faults.device = -1;
    o.faults.flip_bit = -1;
    ts_devset *s = NULL;
    if (ts_devset_open(&o, &s) < 0) {
        fprintf(stderr, "ts_devset_open: %s\n", ts_error_string());
        return -1;
    }
    *state = s;
    return 0;
}

static int teardown(void **state) {
    ts_devset_close(*state);
    return 0;
}

// Host block (rows x cols, ld) -> fresh device buffer with leading dimension dld.
static void *to_device(ts_device *d, ts_stream *st, char prec, const void *h, int64_t ld, int64_t rows,
                       int64_t cols, int64_t dld) {
    size_t es = ts_prec_size(prec);
    void *p = NULL;
    assert_int_equal(ts_dmalloc(d, (size_t)(dld * (cols > 0 ? cols : 1)) * es, &p), 0);
    assert_int_equal(ts_copy2d_async(st, TS_COPY_H2D, p, (size_t)dld * es, h, (size_t)ld * es,
                                     (size_t)rows * es, (size_t)cols), 0);
    return p;
}

// C = alpha op(A) op(B) + beta C on device `dev` with `engine`, compared with ts_gemm_ref on the host.
static void dev_case(ts_devset *s, int dev, ts_engine engine, char prec, char ta, char tb, int64_t m,
                     int64_t n, int64_t k, uint64_t key) {
    ts_device *d = ts_devset_device(s, dev);
    ts_stream *st = NULL;
    assert_int_equal(ts_stream_create(d, &st), 0);
    int64_t ar = ta == 'N' ? m : k, ac = ta == 'N' ? k : m, br = tb == 'N' ? k : n, bc = tb == 'N' ? n : k;
    int64_t lda = ar + 1, ldb = br + 3, ldc = m + 2;
    void *A = kt_alloc_fill(prec, ar, ac, lda, key + 1), *B = kt_alloc_fill(prec, br, bc, ldb, key + 2);
    void *C = kt_alloc_fill(prec, m, n, ldc, key + 3);
    void *Cref = kt_dup(prec, C, ldc * n), *Cout = kt_dup(prec, C, ldc * n);
    unsigned char alpha[16], beta[16];
    kt_scalars(prec, alpha, beta);
    ts_device_counters c0, c1;
    ts_device_counters_get(d, &c0);
    // Device copies with other leading dimensions than the host's.
    void *dA = to_device(d, st, prec, A, lda, ar, ac, ar + 4);
    void *dB = to_device(d, st, prec, B, ldb, br, bc, br);
    void *dC = to_device(d, st, prec, C, ldc, m, n, m + 1);
    assert_int_equal(ts_dev_gemm(st, engine, prec, ta, tb, m, n, k, alpha, dA, ar + 4, dB, br, beta, dC, m + 1), 0);
    memset(alpha, 0, sizeof alpha); // scalars were read at enqueue
    size_t es = ts_prec_size(prec);
    assert_int_equal(ts_copy2d_async(st, TS_COPY_D2H, Cout, (size_t)ldc * es, dC, (size_t)(m + 1) * es,
                                     (size_t)m * es, (size_t)n), 0);
    assert_int_equal(ts_stream_sync(st), 0);
    ts_device_counters_get(d, &c1);
    assert_int_equal(c1.kernels - c0.kernels, 1);
    double flops = 2.0 * m * n * k * (kt_cplx(prec) ? 4 : 1);
    assert_true(c1.kernel_flops - c0.kernel_flops == flops);

    kt_scalars(prec, alpha, beta);
    ts_gemm_ref(prec, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, Cref, ldc);
    double err = 0;
    assert_true(ts_gemm_verify(prec, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, Cout, ldc, 2, 3,
                               TS_GEMM_VERIFY_BOUND, &err));
    double tol = 4 * (k + 2) * kt_eps(prec) * (0.25 * k + 1) * 2;
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) {
            kt_lc a = kt_get(prec, Cout, i + j * ldc), b = kt_get(prec, Cref, i + j * ldc);
            kt_lc dlt = {a.re - b.re, a.im - b.im};
            if (engine == TS_ENGINE_REF) assert_true(kt_abs(dlt) == 0); // same code, same order
            else assert_true(kt_abs(dlt) <= tol);
        }
    ts_dfree(d, dA), ts_dfree(d, dB), ts_dfree(d, dC);
    assert_int_equal(ts_stream_destroy(st), 0);
    free(A), free(B), free(C), free(Cref), free(Cout);
}

static void test_gemm_two_devices(void **state) {
    ts_devset *s = *state;
    assert_int_equal(ts_devset_count(s), 2);
    for (int dev = 0; dev < 2; dev++)
        for (int ip = 0; ip < 4; ip++) {
            dev_case(s, dev, TS_ENGINE_AUTO, kt_precs[ip], kt_ops[ip % 3], kt_ops[(ip + dev) % 3], 37, 29, 41,
                     10 * dev + ip);
            dev_case(s, dev, TS_ENGINE_REF, kt_precs[ip], 'N', 'T', 21, 33, 17, 100 + 10 * dev + ip);
            dev_case(s, dev, TS_ENGINE_CPU, kt_precs[ip], 'C', 'N', 25, 31, 19, 200 + 10 * dev + ip);
        }
}

// auto on CUDA devices by shape (the rule of bench/notes/gemm-kernels.md, "Engine choice"): no GPU needed.
static void test_auto_cuda_rule(void **state) {
    (void)state;
    const ts_engine T = TS_ENGINE_TESSERA, C = TS_ENGINE_CUBLAS;
    // SGEMM NN and TT (and 'C' as 'T') with k >= 4096 and two 256 x 128 tiles per SM on cc 9.0
    assert_int_equal(ts_gemm_auto_cuda(9, 0, 132, 's', 'N', 'N', 8192, 8192, 8192), T);
    assert_int_equal(ts_gemm_auto_cuda(9, 0, 132, 's', 'T', 'T', 8192, 8192, 8192), T);
    assert_int_equal(ts_gemm_auto_cuda(9, 0, 132, 's', 'c', 'C', 8192, 8192, 4096), T);
    assert_int_equal(ts_gemm_auto_cuda(9, 0, 132, 's', 'N', 'N', 12288, 2048, 4096), T);
    // k below 4096, NT and TN, too few tiles (4096 x 2048: 16 x 16 = 256 < 264), other precisions
    assert_int_equal(ts_gemm_auto_cuda(9, 0, 132, 's', 'N', 'N', 16384, 16384, 4095), C);
    assert_int_equal(ts_gemm_auto_cuda(9, 0, 132, 's', 'N', 'T', 8192, 8192, 8192), C);
    assert_int_equal(ts_gemm_auto_cuda(9, 0, 132, 's', 'T', 'n', 8192, 8192, 8192), C);
    assert_int_equal(ts_gemm_auto_cuda(9, 0, 132, 's', 'N', 'N', 4096, 2048, 8192), C);
    assert_int_equal(ts_gemm_auto_cuda(9, 0, 132, 's', 'N', 'N', 4096, 2176, 8192), T); // 16 x 17 = 272
    assert_int_equal(ts_gemm_auto_cuda(9, 0, 132, 'd', 'N', 'N', 16384, 16384, 16384), C);
    assert_int_equal(ts_gemm_auto_cuda(9, 0, 132, 'c', 'N', 'N', 8192, 8192, 8192), C);
    assert_int_equal(ts_gemm_auto_cuda(9, 0, 132, 'z', 'T', 'T', 8192, 8192, 8192), C);
    // devices it was not measured on
    assert_int_equal(ts_gemm_auto_cuda(8, 0, 108, 's', 'N', 'N', 8192, 8192, 8192), C);
    assert_int_equal(ts_gemm_auto_cuda(10, 0, 148, 's', 'N', 'N', 8192, 8192, 8192), C);
    assert_int_equal(ts_gemm_auto_cuda(9, 0, 0, 's', 'N', 'N', 8192, 8192, 8192), C);
}

// Both devices at once, each on its own stream, then a larger GEMM that AUTO gives to the CPU BLAS.
static void test_engine_choice(void **state) {
    ts_devset *s = *state;
    ts_stream *st = NULL;
    assert_int_equal(ts_stream_create(ts_devset_device(s, 0), &st), 0);
    assert_int_equal(ts_dev_gemm_default_engine(st), TS_ENGINE_REF);
    assert_int_equal(ts_dev_gemm_engine_for(st, TS_ENGINE_AUTO, 'd', 'N', 'N', 100, 100, 100), TS_ENGINE_REF);
    assert_int_equal(ts_dev_gemm_engine_for(st, TS_ENGINE_AUTO, 'd', 'N', 'N', 300, 300, 300), TS_ENGINE_CPU);
    assert_int_equal(ts_dev_gemm_engine_for(st, TS_ENGINE_AUTO, 'z', 'N', 'N', 200, 200, 200), TS_ENGINE_CPU);
    assert_int_equal(ts_dev_gemm_engine_for(st, TS_ENGINE_REF, 'd', 'N', 'N', 300, 300, 300), TS_ENGINE_REF);
    setenv("TESSERA_SIM_GEMM_REF_FLOPS", "1e12", 1);
    assert_int_equal(ts_dev_gemm_engine_for(st, TS_ENGINE_AUTO, 'd', 'N', 'N', 300, 300, 300), TS_ENGINE_REF);
    setenv("TESSERA_SIM_GEMM_REF_FLOPS", "lots", 1); // malformed: ts_dev_gemm says so
    double one = 1, zero = 0, x = 0;
    assert_int_equal(ts_dev_gemm(st, TS_ENGINE_AUTO, 'd', 'N', 'N', 1, 1, 1, &one, &x, 1, &x, 1, &zero, &x, 1),
                     TS_ERR_PARSE);
    assert_non_null(strstr(ts_error_last()->message, "TESSERA_SIM_GEMM_REF_FLOPS"));
    unsetenv("TESSERA_SIM_GEMM_REF_FLOPS");
    assert_int_equal(ts_stream_destroy(st), 0);
    dev_case(s, 1, TS_ENGINE_AUTO, 'd', 'T', 'N', 300, 290, 280, 77); // runs the CPU BLAS
}

static void test_unsupported_and_bad_args(void **state) {
    ts_devset *s = *state;
    ts_device *d = ts_devset_device(s, 0);
    ts_stream *st = NULL;
    assert_int_equal(ts_stream_create(d, &st), 0);
    double one = 1, zero = 0;
    void *p = NULL;
    assert_int_equal(ts_dmalloc(d, 64 * 8, &p), 0);
    assert_int_equal(ts_dev_gemm(st, TS_ENGINE_TESSERA, 'd', 'N', 'N', 4, 4, 4, &one, p, 4, p, 4, &zero, p, 4),
                     TS_ERR_UNSUPPORTED);
    assert_non_null(strstr(ts_error_last()->message, "not built yet"));
    assert_int_equal(ts_dev_gemm(st, TS_ENGINE_CUBLAS, 'd', 'N', 'N', 4, 4, 4, &one, p, 4, p, 4, &zero, p, 4),
                     TS_ERR_UNSUPPORTED);
    assert_int_equal(ts_dev_gemm(st, TS_ENGINE_TILES, 'd', 'N', 'N', 4, 4, 4, &one, p, 4, p, 4, &zero, p, 4),
                     TS_ERR_UNSUPPORTED);
    assert_int_equal(ts_dev_gemm(st, TS_ENGINE_AUTO, 'd', 'N', 'N', 4, 4, 4, &one, p, 3, p, 4, &zero, p, 4),
                     TS_ERR_ARG);
    assert_non_null(strstr(ts_error_last()->message, "argument 8"));
    assert_int_equal(ts_dev_gemm(st, TS_ENGINE_AUTO, 'w', 'N', 'N', 4, 4, 4, &one, p, 4, p, 4, &zero, p, 4),
                     TS_ERR_ARG);
    assert_int_equal(ts_dev_gemm(NULL, TS_ENGINE_AUTO, 'd', 'N', 'N', 4, 4, 4, &one, p, 4, p, 4, &zero, p, 4),
                     TS_ERR_ARG);
    assert_int_equal(ts_dev_dtrsm(st, 'L', 'L', 'N', 'N', 4, 4, 1.0, p, 3, p, 4), TS_ERR_ARG);
    assert_int_equal(ts_stream_sync(st), 0); // nothing was enqueued, no sticky error
    ts_dfree(d, p);
    assert_int_equal(ts_stream_destroy(st), 0);
}

// B = alpha L^-1 B on device 1 vs ts_dtrsm_cpu on the host.
static void test_dtrsm_sim(void **state) {
    ts_devset *s = *state;
    ts_device *d = ts_devset_device(s, 1);
    ts_stream *st = NULL;
    assert_int_equal(ts_stream_create(d, &st), 0);
    int64_t m = 40, n = 23, lda = 41, ldb = 43;
    double *A = kt_alloc_fill('d', m, m, lda, 5), *B = kt_alloc_fill('d', m, n, ldb, 6);
    for (int64_t i = 0; i < m; i++) A[i + i * lda] = 4 + A[i + i * lda]; // well conditioned
    double *Bh = kt_dup('d', B, ldb * n), *Bd = kt_dup('d', B, ldb * n);
    double *dA = to_device(d, st, 'd', A, lda, m, m, m), *dB = to_device(d, st, 'd', B, ldb, m, n, m);
    assert_int_equal(ts_dev_dtrsm(st, 'L', 'L', 'T', 'N', m, n, 0.5, dA, m, dB, m), 0);
    assert_int_equal(ts_copy2d_async(st, TS_COPY_D2H, Bd, ldb * 8, dB, m * 8, m * 8, n), 0);
    assert_int_equal(ts_stream_sync(st), 0);
    assert_int_equal(ts_dtrsm_cpu('L', 'L', 'T', 'N', m, n, 0.5, A, lda, Bh, ldb), 0);
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) assert_true(fabs(Bd[i + j * ldb] - Bh[i + j * ldb]) <= 1e-14);
    ts_dfree(d, dA), ts_dfree(d, dB);
    assert_int_equal(ts_stream_destroy(st), 0);
    free(A), free(B), free(Bh), free(Bd);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gemm_two_devices),
        cmocka_unit_test(test_engine_choice),
        cmocka_unit_test(test_auto_cuda_rule),
        cmocka_unit_test(test_unsupported_and_bad_args),
        cmocka_unit_test(test_dtrsm_sim),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
