// test_burn_abft.c: the burn ABFT check: never flags a correct product, locates a wrong element, catches corrupted operands.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/burn/ts_burn.h"
#include "core/ts_error.h"
#include "core/ts_rng.h"
#include "kernels/ts_burn_check.h"
#include "kernels/ts_kernels.h"

// One augmented problem on the host: data m x n x k, result (m+2) x (n+2).
typedef struct {
    int64_t m, n, k, lda, ldb, ldc;
    double *Aa, *Ba, *C, *bounds, *diffs;
    ts_burn_check_result res;
    ts_burn_check_args args;
} prob;

static void prob_init(prob *p, int64_t m, int64_t n, int64_t k, uint64_t key, double mean, double sd) {
    p->m = m, p->n = n, p->k = k;
    p->lda = m + 2, p->ldb = k, p->ldc = m + 2;
    p->Aa = malloc(sizeof(double) * (size_t)(p->lda * k));
    p->Ba = malloc(sizeof(double) * (size_t)(k * (n + 2)));
    p->C = malloc(sizeof(double) * (size_t)(p->ldc * (n + 2)));
    p->bounds = malloc(sizeof(double) * (size_t)(2 * m + 2 * n));
    p->diffs = malloc(sizeof(double) * (size_t)(2 * m + 2 * n));
    assert_non_null(p->Aa);
    assert_non_null(p->Ba);
    assert_non_null(p->C);
    ts_fill_gaussian_d(key, p->Aa, p->lda * k, mean, sd);
    ts_fill_gaussian_d(key + 1, p->Ba, k * (n + 2), mean, sd);
    double *b = p->bounds;
    ts_burn_encode(m, n, k, p->Aa, p->lda, p->Ba, p->ldb, b, b + m, b + 2 * m, b + 2 * m + n);
    double *d = p->diffs;
    p->args = (ts_burn_check_args){.C = p->C, .ldc = p->ldc, .m = m, .n = n, .rb = b, .rwb = b + m,
                                   .cb = b + 2 * m, .cwb = b + 2 * m + n, .rd = d, .rwd = d + m,
                                   .cd = d + 2 * m, .cwd = d + 2 * m + n, .res = &p->res};
}

static void prob_gemm(prob *p, int ref) {
    const double one = 1, zero = 0;
    int64_t M = p->m + 2, N = p->n + 2;
    if (ref) ts_gemm_ref('d', 'N', 'N', M, N, p->k, &one, p->Aa, p->lda, p->Ba, p->ldb, &zero, p->C, p->ldc);
    else assert_int_equal(ts_gemm_cpu('d', 'N', 'N', M, N, p->k, &one, p->Aa, p->lda, p->Ba, p->ldb, &zero,
                                      p->C, p->ldc), 0);
}

static void prob_check(prob *p, ts_burn_location *loc) {
    assert_int_equal(ts_burn_check_cpu(&p->args), 0);
    const ts_burn_check_args *a = &p->args;
    ts_burn_locate(p->m, p->n, a->rd, a->rwd, a->cd, a->cwd, a->rb, a->rwb, a->cb, a->cwb, loc);
}

static void prob_free(prob *p) {
    free(p->Aa);
    free(p->Ba);
    free(p->C);
    free(p->bounds);
    free(p->diffs);
}

