// test_dgemm_d16_emul.c: CPU replay of the dmma16 DGEMM main loop (ts_dgemm_tc.cu, dgemm_d16_kernel) against a naive GEMM, plus its swizzle and bank checks.
//
// The dmma16 kernel (TESSERA_TC_TILE=dmma16) feeds mma.sync.m16n8k16 .f64 with one 8-byte
// shared load per fragment double; its shared-memory layout is XOR-swizzled for that access
// (see the comment above mma_m16n8k16 in src/kernels/cuda/ts_dgemm_tc.cu). A mistake there shows
// only on a GPU as wrong numbers or as bank conflicts (slow, still right); this test checks it here:
//   - the swizzle of each layout (K-major lines of 16 k, MN-major lines of BM or BN) is a bijection
//     onto the stage and keeps every 16-byte copy chunk whole and in order;
//   - the kernel's address arithmetic (per-thread bases + immediates, the loader's destinations)
//     equals the swizzle applied to the element the PTX fragment table assigns to each lane;
//   - every fragment load (32 lanes x 8 bytes) puts each half-warp on 16 distinct 8-byte bank slots
//     (2 wavefronts, the minimum), and every cp.async quarter-warp on 8 distinct 16-byte units;
//   - the stage ring of the k loop unrolled by the stage count reads each k-step from the stage it
//     was written to, and writes only into the stage read one step earlier;
//   - a full replay, block by block, warp by warp, lane by lane, of copies (predicated by the
//     per-block masks, or bounded with zero-fill), fragments, mma (from the PTX ISA table) and
//     epilogue (TT as C^T = B A, the launcher's path) matches a naive GEMM within the rounding
//     bound; shared memory is poisoned with NaN, so a skipped copy whose stale data reached a stored
//     element would show.
// The formulas below must stay identical to the kernel's; change both together.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <cmocka.h>

#include "kern_test_util.h"

#define TC_GROUP_M 8

typedef struct {
    int BM, BN, WM, WN, STAGES;
    const char *name;
} d16shape;
// The dmma16 kernel's shape (ShapeD16).
static const d16shape shapes[] = {{128, 128, 32, 64, 3, "dmma16"}};
#define NSHAPES ((int)(sizeof shapes / sizeof shapes[0]))

// ---- the layouts as documented (doubles inside one operand's part of a stage) ----
static int swz_k(int x, int k) { return x * 16 + (k ^ ((x & 3) << 2)); }       // K-major: line x of 16 k
static int swz_mn(int R, int k, int x) { return k * R + (x ^ ((k & 3) << 2)); } // MN-major: line k of R
static int swz(int R, int kmajor, int x, int k) { return kmajor ? swz_k(x, k) : swz_mn(R, k, x); }

// ---- mma.m16n8k16 .f64 from the PTX ISA fragment table (g = lane/4, t = lane%4) ----
// A a_i at (row g + 8(i%2), k t + 4(i/2)); B b_i at (k t + 4i, column g); C c_i at (row g + 8(i/2), column 2t + i%2).
static void ptx_mma_m16n8k16(double c[32][4], double a[32][8], double b[32][4]) {
    double A[16][16], B[16][8], C[16][8];
    for (int l = 0; l < 32; l++) {
        int g = l >> 2, t = l & 3;
        for (int i = 0; i < 8; i++) A[g + 8 * (i % 2)][t + 4 * (i / 2)] = a[l][i];
        for (int i = 0; i < 4; i++) B[t + 4 * i][g] = b[l][i];
        for (int i = 0; i < 4; i++) C[g + 8 * (i / 2)][2 * t + i % 2] = c[l][i];
    }
    for (int r = 0; r < 16; r++)
        for (int q = 0; q < 8; q++) {
            double s = C[r][q];
            for (int p = 0; p < 16; p++) s += A[r][p] * B[p][q];
            C[r][q] = s;
        }
    for (int l = 0; l < 32; l++) {
        int g = l >> 2, t = l & 3;
        for (int i = 0; i < 4; i++) c[l][i] = C[g + 8 * (i / 2)][2 * t + i % 2];
    }
}

