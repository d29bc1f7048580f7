// test_dgemm_tc_emul.c: CPU replay of the tensor-core DGEMM's index maps (ts_dgemm_tc.cu) checked against a naive GEMM, plus bank-conflict checks.
//
// The kernel relabels rows, columns and k inside each mma tile so that every fragment load is one
// LDS.128 (see the header of src/kernels/cuda/ts_dgemm_tc.cu). A mistake there gives wrong
// numbers only on a GPU; this test replays, thread by thread and in the kernel's order, the same
// index arithmetic (block order, cp.async chunks with zero-fill, XOR swizzles, fragment offsets,
// epilogue) and feeds the fragments to an mma defined straight from the PTX ISA fragment tables
// (m16n8k8 .f64, and the m8n8k4 .f64 decomposition used below sm_90). It also checks that
//   - each k-step writes every shared-memory slot of its stage exactly once;
//   - the fragment loads (16 bytes per lane) are bank-conflict free per quarter-warp, and so are
//     the cp.async writes (per quarter-warp for 16-byte, per half-warp for 8-byte copies).
// Shapes with BK = 32 (KS = 2) hold a stage as two BK = 16 sub-stages; the replay covers their
// loader (K-major chunks past k 16 go to the second sub-stage) and the four k8 halves per step.
// rankkldb's own maps are replayed too: TN in HalfLines stages, NT's B fragments and C columns in
// NcCols order (both with 8-byte loads that must be conflict-free), and its MN-major copies in the
// key-grouped thread order of FullLoader.
// The C prefetch of rankklpf (L2 hints) is replayed for coverage of the tile. The *pf
// variants change only the order of the fragment loads (the same maps, split across the barrier).
// Also replayed: the unbounded copies of load_full (each must equal the bounded copy), and TT run
// as C^T = B A on the NN maps with the result stored transposed (the launcher's CT path).
// The formulas below must stay identical to the kernel's; change both together.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <cmocka.h>

#include "kern_test_util.h"

#define TC_BK 16
#define TC_GROUP_M 8

typedef struct {
    int BM, BN, WM, WN, STAGES, KS, cpf; // KS: BK = 16 KS; cpf: C prefetched into L2
    const char *name;
    int l64; // 8-byte fragment loads for a K-major A and an MN-major B (rankklpf)
    int nk;  // rankkldb's maps: TN in HalfLines stages, NT with NcCols B fragments, MN-major copies by
             // swizzle key (KeyLines)
    int cst; // 2: C staged in the stages the last three k-steps free for full tiles with beta != 0, C
             // not transposed, ldc even, k >= 48 (CLate; 1, a buffer of its own, was smallc's, removed);
             // 3: the same places filled once the main loop is done, any k (CEnd)
} shape;
// Every TESSERA_TC_TILE name of the kernel (same order as tc_variant_names).
static const shape shapes[] = {{128, 64, 64, 32, 4, 1, 0, "rankk", 0, 0},
                               {64, 64, 32, 32, 4, 1, 0, "small", 0, 0},
                               {128, 128, 64, 32, 3, 2, 0, "large32", 0, 0},
                               {128, 128, 64, 32, 3, 2, 0, "large32pf", 0, 0},
                               {128, 64, 64, 32, 4, 1, 1, "rankklpf", 1, 0},
                               {128, 64, 64, 32, 4, 1, 0, "rankkldb", 1, 1},  // rankklpf's maps in NN, TT; own in TN, NT
                               {64, 64, 32, 32, 4, 1, 0, "smalldb", 1, 1},    // small's tile on rankkldb's maps
                               {64, 64, 32, 32, 4, 1, 0, "smalldbc", 1, 1, 2},   // smalldb's, C staged late
                               {128, 64, 64, 32, 4, 1, 0, "rankkldbe", 1, 1, 3}}; // rankkldb's, C staged at the end
#define NSHAPES ((int)(sizeof shapes / sizeof shapes[0]))

// ---- the mma, from the PTX ISA fragment tables (g = lane/4, t = lane%4) ----
// m16n8k8 .f64: A a_i at (row g + 8(i%2), col t + 4(i/2)); B b_i at (row t + 4i, col g);
// C c_i at (row g + 8(i/2), col 2t + i%2).
static void ptx_mma_m16n8k8(double c[32][4], double a[32][4], double b[32][2]) {
    double A[16][8], B[8][8], C[16][8];
    for (int l = 0; l < 32; l++) {
        int g = l >> 2, t = l & 3;
        for (int i = 0; i < 4; i++) A[g + 8 * (i % 2)][t + 4 * (i / 2)] = a[l][i];
        for (int i = 0; i < 2; i++) B[t + 4 * i][g] = b[l][i];
        for (int i = 0; i < 4; i++) C[g + 8 * (i / 2)][2 * t + i % 2] = c[l][i];
    }
    for (int r = 0; r < 16; r++)
        for (int q = 0; q < 8; q++) {
            double s = C[r][q];
            for (int p = 0; p < 8; p++) s += A[r][p] * B[p][q];
            C[r][q] = s;
        }
    for (int l = 0; l < 32; l++) {
        int g = l >> 2, t = l & 3;
        for (int i = 0; i < 4; i++) c[l][i] = C[g + 8 * (i / 2)][2 * t + i % 2];
    }
}

