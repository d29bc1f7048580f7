// ts_cpu_blas.c: the system CPU BLAS behind the kernels contract (CBLAS, column-major; OpenBLAS).
#include <cblas.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "core/ts_error.h"
#include "kernels/ts_kernels.h"
#include "kernels/ts_l3.h"
#include "ts_config.h"

// OpenBLAS's cblas.h includes openblas_config.h, which defines OPENBLAS_VERSION; with another
// CBLAS the OpenBLAS extensions (config string, thread count) are not there.
#ifdef OPENBLAS_VERSION
#define TS_OPENBLAS 1
#else
#define TS_OPENBLAS 0
#endif

static enum CBLAS_TRANSPOSE cblas_op(char t) {
    return (t == 'N' || t == 'n') ? CblasNoTrans : (t == 'T' || t == 't') ? CblasTrans : CblasConjTrans;
}

static int fits_int(int64_t v) { return v <= INT_MAX; }

int ts_gemm_cpu(char prec, char ta, char tb, int64_t m, int64_t n, int64_t k, const void *alpha,
                const void *A, int64_t lda, const void *B, int64_t ldb, const void *beta, void *C,
                int64_t ldc) {
    TS_CHECK(ts_gemm_check_raise("ts_gemm_cpu", prec, ta, tb, m, n, k, lda, ldb, ldc));
    if (!fits_int(m) || !fits_int(n) || !fits_int(k) || !fits_int(lda) || !fits_int(ldb) || !fits_int(ldc))
        TS_RAISE(TS_ERR_ARG, "ts_gemm_cpu: dimensions exceed the CBLAS int range (m=%lld n=%lld k=%lld "
                 "lda=%lld ldb=%lld ldc=%lld; max %d)", (long long)m, (long long)n, (long long)k,
                 (long long)lda, (long long)ldb, (long long)ldc, INT_MAX);
    if (m == 0 || n == 0) return 0;
    enum CBLAS_TRANSPOSE oa = cblas_op(ta), ob = cblas_op(tb);
    int M = (int)m, N = (int)n, K = (int)k, LA = (int)lda, LB = (int)ldb, LC = (int)ldc;
    switch (prec) {
    case 's':
        cblas_sgemm(CblasColMajor, oa, ob, M, N, K, *(const float *)alpha, A, LA, B, LB,
                    *(const float *)beta, C, LC);
        break;
    case 'd':
        cblas_dgemm(CblasColMajor, oa, ob, M, N, K, *(const double *)alpha, A, LA, B, LB,
                    *(const double *)beta, C, LC);
        break;
    case 'c':
        cblas_cgemm(CblasColMajor, oa, ob, M, N, K, alpha, A, LA, B, LB, beta, C, LC);
        break;
    default:
        cblas_zgemm(CblasColMajor, oa, ob, M, N, K, alpha, A, LA, B, LB, beta, C, LC);
        break;
    }
    return 0;
}

int ts_dtrsm_cpu(char side, char uplo, char ta, char diag, int64_t m, int64_t n, double alpha,
                 const double *A, int64_t lda, double *B, int64_t ldb) {
    int pos = ts_dtrsm_check_args(side, uplo, ta, diag, m, n, lda, ldb);
    if (pos) TS_RAISE(TS_ERR_ARG, "ts_dtrsm_cpu: argument %d is invalid", pos);
    if (!fits_int(m) || !fits_int(n) || !fits_int(lda) || !fits_int(ldb))
        TS_RAISE(TS_ERR_ARG, "ts_dtrsm_cpu: dimensions exceed the CBLAS int range (m=%lld n=%lld)",
                 (long long)m, (long long)n);
    if (m == 0 || n == 0) return 0;
    cblas_dtrsm(CblasColMajor, (side == 'L' || side == 'l') ? CblasLeft : CblasRight,
                (uplo == 'U' || uplo == 'u') ? CblasUpper : CblasLower, cblas_op(ta),
                (diag == 'U' || diag == 'u') ? CblasUnit : CblasNonUnit, (int)m, (int)n, alpha, A,
                (int)lda, B, (int)ldb);
    return 0;
}

// The name is built once ("OpenBLAS 0.3.21 Haswell": library, version, core) and never changes.
static char blas_name[96];
static pthread_once_t blas_name_once = PTHREAD_ONCE_INIT;

static void blas_name_init(void) {
#if TS_OPENBLAS
    // openblas_get_config(): "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Haswell MAX_THREADS=64"
    char ver[32] = "", core[32] = "";
    const char *cfg = openblas_get_config();
    sscanf(OPENBLAS_VERSION, " OpenBLAS %31s", ver);
    const char *corename = openblas_get_corename();
    if (corename) snprintf(core, sizeof core, "%s", corename);
    if (ver[0])
        snprintf(blas_name, sizeof blas_name, "OpenBLAS %s%s%s", ver, core[0] ? " " : "", core);
    else
        snprintf(blas_name, sizeof blas_name, "%s", cfg ? cfg : "OpenBLAS");
#else
    snprintf(blas_name, sizeof blas_name, "%s", TS_BLAS_NAME);
#endif
}

const char *ts_cpu_blas_name(void) {
    pthread_once(&blas_name_once, blas_name_init);
    return blas_name;
}

int ts_cpu_blas_threads(void) {
#if TS_OPENBLAS
    return openblas_get_num_threads();
#else
    return 1;
#endif
}

void ts_cpu_blas_set_threads(int n) {
#if TS_OPENBLAS
    if (n > 0) openblas_set_num_threads(n);
#else
    (void)n;
#endif
}

