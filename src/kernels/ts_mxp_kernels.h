// ts_mxp_kernels.h: the kernels of HPL-MxP (mixed-precision LU without pivoting, FP64 refinement) on the host or a device stream.
//
// One contract, three executions: a kernel context bound to no stream runs every operation on the
// host at once (the CPU path), one bound to a stream of a simulated device enqueues the same CPU
// code on the stream's worker, one bound to a CUDA stream enqueues CUDA kernels, cuBLAS and
// cuSOLVER calls (kernels/cuda/ts_mxp_cuda.cu). All matrices are column-major. 16-bit operands are
// stored as uint16_t bit patterns of IEEE binary16 (FP16) or bfloat16 (BF16); products of them
// accumulate in FP32 (CUDA: cublasGemmEx with CUBLAS_COMPUTE_32F on the tensor cores; host: the
// operands widened exactly to FP32 and the CPU BLAS's SGEMM).
#ifndef TS_MXP_KERNELS_H
#define TS_MXP_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "device/ts_device.h"

#ifdef __cplusplus
extern "C" {
#endif

// FP8: the trailing update's operands in E4M3 (ts_mxp_cvt8, ts_mxp_gemm8); a context of this format
// runs its 16-bit operations (ts_mxp_cvt, ts_mxp_gemm: the panels) in FP16.
typedef enum { TS_MXP_FP16 = 0, TS_MXP_BF16 = 1, TS_MXP_FP8 = 2 } ts_mxp_fmt;
const char *ts_mxp_fmt_name(ts_mxp_fmt f); // "fp16", "bf16", "fp8"

// Round to nearest even, subnormals kept, overflow to infinity (bit for bit what CUDA's
// __float2half_rn / __float2bfloat16_rn give), and the exact widening back to FP32.
uint16_t ts_mxp_to16(float v, ts_mxp_fmt f);
float ts_mxp_from16(uint16_t h, ts_mxp_fmt f);

// FP8 E4M3 (1 sign, 4 exponent bits with bias 7, 3 mantissa bits; no infinity, 0x7f NaN; largest
// 448, smallest subnormal 2^-9): round to nearest even, saturating at +-448, NaN to 0x7f (what
// CUDA's __nv_cvt_float_to_fp8(v, __NV_SATFINITE, __NV_E4M3) gives), and the exact widening.
uint8_t ts_mxp_to8(float v);
float ts_mxp_from8(uint8_t c);
// The power of two s that brings a block of largest magnitude amax into E4M3's range (amax s <= 448
// < 2 amax s); 1 for amax 0 or not finite; s within 2^-120 .. 2^120.
float ts_mxp_scale8(float amax);
#define TS_MXP_FP8_MAX 448.0f

typedef struct ts_mxp_kern ts_mxp_kern;
// st NULL: the host. nb: the widest diagonal block; max_m: the most rows ts_mxp_gen/ts_mxp_resid
// get (their scratch on devices). CUDA streams get their cuBLAS and cuSOLVER handles here.
int ts_mxp_kern_create(ts_stream *st, ts_mxp_fmt fmt, int64_t nb, int64_t max_m, ts_mxp_kern **out);
void ts_mxp_kern_destroy(ts_mxp_kern *k);
// What runs the operations: "cublas" (CUDA), "sim" (CPU code on a simulated device), "cpu".
const char *ts_mxp_kern_engine(const ts_mxp_kern *k);
// Waits for the context's stream (no-op on the host); 0 or the stream's sticky error.
int ts_mxp_kern_sync(ts_mxp_kern *k);
// The breakdown flag of ts_mxp_getrf_inv (waits for the stream): 0, or the first global column
// (1-based) whose pivot was zero or not finite.
int ts_mxp_kern_breakdown(ts_mxp_kern *k, int64_t *col);

// Every operation below is asynchronous on the context's stream, or done when it returns on the host.

// The block [row0, row0+m) x [col0, col0+n) of the N x N HPL-MxP matrix (ts_mxp_element: before
// its diagonal is set) into FP32 A (lda), and rowsum[i] = sum of |a(row0+i, j)| over the block's
// columns j other than the diagonal one (FP64, overwritten); adiag[i] (when not NULL) gets the
// generated diagonal value where the block holds row0+i's diagonal element.
int ts_mxp_gen(ts_mxp_kern *k, int64_t N, int64_t row0, int64_t col0, int64_t m, int64_t n, float *A,
               int64_t lda, double *rowsum, double *adiag);
// A(i, i) = (float)d[i] for i < n (the diagonal of a block that starts on it).
int ts_mxp_set_diag(ts_mxp_kern *k, int64_t n, const double *d, float *A, int64_t lda);
// r = b - A x in FP64 with the block [row0, row0+m) x [col0, col0+n) of the matrix regenerated from
// the generator (its diagonal elements replaced by d[global row - row0]); x has n entries (the
// block's columns), b and r m (b NULL: r = -A x).
int ts_mxp_resid(ts_mxp_kern *k, int64_t N, int64_t row0, int64_t col0, int64_t m, int64_t n,
                 const double *d, const double *x, const double *b, double *r);
// The same over a rank's share of a 2D block-cyclic distribution (blocks of nb, the rank at (prow,
// pcol) of a P x Q grid): local row i is global row ((i / nb) P + prow) nb + i % nb, local column j
// likewise with Q and pcol; m local rows, n local columns, d, b and r by local row, x by local
// column. One launch for the whole share (m <= the context's max_m).
int ts_mxp_resid_bc(ts_mxp_kern *k, int64_t N, int64_t nb, int P, int prow, int Q, int pcol, int64_t m, int64_t n,
                    const double *d, const double *x, const double *b, double *r);

// LU without pivoting of the jb x jb block A11 (FP32, in place: unit L below, U on and above the
// diagonal), then Linv = inv(L) and Uinv = inv(U) (jb x jb, ld ldi, zero outside their triangle).
// A zero or non-finite pivot sets the breakdown flag to col0 + its index + 1 (the first one wins).
int ts_mxp_getrf_inv(ts_mxp_kern *k, int64_t jb, float *A11, int64_t lda, float *Linv, float *Uinv,
                     int64_t ldi, int64_t col0);
// dst (16-bit, ldd) = round16(scale * src) for an m x n FP32 block (scale a power of two: exact).
int ts_mxp_cvt(ts_mxp_kern *k, int64_t m, int64_t n, const float *src, int64_t lds, float scale,
               uint16_t *dst, int64_t ldd);
// C = alpha A B + beta C: A m x kk, B kk x n (16-bit), C FP32, FP32 accumulation.
int ts_mxp_gemm(ts_mxp_kern *k, int64_t m, int64_t n, int64_t kk, float alpha, const uint16_t *A,
                int64_t lda, const uint16_t *B, int64_t ldb, float beta, float *C, int64_t ldc);
// FP8 operands (ts_mxp_fmt FP8 contexts; CUDA: compute capability 8.9 or newer):
// dst (E4M3, ldd) = e4m3(s src) for an m x n FP32 block, s = ts_mxp_scale8 of the block's largest
// magnitude (the per-panel power-of-two scaling: exact), transposed when trans (dst n x m); the
// rows of dst from its last one (m, or n transposed) up to drows are set to 0 (padding of a GEMM's
// k). inv_scale[0] (execution memory) gets 1/s, for ts_mxp_gemm8.
int ts_mxp_cvt8(ts_mxp_kern *k, int64_t m, int64_t n, const float *src, int64_t lds, int trans, int64_t drows,
                uint8_t *dst, int64_t ldd, float *inv_scale);
// C = alpha sa[0] sb[0] At^T B + beta C: At kk x m and B kk x n in E4M3 ("TN": the layout cuBLASLt's
// FP8 GEMMs need), C m x n FP32, FP32 accumulation; sa, sb in execution memory. CUDA: cuBLASLt, with
// alpha sa sb formed on the host (the scales read back first: one small copy and a wait per call);
// kk and the leading dimensions of At and B multiples of 16, At and B 16-byte aligned.
int ts_mxp_gemm8(ts_mxp_kern *k, int64_t m, int64_t n, int64_t kk, float alpha, const uint8_t *At, int64_t lda,
                 const float *sa, const uint8_t *B, int64_t ldb, const float *sb, float beta, float *C, int64_t ldc);
// y = alpha A x + beta y in FP32 (A m x n, not transposed).
int ts_mxp_sgemv(ts_mxp_kern *k, int64_t m, int64_t n, float alpha, const float *A, int64_t lda,
                 const float *x, float beta, float *y);
// y = (float)(s r) and x += alpha (double)c, n entries.
int ts_mxp_d2s(ts_mxp_kern *k, int64_t n, const double *r, double s, float *y);
int ts_mxp_axpy(ts_mxp_kern *k, int64_t n, double alpha, const float *c, double *x);

// ---- shared by the host and CUDA versions ----
struct ts_mxp_kern {
    ts_stream *st;          // NULL: the host
    int cuda;               // 1: st is a CUDA stream
    ts_mxp_fmt fmt;
    int64_t nb, max_m;
    void *blas, *solver;    // CUDA: cublasHandle_t, cusolverDnHandle_t
    float *work;            // CUDA: cuSOLVER workspace (device arena)
    int64_t lwork;          // floats in work
    int *dflag;             // CUDA: [0] breakdown column (INT32_MAX: none), [1] getrf info
    double *scratch;        // CUDA: partial row sums of gen/resid (TS_MXP_CHUNKS x max_m)
    int64_t flag;           // host / sim: breakdown column, 0 none
    void *lt;               // CUDA, FP8: cublasLtHandle_t
    void *lt_ws;            // CUDA, FP8: cuBLASLt workspace (device arena), lt_ws_bytes
    size_t lt_ws_bytes;
};
#define TS_MXP_CHUNKS 64        // column chunks of ts_mxp_gen / ts_mxp_resid on CUDA
#define TS_MXP_CHUNK_MIN 2048   // the narrowest chunk (columns)

typedef struct {
    ts_mxp_kern *k;
    int64_t N, row0, col0, m, n, lda;
    float *A;
    double *rowsum, *adiag;
} ts_mxp_gen_args;
typedef struct {
    ts_mxp_kern *k;
    int64_t N, row0, col0, m, n;
    const double *d, *x, *b;
    double *r;
    int64_t nb;             // block-cyclic map (ts_mxp_resid_bc): local row i at global row0 +
    int P, prow, Q, pcol;   // ((i / nb) P + prow) nb + i % nb, columns alike (P = Q = 1: contiguous)
} ts_mxp_resid_args;
typedef struct {
    ts_mxp_kern *k;
    int64_t jb, lda, ldi, col0;
    float *A, *Linv, *Uinv;
} ts_mxp_getrf_args;
typedef struct {
    ts_mxp_kern *k;
    int op;                 // 0 cvt, 1 gemm, 2 sgemv, 3 d2s, 4 axpy, 5 set_diag, 6 cvt8, 7 gemm8
    int trans;              // cvt8: transposed
    int64_t m, n, kk, lda, ldb, ldc; // cvt8: kk the rows of dst (drows)
    double s;               // scale / alpha (FP64 ops)
    float alpha, beta;
    const void *A, *B;
    void *C;
    const float *sa, *sb;   // gemm8: the operands' scales
    float *sout;            // cvt8: 1/s
} ts_mxp_op_args;

int ts_mxp_gen_cpu(void *args);
int ts_mxp_resid_cpu(void *args);
int ts_mxp_getrf_cpu(void *args);
int ts_mxp_op_cpu(void *args);
#if defined(TS_MXP_WITH_CUDA) || defined(__CUDACC__)
int ts_mxp_gen_cuda(void *native_stream, void *args);
int ts_mxp_resid_cuda(void *native_stream, void *args);
int ts_mxp_getrf_cuda(void *native_stream, void *args);
int ts_mxp_op_cuda(void *native_stream, void *args);
int ts_mxp_cuda_init(ts_mxp_kern *k);   // handles bound to the stream, workspace, flags
void ts_mxp_cuda_fini(ts_mxp_kern *k);
int ts_mxp_cuda_breakdown(ts_mxp_kern *k, int64_t *col);
#endif

#ifdef __cplusplus
}
#endif

#endif
