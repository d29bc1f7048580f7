// test_gpu_dgemm_tc.c: the own tensor-core DGEMM (engine tessera) against cuBLAS and Freivalds on a real GPU (skips without one).
//
// Every case draws fresh data in [-0.5, 0.5) (never zero), fills the padding rows of A, B and C
// (ld > rows) with NaN so that reading them shows, poisons C with NaN before beta == 0 runs, and
// runs cuBLAS on the same device data. Checks, per case:
//   1. every element of C inside m x n is finite and every padding element is still NaN;
//   2. elementwise against cuBLAS: both results carry rounding error at most gamma_(k+2) S_ij with
//      S = |alpha| |op(A)| |op(B)| + |beta| |C0| (any summation order, FMA or not), so
//        err = max_ij |C_tessera - C_cublas| / ((k + 2) 2^-53 S_ij)  <=  TC_BOUND = 2
//      (S computed by cuBLAS on |A|, |B|, |C0|; random data lands near 1e-2 or below);
//   3. Freivalds (ts_gemm_verify) on the copied-back result with TS_GEMM_VERIFY_BOUND.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ts_error.h"
#include "device/ts_device.h"
#include "kernels/ts_kernels.h"
#include "ts_config.h"
#if TS_HAVE_CUDA
#include "kernels/cuda/ts_cuda_kernels.h"
#endif

#define TC_BOUND 2.0
#define SMALL_ARENA ((size_t)2 << 30)
#define LARGE_ARENA ((size_t)10 << 30) // the 16384 x 16384 x 256 case needs about 6.5 GiB

static ts_devset *g_set;
static int g_big; // the arena holds the 16384^2 case

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
    ts_devset_opts o;
    if (ts_devset_opts_init(&o) < 0) return -1;
    o.backend = TS_BACKEND_CUDA;
    o.max_devices = 1;
    o.arena_bytes = LARGE_ARENA;
    if (ts_devset_open(&o, &g_set) == 0) {
        g_big = 1;
        return 0;
    }
    printf("# no %zu-byte arena (%s): the 16384^2 case is left out\n", (size_t)LARGE_ARENA, ts_error_string());
    o.arena_bytes = SMALL_ARENA;
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

// Fast counter-based uniform values in [-0.5, 0.5), never zero (splitmix64 of key and index).
static uint64_t mix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}
static double rnd(uint64_t key, uint64_t i) {
    double v = (double)(mix64(mix64(key) + i) >> 11) * 0x1p-53 - 0.5;
    return v == 0 ? 0.25 : v;
}

// rows x cols column-major with leading dimension ld; padding rows NaN.
static double *host_fill(int64_t rows, int64_t cols, int64_t ld, uint64_t key) {
    double *p = malloc((size_t)(ld * cols) * sizeof(double));
    assert_non_null(p);
    for (int64_t j = 0; j < cols; j++)
        for (int64_t i = 0; i < ld; i++) p[i + j * ld] = i < rows ? rnd(key, (uint64_t)(i + j * ld)) : NAN;
    return p;
}

static double *host_abs(const double *p, int64_t rows, int64_t cols, int64_t ld) { // tight (ld = rows)
    double *q = malloc((size_t)(rows * cols) * sizeof(double));
    assert_non_null(q);
    for (int64_t j = 0; j < cols; j++)
        for (int64_t i = 0; i < rows; i++) q[i + j * rows] = fabs(p[i + j * ld]);
    return q;
}

static double *dev_alloc(ts_device *d, size_t doubles) {
    void *p = NULL;
    OK(ts_dmalloc(d, doubles * sizeof(double), &p));
    return p;
}

static void upload(ts_stream *st, double *dst, int64_t dld, const double *src, int64_t sld, int64_t rows,
                   int64_t cols) {
    OK(ts_copy2d_async(st, TS_COPY_H2D, dst, (size_t)dld * 8, src, (size_t)sld * 8, (size_t)rows * 8, (size_t)cols));
}

static void download(ts_stream *st, double *dst, int64_t dld, const double *src, int64_t sld, int64_t rows,
                     int64_t cols) {
    OK(ts_copy2d_async(st, TS_COPY_D2H, dst, (size_t)dld * 8, src, (size_t)sld * 8, (size_t)rows * 8, (size_t)cols));
}

