// ts_hpl_gemm.c: the DGEMM engine of HPL's device path (trailing update and U GEMMs): forced, measured by the ceiling, or the default.
#include <string.h>

#include "algorithms/hpl/ts_hpl_internal.h"
#include "core/ts_error.h"
#include "kernels/ts_kernels.h"
#include "runtime/ts_engines.h"

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
    // an engine the device does not run fails at enqueue (simulated devices run ref and cpu only)
    // or at the launch (a CUDA kernel this GPU cannot run)
    return ts_engines_probe(ctx->dev, e);
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
