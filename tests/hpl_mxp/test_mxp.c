// test_mxp.c: HPL-MxP: the 64-bit generator, the 16-bit conversions, the kernels on the host, whole runs (CPU, simulated device), an unstable matrix, HPL-MxP.dat.
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "algorithms/hpl/ts_hpl_internal.h"
#include "algorithms/hpl_mxp/ts_mxp.h"
#include "core/ts_error.h"
#include "core/ts_rng.h"
#include "kernels/ts_mxp_kernels.h"

// The jump-ahead agrees with stepping, and element (i, j) is draw 1 + i + j N of seed 1.
static void test_lcg64(void **state) {
    (void)state;
    uint64_t x = TS_MXP_SEED_A;
    for (uint64_t n = 0; n < 300; n++) {
        assert_true(ts_lcg64_apply(ts_lcg64_jump_n(n), TS_MXP_SEED_A) == x);
        x = TS_MXP_LCG_A * x + TS_MXP_LCG_C;
    }
    const int64_t N = 7;
    x = TS_MXP_SEED_A;
    for (int64_t j = 0; j < N; j++)
        for (int64_t i = 0; i < N; i++) {
            x = TS_MXP_LCG_A * x + TS_MXP_LCG_C;
            assert_true(ts_mxp_element(N, i, j) == (double)x * 0x1p-64 - 0.5);
            assert_true(ts_mxp_element(N, i, j) >= -0.5 && ts_mxp_element(N, i, j) < 0.5);
        }
    x = TS_MXP_SEED_B;
    for (int64_t i = 0; i < 5; i++) {
        x = TS_MXP_LCG_A * x + TS_MXP_LCG_C;
        assert_true(ts_mxp_rhs(i) == ts_mxp_value(x));
    }
    // a far jump composes: 2^40 + 3 steps = 3 steps after 2^40
    uint64_t far = ts_lcg64_apply(ts_lcg64_jump_n((1ull << 40) + 3), 5);
    uint64_t y = ts_lcg64_apply(ts_lcg64_jump_n(1ull << 40), 5);
    for (int s = 0; s < 3; s++) y = TS_MXP_LCG_A * y + TS_MXP_LCG_C;
    assert_true(far == y);
}

