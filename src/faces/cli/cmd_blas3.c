// cmd_blas3.c: `tessera blas3`: SYMM, SYRK, SYR2K, TRMM, TRSM (and HEMM, HERK, HER2K) benchmarked and verified across engines.
//
// Every routine runs on host-resident operands with each engine asked for (the tile runtime,
// cuBLASXt at one or more block dimensions, the CPU BLAS) on the same random data; the first run of
// each engine is untimed and verified against the original operands by a randomized check with a
// stated bound (docs/cli-blas3.md), the timed runs follow. With --gemm-ref the tile runtime's own
// GEMM at n x n x n is measured too and every routine reports its rate against it (vs_gemm).
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/ts_env.h"
#include "core/ts_error.h"
#include "core/ts_json.h"
#include "core/ts_progress.h"
#include "core/ts_rng.h"
#include "core/ts_timer.h"
#include "device/ts_device.h"
#include "faces/cli/ts_cli.h"
#include "faces/cli/ts_cli_opts.h"
#include "kernels/ts_kernels.h"
#include "kernels/ts_l3.h"
#include "runtime/ts_engines.h"
#include "runtime/ts_tiles.h"
#include "runtime/ts_tiles_l3.h"
#include "ts_config.h"

#define CMD "blas3"
#define MAX_SHAPES 64
#define MAX_PRECS 4
#define MAX_ENGINES 8
#define MAX_XT_BLOCKS 4
#define XT_BLOCK_DEFAULT 4096
#define MAX_DIM 2147483647LL // CBLAS and cuBLAS take int dimensions
// Random vectors of the check, and the bound of its scaled error (derivation in kernels/cpu/ts_l3_verify.c).
#define CHECK_NVEC 2
#define CHECK_BOUND TS_L3_VERIFY_BOUND

// ---------------------------------------------------------------- routines and engines

#define NROUT TS_L3_COUNT
#define rname(r) ts_l3_name(r)

// ---------------------------------------------------------------- options

typedef struct {
    int64_t a, b; // symm/hemm/trmm/trsm: m x n; syrk/herk/syr2k/her2k: n x k
} shape_t;

typedef struct {
    int routines[NROUT], nroutines; // in the order of rname
    shape_t shapes[MAX_SHAPES];
    int nshapes;
    char precs[MAX_PRECS];
    int nprecs;
    char side, uplo, trans, diag;
    double alpha[2], beta[2];
    ts_engine engines[MAX_ENGINES];
    int xt_block[MAX_ENGINES];
    int nengines;
    int xt_blocks[MAX_XT_BLOCKS], nxt_blocks;
    int reps, warmup, verify, gemm_ref;
    uint64_t seed;
    const char *json;
    const char *trace; // --trace PREFIX: the tile runtime's timeline per routine, size and precision
    int verbosity;
} b3_opts;

static void usage(FILE *f) {
    fprintf(f,
        "usage: tessera blas3 [options] [SIZES]\n"
        "  SIZES               N or AxB items: m x n for symm/hemm/trmm/trsm, n x k for syrk/herk/syr2k/her2k\n"
        "                      (default: 8192 16384 on a GPU, 512 on simulated devices, 1024 on the CPU)\n"
        "  --routine R[,R...]  symm, syrk, syr2k, trmm, trsm, hemm, herk, her2k, or all (the first five;\n"
        "                      with --prec c or z also the Hermitian three)   (default all)\n"
        "  --side L|R  --uplo L|U  --trans N|T|C  --diag N|U   (defaults L, L, N, N)\n"
        "                      trans is op(A) of syrk/syr2k (herk/her2k: N or C) and of trmm/trsm\n"
        "  --prec s|d|c|z      precisions, comma list (default d)\n"
        "  --alpha/--beta RE[,IM]  scalars (default 1 and 1; herk/her2k use the real part where real)\n"
        "  --engine E[,E...]   tiles (tile runtime), cublasxt (cuBLASXt over every CUDA device), cpu (CPU BLAS);\n"
        "                      run side by side on the same host-resident data (default tiles with devices, else cpu)\n"
        "  --xt-block N[,N...] cuBLASXt block dimension, one row each (default 4096)\n"
        "  --gemm-ref          also run the tile runtime's GEMM at n x n x n and report each rate against it\n"
        "  --trace PREFIX      engine tiles: timeline of the last timed run of each routine, size and precision\n"
        "                      in PREFIX-ROUTINE-PREC-MxN.json (Chrome trace format, docs/runtime.md)\n"
        "  --warmup N          untimed runs after the checked one (default 0; the checked run warms up)\n"
        "  --reps N            timed runs (default 3)\n"
        "  --no-verify         skip verification (reported SKIPPED / verified false)\n"
        "  --seed S            data seed (default 1)\n"
        "  --json FILE         write results (results schema; '-' = stdout)\n"
        "  -q / -v             quieter / more verbose\n"
        "exit: 0 ok, 1 a verification failed, 2 bad usage or does not fit, 3 runtime failure\n");
}

static int parse_dim(const char *tok, const char *what, int64_t *out) {
    int64_t v;
    if (ts_parse_i64(tok, what, &v) < 0)
        return ts_cli_usage_error(CMD, "%s: '%s' is not a positive integer", what, tok);
    if (v <= 0) return ts_cli_usage_error(CMD, "%s: '%s' must be positive", what, tok);
    if (v > MAX_DIM) return ts_cli_usage_error(CMD, "%s: '%s' is too large (at most %lld)", what, tok, MAX_DIM);
    *out = v;
    return 0;
}

// "4096" or "8192x2048".
static int parse_shape(b3_opts *o, const char *s) {
    char buf[64];
    if (strlen(s) >= sizeof buf) return ts_cli_usage_error(CMD, "size '%s' is malformed", s);
    strcpy(buf, s);
    char *x = strchr(buf, 'x');
    if (x) *x = 0;
    if (x && strchr(x + 1, 'x')) return ts_cli_usage_error(CMD, "size '%s': expected N or AxB", s);
    shape_t sh;
    if (parse_dim(buf, "size", &sh.a) || parse_dim(x ? x + 1 : buf, "size", &sh.b)) return TS_EXIT_USAGE;
    if (o->nshapes >= MAX_SHAPES) return ts_cli_usage_error(CMD, "too many sizes (at most %d)", MAX_SHAPES);
    o->shapes[o->nshapes++] = sh;
    return 0;
}

