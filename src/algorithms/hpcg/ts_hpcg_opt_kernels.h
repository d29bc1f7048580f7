// ts_hpcg_opt_kernels.h: HPCG's optimized kernels: argument structs, the per-row code shared by the CPU and CUDA versions, entry points.
//
// Every kernel of the optimized HPCG (problem generation, JPL colouring, the permuted sliced ELL,
// SpMV, the Gauss-Seidel colour sweeps, restriction, prolongation, WAXPBY, DDOT, halo packing)
// has one argument struct and two entry points with the ts_kernel contract (device/ts_device.h):
// ts_hpcg_xk_<name>_cpu(args) runs on host memory (OpenMP over rows; the CPU engine and the
// simulated devices run it) and ts_hpcg_xk_<name>_cuda(stream, args) enqueues the CUDA version
// (cuda/ts_hpcg_opt_kernels.cu). Both call the same per-row functions below, so a GPU kernel computes what
// the tested CPU code computes; only the rounding of fused multiply-adds and the order of DDOT's
// sums may differ.
//
// The optimized matrix of one level: rows permuted so that the rows of each colour are contiguous,
// and within a colour first the rows without halo columns, then the rows with some (rows next to
// another rank's box): two blocks per colour, block 2c and 2c + 1 (empty on one rank), each
// holding rows [r0, r0 + nr) in natural order. The diagonal is in its own vector, and each block
// has two column-major ELL parts: the lower entries (columns of earlier colours) and the upper ones
// (later colours and the halo columns, ids >= nrow). Entry j of the block's row i is at
// col[j*nr + i]; short rows are padded with column = the row itself and value 0. Keeping the rows
// with halo columns in blocks of their own keeps their extra entries from widening (padding) the
// ELL of every row of their colour.
#ifndef TS_HPCG_XK_H
#define TS_HPCG_XK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__CUDACC__)
#define TS_HPCG_ROW static __host__ __device__ __forceinline__
#else
#define TS_HPCG_ROW static inline
#endif
#if defined(__CUDA_ARCH__)
#define TS_HPCG_LD(p) __ldg(p)
#else
#define TS_HPCG_LD(p) (*(p))
#endif

#define TS_HPCG_MAX_COLORS 32 // JPL gives 2 colours per round; this stencil needs 8
#define TS_HPCG_MAX_BLOCKS (2 * TS_HPCG_MAX_COLORS) // block 2c: colour c's rows without halo columns, 2c + 1: with
#define TS_HPCG_SLOTS 27      // the natural ELL: slot s = (dz+1)*9 + (dy+1)*3 + (dx+1)
#define TS_HPCG_DIAG_SLOT 13

// One block of a colour (pointers into the level's storage).
typedef struct {
    int32_t r0, nr, wl, wu;
    int32_t *lcol, *ucol;
    double *lval, *uval;
} ts_hpcg_cblk;

// ---- setup: the natural problem, colouring, permutation, the sliced ELL ----

// The natural-order matrix of one level as a 27-slot ELL (col[s*nrow + i], -1 where the neighbour
// lies outside the global grid), values 26 (diagonal) and -1, and on the fine level b (26 minus the
// off-diagonal count: A * ones) and xexact = 1. External columns get the halo ids of the host
// generator: halo_off[slot of the neighbour's direction] plus the point's index in that neighbour's
// block (its free coordinates in z, y, x order).
typedef struct {
    int32_t nx, ny, nz, nrow;
    int64_t gx0, gy0, gz0, gnx, gny, gnz; // global coordinates of local (0,0,0); global grid
    int32_t halo_off[TS_HPCG_SLOTS];      // first halo id of the neighbour in that direction
    int32_t *col;
    double *val, *b, *xexact;             // b, xexact may be NULL
} ts_hpcg_xk_gen;

// One round of Jones-Plassmann-Luby colouring with min/max selection: an uncoloured row whose hash
// beats every uncoloured local neighbour's takes colour 2*round, one beaten by all takes 2*round+1.
// Rows coloured in this round count as uncoloured for the others, so the result does not depend
// on the order rows are visited. *left (zeroed by the caller) gets the rows still uncoloured.
typedef struct {
    int32_t nrow, round;
    const int32_t *col;
    int32_t *color, *left;
} ts_hpcg_xk_jpl;

