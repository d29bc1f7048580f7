// ts_cuda_backend.c: the CUDA backend of the device layer (runtime API): devices, arenas, streams, events, copies.
//
// ts_device.c validates arguments, keeps counters and builds the arenas; this file only talks to
// the CUDA runtime. Every call is checked and a failure names the operation and the device. Each
// entry point selects the device it works on first (cudaSetDevice), so several GPUs can be driven
// from one process and one thread. Errors of asynchronous work are sticky per stream: the first one
// is kept (code and message) and returned by every later stream_sync/stream_error.
#include "device/ts_device_impl.h"

#include "core/ts_error.h"
#include "core/ts_log.h"

#include <cuda_runtime_api.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TS_CUDA_ARENA_GRAIN ((size_t)2 << 20) // arenas are whole 2 MiB pages
#define TS_CUDA_ARENA_ALIGN 256
#define TS_CUDA_DEFAULT_FRACTION 0.90

typedef struct {
    int native;                           // CUDA device id
    int peer[TS_MAX_DEVICES];             // 1: peer access enabled towards device (ordinal) j
    pthread_mutex_t lock;                 // guards first_err
    int first_err;                        // first sticky error of any stream of the device
    char first_msg[512];
} cuda_dev;

// Host ranges the registry asked to pin that CUDA had page-locked already (cudaHostAlloc memory,
// or registered by someone else): not registered again, and so not unregistered either.
typedef struct {
    pthread_mutex_t lock;
    struct { uintptr_t lo, hi; } *skip;
    int nskip, capskip;
} cuda_set;

typedef struct {
    cudaStream_t stream;
    pthread_mutex_t lock;                 // guards err/msg/capturing
    int err;                              // sticky: first failure on the stream (0 = none)
    char msg[512];
    int capturing;                        // a graph capture is open: failures fail it, not the stream
} cuda_stream;

typedef struct {
    cudaGraph_t graph;
    cudaGraphExec_t exec;
} cuda_graph;

typedef struct {
    cudaEvent_t event;
    int recorded;
} cuda_event;

static cuda_dev *dev_of(const ts_device *d) { return (cuda_dev *)d->impl; }
static int native_of(const ts_device *d) { return dev_of(d)->native; }
static cuda_stream *stream_of(const ts_stream *st) { return (cuda_stream *)st->impl; }
static int ordinal_of(const ts_device *d) { return d->props.ordinal; }

// Records a CUDA failure of `op` on device `dev` (the message names both) and returns TS_ERR_CUDA.
// Also resets the runtime's per-thread last error so a later cudaGetLastError does not see it again.
#define CUDA_FAIL(err, dev, ...) cuda_fail((err), (dev), __FILE__, __LINE__, __VA_ARGS__)
static int cuda_fail(cudaError_t err, int dev, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int cuda_fail(cudaError_t err, int dev, const char *file, int line, const char *fmt, ...)
{
    char op[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(op, sizeof op, fmt, ap);
    va_end(ap);
    (void)cudaGetLastError();
    int code = err == cudaErrorMemoryAllocation ? TS_ERR_DEVMEM : TS_ERR_CUDA;
    return ts_error_set(code, file, line, "%s on device %d: %s (%s)", op, dev, cudaGetErrorString(err),
                        cudaGetErrorName(err));
}

static int set_device(int native)
{
    cudaError_t e = cudaSetDevice(native);
    if (e != cudaSuccess) return CUDA_FAIL(e, native, "cudaSetDevice(%d)", native);
    return 0;
}

// ---- sticky errors ----

// Keeps the calling thread's current error as the stream's sticky error if it has none yet, and
// as the device's first error. Returns rc. During a graph capture nothing ran: an operation that
// fails there fails the capture (ts_device.c keeps it), and the stream stays usable.
static int stream_fail(ts_stream *st, int rc)
{
    cuda_stream *cs = stream_of(st);
    const ts_error_info *e = ts_error_last();
    pthread_mutex_lock(&cs->lock);
    if (cs->capturing) {
        pthread_mutex_unlock(&cs->lock);
        return rc;
    }
    if (cs->err == 0) {
        cs->err = rc;
        snprintf(cs->msg, sizeof cs->msg, "%s", e->code == rc ? e->message : ts_status_name(rc));
    }
    pthread_mutex_unlock(&cs->lock);
    cuda_dev *cd = dev_of(st->dev);
    pthread_mutex_lock(&cd->lock);
    if (cd->first_err == 0) {
        cd->first_err = rc;
        snprintf(cd->first_msg, sizeof cd->first_msg, "%s", e->code == rc ? e->message : ts_status_name(rc));
    }
    pthread_mutex_unlock(&cd->lock);
    return rc;
}

// The stream's sticky error re-raised for the calling thread (which may not be the one that hit it).
static int stream_sticky(ts_stream *st)
{
    cuda_stream *cs = stream_of(st);
    pthread_mutex_lock(&cs->lock);
    int rc = cs->err;
    char msg[512];
    if (rc) snprintf(msg, sizeof msg, "%s", cs->msg);
    pthread_mutex_unlock(&cs->lock);
    if (rc == 0) return 0;
    return ts_error_set(rc, __FILE__, __LINE__, "stream of device %d failed earlier: %s",
                        ordinal_of(st->dev), msg);
}

// ---- enumeration ----

int ts_cuda_available(void) { return 1; }

int ts_cuda_device_count(void)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        // No driver or no GPU: not an error for the caller, there are just no CUDA devices.
        (void)cudaGetLastError();
        return 0;
    }
    return n;
}

