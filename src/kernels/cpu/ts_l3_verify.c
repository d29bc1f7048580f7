// ts_l3_verify.c: randomized verification of the Level-3 routines (SYMM ... TRSM) against their original operands.
#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/ts_error.h"
#include "core/ts_rng.h"
#include "kernels/ts_l3.h"

typedef double complex zd;

// Rows of one block of the parallel matrix-vector products of the check.
#define MV_BLOCK 256

// ---------------------------------------------------------------- linear algebra
//
// Products of one stored matrix (or one triangle of it) with a vector, in double complex
// arithmetic whatever the precision; with `absval` the moduli of both, which with x = 1 gives the
// row sums of |op(M)|, i.e. ||op(M)||_inf.

typedef struct {
    char prec;
    const void *p;
    int64_t rows, cols, ld;
    char region; // 'F' full, 'L' lower triangle, 'U' upper triangle (diagonal included)
    char dmode;  // diagonal of a triangle: 'S' stored, 'R' real part of it, '1' unit, 'X' left out
} mat;

static inline zd ld_elem(char prec, const void *p, int64_t i) {
    switch (prec) {
    case 's': return ((const float *)p)[i];
    case 'd': return ((const double *)p)[i];
    case 'c': { const float *f = (const float *)p + 2 * i; return CMPLX(f[0], f[1]); }
    default: { const double *d = (const double *)p + 2 * i; return CMPLX(d[0], d[1]); }
    }
}

static inline zd mat_elem(const mat *M, int64_t i, int64_t j, int cj, int absval) {
    zd a;
    if (i == j && M->region != 'F') {
        switch (M->dmode) {
        case '1': a = 1; break;
        case 'X': a = 0; break;
        case 'R': a = creal(ld_elem(M->prec, M->p, i + j * M->ld)); break;
        default: a = ld_elem(M->prec, M->p, i + j * M->ld); break;
        }
    } else {
        a = ld_elem(M->prec, M->p, i + j * M->ld);
    }
    if (absval) return cabs(a);
    return cj ? conj(a) : a;
}

// ar/ai[0..n) += a[off..off+n) * xj (moduli with absval), one column segment of the matrix.
static void seg_axpy(char prec, const void *p, int64_t off, int64_t n, zd xj, double *ar, double *ai, int absval) {
    double xr = absval ? cabs(xj) : creal(xj), xi = absval ? 0 : cimag(xj);
    switch (prec) {
    case 's': {
        const float *a = (const float *)p + off;
        for (int64_t i = 0; i < n; i++) {
            double v = absval ? fabs((double)a[i]) : a[i];
            ar[i] += v * xr, ai[i] += v * xi;
        }
        break;
    }
    case 'd': {
        const double *a = (const double *)p + off;
        for (int64_t i = 0; i < n; i++) {
            double v = absval ? fabs(a[i]) : a[i];
            ar[i] += v * xr, ai[i] += v * xi;
        }
        break;
    }
    default: {
        const float *af = (const float *)p + 2 * off;
        const double *ad = (const double *)p + 2 * off;
        for (int64_t i = 0; i < n; i++) {
            double re = prec == 'c' ? af[2 * i] : ad[2 * i], im = prec == 'c' ? af[2 * i + 1] : ad[2 * i + 1];
            if (absval) re = sqrt(re * re + im * im), im = 0;
            ar[i] += re * xr - im * xi, ai[i] += re * xi + im * xr;
        }
        break;
    }
    }
}

