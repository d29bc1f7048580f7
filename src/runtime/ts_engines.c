// ts_engines.c: the engine vocabulary of the runtime and the one entry that runs GEMM and the Level-3 routines on any engine.
#include "runtime/ts_engines.h"

#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#include "core/ts_error.h"
#include "runtime/ts_tiles.h"
#include "runtime/ts_tiles_l3.h"
#include "ts_config.h"

#if TS_HAVE_CUDA
#include "kernels/cuda/ts_cuda_kernels.h"
#else
typedef struct ts_cublasxt ts_cublasxt; // never created without CUDA
#endif

// The names the runtime adds to the kernels' (ts_engine_name).
static const char *const set_wide_names[] = {"tiles", "cublasxt"};

const char *ts_engines_name(ts_engine e) {
    if ((int)e >= (int)TS_ENGINE_TILES && (int)e < TS_ENGINE_COUNT) return set_wide_names[(int)e - (int)TS_ENGINE_TILES];
    return ts_engine_name(e);
}

int ts_engines_parse(const char *s, ts_engine *out) {
    for (int i = 0; s && i < TS_ENGINE_COUNT; i++)
        if (!strcasecmp(s, ts_engines_name((ts_engine)i))) {
            *out = (ts_engine)i;
            return 0;
        }
    char choices[128] = "";
    for (int i = 0, at = 0; i < TS_ENGINE_COUNT; i++)
        at += snprintf(choices + at, sizeof choices - (size_t)at, "%s%s", i ? ", " : "", ts_engines_name((ts_engine)i));
    TS_RAISE(TS_ERR_ARG, "unknown GEMM engine '%s' (choices: %s)", s ? s : "(null)", choices);
}

int ts_engine_is_set_wide(ts_engine e) { return e == TS_ENGINE_TILES || e == TS_ENGINE_CUBLASXT; }

const char *ts_engines_unavailable(ts_devset *devs, ts_engine e) {
    int ndev = devs ? ts_devset_count(devs) : 0;
    if (e == TS_ENGINE_TILES && ndev == 0)
        return ts_cuda_available() ? "no devices are open (no GPU found)"
                                   : "no devices are open (this build has no CUDA backend; TESSERA_SIM_DEVICES for "
                                     "simulated ones)";
    if (e == TS_ENGINE_CUBLASXT && (ndev == 0 || ts_devset_backend(devs) != TS_BACKEND_CUDA))
        return !TS_HAVE_CUDA ? "this build has no CUDA backend"
               : ndev        ? "the devices are simulated (cuBLASXt needs GPUs)"
                             : "no GPU found";
    return NULL;
}

struct ts_engines {
    ts_devset *devs;
    ts_tiles *tiles;
    ts_cublasxt *xt;
    int ndev;       // devices the set-wide engines use (0: all)
    int tiles_trace; // the tile runtime's trace flag (kept when it is reopened)
};

int ts_engines_create(ts_devset *devs, ts_engines **out) {
    *out = calloc(1, sizeof **out);
    if (!*out) TS_RAISE(TS_ERR_NOMEM, "out of host memory");
    (*out)->devs = devs;
    return 0;
}

void ts_engines_destroy(ts_engines *x) {
    if (!x) return;
    ts_tiles_destroy(x->tiles);
#if TS_HAVE_CUDA
    ts_cublasxt_destroy(x->xt);
#endif
    free(x);
}

int ts_engines_open(ts_engines *x, ts_engine e, int trace) {
    if (e == TS_ENGINE_TILES && !x->tiles) {
        ts_tiles_opts to;
        TS_CHECK(ts_tiles_opts_init(&to));
        to.trace = trace;
        to.devices = x->ndev;
        x->tiles_trace = trace;
        return ts_tiles_create(x->devs, &to, &x->tiles);
    }
    if (e == TS_ENGINE_CUBLASXT && !x->xt) {
#if TS_HAVE_CUDA
        return ts_cublasxt_create(x->devs, x->ndev, &x->xt);
#else
        TS_RAISE(TS_ERR_UNSUPPORTED, "this build has no CUDA backend");
#endif
    }
    return 0;
}

ts_tiles *ts_engines_tiles(const ts_engines *x) { return x ? x->tiles : NULL; }

