// tsb_l3.c: ?SYMM, ?HEMM, ?SYRK, ?HERK, ?SYR2K, ?HER2K, ?TRMM, ?TRSM (Fortran and CBLAS): checks, quick returns, routing.
//
// The same rules as ?GEMM (tsb_gemm.c): arguments checked in the reference order (xerbla_ for the
// Fortran entries), the reference quick returns, then the tile runtime when the call's size
// (m*n*k of the equivalent GEMM: SYMM m*n*ka, SYRK/SYR2K n*n*k, TRMM/TRSM m*n*ka) reaches
// TESSERA_BLAS_THRESHOLD and the routine is not disabled, else the CPU BLAS. CBLAS entries map
// their enums as the reference CBLAS does (row-major through the transposed problem); a CBLAS
// call with an invalid argument is handed unchanged to the CPU BLAS's own cblas_ routine, which
// reports it as before.
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ts_error.h"
#include "kernels/ts_kernels.h"
#include "runtime/ts_tiles_l3.h"
#include "tsb_internal.h"

enum { K_SYMM, K_HEMM, K_SYRK, K_HERK, K_SYR2K, K_HER2K, K_TRMM, K_TRSM };

typedef struct {
    int kind;
    char prec;
    const char *fname; // Fortran name (lower case, underscore)
    const char *xname; // XERBLA name, blank-padded to 6
    const char *cname; // CBLAS name
} routine;

// In the order of the routine enum (TSB_SSYMM ...), which the per-routine disable keys follow.
static const routine table[TSB_NROUTINES - TSB_L3_FIRST] = {
    {K_SYMM, 's', "ssymm_", "SSYMM ", "cblas_ssymm"},    {K_SYMM, 'd', "dsymm_", "DSYMM ", "cblas_dsymm"},
    {K_SYMM, 'c', "csymm_", "CSYMM ", "cblas_csymm"},    {K_SYMM, 'z', "zsymm_", "ZSYMM ", "cblas_zsymm"},
    {K_HEMM, 'c', "chemm_", "CHEMM ", "cblas_chemm"},    {K_HEMM, 'z', "zhemm_", "ZHEMM ", "cblas_zhemm"},
    {K_SYRK, 's', "ssyrk_", "SSYRK ", "cblas_ssyrk"},    {K_SYRK, 'd', "dsyrk_", "DSYRK ", "cblas_dsyrk"},
    {K_SYRK, 'c', "csyrk_", "CSYRK ", "cblas_csyrk"},    {K_SYRK, 'z', "zsyrk_", "ZSYRK ", "cblas_zsyrk"},
    {K_HERK, 'c', "cherk_", "CHERK ", "cblas_cherk"},    {K_HERK, 'z', "zherk_", "ZHERK ", "cblas_zherk"},
    {K_SYR2K, 's', "ssyr2k_", "SSYR2K", "cblas_ssyr2k"}, {K_SYR2K, 'd', "dsyr2k_", "DSYR2K", "cblas_dsyr2k"},
    {K_SYR2K, 'c', "csyr2k_", "CSYR2K", "cblas_csyr2k"}, {K_SYR2K, 'z', "zsyr2k_", "ZSYR2K", "cblas_zsyr2k"},
    {K_HER2K, 'c', "cher2k_", "CHER2K", "cblas_cher2k"}, {K_HER2K, 'z', "zher2k_", "ZHER2K", "cblas_zher2k"},
    {K_TRMM, 's', "strmm_", "STRMM ", "cblas_strmm"},    {K_TRMM, 'd', "dtrmm_", "DTRMM ", "cblas_dtrmm"},
    {K_TRMM, 'c', "ctrmm_", "CTRMM ", "cblas_ctrmm"},    {K_TRMM, 'z', "ztrmm_", "ZTRMM ", "cblas_ztrmm"},
    {K_TRSM, 's', "strsm_", "STRSM ", "cblas_strsm"},    {K_TRSM, 'd', "dtrsm_", "DTRSM ", "cblas_dtrsm"},
    {K_TRSM, 'c', "ctrsm_", "CTRSM ", "cblas_ctrsm"},    {K_TRSM, 'z', "ztrsm_", "ZTRSM ", "cblas_ztrsm"},
};

