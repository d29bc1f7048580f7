// ts_lu_kernels.c: LU helper kernels (row gather/scatter) as ts_kernels: the CPU version and the enqueue side.
#include "kernels/ts_lu_kernels.h"

#include <cblas.h>
#include <stdlib.h>
#include <string.h>

#include "core/ts_env.h"
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

int ts_lu_swap_cpu(void *vargs) {
    const ts_lu_swap_args *a = vargs;
    double *v = malloc(sizeof(double) * (size_t)(a->npack > 0 ? a->npack : 1));
    if (!v) TS_RAISE(TS_ERR_NOMEM, "lu_swap_rows: %lld values", (long long)a->npack);
    for (int64_t c = 0; c < a->nc; c++) {
        double *col = a->A + c * a->lda;
        for (int64_t t = 0; t < a->npack; t++) v[t] = col[a->pk[t]];
        double *u = a->U + c * a->ldu;
        for (int64_t i = 0; i < a->jb; i++) u[i] = v[a->ub[i]];
        for (int64_t t = 0; t < a->nown; t++) col[a->al[t]] = v[a->ab[t]];
    }
    free(v);
    return 0;
}

int ts_lu_swap_rows_fits(int64_t npack, int64_t jb, int64_t nown, int64_t rows) {
    if (npack < 0 || jb < 0 || nown < 0 || rows > INT32_MAX) return 0;
    return TS_LU_SWAP_SMEM(npack, jb, nown) <= TS_LU_SWAP_SMEM_MAX;
}

int ts_lu_swap_rows(ts_stream *st, double *A, int64_t lda, const int64_t *pk, int64_t npack,
                    const int64_t *ub, int64_t jb, double *U, int64_t ldu, const int64_t *al,
                    const int64_t *ab, int64_t nown, int64_t nc) {
    if (nc <= 0 || (jb <= 0 && nown <= 0)) return 0;
    if (!st || !A || !U || !pk || !ub || (nown > 0 && (!al || !ab)))
        TS_RAISE(TS_ERR_ARG, "lu_swap_rows: NULL argument");
    if (lda < 1 || ldu < jb) TS_RAISE(TS_ERR_ARG, "lu_swap_rows: lda %lld, ldu %lld < jb %lld", (long long)lda,
                                      (long long)ldu, (long long)jb);
    if (!ts_lu_swap_rows_fits(npack, jb, nown, lda))
        TS_RAISE(TS_ERR_UNSUPPORTED, "lu_swap_rows: %lld rows (jb %lld, %lld changed) need %zu bytes of shared memory (at most %zu)",
                 (long long)npack, (long long)jb, (long long)nown, TS_LU_SWAP_SMEM(npack, jb, nown), TS_LU_SWAP_SMEM_MAX);
    ts_lu_swap_args a = {A, U, pk, ub, al, ab, lda, ldu, npack, jb, nown, nc};
    ts_kernel k = {"lu_swap_rows", 0.0, ts_lu_swap_cpu,
#if TS_HAVE_CUDA
                   ts_lu_swap_cuda,
#else
                   NULL,
#endif
                   &a, sizeof a};
    return ts_kernel_enqueue(st, &k);
}

int ts_lu_swapt_cpu(void *vargs) {
    const ts_lu_swapt_args *a = vargs;
    for (int64_t i = 0; i < a->jb; i++)
        memcpy(a->Ut + i * a->ldut, a->At + a->pk[a->ub[i]] * a->ldt, sizeof(double) * (size_t)a->nc);
    for (int64_t t = 0; t < a->nown; t++)
        memcpy(a->At + a->al[t] * a->ldt, a->At + a->pk[a->ab[t]] * a->ldt, sizeof(double) * (size_t)a->nc);
    return 0;
}

int ts_lu_swap_plan_t_ok(const int64_t *pk, const int64_t *al, const int64_t *ab, int64_t nown) {
    // al is short (at most jb entries): a sorted copy and a binary search per source
    if (nown <= 0) return 1;
    int64_t *s = malloc(sizeof(int64_t) * (size_t)nown);
    if (!s) return 0;
    memcpy(s, al, sizeof(int64_t) * (size_t)nown);
    for (int64_t i = 1; i < nown; i++) { // insertion sort: al is nearly sorted (ascending S order)
        int64_t v = s[i], k = i - 1;
        while (k >= 0 && s[k] > v) s[k + 1] = s[k], k--;
        s[k + 1] = v;
    }
    int ok = 1;
    for (int64_t t = 0; t < nown && ok; t++) {
        int64_t r = pk[ab[t]], lo = 0, hi = nown - 1;
        while (lo <= hi) {
            int64_t mid = (lo + hi) / 2;
            if (s[mid] == r) {
                ok = 0;
                break;
            }
            if (s[mid] < r) lo = mid + 1;
            else hi = mid - 1;
        }
    }
    free(s);
    return ok;
}

