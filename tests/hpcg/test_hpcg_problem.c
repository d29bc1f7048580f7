// test_hpcg_problem.c: HPCG problem generation, SpMV, SYMGS, MG, the validation tests and the flop counts on 1 rank.
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "algorithms/hpcg/ts_hpcg.h"
#ifdef _OPENMP
#include <omp.h>
#endif

static ts_comm comm1(void) {
    ts_comm c;
    assert_int_equal(ts_comm_world(&c), 0);
    return c;
}

static ts_hpcg_problem *make(int nx, int ny, int nz, int levels) {
    ts_comm c = comm1();
    ts_hpcg_geom g;
    assert_int_equal(ts_hpcg_geom_init(&g, 1, 0, nx, ny, nz, 0, 0, 0), 0);
    ts_hpcg_problem *P = NULL;
    assert_int_equal(ts_hpcg_problem_create(&c, &g, levels, &P), 0);
    return P;
}

// Rows have 27/18/12/8 nonzeros inside/face/edge/corner; diagonal 26, others -1; b = A*ones.
static void test_generation(void **s) {
    (void)s;
    const int nx = 8, ny = 8, nz = 16;
    ts_hpcg_problem *P = make(nx, ny, nz, 1);
    ts_hpcg_level *A = P->A;
    assert_int_equal(A->nrow, nx * ny * nz);
    assert_int_equal(A->ncol, A->nrow); // one rank: no halo
    int64_t nnz = 0;
    for (int iz = 0; iz < nz; iz++)
        for (int iy = 0; iy < ny; iy++)
            for (int ix = 0; ix < nx; ix++) {
                int i = (iz * ny + iy) * nx + ix;
                int bnd = (ix == 0 || ix == nx - 1) + (iy == 0 || iy == ny - 1) + (iz == 0 || iz == nz - 1);
                const int expect[4] = {27, 18, 12, 8};
                int64_t cnt = A->rowptr[i + 1] - A->rowptr[i];
                assert_int_equal(cnt, expect[bnd]);
                double rowsum = 0;
                for (int64_t j = A->rowptr[i]; j < A->rowptr[i + 1]; j++) {
                    if (A->col[j] == i) {
                        assert_true(A->val[j] == 26.0);
                        assert_int_equal(A->diag[i], j);
                    } else {
                        assert_true(A->val[j] == -1.0);
                    }
                    rowsum += A->val[j] * P->xexact[A->col[j]];
                }
                assert_true(P->xexact[i] == 1.0);
                assert_true(fabs(P->b[i] - rowsum) == 0.0);
                assert_true(P->b[i] == 26.0 - (double)(cnt - 1));
                assert_int_equal(A->l2g[i], i);
                nnz += cnt;
            }
    assert_int_equal(A->nnz, nnz);
    // Closed form: sum over dims of (3n-2) per dimension product.
    assert_int_equal(A->gnnz, (int64_t)(3 * nx - 2) * (3 * ny - 2) * (3 * nz - 2));
    ts_hpcg_problem_destroy(P);
}

// Global ids need 64 bits once the global grid passes 2^31 points.
static void test_global_ids_64bit(void **s) {
    (void)s;
    ts_hpcg_geom g;
    assert_int_equal(ts_hpcg_geom_init(&g, 4096, 4095, 512, 512, 512, 16, 16, 16), 0);
    assert_int_equal(g.ipx, 15);
    assert_int_equal(g.ipz, 15);
    int64_t last = ts_hpcg_global_row(&g, g.gnx - 1, g.gny - 1, g.gnz - 1);
    assert_true(last == (int64_t)8192 * 8192 * 8192 - 1);
    assert_true(last > 2147483647LL);
}

