// test_tiles_l3.c: SYMM/HEMM, SYRK/HERK, SYR2K/HER2K, TRMM and TRSM on the tile runtime against the CPU BLAS.
//
// Simulated devices (1-3, small caches), a CPU-only runtime and one with a CPU share, tile 16 on
// problems of 3-6 tiles per side with ragged edges and padded leading dimensions. The reference is
// the CPU BLAS GEMM on explicitly built full matrices (symmetric/Hermitian mirrored, triangular
// zeroed, unit diagonals set), written here independently of the runtime's tile kernels; TRSM is
// compared with the CPU BLAS TRSM. Bounds (elementwise): 3 (K+2) eps (|alpha| K max|a b| + |beta|
// max|c|) for products (K the inner dimension), 30 K eps max|X| for the well-conditioned solves.
// The triangle of C that ?SYRK & co. must not touch, and every padding row, must be bit-identical.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kernels/ts_tile_ops.h"
#include "runtime/ts_tiles_l3.h"
#include "tiles_test.h"
#include "runtime/ts_tiles_internal.h" // rt->trace: the timeline of the forwarding test

#define TT_TILE 16

// The runtimes every case rotates through.
typedef struct {
    ts_devset *sets[5];
    ts_tiles *rt[5];
    int n;
} rts;

static void rts_open(rts *r) {
    memset(r, 0, sizeof *r);
    // 1, 2, 3 devices with small caches (evictions), no CPU worker; no device (CPU worker only);
    // 2 devices and the CPU taking a quarter of the tiles
    const int ndev[5] = {1, 2, 3, 0, 2};
    const double share[5] = {0, 0, 0, TS_TILES_CPU_AUTO, 0.25};
    const double sp[3] = {1.0, 0.5, 0.75};
    for (int i = 0; i < 5; i++) {
        r->sets[i] = tt_open(ndev[i], sp, (size_t)192 << 10, 0, 0);
        assert_non_null(r->sets[i]);
        ts_tiles_opts o = tt_opts(TT_TILE, share[i]);
        // the diagonal TRMM products and TRSM solves split down to order 4 (16 -> 8 -> 4, the
        // off-diagonal blocks by GEMMs) on the two-device runtimes, unsplit on the others
        o.tri_base = ndev[i] == 2 ? 4 : 0;
        assert_int_equal(ts_tiles_create(r->sets[i], &o, &r->rt[i]), 0);
    }
    r->n = 5;
}

static void rts_close(rts *r) {
    for (int i = 0; i < r->n; i++) {
        ts_tiles_destroy(r->rt[i]);
        ts_devset_close(r->sets[i]);
    }
}

// ---------------------------------------------------------------- elements

static double eps_of(char prec) { return (prec == 's' || prec == 'c') ? FLT_EPSILON : DBL_EPSILON; }

static void el_get(char prec, const void *x, int64_t idx, double *re, double *im) {
    *re = tt_get(prec, x, idx, 0);
    *im = tt_get(prec, x, idx, 1);
}

static void el_put(char prec, void *x, int64_t idx, double re, double im) {
    switch (prec) {
    case 's': ((float *)x)[idx] = (float)re; break;
    case 'd': ((double *)x)[idx] = re; break;
    case 'c': ((float *)x)[2 * idx] = (float)re, ((float *)x)[2 * idx + 1] = (float)im; break;
    default: ((double *)x)[2 * idx] = re, ((double *)x)[2 * idx + 1] = im; break;
    }
}

static void *alloc_fill(char prec, int64_t ld, int64_t cols, uint64_t key) {
    size_t bytes = (size_t)(ld * cols) * ts_prec_size(prec);
    void *p = malloc(bytes);
    assert_non_null(p);
    tt_fill(prec, key, p, bytes);
    return p;
}

static void *dup_of(const void *p, size_t bytes) {
    void *q = malloc(bytes);
    assert_non_null(q);
    memcpy(q, p, bytes);
    return q;
}

// Dense n x n copy (ld n) of the matrix the routine sees in A: kind 'S' symmetric, 'H' Hermitian
// (real diagonal), 'T' triangular (diag 'U': ones) from the uplo triangle.
static void *full_of(char prec, char kind, char uplo, char diag, int64_t n, const void *A, int64_t lda) {
    void *F = calloc((size_t)(n * n), ts_prec_size(prec));
    assert_non_null(F);
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < n; i++) {
            int stored = uplo == 'L' ? i >= j : i <= j;
            double re, im;
            if (i == j) {
                el_get(prec, A, i + j * lda, &re, &im);
                if (kind == 'H') im = 0;
                if (kind == 'T' && diag == 'U') re = 1, im = 0;
            } else if (stored) {
                el_get(prec, A, i + j * lda, &re, &im);
            } else if (kind == 'T') {
                re = im = 0;
            } else {
                el_get(prec, A, j + i * lda, &re, &im);
                if (kind == 'H') im = -im;
            }
            el_put(prec, F, i + j * n, re, im);
        }
    return F;
}

