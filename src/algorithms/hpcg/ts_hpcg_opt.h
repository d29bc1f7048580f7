// ts_hpcg_opt.h: HPCG's optimized problem (JPL multicolouring, permuted sliced ELL, every level) and its implementation, on the host or a device.
//
// One code path serves the CPU engine and the device engines: the problem is built and solved by
// the kernels of ts_hpcg_opt_kernels.h, run through an executor that is either the host (memory from
// malloc, each kernel's CPU version called directly) or a device stream (memory from the device
// arena, kernels enqueued: the CUDA versions on GPUs, the CPU versions on simulated devices).
#ifndef TS_HPCG_OPT_H
#define TS_HPCG_OPT_H

#include "algorithms/hpcg/ts_hpcg.h"
#include "algorithms/hpcg/ts_hpcg_opt_kernels.h"
#include "device/ts_device.h"
#include "ts_config.h"

// ---- executor ----
typedef struct {
    ts_devset *set; // NULL: the host
    ts_device *dev;
    ts_stream *st;
    int cuda;       // a CUDA device
} ts_hpcg_exec;

void ts_hpcg_exec_host(ts_hpcg_exec *X);
int ts_hpcg_exec_device(ts_hpcg_exec *X, ts_devset *set, ts_device *dev); // creates a stream
void ts_hpcg_exec_fini(ts_hpcg_exec *X);
int ts_hpcg_xalloc(const ts_hpcg_exec *X, size_t bytes, void **p);
void ts_hpcg_xfree(const ts_hpcg_exec *X, void *p);
int ts_hpcg_xcopy(const ts_hpcg_exec *X, ts_copy_kind kind, void *dst, const void *src, size_t bytes);
int ts_hpcg_xmemset(const ts_hpcg_exec *X, void *p, int byte, size_t bytes);
int ts_hpcg_xrun(const ts_hpcg_exec *X, const ts_kernel *k);
#if TS_HAVE_CUDA
#define TS_HPCG_XK_CUDA(name) ts_hpcg_xk_##name##_cuda
#else
#define TS_HPCG_XK_CUDA(name) NULL
#endif
// Runs kernel `name` of ts_hpcg_opt_kernels.h with the argument struct a.
#define TS_HPCG_XRUN(X, name, a)                                                                   \
    ts_hpcg_xrun((X), &(ts_kernel){#name, 0.0, ts_hpcg_xk_##name##_cpu, TS_HPCG_XK_CUDA(name), &(a),   \
                                   sizeof(a)})
int ts_hpcg_xsync(const ts_hpcg_exec *X);
// Host memory for transfers (pinned on devices).
int ts_hpcg_xhalloc(const ts_hpcg_exec *X, size_t bytes, void **p);
void ts_hpcg_xhfree(const ts_hpcg_exec *X, void *p);

// ---- the optimized problem ----
typedef struct ts_hpcg_olevel ts_hpcg_olevel;
struct ts_hpcg_olevel {
    ts_hpcg_geom g;
    int32_t nrow, ncol;
    int64_t gnrow, gnnz;
    // setup: the natural-order 27-slot ELL (freed by the optimization)
    int32_t *ecol;
    double *eval;
    // optimization: colours, permutation, the sliced ELL (executor memory)
    int ncolors, nblk;               // nblk = 2 * ncolors: blocks 2c, 2c + 1 of colour c
    int32_t *color, *perm;           // natural row -> colour, -> permuted row
    int32_t *bkey;                   // natural row -> block (during the optimization only)
    ts_hpcg_cblk blk[TS_HPCG_MAX_BLOCKS]; // the blocks (host copy of xblk); ts_hpcg_opt_kernels.h
    ts_hpcg_cblk *xblk;
    int32_t *lcol, *ucol;
    double *lval, *uval, *diag, *diag_saved;
    int64_t nlower, nupper;          // stored entries, padding included
    // halo: the plan (host), our rows to send (host: natural; executor: permuted), buffers
    ts_hpcg_halo_plan halo;
    int32_t *send_nat, *xsend;
    double *xsbuf, *hsbuf, *hrbuf;   // packed values (executor); host staging (devices)
    // multigrid: the coarse level, restriction pairs (coarse->nrow), its rhs and solution, the
    // forward sweep's upper sums
    ts_hpcg_olevel *coarse;
    int32_t *fr, *cq;
    int32_t nr_inner;                // pairs whose fine row has no halo columns: they come first
    int rblk;                        // >= 0: fr[k] = blk[rblk].r0 + k for k < nr_inner (ts_hpcg_xk_restrict1)
    double *rc, *xc, *t;
    size_t bytes;                    // executor memory of this level after the optimization
};

