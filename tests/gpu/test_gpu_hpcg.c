// test_gpu_hpcg.c: HPCG's optimized problem and kernels on a real GPU against the host build (skips without a GPU).
//
// The GPU builds the optimized problem (generation, JPL colours, CUB colour sort, sliced ELL,
// restriction pairs, halo lists) with the CUDA kernels; it must be identical, bit for bit, to the
// host build (tests/hpcg/hpcg_opt_check.h). SpMV, both SYMGS forms, WAXPBY and DDOT on the same
// random vectors must agree within KERNEL_TOL = 64 eps relative to the largest value (DDOT: to
// the sum of |x_i y_i|); the V-cycle within MG_TOL (its four levels of sweeps carry the FMA
// rounding differences along). Grids: powers of 2, a non-power-of-2 grid (colours split the
// coarse points) and a rank of a 2 x 2 x 2 process grid (halo columns, exchanged as zeros here).
// Then CG, TestSymmetry and TestCG run on the GPU.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "ts_config.h"

#if TS_HAVE_CUDA

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../hpcg/hpcg_opt_check.h"
#include "algorithms/hpcg/ts_hpcg.h"
#include "core/ts_timer.h"
#include "device/ts_device.h"

#define ARENA_BYTES ((size_t)4 << 30)

static ts_devset *g_set;
static ts_comm g_comm;
static ts_hpcg_exec g_dev, g_host;

static int group_setup(void **state) {
    if (ts_comm_world(&g_comm) < 0) return -1;
    ts_hpcg_exec_host(&g_host);
    if (ts_cuda_device_count() == 0) {
        printf("# no CUDA device visible: the GPU tests skip\n");
        return 0;
    }
    ts_devset_opts o;
    if (ts_devset_opts_init(&o) < 0) return -1;
    o.backend = TS_BACKEND_CUDA;
    // the profile (TESSERA_GPU_HPCG_PROFILE) builds a full-size problem: the default arena then
    if (!getenv("TESSERA_GPU_HPCG_PROFILE")) o.arena_bytes = ARENA_BYTES;
    o.max_devices = 1;
    if (ts_devset_open(&o, &g_set) < 0 || ts_hpcg_exec_device(&g_dev, g_set, ts_devset_device(g_set, 0)) < 0) {
        printf("# setup: %s\n", ts_error_string());
        return -1;
    }
    return 0;
}

static int group_teardown(void **state) {
    if (!g_set) return 0;
    ts_hpcg_exec_fini(&g_dev);
    ts_devset_close(g_set);
    g_set = NULL;
    return 0;
}

static ts_hpcg_opt *build(const ts_hpcg_geom *g, const ts_hpcg_exec *X, double *seconds) {
    ts_hpcg_opt *O = NULL;
    double t = ts_now();
    OK(ts_hpcg_opt_setup(&g_comm, g, TS_HPCG_MG_LEVELS, X, &O));
    OK(ts_hpcg_opt_optimize(O));
    if (seconds) *seconds = ts_now() - t;
    return O;
}

static void test_same_as_host(void **state) {
    if (!g_set) skip();
    const int cases[][8] = {
        // size, rank, nx, ny, nz, npx, npy, npz
        {1, 0, 32, 32, 32, 1, 1, 1},
        {1, 0, 64, 64, 64, 1, 1, 1},
        {1, 0, 24, 16, 32, 1, 1, 1},
        {8, 5, 16, 16, 16, 2, 2, 2},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const int *c = cases[k];
        ts_hpcg_geom g;
        OK(ts_hpcg_geom_init(&g, c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]));
        double th, td;
        ts_hpcg_opt *H = build(&g, &g_host, &th), *D = build(&g, &g_dev, &td);
        printf("# %d x %d x %d (rank %d of %d): %d colours, built in %.3f s (host) and %.3f s (GPU)\n", g.nx, g.ny,
               g.nz, g.rank, g.size, D->A->ncolors, th, td);
        hc_same_problem(H, D);
        hc_same_kernels(H, D, 1000 + k);
        ts_hpcg_opt_destroy(H);
        ts_hpcg_opt_destroy(D);
    }
}

// CG on the GPU solves A x = b (x = 1), and the validation tests pass there.
static void test_cg_and_validation(void **state) {
    if (!g_set) skip();
    ts_hpcg_geom g;
    OK(ts_hpcg_geom_init(&g, 1, 0, 32, 32, 32, 0, 0, 0));
    ts_hpcg_opt *D = build(&g, &g_dev, NULL);
    ts_hpcg_impl I;
    ts_hpcg_opt_impl(D, &I);
    ts_hpcg_cg_result cr;
    OK(I.ops->zero(&I, I.x));
    OK(ts_hpcg_cg(&I, I.b, I.x, 100, 1e-10, 1, NULL, &cr));
    assert_true(cr.niters > 5 && cr.niters < 30);
    double *x = malloc(sizeof(double) * (size_t)I.nrow), err = 0;
    OK(I.ops->get(&I, x, I.x));
    for (int32_t i = 0; i < I.nrow; i++) err = fmax(err, fabs(x[i] - 1.0));
    printf("# CG on the GPU: %d iterations, max |x - 1| = %.3g\n", cr.niters, err);
    assert_true(err < 1e-7);
    free(x);
    ts_hpcg_testsym ts;
    OK(ts_hpcg_test_symmetry(&I, &ts));
    assert_int_equal(ts.count_fail, 0);
    assert_true(ts.residual < 1e-12);
    ts_hpcg_testcg tc;
    OK(ts_hpcg_test_cg(&I, &g, &tc));
    assert_int_equal(tc.count_fail, 0);
    ts_hpcg_opt_destroy(D);
}

