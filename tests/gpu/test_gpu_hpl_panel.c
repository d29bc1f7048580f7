// test_gpu_hpl_panel.c: our device panel factorization on a real GPU against its CPU twin and cuSOLVER (skips without a GPU).
//
// The CUDA panel (ts_lu_panel_factor: host recursion, cuBLAS DTRSM/GEMM, the cooperative leaf
// kernel) and the CPU twin (ts_lu_panel_host) run the same algorithm on the same random panel: the
// pivots must be identical and the factors equal within TOL * n * eps * max(1, max|F|) (two orders
// of the same sums; see tests/hpl/test_hpl_panel.c). cuSOLVER's dgetrf must choose the same pivots.
// Shapes cover one block and many, leaves staged in shared memory and leaves worked on in place
// (64-column leaves of 60000 rows do not fit), every PFACT/RFACT, and the leaf grid capped.
// TESSERA_GPU_PANEL_TIMING=1 also prints the time of both engines on HPL's first panels (no bound).
// One panel's row interchanges in one pass (ts_lu_swap_rows, CUDA) equal the pivots applied one by
// one, exactly; its time against the split form (pack + two unpacks) on the first panel's shape of
// the N = 116736, NB = 1024 Linpack is printed (no bound).
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
#include "../hpl/swap_plan_util.h"

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
                ts_lu_panel_algo a = {pf, rf, nbmins[(s + pf + rf) % 5], 2 + (int)((s + rf) % 3), 0};
                run_shape(&a, shapes[s][0], shapes[s][1], key++, -1, pf == 2 && rf == 1);
            }
}

// HPL-sized panels: 32-column leaves staged in shared memory over 132 blocks; 64-column leaves too
// large for it (worked on in place).
static void test_tall(void **state) {
    NEED_GPU();
    ts_lu_panel_algo a32 = {2, 1, 32, 2, 0};
    run_shape(&a32, 80000, 256, 500, -1, 1);
    for (int pf = 0; pf < 3; pf++) {
        ts_lu_panel_algo a64 = {pf, 2, 64, 2, 0};
        run_shape(&a64, 60000, 128, 600 + (uint64_t)pf, -1, pf == 2);
    }
    ts_lu_panel_algo a16 = {1, 0, 16, 4, 0};
    run_shape(&a16, 30001, 192, 700, -1, 0);
}

// The leaf grid capped (TESSERA_LU_LEAF_GRID): few blocks of many rows, in place (16 columns of
// 10000 rows a block do not fit shared memory) and staged (8 columns of 1250), and one block.
static void test_leaf_grid(void **state) {
    NEED_GPU();
    for (int pf = 0; pf < 3; pf++) {
        ts_lu_panel_algo a = {pf, 1, 16, 2, 8};
        run_shape(&a, 80000, 128, 750 + (uint64_t)pf, -1, pf == 2);
    }
    ts_lu_panel_algo s64 = {2, 1, 8, 2, 64};
    run_shape(&s64, 80000, 64, 760, -1, 0);
    ts_lu_panel_algo one = {0, 2, 32, 2, 1};
    run_shape(&one, 20001, 96, 770, 40, 1);
}

// Zero columns: info is the first (1-based), as the twin and cuSOLVER say.
static void test_zero_pivot(void **state) {
    NEED_GPU();
    for (int pf = 0; pf < 3; pf++) {
        ts_lu_panel_algo a = {pf, (pf + 1) % 3, 8, 2, 0};
        run_shape(&a, 3000, 64, 800 + (uint64_t)pf, 37, 1);
    }
}

