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
// Lines whose check failed (ratio > 1) are the error; with none, loc->ratio is still the largest
// ratio and row/col stay -1.
void ts_burn_locate(int64_t m, int64_t n, const double *rd, const double *rwd, const double *cd,
                    const double *cwd, const double *rb, const double *rwb, const double *cb,
                    const double *cwb, ts_burn_location *loc);
// The line (row or column) with the largest ratio, whether or not it failed: for a row i, row = i
// and col the column its weighted difference names (-1 when it names none, as rounding alone does);
// a column likewise. magnitude is the line's plain difference, bad_rows/bad_cols count failed lines.
void ts_burn_locate_worst(int64_t m, int64_t n, const double *rd, const double *rwd, const double *cd,
                          const double *cwd, const double *rb, const double *rwb, const double *cb,
                          const double *cwb, ts_burn_location *loc);
// The error one element (i, j) of C must exceed for the check to see it, ignoring rounding:
// min(rb_i, rwb_i / (j+1), cb_j, cwb_j / (i+1)) (its row and column, plain and weighted); returns
// the largest over all elements (above it every element is caught) and the smallest in *lowest.
double ts_burn_element_threshold(int64_t m, int64_t n, const double *rb, const double *rwb, const double *cb,
                                 const double *cwb, double *lowest);

// ---- the run ----

typedef struct {
    double t;        // seconds since the checked phase began (when the telemetry was read)
    double tflops;   // useful TFLOP/s over [t_from, t_to] (0 when no checked product completed)
    double t_from, t_to; // the rate's window: from the last completion before the interval (the start of
                         // the checked phase for the first) to the last completion in it
    int64_t errors;  // checked products that failed in this interval
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
    ts_burn_location worst;     // the largest deviation of a passing check and where it was
    int64_t worst_iter;         // its iteration (0: none located)
    double element_threshold;   // ts_burn_element_threshold of the run's bounds (see docs/burn.md)
    double element_threshold_lo;
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

// Whether every device of the set runs `engine` (checked before a run starts): TS_ERR_UNSUPPORTED
// naming the engine and the device type, TS_ERR_PARSE for a malformed TESSERA_SIM_GEMM_REF_FLOPS
// (engine auto on simulated devices). Simulated devices are judged without running anything, so
// their fault counters (TESSERA_SIM_FAULTS) count burn's own operations only.
int ts_burn_engine_check(ts_devset *set, const int *devices, int ndev, ts_engine engine);

// The verdict on one device, as gpu-burn words it: FAULTY when any checked product failed (even if
// the device was lost later: corrupted data is the worse finding), else LOST or FAILED for a
// runtime failure, UNTESTED when no checked product completed (an interrupted run), else OK.
typedef enum { TS_BURN_OK, TS_BURN_FAULTY, TS_BURN_LOST, TS_BURN_FAILED, TS_BURN_UNTESTED } ts_burn_verdict;
ts_burn_verdict ts_burn_verdict_of(const ts_burn_dev_report *r);
const char *ts_burn_verdict_name(ts_burn_verdict v); // "OK", "FAULTY", "LOST", "FAILED", "UNTESTED"

// Runs burn on the given devices (ndev of them) and fills reports[0..ndev) (samples are owned by the
// reports: ts_burn_reports_free). Returns 0 when it ran (errors and lost devices are in the
// reports), a negative status when it could not start. *abandoned is set when a device thread had to
// be left behind (the device set must then not be closed).
int ts_burn(ts_devset *set, const int *devices, int ndev, const ts_burn_opts *o,
            ts_burn_dev_report *reports, int *abandoned);
void ts_burn_reports_free(ts_burn_dev_report *reports, int ndev);

// ---- telemetry (NVML loaded at run time by the device layer, device/ts_nvml.h) ----
// Throttle reasons that mean the clocks were held down (power, thermal, slowdowns).
#define TS_BURN_THROTTLE_MASK 0xECull

// ---- plot (ts_burn_plot.c) ----
// SVG of the rate (left axis) and temperature (right axis) of every device over the run's `seconds`,
// intervals with failed checks marked, one legend line per device with its verdict.
int ts_burn_plot_svg(FILE *f, const ts_burn_dev_report *devs, int ndev, double seconds, const char *title);

#ifdef __cplusplus
}
#endif

#endif
