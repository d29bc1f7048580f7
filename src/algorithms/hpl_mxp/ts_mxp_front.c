// ts_mxp_front.c: HPL-MxP's front: HPL-MxP.dat, every combination in order, the report in HPL's form, JSON.
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/hpl/ts_hpl_internal.h"
#include "algorithms/hpl_mxp/ts_mxp.h"
#include "core/ts_error.h"
#include "core/ts_json.h"
#include "device/ts_device.h"

// ---- HPL-MxP.dat ----

int ts_mxp_fmt_parse(const char *s, ts_mxp_fmt *f) {
    if (!strcmp(s, "fp16")) *f = TS_MXP_FP16;
    else if (!strcmp(s, "bf16")) *f = TS_MXP_BF16;
    else if (!strcmp(s, "fp8")) *f = TS_MXP_FP8;
    else TS_RAISE(TS_ERR_ARG, "'%s' is not a precision (fp16, bf16, fp8)", s);
    return 0;
}

int ts_mxp_fmt_list_eligible(ts_mxp_fmt f) { return f == TS_MXP_FP16 || f == TS_MXP_BF16; }

static int read_tail(ts_hpl_datfile *f, void *arg) {
    ts_mxp_dat *d = arg;
    int n = 0;
    TS_CHECK(ts_hpl_datfile_count(f, "precisions", &n));
    if (n > TS_MXP_MAX_PREC)
        TS_RAISE(TS_ERR_PARSE, "%s:%d: the number of precisions is %d; at most %d (fp16, bf16, fp8)",
                 ts_hpl_datfile_path(f), ts_hpl_datfile_line(f), n, TS_MXP_MAX_PREC);
    char words[TS_MXP_MAX_PREC][32];
    TS_CHECK(ts_hpl_datfile_words(f, "precisions", n, words));
    for (int i = 0; i < n; i++)
        if (ts_mxp_fmt_parse(words[i], &d->prec[i]) < 0)
            TS_RAISE(TS_ERR_PARSE, "%s:%d: precision '%s' is not one of fp16, bf16, fp8", ts_hpl_datfile_path(f),
                     ts_hpl_datfile_line(f), words[i]);
    d->nprec = n;
    return 0;
}

int ts_mxp_dat_read(const char *path, ts_mxp_dat *d) {
    ts_mxp_dat tmp;
    memset(&tmp, 0, sizeof tmp);
    TS_CHECK(ts_hpl_dat_read_head(path, "HPL-MxP.dat has 15 lines", &tmp.head, read_tail, &tmp));
    *d = tmp;
    return 0;
}

void ts_mxp_tv(const ts_mxp_case *c, char out[16]) {
    snprintf(out, 16, "W%cMX%s", c->pmap == 1 ? 'C' : 'R',
             c->fmt == TS_MXP_BF16 ? "BF16" : c->fmt == TS_MXP_FP8 ? "FP8" : "FP16");
}

// ---- the report ----

static void print_list(FILE *f, const char *label, const char *fmt_one, const int64_t *v, int n) {
    fprintf(f, "%s", label);
    for (int i = 0; i < n; i++) {
        if (i && i % 8 == 0) fprintf(f, "\n%s", "        ");
        fprintf(f, fmt_one, v[i]);
    }
    fprintf(f, "\n");
}

