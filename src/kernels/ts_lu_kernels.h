// ts_lu_kernels.h: LU helper kernels on device streams (row gather/scatter for HPL's row swaps), CPU and CUDA versions.
#ifndef TS_LU_KERNELS_H
#define TS_LU_KERNELS_H

#include <stdint.h>

#include "device/ts_device.h"
#include "kernels/ts_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

// buf (row-major n x nc: row i at buf + i*nc) <- rows idx[0..n) of the column-major A (lda).
// idx is in device memory. Asynchronous on st.
int ts_lu_pack_rows(ts_stream *st, const double *A, int64_t lda, const int64_t *idx, int64_t n,
                    int64_t nc, double *buf);
// Rows aidx[i] of A <- rows bidx[i] of the row-major buf (nc per row), i < n. Index arrays in
// device memory; the destination rows must be distinct. Asynchronous on st.
int ts_lu_unpack_rows(ts_stream *st, const double *buf, const int64_t *bidx, int64_t n, int64_t nc,
                      double *A, int64_t lda, const int64_t *aidx);

// One panel's row interchanges on nc columns in one pass (one process row): for every column c,
// with v the old values of rows pk[0..npack) of column c of A,
//   U(i, c) = v[ub[i]] for i < jb  and  A(al[t], c) = v[ab[t]] for t < nown.
// The result of ts_lu_pack_rows into a buffer and two ts_lu_unpack_rows, without the buffer: a
// CUDA block reads its columns' rows once into shared memory and writes them back while the
// scattered rows' sectors are still in L2 (HPL's pivot rows are far apart, so every element of
// them is a sector of its own). Index arrays in device memory, entries below 2^31; al distinct.
// Asynchronous on st. Only when ts_lu_swap_rows_fits(npack, jb, nown, rows): the indices and one
// column's values must fit in TS_LU_SWAP_SMEM_MAX of a block's shared memory (NB up to about 2048);
// TS_ERR_UNSUPPORTED, with nothing enqueued, where the device grants a block less than the launch needs.
int ts_lu_swap_rows(ts_stream *st, double *A, int64_t lda, const int64_t *pk, int64_t npack,
                    const int64_t *ub, int64_t jb, double *U, int64_t ldu, const int64_t *al,
                    const int64_t *ab, int64_t nown, int64_t nc);
int ts_lu_swap_rows_fits(int64_t npack, int64_t jb, int64_t nown, int64_t rows);

// The same interchanges on the transposed storage At = A^T (column-major, ldt): row r of A is
// column r of At, contiguous over A's nc columns, so every moved row is a streaming copy. With
// ts_lu_swap_rows' plan:
//   Ut(c, i) = At(c, pk[ub[i]]) for i < jb, then At(c, al[t]) = At(c, pk[ab[t]]) for t < nown,
// for c < nc (Ut column-major, ldut >= nc). The second step reads only rows that it does not
// write: no pk[ab[t]] is an al[t'] (partial pivoting sends only the diagonal block's old rows below
// it; ts_lu_swap_plan_t_ok checks a plan on the host). Two launches on st, no shared-memory limit.
int ts_lu_swap_rows_t(ts_stream *st, double *At, int64_t ldt, const int64_t *pk, const int64_t *ub,
                      int64_t jb, double *Ut, int64_t ldut, const int64_t *al, const int64_t *ab,
                      int64_t nown, int64_t nc);
// Rows of transposed storage between buffers: column (didx ? didx[e] : e) of D (ldd) <- column
// sidx[e] of S (lds), nc values each, for e < n (several process rows: rows of A^T packed for the
// exchange along the process column and unpacked from it). Index arrays in device memory; the
// destination columns distinct and none of them read. Asynchronous on st, no shared-memory limit.
int ts_lu_copy_cols(ts_stream *st, const double *S, int64_t lds, const int64_t *sidx, int64_t n, int64_t nc,
                    double *D, int64_t ldd, const int64_t *didx);
// 1 when the host copy of a plan meets ts_lu_swap_rows_t's condition (no source row is written).
int ts_lu_swap_plan_t_ok(const int64_t *pk, const int64_t *al, const int64_t *ab, int64_t nown);
// dst (n x m, ldd) = src (m x n, lds) transposed; separate buffers. Asynchronous on st.
int ts_lu_transpose(ts_stream *st, int64_t m, int64_t n, const double *src, int64_t lds, double *dst,
                    int64_t ldd);

