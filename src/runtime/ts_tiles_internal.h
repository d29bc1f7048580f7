// ts_tiles_internal.h: the tile runtime's context, per-call state, cache and scheduler (internal).
#ifndef TS_TILES_INTERNAL_H
#define TS_TILES_INTERNAL_H

#include "runtime/ts_perfdb.h"
#include "runtime/ts_tiles.h"

#include <pthread.h>

// Fixed limits (one home each; the tunable numbers are in ts_tiles_opts).
#define TL_RING 64          // pending-release entries per device (one event each)
#define TL_DEPTH_MAX 8      // upper bound of opts.depth
#define TL_REFS 2           // slot references one release entry carries
#define TL_PINS_MAX 32      // upper bound of opts.keep_pins
#define TL_MIN_AB_SLOTS 4   // A and B slots a device needs besides its C slots (two k-steps)
#define TL_REVIVALS 8       // recoveries per device and call after failures caused by a peer
#define TL_HQ 64            // upper bound of opts.h2d_ahead (host loads in flight tracked per device)

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
    int64_t alias;     // a C slot whose tile is also an operand (TRSM's solved tile, published for the
                       // chain's next task): its TL_B key, already in mapB; the slot becomes that TL_B
                       // tile when the flight retires. -1: none
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
    int out_recorded;  // the copy out and f->out are queued (else out is stale)
    volatile int saved; // the original C tile is in the device's save buffer of this flight (set by a
                        // stream callback after the copy, which the copy out waits for; read after the
                        // streams stopped)
    int trace;         // trace record index, -1 = none
} tl_flight;

// One C tile's timeline (host clock, seconds; 0 = not reached): copy in, GEMMs, copy out.
typedef struct {
    int worker;        // device ordinal, or -1 for the CPU
    int task;
    int64_t i, j;      // its C tile (tl_task_tile: a level-3 task's ids are not i + j*mt)
    int rerun;         // the task had been given back by a failed device before
    double t[6];       // in0, in1, gemm0, gemm1, out0, out1
} tl_trace_rec;

#define TL_NSTREAMS 5 // per device: H2D, peer, compute, D2H, save

// Persistent per-device state (created with the runtime).
typedef struct {
    ts_device *dev;
    ts_stream *s_h2d, *s_p2p, *s_comp, *s_d2h;
    ts_stream *s_save; // copies of original C tiles from the device to the save buffers (opts.save_c)
    ts_event *ring_ev[TL_RING];
    ts_event *comp_ev[TL_DEPTH_MAX], *out_ev[TL_DEPTH_MAX];
    int64_t tile_default;
    ts_event *save_ev[TL_DEPTH_MAX]; // after a C tile's copy to its save buffer
    // host copies of the original C tiles in flight (opts.save_c, beta != 0), pinned, kept across
    // calls so that they are allocated and touched once (save_bytes each)
    void *save[TL_DEPTH_MAX];
    size_t save_bytes;
} tl_devrt;

// Per-call state of one device: cache, maps, pending releases, flights.
typedef struct {
    int ord;           // index in the runtime's device list
    tl_slot *slots;
    int nslots;
    // Device copies of the flights' original C tiles (save_c with C loaded): the tile is copied
    // here on the device right after its load and saved to the host from here, so the GEMMs need
    // not wait for the save; NULL when the memory did not allow it (the GEMMs then wait).
    void *snap[TL_DEPTH_MAX];
    int *mapA, *mapB;  // tile index -> slot (or -1)
    int *rowcnt, *colcnt; // cached A tiles per block row, B tiles per block column (scores)
    tl_pending ring[TL_RING];
    int ring_head, ring_count;
    tl_flight flight[TL_DEPTH_MAX];
    int flight_head, flight_count;
    int hq[TL_HQ];     // GEMM, opts.h2d_ahead: slots whose host load may still run, oldest first
    int hq_head, hq_count;
    int rs[64];        // reservation station (task ids), opts.reserve entries at most
    int rs_count;
    int64_t cursor;    // position in the task order where this device's next pick starts
    int64_t origin;    // GEMM: the task this device started from (its region of C grows around it)
    // counters (under the call lock)
    int64_t tiles_done, hits, misses, peer_fetches, evictions, steals;
    int64_t transposes; // transposed copies made from this device's plain copies (TS_TILE_TRANS)
    size_t bytes_h2d, bytes_d2h, bytes_p2p, bytes_save;
    int stuck;         // waiting for slots held by peers
    int revivals;      // recoveries after a peer's failure (TL_REVIVALS at most)
    int dead;          // failed during this call: no more work, its tiles were given back
    int building;      // task being queued by run_task (-1 = none)
    double busy_end;   // when the worker finished its last tile (rates)
    double flops;      // flops of the tiles it completed
} tl_devcall;

