// ts_hpcg_optimize.c: HPCG's OptimizeProblem: JPL colours, their order, the permutation and the sliced ELL blocks.
#include <stdlib.h>
#include <string.h>

#include "algorithms/hpcg/ts_hpcg_opt.h"
#include "core/ts_error.h"

// Memory of `count` elements of *ptr from the executor (as in ts_hpcg_setup.c).
#define XA(ptr, count) ts_hpcg_xalloc(&O->X, sizeof(*(ptr)) * (size_t)(count), (void **)&(ptr))

// Orders the colours by how many coarse-grid (injection) points they hold, fewest first (ties: in
// JPL's order). Gauss-Seidel's last colour in the forward order is the first of the backward sweep,
// so the coarse points then see the updates of all their neighbours before the residual is
// restricted, and multigrid keeps the convergence of the natural order (50 iterations against
// 53-55 with JPL's order on 32^3-128^3; tests/hpcg checks it).
//
// On grids whose x and y extents are powers of two the bit-reversal hash makes JPL's colours the
// eight parity classes of (x, y, z), always with the same labels, and the order found by
// bench/hpcg_orders (coordinate descent over the levels at 256^3, bench/NOTES.md) is used instead:
// it reaches the reference's drop in 50 iterations at 256^3 where the rule above needs 52 (both
// 50 at 128^3 and 64^3; at 32^3 the rule 49 and the searched order 51: used from 128^3 up).
static const int searched_order[TS_HPCG_MG_LEVELS - 1][8] = {
    {0, 2, 3, 4, 7, 6, 5, 1}, {0, 2, 3, 4, 5, 7, 6, 1}, {0, 2, 3, 5, 4, 6, 7, 1}};

static int pow2(int v) { return v > 0 && (v & (v - 1)) == 0; }

static int order_colours(ts_hpcg_opt *O, ts_hpcg_olevel *L, int level, int ncol, int32_t *hs) {
    const ts_hpcg_exec *X = &O->X;
    const ts_hpcg_olevel *C = L->coarse;
    const int M = TS_HPCG_MAX_COLORS;
    int fixed = level < TS_HPCG_MG_LEVELS ? O->norder[level] : 0;
    const int *given = fixed > 0 ? O->order[level] : NULL;
    const ts_hpcg_geom *fg = &O->A->g;
    const int big = fg->nx >= 128 && fg->ny >= 128 && fg->nz >= 128;
    if (!fixed && big && C && ncol == 8 && level < TS_HPCG_MG_LEVELS - 1 && pow2(L->g.nx) && pow2(L->g.ny)) {
        fixed = 8;
        given = searched_order[level];
    }
    if (fixed < 0) fixed = 0; // the rule by coarse points
    if (!C && !fixed) return 0;
    ts_hpcg_xk_recolor a;
    memset(&a, 0, sizeof a);
    a.nrow = L->nrow;
    a.color = L->color;
    a.count = O->scratch;
    int ord[TS_HPCG_MAX_COLORS];
    if (fixed) {
        if (fixed != ncol)
            TS_RAISE(TS_ERR_ARG, "hpcg: a colour order of %d colours for a level of %d", fixed, ncol);
        memcpy(ord, given, sizeof(int) * (size_t)ncol);
    } else {
        a.cnx = C->g.nx;
        a.cny = C->g.ny;
        a.cnz = C->g.nz;
        a.fnx = L->g.nx;
        a.fny = L->g.ny;
        TS_CHECK(ts_hpcg_xmemset(X, O->scratch, 0, sizeof(int32_t) * (size_t)M));
        TS_CHECK(TS_HPCG_XRUN(X, recolor, a));
        TS_CHECK(ts_hpcg_xcopy(X, TS_COPY_D2H, hs, O->scratch, sizeof(int32_t) * (size_t)M));
        TS_CHECK(ts_hpcg_xsync(X));
        for (int c = 0; c < ncol; c++) { // insertion sort: stable
            int k = c;
            for (; k > 0 && hs[ord[k - 1]] > hs[c]; k--) ord[k] = ord[k - 1];
            ord[k] = c;
        }
    }
    for (int c = 0; c < ncol; c++) a.map[ord[c]] = c;
    a.relabel = 1;
    return TS_HPCG_XRUN(X, recolor, a);
}