int ts_lu_swap_rows_t(ts_stream *st, double *At, int64_t ldt, const int64_t *pk, const int64_t *ub,
                      int64_t jb, double *Ut, int64_t ldut, const int64_t *al, const int64_t *ab,
                      int64_t nown, int64_t nc) {
    if (nc <= 0 || (jb <= 0 && nown <= 0)) return 0;
    if (!st || !At || !pk || (jb > 0 && (!Ut || !ub)) || (nown > 0 && (!al || !ab)))
        TS_RAISE(TS_ERR_ARG, "lu_swap_rows_t: NULL argument");
    if (ldt < nc || (jb > 0 && ldut < nc))
        TS_RAISE(TS_ERR_ARG, "lu_swap_rows_t: ldt %lld, ldut %lld < nc %lld", (long long)ldt, (long long)ldut,
                 (long long)nc);
    ts_lu_swapt_args a = {At, Ut, pk, ub, al, ab, ldt, ldut, jb, nown, nc};
    ts_kernel k = {"lu_swap_rows_t", 0.0, ts_lu_swapt_cpu,
#if TS_HAVE_CUDA
                   ts_lu_swapt_cuda,
#else
                   NULL,
#endif
                   &a, sizeof a};
    return ts_kernel_enqueue(st, &k);
}

int ts_lu_cols_cpu(void *vargs) {
    const ts_lu_cols_args *a = vargs;
    for (int64_t e = 0; e < a->n; e++)
        memcpy(a->D + (a->didx ? a->didx[e] : e) * a->ldd, a->S + a->sidx[e] * a->lds, sizeof(double) * (size_t)a->nc);
    return 0;
}

int ts_lu_copy_cols(ts_stream *st, const double *S, int64_t lds, const int64_t *sidx, int64_t n, int64_t nc,
                    double *D, int64_t ldd, const int64_t *didx) {
    if (n <= 0 || nc <= 0) return 0;
    if (!st || !S || !sidx || !D) TS_RAISE(TS_ERR_ARG, "lu_copy_cols: NULL argument");
    if (lds < nc || ldd < nc)
        TS_RAISE(TS_ERR_ARG, "lu_copy_cols: lds %lld, ldd %lld < nc %lld", (long long)lds, (long long)ldd,
                 (long long)nc);
    ts_lu_cols_args a = {S, D, sidx, didx, lds, ldd, n, nc};
    ts_kernel k = {"lu_copy_cols", 0.0, ts_lu_cols_cpu,
#if TS_HAVE_CUDA
                   ts_lu_cols_cuda,
#else
                   NULL,
#endif
                   &a, sizeof a};
    return ts_kernel_enqueue(st, &k);
}

int ts_lu_trans_cpu(void *vargs) {
    const ts_lu_trans_args *a = vargs;
    const int64_t B = 64; // blocks of 64 x 64, so that both sides stay in cache
    for (int64_t j0 = 0; j0 < a->n; j0 += B)
        for (int64_t i0 = 0; i0 < a->m; i0 += B) {
            int64_t j1 = j0 + B < a->n ? j0 + B : a->n, i1 = i0 + B < a->m ? i0 + B : a->m;
            for (int64_t j = j0; j < j1; j++)
                for (int64_t i = i0; i < i1; i++) a->dst[j + i * a->ldd] = a->src[i + j * a->lds];
        }
    return 0;
}

int ts_lu_transpose(ts_stream *st, int64_t m, int64_t n, const double *src, int64_t lds, double *dst,
                    int64_t ldd) {
    if (m <= 0 || n <= 0) return 0;
    if (!st || !src || !dst) TS_RAISE(TS_ERR_ARG, "lu_transpose: NULL argument");
    if (lds < m || ldd < n)
        TS_RAISE(TS_ERR_ARG, "lu_transpose: %lld x %lld with lds %lld, ldd %lld", (long long)m, (long long)n,
                 (long long)lds, (long long)ldd);
    ts_lu_trans_args a = {src, dst, m, n, lds, ldd};
    ts_kernel k = {"lu_transpose", 0.0, ts_lu_trans_cpu,
#if TS_HAVE_CUDA
                   ts_lu_trans_cuda,
#else
                   NULL,
#endif
                   &a, sizeof a};
    return ts_kernel_enqueue(st, &k);
}

