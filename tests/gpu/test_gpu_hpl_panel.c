// test_gpu_hpl_panel.c: our device panel factorization on a real GPU against its CPU twin and cuSOLVER (skips without a GPU).
//
// The CUDA panel (ts_lu_panel_factor: host recursion, cuBLAS DTRSM/GEMM, the cooperative leaf
// kernel) and the CPU twin (ts_lu_panel_host) run the same algorithm on the same random panel: the
// pivots must be identical and the factors equal within TOL * n * eps * max(1, max|F|) (two orders
// of the same sums; see tests/hpl/test_hpl_panel.c). cuSOLVER's dgetrf must choose the same pivots.
// Shapes cover one block and many, leaves staged in shared memory and leaves worked on in place
// (64-column leaves of 60000 rows do not fit), and every PFACT/RFACT.
// TESSERA_GPU_PANEL_TIMING=1 also prints the time of both engines on HPL's first panels (no bound).
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

#include "core/ts_error.h"
#include "core/ts_rng.h"
#include "core/ts_timer.h"
#include "device/ts_device.h"
#include "kernels/ts_kernels.h"
#include "kernels/ts_lu_kernels.h"

#define ARENA_BYTES ((size_t)4 << 30)
#define TOL 8.0

static ts_devset *g_set;
static ts_device *g_dev;
static ts_stream *g_st;
static ts_lu_panel *g_pn;
static ts_lu_solver *g_sv;

