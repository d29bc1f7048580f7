// ts_sgemm.cu: our own SGEMM on the FP32 FMA path (no tensor cores, no reduced precision).
//
// C = alpha op(A) op(B) + beta C, column-major, any m, n, k, leading dimensions and op combination;
// beta == 0 never reads C. Every product is an IEEE fp32 fmaf, summed in k order per element.
//
// Blocking (MAGMA's register + shared-memory blocking):
//   - a thread block computes a BM x BN tile of C, walking k in steps of BK out of shared memory;
//   - a thread owns RA x RB blocks of 4 x 4 accumulators: lane (lm = lane % 8, ln = lane / 8) has
//     rows lm*4 + {0..3} + 32 r and columns ln*4 + {0..3} + 16 r, so per k it loads RA + RB float4
//     from shared memory for 16 RA RB FFMA;
//   - shared memory holds both operands "MN-major": one line of BM (BN) values per k, padded by 4
//     floats. A quarter-warp's op(A) loads are 8 distinct float4 of one 128-byte line (no bank
//     conflict), its op(B) loads one broadcast float4. Operands stored with k contiguous (A 'T',
//     B 'N') are transposed on the way in;
//   - block order is grouped (GM tile rows at a time) so that concurrently running blocks share
//     their A and B panels in L2.
// Two main loops:
//   - sgemm_kernel (large 128x128 of 8 x 8, small 64x64): the next k-step's slices are loaded into
//     registers (float4 chunks along the contiguous dimension when the operand is 16-byte aligned
//     with ld % 4 == 0, scalar otherwise; chunks crossing an edge zero-filled) while the current one
//     multiplies, then stored into the other of two shared buffers; one barrier per k-step;
//   - sgemm_fb_kernel (big8, 256x128 of 16 x 8, for many tiles): fragments double-buffered in
//     registers, the barrier in front of each step's last k, and full slices copied by cp.async two
//     steps ahead into three shared buffers (k-major operands as 4-byte copies placed transposed);
//     slices at the edges go through registers with their checks.
// Removed variants are listed beside the shapes below; git keeps them (06827ee for the first
// cp.async variants, 368b282 for the big8 experiments).
#include <cuda_runtime.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/ts_env.h"
#include "core/ts_error.h"
#include "kernels/cuda/ts_cuda_kernels.h"
#include "kernels/ts_kernels.h"

