// ts_device.h: one C interface for devices, with a CUDA backend and a simulated backend.
//
// Everything above this layer (kernels, runtime, HPL, HPCG, burn) talks to devices only through
// these calls, so the same code runs on GPUs and, in CI, on simulated devices. Semantics follow
// CUDA: operations on one stream run asynchronously and in order; events order streams (also
// across devices); errors inside a stream are sticky and reported by the next sync.
#ifndef TS_DEVICE_H
#define TS_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { TS_BACKEND_AUTO = 0, TS_BACKEND_CUDA = 1, TS_BACKEND_SIM = 2, TS_BACKEND_NONE = 3 } ts_backend;

typedef struct ts_devset ts_devset; // all devices of one backend in this process (the context)
typedef struct ts_device ts_device;
typedef struct ts_stream ts_stream;
typedef struct ts_event ts_event;

#define TS_MAX_DEVICES 64

typedef struct {
    ts_backend backend;
    int ordinal;            // index in the set, 0..count-1
    int native_id;          // CUDA device id (after CUDA_VISIBLE_DEVICES) or sim index
    char name[96];
    char bus_id[32];        // PCI bus id ("sim:N" for simulated devices)
    size_t mem_total;       // bytes of device memory
    size_t arena_bytes;     // bytes reserved by the arena (the usable pool)
    int sms;                // multiprocessors (sim: worker lanes, 1)
    int cc_major, cc_minor; // compute capability (sim: 0.0)
    double clock_mhz;       // SM clock (0 if unknown)
    double mem_bw_gbs;      // theoretical memory bandwidth (0 if unknown)
    double rel_speed;       // sim: relative speed; CUDA: 1.0
    int host_mapped;        // 1: kernels may address registered host memory (CUDA: yes, through the
                            // pointer's device address; sim: unless opts.sim_unmapped)
} ts_device_props;

// Fault injection for simulated devices (all counts 1-based; 0 = off).
typedef struct {
    int device;             // which sim device the faults apply to (-1 = every device)
    long fail_copy;         // the Nth copy on the device fails (sticky stream error TS_ERR_DEVICE)
    long fail_kernel;       // the Nth kernel on the device fails
    long flip_copy;         // the Nth copy completes but one bit of its destination is flipped
    long flip_bit;          // which bit of the destination to flip (byte offset*8 + bit), -1 = middle
    long lose_after;        // after N operations the device is lost: every later op fails with
                            // TS_ERR_DEVICE_LOST, sync returns instead of waiting forever
    long tear_d2h;          // the Nth device-to-host copy writes the first half of its rows and fails
                            // (a device lost during a write-back: the host keeps a torn block)
} ts_sim_faults;

typedef struct {
    ts_backend backend;         // AUTO: SIM when sim_devices > 0, else CUDA when a GPU is present, else NONE
    // simulated devices
    int sim_devices;            // TESSERA_SIM_DEVICES
    size_t sim_mem_bytes;       // per device (TESSERA_SIM_MEM, default 256M)
    double sim_speeds[TS_MAX_DEVICES]; // relative speeds (TESSERA_SIM_SPEEDS="1,0.5"); 0 = 1.0
    double sim_gflops;          // pacing: a speed-1.0 device does this many GFLOP/s (0 = unpaced)
    double sim_link_gbs;        // pacing: host link GB/s (0 = unpaced)
    int sim_peer;               // 1: every pair of sim devices has a peer link (default 1)
    int sim_unmapped;           // 1: sim kernels may not address host memory (props.host_mapped 0), so
                                // the paths that fall back to copies on such a device run (TESSERA_SIM_UNMAPPED)
    ts_sim_faults faults;       // TESSERA_SIM_FAULTS="dev=1,copy=3,kernel=5,flip=2,bit=62,lose=10,tear=4"
    // CUDA
    double arena_fraction;      // share of free device memory the arena takes (TESSERA_ARENA_FRACTION, 0.90)
    size_t arena_bytes;         // explicit arena size per device (TESSERA_ARENA_BYTES); 0 = fraction
    int max_devices;            // use at most this many (0 = all)
} ts_devset_opts;

// Defaults, then the TESSERA_* variables on top. Returns TS_ERR_PARSE for a malformed variable.
int ts_devset_opts_init(ts_devset_opts *o);
// Parses the TESSERA_SIM_FAULTS syntax above.
int ts_sim_faults_parse(const char *spec, ts_sim_faults *f);