void ts_mxp_print_params(FILE *f, const ts_mxp_dat *d, ts_mxp_gen_kind gen) {
    const ts_hpl_dat *h = &d->head;
    fprintf(f, "%s\n", TS_HPL_RULE_EQ);
    fprintf(f, "HPL-MxP: the mixed-precision Linpack (tessera hpl-mxp)\n");
    fprintf(f, "LU without pivoting in FP32 with 16-bit (or FP8) GEMMs (FP32 accumulation), refined in FP64\n");
    fprintf(f, "%s\n\n", TS_HPL_RULE_EQ);
    fprintf(f, "An explanation of the input/output parameters follows:\n");
    fprintf(f, "T/V    : W, process mapping (R/C), MX, precision of the update's GEMM operands.\n");
    fprintf(f, "N      : The order of the coefficient matrix A.\n");
    fprintf(f, "NB     : The partitioning blocking factor.\n");
    fprintf(f, "P      : The number of process rows.\n");
    fprintf(f, "Q      : The number of process columns.\n");
    fprintf(f, "Time   : Time in seconds of the LU and the iterative refinement.\n");
    fprintf(f, "Gflops : Rate of execution: (2/3 N^3 + 3/2 N^2) / Time.\n\n");
    fprintf(f, "The following parameter values will be used:\n\n");
    print_list(f, "N      :", "%8" PRId64 " ", h->N, h->nN);
    int64_t v[TS_HPL_MAX_PARAM];
    for (int i = 0; i < h->nNB; i++) v[i] = h->NB[i];
    print_list(f, "NB     :", "%8" PRId64 " ", v, h->nNB);
    fprintf(f, "PMAP   : %s\n", h->pmap == 1 ? "Column-major process mapping" : "Row-major process mapping");
    for (int i = 0; i < h->ngrid; i++) v[i] = h->P[i];
    print_list(f, "P      :", "%8" PRId64 " ", v, h->ngrid);
    for (int i = 0; i < h->ngrid; i++) v[i] = h->Q[i];
    print_list(f, "Q      :", "%8" PRId64 " ", v, h->ngrid);
    fprintf(f, "PREC   :");
    for (int i = 0; i < d->nprec; i++) fprintf(f, "%8s ", ts_mxp_fmt_name(d->prec[i]));
    fprintf(f, "\n");
    for (int i = 0; i < d->nprec; i++)
        if (!ts_mxp_fmt_list_eligible(d->prec[i])) {
            fprintf(f, "NOTE   : %s\n", TS_MXP_FP8_NOTE);
            break;
        }
    fprintf(f, "SOLVER : classic iterative refinement in FP64, at most %d iterations\n", TS_MXP_MAX_ITER);
    fprintf(f, "MATRIX : HPL-MxP's LCG generator, %s\n\n",
            gen == TS_MXP_GEN_DOMINANT ? "row diagonally dominant" : "diagonal as generated (TEST ONLY: not diagonally dominant)");
    fprintf(f, "%s\n", "- The matrix A is randomly generated for each test.");
    fprintf(f, "%s\n", "- The following scaled residual check will be computed:");
    fprintf(f, "%s\n", "      ||Ax-b||_oo / ( eps * ( || x ||_oo * || A ||_oo + || b ||_oo ) * N )");
    fprintf(f, "%s %21.6e\n", "- The relative machine precision (eps) is taken to be    ", 1.110223024625157e-16);
    fprintf(f, "%s   %11.1f\n\n", "- Computational tests pass if scaled residuals are less than      ", h->threshold);
}

static void print_time_line(FILE *f, const char *label, const char *when) {
    fprintf(f, "%s%s\n\n", label, when && when[0] ? when : "?");
}

