// cmd_burn.c: `tessera burn`: GPU torture and health test: continuous ABFT-checked DGEMM with telemetry, summary, JSON and plot.
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/burn/ts_burn.h"
#include "core/ts_env.h"
#include "core/ts_error.h"
#include "core/ts_json.h"
#include "core/ts_log.h"
#include "core/ts_progress.h"
#include "core/ts_timer.h"
#include "faces/cli/ts_cli.h"
#include "faces/cli/ts_cli_opts.h"
#include "runtime/ts_engines.h"

#define CMD "burn"

// The one piece of process-wide mutable state: set by the SIGINT handler (async-signal-safe),
// read by the monitoring loop through ts_burn_opts.stop. Only ts_cmd_burn installs the handler.
static volatile sig_atomic_t burn_interrupted;

static void on_sigint(int sig) {
    (void)sig;
    burn_interrupted = 1;
}

typedef struct {
    ts_burn_opts b;
    int all_devices, device;
    const char *json, *plot;
    int verbosity;
} burn_cli;

static void usage(FILE *f) {
    fprintf(f,
        "usage: tessera burn [options]\n"
        "  --time D             how long to burn after the plain phase (10m, 90s, 1h; default 60s)\n"
        "  --size N             the checked DGEMM is N x N x N: (N-2) x (N-2) data plus two checksum rows\n"
        "                       and columns (default %d on a GPU, %d on simulated devices)\n"
        "  --engine E           auto|cublas|tessera (GPU), ref|cpu (simulated); default auto\n"
        "  --device I|all       which devices (default all)\n"
        "  --recompute-every N  also recompute every Nth product with a second engine and compare\n"
        "  --mean M, --variance V   gaussian data (default 0 and 25: as hot as HPL)\n"
        "  --streams S          streams per device (default %d)\n"
        "  --plain-time D       length of the unchecked reference phase (default 10%% of --time, 0.5-10 s)\n"
        "  --seed S             data seed (default 1)\n"
        "  --json FILE          results document ('-' = stdout)\n"
        "  --plot FILE.svg      rate and temperature over time\n"
        "  -q / -v              quieter / more verbose\n"
        "Ctrl-C stops early and prints the summary.\n"
        "Prints a verdict per device (GPU i: OK, FAULTY (n errors), LOST, FAILED).\n"
        "exit: 0 every device OK, 1 a device FAULTY (a checked product was wrong), 2 bad input (options,\n"
        "      output paths, TESSERA_* values, an engine the devices do not run), 3 runtime failure\n"
        "      (a device lost or failing, no device)\n",
        TS_BURN_DEFAULT_SIZE_CUDA, TS_BURN_DEFAULT_SIZE_SIM, TS_BURN_STREAMS);
}

