// ts_tiles.h: the tile runtime: host-resident GEMM of any size over every device of a set and the CPU.
//
// C = alpha op(A) op(B) + beta C with A, B, C in host memory (column-major; a row-major caller
// passes the transposed problem). C is cut into T x T tiles; each C tile is one task whose whole
// k-loop runs on one worker (a device or the CPU). Device workers keep A and B tiles in a per-device
// cache (reader-counted approximate LRU in arena memory, peer devices as a second level) and
// overlap the copy in of the next tiles, the GEMM on the current one and the copy out of a finished
// C tile. Scheduling is demand-driven with cache-hit priority and stealing at the tail (BLASX);
// the CPU worker takes tiles from the same queue but leaves the last ones to the devices.
// docs/runtime.md describes the design, the options and the limits.
#ifndef TS_TILES_H
#define TS_TILES_H

#include <stddef.h>
#include <stdint.h>

#include "core/ts_json.h"
#include "device/ts_device.h"
#include "kernels/ts_kernels.h"
#include "runtime/ts_engines.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ts_tiles ts_tiles;

// cpu_share: TS_TILES_CPU_AUTO (demand-driven, leaves the tail to the devices), 0 (no CPU worker),
// a fraction in (0, 1]: the CPU takes at most that share of the tiles, or TS_TILES_CPU_ADAPTIVE:
// the share comes from the performance database (ts_perfdb.h) for the call's workload class, and
// the CPU steals further tiles when it finishes its share early (CALDGEMM's 2nd/3rd phase).
#define TS_TILES_CPU_AUTO (-1.0)
#define TS_TILES_CPU_ADAPTIVE (-2.0)

typedef struct {
    int64_t tile;        // T, tile edge; 0 = TESSERA_TILE, else 4096 on CUDA, 256 on simulated devices
    double cpu_share;    // TESSERA_TILES_CPU=auto|0|fraction (default auto)
    int depth;           // C tiles in flight per device, 1..8, or 0: auto, 2 for GEMM and 4 for the level-3
                         // routines, whose tasks are lighter (TESSERA_TILES_DEPTH, default 0)
    int reserve;         // reservation station: tasks claimed ahead per device, >= 0 (TESSERA_TILES_RESERVE, 2)
    double mem_fraction; // share of the device arena's free memory the cache may take (TESSERA_TILES_MEM, 0.9)
    int peer;            // 1: fetch a tile from a peer's cache over a peer link (TESSERA_TILES_PEER, 1)
    int keep_pins;       // host registrations kept across calls, 0 = unpin after every call
                         // (TESSERA_TILES_PINS, default 8)
    ts_engine engine;    // device GEMM engine (default auto: ts_dev_gemm's choice per device)
    // (added with the performance database, fault re-runs and the trace)
    int save_c;          // 1: keep each C tile's original in host memory until its write-back completed,
                         // so that a failed device's tiles can be re-run when beta != 0 (TESSERA_TILES_SAVE_C, 1)
    int trace;           // 1: record a timeline of every call (ts_tiles_trace_write)
    int diag_rank;       // 1: the diagonal C tiles of ?SYRK/?SYR2K by rank-k/2k kernels on their triangle
                         // (half a GEMM's flops), 0: by GEMMs on the whole tile (TESSERA_TILES_DIAG_RANK, 1)
    int diag_trmm;       // 1: the diagonal products of TRMM tiles by ?trmm on the block's triangle (half a
                         // GEMM's flops), 0: by GEMMs on the zero-filled block (TESSERA_TILES_DIAG_TRMM, 1)
    int trans_prep;      // 1: ?SYRK/?SYR2K with trans 'N' read the operand tiles their GEMMs use transposed from a
                         // transposed copy in the cache, so that every off-diagonal product runs NN
                         // (TESSERA_TILES_TRANS_PREP, 1)
    int64_t tri_base;    // the diagonal TRMM products and TRSM solves split down to this order, the rest by
                         // GEMM (ts_dev_trmm_blocked); -1: tile / 8 (at least 32), 0: not split
    int forward;         // 1: a TRMM/TRSM chain's next tile starts on the device that computes its
                         // predecessor without waiting for the write-back (TESSERA_TILES_FORWARD, 1)
    int devices;         // the first `devices` devices of the set take part, 0: all of them (a benchmark's
                         // 1/2/4-device comparison in one process)
    int grid;            // 1: the devices start from the corners of a pr x pc grid of blocks of C
                         // (pr * pc = devices, near square), so that each device's region needs its own
                         // block rows of A and block columns of B and shares each with one neighbour
                         // (level-3 routines without chains too: the task nearest each corner);
                         // 2 (default): also each C tile (i, j) runs its k-loop from panel
                         // (i*kt/mt + j*kt/nt) mod kt, so that devices sharing a panel start their
                         // first tiles at different halves of it (disjoint first loads from the host);
                         // a level-3 task rotates its product list the same way (np for kt; a TRMM
                         // tile's diagonal product stays first);
                         // 0: from points spread evenly along the column-major tile order (for a square
                         // C all in one block row, so every device reads all of A), k from 0
                         // (TESSERA_TILES_GRID, 2)
    int h2d_ahead;       // host loads a device may have queued and not finished, 0: no limit. A worker
                         // that queued its whole first tiles' loads at once took every shared panel's
                         // host load before its peers asked (they then waited on its link); with a
                         // small limit the devices' requests interleave (TESSERA_TILES_H2D_AHEAD, 4)
    const char *perfdb;  // performance database file (NULL: $TESSERA_PERFDB, else ~/.cache/tessera/perfdb.txt);
                         // read and written only with cpu_share TS_TILES_CPU_ADAPTIVE
} ts_tiles_opts;