// Max over the m x n block of |X - R| / tol, restricted to the uplo triangle ('L'/'U', 0 = all).
static double max_err(char prec, char uplo, int64_t m, int64_t n, const void *X, int64_t ldx, const void *R,
                      int64_t ldr, double tol) {
    double worst = 0;
    int cplx = ts_prec_is_complex(prec);
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) {
            if ((uplo == 'L' && i < j) || (uplo == 'U' && i > j)) continue;
            for (int part = 0; part < (cplx ? 2 : 1); part++) {
                double d = fabs(tt_get(prec, X, i + j * ldx, part) - tt_get(prec, R, i + j * ldr, part));
                if (isnan(d)) d = INFINITY;
                if (d / tol > worst) worst = d / tol;
            }
        }
    return worst;
}

// Elements outside the uplo triangle of the m x n block (uplo 0: none) and every padding row
// (m .. ld-1) must be bit-identical to the original.
static int untouched(char prec, char uplo, int64_t m, int64_t n, const void *X, const void *X0, int64_t ld) {
    size_t es = ts_prec_size(prec);
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < ld; i++) {
            int outside = i >= m || (uplo == 'L' && i < j) || (uplo == 'U' && i > j);
            if (outside && memcmp((const char *)X + (size_t)(i + j * ld) * es, (const char *)X0 + (size_t)(i + j * ld) * es, es))
                return 0;
        }
    return 1;
}

// Bound of a product sum with inner dimension K (operands uniform in [-0.5, 0.5) per component).
static double prod_tol(char prec, int64_t K, const double al[2], const double be[2]) {
    int cplx = ts_prec_is_complex(prec);
    double amax = cplx ? 0.5 : 0.25, cmax = cplx ? 0.75 : 0.5;
    return 3.0 * (double)(K + 2) * eps_of(prec) * (hypot(al[0], al[1]) * (double)K * amax + hypot(be[0], be[1]) * cmax);
}

static void scalars(char prec, const double al[2], const double be[2], unsigned char a[16], unsigned char b[16]) {
    double a2[2] = {al[0], ts_prec_is_complex(prec) ? al[1] : 0}, b2[2] = {be[0], ts_prec_is_complex(prec) ? be[1] : 0};
    tt_scalar(prec, a2, a);
    tt_scalar(prec, b2, b);
}

static void report(const char *what, double e, const ts_tiles_stats *st) {
    if (!(e <= 1.0)) fprintf(stderr, "%s: error %.3g of the bound\n", what, e);
    (void)st;
}

// ---------------------------------------------------------------- SYMM / HEMM

static void run_symm(ts_tiles *rt, char prec, int herm, char side, char uplo, int64_t m, int64_t n, uint64_t seed,
                     int64_t *dev_tiles) {
    size_t es = ts_prec_size(prec);
    int64_t ka = side == 'L' ? m : n, lda = ka + 3, ldb = m + 2, ldc = m + 1;
    void *A = alloc_fill(prec, lda, ka, seed * 5 + 1), *B = alloc_fill(prec, ldb, n, seed * 5 + 2);
    void *C = alloc_fill(prec, ldc, n, seed * 5 + 3);
    void *C0 = dup_of(C, (size_t)(ldc * n) * es), *R = dup_of(C, (size_t)(ldc * n) * es);
    double al[2] = {1.5, -0.5}, be[2] = {0.75, 0.25};
    if (herm) be[1] = 0.25; // HEMM's beta is complex too
    _Alignas(16) unsigned char a[16], b[16];
    scalars(prec, al, be, a, b);
    ts_tiles_stats st;
    int rc = herm ? ts_tiles_hemm(rt, prec, side, uplo, m, n, a, A, lda, B, ldb, b, C, ldc, &st)
                  : ts_tiles_symm(rt, prec, side, uplo, m, n, a, A, lda, B, ldb, b, C, ldc, &st);
    if (rc) fprintf(stderr, "symm: %s\n", ts_error_string());
    assert_int_equal(rc, 0);
    void *F = full_of(prec, herm ? 'H' : 'S', uplo, 'N', ka, A, lda);
    if (side == 'L') ts_gemm_cpu(prec, 'N', 'N', m, n, m, a, F, m, B, ldb, b, R, ldc);
    else ts_gemm_cpu(prec, 'N', 'N', m, n, n, a, B, ldb, F, n, b, R, ldc);
    char what[64];
    snprintf(what, sizeof what, "%cHEMM/SYMM herm=%d side=%c uplo=%c", prec, herm, side, uplo);
    double e = max_err(prec, 0, m, n, C, ldc, R, ldc, prod_tol(prec, ka, al, be));
    report(what, e, &st);
    assert_true(e <= 1.0);
    assert_true(untouched(prec, 0, m, n, C, C0, ldc));
    for (int d = 0; d < st.ndev; d++) *dev_tiles += st.tiles_dev[d];
    free(A), free(B), free(C), free(C0), free(R), free(F);
}

