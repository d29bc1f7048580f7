// test_gemm_ref.c: the reference GEMM against a naive long-double triple loop, every precision and op.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <cmocka.h>

#include "kern_test_util.h"

// |C - Cref| <= c (k + 2) eps (|alpha||op(A)||op(B)| + |beta||C0|) elementwise; c = 2 leaves room
// for the complex product's extra rounding (sqrt(2)-ish) and nothing more.
#define KT_C 2.0

// One case: odd sizes, leading dimensions larger than the rows (padding is NaN and must stay so).
static double run_case(char prec, char ta, char tb, int64_t m, int64_t n, int64_t k, int beta_zero,
                       uint64_t key) {
    int64_t ar = ta == 'N' ? m : k, ac = ta == 'N' ? k : m;
    int64_t br = tb == 'N' ? k : n, bc = tb == 'N' ? n : k;
    int64_t lda = ar + 3, ldb = br + 5, ldc = m + 2;
    void *A = kt_alloc_fill(prec, ar, ac, lda, key + 1);
    void *B = kt_alloc_fill(prec, br, bc, ldb, key + 2);
    void *C = kt_alloc_fill(prec, m, n, ldc, key + 3);
    unsigned char alpha[16], beta[16];
    kt_scalars(prec, alpha, beta);
    if (beta_zero) {
        memset(beta, 0, sizeof beta);
        kt_lc nan = {NAN, NAN};
        for (int64_t i = 0; i < ldc * n; i++) kt_put(prec, C, i, nan); // beta = 0 must not read C
    }
    void *C0 = kt_dup(prec, C, ldc * n);
    kt_lc *ref = malloc((size_t)(m * n) * sizeof *ref);
    long double *bnd = malloc((size_t)(m * n) * sizeof *bnd);
    kt_naive(prec, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C0, ldc, ref, bnd);
    ts_gemm_ref(prec, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    double err = kt_scaled_err(prec, m, n, k, C, ldc, ref, bnd);
    for (int64_t j = 0; j < n; j++) // padding rows untouched
        for (int64_t i = m; i < ldc; i++) assert_true(isnan((double)kt_get(prec, C, i + j * ldc).re));
    free(A), free(B), free(C), free(C0), free(ref), free(bnd);
    return err;
}

static void test_all_ops_all_precisions(void **state) {
    (void)state;
    double worst = 0;
    for (int ip = 0; ip < 4; ip++)
        for (int ia = 0; ia < 3; ia++)
            for (int ib = 0; ib < 3; ib++) {
                char p = kt_precs[ip], ta = kt_ops[ia], tb = kt_ops[ib];
                double e = run_case(p, ta, tb, 37, 29, 41, 0, 100 + 10 * ip + 3 * ia + ib);
                if (!(e <= KT_C)) printf("  %c %c%c: scaled error %.3g\n", p, ta, tb, e);
                assert_true(e <= KT_C);
                if (e > worst) worst = e;
            }
    printf("  37x29x41, 4 precisions x 9 ops: worst |C - Cref| / ((k+2) eps bound) = %.3g\n", worst);
}

// Sizes that cross the 128 x 128 panel blocking in every dimension.
static void test_block_boundaries(void **state) {
    (void)state;
    const char *ops[] = {"NN", "TC", "CT"};
    for (int ip = 0; ip < 4; ip++)
        for (int o = 0; o < 3; o++) {
            double e = run_case(kt_precs[ip], ops[o][0], ops[o][1], 131, 7, 259, 0, 900 + ip * 3 + o);
            assert_true(e <= KT_C);
        }
}

static void test_beta_zero_overwrites_nan(void **state) {
    (void)state;
    for (int ip = 0; ip < 4; ip++)
        for (int o = 0; o < 3; o++) {
            double e = run_case(kt_precs[ip], kt_ops[o], kt_ops[2 - o], 23, 19, 17, 1, 300 + ip * 3 + o);
            assert_true(e <= KT_C); // also not NaN
        }
}

// alpha = 0: C = beta C, A and B are not read (they hold NaN); k = 0 likewise.
static void test_alpha_zero_and_k_zero(void **state) {
    (void)state;
    for (int ip = 0; ip < 4; ip++) {
        char p = kt_precs[ip];
        int64_t m = 9, n = 7, k = 5, ldc = 11;
        void *C = kt_alloc_fill(p, m, n, ldc, 55);
        void *C0 = kt_dup(p, C, ldc * n);
        void *A = kt_alloc_fill(p, 0, 0, m * k, 1); // all NaN
        void *B = kt_alloc_fill(p, 0, 0, k * n, 1);
        unsigned char alpha[16] = {0}, beta[16], one[16];
        kt_scalars(p, one, beta);
        ts_gemm_ref(p, 'N', 'N', m, n, k, alpha, A, m, B, k, beta, C, ldc);
        kt_lc be = kt_get(p, beta, 0);
        for (int64_t j = 0; j < n; j++)
            for (int64_t i = 0; i < m; i++) {
                kt_lc want = kt_mul(be, kt_get(p, C0, i + j * ldc)), got = kt_get(p, C, i + j * ldc);
                kt_lc d = {got.re - want.re, got.im - want.im};
                assert_true(kt_abs(d) <= 4 * kt_eps(p) * kt_abs(want));
            }
        memcpy(C, C0, (size_t)(ldc * n) * ts_prec_size(p));
        ts_gemm_ref(p, 'T', 'C', m, n, 0, one, A, 1, B, n, beta, C, ldc); // k = 0
        for (int64_t j = 0; j < n; j++)
            for (int64_t i = 0; i < m; i++) {
                kt_lc want = kt_mul(be, kt_get(p, C0, i + j * ldc)), got = kt_get(p, C, i + j * ldc);
                kt_lc d = {got.re - want.re, got.im - want.im};
                assert_true(kt_abs(d) <= 4 * kt_eps(p) * kt_abs(want));
            }
        free(C), free(C0), free(A), free(B);
    }
}

// m = 0 or n = 0 or an invalid argument: C is untouched.
static void test_quick_return_and_bad_args(void **state) {
    (void)state;
    double C[4] = {1, 2, 3, 4}, A[4] = {1, 1, 1, 1}, one = 1, zero = 0;
    ts_gemm_ref('d', 'N', 'N', 0, 2, 2, &one, A, 1, A, 2, &zero, C, 1);
    ts_gemm_ref('d', 'N', 'N', 2, 0, 2, &one, A, 2, A, 2, &zero, C, 2);
    ts_gemm_ref('d', 'X', 'N', 2, 2, 2, &one, A, 2, A, 2, &zero, C, 2);
    ts_gemm_ref('d', 'N', 'N', 2, 2, 2, &one, A, 1, A, 2, &zero, C, 2); // lda < m
    ts_gemm_ref('q', 'N', 'N', 2, 2, 2, &one, A, 2, A, 2, &zero, C, 2);
    for (int i = 0; i < 4; i++) assert_true(C[i] == i + 1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_ops_all_precisions),
        cmocka_unit_test(test_block_boundaries),
        cmocka_unit_test(test_beta_zero_overwrites_nan),
        cmocka_unit_test(test_alpha_zero_and_k_zero),
        cmocka_unit_test(test_quick_return_and_bad_args),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
