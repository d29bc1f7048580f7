// ts_hpcg_opt_kernels.cu: the CUDA versions of HPCG's optimized kernels: one thread per row running the per-row code of ts_hpcg_opt_kernels.h, CUB for the colour sort, block reductions for DDOT.
#include <cuda_runtime.h>

#include <cub/cub.cuh>

#include "algorithms/hpcg/ts_hpcg_opt_kernels.h"
#include "core/ts_error.h"

#define TPB 256 // threads per block of the row kernels

static unsigned blocks_for(int64_t n) { return (unsigned)((n + TPB - 1) / TPB); }

// Every launch is checked here; faults inside a kernel surface at the stream's next sync.
static int launched(const char *name) {
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        return ts_error_set(TS_ERR_CUDA, __FILE__, __LINE__, "hpcg kernel %s: launch failed: %s", name,
                            cudaGetErrorString(e));
    return 0;
}

// Programmatic dependent launch for the V-cycle's matrix kernels (TS_HPCG_PDL): each may be
// scheduled while the kernel before it drains, waits for it at its first instruction, and lets the
// next one be scheduled as soon as all of its own blocks have started. One H100, same call: the
// V-cycle 7.455 -> 7.417 ms (levels 1-3's launches 10-25% shorter, level 0 the same), rating +0.3%.
#ifndef TS_HPCG_PDL
#define TS_HPCG_PDL 1
#endif
#if TS_HPCG_PDL
#define PDL_ENTRY()                                                                                \
    do {                                                                                           \
        cudaTriggerProgrammaticLaunchCompletion();                                                 \
        cudaGridDependencySynchronize();                                                           \
    } while (0)
#else
#define PDL_ENTRY() ((void)0)
#endif
template <typename A>
static int launch_pdl(void (*kern)(A), unsigned grid, cudaStream_t st, const A &a, const char *name) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(grid);
    cfg.blockDim = dim3(TPB);
    cfg.stream = st;
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    at[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = at;
    cfg.numAttrs = TS_HPCG_PDL ? 1 : 0;
    cudaLaunchKernelEx(&cfg, kern, a);
    return launched(name);
}

#define ROW_KERNEL(kname, type, count, body)                                                       \
    __global__ void __launch_bounds__(TPB) kname(const type a) {                                   \
        const int64_t i = (int64_t)blockIdx.x * TPB + threadIdx.x;                                 \
        if (i < (count)) body;                                                                     \
    }
// The matrix kernels: at least SWEEP_BLOCKS blocks per multiprocessor (registers capped).
#define SWEEP_BLOCKS 4
#define ROW_KERNEL_MB(kname, type, count, body)                                                    \
    __global__ void __launch_bounds__(TPB, SWEEP_BLOCKS) kname(const type a) {                     \
        const int64_t i = (int64_t)blockIdx.x * TPB + threadIdx.x;                                 \
        if (i < (count)) body;                                                                     \
    }

