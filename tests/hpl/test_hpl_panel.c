// test_hpl_panel.c: HPL's recursive device panel (ts_lu_panel_*): the CPU twin against an unblocked partial-pivoting LU, zero pivots, the sim-device path.
//
// Bound: with the same pivots, two LU factorizations of the same panel differ only by rounding in a
// different order of the same sums. Each entry of L or U is a sum of at most n products whose size
// is bounded by max|F| (|L| <= 1), so the difference is at most about n * eps * max|F| per entry;
// the tests require max|F - F_ref| <= TOL * n * eps * max(1, max|F_ref|) with TOL = 8 (random
// panels give 0.3 to 1.1 at the worst shape here, 130 x 128).
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ts_error.h"
#include "core/ts_rng.h"
#include "device/ts_device.h"
#include "kernels/ts_lu_kernels.h"
#include "swap_plan_util.h"

#define TOL 8.0

// LAPACK dgetf2 as written in the textbook: column k, first max |a|, full-row swap, scale, rank-1.
static void lu_unblocked(int64_t m, int64_t n, double *A, int64_t lda, int *ipiv, int *info) {
    *info = 0;
    for (int64_t k = 0; k < n; k++) {
        int64_t p = k;
        for (int64_t i = k + 1; i < m; i++)
            if (fabs(A[i + k * lda]) > fabs(A[p + k * lda])) p = i;
        ipiv[k] = (int)(p + 1);
        if (p != k)
            for (int64_t c = 0; c < n; c++) {
                double t = A[k + c * lda];
                A[k + c * lda] = A[p + c * lda];
                A[p + c * lda] = t;
            }
        double piv = A[k + k * lda];
        if (piv == 0.0) {
            if (*info == 0) *info = (int)(k + 1);
            continue;
        }
        for (int64_t i = k + 1; i < m; i++) A[i + k * lda] /= piv;
        for (int64_t c = k + 1; c < n; c++)
            for (int64_t i = k + 1; i < m; i++) A[i + c * lda] -= A[i + k * lda] * A[k + c * lda];
    }
}

static double *random_panel(uint64_t key, int64_t m, int64_t n, int64_t lda) {
    double *A = malloc(sizeof(double) * (size_t)(lda * n));
    assert_non_null(A);
    for (int64_t c = 0; c < n; c++) {
        ts_fill_uniform_d(key * 1000003u + (uint64_t)c, A + c * lda, m);
        for (int64_t i = m; i < lda; i++) A[i + c * lda] = 1e300; // padding: never read
    }
    return A;
}

// max|F - R| / (n eps max(1, max|R|)) over the m x n panels.
static double scaled_diff(int64_t m, int64_t n, const double *F, const double *R, int64_t lda) {
    double d = 0.0, big = 1.0;
    for (int64_t c = 0; c < n; c++)
        for (int64_t i = 0; i < m; i++) {
            double e = fabs(F[i + c * lda] - R[i + c * lda]);
            if (!(e <= d)) d = e; // NaN propagates
            if (fabs(R[i + c * lda]) > big) big = fabs(R[i + c * lda]);
        }
    return d / ((double)n * DBL_EPSILON * big);
}