// Jones-Plassmann-Luby rounds until every row has a colour; then the colour blocks' sizes and
// widths, checking that no two neighbours share a colour.
static int colour_level(ts_hpcg_opt *O, ts_hpcg_olevel *L, int level, int32_t *stats) {
    const ts_hpcg_exec *X = &O->X;
    int32_t *hs = (int32_t *)O->dot_host; // pinned host staging (TS_HPCG_CSTAT_LEN + 1 ints fit)
    const int M = TS_HPCG_MAX_COLORS;
    TS_CHECK(ts_hpcg_xmemset(X, L->color, 0xFF, sizeof(int32_t) * (size_t)L->nrow)); // -1
    int round = 0;
    for (;; round++) {
        if (2 * round >= M)
            TS_RAISE(TS_ERR_UNSUPPORTED, "hpcg: the colouring of the %d x %d x %d level needs more than %d colours",
                     L->g.nx, L->g.ny, L->g.nz, M);
        ts_hpcg_xk_jpl a = {L->nrow, round, L->ecol, L->color, O->scratch};
        TS_CHECK(ts_hpcg_xmemset(X, O->scratch, 0, sizeof(int32_t)));
        TS_CHECK(TS_HPCG_XRUN(X, jpl, a));
        TS_CHECK(ts_hpcg_xcopy(X, TS_COPY_D2H, hs, O->scratch, sizeof(int32_t)));
        TS_CHECK(ts_hpcg_xsync(X));
        if (hs[0] == 0) break;
    }
    TS_CHECK(order_colours(O, L, level, 2 * (round + 1), hs));
    if (!L->bkey) TS_CHECK(XA(L->bkey, L->nrow));
    ts_hpcg_xk_cstat a = {L->nrow, O->halo_blocks, L->ecol, L->color, L->bkey, O->scratch};
    TS_CHECK(ts_hpcg_xmemset(X, O->scratch, 0, sizeof(int32_t) * TS_HPCG_CSTAT_LEN));
    TS_CHECK(TS_HPCG_XRUN(X, cstat, a));
    TS_CHECK(ts_hpcg_xcopy(X, TS_COPY_D2H, hs, O->scratch, sizeof(int32_t) * TS_HPCG_CSTAT_LEN));
    TS_CHECK(ts_hpcg_xsync(X));
    memcpy(stats, hs, sizeof(int32_t) * TS_HPCG_CSTAT_LEN);
    const int MB = TS_HPCG_MAX_BLOCKS;
    if (stats[3 * MB])
        TS_RAISE(TS_ERR_INTERNAL, "hpcg: the colouring of the %d x %d x %d level is not valid (%d conflicts)",
                 L->g.nx, L->g.ny, L->g.nz, stats[3 * MB]);
    L->ncolors = 0;
    for (int k = 0; k < MB; k++)
        if (stats[k]) L->ncolors = k / 2 + 1;
    L->nblk = 2 * L->ncolors;
    return 0;
}

