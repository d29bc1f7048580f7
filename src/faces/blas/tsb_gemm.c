// tsb_gemm.c: ?gemm_ and cblas_?gemm: reference argument checks and quick returns, then the tile runtime or the CPU BLAS.
#include <ctype.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/ts_error.h"
#include "tsb_internal.h"

typedef void (*fortran_gemm)(const char *, const char *, const tsb_int *, const tsb_int *, const tsb_int *, const void *,
                             const void *, const tsb_int *, const void *, const tsb_int *, const void *, void *,
                             const tsb_int *, size_t, size_t);

static const char precs[TSB_NROUTINES] = {'s', 'd', 'c', 'z'};
static const char *const fortran_names[TSB_NROUTINES] = {"sgemm_", "dgemm_", "cgemm_", "zgemm_"};
static const char *const xerbla_names[TSB_NROUTINES] = {"SGEMM ", "DGEMM ", "CGEMM ", "ZGEMM "};
static const char *const cblas_names[TSB_NROUTINES] = {"cblas_sgemm", "cblas_dgemm", "cblas_cgemm", "cblas_zgemm"};

// Scalars by precision: real s/d, complex c/z as (re, im) pairs.
static int scalar_is(int r, const void *x, double re) {
    switch (r) {
    case TSB_SGEMM: return *(const float *)x == (float)re;
    case TSB_DGEMM: return *(const double *)x == re;
    case TSB_CGEMM: return ((const float *)x)[0] == (float)re && ((const float *)x)[1] == 0.0f;
    default: return ((const double *)x)[0] == re && ((const double *)x)[1] == 0.0;
    }
}

static void gemm_cpu(int r, char ta, char tb, tsb_int m, tsb_int n, tsb_int k, const void *alpha, const void *A, tsb_int lda,
                     const void *B, tsb_int ldb, const void *beta, void *C, tsb_int ldc) {
    static void *_Atomic fns[TSB_NROUTINES]; // resolved CPU BLAS entry points (looked up once)
    void *f = atomic_load_explicit(&fns[r], memory_order_acquire);
    if (!f) {
        f = tsb_cpu_sym(fortran_names[r]);
        atomic_store_explicit(&fns[r], f, memory_order_release);
    }
    // the CPU BLAS is Fortran-callable: pass the two hidden CHARACTER lengths
    ((fortran_gemm)f)(&ta, &tb, &m, &n, &k, alpha, A, &lda, B, &ldb, beta, C, &ldc, 1, 1);
}

