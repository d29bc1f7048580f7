// test_gpu_sgemm.c: engine tessera for 's', 'c', 'z' (own FP32 SGEMM; CGEMM/ZGEMM by 4M on our real kernels) against the CPU BLAS on a real GPU (skips without one).
//
// Every case draws fresh data in [-0.5, 0.5) (never zero; the run's seed is printed, TESSERA_TEST_SEED
// repeats it), fills the padding rows of A, B and C (ld > rows) with NaN so that reading them shows,
// poisons all of C with NaN when beta == 0, and computes the reference in double precision by the
// CPU BLAS from the same (exactly representable) inputs. Checks, per case:
//   1. every element of C inside m x n is finite and every padding element is still NaN;
//   2. every real and imaginary part against the reference:
//        err = max |C - C_ref| / ((k + 5) u S_ij)  <=  BOUND = 2,
//      u the unit roundoff of the precision (2^-24, 2^-53) and
//        S = |alpha|_1 (|op(A)|_1 |op(B)|_1) + |beta|_1 |C0|_1   (|x|_1 = |re| + |im| elementwise).
//      A part of a k-term FMA dot product scaled by alpha plus beta C0 errs by at most
//      gamma_(k+2) S; 4M adds one rounding where the second real product is added (Cr = ArBr - AiBi)
//      and at most three in the complex combine, so gamma_(k+5) S bounds every part. The double
//      reference carries at most the same error for 'z' (hence 2), negligibly little for 's' and
//      'c'. Random data lands near 1e-2.
//   3M (TESSERA_CPLX_SCHEME=3m): the imaginary part errs by at most
//        gamma_(k+4) ((|Ar| + |Ai|)(|Br| + |Bi|) + |Ar||Br| + |Ai||Bi|) <= gamma_(2k+8) |op(A)|_1 |op(B)|_1
//      before alpha and beta (Higham 1992), three roundings after: (2k+11) u S, plus the reference's
//      (k+2) u S for 'z': (3k+13) u S < 3 (k+5) u S, hence BOUND_3M = 3.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/ts_error.h"
#include "device/ts_device.h"
#include "kernels/ts_kernels.h"
#include "ts_config.h"
#if TS_HAVE_CUDA
#include "kernels/cuda/ts_cuda_kernels.h"
#endif

#define BOUND 2.0
#define BOUND_3M 3.0
#define ARENA ((size_t)4 << 30)

static ts_devset *g_set;
static uint64_t g_seed;
static int g_three; // complex cases run by 3M

#define OK(expr)                                                                                   \
    do {                                                                                           \
        int rc_ = (expr);                                                                          \
        if (rc_ != 0) fail_msg("%s = %d: %s", #expr, rc_, ts_error_string());                      \
    } while (0)

static int setup(void **state) {
    if (ts_cuda_device_count() == 0) {
        printf("# no CUDA device visible (or a build without CUDA): these tests skip\n");
        return 0;
    }
    const char *s = getenv("TESSERA_TEST_SEED");
    g_seed = s && *s ? strtoull(s, NULL, 0) : (uint64_t)time(NULL);
    printf("# data seed %llu (TESSERA_TEST_SEED=%llu repeats this run)\n", (unsigned long long)g_seed,
           (unsigned long long)g_seed);
    ts_devset_opts o;
    if (ts_devset_opts_init(&o) < 0) return -1;
    o.backend = TS_BACKEND_CUDA;
    o.max_devices = 1;
    o.arena_bytes = ARENA;
    if (ts_devset_open(&o, &g_set) < 0) {
        printf("# ts_devset_open: %s\n", ts_error_string());
        return -1;
    }
    return 0;
}

static int teardown(void **state) {
    if (g_set) ts_devset_close(g_set);
    return 0;
}

static uint64_t mix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}
// Uniform in [-0.5, 0.5) with 24 significant bits (exact in float), never zero.
static double rnd(uint64_t key, uint64_t i) {
    double v = (double)(mix64(mix64(key ^ g_seed) + i) >> 40) * 0x1p-24 - 0.5;
    return v == 0 ? 0.25 : v;
}