static int attr(enum cudaDeviceAttr a, int native, int *v, const char *what)
{
    cudaError_t e = cudaDeviceGetAttribute(v, a, native);
    if (e != cudaSuccess) return CUDA_FAIL(e, native, "cudaDeviceGetAttribute(%s)", what);
    return 0;
}

static int fill_props(ts_device *d, int ordinal, int native)
{
    ts_device_props *p = &d->props;
    struct cudaDeviceProp cp;
    cudaError_t e = cudaGetDeviceProperties(&cp, native);
    if (e != cudaSuccess) return CUDA_FAIL(e, native, "cudaGetDeviceProperties");
    p->backend = TS_BACKEND_CUDA;
    p->ordinal = ordinal;
    p->native_id = native;
    size_t nl = strnlen(cp.name, sizeof cp.name);
    if (nl >= sizeof p->name) nl = sizeof p->name - 1;
    memcpy(p->name, cp.name, nl);
    p->name[nl] = '\0';
    e = cudaDeviceGetPCIBusId(p->bus_id, (int)sizeof p->bus_id, native);
    if (e != cudaSuccess) return CUDA_FAIL(e, native, "cudaDeviceGetPCIBusId");
    p->mem_total = cp.totalGlobalMem;
    p->cc_major = cp.major;
    p->cc_minor = cp.minor;
    int sms = 0, clock_khz = 0, mem_khz = 0, bus_bits = 0;
    TS_CHECK(attr(cudaDevAttrMultiProcessorCount, native, &sms, "MultiProcessorCount"));
    TS_CHECK(attr(cudaDevAttrClockRate, native, &clock_khz, "ClockRate"));
    TS_CHECK(attr(cudaDevAttrMemoryClockRate, native, &mem_khz, "MemoryClockRate"));
    TS_CHECK(attr(cudaDevAttrGlobalMemoryBusWidth, native, &bus_bits, "GlobalMemoryBusWidth"));
    p->sms = sms;
    p->clock_mhz = clock_khz / 1000.0;
    // Double data rate: two transfers per memory clock, bus_bits/8 bytes each.
    p->mem_bw_gbs = 2.0 * mem_khz * 1e3 * (bus_bits / 8.0) / 1e9;
    p->rel_speed = 1.0;
    p->host_mapped = 1;
    return 0;
}

// The arena: ONE cudaMalloc per device, of opts.arena_bytes or arena_fraction of the free memory,
// rounded down to 2 MiB. ts_device.c builds the sub-allocator over it.
static int alloc_arena(ts_devset *s, ts_device *d)
{
    int native = native_of(d);
    TS_CHECK(set_device(native));
    size_t free_b = 0, total_b = 0;
    cudaError_t e = cudaMemGetInfo(&free_b, &total_b);
    if (e != cudaSuccess) return CUDA_FAIL(e, native, "cudaMemGetInfo");
    size_t bytes = s->opts.arena_bytes;
    if (bytes == 0) {
        double f = s->opts.arena_fraction;
        if (!(f > 0.0 && f <= 1.0)) f = TS_CUDA_DEFAULT_FRACTION;
        bytes = (size_t)(f * (double)free_b);
    }
    bytes -= bytes % TS_CUDA_ARENA_GRAIN;
    if (bytes == 0)
        TS_RAISE(TS_ERR_DEVMEM, "device %d (%s): arena size rounds to 0 bytes (%zu bytes free)",
                 ordinal_of(d), d->props.name, free_b);
    if (bytes > free_b)
        TS_RAISE(TS_ERR_DEVMEM, "device %d (%s): arena of %zu bytes asked, only %zu bytes free",
                 ordinal_of(d), d->props.name, bytes, free_b);
    void *base = NULL;
    e = cudaMalloc(&base, bytes);
    if (e != cudaSuccess) return CUDA_FAIL(e, native, "cudaMalloc(%zu bytes arena)", bytes);
    d->arena_base = base;
    d->props.arena_bytes = bytes;
    return 0;
}