int ts_engines_set_devices(ts_engines *x, int ndev) {
    int have = ts_devset_count(x->devs);
    if (ndev < 0 || ndev > have)
        TS_RAISE(TS_ERR_ARG, "ts_engines_set_devices: %d devices asked, the set has %d", ndev, have);
    if (ndev == have) ndev = 0;
    if (ndev == x->ndev) return 0;
    int had_tiles = x->tiles != NULL, had_xt = x->xt != NULL;
    ts_tiles_destroy(x->tiles);
    x->tiles = NULL;
#if TS_HAVE_CUDA
    ts_cublasxt_destroy(x->xt);
    x->xt = NULL;
#endif
    x->ndev = ndev;
    if (had_tiles) TS_CHECK(ts_engines_open(x, TS_ENGINE_TILES, x->tiles_trace));
    if (had_xt) TS_CHECK(ts_engines_open(x, TS_ENGINE_CUBLASXT, 0));
    return 0;
}

int ts_engines_devices(const ts_engines *x) {
    int have = ts_devset_count(x->devs);
    return x->ndev > 0 && x->ndev < have ? x->ndev : have;
}

#if TS_HAVE_CUDA
static int xt_ready(const ts_engines *x) {
    if (!x || !x->xt) TS_RAISE(TS_ERR_STATE, "engine cublasxt: not opened (ts_engines_open)");
    return 0;
}
#endif

int ts_engines_probe(ts_device *dev, ts_engine e) {
    ts_stream *st = NULL;
    void *buf = NULL;
    double one[2] = {1, 0};
    int rc = ts_stream_create(dev, &st);
    if (rc >= 0) rc = ts_dmalloc(dev, 3 * 256, &buf);
    if (rc >= 0) rc = ts_memset_async(st, buf, 0, 3 * 256);
    if (rc >= 0) rc = ts_dev_gemm(st, e, 'd', 'N', 'N', 1, 1, 1, one, buf, 1, (char *)buf + 256, 1, one,
                                  (char *)buf + 512, 1);
    if (rc >= 0) rc = ts_stream_sync(st);
    ts_error_info why = *ts_error_last(); // the cleanup below may record errors of its own
    if (st) ts_stream_destroy(st);
    if (buf) ts_dfree(dev, buf);
    return rc < 0 ? ts_error_set(rc, why.file, why.line, "%s", why.message) : 0;
}

int ts_engines_set_xt_block(ts_engines *x, int block) {
#if TS_HAVE_CUDA
    TS_CHECK(xt_ready(x));
    return ts_cublasxt_set_block(x->xt, block);
#else
    (void)x, (void)block;
    TS_RAISE(TS_ERR_UNSUPPORTED, "this build has no CUDA backend");
#endif
}

static int tiles_ready(const ts_engines *x) {
    if (!x || !x->tiles) TS_RAISE(TS_ERR_STATE, "engine tiles: not opened (ts_engines_open)");
    return 0;
}

