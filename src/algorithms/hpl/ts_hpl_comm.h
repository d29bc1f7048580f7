// ts_hpl_comm.h: the MPI calls HPL needs, with a serial build (one rank) when TS_HAVE_MPI is 0.
#ifndef TS_HPL_COMM_H
#define TS_HPL_COMM_H

#include <stddef.h>
#include <stdint.h>

#include "ts_config.h"

#if TS_HAVE_MPI
#include <mpi.h>
typedef MPI_Request ts_hc_req;
#else
typedef int ts_hc_req;
#endif

// A communicator: the world, the P x Q grid, a process row or a process column.
typedef struct {
#if TS_HAVE_MPI
    MPI_Comm comm; // MPI_COMM_NULL when this rank is not a member
#endif
    int rank, size;
} ts_hcomm;

typedef enum { TS_HC_SUM = 0, TS_HC_MAX = 1, TS_HC_MIN = 2 } ts_hc_op;

typedef struct ts_device ts_device;
typedef struct ts_dcomm ts_dcomm;
// A key of the GPU behind a device (host name and PCI bus id): equal on two ranks, one GPU.
double ts_hc_device_key(const ts_device *dev);
// Collective over c: joins every member in a device communicator (NCCL) on its device dev, member
// i as rank i. Only when every member has a CUDA GPU of its own and the build has NCCL; otherwise
// (and when creating it fails anywhere) *out is NULL, why says why, and 0 is returned: the caller
// keeps its host path; *failed (when not NULL) is 1 on a member whose creation itself failed
// (an NCCL error rather than ineligibility). Errors only for MPI failures.
int ts_hc_dcomm_join(const ts_hcomm *c, ts_device *dev, ts_dcomm **out, char *why, size_t len, int *failed);

// Initializes MPI when nobody did (MPI_Finalize then runs at exit) and dups MPI_COMM_WORLD.
int ts_hc_world(ts_hcomm *world);
// Node-local rank and size (MPI_Comm_split_type SHARED).
int ts_hc_node_local(const ts_hcomm *c, int *local_rank, int *local_size);
// Splits c by color (ranks with color < 0 get an empty comm, rank -1) ordered by key.
int ts_hc_split(const ts_hcomm *c, int color, int key, ts_hcomm *out);
void ts_hc_free(ts_hcomm *c);

int ts_hc_barrier(const ts_hcomm *c);
int ts_hc_allreduce_d(const ts_hcomm *c, double *buf, int n, ts_hc_op op);
int ts_hc_allreduce_i(const ts_hcomm *c, int *buf, int n, ts_hc_op op);
int ts_hc_reduce_sum_d(const ts_hcomm *c, const double *in, double *out, int n, int root);
int ts_hc_bcast(const ts_hcomm *c, void *buf, size_t bytes, int root);
// Point to point, doubles (n may exceed INT_MAX: split into pieces).
int ts_hc_send(const ts_hcomm *c, const double *buf, int64_t n, int dest, int tag);
int ts_hc_recv(const ts_hcomm *c, double *buf, int64_t n, int src, int tag);
int ts_hc_isend(const ts_hcomm *c, const double *buf, int64_t n, int dest, int tag, ts_hc_req *req);
int ts_hc_waitall(int n, ts_hc_req *reqs);
int ts_hc_sendrecv(const ts_hcomm *c, const double *sbuf, int64_t sn, int dest, double *rbuf,
                   int64_t rn, int src, int tag);
// Collectives on doubles; counts and displacements in doubles, one per rank.
int ts_hc_allgatherv(const ts_hcomm *c, const double *sbuf, int64_t sn, double *rbuf,
                     const int64_t *counts, const int64_t *displs);
int ts_hc_gatherv(const ts_hcomm *c, const double *sbuf, int64_t sn, double *rbuf,
                  const int64_t *counts, const int64_t *displs, int root);
int ts_hc_scatterv(const ts_hcomm *c, const double *sbuf, const int64_t *counts,
                   const int64_t *displs, double *rbuf, int64_t rn, int root);

// The pivot search of one panel column (HPL_pdmxswp's reduction): each rank offers a record
//   [0] |value| (-1 when it has no candidate), [1] global row, [2] 1 if it owns the current top
//   row, [3 .. 3+w) the candidate row, [3+w .. 3+2w) the current top row (when [2] is 1).
// After the call every rank holds the largest |value| (ties: smallest global row) with its row,
// and the top row from its owner. w = panel width.
int ts_hc_pivot(const ts_hcomm *c, double *rec, int w);
#define TS_HC_PIVOT_LEN(w) (3 + 2 * (w))

#endif