static uint16_t h(float v) { return ts_mxp_to16(v, TS_MXP_FP16); }
static uint16_t bf(float v) { return ts_mxp_to16(v, TS_MXP_BF16); }
static float fbits(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static void test_to16(void **state) {
    (void)state;
    assert_int_equal(h(1.0f), 0x3c00);
    assert_int_equal(h(-2.0f), 0xc000);
    assert_int_equal(h(65504.0f), 0x7bff);
    assert_int_equal(h(65519.0f), 0x7bff);       // below the midpoint to 65536
    assert_int_equal(h(65520.0f), 0x7c00);       // the midpoint ties to even: infinity
    assert_int_equal(h(ldexpf(1.0f, -14)), 0x0400); // smallest normal
    assert_int_equal(h(ldexpf(1.0f, -24)), 0x0001); // smallest subnormal
    assert_int_equal(h(ldexpf(1.0f, -25)), 0x0000); // ties to even (0)
    assert_int_equal(h(ldexpf(1.5f, -25)), 0x0001);
    assert_int_equal(h(ldexpf(3.0f, -25)), 0x0002); // 1.5 units ties to even (2)
    assert_int_equal(h(1.0f + ldexpf(1.0f, -11)), 0x3c00); // tie to even
    assert_int_equal(h(1.0f + ldexpf(3.0f, -11)), 0x3c02);
    assert_true(isnan(ts_mxp_from16(h(NAN), TS_MXP_FP16)));
    // every finite half widens and narrows back to itself
    for (uint32_t u = 0; u < 65536; u++) {
        if (((u >> 10) & 0x1f) == 0x1f) continue;
        float f = ts_mxp_from16((uint16_t)u, TS_MXP_FP16);
        assert_int_equal(h(f), u);
    }
    assert_int_equal(bf(1.0f), 0x3f80);
    assert_int_equal(bf(fbits(0x3f808000u)), 0x3f80); // tie to even
    assert_int_equal(bf(fbits(0x3f818000u)), 0x3f82);
    assert_int_equal(bf(fbits(0x3f808001u)), 0x3f81);
    for (uint32_t u = 0; u < 65536; u += 7) {
        if (((u >> 7) & 0xff) == 0xff) continue;
        assert_int_equal(bf(ts_mxp_from16((uint16_t)u, TS_MXP_BF16)), u);
    }
}

// The generator and the FP64 residual on the host against the element formula.
static void test_gen_resid(void **state) {
    (void)state;
    const int64_t N = 37, r0 = 5, c0 = 3, m = 20, n = 30, lda = 24;
    ts_mxp_kern *k;
    assert_int_equal(ts_mxp_kern_create(NULL, TS_MXP_FP16, 16, 64, &k), 0);
    float *A = calloc((size_t)(lda * n), sizeof(float));
    double rs[20], ad[20], d[20], x[30], b[20], r[20];
    for (int i = 0; i < 20; i++) ad[i] = 99.0;
    assert_int_equal(ts_mxp_gen(k, N, r0, c0, m, n, A, lda, rs, ad), 0);
    for (int64_t i = 0; i < m; i++) {
        double s = 0;
        for (int64_t j = 0; j < n; j++) {
            const double v = ts_mxp_element(N, r0 + i, c0 + j);
            assert_true(A[i + j * lda] == (float)v);
            if (r0 + i != c0 + j) s += fabs(v);
        }
        assert_true(fabs(rs[i] - s) <= 1e-14 * s);
        const int64_t jd = r0 + i - c0;
        if (jd >= 0 && jd < n) assert_true(ad[i] == ts_mxp_element(N, r0 + i, r0 + i));
        else assert_true(ad[i] == 99.0);
        d[i] = 10.0 + (double)i;
        b[i] = 0.25 * (double)i;
    }
    for (int64_t j = 0; j < n; j++) x[j] = 1.0 / (1.0 + (double)j);
    assert_int_equal(ts_mxp_resid(k, N, r0, c0, m, n, d, x, b, r), 0);
    for (int64_t i = 0; i < m; i++) {
        double s = b[i];
        for (int64_t j = 0; j < n; j++)
            s -= (r0 + i == c0 + j ? d[i] : ts_mxp_element(N, r0 + i, c0 + j)) * x[j];
        assert_true(fabs(r[i] - s) <= 1e-13);
    }
    free(A);
    ts_mxp_kern_destroy(k);
}

// The residual over a rank's block-cyclic share in one call against the element formula, for every
// rank of a 2 x 3 grid (blocks of 5, N = 37: the last block narrower), and the P = Q = 1 map.
static void test_resid_bc(void **state) {
    (void)state;
    const int64_t N = 37, nb = 5;
    ts_mxp_kern *k;
    assert_int_equal(ts_mxp_kern_create(NULL, TS_MXP_FP16, nb, 64, &k), 0);
    const int grids[2][2] = {{2, 3}, {1, 1}};
    for (int gi = 0; gi < 2; gi++) {
        const int P = grids[gi][0], Q = grids[gi][1];
        for (int prow = 0; prow < P; prow++)
            for (int pcol = 0; pcol < Q; pcol++) {
                const int64_t m = ts_hpl_numroc(N, nb, prow, P), n = ts_hpl_numroc(N, nb, pcol, Q);
                double d[40], x[40], b[40], r[40];
                for (int64_t i = 0; i < m; i++) d[i] = 10.0 + (double)i, b[i] = 0.25 * (double)i;
                for (int64_t j = 0; j < n; j++) x[j] = 1.0 / (1.0 + (double)j);
                assert_int_equal(ts_mxp_resid_bc(k, N, nb, P, prow, Q, pcol, m, n, d, x, b, r), 0);
                int diag = 0;
                for (int64_t i = 0; i < m; i++) {
                    const int64_t g = ts_hpl_l2g(i, nb, prow, P);
                    double s = b[i];
                    for (int64_t j = 0; j < n; j++) {
                        const int64_t h = ts_hpl_l2g(j, nb, pcol, Q);
                        diag += g == h;
                        s -= (g == h ? d[i] : ts_mxp_element(N, g, h)) * x[j];
                    }
                    assert_true(fabs(r[i] - s) <= 1e-13);
                }
                // the diagonal elements here: those of the blocks on this rank's row and column
                int64_t want = 0;
                for (int64_t kb = 0; kb * nb < N; kb++)
                    if (kb % P == prow && kb % Q == pcol) want += N - kb * nb < nb ? N - kb * nb : nb;
                assert_int_equal(diag, want);
            }
    }
    assert_int_not_equal(ts_mxp_resid_bc(k, N, nb, 2, 2, 1, 0, 3, 3, NULL, NULL, NULL, NULL), 0); // prow beyond P
    ts_error_clear();
    ts_mxp_kern_destroy(k);
}

// The diagonal block: L U = A11 and the inverses, on a diagonally dominant block.
static void test_getrf_inv(void **state) {
    (void)state;
    enum { n = 70 };
    ts_mxp_kern *k;
    assert_int_equal(ts_mxp_kern_create(NULL, TS_MXP_FP16, n, n, &k), 0);
    static float A[n * n], A0[n * n], Li[n * n], Ui[n * n];
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) A0[i + j * n] = i == j ? (float)n : (float)ts_mxp_element(n, i, j);
    memcpy(A, A0, sizeof A);
    assert_int_equal(ts_mxp_getrf_inv(k, n, A, n, Li, Ui, n, 100), 0);
    int64_t col = -1;
    assert_int_equal(ts_mxp_kern_breakdown(k, &col), 0);
    assert_int_equal(col, 0);
    double worst = 0, worst_inv = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0, sl = 0, su = 0;
            for (int t = 0; t < n; t++) {
                double l = t < i ? A[i + t * n] : t == i ? 1.0 : 0.0;
                double u = t <= j ? A[t + j * n] : 0.0;
                s += l * u;
                double lt = t > i ? 0.0 : (t == i ? 1.0 : A[i + t * n]); // L(i, t)
                sl += lt * Li[t + j * n];                                // (L Linv)(i, j)
                double ut = t >= i ? A[i + t * n] : 0.0;                 // U(i, t)
                su += ut * Ui[t + j * n];
            }
            worst = fmax(worst, fabs(s - A0[i + j * n]));
            worst_inv = fmax(worst_inv, fmax(fabs(sl - (i == j)), fabs(su - (i == j))));
        }
    assert_true(worst < 1e-4 * n);
    assert_true(worst_inv < 1e-5);
    // a zero pivot is flagged with its global column
    memset(A, 0, sizeof A);
    A[0] = 1.0f;
    assert_int_equal(ts_mxp_getrf_inv(k, 4, A, n, Li, Ui, n, 200), 0);
    assert_int_equal(ts_mxp_kern_breakdown(k, &col), 0);
    assert_int_equal(col, 202);
    ts_mxp_kern_destroy(k);
}

