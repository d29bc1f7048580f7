// ts_nvml_none.c: NVML's stand-in in builds without CUDA: it never opens, so every reading is "unavailable".
#include "device/ts_nvml.h"

#include "core/ts_error.h"
#include "ts_config.h"

#if !TS_HAVE_CUDA
ts_nvml *ts_nvml_open(void) {
    TS_ERROR(TS_ERR_UNSUPPORTED, "NVML needs a CUDA build");
    return NULL;
}

void ts_nvml_close(ts_nvml *t) { (void)t; }

int ts_nvml_read(ts_nvml *t, const char *bus_id, ts_nvml_sample *s) {
    (void)t, (void)bus_id, (void)s;
    return 0;
}

int ts_nvml_energy_mj(ts_nvml *t, const char *bus_id, unsigned long long *mj) {
    (void)t, (void)bus_id, (void)mj;
    TS_RAISE(TS_ERR_UNSUPPORTED, "NVML needs a CUDA build");
}
#endif
