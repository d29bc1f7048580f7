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

#ifdef __cplusplus
}
#endif

#endif
