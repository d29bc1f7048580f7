// ts_bench_rows.c: the rows of the benchmark harness (ts_bench.h): rates, ratios, verdicts, table cells, results JSON.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/ts_error.h"
#include "faces/cli/ts_bench.h"
#include "faces/cli/ts_cli.h"
#include "faces/cli/ts_cli_opts.h"

// ---------------------------------------------------------------- rows

void *ts_bench_new_row(ts_bench *b) {
    if (b->nrows == b->caprows) {
        int cap = b->caprows ? 2 * b->caprows : 64;
        void *r = realloc(b->rows, b->row_size * (size_t)cap);
        if (!r) return NULL;
        b->rows = r, b->caprows = cap;
    }
    ts_bench_row *r = (ts_bench_row *)((char *)b->rows + b->row_size * (size_t)b->nrows++);
    memset(r, 0, b->row_size);
    r->error = r->bound = NAN;
    return r;
}

static ts_bench_row *row_at(const ts_bench *b, int i) { return (ts_bench_row *)((char *)b->rows + b->row_size * (size_t)i); }

void ts_bench_set_rates(ts_bench_row *r, double flops, double *sec) {
    r->sec = ts_stats_of(sec, (size_t)r->reps);
    r->tf_med = flops / r->sec.median * 1e-12;
    r->tf_min = flops / r->sec.max * 1e-12;
    r->tf_max = flops / r->sec.min * 1e-12;
}

void ts_bench_set_ratios(ts_bench *b, int first) {
    const ts_bench_row *base = row_at(b, first);
    for (int i = first; i < b->nrows; i++) {
        ts_bench_row *r = row_at(b, i);
        if ((b->o->nengines > 1 || b->o->ncounts > 1) && !base->failed && !r->failed && base->tf_med > 0) r->ratio = r->tf_med / base->tf_med;
    }
}

int ts_bench_row_tiles(ts_bench *b, ts_bench_row *r, const ts_tiles_stats *last, const char *path) {
    r->has_tiles = 1, r->tiles = *last;
    return path ? ts_tiles_trace_write(b->tiles, path) : 0;
}

void ts_bench_print_rows(ts_bench *b, int first, void (*print)(void *ctx, void *row), void *ctx) {
    ts_bench_set_ratios(b, first);
    for (int i = first; i < b->nrows; i++) {
        ts_bench_progress_clear(b);
        print(ctx, (char *)b->rows + b->row_size * (size_t)i);
    }
    fflush(b->out);
}

void ts_bench_row_failed(ts_bench *b, ts_bench_row *r, const char *what, int *worst) {
    r->failed = 1;
    ts_bench_progress_clear(b);
    ts_cli_errorf(b->o->cmd, "%s: %s", what, ts_error_string());
    ts_error_clear();
    if (*worst < TS_EXIT_RUNTIME) *worst = TS_EXIT_RUNTIME;
}

void ts_bench_row_done(const ts_bench_row *r, int *worst) {
    if (r->verified && !r->passed && *worst < TS_EXIT_CHECK) *worst = TS_EXIT_CHECK;
}

const char *ts_bench_check_word(const ts_bench_row *r) {
    return r->failed ? "ERROR" : !r->verified ? "SKIPPED" : r->passed ? "PASS" : "FAIL";
}

int ts_bench_row_hidden(const ts_bench *b, const ts_bench_row *r) {
    return b->o->verbosity < 0 && (r->passed || !r->verified) && !r->failed;
}

// ---------------------------------------------------------------- output

// Engine tiles: what the tile runtime did in the row's last timed run, under the row.
void ts_bench_print_tiles_stats(ts_bench *b, const ts_tiles_stats *t) {
    char per[160] = "";
    size_t at = 0;
    for (int d = 0; d < t->ndev && at < sizeof per - 16; d++)
        at += (size_t)snprintf(per + at, sizeof per - at, "%s%lld", d ? "," : "", (long long)t->tiles_dev[d]);
    fprintf(b->out, "  tiles: T=%lld, %lld tiles: devices %s, cpu %lld (%.1f%%); cache hits %lld, misses %lld "
                    "(peer %lld); H2D %.1f MiB (%.1f without reuse), D2H %.1f MiB, P2P %.1f MiB; steals %lld\n",
            (long long)t->tile, (long long)t->tiles, per[0] ? per : "-", (long long)t->tiles_cpu, 100 * t->cpu_share,
            (long long)t->cache_hits, (long long)t->cache_misses, (long long)t->peer_fetches, t->bytes_h2d / 1048576.0,
            t->bytes_h2d_noreuse / 1048576.0, t->bytes_d2h / 1048576.0, t->bytes_p2p / 1048576.0,
            (long long)t->steals);
    char planned[32] = "-";
    if (t->cpu_share_planned >= 0) snprintf(planned, sizeof planned, "%.1f%%", 100 * t->cpu_share_planned);
    fprintf(b->out, "  tiles: cpu %s, planned share %s, cpu steals %lld; %.1f GFLOP/s devices, %.1f cpu; "
                    "failed devices %d, re-run tiles %lld\n",
            t->cpu_mode ? t->cpu_mode : "-", planned, (long long)t->cpu_steals, t->dev_gflops, t->cpu_gflops,
            t->devices_failed, (long long)t->reruns);
}