static ts_hpl_ctx *ctx_for(ts_hpl_exec exec) {
    ts_hpl_opts o;
    memset(&o, 0, sizeof o);
    o.exec = exec;
    o.panel_on_device = -1;
    o.engine = "auto";
    ts_hpl_ctx *c = NULL;
    assert_int_equal(ts_hpl_ctx_create(&o, &c), 0);
    return c;
}

static void check_valid(const ts_mxp_case *mc, const ts_mxp_result *r) {
    assert_false(r->skipped);
    assert_int_equal(r->breakdown, 0);
    assert_true(r->checked && r->passed);
    assert_true(r->resid >= 0 && r->resid < mc->threshold);
    assert_int_equal(r->stop, 0);
    // FP16/BF16 factors: the first solve is far from 16, a few corrections reach it
    assert_true(r->iterations >= 1 && r->iterations <= 10);
    assert_int_equal(r->n_history, r->iterations + 1);
    assert_true(r->history[0] > 16.0);
    assert_true(r->history[r->n_history - 1] == r->resid);
    for (int i = 1; i < r->n_history; i++) assert_true(r->history[i] < r->history[i - 1]);
    // the credit: (2/3 N^3 + 3/2 N^2) / (LU + refinement)
    const double n = (double)mc->N, f = 2.0 / 3.0 * n * n * n + 1.5 * n * n;
    assert_true(fabs(r->time - (r->t_lu + r->t_ir)) <= 1e-12 + 1e-9 * r->time);
    assert_true(fabs(r->gflops - f / r->time / 1e9) <= 1e-9 * r->gflops);
    assert_true(fabs(ts_hpl_flops(mc->N) - f) <= 1e-12 * f);
    // the norms of the check: ||A||_oo = 2 max diag ~ N/2, ||b||_oo < 0.5
    assert_true(r->norm_A > 0.4 * n && r->norm_A < 0.6 * n);
    assert_true(r->norm_b > 0.45 && r->norm_b <= 0.5);
    assert_true(r->eps == 0x1p-53);
}

