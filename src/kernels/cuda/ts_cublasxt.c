// ts_cublasxt.c: the cuBLASXt baseline: host-resident s/d/c/z GEMM and Level-3 routines over every CUDA device of a set (what the tile runtime must beat).
#include "kernels/cuda/ts_cuda_kernels.h"

#include "core/ts_error.h"
#include "kernels/ts_kernels.h"

#include <cublasXt.h>
#include <cuda_runtime_api.h>

#include <stdlib.h>
#include <string.h>

struct ts_cublasxt {
    cublasXtHandle_t h;
    int ndev;
    int block;
};

#define XT_FAIL(s, what) ts_error_set(TS_ERR_CUBLAS, __FILE__, __LINE__, "cuBLASXt %s: %s", (what), \
                                      cublasGetStatusString(s))

int ts_cublasxt_create(ts_devset *devs, int ndev, ts_cublasxt **out) {
    if (!out) TS_RAISE(TS_ERR_ARG, "ts_cublasxt_create: out is NULL");
    *out = NULL;
    int n = devs ? ts_devset_count(devs) : 0;
    if (ndev > 0 && ndev < n) n = ndev;
    if (n == 0 || ts_devset_backend(devs) != TS_BACKEND_CUDA)
        TS_RAISE(TS_ERR_UNSUPPORTED, "cuBLASXt needs CUDA devices (the set has %d %s device%s)", n,
                 devs ? ts_backend_name(ts_devset_backend(devs)) : "none", n == 1 ? "" : "s");
    ts_cublasxt *xt = calloc(1, sizeof *xt);
    if (!xt) TS_RAISE(TS_ERR_NOMEM, "ts_cublasxt_create: out of host memory");
    int ids[TS_MAX_DEVICES];
    for (int d = 0; d < n; d++) ids[d] = ts_device_props_of(ts_devset_device(devs, d))->native_id;
    cublasStatus_t s = cublasXtCreate(&xt->h);
    if (s != CUBLAS_STATUS_SUCCESS) {
        free(xt);
        return XT_FAIL(s, "cublasXtCreate");
    }
    s = cublasXtDeviceSelect(xt->h, n, ids);
    if (s != CUBLAS_STATUS_SUCCESS) {
        int rc = XT_FAIL(s, "cublasXtDeviceSelect");
        ts_cublasxt_destroy(xt);
        return rc;
    }
    // Host operands stay where they are: the caller pins them (the device layer's registry), like
    // the tile runtime; no CPU share (cublasXtSetCPURatio is not used).
    xt->ndev = n;
    *out = xt;
    return ts_cublasxt_set_block(xt, 4096);
}

int ts_cublasxt_set_block(ts_cublasxt *xt, int block) {
    if (!xt || block <= 0) TS_RAISE(TS_ERR_ARG, "ts_cublasxt_set_block: bad block %d", block);
    cublasStatus_t s = cublasXtSetBlockDim(xt->h, block);
    if (s != CUBLAS_STATUS_SUCCESS) return XT_FAIL(s, "cublasXtSetBlockDim");
    xt->block = block;
    return 0;
}

static cublasOperation_t op_of(char t) {
    return t == 'N' || t == 'n' ? CUBLAS_OP_N : t == 'T' || t == 't' ? CUBLAS_OP_T : CUBLAS_OP_C;
}