typedef struct {
    char ta, tb;
    int64_t m, n, k;
    int64_t pad_a, pad_b, pad_c; // leading dimension minus rows
    double alpha, beta;
    int misalign;     // A starts 8 bytes past a 16-byte boundary (the 8-byte copy path)
    const char *tile; // TESSERA_TC_TILE for this case (NULL: the shape's own choice)
} tc_case;

static void run_case(const tc_case *c, uint64_t key) {
    ts_device *d = ts_devset_device(g_set, 0);
    ts_stream *st = NULL;
    OK(ts_stream_create(d, &st));
    const int64_t m = c->m, n = c->n, k = c->k;
    const int64_t ar = c->ta == 'N' ? m : k, ac = c->ta == 'N' ? k : m;
    const int64_t br = c->tb == 'N' ? k : n, bc = c->tb == 'N' ? n : k;
    const int64_t lda = ar + c->pad_a, ldb = br + c->pad_b, ldc = m + c->pad_c;
    const int beta0 = c->beta == 0.0;

    double *A = host_fill(ar, ac, lda, key + 1), *B = host_fill(br, bc, ldb, key + 2);
    double *C0 = beta0 ? NULL : host_fill(m, n, ldc, key + 3);
    double *Ct = malloc((size_t)(ldc * n) * sizeof(double)), *Cc = malloc((size_t)(m * n) * sizeof(double));
    double *S = malloc((size_t)(m * n) * sizeof(double));
    assert_true(Ct && Cc && S);

    double *dA0 = dev_alloc(d, (size_t)(lda * ac) + 1), *dA = dA0 + (c->misalign ? 1 : 0);
    double *dB = dev_alloc(d, (size_t)(ldb * bc)), *dCt = dev_alloc(d, (size_t)(ldc * n));
    double *dCc = dev_alloc(d, (size_t)(ldc * n)), *dS = dev_alloc(d, (size_t)(m * n));
    upload(st, dA, lda, A, lda, lda, ac); // padding (NaN) travels too
    upload(st, dB, ldb, B, ldb, ldb, bc);
    if (beta0) { // NaN everywhere: beta == 0 must not read C
        OK(ts_memset_async(st, dCt, 0xff, (size_t)(ldc * n) * 8));
        OK(ts_memset_async(st, dCc, 0xff, (size_t)(ldc * n) * 8));
    } else {
        upload(st, dCt, ldc, C0, ldc, ldc, n);
        upload(st, dCc, ldc, C0, ldc, ldc, n);
    }

    if (c->tile) setenv("TESSERA_TC_TILE", c->tile, 1);
    else unsetenv("TESSERA_TC_TILE");
    OK(ts_dev_gemm(st, TS_ENGINE_TESSERA, 'd', c->ta, c->tb, m, n, k, &c->alpha, dA, lda, dB, ldb, &c->beta,
                   dCt, ldc));
    unsetenv("TESSERA_TC_TILE");
    OK(ts_dev_gemm(st, TS_ENGINE_CUBLAS, 'd', c->ta, c->tb, m, n, k, &c->alpha, dA, lda, dB, ldb, &c->beta,
                   dCc, ldc));
    download(st, Ct, ldc, dCt, ldc, ldc, n);
    download(st, Cc, m, dCc, ldc, m, n);
    OK(ts_stream_sync(st));
    ts_dfree(d, dCc);

    // S = |alpha| |op(A)| |op(B)| + |beta| |C0| by cuBLAS on the absolute values.
    double *Aa = host_abs(A, ar, ac, lda), *Ba = host_abs(B, br, bc, ldb);
    double *dAa = dev_alloc(d, (size_t)(ar * ac)), *dBa = dev_alloc(d, (size_t)(br * bc));
    upload(st, dAa, ar, Aa, ar, ar, ac);
    upload(st, dBa, br, Ba, br, br, bc);
    if (!beta0) {
        double *C0a = host_abs(C0, m, n, ldc);
        upload(st, dS, m, C0a, m, m, n);
        OK(ts_stream_sync(st));
        free(C0a);
    }
    double aa = fabs(c->alpha), ab = fabs(c->beta);
    OK(ts_dev_gemm(st, TS_ENGINE_CUBLAS, 'd', c->ta, c->tb, m, n, k, &aa, dAa, ar, dBa, br, &ab, dS, m));
    download(st, S, m, dS, m, m, n);
    OK(ts_stream_sync(st));

    int64_t bad_pad = 0, bad_val = 0;
    double err = 0;
    const double u = 0x1p-53;
    for (int64_t j = 0; j < n; j++) {
        for (int64_t i = m; i < ldc; i++) bad_pad += !isnan(Ct[i + j * ldc]);
        for (int64_t i = 0; i < m; i++) {
            double t = Ct[i + j * ldc], r = Cc[i + j * m], s = S[i + j * m];
            if (!isfinite(t)) {
                bad_val++;
                continue;
            }
            double e = s > 0 ? fabs(t - r) / ((double)(k + 2) * u * s) : (t == r ? 0 : INFINITY);
            if (e > err) err = e;
        }
    }
    double ferr = -1;
    int fok = ts_gemm_verify('d', c->ta, c->tb, m, n, k, &c->alpha, A, lda, B, ldb, &c->beta, C0, ldc, Ct, ldc,
                             3, key + 7, TS_GEMM_VERIFY_BOUND, &ferr);
    const char *variant = "-";
#if TS_HAVE_CUDA
    variant = c->misalign || lda % 2 || ldb % 2 ? "rankk/8-byte copies"
                                                : ts_cuda_dgemm_tessera_variant(c->ta, c->tb, m, n, k, ts_device_props_of(d)->sms,
                                                                                ts_device_props_of(d)->cc_major);
    if (c->tile && !c->misalign && lda % 2 == 0 && ldb % 2 == 0) variant = c->tile;
#endif
    printf("  %c%c %5lldx%5lldx%5lld ld+(%lld,%lld,%lld) alpha=%g beta=%g%s [%s]: vs cublas %.3g (bound %g), "
           "freivalds %.3g, non-finite %lld, padding written %lld\n",
           c->ta, c->tb, (long long)m, (long long)n, (long long)k, (long long)c->pad_a, (long long)c->pad_b,
           (long long)c->pad_c, c->alpha, c->beta, c->misalign ? " misaligned-A" : "", variant, err, TC_BOUND,
           ferr, (long long)bad_val, (long long)bad_pad);
    assert_int_equal(bad_val, 0);
    assert_int_equal(bad_pad, 0);
    assert_true(err <= TC_BOUND);
    assert_true(fok);

    ts_dfree(d, dA0), ts_dfree(d, dB), ts_dfree(d, dCt), ts_dfree(d, dS), ts_dfree(d, dAa), ts_dfree(d, dBa);
    OK(ts_stream_destroy(st));
    free(A), free(B), free(C0), free(Ct), free(Cc), free(S), free(Aa), free(Ba);
}

