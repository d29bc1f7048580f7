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

typedef struct {
    ts_hpl_exec exec;
    int panel_on_device;     // -1 auto (measured), 0 CPU panel factorization, 1 device
    int seed;                // generator seed (HPL: 100)
    int warmup;              // run a small warm-up factorization first (device)
    const char *engine;      // GEMM engine name for the device path ("auto", "cublas", ...)
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
} ts_hpl_iter;

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
} ts_hpl_result;

// ---- front ----
// Reads HPL.dat. On error returns TS_ERR_PARSE (or TS_ERR_IO) with "FILE:LINE: message naming the
// value" recorded in ts_error.
int ts_hpl_dat_read(const char *path, ts_hpl_dat *d);
void ts_hpl_dat_default(ts_hpl_dat *d);        // HPL 2.3's default HPL.dat values
// Prints the parameter echo exactly as HPL 2.3 does (banner, N, NB, PMAP, P, Q, PFACT, ...).
void ts_hpl_print_params(FILE *f, const ts_hpl_dat *d);
// The T/V string of HPL's result line ("WR11C2R4").
void ts_hpl_tv_string(const ts_hpl_case *c, char out[16]);

// ---- engine ----
typedef struct ts_hpl_ctx ts_hpl_ctx; // MPI communicator, devices, pools

// Collective over all ranks of the communicator (MPI_COMM_WORLD when MPI is on, one rank otherwise).
int ts_hpl_ctx_create(const ts_hpl_opts *o, ts_hpl_ctx **out);
void ts_hpl_ctx_destroy(ts_hpl_ctx *c);
int ts_hpl_ctx_rank(const ts_hpl_ctx *c);
int ts_hpl_ctx_size(const ts_hpl_ctx *c);
// Largest N whose matrix fits the memory this context would use for a P x Q grid (for sizing and
// for the "N does not fit" message), at `fraction` of the available memory.
int64_t ts_hpl_max_n(ts_hpl_ctx *c, int P, int Q, int NB, double fraction);
// Runs one case (collective). Ranks outside the P x Q grid idle until the end, as in HPL.
// Returns 0 (the result says passed/failed/skipped) or a negative ts_status for a runtime failure,
// agreed on by all ranks.
int ts_hpl_run(ts_hpl_ctx *c, const ts_hpl_case *hc, ts_hpl_result *r);
void ts_hpl_result_free(ts_hpl_result *r);

#endif