// The V-cycle as a CUDA graph (captured from the executor's stream, replayed per call): CG's
// residual and solution after 50 iterations and its iterations to 1e-9 are those of the V-cycle
// launched kernel by kernel, bit for bit, and TestSymmetry and TestCG pass through the graphs.
static void test_mg_graph(void **state) {
    if (!g_set) skip();
    ts_hpcg_geom g;
    OK(ts_hpcg_geom_init(&g, 1, 0, 64, 64, 64, 0, 0, 0));
    ts_hpcg_opt *D = build(&g, &g_dev, NULL);
    ts_hpcg_impl I;
    ts_hpcg_opt_impl(D, &I);
    const size_t bytes = sizeof(double) * (size_t)I.nrow;
    double *x[2] = {malloc(bytes), malloc(bytes)}, normr[2], tolr[2];
    int iters[2];
    for (int graph = 0; graph <= 1; graph++) {
        D->graph = graph; // as TESSERA_HPCG_GRAPH=1 on one rank
        ts_hpcg_cg_result cr;
        OK(I.ops->zero(&I, I.x));
        OK(ts_hpcg_cg(&I, I.b, I.x, 50, 0.0, 1, NULL, &cr));
        normr[graph] = cr.normr;
        OK(I.ops->get(&I, x[graph], I.x));
        OK(I.ops->zero(&I, I.x));
        OK(ts_hpcg_cg(&I, I.b, I.x, 500, 1e-9, 1, NULL, &cr));
        iters[graph] = cr.niters;
        tolr[graph] = cr.normr;
    }
    printf("# CG at 64^3: residual %.17g after 50 iterations, %d iterations to 1e-9; graphs captured: %ld\n", normr[1],
           iters[1], D->mg_captures);
    assert_int_equal(D->mg_captures, 1);
    assert_true(normr[0] == normr[1] && tolr[0] == tolr[1]);
    assert_int_equal(iters[0], iters[1]);
    assert_memory_equal(x[0], x[1], bytes);
    ts_hpcg_testsym ts;
    OK(ts_hpcg_test_symmetry(&I, &ts));
    assert_int_equal(ts.count_fail, 0);
    ts_hpcg_testcg tc;
    OK(ts_hpcg_test_cg(&I, &g, &tc));
    assert_int_equal(tc.count_fail, 0);
    assert_int_equal(D->mg_captures, 3);
    free(x[0]);
    free(x[1]);
    ts_hpcg_opt_destroy(D);
}

// Milliseconds per call of fn over reps calls, timed with events on the executor's stream.
typedef int (*piece_fn)(ts_hpcg_opt *O, ts_hpcg_olevel *L, double *x, double *y);
static double time_piece(ts_hpcg_opt *O, ts_hpcg_olevel *L, piece_fn fn, double *x, double *y, int reps) {
    ts_event *e0, *e1;
    OK(ts_event_create(O->X.dev, &e0));
    OK(ts_event_create(O->X.dev, &e1));
    OK(fn(O, L, x, y)); // warm-up
    OK(ts_event_record(e0, O->X.st));
    for (int i = 0; i < reps; i++) OK(fn(O, L, x, y));
    OK(ts_event_record(e1, O->X.st));
    OK(ts_event_sync(e1));
    double ms = 0;
    OK(ts_event_elapsed_ms(e0, e1, &ms));
    ts_event_destroy(e0);
    ts_event_destroy(e1);
    return ms / reps;
}
static int p_pre(ts_hpcg_opt *O, ts_hpcg_olevel *L, double *x, double *r) { return ts_hpcg_opt_symgs(O, L, r, x, 1); }
static int p_post(ts_hpcg_opt *O, ts_hpcg_olevel *L, double *x, double *r) { return ts_hpcg_opt_symgs(O, L, r, x, 0); }
static int p_spmv(ts_hpcg_opt *O, ts_hpcg_olevel *L, double *x, double *y) { return ts_hpcg_opt_spmv(O, L, x, y); }
static int p_mg(ts_hpcg_opt *O, ts_hpcg_olevel *L, double *x, double *r) { return ts_hpcg_opt_mg(O, L, r, x); }
static int p_mg_graph(ts_hpcg_opt *O, ts_hpcg_olevel *L, double *x, double *r) { return ts_hpcg_opt_mg_graph(O, r, x); }
static int p_restrict(ts_hpcg_opt *O, ts_hpcg_olevel *L, double *x, double *r) {
    ts_hpcg_xk_restrict a = {L->coarse->nrow, L->nblk, L->fr, L->cq, L->xblk, r, L->diag, x, L->rc};
    return TS_HPCG_XRUN(&O->X, restrict, a);
}
static int p_prolong(ts_hpcg_opt *O, ts_hpcg_olevel *L, double *x, double *r) {
    ts_hpcg_xk_prolong a = {L->coarse->nrow, L->fr, L->cq, L->xc, x};
    return TS_HPCG_XRUN(&O->X, prolong, a);
}

