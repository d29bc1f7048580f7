// ts_tile_ops.c: diagonal-tile preparation, TRSM and the rank-k/2k diagonal updates in s/d/c/z on the host, simulated devices and CUDA devices.
#include "kernels/ts_tile_ops.h"

#include <cblas.h>
#include <limits.h>
#include <string.h>

#include "core/ts_error.h"
#include "kernels/ts_kernels.h"
#include "ts_config.h"


static int is_upper(char uplo) { return uplo == 'U' || uplo == 'u'; }

// The imaginary part of element x (complex precisions): negated or zeroed.
static void imag_negate(char prec, char *x) {
    if (prec == 'c') ((float *)x)[1] = -((float *)x)[1];
    else if (prec == 'z') ((double *)x)[1] = -((double *)x)[1];
}
static void imag_zero(char prec, char *x) {
    if (prec == 'c') ((float *)x)[1] = 0.0f;
    else if (prec == 'z') ((double *)x)[1] = 0.0;
}
static void set_one(char prec, char *x) {
    memset(x, 0, ts_prec_size(prec));
    if (prec == 's' || prec == 'c') ((float *)x)[0] = 1.0f;
    else ((double *)x)[0] = 1.0;
}

void ts_tile_prep_host(char prec, ts_tile_kind kind, char uplo, int64_t n, void *p, int64_t ld) {
    size_t es = ts_prec_size(prec);
    char *a = p;
    int up = is_upper(uplo);
#define EL(i, j) (a + ((size_t)(i) + (size_t)(j) * (size_t)ld) * es)
    if (kind == TS_TILE_TRANS) {
        char t[16];
        for (int64_t j = 0; j < n; j++)
            for (int64_t i = j + 1; i < n; i++) {
                memcpy(t, EL(i, j), es);
                memcpy(EL(i, j), EL(j, i), es);
                memcpy(EL(j, i), t, es);
            }
        return;
    }
    for (int64_t j = 0; j < n; j++) {
        for (int64_t i = 0; i < n; i++) {
            int other = up ? i > j : i < j; // element of the triangle that is not stored
            if (i == j) {
                if (kind == TS_TILE_HERM || kind == TS_TILE_DIAG_REAL) imag_zero(prec, EL(i, j));
                else if (kind == TS_TILE_TRI_UNIT) set_one(prec, EL(i, j));
            } else if (other) {
                if (kind == TS_TILE_SYM || kind == TS_TILE_HERM) {
                    memcpy(EL(i, j), EL(j, i), es);
                    if (kind == TS_TILE_HERM) imag_negate(prec, EL(i, j));
                } else if (kind == TS_TILE_TRI || kind == TS_TILE_TRI_UNIT) {
                    memset(EL(i, j), 0, es);
                }
            }
        }
    }
#undef EL
}

static int prep_run(void *p) {
    const ts_tile_prep_args *a = p;
    ts_tile_prep_host(a->prec, (ts_tile_kind)a->kind, a->uplo, a->n, a->p, a->ld);
    return 0;
}

static ts_backend stream_backend(ts_stream *st) {
    ts_device *d = st ? ts_stream_device(st) : NULL;
    const ts_device_props *p = d ? ts_device_props_of(d) : NULL;
    return p ? p->backend : TS_BACKEND_NONE;
}

int ts_dev_tile_prep(ts_stream *st, char prec, ts_tile_kind kind, char uplo, int64_t n, void *p, int64_t ld) {
    if (!st) TS_RAISE(TS_ERR_ARG, "ts_dev_tile_prep: no stream");
    if (!ts_prec_size(prec)) TS_RAISE(TS_ERR_ARG, "ts_dev_tile_prep: precision '%c'", prec);
    if (n < 0 || ld < (n > 1 ? n : 1)) TS_RAISE(TS_ERR_ARG, "ts_dev_tile_prep: n=%lld ld=%lld", (long long)n, (long long)ld);
    if (n == 0 || kind == TS_TILE_NONE) return 0;
    if (kind == TS_TILE_DIAG_REAL && !ts_prec_is_complex(prec)) return 0;
    ts_tile_prep_args a = {.prec = prec, .uplo = is_upper(uplo) ? 'U' : 'L', .kind = (int)kind, .n = n, .ld = ld, .p = p};
    // a transpose moves data and computes nothing (the kernel counters count flops)
    ts_kernel k = {.name = "tile_prep", .flops = kind == TS_TILE_TRANS ? 0 : (double)n * (double)n, .cpu = prep_run,
                   .args = &a, .args_size = sizeof a};
#if TS_HAVE_CUDA
    k.cuda = ts_cuda_tile_prep;
#endif
    return ts_kernel_enqueue(st, &k);
}

