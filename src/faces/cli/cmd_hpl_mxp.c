// cmd_hpl_mxp.c: `tessera hpl-mxp`: the mixed-precision Linpack (HPL-MxP's rules) with HPL's face: input file or flags, progress, report, JSON.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "algorithms/hpl_mxp/ts_mxp.h"
#include "core/ts_env.h"
#include "core/ts_error.h"
#include "core/ts_log.h"
#include "device/ts_device.h"
#include "faces/cli/ts_cli.h"
#include "faces/cli/ts_cli_linpack.h"
#include "faces/cli/ts_cli_opts.h"

#define CMD "hpl-mxp"

// Sizing defaults (docs/hpl-mxp.md).
#define MXP_NB_DEVICE 2048         // NB on GPUs: the trailing GEMM's k (FP16 tensor cores near peak)
#define MXP_NB_CPU 256             // NB on CPUs
#define MXP_N_CPU 8192             // N of a CPU run without -N (a few seconds on a few cores)
#define MXP_MEM_FRACTION_AUTO 0.90 // share of free device memory for the auto-sized matrix
#define MXP_MEM_FRACTION_CHECK 0.98 // an explicit N must fit this share

typedef struct {
    ts_linpack_args lp;     // the options shared with hpl (ts_cli_linpack.h); depth -1: auto
    int nprec;
    ts_mxp_fmt prec;
    int plain;              // --test-matrix plain: not diagonally dominant (tests only)
} mxp_args;

static void usage(FILE *f) {
    fprintf(f,
        "usage: tessera hpl-mxp [--dat FILE | -N n [-NB nb] [-P p -Q q] [--prec fp16|bf16|fp8]]\n"
        "                       [--exec auto|cpu|device] [--depth 0|1] [--json FILE] [--plot FILE.svg]\n"
        "                       [--mem-fraction f] [-q] [-v]\n\n"
        "HPL-MxP: the mixed-precision Linpack. LU without pivoting of HPL-MxP's diagonally dominant\n"
        "matrix in FP32 with 16-bit GEMMs (FP32 accumulation), then iterative refinement in FP64 until\n"
        "HPL's scaled residual is below 16 (at most 50 iterations). Rate: (2/3 N^3 + 3/2 N^2) / (LU +\n"
        "refinement seconds).\n"
        "  --dat FILE        read HPL-MxP.dat (HPL.dat's lines 1-13, then the number of precisions and\n"
        "                    the precisions); every combination runs\n"
        "  -N/-NB/-P/-Q      one test without a file (each also as --N n or -N=n); with neither:\n"
        "                    ./HPL-MxP.dat if it exists, else sized for the machine\n"
        "  --prec P          precision of the GEMM operands: fp16 (default), bf16, or fp8 (E4M3 in\n"
        "                    the trailing update, per-panel power-of-two scales; NOT eligible for the\n"
        "                    HPL-MxP list, whose floor is 16 bits since June 2025; 1 x 1 grids only)\n"
        "  --exec MODE       auto (the device when present), cpu, device\n"
        "  --depth d         look-ahead on devices: 1 (default; the next panel on a second stream\n"
        "                    beside the update) or 0\n"
        "  --json FILE       results-schema JSON (bench \"hpl-mxp\")\n"
        "  --plot FILE       SVG of the LU's rate over time and the refinement's residual per step\n"
        "                    (FILE-k.svg per test when there are several)\n"
        "  --mem-fraction f  share of memory for sizing and for the fit check (auto: 0.90)\n"
        "  --test-matrix plain  tests only: keep the generated diagonal (not diagonally dominant; the\n"
        "                    LU without pivoting is then unstable and the run must fail)\n"
        "  -q                no progress line\n"
        "  -v, --verbose     debug log lines (the residual of every refinement step)\n\n"
        "P x Q grids run over MPI with P Q ranks, one a GPU (mpiexec -n PQ; 2D block-cyclic like hpl);\n"
        "without -N, N is sized so that each rank holds about the share of its memory a 1 x 1 run\n"
        "would.\n"
        "exit: 0 all tests passed, 1 a test failed (residual, iteration cap, breakdown), 2 bad input,\n"
        "3 runtime failure/skipped test\n");
}

