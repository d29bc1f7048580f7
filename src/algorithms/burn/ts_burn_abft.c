// ts_burn_abft.c: ABFT for burn: checksum encoding of the operands, the rounding bounds, and locating a wrong element.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/burn/ts_burn.h"

// A passing check's largest deviation names its element only when it is this many times the
// rounding level of the other lines (on rounding alone the largest of N lines is a few times it:
// below 32 in 400 random products of 8-158 lines a side).
#define WORST_CLEAR 64.0

// The bound. Assume a GEMM computes each element as a sum of k products in any order with IEEE
// double rounding (FMA allowed, as cuBLAS DGEMM, FP64 tensor cores, OpenBLAS and the reference
// kernel do): |fl(AB) - AB| <= gamma_k |A||B| elementwise, gamma_t = t u / (1 - t u), u = 2^-53.
// Row check of data row i (p = n data columns, w_j the weights 1 or j + 1, exact integers):
//   true value T_i = sum_j w_j (AB)_ij = (A (B w))_i.
//   (1) sum_j w_j |C^_ij - C_ij|              <= gamma_k r_i,   r_i = (|A| (|B| w))_i
//   (2) rounding of the sum over j in the kernel (any order, a product w_j C^_ij included)
//                                             <= gamma_p sum_j w_j |C^_ij| <= gamma_p (1 + gamma_k) r_i
//   (3) the host's checksum column v^_l = fl(sum_j w_j B_lj): |v^_l - v_l| <= gamma_p (|B| w)_l, so
//       |sum_l A_il v^_l - T_i| <= gamma_p r_i
//   (4) the GEMM's checksum element C^_{i,n} = fl(sum_l A_il v^_l)
//                                             <= gamma_k (1 + gamma_p) r_i
//   => |d_i| <= (2 gamma_k + 2 gamma_p + 2 gamma_k gamma_p) r_i.
// The column checks are the same with p = m and r_j = ((w^T |A|) |B|)_j. We use gamma_{p+2} for
// gamma_p and multiply by 2: the host computes r^_i (sums of nonnegative terms, relative error
// <= gamma_{k+p+1}) and the kernel the product bound * ratio; the factor 2 exceeds
// (1 + gamma_{k+p+3})^2 for any k + p < 2^50. Underflow is not accounted for: gaussian data of
// variance 25 stays far from it. A correct product therefore never has |d| / bound > 1; random
// data gives ratios ~1e-3 (errors grow like sqrt(k) u, the bound like k u).
double ts_burn_gamma(int64_t t) {
    const double u = 0x1p-53;
    double tu = (double)t * u;
    return tu / (1.0 - tu);
}

double ts_burn_tau(int64_t k, int64_t p) {
    double gk = ts_burn_gamma(k), gp = ts_burn_gamma(p + 2);
    return 2.0 * (2.0 * gk + 2.0 * gp + 2.0 * gk * gp);
}

