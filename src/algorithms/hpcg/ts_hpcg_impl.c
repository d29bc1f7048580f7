// ts_hpcg_impl.c: the optimized implementation (ts_hpcg_impl): the operations CG runs (WAXPBY one kernel), the per-kernel probe and the traffic model.
#include <string.h>

#include "algorithms/hpcg/ts_hpcg_opt.h"
#include "core/ts_error.h"
#include "core/ts_timer.h"

// ---- where the time goes (multi-rank runs) ----

// Starts every rank's timed loop together: the queued work done, then a barrier.
static int probe_start(ts_hpcg_opt *O, double *t) {
    TS_CHECK(ts_hpcg_xsync(&O->X));
    TS_CHECK(ts_comm_barrier(O->comm));
    *t = ts_now();
    return 0;
}

static int probe_stop(ts_hpcg_opt *O, double t, int reps, double scale, double *out, double *out_min) {
    TS_CHECK(ts_hpcg_xsync(&O->X));
    double v = (ts_now() - t) / reps * scale, vmin = v;
    TS_CHECK(ts_comm_allreduce_d(O->comm, &v, 1, TS_COMM_MAX));
    TS_CHECK(ts_comm_allreduce_d(O->comm, &vmin, 1, TS_COMM_MIN));
    *out = v;
    if (out_min) *out_min = vmin;
    return 0;
}

int ts_hpcg_opt_probe(ts_hpcg_opt *O, int reps, ts_hpcg_probe *p) {
    memset(p, 0, sizeof *p);
    if (reps < 1) reps = 1;
    double t;
    int l = 0;
    for (ts_hpcg_olevel *L = O->A, *F = NULL; L && l < TS_HPCG_MG_LEVELS; F = L, L = L->coarse, l++) {
        double *x = F ? F->xc : O->z; // a vector of this level with its halo part
        TS_CHECK(probe_start(O, &t));
        for (int i = 0; i < reps; i++) TS_CHECK(ts_hpcg_opt_halo(O, L, x));
        TS_CHECK(probe_stop(O, t, reps, 1e6, &p->halo_us[l], NULL));
    }
    p->levels = l;
    const int passes = O->comm->size > 1 ? 2 : 1; // one rank: nothing to leave out
    for (int nohalo = 0; nohalo < passes; nohalo++) {
        O->probe_nohalo = nohalo;
        int rc = probe_start(O, &t);
        for (int i = 0; rc == 0 && i < reps; i++) rc = ts_hpcg_opt_spmv(O, O->A, O->p, O->Ap);
        if (rc == 0) rc = probe_stop(O, t, reps, 1e3, nohalo ? &p->spmv_nohalo_ms : &p->spmv_ms, NULL);
        if (rc == 0) rc = probe_start(O, &t);
        for (int i = 0; rc == 0 && i < reps; i++) rc = ts_hpcg_opt_mg(O, O->A, O->r, O->z);
        if (rc == 0) rc = probe_stop(O, t, reps, 1e3, nohalo ? &p->mg_nohalo_ms : &p->mg_ms, nohalo ? &p->mg_nohalo_ms_min : NULL);
        O->probe_nohalo = 0;
        TS_CHECK(rc);
    }
    if (passes == 1) {
        p->spmv_nohalo_ms = p->spmv_ms;
        p->mg_nohalo_ms = p->mg_nohalo_ms_min = p->mg_ms;
    }
    if (O->graph) { // the V-cycle as the CG launches it
        TS_CHECK(probe_start(O, &t));
        for (int i = 0; i < reps; i++) TS_CHECK(ts_hpcg_opt_mg_graph(O, O->r, O->z));
        TS_CHECK(probe_stop(O, t, reps, 1e3, &p->mg_graph_ms, NULL));
    }
    // The V-cycle's parts per level, without exchanges (timing only).
    O->probe_nohalo = 1;
    int rc = 0;
    l = 0;
    for (ts_hpcg_olevel *L = O->A, *F = NULL; rc == 0 && L && l < TS_HPCG_MG_LEVELS; F = L, L = L->coarse, l++) {
        const double *r = F ? F->rc : O->r;
        double *x = F ? F->xc : O->z;
        rc = probe_start(O, &t);
        for (int i = 0; rc == 0 && i < reps; i++) rc = ts_hpcg_opt_symgs(O, L, r, x, 1);
        if (rc == 0) rc = probe_stop(O, t, reps, 1e3, &p->pre_ms[l], NULL);
        if (rc == 0) rc = probe_start(O, &t);
        for (int i = 0; rc == 0 && i < reps; i++) rc = ts_hpcg_opt_symgs(O, L, r, x, 0);
        if (rc == 0) rc = probe_stop(O, t, reps, 1e3, &p->post_ms[l], NULL);
        ts_hpcg_olevel *C = L->coarse;
        if (!C || rc < 0) continue;
        ts_hpcg_xk_prolong pa = {C->nrow, L->fr, L->cq, L->xc, x};
        rc = probe_start(O, &t);
        for (int i = 0; rc == 0 && i < reps; i++) {
            rc = ts_hpcg_opt_restrict(O, L, r, x, 0, C->nrow);
            if (rc == 0) rc = TS_HPCG_XRUN(&O->X, prolong, pa);
        }
        if (rc == 0) rc = probe_stop(O, t, reps, 1e3, &p->rp_ms[l], NULL);
    }
    // Each colour's forward sweep on the fine level.
    ts_hpcg_olevel *A = O->A;
    p->ncolors = A->ncolors < TS_HPCG_PROBE_COLORS ? A->ncolors : TS_HPCG_PROBE_COLORS;
    for (int c = 0; rc == 0 && c < p->ncolors; c++) {
        const ts_hpcg_cblk *b = &A->blk[2 * c], *h = &A->blk[2 * c + 1];
        p->rows[c] = b->nr + h->nr;
        p->hrows[c] = h->nr;
        p->width[c] = b->wl + b->wu;
        p->hwidth[c] = h->wl + h->wu;
        rc = probe_start(O, &t);
        for (int i = 0; rc == 0 && i < reps; i++) rc = ts_hpcg_opt_sweep_part(O, A, c, 0, TS_HPCG_FWD, O->r, O->z, A->t);
        if (rc == 0) rc = probe_stop(O, t, reps, 1e6, &p->fwd_us[c], NULL);
    }
    O->probe_nohalo = 0;
    TS_CHECK(rc);
    TS_CHECK(probe_start(O, &t));
    double s;
    for (int i = 0; i < reps; i++) TS_CHECK(ts_hpcg_opt_dot(O, O->A->nrow, O->r, O->z, &s, NULL));
    TS_CHECK(probe_stop(O, t, reps, 1e6, &p->dot_us, NULL));
    return 0;
}