static void test_symm_hemm(void **state) {
    (void)state;
    rts r;
    rts_open(&r);
    const char precs[] = "sdcz", sides[] = "LR", uplos[] = "LU";
    int run = 0;
    int64_t dev_tiles = 0;
    for (int p = 0; p < 4; p++)
        for (int herm = 0; herm < (ts_prec_is_complex(precs[p]) ? 2 : 1); herm++)
            for (int s = 0; s < 2; s++)
                for (int u = 0; u < 2; u++, run++)
                    run_symm(r.rt[run % r.n], precs[p], herm, sides[s], uplos[u], 70, 53, (uint64_t)run + 11, &dev_tiles);
    assert_int_equal(run, 24);
    assert_true(dev_tiles > 0);
    rts_close(&r);
}

// ---------------------------------------------------------------- SYRK / HERK / SYR2K / HER2K

static ts_tiles_stats rank_stats; // the last run_rank's

static void run_rank(ts_tiles *rt, char prec, int herm, int two, char uplo, char trans, int64_t n, int64_t k,
                     uint64_t seed, int beta_zero) {
    size_t es = ts_prec_size(prec);
    int64_t ra = trans == 'N' ? n : k, ca = trans == 'N' ? k : n, lda = ra + 2, ldc = n + 3;
    void *A = alloc_fill(prec, lda, ca, seed * 7 + 1), *B = alloc_fill(prec, lda, ca, seed * 7 + 2);
    void *C = alloc_fill(prec, ldc, n, seed * 7 + 3);
    void *C0 = dup_of(C, (size_t)(ldc * n) * es), *R = dup_of(C, (size_t)(ldc * n) * es);
    double al[2] = {1.25, two ? 0.5 : 0}, be[2] = {beta_zero ? 0 : 0.75, 0};
    if (!herm && ts_prec_is_complex(prec)) al[1] = -0.5, be[1] = beta_zero ? 0 : 0.25;
    _Alignas(16) unsigned char a[16], b[16];
    scalars(prec, al, be, a, b);
    // ?HERK takes real alpha and beta, ?HER2K a real beta (the precision's real type)
    _Alignas(16) unsigned char ar[16], br[16];
    tt_scalar(prec == 'c' ? 's' : 'd', al, ar);
    tt_scalar(prec == 'c' ? 's' : 'd', be, br);
    const void *pa = herm && !two ? ar : a, *pb = herm ? br : b;
    ts_tiles_stats st;
    int rc = two ? (herm ? ts_tiles_her2k : ts_tiles_syr2k)(rt, prec, uplo, trans, n, k, pa, A, lda, B, lda, pb, C, ldc, &st)
                 : (herm ? ts_tiles_herk : ts_tiles_syrk)(rt, prec, uplo, trans, n, k, pa, A, lda, pb, C, ldc, &st);
    if (rc) fprintf(stderr, "rank-k: %s\n", ts_error_string());
    assert_int_equal(rc, 0);
    // reference on the full C: alpha op(A) op(B)^T (+ alpha2 op(B) op(A)^T) + beta C0
    char t = herm ? 'C' : 'T', ta = trans == 'N' ? 'N' : t, tb = trans == 'N' ? t : 'N';
    if (beta_zero) memset(R, 0, (size_t)(ldc * n) * es);
    ts_gemm_cpu(prec, ta, tb, n, n, k, a, A, lda, two ? B : A, lda, b, R, ldc);
    if (two) {
        double al2[2] = {al[0], herm ? -al[1] : al[1]}, one[2] = {1, 0};
        _Alignas(16) unsigned char a2[16], o[16];
        scalars(prec, al2, one, a2, o);
        ts_gemm_cpu(prec, ta, tb, n, n, k, a2, B, lda, A, lda, o, R, ldc);
    }
    if (herm) // the reference ?HERK/?HER2K leave a real diagonal
        for (int64_t i = 0; i < n; i++) {
            double re, im;
            el_get(prec, R, i + i * ldc, &re, &im);
            el_put(prec, R, i + i * ldc, re, 0);
            el_get(prec, C, i + i * ldc, &re, &im);
            assert_true(im == 0);
        }
    char what[80];
    snprintf(what, sizeof what, "%c %s herm=%d uplo=%c trans=%c beta0=%d", prec, two ? "SYR2K" : "SYRK", herm, uplo,
             trans, beta_zero);
    double e = max_err(prec, uplo, n, n, C, ldc, R, ldc, prod_tol(prec, two ? 2 * k : k, al, be));
    report(what, e, &st);
    assert_true(e <= 1.0);
    if (!untouched(prec, uplo, n, n, C, C0, ldc)) fprintf(stderr, "%s: the other triangle was written\n", what);
    assert_true(untouched(prec, uplo, n, n, C, C0, ldc));
    rank_stats = st;
    free(A), free(B), free(C), free(C0), free(R);
}

