// ts_dgemm_tc.cu: our own DGEMM on the FP64 tensor cores (mma.sync m16n8k8 f64, multistage cp.async pipeline;
// the dmma16 variants: mma.sync m16n8k16 f64 on sm_90, their own main loop, see "dmma16" below).
//
// C = alpha op(A) op(B) + beta C, column-major, any m, n, k, leading dimensions and op combination.
//
// Blocking (MAGMA's register + shared-memory blocking, on tensor cores):
//   - a thread block computes a BM x BN tile of C, walking k in steps of BK = 16 KS (KS = 1 or 2); the
//     A and B slices of STAGES k-steps are in flight at once (cp.async, zero-fill for out-of-range
//     elements); a stage of BK = 32 is two BK = 16 sub-stages of the layout below, one after the other;
//   - each warp computes a WM x WN sub-tile as (WM/16) x (WN/8) mma.sync.m16n8k8 f64 tiles; the
//     fragments of the next k8 half are loaded from shared memory while the current half multiplies;
//     with PF (A 'N' only) the barrier sits before the last half's mma and the next k-step's first
//     fragments load across it while that half multiplies;
//   - with CPF, beta != 0 and k <= TC_CPF_MAX_K the block's C tile is prefetched into L2 before the
//     main loop, so the epilogue's read of C hits L2 (the rank-k update's C traffic);
//   - block order is grouped (GROUP_M tile rows at a time) so that concurrently running blocks share
//     their A and B slices in L2;
//   - after the prologue, a k-step that lies inside k is copied without bounds work or zero-fill by
//     every thread whose chunks lie inside the tile (load_full); the epilogue issues all of a
//     thread's C loads before its first store;
//   - TT runs as C^T = B A on the NN maps (CT: the result stored transposed), because a K-major A
//     and an MN-major B both need register moves to form their fragments (see below).
//
// Index maps (the point of this file; tests/kernels/test_dgemm_tc_emul.c replays them on the CPU):
//   An mma only needs A's rows, B's columns and the shared k index to be paired consistently, so the
//   kernel relabels them to make every fragment load one 16-byte LDS.128 in every layout:
//   - k slot s (0..7) of a k8 half at kb holds k = kb + 2(s%4) + s/4 (slots t, t+4 -> k 2t, 2t+1);
//   - row slot r (0..15) of an m16 tile at mb holds m = mb + 2(r%8) + r/8 (slots g, g+8 -> rows 2g, 2g+1);
//   - n-tiles come in pairs (16 columns at nb); column slot q of tile 2p+j holds n = nb + 2q + j.
//   PTX fragment layouts (mma.m16n8k8 .f64, g = lane/4, t = lane%4):
//     A a0 (g, t) a1 (g+8, t) a2 (g, t+4) a3 (g+8, t+4);  B b0 (k t, n g) b1 (k t+4, n g);
//     C c0 (g, 2t) c1 (g, 2t+1) c2 (g+8, 2t) c3 (g+8, 2t+1).
//   Shared memory holds each operand either "K-major" (a line per row of op(A) / column of op(B),
//   16 k values, used when k is contiguous in memory: A with 'T', B with 'N') or "MN-major" (a line
//   per k of BM or BN values: A with 'N', B with 'T'), XOR-swizzled in 16-byte units so that the
//   fragment loads of each quarter-warp touch 8 distinct units (no bank conflicts):
//     K-major  element (x, kk) at x*16 + (kk ^ (((x >> 1) & 1) << 3))
//     MN-major element (kk, x) at kk*R + (x  ^ (((kk >> 1) & 3) << 2))     (R = BM or BN)
#include <cuda_runtime.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <type_traits>

#include "core/ts_env.h"
#include "core/ts_error.h"
#include "kernels/cuda/ts_cuda_kernels.h"
#include "kernels/ts_kernels.h"

namespace {

constexpr int TC_BK = 16;     // k per sub-stage (a stage holds KS of them)
constexpr int TC_GROUP_M = 8; // tile rows per group of the block order (L2 reuse)

// Run-time variant choice (TESSERA_TC_TILE=<name of tc_variant_names> overrides it):
//   small (64x64) when 128x64 tiles would not give every multiprocessor one block,
//   rankklpf (128x64, 2 blocks per SM; C prefetched into L2 when k <= TC_CPF_MAX_K; 8-byte fragment
//   loads for NT's B and TN's A; B fragments across the barrier where A is MN-major) otherwise: one
//   block's epilogue overlaps the other's main loop, and with the bounds-free copies it measured
//   ahead of the 128x128 shapes on squares too; the 8-byte loads measured +4-7% on NT and TN at
//   4096 and 8192 (bench/notes/gemm-kernels.md);
//   small again for HPL's rank-k shapes with k <= 512 (m, n >= 8192; on sm_90 the staged variants
//   below take them where the tiles are full), and the 128x128 shapes for
//   large NT (large32pf) and TN (large32) with m, n, k >= 12288 (choose_variant);
//   rankk for operands without 16-byte alignment.
//   dmma16 (m16n8k16, 8-byte fragment loads, sm_90) for m, n, k >= 16384 on sm_90 (choose_variant);
//   rankkldbe (two fragment sets, full tiles only, sm_90, its C tile bulk-copied into the stages
//   after the main loop) for m % 128 = n % 64 = k % 16 = 0 with k >= 1024 below dmma16's range in
//   NN, and in NT and TN up to k = 2048; rankkldb (C read in the epilogue) for the rest of that
//   range (NT and TN above 2048, TT). HPL's short updates (k < 1024, m, n >= 8192, not TT):
//   rankkldbe for full tiles with k >= 128 (NN: k >= 192); below, smalldbc (small's tile on
//   rankkldb's kernel, three blocks per SM, C copied into the stages the last k-steps free) for full
//   64 x 64 tiles; smalldb (three blocks per SM, C not staged) for TT with 256 <= k < 1024.
//   (Removed: dmma16p, dmma16's loop in persistent blocks, 0.82-0.86 of cuBLAS at 16384^2 x
//   256-1024 against the choice's 0.94-0.99, call 101; smallc, smalldb's tile at two blocks per SM
//   with C in a buffer of its own, behind rankkldbc at every k once the epilogue's reloads were
//   gone, call 115; rankkldbl, rankkldb with C prefetched into L2, 0.979 against 0.989 at 16384^2 x
//   1024 NN, call 115; rankkldbc, rankkldb with C copied into the stages the last three k-steps
//   free (CLate; its NN loop 38 instructions a step longer), behind rankkldbe or level with it
//   everywhere, call 119; rankkldbi and smalldbi, C loaded into the accumulators before the main
//   loop, 0.67-0.88 of cuBLAS, call 118; smalldbe, smalldb with CEnd, behind smalldbc and
//   rankkldbe at every k, call 119.)

struct TcParams {
    int64_t m, n, k, lda, ldb, ldc;
    double alpha, beta;
    const double *A, *B;
    double *C;
    int grid_m, grid_n;
    int c_vec; // C 16-byte aligned with ldc even: pairs of rows stored as one double2
};

// KS: BK = 16 KS per stage; CPF: L2 prefetch of C; PF: the next k-step's first fragments load
// across the barrier (1: its B fragments, 2: and its A tile 0).
template <int BM_, int BN_, int WM_, int WN_, int STAGES_, int MINB_, int KS_ = 1, bool CPF_ = false,
          int PF_ = 0, bool L64_ = false, int CST_ = 0>
struct TcShape {
    static constexpr int BM = BM_, BN = BN_, WM = WM_, WN = WN_, STAGES = STAGES_, MINB = MINB_;
    static constexpr bool L64 = L64_; // 8-byte fragment loads for a K-major A or an MN-major B
    // rankkldb's kernel: 2: C staged in the stage buffers that the last three k-steps free (CLate; 1,
    // a buffer of its own from the start, was smallc's, removed after a414fc6); 3: C bulk-copied into
    // the stage buffers after the main loop, on CLate's map (CEnd)
    static constexpr int CST = CST_;
    static constexpr int KS = KS_, BK = TC_BK * KS_, HALVES = 2 * KS_;
    static constexpr bool CPF = CPF_;
    static constexpr int PF = PF_;
    static constexpr int WARPS_M = BM / WM, WARPS_N = BN / WN;
    static constexpr int THREADS = 32 * WARPS_M * WARPS_N;
    static constexpr int MT = WM / 16, NT = WN / 8; // mma tiles per warp
    static constexpr size_t SMEM = (size_t)STAGES * (BM + BN) * BK * sizeof(double);
    static_assert(BM % WM == 0 && BN % WN == 0 && WM % 16 == 0 && WN % 16 == 0, "tile shape");
    static_assert(SMEM <= 227 * 1024 && (KS == 1 || KS == 2), "stage shape");
};
// The kept shapes, parameters named (the variants only an environment variable reached were
// removed: large, large32c, rankkc, largepf, rankkl; git keeps them, 06827ee):
// rankk: 4 warps, 96 KB shared, 2 blocks/SM; only for operands without 16-byte alignment (8-byte copies)
using ShapeRankK = TcShape</*BM*/ 128, /*BN*/ 64, /*WM*/ 64, /*WN*/ 32, /*STAGES*/ 4, /*MINB*/ 2>;
// small: 4 warps, 64 KB shared, 2-3 blocks/SM: grids too small for 128x64 tiles, HPL's rank-k shapes
using ShapeSmall = TcShape</*BM*/ 64, /*BN*/ 64, /*WM*/ 32, /*WN*/ 32, /*STAGES*/ 4, /*MINB*/ 2>;
// large32: 128x128, BK 32 (half the barriers), 192 KB: large TN
using ShapeLarge32 = TcShape</*BM*/ 128, /*BN*/ 128, /*WM*/ 64, /*WN*/ 32, /*STAGES*/ 3, /*MINB*/ 1, /*KS*/ 2>;
// rankklpf, the default: 128x64, C prefetched into L2 for short k, the K-major A (TN) and MN-major B
// (NT) fragments loaded 8 bytes at a time straight into the mma's register order (a 16-byte load
// gives (a0, a2) or b0 of two tiles, which the compiler splits with register moves: TN 590, NT 486
// SASS instructions per k-step against NN's 426; these loads are 2-way bank-conflicted by
// construction), and the next k-step's B fragments loaded across the barrier while the last half
// multiplies (A MN-major only, so NN, NT and TT-as-NN; TN runs the same shape's plain loop): the
// DMMA pipe waits for the first fragments after every barrier otherwise (short-scoreboard stalls
// 0.58 per issue against cuBLAS's 0.08 at 8192 NN).
using ShapeRankKLPf = TcShape</*BM*/ 128, /*BN*/ 64, /*WM*/ 64, /*WN*/ 32, /*STAGES*/ 4, /*MINB*/ 2, /*KS*/ 1,
                              /*CPF*/ true, /*PF*/ 1, /*L64*/ true>;
// large32pf: large32 whose next k-step's B fragments and A tile 0 load across the barrier (24
// registers; only where A is MN-major: with a K-major A even 24 more registers spill, so TN runs
// the plain loop of the same shape): large NT
using ShapeLarge32Pf = TcShape</*BM*/ 128, /*BN*/ 128, /*WM*/ 64, /*WN*/ 32, /*STAGES*/ 3, /*MINB*/ 1, /*KS*/ 2,
                               /*CPF*/ false, /*PF*/ 2>;
// rankkldb: rankklpf's tile, two fragment sets, full tiles only (dgemm_db_kernel); rankklpf's maps
// in NN and TT, conflict-free ones in TN (HalfLines) and NT (NcCols).
// No C prefetch: its registers cost the NT and TT (C^T) loops 4 and 1 local reloads a step (sm_90
// SASS) and NT 0.928 against 1.014 of cuBLAS at 8192 (call 80, 580813a, as rankkldb / rankkldbn).
using ShapeRankKLDb = TcShape</*BM*/ 128, /*BN*/ 64, /*WM*/ 64, /*WN*/ 32, /*STAGES*/ 4, /*MINB*/ 2, /*KS*/ 1,
                              /*CPF*/ false, /*PF*/ 0, /*L64*/ true>;
// smalldb: small's 64x64 tile (warps of 32x32) on rankkldb's kernel and maps, three blocks per SM
// (64 KB shared, <= 168 registers): the short rank-k updates, where a tile's fill and epilogue
// weigh most and a third block per SM covers them.
using ShapeSmallDb = TcShape</*BM*/ 64, /*BN*/ 64, /*WM*/ 32, /*WN*/ 32, /*STAGES*/ 4, /*MINB*/ 3, /*KS*/ 1,
                             /*CPF*/ false, /*PF*/ 0, /*L64*/ true>;
// smalldbc: smalldb's tile and three blocks per SM with its C tile bulk-copied into the stage buffers
// that the last k-steps free (CLate: two parts of 32 columns, k-steps ktiles - 3 and ktiles - 2).
using ShapeSmallDbC = TcShape</*BM*/ 64, /*BN*/ 64, /*WM*/ 32, /*WN*/ 32, /*STAGES*/ 4, /*MINB*/ 3, /*KS*/ 1,
                              /*CPF*/ false, /*PF*/ 0, /*L64*/ true, /*CST*/ 2>;
// rankkldbe: rankkldb's kernel (its main loop as it is) with the C tile bulk-copied into the stage
// buffers once the main loop is done (CEnd; CLate's places), read by the staged epilogue: rankkldb's
// C loads (LDG) wait ~24 us behind the co-resident block's copies at 16384^2 x 1024, and as long when
// issued before the main loop (rankkldbi, call 118); the bulk copies (the TMA's path) land in ~2 us.
using ShapeRankKLDbE = TcShape</*BM*/ 128, /*BN*/ 64, /*WM*/ 64, /*WN*/ 32, /*STAGES*/ 4, /*MINB*/ 2, /*KS*/ 1,
                               /*CPF*/ false, /*PF*/ 0, /*L64*/ true, /*CST*/ 3>;
// C prefetch only for short k: the tile's C then waits in L2 for one short main loop (264 rankk
// tiles in flight hold 17 MB of C, against 50-60 MB of L2).
constexpr int64_t TC_CPF_MAX_K = 1024;

// ---- PTX wrappers ----
__device__ __forceinline__ unsigned smem_addr(const void *p) {
    return (unsigned)__cvta_generic_to_shared(p);
}

// Copies `bytes` (0..8*VEC) of the 8*VEC bytes at src into shared memory and zero-fills the rest.
template <int VEC>
__device__ __forceinline__ void cp_async(double *dst, const double *src, int bytes) {
    if (VEC == 2)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src),
                     "r"(bytes)
                     : "memory");
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(smem_addr(dst)), "l"(src),
                     "r"(bytes)
                     : "memory");
}
// The same copy when all 8*VEC bytes exist: no source-size operand, so no zero-fill predicate.
template <int VEC>
__device__ __forceinline__ void cp_async_full(double *dst, const double *src) {
    if (VEC == 2)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_addr(dst)), "l"(src) : "memory");
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" ::"r"(smem_addr(dst)), "l"(src) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// ---- mbarrier and bulk copies (sm_90): the staged C tile ----
__device__ __forceinline__ void mbar_init(uint64_t *bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(count) : "memory");
    // the initialized barrier visible to the async proxy (the bulk copies' complete_tx)
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
__device__ __forceinline__ void mbar_arrive_expect_tx(uint64_t *bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(bytes)
                 : "memory");
}
// bytes (a multiple of 16, both addresses 16-byte aligned) from global to shared memory; completion
// counted on bar's transaction count.
__device__ __forceinline__ void bulk_copy_g2s(void *dst, const void *src, unsigned bytes, uint64_t *bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                     smem_addr(dst)),
                 "l"(src), "r"(bytes), "r"(smem_addr(bar))
                 : "memory");
}
__device__ __forceinline__ void mbar_wait(uint64_t *bar, unsigned parity) {
    unsigned done = 0;
    while (!done)
        asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done)
                     : "r"(smem_addr(bar)), "r"(parity)
                     : "memory");
}

