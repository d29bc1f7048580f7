// ts_hpcg_xops.c: HPCG's optimized implementation: halo exchange through host staging, SpMV, multicoloured SYMGS, the V-cycle, DDOT and the ops table.
#include <stdlib.h>
#include <string.h>

#include "algorithms/hpcg/ts_hpcg_opt.h"
#include "comm/ts_dcomm.h"
#include "core/ts_error.h"
#include "core/ts_log.h"
#include "core/ts_timer.h"

// Pack (executor) -> host -> MPI -> host -> the halo part of x; with a device communicator the
// packed buffer goes device to device (NCCL) and the values arrive straight in x, as on the host:
// on the executor's stream, or forked to st2 when the exchange overlaps (O->st2).
int ts_hpcg_opt_halo_begin(ts_hpcg_opt *O, ts_hpcg_olevel *L, double *x) {
    const ts_hpcg_halo_plan *h = &L->halo;
    const ts_hpcg_exec *X = &O->X;
    if (O->halo_pending) TS_RAISE(TS_ERR_STATE, "hpcg: a halo exchange begun while another is in flight");
    if (O->comm->size == 1 || h->nneigh == 0 || O->probe_nohalo) return 0;
    ts_hpcg_xk_index a = {h->nsend, TS_HPCG_PACK, L->xsend, x, L->xsbuf};
    TS_CHECK(TS_HPCG_XRUN(X, index, a));
    if (!X->set) return ts_hpcg_halo_exchange(O->comm, h, L->xsbuf, x + L->nrow);
    if (O->dcomm) { // device to device, ordered on the executor's stream: no host round trip
        ts_stream *st = X->st;
        if (O->st2) { // forked: the packed buffer is ready when ev_fork is
            TS_CHECK(ts_event_record(O->ev_fork, X->st));
            TS_CHECK(ts_stream_wait_event(O->st2, O->ev_fork));
            st = O->st2;
        }
        void *sb[TS_HPCG_MAX_NEIGH], *rb[TS_HPCG_MAX_NEIGH];
        size_t sn[TS_HPCG_MAX_NEIGH], rn[TS_HPCG_MAX_NEIGH];
        for (int k = 0; k < h->nneigh; k++) {
            sb[k] = L->xsbuf + h->send_off[k];
            sn[k] = sizeof(double) * (size_t)h->send_count[k];
            rb[k] = x + L->nrow + h->recv_off[k];
            rn[k] = sizeof(double) * (size_t)h->recv_count[k];
        }
        TS_CHECK(ts_dcomm_exchange(O->dcomm, st, h->nneigh, h->neigh, sb, sn, rb, rn));
        if (O->st2) {
            TS_CHECK(ts_event_record(O->ev_join, O->st2));
            O->halo_pending = 1;
        }
        return 0;
    }
    TS_CHECK(ts_hpcg_xcopy(X, TS_COPY_D2H, L->hsbuf, L->xsbuf, sizeof(double) * (size_t)h->nsend));
    TS_CHECK(ts_hpcg_xsync(X));
    TS_CHECK(ts_hpcg_halo_exchange(O->comm, h, L->hsbuf, L->hrbuf));
    return ts_hpcg_xcopy(X, TS_COPY_H2D, x + L->nrow, L->hrbuf, sizeof(double) * (size_t)h->nrecv);
}

int ts_hpcg_opt_halo_end(ts_hpcg_opt *O) {
    if (!O->halo_pending) return 0;
    O->halo_pending = 0;
    return ts_stream_wait_event(O->X.st, O->ev_join);
}

int ts_hpcg_opt_halo(ts_hpcg_opt *O, ts_hpcg_olevel *L, double *x) {
    TS_CHECK(ts_hpcg_opt_halo_begin(O, L, x));
    return ts_hpcg_opt_halo_end(O);
}