namespace {

constexpr int SG_GROUP_M = 8; // tile rows per group of the block order (L2 reuse)
constexpr int SG_PAD = 4;     // floats of padding per shared line (keeps 16-byte alignment)

struct SgParams {
    int64_t m, n, k, lda, ldb, ldc;
    float alpha, beta;
    const float *A, *B;
    float *C;
    int grid_m, grid_n;
    int c_vec; // C 16-byte aligned with ldc % 4 == 0: 4 rows of a column stored as one float4
};

// BM x BN block tile, BK per k-step, MINB blocks per SM for the register budget. A thread holds
// RA x RB blocks of 4 x 4 accumulators (rows 32 apart, columns 16 apart): a warp's lanes are 8
// (rows) x 4 (columns), so the warp tile is 32 RA x 16 RB.
// ST shared buffers (2: sgemm_kernel; 3: sgemm_fb_kernel).
template <int BM_, int BN_, int BK_, int MINB_, int RA_ = 2, int RB_ = 2, int GM_ = SG_GROUP_M, int ST_ = 2>
struct SgShape {
    static constexpr int BM = BM_, BN = BN_, BK = BK_, MINB = MINB_, RA = RA_, RB = RB_, GM = GM_, ST = ST_;
    static constexpr int WARPS_M = BM / (32 * RA), WARPS_N = BN / (16 * RB);
    static constexpr int THREADS = 32 * WARPS_M * WARPS_N;
    static constexpr int LDA = BM + SG_PAD, LDB = BN + SG_PAD; // shared line lengths (floats)
    static constexpr size_t SMEM = ST * (size_t)(LDA + LDB) * BK * sizeof(float);
    static_assert(BM % (32 * RA) == 0 && BN % (16 * RB) == 0 && BK % 4 == 0, "tile shape");
    static_assert(SMEM <= 200 * 1024, "shared memory"); // (over 48 KB: opted in at launch)
};
using SgLarge = SgShape<128, 128, 8, 2>;   // 256 threads, 17 KB shared, 2 blocks/SM (128 registers)
using SgSmall = SgShape<64, 64, 8, 6>;      // 64 threads: many blocks for small and skinny shapes
// big8 (sgemm_fb_kernel): 256 threads with 16 x 8 each (warp tile 128 x 32, warps 2 x 4), k-steps of
// 8, three 12.3 KB stages (37 KB), 1 block/SM, blocks in groups of 16 tile rows. Measured against it
// on one H200 and removed (bench/notes/gemm-kernels.md): big16t (the same tile, 8 x 16 a thread,
// k-steps of 16, sgemm_kernel's loop; the default until 368b282), 8 x 16 a thread (0.940 in NT),
// 128 x 256 tiles, k-steps of 16, groups of 8 or 32, 16-byte copies through L1, one copy a k,
// copies through registers or two stages; earlier big, big16, wide16, big32 (after dd978dd) and
// pair16t (after 4e5825e).
using SgBig8 = SgShape<256, 128, 8, 1, 4, 2, 16, 3>;
constexpr int SG_COPY_BATCHES = 3; // big8: a step's cp.async copies issued in 3 batches, at k = 0, 2, 4

// ---- global -> registers -> shared: one operand's BK slice of R lines (R = BM or BN) ----
// The slice is R x BK of op(X): "line" x (row of op(A) / column of op(B)) and k. A chunk is 4
// consecutive elements along the dimension contiguous in memory: k when KMAJOR (A 'T', B 'N'),
// x otherwise; element i of a chunk is src[i] either way. Chunk c of the slice: KMAJOR
// x = c / (BK/4), kk = 4 (c % (BK/4)); else x = 4 (c % (R/4)), kk = c / (R/4). A thread's chunks
// c = tid + j THREADS differ only in x (KMAJOR, by DX) or only in kk (by DK).
template <int R, bool KMAJOR, int VEC, int THREADS, int BK>
struct SgLoader {
    static constexpr int CHUNKS = R * BK / 4;
    static constexpr int PER = CHUNKS / THREADS; // chunks per thread
    static constexpr int LD = R + SG_PAD;
    static constexpr int DX = KMAJOR ? THREADS / (BK / 4) : 0, DK = KMAJOR ? 0 : THREADS / (R / 4);
    static_assert(CHUNKS % THREADS == 0 && PER >= 1, "loader shape");
    static_assert(THREADS % (KMAJOR ? BK / 4 : R / 4) == 0, "chunks of a thread share x or kk");

    const float *ptr; // chunk 0 at the current k-step
    int64_t jstride;  // elements between chunks j and j + 1
    int xrem;         // lines of the matrix from chunk 0's x on (capped at 2^30)
    int x, kk;        // chunk 0 inside the slice
    float4 r[PER];

    __device__ __forceinline__ SgLoader(const float *M, int64_t ld, int64_t x0, int64_t rows, int tid) {
        const int c = tid;
        if (KMAJOR) x = c / (BK / 4), kk = 4 * (c % (BK / 4));
        else x = 4 * (c % (R / 4)), kk = c / (R / 4);
        const int64_t left = rows - x0 - x;
        xrem = (int)(left < ((int64_t)1 << 30) ? left : ((int64_t)1 << 30));
        jstride = (int64_t)(KMAJOR ? DX : DK) * ld;
        ptr = KMAJOR ? M + kk + (x0 + x) * ld : M + (x0 + x) + (int64_t)kk * ld;
    }

    // Loads the k-step whose slice has krem = min(K - k0, BK) valid k values, then advances
    // (`step`: elements from one k-step to the next, BK or BK ld).
    __device__ __forceinline__ void load(int krem, int64_t step) {
#pragma unroll
        for (int j = 0; j < PER; j++) {
            const float *src = ptr + j * jstride;
            const int xr = xrem - j * DX, kr = krem - kk - j * DK; // valid elements from the chunk on
            const bool full = KMAJOR ? (xr > 0 && kr >= 4) : (kr > 0 && xr >= 4);
            if (VEC == 4 && full) {
                r[j] = __ldg(reinterpret_cast<const float4 *>(src));
            } else {
                const int lim = KMAJOR ? (xr > 0 ? kr : 0) : (kr > 0 ? xr : 0);
                r[j].x = lim > 0 ? __ldg(src) : 0.0f;
                r[j].y = lim > 1 ? __ldg(src + 1) : 0.0f;
                r[j].z = lim > 2 ? __ldg(src + 2) : 0.0f;
                r[j].w = lim > 3 ? __ldg(src + 3) : 0.0f;
            }
        }
        ptr += step;
    }