// Enables peer access between every pair of devices that supports it (both directions).
static void enable_peers(ts_devset *s)
{
    for (int i = 0; i < s->count; i++) {
        ts_device *a = s->devices[i];
        for (int j = 0; j < s->count; j++) {
            if (i == j) continue;
            ts_device *b = s->devices[j];
            int can = 0;
            cudaError_t e = cudaDeviceCanAccessPeer(&can, native_of(a), native_of(b));
            if (e != cudaSuccess || !can) {
                (void)cudaGetLastError();
                continue;
            }
            if (set_device(native_of(a)) < 0) continue;
            e = cudaDeviceEnablePeerAccess(native_of(b), 0);
            if (e == cudaErrorPeerAccessAlreadyEnabled) {
                (void)cudaGetLastError();
                e = cudaSuccess;
            }
            if (e != cudaSuccess) {
                TS_LOG_W("device %d cannot enable peer access to device %d: %s", i, j,
                         cudaGetErrorString(e));
                (void)cudaGetLastError();
                continue;
            }
            dev_of(a)->peer[j] = 1;
        }
    }
}

static void cuda_close(ts_devset *s)
{
    for (int i = 0; i < s->count; i++) {
        ts_device *d = s->devices[i];
        if (!d || !d->impl) continue;
        cuda_dev *cd = dev_of(d);
        if (cudaSetDevice(cd->native) == cudaSuccess) {
            cudaError_t e = cudaDeviceSynchronize();
            if (e != cudaSuccess) TS_LOG_W("device %d: cudaDeviceSynchronize at close: %s", i, cudaGetErrorString(e));
            if (d->arena_base) {
                e = cudaFree(d->arena_base);
                if (e != cudaSuccess) TS_LOG_W("device %d: cudaFree(arena) at close: %s", i, cudaGetErrorString(e));
            }
            for (int j = 0; j < s->count; j++) {
                if (cd->peer[j] && s->devices[j] && s->devices[j]->impl)
                    (void)cudaDeviceDisablePeerAccess(native_of(s->devices[j]));
            }
        }
        (void)cudaGetLastError();
        d->arena_base = NULL;
        d->props.arena_bytes = 0;
        pthread_mutex_destroy(&cd->lock);
        free(cd);
        d->impl = NULL;
    }
    cuda_set *cs = s->impl;
    if (cs) {
        pthread_mutex_destroy(&cs->lock);
        free(cs->skip);
        free(cs);
        s->impl = NULL;
    }
}

static int cuda_open(ts_devset *s)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        TS_RAISE(TS_ERR_UNSUPPORTED, "CUDA backend: no usable CUDA device (cudaGetDeviceCount: %s)",
                 cudaGetErrorString(e));
    }
    if (n <= 0) TS_RAISE(TS_ERR_UNSUPPORTED, "CUDA backend: no CUDA device is visible");
    if (s->opts.max_devices > 0 && n > s->opts.max_devices) n = s->opts.max_devices;
    if (n > TS_MAX_DEVICES) n = TS_MAX_DEVICES;

    cuda_set *cset = calloc(1, sizeof *cset);
    if (!cset) TS_RAISE(TS_ERR_NOMEM, "CUDA backend: out of host memory");
    pthread_mutex_init(&cset->lock, NULL);
    s->impl = cset;
    int rc = 0, i = 0;
    s->count = 0;
    for (i = 0; i < n; i++) {
        ts_device *d = ts_device_new(s, i);
        if (!d) {
            rc = ts_error_last()->code ? ts_error_last()->code : TS_ERR_NOMEM;
            goto fail;
        }
        s->devices[i] = d;
        s->count = i + 1;
        cuda_dev *cd = calloc(1, sizeof *cd);
        if (!cd) {
            rc = TS_ERROR(TS_ERR_NOMEM, "CUDA backend: out of host memory for device %d", i);
            goto fail;
        }
        cd->native = i; // runtime ids already follow CUDA_VISIBLE_DEVICES
        pthread_mutex_init(&cd->lock, NULL);
        d->impl = cd;
        TS_CHECK_GOTO(fill_props(d, i, cd->native), rc, fail);
        TS_CHECK_GOTO(alloc_arena(s, d), rc, fail);
        TS_LOG_D("device %d: %s (%s), cc %d.%d, %d SMs, %.0f MHz, %.0f GB/s, arena %zu of %zu bytes", i,
                 d->props.name, d->props.bus_id, d->props.cc_major, d->props.cc_minor, d->props.sms,
                 d->props.clock_mhz, d->props.mem_bw_gbs, d->props.arena_bytes, d->props.mem_total);
    }
    enable_peers(s);
    return 0;