int ts_cublasxt_gemm(ts_cublasxt *xt, char prec, char ta, char tb, int64_t m, int64_t n, int64_t k,
                     const void *alpha, const void *A, int64_t lda, const void *B, int64_t ldb,
                     const void *beta, void *C, int64_t ldc) {
    if (!xt) TS_RAISE(TS_ERR_ARG, "ts_cublasxt_gemm: NULL context");
    TS_CHECK(ts_gemm_check_raise("ts_cublasxt_gemm", prec, ta, tb, m, n, k, lda, ldb, ldc));
    cublasOperation_t oa = op_of(ta), ob = op_of(tb);
    size_t M = (size_t)m, N = (size_t)n, K = (size_t)k, la = (size_t)lda, lb = (size_t)ldb, lc = (size_t)ldc;
    cublasStatus_t s;
    switch (prec) {
    case 's': s = cublasXtSgemm(xt->h, oa, ob, M, N, K, alpha, A, la, B, lb, beta, C, lc); break;
    case 'd': s = cublasXtDgemm(xt->h, oa, ob, M, N, K, alpha, A, la, B, lb, beta, C, lc); break;
    case 'c': s = cublasXtCgemm(xt->h, oa, ob, M, N, K, alpha, A, la, B, lb, beta, C, lc); break;
    default: s = cublasXtZgemm(xt->h, oa, ob, M, N, K, alpha, A, la, B, lb, beta, C, lc); break;
    }
    if (s != CUBLAS_STATUS_SUCCESS) {
        (void)cudaGetLastError();
        return XT_FAIL(s, "gemm");
    }
    return 0;
}

static cublasSideMode_t side_of(char s) { return s == 'L' || s == 'l' ? CUBLAS_SIDE_LEFT : CUBLAS_SIDE_RIGHT; }
static cublasFillMode_t fill_of(char u) { return u == 'L' || u == 'l' ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER; }
static cublasDiagType_t diag_of(char d) { return d == 'U' || d == 'u' ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT; }

// Common entry checks of the Level-3 wrappers: a context, a known precision, the Hermitian
// routines only in c/z, and the letter arguments the reference BLAS accepts.
static int l3_check(const char *who, const ts_cublasxt *xt, char prec, int herm, const char *letters,
                    const char *allowed[]) {
    if (!xt) TS_RAISE(TS_ERR_ARG, "%s: NULL context", who);
    if (prec != 's' && prec != 'd' && prec != 'c' && prec != 'z')
        TS_RAISE(TS_ERR_ARG, "%s: unknown precision '%c'", who, prec);
    if (herm && prec != 'c' && prec != 'z') TS_RAISE(TS_ERR_ARG, "%s: the Hermitian routine needs c or z", who);
    for (int i = 0; letters[i]; i++)
        if (!strchr(allowed[i], letters[i]))
            TS_RAISE(TS_ERR_ARG, "%s: argument %d is '%c' (one of %s)", who, i + 1, letters[i], allowed[i]);
    return 0;
}

static int l3_dims(const char *who, int64_t a, int64_t b, int64_t lda, int64_t ldb, int64_t ldc) {
    if (a < 0 || b < 0 || lda < 1 || ldb < 1 || ldc < 1)
        TS_RAISE(TS_ERR_ARG, "%s: bad dimensions (%lld, %lld, lda %lld, ldb %lld, ldc %lld)", who, (long long)a,
                 (long long)b, (long long)lda, (long long)ldb, (long long)ldc);
    return 0;
}

static int l3_status(cublasStatus_t s, const char *what) {
    if (s == CUBLAS_STATUS_SUCCESS) return 0;
    (void)cudaGetLastError();
    return XT_FAIL(s, what);
}

int ts_cublasxt_symm(ts_cublasxt *xt, char prec, int herm, char side, char uplo, int64_t m, int64_t n,
                     const void *alpha, const void *A, int64_t lda, const void *B, int64_t ldb, const void *beta,
                     void *C, int64_t ldc) {
    const char *who = herm ? "ts_cublasxt_hemm" : "ts_cublasxt_symm";
    const char *allowed[] = {"LRlr", "ULul"};
    TS_CHECK(l3_check(who, xt, prec, herm, (char[]){side, uplo, 0}, allowed));
    TS_CHECK(l3_dims(who, m, n, lda, ldb, ldc));
    cublasSideMode_t sd = side_of(side);
    cublasFillMode_t ul = fill_of(uplo);
    size_t M = (size_t)m, N = (size_t)n, la = (size_t)lda, lb = (size_t)ldb, lc = (size_t)ldc;
    cublasStatus_t s;
    switch (prec) {
    case 's': s = cublasXtSsymm(xt->h, sd, ul, M, N, alpha, A, la, B, lb, beta, C, lc); break;
    case 'd': s = cublasXtDsymm(xt->h, sd, ul, M, N, alpha, A, la, B, lb, beta, C, lc); break;
    case 'c':
        s = herm ? cublasXtChemm(xt->h, sd, ul, M, N, alpha, A, la, B, lb, beta, C, lc)
                 : cublasXtCsymm(xt->h, sd, ul, M, N, alpha, A, la, B, lb, beta, C, lc);
        break;
    default:
        s = herm ? cublasXtZhemm(xt->h, sd, ul, M, N, alpha, A, la, B, lb, beta, C, lc)
                 : cublasXtZsymm(xt->h, sd, ul, M, N, alpha, A, la, B, lb, beta, C, lc);
        break;
    }
    return l3_status(s, herm ? "hemm" : "symm");
}

