// ts_gemm_verify.c: randomized (Freivalds) verification of a GEMM result with a stated error bound.
//
// For nvec random vectors x (length n) the check computes, in double (double complex) arithmetic,
//     y = C x                       and   z = alpha op(A) (op(B) x) + beta C0 x
// and the scaled error
//     err = ||y - z||_inf / (S ||x||_inf),
//     S   = (|alpha| ||op(A)||_inf ||op(B)||_inf + |beta| ||C0||_inf) * ((k + 2) eps + (n + 2k + 4) u),
// where ||.||_inf is the largest row sum of moduli, eps the unit roundoff of the precision
// (2^-24 for s/c, 2^-53 for d/z) and u = 2^-53 that of the check's own double arithmetic.
// The reported err is the largest over the vectors.
//
// Why bound 1 (TS_GEMM_VERIFY_BOUND): a correct GEMM satisfies |C - (alpha AB + beta C0)| <=
// (k + 2) eps (|alpha||op(A)||op(B)| + |beta||C0|) elementwise (k products summed, then the alpha
// and beta roundings), and the check's own evaluation of C x (n terms), op(B) x and op(A) w (k
// terms each) and the final combination adds at most (n + 2k + 4) u of the same norm. So
// |y - z|_inf <= S ||x||_inf and err <= 1 even if every rounding error had the same sign (the u
// term matters for d/z at small k: a 1x1x1 product is otherwise flagged by its own check). Rounding
// errors of real computations are random-signed, so correct results score far lower: for random
// data err falls like 1/(k sqrt(n)) (measured 5e-3 at 48x40x36, 5e-4 at 300x280x260, all precisions
// alike since eps is per precision).
//
// Detection: x_j is drawn with |x_j| in [1/2, 1) (real; complex: real and imaginary parts so, so
// |x_j| >= ||x||_inf / 2), with random signs. One wrong element C(i,j) = correct + delta changes y_i
// by delta x_j, so err >= |delta| / (2 S) - (the correct result's err): an error
// |delta| > 2 * bound * S is detected by every single vector; |delta| < bound * S (less the
// correct result's err) can never be. Several wrong elements in one row could cancel only for
// In relative terms: for uniform data S grows like k^2 n eps / 16 while ||C||_max grows like sqrt(k),
// so the guaranteed-detectable single-element error (d) is about 3.5e-12 ||C||_max at 45x38x52,
// 2e-10 at 300x280x260 and 4e-9 at n = k = 1000 (a worst-case normalization buys no false alarms;
// the check-rounding term makes these about 4x those of a normalization by k eps alone).
// Several wrong elements in one row could cancel only for particular x; with continuous random x
// and nvec >= 2 that is negligible. NaN or Inf anywhere in C
// (or A, B, C0) makes y - z non-finite and always fails. Cost O((m+n)k + mn) per vector, plus
// O(mk + kn + mn) once for the norms.
#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/ts_error.h"
#include "core/ts_rng.h"
#include "kernels/ts_kernels.h"

typedef double complex zd;

// y = op(M) x for op(M) rows x cols; M stored with leading dimension ld (cols x rows when t != 'N').
// Vectors are double (real) or interleaved double pairs read as double complex. The products and
// norms are split over the cores by blocks of VB result rows (OpenMP); every element keeps its
// serial order of summation, so the check's numbers do not depend on the thread count.
#define VB 2048
typedef void (*matvec_fn)(char t, int64_t rows, int64_t cols, const void *M, int64_t ld,
                          const double *x, double *y);
// ||op(M)||_inf, with tmp holding `rows` doubles.
typedef double (*norm_fn)(char t, int64_t rows, int64_t cols, const void *M, int64_t ld, double *tmp);