#define CHECK_OK(expr)                                                                             \
    do {                                                                                           \
        int rc_ = (expr);                                                                          \
        if (rc_ != 0) fail_msg("%s = %d: %s", #expr, rc_, ts_error_string());                      \
    } while (0)

#define NEED_GPU()                                                                                 \
    do {                                                                                           \
        if (!g_set) skip();                                                                        \
    } while (0)

static int group_setup(void **state) {
    if (ts_cuda_device_count() == 0) {
        printf("# no CUDA device visible: the GPU tests skip\n");
        return 0;
    }
    ts_devset_opts o;
    if (ts_devset_opts_init(&o) < 0) return -1;
    o.backend = TS_BACKEND_CUDA;
    o.arena_bytes = ARENA_BYTES;
    o.max_devices = 1;
    if (ts_devset_open(&o, &g_set) < 0) {
        printf("# ts_devset_open: %s\n", ts_error_string());
        return -1;
    }
    g_dev = ts_devset_device(g_set, 0);
    if (ts_stream_create(g_dev, &g_st) < 0 || ts_lu_panel_create(g_st, TS_ENGINE_AUTO, 100000, &g_pn) < 0 ||
        ts_lu_solver_create(g_st, 100000, 1024, &g_sv) < 0) {
        printf("# setup: %s\n", ts_error_string());
        return -1;
    }
    return 0;
}

static int group_teardown(void **state) {
    if (!g_set) return 0;
    ts_lu_solver_destroy(g_sv);
    ts_lu_panel_destroy(g_pn);
    ts_stream_destroy(g_st);
    ts_devset_close(g_set);
    g_set = NULL;
    return 0;
}

static double *random_panel(uint64_t key, int64_t m, int64_t n, int64_t lda) {
    double *A = malloc(sizeof(double) * (size_t)(lda * n));
    assert_non_null(A);
    for (int64_t c = 0; c < n; c++) {
        ts_fill_uniform_d(key * 1000003u + (uint64_t)c, A + c * lda, m);
        for (int64_t i = m; i < lda; i++) A[i + c * lda] = 1e300;
    }
    return A;
}

static double scaled_diff(int64_t m, int64_t n, const double *F, const double *R, int64_t lda) {
    double d = 0.0, big = 1.0;
    for (int64_t c = 0; c < n; c++)
        for (int64_t i = 0; i < m; i++) {
            double e = fabs(F[i + c * lda] - R[i + c * lda]);
            if (!(e <= d)) d = e;
            if (fabs(R[i + c * lda]) > big) big = fabs(R[i + c * lda]);
        }
    return d / ((double)n * DBL_EPSILON * big);
}

typedef enum { ENG_TESSERA, ENG_CUSOLVER } engine;

// Factors the host panel H (m x n, lda) on the GPU; F gets the factors, piv the n pivots + info.
static double gpu_factor(engine e, const ts_lu_panel_algo *a, int64_t m, int64_t n, const double *H, int64_t lda,
                         double *F, int *piv) {
    double *X = NULL;
    int *dp = NULL;
    size_t bytes = sizeof(double) * (size_t)(lda * n);
    CHECK_OK(ts_dmalloc(g_dev, bytes, (void **)&X));
    CHECK_OK(ts_dmalloc(g_dev, sizeof(int) * (size_t)(n + 1), (void **)&dp));
    CHECK_OK(ts_copy_async(g_st, TS_COPY_H2D, X, H, bytes));
    CHECK_OK(ts_stream_sync(g_st));
    double t = ts_now();
    if (e == ENG_TESSERA) CHECK_OK(ts_lu_panel_factor(g_st, g_pn, a, m, n, X, lda, dp, dp + n));
    else CHECK_OK(ts_lu_dgetrf(g_st, g_sv, m, n, X, lda, dp, dp + n));
    CHECK_OK(ts_stream_sync(g_st));
    t = ts_now() - t;
    CHECK_OK(ts_copy_async(g_st, TS_COPY_D2H, F, X, bytes));
    CHECK_OK(ts_copy_async(g_st, TS_COPY_D2H, piv, dp, sizeof(int) * (size_t)(n + 1)));
    CHECK_OK(ts_stream_sync(g_st));
    CHECK_OK(ts_dfree(g_dev, X));
    CHECK_OK(ts_dfree(g_dev, dp));
    return t;
}

static void compare(const char *what, const ts_lu_panel_algo *a, int64_t m, int64_t n, int64_t lda, const double *F,
                    const int *piv, const double *R, const int *rpiv, int rinfo) {
    int64_t bad = -1;
    for (int64_t k = 0; k < n && bad < 0; k++)
        if (piv[k] != rpiv[k]) bad = k;
    if (bad >= 0)
        fail_msg("%s m=%lld n=%lld pfact=%d rfact=%d nbmin=%d ndiv=%d: pivot %lld is %d, the twin's %d", what,
                 (long long)m, (long long)n, a->pfact, a->rfact, a->nbmin, a->ndiv, (long long)bad, piv[bad],
                 rpiv[bad]);
    if (piv[n] != rinfo)
        fail_msg("%s m=%lld n=%lld: info %d, the twin's %d", what, (long long)m, (long long)n, piv[n], rinfo);
    double e = scaled_diff(m, n, F, R, lda);
    printf("# %s m=%lld n=%lld pfact=%d rfact=%d nbmin=%d ndiv=%d: pivots equal, scaled difference %.3g\n", what,
           (long long)m, (long long)n, a->pfact, a->rfact, a->nbmin, a->ndiv, e);
    if (!(e <= TOL)) fail_msg("%s: scaled difference %g > %g", what, e, TOL);
}

static void run_shape(const ts_lu_panel_algo *a, int64_t m, int64_t n, uint64_t key, int zero_col, int with_cusolver) {
    int64_t lda = m + 7;
    double *H = random_panel(key, m, n, lda);
    if (zero_col >= 0)
        for (int64_t i = 0; i < m; i++) H[i + zero_col * lda] = 0.0;
    size_t bytes = sizeof(double) * (size_t)(lda * n);
    double *R = malloc(bytes), *F = malloc(bytes);
    int *rp = malloc(sizeof(int) * (size_t)(n + 1)), *gp = malloc(sizeof(int) * (size_t)(n + 1));
    assert_true(R && F && rp && gp);
    memcpy(R, H, bytes);
    int rinfo = -1;
    ts_lu_panel_host(a, m, n, R, lda, rp, &rinfo);
    gpu_factor(ENG_TESSERA, a, m, n, H, lda, F, gp);
    compare("tessera/twin", a, m, n, lda, F, gp, R, rp, rinfo);
    for (int64_t c = 0; c < n; c++) // rows past m untouched
        for (int64_t i = m; i < lda; i++) assert_true(F[i + c * lda] == 1e300);
    if (with_cusolver) {
        gpu_factor(ENG_CUSOLVER, a, m, n, H, lda, F, gp);
        compare("cusolver/twin", a, m, n, lda, F, gp, R, rp, rinfo);
    }
    free(H);
    free(R);
    free(F);
    free(rp);
    free(gp);
}

// One block (m <= 256), several blocks, leaves in shared memory; every PFACT x RFACT.
static void test_small_and_medium(void **state) {
    NEED_GPU();
    static const int64_t shapes[][2] = {{1, 1}, {5, 3}, {64, 16}, {200, 64}, {257, 96}, {1000, 128}, {5000, 256}};
    uint64_t key = 1;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int pf = 0; pf < 3; pf++)
            for (int rf = 0; rf < 3; rf++) {
                static const int nbmins[] = {1, 4, 16, 32, 64};
                ts_lu_panel_algo a = {pf, rf, nbmins[(s + pf + rf) % 5], 2 + (int)((s + rf) % 3)};
                run_shape(&a, shapes[s][0], shapes[s][1], key++, -1, pf == 2 && rf == 1);
            }
}

