// ts_hpcg.h: HPCG 3.1 on the CPU: geometry, the 27-point problem, halo, multigrid, kernels, CG, tests, driver.
#ifndef TS_HPCG_H
#define TS_HPCG_H

#include <stdint.h>
#include <stdio.h>

#include "comm/ts_comm.h"

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
    int nx, ny, nz;    // local points (nz: zl or zu when the z layers have two values)
    int pz, zl, zu;    // layers ipz < pz have nz = zl, the others zu (pz = 0: one nz, zl = zu = nz)
    int64_t gnx, gny, gnz; // global points
    int64_t gix0, giy0, giz0; // global coordinates of this rank's first point
} ts_hpcg_geom;

// The halo plan of one level: neighbour k (rank neigh[k], in increasing rank order) sends
// recv_count[k] values into x[nrow + recv_off[k]...], in the order of their global ids; we send it
// send_count[k] values, those of our rows send_idx[send_off[k]...] (increasing). A rank has at most
// 26 neighbours (faces, edges, corners); dir[k] is the stencil slot of neighbour k's direction.
#define TS_HPCG_MAX_NEIGH 26
typedef struct {
    int nneigh;
    int neigh[TS_HPCG_MAX_NEIGH], dir[TS_HPCG_MAX_NEIGH];
    int32_t recv_count[TS_HPCG_MAX_NEIGH], recv_off[TS_HPCG_MAX_NEIGH];
    int32_t send_count[TS_HPCG_MAX_NEIGH], send_off[TS_HPCG_MAX_NEIGH + 1];
    int32_t nsend, nrecv;
} ts_hpcg_halo_plan;

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
    ts_hpcg_halo_plan halo;
    int32_t *send_idx;   // halo.nsend rows
    double *send_buf;
    // Multigrid (NULL on the coarsest level): coarse row i is fine row f2c[i].
    ts_hpcg_level *coarse;
    int32_t *f2c;
    double *Axf, *rc, *xc; // fine-size residual work, coarse rhs, coarse solution (ncol of coarse)
    size_t bytes;          // memory held by this level
};

// The problem with its vectors (sized ncol of the fine level) and the communicator.
typedef struct {
    ts_comm comm;
    ts_hpcg_level *A; // fine level; A->coarse ... for the hierarchy
    double *b, *x, *xexact;
    double *r, *z, *p, *Ap; // CG work
    double *diag_saved;     // the diagonal while TestCG has scaled it
    size_t bytes;           // total memory of the problem
} ts_hpcg_problem;

// ---- geometry ----
// Most cubic process grid for `size` ranks (npx*npy*npz = size), as the reference's
// ComputeOptimalShapeXYZ aims: the three factors as equal as possible.
void ts_hpcg_proc_grid(int size, int *npx, int *npy, int *npz);
// Fills g for this rank; npx/npy/npz 0 = chosen. TS_ERR_ARG when the grid does not match size.
int ts_hpcg_geom_init(ts_hpcg_geom *g, int size, int rank, int nx, int ny, int nz, int npx, int npy,
                      int npz);
// The same with HPCG 3.1's two nz values along z (--pz --zl --zu): process layers ipz < pz get
// nz = zl, the others zu; zl or zu 0 means nz. pz = 0: one nz. TS_ERR_ARG when pz >= npz.
int ts_hpcg_geom_init_z(ts_hpcg_geom *g, int size, int rank, int nx, int ny, int nz, int npx, int npy,
                        int npz, int pz, int zl, int zu);