#define TS_DEFINE_VERIFY_REAL(L, T)                                                               \
    static void matvec_##L(char t, int64_t rows, int64_t cols, const void *Mv, int64_t ld,       \
                           const double *x, double *y) {                                          \
        const T *M = Mv;                                                                          \
        if (t == 'N') {                                                                           \
            _Pragma("omp parallel for schedule(static)")                                          \
            for (int64_t b = 0; b < (rows + VB - 1) / VB; b++) {                                  \
                int64_t i0 = b * VB, i1 = i0 + VB < rows ? i0 + VB : rows;                        \
                for (int64_t i = i0; i < i1; i++) y[i] = 0.0;                                     \
                for (int64_t p = 0; p < cols; p++) {                                              \
                    const T *col = M + p * ld;                                                    \
                    double xp = x[p];                                                             \
                    for (int64_t i = i0; i < i1; i++) y[i] += (double)col[i] * xp;                \
                }                                                                                 \
            }                                                                                     \
        } else {                                                                                  \
            _Pragma("omp parallel for schedule(static)")                                          \
            for (int64_t i = 0; i < rows; i++) {                                                  \
                const T *col = M + i * ld;                                                        \
                double s = 0.0;                                                                   \
                for (int64_t p = 0; p < cols; p++) s += (double)col[p] * x[p];                    \
                y[i] = s;                                                                         \
            }                                                                                     \
        }                                                                                         \
    }                                                                                             \
    static double norm_##L(char t, int64_t rows, int64_t cols, const void *Mv, int64_t ld,       \
                           double *tmp) {                                                         \
        const T *M = Mv;                                                                          \
        double nrm = 0.0;                                                                         \
        if (t == 'N') {                                                                           \
            _Pragma("omp parallel for schedule(static)")                                          \
            for (int64_t b = 0; b < (rows + VB - 1) / VB; b++) {                                  \
                int64_t i0 = b * VB, i1 = i0 + VB < rows ? i0 + VB : rows;                        \
                for (int64_t i = i0; i < i1; i++) tmp[i] = 0.0;                                   \
                for (int64_t p = 0; p < cols; p++)                                                \
                    for (int64_t i = i0; i < i1; i++) tmp[i] += fabs((double)M[i + p * ld]);      \
            }                                                                                     \
        } else {                                                                                  \
            _Pragma("omp parallel for schedule(static)")                                          \
            for (int64_t i = 0; i < rows; i++) {                                                  \
                double s = 0.0;                                                                   \
                for (int64_t p = 0; p < cols; p++) s += fabs((double)M[p + i * ld]);              \
                tmp[i] = s;                                                                       \
            }                                                                                     \
        }                                                                                         \
        for (int64_t i = 0; i < rows; i++)                                                        \
            if (!(tmp[i] <= nrm)) nrm = tmp[i]; /* NaN propagates */                              \
        return nrm;                                                                               \
    }

#define TS_DEFINE_VERIFY_COMPLEX(L, T)                                                            \
    static zd load_##L(const T *p, int conj) {                                                    \
        return CMPLX((double)p[0], conj ? -(double)p[1] : (double)p[1]);                          \
    }                                                                                             \
    static void matvec_##L(char t, int64_t rows, int64_t cols, const void *Mv, int64_t ld,       \
                           const double *xv, double *yv) {                                        \
        const T *M = Mv;                                                                          \
        const zd *x = (const zd *)xv;                                                             \
        zd *y = (zd *)yv;                                                                         \
        if (t == 'N') {                                                                           \
            _Pragma("omp parallel for schedule(static)")                                          \
            for (int64_t b = 0; b < (rows + VB - 1) / VB; b++) {                                  \
                int64_t i0 = b * VB, i1 = i0 + VB < rows ? i0 + VB : rows;                        \
                for (int64_t i = i0; i < i1; i++) y[i] = 0.0;                                     \
                for (int64_t p = 0; p < cols; p++) {                                              \
                    const T *col = M + 2 * p * ld;                                                \
                    zd xp = x[p];                                                                 \
                    for (int64_t i = i0; i < i1; i++) y[i] += load_##L(col + 2 * i, 0) * xp;      \
                }                                                                                 \
            }                                                                                     \
        } else {                                                                                  \
            int conj = t == 'C';                                                                  \
            _Pragma("omp parallel for schedule(static)")                                          \
            for (int64_t i = 0; i < rows; i++) {                                                  \
                const T *col = M + 2 * i * ld;                                                    \
                zd s = 0.0;                                                                       \
                for (int64_t p = 0; p < cols; p++) s += load_##L(col + 2 * p, conj) * x[p];       \
                y[i] = s;                                                                         \
            }                                                                                     \
        }                                                                                         \
    }                                                                                             \
    static double norm_##L(char t, int64_t rows, int64_t cols, const void *Mv, int64_t ld,       \
                           double *tmp) {                                                         \
        const T *M = Mv;                                                                          \
        double nrm = 0.0;                                                                         \
        _Pragma("omp parallel for schedule(static)")                                              \
        for (int64_t b = 0; b < (rows + VB - 1) / VB; b++) {                                      \
            int64_t i0 = b * VB, i1 = i0 + VB < rows ? i0 + VB : rows;                            \
            for (int64_t i = i0; i < i1; i++) tmp[i] = 0.0;                                       \
            for (int64_t p = 0; p < cols; p++)                                                    \
                for (int64_t i = i0; i < i1; i++) {                                               \
                    const T *e = t == 'N' ? M + 2 * (i + p * ld) : M + 2 * (p + i * ld);          \
                    tmp[i] += hypot((double)e[0], (double)e[1]);                                  \
                }                                                                                 \
        }                                                                                         \
        for (int64_t i = 0; i < rows; i++)                                                        \
            if (!(tmp[i] <= nrm)) nrm = tmp[i];                                                   \
        return nrm;                                                                               \
    }

