// ts_hpl_internal.h: the HPL engine's internal types (context, run state, panel, execution backend).
#ifndef TS_HPL_INTERNAL_H
#define TS_HPL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "algorithms/hpl/ts_hpl.h"
#include "comm/ts_comm.h"
#include "core/ts_pool.h"
#include "device/ts_device.h"
#include "kernels/ts_kernels.h"

// ---- context ----
struct ts_hpl_ctx {
    ts_hpl_opts opts;
    ts_comm world;
    int local_rank, local_size;  // node-local (device choice)
    ts_devset *devs;             // NULL when no device backend opened
    ts_device *dev;              // this rank's device, or NULL
    int dev_ok;                  // 1 when every rank has a device (device path possible)
    ts_pool *pool;               // host threads for generation and the check
    // Test hooks (ts_hpl_test.h): change generated elements, or x before the check.
    double (*elem_hook)(int64_t i, int64_t j, double v, void *arg);
    void *elem_hook_arg;
    void (*x_hook)(double *x, int64_t n, void *arg);
    void *x_hook_arg;
};

// ---- the pivot search's reduction (ts_hpl_pivot.c; HPL_pdmxswp) ----
// Each rank of the process column c offers a record
//   [0] |value| (-1 when it has no candidate), [1] global row, [2] 1 if it owns the current top
//   row, [3 .. 3+w) the candidate row, [3+w .. 3+2w) the current top row (when [2] is 1).
// After the call every rank holds the largest |value| (ties: smallest global row) with its row,
// and the top row from its owner. w = panel width.
int ts_hpl_pivot(const ts_comm *c, double *rec, int w);
#define TS_HPL_PIVOT_LEN(w) (3 + 2 * (w))

// Host memory this process can still use, in bytes: MemAvailable, else the free pages; 0 when
// neither is known (ts_hpl_engine.c; HPL's and HPL-MxP's sizing).
size_t ts_hpl_host_available(void);

// A leading dimension for m rows in execution memory: a multiple of 8 doubles (TMA and vector loads
// need 16-byte aligned columns; an odd one sends cuBLAS's GEMM to a slow kernel), never a multiple
// of 512 (columns off the same cache sets).
static inline int64_t ts_hpl_pad_ld(int64_t m) {
    int64_t ld = (m + 7) / 8 * 8;
    if (ld < 8) ld = 8;
    if (ld % 512 == 0) ld += 8;
    return ld;
}

// ---- block-cyclic index maps (ts_hpl_grid.c); source process 0 ----
int64_t ts_hpl_numroc(int64_t n, int64_t nb, int iproc, int nprocs);
// Local indices on iproc whose global index is < g.
int64_t ts_hpl_nbefore(int64_t g, int64_t nb, int iproc, int nprocs);
int ts_hpl_owner(int64_t g, int64_t nb, int nprocs);
int64_t ts_hpl_g2l(int64_t g, int64_t nb, int nprocs);
int64_t ts_hpl_l2g(int64_t l, int64_t nb, int iproc, int nprocs);

