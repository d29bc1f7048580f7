// cmd_hpl.c: `tessera hpl`: HPL.dat-compatible Linpack (or sized from flags/the machine), HPL 2.3's report, JSON, plot.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "algorithms/hpl/ts_hpl.h"
#include "core/ts_env.h"
#include "core/ts_error.h"
#include "core/ts_json.h"
#include "core/ts_log.h"
#include "core/ts_timer.h"
#include "device/ts_device.h"
#include "faces/cli/ts_cli.h"
#include "faces/cli/ts_cli_linpack.h"
#include "faces/cli/ts_cli_opts.h"
#include "kernels/ts_kernels.h"
#include "ts_config.h"

#if TS_HAVE_MPI
#include <mpi.h>
#endif

#define CMD "hpl"

// Sizing defaults (documented in docs/hpl.md).
#define HPL_NB_DEVICE 1024        // NB on GPUs (NVIDIA HPL's usual choice)
#define HPL_NB_CPU 192            // NB on CPUs (reference HPL's usual choice)
#define HPL_MEM_FRACTION_AUTO 0.85// share of device memory for the auto-sized matrix
#define HPL_MEM_FRACTION_CHECK 0.95 // an explicit N must fit this share unless --mem-fraction says
#define HPL_CPU_BUDGET_S 45.0     // CPU-only auto size: factorization seconds (with generation and check, about a minute)
#define HPL_CPU_EFFICIENCY 0.75   // engine CPU rate / probed DGEMM rate: 89 vs ~115 GFLOP/s, 2 cores, N=10752
#define HPL_CPU_MIN_N 2000

typedef struct {
    ts_linpack_args lp; // the options shared with hpl-mxp (ts_cli_linpack.h)
    int panel;        // -1 auto, 0 cpu, 1 device (ours), 2 cusolver, 3 hybrid
    int baseline;     // 1: --baseline cusolver
    double ceiling;   // --ceiling S: seconds per GEMM engine for the DGEMM ceiling (0: none)
    const char *gemm; // --gemm: "auto", "cublas", "tessera"; NULL: not given
    double time_budget;  // 0: not given
} hpl_args;

static void usage(FILE *f) {
    fprintf(f,
        "usage: tessera hpl [--dat FILE | -N n [-NB nb] [-P p -Q q]] [--depth d]\n"
        "                   [--exec auto|cpu|device|ooc] [--panel cpu|device|cusolver|hybrid|auto]\n"
        "                   [--gemm auto|cublas|tessera] [--baseline cusolver] [--ceiling SECONDS]\n"
        "                   [--json FILE] [--plot FILE.svg] [--mem-fraction f]\n"
        "                   [--time-budget SECONDS] [-q] [-v]\n\n"
        "High Performance Linpack with HPL 2.3's input (HPL.dat) and output.\n"
        "  --dat FILE        read HPL.dat (every combination runs, as xhpl does)\n"
        "  -N/-NB/-P/-Q      one test without a file (WR11C2R4 settings, threshold 16); each also\n"
        "                    as --N n or -N=n\n"
        "                    with neither: ./HPL.dat if it exists, else sized for the machine\n"
        "  --depth d         look-ahead depth 0..4 (replaces the DEPTH list of HPL.dat; 1 without\n"
        "                    a file)\n"
        "  --exec MODE       auto (device when present), cpu, device, ooc (out-of-core)\n"
        "  --panel ENGINE    who factors the panels: cpu (host), device (our recursive panel\n"
        "                    on the GPU, HPL's PFACT/RFACT/NBMIN/NDIV), cusolver (dgetrf),\n"
        "                    hybrid (ours on a few SMs for panels of >= 24 NB rows, dgetrf\n"
        "                    below; P = 1, else dgetrf), auto (TESSERA_HPL_PANEL=tessera|\n"
        "                    cusolver|hybrid|cpu, else hybrid on CUDA and the host\n"
        "                    elsewhere); device panels need P = 1\n"
        "  --gemm ENGINE     the DGEMM engine of the trailing update and U on the device path:\n"
        "                    cublas, tessera (our tensor-core DGEMM), or auto (TESSERA_HPL_GEMM\n"
        "                    if set, else with --ceiling the engine that sustained the most there,\n"
        "                    else cuBLAS on CUDA devices); an engine the devices cannot run is refused\n"
        "  --baseline cusolver  after each 1x1 test: cusolverDnDgetrf on the same matrix,\n"
        "                    timed and verified, with the tessera LU/cuSOLVER time ratio\n"
        "  --ceiling S       first hold each GEMM engine S seconds on HPL's update shape (m = n =\n"
        "                    min(N/Q, 16384), k = NB of the first test) on every device: the\n"
        "                    power-capped DGEMM ceiling; each result gets its ratio to it\n"
        "                    (a line after it, JSON extra.ceiling_tflops, hpl_over_ceiling);\n"
        "                    energy per engine where NVML has the GPU's counter\n"
        "  --json FILE       results-schema JSON (bench \"hpl\")\n"
        "  --plot FILE       SVG of per-iteration TFLOP/s and time split (FILE-k.svg per test)\n"
        "  --mem-fraction f  share of memory for sizing and for the fit check (auto: 0.85)\n"
        "  --time-budget S   CPU runs: size N to take about S seconds\n"
        "  -q                no progress line\n"
        "  -v, --verbose     debug log lines (TESSERA_LOG=debug)\n\n"
        "exit: 0 all tests passed, 1 a residual FAILED, 2 bad input, 3 runtime failure/skipped test\n");
}