// The blocks, the permutation and the sliced ELL.
static int permute_level(ts_hpcg_opt *O, ts_hpcg_olevel *L, const int32_t *stats) {
    const ts_hpcg_exec *X = &O->X;
    const int M = TS_HPCG_MAX_BLOCKS;
    int rc = 0;
    ts_hpcg_xk_perm pa;
    memset(&pa, 0, sizeof pa);
    pa.nrow = L->nrow;
    pa.nblk = L->nblk;
    L->nlower = L->nupper = 0;
    for (int c = 0, r0 = 0; c < L->nblk; c++) {
        pa.cstart[c] = r0;
        L->blk[c].r0 = r0;
        L->blk[c].nr = stats[c];
        L->blk[c].wl = stats[M + c];
        L->blk[c].wu = stats[2 * M + c];
        L->nlower += (int64_t)stats[c] * stats[M + c];
        L->nupper += (int64_t)stats[c] * stats[2 * M + c];
        r0 += stats[c];
        pa.cstart[c + 1] = r0;
    }
    TS_CHECK(XA(L->lcol, L->nlower));
    TS_CHECK(XA(L->lval, L->nlower));
    TS_CHECK(XA(L->ucol, L->nupper));
    TS_CHECK(XA(L->uval, L->nupper));
    TS_CHECK(XA(L->xblk, L->nblk));
    for (int c = 0, lo = 0, uo = 0; c < L->nblk; c++) {
        L->blk[c].lcol = L->lcol + lo;
        L->blk[c].lval = L->lval + lo;
        L->blk[c].ucol = L->ucol + uo;
        L->blk[c].uval = L->uval + uo;
        lo += L->blk[c].nr * L->blk[c].wl;
        uo += L->blk[c].nr * L->blk[c].wu;
    }
    TS_CHECK(ts_hpcg_xcopy(X, TS_COPY_H2D, L->xblk, L->blk, sizeof(ts_hpcg_cblk) * (size_t)L->nblk));
    // The permutation (stable by block); the CUDA version sorts with CUB in scratch memory.
    int32_t *iperm = NULL;
    TS_CHECK_GOTO(XA(iperm, L->nrow), rc, out);
    pa.bkey = L->bkey;
    pa.perm = L->perm;
    pa.iperm = iperm;
    if (X->cuda) {
        TS_CHECK_GOTO(ts_hpcg_xk_perm_temp_cuda(L->nrow, &pa.temp_bytes), rc, out);
        TS_CHECK_GOTO(XA(pa.keys, L->nrow), rc, out);
        TS_CHECK_GOTO(XA(pa.vals, L->nrow), rc, out);
        TS_CHECK_GOTO(ts_hpcg_xalloc(X, pa.temp_bytes, &pa.temp), rc, out);
    }
    TS_CHECK_GOTO(TS_HPCG_XRUN(X, perm, pa), rc, out);
    ts_hpcg_xk_ell ea = {L->nrow, L->ecol, iperm, L->perm, L->bkey, L->eval, L->xblk, L->diag};
    TS_CHECK_GOTO(TS_HPCG_XRUN(X, ell, ea), rc, out);
    rc = ts_hpcg_xsync(X);
out:
    ts_hpcg_xsync(X);
    ts_hpcg_xfree(X, L->bkey);
    L->bkey = NULL;
    ts_hpcg_xfree(X, iperm);
    ts_hpcg_xfree(X, pa.keys);
    ts_hpcg_xfree(X, pa.vals);
    ts_hpcg_xfree(X, pa.temp);
    return rc;
}

// The halo send lists in permuted rows.
static int remap_sends(ts_hpcg_opt *O, ts_hpcg_olevel *L) {
    const ts_hpcg_exec *X = &O->X;
    const int32_t ns = L->halo.nsend;
    if (!ns) return 0;
    int32_t *nat = NULL;
    int rc = 0;
    TS_CHECK(XA(nat, ns));
    TS_CHECK_GOTO(ts_hpcg_xcopy(X, TS_COPY_H2D, nat, L->send_nat, sizeof(int32_t) * (size_t)ns), rc, out);
    ts_hpcg_xk_remap a = {ns, L->perm, nat, L->xsend};
    rc = TS_HPCG_XRUN(X, remap, a);
out:
    if (ts_hpcg_xsync(X) < 0 && rc == 0) rc = ts_error_last()->code;
    ts_hpcg_xfree(X, nat);
    return rc;
}