static void check_against_ref(const ts_lu_panel_algo *a, int64_t m, int64_t n, uint64_t key) {
    int64_t lda = m + 3;
    double *A = random_panel(key, m, n, lda);
    double *R = malloc(sizeof(double) * (size_t)(lda * n));
    int *ip = malloc(sizeof(int) * (size_t)n), *ipr = malloc(sizeof(int) * (size_t)n);
    assert_true(R && ip && ipr);
    memcpy(R, A, sizeof(double) * (size_t)(lda * n));
    int info = -1, infor = -1;
    ts_lu_panel_host(a, m, n, A, lda, ip, &info);
    lu_unblocked(m, n, R, lda, ipr, &infor);
    assert_int_equal(info, 0);
    assert_int_equal(infor, 0);
    for (int64_t k = 0; k < n; k++)
        if (ip[k] != ipr[k])
            fail_msg("m=%lld n=%lld pfact=%d rfact=%d nbmin=%d ndiv=%d: pivot %lld is %d, reference %d",
                     (long long)m, (long long)n, a->pfact, a->rfact, a->nbmin, a->ndiv, (long long)k, ip[k], ipr[k]);
    double e = scaled_diff(m, n, A, R, lda);
    if (!(e <= TOL))
        fail_msg("m=%lld n=%lld pfact=%d rfact=%d nbmin=%d ndiv=%d: scaled difference %g > %g", (long long)m,
                 (long long)n, a->pfact, a->rfact, a->nbmin, a->ndiv, e, TOL);
    for (int64_t c = 0; c < n; c++) // padding untouched
        for (int64_t i = m; i < lda; i++) assert_true(A[i + c * lda] == 1e300);
    free(A);
    free(R);
    free(ip);
    free(ipr);
}

// Every PFACT x RFACT, several NBMIN (one beyond the leaf cap) and NDIV, on awkward shapes.
static void test_twin_matches_unblocked(void **state) {
    static const int64_t shapes[][2] = {{1, 1}, {2, 2}, {5, 3}, {64, 16}, {97, 33}, {200, 64}, {130, 128}, {301, 100}};
    static const int nbmins[] = {1, 4, 8, 100};
    uint64_t key = 1;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int pf = 0; pf < 3; pf++)
            for (int rf = 0; rf < 3; rf++)
                for (size_t b = 0; b < sizeof nbmins / sizeof nbmins[0]; b++)
                    for (int ndiv = 2; ndiv <= 4; ndiv++) {
                        ts_lu_panel_algo a = {pf, rf, nbmins[b], ndiv, 0};
                        check_against_ref(&a, shapes[s][0], shapes[s][1], key++);
                    }
}

// A zero column: info names the first one (1-based), the factorization goes on, and the pivots
// and factors still match the unblocked LU.
static void test_twin_zero_pivot(void **state) {
    const int64_t m = 90, n = 40, lda = 90;
    for (int pf = 0; pf < 3; pf++)
        for (int rf = 0; rf < 3; rf++) {
            double *A = random_panel(77, m, n, lda);
            double *R = malloc(sizeof(double) * (size_t)(lda * n));
            int ip[40], ipr[40], info = -1, infor = -1;
            assert_non_null(R);
            for (int64_t i = 0; i < m; i++) A[i + 13 * lda] = A[i + 29 * lda] = 0.0;
            memcpy(R, A, sizeof(double) * (size_t)(lda * n));
            ts_lu_panel_algo a = {pf, rf, 4, 2, 0};
            ts_lu_panel_host(&a, m, n, A, lda, ip, &info);
            lu_unblocked(m, n, R, lda, ipr, &infor);
            assert_int_equal(infor, 14);
            assert_int_equal(info, 14);
            for (int k = 0; k < n; k++) assert_int_equal(ip[k], ipr[k]);
            assert_true(scaled_diff(m, n, A, R, lda) <= TOL);
            free(A);
            free(R);
        }
}

// A singular panel whose zero pivot appears only after elimination: rows 0..1 span columns 0..2.
static void test_twin_rank_deficient(void **state) {
    const int64_t m = 6, n = 3;
    // Column 2 = column 0 + column 1, pivots 4 and 2: every elimination is exact.
    const double A0[18] = {4, 2, 1, 3, 0, 1, /**/ 0, 2, 1, -1, 1, 0.5, /**/ 4, 4, 2, 2, 1, 1.5};
    for (int pf = 0; pf < 3; pf++)
        for (int rf = 0; rf < 3; rf++) {
            double A[18];
            memcpy(A, A0, sizeof A);
            int ip[3], info = -1;
            ts_lu_panel_algo a = {pf, rf, 1 + pf, 2, 0};
            ts_lu_panel_host(&a, m, n, A, m, ip, &info);
            assert_int_equal(info, 3);
            assert_int_equal(ip[0], 1);
            assert_int_equal(ip[1], 2);
            assert_int_equal(ip[2], 3); // all zero: the first row stays
            assert_true(A[2 + 2 * m] == 0.0);
        }
}