// The next coarser level's geometry (every local and global dimension halved).
void ts_hpcg_geom_halve(ts_hpcg_geom *g);
// The local nz for messages: "16", or "(24 below layer 1, then 8)" with two values.
void ts_hpcg_geom_nz_text(const ts_hpcg_geom *g, char *buf, size_t len);
int64_t ts_hpcg_global_row(const ts_hpcg_geom *g, int64_t gix, int64_t giy, int64_t giz);
// Checks the rules on the local dimensions and the process grid (divisible by 8 for 3 coarsenings,
// aspect ratios >= 0.125, rows within 32-bit local indices). Message names value and limit.
int ts_hpcg_check_geom(const ts_hpcg_geom *g);
// Bytes one rank needs for this local grid (matrix + hierarchy + CG vectors), an estimate.
double ts_hpcg_bytes_estimate(int nx, int ny, int nz);
// Bytes the optimized problem takes on top (its natural-order matrix while it is optimized, the
// sliced ELL, the vectors), an estimate.
double ts_hpcg_opt_bytes_estimate(int nx, int ny, int nz);

// ---- problem ----
// Generates the 27-point problem on `levels` levels (1..4) with halos. comm must live as long.
int ts_hpcg_problem_create(const ts_comm *comm, const ts_hpcg_geom *g, int levels,
                           ts_hpcg_problem **out);
void ts_hpcg_problem_destroy(ts_hpcg_problem *p);

// The halo plan of this rank's box from the geometry alone (what the generator's halo setup
// finds from the matrix: the tests compare them); *send_idx gets halo.nsend rows (free it).
int ts_hpcg_halo_plan_geom(const ts_hpcg_geom *g, ts_hpcg_halo_plan *h, int32_t **send_idx);
// Exchanges packed halo values with the neighbours (nonblocking MPI): sbuf holds h->nsend values
// in send order, rbuf receives h->nrecv values.
int ts_hpcg_halo_exchange(const ts_comm *c, const ts_hpcg_halo_plan *h, const double *sbuf, double *rbuf);

// ---- reference kernels: CSR, SYMGS in natural order ----
int ts_hpcg_halo(const ts_comm *c, ts_hpcg_level *A, double *x);
int ts_hpcg_spmv(const ts_comm *c, ts_hpcg_level *A, double *x, double *y);
int ts_hpcg_symgs(const ts_comm *c, ts_hpcg_level *A, const double *r, double *x);
int ts_hpcg_mg(const ts_comm *c, ts_hpcg_level *A, const double *r, double *x);
int ts_hpcg_dot(const ts_comm *c, int32_t n, const double *x, const double *y, double *out,
                double *t_allreduce);
void ts_hpcg_waxpby(int32_t n, double alpha, const double *x, double beta, const double *y, double *w);

// ---- implementations: the kernels CG and the validation tests call ----
// An implementation keeps the fine-level vectors in its own memory (host or device) and row order
// (natural, or permuted by colour); the vectors below are in that space. set/get convert from and
// to natural-order host arrays of nrow values.
typedef struct ts_hpcg_impl ts_hpcg_impl;
typedef struct {
    const char *name;
    int (*spmv)(ts_hpcg_impl *I, double *x, double *y);        // y = A x (exchanges x's halo)
    int (*mg)(ts_hpcg_impl *I, const double *r, double *z);    // z = M^-1 r, one V-cycle
    int (*dot)(ts_hpcg_impl *I, const double *x, const double *y, double *out, double *t_allreduce);
    int (*waxpby)(ts_hpcg_impl *I, double alpha, const double *x, double beta, const double *y, double *w);
    int (*vnew)(ts_hpcg_impl *I, double **v);                  // ncol values, zero
    void (*vfree)(ts_hpcg_impl *I, double *v);
    int (*zero)(ts_hpcg_impl *I, double *v);                   // all ncol values
    int (*set)(ts_hpcg_impl *I, double *v, const double *nat);
    int (*get)(ts_hpcg_impl *I, double *nat, const double *v);
    // Multiplies the diagonal by nat[i] for natural row i (TestCG); NULL restores the original.
    int (*scale_diag)(ts_hpcg_impl *I, const double *nat);
    int (*fence)(ts_hpcg_impl *I);                             // queued work finished
} ts_hpcg_ops;