// sum over i of a[off+i] (conjugated with cj, moduli with absval) * x[i].
static zd seg_dot(char prec, const void *p, int64_t off, int64_t n, const zd *x, int cj, int absval) {
    double sr = 0, si = 0;
    const double *xd = (const double *)x; // a double complex is two doubles (C11 6.2.5)
    if (prec == 's' || prec == 'd') {
        const float *af = (const float *)p + off;
        const double *ad = (const double *)p + off;
        for (int64_t i = 0; i < n; i++) {
            double v = prec == 's' ? af[i] : ad[i];
            if (absval) sr += fabs(v) * cabs(x[i]);
            else sr += v * xd[2 * i], si += v * xd[2 * i + 1];
        }
        return CMPLX(sr, si);
    }
    const float *af = (const float *)p + 2 * off;
    const double *ad = (const double *)p + 2 * off;
    double sg = cj ? -1 : 1;
    for (int64_t i = 0; i < n; i++) {
        double re = prec == 'c' ? af[2 * i] : ad[2 * i], im = sg * (prec == 'c' ? af[2 * i + 1] : ad[2 * i + 1]);
        double xr = xd[2 * i], xi = xd[2 * i + 1];
        if (absval) sr += sqrt(re * re + im * im) * sqrt(xr * xr + xi * xi);
        else sr += re * xr - im * xi, si += re * xi + im * xr;
    }
    return CMPLX(sr, si);
}

// The rows [lo, hi) of column j of the region, the diagonal apart when the region is a triangle.
static void col_range(const mat *M, int64_t j, int64_t *lo, int64_t *hi) {
    if (M->region == 'L' && *lo < j) *lo = j;
    if (M->region == 'U' && *hi > j + 1) *hi = j + 1;
}

// y = op(M) x; op 'N' (y: rows, x: cols), 'T' or 'C' (y: cols, x: rows).
static void mv(const mat *M, char op, const zd *x, zd *y, int absval) {
    int tri = M->region != 'F';
    if (op == 'N') {
#pragma omp parallel for schedule(dynamic)
        for (int64_t i0 = 0; i0 < M->rows; i0 += MV_BLOCK) {
            int64_t i1 = i0 + MV_BLOCK < M->rows ? i0 + MV_BLOCK : M->rows;
            double ar[MV_BLOCK] = {0}, ai[MV_BLOCK] = {0};
            for (int64_t j = 0; j < M->cols; j++) {
                int64_t lo = i0, hi = i1;
                col_range(M, j, &lo, &hi);
                if (lo >= hi) continue;
                int64_t base = j * M->ld;
                if (tri && j >= lo && j < hi) { // the diagonal element by its mode
                    zd d = mat_elem(M, j, j, 0, absval) * (absval ? cabs(x[j]) : x[j]);
                    ar[j - i0] += creal(d), ai[j - i0] += cimag(d);
                    seg_axpy(M->prec, M->p, base + lo, j - lo, x[j], ar + (lo - i0), ai + (lo - i0), absval);
                    seg_axpy(M->prec, M->p, base + j + 1, hi - j - 1, x[j], ar + (j + 1 - i0), ai + (j + 1 - i0),
                             absval);
                } else {
                    seg_axpy(M->prec, M->p, base + lo, hi - lo, x[j], ar + (lo - i0), ai + (lo - i0), absval);
                }
            }
            for (int64_t i = i0; i < i1; i++) y[i] = CMPLX(ar[i - i0], ai[i - i0]);
        }
        return;
    }
    int cj = op == 'C';
#pragma omp parallel for schedule(dynamic, 16)
    for (int64_t j = 0; j < M->cols; j++) {
        int64_t lo = 0, hi = M->rows;
        col_range(M, j, &lo, &hi);
        int64_t base = j * M->ld;
        zd s = 0;
        if (tri && j >= lo && j < hi) {
            s = mat_elem(M, j, j, cj, absval) * (absval ? cabs(x[j]) : x[j]);
            s += seg_dot(M->prec, M->p, base + lo, j - lo, x + lo, cj, absval);
            s += seg_dot(M->prec, M->p, base + j + 1, hi - j - 1, x + j + 1, cj, absval);
        } else if (hi > lo) {
            s = seg_dot(M->prec, M->p, base + lo, hi - lo, x + lo, cj, absval);
        }
        y[j] = s;
    }
}

