// ts_hpcg_symgs.c: HPCG's ComputeSYMGS, optimized version: multicoloured sweeps over the permuted sliced ELL blocks.
#include "algorithms/hpcg/ts_hpcg_opt.h"
#include "core/ts_error.h"

int ts_hpcg_opt_sweep_part(ts_hpcg_opt *O, ts_hpcg_olevel *L, int c, int part, int mode, const double *r, double *x,
                           double *t) {
    ts_hpcg_xk_sweep a = {L->blk[2 * c], L->blk[2 * c + 1], mode, r, L->diag, x, t};
    if (part == 1) a.h.nr = 0;
    if (part == 2) a.b.nr = 0;
    if (!a.b.nr && !a.h.nr) return 0;
    return TS_HPCG_XRUN(&O->X, sweep, a);
}
static int sweep(ts_hpcg_opt *O, ts_hpcg_olevel *L, int c, int mode, const double *r, double *x, double *t) {
    return ts_hpcg_opt_sweep_part(O, L, c, 0, mode, r, x, t);
}

int ts_hpcg_opt_symgs(ts_hpcg_opt *O, ts_hpcg_olevel *L, const double *r, double *x, int zero_x) {
    const int C = L->ncolors;
    if (zero_x) {
        // x = 0 on every rank: the halo is 0 too and needs no exchange.
        TS_CHECK(ts_hpcg_xmemset(&O->X, x, 0, sizeof(double) * (size_t)L->ncol));
        for (int c = 0; c < C; c++) TS_CHECK(sweep(O, L, c, TS_HPCG_FWD0, r, x, NULL));
        if (O->midx) TS_CHECK(ts_hpcg_opt_halo(O, L, x)); // BWD0 reads the halo (upper part)
        for (int c = C - 1; c >= 0; c--) TS_CHECK(sweep(O, L, c, TS_HPCG_BWD0, r, x, NULL));
        return 0;
    }
    if (!O->split) {
        TS_CHECK(ts_hpcg_opt_halo(O, L, x));
        for (int c = 0; c < C; c++) TS_CHECK(sweep(O, L, c, TS_HPCG_FWD, r, x, L->t));
    } else {
        // The forward sweep up to the first colour with halo rows, and that colour's other rows,
        // while the exchange runs (no row among them reads the halo part of x).
        TS_CHECK(ts_hpcg_opt_halo_begin(O, L, x));
        int joined = 0;
        for (int c = 0; c < C; c++) {
            if (!joined && L->blk[2 * c + 1].nr) {
                TS_CHECK(ts_hpcg_opt_sweep_part(O, L, c, 1, TS_HPCG_FWD, r, x, L->t));
                TS_CHECK(ts_hpcg_opt_halo_end(O));
                TS_CHECK(ts_hpcg_opt_sweep_part(O, L, c, 2, TS_HPCG_FWD, r, x, L->t));
                joined = 1;
            } else {
                TS_CHECK(sweep(O, L, c, TS_HPCG_FWD, r, x, L->t));
            }
        }
        TS_CHECK(ts_hpcg_opt_halo_end(O));
    }
    // BWD_T adds back the forward sums t (old halo values included) and subtracts the upper part
    // with the current ones: after this exchange, the neighbours' forward-swept values.
    if (O->midx) TS_CHECK(ts_hpcg_opt_halo(O, L, x));
    for (int c = C - 1; c >= 0; c--) TS_CHECK(sweep(O, L, c, TS_HPCG_BWD_T, r, x, L->t));
    return 0;
}