// Time of both engines on an HPL panel (information only, no bound).
static void test_timing(void **state) {
    NEED_GPU();
    const char *v = getenv("TESSERA_GPU_PANEL_TIMING");
    if (!v || strcmp(v, "1") != 0) skip();
    static const int64_t shapes[][2] = {{80000, 1024}, {32768, 1024}, {8192, 1024}};
    static const int cfg[][4] = {{2, 1, 16, 0}, {2, 1, 32, 0}, {2, 1, 64, 0}, {2, 2, 32, 0}, {1, 1, 32, 0},
                                 {0, 1, 32, 0}, {2, 1, 16, 16}, {0, 1, 16, 16}, {2, 1, 8, 16}, {0, 1, 8, 32}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int64_t m = shapes[s][0], n = shapes[s][1], lda = m;
        double *H = random_panel(900 + s, m, n, lda);
        double *F = malloc(sizeof(double) * (size_t)(lda * n));
        int *gp = malloc(sizeof(int) * (size_t)(n + 1));
        assert_true(F && gp);
        ts_lu_panel_algo a = {2, 1, 32, 2, 0};
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
            ts_lu_panel_algo t = {cfg[c][0], cfg[c][1], cfg[c][2], 2, cfg[c][3]};
            gpu_factor(ENG_TESSERA, &t, m, n, H, lda, F, gp);
            double tt = 1e9;
            for (int r = 0; r < 2; r++) {
                double x = gpu_factor(ENG_TESSERA, &t, m, n, H, lda, F, gp);
                if (x < tt) tt = x;
            }
            printf("# timing m=%lld n=%lld: tessera pfact=%d rfact=%d nbmin=%d ndiv=2 grid=%d %.3f ms (%.2f TFLOP/s, "
                   "%.2fx cusolver's time)\n", (long long)m, (long long)n, t.pfact, t.rfact, t.nbmin, t.grid, tt * 1e3,
                   fl / tt / 1e12, tt / tc);
        }
        free(H);
        free(F);
        free(gp);
    }
}

// Uploads the plan's index arrays (pk, ub, al, ab, then the identity of jb for the split form's U).
static int64_t *upload_plan(const swap_plan *pl) {
    int64_t n = pl->npack + 2 * pl->jb + 2 * pl->nown;
    int64_t *h = malloc(sizeof(int64_t) * (size_t)n), *x = NULL;
    assert_non_null(h);
    memcpy(h, pl->pk, sizeof(int64_t) * (size_t)pl->npack);
    memcpy(h + pl->npack, pl->ub, sizeof(int64_t) * (size_t)pl->jb);
    memcpy(h + pl->npack + pl->jb, pl->al, sizeof(int64_t) * (size_t)pl->nown);
    memcpy(h + pl->npack + pl->jb + pl->nown, pl->ab, sizeof(int64_t) * (size_t)pl->nown);
    for (int64_t i = 0; i < pl->jb; i++) h[pl->npack + pl->jb + 2 * pl->nown + i] = i;
    CHECK_OK(ts_dmalloc(g_dev, sizeof(int64_t) * (size_t)n, (void **)&x));
    CHECK_OK(ts_copy_async(g_st, TS_COPY_H2D, x, h, sizeof(int64_t) * (size_t)n));
    CHECK_OK(ts_stream_sync(g_st));
    free(h);
    return x;
}