// ---- block timeline (builds configured with TESSERA_TC_TRACE=ON only; bench/tc_trace.py) ----
// Thread 0 of each of the first TC_TRACE_BLOCKS blocks of dgemm_db_kernel records its SM, the global
// timer at entry and exit and the SM clock at entry, after the prologue's fill, at the end of the k
// loop, after the staged C tile's wait, after the epilogue's C pass (word 8) and after its stores are
// issued; the launcher writes them to $TESSERA_TC_TRACE_OUT after each launch (the last launch wins).
#ifdef TS_TC_TRACE
constexpr int TC_TRACE_BLOCKS = 1 << 16, TC_TRACE_WORDS = 9;
__device__ unsigned long long tc_trace_buf[TC_TRACE_BLOCKS * TC_TRACE_WORDS];
__device__ __forceinline__ void tc_trace(int word) {
    if (threadIdx.x != 0 || blockIdx.x >= TC_TRACE_BLOCKS) return;
    unsigned long long v;
    if (word == 0) {
        unsigned sm;
        asm volatile("mov.u32 %0, %%smid;\n" : "=r"(sm));
        v = sm;
    } else if (word == 1 || word == 7) {
        asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(v));
    } else {
        asm volatile("mov.u64 %0, %%clock64;\n" : "=l"(v)::"memory"); // (memory: loads and stores stay on their side)
    }
    tc_trace_buf[(size_t)blockIdx.x * TC_TRACE_WORDS + word] = v;
}
#define TC_TRACE(word) tc_trace(word)
#else
#define TC_TRACE(word) ((void)0)
#endif

// 4 T(j): the rotation of column j of the staged C tile, T(j) = the thread's t of the epilogue's
// column map ((j / 4) % 4, NcCols (j / 2) % 4): a quarter-warp's 16-byte read of rows 2g, 2g + 1
// of its columns then lands on chunk (2t + g) % 8 of a bank row, 8 distinct chunks.
template <bool NC>
__device__ __forceinline__ int c_rot(int j) { return 4 * (NC ? (j >> 1) & 3 : (j >> 2) & 3); }

// The late-staged C tile (CST 2: smalldbc's 64 x 64 tiles; CST 3, copied after the main loop:
// rankkldbe's 128 x 64 ones; 4 stages; C not transposed). Columns go in groups of 8 (8 x BM
// doubles); a stage's A region (BM x 16 doubles) holds two groups, its B region (BN x 16) GB = 2 BN /
// BM (128 x 64: one, 64 x 64: two), so a part is GP = 2 + GB groups. The k-step loop of iteration
// ktiles - 3 + part copies groups GP part .. GP part + GP - 1 into the stage that the previous
// k-step freed (CEnd: into the same stage, (ktiles + part) % 4, after the loop): two into its A
// region's halves, the rest into its B region (128 x 64: three parts of 24, 24 and 16 columns;
// 64 x 64: two parts of 32, the third step idle). Each column is rotated by 4 T(j) rows (c_rot; two bulk
// copies), plus 8 rows where its region starts 64 bytes past a 128-byte line (TN's HalfLines stages
// are 64 bytes longer than a multiple of 128), so that the epilogue's 16-byte reads of rows 2g,
// 2g + 1 land on chunk (g + 2t) % 8: conflict free.
// tests/kernels/test_dgemm_tc_emul.c replays it.
struct CLateMap {
    const double *a, *b; // the A and B stage regions
    int sa, sb, kq;      // their lengths (doubles), ktiles % 4
};
template <int BM, int BN>
struct CLateParts {
    static_assert((BM == 128 || BM == 64) && 2 * BN % BM == 0, "CLate: column groups of 8 x BM doubles");
    static constexpr int GB = 2 * BN / BM, GP = 2 + GB, COLS = 8 * GP; // B-region groups, groups and columns a part
    static constexpr int PARTS = (BN / 8 + GP - 1) / GP;
    static_assert(PARTS <= 3, "CLate: the last three k-steps free three stages");
};
struct CLateCol {
    const double *col; // the column's BM doubles
    int shift;         // row i is at col[(i + shift) % BM]
};
template <int BM, int BN, bool NC>
__device__ __forceinline__ CLateCol clate_col(const CLateMap &m, int j) {
    constexpr int GP = CLateParts<BM, BN>::GP;
    const int q = j >> 3, part = q / GP, slot = q - GP * part, st = (m.kq + part) & 3;
    const double *base = slot < 2 ? m.a + st * m.sa + slot * (BM * 8)
                                  : m.b + st * m.sb + (CLateParts<BM, BN>::GB > 1 ? (slot - 2) * (BM * 8) : 0);
    const int e = (slot < 2 ? st * m.sa : 4 * m.sa + st * m.sb) & 15; // the region's start past a 128-byte line
    return {base + (j & 7) * BM, c_rot<NC>(j) + e};
}
// Part `part` of the block's C tile (rows m0.., columns n0..) into the stage regions a, b (the stage
// the previous k-step freed); thread 0 sets the whole tile's byte count with part 0.
// ea, eb: the regions' starts (doubles from the start of shared memory) modulo 16.
template <int BM, int BN, bool NC>
__device__ __forceinline__ void clate_issue(const double *C, int64_t ldc, int64_t m0, int64_t n0, int part, double *a,
                                            double *b, int ea, int eb, uint64_t *bar, int tid) {
    using P = CLateParts<BM, BN>;
    if (P::PARTS < 3 && part >= P::PARTS) return; // (the last step of three copies nothing)
    const int first = P::COLS * part, cols = BN - first < P::COLS ? BN - first : P::COLS;
    if (part == 0 && tid == 0) mbar_arrive_expect_tx(bar, BM * BN * 8);
    if (tid < 2 * cols) {
        const int c = first + (tid >> 1), slot = (c >> 3) - P::GP * part;
        const int rot = (c_rot<NC>(c) + (slot < 2 ? ea : eb)) & (BM - 1);
        double *col = (slot < 2 ? a + slot * (BM * 8) : b + (P::GB > 1 ? (slot - 2) * (BM * 8) : 0)) + (c & 7) * BM;
        const double *src = C + m0 + (n0 + c) * ldc;
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); // the stage's last reads came before
        if ((tid & 1) == 0) bulk_copy_g2s(col + rot, src, (BM - rot) * 8, bar);
        else if (rot) bulk_copy_g2s(col, src + BM - rot, rot * 8, bar);
    }
}

// -x by its sign bit (an integer instruction; exact).
__device__ __forceinline__ double flip_sign(double x) {
    return __hiloint2double(__double2hiint(x) ^ (int)0x80000000, __double2loint(x));
}

// d = a b + d for one m16n8k8 tile (fragments as in the header comment).
__device__ __forceinline__ void mma_m16n8k8(double (&c)[4], const double (&a)[4], const double (&b)[2]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    // Ampere: four m8n8k4 (A (g, t), B (k t, n g), C (g, 2t..2t+1)): row half h, k half q use
    // A a[h + 2q], B b[q], C c[2h], c[2h+1].
#pragma unroll
    for (int q = 0; q < 2; q++)
#pragma unroll
        for (int h = 0; h < 2; h++)
            asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
                : "+d"(c[2 * h]), "+d"(c[2 * h + 1])
                : "d"(a[h + 2 * q]), "d"(b[q]));
#elif defined(__CUDA_ARCH__)
    __trap(); // no FP64 tensor cores before sm_80; the launcher refuses such devices
#endif
}

// ---- global -> shared: one operand's BK slice of R lines (R = BM or BN) ----
// A thread copies PASSES chunks of VEC doubles per k-step: its chunk of line `line0 + j*LPP` at
// position `inner`. K-major lines are rows of op(A) (columns of op(B)): 16 k values each;
// MN-major lines are the 16 k values: R elements each.
// With BK = 32 a K-major line's chunk at inner >= 16 goes to the second sub-stage (R x 16 further);
// MN-major lines 16..31 land there by themselves (line * R).
template <int R, bool KMAJOR, int VEC, int THREADS, int BK = TC_BK>
struct TileLoader {
    static constexpr int LINE_CHUNKS = KMAJOR ? BK / VEC : R / VEC;
    static constexpr int LPP = THREADS / LINE_CHUNKS; // lines per pass
    static constexpr int LINES = KMAJOR ? R : BK;
    static constexpr int PASSES = LINES / LPP;
    static_assert(THREADS % LINE_CHUNKS == 0 && LINES % LPP == 0 && PASSES >= 1, "loader shape");

    // A request with 0 source bytes reads nothing (its address may lie outside the matrix) and
    // zero-fills its chunk.
    const double *ptr;  // this thread's first chunk in the current k-step
    int64_t ld;
    int xlim;           // lines (K-major) or elements (MN-major) of the tile that exist (capped)
    int line0, inner;
    bool xfull;         // every chunk of this thread lies inside the tile's extent

    __device__ __forceinline__ TileLoader(const double *M, int64_t ld_, int64_t x0, int64_t rows, int tid)
        : ld(ld_), xlim((int)min(rows - x0, (int64_t)1 << 30)), line0(tid / LINE_CHUNKS),
          inner((tid % LINE_CHUNKS) * VEC) {
        ptr = KMAJOR ? M + inner + (x0 + line0) * ld : M + (x0 + inner) + (int64_t)line0 * ld;
        xfull = KMAJOR ? line0 + (PASSES - 1) * LPP < xlim : xlim - inner >= VEC;
    }

    __device__ __forceinline__ int stage_index(int line) const {
        return KMAJOR ? (inner / TC_BK) * R * TC_BK + line * TC_BK + ((inner % TC_BK) ^ (((line >> 1) & 1) << 3))
                      : line * R + (inner ^ (((line >> 1) & 3) << 2));
    }

    // load() for a k-step that lies inside k, by a thread whose chunks are all inside the tile
    // (xfull): no bounds arithmetic and no zero-fill. In rankk NN the 12 copies of a k-step took
    // ~150 SASS instructions of a 335-instruction loop body (32 DMMA); this path takes ~80.
    __device__ __forceinline__ void load_full(double *stage) {
#pragma unroll
        for (int j = 0; j < PASSES; j++)
            cp_async_full<VEC>(stage + stage_index(line0 + j * LPP), ptr + (int64_t)j * LPP * ld);
        ptr += KMAJOR ? (int64_t)BK : BK * ld;
    }

    // Issues the copies of k-step [k0, k0 + BK) into `stage` and moves on to the next k-step.
    __device__ __forceinline__ void load(double *stage, int64_t k0, int64_t k) {
#pragma unroll
        for (int j = 0; j < PASSES; j++) {
            const int line = line0 + j * LPP;
            const double *src = ptr + (int64_t)j * LPP * ld;
            int nvalid;
            if (KMAJOR) {
                int64_t kl = k - k0 - inner;
                nvalid = line < xlim ? (kl >= VEC ? VEC : (kl > 0 ? (int)kl : 0)) : 0;
            } else {
                int xl = xlim - inner;
                nvalid = k0 + line < k ? (xl >= VEC ? VEC : (xl > 0 ? xl : 0)) : 0;
            }
            cp_async<VEC>(stage + stage_index(line), src, nvalid * 8);
        }
        ptr += KMAJOR ? (int64_t)BK : BK * ld;
    }
};

// One 8-byte shared-memory load that the compiler may not merge with its neighbour into a 16-byte
// one (whose register pair would then have to be split by moves).
__device__ __forceinline__ double lds64(const double *p) {
    double v;
    asm volatile("ld.volatile.shared.f64 %0, [%1];\n" : "=d"(v) : "r"(smem_addr(p)));
    return v;
}
// A 16-byte shared-memory load of a generic pointer into shared memory: the staged C tile's reads,
// which the compiler otherwise issues as generic loads (LD.E.128) since the tile's address reaches the
// epilogue through a struct.
__device__ __forceinline__ double2 lds128(const double *p) {
    double2 v;
    asm volatile("ld.shared.v2.f64 {%0, %1}, [%2];\n" : "=d"(v.x), "=d"(v.y) : "r"(smem_addr(p)));
    return v;
}

// ---- shared -> registers: one k8 half of a warp's fragments ----
template <class S>
struct Frags {
    double a[S::MT][4];
    double b[S::NT][2];
};