// LU with partial pivoting of the m x n panel A (m >= n, device memory), LAPACK dgetrf semantics:
// ipiv (n ints, 1-based, device memory) and *info (device memory: 0, or the first zero pivot,
// 1-based; the factorization goes on). CUDA: cuSOLVER dgetrf; simulated devices: a recursive LU
// with the CPU BLAS. The solver holds the cuSOLVER handle and workspace for panels up to
// max_m x max_n; create and use it on one stream at a time.
typedef struct ts_lu_solver ts_lu_solver;
int ts_lu_solver_create(ts_stream *st, int64_t max_m, int64_t max_n, ts_lu_solver **out);
// TESSERA_LU_GETRF: *alg = TS_LU_GETRF_LEGACY (dgetrf, also when unset), _X0 (xgetrf) or _X1
// (xgetrf-alg1); TS_ERR_PARSE (message set) when malformed. ts_lu_solver_create reads it.
int ts_lu_env_getrf(int *alg);
void ts_lu_solver_destroy(ts_lu_solver *sv);
int ts_lu_dgetrf(ts_stream *st, ts_lu_solver *sv, int64_t m, int64_t n, double *A, int64_t lda,
                 int *ipiv, int *info);
// The CPU recursive LU (also the simulated devices' kernel), on host memory.
void ts_lu_dgetrf_host(int64_t m, int64_t n, double *A, int64_t lda, int *ipiv, int *info);

// ---- HPL's recursive panel factorization with our own kernels ----
// LU with partial pivoting of the m x n panel A (m >= n; device memory, or host memory for
// ts_lu_panel_host), with the same output contract as ts_lu_dgetrf: A holds L\U of P A, ipiv the
// LAPACK-style row interchanges (1-based, relative to the panel's first row: row k was swapped
// with row ipiv[k]-1 at step k, across all n columns), *info 0 or the first zero pivot's column
// (1-based; the factorization goes on). The algorithm is HPL 2.3's (HPL_pdrpan*N / HPL_pdpan*N on
// one process row): the columns are split into ndiv parts recursively (RFACT: left-looking, Crout
// or right-looking) until at most nbmin remain; that base case (PFACT) is factored column by
// column: pivot search (max |a|, lowest row on ties, as idamax), the row swap across the whole
// panel, the scaling below the diagonal, and the variant's update. The recursion runs on the host
// and enqueues DTRSM and GEMM (ts_dev_dtrsm / ts_dev_gemm) and one base-case kernel per leaf on
// the stream: nothing waits on the host. The base case is a cooperative CUDA kernel on CUDA devices
// (ts_lu_panel.cu: each block keeps its rows of the leaf in shared memory when they fit, one grid
// barrier per column) and ts_lu_leaf_cpu on simulated devices.
typedef struct {
    int pfact;  // base case (HPL PFACT): 0 left-looking, 1 Crout, 2 right-looking
    int rfact;  // recursion (HPL RFACT): 0 left-looking, 1 Crout, 2 right-looking
    int nbmin;  // the recursion stops at n <= nbmin columns (or n < 2); capped at TS_LU_LEAF_MAX
    int ndiv;   // parts per recursion level (>= 2)
    int grid;   // CUDA: the leaf kernel's blocks at most (0: one per SM); TESSERA_LU_LEAF_GRID
} ts_lu_panel_algo;
// TESSERA_LU_LEAF_GRID: *grid = the cap (>= 1), or 0 when unset; TS_ERR_PARSE (message set) when
// malformed or < 1.
int ts_lu_env_leaf_grid(int *grid);
#define TS_LU_LEAF_MAX 64 // widest base case (a leaf's U block is kept in shared memory)

typedef struct ts_lu_panel ts_lu_panel;
// Device scratch and the GEMM engine of the recursion, for panels of up to max_m rows; use it on one
// stream at a time.
int ts_lu_panel_create(ts_stream *st, ts_engine engine, int64_t max_m, ts_lu_panel **out);
void ts_lu_panel_destroy(ts_lu_panel *pn);
int ts_lu_panel_factor(ts_stream *st, ts_lu_panel *pn, const ts_lu_panel_algo *alg, int64_t m,
                       int64_t n, double *A, int64_t lda, int *ipiv, int *info);
// The same factorization on host memory with the CPU BLAS (the simulated devices' twin; tests).
void ts_lu_panel_host(const ts_lu_panel_algo *alg, int64_t m, int64_t n, double *A, int64_t lda,
                      int *ipiv, int *info);

