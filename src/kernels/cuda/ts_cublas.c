// ts_cublas.c: the cuBLAS/cuSOLVER engines (GEMM s/d/c/z, DTRSM, DGETRF) on a device-layer stream.
//
// The handles live in the stream's slot, created on first use on the stream's device and bound to
// the stream, so work stays ordered with the stream's copies and kernels. Pointer mode is host
// (alpha/beta are read at enqueue). Math mode stays the default: cuBLAS uses the FP64 tensor
// cores on Hopper by itself, and reduced-precision or emulated modes are never enabled here.
#include "kernels/cuda/ts_cuda_kernels.h"

#include "core/ts_error.h"
#include "kernels/ts_kernels.h"
#include "kernels/ts_tile_ops.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusolverDn.h>

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define TS_CUDA_HANDLES_MAGIC 0x7c0b1a5u

// What the stream slot holds: both handles, created lazily.
typedef struct {
    unsigned magic;
    int native;                   // CUDA device the handles were created on
    cublasHandle_t blas;
    cusolverDnHandle_t solver;    // NULL until the first cuSOLVER call
} cuda_handles;

static int ordinal(ts_stream *st) { return ts_device_props_of(ts_stream_device(st))->ordinal; }

static const char *cusolver_status_name(cusolverStatus_t s)
{
    switch (s) {
    case CUSOLVER_STATUS_SUCCESS: return "CUSOLVER_STATUS_SUCCESS";
    case CUSOLVER_STATUS_NOT_INITIALIZED: return "CUSOLVER_STATUS_NOT_INITIALIZED";
    case CUSOLVER_STATUS_ALLOC_FAILED: return "CUSOLVER_STATUS_ALLOC_FAILED";
    case CUSOLVER_STATUS_INVALID_VALUE: return "CUSOLVER_STATUS_INVALID_VALUE";
    case CUSOLVER_STATUS_ARCH_MISMATCH: return "CUSOLVER_STATUS_ARCH_MISMATCH";
    case CUSOLVER_STATUS_EXECUTION_FAILED: return "CUSOLVER_STATUS_EXECUTION_FAILED";
    case CUSOLVER_STATUS_INTERNAL_ERROR: return "CUSOLVER_STATUS_INTERNAL_ERROR";
    case CUSOLVER_STATUS_NOT_SUPPORTED: return "CUSOLVER_STATUS_NOT_SUPPORTED";
    case CUSOLVER_STATUS_INVALID_WORKSPACE: return "CUSOLVER_STATUS_INVALID_WORKSPACE";
    default: return "cuSOLVER error";
    }
}

#define BLAS_FAIL(s, st, ...) blas_fail((s), (st), __FILE__, __LINE__, __VA_ARGS__)
static int blas_fail(cublasStatus_t s, ts_stream *st, const char *file, int line, const char *op)
{
    (void)cudaGetLastError();
    return ts_error_set(TS_ERR_CUBLAS, file, line, "%s on device %d: %s", op, ordinal(st),
                        cublasGetStatusString(s));
}

#define SOLVER_FAIL(s, st, ...) solver_fail((s), (st), __FILE__, __LINE__, __VA_ARGS__)
static int solver_fail(cusolverStatus_t s, ts_stream *st, const char *file, int line, const char *op)
{
    (void)cudaGetLastError();
    return ts_error_set(TS_ERR_CUBLAS, file, line, "%s on device %d: %s (%d)", op, ordinal(st),
                        cusolver_status_name(s), (int)s);
}

static void handles_destroy(void *p)
{
    cuda_handles *h = p;
    if (!h) return;
    // Handles must be destroyed with their device current.
    if (cudaSetDevice(h->native) == cudaSuccess) {
        if (h->solver) (void)cusolverDnDestroy(h->solver);
        if (h->blas) (void)cublasDestroy(h->blas);
    }
    (void)cudaGetLastError();
    free(h);
}

