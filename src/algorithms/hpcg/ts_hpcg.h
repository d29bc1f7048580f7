// ts_hpcg.h: HPCG 3.1 on the CPU: geometry, the 27-point problem, halo, multigrid, kernels, CG, tests, driver.
#ifndef TS_HPCG_H
#define TS_HPCG_H

#include <stdint.h>
#include <stdio.h>

#include "algorithms/hpl/ts_hpl_comm.h"

// Fixed by the HPCG rules (reference 3.1, src/main.cpp).
#define TS_HPCG_MG_LEVELS 4       // fine grid + 3 coarse grids
#define TS_HPCG_REF_ITERS 50      // reference CG iterations (and the floor of the optimized count)
#define TS_HPCG_OPT_MAX_ITERS 500 // optimized CG may use up to 10x the reference iterations
#define TS_HPCG_OFFICIAL_TIME 1800.0
#define TS_HPCG_MIN_ASPECT 0.125  // min/max of the local and the process grid dimensions

// Timing buckets, as the reference numbers them (times[] of main.cpp).
enum {
    TS_HPCG_T_TOTAL = 0, TS_HPCG_T_DDOT = 1, TS_HPCG_T_WAXPBY = 2, TS_HPCG_T_SPMV = 3,
    TS_HPCG_T_ALLREDUCE = 4, TS_HPCG_T_MG = 5, TS_HPCG_T_HALO = 6, TS_HPCG_T_OPT = 7,
    TS_HPCG_T_REF = 8, TS_HPCG_T_SETUP = 9, TS_HPCG_NTIMES = 10
};

// One rank's box of the global grid.
typedef struct {
    int size, rank;
    int npx, npy, npz; // process grid
    int ipx, ipy, ipz; // this rank's place: rank = ipz*npx*npy + ipy*npx + ipx
    int nx, ny, nz;    // local points
    int64_t gnx, gny, gnz; // global points
} ts_hpcg_geom;

// One multigrid level: the local rows in CSR with local column ids (owned rows first, then the
// halo columns grouped by neighbour rank), global counts, the halo plan and the links to the
// next coarser level.
typedef struct ts_hpcg_level ts_hpcg_level;
struct ts_hpcg_level {
    ts_hpcg_geom g;
    int32_t nrow, ncol;  // local rows; rows + halo columns
    int64_t nnz;         // local nonzeros (64-bit: 27 * rows overflows 32 bits past ~79.5 M rows)
    int64_t gnrow, gnnz; // global rows and nonzeros
    int64_t *rowptr;     // nrow + 1
    int32_t *col;        // nnz
    double *val;         // nnz
    int64_t *diag;       // nrow: position of the diagonal in val
    int64_t *l2g;        // nrow: global row id
    // Halo: neighbour k sends recv_count[k] values into x[nrow + recv_off[k]...]; we send it
    // send_count[k] values x[send_idx[send_off[k]...]].
    int nneigh;
    int *neigh;
    int32_t *recv_count, *recv_off, *send_count, *send_off, *send_idx;
    int32_t nsend;
    double *send_buf;
    // Multigrid (NULL on the coarsest level): coarse row i is fine row f2c[i].
    ts_hpcg_level *coarse;
    int32_t *f2c;
    double *Axf, *rc, *xc; // fine-size residual work, coarse rhs, coarse solution (ncol of coarse)
    size_t bytes;          // memory held by this level
};

// The problem with its vectors (sized ncol of the fine level) and the communicator.
typedef struct {
    ts_hcomm comm;
    ts_hpcg_level *A; // fine level; A->coarse ... for the hierarchy
    double *b, *x, *xexact;
    double *r, *z, *p, *Ap; // CG work
    size_t bytes;           // total memory of the problem
} ts_hpcg_problem;

// ---- geometry ----
// Most cubic process grid for `size` ranks (npx*npy*npz = size), as the reference's
// ComputeOptimalShapeXYZ aims: the three factors as equal as possible.
void ts_hpcg_proc_grid(int size, int *npx, int *npy, int *npz);
// Fills g for this rank; npx/npy/npz 0 = chosen. TS_ERR_ARG when the grid does not match size.
int ts_hpcg_geom_init(ts_hpcg_geom *g, int size, int rank, int nx, int ny, int nz, int npx, int npy,
                      int npz);
int64_t ts_hpcg_global_row(const ts_hpcg_geom *g, int64_t gix, int64_t giy, int64_t giz);
// Checks the rules on the local dimensions and the process grid (divisible by 8 for 3 coarsenings,
// aspect ratios >= 0.125, rows within 32-bit local indices). Message names value and limit.
int ts_hpcg_check_geom(const ts_hpcg_geom *g);
// Bytes one rank needs for this local grid (matrix + hierarchy + CG vectors), an estimate.
double ts_hpcg_bytes_estimate(int nx, int ny, int nz);

