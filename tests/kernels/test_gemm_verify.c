// test_gemm_verify.c: the randomized GEMM check passes correct results and catches one wrong element.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <cmocka.h>

#include "core/ts_error.h"
#include "kern_test_util.h"

typedef struct {
    char prec, ta, tb;
    int64_t m, n, k, lda, ldb, ldc;
    void *A, *B, *C0, *C;
    unsigned char alpha[16], beta[16];
    double S; // (|alpha| ||op(A)|| ||op(B)|| + |beta| ||C0||) ((k+2) eps + (n+2k+4) 2^-53), as in ts_gemm_verify.c
} vcase;

static double op_norm_inf(char prec, char t, int64_t rows, int64_t cols, const void *M, int64_t ld) {
    double r = 0;
    for (int64_t i = 0; i < rows; i++) {
        double s = 0;
        for (int64_t p = 0; p < cols; p++) s += (double)kt_abs(kt_op_el(prec, t, M, ld, i, p));
        if (s > r) r = s;
    }
    return r;
}

static vcase make_case(char prec, char ta, char tb, int64_t m, int64_t n, int64_t k, uint64_t key) {
    vcase c = {.prec = prec, .ta = ta, .tb = tb, .m = m, .n = n, .k = k};
    int64_t ar = ta == 'N' ? m : k, ac = ta == 'N' ? k : m, br = tb == 'N' ? k : n, bc = tb == 'N' ? n : k;
    c.lda = ar + 1, c.ldb = br + 2, c.ldc = m + 1;
    c.A = kt_alloc_fill(prec, ar, ac, c.lda, key + 1);
    c.B = kt_alloc_fill(prec, br, bc, c.ldb, key + 2);
    c.C0 = kt_alloc_fill(prec, m, n, c.ldc, key + 3);
    c.C = kt_dup(prec, c.C0, c.ldc * n);
    kt_scalars(prec, c.alpha, c.beta);
    ts_gemm_ref(prec, ta, tb, m, n, k, c.alpha, c.A, c.lda, c.B, c.ldb, c.beta, c.C, c.ldc);
    double nA = op_norm_inf(prec, ta, m, k, c.A, c.lda), nB = op_norm_inf(prec, tb, k, n, c.B, c.ldb);
    double nC0 = op_norm_inf(prec, 'N', m, n, c.C0, c.ldc);
    c.S = ((double)kt_abs(kt_get(prec, c.alpha, 0)) * nA * nB + (double)kt_abs(kt_get(prec, c.beta, 0)) * nC0) *
          ((double)(k + 2) * kt_eps(prec) + (double)(n + 2 * k + 4) * ldexp(1.0, -53));
    return c;
}

static void free_case(vcase *c) { free(c->A), free(c->B), free(c->C0), free(c->C); }

static int verify(const vcase *c, const void *C, int nvec, uint64_t seed, double *err) {
    return ts_gemm_verify(c->prec, c->ta, c->tb, c->m, c->n, c->k, c->alpha, c->A, c->lda, c->B, c->ldb,
                          c->beta, c->C0, c->ldc, C, c->ldc, nvec, seed, TS_GEMM_VERIFY_BOUND, err);
}

// C with element (i, j) changed by delta (added to the real part).
static void *corrupt(const vcase *c, int64_t i, int64_t j, double delta) {
    void *X = kt_dup(c->prec, c->C, c->ldc * c->n);
    kt_lc v = kt_get(c->prec, X, i + j * c->ldc);
    v.re += delta;
    kt_put(c->prec, X, i + j * c->ldc, v);
    return X;
}

static double max_abs(const vcase *c) {
    double r = 0;
    for (int64_t j = 0; j < c->n; j++)
        for (int64_t i = 0; i < c->m; i++) {
            double a = (double)kt_abs(kt_get(c->prec, c->C, i + j * c->ldc));
            if (a > r) r = a;
        }
    return r;
}

// A correct result passes with every vector count; its error is far below the bound.
static void test_correct_passes(void **state) {
    (void)state;
    for (int ip = 0; ip < 4; ip++)
        for (int o = 0; o < 3; o++) {
            vcase c = make_case(kt_precs[ip], kt_ops[o], kt_ops[(o + 1) % 3], 48, 40, 36, 10 * ip + o);
            for (int nvec = 1; nvec <= 3; nvec++) {
                double err = -1;
                assert_true(verify(&c, c.C, nvec, 42 + nvec, &err));
                assert_true(err >= 0 && err <= 0.1);
                if (o == 0 && nvec == 3) printf("  %c 48x40x36 correct: err = %.3g\n", c.prec, err);
            }
            free_case(&c);
        }
}