TS_DEFINE_VERIFY_REAL(s, float)
TS_DEFINE_VERIFY_REAL(d, double)
TS_DEFINE_VERIFY_COMPLEX(c, float)
TS_DEFINE_VERIFY_COMPLEX(z, double)

static char op_upper(char t) { return t == 'n' ? 'N' : t == 't' ? 'T' : t == 'c' ? 'C' : t; }

static zd load_scalar(char prec, const void *p) {
    switch (prec) {
    case 's': return *(const float *)p;
    case 'd': return *(const double *)p;
    case 'c': return CMPLX(((const float *)p)[0], ((const float *)p)[1]);
    default: return CMPLX(((const double *)p)[0], ((const double *)p)[1]);
    }
}

// x with |x_j| in [1/2, 1) per real component and random signs (see the header comment).
static void fill_x(uint64_t key, int vec, int64_t len, double *x) {
    for (int64_t j = 0; j < len; j++) {
        double u = ts_uniform_at(key, (uint64_t)vec * (uint64_t)len + (uint64_t)j); // [-0.5, 0.5)
        x[j] = u + (u >= 0.0 ? 0.5 : -0.5);
    }
}

static double vec_inf(int cplx, int64_t n, const double *x) {
    double r = 0.0;
    for (int64_t j = 0; j < n; j++) {
        double a = cplx ? cabs(((const zd *)x)[j]) : fabs(x[j]);
        if (!(a <= r)) r = a;
    }
    return r;
}

// max_i |y_i - (alpha u_i + beta y0_i)|; u or y0 NULL means zero. NaN propagates.
static double diff_inf(int cplx, int64_t m, const double *y, zd alpha, const double *u, zd beta,
                       const double *y0) {
    double r = 0.0;
    for (int64_t i = 0; i < m; i++) {
        double d;
        if (cplx) {
            zd z = 0.0;
            if (u) z += alpha * ((const zd *)u)[i];
            if (y0) z += beta * ((const zd *)y0)[i];
            d = cabs(((const zd *)y)[i] - z);
        } else {
            double z = 0.0;
            if (u) z += creal(alpha) * u[i];
            if (y0) z += creal(beta) * y0[i];
            d = fabs(y[i] - z);
        }
        if (!(d <= r)) r = d;
        if (isnan(r)) return r;
    }
    return r;
}

static int verify_args(char prec, char ta, char tb, int64_t m, int64_t n, int64_t k, int64_t lda,
                       int64_t ldb, zd beta, const void *C0, int64_t ldc0, const void *C,
                       int64_t ldc, int nvec) {
    TS_CHECK(ts_gemm_check_raise("ts_gemm_verify", prec, ta, tb, m, n, k, lda, ldb, ldc));
    int64_t minld = m > 1 ? m : 1;
    if (beta != 0.0 && !C0) TS_RAISE(TS_ERR_ARG, "ts_gemm_verify: C0 is NULL but beta is not zero");
    if (beta != 0.0 && ldc0 < minld) TS_RAISE(TS_ERR_ARG, "ts_gemm_verify: ldc0 = %lld < max(1, m = %lld)",
                                     (long long)ldc0, (long long)m);
    if (!C && m > 0 && n > 0) TS_RAISE(TS_ERR_ARG, "ts_gemm_verify: C is NULL");
    if (nvec < 1) TS_RAISE(TS_ERR_ARG, "ts_gemm_verify: nvec = %d must be >= 1", nvec);
    return 0;
}