    __device__ __forceinline__ void advance(int64_t step) { ptr += step; }

    // cp.async copies of a full slice (every element inside the matrix, VEC == 4) straight into the
    // shared slice s, without registers. x contiguous: one 16-byte copy a chunk (around L1). k
    // contiguous: 4-byte copies placed transposed, a warp's lanes along k first (lane l: k = l % BK,
    // x = l / BK + AX j), so that one instruction reads 32 / BK lines of BK consecutive floats (the
    // chunks' mapping read 16 lines and lost 10-20% in TN and TT, call 68) and its shared writes are
    // conflict-free. kbase: the slice's line 0, k 0 (origin()).
    enum : int {
        AX = THREADS / BK,                      // lines between a thread's 4-byte copies
        NCOPY = KMAJOR ? R * BK / THREADS : PER // copies a thread makes a slice
    };
    static_assert(THREADS % BK == 0, "4-byte copies' lanes");
    __device__ __forceinline__ void copy_one(float *s, const float *kbase, int64_t ld, int tid, int j) const {
        if (KMAJOR) {
            const int kq = tid % BK, xq = tid / BK;
            const unsigned d = (unsigned)__cvta_generic_to_shared(s + kq * LD + xq + AX * j);
            asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(d),
                         "l"(kbase + kq + (int64_t)(xq + AX * j) * ld));
        } else {
            const unsigned d = (unsigned)__cvta_generic_to_shared(s + (kk + j * DK) * LD + x);
            asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16;\n" ::"r"(d), "l"(ptr + j * jstride));
        }
    }
    __device__ __forceinline__ void copy_all(float *s, const float *kbase, int64_t ld, int tid) const {
#pragma unroll
        for (int j = 0; j < NCOPY; j++) copy_one(s, kbase, ld, tid, j);
    }
    // The current slice's origin (line 0, k 0) in the matrix.
    __device__ __forceinline__ const float *origin(int64_t ld) const { return ptr - kk - (int64_t)x * ld; }

    // Stores the loaded chunks into the shared slice s (line kk at s + kk * LD).
    __device__ __forceinline__ void store(float *s) const {
#pragma unroll
        for (int j = 0; j < PER; j++) {
            const int xj = x + j * DX, kj = kk + j * DK;
            if (KMAJOR) {
                s[(kj + 0) * LD + xj] = r[j].x;
                s[(kj + 1) * LD + xj] = r[j].y;
                s[(kj + 2) * LD + xj] = r[j].z;
                s[(kj + 3) * LD + xj] = r[j].w;
            } else {
                *reinterpret_cast<float4 *>(s + kj * LD + xj) = r[j];
            }
        }
    }
};

// Grouped block order: groups of G tile rows are swept column by column.
template <int G>
__device__ __forceinline__ void tile_of_block(const SgParams &p, int &bm, int &bn) {
    const int pid = blockIdx.x;
    const int per_group = G * p.grid_n;
    const int group = pid / per_group, first = group * G;
    const int rows = min(p.grid_m - first, G);
    const int in = pid - group * per_group;
    bm = first + in % rows;
    bn = in / rows;
}

// The block's tile (grouped order) and this thread's place in it, for both main loops: rows
// m0 + aoff + 32 r + {0..3} of op(A) and columns n0 + boff + 16 r + {0..3} of op(B) for block r.
template <class S>
struct SgPlace {
    int64_t m0, n0;
    int tid, aoff, boff;
    __device__ __forceinline__ explicit SgPlace(const SgParams &p) {
        int bm, bn;
        tile_of_block<S::GM>(p, bm, bn);
        m0 = (int64_t)bm * S::BM, n0 = (int64_t)bn * S::BN;
        tid = threadIdx.x;
        const int lane = tid & 31, warp = tid >> 5;
        const int wm = warp % S::WARPS_M, wn = warp / S::WARPS_M;
        aoff = wm * 32 * S::RA + (lane & 7) * 4, boff = wn * 16 * S::RB + (lane >> 3) * 4;
    }
};

__device__ __forceinline__ float combine(float acc, float alpha, float beta, const float *c) {
    return beta == 0.0f ? alpha * acc : alpha * acc + beta * *c; // beta == 0: C is never read
}