// Many random shapes and scalings (variance 25 included), both CPU engines: no line is ever
// flagged, and the normalized error shows real rounding (> 0) well inside the bound.
static void test_bound_never_flags_correct_products(void **state) {
    (void)state;
    double worst = 0;
    const double sds[] = {5.0, 1.0, 1e-3, 1e3, 1e-60, 1e60};
    const double means[] = {0.0, 0.0, 1.0, 0.0, 0.0, -2e60};
    for (int t = 0; t < 60; t++) {
        uint64_t h = ts_mix64(1000 + (uint64_t)t);
        int64_t m = 1 + (int64_t)(h % 97), n = 1 + (int64_t)((h >> 16) % 89), k = 1 + (int64_t)((h >> 32) % 211);
        if (t % 10 == 0) m = 150, n = 140, k = 400;
        int s = t % 6;
        prob p;
        prob_init(&p, m, n, k, h, means[s], sds[s]);
        prob_gemm(&p, t % 2);
        ts_burn_location loc;
        prob_check(&p, &loc);
        if (p.res.bad_rows || p.res.bad_cols || !(p.res.max_ratio <= 1.0))
            fail_msg("false alarm: %lldx%lldx%lld sd %g: %llu rows, %llu cols, ratio %g", (long long)m, (long long)n,
                     (long long)k, sds[s], p.res.bad_rows, p.res.bad_cols, p.res.max_ratio);
        assert_int_equal(loc.bad_rows, 0);
        assert_int_equal(loc.bad_cols, 0);
        assert_true(fabs(loc.ratio - p.res.max_ratio) <= 1e-12 * p.res.max_ratio);
        // The largest deviation of rounding alone is a line, never a named element.
        const ts_burn_check_args *a = &p.args;
        ts_burn_locate_worst(m, n, a->rd, a->rwd, a->cd, a->cwd, a->rb, a->rwb, a->cb, a->cwb, &loc);
        if (loc.row >= 0 && loc.col >= 0)
            fail_msg("rounding named element (%lld, %lld) of %lldx%lldx%lld", (long long)loc.row, (long long)loc.col,
                     (long long)m, (long long)n, (long long)k);
        if (p.res.max_ratio > worst) worst = p.res.max_ratio;
        prob_free(&p);
    }
    printf("# worst normalized checksum error of correct products: %.3g\n", worst);
    assert_true(worst > 1e-8);
    assert_true(worst < 0.1);
}

// One wrong element of C in host memory: exactly its row and column are flagged; the located
// (i, j) and the magnitude (the difference, = the error) match.
static void test_locates_one_element(void **state) {
    (void)state;
    prob p;
    prob_init(&p, 70, 50, 90, 77, 0.0, 5.0);
    prob_gemm(&p, 0);
    const int64_t cases[][2] = {{0, 0}, {13, 41}, {69, 49}, {35, 0}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int64_t i = cases[c][0], j = cases[c][1];
        double *x = &p.C[i + j * p.ldc], saved = *x;
        for (int sign = -1; sign <= 1; sign += 2) {
            double delta = sign * 1e4 * fmax(p.args.rb[i], p.args.cb[j]);
            *x = saved + delta;
            ts_burn_location loc;
            prob_check(&p, &loc);
            assert_int_equal(p.res.bad_rows, 1);
            assert_int_equal(p.res.bad_cols, 1);
            assert_int_equal(loc.row, i);
            assert_int_equal(loc.col, j);
            // The difference is the error up to rounding of the sums (<= the bound, 1e-4 of delta).
            assert_true(fabs(loc.magnitude - delta) <= 2e-4 * fabs(delta));
            assert_true(loc.ratio > 1e3);
        }
        *x = saved;
    }
    // Just above the bound: flagged; far below it: invisible (the check's stated blind spot).
    {
        int64_t i = 20, j = 30;
        double b = fmax(fmax(p.args.rb[i], p.args.cb[j]), fmax(p.args.rwb[i] / (j + 1), p.args.cwb[j] / (i + 1)));
        double saved = p.C[i + j * p.ldc];
        p.C[i + j * p.ldc] = saved + 2.5 * b;
        ts_burn_location loc;
        prob_check(&p, &loc);
        assert_true(p.res.bad_rows + p.res.bad_cols >= 1);
        p.C[i + j * p.ldc] = saved + 1e-3 * fmin(p.args.rb[i], p.args.cb[j]);
        prob_check(&p, &loc);
        assert_int_equal(p.res.bad_rows + p.res.bad_cols, 0);
        p.C[i + j * p.ldc] = NAN;
        prob_check(&p, &loc);
        assert_int_equal(p.res.bad_rows, 1);
        assert_int_equal(p.res.bad_cols, 1);
        assert_true(isinf(p.res.max_ratio));
        p.C[i + j * p.ldc] = saved;
    }
    // A wrong checksum element: located on the checksum row (m) or column (n + 1).
    {
        double *x = &p.C[p.m + 7 * p.ldc], saved = *x;
        *x += 1e6;
        ts_burn_location loc;
        prob_check(&p, &loc);
        assert_int_equal(p.res.bad_rows, 0);
        assert_int_equal(p.res.bad_cols, 1);
        assert_int_equal(loc.row, p.m);
        assert_int_equal(loc.col, 7);
        assert_true(fabs(loc.magnitude + 1e6) <= 1e-3 * 1e6);
        *x = saved;
        x = &p.C[11 + (p.n + 1) * p.ldc];
        saved = *x;
        *x -= 1e6;
        prob_check(&p, &loc);
        assert_int_equal(p.res.bad_rows, 1);
        assert_int_equal(p.res.bad_cols, 0);
        assert_int_equal(loc.row, 11);
        assert_int_equal(loc.col, p.n + 1);
        *x = saved;
    }
    prob_free(&p);
}