void ts_mxp_print_test(FILE *f, const ts_mxp_case *c, const ts_mxp_result *r, int ngpus) {
    char line[320], tv[16];
    if (r->skipped) {
        fprintf(f, "HPL-MxP ERROR from process # 0:\n>>> [0,0] %s. Skip. <<<\n\n", r->why);
        return;
    }
    ts_mxp_tv(c, tv);
    ts_hpl_format_result_tv(line, sizeof line, tv, c->N, c->NB, c->P, c->Q, r->time, r->gflops, ngpus);
    fprintf(f, "%s\n", line);
    print_time_line(f, "HPL-MxP start time ", r->start_time);
    print_time_line(f, "HPL-MxP end time   ", r->end_time);
    fprintf(f, "LU        : %12.3f s %14.4e Gflops (LU only, the same flop count)\n", r->t_lu, r->gflops_lu);
    fprintf(f, "Refinement: %12.3f s, %d iteration%s after the first solve\n", r->t_ir, r->iterations,
            r->iterations == 1 ? "" : "s");
    if (!ts_mxp_fmt_list_eligible(c->fmt)) fprintf(f, "%s\n", TS_MXP_FP8_NOTE);
    if (r->breakdown) {
        fprintf(f, "HPL-MxP ERROR from process # 0:\n>>> the LU without pivoting broke down at column %" PRId64
                " (a zero or non-finite pivot): this matrix cannot be factored stably without pivoting. "
                "No residual; the test FAILED. <<<\n\n", r->breakdown);
        return;
    }
    for (int i = 0; i < r->n_history; i++)
        fprintf(f, "# refinement: step=%d, residual=%.6e\n", i, r->history[i]);
    fprintf(f, "%s\n", TS_HPL_RULE_DASH);
    ts_hpl_format_residual(line, sizeof line, r->resid, c->threshold);
    // PASSED needs the cap kept as well as the bound
    if (!r->passed && r->resid < c->threshold) {
        char *p = strstr(line, "PASSED");
        if (p) memcpy(p, "FAILED", 6);
    }
    fprintf(f, "%s\n", line);
    if (!r->passed) {
        if (r->stop == 1)
            fprintf(f, ">>> the refinement did not reach the threshold in %d iterations <<<\n", r->iterations);
        else if (r->stop == 2)
            fprintf(f, ">>> the refinement diverged (the residual grew or was not finite): the low-precision LU "
                    "is no preconditioner for this matrix <<<\n");
        fprintf(f, "%s%18.6e\n", "||Ax-b||_oo  . . . . . . . . . . . . . . . . . = ", r->norm_r);
        fprintf(f, "%s%18.6e\n", "||A||_oo . . . . . . . . . . . . . . . . . . . = ", r->norm_A);
        fprintf(f, "%s%18.6e\n", "||x||_oo . . . . . . . . . . . . . . . . . . . = ", r->norm_x);
        fprintf(f, "%s%18.6e\n", "||b||_oo . . . . . . . . . . . . . . . . . . . = ", r->norm_b);
    }
}

const char *ts_mxp_phase_name(ts_mxp_phase p) {
    static const char *const names[TS_MXP_PHASES] = {"first_forward",  "first_back",      "residual_regeneration",
                                                     "residual_reduction", "correction_forward", "correction_back",
                                                     "solution_update", "breakdown_check"};
    return p >= 0 && p < TS_MXP_PHASES ? names[p] : "?";
}

// ---- JSON ----

