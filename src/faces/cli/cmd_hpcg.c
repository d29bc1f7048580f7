// cmd_hpcg.c: `tessera hpcg`: HPCG 3.1 (hpcg.dat or flags), its key=value report, the phase breakdown and JSON.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "algorithms/hpcg/ts_hpcg.h"
#include "core/ts_error.h"
#include "core/ts_json.h"
#include "core/ts_log.h"
#include "faces/cli/ts_cli.h"
#include "faces/cli/ts_cli_opts.h"

#define CMD "hpcg"
#define HPCG_DEFAULT_N 104     // the reference's shipped hpcg.dat
#define HPCG_DEFAULT_RT 60.0
#define HPCG_MEM_FRACTION 0.9  // share of the available memory a problem may take

typedef struct {
    int nx, ny, nz, npx, npy, npz; // 0 = not given
    int pz, zl, zu;                // two nz values along z (0 = not given)
    double rt;                     // < 0: not given
    char rt_from[560];             // where rt came from, for the summary: "--rt", "hpcg.dat:4", ...
    const char *dat, *json;
    int quiet;
    ts_hpcg_engine engine;
} hpcg_args;

static void usage(FILE *f) {
    fprintf(f,
        "usage: tessera hpcg [--nx n --ny n --nz n] [--rt SECONDS] [--npx p --npy p --npz p]\n"
        "                    [--pz p --zl n --zu n] [--engine auto|ref|cpu|device|cuda] [--dat FILE]\n"
        "                    [--json FILE] [-q] [nx ny nz rt pz zl zu npx npy npz]\n\n"
        "HPCG 3.1: the 27-point problem on an nx x ny x nz grid per rank, multigrid-preconditioned CG,\n"
        "validation, and the report file HPCG-Benchmark_3.1_<date>.txt.\n"
        "  --nx/--ny/--nz n   local grid per rank (multiples of 8; below 16 raised as the reference does)\n"
        "  --rt SECONDS       time of the timed CG sets (official: 1800; 0: quick path)\n"
        "  --npx/--npy/--npz  process grid (default: the most cubic for the rank count)\n"
        "  --pz p --zl n --zu n  two local nz values: process layers ipz < p get zl, the others zu\n"
        "                     (0 < p < npz; zl or zu left out: nz)\n"
        "  nx ny nz rt ...    positional integers, in this order, as the reference reads them (a value\n"
        "                     below 10 is ignored there, and here); the options take precedence\n"
        "  --engine E         kernels of the optimized phases: ref (reference CSR, natural-order SYMGS),\n"
        "                     cpu (multicoloured sliced ELL, OpenMP), device (the same on this rank's\n"
        "                     device), cuda (device, which must be a CUDA GPU), auto (device when every\n"
        "                     rank has one, else cpu; default)\n"
        "  --dat FILE         read FILE as hpcg.dat (default ./hpcg.dat when no --nx/--ny/--nz)\n"
        "  --json FILE        results-schema JSON (bench \"hpcg\")\n"
        "  -q                 no progress lines\n\n"
        "exit: 0 VALID, 1 INVALID, 2 bad input, 3 runtime failure\n");
}

// A bare integer on the command line: HPCG 3.1 reads argv[1..10] as nx ny nz rt pz zl zu npx npy
// npz and ignores a value below 10 (so 'xhpcg 104 104 104 60' works, a positional npx = 2 does
// not). Options given by name override them, as in the reference.
static int is_int_arg(const char *s) {
    if (!*s) return 0;
    for (const char *c = s; *c; c++)
        if (*c < '0' || *c > '9') return 0;
    return 1;
}

// After the options: a positional value fills what no option set (0, rt < 0).
static void apply_positional(const int *pos, int npos, hpcg_args *a) {
    static const char *names[10] = {"nx", "ny", "nz", "rt", "pz", "zl", "zu", "npx", "npy", "npz"};
    int *dst[10] = {&a->nx, &a->ny, &a->nz, NULL, &a->pz, &a->zl, &a->zu, &a->npx, &a->npy, &a->npz};
    for (int k = 0; k < npos; k++) {
        if (pos[k] < 10) {
            ts_log(TS_LOG_WARN, "hpcg: positional %s=%d ignored (HPCG 3.1 ignores positional values below 10; "
                   "use --%s=%d)", names[k], pos[k], names[k], pos[k]);
        } else if (k == 3) {
            if (a->rt < 0) {
                a->rt = pos[k];
                snprintf(a->rt_from, sizeof a->rt_from, "the positional rt");
            }
        } else if (!*dst[k]) {
            *dst[k] = pos[k];
        }
    }
}