// A corrupted operand after encoding (as a flipped bit in the copy of A or B would be): a whole row
// (column) of C is wrong; the weighted checksums still name it.
static void test_corrupted_operands(void **state) {
    (void)state;
    prob p;
    prob_init(&p, 60, 40, 50, 5, 0.0, 5.0);
    p.Aa[17 + 9 * p.lda] *= 65536.0;
    prob_gemm(&p, 0);
    ts_burn_location loc;
    prob_check(&p, &loc);
    assert_int_equal(p.res.bad_rows, 0);
    assert_int_equal(p.res.bad_cols, p.n);
    assert_int_equal(loc.row, 17);
    prob_free(&p);

    prob_init(&p, 60, 40, 50, 6, 0.0, 5.0);
    p.Ba[3 + 22 * p.ldb] = -p.Ba[3 + 22 * p.ldb] * 1024.0;
    prob_gemm(&p, 1);
    prob_check(&p, &loc);
    assert_int_equal(p.res.bad_rows, p.m);
    assert_int_equal(p.res.bad_cols, 0);
    assert_int_equal(loc.col, 22);
    prob_free(&p);
}

// The stated bound: tau grows like 4 (k + p) u and gamma_t is t u / (1 - t u).
static void test_tau(void **state) {
    (void)state;
    const double u = 0x1p-53;
    assert_true(fabs(ts_burn_gamma(1000) - 1000 * u / (1 - 1000 * u)) <= 1e-30);
    double t = ts_burn_tau(8192, 8190);
    assert_true(t >= 4.0 * (8192 + 8192) * u && t <= 4.0 * (8192 + 8192) * u * 1.0001);
}

