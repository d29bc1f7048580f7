// ts_bench.h: the benchmark harness of `tessera gemm` and `tessera blas3`: common options, devices and engines, rows, progress, output.
//
// A command parses its own options around ts_bench_common_opt, opens the run with ts_bench_begin
// (devices, the engine entry of runtime/ts_engines.h), appends one row per (problem, engine) whose
// first member is a ts_bench_row, and ends with ts_bench_end. What a command computes, checks and
// prints stays in its own file. Options and the run's devices and passes are in ts_bench.c, rows
// and their output (table cells, results JSON) in ts_bench_rows.c, the operand buffers, host
// memory, cuBLASXt's pinning, the timed loops and the loops over sizes and engine passes in
// ts_bench_run.c.
#ifndef TS_BENCH_H
#define TS_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/ts_json.h"
#include "core/ts_progress.h"
#include "core/ts_timer.h"
#include "device/ts_device.h"
#include "runtime/ts_engines.h"
#include "runtime/ts_tiles.h"

#define TS_BENCH_MAX_PRECS 4
#define TS_BENCH_MAX_ENGINES 8
#define TS_BENCH_MAX_XT_BLOCKS 4
#define TS_BENCH_XT_BLOCK_DEFAULT 4096
#define TS_BENCH_MAX_DIM 2147483647LL // CBLAS and cuBLAS take int dimensions
#define TS_BENCH_MAX_COUNTS 8         // --devices list items

#define TS_BENCH_MAX_SHAPES 256
#define TS_BENCH_NBUF 5               // operand buffers of one (size, precision)

// One problem size: m x n x k (a command with two dimensions leaves k as it likes).
typedef struct {
    int64_t m, n, k;
} ts_bench_shape;

// The options both commands take.
typedef struct {
    const char *cmd;           // "gemm", "blas3": names the command in messages
    const ts_engine *allowed;  // the engines the command runs, in the order its messages list them
    int nallowed;
    char precs[TS_BENCH_MAX_PRECS];
    int nprecs;
    double alpha[2], beta[2];  // {re, im}
    ts_engine engines[TS_BENCH_MAX_ENGINES];
    int xt_block[TS_BENCH_MAX_ENGINES]; // cublasxt entries: the block dimension of each (one per --xt-block value)
    int nengines;
    int xt_blocks[TS_BENCH_MAX_XT_BLOCKS], nxt_blocks;
    int warmup, reps, verify;
    uint64_t seed;
    const char *json, *trace;
    int verbosity;
    int counts[TS_BENCH_MAX_COUNTS]; // --devices: device counts the set-wide engines run on, in turn (0 items: all)
    int ncounts;
    int device_opt;            // the command takes --device/-d I (the device engines' device): device, device_given
    int device, device_given;
    // The sizes, when the command keeps them here (ts_bench_parse without a size callback): each
    // argument a size of shape_parts dimensions (shape_expect names them in messages), at most max_shapes.
    ts_bench_shape shapes[TS_BENCH_MAX_SHAPES];
    int nshapes, max_shapes, shape_parts;
    const char *shape_expect;
    const char *sweep, *dims[3]; // sizes of three dimensions: --sweep, -m/-n/-k (ts_bench_shapes_finish)
} ts_bench_opts;

// Defaults: alpha = beta = 1, verify on, seed 1 (warmup and reps 0: the command sets its own).
void ts_bench_opts_init(ts_bench_opts *o, const char *cmd, const ts_engine *allowed, int nallowed);
// argv[*i] when it is one of the common options (--prec/-p, --alpha, --beta, --engine/-e, --xt-block,
// --warmup, --reps/-r, --seed, --json, --trace, --no-verify, -q, -v, --devices, with device_opt
// --device/-d, with sizes of three dimensions --sweep and -m/-n/-k): 1 consumed (with its value),
// 0 not one of them, -1 bad (the message is printed).
int ts_bench_common_opt(ts_bench_opts *o, int argc, char **argv, int *i);
// The command line: --help (usage printed, -1), the common options, the command's own (own:
// 1 consumed, 0 not one of its options, -1 bad with the message printed), every other argument a
// size (size: 0 or an error printed; NULL: into o->shapes, then with three dimensions
// ts_bench_shapes_finish). Returns 0, -1 (help) or TS_EXIT_USAGE.
typedef int (*ts_bench_opt_fn)(void *ctx, int argc, char **argv, int *i);
typedef int (*ts_bench_arg_fn)(void *ctx, const char *arg);
int ts_bench_parse(ts_bench_opts *o, int argc, char **argv, void (*usage)(FILE *f), ts_bench_opt_fn own,
                   ts_bench_arg_fn size, void *ctx);
