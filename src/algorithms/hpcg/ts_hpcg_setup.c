// ts_hpcg_setup.c: the optimized problem's setup on the executor (GenerateProblem and SetupHalo for every level: natural ELL, halo plans) and its path settings.
#include <stdlib.h>

#include "algorithms/hpcg/ts_hpcg_opt.h"
#include "comm/ts_dcomm.h"
#include "core/ts_env.h"
#include "core/ts_error.h"
#include "core/ts_timer.h"
#include "core/ts_log.h"

#define XA(ptr, count) ts_hpcg_xalloc(&O->X, sizeof(*(ptr)) * (size_t)(count), (void **)&(ptr))

static void level_free(ts_hpcg_opt *O, ts_hpcg_olevel *L) {
    const ts_hpcg_exec *X = &O->X;
    void *xp[] = {L->ecol, L->eval, L->color, L->bkey, L->perm, L->xblk, L->lcol, L->ucol, L->lval, L->uval,
                  L->diag, L->diag_saved, L->xsend, L->xsbuf, L->fr, L->cq, L->rc, L->xc, L->t};
    for (size_t i = 0; i < sizeof xp / sizeof xp[0]; i++) ts_hpcg_xfree(X, xp[i]);
    ts_hpcg_xhfree(X, L->hsbuf);
    ts_hpcg_xhfree(X, L->hrbuf);
    free(L->send_nat);
    free(L);
}

void ts_hpcg_opt_destroy(ts_hpcg_opt *O) {
    if (!O) return;
    ts_hpcg_xsync(&O->X); // nothing may still use the memory
    for (int i = 0; i < TS_HPCG_MG_GRAPHS; i++) ts_graph_destroy(O->mgg[i].g);
    for (ts_hpcg_olevel *L = O->A; L;) {
        ts_hpcg_olevel *c = L->coarse;
        level_free(O, L);
        L = c;
    }
    void *xp[] = {O->b, O->x, O->xexact, O->r, O->z, O->p, O->Ap, O->dot_out, O->dot_part, O->nat, O->scratch};
    for (size_t i = 0; i < sizeof xp / sizeof xp[0]; i++) ts_hpcg_xfree(&O->X, xp[i]);
    ts_hpcg_xhfree(&O->X, O->dot_host);
    if (O->st2) ts_stream_destroy(O->st2);
    if (O->ev_fork) ts_event_destroy(O->ev_fork);
    if (O->ev_join) ts_event_destroy(O->ev_join);
    ts_dcomm_destroy(O->dcomm);
    free(O);
}

// One level: halo plan, buffers, the natural-order matrix (and b, xexact on the fine level).
static int level_setup(ts_hpcg_opt *O, const ts_hpcg_geom *g, int fine, ts_hpcg_olevel **out) {
    *out = NULL;
    ts_hpcg_olevel *L = calloc(1, sizeof *L);
    if (!L) TS_RAISE(TS_ERR_NOMEM, "hpcg: out of memory");
    const ts_hpcg_exec *X = &O->X;
    int rc = 0;
    L->g = *g;
    L->rblk = -1; // set by the optimization
    L->nrow = (int32_t)((int64_t)g->nx * g->ny * g->nz);
    L->gnrow = g->gnx * g->gny * g->gnz;
    L->gnnz = (3 * g->gnx - 2) * (3 * g->gny - 2) * (3 * g->gnz - 2);
    TS_CHECK_GOTO(ts_hpcg_halo_plan_geom(g, &L->halo, &L->send_nat), rc, fail);
    L->ncol = L->nrow + L->halo.nrecv;
    const int64_t n = L->nrow, ns = L->halo.nsend;
    TS_CHECK_GOTO(XA(L->ecol, TS_HPCG_SLOTS * n), rc, fail);
    TS_CHECK_GOTO(XA(L->eval, TS_HPCG_SLOTS * n), rc, fail);
    TS_CHECK_GOTO(XA(L->color, n), rc, fail);
    TS_CHECK_GOTO(XA(L->perm, n), rc, fail);
    TS_CHECK_GOTO(XA(L->diag, n), rc, fail);
    TS_CHECK_GOTO(XA(L->t, n), rc, fail);
    TS_CHECK_GOTO(XA(L->xsend, ns), rc, fail);
    TS_CHECK_GOTO(XA(L->xsbuf, ns), rc, fail);
    if (X->set && ns) {
        TS_CHECK_GOTO(ts_hpcg_xhalloc(X, sizeof(double) * (size_t)ns, (void **)&L->hsbuf), rc, fail);
        TS_CHECK_GOTO(ts_hpcg_xhalloc(X, sizeof(double) * (size_t)L->halo.nrecv, (void **)&L->hrbuf), rc, fail);
    }
    ts_hpcg_xk_gen a = {g->nx, g->ny, g->nz, L->nrow, g->gix0, g->giy0, g->giz0, g->gnx, g->gny, g->gnz, {0},
                        L->ecol, L->eval,
                        fine ? O->b : NULL, fine ? O->xexact : NULL};
    for (int s = 0; s < TS_HPCG_SLOTS; s++) a.halo_off[s] = -1;
    for (int k = 0; k < L->halo.nneigh; k++) a.halo_off[L->halo.dir[k]] = L->nrow + L->halo.recv_off[k];
    TS_CHECK_GOTO(TS_HPCG_XRUN(X, gen, a), rc, fail);
    *out = L;
    return 0;
fail:
    level_free(O, L);
    return rc;
}