static int is_cplx(char prec) { return prec == 'c' || prec == 'z'; }
static int is_single(char prec) { return prec == 's' || prec == 'c'; }

// Host matrices are kept as doubles (re, im interleaved for complex): h[(i + j ld) cw + part].
typedef struct {
    int64_t rows, cols, ld;
    int cw; // 1 real, 2 complex
    double *h;
} hmat;

static hmat hmat_fill(char prec, int64_t rows, int64_t cols, int64_t ld, uint64_t key, int all_nan) {
    hmat x = {rows, cols, ld, is_cplx(prec) ? 2 : 1, NULL};
    size_t n = (size_t)(ld * cols) * (size_t)x.cw;
    x.h = malloc(n * sizeof(double) + 1);
    assert_non_null(x.h);
    for (int64_t j = 0; j < cols; j++)
        for (int64_t i = 0; i < ld; i++)
            for (int p = 0; p < x.cw; p++) {
                size_t idx = (size_t)(i + j * ld) * (size_t)x.cw + (size_t)p;
                x.h[idx] = i < rows && !all_nan ? rnd(key, idx) : NAN;
            }
    return x;
}

// Native-precision copy of all ld x cols elements (padding included).
static void *to_native(char prec, const hmat *x) {
    size_t n = (size_t)(x->ld * x->cols) * (size_t)x->cw;
    void *p = malloc(n * (is_single(prec) ? 4 : 8) + 1);
    assert_non_null(p);
    for (size_t i = 0; i < n; i++) {
        if (is_single(prec)) ((float *)p)[i] = (float)x->h[i];
        else ((double *)p)[i] = x->h[i];
    }
    return p;
}

static double native_at(char prec, const void *p, size_t i) {
    return is_single(prec) ? (double)((const float *)p)[i] : ((const double *)p)[i];
}

// |x|_1 elementwise, tight (ld = rows), real.
static double *abs1(const hmat *x) {
    double *q = malloc((size_t)(x->rows * x->cols) * sizeof(double) + 1);
    assert_non_null(q);
    for (int64_t j = 0; j < x->cols; j++)
        for (int64_t i = 0; i < x->rows; i++) {
            const double *e = x->h + (size_t)(i + j * x->ld) * (size_t)x->cw;
            q[i + j * x->rows] = fabs(e[0]) + (x->cw == 2 ? fabs(e[1]) : 0.0);
        }
    return q;
}

typedef struct {
    char prec, ta, tb;
    int64_t m, n, k;
    int64_t pad_a, pad_b, pad_c; // leading dimension minus rows
    double alpha[2], beta[2];
    int misalign;     // A and B start one real scalar past the arena's alignment (scalar-load paths)
    const char *tile; // TESSERA_SGEMM_TILE for this case (NULL: the shape's own choice)
    const char *ws;   // TESSERA_CPLX_WORKSPACE for this case (NULL: default)
} sg_case;

static void *dev_upload(ts_device *d, ts_stream *st, const void *h, size_t bytes, size_t offset, void **base) {
    OK(ts_dmalloc(d, bytes + 16, base));
    char *p = (char *)*base + offset;
    OK(ts_copy_async(st, TS_COPY_H2D, p, h, bytes));
    return p;
}