// The same check on a simulated device through its stream (the path burn runs).
static void test_check_on_sim_device(void **state) {
    (void)state;
    ts_devset_opts o;
    assert_int_equal(ts_devset_opts_init(&o), 0);
    o.backend = TS_BACKEND_SIM;
    o.sim_devices = 1;
    memset(&o.faults, 0, sizeof o.faults);
    ts_devset *set;
    assert_int_equal(ts_devset_open(&o, &set), 0);
    ts_device *dev = ts_devset_device(set, 0);
    ts_stream *st;
    assert_int_equal(ts_stream_create(dev, &st), 0);
    prob p;
    prob_init(&p, 30, 20, 40, 9, 0.0, 5.0);
    prob_gemm(&p, 0);
    p.C[4 + 6 * p.ldc] += 1e5;
    size_t cbytes = sizeof(double) * (size_t)(p.ldc * (p.n + 2)), vb = sizeof(double) * (size_t)(2 * p.m + 2 * p.n);
    double *dC, *db, *dd;
    ts_burn_check_result *dres, hres;
    assert_int_equal(ts_dmalloc(dev, cbytes, (void **)&dC), 0);
    assert_int_equal(ts_dmalloc(dev, vb, (void **)&db), 0);
    assert_int_equal(ts_dmalloc(dev, vb, (void **)&dd), 0);
    assert_int_equal(ts_dmalloc(dev, sizeof hres, (void **)&dres), 0);
    assert_int_equal(ts_copy_async(st, TS_COPY_H2D, dC, p.C, cbytes), 0);
    assert_int_equal(ts_copy_async(st, TS_COPY_H2D, db, p.bounds, vb), 0);
    int64_t m = p.m, n = p.n;
    ts_burn_check_args a = {.C = dC, .ldc = p.ldc, .m = m, .n = n, .rb = db, .rwb = db + m, .cb = db + 2 * m,
                            .cwb = db + 2 * m + n, .rd = dd, .rwd = dd + m, .cd = dd + 2 * m, .cwd = dd + 2 * m + n,
                            .res = dres};
    assert_int_equal(ts_burn_check(st, &a), 0);
    assert_int_equal(ts_copy_async(st, TS_COPY_D2H, &hres, dres, sizeof hres), 0);
    assert_int_equal(ts_copy_async(st, TS_COPY_D2H, p.diffs, dd, vb), 0);
    assert_int_equal(ts_stream_sync(st), 0);
    assert_int_equal(hres.bad_rows, 1);
    assert_int_equal(hres.bad_cols, 1);
    ts_burn_location loc;
    ts_burn_locate(m, n, p.diffs, p.diffs + m, p.diffs + 2 * m, p.diffs + 2 * m + n, p.bounds, p.bounds + m,
                   p.bounds + 2 * m, p.bounds + 2 * m + n, &loc);
    assert_int_equal(loc.row, 4);
    assert_int_equal(loc.col, 6);
    assert_true(fabs(loc.magnitude - 1e5) <= 1e-6 * 1e5);
    ts_burn_check_args bad = a;
    bad.ldc = m; // too small
    assert_int_equal(ts_burn_check(st, &bad), TS_ERR_ARG);
    ts_dfree(dev, dC);
    ts_dfree(dev, db);
    ts_dfree(dev, dd);
    ts_dfree(dev, dres);
    ts_stream_destroy(st);
    ts_devset_close(set);
    prob_free(&p);
}