// Worst number of lanes of one half-warp on one 8-byte bank slot (1: 2 wavefronts, conflict free).
static int slot8_worst(const long addr[32]) {
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
// 16-byte accesses: lanes of a quarter-warp on the same 16-byte unit of the 128-byte bank row.
static int conflicts16(const long addr[32]) {
    int bad = 0;
    for (int q = 0; q < 32; q += 8) {
        int seen[8] = {0};
        for (int l = q; l < q + 8; l++)
            if (addr[l] >= 0) bad += seen[(addr[l] / 16) % 8]++ > 0;
    }
    return bad;
}

// ---- D16Loader (same formulas as the kernel) ----
typedef struct {
    int R, kmajor, threads, line_chunks, lpp, passes, line, period;
} loader16;

static loader16 loader_of(int R, int kmajor, int threads) {
    loader16 L = {R, kmajor, threads, 0, 0, 0, 0, 0};
    L.line_chunks = kmajor ? 8 : R / 2;
    L.lpp = threads / L.line_chunks;
    L.passes = (kmajor ? R : 16) / L.lpp;
    L.line = kmajor ? 16 : R;
    L.period = L.lpp % 4 == 0 ? 1 : (L.lpp % 2 == 0 ? 2 : 4);
    assert_true(threads % L.line_chunks == 0 && L.passes * L.lpp == (kmajor ? R : 16) && L.passes % L.period == 0);
    assert_true(L.passes <= 32);
    return L;
}

typedef struct {
    int line0, inner, xlim, whole;
    unsigned dst[4], mask;
} thread16;

static thread16 thread_of(const loader16 *L, int64_t x0, int64_t rows, int tid) {
    thread16 T;
    T.line0 = tid / L->line_chunks, T.inner = (tid % L->line_chunks) * 2;
    T.xlim = (int)(rows - x0 < ((int64_t)1 << 30) ? rows - x0 : ((int64_t)1 << 30));
    for (int r = 0; r < L->period; r++) {
        int line = T.line0 + r * L->lpp;
        T.dst[r] = 8u * (unsigned)(line * L->line + (T.inner ^ ((line & 3) << 2)));
    }
    T.mask = 0;
    for (int j = 0; j < L->passes; j++)
        if (L->kmajor ? T.line0 + j * L->lpp < T.xlim : T.inner + 2 <= T.xlim) T.mask |= 1u << j;
    T.whole = L->kmajor || T.xlim >= L->R || T.xlim % 2 == 0;
    return T;
}
static unsigned dst_of(const loader16 *L, const thread16 *T, int j) {
    return T->dst[j % L->period] + 8u * (unsigned)((j / L->period) * L->period * L->lpp * L->line);
}

typedef struct {
    const d16shape *S;
    int ak, bk, ct;
    long frag_loads, frag_worst, copies, copy_conflicts, skipped, bounded_steps, fast_steps;
} emu;

// One k-step of one operand, every thread: fast (the kernel's copy(): predicated by the mask) or
// bounded (copy_bounded(): zero-fill). M is addressed as op(M) through kmajor.
static void emu_copy(emu *E, const loader16 *L, const double *M, int64_t ld, int64_t x0, int64_t rows, int64_t k0,
                     int64_t k, double *stage, int *written, int fast) {
    for (int w = 0; w < L->threads / 32; w++)
        for (int j = 0; j < L->passes; j++) {
            long addr[32];
            for (int lane = 0; lane < 32; lane++) {
                int tid = 32 * w + lane;
                thread16 T = thread_of(L, x0, rows, tid);
                int line = T.line0 + j * L->lpp;
                unsigned d = dst_of(L, &T, j);
                // the kernel's destination is the documented swizzle of (line, inner), chunk whole
                assert_int_equal((int)(d / 8), L->kmajor ? swz_k(line, T.inner) : swz_mn(L->R, line, T.inner));
                assert_true(d % 16 == 0 && d / 8 + 2 <= (unsigned)(L->R * 16));
                int64_t off = L->kmajor ? T.inner + (x0 + line) * ld + k0 : (x0 + T.inner) + (line + k0) * ld;
                int nv;
                if (L->kmajor) {
                    int64_t kl = k - k0 - T.inner;
                    nv = line < T.xlim ? (kl >= 2 ? 2 : (kl > 0 ? (int)kl : 0)) : 0;
                } else {
                    int xl = T.xlim - T.inner;
                    nv = k0 + line < k ? (xl >= 2 ? 2 : (xl > 0 ? xl : 0)) : 0;
                }
                addr[lane] = (long)d;
                if (fast) {
                    // a whole block at a k-step inside k: the mask decides, and it must agree with
                    // the bounds (a chunk is copied whole or not at all)
                    int on = (T.mask >> j) & 1;
                    assert_true(T.whole && k0 + 16 <= k);
                    assert_int_equal(nv, on ? 2 : 0);
                    if (!on) {
                        E->skipped++;
                        continue; // stale data (NaN here) stays in the slot
                    }
                }
                for (int e = 0; e < 2; e++) {
                    stage[d / 8 + e] = e < nv ? M[off + e] : 0.0;
                    written[d / 8 + e]++;
                }
            }
            E->copy_conflicts += conflicts16(addr);
            E->copies++;
        }
}

typedef struct {
    double a[2][8]; // [mt][i], MT = 2
    double b[8][4]; // [nt][i], NT = 8
} frags16;

// The kernel's fragment bases and immediates for one lane; addresses (bytes) recorded per load.
static void emu_frags(emu *E, frags16 *f, const double *sA, const double *sB, int wm, int wn, int lane,
                      long addr[48][32]) {
    const d16shape *S = E->S;
    const int g = lane >> 2, t = lane & 3, BM = S->BM, BN = S->BN, MT = S->WM / 16, NT = S->WN / 8;
    int ab[4], bb[4], n = 0;
    for (int q = 0; q < (E->ak ? 4 : 2); q++)
        ab[q] = E->ak ? (wm * S->WM + g) * 16 + t + 4 * (q ^ (g & 3)) : t * BM + wm * S->WM + ((g + 8 * q) ^ (4 * t));
    for (int q = 0; q < (E->bk ? 4 : 2); q++)
        bb[q] = E->bk ? (wn * S->WN + g) * 16 + t + 4 * (q ^ (g & 3)) : t * BN + wn * S->WN + ((g + 8 * q) ^ (4 * t));
    for (int mt = 0; mt < MT; mt++)
        for (int i = 0; i < 8; i++) {
            const int j = i >> 1, h = i & 1;
            int o = E->ak ? ab[j] + 256 * mt + 128 * h : ab[h] + 4 * j * BM + 16 * mt;
            // the element the PTX table gives this lane: row g + 8(i%2) of tile mt, k t + 4(i/2)
            assert_int_equal(o, swz(BM, E->ak, wm * S->WM + 16 * mt + g + 8 * h, t + 4 * j));
            f->a[mt][i] = sA[o];
            addr[n++][lane] = 8L * o;
        }
    for (int nt = 0; nt < NT; nt++)
        for (int i = 0; i < 4; i++) {
            int o = E->bk ? bb[i] + 128 * nt : bb[nt & 1] + 4 * i * BN + 16 * (nt >> 1);
            assert_int_equal(o, swz(BN, E->bk, wn * S->WN + 8 * nt + g, t + 4 * i));
            f->b[nt][i] = sB[o];
            addr[n++][lane] = 8L * o;
        }
    assert_int_equal(n, 48);
}

static void tile_of_block(int pid, int grid_m, int grid_n, int *bm, int *bn) {
    int per_group = TC_GROUP_M * grid_n, group = pid / per_group, first = group * TC_GROUP_M;
    int rows = grid_m - first < TC_GROUP_M ? grid_m - first : TC_GROUP_M;
    int in = pid - group * per_group;
    *bm = first + in % rows, *bn = in / rows;
}

// The kernel for op(A) (ak: K-major A, i.e. 'T') and op(B) (bk: K-major B, 'N'), column-major C;
// with E->ct the result (i, j) is stored at C[j + i ldc] (TT as C^T = B A).
static void emu_gemm(emu *E, int64_t m, int64_t n, int64_t k, double alpha, const double *A, int64_t lda,
                     const double *B, int64_t ldb, double beta, double *C, int64_t ldc) {
    const d16shape *S = E->S;
    const int warps_m = S->BM / S->WM, threads = 32 * warps_m * (S->BN / S->WN), MT = S->WM / 16, NT = S->WN / 8;
    loader16 La = loader_of(S->BM, E->ak, threads), Lb = loader_of(S->BN, E->bk, threads);
    const int grid_m = (int)((m + S->BM - 1) / S->BM), grid_n = (int)((n + S->BN - 1) / S->BN);
    const int64_t ktiles = (k + 15) / 16, kfull = k / 16;
    double *sA = malloc(sizeof(double) * S->BM * 16), *sB = malloc(sizeof(double) * S->BN * 16);
    int *wa = malloc(sizeof(int) * S->BM * 16), *wb = malloc(sizeof(int) * S->BN * 16);
    double(*acc)[32][2][8][4] = malloc(sizeof(double) * 8 * 32 * 2 * 8 * 4); // [warp][lane][mt][nt][e]
    char *done = calloc((size_t)(grid_m * grid_n), 1);
    static frags16 f[32];
    static long addr[48][32];
    for (int pid = 0; pid < grid_m * grid_n; pid++) {
        int bm, bn;
        tile_of_block(pid, grid_m, grid_n, &bm, &bn);
        assert_true(bm < grid_m && bn < grid_n && !done[bm + bn * grid_m]);
        done[bm + bn * grid_m] = 1;
        const int64_t m0 = (int64_t)bm * S->BM, n0 = (int64_t)bn * S->BN;
        // `whole` does not depend on the thread: the kernel's branch on it is uniform
        thread16 T0a = thread_of(&La, m0, m, 0), T0b = thread_of(&Lb, n0, n, 0);
        const int whole = T0a.whole && T0b.whole;
        for (int tid = 1; tid < threads; tid++)
            assert_int_equal(thread_of(&La, m0, m, tid).whole && thread_of(&Lb, n0, n, tid).whole, whole);
        memset(acc, 0, sizeof(double) * 8 * 32 * 2 * 8 * 4);
        for (int64_t kt = 0; kt < ktiles; kt++) {
            for (int i = 0; i < S->BM * 16; i++) sA[i] = NAN, wa[i] = 0;
            for (int i = 0; i < S->BN * 16; i++) sB[i] = NAN, wb[i] = 0;
            const int fast = whole && kt < kfull; // the kernel's `whole && nk < kfull`
            fast ? E->fast_steps++ : E->bounded_steps++;
            emu_copy(E, &La, A, lda, m0, m, 16 * kt, k, sA, wa, fast);
            emu_copy(E, &Lb, B, ldb, n0, n, 16 * kt, k, sB, wb, fast);
            for (int i = 0; i < S->BM * 16; i++) assert_true(wa[i] <= 1 && (fast || wa[i] == 1));
            for (int i = 0; i < S->BN * 16; i++) assert_true(wb[i] <= 1 && (fast || wb[i] == 1));
            for (int w = 0; w < threads / 32; w++) {
                const int wm = w % warps_m, wn = w / warps_m;
                for (int lane = 0; lane < 32; lane++) emu_frags(E, &f[lane], sA, sB, wm, wn, lane, addr);
                for (int l = 0; l < 48; l++) {
                    int worst = slot8_worst(addr[l]);
                    if (worst > E->frag_worst) E->frag_worst = worst;
                    E->frag_loads++;
                }
                for (int mt = 0; mt < MT; mt++)
                    for (int nt = 0; nt < NT; nt++) {
                        double a[32][8], b[32][4], c[32][4];
                        for (int lane = 0; lane < 32; lane++) {
                            memcpy(a[lane], f[lane].a[mt], sizeof a[lane]);
                            memcpy(b[lane], f[lane].b[nt], sizeof b[lane]);
                            memcpy(c[lane], acc[w][lane][mt][nt], sizeof c[lane]);
                        }
                        ptx_mma_m16n8k16(c, a, b);
                        for (int lane = 0; lane < 32; lane++) memcpy(acc[w][lane][mt][nt], c[lane], sizeof c[lane]);
                    }
            }
        }
        // Epilogue: acc[mt][nt][2h + c] is row m0 + wm WM + 16 mt + g + 8h, column n0 + wn WN + 8 nt + 2t + c.
        for (int w = 0; w < threads / 32; w++) {
            const int wm = w % warps_m, wn = w / warps_m;
            for (int lane = 0; lane < 32; lane++) {
                const int g = lane >> 2, t = lane & 3;
                for (int mt = 0; mt < MT; mt++)
                    for (int nt = 0; nt < NT; nt++)
                        for (int h = 0; h < 2; h++)
                            for (int c = 0; c < 2; c++) {
                                const int64_t i = m0 + wm * S->WM + 16 * mt + g + 8 * h;
                                const int64_t j = n0 + wn * S->WN + 8 * nt + 2 * t + c;
                                if (i >= m || j >= n) continue;
                                double v = acc[w][lane][mt][nt][2 * h + c];
                                double *o = E->ct ? C + j + i * ldc : C + i + j * ldc;
                                *o = beta == 0.0 ? alpha * v : alpha * v + beta * *o;
                            }
            }
        }
    }
    for (int i = 0; i < grid_m * grid_n; i++) assert_true(done[i]);
    free(sA), free(sB), free(wa), free(wb), free(acc), free(done);
}

// One case: op(A) op(B) as the launcher runs it (TT as C^T = B A on the NN kernel).
static emu run(const d16shape *S, char ta, char tb, int64_t m, int64_t n, int64_t k, int beta_zero, uint64_t key) {
    const int64_t ar = ta == 'N' ? m : k, ac = ta == 'N' ? k : m, br = tb == 'N' ? k : n, bc = tb == 'N' ? n : k;
    const int64_t lda = ar + 4, ldb = br + 2, ldc = m + 3; // even lda, ldb: the 16-byte copy condition
    double *A = kt_alloc_fill('d', ar, ac, lda, key + 1), *B = kt_alloc_fill('d', br, bc, ldb, key + 2);
    double *C = kt_alloc_fill('d', m, n, ldc, key + 3);
    const double alpha = 0.625, beta = beta_zero ? 0.0 : -1.5;
    if (beta_zero)
        for (int64_t i = 0; i < ldc * n; i++) C[i] = NAN;
    double *C0 = kt_dup('d', C, ldc * n);
    kt_lc *ref = malloc((size_t)(m * n) * sizeof *ref);
    long double *bnd = malloc((size_t)(m * n) * sizeof *bnd);
    kt_naive('d', ta, tb, m, n, k, &alpha, A, lda, B, ldb, &beta, C0, ldc, ref, bnd);
    emu E = {.S = S};
    if (ta == 'T' && tb == 'T') {
        E.ct = 1, E.ak = 0, E.bk = 1; // C^T = B A with both as stored ('N'): the NN kernel on (n, m)
        emu_gemm(&E, n, m, k, alpha, B, ldb, A, lda, beta, C, ldc);
    } else {
        E.ak = ta != 'N', E.bk = tb == 'N';
        emu_gemm(&E, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    }
    const double err = kt_scaled_err('d', m, n, k, C, ldc, ref, bnd);
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = m; i < ldc; i++) assert_true(isnan(C[i + j * ldc])); // padding untouched
    printf("  %-7s %c%c %3lldx%3lldx%3lld beta %s: err %.3g, fragment loads %ld (worst %ld lanes per 8-byte slot "
           "and half-warp), copies %ld (%ld quarter-warp conflicts, %ld masked off), k-steps %ld by mask, %ld bounded\n",
           S->name, ta, tb, (long long)m, (long long)n, (long long)k, beta_zero ? "0" : "!=0", err, E.frag_loads,
           E.frag_worst, E.copies, E.copy_conflicts, E.skipped, E.fast_steps, E.bounded_steps);
    assert_true(err <= 2.0);
    assert_int_equal(E.frag_worst, 1);
    assert_int_equal(E.copy_conflicts, 0);
    assert_true(E.frag_loads > 0 && E.copies > 0);
    free(A), free(B), free(C), free(C0), free(ref), free(bnd);
    return E;
}

// Each layout's swizzle is a bijection onto the stage and keeps 16-byte chunks whole and in order.
static void test_d16_swizzle_bijection(void **state) {
    const int Rs[] = {64, 128};
    for (int r = 0; r < 2; r++)
        for (int km = 0; km < 2; km++) {
            const int R = Rs[r];
            int *seen = calloc((size_t)(R * 16), sizeof *seen);
            for (int x = 0; x < R; x++)
                for (int kk = 0; kk < 16; kk++) {
                    int o = swz(R, km, x, kk);
                    assert_true(o >= 0 && o < R * 16);
                    seen[o]++;
                    // the chunk partner (k + 1 for K-major, x + 1 for MN-major) sits right after
                    if (km && kk % 2 == 0) assert_int_equal(swz(R, km, x, kk + 1), o + 1);
                    if (!km && x % 2 == 0) assert_int_equal(swz(R, km, x + 1, kk), o + 1);
                }
            for (int i = 0; i < R * 16; i++) assert_int_equal(seen[i], 1);
            free(seen);
        }
}

// Bank mapping of every fragment load, written out: for each layout, tile and register index the
// 16 lanes of each half-warp land on 16 distinct 8-byte slots (checked without the replay).
static void test_d16_fragment_banks(void **state) {
    for (int s = 0; s < NSHAPES; s++) {
        const d16shape *S = &shapes[s];
        for (int km = 0; km < 2; km++) {
            // A: tiles mt of warp row wm, registers i; B: tiles nt of warp column wn, registers i
            for (int wm = 0; wm < S->BM / S->WM; wm++)
                for (int mt = 0; mt < S->WM / 16; mt++)
                    for (int i = 0; i < 8; i++) {
                        long addr[32];
                        for (int l = 0; l < 32; l++)
                            addr[l] = 8L * swz(S->BM, km, wm * S->WM + 16 * mt + (l >> 2) + 8 * (i % 2), (l & 3) + 4 * (i / 2));
                        assert_int_equal(slot8_worst(addr), 1);
                    }
            for (int wn = 0; wn < S->BN / S->WN; wn++)
                for (int nt = 0; nt < S->WN / 8; nt++)
                    for (int i = 0; i < 4; i++) {
                        long addr[32];
                        for (int l = 0; l < 32; l++)
                            addr[l] = 8L * swz(S->BN, km, wn * S->WN + 8 * nt + (l >> 2), (l & 3) + 4 * i);
                        assert_int_equal(slot8_worst(addr), 1);
                    }
        }
    }
    // And the unswizzled layouts would conflict (so the test can fail): K-major lines of 16 k put
    // rows g on the same slots (4-way per half-warp), MN-major lines put k t on the same slots.
    long addr[32];
    for (int l = 0; l < 32; l++) addr[l] = 8L * ((l >> 2) * 16 + (l & 3));
    assert_int_equal(slot8_worst(addr), 4);
    for (int l = 0; l < 32; l++) addr[l] = 8L * ((l & 3) * 128 + (l >> 2));
    assert_int_equal(slot8_worst(addr), 4);
}

// The stage ring of the unrolled k loop: step kt reads stage kt % STAGES (s), writes k-step
// kt + STAGES - 1 into stage (s + STAGES - 1) % STAGES, loads the next A fragments from (s + 1) % STAGES.
static void test_d16_stage_ring(void **state) {
    for (int s = 0; s < NSHAPES; s++) {
        const int ST = shapes[s].STAGES;
        for (int kt = 0; kt < 40; kt++) {
            const int rd = kt % ST, wr = (rd + ST - 1) % ST, nx = (rd + 1) % ST;
            const int nk = kt + ST - 1;
            assert_int_equal(wr, nk % ST);                // read back at step nk from the stage it went to
            if (kt > 0) assert_int_equal(wr, (kt - 1) % ST); // the stage of step kt-1: free after its barrier
            assert_true(wr != rd && wr != nx);            // never the stage read now or next
            assert_int_equal(nx, (kt + 1) % ST);          // the next step's A fragments
        }
    }
}

static const char ops[4][2] = {{'N', 'N'}, {'N', 'T'}, {'T', 'N'}, {'T', 'T'}};

// Every shape and op: odd edges (bounded copies at the edge blocks), k with a partial last step.
static void test_d16_replay_odd(void **state) {
    uint64_t key = 7000;
    for (int s = 0; s < NSHAPES; s++) {
        long fast = 0;
        for (int o = 0; o < 4; o++) {
            emu E = run(&shapes[s], ops[o][0], ops[o][1], shapes[s].BM + 19, shapes[s].BN + 5, 37, o & 1, key += 10);
            assert_true(E.bounded_steps > 0);
            fast += E.fast_steps;
        }
        assert_true(fast > 0);
    }
}

// Even edges: the masked copies skip the chunks outside the tile (stale NaN left in shared memory)
// and the result must not see them; several k-steps by mask, one bounded.
static void test_d16_replay_masked(void **state) {
    uint64_t key = 8000;
    for (int s = 0; s < NSHAPES; s++)
        for (int o = 0; o < 4; o++) {
            emu E = run(&shapes[s], ops[o][0], ops[o][1], 2 * shapes[s].BM - 6, shapes[s].BN + 10, 16 * 5 + 3, !(o & 1),
                        key += 10);
            assert_true(E.skipped > 0);
            assert_true(E.fast_steps > E.bounded_steps);
        }
}

// Tiny: one element, k = 1, fewer rows or columns than a warp tile, k a multiple of 16.
static void test_d16_replay_small(void **state) {
    static const int64_t dims[][3] = {{1, 1, 1}, {7, 9, 1}, {3, 70, 17}, {130, 2, 32}};
    uint64_t key = 9000;
    for (size_t d = 0; d < sizeof dims / sizeof dims[0]; d++)
        for (int o = 0; o < 4; o++) run(&shapes[0], ops[o][0], ops[o][1], dims[d][0], dims[d][1], dims[d][2], (int)(d + o) & 1, key += 10);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_d16_swizzle_bijection), cmocka_unit_test(test_d16_fragment_banks),
        cmocka_unit_test(test_d16_stage_ring),        cmocka_unit_test(test_d16_replay_odd),
        cmocka_unit_test(test_d16_replay_masked),     cmocka_unit_test(test_d16_replay_small),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