// One simulated device (64 MB arena) and a stream on it, for the tests below.
static void sim_open(ts_devset **set, ts_device **d, ts_stream **st) {
    ts_devset_opts o;
    assert_int_equal(ts_devset_opts_init(&o), 0);
    o.backend = TS_BACKEND_SIM;
    o.sim_devices = 1;
    o.arena_bytes = (size_t)64 << 20;
    assert_int_equal(ts_devset_open(&o, set), 0);
    *d = ts_devset_device(*set, 0);
    assert_int_equal(ts_stream_create(*d, st), 0);
}

// The same factorization through a simulated device's stream (ts_lu_panel_factor: the recursion's
// DTRSM/GEMM on the device, ts_lu_leaf_cpu as the leaf kernel) equals the host twin within the bound.
static void test_sim_device_path(void **state) {
    ts_devset *set = NULL;
    ts_device *d = NULL;
    ts_stream *st = NULL;
    sim_open(&set, &d, &st);
    ts_lu_panel *pn = NULL;
    assert_int_equal(ts_lu_panel_create(st, TS_ENGINE_AUTO, 1000, &pn), 0);
    static const int64_t shapes[][2] = {{33, 33}, {300, 96}, {1000, 64}};
    for (size_t s = 0; s < 3; s++)
        for (int pf = 0; pf < 3; pf++) {
            int64_t m = shapes[s][0], n = shapes[s][1], lda = m + 5;
            ts_lu_panel_algo a = {pf, (pf + (int)s) % 3, 8, 2 + (int)s % 2, 0};
            double *H = random_panel(100 + s, m, n, lda), *X = NULL;
            double *B = malloc(sizeof(double) * (size_t)(lda * n));
            int *dp = NULL, hp[128], dpiv[129];
            assert_non_null(B);
            assert_int_equal(ts_dmalloc(d, sizeof(double) * (size_t)(lda * n), (void **)&X), 0);
            assert_int_equal(ts_dmalloc(d, sizeof(int) * 129, (void **)&dp), 0);
            assert_int_equal(ts_copy_async(st, TS_COPY_H2D, X, H, sizeof(double) * (size_t)(lda * n)), 0);
            assert_int_equal(ts_lu_panel_factor(st, pn, &a, m, n, X, lda, dp, dp + n), 0);
            assert_int_equal(ts_copy_async(st, TS_COPY_D2H, B, X, sizeof(double) * (size_t)(lda * n)), 0);
            assert_int_equal(ts_copy_async(st, TS_COPY_D2H, dpiv, dp, sizeof(int) * (size_t)(n + 1)), 0);
            assert_int_equal(ts_stream_sync(st), 0);
            int info = -1;
            ts_lu_panel_host(&a, m, n, H, lda, hp, &info);
            assert_int_equal(info, 0);
            assert_int_equal(dpiv[n], 0);
            for (int64_t k = 0; k < n; k++) assert_int_equal(dpiv[k], hp[k]);
            assert_true(scaled_diff(m, n, B, H, lda) <= TOL);
            ts_dfree(d, X);
            ts_dfree(d, dp);
            free(H);
            free(B);
        }
    // arguments: m < n is refused
    double *X = NULL;
    int *dp = NULL;
    assert_int_equal(ts_dmalloc(d, 64 * sizeof(double), (void **)&X), 0);
    assert_int_equal(ts_dmalloc(d, 64 * sizeof(int), (void **)&dp), 0);
    ts_lu_panel_algo a = {2, 2, 4, 2, 0};
    assert_int_equal(ts_lu_panel_factor(st, pn, &a, 4, 8, X, 8, dp, dp + 8), TS_ERR_ARG);
    ts_lu_panel_algo bad = {3, 2, 4, 2, 0};
    assert_int_equal(ts_lu_panel_factor(st, pn, &bad, 8, 4, X, 8, dp, dp + 8), TS_ERR_ARG);
    ts_lu_panel_algo bad_grid = {2, 2, 4, 2, -1};
    assert_int_equal(ts_lu_panel_factor(st, pn, &bad_grid, 8, 4, X, 8, dp, dp + 8), TS_ERR_ARG);
    ts_error_clear();
    ts_dfree(d, X);
    ts_dfree(d, dp);
    ts_lu_panel_destroy(pn);
    ts_stream_destroy(st);
    ts_devset_close(set);
}