// ---- level-3 tasks (ts_tiles_l3.c, docs/runtime.md): a C tile as a list of tile products ----
// An operand tile: a stored T x T block (bi, bj) of matrix TL_A or TL_B, the op the GEMM applies to
// it and the preparation of a diagonal tile (ts_tile_ops.h; done once on the cached copy, which is
// then cached under its own key, so a prepared and a raw copy of one block never mix).
typedef struct {
    int64_t bi, bj;
    unsigned char mat;   // TL_A or TL_B
    char op;             // 'N', 'T', 'C'
    unsigned char prep;  // 1: the prepared copy (tl_l3.prep_kind of the matrix), 0: raw
} tl_opnd;

// A tile product: kind TL_GEMM C += op(a) op(b); on a diagonal tile of ?SYRK/?SYR2K (opts.diag_rank)
// TL_RANK C += a a^T and TL_RANK2 C += a b^T + b a^T on the task's triangle only (a's op says
// which side is transposed: 'N' a b^T, else a^T b), half the flops of the GEMM; TL_TRMM, the
// diagonal product of a TRMM tile (opts.diag_trmm, always its first product): C := alpha op(A) B
// (side L: a is the raw diagonal block of A, b the B tile) or alpha B op(A) (side R: a the B tile,
// b the block), by ?trmm on the block's triangle instead of a GEMM on the zero-filled block.
enum { TL_GEMM = 0, TL_RANK = 1, TL_RANK2 = 2, TL_TRMM = 3 };

typedef struct {
    tl_opnd a, b;
    unsigned char alpha2; // 1: scaled by the call's second alpha (conj(alpha) of ?HER2K)
    unsigned char kind;   // TL_GEMM, TL_RANK, TL_RANK2
} tl_prod;

typedef struct {
    int64_t i, j;        // C tile
    int p0, np;          // products prods[p0 .. p0+np)
    int prev;            // task that must be done (written back) before this one starts; -1: none
    int chain;           // TRMM/TRSM: the chain (tile column or row) the task belongs to; -1: none
    char mask;           // 0: write back the whole tile; 'L'/'U': that triangle only (diagonal tiles)
    unsigned char solve; // TRSM: after the products, C := op(A(i,i))^-1 C (left) or C op(A(j,j))^-1
    unsigned char diag_real; // ?HERK/?HER2K: imaginary part of the diagonal := 0 before the write-back
} tl_task;