// Defaults, then the TESSERA_* variables above on top. TS_ERR_PARSE names a malformed variable.
int ts_tiles_opts_init(ts_tiles_opts *o);

// What one call did. Bytes are what the runtime moved (packed tile bytes).
typedef struct ts_tiles_stats {
    double seconds;                      // wall time of the call
    int64_t tile;                        // T used
    int64_t tiles;                       // C tiles (tasks) of the call
    int ndev;                            // devices that took part
    int64_t tiles_dev[TS_MAX_DEVICES];   // C tiles done by each device
    int64_t tiles_cpu;                   // C tiles done by the CPU worker
    double cpu_share;                    // tiles_cpu / tiles
    size_t bytes_h2d, bytes_d2h, bytes_p2p;
    size_t bytes_save;                   // D2H bytes of the saved copies of C tiles (save_c, beta != 0)
    size_t bytes_h2d_noreuse;            // H2D volume if every task loaded all its tiles (no cache)
    int64_t cache_hits;                  // A/B tile requests served by the device's own cache
    int64_t cache_misses;                // ... loaded from the host or a peer
    int64_t peer_fetches;                // misses served by a peer's cache
    int64_t transposes;                  // misses served by transposing the device's own plain copy (trans_prep)
    int64_t evictions;                   // valid tiles dropped to make room
    int64_t steals;                      // reserved tasks taken over by another device at the tail
    int64_t slots[TS_MAX_DEVICES];       // tile slots of each device's cache
    // (added with the performance database and fault re-runs)
    const char *cpu_mode;                // "off", "auto", "fixed", "adaptive"
    double cpu_share_planned;            // share the CPU was given (fixed or from the database; -1 = none: auto)
    int64_t cpu_steals;                  // tiles the CPU took beyond its planned share (adaptive)
    double dev_gflops, cpu_gflops;       // measured rates of this call (devices together; CPU worker)
    double cpu_gflops_est;               // the CPU's rate its first decision in this call used (probe or
                                         // its last tile before the call; 0: CPU off or not measured)
    int devices_failed;                  // devices that failed during the call (their tiles were re-run)
    int64_t reruns;                      // C tiles given back by a failed device and run again elsewhere
    size_t bytes_h2d_dev[TS_MAX_DEVICES]; // bytes_h2d by device (who loaded the shared panels)
} ts_tiles_stats;

// Writes what one call did as members of the JSON object that is open (the "extra" object of a
// results entry, docs/results.md): bytes_h2d, bytes_d2h, bytes_save, bytes_p2p, bytes_h2d_noreuse,
// cache_hits, cache_misses, peer_fetches, transposes, cpu_share, tile, tiles, tiles_cpu, tiles_per_device,
// steals, cpu_mode, cpu_share_planned (null: none), cpu_steals, dev_gflops, cpu_gflops, cpu_gflops_est,
// devices_failed, reruns, bytes_h2d_per_device. Every tool that reports the runtime writes it through this function.
void ts_tiles_stats_json(ts_json *j, const ts_tiles_stats *t);

// Creates a runtime over the devices of `devs` (which must outlive it) and the CPU. opts NULL =
// ts_tiles_opts_init. A set with no devices is allowed when the CPU worker is on.
int ts_tiles_create(ts_devset *devs, const ts_tiles_opts *opts, ts_tiles **out);
// Waits for nothing (no call can be running) and releases streams, events and registrations.
void ts_tiles_destroy(ts_tiles *rt);

// C = alpha op(A) op(B) + beta C, everything in host memory (pageable or pinned), column-major,
// BLAS argument rules (TS_ERR_ARG names the argument). prec 's','d','c','z'; ta/tb 'N','T','C'.
// alpha/beta point to one scalar of the precision. stats may be NULL. Calls on one runtime from
// several threads are serialised (one call runs at a time). On a device failure the call returns
// the error (TS_ERR_DEVICE, TS_ERR_DEVICE_LOST, ...); C is then partly updated.
// A device that fails during a call (a sticky stream error or a lost device) is dropped for the
// rest of the call and its unfinished C tiles are re-run by the other workers (stats->reruns), so
// the call still returns the right C; the call fails only when no worker is left (or, with
// save_c 0 and beta != 0, when a tile's write-back may have been cut off).
int ts_tiles_gemm(ts_tiles *rt, char prec, char ta, char tb, int64_t m, int64_t n, int64_t k,
                  const void *alpha, const void *A, int64_t lda, const void *B, int64_t ldb,
                  const void *beta, void *C, int64_t ldc, ts_tiles_stats *stats);

// Host registrations: the runtime pins A, B and C through ts_host_pin and keeps up to keep_pins
// registrations across calls so that repeated calls on the same buffers pin nothing. Memory that
// may still be registered must be released before it is freed: ts_tiles_unpin drops every kept
// registration overlapping [ptr, ptr+bytes); ts_tiles_unpin_all drops them all.
int ts_tiles_unpin(ts_tiles *rt, const void *ptr, size_t bytes);
int ts_tiles_unpin_all(ts_tiles *rt);
// Kept registrations (for tests): count and bytes asked.
void ts_tiles_pin_info(ts_tiles *rt, int *count, size_t *bytes);

// Writes the timeline of the last call (opts.trace) in Chrome trace format (chrome://tracing,
// Perfetto): one complete event per copy in, GEMM k-loop and copy out of every C tile, per worker.
int ts_tiles_trace_write(ts_tiles *rt, const char *path);

// The tile edge a call would use (opts, TESSERA_TILE, or the device default).
int64_t ts_tiles_tile(const ts_tiles *rt);
int ts_tiles_device_count(const ts_tiles *rt);
int ts_tiles_has_cpu(const ts_tiles *rt);

#ifdef __cplusplus
}
#endif

#endif
