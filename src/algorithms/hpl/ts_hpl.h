// ts_hpl.h: High Performance Linpack: HPL.dat input, the distributed LU solver and its check.
//
// Split in two parts that meet here:
//  - the front (ts_hpl_dat.c, ts_hpl_driver.c, faces/cli/cmd_hpl.c): reads HPL.dat or flags, runs
//    every combination, prints HPL 2.3's output, JSON, progress;
//  - the engine (ts_hpl_grid.c, ts_hpl_lu*.c, ...): one case = generate [A|b] with HPL's generator,
//    factor and solve over the P x Q grid (CPU or device), regenerate and check the residual.
#ifndef TS_HPL_H
#define TS_HPL_H

#include <stdint.h>
#include <stdio.h>

#define TS_HPL_MAX_PARAM 20
// Deepest lookahead the engine runs (HPL.dat DEPTH, --depth): d + 1 panel buffers (HPL_pdgesvK2's
// semantics); a deeper one is refused with its line rather than run shallower
#define TS_HPL_MAX_DEPTH 4

// HPL.dat, as HPL 2.3 reads it (testing/ptest/HPL_pdinfo.c): 31 lines, lists of at most 20.
typedef struct {
    char outfile[256];       // line 3 (first word)
    int device_out;          // line 4: 6 stdout, 7 stderr, else the file
    int nN; int64_t N[TS_HPL_MAX_PARAM];
    int nNB; int NB[TS_HPL_MAX_PARAM];
    int pmap;                // 0 row-major, 1 column-major process mapping
    int ngrid; int P[TS_HPL_MAX_PARAM]; int Q[TS_HPL_MAX_PARAM];
    double threshold;        // < 0: no check
    int npfact; int pfact[TS_HPL_MAX_PARAM];   // 0 left, 1 Crout, 2 right
    int nnbmin; int nbmin[TS_HPL_MAX_PARAM];
    int nndiv; int ndiv[TS_HPL_MAX_PARAM];
    int nrfact; int rfact[TS_HPL_MAX_PARAM];
    int nbcast; int bcast[TS_HPL_MAX_PARAM];   // 0 1rg 1 1rM 2 2rg 3 2rM 4 Lng 5 LnM
    int ndepth; int depth[TS_HPL_MAX_PARAM];
    int swap;                // 0 bin-exch 1 long 2 mix
    int swap_threshold;
    int l1_notrans;          // line 28: 0 transposed, 1 not transposed
    int u_notrans;           // line 29
    int equil;
    int align;
} ts_hpl_dat;

// One test case: a single combination of the lists above.
typedef struct {
    int64_t N;
    int NB;
    int P, Q;
    int pmap;
    double threshold;
    int pfact, nbmin, ndiv, rfact, bcast, depth;
    int swap, swap_threshold, l1_notrans, u_notrans, equil, align;
} ts_hpl_case;

// Where the factorization runs.
typedef enum {
    TS_HPL_EXEC_AUTO = 0, // device when the rank has one, else CPU
    TS_HPL_EXEC_CPU,      // host memory, CPU BLAS
    TS_HPL_EXEC_DEVICE,   // matrix resident in device memory (CUDA or simulated device)
    TS_HPL_EXEC_OOC,      // host-resident matrix, updates streamed through devices (out-of-core)
} ts_hpl_exec;

// Which code factors the panels (HPL's pdfact).
typedef enum {
    TS_HPL_PANEL_AUTO = 0,   // panel_on_device decides, then TESSERA_HPL_PANEL, then the default
    TS_HPL_PANEL_CPU,        // the host (HPL's recursive panel with the CPU BLAS; any P)
    TS_HPL_PANEL_TESSERA,    // our device panel: HPL's recursive RFACT/PFACT/NBMIN/NDIV on the
                             // device (cooperative CUDA kernel for the base case; P = 1)
    TS_HPL_PANEL_CUSOLVER,   // cuSOLVER dgetrf on the device (P = 1; on simulated devices its
                             // stand-in, a recursive LAPACK-style LU)
    TS_HPL_PANEL_HYBRID,     // one process row on the device path: panels of at least
                             // TESSERA_HPL_PANEL_TAIL rows (default 24 NB) with an update beside
                             // them (not the first, not at depth 0) by our device panel on a
                             // few SMs (right-looking leaves of 16 columns, Crout recursion, NDIV 2,
                             // at most 16 leaf blocks), the shorter ones by cuSOLVER; elsewhere as
                             // CUSOLVER. The default on CUDA devices.
} ts_hpl_panel_engine;