int ts_bench_write_json(ts_bench *b, void (*write)(ts_bench *b, ts_json *j)) {
    FILE *f = ts_cli_json_fopen(b->o->cmd, b->o->json);
    if (!f) return -1;
    ts_json *j = ts_json_open_file(f);
    write(b, j);
    int bad = ts_json_close(j) < 0;
    return ts_cli_json_fclose(b->o->cmd, b->o->json, f) < 0 || bad ? -1 : 0;
}

int ts_bench_finish(ts_bench *b, void (*write)(ts_bench *b, ts_json *j), int rc, int worst) {
    if (b->o->json && ts_bench_write_json(b, write) < 0 && !rc) rc = TS_EXIT_RUNTIME;
    return rc ? rc : worst;
}

void ts_bench_json_common(const ts_bench *b, ts_json *j, const ts_bench_row *r) {
    if (r->engine == TS_ENGINE_CUBLASXT) ts_json_int(j, "xt_block", r->xt_block);
    if (r->ndev > 0) ts_json_int(j, "devices", r->ndev);
    ts_json_int(j, "warmup", b->o->warmup);
}

void ts_bench_corrupt(char prec, void *C, int64_t idx) {
    if (prec == 's' || prec == 'c') ((float *)C)[idx * (prec == 'c' ? 2 : 1)] += 1e6f;
    else ((double *)C)[idx * (prec == 'z' ? 2 : 1)] += 1e6;
}

void ts_bench_print_tiles_brief(ts_bench *b, const ts_tiles_stats *t) {
    fprintf(b->out, "  tiles: T=%lld, %lld tiles, cpu %lld (%.1f%%); cache hits %lld, misses %lld; H2D %.1f MiB, "
                    "D2H %.1f MiB, P2P %.1f MiB; steals %lld\n",
            (long long)t->tile, (long long)t->tiles, (long long)t->tiles_cpu, 100 * t->cpu_share,
            (long long)t->cache_hits, (long long)t->cache_misses, t->bytes_h2d / 1048576.0, t->bytes_d2h / 1048576.0,
            t->bytes_p2p / 1048576.0, (long long)t->steals);
}

void ts_bench_row_cells(const ts_bench *b, const ts_bench_row *r, ts_engine requested, const char *bound_fmt,
                        ts_bench_cells *c) {
    char *num[] = {c->med, c->min, c->max, c->tf, c->ratio, c->error, c->bound};
    for (size_t q = 0; q < sizeof num / sizeof num[0]; q++) strcpy(num[q], "-");
    c->check = ts_bench_check_word(r);
    if (requested == TS_ENGINE_AUTO) snprintf(c->engine, sizeof c->engine, "auto:%s", ts_engine_name(r->engine));
    else if (r->engine == TS_ENGINE_CUBLASXT) snprintf(c->engine, sizeof c->engine, "cublasxt:%d", r->xt_block);
    else snprintf(c->engine, sizeof c->engine, "%s", ts_engines_name(r->engine));
    size_t at = strlen(c->engine);
    if (b->o->ncounts > 0 && r->ndev > 0) // --devices: the count after the engine
        snprintf(c->engine + at, sizeof c->engine - at, "/%d", r->ndev);
    if (r->failed) return;
    snprintf(c->med, sizeof c->med, "%.3f", r->sec.median * 1e3);
    snprintf(c->min, sizeof c->min, "%.3f", r->sec.min * 1e3);
    snprintf(c->max, sizeof c->max, "%.3f", r->sec.max * 1e3);
    snprintf(c->tf, sizeof c->tf, "%.3f", r->tf_med);
    if (r->ratio > 0) snprintf(c->ratio, sizeof c->ratio, "%.2fx", r->ratio);
    if (!r->verified) return;
    snprintf(c->error, sizeof c->error, "%.2e", r->error);
    snprintf(c->bound, sizeof c->bound, bound_fmt, r->bound);
}

void ts_bench_json_entry_begin(ts_json *j, const ts_bench_row *r, const char *bench, char prec, const char *where) {
    ts_result_common rc = {
        .bench = bench, .engine = ts_engines_name(r->engine), .precision = prec, .where = where, .reps = r->reps,
        .sec_median = r->sec.median, .sec_min = r->sec.min, .sec_max = r->sec.max,
        .tf_median = r->tf_med, .tf_min = r->tf_min, .tf_max = r->tf_max,
        .verified = r->verified, .error = r->verified ? r->error : NAN, .bound = r->verified ? r->bound : NAN,
    };
    ts_results_entry_begin(j, &rc);
}

void ts_bench_json_scalars(ts_json *j, const ts_bench_opts *o, int cplx) {
    if (!cplx) {
        ts_json_num(j, "alpha", o->alpha[0]);
        ts_json_num(j, "beta", o->beta[0]);
        return;
    }
    const char *name[2] = {"alpha", "beta"};
    const double *v[2] = {o->alpha, o->beta};
    for (int q = 0; q < 2; q++) {
        ts_json_begin_array(j, name[q]);
        ts_json_num(j, NULL, v[q][0]);
        ts_json_num(j, NULL, v[q][1]);
        ts_json_end_array(j);
    }
}
