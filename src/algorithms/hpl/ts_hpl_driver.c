// ts_hpl_driver.c: runs every HPL.dat combination in HPL_pddriver's order and prints HPL 2.3's report, JSON and progress.
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/hpl/ts_hpl.h"
#include "algorithms/hpl/ts_hpl_internal.h"
#include "core/ts_env.h"
#include "core/ts_error.h"
#include "core/ts_json.h"
#include "core/ts_progress.h"
#include "device/ts_device.h"

// ---- progress --------------------------------------------------------------------------------

void ts_hpl_progress_start(ts_hpl_progress *p, const char *label, int64_t N, double total_flops) {
    if (!p || !p->enabled) return;
    ts_progress *bar = p->bar;
    if (!bar) {
        bar = calloc(1, sizeof *bar);
        if (!bar) return;
        p->bar = bar;
    }
    p->N = N;
    p->total_flops = total_flops;
    ts_progress_init(bar, stderr, label, p->total_flops > 0 ? p->total_flops : 1.0);
    // plain lines (not a terminal): at most one a second (HPL.dat's small cases run hundreds of
    // iterations a second); every iteration with TESSERA_PROGRESS=1
    bar->period = bar->forced ? 0.0 : 1.0;
    p->active = 1;
}

static void progress_begin(ts_hpl_progress *p, const ts_hpl_case *c) {
    char label[128], tv[64];
    ts_hpl_tv_format(c, tv, sizeof tv);
    snprintf(label, sizeof label, "hpl %s N=%" PRId64, tv, c->N);
    ts_hpl_progress_start(p, label, c->N, ts_hpl_flops(c->N));
}

// A rate for people: TFLOP/s from 1 up, GFLOP/s below (CPU and simulated runs).
static void rate_text(double tflops, char *buf, size_t len) {
    if (tflops >= 1.0) snprintf(buf, len, "%.3f TFLOP/s", tflops);
    else snprintf(buf, len, "%.3g GFLOP/s", tflops * 1e3);
}

void ts_hpl_progress_cb(void *ctx, int64_t cols_done, int64_t N, double elapsed_s, double flops_done) {
    ts_hpl_progress *p = ctx;
    if (!p || !p->active || !p->bar || cols_done <= 0) return;
    char detail[96];
    const double tf = elapsed_s > 0 ? flops_done / elapsed_s / 1e12 : 0.0;
    char rate[32];
    rate_text(tf, rate, sizeof rate);
    snprintf(detail, sizeof detail, "column %" PRId64 "/%" PRId64 ", %s", cols_done, N, rate);
    // The time left from the factorization's own clock: the bar's began before the matrix was
    // generated, which would stretch every early estimate.
    ts_progress_update_at(p->bar, flops_done, elapsed_s, detail);
}

void ts_hpl_progress_stop(ts_hpl_progress *p, double gflops) {
    if (!p || !p->active || !p->bar) return;
    char detail[96];
    if (gflops > 0) rate_text(gflops / 1e3, detail, sizeof detail);
    else detail[0] = 0;
    ts_progress_finish(p->bar, detail[0] ? detail : NULL);
    p->active = 0;
}

void ts_hpl_progress_release(ts_hpl_progress *p) {
    if (!p) return;
    free(p->bar);
    p->bar = NULL;
}

static void progress_end(ts_hpl_progress *p, const ts_hpl_result *r) {
    ts_hpl_progress_stop(p, r && r->time > 0 ? r->gflops : 0.0);
}

static void progress_free(ts_hpl_progress *p) { ts_hpl_progress_release(p); }

// ---- JSON ------------------------------------------------------------------------------------

static int exec_is_device(const char *exec) {
    return !strncmp(exec, "device", 6) || !strcmp(exec, "ooc");
}

