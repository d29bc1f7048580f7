// ts_mxp_kernels.c: HPL-MxP's kernels: the host versions (also the simulated devices' code) and the dispatch to a stream.
#include "ts_config.h"
#if TS_HAVE_CUDA
#define TS_MXP_WITH_CUDA 1
#endif
#include "kernels/ts_mxp_kernels.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/ts_error.h"
#include "core/ts_rng.h"

const char *ts_mxp_fmt_name(ts_mxp_fmt f) { return f == TS_MXP_BF16 ? "bf16" : f == TS_MXP_FP8 ? "fp8" : "fp16"; }

// ---- 16-bit formats ----

static uint16_t f2h(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) return (uint16_t)(sign | (ax > 0x7f800000u ? 0x7e00u : 0x7c00u));
    if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); // >= 65520 rounds to infinity
    if (ax >= 0x38800000u) {                                  // a normal half (>= 2^-14)
        uint32_t mant = ax & 0x7fffffu;
        uint32_t h = ((((ax >> 23) - 127u + 15u)) << 10) | (mant >> 13);
        uint32_t rem = mant & 0x1fffu;
        if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) h++; // a carry moves into the exponent
        return (uint16_t)(sign | h);
    }
    if (ax < 0x33000000u) return (uint16_t)sign; // below 2^-25 (2^-25 itself ties to 0)
    // subnormal half: units of 2^-24
    uint32_t mant = (ax & 0x7fffffu) | 0x800000u;
    int shift = 126 - (int)(ax >> 23);
    uint32_t h = mant >> shift, rem = mant & ((1u << shift) - 1u), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1u))) h++;
    return (uint16_t)(sign | h);
}

static float h2f(uint16_t h) {
    uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    float v;
    if (e == 0) v = ldexpf((float)m, -24);
    else if (e == 31) v = m ? NAN : INFINITY;
    else v = ldexpf((float)(m | 0x400u), (int)e - 25);
    return (h & 0x8000u) ? -v : v;
}

static uint16_t f2b(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u); // quiet NaN
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

static float b2f(uint16_t b) {
    uint32_t x = (uint32_t)b << 16;
    float f;
    memcpy(&f, &x, 4);
    return f;
}

uint16_t ts_mxp_to16(float v, ts_mxp_fmt f) { return f == TS_MXP_BF16 ? f2b(v) : f2h(v); }
float ts_mxp_from16(uint16_t h, ts_mxp_fmt f) { return f == TS_MXP_BF16 ? b2f(h) : h2f(h); }

// ---- host versions ----

int ts_mxp_gen_cpu(void *vargs) {
    const ts_mxp_gen_args *a = vargs;
    if (a->m <= 0) return 0;
    memset(a->rowsum, 0, sizeof(double) * (size_t)a->m);
    const ts_lcg64_jump step = ts_lcg64_jump_n(1);
    for (int64_t j = 0; j < a->n; j++) {
        const int64_t gj = a->col0 + j;
        uint64_t x = ts_lcg64_apply(ts_lcg64_jump_n(1u + (uint64_t)a->row0 + (uint64_t)gj * (uint64_t)a->N),
                                    TS_MXP_SEED_A);
        float *col = a->A + j * a->lda;
        for (int64_t i = 0; i < a->m; i++) {
            const double v = ts_mxp_value(x);
            col[i] = (float)v;
            if (a->row0 + i != gj) a->rowsum[i] += fabs(v);
            else if (a->adiag) a->adiag[i] = v;
            x = ts_lcg64_apply(step, x);
        }
    }
    return 0;
}

// Global index of local index l of a block-cyclic map (blocks of nb, member p of np).
static int64_t bc_global(int64_t l, int64_t nb, int p, int np) { return ((l / nb) * np + p) * nb + l % nb; }