// Colour c in one launch: both its blocks (part 0), only the rows without halo columns (part 1), or
// only its halo block (part 2).
static int sweep_part(ts_hpcg_opt *O, ts_hpcg_olevel *L, int c, int part, int mode, const double *r, double *x,
                      double *t) {
    ts_hpcg_xk_sweep a = {L->blk[2 * c], L->blk[2 * c + 1], mode, r, L->diag, x, t};
    if (part == 1) a.h.nr = 0;
    if (part == 2) a.b.nr = 0;
    if (!a.b.nr && !a.h.nr) return 0;
    return TS_HPCG_XRUN(&O->X, sweep, a);
}
static int sweep(ts_hpcg_opt *O, ts_hpcg_olevel *L, int c, int mode, const double *r, double *x, double *t) {
    return sweep_part(O, L, c, 0, mode, r, x, t);
}

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
    for (int c = 0; c < L->ncolors; c++) TS_CHECK(sweep_part(O, L, c, 1, TS_HPCG_SPMV, NULL, x, y));
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
                TS_CHECK(sweep_part(O, L, c, 1, TS_HPCG_FWD, r, x, L->t));
                TS_CHECK(ts_hpcg_opt_halo_end(O));
                TS_CHECK(sweep_part(O, L, c, 2, TS_HPCG_FWD, r, x, L->t));
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

// The residual at the coarse points restricted, pairs [k0, k1) (L->fr, L->cq).
static int restrict_pairs(ts_hpcg_opt *O, ts_hpcg_olevel *L, const double *r, double *x, int32_t k0, int32_t k1) {
    if (k1 <= k0) return 0;
    if (L->rblk >= 0 && k0 == 0 && k1 >= L->nr_inner) { // the inner pairs are one block's rows in order
        ts_hpcg_xk_restrict1 a = {L->blk[L->rblk], L->cq, r, L->diag, x, L->rc};
        TS_CHECK(TS_HPCG_XRUN(&O->X, restrict1, a));
        k0 = L->nr_inner;
        if (k1 <= k0) return 0;
    }
    ts_hpcg_xk_restrict ra = {k1 - k0, L->nblk, L->fr + k0, L->cq + k0, L->xblk, r, L->diag, x, L->rc};
    return TS_HPCG_XRUN(&O->X, restrict, ra);
}

// The V-cycle: pre-smoothing from x = 0, the residual at the coarse points only (restricted by
// injection), the coarse solve, prolongation, post-smoothing; one SYMGS on the coarsest level.
int ts_hpcg_opt_mg(ts_hpcg_opt *O, ts_hpcg_olevel *L, const double *r, double *x) {
    TS_CHECK(ts_hpcg_opt_symgs(O, L, r, x, 1));
    ts_hpcg_olevel *C = L->coarse;
    if (!C) return 0;
    if (!O->split) {
        TS_CHECK(ts_hpcg_opt_halo(O, L, x));
        TS_CHECK(restrict_pairs(O, L, r, x, 0, C->nrow));
    } else { // the pairs whose fine row reads no halo value while the exchange runs
        TS_CHECK(ts_hpcg_opt_halo_begin(O, L, x));
        TS_CHECK(restrict_pairs(O, L, r, x, 0, L->nr_inner));
        TS_CHECK(ts_hpcg_opt_halo_end(O));
        TS_CHECK(restrict_pairs(O, L, r, x, L->nr_inner, C->nrow));
    }
    TS_CHECK(ts_hpcg_opt_mg(O, C, L->rc, L->xc));
    ts_hpcg_xk_prolong pa = {C->nrow, L->fr, L->cq, L->xc, x};
    TS_CHECK(TS_HPCG_XRUN(&O->X, prolong, pa));
    return ts_hpcg_opt_symgs(O, L, r, x, 0);
}

// ---- the V-cycle as a graph ----