// 0 ok, -1 --help printed, TS_EXIT_USAGE on error.
static int parse_args(int argc, char **argv, burn_cli *c) {
    memset(c, 0, sizeof *c);
    ts_burn_opts_default(&c->b, TS_BACKEND_SIM);
    c->b.size = 0; // per backend, once the devices are open
    c->all_devices = 1;
    for (int i = 1; i < argc; i++) {
        const char *v = NULL, *a = argv[i];
        int r;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return -1;
        }
        if (!strcmp(a, "-q")) { c->verbosity = -1; continue; }
        if (!strcmp(a, "-v")) { c->verbosity = 1; continue; }
#define VALUE(name) ((r = ts_cli_value_opt(CMD, argc, argv, &i, name, NULL, &v)) != 0)
        if (VALUE("--time")) {
            if (r < 0) return TS_EXIT_USAGE;
            if (ts_parse_duration(v, "--time", &c->b.seconds) < 0 || !(c->b.seconds > 0))
                return ts_cli_usage_error(CMD, "--time: '%s' is not a positive duration (e.g. 10m, 90s)", v);
        } else if (VALUE("--plain-time")) {
            if (r < 0) return TS_EXIT_USAGE;
            if (ts_parse_duration(v, "--plain-time", &c->b.plain_seconds) < 0 || c->b.plain_seconds < 0)
                return ts_cli_usage_error(CMD, "--plain-time: '%s' is not a duration", v);
        } else if (VALUE("--size")) {
            if (r < 0 || ts_cli_i64(CMD, "--size", v, 3, &c->b.size) < 0) return TS_EXIT_USAGE;
            if (c->b.size > 65535) return ts_cli_usage_error(CMD, "--size: %s is too large (at most 65535)", v);
        } else if (VALUE("--engine")) {
            if (r < 0) return TS_EXIT_USAGE;
            if (ts_engines_parse(v, &c->b.engine) < 0) return ts_cli_usage_error(CMD, "%s", ts_error_last()->message);
            if (ts_engine_is_set_wide(c->b.engine))
                return ts_cli_usage_error(CMD, "--engine %s: burn runs on device-resident operands",
                                          ts_engines_name(c->b.engine));
        } else if (VALUE("--device")) {
            if (r < 0) return TS_EXIT_USAGE;
            if (!strcmp(v, "all")) c->all_devices = 1;
            else if (ts_cli_int(CMD, "--device", v, 0, &c->device) < 0) return TS_EXIT_USAGE;
            else c->all_devices = 0;
        } else if (VALUE("--recompute-every")) {
            if (r < 0 || ts_cli_i64(CMD, "--recompute-every", v, 1, &c->b.recompute_every) < 0) return TS_EXIT_USAGE;
        } else if (VALUE("--mean")) {
            if (r < 0 || ts_cli_double(CMD, "--mean", v, &c->b.mean) < 0) return TS_EXIT_USAGE;
        } else if (VALUE("--variance")) {
            if (r < 0 || ts_cli_double(CMD, "--variance", v, &c->b.variance) < 0) return TS_EXIT_USAGE;
            if (!(c->b.variance > 0) || !isfinite(c->b.variance))
                return ts_cli_usage_error(CMD, "--variance: '%s' must be positive", v);
        } else if (VALUE("--streams")) {
            if (r < 0 || ts_cli_int(CMD, "--streams", v, 1, &c->b.streams) < 0) return TS_EXIT_USAGE;
            if (c->b.streams > 8) return ts_cli_usage_error(CMD, "--streams: at most 8");
        } else if (VALUE("--seed")) {
            int64_t s;
            if (r < 0 || ts_cli_i64(CMD, "--seed", v, 0, &s) < 0) return TS_EXIT_USAGE;
            c->b.seed = (uint64_t)s;
        } else if (VALUE("--json")) {
            if (r < 0) return TS_EXIT_USAGE;
            c->json = v;
        } else if (VALUE("--plot")) {
            if (r < 0) return TS_EXIT_USAGE;
            c->plot = v;
        } else {
            return ts_cli_usage_error(CMD, "unknown option '%s' (tessera burn --help)", a);
        }
#undef VALUE
    }
    if (!isfinite(c->b.mean)) return ts_cli_usage_error(CMD, "--mean must be finite");
    return 0;
}

// ---------------------------------------------------------------- output

typedef struct {
    ts_progress prog;
    int on;
    double total;
} live_ctx;

static void fmt_temp(double c, char *buf, size_t len) {
    if (isfinite(c)) snprintf(buf, len, "%.0fC", c);
    else snprintf(buf, len, "-");
}

// One live line for all devices: rate, temperature, SM clock and power of the last interval.
static void on_sample(void *ctx, const ts_burn_dev_report *devs, int ndev, double elapsed) {
    live_ctx *l = ctx;
    if (!l->on) return;
    char line[1024];
    size_t len = 0;
    line[0] = 0;
    for (int i = 0; i < ndev && len < sizeof line - 128; i++) {
        const ts_burn_dev_report *d = &devs[i];
        const ts_burn_sample *s = d->nsamples ? &d->samples[d->nsamples - 1] : NULL;
        char t[16];
        fmt_temp(s ? s->temp_c : NAN, t, sizeof t);
        if (d->status)
            len += snprintf(line + len, sizeof line - len, "%sd%d LOST", i ? " | " : "", d->ordinal);
        else if (!s)
            len += snprintf(line + len, sizeof line - len, "%sd%d plain %.3g TF", i ? " | " : "", d->ordinal,
                            d->plain_tflops);
        else
            len += snprintf(line + len, sizeof line - len, "%sd%d %.3g TF %s err %lld", i ? " | " : "", d->ordinal,
                            s->tflops, t, (long long)d->errors);
        if (s && isfinite(s->sm_mhz) && len < sizeof line - 64)
            len += snprintf(line + len, sizeof line - len, " %.0fMHz %.0fW", s->sm_mhz, s->power_w);
    }
    ts_progress_update(&l->prog, elapsed < l->total ? elapsed : l->total, line);
}