static void test_run_cpu(void **state) {
    (void)state;
    ts_hpl_ctx *c = ctx_for(TS_HPL_EXEC_CPU);
    ts_mxp_opts o;
    memset(&o, 0, sizeof o);
    ts_mxp_case mc = {650, 64, 1, 1, 0, 16.0, TS_MXP_FP16};
    ts_mxp_result r;
    assert_int_equal(ts_mxp_run(c, &o, &mc, &r), 0);
    assert_string_equal(r.exec_used, "cpu");
    check_valid(&mc, &r);
    // N not a multiple of NB, BF16
    ts_mxp_case mb = {501, 48, 1, 1, 0, 16.0, TS_MXP_BF16};
    assert_int_equal(ts_mxp_run(c, &o, &mb, &r), 0);
    check_valid(&mb, &r);
    // a grid needs its P x Q processes: skipped with its reason in one process
    ts_mxp_case mg = {100, 16, 1, 2, 0, 16.0, TS_MXP_FP16};
    assert_int_equal(ts_mxp_run(c, &o, &mg, &r), 0);
    assert_true(r.skipped);
    ts_hpl_ctx_destroy(c);
}

// The same case on a simulated device runs the same code through the device layer: the same history.
static void test_run_sim(void **state) {
    (void)state;
    ts_mxp_opts o;
    memset(&o, 0, sizeof o);
    ts_mxp_case mc = {520, 64, 1, 1, 0, 16.0, TS_MXP_FP16};
    ts_hpl_ctx *c = ctx_for(TS_HPL_EXEC_CPU);
    ts_mxp_result rc;
    assert_int_equal(ts_mxp_run(c, &o, &mc, &rc), 0);
    ts_hpl_ctx_destroy(c);
    setenv("TESSERA_SIM_DEVICES", "1", 1);
    setenv("TESSERA_SIM_MEM", "128M", 1);
    c = ctx_for(TS_HPL_EXEC_DEVICE);
    ts_mxp_result rs;
    ts_mxp_result r1;
    for (int depth = 0; depth <= 1; depth++) { // one stream, then the look-ahead's two
        o.depth = depth;
        assert_int_equal(ts_mxp_run(c, &o, &mc, &rs), 0);
        assert_string_equal(rs.exec_used, "device:sim");
        assert_string_equal(rs.engine_used, "sim");
        assert_int_equal(rs.depth, depth);
        check_valid(&mc, &rs);
        assert_int_equal(rs.iterations, rc.iterations);
        // depth 0 runs the host's operations in the host's order: the same numbers; the look-ahead
        // splits each update into three GEMMs (another rounding of the FP32 sums): close to them
        const double tol = depth == 0 ? 1e-12 : 1e-3;
        assert_true(fabs(rs.history[0] - rc.history[0]) <= tol * rc.history[0]);
    }
    // the look-ahead's two streams are ordered by events, not by luck: a second run is bit for bit the same
    assert_int_equal(ts_mxp_run(c, &o, &mc, &r1), 0);
    assert_int_equal(r1.n_history, rs.n_history);
    for (int i = 0; i < rs.n_history; i++) assert_true(r1.history[i] == rs.history[i]);
    // N not a multiple of NB, a last block narrower than the one before, with look-ahead
    ts_mxp_case odd = {333, 64, 1, 1, 0, 16.0, TS_MXP_BF16};
    assert_int_equal(ts_mxp_run(c, &o, &odd, &rs), 0);
    check_valid(&odd, &rs);
    // an unstable matrix fails through the look-ahead's second stream too
    o.gen = TS_MXP_GEN_PLAIN;
    ts_mxp_case bad = {384, 64, 1, 1, 0, 16.0, TS_MXP_FP16};
    assert_int_equal(ts_mxp_run(c, &o, &bad, &rs), 0);
    assert_false(rs.passed);
    o.gen = TS_MXP_GEN_DOMINANT;
    // too large for the simulated device's memory: skipped with the largest N that fits
    ts_mxp_case big = {8000, 64, 1, 1, 0, 16.0, TS_MXP_FP16};
    assert_int_equal(ts_mxp_run(c, &o, &big, &rs), 0);
    assert_true(rs.skipped);
    assert_non_null(strstr(rs.why, "does not fit"));
    ts_hpl_ctx_destroy(c);
    unsetenv("TESSERA_SIM_DEVICES");
    unsetenv("TESSERA_SIM_MEM");
}

