// test_gemm_cpu.c: the CPU BLAS GEMM (CBLAS) against the reference GEMM and the naive loop; its name/threads.
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <cmocka.h>

#include "core/ts_error.h"
#include "kern_test_util.h"

// ts_gemm_cpu and ts_gemm_ref both within 2 (k + 2) eps |.| of the naive long-double product.
static void check_case(char prec, char ta, char tb, int64_t m, int64_t n, int64_t k, uint64_t key) {
    int64_t ar = ta == 'N' ? m : k, ac = ta == 'N' ? k : m;
    int64_t br = tb == 'N' ? k : n, bc = tb == 'N' ? n : k;
    int64_t lda = ar + 1, ldb = br + 2, ldc = m + 3;
    void *A = kt_alloc_fill(prec, ar, ac, lda, key + 1);
    void *B = kt_alloc_fill(prec, br, bc, ldb, key + 2);
    void *C = kt_alloc_fill(prec, m, n, ldc, key + 3);
    void *C2 = kt_dup(prec, C, ldc * n);
    unsigned char alpha[16], beta[16];
    kt_scalars(prec, alpha, beta);
    kt_lc *ref = malloc((size_t)(m * n) * sizeof *ref);
    long double *bnd = malloc((size_t)(m * n) * sizeof *bnd);
    kt_naive(prec, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, ref, bnd);
    assert_int_equal(ts_gemm_cpu(prec, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc), 0);
    ts_gemm_ref(prec, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C2, ldc);
    double e1 = kt_scaled_err(prec, m, n, k, C, ldc, ref, bnd);
    double e2 = kt_scaled_err(prec, m, n, k, C2, ldc, ref, bnd);
    if (!(e1 <= 2 && e2 <= 2)) printf("  %c %c%c: cpu %.3g ref %.3g\n", prec, ta, tb, e1, e2);
    assert_true(e1 <= 2);
    assert_true(e2 <= 2);
    free(A), free(B), free(C), free(C2), free(ref), free(bnd);
}

static void test_cpu_vs_ref_all(void **state) {
    (void)state;
    for (int ip = 0; ip < 4; ip++)
        for (int ia = 0; ia < 3; ia++)
            for (int ib = 0; ib < 3; ib++)
                check_case(kt_precs[ip], kt_ops[ia], kt_ops[ib], 33, 27, 45, 500 + 9 * ip + 3 * ia + ib);
}

static void test_cpu_vs_ref_larger(void **state) {
    (void)state;
    check_case('d', 'N', 'T', 150, 140, 260, 7);
    check_case('z', 'C', 'N', 130, 40, 140, 8);
}

static void test_cpu_bad_args(void **state) {
    (void)state;
    double a = 1, one = 1, zero = 0;
    ts_error_clear();
    assert_int_equal(ts_gemm_cpu('d', 'N', 'X', 1, 1, 1, &one, &a, 1, &a, 1, &zero, &a, 1), TS_ERR_ARG);
    assert_non_null(strstr(ts_error_last()->message, "argument 2"));
    assert_int_equal(ts_gemm_cpu('d', 'N', 'N', 4, 1, 1, &one, &a, 1, &a, 1, &zero, &a, 4), TS_ERR_ARG);
    assert_non_null(strstr(ts_error_last()->message, "lda"));
    assert_int_equal(ts_gemm_cpu('x', 'N', 'N', 1, 1, 1, &one, &a, 1, &a, 1, &zero, &a, 1), TS_ERR_ARG);
    // Dimensions beyond the CBLAS int are refused before anything is read.
    int64_t big = (int64_t)INT_MAX + 1;
    assert_int_equal(ts_gemm_cpu('d', 'N', 'N', big, 1, 1, &one, &a, big, &a, 1, &zero, &a, big), TS_ERR_ARG);
    assert_non_null(strstr(ts_error_last()->message, "int range"));
    assert_int_equal(ts_gemm_cpu('d', 'N', 'N', 1, 1, 1, &one, &a, 1, &a, big, &zero, &a, 1), TS_ERR_ARG);
    // m = 0: quick return, nothing touched.
    assert_int_equal(ts_gemm_cpu('d', 'N', 'N', 0, 1, 1, &one, &a, 1, &a, 1, &zero, &a, 1), 0);
    assert_true(a == 1);
}

static void test_cpu_beta_zero_nan(void **state) {
    (void)state;
    double A[4] = {1, 2, 3, 4}, C[4] = {NAN, NAN, NAN, NAN}, one = 1, zero = 0;
    assert_int_equal(ts_gemm_cpu('d', 'N', 'N', 2, 2, 2, &one, A, 2, A, 2, &zero, C, 2), 0);
    assert_true(C[0] == 7 && C[1] == 10 && C[2] == 15 && C[3] == 22);
}

static void test_blas_name_threads(void **state) {
    (void)state;
    const char *name = ts_cpu_blas_name();
    assert_non_null(name);
    assert_true(strlen(name) > 0);
    printf("  CPU BLAS: %s, %d threads\n", name, ts_cpu_blas_threads());
    int t = ts_cpu_blas_threads();
    assert_true(t >= 1);
    ts_cpu_blas_set_threads(1);
    assert_int_equal(ts_cpu_blas_threads(), 1);
    ts_cpu_blas_set_threads(t);
    assert_int_equal(ts_cpu_blas_threads(), t);
}

static void test_dtrsm_cpu(void **state) {
    (void)state;
    // Lower, non-unit, left: L X = 2 B with L = [[2,0],[1,4]] and B = [2; 9] -> X = [2; 4].
    double L[4] = {2, 1, 0, 4}, B[2] = {2, 9};
    assert_int_equal(ts_dtrsm_cpu('L', 'L', 'N', 'N', 2, 1, 2.0, L, 2, B, 2), 0);
    assert_true(B[0] == 2 && B[1] == 4);
    assert_int_equal(ts_dtrsm_cpu('X', 'L', 'N', 'N', 2, 1, 1.0, L, 2, B, 2), TS_ERR_ARG);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpu_vs_ref_all),     cmocka_unit_test(test_cpu_vs_ref_larger),
        cmocka_unit_test(test_cpu_bad_args),       cmocka_unit_test(test_cpu_beta_zero_nan),
        cmocka_unit_test(test_blas_name_threads),  cmocka_unit_test(test_dtrsm_cpu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