static const char *loc_kind(const ts_burn_location *l, char *buf, size_t len) {
    if (l->bad_rows == 0 && l->bad_cols == 0)
        snprintf(buf, len, "no line of C disagrees when its differences are read again (the check's result "
                           "was corrupted on its way)");
    else if (l->bad_rows <= 1 && l->bad_cols <= 1)
        snprintf(buf, len, "element (%lld, %lld)", (long long)l->row, (long long)l->col);
    else if (l->bad_rows == 0)
        snprintf(buf, len, "row %lld (%lld columns wrong: a corrupted row of A; worst element (%lld, %lld))",
                 (long long)l->row, (long long)l->bad_cols, (long long)l->row, (long long)l->col);
    else if (l->bad_cols == 0)
        snprintf(buf, len, "column %lld (%lld rows wrong: a corrupted column of B; worst element (%lld, %lld))",
                 (long long)l->col, (long long)l->bad_rows, (long long)l->row, (long long)l->col);
    else
        snprintf(buf, len, "%lld rows x %lld columns wrong, worst element (%lld, %lld)", (long long)l->bad_rows,
                 (long long)l->bad_cols, (long long)l->row, (long long)l->col);
    return buf;
}

// "row 5, column 33", "column 33" (the other index unknown), for the largest deviation of a passing check.
static const char *where_text(const ts_burn_location *l, char *buf, size_t len) {
    if (l->row >= 0 && l->col >= 0) snprintf(buf, len, "row %lld, column %lld", (long long)l->row, (long long)l->col);
    else if (l->row >= 0) snprintf(buf, len, "row %lld", (long long)l->row);
    else if (l->col >= 0) snprintf(buf, len, "column %lld", (long long)l->col);
    else snprintf(buf, len, "nowhere");
    return buf;
}

static const char *verdict_text(const ts_burn_dev_report *r, char *buf, size_t len) {
    ts_burn_verdict v = ts_burn_verdict_of(r);
    if (v == TS_BURN_FAULTY) snprintf(buf, len, "FAULTY (%lld errors)", (long long)r->errors);
    else snprintf(buf, len, "%s", ts_burn_verdict_name(v));
    return buf;
}

static void print_summary(FILE *out, const ts_burn_dev_report *r, int64_t size) {
    char t[16];
    fmt_temp(r->max_temp_c, t, sizeof t);
    fprintf(out, "device %d (%s), %s, N=%lld: %.4g TFLOP/s sustained over %.1f s, %lld iterations",
            r->ordinal, r->name, ts_engine_name(r->engine), (long long)size, r->tflops, r->seconds,
            (long long)r->iters);
    if (r->plain_tflops > 0)
        fprintf(out, "; plain %.4g TFLOP/s (checked/plain %.3f)", r->plain_tflops, r->tflops / r->plain_tflops);
    fprintf(out, "\n  errors %lld, max checksum error %.3g of the bound", (long long)r->errors, r->max_ratio);
    if (r->recomputes) fprintf(out, ", %lld recomputations (%s)", (long long)r->recomputes,
                               ts_engine_name(r->recompute_engine));
    if (r->telemetry)
        fprintf(out, ", max temperature %s, throttled %.0f s, ECC corrected +%llu uncorrected +%llu\n", t,
                r->throttled_s, r->ecc_corrected - r->ecc_corrected0, r->ecc_uncorrected - r->ecc_uncorrected0);
    else
        fprintf(out, ", telemetry unavailable\n");
    for (int e = 0; e < r->nreported; e++) {
        const ts_burn_error *x = &r->reported[e];
        char buf[160];
        fprintf(out, "  ERROR device %d iteration %lld (t=%.2f s)%s: %s, magnitude %.6g (%.3g x the bound)\n",
                r->ordinal, (long long)x->iter, x->t, x->recompute ? " [recomputation]" : "",
                loc_kind(&x->loc, buf, sizeof buf), x->loc.magnitude, x->loc.ratio);
    }
    if (r->errors > r->nreported)
        fprintf(out, "  ... %lld more failed iterations\n", (long long)(r->errors - r->nreported));
    if (r->errors == 0 && r->worst_iter > 0) {
        // Nothing above the bound: say what the largest deviation was, and that it is within rounding.
        char w[96];
        fprintf(out, "  within rounding: largest deviation %.3g of the bound at %s, magnitude %.3g (iteration %lld); "
                     "not an error: one element off by more than %.3g is always caught\n",
                r->worst.ratio, where_text(&r->worst, w, sizeof w), r->worst.magnitude, (long long)r->worst_iter,
                r->element_threshold * (1 + fmin(r->max_ratio, 1.0)));
    }
    if (r->status == TS_ERR_DEVICE_LOST) fprintf(out, "  LOST device %d: %s\n", r->ordinal, r->message);
    else if (r->status) fprintf(out, "  FAILED device %d: %s\n", r->ordinal, r->message);
}

