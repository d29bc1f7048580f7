// ts_bench_run.c: the runs of the benchmark harness (ts_bench.h): operands, host memory, cuBLASXt's pinning, timed loops, size and pass loops.
#include <stdlib.h>
#include <string.h>

#include "core/ts_error.h"
#include "core/ts_rng.h"
#include "core/ts_timer.h"
#include "faces/cli/ts_bench.h"
#include "faces/cli/ts_cli.h"
#include "faces/cli/ts_cli_opts.h"

// ---------------------------------------------------------------- memory

int ts_bench_host_alloc(ts_bench *b, size_t bytes, void **p) {
    if (b->devs && ts_devset_count(b->devs) > 0) return ts_host_alloc(b->devs, bytes, p);
    *p = aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
    return *p ? 0 : TS_ERROR(TS_ERR_NOMEM, "cannot allocate %zu bytes of host memory", bytes);
}

void ts_bench_host_free(ts_bench *b, void *p) {
    if (!p) return;
    if (b->devs && ts_devset_count(b->devs) > 0) ts_host_free(b->devs, p);
    else free(p);
}

int ts_bench_buffers(ts_bench *b, const size_t *bytes, int nhost, int ndev, int nup) {
    for (int q = 0; q < nhost; q++) {
        b->bytes[q] = bytes[q];
        TS_CHECK(ts_bench_host_alloc(b, bytes[q] ? bytes[q] : 64, &b->host[q]));
    }
    if (!b->dev) return 0;
    for (int q = 0; q < ndev; q++) TS_CHECK(ts_dmalloc(b->dev, bytes[q], &b->dbuf[q]));
    TS_CHECK(ts_bench_upload(b, 0, nup));
    return nup ? ts_stream_sync(b->st) : 0;
}

int ts_bench_upload(ts_bench *b, int first, int n) {
    for (int q = first; q < first + n; q++) TS_CHECK(ts_copy_async(b->st, TS_COPY_H2D, b->dbuf[q], b->host[q], b->bytes[q]));
    return 0;
}

void ts_bench_buffers_free(ts_bench *b) {
    if (b->tiles) ts_tiles_unpin_all(b->tiles); // the runtime keeps registrations across calls
    for (int q = 0; q < TS_BENCH_NBUF; q++) {
        ts_bench_host_free(b, b->host[q]);
        if (b->dev && b->dbuf[q]) ts_dfree(b->dev, b->dbuf[q]);
        b->host[q] = b->dbuf[q] = NULL, b->bytes[q] = 0;
    }
}

int ts_bench_host_fits(const ts_bench *b, const char *what, double need, double avail) {
    if (need <= avail) return 0;
    return ts_cli_usage_error(b->o->cmd, "%s: needs %.2f GiB of host memory, %.2f GiB available", what,
                              ts_cli_gib(need), ts_cli_gib(avail));
}

int ts_bench_fits(const ts_bench *b, const char *what, double host_need, double dev_need) {
    size_t used = 0, free_b = 0, largest = 0;
    if (b->dev) ts_dmem_info(b->dev, &used, &free_b, &largest);
    if (b->dev && dev_need > (double)free_b)
        return ts_cli_usage_error(b->o->cmd, "%s: needs %.2f GiB on device %d, %.2f GiB available", what,
                                  ts_cli_gib(dev_need), b->dev_index, ts_cli_gib((double)free_b));
    return ts_bench_host_fits(b, what, host_need, (double)ts_cli_host_mem_available());
}

int ts_bench_xt_begin(ts_bench *b, const ts_bench_row *r, int qa, int qb, int qc, int pins[3]) {
    void *bufs[3] = {b->host[qa], b->host[qb], b->host[qc]};
    size_t bytes[3] = {b->bytes[qa], b->bytes[qb], b->bytes[qc]};
    pins[0] = pins[1] = pins[2] = -1;
    if (r->engine != TS_ENGINE_CUBLASXT) return 0;
    // buffers from ts_host_alloc are page-locked already: nothing to do for those
    for (int q = 0; q < 3; q++)
        if (bytes[q] && ts_host_pin(b->devs, bufs[q], bytes[q], &pins[q]) < 0) pins[q] = -1, ts_error_clear();
    return ts_engines_set_xt_block(b->eng, r->xt_block);
}

