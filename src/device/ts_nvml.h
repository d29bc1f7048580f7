// ts_nvml.h: NVIDIA's management library (NVML) opened at run time: telemetry and the energy counter of CUDA GPUs.
//
// No link-time dependency: the library is opened with dlopen when asked for, and every call degrades
// to "unavailable" where it (or one of its functions) is missing: CI machines, simulated devices,
// builds without CUDA (a stub that never opens). Devices are named by their PCI bus id
// (ts_device_props.bus_id).
#ifndef TS_NVML_H
#define TS_NVML_H

typedef struct ts_nvml ts_nvml;

// Opens and initializes NVML. NULL when it is absent or does not initialize; ts_error then says why
// ("NVML not found (<dlerror>)", "NVML could not be initialized", "NVML needs a CUDA build").
ts_nvml *ts_nvml_open(void);
void ts_nvml_close(ts_nvml *t);

// One reading of a device's telemetry. ts_nvml_read writes only the fields whose query answered:
// the caller sets what "unavailable" means (NaN, 0) beforehand.
typedef struct {
    double temp_c, sm_mhz, mem_mhz, power_w;
    unsigned long long throttle;               // clock event (throttle) reasons
    unsigned long long ecc_corrected, ecc_uncorrected; // volatile ECC counts
} ts_nvml_sample;
// 1 when the device was found (some fields may still be left as they were), 0 when not.
int ts_nvml_read(ts_nvml *t, const char *bus_id, ts_nvml_sample *s);

// The device's energy counter (nvmlDeviceGetTotalEnergyConsumption: millijoules since the driver
// loaded; Volta and later). 0, or TS_ERR_UNSUPPORTED when NVML, the device or the counter is not there.
int ts_nvml_energy_mj(ts_nvml *t, const char *bus_id, unsigned long long *mj);

#endif