// Epilogue: acc[i][j] is row m0 + aoff + 32 (i / 4) + i % 4, column n0 + boff + 16 (j / 4) + j % 4.
template <class S>
__device__ __forceinline__ void sg_epilogue(const SgParams &p, const float (&acc)[4 * S::RA][4 * S::RB], int64_t m0,
                                            int64_t n0, int aoff, int boff) {
    constexpr int RA = S::RA, TN = 4 * S::RB;
#pragma unroll
    for (int j = 0; j < TN; j++) {
        const int64_t col = n0 + boff + 16 * (j / 4) + j % 4;
        if (col >= p.n) continue;
#pragma unroll
        for (int h = 0; h < RA; h++) {
            const int64_t row = m0 + aoff + 32 * h;
            if (row >= p.m) continue;
            float *c = p.C + row + col * p.ldc;
            const float v0 = acc[4 * h][j], v1 = acc[4 * h + 1][j], v2 = acc[4 * h + 2][j], v3 = acc[4 * h + 3][j];
            if (p.c_vec && row + 3 < p.m) {
                float4 old = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
                if (p.beta != 0.0f) old = *reinterpret_cast<const float4 *>(c);
                float4 out;
                out.x = combine(v0, p.alpha, p.beta, &old.x);
                out.y = combine(v1, p.alpha, p.beta, &old.y);
                out.z = combine(v2, p.alpha, p.beta, &old.z);
                out.w = combine(v3, p.alpha, p.beta, &old.w);
                *reinterpret_cast<float4 *>(c) = out;
            } else {
                c[0] = combine(v0, p.alpha, p.beta, c);
                if (row + 1 < p.m) c[1] = combine(v1, p.alpha, p.beta, c + 1);
                if (row + 2 < p.m) c[2] = combine(v2, p.alpha, p.beta, c + 2);
                if (row + 3 < p.m) c[3] = combine(v3, p.alpha, p.beta, c + 3);
            }
        }
    }
}

// ---- double-buffered variants: register prefetch, both operands stored MN-major ----
template <class S, bool AK, bool BKM, int VEC>
__global__ void __launch_bounds__(S::THREADS, S::MINB) sgemm_kernel(const SgParams p) {
    extern __shared__ __align__(16) float sg_smem[]; // S::SMEM bytes: A's two buffers, then B's
    constexpr int SA = S::BK * S::LDA, SB = S::BK * S::LDB;
    float *const sA = sg_smem, *const sB = sg_smem + 2 * SA;

    const SgPlace<S> pl(p);
    const int64_t m0 = pl.m0, n0 = pl.n0;
    const int tid = pl.tid, aoff = pl.aoff, boff = pl.boff;
    constexpr int RA = S::RA, RB = S::RB, TM = 4 * RA, TN = 4 * RB;

    SgLoader<S::BM, AK, VEC, S::THREADS, S::BK> la(p.A, p.lda, m0, p.m, tid);
    SgLoader<S::BN, BKM, VEC, S::THREADS, S::BK> lb(p.B, p.ldb, n0, p.n, tid);
    const int64_t ktiles = (p.k + S::BK - 1) / S::BK;

    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++) acc[i][j] = 0.0f;

    const int64_t astep = AK ? (int64_t)S::BK : S::BK * p.lda, bstep = BKM ? (int64_t)S::BK : S::BK * p.ldb;
    la.load(p.k < S::BK ? (int)p.k : S::BK, astep);
    lb.load(p.k < S::BK ? (int)p.k : S::BK, bstep);
    la.store(sA);
    lb.store(sB);
    __syncthreads();

    int buf = 0;
    for (int64_t kt = 0; kt < ktiles; kt++) {
        const bool more = kt + 1 < ktiles;
        if (more) { // in flight while this k-step multiplies
            const int64_t left = p.k - (kt + 1) * S::BK;
            const int krem = left < S::BK ? (int)left : S::BK;
            la.load(krem, astep);
            lb.load(krem, bstep);
        }
        const float *cA = sA + buf * SA, *cB = sB + buf * SB;
#pragma unroll
        for (int kk = 0; kk < S::BK; kk++) {
            float a[TM], b[TN];
#pragma unroll
            for (int r = 0; r < RA; r++)
                *reinterpret_cast<float4 *>(a + 4 * r) = *reinterpret_cast<const float4 *>(cA + kk * S::LDA + aoff + 32 * r);
#pragma unroll
            for (int r = 0; r < RB; r++)
                *reinterpret_cast<float4 *>(b + 4 * r) = *reinterpret_cast<const float4 *>(cB + kk * S::LDB + boff + 16 * r);
#pragma unroll
            for (int i = 0; i < TM; i++)
#pragma unroll
                for (int j = 0; j < TN; j++) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        // The other buffer was last read in step kt-1, before that step's barrier.
        if (more) {
            la.store(sA + (buf ^ 1) * SA);
            lb.store(sB + (buf ^ 1) * SB);
        }
        __syncthreads();
        buf ^= 1;
    }

    sg_epilogue<S>(p, acc, m0, n0, aoff, boff);
}

