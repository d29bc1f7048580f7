// cmd_gemm.c: `tessera gemm`: GEMM benchmark, verification and side-by-side engine comparison.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ts_env.h"
#include "core/ts_error.h"
#include "faces/cli/ts_cli.h"
#include "faces/cli/ts_bench.h"
#include "faces/cli/ts_cli_opts.h"
#include "kernels/ts_kernels.h"

#define CMD "gemm"
#define MAX_SHAPES TS_BENCH_MAX_SHAPES
#define MAX_OPS 16
#define MAX_ENGINES TS_BENCH_MAX_ENGINES

// Full recomputation with the reference kernel is done when m*n*k is at most this.
#define REF_CHECK_MAX_MNK (1LL << 27)
// Freivalds check: random vectors and the bound its scaled error is held to (the error is
// normalised by k*eps and the operand norms; the bound's derivation is in ts_gemm_verify.c).
#define FREIVALDS_NVEC 2
#define FREIVALDS_BOUND TS_GEMM_VERIFY_BOUND
// Full recomputation: ||C - Cref||_F / ((|alpha| ||A||_F ||B||_F + |beta| ||C0||_F) * k * eps).
// The worst-case rounding bound of either result is about k*eps times the denominator's terms;
// random data stays orders of magnitude below 1.
#define REF_BOUND 1.0

typedef ts_bench_shape shape_t;

typedef struct {
    ts_bench_opts b; // precisions, scalars, engines, reps, verification, output (ts_bench.h)
    char ops[MAX_OPS][2];
    int nops;
    int row_major;
    int where_host;
    int interleave;   // device engines take turns rep by rep (--interleave)
    int64_t lda, ldb, ldc; // 0 = tight
} gemm_opts;

typedef struct {
    ts_bench_row b; // engine (the one that ran), rates, check, ratio, tiles stats (ts_bench.h)
    shape_t shape;
    char prec, ta, tb;
    ts_engine requested;
    int host; // operands in host memory (where = host)
    ts_gemm_check_result chk;
    int interleaved; // timed in turns with the group's other engines (--interleave)
} gemm_row;

// The operand buffers (ts_bench's host and dbuf): A, B, C (the result) on both sides, C0 (the
// initial C) and Cref (the reference result) on the host.
enum { OA, OB, OC, OC0, OREF };

// Everything one run needs: the harness (devices, engines, rows, progress, stream, operands).
typedef struct {
    ts_bench h;
    gemm_opts *o;
    int cref_valid; // hCref holds the reference result of the current group
    const ts_engine *resolved; // the engines that run
    ts_tiles_stats tiles_last; // engine tiles: its last call
} gemm_ctx;

static void usage(FILE *f) {
    fprintf(f,
        "usage: tessera gemm [options] [SIZES]\n"
        "  SIZES               M or MxNxK items (e.g. 4096 8192x8192x256); default: 4096 8192 on a GPU,\n"
        "                      256 512 on simulated devices, 1024 2048 on the CPU\n"
        "  --sweep A:B:S       sizes from A to B by step S (or xF: geometric), e.g. 1024:8192:x2\n"
        "  -m/-n/-k N          set a dimension (overrides the sizes above for that dimension)\n"
        "  --prec s|d|c|z      precision, comma list allowed (default d)\n"
        "  --transa/--transb N|T|C, or --ops NN,NT,...   operations (default NN)\n"
        "  --alpha/--beta RE[,IM]   scalars (default 1 and 1)\n"
        "  --layout col|row    storage order (row: computed as the transposed column-major problem)\n"
        "  --lda/--ldb/--ldc N leading dimensions (default: tight)\n"
        "  --engine E[,E...]   cpu|cublas|tessera|tiles|cublasxt|ref|auto, run side by side on the same data\n"
        "                      (tiles, cublasxt: operands in host memory, every device of the set;\n"
        "                      default: cublas on a GPU machine, cpu otherwise)\n"
        "  --xt-block N[,N...] cuBLASXt block dimension, one row each (default 4096)\n"
        "  --devices N[,N...]  tiles, cublasxt: run on the first N devices, each count in turn on the same\n"
        "                      host operands (e.g. 1,2,4; rows name their count; default: every device)\n"
        "  --trace FILE.json   engine tiles: timeline of its last timed run (Chrome trace format; with\n"
        "                      --devices one per count, FILE-Ndev.json)\n"
        "  --where device|host operands resident on the device, or in host memory with the transfers\n"
        "                      timed in (device engines)\n"
        "  --warmup N          untimed runs first (default 2)\n"
        "  --reps N            timed runs (default 10 on a device, 3 on the CPU)\n"
        "  --interleave        device engines take turns, one timed run each, the order reversed\n"
        "                      every round, so that clock and temperature drift falls on all alike\n"
        "                      (default: each engine's runs back to back)\n"
        "  --no-verify         skip verification (reported as SKIPPED / verified false)\n"
        "  --device I          which device (default 0)\n"
        "  --seed S            data seed (default 1)\n"
        "  --json FILE         write results (results schema; '-' = stdout)\n"
        "  -q / -v             quieter / more verbose\n"
        "exit: 0 ok, 1 a verification failed, 2 bad usage or does not fit, 3 runtime failure\n");
}