// Arguments already checked. The reference quick return, then where the call runs.
static void gemm_run(int r, char ta, char tb, tsb_int m, tsb_int n, tsb_int k, const void *alpha, const void *A, tsb_int lda,
                     const void *B, tsb_int ldb, const void *beta, void *C, tsb_int ldc, const char *api) {
    if (m == 0 || n == 0 || ((scalar_is(r, alpha, 0.0) || k == 0) && scalar_is(r, beta, 1.0))) {
        tsb_trace("%s ta=%c tb=%c m=%lld n=%lld k=%lld where=none (quick return)", api, ta, tb, (long long)m, (long long)n, (long long)k);
        return;
    }
    const tsb_config *cfg = tsb_config_get();
    const char *why = NULL;
    ts_tiles *rt = NULL;
    if (cfg->disabled[r]) why = "disabled";
    else if (k == 0 || scalar_is(r, alpha, 0.0)) why = "C = beta C only"; // no product to offload
    else if ((double)m * n * k < (double)cfg->threshold[r]) why = "below threshold";
    else if (!(rt = tsb_runtime_get())) why = "no runtime";
    if (why) {
        tsb_trace("%s ta=%c tb=%c m=%lld n=%lld k=%lld where=cpu-blas (%s)", api, ta, tb, (long long)m, (long long)n, (long long)k, why);
        gemm_cpu(r, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
        return;
    }
    // the runtime takes 'N', 'T', 'C'; for real data a conjugate transpose is a transpose
    char rta = (char)toupper((unsigned char)ta), rtb = (char)toupper((unsigned char)tb);
    if (r == TSB_SGEMM || r == TSB_DGEMM) {
        if (rta == 'C') rta = 'T';
        if (rtb == 'C') rtb = 'T';
    }
    ts_tiles_stats st;
    int rc = ts_tiles_gemm(rt, precs[r], rta, rtb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, &st);
    if (rc != 0) {
        // C may be partly updated: no correct result can be returned through the BLAS interface
        fprintf(stderr, "tessera_blas: %s (m=%lld n=%lld k=%lld) failed on the tile runtime: %s\n", api, (long long)m, (long long)n, (long long)k,
                ts_error_string());
        abort();
    }
    int64_t dev_tiles = 0;
    for (int d = 0; d < st.ndev && d < TS_MAX_DEVICES; d++) dev_tiles += st.tiles_dev[d];
    tsb_trace("%s ta=%c tb=%c m=%lld n=%lld k=%lld where=runtime devices=%d tiles=%lld dev_tiles=%lld cpu_tiles=%lld "
              "seconds=%.6f",
              api, ta, tb, (long long)m, (long long)n, (long long)k, st.ndev, (long long)st.tiles, (long long)dev_tiles, (long long)st.tiles_cpu,
              st.seconds);
}

static void fortran_gemm_entry(int r, const char *ta, const char *tb, const tsb_int *m, const tsb_int *n, const tsb_int *k,
                               const void *alpha, const void *A, const tsb_int *lda, const void *B, const tsb_int *ldb,
                               const void *beta, void *C, const tsb_int *ldc) {
    tsb_int info = ts_gemm_check_args(*ta, *tb, *m, *n, *k, *lda, *ldb, *ldc);
    if (info) {
        xerbla_(xerbla_names[r], &info, 6); // the reference passes the blank-padded 6-character name
        return;
    }
    gemm_run(r, *ta, *tb, *m, *n, *k, alpha, A, *lda, B, *ldb, beta, C, *ldc, fortran_names[r]);
}

// C = alpha op(A) op(B) + beta C, Fortran interface (the trailing hidden lengths are ignored).
#define TSB_FORTRAN_GEMM(name, r)                                                                            \
    TSB_EXPORT void name(const char *ta, const char *tb, const tsb_int *m, const tsb_int *n, const tsb_int *k,            \
                         const void *alpha, const void *A, const tsb_int *lda, const void *B, const tsb_int *ldb,     \
                         const void *beta, void *C, const tsb_int *ldc, size_t lta, size_t ltb);                  \
    void name(const char *ta, const char *tb, const tsb_int *m, const tsb_int *n, const tsb_int *k, const void *alpha,    \
              const void *A, const tsb_int *lda, const void *B, const tsb_int *ldb, const void *beta, void *C,        \
              const tsb_int *ldc, size_t lta, size_t ltb) {                                                       \
        fortran_gemm_entry(r, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);                         \
    }
TSB_FORTRAN_GEMM(sgemm_, TSB_SGEMM)
TSB_FORTRAN_GEMM(dgemm_, TSB_DGEMM)
TSB_FORTRAN_GEMM(cgemm_, TSB_CGEMM)
TSB_FORTRAN_GEMM(zgemm_, TSB_ZGEMM)

static char trans_char(int t) {
    return t == TSB_NO_TRANS ? 'N' : t == TSB_TRANS ? 'T' : t == TSB_CONJ_TRANS ? 'C' : 0;
}

static void cblas_error(int r, int row_major, int pos, const char *form, int value) {
    RowMajorStrg = row_major; // read by cblas_xerbla to map the position back (reference CBLAS)
    cblas_xerbla(pos, cblas_names[r], form, value);
    RowMajorStrg = 0;
}

// CBLAS: column-major runs directly; row-major as the transposed column-major problem
// C^T = alpha op(B)^T op(A)^T + beta C^T (Reference CBLAS/src/cblas_dgemm.c).
static void cblas_gemm_entry(int r, int layout, int TA, int TB, tsb_int M, tsb_int N, tsb_int K, const void *alpha,
                             const void *A, tsb_int lda, const void *B, tsb_int ldb, const void *beta, void *C, tsb_int ldc) {
    if (layout != TSB_COL_MAJOR && layout != TSB_ROW_MAJOR) {
        cblas_error(r, 0, 1, "Illegal layout setting, %d\n", layout);
        return;
    }
    int row = layout == TSB_ROW_MAJOR;
    char ta = trans_char(TA), tb = trans_char(TB);
    if (!ta) {
        cblas_error(r, row, 2, "Illegal TransA setting, %d\n", TA);
        return;
    }
    if (!tb) {
        cblas_error(r, row, 3, "Illegal TransB setting, %d\n", TB);
        return;
    }
    if (row) {
        char t = ta;
        ta = tb;
        tb = t;
        tsb_int i = M;
        M = N;
        N = i;
        const void *p = A;
        A = B;
        B = p;
        i = lda;
        lda = ldb;
        ldb = i;
    }
    int info = ts_gemm_check_args(ta, tb, M, N, K, lda, ldb, ldc);
    if (info) {
        // positions count the layout argument: Fortran position + 1 (swapped back for row-major)
        cblas_error(r, row, info + 1, "", 0);
        return;
    }
    gemm_run(r, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, cblas_names[r]);
}

TSB_EXPORT void cblas_sgemm(int layout, int TA, int TB, tsb_int M, tsb_int N, tsb_int K, float alpha, const float *A, tsb_int lda,
                            const float *B, tsb_int ldb, float beta, float *C, tsb_int ldc);
TSB_EXPORT void cblas_dgemm(int layout, int TA, int TB, tsb_int M, tsb_int N, tsb_int K, double alpha, const double *A, tsb_int lda,
                            const double *B, tsb_int ldb, double beta, double *C, tsb_int ldc);
TSB_EXPORT void cblas_cgemm(int layout, int TA, int TB, tsb_int M, tsb_int N, tsb_int K, const void *alpha, const void *A,
                            tsb_int lda, const void *B, tsb_int ldb, const void *beta, void *C, tsb_int ldc);
TSB_EXPORT void cblas_zgemm(int layout, int TA, int TB, tsb_int M, tsb_int N, tsb_int K, const void *alpha, const void *A,
                            tsb_int lda, const void *B, tsb_int ldb, const void *beta, void *C, tsb_int ldc);

void cblas_sgemm(int layout, int TA, int TB, tsb_int M, tsb_int N, tsb_int K, float alpha, const float *A, tsb_int lda,
                 const float *B, tsb_int ldb, float beta, float *C, tsb_int ldc) {
    cblas_gemm_entry(TSB_SGEMM, layout, TA, TB, M, N, K, &alpha, A, lda, B, ldb, &beta, C, ldc);
}
void cblas_dgemm(int layout, int TA, int TB, tsb_int M, tsb_int N, tsb_int K, double alpha, const double *A, tsb_int lda,
                 const double *B, tsb_int ldb, double beta, double *C, tsb_int ldc) {
    cblas_gemm_entry(TSB_DGEMM, layout, TA, TB, M, N, K, &alpha, A, lda, B, ldb, &beta, C, ldc);
}
void cblas_cgemm(int layout, int TA, int TB, tsb_int M, tsb_int N, tsb_int K, const void *alpha, const void *A, tsb_int lda,
                 const void *B, tsb_int ldb, const void *beta, void *C, tsb_int ldc) {
    cblas_gemm_entry(TSB_CGEMM, layout, TA, TB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}
void cblas_zgemm(int layout, int TA, int TB, tsb_int M, tsb_int N, tsb_int K, const void *alpha, const void *A, tsb_int lda,
                 const void *B, tsb_int ldb, const void *beta, void *C, tsb_int ldc) {
    cblas_gemm_entry(TSB_ZGEMM, layout, TA, TB, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}