// After the options: precision d when none was given, and one cublasxt entry per --xt-block value.
int ts_bench_finish_opts(ts_bench_opts *o);
// A dimension: a positive integer up to TS_BENCH_MAX_DIM; `what` names it in the message.
int ts_bench_dim(const char *cmd, const char *tok, const char *what, int64_t *out);
// A size "A" or, with parts 2 or 3, "AxB" / "AxBxC" (`expect` says which in the message): the
// dimensions in d[0..parts), A repeated for a one-item size.
int ts_bench_size(const char *cmd, const char *s, int parts, const char *expect, int64_t d[3]);
// An option's value, one of two words: 0 for a, 1 for b, -1 when neither ("<opt>: unknown <noun> '<v>'
// (choose a or b)" printed).
int ts_bench_choice(const char *cmd, const char *opt, const char *noun, const char *v, const char *a, const char *b);
// Calls fn for each item of a comma list (a copy); an empty or malformed list is an error.
typedef int (*ts_bench_token_fn)(void *ctx, const char *opt, const char *tok);
int ts_bench_each_token(const char *cmd, void *ctx, const char *opt, const char *list, ts_bench_token_fn fn);
// --sweep A:B:S (S a step or xF a factor) or a comma list: n sizes (at most max) into vals, each a
// dimension; 0 or TS_EXIT_USAGE (the message printed).
int ts_bench_sweep(const char *cmd, const char *sweep, int64_t *vals, int max, int *n);
// Appends a size to o->shapes; 0 or TS_EXIT_USAGE ("too many sizes").
int ts_bench_add_shape(ts_bench_opts *o, ts_bench_shape s);
// After the sizes: --sweep's sizes (n x n x n) appended, then -m/-n/-k (dims, NULL when not given)
// set that dimension of every size, or alone make one size whose missing dimensions take the first
// one given. 0 or TS_EXIT_USAGE (the message printed).
int ts_bench_shapes_finish(ts_bench_opts *o, const char *sweep, const char *const dims[3]);
// A size as messages write it: MxN, or MxNxK when sizes have three dimensions (shape_parts); buf.
const char *ts_bench_shape_text(const ts_bench_opts *o, ts_bench_shape s, char *buf, size_t len);

// What every row has; a command's row type starts with one.
typedef struct {
    ts_engine engine; // the engine that ran
    int xt_block;     // cublasxt: its block dimension
    int reps;
    ts_stats sec;
    double tf_med, tf_min, tf_max;
    int verified, passed, failed; // failed: a runtime error, the row has no numbers
    double error, bound;
    double ratio;     // TFLOP/s against the first engine of its group (0 = none)
    int has_tiles;    // tiles: what the runtime did in the last timed run
    ts_tiles_stats tiles;
    int ndev;         // set-wide engines (tiles, cublasxt): devices the row ran on (0: not one)
} ts_bench_row;

typedef struct {
    ts_bench_opts *o;
    ts_devset *devs;
    ts_engines *eng;
    ts_tiles *tiles; // once opened (ts_bench_open)
    ts_device *dev;  // the device engines' device (ts_bench_pick_device), or NULL
    int dev_index;
    ts_stream *st;   // its stream (ts_bench_stream_open)
    FILE *out;       // stdout, or stderr when the JSON goes to stdout
    ts_progress prog;
    int progress_on;
    double done;     // flops done, for the progress line
    void *rows;      // row_size bytes each
    size_t row_size;
    int nrows, caprows;
    int header_done; // ts_bench_header_due
    // The operands of the current (size, precision) (ts_bench_buffers): host buffers of bytes[q]
    // each, and device buffers of the same sizes on b->dev.
    void *host[TS_BENCH_NBUF], *dbuf[TS_BENCH_NBUF];
    size_t bytes[TS_BENCH_NBUF];
} ts_bench;

