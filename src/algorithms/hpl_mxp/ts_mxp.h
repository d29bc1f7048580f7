// ts_mxp.h: HPL-MxP: mixed-precision LU without pivoting and FP64 iterative refinement, under HPL-MxP's rules.
//
// Shares HPL's context (MPI world, this rank's device: ts_hpl_ctx), its progress line, its result,
// residual and summary lines and its HPL.dat reader (ts_hpl.h); the engine here is its own:
//  - the matrix: HPL-MxP's reference generator (ts_rng.h: 64-bit LCG, A from seed 1, b from seed
//    2), diagonal set to the sum of |off-diagonal| of its row (row diagonal dominance);
//  - the LU: right-looking, blocks of NB, no pivoting; the matrix in FP32; the diagonal block
//    factored in FP32 and inverted, L21 = A21 inv(U11) and U12 = inv(L11) A12 as GEMMs and the
//    trailing update A22 -= L21 U12, every GEMM with 16-bit operands (FP16 or BF16) and FP32
//    accumulation (ts_mxp_kernels.h); FP8 (an extra, not list-eligible, 1 x 1 grids): the trailing
//    update's operands in E4M3, L21 and U12 each scaled by a power of two per panel, the panels'
//    GEMMs in FP16;
//  - the refinement: classic iterative refinement, r = b - A x in FP64 with A regenerated from the
//    generator, x += U^-1 L^-1 r with the FP32 factors, until HPL's scaled residual is below the
//    threshold (16), at most 50 corrections;
//  - credit: (2/3 N^3 + 3/2 N^2) / (LU + refinement seconds); generation is outside the time.
#ifndef TS_MXP_H
#define TS_MXP_H

#include <stdint.h>
#include <stdio.h>

#include "algorithms/hpl/ts_hpl.h"
#include "kernels/ts_mxp_kernels.h"

#define TS_MXP_MAX_ITER 50       // the rules' cap on refinement iterations
#define TS_MXP_THRESHOLD 16.0    // the rules' bound on the scaled residual
#define TS_MXP_DIVERGED 1e6      // the refinement stops when the residual grows this much over its best

typedef struct {
    int64_t N;
    int NB, P, Q, pmap;
    double threshold;
    ts_mxp_fmt fmt;
} ts_mxp_case;

typedef enum {
    TS_MXP_GEN_DOMINANT = 0, // the rules' generator: a_ii = sum_{j != i} |a_ij|
    TS_MXP_GEN_PLAIN,        // tests only: the generated diagonal kept (not diagonally dominant)
} ts_mxp_gen_kind;

typedef struct {
    ts_mxp_gen_kind gen;
    int max_iter;            // 0: TS_MXP_MAX_ITER
    int depth;               // look-ahead: -1 auto (1 on devices), 0 none, 1 (devices; the host runs 0)
    // progress on rank 0 after each block column of the LU (may be NULL), as ts_hpl_opts'
    void (*progress)(void *ctx, int64_t cols_done, int64_t N, double elapsed_s, double flops_done);
    void *progress_ctx;
    double *x_out;           // tests: the solution (N entries) on rank 0 after a refinement (may be NULL)
} ts_mxp_opts;

// Phases of the P x Q engine's refinement, timed on rank 0 (each ends where its device work is done;
// together they tile the refinement's time up to its last residual).
typedef enum {
    TS_MXP_PH_FIRST_FWD = 0, // the first solve's forward substitution (L, from b)
    TS_MXP_PH_FIRST_BACK,    // the first solve's back substitution (U)
    TS_MXP_PH_RESID_GEN,     // every residual's A x with A regenerated in FP64
    TS_MXP_PH_RESID_RED,     // every residual's reduction along the process rows, norms and check
    TS_MXP_PH_CORR_FWD,      // the corrections' forward substitutions
    TS_MXP_PH_CORR_BACK,     // the corrections' back substitutions
    TS_MXP_PH_UPDATE,        // x = 0 and every x += c
    TS_MXP_PH_CHECK,         // the LU's breakdown flag agreed over the grid (before the first solve)
    TS_MXP_PHASES
} ts_mxp_phase;
const char *ts_mxp_phase_name(ts_mxp_phase p); // "first_forward", ... (the JSON keys)

typedef struct {
    double time;             // LU + refinement seconds (the credited time)
    double gflops;           // (2/3 N^3 + 3/2 N^2) / time / 1e9
    double t_lu, t_ir, t_gen;// the LU, the refinement (with the first solve), the generation (not credited)
    double gflops_lu;        // the same flops over the LU seconds only
    double resid;            // ||Ax-b||_oo / (eps (||A||_oo ||x||_oo + ||b||_oo) N), eps = 2^-53
    double norm_r, norm_A, norm_x, norm_b, eps;
    int checked;             // a residual was computed
    int passed;              // resid < threshold within the iteration cap
    int iterations;          // corrections after the first solve (<= max_iter)
    double history[TS_MXP_MAX_ITER + 1]; // scaled residual before each correction and at the end
    int n_history;
    int64_t breakdown;       // 1-based column where the LU without pivoting met a zero or non-finite pivot
    int stop;                // how the refinement ended: 0 converged, 1 the iteration cap, 2 diverged or
                             // not finite, 3 not run (breakdown)
    int depth;               // the look-ahead depth that ran
    int phases;              // 1: phase_s holds the refinement's phases (the P x Q engine)
    double phase_s[TS_MXP_PHASES];
    int skipped;
    char why[256];
    char exec_used[32];      // "cpu", "device:cuda", "device:sim"
    char engine_used[32];    // "cublas", "cpu", "sim"
    char start_time[32], end_time[32];
} ts_mxp_result;