// Chunks of 64 MiB (a multiple of every element size) handed out to the threads.
#define PAR_CHUNK ((size_t)64 << 20)

void ts_bench_copy(void *dst, const void *src, size_t bytes) {
    int64_t nchunks = (int64_t)((bytes + PAR_CHUNK - 1) / PAR_CHUNK);
#pragma omp parallel for schedule(dynamic)
    for (int64_t c = 0; c < nchunks; c++) {
        size_t off = (size_t)c * PAR_CHUNK, len = bytes - off < PAR_CHUNK ? bytes - off : PAR_CHUNK;
        memcpy((char *)dst + off, (const char *)src + off, len);
    }
}

void ts_bench_set(void *dst, int byte, size_t bytes) {
    int64_t nchunks = (int64_t)((bytes + PAR_CHUNK - 1) / PAR_CHUNK);
#pragma omp parallel for schedule(dynamic)
    for (int64_t c = 0; c < nchunks; c++) {
        size_t off = (size_t)c * PAR_CHUNK, len = bytes - off < PAR_CHUNK ? bytes - off : PAR_CHUNK;
        memset((char *)dst + off, byte, len);
    }
}

void ts_bench_fill(char prec, uint64_t key, void *x, size_t bytes) {
    int single = prec == 's' || prec == 'c';
    size_t es = single ? sizeof(float) : sizeof(double), n = bytes / es, per = PAR_CHUNK / es;
    int64_t nchunks = (int64_t)((n + per - 1) / per);
#pragma omp parallel for schedule(dynamic)
    for (int64_t c = 0; c < nchunks; c++) {
        size_t first = (size_t)c * per, len = n - first < per ? n - first : per;
        if (single) ts_fill_uniform_s_from(key, (float *)x + first, (int64_t)first, (int64_t)len);
        else ts_fill_uniform_d_from(key, (double *)x + first, (int64_t)first, (int64_t)len);
    }
}

uint64_t ts_bench_key(uint64_t seed, const uint64_t *words, int n, char prec, int role) {
    uint64_t h = ts_mix64(seed + 0x9e3779b97f4a7c15ULL);
    for (int i = 0; i < n; i++) h = ts_mix64(h ^ words[i]);
    return ts_mix64(h ^ ((uint64_t)(unsigned char)prec << 8) ^ (uint64_t)role);
}

void ts_bench_xt_end(ts_bench *b, const int pins[3]) {
    for (int q = 0; q < 3; q++)
        if (pins[q] >= 0) ts_host_unpin(b->devs, pins[q]);
}


int ts_bench_time_host(int warmup, int reps, ts_bench_run_fn run, void *ctx, double *sec) {
    for (int w = 0; w < warmup; w++) TS_CHECK(run(ctx, 0));
    for (int r = 0; r < reps; r++) {
        double t0 = ts_now();
        TS_CHECK(run(ctx, 1));
        sec[r] = ts_now() - t0;
    }
    return 0;
}

int ts_bench_time_stream(ts_stream *st, int warmup, int reps, ts_bench_run_fn enqueue, void *ctx, double *sec) {
    int rc = 0, nev = 0;
    ts_event **ev = calloc((size_t)reps + 1, sizeof *ev);
    if (!ev) return TS_ERROR(TS_ERR_NOMEM, "out of host memory");
    for (; nev <= reps; nev++) TS_CHECK_GOTO(ts_event_create(ts_stream_device(st), &ev[nev]), rc, out);
    for (int w = 0; w < warmup; w++) TS_CHECK_GOTO(enqueue(ctx, 0), rc, out);
    TS_CHECK_GOTO(ts_event_record(ev[0], st), rc, out);
    for (int r = 0; r < reps; r++) {
        TS_CHECK_GOTO(enqueue(ctx, 1), rc, out);
        TS_CHECK_GOTO(ts_event_record(ev[r + 1], st), rc, out);
    }
    TS_CHECK_GOTO(ts_stream_sync(st), rc, out);
    for (int r = 0; r < reps; r++) {
        double ms;
        TS_CHECK_GOTO(ts_event_elapsed_ms(ev[r], ev[r + 1], &ms), rc, out);
        sec[r] = ms * 1e-3;
    }
out:
    for (int i = 0; i < nev; i++) ts_event_destroy(ev[i]);
    free(ev);
    return rc;
}