// y = S x, S the symmetric (herm: Hermitian) matrix whose `uplo` triangle is stored in M.
static void sym_mv(const mat *M, int herm, const zd *x, zd *y, zd *tmp, int absval) {
    mat T = *M, O = *M;
    T.dmode = herm ? 'R' : 'S';
    O.dmode = 'X';
    mv(&T, 'N', x, y, absval);
    mv(&O, herm ? 'C' : 'T', x, tmp, absval);
    for (int64_t i = 0; i < M->rows; i++) y[i] += tmp[i];
}

static mat full_mat(char prec, const void *p, int64_t rows, int64_t cols) {
    return (mat){.prec = prec, .p = p, .rows = rows, .cols = cols, .ld = rows, .region = 'F', .dmode = 'S'};
}

static mat tri_mat(char prec, const void *p, int64_t n, char uplo, char dmode) {
    return (mat){.prec = prec, .p = p, .rows = n, .cols = n, .ld = n, .region = uplo, .dmode = dmode};
}

// The larger of a and b, NaN when either is: a NaN once seen stays (a plain !(x <= max) test would
// let the next finite element replace it, and a result with a NaN could pass).
static double worse(double a, double b) { return a != a || b != b ? NAN : a > b ? a : b; }

static double vmax_abs(const zd *v, int64_t n) {
    double m = 0;
    for (int64_t i = 0; i < n; i++) {
        double a = cabs(v[i]);
        m = worse(m, a);
    }
    return m;
}

// ||op(M)||_inf (op 'N': rows of M; 'T'/'C': its columns).
static double norm_inf(const mat *M, char op, zd *ones, zd *y) {
    int64_t len = op == 'N' ? M->cols : M->rows;
    for (int64_t i = 0; i < len; i++) ones[i] = 1;
    mv(M, op, ones, y, 1);
    return vmax_abs(y, op == 'N' ? M->rows : M->cols);
}

static double sym_norm_inf(const mat *M, int herm, zd *ones, zd *y, zd *tmp) {
    for (int64_t i = 0; i < M->rows; i++) ones[i] = 1;
    sym_mv(M, herm, ones, y, tmp, 1);
    return vmax_abs(y, M->rows);
}

// op letters of op(A) and of its (conjugate) transpose in syrk/syr2k.
static void rk_ops(const ts_l3_prob *p, char *first, char *second) {
    if (p->trans == 'N') *first = 'N', *second = ts_l3_is_herm(p->r) ? 'C' : 'T';
    else *first = ts_l3_is_herm(p->r) ? 'C' : 'T', *second = 'N';
}

// Random x with |x_j| in [1/2, 1) (real and imaginary parts so for complex), random signs.
static void random_vec(uint64_t key, zd *x, int64_t n, int cplx) {
    for (int64_t i = 0; i < n; i++) {
        double u = ts_uniform_at(key, (uint64_t)(2 * i)), w = ts_uniform_at(key, (uint64_t)(2 * i + 1));
        double re = (u < 0 ? -1 : 1) * (0.5 + fabs(u)), im = (w < 0 ? -1 : 1) * (0.5 + fabs(w));
        x[i] = cplx ? CMPLX(re, im) : re;
    }
}

static double unit_roundoff(char prec) { return (prec == 's' || prec == 'c') ? FLT_EPSILON / 2 : DBL_EPSILON / 2; }

