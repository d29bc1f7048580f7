// ts_bench.c: the benchmark harness of `tessera gemm` and `tessera blas3` (ts_bench.h).
#include "faces/cli/ts_bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/ts_env.h"
#include "core/ts_error.h"
#include "core/ts_rng.h"
#include "faces/cli/ts_cli.h"
#include "faces/cli/ts_cli_opts.h"

// ---------------------------------------------------------------- options

void ts_bench_opts_init(ts_bench_opts *o, const char *cmd, const ts_engine *allowed, int nallowed) {
    memset(o, 0, sizeof *o);
    o->cmd = cmd, o->allowed = allowed, o->nallowed = nallowed;
    o->alpha[0] = 1, o->beta[0] = 1;
    o->verify = 1, o->seed = 1;
}

int ts_bench_dim(const char *cmd, const char *tok, const char *what, int64_t *out) {
    int64_t v;
    if (ts_parse_i64(tok, what, &v) < 0)
        return ts_cli_usage_error(cmd, "%s: '%s' is not a positive integer", what, tok);
    if (v <= 0) return ts_cli_usage_error(cmd, "%s: '%s' must be positive", what, tok);
    if (v > TS_BENCH_MAX_DIM)
        return ts_cli_usage_error(cmd, "%s: '%s' is too large (at most %lld)", what, tok, TS_BENCH_MAX_DIM);
    *out = v;
    return 0;
}

int ts_bench_size(const char *cmd, const char *s, int parts, const char *expect, int64_t d[3]) {
    char buf[128];
    if (strlen(s) >= sizeof buf) return ts_cli_usage_error(cmd, "size '%s' is malformed", s);
    strcpy(buf, s);
    char *part[4];
    int n = 0;
    for (char *p = buf, *x; n < 4; p = x + 1) {
        part[n++] = p;
        x = strchr(p, 'x');
        if (!x) break;
        *x = 0;
    }
    if (n != 1 && n != parts) return ts_cli_usage_error(cmd, "size '%s': expected %s", s, expect);
    char what[160];
    snprintf(what, sizeof what, "size '%s'", s);
    for (int i = 0; i < n; i++) // the items of a 3-part size are named by the size (gemm's messages)
        if (ts_bench_dim(cmd, part[i], n > 2 ? what : "size", &d[i])) return TS_EXIT_USAGE;
    for (int i = n; i < parts; i++) d[i] = d[0];
    return 0;
}

int ts_bench_choice(const char *cmd, const char *opt, const char *noun, const char *v, const char *a, const char *b) {
    if (!strcmp(v, a) || !strcmp(v, b)) return !strcmp(v, b);
    return ts_cli_usage_error(cmd, "%s: unknown %s '%s' (choose %s or %s)", opt, noun, v, a, b), -1;
}

int ts_bench_each_token(const char *cmd, void *ctx, const char *opt, const char *list, ts_bench_token_fn fn) {
    char buf[256];
    if (strlen(list) >= sizeof buf || !*list) return ts_cli_usage_error(cmd, "%s: '%s' is malformed", opt, list);
    strcpy(buf, list);
    char *save = NULL;
    int any = 0;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int rc = fn(ctx, opt, t);
        if (rc) return rc;
        any = 1;
    }
    return any ? 0 : ts_cli_usage_error(cmd, "%s: '%s' is malformed", opt, list);
}

int ts_bench_sweep(const char *cmd, const char *sweep, int64_t *vals, int max, int *n) {
    if (ts_parse_size_sweep(sweep, "--sweep", vals, max, n) < 0 || *n <= 0)
        return ts_cli_usage_error(cmd, "--sweep: '%s' is malformed (e.g. 1024:8192:x2, 1024:4096:1024 or 1024,2048)", sweep);
    for (int i = 0; i < *n; i++)
        if (vals[i] <= 0 || vals[i] > TS_BENCH_MAX_DIM)
            return ts_cli_usage_error(cmd, "--sweep: size %lld out of range in '%s'", (long long)vals[i], sweep);
    return 0;
}

int ts_bench_add_shape(ts_bench_opts *o, ts_bench_shape s) {
    if (o->nshapes >= o->max_shapes) return ts_cli_usage_error(o->cmd, "too many sizes (at most %d)", o->max_shapes);
    o->shapes[o->nshapes++] = s;
    return 0;
}