static void test_proc_grid_and_checks(void **s) {
    (void)s;
    int x, y, z;
    // HPCG 3.1's shapes: the first split in x
    static const int want[][4] = {{1, 1, 1, 1},  {2, 2, 1, 1},  {4, 2, 2, 1},  {8, 2, 2, 2},   {16, 4, 2, 2},
                                  {32, 4, 4, 2}, {64, 4, 4, 4}, {6, 2, 3, 1},  {12, 2, 3, 2}, {18, 2, 3, 3},
                                  {30, 2, 3, 5}, {7, 7, 1, 1},  {9, 3, 3, 1}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        ts_hpcg_proc_grid(want[i][0], &x, &y, &z);
        if (x != want[i][1] || y != want[i][2] || z != want[i][3])
            fail_msg("%d ranks: %d x %d x %d, want %d x %d x %d", want[i][0], x, y, z, want[i][1], want[i][2],
                     want[i][3]);
    }
    // more than three prime factors over two or more primes: the least surface
    static const int least[][2] = {{24, 26}, {36, 33}, {48, 40}, {72, 54}, {96, 64}};
    for (size_t i = 0; i < sizeof least / sizeof least[0]; i++) {
        ts_hpcg_proc_grid(least[i][0], &x, &y, &z);
        assert_int_equal(x * y * z, least[i][0]);
        if (x * y + y * z + x * z != least[i][1])
            fail_msg("%d ranks: %d x %d x %d has surface %d, want %d", least[i][0], x, y, z, x * y + y * z + x * z,
                     least[i][1]);
    }
    ts_hpcg_geom g;
    assert_int_equal(ts_hpcg_geom_init(&g, 1, 0, 24, 16, 16, 0, 0, 0), 0);
    assert_int_equal(ts_hpcg_check_geom(&g), 0);
    assert_int_equal(ts_hpcg_geom_init(&g, 1, 0, 20, 16, 16, 0, 0, 0), 0);
    assert_true(ts_hpcg_check_geom(&g) < 0);
    assert_int_equal(ts_hpcg_geom_init(&g, 1, 0, 16, 16, 256, 0, 0, 0), 0);
    assert_true(ts_hpcg_check_geom(&g) < 0);   // aspect 1/16 < 0.125
    assert_int_equal(ts_hpcg_geom_init(&g, 1, 0, 16, 16, 128, 0, 0, 0), 0);
    assert_int_equal(ts_hpcg_check_geom(&g), 0); // aspect exactly 0.125
    assert_true(ts_hpcg_geom_init(&g, 6, 0, 16, 16, 16, 2, 2, 2) < 0);
}

// Two nz values along z (HPCG 3.1's pz, zl, zu): 1 x 2 x 4 ranks, layers 0-1 with zl = 24, 2-3
// with zu = 8: each rank's nz and first global z, the global grid, the halving of every level, and
// the checks (both values checked on every rank, pz below npz).
static void test_two_z_values(void **s) {
    (void)s;
    ts_hpcg_geom g;
    const int want_nz[4] = {24, 24, 8, 8};
    const int64_t want_z0[4] = {0, 24, 48, 56};
    for (int layer = 0; layer < 4; layer++) {
        const int rank = layer * 2 + 1; // ipy = 1
        assert_int_equal(ts_hpcg_geom_init_z(&g, 8, rank, 16, 16, 16, 1, 2, 4, 2, 24, 8), 0);
        assert_int_equal(g.ipz, layer);
        assert_int_equal(g.ipy, 1);
        assert_int_equal(g.nz, want_nz[layer]);
        assert_int_equal(g.giz0, want_z0[layer]);
        assert_int_equal(g.giy0, 16);
        assert_int_equal(g.gnz, 64);
        assert_int_equal(ts_hpcg_check_geom(&g), 0);
        ts_hpcg_geom c = g;
        ts_hpcg_geom_halve(&c);
        assert_int_equal(c.nz, want_nz[layer] / 2);
        assert_int_equal(c.giz0, want_z0[layer] / 2);
        assert_int_equal(c.gnz, 32);
        assert_int_equal(c.zl, 12);
        assert_int_equal(c.zu, 4);
    }
    // pz = 0: one nz (zl, zu ignored); zl or zu left out: nz
    assert_int_equal(ts_hpcg_geom_init_z(&g, 2, 1, 16, 16, 16, 1, 1, 2, 0, 24, 8), 0);
    assert_int_equal(g.nz, 16);
    assert_int_equal(g.gnz, 32);
    assert_int_equal(g.giz0, 16);
    assert_int_equal(ts_hpcg_geom_init_z(&g, 2, 1, 16, 16, 16, 1, 1, 2, 1, 24, 0), 0);
    assert_int_equal(g.nz, 16);
    assert_int_equal(g.gnz, 40);
    assert_int_equal(g.giz0, 24);
    // pz must leave a layer for zu
    assert_true(ts_hpcg_geom_init_z(&g, 2, 0, 16, 16, 16, 1, 1, 2, 2, 24, 8) < 0);
    // rank 0 (zl = 24, fine) rejects the run for the others' zu = 12, and for zu's aspect ratio
    assert_int_equal(ts_hpcg_geom_init_z(&g, 2, 0, 16, 16, 16, 1, 1, 2, 1, 24, 12), 0);
    assert_true(ts_hpcg_check_geom(&g) < 0);
    assert_int_equal(ts_hpcg_geom_init_z(&g, 2, 0, 16, 16, 16, 1, 1, 2, 1, 24, 256), 0);
    assert_true(ts_hpcg_check_geom(&g) < 0);
}