// ---------------------------------------------------------------- verification
//
// For each of the nvec random vectors x (length n, the columns of the result) the check computes
// in double (double complex) arithmetic y from the engine's result and z from the original
// operands, both O(n^2 + n k):
//   symm   y = C x,      z = alpha S (B x) + beta C0 x       (side R: alpha B (S x) + beta C0 x)
//   syrk   y = Csym x,   z = alpha op(A) (op(A)^T x) + beta C0sym x      (herk: ^H)
//   syr2k  y = Csym x,   z = alpha op(A) (op(B)^T x) + alpha' op(B) (op(A)^T x) + beta C0sym x
//   trmm   y = B x,      z = alpha op(T) (B0 x)              (side R: alpha B0 (op(T) x))
//   trsm   y = op(T) (X x),  z = alpha B0 x                  (side R: X (op(T) x))
// where S, Csym, C0sym are built from the stored `uplo` triangle only (Hermitian: the real part of
// the diagonal) and T is the `uplo` triangle (unit diagonal with diag U). The scaled error is
//   err = ||y - z||_inf / (N ||x||_inf ((kk + 2) eps + (2 n + 2 kk + 4) u)),
// N = |alpha| ||op-operands||_inf products + |beta| ||C0||_inf, and for trsm N = ||op(T)||_inf ||X||_inf
// (the residual of the computed solution, ||op(T) X - alpha B0|| relative to ||T|| ||X||), kk the
// length of the inner sums (ka, k, or 2k for syr2k), eps the unit roundoff of the precision and u
// that of double. As for GEMM (ts_gemm_verify.c), a correct result cannot exceed 1 even with
// every rounding error of one sign (backward stability of the routines: |E| <= kk eps |op||op|
// elementwise; TRSM: (T + dT) x = b with |dT| <= ka eps |T|), and random data gives far less. In
// syrk/syr2k the strict other triangle of C must come back unchanged (compared exactly).

struct ts_l3_verify {
    ts_l3_prob p;
    const void *A, *C0;  // the original operands the result is checked against (trsm: A; syrk/syr2k: C0)
    int nvec;
    zd **x, **z;         // the vectors and the expected products (trsm: alpha B0 x)
    double scale;        // N without ||X|| for trsm: ||op(T)||_inf
    double kk;
    zd *t1, *t2, *t3;    // work vectors (length max(m, n, k, ka))
};

void ts_l3_verify_free(ts_l3_verify *cr) {
    if (!cr) return;
    for (int v = 0; v < cr->nvec; v++) {
        if (cr->x) free(cr->x[v]);
        if (cr->z) free(cr->z[v]);
    }
    free(cr->x), free(cr->z);
    free(cr->t1), free(cr->t2), free(cr->t3);
    free(cr);
}

static int check_alloc(const ts_l3_prob *p, int nvec, ts_l3_verify **out) {
    ts_l3_verify *cr = calloc(1, sizeof *cr);
    if (!cr) TS_RAISE(TS_ERR_NOMEM, "out of host memory for the check");
    int64_t len = p->m > p->n ? p->m : p->n;
    if (p->k > len) len = p->k;
    if (p->ka > len) len = p->ka;
    size_t b = sizeof(zd) * (size_t)len;
    cr->nvec = nvec;
    cr->x = calloc((size_t)nvec, sizeof *cr->x), cr->z = calloc((size_t)nvec, sizeof *cr->z);
    if (!cr->x || !cr->z) goto nomem;
    for (int v = 0; v < nvec; v++)
        if (!(cr->x[v] = malloc(b)) || !(cr->z[v] = malloc(b))) goto nomem;
    cr->t1 = malloc(b), cr->t2 = malloc(b), cr->t3 = malloc(b);
    if (!cr->t1 || !cr->t2 || !cr->t3) goto nomem;
    *out = cr;
    return 0;
nomem:
    ts_l3_verify_free(cr);
    return TS_ERROR(TS_ERR_NOMEM, "out of host memory for the check");
}

static void axpy_to(zd *z, zd a, const zd *u, int64_t n) {
    for (int64_t i = 0; i < n; i++) z[i] += a * u[i];
}