ROW_KERNEL(k_gen, ts_hpcg_xk_gen, a.nrow, ts_hpcg_gen_row(&a, (int32_t)i))
ROW_KERNEL(k_ell, ts_hpcg_xk_ell, a.nrow, ts_hpcg_ell_row(&a, (int32_t)i))
ROW_KERNEL(k_f2c, ts_hpcg_xk_f2c, (int64_t)a.cnx * a.cny * a.cnz, ts_hpcg_f2c_row(&a, (int32_t)i))
ROW_KERNEL(k_remap, ts_hpcg_xk_remap, a.n, a.out[i] = a.map[a.in[i]])
// The thread blocks of b's rows first, then those of h's: each thread block sweeps rows of one.
// The order matters through ptxas, not through the schedule: under the 64-register cap it compiles
// the two inlined copies of the row code differently, one issuing all loads of a group of 8 before
// the first product, the other interleaving the x loads with the products. With h's rows first
// (ec69fce) the b rows, every row of a one-rank run, ran the interleaved copy: the one-GPU rating
// lost 13% (H100) to 21% (H200), bench/NOTES.md "HPCG on one GPU: the loss of ec69fce". This order
// compiles to the same machine code as 08e58c3; bench/regress.sh measures any change against it.
template <int MODE> __global__ void __launch_bounds__(TPB, SWEEP_BLOCKS) k_sweep(const ts_hpcg_xk_sweep a) {
    PDL_ENTRY();
    const unsigned nbb = (unsigned)((a.b.nr + TPB - 1) / TPB);
    if (blockIdx.x < nbb) {
        const int64_t i = (int64_t)blockIdx.x * TPB + threadIdx.x;
        if (i < a.b.nr) ts_hpcg_sweep_row(&a, &a.b, MODE, (int32_t)i);
    } else {
        const int64_t i = (int64_t)(blockIdx.x - nbb) * TPB + threadIdx.x;
        if (i < a.h.nr) ts_hpcg_sweep_row(&a, &a.h, MODE, (int32_t)i);
    }
}
// SpMV position-major over the blocks (ts_hpcg_xk_spmv): the block's fields from a copy in shared
// memory (one call site, nothing chosen per thread); the row's value as the sweeps' SPMV computes it.
#define SPMV_BLOCKS 3
__global__ void __launch_bounds__(TPB, SPMV_BLOCKS) k_spmv(const __grid_constant__ ts_hpcg_xk_spmv a) {
    __shared__ ts_hpcg_cblk sb;
    const unsigned nb = (unsigned)a.nb;
    if (threadIdx.x < sizeof sb / sizeof(int32_t)) // word by word (a struct copy went through the stack)
        ((int32_t *)&sb)[threadIdx.x] = ((const int32_t *)&a.blk[a.ord[blockIdx.x % nb]])[threadIdx.x];
    __syncthreads();
    const int64_t i = (int64_t)(blockIdx.x / nb) * TPB + threadIdx.x;
    if (i >= sb.nr) return;
    const int32_t p = sb.r0 + (int32_t)i;
    const double sl = ts_hpcg_ell_dot(sb.lcol, sb.lval, sb.nr, sb.wl, i, a.x);
    const double su = ts_hpcg_ell_dot(sb.ucol, sb.uval, sb.nr, sb.wu, i, a.x);
    a.y[p] = sl + a.diag[p] * a.x[p] + su;
}
ROW_KERNEL(k_restrict, ts_hpcg_xk_restrict, a.n, ts_hpcg_restrict_row(&a, (int32_t)i))
__global__ void __launch_bounds__(TPB, SWEEP_BLOCKS) k_restrict1(const ts_hpcg_xk_restrict1 a) {
    PDL_ENTRY();
    const int64_t i = (int64_t)blockIdx.x * TPB + threadIdx.x;
    if (i < a.b.nr) ts_hpcg_restrict1_row(&a, (int32_t)i);
}
__global__ void __launch_bounds__(TPB) k_prolong(const ts_hpcg_xk_prolong a) {
    PDL_ENTRY();
    const int64_t i = (int64_t)blockIdx.x * TPB + threadIdx.x;
    if (i < a.n) a.x[a.fr[i]] += a.xc[a.cq[i]];
}
ROW_KERNEL(k_waxpby, ts_hpcg_xk_waxpby, a.n, a.w[i] = a.alpha * a.x[i] + a.beta * a.y[i])
ROW_KERNEL(k_index, ts_hpcg_xk_index, a.n, ts_hpcg_index_row(&a, (int32_t)i))

