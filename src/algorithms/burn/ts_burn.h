// ts_burn.h: `tessera burn`: continuous ABFT-checked DGEMM on every device, with telemetry, as a GPU torture and health test.
#ifndef TS_BURN_H
#define TS_BURN_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>

#include "device/ts_device.h"
#include "kernels/ts_burn_check.h"
#include "kernels/ts_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

// Numbers that matter, with one home each.
#define TS_BURN_DEFAULT_SECONDS 60.0
#define TS_BURN_DEFAULT_SIZE_CUDA 8192 // the checked GEMM is N x N x N (data (N-2) x (N-2) x N)
#define TS_BURN_DEFAULT_SIZE_SIM 96
#define TS_BURN_MEAN 0.0
#define TS_BURN_VARIANCE 25.0          // gaussian N(0, 25): as hot as HPL (CALDGEMM report, section 4)
#define TS_BURN_STREAMS 2              // streams per device (TESSERA_BURN_STREAMS)
#define TS_BURN_WATCHDOG_FACTOR 10.0   // an iteration slower than this x the median: device lost
#define TS_BURN_WATCHDOG_MIN_S 5.0     // ... but never flagged before this many seconds of silence
#define TS_BURN_WATCHDOG_FIRST_S 120.0 // the first iteration (setup, plain phase) may take this long
#define TS_BURN_MAX_REPORTED 8         // errors kept with their details per device
#define TS_BURN_MAX_SAMPLES 100000

// ---- ABFT encoding and bounds (host side, ts_burn_abft.c) ----

// The unit roundoff of double precision and gamma_t = t u / (1 - t u) (Higham, 3.1).
double ts_burn_gamma(int64_t t);
// tau(k, p) = 2 (2 gamma_k + 2 gamma_{p+2} + 2 gamma_k gamma_{p+2}): the bound factor of a checksum
// over p elements of a product with inner dimension k (derivation in ts_burn_abft.c).
double ts_burn_tau(int64_t k, int64_t p);

// The augmented operands: Aa ((m+2) x k, lda >= m+2) = [A; e^T A; w^T A] and Ba (k x (n+2), ldb >= k)
// = [B, B e, B w], w = (1, 2, 3, ...), from A (m x k) and B (k x n) already in the leading parts of
// Aa and Ba; and the bounds (rb, rwb: m; cb, cwb: n) for ts_burn_check.
void ts_burn_encode(int64_t m, int64_t n, int64_t k, double *Aa, int64_t lda, double *Ba, int64_t ldb,
                    double *rb, double *rwb, double *cb, double *cwb);

// Where an error is, from the differences and bounds of one check (host copies). `row`/`col` is the
// element (i, j) (-1 where unknown; m or m+1 / n or n+1 for a checksum element), `magnitude` the
// signed difference of the worst line (about the error of the element).
typedef struct {
    int64_t row, col;
    double magnitude;
    double ratio;                  // |magnitude| / its bound
    int64_t bad_rows, bad_cols;
} ts_burn_location;
void ts_burn_locate(int64_t m, int64_t n, const double *rd, const double *rwd, const double *cd,
                    const double *cwd, const double *rb, const double *rwb, const double *cb,
                    const double *cwb, ts_burn_location *loc);

// ---- the run ----

typedef struct {
    double t;        // seconds since the checked phase began
    double tflops;   // useful TFLOP/s over the interval (0 when no iteration completed in it)
    double temp_c, sm_mhz, mem_mhz, power_w; // NaN when unavailable
    unsigned long long throttle;             // NVML clock throttle reasons (0 when unavailable)
    unsigned long long ecc_corrected, ecc_uncorrected;
} ts_burn_sample;

typedef struct {
    int64_t iter;               // 1-based checked iteration of the device
    double t;                   // seconds into the checked phase
    int recompute;              // 1: found by the full recomputation, not by the checksums
    ts_burn_location loc;
} ts_burn_error;

typedef struct {
    int ordinal;
    char name[96];
    char bus_id[32];
    ts_engine engine;           // the engine that ran
    ts_engine recompute_engine;
    int status;                 // 0, TS_ERR_DEVICE_LOST, or another runtime failure
    int abandoned;              // the watchdog gave up on the device (its thread is left behind)
    char message[512];          // what failed
    int64_t iters;              // checked iterations completed
    int64_t recomputes;
    double seconds;             // checked phase
    double useful_flops;        // 2 (N-2)^2 N per checked iteration
    double tflops;              // sustained: useful_flops / seconds / 1e12
    double plain_tflops;        // the same engine, plain N x N x N DGEMMs, no checking
    double plain_seconds;
    int64_t errors;             // checked iterations (or recomputations) that failed
    int nreported;
    ts_burn_error reported[TS_BURN_MAX_REPORTED];
    double max_ratio;           // max normalized checksum error over all checks (<= 1 healthy)
    int telemetry;              // 1 if NVML answered for this device
    double max_temp_c, throttled_s;
    unsigned long long ecc_corrected0, ecc_uncorrected0, ecc_corrected, ecc_uncorrected;
    ts_burn_sample *samples;
    int nsamples, capsamples;
} ts_burn_dev_report;

typedef struct ts_burn_run ts_burn_run;

typedef struct {
    int64_t size;               // N
    double seconds;             // checked phase length
    double plain_seconds;       // plain phase (< 0: default min(10 s, max(0.5 s, 10% of seconds)))
    ts_engine engine;
    double mean, variance;
    int streams;
    int64_t recompute_every;    // 0 = off
    uint64_t seed;
    double interval;            // telemetry/sample period (1 s)
    volatile sig_atomic_t *stop; // set by the caller (SIGINT) to end early; may be NULL
    // Called on the monitoring thread after each sample with all device reports (live lines).
    void (*on_sample)(void *ctx, const ts_burn_dev_report *devs, int ndev, double elapsed);
    void *ctx;
} ts_burn_opts;

void ts_burn_opts_default(ts_burn_opts *o, ts_backend backend);

// Runs burn on the given devices (ndev of them) and fills reports[0..ndev) (samples are owned by the
// reports: ts_burn_reports_free). Returns 0 when it ran (errors and lost devices are in the
// reports), a negative status when it could not start. *abandoned is set when a device thread had to
// be left behind (the device set must then not be closed).
int ts_burn(ts_devset *set, const int *devices, int ndev, const ts_burn_opts *o,
            ts_burn_dev_report *reports, int *abandoned);
void ts_burn_reports_free(ts_burn_dev_report *reports, int ndev);

// ---- telemetry (NVML loaded at run time, ts_burn_nvml.c) ----
typedef struct ts_burn_nvml ts_burn_nvml;
// NULL when NVML is absent (no library, no driver): telemetry is then "unavailable".
ts_burn_nvml *ts_burn_nvml_open(void);
void ts_burn_nvml_close(ts_burn_nvml *t);
// Fills the telemetry fields of s for the GPU at PCI bus id; returns 1 if the device answered.
int ts_burn_nvml_sample(ts_burn_nvml *t, const char *bus_id, ts_burn_sample *s);
// Throttle reasons that mean the clocks were held down (power, thermal, slowdowns).
#define TS_BURN_THROTTLE_MASK 0xECull

// ---- plot (ts_burn_plot.c) ----
// SVG of the rate (left axis) and temperature (right axis) of every device over time.
int ts_burn_plot_svg(FILE *f, const ts_burn_dev_report *devs, int ndev, const char *title);

#ifdef __cplusplus
}
#endif

#endif