static const char ops[4][2] = {{'N', 'N'}, {'N', 'T'}, {'T', 'N'}, {'T', 'T'}};

// Odd sizes, every op, both beta kinds, even and odd leading dimensions (the 16- and 8-byte paths).
static void test_tc_odd_sizes(void **state) {
    if (!g_set) skip();
    static const int64_t dims[][3] = {{1, 1, 1}, {7, 7, 7}, {33, 33, 33}, {129, 129, 129}, {1, 129, 33},
                                      {129, 1, 7}, {33, 7, 129}, {17, 130, 15}, {200, 72, 1}};
    uint64_t key = 100;
    for (size_t s = 0; s < sizeof dims / sizeof dims[0]; s++)
        for (int o = 0; o < 4; o++)
            for (int b = 0; b < 2; b++) {
                int64_t pad = 1 + (int64_t)((s + o + b) % 3); // 1..3: leading dimensions > rows
                tc_case c = {ops[o][0], ops[o][1], dims[s][0], dims[s][1], dims[s][2], pad, pad + 1, pad + 2,
                             b ? -1.25 : 0.5, b ? 0.75 : 0.0, 0, NULL};
                run_case(&c, key += 10);
            }
}

// Each tile variant on each op, edges in every direction, aligned and misaligned operands.
static void test_tc_variants(void **state) {
    if (!g_set) skip();
    // Every TESSERA_TC_TILE name (large32*: BK = 32; rankklpf: C prefetched into L2, 8-byte
    // fragment loads for the operand that 16-byte loads deliver out of order; *pf: fragments across
    // the barrier, for ops with A 'N'; dmma16: mma.m16n8k16, sm_90 only). TT runs as transposed NN
    // (its only path).
    // rankkldb, smalldb, smalldbc, rankkldbe: full tiles only (other shapes run rankklpf, small;
    // their own cases follow the loop).
    static const char *const tiles[] = {"rankk",    "small",   "large32",  "large32pf", "rankklpf",
                                        "dmma16",   "rankkldb", "smalldb", "smalldbc",  "rankkldbe"};
    const int sm90 = ts_device_props_of(ts_devset_device(g_set, 0))->cc_major >= 9;
    uint64_t key = 1000;
    for (int v = 0; v < (int)(sizeof tiles / sizeof tiles[0]); v++) {
        if (!strncmp(tiles[v], "dmma16", 6) && !sm90) continue;
        for (int o = 0; o < 4; o++) {
            tc_case c = {ops[o][0], ops[o][1], 301, 259, 83, 2, 4, 6, 1.0, (o & 1) ? 0.0 : -0.5, 0, tiles[v]};
            run_case(&c, key += 10);
            // even leading dimensions (16-byte copies in every op), several k-steps by mask, one bounded
            tc_case e = {ops[o][0], ops[o][1], 300, 262, 16 * 7 + 6, 2, 4, 6, 0.5, (o & 1) ? -1.0 : 0.0, 0, tiles[v]};
            run_case(&e, key += 10);
        }
    }
    // rankkldb and smalldb on shapes they take (m, n multiples of 128 so that TT's transposed
    // launch is one too, k a multiple of 16): k-steps 1, 3 (the prologue's count) and 9, beta 0 (C
    // never read) and not; smalldb also on 64-multiples that rankkldb would not take.
    // Case 4 has an odd ldc (pad 5).
    // rankkldbe stages C into the stages after its main loop (any k), smalldbc into those its last
    // three k-steps free (k >= 48; k = 16 reads C from global memory): rankkldbe cases 0-2 and 5
    // (k = 64, four k-steps), smalldbc every case (case 5: its C copies start in step 1).
    static const char *const dbt[] = {"rankkldb", "smalldb", "rankkldbe", "smalldbc"};
    static const int64_t db[6][3] = {{256, 384, 144}, {384, 256, 16}, {128, 128, 48},
                                     {192, 320, 64},  {320, 192, 32}, {256, 128, 64}};
    for (int d = 0; d < 4; d++)
        for (int o = 0; o < 4; o++)
            for (int i = 0; i < 6; i++) {
                if (d == 0 ? i > 2 : d == 1 ? i > 3 : d == 3 ? 0 : (i == 3 || i == 4)) continue;
                tc_case c = {ops[o][0], ops[o][1], db[i][0], db[i][1], db[i][2], 2, 4, i == 4 ? 5 : 6, -1.5,
                             i == 1 ? 0.0 : 0.5, 0, dbt[d]};
                run_case(&c, key += 10);
            }
    for (int o = 0; o < 4; o++) // rankkldbe and smalldbc, k = 64 with odd ldc (C read from global memory)
        for (int v = 0; v < 2; v++) {
            tc_case c = {ops[o][0], ops[o][1], 256, 128, 64, 2, 4, 5, 1.0, 1.0, 0, v ? "smalldbc" : "rankkldbe"};
            run_case(&c, key += 10);
        }
    for (int o = 0; o < 4; o++) {
        tc_case c = {ops[o][0], ops[o][1], 250, 190, 140, 2, 2, 1, 0.75, 0.25, 1, NULL};
        run_case(&c, key += 10);
    }
    tc_case cc = {'T', 'N', 97, 65, 48, 0, 0, 0, 1.0, 1.0, 0, NULL}; // 'C' is 'T' for real data
    cc.ta = 'C', cc.tb = 'C';
    run_case(&cc, key += 10);
}