int ts_bench_shapes_finish(ts_bench_opts *o, const char *sweep, const char *const dims[3]) {
    if (sweep) {
        int64_t vals[TS_BENCH_MAX_SHAPES];
        int n = 0;
        if (ts_bench_sweep(o->cmd, sweep, vals, o->max_shapes, &n)) return TS_EXIT_USAGE;
        for (int i = 0; i < n; i++)
            if (ts_bench_add_shape(o, (ts_bench_shape){vals[i], vals[i], vals[i]})) return TS_EXIT_USAGE;
    }
    int64_t d[3] = {0, 0, 0};
    static const char *dn[3] = {"-m", "-n", "-k"};
    for (int i = 0; i < 3; i++)
        if (dims[i] && ts_bench_dim(o->cmd, dims[i], dn[i], &d[i])) return TS_EXIT_USAGE;
    if (!d[0] && !d[1] && !d[2]) return 0;
    if (o->nshapes == 0) { // -m/-n/-k alone: missing dimensions take the first one given
        int64_t first = d[0] ? d[0] : d[1] ? d[1] : d[2];
        return ts_bench_add_shape(o, (ts_bench_shape){d[0] ? d[0] : first, d[1] ? d[1] : first, d[2] ? d[2] : first});
    }
    for (int s = 0; s < o->nshapes; s++) {
        if (d[0]) o->shapes[s].m = d[0];
        if (d[1]) o->shapes[s].n = d[1];
        if (d[2]) o->shapes[s].k = d[2];
    }
    return 0;
}

const char *ts_bench_shape_text(const ts_bench_opts *o, ts_bench_shape s, char *buf, size_t len) {
    if (o->shape_parts > 2) snprintf(buf, len, "%lldx%lldx%lld", (long long)s.m, (long long)s.n, (long long)s.k);
    else snprintf(buf, len, "%lldx%lld", (long long)s.m, (long long)s.n);
    return buf;
}

static int prec_tok(void *ctx, const char *opt, const char *t) {
    ts_bench_opts *o = ctx;
    char c = (char)(t[0] | 0x20);
    if (strlen(t) != 1 || !strchr("sdcz", c))
        return ts_cli_usage_error(o->cmd, "%s: unknown precision '%s' (choose s, d, c or z)", opt, t);
    if (o->nprecs >= TS_BENCH_MAX_PRECS) return ts_cli_usage_error(o->cmd, "%s: too many precisions", opt);
    o->precs[o->nprecs++] = c;
    return 0;
}

static int engine_tok(void *ctx, const char *opt, const char *t) {
    ts_bench_opts *o = ctx;
    ts_engine e;
    int ok = ts_engines_parse(t, &e) == 0, allowed = 0;
    ts_error_clear();
    for (int i = 0; ok && i < o->nallowed; i++) allowed |= o->allowed[i] == e;
    if (!allowed) {
        char choices[160] = "";
        for (int i = 0, at = 0; i < o->nallowed; i++)
            at += snprintf(choices + at, sizeof choices - (size_t)at, "%s%s", i == 0 ? "" : i == o->nallowed - 1 ? " or " : ", ",
                           ts_engines_name(o->allowed[i]));
        return ts_cli_usage_error(o->cmd, "%s: unknown engine '%s' (choose %s)", opt, t, choices);
    }
    if (o->nengines >= TS_BENCH_MAX_ENGINES) return ts_cli_usage_error(o->cmd, "%s: too many engines", opt);
    o->engines[o->nengines++] = e;
    return 0;
}

// "re" or "re,im".
static int parse_scalar(const char *cmd, const char *opt, const char *s, double v[2]) {
    char buf[128];
    if (strlen(s) >= sizeof buf) return ts_cli_usage_error(cmd, "%s: '%s' is malformed", opt, s);
    strcpy(buf, s);
    char *comma = strchr(buf, ',');
    if (comma) *comma = 0;
    double re = 0, im = 0;
    if (ts_parse_double(buf, opt, &re) < 0 || !isfinite(re) ||
        (comma && (ts_parse_double(comma + 1, opt, &im) < 0 || !isfinite(im))))
        return ts_cli_usage_error(cmd, "%s: '%s' is not a number (RE or RE,IM)", opt, s);
    v[0] = re, v[1] = im;
    return 0;
}

