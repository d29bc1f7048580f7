// ts_kernels.c: precisions, engines, BLAS argument checks, and device GEMM/TRSM dispatch by backend.
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/ts_env.h"
#include "core/ts_error.h"
#include "kernels/ts_kernels.h"
#include "ts_config.h"

#if TS_HAVE_CUDA
#include "kernels/cuda/ts_cuda_kernels.h"
#endif

size_t ts_prec_size(char prec) {
    switch (prec) {
    case 's': return 4;
    case 'd': return 8;
    case 'c': return 8;
    case 'z': return 16;
    default: return 0;
    }
}

int ts_prec_is_complex(char prec) { return prec == 'c' || prec == 'z'; }

int ts_cplx_scheme_3m(int *three) {
    const char *v = ts_env_str("TESSERA_CPLX_SCHEME");
    *three = 0;
    if (!v || strcasecmp(v, "4m") == 0) return 0;
    if (strcasecmp(v, "3m") == 0) {
        *three = 1;
        return 0;
    }
    TS_RAISE(TS_ERR_ARG, "TESSERA_CPLX_SCHEME=%s: expected 4m or 3m", v);
}

ts_scalar ts_scalar_of(char prec, double re, double im) {
    ts_scalar x;
    memset(&x, 0, sizeof x);
    if (prec == 's' || prec == 'c') x.f[0] = (float)re, x.f[1] = (float)im;
    else x.d[0] = re, x.d[1] = im;
    return x;
}

// ---- engines ----
static const char *const engine_names[] = {"auto", "cublas", "tessera", "ref", "cpu"};
#define KERNEL_ENGINES ((int)(sizeof engine_names / sizeof engine_names[0]))

const char *ts_engine_name(ts_engine e) {
    return (int)e >= 0 && (int)e < KERNEL_ENGINES ? engine_names[e] : "unknown";
}

int ts_engine_parse(const char *s, ts_engine *out) {
    for (int i = 0; s && i < KERNEL_ENGINES; i++)
        if (!strcasecmp(s, engine_names[i])) {
            *out = (ts_engine)i;
            return 0;
        }
    TS_RAISE(TS_ERR_ARG, "unknown GEMM engine '%s' (choices: auto, cublas, tessera, ref, cpu)",
             s ? s : "(null)");
}

// ---- argument checks, in the reference BLAS order ----
static int op_ok(char t) { return t == 'N' || t == 'T' || t == 'C' || t == 'n' || t == 't' || t == 'c'; }
static int op_is_n(char t) { return t == 'N' || t == 'n'; }
static int64_t max1(int64_t a) { return a > 1 ? a : 1; }

int ts_gemm_check_args(char ta, char tb, int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb,
                       int64_t ldc) {
    if (!op_ok(ta)) return 1;
    if (!op_ok(tb)) return 2;
    if (m < 0) return 3;
    if (n < 0) return 4;
    if (k < 0) return 5;
    if (lda < max1(op_is_n(ta) ? m : k)) return 8; // rows of A as stored
    if (ldb < max1(op_is_n(tb) ? k : n)) return 10;
    if (ldc < max1(m)) return 13;
    return 0;
}

int ts_dtrsm_check_args(char side, char uplo, char ta, char diag, int64_t m, int64_t n, int64_t lda,
                        int64_t ldb) {
    int left = side == 'L' || side == 'l';
    if (!left && side != 'R' && side != 'r') return 1;
    if (uplo != 'U' && uplo != 'u' && uplo != 'L' && uplo != 'l') return 2;
    if (!op_ok(ta)) return 3;
    if (diag != 'U' && diag != 'u' && diag != 'N' && diag != 'n') return 4;
    if (m < 0) return 5;
    if (n < 0) return 6;
    if (lda < max1(left ? m : n)) return 9;
    if (ldb < max1(m)) return 11;
    return 0;
}

static const char *gemm_arg_name(int pos) {
    switch (pos) {
    case 1: return "transa";
    case 2: return "transb";
    case 3: return "m";
    case 4: return "n";
    case 5: return "k";
    case 8: return "lda";
    case 10: return "ldb";
    default: return "ldc";
    }
}