// m8n8k4 .f64: A (row g, col t); B (row t, col g); C c_i at (row g, col 2t + i).
static void ptx_mma_m8n8k4(double c[32][2], const double a[32], const double b[32]) {
    double A[8][4], B[4][8], C[8][8];
    for (int l = 0; l < 32; l++) {
        int g = l >> 2, t = l & 3;
        A[g][t] = a[l], B[t][g] = b[l], C[g][2 * t] = c[l][0], C[g][2 * t + 1] = c[l][1];
    }
    for (int r = 0; r < 8; r++)
        for (int q = 0; q < 8; q++)
            for (int p = 0; p < 4; p++) C[r][q] += A[r][p] * B[p][q];
    for (int l = 0; l < 32; l++) {
        int g = l >> 2, t = l & 3;
        c[l][0] = C[g][2 * t], c[l][1] = C[g][2 * t + 1];
    }
}

// The kernel's sm_80 path: m16n8k8 as four m8n8k4 (row half h, k half q: A a[h + 2q], B b[q],
// C c[2h], c[2h+1]) must equal the m16n8k8 table.
static void test_m8n8k4_decomposition(void **state) {
    double a[32][4], b[32][2], c1[32][4], c2[32][4];
    uint64_t key = 77;
    for (int l = 0; l < 32; l++) {
        for (int i = 0; i < 4; i++) a[l][i] = ts_uniform_at(key, 8 * l + i), c1[l][i] = c2[l][i] = ts_uniform_at(key + 1, 8 * l + i);
        for (int i = 0; i < 2; i++) b[l][i] = ts_uniform_at(key + 2, 8 * l + i);
    }
    ptx_mma_m16n8k8(c1, a, b);
    for (int q = 0; q < 2; q++)
        for (int h = 0; h < 2; h++) {
            double aa[32], bb[32], cc[32][2];
            for (int l = 0; l < 32; l++)
                aa[l] = a[l][h + 2 * q], bb[l] = b[l][q], cc[l][0] = c2[l][2 * h], cc[l][1] = c2[l][2 * h + 1];
            ptx_mma_m8n8k4(cc, aa, bb);
            for (int l = 0; l < 32; l++) c2[l][2 * h] = cc[l][0], c2[l][2 * h + 1] = cc[l][1];
        }
    for (int l = 0; l < 32; l++)
        for (int i = 0; i < 4; i++) assert_true(fabs(c1[l][i] - c2[l][i]) <= 1e-15);
}

// ---- bank-conflict bookkeeping ----
// 16-byte accesses: each quarter-warp (8 lanes x 16 bytes) must hit 8 distinct 16-byte bank groups;
// 8-byte accesses: each half-warp 16 distinct 8-byte bank pairs. addr: byte offsets, -1 = inactive.
static int conflicts(const long addr[32], int bytes) {
    int lanes = 128 / bytes, bad = 0;
    for (int q = 0; q < 32; q += lanes) {
        int seen[16] = {0};
        for (int l = q; l < q + lanes; l++) {
            if (addr[l] < 0) continue;
            int unit = (int)((addr[l] / bytes) % lanes);
            bad += seen[unit]++ > 0;
        }
    }
    return bad;
}

// Worst number of lanes of one half-warp on one 8-byte bank pair (1: conflict free).
static int multiplicity8(const long addr[32]) {
    int worst = 0;
    for (int q = 0; q < 32; q += 16) {
        int seen[16] = {0};
        for (int l = q; l < q + 16; l++)
            if (addr[l] >= 0) {
                int u = (int)((addr[l] / 8) % 16);
                if (++seen[u] > worst) worst = seen[u];
            }
    }
    return worst;
}

typedef struct {
    const shape *S;
    int ak, bk, vec; // K-major A (op 'T'), K-major B (op 'N'), doubles per copy
    long frag_conflicts, copy_conflicts, frag_loads, copies;
    long frag8_loads, frag8_worst; // 8-byte fragment loads (l64) and their worst bank multiplicity
    int ct;            // the kernel's CT: result element (i, j) stored at C[j + i ldc] (TT as NN)
    int nk;            // this run's stages are HalfLines (shape nk, TN)
    int nc;            // this run's B fragments and C columns are NcCols (shape nk, NT)
    int keylines;      // MN-major copies in FullLoader's key-grouped order (shape nk)
    long fast_copies;  // copies issued by load_full (no bounds, no zero-fill)
    long staged_tiles, staged_reads, staged_conflicts; // staged C: tiles, read instructions, conflicting lanes
} emu;

// CLate (ts_dgemm_tc.cu, BM x BN tiles, 4 stages): the index in shared memory (A stages of za
// doubles from 0, B stages of zb from 4 za) of row i, column j of the late-staged C tile; kq = ktiles % 4.
// Columns in groups of 8 (8 BM doubles); a part holds gp = 2 + 2 BN / BM groups: group q in part
// q / gp (the stage (kq + part) % 4), slot q % gp: the A region's two halves, then the B region's
// groups; column j rotated by 4 T(j) rows, 8 more where the region starts 64 bytes past a 128-byte
// line (TN).
static int clate_gp(int BM, int BN) { return 2 + 2 * BN / BM; }
static int clate_index(int BM, int BN, int nc, int za, int zb, int kq, int i, int j) {
    const int gp = clate_gp(BM, BN), q = j >> 3, part = q / gp, slot = q - gp * part, st = (kq + part) & 3;
    const int base = slot < 2 ? st * za + slot * BM * 8 : 4 * za + st * zb + (slot - 2) * BM * 8;
    const int rot = 4 * (nc ? (j >> 1) & 3 : (j >> 2) & 3) + (base & 15); // (a region 64 bytes past a line: + 8)
    return base + (j & 7) * BM + ((i + rot) & (BM - 1));
}