// ---- panel LU ----

struct ts_lu_solver {
    ts_device *dev;
    void *handle;
    double *work;
    int lwork;
    int64_t max_m, max_n; // the largest panel its workspace was sized for
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

int ts_lu_env_getrf(int *alg) {
    const char *v = ts_env_str("TESSERA_LU_GETRF");
    *alg = TS_LU_GETRF_LEGACY;
    if (!v || !strcmp(v, "dgetrf")) return 0;
    if (!strcmp(v, "xgetrf")) *alg = TS_LU_GETRF_X0;
    else if (!strcmp(v, "xgetrf-alg1")) *alg = TS_LU_GETRF_X1;
    else TS_RAISE(TS_ERR_PARSE, "TESSERA_LU_GETRF=%s: expected dgetrf, xgetrf or xgetrf-alg1", v);
    return 0;
}

int ts_lu_env_leaf_grid(int *grid) {
    int g = 0, rc = ts_env_int("TESSERA_LU_LEAF_GRID", &g);
    *grid = 0;
    if (rc < 0) return rc;
    if (rc > 0 && g < 1) TS_RAISE(TS_ERR_PARSE, "TESSERA_LU_LEAF_GRID=%d: expected a block count >= 1", g);
    if (rc > 0) *grid = g;
    return 0;
}

int ts_lu_solver_create(ts_stream *st, int64_t max_m, int64_t max_n, ts_lu_solver **out) {
    *out = NULL;
    int alg;
    TS_CHECK(ts_lu_env_getrf(&alg));
    ts_lu_solver *sv = calloc(1, sizeof *sv);
    if (!sv) TS_RAISE(TS_ERR_NOMEM, "lu solver");
    sv->dev = ts_stream_device(st);
    sv->max_m = max_m;
    sv->max_n = max_n;
#if TS_HAVE_CUDA
    if (is_cuda(st)) {
        int rc = ts_lu_cusolver_create(&sv->handle, alg);
        if (rc == 0) rc = ts_lu_cusolver_lwork(sv->handle, max_m, max_n, NULL, max_m, &sv->lwork);
        if (rc == 0) rc = ts_dmalloc(sv->dev, (size_t)(sv->lwork + 1) * sizeof(double), (void **)&sv->work);
        if (rc < 0) {
            ts_lu_solver_destroy(sv);
            return rc;
        }
    }
#endif
    (void)alg;
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
    if (m > sv->max_m || n > sv->max_n) // cuSOLVER's workspace was sized for max_m x max_n
        TS_RAISE(TS_ERR_ARG, "ts_lu_dgetrf: %lld x %lld panel, the solver was made for %lld x %lld",
                 (long long)m, (long long)n, (long long)sv->max_m, (long long)sv->max_n);
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

// ---- HPL's recursive panel factorization (own kernels) ----

// The base case on host-addressable memory: HPL_pdpan{ll,cr,rl}N on one process row.
int ts_lu_leaf_cpu(void *vargs) {
    const ts_lu_leaf_args *a = vargs;
    double *A = a->A;
    int64_t lda = a->lda, m = a->m, off = a->off, end = a->off + a->nl;
    for (int64_t k = off; k < end; k++) {
        int64_t kk = k - off;
        if (a->pfact != 2 && kk > 0) { // left-looking and Crout bring column k up to date first
            if (a->pfact == 0)         // U part of column k (Crout has it from the row updates)
                cblas_dtrsv(CblasColMajor, CblasLower, CblasNoTrans, CblasUnit, (int)kk,
                            A + off + off * lda, (int)lda, A + off + k * lda, 1);
            cblas_dgemv(CblasColMajor, CblasNoTrans, (int)(m - k), (int)kk, -1.0, A + k + off * lda,
                        (int)lda, A + off + k * lda, 1, 1.0, A + k + k * lda, 1);
        }
        int64_t p = k + (int64_t)cblas_idamax((int)(m - k), A + k + k * lda, 1);
        a->ipiv[k] = (int)(p + 1);
        if (p != k) cblas_dswap((int)a->ncols, A + k, (int)lda, A + p, (int)lda);
        double piv = A[k + k * lda];
        if (piv != 0.0) {
            if (m - k > 1) cblas_dscal((int)(m - k - 1), 1.0 / piv, A + k + 1 + k * lda, 1);
        } else if (*a->info == 0) {
            *a->info = (int)(k + 1);
        }
        int64_t right = end - k - 1;
        if (right <= 0) continue;
        if (a->pfact == 2) {
            if (m - k > 1)
                cblas_dger(CblasColMajor, (int)(m - k - 1), (int)right, -1.0, A + k + 1 + k * lda, 1,
                           A + k + (k + 1) * lda, (int)lda, A + k + 1 + (k + 1) * lda, (int)lda);
        } else if (a->pfact == 1 && kk > 0) { // Crout: row k of U
            cblas_dgemv(CblasColMajor, CblasTrans, (int)kk, (int)right, -1.0, A + off + (k + 1) * lda,
                        (int)lda, A + k + off * lda, (int)lda, 1.0, A + k + (k + 1) * lda, (int)lda);
        }
    }
    return 0;
}

struct ts_lu_panel {
    ts_device *dev;
    ts_engine engine;
    double *scratch; // CUDA devices only
};

int ts_lu_panel_create(ts_stream *st, ts_engine engine, int64_t max_m, ts_lu_panel **out) {
    *out = NULL;
    (void)max_m; // the scratch does not depend on the panel height
    ts_lu_panel *pn = calloc(1, sizeof *pn);
    if (!pn) TS_RAISE(TS_ERR_NOMEM, "lu panel");
    pn->dev = ts_stream_device(st);
    pn->engine = engine;
    if (is_cuda(st)) {
        int rc = ts_dmalloc(pn->dev, TS_LU_LEAF_SCRATCH * sizeof(double), (void **)&pn->scratch);
        if (rc < 0) {
            free(pn);
            return rc;
        }
    }
    *out = pn;
    return 0;
}

void ts_lu_panel_destroy(ts_lu_panel *pn) {
    if (!pn) return;
    if (pn->scratch) ts_dfree(pn->dev, pn->scratch);
    free(pn);
}

// One factorization: where the BLAS calls go (a stream, or the host) and the panel.
typedef struct {
    ts_stream *st;          // NULL: host memory, CPU BLAS
    ts_lu_panel *pn;
    const ts_lu_panel_algo *alg;
    int nbmin, ndiv;
    double *A;
    int64_t lda, m, n;
    int *ipiv, *info;
    int rc;
} panel_rec;

// A[r:r+nr, c:c+nc] = L(r:r+nr, r:r+nr)^-1 A[r:r+nr, c:c+nc], L unit lower.
static void pr_trsm(panel_rec *f, int64_t r, int64_t nr, int64_t c, int64_t nc) {
    if (nr <= 0 || nc <= 0 || f->rc) return;
    double *L = f->A + r + r * f->lda, *B = f->A + r + c * f->lda;
    if (!f->st)
        cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasUnit, (int)nr, (int)nc,
                    1.0, L, (int)f->lda, B, (int)f->lda);
    else
        f->rc = ts_dev_dtrsm(f->st, 'L', 'L', 'N', 'U', nr, nc, 1.0, L, f->lda, B, f->lda);
}

// A[r:r+mm, c:c+nc] -= A[r:r+mm, a:a+ka] A[a:a+ka, c:c+nc]
static void pr_gemm(panel_rec *f, int64_t r, int64_t mm, int64_t c, int64_t nc, int64_t a, int64_t ka) {
    if (mm <= 0 || nc <= 0 || ka <= 0 || f->rc) return;
    int64_t lda = f->lda;
    const double *X = f->A + r + a * lda, *Y = f->A + a + c * lda;
    double *C = f->A + r + c * lda;
    if (!f->st) {
        cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int)mm, (int)nc, (int)ka, -1.0, X,
                    (int)lda, Y, (int)lda, 1.0, C, (int)lda);
    } else {
        const double mone = -1.0, one = 1.0;
        f->rc = ts_dev_gemm(f->st, f->pn->engine, 'd', 'N', 'N', mm, nc, ka, &mone, X, lda, Y, lda,
                            &one, C, lda);
    }
}