typedef int (*token_fn)(b3_opts *o, const char *opt, const char *tok);
static int each_token(b3_opts *o, const char *opt, const char *list, token_fn fn) {
    char buf[256];
    if (strlen(list) >= sizeof buf || !*list) return ts_cli_usage_error(CMD, "%s: '%s' is malformed", opt, list);
    strcpy(buf, list);
    char *save = NULL;
    int any = 0;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int rc = fn(o, opt, t);
        if (rc) return rc;
        any = 1;
    }
    return any ? 0 : ts_cli_usage_error(CMD, "%s: '%s' is malformed", opt, list);
}

static int routine_tok(b3_opts *o, const char *opt, const char *t) {
    if (!strcasecmp(t, "all")) { // 2: implied, runs where the precision and --trans fit (routine_runs)
        for (int r = 0; r < NROUT; r++)
            if (!o->routines[r]) o->routines[r] = 2;
        return 0;
    }
    for (int r = 0; r < NROUT; r++)
        if (!strcasecmp(t, rname(r))) {
            o->routines[r] = 1;
            return 0;
        }
    return ts_cli_usage_error(CMD, "%s: unknown routine '%s' (choose symm, syrk, syr2k, trmm, trsm, hemm, herk, "
                                   "her2k or all)", opt, t);
}

static int prec_tok(b3_opts *o, const char *opt, const char *t) {
    char c = (char)(t[0] | 0x20);
    if (strlen(t) != 1 || !strchr("sdcz", c))
        return ts_cli_usage_error(CMD, "%s: unknown precision '%s' (choose s, d, c or z)", opt, t);
    if (o->nprecs >= MAX_PRECS) return ts_cli_usage_error(CMD, "%s: too many precisions", opt);
    o->precs[o->nprecs++] = c;
    return 0;
}

static int ts_engineok(b3_opts *o, const char *opt, const char *t) {
    ts_engine e;
    if (ts_engines_parse(t, &e) < 0 || (e != TS_ENGINE_TILES && e != TS_ENGINE_CUBLASXT && e != TS_ENGINE_CPU))
        return ts_cli_usage_error(CMD, "%s: unknown engine '%s' (choose tiles, cublasxt or cpu)", opt, t);
    if (o->nengines >= MAX_ENGINES) return ts_cli_usage_error(CMD, "%s: too many engines", opt);
    o->engines[o->nengines++] = e;
    return 0;
}

// One letter of `choices` (case-insensitive), for --side/--uplo/--trans/--diag.
static int letter_opt(const char *opt, const char *v, const char *choices, char *out) {
    char c = (char)(v[0] & ~0x20);
    if (strlen(v) != 1 || !strchr(choices, c))
        return ts_cli_usage_error(CMD, "%s: '%s' is not one of %s", opt, v, choices);
    *out = c;
    return 0;
}

static int parse_scalar(const char *opt, const char *s, double v[2]) {
    char buf[128];
    if (strlen(s) >= sizeof buf) return ts_cli_usage_error(CMD, "%s: '%s' is malformed", opt, s);
    strcpy(buf, s);
    char *comma = strchr(buf, ',');
    if (comma) *comma = 0;
    double re = 0, im = 0;
    if (ts_parse_double(buf, opt, &re) < 0 || !isfinite(re) ||
        (comma && (ts_parse_double(comma + 1, opt, &im) < 0 || !isfinite(im))))
        return ts_cli_usage_error(CMD, "%s: '%s' is not a number (RE or RE,IM)", opt, s);
    v[0] = re, v[1] = im;
    return 0;
}

// One cublasxt entry per --xt-block value (each its own row).
static int expand_xt(b3_opts *o) {
    if (o->nxt_blocks == 0) o->xt_blocks[o->nxt_blocks++] = XT_BLOCK_DEFAULT;
    ts_engine e[MAX_ENGINES];
    int blk[MAX_ENGINES], n = 0;
    for (int i = 0; i < o->nengines; i++)
        for (int q = 0; q < (o->engines[i] == TS_ENGINE_CUBLASXT ? o->nxt_blocks : 1); q++) {
            if (n == MAX_ENGINES) return ts_cli_usage_error(CMD, "--engine: too many engines (with --xt-block)");
            e[n] = o->engines[i], blk[n] = o->engines[i] == TS_ENGINE_CUBLASXT ? o->xt_blocks[q] : 0;
            n++;
        }
    memcpy(o->engines, e, sizeof e[0] * (size_t)n);
    memcpy(o->xt_block, blk, sizeof blk[0] * (size_t)n);
    o->nengines = n;
    return 0;
}

// trans letters of syrk/syr2k: real N/T/C, complex symmetric N/T, Hermitian N/C.
static int trans_ok(int r, char prec, char trans) {
    if (!ts_l3_is_rk(r) && !ts_l3_is_r2k(r)) return 1;
    if (ts_l3_is_herm(r)) return trans != 'T';
    return !ts_prec_is_complex(prec) || trans != 'C';
}

// The (routine, precision) pairs that run: those asked for; `all` leaves out the Hermitian
// routines in real precisions and the routines that do not take --trans.
static int routine_runs(const b3_opts *o, int r, char prec) {
    if (!o->routines[r] || (ts_l3_is_herm(r) && !ts_prec_is_complex(prec))) return 0;
    return o->routines[r] == 1 || trans_ok(r, prec, o->trans);
}

static int check_combinations(b3_opts *o) {
    int any = 0;
    for (int r = 0; r < NROUT; r++)
        for (int p = 0; p < o->nprecs; p++) {
            char pr = o->precs[p];
            any |= routine_runs(o, r, pr);
            if (o->routines[r] != 1) continue;
            if (ts_l3_is_herm(r) && !ts_prec_is_complex(pr))
                return ts_cli_usage_error(CMD, "--routine %s needs --prec c or z (got %c)", rname(r), pr);
            if (!trans_ok(r, pr, o->trans))
                return ts_cli_usage_error(CMD, "--trans %c: %s%s takes %s", o->trans,
                                          ts_prec_is_complex(pr) && !ts_l3_is_herm(r) ? "complex " : "", rname(r),
                                          ts_l3_is_herm(r) ? "N or C" : "N or T (herk/her2k take C)");
        }
    if (!any) return ts_cli_usage_error(CMD, "no routine runs with these options");
    return 0;
}