// One call as the column-major Fortran routine sees it. TRMM/TRSM: B is C (in place).
typedef struct {
    char side, uplo, trans, diag;
    tsb_int m, n, k;
    const void *alpha, *A, *B, *beta;
    tsb_int lda, ldb, ldc;
    void *C;
} l3_args;

static const routine *rt_of(int r) { return &table[r - TSB_L3_FIRST]; }

// Scalars: the precision's type, or its real type for the real alpha/beta of HERK and beta of HER2K.
static int scalar_is(char prec, int real, const void *x, double v) {
    switch (prec) {
    case 's': return *(const float *)x == (float)v;
    case 'd': return *(const double *)x == v;
    case 'c': return real ? *(const float *)x == (float)v : ((const float *)x)[0] == (float)v && ((const float *)x)[1] == 0.0f;
    default: return real ? *(const double *)x == v : ((const double *)x)[0] == v && ((const double *)x)[1] == 0.0;
    }
}

// Position of the first bad argument (reference numbering), 0 if none.
static int check(const routine *R, const l3_args *a) {
    int herm = R->kind == K_HEMM || R->kind == K_HERK || R->kind == K_HER2K;
    switch (R->kind) {
    case K_SYMM:
    case K_HEMM: return ts_symm_check_args(a->side, a->uplo, a->m, a->n, a->lda, a->ldb, a->ldc);
    case K_SYRK:
    case K_HERK: return ts_syrk_check_args(R->prec, herm, a->uplo, a->trans, a->n, a->k, a->lda, a->ldc);
    case K_SYR2K:
    case K_HER2K: return ts_syr2k_check_args(R->prec, herm, a->uplo, a->trans, a->n, a->k, a->lda, a->ldb, a->ldc);
    default: return ts_dtrsm_check_args(a->side, a->uplo, a->trans, a->diag, a->m, a->n, a->lda, a->ldc);
    }
}

typedef void (*f_symm)(const char *, const char *, const tsb_int *, const tsb_int *, const void *, const void *, const tsb_int *,
                       const void *, const tsb_int *, const void *, void *, const tsb_int *, size_t, size_t);
typedef void (*f_syrk)(const char *, const char *, const tsb_int *, const tsb_int *, const void *, const void *, const tsb_int *,
                       const void *, void *, const tsb_int *, size_t, size_t);
typedef void (*f_syr2k)(const char *, const char *, const tsb_int *, const tsb_int *, const void *, const void *, const tsb_int *,
                        const void *, const tsb_int *, const void *, void *, const tsb_int *, size_t, size_t);
typedef void (*f_trmm)(const char *, const char *, const char *, const char *, const tsb_int *, const tsb_int *, const void *,
                       const void *, const tsb_int *, void *, const tsb_int *, size_t, size_t, size_t, size_t);

static void *cpu_fn(int r, int cblas) {
    static void *_Atomic fns[2][TSB_NROUTINES]; // resolved CPU BLAS entry points (looked up once)
    void *f = atomic_load_explicit(&fns[cblas][r], memory_order_acquire);
    if (!f) {
        f = tsb_cpu_sym(cblas ? rt_of(r)->cname : rt_of(r)->fname);
        atomic_store_explicit(&fns[cblas][r], f, memory_order_release);
    }
    return f;
}

