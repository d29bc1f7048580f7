// ts_mxp_cuda.cu: HPL-MxP's kernels on CUDA: the generator and the FP64 residual from the LCG, 16-bit and FP8 conversions, cuBLAS/cuBLASLt/cuSOLVER calls.
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <limits.h>
#include <stdint.h>
#include <stdio.h>

#include "core/ts_error.h"
#include "core/ts_rng.h"
#include "kernels/ts_mxp_kernels.h"

#define THREADS 128

static int cuda_fail(cudaError_t e, const char *file, int line, const char *what) {
    (void)cudaGetLastError();
    return ts_error_set(TS_ERR_CUDA, file, line, "%s: %s", what, cudaGetErrorString(e));
}
#define CUDA_OK(call, what)                                                                                  \
    do {                                                                                                     \
        cudaError_t e_ = (call);                                                                             \
        if (e_ != cudaSuccess) return cuda_fail(e_, __FILE__, __LINE__, what);                               \
    } while (0)
// A launch's configuration errors show at once; faults inside the kernel at the next sync.
#define LAUNCHED(what) CUDA_OK(cudaGetLastError(), what)
#define BLAS_OK(call, what)                                                                                  \
    do {                                                                                                     \
        cublasStatus_t s_ = (call);                                                                          \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                                   \
            (void)cudaGetLastError();                                                                        \
            return ts_error_set(TS_ERR_CUBLAS, __FILE__, __LINE__, "%s: %s", what, cublasGetStatusString(s_)); \
        }                                                                                                    \
    } while (0)
#define SOLVER_OK(call, what)                                                                                \
    do {                                                                                                     \
        cusolverStatus_t s_ = (call);                                                                        \
        if (s_ != CUSOLVER_STATUS_SUCCESS) {                                                                 \
            (void)cudaGetLastError();                                                                        \
            return ts_error_set(TS_ERR_CUBLAS, __FILE__, __LINE__, "%s: cuSOLVER status %d", what, (int)s_); \
        }                                                                                                    \
    } while (0)

static int fits_int(int64_t v) { return v >= 0 && v <= INT_MAX; }

// ---- the generator on the device ----

__device__ static uint64_t jump_apply(uint64_t n, uint64_t x) {
    uint64_t ra = 1, rc = 0, ba = TS_MXP_LCG_A, bc = TS_MXP_LCG_C;
    while (n) {
        if (n & 1u) {
            rc = ba * rc + bc;
            ra = ba * ra;
        }
        bc = ba * bc + bc;
        ba = ba * ba;
        n >>= 1;
    }
    return ra * x + rc;
}

__device__ static double value_of(uint64_t x) { return (double)x * 0x1p-64 - 0.5; }

// Thread: one row of one column chunk; the state walks the row by the jump of N draws.
__global__ void mxp_gen_kernel(int64_t N, int64_t row0, int64_t col0, int64_t m, int64_t n, int64_t w,
                               uint64_t an, uint64_t cn, float *A, int64_t lda, double *part, double *adiag) {
    const int64_t i = (int64_t)blockIdx.x * THREADS + threadIdx.x;
    if (i >= m) return;
    const int64_t c0 = (int64_t)blockIdx.y * w, c1 = c0 + w < n ? c0 + w : n;
    const int64_t gi = row0 + i;
    uint64_t x = jump_apply(1u + (uint64_t)gi + (uint64_t)(col0 + c0) * (uint64_t)N, TS_MXP_SEED_A);
    double s = 0.0;
    for (int64_t j = c0; j < c1; j++) {
        const double v = value_of(x);
        A[i + j * lda] = (float)v;
        if (gi != col0 + j) s += fabs(v);
        else if (adiag) adiag[i] = v;
        x = an * x + cn;
    }
    part[(int64_t)blockIdx.y * m + i] = s;
}

__device__ static int64_t bc_global(int64_t l, int64_t nb, int p, int np) { return ((l / nb) * np + p) * nb + l % nb; }