static int parse_args(int argc, char **argv, b3_opts *o) {
    const char *v;
    int r;
    memset(o, 0, sizeof *o);
    o->side = 'L', o->uplo = 'L', o->trans = 'N', o->diag = 'N';
    o->alpha[0] = 1, o->beta[0] = 1;
    o->reps = 3, o->verify = 1, o->seed = 1;
    int any_routine = 0;
#define VALUE(name, alias) ((r = ts_cli_value_opt(CMD, argc, argv, &i, name, alias, &v)) != 0)
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (ts_cli_flag(a, "--help", "-h")) {
            usage(stdout);
            return -1;
        } else if (ts_cli_flag(a, "--no-verify", NULL)) {
            o->verify = 0;
        } else if (ts_cli_flag(a, "--gemm-ref", NULL)) {
            o->gemm_ref = 1;
        } else if (ts_cli_flag(a, "-q", "--quiet")) {
            o->verbosity = -1;
        } else if (ts_cli_flag(a, "-v", "--verbose")) {
            o->verbosity++;
        } else if (VALUE("--routine", NULL)) {
            if (r < 0 || each_token(o, "--routine", v, routine_tok)) return TS_EXIT_USAGE;
            any_routine = 1;
        } else if (VALUE("--prec", "-p")) {
            if (r < 0 || each_token(o, "--prec", v, prec_tok)) return TS_EXIT_USAGE;
        } else if (VALUE("--side", NULL)) {
            if (r < 0 || letter_opt("--side", v, "LR", &o->side)) return TS_EXIT_USAGE;
        } else if (VALUE("--uplo", NULL)) {
            if (r < 0 || letter_opt("--uplo", v, "LU", &o->uplo)) return TS_EXIT_USAGE;
        } else if (VALUE("--trans", NULL)) {
            if (r < 0 || letter_opt("--trans", v, "NTC", &o->trans)) return TS_EXIT_USAGE;
        } else if (VALUE("--diag", NULL)) {
            if (r < 0 || letter_opt("--diag", v, "NU", &o->diag)) return TS_EXIT_USAGE;
        } else if (VALUE("--alpha", NULL)) {
            if (r < 0 || parse_scalar("--alpha", v, o->alpha)) return TS_EXIT_USAGE;
        } else if (VALUE("--beta", NULL)) {
            if (r < 0 || parse_scalar("--beta", v, o->beta)) return TS_EXIT_USAGE;
        } else if (VALUE("--engine", "-e")) {
            if (r < 0 || each_token(o, "--engine", v, ts_engineok)) return TS_EXIT_USAGE;
        } else if (VALUE("--xt-block", NULL)) {
            int64_t b[MAX_XT_BLOCKS + 1];
            int nb = 0;
            if (r < 0) return TS_EXIT_USAGE;
            if (ts_parse_i64_list(v, "--xt-block", b, MAX_XT_BLOCKS + 1, &nb) < 0 || nb < 1 || nb > MAX_XT_BLOCKS)
                return ts_cli_usage_error(CMD, "--xt-block: '%s': expected 1 to %d block dimensions", v, MAX_XT_BLOCKS);
            for (int q = 0; q < nb; q++) {
                if (b[q] < 64 || b[q] > 65536)
                    return ts_cli_usage_error(CMD, "--xt-block: %lld out of range 64..65536", (long long)b[q]);
                o->xt_blocks[q] = (int)b[q];
            }
            o->nxt_blocks = nb;
        } else if (VALUE("--warmup", NULL)) {
            if (r < 0 || ts_cli_int(CMD, "--warmup", v, 0, &o->warmup)) return TS_EXIT_USAGE;
        } else if (VALUE("--reps", "-r")) {
            if (r < 0 || ts_cli_int(CMD, "--reps", v, 1, &o->reps)) return TS_EXIT_USAGE;
        } else if (VALUE("--seed", NULL)) {
            int64_t s;
            if (r < 0 || ts_cli_i64(CMD, "--seed", v, 0, &s)) return TS_EXIT_USAGE;
            o->seed = (uint64_t)s;
        } else if (VALUE("--json", NULL)) {
            if (r < 0) return TS_EXIT_USAGE;
            o->json = v;
        } else if (VALUE("--trace", NULL)) {
            if (r < 0) return TS_EXIT_USAGE;
            o->trace = v;
        } else if (a[0] == '-' && !(a[1] >= '0' && a[1] <= '9')) {
            return ts_cli_usage_error(CMD, "unknown option '%s' (tessera blas3 --help)", a);
        } else if (parse_shape(o, a)) {
            return TS_EXIT_USAGE;
        }
    }
#undef VALUE
    if (!any_routine) routine_tok(o, "--routine", "all");
    if (o->nprecs == 0) o->precs[o->nprecs++] = 'd';
    if (check_combinations(o)) return TS_EXIT_USAGE;
    return expand_xt(o);
}

// ---------------------------------------------------------------- one problem

typedef ts_l3_prob prob;

static prob make_prob(const b3_opts *o, int r, char prec, shape_t s) {
    return ts_l3_prob_make(r, prec, o->side, o->uplo, o->trans, o->diag, s.a, s.b, o->alpha, o->beta);
}

// ---------------------------------------------------------------- data

// Host buffers shared by every routine of one (size, precision): each big enough for all of them.
typedef struct {
    void *A, *B, *C0, *W; // W: the result (C, or B of trmm/trsm, in place)
    size_t bytes[4];
} buffers;

static uint64_t data_key(uint64_t seed, const prob *p, int role) {
    uint64_t h = ts_mix64(seed + 0x9e3779b97f4a7c15ULL);
    h = ts_mix64(h ^ (uint64_t)p->r * 977);
    h = ts_mix64(h ^ (uint64_t)p->m * 31 ^ (uint64_t)p->n * 131 ^ (uint64_t)p->k * 1031);
    return ts_mix64(h ^ ((uint64_t)(unsigned char)p->prec << 8) ^ (uint64_t)role);
}