static int xt_blocks(ts_bench_opts *o, const char *v) {
    int64_t b[TS_BENCH_MAX_XT_BLOCKS + 1];
    int nb = 0;
    if (ts_parse_i64_list(v, "--xt-block", b, TS_BENCH_MAX_XT_BLOCKS + 1, &nb) < 0 || nb < 1 ||
        nb > TS_BENCH_MAX_XT_BLOCKS)
        return ts_cli_usage_error(o->cmd, "--xt-block: '%s': expected 1 to %d block dimensions", v,
                                  TS_BENCH_MAX_XT_BLOCKS);
    for (int q = 0; q < nb; q++) {
        if (b[q] < 64 || b[q] > 65536)
            return ts_cli_usage_error(o->cmd, "--xt-block: %lld out of range 64..65536", (long long)b[q]);
        o->xt_blocks[q] = (int)b[q];
    }
    o->nxt_blocks = nb;
    return 0;
}

// --devices 1,2,4: distinct counts, each at least 1 (checked against the set once it is open).
static int device_counts(ts_bench_opts *o, const char *v) {
    int64_t c[TS_BENCH_MAX_COUNTS + 1];
    int n = 0;
    if (ts_parse_i64_list(v, "--devices", c, TS_BENCH_MAX_COUNTS + 1, &n) < 0 || n < 1 || n > TS_BENCH_MAX_COUNTS)
        return ts_cli_usage_error(o->cmd, "--devices: '%s': expected 1 to %d device counts (e.g. 1,2,4)", v,
                                  TS_BENCH_MAX_COUNTS);
    for (int q = 0; q < n; q++) {
        if (c[q] < 1 || c[q] > TS_MAX_DEVICES)
            return ts_cli_usage_error(o->cmd, "--devices: %lld out of range 1..%d", (long long)c[q], TS_MAX_DEVICES);
        for (int p = 0; p < q; p++)
            if (c[p] == c[q]) return ts_cli_usage_error(o->cmd, "--devices: %lld given twice", (long long)c[q]);
        o->counts[q] = (int)c[q];
    }
    o->ncounts = n;
    return 0;
}

int ts_bench_common_opt(ts_bench_opts *o, int argc, char **argv, int *i) {
    const char *a = argv[*i], *v;
    int r;
    if (ts_cli_flag(a, "--no-verify", NULL)) return o->verify = 0, 1;
    if (ts_cli_flag(a, "-q", "--quiet")) return o->verbosity = -1, 1;
    if (ts_cli_flag(a, "-v", "--verbose")) return o->verbosity++, 1;
#define VALUE(name, alias) ((r = ts_cli_value_opt(o->cmd, argc, argv, i, name, alias, &v)) != 0)
#define BAD(cond) ((r < 0 || (cond)) ? -1 : 1)
    if (VALUE("--prec", "-p")) return BAD(ts_bench_each_token(o->cmd, o, "--prec", v, prec_tok));
    if (VALUE("--alpha", NULL)) return BAD(parse_scalar(o->cmd, "--alpha", v, o->alpha));
    if (VALUE("--beta", NULL)) return BAD(parse_scalar(o->cmd, "--beta", v, o->beta));
    if (VALUE("--engine", "-e")) return BAD(ts_bench_each_token(o->cmd, o, "--engine", v, engine_tok));
    if (VALUE("--xt-block", NULL)) return BAD(xt_blocks(o, v));
    if (VALUE("--warmup", NULL)) return BAD(ts_cli_int(o->cmd, "--warmup", v, 0, &o->warmup));
    if (VALUE("--reps", "-r")) return BAD(ts_cli_int(o->cmd, "--reps", v, 1, &o->reps));
    if (VALUE("--seed", NULL)) {
        int64_t s = 0;
        if (r < 0 || ts_cli_i64(o->cmd, "--seed", v, 0, &s)) return -1;
        o->seed = (uint64_t)s;
        return 1;
    }
    if (VALUE("--devices", NULL)) return BAD(device_counts(o, v));
    if (o->shape_parts == 3) { // kept for ts_bench_shapes_finish
        if (VALUE("--sweep", NULL)) return r < 0 ? -1 : (o->sweep = v, 1);
        if (VALUE("-m", NULL)) return r < 0 ? -1 : (o->dims[0] = v, 1);
        if (VALUE("-n", NULL)) return r < 0 ? -1 : (o->dims[1] = v, 1);
        if (VALUE("-k", NULL)) return r < 0 ? -1 : (o->dims[2] = v, 1);
    }
    if (o->device_opt && VALUE("--device", "-d")) return o->device_given = 1, BAD(ts_cli_int(o->cmd, "--device", v, 0, &o->device));
    if (VALUE("--json", NULL)) return r < 0 ? -1 : (o->json = v, 1);
    if (VALUE("--trace", NULL)) return r < 0 ? -1 : (o->trace = v, 1);
#undef BAD
#undef VALUE
    return 0;
}