// ---- TileLoader (same formulas as the kernel) ----
typedef struct {
    int R, kmajor, vec, threads, bk;
    int line_chunks, lpp, passes;
} loader_shape;

// HalfLines (rankkldb's TN stages): region per k8 half of R lines x 8 k, region 1 8 doubles past R*8;
// line x at rho = 16 (x / 16) + (x % 16) / 2 + 8 (x % 2), k' at rho*8 + (k' ^ 4 ((rho / 2) % 2)).
static int halflines_region(int R) { return R * 8 + 8; }
static int halflines_index(int R, int line, int k) {
    int rho = (line & ~15) | ((line & 15) >> 1) | ((line & 1) << 3);
    return (k >> 3) * halflines_region(R) + rho * 8 + ((k & 7) ^ (((rho >> 1) & 1) << 2));
}
// Doubles of one stage of R lines and bk k (HalfLines: two padded regions).
static int stage_size(int R, int bk, int nk) { return nk ? halflines_region(R) + R * 8 : R * bk; }
// The pad slots of a HalfLines stage (never written nor read).
static int is_pad(int R, int i, int nk) { return nk && i >= R * 8 && i < halflines_region(R); }

static loader_shape loader_of(int R, int kmajor, int vec, int threads, int bk) {
    loader_shape L = {R, kmajor, vec, threads, bk, 0, 0, 0};
    L.line_chunks = kmajor ? bk / vec : R / vec;
    L.lpp = threads / L.line_chunks;
    int lines = kmajor ? R : bk;
    L.passes = lines / L.lpp;
    assert_true(threads % L.line_chunks == 0 && lines % L.lpp == 0 && L.passes >= 1);
    return L;
}

// TileLoader::xfull for thread tid: every chunk it copies lies inside the tile's extent.
static int loader_xfull(const loader_shape *L, int64_t x0, int64_t rows, int tid) {
    int xlim = (int)(rows - x0 < ((int64_t)1 << 30) ? rows - x0 : ((int64_t)1 << 30));
    int line0 = tid / L->line_chunks, inner = (tid % L->line_chunks) * L->vec;
    return L->kmajor ? line0 + (L->passes - 1) * L->lpp < xlim : xlim - inner >= L->vec;
}

// One k-step of one operand for every thread of the block: the shared stage gets the chunks
// (zero-filled past the matrix), `written` counts writes per slot. M is op(M)-addressed through
// kmajor: K-major lines are rows of op(A) / columns of op(B) stored with k contiguous.
// fast (per thread, or NULL): the kernel's load_full for this k-step (xfull of both operands and the
// k-step inside k): whole chunks without zero-fill, which must then be exactly the bounded copy.
static void emu_load(emu *E, const loader_shape *L, const double *M, int64_t ld, int64_t x0, int64_t rows,
                     int64_t k0, int64_t k, double *stage, int *written, const unsigned char *fast) {
    int xlim = (int)(rows - x0 < ((int64_t)1 << 30) ? rows - x0 : ((int64_t)1 << 30));
    for (int w = 0; w < L->threads / 32; w++)
        for (int j = 0; j < L->passes; j++) {
            long addr[32];
            for (int lane = 0; lane < 32; lane++) {
                int tid = 32 * w + lane;
                int line0 = tid / L->line_chunks, inner = (tid % L->line_chunks) * L->vec;
                int line = line0 + j * L->lpp, nvalid, sidx;
                if (E->keylines && !L->kmajor) {
                    // FullLoader (rankkldb): thread (kappa, c) copies chunk c + 32q of k-lines
                    // 2 kappa + {0, 1, 8, 9}; pass j is (line offset j / Q, q = j % Q)
                    static const int lofs[4] = {0, 1, 8, 9};
                    const int Q = L->R / 64;
                    assert_true(L->threads == 128 && L->R % 64 == 0 && L->passes == 4 * Q && L->vec == 2);
                    line = 2 * (tid >> 5) + lofs[j / Q], inner = (tid & 31) * 2 + 64 * (j % Q);
                }
                // ptr at k-step k0: K-major M + inner + (x0 + line) ld + k0; MN-major M + (x0 + inner) + (line + k0) ld
                int64_t off = L->kmajor ? inner + (x0 + line) * ld + k0 : (x0 + inner) + ((int64_t)line + k0) * ld;
                if (L->kmajor) {
                    int64_t kl = k - k0 - inner;
                    nvalid = line < xlim ? (kl >= L->vec ? L->vec : (kl > 0 ? (int)kl : 0)) : 0;
                    sidx = E->nk ? halflines_index(L->R, line, inner)
                                 : (inner / TC_BK) * L->R * TC_BK + line * TC_BK + ((inner % TC_BK) ^ (((line >> 1) & 1) << 3));
                } else {
                    int xl = xlim - inner;
                    nvalid = k0 + line < k ? (xl >= L->vec ? L->vec : (xl > 0 ? xl : 0)) : 0;
                    sidx = line * L->R + (inner ^ (((line >> 1) & 3) << 2));
                }
                assert_true(sidx % L->vec == 0 && sidx + L->vec <= stage_size(L->R, L->bk, E->nk) && !is_pad(L->R, sidx, E->nk));
                if (fast && fast[tid]) { // load_full: no source size; only correct if nothing is cut
                    assert_int_equal(nvalid, L->vec);
                    E->fast_copies++;
                }
                for (int e = 0; e < L->vec; e++) {
                    stage[sidx + e] = e < nvalid ? M[off + e] : 0.0;
                    written[sidx + e]++;
                }
                addr[lane] = (long)sidx * 8;
            }
            E->copy_conflicts += conflicts(addr, 8 * L->vec);
            E->copies++;
        }
}