// Expected products and the normalization, once per routine, size and precision.
int ts_l3_verify_prepare(const ts_l3_prob *p, const void *Ap, const void *Bp, const void *C0p, int nvec,
                         uint64_t seed, ts_l3_verify **out) {
    *out = NULL;
    if (nvec < 1) TS_RAISE(TS_ERR_ARG, "ts_l3_verify_prepare: nvec %d must be at least 1", nvec);
    if (ts_prec_size(p->prec) == 0) TS_RAISE(TS_ERR_ARG, "ts_l3_verify_prepare: unknown precision '%c'", p->prec);
    ts_l3_verify *cr = NULL;
    TS_CHECK(check_alloc(p, nvec, &cr));
    cr->p = *p, cr->A = Ap, cr->C0 = C0p;
    const zd za = CMPLX(p->za[0], p->za[1]), zb = CMPLX(p->zb[0], p->zb[1]);
    char pr = p->prec;
    int herm = ts_l3_is_herm(p->r), cplx = ts_prec_is_complex(pr);
    zd *t1 = cr->t1, *t2 = cr->t2, *t3 = cr->t3;
    for (int v = 0; v < nvec; v++)
        random_vec(ts_mix64(seed ^ 0xc4ec3ULL ^ (uint64_t)v * 7919), cr->x[v], p->n, cplx);
    double aa = cabs(za), ab = cabs(zb);
    if (ts_l3_is_mm(p->r)) {
        mat S = tri_mat(pr, Ap, p->ka, p->uplo, 'S'), B = full_mat(pr, Bp, p->m, p->n),
            C0 = full_mat(pr, C0p, p->m, p->n);
        for (int v = 0; v < nvec; v++) {
            zd *z = cr->z[v];
            if (p->side == 'L') mv(&B, 'N', cr->x[v], t1, 0), sym_mv(&S, herm, t1, t2, t3, 0);
            else sym_mv(&S, herm, cr->x[v], t1, t3, 0), mv(&B, 'N', t1, t2, 0);
            mv(&C0, 'N', cr->x[v], z, 0);
            for (int64_t i = 0; i < p->m; i++) z[i] = za * t2[i] + zb * z[i];
        }
        cr->scale = aa * sym_norm_inf(&S, herm, t1, t2, t3) * norm_inf(&B, 'N', t1, t2) + ab * norm_inf(&C0, 'N', t1, t2);
        cr->kk = (double)p->ka;
    } else if (ts_l3_is_rk(p->r) || ts_l3_is_r2k(p->r)) {
        char f, s;
        rk_ops(p, &f, &s);
        mat A = full_mat(pr, Ap, p->ra, p->ca), C0 = tri_mat(pr, C0p, p->n, p->uplo, 'S');
        mat B = ts_l3_is_r2k(p->r) ? full_mat(pr, Bp, p->rb, p->cb) : A;
        zd a2 = herm ? conj(za) : za;
        for (int v = 0; v < nvec; v++) {
            zd *z = cr->z[v];
            sym_mv(&C0, herm, cr->x[v], z, t3, 0);
            for (int64_t i = 0; i < p->n; i++) z[i] *= zb;
            mv(&B, s, cr->x[v], t1, 0), mv(&A, f, t1, t2, 0);
            axpy_to(z, za, t2, p->n);
            if (ts_l3_is_r2k(p->r)) mv(&A, s, cr->x[v], t1, 0), mv(&B, f, t1, t2, 0), axpy_to(z, a2, t2, p->n);
        }
        double nA = norm_inf(&A, f, t1, t2), nAt = norm_inf(&A, s, t1, t2);
        double nB = norm_inf(&B, f, t1, t2), nBt = norm_inf(&B, s, t1, t2);
        cr->scale = aa * (ts_l3_is_r2k(p->r) ? nA * nBt + nB * nAt : nA * nAt) + ab * sym_norm_inf(&C0, herm, t1, t2, t3);
        cr->kk = (double)p->k * (ts_l3_is_r2k(p->r) ? 2 : 1);
    } else {
        mat T = tri_mat(pr, Ap, p->ka, p->uplo, p->diag == 'U' ? '1' : 'S'), B0 = full_mat(pr, Bp, p->m, p->n);
        for (int v = 0; v < nvec; v++) {
            zd *z = cr->z[v];
            if (p->r == TS_L3_TRSM) mv(&B0, 'N', cr->x[v], z, 0);
            else if (p->side == 'L') mv(&B0, 'N', cr->x[v], t1, 0), mv(&T, p->trans, t1, z, 0);
            else mv(&T, p->trans, cr->x[v], t1, 0), mv(&B0, 'N', t1, z, 0);
            for (int64_t i = 0; i < p->m; i++) z[i] *= za;
        }
        double nT = norm_inf(&T, p->trans, t1, t2);
        cr->scale = p->r == TS_L3_TRSM ? nT : aa * nT * norm_inf(&B0, 'N', t1, t2);
        cr->kk = (double)p->ka;
    }
    *out = cr;
    return 0;
}