// The call on the CPU BLAS (its Fortran routine, with the hidden CHARACTER lengths).
static void run_cpu(int r, const l3_args *a) {
    void *f = cpu_fn(r, 0);
    switch (rt_of(r)->kind) {
    case K_SYMM:
    case K_HEMM:
        ((f_symm)f)(&a->side, &a->uplo, &a->m, &a->n, a->alpha, a->A, &a->lda, a->B, &a->ldb, a->beta, a->C, &a->ldc, 1, 1);
        break;
    case K_SYRK:
    case K_HERK:
        ((f_syrk)f)(&a->uplo, &a->trans, &a->n, &a->k, a->alpha, a->A, &a->lda, a->beta, a->C, &a->ldc, 1, 1);
        break;
    case K_SYR2K:
    case K_HER2K:
        ((f_syr2k)f)(&a->uplo, &a->trans, &a->n, &a->k, a->alpha, a->A, &a->lda, a->B, &a->ldb, a->beta, a->C, &a->ldc, 1,
                     1);
        break;
    default:
        ((f_trmm)f)(&a->side, &a->uplo, &a->trans, &a->diag, &a->m, &a->n, a->alpha, a->A, &a->lda, a->C, &a->ldc, 1, 1, 1,
                    1);
        break;
    }
}

static int run_tiles(ts_tiles *rt, const routine *R, const l3_args *a, ts_tiles_stats *st) {
    char p = R->prec;
    switch (R->kind) {
    case K_SYMM: return ts_tiles_symm(rt, p, a->side, a->uplo, a->m, a->n, a->alpha, a->A, a->lda, a->B, a->ldb, a->beta, a->C, a->ldc, st);
    case K_HEMM: return ts_tiles_hemm(rt, p, a->side, a->uplo, a->m, a->n, a->alpha, a->A, a->lda, a->B, a->ldb, a->beta, a->C, a->ldc, st);
    case K_SYRK: return ts_tiles_syrk(rt, p, a->uplo, a->trans, a->n, a->k, a->alpha, a->A, a->lda, a->beta, a->C, a->ldc, st);
    case K_HERK: return ts_tiles_herk(rt, p, a->uplo, a->trans, a->n, a->k, a->alpha, a->A, a->lda, a->beta, a->C, a->ldc, st);
    case K_SYR2K: return ts_tiles_syr2k(rt, p, a->uplo, a->trans, a->n, a->k, a->alpha, a->A, a->lda, a->B, a->ldb, a->beta, a->C, a->ldc, st);
    case K_HER2K: return ts_tiles_her2k(rt, p, a->uplo, a->trans, a->n, a->k, a->alpha, a->A, a->lda, a->B, a->ldb, a->beta, a->C, a->ldc, st);
    case K_TRMM: return ts_tiles_trmm(rt, p, a->side, a->uplo, a->trans, a->diag, a->m, a->n, a->alpha, a->A, a->lda, a->C, a->ldc, st);
    default: return ts_tiles_trsm(rt, p, a->side, a->uplo, a->trans, a->diag, a->m, a->n, a->alpha, a->A, a->lda, a->C, a->ldc, st);
    }
}