// ---------------------------------------------------------------- parsing

static int op_letter(char c, char *out) {
    c = (char)(c & ~0x20); // upper case
    if (c != 'N' && c != 'T' && c != 'C') return -1;
    *out = c;
    return 0;
}

static int ops_tok(void *ctx, const char *opt, const char *t) {
    gemm_opts *o = ctx;
    char a, b;
    if (strlen(t) != 2 || op_letter(t[0], &a) || op_letter(t[1], &b))
        return ts_cli_usage_error(CMD, "%s: unknown op '%s' (two letters of N, T, C, e.g. NN,NT,TN)", opt, t);
    if (o->nops >= MAX_OPS) return ts_cli_usage_error(CMD, "%s: too many ops (at most %d)", opt, MAX_OPS);
    o->ops[o->nops][0] = a, o->ops[o->nops][1] = b, o->nops++;
    return 0;
}

// The engines of this command, in the order its messages list them.
static const ts_engine gemm_engines[] = {TS_ENGINE_CPU, TS_ENGINE_CUBLAS, TS_ENGINE_TESSERA, TS_ENGINE_TILES,
                                         TS_ENGINE_CUBLASXT, TS_ENGINE_REF, TS_ENGINE_AUTO};

// What the command line says beyond the options (resolved after all of them).
typedef struct {
    gemm_opts *o;
    const char *ta, *tb;
    int ops_given;
} gemm_args;

// The options of this command alone (ts_bench_parse).
static int own_opt(void *ctx, int argc, char **argv, int *i) {
    gemm_args *g = ctx;
    gemm_opts *o = g->o;
    const char *v;
    int r;
    if (ts_cli_flag(argv[*i], "--interleave", NULL)) return o->interleave = 1, 1;
#define VALUE(name, alias) ((r = ts_cli_value_opt(CMD, argc, argv, i, name, alias, &v)) != 0)
#define KEEP(where) (r < 0 ? -1 : ((where) = v, 1))
    if (VALUE("--transa", NULL)) return KEEP(g->ta);
    if (VALUE("--transb", NULL)) return KEEP(g->tb);
    if (VALUE("--ops", NULL)) {
        if (r < 0 || ts_bench_each_token(CMD, o, "--ops", v, ops_tok)) return -1;
        return g->ops_given = 1;
    }
#define CHOICE(where, name, noun, a, b) \
    (r < 0 || (r = ts_bench_choice(CMD, name, noun, v, a, b)) < 0 ? -1 : ((where) = r, 1))
    if (VALUE("--layout", NULL)) return CHOICE(o->row_major, "--layout", "layout", "col", "row");
    if (VALUE("--where", NULL)) return CHOICE(o->where_host, "--where", "placement", "device", "host");
    if (VALUE("--lda", NULL)) return r < 0 || ts_cli_i64(CMD, "--lda", v, 1, &o->lda) ? -1 : 1;
    if (VALUE("--ldb", NULL)) return r < 0 || ts_cli_i64(CMD, "--ldb", v, 1, &o->ldb) ? -1 : 1;
    if (VALUE("--ldc", NULL)) return r < 0 || ts_cli_i64(CMD, "--ldc", v, 1, &o->ldc) ? -1 : 1;
#undef CHOICE
#undef KEEP
#undef VALUE
    return 0;
}

static int parse_args(int argc, char **argv, gemm_opts *o) {
    gemm_args g = {.o = o};
    memset(o, 0, sizeof *o);
    ts_bench_opts_init(&o->b, CMD, gemm_engines, (int)(sizeof gemm_engines / sizeof gemm_engines[0]));
    o->b.warmup = 2, o->b.device_opt = 1;
    o->b.max_shapes = MAX_SHAPES, o->b.shape_parts = 3, o->b.shape_expect = "M or MxNxK"; // "4096" or "8192x8192x256"
    int rc = ts_bench_parse(&o->b, argc, argv, usage, own_opt, NULL, &g);
    const char *ta = g.ta, *tb = g.tb;
    if (rc) return rc;
    if (g.ops_given && (ta || tb))
        return ts_cli_usage_error(CMD, "use either --ops or --transa/--transb, not both");
    if (!g.ops_given) {
        char a = 'N', b = 'N';
        if (ta && (strlen(ta) != 1 || op_letter(ta[0], &a)))
            return ts_cli_usage_error(CMD, "--transa: unknown op '%s' (choose N, T or C)", ta);
        if (tb && (strlen(tb) != 1 || op_letter(tb[0], &b)))
            return ts_cli_usage_error(CMD, "--transb: unknown op '%s' (choose N, T or C)", tb);
        o->ops[0][0] = a, o->ops[0][1] = b, o->nops = 1;
    }
    return ts_bench_finish_opts(&o->b);
}