static void test_swap_rows(void **state) {
    NEED_GPU();
    static const int64_t cases[][3] = {{20000, 512, 1}, {20000, 512, 37}, {20003, 512, 700}, {60000, 1024, 300}, {3000, 64, 129}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int64_t mp = cases[k][0], jb = cases[k][1], nc = cases[k][2], lda = mp + 3, ldu = jb;
        swap_plan pl;
        assert_int_equal(swap_plan_make(77 + k, mp, jb, 1, &pl), 0);
        double *A = random_panel(900 + k, mp, nc, lda);
        double *R = malloc(sizeof(double) * (size_t)(lda * nc)), *RU = malloc(sizeof(double) * (size_t)(ldu * nc));
        double *B = malloc(sizeof(double) * (size_t)(lda * nc)), *BU = malloc(sizeof(double) * (size_t)(ldu * nc));
        assert_true(R && RU && B && BU);
        swap_plan_ref(&pl, A, lda, nc, R, RU, ldu);
        size_t ab = sizeof(double) * (size_t)(lda * nc), ub = sizeof(double) * (size_t)(ldu * nc);
        double *X = NULL, *XU = NULL;
        CHECK_OK(ts_dmalloc(g_dev, ab, (void **)&X));
        CHECK_OK(ts_dmalloc(g_dev, ub, (void **)&XU));
        int64_t *xi = upload_plan(&pl);
        CHECK_OK(ts_copy_async(g_st, TS_COPY_H2D, X, A, ab));
        CHECK_OK(ts_memset_async(g_st, XU, 0xff, ub)); // poison: NaN
        CHECK_OK(ts_lu_swap_rows(g_st, X, lda, xi, pl.npack, xi + pl.npack, jb, XU, ldu, xi + pl.npack + jb,
                                 xi + pl.npack + jb + pl.nown, pl.nown, nc));
        CHECK_OK(ts_copy_async(g_st, TS_COPY_D2H, B, X, ab));
        CHECK_OK(ts_copy_async(g_st, TS_COPY_D2H, BU, XU, ub));
        CHECK_OK(ts_stream_sync(g_st));
        for (int64_t c = 0; c < nc; c++) {
            for (int64_t i = 0; i < jb; i++)
                if (!(BU[i + c * ldu] == RU[i + c * ldu]))
                    fail_msg("mp %lld jb %lld nc %lld: U(%lld, %lld) = %g, dlaswp %g", (long long)mp, (long long)jb,
                             (long long)nc, (long long)i, (long long)c, BU[i + c * ldu], RU[i + c * ldu]);
            for (int64_t i = 0; i < lda; i++) {
                double want = i < jb || i >= mp ? A[i + c * lda] : R[i + c * lda];
                if (!(B[i + c * lda] == want))
                    fail_msg("mp %lld jb %lld nc %lld: A(%lld, %lld) = %g, want %g", (long long)mp, (long long)jb,
                             (long long)nc, (long long)i, (long long)c, B[i + c * lda], want);
            }
        }
        ts_dfree(g_dev, X);
        ts_dfree(g_dev, XU);
        ts_dfree(g_dev, xi);
        free(A);
        free(R);
        free(RU);
        free(B);
        free(BU);
        swap_plan_free(&pl);
    }
}

// The first panel of N = 116736, NB = 1024 (a jb = 1024 plan over 116736 rows) on 1536 of its
// columns, both forms, 5 repetitions each after one warm-up; printed per 1000 columns.
static void test_swap_rows_timing(void **state) {
    NEED_GPU();
    const int64_t mp = 116736, jb = 1024, nc = 1536, lda = mp + 8;
    swap_plan pl;
    assert_int_equal(swap_plan_make(4242, mp, jb, 0, &pl), 0);
    double *X = NULL, *XU = NULL, *scr = NULL;
    CHECK_OK(ts_dmalloc(g_dev, sizeof(double) * (size_t)(lda * nc), (void **)&X));
    CHECK_OK(ts_dmalloc(g_dev, sizeof(double) * (size_t)(jb * nc), (void **)&XU));
    CHECK_OK(ts_dmalloc(g_dev, sizeof(double) * (size_t)(pl.npack * nc), (void **)&scr));
    double *H = random_panel(31, mp, 1, lda);
    for (int64_t c = 0; c < nc; c++) CHECK_OK(ts_copy_async(g_st, TS_COPY_H2D, X + c * lda, H, sizeof(double) * (size_t)lda));
    int64_t *xi = upload_plan(&pl);
    const int64_t *pk = xi, *ub = xi + pl.npack, *al = ub + jb, *abx = al + pl.nown, *uid = abx + pl.nown;
    double t[2];
    for (int form = 0; form < 2; form++) {
        for (int r = 0; r < 6; r++) {
            if (r == 1) {
                CHECK_OK(ts_stream_sync(g_st));
                t[form] = ts_now();
            }
            if (form == 0) {
                CHECK_OK(ts_lu_swap_rows(g_st, X, lda, pk, pl.npack, ub, jb, XU, jb, al, abx, pl.nown, nc));
            } else {
                CHECK_OK(ts_lu_pack_rows(g_st, X, lda, pk, pl.npack, nc, scr));
                CHECK_OK(ts_lu_unpack_rows(g_st, scr, ub, jb, nc, XU, jb, uid));
                CHECK_OK(ts_lu_unpack_rows(g_st, scr, abx, pl.nown, nc, X, lda, al));
            }
        }
        CHECK_OK(ts_stream_sync(g_st));
        t[form] = (ts_now() - t[form]) / 5;
    }
    printf("# row swaps of one panel (116736 rows, jb 1024, %lld rows moved, %lld below the block changed), "
           "per 1000 columns: fused %.3f ms, split %.3f ms (split/fused %.2f)\n",
           (long long)pl.npack, (long long)pl.nown, t[0] * 1e3 * 1000 / nc, t[1] * 1e3 * 1000 / nc, t[1] / t[0]);
    ts_dfree(g_dev, X);
    ts_dfree(g_dev, XU);
    ts_dfree(g_dev, scr);
    ts_dfree(g_dev, xi);
    free(H);
    swap_plan_free(&pl);
}