// ---- big8: fragments double-buffered in registers, operands copied by cp.async three stages deep ----
// One k-step (slice kt in shared buffer cur). On entry fa[0], fb[0] hold line 0 of cur; at k = kk the
// step loads line kk + 1's fragments into the other register set while line kk multiplies, so a
// fragment is read a whole k (128 FFMA) before its use. The step's one barrier sits in front of the
// last k; after it the next slice's line 0 is loaded (from nxt) while the last k multiplies.
// MODE 2 (slices kt + 1 and kt + 2 full): slice kt + 2 is copied by cp.async into nx2, in
// SG_COPY_BATCHES batches over the step's first k's; before the barrier the step waits for every
// group but that newest one, i.e. for slice kt + 1's copies (made in the previous step).
// MODE 1 (slice kt + 1 full, its copies in flight): waits for all groups.
// MODE 0 (the edges): slice kt + 1, when there is one (more), is loaded through registers with its
// edge checks at the step's top and stored into nxt before the barrier.
// Buffers: nx2 (= slice kt - 1's) was last read before step kt - 1's barrier, nxt before step kt - 2's:
// every thread has passed both, so writing them needs no other barrier.
template <class S, int MODE, class LA, class LB>
__device__ __forceinline__ void sg_fb_step(LA &la, LB &lb, bool more, int krem, int64_t astep, int64_t bstep,
                                           const float *cA, const float *cB, float *nA, float *nB, float *n2A,
                                           float *n2B, int aoff, int boff, float (&fa)[2][4 * S::RA],
                                           float (&fb)[2][4 * S::RB], float (&acc)[4 * S::RA][4 * S::RB],
                                           int64_t lda, int64_t ldb, int tid) {
    constexpr int RA = S::RA, RB = S::RB, TM = 4 * RA, TN = 4 * RB;
    constexpr int QA = MODE == 2 ? LA::NCOPY : 0, QB = MODE == 2 ? LB::NCOPY : 0, NQ = QA + QB > 0 ? QA + QB : 1;
    static_assert(S::ST == 3 && 2 * (SG_COPY_BATCHES - 1) <= S::BK - 2, "copy batches before the commit");
    if (MODE == 0 && more) {
        la.load(krem, astep);
        lb.load(krem, bstep);
    }
    const float *oA = nullptr, *oB = nullptr; // slice kt + 2's origins (MODE 2)
    if (MODE == 2) oA = la.origin(lda), oB = lb.origin(ldb);
#pragma unroll
    for (int kk = 0; kk < S::BK; kk++) {
        if (MODE == 2) { // copy q in batch q * SG_COPY_BATCHES / NQ, at k = 2 batch; committed at k = BK - 2
#pragma unroll
            for (int q = 0; q < QA + QB; q++)
                if (2 * (q * SG_COPY_BATCHES / NQ) == kk) {
                    if (q < QA) la.copy_one(n2A, oA, lda, tid, q);
                    else lb.copy_one(n2B, oB, ldb, tid, q - QA);
                }
            if (kk == S::BK - 2) {
                asm volatile("cp.async.commit_group;\n" ::);
                la.advance(astep);
                lb.advance(bstep);
            }
        }
        if (kk == S::BK - 1) {
            if (MODE == 2) asm volatile("cp.async.wait_group 1;\n" ::: "memory");
            else if (MODE == 1) asm volatile("cp.async.wait_group 0;\n" ::: "memory");
            else if (more) {
                la.store(nA);
                lb.store(nB);
            }
            __syncthreads();
        }
        const int nx = (kk + 1) & 1;
        const float *srcA = kk + 1 < S::BK ? cA + (kk + 1) * S::LDA : nA, *srcB = kk + 1 < S::BK ? cB + (kk + 1) * S::LDB : nB;
#pragma unroll
        for (int r = 0; r < RA; r++)
            *reinterpret_cast<float4 *>(&fa[nx][4 * r]) = *reinterpret_cast<const float4 *>(srcA + aoff + 32 * r);
#pragma unroll
        for (int r = 0; r < RB; r++)
            *reinterpret_cast<float4 *>(&fb[nx][4 * r]) = *reinterpret_cast<const float4 *>(srcB + boff + 16 * r);
        const int cu = kk & 1;
        // Zig-zag over each row: the column that ends one row starts the next.
#pragma unroll
        for (int i = 0; i < TM; i++)
#pragma unroll
            for (int jj = 0; jj < TN; jj++) {
                const int j = (i & 1) ? TN - 1 - jj : jj;
                acc[i][j] = fmaf(fa[cu][i], fb[cu][j], acc[i][j]);
            }
    }
}