typedef struct {
    ts_hpl_exec exec;
    int panel_on_device;     // -1 auto, 0 CPU panel factorization, 1 device (cuSOLVER's getrf
                             // unless `panel` names the engine)
    ts_hpl_panel_engine panel; // AUTO: as panel_on_device says; with -1 there, TESSERA_HPL_PANEL
                             // (tessera|cusolver|cpu), else cuSOLVER on CUDA devices and the host
                             // elsewhere. Device engines need the device path and P = 1.
    int seed;                // generator seed (HPL: 100)
    int warmup;              // run a small warm-up factorization first (device)
    const char *engine;      // GEMM engine name of the device path's update and U GEMMs ("auto",
                             // "cublas", "tessera"; ts_hpl_gemm_set changes it on a context)
    // progress: called on rank 0 after each panel (may be NULL)
    void (*progress)(void *ctx, int64_t cols_done, int64_t N, double elapsed_s, double flops_done);
    void *progress_ctx;
    int record_iterations;   // keep per-iteration timings (for JSON/plot)
} ts_hpl_opts;

// Per-iteration timing (seconds on rank 0's clock; max over ranks where stated).
typedef struct {
    int64_t col;             // first column of the panel
    double total;            // wall time of the iteration
    double fact, bcast, swap, update, idle;
    double trsm;             // the part of update spent in the TRSM of U and its copy into A (the
                             // rest is the GEMM); from stream stamps, 0 where the update ran on the host
} ts_hpl_iter;

// Per-rank phase sums (ts_hpl_result.rank_phases): the panel factorizations; the row swaps and the
// updates (U and the GEMM) on stream 0 (the rest of the matrix) and stream 1 (lookahead columns);
// the U part of all updates; stream 0's idle (the iterations' time in which it had nothing to run);
// the iterations' time on stream 0.
enum { TS_HPL_RANK_FACT, TS_HPL_RANK_SWAP0, TS_HPL_RANK_SWAP1, TS_HPL_RANK_UPD0, TS_HPL_RANK_UPD1,
       TS_HPL_RANK_TRSM, TS_HPL_RANK_IDLE0, TS_HPL_RANK_TOTAL, TS_HPL_RANK_NPH };
#define TS_HPL_MAX_RANK_PHASES 64

typedef struct {
    double time;             // HPL's time: max over ranks of the pdgesv wall time (fact + solve)
    double gflops;           // (2/3 N^3 + 3/2 N^2) / time / 1e9
    double resid;            // ||Ax-b||_oo / (eps (||A||_oo ||x||_oo + ||b||_oo) N)
    double norm_r, norm_A, norm_A1, norm_x, norm_x1, norm_b;
    double eps;
    int checked;             // 0 when threshold < 0 (no check)
    int passed;              // resid < threshold
    int info;                // 0, or the (1-based) column of a zero pivot
    int skipped;             // 1: not run (memory, illegal input); reason in `why`
    char why[256];
    char exec_used[32];      // "cpu", "device:cuda", "device:sim", "ooc"
    char engine_used[32];    // GEMM engine that ran
    double t_fact, t_bcast, t_swap, t_update, t_solve; // summed phase times (rank 0)
    ts_hpl_iter *iters; int n_iters; // when record_iterations (caller frees with ts_hpl_result_free)
    char start_time[32], end_time[32]; // HPL_pdgesv() start/end time (ctime-like, as HPL prints)
    char panel_used[16];     // panel engine that ran: "host", "tessera" (own device panel),
                             // "cusolver" (CUDA), "getrf-sim" (its stand-in on simulated devices),
                             // "hybrid" (ours for tall panels, cuSOLVER or its stand-in below)
    char bcast_used[16];     // panel broadcast that ran: "1rg" ... "LnM", "mpi", "none" (Q = 1)
    char swap_used[16];      // row swaps: "binexch", "long", "mix", "local" (P = 1), "local-rows" (the
                             // transposed layout), "local-fused"
                             // (P = 1 in one pass: the device default; TESSERA_HPL_SWAP)
    int depth;               // the lookahead depth that ran (the case's DEPTH, never replaced)
    char u_solve[16];        // how U = inv(L11) A12 was formed: "trsm", "inverse" (a GEMM with
                             // inv(L11)), or "folded" (not formed: inv(L11) folded into L, on the
                             // transposed layout when asked for; TESSERA_HPL_TRSM)
    char getrf[16];          // cuSOLVER's getrf behind a cusolver panel or the baseline: "dgetrf",
                             // "xgetrf" or "xgetrf-alg1" (TESSERA_LU_GETRF); "" otherwise
    int leaf_grid;           // our device panel's leaf kernel: blocks at most (0: one per SM;
                             // TESSERA_LU_LEAF_GRID; in the JSON with that panel only)
    int64_t panel_tail;      // hybrid panel: panels of fewer rows went to cuSOLVER
    int panels_own;          // hybrid panel: how many panels our device panel factored
    char layout[8];          // how [A|b] was stored: "col" (column-major), or "row" (transposed: row
                             // swaps as streaming copies; one process on a device, TESSERA_HPL_LAYOUT)
    // out-of-core runs (rank 0): update GEMMs streamed through the tile runtime and left to the
    // CPU BLAS, the flops streamed, the bytes the runtime copied to and from the devices
    int panel_high;          // device path: stream 1 (next panel, lookahead columns) at high priority
    // every rank's phase sums from its own stream stamps (seconds over the run; when iterations are
    // recorded and every rank had its stamps): TS_HPL_RANK_* per rank, the first n_rank_phases ranks
    // of the grid (grid order), with their place in it
    int n_rank_phases;
    double rank_phases[TS_HPL_MAX_RANK_PHASES][TS_HPL_RANK_NPH];
    int rank_grid[TS_HPL_MAX_RANK_PHASES][2]; // their process row and column
    int64_t ooc_gemms_tiles, ooc_gemms_cpu;
    double ooc_flops_tiles, ooc_bytes_h2d, ooc_bytes_d2h;
} ts_hpl_result;