// The transposed layout's swaps (ts_lu_swap_rows_t, CUDA) on A^T with padding equal the pivots
// applied one by one, transposed, exactly; its panel transpose (ts_lu_transpose) is exact.
static void test_swap_rows_t(void **state) {
    NEED_GPU();
    static const int64_t cases[][3] = {{20000, 512, 1}, {20003, 512, 700}, {60000, 1024, 300}, {3000, 64, 129}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int64_t mp = cases[k][0], jb = cases[k][1], nc = cases[k][2], lda = mp + 3, ldu = jb;
        int64_t ldt = nc + 5, ldut = nc + 1;
        swap_plan pl;
        assert_int_equal(swap_plan_make(177 + k, mp, jb, 1, &pl), 0);
        assert_true(ts_lu_swap_plan_t_ok(pl.pk, pl.al, pl.ab, pl.nown));
        double *A = random_panel(300 + k, mp, nc, lda);
        double *R = malloc(sizeof(double) * (size_t)(lda * nc)), *RU = malloc(sizeof(double) * (size_t)(ldu * nc));
        double *At = malloc(sizeof(double) * (size_t)(ldt * mp)), *Ut = malloc(sizeof(double) * (size_t)(ldut * jb));
        assert_true(R && RU && At && Ut);
        swap_plan_ref(&pl, A, lda, nc, R, RU, ldu);
        // A^T made on the device by ts_lu_transpose (checked below against A)
        double *X = NULL, *XA = NULL, *XU = NULL;
        size_t tb = sizeof(double) * (size_t)(ldt * mp), ab = sizeof(double) * (size_t)(lda * nc);
        CHECK_OK(ts_dmalloc(g_dev, tb, (void **)&X));
        CHECK_OK(ts_dmalloc(g_dev, ab, (void **)&XA));
        CHECK_OK(ts_dmalloc(g_dev, sizeof(double) * (size_t)(ldut * jb), (void **)&XU));
        CHECK_OK(ts_copy_async(g_st, TS_COPY_H2D, XA, A, ab));
        CHECK_OK(ts_memset_async(g_st, X, 0xff, tb));   // NaN in the padding
        CHECK_OK(ts_memset_async(g_st, XU, 0xff, sizeof(double) * (size_t)(ldut * jb)));
        CHECK_OK(ts_lu_transpose(g_st, mp, nc, XA, lda, X, ldt));
        CHECK_OK(ts_copy_async(g_st, TS_COPY_D2H, At, X, tb));
        CHECK_OK(ts_stream_sync(g_st));
        for (int64_t r = 0; r < mp; r++)
            for (int64_t c = 0; c < nc; c++)
                if (!(At[c + r * ldt] == A[r + c * lda]))
                    fail_msg("transpose %lld x %lld: (%lld, %lld) = %g, want %g", (long long)mp, (long long)nc,
                             (long long)c, (long long)r, At[c + r * ldt], A[r + c * lda]);
        int64_t *xi = upload_plan(&pl);
        CHECK_OK(ts_lu_swap_rows_t(g_st, X, ldt, xi, xi + pl.npack, jb, XU, ldut, xi + pl.npack + jb,
                                   xi + pl.npack + jb + pl.nown, pl.nown, nc));
        CHECK_OK(ts_copy_async(g_st, TS_COPY_D2H, At, X, tb));
        CHECK_OK(ts_copy_async(g_st, TS_COPY_D2H, Ut, XU, sizeof(double) * (size_t)(ldut * jb)));
        CHECK_OK(ts_stream_sync(g_st));
        for (int64_t i = 0; i < jb; i++) {
            for (int64_t c = 0; c < nc; c++)
                if (!(Ut[c + i * ldut] == RU[i + c * ldu]))
                    fail_msg("mp %lld jb %lld nc %lld: Ut(%lld, %lld) = %g, dlaswp %g", (long long)mp, (long long)jb,
                             (long long)nc, (long long)c, (long long)i, Ut[c + i * ldut], RU[i + c * ldu]);
            assert_true(isnan(Ut[nc + i * ldut])); // padding untouched
        }
        for (int64_t r = 0; r < mp; r++) {
            for (int64_t c = 0; c < nc; c++) {
                double want = r < jb ? A[r + c * lda] : R[r + c * lda];
                if (!(At[c + r * ldt] == want))
                    fail_msg("mp %lld jb %lld nc %lld: At(%lld, %lld) = %g, want %g", (long long)mp, (long long)jb,
                             (long long)nc, (long long)c, (long long)r, At[c + r * ldt], want);
            }
            for (int64_t c = nc; c < ldt; c++) assert_true(isnan(At[c + r * ldt]));
        }
        ts_dfree(g_dev, X);
        ts_dfree(g_dev, XA);
        ts_dfree(g_dev, XU);
        ts_dfree(g_dev, xi);
        free(A);
        free(R);
        free(RU);
        free(At);
        free(Ut);
        swap_plan_free(&pl);
    }
}