// ---------------------------------------------------------------- problem geometry

// One GEMM in column-major terms (row-major problems are transposed); cols: stored columns of A and B.
static ts_gemm_desc make_colprob(const gemm_opts *o, shape_t s, const char ops[2], int64_t cols[2]) {
    ts_gemm_desc p = {0};
    ts_gemm_desc_layout(&p, o->row_major, ops[0], ops[1], s.m, s.n, s.k, o->lda, o->ldb, o->ldc, cols);
    return p;
}

// The user's leading dimension options against what each operand needs.
static int check_lds(const gemm_opts *o, shape_t s, const char ops[2]) {
    int64_t cols[2];
    ts_gemm_desc p = make_colprob(o, s, ops, cols);
    int64_t ld[2] = {p.lda, p.ldb}, need[2] = {p.ta == 'N' ? p.m : p.k, p.tb == 'N' ? p.k : p.n};
    const char *what = o->row_major ? "columns" : "rows";
    for (int q = 0; q < 2; q++) { // q: A, B of the column-major problem (B, A of a row-major one)
        int user_a = (q == 0) != o->row_major;
        if (ld[q] < need[q])
            return ts_cli_usage_error(CMD, "%s %lld is smaller than the %s of %c (%lld) for %lldx%lldx%lld %c%c",
                                      user_a ? "--lda" : "--ldb", (long long)ld[q], what, user_a ? 'A' : 'B',
                                      (long long)need[q], (long long)s.m, (long long)s.n, (long long)s.k, ops[0], ops[1]);
    }
    if (p.ldc < p.m)
        return ts_cli_usage_error(CMD, "--ldc %lld is smaller than the %s of C (%lld)", (long long)p.ldc, what,
                                  (long long)p.m);
    return 0;
}

// Elements of the A, B, C buffers of one (shape, precision): the most any op needs.
static void buffer_elems(const gemm_opts *o, shape_t s, double *ea, double *eb, double *ec) {
    *ea = *eb = *ec = 0;
    for (int i = 0; i < o->nops; i++) {
        int64_t cols[2];
        ts_gemm_desc p = make_colprob(o, s, o->ops[i], cols);
        double a = (double)p.lda * (double)cols[0], b = (double)p.ldb * (double)cols[1];
        double c = (double)p.ldc * (double)p.n;
        if (a > *ea) *ea = a;
        if (b > *eb) *eb = b;
        if (c > *ec) *ec = c;
    }
}

static double gemm_flops(char prec, shape_t s) { return ts_gemm_flops(prec, s.m, s.n, s.k); }

static int needs_ref(const gemm_opts *o, shape_t s) {
    return o->b.verify && (double)s.m * (double)s.n * (double)s.k <= (double)REF_CHECK_MAX_MNK;
}

// --devices with beta 0, verified, no full recomputation: C0 is never read (every row checks its
// last run, which time_host then starts from NaN, and the check ignores C0 when beta is 0), so it
// is not made (must match last_run_checked): a third less host memory to pin and fill at the
// sizes that take the most.
static int no_c0(const gemm_opts *o, shape_t s) {
    return o->b.ncounts > 0 && o->b.verify && o->b.beta[0] == 0 && o->b.beta[1] == 0 && !needs_ref(o, s);
}

// The memory of one (shape, precision) (ts_bench_check_sizes): host and device operands.
static void memory_need(void *ctx, shape_t s, char prec, double *host, double *dev) {
    const gemm_opts *o = ctx;
    double ea, eb, ec, es = (double)ts_prec_size(prec);
    buffer_elems(o, s, &ea, &eb, &ec);
    *host = (ea + eb + (no_c0(o, s) ? 1 : 2) * ec) * es + (needs_ref(o, s) ? ec * es : 0);
    *dev = (ea + eb + ec) * es + 3 * 256.0;
}

// ---------------------------------------------------------------- data