typedef struct {
    double a[4][4]; // [mt][i], MT <= 4
    double b[8][2]; // [nt][i], NT <= 8
} frags;

// FragOffsets + load_frags for one lane (same formulas as the kernel); records byte addresses of
// each 16-byte load in addr[load][lane].
// With S->l64 the K-major A and MN-major B fragments are loaded 8 bytes at a time (addr8).
static void emu_frags(emu *E, frags *f, const double *sA, const double *sB, int wm, int wn, int lane, int h,
                      long addr[][32], long addr8[][32]) {
    const shape *S = E->S;
    int g = lane >> 2, t = lane & 3, sg = (g & 1) << 3, kb = 8 * h, MT = S->WM / 16, NT = S->WN / 8, nl = 0, n8 = 0;
    if (E->nk) { // HalfLines: line 2g + c of each 16-line block at rho = g + 8c; k t + 4e of half h (8-byte loads)
        int ra = h * halflines_region(S->BM), rb = h * halflines_region(S->BN), ka[2], kbb[2];
        for (int e = 0; e < 2; e++) {
            int kx = (t + 4 * e) ^ (((g >> 1) & 1) << 2);
            ka[e] = ra + (wm * S->WM + g) * 8 + kx, kbb[e] = rb + (wn * S->WN + g) * 8 + kx;
        }
        for (int mt = 0; mt < MT; mt++) {
            int o[4] = {ka[0] + 128 * mt, ka[0] + 128 * mt + 64, ka[1] + 128 * mt, ka[1] + 128 * mt + 64}; // a0..a3
            for (int i = 0; i < 4; i++) addr8[n8++][lane] = 8L * o[i], f->a[mt][i] = sA[o[i]];
        }
        for (int p = 0; p < NT / 2; p++)
            for (int j = 0; j < 2; j++)
                for (int i = 0; i < 2; i++) {
                    int o = kbb[i] + 128 * p + 64 * j;
                    addr8[n8++][lane] = 8L * o, f->b[2 * p + j][i] = sB[o];
                }
        return;
    }
    int oa = E->ak ? (wm * S->WM + 2 * g) * TC_BK + 2 * t + (kb ^ sg) : (kb + 2 * t) * S->BM + wm * S->WM + ((2 * g) ^ (4 * t));
    int ob = E->bk ? (wn * S->WN + 2 * g) * TC_BK + 2 * t + (kb ^ sg) : (kb + 2 * t) * S->BN + wn * S->WN + ((2 * g) ^ (4 * t));
    for (int mt = 0; mt < MT; mt++) {
        int o0, o1;
        if (E->ak) o0 = oa + (16 * mt) * TC_BK, o1 = oa + (16 * mt + 1) * TC_BK;
        else o0 = oa + 16 * mt, o1 = oa + S->BM + 16 * mt;
        assert_true(o0 % 2 == 0 && o1 % 2 == 0);
        if (E->ak && S->l64) {
            addr8[n8++][lane] = 8L * o0, addr8[n8++][lane] = 8L * (o0 + 1);
            addr8[n8++][lane] = 8L * o1, addr8[n8++][lane] = 8L * (o1 + 1);
        } else {
            addr[nl++][lane] = 8L * o0, addr[nl++][lane] = 8L * o1;
        }
        if (E->ak) f->a[mt][0] = sA[o0], f->a[mt][2] = sA[o0 + 1], f->a[mt][1] = sA[o1], f->a[mt][3] = sA[o1 + 1];
        else f->a[mt][0] = sA[o0], f->a[mt][1] = sA[o0 + 1], f->a[mt][2] = sA[o1], f->a[mt][3] = sA[o1 + 1];
    }
    for (int p = 0; p < NT / 2; p++) {
        if (E->bk) {
            for (int j = 0; j < 2; j++) {
                int o = ob + (16 * p + j) * TC_BK;
                addr[nl++][lane] = 8L * o;
                f->b[2 * p + j][0] = sB[o], f->b[2 * p + j][1] = sB[o + 1];
            }
        } else if (E->nc) { // NcCols: column g of tile nt at 16 nt + 8 wn + g; k-lines 2t, 2t+1 of the half
            for (int j = 0; j < 2; j++) {
                int nt = 2 * p + j, o0 = (kb + 2 * t) * S->BN + ((8 * wn + g) ^ (4 * t)) + 16 * nt, o1 = o0 + S->BN;
                addr8[n8++][lane] = 8L * o0, addr8[n8++][lane] = 8L * o1;
                f->b[nt][0] = sB[o0], f->b[nt][1] = sB[o1];
            }
        } else {
            int o0 = ob + 16 * p, o1 = ob + S->BN + 16 * p;
            if (S->l64) {
                addr8[n8++][lane] = 8L * o0, addr8[n8++][lane] = 8L * (o0 + 1);
                addr8[n8++][lane] = 8L * o1, addr8[n8++][lane] = 8L * (o1 + 1);
            } else {
                addr[nl++][lane] = 8L * o0, addr[nl++][lane] = 8L * o1;
            }
            f->b[2 * p][0] = sB[o0], f->b[2 * p + 1][0] = sB[o0 + 1];
            f->b[2 * p][1] = sB[o1], f->b[2 * p + 1][1] = sB[o1 + 1];
        }
    }
}