fail:
    ts_error_wrap(rc, "opening CUDA device %d", i);
    cuda_close(s); // frees what this backend allocated; the ts_device structs stay with ts_device.c
    return rc;
}

// ---- pinned and page-locked host memory ----

static int page_locked(const void *p)
{
    struct cudaPointerAttributes at;
    if (cudaPointerGetAttributes(&at, p) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return at.type == cudaMemoryTypeHost;
}

static int skip_add(ts_devset *s, void *p, size_t n)
{
    cuda_set *cs = s ? s->impl : NULL;
    if (!cs) return 0;
    int rc = 0;
    pthread_mutex_lock(&cs->lock);
    if (cs->nskip == cs->capskip) {
        int cap = cs->capskip ? 2 * cs->capskip : 8;
        void *q = realloc(cs->skip, (size_t)cap * sizeof *cs->skip);
        if (!q) rc = TS_ERROR(TS_ERR_NOMEM, "pinning: out of host memory");
        else cs->skip = q, cs->capskip = cap;
    }
    if (rc == 0) {
        cs->skip[cs->nskip].lo = (uintptr_t)p;
        cs->skip[cs->nskip].hi = (uintptr_t)p + n;
        cs->nskip++;
    }
    pthread_mutex_unlock(&cs->lock);
    return rc;
}

// 1 if [p, p+n) was skipped at registration (and forgets it).
static int skip_take(ts_devset *s, void *p, size_t n)
{
    cuda_set *cs = s ? s->impl : NULL;
    if (!cs) return 0;
    int found = 0;
    pthread_mutex_lock(&cs->lock);
    for (int i = 0; i < cs->nskip; i++)
        if (cs->skip[i].lo == (uintptr_t)p && cs->skip[i].hi == (uintptr_t)p + n) {
            cs->skip[i] = cs->skip[--cs->nskip];
            found = 1;
            break;
        }
    pthread_mutex_unlock(&cs->lock);
    return found;
}

// ctx is the device set (ts_device.c gives it to the pin registry).
static int cuda_host_register(void *ctx, void *p, size_t n)
{
    ts_devset *s = ctx;
    // Already page-locked by CUDA (cudaHostAlloc memory): cudaHostRegister would refuse it with
    // 'invalid argument', and it needs nothing more to be copied asynchronously.
    if (page_locked(p) && page_locked((char *)p + n - 1)) return skip_add(s, p, n);
    cudaError_t e = cudaHostRegister(p, n, cudaHostRegisterDefault);
    if (e == cudaErrorHostMemoryAlreadyRegistered) {
        (void)cudaGetLastError();
        return skip_add(s, p, n);
    }
    if (e != cudaSuccess) {
        int dev = -1;
        (void)cudaGetDevice(&dev);
        return CUDA_FAIL(e, dev, "cudaHostRegister(%p, %zu bytes)", p, n);
    }
    return 0;
}

static int cuda_host_unregister(void *ctx, void *p, size_t n)
{
    if (skip_take(ctx, p, n)) return 0;
    cudaError_t e = cudaHostUnregister(p);
    if (e != cudaSuccess) {
        int dev = -1;
        (void)cudaGetDevice(&dev);
        return CUDA_FAIL(e, dev, "cudaHostUnregister(%p, %zu bytes)", p, n);
    }
    return 0;
}

static int cuda_host_alloc(ts_devset *s, size_t n, void **p)
{
    *p = NULL;
    // Portable: page-locked for every device of the set, not only the current one.
    cudaError_t e = cudaHostAlloc(p, n, cudaHostAllocPortable);
    if (e != cudaSuccess) {
        *p = NULL;
        (void)cudaGetLastError();
        TS_RAISE(TS_ERR_NOMEM, "cudaHostAlloc(%zu bytes): %s", n, cudaGetErrorString(e));
    }
    return 0;
}

static void cuda_host_free(ts_devset *s, void *p)
{
    if (!p) return;
    cudaError_t e = cudaFreeHost(p);
    if (e != cudaSuccess) {
        TS_LOG_W("cudaFreeHost(%p): %s", p, cudaGetErrorString(e));
        (void)cudaGetLastError();
    }
}

// ---- devices and streams ----

static int cuda_device_sync(ts_device *d)
{
    cuda_dev *cd = dev_of(d);
    TS_CHECK(set_device(cd->native));
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        int rc = CUDA_FAIL(e, ordinal_of(d), "cudaDeviceSynchronize");
        pthread_mutex_lock(&cd->lock);
        if (cd->first_err == 0) {
            cd->first_err = rc;
            snprintf(cd->first_msg, sizeof cd->first_msg, "%s", ts_error_last()->message);
        }
        pthread_mutex_unlock(&cd->lock);
        return rc;
    }
    pthread_mutex_lock(&cd->lock);
    int rc = cd->first_err;
    char msg[512];
    if (rc) snprintf(msg, sizeof msg, "%s", cd->first_msg);
    pthread_mutex_unlock(&cd->lock);
    if (rc) return ts_error_set(rc, __FILE__, __LINE__, "device %d: a stream failed: %s", ordinal_of(d), msg);
    return 0;
}