typedef struct {
    const char *ptr[3];  // stored matrices TL_A, TL_B (index 0 unused)
    int64_t ld[3], rows[3], cols[3], brows[3], bcols[3];
    tl_task *tasks;
    int ntasks;
    tl_prod *prods;
    int nprods;
    _Alignas(16) unsigned char alpha2[16]; // read as a double (complex) scalar
    unsigned char prep_kind[3];    // ts_tile_kind of the prepared diagonal tiles of TL_A, TL_B
    char prep_uplo[3];             // ... and their source triangle
    char side, uplo, ta, diag;     // the solve's triangle (TRSM; the diagonal blocks of TL_A)
    int inplace;         // C is also an operand (TRMM, TRSM): a re-run needs the original tile
    int nchains;         // chains of the tasks (TRMM, TRSM), 0: none
    unsigned char *held; // scratch of the scheduler, one per chain (ts_tiles_sched.c)
    const char *name;    // routine, for messages
} tl_l3;

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
    ts_perfdb *perfdb;         // opts.cpu_share adaptive only
    tl_trace_rec *trace;       // last call's timeline (opts.trace)
    int ntrace;
    int trace_ndev;
    double trace_t0;
    double cpu_flop_rate;      // the CPU worker's rate (flop/s): a probe at the first call, then
                               // what its tiles measured (the auto rule's estimate before a tile)
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
    tl_l3 *l3;           // level-3 call: tasks from l3->tasks (NULL: GEMM, task id = i + j*mt)
    int c_read;          // the tasks read host C (beta != 0, or C is an operand)
    // tasks: id = i + j*mt (column-major order of C tiles)
    int ntasks;
    unsigned char *state;
    signed char *owner;  // device holding a reserved/running task, -1 = CPU or none
    int npending;        // tasks in TL_PENDING
    int nunstarted;      // pending + reserved
    tl_devcall dc[TS_MAX_DEVICES];
    int nworkers;        // devices + CPU
    int depth;           // C tiles in flight per device (opts.depth, or its auto value for the call's kind)
    // CPU worker
    int64_t cpu_tiles, cpu_cap;
    double cpu_planned;  // share given by the database (adaptive) or the fraction; -1 = none
    int64_t cpu_steals;  // tiles taken beyond the planned share
    double cpu_busy, cpu_flops;
    int adaptive;        // cpu_cap from the database: past it, the CPU steals (auto rule)
    double t0;
    double dev_t_first;  // when the first device tile of the call was written back (0 = not yet)
    double dev_first_flops; // ... and its flops
    double cpu_rate_start;  // rt->cpu_flop_rate when the call started (stats: cpu_gflops_est)
    int ndone;           // tasks in TL_DONE
    int ndead;           // devices dead in this call
    int njudging;        // of those, devices whose failure is still being judged (may recover)
    int64_t reruns;
    // a device failure that did not stop the call (the message of the first one)
    int fault;
    char faultmsg[600];
    // trace (opts.trace): records appended under the lock, fields filled by stream callbacks
    tl_trace_rec *trace;
    int ntrace, captrace;
    unsigned char *rerun; // per task: given back by a failed device
    unsigned char *pub;  // per task: its output tile is published in its device's cache (slot alias)
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
// opts.grid: the pr x pc grid of starting blocks of ndev devices over mt x nt C tiles, and the
// task (i + j*mt) device d starts from (the corner of its block).
void tl_grid_shape(int64_t mt, int64_t nt, int ndev, int *pr, int *pc);
int64_t tl_grid_origin(int64_t mt, int64_t nt, int ndev, int d);
// opts.grid 2: the k-step GEMM C tile (i, j) starts its k-loop at (the rest follow cyclically, the
// first one applying beta). On the grid's block corners it differs by kt/pr or kt/pc between devices
// that share a panel, so their first tiles load different tiles of it from the host and take the
// rest from each other. It depends on the tile alone: results do not depend on who ran the tile.
static inline int64_t tl_k_start(int grid, int64_t mt, int64_t nt, int64_t kt, int64_t i, int64_t j) {
    if (grid < 2 || kt <= 1) return 0;
    return (i * kt / mt + j * kt / nt) % kt;
}
// Returns the slot of tile (mat, idx) on device d with a reader reference, loading it (from a peer
// or the host) on a miss. May drop and retake the lock while waiting for room.
int tl_cache_get(tl_call *c, int d, int mat, int64_t idx, int *slot);
// A free slot for a C tile (readers = 1); may wait like tl_cache_get.
int tl_cache_get_c(tl_call *c, int d, int *slot);
void tl_cache_drop_c(tl_call *c, int d, int slot);
// Drops an A/B tile from the maps (the slot is empty; readers held by peers' copies stay).
void tl_slot_forget(tl_call *c, int d, int slot);
// Replaces device d's streams (after a failure); 0 or a negative status. Lock held, streams idle.
int tl_streams_reset(ts_tiles *rt, int d);
// Releases the references of completed pending entries (poll); with wait, syncs the oldest first.
int tl_ring_retire(tl_call *c, int d, int wait);
// Appends a pending entry recorded on stream st (lock held); makes room first if the ring is full.
int tl_ring_push(tl_call *c, int d, ts_stream *st, const tl_ref *refs, int nrefs);
// Host callback: sets the int it is given to 1 (a flight's `saved` flag).
void tl_flag_set(void *p);
// Completes finished C tiles (their copy out is done): slot emptied, task done. wait: the oldest first.
int tl_flight_retire(tl_call *c, int d, int wait);
// Records the failure behind an event that reported one (device d's failing stream's own error).
int tl_event_failed(tl_call *c, int d, int rc);
// Records a failure (the first one's message is kept) and returns code; the call goes on unless
// the caller's worker decides otherwise (tl_dev_failed, tl_call_abort).
int tl_call_fail(tl_call *c, int code);
// Stops the call with code (the recorded failure's message when there is one) and wakes everyone.
int tl_call_abort(tl_call *c, int code);
// Device d failed with rc: dropped for the rest of the call, its unfinished tiles given back
// (C restored where its write-back may have started); aborts when no worker is left. Lock held.
void tl_dev_failed(tl_call *c, int d, int rc);
// Whether rc is a device failure (re-runnable elsewhere) rather than a host or logic error.
int tl_is_device_error(int rc);
// Waits up to 5 ms for a change (lock held; the wait drops it).
void tl_wait_change(tl_call *c);
// Appends a trace record (lock held); -1 when tracing is off or the buffer is full.
int tl_trace_new(tl_call *c, int worker, int task);
// A stream callback that stamps the host clock into the double it is given.
void tl_trace_stamp(void *slot);