// ---------------------------------------------------------------- TRSM

static enum CBLAS_TRANSPOSE op_of(char t) {
    return (t == 'N' || t == 'n') ? CblasNoTrans : (t == 'T' || t == 't') ? CblasTrans : CblasConjTrans;
}

// CBLAS side, uplo and diag of a triangular routine (?trsm, ?trmm).
typedef struct {
    enum CBLAS_SIDE side;
    enum CBLAS_UPLO uplo;
    enum CBLAS_DIAG diag;
} tri_enums;
static tri_enums tri_of(char side, char uplo, char diag) {
    tri_enums e = {(side == 'L' || side == 'l') ? CblasLeft : CblasRight, is_upper(uplo) ? CblasUpper : CblasLower,
                   (diag == 'U' || diag == 'u') ? CblasUnit : CblasNonUnit};
    return e;
}

// Flops of a triangular product or solve of m x n (side L: the triangle is m x m), for pacing.
static double tri_flops(char prec, char side, int64_t m, int64_t n) {
    int left = side == 'L' || side == 'l';
    double tri = left ? (double)m : (double)n;
    return tri * tri * (double)(left ? n : m) * (ts_prec_is_complex(prec) ? 4 : 1);
}

int ts_trsm_cpu(char prec, char side, char uplo, char ta, char diag, int64_t m, int64_t n,
                const void *alpha, const void *A, int64_t lda, void *B, int64_t ldb) {
    int pos = ts_dtrsm_check_args(side, uplo, ta, diag, m, n, lda, ldb);
    if (pos) TS_RAISE(TS_ERR_ARG, "ts_trsm_cpu: argument %d is invalid", pos);
    if (m > INT_MAX || n > INT_MAX || lda > INT_MAX || ldb > INT_MAX)
        TS_RAISE(TS_ERR_ARG, "ts_trsm_cpu: dimensions exceed the CBLAS int range (m=%lld n=%lld)", (long long)m,
                 (long long)n);
    if (m == 0 || n == 0) return 0;
    tri_enums e = tri_of(side, uplo, diag);
    int M = (int)m, N = (int)n, LA = (int)lda, LB = (int)ldb;
    switch (prec) {
    case 's': cblas_strsm(CblasColMajor, e.side, e.uplo, op_of(ta), e.diag, M, N, *(const float *)alpha, A, LA, B, LB); break;
    case 'd': cblas_dtrsm(CblasColMajor, e.side, e.uplo, op_of(ta), e.diag, M, N, *(const double *)alpha, A, LA, B, LB); break;
    case 'c': cblas_ctrsm(CblasColMajor, e.side, e.uplo, op_of(ta), e.diag, M, N, alpha, A, LA, B, LB); break;
    case 'z': cblas_ztrsm(CblasColMajor, e.side, e.uplo, op_of(ta), e.diag, M, N, alpha, A, LA, B, LB); break;
    default: TS_RAISE(TS_ERR_ARG, "ts_trsm_cpu: precision '%c'", prec);
    }
    return 0;
}

typedef struct {
    char prec, side, uplo, ta, diag;
    int64_t m, n, lda, ldb;
    unsigned char alpha[16];
    const void *A;
    void *B;
} trsm_args;

static int trsm_run(void *p) {
    const trsm_args *a = p;
    return ts_trsm_cpu(a->prec, a->side, a->uplo, a->ta, a->diag, a->m, a->n, a->alpha, a->A, a->lda, a->B, a->ldb);
}

