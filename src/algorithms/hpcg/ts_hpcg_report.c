// ts_hpcg_report.c: the HPCG 3.1 results file (HPCG 3.1's keys, then Tessera's own section), written by rank 0.
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "algorithms/hpcg/ts_hpcg.h"
#include "core/ts_error.h"

static void kv(FILE *f, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void kv(FILE *f, const char *key, const char *fmt, ...) {
    fprintf(f, "%s=", key);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fputc('\n', f);
}

// HPCG 3.1's Final Summary with the keys its ReportResults writes and no others (parsers of official
// reports read them): the verdict, the reference kernels when they ran (--engine ref: the
// reference's SpMV, MG, DDOT and WAXPBY), and what the run's length makes of it. Studies that are
// not the benchmark (TESSERA_HPCG_REF_DROP, TESSERA_HPCG_MIDX=1) get no invitation to upload.
static void final_summary(FILE *f, const ts_hpcg_opts *o, const ts_hpcg_result *r) {
    const double T = r->times[TS_HPCG_T_TOTAL];
    const char *sub = "Performance results are most likely suboptimal";
    const char *site = "http://hpcg-benchmark.org";
    const int study = r->ref_given || r->smoother_midx;
    kv(f, "Final Summary", "%s", "");
    if (!r->valid) {
        kv(f, "Final Summary::HPCG result is", "%s", "INVALID.");
        kv(f, "Final Summary::Please review the YAML file contents", "%s",
           "You may NOT submit these results for consideration.");
        return;
    }
    kv(f, "Final Summary::HPCG result is VALID with a GFLOP/s rating of", "%g", r->rating);
    kv(f, "Final Summary::HPCG 2.4 rating for historical reasons is", "%g", r->rating24);
    if (!strcmp(r->engine, "ref")) {
        kv(f, "Final Summary::Reference version of ComputeDotProduct used", "%s", sub);
        kv(f, "Final Summary::Reference version of ComputeSPMV used", "%s", sub);
        if (r->omp_threads > 1)
            kv(f, "Final Summary::Reference version of ComputeMG used and number of threads greater than 1", "%s",
               "Performance results are severely suboptimal");
        else
            kv(f, "Final Summary::Reference version of ComputeMG used", "%s", sub);
        kv(f, "Final Summary::Reference version of ComputeWAXPBY used", "%s", sub);
    }
    if (T >= TS_HPCG_OFFICIAL_TIME) {
        if (!study) kv(f, "Final Summary::Please upload results from the YAML file contents to", "%s", site);
        return;
    }
    kv(f, "Final Summary::Results are valid but execution time (sec) is", "%g", T);
    if (o->rt <= 0) { // the quick path: --rt 0 or run time 0 in hpcg.dat
        kv(f, "Final Summary::You have selected the QuickPath option", "%s",
           "Results are official for legacy installed systems with confirmation from the HPCG Benchmark leaders.");
        if (!study)
            kv(f, "Final Summary::After confirmation please upload results from the YAML file contents to", "%s", site);
    } else {
        kv(f, "Final Summary::Official results execution time (sec) must be at least", "%g", TS_HPCG_OFFICIAL_TIME);
    }
}

// Tessera's own lines, after all of HPCG 3.1's, under keys of their own ("Tessera::"); the last
// line is the verdict with its reason.
static void own_section(FILE *f, const ts_hpcg_opts *o, const ts_hpcg_result *r) {
    kv(f, "########## Tessera (not in HPCG 3.1's report)  ##########", "%s", "");
    kv(f, "Tessera", "%s", "");
    kv(f, "Tessera::Implementation", "tessera hpcg (engine %s%s%s)", r->engine, r->device[0] ? ", " : "",
       r->device);
    kv(f, "Tessera::Run time asked (sec)", "%g", o->rt);
    kv(f, "Tessera::CG sets", "%d", r->cg_sets);
    if (r->ref_given)
        kv(f, "Tessera::Reference CG", "%s",
           "not run, its residual drop given (TESSERA_HPCG_REF_DROP): not an official result");
    if (r->smoother_midx) // TESSERA_HPCG_MIDX=1: a study of the ranks' coupling, not the benchmark
        kv(f, "Tessera::Smoother", "%s",
           "halo exchanged between the forward and backward sweeps (TESSERA_HPCG_MIDX=1): not the "
           "reference preconditioner, not an official result");
    if (r->valid)
        kv(f, "Tessera::Result", "VALID with a GFLOP/s rating of %g", r->rating);
    else
        kv(f, "Tessera::Result", "INVALID: %s", r->reason);
}

int ts_hpcg_write_report(const ts_hpcg_opts *o, ts_hpcg_result *r, const ts_hpcg_problem *P) {
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y-%m-%d_%H-%M-%S", &tm);
    snprintf(r->report_path, sizeof r->report_path, "%s%sHPCG-Benchmark_3.1_%s.txt",
             o->report_dir ? o->report_dir : "", o->report_dir ? "/" : "", stamp);
    FILE *f = fopen(r->report_path, "w");
    if (!f) TS_RAISE(TS_ERR_IO, "hpcg: cannot write the report '%s'", r->report_path);
    const ts_hpcg_geom *g = &r->g;
    const double *t = r->times;
    const ts_hpcg_counts *c = &r->counts;

    fprintf(f, "HPCG-Benchmark\n");
    kv(f, "version", "3.1");
    kv(f, "Release date", "March 28, 2019");
    kv(f, "Machine Summary", "%s", "");
    kv(f, "Machine Summary::Distributed Processes", "%d", g->size);
    kv(f, "Machine Summary::Threads per processes", "%d", r->omp_threads);
    kv(f, "Global Problem Dimensions", "%s", "");
    kv(f, "Global Problem Dimensions::Global nx", "%lld", (long long)g->gnx);
    kv(f, "Global Problem Dimensions::Global ny", "%lld", (long long)g->gny);
    kv(f, "Global Problem Dimensions::Global nz", "%lld", (long long)g->gnz);
    kv(f, "Processor Dimensions", "%s", "");
    kv(f, "Processor Dimensions::npx", "%d", g->npx);
    kv(f, "Processor Dimensions::npy", "%d", g->npy);
    kv(f, "Processor Dimensions::npz", "%d", g->npz);
    kv(f, "Local Domain Dimensions", "%s", "");
    kv(f, "Local Domain Dimensions::nx", "%d", g->nx);
    kv(f, "Local Domain Dimensions::ny", "%d", g->ny);
    // One group of z layers per nz value, as HPCG 3.1 lists them (pz splits them in two).
    if (g->pz > 0) {
        kv(f, "Local Domain Dimensions::Lower ipz", "%d", 0);
        kv(f, "Local Domain Dimensions::Upper ipz", "%d", g->pz - 1);
        kv(f, "Local Domain Dimensions::nz", "%d", g->zl);
    }
    kv(f, "Local Domain Dimensions::Lower ipz", "%d", g->pz);
    kv(f, "Local Domain Dimensions::Upper ipz", "%d", g->npz - 1);
    kv(f, "Local Domain Dimensions::nz", "%d", g->pz > 0 ? g->zu : g->nz);
    kv(f, "########## Problem Summary  ##########", "%s", "");
    kv(f, "Setup Information", "%s", "");
    kv(f, "Setup Information::Setup Time", "%g", t[TS_HPCG_T_SETUP]);
    kv(f, "Linear System Information", "%s", "");
    kv(f, "Linear System Information::Number of Equations", "%lld", (long long)r->gnrow);
    kv(f, "Linear System Information::Number of Nonzero Terms", "%lld", (long long)r->gnnz);
    kv(f, "Multigrid Information", "%s", "");
    kv(f, "Multigrid Information::Number of coarse grid levels", "%d", TS_HPCG_MG_LEVELS - 1);
    kv(f, "Multigrid Information::Coarse Grids", "%s", "");
    int lev = 1;
    for (const ts_hpcg_level *L = P->A->coarse; L; L = L->coarse, lev++) {
        kv(f, "Multigrid Information::Coarse Grids::Grid Level", "%d", lev);
        kv(f, "Multigrid Information::Coarse Grids::Number of Equations", "%lld", (long long)L->gnrow);
        kv(f, "Multigrid Information::Coarse Grids::Number of Nonzero Terms", "%lld", (long long)L->gnnz);
        kv(f, "Multigrid Information::Coarse Grids::Number of Presmoother Steps", "%d", 1);
        kv(f, "Multigrid Information::Coarse Grids::Number of Postsmoother Steps", "%d", 1);
    }
    kv(f, "########## Memory Use Summary  ##########", "%s", "");
    kv(f, "Memory Use Information", "%s", "");
    kv(f, "Memory Use Information::Total memory used for data (Gbytes)", "%g", r->mem_bytes / 1e9);
    kv(f, "Memory Use Information::Memory used for OptimizeProblem data (Gbytes)", "%g", r->opt_bytes / 1e9);
    kv(f, "Memory Use Information::Bytes per equation (Total memory / Number of Equations)", "%g",
       r->mem_bytes / (double)r->gnrow);
    // Per level, as HPCG 3.1 lists it: the problem's memory over all ranks (without the optimized
    // problem) split in rank 0's proportions between the fine level with the CG vectors and each
    // coarse level (its matrix, halo buffers and the multigrid vectors it holds for the next).
    const double problem = r->mem_bytes - r->opt_bytes, share = P->bytes ? problem / (double)P->bytes : 0.0;
    double coarse_bytes = 0.0;
    for (const ts_hpcg_level *L = P->A->coarse; L; L = L->coarse) coarse_bytes += (double)L->bytes;
    kv(f, "Memory Use Information::Memory used for linear system and CG (Gbytes)", "%g",
       ((double)P->bytes - coarse_bytes) * share / 1e9);
    kv(f, "Memory Use Information::Coarse Grids", "%s", "");
    lev = 1;
    for (const ts_hpcg_level *L = P->A->coarse; L; L = L->coarse, lev++) {
        kv(f, "Memory Use Information::Coarse Grids::Grid Level", "%d", lev);
        kv(f, "Memory Use Information::Coarse Grids::Memory used", "%g", (double)L->bytes * share / 1e9);
    }
    kv(f, "########## V&V Testing Summary  ##########", "%s", "");
    kv(f, "Spectral Convergence Tests", "%s", "");
    kv(f, "Spectral Convergence Tests::Result", "%s", r->testcg.count_fail ? "FAILED" : "PASSED");
    kv(f, "Spectral Convergence Tests::Unpreconditioned", "%s", "");
    kv(f, "Spectral Convergence Tests::Unpreconditioned::Maximum iteration count", "%d", r->testcg.niters_max_no_prec);
    kv(f, "Spectral Convergence Tests::Unpreconditioned::Expected iteration count", "%d", r->testcg.expected_no_prec);
    kv(f, "Spectral Convergence Tests::Preconditioned", "%s", "");
    kv(f, "Spectral Convergence Tests::Preconditioned::Maximum iteration count", "%d", r->testcg.niters_max_prec);
    kv(f, "Spectral Convergence Tests::Preconditioned::Expected iteration count", "%d", r->testcg.expected_prec);
    const char *sym = "Departure from Symmetry |x'Ay-y'Ax|/(2*||x||*||A||*||y||)/epsilon";
    char key[256];
    kv(f, sym, "%s", "");
    snprintf(key, sizeof key, "%s::Result", sym);
    kv(f, key, "%s", r->testsym.count_fail ? "FAILED" : "PASSED");
    snprintf(key, sizeof key, "%s::Departure for SpMV", sym);
    kv(f, key, "%g", r->testsym.depsym_spmv);
    snprintf(key, sizeof key, "%s::Departure for MG", sym);
    kv(f, key, "%g", r->testsym.depsym_mg);
    kv(f, "########## Iterations Summary  ##########", "%s", "");
    kv(f, "Iteration Count Information", "%s", "");
    kv(f, "Iteration Count Information::Result", "%s", r->tolerance_failures ? "FAILED" : "PASSED");
    kv(f, "Iteration Count Information::Reference CG iterations per set", "%d", TS_HPCG_REF_ITERS);
    kv(f, "Iteration Count Information::Optimized CG iterations per set", "%d", r->opt_iters);
    kv(f, "Iteration Count Information::Total number of reference iterations", "%d", TS_HPCG_REF_ITERS * r->cg_sets);
    kv(f, "Iteration Count Information::Total number of optimized iterations", "%d", r->opt_iters * r->cg_sets);
    kv(f, "########## Reproducibility Summary  ##########", "%s", "");
    kv(f, "Reproducibility Information", "%s", "");
    kv(f, "Reproducibility Information::Result", "%s", r->testnorms.pass ? "PASSED" : "FAILED");
    kv(f, "Reproducibility Information::Scaled residual mean", "%g", r->testnorms.mean);
    kv(f, "Reproducibility Information::Scaled residual variance", "%g", r->testnorms.variance);
    kv(f, "########## Performance Summary (times in sec) ##########", "%s", "");
    kv(f, "Benchmark Time Summary", "%s", "");
    kv(f, "Benchmark Time Summary::Optimization phase", "%g", t[TS_HPCG_T_OPT]);
    kv(f, "Benchmark Time Summary::DDOT", "%g", t[TS_HPCG_T_DDOT]);
    kv(f, "Benchmark Time Summary::WAXPBY", "%g", t[TS_HPCG_T_WAXPBY]);
    kv(f, "Benchmark Time Summary::SpMV", "%g", t[TS_HPCG_T_SPMV]);
    kv(f, "Benchmark Time Summary::MG", "%g", t[TS_HPCG_T_MG]);
    kv(f, "Benchmark Time Summary::Total", "%g", t[TS_HPCG_T_TOTAL]);
    kv(f, "Floating Point Operations Summary", "%s", "");
    kv(f, "Floating Point Operations Summary::Raw DDOT", "%g", c->ddot);
    kv(f, "Floating Point Operations Summary::Raw WAXPBY", "%g", c->waxpby);
    kv(f, "Floating Point Operations Summary::Raw SpMV", "%g", c->spmv);
    kv(f, "Floating Point Operations Summary::Raw MG", "%g", c->mg);
    kv(f, "Floating Point Operations Summary::Total", "%g", c->total);
    kv(f, "Floating Point Operations Summary::Total with convergence overhead", "%g", c->total_ref);
    const double rd = c->rd_ddot + c->rd_waxpby + c->rd_spmv + c->rd_mg;
    const double wr = c->wr_ddot + c->wr_waxpby + c->wr_spmv + c->wr_mg;
    const double T = t[TS_HPCG_T_TOTAL];
    const double Tover = T + r->cg_sets * (t[TS_HPCG_T_OPT] / 10.0 + t[TS_HPCG_T_SETUP] / 10.0);
    kv(f, "GB/s Summary", "%s", "");
    kv(f, "GB/s Summary::Raw Read B/W", "%g", rd / T / 1e9);
    kv(f, "GB/s Summary::Raw Write B/W", "%g", wr / T / 1e9);
    kv(f, "GB/s Summary::Raw Total B/W", "%g", (rd + wr) / T / 1e9);
    kv(f, "GB/s Summary::Total with convergence and optimization phase overhead", "%g",
       (rd + wr) * TS_HPCG_REF_ITERS / r->opt_iters / Tover / 1e9);
    kv(f, "GFLOP/s Summary", "%s", "");
    kv(f, "GFLOP/s Summary::Raw DDOT", "%g", r->gflops_ddot);
    kv(f, "GFLOP/s Summary::Raw WAXPBY", "%g", r->gflops_waxpby);
    kv(f, "GFLOP/s Summary::Raw SpMV", "%g", r->gflops_spmv);
    kv(f, "GFLOP/s Summary::Raw MG", "%g", r->gflops_mg);
    kv(f, "GFLOP/s Summary::Raw Total", "%g", r->gflops_raw);
    kv(f, "GFLOP/s Summary::Total with convergence overhead", "%g", c->total_ref / T / 1e9);
    kv(f, "GFLOP/s Summary::Total with convergence and optimization phase overhead", "%g", r->rating);
    kv(f, "User Optimization Overheads", "%s", "");
    kv(f, "User Optimization Overheads::Optimization phase time (sec)", "%g", t[TS_HPCG_T_OPT]);
    kv(f, "User Optimization Overheads::Optimization phase time vs reference SpMV+MG time", "%g",
       t[TS_HPCG_T_OPT] / t[TS_HPCG_T_REF]);
#if TS_HAVE_MPI
    kv(f, "DDOT Timing Variations", "%s", "");
    kv(f, "DDOT Timing Variations::Min DDOT MPI_Allreduce time", "%g", r->t4min);
    kv(f, "DDOT Timing Variations::Max DDOT MPI_Allreduce time", "%g", r->t4max);
    kv(f, "DDOT Timing Variations::Avg DDOT MPI_Allreduce time", "%g", r->t4avg);
#endif
    final_summary(f, o, r);
    own_section(f, o, r);
    if (fclose(f) != 0) TS_RAISE(TS_ERR_IO, "hpcg: writing the report '%s' failed", r->report_path);
    return 0;
}