// SpMV against a dense copy of A on a tiny grid with a non-trivial x.
static void test_spmv_dense(void **s) {
    (void)s;
    ts_hpcg_problem *P = make(8, 8, 8, 1);
    ts_hpcg_level *A = P->A;
    const int n = A->nrow;
    double *D = calloc((size_t)n * n, sizeof(double)), *x = malloc(sizeof(double) * n), *y = malloc(sizeof(double) * n);
    for (int i = 0; i < n; i++)
        for (int64_t j = A->rowptr[i]; j < A->rowptr[i + 1]; j++) D[(size_t)i * n + A->col[j]] = A->val[j];
    for (int i = 0; i < n; i++) x[i] = sin(0.37 * i) + 2.0;
    ts_comm c = comm1();
    assert_int_equal(ts_hpcg_spmv(&c, A, x, y), 0);
    double maxerr = 0;
    for (int i = 0; i < n; i++) {
        double ref = 0;
        for (int j = 0; j < n; j++) ref += D[(size_t)i * n + j] * x[j];
        maxerr = fmax(maxerr, fabs(ref - y[i]));
        assert_true(fabs(D[(size_t)i * n + i] - 26.0) == 0.0);
        for (int j = 0; j < i; j++) assert_true(D[(size_t)i * n + j] == D[(size_t)j * n + i]); // symmetric
    }
    assert_true(maxerr < 1e-12);
    free(D); free(x); free(y);
    ts_hpcg_problem_destroy(P);
}

// SYMGS against a straightforward dense Gauss-Seidel (forward then backward).
static void test_symgs(void **s) {
    (void)s;
    ts_hpcg_problem *P = make(8, 8, 8, 1);
    ts_hpcg_level *A = P->A;
    const int n = A->nrow;
    double *D = calloc((size_t)n * n, sizeof(double));
    for (int i = 0; i < n; i++)
        for (int64_t j = A->rowptr[i]; j < A->rowptr[i + 1]; j++) D[(size_t)i * n + A->col[j]] = A->val[j];
    double *r = malloc(sizeof(double) * n), *x = malloc(sizeof(double) * n), *xr = malloc(sizeof(double) * n);
    for (int i = 0; i < n; i++) { r[i] = cos(0.11 * i); x[i] = xr[i] = 0.5 * sin(0.7 * i); }
    for (int i = 0; i < n; i++) {
        double sum = r[i];
        for (int j = 0; j < n; j++) if (j != i) sum -= D[(size_t)i * n + j] * xr[j];
        xr[i] = sum / D[(size_t)i * n + i];
    }
    for (int i = n - 1; i >= 0; i--) {
        double sum = r[i];
        for (int j = 0; j < n; j++) if (j != i) sum -= D[(size_t)i * n + j] * xr[j];
        xr[i] = sum / D[(size_t)i * n + i];
    }
    ts_comm c = comm1();
    assert_int_equal(ts_hpcg_symgs(&c, A, r, x), 0);
    double maxerr = 0, maxv = 0;
    for (int i = 0; i < n; i++) { maxerr = fmax(maxerr, fabs(x[i] - xr[i])); maxv = fmax(maxv, fabs(xr[i])); }
    assert_true(maxv > 1e-3);
    assert_true(maxerr < 1e-13);
    free(D); free(r); free(x); free(xr);
    ts_hpcg_problem_destroy(P);
}