// ---- front ----
// Reads HPL.dat. On error returns TS_ERR_PARSE (or TS_ERR_IO) with "FILE:LINE: message naming the
// value" recorded in ts_error.
int ts_hpl_dat_read(const char *path, ts_hpl_dat *d);
void ts_hpl_dat_default(ts_hpl_dat *d);        // HPL 2.3's default HPL.dat values
// Files in HPL.dat's shape for other benchmarks (HPL-MxP.dat): their lines 1-13 are HPL.dat's
// (titles, output file, device out, Ns, NBs, PMAP, grids, threshold), read into d (the rest of d
// keeps HPL's defaults) with the same checks and messages; `shape` says in an end-of-file message
// how long the format is ("HPL-MxP.dat has 15 lines"). `tail` (may be NULL) then reads the lines
// after 13 with ts_hpl_datfile_count / _words. Errors as ts_hpl_dat_read.
typedef struct ts_hpl_datfile ts_hpl_datfile;
int ts_hpl_dat_read_head(const char *path, const char *shape, ts_hpl_dat *d,
                         int (*tail)(ts_hpl_datfile *f, void *arg), void *arg);
int ts_hpl_datfile_count(ts_hpl_datfile *f, const char *name, int *n); // a count line, 1..20
// The next line's first n words (each at most 31 characters) into words.
int ts_hpl_datfile_words(ts_hpl_datfile *f, const char *name, int n, char (*words)[32]);
const char *ts_hpl_datfile_path(const ts_hpl_datfile *f);
int ts_hpl_datfile_line(const ts_hpl_datfile *f);    // the number of the line last read
// Prints the parameter echo exactly as HPL 2.3 does (banner, N, NB, PMAP, P, Q, PFACT, ...).
void ts_hpl_print_params(FILE *f, const ts_hpl_dat *d);
// The T/V string of HPL's result line ("WR11C2R4").
void ts_hpl_tv_string(const ts_hpl_case *c, char out[16]);

// ---- engine ----
typedef struct ts_hpl_ctx ts_hpl_ctx; // MPI communicator, devices, pools