static void rank_cases(int two) {
    rts r;
    rts_open(&r);
    const char precs[] = "sdcz", uplos[] = "LU";
    int run = 0;
    for (int p = 0; p < 4; p++) {
        int cplx = ts_prec_is_complex(precs[p]);
        for (int herm = 0; herm < (cplx ? 2 : 1); herm++) {
            const char *trans = herm ? "NC" : cplx ? "NT" : "NTC";
            for (int u = 0; u < 2; u++)
                for (const char *t = trans; *t; t++, run++)
                    run_rank(r.rt[run % r.n], precs[p], herm, two, uplos[u], *t, 75, 41, (uint64_t)run + 101 + 50 * two,
                             run % 5 == 2);
        }
    }
    assert_int_equal(run, 2 * 3 * 2 + 2 * 2 * 2 * 2);
    rts_close(&r);
}

static void test_syrk_herk(void **state) {
    (void)state;
    rank_cases(0);
}

static void test_syr2k_her2k(void **state) {
    (void)state;
    rank_cases(1);
}

// ---------------------------------------------------------------- TRMM / TRSM

// A triangular matrix whose solves are well conditioned: off-diagonal entries scaled by 1/n, the
// diagonal in [1, 1.5) (or unit).
static void condition(char prec, int64_t n, void *A, int64_t lda) {
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < n; i++) {
            double re, im;
            el_get(prec, A, i + j * lda, &re, &im);
            if (i == j) el_put(prec, A, i + j * lda, 1.25 + re / 2, im / 2);
            else el_put(prec, A, i + j * lda, re / (double)n, im / (double)n);
        }
}

static ts_tiles_stats tri_stats; // the last run_tri's

static void run_tri(ts_tiles *rt, char prec, int solve, char side, char uplo, char ta, char diag, int64_t m,
                    int64_t n, uint64_t seed) {
    size_t es = ts_prec_size(prec);
    int64_t ka = side == 'L' ? m : n, lda = ka + 1, ldb = m + 3;
    void *A = alloc_fill(prec, lda, ka, seed * 3 + 1), *B = alloc_fill(prec, ldb, n, seed * 3 + 2);
    if (solve) condition(prec, ka, A, lda);
    void *B0 = dup_of(B, (size_t)(ldb * n) * es), *R = dup_of(B, (size_t)(ldb * n) * es);
    double al[2] = {1.5, ts_prec_is_complex(prec) ? -0.5 : 0}, be0[2] = {0, 0};
    _Alignas(16) unsigned char a[16], z[16];
    scalars(prec, al, be0, a, z);
    ts_tiles_stats st;
    int rc = (solve ? ts_tiles_trsm : ts_tiles_trmm)(rt, prec, side, uplo, ta, diag, m, n, a, A, lda, B, ldb, &st);
    if (rc) fprintf(stderr, "tri: %s\n", ts_error_string());
    assert_int_equal(rc, 0);
    double tol;
    if (solve) {
        assert_int_equal(ts_trsm_cpu(prec, side, uplo, ta, diag, m, n, a, A, lda, R, ldb), 0);
        double xmax = 0;
        for (int64_t j = 0; j < n; j++)
            for (int64_t i = 0; i < m; i++) {
                double re, im;
                el_get(prec, R, i + j * ldb, &re, &im);
                if (hypot(re, im) > xmax) xmax = hypot(re, im);
            }
        tol = 30.0 * (double)ka * eps_of(prec) * xmax;
    } else {
        void *F = full_of(prec, 'T', uplo, diag, ka, A, lda);
        if (side == 'L') ts_gemm_cpu(prec, ta, 'N', m, n, m, a, F, m, B0, ldb, z, R, ldb);
        else ts_gemm_cpu(prec, 'N', ta, m, n, n, a, B0, ldb, F, n, z, R, ldb);
        free(F);
        tol = prod_tol(prec, ka, al, be0);
    }
    char what[80];
    snprintf(what, sizeof what, "%c %s side=%c uplo=%c trans=%c diag=%c", prec, solve ? "TRSM" : "TRMM", side, uplo, ta,
             diag);
    double e = max_err(prec, 0, m, n, B, ldb, R, ldb, tol);
    report(what, e, &st);
    tri_stats = st;
    assert_true(e <= 1.0);
    assert_true(untouched(prec, 0, m, n, B, B0, ldb));
    free(A), free(B), free(B0), free(R);
}

static void tri_cases(int solve) {
    rts r;
    rts_open(&r);
    const char precs[] = "sdcz", sides[] = "LR", uplos[] = "LU", trans[] = "NTC", diags[] = "NU";
    int run = 0;
    for (int p = 0; p < 4; p++)
        for (int s = 0; s < 2; s++)
            for (int u = 0; u < 2; u++)
                for (int t = 0; t < 3; t++)
                    for (int d = 0; d < 2; d++, run++)
                        run_tri(r.rt[run % r.n], precs[p], solve, sides[s], uplos[u], trans[t], diags[d], 67, 58,
                                (uint64_t)run + 301 + 500 * solve);
    assert_int_equal(run, 96);
    rts_close(&r);
}

static void test_trmm(void **state) {
    (void)state;
    tri_cases(0);
}

static void test_trsm(void **state) {
    (void)state;
    tri_cases(1);
}

// ---------------------------------------------------------------- runtime behaviour