struct ts_hpcg_impl {
    const ts_hpcg_ops *ops;
    const ts_comm *comm;
    int32_t nrow, ncol;
    double *b, *x, *xexact, *r, *z, *p, *Ap; // fine-level vectors (b, xexact as generated)
    void *state;
};

// Fills I: its operations and state, the communicator, the fine level's sizes and its vectors
// v = {b, x, xexact, r, z, p, Ap} (the order of the members).
void ts_hpcg_impl_init(ts_hpcg_impl *I, const ts_hpcg_ops *ops, void *state, const ts_comm *comm, int32_t nrow,
                       int32_t ncol, double *const v[7]);
// The reference implementation on P (CSR, SYMGS in natural order, host memory).
void ts_hpcg_impl_ref(ts_hpcg_problem *P, ts_hpcg_impl *I);

// ---- CG and the validation tests ----
typedef struct {
    int niters;
    double normr, normr0;
} ts_hpcg_cg_result;
// Preconditioned (precond=1) or plain CG from the given x (vectors of I); stops after max_iters or
// when normr/normr0 <= tol. times[TS_HPCG_NTIMES] accumulates the kernel times.
int ts_hpcg_cg(ts_hpcg_impl *I, const double *b, double *x, int max_iters, double tol, int precond,
               double *times, ts_hpcg_cg_result *res);

typedef struct {
    int count_fail;
    int niters_max_no_prec, niters_max_prec;
    int expected_no_prec, expected_prec;
} ts_hpcg_testcg;
// TestCG on I; g is the rank's geometry (global row ids of the diagonal scaling).
int ts_hpcg_test_cg(ts_hpcg_impl *I, const ts_hpcg_geom *g, ts_hpcg_testcg *out);

typedef struct {
    int count_fail;
    double depsym_spmv, depsym_mg;
    double residual; // max |A*xexact - b| after 2 SpMVs
} ts_hpcg_testsym;
int ts_hpcg_test_symmetry(ts_hpcg_impl *I, ts_hpcg_testsym *out);

typedef struct {
    double mean, variance;
    int pass;
} ts_hpcg_testnorms;
void ts_hpcg_test_norms(const double *values, int n, ts_hpcg_testnorms *out);

// ---- the benchmark ----
// Engines of the optimized phases (the reference CG always runs the reference kernels):
//   REF     the reference kernels (no optimization);
//   CPU     the multicoloured sliced-ELL kernels on the host (OpenMP);
//   DEVICE  the same kernels on this rank's device: a CUDA GPU, or a simulated device;
//   CUDA    DEVICE, and the device must be a CUDA GPU;
//   AUTO    DEVICE when every rank has a device, else CPU.
typedef enum { TS_HPCG_ENGINE_AUTO = 0, TS_HPCG_ENGINE_REF, TS_HPCG_ENGINE_CPU, TS_HPCG_ENGINE_DEVICE,
               TS_HPCG_ENGINE_CUDA } ts_hpcg_engine;
// Parses "auto", "ref", "cpu", "device", "cuda"; -1 for anything else.
int ts_hpcg_engine_parse(const char *s);

typedef struct {
    int nx, ny, nz;    // local grid
    int npx, npy, npz; // 0 = chosen
    int pz, zl, zu;    // two nz values along z (ts_hpcg_geom_init_z); pz = 0: nz everywhere
    double rt;         // seconds of CG sets; 0 = the reference's quick path
    int quiet;         // no progress lines
    const char *report_dir; // where HPCG-Benchmark_3.1_<date>.txt goes (NULL: current dir)
    ts_hpcg_engine engine;
} ts_hpcg_opts;

// Flop and byte counts of the benchmark phase, as ReportResults counts them.
typedef struct {
    double ddot, waxpby, spmv, mg, total;       // raw flops
    double total_ref;                            // total scaled by ref/opt iterations (the penalty)
    double rd_ddot, wr_ddot, rd_waxpby, wr_waxpby, rd_spmv, wr_spmv, rd_mg, wr_mg; // bytes
} ts_hpcg_counts;

