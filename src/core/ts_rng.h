// ts_rng.h: HPL 2.3's matrix generator (bit for bit, with jump-ahead) and a gaussian generator.
#ifndef TS_RNG_H
#define TS_RNG_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// HPL 2.3 (testing/matgen, include/hpl_matgen.h) uses the linear congruential sequence
//   X(n+1) = (a X(n) + c) mod 2^31,  a = 1103515245 (16838*2^16 + 20077), c = 12345,
// seeded with X(0) = ISEED (HPL_pdtest uses 100). Its value is 0.5 - X(n)/2^31, in (-0.5, 0.5].
// HPL_pdmatgen gives element (i, j) of an M-row matrix the number X(1 + i + j*M), so the matrix
// does not depend on P, Q or NB. These functions reproduce that exactly.
#define TS_HPL_SEED 100u

typedef struct {
    uint32_t a, c; // X -> (a X + c) mod 2^31
} ts_lcg_jump;

typedef struct {
    uint32_t x;        // current state X(n), 31 bits
    ts_lcg_jump step;  // one step of the sequence
} ts_hpl_rng;

// The affine map that advances the sequence by n steps (n >= 0), computed in O(log n).
ts_lcg_jump ts_lcg_jump_n(uint64_t n);
// Apply a jump to a state.
uint32_t ts_lcg_apply(ts_lcg_jump j, uint32_t x);

// State X(n) of the sequence seeded with `seed` (X(0) = seed).
uint32_t ts_hpl_state_at(uint32_t seed, uint64_t n);
// HPL's value of a state: 0.5 - x / 2^31.
double ts_hpl_value(uint32_t x);

// Element (i, j) of HPL's M-row matrix generated from `seed` (i, j zero-based).
double ts_hpl_element(uint32_t seed, int64_t M, int64_t i, int64_t j);

// Sequential generator: ts_hpl_rng_init(&r, seed, n) positions at X(n); ts_hpl_rng_next returns
// the value of the current state, then advances (like HPL_rand).
void ts_hpl_rng_init(ts_hpl_rng *r, uint32_t seed, uint64_t n);
double ts_hpl_rng_next(ts_hpl_rng *r);

// Fill the column-major block A[0..rows) x [0..cols) (leading dimension lda) with the elements
// (row0 + i, col0 + j) of HPL's M-row matrix. Cost O(rows*cols + cols*log). Used by every
// distributed generator: a rank fills its local blocks with their global coordinates.
void ts_hpl_fill(uint32_t seed, int64_t M, int64_t row0, int64_t col0, int64_t rows, int64_t cols,
                 double *A, int64_t lda);

// HPL-MxP's generator (the reference hpl-ai code, matgen.c / hpl-ai.c): the 64-bit linear
// congruential sequence X(n+1) = a X(n) + c mod 2^64 with a = 6364136223846793005, c = 1, value
// (double)X * 2^-64 - 0.5 in [-0.5, 0.5). Element (i, j) of the N x N matrix is X(1 + i + j N) from
// seed 1 (column-major draws), b(i) is X(1 + i) from seed 2. Jump-ahead in O(log n), as above.
#define TS_MXP_LCG_A 6364136223846793005ull
#define TS_MXP_LCG_C 1ull
#define TS_MXP_SEED_A 1ull
#define TS_MXP_SEED_B 2ull
typedef struct {
    uint64_t a, c; // X -> a X + c mod 2^64
} ts_lcg64_jump;
ts_lcg64_jump ts_lcg64_jump_n(uint64_t n);
static inline uint64_t ts_lcg64_apply(ts_lcg64_jump j, uint64_t x) { return j.a * x + j.c; }
static inline double ts_mxp_value(uint64_t x) { return (double)x * 0x1p-64 - 0.5; }
// Element (i, j) of the N x N HPL-MxP matrix before its diagonal is set, and b(i).
double ts_mxp_element(int64_t N, int64_t i, int64_t j);
double ts_mxp_rhs(int64_t i);

// A counter-based generator for test and benchmark data (independent streams by key, any
// element reachable directly; splitmix64-style). Uniform in [-0.5, 0.5) and gaussian.
uint64_t ts_mix64(uint64_t x);
double ts_uniform_at(uint64_t key, uint64_t index);                     // [-0.5, 0.5)
double ts_gaussian_at(uint64_t key, uint64_t index, double mean, double stddev); // Box-Muller
void ts_fill_uniform_d(uint64_t key, double *x, int64_t n);
void ts_fill_uniform_s(uint64_t key, float *x, int64_t n);
// Elements first .. first+n-1 of those streams into x[0..n) (a part of a larger fill, e.g. one thread's).
void ts_fill_uniform_d_from(uint64_t key, double *x, int64_t first, int64_t n);
void ts_fill_uniform_s_from(uint64_t key, float *x, int64_t first, int64_t n);
void ts_fill_gaussian_d(uint64_t key, double *x, int64_t n, double mean, double stddev);

#ifdef __cplusplus
}
#endif

#endif