// The swap tests' shapes (rows mp, pivots jb, columns nc), both layouts; nc = 1 and jb = 1 among them.
static const int64_t swap_cases[][3] = {{1, 1, 1}, {40, 1, 3}, {50, 8, 1}, {300, 64, 37}, {1000, 100, 250}, {130, 128, 9}};

// One panel's row interchanges on a simulated device: ts_lu_swap_rows (one pass) and the split
// form (ts_lu_pack_rows, then U's rows and A's changed rows by ts_lu_unpack_rows) both give exactly
// the pivots applied one by one (a data movement: equality, not a bound); the diagonal block's rows
// of A are left as they were (U goes to its own buffer); nc = 1 and jb = 1 included; a plan too big
// for a block's shared memory is refused.
static void test_swap_rows_sim(void **state) {
    ts_devset *set = NULL;
    ts_device *d = NULL;
    ts_stream *st = NULL;
    sim_open(&set, &d, &st);
    for (size_t k = 0; k < sizeof swap_cases / sizeof swap_cases[0]; k++) {
        int64_t mp = swap_cases[k][0], jb = swap_cases[k][1], nc = swap_cases[k][2], lda = mp + 3, ldu = jb + 2;
        swap_plan pl;
        assert_int_equal(swap_plan_make(1234 + k, mp, jb, (int)(k % 2), &pl), 0);
        double *A = random_panel(500 + k, mp, nc, lda);
        double *R = malloc(sizeof(double) * (size_t)(lda * nc)), *RU = calloc((size_t)(ldu * nc), sizeof(double));
        double *B = malloc(sizeof(double) * (size_t)(lda * nc)), *BU = malloc(sizeof(double) * (size_t)(ldu * nc));
        assert_true(R && RU && B && BU);
        swap_plan_ref(&pl, A, lda, nc, R, RU, ldu);
        size_t ab = sizeof(double) * (size_t)(lda * nc), ub = sizeof(double) * (size_t)(ldu * nc);
        double *X = NULL, *XU = NULL, *scr = NULL;
        int64_t *xi = NULL, *uid = NULL;
        assert_int_equal(ts_dmalloc(d, ab, (void **)&X), 0);
        assert_int_equal(ts_dmalloc(d, ub, (void **)&XU), 0);
        assert_int_equal(ts_dmalloc(d, sizeof(double) * (size_t)(pl.npack * nc), (void **)&scr), 0);
        assert_int_equal(ts_dmalloc(d, sizeof(int64_t) * (size_t)(pl.npack + jb + 3 * pl.nown + jb), (void **)&xi), 0);
        int64_t *xpk = xi, *xub = xpk + pl.npack, *xal = xub + jb, *xab = xal + pl.nown;
        uid = xab + pl.nown;
        int64_t *hid = malloc(sizeof(int64_t) * (size_t)jb);
        assert_non_null(hid);
        for (int64_t i = 0; i < jb; i++) hid[i] = i;
        assert_int_equal(ts_copy_async(st, TS_COPY_H2D, xpk, pl.pk, sizeof(int64_t) * (size_t)pl.npack), 0);
        assert_int_equal(ts_copy_async(st, TS_COPY_H2D, xub, pl.ub, sizeof(int64_t) * (size_t)jb), 0);
        if (pl.nown) {
            assert_int_equal(ts_copy_async(st, TS_COPY_H2D, xal, pl.al, sizeof(int64_t) * (size_t)pl.nown), 0);
            assert_int_equal(ts_copy_async(st, TS_COPY_H2D, xab, pl.ab, sizeof(int64_t) * (size_t)pl.nown), 0);
        }
        assert_int_equal(ts_copy_async(st, TS_COPY_H2D, uid, hid, sizeof(int64_t) * (size_t)jb), 0);
        for (int split = 0; split < 2; split++) {
            for (int64_t i = 0; i < ldu * nc; i++) BU[i] = -7.5; // poison U
            assert_int_equal(ts_copy_async(st, TS_COPY_H2D, X, A, ab), 0);
            assert_int_equal(ts_copy_async(st, TS_COPY_H2D, XU, BU, ub), 0);
            if (!split) {
                assert_true(ts_lu_swap_rows_fits(pl.npack, jb, pl.nown, lda));
                assert_int_equal(ts_lu_swap_rows(st, X, lda, xpk, pl.npack, xub, jb, XU, ldu, xal, xab, pl.nown, nc), 0);
            } else {
                assert_int_equal(ts_lu_pack_rows(st, X, lda, xpk, pl.npack, nc, scr), 0);
                assert_int_equal(ts_lu_unpack_rows(st, scr, xub, jb, nc, XU, ldu, uid), 0);
                assert_int_equal(ts_lu_unpack_rows(st, scr, xab, pl.nown, nc, X, lda, xal), 0);
            }
            assert_int_equal(ts_copy_async(st, TS_COPY_D2H, B, X, ab), 0);
            assert_int_equal(ts_copy_async(st, TS_COPY_D2H, BU, XU, ub), 0);
            assert_int_equal(ts_stream_sync(st), 0);
            for (int64_t c = 0; c < nc; c++) {
                for (int64_t i = 0; i < jb; i++)
                    if (BU[i + c * ldu] != RU[i + c * ldu])
                        fail_msg("case %zu %s: U(%lld, %lld) = %g, dlaswp %g", k, split ? "split" : "fused", (long long)i,
                                 (long long)c, BU[i + c * ldu], RU[i + c * ldu]);
                for (int64_t i = jb; i < ldu; i++) assert_true(BU[i + c * ldu] == -7.5); // U's padding
                for (int64_t i = 0; i < lda; i++) {
                    double want = i < jb || i >= mp ? A[i + c * lda] : R[i + c * lda];
                    if (B[i + c * lda] != want)
                        fail_msg("case %zu %s: A(%lld, %lld) = %g, want %g", k, split ? "split" : "fused", (long long)i,
                                 (long long)c, B[i + c * lda], want);
                }
            }
        }
        ts_dfree(d, X);
        ts_dfree(d, XU);
        ts_dfree(d, scr);
        ts_dfree(d, xi);
        free(hid);
        free(A);
        free(R);
        free(RU);
        free(B);
        free(BU);
        swap_plan_free(&pl);
    }
    // a plan beyond a block's shared memory: refused (HPL then takes the split form)
    assert_false(ts_lu_swap_rows_fits(40000, 20000, 20000, 100000));
    double *X = NULL;
    int64_t *xi = NULL;
    assert_int_equal(ts_dmalloc(d, 64 * sizeof(double), (void **)&X), 0);
    assert_int_equal(ts_dmalloc(d, 64 * sizeof(int64_t), (void **)&xi), 0);
    assert_int_equal(ts_lu_swap_rows(st, X, 100000, xi, 40000, xi, 20000, X, 20000, xi, xi, 20000, 1), TS_ERR_UNSUPPORTED);
    assert_int_equal(ts_lu_swap_rows(st, X, 8, xi, 4, xi, 4, X, 2, xi, xi, 0, 1), TS_ERR_ARG); // ldu < jb
    ts_error_clear();
    ts_dfree(d, X);
    ts_dfree(d, xi);
    ts_stream_destroy(st);
    ts_devset_close(set);
}

