// test_l3_verify.c: the Level-3 routines on the CPU BLAS (ts_l3_cpu) pass their randomized check (ts_l3_verify) in
// every precision and variant, and a wrong element, a NaN, or a write outside syrk's triangle fails it.
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/ts_error.h"
#include "core/ts_rng.h"
#include "kernels/ts_l3.h"

typedef struct {
    void *A, *B, *C0, *W;
} bufs;

// Random operands of p; A of trmm/trsm made diagonally dominant (A / ka + I) as the CLI does.
static bufs make_data(const ts_l3_prob *p, uint64_t key) {
    size_t es = ts_prec_size(p->prec), ea = ts_l3_elems_a(p), eb = ts_l3_elems_b(p), ec = ts_l3_elems_c(p);
    bufs b = {calloc(ea ? ea : 1, es), calloc(eb ? eb : 1, es), calloc(ec, es), calloc(ec, es)};
    assert_true(b.A && b.B && b.C0 && b.W);
    int single = p->prec == 's' || p->prec == 'c', parts = ts_prec_is_complex(p->prec) ? 2 : 1;
    void *dst[3] = {b.A, b.B, b.C0};
    size_t n[3] = {ea, eb, ec};
    for (int q = 0; q < 3; q++)
        for (size_t i = 0; i < n[q] * (size_t)parts; i++) {
            double v = ts_uniform_at(key + (uint64_t)q, i);
            if (q == 0 && ts_l3_is_tri(p->r)) v /= (double)p->ka;
            if (single) ((float *)dst[q])[i] = (float)v;
            else ((double *)dst[q])[i] = v;
        }
    if (ts_l3_is_tri(p->r))
        for (int64_t j = 0; j < p->ka; j++) {
            size_t idx = (size_t)(j + j * p->ra) * (size_t)parts;
            if (single) ((float *)b.A)[idx] += 1.0f;
            else ((double *)b.A)[idx] += 1.0;
        }
    return b;
}

static void free_data(bufs *b) { free(b->A), free(b->B), free(b->C0), free(b->W); }

static void add_to(const ts_l3_prob *p, void *W, int64_t i, int64_t j, double v) {
    size_t idx = (size_t)(i + j * p->rc) * (ts_prec_is_complex(p->prec) ? 2 : 1);
    if (p->prec == 's' || p->prec == 'c') ((float *)W)[idx] += (float)v;
    else ((double *)W)[idx] += v;
}

// Runs p on the CPU BLAS, checks the result, then checks a copy with one element off by `off`.
static void run_case(const ts_l3_prob *p, double *err_ok, double *err_bad) {
    bufs b = make_data(p, 77 + (uint64_t)p->r * 13 + (uint64_t)p->prec);
    size_t bytes = ts_l3_elems_c(p) * ts_prec_size(p->prec);
    memcpy(b.W, ts_l3_is_tri(p->r) ? b.B : b.C0, bytes);
    ts_l3_verify *v = NULL;
    assert_int_equal(ts_l3_verify_prepare(p, b.A, b.B, b.C0, 2, 5, &v), 0);
    assert_int_equal(ts_l3_cpu(p, b.A, b.B, b.W), 0);
    int outside = -1;
    *err_ok = ts_l3_verify_error(v, b.W, &outside);
    assert_int_equal(outside, 0);
    add_to(p, b.W, p->rc / 2, p->n / 2, 1e-2); // inside the defined part (the lower triangle for uplo L)
    *err_bad = ts_l3_verify_error(v, b.W, &outside);
    ts_l3_verify_free(v);
    free_data(&b);
}

static void test_every_routine_passes_and_catches_one_element(void **state) {
    (void)state;
    const double alpha[2] = {1.5, -0.5}, beta[2] = {0.75, 0.25};
    const char *precs = "sdcz";
    for (int r = 0; r < TS_L3_COUNT; r++)
        for (int q = 0; q < 4; q++) {
            char prec = precs[q];
            if (ts_l3_is_herm(r) && !ts_prec_is_complex(prec)) continue;
            for (int variant = 0; variant < 2; variant++) {
                char side = variant ? 'R' : 'L', uplo = variant ? 'U' : 'L', diag = variant ? 'U' : 'N';
                char trans = variant ? (ts_l3_is_herm(r) || (ts_prec_is_complex(prec) && !ts_l3_is_rk(r) &&
                                                             !ts_l3_is_r2k(r)) ? 'C' : 'T') : 'N';
                if ((ts_l3_is_rk(r) || ts_l3_is_r2k(r)) && !ts_l3_is_herm(r) && ts_prec_is_complex(prec) && trans == 'C')
                    trans = 'T';
                ts_l3_prob p = ts_l3_prob_make(r, prec, side, uplo, trans, diag, 37, 29, alpha, beta);
                double ok, bad;
                run_case(&p, &ok, &bad);
                if (!(ok <= TS_L3_VERIFY_BOUND * 0.1))
                    fail_msg("%s %c variant %d: error %.3g of a correct result", ts_l3_name(r), prec, variant, ok);
                if (!(bad > TS_L3_VERIFY_BOUND))
                    fail_msg("%s %c variant %d: error %.3g with a wrong element", ts_l3_name(r), prec, variant, bad);
            }
        }
}

