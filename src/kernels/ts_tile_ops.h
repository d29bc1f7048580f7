// ts_tile_ops.h: small tile kernels of the level-3 tile algorithms: diagonal-tile preparation and TRSM in s/d/c/z.
//
// A diagonal tile of a symmetric, Hermitian or triangular matrix is stored with only one triangle
// meaningful. Before it enters a GEMM as a full tile it is prepared in place on its (cached) copy:
// mirrored from the stored triangle (symmetric), mirrored with conjugation and a real diagonal
// (Hermitian, as the reference ?HEMM reads it), or cut to its triangle with an optional unit
// diagonal (triangular). The same operations run on the host (CPU worker, tests), on simulated
// devices (the stream's worker) and on CUDA devices (a small kernel). Column-major everywhere.
#ifndef TS_TILE_OPS_H
#define TS_TILE_OPS_H

#include <stdint.h>

#include "device/ts_device.h"
#include "kernels/ts_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

// Preparation kinds (a tile op): the source triangle is 'L' (lower) or 'U' (upper). The tile is
// square (n x n) for every kind.
typedef enum {
    TS_TILE_NONE = 0,
    TS_TILE_SYM,        // the other triangle := the source triangle transposed
    TS_TILE_HERM,       // ... conjugate transposed, imaginary part of the diagonal := 0
    TS_TILE_TRI,        // the other triangle := 0
    TS_TILE_TRI_UNIT,   // the other triangle := 0, diagonal := 1
    TS_TILE_DIAG_REAL,  // imaginary part of the diagonal := 0 (nothing else; no-op for real data)
    TS_TILE_TRANS,      // the whole tile := its transpose (no conjugation; uplo not used): an operand
                        // that a GEMM reads transposed, stored so that it reads it as it is
} ts_tile_kind;

// Applies `kind` to the n x n tile p (leading dimension ld) of precision prec; uplo names the
// source triangle. Host memory.
void ts_tile_prep_host(char prec, ts_tile_kind kind, char uplo, int64_t n, void *p, int64_t ld);
// The same on a device stream (asynchronous; device pointer).
int ts_dev_tile_prep(ts_stream *st, char prec, ts_tile_kind kind, char uplo, int64_t n, void *p, int64_t ld);

// B := alpha op(A)^-1 B (side 'L') or alpha B op(A)^-1 (side 'R'), any precision; alpha points to
// one scalar of the precision. Host memory through the CPU BLAS.
int ts_trsm_cpu(char prec, char side, char uplo, char ta, char diag, int64_t m, int64_t n,
                const void *alpha, const void *A, int64_t lda, void *B, int64_t ldb);
// The same on a device stream: cuBLAS on CUDA devices, the CPU BLAS on simulated ones.
int ts_dev_trsm(ts_stream *st, char prec, char side, char uplo, char ta, char diag, int64_t m,
                int64_t n, const void *alpha, const void *A, int64_t lda, void *B, int64_t ldb);

// Rank-k and rank-2k update of the uplo triangle of the n x n tile C (the diagonal tiles of
// ?SYRK and ?SYR2K, so that they cost half a GEMM): two = 0: C := alpha op(A) op(A)^T + beta C;
// two = 1: C := alpha op(A) op(B)^T + alpha op(B) op(A)^T + beta C; op(X) = X (trans 'N', X is
// n x k) or X^T (trans 'T', X is k x n). Symmetric, not Hermitian: any precision, complex scalars
// for c and z. The other triangle of C is not touched. Host memory through the CPU BLAS.
int ts_rank_cpu(char prec, int two, char uplo, char trans, int64_t n, int64_t k, const void *alpha,
                const void *A, int64_t lda, const void *B, int64_t ldb, const void *beta, void *C, int64_t ldc);
// The same on a device stream: cuBLAS ?syrk/?syr2k on CUDA devices, the CPU BLAS on simulated ones.
int ts_dev_rank(ts_stream *st, char prec, int two, char uplo, char trans, int64_t n, int64_t k, const void *alpha,
                const void *A, int64_t lda, const void *B, int64_t ldb, const void *beta, void *C, int64_t ldc);

// C := alpha op(A) B (side 'L') or alpha B op(A) (side 'R') for triangular A (uplo, diag as
// ?TRMM), out of place: B is read, C (m x n) written (the diagonal products of the TRMM tiles, half
// the flops of the GEMM on the zero-filled block). Host memory through the CPU BLAS (B copied to
// C, then ?trmm in place).
int ts_trmm_cpu(char prec, char side, char uplo, char ta, char diag, int64_t m, int64_t n, const void *alpha,
                const void *A, int64_t lda, const void *B, int64_t ldb, void *C, int64_t ldc);