static const ts_linpack_spec g_spec = {CMD, usage, 0, 0, 1, TS_HPL_MAX_DEPTH, " (deeper look-ahead is not implemented here)"};

// The command's own options (ts_linpack_parse's `own`).
static int own_opt(void *ctx, int argc, char **argv, int *pi) {
    hpl_args *a = ctx;
    const char *v = NULL;
    int m;
    if ((m = ts_cli_value_opt(CMD, argc, argv, pi, "--panel", NULL, &v)) != 0) {
        if (m < 0) return -1;
        if (!strcmp(v, "auto")) a->panel = -1;
        else if (!strcmp(v, "cpu")) a->panel = 0;
        else if (!strcmp(v, "device")) a->panel = 1;
        else if (!strcmp(v, "cusolver")) a->panel = 2;
        else if (!strcmp(v, "hybrid")) a->panel = 3;
        else {
            ts_cli_errorf(CMD, "--panel: '%s' is not one of cpu, device, cusolver, hybrid, auto", v);
            return -1;
        }
    } else if ((m = ts_cli_value_opt(CMD, argc, argv, pi, "--gemm", NULL, &v)) != 0) {
        if (m < 0) return -1;
        if (ts_hpl_gemm_parse(v, &a->gemm) < 0) {
            ts_cli_errorf(CMD, "--gemm: %s", ts_error_last()->message);
            return -1;
        }
    } else if ((m = ts_cli_value_opt(CMD, argc, argv, pi, "--baseline", NULL, &v)) != 0) {
        if (m < 0) return -1;
        if (strcmp(v, "cusolver") != 0) {
            ts_cli_errorf(CMD, "--baseline: '%s' is not a baseline (cusolver)", v);
            return -1;
        }
        a->baseline = 1;
    } else if ((m = ts_cli_value_opt(CMD, argc, argv, pi, "--ceiling", NULL, &v)) != 0) {
        if (m < 0 || ts_parse_duration(v, "--ceiling", &a->ceiling) < 0 || !(a->ceiling > 0)) {
            ts_cli_errorf(CMD, "--ceiling: '%s' is not a positive duration (e.g. 20, 20s, 1m)", v);
            return -1;
        }
    } else if ((m = ts_cli_value_opt(CMD, argc, argv, pi, "--time-budget", NULL, &v)) != 0) {
        if (m < 0 || ts_parse_duration(v, "--time-budget", &a->time_budget) < 0 ||
            !(a->time_budget > 0)) {
            ts_cli_errorf(CMD, "--time-budget: '%s' is not a positive duration (e.g. 90, 90s, 2m)", v);
            return -1;
        }
    } else {
        return 0;
    }
    return 1;
}