// Runs one case (collective over the context's ranks: the 1 x 1 grid on rank 0, a P x Q grid on
// the first P Q ranks (ts_mxp_grid.c); the others idle).
// Returns 0 (the result says passed, failed, broke down or skipped) or a negative ts_status for a
// runtime failure, agreed by all ranks.
int ts_mxp_run(ts_hpl_ctx *c, const ts_mxp_opts *o, const ts_mxp_case *mc, ts_mxp_result *r);
// Largest N (a multiple of NB) whose run fits this rank's memory at `fraction` of it (device memory
// on the device path), -1 when unknown.
int64_t ts_mxp_max_n(ts_hpl_ctx *c, int NB, double fraction);
// Collective over the context's ranks: the largest N (a multiple of NB) whose share on rank (0, 0)
// of a P x Q grid (the largest share) fits every rank's memory at `fraction`; -1 when unknown.
int64_t ts_mxp_max_n_grid(ts_hpl_ctx *c, int NB, int P, int Q, double fraction);
// Bytes one run of order N needs on its device (or host, CPU path); _fmt: with precision fmt
// (FP8 adds its E4M3 panels; ts_mxp_bytes is the 16-bit formats').
double ts_mxp_bytes(int64_t N, int NB, int device);
double ts_mxp_bytes_fmt(int64_t N, int NB, int device, ts_mxp_fmt fmt);
// Bytes the rank with the largest share, (0, 0), needs on a P x Q grid (P = Q = 1: ts_mxp_bytes).
double ts_mxp_bytes_grid(int64_t N, int NB, int P, int Q, int device);
// The power-of-two scale of L21 and inv(U11) in 16 bits: 2^ceil(log2(N/4)), 1 for N <= 4 (their
// entries are about 4/N with this generator's diagonal of about N/4).
float ts_mxp_scale(int64_t N);

// ---- front: HPL-MxP.dat, the report, JSON ----
#define TS_MXP_MAX_PREC 4
typedef struct {
    ts_hpl_dat head;         // lines 1-13 as HPL.dat's
    int nprec;
    ts_mxp_fmt prec[TS_MXP_MAX_PREC];
} ts_mxp_dat;
// Reads HPL-MxP.dat: HPL.dat's lines 1-13, then line 14 the number of precisions and line 15 the
// precisions (fp16, bf16). Errors as ts_hpl_dat_read (file:line: message naming the value).
int ts_mxp_dat_read(const char *path, ts_mxp_dat *d);
int ts_mxp_fmt_parse(const char *s, ts_mxp_fmt *f); // "fp16" | "bf16" | "fp8"; TS_ERR_ARG otherwise
// 1 for the formats HPL-MxP's list accepts (16 bits: FP16, BF16); 0 for FP8 (the lowest precision
// allowed is 16-bit floating point for results after the June 2025 list).
int ts_mxp_fmt_list_eligible(ts_mxp_fmt f);
#define TS_MXP_FP8_NOTE "FP8 is not eligible for the HPL-MxP list (16-bit lowest since June 2025)"
// The T/V code of the result line: W, R or C (process mapping), "MX", FP16, BF16 or FP8: "WRMXFP16".
void ts_mxp_tv(const ts_mxp_case *c, char out[16]);
// Banner and parameter echo, as HPL's (N, NB, PMAP, P, Q, precision, threshold, iteration cap).
void ts_mxp_print_params(FILE *f, const ts_mxp_dat *d, ts_mxp_gen_kind gen);
// One test: the result line (HPL's columns), start/end times, the residual line (PASSED/FAILED)
// with the refinement's and the LU's figures, or the breakdown / skip message.
void ts_mxp_print_test(FILE *f, const ts_mxp_case *c, const ts_mxp_result *r, int ngpus);

// ---- plot (ts_mxp_plot.c) ----
// The LU's progress after a block column: columns done, seconds since the LU began, flops so far.
typedef struct {
    int64_t col;
    double t, flops;
} ts_mxp_lu_point;
// SVG of one run: the LU's rate per block column and its running rate against time (the npt
// points), and the refinement's scaled residual per step on a log axis with the bound dashed.
int ts_mxp_plot_svg(const char *path, const ts_mxp_case *c, const ts_mxp_result *r, const ts_mxp_lu_point *pt,
                    int npt);

typedef struct {
    FILE *out;
    const char *json_path;
    ts_hpl_progress *progress;
    ts_mxp_gen_kind gen;
    int depth;               // as ts_mxp_opts
    const char *plot_path;   // SVG of each test (ts_mxp_plot_svg; "FILE-k.svg" for several), or NULL
} ts_mxp_drive_opts;
// Every combination of the file (grids x N x NB x precision) on all ranks; the report on rank 0.
// Tally as HPL's: passed, failed (residual, or the LU broke down), skipped.
int ts_mxp_drive(ts_hpl_ctx *ctx, const ts_mxp_dat *d, const ts_mxp_drive_opts *o, ts_hpl_tally *t);

#endif
