// ts_bench_dev.c: the device engines of the benchmark harness (ts_bench.h): their device, engine resolution, stream.
#include <stdio.h>

#include "core/ts_error.h"
#include "faces/cli/ts_bench.h"
#include "faces/cli/ts_cli.h"
#include "faces/cli/ts_cli_opts.h"

int ts_bench_is_device_engine(ts_engine e) { return e != TS_ENGINE_CPU && !ts_engine_is_set_wide(e); }

int ts_bench_any_device_engine(const ts_bench_opts *o) {
    for (int i = 0; i < o->nengines; i++)
        if (ts_bench_is_device_engine(o->engines[i])) return 1;
    return 0;
}

int ts_bench_pick_device(ts_bench *b, int index, int given) {
    const char *cmd = b->o->cmd;
    int ndev = ts_devset_count(b->devs), any = ts_bench_any_device_engine(b->o);
    b->dev_index = index;
    if (ndev > 0 && any) {
        if (index >= ndev)
            return ts_cli_usage_error(cmd, "--device %d: only %d %s device%s (0..%d)", index, ndev,
                                      ts_backend_name(ts_devset_backend(b->devs)), ndev == 1 ? "" : "s", ndev - 1);
        b->dev = ts_devset_device(b->devs, index);
    } else if (given && index > 0 && any) {
        return ts_cli_usage_error(cmd, "--device %d: no devices (no GPU found; CPU only)", index);
    } else if (given && !any) {
        return ts_cli_usage_error(cmd, "--device %d: the engines asked for run on the host (--device picks the "
                                  "device of the device engines)", index);
    }
    return 0;
}

// A device engine: probed on the device, or without one what runs on the host instead.
static int resolve_device_engine(ts_bench *b, ts_engine e, ts_engine *resolved) {
    const char *cmd = b->o->cmd;
    if (!b->dev) {
        if (e == TS_ENGINE_AUTO) return *resolved = TS_ENGINE_CPU, 0;
        if (e == TS_ENGINE_REF) return *resolved = TS_ENGINE_REF, 0; // the reference kernel on the host
        return ts_cli_usage_error(cmd, "--engine %s: not available: %s", ts_engine_name(e),
                                  ts_cuda_available() ? "no GPU found; CPU only"
                                                      : "this build has no CUDA backend and no devices are "
                                                        "open (TESSERA_SIM_DEVICES for simulated ones)");
    }
    const ts_device_props *pr = ts_device_props_of(b->dev);
    if (ts_engines_probe(b->dev, e) < 0)
        return ts_cli_usage_error(cmd, "--engine %s: not available on device %d (%s, %s): %s", ts_engine_name(e),
                                  b->dev_index, ts_backend_name(pr->backend), pr->name, ts_error_last()->message);
    *resolved = e; // AUTO stays AUTO: what it runs depends on the size (ts_dev_gemm_engine_for)
    return 0;
}

int ts_bench_resolve_engines(ts_bench *b, ts_engine *resolved) {
    const ts_bench_opts *o = b->o;
    int device_rows = 0;
    for (int i = 0; i < o->nengines; i++) {
        ts_engine e = o->engines[i];
        if (ts_engine_is_set_wide(e)) { // every device of the set, not the one of --device
            const char *why = ts_engines_unavailable(b->devs, e);
            if (why) return ts_cli_usage_error(o->cmd, "--engine %s: not available: %s", ts_engines_name(e), why);
            if (e == TS_ENGINE_CUBLASXT && ts_bench_open(b, e, "--engine cublasxt")) return TS_EXIT_USAGE;
        }
        resolved[i] = e;
        if (ts_bench_is_device_engine(e) && resolve_device_engine(b, e, &resolved[i])) return TS_EXIT_USAGE;
        device_rows |= b->dev && ts_bench_is_device_engine(resolved[i]);
    }
    if (!device_rows) b->dev = NULL; // opened only for engines that all run on the host
    return 0;
}

int ts_bench_row_on_host(const ts_bench *b, ts_engine e) { return !b->dev || !ts_bench_is_device_engine(e); }

int ts_bench_stream_open(ts_bench *b) {
    if (!b->dev || ts_stream_create(b->dev, &b->st) >= 0) return 0;
    ts_cli_errorf(b->o->cmd, "%s", ts_error_string());
    return TS_EXIT_RUNTIME;
}

int ts_bench_stream_renew(ts_bench *b) {
    ts_stream_destroy(b->st);
    b->st = NULL;
    return ts_stream_create(b->dev, &b->st) < 0 ? ts_error_last()->code : 0;
}

void ts_bench_print_device(ts_bench *b) {
    if (!b->dev) return;
    const ts_device_props *pr = ts_device_props_of(b->dev);
    fprintf(b->out, "device %d: %s (%s)\n", b->dev_index, pr->name, ts_backend_name(pr->backend));
}