// Uniform [-0.5, 0.5) from a counter-based generator, filled in parallel.
static void fill(char prec, uint64_t key, void *x, size_t elems) {
    int64_t n = (int64_t)(elems * (ts_prec_is_complex(prec) ? 2 : 1));
    int single = prec == 's' || prec == 'c';
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) {
        double v = ts_uniform_at(key, (uint64_t)i);
        if (single) ((float *)x)[i] = (float)v;
        else ((double *)x)[i] = v;
    }
}

static void copy_bytes(void *dst, const void *src, size_t bytes) {
    const size_t chunk = (size_t)64 << 20;
    int64_t nchunks = (int64_t)((bytes + chunk - 1) / chunk);
#pragma omp parallel for schedule(dynamic)
    for (int64_t c = 0; c < nchunks; c++) {
        size_t off = (size_t)c * chunk, len = bytes - off < chunk ? bytes - off : chunk;
        memcpy((char *)dst + off, (const char *)src + off, len);
    }
}

// A of trmm/trsm: A / ka + I, so that every triangle (unit or not, either op) is strictly
// diagonally dominant: well conditioned at any order, and TRSM's solution stays of the size of B.
static void make_triangular_data(const prob *p, void *A) {
    int cplx = ts_prec_is_complex(p->prec), single = p->prec == 's' || p->prec == 'c';
    int64_t n = (int64_t)ts_l3_elems_a(p) * (cplx ? 2 : 1);
    double s = 1.0 / (double)p->ka;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) {
        if (single) ((float *)A)[i] *= (float)s;
        else ((double *)A)[i] *= s;
    }
    for (int64_t j = 0; j < p->ka; j++) {
        int64_t idx = (j + j * p->ra) * (cplx ? 2 : 1);
        if (single) ((float *)A)[idx] += 1.0f;
        else ((double *)A)[idx] += 1.0;
    }
}

static void setup_data(const b3_opts *o, const prob *p, buffers *b) {
    fill(p->prec, data_key(o->seed, p, 1), b->A, ts_l3_elems_a(p));
    if (ts_l3_is_tri(p->r)) make_triangular_data(p, b->A);
    if (ts_l3_elems_b(p)) fill(p->prec, data_key(o->seed, p, 2), b->B, ts_l3_elems_b(p));
    if (!ts_l3_is_tri(p->r)) fill(p->prec, data_key(o->seed, p, 3), b->C0, ts_l3_elems_c(p));
}

// Test hook: TESSERA_TEST_CORRUPT_BLAS3=1 adds 1e6 to one element of the checked result inside
// its defined part; =outside writes one element of syrk/syr2k's other triangle.
static void maybe_corrupt(const prob *p, void *W) {
    const char *v = ts_env_str("TESSERA_TEST_CORRUPT_BLAS3");
    if (!v) return;
    int64_t i, j;
    if (!strcmp(v, "1")) i = p->rc / 2, j = p->n / 2;
    else if (!strcmp(v, "outside") && (ts_l3_is_rk(p->r) || ts_l3_is_r2k(p->r)) && p->n > 1)
        i = p->uplo == 'L' ? 0 : p->n - 1, j = p->uplo == 'L' ? p->n - 1 : 0;
    else return;
    int64_t idx = (i + j * p->rc) * (ts_prec_is_complex(p->prec) ? 2 : 1);
    if (p->prec == 's' || p->prec == 'c') ((float *)W)[idx] += 1e6f;
    else ((double *)W)[idx] += 1e6;
}

// ---------------------------------------------------------------- engines

typedef struct {
    int r; // routine, or -1 for the GEMM reference
    char prec;
    shape_t shape;
    char flags[5];
    ts_engine engine;
    int xt_block;
    int reps;
    ts_stats sec;
    double flops, tf_med, tf_min, tf_max;
    int verified, passed, failed, outside;
    double error;
    double ratio, vs_gemm; // 0 = none
    int has_tiles;
    ts_tiles_stats tiles;
} row_t;

typedef struct {
    b3_opts *o;
    ts_devset *devs;
    ts_engines *eng; // tiles and cublasxt, opened over every device of the set
    ts_tiles *tiles;
    ts_tiles_stats last;
    buffers buf;
    row_t *rows;
    int nrows, cap;
    FILE *out;
    ts_progress prog;
    int progress_on, header_done;
    double done;
} ctx_t;

static int run_once(ctx_t *c, ts_engine e, const prob *p) {
    return ts_engines_l3(c->eng, e, p, c->buf.A, c->buf.B, c->buf.W, &c->last);
}

// The result buffer back to the inputs: C0 for symm/syrk/syr2k, B0 for trmm/trsm (in place).
static void reset_result(ctx_t *c, const prob *p) {
    if (ts_l3_is_tri(p->r)) copy_bytes(c->buf.W, c->buf.B, ts_l3_elems_c(p) * ts_prec_size(p->prec));
    else copy_bytes(c->buf.W, c->buf.C0, ts_l3_elems_c(p) * ts_prec_size(p->prec));
}

// ---------------------------------------------------------------- rows

static row_t *new_row(ctx_t *c) {
    if (c->nrows == c->cap) {
        int cap = c->cap ? 2 * c->cap : 64;
        row_t *r = realloc(c->rows, sizeof *r * (size_t)cap);
        if (!r) return NULL;
        c->rows = r, c->cap = cap;
    }
    row_t *r = &c->rows[c->nrows++];
    memset(r, 0, sizeof *r);
    r->error = NAN;
    return r;
}

static void progress_clear(ctx_t *c) {
    if (c->progress_on && c->prog.tty && c->prog.drawn) {
        fprintf(c->prog.out, "\r%*s\r", 100, "");
        c->prog.drawn = 0;
    }
}

static void progress(ctx_t *c, double flops, const char *what) {
    c->done += flops;
    if (c->progress_on) ts_progress_update(&c->prog, c->done, what);
}

static void set_rates(row_t *row, double *sec) {
    row->sec = ts_stats_of(sec, (size_t)row->reps);
    row->tf_med = row->flops / row->sec.median * 1e-12;
    row->tf_min = row->flops / row->sec.max * 1e-12;
    row->tf_max = row->flops / row->sec.min * 1e-12;
}