// rankkldbe (CEnd) and smalldbc (CLate) on many tiles (more than their blocks per SM), sm_90 only
// (bulk copies): C staged in every block (even ldc, beta != 0), k of 3, 16 and 64 k-steps (the parts
// of C land in stages that depend on k % 4), rankkldbe also with 1 and 2; then odd ldc and beta 0,
// where C is read from global memory.
static void test_tc_staged_c(void **state) {
    if (!g_set) skip();
    if (ts_device_props_of(ts_devset_device(g_set, 0))->cc_major < 9) skip();
    static const int64_t ks[] = {48, 256, 1024};
    static const char *const staged[] = {"rankkldbe", "smalldbc"};
    const int nst = (int)(sizeof staged / sizeof staged[0]);
    uint64_t key = 1500;
    for (int o = 0; o < 4; o++)
        for (size_t q = 0; q < sizeof ks / sizeof ks[0]; q++)
            for (int v = 0; v < nst; v++) {
                tc_case c = {ops[o][0], ops[o][1], 2048, 1984 + 64 * v, ks[q], 2, 4, 6, (q & 1) ? -1.0 : 0.75,
                             1.0, 0, staged[v]};
                run_case(&c, key += 10);
            }
    for (int o = 0; o < 4; o++) { // CEnd with one and two k-steps (CLate reads C from global memory there)
        tc_case c = {ops[o][0], ops[o][1], 1024, 1024, 16 * (1 + (o & 1)), 2, 4, 6, -1.0, 0.5, 0, "rankkldbe"};
        run_case(&c, key += 10);
    }
    for (int v = 0; v < nst; v++) {
        tc_case odd = {'N', 'N', 2048, 2048, 272, 2, 4, 3, 1.0, -0.5, 0, staged[v]};
        run_case(&odd, key += 10);
        tc_case b0 = {'N', 'T', 2048, 2048, 272, 2, 4, 6, 1.0, 0.0, 0, staged[v]};
        run_case(&b0, key += 10);
    }
}