// Collective over all ranks of the communicator (MPI_COMM_WORLD when MPI is on, one rank otherwise).
int ts_hpl_ctx_create(const ts_hpl_opts *o, ts_hpl_ctx **out);
// The TESSERA_HPL_* settings of the device path (TESSERA_HPL_TRSM, TESSERA_HPL_SWAP,
// TESSERA_HPL_PANEL_PRIORITY): 0, or TS_ERR_PARSE with the variable and its
// value in the error message, before any run.
int ts_hpl_env_check(void);
void ts_hpl_ctx_destroy(ts_hpl_ctx *c);
int ts_hpl_ctx_rank(const ts_hpl_ctx *c);
int ts_hpl_ctx_size(const ts_hpl_ctx *c);
// The devices this rank opened (NULL when none): for reports.
struct ts_devset *ts_hpl_ctx_devset(ts_hpl_ctx *c);
// Largest N whose matrix fits the memory this context would use for a P x Q grid (for sizing and
// for the "N does not fit" message), at `fraction` of the available memory, with the panel buffers
// of lookahead depth `depth` (d + 1 of them, at least 2).
int64_t ts_hpl_max_n(ts_hpl_ctx *c, int P, int Q, int NB, int depth, double fraction);
// Runs one case (collective). Ranks outside the P x Q grid idle until the end, as in HPL.
// Returns 0 (the result says passed/failed/skipped) or a negative ts_status for a runtime failure,
// agreed on by all ranks.
int ts_hpl_run(ts_hpl_ctx *c, const ts_hpl_case *hc, ts_hpl_result *r);
void ts_hpl_result_free(ts_hpl_result *r);
// 1 when every rank has a CUDA device (what the cuSOLVER baseline needs).
int ts_hpl_ctx_has_cuda(const ts_hpl_ctx *c);
// The cuSOLVER baseline of a case (collective; P = Q = 1, CUDA device): the same [A|b] as the HPL
// run (HPL's generator), factored by one cusolverDnDgetrf timed with CUDA events, then solved with
// its LU (pivots on b, two triangular solves) and checked with HPL's scaled residual. The result:
// time = the dgetrf seconds, gflops = 2/3 N^3 / time, t_solve, resid/passed/checked, info; skipped
// (with why) on another grid, without a CUDA device, or when memory does not suffice.
int ts_hpl_baseline_cusolver(ts_hpl_ctx *c, const ts_hpl_case *hc, ts_hpl_result *r);

// ---- driver (front): every combination in HPL's order, HPL 2.3's report, JSON, plot ----
// (ts_hpl_driver.c, ts_hpl_plot.c; used by faces/cli/cmd_hpl.c)

// Number of tests an HPL.dat describes: grids x Ns x NBs x DEPTHs x BCASTs x RFACTs x PFACTs x
// NBMINs x NDIVs.
int64_t ts_hpl_case_count(const ts_hpl_dat *d);
// Test number `index` (0-based) in HPL_pddriver's loop order: grids outermost, then N, NB, DEPTH,
// BCAST, RFACT, PFACT, NBMIN and NDIV innermost.
void ts_hpl_case_at(const ts_hpl_dat *d, int64_t index, ts_hpl_case *c);
// HPL 2.3 refuses a file whose largest grid needs more processes than are running ("Need at least
// %d processes for these tests"); returns 0 or TS_ERR_ARG with that message and the grid's lines.
int ts_hpl_check_grids(const ts_hpl_dat *d, int nranks);

// HPL's operation count 2/3 N^3 + 3/2 N^2 and its Gflops figure for a wall time.
double ts_hpl_flops(int64_t N);
double ts_hpl_gflops(int64_t N, double seconds);
// The T/V code with any buffer length (ts_hpl_tv_string is this with 16).
void ts_hpl_tv_format(const ts_hpl_case *c, char *out, size_t len);

// HPL 2.3's lines, byte for byte (without the trailing newline in the format_ functions):
//   "%s%12d %5d %5d %5d %18.2f    %19.4e" (T/V, N, NB, P, Q, time, Gflops), and when ngpus > 0
//   NVIDIA HPL's per-GPU rate after it: " ( %.4e)"; the other columns stay where HPL has them.
int ts_hpl_format_result(char *buf, size_t len, const ts_hpl_case *c, double seconds, double gflops,
                         int ngpus);
// The same line with a T/V string of the caller's (HPL-MxP's).
int ts_hpl_format_result_tv(char *buf, size_t len, const char *tv, int64_t N, int NB, int P, int Q,
                            double seconds, double gflops, int ngpus);