static int cuda_stream_create(ts_stream *st)
{
    int native = native_of(st->dev);
    TS_CHECK(set_device(native));
    cuda_stream *cs = calloc(1, sizeof *cs);
    if (!cs) TS_RAISE(TS_ERR_NOMEM, "out of host memory for a stream of device %d", ordinal_of(st->dev));
    cudaError_t e;
    if (st->high) { // the numerically lowest value is the greatest priority
        int least = 0, greatest = 0;
        e = cudaDeviceGetStreamPriorityRange(&least, &greatest);
        if (e == cudaSuccess)
            e = cudaStreamCreateWithPriority(&cs->stream, cudaStreamNonBlocking, greatest);
    } else {
        e = cudaStreamCreateWithFlags(&cs->stream, cudaStreamNonBlocking);
    }
    if (e != cudaSuccess) {
        free(cs);
        return CUDA_FAIL(e, ordinal_of(st->dev), st->high ? "cudaStreamCreateWithPriority(NonBlocking, greatest)"
                                                          : "cudaStreamCreateWithFlags(NonBlocking)");
    }
    pthread_mutex_init(&cs->lock, NULL);
    st->impl = cs;
    return 0;
}

static int cuda_stream_destroy(ts_stream *st)
{
    cuda_stream *cs = stream_of(st);
    if (!cs) return 0;
    int rc = set_device(native_of(st->dev));
    if (rc == 0) {
        cudaError_t e = cudaStreamSynchronize(cs->stream);
        if (e != cudaSuccess) rc = CUDA_FAIL(e, ordinal_of(st->dev), "cudaStreamSynchronize (stream destroy)");
        e = cudaStreamDestroy(cs->stream);
        if (e != cudaSuccess && rc == 0) rc = CUDA_FAIL(e, ordinal_of(st->dev), "cudaStreamDestroy");
    }
    pthread_mutex_destroy(&cs->lock);
    free(cs);
    st->impl = NULL;
    return rc;
}

static int cuda_stream_sync(ts_stream *st)
{
    cuda_stream *cs = stream_of(st);
    int rc = set_device(native_of(st->dev));
    if (rc < 0) return stream_fail(st, rc);
    cudaError_t e = cudaStreamSynchronize(cs->stream);
    if (e != cudaSuccess) stream_fail(st, CUDA_FAIL(e, ordinal_of(st->dev), "cudaStreamSynchronize"));
    return stream_sticky(st);
}

static int cuda_stream_error(ts_stream *st)
{
    cuda_stream *cs = stream_of(st);
    if (set_device(native_of(st->dev)) == 0) {
        // cudaStreamQuery also reports failures of work that has already run.
        cudaError_t e = cudaStreamQuery(cs->stream);
        if (e == cudaErrorNotReady) (void)cudaGetLastError();
        else if (e != cudaSuccess) stream_fail(st, CUDA_FAIL(e, ordinal_of(st->dev), "cudaStreamQuery"));
    }
    return stream_sticky(st);
}

static void *cuda_stream_native(ts_stream *st) { return (void *)stream_of(st)->stream; }

// ---- events ----

static int cuda_event_create(ts_event *ev)
{
    TS_CHECK(set_device(native_of(ev->dev)));
    cuda_event *ce = calloc(1, sizeof *ce);
    if (!ce) TS_RAISE(TS_ERR_NOMEM, "out of host memory for an event of device %d", ordinal_of(ev->dev));
    cudaError_t e = cudaEventCreate(&ce->event); // default flags: with timing
    if (e != cudaSuccess) {
        free(ce);
        return CUDA_FAIL(e, ordinal_of(ev->dev), "cudaEventCreate");
    }
    ev->impl = ce;
    return 0;
}

static int cuda_event_destroy(ts_event *ev)
{
    cuda_event *ce = ev->impl;
    if (!ce) return 0;
    int rc = set_device(native_of(ev->dev));
    if (rc == 0) {
        cudaError_t e = cudaEventDestroy(ce->event);
        if (e != cudaSuccess) rc = CUDA_FAIL(e, ordinal_of(ev->dev), "cudaEventDestroy");
    }
    free(ce);
    ev->impl = NULL;
    return rc;
}