static int parse_args(int argc, char **argv, hpcg_args *a) {
    memset(a, 0, sizeof *a);
    a->rt = -1;
    int pos[10], npos = 0;
    for (int i = 1; i < argc; i++) {
        if (is_int_arg(argv[i])) {
            int v;
            if (ts_cli_int(CMD, "positional value", argv[i], 0, &v) < 0) return -1;
            if (npos < 10) pos[npos] = v;
            npos++;
            continue;
        }
        const char *v = NULL;
        int m;
        if (ts_cli_flag(argv[i], "--help", "-h")) {
            usage(stdout);
            return 1;
        }
        if (ts_cli_flag(argv[i], "-q", "--quiet")) { a->quiet = 1; continue; }
        struct { const char *name; int *dst; } ints[] = {
            {"--nx", &a->nx}, {"--ny", &a->ny}, {"--nz", &a->nz},
            {"--npx", &a->npx}, {"--npy", &a->npy}, {"--npz", &a->npz},
            {"--pz", &a->pz}, {"--zl", &a->zl}, {"--zu", &a->zu}};
        int matched = 0;
        for (size_t k = 0; k < sizeof ints / sizeof ints[0] && !matched; k++) {
            if ((m = ts_cli_value_opt(CMD, argc, argv, &i, ints[k].name, NULL, &v)) != 0) {
                if (m < 0 || ts_cli_int(CMD, ints[k].name, v, 1, ints[k].dst) < 0) return -1;
                matched = 1;
            }
        }
        if (matched) continue;
        if ((m = ts_cli_value_opt(CMD, argc, argv, &i, "--rt", NULL, &v)) != 0) {
            if (m < 0 || ts_cli_double(CMD, "--rt", v, &a->rt) < 0) return -1;
            if (!(a->rt >= 0) || !isfinite(a->rt)) {
                ts_cli_errorf(CMD, "--rt: '%s' must be a number of seconds >= 0", v);
                return -1;
            }
            snprintf(a->rt_from, sizeof a->rt_from, "--rt");
        } else if ((m = ts_cli_value_opt(CMD, argc, argv, &i, "--engine", NULL, &v)) != 0) {
            if (m < 0) return -1;
            int e = ts_hpcg_engine_parse(v);
            if (e < 0) {
                ts_cli_errorf(CMD, "--engine: '%s' is not one of auto, ref, cpu, device, cuda", v);
                return -1;
            }
            a->engine = (ts_hpcg_engine)e;
        } else if ((m = ts_cli_value_opt(CMD, argc, argv, &i, "--dat", NULL, &v)) != 0) {
            if (m < 0) return -1;
            a->dat = v;
        } else if ((m = ts_cli_value_opt(CMD, argc, argv, &i, "--json", NULL, &v)) != 0) {
            if (m < 0) return -1;
            a->json = v;
        } else {
            ts_cli_errorf(CMD, "unknown option '%s' (tessera hpcg --help)", argv[i]);
            return -1;
        }
    }
    if (npos > 10) {
        ts_cli_errorf(CMD, "%d positional integers; HPCG reads at most 10 (nx ny nz rt pz zl zu npx npy npz)", npos);
        return -1;
    }
    apply_positional(pos, npos, a);
    if ((a->zl || a->zu) && !a->pz) {
        ts_cli_errorf(CMD, "--zl/--zu need --pz (the first process layer that gets zu)");
        return -1;
    }
    return 0;
}

// Line 4 of hpcg.dat: a number of seconds >= 0, then blanks or the end of the line or a word after a
// blank ("60 seconds"); 1 with *rt set, 0 for a blank line, -1 for anything else ("1h", "abc").
static int dat_seconds(const char *line, double *rt) {
    const char *s = line + strspn(line, " \t\r\n");
    if (!*s) return 0;
    char *end;
    double v = strtod(s, &end);
    if (end == s || (*end && !strchr(" \t\r\n", *end)) || !isfinite(v) || v < 0) return -1;
    *rt = v;
    return 1;
}