// The same on a device stream: cuBLAS ?trmm on CUDA devices, the CPU BLAS on simulated ones.
int ts_dev_trmm(ts_stream *st, char prec, char side, char uplo, char ta, char diag, int64_t m, int64_t n,
                const void *alpha, const void *A, int64_t lda, const void *B, int64_t ldb, void *C, int64_t ldc);

// ts_dev_trmm and ts_dev_trsm blocked: the triangle split in two recursively until its order is at
// most base, the off-diagonal blocks by ts_dev_gemm (engine as ts_dev_gemm), the diagonal ones by
// the two above (base < 1: no split). The same results as the unsplit calls within rounding.
int ts_dev_trmm_blocked(ts_stream *st, ts_engine engine, char prec, char side, char uplo, char ta, char diag,
                        int64_t m, int64_t n, const void *alpha, const void *A, int64_t lda, const void *B,
                        int64_t ldb, void *C, int64_t ldc, int64_t base);
int ts_dev_trsm_blocked(ts_stream *st, ts_engine engine, char prec, char side, char uplo, char ta, char diag,
                        int64_t m, int64_t n, const void *alpha, const void *A, int64_t lda, void *B, int64_t ldb,
                        int64_t base);

// Writes the uplo triangle ('L' or 'U', diagonal included) of the n x n tile src (device memory,
// leading dimension lds) to dst (host memory, ldd) with one kernel on the stream, the device
// writing host memory through its mapping of a registered range, instead of one copy per column
// (n calls of a few microseconds each). The other triangle of dst is not touched. Returns 1, with
// nothing queued, when dst is not device-accessible (not registered with the device set): the
// caller copies column by column then.
int ts_dev_tile_put_tri(ts_stream *st, char prec, char uplo, int64_t n, const void *src, int64_t lds, void *dst,
                        int64_t ldd);

// dst := src^T for the n x n tile src (leading dimensions lds, ldd; no conjugation), both on the
// stream's device, out of place: the transposed copy of a cached operand tile (TS_TILE_TRANS) made
// from the plain copy a device already holds instead of a second load from the host.
int ts_dev_tile_trans(ts_stream *st, char prec, int64_t n, const void *src, int64_t lds, void *dst, int64_t ldd);

// Kernel launcher of the CUDA build (ts_tile_ops.cu): the arguments of one tile op.
typedef struct {
    char prec, uplo;
    int kind;
    int64_t n, ld;
    void *p;
} ts_tile_prep_args;
int ts_cuda_tile_prep(void *native_stream, void *args); // args: ts_tile_prep_args*
typedef struct {
    char prec, uplo;
    int64_t n, lds, ldd;
    const void *src;
    void *dst; // as the device addresses it
} ts_tile_put_args;
int ts_cuda_tile_put(void *native_stream, void *args); // args: ts_tile_put_args*
int ts_cuda_tile_trans(void *native_stream, void *args); // args: ts_tile_put_args* (uplo unused)
// The device address of registered host memory p (1), or 0 when p is not mapped for the devices.
int ts_cuda_host_mapped(void *p, void **dev);
// cuBLAS ?trsm on the stream in any precision (ts_cublas.c; the stream's cuBLAS handle).
int ts_cuda_trsm(ts_stream *st, char prec, char side, char uplo, char ta, char diag, int64_t m, int64_t n,
                 const void *alpha, const void *A, int64_t lda, void *B, int64_t ldb);
// cuBLAS ?trmm (out of place) on the stream (ts_cublas.c).
int ts_cuda_trmm(ts_stream *st, char prec, char side, char uplo, char ta, char diag, int64_t m, int64_t n,
                 const void *alpha, const void *A, int64_t lda, const void *B, int64_t ldb, void *C, int64_t ldc);
// cuBLAS ?syrk (two = 0) or ?syr2k (two = 1) on the stream (ts_cublas.c).
int ts_cuda_rank(ts_stream *st, char prec, int two, char uplo, char trans, int64_t n, int64_t k, const void *alpha,
                 const void *A, int64_t lda, const void *B, int64_t ldb, const void *beta, void *C, int64_t ldc);

#ifdef __cplusplus
}
#endif

#endif
