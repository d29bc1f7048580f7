// ts_burn_run.c: the burn run: one host thread per device keeping several streams of checked DGEMMs in flight; the calling thread samples, watches and stops them.
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "algorithms/burn/ts_burn.h"
#include "core/ts_env.h"
#include "core/ts_error.h"
#include "core/ts_log.h"
#include "core/ts_rng.h"
#include "core/ts_timer.h"
#include "device/ts_nvml.h"
#include "runtime/ts_engines.h"

#define MAX_STREAMS 8
#define RING 64          // recent iteration times kept for the watchdog's median
#define POLL_US 100      // event polling period of the device threads
#define MONITOR_US 20000 // monitoring loop period
#define WORST_GROWTH 1.5 // a passing check is located again when its deviation grew by this factor
#define MIN_WINDOW 0.5   // a last rate window shorter than this many intervals joins the one before

typedef struct burn_dev burn_dev;

// One stream's iteration in flight and its buffers.
typedef struct {
    ts_stream *st;
    ts_event *ev;
    double *dC;
    double *rd, *rwd, *cd, *cwd;
    ts_burn_check_result *dres, *hres; // device result and its pinned host copy
    int busy;
    int checked;                        // the work in flight is a checked iteration (else plain)
    int64_t iter;
} slot;

struct burn_dev {
    ts_burn_run *run;
    ts_device *dev;
    pthread_t th;
    int started;
    pthread_mutex_t mu;
    // shared with the monitor (mu)
    ts_burn_dev_report rep;
    int phase;              // 0 setup, 1 plain, 2 checked, 3 finished
    double checked_t0;      // ts_now() when the checked phase began
    double last_progress;   // ts_now() of the last completion
    double iter_median;     // seconds per iteration (0 = not known yet)
    double done_t;          // ts_now() of the last checked completion (its flops are in rep.useful_flops)
    int abandon;            // set by the watchdog: the thread must leave without touching the device
    int exited;
    // the monitor's own: the rate's window ends at completions ([win_t, ...) from win_flops on; the
    // sample before it began at prev_t/prev_flops), the next telemetry tick, errors already sampled
    double win_t, win_flops, prev_t, prev_flops, next_tick;
    int64_t sampled_errors;
    ts_burn_sample end_tele; // telemetry read as the checked phase ended (not later: an idle GPU cools fast)
    int end_read, end_have;
    // the thread's own
    slot slots[MAX_STREAMS];
    int nslots;
    int64_t N, m, n, k;
    double *dA, *dB, *rb, *rwb, *cb, *cwb, *dCr;
    double *hb;             // host copy of the four bound vectors (m, m, n, n)
    double ring[RING];
    int nring;
    double last_done;
};

struct ts_burn_run {
    const ts_burn_opts *o;
    ts_devset *set;
    int stop;               // all device threads stop (__atomic)
};

void ts_burn_opts_default(ts_burn_opts *o, ts_backend backend) {
    memset(o, 0, sizeof *o);
    o->size = backend == TS_BACKEND_CUDA ? TS_BURN_DEFAULT_SIZE_CUDA : TS_BURN_DEFAULT_SIZE_SIM;
    o->seconds = TS_BURN_DEFAULT_SECONDS;
    o->plain_seconds = -1;
    o->engine = TS_ENGINE_AUTO;
    o->mean = TS_BURN_MEAN;
    o->variance = TS_BURN_VARIANCE;
    o->streams = TS_BURN_STREAMS;
    o->seed = 1;
    o->interval = 1.0;
}

static int stopping(burn_dev *d) {
    if (__atomic_load_n(&d->run->stop, __ATOMIC_ACQUIRE)) return 1;
    pthread_mutex_lock(&d->mu);
    int a = d->abandon;
    pthread_mutex_unlock(&d->mu);
    return a;
}

static int abandoned(burn_dev *d) {
    pthread_mutex_lock(&d->mu);
    int a = d->abandon;
    pthread_mutex_unlock(&d->mu);
    return a;
}