// hpcg.dat as the reference reads it: lines 1-2 ignored, line 3 "nx ny nz", line 4 the run time,
// optional line 5 "npx npy npz". Values below 16 become 16. A file without line 4 (or with a blank
// one) runs HPCG 3.1's 1800 s; a line 4 that is not a number of seconds >= 0 is refused (the
// reference would run 1800 s there too, silently). --rt and a positional rt take precedence, but
// the line is checked all the same.
static int read_dat(const char *path, hpcg_args *a, char *msg, size_t len) {
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(msg, len, "cannot read '%s'", path);
        return -1;
    }
    char line[5][512];
    int nl = 0;
    while (nl < 5 && fgets(line[nl], sizeof line[nl], f)) nl++;
    fclose(f);
    int n[3];
    if (nl < 3 || sscanf(line[2], "%d %d %d", &n[0], &n[1], &n[2]) != 3) {
        snprintf(msg, len, "%s:3: expected 'nx ny nz'", path);
        return -1;
    }
    for (int k = 0; k < 3; k++) if (n[k] < 16) n[k] = 16;
    a->nx = n[0]; a->ny = n[1]; a->nz = n[2];
    double rt = TS_HPCG_OFFICIAL_TIME;
    int have = nl >= 4 ? dat_seconds(line[3], &rt) : 0;
    if (have < 0) {
        line[3][strcspn(line[3], "\r\n")] = '\0';
        snprintf(msg, len, "%s:4: run time '%.64s' is not a number of seconds >= 0", path, line[3]);
        return -1;
    }
    if (a->rt < 0) {
        a->rt = rt;
        if (have)
            snprintf(a->rt_from, sizeof a->rt_from, "%s:4", path);
        else
            snprintf(a->rt_from, sizeof a->rt_from, "HPCG 3.1's value: %s has no run time on line 4", path);
    }
    int p[3];
    if (nl >= 5 && sscanf(line[4], "%d %d %d", &p[0], &p[1], &p[2]) == 3 && !a->npx && !a->npy && !a->npz) {
        a->npx = p[0]; a->npy = p[1]; a->npz = p[2];
    }
    return 0;
}

// The reference's rule for the command line: a dimension below 16 is raised to the largest of
// the others, or to 16.
static void raise_dims(hpcg_args *a) {
    int *d[3] = {&a->nx, &a->ny, &a->nz};
    int mx = 16;
    for (int k = 0; k < 3; k++) if (*d[k] > mx) mx = *d[k];
    for (int k = 0; k < 3; k++) if (*d[k] < 16) *d[k] = mx;
}