// Per-thread offsets of the fragment loads inside one stage (doubles), for k halves 0 and 8.
// DBM: rankkldb's maps, which differ from rankkl's in TN (NK: HalfLines, a[e] and b[e] for k t and
// t + 4 of either half) and NT (NC: B's columns in PTX order, the two warp columns interleaved).
template <class S, bool AK, bool BKM, bool DBM = false>
struct FragOffsets {
    static constexpr bool NK = DBM && AK && BKM, NC = DBM && !AK && !BKM;
    static_assert(!NC || (S::BN == 16 * S::NT && S::WARPS_N == 2), "NcCols: two warp columns of 8-column tiles");
    int a[2], b[2];
    __device__ __forceinline__ FragOffsets(int wm, int wn, int g, int t) {
        const int sg = (g & 1) << 3; // K-major swizzle of rows 2g, 2g+1
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int kb = 8 * h;
            if (NK) { // h here is e: k t + 4e of the half; row (column) g of the 16-line block
                const int kx = (t + 4 * h) ^ (((g >> 1) & 1) << 2);
                a[h] = (wm * S::WM + g) * 8 + kx, b[h] = (wn * S::WN + g) * 8 + kx;
                continue;
            }
            a[h] = AK ? (wm * S::WM + 2 * g) * TC_BK + 2 * t + (kb ^ sg)
                      : (kb + 2 * t) * S::BM + wm * S::WM + ((2 * g) ^ (4 * t));
            // (NC: column g of tile nt at 16 nt + 8 wn + g, NcCols; k-line 2t (+1) of the half, key t)
            b[h] = BKM ? (wn * S::WN + 2 * g) * TC_BK + 2 * t + (kb ^ sg)
                       : (kb + 2 * t) * S::BN + (NC ? (8 * wn + g) ^ (4 * t) : wn * S::WN + ((2 * g) ^ (4 * t)));
        }
    }
};

// ---- HalfLines: rankkldb's stage layout for TN (both operands K-major), bank-conflict free ----
// With rankkl's maps a K-major A loaded 8 bytes at a time is 2-way conflicted: a 16-byte chunk
// holds k 2t and 2t + 1, so one load reaches only the even (or odd) 8-byte slots: 160 shared
// wavefronts a warp and k16 step against NN's 96. (Removing them left TN at 0.93x cuBLAS: its
// gap was in how its copies were issued, see dgemm_db_kernel's TN loop.)
// HalfLines keeps rankkl's row and column relabelling (so the epilogue is unchanged) and uses the
// PTX k order inside each k8 half (a0/a1 at k t, a2/a3 at k t + 4; b0 at k t, b1 at k t + 4), which
// is free in TN because neither operand is MN-major. A stage of R lines holds two regions, one
// per k8 half, of R lines x 8 k (64 bytes); region 1 starts 8 doubles past R*8 (half a bank row,
// so that a line's two halves land on different banks when copied). Line x (row of op(A) or
// column of op(B)) sits at position rho(x) = 16 (x / 16) + (x % 16) / 2 + 8 (x % 2) of its region,
// k' (0..7) at rho * 8 + (k' ^ 4 ((rho / 2) % 2)). A fragment load of lane (g, t) reads line
// 2g + c of a 16-line block (rankkl's relabel), rho = g + 8c: slot = 8 (g % 2) + ((t + 4e) ^
// 4 ((g / 2) % 2)), 16 distinct per half-warp: 2 wavefronts, the minimum. The copies (a line's
// 8 chunks per quarter-warp, 4 to each region) hit 16 distinct slots too. Costs: B by two LDS.64
// a tile instead of one LDS.128 (+8 loads per k16 step), 8 doubles of shared memory per operand
// and stage. tests/kernels/test_dgemm_tc_emul.c replays it and counts the conflicts.
template <int R>
struct HalfLines {
    static constexpr int REGION = R * 8 + 8, STAGE = REGION + R * 8;
    __device__ __forceinline__ static int index(int line, int k) { // k even or odd, 0..15
        const int rho = (line & ~15) | ((line & 15) >> 1) | ((line & 1) << 3);
        return (k >> 3) * REGION + rho * 8 + ((k & 7) ^ (((rho >> 1) & 1) << 2));
    }
};

// An 8-byte shared load at base + OFF doubles, the offset an immediate of the instruction.
template <int OFF>
__device__ __forceinline__ double lds64i(unsigned base) {
    double v;
    asm volatile("ld.volatile.shared.f64 %0, [%1+%2];\n" : "=d"(v) : "r"(base), "n"(OFF * 8));
    return v;
}
// NcCols B fragments of tiles NT0.. from one base per half and stage: written as immediates because
// the compiler otherwise hoists base-offset + 16 nt out of the k loop and gives each of the 16 loads
// of a step its own address register (+35 instructions a step).
template <class S, int NT0>
__device__ __forceinline__ void nc_load_b(Frags<S> &f, unsigned base) {
    if constexpr (NT0 < S::NT) {
        f.b[NT0][0] = lds64i<16 * NT0>(base), f.b[NT0][1] = lds64i<16 * NT0 + S::BN>(base);
        nc_load_b<S, NT0 + 1>(f, base);
    }
}

// A tiles MT0 .. MT1-1 and (WB) the B tiles; all of them by default.
template <class S, bool AK, bool BKM, int H, int MT0 = 0, int MT1 = S::MT, bool WB = true, bool DBM = false>
__device__ __forceinline__ void load_frags(Frags<S> &f, const double *sA, const double *sB,
                                           const FragOffsets<S, AK, BKM, DBM> &o) {
    if constexpr (FragOffsets<S, AK, BKM, DBM>::NK) { // HalfLines (TN): half H's region; line g + 8c of each 16-line block
        static_assert(AK && BKM && S::WM % 16 == 0 && S::WN % 16 == 0, "HalfLines: TN");
        const double *qa = sA + H * HalfLines<S::BM>::REGION, *qb = sB + H * HalfLines<S::BN>::REGION;
#pragma unroll
        for (int mt = MT0; mt < MT1; mt++) { // a0 (row 2g, k t), a1 (2g+1, t), a2 (2g, t+4), a3 (2g+1, t+4)
            const double *q = qa + 128 * mt;
            f.a[mt][0] = lds64(q + o.a[0]), f.a[mt][1] = lds64(q + 64 + o.a[0]);
            f.a[mt][2] = lds64(q + o.a[1]), f.a[mt][3] = lds64(q + 64 + o.a[1]);
        }
#pragma unroll
        for (int p = 0; p < (WB ? S::NT / 2 : 0); p++)
#pragma unroll
            for (int j = 0; j < 2; j++) { // column 2g + j of the pair: b0 k t, b1 k t+4
                const double *q = qb + 128 * p + 64 * j;
                f.b[2 * p + j][0] = lds64(q + o.b[0]), f.b[2 * p + j][1] = lds64(q + o.b[1]);
            }
        return;
    }
    const double *pa = sA + o.a[H], *pb = sB + o.b[H];
#pragma unroll
    for (int mt = MT0; mt < MT1; mt++) {
        if (AK && S::L64) { // rows 2g (a0 k 2t, a2 k 2t+1) and 2g+1 (a1, a3), each into place
            const double *q0 = pa + (16 * mt) * TC_BK, *q1 = q0 + TC_BK;
            f.a[mt][0] = lds64(q0), f.a[mt][2] = lds64(q0 + 1), f.a[mt][1] = lds64(q1), f.a[mt][3] = lds64(q1 + 1);
        } else if (AK) { // the same by two 16-byte loads
            double2 r0 = *reinterpret_cast<const double2 *>(pa + (16 * mt) * TC_BK);
            double2 r1 = *reinterpret_cast<const double2 *>(pa + (16 * mt + 1) * TC_BK);
            f.a[mt][0] = r0.x, f.a[mt][2] = r0.y, f.a[mt][1] = r1.x, f.a[mt][3] = r1.y;
        } else {  // k 2t (a0 row 2g, a1 row 2g+1) and k 2t+1 (a2, a3)
            double2 k0 = *reinterpret_cast<const double2 *>(pa + 16 * mt);
            double2 k1 = *reinterpret_cast<const double2 *>(pa + S::BM + 16 * mt);
            f.a[mt][0] = k0.x, f.a[mt][1] = k0.y, f.a[mt][2] = k1.x, f.a[mt][3] = k1.y;
        }
    }
#pragma unroll
    for (int p = 0; p < (WB && !FragOffsets<S, AK, BKM, DBM>::NC ? S::NT / 2 : 0); p++) {
        if (BKM) { // columns 2g + j of the pair: (b0 k 2t, b1 k 2t+1)
#pragma unroll
            for (int j = 0; j < 2; j++) {
                double2 c = *reinterpret_cast<const double2 *>(pb + (16 * p + j) * TC_BK);
                f.b[2 * p + j][0] = c.x, f.b[2 * p + j][1] = c.y;
            }
        } else if (S::L64) { // k 2t: columns 2g (tile 2p) and 2g+1 (tile 2p+1); k 2t+1 likewise
            const double *q0 = pb + 16 * p, *q1 = q0 + S::BN;
            f.b[2 * p][0] = lds64(q0), f.b[2 * p + 1][0] = lds64(q0 + 1), f.b[2 * p][1] = lds64(q1),
            f.b[2 * p + 1][1] = lds64(q1 + 1);
        } else {
            double2 k0 = *reinterpret_cast<const double2 *>(pb + 16 * p);
            double2 k1 = *reinterpret_cast<const double2 *>(pb + S::BN + 16 * p);
            f.b[2 * p][0] = k0.x, f.b[2 * p + 1][0] = k0.y, f.b[2 * p][1] = k1.x, f.b[2 * p + 1][1] = k1.y;
        }
    }
    if constexpr (FragOffsets<S, AK, BKM, DBM>::NC) // column g of tile nt: k 2t (b0), 2t+1 (b1)
        if (WB) nc_load_b<S, 0>(f, smem_addr(pb));
}

template <class S>
__device__ __forceinline__ void mma_frags(double (&acc)[S::MT][S::NT][4], const Frags<S> &f) {
#pragma unroll
    for (int mt = 0; mt < S::MT; mt++)
#pragma unroll
        for (int nt = 0; nt < S::NT; nt++) mma_m16n8k8(acc[mt][nt], f.a[mt], f.b[nt]);
}

// Grouped block order: GROUP_M tile rows are swept column by column, so the blocks running at
// one time share a few A row panels and B column panels.
__device__ __forceinline__ void tile_of_index(const TcParams &p, int pid, int &bm, int &bn) {
    const int per_group = TC_GROUP_M * p.grid_n;
    const int group = pid / per_group, first = group * TC_GROUP_M;
    const int rows = min(p.grid_m - first, TC_GROUP_M);
    const int in = pid - group * per_group;
    bm = first + in % rows;
    bn = in / rows;
}
__device__ __forceinline__ void tile_of_block(const TcParams &p, int &bm, int &bn) { tile_of_index(p, blockIdx.x, bm, bn); }

// Fragments of half h (0 .. HALVES-1) of the stage at cA, cB: sub-stage h/2, k8 half h%2.
template <class S, bool AK, bool BKM, int HH, bool DBM = false>
__device__ __forceinline__ void load_half(Frags<S> &f, const double *cA, const double *cB,
                                          const FragOffsets<S, AK, BKM, DBM> &o) {
    load_frags<S, AK, BKM, HH % 2, 0, S::MT, true, DBM>(f, cA + (HH / 2) * S::BM * TC_BK, cB + (HH / 2) * S::BN * TC_BK, o);
}

// L2 prefetch of the block's C tile (beta != 0): 128-byte lines, one column segment of BM rows
// (BM * 8 / 128 lines) per column, spread over the threads. CT: the kernel computes C^T, so its
// tile is BN rows (memory) by BM columns of C.
template <class S, bool CT>
__device__ __forceinline__ void prefetch_c(const TcParams &p, int64_t m0, int64_t n0, int tid) {
    constexpr int ROWS = CT ? S::BN : S::BM, COLS = CT ? S::BM : S::BN;
    constexpr int LPC = ROWS * 8 / 128; // lines per column (64 or 128 rows: 4 or 8)
    const int64_t r0 = CT ? n0 : m0, c0 = CT ? m0 : n0;
    const int64_t rrem = (CT ? p.n : p.m) - r0, cn = CT ? p.m : p.n;
    for (int idx = tid; idx < LPC * COLS; idx += S::THREADS) {
        const int col = idx / LPC, seg = idx % LPC;
        if (c0 + col >= cn || 16 * seg >= rrem) continue;
        const double *c = p.C + (r0 + 16 * seg) + (c0 + col) * p.ldc;
        asm volatile("prefetch.global.L2 [%0];\n" ::"l"(c));
    }
}

