// ts_dcomm.c: device collectives by NCCL (or TS_ERR_UNSUPPORTED in builds without it).
#include "comm/ts_dcomm.h"

#include <stdlib.h>
#include <string.h>

#include "core/ts_error.h"
#include "ts_config.h"

#if TS_HAVE_NCCL
#include <cuda_runtime.h>
#include <nccl.h>

struct ts_dcomm {
    ncclComm_t comm;
    ts_device *dev;
};

int ts_dcomm_available(void) { return 1; }

int ts_dcomm_unique_id(unsigned char id[TS_DCOMM_ID_BYTES]) {
    ncclUniqueId u;
    ncclResult_t r = ncclGetUniqueId(&u);
    if (r != ncclSuccess) TS_RAISE(TS_ERR_DEVICE, "ncclGetUniqueId: %s", ncclGetErrorString(r));
    memset(id, 0, TS_DCOMM_ID_BYTES);
    memcpy(id, &u, sizeof u < TS_DCOMM_ID_BYTES ? sizeof u : TS_DCOMM_ID_BYTES);
    return 0;
}

int ts_dcomm_create(ts_device *d, const unsigned char id[TS_DCOMM_ID_BYTES], int nranks, int rank,
                    ts_dcomm **out) {
    *out = NULL;
    if (!d) TS_RAISE(TS_ERR_ARG, "ts_dcomm_create: NULL device");
    const ts_device_props *p = ts_device_props_of(d);
    if (p->backend != TS_BACKEND_CUDA)
        TS_RAISE(TS_ERR_UNSUPPORTED, "device collectives need a CUDA device (device %d is %s)", p->ordinal,
                 ts_backend_name(p->backend));
    if (nranks < 1 || rank < 0 || rank >= nranks)
        TS_RAISE(TS_ERR_ARG, "ts_dcomm_create: rank %d of %d", rank, nranks);
    cudaError_t e = cudaSetDevice(p->native_id);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        TS_RAISE(TS_ERR_CUDA, "cudaSetDevice(%d): %s", p->native_id, cudaGetErrorString(e));
    }
    ts_dcomm *c = calloc(1, sizeof *c);
    if (!c) TS_RAISE(TS_ERR_NOMEM, "device communicator");
    ncclUniqueId u;
    memcpy(&u, id, sizeof u);
    ncclResult_t r = ncclCommInitRank(&c->comm, nranks, u, rank);
    if (r != ncclSuccess) {
        free(c);
        TS_RAISE(TS_ERR_DEVICE, "ncclCommInitRank (rank %d of %d): %s", rank, nranks, ncclGetErrorString(r));
    }
    c->dev = d;
    *out = c;
    return 0;
}

int ts_dcomm_bcast(ts_dcomm *c, ts_stream *st, void *buf, size_t bytes, int root) {
    if (!c || !st) TS_RAISE(TS_ERR_ARG, "ts_dcomm_bcast: NULL communicator or stream");
    if (bytes == 0) return 0;
    cudaStream_t cs = (cudaStream_t)ts_stream_native(st);
    ncclResult_t r = ncclBroadcast(buf, buf, bytes, ncclChar, root, c->comm, cs);
    if (r != ncclSuccess) TS_RAISE(TS_ERR_DEVICE, "ncclBroadcast (%zu bytes from %d): %s", bytes, root,
                                   ncclGetErrorString(r));
    return 0;
}

int ts_dcomm_exchange(ts_dcomm *c, ts_stream *st, int n, const int *peer, void *const *sbuf,
                      const size_t *sbytes, void *const *rbuf, const size_t *rbytes) {
    if (!c || !st || n < 0 || (n > 0 && (!peer || !sbuf || !sbytes || !rbuf || !rbytes)))
        TS_RAISE(TS_ERR_ARG, "ts_dcomm_exchange: NULL communicator, stream or lists");
    if (n == 0) return 0;
    cudaStream_t cs = (cudaStream_t)ts_stream_native(st);
    ncclResult_t r = ncclGroupStart();
    for (int i = 0; r == ncclSuccess && i < n; i++) {
        if (rbytes[i]) r = ncclRecv(rbuf[i], rbytes[i], ncclChar, peer[i], c->comm, cs);
        if (r == ncclSuccess && sbytes[i]) r = ncclSend(sbuf[i], sbytes[i], ncclChar, peer[i], c->comm, cs);
    }
    ncclResult_t e = ncclGroupEnd(); // closes the group even after a failed call
    if (r == ncclSuccess) r = e;
    if (r != ncclSuccess) TS_RAISE(TS_ERR_DEVICE, "NCCL exchange with %d peers: %s", n, ncclGetErrorString(r));
    return 0;
}