// ---- panel ----
#define TS_HPL_NSTREAM 2
#define TS_HPL_MAX_NB 8192
// Panel buffers: the lookahead depth d needs d + 1 (the d pending panels and the one being
// factored); depth 0 keeps two (the next panel's buffer is free while the update reads the last)
#define TS_HPL_NPANBUF (TS_HPL_MAX_DEPTH + 1)
static inline int ts_hpl_nbuf(int depth) { return depth + 1 > 2 ? depth + 1 : 2; }
// Event slots of the factorization loop (ts_hpl_lu.c): EV_LOAD0 + b the panel in buffer b is
// loaded (stream 1); EV_USED0 + b stream 0's last update that read buffer b is done; EV_S0 the last
// work on stream 0.
#define TS_HPL_EV_LOAD0 0
#define TS_HPL_EV_USED0 TS_HPL_NPANBUF
#define TS_HPL_EV_S0 (2 * TS_HPL_NPANBUF)
#define TS_HPL_NEV (2 * TS_HPL_NPANBUF + 1)
typedef struct {
    int64_t k;              // panel index; -1 when unused
    int64_t j;              // first global column (and row of the diagonal block)
    int jb;                 // width
    int curr;               // process row holding rows j..j+jb-1
    int root;               // process column holding the panel
    int64_t lr0, lr1;       // first local row >= j, >= j+jb
    int64_t mL;             // local rows below the diagonal block
    int64_t ldw;            // jb + mL
    int64_t pc;             // local column of j on the root column
    // host message: W (ldw x jb: the diagonal block L11\U11 on top, then the local L rows),
    // then jb pivots (global rows, as doubles), then info.
    double *buf;
    size_t cap;             // doubles allocated
    int64_t len;            // doubles in the message
    double *W;
    int64_t ipiv[TS_HPL_MAX_NB];
    int info;               // 1-based column of the first zero pivot in this panel, 0 if none
    ts_comm_req sreq[4];      // pending sends of the broadcast
    int nsreq;
    // row-swap plan (ts_hpl_laswp.c)
    int64_t ns;             // distinct rows involved
    int64_t npack;          // own rows among them
    int64_t nown;           // own rows below the diagonal block that change
    int64_t *plan;          // host: pack[npack] ub[jb] ab[nown] al[nown] uid[jb] ab0[nown]
    int64_t *cnt, *dsp;     // per process row: rows in gather order (counts, displacements)
    int64_t *rcnt, *rdsp;   // per process row: changed rows below the diagonal block
    int64_t *back;          // curr only (SWAP 0): gather-order row of each returned row
    // execution copies (device memory on the device path, aliases on the CPU path)
    double *xW;             // the panel as the update reads it: xbuf, or (device panel) in A
    int64_t xld;
    double *xbuf;           // execution copy of W
    int64_t *xplan;
    int *xpiv;              // device panel factorization: pivots and info (execution memory)
    int *hpiv;              // and their host copy
    int dev_fact;           // 1: factored in execution memory, xW points into A
    int loaded;
    double *xlinv;          // execution memory, NB x NB: inv(L11) of the loaded panel (trsm_inv);
                            // transposed layout: then inv(L11)^T at xlinv + NB * NB
    int inv_ready;          // 1: xlinv holds this panel's inverse (trsm_inv, every process row)
} ts_hpl_panel;

// [A|b] transposed by default where the path allows it (ts_hpl_state.trans; TESSERA_HPL_LAYOUT)
#define TS_HPL_TRANS_DEFAULT 1
// The hybrid panel (TS_HPL_PANEL_HYBRID): our device panel factors the panels of at least
// TAIL_NB x NB rows with at most LEAF_GRID leaf blocks, its right-looking leaves LEAF columns wide
// (Crout recursion, NDIV 2), cuSOLVER the shorter ones: measured on one H200 at N = 116736, NB 1024
// (bench/notes/hpl.md, "A panel on a few SMs"): leaves on 16 SMs slow the update less than
// cuSOLVER's getrf over the whole GPU while the update is long, and lose once it is not.
#define TS_HPL_HYBRID_LEAF_GRID 16
#define TS_HPL_HYBRID_TAIL_NB 24
// Several process rows: the gathered panels (the column's whole height on one device, beside an
// update of the local rows only) by ours from 48 NB rows: on four H200s, 2 x 2 at N = 229376, 48.28
// TFLOP/s a GPU against 47.99 with 24 NB and 47.59 with cuSOLVER's panel for all (call 63)
#define TS_HPL_HYBRID_TAIL_NB_GATHER 48
#define TS_HPL_HYBRID_LEAF 16

