// ts_comm.h: communication among the ranks of a job (MPI), with a serial build (one rank) when TS_HAVE_MPI is 0.
//
// The host side of the communication layer (docs/architecture.md, comm): communicators, a P x Q
// process grid, reductions, broadcasts, point to point and the v-collectives on doubles, and the
// check that a setting is the same on every rank. Device-to-device collectives are in ts_dcomm.h.
// Every call returns 0 or a negative ts_status with the MPI error string recorded.
#ifndef TS_COMM_H
#define TS_COMM_H

#include <stddef.h>
#include <stdint.h>

#include "ts_config.h"

#if TS_HAVE_MPI
#include <mpi.h>
typedef MPI_Request ts_comm_req;
#else
typedef int ts_comm_req;
#endif

// A communicator: the world, a P x Q grid, a process row or a process column.
typedef struct {
#if TS_HAVE_MPI
    MPI_Comm comm; // MPI_COMM_NULL when this rank is not a member
#endif
    int rank, size;
} ts_comm;

typedef enum { TS_COMM_SUM = 0, TS_COMM_MAX = 1, TS_COMM_MIN = 2 } ts_comm_op;

// Initializes MPI when nobody did (MPI_Finalize then runs at exit) and dups MPI_COMM_WORLD.
int ts_comm_world(ts_comm *world);
// Node-local rank and size (MPI_Comm_split_type SHARED).
int ts_comm_node_local(const ts_comm *c, int *local_rank, int *local_size);
// Splits c by color (ranks with color < 0 get an empty comm, rank -1) ordered by key.
int ts_comm_split(const ts_comm *c, int color, int key, ts_comm *out);
void ts_comm_free(ts_comm *c);
// Collective over c: a P x Q process grid of its first P*Q ranks (in rank order), rank g of the grid
// at row g / Q, column g % Q (col_major: row g % P, column g / P); *row holds the grid's ranks of
// this one's process row (ordered by column), *col those of its column (ordered by row). Ranks
// beyond the grid get empty communicators (rank -1) and *myrow = *mycol = -1.
int ts_comm_grid(const ts_comm *c, int P, int Q, int col_major, ts_comm *grid, ts_comm *row, ts_comm *col,
                 int *myrow, int *mycol);

int ts_comm_barrier(const ts_comm *c);
int ts_comm_allreduce_d(const ts_comm *c, double *buf, int n, ts_comm_op op);
int ts_comm_allreduce_i(const ts_comm *c, int *buf, int n, ts_comm_op op);
int ts_comm_reduce_sum_d(const ts_comm *c, const double *in, double *out, int n, int root);
int ts_comm_bcast(const ts_comm *c, void *buf, size_t bytes, int root);
// Point to point, doubles (n may exceed INT_MAX: split into pieces).
int ts_comm_send(const ts_comm *c, const double *buf, int64_t n, int dest, int tag);
int ts_comm_recv(const ts_comm *c, double *buf, int64_t n, int src, int tag);
int ts_comm_isend(const ts_comm *c, const double *buf, int64_t n, int dest, int tag, ts_comm_req *req);
int ts_comm_waitall(int n, ts_comm_req *reqs);
int ts_comm_sendrecv(const ts_comm *c, const double *sbuf, int64_t sn, int dest, double *rbuf,
                     int64_t rn, int src, int tag);
// Collectives on doubles; counts and displacements in doubles, one per rank.
int ts_comm_allgatherv(const ts_comm *c, const double *sbuf, int64_t sn, double *rbuf,
                       const int64_t *counts, const int64_t *displs);
int ts_comm_gatherv(const ts_comm *c, const double *sbuf, int64_t sn, double *rbuf,
                    const int64_t *counts, const int64_t *displs, int root);
int ts_comm_scatterv(const ts_comm *c, const double *sbuf, const int64_t *counts,
                     const int64_t *displs, double *rbuf, int64_t rn, int root);

// Collective over c: TS_ERR_ARG, "<what> differs between the ranks", unless v is the same on every
// rank (a setting that selects a collective path must be).
int ts_comm_same_on_ranks(const ts_comm *c, double v, const char *what);

#if TS_HAVE_MPI
// Records an MPI failure of `call` (rc, an MPI error code) as TS_ERR_MPI; for callers that use
// the MPI communicator of a ts_comm directly (e.g. a reduction with an operator of their own).
int ts_comm_mpi_error(int rc, const char *call);
#endif

#endif