static void run_case(const sg_case *c, uint64_t key) {
    ts_device *d = ts_devset_device(g_set, 0);
    ts_stream *st = NULL;
    OK(ts_stream_create(d, &st));
    const char prec = c->prec;
    const int cw = is_cplx(prec) ? 2 : 1;
    const size_t rs = is_single(prec) ? 4 : 8; // bytes per real scalar
    const int64_t m = c->m, n = c->n, k = c->k;
    const int64_t ar = c->ta == 'N' ? m : k, ac = c->ta == 'N' ? k : m;
    const int64_t br = c->tb == 'N' ? k : n, bc = c->tb == 'N' ? n : k;
    const int64_t lda = ar + c->pad_a, ldb = br + c->pad_b, ldc = m + c->pad_c;
    const int beta0 = c->beta[0] == 0.0 && c->beta[1] == 0.0;

    hmat A = hmat_fill(prec, ar, ac, lda, key + 1, 0), B = hmat_fill(prec, br, bc, ldb, key + 2, 0);
    hmat C0 = hmat_fill(prec, m, n, ldc, key + 3, beta0); // all NaN when beta == 0
    void *An = to_native(prec, &A), *Bn = to_native(prec, &B), *Cn = to_native(prec, &C0);
    const size_t bytesA = (size_t)(lda * ac) * cw * rs, bytesB = (size_t)(ldb * bc) * cw * rs;
    const size_t bytesC = (size_t)(ldc * n) * cw * rs;
    void *bA, *bB, *bC;
    const size_t off = c->misalign ? rs : 0;
    void *dA = dev_upload(d, st, An, bytesA, off, &bA), *dB = dev_upload(d, st, Bn, bytesB, off, &bB);
    void *dC = dev_upload(d, st, Cn, bytesC, 0, &bC);

    float af[2] = {(float)c->alpha[0], (float)c->alpha[1]}, bf[2] = {(float)c->beta[0], (float)c->beta[1]};
    const void *alpha = is_single(prec) ? (const void *)af : (const void *)c->alpha;
    const void *beta = is_single(prec) ? (const void *)bf : (const void *)c->beta;
    if (c->tile) setenv("TESSERA_SGEMM_TILE", c->tile, 1);
    if (c->ws) setenv("TESSERA_CPLX_WORKSPACE", c->ws, 1);
    if (g_three) setenv("TESSERA_CPLX_SCHEME", "3m", 1);
    OK(ts_dev_gemm(st, TS_ENGINE_TESSERA, prec, c->ta, c->tb, m, n, k, alpha, dA, lda, dB, ldb, beta, dC, ldc));
    unsetenv("TESSERA_SGEMM_TILE");
    unsetenv("TESSERA_CPLX_WORKSPACE");
    unsetenv("TESSERA_CPLX_SCHEME");
    OK(ts_copy_async(st, TS_COPY_D2H, Cn, dC, bytesC));
    OK(ts_stream_sync(st));

    // Reference in double: alpha and beta as the kernel saw them (rounded to float for 's', 'c').
    double ra[2] = {c->alpha[0], c->alpha[1]}, rb[2] = {c->beta[0], c->beta[1]};
    if (is_single(prec)) ra[0] = af[0], ra[1] = af[1], rb[0] = bf[0], rb[1] = bf[1];
    const char rprec = cw == 2 ? 'z' : 'd';
    double *R = calloc((size_t)(ldc * n) * cw, sizeof(double));
    assert_non_null(R);
    if (!beta0) memcpy(R, C0.h, (size_t)(ldc * n) * cw * sizeof(double));
    OK(ts_gemm_cpu(rprec, c->ta, c->tb, m, n, k, ra, A.h, lda, B.h, ldb, rb, R, ldc));
    // S = |alpha|_1 |op(A)|_1 |op(B)|_1 + |beta|_1 |C0|_1.
    double *Aa = abs1(&A), *Ba = abs1(&B), *S = calloc((size_t)(m * n), sizeof(double));
    assert_non_null(S);
    double sa = fabs(ra[0]) + fabs(ra[1]), sb = beta0 ? 0.0 : fabs(rb[0]) + fabs(rb[1]);
    if (!beta0) {
        double *Ca = abs1(&C0);
        memcpy(S, Ca, (size_t)(m * n) * sizeof(double));
        free(Ca);
    }
    char rta = c->ta == 'N' ? 'N' : 'T', rtb = c->tb == 'N' ? 'N' : 'T';
    OK(ts_gemm_cpu('d', rta, rtb, m, n, k, &sa, Aa, ar, Ba, br, &sb, S, m));

    const double u = is_single(prec) ? 0x1p-24 : 0x1p-53;
    int64_t bad_val = 0, bad_pad = 0;
    double err = 0;
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < ldc; i++)
            for (int p = 0; p < cw; p++) {
                size_t idx = (size_t)(i + j * ldc) * cw + p;
                double t = native_at(prec, Cn, idx);
                if (i >= m) {
                    bad_pad += !isnan(t);
                    continue;
                }
                if (!isfinite(t)) {
                    bad_val++;
                    continue;
                }
                double s = S[i + j * m];
                double e = s > 0 ? fabs(t - R[idx]) / ((double)(k + 5) * u * s) : (t == R[idx] ? 0 : INFINITY);
                if (e > err) err = e;
            }
    const char *variant = "-";
    const double bound = g_three && cw == 2 ? BOUND_3M : BOUND;