// The sequential sweep on the CSR (forward i = 0..n-1, backward n-1..0), x with its halo part.
static void symgs_sequential(const ts_hpcg_level *A, const double *r, double *x) {
    const int n = A->nrow;
    for (int dir = 0; dir < 2; dir++)
        for (int q = 0; q < n; q++) {
            const int i = dir ? n - 1 - q : q;
            const double d = A->val[A->diag[i]];
            double sum = r[i];
            for (int64_t j = A->rowptr[i]; j < A->rowptr[i + 1]; j++) sum -= A->val[j] * x[A->col[j]];
            sum += x[i] * d;
            x[i] = sum / d;
        }
}

// The reference SYMGS on several threads (a pipeline over z-planes) gives every row what the
// sequential sweep gives it, bit for bit, however the planes fall on 1-8 threads: a box of one
// rank, one with halo columns (a rank inside a 2 x 2 x 2 grid, halo values set by hand; one
// process, so no exchange overwrites them), and a thin one (5 planes).
static void test_symgs_pipeline_exact(void **s) {
    (void)s;
    ts_comm c = comm1();
    const int dims[][7] = {{16, 8, 24, 1, 0, 0, 0}, {16, 8, 12, 8, 5, 2, 2}, {8, 16, 5, 1, 0, 0, 0}};
    for (size_t di = 0; di < sizeof dims / sizeof dims[0]; di++) {
        const int *d = dims[di];
        ts_hpcg_geom g;
        assert_int_equal(ts_hpcg_geom_init(&g, d[3], d[4], d[0], d[1], d[2], d[5], d[5] ? 2 : 0, d[6]), 0);
        ts_hpcg_problem *P = NULL;
        assert_int_equal(ts_hpcg_problem_create(&c, &g, 1, &P), 0);
        ts_hpcg_level *A = P->A;
        const int n = A->nrow, nc = A->ncol;
        if (d[3] > 1) assert_true(nc > n);
        double *r = malloc(sizeof(double) * n), *x = malloc(sizeof(double) * nc), *xr = malloc(sizeof(double) * nc);
        for (int i = 0; i < n; i++) r[i] = cos(0.3 * i);
        for (int i = 0; i < nc; i++) xr[i] = sin(0.9 * i + 0.1);
        symgs_sequential(A, r, xr);
        const int threads[] = {1, 2, 3, 5, 8};
        for (size_t ti = 0; ti < sizeof threads / sizeof threads[0]; ti++) {
#ifdef _OPENMP
            omp_set_num_threads(threads[ti]);
#endif
            for (int i = 0; i < nc; i++) x[i] = sin(0.9 * i + 0.1);
            assert_int_equal(ts_hpcg_symgs(&c, A, r, x), 0);
            if (memcmp(x, xr, sizeof(double) * nc))
                fail_msg("box %zu, %d threads: the pipelined SYMGS differs from the sequential sweep", di, threads[ti]);
        }
        free(r); free(x); free(xr);
        ts_hpcg_problem_destroy(P);
    }
}