int ts_dev_trsm(ts_stream *st, char prec, char side, char uplo, char ta, char diag, int64_t m,
                int64_t n, const void *alpha, const void *A, int64_t lda, void *B, int64_t ldb) {
    if (!st) TS_RAISE(TS_ERR_ARG, "ts_dev_trsm: no stream");
    size_t es = ts_prec_size(prec);
    if (!es) TS_RAISE(TS_ERR_ARG, "ts_dev_trsm: precision '%c'", prec);
    int pos = ts_dtrsm_check_args(side, uplo, ta, diag, m, n, lda, ldb);
    if (pos)
        TS_RAISE(TS_ERR_ARG, "ts_dev_trsm: argument %d is invalid (side=%c uplo=%c transa=%c diag=%c m=%lld n=%lld "
                 "lda=%lld ldb=%lld)", pos, side, uplo, ta, diag, (long long)m, (long long)n, (long long)lda,
                 (long long)ldb);
    if (m == 0 || n == 0) return 0;
    switch (stream_backend(st)) {
    case TS_BACKEND_SIM: {
        trsm_args a = {prec, side, uplo, ta, diag, m, n, lda, ldb, {0}, A, B};
        memcpy(a.alpha, alpha, es);
        ts_kernel k = {.name = "trsm_cpu", .flops = tri_flops(prec, side, m, n),
                       .cpu = trsm_run, .args = &a, .args_size = sizeof a};
        return ts_kernel_enqueue(st, &k);
    }
    case TS_BACKEND_CUDA:
#if TS_HAVE_CUDA
        return ts_cuda_trsm(st, prec, side, uplo, ta, diag, m, n, alpha, A, lda, B, ldb);
#else
        TS_RAISE(TS_ERR_UNSUPPORTED, "ts_dev_trsm: this build has no CUDA backend");
#endif
    default: TS_RAISE(TS_ERR_ARG, "ts_dev_trsm: the stream's device has no backend");
    }
}

// ---------------------------------------------------------------- rank-k / rank-2k (diagonal tiles)

static int rank_check(const char *who, char prec, char uplo, char trans, int64_t n, int64_t k, int64_t lda,
                      int64_t ldb, int64_t ldc) {
    if (!ts_prec_size(prec)) TS_RAISE(TS_ERR_ARG, "%s: precision '%c'", who, prec);
    int up = uplo == 'U' || uplo == 'u', lo = uplo == 'L' || uplo == 'l';
    int tn = trans == 'N' || trans == 'n', tt = trans == 'T' || trans == 't';
    int64_t rows = tn ? n : k, m1 = rows > 1 ? rows : 1;
    if (!(up || lo) || !(tn || tt) || n < 0 || k < 0 || lda < m1 || ldb < m1 || ldc < (n > 1 ? n : 1))
        TS_RAISE(TS_ERR_ARG, "%s: uplo=%c trans=%c n=%lld k=%lld lda=%lld ldb=%lld ldc=%lld", who, uplo, trans,
                 (long long)n, (long long)k, (long long)lda, (long long)ldb, (long long)ldc);
    if (n > INT_MAX || k > INT_MAX || lda > INT_MAX || ldb > INT_MAX || ldc > INT_MAX)
        TS_RAISE(TS_ERR_ARG, "%s: dimensions exceed the int range (n=%lld k=%lld)", who, (long long)n, (long long)k);
    return 0;
}

int ts_rank_cpu(char prec, int two, char uplo, char trans, int64_t n, int64_t k, const void *alpha,
                const void *A, int64_t lda, const void *B, int64_t ldb, const void *beta, void *C, int64_t ldc) {
    if (!two) B = A, ldb = lda;
    TS_CHECK(rank_check("ts_rank_cpu", prec, uplo, trans, n, k, lda, ldb, ldc));
    if (n == 0) return 0;
    enum CBLAS_UPLO u = is_upper(uplo) ? CblasUpper : CblasLower;
    enum CBLAS_TRANSPOSE t = (trans == 'N' || trans == 'n') ? CblasNoTrans : CblasTrans;
    int N = (int)n, K = (int)k, LA = (int)lda, LB = (int)ldb, LC = (int)ldc;
    switch (prec * 2 + two) {
    case 's' * 2: cblas_ssyrk(CblasColMajor, u, t, N, K, *(const float *)alpha, A, LA, *(const float *)beta, C, LC); break;
    case 'd' * 2: cblas_dsyrk(CblasColMajor, u, t, N, K, *(const double *)alpha, A, LA, *(const double *)beta, C, LC); break;
    case 'c' * 2: cblas_csyrk(CblasColMajor, u, t, N, K, alpha, A, LA, beta, C, LC); break;
    case 'z' * 2: cblas_zsyrk(CblasColMajor, u, t, N, K, alpha, A, LA, beta, C, LC); break;
    case 's' * 2 + 1:
        cblas_ssyr2k(CblasColMajor, u, t, N, K, *(const float *)alpha, A, LA, B, LB, *(const float *)beta, C, LC);
        break;
    case 'd' * 2 + 1:
        cblas_dsyr2k(CblasColMajor, u, t, N, K, *(const double *)alpha, A, LA, B, LB, *(const double *)beta, C, LC);
        break;
    case 'c' * 2 + 1: cblas_csyr2k(CblasColMajor, u, t, N, K, alpha, A, LA, B, LB, beta, C, LC); break;
    case 'z' * 2 + 1: cblas_zsyr2k(CblasColMajor, u, t, N, K, alpha, A, LA, B, LB, beta, C, LC); break;
    default: TS_RAISE(TS_ERR_ARG, "ts_rank_cpu: precision '%c'", prec);
    }
    return 0;
}