static void write_location(ts_json *j, const char *key, const ts_burn_location *l, int64_t iter) {
    ts_json_begin_object(j, key);
    ts_json_int(j, "iteration", iter);
    ts_json_int(j, "row", l->row);
    ts_json_int(j, "col", l->col);
    ts_json_num(j, "magnitude", l->magnitude);
    ts_json_num(j, "ratio", l->ratio);
    ts_json_end_object(j);
}

static void write_json(ts_json *j, ts_devset *set, const burn_cli *c, const ts_burn_dev_report *reps, int n,
                       const char *overall, int exit_code) {
    ts_results_begin(j, "tessera burn", 1, ts_devset_json, set);
    for (int i = 0; i < n; i++) {
        const ts_burn_dev_report *r = &reps[i];
        double *tf = malloc((size_t)(r->nsamples ? r->nsamples : 1) * sizeof(double));
        int nt = 0;
        for (int s = 0; s < r->nsamples && tf; s++)
            if (r->samples[s].tflops > 0) tf[nt++] = r->samples[s].tflops;
        ts_stats st = {r->tflops, r->tflops, r->tflops, r->tflops};
        if (tf && nt) st = ts_stats_of(tf, (size_t)nt);
        free(tf);
        ts_result_common rc = {.bench = "burn", .engine = ts_engine_name(r->engine), .precision = 'd',
                               .where = "device", .reps = (int)r->iters,
                               .sec_median = NAN, .sec_min = NAN, .sec_max = NAN,
                               .tf_median = st.median, .tf_min = st.min, .tf_max = st.max,
                               .verified = 1, .error = r->max_ratio, .bound = 1.0};
        if (r->iters > 0) {
            double sec = r->seconds / (double)r->iters;
            rc.sec_median = rc.sec_min = rc.sec_max = sec;
        }
        ts_results_entry_begin(j, &rc);
        ts_json_begin_object(j, "shape");
        ts_json_int(j, "m", c->b.size);
        ts_json_int(j, "n", c->b.size);
        ts_json_int(j, "k", c->b.size);
        ts_json_str(j, "transa", "N");
        ts_json_str(j, "transb", "N");
        ts_json_end_object(j);
        ts_json_begin_object(j, "extra");
        ts_json_int(j, "device", r->ordinal);
        ts_burn_verdict v = ts_burn_verdict_of(r);
        char lower[16];
        const char *vn = ts_burn_verdict_name(v);
        size_t l = 0;
        for (; vn[l] && l < sizeof lower - 1; l++) lower[l] = (char)tolower((unsigned char)vn[l]);
        lower[l] = 0;
        ts_json_str(j, "verdict", vn);
        ts_json_bool(j, "passed", v == TS_BURN_OK);
        ts_json_str(j, "status", lower);
        if (r->status) ts_json_str(j, "message", r->message);
        ts_json_num(j, "seconds", r->seconds);
        ts_json_int(j, "iterations", r->iters);
        ts_json_int(j, "errors", r->errors);
        ts_json_num(j, "plain_tflops", r->plain_tflops);
        ts_json_num(j, "checked_over_plain", r->plain_tflops > 0 ? r->tflops / r->plain_tflops : NAN);
        ts_json_num(j, "sustained_tflops", r->tflops);
        ts_json_num(j, "max_temp_c", r->max_temp_c);
        ts_json_num(j, "throttled_s", r->throttled_s);
        ts_json_bool(j, "telemetry", r->telemetry);
        if (r->telemetry) {
            ts_json_int(j, "ecc_corrected", (int64_t)(r->ecc_corrected - r->ecc_corrected0));
            ts_json_int(j, "ecc_uncorrected", (int64_t)(r->ecc_uncorrected - r->ecc_uncorrected0));
        }
        ts_json_num(j, "variance", c->b.variance);
        ts_json_num(j, "mean", c->b.mean);
        ts_json_int(j, "recomputations", r->recomputes);
        // Any one element of C off by more than this is caught (the bound's threshold, docs/burn.md).
        ts_json_num(j, "element_threshold", r->element_threshold);
        ts_json_num(j, "element_threshold_min", r->element_threshold_lo);
        if (r->worst_iter > 0 && r->errors == 0) write_location(j, "max_deviation", &r->worst, r->worst_iter);
        else ts_json_null(j, "max_deviation");
        ts_json_begin_array(j, "error_list");
        for (int e = 0; e < r->nreported; e++) {
            const ts_burn_error *x = &r->reported[e];
            ts_json_begin_object(j, NULL);
            ts_json_int(j, "iteration", x->iter);
            ts_json_num(j, "t", x->t);
            ts_json_bool(j, "recompute", x->recompute);
            ts_json_int(j, "row", x->loc.row);
            ts_json_int(j, "col", x->loc.col);
            ts_json_num(j, "magnitude", x->loc.magnitude);
            ts_json_num(j, "ratio", x->loc.ratio);
            ts_json_int(j, "bad_rows", x->loc.bad_rows);
            ts_json_int(j, "bad_cols", x->loc.bad_cols);
            ts_json_end_object(j);
        }
        ts_json_end_array(j);
        ts_json_begin_array(j, "samples");
        for (int s = 0; s < r->nsamples; s++) {
            const ts_burn_sample *x = &r->samples[s];
            ts_json_begin_object(j, NULL);
            ts_json_num(j, "t", x->t);
            ts_json_num(j, "tflops", x->tflops);
            ts_json_num(j, "t_from", x->t_from);
            ts_json_num(j, "t_to", x->t_to);
            ts_json_int(j, "errors", x->errors);
            ts_json_num(j, "temp_c", x->temp_c);
            ts_json_num(j, "sm_mhz", x->sm_mhz);
            ts_json_num(j, "mem_mhz", x->mem_mhz);
            ts_json_num(j, "power_w", x->power_w);
            ts_json_int(j, "throttle", (int64_t)x->throttle);
            ts_json_end_object(j);
        }
        ts_json_end_array(j);
        ts_json_end_object(j);
        ts_results_entry_end(j);
    }
    // ts_results_end, with the run's overall verdict beside "results".
    ts_json_end_array(j);
    int ok = 0;
    for (int i = 0; i < n; i++) ok += ts_burn_verdict_of(&reps[i]) == TS_BURN_OK;
    ts_json_begin_object(j, "burn");
    ts_json_str(j, "verdict", overall);
    ts_json_bool(j, "passed", exit_code == TS_EXIT_OK);
    ts_json_int(j, "exit_code", exit_code);
    ts_json_int(j, "devices", n);
    ts_json_int(j, "devices_ok", ok);
    ts_json_end_object(j);
    ts_json_end_object(j);
}