// The automatic variant choice (a pure function of the shape and the device; runs without a GPU):
// the table of choose_variant for a 132-SM sm_90 device, and sm_80.
static void test_tc_choice(void **state) {
    (void)state;
#if !TS_HAVE_CUDA
    skip();
#else
    unsetenv("TESSERA_TC_TILE");
    static const struct {
        char ta, tb;
        int64_t m, n, k;
        int cc;
        const char *want;
    } c[] = {
        {'N', 'N', 16384, 16384, 176, 9, "smalldbc"},   {'N', 'N', 16384, 16384, 192, 9, "rankkldbe"},
        {'N', 'N', 16384, 16384, 256, 9, "rankkldbe"},  {'N', 'N', 16384, 16384, 512, 9, "rankkldbe"},
        {'N', 'N', 16384, 16384, 1024, 9, "rankkldbe"}, {'N', 'N', 8192, 8192, 8192, 9, "rankkldbe"},
        {'N', 'N', 4096, 4096, 4096, 9, "rankkldbe"},   {'N', 'N', 16384, 16384, 16384, 9, "dmma16"},
        {'N', 'T', 16384, 16384, 112, 9, "smalldbc"},   {'N', 'T', 16384, 16384, 128, 9, "rankkldbe"},
        {'N', 'T', 16384, 16384, 2048, 9, "rankkldbe"}, {'N', 'T', 16384, 16384, 2064, 9, "rankkldb"},
        {'N', 'T', 8192, 8192, 8192, 9, "rankkldb"},    {'T', 'N', 16384, 16384, 256, 9, "rankkldbe"},
        {'T', 'N', 16384, 16384, 1024, 9, "rankkldbe"}, {'T', 'N', 4096, 4096, 4096, 9, "rankkldb"},
        {'T', 'N', 16384, 16384, 112, 9, "smalldbc"},   {'T', 'N', 16384, 16384, 128, 9, "rankkldbe"},
        {'T', 'T', 16384, 16384, 1024, 9, "rankkldb"},  {'T', 'T', 16384, 16384, 512, 9, "smalldb"},
        {'T', 'T', 16384, 16384, 256, 9, "smalldb"},    {'T', 'T', 16384, 16384, 240, 9, "small"},
        {'N', 'N', 16320, 16384, 1024, 9, "rankklpf"},
        {'N', 'N', 16384, 16384, 1024, 8, "rankklpf"},  {'N', 'N', 16384, 16384, 256, 8, "small"},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        const char *got = ts_cuda_dgemm_tessera_variant(c[i].ta, c[i].tb, c[i].m, c[i].n, c[i].k, 132, c[i].cc);
        if (strcmp(got, c[i].want) != 0)
            fail_msg("%c%c %lldx%lldx%lld cc %d: %s, expected %s", c[i].ta, c[i].tb, (long long)c[i].m,
                     (long long)c[i].n, (long long)c[i].k, c[i].cc, got, c[i].want);
    }
#endif
}

