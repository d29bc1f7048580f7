// mxp_grid_check.c: runs HPL-MxP cases on P x Q grids under MPI and checks each against the 1 x 1 run of the same N, NB and seed; exits 1 on any failure.
//
// usage: mxp_grid_check [--exec cpu|device] [--depth -1|0|1] [--prec fp16|bf16] [--expect pass|fail] CASE...
// CASE = N:NB:P:Q[:PMAP]. For each case, rank 0 first runs the 1 x 1 grid (the other ranks idle),
// then the P x Q grid; rank 0 checks the grid's run as the 1 x 1 tests do (valid, the iteration
// count, the credited flops) and against the 1 x 1 run: the same iteration count (within one),
// the first solve's scaled residual within 5 % (the FP32 sums of the 16-bit GEMMs are rounded in
// another order) and the solutions equal to 1e-12 relative in the max norm (both meet the FP64
// threshold; observed about 2e-15; a bound far below FP32's 6e-8, so a solution that is only
// as good as the low-precision factors fails). --depth: the look-ahead asked for (-1, the default:
// 1 on devices, 0 on the CPU), checked in the result; with look-ahead the grid case runs twice and
// must give the same residual history bit for bit (its two streams ordered by events, not by luck).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/hpl_mxp/ts_mxp.h"
#include "core/ts_error.h"

#define SOL_BOUND 1e-12

static int g_fail;

