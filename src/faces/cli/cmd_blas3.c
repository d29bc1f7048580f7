// cmd_blas3.c: `tessera blas3`: SYMM, SYRK, SYR2K, TRMM, TRSM (and HEMM, HERK, HER2K) benchmarked and verified across engines.
//
// Every routine runs on host-resident operands with each engine asked for (the tile runtime,
// cuBLASXt at one or more block dimensions, the CPU BLAS) on the same random data; the first run of
// each engine is untimed and verified against the original operands by a randomized check with a
// stated bound (docs/cli-blas3.md), the timed runs follow. With --gemm-ref the tile runtime's own
// GEMM at n x n x n is measured too and every routine reports its rate against it (vs_gemm).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/ts_env.h"
#include "core/ts_error.h"
#include "core/ts_rng.h"
#include "faces/cli/ts_cli.h"
#include "faces/cli/ts_bench.h"
#include "faces/cli/ts_cli_opts.h"
#include "kernels/ts_kernels.h"
#include "kernels/ts_l3.h"

#define CMD "blas3"
#define MAX_SHAPES 64
// Random vectors of the check, and the bound of its scaled error (derivation in kernels/cpu/ts_l3_verify.c).
#define CHECK_NVEC 2
#define CHECK_BOUND TS_L3_VERIFY_BOUND

// ---------------------------------------------------------------- routines and engines

#define NROUT TS_L3_COUNT
#define rname(r) ts_l3_name(r)

// ---------------------------------------------------------------- options

typedef ts_bench_shape shape_t; // m, n: m x n of symm/hemm/trmm/trsm, n x k of syrk/herk/syr2k/her2k

