// cmd_info.c: `tessera info`: devices, CPU, BLAS, MPI and build of this machine; --bench measures them.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ts_error.h"
#include "core/ts_json.h"
#include "core/ts_rng.h"
#include "core/ts_timer.h"
#include "device/ts_device.h"
#include "faces/cli/ts_bench.h"
#include "faces/cli/ts_cli.h"
#include "faces/cli/ts_cli_opts.h"
#include "kernels/ts_kernels.h"
#include "ts_config.h"
#if TS_HAVE_MPI
#include <mpi.h>
#endif

#define CMD "info"
// Benchmark sizes: CUDA devices get buffers and a DGEMM large enough to reach their rates; simulated
// devices only enough to exercise the paths.
#define BENCH_COPY_BYTES_CUDA ((size_t)512 << 20)
#define BENCH_COPY_BYTES_SIM ((size_t)16 << 20)
#define BENCH_GEMM_N_CUDA 8192
#define BENCH_GEMM_N_SIM 256
#define BENCH_REPS_CUDA 10
#define BENCH_REPS_SIM 5
#define BENCH_CPU_SECONDS 1.0 // the CPU DGEMM is sized to take about this long per run
#define BENCH_CPU_REPS 3

typedef struct {
    const char *bench; // copy | h2d | d2h | gemm
    const char *engine;
    int device;        // -1 = CPU
    int reps;
    ts_stats sec;
    double rate;       // GB/s for transfers, TFLOP/s for gemm
    size_t bytes;      // transfers
    int64_t n;         // gemm
    int verified, passed;
    double error, bound;
} bench_result;

typedef struct {
    bench_result r[5 * TS_MAX_DEVICES + 1]; // per device: h2d, copy, d2h, bidir, gemm; the CPU gemm
    int n;
    int failed_check, failed_runtime;
} bench_set;

static void usage(FILE *f) {
    fprintf(f, "usage: tessera info [--bench] [--json FILE] [-q|-v]\n"
               "  --bench      measure each device (copy, host link, DGEMM) and the CPU DGEMM\n"
               "  --json FILE  write the results document ('-' = stdout)\n"
               "exit: 0 ok, 1 a benchmark result failed its check, 2 bad usage, 3 runtime failure\n");
}

static const char *mpi_version(char *buf, size_t len) {
#if TS_HAVE_MPI
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int n = 0;
    if (MPI_Get_library_version(v, &n) != MPI_SUCCESS) return "compiled in (version unknown)";
    v[n < (int)sizeof v ? n : (int)sizeof v - 1] = 0;
    char *nl = strchr(v, '\n'); // the first line names the library and version
    if (nl) *nl = 0;
    snprintf(buf, len, "%s", v);
    return buf;
#else
    (void)buf, (void)len;
    return NULL;
#endif
}

// ---------------------------------------------------------------- the report

static void fmt_gib(char *buf, size_t len, size_t bytes) {
    snprintf(buf, len, "%.1f GiB", ts_cli_gib((double)bytes));
}

static void print_devices(ts_devset *s) {
    int n = s ? ts_devset_count(s) : 0;
    if (n == 0) {
        printf("devices:   none: no GPU found; CPU only%s\n",
               TS_HAVE_CUDA ? "" : " (this build has no CUDA; TESSERA_SIM_DEVICES=N gives simulated devices)");
        return;
    }
    printf("devices:   %d (%s)\n", n, ts_backend_name(ts_devset_backend(s)));
    printf("  %-3s %-28s %10s %10s %5s %5s %s\n", "#", "name", "memory", "arena", "SMs", "cc", "bus id");
    for (int i = 0; i < n; i++) {
        const ts_device_props *p = ts_device_props_of(ts_devset_device(s, i));
        char mem[32], arena[32], cc[16];
        fmt_gib(mem, sizeof mem, p->mem_total);
        fmt_gib(arena, sizeof arena, p->arena_bytes);
        snprintf(cc, sizeof cc, "%d.%d", p->cc_major, p->cc_minor);
        printf("  %-3d %-28s %10s %10s %5d %5s %s\n", i, p->name, mem, arena, p->sms, cc, p->bus_id);
    }
    if (n < 2) return;
    printf("peer links (Y: direct access from the row's device to the column's):\n     ");
    for (int j = 0; j < n; j++) printf(" %3d", j);
    printf("\n");
    for (int i = 0; i < n; i++) {
        printf("  %3d", i);
        for (int j = 0; j < n; j++)
            printf(" %3s", i == j ? "-" : ts_device_can_peer(ts_devset_device(s, i), ts_devset_device(s, j)) ? "Y" : "N");
        printf("\n");
    }
}