// Arguments already checked. The reference quick return, then where the call runs.
static void route(int r, const l3_args *a, const char *api) {
    const routine *R = rt_of(r);
    int tri = R->kind == K_TRMM || R->kind == K_TRSM, rank = !tri && R->kind != K_SYMM && R->kind != K_HEMM;
    int real_alpha = R->kind == K_HERK, real_beta = R->kind == K_HERK || R->kind == K_HER2K;
    int alpha0 = scalar_is(R->prec, real_alpha, a->alpha, 0.0);
    int beta1 = !tri && scalar_is(R->prec, real_beta, a->beta, 1.0);
    int64_t ka = (a->side == 'L' || a->side == 'l') ? a->m : a->n;
    char where[160];
    snprintf(where, sizeof where, "side=%c uplo=%c trans=%c diag=%c m=%lld n=%lld k=%lld", tri || !rank ? a->side : '-',
             a->uplo, tri || rank ? a->trans : '-', tri ? a->diag : '-', (long long)(rank ? a->n : a->m), (long long)a->n,
             (long long)(rank ? a->k : ka));
    int quick = rank ? a->n == 0 || ((alpha0 || a->k == 0) && beta1) : a->m == 0 || a->n == 0 || (!tri && alpha0 && beta1);
    if (quick) {
        tsb_trace("%s %s where=none (quick return)", api, where);
        return;
    }
    double size = rank ? (double)a->n * a->n * a->k : (double)a->m * a->n * (double)ka;
    const tsb_config *cfg = tsb_config_get();
    const char *why = NULL;
    ts_tiles *rt = NULL;
    if (cfg->disabled[r]) why = "disabled";
    else if (alpha0 || (rank && a->k == 0)) why = tri ? "B = 0 only" : "C = beta C only"; // no product to offload
    else if (size < (double)cfg->threshold[r]) why = "below threshold";
    else if (!(rt = tsb_runtime_get())) why = "no runtime";
    if (why) {
        tsb_trace("%s %s where=cpu-blas (%s)", api, where, why);
        run_cpu(r, a);
        return;
    }
    ts_tiles_stats st;
    int rc = run_tiles(rt, R, a, &st);
    if (rc != 0) {
        // C (B) may be partly updated: no correct result can be returned through the BLAS interface
        fprintf(stderr, "tessera_blas: %s (%s) failed on the tile runtime: %s\n", api, where, ts_error_string());
        abort();
    }
    int64_t dev_tiles = 0;
    for (int d = 0; d < st.ndev && d < TS_MAX_DEVICES; d++) dev_tiles += st.tiles_dev[d];
    tsb_trace("%s %s where=runtime devices=%d tiles=%lld dev_tiles=%lld cpu_tiles=%lld seconds=%.6f", api, where, st.ndev,
              (long long)st.tiles, (long long)dev_tiles, (long long)st.tiles_cpu, st.seconds);
}

static void fortran_entry(int r, const l3_args *a) {
    tsb_int info = check(rt_of(r), a);
    if (info) {
        xerbla_(rt_of(r)->xname, &info, 6); // the reference passes the blank-padded 6-character name
        return;
    }
    route(r, a, rt_of(r)->fname);
}

// ---------------------------------------------------------------- Fortran entries

#define TSB_F_SYMM(name, r)                                                                                          \
    TSB_EXPORT void name(const char *side, const char *uplo, const tsb_int *m, const tsb_int *n, const void *alpha,           \
                         const void *A, const tsb_int *lda, const void *B, const tsb_int *ldb, const void *beta, void *C,     \
                         const tsb_int *ldc, size_t l1, size_t l2);                                                       \
    void name(const char *side, const char *uplo, const tsb_int *m, const tsb_int *n, const void *alpha, const void *A,      \
              const tsb_int *lda, const void *B, const tsb_int *ldb, const void *beta, void *C, const tsb_int *ldc, size_t l1,    \
              size_t l2) {                                                                                            \
        l3_args a = {.side = *side, .uplo = *uplo, .m = *m, .n = *n, .alpha = alpha, .A = A, .lda = *lda, .B = B,     \
                     .ldb = *ldb, .beta = beta, .C = C, .ldc = *ldc};                                                 \
        fortran_entry(r, &a);                                                                                         \
    }
#define TSB_F_SYRK(name, r)                                                                                          \
    TSB_EXPORT void name(const char *uplo, const char *trans, const tsb_int *n, const tsb_int *k, const void *alpha,          \
                         const void *A, const tsb_int *lda, const void *beta, void *C, const tsb_int *ldc, size_t l1,         \
                         size_t l2);                                                                                  \
    void name(const char *uplo, const char *trans, const tsb_int *n, const tsb_int *k, const void *alpha, const void *A,     \
              const tsb_int *lda, const void *beta, void *C, const tsb_int *ldc, size_t l1, size_t l2) {                      \
        l3_args a = {.uplo = *uplo, .trans = *trans, .n = *n, .k = *k, .alpha = alpha, .A = A, .lda = *lda,           \
                     .beta = beta, .C = C, .ldc = *ldc, .ldb = 1};                                                    \
        fortran_entry(r, &a);                                                                                         \
    }
