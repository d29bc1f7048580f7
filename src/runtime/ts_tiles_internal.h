// ts_tiles_internal.h: the tile runtime's context, per-call state, cache and scheduler (internal).
#ifndef TS_TILES_INTERNAL_H
#define TS_TILES_INTERNAL_H

#include "runtime/ts_tiles.h"

#include <pthread.h>

// Fixed limits (one home each; the tunable numbers are in ts_tiles_opts).
#define TL_RING 64          // pending-release entries per device (one event each)
#define TL_DEPTH_MAX 8      // upper bound of opts.depth
#define TL_REFS 2           // slot references one release entry carries
#define TL_PINS_MAX 32      // upper bound of opts.keep_pins
#define TL_MIN_AB_SLOTS 4   // A and B slots a device needs besides its C slots (two k-steps)

// Matrix an A/B/C tile belongs to (slot keys).
enum { TL_NONE = 0, TL_A = 1, TL_B = 2, TL_C = 3 };

// Task states.
enum { TL_PENDING = 0, TL_RESERVED, TL_RUNNING, TL_DONE };

// One tile buffer of a device's cache.
typedef struct {
    void *ptr;
    ts_event *ready;   // recorded after the load (H2D or peer copy) of the current content
    int mat;           // TL_NONE (empty), TL_A, TL_B, TL_C
    int64_t idx;       // tile index in the matrix's map (A: i + l*mt, B: l + j*kt)
    int readers;       // references held by queued work (own GEMMs, peers' copies); > 0: not evictable
    uint64_t stamp;    // last use, for LRU
} tl_slot;

typedef struct {
    int dev, slot;
} tl_ref;

// Work whose completion releases slot references: an event plus the references.
typedef struct {
    ts_event *ev;
    int nrefs;
    tl_ref refs[TL_REFS];
} tl_pending;

// A C tile on its way: GEMMs queued, copy out queued after them.
typedef struct {
    int task;
    int cslot;
    ts_event *comp;    // after the last GEMM (the copy out waits for it)
    ts_event *out;     // after the copy out
} tl_flight;

// Persistent per-device state (created with the runtime).
typedef struct {
    ts_device *dev;
    ts_stream *s_h2d, *s_p2p, *s_comp, *s_d2h;
    ts_event *ring_ev[TL_RING];
    ts_event *comp_ev[TL_DEPTH_MAX], *out_ev[TL_DEPTH_MAX];
    int64_t tile_default;
} tl_devrt;

// Per-call state of one device: cache, maps, pending releases, flights.
typedef struct {
    int ord;           // index in the runtime's device list
    tl_slot *slots;
    int nslots;
    int *mapA, *mapB;  // tile index -> slot (or -1)
    int *rowcnt, *colcnt; // cached A tiles per block row, B tiles per block column (scores)
    tl_pending ring[TL_RING];
    int ring_head, ring_count;
    tl_flight flight[TL_DEPTH_MAX];
    int flight_head, flight_count;
    int rs[64];        // reservation station (task ids), opts.reserve entries at most
    int rs_count;
    int64_t cursor;    // position in the task order where this device's next pick starts
    // counters (under the call lock)
    int64_t tiles_done, hits, misses, peer_fetches, evictions, steals;
    size_t bytes_h2d, bytes_d2h, bytes_p2p;
    int stuck;         // waiting for slots held by peers
} tl_devcall;

typedef struct tl_call tl_call;

struct ts_tiles {
    ts_devset *devs;
    ts_tiles_opts opts;
    int ndev;
    tl_devrt dev[TS_MAX_DEVICES];
    int cpu_on;
    pthread_mutex_t call_lock; // one call at a time
    // host registrations kept across calls
    struct {
        const void *ptr;
        size_t bytes;
        int handle;
        uint64_t used;
    } pins[TL_PINS_MAX];
    int npins;
    uint64_t pin_clock;
};

// One call: the problem, the tasks, the devices' caches, the error.
struct tl_call {
    ts_tiles *rt;
    char prec, ta, tb;
    int64_t m, n, k, lda, ldb, ldc;
    const char *A, *B;
    char *C;
    size_t es;
    unsigned char alpha[16], beta[16], one[16];
    int beta_zero;
    int64_t T, mt, nt, kt;
    ts_engine engine;
    // tasks: id = i + j*mt (column-major order of C tiles)
    int ntasks;
    unsigned char *state;
    signed char *owner;  // device holding a reserved/running task, -1 = CPU or none
    int npending;        // tasks in TL_PENDING
    int nunstarted;      // pending + reserved
    tl_devcall dc[TS_MAX_DEVICES];
    int nworkers;        // devices + CPU
    // CPU worker
    int64_t cpu_tiles, cpu_cap;
    double cpu_sec_per_tile; // measured (0 = not yet)
    double t0;
    // sync
    pthread_mutex_t lock;
    pthread_cond_t cond;
    uint64_t clock;      // LRU stamps
    int abort;
    int err;
    char errmsg[600];
};

// ---- cache (ts_tiles_cache.c); every function with the call lock held unless noted ----
int tl_cache_setup(tl_call *c, int d, size_t budget);      // no lock (before the workers start)
void tl_cache_teardown(tl_call *c, int d);                 // no lock (after they stopped)
// Returns the slot of tile (mat, idx) on device d with a reader reference, loading it (from a peer
// or the host) on a miss. May drop and retake the lock while waiting for room.
int tl_cache_get(tl_call *c, int d, int mat, int64_t idx, int *slot);
// A free slot for a C tile (readers = 1); may wait like tl_cache_get.
int tl_cache_get_c(tl_call *c, int d, int *slot);
void tl_cache_drop_c(tl_call *c, int d, int slot);
// Releases the references of completed pending entries (poll); with wait, syncs the oldest first.
int tl_ring_retire(tl_call *c, int d, int wait);
// Appends a pending entry recorded on stream st (lock held); makes room first if the ring is full.
int tl_ring_push(tl_call *c, int d, ts_stream *st, const tl_ref *refs, int nrefs);
// Completes finished C tiles (their copy out is done): slot emptied, task done. wait: the oldest first.
int tl_flight_retire(tl_call *c, int d, int wait);
// Records the failure behind an event that reported one (the failing stream's own error).
int tl_event_failed(tl_call *c, int d, int rc);
// Records a failure (first wins) and wakes everyone.
int tl_call_fail(tl_call *c, int code);

// ---- scheduler (ts_tiles_sched.c), lock held ----
int tl_sched_next_dev(tl_call *c, int d);   // task id or -1 when there is nothing left for d
int tl_sched_next_cpu(tl_call *c);          // task id or -1: the CPU stops
void tl_sched_done(tl_call *c, int task, int d); // d = -1 for the CPU

// ---- workers (ts_tiles_worker.c) ----
typedef struct {
    tl_call *c;
    int d;
} tl_worker_arg;
void *tl_dev_worker(void *arg);   // arg: tl_worker_arg*
void *tl_cpu_worker(void *arg);   // arg: tl_call*

// Geometry of tile (i, l) of op(A) and (l, j) of op(B).
static inline int64_t tl_dim(int64_t total, int64_t T, int64_t b) {
    int64_t r = total - b * T;
    return r < T ? r : T;
}

#endif