// Thread: one local row of one chunk of local columns (a block-cyclic map: ts_mxp_resid_args); the
// state walks the row by the jump of N draws, and by (ab, cb) into the next local column block.
// CYCLIC false (a 1 x 1 grid, where the map is the identity and (ab, cb) equals (an, cn)): the plain
// walk, without the per-column block bookkeeping (the 1 x 1 engine's residual is ~40% faster so).
template <bool CYCLIC>
__global__ void mxp_resid_kernel(int64_t N, int64_t row0, int64_t col0, int64_t m, int64_t n, int64_t w,
                                 uint64_t an, uint64_t cn, uint64_t ab, uint64_t cb, int64_t nb, int P, int prow,
                                 int Q, int pcol, const double *__restrict__ d, const double *__restrict__ xv,
                                 double *part) {
    const int64_t i = (int64_t)blockIdx.x * THREADS + threadIdx.x;
    if (i >= m) return;
    const int64_t c0 = (int64_t)blockIdx.y * w, c1 = c0 + w < n ? c0 + w : n;
    const int64_t gi = row0 + bc_global(i, nb, prow, P);
    int64_t gj = col0 + bc_global(c0, nb, pcol, Q);
    uint64_t x = jump_apply(1u + (uint64_t)gi + (uint64_t)gj * (uint64_t)N, TS_MXP_SEED_A);
    double s = 0.0;
    int64_t left = nb - c0 % nb; // columns to the end of this local block
    for (int64_t j = c0; j < c1; j++) {
        const double v = gi == gj ? d[i] : value_of(x);
        s = fma(v, xv[j], s);
        if (!CYCLIC) {
            x = an * x + cn;
            gj++;
        } else if (--left) {
            x = an * x + cn;
            gj++;
        } else {
            x = ab * x + cb;
            gj += (int64_t)(Q - 1) * nb + 1;
            left = nb;
        }
    }
    part[(int64_t)blockIdx.y * m + i] = s;
}

// out[i] = base[i] + sign * sum over chunks (base NULL: 0).
__global__ void mxp_chunk_sum(int64_t m, int nch, const double *part, const double *base, double sign,
                              double *out) {
    const int64_t i = (int64_t)blockIdx.x * THREADS + threadIdx.x;
    if (i >= m) return;
    double s = 0.0;
    for (int c = 0; c < nch; c++) s += part[(int64_t)c * m + i];
    out[i] = (base ? base[i] : 0.0) + sign * s;
}

static void chunks(int64_t n, int64_t *w, int *nch) {
    int64_t ww = (n + TS_MXP_CHUNKS - 1) / TS_MXP_CHUNKS;
    if (ww < TS_MXP_CHUNK_MIN) ww = TS_MXP_CHUNK_MIN;
    *w = ww;
    *nch = (int)((n + ww - 1) / ww);
}

extern "C" int ts_mxp_gen_cuda(void *native_stream, void *vargs) {
    const ts_mxp_gen_args *a = (const ts_mxp_gen_args *)vargs;
    cudaStream_t s = (cudaStream_t)native_stream;
    int64_t w;
    int nch;
    chunks(a->n, &w, &nch);
    const ts_lcg64_jump jn = ts_lcg64_jump_n((uint64_t)a->N);
    dim3 grid((unsigned)((a->m + THREADS - 1) / THREADS), (unsigned)nch);
    mxp_gen_kernel<<<grid, THREADS, 0, s>>>(a->N, a->row0, a->col0, a->m, a->n, w, jn.a, jn.c, a->A, a->lda,
                                            a->k->scratch, a->adiag);
    LAUNCHED("mxp_gen_kernel");
    mxp_chunk_sum<<<grid.x, THREADS, 0, s>>>(a->m, nch, a->k->scratch, NULL, 1.0, a->rowsum);
    LAUNCHED("mxp_chunk_sum (row sums)");
    return 0;
}