static void write_json(const hpcg_args *a, const ts_hpcg_result *r, int ranks) {
    FILE *f = ts_cli_json_fopen(CMD, a->json);
    if (!f) return;
    ts_json *j = ts_json_open_file(f);
    ts_results_begin(j, "tessera hpcg", ranks, NULL, NULL);
    ts_result_common c = {
        .bench = "hpcg", .engine = r->engine, .precision = 'd',
        .where = strcmp(r->engine, "cuda") && strcmp(r->engine, "sim") ? "host" : "device", .reps = r->cg_sets,
        .sec_median = r->times[TS_HPCG_T_TOTAL], .sec_min = r->times[TS_HPCG_T_TOTAL],
        .sec_max = r->times[TS_HPCG_T_TOTAL], .tf_median = r->rating / 1e3, .tf_min = r->rating / 1e3,
        .tf_max = r->rating / 1e3, .verified = r->valid, .error = NAN, .bound = NAN};
    ts_results_entry_begin(j, &c);
    ts_json_begin_object(j, "shape");
    ts_json_int(j, "nx", r->g.gnx);
    ts_json_int(j, "ny", r->g.gny);
    ts_json_int(j, "nz", r->g.gnz);
    ts_json_end_object(j);
    ts_json_begin_object(j, "extra");
    ts_json_int(j, "nx", r->g.nx);
    ts_json_int(j, "ny", r->g.ny);
    ts_json_int(j, "nz", r->g.nz);
    ts_json_int(j, "npx", r->g.npx);
    ts_json_int(j, "npy", r->g.npy);
    ts_json_int(j, "npz", r->g.npz);
    if (r->g.pz) {
        ts_json_int(j, "pz", r->g.pz);
        ts_json_int(j, "zl", r->g.zl);
        ts_json_int(j, "zu", r->g.zu);
    }
    ts_json_num(j, "rt", a->rt);
    ts_json_str(j, "rt_from", a->rt_from);
    ts_json_num(j, "rating_gflops", r->rating);
    ts_json_bool(j, "valid", r->valid);
    if (!r->valid) ts_json_str(j, "reason", r->reason);
    ts_json_bool(j, "official", r->times[TS_HPCG_T_TOTAL] >= TS_HPCG_OFFICIAL_TIME && !r->smoother_midx && !r->ref_given);
    ts_json_num(j, "ref_drop", r->ref_tolerance); // the reference CG's residual drop (all digits)
    if (r->ref_given) ts_json_bool(j, "ref_drop_given", 1);
    if (r->smoother_midx) ts_json_bool(j, "smoother_midx", 1);
    ts_json_int(j, "cg_sets", r->cg_sets);
    ts_json_int(j, "opt_iters", r->opt_iters);
    ts_json_int(j, "colors", r->ncolors);
    if (r->halo[0]) ts_json_str(j, "halo", r->halo);
    if (r->halo[0]) ts_json_bool(j, "mg_graph", r->mg_graph);
    ts_json_num(j, "residual_mean", r->testnorms.mean); // the timed sets' scaled residual, all digits
    if (r->device[0]) ts_json_str(j, "device", r->device);
    ts_json_num(j, "copy_gbs", r->copy_gbs);
    ts_json_num(j, "setup_s", r->times[TS_HPCG_T_SETUP]);
    ts_json_num(j, "optimize_s", r->times[TS_HPCG_T_OPT]);
    if (r->comm_init_s > 0) ts_json_num(j, "comm_init_s", r->comm_init_s);
    if (r->probe.levels) {
        const ts_hpcg_probe *q = &r->probe;
        ts_json_begin_object(j, "probe");
        if (ranks > 1) { // one rank: no exchanges
            ts_json_begin_array(j, "halo_us");
            for (int l = 0; l < q->levels; l++) ts_json_num(j, NULL, q->halo_us[l]);
            ts_json_end_array(j);
        }
        ts_json_num(j, "spmv_ms", q->spmv_ms);
        ts_json_num(j, "spmv_nohalo_ms", q->spmv_nohalo_ms);
        ts_json_num(j, "mg_ms", q->mg_ms);
        ts_json_num(j, "mg_nohalo_ms", q->mg_nohalo_ms);
        ts_json_num(j, "mg_nohalo_ms_fastest", q->mg_nohalo_ms_min);
        if (q->mg_graph_ms > 0) ts_json_num(j, "mg_graph_ms", q->mg_graph_ms);
        ts_json_num(j, "dot_us", q->dot_us);
        const struct { const char *k; const double *v; } lv[] = {
            {"pre_ms", q->pre_ms}, {"post_ms", q->post_ms}, {"restrict_prolong_ms", q->rp_ms}};
        for (size_t i = 0; i < sizeof lv / sizeof lv[0]; i++) {
            ts_json_begin_array(j, lv[i].k);
            for (int l = 0; l < q->levels; l++) ts_json_num(j, NULL, lv[i].v[l]);
            ts_json_end_array(j);
        }
        ts_json_begin_array(j, "fwd_sweep_us");
        for (int c = 0; c < q->ncolors; c++) ts_json_num(j, NULL, q->fwd_us[c]);
        ts_json_end_array(j);
        const struct { const char *k; const int *v; } cv[] = {
            {"color_rows", q->rows}, {"color_width", q->width}, {"color_halo_rows", q->hrows}, {"color_halo_width", q->hwidth}};
        for (size_t i = 0; i < (ranks > 1 ? 4u : 2u); i++) { // one rank: no halo blocks
            ts_json_begin_array(j, cv[i].k);
            for (int c = 0; c < q->ncolors; c++) ts_json_int(j, NULL, cv[i].v[c]);
            ts_json_end_array(j);
        }
        ts_json_end_object(j);
    }
    ts_json_num(j, "raw_gflops", r->gflops_raw);
    ts_json_num(j, "memory_bytes", r->mem_bytes);
    ts_json_str(j, "report", r->report_path);
    ts_json_begin_object(j, "phases");
    struct { const char *k; double gf, gb, xgb; } ph[] = {
        {"spmv", r->gflops_spmv, r->gbs_spmv, r->xgbs_spmv}, {"mg", r->gflops_mg, r->gbs_mg, r->xgbs_mg},
        {"ddot", r->gflops_ddot, r->gbs_ddot, r->xgbs_ddot},
        {"waxpby", r->gflops_waxpby, r->gbs_waxpby, r->xgbs_waxpby},
        {"total", r->gflops_raw, r->gbs_total, r->xgbs_total}};
    for (int i = 0; i < 5; i++) {
        ts_json_begin_object(j, ph[i].k);
        ts_json_num(j, "gflops", ph[i].gf);
        ts_json_num(j, "gbs", ph[i].gb);
        ts_json_num(j, "achieved_gbs", ph[i].xgb);
        if (r->copy_gbs > 0) ts_json_num(j, "of_copy_bw", ph[i].xgb / r->copy_gbs);
        ts_json_end_object(j);
    }
    ts_json_end_object(j);
    ts_json_end_object(j);
    ts_results_entry_end(j);
    ts_results_end(j);
    ts_json_close(j);
    ts_cli_json_fclose(CMD, a->json, f);
}

