// ts_lu_kernels.cu: CUDA versions of the LU helper kernels (row gather/scatter through a shared-memory tile).
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include "core/ts_error.h"
#include "kernels/ts_lu_kernels.h"

#define TILE 32
#define ROWS 8

// A 32 x 32 tile of (rows i, columns c), blockIdx.x over columns: the matrix side is read/written along i (columns of the
// column-major matrix), the buffer side along c (rows of the row-major buffer), both coalesced.
__global__ void lu_pack_kernel(const double *__restrict__ A, int64_t lda, const int64_t *__restrict__ idx,
                               int64_t n, int64_t nc, double *__restrict__ buf) {
    __shared__ double t[TILE][TILE + 1];
    int64_t i0 = (int64_t)blockIdx.y * TILE, c0 = (int64_t)blockIdx.x * TILE;
    int64_t i = i0 + threadIdx.x;
    int64_t r = i < n ? idx[i] : 0;
    for (int k = threadIdx.y; k < TILE; k += ROWS) {
        int64_t c = c0 + k;
        if (i < n && c < nc) t[k][threadIdx.x] = A[r + c * lda];
    }
    __syncthreads();
    int64_t c = c0 + threadIdx.x;
    for (int k = threadIdx.y; k < TILE; k += ROWS) {
        int64_t ii = i0 + k;
        if (ii < n && c < nc) buf[ii * nc + c] = t[threadIdx.x][k];
    }
}

__global__ void lu_unpack_kernel(const double *__restrict__ buf, const int64_t *__restrict__ bidx,
                                 int64_t n, int64_t nc, double *__restrict__ A, int64_t lda,
                                 const int64_t *__restrict__ aidx) {
    __shared__ double t[TILE][TILE + 1];
    int64_t i0 = (int64_t)blockIdx.y * TILE, c0 = (int64_t)blockIdx.x * TILE;
    int64_t c = c0 + threadIdx.x;
    for (int k = threadIdx.y; k < TILE; k += ROWS) {
        int64_t ii = i0 + k;
        if (ii < n && c < nc) t[threadIdx.x][k] = buf[(bidx ? bidx[ii] : ii) * nc + c];
    }
    __syncthreads();
    int64_t i = i0 + threadIdx.x;
    if (i >= n) return;
    int64_t r = aidx[i];
    for (int k = threadIdx.y; k < TILE; k += ROWS) {
        int64_t cc = c0 + k;
        if (cc < nc) A[r + cc * lda] = t[k][threadIdx.x];
    }
}

extern "C" int ts_lu_rows_cuda(void *native_stream, void *vargs) {
    const ts_lu_rows_args *a = (const ts_lu_rows_args *)vargs;
    cudaStream_t s = (cudaStream_t)native_stream;
    if (a->n <= 0 || a->nc <= 0) return 0;
    int64_t gy = (a->n + TILE - 1) / TILE; // rows (at most 2 NB) on y, columns on x
    if (gy > 65535)
        return ts_error_set(TS_ERR_UNSUPPORTED, __FILE__, __LINE__, "lu row kernel: %lld rows", (long long)a->n);
    dim3 block(TILE, ROWS), grid((unsigned)((a->nc + TILE - 1) / TILE), (unsigned)gy);
    if (!a->unpack) lu_pack_kernel<<<grid, block, 0, s>>>(a->src, a->lda, a->aidx, a->n, a->nc, a->dst);
    else lu_unpack_kernel<<<grid, block, 0, s>>>(a->src, a->bidx, a->n, a->nc, a->dst, a->lda, a->aidx);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        return ts_error_set(TS_ERR_CUDA, __FILE__, __LINE__, "lu row kernel launch: %s", cudaGetErrorString(e));
    return 0;
}

// ---- panel LU through cuSOLVER ----

extern "C" int ts_lu_cusolver_create(void **handle) {
    cusolverDnHandle_t h;
    cusolverStatus_t st = cusolverDnCreate(&h);
    if (st != CUSOLVER_STATUS_SUCCESS)
        return ts_error_set(TS_ERR_CUBLAS, __FILE__, __LINE__, "cusolverDnCreate failed (%d)", (int)st);
    *handle = h;
    return 0;
}

extern "C" void ts_lu_cusolver_destroy(void *handle) { cusolverDnDestroy((cusolverDnHandle_t)handle); }

extern "C" int ts_lu_cusolver_lwork(void *handle, int64_t m, int64_t n, double *A, int64_t lda, int *lwork) {
    cusolverStatus_t st = cusolverDnDgetrf_bufferSize((cusolverDnHandle_t)handle, (int)m, (int)n, A,
                                                      (int)lda, lwork);
    if (st != CUSOLVER_STATUS_SUCCESS)
        return ts_error_set(TS_ERR_CUBLAS, __FILE__, __LINE__, "cusolverDnDgetrf_bufferSize(%lld, %lld) failed (%d)",
                            (long long)m, (long long)n, (int)st);
    return 0;
}

extern "C" int ts_lu_getrf_cuda(void *native_stream, void *vargs) {
    const ts_lu_getrf_args *a = (const ts_lu_getrf_args *)vargs;
    cusolverDnHandle_t h = (cusolverDnHandle_t)a->handle;
    if (!h) return ts_error_set(TS_ERR_STATE, __FILE__, __LINE__, "lu_dgetrf: no cuSOLVER handle");
    cusolverStatus_t st = cusolverDnSetStream(h, (cudaStream_t)native_stream);
    if (st == CUSOLVER_STATUS_SUCCESS)
        st = cusolverDnDgetrf(h, (int)a->m, (int)a->n, a->A, (int)a->lda, a->work, a->ipiv, a->info);
    if (st != CUSOLVER_STATUS_SUCCESS)
        return ts_error_set(TS_ERR_CUBLAS, __FILE__, __LINE__, "cusolverDnDgetrf(%lld x %lld) failed (%d)",
                            (long long)a->m, (long long)a->n, (int)st);
    return 0;
}