extern "C" int ts_mxp_resid_cuda(void *native_stream, void *vargs) {
    const ts_mxp_resid_args *a = (const ts_mxp_resid_args *)vargs;
    cudaStream_t s = (cudaStream_t)native_stream;
    int64_t w;
    int nch;
    chunks(a->n > 0 ? a->n : 1, &w, &nch);
    const ts_lcg64_jump jn = ts_lcg64_jump_n((uint64_t)a->N);
    dim3 grid((unsigned)((a->m + THREADS - 1) / THREADS), (unsigned)nch);
    if (a->n > 0) {
        const ts_lcg64_jump jb = ts_lcg64_jump_n(((uint64_t)(a->Q - 1) * (uint64_t)a->nb + 1u) * (uint64_t)a->N);
        if (a->P == 1 && a->Q == 1)
            mxp_resid_kernel<false><<<grid, THREADS, 0, s>>>(a->N, a->row0, a->col0, a->m, a->n, w, jn.a, jn.c, jb.a,
                                                             jb.c, a->nb, 1, 0, 1, 0, a->d, a->x, a->k->scratch);
        else
            mxp_resid_kernel<true><<<grid, THREADS, 0, s>>>(a->N, a->row0, a->col0, a->m, a->n, w, jn.a, jn.c, jb.a,
                                                            jb.c, a->nb, a->P, a->prow, a->Q, a->pcol, a->d, a->x,
                                                            a->k->scratch);
        LAUNCHED("mxp_resid_kernel");
    } else {
        CUDA_OK(cudaMemsetAsync(a->k->scratch, 0, sizeof(double) * (size_t)a->m, s), "cudaMemsetAsync (residual)");
    }
    mxp_chunk_sum<<<grid.x, THREADS, 0, s>>>(a->m, a->n > 0 ? nch : 1, a->k->scratch, a->b, -1.0, a->r);
    LAUNCHED("mxp_chunk_sum (residual)");
    return 0;
}

// ---- the diagonal block ----

__global__ void mxp_identity2(int64_t n, float *X, float *Y, int64_t ld) {
    const int64_t i = (int64_t)blockIdx.x * THREADS + threadIdx.x, j = blockIdx.y;
    if (i >= n) return;
    const float v = i == j ? 1.0f : 0.0f;
    X[i + j * ld] = v;
    Y[i + j * ld] = v;
}

__global__ void mxp_pivot_check(int64_t n, const float *A, int64_t lda, int64_t col0, int *flag) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        const float u = A[i + i * lda];
        if (!(isfinite(u) && u != 0.0f)) {
            const int64_t c = col0 + i + 1;
            atomicMin(flag, c < INT_MAX ? (int)c : INT_MAX - 1);
        }
    }
}

__global__ void mxp_flag_init(int *flag) {
    flag[0] = INT_MAX;
    flag[1] = 0;
}

extern "C" int ts_mxp_getrf_cuda(void *native_stream, void *vargs) {
    const ts_mxp_getrf_args *a = (const ts_mxp_getrf_args *)vargs;
    ts_mxp_kern *k = a->k;
    cudaStream_t s = (cudaStream_t)native_stream;
    cusolverDnHandle_t sv = (cusolverDnHandle_t)k->solver;
    cublasHandle_t h = (cublasHandle_t)k->blas;
    if (!fits_int(a->jb) || !fits_int(a->lda) || !fits_int(a->ldi))
        return ts_error_set(TS_ERR_ARG, __FILE__, __LINE__, "mxp getrf: block %lld, lda %lld beyond int", (long long)a->jb,
                            (long long)a->lda);
    const int jb = (int)a->jb, lda = (int)a->lda, ldi = (int)a->ldi;
    int lwork = 0;
    SOLVER_OK(cusolverDnSgetrf_bufferSize(sv, jb, jb, a->A, lda, &lwork), "cusolverDnSgetrf_bufferSize");
    if (lwork > k->lwork) { // the first block, or a wider one: the old workspace may still be in use
        ts_device *dev = ts_stream_device(k->st);
        if (k->work) {
            CUDA_OK(cudaStreamSynchronize(s), "cudaStreamSynchronize (cuSOLVER workspace)");
            ts_dfree(dev, k->work);
            k->work = NULL;
            k->lwork = 0;
        }
        TS_CHECK(ts_dmalloc(dev, sizeof(float) * (size_t)lwork, (void **)&k->work));
        k->lwork = lwork;
    }
    // no pivot array: cuSOLVER factors without pivoting
    SOLVER_OK(cusolverDnSgetrf(sv, jb, jb, a->A, lda, k->work, NULL, k->dflag + 1), "cusolverDnSgetrf (no pivoting)");
    mxp_pivot_check<<<(jb + 255) / 256, 256, 0, s>>>(a->jb, a->A, a->lda, a->col0, k->dflag);
    LAUNCHED("mxp_pivot_check");
    dim3 grid((unsigned)((a->jb + THREADS - 1) / THREADS), (unsigned)jb);
    mxp_identity2<<<grid, THREADS, 0, s>>>(a->jb, a->Linv, a->Uinv, a->ldi);
    LAUNCHED("mxp_identity2");
    const float one = 1.0f;
    BLAS_OK(cublasStrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_UNIT, jb, jb, &one, a->A,
                        lda, a->Linv, ldi),
            "cublasStrsm (inverse of L11)");
    BLAS_OK(cublasStrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, jb, jb, &one,
                        a->A, lda, a->Uinv, ldi),
            "cublasStrsm (inverse of U11)");
    return 0;
}