// Opens the devices. For CUDA this creates each device's arena (one large allocation).
// With backend AUTO and no GPU and no sim devices, the set is empty (count 0) and the call succeeds.
int ts_devset_open(const ts_devset_opts *o, ts_devset **out);
// Opens the devices for one of local_size ranks of a node and picks this rank's (*dev NULL when
// there is none). CUDA: one GPU per rank, CUDA_VISIBLE_DEVICES narrowed to the local_rank-th
// visible GPU before CUDA starts, so no arena is taken on the others; simulated devices: device
// local_rank % count. o->max_devices is set to 1 for CUDA.
int ts_devset_open_rank(ts_devset_opts *o, int local_rank, int local_size, ts_devset **set, ts_device **dev);
void ts_devset_close(ts_devset *s);
int ts_devset_count(const ts_devset *s);
ts_backend ts_devset_backend(const ts_devset *s);
ts_device *ts_devset_device(ts_devset *s, int i);
const char *ts_backend_name(ts_backend b); // "cuda", "sim", "none"
// Whether this build has the CUDA backend compiled in, and the number of visible GPUs (0 if none).
int ts_cuda_available(void);
int ts_cuda_device_count(void);

const ts_device_props *ts_device_props_of(const ts_device *d);
ts_devset *ts_device_set(ts_device *d);
// 1 if dst can read/write src's memory directly (peer link), 0 otherwise.
int ts_device_can_peer(const ts_device *a, const ts_device *b);
// Wait for all work on every stream of the device; returns the first sticky error seen.
int ts_device_sync(ts_device *d);

// ---- device memory (arena) ----
// Sub-allocates `bytes` (aligned to 256) from the device arena. On exhaustion returns TS_ERR_DEVMEM
// with a message giving the bytes asked, free in total and the largest free block.
int ts_dmalloc(ts_device *d, size_t bytes, void **ptr);
int ts_dfree(ts_device *d, void *ptr); // NULL is a no-op
void ts_dmem_info(ts_device *d, size_t *used, size_t *free_bytes, size_t *largest_free);

// ---- pinned host memory (refcounted registry of ranges) ----
// Registers [ptr, ptr+bytes) as pinned for fast async copies. Overlapping and repeated ranges are
// handled: pages already registered are not registered twice; a page is unregistered when its last
// user unregisters. Returns a handle through *handle for ts_host_unpin.
int ts_host_pin(ts_devset *s, void *ptr, size_t bytes, int *handle);
int ts_host_unpin(ts_devset *s, int handle);
// Allocate/free page-locked host memory directly (cudaHostAlloc; sim: aligned malloc).
int ts_host_alloc(ts_devset *s, size_t bytes, void **ptr);
void ts_host_free(ts_devset *s, void *ptr);
// Number of bytes currently registered by the backend (pages), and of live handles (for tests).
void ts_host_pin_stats(ts_devset *s, size_t *registered_bytes, int *handles, long *backend_registers);

// ---- streams and events ----
int ts_stream_create(ts_device *d, ts_stream **out);
// A stream whose work the device schedules ahead of normal streams' when both have work ready
// (high = 1; CUDA: the device's greatest stream priority, so a short critical-path kernel is not
// queued behind the blocks of a long GEMM on another stream). high = 0 is ts_stream_create.
// Simulated devices accept it and run the stream like any other (their streams are threads).
int ts_stream_create_prio(ts_device *d, int high, ts_stream **out);
int ts_stream_is_high(const ts_stream *st); // 1 when created with high priority
int ts_stream_destroy(ts_stream *st);       // waits for queued work first
ts_device *ts_stream_device(ts_stream *st);
int ts_stream_sync(ts_stream *st);          // 0, or the stream's sticky error
int ts_stream_error(ts_stream *st);         // sticky error without waiting (0 = none so far)
void *ts_stream_native(ts_stream *st);      // cudaStream_t for CUDA, NULL for sim

int ts_event_create(ts_device *d, ts_event **out);
int ts_event_destroy(ts_event *ev);
int ts_event_record(ts_event *ev, ts_stream *st);
int ts_stream_wait_event(ts_stream *st, ts_event *ev); // st waits for ev (any device of the set)
int ts_event_sync(ts_event *ev);
int ts_event_query(ts_event *ev);            // 1 complete, 0 pending, <0 error
int ts_event_elapsed_ms(ts_event *start, ts_event *end, double *ms);