static void pr_leaf(panel_rec *f, int64_t off, int64_t nl) {
    if (f->rc) return;
    ts_lu_leaf_args a = {f->A, f->lda, f->m, f->n, off, nl, f->alg->pfact, f->alg->grid, f->ipiv, f->info,
                         f->pn ? f->pn->scratch : NULL, TS_LU_LEAF_SCRATCH};
    if (!f->st) {
        ts_lu_leaf_cpu(&a);
        return;
    }
    double flops = (double)(f->m - off) * (double)nl * (double)nl;
    ts_kernel k = {"lu_panel_leaf", flops, ts_lu_leaf_cpu,
#if TS_HAVE_CUDA
                   ts_lu_leaf_cuda,
#else
                   NULL,
#endif
                   &a, sizeof a};
    f->rc = ts_kernel_enqueue(f->st, &k);
}

// Columns [off, off+n): HPL_pdrpan{ll,cr,rl}N. On entry they are up to date with respect to
// columns [0, off); on return they hold L and U.
static void pr_rec(panel_rec *f, int64_t off, int64_t n) {
    if (n <= f->nbmin || n < 2) {
        pr_leaf(f, off, n);
        return;
    }
    int64_t w = (n + f->ndiv - 1) / f->ndiv;
    if (w >= n) w = (n + 1) / 2;
    int64_t end = off + n, m = f->m;
    for (int64_t c = off; c < end && f->rc == 0; c += w) {
        int64_t wc = end - c < w ? end - c : w;
        int64_t rest = end - c - wc;
        if (f->alg->rfact == 0) { // left-looking: bring the sub-panel up to date, then factor it
            pr_trsm(f, off, c - off, c, wc);
            pr_gemm(f, c, m - c, c, wc, off, c - off);
            pr_rec(f, c, wc);
        } else if (f->alg->rfact == 1) { // Crout: sub-panel columns, factor, then its rows of U
            pr_gemm(f, c, m - c, c, wc, off, c - off);
            pr_rec(f, c, wc);
            if (rest > 0) {
                pr_gemm(f, c, wc, c + wc, rest, off, c - off);
                pr_trsm(f, c, wc, c + wc, rest);
            }
        } else { // right-looking: factor, then update everything to the right
            pr_rec(f, c, wc);
            if (rest > 0) {
                pr_trsm(f, c, wc, c + wc, rest);
                pr_gemm(f, c + wc, m - c - wc, c + wc, rest, c, wc);
            }
        }
    }
}