int ts_gemm_verify(char prec, char ta, char tb, int64_t m, int64_t n, int64_t k, const void *alpha,
                   const void *A, int64_t lda, const void *B, int64_t ldb, const void *beta,
                   const void *C0, int64_t ldc0, const void *C, int64_t ldc, int nvec,
                   uint64_t seed, double bound, double *err) {
    double e_out = INFINITY;
    if (err) *err = e_out;
    if (!alpha || !beta || ts_prec_size(prec) == 0) {
        TS_ERROR(TS_ERR_ARG, "ts_gemm_verify: precision '%c' unknown or alpha/beta NULL", prec);
        return 0;
    }
    zd al = load_scalar(prec, alpha), be = load_scalar(prec, beta);
    if (verify_args(prec, ta, tb, m, n, k, lda, ldb, be, C0, ldc0, C, ldc, nvec) < 0) return 0;
    if (m == 0 || n == 0) {
        if (err) *err = 0.0;
        return 1;
    }
    ta = op_upper(ta);
    tb = op_upper(tb);
    int cplx = ts_prec_is_complex(prec);
    if (!cplx) { // 'C' is 'T' for real data
        if (ta == 'C') ta = 'T';
        if (tb == 'C') tb = 'T';
    }
    matvec_fn mv = prec == 's' ? matvec_s : prec == 'd' ? matvec_d : prec == 'c' ? matvec_c : matvec_z;
    norm_fn nrm = prec == 's' ? norm_s : prec == 'd' ? norm_d : prec == 'c' ? norm_c : norm_z;
    double eps = (prec == 's' || prec == 'c') ? ldexp(1.0, -24) : ldexp(1.0, -53);
    int use_ab = k > 0 && al != 0.0, use_c0 = be != 0.0;

    size_t cw = cplx ? 2 : 1, big = (size_t)(m > k ? m : k);
    double *x = malloc(cw * (size_t)n * sizeof *x), *w = malloc(cw * (size_t)(k > 0 ? k : 1) * sizeof *w);
    double *u = malloc(cw * (size_t)m * sizeof *u), *y = malloc(cw * (size_t)m * sizeof *y);
    double *y0 = malloc(cw * (size_t)m * sizeof *y0), *tmp = malloc(big * sizeof *tmp);
    int ok = 0;
    if (!x || !w || !u || !y || !y0 || !tmp) {
        TS_ERROR(TS_ERR_NOMEM, "ts_gemm_verify: no memory for the check vectors (m=%lld n=%lld k=%lld)",
                 (long long)m, (long long)n, (long long)k);
        goto out;
    }
    double nA = use_ab ? nrm(ta, m, k, A, lda, tmp) : 0.0;
    double nB = use_ab ? nrm(tb, k, n, B, ldb, tmp) : 0.0;
    double nC0 = use_c0 ? nrm('N', m, n, C0, ldc0, tmp) : 0.0;
    double S = (cabs(al) * nA * nB + cabs(be) * nC0) *
               ((double)(k + 2) * eps + (double)(n + 2 * k + 4) * ldexp(1.0, -53));

    uint64_t key = ts_mix64(seed ^ 0x7465737365726176ull); // the verifier's own stream of the seed
    double worst = 0.0;
    for (int v = 0; v < nvec && !isnan(worst); v++) {
        fill_x(key, v, (int64_t)cw * n, x);
        if (use_ab) {
            mv(tb, k, n, B, ldb, x, w);
            mv(ta, m, k, A, lda, w, u);
        }
        if (use_c0) mv('N', m, n, C0, ldc0, x, y0);
        mv('N', m, n, C, ldc, x, y);
        double d = diff_inf(cplx, m, y, al, use_ab ? u : NULL, be, use_c0 ? y0 : NULL);
        double denom = S * vec_inf(cplx, n, x);
        double e = denom > 0.0 ? d / denom : (d == 0.0 ? 0.0 : INFINITY);
        if (!(e <= worst)) worst = e;
    }
    e_out = worst;
    ok = worst <= bound;
out:
    free(x), free(w), free(u), free(y), free(y0), free(tmp);
    if (err) *err = e_out;
    return ok;
}

// ---- the normwise error against a recomputed reference ----

static double elem_abs2(char prec, const void *x, int64_t idx) {
    switch (prec) {
    case 's': { double v = ((const float *)x)[idx]; return v * v; }
    case 'd': { double v = ((const double *)x)[idx]; return v * v; }
    case 'c': { const float *f = (const float *)x + 2 * idx; return (double)f[0] * f[0] + (double)f[1] * f[1]; }
    default: { const double *d = (const double *)x + 2 * idx; return d[0] * d[0] + d[1] * d[1]; }
    }
}