#define TSB_F_SYR2K(name, r)                                                                                         \
    TSB_EXPORT void name(const char *uplo, const char *trans, const tsb_int *n, const tsb_int *k, const void *alpha,          \
                         const void *A, const tsb_int *lda, const void *B, const tsb_int *ldb, const void *beta, void *C,     \
                         const tsb_int *ldc, size_t l1, size_t l2);                                                       \
    void name(const char *uplo, const char *trans, const tsb_int *n, const tsb_int *k, const void *alpha, const void *A,     \
              const tsb_int *lda, const void *B, const tsb_int *ldb, const void *beta, void *C, const tsb_int *ldc, size_t l1,    \
              size_t l2) {                                                                                            \
        l3_args a = {.uplo = *uplo, .trans = *trans, .n = *n, .k = *k, .alpha = alpha, .A = A, .lda = *lda, .B = B,   \
                     .ldb = *ldb, .beta = beta, .C = C, .ldc = *ldc};                                                 \
        fortran_entry(r, &a);                                                                                         \
    }
#define TSB_F_TRMM(name, r)                                                                                          \
    TSB_EXPORT void name(const char *side, const char *uplo, const char *ta, const char *diag, const tsb_int *m,          \
                         const tsb_int *n, const void *alpha, const void *A, const tsb_int *lda, void *B, const tsb_int *ldb,     \
                         size_t l1, size_t l2, size_t l3, size_t l4);                                                 \
    void name(const char *side, const char *uplo, const char *ta, const char *diag, const tsb_int *m, const tsb_int *n,      \
              const void *alpha, const void *A, const tsb_int *lda, void *B, const tsb_int *ldb, size_t l1, size_t l2,        \
              size_t l3, size_t l4) {                                                                                 \
        l3_args a = {.side = *side, .uplo = *uplo, .trans = *ta, .diag = *diag, .m = *m, .n = *n, .alpha = alpha,     \
                     .A = A, .lda = *lda, .C = B, .ldc = *ldb};                                                       \
        fortran_entry(r, &a);                                                                                         \
    }

TSB_F_SYMM(ssymm_, TSB_SSYMM)
TSB_F_SYMM(dsymm_, TSB_DSYMM)
TSB_F_SYMM(csymm_, TSB_CSYMM)
TSB_F_SYMM(zsymm_, TSB_ZSYMM)
TSB_F_SYMM(chemm_, TSB_CHEMM)
TSB_F_SYMM(zhemm_, TSB_ZHEMM)
TSB_F_SYRK(ssyrk_, TSB_SSYRK)
TSB_F_SYRK(dsyrk_, TSB_DSYRK)
TSB_F_SYRK(csyrk_, TSB_CSYRK)
TSB_F_SYRK(zsyrk_, TSB_ZSYRK)
TSB_F_SYRK(cherk_, TSB_CHERK)
TSB_F_SYRK(zherk_, TSB_ZHERK)
TSB_F_SYR2K(ssyr2k_, TSB_SSYR2K)
TSB_F_SYR2K(dsyr2k_, TSB_DSYR2K)
TSB_F_SYR2K(csyr2k_, TSB_CSYR2K)
TSB_F_SYR2K(zsyr2k_, TSB_ZSYR2K)
TSB_F_SYR2K(cher2k_, TSB_CHER2K)
TSB_F_SYR2K(zher2k_, TSB_ZHER2K)
TSB_F_TRMM(strmm_, TSB_STRMM)
TSB_F_TRMM(dtrmm_, TSB_DTRMM)
TSB_F_TRMM(ctrmm_, TSB_CTRMM)
TSB_F_TRMM(ztrmm_, TSB_ZTRMM)
TSB_F_TRMM(strsm_, TSB_STRSM)
TSB_F_TRMM(dtrsm_, TSB_DTRSM)
TSB_F_TRMM(ctrsm_, TSB_CTRSM)
TSB_F_TRMM(ztrsm_, TSB_ZTRSM)

