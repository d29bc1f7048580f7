// ts_hpl_comm.c: MPI wrapper for the HPL engine (serial stand-ins when built without MPI).
#include "algorithms/hpl/ts_hpl_comm.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core/ts_error.h"

#if TS_HAVE_MPI

// One message is at most this many doubles; longer ones go in pieces.
#define HC_CHUNK ((int64_t)1 << 28)

static int mpi_fail(int rc, const char *call) {
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    return ts_error_set(TS_ERR_MPI, __FILE__, __LINE__, "%s failed: %s", call, msg);
}
#define MPI_TRY(call)                                                                             \
    do {                                                                                          \
        int mpi_rc_ = (call);                                                                     \
        if (mpi_rc_ != MPI_SUCCESS) return mpi_fail(mpi_rc_, #call);                              \
    } while (0)

static void finalize_at_exit(void) {
    int fin = 0;
    MPI_Finalized(&fin);
    if (!fin) MPI_Finalize();
}

int ts_hc_world(ts_hcomm *w) {
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

int ts_hc_node_local(const ts_hcomm *c, int *lr, int *ls) {
    MPI_Comm node;
    MPI_TRY(MPI_Comm_split_type(c->comm, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &node));
    MPI_Comm_rank(node, lr);
    MPI_Comm_size(node, ls);
    MPI_Comm_free(&node);
    return 0;
}

int ts_hc_split(const ts_hcomm *c, int color, int key, ts_hcomm *out) {
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

void ts_hc_free(ts_hcomm *c) {
    if (c->comm != MPI_COMM_NULL) MPI_Comm_free(&c->comm);
    c->comm = MPI_COMM_NULL;
    c->rank = -1;
    c->size = 0;
}

int ts_hc_barrier(const ts_hcomm *c) {
    if (c->size <= 1) return 0;
    MPI_TRY(MPI_Barrier(c->comm));
    return 0;
}

static MPI_Op mpi_op(ts_hc_op op) { return op == TS_HC_SUM ? MPI_SUM : op == TS_HC_MAX ? MPI_MAX : MPI_MIN; }

int ts_hc_allreduce_d(const ts_hcomm *c, double *buf, int n, ts_hc_op op) {
    if (c->size <= 1 || n == 0) return 0;
    MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, buf, n, MPI_DOUBLE, mpi_op(op), c->comm));
    return 0;
}

int ts_hc_allreduce_i(const ts_hcomm *c, int *buf, int n, ts_hc_op op) {
    if (c->size <= 1 || n == 0) return 0;
    MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, buf, n, MPI_INT, mpi_op(op), c->comm));
    return 0;
}

int ts_hc_reduce_sum_d(const ts_hcomm *c, const double *in, double *out, int n, int root) {
    if (c->size <= 1) {
        if (out != in) memmove(out, in, (size_t)n * sizeof(double));
        return 0;
    }
    MPI_TRY(MPI_Reduce(in, out, n, MPI_DOUBLE, MPI_SUM, root, c->comm));
    return 0;
}

int ts_hc_bcast(const ts_hcomm *c, void *buf, size_t bytes, int root) {
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

int ts_hc_send(const ts_hcomm *c, const double *buf, int64_t n, int dest, int tag) {
    do {
        int64_t k = n > HC_CHUNK ? HC_CHUNK : n;
        MPI_TRY(MPI_Send(buf, (int)k, MPI_DOUBLE, dest, tag, c->comm));
        buf += k;
        n -= k;
    } while (n > 0);
    return 0;
}

int ts_hc_recv(const ts_hcomm *c, double *buf, int64_t n, int src, int tag) {
    do {
        int64_t k = n > HC_CHUNK ? HC_CHUNK : n;
        MPI_TRY(MPI_Recv(buf, (int)k, MPI_DOUBLE, src, tag, c->comm, MPI_STATUS_IGNORE));
        buf += k;
        n -= k;
    } while (n > 0);
    return 0;
}

int ts_hc_isend(const ts_hcomm *c, const double *buf, int64_t n, int dest, int tag, ts_hc_req *req) {
    if (n > HC_CHUNK) { // rare: fall back to a blocking send
        *req = MPI_REQUEST_NULL;
        return ts_hc_send(c, buf, n, dest, tag);
    }
    MPI_TRY(MPI_Isend(buf, (int)n, MPI_DOUBLE, dest, tag, c->comm, req));
    return 0;
}

int ts_hc_waitall(int n, ts_hc_req *reqs) {
    if (n <= 0) return 0;
    MPI_TRY(MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE));
    return 0;
}