// Log level, the --json path checked (and --trace with check_trace), devices opened, the engine
// entry created. Returns 0 or the exit code (the message printed).
int ts_bench_begin(ts_bench *b, ts_bench_opts *o, size_t row_size, int check_trace);
// Opens a set-wide engine (tiles, cublasxt) over every device, or says why not ("<what>: not
// available: ..."): 0, TS_EXIT_USAGE or TS_EXIT_RUNTIME.
int ts_bench_open(ts_bench *b, ts_engine e, const char *what);
// --devices: every count is 1..the devices open and every engine set-wide (tiles, cublasxt); 0 or
// TS_EXIT_USAGE (the message printed). Without --devices: one pass over every device.
int ts_bench_check_counts(ts_bench *b);
// Passes of a run: the --devices items, or 1.
int ts_bench_npasses(const ts_bench *b);
// Pass p: the set-wide engines over its device count (reopened when it changes; b->tiles follows).
// 0 or a negative status.
int ts_bench_use_pass(ts_bench *b, int p);
// The devices a row of engine e runs on now (0 for engines that are not set-wide).
int ts_bench_row_devices(const ts_bench *b, ts_engine e);
// Host memory work split over the cores (OpenMP): copy, set, fill with ts_uniform_at(key, i)
// (exactly the values of the serial fills of core/ts_rng.h: float for s/c, double for d/z).
void ts_bench_copy(void *dst, const void *src, size_t bytes);
void ts_bench_set(void *dst, int byte, size_t bytes);
void ts_bench_fill(char prec, uint64_t key, void *x, size_t bytes);
// The key of an operand's data: the seed, n words that tell the problem, the precision and the
// operand's role mixed (core/ts_rng.h's ts_mix64).
uint64_t ts_bench_key(uint64_t seed, const uint64_t *words, int n, char prec, int role);

// The device engines (ts_bench_dev.c): those that run on one device of the set (not cpu, not
// set-wide); whether any of the options' engines is one.
int ts_bench_is_device_engine(ts_engine e);
int ts_bench_any_device_engine(const ts_bench_opts *o);
// The device of the device engines: device `index` of the set (given: it was on the command line),
// or none when every engine runs on the host. 0 or TS_EXIT_USAGE (the message printed).
int ts_bench_pick_device(ts_bench *b, int index, int given);
// Resolves every engine of the options to the one that runs: cpu and the set-wide engines as they
// are (cublasxt opened), device engines probed on the device, or without one auto as cpu and ref as
// the reference kernel on the host. A device that no resolved engine uses is let go (b->dev NULL).
// 0 or TS_EXIT_USAGE (the message printed).
int ts_bench_resolve_engines(ts_bench *b, ts_engine *resolved);
// 1 when a row of engine e runs on the host (no device, or not a device engine).
int ts_bench_row_on_host(const ts_bench *b, ts_engine e);
// The device's stream: created (0 or TS_EXIT_RUNTIME, the message printed), and made again after a
// sticky error (0 or a negative status). ts_bench_end destroys it.
int ts_bench_stream_open(ts_bench *b);
int ts_bench_stream_renew(ts_bench *b);
// The "device I: NAME (BACKEND)" line, when there is a device.
void ts_bench_print_device(ts_bench *b);
// The "tiles: N devices ..., tile T" line.
void ts_bench_print_tiles_set(ts_bench *b);
// Unless -q: the device line (when there is a device) and the tiles line (when the tile runtime is
// open); 1 when they were printed (not -q).
int ts_bench_print_setup(ts_bench *b);
// 1 the first time: the table's header is due.
int ts_bench_header_due(ts_bench *b);
void ts_bench_end(ts_bench *b);