// The V-cycle from r into z captured as a graph (TESSERA_HPCG_GRAPH=1): a few are kept, one per
// (r, z) pair MG is called with (CG's every iteration, TestSymmetry's two; the least recently used
// is captured over), and destroyed with the problem.
#define TS_HPCG_MG_GRAPHS 4
typedef struct {
    const double *r;
    double *z;
    ts_graph *g;
    unsigned long used; // the call that used it last (0: empty)
} ts_hpcg_mg_graph;

typedef struct {
    ts_hpcg_exec X;
    const ts_comm *comm;
    ts_hpcg_olevel *A;
    double *b, *x, *xexact, *r, *z, *p, *Ap; // fine level, permuted order (executor memory)
    double *dot_out, *dot_part, *dot_host;   // DDOT result, partial sums, host copy
    double *nat;                             // staging of natural-order vectors (executor)
    int32_t *scratch;                        // colouring counters and statistics (executor)
    double *hnat;                            // host staging (pinned on devices)
    size_t bytes;
    // Halo exchange device to device (NCCL) instead of through host staging: TESSERA_HPCG_NCCL on
    // on CUDA GPUs, one per rank; halo says which path runs ("host", "nccl", "host (NCCL: why)").
    struct ts_dcomm *dcomm;
    char halo[160];
    double t_join;      // seconds spent creating dcomm (not problem setup: the analogue of MPI_Init)
    int probe_nohalo;   // ts_hpcg_opt_probe: halo exchanges skipped (timing only)
    int halo_blocks;    // rows with halo columns in blocks of their own (TESSERA_HPCG_HALO_BLOCKS, default 1)
    // The halo exchange overlapped with the rows that do not need it (TESSERA_HPCG_OVERLAP=1; off by
    // default, measured slower on two H200s): SpMV, the smoother from x and the restriction run their rows without
    // halo columns first and the halo blocks once the exchange is in. With NCCL the exchange runs on
    // st2 (forked from and joined back to the executor's stream by events, also inside a graph);
    // on the host path the exchange completes first and only the order of the launches changes.
    int split;
    // The halo exchanged again between the smoother's forward and backward sweeps
    // (TESSERA_HPCG_MIDX=1): the backward sweep reads the neighbours' forward-swept values instead
    // of the frozen ones. The smoother stays symmetric: its step is
    // (D + U)^-1 (D - C) (D + L)^-1 with C the coupling between the ranks (symmetric), where the
    // reference's is (D + U)^-1 D (D + L)^-1; one more exchange per smoother and level.
    int midx;
    ts_stream *st2;
    ts_event *ev_fork, *ev_join;
    int halo_pending;   // an exchange in flight on st2 that the executor's stream has not joined
    // The V-cycle launched as captured graphs instead of kernel by kernel: TESSERA_HPCG_GRAPH=1 on
    // every rank, a device executor, and a halo exchange that can be captured (one rank, or NCCL;
    // the host-staged exchange syncs and calls MPI inside the V-cycle). graph says it is on.
    int graph;
    ts_hpcg_mg_graph mgg[TS_HPCG_MG_GRAPHS];
    unsigned long mg_calls;  // V-cycles launched as graphs
    long mg_captures;        // graphs captured
    // Fixed colour orders of the smoother per level (bench/hpcg_orders: the search for them):
    // order[l][k] is the JPL colour swept k-th on level l. norder[l] 0: the default (the searched
    // order on power-of-two grids, else by coarse points; the coarsest level: JPL's order); -1: by
    // coarse points.
    int norder[TS_HPCG_MG_LEVELS];
    int order[TS_HPCG_MG_LEVELS][TS_HPCG_MAX_COLORS];
} ts_hpcg_opt;

