// ts_comm.c: the host side of the communication layer over MPI (serial stand-ins when built without MPI).
#include "comm/ts_comm.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core/ts_error.h"

#if TS_HAVE_MPI

// One message is at most this many doubles; longer ones go in pieces.
#define HC_CHUNK ((int64_t)1 << 28)

int ts_comm_mpi_error(int rc, const char *call) {
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    return ts_error_set(TS_ERR_MPI, __FILE__, __LINE__, "%s failed: %s", call, msg);
}
#define MPI_TRY(call)                                                                             \
    do {                                                                                          \
        int mpi_rc_ = (call);                                                                     \
        if (mpi_rc_ != MPI_SUCCESS) return ts_comm_mpi_error(mpi_rc_, #call);                              \
    } while (0)

static void finalize_at_exit(void) {
    int fin = 0;
    MPI_Finalized(&fin);
    if (!fin) MPI_Finalize();
}

int ts_comm_world(ts_comm *w) {
    int init = 0;
    MPI_Initialized(&init);
    if (!init) {
        int provided;
        MPI_TRY(MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided));
        atexit(finalize_at_exit);
    }
    MPI_TRY(MPI_Comm_dup(MPI_COMM_WORLD, &w->comm));
    MPI_Comm_set_errhandler(w->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(w->comm, &w->rank);
    MPI_Comm_size(w->comm, &w->size);
    return 0;
}

int ts_comm_node_local(const ts_comm *c, int *lr, int *ls) {
    MPI_Comm node;
    MPI_TRY(MPI_Comm_split_type(c->comm, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &node));
    MPI_Comm_rank(node, lr);
    MPI_Comm_size(node, ls);
    MPI_Comm_free(&node);
    return 0;
}

int ts_comm_split(const ts_comm *c, int color, int key, ts_comm *out) {
    MPI_TRY(MPI_Comm_split(c->comm, color < 0 ? MPI_UNDEFINED : color, key, &out->comm));
    if (out->comm == MPI_COMM_NULL) {
        out->rank = -1;
        out->size = 0;
        return 0;
    }
    MPI_Comm_set_errhandler(out->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(out->comm, &out->rank);
    MPI_Comm_size(out->comm, &out->size);
    return 0;
}

void ts_comm_free(ts_comm *c) {
    if (c->comm != MPI_COMM_NULL) MPI_Comm_free(&c->comm);
    c->comm = MPI_COMM_NULL;
    c->rank = -1;
    c->size = 0;
}

int ts_comm_barrier(const ts_comm *c) {
    if (c->size <= 1) return 0;
    MPI_TRY(MPI_Barrier(c->comm));
    return 0;
}

static MPI_Op mpi_op(ts_comm_op op) { return op == TS_COMM_SUM ? MPI_SUM : op == TS_COMM_MAX ? MPI_MAX : MPI_MIN; }

int ts_comm_allreduce_d(const ts_comm *c, double *buf, int n, ts_comm_op op) {
    if (c->size <= 1 || n == 0) return 0;
    MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, buf, n, MPI_DOUBLE, mpi_op(op), c->comm));
    return 0;
}

int ts_comm_allreduce_i(const ts_comm *c, int *buf, int n, ts_comm_op op) {
    if (c->size <= 1 || n == 0) return 0;
    MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, buf, n, MPI_INT, mpi_op(op), c->comm));
    return 0;
}

int ts_comm_reduce_sum_d(const ts_comm *c, const double *in, double *out, int n, int root) {
    if (c->size <= 1) {
        if (out != in) memmove(out, in, (size_t)n * sizeof(double));
        return 0;
    }
    MPI_TRY(MPI_Reduce(in, out, n, MPI_DOUBLE, MPI_SUM, root, c->comm));
    return 0;
}

int ts_comm_bcast(const ts_comm *c, void *buf, size_t bytes, int root) {
    if (c->size <= 1 || bytes == 0) return 0;
    char *p = buf;
    while (bytes > 0) {
        size_t n = bytes > (size_t)INT_MAX ? (size_t)1 << 30 : bytes;
        MPI_TRY(MPI_Bcast(p, (int)n, MPI_BYTE, root, c->comm));
        p += n;
        bytes -= n;
    }
    return 0;
}

int ts_comm_send(const ts_comm *c, const double *buf, int64_t n, int dest, int tag) {
    do {
        int64_t k = n > HC_CHUNK ? HC_CHUNK : n;
        MPI_TRY(MPI_Send(buf, (int)k, MPI_DOUBLE, dest, tag, c->comm));
        buf += k;
        n -= k;
    } while (n > 0);
    return 0;
}