// 1 if the strict triangle opposite to uplo of the n x n W equals that of C0 bit for bit.
static int other_triangle_kept(const ts_l3_prob *p, const void *W, const void *C0) {
    size_t es = ts_prec_size(p->prec);
    for (int64_t j = 0; j < p->n; j++) {
        int64_t lo = p->uplo == 'L' ? 0 : j + 1, hi = p->uplo == 'L' ? j : p->n;
        if (hi > lo && memcmp((const char *)W + (size_t)(lo + j * p->n) * es,
                              (const char *)C0 + (size_t)(lo + j * p->n) * es, (size_t)(hi - lo) * es))
            return 0;
    }
    return 1;
}

// The scaled error of the engine's result W (NaN/Inf on non-finite results; Inf when syrk/syr2k
// wrote outside their triangle).
double ts_l3_verify_error(const ts_l3_verify *cr, const void *W0, int *outside) {
    const ts_l3_prob *p = &cr->p;
    const void *A = cr->A, *C0 = cr->C0;
    char pr = p->prec;
    zd *t1 = cr->t1, *t2 = cr->t2, *t3 = cr->t3;
    double worst = 0, nX = 0;
    mat W = ts_l3_is_rk(p->r) || ts_l3_is_r2k(p->r) ? tri_mat(pr, W0, p->n, p->uplo, 'S') : full_mat(pr, W0, p->m, p->n);
    mat T = tri_mat(pr, A, p->ka, p->uplo, p->diag == 'U' ? '1' : 'S');
    *outside = 0;
    if ((ts_l3_is_rk(p->r) || ts_l3_is_r2k(p->r)) && !other_triangle_kept(p, W0, C0)) *outside = 1;
    if (p->r == TS_L3_TRSM) nX = norm_inf(&W, 'N', t1, t2);
    int64_t rows = p->rc;
    for (int v = 0; v < cr->nvec; v++) {
        if (ts_l3_is_rk(p->r) || ts_l3_is_r2k(p->r)) sym_mv(&W, ts_l3_is_herm(p->r), cr->x[v], t2, t3, 0);
        else if (p->r != TS_L3_TRSM) mv(&W, 'N', cr->x[v], t2, 0);
        else if (p->side == 'L') mv(&W, 'N', cr->x[v], t1, 0), mv(&T, p->trans, t1, t2, 0);
        else mv(&T, p->trans, cr->x[v], t1, 0), mv(&W, 'N', t1, t2, 0);
        double d = 0;
        for (int64_t i = 0; i < rows; i++) {
            double e = cabs(t2[i] - cr->z[v][i]);
            d = worse(d, e);
        }
        double N = p->r == TS_L3_TRSM ? cr->scale * nX : cr->scale;
        double den = N * vmax_abs(cr->x[v], p->n) *
                     ((cr->kk + 2) * unit_roundoff(pr) + (2.0 * (double)p->n + 2 * cr->kk + 4) * (DBL_EPSILON / 2));
        double err = den > 0 ? d / den : (d == 0 ? 0 : INFINITY);
        worst = worse(worst, err);
    }
    return *outside ? INFINITY : worst;
}