#define CHECK(cond, ...)                                                                                       \
    do {                                                                                                       \
        if (!(cond)) {                                                                                         \
            fprintf(stderr, "mxp_grid_check: %s: ", label);                                                    \
            fprintf(stderr, __VA_ARGS__);                                                                      \
            fprintf(stderr, " [%s]\n", #cond);                                                                 \
            g_fail = 1;                                                                                        \
        }                                                                                                      \
    } while (0)

static void check_valid(const char *label, const ts_mxp_case *mc, const ts_mxp_result *r) {
    CHECK(!r->skipped, "skipped: %s", r->why);
    CHECK(r->breakdown == 0, "breakdown at %lld", (long long)r->breakdown);
    CHECK(r->checked && r->passed, "not passed (resid %g)", r->resid);
    CHECK(r->resid >= 0 && r->resid < mc->threshold, "resid %g", r->resid);
    CHECK(r->stop == 0, "stop %d", r->stop);
    CHECK(r->iterations >= 1 && r->iterations <= 10, "iterations %d", r->iterations);
    CHECK(r->n_history == r->iterations + 1, "history %d", r->n_history);
    CHECK(r->history[0] > 16.0, "first solve %g", r->history[0]);
    CHECK(r->history[r->n_history - 1] == r->resid, "last history %g", r->history[r->n_history - 1]);
    for (int i = 1; i < r->n_history; i++) CHECK(r->history[i] < r->history[i - 1], "history not decreasing at %d", i);
    const double n = (double)mc->N, f = 2.0 / 3.0 * n * n * n + 1.5 * n * n;
    CHECK(fabs(r->time - (r->t_lu + r->t_ir)) <= 1e-12 + 1e-9 * r->time, "time %g", r->time);
    CHECK(fabs(r->gflops - f / r->time / 1e9) <= 1e-9 * r->gflops, "gflops %g", r->gflops);
    CHECK(fabs(ts_hpl_flops(mc->N) - f) <= 1e-12 * f, "flops %g", ts_hpl_flops(mc->N));
    CHECK(r->norm_A > 0.4 * n && r->norm_A < 0.6 * n, "||A|| %g", r->norm_A);
    CHECK(r->norm_b > 0.45 && r->norm_b <= 0.5, "||b|| %g", r->norm_b);
    CHECK(r->eps == 0x1p-53, "eps %g", r->eps);
}

// The grid's refinement phases (rank 0's seconds): reported, none negative, the first solve and the
// residual measured, the corrections where there were some, and together about the refinement's
// time: no more than it, and all but a little of it (they tile it from the LU's end to the last
// residual; only the return from there lies outside, PHASE_SLACK_S room for a rank descheduled there).
#define PHASE_SLACK_S 0.05
static void check_phases(const char *label, const ts_mxp_result *r) {
    CHECK(r->phases == 1, "no refinement phases");
    double sum = 0.0;
    for (int p = 0; p < TS_MXP_PHASES; p++) {
        CHECK(r->phase_s[p] >= 0.0, "phase %s %g", ts_mxp_phase_name((ts_mxp_phase)p), r->phase_s[p]);
        sum += r->phase_s[p];
    }
    CHECK(r->phase_s[TS_MXP_PH_FIRST_FWD] > 0 && r->phase_s[TS_MXP_PH_FIRST_BACK] > 0, "first solve %g, %g",
          r->phase_s[TS_MXP_PH_FIRST_FWD], r->phase_s[TS_MXP_PH_FIRST_BACK]);
    CHECK(r->phase_s[TS_MXP_PH_RESID_GEN] > 0 && r->phase_s[TS_MXP_PH_RESID_RED] > 0, "residual %g, %g",
          r->phase_s[TS_MXP_PH_RESID_GEN], r->phase_s[TS_MXP_PH_RESID_RED]);
    if (r->iterations > 0)
        CHECK(r->phase_s[TS_MXP_PH_CORR_FWD] > 0 && r->phase_s[TS_MXP_PH_CORR_BACK] > 0, "corrections %g, %g",
              r->phase_s[TS_MXP_PH_CORR_FWD], r->phase_s[TS_MXP_PH_CORR_BACK]);
    CHECK(sum <= r->t_ir * (1 + 1e-9) + 1e-9, "phases sum to %g s, refinement %g s", sum, r->t_ir);
    CHECK(sum >= 0.9 * r->t_ir || r->t_ir - sum <= PHASE_SLACK_S, "phases sum to %g s, refinement %g s", sum, r->t_ir);
}

int main(int argc, char **argv) {
    ts_hpl_opts ho;
    memset(&ho, 0, sizeof ho);
    ho.exec = TS_HPL_EXEC_CPU;
    ho.panel_on_device = -1;
    ho.engine = "auto";
    ts_mxp_fmt fmt = TS_MXP_FP16;
    int expect_fail = 0, first = 1, depth = -1;
    for (; first < argc && argv[first][0] == '-'; first += 2) {
        if (first + 1 >= argc) return 2;
        const char *v = argv[first + 1];
        if (!strcmp(argv[first], "--exec")) ho.exec = !strcmp(v, "device") ? TS_HPL_EXEC_DEVICE : TS_HPL_EXEC_CPU;
        else if (!strcmp(argv[first], "--prec")) fmt = !strcmp(v, "bf16") ? TS_MXP_BF16 : TS_MXP_FP16;
        else if (!strcmp(argv[first], "--expect")) expect_fail = !strcmp(v, "fail");
        else if (!strcmp(argv[first], "--depth")) depth = atoi(v);
        else return 2;
    }
    ts_hpl_ctx *c = NULL;
    if (ts_hpl_ctx_create(&ho, &c) < 0) {
        fprintf(stderr, "mxp_grid_check: %s\n", ts_error_last()->message);
        return 1;
    }
    const int root = ts_hpl_ctx_rank(c) == 0;
    const char *want_exec = ho.exec == TS_HPL_EXEC_DEVICE ? "device:" : "cpu";
    for (int a = first; a < argc; a++) {
        long long v[5] = {0, 0, 1, 1, 0};
        if (sscanf(argv[a], "%lld:%lld:%lld:%lld:%lld", &v[0], &v[1], &v[2], &v[3], &v[4]) < 4) return 2;
        const char *label = argv[a];
        ts_mxp_case one = {v[0], (int)v[1], 1, 1, 0, 16.0, fmt};
        ts_mxp_case g = {v[0], (int)v[1], (int)v[2], (int)v[3], (int)v[4], 16.0, fmt};
        double *x1 = calloc((size_t)v[0], sizeof(double)), *xg = calloc((size_t)v[0], sizeof(double));
        if (!x1 || !xg) return 1;
        ts_mxp_opts o;
        memset(&o, 0, sizeof o);
        o.gen = expect_fail ? TS_MXP_GEN_PLAIN : TS_MXP_GEN_DOMINANT;
        o.depth = depth;
        ts_mxp_result r1, rg, r2;
        o.x_out = x1;
        if (ts_mxp_run(c, &o, &one, &r1) < 0 || (o.x_out = xg, ts_mxp_run(c, &o, &g, &rg)) < 0) {
            fprintf(stderr, "mxp_grid_check: %s: %s\n", label, ts_error_last()->message);
            return 1;
        }
        const int want_depth = ho.exec == TS_HPL_EXEC_DEVICE && depth != 0 ? 1 : 0;
        if (want_depth && !expect_fail && ts_mxp_run(c, &o, &g, &r2) < 0) {
            fprintf(stderr, "mxp_grid_check: %s: %s\n", label, ts_error_last()->message);
            return 1;
        }
        if (root) {
            CHECK(!strncmp(rg.exec_used, want_exec, strlen(want_exec)), "exec %s", rg.exec_used);
            CHECK(rg.depth == want_depth, "depth %d, %d wanted", rg.depth, want_depth);
            if (want_depth && !expect_fail) {
                CHECK(r2.n_history == rg.n_history, "a second run: %d steps, %d before", r2.n_history, rg.n_history);
                for (int i = 0; i < rg.n_history && i < r2.n_history; i++)
                    CHECK(r2.history[i] == rg.history[i], "a second run: step %d %.17g, %.17g before", i,
                          r2.history[i], rg.history[i]);
            }
            if (expect_fail) {
                // the matrix without diagonal dominance (--test-matrix plain): the LU without pivoting
                // breaks down (a pivot not finite; where depends on the rounding of the sums) or the
                // refinement cannot reach the threshold: the run fails on the grid as on 1 x 1
                CHECK(!rg.passed && rg.stop != 0, "the grid passed (stop %d)", rg.stop);
                CHECK(!r1.passed && r1.stop != 0, "1 x 1 passed (stop %d)", r1.stop);
                CHECK((rg.stop == 3) == (rg.breakdown > 0), "stop %d, breakdown %lld", rg.stop, (long long)rg.breakdown);
                CHECK(rg.stop != 3 || !rg.checked, "a residual after a breakdown");
                if (root) printf("%s: failed as expected (stop %d; 1 x 1: stop %d)\n", label, rg.stop, r1.stop);
            } else {
                check_valid(label, &g, &rg);
                check_valid(label, &one, &r1);
                check_phases(label, &rg);
                CHECK(abs(rg.iterations - r1.iterations) <= 1, "iterations %d, 1 x 1 %d", rg.iterations, r1.iterations);
                CHECK(fabs(rg.history[0] - r1.history[0]) <= 0.05 * r1.history[0], "first solve %g, 1 x 1 %g",
                      rg.history[0], r1.history[0]);
                double dmax = 0.0, xmax = 0.0;
                for (long long i = 0; i < v[0]; i++) {
                    if (fabs(xg[i] - x1[i]) > dmax || isnan(xg[i])) dmax = fabs(xg[i] - x1[i]);
                    if (fabs(x1[i]) > xmax) xmax = fabs(x1[i]);
                }
                CHECK(dmax <= SOL_BOUND * xmax, "||x - x(1x1)||_oo %g, ||x||_oo %g", dmax, xmax);
                printf("%s: %s, %d iterations (1 x 1: %d), residual %.4e (1 x 1: %.4e), ||x - x(1x1)||/||x|| %.3e\n",
                       label, rg.exec_used, rg.iterations, r1.iterations, rg.resid, r1.resid,
                       xmax > 0 ? dmax / xmax : dmax);
            }
        }
        free(x1);
        free(xg);
    }
    int fail = g_fail;
    ts_hpl_ctx_destroy(c);
    if (root && !fail) printf("mxp_grid_check: all cases as expected\n");
    return fail;
}