//   "||Ax-b||_oo/(eps*(||A||_oo*||x||_oo+||b||_oo)*N)= %16.8e ...... PASSED|FAILED"
int ts_hpl_format_residual(char *buf, size_t len, double resid, double threshold);
// HPL's rules between the blocks of its report.
#define TS_HPL_RULE_EQ "================================================================================"
#define TS_HPL_RULE_DASH "--------------------------------------------------------------------------------"
// The column header block ("====", "T/V  N  NB ...", "----").
void ts_hpl_print_header(FILE *f);
// One test as HPL_pdtest prints it after the header: result line, start/end time lines, then the
// residual block (with the norms when it failed) or HPL's skip message. ngpus as above.
void ts_hpl_print_test(FILE *f, const ts_hpl_case *c, const ts_hpl_result *r, double threshold,
                       int ngpus);

typedef struct {
    int kpass, kfail, kskip;  // as HPL counts them (kpass includes "completed without checking")
    int runtime_error;        // a ts_hpl_run failure stopped the loop (negative status, 0 = none)
} ts_hpl_tally;
// "Finished N tests with the following results: ... End of Tests." block.
void ts_hpl_print_summary(FILE *f, const ts_hpl_tally *t, double threshold);

// Results-schema JSON of a Linpack front (hpl, its cuSOLVER baseline, hpl-mxp): opens the entry of
// one timed solve of order N (seconds, TFLOP/s from gflops when time > 0, the residual against the
// threshold when checked) and writes its shape; precision is a one-letter code among the common
// fields ('d'), or 0 with precision_name written after them ("fp16"). The caller writes "extra"
// and ends the entry (ts_results_entry_end).
struct ts_json;
typedef struct {
    const char *bench, *engine, *where;
    char precision;
    const char *precision_name;
    int64_t N;
    double time, gflops;
    int checked;
    double resid, threshold;
} ts_hpl_json_entry;
void ts_hpl_json_entry_begin(struct ts_json *j, const ts_hpl_json_entry *e);

// HPL's output stream from lines 3-4: stdout (6), stderr (7) or the named file (TS_ERR_IO).
int ts_hpl_open_output(const ts_hpl_dat *d, FILE **out);
void ts_hpl_close_output(FILE *f); // closes only a file, never stdout/stderr

// Progress of one test on rank 0: percent of the flops, TFLOP/s so far, ETA. Pass
// ts_hpl_progress_cb and a ts_hpl_progress as ts_hpl_opts.progress / progress_ctx; the driver
// starts and finishes it around each test.
typedef struct {
    int enabled;
    int active;
    int64_t N;
    double total_flops;
    void *bar;                // ts_progress, owned by the driver
} ts_hpl_progress;
void ts_hpl_progress_cb(void *ctx, int64_t cols_done, int64_t N, double elapsed_s, double flops_done);
// The driver's steps around one test, for other drivers of the same progress (HPL-MxP): start a
// bar labelled `label` for total_flops (no-op unless enabled), stop it with the final rate (GFLOP/s,
// <= 0: none), release its memory at the end.
void ts_hpl_progress_start(ts_hpl_progress *p, const char *label, int64_t N, double total_flops);
void ts_hpl_progress_stop(ts_hpl_progress *p, double gflops);
void ts_hpl_progress_release(ts_hpl_progress *p);

// The DGEMM ceiling (ts_hpl_ceiling.c): each rank's GEMM engines held on HPL's update shape, in
// both forms the update takes: C -= A B (column-major layout) and C -= A B^T (the transposed
// layout reads L21 as B^T). CUDA: cuBLAS NN, cuBLAS NT, the own kernel NN; simulated devices:
// their one engine NN and NT.
#define TS_HPL_CEIL_ENGINES 4
typedef struct {
    int measured;             // 1 when every rank had a device and measured
    int64_t m, n, k;          // the shape held: C (m x n) -= A (m x k) op(B) (k x n)
    double seconds;           // per engine and form
    int nengines;
    struct {
        char name[16];        // "cublas", "tessera" (simulated devices: their one engine)
        char op[3];           // "NN" or "NT" (B transposed)
        double tflops;        // sustained (second half of the hold), the slowest rank's
        // energy over the same second half from NVML's counter (nvmlDeviceGetTotalEnergyConsumption),
        // when every rank's device has it (energy 1); otherwise energy 0 and the fields 0
        int energy;
        double joules;        // per GPU (the mean over ranks)
        double watts;         // average power per GPU (the mean over ranks)
        double j_per_tflop;   // all ranks' joules / all ranks' TFLOP (flops / 1e12) in that half
    } eng[TS_HPL_CEIL_ENGINES];
    char best[16];            // the engine of the ceiling
    char best_op[3];          // and its form
    double tflops_gpu;        // the best engine's sustained rate per GPU
    double tflops;            // tflops_gpu x ranks: the run's ceiling
} ts_hpl_ceiling;
// Collective over the ranks of ctx. Holds each engine for `seconds` on (m, n, k); a rank without a
// device leaves out->measured 0 (returns 0). Call before the matrix takes the device memory.
int ts_hpl_ceiling_measure(ts_hpl_ctx *ctx, int64_t m, int64_t n, int64_t k, double seconds, ts_hpl_ceiling *out);