// The epilogue of a TcShape tile: C = alpha acc + beta C over the block's BM x BN tile at (m0, n0)
// (CT: the result is stored transposed).
// CSM: how the caller stages C (0 not at all, 2 on CLate's map: CLate or CEnd); cl: the tile staged
// there where clate (by value: a pointer to it put the map in local memory, reloaded 19 times in the
// epilogue of rankkldbc, CLate's 128 x 64 variant, since removed).
template <class S, bool CT, bool NC = false, int CSM = 0>
__device__ __forceinline__ void tc_epilogue(const TcParams p, double (&acc)[S::MT][S::NT][4], const int64_t m0, const int64_t n0,
                                            int wm, int wn, int g, int t, const CLateMap cl = CLateMap{},
                                            const bool clate = false) {
    // Epilogue: element (mt, nt, e) is row m0 + wm*WM + 16mt + 2g + e/2 and column
    // n0 + wn*WN + 16(nt/2) + 4t + (nt%2) + 2(e%2) of the result (NC, NcCols: n0 + 16nt + 8wn + 2t +
    // e%2); (i, j) is C[i rs + j cs] (CT: the result is C^T). Pair (mt, nt, h) holds elements h (row
    // i) and 2 + h (row i + 1) of column j.
    const int64_t rs = CT ? p.ldc : 1, cs = CT ? 1 : p.ldc;
    const bool vec = !CT && p.c_vec; // rows i, i + 1 as one double2
    auto row = [&](int mt) { return m0 + wm * S::WM + 16 * mt + 2 * g; };
    auto col = [&](int nt, int h) {
        return NC ? n0 + 16 * nt + 8 * wn + 2 * t + h : n0 + wn * S::WN + 16 * (nt / 2) + 4 * t + (nt % 2) + 2 * h;
    };
    // Two passes, every C load before the first store, so that the loads need not wait for stores
    // to addresses the compiler cannot tell apart (measured: no faster than interleaved on H200).
    if (!CT && CSM == 2 && clate) { // staged: rows il, il + 1 of column jl as one LDS.128
        // alpha = 1 (the benchmarks') and -1 (HPL's): one DFMA an element, beta o + acc, after sign
        // flips for -1 (integer instructions, exact); on sm_90 the FP64 pipe is the tensor pipe, and
        // the co-resident block's DMMA stream delays every FP64 issue of this pass. Other alpha: a
        // DMUL and a DFMA an element, beta o then alpha acc + it, interleaved with the loads (a
        // pre-pass of DMULs before the loads measured 0.9-2.6% slower at k = 256 and 512, call 125).
        const bool unit = p.alpha == 1.0 || p.alpha == -1.0;
        if (p.alpha == -1.0) {
#pragma unroll
            for (int mt = 0; mt < S::MT; mt++)
#pragma unroll
                for (int nt = 0; nt < S::NT; nt++)
#pragma unroll
                    for (int e = 0; e < 4; e++) acc[mt][nt][e] = flip_sign(acc[mt][nt][e]);
        }
        // A thread's columns in groups that share a column group of 8 (q) and a rotation: NcCols
        // (NT): column 16 nt + 8 wn + 2t + h, group nt, member h (rotation 4t); otherwise column
        // wn WN + 16 (nt / 2) + 4t + (nt % 2) + 2h, group nt / 2, member (nt % 2) + 2h (4t % 8 + 3 <
        // 8, rotation 4 ((j / 4) % 4)). Member d of a group is column d BM doubles further, so each
        // group's place is computed once and each row pair once per group (test_dgemm_tc_emul checks
        // that clate_index keeps these offsets).
        if constexpr (CSM == 2) { // (CLateParts exists for the CLate shapes only)
            auto combine = [&](auto scaled) {
                constexpr int GROUPS = NC ? S::NT : S::NT / 2, MEMBERS = NC ? 2 : 4;
                const int i0 = wm * S::WM + 2 * g;
#pragma unroll
                for (int q = 0; q < GROUPS; q++) {
                    const int j0 = NC ? 16 * q + 8 * wn + 2 * t : wn * S::WN + 16 * q + 4 * t;
                    const CLateCol c = clate_col<S::BM, S::BN, NC>(cl, j0);
#pragma unroll
                    for (int mt = 0; mt < S::MT; mt++) {
                        const double *const r = c.col + ((i0 + 16 * mt + c.shift) & (S::BM - 1));
#pragma unroll
                        for (int d = 0; d < MEMBERS; d++) {
                            const int nt = NC ? q : 2 * q + d % 2, h = NC ? d : d / 2;
                            const double2 o = lds128(r + d * S::BM);
                            double &x0 = acc[mt][nt][h], &x1 = acc[mt][nt][2 + h];
                            if constexpr (decltype(scaled)::value)
                                x0 = fma(p.alpha, x0, p.beta * o.x), x1 = fma(p.alpha, x1, p.beta * o.y);
                            else
                                x0 = fma(p.beta, o.x, x0), x1 = fma(p.beta, o.y, x1);
                        }
                    }
                }
            };
            if (unit) combine(std::false_type{});
            else combine(std::true_type{});
        }
    } else if (p.beta != 0.0) {
#pragma unroll
        for (int mt = 0; mt < S::MT; mt++)
#pragma unroll
            for (int nt = 0; nt < S::NT; nt++)
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    const int64_t i = row(mt), j = col(nt, h);
                    double o0 = 0.0, o1 = 0.0;
                    if (j < p.n && i < p.m) {
                        const double *c = p.C + i * rs + j * cs;
                        if (vec && i + 1 < p.m) {
                            const double2 o = *reinterpret_cast<const double2 *>(c);
                            o0 = o.x, o1 = o.y;
                        } else {
                            o0 = c[0];
                            if (i + 1 < p.m) o1 = c[rs];
                        }
                    }
                    acc[mt][nt][h] = p.alpha * acc[mt][nt][h] + p.beta * o0;
                    acc[mt][nt][2 + h] = p.alpha * acc[mt][nt][2 + h] + p.beta * o1;
                }
    } else { // beta == 0: C is never read
#pragma unroll
        for (int mt = 0; mt < S::MT; mt++)
#pragma unroll
            for (int nt = 0; nt < S::NT; nt++)
#pragma unroll
                for (int e = 0; e < 4; e++) acc[mt][nt][e] *= p.alpha;
    }
    TC_TRACE(8); // (trace builds: C combined, the stores next)
#pragma unroll
    for (int mt = 0; mt < S::MT; mt++)
#pragma unroll
        for (int nt = 0; nt < S::NT; nt++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const int64_t i = row(mt), j = col(nt, h);
                if (j >= p.n || i >= p.m) continue;
                double *c = p.C + i * rs + j * cs;
                if (vec && i + 1 < p.m) {
                    *reinterpret_cast<double2 *>(c) = make_double2(acc[mt][nt][h], acc[mt][nt][2 + h]);
                } else {
                    c[0] = acc[mt][nt][h];
                    if (i + 1 < p.m) c[rs] = acc[mt][nt][2 + h];
                }
            }
}

// CT: the kernel computes C^T = op(B)^T op(A)^T (the launcher swapped the operands) and element
// (i, j) of its result is C[j + i ldc]: how TT runs as the NN kernel.
template <class S, bool AK, bool BKM, int VEC, bool CT = false>
__global__ void __launch_bounds__(S::THREADS, S::MINB) dgemm_tc_kernel(const TcParams p) {
    extern __shared__ __align__(128) double smem[];
    constexpr int BK = S::BK;
    double *const sA = smem;
    double *const sB = smem + S::STAGES * S::BM * BK;

    int bm, bn;
    tile_of_block(p, bm, bn);
    const int64_t m0 = (int64_t)bm * S::BM, n0 = (int64_t)bn * S::BN;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = warp % S::WARPS_M, wn = warp / S::WARPS_M;
    const int g = lane >> 2, t = lane & 3;

    TileLoader<S::BM, AK, VEC, S::THREADS, BK> la(p.A, p.lda, m0, p.m, tid);
    TileLoader<S::BN, BKM, VEC, S::THREADS, BK> lb(p.B, p.ldb, n0, p.n, tid);
    const FragOffsets<S, AK, BKM> off(wm, wn, g, t);
    const int64_t ktiles = (p.k + BK - 1) / BK;
    const bool xfull = la.xfull && lb.xfull;

    double acc[S::MT][S::NT][4];
#pragma unroll
    for (int mt = 0; mt < S::MT; mt++)
#pragma unroll
        for (int nt = 0; nt < S::NT; nt++)
#pragma unroll
            for (int e = 0; e < 4; e++) acc[mt][nt][e] = 0.0;

    // Prologue: k-steps 0 .. STAGES-2 in flight (a group is committed even when empty, so that
    // wait_group counts stay uniform).
#pragma unroll
    for (int s = 0; s < S::STAGES - 1; s++) {
        if (s < ktiles) {
            la.load(sA + s * S::BM * BK, (int64_t)s * BK, p.k);
            lb.load(sB + s * S::BN * BK, (int64_t)s * BK, p.k);
        }
        cp_async_commit();
    }
    // Behind the first copies and before the main loop, where registers are still free (issued
    // inside it, the prefetch loop made rankk TT spill 24 bytes).
    if (S::CPF && p.beta != 0.0 && p.k <= TC_CPF_MAX_K) prefetch_c<S, CT>(p, m0, n0, tid);
    cp_async_wait<S::STAGES - 2>();
    __syncthreads();

    constexpr int PF = AK ? 0 : S::PF, PFA = PF >= 2 ? 1 : 0; // PFA: A tiles carried across
    Frags<S> f, nf; // nf (PF): the next k-step's B fragments (and A tile 0)
    if (PF) load_frags<S, AK, BKM, 0, 0, PFA, true>(nf, sA, sB, off);
    int stage = 0;
    for (int64_t kt = 0; kt < ktiles; kt++) {
        const double *cA = sA + stage * S::BM * BK, *cB = sB + stage * S::BN * BK;
        const int nstage = stage == S::STAGES - 1 ? 0 : stage + 1;
        // k-step kt + STAGES-1 goes into the stage read in step kt-1: every warp finished reading
        // it before the barrier at the end of step kt-1.
        const int64_t nk = kt + S::STAGES - 1;
        const int wstage = stage == 0 ? S::STAGES - 1 : stage - 1;
        if (nk < ktiles) {
            if (xfull && (nk + 1) * BK <= p.k) {
                la.load_full(sA + wstage * S::BM * BK);
                lb.load_full(sB + wstage * S::BN * BK);
            } else {
                la.load(sA + wstage * S::BM * BK, nk * BK, p.k);
                lb.load(sB + wstage * S::BN * BK, nk * BK, p.k);
            }
        }
        cp_async_commit();
        if (!PF) {
            load_half<S, AK, BKM, 0>(f, cA, cB, off);
            mma_frags<S>(acc, f);
            load_half<S, AK, BKM, 1>(f, cA, cB, off);
            mma_frags<S>(acc, f);
            if (S::KS == 2) { // (2 % HALVES: the index stays valid where this is dead code)
                load_half<S, AK, BKM, 2 % S::HALVES>(f, cA, cB, off);
                mma_frags<S>(acc, f);
                load_half<S, AK, BKM, 3 % S::HALVES>(f, cA, cB, off);
                mma_frags<S>(acc, f);
            }
            cp_async_wait<S::STAGES - 2>(); // k-step kt+1 has landed
            __syncthreads();
        } else {
            // Half 0's B fragments (and A tile 0) came across the previous barrier (in nf).
#pragma unroll
            for (int nt = 0; nt < S::NT; nt++) f.b[nt][0] = nf.b[nt][0], f.b[nt][1] = nf.b[nt][1];
#pragma unroll
            for (int e = 0; e < 4 * PFA; e++) f.a[0][e] = nf.a[0][e];
            load_frags<S, AK, BKM, 0, PFA, S::MT, false>(f, cA, cB, off);
            mma_frags<S>(acc, f);
            if (S::KS == 2) {
                load_half<S, AK, BKM, 1>(f, cA, cB, off);
                mma_frags<S>(acc, f);
                load_half<S, AK, BKM, 2 % S::HALVES>(f, cA, cB, off);
                mma_frags<S>(acc, f);
            }
            // The last half's fragments are in registers before the barrier: after it this stage
            // is free, and the next stage's first fragments load while the last half multiplies.
            load_half<S, AK, BKM, S::HALVES - 1>(f, cA, cB, off);
            cp_async_wait<S::STAGES - 2>(); // k-step kt+1 has landed
            __syncthreads();
            if (kt + 1 < ktiles)
                load_frags<S, AK, BKM, 0, 0, PFA, true>(nf, sA + nstage * S::BM * BK, sB + nstage * S::BN * BK, off);
            mma_frags<S>(acc, f);
        }
        stage = nstage;
    }
    cp_async_wait<0>(); // nothing may be in flight into shared memory when the block exits

    tc_epilogue<S, CT>(p, acc, m0, n0, wm, wn, g, t);
}

// ---- rankkldb: rankklpf's tile with two fragment sets, full tiles only ----
//
// Every k8 half's fragments (A 4 tiles, B 4 tiles: 48 registers) are held twice: half 1's set loads
// before half 0 multiplies, the barrier follows half 0, and the next stage's half 0 loads while half 1
// multiplies, so no shared load writes a register that a DMMA issued just before it still has to read
// (the rewrites that hold rankklpf and dmma16 at 0.88-0.95 of cuBLAS; bench/notes/gemm-kernels.md).
// A first version (85d9170) spilled at 255 registers in its copy code; this one has room because it
// runs only on tiles that lie wholly inside the matrix with k a multiple of 16: its copies carry no
// bounds, no zero-fill and no per-thread limits, a 64-bit pointer and two small offsets per operand;
// and it has no L2 prefetch of C (which cost NT and TT local reloads). The launcher sends any other
// shape to rankklpf. Measured (bench/notes/gemm-kernels.md, calls 79-82, one H100): 0.94-1.01 of
// cuBLAS at 4096 and 8192 in the four ops (rankklpf 0.88-0.96), 0.99 at 16384^2 x 1024 NN.
// Its maps are rankklpf's in NN and TT; TN takes HalfLines stages and NT NcCols B fragments, where
// rankklpf's 8-byte loads were 2-way bank-conflicted; the MN-major copies go by swizzle key
// (FullLoader). sm_90 SASS per warp and k16 step: NN / TT 156 instructions (6dfac0b's loops, byte
// for byte), NT 144 (172 before), TN 159 (167), no spills, every fragment load 2 wavefronts.
// Measured (calls 83-86): NT +3-5% (8192 1.02-1.04 of cuBLAS), TN unchanged at 0.93; TN with its
// copies spread over half 0's mma (the kernel's TN loop, 177 instructions) 0.96-0.98 (calls 88-91).
// The copies of one operand's k16 stage (full tiles: no bounds). OWN: each thread's chunks sit at
// one per-thread base plus immediates:
//   K-major (lines of 16 k, HalfLines): chunk `inner` of lines line0 + 16j (the position moves by a
//   constant from line to line);
//   MN-major (k-lines of R values, swizzle key (k >> 1) & 3): thread (kappa = tid / 32, c = tid % 32)
//   copies chunk c + 32q of k-lines 2 kappa + {0, 1, 8, 9}, the four lines whose key is kappa, so its
//   XOR is one per-thread constant. (Lines line0 + LPP j in turn, rankklpf's order and !OWN here,
//   took ~20 integer instructions a k-step more in NT: the key changes from pass to pass.) Each
//   quarter-warp writes 8 consecutive chunks of one line (128 bytes, one XOR): conflict-free; each
//   warp reads 512 contiguous bytes of one line of the matrix.
// OWN is rankkldb's own maps (TN: HalfLines for K-major lines; NT: key-grouped MN-major copies);
// !OWN: rankklpf's order and index, line by line (NN and TT, whose loops measured faster so).
template <int R, bool KMAJOR, int THREADS, bool OWN>
struct FullLoader {
    static constexpr int VEC = 2, LINE_CHUNKS = KMAJOR ? TC_BK / VEC : R / VEC;
    static constexpr int LPP = THREADS / LINE_CHUNKS, LINES = KMAJOR ? R : TC_BK, PASSES = LINES / LPP;
    static_assert(THREADS % LINE_CHUNKS == 0 && LINES % LPP == 0 && PASSES >= 1, "loader shape");
    static_assert(!OWN || !KMAJOR || LPP % 16 == 0, "HalfLines: a thread's lines 16 apart");
    static_assert(!OWN || KMAJOR || (THREADS == 128 && R % 64 == 0), "MN-major copies: 4 key groups of 32 threads");
    static constexpr int Q = R / 64; // MN-major: chunks per thread and line
    const double *ptr; // this thread's first chunk in the next k-step to copy
    int soff;          // OWN: stage index of that chunk
    int line0, inner;  // !OWN
    __device__ __forceinline__ FullLoader(const double *M, int64_t ld, int64_t x0, int tid) {
        if (!OWN) {
            line0 = tid / LINE_CHUNKS, inner = (tid % LINE_CHUNKS) * VEC;
            ptr = KMAJOR ? M + inner + (x0 + line0) * ld : M + (x0 + inner) + (int64_t)line0 * ld;
        } else if (KMAJOR) {
            const int line0 = tid / LINE_CHUNKS, inner = (tid % LINE_CHUNKS) * VEC;
            ptr = M + inner + (x0 + line0) * ld;
            soff = HalfLines<R>::index(line0, inner);
        } else {
            const int kappa = tid >> 5, c2 = (tid & 31) * VEC;
            ptr = M + (x0 + c2) + (int64_t)(2 * kappa) * ld;
            soff = 2 * kappa * R + (c2 ^ (kappa << 2));
        }
    }
    // rankklpf's index of line `line` (!OWN)
    __device__ __forceinline__ int stage_index(int line) const {
        return KMAJOR ? line * TC_BK + (inner ^ (((line >> 1) & 1) << 3)) : line * R + (inner ^ (((line >> 1) & 3) << 2));
    }
    // OWN K-major (HalfLines: line line0 + 16j is 128j doubles further): copy j of the k-step, then
    // advance() once all PASSES are issued (load() does both; TN's loop spreads the copies).
    __device__ __forceinline__ void copy(double *stage, int64_t ld, int j) const {
        static_assert(OWN && KMAJOR, "copy: HalfLines copies");
        cp_async_full<VEC>(stage + soff + 8 * j * LPP, ptr + (int64_t)(j * LPP) * ld);
    }
    __device__ __forceinline__ void advance() { ptr += TC_BK; }
    __device__ __forceinline__ void load(double *stage, int64_t ld) {
        if constexpr (!OWN) {
#pragma unroll
            for (int j = 0; j < PASSES; j++)
                cp_async_full<VEC>(stage + stage_index(line0 + j * LPP), ptr + (int64_t)(j * LPP) * ld);
            ptr += KMAJOR ? (int64_t)TC_BK : TC_BK * ld;
        } else if constexpr (KMAJOR) {
#pragma unroll
            for (int j = 0; j < PASSES; j++) copy(stage, ld, j);
            advance();
        } else {
            constexpr int L[4] = {0, 1, 8, 9};
#pragma unroll
            for (int l = 0; l < 4; l++)
#pragma unroll
                for (int q = 0; q < Q; q++)
                    cp_async_full<VEC>(stage + soff + L[l] * R + 64 * q, ptr + (int64_t)L[l] * ld + 64 * q);
            ptr += TC_BK * ld;
        }
    }
};