int ts_gemm_check_raise(const char *who, char prec, char ta, char tb, int64_t m, int64_t n,
                          int64_t k, int64_t lda, int64_t ldb, int64_t ldc) {
    if (ts_prec_size(prec) == 0)
        TS_RAISE(TS_ERR_ARG, "%s: unknown precision '%c' (choices: s, d, c, z)", who, prec);
    int pos = ts_gemm_check_args(ta, tb, m, n, k, lda, ldb, ldc);
    if (pos == 0) return 0;
    if (pos <= 2)
        TS_RAISE(TS_ERR_ARG, "%s: argument %d (%s) is '%c'; expected N, T or C", who, pos,
                 gemm_arg_name(pos), pos == 1 ? ta : tb);
    long long v = pos == 3 ? m : pos == 4 ? n : pos == 5 ? k : pos == 8 ? lda : pos == 10 ? ldb : ldc;
    TS_RAISE(TS_ERR_ARG, "%s: argument %d (%s = %lld) is invalid (m=%lld n=%lld k=%lld, transa=%c transb=%c)",
             who, pos, gemm_arg_name(pos), v, (long long)m, (long long)n, (long long)k, ta, tb);
}

// ---- device dispatch ----
// Simulated devices run the reference GEMM up to this many flops (2mnk, x4 complex) and the CPU BLAS
// above, so CI stays fast; TESSERA_SIM_GEMM_REF_FLOPS overrides it. Engine `ref` always runs the
// reference, `cpu` always the CPU BLAS.
#define TS_SIM_GEMM_REF_FLOPS_DEFAULT (2.0 * 256 * 256 * 256)

double ts_gemm_flops(char prec, int64_t m, int64_t n, int64_t k) {
    return (ts_prec_is_complex(prec) ? 8.0 : 2.0) * (double)m * (double)n * (double)k;
}

void ts_gemm_desc_layout(ts_gemm_desc *g, int row_major, char ta, char tb, int64_t m, int64_t n, int64_t k,
                         int64_t lda, int64_t ldb, int64_t ldc, int64_t cols[2]) {
    g->k = k;
    if (!row_major) {
        g->ta = ta, g->tb = tb, g->m = m, g->n = n;
    } else { // C^T = op(B)^T op(A)^T: A' = B, B' = A
        int64_t t = lda;
        g->ta = tb, g->tb = ta, g->m = n, g->n = m;
        lda = ldb, ldb = t;
    }
    int64_t rowsA = g->ta == 'N' ? g->m : k, rowsB = g->tb == 'N' ? k : g->n;
    cols[0] = g->ta == 'N' ? k : g->m;
    cols[1] = g->tb == 'N' ? g->n : k;
    g->lda = lda ? lda : rowsA;
    g->ldb = ldb ? ldb : rowsB;
    g->ldc = ldc ? ldc : g->m;
}

static ts_backend stream_backend(ts_stream *st) {
    ts_device *d = st ? ts_stream_device(st) : NULL;
    const ts_device_props *p = d ? ts_device_props_of(d) : NULL;
    return p ? p->backend : TS_BACKEND_NONE;
}

ts_engine ts_dev_gemm_default_engine(ts_stream *st) {
    switch (stream_backend(st)) {
    case TS_BACKEND_CUDA: return TS_ENGINE_CUBLAS;
    case TS_BACKEND_SIM: return TS_ENGINE_REF;
    default: return TS_ENGINE_AUTO; // no device: nothing to resolve to
    }
}

// The sim's ref/CPU BLAS switch point; TS_ERR_PARSE (and the default in *limit) for a bad value.
static int sim_ref_limit(double *limit) {
    *limit = TS_SIM_GEMM_REF_FLOPS_DEFAULT;
    double v = *limit;
    int rc = ts_env_double("TESSERA_SIM_GEMM_REF_FLOPS", &v);
    if (rc < 0) return rc;
    if (!(v >= 0)) TS_RAISE(TS_ERR_PARSE, "TESSERA_SIM_GEMM_REF_FLOPS=%g must not be negative", v);
    *limit = v;
    return 0;
}