void ts_hpl_json_entry_begin(ts_json *j, const ts_hpl_json_entry *e) {
    ts_result_common rc;
    memset(&rc, 0, sizeof rc);
    rc.bench = e->bench;
    rc.engine = e->engine;
    rc.precision = e->precision;
    rc.where = e->where;
    rc.reps = 1;
    rc.sec_median = rc.sec_min = rc.sec_max = e->time;
    if (e->time > 0) rc.tf_median = rc.tf_min = rc.tf_max = e->gflops / 1e3;
    else rc.tf_median = rc.tf_min = rc.tf_max = -1.0;
    rc.verified = e->checked;
    rc.error = e->checked ? e->resid : NAN;
    rc.bound = e->checked ? e->threshold : NAN;
    ts_results_entry_begin(j, &rc);
    if (!e->precision && e->precision_name) ts_json_str(j, "precision", e->precision_name);
    ts_json_begin_object(j, "shape");
    ts_json_int(j, "n", e->N);
    ts_json_end_object(j);
}

// The entry of one HPL factorization (or its baseline's): double precision.
static void json_entry_begin(ts_json *j, const char *bench, const char *engine, const char *where,
                             const ts_hpl_case *c, const ts_hpl_result *r) {
    const ts_hpl_json_entry e = {bench, engine, where, 'd', NULL, c->N, r->time, r->gflops,
                                 r->checked, r->resid, c->threshold};
    ts_hpl_json_entry_begin(j, &e);
}

// The device path's GEMM engine is reported where one ran (not on the host path, whose engine is
// the CPU BLAS, nor in a skipped test).
static int reports_gemm(const ts_hpl_result *r) { return !r->skipped && !strncmp(r->exec_used, "device", 6); }