// One engine on one routine: the checked run (untimed, from the original operands), then the
// warmup and the timed runs on the result of the previous one (as ts_gemm's reps: no reset in between).
static int run_row(ctx_t *c, const prob *p, const ts_l3_verify *cr, row_t *row) {
    b3_opts *o = c->o;
    int pins[3] = {-1, -1, -1};
    if (row->engine == TS_ENGINE_CUBLASXT) { // host memory as it is (ts_host_alloc: already page-locked, nothing to do)
        TS_CHECK(ts_engines_set_xt_block(c->eng, row->xt_block));
        void *bufs[3] = {c->buf.A, c->buf.B, c->buf.W};
        size_t bytes[3] = {c->buf.bytes[0], c->buf.bytes[1], c->buf.bytes[3]};
        for (int q = 0; q < 3; q++)
            if (bytes[q] && ts_host_pin(c->devs, bufs[q], bytes[q], &pins[q]) < 0) pins[q] = -1, ts_error_clear();
    }
    int rc = 0;
    double *sec = malloc(sizeof(double) * (size_t)row->reps);
    if (!sec) {
        rc = TS_ERROR(TS_ERR_NOMEM, "out of host memory");
        goto out;
    }
    char what[96];
    snprintf(what, sizeof what, "%s %c %s", rname(p->r), p->prec, ts_engines_name(row->engine));
    reset_result(c, p);
    TS_CHECK_GOTO(run_once(c, row->engine, p), rc, out);
    progress(c, p->flops, what);
    if (o->verify) {
        maybe_corrupt(p, c->buf.W);
        row->error = ts_l3_verify_error(cr, c->buf.W, &row->outside);
        row->verified = 1;
        row->passed = row->error <= CHECK_BOUND;
    }
    for (int w = 0; w < o->warmup; w++) {
        TS_CHECK_GOTO(run_once(c, row->engine, p), rc, out);
        progress(c, p->flops, what);
    }
    for (int q = 0; q < row->reps; q++) {
        double t0 = ts_now();
        TS_CHECK_GOTO(run_once(c, row->engine, p), rc, out);
        sec[q] = ts_now() - t0;
        progress(c, p->flops, what);
    }
    set_rates(row, sec);
    if (row->engine == TS_ENGINE_TILES) row->has_tiles = 1, row->tiles = c->last;
    if (row->engine == TS_ENGINE_TILES && o->trace) {
        char path[1024];
        snprintf(path, sizeof path, "%s-%s-%c-%lldx%lld.json", o->trace, rname(p->r), p->prec, (long long)p->rc,
                 (long long)p->n);
        if (ts_tiles_trace_write(c->tiles, path) < 0) {
            rc = ts_error_last()->code;
            goto out;
        }
    }
out:
    for (int q = 0; q < 3; q++)
        if (pins[q] >= 0) ts_host_unpin(c->devs, pins[q]);
    free(sec);
    return rc;
}

// The tile runtime's GEMM at n x n x n (alpha, beta as given) on the same buffers, checked with
// Freivalds (ts_gemm_verify, bound TS_GEMM_VERIFY_BOUND).
static int run_gemm_ref(ctx_t *c, char prec, int64_t n, row_t *row) {
    b3_opts *o = c->o;
    ts_scalar al = ts_scalar_of(prec, o->alpha[0], ts_prec_is_complex(prec) ? o->alpha[1] : 0);
    ts_scalar be = ts_scalar_of(prec, o->beta[0], ts_prec_is_complex(prec) ? o->beta[1] : 0);
    prob p = {.r = TS_L3_SYMM, .prec = prec, .m = n, .n = n, .k = n};
    size_t es = ts_prec_size(prec), bytes = (size_t)n * (size_t)n * es;
    uint64_t key = data_key(o->seed ^ 0x6e33ULL, &p, 0);
    fill(prec, key + 1, c->buf.A, (size_t)n * (size_t)n);
    fill(prec, key + 2, c->buf.B, (size_t)n * (size_t)n);
    fill(prec, key + 3, c->buf.C0, (size_t)n * (size_t)n);
    copy_bytes(c->buf.W, c->buf.C0, bytes);
    double *sec = malloc(sizeof(double) * (size_t)row->reps);
    if (!sec) return TS_ERROR(TS_ERR_NOMEM, "out of host memory");
    int rc = 0;
#define GEMM_ONCE                                                                                                      \
    ts_engines_gemm(c->eng, NULL, TS_ENGINE_TILES, prec, 'N', 'N', n, n, n, &al, c->buf.A, n, c->buf.B, n, &be,        \
                    c->buf.W, n, &c->last)
    TS_CHECK_GOTO(GEMM_ONCE, rc, out);
    progress(c, row->flops, "gemm reference");
    if (o->verify) {
        double err = NAN;
        int ok = ts_gemm_verify(prec, 'N', 'N', n, n, n, &al, c->buf.A, n, c->buf.B, n, &be, c->buf.C0, n, c->buf.W, n,
                                CHECK_NVEC, o->seed ^ 0x5eed, TS_GEMM_VERIFY_BOUND, &err);
        row->verified = 1, row->error = err, row->passed = ok == 1 && err == err;
    }
    for (int w = 0; w < o->warmup; w++) TS_CHECK_GOTO(GEMM_ONCE, rc, out);
    for (int q = 0; q < row->reps; q++) {
        double t0 = ts_now();
        TS_CHECK_GOTO(GEMM_ONCE, rc, out);
        sec[q] = ts_now() - t0;
        progress(c, row->flops, "gemm reference");
    }
#undef GEMM_ONCE
    set_rates(row, sec);
    row->has_tiles = 1, row->tiles = c->last;
out:
    free(sec);
    return rc;
}

// ---------------------------------------------------------------- output

static void print_header(ctx_t *c) {
    if (c->header_done || c->o->verbosity < 0) return;
    c->header_done = 1;
    fprintf(c->out, "%-6s %-2s %-13s %-4s %-13s %10s %10s %9s %7s %7s %9s %6s %s\n", "rout", "p", "size", "flag",
            "engine", "median_ms", "min_ms", "TFLOP/s", "ratio", "vs_gemm", "error", "bound", "check");
}