int ts_mxp_resid_cpu(void *vargs) {
    const ts_mxp_resid_args *a = vargs;
    if (a->m <= 0) return 0;
    for (int64_t i = 0; i < a->m; i++) a->r[i] = a->b ? a->b[i] : 0.0;
    const ts_lcg64_jump step = ts_lcg64_jump_n(1);
    const ts_lcg64_jump skip = ts_lcg64_jump_n((uint64_t)(a->P - 1) * (uint64_t)a->nb + 1u); // the next local row block
    for (int64_t j = 0; j < a->n; j++) {
        const int64_t gj = a->col0 + bc_global(j, a->nb, a->pcol, a->Q);
        const double xj = a->x[j];
        int64_t gi = a->row0 + bc_global(0, a->nb, a->prow, a->P);
        uint64_t x = ts_lcg64_apply(ts_lcg64_jump_n(1u + (uint64_t)gi + (uint64_t)gj * (uint64_t)a->N), TS_MXP_SEED_A);
        for (int64_t i = 0; i < a->m; i++) {
            const double v = gi == gj ? a->d[i] : ts_mxp_value(x);
            a->r[i] -= v * xj;
            const int across = (i + 1) % a->nb == 0;
            x = ts_lcg64_apply(across ? skip : step, x);
            gi += across ? (int64_t)(a->P - 1) * a->nb + 1 : 1;
        }
    }
    return 0;
}

// LU without pivoting, recursive (halves), with the CPU BLAS for the off-diagonal blocks.
static void lu_nopiv(int64_t n, float *A, int64_t lda) {
    if (n <= 32) {
        for (int64_t k = 0; k < n; k++) {
            const float p = A[k + k * lda];
            for (int64_t i = k + 1; i < n; i++) A[i + k * lda] /= p;
            for (int64_t j = k + 1; j < n; j++) {
                const float u = A[k + j * lda];
                for (int64_t i = k + 1; i < n; i++) A[i + j * lda] -= A[i + k * lda] * u;
            }
        }
        return;
    }
    const int64_t n1 = n / 2, n2 = n - n1;
    float *A12 = A + n1 * lda, *A21 = A + n1, *A22 = A + n1 + n1 * lda;
    lu_nopiv(n1, A, lda);
    cblas_strsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasUnit, (int)n1, (int)n2, 1.0f, A,
                (int)lda, A12, (int)lda);
    cblas_strsm(CblasColMajor, CblasRight, CblasUpper, CblasNoTrans, CblasNonUnit, (int)n2, (int)n1, 1.0f, A,
                (int)lda, A21, (int)lda);
    cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int)n2, (int)n2, (int)n1, -1.0f, A21, (int)lda, A12,
                (int)lda, 1.0f, A22, (int)lda);
    lu_nopiv(n2, A22, lda);
}

static void identity(int64_t n, float *X, int64_t ld) {
    for (int64_t j = 0; j < n; j++) {
        memset(X + j * ld, 0, sizeof(float) * (size_t)n);
        X[j + j * ld] = 1.0f;
    }
}

int ts_mxp_getrf_cpu(void *vargs) {
    const ts_mxp_getrf_args *a = vargs;
    const int64_t jb = a->jb, lda = a->lda, ldi = a->ldi;
    if (jb <= 0) return 0;
    lu_nopiv(jb, a->A, lda);
    for (int64_t i = 0; i < jb; i++) {
        const float u = a->A[i + i * lda];
        if (!(isfinite(u) && u != 0.0f)) {
            if (a->k->flag == 0) a->k->flag = a->col0 + i + 1;
            break;
        }
    }
    identity(jb, a->Linv, ldi);
    identity(jb, a->Uinv, ldi);
    cblas_strsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasUnit, (int)jb, (int)jb, 1.0f, a->A,
                (int)lda, a->Linv, (int)ldi);
    cblas_strsm(CblasColMajor, CblasLeft, CblasUpper, CblasNoTrans, CblasNonUnit, (int)jb, (int)jb, 1.0f, a->A,
                (int)lda, a->Uinv, (int)ldi);
    return 0;
}

// ---- FP8 E4M3 ----

