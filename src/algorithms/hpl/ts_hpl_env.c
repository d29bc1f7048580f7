// ts_hpl_env.c: the one reader of the HPL engine's path-choosing TESSERA_HPL_* settings, and their early check.
#include "algorithms/hpl/ts_hpl_env.h"

#include <string.h>

#include "algorithms/hpl/ts_hpl.h"
#include "core/ts_env.h"
#include "core/ts_error.h"
#include "device/ts_device.h"
#include "kernels/ts_lu_kernels.h"

// name=on sets *v to 1, name=off to 0; unset leaves it.
static int env_choice(const char *name, const char *on, const char *off, int *v) {
    const char *us = ts_env_str(name);
    if (!us) return 0;
    if (!strcmp(us, on)) *v = 1;
    else if (!strcmp(us, off)) *v = 0;
    else TS_RAISE(TS_ERR_PARSE, "%s=%s: expected %s or %s", name, us, on, off);
    return 0;
}

int ts_hpl_env_trsm(int *mode) {
    const char *us = ts_env_str("TESSERA_HPL_TRSM");
    if (!us) return 0;
    if (!strcmp(us, "fold")) *mode = 2;
    else if (!strcmp(us, "inverse")) *mode = 1;
    else if (!strcmp(us, "trsm")) *mode = 0;
    else TS_RAISE(TS_ERR_PARSE, "TESSERA_HPL_TRSM=%s: expected fold, inverse or trsm", us);
    return 0;
}

int ts_hpl_env_swap(int *fused) { return env_choice("TESSERA_HPL_SWAP", "fused", "split", fused); }

int ts_hpl_env_layout(int *trans) { return env_choice("TESSERA_HPL_LAYOUT", "row", "col", trans); }

int ts_hpl_env_panel_tail(int64_t *rows) {
    int64_t v = 0;
    int rc = ts_env_i64("TESSERA_HPL_PANEL_TAIL", &v);
    if (rc < 0) return rc;
    if (rc > 0 && v < 0) TS_RAISE(TS_ERR_PARSE, "TESSERA_HPL_PANEL_TAIL=%lld: expected rows >= 0", (long long)v);
    if (rc > 0) *rows = v;
    return 0;
}

int ts_hpl_env_check(void) {
    int inv = 0, v = 0;
    ts_devset_opts dev; // the device layer's TESSERA_* settings (TESSERA_SIM_DEVICES, ...)
    TS_CHECK(ts_devset_opts_init(&dev));
    TS_CHECK(ts_hpl_env_trsm(&inv));
    TS_CHECK(ts_hpl_env_swap(&inv));
    TS_CHECK(ts_hpl_env_layout(&inv));
    TS_CHECK(ts_lu_env_getrf(&inv)); // the device panels' cuSOLVER getrf
    TS_CHECK(ts_lu_env_leaf_grid(&inv)); // our device panel's leaf kernel
    int64_t rows = 0;
    TS_CHECK(ts_hpl_env_panel_tail(&rows));
    if (ts_env_bool("TESSERA_HPL_PANEL_PRIORITY", &v) < 0) return TS_ERR_PARSE;
    return 0;
}