static void print_row(ctx_t *c, const row_t *r) {
    const char *check = r->failed ? "ERROR" : !r->verified ? "SKIPPED" : r->passed ? "PASS" : "FAIL";
    if (c->o->verbosity < 0 && (r->passed || !r->verified) && !r->failed) return;
    print_header(c);
    char size[32], eng[24], ratio[16] = "-", vsg[16] = "-", err[16] = "-", bnd[16] = "-";
    if (r->r < 0) snprintf(size, sizeof size, "%lldx%lldx%lld", (long long)r->shape.a, (long long)r->shape.a,
                           (long long)r->shape.a);
    else snprintf(size, sizeof size, "%lldx%lld", (long long)r->shape.a, (long long)r->shape.b);
    if (r->engine == TS_ENGINE_CUBLASXT) snprintf(eng, sizeof eng, "cublasxt:%d", r->xt_block);
    else snprintf(eng, sizeof eng, "%s", ts_engines_name(r->engine));
    if (r->ratio > 0) snprintf(ratio, sizeof ratio, "%.2fx", r->ratio);
    if (r->vs_gemm > 0) snprintf(vsg, sizeof vsg, "%.2fx", r->vs_gemm);
    if (r->verified) {
        snprintf(err, sizeof err, "%.2e", r->error);
        snprintf(bnd, sizeof bnd, "%.0f", r->r < 0 ? TS_GEMM_VERIFY_BOUND : CHECK_BOUND);
    }
    const char *rn = r->r < 0 ? "gemm" : rname(r->r);
    if (r->failed) {
        fprintf(c->out, "%-6s %-2c %-13s %-4s %-13s %10s %10s %9s %7s %7s %9s %6s %s\n", rn, r->prec, size, r->flags,
                eng, "-", "-", "-", "-", "-", "-", "-", check);
        return;
    }
    fprintf(c->out, "%-6s %-2c %-13s %-4s %-13s %10.3f %10.3f %9.3f %7s %7s %9s %6s %s%s\n", rn, r->prec, size,
            r->flags, eng, r->sec.median * 1e3, r->sec.min * 1e3, r->tf_med, ratio, vsg, err, bnd, check,
            r->outside ? " (wrote outside its triangle)" : "");
    if (r->has_tiles && c->o->verbosity > 0) {
        const ts_tiles_stats *t = &r->tiles;
        fprintf(c->out, "  tiles: T=%lld, %lld tiles, cpu %lld (%.1f%%); cache hits %lld, misses %lld; H2D %.1f MiB, "
                        "D2H %.1f MiB, P2P %.1f MiB; steals %lld\n",
                (long long)t->tile, (long long)t->tiles, (long long)t->tiles_cpu, 100 * t->cpu_share,
                (long long)t->cache_hits, (long long)t->cache_misses, t->bytes_h2d / 1048576.0,
                t->bytes_d2h / 1048576.0, t->bytes_p2p / 1048576.0, (long long)t->steals);
    }
}

static void write_json(ctx_t *c, ts_json *j) {
    b3_opts *o = c->o;
    ts_results_begin(j, "tessera blas3", 1, ts_devset_json, ts_devset_count(c->devs) ? c->devs : NULL);
    for (int i = 0; i < c->nrows; i++) {
        const row_t *r = &c->rows[i];
        if (r->failed) continue;
        ts_result_common rc = {
            .bench = r->r < 0 ? "gemm" : "blas3", .engine = ts_engines_name(r->engine), .precision = r->prec, .where = "host",
            .reps = r->reps, .sec_median = r->sec.median, .sec_min = r->sec.min, .sec_max = r->sec.max,
            .tf_median = r->tf_med, .tf_min = r->tf_min, .tf_max = r->tf_max, .verified = r->verified,
            .error = r->verified ? r->error : NAN,
            .bound = r->verified ? (r->r < 0 ? TS_GEMM_VERIFY_BOUND : CHECK_BOUND) : NAN,
        };
        ts_results_entry_begin(j, &rc);
        ts_json_begin_object(j, "shape");
        if (r->r < 0) {
            ts_json_int(j, "m", r->shape.a), ts_json_int(j, "n", r->shape.a), ts_json_int(j, "k", r->shape.a);
            ts_json_str(j, "transa", "N"), ts_json_str(j, "transb", "N");
        } else {
            char s1[2] = {r->flags[0], 0}, s2[2] = {r->flags[1], 0}, s3[2] = {r->flags[2], 0}, s4[2] = {r->flags[3], 0};
            ts_json_str(j, "routine", rname(r->r));
            if (ts_l3_is_rk(r->r) || ts_l3_is_r2k(r->r)) ts_json_int(j, "n", r->shape.a), ts_json_int(j, "k", r->shape.b);
            else ts_json_int(j, "m", r->shape.a), ts_json_int(j, "n", r->shape.b);
            if (s1[0] != '-') ts_json_str(j, "side", s1);
            ts_json_str(j, "uplo", s2);
            if (s3[0] != '-') ts_json_str(j, "trans", s3);
            if (s4[0] != '-') ts_json_str(j, "diag", s4);
        }
        ts_json_end_object(j);
        ts_json_begin_object(j, "extra");
        ts_json_str(j, "routine", r->r < 0 ? "gemm" : rname(r->r));
        ts_json_num(j, "flops", r->flops);
        if (r->r < 0) ts_json_bool(j, "gemm_ref", 1);
        if (r->engine == TS_ENGINE_CUBLASXT) ts_json_int(j, "xt_block", r->xt_block);
        ts_json_int(j, "warmup", o->warmup);
        if (r->ratio > 0) ts_json_num(j, "ratio", r->ratio);
        if (r->vs_gemm > 0) ts_json_num(j, "vs_gemm", r->vs_gemm);
        if (r->has_tiles) ts_tiles_stats_json(j, &r->tiles);
        if (r->verified) ts_json_bool(j, "passed", r->passed);
        ts_json_end_object(j);
        ts_results_entry_end(j);
    }
    ts_results_end(j);
}

// ---------------------------------------------------------------- the command

static void free_buffers(ctx_t *c) {
    if (c->tiles) ts_tiles_unpin_all(c->tiles); // the runtime keeps registrations across calls
    void *p[4] = {c->buf.A, c->buf.B, c->buf.C0, c->buf.W};
    for (int q = 0; q < 4; q++) {
        if (!p[q]) continue;
        if (ts_devset_count(c->devs) > 0) ts_host_free(c->devs, p[q]);
        else free(p[q]);
    }
    memset(&c->buf, 0, sizeof c->buf);
}

