// ts_kernels.h: GEMM and the BLAS pieces the upper layers need, with one contract for the CPU
// reference kernels, the CPU BLAS and the device engines. All matrices are column-major;
// row-major callers swap operands at the face (C^T = op(B)^T op(A)^T).
#ifndef TS_KERNELS_H
#define TS_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "device/ts_device.h"

#ifdef __cplusplus
extern "C" {
#endif

// Precision letters as in BLAS: 's', 'd', 'c', 'z'. Scalars (alpha, beta) point to one value of
// the precision (float, double, float complex as 2 floats, double complex as 2 doubles).
size_t ts_prec_size(char prec);    // 4, 8, 8, 16; 0 for an unknown letter
int ts_prec_is_complex(char prec);
// The scheme of the own CGEMM/ZGEMM (engine tessera on a CUDA device): TESSERA_CPLX_SCHEME = 4m
// (default: four real GEMMs, a conventional complex GEMM's accuracy) or 3m (three, 3/4 of the flops;
// the imaginary part's error bound doubles, ts_cgemm_4m.cu). *three = 1 for 3m. TS_ERR_ARG, naming
// the variable, on any other value.
int ts_cplx_scheme_3m(int *three);
// One scalar of any precision (f for s and c, d for d and z; [1] the imaginary part, which real
// precisions do not read), as alpha and beta are passed.
typedef union {
    float f[2];
    double d[2];
} ts_scalar;
ts_scalar ts_scalar_of(char prec, double re, double im);
// Op letters: 'N', 'T', 'C' (conjugate transpose; same as 'T' for real precisions).

// GEMM engines of the kernels layer: what runs on one device stream (ts_dev_gemm) or the CPU. The
// report of every tool names the engine that ran. The runtime adds the engines over a whole device
// set with host operands (tiles, cublasxt) after these values (runtime/ts_engines.h), with the
// names of its own; ts_engine_name and ts_engine_parse know the ones here.
typedef enum {
    TS_ENGINE_AUTO = 0,   // the fastest available on the stream's device
    TS_ENGINE_CUBLAS,     // cuBLAS (CUDA devices)
    TS_ENGINE_TESSERA,    // our own kernels (CUDA devices; elsewhere TS_ERR_UNSUPPORTED)
    TS_ENGINE_REF,        // CPU reference kernel (simulated devices; the sim's "device code")
    TS_ENGINE_CPU,        // the CPU BLAS on host memory (no device)
} ts_engine;
const char *ts_engine_name(ts_engine e);           // "auto", "cublas", "tessera", "ref", "cpu"; else "unknown"
int ts_engine_parse(const char *s, ts_engine *out); // TS_ERR_ARG naming the value and the choices

// ---- CPU, host memory ----
// Reference GEMM (straightforward loops, blocked for the cache; any op, s/d/c/z).
void ts_gemm_ref(char prec, char ta, char tb, int64_t m, int64_t n, int64_t k, const void *alpha,
                 const void *A, int64_t lda, const void *B, int64_t ldb, const void *beta, void *C,
                 int64_t ldc);
// The system CPU BLAS (CBLAS, column-major). Returns 0 or TS_ERR_ARG for bad dimensions.
int ts_gemm_cpu(char prec, char ta, char tb, int64_t m, int64_t n, int64_t k, const void *alpha,
                const void *A, int64_t lda, const void *B, int64_t ldb, const void *beta, void *C,
                int64_t ldc);
// Checks GEMM arguments in the reference BLAS order; returns 0, or the 1-based position of the
// first bad argument (transa=1, transb=2, m=3, n=4, k=5, lda=8, ldb=10, ldc=13).
int ts_gemm_check_args(char ta, char tb, int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb,
                       int64_t ldc);
// Name and threads of the CPU BLAS ("OpenBLAS 0.3.21", threads).
const char *ts_cpu_blas_name(void);
int ts_cpu_blas_threads(void);
void ts_cpu_blas_set_threads(int n);

// Verification of C = alpha op(A) op(B) + beta C0 by a randomized (Freivalds) check with `nvec`
// random vectors x: err = ||C x - (alpha op(A)(op(B) x) + beta C0 x)||_inf
//                         / ((|alpha| ||A||_inf-ish ||B|| + |beta| ||C0||) ||x|| * k * eps).
// *err gets the scaled error; returns 1 if err <= bound, 0 if not. O((m+n)k) per vector.
// C0 may be NULL when beta is zero.
int ts_gemm_verify(char prec, char ta, char tb, int64_t m, int64_t n, int64_t k, const void *alpha,
                   const void *A, int64_t lda, const void *B, int64_t ldb, const void *beta,
                   const void *C0, int64_t ldc0, const void *C, int64_t ldc, int nvec,
                   uint64_t seed, double bound, double *err);

// Normwise error of C against a reference result Cref of the same GEMM (recomputed, e.g. by
// ts_gemm_ref): ||C - Cref||_F / ((|alpha| ||op(A)||_F ||op(B)||_F + |beta| ||C0||_F) k eps), eps the unit
// roundoff of the precision; alpha and beta as {re, im}. The worst-case rounding of either result is
// about k eps times the denominator's terms, so a correct result stays below 1 (random data: orders
// of magnitude below); NaN in C gives NaN.
double ts_gemm_ref_error(char prec, char ta, char tb, int64_t m, int64_t n, int64_t k, const double alpha[2],
                         const void *A, int64_t lda, const void *B, int64_t ldb, const double beta[2],
                         const void *C0, const void *C, const void *Cref, int64_t ldc);

// One GEMM result checked against its operands, as the tools report it: C = alpha op(A) op(B) +
// beta C0, column-major, alpha and beta as {re, im}, C0 and C (and Cref) with leading dimension ldc.
typedef struct {
    char prec, ta, tb;
    int64_t m, n, k;
    double alpha[2], beta[2];
    const void *A, *B, *C0;
    int64_t lda, ldb, ldc;
} ts_gemm_desc;
typedef struct {
    double fv_err;         // ts_gemm_verify's scaled error
    double ref_err;        // ts_gemm_ref_error's, when ref_done
    int ref_done;
    double error, bound;   // the check closer to (or over) its bound, or the one that failed to give a number
    int passed;            // both checks within their bounds
} ts_gemm_check_result;
// The column-major GEMM of an m x n x k problem with ops ta, tb in either storage order (row_major:
// computed as C^T = op(B)^T op(A)^T, A and B and their leading dimensions trading places); leading
// dimensions 0 are tight. Fills g's letters, dimensions and leading dimensions; cols: the stored
// columns of its A and B.
void ts_gemm_desc_layout(ts_gemm_desc *g, int row_major, char ta, char tb, int64_t m, int64_t n, int64_t k,
                         int64_t lda, int64_t ldb, int64_t ldc, int64_t cols[2]);
// Flops of one GEMM: 2mnk, 8mnk for complex precisions.
double ts_gemm_flops(char prec, int64_t m, int64_t n, int64_t k);
// Freivalds (nvec vectors, seed, fv_bound) and, when Cref is not NULL, the normwise error against the
// reference kernel's result held in Cref (computed there from C0 first when *cref_valid is 0, which
// then becomes 1: one reference serves every result of the same GEMM) with ref_bound.
void ts_gemm_check(const ts_gemm_desc *g, const void *C, int nvec, uint64_t seed, double fv_bound, void *Cref,
                   int *cref_valid, double ref_bound, ts_gemm_check_result *r);

// ---- devices (device pointers, asynchronous on a stream) ----
// Sim devices run ts_gemm_ref (or the CPU BLAS) on the stream's worker; CUDA devices cuBLAS (or
// the own kernel when engine is TESSERA). Alpha/beta are host scalars read at enqueue time.
int ts_dev_gemm(ts_stream *st, ts_engine engine, char prec, char ta, char tb, int64_t m, int64_t n,
                int64_t k, const void *alpha, const void *A, int64_t lda, const void *B,
                int64_t ldb, const void *beta, void *C, int64_t ldc);
// B = alpha op(A)^-1 B (side 'L') or B op(A)^-1 (side 'R'), double precision.
int ts_dev_dtrsm(ts_stream *st, char side, char uplo, char ta, char diag, int64_t m, int64_t n,
                 double alpha, const double *A, int64_t lda, double *B, int64_t ldb);
// The engine `auto` resolves to on this stream's device.
ts_engine ts_dev_gemm_default_engine(ts_stream *st);

// ---- additions (kernels layer) ----
// ts_gemm_check_args plus the precision, as an error: 0, or TS_ERR_ARG with a message naming
// `who`, the argument's position and name, and its value.
int ts_gemm_check_raise(const char *who, char prec, char ta, char tb, int64_t m, int64_t n,
                        int64_t k, int64_t lda, int64_t ldb, int64_t ldc);
// DTRSM arguments in the reference BLAS order: 0 or the 1-based position of the first bad one
// (side=1, uplo=2, transa=3, diag=4, m=5, n=6, lda=9, ldb=11).
int ts_dtrsm_check_args(char side, char uplo, char ta, char diag, int64_t m, int64_t n, int64_t lda,
                        int64_t ldb);
// DTRSM by the CPU BLAS on host memory (CBLAS, column-major); 0 or TS_ERR_ARG.
int ts_dtrsm_cpu(char side, char uplo, char ta, char diag, int64_t m, int64_t n, double alpha,
                 const double *A, int64_t lda, double *B, int64_t ldb);
// The engine ts_dev_gemm runs for this call: `engine` itself unless AUTO; AUTO gives, on CUDA
// devices, ts_gemm_auto_cuda's choice (for 16-byte aligned operands; ts_dev_gemm takes cublas for
// others) and, on simulated devices, ref up to TESSERA_SIM_GEMM_REF_FLOPS (default 2*256^3 flops,
// x4 for complex) and cpu (the CPU BLAS standing in as the sim's device code) above. Reports use
// this to name the engine that ran.
ts_engine ts_dev_gemm_engine_for(ts_stream *st, ts_engine engine, char prec, char ta, char tb, int64_t m,
                                 int64_t n, int64_t k);
// AUTO on a CUDA device of compute capability cc_major.cc_minor with `sms` multiprocessors, by shape
// and op, from same-process measurements against cuBLAS (bench/notes/gemm-kernels.md, "Engine
// choice"): tessera (the own SGEMM) for prec 's' in NN and TT (ta, tb both 'N' or both not) with
// k >= 4096 and two of its 256 x 128 tiles per multiprocessor, on cc 9.0 (H100, H200); cublas
// everywhere else (every DGEMM, CGEMM, ZGEMM shape; other devices: not measured).
ts_engine ts_gemm_auto_cuda(int cc_major, int cc_minor, int sms, char prec, char ta, char tb, int64_t m,
                            int64_t n, int64_t k);
// Default bound for ts_gemm_verify's scaled error (see ts_gemm_verify.c for the derivation): a
// correct GEMM cannot exceed about 1 even with worst-case rounding; random data gives ~1e-2 or less
// (5e-3 at 48x40x36, 5e-4 at 300x280x260). One wrong element is always caught when it is off by
// more than 2 * bound * S, never when off by less than bound * S (S: the denominator per unit x).
#define TS_GEMM_VERIFY_BOUND 1.0

#ifdef __cplusplus
}
#endif

#endif