int ts_engines_gemm(ts_engines *x, ts_stream *st, ts_engine e, char prec, char ta, char tb, int64_t m, int64_t n,
                    int64_t k, const void *alpha, const void *A, int64_t lda, const void *B, int64_t ldb,
                    const void *beta, void *C, int64_t ldc, struct ts_tiles_stats *stats) {
    switch ((int)e) {
    case TS_ENGINE_TILES:
        TS_CHECK(tiles_ready(x));
        return ts_tiles_gemm(x->tiles, prec, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, stats);
    case TS_ENGINE_CUBLASXT:
#if TS_HAVE_CUDA
        TS_CHECK(xt_ready(x));
        return ts_cublasxt_gemm(x->xt, prec, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
#else
        TS_RAISE(TS_ERR_UNSUPPORTED, "this build has no CUDA backend");
#endif
    case TS_ENGINE_CPU:
        return ts_gemm_cpu(prec, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    default:
        if (st) return ts_dev_gemm(st, e, prec, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
        if (e != TS_ENGINE_REF)
            TS_RAISE(TS_ERR_ARG, "engine %s: a device engine needs a stream", ts_engines_name(e));
        TS_CHECK(ts_gemm_check_raise("ts_engines_gemm", prec, ta, tb, m, n, k, lda, ldb, ldc));
        ts_gemm_ref(prec, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
        return 0;
    }
}

static int tiles_l3(ts_tiles *rt, const ts_l3_prob *p, const void *A, const void *B, void *W, ts_tiles_stats *st) {
    const void *al = &p->alpha, *be = &p->beta;
    int64_t lb = p->rb ? p->rb : 1;
    switch (p->r) {
    case TS_L3_SYMM:
        return ts_tiles_symm(rt, p->prec, p->side, p->uplo, p->m, p->n, al, A, p->ra, B, lb, be, W, p->rc, st);
    case TS_L3_HEMM:
        return ts_tiles_hemm(rt, p->prec, p->side, p->uplo, p->m, p->n, al, A, p->ra, B, lb, be, W, p->rc, st);
    case TS_L3_SYRK:
        return ts_tiles_syrk(rt, p->prec, p->uplo, p->trans, p->n, p->k, al, A, p->ra, be, W, p->rc, st);
    case TS_L3_HERK:
        return ts_tiles_herk(rt, p->prec, p->uplo, p->trans, p->n, p->k, al, A, p->ra, be, W, p->rc, st);
    case TS_L3_SYR2K:
        return ts_tiles_syr2k(rt, p->prec, p->uplo, p->trans, p->n, p->k, al, A, p->ra, B, lb, be, W, p->rc, st);
    case TS_L3_HER2K:
        return ts_tiles_her2k(rt, p->prec, p->uplo, p->trans, p->n, p->k, al, A, p->ra, B, lb, be, W, p->rc, st);
    case TS_L3_TRMM:
        return ts_tiles_trmm(rt, p->prec, p->side, p->uplo, p->trans, p->diag, p->m, p->n, al, A, p->ra, W, p->rc,
                             st);
    default:
        return ts_tiles_trsm(rt, p->prec, p->side, p->uplo, p->trans, p->diag, p->m, p->n, al, A, p->ra, W, p->rc,
                             st);
    }
}

#if TS_HAVE_CUDA
// cuBLASXt; its TRMM is out of place: W = alpha op(A) B0 from the untouched B0.
static int xt_l3(ts_cublasxt *xt, const ts_l3_prob *p, const void *A, const void *B, void *W) {
    const void *al = &p->alpha, *be = &p->beta;
    int64_t lb = p->rb ? p->rb : 1;
    int herm = ts_l3_is_herm(p->r);
    if (ts_l3_is_mm(p->r))
        return ts_cublasxt_symm(xt, p->prec, herm, p->side, p->uplo, p->m, p->n, al, A, p->ra, B, lb, be, W, p->rc);
    if (ts_l3_is_rk(p->r))
        return ts_cublasxt_syrk(xt, p->prec, herm, p->uplo, p->trans, p->n, p->k, al, A, p->ra, be, W, p->rc);
    if (ts_l3_is_r2k(p->r))
        return ts_cublasxt_syr2k(xt, p->prec, herm, p->uplo, p->trans, p->n, p->k, al, A, p->ra, B, lb, be, W,
                                 p->rc);
    if (p->r == TS_L3_TRMM)
        return ts_cublasxt_trmm(xt, p->prec, p->side, p->uplo, p->trans, p->diag, p->m, p->n, al, A, p->ra, B, lb, W,
                                p->rc);
    return ts_cublasxt_trsm(xt, p->prec, p->side, p->uplo, p->trans, p->diag, p->m, p->n, al, A, p->ra, W, p->rc);
}
#endif

int ts_engines_l3(ts_engines *x, ts_engine e, const ts_l3_prob *p, const void *A, const void *B, void *W,
                  struct ts_tiles_stats *stats) {
    switch ((int)e) {
    case TS_ENGINE_CPU:
        return ts_l3_cpu(p, A, B, W);
    case TS_ENGINE_TILES:
        TS_CHECK(tiles_ready(x));
        return tiles_l3(x->tiles, p, A, B, W, stats);
    case TS_ENGINE_CUBLASXT:
#if TS_HAVE_CUDA
        TS_CHECK(xt_ready(x));
        return xt_l3(x->xt, p, A, B, W);
#else
        TS_RAISE(TS_ERR_UNSUPPORTED, "this build has no CUDA backend");
#endif
    default:
        TS_RAISE(TS_ERR_UNSUPPORTED, "%s: engine %s runs GEMM only (cpu, tiles or cublasxt run it)",
                 ts_l3_name(p->r), ts_engines_name(e));
    }
}
