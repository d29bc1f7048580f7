// ts_collectives.h: device-to-device collectives among the ranks of a job (NCCL on CUDA devices).
//
// A communicator joins one device per rank; its broadcast runs on a device stream, from device
// memory to device memory (over NVLink or PCIe peer paths within a node), so a rank's host never
// touches the data. Built only where NCCL was found (ts_dcomm_available); elsewhere every call
// returns TS_ERR_UNSUPPORTED and callers keep their host (MPI) path. The ranks exchange the
// communicator's id themselves (e.g. an MPI broadcast of the bytes).
#ifndef TS_COLLECTIVES_H
#define TS_COLLECTIVES_H

#include <stddef.h>

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

#ifdef __cplusplus
}
#endif

#endif