int ts_comm_recv(const ts_comm *c, double *buf, int64_t n, int src, int tag) {
    do {
        int64_t k = n > HC_CHUNK ? HC_CHUNK : n;
        MPI_TRY(MPI_Recv(buf, (int)k, MPI_DOUBLE, src, tag, c->comm, MPI_STATUS_IGNORE));
        buf += k;
        n -= k;
    } while (n > 0);
    return 0;
}

int ts_comm_isend(const ts_comm *c, const double *buf, int64_t n, int dest, int tag, ts_comm_req *req) {
    if (n > HC_CHUNK) { // rare: fall back to a blocking send
        *req = MPI_REQUEST_NULL;
        return ts_comm_send(c, buf, n, dest, tag);
    }
    MPI_TRY(MPI_Isend(buf, (int)n, MPI_DOUBLE, dest, tag, c->comm, req));
    return 0;
}

int ts_comm_waitall(int n, ts_comm_req *reqs) {
    if (n <= 0) return 0;
    MPI_TRY(MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE));
    return 0;
}

int ts_comm_sendrecv(const ts_comm *c, const double *sbuf, int64_t sn, int dest, double *rbuf,
                     int64_t rn, int src, int tag) {
    if (sn > HC_CHUNK || rn > HC_CHUNK) TS_RAISE(TS_ERR_UNSUPPORTED, "sendrecv of more than 2^28 doubles");
    MPI_TRY(MPI_Sendrecv(sbuf, (int)sn, MPI_DOUBLE, dest, tag, rbuf, (int)rn, MPI_DOUBLE, src, tag,
                         c->comm, MPI_STATUS_IGNORE));
    return 0;
}

static int to_int_counts(const ts_comm *c, const int64_t *counts, const int64_t *displs, int *ic,
                         int *id) {
    for (int i = 0; i < c->size; i++) {
        if (counts[i] + displs[i] > INT_MAX)
            TS_RAISE(TS_ERR_UNSUPPORTED, "collective of more than 2^31 doubles (rank %d)", i);
        ic[i] = (int)counts[i];
        id[i] = (int)displs[i];
    }
    return 0;
}

// Gatherv to root, or to every rank with root -1 (Allgatherv).
static int gatherv_to(const ts_comm *c, const double *sbuf, int64_t sn, double *rbuf, const int64_t *counts,
                      const int64_t *displs, int root) {
    if (c->size <= 1) {
        if (sn) memmove(rbuf + displs[0], sbuf, (size_t)sn * sizeof(double));
        return 0;
    }
    int *ic = malloc(2 * (size_t)c->size * sizeof(int));
    if (!ic) TS_RAISE(TS_ERR_NOMEM, "%s counts", root < 0 ? "allgatherv" : "gatherv");
    int rc = to_int_counts(c, counts, displs, ic, ic + c->size);
    if (rc == 0) {
        int mrc = root < 0 ? MPI_Allgatherv(sbuf, (int)sn, MPI_DOUBLE, rbuf, ic, ic + c->size, MPI_DOUBLE, c->comm)
                           : MPI_Gatherv(sbuf, (int)sn, MPI_DOUBLE, rbuf, ic, ic + c->size, MPI_DOUBLE, root, c->comm);
        if (mrc != MPI_SUCCESS) rc = ts_comm_mpi_error(mrc, root < 0 ? "MPI_Allgatherv" : "MPI_Gatherv");
    }
    free(ic);
    return rc;
}

int ts_comm_allgatherv(const ts_comm *c, const double *sbuf, int64_t sn, double *rbuf,
                       const int64_t *counts, const int64_t *displs) {
    return gatherv_to(c, sbuf, sn, rbuf, counts, displs, -1);
}

int ts_comm_gatherv(const ts_comm *c, const double *sbuf, int64_t sn, double *rbuf,
                    const int64_t *counts, const int64_t *displs, int root) {
    return gatherv_to(c, sbuf, sn, rbuf, counts, displs, root);
}

int ts_comm_scatterv(const ts_comm *c, const double *sbuf, const int64_t *counts,
                     const int64_t *displs, double *rbuf, int64_t rn, int root) {
    if (c->size <= 1) {
        if (rn) memmove(rbuf, sbuf + displs[0], (size_t)rn * sizeof(double));
        return 0;
    }
    int *ic = malloc(2 * (size_t)c->size * sizeof(int));
    if (!ic) TS_RAISE(TS_ERR_NOMEM, "scatterv counts");
    int rc = to_int_counts(c, counts, displs, ic, ic + c->size);
    if (rc == 0) {
        int mrc = MPI_Scatterv(sbuf, ic, ic + c->size, MPI_DOUBLE, rbuf, (int)rn, MPI_DOUBLE, root, c->comm);
        if (mrc != MPI_SUCCESS) rc = ts_comm_mpi_error(mrc, "MPI_Scatterv");
    }
    free(ic);
    return rc;
}

