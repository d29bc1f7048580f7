// ts_hpcg_driver.c: the HPCG 3.1 benchmark phases, the flop/byte accounting, the rating and the key=value report.
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "algorithms/hpcg/ts_hpcg.h"
#include "algorithms/hpcg/ts_hpcg_opt.h"
#include "core/ts_env.h"
#include "core/ts_error.h"
#include "core/ts_log.h"
#include "core/ts_progress.h"
#include "core/ts_timer.h"

void ts_hpcg_count(const ts_hpcg_problem *P, int sets, int opt_iters, ts_hpcg_counts *c) {
    memset(c, 0, sizeof *c);
    const double fsets = sets, fniters = fsets * opt_iters;
    const double nrow = (double)P->A->gnrow, nnz = (double)P->A->gnnz;
    const double d = sizeof(double), li = sizeof(int32_t);
    // Counts of ReportResults.cpp (3.1): the +sets terms are the CG preamble of each set.
    c->ddot = (3.0 * fniters + fsets) * 2.0 * nrow;
    c->waxpby = (3.0 * fniters + fsets) * 2.0 * nrow;
    c->spmv = (fniters + fsets) * 2.0 * nnz;
    c->rd_ddot = (3.0 * fniters + fsets) * 2.0 * nrow * d;
    c->wr_ddot = (3.0 * fniters + fsets) * d;
    c->rd_waxpby = (3.0 * fniters + fsets) * 2.0 * nrow * d;
    c->wr_waxpby = (3.0 * fniters + fsets) * nrow * d;
    c->rd_spmv = (fniters + fsets) * (nnz * (d + li) + nrow * d);
    c->wr_spmv = (fniters + fsets) * nrow * d;
    const ts_hpcg_level *L = P->A;
    for (; L->coarse; L = L->coarse) {
        const double lnnz = (double)L->gnnz, lrow = (double)L->gnrow;
        c->mg += fniters * 4.0 * lnnz;  // pre-smoother (1 SYMGS = 2 sweeps)
        c->mg += fniters * 2.0 * lnnz;  // residual SpMV
        c->mg += fniters * 4.0 * lnnz;  // post-smoother
        c->rd_mg += 2 * fniters * (2.0 * lnnz * (d + li) + lrow * d) + fniters * (lnnz * (d + li) + lrow * d);
        c->wr_mg += 2 * fniters * 2.0 * lrow * d + fniters * lrow * d;
    }
    c->mg += fniters * 4.0 * (double)L->gnnz; // one SYMGS on the coarsest level
    c->rd_mg += fniters * (2.0 * (double)L->gnnz * (d + li) + (double)L->gnrow * d);
    c->wr_mg += fniters * 2.0 * (double)L->gnrow * d;
    c->total = c->ddot + c->waxpby + c->spmv + c->mg;
    // Extra iterations are not credited: scale to the reference's iteration count.
    c->total_ref = c->total * (double)TS_HPCG_REF_ITERS / (double)opt_iters;
}

// Max over ranks of v (every rank gets it).
static int all_max(const ts_comm *c, double *v) { return ts_comm_allreduce_d(c, v, 1, TS_COMM_MAX); }

static void progress_cb(ts_progress *pr, int on, double done, double total, const char *what) {
    if (!on) return;
    char d[128];
    snprintf(d, sizeof d, "%s %.0f/%.0f", what, done, total);
    ts_progress_update(pr, done, d);
}

int ts_hpcg_engine_parse(const char *s) {
    static const char *names[] = {"auto", "ref", "cpu", "device", "cuda"};
    for (int i = 0; i < 5; i++)
        if (s && !strcmp(s, names[i])) return i;
    return -1;
}

// The engine every rank runs: device engines need a device on every rank (all agree).
typedef struct {
    ts_hpcg_engine engine;
    ts_devset *devs;
    ts_device *dev;
} engine_choice;