static void sleep_us(long us) {
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

// Waits for an event by polling, so that a device that stops answering never holds this thread
// (the watchdog sets `abandon`, and the thread leaves). TS_ERR_TIMEOUT when abandoned.
static int wait_event(burn_dev *d, ts_event *ev, ts_stream *st) {
    for (;;) {
        int q = ts_event_query(ev);
        if (q == 1) return 0;
        if (q < 0) {
            // The stream's sticky error names the cause (the event only says it failed); a failed
            // stream answers at once.
            int rc = ts_stream_sync(st);
            return rc < 0 ? rc : q;
        }
        if (abandoned(d)) return TS_ERROR(TS_ERR_TIMEOUT, "abandoned by the watchdog");
        sleep_us(POLL_US);
    }
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

// A completion: progress for the watchdog, and the median of recent iteration times.
static void progressed(burn_dev *d) {
    double now = ts_now();
    if (d->last_done > 0) {
        d->ring[d->nring % RING] = now - d->last_done;
        d->nring++;
    }
    d->last_done = now;
    double med = 0;
    int n = d->nring < RING ? d->nring : RING;
    if (n >= 3) {
        double tmp[RING];
        memcpy(tmp, d->ring, (size_t)n * sizeof(double));
        qsort(tmp, (size_t)n, sizeof(double), cmp_double);
        med = tmp[n / 2];
    }
    pthread_mutex_lock(&d->mu);
    d->last_progress = now;
    if (med > 0) d->iter_median = med;
    pthread_mutex_unlock(&d->mu);
}

// ---------------------------------------------------------------- setup

static int alloc_d(burn_dev *d, size_t count, double **p) {
    return ts_dmalloc(d->dev, count * sizeof(double), (void **)p);
}

static int setup(burn_dev *d) {
    const ts_burn_opts *o = d->run->o;
    ts_devset *set = d->run->set;
    int64_t N = o->size, m = N - 2, n = N - 2, k = N;
    d->N = N, d->m = m, d->n = n, d->k = k;
    d->nslots = o->streams < 1 ? 1 : o->streams > MAX_STREAMS ? MAX_STREAMS : o->streams;
    for (int s = 0; s < d->nslots; s++) {
        slot *sl = &d->slots[s];
        TS_CHECK(ts_stream_create(d->dev, &sl->st));
        TS_CHECK(ts_event_create(d->dev, &sl->ev));
        TS_CHECK(alloc_d(d, (size_t)N * N, &sl->dC));
        TS_CHECK(alloc_d(d, (size_t)m, &sl->rd));
        TS_CHECK(alloc_d(d, (size_t)m, &sl->rwd));
        TS_CHECK(alloc_d(d, (size_t)n, &sl->cd));
        TS_CHECK(alloc_d(d, (size_t)n, &sl->cwd));
        TS_CHECK(ts_dmalloc(d->dev, sizeof(ts_burn_check_result), (void **)&sl->dres));
        TS_CHECK(ts_host_alloc(set, sizeof(ts_burn_check_result), (void **)&sl->hres));
    }
    TS_CHECK(alloc_d(d, (size_t)N * k, &d->dA));
    TS_CHECK(alloc_d(d, (size_t)k * N, &d->dB));
    TS_CHECK(alloc_d(d, (size_t)m, &d->rb));
    TS_CHECK(alloc_d(d, (size_t)m, &d->rwb));
    TS_CHECK(alloc_d(d, (size_t)n, &d->cb));
    TS_CHECK(alloc_d(d, (size_t)n, &d->cwb));
    if (o->recompute_every > 0) TS_CHECK(alloc_d(d, (size_t)N * N, &d->dCr));

    ts_stream *st = d->slots[0].st;
    ts_engine e = ts_dev_gemm_engine_for(st, o->engine, 'd', 'N', 'N', N, N, k);
    ts_engine r = TS_ENGINE_AUTO;
    if (o->recompute_every > 0) {
        if (ts_devset_backend(set) == TS_BACKEND_CUDA) r = e == TS_ENGINE_CUBLAS ? TS_ENGINE_TESSERA : TS_ENGINE_CUBLAS;
        else r = e == TS_ENGINE_REF ? TS_ENGINE_CPU : TS_ENGINE_REF;
    }
    pthread_mutex_lock(&d->mu);
    d->rep.engine = e;
    d->rep.recompute_engine = r;
    pthread_mutex_unlock(&d->mu);

    // Operands on the host: gaussian data, then the checksum rows/columns and the bounds.
    double *hA = malloc((size_t)N * k * sizeof(double)), *hB = malloc((size_t)k * N * sizeof(double));
    d->hb = malloc((size_t)(2 * m + 2 * n) * sizeof(double));
    if (!hA || !hB || !d->hb) {
        free(hA);
        free(hB);
        TS_RAISE(TS_ERR_NOMEM, "burn: no host memory for the %lld x %lld operands", (long long)N, (long long)N);
    }
    double sd = sqrt(o->variance);
    uint64_t key = ts_mix64(o->seed * 0x9E3779B97F4A7C15ull + (uint64_t)d->rep.ordinal);
    ts_fill_gaussian_d(key, hA, N * k, o->mean, sd);
    ts_fill_gaussian_d(key + 1, hB, k * N, o->mean, sd);
    double *hrb = d->hb, *hrwb = hrb + m, *hcb = hrwb + m, *hcwb = hcb + n;
    ts_burn_encode(m, n, k, hA, N, hB, k, hrb, hrwb, hcb, hcwb);
    double lo, hi = ts_burn_element_threshold(m, n, hrb, hrwb, hcb, hcwb, &lo);
    pthread_mutex_lock(&d->mu);
    d->rep.element_threshold = hi;
    d->rep.element_threshold_lo = lo;
    pthread_mutex_unlock(&d->mu);
    // Copies 1 and 2 of the device are A and B (fault-injection tests count on it).
    int rc = ts_copy_async(st, TS_COPY_H2D, d->dA, hA, (size_t)N * k * sizeof(double));
    if (!rc) rc = ts_copy_async(st, TS_COPY_H2D, d->dB, hB, (size_t)k * N * sizeof(double));
    if (!rc) rc = ts_copy_async(st, TS_COPY_H2D, d->rb, hrb, (size_t)m * sizeof(double));
    if (!rc) rc = ts_copy_async(st, TS_COPY_H2D, d->rwb, hrwb, (size_t)m * sizeof(double));
    if (!rc) rc = ts_copy_async(st, TS_COPY_H2D, d->cb, hcb, (size_t)n * sizeof(double));
    if (!rc) rc = ts_copy_async(st, TS_COPY_H2D, d->cwb, hcwb, (size_t)n * sizeof(double));
    if (!rc) rc = ts_event_record(d->slots[0].ev, st);
    if (!rc) rc = wait_event(d, d->slots[0].ev, st);
    free(hA);
    free(hB);
    return rc;
}

static void teardown(burn_dev *d) {
    ts_devset *set = d->run->set;
    for (int s = 0; s < d->nslots; s++) {
        slot *sl = &d->slots[s];
        if (sl->st) ts_stream_destroy(sl->st);
        if (sl->ev) ts_event_destroy(sl->ev);
        ts_dfree(d->dev, sl->dC);
        ts_dfree(d->dev, sl->rd);
        ts_dfree(d->dev, sl->rwd);
        ts_dfree(d->dev, sl->cd);
        ts_dfree(d->dev, sl->cwd);
        ts_dfree(d->dev, sl->dres);
        if (sl->hres) ts_host_free(set, sl->hres);
    }
    ts_dfree(d->dev, d->dA);
    ts_dfree(d->dev, d->dB);
    ts_dfree(d->dev, d->rb);
    ts_dfree(d->dev, d->rwb);
    ts_dfree(d->dev, d->cb);
    ts_dfree(d->dev, d->cwb);
    ts_dfree(d->dev, d->dCr);
    free(d->hb);
    d->hb = NULL;
}

// ---------------------------------------------------------------- iterations

static int enqueue_gemm(burn_dev *d, slot *sl, ts_engine e, double *C) {
    const double one = 1.0, zero = 0.0;
    return ts_dev_gemm(sl->st, e, 'd', 'N', 'N', d->N, d->N, d->k, &one, d->dA, d->N, d->dB, d->k, &zero,
                       C, d->N);
}

static int enqueue_checked(burn_dev *d, slot *sl) {
    TS_CHECK(enqueue_gemm(d, sl, d->rep.engine, sl->dC));
    ts_burn_check_args a = {.C = sl->dC, .ldc = d->N, .m = d->m, .n = d->n, .rb = d->rb, .rwb = d->rwb,
                            .cb = d->cb, .cwb = d->cwb, .rd = sl->rd, .rwd = sl->rwd, .cd = sl->cd,
                            .cwd = sl->cwd, .res = sl->dres};
    TS_CHECK(ts_burn_check(sl->st, &a));
    TS_CHECK(ts_copy_async(sl->st, TS_COPY_D2H, sl->hres, sl->dres, sizeof *sl->hres));
    return ts_event_record(sl->ev, sl->st);
}

static void add_error(burn_dev *d, int64_t iter, int recompute, const ts_burn_location *loc) {
    double t = ts_now() - d->checked_t0;
    pthread_mutex_lock(&d->mu);
    d->rep.errors++;
    int log = d->rep.nreported < TS_BURN_MAX_REPORTED;
    if (d->rep.nreported < TS_BURN_MAX_REPORTED) {
        ts_burn_error *e = &d->rep.reported[d->rep.nreported++];
        e->iter = iter;
        e->t = t;
        e->recompute = recompute;
        e->loc = *loc;
    }
    pthread_mutex_unlock(&d->mu);
    if (!log) return; // the first ones are enough: a bad device fails every iteration
    TS_LOG_W("burn: device %d, iteration %lld: %s error at (%lld, %lld), magnitude %.3g (%.3g x the bound)",
             d->rep.ordinal, (long long)iter, recompute ? "recomputation" : "checksum", (long long)loc->row,
             (long long)loc->col, loc->magnitude, loc->ratio);
}

// Fetches a slot's differences (rd, rwd, cd, cwd: m, m, n, n) and locates what they show: the
// error of a failed check, or the largest deviation of a passing one (`failed` 0).
static int locate_check(burn_dev *d, slot *sl, int64_t iter, int failed) {
    int64_t m = d->m, n = d->n;
    double *h = malloc((size_t)(2 * m + 2 * n) * sizeof(double));
    if (!h) TS_RAISE(TS_ERR_NOMEM, "burn: no host memory");
    double *rd = h, *rwd = rd + m, *cd = rwd + m, *cwd = cd + n;
    int rc = ts_copy_async(sl->st, TS_COPY_D2H, rd, sl->rd, (size_t)m * sizeof(double));
    if (!rc) rc = ts_copy_async(sl->st, TS_COPY_D2H, rwd, sl->rwd, (size_t)m * sizeof(double));
    if (!rc) rc = ts_copy_async(sl->st, TS_COPY_D2H, cd, sl->cd, (size_t)n * sizeof(double));
    if (!rc) rc = ts_copy_async(sl->st, TS_COPY_D2H, cwd, sl->cwd, (size_t)n * sizeof(double));
    if (!rc) rc = ts_event_record(sl->ev, sl->st);
    if (!rc) rc = wait_event(d, sl->ev, sl->st);
    if (!rc) {
        const double *hb = d->hb;
        ts_burn_location loc;
        if (failed) {
            ts_burn_locate(m, n, rd, rwd, cd, cwd, hb, hb + m, hb + 2 * m, hb + 2 * m + n, &loc);
            loc.ratio = fmax(loc.ratio, sl->hres->max_ratio);
            add_error(d, iter, 0, &loc);
        } else {
            ts_burn_locate_worst(m, n, rd, rwd, cd, cwd, hb, hb + m, hb + 2 * m, hb + 2 * m + n, &loc);
            pthread_mutex_lock(&d->mu);
            if (!(loc.ratio <= d->rep.worst.ratio) || !d->rep.worst_iter) {
                d->rep.worst = loc;
                d->rep.worst_iter = iter;
            }
            pthread_mutex_unlock(&d->mu);
        }
    }
    free(h);
    return rc;
}

// Every recompute_every-th product: the whole product again with the second engine, compared on the
// host element by element: |C_ij - C'_ij| <= 2 gamma_k (|A||B|)_ij for two correct GEMMs, and
// (|A||B|)_ij <= min(r_i, c_j) (the row and column bounds over tau), doubled for safety.
static int recompute(burn_dev *d, slot *sl, int64_t iter) {
    int64_t N = d->N, m = d->m, n = d->n;
    size_t bytes = (size_t)N * N * sizeof(double);
    double *hC = malloc(bytes), *hR = malloc(bytes);
    int rc = 0;
    if (!hC || !hR) {
        free(hC);
        free(hR);
        TS_RAISE(TS_ERR_NOMEM, "burn: no host memory for the recomputation");
    }
    rc = enqueue_gemm(d, sl, d->rep.recompute_engine, d->dCr);
    if (!rc) rc = ts_copy_async(sl->st, TS_COPY_D2H, hC, sl->dC, bytes);
    if (!rc) rc = ts_copy_async(sl->st, TS_COPY_D2H, hR, d->dCr, bytes);
    if (!rc) rc = ts_event_record(sl->ev, sl->st);
    if (!rc) rc = wait_event(d, sl->ev, sl->st);
    if (!rc) {
        double tr = ts_burn_tau(d->k, n), tc = ts_burn_tau(d->k, m), g = 4.0 * ts_burn_gamma(d->k);
        ts_burn_location loc = {.row = -1, .col = -1};
        double worst = -1;
        for (int64_t j = 0; j < n; j++)
            for (int64_t i = 0; i < m; i++) {
                double bound = g * fmin(d->hb[i] / tr, d->hb[2 * m + j] / tc);
                double diff = hC[i + j * N] - hR[i + j * N];
                double a = fabs(diff);
                double q = a <= bound ? (bound > 0 ? a / bound : 0) : INFINITY;
                if (q > 1.0) {
                    loc.bad_rows++;
                    if (!(a <= worst)) worst = a, loc.row = i, loc.col = j, loc.magnitude = diff;
                }
                if (!(q <= loc.ratio)) loc.ratio = q;
            }
        pthread_mutex_lock(&d->mu);
        d->rep.recomputes++;
        pthread_mutex_unlock(&d->mu);
        if (loc.bad_rows) {
            loc.bad_cols = loc.bad_rows; // elements, counted once
            add_error(d, iter, 1, &loc);
        }
    }
    free(hC);
    free(hR);
    return rc;
}

// A slot's work completed: account for it (and check its result when it was checked).
static int complete(burn_dev *d, slot *sl) {
    TS_CHECK(wait_event(d, sl->ev, sl->st));
    sl->busy = 0;
    progressed(d);
    if (!sl->checked) return 0;
    const ts_burn_check_result *r = sl->hres;
    double flops = 2.0 * (double)d->m * (double)d->n * (double)d->k;
    pthread_mutex_lock(&d->mu);
    d->rep.iters++;
    d->rep.useful_flops += flops;
    d->done_t = ts_now();
    if (!(r->max_ratio <= d->rep.max_ratio)) d->rep.max_ratio = r->max_ratio;
    // A passing check is located when it deviates clearly more than any before (the first one, and
    // then a device whose deviations grow: with the same operands a correct engine repeats itself).
    int locate_worst = !d->rep.worst_iter || r->max_ratio > WORST_GROWTH * d->rep.worst.ratio;
    pthread_mutex_unlock(&d->mu);
    if (r->bad_rows || r->bad_cols || !(r->max_ratio <= 1.0)) TS_CHECK(locate_check(d, sl, sl->iter, 1));
    else if (locate_worst) TS_CHECK(locate_check(d, sl, sl->iter, 0));
    const ts_burn_opts *o = d->run->o;
    if (o->recompute_every > 0 && sl->iter % o->recompute_every == 0) {
        TS_CHECK(recompute(d, sl, sl->iter));
        progressed(d);
    }
    return 0;
}

static double plain_seconds(const ts_burn_opts *o) {
    if (o->plain_seconds >= 0) return o->plain_seconds;
    double s = 0.1 * o->seconds;
    return s < 0.5 ? 0.5 : s > 10.0 ? 10.0 : s;
}

// The plain phase: the same engine on the same operands, no checking, for plain_seconds.
static int plain_phase(burn_dev *d) {
    slot *s0 = &d->slots[0];
    // One untimed GEMM first (library handles, first-touch).
    TS_CHECK(enqueue_gemm(d, s0, d->rep.engine, s0->dC));
    TS_CHECK(ts_event_record(s0->ev, s0->st));
    TS_CHECK(wait_event(d, s0->ev, s0->st));
    progressed(d);
    double limit = plain_seconds(d->run->o), t0 = ts_now(), tlast = t0;
    int64_t done = 0;
    for (int64_t it = 0;; it++) {
        slot *sl = &d->slots[it % d->nslots];
        if (sl->busy) {
            TS_CHECK(complete(d, sl));
            done++;
            tlast = ts_now();
        }
        if (tlast - t0 >= limit || stopping(d)) break;
        TS_CHECK(enqueue_gemm(d, sl, d->rep.engine, sl->dC));
        TS_CHECK(ts_event_record(sl->ev, sl->st));
        sl->busy = 1;
        sl->checked = 0;
    }
    for (int s = 0; s < d->nslots; s++)
        if (d->slots[s].busy) TS_CHECK(complete(d, &d->slots[s]));
    pthread_mutex_lock(&d->mu);
    d->rep.plain_seconds = tlast - t0;
    if (done > 0 && tlast > t0)
        d->rep.plain_tflops = (double)done * 2.0 * (double)d->N * (double)d->N * (double)d->k / (tlast - t0) / 1e12;
    pthread_mutex_unlock(&d->mu);
    return 0;
}

static int checked_phase(burn_dev *d) {
    const ts_burn_opts *o = d->run->o;
    double t0 = ts_now();
    pthread_mutex_lock(&d->mu);
    d->phase = 2;
    d->checked_t0 = t0;
    pthread_mutex_unlock(&d->mu);
    int64_t iter = 0;
    for (int64_t it = 0;; it++) {
        slot *sl = &d->slots[it % d->nslots];
        if (sl->busy) TS_CHECK(complete(d, sl));
        // At least one checked product, however short the time: a verdict needs one.
        if ((iter > 0 && ts_now() - t0 >= o->seconds) || stopping(d)) break;
        TS_CHECK(enqueue_checked(d, sl));
        sl->busy = 1;
        sl->checked = 1;
        sl->iter = ++iter;
    }
    for (int s = 0; s < d->nslots; s++)
        if (d->slots[s].busy) TS_CHECK(complete(d, &d->slots[s]));
    pthread_mutex_lock(&d->mu);
    d->rep.seconds = ts_now() - t0;
    pthread_mutex_unlock(&d->mu);
    return 0;
}

static void *device_thread(void *arg) {
    burn_dev *d = arg;
    ts_error_clear();
    int rc = setup(d);
    if (!rc) {
        pthread_mutex_lock(&d->mu);
        d->phase = 1;
        pthread_mutex_unlock(&d->mu);
        rc = plain_phase(d);
    }
    if (!rc && !stopping(d)) rc = checked_phase(d);
    pthread_mutex_lock(&d->mu);
    int gone = d->abandon;
    if (rc < 0 && !gone) {
        d->rep.status = rc;
        snprintf(d->rep.message, sizeof d->rep.message, "%s", ts_error_last()->message);
    }
    if (d->phase == 2 && d->rep.seconds == 0) d->rep.seconds = ts_now() - d->checked_t0;
    d->phase = 3;
    pthread_mutex_unlock(&d->mu);
    // A device the watchdog gave up on is not touched again (its queues may never drain).
    if (!gone) teardown(d);
    pthread_mutex_lock(&d->mu);
    d->exited = 1;
    pthread_mutex_unlock(&d->mu);
    return NULL;
}

// ---------------------------------------------------------------- monitoring

static void grow_samples(ts_burn_dev_report *r) {
    if (r->nsamples == r->capsamples && r->capsamples < TS_BURN_MAX_SAMPLES) {
        int cap = r->capsamples ? 2 * r->capsamples : 64;
        ts_burn_sample *p = realloc(r->samples, (size_t)cap * sizeof *p);
        if (p) r->samples = p, r->capsamples = cap;
    }
}

// One sample of a device in its checked phase (mu held): telemetry now, the rate over whole checked
// products completed since the last window ended (so no partial product is ever counted: the first
// window starts with the checked phase, each later one where the one before ended), the errors found
// since the last sample. `dt` is the telemetry interval (throttled seconds).
static void add_sample(burn_dev *d, const ts_burn_sample *tele, int have, double now, double dt) {
    ts_burn_dev_report *r = &d->rep;
    ts_burn_sample s = *tele;
    s.t = now - d->checked_t0;
    s.t_from = s.t_to = d->win_t - d->checked_t0;
    d->prev_t = d->win_t, d->prev_flops = d->win_flops;
    if (r->useful_flops > d->win_flops && d->done_t > d->win_t) {
        s.t_to = d->done_t - d->checked_t0;
        s.tflops = (r->useful_flops - d->win_flops) / (d->done_t - d->win_t) / 1e12;
        d->win_t = d->done_t, d->win_flops = r->useful_flops;
    }
    s.errors = r->errors - d->sampled_errors;
    d->sampled_errors = r->errors;
    if (have) {
        if (!r->telemetry) {
            r->ecc_corrected0 = s.ecc_corrected;
            r->ecc_uncorrected0 = s.ecc_uncorrected;
        }
        r->telemetry = 1;
        r->ecc_corrected = s.ecc_corrected;
        r->ecc_uncorrected = s.ecc_uncorrected;
        if (!(s.temp_c <= r->max_temp_c)) r->max_temp_c = s.temp_c;
        if (s.throttle & TS_BURN_THROTTLE_MASK) r->throttled_s += dt;
    }
    grow_samples(r);
    if (r->nsamples < r->capsamples) r->samples[r->nsamples++] = s;
}

// The device's telemetry tick: every interval from the start of its own checked phase, and once
// more when the phase has ended (for the last sample).
static void tick(burn_dev *d, ts_nvml *nv, double now, double interval) {
    pthread_mutex_lock(&d->mu);
    int ended = d->phase == 3 && d->checked_t0 > 0 && !d->abandon && !d->end_read;
    d->end_read |= ended;
    int in_checked = d->phase == 2 && !d->abandon;
    if (in_checked && d->next_tick == 0) {
        d->win_t = d->prev_t = d->checked_t0;
        d->next_tick = d->checked_t0 + interval;
    }
    int due = in_checked && now >= d->next_tick;
    pthread_mutex_unlock(&d->mu);
    if (!due && !ended) return;
    // NVML is read without the lock (it may take a while); the report is updated under it.
    ts_nvml_sample nvs = {.temp_c = NAN, .sm_mhz = NAN, .mem_mhz = NAN, .power_w = NAN};
    int have = nv && ts_nvml_read(nv, d->rep.bus_id, &nvs);
    ts_burn_sample tele = {.temp_c = nvs.temp_c, .sm_mhz = nvs.sm_mhz, .mem_mhz = nvs.mem_mhz,
                           .power_w = nvs.power_w, .throttle = nvs.throttle,
                           .ecc_corrected = nvs.ecc_corrected, .ecc_uncorrected = nvs.ecc_uncorrected};
    pthread_mutex_lock(&d->mu);
    if (ended) {
        d->end_tele = tele;
        d->end_have = have;
        pthread_mutex_unlock(&d->mu);
        return;
    }
    // The sample is taken now, under the lock: a product completed during the NVML read (or while
    // the lock was held elsewhere) is in the window, and the window must not end after the sample's
    // time (a loaded CI machine saw t_to 2.8 us after t when `now` was the time before the read).
    now = ts_now();
    add_sample(d, &tele, have, now, interval);
    d->next_tick += interval;
    if (d->next_tick < now) d->next_tick = now + interval;
    pthread_mutex_unlock(&d->mu);
}

// After the run: the products completed since the last sample. A window shorter than MIN_WINDOW
// intervals is joined to the last sample's (its rate over both), so no short window at the end
// shows a spike or a drop.
static void last_sample(burn_dev *d, double interval) {
    pthread_mutex_lock(&d->mu);
    ts_burn_dev_report *r = &d->rep;
    if (d->checked_t0 == 0) { // never reached the checked phase
        pthread_mutex_unlock(&d->mu);
        return;
    }
    if (d->next_tick == 0) d->win_t = d->prev_t = d->checked_t0; // shorter than one interval
    double last_tick = d->next_tick > 0 ? d->next_tick - interval : d->checked_t0;
    int more = r->useful_flops > d->win_flops && d->done_t > d->win_t;
    if (!more && r->errors == d->sampled_errors) {
        pthread_mutex_unlock(&d->mu);
        return;
    }
    if (r->nsamples > 0 && (!more || d->done_t - d->win_t < MIN_WINDOW * interval)) {
        ts_burn_sample *s = &r->samples[r->nsamples - 1];
        if (more) {
            s->t_from = d->prev_t - d->checked_t0;
            s->t_to = d->done_t - d->checked_t0;
            s->tflops = (r->useful_flops - d->prev_flops) / (d->done_t - d->prev_t) / 1e12;
            d->win_t = d->done_t, d->win_flops = r->useful_flops;
        }
        s->errors += r->errors - d->sampled_errors;
        d->sampled_errors = r->errors;
        pthread_mutex_unlock(&d->mu);
        return;
    }
    // The checked phase's end (the last completion for a device left behind before it ended), with
    // the telemetry read then (none for a device left behind).
    double end = r->seconds > 0 ? d->checked_t0 + r->seconds : d->done_t;
    ts_burn_sample tele = {.temp_c = NAN, .sm_mhz = NAN, .mem_mhz = NAN, .power_w = NAN};
    int have = d->end_read && d->end_have;
    if (have) tele = d->end_tele;
    double now = ts_now(), at = end < now ? end : now;
    add_sample(d, &tele, have, at, at > last_tick ? at - last_tick : 0);
    pthread_mutex_unlock(&d->mu);
}

// The watchdog: a device whose current iteration has taken more than FACTOR x the median (and
// at least MIN seconds; FIRST before the first completion) is flagged lost and left behind.
static void watchdog(burn_dev *d, double now) {
    pthread_mutex_lock(&d->mu);
    if (d->phase < 3 && !d->abandon) {
        double limit = d->iter_median > 0 ? fmax(TS_BURN_WATCHDOG_FACTOR * d->iter_median, TS_BURN_WATCHDOG_MIN_S)
                                          : TS_BURN_WATCHDOG_FIRST_S;
        double quiet = now - d->last_progress;
        if (quiet > limit) {
            d->abandon = 1;
            d->rep.status = TS_ERR_DEVICE_LOST;
            snprintf(d->rep.message, sizeof d->rep.message,
                     "device %d stopped answering: no completion for %.1f s (median iteration %.3g s); "
                     "flagged lost by the watchdog", d->rep.ordinal, quiet, d->iter_median);
        }
    }
    pthread_mutex_unlock(&d->mu);
}

int ts_burn(ts_devset *set, const int *devices, int ndev, const ts_burn_opts *o,
            ts_burn_dev_report *reports, int *abandoned_out) {
    *abandoned_out = 0;
    if (ndev < 1) TS_RAISE(TS_ERR_ARG, "burn: no devices");
    if (o->size < 3) TS_RAISE(TS_ERR_ARG, "burn: size %lld is too small (at least 3)", (long long)o->size);
    if (!(o->seconds > 0)) TS_RAISE(TS_ERR_ARG, "burn: time must be positive");
    TS_CHECK(ts_burn_engine_check(set, devices, ndev, o->engine));
    ts_burn_run run = {.o = o, .set = set};
    burn_dev *devs = calloc((size_t)ndev, sizeof *devs);
    if (!devs) TS_RAISE(TS_ERR_NOMEM, "burn: no host memory");
    ts_nvml *nv = NULL;
    if (ts_devset_backend(set) == TS_BACKEND_CUDA && !(nv = ts_nvml_open())) {
        TS_LOG_I("burn: %s: telemetry unavailable", ts_error_last()->message);
        ts_error_clear();
    }
    double start = ts_now();
    int rc = 0;
    for (int i = 0; i < ndev; i++) {
        burn_dev *d = &devs[i];
        d->run = &run;
        d->dev = ts_devset_device(set, devices[i]);
        pthread_mutex_init(&d->mu, NULL);
        const ts_device_props *p = ts_device_props_of(d->dev);
        d->rep.ordinal = p->ordinal;
        snprintf(d->rep.name, sizeof d->rep.name, "%s", p->name);
        snprintf(d->rep.bus_id, sizeof d->rep.bus_id, "%s", p->bus_id);
        d->rep.max_temp_c = NAN;
        d->last_progress = start;
        if (pthread_create(&d->th, NULL, device_thread, d) != 0) {
            rc = TS_ERROR(TS_ERR_INTERNAL, "burn: cannot start the thread of device %d", p->ordinal);
            __atomic_store_n(&run.stop, 1, __ATOMIC_RELEASE);
            break;
        }
        d->started = 1;
    }
    double next_sample = start + o->interval;
    for (;;) {
        int live = 0;
        double now = ts_now();
        if (o->stop && *o->stop) __atomic_store_n(&run.stop, 1, __ATOMIC_RELEASE);
        for (int i = 0; i < ndev; i++) {
            burn_dev *d = &devs[i];
            if (!d->started) continue;
            watchdog(d, now);
            tick(d, nv, now, o->interval);
            pthread_mutex_lock(&d->mu);
            live += d->phase < 3 && !d->abandon;
            pthread_mutex_unlock(&d->mu);
        }
        if (!live) break;
        if (now >= next_sample) {
            if (o->on_sample) {
                ts_burn_dev_report *snap = calloc((size_t)ndev, sizeof *snap);
                if (snap) {
                    for (int i = 0; i < ndev; i++) {
                        pthread_mutex_lock(&devs[i].mu);
                        snap[i] = devs[i].rep;
                        pthread_mutex_unlock(&devs[i].mu);
                    }
                    o->on_sample(o->ctx, snap, ndev, now - start);
                    free(snap);
                }
            }
            next_sample += o->interval;
            if (next_sample < now) next_sample = now + o->interval;
        }
        sleep_us(MONITOR_US);
    }
    // What each device did since its last sample (an abandoned device's thread may still write its
    // report: only what it completed before is used, under the lock). A device that ended as the loop
    // left has its end telemetry read now.
    for (int i = 0; i < ndev; i++)
        if (devs[i].started) {
            tick(&devs[i], nv, ts_now(), o->interval);
            last_sample(&devs[i], o->interval);
        }
    int left_behind = 0;
    for (int i = 0; i < ndev; i++) {
        burn_dev *d = &devs[i];
        if (!d->started) continue;
        // A thread the watchdog abandoned leaves at its next poll; wait a little, then leave it.
        double until = ts_now() + 2.0;
        int exited;
        for (;;) {
            pthread_mutex_lock(&d->mu);
            exited = d->exited;
            pthread_mutex_unlock(&d->mu);
            if (exited || ts_now() > until) break;
            sleep_us(1000);
        }
        if (exited) pthread_join(d->th, NULL);
        else pthread_detach(d->th), left_behind = 1;
        if (abandoned(d)) *abandoned_out = 1;
        pthread_mutex_lock(&d->mu);
        ts_burn_dev_report *r = &d->rep;
        r->tflops = r->seconds > 0 ? r->useful_flops / r->seconds / 1e12 : 0;
        reports[i] = *r;
        if (!exited) {
            // The thread still holds its context: give the caller its own copy of the samples.
            reports[i].samples = NULL;
            if (r->nsamples && (reports[i].samples = malloc((size_t)r->nsamples * sizeof *r->samples)))
                memcpy(reports[i].samples, r->samples, (size_t)r->nsamples * sizeof *r->samples);
            else reports[i].nsamples = 0;
            reports[i].capsamples = reports[i].nsamples;
        }
        pthread_mutex_unlock(&d->mu);
    }
    for (int i = 0; i < ndev; i++)
        if (!devs[i].started) {
            reports[i] = devs[i].rep;
            reports[i].status = TS_ERR_INTERNAL;
        }
    ts_nvml_close(nv);
    // With a thread left behind, its context must outlive this call: it is leaked on purpose.
    if (!left_behind) {
        for (int i = 0; i < ndev; i++) pthread_mutex_destroy(&devs[i].mu);
        free(devs);
    }
    return rc;
}

void ts_burn_reports_free(ts_burn_dev_report *reports, int ndev) {
    for (int i = 0; i < ndev; i++) {
        free(reports[i].samples);
        reports[i].samples = NULL;
        reports[i].nsamples = reports[i].capsamples = 0;
    }
}

ts_burn_verdict ts_burn_verdict_of(const ts_burn_dev_report *r) {
    if (r->errors > 0) return TS_BURN_FAULTY;
    if (r->status == TS_ERR_DEVICE_LOST) return TS_BURN_LOST;
    if (r->status) return TS_BURN_FAILED;
    if (r->iters == 0) return TS_BURN_UNTESTED;
    return TS_BURN_OK;
}

const char *ts_burn_verdict_name(ts_burn_verdict v) {
    switch (v) {
    case TS_BURN_OK: return "OK";
    case TS_BURN_FAULTY: return "FAULTY";
    case TS_BURN_LOST: return "LOST";
    case TS_BURN_FAILED: return "FAILED";
    case TS_BURN_UNTESTED: return "UNTESTED";
    }
    return "?";
}

// A 1x1x1 product of the engine on a scratch stream of a CUDA device: whether this build and this
// device run it (the own kernels need FP64 tensor cores).
static int probe_cuda_engine(ts_device *dev, ts_engine e) {
    ts_stream *st = NULL;
    void *buf = NULL;
    const double one = 1.0;
    int rc = ts_stream_create(dev, &st);
    if (rc >= 0) rc = ts_dmalloc(dev, 3 * 256, &buf);
    if (rc >= 0) rc = ts_memset_async(st, buf, 0, 3 * 256);
    if (rc >= 0) rc = ts_dev_gemm(st, e, 'd', 'N', 'N', 1, 1, 1, &one, buf, 1, (char *)buf + 256, 1, &one,
                                  (char *)buf + 512, 1);
    if (rc >= 0) rc = ts_stream_sync(st);
    ts_error_info saved = *ts_error_last();
    if (st) ts_stream_destroy(st);
    if (buf) ts_dfree(dev, buf);
    if (rc < 0) {
        const ts_device_props *p = ts_device_props_of(dev);
        TS_RAISE(TS_ERR_UNSUPPORTED, "--engine %s: not available on device %d (%s): %s", ts_engine_name(e),
                 p->ordinal, p->name, saved.message);
    }
    return 0;
}

int ts_burn_engine_check(ts_devset *set, const int *devices, int ndev, ts_engine engine) {
    if (ts_engine_is_set_wide(engine))
        TS_RAISE(TS_ERR_UNSUPPORTED, "--engine %s: burn runs on device-resident operands", ts_engines_name(engine));
    if (ts_devset_backend(set) == TS_BACKEND_SIM) {
        if (engine != TS_ENGINE_AUTO && engine != TS_ENGINE_REF && engine != TS_ENGINE_CPU)
            TS_RAISE(TS_ERR_UNSUPPORTED, "--engine %s: not available on simulated devices (ref, cpu or auto)",
                     ts_engine_name(engine));
        if (engine == TS_ENGINE_AUTO) { // auto picks ref or cpu by this variable
            double v = 0;
            TS_CHECK(ts_env_double("TESSERA_SIM_GEMM_REF_FLOPS", &v));
            if (!(v >= 0)) TS_RAISE(TS_ERR_PARSE, "TESSERA_SIM_GEMM_REF_FLOPS=%g must not be negative", v);
        }
        return 0;
    }
    if (engine == TS_ENGINE_REF || engine == TS_ENGINE_CPU)
        TS_RAISE(TS_ERR_UNSUPPORTED, "--engine %s: not available on CUDA devices (cublas, tessera or auto)",
                 ts_engine_name(engine));
    if (engine == TS_ENGINE_TESSERA)
        for (int i = 0; i < ndev; i++) TS_CHECK(probe_cuda_engine(ts_devset_device(set, devices[i]), engine));
    return 0;
}