static void print_system(ts_devset *s) {
    char mpi[256];
    const char *mv = mpi_version(mpi, sizeof mpi);
    printf("tessera:   %s (commit %s), CUDA %s\n", ts_version(), ts_commit(), TS_HAVE_CUDA ? "on" : "off");
    printf("cpu:       %s, %d cores\n", ts_cpu_model(), ts_cpu_cores());
    printf("cpu blas:  %s, %d threads\n", ts_cpu_blas_name(), ts_cpu_blas_threads());
    printf("mpi:       %s\n", mv ? mv : "not compiled in");
    print_devices(s);
}

// ---------------------------------------------------------------- device benchmarks

static bench_result *add_result(bench_set *b, const char *bench, const char *engine, int device) {
    bench_result *r = &b->r[b->n++];
    memset(r, 0, sizeof *r);
    r->bench = bench, r->engine = engine, r->device = device;
    r->error = r->bound = NAN;
    return r;
}

typedef enum { XFER_H2D, XFER_D2D, XFER_D2H } xfer;

// One copy of time_copies (the timed loop's callback).
typedef struct {
    ts_stream *st;
    ts_copy_kind kind;
    void *dst;
    const void *src;
    size_t bytes;
} copy_run;

static int enqueue_copy(void *arg, int timed) {
    const copy_run *c = arg;
    (void)timed;
    return ts_copy_async(c->st, c->kind, c->dst, c->src, c->bytes);
}

// Times `reps` copies (after one warm-up copy) with events around each; fills r with the seconds and GB/s.
static int time_copies(ts_stream *st, xfer x, void *dst, const void *src, size_t bytes, int reps, bench_result *r) {
    copy_run c = {st, x == XFER_H2D ? TS_COPY_H2D : x == XFER_D2H ? TS_COPY_D2H : TS_COPY_D2D, dst, src, bytes};
    double sec[BENCH_REPS_CUDA];
    TS_CHECK(ts_bench_time_stream(st, 1, reps, enqueue_copy, &c, sec));
    r->reps = reps;
    r->bytes = bytes;
    r->sec = ts_stats_of(sec, (size_t)reps);
    // A device-to-device copy reads and writes every byte; the host link moves each byte once.
    r->rate = (x == XFER_D2D ? 2.0 : 1.0) * (double)bytes / r->sec.median * 1e-9;
    return 0;
}

// Both directions of the host link at once: `reps` copies host -> device on st and as many
// device -> host on a second stream, started together (the second waits for an event on the
// first); r->rate is the bytes of both directions over the time until the later one ended. The
// out-of-core paths (the tile runtime, out-of-core HPL) move C tiles in and out at the same time.
static int time_bidir(ts_stream *st, ts_device *d, void *dev_in, const void *h_in, void *h_out, const void *dev_out,
                      size_t bytes, int reps, bench_result *r) {
    ts_stream *st2 = NULL;
    ts_event *e0 = NULL, *e1 = NULL, *e2 = NULL;
    int rc = 0;
    double sec[BENCH_REPS_CUDA];
    TS_CHECK_GOTO(ts_stream_create(d, &st2), rc, out);
    TS_CHECK_GOTO(ts_event_create(d, &e0), rc, out);
    TS_CHECK_GOTO(ts_event_create(d, &e1), rc, out);
    TS_CHECK_GOTO(ts_event_create(d, &e2), rc, out);
    for (int t = 0; t <= reps; t++) { // t = 0 warms up
        TS_CHECK_GOTO(ts_event_record(e0, st), rc, out);
        TS_CHECK_GOTO(ts_stream_wait_event(st2, e0), rc, out);
        TS_CHECK_GOTO(ts_copy_async(st, TS_COPY_H2D, dev_in, h_in, bytes), rc, out);
        TS_CHECK_GOTO(ts_copy_async(st2, TS_COPY_D2H, h_out, dev_out, bytes), rc, out);
        TS_CHECK_GOTO(ts_event_record(e1, st), rc, out);
        TS_CHECK_GOTO(ts_event_record(e2, st2), rc, out);
        TS_CHECK_GOTO(ts_stream_sync(st), rc, out);
        TS_CHECK_GOTO(ts_stream_sync(st2), rc, out);
        double a, b;
        TS_CHECK_GOTO(ts_event_elapsed_ms(e0, e1, &a), rc, out);
        TS_CHECK_GOTO(ts_event_elapsed_ms(e0, e2, &b), rc, out);
        if (t > 0) sec[t - 1] = (a > b ? a : b) * 1e-3;
    }
    r->reps = reps;
    r->bytes = 2 * bytes;
    r->sec = ts_stats_of(sec, (size_t)reps);
    r->rate = 2.0 * (double)bytes / r->sec.median * 1e-9;
out:
    if (e0) ts_event_destroy(e0);
    if (e1) ts_event_destroy(e1);
    if (e2) ts_event_destroy(e2);
    if (st2) ts_stream_destroy(st2);
    return rc;
}