int ts_bench_parse(ts_bench_opts *o, int argc, char **argv, void (*usage)(FILE *f), ts_bench_opt_fn own,
                   ts_bench_arg_fn size, void *ctx) {
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (ts_cli_flag(a, "--help", "-h")) {
            usage(stdout);
            return -1;
        }
        int r = ts_bench_common_opt(o, argc, argv, &i);
        if (r == 0) r = own(ctx, argc, argv, &i);
        if (r < 0) return TS_EXIT_USAGE;
        if (r > 0) continue;
        if (a[0] == '-' && !(a[1] >= '0' && a[1] <= '9'))
            return ts_cli_usage_error(o->cmd, "unknown option '%s' (tessera %s --help)", a, o->cmd);
        int64_t d[3] = {0, 0, 0};
        if (size ? size(ctx, a) != 0
                 : ts_bench_size(o->cmd, a, o->shape_parts, o->shape_expect, d) ||
                       ts_bench_add_shape(o, (ts_bench_shape){d[0], d[1], d[2]}))
            return TS_EXIT_USAGE;
    }
    return !size && o->shape_parts == 3 && ts_bench_shapes_finish(o, o->sweep, o->dims) ? TS_EXIT_USAGE : 0;
}

int ts_bench_finish_opts(ts_bench_opts *o) {
    if (o->nprecs == 0) o->precs[o->nprecs++] = 'd';
    if (o->nxt_blocks == 0) o->xt_blocks[o->nxt_blocks++] = TS_BENCH_XT_BLOCK_DEFAULT;
    ts_engine e[TS_BENCH_MAX_ENGINES];
    int blk[TS_BENCH_MAX_ENGINES], n = 0;
    for (int i = 0; i < o->nengines; i++)
        for (int q = 0; q < (o->engines[i] == TS_ENGINE_CUBLASXT ? o->nxt_blocks : 1); q++) {
            if (n == TS_BENCH_MAX_ENGINES)
                return ts_cli_usage_error(o->cmd, "--engine: too many engines (with --xt-block)");
            e[n] = o->engines[i], blk[n] = o->engines[i] == TS_ENGINE_CUBLASXT ? o->xt_blocks[q] : 0;
            n++;
        }
    memcpy(o->engines, e, sizeof e[0] * (size_t)n);
    memcpy(o->xt_block, blk, sizeof blk[0] * (size_t)n);
    o->nengines = n;
    return 0;
}

// ---------------------------------------------------------------- the run

int ts_bench_begin(ts_bench *b, ts_bench_opts *o, size_t row_size, int check_trace) {
    memset(b, 0, sizeof *b);
    b->o = o, b->row_size = row_size;
    ts_cli_set_verbosity(o->verbosity);
    if (o->json && ts_cli_check_output(o->cmd, "--json", o->json)) return TS_EXIT_USAGE;
    if (check_trace && o->trace && ts_cli_check_output(o->cmd, "--trace", o->trace)) return TS_EXIT_USAGE;
    b->out = (o->json && !strcmp(o->json, "-")) ? stderr : stdout;
    const int open_rc = ts_cli_open_devices(o->cmd, &b->devs);
    if (open_rc < 0) return ts_cli_exit_of(open_rc);
    if (ts_engines_create(b->devs, &b->eng) < 0) {
        ts_cli_errorf(o->cmd, "%s", ts_error_string());
        return TS_EXIT_RUNTIME;
    }
    return 0;
}