// ts_lu_copy_cols (CUDA; the transposed layout's exchange between process rows): 2048 rows of A^T,
// 14500 long, gathered into a packed buffer and scattered from it into other columns of the padded
// A^T, exactly; the padding and the other columns untouched.
static void test_copy_cols(void **state) {
    NEED_GPU();
    const int64_t nc = 14500, ldt = nc + 7, ncol = 6201, n = 2048;
    size_t tb = sizeof(double) * (size_t)(ldt * ncol), pb = sizeof(double) * (size_t)(nc * n);
    double *At = random_panel(4242, ldt, ncol, ldt), *Bt = malloc(tb), *Pk = malloc(pb);
    int64_t *idx = malloc(sizeof(int64_t) * (size_t)(3 * n));
    assert_true(Bt && Pk && idx);
    for (int64_t e = 0; e < n; e++) { // sources: every third column from the end (2 mod 3);
        idx[e] = ncol - 1 - 3 * e;     // destinations: the columns 3e + 1, none of them a source
        idx[n + e] = 3 * e + 1;
        idx[2 * n + e] = e;
    }
    double *X = NULL, *XP = NULL;
    int64_t *xi = NULL;
    CHECK_OK(ts_dmalloc(g_dev, tb, (void **)&X));
    CHECK_OK(ts_dmalloc(g_dev, pb, (void **)&XP));
    CHECK_OK(ts_dmalloc(g_dev, sizeof(int64_t) * (size_t)(3 * n), (void **)&xi));
    CHECK_OK(ts_copy_async(g_st, TS_COPY_H2D, X, At, tb));
    CHECK_OK(ts_copy_async(g_st, TS_COPY_H2D, xi, idx, sizeof(int64_t) * (size_t)(3 * n)));
    CHECK_OK(ts_lu_copy_cols(g_st, X, ldt, xi, n, nc, XP, nc, NULL));
    CHECK_OK(ts_lu_copy_cols(g_st, XP, nc, xi + 2 * n, n, nc, X, ldt, xi + n)); // packed column e -> column 3e+1
    CHECK_OK(ts_copy_async(g_st, TS_COPY_D2H, Pk, XP, pb));
    CHECK_OK(ts_copy_async(g_st, TS_COPY_D2H, Bt, X, tb));
    CHECK_OK(ts_stream_sync(g_st));
    for (int64_t e = 0; e < n; e++)
        for (int64_t c = 0; c < nc; c++)
            if (!(Pk[c + e * nc] == At[c + idx[e] * ldt]))
                fail_msg("packed (%lld, %lld) = %g, want %g", (long long)c, (long long)e, Pk[c + e * nc],
                         At[c + idx[e] * ldt]);
    for (int64_t r = 0; r < ncol; r++) {
        int moved = r % 3 == 1 && (r - 1) / 3 < n;
        const double *want = moved ? At + idx[(r - 1) / 3] * ldt : At + r * ldt;
        for (int64_t c = 0; c < ldt; c++) {
            double w = c < nc ? want[c] : At[c + r * ldt];
            if (!(Bt[c + r * ldt] == w))
                fail_msg("At(%lld, %lld) = %g, want %g", (long long)c, (long long)r, Bt[c + r * ldt], w);
        }
    }
    ts_dfree(g_dev, X);
    ts_dfree(g_dev, XP);
    ts_dfree(g_dev, xi);
    free(At);
    free(Bt);
    free(Pk);
    free(idx);
}