// ---- the DGEMM engine of the device path (ts_hpl_gemm.c) ----
// How the engine of the trailing update and U GEMMs was chosen: the default of `auto` (cuBLAS on
// CUDA devices, ref/cpu by size on simulated ones), the fastest of the ceiling's sustained rates
// (the slowest rank's per engine, so every rank picks the same), or named by --gemm /
// TESSERA_HPL_GEMM.
typedef enum { TS_HPL_GEMM_DEFAULT = 0, TS_HPL_GEMM_MEASURED, TS_HPL_GEMM_FORCED } ts_hpl_gemm_choice;
const char *ts_hpl_gemm_choice_name(ts_hpl_gemm_choice c); // "default", "measured", "forced"
// --gemm's values: auto, cublas, tessera (the name's static copy in *engine); TS_ERR_ARG otherwise.
int ts_hpl_gemm_parse(const char *s, const char **engine);
// Whether this rank's device runs `engine` (not collective): one small DGEMM on it. 0, or
// TS_ERR_UNSUPPORTED with the reason (no device, an engine the device does not have), or the
// status of another failure.
int ts_hpl_gemm_probe(ts_hpl_ctx *ctx, const char *engine);
// Sets the engine of the context's later runs (any ts_engine name; TS_ERR_ARG when unknown).
int ts_hpl_gemm_set(ts_hpl_ctx *ctx, const char *engine);
const char *ts_hpl_gemm_get(const ts_hpl_ctx *ctx);
// The engine the ceiling measured fastest (its `best`), or NULL when it did not measure.
const char *ts_hpl_gemm_measured(const ts_hpl_ceiling *c);

typedef struct {
    FILE *out;                // HPL's report (used on rank 0 only); NULL: no report
    const char *json_path;    // results-schema JSON (rank 0), or NULL
    const char *plot_path;    // SVG of the per-iteration rate and time split, or NULL
    ts_hpl_progress *progress;// the progress_ctx given to ts_hpl_ctx_create, or NULL
    int print_params;         // print the banner and parameter echo first (1 as xhpl does)
    int baseline_cusolver;    // after each test that ran: ts_hpl_baseline_cusolver, one line
                              // "cuSOLVER dgetrf N=..." and a JSON entry (bench "lu")
    const ts_hpl_ceiling *ceiling; // measured: each result's JSON has extra.ceiling_tflops and
                              // extra.hpl_over_ceiling, the report a line "DGEMM ceiling <T/V>
                              // N=<N>: <ratio>x (...)" after the result; or NULL
    ts_hpl_gemm_choice gemm_choice; // how the GEMM engine was chosen: each device-path result gets a
                              // line "DGEMM engine <T/V> N=<N>: <engine> (<choice>)" and JSON
                              // extra.gemm_engine, extra.gemm_choice
} ts_hpl_drive_opts;
// Runs every test of `d` (collective over all ranks of ctx), printing HPL 2.3's report on rank 0.
// Returns 0 when the loop ran (the tally says passed/failed/skipped), TS_ERR_IO when the JSON or
// plot could not be written, or the negative status of a runtime failure (also in the tally).
int ts_hpl_drive(ts_hpl_ctx *ctx, const ts_hpl_dat *d, const ts_hpl_drive_opts *o, ts_hpl_tally *t);

// SVG (no dependencies): per-iteration TFLOP/s above, the stacked time split (fact, bcast, swap,
// update, idle) below. TS_ERR_ARG when the result has no iterations, TS_ERR_IO when unwritable.
int ts_hpl_plot_svg(const char *path, const ts_hpl_case *c, const ts_hpl_result *r);

#endif