// The coarse-grid points per colour (relabel 0: count[color of fine row (2kx, 2ky, 2kz)]++ for
// every coarse row k), then new colour labels (relabel 1: color[i] = map[color[i]]).
typedef struct {
    int32_t cnx, cny, cnz, fnx, fny, nrow;
    int relabel;
    int32_t map[TS_HPCG_MAX_COLORS];
    int32_t *color, *count;
} ts_hpcg_xk_recolor;

// Block statistics: each row's block key[i] = 2 * color[i] + (the row has a halo column), then
// stats[k] rows of block k, stats[M + k] widest lower part, stats[2M + k] widest upper part
// (M = TS_HPCG_MAX_BLOCKS), stats[3M] neighbours sharing a colour and rows without a valid colour
// (0 for a valid colouring). stats zeroed by the caller.
typedef struct {
    int32_t nrow;
    int split; // 0: every row in block 2 * colour (no halo blocks; TESSERA_HPCG_HALO_BLOCKS=0)
    const int32_t *col, *color;
    int32_t *key, *stats;
} ts_hpcg_xk_cstat;
#define TS_HPCG_CSTAT_LEN (3 * TS_HPCG_MAX_BLOCKS + 1)

// The permutation: rows sorted by block key, stably (natural order inside a block). perm[i] is the
// permuted position of natural row i, iperm its inverse. cstart[k]: first row of block k. The
// CUDA version sorts with CUB (keys, vals: nrow ints each; temp: ts_hpcg_xk_perm_temp_cuda bytes).
typedef struct {
    int32_t nrow, nblk;
    int32_t cstart[TS_HPCG_MAX_BLOCKS + 1];
    const int32_t *bkey;
    int32_t *perm, *iperm;
    int32_t *keys, *vals; // CUDA scratch
    void *temp;
    size_t temp_bytes;
} ts_hpcg_xk_perm;

// The sliced ELL in the permuted order from the natural ELL: row p = perm[i] takes natural row i's
// entries in slot order, local columns renumbered by perm, halo columns kept; the diagonal goes to
// diag[p]. blk: the level's block table (in the same memory as the data), indexed by bkey.
typedef struct {
    int32_t nrow;
    const int32_t *ecol, *iperm, *perm, *bkey;
    const double *eval;
    const ts_hpcg_cblk *blk;
    double *diag;
} ts_hpcg_xk_ell;

// Restriction pairs: coarse natural row k is fine natural row (2kx, 2ky, 2kz); fr[k] and cq[k] are
// their permuted rows.
typedef struct {
    int32_t cnx, cny, cnz, fnx, fny;
    const int32_t *fperm, *cperm;
    int32_t *fr, *cq;
} ts_hpcg_xk_f2c;

// out[k] = map[in[k]], k < n (halo send lists into permuted rows).
typedef struct {
    int32_t n;
    const int32_t *map, *in;
    int32_t *out;
} ts_hpcg_xk_remap;

// ---- the solver's kernels ----

// Colour sweeps of one block (rows p = b.r0 + i):
//   FWD0  (forward, x = 0 so far): x_p = (r_p - L_p x) / d_p
//   BWD0  (backward after FWD0):   x_p = (d_p x_p - U_p x) / d_p
//   FWD   (forward):               t_p = U_p x; x_p = (r_p - L_p x - t_p) / d_p
//   BWD_T (backward after FWD):    x_p = (d_p x_p + t_p - U_p x) / d_p
//   SPMV:                          y_p = L_p x + d_p x_p + U_p x
// FWD0 + BWD0 is one SYMGS from x = 0 in colour order, FWD + BWD_T one SYMGS from any x: the
// backward sweep reuses the forward sweep's r_p - L_p x (= d_p x_p + t_p), so it reads only U.
typedef enum { TS_HPCG_FWD0 = 0, TS_HPCG_BWD0 = 1, TS_HPCG_FWD = 2, TS_HPCG_BWD_T = 3, TS_HPCG_SPMV = 4 } ts_hpcg_sweep_mode;
// A sweep covers both blocks of a colour, b (no halo columns) then h (rows b.nr ..).
typedef struct {
    ts_hpcg_cblk b, h;
    int mode;
    const double *r, *diag; // r: the right-hand side (SPMV: unused)
    double *x, *t;          // SPMV: x is read, t is y
} ts_hpcg_xk_sweep;