#define TS_HPCG_PROBE_COLORS 16 // colours of the fine level the probe times one by one (8 on this stencil)
// Where the time of a run goes (ts_hpcg_opt_probe; on one rank the figures without exchanges equal
// the others), in microseconds and milliseconds.
typedef struct {
    int levels;
    double halo_us[TS_HPCG_MG_LEVELS];
    double spmv_ms, spmv_nohalo_ms, mg_ms, mg_nohalo_ms, dot_us;
    double mg_graph_ms;      // the V-cycle launched as a graph (0: graphs off)
    double mg_nohalo_ms_min; // the fastest rank's: the spread the ranks wait for at each exchange and DDOT
    // The V-cycle's parts per level, without exchanges: the pre-smoother (from x = 0), the
    // post-smoother, the residual with restriction plus the prolongation; and on the fine level
    // each colour's forward sweep alone with its rows and halo-block rows (this rank's: rank 0's).
    double pre_ms[TS_HPCG_MG_LEVELS], post_ms[TS_HPCG_MG_LEVELS], rp_ms[TS_HPCG_MG_LEVELS];
    int ncolors;
    double fwd_us[TS_HPCG_PROBE_COLORS];
    int rows[TS_HPCG_PROBE_COLORS], hrows[TS_HPCG_PROBE_COLORS], width[TS_HPCG_PROBE_COLORS], hwidth[TS_HPCG_PROBE_COLORS];
} ts_hpcg_probe;

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
    double opt_bytes;                            // of it, the optimized problem (summed)
    char engine[16];                             // "ref", "cpu", "cuda", "sim"
    char device[96];                             // device name (device engines)
    int ncolors;                                 // colours of the fine level (optimized engines)
    char halo[160];                              // halo path of the optimized engines: "none" (one
                                                 // rank), "host", "nccl", "host (NCCL: why not)"
    int mg_graph;                                // the V-cycle ran as captured graphs (TESSERA_HPCG_GRAPH=1)
    int ref_given;                               // TESSERA_HPCG_REF_DROP: the reference CG not run, its drop
                                                 // given (never an official result)
    int smoother_midx;                           // TESSERA_HPCG_MIDX=1 on several ranks: the halo exchanged
                                                 // between the sweeps too (not the reference's smoother:
                                                 // never an official result)
    double comm_init_s;                          // creating the device communicator (not setup)
    ts_hpcg_probe probe;                         // multi-rank optimized runs (levels 0: not run)
    // Achieved bandwidth: bytes the engine's kernels move per phase (its own model), per second,
    // and the device-to-device copy bandwidth measured in the same run (0 when not measured).
    double xgbs_spmv, xgbs_mg, xgbs_ddot, xgbs_waxpby, xgbs_total, copy_gbs;
    int valid;
    char reason[256];                            // why INVALID
    char report_path[512];                       // rank 0
    int omp_threads;
} ts_hpcg_result;

// Flop/byte accounting of ReportResults for `sets` sets of `opt_iters` iterations.
void ts_hpcg_count(const ts_hpcg_problem *P, int sets, int opt_iters, ts_hpcg_counts *c);
// OpenMP threads of this rank: without OMP_NUM_THREADS, the node's cores divided among the ranks
// on it (collective); *threads gets the result.
int ts_hpcg_share_threads(const ts_comm *comm, int *threads);
// Runs every phase; all ranks return the same status and (on rank 0, complete) result.
int ts_hpcg_run(const ts_comm *comm, const ts_hpcg_opts *o, ts_hpcg_result *res);
// Writes the HPCG 3.1 key=value report (rank 0); sets res->report_path.
int ts_hpcg_write_report(const ts_hpcg_opts *o, ts_hpcg_result *res, const ts_hpcg_problem *P);

#endif