static int write_outputs(const burn_cli *c, ts_devset *set, const ts_burn_dev_report *reps, int n,
                         const char *overall, int exit_code) {
    int rc = 0;
    if (c->json) {
        FILE *f = ts_cli_json_fopen(CMD, c->json);
        if (!f) return -1;
        ts_json *j = ts_json_open_file(f);
        if (!j) rc = -1;
        else write_json(j, set, c, reps, n, overall, exit_code);
        if ((j && ts_json_close(j) < 0) || ts_cli_json_fclose(CMD, c->json, f) < 0) rc = -1;
    }
    if (c->plot) {
        FILE *f = fopen(c->plot, "w");
        if (!f) {
            ts_cli_errorf(CMD, "--plot: cannot write '%s': %s", c->plot, strerror(errno));
            return -1;
        }
        double seconds = 0;
        for (int i = 0; i < n; i++) seconds = fmax(seconds, reps[i].seconds);
        char title[160];
        snprintf(title, sizeof title, "tessera burn, N=%lld, %s, %.4g s checked: %s", (long long)c->b.size,
                 n ? ts_engine_name(reps[0].engine) : "", seconds, overall);
        int prc = ts_burn_plot_svg(f, reps, n, seconds, title);
        if (fclose(f) != 0 || prc < 0) {
            ts_cli_errorf(CMD, "--plot: error writing '%s'", c->plot);
            rc = -1;
        }
    }
    return rc;
}