template <class S, bool AK, bool BKM, int VEC>
__global__ void __launch_bounds__(S::THREADS, S::MINB) sgemm_fb_kernel(const SgParams p) {
    extern __shared__ __align__(16) float sg_smem[]; // S::SMEM bytes: A's three buffers, then B's
    constexpr int SA = S::BK * S::LDA, SB = S::BK * S::LDB;
    float *const sA = sg_smem, *const sB = sg_smem + 3 * SA;

    const SgPlace<S> pl(p);
    const int64_t m0 = pl.m0, n0 = pl.n0;
    const int tid = pl.tid, aoff = pl.aoff, boff = pl.boff;
    constexpr int RA = S::RA, RB = S::RB, TM = 4 * RA, TN = 4 * RB;

    SgLoader<S::BM, AK, VEC, S::THREADS, S::BK> la(p.A, p.lda, m0, p.m, tid);
    SgLoader<S::BN, BKM, VEC, S::THREADS, S::BK> lb(p.B, p.ldb, n0, p.n, tid);
    const int64_t ktiles = (p.k + S::BK - 1) / S::BK;
    // Full slices (copied by cp.async): every step's but a partial last one, in a block away from
    // the right and bottom edges with 16-byte aligned operands.
    const bool interior = VEC == 4 && m0 + S::BM <= p.m && n0 + S::BN <= p.n;
    const int64_t kfull = interior ? p.k / S::BK : 0;

    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++) acc[i][j] = 0.0f;

    const int64_t astep = AK ? (int64_t)S::BK : S::BK * p.lda, bstep = BKM ? (int64_t)S::BK : S::BK * p.ldb;
    la.load(p.k < S::BK ? (int)p.k : S::BK, astep); // slice 0 through registers, with its checks
    lb.load(p.k < S::BK ? (int)p.k : S::BK, bstep);
    la.store(sA);
    lb.store(sB);
    if (kfull >= 2) { // slice 1 copied here: from now on the copies run two slices ahead
        la.copy_all(sA + SA, la.origin(p.lda), p.lda, tid), la.advance(astep);
        lb.copy_all(sB + SB, lb.origin(p.ldb), p.ldb, tid), lb.advance(bstep);
        asm volatile("cp.async.commit_group;\n" ::);
    }
    __syncthreads();
    float fa[2][TM], fb[2][TN];
#pragma unroll
    for (int r = 0; r < RA; r++) *reinterpret_cast<float4 *>(&fa[0][4 * r]) = *reinterpret_cast<const float4 *>(sA + aoff + 32 * r);
#pragma unroll
    for (int r = 0; r < RB; r++) *reinterpret_cast<float4 *>(&fb[0][4 * r]) = *reinterpret_cast<const float4 *>(sB + boff + 16 * r);

    // Slice kt's buffer is buf, kt + d's nxt(buf, d). (Rotating three indices instead, ba813bf, led
    // ptxas to sink NN's barrier to the loop's last 32 FFMA: 0.982x cuBLAS at 8192 against 1.030, call 74.)
    int buf = 0;
    int64_t kt = 0;
    auto nxt = [](int b, int d) { return (b + d) % 3; };
    for (; kt + 2 < kfull; kt++, buf = nxt(buf, 1))
        sg_fb_step<S, 2>(la, lb, true, S::BK, astep, bstep, sA + buf * SA, sB + buf * SB, sA + nxt(buf, 1) * SA,
                         sB + nxt(buf, 1) * SB, sA + nxt(buf, 2) * SA, sB + nxt(buf, 2) * SB, aoff, boff, fa, fb, acc,
                         p.lda, p.ldb, tid);
    for (; kt + 1 < kfull; kt++, buf = nxt(buf, 1))
        sg_fb_step<S, 1>(la, lb, true, S::BK, astep, bstep, sA + buf * SA, sB + buf * SB, sA + nxt(buf, 1) * SA,
                         sB + nxt(buf, 1) * SB, nullptr, nullptr, aoff, boff, fa, fb, acc, p.lda, p.ldb, tid);
    for (; kt < ktiles; kt++, buf = nxt(buf, 1)) {
        const bool more = kt + 1 < ktiles;
        const int64_t left = p.k - (kt + 1) * S::BK;
        const int krem = left < S::BK ? (int)left : S::BK;
        sg_fb_step<S, 0>(la, lb, more, krem, astep, bstep, sA + buf * SA, sB + buf * SB, sA + nxt(buf, 1) * SA,
                         sB + nxt(buf, 1) * SB, nullptr, nullptr, aoff, boff, fa, fb, acc, p.lda, p.ldb, tid);
    }

    sg_epilogue<S>(p, acc, m0, n0, aoff, boff);
}