// ---- execution backend: where the local matrix lives and who computes on it ----
typedef struct ts_hpl_state ts_hpl_state;
typedef struct {
    const char *name;
    int is_device;
    int (*init)(ts_hpl_state *s);
    void (*fini)(ts_hpl_state *s);
    int (*xmalloc)(ts_hpl_state *s, size_t bytes, void **p);
    void (*xfree)(ts_hpl_state *s, void *p);
    // host staging memory (pinned on devices)
    int (*halloc)(ts_hpl_state *s, size_t bytes, void **p);
    void (*hfree)(ts_hpl_state *s, void *p);
    // m x n column-major copies between host and execution memory (asynchronous on stream st)
    int (*to_host)(ts_hpl_state *s, int st, double *h, int64_t ldh, const double *x, int64_t ldx,
                   int64_t m, int64_t n);
    int (*to_x)(ts_hpl_state *s, int st, double *x, int64_t ldx, const double *h, int64_t ldh,
                int64_t m, int64_t n);
    int (*x_copy)(ts_hpl_state *s, int st, double *dst, int64_t ldd, const double *src,
                  int64_t lds, int64_t m, int64_t n);
    int (*bytes_to_x)(ts_hpl_state *s, int st, void *x, const void *h, size_t bytes);
    int (*bytes_to_host)(ts_hpl_state *s, int st, void *h, const void *x, size_t bytes);
    // LU of an m x n panel in execution memory (LAPACK dgetrf's contract; ipiv and info in
    // execution memory) by s->panel_kind: cuSOLVER, or our recursive panel with the case's PFACT,
    // RFACT, NBMIN and NDIV; NULL when panels cannot be factored there
    int (*getrf)(ts_hpl_state *s, int st, int64_t m, int64_t n, double *A, int64_t lda, int *ipiv,
                 int *info);
    // buf (row-major n x nc) <- rows idx[0..n) of A; and A rows aidx <- buf rows bidx
    int (*pack_rows)(ts_hpl_state *s, int st, const double *A, int64_t lda, const int64_t *idx,
                     int64_t n, int64_t nc, double *buf);
    int (*unpack_rows)(ts_hpl_state *s, int st, const double *buf, const int64_t *bidx,
                       int64_t n, int64_t nc, double *A, int64_t lda, const int64_t *aidx);
    // B = L^-1 B, L unit lower m x m
    int (*trsm_llnu)(ts_hpl_state *s, int st, int64_t m, int64_t n, const double *L, int64_t ldl,
                     double *B, int64_t ldb);
    // C = alpha A B + beta C
    int (*gemm_nn)(ts_hpl_state *s, int st, int64_t m, int64_t n, int64_t k, double alpha,
                   const double *A, int64_t lda, const double *B, int64_t ldb, double beta,
                   double *C, int64_t ldc);
    int (*sync)(ts_hpl_state *s, int st);
    // ev = slot 0..TS_HPL_NEV-1: record on st; make st wait for it; wait on the host
    int (*record)(ts_hpl_state *s, int ev, int st);
    int (*wait)(ts_hpl_state *s, int st, int ev);
    int (*ev_sync)(ts_hpl_state *s, int ev);
    // Timing stamps for the per-iteration phase split: stamps_reset makes room for n stamps (and
    // forgets the old ones); stamp records one on stream st (a device event, or the host clock on
    // the CPU path) and returns its id, or -1 when out of room; stamp_diff gives the seconds from
    // stamp a to stamp b once both completed (0 when either is -1).
    int (*stamps_reset)(ts_hpl_state *s, int n);
    int (*stamp)(ts_hpl_state *s, int st);
    double (*stamp_diff)(ts_hpl_state *s, int a, int b);
    // One process row: U's rows and A's changed rows from the swap plan in one pass
    // (ts_lu_swap_rows' contract); NULL where the backend has none (pack_rows and two unpack_rows).
    int (*swap_rows)(ts_hpl_state *s, int st, double *A, int64_t lda, const int64_t *pk, int64_t npack,
                     const int64_t *ub, int64_t jb, double *U, int64_t ldu, const int64_t *al,
                     const int64_t *ab, int64_t nown, int64_t nc);
    // One process (1 x 1): U x = y where the factored matrix lives, y being column N of A
    // (overwritten with x), x into s->xsol; NULL where the backend solves by ts_hpl_solve's
    // blocks through the host.
    int (*solve_local)(ts_hpl_state *s);
    // The transposed layout (s->trans): the swaps of one process row on A^T (ts_lu_swap_rows_t's
    // contract) and dst (n x m) = src (m x n) transposed; NULL where the backend has only the
    // column-major layout.
    int (*swap_rows_t)(ts_hpl_state *s, int st, double *At, int64_t ldt, const int64_t *pk, const int64_t *ub,
                       int64_t jb, double *Ut, int64_t ldut, const int64_t *al, const int64_t *ab,
                       int64_t nown, int64_t nc);
    int (*transpose)(ts_hpl_state *s, int st, int64_t m, int64_t n, const double *src, int64_t lds,
                     double *dst, int64_t ldd);
    // C = alpha A B^T + beta C (transposed layout: the update C^T -= U^T L21^T and the folded
    // inverse inv(L11)^T L21^T, L21 read in the factored panel's buffer); NULL where the backend
    // has none (no transposed layout there).
    int (*gemm_nt)(ts_hpl_state *s, int st, int64_t m, int64_t n, int64_t k, double alpha,
                   const double *A, int64_t lda, const double *B, int64_t ldb, double beta,
                   double *C, int64_t ldc);
    // The transposed layout on several process rows: rows of A^T (columns of the column-major
    // storage, nc values each) between buffers, ts_lu_copy_cols' contract: column didx[e] (e when
    // didx is NULL) of D <- column sidx[e] of S; NULL where the backend has none.
    int (*copy_cols)(ts_hpl_state *s, int st, const double *S, int64_t lds, const int64_t *sidx, int64_t n,
                     int64_t nc, double *D, int64_t ldd, const int64_t *didx);
} ts_hpl_xops;