ts_engine ts_gemm_auto_cuda(int cc_major, int cc_minor, int sms, char prec, char ta, char tb, int64_t m,
                            int64_t n, int64_t k) {
    // Measured with the engines interleaved in one process, 2026-11-27 (bench/notes/gemm-kernels.md,
    // "Engine choice"): the own SGEMM's big8 tiles (256 x 128, taken when they give every SM two) on an
    // H200 and an H100, NN 0.996-1.033x cuBLAS and TT 1.020-1.042x at k = 4096-16384 (squares 4096-16384
    // and 12288 x 2048); NT 0.991-1.011 and TN 0.980-1.002 (par), short k 0.81-0.98, DGEMM 0.79-0.99,
    // CGEMM by 4M 0.88-0.95: cuBLAS there and on every other compute capability (not measured).
    if (prec != 's' || cc_major != 9 || cc_minor != 0 || sms <= 0) return TS_ENGINE_CUBLAS;
    const int at = ta != 'N' && ta != 'n', bt = tb != 'N' && tb != 'n';
    if (at != bt || k < 4096) return TS_ENGINE_CUBLAS;
    const int64_t big8_tiles = ((m + 255) / 256) * ((n + 127) / 128);
    return big8_tiles >= 2 * (int64_t)sms ? TS_ENGINE_TESSERA : TS_ENGINE_CUBLAS;
}

ts_engine ts_dev_gemm_engine_for(ts_stream *st, ts_engine engine, char prec, char ta, char tb, int64_t m,
                                 int64_t n, int64_t k) {
    if (engine != TS_ENGINE_AUTO) return engine;
    if (stream_backend(st) == TS_BACKEND_CUDA) {
        const ts_device_props *p = ts_device_props_of(ts_stream_device(st));
        return ts_gemm_auto_cuda(p->cc_major, p->cc_minor, p->sms, prec, ta, tb, m, n, k);
    }
    if (stream_backend(st) != TS_BACKEND_SIM) return ts_dev_gemm_default_engine(st);
    double limit;
    (void)sim_ref_limit(&limit); // ts_dev_gemm reports a malformed value; here it keeps the default
    return ts_gemm_flops(prec, m, n, k) > limit ? TS_ENGINE_CPU : TS_ENGINE_REF;
}

typedef struct {
    ts_engine engine; // REF or CPU, resolved at enqueue
    char prec, ta, tb;
    int64_t m, n, k, lda, ldb, ldc;
    unsigned char alpha[16], beta[16]; // host scalars copied at enqueue
    const void *A, *B;
    void *C;
} gemm_args;

static int sim_gemm_run(void *p) {
    const gemm_args *a = p;
    if (a->engine == TS_ENGINE_CPU)
        return ts_gemm_cpu(a->prec, a->ta, a->tb, a->m, a->n, a->k, a->alpha, a->A, a->lda, a->B,
                           a->ldb, a->beta, a->C, a->ldc);
    ts_gemm_ref(a->prec, a->ta, a->tb, a->m, a->n, a->k, a->alpha, a->A, a->lda, a->B, a->ldb,
                a->beta, a->C, a->ldc);
    return 0;
}

static int sim_gemm(ts_stream *st, ts_engine engine, char prec, char ta, char tb, int64_t m,
                    int64_t n, int64_t k, const void *alpha, const void *A, int64_t lda,
                    const void *B, int64_t ldb, const void *beta, void *C, int64_t ldc) {
    if (engine != TS_ENGINE_REF && engine != TS_ENGINE_CPU)
        TS_RAISE(TS_ERR_UNSUPPORTED, "ts_dev_gemm: engine '%s' does not run on simulated devices "
                 "(use ref, cpu or auto)", ts_engine_name(engine));
    size_t es = ts_prec_size(prec);
    gemm_args a = {.engine = engine, .prec = prec, .ta = ta, .tb = tb, .m = m, .n = n, .k = k,
                   .lda = lda, .ldb = ldb, .ldc = ldc, .A = A, .B = B, .C = C};
    memcpy(a.alpha, alpha, es);
    memcpy(a.beta, beta, es);
    ts_kernel kern = {.name = engine == TS_ENGINE_CPU ? "gemm_cpu" : "gemm_ref",
                      .flops = ts_gemm_flops(prec, m, n, k), .cpu = sim_gemm_run, .args = &a,
                      .args_size = sizeof a};
    return ts_kernel_enqueue(st, &kern);
}