// The element threshold: an error in element (i, j) is seen once it exceeds the smallest of its four
// bounds over their weights (T_ij), by the rounding already on those lines (rho x bound) at most;
// every element off by more than the largest T_ij (times 1 + rho) is caught.
static void test_element_threshold(void **state) {
    (void)state;
    prob p;
    prob_init(&p, 94, 94, 96, 21, 0.0, 5.0);
    prob_gemm(&p, 1);
    ts_burn_location loc;
    prob_check(&p, &loc);
    double rho = p.res.max_ratio, lo, hi;
    assert_true(rho > 0 && rho < 0.01);
    const ts_burn_check_args *a = &p.args;
    hi = ts_burn_element_threshold(p.m, p.n, a->rb, a->rwb, a->cb, a->cwb, &lo);
    assert_true(lo > 0 && lo <= hi);
    printf("# N=96, variance 25: element thresholds %.3g to %.3g, rounding %.3g of the bound\n", lo, hi, rho);
    int64_t hi_i = -1, hi_j = -1;
    for (int64_t j = 0; j < p.n; j++)
        for (int64_t i = 0; i < p.m; i++) {
            double t = fmin(fmin(a->rb[i], a->rwb[i] / (double)(j + 1)), fmin(a->cb[j], a->cwb[j] / (double)(i + 1)));
            if (t == hi) hi_i = i, hi_j = j;
        }
    assert_true(hi_i >= 0);
    for (int c = 0; c < 40; c++) {
        uint64_t h = ts_mix64(500 + (uint64_t)c);
        int64_t i = c ? (int64_t)(h % (uint64_t)p.m) : hi_i, j = c ? (int64_t)((h >> 20) % (uint64_t)p.n) : hi_j;
        double t = fmin(fmin(a->rb[i], a->rwb[i] / (double)(j + 1)), fmin(a->cb[j], a->cwb[j] / (double)(i + 1)));
        assert_true(t >= lo && t <= hi);
        double *x = &p.C[i + j * p.ldc], saved = *x, sign = (h >> 40) & 1 ? 1.0 : -1.0;
        *x = saved + sign * 1.02 * (1 + rho) * t; // just above: caught, at (i, j)
        prob_check(&p, &loc);
        if (p.res.bad_rows + p.res.bad_cols == 0)
            fail_msg("(%lld, %lld) off by %.3g (threshold %.3g) was not caught", (long long)i, (long long)j,
                     1.02 * (1 + rho) * t, t);
        assert_true(loc.row == i || loc.col == j);
        *x = saved + sign * 0.98 * (1 - rho) * t; // just below: within rounding
        prob_check(&p, &loc);
        assert_int_equal(p.res.bad_rows + p.res.bad_cols, 0);
        assert_true(p.res.max_ratio <= 1.0);
        *x = saved + sign * 1.02 * (1 + rho) * hi; // above the largest threshold: caught anywhere
        prob_check(&p, &loc);
        assert_true(p.res.bad_rows + p.res.bad_cols >= 1);
        *x = saved;
    }
    prob_free(&p);
}

// The largest deviation of a passing check is located: a wrong element below its threshold shows on
// its row or column, and the weighted difference names the other coordinate.
static void test_locate_worst(void **state) {
    (void)state;
    prob p;
    prob_init(&p, 70, 50, 90, 31, 0.0, 5.0);
    prob_gemm(&p, 1);
    ts_burn_location loc;
    prob_check(&p, &loc);
    const ts_burn_check_args *a = &p.args;
    ts_burn_locate_worst(p.m, p.n, a->rd, a->rwd, a->cd, a->cwd, a->rb, a->rwb, a->cb, a->cwb, &loc);
    assert_true(fabs(loc.ratio - p.res.max_ratio) <= 1e-12 * p.res.max_ratio);
    assert_true(loc.row >= 0 || loc.col >= 0);
    assert_int_equal(loc.bad_rows + loc.bad_cols, 0);
    const int64_t cases[][2] = {{12, 33}, {0, 0}, {69, 49}, {40, 7}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int64_t i = cases[c][0], j = cases[c][1];
        double t = fmin(fmin(a->rb[i], a->rwb[i] / (double)(j + 1)), fmin(a->cb[j], a->cwb[j] / (double)(i + 1)));
        double *x = &p.C[i + j * p.ldc], saved = *x;
        *x = saved - 0.5 * t;
        prob_check(&p, &loc);
        assert_int_equal(p.res.bad_rows + p.res.bad_cols, 0);
        ts_burn_locate_worst(p.m, p.n, a->rd, a->rwd, a->cd, a->cwd, a->rb, a->rwb, a->cb, a->cwb, &loc);
        assert_int_equal(loc.row, i);
        assert_int_equal(loc.col, j);
        assert_true(loc.ratio > 0.45 && loc.ratio <= 0.55);
        assert_true(fabs(loc.magnitude + 0.5 * t) <= 0.05 * t);
        *x = saved;
    }
    prob_free(&p);
}

// Flips a bit of a double as the simulated devices do (bit 0-51 mantissa, 52-62 exponent, 63 sign).
static double flipped(double x, int bit) {
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    u ^= 1ull << bit;
    memcpy(&x, &u, sizeof x);
    return x;
}