// Host operands of one (shape, precision), random in [-0.5, 0.5); device copies of A and B.
static int setup_buffers(gemm_ctx *c, shape_t s, char prec) {
    double ea, eb, ec;
    size_t es = ts_prec_size(prec);
    buffer_elems(c->o, s, &ea, &eb, &ec);
    size_t bc = (size_t)ec * es, bytes[5] = {(size_t)ea * es, (size_t)eb * es, bc, no_c0(c->o, s) ? 0 : bc,
                                             needs_ref(c->o, s) ? bc : 0};
    uint64_t words[3] = {(uint64_t)s.m, (uint64_t)s.n * 31, (uint64_t)s.k * 131};
    TS_CHECK(ts_bench_buffers(&c->h, bytes, 5, 0, 0));
    for (int q = 0; q < 4; q++) // roles: A 1, B 2, C0 3
        if (q != OC && bytes[q])
            ts_bench_fill(prec, ts_bench_key(c->o->b.seed, words, 3, prec, q == OC0 ? 3 : q + 1), c->h.host[q], bytes[q]);
    return ts_bench_buffers(&c->h, bytes, 0, 3, 2);
}

// ---------------------------------------------------------------- running

typedef struct {
    char prec;
    ts_gemm_desc p; // its letters, dimensions and leading dimensions
    ts_scalar alpha, beta;
} job;

// One GEMM of a row (the timed loops' callback): engine e on job j; on the device with operands in
// host memory (host) the copies in and out are part of it.
typedef struct {
    gemm_ctx *c;
    ts_engine e;
    const job *j;
    int host;
} one_run;

// Runs one GEMM on the host operands, result in hC.
static int run_host_once(void *arg, int timed) {
    const one_run *r = arg;
    const ts_gemm_desc *p = &r->j->p;
    gemm_ctx *c = r->c;
    (void)timed;
    return ts_engines_gemm(c->h.eng, NULL, r->e, r->j->prec, p->ta, p->tb, p->m, p->n, p->k, &r->j->alpha, c->h.host[OA],
                           p->lda, c->h.host[OB], p->ldb, &r->j->beta, c->h.host[OC], p->ldc,
                           r->e == TS_ENGINE_TILES ? &c->tiles_last : NULL);
}

// Enqueues one device GEMM.
static int enqueue_device_once(void *arg, int timed) {
    const one_run *r = arg;
    const ts_gemm_desc *p = &r->j->p;
    gemm_ctx *c = r->c;
    (void)timed;
    if (r->host) TS_CHECK(ts_bench_upload(&c->h, OA, 3)); // A, B, C
    TS_CHECK(ts_engines_gemm(c->h.eng, c->h.st, r->e, r->j->prec, p->ta, p->tb, p->m, p->n, p->k, &r->j->alpha, c->h.dbuf[OA],
                             p->lda, c->h.dbuf[OB], p->ldb, &r->j->beta, c->h.dbuf[OC], p->ldc, NULL));
    if (r->host) TS_CHECK(ts_copy_async(c->h.st, TS_COPY_D2H, c->h.host[OC], c->h.dbuf[OC], c->h.bytes[OC]));
    return 0;
}

static int last_run_checked(const gemm_ctx *c, const job *j, int on_host);

static int time_host(gemm_ctx *c, ts_engine e, const job *j, int reps, double *sec) {
    one_run r = {c, e, j, 0};
    if (last_run_checked(c, j, 1)) ts_bench_set(c->h.host[OC], 0xff, c->h.bytes[OC]); // the last run's C is checked
    else ts_bench_copy(c->h.host[OC], c->h.host[OC0], c->h.bytes[OC]);
    return ts_bench_time_host(c->o->b.warmup, reps, run_host_once, &r, sec);
}

static int time_device(gemm_ctx *c, ts_engine e, const job *j, int host, int warmup, int reps, double *sec) {
    one_run r = {c, e, j, host};
    if (host) ts_bench_copy(c->h.host[OC], c->h.host[OC0], c->h.bytes[OC]);
    else TS_CHECK(ts_copy_async(c->h.st, TS_COPY_H2D, c->h.dbuf[OC], c->h.host[OC0], c->h.bytes[OC]));
    return ts_bench_time_stream(c->h.st, warmup, reps, enqueue_device_once, &r, sec);
}

// The checked run: C reset from C0 (or poisoned with NaN when beta is zero, so that elements the
// engine does not write fail), one GEMM, result into hC.
static int checked_run(gemm_ctx *c, ts_engine e, const job *j, int on_host, int host_operands) {
    int beta_zero = j->beta.d[0] == 0 && j->beta.d[1] == 0;
    one_run r = {c, e, j, host_operands};
    if (on_host || host_operands) {
        if (beta_zero) ts_bench_set(c->h.host[OC], 0xff, c->h.bytes[OC]);
        else ts_bench_copy(c->h.host[OC], c->h.host[OC0], c->h.bytes[OC]);
    }
    if (on_host) return run_host_once(&r, 0);
    if (!host_operands) {
        if (beta_zero) TS_CHECK(ts_memset_async(c->h.st, c->h.dbuf[OC], 0xff, c->h.bytes[OC]));
        else TS_CHECK(ts_copy_async(c->h.st, TS_COPY_H2D, c->h.dbuf[OC], c->h.host[OC0], c->h.bytes[OC]));
    }
    TS_CHECK(enqueue_device_once(&r, 0));
    if (!host_operands) TS_CHECK(ts_copy_async(c->h.st, TS_COPY_D2H, c->h.host[OC], c->h.dbuf[OC], c->h.bytes[OC]));
    return ts_stream_sync(c->h.st);
}