// SpMV y = A x over every block of a level in one launch (the sweeps' SPMV row code, so y is the
// same bit for bit). Rows carry no dependencies here, so the CUDA kernel takes them position-major:
// thread block j handles rows [c TPB, (c + 1) TPB) of block ord[k] with c = j / nb, k = j % nb, and
// the blocks running at any time cover one stretch of the box in every colour. The x values they
// gather then stay in L2 between the colours, where colour by colour each colour re-read from
// memory the x of all the others (~7 x 134 MB at 256^3, against 5.4 GB of matrix).
typedef struct {
    int32_t nb, maxnr;                     // non-empty blocks, listed in ord; rows of the largest
    uint8_t ord[TS_HPCG_MAX_BLOCKS];       // their indices in blk
    const ts_hpcg_cblk *blk;               // the level's block table (executor memory: xblk)
    const double *diag, *x;
    double *y;
} ts_hpcg_xk_spmv;

// The same when the pairs' fine rows are rows 0 .. b.nr - 1 of one block b, in order (fr[k] =
// b.r0 + k: the coarse points are one colour, kept in natural order; one rank): no search for the
// block, its fields kernel parameters, the rows read in order.
typedef struct {
    ts_hpcg_cblk b;
    const int32_t *cq;
    const double *r, *diag, *x;
    double *rc;
} ts_hpcg_xk_restrict1;

// Residual at the coarse points, restricted: rc[cq[k]] = r[f] - A_f x with f = fr[k], k < n.
typedef struct {
    int32_t n, nblk;
    const int32_t *fr, *cq;
    const ts_hpcg_cblk *blk; // the fine level's block table
    const double *r, *diag, *x;
    double *rc;
} ts_hpcg_xk_restrict;

// Prolongation: x[fr[k]] += xc[cq[k]], k < n.
typedef struct {
    int32_t n;
    const int32_t *fr, *cq;
    const double *xc;
    double *x;
} ts_hpcg_xk_prolong;

// w = alpha x + beta y (n entries).
typedef struct {
    int32_t n;
    double alpha, beta;
    const double *x, *y;
    double *w;
} ts_hpcg_xk_waxpby;

// out[0] = x . y (n entries). CUDA: per-block partial sums in part (TS_HPCG_DOT_BLOCKS doubles),
// then one block adds them in a fixed order.
#define TS_HPCG_DOT_BLOCKS 1024
typedef struct {
    int32_t n;
    const double *x, *y;
    double *out, *part;
} ts_hpcg_xk_dot;

// Gathers and scatters through an index: PACK out[k] = in[idx[k]] (halo send buffer, and
// permuted -> natural); SCATTER out[idx[k]] = in[k] (natural -> permuted); SCALE out[idx[k]] *= in[k]
// (TestCG's diagonal).
typedef enum { TS_HPCG_PACK = 0, TS_HPCG_SCATTER = 1, TS_HPCG_SCALE = 2 } ts_hpcg_index_mode;
typedef struct {
    int32_t n;
    int mode;
    const int32_t *idx;
    const double *in;
    double *out;
} ts_hpcg_xk_index;

// ---- per-row code (host and device) ----

TS_HPCG_ROW uint32_t ts_hpcg_hash(uint32_t v) { // bit reversal: a bijection, so hashes never tie
    v = ((v >> 1) & 0x55555555u) | ((v & 0x55555555u) << 1);
    v = ((v >> 2) & 0x33333333u) | ((v & 0x33333333u) << 2);
    v = ((v >> 4) & 0x0F0F0F0Fu) | ((v & 0x0F0F0F0Fu) << 4);
    v = ((v >> 8) & 0x00FF00FFu) | ((v & 0x00FF00FFu) << 8);
    return (v >> 16) | (v << 16);
}