static void json_entry(ts_json *j, const ts_mxp_case *c, const ts_mxp_result *r, ts_mxp_gen_kind gen) {
    const ts_hpl_json_entry e = {"hpl-mxp", r->engine_used[0] ? r->engine_used : "tessera",
                                 !strncmp(r->exec_used, "device", 6) ? "device" : "host", 0, ts_mxp_fmt_name(c->fmt),
                                 c->N, r->time, r->gflops, r->checked, r->resid, c->threshold};
    ts_hpl_json_entry_begin(j, &e);
    char tv[16];
    ts_mxp_tv(c, tv);
    ts_json_begin_object(j, "extra");
    ts_json_int(j, "N", c->N);
    ts_json_int(j, "NB", c->NB);
    ts_json_int(j, "P", c->P);
    ts_json_int(j, "Q", c->Q);
    ts_json_str(j, "tv", tv);
    ts_json_str(j, "precision", ts_mxp_fmt_name(c->fmt));
    // the rules' generator and a 16-bit format (FP8 is below the list's floor since June 2025)
    ts_json_bool(j, "list_eligible", gen == TS_MXP_GEN_DOMINANT && ts_mxp_fmt_list_eligible(c->fmt));
    if (!ts_mxp_fmt_list_eligible(c->fmt)) ts_json_str(j, "list_note", TS_MXP_FP8_NOTE);
    ts_json_str(j, "generator", gen == TS_MXP_GEN_DOMINANT ? "hpl-ai-lcg-diag-dominant" : "hpl-ai-lcg-plain (test)");
    if (r->checked) ts_json_num(j, "residual", r->resid);
    else ts_json_null(j, "residual");
    ts_json_num(j, "threshold", c->threshold);
    ts_json_bool(j, "passed", r->passed);
    ts_json_bool(j, "skipped", r->skipped);
    if (r->skipped) ts_json_str(j, "why", r->why);
    ts_json_int(j, "iterations", r->iterations);
    ts_json_int(j, "max_iterations", TS_MXP_MAX_ITER);
    ts_json_str(j, "refinement", "classic IR, FP64 residual, FP32 factors");
    ts_json_str(j, "stop", r->skipped      ? "skipped"
                           : r->stop == 0  ? "converged"
                           : r->stop == 1  ? "iteration-cap"
                           : r->stop == 2  ? "diverged"
                                           : "breakdown");
    ts_json_int(j, "breakdown_col", r->breakdown);
    ts_json_begin_array(j, "residual_history");
    for (int i = 0; i < r->n_history; i++) ts_json_num(j, NULL, r->history[i]);
    ts_json_end_array(j);
    const struct {
        const char *key;
        double v;
    } secs[] = {{"lu_seconds", r->t_lu}, {"refinement_seconds", r->t_ir}, {"generation_seconds", r->t_gen}},
      norms[] = {{"norm_r", r->norm_r}, {"norm_A", r->norm_A}, {"norm_x", r->norm_x}, {"norm_b", r->norm_b},
                 {"eps", r->eps}};
    for (size_t i = 0; i < sizeof secs / sizeof secs[0]; i++) ts_json_num(j, secs[i].key, secs[i].v);
    if (r->phases) { // where the refinement's time went (rank 0 of the grid)
        ts_json_begin_object(j, "refinement_phases");
        for (int p = 0; p < TS_MXP_PHASES; p++) ts_json_num(j, ts_mxp_phase_name((ts_mxp_phase)p), r->phase_s[p]);
        ts_json_end_object(j);
    }
    ts_json_num(j, "gflops", r->gflops);
    ts_json_num(j, "gflops_lu", r->gflops_lu);
    ts_json_num(j, "flops", ts_hpl_flops(c->N));
    if (r->time > 0 && !strncmp(r->exec_used, "device", 6))
        ts_json_num(j, "gflops_per_gpu", r->gflops / ((double)c->P * c->Q));
    ts_json_str(j, "exec", r->exec_used);
    ts_json_int(j, "depth", r->depth);
    for (size_t i = 0; i < sizeof norms / sizeof norms[0]; i++) ts_json_num(j, norms[i].key, norms[i].v);
    ts_json_end_object(j);
    ts_results_entry_end(j);
}

// ---- the loop ----

// The LU's progress points of one test (rank 0), passed on to the progress line when it is on.
typedef struct {
    ts_mxp_lu_point *pt;
    int n, cap;
    ts_hpl_progress *bar;    // NULL: no progress line
} lu_trace;

static void trace_point(void *ctx, int64_t cols, int64_t N, double elapsed, double flops) {
    lu_trace *tr = ctx;
    if (tr->pt && tr->n < tr->cap) tr->pt[tr->n++] = (ts_mxp_lu_point){cols, elapsed, flops};
    if (tr->bar) ts_hpl_progress_cb(tr->bar, cols, N, elapsed, flops);
}

// The test's plot: its LU points (the last block column's added from the LU's time where the
// device path reports one behind) and its refinement.
static int plot_test(const ts_mxp_drive_opts *o, int64_t k, int64_t total, const ts_mxp_case *c,
                     const ts_mxp_result *r, lu_trace *tr) {
    if (r->skipped) return 0;
    if (tr->n < tr->cap && (tr->n == 0 || tr->pt[tr->n - 1].col < c->N))
        tr->pt[tr->n++] = (ts_mxp_lu_point){c->N, r->t_lu, ts_hpl_flops(c->N)};
    char name[1100];
    ts_plot_name(o->plot_path, k, total, name, sizeof name);
    return ts_mxp_plot_svg(name, c, r, tr->pt, tr->n);
}