// One base case: columns [off, off+nl) of the m x ncols panel at A, up to date with respect to
// columns [0, off); row swaps go across all ncols columns; ipiv[k] and *info as above for
// k in [off, off+nl). *info is only set when it is 0.
typedef struct {
    double *A;
    int64_t lda, m, ncols, off, nl;
    int pfact;
    int grid;              // CUDA: blocks at most (0: one per SM)
    int *ipiv, *info;
    double *scratch;       // CUDA: device scratch of scratch_doubles (grid reductions)
    int64_t scratch_doubles;
} ts_lu_leaf_args;
int ts_lu_leaf_cpu(void *args);
int ts_lu_leaf_cuda(void *native_stream, void *args); // kernels/cuda/ts_lu_panel.cu
// Doubles of device scratch ts_lu_leaf_cuda needs for any panel (grid of at most 4096 blocks).
#define TS_LU_LEAF_SCRATCH (2 * (4096 * (TS_LU_LEAF_MAX + 2) + TS_LU_LEAF_MAX))

// ---- shared by the CPU and CUDA versions ----
typedef struct {
    int unpack;            // 0: pack, 1: unpack
    const double *src;
    double *dst;
    const int64_t *bidx;   // buffer rows (unpack; NULL = identity)
    const int64_t *aidx;   // matrix rows
    int64_t n, nc, lda;
} ts_lu_rows_args;

typedef struct {
    double *A, *U;
    const int64_t *pk, *ub, *al, *ab;
    int64_t lda, ldu, npack, jb, nown, nc;
} ts_lu_swap_args;
// Bytes of shared memory ts_lu_swap_rows needs for one column (the int32 indices and the values).
#define TS_LU_SWAP_SMEM(npack, jb, nown) ((size_t)(npack) * 8 + ((size_t)(npack) + (size_t)(jb) + 2 * (size_t)(nown)) * 4)
#define TS_LU_SWAP_SMEM_MAX ((size_t)96 << 10) // (every FP64 tensor-core GPU grants a block this much)

typedef struct {
    void *handle;          // cusolverDnHandle_t (CUDA)
    double *work;          // device workspace
    int lwork;
    double *A;
    int *ipiv, *info;
    int64_t m, n, lda;
} ts_lu_getrf_args;

int ts_lu_rows_cpu(void *args);
int ts_lu_getrf_cpu(void *args);
int ts_lu_getrf_cuda(void *native_stream, void *args);
// cuSOLVER's getrf for the panels (TESSERA_LU_GETRF): the 32-bit API's cusolverDnDgetrf, or the
// 64-bit cusolverDnXgetrf with algorithm 0 or 1
enum { TS_LU_GETRF_LEGACY = 0, TS_LU_GETRF_X0 = 1, TS_LU_GETRF_X1 = 2 };
int ts_lu_cusolver_create(void **handle, int alg);
void ts_lu_cusolver_destroy(void *handle);
int ts_lu_cusolver_lwork(void *handle, int64_t m, int64_t n, double *A, int64_t lda, int *lwork);
int ts_lu_rows_cuda(void *native_stream, void *args); // kernels/cuda/ts_lu_kernels.cu
typedef struct {
    double *At, *Ut;
    const int64_t *pk, *ub, *al, *ab;
    int64_t ldt, ldut, jb, nown, nc;
} ts_lu_swapt_args;
typedef struct {
    const double *src;
    double *dst;
    int64_t m, n, lds, ldd;
} ts_lu_trans_args;
typedef struct {
    const double *S;
    double *D;
    const int64_t *sidx, *didx;
    int64_t lds, ldd, n, nc;
} ts_lu_cols_args;
int ts_lu_cols_cpu(void *args);
int ts_lu_cols_cuda(void *native_stream, void *args); // kernels/cuda/ts_lu_kernels.cu
int ts_lu_swapt_cpu(void *args);
int ts_lu_swapt_cuda(void *native_stream, void *args); // kernels/cuda/ts_lu_kernels.cu
int ts_lu_trans_cpu(void *args);
int ts_lu_trans_cuda(void *native_stream, void *args); // kernels/cuda/ts_lu_kernels.cu
int ts_lu_swap_cpu(void *args);
int ts_lu_swap_cuda(void *native_stream, void *args); // kernels/cuda/ts_lu_kernels.cu

#ifdef __cplusplus
}
#endif

#endif