// ---- the Level-3 routines of ts_l3.h ----
static enum CBLAS_SIDE cb_side(char s) { return s == 'L' ? CblasLeft : CblasRight; }
static enum CBLAS_UPLO cb_uplo(char u) { return u == 'L' ? CblasLower : CblasUpper; }
static enum CBLAS_TRANSPOSE cb_trans(char t) { return t == 'N' ? CblasNoTrans : t == 'T' ? CblasTrans : CblasConjTrans; }
static enum CBLAS_DIAG cb_diag(char d) { return d == 'U' ? CblasUnit : CblasNonUnit; }

int ts_l3_cpu(const ts_l3_prob *p, const void *A, const void *B, void *W) {
    const void *al = &p->alpha, *be = &p->beta;
    float fa = p->alpha.f[0], fb = p->beta.f[0];
    double da = p->alpha.d[0], db = p->beta.d[0];
    int M = (int)p->m, N = (int)p->n, K = (int)p->k, LA = (int)p->ra, LB = (int)(p->rb ? p->rb : 1), LC = (int)p->rc;
    enum CBLAS_SIDE sd = cb_side(p->side);
    enum CBLAS_UPLO ul = cb_uplo(p->uplo);
    enum CBLAS_TRANSPOSE tr = cb_trans(p->trans);
    enum CBLAS_DIAG dg = cb_diag(p->diag);
    const enum CBLAS_ORDER L = CblasColMajor;
    if (ts_prec_size(p->prec) == 0) TS_RAISE(TS_ERR_ARG, "%s: unknown precision '%c'", ts_l3_name(p->r), p->prec);
    switch (p->r * 4 + (int)(strchr("sdcz", p->prec) - "sdcz")) {
    case TS_L3_SYMM * 4 + 0: cblas_ssymm(L, sd, ul, M, N, fa, A, LA, B, LB, fb, W, LC); break;
    case TS_L3_SYMM * 4 + 1: cblas_dsymm(L, sd, ul, M, N, da, A, LA, B, LB, db, W, LC); break;
    case TS_L3_SYMM * 4 + 2: cblas_csymm(L, sd, ul, M, N, al, A, LA, B, LB, be, W, LC); break;
    case TS_L3_SYMM * 4 + 3: cblas_zsymm(L, sd, ul, M, N, al, A, LA, B, LB, be, W, LC); break;
    case TS_L3_HEMM * 4 + 2: cblas_chemm(L, sd, ul, M, N, al, A, LA, B, LB, be, W, LC); break;
    case TS_L3_HEMM * 4 + 3: cblas_zhemm(L, sd, ul, M, N, al, A, LA, B, LB, be, W, LC); break;
    case TS_L3_SYRK * 4 + 0: cblas_ssyrk(L, ul, tr, N, K, fa, A, LA, fb, W, LC); break;
    case TS_L3_SYRK * 4 + 1: cblas_dsyrk(L, ul, tr, N, K, da, A, LA, db, W, LC); break;
    case TS_L3_SYRK * 4 + 2: cblas_csyrk(L, ul, tr, N, K, al, A, LA, be, W, LC); break;
    case TS_L3_SYRK * 4 + 3: cblas_zsyrk(L, ul, tr, N, K, al, A, LA, be, W, LC); break;
    case TS_L3_HERK * 4 + 2: cblas_cherk(L, ul, tr, N, K, fa, A, LA, fb, W, LC); break;
    case TS_L3_HERK * 4 + 3: cblas_zherk(L, ul, tr, N, K, da, A, LA, db, W, LC); break;
    case TS_L3_SYR2K * 4 + 0: cblas_ssyr2k(L, ul, tr, N, K, fa, A, LA, B, LB, fb, W, LC); break;
    case TS_L3_SYR2K * 4 + 1: cblas_dsyr2k(L, ul, tr, N, K, da, A, LA, B, LB, db, W, LC); break;
    case TS_L3_SYR2K * 4 + 2: cblas_csyr2k(L, ul, tr, N, K, al, A, LA, B, LB, be, W, LC); break;
    case TS_L3_SYR2K * 4 + 3: cblas_zsyr2k(L, ul, tr, N, K, al, A, LA, B, LB, be, W, LC); break;
    case TS_L3_HER2K * 4 + 2: cblas_cher2k(L, ul, tr, N, K, al, A, LA, B, LB, fb, W, LC); break;
    case TS_L3_HER2K * 4 + 3: cblas_zher2k(L, ul, tr, N, K, al, A, LA, B, LB, db, W, LC); break;
    case TS_L3_TRMM * 4 + 0: cblas_strmm(L, sd, ul, tr, dg, M, N, fa, A, LA, W, LC); break;
    case TS_L3_TRMM * 4 + 1: cblas_dtrmm(L, sd, ul, tr, dg, M, N, da, A, LA, W, LC); break;
    case TS_L3_TRMM * 4 + 2: cblas_ctrmm(L, sd, ul, tr, dg, M, N, al, A, LA, W, LC); break;
    case TS_L3_TRMM * 4 + 3: cblas_ztrmm(L, sd, ul, tr, dg, M, N, al, A, LA, W, LC); break;
    case TS_L3_TRSM * 4 + 0: cblas_strsm(L, sd, ul, tr, dg, M, N, fa, A, LA, W, LC); break;
    case TS_L3_TRSM * 4 + 1: cblas_dtrsm(L, sd, ul, tr, dg, M, N, da, A, LA, W, LC); break;
    case TS_L3_TRSM * 4 + 2: cblas_ctrsm(L, sd, ul, tr, dg, M, N, al, A, LA, W, LC); break;
    case TS_L3_TRSM * 4 + 3: cblas_ztrsm(L, sd, ul, tr, dg, M, N, al, A, LA, W, LC); break;
    default: TS_RAISE(TS_ERR_ARG, "%s: no %c routine", ts_l3_name(p->r), p->prec);
    }
    return 0;
}