uint8_t ts_mxp_to8(float v) {
    const uint8_t sign = signbit(v) ? 0x80u : 0u;
    const float a = fabsf(v);
    if (isnan(v)) return 0x7fu;
    if (a >= TS_MXP_FP8_MAX) return (uint8_t)(sign | 0x7eu); // saturated
    if (a < 0x1p-6f) return (uint8_t)(sign | (uint8_t)rintf(a * 0x1p9f)); // subnormal (8: the smallest normal)
    int x;
    const float f = frexpf(a, &x); // a = f 2^x, f in [0.5, 1): exponent x - 1, mantissa 2f in [1, 2)
    const int q = (int)rintf((2.0f * f - 1.0f) * 8.0f); // 0..8 (8 carries into the exponent)
    const int code = ((x - 1 + 7) << 3) + q;
    return (uint8_t)(sign | (code > 0x7e ? 0x7e : code));
}

float ts_mxp_from8(uint8_t c) {
    const int e = (c >> 3) & 15, m = c & 7;
    float v;
    if (e == 15 && m == 7) v = NAN;
    else if (e == 0) v = ldexpf((float)m, -9);
    else v = ldexpf((float)(8 + m), e - 10);
    return (c & 0x80u) ? -v : v;
}

float ts_mxp_scale8(float amax) {
    if (!(amax > 0) || !isfinite(amax)) return 1.0f;
    int x;
    const float f = frexpf(amax, &x); // 448 = 0.875 2^9
    int e = (f <= 0.875f ? 9 : 8) - x;
    if (e > 120) e = 120;
    if (e < -120) e = -120;
    return ldexpf(1.0f, e);
}

static int cvt8_cpu(const ts_mxp_op_args *a) {
    const float *src = a->A;
    uint8_t *dst = a->C;
    float amax = 0.0f;
    for (int64_t j = 0; j < a->n; j++)
        for (int64_t i = 0; i < a->m; i++) {
            const float v = fabsf(src[i + j * a->lda]);
            if (v > amax || isnan(v)) amax = v;
        }
    const float s = ts_mxp_scale8(amax);
    const int64_t rows = a->trans ? a->n : a->m, cols = a->trans ? a->m : a->n;
    for (int64_t j = 0; j < a->n; j++)
        for (int64_t i = 0; i < a->m; i++) {
            const uint8_t c = ts_mxp_to8(s * src[i + j * a->lda]);
            if (a->trans) dst[j + i * a->ldc] = c;
            else dst[i + j * a->ldc] = c;
        }
    for (int64_t j = 0; j < cols; j++)
        for (int64_t i = rows; i < a->kk; i++) dst[i + j * a->ldc] = 0;
    a->sout[0] = 1.0f / s;
    return 0;
}

// C = alpha op(A) B + beta C with the operands widened exactly to FP32 (elt: element i of an
// operand) and the CPU BLAS's SGEMM: A m x kk (ta: stored kk x m), B kk x n.
static int gemm_widened(const ts_mxp_op_args *a, int ta, float alpha, float (*elt)(const void *, int64_t, ts_mxp_fmt)) {
    const int64_t m = a->m, n = a->n, kk = a->kk, ra = ta ? kk : m, ca = ta ? m : kk;
    if (m <= 0 || n <= 0) return 0;
    float *wa = malloc(sizeof(float) * (size_t)(m * kk + 1)), *wb = malloc(sizeof(float) * (size_t)(kk * n + 1));
    if (!wa || !wb) {
        free(wa);
        free(wb);
        TS_RAISE(TS_ERR_NOMEM, "mxp gemm: %lld x %lld x %lld operands", (long long)m, (long long)n, (long long)kk);
    }
    for (int64_t j = 0; j < ca; j++)
        for (int64_t i = 0; i < ra; i++) wa[i + j * ra] = elt(a->A, i + j * a->lda, a->k->fmt);
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < kk; i++) wb[i + j * kk] = elt(a->B, i + j * a->ldb, a->k->fmt);
    cblas_sgemm(CblasColMajor, ta ? CblasTrans : CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)kk, alpha, wa,
                (int)(ra > 0 ? ra : 1), wb, (int)(kk > 0 ? kk : 1), a->beta, a->C, (int)a->ldc);
    free(wa);
    free(wb);
    return 0;
}

static float elt16(const void *p, int64_t i, ts_mxp_fmt f) { return ts_mxp_from16(((const uint16_t *)p)[i], f); }
static float elt8(const void *p, int64_t i, ts_mxp_fmt f) {
    (void)f;
    return ts_mxp_from8(((const uint8_t *)p)[i]);
}