// A new zeroed row (error, bound NaN); NULL when out of memory.
void *ts_bench_new_row(ts_bench *b);
#define TS_BENCH_ROW(b, i, type) (&((type *)(b)->rows)[i])
// Rates from `reps` timings (r->reps) of `flops` each.
void ts_bench_set_rates(ts_bench_row *r, double flops, double *sec);
// An engine tiles row after its timed runs: the runtime's stats of the last one kept in the row, and
// its timeline written to path (NULL: none). 0 or the trace's negative status.
int ts_bench_row_tiles(ts_bench *b, ts_bench_row *r, const ts_tiles_stats *last, const char *path);
// The same with the timeline to --trace's path for the row's device count (ts_bench_trace_path); a
// trace that cannot be written is reported ("--trace: <error>") and leaves the row as it is.
void ts_bench_row_trace(ts_bench *b, ts_bench_row *r, const ts_tiles_stats *last);
// Rows [first, nrows) against the first when the command runs several engines.
void ts_bench_set_ratios(ts_bench *b, int first);
// Rows [first, nrows): ratios set, then each printed by print(ctx, row) (the progress line cleared first).
void ts_bench_print_rows(ts_bench *b, int first, void (*print)(void *ctx, void *row), void *ctx);
// A runtime error on a row: marked, reported as "<what>: <error>", exit code at least 3.
void ts_bench_row_failed(ts_bench *b, ts_bench_row *r, const char *what, int *worst);
// A finished row: exit code at least 1 when its check failed.
void ts_bench_row_done(const ts_bench_row *r, int *worst);
const char *ts_bench_check_word(const ts_bench_row *r); // ERROR, SKIPPED, PASS, FAIL
int ts_bench_row_hidden(const ts_bench *b, const ts_bench_row *r); // -q shows failed rows only
// The table cells every command prints, as text: "-" for numbers a row does not have (all of them
// on a failed row). engine: the engine that ran, "auto:<engine>" when requested is auto,
// "cublasxt:<block>", with "/<devices>" after it under --devices; times in ms with 3 decimals.
typedef struct {
    char engine[24], med[24], min[24], max[24], tf[24], ratio[16], error[16], bound[16];
    const char *check;
} ts_bench_cells;
void ts_bench_row_cells(const ts_bench *b, const ts_bench_row *r, ts_engine requested, const char *bound_fmt,
                        ts_bench_cells *c);

void ts_bench_progress_start(ts_bench *b, int on, double total_flops);
void ts_bench_progress(ts_bench *b, double flops, const char *what);
void ts_bench_progress_clear(ts_bench *b);
void ts_bench_progress_end(ts_bench *b);

// The operands of one (size, precision): b->host[q] of bytes[q] (at least 64) for q < nhost (pinned
// with devices), then when there is a device b->dbuf[q] of the same size for q < ndev, the host
// buffers [0, nup) copied into theirs. 0 or a negative status (ts_bench_buffers_free frees what was made).
int ts_bench_buffers(ts_bench *b, const size_t *bytes, int nhost, int ndev, int nup);
// Host buffers [first, first + n) copied into their device buffers on the stream (not waited for).
int ts_bench_upload(ts_bench *b, int first, int n);
// Every operand buffer freed (the tile runtime's pins let go first); ts_bench_end does it too.
void ts_bench_buffers_free(ts_bench *b);
// Every (size, precision) of the options in turn until one fails, the operands freed after each:
// run(ctx, shape, prec, worst) makes its buffers and rows. A negative status is reported as
// "<size> <prec>: <error>", a positive one (an exit code) was reported by run. The progress line
// ended after them. Returns 0 or TS_EXIT_RUNTIME.
typedef int (*ts_bench_size_fn)(void *ctx, ts_bench_shape s, char prec, int *worst);
int ts_bench_sizes(ts_bench *b, ts_bench_size_fn run, void *ctx, int *worst);
// Every (size, precision) fits before anything is made: need(ctx, shape, prec, &host, &dev) gives
// the bytes of host and device memory (ts_bench_fits, "<size> <prec>" in the message). 0 or TS_EXIT_USAGE.
typedef void (*ts_bench_need_fn)(void *ctx, ts_bench_shape s, char prec, double *host, double *dev);
int ts_bench_check_sizes(ts_bench *b, ts_bench_need_fn need, void *ctx);
// A new row of the options' engine e: engine (as given), its block, the devices of the current pass
// and reps (as given); NULL when out of memory.
void *ts_bench_engine_row(ts_bench *b, int e);
// A row for every engine in every pass (the --devices items, ts_bench_use_pass), run by
// run(ctx, row, e, pass, what), which names the row in what for a failure's message. A failed row
// is reported, and the stream made again after one of a device engine (resolved: the engines that
// run, or NULL: as given). 0 or a negative status (out of memory, a pass or the stream not made).
typedef int (*ts_bench_row_fn)(void *ctx, void *row, int e, int pass, char *what, size_t len);
int ts_bench_engine_rows(ts_bench *b, const ts_engine *resolved, ts_bench_row_fn run, void *ctx, int *worst);
// 1 when the options run engine e.
int ts_bench_has_engine(const ts_bench_opts *o, ts_engine e);

