// ts_cublasxt.c: the cuBLASXt baseline: host-resident s/d/c/z GEMM over every CUDA device of a set (what the tile runtime must beat).
#include "kernels/cuda/ts_cuda_kernels.h"

#include "core/ts_error.h"
#include "kernels/ts_kernels.h"

#include <cublasXt.h>
#include <cuda_runtime_api.h>

#include <stdlib.h>

struct ts_cublasxt {
    cublasXtHandle_t h;
    int ndev;
    int block;
};

#define XT_FAIL(s, what) ts_error_set(TS_ERR_CUBLAS, __FILE__, __LINE__, "cuBLASXt %s: %s", (what), \
                                      cublasGetStatusString(s))

int ts_cublasxt_create(ts_devset *devs, ts_cublasxt **out) {
    if (!out) TS_RAISE(TS_ERR_ARG, "ts_cublasxt_create: out is NULL");
    *out = NULL;
    int n = devs ? ts_devset_count(devs) : 0;
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

void ts_cublasxt_destroy(ts_cublasxt *xt) {
    if (!xt) return;
    if (xt->h) (void)cublasXtDestroy(xt->h);
    (void)cudaGetLastError();
    free(xt);
}