// The halo path: device to device by NCCL when every rank has a CUDA GPU of its own (the default
// there; TESSERA_HPCG_NCCL=0 on any rank turns it off); else through pinned host staging and MPI.
// Collective. On two H200s 1317 GFLOP/s against 1261 through the host, in calls two days apart
// (bench/NOTES.md): not yet side by side in one call.
static int halo_path(ts_hpcg_opt *O) {
    snprintf(O->halo, sizeof O->halo, "%s", O->comm->size > 1 ? "host" : "none");
    if (O->comm->size < 2) return 0;
    int want = O->X.cuda; // the default; simulated devices and the CPU engine have no NCCL path
    if (ts_env_bool("TESSERA_HPCG_NCCL", &want) < 0) want = 0; // as TESSERA_HPL_NCCL
    TS_CHECK(ts_comm_allreduce_i(O->comm, &want, 1, TS_COMM_MIN));
    if (!want) return 0;
    char why[128];
    const double t0 = ts_now();
    TS_CHECK(ts_dcomm_join(O->comm, O->X.cuda ? O->X.dev : NULL, &O->dcomm, why, sizeof why, NULL));
    O->t_join = ts_now() - t0;
    if (O->dcomm) snprintf(O->halo, sizeof O->halo, "nccl");
    else snprintf(O->halo, sizeof O->halo, "host (NCCL: %s)", why);
    return 0;
}

// A boolean setting read on every rank (*v: its default in, the value out) and agreed by the
// minimum: a rank where it is 0 turns it off everywhere; malformed on any rank, an error on all.
// *set: it was set here. Collective.
static int env_bool_all(const ts_hpcg_opt *O, const char *name, int *v, int *set) {
    const int rc = ts_env_bool(name, v);
    *set = rc == 1;
    *v = rc < 0 ? -1 : *v != 0; // -1: malformed here
    if (O->comm->size > 1) TS_CHECK(ts_comm_allreduce_i(O->comm, v, 1, TS_COMM_MIN));
    if (*v < 0) {
        if (rc < 0) return rc; // ts_env_bool's message names the variable and the value
        TS_RAISE(TS_ERR_PARSE, "%s is malformed on another rank", name);
    }
    return 0;
}

// The exchange overlapped (O->split; TESSERA_HPCG_OVERLAP=1): with the NCCL halo it runs on a stream
// of its own; on the other paths the exchange completes first and only the launches split (the
// order is tested without a GPU). Off by default: on two H200s the V-cycle took 7.718 ms with it
// against 7.632 without (the forked exchange 27 us against 17, and the halo blocks' own launches
// no longer hide under the bulk; bench/NOTES.md 2026-11-26). The same on every rank.
static int overlap_path(ts_hpcg_opt *O) {
    int v = 0, set = 0;
    TS_CHECK(env_bool_all(O, "TESSERA_HPCG_OVERLAP", &v, &set));
    O->split = O->comm->size > 1 && v;
    if (!O->split || !O->dcomm) return 0;
    TS_CHECK(ts_stream_create(O->X.dev, &O->st2));
    TS_CHECK(ts_event_create(O->X.dev, &O->ev_fork));
    return ts_event_create(O->X.dev, &O->ev_join);
}

// The V-cycle as graphs: the default on CUDA GPUs (+2.4% on one H200 and on two, bench/NOTES.md),
// TESSERA_HPCG_GRAPH=0 on any rank turns it off, =1 asks for it on simulated devices too. Taken on
// device executors where the halo exchange can be captured: one rank, or NCCL device to device.
// The host-staged exchange syncs the stream and calls MPI inside the V-cycle, so it keeps
// launching kernel by kernel (said once, on rank 0, when the variable asked). Collective.
static int graph_path(ts_hpcg_opt *O) {
    int v = O->X.cuda, set = 0;
    TS_CHECK(env_bool_all(O, "TESSERA_HPCG_GRAPH", &v, &set));
    if (!v) return 0;
    const char *why = !O->X.set ? "the CPU engine runs its kernels on the host"
                      : O->comm->size > 1 && !O->dcomm
                          ? "the host-staged halo exchange syncs with the host and calls MPI inside it (graphs "
                            "need one rank or the NCCL halo)"
                          : NULL;
    if (why) {
        if (O->comm->rank == 0 && set)
            TS_LOG_I("hpcg: TESSERA_HPCG_GRAPH=1: the V-cycle is launched kernel by kernel: %s", why);
        return 0;
    }
    O->graph = 1;
    return 0;
}