// Bytes of A, B, C0 and W that every routine of one (size, precision) needs (and the GEMM reference).
static void buffer_bytes(const b3_opts *o, shape_t s, char prec, size_t bytes[4]) {
    size_t es = ts_prec_size(prec);
    memset(bytes, 0, 4 * sizeof bytes[0]);
    for (int r = 0; r < NROUT; r++) {
        if (!routine_runs(o, r, prec)) continue;
        prob p = make_prob(o, r, prec, s);
        size_t e[4] = {ts_l3_elems_a(&p), ts_l3_elems_b(&p), ts_l3_is_tri(r) ? 0 : ts_l3_elems_c(&p), ts_l3_elems_c(&p)};
        for (int q = 0; q < 4; q++)
            if (e[q] * es > bytes[q]) bytes[q] = e[q] * es;
    }
    if (o->gemm_ref)
        for (int q = 0; q < 4; q++)
            if ((size_t)s.a * (size_t)s.a * es > bytes[q]) bytes[q] = (size_t)s.a * (size_t)s.a * es;
}

static int alloc_buffers(ctx_t *c, shape_t s, char prec) {
    buffer_bytes(c->o, s, prec, c->buf.bytes);
    void **p[4] = {&c->buf.A, &c->buf.B, &c->buf.C0, &c->buf.W};
    for (int q = 0; q < 4; q++) {
        size_t b = c->buf.bytes[q] ? c->buf.bytes[q] : 64;
        if (ts_devset_count(c->devs) > 0) TS_CHECK(ts_host_alloc(c->devs, b, p[q]));
        else if (!(*p[q] = aligned_alloc(4096, (b + 4095) / 4096 * 4096)))
            return TS_ERROR(TS_ERR_NOMEM, "cannot allocate %zu bytes of host memory", b);
    }
    return 0;
}

static int check_memory(ctx_t *c) {
    size_t avail = ts_cli_host_mem_available();
    for (int s = 0; s < c->o->nshapes; s++)
        for (int q = 0; q < c->o->nprecs; q++) {
            size_t b[4];
            buffer_bytes(c->o, c->o->shapes[s], c->o->precs[q], b);
            double need = (double)b[0] + (double)b[1] + (double)b[2] + (double)b[3];
            if (need > (double)avail)
                return ts_cli_usage_error(CMD, "%lldx%lld %c: needs %.2f GiB of host memory, %.2f GiB available",
                                          (long long)c->o->shapes[s].a, (long long)c->o->shapes[s].b, c->o->precs[q],
                                          ts_cli_gib(need), ts_cli_gib((double)avail));
        }
    return 0;
}

static int open_engines(ctx_t *c) {
    b3_opts *o = c->o;
    int need_tiles = o->gemm_ref;
    if (ts_engines_create(c->devs, &c->eng) < 0) {
        ts_cli_errorf(CMD, "%s", ts_error_string());
        return TS_EXIT_RUNTIME;
    }
    for (int i = 0; i < o->nengines; i++) {
        if (o->engines[i] == TS_ENGINE_TILES) need_tiles = 1;
        if (o->engines[i] != TS_ENGINE_CUBLASXT) continue;
        const char *why = ts_engines_unavailable(c->devs, o->engines[i]);
        if (why) return ts_cli_usage_error(CMD, "--engine cublasxt: not available: %s", why);
        if (ts_engines_open(c->eng, o->engines[i], 0) < 0)
            return ts_cli_usage_error(CMD, "--engine cublasxt: not available: %s", ts_error_string());
    }
    if (!need_tiles) return 0;
    const char *why = ts_engines_unavailable(c->devs, TS_ENGINE_TILES);
    if (why)
        return ts_cli_usage_error(CMD, "%s: not available: %s",
                                  o->gemm_ref ? "--gemm-ref (the tile runtime)" : "--engine tiles", why);
    int r = ts_engines_open(c->eng, TS_ENGINE_TILES, o->trace != NULL);
    if (r == TS_ERR_PARSE) return ts_cli_usage_error(CMD, "%s", ts_error_last()->message);
    if (r < 0) {
        ts_cli_errorf(CMD, "%s", ts_error_string());
        return TS_EXIT_RUNTIME;
    }
    c->tiles = ts_engines_tiles(c->eng);
    return 0;
}

static void default_shapes(ctx_t *c) {
    b3_opts *o = c->o;
    int ndev = ts_devset_count(c->devs);
    if (ndev > 0 && ts_devset_backend(c->devs) == TS_BACKEND_CUDA) {
        o->shapes[o->nshapes++] = (shape_t){8192, 8192};
        o->shapes[o->nshapes++] = (shape_t){16384, 16384};
    } else {
        int64_t n = ndev > 0 ? 512 : 1024;
        o->shapes[o->nshapes++] = (shape_t){n, n};
    }
}

// Marks a row failed (runtime error) and reports it.
static void row_failed(ctx_t *c, row_t *row, const char *what, int *worst) {
    row->failed = 1;
    progress_clear(c);
    ts_cli_errorf(CMD, "%s: %s", what, ts_error_string());
    ts_error_clear();
    if (*worst < TS_EXIT_RUNTIME) *worst = TS_EXIT_RUNTIME;
}