static void test_nan_and_outside_fail(void **state) {
    (void)state;
    const double one[2] = {1, 0};
    ts_l3_prob p = ts_l3_prob_make(TS_L3_SYRK, 'd', 'L', 'L', 'N', 'N', 24, 16, one, one);
    bufs b = make_data(&p, 9);
    memcpy(b.W, b.C0, ts_l3_elems_c(&p) * sizeof(double));
    ts_l3_verify *v = NULL;
    assert_int_equal(ts_l3_verify_prepare(&p, b.A, b.B, b.C0, 2, 5, &v), 0);
    assert_int_equal(ts_l3_cpu(&p, b.A, b.B, b.W), 0);
    int outside = -1;
    double e0 = ts_l3_verify_error(v, b.W, &outside);
    if (!(e0 <= TS_L3_VERIFY_BOUND)) fail_msg("syrk: error %g, outside %d", e0, outside);
    ((double *)b.W)[0 + 23 * 24] += 1e-3; // row 0, column 23: the strict upper triangle, not syrk's to write
    assert_true(isinf(ts_l3_verify_error(v, b.W, &outside)));
    assert_int_equal(outside, 1);
    // A NaN anywhere in the defined part fails, also when finite rows follow it.
    ((double *)b.W)[0 + 23 * 24] = ((double *)b.C0)[0 + 23 * 24];
    for (int64_t i = 0; i < 24; i += 7) {
        double keep = ((double *)b.W)[i + 0 * 24];
        ((double *)b.W)[i + 0 * 24] = NAN;
        assert_false(ts_l3_verify_error(v, b.W, &outside) <= TS_L3_VERIFY_BOUND);
        ((double *)b.W)[i + 0 * 24] = keep;
    }
    ts_l3_verify_free(v);
    free_data(&b);
}

static void test_sizes_flags_and_arguments(void **state) {
    (void)state;
    const double al[2] = {2, 1}, be[2] = {3, 1};
    ts_l3_prob p = ts_l3_prob_make(TS_L3_HERK, 'z', 'L', 'U', 'C', 'N', 40, 10, al, be);
    assert_int_equal(p.n, 40), assert_int_equal(p.k, 10), assert_int_equal(p.ra, 10), assert_int_equal(p.ca, 40);
    assert_true(p.za[1] == 0 && p.zb[1] == 0); // herk: real alpha and beta
    assert_true(p.flops == 4.0 * 40 * 40 * 10);
    char f[5];
    ts_l3_flags(&p, f);
    assert_string_equal(f, "-UC-");
    p = ts_l3_prob_make(TS_L3_TRSM, 'd', 'R', 'L', 'T', 'U', 30, 20, al, be);
    assert_int_equal(p.ka, 20), assert_int_equal(p.rc, 30);
    ts_l3_flags(&p, f);
    assert_string_equal(f, "RLTU");
    assert_string_equal(ts_l3_name(TS_L3_HER2K), "her2k");
    ts_l3_verify *v = (ts_l3_verify *)&p;
    assert_int_equal(ts_l3_verify_prepare(&p, NULL, NULL, NULL, 0, 1, &v), TS_ERR_ARG);
    assert_null(v);
    p = ts_l3_prob_make(TS_L3_HEMM, 'd', 'L', 'L', 'N', 'N', 4, 4, al, be); // no real HEMM
    double x[16] = {0};
    assert_int_equal(ts_l3_cpu(&p, x, x, x), TS_ERR_ARG);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_routine_passes_and_catches_one_element),
        cmocka_unit_test(test_nan_and_outside_fail),
        cmocka_unit_test(test_sizes_flags_and_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
