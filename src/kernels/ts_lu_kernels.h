// ts_lu_kernels.h: LU helper kernels on device streams (row gather/scatter for HPL's row swaps), CPU and CUDA versions.
#ifndef TS_LU_KERNELS_H
#define TS_LU_KERNELS_H

#include <stdint.h>

#include "device/ts_device.h"

#ifdef __cplusplus
extern "C" {
#endif

// buf (row-major n x nc: row i at buf + i*nc) <- rows idx[0..n) of the column-major A (lda).
// idx is in device memory. Asynchronous on st.
int ts_lu_pack_rows(ts_stream *st, const double *A, int64_t lda, const int64_t *idx, int64_t n,
                    int64_t nc, double *buf);
// Rows aidx[i] of A <- rows bidx[i] of the row-major buf (nc per row), i < n. Index arrays in
// device memory; the destination rows must be distinct. Asynchronous on st.
int ts_lu_unpack_rows(ts_stream *st, const double *buf, const int64_t *bidx, int64_t n, int64_t nc,
                      double *A, int64_t lda, const int64_t *aidx);

// LU with partial pivoting of the m x n panel A (m >= n, device memory), LAPACK dgetrf semantics:
// ipiv (n ints, 1-based, device memory) and *info (device memory: 0, or the first zero pivot,
// 1-based; the factorization goes on). CUDA: cuSOLVER dgetrf; simulated devices: a recursive LU
// with the CPU BLAS. The solver holds the cuSOLVER handle and workspace for panels up to
// max_m x max_n; create and use it on one stream at a time.
typedef struct ts_lu_solver ts_lu_solver;
int ts_lu_solver_create(ts_stream *st, int64_t max_m, int64_t max_n, ts_lu_solver **out);
void ts_lu_solver_destroy(ts_lu_solver *sv);
int ts_lu_dgetrf(ts_stream *st, ts_lu_solver *sv, int64_t m, int64_t n, double *A, int64_t lda,
                 int *ipiv, int *info);
// The CPU recursive LU (also the simulated devices' kernel), on host memory.
void ts_lu_dgetrf_host(int64_t m, int64_t n, double *A, int64_t lda, int *ipiv, int *info);

// ---- shared by the CPU and CUDA versions ----
typedef struct {
    int unpack;            // 0: pack, 1: unpack
    const double *src;
    double *dst;
    const int64_t *bidx;   // buffer rows (unpack; NULL = identity)
    const int64_t *aidx;   // matrix rows
    int64_t n, nc, lda;
} ts_lu_rows_args;

typedef struct {
    void *handle;          // cusolverDnHandle_t (CUDA)
    double *work;          // device workspace
    int lwork;
    double *A;
    int *ipiv, *info;
    int64_t m, n, lda;
} ts_lu_getrf_args;

int ts_lu_rows_cpu(void *args);
int ts_lu_getrf_cpu(void *args);
int ts_lu_getrf_cuda(void *native_stream, void *args);
int ts_lu_cusolver_create(void **handle);
void ts_lu_cusolver_destroy(void *handle);
int ts_lu_cusolver_lwork(void *handle, int64_t m, int64_t n, double *A, int64_t lda, int *lwork);
int ts_lu_rows_cuda(void *native_stream, void *args); // kernels/cuda/ts_lu_kernels.cu

#ifdef __cplusplus
}
#endif

#endif