// Chain forwarding (opts.forward): on one paced device (a tile product 4 ms, a tile copy 2 ms),
// TRMM and TRSM, left lower, on one column of 4 tiles: one chain (TRMM: i from the bottom, TRSM:
// from the top; task id = position, predecessor = id - 1), so that the device has nothing else to
// do while a write-back runs. Without forwarding no task's first GEMM starts before its
// predecessor's write-back ended (the scheduler waits for it); with forwarding some do (the next
// task is queued behind the predecessor on the compute stream), and TRSM reads the solved tiles
// from the cache where they were computed: 3 solved tiles are no longer loaded from the host.
static void test_forward(void **state) {
    (void)state;
    const int64_t T = TT_TILE, m = 4 * T, n = T;
    size_t h2d[2][2] = {{0}};
    for (int solve = 0; solve < 2; solve++)
        for (int fwd = 0; fwd < 2; fwd++) {
            // 0.002 GFLOP/s: a 16^3 product (8192 flops) takes 4 ms; 0.001 GB/s: a 2 KiB tile 2 ms
            ts_devset *s = tt_open(1, NULL, 0, 0.002, 0.001);
            assert_non_null(s);
            ts_tiles_opts o = tt_opts(TT_TILE, 0);
            o.forward = fwd;
            o.trace = 1;
            ts_tiles *rt = NULL;
            assert_int_equal(ts_tiles_create(s, &o, &rt), 0);
            run_tri(rt, 'd', solve, 'L', 'L', 'N', 'N', m, n, 900 + (uint64_t)solve);
            h2d[solve][fwd] = tri_stats.bytes_h2d;
            int early = 0, pairs = 0;
            for (int r = 0; r < rt->ntrace; r++) {
                const tl_trace_rec *x = &rt->trace[r];
                if (x->task == 0) continue; // the head of the chain
                for (int q = 0; q < rt->ntrace; q++) {
                    const tl_trace_rec *p = &rt->trace[q];
                    if (p->task != x->task - 1) continue;
                    assert_true(x->t[2] > 0 && p->t[5] > 0);
                    pairs++;
                    early += x->t[2] < p->t[5];
                }
            }
            fprintf(stderr, "%s forward=%d: %d of %d tasks began before their predecessor's write-back ended; "
                            "H2D %zu bytes\n", solve ? "TRSM" : "TRMM", fwd, early, pairs, tri_stats.bytes_h2d);
            assert_int_equal(pairs, 3);
            if (fwd) assert_true(early > 0);
            else assert_int_equal(early, 0);
            ts_tiles_destroy(rt);
            ts_devset_close(s);
        }
    assert_true(h2d[0][0] == h2d[0][1]);
    assert_true(h2d[1][0] - h2d[1][1] == (size_t)3 * (size_t)(T * T) * sizeof(double));
    // Two devices, 4 chains (TRMM and TRSM on 5 x 4 tiles): each device holds at most its share of
    // the chains (2), so with forwarding and 4 tiles in flight neither takes every chain's head at
    // the start and keeps them (forwarding each chain's next task to itself) while the other idles;
    // each does at least one chain (5 tiles). Paced so that the call lasts ~0.5 s even when one
    // device does all of it: the other worker thread must be scheduled before the first finishes
    // its two chains (at 0.1 GFLOP/s the call took ~5 ms, and on a loaded 2-core CI machine under
    // ASan one worker thread once took every tile before the other was scheduled; 0.005 GFLOP/s,
    // ~50 ms, is within what a machine with a load average of 20 and more can keep a thread waiting).
    ts_devset *s = tt_open(2, NULL, 0, 0.0005, 0);
    assert_non_null(s);
    ts_tiles_opts o = tt_opts(TT_TILE, 0);
    o.depth = 4;
    ts_tiles *rt = NULL;
    assert_int_equal(ts_tiles_create(s, &o, &rt), 0);
    for (int solve = 0; solve < 2; solve++) {
        run_tri(rt, 'd', solve, 'L', 'L', 'N', 'N', 5 * T, 4 * T, 903 + (uint64_t)solve);
        fprintf(stderr, "%s on 2 devices: %lld and %lld of 20 tiles\n", solve ? "TRSM" : "TRMM",
                (long long)tri_stats.tiles_dev[0], (long long)tri_stats.tiles_dev[1]);
        assert_true(tri_stats.tiles_dev[0] >= 5 && tri_stats.tiles_dev[1] >= 5);
    }
    ts_tiles_destroy(rt);
    ts_devset_close(s);
}