// ---------------------------------------------------------------- CBLAS entries

// CBLAS enum values (Reference-LAPACK CBLAS/include/cblas.h).
enum { C_UPPER = 121, C_LOWER = 122, C_NONUNIT = 131, C_UNIT = 132, C_LEFT = 141, C_RIGHT = 142 };

// The column-major problem of a CBLAS call as the reference CBLAS builds it (row-major: sides and
// triangles swapped, m and n swapped, the transposes of SYRK-like routines flipped, HER2K's alpha
// conjugated into *alpha_buf). 0 when an enum is invalid or the arguments fail the checks.
static int cblas_problem(int r, int layout, int side, int uplo, int trans, int diag, l3_args *a, unsigned char *alpha_buf) {
    const routine *R = rt_of(r);
    int row = layout == TSB_ROW_MAJOR;
    if (!row && layout != TSB_COL_MAJOR) return 0;
    int tri = R->kind == K_TRMM || R->kind == K_TRSM, mm = R->kind == K_SYMM || R->kind == K_HEMM;
    int herm = R->kind == K_HERK || R->kind == K_HER2K;
    if (tri || mm) {
        if (side != C_LEFT && side != C_RIGHT) return 0;
        a->side = (side == C_LEFT) != row ? 'L' : 'R';
    }
    if (uplo != C_UPPER && uplo != C_LOWER) return 0;
    a->uplo = (uplo == C_UPPER) != row ? 'U' : 'L';
    if (tri) {
        if (trans != TSB_NO_TRANS && trans != TSB_TRANS && trans != TSB_CONJ_TRANS) return 0;
        a->trans = trans == TSB_NO_TRANS ? 'N' : trans == TSB_TRANS ? 'T' : 'C';
        if (diag != C_UNIT && diag != C_NONUNIT) return 0;
        a->diag = diag == C_UNIT ? 'U' : 'N';
    } else if (!mm) {
        if (trans != TSB_NO_TRANS && trans != TSB_TRANS && trans != TSB_CONJ_TRANS) return 0;
        if (!row) a->trans = trans == TSB_NO_TRANS ? 'N' : trans == TSB_TRANS ? 'T' : 'C';
        else if (herm) a->trans = trans == TSB_NO_TRANS ? 'C' : 'N';
        else if (R->prec == 's' || R->prec == 'd') a->trans = trans == TSB_NO_TRANS ? 'T' : 'N';
        else if (trans == TSB_CONJ_TRANS) return 0;
        else a->trans = trans == TSB_NO_TRANS ? 'T' : 'N';
    }
    if (row && (tri || mm)) {
        tsb_int t = a->m;
        a->m = a->n, a->n = t;
    }
    if (row && R->kind == K_HER2K) {
        size_t h = ts_prec_size(R->prec) / 2;
        memcpy(alpha_buf, a->alpha, 2 * h);
        if (R->prec == 'c') ((float *)alpha_buf)[1] = -((float *)alpha_buf)[1];
        else ((double *)alpha_buf)[1] = -((double *)alpha_buf)[1];
        a->alpha = alpha_buf;
    }
    return check(R, a) == 0;
}

static int cblas_entry(int r, int layout, int side, int uplo, int trans, int diag, l3_args *a) {
    _Alignas(16) unsigned char alpha_buf[16];
    if (!cblas_problem(r, layout, side, uplo, trans, diag, a, alpha_buf)) return 0; // the CPU BLAS reports it
    route(r, a, rt_of(r)->cname);
    return 1;
}

// s/d pass alpha and beta by value, c/z by pointer; ?HERK passes real alpha/beta by value and
// ?HER2K a real beta by value. VAL(x) is the address of the scalar the routine reads.
#define BYVAL(x) (&(x))
#define BYPTR(x) (x)

