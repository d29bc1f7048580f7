// ts_hpl_gemm.c: the DGEMM engine of HPL's device path (trailing update and U GEMMs): forced, measured by the ceiling, or the default.
#include <string.h>

#include "algorithms/hpl/ts_hpl_internal.h"
#include "core/ts_error.h"
#include "kernels/ts_kernels.h"

const char *ts_hpl_gemm_choice_name(ts_hpl_gemm_choice c) {
    switch (c) {
    case TS_HPL_GEMM_MEASURED: return "measured";
    case TS_HPL_GEMM_FORCED: return "forced";
    default: return "default";
    }
}

int ts_hpl_gemm_parse(const char *s, const char **engine) {
    static const char *const names[] = {"auto", "cublas", "tessera"};
    for (int i = 0; s && i < 3; i++)
        if (!strcmp(s, names[i])) {
            *engine = names[i];
            return 0;
        }
    TS_RAISE(TS_ERR_ARG, "'%s' is not one of auto, cublas, tessera", s ? s : "(null)");
}

int ts_hpl_gemm_probe(ts_hpl_ctx *ctx, const char *engine) {
    ts_engine e;
    TS_CHECK(ts_engine_parse(engine, &e));
    if (!ctx->dev) TS_RAISE(TS_ERR_UNSUPPORTED, "rank %d has no device to run it", ctx->world.rank);
    // one small product: an engine the device does not run fails at enqueue (simulated devices run
    // ref and cpu only) or at the launch (a CUDA kernel this GPU cannot run)
    const int64_t n = 64;
    ts_stream *st = NULL;
    double *m = NULL;
    const double one = 1.0, zero = 0.0;
    int rc = ts_stream_create(ctx->dev, &st);
    if (!rc) rc = ts_dmalloc(ctx->dev, (size_t)(3 * n * n) * sizeof(double), (void **)&m);
    if (!rc) rc = ts_memset_async(st, m, 0, (size_t)(3 * n * n) * sizeof(double));
    if (!rc) rc = ts_dev_gemm(st, e, 'd', 'N', 'N', n, n, n, &one, m, n, m + n * n, n, &zero, m + 2 * n * n, n);
    if (st) {
        int r2 = ts_stream_sync(st);
        if (!rc) rc = r2;
    }
    if (m) ts_dfree(ctx->dev, m);
    if (st) ts_stream_destroy(st);
    return rc;
}

int ts_hpl_gemm_set(ts_hpl_ctx *ctx, const char *engine) {
    ts_engine e;
    TS_CHECK(ts_engine_parse(engine, &e));
    ctx->opts.engine = ts_engine_name(e); // (a static name: the options outlive the caller's string)
    return 0;
}

const char *ts_hpl_gemm_get(const ts_hpl_ctx *ctx) { return ctx->opts.engine ? ctx->opts.engine : "auto"; }

const char *ts_hpl_gemm_measured(const ts_hpl_ceiling *c) {
    if (!c || !c->measured || !c->best[0]) return NULL;
    ts_engine e;
    if (ts_engine_parse(c->best, &e) < 0) {
        ts_error_clear();
        return NULL;
    }
    return ts_engine_name(e);
}