// Host link and device memory: H2D pinned -> buffer a, D2D a -> b, D2H b -> pinned, then H2D into a
// and D2H from b at once; the data that comes back must equal what went in.
static int bench_copies(ts_devset *s, ts_device *d, ts_stream *st, int idx, bench_set *b) {
    int cuda = ts_device_props_of(d)->backend == TS_BACKEND_CUDA, reps = cuda ? BENCH_REPS_CUDA : BENCH_REPS_SIM;
    size_t used, free_b, largest, bytes = cuda ? BENCH_COPY_BYTES_CUDA : BENCH_COPY_BYTES_SIM;
    ts_dmem_info(d, &used, &free_b, &largest);
    while (bytes > ((size_t)1 << 20) && 2 * bytes > largest / 2) bytes /= 2;
    void *h_in = NULL, *h_out = NULL, *da = NULL, *db = NULL;
    int rc;
    const char *be = ts_backend_name(ts_device_props_of(d)->backend);
    TS_CHECK_GOTO(ts_host_alloc(s, bytes, &h_in), rc, out);
    TS_CHECK_GOTO(ts_host_alloc(s, bytes, &h_out), rc, out);
    TS_CHECK_GOTO(ts_dmalloc(d, bytes, &da), rc, out);
    TS_CHECK_GOTO(ts_dmalloc(d, bytes, &db), rc, out);
    ts_fill_uniform_d(0xc0b1 + (uint64_t)idx, h_in, (int64_t)(bytes / sizeof(double)));
    memset(h_out, 0, bytes);
    TS_CHECK_GOTO(time_copies(st, XFER_H2D, da, h_in, bytes, reps, add_result(b, "h2d", be, idx)), rc, out);
    TS_CHECK_GOTO(time_copies(st, XFER_D2D, db, da, bytes, reps, add_result(b, "copy", be, idx)), rc, out);
    TS_CHECK_GOTO(time_copies(st, XFER_D2H, h_out, db, bytes, reps, add_result(b, "d2h", be, idx)), rc, out);
    memset(h_out, 0, bytes);
    TS_CHECK_GOTO(time_bidir(st, d, da, h_in, h_out, db, bytes, reps, add_result(b, "bidir", be, idx)), rc, out);
    int same = memcmp(h_in, h_out, bytes) == 0;
    for (int i = b->n - 4; i < b->n; i++) b->r[i].verified = 1, b->r[i].passed = same;
    if (!same) {
        ts_cli_errorf(CMD, "device %d: data copied host -> device -> device -> host came back different", idx);
        b->failed_check = 1;
    }
out:
    if (da) ts_dfree(d, da);
    if (db) ts_dfree(d, db);
    if (h_in) ts_host_free(s, h_in);
    if (h_out) ts_host_free(s, h_out);
    return rc;
}

