// ts_l3.h: one Level-3 BLAS call other than GEMM (SYMM, HEMM, SYRK, HERK, SYR2K, HER2K, TRMM, TRSM),
// described once for the engines that run it and for its randomized verification.
//
// Operands are column-major and tight (lda = ra, ldb = rb, ldc = rc). The CPU BLAS runs the call
// here (ts_l3_cpu); the tile runtime and cuBLASXt run it through runtime/ts_engines.h.
#ifndef TS_L3_H
#define TS_L3_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/ts_kernels.h"

typedef enum {
    TS_L3_SYMM, TS_L3_HEMM, TS_L3_SYRK, TS_L3_HERK, TS_L3_SYR2K, TS_L3_HER2K, TS_L3_TRMM, TS_L3_TRSM,
    TS_L3_COUNT
} ts_l3_routine;

const char *ts_l3_name(int r); // "symm", "hemm", "syrk", "herk", "syr2k", "her2k", "trmm", "trsm"
static inline int ts_l3_is_herm(int r) { return r == TS_L3_HEMM || r == TS_L3_HERK || r == TS_L3_HER2K; }
static inline int ts_l3_is_mm(int r) { return r == TS_L3_SYMM || r == TS_L3_HEMM; }
static inline int ts_l3_is_rk(int r) { return r == TS_L3_SYRK || r == TS_L3_HERK; }
static inline int ts_l3_is_r2k(int r) { return r == TS_L3_SYR2K || r == TS_L3_HER2K; }
static inline int ts_l3_is_tri(int r) { return r == TS_L3_TRMM || r == TS_L3_TRSM; }

// One routine on one size and precision, with the effective scalars (the real ones of herk and
// the real beta of her2k, the imaginary part dropped for real precisions) and the operand sizes.
typedef struct {
    int r;                   // ts_l3_routine
    char prec, side, uplo, trans, diag;
    int64_t m, n, k;         // symm/trmm/trsm: m x n result; syrk/syr2k: n x n result, inner k
    int64_t ka;              // order of the symmetric or triangular A (0 for syrk/syr2k)
    int64_t ra, ca;          // A: rows and columns stored (lda = ra)
    int64_t rb, cb;          // B (symm, syr2k, trmm/trsm): rows, columns (ldb = rb); 0 x 0 for syrk
    int64_t rc;              // the result (C, or B of trmm/trsm): rc x n, ldc = rc
    ts_scalar alpha, beta;   // as passed to the routine
    double za[2], zb[2];     // as used, {re, im}
    double flops;            // the standard count (x4 for complex)
} ts_l3_prob;

// The call of routine r in precision prec on the size a x b (symm/hemm/trmm/trsm: m x n;
// syrk/herk/syr2k/her2k: n x k), flags and scalars {re, im} as given.
ts_l3_prob ts_l3_prob_make(int r, char prec, char side, char uplo, char trans, char diag, int64_t a, int64_t b,
                           const double alpha[2], const double beta[2]);
static inline size_t ts_l3_elems_a(const ts_l3_prob *p) { return (size_t)p->ra * (size_t)p->ca; }
static inline size_t ts_l3_elems_b(const ts_l3_prob *p) { return (size_t)p->rb * (size_t)p->cb; }
static inline size_t ts_l3_elems_c(const ts_l3_prob *p) { return (size_t)p->rc * (size_t)p->n; }
// side, uplo, trans, diag as they apply ('-' where not), NUL-terminated.
void ts_l3_flags(const ts_l3_prob *p, char buf[5]);

// The CPU BLAS (CBLAS, column-major) on host operands: W is C (symm, syrk, syr2k) or B, in place
// (trmm, trsm). Returns 0, or TS_ERR_ARG for a routine the precision does not have.
int ts_l3_cpu(const ts_l3_prob *p, const void *A, const void *B, void *W);

// Randomized verification with `nvec` random vectors (ts_l3_verify.c states the products and the
// bound's derivation): prepared once per call from the original operands (A, B, and C0 for
// symm/syrk/syr2k), then any number of results W checked against it. The scaled error of a
// correct result stays below TS_L3_VERIFY_BOUND; NaN/Inf results give NaN/Inf, and syrk/syr2k
// results that changed the strict triangle opposite to uplo give Inf with *outside set.
#define TS_L3_VERIFY_BOUND 1.0
typedef struct ts_l3_verify ts_l3_verify;
int ts_l3_verify_prepare(const ts_l3_prob *p, const void *A, const void *B, const void *C0, int nvec,
                         uint64_t seed, ts_l3_verify **out);
double ts_l3_verify_error(const ts_l3_verify *v, const void *W, int *outside);
void ts_l3_verify_free(ts_l3_verify *v);

#endif