// The CPU worker on auto beside two slow paced devices (0.5 GFLOP/s each, tile 128): it takes no
// task of a TRMM/TRSM chain (every later tile of the chain would wait for the CPU's), while on a
// SYMM of the same shape in the same runtime, where nothing waits for its tile, it takes some. The
// results are checked as everywhere else.
static void test_cpu_auto_chains(void **state) {
    (void)state;
    ts_devset *s = tt_open(2, NULL, 0, 0.5, 4.0);
    assert_non_null(s);
    ts_tiles_opts o = tt_opts(128, TS_TILES_CPU_AUTO);
    ts_tiles *rt = NULL;
    assert_int_equal(ts_tiles_create(s, &o, &rt), 0);
    for (int solve = 0; solve < 2; solve++) {
        run_tri(rt, 'd', solve, 'L', 'L', 'N', 'N', 1024, 768, 951 + (uint64_t)solve);
        fprintf(stderr, "%s, CPU auto: CPU %lld of %lld tiles\n", solve ? "TRSM" : "TRMM", (long long)tri_stats.tiles_cpu,
                (long long)tri_stats.tiles);
        assert_int_equal(tri_stats.tiles, 8 * 6);
        assert_int_equal(tri_stats.tiles_cpu, 0);
        assert_int_equal(tri_stats.tiles_dev[0] + tri_stats.tiles_dev[1], tri_stats.tiles);
    }
    int64_t dev_tiles = 0;
    run_symm(rt, 'd', 0, 'L', 'L', 1024, 768, 953, &dev_tiles);
    fprintf(stderr, "SYMM, CPU auto: devices %lld of 48 tiles\n", (long long)dev_tiles);
    assert_true(dev_tiles < 48);
    ts_tiles_destroy(rt);
    ts_devset_close(s);
}

// Many tiles through one small cache: evictions happen, every tile is on a device, and the result
// is still right (double SYRK, 12x12 tiles of C's lower triangle).
static void test_evictions_and_devices(void **state) {
    (void)state;
    ts_devset *s = tt_open(2, NULL, (size_t)96 << 10, 0, 0);
    assert_non_null(s);
    ts_tiles_opts o = tt_opts(TT_TILE, 0);
    ts_tiles *rt = NULL;
    assert_int_equal(ts_tiles_create(s, &o, &rt), 0);
    int64_t n = 190, k = 150, ldc = n;
    double *A = alloc_fill('d', n, k, 77), *C = alloc_fill('d', ldc, n, 78);
    double *C0 = dup_of(C, sizeof(double) * (size_t)(ldc * n)), *R = dup_of(C, sizeof(double) * (size_t)(ldc * n));
    double al = 0.5, be = -1.0;
    ts_tiles_stats st;
    assert_int_equal(ts_tiles_syrk(rt, 'd', 'L', 'N', n, k, &al, A, n, &be, C, ldc, &st), 0);
    assert_int_equal(st.tiles, 12 * 13 / 2);
    assert_int_equal(st.tiles_dev[0] + st.tiles_dev[1], st.tiles);
    assert_true(st.evictions > 0);
    ts_gemm_cpu('d', 'N', 'T', n, n, k, &al, A, n, A, n, &be, R, ldc);
    double a2[2] = {al, 0}, b2[2] = {be, 0};
    assert_true(max_err('d', 'L', n, n, C, ldc, R, ldc, prod_tol('d', k, a2, b2)) <= 1.0);
    assert_true(untouched('d', 'L', n, n, C, C0, ldc));
    free(A), free(C), free(C0), free(R);
    ts_tiles_destroy(rt);
    ts_devset_close(s);
}

// The diagonal C tiles of ?SYRK/?SYR2K go through the rank-k (2k) kernels on their triangle
// (opts.diag_rank): the device's kernel flops are what the tile products say, exactly (n = 4
// tiles, k = 2 tiles: 6 off-diagonal tiles of GEMMs 2 T^3 and 4 diagonal ones of T (T + 1) T per
// k-tile and term), against the whole-tile GEMMs with diag_rank 0; both results are checked.
static void test_diag_rank(void **state) {
    (void)state;
    const int64_t T = TT_TILE, n = 4 * T, k = 2 * T;
    const double gemm = 2.0 * T * T * T, rank = (double)T * (T + 1) * T;
    for (int two = 0; two < 2; two++)
        for (int on = 0; on < 2; on++) {
            ts_devset *s = tt_open(1, NULL, 0, 0, 0);
            assert_non_null(s);
            ts_tiles_opts o = tt_opts(TT_TILE, 0);
            o.diag_rank = on;
            ts_tiles *rt = NULL;
            assert_int_equal(ts_tiles_create(s, &o, &rt), 0);
            ts_device_counters c0, c1;
            ts_device_counters_get(ts_devset_device(s, 0), &c0);
            run_rank(rt, 'd', 0, two, 'U', 'N', n, k, 90 + (uint64_t)two, 0); // checks result and other triangle
            ts_device_counters_get(ts_devset_device(s, 0), &c1);
            double want = (two ? 2 : 1) * 2 * (on ? 6 * gemm + 4 * rank : 10 * gemm);
            fprintf(stderr, "diag_rank=%d %s: kernel flops %.0f (expected %.0f)\n", on, two ? "SYR2K" : "SYRK",
                    c1.kernel_flops - c0.kernel_flops, want);
            assert_true(c1.kernel_flops - c0.kernel_flops == want);
            ts_tiles_destroy(rt);
            ts_devset_close(s);
        }
}

