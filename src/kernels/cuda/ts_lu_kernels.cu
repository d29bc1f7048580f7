// ts_lu_kernels.cu: CUDA versions of the LU helper kernels (row gather/scatter through a shared-memory tile).
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <stdlib.h>

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

// ---- one panel's row interchanges in one pass (ts_lu_swap_rows) ----
// A block takes groups of cb columns: it reads rows pk of those columns into shared memory (element
// e = column * npack + t, consecutive threads on consecutive pk entries, so the diagonal block's
// rows are coalesced), waits, then writes U's rows (coalesced) and the changed rows al of A. The
// scattered rows' sectors read in the first half are still in L2 when the second half writes them,
// so each costs one DRAM read and one write-back instead of the split path's read by the pack and
// read-modify-write by the unpack. SWAP_UNROLL loads are in flight per thread before their values
// are stored.
#define SWAP_THREADS 256
#define SWAP_UNROLL 8

__global__ void __launch_bounds__(SWAP_THREADS) lu_swap_kernel(double *__restrict__ A, int64_t lda, const int64_t *__restrict__ pk,
                                                                int npack, const int64_t *__restrict__ ub, int jb,
                                                                double *__restrict__ U, int64_t ldu,
                                                                const int64_t *__restrict__ al, const int64_t *__restrict__ ab,
                                                                int nown, int64_t nc, int cb) {
    extern __shared__ double sm[];
    double *v = sm;                                    // cb * npack values
    int *spk = (int *)(sm + (size_t)cb * npack), *sub = spk + npack, *sal = sub + jb, *sab = sal + nown;
    for (int t = threadIdx.x; t < npack; t += SWAP_THREADS) spk[t] = (int)pk[t];
    for (int t = threadIdx.x; t < jb; t += SWAP_THREADS) sub[t] = (int)ub[t];
    for (int t = threadIdx.x; t < nown; t += SWAP_THREADS) {
        sal[t] = (int)al[t];
        sab[t] = (int)ab[t];
    }
    __syncthreads();
    int64_t ngroups = (nc + cb - 1) / cb;
    for (int64_t g = blockIdx.x; g < ngroups; g += gridDim.x) {
        int64_t c0 = g * cb;
        int ncb = (int)(nc - c0 < cb ? nc - c0 : cb);
        const double *Ac = A + c0 * lda;
        int tot = ncb * npack;
        for (int e0 = threadIdx.x; e0 < tot; e0 += SWAP_THREADS * SWAP_UNROLL) {
            double r[SWAP_UNROLL];
#pragma unroll
            for (int u = 0; u < SWAP_UNROLL; u++) {
                int e = e0 + u * SWAP_THREADS;
                if (e < tot) {
                    int cc = e / npack, t = e - cc * npack;
                    r[u] = Ac[spk[t] + cc * lda];
                }
            }
#pragma unroll
            for (int u = 0; u < SWAP_UNROLL; u++) {
                int e = e0 + u * SWAP_THREADS;
                if (e < tot) v[e] = r[u];
            }
        }
        __syncthreads();
        tot = ncb * jb;
        for (int e = threadIdx.x; e < tot; e += SWAP_THREADS) {
            int cc = e / jb, i = e - cc * jb;
            U[i + (c0 + cc) * ldu] = v[cc * npack + sub[i]];
        }
        tot = ncb * nown;
        for (int e = threadIdx.x; e < tot; e += SWAP_THREADS) {
            int cc = e / nown, t = e - cc * nown;
            A[sal[t] + (c0 + cc) * lda] = v[cc * npack + sab[t]];
        }
        __syncthreads();
    }
}