TS_HPCG_ROW void ts_hpcg_gen_row(const ts_hpcg_xk_gen *a, int32_t i) {
    const int32_t nx = a->nx, ny = a->ny, nz = a->nz, n = a->nrow;
    const int32_t ix = i % nx, iy = (i / nx) % ny, iz = i / (nx * ny);
    int cnt = 0;
    for (int s = 0; s < TS_HPCG_SLOTS; s++) {
        const int sz = s / 9 - 1, sy = (s / 3) % 3 - 1, sx = s % 3 - 1;
        const int32_t lx = ix + sx, ly = iy + sy, lz = iz + sz;
        const int64_t gx = a->gx0 + lx, gy = a->gy0 + ly, gz = a->gz0 + lz;
        int32_t c = -1;
        if (gx >= 0 && gx < a->gnx && gy >= 0 && gy < a->gny && gz >= 0 && gz < a->gnz) {
            const int dx = lx < 0 ? -1 : lx >= nx, dy = ly < 0 ? -1 : ly >= ny, dz = lz < 0 ? -1 : lz >= nz;
            if (!dx && !dy && !dz) {
                c = (lz * ny + ly) * nx + lx;
            } else {
                int32_t k = 0;
                if (!dz) k = lz;
                if (!dy) k = k * ny + ly;
                if (!dx) k = k * nx + lx;
                c = a->halo_off[(dz + 1) * 9 + (dy + 1) * 3 + (dx + 1)] + k;
            }
            cnt++;
        }
        a->col[(int64_t)s * n + i] = c;
        a->val[(int64_t)s * n + i] = c < 0 ? 0.0 : s == TS_HPCG_DIAG_SLOT ? 26.0 : -1.0;
    }
    if (a->b) a->b[i] = 26.0 - (double)(cnt - 1);
    if (a->xexact) a->xexact[i] = 1.0;
}

// Returns 1 when row i is still uncoloured after this round.
TS_HPCG_ROW int ts_hpcg_jpl_row(const ts_hpcg_xk_jpl *a, int32_t i) {
    const int32_t n = a->nrow, done = 2 * a->round; // colours < done were given in earlier rounds
    const int32_t ci = a->color[i];
    if (ci >= 0 && ci < done) return 0;
    const uint32_t h = ts_hpcg_hash((uint32_t)i);
    int top = 1, bottom = 1;
    for (int s = 0; s < TS_HPCG_SLOTS; s++) {
        const int32_t j = a->col[(int64_t)s * n + i];
        if (j < 0 || j >= n || j == i) continue;
        const int32_t cj = a->color[j];
        if (cj >= 0 && cj < done) continue;
        if (ts_hpcg_hash((uint32_t)j) > h) top = 0;
        else bottom = 0;
    }
    if (top) a->color[i] = done;
    else if (bottom) a->color[i] = done + 1;
    else return 1;
    return 0;
}

// Lower count, upper count (halo included), halo count and same-colour neighbours of row i.
TS_HPCG_ROW void ts_hpcg_cstat_row(const ts_hpcg_xk_cstat *a, int32_t i, int *nl, int *nu, int *nh, int *same) {
    const int32_t n = a->nrow, ci = a->color[i];
    *nl = *nu = *nh = *same = 0;
    for (int s = 0; s < TS_HPCG_SLOTS; s++) {
        const int32_t j = a->col[(int64_t)s * n + i];
        if (j < 0 || j == i) continue;
        if (j >= n) (*nu)++, (*nh)++;
        else if (a->color[j] < ci) (*nl)++;
        else if (a->color[j] > ci) (*nu)++;
        else (*same)++;
    }
}

TS_HPCG_ROW void ts_hpcg_ell_row(const ts_hpcg_xk_ell *a, int32_t p) {
    const int32_t n = a->nrow, i = a->iperm[p];
    const ts_hpcg_cblk b = a->blk[a->bkey[i]];
    const int32_t k = p - b.r0;
    int nl = 0, nu = 0;
    for (int s = 0; s < TS_HPCG_SLOTS; s++) {
        const int32_t j = a->ecol[(int64_t)s * n + i];
        if (j < 0) continue;
        const double v = a->eval[(int64_t)s * n + i];
        if (j == i) {
            a->diag[p] = v;
        } else if (j < n && a->perm[j] < b.r0) {
            b.lcol[(int64_t)nl * b.nr + k] = a->perm[j];
            b.lval[(int64_t)nl++ * b.nr + k] = v;
        } else {
            b.ucol[(int64_t)nu * b.nr + k] = j < n ? a->perm[j] : j;
            b.uval[(int64_t)nu++ * b.nr + k] = v;
        }
    }
    for (; nl < b.wl; nl++) {
        b.lcol[(int64_t)nl * b.nr + k] = p;
        b.lval[(int64_t)nl * b.nr + k] = 0.0;
    }
    for (; nu < b.wu; nu++) {
        b.ucol[(int64_t)nu * b.nr + k] = p;
        b.uval[(int64_t)nu * b.nr + k] = 0.0;
    }
}