typedef struct {
    char side, uplo, ta, diag;
    int64_t m, n, lda, ldb;
    double alpha;
    const double *A;
    double *B;
} trsm_args;

static int sim_dtrsm_run(void *p) {
    const trsm_args *a = p;
    return ts_dtrsm_cpu(a->side, a->uplo, a->ta, a->diag, a->m, a->n, a->alpha, a->A, a->lda, a->B,
                        a->ldb);
}

static int sim_dtrsm(ts_stream *st, char side, char uplo, char ta, char diag, int64_t m, int64_t n,
                     double alpha, const double *A, int64_t lda, double *B, int64_t ldb) {
    int left = side == 'L' || side == 'l';
    trsm_args a = {side, uplo, ta, diag, m, n, lda, ldb, alpha, A, B};
    double tri = left ? (double)m : (double)n;
    ts_kernel kern = {.name = "dtrsm_cpu", .flops = tri * tri * (double)(left ? n : m),
                      .cpu = sim_dtrsm_run, .args = &a, .args_size = sizeof a};
    return ts_kernel_enqueue(st, &kern);
}

// CUDA devices: cuBLAS, or our own kernels (engine tessera): the tensor-core DGEMM, the FP32
// SGEMM, and CGEMM/ZGEMM by the 4M (or 3M) scheme on those two. Compiled only with the CUDA backend.
#if TS_HAVE_CUDA
static int cuda_gemm(ts_stream *st, ts_engine engine, char prec, char ta, char tb, int64_t m,
                     int64_t n, int64_t k, const void *alpha, const void *A, int64_t lda,
                     const void *B, int64_t ldb, const void *beta, void *C, int64_t ldc) {
    if (engine == TS_ENGINE_TESSERA) {
        switch (prec) {
        case 'd':
            return ts_cuda_dgemm_tessera(st, ta, tb, m, n, k, *(const double *)alpha, A, lda, B,
                                         ldb, *(const double *)beta, C, ldc);
        case 's':
            return ts_cuda_sgemm_tessera(st, ta, tb, m, n, k, *(const float *)alpha, A, lda, B,
                                         ldb, *(const float *)beta, C, ldc);
        case 'c':
            return ts_cuda_cgemm_tessera(st, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
        default:
            return ts_cuda_zgemm_tessera(st, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
        }
    }
    if (engine != TS_ENGINE_CUBLAS)
        TS_RAISE(TS_ERR_UNSUPPORTED, "ts_dev_gemm: engine '%s' does not run on CUDA devices "
                 "(use cublas, tessera or auto)", ts_engine_name(engine));
    return ts_cuda_gemm(st, prec, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
static int cuda_dtrsm(ts_stream *st, char side, char uplo, char ta, char diag, int64_t m, int64_t n,
                      double alpha, const double *A, int64_t lda, double *B, int64_t ldb) {
    return ts_cuda_dtrsm(st, side, uplo, ta, diag, m, n, alpha, A, lda, B, ldb);
}
#else
static int cuda_gemm(ts_stream *st, ts_engine engine, char prec, char ta, char tb, int64_t m,
                     int64_t n, int64_t k, const void *alpha, const void *A, int64_t lda,
                     const void *B, int64_t ldb, const void *beta, void *C, int64_t ldc) {
    TS_RAISE(TS_ERR_UNSUPPORTED, "ts_dev_gemm: this build has no CUDA backend");
}
static int cuda_dtrsm(ts_stream *st, char side, char uplo, char ta, char diag, int64_t m, int64_t n,
                      double alpha, const double *A, int64_t lda, double *B, int64_t ldb) {
    TS_RAISE(TS_ERR_UNSUPPORTED, "ts_dev_dtrsm: this build has no CUDA backend");
}
#endif

int ts_dev_gemm(ts_stream *st, ts_engine engine, char prec, char ta, char tb, int64_t m, int64_t n,
                int64_t k, const void *alpha, const void *A, int64_t lda, const void *B,
                int64_t ldb, const void *beta, void *C, int64_t ldc) {
    if (!st) TS_RAISE(TS_ERR_ARG, "ts_dev_gemm: no stream");
    if (!alpha || !beta) TS_RAISE(TS_ERR_ARG, "ts_dev_gemm: alpha and beta must point to scalars");
    TS_CHECK(ts_gemm_check_raise("ts_dev_gemm", prec, ta, tb, m, n, k, lda, ldb, ldc));
    if ((int)engine < 0) TS_RAISE(TS_ERR_ARG, "ts_dev_gemm: unknown engine %d", (int)engine);
    if ((int)engine >= KERNEL_ENGINES) // the runtime's engines over a device set (runtime/ts_engines.h)
        TS_RAISE(TS_ERR_UNSUPPORTED, "ts_dev_gemm: engine %d runs on host operands over a device set "
                 "(runtime/ts_engines.h), not on one stream", (int)engine);
    if (engine == TS_ENGINE_TESSERA && stream_backend(st) != TS_BACKEND_CUDA)
        TS_RAISE(TS_ERR_UNSUPPORTED, "ts_dev_gemm: engine 'tessera' (own GPU kernels) runs on "
                 "CUDA devices only; a CPU model of it for simulated devices is not built yet (use "
                 "ref, cpu or auto)");
    if (m == 0 || n == 0) return 0; // nothing to do (BLAS quick return)
    if (engine == TS_ENGINE_AUTO && stream_backend(st) == TS_BACKEND_SIM) {
        double limit;
        TS_CHECK(sim_ref_limit(&limit));
    }
    const ts_engine asked = engine;
    engine = ts_dev_gemm_engine_for(st, engine, prec, ta, tb, m, n, k);
    // auto's choice of the own kernel was measured on 16-byte aligned operands (ld % 4 == 0)
    if (asked == TS_ENGINE_AUTO && engine == TS_ENGINE_TESSERA &&
        ((uintptr_t)A % 16 || (uintptr_t)B % 16 || lda % 4 || ldb % 4))
        engine = TS_ENGINE_CUBLAS;
    switch (stream_backend(st)) {
    case TS_BACKEND_SIM:
        return sim_gemm(st, engine, prec, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    case TS_BACKEND_CUDA:
        return cuda_gemm(st, engine, prec, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    default:
        TS_RAISE(TS_ERR_ARG, "ts_dev_gemm: the stream's device has no backend");
    }
}

int ts_dev_dtrsm(ts_stream *st, char side, char uplo, char ta, char diag, int64_t m, int64_t n,
                 double alpha, const double *A, int64_t lda, double *B, int64_t ldb) {
    if (!st) TS_RAISE(TS_ERR_ARG, "ts_dev_dtrsm: no stream");
    int pos = ts_dtrsm_check_args(side, uplo, ta, diag, m, n, lda, ldb);
    if (pos)
        TS_RAISE(TS_ERR_ARG, "ts_dev_dtrsm: argument %d is invalid (side=%c uplo=%c transa=%c "
                 "diag=%c m=%lld n=%lld lda=%lld ldb=%lld)", pos, side, uplo, ta, diag,
                 (long long)m, (long long)n, (long long)lda, (long long)ldb);
    if (m == 0 || n == 0) return 0;
    switch (stream_backend(st)) {
    case TS_BACKEND_SIM: return sim_dtrsm(st, side, uplo, ta, diag, m, n, alpha, A, lda, B, ldb);
    case TS_BACKEND_CUDA: return cuda_dtrsm(st, side, uplo, ta, diag, m, n, alpha, A, lda, B, ldb);
    default: TS_RAISE(TS_ERR_ARG, "ts_dev_dtrsm: the stream's device has no backend");
    }
}