extern const ts_hpl_xops ts_hpl_xops_cpu;
// The host clock's stamps of the CPU executor, which the out-of-core one shares: (re)sized to n and
// emptied; the seconds between two (0 when either is missing).
// m x n doubles from src (leading dimension lds) to dst (ldd) in host memory (memmove: may overlap).
void ts_hpl_host_copy2d(double *dst, int64_t ldd, const double *src, int64_t lds, int64_t m, int64_t n);
int ts_hpl_host_stamps_reset(ts_hpl_state *s, int n);
double ts_hpl_host_stamp_diff(ts_hpl_state *s, int a, int b);
extern const ts_hpl_xops ts_hpl_xops_dev;
extern const ts_hpl_xops ts_hpl_xops_ooc;  // host matrix, GEMMs through the tile runtime

// ---- one run ----
struct ts_hpl_state {
    ts_hpl_ctx *ctx;
    const ts_hpl_case *hc;
    ts_hpl_result *r;
    ts_comm grid, row, col;
    int myrow, mycol, P, Q;
    int64_t N, NB;
    int64_t mp, nq, lda;        // local [A|b]: mp rows, nq columns (of N+1)
    int trans;                  // 1: A holds [A|b] transposed (column-major nq x mp, lda >= nq):
                                // element (r, c) at A[c + r * lda], a row of [A|b] contiguous, so
                                // that row swaps stream (device path with device or gathered panels;
                                // TESSERA_HPL_LAYOUT)
    const ts_hpl_xops *x;
    void *xs;                   // backend state
    double *A;                  // execution memory
    double *U;                  // execution memory, NB x nq (ldu = NB); transposed layout: nq x NB (ldut)
    int64_t ldut;               // U^T's leading dimension in the transposed layout: ts_hpl_pad_ld(nq)
    double *xscr[TS_HPL_NSTREAM];   // execution scratch for row swaps
    double *hsend[TS_HPL_NSTREAM], *hrecv[TS_HPL_NSTREAM]; // host staging for swaps
    int64_t scr_cols[TS_HPL_NSTREAM];
    ts_hpl_panel pan[TS_HPL_NPANBUF];
    int nbuf;                   // panel buffers in use: ts_hpl_nbuf(depth)
    int depth;                  // lookahead depth run (HPL.dat DEPTH, 0..TS_HPL_MAX_DEPTH)
    int panel_dev;              // 1: panels factored in execution memory (one process row)
    int panel_gather;           // 1: several process rows, panels gathered on the diagonal block's
                                // device, factored there and scattered back (needs nccl_col)
    int gather_wanted;          // 1: panel_gather will be tried (decided after the allocation)
    double *xgat, *xgst;        // its buffers (execution memory): the gathered panel (N x NB, then
                                // NB x NB for L11), the staging of the parts (N x NB)
    int trsm_inv;               // 1: U = inv(L11) A12 by one GEMM (inv(L11) once per panel): the
                                // owner row straight into A's rows, the others into the swap
                                // scratch; instead of DTRSM and a copy
    double *xident;             // execution memory, NB x NB: the identity (trsm_inv)
    int fold;                   // 1 (transposed layout, TESSERA_HPL_TRSM=fold, off by default):
                                // inv(L11) folded into L, L21 <- L21 inv(L11) with the panel's
                                // factorization (stream 1), so that U stays U0 = L11 U (the swapped
                                // rows, no GEMM before the update) and the solve applies inv(L11)
                                // per block
    int swap_fused;             // 1: one process row's swaps by x->swap_rows in one pass (the
                                // device default; TESSERA_HPL_SWAP=fused|split)
    int panel_prio;             // 1: stream 1 (next panel) runs at high priority (device path)
    int nccl;                   // 1: panels broadcast device to device (NCCL) along the process row
    int nccl_col;               // 1: row swaps device to device (NCCL) along the process column;
                                // 2: the same path, exchange through the host (test hook)
    ts_hpl_panel_engine panel_kind; // the engine that factors the panels (never AUTO)
    int leaf_grid;              // our panel's leaf kernel: blocks at most, 0 one per SM
                                // (TESSERA_LU_LEAF_GRID)
    int64_t panel_tail;         // hybrid: panels of fewer rows go to cuSOLVER (TESSERA_HPL_PANEL_TAIL)
    int panels_own;             // hybrid: panels our device panel factored (this rank)
    int info;
    int err;                    // first failure (sticky), agreed at checkpoints
    char bcast_used[16], swap_used[16];
    // timings (this rank)
    double t_fact, t_bcast, t_swap, t_update;
    double t_iter_fact, t_iter_bcast, t_iter_swap, t_iter_update;
    double *hstamp;             // host clock stamps (CPU path)
    int nstamp, cap_stamp;
    struct ts_hpl_marks *marks; // stamps of the iteration being issued (ts_hpl_lu.c), or NULL
    // solve
    double *xsol;               // host, N: the solution (replicated after the solve)
};

