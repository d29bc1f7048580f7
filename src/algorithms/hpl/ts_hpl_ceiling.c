// ts_hpl_ceiling.c: the DGEMM ceiling an HPL rate is measured against. Every rank's device holds
// each of its GEMM engines on HPL's update shape (C -= A op(B), C m x n, the inner dimension NB)
// for a set time, long enough for the clock to settle where the power cap holds it; the rate over
// the second half of that time is the engine's sustained rate. Both forms of the update are held
// (B as it is, and B transposed: the transposed layout's update reads L21 that way, and cuBLAS ran
// it faster, bench/notes/hpl.md), the own kernel in the first only. The ceiling is the best rate,
// the slowest rank's per GPU, and that times the ranks for the whole run. Where NVML has the GPU's
// energy counter, the same second half's energy gives each hold's power and joules per TFLOP.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/hpl/ts_hpl_internal.h"
#include "core/ts_error.h"
#include "core/ts_log.h"
#include "core/ts_timer.h"
#include "device/ts_nvml.h"
#include "kernels/ts_kernels.h"

// Values in [-0.5, 0.5) (data of real magnitude: zeros would draw less power and clock higher).
static void fill(double *h, int64_t n, uint64_t seed) {
    for (int64_t i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        h[i] = (double)(seed >> 11) * (1.0 / 9007199254740992.0) - 0.5;
    }
}

// Fills `count` doubles of device memory from one random host block, copied again and again.
static int fill_device(ts_stream *st, double *d, int64_t count, const double *h, int64_t hn) {
    for (int64_t at = 0; at < count; at += hn) {
        int64_t n = count - at < hn ? count - at : hn;
        TS_CHECK(ts_copy_async(st, TS_COPY_H2D, d + at, h, (size_t)n * sizeof(double)));
    }
    return ts_stream_sync(st);
}

// The energy of one hold's second half (NVML; have 0 when the counter is not there).
typedef struct {
    ts_nvml *nv;        // NULL: no energy
    const char *bus_id;
    int have;
    double joules, seconds, tflop;
} hold_energy;

static int energy_now(hold_energy *w, unsigned long long *mj) {
    if (!w->nv) return 0;
    if (ts_nvml_energy_mj(w->nv, w->bus_id, mj) == 0) return 1;
    TS_LOG_D("hpl ceiling: no energy: %s", ts_error_last()->message);
    ts_error_clear();
    return 0;
}

// One engine held for `seconds` on C -= A op(B) (tb 'N': B k x n; 'T': B n x k): the sustained
// TFLOP/s over the second half, 0 when it cannot run.
static int hold(ts_stream *st, ts_engine e, char tb, int64_t m, int64_t n, int64_t k, const double *A, const double *B,
                double *C, double seconds, double *tflops, hold_energy *w) {
    const double minus1 = -1.0, one = 1.0, flops = 2.0 * (double)m * n * k;
    const int64_t ldb = tb == 'T' ? n : k;
    *tflops = 0;
    w->have = 0;
    unsigned long long mj0 = 0, mj1 = 0;
    int e0 = 0;
    // one call first: an engine the device does not run fails here, and its set-up is not timed
    int rc = ts_dev_gemm(st, e, 'd', 'N', tb, m, n, k, &minus1, A, m, B, ldb, &one, C, m);
    if (rc == TS_ERR_UNSUPPORTED) {
        ts_error_clear();
        return 0;
    }
    TS_CHECK(rc);
    TS_CHECK(ts_stream_sync(st));
    // calls in batches of about 0.1 s, so the host checks the clock without starving the device
    double t0 = ts_now(), t_call = 0;
    {
        double a = ts_now();
        TS_CHECK(ts_dev_gemm(st, e, 'd', 'N', tb, m, n, k, &minus1, A, m, B, ldb, &one, C, m));
        TS_CHECK(ts_stream_sync(st));
        t_call = ts_now() - a;
    }
    int batch = t_call > 0 ? (int)(0.1 / t_call) : 1;
    if (batch < 1) batch = 1;
    if (batch > 1000) batch = 1000;
    double half_start = -1, half_calls = 0, now = ts_now();
    while (now - t0 < seconds) {
        for (int i = 0; i < batch; i++)
            TS_CHECK(ts_dev_gemm(st, e, 'd', 'N', tb, m, n, k, &minus1, A, m, B, ldb, &one, C, m));
        TS_CHECK(ts_stream_sync(st));
        now = ts_now();
        if (half_start >= 0) {
            half_calls += batch;
        } else if (now - t0 >= seconds / 2) {
            half_start = now;
            e0 = energy_now(w, &mj0); // (the device is idle here: every call so far has completed)
        }
    }
    if (half_start >= 0 && now > half_start && half_calls > 0) {
        *tflops = half_calls * flops / (now - half_start) / 1e12;
        if (e0 && energy_now(w, &mj1) && mj1 > mj0) {
            w->have = 1;
            w->joules = (double)(mj1 - mj0) / 1e3;
            w->seconds = now - half_start;
            w->tflop = half_calls * flops / 1e12;
        }
    } else {
        *tflops = batch * flops / fmax(now - t0, 1e-9) / 1e12; // too short for halves: the whole window
    }
    return 0;
}