// E4M3: every code widens to its value and back; ties go to even, beyond 448 saturates, below half
// the smallest subnormal goes to zero; the per-block scale brings the largest magnitude into (224, 448].
static void test_fp8(void **state) {
    (void)state;
    int finite = 0;
    for (int c = 0; c < 256; c++) {
        const float v = ts_mxp_from8((uint8_t)c);
        if ((c & 0x7f) == 0x7f) {
            assert_true(isnan(v));
            continue;
        }
        finite++;
        assert_int_equal(ts_mxp_to8(v), (c == 0x80 ? 0x80 : c)); // -0 stays -0
    }
    assert_int_equal(finite, 254);
    assert_true(ts_mxp_from8(0x7e) == 448.0f && ts_mxp_from8(0x01) == 0x1p-9f && ts_mxp_from8(0x08) == 0x1p-6f);
    assert_true(ts_mxp_from8(0x38) == 1.0f && ts_mxp_from8(0xb8) == -1.0f);
    // 1 + 1/16 lies halfway between 1 and 1.125: to the even mantissa (1); 1 + 3/16: to 1.25
    assert_int_equal(ts_mxp_to8(1.0625f), 0x38);
    assert_int_equal(ts_mxp_to8(1.1875f), 0x3a);
    assert_int_equal(ts_mxp_to8(1.07f), 0x39);
    // subnormals: 1.5 units of 2^-9 ties to 2 units; 0.5 units ties to 0
    assert_int_equal(ts_mxp_to8(1.5f * 0x1p-9f), 0x02);
    assert_int_equal(ts_mxp_to8(0.5f * 0x1p-9f), 0x00);
    assert_int_equal(ts_mxp_to8(0.51f * 0x1p-9f), 0x01);
    assert_int_equal(ts_mxp_to8(1e6f), 0x7e);
    assert_int_equal(ts_mxp_to8(-1e6f), 0xfe);
    assert_int_equal(ts_mxp_to8(INFINITY), 0x7e);
    assert_int_equal(ts_mxp_to8(NAN), 0x7f);
    // relative error of the rounding: at most 2^-4 for normal values
    for (float v = 0x1p-6f; v < 448.0f; v *= 1.0137f)
        assert_true(fabsf(ts_mxp_from8(ts_mxp_to8(v)) - v) <= 0x1p-4f * v);
    // the scale: amax s in (224, 448], a power of two
    const float amax[] = {1e-30f, 3.7e-6f, 0.01f, 1.0f, 224.0f, 392.0f, 448.0f, 449.0f, 1e5f, 3e30f};
    for (size_t i = 0; i < sizeof amax / sizeof amax[0]; i++) {
        const float sc = ts_mxp_scale8(amax[i]);
        int e;
        assert_true(frexpf(sc, &e) == 0.5f);
        assert_true(amax[i] * sc <= 448.0f && amax[i] * sc > 224.0f);
    }
    assert_true(ts_mxp_scale8(0.0f) == 1.0f && ts_mxp_scale8(INFINITY) == 1.0f && ts_mxp_scale8(NAN) == 1.0f);
}