static void test_tc_medium(void **state) {
    if (!g_set) skip();
    uint64_t key = 2000;
    for (int o = 0; o < 4; o++)
        for (int b = 0; b < 2; b++) {
            tc_case c = {ops[o][0], ops[o][1], 1000, 999, 1001, 1, 3, 5, 1.0, b ? 1.0 : 0.0, 0, NULL};
            run_case(&c, key += 10);
        }
}

static void test_tc_large(void **state) {
    if (!g_set) skip();
    tc_case c1 = {'N', 'N', 4096, 4096, 4096, 0, 0, 0, 1.0, 0.0, 0, NULL};
    run_case(&c1, 3000);
    tc_case c2 = {'T', 'N', 4096, 4096, 4096, 8, 8, 8, -1.0, 1.0, 0, NULL};
    run_case(&c2, 3010);
}

// The HPL trailing update: C -= A B with k = 256.
static void test_tc_rank_k(void **state) {
    if (!g_set) skip();
    if (!g_big) {
        tc_case c = {'N', 'N', 4096, 4096, 256, 0, 0, 0, -1.0, 1.0, 0, NULL};
        run_case(&c, 4000);
        return;
    }
    tc_case c = {'N', 'N', 16384, 16384, 256, 0, 0, 0, -1.0, 1.0, 0, NULL};
    run_case(&c, 4010);
    tc_case c2 = {'N', 'T', 16384, 16384, 256, 0, 0, 0, 1.0, 0.0, 0, NULL};
    run_case(&c2, 4020);
}

// k == 0 and alpha == 0: C = beta C without touching A and B (NaN A and B prove it).
static void test_tc_quick_returns(void **state) {
    if (!g_set) skip();
    ts_device *d = ts_devset_device(g_set, 0);
    ts_stream *st = NULL;
    OK(ts_stream_create(d, &st));
    const int64_t m = 37, n = 21, ldc = 40;
    double *C0 = host_fill(m, n, ldc, 5000), *C = malloc((size_t)(ldc * n) * 8);
    double *dC = dev_alloc(d, (size_t)(ldc * n)), *dN = dev_alloc(d, 64 * 64);
    OK(ts_memset_async(st, dN, 0xff, 64 * 64 * 8));
    const double zero = 0, two = 2, one = 1;
    for (int t = 0; t < 4; t++) {
        const double *beta = t & 1 ? &two : &zero;
        int64_t k = t < 2 ? 0 : 9;
        const double *alpha = t < 2 ? &one : &zero;
        if (t & 1) upload(st, dC, ldc, C0, ldc, ldc, n);
        else OK(ts_memset_async(st, dC, 0xff, (size_t)(ldc * n) * 8));
        OK(ts_dev_gemm(st, TS_ENGINE_TESSERA, 'd', 'N', 'N', m, n, k, alpha, dN, 64, dN, 64, beta, dC, ldc));
        download(st, C, ldc, dC, ldc, ldc, n);
        OK(ts_stream_sync(st));
        for (int64_t j = 0; j < n; j++)
            for (int64_t i = 0; i < m; i++) assert_true(C[i + j * ldc] == (t & 1 ? 2 * C0[i + j * ldc] : 0.0));
    }
    ts_dfree(d, dC), ts_dfree(d, dN);
    OK(ts_stream_destroy(st));
    free(C0), free(C);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tc_odd_sizes),   cmocka_unit_test(test_tc_variants),
        cmocka_unit_test(test_tc_staged_c),    cmocka_unit_test(test_tc_choice),
        cmocka_unit_test(test_tc_medium),      cmocka_unit_test(test_tc_large),
        cmocka_unit_test(test_tc_rank_k),      cmocka_unit_test(test_tc_quick_returns),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