// HPL-sized panels: 32-column leaves staged in shared memory over 132 blocks; 64-column leaves too
// large for it (worked on in place).
static void test_tall(void **state) {
    NEED_GPU();
    ts_lu_panel_algo a32 = {2, 1, 32, 2};
    run_shape(&a32, 80000, 256, 500, -1, 1);
    for (int pf = 0; pf < 3; pf++) {
        ts_lu_panel_algo a64 = {pf, 2, 64, 2};
        run_shape(&a64, 60000, 128, 600 + (uint64_t)pf, -1, pf == 2);
    }
    ts_lu_panel_algo a16 = {1, 0, 16, 4};
    run_shape(&a16, 30001, 192, 700, -1, 0);
}

// Zero columns: info is the first (1-based), as the twin and cuSOLVER say.
// On a stream confined to 16 SMs (a green context, as HPL's TESSERA_HPL_PANEL_SMS makes it): the
// cooperative leaf's grid must fit those SMs (the grid of a whole-device stream would not be
// co-resident), and cuSOLVER runs there too. Skipped where the driver has no green contexts.
static void test_confined_stream(void **state) {
    NEED_GPU();
    ts_stream *few = NULL, *whole = g_st;
    int rc = ts_stream_create_sms(g_dev, 1, 16, &few);
    if (rc == TS_ERR_UNSUPPORTED) {
        printf("# %s: skipped\n", ts_error_string());
        skip();
    }
    CHECK_OK(rc);
    printf("# panel stream confined to %d SMs\n", ts_stream_sms(few));
    g_st = few;
    ts_lu_panel_algo a32 = {2, 1, 32, 2}, a16 = {0, 2, 16, 3};
    run_shape(&a32, 30000, 256, 700, -1, 1);
    run_shape(&a16, 3000, 64, 701, -1, 0);
    g_st = whole;
    CHECK_OK(ts_stream_destroy(few));
}

static void test_zero_pivot(void **state) {
    NEED_GPU();
    for (int pf = 0; pf < 3; pf++) {
        ts_lu_panel_algo a = {pf, (pf + 1) % 3, 8, 2};
        run_shape(&a, 3000, 64, 800 + (uint64_t)pf, 37, 1);
    }
}

// Time of both engines on an HPL panel (information only, no bound).
static void test_timing(void **state) {
    NEED_GPU();
    const char *v = getenv("TESSERA_GPU_PANEL_TIMING");
    if (!v || strcmp(v, "1") != 0) skip();
    static const int64_t shapes[][2] = {{80000, 1024}, {32768, 1024}, {8192, 1024}};
    static const int cfg[][3] = {{2, 1, 16}, {2, 1, 32}, {2, 1, 64}, {2, 2, 32}, {1, 1, 32}, {0, 1, 32}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int64_t m = shapes[s][0], n = shapes[s][1], lda = m;
        double *H = random_panel(900 + s, m, n, lda);
        double *F = malloc(sizeof(double) * (size_t)(lda * n));
        int *gp = malloc(sizeof(int) * (size_t)(n + 1));
        assert_true(F && gp);
        ts_lu_panel_algo a = {2, 1, 32, 2};
        gpu_factor(ENG_CUSOLVER, &a, m, n, H, lda, F, gp); // warm
        double tc = 1e9;
        for (int r = 0; r < 2; r++) {
            double t = gpu_factor(ENG_CUSOLVER, &a, m, n, H, lda, F, gp);
            if (t < tc) tc = t;
        }
        double fl = (double)m * n * n - (double)n * n * n / 3.0;
        printf("# timing m=%lld n=%lld: cusolver %.3f ms (%.2f TFLOP/s)\n", (long long)m, (long long)n, tc * 1e3,
               fl / tc / 1e12);
        for (size_t c = 0; c < sizeof cfg / sizeof cfg[0]; c++) {
            ts_lu_panel_algo t = {cfg[c][0], cfg[c][1], cfg[c][2], 2};
            gpu_factor(ENG_TESSERA, &t, m, n, H, lda, F, gp);
            double tt = 1e9;
            for (int r = 0; r < 2; r++) {
                double x = gpu_factor(ENG_TESSERA, &t, m, n, H, lda, F, gp);
                if (x < tt) tt = x;
            }
            printf("# timing m=%lld n=%lld: tessera pfact=%d rfact=%d nbmin=%d ndiv=2 %.3f ms (%.2f TFLOP/s, "
                   "%.2fx cusolver's time)\n", (long long)m, (long long)n, t.pfact, t.rfact, t.nbmin, tt * 1e3,
                   fl / tt / 1e12, tt / tc);
        }
        free(H);
        free(F);
        free(gp);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_and_medium),
        cmocka_unit_test(test_tall),
        cmocka_unit_test(test_zero_pivot),
        cmocka_unit_test(test_confined_stream),
        cmocka_unit_test(test_timing),
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
