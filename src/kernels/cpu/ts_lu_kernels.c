// ts_lu_kernels.c: LU helper kernels (row gather/scatter) as ts_kernels: the CPU version and the enqueue side.
#include "kernels/ts_lu_kernels.h"

#include "core/ts_error.h"
#include "ts_config.h"

int ts_lu_rows_cpu(void *vargs) {
    const ts_lu_rows_args *a = vargs;
    if (!a->unpack) {
        for (int64_t c = 0; c < a->nc; c++) {
            const double *col = a->src + c * a->lda;
            for (int64_t i = 0; i < a->n; i++) a->dst[i * a->nc + c] = col[a->aidx[i]];
        }
    } else {
        for (int64_t c = 0; c < a->nc; c++) {
            double *col = a->dst + c * a->lda;
            for (int64_t i = 0; i < a->n; i++)
                col[a->aidx[i]] = a->src[(a->bidx ? a->bidx[i] : i) * a->nc + c];
        }
    }
    return 0;
}

static int enqueue(ts_stream *st, const ts_lu_rows_args *a, const char *name) {
    if (a->n <= 0 || a->nc <= 0) return 0;
    if (!st || !a->src || !a->dst || !a->aidx) TS_RAISE(TS_ERR_ARG, "%s: NULL argument", name);
    if (a->lda < 1) TS_RAISE(TS_ERR_ARG, "%s: lda %lld < 1", name, (long long)a->lda);
    ts_kernel k = {name, 0.0, ts_lu_rows_cpu,
#if TS_HAVE_CUDA
                   ts_lu_rows_cuda,
#else
                   NULL,
#endif
                   a, sizeof *a};
    return ts_kernel_enqueue(st, &k);
}

int ts_lu_pack_rows(ts_stream *st, const double *A, int64_t lda, const int64_t *idx, int64_t n,
                    int64_t nc, double *buf) {
    ts_lu_rows_args a = {0, A, buf, NULL, idx, n, nc, lda};
    return enqueue(st, &a, "lu_pack_rows");
}

int ts_lu_unpack_rows(ts_stream *st, const double *buf, const int64_t *bidx, int64_t n, int64_t nc,
                      double *A, int64_t lda, const int64_t *aidx) {
    ts_lu_rows_args a = {1, buf, A, bidx, aidx, n, nc, lda};
    return enqueue(st, &a, "lu_unpack_rows");
}