// Every routine and engine on one (size, precision).
static int run_size(ctx_t *c, shape_t s, char prec, int *worst) {
    b3_opts *o = c->o;
    double gemm_tf = 0;
    if (o->gemm_ref) {
        row_t *row = new_row(c);
        if (!row) return TS_ERROR(TS_ERR_NOMEM, "out of host memory");
        row->r = -1, row->prec = prec, row->shape = s, row->engine = TS_ENGINE_TILES, row->reps = o->reps;
        strcpy(row->flags, "NN");
        row->flops = 2.0 * (double)s.a * (double)s.a * (double)s.a * (ts_prec_is_complex(prec) ? 4 : 1);
        if (run_gemm_ref(c, prec, s.a, row) < 0) row_failed(c, row, "gemm reference", worst);
        else gemm_tf = row->tf_med;
        if (row->verified && !row->passed && *worst < TS_EXIT_CHECK) *worst = TS_EXIT_CHECK;
        progress_clear(c);
        print_row(c, row);
    }
    for (int r = 0; r < NROUT; r++) {
        if (!routine_runs(o, r, prec)) continue;
        prob p = make_prob(o, r, prec, s);
        setup_data(o, &p, &c->buf);
        ts_l3_verify *cr = NULL;
        if (o->verify && ts_l3_verify_prepare(&p, c->buf.A, c->buf.B, c->buf.C0, CHECK_NVEC, o->seed, &cr) < 0)
            return ts_error_last()->code;
        int first = c->nrows;
        for (int e = 0; e < o->nengines; e++) {
            row_t *row = new_row(c);
            if (!row) {
                ts_l3_verify_free(cr);
                return TS_ERROR(TS_ERR_NOMEM, "out of host memory");
            }
            row->r = r, row->prec = prec, row->shape = s, row->engine = o->engines[e];
            row->xt_block = o->xt_block[e], row->reps = o->reps, row->flops = p.flops;
            ts_l3_flags(&p, row->flags);
            if (run_row(c, &p, cr, row) < 0) {
                char what[64];
                snprintf(what, sizeof what, "%s %c %s", rname(r), prec, ts_engines_name(row->engine));
                row_failed(c, row, what, worst);
            } else if (row->verified && !row->passed && *worst < TS_EXIT_CHECK) {
                *worst = TS_EXIT_CHECK;
            }
        }
        ts_l3_verify_free(cr);
        row_t *base = &c->rows[first];
        for (int i = first; i < c->nrows; i++) {
            row_t *q = &c->rows[i];
            if (o->nengines > 1 && !base->failed && !q->failed && base->tf_med > 0) q->ratio = q->tf_med / base->tf_med;
            if (gemm_tf > 0 && !q->failed) q->vs_gemm = q->tf_med / gemm_tf;
            progress_clear(c);
            print_row(c, q);
        }
        fflush(c->out);
    }
    return 0;
}

static double total_flops(ctx_t *c) {
    b3_opts *o = c->o;
    double t = 0;
    for (int s = 0; s < o->nshapes; s++)
        for (int q = 0; q < o->nprecs; q++) {
            int runs = 1 + o->warmup + o->reps;
            if (o->gemm_ref)
                t += 2.0 * pow((double)o->shapes[s].a, 3) * (ts_prec_is_complex(o->precs[q]) ? 4 : 1) * (1 + o->reps);
            for (int r = 0; r < NROUT; r++)
                if (routine_runs(o, r, o->precs[q])) t += make_prob(o, r, o->precs[q], o->shapes[s]).flops * runs * o->nengines;
        }
    return t;
}

static int write_json_file(ctx_t *c) {
    FILE *f = ts_cli_json_fopen(CMD, c->o->json);
    if (!f) return -1;
    ts_json *j = ts_json_open_file(f);
    write_json(c, j);
    int bad = ts_json_close(j) < 0;
    return ts_cli_json_fclose(CMD, c->o->json, f) < 0 || bad ? -1 : 0;
}

int ts_cmd_blas3(int argc, char **argv) {
    b3_opts o;
    int rc = parse_args(argc, argv, &o);
    if (rc == -1) return TS_EXIT_OK; // --help
    if (rc) return rc;
    ts_cli_set_verbosity(o.verbosity);
    if (o.json && ts_cli_check_output(CMD, "--json", o.json)) return TS_EXIT_USAGE;

    ctx_t c;
    memset(&c, 0, sizeof c);
    c.o = &o;
    c.out = (o.json && !strcmp(o.json, "-")) ? stderr : stdout;
    int worst = TS_EXIT_OK;
    const int open_rc = ts_cli_open_devices(CMD, &c.devs);
    if (open_rc < 0) return ts_cli_exit_of(open_rc);
    if (o.nengines == 0) {
        o.engines[o.nengines++] = ts_devset_count(c.devs) > 0 ? TS_ENGINE_TILES : TS_ENGINE_CPU;
        o.xt_block[0] = 0;
    }
    if ((rc = open_engines(&c))) goto out;
    if (o.nshapes == 0) default_shapes(&c);
    if ((rc = check_memory(&c))) goto out;

    c.progress_on = o.verbosity >= 0;
    if (c.progress_on) ts_progress_init(&c.prog, stderr, "blas3", total_flops(&c));
    if (o.verbosity >= 0) {
        int nd = ts_devset_count(c.devs);
        if (c.tiles)
            fprintf(c.out, "tiles: %d %s device%s%s, tile %lld\n", nd, ts_backend_name(ts_devset_backend(c.devs)),
                    nd == 1 ? "" : "s", ts_tiles_has_cpu(c.tiles) ? " + CPU worker" : "",
                    (long long)ts_tiles_tile(c.tiles));
        fprintf(c.out, "cpu blas: %s, %d threads\n", ts_cpu_blas_name(), ts_cpu_blas_threads());
    }
    for (int s = 0; s < o.nshapes && rc == 0; s++)
        for (int q = 0; q < o.nprecs && rc == 0; q++) {
            if (alloc_buffers(&c, o.shapes[s], o.precs[q]) < 0 || run_size(&c, o.shapes[s], o.precs[q], &worst) < 0) {
                progress_clear(&c);
                ts_cli_errorf(CMD, "%lldx%lld %c: %s", (long long)o.shapes[s].a, (long long)o.shapes[s].b, o.precs[q],
                              ts_error_string());
                rc = TS_EXIT_RUNTIME;
            }
            free_buffers(&c);
        }
    if (c.progress_on && ts_now() - c.prog.start > 2.0) ts_progress_finish(&c.prog, NULL);
    if (o.verbosity >= 0 && o.verify)
        fprintf(c.out, "check: %d random vectors per result against the CPU-side products of the original operands; "
                       "scaled error bound %.0f (trsm: residual of op(A) X = alpha B)\n", CHECK_NVEC, CHECK_BOUND);
    if (o.json && write_json_file(&c) < 0 && !rc) rc = TS_EXIT_RUNTIME;
    if (!rc) rc = worst;
out:
    free_buffers(&c);
    ts_engines_destroy(c.eng);
    ts_devset_close(c.devs);
    free(c.rows);
    return rc;
}