static int panel_args_ok(const ts_lu_panel_algo *alg, int64_t m, int64_t n, int64_t lda) {
    if (!alg || alg->pfact < 0 || alg->pfact > 2 || alg->rfact < 0 || alg->rfact > 2)
        TS_RAISE(TS_ERR_ARG, "lu panel: PFACT and RFACT must be 0, 1 or 2");
    if (alg->grid < 0) TS_RAISE(TS_ERR_ARG, "lu panel: leaf grid %d < 0", alg->grid);
    if (m < n || lda < m || m > INT32_MAX || n > INT32_MAX)
        TS_RAISE(TS_ERR_ARG, "lu panel: m %lld < n %lld, lda %lld < m, or sizes beyond 32 bits",
                 (long long)m, (long long)n, (long long)lda);
    return 0;
}

static void panel_setup(panel_rec *f, const ts_lu_panel_algo *alg) {
    f->nbmin = alg->nbmin < 1 ? 1 : alg->nbmin > TS_LU_LEAF_MAX ? TS_LU_LEAF_MAX : alg->nbmin;
    f->ndiv = alg->ndiv < 2 ? 2 : alg->ndiv;
}

int ts_lu_panel_factor(ts_stream *st, ts_lu_panel *pn, const ts_lu_panel_algo *alg, int64_t m,
                       int64_t n, double *A, int64_t lda, int *ipiv, int *info) {
    if (!st || !pn || !A || !ipiv || !info) TS_RAISE(TS_ERR_ARG, "ts_lu_panel_factor: NULL argument");
    TS_CHECK(panel_args_ok(alg, m, n, lda));
    TS_CHECK(ts_memset_async(st, info, 0, sizeof(int)));
    if (m <= 0 || n <= 0) return 0;
    panel_rec f = {st, pn, alg, 0, 0, A, lda, m, n, ipiv, info, 0};
    panel_setup(&f, alg);
    pr_rec(&f, 0, n);
    return f.rc;
}

void ts_lu_panel_host(const ts_lu_panel_algo *alg, int64_t m, int64_t n, double *A, int64_t lda,
                      int *ipiv, int *info) {
    *info = 0;
    if (m <= 0 || n <= 0 || panel_args_ok(alg, m, n, lda) < 0) return;
    panel_rec f = {NULL, NULL, alg, 0, 0, A, lda, m, n, ipiv, info, 0};
    panel_setup(&f, alg);
    pr_rec(&f, 0, n);
}