static int parse_args(int argc, char **argv, hpl_args *a) {
    memset(a, 0, sizeof *a);
    a->panel = -1;
    const int rc = ts_linpack_parse(&g_spec, argc, argv, &a->lp, own_opt, a);
    if (rc != 0) return rc;
    if (a->lp.dat && (a->lp.N >= 0 || a->lp.NB || a->lp.P || a->lp.Q)) {
        ts_cli_errorf(CMD, "--dat and -N/-NB/-P/-Q exclude each other (the file gives them)");
        return -1;
    }
    if (a->baseline && a->lp.exec == TS_HPL_EXEC_CPU) {
        ts_cli_errorf(CMD, "--baseline cusolver runs on the GPU: it cannot go with --exec cpu");
        return -1;
    }
    if (a->gemm && strcmp(a->gemm, "auto") != 0 && a->lp.exec == TS_HPL_EXEC_CPU) {
        ts_cli_errorf(CMD, "--gemm %s chooses the devices' DGEMM: it cannot go with --exec cpu", a->gemm);
        return -1;
    }
    if (a->ceiling > 0 && a->lp.exec == TS_HPL_EXEC_CPU) {
        ts_cli_errorf(CMD, "--ceiling measures the devices' DGEMM: it cannot go with --exec cpu");
        return -1;
    }
    if (a->lp.dat && a->time_budget > 0) {
        ts_cli_errorf(CMD, "--time-budget sizes N, which --dat gives");
        return -1;
    }
    return 0;
}

// ---- agreement across ranks ------------------------------------------------------------------

static int mpi_on(void) {
#if TS_HAVE_MPI
    int init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    return init && !fin;
#else
    return 0;
#endif
}

