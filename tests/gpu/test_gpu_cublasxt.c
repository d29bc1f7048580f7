// test_gpu_cublasxt.c: the cuBLASXt baseline on real GPUs: a 2000x1500x1000 DGEMM against the CPU BLAS (skips without a GPU).
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/ts_rng.h"
#include "device/ts_device.h"
#include "kernels/ts_kernels.h"
#include "ts_config.h"
#if TS_HAVE_CUDA
#include "kernels/cuda/ts_cuda_kernels.h"
#endif

static void test_dgemm(void **state) {
    (void)state;
#if !TS_HAVE_CUDA
    skip();
#else
    if (ts_cuda_device_count() == 0) skip();
    ts_devset_opts o;
    ts_devset_opts_init(&o);
    o.backend = TS_BACKEND_CUDA;
    o.sim_devices = 0;
    o.arena_fraction = 0.2; // cuBLASXt allocates its own device memory
    ts_devset *s = NULL;
    assert_int_equal(ts_devset_open(&o, &s), 0);
    const int64_t m = 2000, n = 1500, k = 1000;
    double *A = malloc(sizeof(double) * m * k), *B = malloc(sizeof(double) * k * n);
    double *C = malloc(sizeof(double) * m * n), *R = malloc(sizeof(double) * m * n);
    ts_fill_uniform_d(11, A, m * k);
    ts_fill_uniform_d(12, B, k * n);
    ts_fill_uniform_d(13, C, m * n);
    memcpy(R, C, sizeof(double) * m * n);
    int h[3];
    assert_int_equal(ts_host_pin(s, A, sizeof(double) * m * k, &h[0]), 0);
    assert_int_equal(ts_host_pin(s, B, sizeof(double) * k * n, &h[1]), 0);
    assert_int_equal(ts_host_pin(s, C, sizeof(double) * m * n, &h[2]), 0);
    double alpha = 1.5, beta = 0.75;
    ts_cublasxt *xt = NULL;
    assert_int_equal(ts_cublasxt_create(s, 0, &xt), 0);
    assert_int_equal(ts_cublasxt_set_block(xt, 512), 0); // several blocks per dimension
    assert_int_equal(ts_cublasxt_gemm(xt, 'd', 'N', 'N', m, n, k, &alpha, A, m, B, k, &beta, C, m), 0);
    ts_gemm_cpu('d', 'N', 'N', m, n, k, &alpha, A, m, B, k, &beta, R, m);
    // Bound: 3 k eps (|alpha| k max|a||b| + |beta| max|c|), operands in [-0.5, 0.5).
    double tol = 3.0 * (double)(k + 2) * DBL_EPSILON * (alpha * (double)k * 0.25 + beta * 0.5), worst = 0;
    for (int64_t i = 0; i < m * n; i++) {
        double d = fabs(C[i] - R[i]);
        if (!(d <= worst)) worst = d;
    }
    assert_true(worst <= tol);
    assert_true(worst > 0 || fabs(R[0]) > 0); // the data are not zeros
    ts_cublasxt_destroy(xt);
    for (int i = 0; i < 3; i++) ts_host_unpin(s, h[i]);
    free(A), free(B), free(C), free(R);
    ts_devset_close(s);
#endif
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_dgemm)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