// cvt8 (scaled, transposed, k padded) and gemm8 on the host against FP64 sums of the same E4M3 values;
// the scaled operands keep O(1/N) entries (L21's size) from E4M3's underflow.
static void test_gemm8(void **state) {
    (void)state;
    const int64_t m = 37, n = 29, kk = 21, kp = 32, ld = 32;
    float *A = malloc(sizeof(float) * m * kk), *B = malloc(sizeof(float) * kk * n), *C = calloc(m * n, sizeof(float));
    uint8_t *At8 = malloc(ld * m), *B8 = malloc(ld * n);
    float sc[2];
    for (int64_t i = 0; i < m * kk; i++) A[i] = 1e-5f * (float)((i * 7919) % 1000 - 500) / 500.0f; // ~1e-5
    for (int64_t i = 0; i < kk * n; i++) B[i] = (float)((i * 104729) % 1000 - 500) / 1000.0f;
    memset(At8, 0xff, (size_t)(ld * m));
    memset(B8, 0xff, (size_t)(ld * n));
    ts_mxp_kern *k = NULL;
    assert_int_equal(ts_mxp_kern_create(NULL, TS_MXP_FP8, 64, 64, &k), 0);
    assert_int_equal(ts_mxp_cvt8(k, m, kk, A, m, 1, kp, At8, ld, &sc[0]), 0);
    assert_int_equal(ts_mxp_cvt8(k, kk, n, B, kk, 0, kp, B8, ld, &sc[1]), 0);
    assert_true(sc[0] == 1.0f / ts_mxp_scale8(1e-5f * 499.0f / 500.0f) || sc[0] == 1.0f / ts_mxp_scale8(1e-5f));
    for (int64_t i = 0; i < m; i++)
        for (int64_t r = kk; r < kp; r++) assert_int_equal(At8[r + i * ld], 0); // the padding
    for (int64_t j = 0; j < n; j++)
        for (int64_t r = kk; r < kp; r++) assert_int_equal(B8[r + j * ld], 0);
    // the transposed operand holds A(i, l) at (l, i), within E4M3's relative rounding
    for (int64_t i = 0; i < m; i++)
        for (int64_t l = 0; l < kk; l++) {
            const float back = ts_mxp_from8(At8[l + i * ld]) * sc[0], v = A[i + l * m];
            assert_true(fabsf(back - v) <= 0x1p-4f * fabsf(v) + 1e-12f);
        }
    for (int64_t i = 0; i < m * n; i++) C[i] = 1.0f;
    assert_int_equal(ts_mxp_gemm8(k, m, n, kp, -2.0f, At8, ld, &sc[0], B8, ld, &sc[1], 1.0f, C, m), 0);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double ref = 0.0, mag = 0.0;
            for (int64_t l = 0; l < kk; l++) {
                const double p = (double)ts_mxp_from8(At8[l + i * ld]) * sc[0] * ts_mxp_from8(B8[l + j * ld]) * sc[1];
                ref += p;
                mag += fabs(p);
            }
            assert_true(fabs(C[i + j * m] - (1.0 - 2.0 * ref)) <= 1e-6 * (1.0 + 2.0 * mag));
        }
    // a 16-bit context refuses the FP8 operations
    ts_mxp_kern *k16 = NULL;
    assert_int_equal(ts_mxp_kern_create(NULL, TS_MXP_FP16, 64, 64, &k16), 0);
    assert_int_equal(ts_mxp_cvt8(k16, m, kk, A, m, 1, kp, At8, ld, &sc[0]), TS_ERR_ARG);
    ts_mxp_kern_destroy(k16);
    ts_mxp_kern_destroy(k);
    free(A), free(B), free(C), free(At8), free(B8);
}

// FP8 runs (CPU, simulated device with and without look-ahead): the E4M3 update is a weaker
// preconditioner than FP16's, yet the refinement reaches the bound in a few more steps.
static void test_run_fp8(void **state) {
    (void)state;
    ts_mxp_opts o;
    memset(&o, 0, sizeof o);
    ts_mxp_case mc = {650, 64, 1, 1, 0, 16.0, TS_MXP_FP8}, m16 = mc;
    m16.fmt = TS_MXP_FP16;
    ts_hpl_ctx *c = ctx_for(TS_HPL_EXEC_CPU);
    ts_mxp_result r, r16;
    assert_int_equal(ts_mxp_run(c, &o, &mc, &r), 0);
    check_valid(&mc, &r);
    assert_int_equal(ts_mxp_run(c, &o, &m16, &r16), 0);
    // the first solve with E4M3 factors is further off than with FP16 ones
    assert_true(r.history[0] > r16.history[0]);
    assert_true(r.iterations >= r16.iterations);
    // N not a multiple of NB nor of 16 (the last block's k padded)
    ts_mxp_case odd = {517, 40, 1, 1, 0, 16.0, TS_MXP_FP8};
    ts_mxp_result rodd;
    assert_int_equal(ts_mxp_run(c, &o, &odd, &rodd), 0);
    check_valid(&odd, &rodd);
    // not on a grid (P Q > 1): skipped with the reason
    ts_mxp_case mg = {100, 16, 1, 1, 0, 16.0, TS_MXP_FP8};
    mg.Q = 2;
    assert_int_equal(ts_mxp_run(c, &o, &mg, &r), 0);
    assert_true(r.skipped);
    // an unstable matrix ends without a pass (no hang): breakdown, divergence or the cap
    o.gen = TS_MXP_GEN_PLAIN;
    ts_mxp_case bad = {400, 64, 1, 1, 0, 16.0, TS_MXP_FP8};
    assert_int_equal(ts_mxp_run(c, &o, &bad, &r), 0);
    assert_false(r.passed);
    assert_true(r.stop >= 1 && r.stop <= 3);
    o.gen = TS_MXP_GEN_DOMINANT;
    ts_hpl_ctx_destroy(c);
    setenv("TESSERA_SIM_DEVICES", "1", 1);
    setenv("TESSERA_SIM_MEM", "128M", 1);
    c = ctx_for(TS_HPL_EXEC_DEVICE);
    ts_mxp_result rs;
    for (int depth = 0; depth <= 1; depth++) {
        o.depth = depth;
        assert_int_equal(ts_mxp_run(c, &o, &odd, &rs), 0);
        assert_string_equal(rs.exec_used, "device:sim");
        assert_int_equal(rs.depth, depth);
        check_valid(&odd, &rs);
        if (depth == 0) // the host's operations in the host's order: the same numbers
            assert_true(fabs(rs.history[0] - rodd.history[0]) <= 1e-12 * rodd.history[0]);
    }
    ts_hpl_ctx_destroy(c);
    unsetenv("TESSERA_SIM_DEVICES");
    unsetenv("TESSERA_SIM_MEM");
}