#define TSB_C_SYMM(name, r, TA, TB, PA, PB)                                                                          \
    TSB_EXPORT void name(int layout, int Side, int Uplo, tsb_int M, tsb_int N, TA alpha, const void *A, tsb_int lda,              \
                         const void *B, tsb_int ldb, TB beta, void *C, tsb_int ldc);                                          \
    void name(int layout, int Side, int Uplo, tsb_int M, tsb_int N, TA alpha, const void *A, tsb_int lda, const void *B, tsb_int ldb, \
              TB beta, void *C, tsb_int ldc) {                                                                            \
        l3_args a = {.m = M, .n = N, .alpha = PA(alpha), .A = A, .lda = lda, .B = B, .ldb = ldb, .beta = PB(beta),    \
                     .C = C, .ldc = ldc};                                                                             \
        if (cblas_entry(r, layout, Side, Uplo, 0, 0, &a)) return;                                                     \
        typedef void (*fn)(int, int, int, tsb_int, tsb_int, TA, const void *, tsb_int, const void *, tsb_int, TB,      \
                           void *, tsb_int);                                                                  \
        ((fn)cpu_fn(r, 1))(layout, Side, Uplo, M, N, alpha, A, lda, B, ldb, beta, C, ldc);                           \
    }
#define TSB_C_SYRK(name, r, TA, TB, PA, PB)                                                                          \
    TSB_EXPORT void name(int layout, int Uplo, int Trans, tsb_int N, tsb_int K, TA alpha, const void *A, tsb_int lda, TB beta,    \
                         void *C, tsb_int ldc);                                                                           \
    void name(int layout, int Uplo, int Trans, tsb_int N, tsb_int K, TA alpha, const void *A, tsb_int lda, TB beta, void *C,      \
              tsb_int ldc) {                                                                                              \
        l3_args a = {.n = N, .k = K, .alpha = PA(alpha), .A = A, .lda = lda, .ldb = 1, .beta = PB(beta), .C = C,      \
                     .ldc = ldc};                                                                                     \
        if (cblas_entry(r, layout, 0, Uplo, Trans, 0, &a)) return;                                                    \
        typedef void (*fn)(int, int, int, tsb_int, tsb_int, TA, const void *, tsb_int, TB, void *, tsb_int);                         \
        ((fn)cpu_fn(r, 1))(layout, Uplo, Trans, N, K, alpha, A, lda, beta, C, ldc);                                  \
    }
#define TSB_C_SYR2K(name, r, TA, TB, PA, PB)                                                                         \
    TSB_EXPORT void name(int layout, int Uplo, int Trans, tsb_int N, tsb_int K, TA alpha, const void *A, tsb_int lda,             \
                         const void *B, tsb_int ldb, TB beta, void *C, tsb_int ldc);                                          \
    void name(int layout, int Uplo, int Trans, tsb_int N, tsb_int K, TA alpha, const void *A, tsb_int lda, const void *B,         \
              tsb_int ldb, TB beta, void *C, tsb_int ldc) {                                                                   \
        l3_args a = {.n = N, .k = K, .alpha = PA(alpha), .A = A, .lda = lda, .B = B, .ldb = ldb, .beta = PB(beta),    \
                     .C = C, .ldc = ldc};                                                                             \
        if (cblas_entry(r, layout, 0, Uplo, Trans, 0, &a)) return;                                                    \
        typedef void (*fn)(int, int, int, tsb_int, tsb_int, TA, const void *, tsb_int, const void *, tsb_int, TB,      \
                           void *, tsb_int);                                                                  \
        ((fn)cpu_fn(r, 1))(layout, Uplo, Trans, N, K, alpha, A, lda, B, ldb, beta, C, ldc);                          \
    }