// Shared memory of rankkldb: TN (NK) uses HalfLines stages, 8 doubles longer per operand.
// CLate and CEnd shapes (C not transposed) add the staged C tile's mbarrier behind the stages.
template <class S, bool AK, bool BKM, bool CT = false>
struct DbStages {
    static_assert(S::CST == 0 || S::CST == 2 || S::CST == 3, "rankkldb: C not staged, staged late or at the end");
    static constexpr bool NK = AK && BKM, CL = S::CST == 2 && !CT;
    static constexpr bool CE = S::CST == 3 && !CT, CS = CL || CE; // CEnd; C staged either way (CLate's map)
    static constexpr int A = NK ? HalfLines<S::BM>::STAGE : S::BM * TC_BK, B = NK ? HalfLines<S::BN>::STAGE : S::BN * TC_BK;
    static constexpr int C0 = S::STAGES * (A + B); // the mbarrier (doubles from the start; a multiple of 2)
    static constexpr size_t SMEM = (size_t)(C0 + (CS ? 2 : 0)) * sizeof(double);
    static_assert(!CS || (S::STAGES == 4 && A >= S::BM * 16 && B >= CLateParts<S::BM, S::BN>::GB * S::BM * 8),
                  "CLate: 4 stages, room for a part's groups");
    static_assert(SMEM <= 227 * 1024 && C0 % 2 == 0, "rankkldb stages");
};

template <class S, bool AK, bool BKM, bool CT = false>
__global__ void __launch_bounds__(S::THREADS, S::MINB) dgemm_db_kernel(const TcParams p) {
    static_assert(S::KS == 1 && S::PF == 0, "rankkldb: k16 stages, no PF");
    using St = DbStages<S, AK, BKM, CT>;
    extern __shared__ __align__(128) double smem[];
    double *const sA = smem;
    double *const sB = smem + S::STAGES * St::A;
    TC_TRACE(0), TC_TRACE(1), TC_TRACE(2);
    int bm, bn;
    tile_of_block(p, bm, bn);
    const int64_t m0 = (int64_t)bm * S::BM, n0 = (int64_t)bn * S::BN;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    // CLate: the C tile goes to shared memory by bulk copies (columns of BM doubles, 16-byte aligned
    // when C is: c_vec) issued in the last three k-steps, counted on one mbarrier, and is waited for
    // only by the epilogue (it needs three k-steps to free its stages). CEnd: the same copies, into
    // the same places, issued once the main loop is done.
    uint64_t *const cbar = reinterpret_cast<uint64_t *>(smem + St::C0);
    const bool stage_c = St::CS && p.beta != 0.0 && p.c_vec && (St::CE || p.k >= 3 * TC_BK);
    if (St::CS && stage_c && tid == 0) mbar_init(cbar, 1);
    const int wm = warp % S::WARPS_M, wn = warp / S::WARPS_M;
    const int g = lane >> 2, t = lane & 3;
    // NN and TT (A MN-major, B K-major) copy as in 6dfac0b, rankklpf's order and index (their SASS is
    // that commit's; with the per-thread indices they lost 1.5-3%, calls 83-84); NT and TN by key.
    constexpr bool OWN = AK == BKM;
    FullLoader<S::BM, AK, S::THREADS, OWN> la(p.A, p.lda, m0, tid);
    FullLoader<S::BN, BKM, S::THREADS, OWN> lb(p.B, p.ldb, n0, tid);
    const FragOffsets<S, AK, BKM, true> off(wm, wn, g, t);
    const int ktiles = (int)(p.k / TC_BK);

    double acc[S::MT][S::NT][4];
#pragma unroll
    for (int mt = 0; mt < S::MT; mt++)
#pragma unroll
        for (int nt = 0; nt < S::NT; nt++)
#pragma unroll
            for (int e = 0; e < 4; e++) acc[mt][nt][e] = 0.0;

#pragma unroll
    for (int s = 0; s < S::STAGES - 1; s++) {
        if (s < ktiles) {
            la.load(sA + s * St::A, p.lda);
            lb.load(sB + s * St::B, p.ldb);
        }
        cp_async_commit();
    }
    if (S::CPF && p.beta != 0.0 && p.k <= TC_CPF_MAX_K) prefetch_c<S, CT>(p, m0, n0, tid);
    cp_async_wait<S::STAGES - 2>();
    __syncthreads(); // (also: the mbarrier is initialized)
    TC_TRACE(3);

    Frags<S> f0, f1; // the two halves' sets
    load_half<S, AK, BKM, 0, true>(f0, sA, sB, off);
    int stage = 0;
    // One k-step; ISSUE (CLate, the last three k-steps only): part kt - (ktiles - 3) of the C tile
    // into the stage the previous step freed. CLate runs those steps in a loop of their own, so that
    // the main loop carries none of the copies' registers.
    // Part `part` of the C tile into stage st's regions (CLate from the k loop, CEnd after it).
    auto c_part = [&](int part, int st) {
        clate_issue<S::BM, S::BN, FragOffsets<S, AK, BKM, true>::NC>(
            p.C, p.ldc, m0, n0, part, sA + st * St::A, sB + st * St::B, (st * St::A) & 15,
            (S::STAGES * St::A + st * St::B) & 15, cbar, tid);
    };
    auto kstep = [&](const int kt, auto issue) {
        const double *cA = sA + stage * St::A, *cB = sB + stage * St::B;
        const int nstage = stage == S::STAGES - 1 ? 0 : stage + 1;
        const int wstage = stage == 0 ? S::STAGES - 1 : stage - 1; // read in step kt-1, before its barrier
        if constexpr (decltype(issue)::value) c_part(kt - (ktiles - 3), wstage);
        // rankkldb's TN: copy i written after mma i of half 0 (A's copies, then B's), the half-1
        // fragments loaded first. The compiler then gives each copy its own source address (base
        // plus a uniform offset) and issues them spread over half 0's mma; d7c0d22's loop issued
        // all twelve within four mma, each address one 64-bit add from the previous copy's. TN
        // measured +4-5% (0.93 -> 0.96-0.98 of cuBLAS at 4096 and 8192; calls 88-91,
        // bench/notes/gemm-kernels.md). Not smalldb's: at three blocks per SM the compiler
        // recomputes the fragment offsets after the barrier then. (A form with the shared offsets
        // as immediates, 8d4f5e4, did that here too and measured no gain.)
        if constexpr (AK && BKM && S::MINB == 2) {
            using LA = decltype(la);
            using LB = decltype(lb);
            static_assert(LA::PASSES + LB::PASSES <= S::MT * S::NT, "TN: a copy per mma at most");
            const bool more = kt + S::STAGES - 1 < ktiles;
            double *const wa = sA + wstage * St::A, *const wb = sB + wstage * St::B;
            load_half<S, AK, BKM, 1, true>(f1, cA, cB, off); // half 0 came in f0 across the previous barrier
#pragma unroll
            for (int mt = 0; mt < S::MT; mt++)
#pragma unroll
                for (int nt = 0; nt < S::NT; nt++) {
                    mma_m16n8k8(acc[mt][nt], f0.a[mt], f0.b[nt]);
                    const int i = mt * S::NT + nt;
                    if (more && i < LA::PASSES) la.copy(wa, p.lda, i);
                    else if (more && i < LA::PASSES + LB::PASSES) lb.copy(wb, p.ldb, i - LA::PASSES);
                }
            if (more) la.advance(), lb.advance();
            cp_async_commit();
        } else {
            if (kt + S::STAGES - 1 < ktiles) {
                la.load(sA + wstage * St::A, p.lda);
                lb.load(sB + wstage * St::B, p.ldb);
            }
            cp_async_commit();
            load_half<S, AK, BKM, 1, true>(f1, cA, cB, off); // half 0 came in f0 across the previous barrier
            mma_frags<S>(acc, f0);
        }
        cp_async_wait<S::STAGES - 2>(); // k-step kt+1 has landed
        __syncthreads();                // and every warp holds this stage's fragments
        if (kt + 1 < ktiles)
            load_half<S, AK, BKM, 0, true>(f0, sA + nstage * St::A, sB + nstage * St::B, off);
        mma_frags<S>(acc, f1);
        stage = nstage;
    };
    if constexpr (St::CL) {
        const int kmain = stage_c ? ktiles - 3 : ktiles;
        int kt = 0;
        for (; kt < kmain; kt++) kstep(kt, std::false_type{});
        for (; kt < ktiles; kt++) kstep(kt, std::true_type{});
    } else {
        for (int kt = 0; kt < ktiles; kt++) kstep(kt, std::false_type{});
    }
    TC_TRACE(4);
    cp_async_wait<0>();
    if constexpr (St::CE) {
        if (stage_c) {
            __syncthreads(); // every warp's last fragment loads are done: all stages are free
#pragma unroll
            for (int part = 0; part < 3; part++) c_part(part, (ktiles + part) & 3); // CLate's places
        }
    }
    if (St::CS && stage_c) mbar_wait(cbar, 0);
    TC_TRACE(5);
    const CLateMap cl = {sA, sB, St::A, St::B, ktiles & 3};
    tc_epilogue<S, CT, FragOffsets<S, AK, BKM, true>::NC, St::CS ? 2 : 0>(p, acc, m0, n0, wm, wn, g, t, cl,
                                                                         St::CS && stage_c);
    TC_TRACE(6), TC_TRACE(7);
}

// ---- dmma16: one DMMA.16x8x16 per 2048 FMA, fragments by 8-byte loads into place ----
//
// A separate main loop (TESSERA_TC_TILE=dmma16) built on the sm_90 instruction
// mma.sync.m16n8k16 .f64 (PTX ISA 7.8, sm_90): half the mma issues of m16n8k8 per flop and the
// accumulators read and written once per 2048 FMA. No relabelling of rows, columns or k: the PTX
// fragment layout as it is (g = lane/4, t = lane%4):
//   A (16 x 16) a_i at (row g + 8(i%2), k t + 4(i/2)), i = 0..7;  B (16 x 8) b_i at (k t + 4i, column g);
//   C c_i at (row g + 8(i/2), column 2t + i%2).
// Every fragment double is one 8-byte shared load (LDS.64) straight into the register the mma
// reads: 48 per warp and k16 step for a 32 x 64 warp tile in every op (16 for A's two m16 tiles, 32
// for B's eight n8 tiles), no register moves. A stage holds BK = 16 k of each operand:
//   K-major (A 'T', B 'N'): a line of 16 k per row x,  element (x, k) at x*16 + (k ^ ((x & 3) << 2));
//   MN-major (A 'N', B 'T'): a line of R per k,         element (k, x) at k*R  + (x ^ ((k & 3) << 2)).
// The XOR touches bits 2-3 of the contiguous index only, so the 16-byte copy chunks (even index,
// index + 1) stay whole. Bank mapping of one fragment load (8-byte slot = double index mod 16; an
// LDS.64 of 32 lanes is two half-warps, g = 0..3 and g = 4..7, each needing 16 distinct slots):
//   MN-major: slot = (x ^ 4t) mod 16 with x mod 16 = g + 8(i%2) (A) or g + 8(nt%2) (B), so
//     bits 0-1 = g mod 4, bit 2 = g/4 ^ t%2, bit 3 = (i or nt)%2 ^ t/2: the 16 (g mod 4, t) of a
//     half-warp give 16 distinct slots;
//   K-major: slot = (t + 4j) ^ 4(x & 3) = t + 4(j ^ (g & 3)) (x & 3 = g & 3 for every tile):
//     bits 0-1 = t, bits 2-3 = j ^ (g & 3): 16 distinct slots.
// So every fragment load is 2 wavefronts, the minimum for 256 bytes (tests/kernels/
// test_dgemm_tc_emul.c replays the maps and counts). The copies (8 consecutive lanes write one
// 128-byte line segment XORed by one constant) are conflict-free per quarter-warp.
// Address arithmetic: the swizzle makes the A and B offsets lane-dependent only through a few
// per-thread bases (MN-major: 2, one per value of bit 3; K-major: 4, one per j or i), the rest are
// immediates (tile, k group); the k loop is unrolled by the stage count, so the stage offsets are
// immediates too (no stage arithmetic), and the copies' destinations are one per-thread base plus
// immediates.
// Pipeline (3 stages of cp.async.cg ... L2::128B 16-byte copies): a warp holds its A fragments of
// the step (16 doubles) and streams B one n8 tile (4 doubles) at a time; the copies of the step go
// out behind the B loads of the second n8 tile (so that the step's first DMMAs do not wait behind
// them); the last NQ tiles' B fragments are loaded before the barrier, and in the PTX their 2 NQ
// DMMAs follow it while the next stage's A fragments load in their place (tile mt's as soon as its
// last DMMA is issued). (ptxas hoists all but one of those DMMAs above the barrier whatever NQ
// is, bench/notes/gemm-kernels.md, section dmma16; NT keeps them after it by a predicate read
// from shared memory after the barrier, see dgemm_d16_kernel.) Copy bounds are precomputed once per block: a bit
// mask of the thread's chunks inside the tile (predicated copies; a chunk outside leaves stale
// data that reaches only rows or columns that are never stored) for every k-step inside k; a
// k-step that reaches past k (the last one), or a block with a half-filled MN-major chunk (odd
// extent at the edge), takes bounded zero-filling copies.