// Host buffers: pinned through the device set when it has devices, else page-aligned.
int ts_bench_host_alloc(ts_bench *b, size_t bytes, void **p);
void ts_bench_host_free(ts_bench *b, void *p);
// TS_EXIT_USAGE with "<what>: needs X GiB of host memory, Y GiB available" when need > avail.
int ts_bench_host_fits(const ts_bench *b, const char *what, double need, double avail);
// Both memories for one item: dev_need bytes on the device engines' device (when there is one;
// "<what>: needs X GiB on device I, Y GiB available"), then host_need of the host's available memory.
int ts_bench_fits(const ts_bench *b, const char *what, double host_need, double dev_need);
// cuBLASXt reads host memory as it is: for a cublasxt row the operands A, B, C (b->host[qa], [qb],
// [qc]) are registered (pinned) through the device layer, as the tile runtime does with its
// operands, and the row's block set; other rows need nothing (pins -1 all the same, for ts_bench_xt_end).
int ts_bench_xt_begin(ts_bench *b, const ts_bench_row *r, int qa, int qb, int qc, int pins[3]);
void ts_bench_xt_end(ts_bench *b, const int pins[3]);
// Runs run(ctx, 0) warmup times, then run(ctx, 1) reps times, each timed on the host clock into sec.
// 0 or the first failure's negative status.
typedef int (*ts_bench_run_fn)(void *ctx, int timed);
int ts_bench_time_host(int warmup, int reps, ts_bench_run_fn run, void *ctx, double *sec);
// The same for work that enqueue(ctx, timed) puts on stream st, timed by events between the runs.
int ts_bench_time_stream(ts_stream *st, int warmup, int reps, ts_bench_run_fn enqueue, void *ctx, double *sec);
// --trace FILE: the path of a run on ndev devices; under --devices one file per count, FILE.json ->
// FILE-<ndev>dev.json. NULL without --trace.
const char *ts_bench_trace_path(const ts_bench *b, int ndev, char *buf, size_t len);

// What the tile runtime did in a row's last timed run: two lines under the row (-v: one shorter line).
void ts_bench_print_tiles_stats(ts_bench *b, const ts_tiles_stats *t);
void ts_bench_print_tiles_brief(ts_bench *b, const ts_tiles_stats *t);
// Writes the results document to --json FILE through write(); -1 when it could not be written.
int ts_bench_write_json(ts_bench *b, void (*write)(ts_bench *b, ts_json *j));
// The end of a run: the results document written (with --json), and the exit code: rc when the run
// failed (or TS_EXIT_RUNTIME when the document could not be written), else the worst row's.
int ts_bench_finish(ts_bench *b, void (*write)(ts_bench *b, ts_json *j), int rc, int worst);
// A row's results entry begun with its engine, rates and check (error and bound when verified).
void ts_bench_json_entry_begin(ts_json *j, const ts_bench_row *r, const char *bench, char prec, const char *where);
// The results entry's "xt_block" (cublasxt), "devices" (set-wide engines) and "warmup" members.
void ts_bench_json_common(const ts_bench *b, ts_json *j, const ts_bench_row *r);
// "alpha" and "beta": numbers, or [re, im] arrays for complex precisions.
void ts_bench_json_scalars(ts_json *j, const ts_bench_opts *o, int cplx);

// Test hook: adds 1e6 to the real part of element idx of C.
void ts_bench_corrupt(char prec, void *C, int64_t idx);

#endif