int ts_cublasxt_syrk(ts_cublasxt *xt, char prec, int herm, char uplo, char trans, int64_t n, int64_t k,
                     const void *alpha, const void *A, int64_t lda, const void *beta, void *C, int64_t ldc) {
    const char *who = herm ? "ts_cublasxt_herk" : "ts_cublasxt_syrk";
    const char *allowed[] = {"ULul", "NTCntc"};
    TS_CHECK(l3_check(who, xt, prec, herm, (char[]){uplo, trans, 0}, allowed));
    TS_CHECK(l3_dims(who, n, k, lda, 1, ldc));
    cublasFillMode_t ul = fill_of(uplo);
    cublasOperation_t op = op_of(trans);
    size_t N = (size_t)n, K = (size_t)k, la = (size_t)lda, lc = (size_t)ldc;
    cublasStatus_t s;
    switch (prec) {
    case 's': s = cublasXtSsyrk(xt->h, ul, op, N, K, alpha, A, la, beta, C, lc); break;
    case 'd': s = cublasXtDsyrk(xt->h, ul, op, N, K, alpha, A, la, beta, C, lc); break;
    case 'c':
        s = herm ? cublasXtCherk(xt->h, ul, op, N, K, alpha, A, la, beta, C, lc)
                 : cublasXtCsyrk(xt->h, ul, op, N, K, alpha, A, la, beta, C, lc);
        break;
    default:
        s = herm ? cublasXtZherk(xt->h, ul, op, N, K, alpha, A, la, beta, C, lc)
                 : cublasXtZsyrk(xt->h, ul, op, N, K, alpha, A, la, beta, C, lc);
        break;
    }
    return l3_status(s, herm ? "herk" : "syrk");
}

int ts_cublasxt_syr2k(ts_cublasxt *xt, char prec, int herm, char uplo, char trans, int64_t n, int64_t k,
                      const void *alpha, const void *A, int64_t lda, const void *B, int64_t ldb, const void *beta,
                      void *C, int64_t ldc) {
    const char *who = herm ? "ts_cublasxt_her2k" : "ts_cublasxt_syr2k";
    const char *allowed[] = {"ULul", "NTCntc"};
    TS_CHECK(l3_check(who, xt, prec, herm, (char[]){uplo, trans, 0}, allowed));
    TS_CHECK(l3_dims(who, n, k, lda, ldb, ldc));
    cublasFillMode_t ul = fill_of(uplo);
    cublasOperation_t op = op_of(trans);
    size_t N = (size_t)n, K = (size_t)k, la = (size_t)lda, lb = (size_t)ldb, lc = (size_t)ldc;
    cublasStatus_t s;
    switch (prec) {
    case 's': s = cublasXtSsyr2k(xt->h, ul, op, N, K, alpha, A, la, B, lb, beta, C, lc); break;
    case 'd': s = cublasXtDsyr2k(xt->h, ul, op, N, K, alpha, A, la, B, lb, beta, C, lc); break;
    case 'c':
        s = herm ? cublasXtCher2k(xt->h, ul, op, N, K, alpha, A, la, B, lb, beta, C, lc)
                 : cublasXtCsyr2k(xt->h, ul, op, N, K, alpha, A, la, B, lb, beta, C, lc);
        break;
    default:
        s = herm ? cublasXtZher2k(xt->h, ul, op, N, K, alpha, A, la, B, lb, beta, C, lc)
                 : cublasXtZsyr2k(xt->h, ul, op, N, K, alpha, A, la, B, lb, beta, C, lc);
        break;
    }
    return l3_status(s, herm ? "her2k" : "syr2k");
}