// ---- the ops table ----

static ts_hpcg_opt *OP(ts_hpcg_impl *I) { return I->state; }

static int o_spmv(ts_hpcg_impl *I, double *x, double *y) { return ts_hpcg_opt_spmv(OP(I), OP(I)->A, x, y); }
static int o_mg(ts_hpcg_impl *I, const double *r, double *z) {
    ts_hpcg_opt *O = OP(I);
    return O->graph ? ts_hpcg_opt_mg_graph(O, r, z) : ts_hpcg_opt_mg(O, O->A, r, z);
}
static int o_dot(ts_hpcg_impl *I, const double *x, const double *y, double *out, double *t_allreduce) {
    return ts_hpcg_opt_dot(OP(I), I->nrow, x, y, out, t_allreduce);
}
static int o_waxpby(ts_hpcg_impl *I, double alpha, const double *x, double beta, const double *y, double *w) {
    ts_hpcg_xk_waxpby a = {I->nrow, alpha, beta, x, y, w};
    return TS_HPCG_XRUN(&OP(I)->X, waxpby, a);
}
static int o_zero(ts_hpcg_impl *I, double *v) {
    return ts_hpcg_xmemset(&OP(I)->X, v, 0, sizeof(double) * (size_t)I->ncol);
}
static int o_vnew(ts_hpcg_impl *I, double **v) {
    TS_CHECK(ts_hpcg_xalloc(&OP(I)->X, sizeof(double) * (size_t)I->ncol, (void **)v));
    return o_zero(I, *v);
}
static void o_vfree(ts_hpcg_impl *I, double *v) {
    ts_hpcg_xsync(&OP(I)->X); // queued kernels may still use v
    ts_hpcg_xfree(&OP(I)->X, v);
}
static int o_set(ts_hpcg_impl *I, double *v, const double *nat) {
    ts_hpcg_opt *O = OP(I);
    TS_CHECK(ts_hpcg_xcopy(&O->X, TS_COPY_H2D, O->nat, nat, sizeof(double) * (size_t)I->nrow));
    ts_hpcg_xk_index a = {I->nrow, TS_HPCG_SCATTER, O->A->perm, O->nat, v};
    TS_CHECK(TS_HPCG_XRUN(&O->X, index, a));
    return ts_hpcg_xsync(&O->X);
}
static int o_get(ts_hpcg_impl *I, double *nat, const double *v) {
    ts_hpcg_opt *O = OP(I);
    ts_hpcg_xk_index a = {I->nrow, TS_HPCG_PACK, O->A->perm, v, O->nat};
    TS_CHECK(TS_HPCG_XRUN(&O->X, index, a));
    TS_CHECK(ts_hpcg_xcopy(&O->X, TS_COPY_D2H, nat, O->nat, sizeof(double) * (size_t)I->nrow));
    return ts_hpcg_xsync(&O->X);
}
static int o_scale_diag(ts_hpcg_impl *I, const double *nat) {
    ts_hpcg_opt *O = OP(I);
    ts_hpcg_olevel *A = O->A;
    const size_t bytes = sizeof(double) * (size_t)A->nrow;
    if (!nat) {
        if (!A->diag_saved) return 0;
        TS_CHECK(ts_hpcg_xcopy(&O->X, TS_COPY_D2D, A->diag, A->diag_saved, bytes));
        TS_CHECK(ts_hpcg_xsync(&O->X));
        ts_hpcg_xfree(&O->X, A->diag_saved);
        A->diag_saved = NULL;
        return 0;
    }
    if (!A->diag_saved) {
        TS_CHECK(ts_hpcg_xalloc(&O->X, bytes, (void **)&A->diag_saved));
        TS_CHECK(ts_hpcg_xcopy(&O->X, TS_COPY_D2D, A->diag_saved, A->diag, bytes));
    }
    TS_CHECK(ts_hpcg_xcopy(&O->X, TS_COPY_H2D, O->nat, nat, bytes));
    ts_hpcg_xk_index a = {A->nrow, TS_HPCG_SCALE, A->perm, O->nat, A->diag};
    TS_CHECK(TS_HPCG_XRUN(&O->X, index, a));
    return ts_hpcg_xsync(&O->X);
}
static int o_fence(ts_hpcg_impl *I) { return ts_hpcg_xsync(&OP(I)->X); }