// DGEMM with the device's default engine on random data, median of reps, checked by Freivalds.
static int bench_dev_gemm(ts_devset *s, ts_device *d, ts_stream *st, int idx, bench_set *b) {
    int cuda = ts_device_props_of(d)->backend == TS_BACKEND_CUDA, reps = cuda ? BENCH_REPS_CUDA : BENCH_REPS_SIM;
    int64_t n = cuda ? BENCH_GEMM_N_CUDA : BENCH_GEMM_N_SIM;
    size_t used, free_b, largest;
    ts_dmem_info(d, &used, &free_b, &largest);
    while (n > 256 && 3.0 * (double)n * (double)n * 8 + 4096 > (double)free_b) n /= 2;
    size_t bytes = (size_t)n * (size_t)n * sizeof(double);
    double one = 1.0, zero = 0.0, sec[BENCH_REPS_CUDA];
    double *hA = NULL, *hB = NULL, *hC = NULL;
    void *dA = NULL, *dB = NULL, *dC = NULL;
    ts_event *ev[BENCH_REPS_CUDA + 1] = {0};
    int rc = 0, nev = 0;
    ts_engine e = ts_dev_gemm_engine_for(st, TS_ENGINE_AUTO, 'd', 'N', 'N', n, n, n);
    TS_CHECK_GOTO(ts_host_alloc(s, bytes, (void **)&hA), rc, out);
    TS_CHECK_GOTO(ts_host_alloc(s, bytes, (void **)&hB), rc, out);
    TS_CHECK_GOTO(ts_host_alloc(s, bytes, (void **)&hC), rc, out);
    ts_fill_uniform_d(0xa + (uint64_t)idx * 16, hA, n * n);
    ts_fill_uniform_d(0xb + (uint64_t)idx * 16, hB, n * n);
    TS_CHECK_GOTO(ts_dmalloc(d, bytes, &dA), rc, out);
    TS_CHECK_GOTO(ts_dmalloc(d, bytes, &dB), rc, out);
    TS_CHECK_GOTO(ts_dmalloc(d, bytes, &dC), rc, out);
    TS_CHECK_GOTO(ts_copy_async(st, TS_COPY_H2D, dA, hA, bytes), rc, out);
    TS_CHECK_GOTO(ts_copy_async(st, TS_COPY_H2D, dB, hB, bytes), rc, out);
    for (; nev <= reps; nev++) TS_CHECK_GOTO(ts_event_create(d, &ev[nev]), rc, out);
    for (int w = 0; w < 2; w++)
        TS_CHECK_GOTO(ts_dev_gemm(st, e, 'd', 'N', 'N', n, n, n, &one, dA, n, dB, n, &zero, dC, n), rc, out);
    TS_CHECK_GOTO(ts_event_record(ev[0], st), rc, out);
    for (int i = 0; i < reps; i++) {
        TS_CHECK_GOTO(ts_dev_gemm(st, e, 'd', 'N', 'N', n, n, n, &one, dA, n, dB, n, &zero, dC, n), rc, out);
        TS_CHECK_GOTO(ts_event_record(ev[i + 1], st), rc, out);
    }
    TS_CHECK_GOTO(ts_copy_async(st, TS_COPY_D2H, hC, dC, bytes), rc, out);
    TS_CHECK_GOTO(ts_stream_sync(st), rc, out);
    for (int i = 0; i < reps; i++) {
        double ms;
        TS_CHECK_GOTO(ts_event_elapsed_ms(ev[i], ev[i + 1], &ms), rc, out);
        sec[i] = ms * 1e-3;
    }
    bench_result *r = add_result(b, "gemm", ts_engine_name(e), idx);
    r->reps = reps, r->n = n;
    r->sec = ts_stats_of(sec, (size_t)reps);
    r->rate = 2.0 * (double)n * n * n / r->sec.median * 1e-12;
    r->verified = 1, r->bound = TS_GEMM_VERIFY_BOUND, r->error = NAN;
    r->passed = ts_gemm_verify('d', 'N', 'N', n, n, n, &one, hA, n, hB, n, &zero, NULL, n, hC, n, 2, 7,
                               r->bound, &r->error) == 1;
    if (!r->passed) {
        ts_cli_errorf(CMD, "device %d: DGEMM n=%lld failed its check (error %.3g, bound %.3g)", idx, (long long)n,
                      r->error, r->bound);
        b->failed_check = 1;
    }
out:
    for (int i = 0; i < nev; i++) ts_event_destroy(ev[i]);
    if (dA) ts_dfree(d, dA);
    if (dB) ts_dfree(d, dB);
    if (dC) ts_dfree(d, dC);
    if (hA) ts_host_free(s, hA);
    if (hB) ts_host_free(s, hB);
    if (hC) ts_host_free(s, hC);
    return rc;
}