extern "C" int ts_lu_swap_cuda(void *native_stream, void *vargs) {
    const ts_lu_swap_args *a = (const ts_lu_swap_args *)vargs;
    cudaStream_t s = (cudaStream_t)native_stream;
    if (a->nc <= 0 || (a->jb <= 0 && a->nown <= 0)) return 0;
    size_t idx = TS_LU_SWAP_SMEM(a->npack, a->jb, a->nown) - (size_t)a->npack * 8;
    size_t col = (size_t)a->npack * 8;
    // up to ~96 KB a block (two blocks a multiprocessor), at least one column
    int cb = col ? (int)(((size_t)96 << 10) > idx + col ? (((size_t)96 << 10) - idx) / col : 1) : 1;
    if (cb < 1) cb = 1;
    if (cb > 8) cb = 8;
    size_t smem = idx + (size_t)cb * col;
    smem = (smem + 7) & ~(size_t)7;
    int dev = 0, optin = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
    if (e != cudaSuccess)
        return ts_error_set(TS_ERR_CUDA, __FILE__, __LINE__, "lu swap kernel: device attribute: %s", cudaGetErrorString(e));
    if (smem > (size_t)optin)
        return ts_error_set(TS_ERR_UNSUPPORTED, __FILE__, __LINE__,
                            "lu swap kernel: %zu bytes of shared memory a block, the device grants %d", smem, optin);
    e = cudaFuncSetAttribute(lu_swap_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e != cudaSuccess)
        return ts_error_set(TS_ERR_CUDA, __FILE__, __LINE__, "lu swap kernel attribute: %s", cudaGetErrorString(e));
    int64_t ngroups = (a->nc + cb - 1) / cb;
    int grid = ngroups < 2048 ? (int)ngroups : 2048;
    lu_swap_kernel<<<grid, SWAP_THREADS, smem, s>>>(a->A, a->lda, a->pk, (int)a->npack, a->ub, (int)a->jb, a->U, a->ldu, a->al,
                                                   a->ab, (int)a->nown, a->nc, cb);
    e = cudaGetLastError();
    if (e != cudaSuccess)
        return ts_error_set(TS_ERR_CUDA, __FILE__, __LINE__, "lu swap kernel launch: %s", cudaGetErrorString(e));
    return 0;
}

// ---- the same interchanges on transposed storage (ts_lu_swap_rows_t) ----
// Every moved row is a contiguous run of nc doubles: a warp copies SWAPT_ITER runs of 32 x SWAPT_VEC
// consecutive doubles (8 KB) of one plan entry, SWAPT_VEC loads in flight per thread; the block's 8
// warps take 8 entries; blockIdx.x walks the columns, blockIdx.y the entries. Launched twice: U's
// rows (dst = NULL: entry i into column i of D), then the changed rows (dst = al), after the first
// launch has read every source. With pk NULL the source is column sel[e] itself (ts_lu_copy_cols).
#define SWAPT_VEC 4
#define SWAPT_ITER 8
#define SWAPT_WARPS 8
__global__ void __launch_bounds__(32 * SWAPT_WARPS) lu_swapt_kernel(const double *At, int64_t ldt,
                                                                     const int64_t *__restrict__ pk,
                                                                     const int64_t *__restrict__ sel,
                                                                     const int64_t *__restrict__ dst, double *D,
                                                                     int64_t ldd, int64_t n, int64_t nc) {
    int64_t e = (int64_t)blockIdx.y * SWAPT_WARPS + threadIdx.y;
    if (e >= n) return;
    const double *src = At + (pk ? pk[sel[e]] : sel[e]) * ldt;
    double *out = D + (dst ? dst[e] : e) * ldd;
    int64_t cb = (int64_t)blockIdx.x * (32 * SWAPT_VEC * SWAPT_ITER) + threadIdx.x;
    for (int it = 0; it < SWAPT_ITER; it++) {
        int64_t c0 = cb + (int64_t)it * 32 * SWAPT_VEC;
        if (c0 >= nc) break;
        double v[SWAPT_VEC];
#pragma unroll
        for (int u = 0; u < SWAPT_VEC; u++) {
            int64_t c = c0 + 32 * u;
            if (c < nc) v[u] = src[c];
        }
#pragma unroll
        for (int u = 0; u < SWAPT_VEC; u++) {
            int64_t c = c0 + 32 * u;
            if (c < nc) out[c] = v[u];
        }
    }
}

// One launch of lu_swapt_kernel over n entries of nc values (what: the message's name).
static int swapt_launch(cudaStream_t s, const char *what, const double *src, int64_t lds, const int64_t *pk,
                        const int64_t *sel, const int64_t *dst, double *D, int64_t ldd, int64_t n, int64_t nc) {
    if (n <= 0) return 0;
    int64_t gy = (n + SWAPT_WARPS - 1) / SWAPT_WARPS;
    if (gy > 65535) return ts_error_set(TS_ERR_UNSUPPORTED, __FILE__, __LINE__, "%s: %lld rows", what, (long long)n);
    dim3 block(32, SWAPT_WARPS);
    dim3 grid((unsigned)((nc + 32 * SWAPT_VEC * SWAPT_ITER - 1) / (32 * SWAPT_VEC * SWAPT_ITER)), (unsigned)gy);
    lu_swapt_kernel<<<grid, block, 0, s>>>(src, lds, pk, sel, dst, D, ldd, n, nc);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        return ts_error_set(TS_ERR_CUDA, __FILE__, __LINE__, "%s launch: %s", what, cudaGetErrorString(e));
    return 0;
}