int ts_mxp_op_cpu(void *vargs) {
    const ts_mxp_op_args *a = vargs;
    switch (a->op) {
    case 0: { // cvt
        const float *src = a->A;
        uint16_t *dst = a->C;
        const float s = (float)a->s;
        for (int64_t j = 0; j < a->n; j++)
            for (int64_t i = 0; i < a->m; i++) dst[i + j * a->ldc] = ts_mxp_to16(s * src[i + j * a->lda], a->k->fmt);
        return 0;
    }
    case 1: return gemm_widened(a, 0, a->alpha, elt16);
    case 2:
        if (a->m > 0 && a->n > 0)
            cblas_sgemv(CblasColMajor, CblasNoTrans, (int)a->m, (int)a->n, a->alpha, a->A, (int)a->lda, a->B, 1,
                        a->beta, a->C, 1);
        else if (a->m > 0 && a->beta != 1.0f)
            for (int64_t i = 0; i < a->m; i++) ((float *)a->C)[i] *= a->beta;
        return 0;
    case 3: {
        const double *r = a->A;
        float *y = a->C;
        for (int64_t i = 0; i < a->n; i++) y[i] = (float)(a->s * r[i]);
        return 0;
    }
    case 4: {
        const float *c = a->A;
        double *x = a->C;
        for (int64_t i = 0; i < a->n; i++) x[i] += a->s * (double)c[i];
        return 0;
    }
    case 5: {
        const double *d = a->A;
        float *A = a->C;
        for (int64_t i = 0; i < a->n; i++) A[i + i * a->lda] = (float)d[i];
        return 0;
    }
    case 6: return cvt8_cpu(a);
    case 7: return gemm_widened(a, 1, a->alpha * a->sa[0] * a->sb[0], elt8); // E4M3 At^T B, scaled
    }
    TS_RAISE(TS_ERR_INTERNAL, "mxp: unknown operation %d", a->op);
}

// ---- context and dispatch ----

int ts_mxp_kern_create(ts_stream *st, ts_mxp_fmt fmt, int64_t nb, int64_t max_m, ts_mxp_kern **out) {
    *out = NULL;
    ts_mxp_kern *k = calloc(1, sizeof *k);
    if (!k) TS_RAISE(TS_ERR_NOMEM, "mxp kernel context");
    k->st = st;
    k->fmt = fmt;
    k->nb = nb;
    k->max_m = max_m;
    if (st && ts_device_props_of(ts_stream_device(st))->backend == TS_BACKEND_CUDA) {
#if TS_HAVE_CUDA
        k->cuda = 1;
        int rc = ts_mxp_cuda_init(k);
        if (rc < 0) {
            ts_mxp_cuda_fini(k);
            free(k);
            return rc;
        }
#else
        free(k);
        TS_RAISE(TS_ERR_UNSUPPORTED, "mxp: a CUDA stream in a build without CUDA");
#endif
    }
    *out = k;
    return 0;
}

void ts_mxp_kern_destroy(ts_mxp_kern *k) {
    if (!k) return;
#if TS_HAVE_CUDA
    if (k->cuda) ts_mxp_cuda_fini(k);
#endif
    free(k);
}

const char *ts_mxp_kern_engine(const ts_mxp_kern *k) { return k->cuda ? "cublas" : k->st ? "sim" : "cpu"; }

int ts_mxp_kern_sync(ts_mxp_kern *k) { return k->st ? ts_stream_sync(k->st) : 0; }

int ts_mxp_kern_breakdown(ts_mxp_kern *k, int64_t *col) {
    TS_CHECK(ts_mxp_kern_sync(k));
#if TS_HAVE_CUDA
    if (k->cuda) return ts_mxp_cuda_breakdown(k, col);
#endif
    *col = k->flag;
    return 0;
}

typedef int (*cuda_fn)(void *, void *);
static int run(ts_mxp_kern *k, const char *name, double flops, int (*cpu)(void *), cuda_fn cuda, void *args,
               size_t size) {
    if (!k->st) return cpu(args);
    ts_kernel kk = {name, flops, cpu, k->cuda ? cuda : NULL, args, size};
    return ts_kernel_enqueue(k->st, &kk);
}