static int choose_engine(const ts_comm *comm, ts_hpcg_engine want, engine_choice *e) {
    memset(e, 0, sizeof *e);
    e->engine = want;
    if (want == TS_HPCG_ENGINE_REF || want == TS_HPCG_ENGINE_CPU) return 0;
    int lr = 0, ls = 1;
    TS_CHECK(ts_comm_node_local(comm, &lr, &ls));
    ts_devset_opts o;
    int have = 0;
    if (ts_devset_opts_init(&o) == 0 && ts_devset_open_rank(&o, lr, ls, &e->devs, &e->dev) == 0 && e->dev)
        have = want != TS_HPCG_ENGINE_CUDA || ts_device_props_of(e->dev)->backend == TS_BACKEND_CUDA;
    char why[256];
    snprintf(why, sizeof why, "%s", have ? "" : e->devs ? "no suitable device" : ts_error_string());
    int all = have;
    TS_CHECK(ts_comm_allreduce_i(comm, &all, 1, TS_COMM_MIN));
    if (all) {
        e->engine = TS_HPCG_ENGINE_DEVICE;
        return 0;
    }
    if (e->devs) ts_devset_close(e->devs);
    e->devs = NULL;
    e->dev = NULL;
    if (want == TS_HPCG_ENGINE_AUTO) {
        e->engine = TS_HPCG_ENGINE_CPU;
        return 0;
    }
    TS_RAISE(TS_ERR_UNSUPPORTED, "hpcg: --engine %s needs a %s on every rank; %s",
             want == TS_HPCG_ENGINE_CUDA ? "cuda" : "device", want == TS_HPCG_ENGINE_CUDA ? "CUDA GPU" : "device",
             have ? "another rank has none" : why);
}

// Device-to-device copy bandwidth (read + write), best of a few copies timed with events.
static int copy_gbs(const ts_hpcg_exec *X, double *gbs) {
    *gbs = 0;
    size_t used, free_b, largest, bytes = (size_t)1 << 30;
    ts_dmem_info(X->dev, &used, &free_b, &largest);
    while (bytes > ((size_t)1 << 20) && 2 * bytes > largest / 2) bytes /= 2;
    void *a = NULL, *b = NULL;
    ts_event *ev[2] = {0};
    int rc = 0;
    TS_CHECK_GOTO(ts_dmalloc(X->dev, bytes, &a), rc, out);
    TS_CHECK_GOTO(ts_dmalloc(X->dev, bytes, &b), rc, out);
    TS_CHECK_GOTO(ts_event_create(X->dev, &ev[0]), rc, out);
    TS_CHECK_GOTO(ts_event_create(X->dev, &ev[1]), rc, out);
    TS_CHECK_GOTO(ts_memset_async(X->st, a, 0, bytes), rc, out);
    for (int i = 0; i < 6; i++) {
        TS_CHECK_GOTO(ts_event_record(ev[0], X->st), rc, out);
        TS_CHECK_GOTO(ts_copy_async(X->st, TS_COPY_D2D, b, a, bytes), rc, out);
        TS_CHECK_GOTO(ts_event_record(ev[1], X->st), rc, out);
        TS_CHECK_GOTO(ts_stream_sync(X->st), rc, out);
        double ms = 0;
        TS_CHECK_GOTO(ts_event_elapsed_ms(ev[0], ev[1], &ms), rc, out);
        if (i > 0 && ms > 0 && 2.0 * (double)bytes / (ms * 1e6) > *gbs) *gbs = 2.0 * (double)bytes / (ms * 1e6);
    }
out:
    for (int i = 0; i < 2; i++)
        if (ev[i]) ts_event_destroy(ev[i]);
    ts_dfree(X->dev, a);
    ts_dfree(X->dev, b);
    return rc;
}

int ts_hpcg_share_threads(const ts_comm *comm, int *threads) {
#ifdef _OPENMP
    // Ranks sharing a node share its cores: without OMP_NUM_THREADS each rank takes its share.
    // (Every rank's OpenMP team spanning all cores oversubscribes them, and the reference SYMGS's
    // plane pipeline, whose threads wait on each other, then slows by orders of magnitude.)
    if (!ts_env_raw("OMP_NUM_THREADS")) {
        int lr = 0, ls = 1;
        TS_CHECK(ts_comm_node_local(comm, &lr, &ls));
        int share = omp_get_num_procs() / (ls > 0 ? ls : 1);
        if (ls > 1) omp_set_num_threads(share > 0 ? share : 1);
    }
    *threads = omp_get_max_threads();
#else
    (void)comm;
    *threads = 1;
#endif
    return 0;
}