int ts_bench_open(ts_bench *b, ts_engine e, const char *what) {
    const char *cmd = b->o->cmd, *why = ts_engines_unavailable(b->devs, e);
    if (why) return ts_cli_usage_error(cmd, "%s: not available: %s", what, why);
    int rc = ts_engines_open(b->eng, e, e == TS_ENGINE_TILES && b->o->trace != NULL);
    if (rc < 0 && e == TS_ENGINE_CUBLASXT) return ts_cli_usage_error(cmd, "%s: not available: %s", what, ts_error_string());
    if (rc == TS_ERR_PARSE) return ts_cli_usage_error(cmd, "%s", ts_error_last()->message); // a TESSERA_TILES* value
    if (rc < 0) {
        ts_cli_errorf(cmd, "%s", ts_error_string());
        return TS_EXIT_RUNTIME;
    }
    b->tiles = ts_engines_tiles(b->eng);
    return 0;
}

int ts_bench_check_counts(ts_bench *b) {
    ts_bench_opts *o = b->o;
    if (o->ncounts == 0) return 0;
    int have = ts_devset_count(b->devs);
    for (int i = 0; i < o->nengines; i++)
        if (!ts_engine_is_set_wide(o->engines[i]))
            return ts_cli_usage_error(o->cmd, "--devices: engine %s runs on one device or the host; the device "
                                      "counts apply to tiles and cublasxt only", ts_engines_name(o->engines[i]));
    for (int q = 0; q < o->ncounts; q++)
        if (o->counts[q] > have)
            return ts_cli_usage_error(o->cmd, "--devices: %d devices asked, %d open", o->counts[q], have);
    return 0;
}

int ts_bench_npasses(const ts_bench *b) { return b->o->ncounts > 0 ? b->o->ncounts : 1; }

int ts_bench_use_pass(ts_bench *b, int p) {
    if (b->o->ncounts == 0) return 0;
    TS_CHECK(ts_engines_set_devices(b->eng, b->o->counts[p]));
    b->tiles = ts_engines_tiles(b->eng);
    return 0;
}

int ts_bench_row_devices(const ts_bench *b, ts_engine e) {
    return ts_engine_is_set_wide(e) && b->eng ? ts_engines_devices(b->eng) : 0;
}

void ts_bench_print_tiles_set(ts_bench *b) {
    int nd = ts_tiles_device_count(b->tiles);
    fprintf(b->out, "tiles: %d %s device%s%s, tile %lld\n", nd, ts_backend_name(ts_devset_backend(b->devs)),
            nd == 1 ? "" : "s", ts_tiles_has_cpu(b->tiles) ? " + CPU worker" : "", (long long)ts_tiles_tile(b->tiles));
}

int ts_bench_print_setup(ts_bench *b) {
    if (b->o->verbosity < 0) return 0;
    ts_bench_print_device(b);
    if (b->tiles) ts_bench_print_tiles_set(b);
    return 1;
}

int ts_bench_header_due(ts_bench *b) {
    if (b->header_done) return 0;
    return b->header_done = 1;
}

void ts_bench_end(ts_bench *b) {
    ts_bench_buffers_free(b);
    if (b->st) ts_stream_destroy(b->st);
    ts_engines_destroy(b->eng);
    ts_devset_close(b->devs);
    free(b->rows);
    b->eng = NULL, b->devs = NULL, b->rows = NULL, b->tiles = NULL, b->dev = NULL, b->st = NULL;
}

// ---------------------------------------------------------------- progress

void ts_bench_progress_start(ts_bench *b, int on, double total_flops) {
    b->progress_on = on;
    if (on) ts_progress_init(&b->prog, stderr, b->o->cmd, total_flops);
}

void ts_bench_progress(ts_bench *b, double flops, const char *what) {
    b->done += flops;
    if (b->progress_on && what) ts_progress_update(&b->prog, b->done, what);
}

void ts_bench_progress_clear(ts_bench *b) {
    if (b->progress_on && b->prog.tty && b->prog.drawn) {
        fprintf(b->prog.out, "\r%*s\r", 100, "");
        b->prog.drawn = 0;
    }
}

void ts_bench_progress_end(ts_bench *b) {
    if (b->progress_on && ts_now() - b->prog.start > 2.0) ts_progress_finish(&b->prog, NULL);
}