#else // ---------------------------------------------------------------- serial build

int ts_comm_world(ts_comm *w) {
    w->rank = 0;
    w->size = 1;
    return 0;
}
int ts_comm_node_local(const ts_comm *c, int *lr, int *ls) {
    *lr = 0;
    *ls = 1;
    return 0;
}
int ts_comm_split(const ts_comm *c, int color, int key, ts_comm *out) {
    out->rank = color < 0 ? -1 : 0;
    out->size = color < 0 ? 0 : 1;
    return 0;
}
void ts_comm_free(ts_comm *c) {
    c->rank = -1;
    c->size = 0;
}
int ts_comm_barrier(const ts_comm *c) { return 0; }
int ts_comm_allreduce_d(const ts_comm *c, double *buf, int n, ts_comm_op op) { return 0; }
int ts_comm_allreduce_i(const ts_comm *c, int *buf, int n, ts_comm_op op) { return 0; }
int ts_comm_reduce_sum_d(const ts_comm *c, const double *in, double *out, int n, int root) {
    if (out != in) memmove(out, in, (size_t)n * sizeof(double));
    return 0;
}
int ts_comm_bcast(const ts_comm *c, void *buf, size_t bytes, int root) { return 0; }
int ts_comm_send(const ts_comm *c, const double *buf, int64_t n, int dest, int tag) {
    TS_RAISE(TS_ERR_INTERNAL, "send in a serial build");
}
int ts_comm_recv(const ts_comm *c, double *buf, int64_t n, int src, int tag) {
    TS_RAISE(TS_ERR_INTERNAL, "recv in a serial build");
}
int ts_comm_isend(const ts_comm *c, const double *buf, int64_t n, int dest, int tag, ts_comm_req *req) {
    TS_RAISE(TS_ERR_INTERNAL, "isend in a serial build");
}
int ts_comm_waitall(int n, ts_comm_req *reqs) { return 0; }
int ts_comm_sendrecv(const ts_comm *c, const double *sbuf, int64_t sn, int dest, double *rbuf,
                     int64_t rn, int src, int tag) {
    TS_RAISE(TS_ERR_INTERNAL, "sendrecv in a serial build");
}
int ts_comm_allgatherv(const ts_comm *c, const double *sbuf, int64_t sn, double *rbuf,
                       const int64_t *counts, const int64_t *displs) {
    if (sn) memmove(rbuf + displs[0], sbuf, (size_t)sn * sizeof(double));
    return 0;
}
int ts_comm_gatherv(const ts_comm *c, const double *sbuf, int64_t sn, double *rbuf,
                    const int64_t *counts, const int64_t *displs, int root) {
    if (sn) memmove(rbuf + displs[0], sbuf, (size_t)sn * sizeof(double));
    return 0;
}
int ts_comm_scatterv(const ts_comm *c, const double *sbuf, const int64_t *counts,
                     const int64_t *displs, double *rbuf, int64_t rn, int root) {
    if (rn) memmove(rbuf, sbuf + displs[0], (size_t)rn * sizeof(double));
    return 0;
}

#endif

// ---------------------------------------------------------------- both builds

static void comm_empty(ts_comm *c) {
#if TS_HAVE_MPI
    c->comm = MPI_COMM_NULL;
#endif
    c->rank = -1;
    c->size = 0;
}

int ts_comm_grid(const ts_comm *c, int P, int Q, int col_major, ts_comm *grid, ts_comm *row, ts_comm *col,
                 int *myrow, int *mycol) {
    const int in_grid = c->rank < P * Q;
    *myrow = *mycol = -1;
    comm_empty(grid), comm_empty(row), comm_empty(col);
    TS_CHECK(ts_comm_split(c, in_grid ? 0 : -1, c->rank, grid));
    if (!in_grid) { // not a member: row and column empty like the grid
        *row = *col = *grid;
        return 0;
    }
    const int g = grid->rank;
    *myrow = col_major ? g % P : g / Q;
    *mycol = col_major ? g / P : g % Q;
    int rc = ts_comm_split(grid, *myrow, *mycol, row);
    if (rc == 0) rc = ts_comm_split(grid, *mycol, *myrow, col);
    return rc;
}

int ts_comm_same_on_ranks(const ts_comm *c, double v, const char *what) {
    double lo = v, hi = v;
    TS_CHECK(ts_comm_allreduce_d(c, &lo, 1, TS_COMM_MIN));
    TS_CHECK(ts_comm_allreduce_d(c, &hi, 1, TS_COMM_MAX));
    if (lo != hi) TS_RAISE(TS_ERR_ARG, "%s differs between the ranks", what);
    return 0;
}