int ts_cublasxt_trmm(ts_cublasxt *xt, char prec, char side, char uplo, char transa, char diag, int64_t m,
                     int64_t n, const void *alpha, const void *A, int64_t lda, const void *B, int64_t ldb, void *C,
                     int64_t ldc) {
    const char *allowed[] = {"LRlr", "ULul", "NTCntc", "NUnu"};
    TS_CHECK(l3_check("ts_cublasxt_trmm", xt, prec, 0, (char[]){side, uplo, transa, diag, 0}, allowed));
    TS_CHECK(l3_dims("ts_cublasxt_trmm", m, n, lda, ldb, ldc));
    cublasSideMode_t sd = side_of(side);
    cublasFillMode_t ul = fill_of(uplo);
    cublasOperation_t op = op_of(transa);
    cublasDiagType_t dg = diag_of(diag);
    size_t M = (size_t)m, N = (size_t)n, la = (size_t)lda, lb = (size_t)ldb, lc = (size_t)ldc;
    cublasStatus_t s;
    switch (prec) {
    case 's': s = cublasXtStrmm(xt->h, sd, ul, op, dg, M, N, alpha, A, la, B, lb, C, lc); break;
    case 'd': s = cublasXtDtrmm(xt->h, sd, ul, op, dg, M, N, alpha, A, la, B, lb, C, lc); break;
    case 'c': s = cublasXtCtrmm(xt->h, sd, ul, op, dg, M, N, alpha, A, la, B, lb, C, lc); break;
    default: s = cublasXtZtrmm(xt->h, sd, ul, op, dg, M, N, alpha, A, la, B, lb, C, lc); break;
    }
    return l3_status(s, "trmm");
}

int ts_cublasxt_trsm(ts_cublasxt *xt, char prec, char side, char uplo, char transa, char diag, int64_t m,
                     int64_t n, const void *alpha, const void *A, int64_t lda, void *B, int64_t ldb) {
    const char *allowed[] = {"LRlr", "ULul", "NTCntc", "NUnu"};
    TS_CHECK(l3_check("ts_cublasxt_trsm", xt, prec, 0, (char[]){side, uplo, transa, diag, 0}, allowed));
    TS_CHECK(l3_dims("ts_cublasxt_trsm", m, n, lda, ldb, 1));
    cublasSideMode_t sd = side_of(side);
    cublasFillMode_t ul = fill_of(uplo);
    cublasOperation_t op = op_of(transa);
    cublasDiagType_t dg = diag_of(diag);
    size_t M = (size_t)m, N = (size_t)n, la = (size_t)lda, lb = (size_t)ldb;
    cublasStatus_t s;
    switch (prec) {
    case 's': s = cublasXtStrsm(xt->h, sd, ul, op, dg, M, N, alpha, A, la, B, lb); break;
    case 'd': s = cublasXtDtrsm(xt->h, sd, ul, op, dg, M, N, alpha, A, la, B, lb); break;
    case 'c': s = cublasXtCtrsm(xt->h, sd, ul, op, dg, M, N, alpha, A, la, B, lb); break;
    default: s = cublasXtZtrsm(xt->h, sd, ul, op, dg, M, N, alpha, A, la, B, lb); break;
    }
    return l3_status(s, "trsm");
}

void ts_cublasxt_destroy(ts_cublasxt *xt) {
    if (!xt) return;
    if (xt->h) (void)cublasXtDestroy(xt->h);
    (void)cudaGetLastError();
    free(xt);
}