// Test hook: TESSERA_TEST_CORRUPT_GEMM=1 adds 1e6 to one element of the checked result (large
// enough that Freivalds catches it even in single precision at large k).
static void maybe_corrupt(const job *j, void *C) {
    const char *v = ts_env_str("TESSERA_TEST_CORRUPT_GEMM");
    if (v && !strcmp(v, "1")) ts_bench_corrupt(j->prec, C, j->p.m / 2 + (j->p.n / 2) * j->p.ldc);
}

// Freivalds on every result; full recomputation with the reference kernel (once per group) where
// m*n*k is small enough (ts_gemm_check).
static void verify_row(gemm_ctx *c, const job *j, shape_t s, gemm_row *row) {
    const gemm_opts *o = c->o;
    ts_gemm_desc g = j->p;
    g.prec = j->prec, g.A = c->h.host[OA], g.B = c->h.host[OB], g.C0 = c->h.host[OC0];
    memcpy(g.alpha, o->b.alpha, sizeof g.alpha), memcpy(g.beta, o->b.beta, sizeof g.beta);
    ts_gemm_check(&g, c->h.host[OC], FREIVALDS_NVEC, o->b.seed ^ 0x5eed, FREIVALDS_BOUND, needs_ref(o, s) ? c->h.host[OREF] : NULL,
                  &c->cref_valid, REF_BOUND, &row->chk);
    row->b.error = row->chk.error, row->b.bound = row->chk.bound;
    row->b.passed = row->chk.passed, row->b.verified = 1;
}

// ---------------------------------------------------------------- one row

static int default_reps(gemm_ctx *c, ts_engine e) {
    if (c->o->b.reps > 0) return c->o->b.reps;
    return ts_bench_row_on_host(&c->h, e) ? 3 : 10;
}

// --devices with beta 0 on the host: C is poisoned (NaN) before the row's runs and the result of its
// last timed run is the one checked (every run writes all of C from A and B alone), which saves a
// run per row at the sizes where a run takes seconds.
static int last_run_checked(const gemm_ctx *c, const job *j, int on_host) {
    return c->o->b.ncounts > 0 && on_host && c->o->b.verify && j->beta.d[0] == 0 && j->beta.d[1] == 0;
}

// The row's rates from its timings, then (with verification) the checked run and its check.
static int rate_and_check(gemm_ctx *c, ts_engine e, const job *j, int on_host, int host_operands, double *sec,
                          gemm_row *row) {
    ts_bench_set_rates(&row->b, gemm_flops(j->prec, row->shape), sec);
    if (!c->o->b.verify) return 0;
    if (!last_run_checked(c, j, on_host)) TS_CHECK(checked_run(c, e, j, on_host, host_operands));
    maybe_corrupt(j, c->h.host[OC]);
    verify_row(c, j, row->shape, row);
    return 0;
}

// Times and checks one engine on the current buffers; fills row. Returns 0 or a negative status.
static int run_row(gemm_ctx *c, ts_engine e, const job *j, gemm_row *row) {
    int on_host = ts_bench_row_on_host(&c->h, e), host_operands = !on_host && c->o->where_host;
    int reps = default_reps(c, e);
    double *sec = malloc(sizeof(double) * (size_t)reps);
    if (!sec) return TS_ERROR(TS_ERR_NOMEM, "out of host memory");
    if (!on_host) e = ts_dev_gemm_engine_for(c->h.st, e, j->prec, j->p.ta, j->p.tb, j->p.m, j->p.n, j->p.k);
    row->b.engine = e;
    row->host = on_host || host_operands;
    row->b.reps = reps;
    int pins[3], rc = ts_bench_xt_begin(&c->h, &row->b, OA, OB, OC, pins);
    if (rc >= 0) rc = on_host ? time_host(c, e, j, reps, sec) : time_device(c, e, j, host_operands, c->o->b.warmup, reps, sec);
    if (rc >= 0 && e == TS_ENGINE_TILES) ts_bench_row_trace(&c->h, &row->b, &c->tiles_last);
    if (rc >= 0) rc = rate_and_check(c, e, j, on_host, host_operands, sec, row);
    ts_bench_xt_end(&c->h, pins);
    free(sec);
    return rc;
}