int ts_hc_sendrecv(const ts_hcomm *c, const double *sbuf, int64_t sn, int dest, double *rbuf,
                   int64_t rn, int src, int tag) {
    if (sn > HC_CHUNK || rn > HC_CHUNK) TS_RAISE(TS_ERR_UNSUPPORTED, "sendrecv of more than 2^28 doubles");
    MPI_TRY(MPI_Sendrecv(sbuf, (int)sn, MPI_DOUBLE, dest, tag, rbuf, (int)rn, MPI_DOUBLE, src, tag,
                         c->comm, MPI_STATUS_IGNORE));
    return 0;
}

static int to_int_counts(const ts_hcomm *c, const int64_t *counts, const int64_t *displs, int *ic,
                         int *id) {
    for (int i = 0; i < c->size; i++) {
        if (counts[i] + displs[i] > INT_MAX)
            TS_RAISE(TS_ERR_UNSUPPORTED, "collective of more than 2^31 doubles (rank %d)", i);
        ic[i] = (int)counts[i];
        id[i] = (int)displs[i];
    }
    return 0;
}

int ts_hc_allgatherv(const ts_hcomm *c, const double *sbuf, int64_t sn, double *rbuf,
                     const int64_t *counts, const int64_t *displs) {
    if (c->size <= 1) {
        if (sn) memmove(rbuf + displs[0], sbuf, (size_t)sn * sizeof(double));
        return 0;
    }
    int *ic = malloc(2 * (size_t)c->size * sizeof(int));
    if (!ic) TS_RAISE(TS_ERR_NOMEM, "allgatherv counts");
    int rc = to_int_counts(c, counts, displs, ic, ic + c->size);
    if (rc == 0) {
        int mrc = MPI_Allgatherv(sbuf, (int)sn, MPI_DOUBLE, rbuf, ic, ic + c->size, MPI_DOUBLE, c->comm);
        if (mrc != MPI_SUCCESS) rc = mpi_fail(mrc, "MPI_Allgatherv");
    }
    free(ic);
    return rc;
}

int ts_hc_gatherv(const ts_hcomm *c, const double *sbuf, int64_t sn, double *rbuf,
                  const int64_t *counts, const int64_t *displs, int root) {
    if (c->size <= 1) {
        if (sn) memmove(rbuf + displs[0], sbuf, (size_t)sn * sizeof(double));
        return 0;
    }
    int *ic = malloc(2 * (size_t)c->size * sizeof(int));
    if (!ic) TS_RAISE(TS_ERR_NOMEM, "gatherv counts");
    int rc = to_int_counts(c, counts, displs, ic, ic + c->size);
    if (rc == 0) {
        int mrc = MPI_Gatherv(sbuf, (int)sn, MPI_DOUBLE, rbuf, ic, ic + c->size, MPI_DOUBLE, root, c->comm);
        if (mrc != MPI_SUCCESS) rc = mpi_fail(mrc, "MPI_Gatherv");
    }
    free(ic);
    return rc;
}

int ts_hc_scatterv(const ts_hcomm *c, const double *sbuf, const int64_t *counts,
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
        if (mrc != MPI_SUCCESS) rc = mpi_fail(mrc, "MPI_Scatterv");
    }
    free(ic);
    return rc;
}

// The reduction operator of ts_hc_pivot. A record is one element of a contiguous datatype, so MPI
// never splits it; its length comes from the datatype's size.
static void pivot_op(void *vin, void *vinout, int *len, MPI_Datatype *dt) {
    int sz = 0;
    MPI_Type_size(*dt, &sz);
    int n = sz / (int)sizeof(double);
    int w = (n - 3) / 2;
    double *in = vin, *io = vinout;
    for (int r = 0; r < *len; r++, in += n, io += n) {
        int better = in[0] > io[0] || (in[0] == io[0] && in[0] >= 0 && in[1] < io[1]);
        int top = in[2] != 0.0 && io[2] == 0.0;
        if (better) {
            io[0] = in[0];
            io[1] = in[1];
            memcpy(io + 3, in + 3, (size_t)w * sizeof(double));
        }
        if (top) {
            io[2] = 1.0;
            memcpy(io + 3 + w, in + 3 + w, (size_t)w * sizeof(double));
        }
    }
}