static int check_inputs(const burn_cli *c) {
    if (c->json && ts_cli_check_output(CMD, "--json", c->json)) return TS_EXIT_USAGE;
    if (c->plot && ts_cli_check_output(CMD, "--plot", c->plot)) return TS_EXIT_USAGE;
    if (c->json && c->plot && !strcmp(c->json, c->plot))
        return ts_cli_usage_error(CMD, "--json and --plot name the same file '%s'", c->json);
    return 0;
}

// The overall word and exit code: FAIL (1) when a device is FAULTY, ERROR (3) when one was lost, failed
// or left untested, PASS (0) when every device is OK.
static int overall_of(const ts_burn_dev_report *reps, int n, const char **word) {
    int faulty = 0, broken = 0;
    for (int i = 0; i < n; i++) {
        ts_burn_verdict v = ts_burn_verdict_of(&reps[i]);
        faulty |= v == TS_BURN_FAULTY;
        broken |= v != TS_BURN_FAULTY && v != TS_BURN_OK;
    }
    *word = faulty ? "FAIL" : broken ? "ERROR" : "PASS";
    return faulty ? TS_EXIT_CHECK : broken ? TS_EXIT_RUNTIME : TS_EXIT_OK;
}

// "GPU i: VERDICT" per device, then "burn: WORD: ..." naming every device that is not OK.
static void print_verdicts(FILE *out, const ts_burn_dev_report *reps, int n, const char *word) {
    int ok = 0;
    int64_t errors = 0;
    char v[64];
    for (int i = 0; i < n; i++) {
        fprintf(out, "GPU %d: %s\n", reps[i].ordinal, verdict_text(&reps[i], v, sizeof v));
        ok += ts_burn_verdict_of(&reps[i]) == TS_BURN_OK;
        errors += reps[i].errors;
    }
    fprintf(out, "burn: %s: %d of %d device(s) OK", word, ok, n);
    const char *sep = ", ";
    for (int i = 0; i < n; i++)
        if (ts_burn_verdict_of(&reps[i]) != TS_BURN_OK) {
            fprintf(out, "%sGPU %d %s", sep, reps[i].ordinal, verdict_text(&reps[i], v, sizeof v));
            sep = ", ";
        }
    fprintf(out, "; %lld error(s)\n", (long long)errors);
}

