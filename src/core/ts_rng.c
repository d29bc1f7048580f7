// ts_rng.c: HPL 2.3's 31-bit LCG with O(log n) jump-ahead, its matrix fill, and counter-based
// uniform/gaussian generators.
#include "ts_rng.h"

#include <math.h>

#define LCG_A 1103515245u
#define LCG_C 12345u
#define MASK31 0x7fffffffu

static const ts_lcg_jump lcg_step = {LCG_A, LCG_C};

// g after f: x -> g.a (f.a x + f.c) + g.c. Both coefficients stay below 2^31, so every product
// fits in 62 bits; reducing mod 2^31 is a mask because 2^31 divides 2^64.
static ts_lcg_jump compose(ts_lcg_jump g, ts_lcg_jump f) {
    ts_lcg_jump r;
    r.a = (uint32_t)(((uint64_t)g.a * f.a) & MASK31);
    r.c = (uint32_t)(((uint64_t)g.a * f.c + g.c) & MASK31);
    return r;
}

ts_lcg_jump ts_lcg_jump_n(uint64_t n) {
    // Square-and-multiply on affine maps. All maps here are powers of one step, so they commute
    // and the order of composition does not matter. The sequence has period 2^31 (c odd, a = 1
    // mod 4), but reducing n is unnecessary: at most 64 squarings either way.
    ts_lcg_jump result = {1u, 0u};
    ts_lcg_jump base = lcg_step;
    while (n) {
        if (n & 1u) result = compose(base, result);
        base = compose(base, base);
        n >>= 1;
    }
    return result;
}

uint32_t ts_lcg_apply(ts_lcg_jump j, uint32_t x) {
    return (uint32_t)(((uint64_t)j.a * (x & MASK31) + j.c) & MASK31);
}

uint32_t ts_hpl_state_at(uint32_t seed, uint64_t n) {
    return ts_lcg_apply(ts_lcg_jump_n(n), seed & MASK31);
}

// Exact in double: x < 2^31 and the scale is a power of two.
double ts_hpl_value(uint32_t x) { return 0.5 - (double)(x & MASK31) * (1.0 / 2147483648.0); }

double ts_hpl_element(uint32_t seed, int64_t M, int64_t i, int64_t j) {
    // Indices are taken modulo 2^64; the period 2^31 divides 2^64, so wrap-around is harmless.
    uint64_t n = 1u + (uint64_t)i + (uint64_t)j * (uint64_t)M;
    return ts_hpl_value(ts_hpl_state_at(seed, n));
}

void ts_hpl_rng_init(ts_hpl_rng *r, uint32_t seed, uint64_t n) {
    r->x = ts_hpl_state_at(seed, n);
    r->step = lcg_step;
}

double ts_hpl_rng_next(ts_hpl_rng *r) {
    double v = ts_hpl_value(r->x);
    r->x = ts_lcg_apply(r->step, r->x);
    return v;
}

// Lanes of one column advanced together: lane l holds X(s + l + k*LANES) after k rounds, so the
// inner loop has no serial dependency and vectorises (32-bit multiplies wrap mod 2^32, and masking
// to 31 bits then gives the value mod 2^31).
#define FILL_LANES 8

static void fill_column(uint32_t x0, int64_t rows, ts_lcg_jump jl, double *col) {
    uint32_t lane[FILL_LANES];
    uint32_t x = x0;
    for (int l = 0; l < FILL_LANES; l++) {
        lane[l] = x;
        x = (LCG_A * x + LCG_C) & MASK31;
    }
    int64_t i = 0;
    for (; i + FILL_LANES <= rows; i += FILL_LANES) {
        for (int l = 0; l < FILL_LANES; l++) {
            col[i + l] = 0.5 - (double)lane[l] * (1.0 / 2147483648.0);
            lane[l] = (jl.a * lane[l] + jl.c) & MASK31;
        }
    }
    for (int l = 0; i < rows; i++, l++) col[i] = 0.5 - (double)lane[l] * (1.0 / 2147483648.0);
}