// --interleave: the n engines (all on the device, operands there) of one group take turns, one timed
// run each per round, the order reversed every round (A B, B A, ...): drift of clock and temperature
// over the group falls on every engine alike instead of on whichever runs last. Warm-up runs for each
// engine first; then stats and the check per row as run_row does. Returns 0 or a negative status
// (every row is then marked failed by the caller).
static int run_rows_interleaved(gemm_ctx *c, const ts_engine *resolved, const job *j, gemm_row *rows, int n) {
    int reps = c->o->b.reps > 0 ? c->o->b.reps : 10;
    double *sec = malloc(sizeof(double) * (size_t)(reps * n));
    ts_engine e[MAX_ENGINES];
    if (!sec) return TS_ERROR(TS_ERR_NOMEM, "out of host memory");
    int rc = 0;
    for (int i = 0; i < n; i++) {
        e[i] = ts_dev_gemm_engine_for(c->h.st, resolved[i], j->prec, j->p.ta, j->p.tb, j->p.m, j->p.n, j->p.k);
        rows[i].b.engine = e[i];
        rows[i].host = 0;
        rows[i].b.reps = reps;
        rows[i].interleaved = 1;
        if (rc == 0) rc = time_device(c, e[i], j, 0, c->o->b.warmup, 0, NULL); // its warm-up runs only
    }
    for (int r = 0; r < reps && rc == 0; r++)
        for (int t = 0; t < n && rc == 0; t++) {
            int i = r & 1 ? n - 1 - t : t;
            rc = time_device(c, e[i], j, 0, 0, 1, &sec[i * reps + r]);
        }
    for (int i = 0; i < n && rc == 0; i++) rc = rate_and_check(c, e[i], j, 0, 0, sec + i * reps, &rows[i]);
    free(sec);
    return rc < 0 ? rc : 0;
}

// ---------------------------------------------------------------- output

// Printed before the first row (with -q only failed rows are printed, so maybe never).
static void print_header(gemm_ctx *c) {
    if (!ts_bench_header_due(&c->h)) return;
    fprintf(c->h.out, "%-11s %-4s %7s %7s %7s %-3s %-6s %10s %10s %10s %9s %7s %9s %9s %s\n", "engine", "prec", "m",
            "n", "k", "ops", "where", "median_ms", "min_ms", "max_ms", "TFLOP/s", "ratio", "error", "bound", "check");
}

static void print_row(void *ctx, void *row) {
    gemm_ctx *c = ctx;
    const gemm_row *r = row;
    if (ts_bench_row_hidden(&c->h, &r->b)) return;
    print_header(c);
    ts_bench_cells x;
    ts_bench_row_cells(&c->h, &r->b, r->requested, "%.1e", &x);
    fprintf(c->h.out, "%-11s %-4c %7lld %7lld %7lld %c%-2c %-6s %10s %10s %10s %9s %7s %9s %9s %s\n", x.engine, r->prec,
            (long long)r->shape.m, (long long)r->shape.n, (long long)r->shape.k, r->ta, r->tb,
            r->host ? "host" : "device", x.med, x.min, x.max, x.tf, x.ratio, x.error, x.bound, x.check);
    if (!r->b.failed && r->b.has_tiles && c->o->b.verbosity >= 0) ts_bench_print_tiles_stats(&c->h, &r->b.tiles);
}