// ---- element-wise operations, GEMM, GEMV ----

template <int BF>
__global__ void mxp_cvt_kernel(int64_t m, int64_t n, const float *__restrict__ src, int64_t lds, float scale,
                               uint16_t *__restrict__ dst, int64_t ldd) {
    const int64_t i = (int64_t)blockIdx.x * THREADS + threadIdx.x;
    if (i >= m) return;
    for (int64_t j = blockIdx.y; j < n; j += gridDim.y) {
        const float v = scale * src[i + j * lds];
        dst[i + j * ldd] = BF ? __bfloat16_as_ushort(__float2bfloat16_rn(v)) : __half_as_ushort(__float2half_rn(v));
    }
}

__global__ void mxp_d2s_kernel(int64_t n, const double *r, double s, float *y) {
    const int64_t i = (int64_t)blockIdx.x * THREADS + threadIdx.x;
    if (i < n) y[i] = (float)(s * r[i]);
}

__global__ void mxp_axpy_kernel(int64_t n, double alpha, const float *c, double *x) {
    const int64_t i = (int64_t)blockIdx.x * THREADS + threadIdx.x;
    if (i < n) x[i] += alpha * (double)c[i];
}

__global__ void mxp_set_diag_kernel(int64_t n, const double *d, float *A, int64_t lda) {
    const int64_t i = (int64_t)blockIdx.x * THREADS + threadIdx.x;
    if (i < n) A[i + i * lda] = (float)d[i];
}

static unsigned blocks_of(int64_t n) { return (unsigned)((n + THREADS - 1) / THREADS); }

// ---- FP8 E4M3 operands: per-block power-of-two scale, conversion (transposed for At), GEMM ----

