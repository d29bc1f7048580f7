// ts_hpcg_exchange.c: HPCG's ExchangeHalo, optimized version: packed on the executor, device to device by NCCL or through host staging and MPI, overlappable.
#include "algorithms/hpcg/ts_hpcg_opt.h"
#include "comm/ts_dcomm.h"
#include "core/ts_error.h"

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