int ts_mxp_drive(ts_hpl_ctx *ctx, const ts_mxp_dat *d, const ts_mxp_drive_opts *o, ts_hpl_tally *t) {
    memset(t, 0, sizeof *t);
    const int root = ts_hpl_ctx_rank(ctx) == 0;
    FILE *out = root ? o->out : NULL;
    const ts_hpl_dat *h = &d->head;
    int rc = 0;
    FILE *jf = NULL;
    ts_json *j = NULL;
    if (root && o->json_path) {
        jf = !strcmp(o->json_path, "-") ? stdout : fopen(o->json_path, "w");
        if (!jf) TS_RAISE(TS_ERR_IO, "cannot write the JSON file '%s'", o->json_path);
        j = ts_json_open_file(jf);
        ts_results_begin(j, "tessera hpl-mxp", ts_hpl_ctx_size(ctx), ts_devset_json, ts_hpl_ctx_devset(ctx));
    }
    if (out) ts_mxp_print_params(out, d, o->gen);
    ts_mxp_opts mo;
    memset(&mo, 0, sizeof mo);
    mo.gen = o->gen;
    mo.depth = o->depth;
    lu_trace tr = {NULL, 0, 0, o->progress && o->progress->enabled ? o->progress : NULL};
    if (tr.bar || (root && o->plot_path)) {
        mo.progress = trace_point;
        mo.progress_ctx = &tr;
    }
    const int64_t total = (int64_t)h->ngrid * h->nN * h->nNB * d->nprec;
    int64_t k = 0;
    int header_done = 0, plot_rc = 0;
    for (int g = 0; g < h->ngrid && rc == 0; g++)
        for (int in = 0; in < h->nN && rc == 0; in++)
            for (int ib = 0; ib < h->nNB && rc == 0; ib++)
                for (int ip = 0; ip < d->nprec && rc == 0; ip++) {
                    ts_mxp_case c = {h->N[in], h->NB[ib], h->P[g], h->Q[g], h->pmap, h->threshold, d->prec[ip]};
                    if (root && o->progress) {
                        char label[96], tv[16];
                        ts_mxp_tv(&c, tv);
                        snprintf(label, sizeof label, "hpl-mxp %s N=%" PRId64, tv, c.N);
                        ts_hpl_progress_start(o->progress, label, c.N, ts_hpl_flops(c.N));
                    }
                    if (root && o->plot_path) { // a point per block column and the last one
                        free(tr.pt);
                        tr.cap = (int)((c.N + c.NB - 1) / c.NB) + 1;
                        tr.n = 0;
                        if (!(tr.pt = malloc(sizeof *tr.pt * (size_t)tr.cap))) tr.cap = 0;
                    }
                    ts_mxp_result r;
                    int st = ts_mxp_run(ctx, &mo, &c, &r);
                    if (root && o->progress) ts_hpl_progress_stop(o->progress, st == 0 ? r.gflops : 0.0);
                    if (st < 0) {
                        t->runtime_error = st;
                        rc = st;
                        break;
                    }
                    if (out && !r.skipped && !header_done) {
                        ts_hpl_print_header(out);
                        header_done = 1;
                    }
                    int ngpus = !strncmp(r.exec_used, "device", 6) ? c.P * c.Q : 0;
                    if (out) ts_mxp_print_test(out, &c, &r, ngpus);
                    if (r.skipped) t->kskip++;
                    else if (r.passed) t->kpass++;
                    else t->kfail++;
                    if (out) fflush(out);
                    if (j) {
                        json_entry(j, &c, &r, o->gen);
                        fflush(jf);
                    }
                    // rank 0 alone: the other ranks go on to the next test
                    if (root && o->plot_path && plot_test(o, k, total, &c, &r, &tr) < 0 && plot_rc == 0)
                        plot_rc = ts_error_last()->code < 0 ? ts_error_last()->code : TS_ERR_IO;
                    k++;
                }
    free(tr.pt);
    if (out) {
        ts_hpl_print_summary(out, t, h->threshold);
        fflush(out);
    }
    if (j) {
        const int jrc = ts_results_finish(j, jf, o->json_path);
        if (jrc < 0 && rc == 0) rc = jrc;
    }
    if (root && o->progress) ts_hpl_progress_release(o->progress);
    return rc < 0 ? rc : plot_rc;
}