static const ts_linpack_spec g_spec = {CMD, usage, 1, 8192, 0, 1, ""}; // NB at most 8192 (HPL's engine limit)

// The command's own options (ts_linpack_parse's `own`): --prec and --test-matrix.
static int own_opt(void *ctx, int argc, char **argv, int *pi) {
    mxp_args *a = ctx;
    const char *v = NULL;
    int m = ts_cli_value_opt(CMD, argc, argv, pi, "--prec", NULL, &v);
    if (m != 0) {
        if (m > 0 && ts_mxp_fmt_parse(v, &a->prec) == 0) return a->nprec = 1;
        if (m > 0) ts_cli_errorf(CMD, "--prec: '%s' is not one of fp16, bf16, fp8", v);
        return -1;
    }
    m = ts_cli_value_opt(CMD, argc, argv, pi, "--test-matrix", NULL, &v);
    if (m > 0 && (!strcmp(v, "plain") || !strcmp(v, "dominant"))) {
        a->plain = !strcmp(v, "plain");
        return 1;
    }
    if (m > 0) ts_cli_errorf(CMD, "--test-matrix: '%s' is not one of dominant, plain", v);
    return m > 0 ? -1 : m;
}

static int parse_args(int argc, char **argv, mxp_args *a) {
    memset(a, 0, sizeof *a);
    const int rc = ts_linpack_parse(&g_spec, argc, argv, &a->lp, own_opt, a);
    if (rc != 0) return rc;
    if (a->lp.dat && (a->lp.N >= 0 || a->lp.NB || a->lp.P || a->lp.Q || a->nprec)) {
        ts_cli_errorf(CMD, "--dat and -N/-NB/-P/-Q/--prec exclude each other (the file gives them)");
        return -1;
    }
    return 0;
}

static ts_hpl_progress g_progress;