// TESSERA_GPU_HPCG_PROFILE=N: the pieces of one V-cycle per level at N^3 (no bound; a record of
// where the time goes), and one CG iteration against the sum of its kernels.
static void test_profile(void **state) {
    const char *e = getenv("TESSERA_GPU_HPCG_PROFILE");
    if (!g_set || !e) skip();
    const int n = atoi(e);
    ts_hpcg_geom g;
    OK(ts_hpcg_geom_init(&g, 1, 0, n, n, n, 0, 0, 0));
    ts_hpcg_opt *D = build(&g, &g_dev, NULL);
    ts_hpcg_impl I;
    ts_hpcg_opt_impl(D, &I);
    double total = 0;
    for (ts_hpcg_olevel *L = D->A; L; L = L->coarse) {
        double *xl = NULL, *rl = NULL; // this level's x, and a right-hand side (the start of b)
        OK(ts_hpcg_xalloc(&D->X, sizeof(double) * (size_t)L->ncol, (void **)&xl));
        OK(ts_hpcg_xalloc(&D->X, sizeof(double) * (size_t)L->ncol, (void **)&rl));
        OK(ts_hpcg_xmemset(&D->X, xl, 0, sizeof(double) * (size_t)L->ncol));
        OK(ts_hpcg_xcopy(&D->X, TS_COPY_D2D, rl, D->b, sizeof(double) * (size_t)L->nrow));
        const double nnz_b = 12.0 * (double)(L->nlower + L->nupper);
        double pre = time_piece(D, L, p_pre, xl, rl, 20), post = time_piece(D, L, p_post, xl, rl, 20);
        printf("# level %d x %d x %d: pre %.3f ms (%.0f GB/s matrix), post %.3f ms (%.0f GB/s matrix)", L->g.nx,
               L->g.ny, L->g.nz, pre, nnz_b / pre / 1e6, post, 1.5 * nnz_b / post / 1e6);
        if (L->coarse) {
            double rs = time_piece(D, L, p_restrict, xl, rl, 20), pr = time_piece(D, L, p_prolong, xl, rl, 20);
            printf(", restrict %.3f ms, prolong %.3f ms", rs, pr);
            total += rs + pr;
        }
        if (L == D->A) {
            const double sp = time_piece(D, L, p_spmv, xl, rl, 20);
            printf(", SpMV %.3f ms (%.0f GB/s matrix)", sp, nnz_b / sp / 1e6);
        }
        printf("\n");
        total += pre + post;
        ts_hpcg_xfree(&D->X, xl);
        ts_hpcg_xfree(&D->X, rl);
    }
    double mg = time_piece(D, D->A, p_mg, D->z, D->b, 20);
    double mgg = time_piece(D, D->A, p_mg_graph, D->z, D->b, 20); // the first call captures
    printf("# V-cycle %.3f ms (as a graph %.3f ms); its pieces add up to %.3f ms\n", mg, mgg, total);
    ts_hpcg_cg_result cr;
    for (int graph = 0; graph <= 1; graph++) { // CG with the V-cycle launched kernel by kernel, then as a graph
        double times[TS_HPCG_NTIMES] = {0};
        D->graph = graph;
        OK(I.ops->zero(&I, I.x));
        OK(ts_hpcg_cg(&I, I.b, I.x, 20, 0.0, 1, times, &cr));
        printf("# CG%s: %.3f ms per iteration (MG %.3f, SpMV %.3f, DDOT %.3f, WAXPBY %.3f)\n",
               graph ? " (V-cycle as a graph)" : "", times[TS_HPCG_T_TOTAL] / 20 * 1e3, times[TS_HPCG_T_MG] / 20 * 1e3,
               times[TS_HPCG_T_SPMV] / 20 * 1e3, times[TS_HPCG_T_DDOT] / 20 * 1e3, times[TS_HPCG_T_WAXPBY] / 20 * 1e3);
    }
    D->graph = 0;
    // Iterations to a given residual drop (TESSERA_GPU_HPCG_DROP), e.g. the reference's.
    const char *drop = getenv("TESSERA_GPU_HPCG_DROP");
    if (drop) {
        OK(I.ops->zero(&I, I.x));
        OK(ts_hpcg_cg(&I, I.b, I.x, 500, atof(drop), 1, NULL, &cr));
        printf("# CG to the drop %s: %d iterations\n", drop, cr.niters);
    }
    ts_hpcg_opt_destroy(D);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_as_host),
        cmocka_unit_test(test_cg_and_validation),
        cmocka_unit_test(test_mg_graph),
        cmocka_unit_test(test_profile),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}

#else // this build has no CUDA backend: one test that says so and skips

static void test_no_cuda_build(void **state) { skip(); }

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_no_cuda_build)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#endif