static void write_json(ts_bench *b, ts_json *j) {
    gemm_ctx *c = (gemm_ctx *)b; // its first member
    ts_results_begin(j, "tessera gemm", 1, ts_devset_json, c->h.dev ? c->h.devs : NULL);
    for (int i = 0; i < c->h.nrows; i++) {
        const gemm_row *r = TS_BENCH_ROW(&c->h, i, gemm_row);
        if (r->b.failed) continue;
        char t[2] = {r->ta, 0}, u[2] = {r->tb, 0};
        ts_bench_json_entry_begin(j, &r->b, "gemm", r->prec, r->host ? "host" : "device");
        ts_json_begin_object(j, "shape");
        ts_json_int(j, "m", r->shape.m);
        ts_json_int(j, "n", r->shape.n);
        ts_json_int(j, "k", r->shape.k);
        ts_json_str(j, "transa", t);
        ts_json_str(j, "transb", u);
        ts_json_str(j, "layout", c->o->row_major ? "row" : "col");
        ts_json_end_object(j);
        ts_json_begin_object(j, "extra");
        ts_bench_json_scalars(j, &c->o->b, ts_prec_is_complex(r->prec));
        if (r->b.engine != TS_ENGINE_CPU && c->h.dev) ts_json_int(j, "device", c->o->b.device);
        else ts_json_null(j, "device");
        ts_json_str(j, "requested_engine", ts_engines_name(r->requested));
        // leading dimensions given with --lda/--ldb/--ldc (absent: tight)
        if (c->o->lda) ts_json_int(j, "lda", c->o->lda);
        if (c->o->ldb) ts_json_int(j, "ldb", c->o->ldb);
        if (c->o->ldc) ts_json_int(j, "ldc", c->o->ldc);
        ts_bench_json_common(&c->h, j, &r->b);
        if (c->o->interleave && r->interleaved) ts_json_bool(j, "interleaved", 1);
        if (r->b.ratio > 0) ts_json_num(j, "ratio", r->b.ratio);
        if (r->b.has_tiles) ts_tiles_stats_json(j, &r->b.tiles);
        if (r->b.verified) {
            ts_json_num(j, "freivalds_error", r->chk.fv_err);
            ts_json_num(j, "freivalds_bound", FREIVALDS_BOUND);
            if (r->chk.ref_done) {
                ts_json_num(j, "ref_error", r->chk.ref_err);
                ts_json_num(j, "ref_bound", REF_BOUND);
            }
            ts_json_bool(j, "passed", r->b.passed);
        }
        ts_json_end_object(j);
        ts_results_entry_end(j);
    }
    ts_results_end(j);
}

// ---------------------------------------------------------------- the command

static void default_shapes(gemm_ctx *c) {
    gemm_opts *o = c->o;
    int64_t a = 1024, b = 2048;
    if (c->h.dev && ts_devset_backend(c->h.devs) == TS_BACKEND_CUDA && ts_bench_any_device_engine(&o->b)) a = 4096, b = 8192;
    else if (c->h.dev && ts_bench_any_device_engine(&o->b)) a = 256, b = 512; // simulated devices run reference kernels
    else if (c->h.tiles && ts_devset_backend(c->h.devs) == TS_BACKEND_CUDA) a = 8192, b = 16384;
    else if (c->h.tiles) a = 512, b = 1024; // a few 256-tiles per simulated device
    ts_bench_add_shape(&o->b, (shape_t){a, a, a});
    ts_bench_add_shape(&o->b, (shape_t){b, b, b});
}

// One (shape, precision, ops) group: its job, and the engines as they run.
typedef struct {
    gemm_ctx *c;
    shape_t s;
    char prec;
    const char *ops;
    const ts_engine *resolved;
    job j;
} group;

static gemm_row *group_row(group *g, gemm_row *row) {
    row->shape = g->s, row->prec = g->prec, row->ta = g->ops[0], row->tb = g->ops[1];
    row->requested = row->b.engine;
    return row;
}

// One engine's row of a group (ts_bench_engine_rows), then its progress.
static int group_engine(void *ctx, void *r, int e, int pass, char *what, size_t len) {
    group *g = ctx;
    gemm_row *row = group_row(g, r);
    shape_t s = g->s;
    (void)pass;
    snprintf(what, len, "%s %lldx%lldx%lld %c %s", ts_engines_name(g->resolved[e]), (long long)s.m, (long long)s.n,
             (long long)s.k, g->prec, g->ops);
    int rc = run_row(g->c, g->resolved[e], &g->j, row);
    char prog[160];
    snprintf(prog, sizeof prog, "%lldx%lldx%lld %c %s %s", (long long)s.m, (long long)s.n, (long long)s.k, g->prec,
             g->ops, ts_engines_name(g->resolved[e]));
    ts_bench_progress(&g->c->h, gemm_flops(g->prec, s) * (g->c->o->b.warmup + row->b.reps + g->c->o->b.verify), prog);
    return rc;
}