#if TS_HAVE_CUDA
#define CUDA_FN(f) f
#else
#define CUDA_FN(f) NULL
#endif

int ts_mxp_gen(ts_mxp_kern *k, int64_t N, int64_t row0, int64_t col0, int64_t m, int64_t n, float *A,
               int64_t lda, double *rowsum, double *adiag) {
    if (m <= 0 || n <= 0) return 0;
    if (m > k->max_m) TS_RAISE(TS_ERR_ARG, "mxp gen: %lld rows, the context has room for %lld", (long long)m,
                               (long long)k->max_m);
    ts_mxp_gen_args a = {k, N, row0, col0, m, n, lda, A, rowsum, adiag};
    return run(k, "mxp_gen", 4.0 * (double)m * (double)n, ts_mxp_gen_cpu, CUDA_FN(ts_mxp_gen_cuda), &a, sizeof a);
}

int ts_mxp_resid(ts_mxp_kern *k, int64_t N, int64_t row0, int64_t col0, int64_t m, int64_t n,
                 const double *d, const double *x, const double *b, double *r) {
    if (m <= 0) return 0;
    if (m > k->max_m) TS_RAISE(TS_ERR_ARG, "mxp resid: %lld rows, the context has room for %lld", (long long)m,
                               (long long)k->max_m);
    const int64_t whole = m > n ? m : n; // one block: the contiguous map
    ts_mxp_resid_args a = {k, N, row0, col0, m, n, d, x, b, r, whole, 1, 0, 1, 0};
    return run(k, "mxp_resid", 6.0 * (double)m * (double)n, ts_mxp_resid_cpu, CUDA_FN(ts_mxp_resid_cuda), &a,
               sizeof a);
}

int ts_mxp_resid_bc(ts_mxp_kern *k, int64_t N, int64_t nb, int P, int prow, int Q, int pcol, int64_t m, int64_t n,
                    const double *d, const double *x, const double *b, double *r) {
    if (m <= 0) return 0;
    if (m > k->max_m) TS_RAISE(TS_ERR_ARG, "mxp resid: %lld rows, the context has room for %lld", (long long)m,
                               (long long)k->max_m);
    if (nb <= 0 || P < 1 || Q < 1 || prow < 0 || prow >= P || pcol < 0 || pcol >= Q)
        TS_RAISE(TS_ERR_ARG, "mxp resid: blocks of %lld at (%d, %d) of %d x %d", (long long)nb, prow, pcol, P, Q);
    ts_mxp_resid_args a = {k, N, 0, 0, m, n, d, x, b, r, nb, P, prow, Q, pcol};
    return run(k, "mxp_resid", 6.0 * (double)m * (double)n, ts_mxp_resid_cpu, CUDA_FN(ts_mxp_resid_cuda), &a,
               sizeof a);
}

int ts_mxp_getrf_inv(ts_mxp_kern *k, int64_t jb, float *A11, int64_t lda, float *Linv, float *Uinv,
                     int64_t ldi, int64_t col0) {
    if (jb <= 0) return 0;
    if (jb > k->nb) TS_RAISE(TS_ERR_ARG, "mxp getrf: block %lld wider than the context's %lld", (long long)jb,
                             (long long)k->nb);
    ts_mxp_getrf_args a = {k, jb, lda, ldi, col0, A11, Linv, Uinv};
    double n = (double)jb;
    return run(k, "mxp_getrf_inv", 2.0 * n * n * n, ts_mxp_getrf_cpu, CUDA_FN(ts_mxp_getrf_cuda), &a, sizeof a);
}

static int op(ts_mxp_kern *k, const char *name, double flops, ts_mxp_op_args *a) {
    a->k = k;
    return run(k, name, flops, ts_mxp_op_cpu, CUDA_FN(ts_mxp_op_cuda), a, sizeof *a);
}

int ts_mxp_cvt(ts_mxp_kern *k, int64_t m, int64_t n, const float *src, int64_t lds, float scale,
               uint16_t *dst, int64_t ldd) {
    if (m <= 0 || n <= 0) return 0;
    ts_mxp_op_args a = {.op = 0, .m = m, .n = n, .lda = lds, .ldc = ldd, .s = scale, .A = src, .C = dst};
    return op(k, "mxp_cvt", (double)m * n, &a);
}