// The stream's handles (cuSOLVER too when `solver`), with the stream's device made current.
static int get_handles(ts_stream *st, int solver, cuda_handles **out)
{
    ts_device *d = ts_stream_device(st);
    const ts_device_props *p = ts_device_props_of(d);
    if (p->backend != TS_BACKEND_CUDA)
        TS_RAISE(TS_ERR_UNSUPPORTED, "cuBLAS/cuSOLVER need a CUDA device (device %d is %s)", p->ordinal,
                 ts_backend_name(p->backend));
    cudaError_t e = cudaSetDevice(p->native_id);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        TS_RAISE(TS_ERR_CUDA, "cudaSetDevice(%d): %s", p->native_id, cudaGetErrorString(e));
    }
    cudaStream_t cs = (cudaStream_t)ts_stream_native(st);
    cuda_handles *h = ts_stream_slot(st);
    if (h && h->magic != TS_CUDA_HANDLES_MAGIC)
        TS_RAISE(TS_ERR_STATE, "the slot of this stream of device %d holds something other than cuBLAS handles",
                 p->ordinal);
    if (!h) {
        h = calloc(1, sizeof *h);
        if (!h) TS_RAISE(TS_ERR_NOMEM, "out of host memory for cuBLAS handles");
        h->magic = TS_CUDA_HANDLES_MAGIC;
        h->native = p->native_id;
        cublasStatus_t s = cublasCreate(&h->blas);
        if (s != CUBLAS_STATUS_SUCCESS) {
            free(h);
            return BLAS_FAIL(s, st, "cublasCreate");
        }
        ts_stream_set_slot(st, h, handles_destroy); // from here the stream owns h
        s = cublasSetStream(h->blas, cs);
        if (s != CUBLAS_STATUS_SUCCESS) return BLAS_FAIL(s, st, "cublasSetStream");
        s = cublasSetPointerMode(h->blas, CUBLAS_POINTER_MODE_HOST);
        if (s != CUBLAS_STATUS_SUCCESS) return BLAS_FAIL(s, st, "cublasSetPointerMode(host)");
    }
    if (solver && !h->solver) {
        cusolverStatus_t s = cusolverDnCreate(&h->solver);
        if (s != CUSOLVER_STATUS_SUCCESS) {
            h->solver = NULL;
            return SOLVER_FAIL(s, st, "cusolverDnCreate");
        }
        s = cusolverDnSetStream(h->solver, cs);
        if (s != CUSOLVER_STATUS_SUCCESS) return SOLVER_FAIL(s, st, "cusolverDnSetStream");
    }
    *out = h;
    return 0;
}

static int fits_int(int64_t v) { return v <= INT_MAX; }

static int op_of(char t, cublasOperation_t *op)
{
    switch (t) {
    case 'N': case 'n': *op = CUBLAS_OP_N; return 0;
    case 'T': case 't': *op = CUBLAS_OP_T; return 0;
    case 'C': case 'c': *op = CUBLAS_OP_C; return 0; // cuBLAS treats C as T for real types
    default: return -1;
    }
}