typedef struct {
    ts_bench_opts b;                  // precisions, scalars, engines, reps, verification, output (ts_bench.h)
    int routines[NROUT], nroutines;   // in the order of ts_l3_name
    char side, uplo, trans, diag;
    int gemm_ref;
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
        "  --devices N[,N...]  run on the first N devices, each count in turn on the same host data (e.g.\n"
        "                      1,2,4; rows name their count, vs_gemm is against the GEMM of the same count)\n"
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

static int routine_tok(void *ctx, const char *opt, const char *t) {
    b3_opts *o = ctx;
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

// One letter of `choices` (case-insensitive), for --side/--uplo/--trans/--diag.
static int letter_opt(const char *opt, const char *v, const char *choices, char *out) {
    char c = (char)(v[0] & ~0x20);
    if (strlen(v) != 1 || !strchr(choices, c))
        return ts_cli_usage_error(CMD, "%s: '%s' is not one of %s", opt, v, choices);
    *out = c;
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
        for (int p = 0; p < o->b.nprecs; p++) {
            char pr = o->b.precs[p];
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

// The engines of this command, in the order its messages list them.
static const ts_engine blas3_engines[] = {TS_ENGINE_TILES, TS_ENGINE_CUBLASXT, TS_ENGINE_CPU};

// The options of this command alone (ts_bench_parse).
static int own_opt(void *ctx, int argc, char **argv, int *i) {
    b3_opts *o = ctx;
    const char *v;
    int r;
    if (ts_cli_flag(argv[*i], "--gemm-ref", NULL)) return o->gemm_ref = 1, 1;
#define VALUE(name) ((r = ts_cli_value_opt(CMD, argc, argv, i, name, NULL, &v)) != 0)
#define BAD(cond) ((r < 0 || (cond)) ? -1 : 1)
    if (VALUE("--routine")) return BAD(ts_bench_each_token(CMD, o, "--routine", v, routine_tok));
    if (VALUE("--side")) return BAD(letter_opt("--side", v, "LR", &o->side));
    if (VALUE("--uplo")) return BAD(letter_opt("--uplo", v, "LU", &o->uplo));
    if (VALUE("--trans")) return BAD(letter_opt("--trans", v, "NTC", &o->trans));
    if (VALUE("--diag")) return BAD(letter_opt("--diag", v, "NU", &o->diag));
#undef BAD
#undef VALUE
    return 0;
}

static int parse_args(int argc, char **argv, b3_opts *o) {
    memset(o, 0, sizeof *o);
    ts_bench_opts_init(&o->b, CMD, blas3_engines, 3);
    o->side = 'L', o->uplo = 'L', o->trans = 'N', o->diag = 'N';
    o->b.reps = 3;
    o->b.max_shapes = MAX_SHAPES, o->b.shape_parts = 2, o->b.shape_expect = "N or AxB"; // "4096" or "8192x2048"
    int rc = ts_bench_parse(&o->b, argc, argv, usage, own_opt, NULL, o);
    if (rc) return rc;
    int any_routine = 0;
    for (int r = 0; r < NROUT; r++) any_routine |= o->routines[r] != 0;
    if (!any_routine) routine_tok(o, "--routine", "all");
    if (ts_bench_finish_opts(&o->b)) return TS_EXIT_USAGE;
    return check_combinations(o) ? TS_EXIT_USAGE : 0;
}

// ---------------------------------------------------------------- one problem

typedef ts_l3_prob prob;

static prob make_prob(const b3_opts *o, int r, char prec, shape_t s) {
    return ts_l3_prob_make(r, prec, o->side, o->uplo, o->trans, o->diag, s.m, s.n, o->b.alpha, o->b.beta);
}

// ---------------------------------------------------------------- data

// The host buffers (ts_bench's host) shared by every routine of one (size, precision), each big
// enough for all of them: A, B, C0 and W, the result (C, or B of trmm/trsm, in place).
enum { BA, BB, BC0, BW };

static uint64_t data_key(uint64_t seed, const prob *p, int role) {
    uint64_t w[2] = {(uint64_t)p->r * 977, (uint64_t)p->m * 31 ^ (uint64_t)p->n * 131 ^ (uint64_t)p->k * 1031};
    return ts_bench_key(seed, w, 2, p->prec, role);
}

// Uniform [-0.5, 0.5) from a counter-based generator, filled in parallel (single precision
// rounded from the double values, unlike ts_bench_fill).
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

static void setup_data(const b3_opts *o, const prob *p, void *const *b) {
    fill(p->prec, data_key(o->b.seed, p, 1), b[BA], ts_l3_elems_a(p));
    if (ts_l3_is_tri(p->r)) make_triangular_data(p, b[BA]);
    if (ts_l3_elems_b(p)) fill(p->prec, data_key(o->b.seed, p, 2), b[BB], ts_l3_elems_b(p));
    if (!ts_l3_is_tri(p->r)) fill(p->prec, data_key(o->b.seed, p, 3), b[BC0], ts_l3_elems_c(p));
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
    ts_bench_row b; // engine, rates, check, ratio, tiles stats (ts_bench.h)
    int r; // routine, or -1 for the GEMM reference
    char prec;
    shape_t shape;
    char flags[5];
    double flops;
    int outside;
    double vs_gemm; // 0 = none: against the GEMM reference of the same pass (device count)
    int pass;       // --devices item the row ran with
} row_t;

typedef struct {
    ts_bench h;  // devices, engines, rows, progress, output (ts_bench.h)
    b3_opts *o;
    ts_tiles_stats last;
} ctx_t;

// One run of a row (the timed loop's callback): a Level-3 routine (p), or with p NULL the tile
// runtime's GEMM reference (gemm); progress after each run (warm-up runs too when warm_progress).
typedef struct {
    ctx_t *c;
    ts_engine e;
    const prob *p;
    const char *what;
    double flops;
    int warm_progress;
    const ts_scalar *al, *be;
    int64_t n;
    char prec;
} one_run;

static int run_once(void *arg, int timed) {
    const one_run *r = arg;
    ctx_t *c = r->c;
    int rc = r->p ? ts_engines_l3(c->h.eng, r->e, r->p, c->h.host[BA], c->h.host[BB], c->h.host[BW], &c->last)
                  : ts_engines_gemm(c->h.eng, NULL, TS_ENGINE_TILES, r->prec, 'N', 'N', r->n, r->n, r->n, r->al,
                                    c->h.host[BA], r->n, c->h.host[BB], r->n, r->be, c->h.host[BW], r->n, &c->last);
    if (rc >= 0 && (timed || r->warm_progress)) ts_bench_progress(&c->h, r->flops, r->what);
    return rc;
}

// The result buffer back to the inputs: C0 for symm/syrk/syr2k, B0 for trmm/trsm (in place).
static void reset_result(ctx_t *c, const prob *p) {
    if (ts_l3_is_tri(p->r)) ts_bench_copy(c->h.host[BW], c->h.host[BB], ts_l3_elems_c(p) * ts_prec_size(p->prec));
    else ts_bench_copy(c->h.host[BW], c->h.host[BC0], ts_l3_elems_c(p) * ts_prec_size(p->prec));
}

// ---------------------------------------------------------------- rows

// One engine on one routine: the checked run (untimed, from the original operands), then the
// warmup and the timed runs on the result of the previous one (as ts_gemm's reps: no reset in between).
static int run_row(ctx_t *c, const prob *p, const ts_l3_verify *cr, row_t *row) {
    b3_opts *o = c->o;
    int pins[3], rc = 0;
    double *sec = NULL;
    TS_CHECK_GOTO(ts_bench_xt_begin(&c->h, &row->b, BA, BB, BW, pins), rc, out);
    sec = malloc(sizeof(double) * (size_t)row->b.reps);
    if (!sec) TS_CHECK_GOTO(TS_ERROR(TS_ERR_NOMEM, "out of host memory"), rc, out);
    char what[96];
    snprintf(what, sizeof what, "%s %c %s", rname(p->r), p->prec, ts_engines_name(row->b.engine));
    one_run run = {.c = c, .e = row->b.engine, .p = p, .what = what, .flops = p->flops, .warm_progress = 1};
    reset_result(c, p);
    TS_CHECK_GOTO(run_once(&run, 1), rc, out);
    if (o->b.verify) {
        maybe_corrupt(p, c->h.host[BW]);
        row->b.error = ts_l3_verify_error(cr, c->h.host[BW], &row->outside);
        row->b.verified = 1, row->b.bound = CHECK_BOUND;
        row->b.passed = row->b.error <= CHECK_BOUND;
    }
    TS_CHECK_GOTO(ts_bench_time_host(o->b.warmup, row->b.reps, run_once, &run, sec), rc, out);
    ts_bench_set_rates(&row->b, row->flops, sec);
    char path[1024]; // --trace PREFIX: PREFIX-ROUTINE-PREC-MxN.json
    snprintf(path, sizeof path, "%s-%s-%c-%lldx%lld.json", o->b.trace ? o->b.trace : "", rname(p->r), p->prec,
             (long long)p->rc, (long long)p->n);
    if (row->b.engine == TS_ENGINE_TILES)
        TS_CHECK_GOTO(ts_bench_row_tiles(&c->h, &row->b, &c->last, o->b.trace ? path : NULL), rc, out);
out:
    ts_bench_xt_end(&c->h, pins);
    free(sec);
    return rc;
}

// The tile runtime's GEMM at n x n x n (alpha, beta as given) on the same buffers, checked with
// Freivalds (ts_gemm_verify, bound TS_GEMM_VERIFY_BOUND).
static int run_gemm_ref(ctx_t *c, char prec, int64_t n, row_t *row, int make_data) {
    b3_opts *o = c->o;
    ts_scalar al = ts_scalar_of(prec, o->b.alpha[0], ts_prec_is_complex(prec) ? o->b.alpha[1] : 0);
    ts_scalar be = ts_scalar_of(prec, o->b.beta[0], ts_prec_is_complex(prec) ? o->b.beta[1] : 0);
    prob p = {.r = TS_L3_SYMM, .prec = prec, .m = n, .n = n, .k = n};
    size_t es = ts_prec_size(prec), bytes = (size_t)n * (size_t)n * es;
    uint64_t key = data_key(o->b.seed ^ 0x6e33ULL, &p, 0);
    if (make_data) { // the first pass; the others reuse A, B and C0
        fill(prec, key + 1, c->h.host[BA], (size_t)n * (size_t)n);
        fill(prec, key + 2, c->h.host[BB], (size_t)n * (size_t)n);
        fill(prec, key + 3, c->h.host[BC0], (size_t)n * (size_t)n);
    }
    ts_bench_copy(c->h.host[BW], c->h.host[BC0], bytes);
    double *sec = malloc(sizeof(double) * (size_t)row->b.reps);
    if (!sec) return TS_ERROR(TS_ERR_NOMEM, "out of host memory");
    int rc = 0;
    one_run run = {c, TS_ENGINE_TILES, NULL, "gemm reference", row->flops, 0, &al, &be, n, prec};
    TS_CHECK_GOTO(run_once(&run, 1), rc, out);
    if (o->b.verify) {
        double err = NAN;
        int ok = ts_gemm_verify(prec, 'N', 'N', n, n, n, &al, c->h.host[BA], n, c->h.host[BB], n, &be, c->h.host[BC0], n, c->h.host[BW], n,
                                CHECK_NVEC, o->b.seed ^ 0x5eed, TS_GEMM_VERIFY_BOUND, &err);
        row->b.verified = 1, row->b.error = err, row->b.passed = ok == 1 && err == err;
        row->b.bound = TS_GEMM_VERIFY_BOUND;
    }
    TS_CHECK_GOTO(ts_bench_time_host(o->b.warmup, row->b.reps, run_once, &run, sec), rc, out);
    ts_bench_set_rates(&row->b, row->flops, sec);
    ts_bench_row_tiles(&c->h, &row->b, &c->last, NULL);
out:
    free(sec);
    return rc;
}

// ---------------------------------------------------------------- output

static void print_header(ctx_t *c) {
    if (c->o->b.verbosity < 0 || !ts_bench_header_due(&c->h)) return;
    fprintf(c->h.out, "%-6s %-2s %-13s %-4s %-13s %10s %10s %9s %7s %7s %9s %6s %s\n", "rout", "p", "size", "flag",
            "engine", "median_ms", "min_ms", "TFLOP/s", "ratio", "vs_gemm", "error", "bound", "check");
}

static void print_row(void *ctx, void *row) {
    ctx_t *c = ctx;
    const row_t *r = row;
    if (ts_bench_row_hidden(&c->h, &r->b)) return;
    print_header(c);
    char size[32], vsg[16] = "-";
    ts_bench_cells x;
    ts_bench_row_cells(&c->h, &r->b, r->b.engine, "%.0f", &x);
    if (r->r < 0) snprintf(size, sizeof size, "%lldx%lldx%lld", (long long)r->shape.m, (long long)r->shape.m,
                           (long long)r->shape.m);
    else snprintf(size, sizeof size, "%lldx%lld", (long long)r->shape.m, (long long)r->shape.n);
    if (r->vs_gemm > 0 && !r->b.failed) snprintf(vsg, sizeof vsg, "%.2fx", r->vs_gemm);
    fprintf(c->h.out, "%-6s %-2c %-13s %-4s %-13s %10s %10s %9s %7s %7s %9s %6s %s%s\n", r->r < 0 ? "gemm" : rname(r->r),
            r->prec, size, r->flags, x.engine, x.med, x.min, x.tf, x.ratio, vsg, x.error, x.bound, x.check,
            r->outside && !r->b.failed ? " (wrote outside its triangle)" : "");
    if (!r->b.failed && r->b.has_tiles && c->o->b.verbosity > 0) ts_bench_print_tiles_brief(&c->h, &r->b.tiles);
}

static void write_json(ts_bench *b, ts_json *j) {
    ctx_t *c = (ctx_t *)b; // its first member
    ts_results_begin(j, "tessera blas3", 1, ts_devset_json, ts_devset_count(c->h.devs) ? c->h.devs : NULL);
    for (int i = 0; i < c->h.nrows; i++) {
        const row_t *r = TS_BENCH_ROW(&c->h, i, row_t);
        if (r->b.failed) continue;
        ts_bench_json_entry_begin(j, &r->b, r->r < 0 ? "gemm" : "blas3", r->prec, "host");
        ts_json_begin_object(j, "shape");
        if (r->r < 0) {
            ts_json_int(j, "m", r->shape.m), ts_json_int(j, "n", r->shape.m), ts_json_int(j, "k", r->shape.m);
            ts_json_str(j, "transa", "N"), ts_json_str(j, "transb", "N");
        } else {
            char s1[2] = {r->flags[0], 0}, s2[2] = {r->flags[1], 0}, s3[2] = {r->flags[2], 0}, s4[2] = {r->flags[3], 0};
            ts_json_str(j, "routine", rname(r->r));
            if (ts_l3_is_rk(r->r) || ts_l3_is_r2k(r->r)) ts_json_int(j, "n", r->shape.m), ts_json_int(j, "k", r->shape.n);
            else ts_json_int(j, "m", r->shape.m), ts_json_int(j, "n", r->shape.n);
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
        ts_bench_json_common(&c->h, j, &r->b);
        if (r->b.ratio > 0) ts_json_num(j, "ratio", r->b.ratio);
        if (r->vs_gemm > 0) ts_json_num(j, "vs_gemm", r->vs_gemm);
        if (r->b.has_tiles) ts_tiles_stats_json(j, &r->b.tiles);
        if (r->b.verified) ts_json_bool(j, "passed", r->b.passed);
        ts_json_end_object(j);
        ts_results_entry_end(j);
    }
    ts_results_end(j);
}

// ---------------------------------------------------------------- the command

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
            if ((size_t)s.m * (size_t)s.m * es > bytes[q]) bytes[q] = (size_t)s.m * (size_t)s.m * es;
}

// The host memory of one (size, precision) (ts_bench_check_sizes).
static void memory_need(void *ctx, shape_t s, char prec, double *host, double *dev) {
    size_t b[4];
    buffer_bytes(ctx, s, prec, b);
    *host = (double)b[0] + (double)b[1] + (double)b[2] + (double)b[3], *dev = 0;
}

static int open_engines(ctx_t *c) {
    b3_opts *o = c->o;
    int need_tiles = o->gemm_ref, rc;
    for (int i = 0; i < o->b.nengines; i++) {
        if (o->b.engines[i] == TS_ENGINE_TILES) need_tiles = 1;
        if (o->b.engines[i] == TS_ENGINE_CUBLASXT && (rc = ts_bench_open(&c->h, TS_ENGINE_CUBLASXT, "--engine cublasxt")))
            return rc;
    }
    if (!need_tiles) return 0;
    return ts_bench_open(&c->h, TS_ENGINE_TILES, o->gemm_ref ? "--gemm-ref (the tile runtime)" : "--engine tiles");
}

static void default_shapes(ctx_t *c) {
    b3_opts *o = c->o;
    int ndev = ts_devset_count(c->h.devs);
    if (ndev > 0 && ts_devset_backend(c->h.devs) == TS_BACKEND_CUDA) {
        o->b.shapes[o->b.nshapes++] = (shape_t){8192, 8192, 0};
        o->b.shapes[o->b.nshapes++] = (shape_t){16384, 16384, 0};
    } else {
        int64_t n = ndev > 0 ? 512 : 1024;
        o->b.shapes[o->b.nshapes++] = (shape_t){n, n, 0};
    }
}

// One routine's row of one engine and pass (ts_bench_engine_rows).
typedef struct {
    ctx_t *c;
    const prob *p;
    const ts_l3_verify *cr;
    shape_t s;
} routine_rows;

static int routine_row(void *ctx, void *r, int e, int pass, char *what, size_t len) {
    routine_rows *g = ctx;
    row_t *row = r;
    (void)e;
    row->r = g->p->r, row->prec = g->p->prec, row->shape = g->s, row->flops = g->p->flops, row->pass = pass;
    ts_l3_flags(g->p, row->flags);
    snprintf(what, len, "%s %c %s", rname(row->r), row->prec, ts_engines_name(row->b.engine));
    return run_row(g->c, g->p, g->cr, row);
}

// Every routine and engine on one (size, precision) (ts_bench_sizes): the operands, the GEMM
// reference rows (one per pass), then every routine with every engine and pass: the routine's
// data and check vectors are made once and serve every pass.
static int run_size(void *ctx, shape_t s, char prec, int *worst) {
    ctx_t *c = ctx;
    b3_opts *o = c->o;
    int npass = ts_bench_npasses(&c->h);
    double gemm_tf[TS_BENCH_MAX_COUNTS] = {0};
    size_t bytes[4];
    buffer_bytes(o, s, prec, bytes);
    TS_CHECK(ts_bench_buffers(&c->h, bytes, 4, 0, 0));
    for (int pass = 0; pass < npass && o->gemm_ref; pass++) {
        if (ts_bench_use_pass(&c->h, pass) < 0) return ts_error_last()->code;
        row_t *row = ts_bench_new_row(&c->h);
        if (!row) return TS_ERROR(TS_ERR_NOMEM, "out of host memory");
        row->r = -1, row->prec = prec, row->shape = s, row->b.engine = TS_ENGINE_TILES, row->b.reps = o->b.reps;
        row->b.ndev = ts_bench_row_devices(&c->h, TS_ENGINE_TILES);
        strcpy(row->flags, "NN");
        row->flops = 2.0 * (double)s.m * (double)s.m * (double)s.m * (ts_prec_is_complex(prec) ? 4 : 1);
        if (run_gemm_ref(c, prec, s.m, row, pass == 0) < 0) ts_bench_row_failed(&c->h, &row->b, "gemm reference", worst);
        else gemm_tf[pass] = row->b.tf_med;
        ts_bench_row_done(&row->b, worst);
        ts_bench_progress_clear(&c->h);
        print_row(c, row);
    }
    for (int r = 0; r < NROUT; r++) {
        if (!routine_runs(o, r, prec)) continue;
        prob p = make_prob(o, r, prec, s);
        setup_data(o, &p, c->h.host);
        ts_l3_verify *cr = NULL;
        if (o->b.verify && ts_l3_verify_prepare(&p, c->h.host[BA], c->h.host[BB], c->h.host[BC0], CHECK_NVEC, o->b.seed, &cr) < 0)
            return ts_error_last()->code;
        int first = c->h.nrows;
        routine_rows g = {c, &p, cr, s};
        int rc = ts_bench_engine_rows(&c->h, NULL, routine_row, &g, worst);
        ts_l3_verify_free(cr);
        if (rc < 0) return rc;
        for (int i = first; i < c->h.nrows; i++) {
            row_t *q = TS_BENCH_ROW(&c->h, i, row_t);
            if (gemm_tf[q->pass] > 0 && !q->b.failed) q->vs_gemm = q->b.tf_med / gemm_tf[q->pass];
        }
        ts_bench_print_rows(&c->h, first, print_row, c);
    }
    return 0;
}

static double total_flops(ctx_t *c) {
    b3_opts *o = c->o;
    double t = 0;
    for (int s = 0; s < o->b.nshapes; s++)
        for (int q = 0; q < o->b.nprecs; q++) {
            int runs = 1 + o->b.warmup + o->b.reps;
            if (o->gemm_ref)
                t += 2.0 * pow((double)o->b.shapes[s].m, 3) * (ts_prec_is_complex(o->b.precs[q]) ? 4 : 1) * (1 + o->b.reps);
            for (int r = 0; r < NROUT; r++)
                if (routine_runs(o, r, o->b.precs[q])) t += make_prob(o, r, o->b.precs[q], o->b.shapes[s]).flops * runs * o->b.nengines;
        }
    return t * ts_bench_npasses(&c->h);
}

int ts_cmd_blas3(int argc, char **argv) {
    b3_opts o;
    int rc = parse_args(argc, argv, &o);
    if (rc == -1) return TS_EXIT_OK; // --help
    if (rc) return rc;
    ctx_t c;
    memset(&c, 0, sizeof c);
    c.o = &o;
    int worst = TS_EXIT_OK;
    if ((rc = ts_bench_begin(&c.h, &o.b, sizeof(row_t), 0))) goto out;
    if (o.b.nengines == 0) {
        o.b.engines[o.b.nengines++] = ts_devset_count(c.h.devs) > 0 ? TS_ENGINE_TILES : TS_ENGINE_CPU;
        o.b.xt_block[0] = 0;
    }
    if ((rc = open_engines(&c))) goto out;
    if ((rc = ts_bench_check_counts(&c.h))) goto out;
    if (o.b.nshapes == 0) default_shapes(&c);
    if ((rc = ts_bench_check_sizes(&c.h, memory_need, &o))) goto out;

    ts_bench_progress_start(&c.h, o.b.verbosity >= 0, total_flops(&c));
    if (ts_bench_print_setup(&c.h)) fprintf(c.h.out, "cpu blas: %s, %d threads\n", ts_cpu_blas_name(), ts_cpu_blas_threads());
    rc = ts_bench_sizes(&c.h, run_size, &c, &worst);
    if (o.b.verbosity >= 0 && o.b.verify)
        fprintf(c.h.out, "check: %d random vectors per result against the CPU-side products of the original operands; "
                         "scaled error bound %.0f (trsm: residual of op(A) X = alpha B)\n", CHECK_NVEC, CHECK_BOUND);
    rc = ts_bench_finish(&c.h, write_json, rc, worst);
out:
    ts_bench_end(&c.h);
    return rc;
}
