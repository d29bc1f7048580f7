// test_dev_gemm_cuda.c: ts_dev_gemm/ts_dev_dtrsm dispatch on a CUDA device, results verified on the host (skips without a GPU).
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "core/ts_error.h"
#include "kern_test_util.h"

static ts_devset *g_set;

static int setup(void **state) {
    if (ts_cuda_device_count() == 0) {
        printf("# no CUDA device (or a build without CUDA): these tests skip\n");
        return 0;
    }
    ts_devset_opts o;
    if (ts_devset_opts_init(&o) < 0) return -1;
    o.backend = TS_BACKEND_CUDA;
    o.arena_bytes = (size_t)1 << 30;
    o.max_devices = 1;
    if (ts_devset_open(&o, &g_set) < 0) {
        printf("# ts_devset_open: %s\n", ts_error_string());
        return -1;
    }
    return 0;
}

static int teardown(void **state) {
    if (g_set) ts_devset_close(g_set);
    return 0;
}

#define OK(expr)                                                                                   \
    do {                                                                                           \
        int rc_ = (expr);                                                                          \
        if (rc_ != 0) fail_msg("%s = %d: %s", #expr, rc_, ts_error_string());                      \
    } while (0)

static void *to_device(ts_device *d, ts_stream *st, char prec, const void *h, int64_t ld, int64_t rows,
                       int64_t cols) {
    size_t es = ts_prec_size(prec);
    void *p = NULL;
    OK(ts_dmalloc(d, (size_t)(rows * cols) * es, &p));
    OK(ts_copy2d_async(st, TS_COPY_H2D, p, (size_t)rows * es, h, (size_t)ld * es, (size_t)rows * es, (size_t)cols));
    return p;
}

static void gpu_case(ts_engine engine, char prec, char ta, char tb, int64_t m, int64_t n, int64_t k, uint64_t key) {
    ts_device *d = ts_devset_device(g_set, 0);
    ts_stream *st = NULL;
    OK(ts_stream_create(d, &st));
    int64_t ar = ta == 'N' ? m : k, ac = ta == 'N' ? k : m, br = tb == 'N' ? k : n, bc = tb == 'N' ? n : k;
    int64_t lda = ar + 1, ldb = br + 2, ldc = m + 3;
    void *A = kt_alloc_fill(prec, ar, ac, lda, key + 1), *B = kt_alloc_fill(prec, br, bc, ldb, key + 2);
    void *C = kt_alloc_fill(prec, m, n, ldc, key + 3), *Cout = kt_dup(prec, C, ldc * n);
    unsigned char alpha[16], beta[16];
    kt_scalars(prec, alpha, beta);
    void *dA = to_device(d, st, prec, A, lda, ar, ac), *dB = to_device(d, st, prec, B, ldb, br, bc);
    void *dC = to_device(d, st, prec, C, ldc, m, n);
    OK(ts_dev_gemm(st, engine, prec, ta, tb, m, n, k, alpha, dA, ar, dB, br, beta, dC, m));
    size_t es = ts_prec_size(prec);
    OK(ts_copy2d_async(st, TS_COPY_D2H, Cout, (size_t)ldc * es, dC, (size_t)m * es, (size_t)m * es, (size_t)n));
    OK(ts_stream_sync(st));
    double err = -1;
    int ok = ts_gemm_verify(prec, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, Cout, ldc, 3, 11,
                            TS_GEMM_VERIFY_BOUND, &err);
    printf("  %s %c %c%c %lldx%lldx%lld: err = %.3g\n", ts_engine_name(ts_dev_gemm_engine_for(st, engine, prec, ta, tb, m, n, k)),
           prec, ta, tb, (long long)m, (long long)n, (long long)k, err);
    assert_true(ok);
    ts_dfree(d, dA), ts_dfree(d, dB), ts_dfree(d, dC);
    OK(ts_stream_destroy(st));
    free(A), free(B), free(C), free(Cout);
}

static void test_gemm_cublas(void **state) {
    if (!g_set) skip();
    for (int ip = 0; ip < 4; ip++)
        for (int ia = 0; ia < 3; ia++)
            gpu_case(ia == 0 ? TS_ENGINE_AUTO : TS_ENGINE_CUBLAS, kt_precs[ip], kt_ops[ia], kt_ops[(ia + ip) % 3],
                     37, 29, 41, 10 * ip + ia);
    gpu_case(TS_ENGINE_AUTO, 'd', 'N', 'T', 1500, 1300, 1100, 99);
    gpu_case(TS_ENGINE_AUTO, 'z', 'C', 'N', 600, 500, 700, 98);
    // auto's own-SGEMM shapes on cc 9.0 (TT, k >= 4096, two 256 x 128 tiles a multiprocessor)
    gpu_case(TS_ENGINE_AUTO, 's', 'T', 'T', 4160, 4100, 4096, 97);
}

static void test_engines_on_cuda(void **state) {
    if (!g_set) skip();
    ts_device *d = ts_devset_device(g_set, 0);
    ts_stream *st = NULL;
    OK(ts_stream_create(d, &st));
    assert_int_equal(ts_dev_gemm_default_engine(st), TS_ENGINE_CUBLAS);
    assert_int_equal(ts_dev_gemm_engine_for(st, TS_ENGINE_AUTO, 'd', 'N', 'N', 5000, 5000, 5000), TS_ENGINE_CUBLAS);
    // SGEMM NN / TT with long k: the own kernel on cc 9.0 (measured there), cuBLAS elsewhere
    const ts_device_props *dp = ts_device_props_of(d);
    const ts_engine own_s = dp->cc_major == 9 && dp->cc_minor == 0 ? TS_ENGINE_TESSERA : TS_ENGINE_CUBLAS;
    assert_int_equal(ts_dev_gemm_engine_for(st, TS_ENGINE_AUTO, 's', 'N', 'N', 8192, 8192, 8192), own_s);
    assert_int_equal(ts_dev_gemm_engine_for(st, TS_ENGINE_AUTO, 's', 'N', 'T', 8192, 8192, 8192), TS_ENGINE_CUBLAS);
    double one = 1, zero = 0;
    void *p = NULL;
    OK(ts_dmalloc(d, 64 * 8, &p));
    // The own kernels run every precision on CUDA devices (tests/gpu/test_gpu_dgemm_tc.c and
    // tests/gpu/test_gpu_sgemm.c check their numbers).
    OK(ts_memset_async(st, p, 0, 64 * 8));
    OK(ts_dev_gemm(st, TS_ENGINE_TESSERA, 'd', 'N', 'N', 4, 4, 4, &one, p, 4, p, 4, &zero, (double *)p + 32, 4));
    float onef[2] = {1, 0}, zerof[2] = {0, 0};
    double onez[2] = {1, 0}, zeroz[2] = {0, 0};
    OK(ts_dev_gemm(st, TS_ENGINE_TESSERA, 's', 'N', 'N', 4, 4, 4, onef, p, 4, p, 4, zerof, (float *)p + 64, 4));
    OK(ts_dev_gemm(st, TS_ENGINE_TESSERA, 'c', 'N', 'N', 4, 4, 4, onef, p, 4, p, 4, zerof, (float *)p + 64, 4));
    OK(ts_dev_gemm(st, TS_ENGINE_TESSERA, 'z', 'N', 'N', 4, 4, 4, onez, p, 4, p, 4, zeroz, (double *)p + 32, 4));
    assert_int_equal(ts_dev_gemm(st, TS_ENGINE_REF, 'd', 'N', 'N', 4, 4, 4, &one, p, 4, p, 4, &zero, p, 4),
                     TS_ERR_UNSUPPORTED);
    assert_int_equal(ts_dev_gemm(st, TS_ENGINE_CPU, 'd', 'N', 'N', 4, 4, 4, &one, p, 4, p, 4, &zero, p, 4),
                     TS_ERR_UNSUPPORTED);
    OK(ts_stream_sync(st));
    ts_dfree(d, p);
    OK(ts_stream_destroy(st));
}

static void test_dtrsm_cuda(void **state) {
    if (!g_set) skip();
    ts_device *d = ts_devset_device(g_set, 0);
    ts_stream *st = NULL;
    OK(ts_stream_create(d, &st));
    int64_t m = 70, n = 33, lda = 71, ldb = 73;
    double *A = kt_alloc_fill('d', m, m, lda, 5), *B = kt_alloc_fill('d', m, n, ldb, 6);
    for (int64_t i = 0; i < m; i++) A[i + i * lda] += 4;
    double *Bh = kt_dup('d', B, ldb * n), *Bd = kt_dup('d', B, ldb * n);
    double *dA = to_device(d, st, 'd', A, lda, m, m), *dB = to_device(d, st, 'd', B, ldb, m, n);
    OK(ts_dev_dtrsm(st, 'L', 'U', 'N', 'N', m, n, 0.5, dA, m, dB, m));
    OK(ts_copy2d_async(st, TS_COPY_D2H, Bd, ldb * 8, dB, m * 8, m * 8, n));
    OK(ts_stream_sync(st));
    OK(ts_dtrsm_cpu('L', 'U', 'N', 'N', m, n, 0.5, A, lda, Bh, ldb));
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) assert_true(fabs(Bd[i + j * ldb] - Bh[i + j * ldb]) <= 1e-13);
    ts_dfree(d, dA), ts_dfree(d, dB);
    OK(ts_stream_destroy(st));
    free(A), free(B), free(Bh), free(Bd);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gemm_cublas),
        cmocka_unit_test(test_engines_on_cuda),
        cmocka_unit_test(test_dtrsm_cuda),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