// Every bit of elements of A and B (burn's sizes at N=96) flipped after encoding, as a flipped copy
// of an operand is: the check must catch the flip when, by its bounds, some line's difference exceeds
// the bound by more than the rounding on it (an element (i, l) of A off by e changes column j of C by
// e B_lj, weighted (i+1) e B_lj; an element (l, j) of B row i by e A_il, weighted (j+1) e A_il), and
// must stay silent when every line stays below the bound by as much. Nothing falls in between here.
static void test_operand_flips_against_the_bound(void **state) {
    (void)state;
    prob p;
    prob_init(&p, 94, 94, 96, 41, 0.0, 5.0);
    prob_gemm(&p, 1);
    ts_burn_location loc;
    prob_check(&p, &loc);
    double rho = p.res.max_ratio;
    const ts_burn_check_args *a = &p.args;
    int lowest_caught[2] = {64, 64}, highest_missed[2] = {-1, -1};
    for (int op = 0; op < 2; op++)
        for (int c = 0; c < 4; c++) {
            uint64_t h = ts_mix64(900 + (uint64_t)(10 * op + c));
            int64_t r = (int64_t)(h % 94), q = (int64_t)((h >> 20) % 96); // A(r, q) or B(q, r)
            double *x = op == 0 ? &p.Aa[r + q * p.lda] : &p.Ba[q + r * p.ldb], saved = *x;
            for (int bit = 0; bit < 64; bit++) {
                *x = flipped(saved, bit);
                double e = *x - saved;
                int must = !isfinite(e), never = isfinite(e);
                for (int64_t t = 0; t < 94 && isfinite(e); t++) {
                    // op 0: column t sees e B(q, t), weight r + 1; op 1: row t sees e A(t, q), weight r + 1.
                    double v = fabs(e * (op == 0 ? p.Ba[q + t * p.ldb] : p.Aa[t + q * p.lda]));
                    double b = op == 0 ? a->cb[t] : a->rb[t], bw = op == 0 ? a->cwb[t] : a->rwb[t];
                    double w = (double)(r + 1);
                    if (v > (1 + rho) * b || w * v > (1 + rho) * bw) must = 1;
                    if (!(v < (1 - rho) * b && w * v < (1 - rho) * bw)) never = 0;
                }
                assert_true(must || never);
                prob_gemm(&p, 1);
                prob_check(&p, &loc);
                int flagged = p.res.bad_rows + p.res.bad_cols > 0;
                if (must && !flagged)
                    fail_msg("%c(%lld, %lld) bit %d (off by %.3g) not caught", op ? 'B' : 'A', (long long)(op ? q : r),
                             (long long)(op ? r : q), bit, e);
                if (never && flagged)
                    fail_msg("%c bit %d (off by %.3g) flagged below the bound", op ? 'B' : 'A', bit, e);
                if (flagged && isfinite(e)) { // located: the row of A, the column of B
                    if (op == 0) assert_int_equal(loc.row, r);
                    else assert_int_equal(loc.col, r);
                }
                if (flagged && bit < lowest_caught[op]) lowest_caught[op] = bit;
                if (!flagged && bit > highest_missed[op]) highest_missed[op] = bit;
            }
            *x = saved;
        }
    printf("# N=96: lowest caught mantissa bit A %d, B %d; highest missed A %d, B %d\n", lowest_caught[0],
           lowest_caught[1], highest_missed[0], highest_missed[1]);
    // The exponent and sign bits are always caught; the lowest mantissa bits never.
    assert_true(highest_missed[0] < 52 && highest_missed[1] < 52);
    assert_true(lowest_caught[0] > 8 && lowest_caught[1] > 8);
    prob_free(&p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bound_never_flags_correct_products),
        cmocka_unit_test(test_locates_one_element),
        cmocka_unit_test(test_corrupted_operands),
        cmocka_unit_test(test_tau),
        cmocka_unit_test(test_check_on_sim_device),
        cmocka_unit_test(test_element_threshold),
        cmocka_unit_test(test_locate_worst),
        cmocka_unit_test(test_operand_flips_against_the_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