// ---------------------------------------------------------------- CPU benchmark

static double cpu_dgemm_seconds(int64_t n, double *A, double *B, double *C) {
    double one = 1.0, zero = 0.0, t0 = ts_now();
    if (ts_gemm_cpu('d', 'N', 'N', n, n, n, &one, A, n, B, n, &zero, C, n) < 0) return -1;
    return ts_now() - t0;
}

// The CPU BLAS DGEMM, sized from a first small run to take about BENCH_CPU_SECONDS.
static int bench_cpu_gemm(bench_set *b) {
    int64_t n = 512, nmax = 16384;
    double rate = 0;
    for (;;) { // grow a trial size until a run takes long enough to estimate the rate
        size_t bytes = (size_t)n * (size_t)n * sizeof(double);
        double *A = malloc(bytes), *B = malloc(bytes), *C = malloc(bytes);
        if (!A || !B || !C) {
            free(A), free(B), free(C);
            TS_RAISE(TS_ERR_NOMEM, "cannot allocate the CPU DGEMM operands (n=%lld)", (long long)n);
        }
        ts_fill_uniform_d(1, A, n * n), ts_fill_uniform_d(2, B, n * n);
        double t = cpu_dgemm_seconds(n, A, B, C);
        free(A), free(B), free(C);
        if (t < 0) return ts_error_last()->code ? ts_error_last()->code : TS_ERR_INTERNAL;
        rate = 2.0 * (double)n * n * n / t;
        if (t > 0.05 || n >= 2048) break;
        n *= 2;
    }
    n = (int64_t)cbrt(rate * BENCH_CPU_SECONDS / 2.0) / 256 * 256;
    if (n < 256) n = 256;
    if (n > nmax) n = nmax;
    while (n > 256 && 3.0 * (double)n * n * 8 > 0.5 * (double)ts_cli_host_mem_available()) n -= 256;
    size_t bytes = (size_t)n * (size_t)n * sizeof(double);
    double *A = malloc(bytes), *B = malloc(bytes), *C = malloc(bytes), sec[BENCH_CPU_REPS], one = 1, zero = 0;
    if (!A || !B || !C) {
        free(A), free(B), free(C);
        TS_RAISE(TS_ERR_NOMEM, "cannot allocate the CPU DGEMM operands (n=%lld)", (long long)n);
    }
    ts_fill_uniform_d(3, A, n * n), ts_fill_uniform_d(4, B, n * n);
    int rc = 0;
    for (int i = 0; i < BENCH_CPU_REPS && rc == 0; i++) {
        sec[i] = cpu_dgemm_seconds(n, A, B, C);
        if (sec[i] < 0) rc = TS_ERR_INTERNAL;
    }
    if (rc == 0) {
        bench_result *r = add_result(b, "gemm", "cpu", -1);
        r->reps = BENCH_CPU_REPS, r->n = n;
        r->sec = ts_stats_of(sec, BENCH_CPU_REPS);
        r->rate = 2.0 * (double)n * n * n / r->sec.median * 1e-12;
        r->verified = 1, r->bound = TS_GEMM_VERIFY_BOUND;
        r->passed = ts_gemm_verify('d', 'N', 'N', n, n, n, &one, A, n, B, n, &zero, NULL, n, C, n, 2, 7, r->bound,
                                   &r->error) == 1;
        if (!r->passed) {
            ts_cli_errorf(CMD, "CPU DGEMM n=%lld failed its check (error %.3g)", (long long)n, r->error);
            b->failed_check = 1;
        }
    }
    free(A), free(B), free(C);
    return rc;
}