// The kernel's tile_of_block.
static void tile_of_block(int pid, int grid_m, int grid_n, int *bm, int *bn) {
    int per_group = TC_GROUP_M * grid_n, group = pid / per_group, first = group * TC_GROUP_M;
    int rows = grid_m - first < TC_GROUP_M ? grid_m - first : TC_GROUP_M;
    int in = pid - group * per_group;
    *bm = first + in % rows, *bn = in / rows;
}

// The whole kernel, block by block, warp by warp, lane by lane.
static void emu_gemm(emu *E, char ta, char tb, int64_t m, int64_t n, int64_t k, double alpha, const double *A,
                     int64_t lda, const double *B, int64_t ldb, double beta, double *C, int64_t ldc) {
    const shape *S = E->S;
    int threads = 32 * (S->BM / S->WM) * (S->BN / S->WN), warps_m = S->BM / S->WM, MT = S->WM / 16, NT = S->WN / 8;
    E->ak = !(ta == 'N'), E->bk = tb == 'N';
    E->nk = S->nk && E->ak && E->bk, E->nc = S->nk && !E->ak && !E->bk, E->keylines = S->nk && !E->ak && !E->bk; // (NT; NN and TT copy in rankklpf's order)
    const int BK = TC_BK * S->KS;
    loader_shape La = loader_of(S->BM, E->ak, E->vec, threads, BK), Lb = loader_of(S->BN, E->bk, E->vec, threads, BK);
    int grid_m = (int)((m + S->BM - 1) / S->BM), grid_n = (int)((n + S->BN - 1) / S->BN);
    int64_t ktiles = (k + BK - 1) / BK;
    const int za = stage_size(S->BM, BK, E->nk), zb = stage_size(S->BN, BK, E->nk);
    double *sA = malloc(sizeof(double) * za), *sB = malloc(sizeof(double) * zb);
    int *wa = malloc(sizeof(int) * za), *wb = malloc(sizeof(int) * zb);
    double(*acc)[32][4][8][4] = malloc(sizeof(double) * 32 * 32 * 4 * 8 * 4); // [warp][lane][mt][nt][e]
    unsigned char *xfull = malloc((size_t)threads), *fast = malloc((size_t)threads);
    char *done = calloc((size_t)(grid_m * grid_n), 1);
    for (int pid = 0; pid < grid_m * grid_n; pid++) {
        int bm, bn;
        tile_of_block(pid, grid_m, grid_n, &bm, &bn);
        assert_true(bm < grid_m && bn < grid_n && !done[bm + bn * grid_m]);
        done[bm + bn * grid_m] = 1;
        int64_t m0 = (int64_t)bm * S->BM, n0 = (int64_t)bn * S->BN;
        memset(acc, 0, sizeof(double) * 32 * 32 * 4 * 8 * 4);
        for (int tid = 0; tid < threads; tid++)
            xfull[tid] = (unsigned char)(loader_xfull(&La, m0, m, tid) && loader_xfull(&Lb, n0, n, tid));
        if (S->cpf && beta != 0.0 && k <= 1024) {
            // prefetch_c: every C line of the tile, nothing outside (CT: the tile is BN rows of C in
            // memory by BM columns)
            const int ROWS = E->ct ? S->BN : S->BM, COLS = E->ct ? S->BM : S->BN;
            const int64_t r0 = E->ct ? n0 : m0, c0 = E->ct ? m0 : n0, rn = E->ct ? n : m, cn = E->ct ? m : n;
            int lpc = ROWS * 8 / 128, hit = 0;
            for (int tid = 0; tid < threads; tid++)
                for (int idx = tid; idx < lpc * COLS; idx += threads) {
                    int col = idx / lpc, seg = idx % lpc;
                    if (c0 + col >= cn || 16 * seg >= rn - r0) continue;
                    assert_true(r0 + 16 * seg < rn && c0 + col < cn);
                    hit++;
                }
            int64_t rows = rn - r0 < ROWS ? rn - r0 : ROWS, cols = cn - c0 < COLS ? cn - c0 : COLS;
            assert_int_equal(hit, (int)(((rows + 15) / 16) * cols));
        }
        for (int64_t kt = 0; kt < ktiles; kt++) { // the stage ring only reorders; one stage suffices here
            memset(wa, 0, sizeof(int) * za), memset(wb, 0, sizeof(int) * zb);
            for (int i = 0; i < za; i++) sA[i] = NAN;
            for (int i = 0; i < zb; i++) sB[i] = NAN;
            // the prologue's k-steps (0 .. STAGES-2) always take the bounded copies
            for (int tid = 0; tid < threads; tid++)
                fast[tid] = (unsigned char)(kt >= S->STAGES - 1 && xfull[tid] && (kt + 1) * BK <= k);
            emu_load(E, &La, A, lda, m0, m, kt * BK, k, sA, wa, fast);
            emu_load(E, &Lb, B, ldb, n0, n, kt * BK, k, sB, wb, fast);
            for (int i = 0; i < za; i++) assert_int_equal(wa[i], !is_pad(S->BM, i, E->nk));
            for (int i = 0; i < zb; i++) assert_int_equal(wb[i], !is_pad(S->BN, i, E->nk));
            for (int w = 0; w < threads / 32; w++) {
                int wm = w % warps_m, wn = w / warps_m;
                for (int hh = 0; hh < 2 * S->KS; hh++) { // sub-stage hh/2, k8 half hh%2 (load_half)
                    static frags f[32];
                    long addr[24][32], addr8[32][32];
                    const int h = hh % 2, sub = hh / 2;
                    for (int lane = 0; lane < 32; lane++)
                        emu_frags(E, &f[lane], sA + sub * S->BM * TC_BK, sB + sub * S->BN * TC_BK, wm, wn, lane, h,
                                  addr, addr8);
                    const int a8 = E->ak && S->l64, b8 = (!E->bk && S->l64) || E->nk;
                    int nloads = (a8 ? 0 : 2 * MT) + (b8 ? 0 : 2 * (NT / 2));
                    int n8 = (a8 ? 4 * MT : 0) + (b8 ? 4 * (NT / 2) : 0);
                    for (int l = 0; l < nloads; l++) E->frag_conflicts += conflicts(addr[l], 16), E->frag_loads++;
                    for (int l = 0; l < n8; l++) {
                        int w8 = multiplicity8(addr8[l]);
                        if (w8 > E->frag8_worst) E->frag8_worst = w8;
                        E->frag8_loads++;
                    }
                    for (int mt = 0; mt < MT; mt++)
                        for (int nt = 0; nt < NT; nt++) {
                            double a[32][4], b[32][2], c[32][4];
                            for (int lane = 0; lane < 32; lane++) {
                                memcpy(a[lane], f[lane].a[mt], sizeof a[lane]);
                                memcpy(b[lane], f[lane].b[nt], sizeof b[lane]);
                                memcpy(c[lane], acc[w][lane][mt][nt], sizeof c[lane]);
                            }
                            ptx_mma_m16n8k8(c, a, b);
                            for (int lane = 0; lane < 32; lane++) memcpy(acc[w][lane][mt][nt], c[lane], sizeof c[lane]);
                        }
                }
            }
        }
        // Epilogue: (mt, nt, e) -> row m0 + wm WM + 16 mt + 2g + e/2, column n0 + wn WN + 16 (nt/2) + 4t + nt%2 + 2 (e%2)
        // (NcCols: column n0 + 16 nt + 8 wn + 2t + e%2).
        // cs: the staged copy (CLate), built here as the kernel's bulk copies place it; the epilogue's
        // 16-byte reads of rows i, i + 1 conflict free per quarter-warp
        double *cs = NULL;
        const int kq = (int)((k / TC_BK) & 3);
        const int whole = beta != 0.0 && !E->ct && ldc % 2 == 0 && m0 + S->BM <= m && n0 + S->BN <= n;
        if (((S->cst == 2 && k >= 48) || S->cst == 3) && whole && k % 16 == 0) {
            // every element written once, inside its group's 8 BM doubles of its region (A: two
            // groups, B: 2 BN / BM), in the first three stages after kq; rows of a column 16-byte
            // aligned in pairs
            const int tot = 4 * za + 4 * zb, gp = clate_gp(S->BM, S->BN), gl = 8 * S->BM;
            cs = malloc(sizeof(double) * tot);
            int *cnt = calloc((size_t)tot, sizeof(int));
            for (int j = 0; j < S->BN; j++)
                for (int r = 0; r < S->BM; r++) {
                    const int x = clate_index(S->BM, S->BN, E->nc, za, zb, kq, r, j), q = j >> 3, slot = q % gp;
                    const int part = q / gp, st = (kq + part) & 3;
                    const int lo = slot < 2 ? st * za + slot * gl : 4 * za + st * zb + (slot - 2) * gl;
                    assert_true(part < 3 && x >= lo && x < lo + gl &&
                                (slot < 2 ? lo + gl <= (st + 1) * za : lo + gl <= 4 * za + (st + 1) * zb));
                    if (r % 2 == 0) assert_int_equal(clate_index(S->BM, S->BN, E->nc, za, zb, kq, r + 1, j), x + 1);
                    assert_int_equal(cnt[x]++, 0);
                    cs[x] = C[m0 + r + (n0 + j) * ldc];
                }
            free(cnt);
        }
        if (cs) { // the epilogue's reads, conflicts counted at the real byte offsets
            for (int w = 0; w < threads / 32; w++)
                for (int mt = 0; mt < MT; mt++)
                    for (int nt = 0; nt < NT; nt++)
                        for (int h = 0; h < 2; h++) {
                            long addr[32];
                            const int wm = w % warps_m, wn = w / warps_m;
                            for (int lane = 0; lane < 32; lane++) {
                                const int g = lane >> 2, t = lane & 3, il = wm * S->WM + 16 * mt + 2 * g;
                                const int jl = E->nc ? 16 * nt + 8 * wn + 2 * t + h : wn * S->WN + 16 * (nt / 2) + 4 * t + (nt % 2) + 2 * h;
                                addr[lane] = 8L * clate_index(S->BM, S->BN, E->nc, za, zb, kq, il, jl);
                                // the epilogue's grouping: member d of a group is column j0's place + d BM
                                const int j0 = E->nc ? 16 * nt + 8 * wn + 2 * t : wn * S->WN + 16 * (nt / 2) + 4 * t;
                                const int d = E->nc ? h : nt % 2 + 2 * h;
                                assert_int_equal(clate_index(S->BM, S->BN, E->nc, za, zb, kq, il, jl),
                                                 clate_index(S->BM, S->BN, E->nc, za, zb, kq, il, j0) + d * S->BM);
                            }
                            E->staged_conflicts += conflicts(addr, 16);
                            E->staged_reads++;
                        }
            E->staged_tiles++;
        }
        for (int w = 0; w < threads / 32; w++) {
            int wm = w % warps_m, wn = w / warps_m;
            for (int lane = 0; lane < 32; lane++) {
                int g = lane >> 2, t = lane & 3;
                for (int mt = 0; mt < MT; mt++)
                    for (int nt = 0; nt < NT; nt++)
                        for (int h = 0; h < 2; h++) {
                            int64_t i = m0 + wm * S->WM + 16 * mt + 2 * g;
                            int64_t j = E->nc ? n0 + 16 * nt + 8 * wn + 2 * t + h
                                              : n0 + wn * S->WN + 16 * (nt / 2) + 4 * t + (nt % 2) + 2 * h;
                            if (j >= n || i >= m) continue;
                            double v0 = acc[w][lane][mt][nt][h], v1 = acc[w][lane][mt][nt][2 + h];
                            // CT: the kernel's result is C^T, element (i, j) at C[j + i ldc]
                            double *c0 = E->ct ? C + j + i * ldc : C + i + j * ldc;
                            double *c1 = E->ct ? C + j + (i + 1) * ldc : C + i + 1 + j * ldc;
                            if (cs) { // the staged copy (C's own values, so a wrong slot gives wrong numbers)
                                const double *o = cs + clate_index(S->BM, S->BN, E->nc, za, zb, kq, (int)(i - m0), (int)(j - n0));
                                *c0 = alpha * v0 + beta * o[0], *c1 = alpha * v1 + beta * o[1];
                                continue;
                            }
                            *c0 = beta == 0.0 ? alpha * v0 : alpha * v0 + beta * *c0;
                            if (i + 1 < m) *c1 = beta == 0.0 ? alpha * v1 : alpha * v1 + beta * *c1;
                        }
            }
        }
        free(cs);
    }
    for (int i = 0; i < grid_m * grid_n; i++) assert_true(done[i]);
    free(sA), free(sB), free(wa), free(wb), free(acc), free(done), free(xfull), free(fast);
}

