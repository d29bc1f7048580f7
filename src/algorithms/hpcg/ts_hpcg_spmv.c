// ts_hpcg_spmv.c: HPCG's ComputeSPMV, optimized version: every block in one launch, or split around the halo exchange.
#include "algorithms/hpcg/ts_hpcg_opt.h"
#include "core/ts_error.h"

// y = A x over every block in one launch (ts_hpcg_xk_spmv: position-major on the GPU).
static int spmv_all(ts_hpcg_opt *O, ts_hpcg_olevel *L, const double *x, double *y) {
    ts_hpcg_xk_spmv a = {0, 0, {0}, L->xblk, L->diag, x, y};
    for (int k = 0; k < L->nblk; k++) {
        if (!L->blk[k].nr) continue;
        a.ord[a.nb++] = (uint8_t)k;
        if (L->blk[k].nr > a.maxnr) a.maxnr = L->blk[k].nr;
    }
    return TS_HPCG_XRUN(&O->X, spmv, a);
}

int ts_hpcg_opt_spmv(ts_hpcg_opt *O, ts_hpcg_olevel *L, double *x, double *y) {
    if (!O->split) {
        TS_CHECK(ts_hpcg_opt_halo(O, L, x));
        return spmv_all(O, L, x, y);
    }
    // Every colour's rows without halo columns while the exchange runs, then the halo blocks two
    // to a launch (a product has no order between colours).
    TS_CHECK(ts_hpcg_opt_halo_begin(O, L, x));
    for (int c = 0; c < L->ncolors; c++) TS_CHECK(ts_hpcg_opt_sweep_part(O, L, c, 1, TS_HPCG_SPMV, NULL, x, y));
    TS_CHECK(ts_hpcg_opt_halo_end(O));
    ts_hpcg_cblk pend = {0};
    for (int c = 0; c < L->ncolors; c++) {
        const ts_hpcg_cblk *h = &L->blk[2 * c + 1];
        if (!h->nr) continue;
        if (!pend.nr) {
            pend = *h;
            continue;
        }
        ts_hpcg_xk_sweep a = {pend, *h, TS_HPCG_SPMV, NULL, L->diag, x, y};
        TS_CHECK(TS_HPCG_XRUN(&O->X, sweep, a));
        pend.nr = 0;
    }
    if (pend.nr) { // an odd one out, alone
        ts_hpcg_xk_sweep a = {pend, {0}, TS_HPCG_SPMV, NULL, L->diag, x, y};
        TS_CHECK(TS_HPCG_XRUN(&O->X, sweep, a));
    }
    return 0;
}
