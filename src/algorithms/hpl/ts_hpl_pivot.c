// ts_hpl_pivot.c: the pivot search's reduction over the process column (HPL_pdmxswp), an MPI operator of HPL's own.
#include <string.h>

#include "algorithms/hpl/ts_hpl_internal.h"

#if TS_HAVE_MPI

// The reduction operator of ts_hpl_pivot. A record is one element of a contiguous datatype, so MPI
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

int ts_hpl_pivot(const ts_comm *c, double *rec, int w) {
    if (c->size <= 1) return 0;
    static MPI_Op op = MPI_OP_NULL; // created once per process; MPI ops live until finalize
    if (op == MPI_OP_NULL) {
        int rc = MPI_Op_create(pivot_op, 1, &op);
        if (rc != MPI_SUCCESS) return ts_comm_mpi_error(rc, "MPI_Op_create(pivot)");
    }
    MPI_Datatype t;
    int rc = MPI_Type_contiguous(TS_HPL_PIVOT_LEN(w), MPI_DOUBLE, &t);
    if (rc != MPI_SUCCESS) return ts_comm_mpi_error(rc, "MPI_Type_contiguous(pivot)");
    MPI_Type_commit(&t);
    rc = MPI_Allreduce(MPI_IN_PLACE, rec, 1, t, op, c->comm);
    MPI_Type_free(&t);
    if (rc != MPI_SUCCESS) return ts_comm_mpi_error(rc, "MPI_Allreduce(pivot)");
    return 0;
}

#else

int ts_hpl_pivot(const ts_comm *c, double *rec, int w) { return 0; }

#endif