#define TSB_C_TRMM(name, r, TA, PA)                                                                                  \
    TSB_EXPORT void name(int layout, int Side, int Uplo, int TransA, int Diag, tsb_int M, tsb_int N, TA alpha, const void *A, \
                         tsb_int lda, void *B, tsb_int ldb);                                                                  \
    void name(int layout, int Side, int Uplo, int TransA, int Diag, tsb_int M, tsb_int N, TA alpha, const void *A, tsb_int lda,   \
              void *B, tsb_int ldb) {                                                                                     \
        l3_args a = {.m = M, .n = N, .alpha = PA(alpha), .A = A, .lda = lda, .C = B, .ldc = ldb};                     \
        if (cblas_entry(r, layout, Side, Uplo, TransA, Diag, &a)) return;                                             \
        typedef void (*fn)(int, int, int, int, int, tsb_int, tsb_int, TA, const void *, tsb_int, void *, tsb_int);                   \
        ((fn)cpu_fn(r, 1))(layout, Side, Uplo, TransA, Diag, M, N, alpha, A, lda, B, ldb);                           \
    }

TSB_C_SYMM(cblas_ssymm, TSB_SSYMM, float, float, BYVAL, BYVAL)
TSB_C_SYMM(cblas_dsymm, TSB_DSYMM, double, double, BYVAL, BYVAL)
TSB_C_SYMM(cblas_csymm, TSB_CSYMM, const void *, const void *, BYPTR, BYPTR)
TSB_C_SYMM(cblas_zsymm, TSB_ZSYMM, const void *, const void *, BYPTR, BYPTR)
TSB_C_SYMM(cblas_chemm, TSB_CHEMM, const void *, const void *, BYPTR, BYPTR)
TSB_C_SYMM(cblas_zhemm, TSB_ZHEMM, const void *, const void *, BYPTR, BYPTR)
TSB_C_SYRK(cblas_ssyrk, TSB_SSYRK, float, float, BYVAL, BYVAL)
TSB_C_SYRK(cblas_dsyrk, TSB_DSYRK, double, double, BYVAL, BYVAL)
TSB_C_SYRK(cblas_csyrk, TSB_CSYRK, const void *, const void *, BYPTR, BYPTR)
TSB_C_SYRK(cblas_zsyrk, TSB_ZSYRK, const void *, const void *, BYPTR, BYPTR)
TSB_C_SYRK(cblas_cherk, TSB_CHERK, float, float, BYVAL, BYVAL)
TSB_C_SYRK(cblas_zherk, TSB_ZHERK, double, double, BYVAL, BYVAL)
TSB_C_SYR2K(cblas_ssyr2k, TSB_SSYR2K, float, float, BYVAL, BYVAL)
TSB_C_SYR2K(cblas_dsyr2k, TSB_DSYR2K, double, double, BYVAL, BYVAL)
TSB_C_SYR2K(cblas_csyr2k, TSB_CSYR2K, const void *, const void *, BYPTR, BYPTR)
TSB_C_SYR2K(cblas_zsyr2k, TSB_ZSYR2K, const void *, const void *, BYPTR, BYPTR)
TSB_C_SYR2K(cblas_cher2k, TSB_CHER2K, const void *, float, BYPTR, BYVAL)
TSB_C_SYR2K(cblas_zher2k, TSB_ZHER2K, const void *, double, BYPTR, BYVAL)
TSB_C_TRMM(cblas_strmm, TSB_STRMM, float, BYVAL)
TSB_C_TRMM(cblas_dtrmm, TSB_DTRMM, double, BYVAL)
TSB_C_TRMM(cblas_ctrmm, TSB_CTRMM, const void *, BYPTR)
TSB_C_TRMM(cblas_ztrmm, TSB_ZTRMM, const void *, BYPTR)
TSB_C_TRMM(cblas_strsm, TSB_STRSM, float, BYVAL)
TSB_C_TRMM(cblas_dtrsm, TSB_DTRSM, double, BYVAL)
TSB_C_TRMM(cblas_ctrsm, TSB_CTRSM, const void *, BYPTR)
TSB_C_TRMM(cblas_ztrsm, TSB_ZTRSM, const void *, BYPTR)