#if TS_HAVE_CUDA
    if (prec == 's') variant = c->tile ? c->tile : ts_cuda_sgemm_tessera_variant(m, n, k, ts_device_props_of(d)->sms);
    else if (g_three) variant = prec == 'c' ? "3m/sgemm" : "3m/dgemm";
    else variant = prec == 'c' ? "4m/sgemm" : "4m/dgemm";
#endif
    printf("  %c %c%c %5lldx%5lldx%5lld ld+(%lld,%lld,%lld) alpha=(%g,%g) beta=(%g,%g)%s%s%s [%s]: err %.3g "
           "(bound %g), non-finite %lld, padding written %lld\n",
           prec, c->ta, c->tb, (long long)m, (long long)n, (long long)k, (long long)c->pad_a, (long long)c->pad_b,
           (long long)c->pad_c, c->alpha[0], c->alpha[1], c->beta[0], c->beta[1], c->misalign ? " misaligned" : "",
           c->ws ? " workspace=" : "", c->ws ? c->ws : "", variant, err, bound, (long long)bad_val,
           (long long)bad_pad);
    assert_int_equal(bad_val, 0);
    assert_int_equal(bad_pad, 0);
    assert_true(err <= bound);

    ts_dfree(d, bA), ts_dfree(d, bB), ts_dfree(d, bC);
    OK(ts_stream_destroy(st));
    free(A.h), free(B.h), free(C0.h), free(An), free(Bn), free(Cn), free(R), free(Aa), free(Ba), free(S);
}

static const char rops[4][2] = {{'N', 'N'}, {'N', 'T'}, {'T', 'N'}, {'T', 'T'}};
static const char cops[9][2] = {{'N', 'N'}, {'N', 'T'}, {'N', 'C'}, {'T', 'N'}, {'T', 'T'},
                                {'T', 'C'}, {'C', 'N'}, {'C', 'T'}, {'C', 'C'}};
static const int64_t edge_dims[][3] = {{1, 1, 1},     {7, 7, 7},   {33, 33, 33}, {129, 129, 129}, {1, 129, 33},
                                       {129, 1, 7},   {33, 7, 129}, {17, 130, 15}, {200, 72, 1},  {131, 257, 9}};

// SGEMM: odd sizes, every op, both beta kinds, leading dimensions > rows (ld % 4 == 0 and not).
static void test_sgemm_edges(void **state) {
    if (!g_set) skip();
    uint64_t key = 100;
    for (size_t s = 0; s < sizeof edge_dims / sizeof edge_dims[0]; s++)
        for (int o = 0; o < 4; o++)
            for (int b = 0; b < 2; b++) {
                int64_t pad = 1 + (int64_t)((s + o + b) % 4); // 1..4
                sg_case c = {'s', rops[o][0], rops[o][1], edge_dims[s][0], edge_dims[s][1], edge_dims[s][2],
                             pad, pad + 1, pad + 2, {b ? -1.25 : 0.5, 0}, {b ? 0.75 : 0.0, 0}, 0, NULL, NULL};
                run_case(&c, key += 10);
            }
    sg_case cc = {'s', 'C', 'C', 97, 65, 48, 0, 0, 0, {1, 0}, {1, 0}, 0, NULL, NULL}; // 'C' is 'T' for real data
    run_case(&cc, key += 10);
}