// d = a b + d for one m16n8k16 tile (sm_90 only; the launcher refuses older devices).
__device__ __forceinline__ void mma_m16n8k16(double (&c)[4], const double (&a)[8], const double (&b)[4]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7,%8,%9,%10,%11}, "
        "{%12,%13,%14,%15}, {%0,%1,%2,%3};\n"
        : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]), "d"(b[0]),
          "d"(b[1]), "d"(b[2]), "d"(b[3]));
#elif defined(__CUDA_ARCH__)
    __trap();
#endif
}

// 16-byte copy with the L2 128-byte prefetch hint, issued only where `on` (predicated; no zero-fill).
__device__ __forceinline__ void cp_async16_if(unsigned dst, const double *src, unsigned on) {
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %2, 0;\n"
                 " @p cp.async.cg.shared.global.L2::128B [%0], [%1], 16;\n}\n" ::"r"(dst),
                 "l"(src), "r"(on)
                 : "memory");
}
// The same with a source size (0, 8 or 16 bytes; the rest of the 16 zero-filled).
__device__ __forceinline__ void cp_async16_n(unsigned dst, const double *src, int bytes) {
    asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(bytes)
                 : "memory");
}

template <int BM_, int BN_, int WM_, int WN_, int STAGES_, int MINB_, int NQ_>
struct D16Shape {
    static constexpr int BM = BM_, BN = BN_, WM = WM_, WN = WN_, STAGES = STAGES_, MINB = MINB_, NQ = NQ_;
    static constexpr int BK = 16;
    static constexpr int WARPS_M = BM / WM, WARPS_N = BN / WN, THREADS = 32 * WARPS_M * WARPS_N;
    static constexpr int MT = WM / 16, NT = WN / 8;
    static constexpr int STAGE_D = (BM + BN) * BK; // doubles per stage (A then B)
    static constexpr size_t SMEM = (size_t)STAGES * STAGE_D * sizeof(double);
    static_assert(BM % WM == 0 && BN % WN == 0 && WM % 16 == 0 && WN % 16 == 0 && NQ >= 1 && NQ < NT, "shape");
    static_assert(SMEM <= 227 * 1024 && STAGES >= 2, "stages");
};
// dmma16: 128 x 128, 8 warps (4 x 2) of 32 x 64, 3 stages (96 KB), one block per SM (cuBLAS's
// 128x128x16 DMMA.16x8x16 kernel has this shape). (A 128 x 64 shape, two blocks per SM, lost to
// it: bench/notes/gemm-kernels.md.)
using ShapeD16 = D16Shape</*BM*/ 128, /*BN*/ 128, /*WM*/ 32, /*WN*/ 64, /*STAGES*/ 3, /*MINB*/ 1, /*NQ*/ 2>;

// One operand's copies: R lines (K-major: rows of op(A) / columns of op(B), 8 chunks of 2 k;
// MN-major: 16 k lines of R / 2 chunks). Thread tid copies chunk `inner` of lines line0 + j LPP.
template <int R, bool KMAJOR, int THREADS>
struct D16Loader {
    static constexpr int LINE_CHUNKS = KMAJOR ? 8 : R / 2;
    static constexpr int LPP = THREADS / LINE_CHUNKS;
    static constexpr int PASSES = (KMAJOR ? R : 16) / LPP;
    static constexpr int LINE = KMAJOR ? 16 : R;        // doubles per line
    static constexpr int PERIOD = LPP % 4 == 0 ? 1 : (LPP % 2 == 0 ? 2 : 4); // passes per swizzle key cycle
    static_assert(THREADS % LINE_CHUNKS == 0 && PASSES * LPP == (KMAJOR ? R : 16) && PASSES % PERIOD == 0,
                  "loader shape");

    const double *ptr; // this thread's first chunk of the next k-step
    int64_t ld;
    int line0, inner, xlim;
    unsigned dst[PERIOD]; // byte offsets inside the operand's part of a stage, passes 0 .. PERIOD-1
    unsigned mask;        // bit j: chunk of pass j inside the tile (for k-steps inside k)
    bool whole;           // no chunk of the block is cut by the tile's edge (MN-major: even extent)

    __device__ __forceinline__ D16Loader(const double *M, int64_t ld_, int64_t x0, int64_t rows, int tid)
        : ld(ld_), line0(tid / LINE_CHUNKS), inner((tid % LINE_CHUNKS) * 2),
          xlim((int)min(rows - x0, (int64_t)1 << 30)) {
        ptr = KMAJOR ? M + inner + (x0 + line0) * ld : M + (x0 + inner) + (int64_t)line0 * ld;
#pragma unroll
        for (int r = 0; r < PERIOD; r++) {
            const int line = line0 + r * LPP;
            dst[r] = 8u * (unsigned)(line * LINE + (inner ^ ((line & 3) << 2)));
        }
        mask = 0;
#pragma unroll
        for (int j = 0; j < PASSES; j++)
            if (KMAJOR ? line0 + j * LPP < xlim : inner + 2 <= xlim) mask |= 1u << j;
        whole = KMAJOR || xlim >= R || xlim % 2 == 0;
    }
    __device__ __forceinline__ unsigned dst_of(int j) const {
        return dst[j % PERIOD] + 8u * (unsigned)((j / PERIOD) * PERIOD * LPP * LINE);
    }
    // A k-step inside k: whole chunks, predicated by the mask.
    __device__ __forceinline__ void copy(unsigned stage) {
#pragma unroll
        for (int j = 0; j < PASSES; j++) cp_async16_if(stage + dst_of(j), ptr + (int64_t)j * LPP * ld, mask & (1u << j));
        ptr += KMAJOR ? (int64_t)16 : 16 * ld;
    }
    // k-step [k0, k0 + 16) with bounds on both sides and zero-fill.
    __device__ __forceinline__ void copy_bounded(unsigned stage, int64_t k0, int64_t k) {
#pragma unroll
        for (int j = 0; j < PASSES; j++) {
            const int line = line0 + j * LPP;
            int nv;
            if (KMAJOR) {
                const int64_t kl = k - k0 - inner;
                nv = line < xlim ? (kl >= 2 ? 2 : (kl > 0 ? (int)kl : 0)) : 0;
            } else {
                const int xl = xlim - inner;
                nv = k0 + line < k ? (xl >= 2 ? 2 : (xl > 0 ? xl : 0)) : 0;
            }
            cp_async16_n(stage + dst_of(j), ptr + (int64_t)j * LPP * ld, 8 * nv);
        }
        ptr += KMAJOR ? (int64_t)16 : 16 * ld;
    }
};

template <class S, bool AK, bool BKM, bool CT>
__global__ void __launch_bounds__(S::THREADS, S::MINB) dgemm_d16_kernel(const TcParams p) {
    extern __shared__ __align__(128) double smem[];
    constexpr int BM = S::BM, BN = S::BN, MT = S::MT, NT = S::NT, NQ = S::NQ, CP_AFTER = 1;
    constexpr unsigned STAGE_B = 8u * S::STAGE_D, B_OFF = 8u * BM * 16;

    int bm, bn;
    tile_of_block(p, bm, bn);
    const int64_t m0 = (int64_t)bm * BM, n0 = (int64_t)bn * BN;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = warp % S::WARPS_M, wn = warp / S::WARPS_M;
    const int g = lane >> 2, t = lane & 3;

    D16Loader<BM, AK, S::THREADS> la(p.A, p.lda, m0, p.m, tid);
    D16Loader<BN, BKM, S::THREADS> lb(p.B, p.ldb, n0, p.n, tid);
    const bool whole = la.whole && lb.whole;
    const unsigned sbase = smem_addr(smem);
    // NT: 1, read again after every barrier of the loop, the predicate of the DMMAs that must follow
    // the barrier (the compiler moves unconditional ones above it: the warp then reaches the barrier
    // with its DMMAs issued and waits for its next fragments with fewer queued). Measured (call 93,
    // one H200): 16384^3 NT 0.948 / 0.949 of cuBLAS against 0.925, DMMA pipe 91.4% alone; in NN, TN
    // and TT no gain (-2 to +0.3%), so they keep the unconditional form.
    constexpr bool PRED = !AK && !BKM;
    __shared__ int s_one;
    if (PRED && tid == 0) s_one = 1;

    // Fragment bases (doubles inside the operand's part of a stage; see the maps above).
    int ab[AK ? 4 : 2], bb[BKM ? 4 : 2];
#pragma unroll
    for (int q = 0; q < (AK ? 4 : 2); q++)
        ab[q] = AK ? (wm * S::WM + g) * 16 + t + 4 * (q ^ (g & 3)) : t * BM + wm * S::WM + ((g + 8 * q) ^ (4 * t));
#pragma unroll
    for (int q = 0; q < (BKM ? 4 : 2); q++)
        bb[q] = BKM ? (wn * S::WN + g) * 16 + t + 4 * (q ^ (g & 3)) : t * BN + wn * S::WN + ((g + 8 * q) ^ (4 * t));
    // a_i of tile mt and b_i of tile nt in the stage at `st` (doubles)
    auto lda_ = [&](int st, int mt, int i) -> double {
        const int j = i >> 1, h = i & 1;
        return AK ? smem[st + ab[j] + 256 * mt + 128 * h] : smem[st + ab[h] + 4 * j * BM + 16 * mt];
    };
    auto ldb_ = [&](int st, int nt, int i) -> double {
        return BKM ? smem[st + B_OFF / 8 + bb[i] + 128 * nt] : smem[st + B_OFF / 8 + bb[nt & 1] + 4 * i * BN + 16 * (nt >> 1)];
    };

    double acc[MT][NT][4];
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int nt = 0; nt < NT; nt++)
#pragma unroll
            for (int e = 0; e < 4; e++) acc[mt][nt][e] = 0.0;

    const int ktiles = (int)((p.k + 15) / 16), kfull = (int)(p.k / 16);
    // Prologue: k-steps 0 .. STAGES-2 (a group is committed even when empty: uniform wait counts).
#pragma unroll
    for (int s = 0; s < S::STAGES - 1; s++) {
        const unsigned st = sbase + s * STAGE_B;
        if (whole && s < kfull) {
            la.copy(st), lb.copy(st + B_OFF);
        } else if (s < ktiles) {
            la.copy_bounded(st, 16 * s, p.k), lb.copy_bounded(st + B_OFF, 16 * s, p.k);
        }
        cp_async_commit();
    }
    if (p.beta != 0.0 && p.k <= TC_CPF_MAX_K) prefetch_c<S, CT>(p, m0, n0, tid);
    cp_async_wait<S::STAGES - 2>();
    __syncthreads();

    double fa[MT][8], fb[NT][4];
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int i = 0; i < 8; i++) fa[mt][i] = lda_(0, mt, i);

    // The k loop is unrolled by the stage count, so that every stage offset is an immediate of
    // the shared loads and copies (no stage index arithmetic in the loop).
    for (int kt0 = 0; kt0 < ktiles; kt0 += S::STAGES) {
#pragma unroll
        for (int s = 0; s < S::STAGES; s++) {
            const int kt = kt0 + s;
            if (kt >= ktiles) break;
            // read stage s; k-step kt + STAGES-1 goes into the stage read in step kt-1 (free since
            // the last barrier); the next step reads stage s + 1.
            const unsigned ws = ((s + S::STAGES - 1) % S::STAGES) * STAGE_B;
            const int st = s * (S::STAGE_D), sn = ((s + 1) % S::STAGES) * S::STAGE_D;
            const int nk = kt + S::STAGES - 1;
#pragma unroll
            for (int nt = 0; nt < NT; nt++) {
#pragma unroll
                for (int i = 0; i < 4; i++) fb[nt][i] = ldb_(st, nt, i);
                if (nt == CP_AFTER) { // the copies behind the first B loads (the step's first DMMAs wait for those)
                    if (whole && nk < kfull) {
                        la.copy(sbase + ws), lb.copy(sbase + ws + B_OFF);
                    } else if (nk < ktiles) {
                        la.copy_bounded(sbase + ws, 16 * (int64_t)nk, p.k);
                        lb.copy_bounded(sbase + ws + B_OFF, 16 * (int64_t)nk, p.k);
                    }
                    cp_async_commit();
                }
                if (nt < NT - NQ)
#pragma unroll
                    for (int mt = 0; mt < MT; mt++) mma_m16n8k16(acc[mt][nt], fa[mt], fb[nt]);
            }
            // Every fragment of this step is in registers: the stage may be overwritten after the barrier.
            cp_async_wait<S::STAGES - 2>(); // k-step kt+1 has landed (this thread's copies)
            __syncthreads();
            int one = 1;
            if constexpr (PRED)
                asm volatile("ld.volatile.shared.u32 %0, [%1];\n" : "=r"(one) : "r"(smem_addr(&s_one)) : "memory");
#pragma unroll
            for (int mt = 0; mt < MT; mt++) {
                if (one)
#pragma unroll
                    for (int nt = NT - NQ; nt < NT; nt++) mma_m16n8k16(acc[mt][nt], fa[mt], fb[nt]);
                // tile mt's A fragments are free: the next step's load into their place (after the
                // last k-step the stage holds stale data that is never used)
#pragma unroll
                for (int i = 0; i < 8; i++) fa[mt][i] = lda_(sn, mt, i);
            }
        }
    }
    cp_async_wait<0>(); // nothing may be in flight into shared memory when the block exits

    // Epilogue: acc[mt][nt][2h + c] is row m0 + wm WM + 16 mt + g + 8h, column n0 + wn WN + 8 nt + 2t + c
    // of the kernel's result; (i, j) is C[i rs + j cs] (CT: the result is C^T, so a thread's two
    // columns j, j + 1 are adjacent in memory and go as one double2 where C allows).
    const int64_t rstr = CT ? p.ldc : 1, cstr = CT ? 1 : p.ldc;
    const bool vec = CT && p.c_vec;
    auto row = [&](int mt, int h) { return m0 + wm * S::WM + 16 * mt + g + 8 * h; };
    auto col = [&](int nt) { return n0 + wn * S::WN + 8 * nt + 2 * t; };
    if (p.beta != 0.0) {
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int nt = 0; nt < NT; nt++)
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    const int64_t i = row(mt, h), j = col(nt);
                    double o0 = 0.0, o1 = 0.0;
                    if (i < p.m && j < p.n) {
                        const double *c = p.C + i * rstr + j * cstr;
                        if (vec && j + 1 < p.n) {
                            const double2 o = *reinterpret_cast<const double2 *>(c);
                            o0 = o.x, o1 = o.y;
                        } else {
                            o0 = c[0];
                            if (j + 1 < p.n) o1 = c[cstr];
                        }
                    }
                    acc[mt][nt][2 * h] = p.alpha * acc[mt][nt][2 * h] + p.beta * o0;
                    acc[mt][nt][2 * h + 1] = p.alpha * acc[mt][nt][2 * h + 1] + p.beta * o1;
                }
    } else {
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int nt = 0; nt < NT; nt++)
#pragma unroll
                for (int e = 0; e < 4; e++) acc[mt][nt][e] *= p.alpha;
    }
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int nt = 0; nt < NT; nt++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const int64_t i = row(mt, h), j = col(nt);
                if (i >= p.m || j >= p.n) continue;
                double *c = p.C + i * rstr + j * cstr;
                if (vec && j + 1 < p.n) {
                    *reinterpret_cast<double2 *>(c) = make_double2(acc[mt][nt][2 * h], acc[mt][nt][2 * h + 1]);
                } else {
                    c[0] = acc[mt][nt][2 * h];
                    if (j + 1 < p.n) c[cstr] = acc[mt][nt][2 * h + 1];
                }
            }
}