static long last_fast_copies;  // unbounded copies of the last run (tests that the path was taken)
static long last_staged_tiles; // tiles of the last run whose C came from the staged copy

// ct: TT the way the launcher runs it, as C^T = B A on the NN maps with the result stored transposed.
static void run_ct(const shape *S, int vec, char ta, char tb, int64_t m, int64_t n, int64_t k, int beta_zero,
                   uint64_t key, int ct) {
    int64_t ar = ta == 'N' ? m : k, ac = ta == 'N' ? k : m, br = tb == 'N' ? k : n, bc = tb == 'N' ? n : k;
    int64_t lda = ar + 3, ldb = br + 1, ldc = m + 2;
    double *A = kt_alloc_fill('d', ar, ac, lda, key + 1), *B = kt_alloc_fill('d', br, bc, ldb, key + 2);
    double *C = kt_alloc_fill('d', m, n, ldc, key + 3);
    double alpha = -0.75, beta = beta_zero ? 0.0 : 1.25;
    if (beta_zero)
        for (int64_t i = 0; i < ldc * n; i++) C[i] = NAN;
    double *C0 = kt_dup('d', C, ldc * n);
    kt_lc *ref = malloc((size_t)(m * n) * sizeof *ref);
    long double *bnd = malloc((size_t)(m * n) * sizeof *bnd);
    kt_naive('d', ta, tb, m, n, k, &alpha, A, lda, B, ldb, &beta, C0, ldc, ref, bnd);
    emu E = {.S = S, .vec = vec, .ct = ct};
    if (ct) {
        assert_true(ta == 'T' && tb == 'T');
        emu_gemm(&E, 'N', 'N', n, m, k, alpha, B, ldb, A, lda, beta, C, ldc);
    } else {
        emu_gemm(&E, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    }
    double err = kt_scaled_err('d', m, n, k, C, ldc, ref, bnd);
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = m; i < ldc; i++) assert_true(isnan(C[i + j * ldc]));
    printf("  %-8s vec %d %c%c%s%s%s %3lldx%3lldx%3lld beta %s: err %.3g, fragment-load conflicts %ld/%ld, copy "
           "conflicts %ld/%ld, unbounded copies %ld, 8-byte fragment loads %ld (worst %ld-way)\n",
           S->name, vec, ta, tb, ct ? " as NN^T" : "", E.nk ? " HalfLines" : "", E.nc ? " NcCols" : "", (long long)m, (long long)n, (long long)k,
           beta_zero ? "0" : "!=0", err, E.frag_conflicts, E.frag_loads, E.copy_conflicts, E.copies, E.fast_copies,
           E.frag8_loads, E.frag8_worst);
    last_fast_copies = E.fast_copies;
    last_staged_tiles = E.staged_tiles;
    if (E.staged_reads) printf("    staged C reads %ld, conflicting lanes %ld\n", E.staged_reads, E.staged_conflicts);
    assert_int_equal(E.staged_conflicts, 0);
    assert_true(err <= 2.0);
    assert_int_equal(E.frag_conflicts, 0);
    // 8-byte loads only where the shape asks for them (TN's A, NT's B), and at most 2-way: a 16-byte
    // chunk holds k 2t and 2t+1 (or columns 2g, 2g+1), so one load instruction reaches half the banks.
    const int want8 = S->l64 && !ct && ((ta != 'N') || (tb != 'N'));
    assert_true(want8 ? E.frag8_loads > 0 : E.frag8_loads == 0);
    assert_true(E.frag8_worst <= 2);
    // HalfLines (rankkldb's TN) and NcCols (its NT): every 8-byte load hits 16 distinct slots per half-warp
    if (S->nk && !ct && ta != tb) assert_true((E.nk || E.nc) && E.frag8_loads > 0 && E.frag8_worst == 1);
    assert_int_equal(E.copy_conflicts, 0);
    free(A), free(B), free(C), free(C0), free(ref), free(bnd);
}