// Each TESSERA_SGEMM_TILE variant on each op with edges in every direction; aligned operands with
// ld % 4 == 0 (float4 loads) and misaligned ones (scalar loads). 301 x 259 leaves ragged tiles;
// k = 83 ends every variant on a partial k-step.
static void test_sgemm_variants(void **state) {
    if (!g_set) skip();
    static const char *const tiles[] = {"large", "small", "big8"};
    uint64_t key = 1000;
    for (int v = 0; v < (int)(sizeof tiles / sizeof tiles[0]); v++)
        for (int o = 0; o < 4; o++)
            for (int mis = 0; mis < 2; mis++) {
                sg_case c = {'s', rops[o][0], rops[o][1], 301, 259, 83, 4, 8, 3, {1, 0}, {(o & 1) ? 0.0 : -0.5, 0},
                             mis, tiles[v], NULL};
                run_case(&c, key += 10);
            }
}

static void test_sgemm_medium(void **state) {
    if (!g_set) skip();
    uint64_t key = 2000;
    for (int o = 0; o < 4; o++) {
        sg_case c = {'s', rops[o][0], rops[o][1], 1000, 999, 1001, 4, 3, 4, {1, 0}, {o & 1 ? 1.0 : 0.0, 0}, 0, NULL,
                     NULL};
        run_case(&c, key += 10);
    }
    sg_case big = {'s', 'N', 'N', 2048, 2048, 2048, 0, 0, 0, {1, 0}, {0, 0}, 0, NULL, NULL};
    run_case(&big, key += 10);
    sg_case bigt = {'s', 'T', 'N', 2048, 1536, 1024, 0, 0, 0, {-1, 0}, {1, 0}, 0, NULL, NULL};
    run_case(&bigt, key += 10);
    // enough 256 x 128 tiles for two a multiprocessor: the shape's own choice is big8
    sg_case bigd = {'s', 'T', 'N', 4096, 2304, 300, 0, 0, 0, {1, 0}, {0.5, 0}, 0, NULL, NULL};
    run_case(&bigd, key += 10);
    static const char *const full[] = {"large", "big8"};
    const int nfull = (int)(sizeof full / sizeof full[0]);
    for (int v = 0; v < nfull; v++)
        for (int o = 0; o < 4; o++) { // many k-steps, interior tiles full
            sg_case c = {'s', rops[o][0], rops[o][1], 1024, 768, 1000, 0, 4, 0, {1, 0}, {o & 1 ? 0.0 : 0.5, 0}, 0,
                         full[v], NULL};
            run_case(&c, key += 10);
        }
    // big8: k a multiple of the k-step (no partial step), and k below one step
    for (int v = 1; v < nfull; v++) {
        sg_case c = {'s', 'T', 'T', 768, 512, 1024, 0, 0, 0, {1, 0}, {0, 0}, 0, full[v], NULL};
        run_case(&c, key += 10);
        sg_case t = {'s', 'N', 'T', 520, 260, 5, 0, 0, 0, {1, 0}, {1, 0}, 0, full[v], NULL};
        run_case(&t, key += 10);
    }
    // big8's three stages: two and three full k-steps (the copies' prologue and their last step), every op
    for (int v = 1; v < nfull; v++)
        for (int o = 0; o < 4; o++) {
            sg_case c = {'s', rops[o][0], rops[o][1], 512, 384, o & 1 ? 17 : 24, 0, 0, 0, {1, 0}, {0.25, 0}, 0, full[v], NULL};
            run_case(&c, key += 10);
        }
}

// CGEMM and ZGEMM: every op pair including 'C', complex alpha and beta, beta == 0 with NaN C.
static void cz_ops_cases(uint64_t key) {
    static const char precs[] = {'c', 'z'};
    for (int p = 0; p < 2; p++)
        for (int o = 0; o < 9; o++)
            for (int b = 0; b < 2; b++) {
                int64_t pad = 1 + (o + b) % 3;
                sg_case c = {precs[p], cops[o][0], cops[o][1], 67, 45, 39, pad, pad + 1, pad + 2, {0.75, -0.5},
                             {b ? 0.5 : 0.0, b ? 0.25 : 0.0}, 0, NULL, NULL};
                run_case(&c, key += 10);
            }
}