int ts_hpcg_opt_setup(const ts_comm *comm, const ts_hpcg_geom *g, int levels, const ts_hpcg_exec *X,
                      ts_hpcg_opt **out) {
    *out = NULL;
    if (levels < 1 || levels > TS_HPCG_MG_LEVELS)
        TS_RAISE(TS_ERR_ARG, "hpcg: %d multigrid levels; 1 to %d are possible", levels, TS_HPCG_MG_LEVELS);
    ts_hpcg_opt *O = calloc(1, sizeof *O);
    if (!O) TS_RAISE(TS_ERR_NOMEM, "hpcg: out of memory");
    O->X = *X;
    O->comm = comm;
    int rc = 0;
    // The fine level's vectors first: the generator writes b and xexact.
    int32_t halo_rows = 0;
    {
        ts_hpcg_halo_plan h;
        int32_t *idx = NULL;
        TS_CHECK_GOTO(ts_hpcg_halo_plan_geom(g, &h, &idx), rc, fail);
        free(idx);
        halo_rows = h.nrecv;
    }
    const int64_t n = (int64_t)g->nx * g->ny * g->nz, nc = n + halo_rows;
    double **vec[] = {&O->b, &O->x, &O->xexact, &O->r, &O->z, &O->p, &O->Ap};
    for (size_t i = 0; i < sizeof vec / sizeof vec[0]; i++) {
        TS_CHECK_GOTO(ts_hpcg_xalloc(X, sizeof(double) * (size_t)nc, (void **)vec[i]), rc, fail);
        TS_CHECK_GOTO(ts_hpcg_xmemset(X, *vec[i], 0, sizeof(double) * (size_t)nc), rc, fail);
    }
    TS_CHECK_GOTO(XA(O->nat, n), rc, fail);
    TS_CHECK_GOTO(XA(O->dot_out, 1), rc, fail);
    TS_CHECK_GOTO(XA(O->dot_part, TS_HPCG_DOT_BLOCKS), rc, fail);
    TS_CHECK_GOTO(XA(O->scratch, TS_HPCG_CSTAT_LEN + 1), rc, fail);
    TS_CHECK_GOTO(ts_hpcg_xhalloc(X, sizeof(double) * (TS_HPCG_CSTAT_LEN + 1), (void **)&O->dot_host), rc, fail);
    ts_hpcg_geom lg = *g;
    ts_hpcg_olevel **link = &O->A, *F = NULL;
    for (int l = 0; l < levels; l++) {
        if (l > 0) {
            if (lg.nx % 2 || lg.ny % 2 || lg.nz % 2) {
                rc = TS_ERROR(TS_ERR_ARG, "hpcg: local grid %d x %d x %d cannot be halved", lg.nx, lg.ny, lg.nz);
                goto fail;
            }
            ts_hpcg_geom_halve(&lg);
        }
        TS_CHECK_GOTO(level_setup(O, &lg, l == 0, link), rc, fail);
        ts_hpcg_olevel *L = *link;
        if (F) { // F's restriction pairs and its coarse rhs and solution
            TS_CHECK_GOTO(XA(F->fr, L->nrow), rc, fail);
            TS_CHECK_GOTO(XA(F->cq, L->nrow), rc, fail);
            TS_CHECK_GOTO(XA(F->rc, L->nrow), rc, fail);
            TS_CHECK_GOTO(XA(F->xc, L->ncol), rc, fail);
        }
        F = L;
        link = &L->coarse;
    }
    TS_CHECK_GOTO(ts_hpcg_xsync(X), rc, fail);
    TS_CHECK_GOTO(halo_path(O), rc, fail);
    TS_CHECK_GOTO(graph_path(O), rc, fail);
    O->halo_blocks = 1; // TESSERA_HPCG_HALO_BLOCKS=0: one block per colour (the comparison run)
    if (ts_env_bool("TESSERA_HPCG_HALO_BLOCKS", &O->halo_blocks) < 0) {
        rc = ts_error_last()->code;
        goto fail;
    }
    TS_CHECK_GOTO(overlap_path(O), rc, fail);
    O->midx = 0;
    if (ts_env_bool("TESSERA_HPCG_MIDX", &O->midx) < 0) {
        rc = ts_error_last()->code;
        goto fail;
    }
    // the same on every rank: the exchanges are collective
    TS_CHECK_GOTO(ts_comm_same_on_ranks(comm, O->midx != 0, "hpcg: TESSERA_HPCG_MIDX"), rc, fail);
    *out = O;
    return 0;
fail:
    ts_hpcg_opt_destroy(O);
    return rc;
}