static void json_entry(ts_json *j, const ts_hpl_case *c, const ts_hpl_result *r, const ts_hpl_drive_opts *o) {
    const ts_hpl_ceiling *ceil = o->ceiling;
    json_entry_begin(j, "hpl", r->engine_used[0] ? r->engine_used : "tessera",
                     !strncmp(r->exec_used, "device", 6) ? "device" : "host", c, r);
    char tv[64];
    ts_hpl_tv_format(c, tv, sizeof tv);
    ts_json_begin_object(j, "extra");
    ts_json_int(j, "N", c->N);
    ts_json_int(j, "NB", c->NB);
    ts_json_int(j, "P", c->P);
    ts_json_int(j, "Q", c->Q);
    if (r->checked) ts_json_num(j, "residual", r->resid);
    else ts_json_null(j, "residual");
    ts_json_bool(j, "passed", r->checked ? r->passed : 0);
    ts_json_bool(j, "checked", r->checked);
    ts_json_bool(j, "skipped", r->skipped);
    if (r->skipped) ts_json_str(j, "why", r->why);
    ts_json_str(j, "tv", tv);
    ts_json_int(j, "depth", r->depth); // the lookahead depth that ran (the T/V code's third character)
    ts_json_str(j, "exec", r->exec_used);
    if (reports_gemm(r)) {
        ts_json_str(j, "gemm_engine", r->engine_used);
        ts_json_str(j, "gemm_choice", ts_hpl_gemm_choice_name(o->gemm_choice));
    }
    ts_json_str(j, "panel", r->panel_used);
    ts_json_str(j, "u_solve", r->u_solve);
    if (r->getrf[0]) ts_json_str(j, "getrf", r->getrf);
    if (!strcmp(r->panel_used, "tessera") || !strcmp(r->panel_used, "hybrid"))
        ts_json_int(j, "leaf_grid", r->leaf_grid);
    if (!strcmp(r->panel_used, "hybrid")) { // rows from which our panel took over, and how many it took
        ts_json_int(j, "panel_tail", r->panel_tail);
        ts_json_int(j, "panels_own", r->panels_own);
    }
    if (!strncmp(r->exec_used, "device", 6)) {
        ts_json_str(j, "panel_stream", r->panel_high ? "high" : "normal");
        const char *ml = ts_env_raw("CUDA_MODULE_LOADING"); // as the CUDA driver was given it
        ts_json_str(j, "cuda_module_loading", ml ? ml : "(unset)");
    }
    if (r->bcast_used[0]) ts_json_str(j, "bcast", r->bcast_used);
    if (r->swap_used[0]) ts_json_str(j, "swap", r->swap_used);
    if (r->layout[0]) ts_json_str(j, "layout", r->layout);
    ts_json_num(j, "gflops", r->gflops);
    if (r->time > 0 && exec_is_device(r->exec_used))
        ts_json_num(j, "gflops_per_gpu", r->gflops / ((double)c->P * c->Q));
    if (ceil && ceil->measured && r->time > 0) {
        // the run's ceiling: the best engine's sustained rate per GPU times this test's P x Q
        double tf = ceil->tflops_gpu * c->P * c->Q;
        ts_json_num(j, "ceiling_tflops", tf);
        ts_json_num(j, "hpl_over_ceiling", tf > 0 ? r->gflops / 1e3 / tf : 0);
        ts_json_begin_object(j, "ceiling");
        ts_json_str(j, "engine", ceil->best);
        ts_json_str(j, "op", ceil->best_op);
        ts_json_num(j, "tflops_per_gpu", ceil->tflops_gpu);
        ts_json_int(j, "m", ceil->m);
        ts_json_int(j, "n", ceil->n);
        ts_json_int(j, "k", ceil->k);
        ts_json_num(j, "seconds_per_engine", ceil->seconds);
        for (int e = 0; e < ceil->nengines; e++) {
            char key[48];
            // (B transposed: <engine>_nt_tflops_per_gpu)
            snprintf(key, sizeof key, "%s%s_tflops_per_gpu", ceil->eng[e].name,
                     strcmp(ceil->eng[e].op, "NT") ? "" : "_nt");
            ts_json_num(j, key, ceil->eng[e].tflops);
        }
        // each engine's rate with its energy over the same second half (null without NVML's counter)
        ts_json_begin_array(j, "engines");
        for (int e = 0; e < ceil->nengines; e++) {
            ts_json_begin_object(j, NULL);
            ts_json_str(j, "engine", ceil->eng[e].name);
            ts_json_str(j, "op", ceil->eng[e].op);
            ts_json_num(j, "tflops_per_gpu", ceil->eng[e].tflops);
            if (ceil->eng[e].energy) {
                ts_json_num(j, "joules", ceil->eng[e].joules);
                ts_json_num(j, "watts", ceil->eng[e].watts);
                ts_json_num(j, "j_per_tflop", ceil->eng[e].j_per_tflop);
            } else {
                ts_json_null(j, "joules");
                ts_json_null(j, "watts");
                ts_json_null(j, "j_per_tflop");
            }
            ts_json_end_object(j);
        }
        ts_json_end_array(j);
        ts_json_end_object(j);
    }
    ts_json_begin_object(j, "phases");
    ts_json_num(j, "fact", r->t_fact);
    ts_json_num(j, "bcast", r->t_bcast);
    ts_json_num(j, "swap", r->t_swap);
    ts_json_num(j, "update", r->t_update);
    ts_json_num(j, "solve", r->t_solve);
    ts_json_end_object(j);
    if (!strcmp(r->exec_used, "ooc")) {
        ts_json_begin_object(j, "ooc");
        ts_json_int(j, "gemms_tiles", r->ooc_gemms_tiles);
        ts_json_int(j, "gemms_cpu", r->ooc_gemms_cpu);
        ts_json_num(j, "flops_tiles", r->ooc_flops_tiles);
        ts_json_num(j, "bytes_h2d", r->ooc_bytes_h2d);
        ts_json_num(j, "bytes_d2h", r->ooc_bytes_d2h);
        ts_json_end_object(j);
    }
    if (r->n_rank_phases > 0) { // every rank's sums from its own stamps (grid order)
        static const char *const names[TS_HPL_RANK_NPH] = {"fact", "swap0", "swap1", "update0", "update1",
                                                          "trsm", "idle0", "total"};
        ts_json_begin_array(j, "per_rank");
        for (int q = 0; q < r->n_rank_phases; q++) {
            ts_json_begin_object(j, NULL);
            ts_json_int(j, "rank", q);
            ts_json_int(j, "row", r->rank_grid[q][0]);
            ts_json_int(j, "col", r->rank_grid[q][1]);
            for (int i = 0; i < TS_HPL_RANK_NPH; i++) ts_json_num(j, names[i], r->rank_phases[q][i]);
            ts_json_end_object(j);
        }
        ts_json_end_array(j);
    }
    ts_json_begin_array(j, "per_iteration");
    for (int i = 0; i < r->n_iters; i++) {
        const ts_hpl_iter *it = &r->iters[i];
        ts_json_begin_object(j, NULL);
        ts_json_int(j, "col", it->col);
        ts_json_num(j, "total", it->total);
        ts_json_num(j, "fact", it->fact);
        ts_json_num(j, "bcast", it->bcast);
        ts_json_num(j, "swap", it->swap);
        ts_json_num(j, "update", it->update);
        ts_json_num(j, "trsm", it->trsm);
        ts_json_num(j, "idle", it->idle);
        ts_json_end_object(j);
    }
    ts_json_end_array(j);
    ts_json_end_object(j);
    ts_results_entry_end(j);
}