static const ts_hpcg_ops opt_ops = {"opt", o_spmv, o_mg, o_dot, o_waxpby, o_vnew, o_vfree,
                                    o_zero, o_set, o_get, o_scale_diag, o_fence};

void ts_hpcg_opt_impl(ts_hpcg_opt *O, ts_hpcg_impl *I) {
    double *v[7] = {O->b, O->x, O->xexact, O->r, O->z, O->p, O->Ap};
    ts_hpcg_impl_init(I, &opt_ops, O, O->comm, O->A->nrow, O->A->ncol, v);
}

// Traffic model of the kernels above, per CG iteration: a matrix entry is 12 bytes (value and
// 32-bit column); a row's diagonal, right-hand side and own x are 8 bytes each, read or written
// once per kernel; neighbour values of x are read once per colour block that uses them (the x
// values of other colours: a block's neighbours are spread over the whole vector, so a sweep of
// colour c reads the rows of every colour it couples to, (C-1)/C of x for a full row).
static double sweep_bytes(const ts_hpcg_olevel *L, int lower, int upper, double row_vec) {
    const double C = L->ncolors, n = L->nrow;
    double b = n * row_vec;
    if (lower) b += 12.0 * (double)L->nlower + 8.0 * n * (C - 1) / 2.0;
    if (upper) b += 12.0 * (double)L->nupper + 8.0 * n * (C - 1) / 2.0;
    return b;
}

void ts_hpcg_opt_bytes(const ts_hpcg_opt *O, double *spmv, double *mg, double *ddot, double *waxpby) {
    const ts_hpcg_olevel *A = O->A;
    const double n = A->nrow;
    *spmv = sweep_bytes(A, 1, 1, 24.0); // diag, x_p, y_p
    *mg = 0;
    for (const ts_hpcg_olevel *L = A; L; L = L->coarse) {
        double b = sweep_bytes(L, 1, 0, 24.0) + sweep_bytes(L, 0, 1, 24.0); // from x = 0: r,d,x / d,x,x
        if (L->coarse) {
            const double nc = L->coarse->nrow;
            const double frac = nc / (double)L->nrow; // the coarse points' share of the rows
            b += frac * sweep_bytes(L, 1, 1, 24.0) + nc * 16.0; // residual rows; fr, cq
            b += nc * 32.0;                                        // prolongation
            b += sweep_bytes(L, 1, 1, 40.0) + sweep_bytes(L, 0, 1, 40.0); // FWD (r,d,x,x,t) / BWD_T
        }
        *mg += b;
    }
    *ddot = 3 * 16.0 * n;
    *waxpby = 3 * 24.0 * n;
}
