// kern_test_util.h: helpers shared by the kernels tests: random fills, a naive GEMM with an error bound.
#ifndef KERN_TEST_UTIL_H
#define KERN_TEST_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/ts_rng.h"
#include "kernels/ts_kernels.h"

static const char kt_precs[4] = {'s', 'd', 'c', 'z'};
static const char kt_ops[3] = {'N', 'T', 'C'};

typedef struct {
    long double re, im;
} kt_lc;

static inline double kt_eps(char prec) {
    return (prec == 's' || prec == 'c') ? ldexp(1.0, -24) : ldexp(1.0, -53);
}

static inline int kt_cplx(char prec) { return prec == 'c' || prec == 'z'; }

static inline kt_lc kt_get(char prec, const void *p, int64_t idx) {
    kt_lc v = {0, 0};
    switch (prec) {
    case 's': v.re = ((const float *)p)[idx]; break;
    case 'd': v.re = ((const double *)p)[idx]; break;
    case 'c': v.re = ((const float *)p)[2 * idx], v.im = ((const float *)p)[2 * idx + 1]; break;
    default: v.re = ((const double *)p)[2 * idx], v.im = ((const double *)p)[2 * idx + 1]; break;
    }
    return v;
}

static inline void kt_put(char prec, void *p, int64_t idx, kt_lc v) {
    switch (prec) {
    case 's': ((float *)p)[idx] = (float)v.re; break;
    case 'd': ((double *)p)[idx] = (double)v.re; break;
    case 'c': ((float *)p)[2 * idx] = (float)v.re, ((float *)p)[2 * idx + 1] = (float)v.im; break;
    default: ((double *)p)[2 * idx] = (double)v.re, ((double *)p)[2 * idx + 1] = (double)v.im; break;
    }
}

static inline kt_lc kt_mul(kt_lc a, kt_lc b) {
    kt_lc r = {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
    return r;
}
static inline long double kt_abs(kt_lc a) { return sqrtl(a.re * a.re + a.im * a.im); }

// Element (r, c) of op(M), M stored column-major with leading dimension ld.
static inline kt_lc kt_op_el(char prec, char t, const void *M, int64_t ld, int64_t r, int64_t c) {
    kt_lc v = t == 'N' ? kt_get(prec, M, r + c * ld) : kt_get(prec, M, c + r * ld);
    if (t == 'C') v.im = -v.im;
    return v;
}

// Column-major rows x cols block with leading dimension ld, values in [-0.5, 0.5) and never zero;
// the padding rows (ld > rows) get NaN so that a kernel reading them is caught.
static inline void *kt_alloc_fill(char prec, int64_t rows, int64_t cols, int64_t ld, uint64_t key) {
    size_t es = ts_prec_size(prec);
    int64_t n = ld * (cols > 0 ? cols : 1);
    void *p = malloc((size_t)n * es);
    for (int64_t j = 0; j < (cols > 0 ? cols : 1); j++)
        for (int64_t i = 0; i < ld; i++) {
            int64_t idx = i + j * ld;
            kt_lc v = {NAN, NAN};
            if (i < rows && j < cols) {
                v.re = ts_uniform_at(key, 2 * (uint64_t)idx);
                v.im = ts_uniform_at(key, 2 * (uint64_t)idx + 1);
                if (v.re == 0) v.re = 0.25L;
                if (v.im == 0) v.im = -0.25L;
            }
            kt_put(prec, p, idx, v);
        }
    return p;
}

static inline void *kt_dup(char prec, const void *p, int64_t n) {
    void *q = malloc((size_t)n * ts_prec_size(prec));
    memcpy(q, p, (size_t)n * ts_prec_size(prec));
    return q;
}

// Naive triple loop in long double: Cref = alpha op(A) op(B) + beta C (C is only read when beta is
// not zero), and bnd = |alpha| |op(A)||op(B)| + |beta| |C|, elementwise (m x n, leading dim m).
static inline void kt_naive(char prec, char ta, char tb, int64_t m, int64_t n, int64_t k,
                            const void *alpha, const void *A, int64_t lda, const void *B,
                            int64_t ldb, const void *beta, const void *C, int64_t ldc, kt_lc *Cref,
                            long double *bnd) {
    kt_lc al = kt_get(prec, alpha, 0), be = kt_get(prec, beta, 0);
    int beta0 = be.re == 0 && be.im == 0;
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) {
            kt_lc s = {0, 0};
            long double sa = 0;
            for (int64_t p = 0; p < k; p++) {
                kt_lc a = kt_op_el(prec, ta, A, lda, i, p), b = kt_op_el(prec, tb, B, ldb, p, j);
                kt_lc ab = kt_mul(a, b);
                s.re += ab.re, s.im += ab.im;
                sa += kt_abs(a) * kt_abs(b);
            }
            kt_lc r = kt_mul(al, s);
            long double bb = kt_abs(al) * sa;
            if (!beta0) {
                kt_lc c = kt_mul(be, kt_get(prec, C, i + j * ldc));
                r.re += c.re, r.im += c.im;
                bb += kt_abs(be) * kt_abs(kt_get(prec, C, i + j * ldc));
            }
            Cref[i + j * m] = r;
            bnd[i + j * m] = bb;
        }
}

// max over elements of |C - Cref| / ((k + 2) eps bnd) (0 when both are 0); NaN if C has a NaN.
static inline double kt_scaled_err(char prec, int64_t m, int64_t n, int64_t k, const void *C,
                                   int64_t ldc, const kt_lc *Cref, const long double *bnd) {
    double worst = 0, eps = kt_eps(prec);
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) {
            kt_lc c = kt_get(prec, C, i + j * ldc), r = Cref[i + j * m];
            kt_lc d = {c.re - r.re, c.im - r.im};
            long double den = (long double)(k + 2) * eps * bnd[i + j * m];
            double e = (double)(den > 0 ? kt_abs(d) / den : (kt_abs(d) == 0 ? 0 : INFINITY));
            if (!(e <= worst)) worst = e;
        }
    return worst;
}

static inline void kt_scalars(char prec, void *alpha, void *beta) {
    kt_lc a = {0.7L, -0.4L}, b = {-1.3L, 0.25L};
    kt_put(prec, alpha, 0, a);
    kt_put(prec, beta, 0, b);
}

#endif