// One element off by delta: detected by every vector when |delta| > 2 bound S, never when
// |delta| < bound S minus the correct result's own (tiny) err. Tested just above and below.
static void test_single_element_threshold(void **state) {
    (void)state;
    for (int ip = 0; ip < 4; ip++) {
        vcase c = make_case(kt_precs[ip], 'N', 'T', 45, 38, 52, 100 + ip);
        int64_t pos[3][2] = {{0, 0}, {22, 17}, {44, 37}};
        for (int q = 0; q < 3; q++) {
            double delta_hi = 2.05 * TS_GEMM_VERIFY_BOUND * c.S, delta_lo = 0.5 * TS_GEMM_VERIFY_BOUND * c.S;
            for (int sgn = -1; sgn <= 1; sgn += 2) {
                void *X = corrupt(&c, pos[q][0], pos[q][1], sgn * delta_hi);
                double err;
                for (int nvec = 1; nvec <= 3; nvec++) {
                    assert_false(verify(&c, X, nvec, 7 + q, &err));
                    assert_true(err > TS_GEMM_VERIFY_BOUND);
                }
                free(X);
                X = corrupt(&c, pos[q][0], pos[q][1], sgn * delta_lo);
                assert_true(verify(&c, X, 3, 7 + q, &err));
                free(X);
            }
        }
        printf("  %c 45x38x52: detectable single-element error 2 S = %.3g = %.3g ||C||_max\n", c.prec,
               2 * c.S, 2 * c.S / max_abs(&c));
        free_case(&c);
    }
}

// The brief's case: one element of a double result off by 1e-9 of ||C||_max, nvec = 2 and 3.
static void test_relative_1e9_double(void **state) {
    (void)state;
    const char *ops[] = {"NN", "TN", "NT", "TT"};
    for (int o = 0; o < 4; o++) {
        vcase c = make_case('d', ops[o][0], ops[o][1], 64, 48, 40, 200 + o);
        double delta = 1e-9 * max_abs(&c);
        assert_true(delta > 2 * c.S); // the size is above the guaranteed-detection threshold
        void *X = corrupt(&c, 31, 29, delta);
        double err;
        for (int nvec = 2; nvec <= 3; nvec++) {
            assert_false(verify(&c, X, nvec, 99, &err));
            if (o == 0) printf("  d 64x48x40, 1e-9 ||C|| in one element, nvec=%d: err = %.3g\n", nvec, err);
        }
        free(X);
        free_case(&c);
    }
}

static void test_nan_inf_anywhere_fails(void **state) {
    (void)state;
    for (int ip = 0; ip < 4; ip++) {
        vcase c = make_case(kt_precs[ip], 'C', 'N', 21, 19, 17, 300 + ip);
        int64_t pos[4][2] = {{0, 0}, {20, 18}, {10, 3}, {3, 11}};
        for (int q = 0; q < 4; q++)
            for (int kind = 0; kind < 3; kind++) {
                void *X = kt_dup(c.prec, c.C, c.ldc * c.n);
                kt_lc v = kt_get(c.prec, X, pos[q][0] + pos[q][1] * c.ldc);
                if (kind == 0) v.re = NAN;
                else if (kind == 1) v.re = INFINITY;
                else v.im = NAN; // imaginary part (real precisions: no effect -> skip)
                if (kind == 2 && !kt_cplx(c.prec)) {
                    free(X);
                    continue;
                }
                kt_put(c.prec, X, pos[q][0] + pos[q][1] * c.ldc, v);
                double err = 0;
                assert_false(verify(&c, X, 2, 5, &err));
                assert_false(err <= TS_GEMM_VERIFY_BOUND);
                free(X);
            }
        free_case(&c);
    }
}