int ts_hc_pivot(const ts_hcomm *c, double *rec, int w) {
    if (c->size <= 1) return 0;
    static MPI_Op op = MPI_OP_NULL; // created once per process; MPI ops live until finalize
    if (op == MPI_OP_NULL) MPI_TRY(MPI_Op_create(pivot_op, 1, &op));
    MPI_Datatype t;
    MPI_TRY(MPI_Type_contiguous(TS_HC_PIVOT_LEN(w), MPI_DOUBLE, &t));
    MPI_Type_commit(&t);
    int rc = MPI_Allreduce(MPI_IN_PLACE, rec, 1, t, op, c->comm);
    MPI_Type_free(&t);
    if (rc != MPI_SUCCESS) return mpi_fail(rc, "MPI_Allreduce(pivot)");
    return 0;
}

#else // ---------------------------------------------------------------- serial build

int ts_hc_world(ts_hcomm *w) {
    w->rank = 0;
    w->size = 1;
    return 0;
}
int ts_hc_node_local(const ts_hcomm *c, int *lr, int *ls) {
    *lr = 0;
    *ls = 1;
    return 0;
}
int ts_hc_split(const ts_hcomm *c, int color, int key, ts_hcomm *out) {
    out->rank = color < 0 ? -1 : 0;
    out->size = color < 0 ? 0 : 1;
    return 0;
}
void ts_hc_free(ts_hcomm *c) {
    c->rank = -1;
    c->size = 0;
}
int ts_hc_barrier(const ts_hcomm *c) { return 0; }
int ts_hc_allreduce_d(const ts_hcomm *c, double *buf, int n, ts_hc_op op) { return 0; }
int ts_hc_allreduce_i(const ts_hcomm *c, int *buf, int n, ts_hc_op op) { return 0; }
int ts_hc_reduce_sum_d(const ts_hcomm *c, const double *in, double *out, int n, int root) {
    if (out != in) memmove(out, in, (size_t)n * sizeof(double));
    return 0;
}
int ts_hc_bcast(const ts_hcomm *c, void *buf, size_t bytes, int root) { return 0; }
int ts_hc_send(const ts_hcomm *c, const double *buf, int64_t n, int dest, int tag) {
    TS_RAISE(TS_ERR_INTERNAL, "send in a serial build");
}
int ts_hc_recv(const ts_hcomm *c, double *buf, int64_t n, int src, int tag) {
    TS_RAISE(TS_ERR_INTERNAL, "recv in a serial build");
}
int ts_hc_isend(const ts_hcomm *c, const double *buf, int64_t n, int dest, int tag, ts_hc_req *req) {
    TS_RAISE(TS_ERR_INTERNAL, "isend in a serial build");
}
int ts_hc_waitall(int n, ts_hc_req *reqs) { return 0; }
int ts_hc_sendrecv(const ts_hcomm *c, const double *sbuf, int64_t sn, int dest, double *rbuf,
                   int64_t rn, int src, int tag) {
    TS_RAISE(TS_ERR_INTERNAL, "sendrecv in a serial build");
}
int ts_hc_allgatherv(const ts_hcomm *c, const double *sbuf, int64_t sn, double *rbuf,
                     const int64_t *counts, const int64_t *displs) {
    if (sn) memmove(rbuf + displs[0], sbuf, (size_t)sn * sizeof(double));
    return 0;
}
int ts_hc_gatherv(const ts_hcomm *c, const double *sbuf, int64_t sn, double *rbuf,
                  const int64_t *counts, const int64_t *displs, int root) {
    if (sn) memmove(rbuf + displs[0], sbuf, (size_t)sn * sizeof(double));
    return 0;
}
int ts_hc_scatterv(const ts_hcomm *c, const double *sbuf, const int64_t *counts,
                   const int64_t *displs, double *rbuf, int64_t rn, int root) {
    if (rn) memmove(rbuf, sbuf + displs[0], (size_t)rn * sizeof(double));
    return 0;
}
int ts_hc_pivot(const ts_hcomm *c, double *rec, int w) { return 0; }

#endif
