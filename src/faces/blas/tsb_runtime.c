// tsb_runtime.c: the library's tile runtime (every device + the CPU), created once on first use.
#include <pthread.h>
#include <stdio.h>

#include "core/ts_error.h"
#include "tsb_internal.h"

// The one lazily created runtime context of the library (docs/blas.md). It lives until the
// process ends: tearing it down from a destructor could race with the device libraries' own exit
// handlers, and the memory is reachable, not leaked.
typedef struct {
    ts_devset *devs;
    ts_tiles *rt;
} tsb_runtime;

static tsb_runtime the_rt;
static pthread_once_t rt_once = PTHREAD_ONCE_INIT;

static void runtime_init(void) {
    const tsb_config *cfg = tsb_config_get();
    ts_devset_opts dopt;
    ts_tiles_opts topt;
    int rc = ts_devset_opts_init(&dopt);
    if (rc == 0) {
        if (cfg->max_devices > 0) dopt.max_devices = cfg->max_devices;
        rc = ts_devset_open(&dopt, &the_rt.devs);
    }
    if (rc == 0) rc = ts_tiles_opts_init(&topt);
    if (rc == 0) {
        if (cfg->tile > 0) topt.tile = cfg->tile;
        if (cfg->cpu_share_set) topt.cpu_share = cfg->cpu_share;
        rc = ts_tiles_create(the_rt.devs, &topt, &the_rt.rt);
    }
    if (rc != 0) {
        fprintf(stderr, "tessera_blas: the tile runtime is not available (%s); GEMM runs on the CPU BLAS\n",
                ts_error_string());
        if (the_rt.devs) ts_devset_close(the_rt.devs);
        the_rt.devs = NULL;
        the_rt.rt = NULL;
        return;
    }
    tsb_trace("runtime: %d device(s) (%s), CPU worker %s, tile %lld", ts_tiles_device_count(the_rt.rt),
              ts_backend_name(ts_devset_backend(the_rt.devs)), ts_tiles_has_cpu(the_rt.rt) ? "on" : "off",
              (long long)ts_tiles_tile(the_rt.rt));
}

ts_tiles *tsb_runtime_get(void) {
    pthread_once(&rt_once, runtime_init);
    return the_rt.rt;
}