int ts_cmd_hpl_mxp(int argc, char **argv) {
    mxp_args a;
    const int prc = parse_args(argc, argv, &a); // -q / -v set the log's verbosity
    if (prc != 0) return prc > 0 ? TS_EXIT_OK : TS_EXIT_USAGE;

    const int from_flags = a.lp.N >= 0 || a.lp.NB || a.lp.P || a.lp.Q || a.nprec;
    const char *dat_path = a.lp.dat;
    if (!dat_path && !from_flags && access("HPL-MxP.dat", F_OK) == 0) dat_path = "HPL-MxP.dat";
    ts_mxp_dat dat;
    memset(&dat, 0, sizeof dat);
    if (dat_path && ts_mxp_dat_read(dat_path, &dat) < 0) {
        ts_cli_errorf(CMD, "%s", ts_error_last()->message);
        return TS_EXIT_USAGE;
    }
    if (a.lp.json && ts_cli_check_output(CMD, "--json", a.lp.json) != 0) return TS_EXIT_USAGE;
    if (a.lp.plot && ts_cli_check_output(CMD, "--plot", a.lp.plot) != 0) return TS_EXIT_USAGE;
    ts_devset_opts dopts; // a malformed TESSERA_* device setting is bad input
    if (ts_devset_opts_init(&dopts) < 0) {
        ts_cli_errorf(CMD, "%s", ts_error_last()->message);
        return TS_EXIT_USAGE;
    }

    ts_hpl_opts o;
    memset(&o, 0, sizeof o);
    o.exec = a.lp.exec;
    o.panel_on_device = -1;
    o.engine = "auto";
    g_progress.enabled = !a.lp.quiet;
    ts_hpl_ctx *ctx = NULL;
    if (ts_hpl_ctx_create(&o, &ctx) < 0) {
        ts_cli_errorf(CMD, "cannot set up: %s", ts_error_last()->message);
        return TS_EXIT_RUNTIME;
    }
    const int rank = ts_hpl_ctx_rank(ctx), size = ts_hpl_ctx_size(ctx);
    const int root = rank == 0;
    ts_log_set_rank(size > 1 ? rank : -1);
    int code = TS_EXIT_OK;
    FILE *out = NULL;

    if (!dat_path) {
        const int dev = ts_linpack_device_expected(a.lp.exec);
        const int NB = a.lp.NB ? a.lp.NB : dev ? MXP_NB_DEVICE : MXP_NB_CPU;
        int P = a.lp.P ? a.lp.P : 1, Q = a.lp.Q ? a.lp.Q : 1;
        int64_t N = a.lp.N;
        if (N < 0) {
            const double frac = a.lp.mem_fraction > 0 ? a.lp.mem_fraction : MXP_MEM_FRACTION_AUTO;
            const int64_t fit = ts_mxp_max_n_grid(ctx, NB, P, Q, frac);
            N = dev ? fit : (fit > 0 && fit < MXP_N_CPU ? fit : MXP_N_CPU);
            if (N <= 0) {
                if (root) ts_cli_errorf(CMD, "cannot size the problem for this machine; give -N");
                code = TS_EXIT_RUNTIME;
                goto done;
            }
            if (root && !a.lp.quiet)
                ts_log(TS_LOG_INFO, "hpl-mxp: sized N=%lld NB=%d for this machine (%s)", (long long)N, NB,
                       dev ? "device memory" : "CPU default");
        }
        ts_hpl_dat_default(&dat.head);
        strcpy(dat.head.outfile, "HPL-MxP.out");
        dat.head.device_out = 6;
        dat.head.nN = 1;
        dat.head.N[0] = N;
        dat.head.nNB = 1;
        dat.head.NB[0] = NB;
        dat.head.pmap = 0;
        dat.head.ngrid = 1;
        dat.head.P[0] = P;
        dat.head.Q[0] = Q;
        dat.head.threshold = TS_MXP_THRESHOLD;
        dat.nprec = 1;
        dat.prec[0] = a.nprec ? a.prec : TS_MXP_FP16;
    }
    if (ts_hpl_check_grids(&dat.head, size) < 0) {
        if (root) ts_cli_errorf(CMD, "%s", ts_error_last()->message);
        code = TS_EXIT_USAGE;
        goto done;
    }
    if (dat_path || a.lp.N >= 0) { // explicit sizes must fit
        const double frac = a.lp.mem_fraction > 0 ? a.lp.mem_fraction : MXP_MEM_FRACTION_CHECK;
        for (int g = 0; g < dat.head.ngrid; g++)
            for (int b = 0; b < dat.head.nNB; b++) {
                const int P = dat.head.P[g], Q = dat.head.Q[g];
                const int64_t fit = ts_mxp_max_n_grid(ctx, dat.head.NB[b], P, Q, frac);
                for (int i = 0; i < dat.head.nN; i++)
                    if (fit > 0 && dat.head.N[i] > fit) {
                        if (root) {
                            char grid[48] = "";
                            if (P * Q > 1) snprintf(grid, sizeof grid, " on the %d x %d grid", P, Q);
                            ts_cli_errorf(CMD, "N=%lld does not fit in memory: the largest N that fits with NB=%d%s is "
                                          "%lld (at %.0f%% of the memory; --mem-fraction changes the share)",
                                          (long long)dat.head.N[i], dat.head.NB[b], grid, (long long)fit, frac * 100.0);
                        }
                        code = TS_EXIT_USAGE;
                        goto done;
                    }
            }
    }
    if (root && ts_hpl_open_output(&dat.head, &out) < 0) {
        ts_cli_errorf(CMD, "%s", ts_error_last()->message);
        code = TS_EXIT_USAGE;
        goto done;
    }

    ts_mxp_drive_opts dopt = {out,        a.lp.json, &g_progress, a.plain ? TS_MXP_GEN_PLAIN : TS_MXP_GEN_DOMINANT,
                              a.lp.depth, a.lp.plot};
    ts_hpl_tally t;
    int rc = ts_mxp_drive(ctx, &dat, &dopt, &t);
    if (t.runtime_error < 0 || rc < 0) {
        if (root) ts_cli_errorf(CMD, "%s", ts_error_last()->message);
        code = ts_cli_exit_of(rc < 0 ? rc : t.runtime_error) == TS_EXIT_USAGE ? TS_EXIT_USAGE : TS_EXIT_RUNTIME;
    } else if (t.kfail > 0) {
        code = TS_EXIT_CHECK;
    } else if (t.kskip > 0) {
        code = TS_EXIT_RUNTIME;
    }

done:
    if (root && out) ts_hpl_close_output(out);
    ts_hpl_ctx_destroy(ctx);
    return code;
}