// Records the first failure (keeps communicating until the next checkpoint).
static inline int ts_hpl_fail(ts_hpl_state *s, int rc) {
    if (rc < 0 && s->err == 0) s->err = rc;
    return rc;
}

// ---- steps ----
int ts_hpl_matgen(ts_hpl_state *s);                       // local [A|b] into execution memory
// Local block columns [lb0, lb1) of the rank (myrow, mycol) into host dst (ld ldd), in parallel.
void ts_hpl_matgen_host(ts_hpl_ctx *c, uint32_t seed, int64_t N, int64_t NB, int P, int Q,
                        int myrow, int mycol, int64_t lb0, int64_t lb1, double *dst, int64_t ldd);
uint32_t ts_hpl_seed(const ts_hpl_ctx *c);
int ts_hpl_pfact(ts_hpl_state *s, ts_hpl_panel *p);        // factor the panel in p->W (host)
int ts_hpl_bcast(ts_hpl_state *s, ts_hpl_panel *p);        // panel along the process row
void ts_hpl_bcast_name(int bcast, char out[16]);
int ts_hpl_panel_wait_sends(ts_hpl_state *s, ts_hpl_panel *p);
int ts_hpl_swap_plan(ts_hpl_state *s, ts_hpl_panel *p);    // from p->ipiv
// Row swaps and U for local columns [c0, c1): U (execution memory) rows of the panel, A updated.
int ts_hpl_laswp(ts_hpl_state *s, ts_hpl_panel *p, int64_t c0, int64_t c1, int st);
int ts_hpl_lu(ts_hpl_state *s);                            // factor [A|b]
int ts_hpl_solve(ts_hpl_state *s);                         // back substitution into s->x
int ts_hpl_check(ts_hpl_state *s);                         // regenerate, residual, norms

