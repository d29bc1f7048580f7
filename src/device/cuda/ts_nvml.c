// ts_nvml.c: NVML through dlopen (no link-time dependency): the telemetry of burn and the energy counter of HPL's ceiling.
#include <dlfcn.h>
#include <stdlib.h>

#include "core/ts_error.h"
#include "device/ts_nvml.h"

// The few NVML declarations used (nvml.h, stable ABI): return codes are ints, 0 = success.
typedef void *nvml_device;
enum { NVML_TEMPERATURE_GPU = 0, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2 };
enum { NVML_MEMORY_ERROR_TYPE_CORRECTED = 0, NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1, NVML_VOLATILE_ECC = 0 };

struct ts_nvml {
    void *lib;
    int (*init)(void);
    int (*shutdown)(void);
    int (*by_bus)(const char *bus, nvml_device *dev);
    int (*temp)(nvml_device dev, int sensor, unsigned *t);
    int (*clock)(nvml_device dev, int type, unsigned *mhz);
    int (*power)(nvml_device dev, unsigned *mw);
    int (*throttle)(nvml_device dev, unsigned long long *reasons);
    int (*ecc)(nvml_device dev, int type, int counter, unsigned long long *count);
    int (*energy)(nvml_device dev, unsigned long long *mj);
};

ts_nvml *ts_nvml_open(void) {
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        TS_ERROR(TS_ERR_UNSUPPORTED, "NVML not found (%s)", dlerror());
        return NULL;
    }
    ts_nvml *t = calloc(1, sizeof *t);
    if (!t) {
        dlclose(lib);
        TS_ERROR(TS_ERR_NOMEM, "NVML: no host memory");
        return NULL;
    }
    t->lib = lib;
    // dlsym returns void *; the casts through a union-free assignment are the POSIX idiom.
    *(void **)&t->init = dlsym(lib, "nvmlInit_v2");
    *(void **)&t->shutdown = dlsym(lib, "nvmlShutdown");
    *(void **)&t->by_bus = dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2");
    *(void **)&t->temp = dlsym(lib, "nvmlDeviceGetTemperature");
    *(void **)&t->clock = dlsym(lib, "nvmlDeviceGetClockInfo");
    *(void **)&t->power = dlsym(lib, "nvmlDeviceGetPowerUsage");
    *(void **)&t->throttle = dlsym(lib, "nvmlDeviceGetCurrentClocksEventReasons");
    if (!t->throttle) *(void **)&t->throttle = dlsym(lib, "nvmlDeviceGetCurrentClocksThrottleReasons");
    *(void **)&t->ecc = dlsym(lib, "nvmlDeviceGetTotalEccErrors");
    *(void **)&t->energy = dlsym(lib, "nvmlDeviceGetTotalEnergyConsumption");
    if (!t->init || !t->shutdown || !t->by_bus || t->init() != 0) {
        dlclose(lib);
        free(t);
        TS_ERROR(TS_ERR_UNSUPPORTED, "NVML could not be initialized");
        return NULL;
    }
    return t;
}

void ts_nvml_close(ts_nvml *t) {
    if (!t) return;
    t->shutdown();
    dlclose(t->lib);
    free(t);
}

int ts_nvml_read(ts_nvml *t, const char *bus_id, ts_nvml_sample *s) {
    nvml_device dev;
    if (!t || !bus_id || t->by_bus(bus_id, &dev) != 0) return 0;
    unsigned v;
    unsigned long long r;
    if (t->temp && t->temp(dev, NVML_TEMPERATURE_GPU, &v) == 0) s->temp_c = v;
    if (t->clock && t->clock(dev, NVML_CLOCK_SM, &v) == 0) s->sm_mhz = v;
    if (t->clock && t->clock(dev, NVML_CLOCK_MEM, &v) == 0) s->mem_mhz = v;
    if (t->power && t->power(dev, &v) == 0) s->power_w = v / 1000.0;
    if (t->throttle && t->throttle(dev, &r) == 0) s->throttle = r;
    if (t->ecc && t->ecc(dev, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC, &r) == 0) s->ecc_corrected = r;
    if (t->ecc && t->ecc(dev, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC, &r) == 0) s->ecc_uncorrected = r;
    return 1;
}

int ts_nvml_energy_mj(ts_nvml *t, const char *bus_id, unsigned long long *mj) {
    nvml_device dev;
    if (!t || !t->energy) TS_RAISE(TS_ERR_UNSUPPORTED, "NVML has no energy counter");
    if (!bus_id || t->by_bus(bus_id, &dev) != 0)
        TS_RAISE(TS_ERR_UNSUPPORTED, "NVML does not know the device %s", bus_id ? bus_id : "(none)");
    int rc = t->energy(dev, mj);
    if (rc != 0) TS_RAISE(TS_ERR_UNSUPPORTED, "NVML: no energy counter on %s (NVML error %d)", bus_id, rc);
    return 0;
}