// *amax (as the bits of a non-negative float, which order as unsigned integers) = max |src|.
__global__ void mxp_amax_kernel(int64_t m, int64_t n, const float *__restrict__ src, int64_t lds, unsigned *amax) {
    __shared__ unsigned red[THREADS];
    const int64_t i = (int64_t)blockIdx.x * THREADS + threadIdx.x;
    float v = 0.0f;
    if (i < m)
        for (int64_t j = blockIdx.y; j < n; j += gridDim.y) {
            const float a = fabsf(src[i + j * lds]);
            if (a > v || isnan(a)) v = a;
        }
    red[threadIdx.x] = __float_as_uint(v);
    __syncthreads();
    for (int h = THREADS / 2; h > 0; h /= 2) {
        if ((int)threadIdx.x < h && red[threadIdx.x + h] > red[threadIdx.x]) red[threadIdx.x] = red[threadIdx.x + h];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicMax(amax, red[0]);
}

// As ts_mxp_scale8 (kernels/cpu/ts_mxp_kernels.c).
__device__ static float scale8(float amax) {
    if (!(amax > 0.0f) || !isfinite(amax)) return 1.0f;
    int x;
    const float f = frexpf(amax, &x);
    int e = (f <= 0.875f ? 9 : 8) - x;
    e = e > 120 ? 120 : e < -120 ? -120 : e;
    return ldexpf(1.0f, e);
}

__device__ static uint8_t to8(float v) { return (uint8_t)__nv_cvt_float_to_fp8(v, __NV_SATFINITE, __NV_E4M3); }

// dst = e4m3(s src) over 32 x 32 tiles (blocks of 32 x 8 threads), transposed through shared memory
// when TRANS so that both the reads and the writes run along columns.
template <bool TRANS>
__global__ void mxp_cvt8_kernel(int64_t m, int64_t n, const float *__restrict__ src, int64_t lds,
                                uint8_t *__restrict__ dst, int64_t ldd, const unsigned *amax) {
    __shared__ uint8_t tile[32][33];
    const float s = scale8(__uint_as_float(*amax));
    const int64_t i0 = (int64_t)blockIdx.x * 32, j0 = (int64_t)blockIdx.y * 32;
    for (int r = threadIdx.y; r < 32; r += 8) {
        const int64_t i = i0 + threadIdx.x, j = j0 + r;
        if (i < m && j < n) {
            const uint8_t c = to8(s * src[i + j * lds]);
            if (TRANS) tile[threadIdx.x][r] = c;
            else dst[i + j * ldd] = c;
        }
    }
    if (!TRANS) return;
    __syncthreads();
    for (int r = threadIdx.y; r < 32; r += 8) { // dst(j, i): rows j, columns i
        const int64_t j = j0 + threadIdx.x, i = i0 + r;
        if (i < m && j < n) dst[j + i * ldd] = tile[r][threadIdx.x];
    }
}

// Rows [r0, r1) of cols columns of dst set to 0.
__global__ void mxp_pad8_kernel(int64_t r0, int64_t r1, int64_t cols, uint8_t *dst, int64_t ldd) {
    const int64_t i = r0 + (int64_t)blockIdx.x * THREADS + threadIdx.x;
    if (i >= r1) return;
    for (int64_t j = blockIdx.y; j < cols; j += gridDim.y) dst[i + j * ldd] = 0;
}

// After the conversion has read it: the amax slot becomes 1/s (a float).
__global__ void mxp_inv_scale_kernel(unsigned *slot) { *slot = __float_as_uint(1.0f / scale8(__uint_as_float(*slot))); }

static int cvt8_cuda(cudaStream_t s, const ts_mxp_op_args *a) {
    unsigned *slot = (unsigned *)a->sout;
    CUDA_OK(cudaMemsetAsync(slot, 0, sizeof(unsigned), s), "cudaMemsetAsync (FP8 scale)");
    dim3 ga(blocks_of(a->m), (unsigned)(a->n < 1024 ? a->n : 1024));
    mxp_amax_kernel<<<ga, THREADS, 0, s>>>(a->m, a->n, (const float *)a->A, a->lda, slot);
    LAUNCHED("mxp_amax_kernel");
    const int64_t gx = (a->m + 31) / 32, gy = (a->n + 31) / 32;
    if (gy > 65535) return ts_error_set(TS_ERR_ARG, __FILE__, __LINE__, "mxp cvt8: %lld columns", (long long)a->n);
    dim3 gt((unsigned)gx, (unsigned)gy), bt(32, 8);
    if (a->trans)
        mxp_cvt8_kernel<true><<<gt, bt, 0, s>>>(a->m, a->n, (const float *)a->A, a->lda, (uint8_t *)a->C, a->ldc, slot);
    else
        mxp_cvt8_kernel<false><<<gt, bt, 0, s>>>(a->m, a->n, (const float *)a->A, a->lda, (uint8_t *)a->C, a->ldc, slot);
    LAUNCHED("mxp_cvt8_kernel");
    const int64_t rows = a->trans ? a->n : a->m, cols = a->trans ? a->m : a->n;
    if (a->kk > rows) {
        dim3 gp(blocks_of(a->kk - rows), (unsigned)(cols < 65535 ? cols : 65535));
        mxp_pad8_kernel<<<gp, THREADS, 0, s>>>(rows, a->kk, cols, (uint8_t *)a->C, a->ldc);
        LAUNCHED("mxp_pad8_kernel");
    }
    mxp_inv_scale_kernel<<<1, 1, 0, s>>>(slot);
    LAUNCHED("mxp_inv_scale_kernel");
    return 0;
}

#define LT_OK(call, what)                                                                                    \
    do {                                                                                                     \
        cublasStatus_t s_ = (call);                                                                          \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                                   \
            rc = ts_error_set(TS_ERR_CUBLAS, __FILE__, __LINE__, "%s: %s", what, cublasGetStatusString(s_)); \
            goto out;                                                                                        \
        }                                                                                                    \
    } while (0)

// The largest power of two (at most 256) that divides the address: cuBLASLt's heuristic assumes 256
// unless told, and would pick kernels that need more alignment than the panels' offsets give.
static uint32_t align_of(const void *p) {
    uint32_t a = 256;
    while (a > 1 && ((uintptr_t)p % a) != 0) a /= 2;
    return a;
}