// C = beta C (k == 0 or alpha == 0: A and B are not read; beta == 0 writes zeros without reading C).
__global__ void dscale_kernel(int64_t m, int64_t n, double beta, double *C, int64_t ldc) {
    for (int64_t j = blockIdx.y; j < n; j += gridDim.y)
        for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < m; i += (int64_t)gridDim.x * blockDim.x)
            C[i + j * ldc] = beta == 0.0 ? 0.0 : beta * C[i + j * ldc];
}

int cuda_fail(cudaError_t e, const char *file, int line, const char *what, const char *variant) {
    (void)cudaGetLastError();
    return ts_error_set(TS_ERR_CUDA, file, line, "ts_cuda_dgemm_tessera: %s (%s): %s", what, variant,
                        cudaGetErrorString(e));
}

template <class S, bool AK, bool BKM, int VEC, bool CT = false>
int launch(const TcParams &p0, cudaStream_t s, const char *variant) {
    TcParams p = p0;
    p.grid_m = (int)((p.m + S::BM - 1) / S::BM);
    p.grid_n = (int)((p.n + S::BN - 1) / S::BN);
    const int64_t blocks = (int64_t)p.grid_m * p.grid_n;
    if ((p.m + S::BM - 1) / S::BM > INT32_MAX || (p.n + S::BN - 1) / S::BN > INT32_MAX || blocks > INT32_MAX)
        return ts_error_set(TS_ERR_UNSUPPORTED, __FILE__, __LINE__,
                            "ts_cuda_dgemm_tessera: %lld x %lld is more than 2^31-1 tiles of %dx%d",
                            (long long)p.m, (long long)p.n, S::BM, S::BN);
    auto kern = dgemm_tc_kernel<S, AK, BKM, VEC, CT>;
    // Per function and device; cheap, so it is set on every call rather than cached in shared state.
    cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)S::SMEM);
    if (e != cudaSuccess) return cuda_fail(e, __FILE__, __LINE__, "cudaFuncSetAttribute", variant);
    kern<<<(unsigned)blocks, S::THREADS, S::SMEM, s>>>(p);
    e = cudaGetLastError();
    if (e != cudaSuccess) return cuda_fail(e, __FILE__, __LINE__, "kernel launch", variant);
    return 0;
}

template <class S, int VEC>
int launch_ops(const TcParams &p, bool a_kmajor, bool b_kmajor, bool ct, cudaStream_t s, const char *variant) {
    if (ct) return launch<S, false, true, VEC, true>(p, s, variant); // TT as C^T = B A (NN)
    if (a_kmajor) return launch<S, true, true, VEC>(p, s, variant);   // TN (TT never comes here)
    return b_kmajor ? launch<S, false, true, VEC>(p, s, variant) : launch<S, false, false, VEC>(p, s, variant);
}

#ifdef TS_TC_TRACE
// The trace of the launch just made into $TESSERA_TC_TRACE_OUT (if set): eight int64 (magic, blocks
// traced, BM, BN, threads, m, n, k), the variant's name in 32 bytes, then TC_TRACE_WORDS (9) words a
// block: SM, global timer at entry, SM clock at entry, after the fill, after the k loop, after C's
// wait, after the stores, global timer at exit, SM clock after the epilogue's C pass.
int tc_trace_write(cudaStream_t s, int64_t blocks, int bm, int bn, int threads, const TcParams &p, const char *variant) {
    const char *out = ts_env_str("TESSERA_TC_TRACE_OUT");
    if (!out || !*out) return 0;
    const int64_t nb = blocks < TC_TRACE_BLOCKS ? blocks : TC_TRACE_BLOCKS;
    cudaError_t e = cudaStreamSynchronize(s);
    if (e != cudaSuccess) return cuda_fail(e, __FILE__, __LINE__, "trace: cudaStreamSynchronize", variant);
    unsigned long long *h = (unsigned long long *)malloc((size_t)nb * TC_TRACE_WORDS * sizeof *h);
    if (!h) return ts_error_set(TS_ERR_NOMEM, __FILE__, __LINE__, "trace: %lld blocks", (long long)nb);
    e = cudaMemcpyFromSymbol(h, tc_trace_buf, (size_t)nb * TC_TRACE_WORDS * sizeof *h);
    if (e != cudaSuccess) return free(h), cuda_fail(e, __FILE__, __LINE__, "trace: cudaMemcpyFromSymbol", variant);
    FILE *f = fopen(out, "wb");
    if (!f) return free(h), ts_error_set(TS_ERR_IO, __FILE__, __LINE__, "trace: cannot write %s", out);
    const int64_t hdr[8] = {0x54435452, nb, bm, bn, threads, p.m, p.n, p.k};
    char name[32] = {0};
    strncpy(name, variant, sizeof name - 1);
    const bool ok = fwrite(hdr, sizeof hdr, 1, f) == 1 && fwrite(name, sizeof name, 1, f) == 1 &&
                    fwrite(h, sizeof *h, (size_t)nb * TC_TRACE_WORDS, f) == (size_t)nb * TC_TRACE_WORDS;
    free(h);
    if (fclose(f) != 0 || !ok) return ts_error_set(TS_ERR_IO, __FILE__, __LINE__, "trace: writing %s failed", out);
    return 0;
}
#endif

// One block per BM x BN tile of a kernel whose k loop counts 16-k steps in an int (dmma16; rankkldb,
// DB: its kernel for full tiles, where the rounded-up tile counts are exact).
template <class S, bool AK, bool BKM, bool CT = false, bool DB = false>
int launch_d16(const TcParams &p0, cudaStream_t s, const char *variant) {
    TcParams p = p0;
    p.grid_m = (int)((p.m + S::BM - 1) / S::BM);
    p.grid_n = (int)((p.n + S::BN - 1) / S::BN);
    const int64_t blocks = (int64_t)p.grid_m * p.grid_n;
    if ((p.m + S::BM - 1) / S::BM > INT32_MAX || (p.n + S::BN - 1) / S::BN > INT32_MAX || blocks > INT32_MAX ||
        (p.k + 15) / 16 > INT32_MAX)
        return ts_error_set(TS_ERR_UNSUPPORTED, __FILE__, __LINE__,
                            "ts_cuda_dgemm_tessera: %lld x %lld x %lld is more than 2^31-1 tiles of %dx%dx16",
                            (long long)p.m, (long long)p.n, (long long)p.k, S::BM, S::BN);
    void (*kern)(const TcParams) = nullptr;
    size_t smem = S::SMEM;
    if constexpr (DB) kern = dgemm_db_kernel<S, AK, BKM, CT>, smem = DbStages<S, AK, BKM, CT>::SMEM;
    else kern = dgemm_d16_kernel<S, AK, BKM, CT>;
    cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e != cudaSuccess) return cuda_fail(e, __FILE__, __LINE__, "cudaFuncSetAttribute", variant);
    kern<<<(unsigned)blocks, S::THREADS, smem, s>>>(p);
    e = cudaGetLastError();
    if (e != cudaSuccess) return cuda_fail(e, __FILE__, __LINE__, "kernel launch", variant);
#ifdef TS_TC_TRACE
    if (DB) TS_CHECK(tc_trace_write(s, blocks, S::BM, S::BN, S::THREADS, p, variant));
#endif
    return 0;
}

// The dmma16 shapes (DB: rankkldb's kernel) in every op (TT as C^T = B A like the others: same maps, same
// instruction count).
template <class S, bool DB = false>
int launch_d16_ops(const TcParams &p, bool a_kmajor, bool b_kmajor, bool ct, cudaStream_t s, const char *variant) {
    if (ct) return launch_d16<S, false, true, true, DB>(p, s, variant);
    if (a_kmajor) return launch_d16<S, true, true, false, DB>(p, s, variant); // TN (TT never comes here)
    return b_kmajor ? launch_d16<S, false, true, false, DB>(p, s, variant)
                    : launch_d16<S, false, false, false, DB>(p, s, variant);
}

// dgemm_db_kernel (shape S) where the kernel's m, n, k as launched are whole tiles (TT's transposed
// launch swaps m and n), shape F on the bounded kernel otherwise.
template <class S, class F>
int launch_db_or(const TcParams &p, bool a_kmajor, bool b_kmajor, bool ct, cudaStream_t s, const char *variant,
                 const char *fallback) {
    if (p.m % S::BM || p.n % S::BN || p.k % TC_BK) return launch_ops<F, 2>(p, a_kmajor, b_kmajor, ct, s, fallback);
    return launch_d16_ops<S, true>(p, a_kmajor, b_kmajor, ct, s, variant);
}

enum TcVariant {
    TC_RANKK, TC_SMALL, TC_LARGE32, TC_LARGE32PF, TC_RANKKLPF, TC_DMMA16, TC_RANKKLDB, TC_SMALLDB, TC_SMALLDBC,
    TC_RANKKLDBE, TC_NVARIANTS
};
const char *const tc_variant_names[] = {"rankk",    "small",     "large32",  "large32pf", "rankklpf",  "dmma16",
                                        "rankkldb", "smalldb",   "smalldbc",  "rankkldbe"};
static_assert(sizeof tc_variant_names / sizeof *tc_variant_names == TC_NVARIANTS, "variant names");