// The restriction pairs whose fine row lies in a halo block (it reads halo values) moved after the
// others, each group in its order; nr_inner counts the others. The pairs are independent, so the
// order changes no result; the restriction of two ranks runs as fast as one GPU's that way (0.505
// -> 0.415 ms at 256^3: pairs of two blocks no longer share a warp). Timed as optimization, which
// HPCG charges a tenth of per CG set: the block by binary search, the flags in parallel (a first version, one
// thread with a loop over the blocks per pair, took 75 ms and cost the two-rank rating 1.4%).
static int inner_pairs_first(ts_hpcg_opt *O, ts_hpcg_olevel *L) {
    const ts_hpcg_exec *X = &O->X;
    const int32_t n = L->coarse->nrow;
    L->nr_inner = n;
    int any = 0;
    for (int c = 1; c < L->nblk; c += 2) any |= L->blk[c].nr > 0;
    if (!any) return 0;
    int rc = 0;
    int32_t *h = malloc(sizeof(int32_t) * 4 * (size_t)n);
    unsigned char *flag = malloc((size_t)n);
    if (!h || !flag) {
        free(h);
        free(flag);
        TS_RAISE(TS_ERR_NOMEM, "hpcg: out of memory");
    }
    int32_t *fr = h, *cq = h + n, *fr2 = h + 2 * (size_t)n, *cq2 = h + 3 * (size_t)n;
    TS_CHECK_GOTO(ts_hpcg_xcopy(X, TS_COPY_D2H, fr, L->fr, sizeof(int32_t) * (size_t)n), rc, out);
    TS_CHECK_GOTO(ts_hpcg_xcopy(X, TS_COPY_D2H, cq, L->cq, sizeof(int32_t) * (size_t)n), rc, out);
    TS_CHECK_GOTO(ts_hpcg_xsync(X), rc, out);
    const ts_hpcg_cblk *blk = L->blk;
    const int nblk = L->nblk;
    int32_t inner = 0;
#pragma omp parallel reduction(+ : inner)
    {
        // The block of fr[k] (odd: a halo block), found as the restriction kernel finds it. fr mostly
        // rises within a block, so the previous pair's block is tried first and the search runs only
        // where it changes.
        int cur = -1;
        int32_t cur_lo = 0, cur_hi = 0; // rows [cur_lo, cur_hi) belong to block cur
#pragma omp for schedule(static)
        for (int32_t k = 0; k < n; k++) {
            const int32_t f = fr[k];
            if (cur < 0 || f < cur_lo || f >= cur_hi) {
                cur = ts_hpcg_block_of(blk, nblk, f);
                cur_lo = blk[cur].r0;
                cur_hi = blk[cur].r0 + blk[cur].nr; // f lies in [r0, r0 + nr) of the block found
            }
            flag[k] = (unsigned char)(cur & 1);
            inner += !(cur & 1);
        }
    }
    L->nr_inner = inner;
    if (inner == n) goto out;
    int32_t a = 0, b = inner;
    for (int32_t k = 0; k < n; k++) {
        const int32_t m = flag[k] ? b++ : a++;
        fr2[m] = fr[k];
        cq2[m] = cq[k];
    }
    if (a != inner || b != n) {
        rc = TS_ERROR(TS_ERR_STATE, "hpcg: restriction pairs partitioned %d + %d, expected %d + %d", a, b - inner,
                      inner, n - inner);
        goto out;
    }
    TS_CHECK_GOTO(ts_hpcg_xcopy(X, TS_COPY_H2D, L->fr, fr2, sizeof(int32_t) * (size_t)n), rc, out);
    TS_CHECK_GOTO(ts_hpcg_xcopy(X, TS_COPY_H2D, L->cq, cq2, sizeof(int32_t) * (size_t)n), rc, out);
    TS_CHECK_GOTO(ts_hpcg_xsync(X), rc, out);
out:
    free(h);
    free(flag);
    return rc;
}