// C = alpha sa sb At^T B + beta C by cuBLASLt: E4M3 x E4M3 -> FP32, FP32 accumulation (fast
// accumulation off), the scales read from device memory on the stream.
static int gemm8_cuda(cudaStream_t st, const ts_mxp_op_args *a) {
    if (!fits_int(a->m) || !fits_int(a->n) || !fits_int(a->kk) || !fits_int(a->lda) || !fits_int(a->ldb) ||
        !fits_int(a->ldc))
        return ts_error_set(TS_ERR_ARG, __FILE__, __LINE__, "mxp gemm8: %lld x %lld x %lld beyond int",
                            (long long)a->m, (long long)a->n, (long long)a->kk);
    if (a->kk % 16 || a->lda % 16 || a->ldb % 16 || align_of(a->A) < 16 || align_of(a->B) < 16)
        return ts_error_set(TS_ERR_ARG, __FILE__, __LINE__,
                            "mxp gemm8: k %lld, lda %lld, ldb %lld and the operands' addresses must be multiples of 16",
                            (long long)a->kk, (long long)a->lda, (long long)a->ldb);
    ts_mxp_kern *k = a->k;
    cublasLtHandle_t lt = (cublasLtHandle_t)k->lt;
    cublasLtMatmulDesc_t op = NULL;
    cublasLtMatrixLayout_t la = NULL, lb = NULL, lc = NULL;
    cublasLtMatmulPreference_t pref = NULL;
    cublasLtMatmulHeuristicResult_t heur[8];
    int nres = 0, rc = 0;
    const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    const uint32_t al_a = align_of(a->A), al_b = align_of(a->B), al_c = align_of(a->C);
    const uint64_t ws = k->lt_ws_bytes;
    // The operands' scales (powers of two, so the product alpha sa sb is exact) go into alpha on the
    // host: cuBLASLt 13.1 refuses every E4M3 x E4M3 -> FP32 matmul that has A/B scale pointers on
    // Hopper (H100 and H200: NOT_SUPPORTED at cublasLtMatmul, in place or not, FP32 or 16-bit C) and
    // runs the same matmul without them (bench/fp8_probe.cu). The copy to pageable memory returns once
    // it is done, after the stream's earlier work (the conversion that wrote the scales, or the event
    // wait for it): one small copy and wait per call, each call a block of the trailing update.
    float scales[2] = {1.0f, 1.0f};
    CUDA_OK(cudaMemcpyAsync(&scales[0], a->sa, sizeof(float), cudaMemcpyDeviceToHost, st), "cudaMemcpyAsync (FP8 scale A)");
    CUDA_OK(cudaMemcpyAsync(&scales[1], a->sb, sizeof(float), cudaMemcpyDeviceToHost, st), "cudaMemcpyAsync (FP8 scale B)");
    CUDA_OK(cudaStreamSynchronize(st), "cudaStreamSynchronize (FP8 scales)");
    const float alpha = a->alpha * scales[0] * scales[1], beta = a->beta;
    LT_OK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
    LT_OK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta), "cuBLASLt TRANSA");
    LT_OK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb), "cuBLASLt TRANSB");
    LT_OK(cublasLtMatrixLayoutCreate(&la, CUDA_R_8F_E4M3, (uint64_t)a->kk, (uint64_t)a->m, a->lda), "cuBLASLt layout A");
    LT_OK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_8F_E4M3, (uint64_t)a->kk, (uint64_t)a->n, a->ldb), "cuBLASLt layout B");
    LT_OK(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, (uint64_t)a->m, (uint64_t)a->n, a->ldc), "cuBLASLt layout C");
    LT_OK(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
    LT_OK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws),
          "cuBLASLt workspace");
    LT_OK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &al_a, sizeof al_a),
          "cuBLASLt alignment A");
    LT_OK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &al_b, sizeof al_b),
          "cuBLASLt alignment B");
    LT_OK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &al_c, sizeof al_c),
          "cuBLASLt alignment C");
    LT_OK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &al_c, sizeof al_c),
          "cuBLASLt alignment D");
    LT_OK(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, 8, heur, &nres), "cublasLtMatmulAlgoGetHeuristic");
    if (nres < 1) {
        rc = ts_error_set(TS_ERR_UNSUPPORTED, __FILE__, __LINE__,
                          "cuBLASLt has no FP8 GEMM for %lld x %lld x %lld (E4M3 x E4M3 -> FP32, TN)", (long long)a->m,
                          (long long)a->n, (long long)a->kk);
        goto out;
    }
    {
        // the heuristic's candidates in its order: one it lists can still refuse the call itself
        // (CUBLAS_STATUS_NOT_SUPPORTED before anything is launched), then the next one is tried
        cublasStatus_t last = CUBLAS_STATUS_NOT_SUPPORTED;
        for (int i = 0; i < nres; i++) {
            if (heur[i].state != CUBLAS_STATUS_SUCCESS || heur[i].workspaceSize > ws) continue;
            last = cublasLtMatmul(lt, op, &alpha, a->A, la, a->B, lb, &beta, a->C, lc, a->C, lc, &heur[i].algo,
                                  k->lt_ws, ws, st);
            if (last != CUBLAS_STATUS_NOT_SUPPORTED) break;
        }
        LT_OK(last, "cublasLtMatmul (E4M3 x E4M3 -> FP32)");
    }