// Captures the V-cycle from r into z on the executor's stream. A capture that fails is ended all
// the same (the stream stays usable) and its error returned, on every rank: a rank whose capture
// worked must not launch a graph whose NCCL exchanges wait for one that will not come.
static int mg_capture(ts_hpcg_opt *O, const double *r, double *z, ts_graph **out) {
    *out = NULL;
    int rc = ts_stream_capture_begin(O->X.st);
    if (rc == 0) {
        rc = ts_hpcg_opt_mg(O, O->A, r, z);
        if (rc < 0) O->halo_pending = 0; // a fork left open by the failure ends with the capture
        const ts_error_info first = *ts_error_last();
        const int rc_end = ts_stream_capture_end(O->X.st, out); // names the failed operation, if one did
        if (rc < 0 && rc_end == 0) { // a failure outside the stream's operations (an NCCL call)
            ts_graph_destroy(*out);
            *out = NULL;
            ts_error_set(first.code, first.file, first.line, "%s", first.message);
        } else {
            rc = rc_end;
        }
    }
    if (O->comm->size > 1) {
        const ts_error_info mine = *ts_error_last();
        int ok = rc == 0;
        const int rc_ar = ts_comm_allreduce_i(O->comm, &ok, 1, TS_COMM_MIN);
        if (rc_ar < 0) rc = rc_ar;
        else if (rc < 0) ts_error_set(mine.code, mine.file, mine.line, "%s", mine.message);
        else if (!ok) rc = TS_ERROR(TS_ERR_STATE, "the capture failed on another rank");
        if (rc < 0) {
            ts_graph_destroy(*out);
            *out = NULL;
        }
    }
    if (rc < 0) return ts_error_wrap(rc, "hpcg: capturing the V-cycle as a graph (TESSERA_HPCG_GRAPH=1)");
    return 0;
}

int ts_hpcg_opt_mg_graph(ts_hpcg_opt *O, const double *r, double *z) {
    ts_hpcg_mg_graph *s = NULL, *lru = &O->mgg[0];
    for (int i = 0; i < TS_HPCG_MG_GRAPHS; i++) {
        ts_hpcg_mg_graph *m = &O->mgg[i];
        if (m->g && m->r == r && m->z == z) s = m;
        if (m->used < lru->used) lru = m; // an empty slot first
    }
    // Every rank captures at the same call (the V-cycle's NCCL exchanges are collective): a miss on
    // one rank is a miss on all (the ranks' vectors need not sit alike in their arenas).
    int miss = !s;
    if (O->comm->size > 1) TS_CHECK(ts_comm_allreduce_i(O->comm, &miss, 1, TS_COMM_MAX));
    if (miss) {
        if (!s) s = lru;
        ts_graph_destroy(s->g);
        memset(s, 0, sizeof *s);
        TS_CHECK(mg_capture(O, r, z, &s->g));
        s->r = r;
        s->z = z;
        if (O->mg_captures++ == 0 && O->comm->rank == 0) {
            ts_device_counters c;
            ts_graph_counters(s->g, &c);
            TS_LOG_I("hpcg: the V-cycle runs as a graph of %ld kernels and %ld copies (TESSERA_HPCG_GRAPH=1)",
                     c.kernels, c.copies);
        }
    }
    s->used = ++O->mg_calls;
    return ts_graph_launch(s->g, O->X.st);
}

int ts_hpcg_opt_dot(ts_hpcg_opt *O, int32_t n, const double *x, const double *y, double *out, double *t_allreduce) {
    const ts_hpcg_exec *X = &O->X;
    ts_hpcg_xk_dot a = {n, x, y, O->dot_out, O->dot_part};
    TS_CHECK(TS_HPCG_XRUN(X, dot, a));
    double s;
    if (X->set) {
        TS_CHECK(ts_hpcg_xcopy(X, TS_COPY_D2H, O->dot_host, O->dot_out, sizeof(double)));
        TS_CHECK(ts_hpcg_xsync(X));
        s = O->dot_host[0];
    } else {
        s = O->dot_out[0];
    }
    double t = ts_now();
    TS_CHECK(ts_comm_allreduce_d(O->comm, &s, 1, TS_COMM_SUM));
    if (t_allreduce) *t_allreduce += ts_now() - t;
    *out = s;
    return 0;
}

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
            rc = restrict_pairs(O, L, r, x, 0, C->nrow);
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
        for (int i = 0; rc == 0 && i < reps; i++) rc = sweep(O, A, c, TS_HPCG_FWD, O->r, O->z, A->t);
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
    memset(I, 0, sizeof *I);
    I->ops = &opt_ops;
    I->comm = O->comm;
    I->nrow = O->A->nrow;
    I->ncol = O->A->ncol;
    I->b = O->b;
    I->x = O->x;
    I->xexact = O->xexact;
    I->r = O->r;
    I->z = O->z;
    I->p = O->p;
    I->Ap = O->Ap;
    I->state = O;
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