// The first panel of N = 116736, NB = 1024 on 2048 columns in the transposed layout (the plan's
// rows as columns of A^T), and the panel's transpose there and back (1024 x 116736); per 1000
// columns, beside the column-major fused swap of test_swap_rows_timing.
static void test_swap_rows_t_timing(void **state) {
    NEED_GPU();
    const int64_t mp = 116736, jb = 1024, nc = 2048, ldt = nc + 8;
    swap_plan pl;
    assert_int_equal(swap_plan_make(4242, mp, jb, 0, &pl), 0);
    double *X = NULL, *XU = NULL, *P = NULL;
    CHECK_OK(ts_dmalloc(g_dev, sizeof(double) * (size_t)(ldt * mp), (void **)&X));
    CHECK_OK(ts_dmalloc(g_dev, sizeof(double) * (size_t)(nc * jb), (void **)&XU));
    CHECK_OK(ts_dmalloc(g_dev, sizeof(double) * (size_t)(mp * jb), (void **)&P));
    CHECK_OK(ts_memset_async(g_st, X, 0, sizeof(double) * (size_t)(ldt * mp)));
    int64_t *xi = upload_plan(&pl);
    double t = 0, tp = 0;
    for (int r = 0; r < 6; r++) {
        if (r == 1) {
            CHECK_OK(ts_stream_sync(g_st));
            t = ts_now();
        }
        CHECK_OK(ts_lu_swap_rows_t(g_st, X, ldt, xi, xi + pl.npack, jb, XU, nc, xi + pl.npack + jb,
                                   xi + pl.npack + jb + pl.nown, pl.nown, nc));
    }
    CHECK_OK(ts_stream_sync(g_st));
    t = (ts_now() - t) / 5;
    for (int r = 0; r < 6; r++) {
        if (r == 1) {
            CHECK_OK(ts_stream_sync(g_st));
            tp = ts_now();
        }
        CHECK_OK(ts_lu_transpose(g_st, jb, mp, X, ldt, P, mp));
        CHECK_OK(ts_lu_transpose(g_st, mp, jb, P, mp, X, ldt));
    }
    CHECK_OK(ts_stream_sync(g_st));
    tp = (ts_now() - tp) / 5;
    double moved = 2.0 * (double)(jb + pl.nown) * (double)nc * sizeof(double);
    printf("# row swaps of one panel, transposed layout (116736 rows, jb 1024, %lld below the block changed), "
           "per 1000 columns: %.3f ms (%.0f GB/s of reads and writes); the panel's transpose there and back: "
           "%.3f ms (%.0f GB/s)\n",
           (long long)pl.nown, t * 1e3 * 1000 / nc, moved / t / 1e9, tp * 1e3,
           4.0 * (double)mp * jb * sizeof(double) / tp / 1e9);
    ts_dfree(g_dev, X);
    ts_dfree(g_dev, XU);
    ts_dfree(g_dev, P);
    ts_dfree(g_dev, xi);
    swap_plan_free(&pl);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_and_medium),
        cmocka_unit_test(test_tall),
        cmocka_unit_test(test_leaf_grid),
        cmocka_unit_test(test_zero_pivot),
        cmocka_unit_test(test_timing),
        cmocka_unit_test(test_swap_rows),
        cmocka_unit_test(test_swap_rows_timing),
        cmocka_unit_test(test_swap_rows_t),
        cmocka_unit_test(test_copy_cols),
        cmocka_unit_test(test_swap_rows_t_timing),
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