// The natural fine row of natural coarse row k (injection: coarse (kx, ky, kz) is fine (2kx, 2ky, 2kz)).
TS_HPCG_ROW int32_t ts_hpcg_f2c_nat(int32_t k, int32_t cnx, int32_t cny, int32_t fnx, int32_t fny) {
    const int32_t kx = k % cnx, ky = (k / cnx) % cny, kz = k / (cnx * cny);
    return (int32_t)(((int64_t)2 * kz * fny + 2 * ky) * fnx + 2 * kx);
}

TS_HPCG_ROW void ts_hpcg_f2c_row(const ts_hpcg_xk_f2c *a, int32_t k) {
    a->fr[k] = a->fperm[ts_hpcg_f2c_nat(k, a->cnx, a->cny, a->fnx, a->fny)];
    a->cq[k] = a->cperm[k];
}

// sum over j < w of val[j*ld + i] * x[col[j*ld + i]]
TS_HPCG_ROW double ts_hpcg_ell_dot(const int32_t *col, const double *val, int64_t ld, int w, int64_t i,
                                   const double *x) {
    double s = 0.0;
#if defined(__CUDA_ARCH__)
    // Groups of 8 entries (the last one predicated): all their loads in flight before the first
    // product; the products are added in the same order as on the host.
#pragma unroll 1
    for (int j = 0; j < w; j += 8) {
        int32_t c[8];
        double v[8], xv[8];
#pragma unroll
        for (int k = 0; k < 8; k++)
            if (j + k < w) {
                c[k] = TS_HPCG_LD(col + (j + k) * ld + i);
                v[k] = TS_HPCG_LD(val + (j + k) * ld + i);
            }
#pragma unroll
        for (int k = 0; k < 8; k++)
            if (j + k < w) xv[k] = TS_HPCG_LD(x + c[k]);
#pragma unroll
        for (int k = 0; k < 8; k++)
            if (j + k < w) s += v[k] * xv[k];
    }
#else
    for (int j = 0; j < w; j++) s += val[j * ld + i] * x[col[j * ld + i]];
#endif
    return s;
}

// Row i of block b (&a->b or &a->h). mode: a->mode (the CUDA kernels pass it as a constant of a
// template instance). The CUDA kernel gives each thread block rows of one block only and calls
// this once per block with a constant pointer, so the block's fields stay kernel parameters
// (choosing between them per thread put them in registers and the kernels spilled).
TS_HPCG_ROW void ts_hpcg_sweep_row(const ts_hpcg_xk_sweep *a, const ts_hpcg_cblk *b, int mode, int32_t i) {
    const int32_t p = b->r0 + i;
    const double d = a->diag[p];
    switch (mode) {
    case TS_HPCG_FWD0:
        a->x[p] = (a->r[p] - ts_hpcg_ell_dot(b->lcol, b->lval, b->nr, b->wl, i, a->x)) / d;
        break;
    case TS_HPCG_BWD0:
        a->x[p] = (d * a->x[p] - ts_hpcg_ell_dot(b->ucol, b->uval, b->nr, b->wu, i, a->x)) / d;
        break;
    case TS_HPCG_FWD: {
        const double sl = ts_hpcg_ell_dot(b->lcol, b->lval, b->nr, b->wl, i, a->x);
        const double su = ts_hpcg_ell_dot(b->ucol, b->uval, b->nr, b->wu, i, a->x);
        a->t[p] = su;
        a->x[p] = (a->r[p] - sl - su) / d;
        break;
    }
    case TS_HPCG_BWD_T:
        a->x[p] = (d * a->x[p] + a->t[p] - ts_hpcg_ell_dot(b->ucol, b->uval, b->nr, b->wu, i, a->x)) / d;
        break;
    default: { // SPMV
        const double sl = ts_hpcg_ell_dot(b->lcol, b->lval, b->nr, b->wl, i, a->x);
        const double su = ts_hpcg_ell_dot(b->ucol, b->uval, b->nr, b->wu, i, a->x);
        a->t[p] = sl + d * a->x[p] + su;
        break;
    }
    }
}