int ts_cmd_burn(int argc, char **argv) {
    burn_cli c;
    int rc = parse_args(argc, argv, &c);
    if (rc == -1) return TS_EXIT_OK;
    if (rc) return rc;
    if ((rc = check_inputs(&c))) return rc;
    int env_streams, erc = ts_env_int("TESSERA_BURN_STREAMS", &env_streams);
    if (erc < 0) return ts_cli_usage_error(CMD, "%s", ts_error_last()->message);
    if (erc == 1 && (env_streams < 1 || env_streams > 8))
        return ts_cli_usage_error(CMD, "TESSERA_BURN_STREAMS=%d: must be 1 to 8", env_streams);
    if (erc == 1) c.b.streams = env_streams;
    ts_cli_set_verbosity(c.verbosity);
    ts_devset *set = NULL;
    if ((rc = ts_cli_open_devices(CMD, &set)) < 0) return ts_cli_exit_of(rc);
    int count = ts_devset_count(set);
    if (count == 0) {
        ts_cli_errorf(CMD, "no device to burn (no GPU visible; TESSERA_SIM_DEVICES=N gives simulated ones)");
        ts_devset_close(set);
        return TS_EXIT_RUNTIME;
    }
    if (!c.all_devices && c.device >= count) {
        ts_devset_close(set);
        return ts_cli_usage_error(CMD, "--device %d: there are %d devices (0..%d)", c.device, count, count - 1);
    }
    ts_backend be = ts_devset_backend(set);
    if (c.b.size == 0)
        c.b.size = be == TS_BACKEND_CUDA ? TS_BURN_DEFAULT_SIZE_CUDA : TS_BURN_DEFAULT_SIZE_SIM;
    int devices[TS_MAX_DEVICES], ndev = 0;
    for (int i = 0; i < count; i++)
        if (c.all_devices || i == c.device) devices[ndev++] = i;
    if (ts_burn_engine_check(set, devices, ndev, c.b.engine) < 0) {
        ts_cli_errorf(CMD, "%s", ts_error_last()->message);
        ts_devset_close(set);
        return TS_EXIT_USAGE;
    }

    FILE *out = stdout;
    live_ctx live = {.total = c.b.seconds};
    ts_progress_init(&live.prog, stderr, "burn", c.b.seconds);
    live.on = c.verbosity >= 0 && live.prog.enabled;
    c.b.on_sample = on_sample;
    c.b.ctx = &live;
    burn_interrupted = 0;
    c.b.stop = &burn_interrupted;
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old);

    if (c.verbosity >= 0)
        fprintf(out, "burn: %d %s device(s), N=%lld, %g s, gaussian mean %g variance %g, %d streams, engine %s%s\n",
                ndev, ts_backend_name(be), (long long)c.b.size, c.b.seconds, c.b.mean, c.b.variance, c.b.streams,
                ts_engine_name(c.b.engine), c.b.recompute_every ? ", with recomputation" : "");
    fflush(out);
    ts_burn_dev_report *reps = calloc((size_t)ndev, sizeof *reps);
    int abandoned = 0;
    if (!reps) rc = TS_ERROR(TS_ERR_NOMEM, "out of host memory");
    else rc = ts_burn(set, devices, ndev, &c.b, reps, &abandoned);
    sigaction(SIGINT, &old, NULL);
    const char *word = "ERROR";
    int exit_code = rc < 0 ? TS_EXIT_RUNTIME : overall_of(reps, ndev, &word);
    // The final progress line says 100% only for a run that went its whole time on every device;
    // otherwise a live line on the terminal is just cleared.
    if (live.on) {
        if (exit_code != TS_EXIT_RUNTIME && !burn_interrupted) ts_progress_finish(&live.prog, NULL);
        else if (live.prog.tty && live.prog.drawn) fprintf(live.prog.out, "\r\033[K"), fflush(live.prog.out);
    }
    if (rc < 0) {
        ts_cli_errorf(CMD, "%s", ts_error_last()->message);
        free(reps);
        if (!abandoned) ts_devset_close(set);
        return TS_EXIT_RUNTIME;
    }
    if (burn_interrupted) fprintf(out, "burn: interrupted, summary of the time run\n");
    for (int i = 0; i < ndev; i++) print_summary(out, &reps[i], c.b.size);
    print_verdicts(out, reps, ndev, word);
    fflush(out);
    if (write_outputs(&c, set, reps, ndev, word, exit_code) < 0 && exit_code == TS_EXIT_OK) exit_code = TS_EXIT_RUNTIME;
    ts_burn_reports_free(reps, ndev);
    free(reps);
    // A device the watchdog gave up on may never drain its queues: closing it could hang.
    if (!abandoned) ts_devset_close(set);
    return exit_code;
}
