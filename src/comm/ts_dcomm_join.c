// ts_dcomm_join.c: joining the ranks of a host communicator in a device communicator (NCCL), for
// HPL's panel broadcasts and row swaps and HPCG's halo exchange: only when every member has a CUDA GPU of its own.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "comm/ts_comm.h"
#include "comm/ts_dcomm.h"
#include "core/ts_env.h"
#include "core/ts_error.h"

double ts_dcomm_device_key(const ts_device *dev) {
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    const ts_device_props *p = dev ? ts_device_props_of(dev) : NULL;
    uint64_t h = 1469598103934665603ull; // FNV-1a
    for (const char *c = host; *c; c++) h = (h ^ (unsigned char)*c) * 1099511628211ull;
    for (const char *c = p ? p->bus_id : ""; *c; c++) h = (h ^ (unsigned char)*c) * 1099511628211ull;
    return (double)(h >> 12); // exact in a double
}

// NCCL connects a communicator's members at their first operation of a kind (its runtime connect),
// which cost HPL on four H200s ~0.4 s (1 x 4, the row broadcast) and ~1.2 s (2 x 2, the swaps and
// the gathered panels) in its first timed iteration. One exchange with every member and one
// broadcast, ~4 MB each, the kinds ts_dcomm's callers use, pay that here instead. Collective over
// c; every member has joined d. TESSERA_DCOMM_WARM=0 skips it (agreed by the minimum).
#define WARM_BYTES ((int64_t)4 << 20)
static int warm(const ts_comm *c, ts_device *dev, ts_dcomm *d, char *why, size_t len) {
    const int n = c->size;
    int want = 1;
    if (ts_env_bool("TESSERA_DCOMM_WARM", &want) < 0) want = 1;
    TS_CHECK(ts_comm_allreduce_i(c, &want, 1, TS_COMM_MIN));
    if (!want) return 0;
    const int64_t unit = WARM_BYTES / (int64_t)sizeof(double); // doubles per member
    ts_stream *st = NULL;
    double *buf = NULL;
    int64_t *cnt = malloc(sizeof(int64_t) * 2 * (size_t)n);
    int rc = cnt ? ts_stream_create(dev, &st) : TS_ERROR(TS_ERR_NOMEM, "device communicator warm-up");
    if (rc == 0) rc = ts_dmalloc(dev, (size_t)(n * unit) * sizeof(double), (void **)&buf);
    if (rc == 0) rc = ts_memset_async(st, buf, 0, (size_t)(n * unit) * sizeof(double));
    int ok = rc == 0; // every member enqueues the NCCL calls, or none does
    int mrc = ts_comm_allreduce_i(c, &ok, 1, TS_COMM_MIN);
    if (mrc == 0 && ok) {
        for (int q = 0; q < n; q++) cnt[q] = 1, cnt[n + q] = q;
        rc = ts_dcomm_allgatherv(d, st, c->rank, n, buf, cnt, cnt + n, unit);
        int brc = ts_dcomm_bcast(d, st, buf, (size_t)WARM_BYTES, 0); // (after a failed exchange too)
        if (rc == 0) rc = brc;
        int src = ts_stream_sync(st);
        if (rc == 0) rc = src;
    } else if (rc == 0 && mrc == 0) {
        rc = TS_ERROR(TS_ERR_DEVICE, "another member could not prepare the warm-up");
    }
    if (rc && why && len) snprintf(why, len, "warm-up: %s", ts_error_string());
    if (buf) ts_dfree(dev, buf);
    if (st) ts_stream_destroy(st);
    free(cnt);
    TS_CHECK(mrc);
    int all = rc == 0;
    TS_CHECK(ts_comm_allreduce_i(c, &all, 1, TS_COMM_MIN));
    return all ? 0 : 1;
}

int ts_dcomm_join(const ts_comm *c, ts_device *dev, ts_dcomm **out, char *why, size_t len, int *failed) {
    *out = NULL;
    if (failed) *failed = 0;
    if (why && len) why[0] = '\0';
#define WHY(...) (why && len ? (void)snprintf(why, len, __VA_ARGS__) : (void)0)
    const int n = c->size;
    if (n < 2) {
        WHY("one rank");
        return 0;
    }
    double *keys = malloc(sizeof(double) * (size_t)n);
    int64_t *cnt = malloc(sizeof(int64_t) * 2 * (size_t)n);
    if (!keys || !cnt) {
        free(keys), free(cnt);
        TS_RAISE(TS_ERR_NOMEM, "device communicator: out of memory");
    }
    for (int q = 0; q < n; q++) cnt[q] = 1, cnt[n + q] = q;
    const int cuda = dev && ts_device_props_of(dev)->backend == TS_BACKEND_CUDA;
    double mine = cuda ? ts_dcomm_device_key(dev) : -1.0 - c->rank; // no GPU: a key of its own
    int rc = ts_comm_allgatherv(c, &mine, 1, keys, cnt, cnt + n);
    int shared = 0;
    for (int a = 0; rc == 0 && a < n; a++)
        for (int b = a + 1; b < n; b++)
            if (keys[a] == keys[b]) shared = 1;
    free(keys), free(cnt);
    TS_CHECK(rc);
    int ok = cuda && ts_dcomm_available();
    TS_CHECK(ts_comm_allreduce_i(c, &ok, 1, TS_COMM_MIN));
    if (!ok || shared) {
        WHY("%s", shared ? "two ranks share a GPU" : !ts_dcomm_available() ? "the build has no NCCL"
                                                                          : "a rank has no CUDA GPU");
        return 0;
    }
    unsigned char id[TS_DCOMM_ID_BYTES];
    memset(id, 0, sizeof id);
    int made = c->rank == 0 ? ts_dcomm_unique_id(id) : 0;
    TS_CHECK(ts_comm_allreduce_i(c, &made, 1, TS_COMM_MIN));
    ts_dcomm *d = NULL;
    int joined = -1;
    if (made == 0) {
        TS_CHECK(ts_comm_bcast(c, id, sizeof id, 0));
        joined = ts_dcomm_create(dev, id, n, c->rank, &d);
        if (joined < 0) {
            WHY("%s", ts_error_string());
            if (failed) *failed = 1;
        }
    } else {
        WHY("rank 0 could not make a communicator id");
    }
    int all = joined == 0;
    TS_CHECK(ts_comm_allreduce_i(c, &all, 1, TS_COMM_MIN));
    if (!all) {
        ts_dcomm_destroy(d);
        ts_error_clear();
        if (why && len && !why[0]) WHY("another rank could not join");
        return 0;
    }
    // (beyond the allgather's member limit, no warm-up)
    int w = n <= TS_DCOMM_MAX_MEMBERS ? warm(c, dev, d, why, len) : 0;
    if (w < 0) { // an MPI failure
        ts_dcomm_destroy(d);
        return w;
    }
    if (w > 0) {
        ts_dcomm_destroy(d);
        ts_error_clear();
        if (failed) *failed = 1;
        if (why && len && !why[0]) WHY("another rank's warm-up failed");
        return 0;
    }
#undef WHY
    *out = d;
    return 0;
}
