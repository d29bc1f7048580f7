// ts_lu_kernels.c: LU helper kernels (row gather/scatter) as ts_kernels: the CPU version and the enqueue side.
#include "kernels/ts_lu_kernels.h"

#include <cblas.h>
#include <stdlib.h>

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

// ---- panel LU ----

struct ts_lu_solver {
    ts_device *dev;
    void *handle;
    double *work;
    int lwork;
};

// Recursive LU with partial pivoting (LAPACK dgetrf2): left half, update, right half, swaps back.
static void getrf_rec(int64_t m, int64_t n, double *A, int64_t lda, int *ipiv, int64_t off, int *info) {
    if (n == 1) {
        int64_t p = m > 0 ? (int64_t)cblas_idamax((int)m, A, 1) : 0;
        ipiv[0] = (int)(p + 1);
        if (m > 0 && A[p] != 0.0) {
            if (p) {
                double t = A[0];
                A[0] = A[p];
                A[p] = t;
            }
            if (m > 1) cblas_dscal((int)(m - 1), 1.0 / A[0], A + 1, 1);
        } else if (*info == 0) {
            *info = (int)(off + 1);
        }
        return;
    }
    int64_t n1 = n / 2, n2 = n - n1;
    getrf_rec(m, n1, A, lda, ipiv, off, info);
    double *A12 = A + n1 * lda, *A21 = A + n1, *A22 = A + n1 + n1 * lda;
    for (int64_t i = 0; i < n1; i++) // the left half's swaps on the right half
        if (ipiv[i] - 1 != i) cblas_dswap((int)n2, A12 + i, (int)lda, A12 + ipiv[i] - 1, (int)lda);
    cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasUnit, (int)n1, (int)n2, 1.0,
                A, (int)lda, A12, (int)lda);
    if (m > n1)
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int)(m - n1), (int)n2, (int)n1, -1.0,
                    A21, (int)lda, A12, (int)lda, 1.0, A22, (int)lda);
    getrf_rec(m - n1, n2, A22, lda, ipiv + n1, off + n1, info);
    for (int64_t i = n1; i < n; i++) { // the right half's swaps on the left half
        ipiv[i] += (int)n1;
        if (ipiv[i] - 1 != i) cblas_dswap((int)n1, A + i, (int)lda, A + ipiv[i] - 1, (int)lda);
    }
}

void ts_lu_dgetrf_host(int64_t m, int64_t n, double *A, int64_t lda, int *ipiv, int *info) {
    *info = 0;
    if (m <= 0 || n <= 0) return;
    getrf_rec(m, n < m ? n : m, A, lda, ipiv, 0, info);
}

int ts_lu_getrf_cpu(void *vargs) {
    ts_lu_getrf_args *a = vargs;
    ts_lu_dgetrf_host(a->m, a->n, a->A, a->lda, a->ipiv, a->info);
    return 0;
}

static int is_cuda(ts_stream *st) {
    return ts_devset_backend(ts_device_set(ts_stream_device(st))) == TS_BACKEND_CUDA;
}

int ts_lu_solver_create(ts_stream *st, int64_t max_m, int64_t max_n, ts_lu_solver **out) {
    *out = NULL;
    ts_lu_solver *sv = calloc(1, sizeof *sv);
    if (!sv) TS_RAISE(TS_ERR_NOMEM, "lu solver");
    sv->dev = ts_stream_device(st);
#if TS_HAVE_CUDA
    if (is_cuda(st)) {
        int rc = ts_lu_cusolver_create(&sv->handle);
        if (rc == 0) rc = ts_lu_cusolver_lwork(sv->handle, max_m, max_n, NULL, max_m, &sv->lwork);
        if (rc == 0) rc = ts_dmalloc(sv->dev, (size_t)(sv->lwork + 1) * sizeof(double), (void **)&sv->work);
        if (rc < 0) {
            ts_lu_solver_destroy(sv);
            return rc;
        }
    }
#endif
    *out = sv;
    return 0;
}

void ts_lu_solver_destroy(ts_lu_solver *sv) {
    if (!sv) return;
#if TS_HAVE_CUDA
    if (sv->work) ts_dfree(sv->dev, sv->work);
    if (sv->handle) ts_lu_cusolver_destroy(sv->handle);
#endif
    free(sv);
}

int ts_lu_dgetrf(ts_stream *st, ts_lu_solver *sv, int64_t m, int64_t n, double *A, int64_t lda,
                 int *ipiv, int *info) {
    if (m <= 0 || n <= 0) return 0;
    if (!st || !sv || !A || !ipiv || !info) TS_RAISE(TS_ERR_ARG, "ts_lu_dgetrf: NULL argument");
    if (m < n || lda < m) TS_RAISE(TS_ERR_ARG, "ts_lu_dgetrf: m %lld < n %lld or lda %lld < m",
                                   (long long)m, (long long)n, (long long)lda);
    ts_lu_getrf_args a = {sv->handle, sv->work, sv->lwork, A, ipiv, info, m, n, lda};
    ts_kernel k = {"lu_dgetrf", (double)m * n * n, ts_lu_getrf_cpu,
#if TS_HAVE_CUDA
                   ts_lu_getrf_cuda,
#else
                   NULL,
#endif
                   &a, sizeof a};
    (void)is_cuda;
    return ts_kernel_enqueue(st, &k);
}