static void run(const shape *S, int vec, char ta, char tb, int64_t m, int64_t n, int64_t k, int beta_zero,
                uint64_t key) {
    // TT runs as C^T = B A (the launcher's only TT path)
    run_ct(S, vec, ta, tb, m, n, k, beta_zero, key, ta == 'T' && tb == 'T');
}

static const char ops[4][2] = {{'N', 'N'}, {'N', 'T'}, {'T', 'N'}, {'T', 'T'}};

// Every shape and op with 16-byte copies; partial tiles in m, n and k (and a second k-step).
static void test_emul_shapes_ops(void **state) {
    uint64_t key = 10;
    for (int s = 0; s < NSHAPES; s++)
        for (int o = 0; o < 4; o++) {
            run(&shapes[s], 2, ops[o][0], ops[o][1], shapes[s].BM + 19, shapes[s].BN + 5, 37, o & 1, key += 10);
            if (shapes[s].KS > 1) // k = 64 + 7: two full 32-deep steps and a partial one
                run(&shapes[s], 2, ops[o][0], ops[o][1], shapes[s].BM - 3, 2 * shapes[s].BN + 1, 71, !(o & 1), key += 10);
        }
}

// 8-byte copies (odd leading dimensions, misaligned pointers) on the shape that runs them.
static void test_emul_vec1(void **state) {
    uint64_t key = 500;
    for (int o = 0; o < 4; o++) run(&shapes[0], 1, ops[o][0], ops[o][1], 131, 70, 33, o & 1, key += 10);
}

