// ts_device_impl.h: what a backend provides to ts_device.c (internal to the device layer).
#ifndef TS_DEVICE_IMPL_H
#define TS_DEVICE_IMPL_H

#include "device/ts_arena.h"
#include "device/ts_device.h"
#include "device/ts_pinreg.h"

#include <pthread.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ts_backend_ops ts_backend_ops;

struct ts_device {
    ts_devset *set;
    ts_device_props props;
    ts_arena *arena;
    void *arena_base;
    void *impl;                  // backend state of the device
    pthread_mutex_t lock;        // guards counters
    ts_device_counters counters;
};

struct ts_devset {
    ts_backend backend;
    const ts_backend_ops *ops;
    int count;
    ts_device *devices[TS_MAX_DEVICES];
    ts_pinreg *pins;
    ts_devset_opts opts;
    void *impl;                  // backend state of the set
};

struct ts_stream {
    ts_device *dev;
    int high;                    // 1: created with high priority (ts_stream_create_prio)
    void *impl;                  // backend stream state
    void *slot;
    void (*slot_destroy)(void *);
    // graph capture (ts_stream_capture_begin/_end)
    int capturing;
    int capture_err;             // the first operation that failed during the capture (0: none)
    char capture_msg[512];
    ts_device_counters capture_counts; // what the capture recorded (the graph's counters)
};

struct ts_graph {
    ts_device *dev;              // captured on, launched on streams of this device
    void *impl;                  // backend graph
    ts_device_counters counts;   // one launch's operations
};

struct ts_event {
    ts_device *dev;
    void *impl;
};

// The backend vtable. ts_device.c validates arguments, keeps counters and the arenas, and calls
// these. Each returns 0 or a negative ts_status with ts_error_set already called.
struct ts_backend_ops {
    const char *name;
    int (*open)(ts_devset *s);                   // fills s->count, s->devices[i]->props, arenas
    void (*close)(ts_devset *s);
    int (*host_register)(void *ctx, void *p, size_t n);
    int (*host_unregister)(void *ctx, void *p, size_t n);
    int (*host_alloc)(ts_devset *s, size_t n, void **p);
    void (*host_free)(ts_devset *s, void *p);
    int (*device_sync)(ts_device *d);
    int (*stream_create)(ts_stream *st);
    int (*stream_destroy)(ts_stream *st);
    int (*stream_sync)(ts_stream *st);
    int (*stream_error)(ts_stream *st);
    void *(*stream_native)(ts_stream *st);
    int (*event_create)(ts_event *ev);
    int (*event_destroy)(ts_event *ev);
    int (*event_record)(ts_event *ev, ts_stream *st);
    int (*stream_wait_event)(ts_stream *st, ts_event *ev);
    int (*event_sync)(ts_event *ev);
    int (*event_query)(ts_event *ev);
    int (*event_elapsed_ms)(ts_event *a, ts_event *b, double *ms);
    int (*copy2d)(ts_stream *st, ts_copy_kind kind, void *dst, size_t dpitch, const void *src,
                  size_t spitch, size_t width, size_t rows);
    int (*copy_peer2d)(ts_stream *st, ts_device *dd, void *dst, size_t dpitch, ts_device *sd,
                       const void *src, size_t spitch, size_t width, size_t rows);
    int (*memset)(ts_stream *st, void *dst, int value, size_t bytes);
    int (*host_callback)(ts_stream *st, void (*fn)(void *), void *arg);
    int (*kernel)(ts_stream *st, const ts_kernel *k);
    // 1 when a and b (distinct devices of the set) have a direct peer link; NULL means never.
    int (*can_peer)(const ts_device *a, const ts_device *b);
    // Graphs (NULL: the backend cannot capture). capture_end ends the capture in every case, also
    // after an operation failed during it, and returns the backend's graph through *graph.
    int (*capture_begin)(ts_stream *st);
    int (*capture_end)(ts_stream *st, void **graph);
    int (*graph_launch)(ts_stream *st, void *graph);
    void (*graph_destroy)(ts_device *d, void *graph);
};

// Allocates and initialises a device of the set (set, lock, counters, props.backend/ordinal) for a
// backend's open(); the backend then fills the props and arena_base, and stores it in
// s->devices[ordinal]. ts_device.c owns the struct: it frees it after the backend's close().
// NULL (error set) when out of memory.
ts_device *ts_device_new(ts_devset *s, int ordinal);

// Backends (ts_cuda_backend.c is compiled only with CUDA; without it this returns NULL).
const ts_backend_ops *ts_sim_backend_ops(void);
const ts_backend_ops *ts_cuda_backend_ops(void);

#ifdef __cplusplus
}
#endif

#endif