out:
    if (rc < 0) (void)cudaGetLastError();
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
    if (lc) cublasLtMatrixLayoutDestroy(lc);
    if (lb) cublasLtMatrixLayoutDestroy(lb);
    if (la) cublasLtMatrixLayoutDestroy(la);
    if (op) cublasLtMatmulDescDestroy(op);
    return rc;
}

extern "C" int ts_mxp_op_cuda(void *native_stream, void *vargs) {
    const ts_mxp_op_args *a = (const ts_mxp_op_args *)vargs;
    cudaStream_t s = (cudaStream_t)native_stream;
    cublasHandle_t h = (cublasHandle_t)a->k->blas;
    switch (a->op) {
    case 0: {
        dim3 grid(blocks_of(a->m), (unsigned)(a->n < 65535 ? a->n : 65535));
        if (a->k->fmt == TS_MXP_BF16)
            mxp_cvt_kernel<1><<<grid, THREADS, 0, s>>>(a->m, a->n, (const float *)a->A, a->lda, (float)a->s,
                                                       (uint16_t *)a->C, a->ldc);
        else
            mxp_cvt_kernel<0><<<grid, THREADS, 0, s>>>(a->m, a->n, (const float *)a->A, a->lda, (float)a->s,
                                                       (uint16_t *)a->C, a->ldc);
        LAUNCHED("mxp_cvt_kernel");
        return 0;
    }
    case 1: {
        if (!fits_int(a->m) || !fits_int(a->n) || !fits_int(a->kk) || !fits_int(a->lda) || !fits_int(a->ldb) ||
            !fits_int(a->ldc))
            return ts_error_set(TS_ERR_ARG, __FILE__, __LINE__, "mxp gemm: %lld x %lld x %lld beyond int",
                                (long long)a->m, (long long)a->n, (long long)a->kk);
        const cudaDataType_t t = a->k->fmt == TS_MXP_BF16 ? CUDA_R_16BF : CUDA_R_16F;
        const float alpha = a->alpha, beta = a->beta;
        BLAS_OK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, (int)a->m, (int)a->n, (int)a->kk, &alpha, a->A, t,
                             (int)a->lda, a->B, t, (int)a->ldb, &beta, a->C, CUDA_R_32F, (int)a->ldc,
                             CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                a->k->fmt == TS_MXP_BF16 ? "cublasGemmEx (BF16 x BF16 -> FP32)" : "cublasGemmEx (FP16 x FP16 -> FP32)");
        return 0;
    }
    case 2: {
        if (!fits_int(a->m) || !fits_int(a->n) || !fits_int(a->lda))
            return ts_error_set(TS_ERR_ARG, __FILE__, __LINE__, "mxp sgemv: %lld x %lld beyond int", (long long)a->m,
                                (long long)a->n);
        const float alpha = a->alpha, beta = a->beta;
        BLAS_OK(cublasSgemv(h, CUBLAS_OP_N, (int)a->m, (int)a->n, &alpha, (const float *)a->A, (int)(a->lda > 0 ? a->lda : 1),
                            (const float *)a->B, 1, &beta, (float *)a->C, 1),
                "cublasSgemv");
        return 0;
    }
    case 3:
        mxp_d2s_kernel<<<blocks_of(a->n), THREADS, 0, s>>>(a->n, (const double *)a->A, a->s, (float *)a->C);
        LAUNCHED("mxp_d2s_kernel");
        return 0;
    case 4:
        mxp_axpy_kernel<<<blocks_of(a->n), THREADS, 0, s>>>(a->n, a->s, (const float *)a->A, (double *)a->C);
        LAUNCHED("mxp_axpy_kernel");
        return 0;
    case 5:
        mxp_set_diag_kernel<<<blocks_of(a->n), THREADS, 0, s>>>(a->n, (const double *)a->A, (float *)a->C, a->lda);
        LAUNCHED("mxp_set_diag_kernel");
        return 0;
    case 6: return cvt8_cuda(s, a);
    case 7: return gemm8_cuda(s, a);
    }
    return ts_error_set(TS_ERR_INTERNAL, __FILE__, __LINE__, "mxp: unknown operation %d", a->op);
}