int ts_hpl_ceiling_measure(ts_hpl_ctx *ctx, int64_t m, int64_t n, int64_t k, double seconds, ts_hpl_ceiling *out) {
    memset(out, 0, sizeof *out);
    if (m < 1 || n < 1 || k < 1 || !(seconds > 0)) TS_RAISE(TS_ERR_ARG, "hpl ceiling: shape %lldx%lldx%lld, %g s", (long long)m, (long long)n, (long long)k, seconds);
    out->m = m, out->n = n, out->k = k, out->seconds = seconds;
    // the holds (engine, form of B): CUDA devices cuBLAS and the own kernel, NN and NT each (the row
    // layout's update is NT)
    ts_engine engines[TS_HPL_CEIL_ENGINES] = {TS_ENGINE_CUBLAS, TS_ENGINE_CUBLAS, TS_ENGINE_TESSERA, TS_ENGINE_TESSERA};
    char ops[TS_HPL_CEIL_ENGINES] = {'N', 'T', 'N', 'T'};
    int nh = TS_HPL_CEIL_ENGINES;
    double rate[TS_HPL_CEIL_ENGINES] = {0};
    hold_energy w[TS_HPL_CEIL_ENGINES];
    memset(w, 0, sizeof w);
    int rc = 0, have = ctx->dev != NULL;
    ts_stream *st = NULL;
    double *A = NULL, *B = NULL, *C = NULL, *h = NULL;
    const int64_t hn = 1 << 20;
    if (have) {
        rc = ts_stream_create(ctx->dev, &st);
        if (!rc) rc = ts_dmalloc(ctx->dev, (size_t)(m * k) * sizeof(double), (void **)&A);
        if (!rc) rc = ts_dmalloc(ctx->dev, (size_t)(k * n) * sizeof(double), (void **)&B);
        if (!rc) rc = ts_dmalloc(ctx->dev, (size_t)(m * n) * sizeof(double), (void **)&C);
        if (!rc && !(h = malloc((size_t)hn * sizeof(double)))) rc = TS_ERR_NOMEM;
        if (!rc) {
            fill(h, hn, 12345 + (uint64_t)ctx->world.rank);
            rc = fill_device(st, A, m * k, h, hn);
            if (!rc) rc = fill_device(st, B, k * n, h, hn);
            if (!rc) rc = fill_device(st, C, m * n, h, hn);
        }
        // the energy counter of a CUDA GPU, where NVML is installed and has it
        ts_nvml *nv = NULL;
        if (!rc && ts_devset_backend(ctx->devs) == TS_BACKEND_CUDA && !(nv = ts_nvml_open())) {
            TS_LOG_D("hpl ceiling: %s: no energy", ts_error_last()->message);
            ts_error_clear();
        }
        for (int i = 0; i < TS_HPL_CEIL_ENGINES; i++) {
            w[i].nv = nv;
            w[i].bus_id = ts_device_props_of(ctx->dev)->bus_id;
        }
        if (!rc && ts_devset_backend(ctx->devs) != TS_BACKEND_CUDA) {
            // simulated devices: their one engine (auto's choice) in both forms, under its own name
            engines[0] = engines[1] = ts_dev_gemm_engine_for(st, TS_ENGINE_AUTO, 'd', 'N', 'N', m, n, k);
            nh = 2;
        }
        for (int i = 0; !rc && i < nh; i++) {
            rc = hold(st, engines[i], ops[i], m, n, k, A, B, C, seconds, &rate[i], &w[i]);
            snprintf(out->eng[i].name, sizeof out->eng[i].name, "%s", ts_engine_name(engines[i]));
            snprintf(out->eng[i].op, sizeof out->eng[i].op, "N%c", ops[i]);
        }
        out->nengines = nh;
        ts_nvml_close(nv);
    }
    free(h);
    if (C) ts_dfree(ctx->dev, C);
    if (B) ts_dfree(ctx->dev, B);
    if (A) ts_dfree(ctx->dev, A);
    if (st) ts_stream_destroy(st);
    // every rank the same answer: the slowest rank's rate per engine, and whether all measured
    int ok[2] = {rc == 0 && have, rc == 0 ? 0 : 1};
    int nr = out->nengines;
    TS_CHECK(ts_comm_allreduce_i(&ctx->world, ok, 2, TS_COMM_MIN));
    TS_CHECK(ts_comm_allreduce_d(&ctx->world, rate, TS_HPL_CEIL_ENGINES, TS_COMM_MIN));
    // energy: counted only when every rank read it for the engine; sums of joules, watts and TFLOP
    int en[TS_HPL_CEIL_ENGINES];
    double esum[3 * TS_HPL_CEIL_ENGINES];
    for (int i = 0; i < TS_HPL_CEIL_ENGINES; i++) {
        en[i] = w[i].have;
        esum[3 * i] = w[i].have ? w[i].joules : 0;
        esum[3 * i + 1] = w[i].have && w[i].seconds > 0 ? w[i].joules / w[i].seconds : 0;
        esum[3 * i + 2] = w[i].have ? w[i].tflop : 0;
    }
    TS_CHECK(ts_comm_allreduce_i(&ctx->world, en, TS_HPL_CEIL_ENGINES, TS_COMM_MIN));
    TS_CHECK(ts_comm_allreduce_d(&ctx->world, esum, 3 * TS_HPL_CEIL_ENGINES, TS_COMM_SUM));
    if (rc < 0) return rc;
    if (!ok[0]) return 0; // a rank without a device: no ceiling (out->measured 0)
    out->measured = 1;
    const double ranks = ctx->world.size > 0 ? ctx->world.size : 1;
    for (int i = 0; i < nr; i++) {
        if (en[i] && esum[3 * i + 2] > 0) {
            out->eng[i].energy = 1;
            out->eng[i].joules = esum[3 * i] / ranks;
            out->eng[i].watts = esum[3 * i + 1] / ranks;
            out->eng[i].j_per_tflop = esum[3 * i] / esum[3 * i + 2];
        }
        out->eng[i].tflops = rate[i];
        if (rate[i] > out->tflops_gpu) {
            out->tflops_gpu = rate[i];
            snprintf(out->best, sizeof out->best, "%s", out->eng[i].name);
            snprintf(out->best_op, sizeof out->best_op, "%s", out->eng[i].op);
        }
    }
    out->tflops = out->tflops_gpu * ctx->world.size;
    return 0;
}