// ---- copies (all asynchronous on the stream) ----
typedef enum { TS_COPY_H2D = 1, TS_COPY_D2H = 2, TS_COPY_D2D = 3 } ts_copy_kind;
// 2-D copy of `rows` lines of `width` bytes; line r starts at src + r*spitch and dst + r*dpitch.
// (A column-major m x n double block is width = m*8, rows = n, pitch = ld*8.)
int ts_copy2d_async(ts_stream *st, ts_copy_kind kind, void *dst, size_t dpitch, const void *src,
                    size_t spitch, size_t width, size_t rows);
int ts_copy_async(ts_stream *st, ts_copy_kind kind, void *dst, const void *src, size_t bytes);
// Device-to-device between two devices of the set (over a peer link when there is one, else staged).
int ts_copy_peer2d_async(ts_stream *st, ts_device *dst_dev, void *dst, size_t dpitch,
                         ts_device *src_dev, const void *src, size_t spitch, size_t width,
                         size_t rows);
int ts_memset_async(ts_stream *st, void *dst, int value, size_t bytes);
// Runs fn(arg) on a host thread after all earlier work of the stream; later work waits for it.
int ts_host_callback(ts_stream *st, void (*fn)(void *arg), void *arg);

// ---- kernels ----
// A backend-neutral kernel: on sim devices `cpu` runs on the stream's worker thread (device
// pointers are host-addressable there) and the device is paced by `flops`; on CUDA `cuda` enqueues
// on the native stream and returns 0 or a negative ts_status. `args` (args_size bytes) is copied at
// enqueue, so the caller may reuse its argument struct at once.
typedef struct {
    const char *name;
    double flops;                              // work, for pacing and accounting
    int (*cpu)(void *args);                    // returns 0 or a negative ts_status
    int (*cuda)(void *native_stream, void *args);
    const void *args;
    size_t args_size;                          // <= TS_KERNEL_ARGS_MAX
} ts_kernel;
#define TS_KERNEL_ARGS_MAX 512
int ts_kernel_enqueue(ts_stream *st, const ts_kernel *k);

// A per-stream slot for a higher layer's handle (e.g. a cuBLAS handle bound to the stream);
// the destructor runs at stream destruction.
void *ts_stream_slot(ts_stream *st);
void ts_stream_set_slot(ts_stream *st, void *value, void (*destroy)(void *value));

// Writes one results-schema "devices" entry per device of the set (a ts_json_devices_fn: ctx is
// the ts_devset, NULL writes nothing): backend, name, memory_gb, arena_gb, sms, cc, bus_id.
struct ts_json;
void ts_devset_json(struct ts_json *j, void *devset);

// Counters for tests and reports.
typedef struct {
    long copies, kernels, callbacks;
    size_t bytes_h2d, bytes_d2h, bytes_d2d, bytes_p2p;
    double kernel_flops;
} ts_device_counters;
void ts_device_counters_get(ts_device *d, ts_device_counters *c);

// ---- graphs: a stream's work captured once, launched many times ----
// Between ts_stream_capture_begin and ts_stream_capture_end the operations enqueued on the stream
// are recorded instead of run; ts_graph_launch then enqueues all of them again, in the same order
// and with the same arguments (kernel argument structs as copied at capture), as one operation
// (CUDA: a CUDA graph captured in thread-local mode and instantiated once, so the host launches the
// whole sequence with one call). Work that orders the stream with the host cannot be captured:
// ts_stream_sync and ts_stream_error on a capturing stream are refused (TS_ERR_STATE); simulated
// devices record kernels, memsets and device-to-device copies and refuse host copies, host
// callbacks, event records and waits (TS_ERR_UNSUPPORTED; CUDA captures what its runtime can).
// An operation refused or failing during the capture fails it: ts_stream_capture_end then ends the
// capture all the same and returns that error and no graph, and the stream works as before, so the
// caller can run the work directly instead. Device counters count a graph's operations at each
// launch, not at the capture.
typedef struct ts_graph ts_graph;
int ts_stream_capture_begin(ts_stream *st);
int ts_stream_capture_end(ts_stream *st, ts_graph **out);
int ts_stream_capturing(const ts_stream *st); // 1 between begin and end
// Enqueues the graph on st, any stream of the device it was captured on (also one that is
// capturing: the graph's operations are then recorded there). Launches on one stream run in order.
int ts_graph_launch(ts_graph *g, ts_stream *st);
// NULL is a no-op. Launches already enqueued still run.
void ts_graph_destroy(ts_graph *g);
// What one launch enqueues: kernels, copies and their bytes, flops (callbacks: CUDA only).
void ts_graph_counters(const ts_graph *g, ts_device_counters *c);

#ifdef __cplusplus
}
#endif

#endif