// ---- scheduler (ts_tiles_sched.c), lock held ----
int tl_sched_next_dev(tl_call *c, int d);   // task id or -1 when there is nothing left for d
int tl_sched_next_cpu(tl_call *c);          // task id or -1: nothing for the CPU now
// A reserved or running task of a failed device back to the pending queue (rerun: it had started).
void tl_sched_requeue(tl_call *c, int task, int rerun);
// Adds a finished device tile's flops to device d's count (rates for the performance database).
void tl_count_dev_tile(tl_call *c, int d, int t);
void tl_save_free(ts_tiles *rt, tl_devrt *dr);
// Workers that can still take tasks (live devices + the CPU).
int tl_sched_alive(const tl_call *c);
void tl_sched_done(tl_call *c, int task, int d); // d = -1 for the CPU

// Publishes C slot `slot` of device d (its tile's computation queued, the slot's ready event
// recorded after it) as TL_B tile `key`; 0 if not (the key is cached already).
int tl_cache_publish(tl_call *c, int d, int slot, int64_t key);
// The device's C slots are gone (a failed device): emptied, their published keys unmapped.
void tl_cache_drop_all_c(tl_call *c, int d);

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

// ---- level-3 tasks (ts_tiles_l3.c) ----
// The C tile of task t.
static inline void tl_task_tile(const tl_call *c, int t, int64_t *i, int64_t *j) {
    if (c->l3) *i = c->l3->tasks[t].i, *j = c->l3->tasks[t].j;
    else *i = t % c->mt, *j = t / c->mt;
}
double tl_l3_task_flops(const tl_call *c, int t);
double tl_task_flops(const tl_call *c, int t); // flops of task t (GEMM or Level-3)
// Whether task t may start on worker d (-1: the CPU): its predecessor is done, or (opts.forward) it
// is in flight on device d itself, whose compute stream runs the two in order (TRSM: with the
// predecessor's solved tile published in d's cache, so that t reads it there and not from the host).
int tl_l3_ready(const tl_call *c, int t, int d);
int64_t tl_l3_out_key(const tl_call *c, int t);  // TL_B key of t's output if later tasks read it (TRSM), else -1
int tl_l3_score(const tl_call *c, int d, int t); // operand tiles of task t already in device d's cache
// opts.grid, level-3 tasks without chains: the task device d of ndev starts from, the one nearest
// (Chebyshev distance between C tiles, then the lower task id) to its corner of the grid of
// tl_grid_origin over C's tiles and not the origin of a device before it (c->dc[e].origin, e < d: set
// up in order); on the triangle of SYRK/SYR2K a corner off the triangle moves onto it; with more
// devices than tasks the last ones start from task 0.
int tl_l3_origin(const tl_call *c, int ndev, int d);
int64_t tl_l3_nkeys(const tl_call *c, int mat);  // map entries of matrix mat
// Host address and shape of the tile behind cache key idx of mat (as stored), and its preparation.
void tl_l3_tile_geom(const tl_call *c, int mat, int64_t idx, const char **src, size_t *spitch, size_t *width,
                     size_t *rows, int *prep, char *uplo);
// Queues task t's products (and solve, diagonal fix) into C slot cs on device d's compute stream
// (lock held; may drop it like tl_cache_get). trace: the flight's trace record.
// save_at >= 0: the task's own tile (an operand, TRMM) is copied from its operand slot to the save
// buffer of flight save_at on the save stream (save_ev[save_at] recorded, the flight's `saved` set).
int tl_l3_queue(tl_call *c, int d, int t, int cs, int trace, int save_at);
// Queues the write-back of task t's C tile (masked on the diagonal) on device d's D2H stream.
int tl_l3_copy_out(tl_call *c, int d, int t, int cs, size_t *bytes);
// Task t on the CPU BLAS, straight on host memory (no lock).
int tl_l3_cpu_task(tl_call *c, int t);
// Runs a prepared call (c->l3 set, problem filled): pins, caches, workers, stats; frees nothing.
void tl_call_free(tl_call *c);
int tl_call_exec(tl_call *c, const void *const pin[3], const size_t pin_bytes[3], ts_tiles_stats *stats);

#endif