// Rows of transposed storage between buffers (ts_lu_copy_cols, the exchange of the transposed layout
// on several process rows) on a simulated device: columns sidx of S into columns didx of D, or into
// D's first columns when didx is NULL; exact, the other columns and the padding untouched; n = 0
// enqueues nothing, a leading dimension below nc is refused.
static void test_copy_cols_sim(void **state) {
    (void)state;
    ts_devset *set = NULL;
    ts_device *d = NULL;
    ts_stream *st = NULL;
    sim_open(&set, &d, &st);
    const int64_t ns = 40, nd = 30, nc = 37, lds = 41, ldd = 39, n = 12;
    const int64_t sidx[12] = {39, 0, 7, 8, 21, 3, 38, 12, 5, 30, 1, 17};
    const int64_t didx[12] = {29, 4, 0, 11, 28, 6, 2, 19, 13, 1, 25, 9};
    double *S = random_panel(91, lds, ns, lds), *D = malloc(sizeof(double) * (size_t)(ldd * nd)),
           *R = malloc(sizeof(double) * (size_t)(ldd * nd));
    assert_true(D && R);
    double *XS = NULL, *XD = NULL;
    int64_t *xi = NULL;
    assert_int_equal(ts_dmalloc(d, sizeof(double) * (size_t)(lds * ns), (void **)&XS), 0);
    assert_int_equal(ts_dmalloc(d, sizeof(double) * (size_t)(ldd * nd), (void **)&XD), 0);
    assert_int_equal(ts_dmalloc(d, sizeof(int64_t) * 24, (void **)&xi), 0);
    assert_int_equal(ts_copy_async(st, TS_COPY_H2D, XS, S, sizeof(double) * (size_t)(lds * ns)), 0);
    assert_int_equal(ts_copy_async(st, TS_COPY_H2D, xi, sidx, sizeof sidx), 0);
    assert_int_equal(ts_copy_async(st, TS_COPY_H2D, xi + 12, didx, sizeof didx), 0);
    for (int scatter = 0; scatter < 2; scatter++) {
        for (int64_t i = 0; i < ldd * nd; i++) D[i] = -1.5 - (double)i;
        memcpy(R, D, sizeof(double) * (size_t)(ldd * nd));
        for (int64_t e = 0; e < n; e++)
            memcpy(R + (scatter ? didx[e] : e) * ldd, S + sidx[e] * lds, sizeof(double) * (size_t)nc);
        assert_int_equal(ts_copy_async(st, TS_COPY_H2D, XD, D, sizeof(double) * (size_t)(ldd * nd)), 0);
        assert_int_equal(ts_lu_copy_cols(st, XS, lds, xi, 0, nc, XD, ldd, NULL), 0); // nothing
        assert_int_equal(ts_lu_copy_cols(st, XS, lds, xi, n, nc, XD, ldd, scatter ? xi + 12 : NULL), 0);
        assert_int_equal(ts_copy_async(st, TS_COPY_D2H, D, XD, sizeof(double) * (size_t)(ldd * nd)), 0);
        assert_int_equal(ts_stream_sync(st), 0);
        for (int64_t i = 0; i < ldd * nd; i++)
            if (D[i] != R[i]) fail_msg("scatter %d: D[%lld] = %g, want %g", scatter, (long long)i, D[i], R[i]);
    }
    assert_int_not_equal(ts_lu_copy_cols(st, XS, nc - 1, xi, n, nc, XD, ldd, NULL), 0);
    ts_error_clear();
    ts_dfree(d, XS);
    ts_dfree(d, XD);
    ts_dfree(d, xi);
    free(S);
    free(D);
    free(R);
    ts_stream_destroy(st);
    ts_devset_close(set);
}