// The diagonal C tiles' triangle goes back by one kernel writing host C (a device that maps host
// memory) or by one copy per column (one that does not: TESSERA_SIM_UNMAPPED, as a CUDA device with
// C not registered). SYRK on 4 x 4 tiles, both triangles: the same results either way, the other
// triangle untouched, and the device's counters say which path ran: 4 tiles x T column copies
// instead of 4 kernels.
static void test_diag_writeback(void **state) {
    (void)state;
    const int64_t T = TT_TILE, n = 4 * T, k = 2 * T;
    for (int u = 0; u < 2; u++) {
        char uplo = u ? 'U' : 'L';
        long copies[2], kernels[2];
        for (int unmapped = 0; unmapped < 2; unmapped++) {
            ts_devset_opts so = tt_set_opts(1, NULL, 0, 0, 0);
            so.sim_unmapped = unmapped;
            ts_devset *s = tt_open_opts(&so);
            assert_non_null(s);
            assert_int_equal(ts_device_props_of(ts_devset_device(s, 0))->host_mapped, !unmapped);
            ts_tiles_opts o = tt_opts(TT_TILE, 0);
            ts_tiles *rt = NULL;
            assert_int_equal(ts_tiles_create(s, &o, &rt), 0);
            ts_device_counters c0, c1;
            ts_device_counters_get(ts_devset_device(s, 0), &c0);
            run_rank(rt, 'd', 0, 0, uplo, 'N', n, k, 60 + (uint64_t)u, 0); // checks result and other triangle
            ts_device_counters_get(ts_devset_device(s, 0), &c1);
            copies[unmapped] = c1.copies - c0.copies, kernels[unmapped] = c1.kernels - c0.kernels;
            ts_tiles_destroy(rt);
            ts_devset_close(s);
        }
        fprintf(stderr, "SYRK %c: mapped %ld copies %ld kernels, unmapped %ld copies %ld kernels\n", uplo, copies[0],
                kernels[0], copies[1], kernels[1]);
        assert_int_equal(copies[1] - copies[0], 4 * T);
        assert_int_equal(kernels[0] - kernels[1], 4);
    }
}

// TRMM's diagonal products by ?trmm on the block's triangle (opts.diag_trmm): on 4 x 4 tiles (left
// lower, no transpose) every tile column has 6 off-diagonal GEMMs (2 T^3) and 4 diagonal products
// of T^3 flops, against 10 GEMMs plus the cut of the 4 diagonal blocks (T^2 each) with diag_trmm 0;
// the device's kernel flops say which ran, and both results are checked (run_tri).
static void test_diag_trmm(void **state) {
    (void)state;
    const int64_t T = TT_TILE, n = 4 * T;
    const double t3 = (double)T * T * T;
    for (int on = 0; on < 2; on++) {
        ts_devset *s = tt_open(1, NULL, 0, 0, 0);
        assert_non_null(s);
        ts_tiles_opts o = tt_opts(TT_TILE, 0);
        o.diag_trmm = on;
        ts_tiles *rt = NULL;
        assert_int_equal(ts_tiles_create(s, &o, &rt), 0);
        ts_device_counters c0, c1;
        ts_device_counters_get(ts_devset_device(s, 0), &c0);
        run_tri(rt, 'd', 0, 'L', 'L', 'N', 'N', n, n, 950 + (uint64_t)on);
        ts_device_counters_get(ts_devset_device(s, 0), &c1);
        double want = on ? 4 * (6 * 2 * t3 + 4 * t3) : 4 * 10 * 2 * t3 + 4.0 * T * T;
        fprintf(stderr, "diag_trmm=%d: kernel flops %.0f (expected %.0f)\n", on, c1.kernel_flops - c0.kernel_flops, want);
        assert_true(c1.kernel_flops - c0.kernel_flops == want);
        ts_tiles_destroy(rt);
        ts_devset_close(s);
    }
}