extern "C" int ts_lu_swapt_cuda(void *native_stream, void *vargs) {
    const ts_lu_swapt_args *a = (const ts_lu_swapt_args *)vargs;
    cudaStream_t s = (cudaStream_t)native_stream;
    const char *what = "lu swap kernel (transposed)";
    int rc = swapt_launch(s, what, a->At, a->ldt, a->pk, a->ub, NULL, a->Ut, a->ldut, a->jb, a->nc);
    return rc ? rc : swapt_launch(s, what, a->At, a->ldt, a->pk, a->ab, a->al, a->At, a->ldt, a->nown, a->nc);
}

// ts_lu_copy_cols: the same copies with one index level (pk NULL), from S into D
extern "C" int ts_lu_cols_cuda(void *native_stream, void *vargs) {
    const ts_lu_cols_args *a = (const ts_lu_cols_args *)vargs;
    return swapt_launch((cudaStream_t)native_stream, "lu copy cols kernel", a->S, a->lds, NULL, a->sidx, a->didx,
                        a->D, a->ldd, a->n, a->nc);
}

// dst = src^T through a 32 x 33 shared tile: rows of src read along its columns, written along dst's.
// blockIdx.y strides over the column tiles past 65535.
__global__ void lu_transpose_kernel(const double *__restrict__ src, int64_t lds, double *__restrict__ dst,
                                    int64_t ldd, int64_t m, int64_t n) {
    __shared__ double t[TILE][TILE + 1];
    int64_t i0 = (int64_t)blockIdx.x * TILE;
    int64_t nty = (n + TILE - 1) / TILE;
    for (int64_t ty = blockIdx.y; ty < nty; ty += gridDim.y) {
        int64_t j0 = ty * TILE;
        int64_t i = i0 + threadIdx.x;
        for (int k = threadIdx.y; k < TILE; k += ROWS) {
            int64_t j = j0 + k;
            if (i < m && j < n) t[k][threadIdx.x] = src[i + j * lds];
        }
        __syncthreads();
        int64_t j = j0 + threadIdx.x;
        for (int k = threadIdx.y; k < TILE; k += ROWS) {
            int64_t ii = i0 + k;
            if (ii < m && j < n) dst[j + ii * ldd] = t[threadIdx.x][k];
        }
        __syncthreads();
    }
}

extern "C" int ts_lu_trans_cuda(void *native_stream, void *vargs) {
    const ts_lu_trans_args *a = (const ts_lu_trans_args *)vargs;
    cudaStream_t s = (cudaStream_t)native_stream;
    int64_t gx = (a->m + TILE - 1) / TILE, gy = (a->n + TILE - 1) / TILE;
    if (gx > 0x7fffffff)
        return ts_error_set(TS_ERR_UNSUPPORTED, __FILE__, __LINE__, "lu transpose: %lld rows", (long long)a->m);
    dim3 block(TILE, ROWS), grid((unsigned)gx, (unsigned)(gy < 65535 ? gy : 65535));
    lu_transpose_kernel<<<grid, block, 0, s>>>(a->src, a->lds, a->dst, a->ldd, a->m, a->n);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        return ts_error_set(TS_ERR_CUDA, __FILE__, __LINE__, "lu transpose launch: %s", cudaGetErrorString(e));
    return 0;
}

// ---- panel LU through cuSOLVER ----

// The handle behind ts_lu_solver: cuSOLVER's, and for the 64-bit API (cusolverDnXgetrf) its
// parameters, the algorithm and the workspace it asked for (device bytes inside the solver's
// work area, followed by the int64 pivots; host bytes in hwork).
struct lu_cusolver {
    cusolverDnHandle_t h;
    cusolverDnParams_t p;
    int alg;      // TS_LU_GETRF_*
    size_t dbytes, hbytes;
    void *hwork;
};

extern "C" int ts_lu_cusolver_create(void **handle, int alg) {
    lu_cusolver *c = (lu_cusolver *)calloc(1, sizeof *c);
    if (!c) return ts_error_set(TS_ERR_NOMEM, __FILE__, __LINE__, "cuSOLVER handle");
    c->alg = alg;
    cusolverStatus_t st = cusolverDnCreate(&c->h);
    if (st == CUSOLVER_STATUS_SUCCESS && alg != TS_LU_GETRF_LEGACY) {
        st = cusolverDnCreateParams(&c->p);
        if (st == CUSOLVER_STATUS_SUCCESS)
            st = cusolverDnSetAdvOptions(c->p, CUSOLVERDN_GETRF, alg == TS_LU_GETRF_X1 ? CUSOLVER_ALG_1 : CUSOLVER_ALG_0);
    }
    if (st != CUSOLVER_STATUS_SUCCESS) {
        ts_lu_cusolver_destroy(c);
        return ts_error_set(TS_ERR_CUBLAS, __FILE__, __LINE__, "cuSOLVER setup failed (%d)", (int)st);
    }
    *handle = c;
    return 0;
}

