// ts_hpcg_exec.c: the executor of the optimized implementation: the host, or one device stream (memory, copies, kernel launches).
#include <stdlib.h>
#include <string.h>

#include "algorithms/hpcg/ts_hpcg_opt.h"
#include "core/ts_error.h"

void ts_hpcg_exec_host(ts_hpcg_exec *X) { memset(X, 0, sizeof *X); }

int ts_hpcg_exec_device(ts_hpcg_exec *X, ts_devset *set, ts_device *dev) {
    memset(X, 0, sizeof *X);
    X->set = set;
    X->dev = dev;
    X->cuda = ts_device_props_of(dev)->backend == TS_BACKEND_CUDA;
    return ts_stream_create(dev, &X->st);
}

void ts_hpcg_exec_fini(ts_hpcg_exec *X) {
    if (X->st) {
        ts_stream_sync(X->st);
        ts_stream_destroy(X->st);
    }
    memset(X, 0, sizeof *X);
}

int ts_hpcg_xalloc(const ts_hpcg_exec *X, size_t bytes, void **p) {
    *p = NULL;
    if (X->set) return ts_dmalloc(X->dev, bytes ? bytes : 256, p);
    if (posix_memalign(p, 64, bytes ? bytes : 64) != 0 || !*p) {
        *p = NULL;
        TS_RAISE(TS_ERR_NOMEM, "hpcg: cannot allocate %zu bytes of host memory", bytes);
    }
    return 0;
}

void ts_hpcg_xfree(const ts_hpcg_exec *X, void *p) {
    if (!p) return;
    if (X->set) ts_dfree(X->dev, p);
    else free(p);
}

int ts_hpcg_xcopy(const ts_hpcg_exec *X, ts_copy_kind kind, void *dst, const void *src, size_t bytes) {
    if (!bytes) return 0;
    if (X->set) return ts_copy_async(X->st, kind, dst, src, bytes);
    memcpy(dst, src, bytes);
    return 0;
}

int ts_hpcg_xmemset(const ts_hpcg_exec *X, void *p, int byte, size_t bytes) {
    if (!bytes) return 0;
    if (X->set) return ts_memset_async(X->st, p, byte, bytes);
    memset(p, byte, bytes);
    return 0;
}

int ts_hpcg_xrun(const ts_hpcg_exec *X, const ts_kernel *k) {
    if (X->set) return ts_kernel_enqueue(X->st, k);
    return k->cpu((void *)k->args);
}

int ts_hpcg_xsync(const ts_hpcg_exec *X) { return X->set ? ts_stream_sync(X->st) : 0; }

int ts_hpcg_xhalloc(const ts_hpcg_exec *X, size_t bytes, void **p) {
    *p = NULL;
    if (X->set) return ts_host_alloc(X->set, bytes ? bytes : 64, p);
    *p = malloc(bytes ? bytes : 64);
    if (!*p) TS_RAISE(TS_ERR_NOMEM, "hpcg: cannot allocate %zu bytes of host memory", bytes);
    return 0;
}

void ts_hpcg_xhfree(const ts_hpcg_exec *X, void *p) {
    if (!p) return;
    if (X->set) ts_host_free(X->set, p);
    else free(p);
}
