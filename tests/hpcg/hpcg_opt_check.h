// hpcg_opt_check.h: compares HPCG's optimized problem built and run on a device with the host build (used by tests/hpcg and tests/gpu).
//
// The structure (colours, permutation, sliced ELL, diagonal, restriction pairs, halo lists, b)
// must be identical bit for bit: both builds run the same per-row code on integers and copies of
// the generated values. The solver kernels on the same random vectors must agree within
// KERNEL_TOL relative to the largest value (the V-cycle: MG_TOL, its four levels of sweeps carry
// the differences along): only the rounding of fused multiply-adds (CUDA) and DDOT's summation
// order may differ.
#ifndef HPCG_OPT_CHECK_H
#define HPCG_OPT_CHECK_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/hpcg/ts_hpcg_opt.h"
#include "core/ts_error.h"

#define KERNEL_TOL (64 * DBL_EPSILON)
#define MG_TOL (256 * DBL_EPSILON)

#define OK(expr)                                                                                   \
    do {                                                                                           \
        int rc_ = (expr);                                                                          \
        if (rc_ != 0) fail_msg("%s = %d: %s", #expr, rc_, ts_error_string());                      \
    } while (0)

// A host copy of n elements of executor memory.
static void *hc_get(const ts_hpcg_exec *X, const void *p, size_t bytes) {
    void *h = malloc(bytes ? bytes : 1);
    assert_non_null(h);
    OK(ts_hpcg_xcopy(X, TS_COPY_D2H, h, p, bytes));
    OK(ts_hpcg_xsync(X));
    return h;
}

static void hc_same(const ts_hpcg_exec *XA, const void *a, const ts_hpcg_exec *XB, const void *b, size_t bytes,
                    const char *what) {
    void *ha = hc_get(XA, a, bytes), *hb = hc_get(XB, b, bytes);
    if (memcmp(ha, hb, bytes) != 0) fail_msg("optimized problem differs between the builds: %s", what);
    free(ha);
    free(hb);
}

// The two builds hold the same problem, level by level.
static void hc_same_problem(const ts_hpcg_opt *A, const ts_hpcg_opt *B) {
    const ts_hpcg_olevel *la = A->A, *lb = B->A;
    hc_same(&A->X, A->b, &B->X, B->b, sizeof(double) * (size_t)la->nrow, "b");
    for (; la && lb; la = la->coarse, lb = lb->coarse) {
        const size_t n = (size_t)la->nrow;
        assert_int_equal(la->nrow, lb->nrow);
        assert_int_equal(la->ncolors, lb->ncolors);
        assert_true(la->nlower == lb->nlower && la->nupper == lb->nupper);
        for (int c = 0; c < la->ncolors; c++) {
            assert_int_equal(la->blk[c].r0, lb->blk[c].r0);
            assert_int_equal(la->blk[c].nr, lb->blk[c].nr);
            assert_int_equal(la->blk[c].wl, lb->blk[c].wl);
            assert_int_equal(la->blk[c].wu, lb->blk[c].wu);
        }
        hc_same(&A->X, la->color, &B->X, lb->color, sizeof(int32_t) * n, "colours");
        hc_same(&A->X, la->perm, &B->X, lb->perm, sizeof(int32_t) * n, "permutation");
        hc_same(&A->X, la->diag, &B->X, lb->diag, sizeof(double) * n, "diagonal");
        hc_same(&A->X, la->lcol, &B->X, lb->lcol, sizeof(int32_t) * (size_t)la->nlower, "lower columns");
        hc_same(&A->X, la->lval, &B->X, lb->lval, sizeof(double) * (size_t)la->nlower, "lower values");
        hc_same(&A->X, la->ucol, &B->X, lb->ucol, sizeof(int32_t) * (size_t)la->nupper, "upper columns");
        hc_same(&A->X, la->uval, &B->X, lb->uval, sizeof(double) * (size_t)la->nupper, "upper values");
        hc_same(&A->X, la->xsend, &B->X, lb->xsend, sizeof(int32_t) * (size_t)la->halo.nsend, "halo rows");
        if (la->coarse) {
            hc_same(&A->X, la->fr, &B->X, lb->fr, sizeof(int32_t) * (size_t)la->coarse->nrow, "restriction rows");
            hc_same(&A->X, la->cq, &B->X, lb->cq, sizeof(int32_t) * (size_t)la->coarse->nrow, "coarse rows");
        }
    }
    assert_true(!la && !lb);
}

// Deterministic values in [-1, 1) (xorshift).
static void hc_random(uint64_t seed, double *v, int64_t n) {
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    for (int64_t i = 0; i < n; i++) {
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
        v[i] = 2.0 * ((double)(s >> 11) / 9007199254740992.0) - 1.0;
    }
}

// max |a - b| / max(1, max |b|) over n values of two executors' vectors.
static double hc_diff(const ts_hpcg_exec *XA, const double *a, const ts_hpcg_exec *XB, const double *b, size_t n) {
    double *ha = hc_get(XA, a, sizeof(double) * n), *hb = hc_get(XB, b, sizeof(double) * n);
    double d = 0.0, big = 1.0;
    for (size_t i = 0; i < n; i++) {
        if (!(fabs(ha[i] - hb[i]) <= d)) d = fabs(ha[i] - hb[i]);
        if (fabs(hb[i]) > big) big = fabs(hb[i]);
    }
    free(ha);
    free(hb);
    return d / big;
}

// An executor vector of n values set from host values h.
static double *hc_put(const ts_hpcg_exec *X, const double *h, size_t n) {
    double *v = NULL;
    OK(ts_hpcg_xalloc(X, sizeof(double) * n, (void **)&v));
    OK(ts_hpcg_xcopy(X, TS_COPY_H2D, v, h, sizeof(double) * n));
    OK(ts_hpcg_xsync(X));
    return v;
}

// Runs SpMV, SYMGS (from zero and from x), the V-cycle, WAXPBY and DDOT of both builds on the
// same random vectors (permuted order, fine level) and checks that they agree within KERNEL_TOL.
static void hc_same_kernels(ts_hpcg_opt *A, ts_hpcg_opt *B, uint64_t seed) {
    const size_t n = (size_t)A->A->nrow, nc = (size_t)A->A->ncol;
    double *hr = malloc(sizeof(double) * nc), *hx = malloc(sizeof(double) * nc);
    assert_non_null(hr);
    assert_non_null(hx);
    hc_random(seed, hr, (int64_t)nc);
    hc_random(seed + 1, hx, (int64_t)nc);
    double *ra = hc_put(&A->X, hr, nc), *rb = hc_put(&B->X, hr, nc);
    double *xa = hc_put(&A->X, hx, nc), *xb = hc_put(&B->X, hx, nc);
    double *ya = hc_put(&A->X, hx, nc), *yb = hc_put(&B->X, hx, nc);
    double d;
    OK(ts_hpcg_opt_spmv(A, A->A, xa, ya));
    OK(ts_hpcg_opt_spmv(B, B->A, xb, yb));
    if ((d = hc_diff(&A->X, ya, &B->X, yb, n)) > KERNEL_TOL) fail_msg("SpMV differs by %.3g", d);
    OK(ts_hpcg_opt_symgs(A, A->A, ra, xa, 0));
    OK(ts_hpcg_opt_symgs(B, B->A, rb, xb, 0));
    if ((d = hc_diff(&A->X, xa, &B->X, xb, n)) > KERNEL_TOL) fail_msg("SYMGS differs by %.3g", d);
    OK(ts_hpcg_opt_symgs(A, A->A, ra, ya, 1));
    OK(ts_hpcg_opt_symgs(B, B->A, rb, yb, 1));
    if ((d = hc_diff(&A->X, ya, &B->X, yb, n)) > KERNEL_TOL) fail_msg("SYMGS from zero differs by %.3g", d);
    OK(ts_hpcg_opt_mg(A, A->A, ra, xa));
    OK(ts_hpcg_opt_mg(B, B->A, rb, xb));
    if ((d = hc_diff(&A->X, xa, &B->X, xb, n)) > MG_TOL) fail_msg("MG differs by %.3g", d);
    ts_hpcg_impl ia, ib;
    ts_hpcg_opt_impl(A, &ia);
    ts_hpcg_opt_impl(B, &ib);
    OK(ia.ops->waxpby(&ia, 0.75, ra, -1.25, xa, ya));
    OK(ib.ops->waxpby(&ib, 0.75, rb, -1.25, xb, yb));
    if ((d = hc_diff(&A->X, ya, &B->X, yb, n)) > KERNEL_TOL) fail_msg("WAXPBY differs by %.3g", d);
    double da, db, sa = 0.0;
    OK(ts_hpcg_opt_dot(A, (int32_t)n, ra, ya, &da, NULL));
    OK(ts_hpcg_opt_dot(B, (int32_t)n, rb, yb, &db, NULL));
    double *h1 = hc_get(&A->X, ra, sizeof(double) * n), *h2 = hc_get(&A->X, ya, sizeof(double) * n);
    for (size_t i = 0; i < n; i++) sa += fabs(h1[i] * h2[i]);
    if (fabs(da - db) > KERNEL_TOL * sa) fail_msg("DDOT differs: %.17g and %.17g", da, db);
    free(h1);
    free(h2);
    double *v[] = {ra, xa, ya};
    double *w[] = {rb, xb, yb};
    for (int i = 0; i < 3; i++) {
        ts_hpcg_xfree(&A->X, v[i]);
        ts_hpcg_xfree(&B->X, w[i]);
    }
    free(hr);
    free(hx);
}

#endif
