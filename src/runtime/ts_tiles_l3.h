// ts_tiles_l3.h: the Level-3 BLAS beyond GEMM on the tile runtime (SYMM/HEMM, SYRK/HERK, SYR2K/HER2K, TRMM, TRSM).
//
// Same model as ts_tiles_gemm: operands in host memory (column-major), one task per C tile, each
// task a list of tile GEMMs run on one worker (a device or the CPU) with its operand tiles cached
// per device. A diagonal tile of a symmetric, Hermitian or triangular A is prepared on the device
// on its cached copy (mirrored, conjugated, or cut to its triangle: ts_tile_ops.h); diagonal C
// tiles of ?SYRK/?SYR2K/?HERK/?HER2K are written back in their uplo triangle only. ?TRMM and ?TRSM
// work in place on B: their tasks form chains along the dependency direction (docs/runtime.md).
// Arguments follow the reference BLAS (TS_ERR_ARG names the position); prec 's','d','c','z'; the
// Hermitian routines take 'c' or 'z'. alpha/beta point to one scalar of the precision, except the
// real alpha and beta of ?HERK and the real beta of ?HER2K (float for 'c', double for 'z').
// Every call returns 0 or a negative ts_status; stats may be NULL. Failures as ts_tiles_gemm.
#ifndef TS_TILES_L3_H
#define TS_TILES_L3_H

#include <stdint.h>

#include "runtime/ts_tiles.h"

#ifdef __cplusplus
extern "C" {
#endif

// C = alpha A B + beta C (side 'L') or alpha B A + beta C (side 'R'), A symmetric (hemm: Hermitian)
// with its uplo triangle stored; C and B are m x n.
int ts_tiles_symm(ts_tiles *rt, char prec, char side, char uplo, int64_t m, int64_t n, const void *alpha,
                  const void *A, int64_t lda, const void *B, int64_t ldb, const void *beta, void *C, int64_t ldc,
                  ts_tiles_stats *stats);
int ts_tiles_hemm(ts_tiles *rt, char prec, char side, char uplo, int64_t m, int64_t n, const void *alpha,
                  const void *A, int64_t lda, const void *B, int64_t ldb, const void *beta, void *C, int64_t ldc,
                  ts_tiles_stats *stats);
// C = alpha op(A) op(A)^T + beta C in C's uplo triangle (n x n); trans 'N': A is n x k, else k x n.
// herk: op(A)^H, real alpha and beta, the diagonal of C real.
int ts_tiles_syrk(ts_tiles *rt, char prec, char uplo, char trans, int64_t n, int64_t k, const void *alpha,
                  const void *A, int64_t lda, const void *beta, void *C, int64_t ldc, ts_tiles_stats *stats);
int ts_tiles_herk(ts_tiles *rt, char prec, char uplo, char trans, int64_t n, int64_t k, const void *alpha,
                  const void *A, int64_t lda, const void *beta, void *C, int64_t ldc, ts_tiles_stats *stats);
// C = alpha op(A) op(B)^T + alpha op(B) op(A)^T + beta C (her2k: ^H, conj(alpha) on the second term,
// real beta) in C's uplo triangle.
int ts_tiles_syr2k(ts_tiles *rt, char prec, char uplo, char trans, int64_t n, int64_t k, const void *alpha,
                   const void *A, int64_t lda, const void *B, int64_t ldb, const void *beta, void *C, int64_t ldc,
                   ts_tiles_stats *stats);
int ts_tiles_her2k(ts_tiles *rt, char prec, char uplo, char trans, int64_t n, int64_t k, const void *alpha,
                   const void *A, int64_t lda, const void *B, int64_t ldb, const void *beta, void *C, int64_t ldc,
                   ts_tiles_stats *stats);
// B := alpha op(A) B (side 'L') or alpha B op(A) (side 'R'), A triangular (uplo, diag 'N'/'U'), B m x n.
int ts_tiles_trmm(ts_tiles *rt, char prec, char side, char uplo, char transa, char diag, int64_t m, int64_t n,
                  const void *alpha, const void *A, int64_t lda, void *B, int64_t ldb, ts_tiles_stats *stats);
// B := alpha op(A)^-1 B (side 'L') or alpha B op(A)^-1 (side 'R').
int ts_tiles_trsm(ts_tiles *rt, char prec, char side, char uplo, char transa, char diag, int64_t m, int64_t n,
                  const void *alpha, const void *A, int64_t lda, void *B, int64_t ldb, ts_tiles_stats *stats);

// Argument checks in the reference order: 0, or the 1-based position of the first bad argument as
// the reference ?SYMM (side 1, uplo 2, m 3, n 4, lda 7, ldb 9, ldc 12), ?SYRK/?HERK (uplo 1, trans 2,
// n 3, k 4, lda 7, ldc 10), ?SYR2K/?HER2K (... lda 7, ldb 9, ldc 12) report it. herm: the Hermitian
// routine (trans 'N'/'C'); complex symmetric routines take 'N'/'T', real ones 'N'/'T'/'C'.
// ?TRMM/?TRSM: ts_dtrsm_check_args (kernels/ts_kernels.h).
int ts_symm_check_args(char side, char uplo, int64_t m, int64_t n, int64_t lda, int64_t ldb, int64_t ldc);
int ts_syrk_check_args(char prec, int herm, char uplo, char trans, int64_t n, int64_t k, int64_t lda, int64_t ldc);
int ts_syr2k_check_args(char prec, int herm, char uplo, char trans, int64_t n, int64_t k, int64_t lda, int64_t ldb,
                        int64_t ldc);

#ifdef __cplusplus
}
#endif

#endif