// The same interchanges on transposed storage (ts_lu_swap_rows_t, the layout of TESSERA_HPL_LAYOUT=row)
// on a simulated device: At = A^T with padding (ldt > nc), Ut with padding; both equal the pivots
// applied one by one, transposed, exactly; the padding is untouched. Every random plan, with
// near pivots that make chains of interchanges inside and below the diagonal block, meets the
// kernel's condition (only old diagonal-block rows go below it: ts_lu_swap_plan_t_ok), and a plan
// that sends a row from below the block below it is recognised. ts_lu_transpose is exact on
// shapes around its 32 x 32 tiles.
static void test_swap_rows_t_sim(void **state) {
    ts_devset *set = NULL;
    ts_device *d = NULL;
    ts_stream *st = NULL;
    sim_open(&set, &d, &st);
    for (size_t k = 0; k < sizeof swap_cases / sizeof swap_cases[0]; k++) {
        for (int near = 0; near < 2; near++) {
            int64_t mp = swap_cases[k][0], jb = swap_cases[k][1], nc = swap_cases[k][2], lda = mp + 3, ldu = jb;
            int64_t ldt = nc + 2, ldut = nc + 1;
            swap_plan pl;
            assert_int_equal(swap_plan_make(4321 + 7 * k + (uint64_t)near, mp, jb, near, &pl), 0);
            assert_true(ts_lu_swap_plan_t_ok(pl.pk, pl.al, pl.ab, pl.nown));
            double *A = random_panel(700 + k, mp, nc, lda);
            double *R = malloc(sizeof(double) * (size_t)(lda * nc)), *RU = calloc((size_t)(ldu * nc), sizeof(double));
            double *At = malloc(sizeof(double) * (size_t)(ldt * mp)), *Bt = malloc(sizeof(double) * (size_t)(ldt * mp));
            double *Ut = malloc(sizeof(double) * (size_t)(ldut * jb));
            assert_true(R && RU && At && Bt && Ut);
            swap_plan_ref(&pl, A, lda, nc, R, RU, ldu);
            for (int64_t r = 0; r < mp; r++)
                for (int64_t c = 0; c < ldt; c++) At[c + r * ldt] = c < nc ? A[r + c * lda] : -3.25; // padding
            size_t tb = sizeof(double) * (size_t)(ldt * mp), ub = sizeof(double) * (size_t)(ldut * jb);
            double *X = NULL, *XU = NULL;
            int64_t *xi = NULL;
            assert_int_equal(ts_dmalloc(d, tb, (void **)&X), 0);
            assert_int_equal(ts_dmalloc(d, ub, (void **)&XU), 0);
            assert_int_equal(ts_dmalloc(d, sizeof(int64_t) * (size_t)(pl.npack + jb + 2 * pl.nown), (void **)&xi), 0);
            int64_t *xpk = xi, *xub = xpk + pl.npack, *xal = xub + jb, *xab = xal + pl.nown;
            assert_int_equal(ts_copy_async(st, TS_COPY_H2D, xpk, pl.pk, sizeof(int64_t) * (size_t)pl.npack), 0);
            assert_int_equal(ts_copy_async(st, TS_COPY_H2D, xub, pl.ub, sizeof(int64_t) * (size_t)jb), 0);
            if (pl.nown) {
                assert_int_equal(ts_copy_async(st, TS_COPY_H2D, xal, pl.al, sizeof(int64_t) * (size_t)pl.nown), 0);
                assert_int_equal(ts_copy_async(st, TS_COPY_H2D, xab, pl.ab, sizeof(int64_t) * (size_t)pl.nown), 0);
            }
            for (int64_t i = 0; i < ldut * jb; i++) Ut[i] = -7.5; // poison
            assert_int_equal(ts_copy_async(st, TS_COPY_H2D, X, At, tb), 0);
            assert_int_equal(ts_copy_async(st, TS_COPY_H2D, XU, Ut, ub), 0);
            assert_int_equal(ts_lu_swap_rows_t(st, X, ldt, xpk, xub, jb, XU, ldut, xal, xab, pl.nown, nc), 0);
            assert_int_equal(ts_copy_async(st, TS_COPY_D2H, Bt, X, tb), 0);
            assert_int_equal(ts_copy_async(st, TS_COPY_D2H, Ut, XU, ub), 0);
            assert_int_equal(ts_stream_sync(st), 0);
            for (int64_t i = 0; i < jb; i++)
                for (int64_t c = 0; c < ldut; c++) {
                    double want = c < nc ? RU[i + c * ldu] : -7.5;
                    if (Ut[c + i * ldut] != want)
                        fail_msg("case %zu near %d: Ut(%lld, %lld) = %g, want %g", k, near, (long long)c, (long long)i,
                                 Ut[c + i * ldut], want);
                }
            for (int64_t r = 0; r < mp; r++)
                for (int64_t c = 0; c < ldt; c++) {
                    double want = c >= nc ? -3.25 : r < jb ? A[r + c * lda] : R[r + c * lda];
                    if (Bt[c + r * ldt] != want)
                        fail_msg("case %zu near %d: At(%lld, %lld) = %g, want %g", k, near, (long long)c, (long long)r,
                                 Bt[c + r * ldt], want);
                }
            ts_dfree(d, X);
            ts_dfree(d, XU);
            ts_dfree(d, xi);
            free(A);
            free(R);
            free(RU);
            free(At);
            free(Bt);
            free(Ut);
            swap_plan_free(&pl);
        }
    }
    // a changed row whose source is itself changed: rejected
    const int64_t pk[] = {0, 1, 5, 9}, al[] = {5, 9}, ab_ok[] = {0, 1}, ab_bad[] = {0, 3};
    assert_true(ts_lu_swap_plan_t_ok(pk, al, ab_ok, 2));
    assert_false(ts_lu_swap_plan_t_ok(pk, al, ab_bad, 2));
    // transposes
    static const int64_t shapes[][2] = {{1, 1}, {1, 40}, {33, 1}, {32, 32}, {70, 45}, {129, 300}};
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        int64_t m = shapes[k][0], n = shapes[k][1], lds = m + 5, ldd = n + 3;
        double *S = random_panel(90 + k, m, n, lds), *D = malloc(sizeof(double) * (size_t)(ldd * m));
        assert_non_null(D);
        for (int64_t i = 0; i < ldd * m; i++) D[i] = -1.5;
        double *XS = NULL, *XD = NULL;
        assert_int_equal(ts_dmalloc(d, sizeof(double) * (size_t)(lds * n), (void **)&XS), 0);
        assert_int_equal(ts_dmalloc(d, sizeof(double) * (size_t)(ldd * m), (void **)&XD), 0);
        assert_int_equal(ts_copy_async(st, TS_COPY_H2D, XS, S, sizeof(double) * (size_t)(lds * n)), 0);
        assert_int_equal(ts_copy_async(st, TS_COPY_H2D, XD, D, sizeof(double) * (size_t)(ldd * m)), 0);
        assert_int_equal(ts_lu_transpose(st, m, n, XS, lds, XD, ldd), 0);
        assert_int_equal(ts_copy_async(st, TS_COPY_D2H, D, XD, sizeof(double) * (size_t)(ldd * m)), 0);
        assert_int_equal(ts_stream_sync(st), 0);
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < ldd; j++) {
                double want = j < n ? S[i + j * lds] : -1.5;
                if (D[j + i * ldd] != want)
                    fail_msg("transpose %lld x %lld: D(%lld, %lld) = %g, want %g", (long long)m, (long long)n,
                             (long long)j, (long long)i, D[j + i * ldd], want);
            }
        ts_dfree(d, XS);
        ts_dfree(d, XD);
        free(S);
        free(D);
    }
    double *X = NULL;
    assert_int_equal(ts_dmalloc(d, 64 * sizeof(double), (void **)&X), 0);
    assert_int_equal(ts_lu_transpose(st, 8, 4, X, 7, X + 32, 4), TS_ERR_ARG); // lds < m
    ts_error_clear();
    ts_dfree(d, X);
    ts_stream_destroy(st);
    ts_devset_close(set);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_twin_matches_unblocked),
        cmocka_unit_test(test_twin_zero_pivot),
        cmocka_unit_test(test_twin_rank_deficient),
        cmocka_unit_test(test_sim_device_path),
        cmocka_unit_test(test_swap_rows_sim),
        cmocka_unit_test(test_swap_rows_t_sim),
        cmocka_unit_test(test_copy_cols_sim),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