// Edge sizes, misaligned operands, and the blocked path (a workspace cap that forces 128 x 128
// blocks of C with ragged edges).
static void cz_edge_cases(uint64_t key) {
    static const char precs[] = {'c', 'z'};
    for (int p = 0; p < 2; p++) {
        for (size_t s = 0; s < sizeof edge_dims / sizeof edge_dims[0]; s++) {
            int o = (int)(s % 9);
            sg_case c = {precs[p], cops[o][0], cops[o][1], edge_dims[s][0], edge_dims[s][1], edge_dims[s][2], 2, 1, 3,
                         {1, 0.5}, {s & 1 ? 0.0 : -1.0, s & 1 ? 0.0 : 0.5}, (int)(s & 1), NULL, NULL};
            run_case(&c, key += 10);
        }
        // 300 x 290 x 200 needs about 1.6 MB (c) / 3.3 MB (z) of workspace in one block for 4M (3M: 3/2
        // of it); these caps give blocks of 128 x 256 or smaller, ragged at both edges.
        for (int o = 0; o < 9; o += 4) {
            sg_case c = {precs[p], cops[o][0], cops[o][1], 300, 290, 200, 1, 2, 3, {-0.5, 1}, {0.25, -0.75}, 0, NULL,
                         p == 0 ? "1M" : "2M"};
            run_case(&c, key += 10);
        }
        sg_case m = {precs[p], 'N', 'C', 700, 650, 600, 0, 0, 0, {1, 0}, {0, 0}, 0, NULL, NULL};
        run_case(&m, key += 10);
    }
}

static void test_cz_ops(void **state) {
    if (!g_set) skip();
    cz_ops_cases(3000);
}

static void test_cz_edges_and_blocks(void **state) {
    if (!g_set) skip();
    cz_edge_cases(4000);
}

// A workspace cap below even 128 x 128 blocks is refused with TS_ERR_DEVMEM (C untouched is not
// checked: nothing was launched).
static void test_cz_workspace_too_small(void **state) {
    if (!g_set) skip();
    ts_device *d = ts_devset_device(g_set, 0);
    ts_stream *st = NULL;
    OK(ts_stream_create(d, &st));
    void *p = NULL;
    OK(ts_dmalloc(d, (size_t)3 * 256 * 256 * 16, &p));
    double one[2] = {1, 0};
    setenv("TESSERA_CPLX_WORKSPACE", "64K", 1);
    int rc = ts_dev_gemm(st, TS_ENGINE_TESSERA, 'z', 'N', 'N', 256, 256, 256, one, p, 256, (char *)p + 256 * 256 * 16,
                         256, one, (char *)p + 2 * 256 * 256 * 16, 256);
    unsetenv("TESSERA_CPLX_WORKSPACE");
    assert_int_equal(rc, TS_ERR_DEVMEM);
    assert_non_null(strstr(ts_error_string(), "workspace"));
    OK(ts_stream_sync(st));
    ts_dfree(d, p);
    OK(ts_stream_destroy(st));
}

// CGEMM and ZGEMM by 3M: the 4M cases above (every op pair, both beta kinds, edge sizes, the blocked
// path), on fresh data, against BOUND_3M.
static void test_cz_3m(void **state) {
    if (!g_set) skip();
    g_three = 1;
    cz_ops_cases(6000);
    cz_edge_cases(7000);
    g_three = 0;
}