// The library's message without its "hpcg: " prefixes (at the front and after each ": " of a wrapped
// message): the CLI's own "tessera hpcg: " names the command once.
static void unprefixed(const char *msg, char *out, size_t len) {
    static const char pre[] = "hpcg: ";
    size_t n = 0;
    for (const char *p = msg; *p && n + 1 < len;) {
        if (!strncmp(p, pre, sizeof pre - 1) && (p == msg || (p - msg >= 2 && !strncmp(p - 2, ": ", 2)))) {
            p += sizeof pre - 1;
            continue;
        }
        out[n++] = *p++;
    }
    out[n] = '\0';
}

static void print_summary(const hpcg_args *a, const ts_hpcg_result *r) {
    char zs[64];
    ts_hpcg_geom_nz_text(&r->g, zs, sizeof zs);
    printf("HPCG 3.1  %lld x %lld x %lld global, %d x %d x %s per rank, %d x %d x %d ranks, %d thread(s) each\n",
           (long long)r->g.gnx, (long long)r->g.gny, (long long)r->g.gnz, r->g.nx, r->g.ny, zs,
           r->g.npx, r->g.npy, r->g.npz, r->omp_threads);
    printf("engine %s%s%s", r->engine, r->device[0] ? " on " : "", r->device);
    if (r->ncolors) printf(", %d colours", r->ncolors);
    if (r->halo[0] && strcmp(r->halo, "none")) printf(", halo %s", r->halo);
    if (r->mg_graph) printf(", V-cycle as a graph");
    printf("; setup %.3f s, optimization %.3f s", r->times[TS_HPCG_T_SETUP], r->times[TS_HPCG_T_OPT]);
    if (r->comm_init_s > 0) printf(" (NCCL communicator %.3f s, untimed like MPI_Init)", r->comm_init_s);
    printf("\n");
    // GB/s: the reference's byte model; achieved: the bytes this engine's kernels move.
    const int x = r->xgbs_total > 0, cb = r->copy_gbs > 0;
    printf("%-8s %12s %12s %12s", "phase", "time (s)", "GFLOP/s", "GB/s");
    if (x) printf(" %14s", "achieved GB/s");
    if (cb) printf(" %10s", "of copy");
    printf("\n");
    struct { const char *k; int t; double gf, gb, xgb; } ph[] = {
        {"SpMV", TS_HPCG_T_SPMV, r->gflops_spmv, r->gbs_spmv, r->xgbs_spmv},
        {"MG", TS_HPCG_T_MG, r->gflops_mg, r->gbs_mg, r->xgbs_mg},
        {"DDOT", TS_HPCG_T_DDOT, r->gflops_ddot, r->gbs_ddot, r->xgbs_ddot},
        {"WAXPBY", TS_HPCG_T_WAXPBY, r->gflops_waxpby, r->gbs_waxpby, r->xgbs_waxpby},
        {"total", TS_HPCG_T_TOTAL, r->gflops_raw, r->gbs_total, r->xgbs_total}};
    for (int i = 0; i < 5; i++) {
        printf("%-8s %12.4f %12.3f %12.3f", ph[i].k, r->times[ph[i].t], ph[i].gf, ph[i].gb);
        if (x) printf(" %14.1f", ph[i].xgb);
        if (cb) printf(" %9.1f%%", 100.0 * ph[i].xgb / r->copy_gbs);
        printf("\n");
    }
    if (cb) printf("device-to-device copy bandwidth (measured in this run): %.1f GB/s\n", r->copy_gbs);
    printf("run time %g s (%s)%s: %d CG sets x %d iterations (reference: %d); memory %.3f GB; report %s\n",
           a->rt, a->rt_from, a->rt > 0 ? "" : ", the quick path", r->cg_sets, r->opt_iters, TS_HPCG_REF_ITERS,
           r->mem_bytes / 1e9, r->report_path);
    if (r->ref_given)
        printf("note: TESSERA_HPCG_REF_DROP: the reference CG did not run (its residual drop %.6e was given); "
               "not an official result\n", r->ref_tolerance);
    if (r->smoother_midx)
        printf("note: TESSERA_HPCG_MIDX=1: the halo is exchanged between the smoother's sweeps too; not the "
               "reference preconditioner, not an official result\n");
    if (r->times[TS_HPCG_T_TOTAL] < TS_HPCG_OFFICIAL_TIME)
        printf("note: timed CG ran %.1f s; official results need at least %.0f s (--rt 1800)\n",
               r->times[TS_HPCG_T_TOTAL], TS_HPCG_OFFICIAL_TIME);
    if (r->valid)
        printf("HPCG result is VALID with a GFLOP/s rating of=%g\n", r->rating);
    else
        printf("HPCG result is INVALID: %s\n", r->reason);
}