// ---- the cuSOLVER baseline -------------------------------------------------------------------

// The factorization part of an HPL run: its time less the back substitution.
static double lu_seconds(const ts_hpl_result *r) { return r->time - r->t_solve; }

static void baseline_line(FILE *out, const ts_hpl_case *c, const ts_hpl_result *hpl,
                          const ts_hpl_result *b) {
    if (b->skipped) {
        fprintf(out, "cuSOLVER dgetrf N=%" PRId64 " : skipped (%s)\n", c->N, b->why);
    } else if (b->info) {
        fprintf(out, "cuSOLVER dgetrf N=%" PRId64 " : %.3f s, singular (info %d)\n", c->N, b->time, b->info);
    } else {
        fprintf(out, "cuSOLVER dgetrf N=%" PRId64 " : %.3f s, %.2f TFLOP/s (2/3 N^3); tessera LU/cuSOLVER "
                "time ratio %.3f", c->N, b->time, b->gflops / 1e3,
                b->time > 0 ? lu_seconds(hpl) / b->time : 0.0);
        if (b->checked)
            fprintf(out, " (its solve: residual %.4e %s)", b->resid, b->passed ? "PASSED" : "FAILED");
        fputc('\n', out);
    }
}

static void baseline_json(ts_json *j, const ts_hpl_case *c, const ts_hpl_result *hpl,
                          const ts_hpl_result *b) {
    json_entry_begin(j, "lu", "cusolver", "device", c, b);
    ts_json_begin_object(j, "extra");
    ts_json_int(j, "N", c->N);
    ts_json_str(j, "op", "dgetrf");
    ts_json_str(j, "flops", "2/3 N^3");
    if (b->checked) ts_json_num(j, "residual", b->resid);
    else ts_json_null(j, "residual");
    ts_json_bool(j, "passed", b->checked ? b->passed : 0);
    ts_json_bool(j, "skipped", b->skipped);
    if (b->skipped) ts_json_str(j, "why", b->why);
    ts_json_int(j, "info", b->info);
    ts_json_num(j, "solve_seconds", b->t_solve);
    ts_json_num(j, "tessera_lu_seconds", lu_seconds(hpl));
    if (b->time > 0) ts_json_num(j, "tessera_lu_over_cusolver", lu_seconds(hpl) / b->time);
    ts_json_end_object(j);
    ts_results_entry_end(j);
}

// ---- the loop --------------------------------------------------------------------------------

