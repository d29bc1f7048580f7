// ts_hpl_matgen.c: the local part of [A|b] from HPL's generator, each local block from its global coordinates.
#include <stdlib.h>

#include "algorithms/hpl/ts_hpl_internal.h"
#include "core/ts_error.h"
#include "core/ts_rng.h"

typedef struct {
    ts_hpl_ctx *c;
    uint32_t seed;
    int64_t N, NB, mp, nq, lb0, ldd;
    int P, Q, myrow, mycol;
    double *dst;
} gen_args;

// One local block column: every NB x NB local block is a contiguous block of the global matrix.
static void gen_col(int64_t i, void *arg) {
    gen_args *g = arg;
    int64_t lb = g->lb0 + i;
    int64_t lc = lb * g->NB;
    int64_t w = g->nq - lc < g->NB ? g->nq - lc : g->NB;
    int64_t gc = ts_hpl_l2g(lc, g->NB, g->mycol, g->Q);
    double *col = g->dst + i * g->NB * g->ldd;
    for (int64_t lr = 0; lr < g->mp; lr += g->NB) {
        int64_t h = g->mp - lr < g->NB ? g->mp - lr : g->NB;
        int64_t gr = ts_hpl_l2g(lr, g->NB, g->myrow, g->P);
        ts_hpl_fill(g->seed, g->N, gr, gc, h, w, col + lr, g->ldd);
        if (g->c && g->c->elem_hook)
            for (int64_t jj = 0; jj < w; jj++)
                for (int64_t ii = 0; ii < h; ii++) {
                    double *e = col + lr + ii + jj * g->ldd;
                    *e = g->c->elem_hook(gr + ii, gc + jj, *e, g->c->elem_hook_arg);
                }
    }
}

uint32_t ts_hpl_seed(const ts_hpl_ctx *c) {
    return c && c->opts.seed > 0 ? (uint32_t)c->opts.seed : TS_HPL_SEED;
}

void ts_hpl_matgen_host(ts_hpl_ctx *c, uint32_t seed, int64_t N, int64_t NB, int P, int Q,
                        int myrow, int mycol, int64_t lb0, int64_t lb1, double *dst, int64_t ldd) {
    gen_args g = {c, seed, N, NB, ts_hpl_numroc(N, NB, myrow, P), ts_hpl_numroc(N + 1, NB, mycol, Q),
                  lb0, ldd, P, Q, myrow, mycol, dst};
    if (lb1 <= lb0 || g.mp == 0) return;
    if (c && c->pool && lb1 - lb0 > 1) ts_pool_parallel_for(c->pool, lb1 - lb0, gen_col, &g);
    else
        for (int64_t i = 0; i < lb1 - lb0; i++) gen_col(i, &g);
}

int ts_hpl_matgen(ts_hpl_state *s) {
    int64_t nblk = (s->nq + s->NB - 1) / s->NB;
    uint32_t seed = ts_hpl_seed(s->ctx);
    if (!s->x->is_device) {
        ts_hpl_matgen_host(s->ctx, seed, s->N, s->NB, s->P, s->Q, s->myrow, s->mycol, 0, nblk, s->A,
                           s->lda);
        return 0;
    }
    if (s->mp == 0 || s->nq == 0) return 0;
    // Device: block columns generated on the host into two staging buffers, copied while the
    // next ones are generated.
    int64_t per = (64 << 20) / (int64_t)(s->mp * s->NB * sizeof(double));
    if (per < 1) per = 1;
    if (per > nblk) per = nblk;
    // transposed layout: each staged block column goes to the swap scratch (free before the
    // factorization) in pieces of rows, each transposed into A^T from there; with Q = 1 the scratch
    // holds two block columns whole, with Q > 1 a piece is 2 NB nq / (columns staged) rows
    const int64_t scr = 2 * s->NB * s->scr_cols[0];
    if (s->trans && per > scr / s->NB) per = scr / s->NB;
    size_t bytes = (size_t)(per * s->NB) * (size_t)s->mp * sizeof(double);
    double *h[2] = {NULL, NULL};
    int rc = s->x->halloc(s, bytes, (void **)&h[0]);
    if (rc == 0) rc = s->x->halloc(s, bytes, (void **)&h[1]);
    for (int64_t b0 = 0, it = 0; rc == 0 && b0 < nblk; b0 += per, it++) {
        int64_t b1 = b0 + per < nblk ? b0 + per : nblk;
        int slot = (int)(it & 1);
        if (it >= 2) rc = s->x->ev_sync(s, 6 + slot);
        if (rc) break;
        ts_hpl_matgen_host(s->ctx, seed, s->N, s->NB, s->P, s->Q, s->myrow, s->mycol, b0, b1, h[slot], s->mp);
        int64_t c0 = b0 * s->NB, c1 = b1 * s->NB < s->nq ? b1 * s->NB : s->nq;
        if (s->trans) {
            int64_t rows = scr / (c1 - c0); // (>= 1: c1 - c0 <= per NB <= scr)
            for (int64_t r0 = 0; rc == 0 && r0 < s->mp; r0 += rows) {
                int64_t nr = s->mp - r0 < rows ? s->mp - r0 : rows;
                rc = s->x->to_x(s, 0, s->xscr[0], nr, h[slot] + r0, s->mp, nr, c1 - c0);
                if (rc == 0) rc = s->x->transpose(s, 0, nr, c1 - c0, s->xscr[0], nr, s->A + c0 + r0 * s->lda, s->lda);
            }
        } else {
            rc = s->x->to_x(s, 0, s->A + c0 * s->lda, s->lda, h[slot], s->mp, s->mp, c1 - c0);
        }
        if (rc == 0) rc = s->x->record(s, 6 + slot, 0);
    }
    if (rc == 0) rc = s->x->sync(s, 0);
    else s->x->sync(s, 0);
    if (h[0]) s->x->hfree(s, h[0]);
    if (h[1]) s->x->hfree(s, h[1]);
    return rc;
}