// One cuBLAS GEMM call; the _64 entry points only when a dimension does not fit an int.
static cublasStatus_t gemm_call(cublasHandle_t h, char prec, cublasOperation_t oa, cublasOperation_t ob,
                                int64_t m, int64_t n, int64_t k, const void *alpha, const void *A, int64_t lda,
                                const void *B, int64_t ldb, const void *beta, void *C, int64_t ldc, int wide)
{
    if (!wide) {
        int im = (int)m, in = (int)n, ik = (int)k, ia = (int)lda, ib = (int)ldb, ic = (int)ldc;
        switch (prec) {
        case 's': return cublasSgemm(h, oa, ob, im, in, ik, alpha, A, ia, B, ib, beta, C, ic);
        case 'd': return cublasDgemm(h, oa, ob, im, in, ik, alpha, A, ia, B, ib, beta, C, ic);
        case 'c': return cublasCgemm(h, oa, ob, im, in, ik, alpha, A, ia, B, ib, beta, C, ic);
        case 'z': return cublasZgemm(h, oa, ob, im, in, ik, alpha, A, ia, B, ib, beta, C, ic);
        }
    } else {
        switch (prec) {
        case 's': return cublasSgemm_64(h, oa, ob, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
        case 'd': return cublasDgemm_64(h, oa, ob, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
        case 'c': return cublasCgemm_64(h, oa, ob, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
        case 'z': return cublasZgemm_64(h, oa, ob, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
        }
    }
    return CUBLAS_STATUS_INVALID_VALUE;
}

int ts_cuda_gemm(ts_stream *st, char prec, char ta, char tb, int64_t m, int64_t n, int64_t k, const void *alpha,
                 const void *A, int64_t lda, const void *B, int64_t ldb, const void *beta, void *C, int64_t ldc)
{
    if (!st) TS_RAISE(TS_ERR_ARG, "ts_cuda_gemm: NULL stream");
    if (!alpha || !beta) TS_RAISE(TS_ERR_ARG, "ts_cuda_gemm: alpha and beta must point to host scalars");
    TS_CHECK(ts_gemm_check_raise("ts_cuda_gemm", prec, ta, tb, m, n, k, lda, ldb, ldc));
    cublasOperation_t oa, ob;
    if (op_of(ta, &oa) < 0 || op_of(tb, &ob) < 0)
        TS_RAISE(TS_ERR_ARG, "ts_cuda_gemm: op '%c'/'%c' (N, T or C)", ta, tb);
    if (m == 0 || n == 0) return 0;
    int wide = !(fits_int(m) && fits_int(n) && fits_int(k) && fits_int(lda) && fits_int(ldb) && fits_int(ldc));
    cuda_handles *h;
    TS_CHECK(get_handles(st, 0, &h));
    cublasStatus_t s = gemm_call(h->blas, prec, oa, ob, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, wide);
    if (s != CUBLAS_STATUS_SUCCESS) {
        char op[160];
        snprintf(op, sizeof op, "cublas%cgemm%s(%c%c, %lldx%lldx%lld)", prec - 'a' + 'A', wide ? "_64" : "", ta, tb,
                 (long long)m, (long long)n, (long long)k);
        return BLAS_FAIL(s, st, op);
    }
    return 0;
}

// cuBLAS side, fill, op and diag of a triangular routine (?trsm, ?trmm); -1 for an op not N, T, C.
typedef struct {
    cublasSideMode_t side;
    cublasFillMode_t fill;
    cublasOperation_t op;
    cublasDiagType_t diag;
} tri_modes;
static int tri_of(char side, char uplo, char ta, char diag, tri_modes *t)
{
    t->side = (side == 'L' || side == 'l') ? CUBLAS_SIDE_LEFT : CUBLAS_SIDE_RIGHT;
    t->fill = (uplo == 'U' || uplo == 'u') ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
    t->diag = (diag == 'U' || diag == 'u') ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT;
    return op_of(ta, &t->op);
}

int ts_cuda_dtrsm(ts_stream *st, char side, char uplo, char ta, char diag, int64_t m, int64_t n, double alpha,
                  const double *A, int64_t lda, double *B, int64_t ldb)
{
    if (!st) TS_RAISE(TS_ERR_ARG, "ts_cuda_dtrsm: NULL stream");
    int bad = ts_dtrsm_check_args(side, uplo, ta, diag, m, n, lda, ldb);
    if (bad)
        TS_RAISE(TS_ERR_ARG, "ts_cuda_dtrsm: argument %d is invalid (side %c uplo %c trans %c diag %c m %lld n %lld "
                 "lda %lld ldb %lld)", bad, side, uplo, ta, diag, (long long)m, (long long)n, (long long)lda,
                 (long long)ldb);
    if (m == 0 || n == 0) return 0;
    tri_modes t;
    if (tri_of(side, uplo, ta, diag, &t) < 0) TS_RAISE(TS_ERR_ARG, "ts_cuda_dtrsm: op '%c' (N, T or C)", ta);
    int wide = !(fits_int(m) && fits_int(n) && fits_int(lda) && fits_int(ldb));
    cuda_handles *h;
    TS_CHECK(get_handles(st, 0, &h));
    cublasStatus_t s = wide ? cublasDtrsm_64(h->blas, t.side, t.fill, t.op, t.diag, m, n, &alpha, A, lda, B, ldb)
                            : cublasDtrsm(h->blas, t.side, t.fill, t.op, t.diag, (int)m, (int)n, &alpha, A, (int)lda, B, (int)ldb);
    if (s != CUBLAS_STATUS_SUCCESS) {
        char what[160];
        snprintf(what, sizeof what, "cublasDtrsm%s(%c%c%c%c, %lldx%lld)", wide ? "_64" : "", side, uplo, ta, diag,
                 (long long)m, (long long)n);
        return BLAS_FAIL(s, st, what);
    }
    return 0;
}

int ts_cuda_trsm(ts_stream *st, char prec, char side, char uplo, char ta, char diag, int64_t m, int64_t n,
                 const void *alpha, const void *A, int64_t lda, void *B, int64_t ldb)
{
    if (!st) TS_RAISE(TS_ERR_ARG, "ts_cuda_trsm: NULL stream");
    int bad = ts_dtrsm_check_args(side, uplo, ta, diag, m, n, lda, ldb);
    if (bad) TS_RAISE(TS_ERR_ARG, "ts_cuda_trsm: argument %d is invalid", bad);
    if (m == 0 || n == 0) return 0;
    tri_modes t;
    if (tri_of(side, uplo, ta, diag, &t) < 0) TS_RAISE(TS_ERR_ARG, "ts_cuda_trsm: op '%c' (N, T or C)", ta);
    if (!(fits_int(m) && fits_int(n) && fits_int(lda) && fits_int(ldb)))
        TS_RAISE(TS_ERR_ARG, "ts_cuda_trsm: dimensions exceed the int range (m=%lld n=%lld)", (long long)m,
                 (long long)n);
    int M = (int)m, N = (int)n, LA = (int)lda, LB = (int)ldb;
    cuda_handles *h;
    TS_CHECK(get_handles(st, 0, &h));
    cublasStatus_t s;
    switch (prec) {
    case 's': s = cublasStrsm(h->blas, t.side, t.fill, t.op, t.diag, M, N, alpha, A, LA, B, LB); break;
    case 'd': s = cublasDtrsm(h->blas, t.side, t.fill, t.op, t.diag, M, N, alpha, A, LA, B, LB); break;
    case 'c': s = cublasCtrsm(h->blas, t.side, t.fill, t.op, t.diag, M, N, alpha, A, LA, B, LB); break;
    case 'z': s = cublasZtrsm(h->blas, t.side, t.fill, t.op, t.diag, M, N, alpha, A, LA, B, LB); break;
    default: TS_RAISE(TS_ERR_ARG, "ts_cuda_trsm: precision '%c'", prec);
    }
    if (s != CUBLAS_STATUS_SUCCESS) {
        char what[160];
        snprintf(what, sizeof what, "cublas%ctrsm(%c%c%c%c, %lldx%lld)", prec - 'a' + 'A', side, uplo, ta, diag,
                 (long long)m, (long long)n);
        return BLAS_FAIL(s, st, what);
    }
    return 0;
}

int ts_cuda_trmm(ts_stream *st, char prec, char side, char uplo, char ta, char diag, int64_t m, int64_t n,
                 const void *alpha, const void *A, int64_t lda, const void *B, int64_t ldb, void *C, int64_t ldc)
{
    if (!st) TS_RAISE(TS_ERR_ARG, "ts_cuda_trmm: NULL stream");
    if (m == 0 || n == 0) return 0;
    tri_modes t;
    if (tri_of(side, uplo, ta, diag, &t) < 0) TS_RAISE(TS_ERR_ARG, "ts_cuda_trmm: op '%c' (N, T or C)", ta);
    if (!(fits_int(m) && fits_int(n) && fits_int(lda) && fits_int(ldb) && fits_int(ldc)))
        TS_RAISE(TS_ERR_ARG, "ts_cuda_trmm: dimensions exceed the int range (m=%lld n=%lld)", (long long)m, (long long)n);
    int M = (int)m, N = (int)n, LA = (int)lda, LB = (int)ldb, LC = (int)ldc;
    cuda_handles *h;
    TS_CHECK(get_handles(st, 0, &h));
    cublasStatus_t s;
    switch (prec) {
    case 's': s = cublasStrmm(h->blas, t.side, t.fill, t.op, t.diag, M, N, alpha, A, LA, B, LB, C, LC); break;
    case 'd': s = cublasDtrmm(h->blas, t.side, t.fill, t.op, t.diag, M, N, alpha, A, LA, B, LB, C, LC); break;
    case 'c': s = cublasCtrmm(h->blas, t.side, t.fill, t.op, t.diag, M, N, alpha, A, LA, B, LB, C, LC); break;
    case 'z': s = cublasZtrmm(h->blas, t.side, t.fill, t.op, t.diag, M, N, alpha, A, LA, B, LB, C, LC); break;
    default: TS_RAISE(TS_ERR_ARG, "ts_cuda_trmm: precision '%c'", prec);
    }
    if (s != CUBLAS_STATUS_SUCCESS) {
        char what[160];
        snprintf(what, sizeof what, "cublas%ctrmm(%c%c%c%c, %lldx%lld)", prec - 'a' + 'A', side, uplo, ta, diag,
                 (long long)m, (long long)n);
        return BLAS_FAIL(s, st, what);
    }
    return 0;
}

int ts_cuda_rank(ts_stream *st, char prec, int two, char uplo, char trans, int64_t n, int64_t k, const void *alpha,
                 const void *A, int64_t lda, const void *B, int64_t ldb, const void *beta, void *C, int64_t ldc)
{
    if (!st) TS_RAISE(TS_ERR_ARG, "ts_cuda_rank: NULL stream");
    if (n == 0) return 0;
    if (!(fits_int(n) && fits_int(k) && fits_int(lda) && fits_int(ldb) && fits_int(ldc)))
        TS_RAISE(TS_ERR_ARG, "ts_cuda_rank: dimensions exceed the int range (n=%lld k=%lld)", (long long)n, (long long)k);
    cublasFillMode_t fm = (uplo == 'U' || uplo == 'u') ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
    cublasOperation_t op = (trans == 'N' || trans == 'n') ? CUBLAS_OP_N : CUBLAS_OP_T;
    int N = (int)n, K = (int)k, LA = (int)lda, LB = (int)ldb, LC = (int)ldc;
    cuda_handles *h;
    TS_CHECK(get_handles(st, 0, &h));
    cublasStatus_t s;
    switch (prec * 2 + two) {
    case 's' * 2: s = cublasSsyrk(h->blas, fm, op, N, K, alpha, A, LA, beta, C, LC); break;
    case 'd' * 2: s = cublasDsyrk(h->blas, fm, op, N, K, alpha, A, LA, beta, C, LC); break;
    case 'c' * 2: s = cublasCsyrk(h->blas, fm, op, N, K, alpha, A, LA, beta, C, LC); break;
    case 'z' * 2: s = cublasZsyrk(h->blas, fm, op, N, K, alpha, A, LA, beta, C, LC); break;
    case 's' * 2 + 1: s = cublasSsyr2k(h->blas, fm, op, N, K, alpha, A, LA, B, LB, beta, C, LC); break;
    case 'd' * 2 + 1: s = cublasDsyr2k(h->blas, fm, op, N, K, alpha, A, LA, B, LB, beta, C, LC); break;
    case 'c' * 2 + 1: s = cublasCsyr2k(h->blas, fm, op, N, K, alpha, A, LA, B, LB, beta, C, LC); break;
    case 'z' * 2 + 1: s = cublasZsyr2k(h->blas, fm, op, N, K, alpha, A, LA, B, LB, beta, C, LC); break;
    default: TS_RAISE(TS_ERR_ARG, "ts_cuda_rank: precision '%c'", prec);
    }
    if (s != CUBLAS_STATUS_SUCCESS) {
        char what[160];
        snprintf(what, sizeof what, "cublas%csyr%sk(%c%c, n=%lld, k=%lld)", prec - 'a' + 'A', two ? "2" : "", uplo, trans,
                 (long long)n, (long long)k);
        return BLAS_FAIL(s, st, what);
    }
    return 0;
}

// Synchronous on the stream: the workspace goes back to the arena and *info is read after the
// factorization has run (this is a baseline for comparisons, not a pipelined building block).
int ts_cuda_dgetrf(ts_stream *st, int64_t n, double *A, int64_t lda, int *ipiv_dev, int *info)
{
    if (!st) TS_RAISE(TS_ERR_ARG, "ts_cuda_dgetrf: NULL stream");
    if (!info) TS_RAISE(TS_ERR_ARG, "ts_cuda_dgetrf: info is NULL");
    *info = 0;
    if (n < 0) TS_RAISE(TS_ERR_ARG, "ts_cuda_dgetrf: n = %lld is negative", (long long)n);
    if (lda < (n > 1 ? n : 1))
        TS_RAISE(TS_ERR_ARG, "ts_cuda_dgetrf: lda = %lld < max(1, n = %lld)", (long long)lda, (long long)n);
    if (!ipiv_dev) TS_RAISE(TS_ERR_ARG, "ts_cuda_dgetrf: ipiv is NULL (cuSOLVER would not pivot)");
    if (n == 0) return 0;
    if (!fits_int(n) || !fits_int(lda))
        TS_RAISE(TS_ERR_UNSUPPORTED, "ts_cuda_dgetrf: n = %lld, lda = %lld exceed the 32-bit cuSOLVER API",
                 (long long)n, (long long)lda);
    cuda_handles *h;
    TS_CHECK(get_handles(st, 1, &h));
    int lwork = 0;
    cusolverStatus_t s = cusolverDnDgetrf_bufferSize(h->solver, (int)n, (int)n, A, (int)lda, &lwork);
    if (s != CUSOLVER_STATUS_SUCCESS) return SOLVER_FAIL(s, st, "cusolverDnDgetrf_bufferSize");

    // One arena block: devInfo in the first 256 bytes, the workspace after it.
    ts_device *d = ts_stream_device(st);
    void *block = NULL;
    TS_CHECK(ts_dmalloc(d, 256 + (size_t)lwork * sizeof(double), &block));
    int *info_dev = block;
    double *work = (double *)((char *)block + 256);
    int rc = 0;
    s = cusolverDnDgetrf(h->solver, (int)n, (int)n, A, (int)lda, work, ipiv_dev, info_dev);
    if (s != CUSOLVER_STATUS_SUCCESS) {
        char what[96];
        snprintf(what, sizeof what, "cusolverDnDgetrf(n = %lld)", (long long)n);
        rc = SOLVER_FAIL(s, st, what);
    }
    int hinfo = 0;
    if (rc == 0) rc = ts_copy_async(st, TS_COPY_D2H, &hinfo, info_dev, sizeof hinfo);
    // Even after a failure the queued work must finish before the workspace is reused; the first
    // error is the one reported.
    ts_error_info first = *ts_error_last();
    int rs = ts_stream_sync(st);
    if (rc == 0) rc = rs;
    else ts_error_set(first.code, first.file, first.line, "%s", first.message);
    ts_dfree(d, block);
    if (rc == 0) *info = hinfo;
    return rc;
}