// ---- problem ----
// Generates the 27-point problem on `levels` levels (1..4) with halos. comm must live as long.
int ts_hpcg_problem_create(const ts_hcomm *comm, const ts_hpcg_geom *g, int levels,
                           ts_hpcg_problem **out);
void ts_hpcg_problem_destroy(ts_hpcg_problem *p);

// ---- kernels (times may be NULL; otherwise buckets TS_HPCG_T_* are accumulated) ----
int ts_hpcg_halo(const ts_hcomm *c, ts_hpcg_level *A, double *x);
int ts_hpcg_spmv(const ts_hcomm *c, ts_hpcg_level *A, double *x, double *y);
int ts_hpcg_symgs(const ts_hcomm *c, ts_hpcg_level *A, const double *r, double *x);
int ts_hpcg_mg(const ts_hcomm *c, ts_hpcg_level *A, const double *r, double *x);
int ts_hpcg_dot(const ts_hcomm *c, int32_t n, const double *x, const double *y, double *out,
                double *t_allreduce);
void ts_hpcg_waxpby(int32_t n, double alpha, const double *x, double beta, const double *y, double *w);

// ---- CG and the validation tests ----
typedef struct {
    int niters;
    double normr, normr0;
} ts_hpcg_cg_result;
// Preconditioned (precond=1) or plain CG from the given x; stops after max_iters or when
// normr/normr0 <= tol. times[TS_HPCG_NTIMES] accumulates the kernel times.
int ts_hpcg_cg(ts_hpcg_problem *P, const double *b, double *x, int max_iters, double tol, int precond,
               double *times, ts_hpcg_cg_result *res);

typedef struct {
    int count_fail;
    int niters_max_no_prec, niters_max_prec;
    int expected_no_prec, expected_prec;
} ts_hpcg_testcg;
int ts_hpcg_test_cg(ts_hpcg_problem *P, ts_hpcg_testcg *out);

typedef struct {
    int count_fail;
    double depsym_spmv, depsym_mg;
    double residual; // max |A*xexact - b| after 2 SpMVs
} ts_hpcg_testsym;
int ts_hpcg_test_symmetry(ts_hpcg_problem *P, ts_hpcg_testsym *out);

typedef struct {
    double mean, variance;
    int pass;
} ts_hpcg_testnorms;
void ts_hpcg_test_norms(const double *values, int n, ts_hpcg_testnorms *out);

// ---- the benchmark ----
typedef struct {
    int nx, ny, nz;    // local grid
    int npx, npy, npz; // 0 = chosen
    double rt;         // seconds of CG sets; 0 = the reference's quick path
    int quiet;         // no progress lines
    const char *report_dir; // where HPCG-Benchmark_3.1_<date>.txt goes (NULL: current dir)
} ts_hpcg_opts;

// Flop and byte counts of the benchmark phase, as ReportResults counts them.
typedef struct {
    double ddot, waxpby, spmv, mg, total;       // raw flops
    double total_ref;                            // total scaled by ref/opt iterations (the penalty)
    double rd_ddot, wr_ddot, rd_waxpby, wr_waxpby, rd_spmv, wr_spmv, rd_mg, wr_mg; // bytes
} ts_hpcg_counts;

typedef struct {
    ts_hpcg_geom g;
    int64_t gnrow, gnnz;
    double times[TS_HPCG_NTIMES];
    int cg_sets, ref_iters, opt_iters;
    double ref_tolerance, opt_worst_time;
    int tolerance_failures;
    ts_hpcg_testcg testcg;
    ts_hpcg_testsym testsym;
    ts_hpcg_testnorms testnorms;
    ts_hpcg_counts counts;
    double rating, rating24;                     // GFLOP/s (penalised, with overheads)
    double gflops_ddot, gflops_waxpby, gflops_spmv, gflops_mg, gflops_raw;
    double gbs_ddot, gbs_waxpby, gbs_spmv, gbs_mg, gbs_total;
    double t4min, t4max, t4avg;
    double mem_bytes;                            // summed over ranks
    int valid;
    char reason[256];                            // why INVALID
    char report_path[512];                       // rank 0
    int omp_threads;
} ts_hpcg_result;

// Flop/byte accounting of ReportResults for `sets` sets of `opt_iters` iterations.
void ts_hpcg_count(const ts_hpcg_problem *P, int sets, int opt_iters, ts_hpcg_counts *c);
// Runs every phase; all ranks return the same status and (on rank 0, complete) result.
int ts_hpcg_run(const ts_hcomm *comm, const ts_hpcg_opts *o, ts_hpcg_result *res);
// Writes the HPCG 3.1 key=value report (rank 0); sets res->report_path.
int ts_hpcg_write_report(const ts_hpcg_opts *o, ts_hpcg_result *res, const ts_hpcg_problem *P);

#endif