static void run_benchmarks(ts_devset *s, bench_set *b) {
    int n = s ? ts_devset_count(s) : 0;
    for (int i = 0; i < n; i++) {
        ts_device *d = ts_devset_device(s, i);
        ts_stream *st = NULL;
        fprintf(stderr, "tessera info: measuring device %d...\n", i);
        int rc = ts_stream_create(d, &st);
        if (rc >= 0) rc = bench_copies(s, d, st, i, b);
        if (rc >= 0) rc = bench_dev_gemm(s, d, st, i, b);
        if (rc < 0) {
            ts_cli_errorf(CMD, "device %d: %s", i, ts_error_string());
            b->failed_runtime = 1;
        }
        if (st) ts_stream_destroy(st);
    }
    fprintf(stderr, "tessera info: measuring the CPU DGEMM...\n");
    if (bench_cpu_gemm(b) < 0) {
        ts_cli_errorf(CMD, "CPU DGEMM: %s", ts_error_string());
        b->failed_runtime = 1;
    }
}

static const bench_result *find(const bench_set *b, const char *bench, int device) {
    for (int i = 0; i < b->n; i++)
        if (b->r[i].device == device && !strcmp(b->r[i].bench, bench)) return &b->r[i];
    return NULL;
}

static void print_benchmarks(ts_devset *s, const bench_set *b) {
    int n = s ? ts_devset_count(s) : 0;
    printf("\nbench (median of reps; copy counts bytes read + written; host link pinned):\n");
    if (n > 0) printf("  %-4s %12s %10s %10s %11s %14s %7s %-8s %s\n", "dev", "copy GB/s", "h2d GB/s", "d2h GB/s",
                      "bidir GB/s", "DGEMM TFLOP/s", "n", "engine", "check");
    for (int i = 0; i < n; i++) {
        const bench_result *c = find(b, "copy", i), *h = find(b, "h2d", i), *dd = find(b, "d2h", i),
                           *g = find(b, "gemm", i), *bi = find(b, "bidir", i);
        char cs[16] = "-", hs[16] = "-", ds[16] = "-", gs[16] = "-", ns[16] = "-", bs[16] = "-";
        if (bi) snprintf(bs, sizeof bs, "%.1f", bi->rate);
        if (c) snprintf(cs, sizeof cs, "%.1f", c->rate);
        if (h) snprintf(hs, sizeof hs, "%.1f", h->rate);
        if (dd) snprintf(ds, sizeof ds, "%.1f", dd->rate);
        if (g) snprintf(gs, sizeof gs, "%.3f", g->rate), snprintf(ns, sizeof ns, "%lld", (long long)g->n);
        int ok = c && g && c->passed && g->passed;
        printf("  %-4d %12s %10s %10s %11s %14s %7s %-8s %s\n", i, cs, hs, ds, bs, gs, ns, g ? g->engine : "-",
               ok ? "PASS" : (c && g) ? "FAIL" : "ERROR");
    }
    const bench_result *cpu = find(b, "gemm", -1);
    if (cpu)
        printf("  cpu  DGEMM %.3f TFLOP/s (n=%lld, %s, %d threads) %s\n", cpu->rate, (long long)cpu->n,
               ts_cpu_blas_name(), ts_cpu_blas_threads(), cpu->passed ? "PASS" : "FAIL");
}

// ---------------------------------------------------------------- JSON

