// ts_burn_check.cu: CUDA version of the burn ABFT check: one pass over C for the four checksum sums, then the comparison.
#include <cuda_runtime.h>
#include <math.h>

#include "core/ts_error.h"
#include "kernels/ts_burn_check.h"

#define TROWS 32  // rows of a tile (one warp along a column: coalesced in column-major)
#define TYS 8     // warps per block
#define TCOLS 256 // columns of a tile

// Partial sums of one TROWS x TCOLS tile: thread (x, y) adds rows i = i0 + x over columns
// y, y + TYS, ...; row partials are combined in shared memory, column partials by warp shuffles;
// both are added to the global sums atomically (any summation order keeps the rounding bound).
__global__ void burn_sums_kernel(const double *__restrict__ C, int64_t ldc, int64_t m, int64_t n,
                                 double *rs, double *rws, double *cs, double *cws) {
    __shared__ double sr[TYS][TROWS], srw[TYS][TROWS];
    int64_t i = (int64_t)blockIdx.y * TROWS + threadIdx.x;
    int64_t j0 = (int64_t)blockIdx.x * TCOLS;
    double r = 0, rw = 0;
    double wi = (double)(i + 1);
    for (int c = threadIdx.y; c < TCOLS; c += TYS) {
        int64_t j = j0 + c;
        if (j >= n) break;
        double v = i < m ? C[i + j * ldc] : 0.0;
        r += v;
        rw += (double)(j + 1) * v;
        double t = v, tw = i < m ? wi * v : 0.0;
        for (int off = 16; off > 0; off >>= 1) {
            t += __shfl_down_sync(0xffffffffu, t, off);
            tw += __shfl_down_sync(0xffffffffu, tw, off);
        }
        if (threadIdx.x == 0) {
            atomicAdd(&cs[j], t);
            atomicAdd(&cws[j], tw);
        }
    }
    sr[threadIdx.y][threadIdx.x] = r;
    srw[threadIdx.y][threadIdx.x] = rw;
    __syncthreads();
    if (threadIdx.y == 0 && i < m) {
        for (int y = 1; y < TYS; y++) {
            r += sr[y][threadIdx.x];
            rw += srw[y][threadIdx.x];
        }
        atomicAdd(&rs[i], r);
        atomicAdd(&rws[i], rw);
    }
}

__device__ double burn_ratio(double d, double bound) {
    double a = fabs(d);
    if (!isfinite(a)) return INFINITY;
    if (bound > 0) return a / bound;
    return a == 0 ? 0.0 : INFINITY;
}

// Nonnegative doubles (and +Inf) order like their bit patterns, so atomicMax on the bits works.
__device__ void burn_max(double *p, double v) {
    atomicMax((unsigned long long *)p, (unsigned long long)__double_as_longlong(v));
}

// Threads 0..m-1 compare rows, m..m+n-1 columns.
__global__ void burn_compare_kernel(const double *__restrict__ C, int64_t ldc, int64_t m, int64_t n,
                                    const double *rb, const double *rwb, const double *cb,
                                    const double *cwb, double *rd, double *rwd, double *cd, double *cwd,
                                    ts_burn_check_result *res) {
    int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    double q;
    if (t < m) {
        rd[t] -= C[t + n * ldc];
        rwd[t] -= C[t + (n + 1) * ldc];
        q = fmax(burn_ratio(rd[t], rb[t]), burn_ratio(rwd[t], rwb[t]));
        if (q > 1.0) atomicAdd(&res->bad_rows, 1ull);
    } else if (t < m + n) {
        int64_t j = t - m;
        cd[j] -= C[m + j * ldc];
        cwd[j] -= C[m + 1 + j * ldc];
        q = fmax(burn_ratio(cd[j], cb[j]), burn_ratio(cwd[j], cwb[j]));
        if (q > 1.0) atomicAdd(&res->bad_cols, 1ull);
    } else {
        return;
    }
    burn_max(&res->max_ratio, q);
}

static int launch_error(const char *what) {
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) return 0;
    return ts_error_set(TS_ERR_CUDA, __FILE__, __LINE__, "burn check %s: %s", what, cudaGetErrorString(e));
}

extern "C" int ts_burn_check_cuda(void *native_stream, void *vargs) {
    const ts_burn_check_args *a = (const ts_burn_check_args *)vargs;
    cudaStream_t s = (cudaStream_t)native_stream;
    size_t mb = (size_t)a->m * sizeof(double), nb = (size_t)a->n * sizeof(double);
    if (cudaMemsetAsync(a->rd, 0, mb, s) != cudaSuccess || cudaMemsetAsync(a->rwd, 0, mb, s) != cudaSuccess ||
        cudaMemsetAsync(a->cd, 0, nb, s) != cudaSuccess || cudaMemsetAsync(a->cwd, 0, nb, s) != cudaSuccess ||
        cudaMemsetAsync(a->res, 0, sizeof *a->res, s) != cudaSuccess)
        return launch_error("memset");
    int64_t gy = (a->m + TROWS - 1) / TROWS, gx = (a->n + TCOLS - 1) / TCOLS;
    if (gy > 65535)
        return ts_error_set(TS_ERR_UNSUPPORTED, __FILE__, __LINE__, "burn check: %lld rows (at most %d)",
                            (long long)a->m, 65535 * TROWS);
    dim3 block(TROWS, TYS), grid((unsigned)gx, (unsigned)gy);
    burn_sums_kernel<<<grid, block, 0, s>>>(a->C, a->ldc, a->m, a->n, a->rd, a->rwd, a->cd, a->cwd);
    int rc = launch_error("sums");
    if (rc) return rc;
    int64_t total = a->m + a->n;
    burn_compare_kernel<<<(unsigned)((total + 255) / 256), 256, 0, s>>>(
        a->C, a->ldc, a->m, a->n, a->rb, a->rwb, a->cb, a->cwb, a->rd, a->rwd, a->cd, a->cwd, a->res);
    return launch_error("compare");
}