int ts_hpcg_run(const ts_comm *comm, const ts_hpcg_opts *o, ts_hpcg_result *res) {
    memset(res, 0, sizeof *res);
    double *times = res->times;
    const int root = comm->rank == 0;
    const int show = root && !o->quiet;
    TS_CHECK(ts_hpcg_share_threads(comm, &res->omp_threads));
    TS_CHECK(ts_hpcg_geom_init_z(&res->g, comm->size, comm->rank, o->nx, o->ny, o->nz, o->npx, o->npy, o->npz,
                                 o->pz, o->zl, o->zu));
    TS_CHECK(ts_hpcg_check_geom(&res->g));
    engine_choice ec;
    TS_CHECK(choose_engine(comm, o->engine, &ec));
    ts_hpcg_problem *P = NULL;
    ts_hpcg_opt *O = NULL;
    ts_hpcg_exec X;
    ts_hpcg_exec_host(&X);
    int rc = 0;
    if (ec.engine == TS_HPCG_ENGINE_DEVICE) {
        const ts_device_props *dp = ts_device_props_of(ec.dev);
        snprintf(res->engine, sizeof res->engine, "%s", dp->backend == TS_BACKEND_CUDA ? "cuda" : "sim");
        snprintf(res->device, sizeof res->device, "%s", dp->name);
        TS_CHECK_GOTO(ts_hpcg_exec_device(&X, ec.devs, ec.dev), rc, out);
    } else {
        snprintf(res->engine, sizeof res->engine, "%s", ec.engine == TS_HPCG_ENGINE_REF ? "ref" : "cpu");
    }

    // Setup (times[9]): the problem the benchmark solves. The reference engine times the
    // reference's generation; the optimized engines time their own (on the device for device
    // engines), and the reference problem, needed only by the reference phases, is not timed.
    double t0 = ts_now();
    TS_CHECK_GOTO(ts_hpcg_problem_create(comm, &res->g, TS_HPCG_MG_LEVELS, &P), rc, out);
    times[TS_HPCG_T_SETUP] = ts_now() - t0;
    if (ec.engine != TS_HPCG_ENGINE_REF) {
        t0 = ts_now();
        rc = ts_hpcg_opt_setup(comm, &res->g, TS_HPCG_MG_LEVELS, &X, &O);
        if (rc == TS_ERR_DEVMEM)
            ts_error_wrap(rc, "hpcg: local grid %d x %d x %d does not fit in the memory of %s", res->g.nx,
                          res->g.ny, res->g.nz, res->device);
        if (rc < 0) goto out;
        // Creating the NCCL communicator is the device's MPI_Init, outside the timed setup as
        // MPI_Init is; it is reported on its own.
        res->comm_init_s = O->t_join;
        TS_CHECK_GOTO(all_max(comm, &res->comm_init_s), rc, out);
        times[TS_HPCG_T_SETUP] = ts_now() - t0 - O->t_join;
    }
    res->gnrow = P->A->gnrow;
    res->gnnz = P->A->gnnz;
    res->mem_bytes = (double)P->bytes;
    TS_CHECK_GOTO(ts_comm_allreduce_d(comm, &res->mem_bytes, 1, TS_COMM_SUM), rc, out);
    char zs[64];
    ts_hpcg_geom_nz_text(&res->g, zs, sizeof zs);
    if (show)
        ts_log(TS_LOG_INFO, "hpcg: %lld x %lld x %lld global (%d x %d x %s per rank, %d x %d x %d ranks), "
               "%lld rows, %lld nonzeros; engine %s%s%s; setup %.3f s", (long long)res->g.gnx,
               (long long)res->g.gny, (long long)res->g.gnz, res->g.nx, res->g.ny, zs, res->g.npx,
               res->g.npy, res->g.npz, (long long)res->gnrow, (long long)res->gnnz, res->engine,
               res->device[0] ? " on " : "", res->device, times[TS_HPCG_T_SETUP]);

    const int quick = o->rt <= 0.0;
    // TESSERA_HPCG_REF_DROP: the reference CG's residual drop given instead of computed (benchmark
    // development on GPU machines, where the host's reference CG is most of a short run's time:
    // ~30 s of a 256^3 run, ~50 s on two ranks). Never an official result; the same on every rank.
    double given = 0.0;
    int have_given = ts_env_double("TESSERA_HPCG_REF_DROP", &given);
    if (have_given < 0) {
        rc = ts_error_last()->code;
        goto out;
    }
    if (have_given && !(given > 0.0 && given < 1.0)) {
        rc = TS_ERROR(TS_ERR_ARG, "TESSERA_HPCG_REF_DROP=%g: a residual drop is in (0, 1)", given);
        goto out;
    }
    TS_CHECK_GOTO(ts_comm_same_on_ranks(comm, have_given ? given : -1.0, "hpcg: TESSERA_HPCG_REF_DROP"), rc, out);
    const int ncalls = quick || have_given ? 1 : 10;
    ts_hpcg_impl ref, opt, *I = &ref;
    ts_hpcg_impl_ref(P, &ref);

    // Reference SpMV + MG timing (times[8]).
    t0 = ts_now();
    for (int i = 0; i < ncalls; i++) {
        TS_CHECK_GOTO(ts_hpcg_spmv(comm, P->A, P->xexact, P->z), rc, out);
        TS_CHECK_GOTO(ts_hpcg_mg(comm, P->A, P->b, P->x), rc, out);
    }
    times[TS_HPCG_T_REF] = (ts_now() - t0) / ncalls;

    // Reference CG: 50 iterations, tolerance 0, once; its residual drop is the target.
    ts_hpcg_cg_result cr;
    if (have_given) {
        res->ref_iters = TS_HPCG_REF_ITERS;
        res->ref_tolerance = given;
        res->ref_given = 1;
        if (show)
            ts_log(TS_LOG_INFO, "hpcg: reference CG not run: residual drop %.6e given by TESSERA_HPCG_REF_DROP "
                   "(not an official result)", given);
    } else {
        double ref_times[TS_HPCG_NTIMES] = {0};
        double t_ref = ts_now();
        memset(P->x, 0, sizeof(double) * (size_t)P->A->ncol);
        TS_CHECK_GOTO(ts_hpcg_cg(&ref, P->b, P->x, TS_HPCG_REF_ITERS, 0.0, 1, ref_times, &cr), rc, out);
        res->ref_iters = cr.niters;
        res->ref_tolerance = cr.normr / cr.normr0;
        if (show) ts_log(TS_LOG_INFO, "hpcg: reference CG: %d iterations, residual drop %.6e (%.1f s)", cr.niters,
                         res->ref_tolerance, ts_now() - t_ref);
    }

    // OptimizeProblem (times[7]): the reference engine keeps the CSR in natural order.
    t0 = ts_now();
    if (O) {
        TS_CHECK_GOTO(ts_hpcg_opt_optimize(O), rc, out);
        ts_hpcg_opt_impl(O, &opt);
        I = &opt;
        res->ncolors = O->A->ncolors;
        res->opt_bytes = (double)O->bytes;
        snprintf(res->halo, sizeof res->halo, "%s", O->halo);
        res->mg_graph = O->graph;
        res->smoother_midx = O->midx && comm->size > 1;
    }
    times[TS_HPCG_T_OPT] = ts_now() - t0;
    TS_CHECK_GOTO(ts_comm_allreduce_d(comm, &res->opt_bytes, 1, TS_COMM_SUM), rc, out);
    res->mem_bytes += res->opt_bytes;
    if (show && O)
        ts_log(TS_LOG_INFO, "hpcg: optimized problem: %d colours on the fine level (JPL), sliced ELL of %.3f GB; "
               "optimization %.3f s", O->A->ncolors, res->opt_bytes / 1e9, times[TS_HPCG_T_OPT]);

    TS_CHECK_GOTO(ts_hpcg_test_cg(I, &res->g, &res->testcg), rc, out);
    TS_CHECK_GOTO(ts_hpcg_test_symmetry(I, &res->testsym), rc, out);
    if (show)
        ts_log(TS_LOG_INFO, "hpcg: TestCG %s (%d and %d iterations), TestSymmetry %s (SpMV %.3g, MG %.3g)",
               res->testcg.count_fail ? "FAILED" : "passed", res->testcg.niters_max_no_prec,
               res->testcg.niters_max_prec, res->testsym.count_fail ? "FAILED" : "passed",
               res->testsym.depsym_spmv, res->testsym.depsym_mg);

    // Optimized CG setup: iterations to reach the reference drop (at least 50, at most 500).
    int opt_iters = 0;
    double worst = 0;
    {
        double tt[TS_HPCG_NTIMES] = {0};
        TS_CHECK_GOTO(I->ops->zero(I, I->x), rc, out);
        TS_CHECK_GOTO(ts_hpcg_cg(I, I->b, I->x, TS_HPCG_OPT_MAX_ITERS, res->ref_tolerance, 1, tt, &cr), rc, out);
        worst = tt[TS_HPCG_T_TOTAL];
        opt_iters = cr.niters;
        if (cr.normr / cr.normr0 > res->ref_tolerance * (1.0 + 1.0e-6)) res->tolerance_failures++;
    }
    if (opt_iters < TS_HPCG_REF_ITERS) opt_iters = TS_HPCG_REF_ITERS;
    {
        double v[2] = {(double)opt_iters, (double)res->tolerance_failures};
        TS_CHECK_GOTO(ts_comm_allreduce_d(comm, v, 2, TS_COMM_MAX), rc, out);
        opt_iters = (int)v[0];
        res->tolerance_failures = (int)v[1];
    }
    TS_CHECK_GOTO(all_max(comm, &worst), rc, out);
    res->opt_iters = opt_iters;
    res->opt_worst_time = worst;
    if (show) ts_log(TS_LOG_INFO, "hpcg: optimized CG: %d iterations to the reference drop (%.3f s)", cr.niters, worst);

    // The benchmark: as many sets of opt_iters iterations as fill rt seconds.
    int sets = (int)(o->rt / (worst > 0 ? worst : 1e-9)) + 1;
    res->cg_sets = sets;
    double *norms = malloc(sizeof(double) * (size_t)sets);
    if (!norms) {
        rc = TS_ERROR(TS_ERR_NOMEM, "hpcg: out of memory");
        goto out;
    }
    ts_progress pr;
    if (show) {
        char label[64];
        snprintf(label, sizeof label, "hpcg %d CG sets x %d iterations", sets, opt_iters);
        ts_progress_init(&pr, stderr, label, sets);
    }
    memset(times, 0, sizeof(double) * 7);
    for (int s = 0; s < sets; s++) {
        rc = I->ops->zero(I, I->x);
        if (rc == 0) rc = ts_hpcg_cg(I, I->b, I->x, opt_iters, 0.0, 1, times, &cr);
        if (rc < 0) break;
        norms[s] = cr.normr / cr.normr0;
        progress_cb(&pr, show, s + 1, sets, "sets");
    }
    if (show) ts_progress_finish(&pr, NULL);
    if (rc < 0) {
        free(norms);
        goto out;
    }
    ts_hpcg_test_norms(norms, sets, &res->testnorms);
    free(norms);
    if (O) { // after the timed sets, which it does not touch
        TS_CHECK_GOTO(ts_hpcg_opt_probe(O, quick ? 3 : 20, &res->probe), rc, out);
        const ts_hpcg_probe *q = &res->probe;
        // The V-cycle's time as a graph only where it ran as one (TESSERA_HPCG_GRAPH=1, captured).
        char graph[48] = "";
        if (res->mg_graph) snprintf(graph, sizeof graph, " (%.3f as a graph)", q->mg_graph_ms);
        if (show && comm->size == 1)
            ts_log(TS_LOG_INFO, "hpcg: per call: SpMV %.3f ms, V-cycle %.3f ms%s, DDOT %.1f us", q->spmv_ms,
                   q->mg_ms, graph, q->dot_us);
        else if (show) {
            if (res->mg_graph) snprintf(graph, sizeof graph, "; %.3f as a graph", q->mg_graph_ms);
            ts_log(TS_LOG_INFO, "hpcg: per call (slowest rank): halo exchange %.1f / %.1f / %.1f / %.1f us "
                   "(levels 0-3); SpMV %.3f ms (%.3f without its exchange); V-cycle %.3f ms (%.3f without, "
                   "%.3f on the fastest rank%s); DDOT %.1f us", q->halo_us[0], q->halo_us[1],
                   q->halo_us[2], q->halo_us[3], q->spmv_ms, q->spmv_nohalo_ms, q->mg_ms, q->mg_nohalo_ms,
                   q->mg_nohalo_ms_min, graph, q->dot_us);
        }
        if (show) {
            char line[1024];
            int n = 0;
            for (int l = 0; l < q->levels && n < (int)sizeof line; l++)
                n += snprintf(line + n, sizeof line - (size_t)n, "%s%d: %.3f/%.3f/%.3f", l ? ", " : "", l,
                              q->pre_ms[l], q->post_ms[l], q->rp_ms[l]);
            ts_log(TS_LOG_INFO, "hpcg: V-cycle parts per level, ms (pre-smoother/post-smoother/residual with "
                   "restriction and prolongation; no exchanges): %s", line);
            n = 0;
            for (int c = 0; c < q->ncolors && n < (int)sizeof line; c++) {
                if (comm->size == 1) // no halo rows
                    n += snprintf(line + n, sizeof line - (size_t)n, "%s%.1f (%d rows, width %d)", c ? ", " : "",
                                  q->fwd_us[c], q->rows[c], q->width[c]);
                else
                    n += snprintf(line + n, sizeof line - (size_t)n, "%s%.1f (%d rows, %d in halo blocks, width %d/%d)",
                                  c ? ", " : "", q->fwd_us[c], q->rows[c], q->hrows[c], q->width[c], q->hwidth[c]);
            }
            ts_log(TS_LOG_INFO, "hpcg: forward sweep per colour, fine level, us: %s", line);
        }
    }

    // The slowest rank decides the times; the allreduce time's spread is reported too.
    {
        double t4 = times[TS_HPCG_T_ALLREDUCE], v[3] = {t4, t4, t4};
        TS_CHECK_GOTO(ts_comm_allreduce_d(comm, &v[0], 1, TS_COMM_MIN), rc, out);
        TS_CHECK_GOTO(ts_comm_allreduce_d(comm, &v[1], 1, TS_COMM_MAX), rc, out);
        TS_CHECK_GOTO(ts_comm_allreduce_d(comm, &v[2], 1, TS_COMM_SUM), rc, out);
        res->t4min = v[0];
        res->t4max = v[1];
        res->t4avg = v[2] / comm->size;
    }
    TS_CHECK_GOTO(ts_comm_allreduce_d(comm, times, TS_HPCG_NTIMES, TS_COMM_MAX), rc, out);

    ts_hpcg_count(P, sets, opt_iters, &res->counts);
    const ts_hpcg_counts *c = &res->counts;
    const double T = times[TS_HPCG_T_TOTAL];
    res->gflops_ddot = c->ddot / times[TS_HPCG_T_DDOT] / 1e9;
    res->gflops_waxpby = c->waxpby / times[TS_HPCG_T_WAXPBY] / 1e9;
    res->gflops_spmv = c->spmv / times[TS_HPCG_T_SPMV] / 1e9;
    res->gflops_mg = c->mg / times[TS_HPCG_T_MG] / 1e9;
    res->gflops_raw = c->total / T / 1e9;
    res->gbs_ddot = (c->rd_ddot + c->wr_ddot) / times[TS_HPCG_T_DDOT] / 1e9;
    res->gbs_waxpby = (c->rd_waxpby + c->wr_waxpby) / times[TS_HPCG_T_WAXPBY] / 1e9;
    res->gbs_spmv = (c->rd_spmv + c->wr_spmv) / times[TS_HPCG_T_SPMV] / 1e9;
    res->gbs_mg = (c->rd_mg + c->wr_mg) / times[TS_HPCG_T_MG] / 1e9;
    res->gbs_total = (c->rd_ddot + c->wr_ddot + c->rd_waxpby + c->wr_waxpby + c->rd_spmv + c->wr_spmv +
                      c->rd_mg + c->wr_mg) / T / 1e9;
    if (O) { // the engine's own traffic per phase, and the copy bandwidth it is measured against
        double b[4];
        ts_hpcg_opt_bytes(O, &b[0], &b[1], &b[2], &b[3]);
        TS_CHECK_GOTO(ts_comm_allreduce_d(comm, b, 4, TS_COMM_SUM), rc, out);
        const double it = (double)sets * opt_iters, pre = sets; // + each set's r = b - A x
        res->xgbs_spmv = b[0] * (it + pre) / times[TS_HPCG_T_SPMV] / 1e9;
        res->xgbs_mg = b[1] * it / times[TS_HPCG_T_MG] / 1e9;
        res->xgbs_ddot = b[2] * (it + pre / 3) / times[TS_HPCG_T_DDOT] / 1e9;
        res->xgbs_waxpby = b[3] * (it + pre / 3) / times[TS_HPCG_T_WAXPBY] / 1e9;
        res->xgbs_total = (b[0] * (it + pre) + b[1] * it + (b[2] + b[3]) * (it + pre / 3)) / T / 1e9;
        if (X.cuda) {
            TS_CHECK_GOTO(copy_gbs(&X, &res->copy_gbs), rc, out);
            TS_CHECK_GOTO(ts_comm_allreduce_d(comm, &res->copy_gbs, 1, TS_COMM_SUM), rc, out);
        }
    }
    // Setup and optimization are charged a tenth per set (about 1/500 iterations each).
    res->rating = c->total_ref / (T + sets * (times[TS_HPCG_T_OPT] / 10.0 + times[TS_HPCG_T_SETUP] / 10.0)) / 1e9;
    res->rating24 = c->total_ref / (T + sets * times[TS_HPCG_T_OPT] / 10.0) / 1e9;

    res->valid = 1;
    if (res->testcg.count_fail) {
        res->valid = 0;
        snprintf(res->reason, sizeof res->reason, "spectral convergence test (TestCG) failed %d time(s)",
                 res->testcg.count_fail);
    } else if (res->testsym.count_fail) {
        res->valid = 0;
        snprintf(res->reason, sizeof res->reason, "symmetry test failed (departure SpMV %.3g, MG %.3g; limit 1)",
                 res->testsym.depsym_spmv, res->testsym.depsym_mg);
    } else if (res->tolerance_failures) {
        res->valid = 0;
        snprintf(res->reason, sizeof res->reason, "optimized CG did not reach the reference residual drop "
                 "%.6e in %d iterations", res->ref_tolerance, TS_HPCG_OPT_MAX_ITERS);
    } else if (!res->testnorms.pass) {
        res->valid = 0;
        snprintf(res->reason, sizeof res->reason, "scaled residual variance %.3e over the CG sets is not "
                 "below 1e-6", res->testnorms.variance);
    }
    if (root) rc = ts_hpcg_write_report(o, res, P);
    {
        int r = rc;
        TS_CHECK_GOTO(ts_comm_allreduce_i(comm, &r, 1, TS_COMM_MIN), rc, out);
        if (r < 0 && rc == 0) rc = TS_ERROR(TS_ERR_IO, "hpcg: rank 0 could not write the report");
    }
out:
    ts_hpcg_opt_destroy(O);
    ts_hpcg_exec_fini(&X);
    if (ec.devs) ts_devset_close(ec.devs);
    ts_hpcg_problem_destroy(P);
    return rc;
}