// The block holding permuted row f: the last block whose first row is <= f (r0 does not decrease;
// an empty block shares the next one's r0, so the last of equal r0 is the one holding f), by binary
// search: four steps for 16 blocks. blk[0].r0 = 0 <= f.
TS_HPCG_ROW int ts_hpcg_block_of(const ts_hpcg_cblk *blk, int nblk, int32_t f) {
    int lo = 0, hi = nblk - 1;
    while (lo < hi) {
        const int mid = (lo + hi + 1) / 2;
        if (blk[mid].r0 <= f) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

TS_HPCG_ROW void ts_hpcg_restrict_row(const ts_hpcg_xk_restrict *a, int32_t k) {
    const int32_t f = a->fr[k];
    const ts_hpcg_cblk *b = &a->blk[ts_hpcg_block_of(a->blk, a->nblk, f)];
    const int32_t i = f - b->r0;
    const double sl = ts_hpcg_ell_dot(b->lcol, b->lval, b->nr, b->wl, i, a->x);
    const double su = ts_hpcg_ell_dot(b->ucol, b->uval, b->nr, b->wu, i, a->x);
    a->rc[a->cq[k]] = a->r[f] - (sl + a->diag[f] * a->x[f] + su);
}

TS_HPCG_ROW void ts_hpcg_restrict1_row(const ts_hpcg_xk_restrict1 *a, int32_t i) {
    const ts_hpcg_cblk *b = &a->b;
    const int32_t f = b->r0 + i;
    const double sl = ts_hpcg_ell_dot(b->lcol, b->lval, b->nr, b->wl, i, a->x);
    const double su = ts_hpcg_ell_dot(b->ucol, b->uval, b->nr, b->wu, i, a->x);
    a->rc[a->cq[i]] = a->r[f] - (sl + a->diag[f] * a->x[f] + su);
}

TS_HPCG_ROW void ts_hpcg_index_row(const ts_hpcg_xk_index *a, int32_t k) {
    if (a->mode == TS_HPCG_PACK) a->out[k] = a->in[a->idx[k]];
    else if (a->mode == TS_HPCG_SCATTER) a->out[a->idx[k]] = a->in[k];
    else a->out[a->idx[k]] *= a->in[k];
}

// ---- entry points ----
#define TS_HPCG_XK_DECLARE(name)                                                                   \
    int ts_hpcg_xk_##name##_cpu(void *args);                                                      \
    int ts_hpcg_xk_##name##_cuda(void *native_stream, void *args);
TS_HPCG_XK_DECLARE(gen)
TS_HPCG_XK_DECLARE(jpl)
TS_HPCG_XK_DECLARE(recolor)
TS_HPCG_XK_DECLARE(cstat)
TS_HPCG_XK_DECLARE(perm)
TS_HPCG_XK_DECLARE(ell)
TS_HPCG_XK_DECLARE(f2c)
TS_HPCG_XK_DECLARE(remap)
TS_HPCG_XK_DECLARE(sweep)
TS_HPCG_XK_DECLARE(spmv)
TS_HPCG_XK_DECLARE(restrict)
TS_HPCG_XK_DECLARE(restrict1)
TS_HPCG_XK_DECLARE(prolong)
TS_HPCG_XK_DECLARE(waxpby)
TS_HPCG_XK_DECLARE(dot)
TS_HPCG_XK_DECLARE(index)
// Bytes of CUB scratch ts_hpcg_xk_perm_cuda needs for nrow rows (CUDA builds only).
int ts_hpcg_xk_perm_temp_cuda(int32_t nrow, size_t *bytes);

#ifdef __cplusplus
}
#endif

#endif