// The V-cycle reduces the error of A x = b; CG with it converges fast; symmetry departures < 1;
// TestCG passes; counts follow ReportResults.
static void test_mg_cg_tests(void **s) {
    (void)s;
    ts_hpcg_problem *P = make(16, 16, 16, 4);
    ts_hpcg_level *A = P->A;
    assert_non_null(A->coarse);
    assert_non_null(A->coarse->coarse->coarse);
    assert_null(A->coarse->coarse->coarse->coarse);
    assert_int_equal(A->coarse->nrow, 512);
    assert_int_equal(A->coarse->coarse->coarse->nrow, 8);
    assert_int_equal(A->f2c[1], 2);
    assert_int_equal(A->f2c[8], 2 * 16); // coarse (0,1,0) is fine (0,2,0)
    ts_comm c = comm1();
    // One V-cycle on r = b from x = 0 gives z with ||b - A z|| well below ||b||.
    double *z = calloc((size_t)A->ncol, sizeof(double)), *Az = calloc((size_t)A->ncol, sizeof(double));
    assert_int_equal(ts_hpcg_mg(&c, A, P->b, z), 0);
    assert_int_equal(ts_hpcg_spmv(&c, A, z, Az), 0);
    double rb = 0, rr = 0;
    for (int i = 0; i < A->nrow; i++) { rb += P->b[i] * P->b[i]; rr += (P->b[i] - Az[i]) * (P->b[i] - Az[i]); }
    assert_true(sqrt(rr) < 0.5 * sqrt(rb));
    free(z); free(Az);
    ts_hpcg_impl I;
    ts_hpcg_impl_ref(P, &I);
    ts_hpcg_cg_result cr;
    assert_int_equal(ts_hpcg_cg(&I, P->b, P->x, 50, 1e-9, 1, NULL, &cr), 0);
    assert_true(cr.niters > 1 && cr.niters < 20);
    double err = 0;
    for (int i = 0; i < A->nrow; i++) err = fmax(err, fabs(P->x[i] - 1.0));
    assert_true(err < 1e-7);
    ts_hpcg_testsym ts;
    assert_int_equal(ts_hpcg_test_symmetry(&I, &ts), 0);
    assert_int_equal(ts.count_fail, 0);
    assert_true(ts.depsym_spmv < 1.0 && ts.depsym_mg < 1.0);
    assert_true(ts.residual < 1e-12);
    ts_hpcg_testcg tc;
    assert_int_equal(ts_hpcg_test_cg(&I, &A->g, &tc), 0);
    assert_int_equal(tc.count_fail, 0);
    assert_true(tc.niters_max_no_prec >= 3 && tc.niters_max_no_prec <= 12);
    assert_true(tc.niters_max_prec >= 1 && tc.niters_max_prec <= 2);
    assert_true(A->val[A->diag[0]] == 26.0); // diagonal restored
    ts_hpcg_counts k;
    ts_hpcg_count(P, 2, 50, &k);
    assert_true(k.ddot == (3.0 * 100 + 2) * 2.0 * 4096);
    assert_true(k.spmv == (100 + 2) * 2.0 * (double)A->gnnz);
    double mg = 0;
    for (ts_hpcg_level *L = A; L->coarse; L = L->coarse) mg += 100 * 10.0 * (double)L->gnnz;
    mg += 100 * 4.0 * (double)A->coarse->coarse->coarse->gnnz;
    assert_true(fabs(k.mg - mg) == 0.0);
    ts_hpcg_counts k2;
    ts_hpcg_count(P, 2, 60, &k2); // 60 iterations credited as 50
    assert_true(fabs(k2.total_ref - k2.total * 50.0 / 60.0) < 1e-6 * k2.total);
    ts_hpcg_problem_destroy(P);
}

static void test_norms(void **s) {
    (void)s;
    double v[4] = {1e-10, 1e-10, 1e-10, 1e-10};
    ts_hpcg_testnorms t;
    ts_hpcg_test_norms(v, 4, &t);
    assert_true(t.pass && t.variance < 1e-30);
    double w[2] = {0.0, 0.01};
    ts_hpcg_test_norms(w, 2, &t);
    assert_false(t.pass); // variance 2.5e-5
    assert_true(fabs(t.variance - 2.5e-5) < 1e-12);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_generation), cmocka_unit_test(test_global_ids_64bit),
        cmocka_unit_test(test_proc_grid_and_checks),
        cmocka_unit_test(test_two_z_values), cmocka_unit_test(test_spmv_dense),
        cmocka_unit_test(test_symgs), cmocka_unit_test(test_symgs_pipeline_exact),
        cmocka_unit_test(test_mg_cg_tests), cmocka_unit_test(test_norms),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