// A scheme other than 4m or 3m is refused, naming the variable.
static void test_cz_scheme_malformed(void **state) {
    if (!g_set) skip();
    ts_device *d = ts_devset_device(g_set, 0);
    ts_stream *st = NULL;
    OK(ts_stream_create(d, &st));
    void *p = NULL;
    OK(ts_dmalloc(d, (size_t)3 * 64 * 64 * 16, &p));
    double one[2] = {1, 0};
    setenv("TESSERA_CPLX_SCHEME", "2m", 1);
    int rc = ts_dev_gemm(st, TS_ENGINE_TESSERA, 'z', 'N', 'N', 64, 64, 64, one, p, 64, (char *)p + 64 * 64 * 16, 64,
                         one, (char *)p + 2 * 64 * 64 * 16, 64);
    unsetenv("TESSERA_CPLX_SCHEME");
    assert_int_equal(rc, TS_ERR_ARG);
    assert_non_null(strstr(ts_error_string(), "TESSERA_CPLX_SCHEME"));
    OK(ts_stream_sync(st));
    ts_dfree(d, p);
    OK(ts_stream_destroy(st));
}

// k == 0 and alpha == 0: C = beta C without touching A and B (NaN A and B prove it).
static void test_quick_returns(void **state) {
    if (!g_set) skip();
    ts_device *d = ts_devset_device(g_set, 0);
    ts_stream *st = NULL;
    OK(ts_stream_create(d, &st));
    const int64_t m = 37, n = 21, ldc = 40;
    static const char precs[] = {'s', 'c', 'z'};
    for (int p = 0; p < 3; p++) {
        const char prec = precs[p];
        hmat C0 = hmat_fill(prec, m, n, ldc, 5000 + (uint64_t)p, 0);
        void *Cn = to_native(prec, &C0);
        const size_t es = ts_prec_size(prec), bytes = (size_t)(ldc * n) * es;
        void *dC = NULL, *dN = NULL;
        OK(ts_dmalloc(d, bytes, &dC));
        OK(ts_dmalloc(d, 64 * 64 * 16, &dN));
        OK(ts_memset_async(st, dN, 0xff, 64 * 64 * 16));
        for (int t = 0; t < 4; t++) {
            const int scale = t & 1; // beta = 2 (else 0)
            const int64_t k = t < 2 ? 0 : 9;
            double one[2] = {1, 0}, zero[2] = {0, 0}, two[2] = {2, 0};
            float onef[2] = {1, 0}, zerof[2] = {0, 0}, twof[2] = {2, 0};
            const int sp = is_single(prec);
            const void *alpha = t < 2 ? (sp ? (void *)onef : (void *)one) : (sp ? (void *)zerof : (void *)zero);
            const void *beta = scale ? (sp ? (void *)twof : (void *)two) : (sp ? (void *)zerof : (void *)zero);
            if (scale) OK(ts_copy_async(st, TS_COPY_H2D, dC, Cn, bytes));
            else OK(ts_memset_async(st, dC, 0xff, bytes));
            OK(ts_dev_gemm(st, TS_ENGINE_TESSERA, prec, 'N', 'N', m, n, k, alpha, dN, 64, dN, 64, beta, dC, ldc));
            void *out = malloc(bytes);
            assert_non_null(out);
            OK(ts_copy_async(st, TS_COPY_D2H, out, dC, bytes));
            OK(ts_stream_sync(st));
            const int cw = is_cplx(prec) ? 2 : 1;
            for (int64_t j = 0; j < n; j++)
                for (int64_t i = 0; i < m; i++)
                    for (int q = 0; q < cw; q++) {
                        size_t idx = (size_t)(i + j * ldc) * cw + q;
                        assert_true(native_at(prec, out, idx) == (scale ? 2 * native_at(prec, Cn, idx) : 0.0));
                    }
            free(out);
        }
        ts_dfree(d, dC), ts_dfree(d, dN);
        free(C0.h), free(Cn);
    }
    OK(ts_stream_destroy(st));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sgemm_edges),
        cmocka_unit_test(test_sgemm_variants),
        cmocka_unit_test(test_sgemm_medium),  cmocka_unit_test(test_cz_ops),
        cmocka_unit_test(test_cz_edges_and_blocks), cmocka_unit_test(test_cz_workspace_too_small),
        cmocka_unit_test(test_cz_3m),         cmocka_unit_test(test_cz_scheme_malformed),
        cmocka_unit_test(test_quick_returns),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