// Reference argument positions and the quick returns (alpha == 0 scales C; k == 0, beta == 1 leaves it).
static void test_args_and_quick_returns(void **state) {
    (void)state;
    assert_int_equal(ts_symm_check_args('X', 'L', 1, 1, 1, 1, 1), 1);
    assert_int_equal(ts_symm_check_args('L', 'X', 1, 1, 1, 1, 1), 2);
    assert_int_equal(ts_symm_check_args('L', 'L', -1, 1, 1, 1, 1), 3);
    assert_int_equal(ts_symm_check_args('R', 'U', 4, 5, 4, 4, 4), 7);
    assert_int_equal(ts_symm_check_args('L', 'U', 4, 5, 4, 3, 4), 9);
    assert_int_equal(ts_symm_check_args('L', 'U', 4, 5, 4, 4, 3), 12);
    assert_int_equal(ts_syrk_check_args('z', 0, 'L', 'C', 1, 1, 1, 1), 2);
    assert_int_equal(ts_syrk_check_args('z', 1, 'L', 'T', 1, 1, 1, 1), 2);
    assert_int_equal(ts_syrk_check_args('d', 0, 'L', 'C', 1, 1, 1, 1), 0);
    assert_int_equal(ts_syrk_check_args('d', 0, 'L', 'T', 4, 6, 5, 4), 7);
    assert_int_equal(ts_syrk_check_args('d', 0, 'L', 'N', 4, -1, 5, 4), 4);
    assert_int_equal(ts_syr2k_check_args('d', 0, 'U', 'N', 4, 6, 4, 3, 4), 9);
    assert_int_equal(ts_syr2k_check_args('c', 1, 'U', 'N', 4, 6, 4, 4, 3), 12);
    ts_devset *s = tt_open(1, NULL, 0, 0, 0);
    assert_non_null(s);
    ts_tiles_opts o = tt_opts(TT_TILE, 0);
    ts_tiles *rt = NULL;
    assert_int_equal(ts_tiles_create(s, &o, &rt), 0);
    double A[16], C[16], C0[16], al = 0, be = 2.0, one = 1.0;
    tt_fill('d', 5, A, sizeof A);
    tt_fill('d', 6, C, sizeof C);
    memcpy(C0, C, sizeof C);
    assert_int_equal(ts_tiles_syrk(rt, 'd', 'U', 'N', 4, 4, &al, A, 4, &be, C, 4, NULL), 0);
    for (int j = 0; j < 4; j++)
        for (int i = 0; i < 4; i++) assert_true(C[i + 4 * j] == (i <= j ? 2.0 * C0[i + 4 * j] : C0[i + 4 * j]));
    memcpy(C, C0, sizeof C);
    assert_int_equal(ts_tiles_syrk(rt, 'd', 'U', 'N', 4, 0, &one, A, 4, &one, C, 4, NULL), 0);
    assert_memory_equal(C, C0, sizeof C);
    assert_int_equal(ts_tiles_trsm(rt, 'd', 'L', 'L', 'N', 'X', 4, 4, &one, A, 4, C, 4, NULL), TS_ERR_ARG);
    assert_int_equal(ts_tiles_trmm(rt, 'd', 'L', 'L', 'N', 'N', 4, 4, &al, A, 4, C, 4, NULL), 0);
    for (int i = 0; i < 16; i++) assert_true(C[i] == 0.0);
    assert_int_equal(ts_tiles_herk(rt, 'd', 'L', 'N', 4, 4, &one, A, 4, &one, C, 4, NULL), TS_ERR_ARG);
    ts_error_clear();
    ts_tiles_destroy(rt);
    ts_devset_close(s);
}

// trans_prep: ?SYRK/?SYR2K with trans 'N' read their transposed operands from transposed copies
// (two devices, 12 x 12 tiles of 64, k = 12 tiles, full tiles only, and one case with edge tiles).
// The copies come from each device's plain copy (transposes > 0), so the host loads stay those of
// the plain run (within 10%: the order of the loads differs), and the results are checked as
// everywhere else (real and complex, both triangles, SYR2K).
static void test_trans_prep(void **state) {
    (void)state;
    ts_devset *s = tt_open(2, NULL, 0, 0, 0);
    assert_non_null(s);
    const int64_t T = 64;
    struct { char prec; int two; char uplo; int64_t n, k; } cs[] = {
        {'d', 0, 'L', 12 * T, 12 * T}, {'d', 1, 'U', 12 * T, 12 * T}, {'z', 0, 'U', 6 * T, 6 * T}, {'d', 0, 'L', 700, 650}};
    for (size_t q = 0; q < sizeof cs / sizeof cs[0]; q++) {
        size_t h2d[2];
        int64_t tr[2];
        for (int on = 0; on < 2; on++) {
            ts_tiles_opts o = tt_opts(T, 0);
            o.trans_prep = on;
            ts_tiles *rt = NULL;
            assert_int_equal(ts_tiles_create(s, &o, &rt), 0);
            run_rank(rt, cs[q].prec, 0, cs[q].two, cs[q].uplo, 'N', cs[q].n, cs[q].k, 300 + q, 0);
            h2d[on] = rank_stats.bytes_h2d, tr[on] = rank_stats.transposes;
            ts_tiles_destroy(rt);
        }
        fprintf(stderr, "%c %s %c n=%lld k=%lld: transposes %lld, host bytes %.3f of the plain run's\n", cs[q].prec,
                cs[q].two ? "SYR2K" : "SYRK", cs[q].uplo, (long long)cs[q].n, (long long)cs[q].k, (long long)tr[1],
                (double)h2d[1] / (double)h2d[0]);
        assert_int_equal(tr[0], 0);
        assert_true(tr[1] > 0);
        assert_true((double)h2d[1] <= 1.10 * (double)h2d[0]);
    }
    ts_devset_close(s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_symm_hemm),      cmocka_unit_test(test_syrk_herk),
        cmocka_unit_test(test_syr2k_her2k),    cmocka_unit_test(test_trmm),
        cmocka_unit_test(test_trsm),           cmocka_unit_test(test_cpu_auto_chains),
        cmocka_unit_test(test_evictions_and_devices),
        cmocka_unit_test(test_diag_rank),      cmocka_unit_test(test_diag_trmm),
        cmocka_unit_test(test_diag_writeback),
        cmocka_unit_test(test_forward),
        cmocka_unit_test(test_args_and_quick_returns),
        cmocka_unit_test(test_trans_prep),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