// Runs every engine on one (shape, precision, ops) group and prints its rows.
static int run_group(gemm_ctx *c, shape_t s, char prec, const char ops[2], int *worst) {
    const ts_engine *resolved = c->resolved;
    gemm_opts *o = c->o;
    int64_t cols[2];
    group g = {c, s, prec, ops, resolved, {.prec = prec, .p = make_colprob(o, s, ops, cols),
               .alpha = ts_scalar_of(prec, o->b.alpha[0], o->b.alpha[1]), .beta = ts_scalar_of(prec, o->b.beta[0], o->b.beta[1])}};
    int first = c->h.nrows, n = o->b.nengines;
    c->cref_valid = 0;
    int inter = o->interleave && n > 1 && !o->where_host;
    for (int e = 0; e < n && inter; e++) inter = !ts_bench_row_on_host(&c->h, resolved[e]);
    if (!inter) {
        int rc = ts_bench_engine_rows(&c->h, resolved, group_engine, &g, worst);
        if (rc < 0) return rc;
        return ts_bench_print_rows(&c->h, first, print_row, c), 0;
    }
    for (int e = 0; e < n; e++) {
        gemm_row *r = ts_bench_engine_row(&c->h, e);
        if (!r) return TS_ERROR(TS_ERR_NOMEM, "out of host memory");
        group_row(&g, r);
    }
    gemm_row *rows = TS_BENCH_ROW(&c->h, first, gemm_row);
    int rc = run_rows_interleaved(c, resolved, &g.j, rows, n);
    for (int e = 0; e < n; e++) {
        if (rc < 0) rows[e].b.failed = 1;
        else ts_bench_row_done(&rows[e].b, worst);
        ts_bench_progress(&c->h, gemm_flops(prec, s) * (o->b.warmup + rows[e].b.reps + o->b.verify), NULL);
    }
    if (rc < 0) {
        char what[160];
        snprintf(what, sizeof what, "%lldx%lldx%lld %c %s (interleaved)", (long long)s.m, (long long)s.n,
                 (long long)s.k, prec, ops);
        ts_bench_row_failed(&c->h, &rows[0].b, what, worst);
        if (c->h.st && ts_bench_stream_renew(&c->h) < 0) return ts_error_last()->code;
    }
    ts_bench_print_rows(&c->h, first, print_row, c);
    return 0;
}

// One (shape, precision) (ts_bench_sizes): its operands, then every ops group.
static int run_size(void *ctx, shape_t s, char prec, int *worst) {
    gemm_ctx *c = ctx;
    if (setup_buffers(c, s, prec) < 0) return -1;
    for (int q = 0; q < c->o->nops; q++)
        if (run_group(c, s, prec, c->o->ops[q], worst) < 0)
            return ts_cli_errorf(CMD, "%s", ts_error_string()), TS_EXIT_RUNTIME;
    return 0;
}

int ts_cmd_gemm(int argc, char **argv) {
    gemm_opts o;
    ts_engine resolved[MAX_ENGINES];
    int worst = TS_EXIT_OK, rc = parse_args(argc, argv, &o);
    if (rc) return rc == -1 ? TS_EXIT_OK : rc; // -1: --help
    gemm_ctx c;
    memset(&c, 0, sizeof c);
    c.o = &o, c.resolved = resolved;
    if ((rc = ts_bench_begin(&c.h, &o.b, sizeof(gemm_row), 1))) goto out;
    if (o.b.nengines == 0)
        o.b.engines[o.b.nengines++] = ts_devset_count(c.h.devs) > 0 && ts_devset_backend(c.h.devs) == TS_BACKEND_CUDA
                                          ? TS_ENGINE_CUBLAS : TS_ENGINE_CPU;
    if ((rc = ts_bench_pick_device(&c.h, o.b.device, o.b.device_given)) || (rc = ts_bench_resolve_engines(&c.h, resolved)))
        goto out;
    if (ts_bench_has_engine(&o.b, TS_ENGINE_TILES) && (rc = ts_bench_open(&c.h, TS_ENGINE_TILES, "--engine tiles"))) goto out;
    if ((rc = ts_bench_check_counts(&c.h))) goto out;
    if (o.b.nshapes == 0) default_shapes(&c);
    for (int s = 0; s < o.b.nshapes; s++)
        for (int p = 0; p < o.nops; p++)
            if ((rc = check_lds(&o, o.b.shapes[s], o.ops[p]))) goto out;
    if ((rc = ts_bench_check_sizes(&c.h, memory_need, &o))) goto out;
    if ((rc = ts_bench_stream_open(&c.h))) goto out;

    double total = 0;
    for (int s = 0; s < o.b.nshapes; s++)
        for (int p = 0; p < o.b.nprecs; p++)
            for (int e = 0; e < o.b.nengines; e++)
                total += gemm_flops(o.b.precs[p], o.b.shapes[s]) * o.nops * ts_bench_npasses(&c.h) *
                         (o.b.warmup + default_reps(&c, resolved[e]) + o.b.verify);
    ts_bench_progress_start(&c.h, o.b.verbosity >= 0 && o.b.nshapes * o.b.nprecs * o.nops * o.b.nengines > 1, total);
    if (ts_bench_print_setup(&c.h)) print_header(&c);
    rc = ts_bench_sizes(&c.h, run_size, &c, &worst);
    if (o.b.verbosity >= 0 && o.b.verify)
        fprintf(c.h.out, "check: Freivalds (%d vectors, bound %.0f) on every result; full recomputation "
                         "(bound %.0f) where m*n*k <= 2^27\n", FREIVALDS_NVEC, FREIVALDS_BOUND, REF_BOUND);
    rc = ts_bench_finish(&c.h, write_json, rc, worst);
out:
    ts_bench_end(&c.h);
    return rc;
}