// C = beta C (k == 0 or alpha == 0: A and B are not read; beta == 0 writes zeros without reading C).
__global__ void sscale_kernel(int64_t m, int64_t n, float beta, float *C, int64_t ldc) {
    for (int64_t j = blockIdx.y; j < n; j += gridDim.y)
        for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < m; i += (int64_t)gridDim.x * blockDim.x)
            C[i + j * ldc] = beta == 0.0f ? 0.0f : beta * C[i + j * ldc];
}

int cuda_fail(cudaError_t e, const char *file, int line, const char *what, const char *variant) {
    (void)cudaGetLastError();
    return ts_error_set(TS_ERR_CUDA, file, line, "ts_cuda_sgemm_tessera: %s (%s): %s", what, variant,
                        cudaGetErrorString(e));
}

template <class S, bool AK, bool BKM, int VEC>
int launch(const SgParams &p0, cudaStream_t s, const char *variant) {
    void (*kernel)(const SgParams);
    if constexpr (S::ST == 3) kernel = sgemm_fb_kernel<S, AK, BKM, VEC>;
    else kernel = sgemm_kernel<S, AK, BKM, VEC>;
    SgParams p = p0;
    const int64_t gm = (p.m + S::BM - 1) / S::BM, gn = (p.n + S::BN - 1) / S::BN;
    if (gm > INT32_MAX || gn > INT32_MAX || gm * gn > INT32_MAX)
        return ts_error_set(TS_ERR_UNSUPPORTED, __FILE__, __LINE__,
                            "ts_cuda_sgemm_tessera: %lld x %lld is more than 2^31-1 tiles of %dx%d",
                            (long long)p.m, (long long)p.n, S::BM, S::BN);
    p.grid_m = (int)gm, p.grid_n = (int)gn;
    cudaError_t e = cudaSuccess;
    if (S::SMEM > 48 * 1024) // (per device, and cheap: set at every launch)
        e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)S::SMEM);
    if (e != cudaSuccess) return cuda_fail(e, __FILE__, __LINE__, "shared memory opt-in", variant);
    kernel<<<(unsigned)(gm * gn), S::THREADS, S::SMEM, s>>>(p);
    e = cudaGetLastError();
    if (e != cudaSuccess) return cuda_fail(e, __FILE__, __LINE__, "kernel launch", variant);
    return 0;
}

template <class S, int VEC>
int launch_ops(const SgParams &p, bool a_kmajor, bool b_kmajor, cudaStream_t s, const char *variant) {
    if (a_kmajor) return b_kmajor ? launch<S, true, true, VEC>(p, s, variant) : launch<S, true, false, VEC>(p, s, variant);
    return b_kmajor ? launch<S, false, true, VEC>(p, s, variant) : launch<S, false, false, VEC>(p, s, variant);
}

enum SgVariant { SG_LARGE, SG_SMALL, SG_BIG8, SG_NVARIANTS };
const char *const sg_variant_names[] = {"large", "small", "big8"};
static_assert(sizeof sg_variant_names / sizeof *sg_variant_names == SG_NVARIANTS, "variant names");

