// ts_hpcg_exchange_ref.c: HPCG's ExchangeHalo, reference version: the halo of x by nonblocking MPI.
#include "algorithms/hpcg/ts_hpcg.h"
#include "core/ts_error.h"

#define HALO_TAG 99

int ts_hpcg_halo_exchange(const ts_comm *c, const ts_hpcg_halo_plan *h, const double *sbuf, double *rbuf) {
#if TS_HAVE_MPI
    if (h->nneigh == 0 || c->size == 1) return 0;
    MPI_Request req[2 * TS_HPCG_MAX_NEIGH];
    int nr = 0;
    for (int k = 0; k < h->nneigh; k++)
        if (MPI_Irecv(rbuf + h->recv_off[k], h->recv_count[k], MPI_DOUBLE, h->neigh[k], HALO_TAG, c->comm,
                      &req[nr++]) != MPI_SUCCESS)
            TS_RAISE(TS_ERR_MPI, "hpcg: halo MPI_Irecv from rank %d failed", h->neigh[k]);
    for (int k = 0; k < h->nneigh; k++)
        if (MPI_Isend(sbuf + h->send_off[k], h->send_count[k], MPI_DOUBLE, h->neigh[k], HALO_TAG, c->comm,
                      &req[nr++]) != MPI_SUCCESS)
            TS_RAISE(TS_ERR_MPI, "hpcg: halo MPI_Isend to rank %d failed", h->neigh[k]);
    if (MPI_Waitall(nr, req, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
        TS_RAISE(TS_ERR_MPI, "hpcg: halo MPI_Waitall failed");
#else
    (void)c; (void)h; (void)sbuf; (void)rbuf;
#endif
    return 0;
}

int ts_hpcg_halo(const ts_comm *c, ts_hpcg_level *A, double *x) {
    if (A->halo.nneigh == 0 || c->size == 1) return 0;
    for (int32_t i = 0; i < A->halo.nsend; i++) A->send_buf[i] = x[A->send_idx[i]];
    return ts_hpcg_halo_exchange(c, &A->halo, A->send_buf, x + A->nrow);
}