static void write_json(ts_json *j, ts_devset *s, const bench_set *b) {
    char mpi[256];
    const char *mv = mpi_version(mpi, sizeof mpi);
    ts_results_begin(j, "tessera info", 1, ts_devset_json, s);
    for (int i = 0; i < b->n; i++) {
        const bench_result *r = &b->r[i];
        int gemm = !strcmp(r->bench, "gemm");
        ts_result_common c = {
            .bench = r->bench, .engine = r->engine, .precision = gemm ? 'd' : 0,
            .where = gemm ? (r->device < 0 ? "host" : "device") : NULL, .reps = r->reps,
            .sec_median = r->sec.median, .sec_min = r->sec.min, .sec_max = r->sec.max,
            .tf_median = -1, .verified = r->verified, .error = r->error, .bound = r->bound,
        };
        if (gemm) {
            double fl = 2.0 * (double)r->n * r->n * r->n * 1e-12;
            c.tf_median = r->rate, c.tf_min = fl / r->sec.max, c.tf_max = fl / r->sec.min;
        }
        ts_results_entry_begin(j, &c);
        if (gemm) {
            ts_json_begin_object(j, "shape");
            ts_json_int(j, "m", r->n), ts_json_int(j, "n", r->n), ts_json_int(j, "k", r->n);
            ts_json_str(j, "transa", "N"), ts_json_str(j, "transb", "N");
            ts_json_end_object(j);
        }
        ts_json_begin_object(j, "extra");
        if (r->device >= 0) ts_json_int(j, "device", r->device);
        else ts_json_null(j, "device");
        if (!gemm) {
            ts_json_int(j, "bytes", (int64_t)r->bytes);
            ts_json_num(j, "gbs", r->rate);
        } else if (r->device < 0) {
            ts_json_int(j, "threads", ts_cpu_blas_threads());
        }
        ts_json_bool(j, "passed", r->passed);
        ts_json_end_object(j);
        ts_results_entry_end(j);
    }
    // ts_results_end closes "results" and the document; the system facts go between the two.
    ts_json_end_array(j);
    ts_json_begin_object(j, "system");
    ts_json_str(j, "cpu_blas", ts_cpu_blas_name());
    ts_json_int(j, "cpu_blas_threads", ts_cpu_blas_threads());
    ts_json_bool(j, "mpi", TS_HAVE_MPI);
    ts_json_str(j, "mpi_library", mv);
    ts_json_bool(j, "cuda", TS_HAVE_CUDA);
    ts_json_str(j, "backend", s ? ts_backend_name(ts_devset_backend(s)) : "none");
    int n = s ? ts_devset_count(s) : 0;
    ts_json_begin_array(j, "peer");
    for (int a = 0; a < n; a++) {
        ts_json_begin_array(j, NULL);
        for (int c = 0; c < n; c++)
            ts_json_bool(j, NULL, a != c && ts_device_can_peer(ts_devset_device(s, a), ts_devset_device(s, c)));
        ts_json_end_array(j);
    }
    ts_json_end_array(j);
    ts_json_end_object(j);
    ts_json_end_object(j);
}

// ---------------------------------------------------------------- the command

int ts_cmd_info(int argc, char **argv) {
    int bench = 0, verbosity = 0;
    const char *json = NULL, *v;
    for (int i = 1; i < argc; i++) {
        int r;
        if (ts_cli_flag(argv[i], "--help", "-h")) {
            usage(stdout);
            return TS_EXIT_OK;
        } else if (ts_cli_flag(argv[i], "--bench", NULL)) {
            bench = 1;
        } else if (ts_cli_flag(argv[i], "-q", "--quiet")) {
            verbosity = -1;
        } else if (ts_cli_flag(argv[i], "-v", "--verbose")) {
            verbosity++;
        } else if ((r = ts_cli_value_opt(CMD, argc, argv, &i, "--json", NULL, &v)) != 0) {
            if (r < 0) return TS_EXIT_USAGE;
            json = v;
        } else {
            return ts_cli_usage_error(CMD, "unknown argument '%s' (tessera info --help)", argv[i]);
        }
    }
    ts_cli_set_verbosity(verbosity);
    ts_devset *s = NULL;
    if (json && ts_cli_check_output(CMD, "--json", json)) return TS_EXIT_USAGE;
    const int open_rc = ts_cli_open_devices(CMD, &s);
    if (open_rc < 0) return ts_cli_exit_of(open_rc);
    // With the results document on stdout, the human report goes nowhere (it would corrupt it).
    int human = !(json && !strcmp(json, "-"));
    if (human) print_system(s);
    bench_set *b = calloc(1, sizeof *b);
    int rc = TS_EXIT_OK;
    if (!b) {
        ts_devset_close(s);
        return TS_EXIT_RUNTIME;
    }
    if (bench) {
        run_benchmarks(s, b);
        if (human) print_benchmarks(s, b);
    }
    if (json) {
        FILE *f = ts_cli_json_fopen(CMD, json);
        if (!f) rc = TS_EXIT_RUNTIME;
        else {
            ts_json *j = ts_json_open_file(f);
            write_json(j, s, b);
            if (ts_json_close(j) < 0 || ts_cli_json_fclose(CMD, json, f) < 0) rc = TS_EXIT_RUNTIME;
        }
    }
    if (b->failed_runtime) rc = TS_EXIT_RUNTIME;
    else if (b->failed_check && rc == TS_EXIT_OK) rc = TS_EXIT_CHECK;
    free(b);
    ts_devset_close(s);
    return rc;
}
