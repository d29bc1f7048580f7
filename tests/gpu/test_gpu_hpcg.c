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
static ts_hcomm g_comm;
static ts_hpcg_exec g_dev, g_host;

static int group_setup(void **state) {
    if (ts_hc_world(&g_comm) < 0) return -1;
    ts_hpcg_exec_host(&g_host);
    if (ts_cuda_device_count() == 0) {
        printf("# no CUDA device visible: the GPU tests skip\n");
        return 0;
    }
    ts_devset_opts o;
    if (ts_devset_opts_init(&o) < 0) return -1;
    o.backend = TS_BACKEND_CUDA;
    o.arena_bytes = ARENA_BYTES;
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

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_as_host),
        cmocka_unit_test(test_cg_and_validation),
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