// Setup (the rules' problem generation, timed as setup): on every level the halo plan from the
// geometry and the natural-order matrix, on the fine level b and xexact; comm must outlive O.
int ts_hpcg_opt_setup(const ts_comm *comm, const ts_hpcg_geom *g, int levels, const ts_hpcg_exec *X,
                      ts_hpcg_opt **out);
// OptimizeProblem (timed as the optimization phase): JPL colours, the permutation, the sliced ELL
// and the diagonal, restriction pairs and halo send lists in permuted rows, b and xexact permuted;
// the natural-order matrices are freed.
int ts_hpcg_opt_optimize(ts_hpcg_opt *O);
void ts_hpcg_opt_destroy(ts_hpcg_opt *O);
// The implementation (ts_hpcg_ops) on the optimized problem.
void ts_hpcg_opt_impl(ts_hpcg_opt *O, ts_hpcg_impl *I);

// Kernels of one level (vectors in executor memory, permuted order; x has ncol values).
// The halo exchange of x: begin packs and starts it (on st2 when it overlaps: then the halo part of
// x may be read only after end), end joins it; ts_hpcg_opt_halo does both.
int ts_hpcg_opt_halo_begin(ts_hpcg_opt *O, ts_hpcg_olevel *L, double *x);
int ts_hpcg_opt_halo_end(ts_hpcg_opt *O);
int ts_hpcg_opt_halo(ts_hpcg_opt *O, ts_hpcg_olevel *L, double *x);
int ts_hpcg_opt_spmv(ts_hpcg_opt *O, ts_hpcg_olevel *L, double *x, double *y);
// The residual at the coarse points of level L restricted, pairs [k0, k1) (L->fr, L->cq).
int ts_hpcg_opt_restrict(ts_hpcg_opt *O, ts_hpcg_olevel *L, const double *r, double *x, int32_t k0, int32_t k1);
// One colour c of a Gauss-Seidel sweep or product (`mode`, ts_hpcg_opt_kernels.h) in one launch:
// both its blocks (part 0), only the rows without halo columns (part 1), or only its halo block
// (part 2). Shared by SYMGS and the split SpMV.
int ts_hpcg_opt_sweep_part(ts_hpcg_opt *O, ts_hpcg_olevel *L, int c, int part, int mode, const double *r, double *x,
                           double *t);
// One SYMGS in colour order: from x = 0 (zero_x: x is set to 0 first, no halo exchange needed), or
// from the given x (halo exchanged first).
int ts_hpcg_opt_symgs(ts_hpcg_opt *O, ts_hpcg_olevel *L, const double *r, double *x, int zero_x);
int ts_hpcg_opt_mg(ts_hpcg_opt *O, ts_hpcg_olevel *L, const double *r, double *x);
// The whole V-cycle (fine level) from r into z as a graph: launches the one captured for (r, z),
// capturing it first if there is none (every rank at the same call; collective when O->dcomm).
int ts_hpcg_opt_mg_graph(ts_hpcg_opt *O, const double *r, double *z);
int ts_hpcg_opt_dot(ts_hpcg_opt *O, int32_t n, const double *x, const double *y, double *out, double *t_allreduce);

// Where the time of a run goes, measured after the timed sets (the vectors' contents are
// overwritten): per level one halo exchange alone, and SpMV and the V-cycle kernel by kernel with
// and without their halo exchanges (the latter computes garbage at the boundary: timing only), and
// one DDOT with its allreduce. Each the mean over reps calls, the slowest rank's; all ranks call it.
int ts_hpcg_opt_probe(ts_hpcg_opt *O, int reps, ts_hpcg_probe *p);

// Bytes the implementation's kernels move per CG iteration (its own traffic model: matrix entries
// at 12 bytes, vectors streamed once per kernel, neighbour values of x read once per colour block),
// summed over ranks: SpMV, MG, DDOT, WAXPBY.
void ts_hpcg_opt_bytes(const ts_hpcg_opt *O, double *spmv, double *mg, double *ddot, double *waxpby);

#endif