void ts_hpl_fill(uint32_t seed, int64_t M, int64_t row0, int64_t col0, int64_t rows, int64_t cols,
                 double *A, int64_t lda) {
    if (rows <= 0 || cols <= 0 || !A) return;
    // Cost: two O(log) jumps to reach the first column and to build the column stride, then one
    // affine map application per column and one multiply-add per element:
    // O(rows*cols + cols + log(M*cols)).
    ts_lcg_jump to_col = ts_lcg_jump_n((uint64_t)M);
    ts_lcg_jump lanes = ts_lcg_jump_n(FILL_LANES);
    uint32_t x = ts_hpl_state_at(seed, 1u + (uint64_t)row0 + (uint64_t)col0 * (uint64_t)M);
    for (int64_t j = 0; j < cols; j++) {
        fill_column(x, rows, lanes, A + j * lda);
        x = ts_lcg_apply(to_col, x);
    }
}

// splitmix64's finaliser (Steele, Lea, Flood 2014): a bijection of 64-bit words whose output
// passes BigCrush when fed a counter.
uint64_t ts_mix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

// Stream `key`, element `index`: the key is mixed first so that nearby keys give unrelated streams.
static uint64_t counter_bits(uint64_t key, uint64_t index) {
    return ts_mix64(ts_mix64(key) ^ (index * 0xd1b54a32d192ed03ull));
}

double ts_uniform_at(uint64_t key, uint64_t index) {
    return (double)(counter_bits(key, index) >> 11) * 0x1p-53 - 0.5;
}

double ts_gaussian_at(uint64_t key, uint64_t index, double mean, double stddev) {
    // Box-Muller from two independent words: u1 in (0, 1] keeps the logarithm finite.
    uint64_t h1 = counter_bits(key, 2 * index);
    uint64_t h2 = counter_bits(key, 2 * index + 1);
    double u1 = (double)((h1 >> 11) + 1) * 0x1p-53;
    double u2 = (double)(h2 >> 11) * 0x1p-53;
    double z = sqrt(-2.0 * log(u1)) * cos(6.283185307179586476925 * u2);
    return mean + stddev * z;
}

void ts_fill_uniform_d(uint64_t key, double *x, int64_t n) { ts_fill_uniform_d_from(key, x, 0, n); }

void ts_fill_uniform_s(uint64_t key, float *x, int64_t n) { ts_fill_uniform_s_from(key, x, 0, n); }

void ts_fill_uniform_d_from(uint64_t key, double *x, int64_t first, int64_t n) {
    for (int64_t i = 0; i < n; i++) x[i] = ts_uniform_at(key, (uint64_t)(first + i));
}

void ts_fill_uniform_s_from(uint64_t key, float *x, int64_t first, int64_t n) {
    // 24 bits so that every value is exact in float and stays below 0.5.
    for (int64_t i = 0; i < n; i++)
        x[i] = (float)((double)(counter_bits(key, (uint64_t)(first + i)) >> 40) * 0x1p-24 - 0.5);
}

void ts_fill_gaussian_d(uint64_t key, double *x, int64_t n, double mean, double stddev) {
    for (int64_t i = 0; i < n; i++) x[i] = ts_gaussian_at(key, (uint64_t)i, mean, stddev);
}

// ---- HPL-MxP's 64-bit LCG ----

static ts_lcg64_jump compose64(ts_lcg64_jump g, ts_lcg64_jump f) {
    ts_lcg64_jump r = {g.a * f.a, g.a * f.c + g.c}; // mod 2^64 by unsigned wrap-around
    return r;
}

ts_lcg64_jump ts_lcg64_jump_n(uint64_t n) {
    ts_lcg64_jump result = {1u, 0u};
    ts_lcg64_jump base = {TS_MXP_LCG_A, TS_MXP_LCG_C};
    while (n) {
        if (n & 1u) result = compose64(base, result);
        base = compose64(base, base);
        n >>= 1;
    }
    return result;
}

double ts_mxp_element(int64_t N, int64_t i, int64_t j) {
    uint64_t n = 1u + (uint64_t)i + (uint64_t)j * (uint64_t)N;
    return ts_mxp_value(ts_lcg64_apply(ts_lcg64_jump_n(n), TS_MXP_SEED_A));
}

double ts_mxp_rhs(int64_t i) {
    return ts_mxp_value(ts_lcg64_apply(ts_lcg64_jump_n(1u + (uint64_t)i), TS_MXP_SEED_B));
}