// Tiny and odd: 1x1x1, k = 1, m or n smaller than a warp tile, several tile rows (block order).
static void test_emul_small_sizes(void **state) {
    static const int64_t dims[][3] = {{1, 1, 1}, {7, 9, 1}, {3, 200, 17}, {300, 2, 5}, {33, 33, 33}};
    uint64_t key = 900;
    for (size_t d = 0; d < sizeof dims / sizeof dims[0]; d++)
        for (int o = 0; o < 4; o++)
            run(&shapes[1], 2, ops[o][0], ops[o][1], dims[d][0], dims[d][1], dims[d][2], (int)(d + o) & 1, key += 10);
}

// More tile rows than one group of the block order (grid_m > GROUP_M) so that the grouped order's
// last, partial group is covered.
static void test_emul_block_order(void **state) {
    int seen[40 * 7] = {0};
    for (int pid = 0; pid < 40 * 7; pid++) {
        int bm, bn;
        tile_of_block(pid, 40 - 3, 7, &bm, &bn); // 37 rows: groups of 8, last of 5
        if (pid >= 37 * 7) continue;
        assert_true(bm < 37 && bn < 7);
        assert_int_equal(seen[bm + 37 * bn]++, 0);
    }
    run(&shapes[1], 2, 'N', 'N', 64 * 9 + 1, 64 * 2 + 3, 16, 0, 1234);
}

// load_full: past the prologue, k-steps inside k by threads whose chunks lie inside the tile copy
// without bounds; every such copy must equal the bounded one (emu_load asserts it), and the path
// must be taken (edge tiles in m and n, a partial last k-step, interior k-steps after the prologue).
static void test_emul_unbounded_copies(void **state) {
    uint64_t key = 2000;
    const int which[] = {0, 2}; // rankk (BK 16, 4 stages), large32 (BK 32, 3 stages)
    for (int w = 0; w < 2; w++) {
        const shape *S = &shapes[which[w]];
        int64_t k = (int64_t)TC_BK * S->KS * (S->STAGES + 2) + 5;
        for (int o = 0; o < 4; o++) {
            run_ct(S, 2, ops[o][0], ops[o][1], 2 * S->BM + 5, S->BN + 3, k, o & 1, key += 10, o == 3);
            assert_true(last_fast_copies > 0);
        }
        run_ct(S, 2, 'T', 'T', S->BM + 7, 2 * S->BN + 1, k, 0, key += 10, 1);
        assert_true(last_fast_copies > 0);
    }
}

// The staged C on CLate's map (smalldbc's 64 x 64 tiles in two parts, copied in the last k-steps;
// rankkldbe's 128 x 64 in three, copied after the main loop: CEnd) on whole tiles, every op, k of 3,
// 4 and 7 k-steps (the stage index of each part depends on k % 4); k = 32 (two steps): smalldbc
// reads C from global memory, rankkldbe stages it.
static void test_emul_late_c(void **state) {
    int nshapes = 0;
    uint64_t key = 4000;
    static const int ks[] = {48, 64, 112, 32};
    for (int s = 0; s < NSHAPES; s++) {
        const shape *S = &shapes[s];
        if (S->cst != 2 && S->cst != 3) continue;
        nshapes++;
        for (int o = 0; o < 4; o++)
            for (int q = 0; q < 4; q++) {
                run(S, 2, ops[o][0], ops[o][1], 2 * S->BM, 2 * S->BN, ks[q], 0, key += 10);
                assert_int_equal(last_staged_tiles, o == 3 || (S->cst == 2 && ks[q] < 48) ? 0 : 4);
            }
    }
    assert_int_equal(nshapes, 2);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_m8n8k4_decomposition), cmocka_unit_test(test_emul_shapes_ops),
        cmocka_unit_test(test_emul_vec1),            cmocka_unit_test(test_emul_small_sizes),
        cmocka_unit_test(test_emul_block_order),     cmocka_unit_test(test_emul_unbounded_copies),
        cmocka_unit_test(test_emul_late_c),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