// Not diagonally dominant: the LU without pivoting breaks down or the refinement fails; never passed.
static void test_unstable(void **state) {
    (void)state;
    ts_hpl_ctx *c = ctx_for(TS_HPL_EXEC_CPU);
    ts_mxp_opts o;
    memset(&o, 0, sizeof o);
    o.gen = TS_MXP_GEN_PLAIN;
    for (int64_t N = 300; N <= 900; N += 300) {
        ts_mxp_case mc = {N, 64, 1, 1, 0, 16.0, TS_MXP_FP16};
        ts_mxp_result r;
        assert_int_equal(ts_mxp_run(c, &o, &mc, &r), 0);
        assert_false(r.passed);
        assert_false(r.skipped);
        assert_true(r.stop >= 1 && r.stop <= 3);
        if (r.stop == 3) assert_true(r.breakdown >= 1 && r.breakdown <= N);
        else assert_true(!(r.resid < 16.0) || r.stop == 1);
    }
    ts_hpl_ctx_destroy(c);
}

static void test_dat(void **state) {
    (void)state;
    char path[] = "/tmp/test_mxp_datXXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fprintf(f, "title\nsecond\nout.txt\n6\n2\n1000 2000\n1\n128\n1\n1\n1\n1\n16.0\n2\nbf16 fp16\n");
    fclose(f);
    ts_mxp_dat d;
    assert_int_equal(ts_mxp_dat_read(path, &d), 0);
    assert_int_equal(d.head.nN, 2);
    assert_true(d.head.N[1] == 2000);
    assert_int_equal(d.head.NB[0], 128);
    assert_int_equal(d.head.pmap, 1);
    assert_true(d.head.threshold == 16.0);
    assert_int_equal(d.nprec, 2);
    assert_int_equal(d.prec[0], TS_MXP_BF16);
    assert_int_equal(d.prec[1], TS_MXP_FP16);
    ts_mxp_case mc = {1000, 128, 1, 1, 1, 16.0, TS_MXP_BF16};
    char tv[16];
    ts_mxp_tv(&mc, tv);
    assert_string_equal(tv, "WCMXBF16");
    f = fopen(path, "w");
    fprintf(f, "title\nsecond\nout.txt\n6\n1\n1000\n1\n128\n0\n1\n1\n1\n16.0\n1\nfp32\n");
    fclose(f);
    assert_int_equal(ts_mxp_dat_read(path, &d), TS_ERR_PARSE);
    assert_non_null(strstr(ts_error_last()->message, ":15: precision 'fp32'"));
    unlink(path);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lcg64),       cmocka_unit_test(test_to16),   cmocka_unit_test(test_gen_resid),
        cmocka_unit_test(test_resid_bc),
        cmocka_unit_test(test_getrf_inv),   cmocka_unit_test(test_run_cpu), cmocka_unit_test(test_run_sim),
        cmocka_unit_test(test_unstable),    cmocka_unit_test(test_dat),
        cmocka_unit_test(test_fp8),         cmocka_unit_test(test_gemm8),  cmocka_unit_test(test_run_fp8),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