// The lowest rank whose `failed` is set, or -1 when none failed.
static int first_failed(int rank, int size, int failed) {
    int who = failed ? rank : size;
#if TS_HAVE_MPI
    if (mpi_on()) {
        int in = who;
        MPI_Allreduce(&in, &who, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    }
#else
    (void)rank;
#endif
    return who < size ? who : -1;
}

static void bcast_bytes(void *p, int n) {
#if TS_HAVE_MPI
    if (mpi_on()) MPI_Bcast(p, n, MPI_BYTE, 0, MPI_COMM_WORLD);
#else
    (void)p; (void)n;
#endif
}

// Whether this process was started alone (no launcher told it of other ranks): then errors found
// before the collective context is created can be reported at once.
static int started_alone(void) {
#if TS_HAVE_MPI
    return ts_env_launch_size() <= 1;
#else
    return 1;
#endif
}

static void report_input_error(const char *msg) {
    ts_cli_errorf(CMD, "%s", msg);
    fprintf(stderr, ">>> Illegal input in file HPL.dat. Exiting ... <<<\n");
}

// ---- sizing ----------------------------------------------------------------------------------

// Most square P x Q with P <= Q and P * Q = n.
static void square_grid(int n, int *P, int *Q) {
    int p = (int)floor(sqrt((double)n));
    while (p > 1 && n % p) p--;
    *P = p < 1 ? 1 : p;
    *Q = n / *P;
}

// DGEMM rate of the CPU BLAS on the HPL update shape (n x n x NB), GFLOP/s.
static double cpu_dgemm_gflops(int nb) {
    const int64_t n = 2048, k = nb;
    double *A = malloc(sizeof(double) * n * k), *B = malloc(sizeof(double) * n * k);
    double *C = calloc((size_t)(n * n), sizeof(double));
    double rate = 0;
    if (A && B && C) {
        for (int64_t i = 0; i < n * k; i++) A[i] = B[i] = 0.5 - (double)((i * 7919) % 1000) / 1000.0;
        const double one = 1.0, mone = -1.0;
        ts_gemm_cpu('d', 'N', 'T', n, n, k, &mone, A, n, B, n, &one, C, n); // warm-up
        double t = ts_now();
        int reps = 0;
        do {
            ts_gemm_cpu('d', 'N', 'T', n, n, k, &mone, A, n, B, n, &one, C, n);
            reps++;
        } while (ts_now() - t < 0.3 && reps < 50);
        t = ts_now() - t;
        rate = 2.0 * n * n * k * reps / t / 1e9;
    }
    free(A); free(B); free(C);
    return rate;
}

// N for a CPU run of about `budget` seconds: 2/3 N^3 = budget * rate.
static int64_t cpu_n_for_budget(double budget, int nb) {
    double rate = cpu_dgemm_gflops(nb) * 1e9 * HPL_CPU_EFFICIENCY;
    if (!(rate > 0)) rate = 20e9;
    int64_t n = (int64_t)cbrt(1.5 * budget * rate);
    if (n < HPL_CPU_MIN_N) n = HPL_CPU_MIN_N;
    return n;
}

// One test from the flags, with HPL's common settings (WR11C2R4: row-major, depth 1, 1rM,
// Crout RFACT, NDIV 2, right PFACT, NBMIN 4, mix swap 64, threshold 16).
static void dat_from_flags(ts_hpl_dat *d, int64_t N, int NB, int P, int Q) {
    ts_hpl_dat_default(d);
    d->nN = 1; d->N[0] = N;
    d->nNB = 1; d->NB[0] = NB;
    d->ngrid = 1; d->P[0] = P; d->Q[0] = Q;
    d->npfact = 1; d->pfact[0] = 2;
    d->nnbmin = 1; d->nbmin[0] = 4;
    d->nndiv = 1; d->ndiv[0] = 2;
    d->nrfact = 1; d->rfact[0] = 1;
    d->nbcast = 1; d->bcast[0] = 1;
    d->ndepth = 1; d->depth[0] = 1;
}

// Every (grid, NB) of the file must hold its largest N. Returns 0, or sets msg and returns -1.
static int check_fit(ts_hpl_ctx *ctx, const ts_hpl_dat *d, double fraction, char *msg, size_t len) {
    int64_t nmax_req = 0;
    int dmax = 0; // the deepest lookahead listed holds the most panel buffers
    for (int i = 0; i < d->nN; i++) if (d->N[i] > nmax_req) nmax_req = d->N[i];
    for (int i = 0; i < d->ndepth; i++) if (d->depth[i] > dmax) dmax = d->depth[i];
    for (int g = 0; g < d->ngrid; g++) {
        for (int b = 0; b < d->nNB; b++) {
            int64_t fit = ts_hpl_max_n(ctx, d->P[g], d->Q[g], d->NB[b], dmax, fraction);
            if (fit < 0) continue; // the engine cannot tell; HPL would try and skip on failure
            if (nmax_req > fit) {
                snprintf(msg, len, "N=%lld does not fit in memory: the largest N that fits a %d x %d "
                         "grid with NB=%d is %lld (at %.0f%% of the memory; --mem-fraction changes "
                         "the share)", (long long)nmax_req, d->P[g], d->Q[g], d->NB[b],
                         (long long)fit, fraction * 100.0);
                return -1;
            }
        }
    }
    return 0;
}

// ---- the command -----------------------------------------------------------------------------

static ts_hpl_progress g_progress; // progress_ctx of the engine; lives as long as the context

int ts_cmd_hpl(int argc, char **argv) {
    hpl_args a;
    int prc = parse_args(argc, argv, &a);
    if (prc > 0) return TS_EXIT_OK;
    if (prc < 0) return TS_EXIT_USAGE;
    // Every kernel loaded when CUDA starts (before MPI and the devices): loaded on first use, a new
    // cuBLAS kernel in mid-run stalls the panel's stream behind the whole update (one H200, calls
    // 52-53: idle 0.18 s against 0.08, bench/notes/hpl.md). A value the user set is kept.
    if (!ts_env_raw("CUDA_MODULE_LOADING")) setenv("CUDA_MODULE_LOADING", "EAGER", 0);
    // Which input: --dat, flags, ./HPL.dat (as xhpl), or the machine.
    int from_flags = a.lp.N >= 0 || a.lp.NB || a.lp.P || a.lp.Q || a.time_budget > 0;
    const char *dat_path = a.lp.dat;
    if (!dat_path && !from_flags && access("HPL.dat", F_OK) == 0) dat_path = "HPL.dat";

    // Every rank reads the file; failures are agreed once the context (and MPI) is up.
    ts_hpl_dat dat;
    memset(&dat, 0, sizeof dat);
    int dat_rc = 0;
    char dat_msg[600] = "";
    if (dat_path) {
        dat_rc = ts_hpl_dat_read(dat_path, &dat);
        if (dat_rc < 0) snprintf(dat_msg, sizeof dat_msg, "%s", ts_error_last()->message);
        if (dat_rc < 0 && started_alone()) {
            report_input_error(dat_msg);
            return TS_EXIT_USAGE;
        }
        if (dat_rc == 0 && a.lp.depth >= 0) {
            dat.ndepth = 1;
            dat.depth[0] = a.lp.depth;
        }
    }

    ts_hpl_opts o;
    memset(&o, 0, sizeof o);
    o.exec = a.lp.exec;
    o.panel_on_device = a.panel < 0 ? -1 : a.panel == 0 ? 0 : 1;
    o.panel = a.panel < 0 ? TS_HPL_PANEL_AUTO : a.panel == 0 ? TS_HPL_PANEL_CPU
              : a.panel == 1 ? TS_HPL_PANEL_TESSERA : a.panel == 3 ? TS_HPL_PANEL_HYBRID : TS_HPL_PANEL_CUSOLVER;
    o.seed = 100;
    o.warmup = 1;
    o.engine = "auto";
    o.progress = ts_hpl_progress_cb;
    o.progress_ctx = &g_progress;
    o.record_iterations = a.lp.json || a.lp.plot;
    g_progress.enabled = !a.lp.quiet;

    ts_hpl_ctx *ctx = NULL;
    int rc = ts_hpl_ctx_create(&o, &ctx);
    if (rc < 0) {
        if (dat_rc < 0) report_input_error(dat_msg);
        ts_cli_errorf(CMD, "cannot set up HPL: %s", ts_error_last()->message);
        return dat_rc < 0 ? TS_EXIT_USAGE : TS_EXIT_RUNTIME;
    }
    const int rank = ts_hpl_ctx_rank(ctx), size = ts_hpl_ctx_size(ctx);
    const int root = rank == 0;
    ts_log_set_rank(size > 1 ? rank : -1);
    int code = TS_EXIT_OK;
    FILE *out = NULL;

    int who = first_failed(rank, size, dat_rc < 0);
    if (who >= 0) {
        if (rank == who) report_input_error(dat_msg);
        code = TS_EXIT_USAGE;
        goto done;
    }
    // a malformed TESSERA_HPL_* setting: an error of the input, before the header, all ranks together
    int env_bad = ts_hpl_env_check() < 0;
    who = first_failed(rank, size, env_bad);
    if (who >= 0) {
        if (rank == who) ts_cli_errorf(CMD, "%s", ts_error_last()->message);
        code = TS_EXIT_USAGE;
        goto done;
    }

    // The baseline needs cuSOLVER: a CUDA device on every rank (not simulated devices).
    if (a.baseline && !ts_hpl_ctx_has_cuda(ctx)) {
        if (root)
            ts_cli_errorf(CMD, "--baseline cusolver needs a CUDA GPU: %s",
                          ts_linpack_device_expected(TS_HPL_EXEC_AUTO) && ts_cuda_device_count() == 0
                              ? "the devices of this run are simulated (cuSOLVER has no simulated stand-in)"
                              : "no CUDA device is visible");
        code = TS_EXIT_USAGE;
        goto done;
    }

    // The GEMM engine: --gemm, else TESSERA_HPL_GEMM (both "forced" unless auto), else the ceiling's
    // measurement or auto's default (below). A forced engine must run on every rank's device.
    const char *gemm = a.gemm && strcmp(a.gemm, "auto") != 0 ? a.gemm : NULL;
    const char *gemm_from = gemm ? "--gemm" : "TESSERA_HPL_GEMM";
    if (!gemm) {
        const char *env = a.lp.exec == TS_HPL_EXEC_CPU ? NULL : ts_env_str("TESSERA_HPL_GEMM");
        const char *ev = NULL;
        int bad = env && *env && ts_hpl_gemm_parse(env, &ev) < 0;
        if (first_failed(rank, size, bad) >= 0) {
            if (root) ts_cli_errorf(CMD, "TESSERA_HPL_GEMM=%s: expected auto, cublas or tessera", env ? env : "");
            code = TS_EXIT_USAGE;
            goto done;
        }
        if (ev && strcmp(ev, "auto") != 0) gemm = ev;
    }
    { // (collective on every rank, also where this rank's environment forces nothing)
        int prc2 = gemm ? ts_hpl_gemm_probe(ctx, gemm) : 0;
        int who_u = first_failed(rank, size, prc2 == TS_ERR_UNSUPPORTED);
        int who_r = first_failed(rank, size, prc2 < 0 && prc2 != TS_ERR_UNSUPPORTED);
        if (who_u >= 0 || who_r >= 0) {
            if (rank == (who_u >= 0 ? who_u : who_r))
                ts_cli_errorf(CMD, "%s engine %s cannot run here: %s", gemm_from, gemm,
                              ts_error_last()->message);
            code = who_u >= 0 ? TS_EXIT_USAGE : TS_EXIT_RUNTIME;
            goto done;
        }
    }

    if (!dat_path) {
        // One test from the flags; what is not given comes from the machine.
        int dev = ts_linpack_device_expected(a.lp.exec);
        int NB = a.lp.NB ? a.lp.NB : dev ? HPL_NB_DEVICE : HPL_NB_CPU;
        int P = a.lp.P, Q = a.lp.Q;
        // On devices one process row: panels are factored on the device and broadcast device to
        // device only with P = 1 (several process rows factor them on the host, far slower today)
        if (!P && !Q && dev) P = 1, Q = size;
        else if (!P && !Q) square_grid(size, &P, &Q);
        else if (!Q) Q = size / P > 0 ? size / P : 1;
        else if (!P) P = size / Q > 0 ? size / Q : 1;
        int64_t N = a.lp.N;
        int depth = a.lp.depth >= 0 ? a.lp.depth : 1; // (WR11C2R4's depth unless --depth)
        if (N < 0) {
            if (dev) {
                double frac = a.lp.mem_fraction > 0 ? a.lp.mem_fraction : HPL_MEM_FRACTION_AUTO;
                N = ts_hpl_max_n(ctx, P, Q, NB, depth, frac);
            } else {
                double budget = a.time_budget > 0 ? a.time_budget : HPL_CPU_BUDGET_S;
                if (root) N = cpu_n_for_budget(budget, NB);
                bcast_bytes(&N, sizeof N);
                double frac = a.lp.mem_fraction > 0 ? a.lp.mem_fraction : HPL_MEM_FRACTION_AUTO;
                int64_t fit = ts_hpl_max_n(ctx, P, Q, NB, depth, frac);
                if (fit > 0 && N > fit) N = fit;
            }
            if (N <= 0) {
                if (root) ts_cli_errorf(CMD, "cannot size the problem for this machine (%s); give -N",
                                        ts_error_last()->message);
                code = TS_EXIT_RUNTIME;
                goto done;
            }
            N -= N % NB;
            if (N == 0) N = NB;
            if (root && !a.lp.quiet)
                ts_log(TS_LOG_INFO, "hpl: sized N=%lld NB=%d P=%d Q=%d for this machine (%s)",
                       (long long)N, NB, P, Q, dev ? "device memory" : "CPU time budget");
        }
        dat_from_flags(&dat, N, NB, P, Q);
        dat.depth[0] = depth;
    }

    // HPL 2.3 refuses grids larger than the process count.
    int grid_rc = ts_hpl_check_grids(&dat, size);
    if (grid_rc < 0) {
        if (root && dat_path) {
            report_input_error(ts_error_last()->message);
        } else if (root) { // the grid came from -P/-Q: no HPL.dat to blame
            ts_cli_errorf(CMD, "-P %d -Q %d needs at least %d processes; %d %s running (start it with mpiexec -n %d)",
                          dat.P[0], dat.Q[0], dat.P[0] * dat.Q[0], size, size == 1 ? "is" : "are",
                          dat.P[0] * dat.Q[0]);
        }
        code = TS_EXIT_USAGE;
        goto done;
    }

    // Explicit sizes must fit.
    if (dat_path || a.lp.N >= 0) {
        char msg[512];
        double frac = a.lp.mem_fraction > 0 ? a.lp.mem_fraction : HPL_MEM_FRACTION_CHECK;
        // Agreed, in case ranks see different memory.
        int misfit = check_fit(ctx, &dat, frac, msg, sizeof msg) < 0;
        int who_fit = first_failed(rank, size, misfit);
        if (who_fit >= 0) {
            if (rank == who_fit) ts_cli_errorf(CMD, "%s", msg);
            code = TS_EXIT_USAGE;
            goto done;
        }
    }

    // Rank 0 opens the report and checks that the JSON and plot can be written.
    int open_failed = 0;
    char open_msg[600] = "";
    if (root) {
        if (ts_hpl_open_output(&dat, &out) < 0) {
            open_failed = 1;
            snprintf(open_msg, sizeof open_msg, "%s", ts_error_last()->message);
        }
        const char *paths[2] = {a.lp.json, a.lp.plot};
        for (int i = 0; i < 2 && !open_failed; i++) {
            if (!paths[i]) continue;
            int existed = access(paths[i], F_OK) == 0;
            FILE *f = fopen(paths[i], "a");
            if (!f) {
                open_failed = 1;
                snprintf(open_msg, sizeof open_msg, "cannot write '%s'", paths[i]);
            } else {
                fclose(f);
                if (!existed) unlink(paths[i]); // only a check: the driver writes it later
            }
        }
    }
    if (first_failed(rank, size, open_failed) >= 0) {
        if (root) ts_cli_errorf(CMD, "%s", open_msg);
        code = TS_EXIT_USAGE;
        goto done;
    }

    ts_hpl_ceiling ceil;
    memset(&ceil, 0, sizeof ceil);
    if (a.ceiling > 0) {
        // HPL's first update: C (N/P x N/Q local) -= A (x NB) B; the rate is flat beyond 16384
        ts_hpl_case c0;
        ts_hpl_case_at(&dat, 0, &c0);
        int64_t mn = c0.N / (c0.Q > c0.P ? c0.Q : c0.P);
        if (mn > 16384) mn = 16384;
        if (mn < c0.NB) mn = c0.NB;
        if (root) fprintf(stderr, "hpl: DGEMM ceiling: each engine and form %.0f s on %lldx%lldx%d ...\n", a.ceiling, (long long)mn, (long long)mn, c0.NB);
        rc = ts_hpl_ceiling_measure(ctx, mn, mn, c0.NB, a.ceiling, &ceil);
        if (rc < 0) {
            if (root) ts_cli_errorf(CMD, "DGEMM ceiling: %s", ts_error_last()->message);
            code = TS_EXIT_RUNTIME;
            goto done;
        }
        if (root && !ceil.measured) ts_cli_errorf(CMD, "--ceiling: a rank has no device; no ceiling");
        if (root && ceil.measured) {
            // GFLOP/s below 1 TFLOP/s, as every rate the command prints
            const int giga = ceil.tflops_gpu < 1.0;
            const double sc = giga ? 1e3 : 1.0;
            const char *unit = giga ? "GFLOP/s" : "TFLOP/s";
            char line[512];
            int at = snprintf(line, sizeof line, "hpl: DGEMM ceiling %.4g %s per GPU (%s %s); sustained:",
                              ceil.tflops_gpu * sc, unit, ceil.best, ceil.best_op);
            for (int e = 0; e < ceil.nengines && at < (int)sizeof line; e++) {
                at += snprintf(line + at, sizeof line - at, "%s %s %s %.4g", e ? "," : "", ceil.eng[e].name,
                               ceil.eng[e].op, ceil.eng[e].tflops * sc);
                if (ceil.eng[e].energy && at < (int)sizeof line) // (NVML's energy counter, per GPU)
                    at += snprintf(line + at, sizeof line - at, " (%.0f W, %.3g J/TFLOP)", ceil.eng[e].watts,
                                   ceil.eng[e].j_per_tflop);
            }
            fprintf(stderr, "%s\n", line);
        }
        if (!ceil.measured) {
            code = TS_EXIT_USAGE;
            goto done;
        }
    }

    // The update's engine: forced, else the ceiling's fastest (the same on every rank: its rates are
    // the slowest rank's), else auto's default.
    ts_hpl_gemm_choice choice = TS_HPL_GEMM_DEFAULT;
    const char *measured = ts_hpl_gemm_measured(a.ceiling > 0 ? &ceil : NULL);
    if (gemm) choice = TS_HPL_GEMM_FORCED;
    else if (measured) choice = TS_HPL_GEMM_MEASURED, gemm = measured;
    if (gemm && ts_hpl_gemm_set(ctx, gemm) < 0) { // (a name of the engines' own list: cannot fail)
        if (root) ts_cli_errorf(CMD, "%s", ts_error_last()->message);
        code = TS_EXIT_RUNTIME;
        goto done;
    }

    ts_hpl_drive_opts dopt = {
        .out = out,
        .json_path = a.lp.json,
        .plot_path = a.lp.plot,
        .progress = &g_progress,
        .print_params = 1,
        .baseline_cusolver = a.baseline,
        .ceiling = a.ceiling > 0 ? &ceil : NULL,
        .gemm_choice = choice,
    };
    ts_hpl_tally t;
    rc = ts_hpl_drive(ctx, &dat, &dopt, &t);
    if (root) {
        if (t.runtime_error < 0) {
            ts_cli_errorf(CMD, "HPL stopped: %s", ts_error_last()->message);
            code = TS_EXIT_RUNTIME;
        } else if (rc < 0) {
            ts_cli_errorf(CMD, "%s", ts_error_last()->message);
            code = TS_EXIT_RUNTIME;
        } else if (t.kfail > 0) {
            code = TS_EXIT_CHECK;
        } else if (t.kskip > 0) {
            code = TS_EXIT_RUNTIME;
        }
    } else if (t.runtime_error < 0) {
        code = TS_EXIT_RUNTIME;
    }
    bcast_bytes(&code, sizeof code);

done:
    if (root && out) ts_hpl_close_output(out);
    ts_hpl_ctx_destroy(ctx);
    return code;
}
