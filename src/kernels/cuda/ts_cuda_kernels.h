// ts_cuda_kernels.h: the CUDA side of the kernels layer (cuBLAS engines and our CUDA kernels).
// Only compiled with CUDA (TS_HAVE_CUDA); ts_kernels.c calls these for streams of CUDA devices.
#ifndef TS_CUDA_KERNELS_H
#define TS_CUDA_KERNELS_H

#include <stdint.h>

#include "device/ts_device.h"

#ifdef __cplusplus
extern "C" {
#endif

// cuBLAS GEMM on the stream (the cuBLAS handle lives in the stream's slot, created on first use,
// with the stream bound and pointer mode host). Column-major; prec 's','d','c','z'.
int ts_cuda_gemm(ts_stream *st, char prec, char ta, char tb, int64_t m, int64_t n, int64_t k,
                 const void *alpha, const void *A, int64_t lda, const void *B, int64_t ldb,
                 const void *beta, void *C, int64_t ldc);
int ts_cuda_dtrsm(ts_stream *st, char side, char uplo, char ta, char diag, int64_t m, int64_t n,
                  double alpha, const double *A, int64_t lda, double *B, int64_t ldb);
// cuSOLVER dgetrf (baseline for HPL comparisons): LU of the n x n matrix in place, device memory.
// Workspace is taken from the device arena. *info as LAPACK.
int ts_cuda_dgetrf(ts_stream *st, int64_t n, double *A, int64_t lda, int *ipiv_dev, int *info);

// Our own DGEMM on the FP64 tensor cores (ts_dgemm_tc.cu): C = alpha op(A) op(B) + beta C on the
// stream, column-major device pointers, any op ('N', 'T', 'C'), sizes and leading dimensions; beta == 0
// never reads C. Tile variant by shape (TESSERA_TC_TILE=rankk|small|large32|large32pf|rankklpf forces one). Returns 0 or
// a negative ts_status (launch errors; faults inside the kernel show up at the next sync).
int ts_cuda_dgemm_tessera(ts_stream *st, char ta, char tb, int64_t m, int64_t n, int64_t k,
                          double alpha, const double *A, int64_t lda, const double *B, int64_t ldb,
                          double beta, double *C, int64_t ldc);
// The tile variant ts_cuda_dgemm_tessera picks for op(A) op(B) of this shape on a device with `sms`
// multiprocessors and compute capability major `cc_major` (a name of tc_variant_names; "invalid" for a malformed TESSERA_TC_TILE). Operands
// that are not 16-byte aligned (or odd leading dimensions) always run "rankk" with 8-byte copies.
const char *ts_cuda_dgemm_tessera_variant(char ta, char tb, int64_t m, int64_t n, int64_t k, int sms, int cc_major);

// Our own SGEMM on the FP32 FMA path (ts_sgemm.cu; no tensor cores, no reduced precision): the
// same contract as ts_cuda_dgemm_tessera. Tile variant by shape (TESSERA_SGEMM_TILE=large|small
// forces one); operands not 16-byte aligned or with ld % 4 != 0 take scalar loads.
int ts_cuda_sgemm_tessera(ts_stream *st, char ta, char tb, int64_t m, int64_t n, int64_t k,
                          float alpha, const float *A, int64_t lda, const float *B, int64_t ldb,
                          float beta, float *C, int64_t ldc);
// The tile variant ts_cuda_sgemm_tessera picks for this shape ("large", "small";
// "invalid" for a malformed TESSERA_SGEMM_TILE).
const char *ts_cuda_sgemm_tessera_variant(int64_t m, int64_t n, int64_t k, int sms);
// CGEMM / ZGEMM by the 4M scheme on our real kernels (ts_cgemm_4m.cu): op(A), op(B) split into
// real and imaginary planes, four real GEMMs (SGEMM / DGEMM above), combined into C; by 3M (three
// real GEMMs on the planes and their sums) when TESSERA_CPLX_SCHEME=3m (ts_cplx_scheme_3m). Interleaved
// complex operands, leading dimensions in complex elements, alpha/beta {re, im} on the host.
// Workspace from the device arena (TESSERA_CPLX_WORKSPACE caps it; C is blocked when it would
// not fit); the call waits for the stream before returning.
int ts_cuda_cgemm_tessera(ts_stream *st, char ta, char tb, int64_t m, int64_t n, int64_t k,
                          const float alpha[2], const float *A, int64_t lda, const float *B,
                          int64_t ldb, const float beta[2], float *C, int64_t ldc);
int ts_cuda_zgemm_tessera(ts_stream *st, char ta, char tb, int64_t m, int64_t n, int64_t k,
                          const double alpha[2], const double *A, int64_t lda, const double *B,
                          int64_t ldb, const double beta[2], double *C, int64_t ldc);

// cuBLASXt baseline (ts_cublasxt.c): host-resident GEMM and Level-3 routines over every CUDA device of a set, as NVIDIA
// ships it (cublasXtDgemm & co.). A context holds the cublasXt handle (devices selected with their
// native ids, CPU ratio 0). block: cublasXtSetBlockDim. A, B, C are host pointers (column-major);
// the call returns when C is complete. Declared without CUDA types, so callers need no CUDA headers.
typedef struct ts_cublasxt ts_cublasxt;
// The first ndev devices of the set (0: all). TS_ERR_UNSUPPORTED on sim/empty sets.
int ts_cublasxt_create(ts_devset *devs, int ndev, ts_cublasxt **out);
int ts_cublasxt_set_block(ts_cublasxt *xt, int block);
int ts_cublasxt_gemm(ts_cublasxt *xt, char prec, char ta, char tb, int64_t m, int64_t n, int64_t k,
                     const void *alpha, const void *A, int64_t lda, const void *B, int64_t ldb,
                     const void *beta, void *C, int64_t ldc);
// The other Level-3 routines (cublasXt<p>symm & co.), arguments as the reference BLAS and
// ts_tiles_l3.h; herm selects ?HEMM/?HERK/?HER2K (prec 'c'/'z'; herk's alpha and beta and her2k's
// beta are real). ?TRMM is cuBLAS's out-of-place form: C = alpha op(A) B (side 'L') or alpha B op(A).
int ts_cublasxt_symm(ts_cublasxt *xt, char prec, int herm, char side, char uplo, int64_t m, int64_t n,
                     const void *alpha, const void *A, int64_t lda, const void *B, int64_t ldb, const void *beta,
                     void *C, int64_t ldc);
int ts_cublasxt_syrk(ts_cublasxt *xt, char prec, int herm, char uplo, char trans, int64_t n, int64_t k,
                     const void *alpha, const void *A, int64_t lda, const void *beta, void *C, int64_t ldc);
int ts_cublasxt_syr2k(ts_cublasxt *xt, char prec, int herm, char uplo, char trans, int64_t n, int64_t k,
                      const void *alpha, const void *A, int64_t lda, const void *B, int64_t ldb, const void *beta,
                      void *C, int64_t ldc);
int ts_cublasxt_trmm(ts_cublasxt *xt, char prec, char side, char uplo, char transa, char diag, int64_t m,
                     int64_t n, const void *alpha, const void *A, int64_t lda, const void *B, int64_t ldb, void *C,
                     int64_t ldc);
int ts_cublasxt_trsm(ts_cublasxt *xt, char prec, char side, char uplo, char transa, char diag, int64_t m,
                     int64_t n, const void *alpha, const void *A, int64_t lda, void *B, int64_t ldb);
void ts_cublasxt_destroy(ts_cublasxt *xt);

#ifdef __cplusplus
}
#endif

#endif