// cuSOLVER baseline (device path, 1 x 1 grid): [A|b] in s->A factored by one cusolverDnDgetrf,
// timed with events (*t_fact, seconds), then x solved with its LU into s->xsol (*t_solve); *info
// as LAPACK's (no solve when nonzero).
int ts_hpl_xdev_getrf_solve(ts_hpl_state *s, double *t_fact, double *t_solve, int *info);
// Device-to-device panel broadcasts along the process row (device path, P = 1, Q > 1, CUDA, NCCL,
// a GPU of its own per rank; TESSERA_HPL_NCCL=0 turns it off): every rank of the grid calls setup; it sets
// s->nccl when the whole grid agreed (else the host path stays, with a note on rank 0).
int ts_hpl_xdev_nccl_setup(ts_hpl_state *s);
int ts_hpl_xdev_panel_bcast(ts_hpl_state *s, int st, void *buf, size_t bytes, int root);
// Row swaps between process rows device to device (device path, P > 1, CUDA, NCCL, a GPU of its own
// per rank, TESSERA_HPL_NCCL not 0): every rank of the grid calls setup; it sets s->nccl_col when
// the whole grid can. col_allgather: buf (execution memory, gather order, nc values a row) holds
// this rank's cnt[myrow] rows at dsp[myrow]; afterwards every process row's rows at dsp[q].
int ts_hpl_xdev_col_setup(ts_hpl_state *s);
// Along the process column on stream st (device path with s->nccl_col), every member calls them.
// col_rooted: between member root and the others, cnt[q] doubles at rootbuf + dsp[q] on root for
// member q (root's own entry unused), n doubles at mine on member q: to_root gathers them there,
// else root scatters them. col_bcast: n doubles at buf from root.
int ts_hpl_xdev_col_rooted(ts_hpl_state *s, int st, int root, int to_root, double *rootbuf, const int64_t *cnt,
                           const int64_t *dsp, double *mine, int64_t n);
int ts_hpl_xdev_col_bcast(ts_hpl_state *s, int st, double *buf, int64_t n, int root);
int ts_hpl_xdev_col_allgather(ts_hpl_state *s, int st, double *buf, const int64_t *cnt, const int64_t *dsp,
                              int64_t nc);

// Out-of-core statistics of the run (ts_hpl_xooc.c): GEMMs streamed through the tile runtime and
// their flops, GEMMs left to the CPU BLAS, bytes the runtime moved.
void ts_hpl_xooc_stats(ts_hpl_state *s, int64_t *gemms_tiles, int64_t *gemms_cpu, double *flops_tiles,
                       size_t *h2d, size_t *d2h);

// Panel geometry for panel k on this rank.
void ts_hpl_panel_geom(ts_hpl_state *s, ts_hpl_panel *p, int64_t k);
int ts_hpl_panel_reserve(ts_hpl_panel *p, size_t doubles);

// ---- SVG plots (ts_hpl_plot.c): the layout and pieces HPL's and HPL-MxP's plots share ----
// Two panels stacked on a W x H page; the plot area runs from x = ML to W - MR.
enum { TS_PLOT_W = 960, TS_PLOT_H = 640, TS_PLOT_ML = 70, TS_PLOT_MR = 150, TS_PLOT_MT = 40, TS_PLOT_GAP = 50 };
#define TS_PLOT_PANEL_H ((TS_PLOT_H - TS_PLOT_MT - TS_PLOT_GAP - 50) / 2)
// A "nice" axis maximum: 1, 2 or 5 times a power of ten, >= v (1 for v <= 0 or NaN).
double ts_plot_nice_max(double v);
// The XML declaration, <svg> with its size and a white page.
void ts_plot_begin(FILE *f);
// A panel's left and bottom axes (top y0, height h), its y label (rotated, left margin), a y tick
// (grid line and label at y) and an x tick (label centred at x, baseline y).
void ts_plot_frame(FILE *f, int y0, int h);
void ts_plot_ylabel(FILE *f, int y0, int h, const char *label);
void ts_plot_ytick(FILE *f, int y, const char *text);
void ts_plot_xtick(FILE *f, int x, int y, const char *text);
// Colour boxes and names in the right margin, from y0 down.
void ts_plot_legend(FILE *f, int y0, int n, const char *const *names, const char *const *colors);
// The file of test k (0-based) of `total`: path itself for one test, else "plot.svg" -> "plot-3.svg".
void ts_plot_name(const char *path, int64_t k, int64_t total, char *out, size_t len);

#endif