static int cuda_event_record(ts_event *ev, ts_stream *st)
{
    if (ev->dev != st->dev)
        TS_RAISE(TS_ERR_ARG, "event of device %d recorded on a stream of device %d", ordinal_of(ev->dev),
                 ordinal_of(st->dev));
    cuda_event *ce = ev->impl;
    int rc = set_device(native_of(st->dev));
    if (rc < 0) return stream_fail(st, rc);
    cudaError_t e = cudaEventRecord(ce->event, stream_of(st)->stream);
    if (e != cudaSuccess) return stream_fail(st, CUDA_FAIL(e, ordinal_of(st->dev), "cudaEventRecord"));
    ce->recorded = 1;
    return 0;
}

static int cuda_stream_wait_event(ts_stream *st, ts_event *ev)
{
    cuda_event *ce = ev->impl;
    int rc = set_device(native_of(st->dev)); // the waiting stream's device; the event may be another's
    if (rc < 0) return stream_fail(st, rc);
    cudaError_t e = cudaStreamWaitEvent(stream_of(st)->stream, ce->event, 0);
    if (e != cudaSuccess)
        return stream_fail(st, CUDA_FAIL(e, ordinal_of(st->dev), "cudaStreamWaitEvent(event of device %d)",
                                         ordinal_of(ev->dev)));
    return 0;
}

static int cuda_event_sync(ts_event *ev)
{
    cuda_event *ce = ev->impl;
    TS_CHECK(set_device(native_of(ev->dev)));
    cudaError_t e = cudaEventSynchronize(ce->event);
    if (e != cudaSuccess) return CUDA_FAIL(e, ordinal_of(ev->dev), "cudaEventSynchronize");
    return 0;
}

static int cuda_event_query(ts_event *ev)
{
    cuda_event *ce = ev->impl;
    TS_CHECK(set_device(native_of(ev->dev)));
    cudaError_t e = cudaEventQuery(ce->event);
    if (e == cudaSuccess) return 1;
    if (e == cudaErrorNotReady) {
        (void)cudaGetLastError();
        return 0;
    }
    return CUDA_FAIL(e, ordinal_of(ev->dev), "cudaEventQuery");
}

static int cuda_event_elapsed_ms(ts_event *a, ts_event *b, double *ms)
{
    cuda_event *ca = a->impl, *cb = b->impl;
    TS_CHECK(set_device(native_of(b->dev)));
    float f = 0.0f;
    cudaError_t e = cudaEventElapsedTime(&f, ca->event, cb->event);
    if (e != cudaSuccess)
        return CUDA_FAIL(e, ordinal_of(b->dev), "cudaEventElapsedTime(event of device %d, event of device %d)",
                         ordinal_of(a->dev), ordinal_of(b->dev));
    *ms = f;
    return 0;
}

// ---- copies, memset, callbacks, kernels ----

static const char *kind_name(ts_copy_kind k)
{
    return k == TS_COPY_H2D ? "H2D" : k == TS_COPY_D2H ? "D2H" : k == TS_COPY_D2D ? "D2D" : "?";
}

static int cuda_copy2d(ts_stream *st, ts_copy_kind kind, void *dst, size_t dpitch, const void *src, size_t spitch,
                       size_t width, size_t rows)
{
    enum cudaMemcpyKind ck;
    switch (kind) {
    case TS_COPY_H2D: ck = cudaMemcpyHostToDevice; break;
    case TS_COPY_D2H: ck = cudaMemcpyDeviceToHost; break;
    case TS_COPY_D2D: ck = cudaMemcpyDeviceToDevice; break;
    default: TS_RAISE(TS_ERR_ARG, "copy2d: unknown copy kind %d", (int)kind);
    }
    // Argument errors are the caller's, not the stream's: rejected here without a sticky error.
    if (rows > 1 && (width > dpitch || width > spitch))
        TS_RAISE(TS_ERR_ARG, "copy2d(%s): width %zu bytes exceeds a pitch (dst %zu, src %zu)", kind_name(kind),
                 width, dpitch, spitch);
    if (width == 0 || rows == 0) return 0;
    if (rows == 1) dpitch = spitch = width; // pitches are irrelevant for one line
    int rc = set_device(native_of(st->dev));
    if (rc < 0) return stream_fail(st, rc);
    cudaError_t e = cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, rows, ck, stream_of(st)->stream);
    if (e != cudaSuccess)
        return stream_fail(st, CUDA_FAIL(e, ordinal_of(st->dev), "cudaMemcpy2DAsync(%s, %zux%zu)", kind_name(kind),
                                         width, rows));
    return 0;
}

// Peer access is enabled per direction; a link counts when both directions are on.
static int cuda_can_peer(const ts_device *a, const ts_device *b)
{
    if (!a->impl || !b->impl) return 0;
    return dev_of(a)->peer[ordinal_of(b)] && dev_of(b)->peer[ordinal_of(a)];
}