void ts_burn_encode(int64_t m, int64_t n, int64_t k, double *Aa, int64_t lda, double *Ba, int64_t ldb,
                    double *rb, double *rwb, double *cb, double *cwb) {
    // Per inner index l: column sums of |A| (plain and weighted) and row sums of |B|.
    double *aabs = calloc((size_t)k, sizeof(double)), *awabs = calloc((size_t)k, sizeof(double));
    double *babs = calloc((size_t)k, sizeof(double)), *bwabs = calloc((size_t)k, sizeof(double));
    if (!aabs || !awabs || !babs || !bwabs) abort(); // a few vectors of k doubles
    for (int64_t l = 0; l < k; l++) {
        double *a = Aa + l * lda;
        double s = 0, sw = 0, sa = 0, swa = 0;
        for (int64_t i = 0; i < m; i++) {
            double w = (double)(i + 1);
            s += a[i];
            sw += w * a[i];
            sa += fabs(a[i]);
            swa += w * fabs(a[i]);
        }
        a[m] = s;
        a[m + 1] = sw;
        aabs[l] = sa;
        awabs[l] = swa;
    }
    double *bs = Ba + n * ldb, *bws = Ba + (n + 1) * ldb;
    memset(bs, 0, (size_t)k * sizeof(double));
    memset(bws, 0, (size_t)k * sizeof(double));
    for (int64_t j = 0; j < n; j++) {
        const double *b = Ba + j * ldb;
        double w = (double)(j + 1);
        for (int64_t l = 0; l < k; l++) {
            bs[l] += b[l];
            bws[l] += w * b[l];
            babs[l] += fabs(b[l]);
            bwabs[l] += w * fabs(b[l]);
        }
    }
    double tr = ts_burn_tau(k, n), tc = ts_burn_tau(k, m);
    memset(rb, 0, (size_t)m * sizeof(double));
    memset(rwb, 0, (size_t)m * sizeof(double));
    for (int64_t l = 0; l < k; l++) {
        const double *a = Aa + l * lda;
        for (int64_t i = 0; i < m; i++) {
            rb[i] += fabs(a[i]) * babs[l];
            rwb[i] += fabs(a[i]) * bwabs[l];
        }
    }
    for (int64_t i = 0; i < m; i++) {
        rb[i] *= tr;
        rwb[i] *= tr;
    }
    for (int64_t j = 0; j < n; j++) {
        const double *b = Ba + j * ldb;
        double c = 0, cw = 0;
        for (int64_t l = 0; l < k; l++) {
            c += aabs[l] * fabs(b[l]);
            cw += awabs[l] * fabs(b[l]);
        }
        cb[j] = tc * c;
        cwb[j] = tc * cw;
    }
    free(aabs);
    free(awabs);
    free(babs);
    free(bwabs);
}

static double line_ratio(double d, double dw, double b, double bw) {
    double a = fabs(d), aw = fabs(dw);
    if (!isfinite(a) || !isfinite(aw)) return INFINITY;
    double q = b > 0 ? a / b : a == 0 ? 0.0 : INFINITY;
    double qw = bw > 0 ? aw / bw : aw == 0 ? 0.0 : INFINITY;
    return fmax(q, qw);
}

// The other coordinate an element error gives its line: dw / d = index + 1 up to rounding (also
// below the bound, when one element dominates the line); -1 when the ratio is no such index.
static int64_t weighted_index(double d, double dw, int64_t p) {
    double est = dw / d;
    if (!isfinite(est)) return -1;
    double r = nearbyint(est);
    if (fabs(est - r) > 0.25 || r < 1 || r > (double)p) return -1;
    return (int64_t)r - 1;
}

// The other coordinate of an error on one bad line, from its weighted difference: dw / d = w = index
// + 1 for one wrong element. A wrong plain checksum element gives dw = 0 (index p), a wrong
// weighted one d ~ 0 (index p + 1). -1 when the ratio is not an index (several errors on the line).
// The ratio is tried first: near the threshold only the weighted check may fail (its weight
// amplifies the error) while d is still the element's error, not rounding.
static int64_t other_index(double d, double dw, double b, int64_t p) {
    const int64_t k = weighted_index(d, dw, p);
    if (k >= 0) return k;
    const double est = dw / d;
    if (isfinite(est) && fabs(est) <= 0.25) return p; // dw ~ 0: a wrong plain checksum element
    if (fabs(d) <= b) return p + 1;
    return -1;
}