#define LAUNCH_ROWS(kname, count, a, s)                                                            \
    do {                                                                                           \
        const int64_t n_ = (count);                                                                \
        if (n_ <= 0) return 0;                                                                     \
        kname<<<blocks_for(n_), TPB, 0, (cudaStream_t)(s)>>>(a);                                   \
        return launched(#kname);                                                                   \
    } while (0)

extern "C" int ts_hpcg_xk_gen_cuda(void *s, void *args) {
    const ts_hpcg_xk_gen a = *(const ts_hpcg_xk_gen *)args;
    LAUNCH_ROWS(k_gen, a.nrow, a, s);
}
extern "C" int ts_hpcg_xk_ell_cuda(void *s, void *args) {
    const ts_hpcg_xk_ell a = *(const ts_hpcg_xk_ell *)args;
    LAUNCH_ROWS(k_ell, a.nrow, a, s);
}
extern "C" int ts_hpcg_xk_f2c_cuda(void *s, void *args) {
    const ts_hpcg_xk_f2c a = *(const ts_hpcg_xk_f2c *)args;
    LAUNCH_ROWS(k_f2c, (int64_t)a.cnx * a.cny * a.cnz, a, s);
}
extern "C" int ts_hpcg_xk_remap_cuda(void *s, void *args) {
    const ts_hpcg_xk_remap a = *(const ts_hpcg_xk_remap *)args;
    LAUNCH_ROWS(k_remap, a.n, a, s);
}
extern "C" int ts_hpcg_xk_sweep_cuda(void *s, void *args) {
    const ts_hpcg_xk_sweep a = *(const ts_hpcg_xk_sweep *)args;
    const unsigned nb = blocks_for(a.b.nr) + blocks_for(a.h.nr);
    if (!nb) return 0;
    cudaStream_t st = (cudaStream_t)s;
    switch (a.mode) {
    case TS_HPCG_FWD0: return launch_pdl(k_sweep<TS_HPCG_FWD0>, nb, st, a, "k_sweep");
    case TS_HPCG_BWD0: return launch_pdl(k_sweep<TS_HPCG_BWD0>, nb, st, a, "k_sweep");
    case TS_HPCG_FWD: return launch_pdl(k_sweep<TS_HPCG_FWD>, nb, st, a, "k_sweep");
    case TS_HPCG_BWD_T: return launch_pdl(k_sweep<TS_HPCG_BWD_T>, nb, st, a, "k_sweep");
    case TS_HPCG_SPMV: return launch_pdl(k_sweep<TS_HPCG_SPMV>, nb, st, a, "k_sweep");
    default: return ts_error_set(TS_ERR_ARG, __FILE__, __LINE__, "hpcg: sweep mode %d", a.mode);
    }
}
extern "C" int ts_hpcg_xk_spmv_cuda(void *s, void *args) {
    const ts_hpcg_xk_spmv a = *(const ts_hpcg_xk_spmv *)args;
    if (a.nb <= 0 || a.maxnr <= 0) return 0;
    k_spmv<<<blocks_for(a.maxnr) * (unsigned)a.nb, TPB, 0, (cudaStream_t)s>>>(a);
    return launched("k_spmv");
}
extern "C" int ts_hpcg_xk_restrict_cuda(void *s, void *args) {
    const ts_hpcg_xk_restrict a = *(const ts_hpcg_xk_restrict *)args;
    LAUNCH_ROWS(k_restrict, a.n, a, s);
}
extern "C" int ts_hpcg_xk_restrict1_cuda(void *s, void *args) {
    const ts_hpcg_xk_restrict1 a = *(const ts_hpcg_xk_restrict1 *)args;
    if (a.b.nr <= 0) return 0;
    return launch_pdl(k_restrict1, blocks_for(a.b.nr), (cudaStream_t)s, a, "k_restrict1");
}
extern "C" int ts_hpcg_xk_prolong_cuda(void *s, void *args) {
    const ts_hpcg_xk_prolong a = *(const ts_hpcg_xk_prolong *)args;
    if (a.n <= 0) return 0;
    return launch_pdl(k_prolong, blocks_for(a.n), (cudaStream_t)s, a, "k_prolong");
}
extern "C" int ts_hpcg_xk_waxpby_cuda(void *s, void *args) {
    const ts_hpcg_xk_waxpby a = *(const ts_hpcg_xk_waxpby *)args;
    LAUNCH_ROWS(k_waxpby, a.n, a, s);
}
extern "C" int ts_hpcg_xk_index_cuda(void *s, void *args) {
    const ts_hpcg_xk_index a = *(const ts_hpcg_xk_index *)args;
    LAUNCH_ROWS(k_index, a.n, a, s);
}

// ---- colouring: the counts are added per block, then once per block to the global counters ----

__global__ void __launch_bounds__(TPB) k_jpl(const ts_hpcg_xk_jpl a) {
    const int64_t i = (int64_t)blockIdx.x * TPB + threadIdx.x;
    const int left = i < a.nrow ? ts_hpcg_jpl_row(&a, (int32_t)i) : 0;
    const int block_left = __syncthreads_count(left);
    if (threadIdx.x == 0 && block_left) atomicAdd(a.left, block_left);
}

extern "C" int ts_hpcg_xk_jpl_cuda(void *s, void *args) {
    const ts_hpcg_xk_jpl a = *(const ts_hpcg_xk_jpl *)args;
    LAUNCH_ROWS(k_jpl, a.nrow, a, s);
}

__global__ void __launch_bounds__(TPB) k_recolor(const ts_hpcg_xk_recolor a) {
    __shared__ int32_t cnt[TS_HPCG_MAX_COLORS];
    const int64_t i = (int64_t)blockIdx.x * TPB + threadIdx.x;
    if (a.relabel) {
        if (i < a.nrow) a.color[i] = a.map[a.color[i]];
        return;
    }
    if (threadIdx.x < TS_HPCG_MAX_COLORS) cnt[threadIdx.x] = 0;
    __syncthreads();
    if (i < (int64_t)a.cnx * a.cny * a.cnz)
        atomicAdd(&cnt[a.color[ts_hpcg_f2c_nat((int32_t)i, a.cnx, a.cny, a.fnx, a.fny)]], 1);
    __syncthreads();
    if (threadIdx.x < TS_HPCG_MAX_COLORS && cnt[threadIdx.x]) atomicAdd(&a.count[threadIdx.x], cnt[threadIdx.x]);
}

extern "C" int ts_hpcg_xk_recolor_cuda(void *s, void *args) {
    const ts_hpcg_xk_recolor a = *(const ts_hpcg_xk_recolor *)args;
    LAUNCH_ROWS(k_recolor, a.relabel ? (int64_t)a.nrow : (int64_t)a.cnx * a.cny * a.cnz, a, s);
}

__global__ void __launch_bounds__(TPB) k_cstat(const ts_hpcg_xk_cstat a) {
    const int M = TS_HPCG_MAX_BLOCKS;
    __shared__ int32_t st[TS_HPCG_CSTAT_LEN];
    for (int k = threadIdx.x; k < TS_HPCG_CSTAT_LEN; k += TPB) st[k] = 0;
    __syncthreads();
    const int64_t i = (int64_t)blockIdx.x * TPB + threadIdx.x;
    if (i < a.nrow) {
        int nl, nu, nh, same;
        ts_hpcg_cstat_row(&a, (int32_t)i, &nl, &nu, &nh, &same);
        const int32_t col = a.color[i];
        const int32_t c = 2 * col + (a.split && nh > 0);
        a.key[i] = col < 0 || col >= TS_HPCG_MAX_COLORS ? 0 : c;
        if (col < 0 || col >= TS_HPCG_MAX_COLORS) {
            atomicAdd(&st[3 * M], 1);
        } else {
            atomicAdd(&st[c], 1);
            atomicMax(&st[M + c], nl);
            atomicMax(&st[2 * M + c], nu);
            if (same) atomicAdd(&st[3 * M], same);
        }
    }
    __syncthreads();
    for (int k = threadIdx.x; k < TS_HPCG_CSTAT_LEN; k += TPB) {
        if (!st[k]) continue;
        if (k >= M && k < 3 * M) atomicMax(&a.stats[k], st[k]);
        else atomicAdd(&a.stats[k], st[k]);
    }
}

extern "C" int ts_hpcg_xk_cstat_cuda(void *s, void *args) {
    const ts_hpcg_xk_cstat a = *(const ts_hpcg_xk_cstat *)args;
    LAUNCH_ROWS(k_cstat, a.nrow, a, s);
}

// ---- the permutation: a stable radix sort of (colour, row) pairs ----

#define KEY_BITS 6 // block keys < TS_HPCG_MAX_BLOCKS = 64
static_assert((1 << KEY_BITS) >= TS_HPCG_MAX_BLOCKS, "block key bits");

__global__ void __launch_bounds__(TPB) k_iota(int32_t *v, int32_t n) {
    const int64_t i = (int64_t)blockIdx.x * TPB + threadIdx.x;
    if (i < n) v[i] = (int32_t)i;
}

__global__ void __launch_bounds__(TPB) k_invert(const int32_t *iperm, int32_t *perm, int32_t n) {
    const int64_t p = (int64_t)blockIdx.x * TPB + threadIdx.x;
    if (p < n) perm[iperm[p]] = (int32_t)p;
}

extern "C" int ts_hpcg_xk_perm_temp_cuda(int32_t nrow, size_t *bytes) {
    *bytes = 0;
    cudaError_t e = cub::DeviceRadixSort::SortPairs(nullptr, *bytes, (const int32_t *)nullptr, (int32_t *)nullptr,
                                                    (const int32_t *)nullptr, (int32_t *)nullptr, nrow, 0, KEY_BITS);
    if (e != cudaSuccess)
        return ts_error_set(TS_ERR_CUDA, __FILE__, __LINE__, "hpcg: CUB sort workspace query (%d rows): %s", (int)nrow,
                            cudaGetErrorString(e));
    return 0;
}

extern "C" int ts_hpcg_xk_perm_cuda(void *s, void *args) {
    const ts_hpcg_xk_perm *a = (const ts_hpcg_xk_perm *)args;
    cudaStream_t st = (cudaStream_t)s;
    if (a->nrow <= 0) return 0;
    if (!a->keys || !a->vals || !a->temp)
        return ts_error_set(TS_ERR_ARG, __FILE__, __LINE__, "hpcg: the colour sort needs its scratch arrays");
    k_iota<<<blocks_for(a->nrow), TPB, 0, st>>>(a->vals, a->nrow);
    TS_CHECK(launched("k_iota"));
    size_t bytes = a->temp_bytes;
    cudaError_t e = cub::DeviceRadixSort::SortPairs(a->temp, bytes, a->bkey, a->keys, a->vals, a->iperm, a->nrow, 0,
                                                    KEY_BITS, st);
    if (e != cudaSuccess)
        return ts_error_set(TS_ERR_CUDA, __FILE__, __LINE__, "hpcg: CUB sort of %d rows by block: %s", (int)a->nrow,
                            cudaGetErrorString(e));
    k_invert<<<blocks_for(a->nrow), TPB, 0, st>>>(a->iperm, a->perm, a->nrow);
    return launched("k_invert");
}

// ---- DDOT: fixed grid, partial sums per block, then one block adds them in order ----

#define DOT_TPB 256

__device__ __forceinline__ double warp_sum(double v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}

template <int NT> __device__ __forceinline__ double block_sum(double v) {
    __shared__ double w[NT / 32];
    v = warp_sum(v);
    if ((threadIdx.x & 31) == 0) w[threadIdx.x >> 5] = v;
    __syncthreads();
    v = threadIdx.x < NT / 32 ? w[threadIdx.x] : 0.0;
    if (threadIdx.x < 32) v = warp_sum(v);
    return v; // thread 0
}

__global__ void __launch_bounds__(DOT_TPB) k_dot_part(const ts_hpcg_xk_dot a) {
    double s = 0.0;
    for (int64_t i = (int64_t)blockIdx.x * DOT_TPB + threadIdx.x; i < a.n; i += (int64_t)gridDim.x * DOT_TPB)
        s += a.x[i] * a.y[i];
    s = block_sum<DOT_TPB>(s);
    if (threadIdx.x == 0) a.part[blockIdx.x] = s;
}

__global__ void __launch_bounds__(1024) k_dot_final(const ts_hpcg_xk_dot a, int nb) {
    double s = 0.0;
    for (int i = threadIdx.x; i < nb; i += 1024) s += a.part[i];
    s = block_sum<1024>(s);
    if (threadIdx.x == 0) a.out[0] = s;
}

extern "C" int ts_hpcg_xk_dot_cuda(void *s, void *args) {
    const ts_hpcg_xk_dot a = *(const ts_hpcg_xk_dot *)args;
    cudaStream_t st = (cudaStream_t)s;
    int64_t nb = (a.n + DOT_TPB - 1) / DOT_TPB;
    if (nb > TS_HPCG_DOT_BLOCKS) nb = TS_HPCG_DOT_BLOCKS;
    if (nb < 1) nb = 1;
    k_dot_part<<<(unsigned)nb, DOT_TPB, 0, st>>>(a);
    TS_CHECK(launched("k_dot_part"));
    k_dot_final<<<1, 1024, 0, st>>>(a, (int)nb);
    return launched("k_dot_final");
}