void ts_bench_row_trace(ts_bench *b, ts_bench_row *r, const ts_tiles_stats *last) {
    char path[1100];
    if (ts_bench_row_tiles(b, r, last, ts_bench_trace_path(b, r->ndev, path, sizeof path)) >= 0) return;
    ts_cli_errorf(b->o->cmd, "--trace: %s", ts_error_string());
    ts_error_clear();
}

const char *ts_bench_trace_path(const ts_bench *b, int ndev, char *buf, size_t len) {
    const char *tp = b->o->trace;
    if (!tp || b->o->ncounts == 0) return tp;
    size_t n = strlen(tp);
    int dot = n > 5 && !strcmp(tp + n - 5, ".json");
    snprintf(buf, len, "%.*s-%ddev%s", (int)(dot ? n - 5 : n), tp, ndev, dot ? ".json" : "");
    return buf;
}

// ---------------------------------------------------------------- drivers

int ts_bench_sizes(ts_bench *b, ts_bench_size_fn run, void *ctx, int *worst) {
    const ts_bench_opts *o = b->o;
    int rc = 0;
    for (int s = 0; s < o->nshapes && rc == 0; s++)
        for (int p = 0; p < o->nprecs && rc == 0; p++) {
            const ts_bench_shape *x = &o->shapes[s];
            if ((rc = run(ctx, *x, o->precs[p], worst)) < 0) {
                char size[80];
                ts_bench_progress_clear(b);
                ts_cli_errorf(o->cmd, "%s %c: %s", ts_bench_shape_text(o, *x, size, sizeof size), o->precs[p], ts_error_string());
            }
            if (rc) rc = TS_EXIT_RUNTIME;
            ts_bench_buffers_free(b);
        }
    ts_bench_progress_end(b);
    return rc;
}

int ts_bench_check_sizes(ts_bench *b, ts_bench_need_fn need, void *ctx) {
    const ts_bench_opts *o = b->o;
    for (int s = 0; s < o->nshapes; s++)
        for (int p = 0; p < o->nprecs; p++) {
            double host = 0, dev = 0;
            char size[80], what[96];
            need(ctx, o->shapes[s], o->precs[p], &host, &dev);
            snprintf(what, sizeof what, "%s %c", ts_bench_shape_text(o, o->shapes[s], size, sizeof size), o->precs[p]);
            if (ts_bench_fits(b, what, host, dev)) return TS_EXIT_USAGE;
        }
    return 0;
}

void *ts_bench_engine_row(ts_bench *b, int e) {
    ts_bench_row *r = ts_bench_new_row(b);
    if (!r) return NULL;
    r->engine = b->o->engines[e], r->xt_block = b->o->xt_block[e], r->reps = b->o->reps;
    r->ndev = ts_bench_row_devices(b, r->engine);
    return r;
}

int ts_bench_engine_rows(ts_bench *b, const ts_engine *resolved, ts_bench_row_fn run, void *ctx, int *worst) {
    int n = b->o->nengines;
    for (int q = 0; q < ts_bench_npasses(b) * n; q++) {
        int e = q % n;
        if (e == 0 && ts_bench_use_pass(b, q / n) < 0) return ts_error_last()->code;
        ts_bench_row *row = ts_bench_engine_row(b, e);
        if (!row) return TS_ERROR(TS_ERR_NOMEM, "out of host memory");
        char what[160] = "";
        if (run(ctx, row, e, q / n, what, sizeof what) >= 0) {
            ts_bench_row_done(row, worst);
            continue;
        }
        ts_bench_row_failed(b, row, what, worst);
        if (b->st && !ts_bench_row_on_host(b, resolved ? resolved[e] : row->engine) && ts_bench_stream_renew(b) < 0)
            return ts_error_last()->code;
    }
    return 0;
}

int ts_bench_has_engine(const ts_bench_opts *o, ts_engine e) {
    for (int i = 0; i < o->nengines; i++)
        if (o->engines[i] == e) return 1;
    return 0;
}