// beta = 0 (C0 not needed), alpha = 0 (C = beta C0), k = 0, empty results, bad arguments.
static void test_special_cases(void **state) {
    (void)state;
    vcase c = make_case('z', 'T', 'C', 13, 11, 9, 400);
    double zero[2] = {0, 0}, err;
    // beta = 0: recompute C without C0.
    ts_gemm_ref('z', 'T', 'C', c.m, c.n, c.k, c.alpha, c.A, c.lda, c.B, c.ldb, zero, c.C, c.ldc);
    assert_true(ts_gemm_verify('z', 'T', 'C', c.m, c.n, c.k, c.alpha, c.A, c.lda, c.B, c.ldb, zero, NULL, 0,
                               c.C, c.ldc, 2, 1, TS_GEMM_VERIFY_BOUND, &err));
    // alpha = 0: C = beta C0.
    ts_gemm_ref('z', 'T', 'C', c.m, c.n, c.k, zero, c.A, c.lda, c.B, c.ldb, c.beta, memcpy(c.C, c.C0, (size_t)(c.ldc * c.n) * 16), c.ldc);
    assert_true(ts_gemm_verify('z', 'T', 'C', c.m, c.n, c.k, zero, c.A, c.lda, c.B, c.ldb, c.beta, c.C0, c.ldc,
                               c.C, c.ldc, 2, 1, TS_GEMM_VERIFY_BOUND, &err));
    // alpha = beta = 0: C must be exactly zero.
    memset(c.C, 0, (size_t)(c.ldc * c.n) * 16);
    assert_true(ts_gemm_verify('z', 'T', 'C', c.m, c.n, c.k, zero, c.A, c.lda, c.B, c.ldb, zero, NULL, 0,
                               c.C, c.ldc, 1, 1, TS_GEMM_VERIFY_BOUND, &err));
    assert_true(err == 0);
    ((double *)c.C)[5] = 1e-300;
    assert_false(ts_gemm_verify('z', 'T', 'C', c.m, c.n, c.k, zero, c.A, c.lda, c.B, c.ldb, zero, NULL, 0,
                                c.C, c.ldc, 1, 1, TS_GEMM_VERIFY_BOUND, &err));
    // m = 0: nothing to check.
    assert_true(ts_gemm_verify('z', 'N', 'N', 0, 3, 2, c.alpha, c.A, 1, c.B, 2, zero, NULL, 0, c.C, 1, 1, 1,
                               TS_GEMM_VERIFY_BOUND, &err));
    // Bad arguments fail with TS_ERR_ARG recorded.
    ts_error_clear();
    assert_false(verify(&c, c.C, 0, 1, &err));
    assert_int_equal(ts_error_last()->code, TS_ERR_ARG);
    assert_false(ts_gemm_verify('z', 'T', 'C', c.m, c.n, c.k, c.alpha, c.A, c.lda, c.B, c.ldb, c.beta, NULL, 0,
                                c.C, c.ldc, 1, 1, TS_GEMM_VERIFY_BOUND, &err)); // C0 NULL, beta != 0
    assert_false(ts_gemm_verify('z', 'T', 'C', c.m, c.n, c.k, c.alpha, c.A, 1, c.B, c.ldb, c.beta, c.C0, c.ldc,
                                c.C, c.ldc, 1, 1, TS_GEMM_VERIFY_BOUND, &err)); // lda
    free_case(&c);
}

// The same seed gives the same err; a larger problem checked against the CPU BLAS result.
static void test_seed_and_larger(void **state) {
    (void)state;
    vcase c = make_case('d', 'N', 'N', 300, 280, 260, 500);
    assert_int_equal(ts_gemm_cpu('d', 'N', 'N', c.m, c.n, c.k, c.alpha, c.A, c.lda, c.B, c.ldb, c.beta,
                                 memcpy(c.C, c.C0, (size_t)(c.ldc * c.n) * 8), c.ldc), 0);
    double e1, e2;
    assert_true(verify(&c, c.C, 3, 11, &e1));
    assert_true(verify(&c, c.C, 3, 11, &e2));
    assert_true(e1 == e2);
    printf("  d 300x280x260 (CPU BLAS): err = %.3g; 2 S = %.3g = %.3g ||C||_max\n", e1, 2 * c.S,
           2 * c.S / max_abs(&c));
    free_case(&c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_correct_passes),
        cmocka_unit_test(test_single_element_threshold),
        cmocka_unit_test(test_relative_1e9_double),
        cmocka_unit_test(test_nan_inf_anywhere_fails),
        cmocka_unit_test(test_special_cases),
        cmocka_unit_test(test_seed_and_larger),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
