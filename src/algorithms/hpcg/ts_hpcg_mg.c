// ts_hpcg_mg.c: HPCG's ComputeMG, optimized version: the V-cycle on the executor, and the V-cycle captured and replayed as a graph.
#include <string.h>

#include "algorithms/hpcg/ts_hpcg_opt.h"
#include "core/ts_error.h"
#include "core/ts_log.h"

int ts_hpcg_opt_restrict(ts_hpcg_opt *O, ts_hpcg_olevel *L, const double *r, double *x, int32_t k0, int32_t k1) {
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
        TS_CHECK(ts_hpcg_opt_restrict(O, L, r, x, 0, C->nrow));
    } else { // the pairs whose fine row reads no halo value while the exchange runs
        TS_CHECK(ts_hpcg_opt_halo_begin(O, L, x));
        TS_CHECK(ts_hpcg_opt_restrict(O, L, r, x, 0, L->nr_inner));
        TS_CHECK(ts_hpcg_opt_halo_end(O));
        TS_CHECK(ts_hpcg_opt_restrict(O, L, r, x, L->nr_inner, C->nrow));
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
