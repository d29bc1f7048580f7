// ts_dcomm.h: device-to-device collectives among the ranks of a job (NCCL on CUDA devices).
//
// The device side of the communication layer (docs/architecture.md, comm). A communicator joins
// one device per rank; its operations run on a device stream, from device
// memory to device memory (over NVLink or PCIe peer paths within a node), so a rank's host never
// touches the data. Built only where NCCL was found (ts_dcomm_available); elsewhere every call
// returns TS_ERR_UNSUPPORTED and callers keep their host (MPI) path. The ranks exchange the
// communicator's id themselves (e.g. an MPI broadcast of the bytes).
#ifndef TS_DCOMM_H
#define TS_DCOMM_H

#include <stddef.h>
#include <stdint.h>

#include "comm/ts_comm.h"
#include "device/ts_device.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TS_DCOMM_ID_BYTES 128

typedef struct ts_dcomm ts_dcomm;

int ts_dcomm_available(void); // 1 when built with NCCL
// A new communicator id (one rank makes it, every member gets the same bytes).
int ts_dcomm_unique_id(unsigned char id[TS_DCOMM_ID_BYTES]);
// Joins `nranks` ranks (this one is `rank`) on device d; every member calls it with the same id.
// Blocks until all members joined. d must be a CUDA device, a different one on every member.
int ts_dcomm_create(ts_device *d, const unsigned char id[TS_DCOMM_ID_BYTES], int nranks, int rank,
                    ts_dcomm **out);
// Broadcast of `bytes` bytes at buf (device memory) from member root, on stream st of the device.
int ts_dcomm_bcast(ts_dcomm *c, ts_stream *st, void *buf, size_t bytes, int root);
// Point-to-point exchange with n peers on stream st of the device, as one group: for each i,
// sbytes[i] bytes from sbuf[i] (device memory) go to member peer[i], and rbytes[i] bytes from it
// arrive at rbuf[i]. Every peer must call it with the mirror image (its own sends and receives)
// in the same order of collective calls. Returns once enqueued: the stream orders the rest.
int ts_dcomm_exchange(ts_dcomm *c, ts_stream *st, int n, const int *peer, void *const *sbuf,
                      const size_t *sbytes, void *const *rbuf, const size_t *rbytes);
void ts_dcomm_destroy(ts_dcomm *c);

// The most members the v-collectives below take (one exchange with each other member).
#define TS_DCOMM_MAX_MEMBERS 65

// v-collectives on doubles in device memory, built on ts_dcomm_exchange (enqueued on stream st):
// this rank is member me of n; counts and displacements per member, in units of `unit` doubles.
// allgatherv: buf holds this member's cnt[me] units at dsp[me]; afterwards every member's cnt[q]
// units at dsp[q]. At most TS_DCOMM_MAX_MEMBERS members.
int ts_dcomm_allgatherv(ts_dcomm *c, ts_stream *st, int me, int n, double *buf, const int64_t *cnt,
                        const int64_t *dsp, int64_t unit);
// Between member root and the others: cnt[q] doubles at rootbuf + dsp[q] on root for member q
// (root's own entry unused), nmine doubles at mine on every other member; to_root gathers them
// on root (gatherv), else root scatters them (scatterv). At most TS_DCOMM_MAX_MEMBERS members.
int ts_dcomm_rooted(ts_dcomm *c, ts_stream *st, int me, int n, int root, int to_root, double *rootbuf,
                    const int64_t *cnt, const int64_t *dsp, double *mine, int64_t nmine);

// ---- joining (ts_dcomm_join.c) ----
// A key of the GPU behind a device (host name and PCI bus id): equal on two ranks, one GPU.
double ts_dcomm_device_key(const ts_device *dev);
// Collective over c: joins every member in a device communicator (NCCL) on its device dev, member
// i as rank i. Only when every member has a CUDA GPU of its own and the build has NCCL; otherwise
// (and when creating it fails anywhere) *out is NULL, why says why, and 0 is returned: the caller
// keeps its host path; *failed (when not NULL) is 1 on a member whose creation itself failed
// (an NCCL error rather than ineligibility). Errors only for MPI failures.
int ts_dcomm_join(const ts_comm *c, ts_device *dev, ts_dcomm **out, char *why, size_t len, int *failed);

#ifdef __cplusplus
}
#endif

#endif