void ts_dcomm_destroy(ts_dcomm *c) {
    if (!c) return;
    (void)ncclCommDestroy(c->comm);
    free(c);
}

#else

struct ts_dcomm {
    int unused;
};

int ts_dcomm_available(void) { return 0; }
int ts_dcomm_unique_id(unsigned char id[TS_DCOMM_ID_BYTES]) {
    (void)id;
    TS_RAISE(TS_ERR_UNSUPPORTED, "this build has no device collectives (NCCL not found)");
}
int ts_dcomm_create(ts_device *d, const unsigned char id[TS_DCOMM_ID_BYTES], int nranks, int rank,
                    ts_dcomm **out) {
    (void)d, (void)id, (void)nranks, (void)rank;
    *out = NULL;
    TS_RAISE(TS_ERR_UNSUPPORTED, "this build has no device collectives (NCCL not found)");
}
int ts_dcomm_bcast(ts_dcomm *c, ts_stream *st, void *buf, size_t bytes, int root) {
    (void)c, (void)st, (void)buf, (void)bytes, (void)root;
    TS_RAISE(TS_ERR_UNSUPPORTED, "this build has no device collectives (NCCL not found)");
}
int ts_dcomm_exchange(ts_dcomm *c, ts_stream *st, int n, const int *peer, void *const *sbuf,
                      const size_t *sbytes, void *const *rbuf, const size_t *rbytes) {
    (void)c, (void)st, (void)n, (void)peer, (void)sbuf, (void)sbytes, (void)rbuf, (void)rbytes;
    TS_RAISE(TS_ERR_UNSUPPORTED, "this build has no device collectives (NCCL not found)");
}
void ts_dcomm_destroy(ts_dcomm *c) { (void)c; }

#endif

// ---------------------------------------------------------------- both builds

#define DCOMM_MAX_PEERS (TS_DCOMM_MAX_MEMBERS - 1)

int ts_dcomm_allgatherv(ts_dcomm *c, ts_stream *st, int me, int n, double *buf, const int64_t *cnt,
                        const int64_t *dsp, int64_t unit) {
    if (n - 1 > DCOMM_MAX_PEERS)
        TS_RAISE(TS_ERR_UNSUPPORTED, "device allgather over %d members (at most %d)", n, DCOMM_MAX_PEERS + 1);
    int peer[DCOMM_MAX_PEERS], k = 0;
    void *sb[DCOMM_MAX_PEERS], *rb[DCOMM_MAX_PEERS];
    size_t sn[DCOMM_MAX_PEERS], rn[DCOMM_MAX_PEERS];
    for (int q = 0; q < n; q++) {
        if (q == me) continue;
        peer[k] = q;
        sb[k] = buf + dsp[me] * unit;
        sn[k] = sizeof(double) * (size_t)(cnt[me] * unit);
        rb[k] = buf + dsp[q] * unit;
        rn[k] = sizeof(double) * (size_t)(cnt[q] * unit);
        k++;
    }
    return ts_dcomm_exchange(c, st, k, peer, sb, sn, rb, rn);
}

int ts_dcomm_rooted(ts_dcomm *c, ts_stream *st, int me, int n, int root, int to_root, double *rootbuf,
                    const int64_t *cnt, const int64_t *dsp, double *mine, int64_t nmine) {
    if (n - 1 > DCOMM_MAX_PEERS)
        TS_RAISE(TS_ERR_UNSUPPORTED, "device gather/scatter over %d members (at most %d)", n, DCOMM_MAX_PEERS + 1);
    const int at_root = me == root;
    int peer[DCOMM_MAX_PEERS], k = 0;
    void *sb[DCOMM_MAX_PEERS], *rb[DCOMM_MAX_PEERS];
    size_t sz[DCOMM_MAX_PEERS], rz[DCOMM_MAX_PEERS];
    for (int q = 0; q < n; q++) {
        if (q == me || (!at_root && q != root)) continue;
        // root: rootbuf + dsp[q] with member q; the others: mine with root
        void *buf = at_root ? (void *)(rootbuf + dsp[q]) : (void *)mine;
        size_t bytes = sizeof(double) * (size_t)(at_root ? cnt[q] : nmine);
        const int send = at_root != to_root; // root sends when scattering, the others when gathering
        peer[k] = q;
        sb[k] = send ? buf : NULL, sz[k] = send ? bytes : 0;
        rb[k] = send ? NULL : buf, rz[k] = send ? 0 : bytes;
        k++;
    }
    return ts_dcomm_exchange(c, st, k, peer, sb, sz, rb, rz);
}