static double diff_abs2(char prec, const void *x, const void *y, int64_t idx) {
    int cplx = ts_prec_is_complex(prec);
    double s = 0;
    for (int t = 0; t < (cplx ? 2 : 1); t++) {
        int64_t i = idx * (cplx ? 2 : 1) + t;
        double a, b;
        if (prec == 's' || prec == 'c') a = ((const float *)x)[i], b = ((const float *)y)[i];
        else a = ((const double *)x)[i], b = ((const double *)y)[i];
        s += (a - b) * (a - b);
    }
    return s;
}

static double fro(char prec, const void *x, int64_t rows, int64_t cols, int64_t ld) {
    double s = 0;
    for (int64_t jj = 0; jj < cols; jj++)
        for (int64_t i = 0; i < rows; i++) s += elem_abs2(prec, x, i + jj * ld);
    return sqrt(s);
}

double ts_gemm_ref_error(char prec, char ta, char tb, int64_t m, int64_t n, int64_t k, const double alpha[2],
                         const void *A, int64_t lda, const void *B, int64_t ldb, const double beta[2],
                         const void *C0, const void *C, const void *Cref, int64_t ldc) {
    double d = 0;
    for (int64_t jj = 0; jj < n; jj++)
        for (int64_t i = 0; i < m; i++) d += diff_abs2(prec, C, Cref, i + jj * ldc);
    d = sqrt(d);
    ta = op_upper(ta), tb = op_upper(tb);
    int64_t ra = ta == 'N' ? m : k, ca = ta == 'N' ? k : m, rb = tb == 'N' ? k : n, cb = tb == 'N' ? n : k;
    double na = fro(prec, A, ra, ca, lda), nb = fro(prec, B, rb, cb, ldb), nc = fro(prec, C0, m, n, ldc);
    int cplx = ts_prec_is_complex(prec);
    double aa = cplx ? hypot(alpha[0], alpha[1]) : fabs(alpha[0]), ab = cplx ? hypot(beta[0], beta[1]) : fabs(beta[0]);
    double eps = (prec == 's' || prec == 'c') ? FLT_EPSILON / 2 : DBL_EPSILON / 2; // unit roundoff
    double den = (aa * na * nb + ab * nc) * (double)k * eps;
    if (den == 0) return d == 0 ? 0 : INFINITY;
    return d / den; // NaN when C has NaN: fails
}

void ts_gemm_check(const ts_gemm_desc *g, const void *C, int nvec, uint64_t seed, double fv_bound, void *Cref,
                   int *cref_valid, double ref_bound, ts_gemm_check_result *r) {
    ts_scalar al = ts_scalar_of(g->prec, g->alpha[0], g->alpha[1]), be = ts_scalar_of(g->prec, g->beta[0], g->beta[1]);
    double fv = NAN;
    int ok = ts_gemm_verify(g->prec, g->ta, g->tb, g->m, g->n, g->k, &al, g->A, g->lda, g->B, g->ldb, &be, g->C0,
                            g->ldc, C, g->ldc, nvec, seed, fv_bound, &fv);
    ok = ok == 1 && fv == fv;
    memset(r, 0, sizeof *r);
    r->fv_err = r->error = fv, r->bound = fv_bound, r->passed = ok;
    if (!Cref) return;
    if (!*cref_valid) {
        memcpy(Cref, g->C0, (size_t)g->ldc * (size_t)g->n * ts_prec_size(g->prec));
        ts_gemm_ref(g->prec, g->ta, g->tb, g->m, g->n, g->k, &al, g->A, g->lda, g->B, g->ldb, &be, Cref, g->ldc);
        *cref_valid = 1;
    }
    double e = ts_gemm_ref_error(g->prec, g->ta, g->tb, g->m, g->n, g->k, g->alpha, g->A, g->lda, g->B, g->ldb,
                                 g->beta, g->C0, C, Cref, g->ldc);
    int rok = e == e && e <= ref_bound;
    r->ref_err = e, r->ref_done = 1;
    if (!rok || !(fv == fv) || e / ref_bound > fv / fv_bound) r->error = e, r->bound = ref_bound;
    if (!ok && !(fv == fv)) r->error = fv, r->bound = fv_bound;
    r->passed = ok && rok;
}