int ts_hpl_drive(ts_hpl_ctx *ctx, const ts_hpl_dat *d, const ts_hpl_drive_opts *o, ts_hpl_tally *t) {
    memset(t, 0, sizeof *t);
    int rank = ts_hpl_ctx_rank(ctx);
    int root = rank == 0;
    FILE *out = root ? o->out : NULL;
    int rc = 0;

    FILE *jf = NULL;
    ts_json *j = NULL;
    if (root && o->json_path) {
        jf = fopen(o->json_path, "w");
        if (!jf) TS_RAISE(TS_ERR_IO, "cannot write the JSON file '%s'", o->json_path);
        j = ts_json_open_file(jf);
        // rank 0's devices (one per rank under MPI)
        ts_results_begin(j, "tessera hpl", ts_hpl_ctx_size(ctx), ts_devset_json, ts_hpl_ctx_devset(ctx));
    }
    if (out && o->print_params) ts_hpl_print_params(out, d);

    int64_t total = ts_hpl_case_count(d);
    int header_once = d->threshold <= 0.0; // HPL prints the header once when it does not check
    int header_done = 0;
    for (int64_t k = 0; k < total; k++) {
        ts_hpl_case c;
        ts_hpl_case_at(d, k, &c);
        ts_hpl_result r;
        memset(&r, 0, sizeof r);
        if (root) progress_begin(o->progress, &c);
        int st = ts_hpl_run(ctx, &c, &r);
        if (root) progress_end(o->progress, st < 0 ? NULL : &r);
        if (st < 0) {
            t->runtime_error = st;
            rc = st;
            ts_hpl_result_free(&r);
            break;
        }
        if (r.skipped) {
            // HPL_pdtest: allocation failure, counted as skipped, nothing else printed.
            t->kskip++;
            if (out) ts_hpl_print_test(out, &c, &r, d->threshold, 0);
        } else {
            if (out && (!header_once || !header_done)) {
                ts_hpl_print_header(out);
                header_done = 1;
            }
            int ngpus = exec_is_device(r.exec_used) ? c.P * c.Q : 0;
            if (out) ts_hpl_print_test(out, &c, &r, d->threshold, ngpus);
            if (d->threshold <= 0.0) t->kpass++;
            else if (r.info != 0) t->kskip++;
            else if (r.resid < d->threshold) t->kpass++;
            else t->kfail++;
        }
        if (out) fflush(out);
        // (HPL's output stream, as the cuSOLVER baseline's line: stderr could land inside the
        // result block of a merged mpirun log)
        if (out && o->ceiling && o->ceiling->measured && r.time > 0 && !r.skipped) {
            double tf = o->ceiling->tflops_gpu * c.P * c.Q;
            char tv[64];
            ts_hpl_tv_format(&c, tv, sizeof tv);
            char rate[32];
            rate_text(o->ceiling->tflops_gpu, rate, sizeof rate);
            fprintf(out, "DGEMM ceiling %s N=%" PRId64 ": %.3fx (%s %s, %s per GPU x %d)\n", tv, c.N,
                    tf > 0 ? r.gflops / 1e3 / tf : 0, o->ceiling->best, o->ceiling->best_op, rate, c.P * c.Q);
            fflush(out);
        }
        if (out && reports_gemm(&r)) { // (HPL's output stream, as the ceiling's line)
            char tv[64];
            ts_hpl_tv_format(&c, tv, sizeof tv);
            fprintf(out, "DGEMM engine %s N=%" PRId64 ": %s (%s)\n", tv, c.N, r.engine_used,
                    ts_hpl_gemm_choice_name(o->gemm_choice));
            fflush(out);
        }
        if (j) {
            json_entry(j, &c, &r, o);
            fflush(jf);
        }
        if (o->baseline_cusolver && !r.skipped) {
            ts_hpl_result rb;
            int bst = ts_hpl_baseline_cusolver(ctx, &c, &rb);
            if (bst < 0) {
                t->runtime_error = bst;
                rc = bst;
                ts_hpl_result_free(&rb);
                ts_hpl_result_free(&r);
                break;
            }
            if (out) {
                baseline_line(out, &c, &r, &rb);
                fflush(out);
            }
            if (j) {
                baseline_json(j, &c, &r, &rb);
                fflush(jf);
            }
            ts_hpl_result_free(&rb);
        }
        if (root && o->plot_path && r.n_iters > 0) {
            char name[1024];
            ts_plot_name(o->plot_path, k, total, name, sizeof name); // plot-3.svg when a file has several tests
            int prc = ts_hpl_plot_svg(name, &c, &r);
            if (prc < 0 && rc == 0) rc = prc;
        }
        ts_hpl_result_free(&r);
    }
    if (out) {
        ts_hpl_print_summary(out, t, d->threshold);
        fflush(out);
    }
    if (j) {
        int frc = ts_results_finish(j, jf, o->json_path);
        if (rc == 0) rc = frc;
    }
    if (root) progress_free(o->progress);
    return rc;
}