static int cuda_copy_peer2d(ts_stream *st, ts_device *dd, void *dst, size_t dpitch, ts_device *sd,
                            const void *src, size_t spitch, size_t width, size_t rows)
{
    if (rows > 1 && (width > dpitch || width > spitch))
        TS_RAISE(TS_ERR_ARG, "copy_peer2d: width %zu bytes exceeds a pitch (dst %zu, src %zu)", width, dpitch,
                 spitch);
    if (width == 0 || rows == 0) return 0;
    if (rows == 1) dpitch = spitch = width;
    int rc = set_device(native_of(st->dev));
    if (rc < 0) return stream_fail(st, rc);
    cudaStream_t s = stream_of(st)->stream;
    cudaError_t e;
    if (dd == sd || cuda_can_peer(dd, sd)) {
        // Same device, or a peer link: with unified addressing the runtime routes it by address.
        e = cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, rows, cudaMemcpyDefault, s);
        if (e != cudaSuccess)
            return stream_fail(st, CUDA_FAIL(e, ordinal_of(st->dev),
                                             "cudaMemcpy2DAsync(peer, device %d -> device %d, %zux%zu)",
                                             ordinal_of(sd), ordinal_of(dd), width, rows));
        return 0;
    }
    // No peer access: the runtime stages the copy through the host.
    struct cudaMemcpy3DPeerParms p;
    memset(&p, 0, sizeof p);
    p.srcPtr.ptr = (void *)src;
    p.srcPtr.pitch = spitch;
    p.srcPtr.xsize = width;
    p.srcPtr.ysize = rows;
    p.srcDevice = native_of(sd);
    p.dstPtr.ptr = dst;
    p.dstPtr.pitch = dpitch;
    p.dstPtr.xsize = width;
    p.dstPtr.ysize = rows;
    p.dstDevice = native_of(dd);
    p.extent.width = width;
    p.extent.height = rows;
    p.extent.depth = 1;
    e = cudaMemcpy3DPeerAsync(&p, s);
    if (e != cudaSuccess)
        return stream_fail(st, CUDA_FAIL(e, ordinal_of(st->dev), "cudaMemcpy3DPeerAsync(device %d -> device %d, %zux%zu)",
                                         ordinal_of(sd), ordinal_of(dd), width, rows));
    return 0;
}

static int cuda_memset(ts_stream *st, void *dst, int value, size_t bytes)
{
    if (bytes == 0) return 0;
    int rc = set_device(native_of(st->dev));
    if (rc < 0) return stream_fail(st, rc);
    cudaError_t e = cudaMemsetAsync(dst, value, bytes, stream_of(st)->stream);
    if (e != cudaSuccess)
        return stream_fail(st, CUDA_FAIL(e, ordinal_of(st->dev), "cudaMemsetAsync(%zu bytes)", bytes));
    return 0;
}

static int cuda_host_callback(ts_stream *st, void (*fn)(void *), void *arg)
{
    int rc = set_device(native_of(st->dev));
    if (rc < 0) return stream_fail(st, rc);
    cudaError_t e = cudaLaunchHostFunc(stream_of(st)->stream, fn, arg);
    if (e != cudaSuccess) return stream_fail(st, CUDA_FAIL(e, ordinal_of(st->dev), "cudaLaunchHostFunc"));
    return 0;
}

static int cuda_kernel(ts_stream *st, const ts_kernel *k)
{
    const char *name = k->name ? k->name : "kernel";
    if (!k->cuda) TS_RAISE(TS_ERR_UNSUPPORTED, "%s has no CUDA implementation (device %d)", name, ordinal_of(st->dev));
    if (k->args_size > TS_KERNEL_ARGS_MAX)
        TS_RAISE(TS_ERR_ARG, "%s: %zu bytes of arguments, at most %d", name, k->args_size, TS_KERNEL_ARGS_MAX);
    // The CUDA function enqueues its work before returning, so a copy of the arguments that lives
    // for the duration of the call is enough.
    _Alignas(16) unsigned char args[TS_KERNEL_ARGS_MAX];
    if (k->args_size) memcpy(args, k->args, k->args_size);
    int rc = set_device(native_of(st->dev));
    if (rc < 0) return stream_fail(st, rc);
    (void)cudaGetLastError(); // so that a launch failure below is this kernel's
    rc = k->cuda(stream_of(st)->stream, k->args_size ? args : NULL);
    if (rc < 0) {
        if (ts_error_last()->code != rc) TS_ERROR(rc, "%s failed to enqueue on device %d", name, ordinal_of(st->dev));
        return stream_fail(st, rc);
    }
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return stream_fail(st, CUDA_FAIL(e, ordinal_of(st->dev), "launch of %s", name));
    return 0;
}

// ---- graphs ----