int ts_mxp_gemm(ts_mxp_kern *k, int64_t m, int64_t n, int64_t kk, float alpha, const uint16_t *A,
                int64_t lda, const uint16_t *B, int64_t ldb, float beta, float *C, int64_t ldc) {
    if (m <= 0 || n <= 0) return 0;
    ts_mxp_op_args a = {.op = 1, .m = m, .n = n, .kk = kk, .lda = lda, .ldb = ldb, .ldc = ldc, .alpha = alpha,
                        .beta = beta, .A = A, .B = B, .C = C};
    return op(k, "mxp_gemm", 2.0 * (double)m * n * kk, &a);
}

int ts_mxp_sgemv(ts_mxp_kern *k, int64_t m, int64_t n, float alpha, const float *A, int64_t lda,
                 const float *x, float beta, float *y) {
    if (m <= 0) return 0;
    ts_mxp_op_args a = {.op = 2, .m = m, .n = n, .lda = lda, .alpha = alpha, .beta = beta, .A = A, .B = x, .C = y};
    return op(k, "mxp_sgemv", 2.0 * (double)m * n, &a);
}

int ts_mxp_d2s(ts_mxp_kern *k, int64_t n, const double *r, double s, float *y) {
    if (n <= 0) return 0;
    ts_mxp_op_args a = {.op = 3, .n = n, .s = s, .A = r, .C = y};
    return op(k, "mxp_d2s", (double)n, &a);
}

int ts_mxp_axpy(ts_mxp_kern *k, int64_t n, double alpha, const float *c, double *x) {
    if (n <= 0) return 0;
    ts_mxp_op_args a = {.op = 4, .n = n, .s = alpha, .A = c, .C = x};
    return op(k, "mxp_axpy", 2.0 * (double)n, &a);
}

int ts_mxp_set_diag(ts_mxp_kern *k, int64_t n, const double *d, float *A, int64_t lda) {
    if (n <= 0) return 0;
    ts_mxp_op_args a = {.op = 5, .n = n, .lda = lda, .A = d, .C = A};
    return op(k, "mxp_set_diag", (double)n, &a);
}

int ts_mxp_cvt8(ts_mxp_kern *k, int64_t m, int64_t n, const float *src, int64_t lds, int trans, int64_t drows,
                uint8_t *dst, int64_t ldd, float *inv_scale) {
    if (m <= 0 || n <= 0) return 0;
    if (k->fmt != TS_MXP_FP8) TS_RAISE(TS_ERR_ARG, "mxp cvt8: a %s context", ts_mxp_fmt_name(k->fmt));
    const int64_t rows = trans ? n : m;
    if (drows < rows || ldd < drows)
        TS_RAISE(TS_ERR_ARG, "mxp cvt8: %lld rows into %lld (ld %lld)", (long long)rows, (long long)drows,
                 (long long)ldd);
    ts_mxp_op_args a = {.op = 6, .trans = trans, .m = m, .n = n, .kk = drows, .lda = lds, .ldc = ldd,
                        .A = src, .C = dst, .sout = inv_scale};
    return op(k, "mxp_cvt8", 2.0 * (double)m * n, &a);
}

int ts_mxp_gemm8(ts_mxp_kern *k, int64_t m, int64_t n, int64_t kk, float alpha, const uint8_t *At, int64_t lda,
                 const float *sa, const uint8_t *B, int64_t ldb, const float *sb, float beta, float *C, int64_t ldc) {
    if (m <= 0 || n <= 0) return 0;
    if (k->fmt != TS_MXP_FP8) TS_RAISE(TS_ERR_ARG, "mxp gemm8: a %s context", ts_mxp_fmt_name(k->fmt));
    ts_mxp_op_args a = {.op = 7, .m = m, .n = n, .kk = kk, .lda = lda, .ldb = ldb, .ldc = ldc, .alpha = alpha,
                        .beta = beta, .A = At, .B = B, .C = C, .sa = sa, .sb = sb};
    return op(k, "mxp_gemm8", 2.0 * (double)m * n * kk, &a);
}