// Run-time variant choice (TESSERA_SGEMM_TILE overrides it): big8 (256x128, 16 x 8 a thread, k-steps
// of 8, three cp.async stages) when its tiles give every multiprocessor two, else small (64x64) when
// 128x128 tiles would not give every multiprocessor two blocks, else large (128x128, register
// prefetch). Measured on one H200 against cuBLAS in the same processes (bench/notes/gemm-kernels.md,
// 2026-11-27): big8 (as big8v, 368b282) 0.979-1.042x over NN/NT/TN/TT at 4096-16384 (mean 1.007),
// big16t (the default before) 0.897-0.933x (mean 0.918); large 0.781-0.894 (0.828 and 0.844, f9039af and c1ba1a1).
int choose_variant(int64_t m, int64_t n, int sms, SgVariant *v) {
    const char *force = ts_env_str("TESSERA_SGEMM_TILE");
    if (force && *force) {
        for (int i = 0; i < SG_NVARIANTS; i++)
            if (!strcmp(force, sg_variant_names[i])) return *v = (SgVariant)i, 0;
        return ts_error_set(TS_ERR_PARSE, __FILE__, __LINE__,
                            "TESSERA_SGEMM_TILE=%s: expected large, small or big8", force);
    }
    const int64_t tiles = ((m + 127) / 128) * ((n + 127) / 128), big = ((m + 255) / 256) * ((n + 127) / 128);
    *v = big >= 2 * (int64_t)sms ? SG_BIG8 : tiles < 2 * (int64_t)sms ? SG_SMALL : SG_LARGE;
    return 0;
}

bool aligned16(const void *p, int64_t ld) { return ((uintptr_t)p % 16) == 0 && ld % 4 == 0; }

} // namespace

extern "C" const char *ts_cuda_sgemm_tessera_variant(int64_t m, int64_t n, int64_t k, int sms) {
    (void)k;
    SgVariant v = SG_LARGE;
    return choose_variant(m, n, sms, &v) < 0 ? "invalid" : sg_variant_names[v];
}

extern "C" int ts_cuda_sgemm_tessera(ts_stream *st, char ta, char tb, int64_t m, int64_t n, int64_t k,
                                     float alpha, const float *A, int64_t lda, const float *B, int64_t ldb,
                                     float beta, float *C, int64_t ldc) {
    TS_CHECK(ts_gemm_check_raise("ts_cuda_sgemm_tessera", 's', ta, tb, m, n, k, lda, ldb, ldc));
    if (m == 0 || n == 0) return 0;
    const ts_device_props *dp = ts_device_props_of(ts_stream_device(st));
    if (dp->backend != TS_BACKEND_CUDA)
        TS_RAISE(TS_ERR_UNSUPPORTED, "ts_cuda_sgemm_tessera: the stream's device is not a CUDA device");
    cudaError_t e = cudaSetDevice(dp->native_id);
    if (e != cudaSuccess) return cuda_fail(e, __FILE__, __LINE__, "cudaSetDevice", "-");
    cudaStream_t s = (cudaStream_t)ts_stream_native(st);

    if (k == 0 || alpha == 0.0f) { // BLAS: A and B are not referenced
        dim3 grid((unsigned)((m + 255) / 256 < 64 ? (m + 255) / 256 : 64), (unsigned)(n < 65535 ? n : 65535));
        sscale_kernel<<<grid, 256, 0, s>>>(m, n, beta, C, ldc);
        e = cudaGetLastError();
        return e == cudaSuccess ? 0 : cuda_fail(e, __FILE__, __LINE__, "scale kernel launch", "scale");
    }

    SgParams p = {};
    p.m = m, p.n = n, p.k = k, p.lda = lda, p.ldb = ldb, p.ldc = ldc;
    p.alpha = alpha, p.beta = beta, p.A = A, p.B = B, p.C = C;
    p.c_vec = aligned16(C, ldc);
    const bool a_kmajor = !(ta == 'N' || ta == 'n'), b_kmajor = (tb == 'N' || tb == 'n');
    SgVariant v = SG_LARGE;
    TS_CHECK(choose_variant(m, n, dp->sms, &v));
    // float4 loads need both operands 16-byte aligned with ld % 4 == 0; otherwise scalar loads.
    const bool vec = aligned16(A, lda) && aligned16(B, ldb);
    switch (v) {
    case SG_LARGE:
        return vec ? launch_ops<SgLarge, 4>(p, a_kmajor, b_kmajor, s, "large")
                   : launch_ops<SgLarge, 1>(p, a_kmajor, b_kmajor, s, "large/scalar loads");
    case SG_BIG8: // without 16-byte aligned operands no copy is made: every slice goes through registers
        return vec ? launch_ops<SgBig8, 4>(p, a_kmajor, b_kmajor, s, "big8")
                   : launch_ops<SgBig8, 1>(p, a_kmajor, b_kmajor, s, "big8/scalar loads");
    default:
        return vec ? launch_ops<SgSmall, 4>(p, a_kmajor, b_kmajor, s, "small")
                   : launch_ops<SgSmall, 1>(p, a_kmajor, b_kmajor, s, "small/scalar loads");
    }
}