int ts_cmd_hpcg(int argc, char **argv) {
    hpcg_args a;
    int prc = parse_args(argc, argv, &a);
    if (prc > 0) return TS_EXIT_OK;
    if (prc < 0) return TS_EXIT_USAGE;
    if (a.quiet) ts_cli_set_verbosity(-1);

    ts_comm comm;
    if (ts_comm_world(&comm) < 0) {
        ts_cli_errorf(CMD, "cannot start MPI: %s", ts_error_last()->message);
        return TS_EXIT_RUNTIME;
    }
    const int root = comm.rank == 0;
    ts_log_set_rank(comm.size > 1 ? comm.rank : -1);

    // Rank 0 settles the input; every rank then checks the same numbers, so all agree.
    int bad = 0;
    char msg[600] = "";
    if (root) {
        int from_flags = a.nx || a.ny || a.nz;
        const char *dat = a.dat ? a.dat : (!from_flags && access("hpcg.dat", F_OK) == 0 ? "hpcg.dat" : NULL);
        if (dat && !from_flags) {
            if (read_dat(dat, &a, msg, sizeof msg) < 0) bad = 1;
        } else if (dat && a.dat) {
            snprintf(msg, sizeof msg, "--dat and --nx/--ny/--nz exclude each other (the file gives them)");
            bad = 1;
        } else if (!from_flags) {
            a.nx = a.ny = a.nz = HPCG_DEFAULT_N;
            ts_log(TS_LOG_INFO, "hpcg: no hpcg.dat and no --nx/--ny/--nz: %d^3 per rank", HPCG_DEFAULT_N);
        }
        ts_devset_opts dev; // the device layer's TESSERA_* settings: input, whatever the engine
        if (!bad && ts_devset_opts_init(&dev) < 0) {
            snprintf(msg, sizeof msg, "%s", ts_error_last()->message);
            bad = 1;
        }
        if (!bad) {
            raise_dims(&a);
            if (a.rt < 0) {
                a.rt = HPCG_DEFAULT_RT;
                // (a file read gives a run time, HPCG 3.1's 1800 s when it has none)
                snprintf(a.rt_from, sizeof a.rt_from, "default: no --rt%s", from_flags ? "" : ", no hpcg.dat");
            }
            ts_log(TS_LOG_INFO, "hpcg: run time %g s (%s)%s", a.rt, a.rt_from, a.rt > 0 ? "" : ": the quick path");
        }
    }
    int hdr[10] = {bad, a.nx, a.ny, a.nz, a.npx, a.npy, a.npz, a.pz, a.zl, a.zu};
    ts_comm_bcast(&comm, hdr, sizeof hdr, 0);
    ts_comm_bcast(&comm, &a.rt, sizeof a.rt, 0);
    if (hdr[0]) {
        if (root) ts_cli_errorf(CMD, "%s", msg);
        return TS_EXIT_USAGE;
    }
    a.nx = hdr[1]; a.ny = hdr[2]; a.nz = hdr[3]; a.npx = hdr[4]; a.npy = hdr[5]; a.npz = hdr[6];
    a.pz = hdr[7]; a.zl = hdr[8]; a.zu = hdr[9];

    ts_hpcg_geom g;
    if (ts_hpcg_geom_init_z(&g, comm.size, comm.rank, a.nx, a.ny, a.nz, a.npx, a.npy, a.npz, a.pz, a.zl, a.zu) < 0 ||
        ts_hpcg_check_geom(&g) < 0) {
        if (root) ts_cli_errorf(CMD, "%s", ts_error_last()->message);
        return TS_EXIT_USAGE;
    }
    // Memory: the ranks of a node share it. Any rank short of memory stops all.
    {
        int lr = 0, ls = 1;
        ts_comm_node_local(&comm, &lr, &ls);
        // The optimized problem of the CPU engine (auto: when no device turns up) lives here too.
        int host_opt = a.engine == TS_HPCG_ENGINE_CPU || a.engine == TS_HPCG_ENGINE_AUTO;
        // The larger of the two z values when pz splits the layers (a node may hold either).
        const int nz = g.zl > g.zu ? g.zl : g.zu;
        double need = (ts_hpcg_bytes_estimate(a.nx, a.ny, nz) +
                       (host_opt ? ts_hpcg_opt_bytes_estimate(a.nx, a.ny, nz) : 0.0)) * ls;
        double avail = (double)ts_cli_host_mem_available() * HPCG_MEM_FRACTION;
        int short_mem = avail > 0 && need > avail;
        int who = short_mem ? comm.rank : comm.size;
        ts_comm_allreduce_i(&comm, &who, 1, TS_COMM_MIN);
        if (who < comm.size) {
            if (comm.rank == who)
                ts_cli_errorf(CMD, "local grid %d x %d x %d needs about %.2f GiB for the %d rank(s) of this "
                              "node, more than the limit %.2f GiB (%.0f%% of the available memory)",
                              a.nx, a.ny, nz, ts_cli_gib(need), ls, ts_cli_gib(avail), HPCG_MEM_FRACTION * 100);
            return TS_EXIT_USAGE;
        }
    }
    // The JSON file must be writable before the run.
    int open_failed = 0;
    if (root && a.json && strcmp(a.json, "-") != 0) {
        int existed = access(a.json, F_OK) == 0;
        FILE *f = fopen(a.json, "a");
        if (!f) open_failed = 1;
        else {
            fclose(f);
            if (!existed) unlink(a.json);
        }
    }
    ts_comm_bcast(&comm, &open_failed, sizeof open_failed, 0);
    if (open_failed) {
        if (root) ts_cli_errorf(CMD, "cannot write '%s'", a.json);
        return TS_EXIT_USAGE;
    }

    ts_hpcg_opts o = {.nx = a.nx, .ny = a.ny, .nz = a.nz, .npx = a.npx, .npy = a.npy, .npz = a.npz,
                      .pz = a.pz, .zl = a.zl, .zu = a.zu,
                      .rt = a.rt, .quiet = a.quiet, .report_dir = NULL, .engine = a.engine};
    ts_hpcg_result r;
    int rc = ts_hpcg_run(&comm, &o, &r);
    if (rc < 0) {
        // Bad input (a malformed TESSERA_* value too), an engine this machine lacks, a problem
        // larger than the device: usage. A failure of the run itself says that the run stopped.
        const int usage = ts_cli_exit_of(rc) == TS_EXIT_USAGE || rc == TS_ERR_DEVMEM;
        if (root) {
            char m[sizeof ts_error_last()->message];
            unprefixed(ts_error_last()->message, m, sizeof m);
            ts_cli_errorf(CMD, "%s%s", usage ? "" : "stopped: ", m);
        }
        return usage ? TS_EXIT_USAGE : TS_EXIT_RUNTIME;
    }
    if (root) {
        print_summary(&a, &r);
        if (a.json) write_json(&a, &r, comm.size);
    }
    return r.valid ? TS_EXIT_OK : TS_EXIT_CHECK;
}