// Thread-local mode: only this thread's calls that could break the capture are refused, so other
// threads (other streams, NCCL's proxies) carry on.
static int cuda_capture_begin(ts_stream *st)
{
    cuda_stream *cs = stream_of(st);
    TS_CHECK(stream_sticky(st)); // a failed stream captures nothing
    TS_CHECK(set_device(native_of(st->dev)));
    cudaError_t e = cudaStreamBeginCapture(cs->stream, cudaStreamCaptureModeThreadLocal);
    if (e != cudaSuccess) return CUDA_FAIL(e, ordinal_of(st->dev), "cudaStreamBeginCapture(thread-local)");
    pthread_mutex_lock(&cs->lock);
    cs->capturing = 1;
    pthread_mutex_unlock(&cs->lock);
    return 0;
}

static void graph_free(cuda_graph *g)
{
    if (g->exec) (void)cudaGraphExecDestroy(g->exec);
    if (g->graph) (void)cudaGraphDestroy(g->graph);
    (void)cudaGetLastError();
    free(g);
}

static int cuda_capture_end(ts_stream *st, void **graph)
{
    cuda_stream *cs = stream_of(st);
    const int ord = ordinal_of(st->dev);
    *graph = NULL;
    int rc = set_device(native_of(st->dev));
    // Ended whatever else failed, so that the stream leaves capture mode.
    cudaGraph_t captured = NULL;
    cudaError_t e = cudaStreamEndCapture(cs->stream, &captured);
    pthread_mutex_lock(&cs->lock);
    cs->capturing = 0;
    pthread_mutex_unlock(&cs->lock);
    cuda_graph *g = calloc(1, sizeof *g);
    if (!g) {
        if (captured) (void)cudaGraphDestroy(captured);
        TS_RAISE(TS_ERR_NOMEM, "out of host memory for a graph of device %d", ord);
    }
    g->graph = captured;
    if (rc == 0 && e != cudaSuccess) rc = CUDA_FAIL(e, ord, "cudaStreamEndCapture");
    if (rc == 0 && !captured)
        rc = ts_error_set(TS_ERR_CUDA, __FILE__, __LINE__, "cudaStreamEndCapture on device %d gave no graph", ord);
    if (rc == 0 && (e = cudaGraphInstantiate(&g->exec, g->graph, 0)) != cudaSuccess)
        rc = CUDA_FAIL(e, ord, "cudaGraphInstantiate");
    if (rc < 0) {
        graph_free(g);
        return rc;
    }
    *graph = g;
    return 0;
}

static int cuda_graph_launch(ts_stream *st, void *graph)
{
    cuda_graph *g = graph;
    int rc = set_device(native_of(st->dev));
    if (rc < 0) return stream_fail(st, rc);
    cudaError_t e = cudaGraphLaunch(g->exec, stream_of(st)->stream);
    if (e != cudaSuccess) return stream_fail(st, CUDA_FAIL(e, ordinal_of(st->dev), "cudaGraphLaunch"));
    return 0;
}

// Launches still in flight finish: the runtime frees an executable graph when its work is done.
static void cuda_graph_destroy(ts_device *d, void *graph)
{
    if (!graph) return;
    if (set_device(native_of(d)) < 0) TS_LOG_W("device %d: graph destroyed without its device", ordinal_of(d));
    graph_free(graph);
}

static const ts_backend_ops cuda_ops = {
    .name = "cuda",
    .open = cuda_open,
    .close = cuda_close,
    .host_register = cuda_host_register,
    .host_unregister = cuda_host_unregister,
    .host_alloc = cuda_host_alloc,
    .host_free = cuda_host_free,
    .device_sync = cuda_device_sync,
    .stream_create = cuda_stream_create,
    .stream_destroy = cuda_stream_destroy,
    .stream_sync = cuda_stream_sync,
    .stream_error = cuda_stream_error,
    .stream_native = cuda_stream_native,
    .event_create = cuda_event_create,
    .event_destroy = cuda_event_destroy,
    .event_record = cuda_event_record,
    .stream_wait_event = cuda_stream_wait_event,
    .event_sync = cuda_event_sync,
    .event_query = cuda_event_query,
    .event_elapsed_ms = cuda_event_elapsed_ms,
    .copy2d = cuda_copy2d,
    .copy_peer2d = cuda_copy_peer2d,
    .memset = cuda_memset,
    .host_callback = cuda_host_callback,
    .kernel = cuda_kernel,
    .can_peer = cuda_can_peer,
    .capture_begin = cuda_capture_begin,
    .capture_end = cuda_capture_end,
    .graph_launch = cuda_graph_launch,
    .graph_destroy = cuda_graph_destroy,
};

const ts_backend_ops *ts_cuda_backend_ops(void) { return &cuda_ops; }