typedef struct {
    char prec, uplo, trans;
    int two;
    int64_t n, k, lda, ldb, ldc;
    unsigned char alpha[16], beta[16];
    const void *A, *B;
    void *C;
} rank_args;

static int rank_run(void *p) {
    const rank_args *a = p;
    return ts_rank_cpu(a->prec, a->two, a->uplo, a->trans, a->n, a->k, a->alpha, a->A, a->lda, a->B, a->ldb, a->beta,
                       a->C, a->ldc);
}

int ts_dev_rank(ts_stream *st, char prec, int two, char uplo, char trans, int64_t n, int64_t k, const void *alpha,
                const void *A, int64_t lda, const void *B, int64_t ldb, const void *beta, void *C, int64_t ldc) {
    if (!st) TS_RAISE(TS_ERR_ARG, "ts_dev_rank: no stream");
    if (!two) B = A, ldb = lda;
    TS_CHECK(rank_check("ts_dev_rank", prec, uplo, trans, n, k, lda, ldb, ldc));
    if (n == 0) return 0;
    size_t es = ts_prec_size(prec);
    switch (stream_backend(st)) {
    case TS_BACKEND_SIM: {
        rank_args a = {prec, uplo, trans, two, n, k, lda, ldb, ldc, {0}, {0}, A, B, C};
        memcpy(a.alpha, alpha, es), memcpy(a.beta, beta, es);
        double f = (double)n * (double)(n + 1) * (double)k * (two ? 2 : 1) * (ts_prec_is_complex(prec) ? 4 : 1);
        ts_kernel kr = {.name = two ? "syr2k_cpu" : "syrk_cpu", .flops = f, .cpu = rank_run, .args = &a,
                        .args_size = sizeof a};
        return ts_kernel_enqueue(st, &kr);
    }
    case TS_BACKEND_CUDA:
#if TS_HAVE_CUDA
        return ts_cuda_rank(st, prec, two, uplo, trans, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
#else
        TS_RAISE(TS_ERR_UNSUPPORTED, "ts_dev_rank: this build has no CUDA backend");
#endif
    default: TS_RAISE(TS_ERR_ARG, "ts_dev_rank: the stream's device has no backend");
    }
}

// ---------------------------------------------------------------- triangle write-back

static void put_tri_host(char prec, char uplo, int64_t n, const void *src, int64_t lds, void *dst, int64_t ldd) {
    size_t es = ts_prec_size(prec);
    int up = is_upper(uplo);
    for (int64_t q = 0; q < n; q++) {
        int64_t r0 = up ? 0 : q, r1 = up ? q + 1 : n;
        memcpy((char *)dst + ((size_t)r0 + (size_t)q * (size_t)ldd) * es,
               (const char *)src + ((size_t)r0 + (size_t)q * (size_t)lds) * es, (size_t)(r1 - r0) * es);
    }
}

static int put_run(void *p) {
    const ts_tile_put_args *a = p;
    put_tri_host(a->prec, a->uplo, a->n, a->src, a->lds, a->dst, a->ldd);
    return 0;
}

// The arguments of a tile op from an n x n tile (lds) to another (ldd) on stream st.
static int pair_check(const char *who, ts_stream *st, char prec, int64_t n, int64_t lds, int64_t ldd) {
    if (!st) TS_RAISE(TS_ERR_ARG, "%s: no stream", who);
    if (!ts_prec_size(prec)) TS_RAISE(TS_ERR_ARG, "%s: precision '%c'", who, prec);
    if (n < 0 || lds < (n > 1 ? n : 1) || ldd < (n > 1 ? n : 1))
        TS_RAISE(TS_ERR_ARG, "%s: n=%lld lds=%lld ldd=%lld", who, (long long)n, (long long)lds, (long long)ldd);
    return 0;
}

int ts_dev_tile_put_tri(ts_stream *st, char prec, char uplo, int64_t n, const void *src, int64_t lds, void *dst,
                        int64_t ldd) {
    TS_CHECK(pair_check("ts_dev_tile_put_tri", st, prec, n, lds, ldd));
    if (n == 0) return 0;
    ts_tile_put_args a = {.prec = prec, .uplo = is_upper(uplo) ? 'U' : 'L', .n = n, .lds = lds, .ldd = ldd,
                          .src = src, .dst = dst};
    ts_kernel k = {.name = "tile_put_tri", .flops = 0, .cpu = put_run, .args = &a, .args_size = sizeof a};
    switch (stream_backend(st)) {
    case TS_BACKEND_SIM: // device memory is host memory there: the same loop, unless the set says no
        if (!ts_device_props_of(ts_stream_device(st))->host_mapped) return 1;
        break;
    case TS_BACKEND_CUDA:
#if TS_HAVE_CUDA
        if (!ts_cuda_host_mapped(dst, &a.dst)) return 1;
        k.cuda = ts_cuda_tile_put;
        break;
#else
        TS_RAISE(TS_ERR_UNSUPPORTED, "ts_dev_tile_put_tri: this build has no CUDA backend");
#endif
    default: TS_RAISE(TS_ERR_ARG, "ts_dev_tile_put_tri: the stream's device has no backend");
    }
    TS_CHECK(ts_kernel_enqueue(st, &k));
    return 0;
}

static int trans_run(void *p) {
    const ts_tile_put_args *a = p;
    size_t es = ts_prec_size(a->prec);
    for (int64_t j = 0; j < a->n; j++)
        for (int64_t i = 0; i < a->n; i++)
            memcpy((char *)a->dst + ((size_t)j + (size_t)i * (size_t)a->ldd) * es,
                   (const char *)a->src + ((size_t)i + (size_t)j * (size_t)a->lds) * es, es);
    return 0;
}

int ts_dev_tile_trans(ts_stream *st, char prec, int64_t n, const void *src, int64_t lds, void *dst, int64_t ldd) {
    TS_CHECK(pair_check("ts_dev_tile_trans", st, prec, n, lds, ldd));
    if (n == 0) return 0;
    ts_tile_put_args a = {.prec = prec, .uplo = 'L', .n = n, .lds = lds, .ldd = ldd, .src = src, .dst = dst};
    ts_kernel k = {.name = "tile_trans", .flops = 0, .cpu = trans_run, .args = &a, .args_size = sizeof a};
#if TS_HAVE_CUDA
    k.cuda = ts_cuda_tile_trans;
#endif
    return ts_kernel_enqueue(st, &k);
}

// ---------------------------------------------------------------- TRMM (diagonal products)

int ts_trmm_cpu(char prec, char side, char uplo, char ta, char diag, int64_t m, int64_t n, const void *alpha,
                const void *A, int64_t lda, const void *B, int64_t ldb, void *C, int64_t ldc) {
    int pos = ts_dtrsm_check_args(side, uplo, ta, diag, m, n, lda, ldc);
    if (pos || ldb < (m > 1 ? m : 1)) TS_RAISE(TS_ERR_ARG, "ts_trmm_cpu: argument %d is invalid", pos ? pos : 11);
    if (m > INT_MAX || n > INT_MAX || lda > INT_MAX || ldc > INT_MAX)
        TS_RAISE(TS_ERR_ARG, "ts_trmm_cpu: dimensions exceed the CBLAS int range (m=%lld n=%lld)", (long long)m,
                 (long long)n);
    if (m == 0 || n == 0) return 0;
    size_t es = ts_prec_size(prec);
    for (int64_t j = 0; j < n; j++)
        memcpy((char *)C + (size_t)j * (size_t)ldc * es, (const char *)B + (size_t)j * (size_t)ldb * es, (size_t)m * es);
    tri_enums e = tri_of(side, uplo, diag);
    int M = (int)m, N = (int)n, LA = (int)lda, LC = (int)ldc;
    switch (prec) {
    case 's': cblas_strmm(CblasColMajor, e.side, e.uplo, op_of(ta), e.diag, M, N, *(const float *)alpha, A, LA, C, LC); break;
    case 'd': cblas_dtrmm(CblasColMajor, e.side, e.uplo, op_of(ta), e.diag, M, N, *(const double *)alpha, A, LA, C, LC); break;
    case 'c': cblas_ctrmm(CblasColMajor, e.side, e.uplo, op_of(ta), e.diag, M, N, alpha, A, LA, C, LC); break;
    case 'z': cblas_ztrmm(CblasColMajor, e.side, e.uplo, op_of(ta), e.diag, M, N, alpha, A, LA, C, LC); break;
    default: TS_RAISE(TS_ERR_ARG, "ts_trmm_cpu: precision '%c'", prec);
    }
    return 0;
}

typedef struct {
    char prec, side, uplo, ta, diag;
    int64_t m, n, lda, ldb, ldc;
    unsigned char alpha[16];
    const void *A, *B;
    void *C;
} trmm_args;

static int trmm_run(void *p) {
    const trmm_args *a = p;
    return ts_trmm_cpu(a->prec, a->side, a->uplo, a->ta, a->diag, a->m, a->n, a->alpha, a->A, a->lda, a->B, a->ldb,
                       a->C, a->ldc);
}

int ts_dev_trmm(ts_stream *st, char prec, char side, char uplo, char ta, char diag, int64_t m, int64_t n,
                const void *alpha, const void *A, int64_t lda, const void *B, int64_t ldb, void *C, int64_t ldc) {
    if (!st) TS_RAISE(TS_ERR_ARG, "ts_dev_trmm: no stream");
    size_t es = ts_prec_size(prec);
    if (!es) TS_RAISE(TS_ERR_ARG, "ts_dev_trmm: precision '%c'", prec);
    int pos = ts_dtrsm_check_args(side, uplo, ta, diag, m, n, lda, ldc);
    if (pos || ldb < (m > 1 ? m : 1))
        TS_RAISE(TS_ERR_ARG, "ts_dev_trmm: argument %d is invalid (side=%c uplo=%c transa=%c diag=%c m=%lld n=%lld)",
                 pos ? pos : 11, side, uplo, ta, diag, (long long)m, (long long)n);
    if (m == 0 || n == 0) return 0;
    switch (stream_backend(st)) {
    case TS_BACKEND_SIM: {
        trmm_args a = {prec, side, uplo, ta, diag, m, n, lda, ldb, ldc, {0}, A, B, C};
        memcpy(a.alpha, alpha, es);
        ts_kernel k = {.name = "trmm_cpu", .flops = tri_flops(prec, side, m, n),
                       .cpu = trmm_run, .args = &a, .args_size = sizeof a};
        return ts_kernel_enqueue(st, &k);
    }
    case TS_BACKEND_CUDA:
#if TS_HAVE_CUDA
        return ts_cuda_trmm(st, prec, side, uplo, ta, diag, m, n, alpha, A, lda, B, ldb, C, ldc);
#else
        TS_RAISE(TS_ERR_UNSUPPORTED, "ts_dev_trmm: this build has no CUDA backend");
#endif
    default: TS_RAISE(TS_ERR_ARG, "ts_dev_trmm: the stream's device has no backend");
    }
}

// ---------------------------------------------------------------- blocked TRMM / TRSM on a device
//
// The triangle split in two at k1: the two diagonal halves recursively, the off-diagonal block by
// one GEMM; below `base` the library's ?trmm/?trsm. On a 4096 tile with base 512 seven eighths of
// the flops run as GEMMs of inner dimension 512-2048, where ?trmm/?trsm on the whole block run at
// about half the GEMM's rate.

static void set_minus_one(char prec, char *x) {
    memset(x, 0, ts_prec_size(prec));
    if (prec == 's' || prec == 'c') ((float *)x)[0] = -1.0f;
    else ((double *)x)[0] = -1.0;
}

// Block (p, q) of op(A) (rows at p, columns at q, in op(A)'s indices) and the op to apply to it.
static const char *opa_block(const char *A, int64_t lda, size_t es, char ta, int64_t p, int64_t q, char *op) {
    if (ta == 'N' || ta == 'n') {
        *op = 'N';
        return A + ((size_t)p + (size_t)q * (size_t)lda) * es;
    }
    *op = ta;
    return A + ((size_t)q + (size_t)p * (size_t)lda) * es;
}

static int64_t split_at(int64_t k) {
    int64_t k1 = (k / 2 + 63) / 64 * 64;
    return k1 > 0 && k1 < k ? k1 : k / 2;
}

int ts_dev_trmm_blocked(ts_stream *st, ts_engine engine, char prec, char side, char uplo, char ta, char diag,
                        int64_t m, int64_t n, const void *alpha, const void *A, int64_t lda, const void *B,
                        int64_t ldb, void *C, int64_t ldc, int64_t base) {
    const int left = side == 'L' || side == 'l';
    const int64_t k = left ? m : n;
    if (base < 1 || k <= base || m == 0 || n == 0)
        return ts_dev_trmm(st, prec, side, uplo, ta, diag, m, n, alpha, A, lda, B, ldb, C, ldc);
    const size_t es = ts_prec_size(prec);
    if (!es) TS_RAISE(TS_ERR_ARG, "ts_dev_trmm_blocked: precision '%c'", prec);
    _Alignas(16) char one[16];
    set_one(prec, one);
    const int opup = is_upper(uplo) == (ta == 'N' || ta == 'n');
    const int64_t k1 = split_at(k), k2 = k - k1;
    const char *a = A, *b = B;
    char *c = C;
    const char *a22 = a + ((size_t)k1 + (size_t)k1 * (size_t)lda) * es;
    char op;
    if (left) { // C = op(A) B, split by rows
        const char *b2 = b + (size_t)k1 * es;
        char *c2 = c + (size_t)k1 * es;
        if (!opup) { // C2 = X22 B2 + X21 B1, C1 = X11 B1
            TS_CHECK(ts_dev_trmm_blocked(st, engine, prec, side, uplo, ta, diag, k2, n, alpha, a22, lda, b2, ldb, c2,
                                         ldc, base));
            const char *x21 = opa_block(a, lda, es, ta, k1, 0, &op);
            TS_CHECK(ts_dev_gemm(st, engine, prec, op, 'N', k2, n, k1, alpha, x21, lda, b, ldb, one, c2, ldc));
            return ts_dev_trmm_blocked(st, engine, prec, side, uplo, ta, diag, k1, n, alpha, a, lda, b, ldb, c, ldc,
                                       base);
        }
        // C1 = X11 B1 + X12 B2, C2 = X22 B2
        TS_CHECK(ts_dev_trmm_blocked(st, engine, prec, side, uplo, ta, diag, k1, n, alpha, a, lda, b, ldb, c, ldc,
                                     base));
        const char *x12 = opa_block(a, lda, es, ta, 0, k1, &op);
        TS_CHECK(ts_dev_gemm(st, engine, prec, op, 'N', k1, n, k2, alpha, x12, lda, b2, ldb, one, c, ldc));
        return ts_dev_trmm_blocked(st, engine, prec, side, uplo, ta, diag, k2, n, alpha, a22, lda, b2, ldb, c2, ldc,
                                   base);
    }
    // C = B op(A), split by columns
    const char *b2 = b + (size_t)k1 * (size_t)ldb * es;
    char *c2 = c + (size_t)k1 * (size_t)ldc * es;
    if (!opup) { // C1 = B1 X11 + B2 X21, C2 = B2 X22
        TS_CHECK(ts_dev_trmm_blocked(st, engine, prec, side, uplo, ta, diag, m, k1, alpha, a, lda, b, ldb, c, ldc,
                                     base));
        const char *x21 = opa_block(a, lda, es, ta, k1, 0, &op);
        TS_CHECK(ts_dev_gemm(st, engine, prec, 'N', op, m, k1, k2, alpha, b2, ldb, x21, lda, one, c, ldc));
        return ts_dev_trmm_blocked(st, engine, prec, side, uplo, ta, diag, m, k2, alpha, a22, lda, b2, ldb, c2, ldc,
                                   base);
    }
    // C2 = B1 X12 + B2 X22, C1 = B1 X11
    TS_CHECK(ts_dev_trmm_blocked(st, engine, prec, side, uplo, ta, diag, m, k2, alpha, a22, lda, b2, ldb, c2, ldc,
                                 base));
    const char *x12 = opa_block(a, lda, es, ta, 0, k1, &op);
    TS_CHECK(ts_dev_gemm(st, engine, prec, 'N', op, m, k2, k1, alpha, b, ldb, x12, lda, one, c2, ldc));
    return ts_dev_trmm_blocked(st, engine, prec, side, uplo, ta, diag, m, k1, alpha, a, lda, b, ldb, c, ldc, base);
}

int ts_dev_trsm_blocked(ts_stream *st, ts_engine engine, char prec, char side, char uplo, char ta, char diag,
                        int64_t m, int64_t n, const void *alpha, const void *A, int64_t lda, void *B, int64_t ldb,
                        int64_t base) {
    const int left = side == 'L' || side == 'l';
    const int64_t k = left ? m : n;
    if (base < 1 || k <= base || m == 0 || n == 0)
        return ts_dev_trsm(st, prec, side, uplo, ta, diag, m, n, alpha, A, lda, B, ldb);
    const size_t es = ts_prec_size(prec);
    if (!es) TS_RAISE(TS_ERR_ARG, "ts_dev_trsm_blocked: precision '%c'", prec);
    _Alignas(16) char one[16], minus1[16];
    set_one(prec, one);
    set_minus_one(prec, minus1);
    const int opup = is_upper(uplo) == (ta == 'N' || ta == 'n');
    const int64_t k1 = split_at(k), k2 = k - k1;
    const char *a = A, *a22 = a + ((size_t)k1 + (size_t)k1 * (size_t)lda) * es;
    char *b = B, op;
    if (left) { // op(A) X = alpha B, split by rows
        char *b2 = b + (size_t)k1 * es;
        if (!opup) { // X1 = X11^-1 alpha B1; B2 = alpha B2 - X21 X1; X2 = X22^-1 B2
            TS_CHECK(ts_dev_trsm_blocked(st, engine, prec, side, uplo, ta, diag, k1, n, alpha, a, lda, b, ldb, base));
            const char *x21 = opa_block(a, lda, es, ta, k1, 0, &op);
            TS_CHECK(ts_dev_gemm(st, engine, prec, op, 'N', k2, n, k1, minus1, x21, lda, b, ldb, alpha, b2, ldb));
            return ts_dev_trsm_blocked(st, engine, prec, side, uplo, ta, diag, k2, n, one, a22, lda, b2, ldb, base);
        }
        // X2 = X22^-1 alpha B2; B1 = alpha B1 - X12 X2; X1 = X11^-1 B1
        TS_CHECK(ts_dev_trsm_blocked(st, engine, prec, side, uplo, ta, diag, k2, n, alpha, a22, lda, b2, ldb, base));
        const char *x12 = opa_block(a, lda, es, ta, 0, k1, &op);
        TS_CHECK(ts_dev_gemm(st, engine, prec, op, 'N', k1, n, k2, minus1, x12, lda, b2, ldb, alpha, b, ldb));
        return ts_dev_trsm_blocked(st, engine, prec, side, uplo, ta, diag, k1, n, one, a, lda, b, ldb, base);
    }
    // X op(A) = alpha B, split by columns
    char *b2 = b + (size_t)k1 * (size_t)ldb * es;
    if (!opup) { // X2 = alpha B2 X22^-1; B1 = alpha B1 - X2 X21; X1 = B1 X11^-1
        TS_CHECK(ts_dev_trsm_blocked(st, engine, prec, side, uplo, ta, diag, m, k2, alpha, a22, lda, b2, ldb, base));
        const char *x21 = opa_block(a, lda, es, ta, k1, 0, &op);
        TS_CHECK(ts_dev_gemm(st, engine, prec, 'N', op, m, k1, k2, minus1, b2, ldb, x21, lda, alpha, b, ldb));
        return ts_dev_trsm_blocked(st, engine, prec, side, uplo, ta, diag, m, k1, one, a, lda, b, ldb, base);
    }
    // X1 = alpha B1 X11^-1; B2 = alpha B2 - X1 X12; X2 = B2 X22^-1
    TS_CHECK(ts_dev_trsm_blocked(st, engine, prec, side, uplo, ta, diag, m, k1, alpha, a, lda, b, ldb, base));
    const char *x12 = opa_block(a, lda, es, ta, 0, k1, &op);
    TS_CHECK(ts_dev_gemm(st, engine, prec, 'N', op, m, k2, k1, minus1, b, ldb, x12, lda, alpha, b2, ldb));
    return ts_dev_trsm_blocked(st, engine, prec, side, uplo, ta, diag, m, k2, one, a22, lda, b2, ldb, base);
}