extern "C" void ts_lu_cusolver_destroy(void *handle) {
    lu_cusolver *c = (lu_cusolver *)handle;
    if (!c) return;
    if (c->p) cusolverDnDestroyParams(c->p);
    if (c->h) cusolverDnDestroy(c->h);
    free(c->hwork);
    free(c);
}

extern "C" int ts_lu_cusolver_lwork(void *handle, int64_t m, int64_t n, double *A, int64_t lda, int *lwork) {
    lu_cusolver *c = (lu_cusolver *)handle;
    if (c->alg == TS_LU_GETRF_LEGACY) {
        cusolverStatus_t st = cusolverDnDgetrf_bufferSize(c->h, (int)m, (int)n, A, (int)lda, lwork);
        if (st != CUSOLVER_STATUS_SUCCESS)
            return ts_error_set(TS_ERR_CUBLAS, __FILE__, __LINE__, "cusolverDnDgetrf_bufferSize(%lld, %lld) failed (%d)",
                                (long long)m, (long long)n, (int)st);
        return 0;
    }
    cusolverStatus_t st = cusolverDnXgetrf_bufferSize(c->h, c->p, m, n, CUDA_R_64F, A, lda, CUDA_R_64F, &c->dbytes,
                                                      &c->hbytes);
    if (st != CUSOLVER_STATUS_SUCCESS)
        return ts_error_set(TS_ERR_CUBLAS, __FILE__, __LINE__, "cusolverDnXgetrf_bufferSize(%lld, %lld) failed (%d)",
                            (long long)m, (long long)n, (int)st);
    if (c->hbytes && !(c->hwork = malloc(c->hbytes)))
        return ts_error_set(TS_ERR_NOMEM, __FILE__, __LINE__, "cuSOLVER host workspace");
    size_t words = (c->dbytes + 7) / 8 + (size_t)n; // the workspace, then n int64 pivots
    if (words > 0x7fffffff)
        return ts_error_set(TS_ERR_UNSUPPORTED, __FILE__, __LINE__, "cuSOLVER workspace of %zu bytes", c->dbytes);
    *lwork = (int)words;
    return 0;
}

__global__ void lu_piv64_kernel(const int64_t *p64, int *p, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) p[i] = (int)p64[i];
}

extern "C" int ts_lu_getrf_cuda(void *native_stream, void *vargs) {
    const ts_lu_getrf_args *a = (const ts_lu_getrf_args *)vargs;
    lu_cusolver *c = (lu_cusolver *)a->handle;
    if (!c) return ts_error_set(TS_ERR_STATE, __FILE__, __LINE__, "lu_dgetrf: no cuSOLVER handle");
    cudaStream_t s = (cudaStream_t)native_stream;
    cusolverStatus_t st = cusolverDnSetStream(c->h, s);
    if (c->alg == TS_LU_GETRF_LEGACY) {
        if (st == CUSOLVER_STATUS_SUCCESS)
            st = cusolverDnDgetrf(c->h, (int)a->m, (int)a->n, a->A, (int)a->lda, a->work, a->ipiv, a->info);
        if (st != CUSOLVER_STATUS_SUCCESS)
            return ts_error_set(TS_ERR_CUBLAS, __FILE__, __LINE__, "cusolverDnDgetrf(%lld x %lld) failed (%d)",
                                (long long)a->m, (long long)a->n, (int)st);
        return 0;
    }
    int64_t k = a->m < a->n ? a->m : a->n;
    int64_t *p64 = (int64_t *)a->work + (c->dbytes + 7) / 8;
    if (st == CUSOLVER_STATUS_SUCCESS)
        st = cusolverDnXgetrf(c->h, c->p, a->m, a->n, CUDA_R_64F, a->A, a->lda, p64, CUDA_R_64F, a->work, c->dbytes,
                              c->hwork, c->hbytes, a->info);
    if (st != CUSOLVER_STATUS_SUCCESS)
        return ts_error_set(TS_ERR_CUBLAS, __FILE__, __LINE__, "cusolverDnXgetrf(%lld x %lld) failed (%d)",
                            (long long)a->m, (long long)a->n, (int)st);
    if (k > 0) lu_piv64_kernel<<<(unsigned)((k + 255) / 256), 256, 0, s>>>(p64, a->ipiv, k);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        return ts_error_set(TS_ERR_CUDA, __FILE__, __LINE__, "lu pivots launch: %s", cudaGetErrorString(e));
    return 0;
}