void ts_burn_locate(int64_t m, int64_t n, const double *rd, const double *rwd, const double *cd,
                    const double *cwd, const double *rb, const double *rwb, const double *cb,
                    const double *cwb, ts_burn_location *loc) {
    memset(loc, 0, sizeof *loc);
    loc->row = loc->col = -1;
    int64_t wi = -1, wj = -1;
    double wri = -1, wrj = -1;
    for (int64_t i = 0; i < m; i++) {
        double q = line_ratio(rd[i], rwd[i], rb[i], rwb[i]);
        if (!(q <= 1.0)) {
            loc->bad_rows++;
            double a = isnan(rd[i]) ? INFINITY : fabs(rd[i]);
            if (a > wri) wri = a, wi = i;
        }
        if (!(q <= loc->ratio)) loc->ratio = q;
    }
    for (int64_t j = 0; j < n; j++) {
        double q = line_ratio(cd[j], cwd[j], cb[j], cwb[j]);
        if (!(q <= 1.0)) {
            loc->bad_cols++;
            double a = isnan(cd[j]) ? INFINITY : fabs(cd[j]);
            if (a > wrj) wrj = a, wj = j;
        }
        if (!(q <= loc->ratio)) loc->ratio = q;
    }
    if (wj >= 0) {
        loc->col = wj;
        loc->row = other_index(cd[wj], cwd[wj], cb[wj], m);
        loc->magnitude = fabs(cd[wj]) <= cb[wj] ? cwd[wj] : cd[wj];
    }
    if (wi >= 0) {
        loc->row = wi;
        if (wj < 0) loc->col = other_index(rd[wi], rwd[wi], rb[wi], n);
        loc->magnitude = fabs(rd[wi]) <= rb[wi] ? rwd[wi] : rd[wi];
    }
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

// The median line ratio of rows (or columns): the rounding level of the side an error left alone.
static double median_ratio(int64_t p, const double *d, const double *dw, const double *b, const double *bw) {
    double *q = malloc((size_t)p * sizeof(double));
    if (!q) return INFINITY; // no estimate: name nothing
    for (int64_t i = 0; i < p; i++) q[i] = line_ratio(d[i], dw[i], b[i], bw[i]);
    qsort(q, (size_t)p, sizeof(double), cmp_double);
    double med = q[p / 2];
    free(q);
    return med;
}

void ts_burn_locate_worst(int64_t m, int64_t n, const double *rd, const double *rwd, const double *cd,
                          const double *cwd, const double *rb, const double *rwb, const double *cb,
                          const double *cwb, ts_burn_location *loc) {
    memset(loc, 0, sizeof *loc);
    loc->row = loc->col = -1;
    int64_t wi = -1, wj = -1;
    double best = -1;
    for (int64_t i = 0; i < m; i++) {
        double q = line_ratio(rd[i], rwd[i], rb[i], rwb[i]);
        if (!(q <= 1.0)) loc->bad_rows++;
        if (!(q <= best)) best = q, wi = i, wj = -1;
    }
    for (int64_t j = 0; j < n; j++) {
        double q = line_ratio(cd[j], cwd[j], cb[j], cwb[j]);
        if (!(q <= 1.0)) loc->bad_cols++;
        if (!(q <= best)) best = q, wj = j, wi = -1;
    }
    loc->ratio = best < 0 ? 0 : best;
    // The weighted difference names the other coordinate only for a line that stands well above the
    // rounding of the other side's lines (their median: one wrong element, or a corrupted row of A
    // or column of B, leaves them alone); on rounding alone dw / d is noise, half the time near an
    // integer. With fewer than 8 lines a side there is no such level: nothing is named.
    int clear = 0;
    if (m >= 8 && n >= 8 && (wi >= 0 || wj >= 0)) {
        double level = wi >= 0 ? median_ratio(n, cd, cwd, cb, cwb) : median_ratio(m, rd, rwd, rb, rwb);
        clear = best > WORST_CLEAR * level;
    }
    if (wi >= 0) {
        loc->row = wi;
        loc->col = clear ? weighted_index(rd[wi], rwd[wi], n) : -1;
        loc->magnitude = rd[wi];
    } else if (wj >= 0) {
        loc->col = wj;
        loc->row = clear ? weighted_index(cd[wj], cwd[wj], m) : -1;
        loc->magnitude = cd[wj];
    }
}

// An error e in element (i, j) adds e to row i's and column j's plain differences and (j+1) e,
// (i+1) e to their weighted ones, so the check sees it once |e| exceeds the smallest of the four
// bounds over those weights.
double ts_burn_element_threshold(int64_t m, int64_t n, const double *rb, const double *rwb, const double *cb,
                                 const double *cwb, double *lowest) {
    double hi = 0, lo = INFINITY;
    for (int64_t j = 0; j < n; j++) {
        double wj = 1.0 / (double)(j + 1), cj = cb[j];
        for (int64_t i = 0; i < m; i++) {
            double t = fmin(fmin(rb[i], rwb[i] * wj), fmin(cj, cwb[j] / (double)(i + 1)));
            if (t > hi) hi = t;
            if (t < lo) lo = t;
        }
    }
    if (lowest) *lowest = m > 0 && n > 0 ? lo : 0;
    return hi;
}