// ---- context ----

extern "C" int ts_mxp_cuda_init(ts_mxp_kern *k) {
    ts_device *dev = ts_stream_device(k->st);
    const ts_device_props *p = ts_device_props_of(dev);
    CUDA_OK(cudaSetDevice(p->native_id), "cudaSetDevice");
    cudaStream_t s = (cudaStream_t)ts_stream_native(k->st);
    cublasHandle_t h = NULL;
    BLAS_OK(cublasCreate(&h), "cublasCreate");
    k->blas = h;
    BLAS_OK(cublasSetStream(h, s), "cublasSetStream");
    BLAS_OK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST), "cublasSetPointerMode(host)");
    cusolverDnHandle_t sv = NULL;
    SOLVER_OK(cusolverDnCreate(&sv), "cusolverDnCreate");
    k->solver = sv;
    SOLVER_OK(cusolverDnSetStream(sv, s), "cusolverDnSetStream");
    TS_CHECK(ts_dmalloc(dev, 2 * sizeof(int), (void **)&k->dflag));
    TS_CHECK(ts_dmalloc(dev, sizeof(double) * (size_t)TS_MXP_CHUNKS * (size_t)(k->max_m > 0 ? k->max_m : 1),
                        (void **)&k->scratch));
    mxp_flag_init<<<1, 1, 0, s>>>(k->dflag);
    LAUNCHED("mxp_flag_init");
    if (k->fmt == TS_MXP_FP8) { // cuBLASLt's FP8 GEMMs: Ada (8.9) and Hopper (9.0) onward
        if (p->cc_major * 10 + p->cc_minor < 89)
            return ts_error_set(TS_ERR_UNSUPPORTED, __FILE__, __LINE__,
                                "FP8 GEMMs need compute capability 8.9 or newer (this device: %d.%d)", p->cc_major,
                                p->cc_minor);
        cublasLtHandle_t lt = NULL;
        BLAS_OK(cublasLtCreate(&lt), "cublasLtCreate");
        k->lt = lt;
        k->lt_ws_bytes = (size_t)32 << 20;
        TS_CHECK(ts_dmalloc(dev, k->lt_ws_bytes, &k->lt_ws));
    }
    return 0;
}

extern "C" void ts_mxp_cuda_fini(ts_mxp_kern *k) {
    ts_device *dev = ts_stream_device(k->st);
    const ts_device_props *p = ts_device_props_of(dev);
    if (cudaSetDevice(p->native_id) == cudaSuccess) {
        (void)cudaStreamSynchronize((cudaStream_t)ts_stream_native(k->st));
        if (k->solver) (void)cusolverDnDestroy((cusolverDnHandle_t)k->solver);
        if (k->blas) (void)cublasDestroy((cublasHandle_t)k->blas);
        if (k->lt) (void)cublasLtDestroy((cublasLtHandle_t)k->lt);
    }
    (void)cudaGetLastError();
    if (k->work) ts_dfree(dev, k->work);
    if (k->dflag) ts_dfree(dev, k->dflag);
    if (k->scratch) ts_dfree(dev, k->scratch);
    if (k->lt_ws) ts_dfree(dev, k->lt_ws);
    k->lt = k->lt_ws = NULL;
    k->solver = k->blas = NULL;
    k->work = NULL;
    k->dflag = NULL;
    k->scratch = NULL;
}

extern "C" int ts_mxp_cuda_breakdown(ts_mxp_kern *k, int64_t *col) {
    int f[2] = {0, 0};
    cudaStream_t s = (cudaStream_t)ts_stream_native(k->st);
    CUDA_OK(cudaMemcpyAsync(f, k->dflag, sizeof f, cudaMemcpyDeviceToHost, s), "cudaMemcpyAsync (breakdown flag)");
    CUDA_OK(cudaStreamSynchronize(s), "cudaStreamSynchronize (breakdown flag)");
    *col = f[0] == INT_MAX ? 0 : f[0];
    return 0;
}