// Whether the restriction pairs without halo columns (the first nr_inner) have as fine rows one
// block's rows in order (L->rblk; the coarse points are one colour, and its rows without halo
// columns one block).
static int restrict_block(ts_hpcg_opt *O, ts_hpcg_olevel *L) {
    const ts_hpcg_exec *X = &O->X;
    const int32_t n = L->nr_inner;
    L->rblk = -1;
    if (n <= 0) return 0;
    int32_t *fr = malloc(sizeof(int32_t) * (size_t)n);
    if (!fr) TS_RAISE(TS_ERR_NOMEM, "hpcg: out of memory");
    int rc = ts_hpcg_xcopy(X, TS_COPY_D2H, fr, L->fr, sizeof(int32_t) * (size_t)n);
    if (rc == 0) rc = ts_hpcg_xsync(X);
    if (rc == 0) {
        const int b = ts_hpcg_block_of(L->blk, L->nblk, fr[0]);
        int ok = L->blk[b].r0 == fr[0] && L->blk[b].nr == n;
        for (int32_t k = 1; ok && k < n; k++) ok = fr[k] == fr[0] + k;
        if (ok) L->rblk = b;
    }
    free(fr);
    return rc;
}

int ts_hpcg_opt_optimize(ts_hpcg_opt *O) {
    const ts_hpcg_exec *X = &O->X;
    int32_t stats[TS_HPCG_CSTAT_LEN];
    int level = 0;
    for (ts_hpcg_olevel *L = O->A; L; L = L->coarse, level++) {
        TS_CHECK(colour_level(O, L, level, stats));
        TS_CHECK(permute_level(O, L, stats));
        TS_CHECK(remap_sends(O, L));
    }
    for (ts_hpcg_olevel *L = O->A; L->coarse; L = L->coarse) {
        const ts_hpcg_olevel *C = L->coarse;
        ts_hpcg_xk_f2c a = {C->g.nx, C->g.ny, C->g.nz, L->g.nx, L->g.ny, L->perm, C->perm, L->fr, L->cq};
        TS_CHECK(TS_HPCG_XRUN(X, f2c, a));
        TS_CHECK(inner_pairs_first(O, L));
        TS_CHECK(restrict_block(O, L));
    }
    // b in the permuted order (xexact = 1 is the same in any order).
    const ts_hpcg_olevel *A = O->A;
    ts_hpcg_xk_index bi = {A->nrow, TS_HPCG_SCATTER, A->perm, O->b, O->nat};
    TS_CHECK(TS_HPCG_XRUN(X, index, bi));
    TS_CHECK(ts_hpcg_xcopy(X, TS_COPY_D2D, O->b, O->nat, sizeof(double) * (size_t)A->nrow));
    TS_CHECK(ts_hpcg_xsync(X));
    // The natural-order matrices are no longer needed.
    O->bytes = sizeof(double) * (7 * (size_t)A->ncol + (size_t)A->nrow + TS_HPCG_DOT_BLOCKS + 1);
    for (ts_hpcg_olevel *L = O->A; L; L = L->coarse) {
        ts_hpcg_xfree(X, L->ecol);
        ts_hpcg_xfree(X, L->eval);
        L->ecol = NULL;
        L->eval = NULL;
        const size_t n = (size_t)L->nrow;
        L->bytes = (size_t)(L->nlower + L->nupper) * (sizeof(int32_t) + sizeof(double)) +
                   n * (2 * sizeof(int32_t) + 2 * sizeof(double)) +
                   (size_t)L->halo.nsend * (sizeof(int32_t) + sizeof(double));
        if (L->coarse)
            L->bytes += (size_t)L->coarse->nrow * (2 * sizeof(int32_t) + sizeof(double)) +
                        (size_t)L->coarse->ncol * sizeof(double);
        O->bytes += L->bytes;
    }
    return 0;
}