// a_kmajor, b_kmajor: the operands as the kernel reads them (after TT became NN); ct: TT, run as C^T.
int choose_variant(int64_t m, int64_t n, int64_t k, int sms, int cc_major, bool a_kmajor, bool b_kmajor, bool ct,
                   TcVariant *v) {
    const char *force = ts_env_str("TESSERA_TC_TILE");
    if (force && *force) {
        for (int i = 0; i < TC_NVARIANTS; i++)
            if (!strcmp(force, tc_variant_names[i])) return *v = (TcVariant)i, 0;
        return ts_error_set(TS_ERR_PARSE, __FILE__, __LINE__,
                            "TESSERA_TC_TILE=%s: expected rankk, small, large32, large32pf, rankklpf, dmma16, "
                            "rankkldb, smalldb, smalldbc or rankkldbe (smallc removed after a414fc6, rankkldbc after "
                            "a238817)",
                            force);
    }
    const int64_t tiles_rankk = ((m + 127) / 128) * ((n + 63) / 64);
    *v = tiles_rankk < sms ? TC_SMALL : TC_RANKKLPF; // (TN: PF needs an MN-major A: the plain loop)
    // Measured on an H200 with the engines interleaved (bench/NOTES.md, 2026-11-25): at 16384^2 the
    // 64x64 tiles beat rankklpf for k = 256 and 512 (0.85/0.87 of cuBLAS against 0.78/0.84); at
    // 16384^3 the 128x128 shapes beat it for NT (large32pf 0.84 against 0.79) and TN (large32 0.89
    // against 0.83), while at 8192 rankkl (rankklpf's TN loop) stays ahead (NT 0.96, TN 0.89).
    // dmma16 (mma.m16n8k16, sm_90) measured on an H100 (bench/notes/gemm-kernels.md, 064012d): at
    // 8192^3 0.995 / 1.026 / 0.988 / 0.978 of cuBLAS in NN / NT / TN / TT against the automatic
    // choice's 0.924 / 0.982 / 0.922 / 0.927; at 16384^2 x 1024 0.825 against 0.930 (its one block
    // per SM pays the fill and epilogue of every tile): taken where k and the tile count are large.
    // rankkldb (two fragment sets, full tiles only) measured on an H100 against cuBLAS in the same
    // process (calls 79-81, bench/notes/gemm-kernels.md): 8192^3 NN / NT / TN / TT 0.979 / 1.003 / 0.935 /
    // 0.988 against dmma16's 0.899 / 0.957 / 0.928 / 0.905; 12288^3 0.998 / 0.926 / 0.942 / 0.943 against
    // 0.943 / 0.906 / 0.952 / 0.900; 16384^2 x 1024-4096 NN 0.989-0.994 against dmma16's 0.86-0.91; but
    // 16384^3 0.982 / 0.848 / 0.869 / 0.963 against dmma16's 0.982 / 0.922 / 0.978 / 1.009, and
    // 16384^2 x 256 / 512 NN 0.68 / 0.83 against small's 0.85 / 0.87: dmma16 from 16384 on, small for
    // k <= 512. smalldb (small's tile on rankkldb's kernel, three blocks per SM; call 84, one H100,
    // b5fc17a): 16384^2 x 512 NN / NT / TN / TT 0.939 / 0.935 / 0.875 / 0.865 of cuBLAS against
    // 0.847 / 0.907 / 0.856 / 0.826 for rankkldb and 0.871 / 0.875 for small (call 83); at k = 256
    // 0.79 / 0.77 against small's 0.855 / 0.844, at k = 1024 0.948 / 0.918 against rankkldb's 0.970 /
    // 0.967: smalldb for 384 < k < 1024 (k = 512 measured, the ends halfway to the neighbours).
    // TN below k = 1024 (call 92, one H200, 14aed42; 16384^2 x 256 / 384 / 512 and 8192^2 x 256):
    // smalldb 0.79 / 0.86 / 0.87 / 0.79 of cuBLAS, rankklpf 0.76 / 0.81 / 0.82 / 0.76, rankkldb
    // 0.65 / 0.78 / 0.87 / 0.65, small 0.58 / 0.65 / 0.67 / 0.58: smalldb for every k < 1024 in TN.
    // smallc (removed after a414fc6; C staged in shared memory; call 95, one H200, 42aa1b9, engines
    // interleaved, two processes within 0.007): 16384^2 x 256 NN / NT / TN 0.946 / 0.951 / 0.883 of cuBLAS against
    // the choice before (small, small, smalldb) 0.848 / 0.860 / 0.776; x 512 0.938 / 0.972 / 0.885
    // against smalldb's 0.926 / 0.945 / 0.875; x 1024 0.934 / 0.948 / 0.885 against rankkldb's
    // 0.989 / 0.977 / 0.949; 8192^2 and 32768^2 x 256 NN 0.879 / 0.949 against 0.786 / 0.851: smallc
    // below k = 1024 except TT (C^T is not staged; not measured there).
    const bool full = m % 128 == 0 && n % 64 == 0 && k % 16 == 0;
    const bool full64 = m % 64 == 0 && n % 64 == 0 && k % 16 == 0;
    if (*v == TC_RANKKLPF && cc_major >= 9 && k >= 16384 && m >= 16384 && n >= 16384) *v = TC_DMMA16;
    // rankkldbe (C bulk-copied into the stages after the main loop; call 119, one H200, a238817, two
    // processes each, within 0.004): 16384^2 x 1024 NN / NT / TN 1.006 / 0.995-0.998 / 0.964 of cuBLAS
    // against the choice before (rankkldb, rankkldbc, rankkldb) 0.989 / 0.998-0.999 / 0.948; x 2048
    // 1.000-1.001 / 0.973-0.974 / 0.963-0.964 against 0.993-0.994 / 0.976 / 0.960-0.961; 8192^2 x 1024
    // NN 0.985 against 0.961; squares 4096 NN 0.989-0.990 against 0.984-0.985, 8192 NN 0.988-0.992
    // against 0.979-0.986, but 8192 TN 0.962 against rankkldb's 0.975-1.007 (NT 1.000-1.028 against
    // 1.017-1.023). So: rankkldbe in NN, and in NT and TN up to k = 2048 (rankkldbc's range before, and
    // the rank-k shapes); rankkldb above and in TT (its C^T is not staged).
    else if (*v == TC_RANKKLPF && cc_major >= 9 && full && k >= 1024)
        *v = !ct && ((!a_kmajor && b_kmajor) || k <= 2048) ? TC_RANKKLDBE : TC_RANKKLDB;
    // smalldbc and rankkldbc below k = 1024 (calls 103-105, one H200, d8d4d89 to 7151f8c: rankkldbc
    // from k = 512, smalldbc below; widedb and widec, cuBLAS's 64 x 128 rank-k tile on our kernel,
    // lost everywhere: 0.63-0.90 at k = 256, removed). Since their epilogue reads the staged C without
    // local-memory reloads (ed29370; call 115, one H200, a414fc6, each beside cuBLAS in its process):
    // 16384^2 x 256 NN / NT / TN rankkldbc 0.965 / 0.999 / 0.923 of cuBLAS against smalldbc's 0.980 /
    // 0.982 / 0.910; x 384 0.970 / 1.002 / 0.929 against 0.958 / 0.976 / 0.905 (smallc 0.936 / 0.971 /
    // 0.882); x 512 0.975 / 0.999 / 0.929 against 0.953 / 0.955 / 0.904; 8192^2 x 256 0.899 / 0.996 /
    // 0.924 against 0.922 / 0.985 / 0.919. So: rankkldbc from k = 256 in NT and TN and from k = 320 in
    // NN (halfway between 256 and 384), smalldbc below. rankkldbe (call 119, a238817; two processes
    // each, within 0.004): 16384^2 x 256 NN / NT / TN 0.975-0.977 / 1.034-1.037 / 0.972-0.976 against
    // the choice before (smalldbc, rankkldbc, rankkldbc) 0.990-0.993 / 0.993-0.994 / 0.924-0.926; x 512
    // 1.009-1.011 / 1.030-1.032 / 0.968-0.969 against 0.979 / 1.013 / 0.933; 8192^2 x 256 NN / NT
    // 0.910 / 1.024 against 0.934 / 0.989, x 512 1.032 / 1.037 against 1.001 / 1.018. NN between
    // (call 122, 6023493, two processes each): 16384^2 x 320 / 384 / 448 rankkldbe 0.988-0.989 /
    // 0.995-0.996 / 1.002 against smalldbc's 0.969 / 0.962 / 0.957-0.958. So: rankkldbe from k = 256
    // in NT and TN and from k = 288 in NN (halfway between 256 and 320), smalldbc below. Since the
    // staged combine's one DFMA for alpha = +-1 (42de547; call 129, 2310583, two processes each,
    // rankkldbe forced against smalldbc): 16384^2 x 128 NN / NT / TN 0.953-0.956 / 0.987 / 0.964-0.965
    // against 0.996-0.998 / 0.975 / 0.947-0.948; x 192 1.068-1.070 / 1.024-1.025 / 1.003-1.004 against
    // 1.065-1.066 / 1.023-1.024 / 0.995; x 240 1.022-1.023 / 1.038 / 0.987-0.988 against 1.000-1.002 /
    // 0.988-0.989 / 0.920-0.921; x 256 NN 1.018-1.021 against 0.990-0.992 (call 128); 8192^2 x 256 NN
    // 0.937-0.939 against 0.933-0.934. So: rankkldbe from k = 128 in NT and TN and from k = 192 in NN
    // (level there, 4% behind at 128), smalldbc below.
    else if (*v == TC_RANKKLPF && cc_major >= 9 && full && !ct && k < 1024 && m >= 8192 && n >= 8192 &&
             k >= (!a_kmajor && b_kmajor ? 192 : 128))
        *v = TC_RANKKLDBE;
    else if (*v == TC_RANKKLPF && cc_major >= 9 && full64 && !ct && k < 1024 && m >= 8192 && n >= 8192)
        *v = TC_SMALLDBC;
    // TT (C^T not staged; call 132, 67b3262, each variant forced beside cuBLAS): 16384^2 x 256 smalldb
    // 0.809 (smalldbc, which runs smalldb's kernel for TT, 0.809 too) against small's 0.791, x 512 0.857
    // against 0.810, x 1024 0.867 against rankkldb's 0.901; so smalldb from k = 256 (call 84's H100 loss at
    // k = 256, above, predates smalldb's epilogue fixes and was not measured again there).
    else if (*v == TC_RANKKLPF && cc_major >= 9 && full64 && k >= 256 && k < 1024 && m >= 8192 && n >= 8192)
        *v = TC_SMALLDB; // only TT comes here (rankkldbe and smalldbc take the other ops)
    else if (*v == TC_RANKKLPF && k <= 512 && m >= 8192 && n >= 8192) *v = TC_SMALL;
    else if (*v == TC_RANKKLPF && k >= 12288 && m >= 12288 && n >= 12288 && a_kmajor == b_kmajor)
        *v = a_kmajor ? TC_LARGE32 : TC_LARGE32PF; // TN (both K-major) : NT (both MN-major)
    return 0;
}

bool aligned16(const void *p, int64_t ld) { return ((uintptr_t)p % 16) == 0 && ld % 2 == 0; }

} // namespace

extern "C" const char *ts_cuda_dgemm_tessera_variant(char ta, char tb, int64_t m, int64_t n, int64_t k, int sms,
                                                     int cc_major) {
    TcVariant v = TC_RANKKLPF;
    bool a_kmajor = !(ta == 'N' || ta == 'n'), b_kmajor = (tb == 'N' || tb == 'n');
    const bool ct = a_kmajor && !b_kmajor;
    if (ct) { // TT runs as NN on (n, m)
        int64_t x = m;
        m = n, n = x, a_kmajor = false, b_kmajor = true;
    }
    return choose_variant(m, n, k, sms, cc_major, a_kmajor, b_kmajor, ct, &v) < 0 ? "invalid" : tc_variant_names[v];
}

extern "C" int ts_cuda_dgemm_tessera(ts_stream *st, char ta, char tb, int64_t m, int64_t n, int64_t k,
                                     double alpha, const double *A, int64_t lda, const double *B,
                                     int64_t ldb, double beta, double *C, int64_t ldc) {
    TS_CHECK(ts_gemm_check_raise("ts_cuda_dgemm_tessera", 'd', ta, tb, m, n, k, lda, ldb, ldc));
    if (m == 0 || n == 0) return 0;
    const ts_device_props *dp = ts_device_props_of(ts_stream_device(st));
    if (dp->backend != TS_BACKEND_CUDA)
        TS_RAISE(TS_ERR_UNSUPPORTED, "ts_cuda_dgemm_tessera: the stream's device is not a CUDA device");
    if (dp->cc_major < 8)
        TS_RAISE(TS_ERR_UNSUPPORTED, "ts_cuda_dgemm_tessera: device %d (cc %d.%d) has no FP64 tensor cores",
                 dp->ordinal, dp->cc_major, dp->cc_minor);
    cudaError_t e = cudaSetDevice(dp->native_id);
    if (e != cudaSuccess) return cuda_fail(e, __FILE__, __LINE__, "cudaSetDevice", "-");
    cudaStream_t s = (cudaStream_t)ts_stream_native(st);

    if (k == 0 || alpha == 0.0) { // BLAS: A and B are not referenced
        dim3 grid((unsigned)((m + 255) / 256 < 64 ? (m + 255) / 256 : 64), (unsigned)(n < 65535 ? n : 65535));
        dscale_kernel<<<grid, 256, 0, s>>>(m, n, beta, C, ldc);
        e = cudaGetLastError();
        return e == cudaSuccess ? 0 : cuda_fail(e, __FILE__, __LINE__, "scale kernel launch", "scale");
    }

    bool a_kmajor = !(ta == 'N' || ta == 'n'), b_kmajor = (tb == 'N' || tb == 'n');
    // TT runs as C^T = B A, an NN product whose result is stored transposed: a K-major A operand
    // costs register moves for every fragment (its LDS.128 pairs are (a0, a2) and (a1, a3), the
    // mma wants a0..a3 in order), and so does an MN-major B (the TT kernel itself lost, removed).
    const bool ct = a_kmajor && !b_kmajor;
    if (ct) {
        const double *T = A;
        A = B, B = T;
        int64_t x = m;
        m = n, n = x, x = lda, lda = ldb, ldb = x;
        a_kmajor = false, b_kmajor = true;
    }
    TcParams p = {};
    p.m = m, p.n = n, p.k = k, p.lda = lda, p.ldb = ldb, p.ldc = ldc;
    p.alpha = alpha, p.beta = beta, p.A = A, p.B = B, p.C = C;
    p.c_vec = aligned16(C, ldc);
    // 16-byte copies need 16-byte aligned chunks: both operands aligned with even leading dimensions.
    if (!aligned16(A, lda) || !aligned16(B, ldb))
        return launch_ops<ShapeRankK, 1>(p, a_kmajor, b_kmajor, ct, s, "rankk/8-byte copies");
    TcVariant v = TC_RANKKLPF;
    TS_CHECK(choose_variant(m, n, k, dp->sms, dp->cc_major, a_kmajor, b_kmajor, ct, &v));
    if (v == TC_DMMA16 && dp->cc_major < 9)
        TS_RAISE(TS_ERR_UNSUPPORTED, "ts_cuda_dgemm_tessera: %s needs mma.m16n8k16 .f64 (sm_90); device %d is cc %d.%d",
                 tc_variant_names[v], dp->ordinal, dp->cc_major, dp->cc_minor);
    switch (v) {
    case TC_DMMA16: return launch_d16_ops<ShapeD16>(p, a_kmajor, b_kmajor, ct, s, "dmma16");
    case TC_RANKK: return launch_ops<ShapeRankK, 2>(p, a_kmajor, b_kmajor, ct, s, "rankk");
    case TC_LARGE32: return launch_ops<ShapeLarge32, 2>(p, a_kmajor, b_kmajor, ct, s, "large32");
    case TC_LARGE32PF: return launch_ops<ShapeLarge32Pf, 2>(p, a_kmajor, b_kmajor, ct, s, "large32pf");
    case TC_RANKKLPF: return launch_ops<ShapeRankKLPf, 2>(p, a_kmajor, b_kmajor, ct, s, "rankklpf");
    case TC_RANKKLDB: // full tiles only; anything else runs rankklpf
        return launch_db_or<ShapeRankKLDb, ShapeRankKLPf>(p, a_kmajor, b_kmajor, ct, s, "rankkldb", "rankklpf (for rankkldb)");
    case TC_SMALLDB: // full 64 x 64 tiles only; anything else runs small
        return launch_db_or<ShapeSmallDb, ShapeSmall>(p, a_kmajor, b_kmajor, ct, s, "smalldb", "small (for smalldb)");
    case TC_SMALLDBC: // full 64 x 64 tiles only; anything else runs small
        return launch_db_or<ShapeSmallDbC, ShapeSmall>(p, a_kmajor, b_kmajor, ct, s, "smalldbc", "small (for smalldbc)");
    case TC_RANKKLDBE: // full tiles only; anything else runs rankklpf
        return launch_db_or<ShapeRankKLDbE, ShapeRankKLPf>(p, a_kmajor, b_kmajor, ct, s, "rankkldbe", "rankklpf (for rankkldbe)");
    default: return launch_ops<ShapeSmall, 2>(p, a_kmajor, b_kmajor, ct, s, "small");
    }
}
