// test_hpcg_opt.c: HPCG's optimized problem and kernels (JPL colours, permutation, sliced ELL, multicoloured SYMGS, MG, CG) against the reference, on the host and a simulated device.
//
// Bounds: SpMV agrees with the reference CSR SpMV within 32 eps times the row's sum of |a_ij x_j|
// (two orders of at most 27 terms); one SYMGS agrees with a straightforward sequential
// Gauss-Seidel in the colour order within 64 eps relative to max |x| (the sweeps reorganize the
// same sums: the backward sweep reuses the forward sweep's lower sums).
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "algorithms/hpcg/ts_hpcg.h"
#include "algorithms/hpcg/ts_hpcg_opt.h"
#include "hpcg_opt_check.h"

static ts_comm g_comm;

static ts_hpcg_geom geom(int size, int rank, int nx, int ny, int nz, int px, int py, int pz) {
    ts_hpcg_geom g;
    assert_int_equal(ts_hpcg_geom_init(&g, size, rank, nx, ny, nz, px, py, pz), 0);
    return g;
}

static ts_hpcg_problem *ref_problem(const ts_hpcg_geom *g, int levels) {
    ts_hpcg_problem *P = NULL;
    OK(ts_hpcg_problem_create(&g_comm, g, levels, &P));
    return P;
}

static ts_hpcg_opt *opt_problem(const ts_hpcg_geom *g, int levels, const ts_hpcg_exec *X, int optimize) {
    ts_hpcg_opt *O = NULL;
    OK(ts_hpcg_opt_setup(&g_comm, g, levels, X, &O));
    if (optimize) OK(ts_hpcg_opt_optimize(O));
    return O;
}

// Every rank of a few process grids (evaluated in this one process).
static const int grids[][3] = {{2, 2, 2}, {3, 2, 1}, {1, 1, 3}, {1, 1, 1}};

// The halo plan from the geometry is the generator's (found from the matrix's columns).
static void test_halo_plan(void **s) {
    (void)s;
    for (size_t gi = 0; gi < sizeof grids / sizeof grids[0]; gi++) {
        const int size = grids[gi][0] * grids[gi][1] * grids[gi][2];
        for (int r = 0; r < size; r++) {
            ts_hpcg_geom g = geom(size, r, 8, 16, 8, grids[gi][0], grids[gi][1], grids[gi][2]);
            ts_hpcg_problem *P = ref_problem(&g, 1);
            ts_hpcg_halo_plan h;
            int32_t *idx = NULL;
            OK(ts_hpcg_halo_plan_geom(&g, &h, &idx));
            const ts_hpcg_halo_plan *e = &P->A->halo;
            assert_int_equal(h.nneigh, e->nneigh);
            assert_int_equal(h.nsend, e->nsend);
            assert_int_equal(h.nrecv, e->nrecv);
            assert_int_equal(P->A->ncol, P->A->nrow + h.nrecv);
            for (int k = 0; k < h.nneigh; k++) {
                assert_int_equal(h.neigh[k], e->neigh[k]);
                assert_int_equal(h.dir[k], e->dir[k]);
                assert_int_equal(h.recv_count[k], e->recv_count[k]);
                assert_int_equal(h.recv_off[k], e->recv_off[k]);
                assert_int_equal(h.send_count[k], e->send_count[k]);
                assert_int_equal(h.send_off[k], e->send_off[k]);
            }
            assert_memory_equal(idx, P->A->send_idx, sizeof(int32_t) * (size_t)h.nsend);
            free(idx);
            ts_hpcg_problem_destroy(P);
        }
    }
}

// The natural-order ELL of the setup is the generator's CSR: the same entries in the same order
// (halo columns included), and the same b.
static void test_natural_ell(void **s) {
    (void)s;
    ts_hpcg_exec X;
    ts_hpcg_exec_host(&X);
    for (size_t gi = 0; gi < sizeof grids / sizeof grids[0]; gi++) {
        const int size = grids[gi][0] * grids[gi][1] * grids[gi][2];
        for (int r = 0; r < size; r++) {
            ts_hpcg_geom g = geom(size, r, 8, 8, 16, grids[gi][0], grids[gi][1], grids[gi][2]);
            ts_hpcg_problem *P = ref_problem(&g, 1);
            ts_hpcg_opt *O = opt_problem(&g, 1, &X, 0);
            const ts_hpcg_level *A = P->A;
            const ts_hpcg_olevel *L = O->A;
            assert_int_equal(L->nrow, A->nrow);
            assert_int_equal(L->ncol, A->ncol);
            for (int32_t i = 0; i < A->nrow; i++) {
                int64_t j = A->rowptr[i];
                for (int sl = 0; sl < TS_HPCG_SLOTS; sl++) {
                    const int32_t c = L->ecol[(int64_t)sl * L->nrow + i];
                    if (c < 0) continue;
                    assert_true(j < A->rowptr[i + 1]);
                    assert_int_equal(c, A->col[j]);
                    assert_true(L->eval[(int64_t)sl * L->nrow + i] == A->val[j]);
                    j++;
                }
                assert_true(j == A->rowptr[i + 1]);
                assert_true(O->b[i] == P->b[i]);
                assert_true(O->xexact[i] == 1.0);
            }
            ts_hpcg_opt_destroy(O);
            ts_hpcg_problem_destroy(P);
        }
    }
}

// JPL gives 8 colours on this stencil; no two neighbours share one; the permutation groups the
// rows by colour, keeps natural order inside a colour, and is a bijection.
static void test_colouring_and_permutation(void **s) {
    (void)s;
    ts_hpcg_exec X;
    ts_hpcg_exec_host(&X);
    const int dims[][3] = {{16, 16, 16}, {24, 24, 24}, {16, 24, 32}, {8, 8, 8}};
    for (size_t di = 0; di < sizeof dims / sizeof dims[0]; di++) {
        ts_hpcg_geom g = geom(1, 0, dims[di][0], dims[di][1], dims[di][2], 0, 0, 0);
        ts_hpcg_problem *P = ref_problem(&g, 2);
        ts_hpcg_opt *O = opt_problem(&g, 2, &X, 1);
        const ts_hpcg_level *A = P->A;
        const ts_hpcg_olevel *L = O->A;
        assert_int_equal(L->ncolors, 8);
        const int32_t n = L->nrow;
        int32_t *iperm = malloc(sizeof(int32_t) * (size_t)n);
        for (int32_t p = 0; p < n; p++) iperm[p] = -1;
        for (int32_t i = 0; i < n; i++) {
            const int32_t c = L->color[i], p = L->perm[i];
            assert_true(c >= 0 && c < L->ncolors);
            for (int64_t j = A->rowptr[i]; j < A->rowptr[i + 1]; j++)
                if (A->col[j] != i) assert_int_not_equal(L->color[A->col[j]], c);
            // one rank: no row has a halo column, so colour c is block 2c, and block 2c + 1 is empty
            assert_int_equal(L->nblk, 2 * L->ncolors);
            assert_true(p >= L->blk[2 * c].r0 && p < L->blk[2 * c].r0 + L->blk[2 * c].nr);
            assert_int_equal(L->blk[2 * c + 1].nr, 0);
            assert_int_equal(iperm[p], -1);
            iperm[p] = i;
        }
        for (int32_t p = 1; p < n; p++) // inside a colour block: natural order
            if (L->color[iperm[p]] == L->color[iperm[p - 1]]) assert_true(iperm[p] > iperm[p - 1]);
        // The coarse points' colour comes last (it holds all of them on this grid when the
        // dimensions are powers of 2).
        const ts_hpcg_olevel *C = L->coarse;
        for (int32_t k = 0; k < C->nrow; k++) {
            const int32_t f = ts_hpcg_f2c_nat(k, C->g.nx, C->g.ny, L->g.nx, L->g.ny);
            assert_int_equal(L->fr[k], L->perm[f]);
            assert_int_equal(L->cq[k], C->perm[k]);
            if (di == 0 || di == 3) assert_int_equal(L->color[f], L->ncolors - 1);
        }
        // Vectors survive the way into the permuted order and back.
        ts_hpcg_impl I;
        ts_hpcg_opt_impl(O, &I);
        double *h = malloc(sizeof(double) * (size_t)n), *back = malloc(sizeof(double) * (size_t)n), *v = NULL;
        hc_random(di, h, n);
        OK(I.ops->vnew(&I, &v));
        OK(I.ops->set(&I, v, h));
        for (int32_t i = 0; i < n; i++) assert_true(v[L->perm[i]] == h[i]);
        OK(I.ops->get(&I, back, v));
        assert_memory_equal(back, h, sizeof(double) * (size_t)n);
        I.ops->vfree(&I, v);
        free(h);
        free(back);
        free(iperm);
        ts_hpcg_opt_destroy(O);
        ts_hpcg_problem_destroy(P);
    }
}

// From 128^3 up, on power-of-two grids, the smoother sweeps the parity classes of (x, y, z) in the
// orders bench/hpcg_orders found at 256^3 (50 iterations there against 52); the coarsest level keeps
// JPL's order, and smaller grids the rule by coarse points (its coarse colour last).
static void test_colour_orders(void **s) {
    (void)s;
    ts_hpcg_exec X;
    ts_hpcg_exec_host(&X);
    // JPL's colour of each parity class (bit 0: x odd, bit 1: y odd, bit 2: z odd) with the
    // bit-reversal hash; the sweep orders as JPL colours, level by level.
    static const int jpl_of_class[8] = {1, 6, 5, 2, 3, 4, 7, 0};
    static const int order[3][8] = {{0, 2, 3, 4, 7, 6, 5, 1}, {0, 2, 3, 4, 5, 7, 6, 1}, {0, 2, 3, 5, 4, 6, 7, 1}};
    const int sizes[] = {128, 32};
    for (int si = 0; si < 2; si++) {
        const int n = sizes[si];
        ts_hpcg_geom g = geom(1, 0, n, n, n, 0, 0, 0);
        ts_hpcg_opt *O = opt_problem(&g, 4, &X, 1);
        int l = 0;
        for (const ts_hpcg_olevel *L = O->A; L; L = L->coarse, l++) {
            assert_int_equal(L->ncolors, 8);
            for (int cls = 0; cls < 8; cls++) {
                const int32_t i = (cls & 1) + L->g.nx * ((cls >> 1 & 1) + L->g.ny * (cls >> 2 & 1));
                // every row of the class has the colour of its corner row
                const int32_t j = i + 2 + L->g.nx * (2 + 2 * L->g.ny);
                assert_int_equal(L->color[j], L->color[i]);
                int want = jpl_of_class[cls]; // the coarsest level: JPL's order
                if (l < 3 && n >= 128) {
                    for (int k = 0; k < 8; k++)
                        if (order[l][k] == jpl_of_class[cls]) want = k;
                } else if (l < 3 && cls == 0) {
                    want = 7; // the rule: the coarse points' colour last
                }
                if (l == 3 || n >= 128 || cls == 0) assert_int_equal(L->color[i], want);
            }
        }
        assert_int_equal(l, 4);
        ts_hpcg_opt_destroy(O);
    }
}

// On a rank with neighbours, the rows with halo columns form a block of their own per colour
// (2c + 1, after the colour's other rows, 2c), natural order inside each block, so that their
// extra entries do not widen the ELL of the colour's other rows: those blocks have the widths of
// the same box on one rank (the colouring depends on local indices only).
static void test_halo_blocks(void **s) {
    (void)s;
    ts_hpcg_exec X;
    ts_hpcg_exec_host(&X);
    ts_hpcg_geom g1 = geom(1, 0, 16, 16, 16, 1, 1, 1);
    ts_hpcg_opt *O1 = opt_problem(&g1, 2, &X, 1);
    const int grid[][3] = {{2, 1, 1}, {1, 1, 2}, {2, 2, 2}};
    for (size_t gi = 0; gi < sizeof grid / sizeof grid[0]; gi++) {
        const int size = grid[gi][0] * grid[gi][1] * grid[gi][2];
        for (int rank = 0; rank < size; rank++) {
            ts_hpcg_geom g = geom(size, rank, 16, 16, 16, grid[gi][0], grid[gi][1], grid[gi][2]);
            ts_hpcg_problem *P = ref_problem(&g, 2);
            ts_hpcg_opt *O = opt_problem(&g, 2, &X, 1);
            const ts_hpcg_olevel *L = O->A, *L1 = O1->A;
            for (int lev = 0; lev < 2; lev++, L = L->coarse, L1 = L1->coarse) {
                const ts_hpcg_level *A = lev ? P->A->coarse : P->A;
                const int32_t n = L->nrow;
                assert_int_equal(L->ncolors, L1->ncolors);
                int32_t *iperm = malloc(sizeof(int32_t) * (size_t)n);
                for (int32_t i = 0; i < n; i++) iperm[L->perm[i]] = i;
                int32_t halo_rows = 0;
                for (int32_t i = 0; i < n; i++) {
                    int h = 0;
                    for (int64_t j = A->rowptr[i]; j < A->rowptr[i + 1]; j++) h |= A->col[j] >= n;
                    halo_rows += h;
                    const ts_hpcg_cblk *b = &L->blk[2 * L->color[i] + h];
                    const int32_t p = L->perm[i];
                    if (p < b->r0 || p >= b->r0 + b->nr)
                        fail_msg("grid %zu rank %d level %d: row %d (halo %d) at %d, outside its block [%d, %d)", gi,
                                 rank, lev, i, h, p, b->r0, b->r0 + b->nr);
                }
                assert_true(halo_rows > 0);
                for (int k = 0; k < L->nblk; k++) {
                    const ts_hpcg_cblk *b = &L->blk[k];
                    for (int32_t p = b->r0 + 1; p < b->r0 + b->nr; p++) assert_true(iperm[p] > iperm[p - 1]);
                    if (k + 1 < L->nblk) assert_int_equal(L->blk[k + 1].r0, b->r0 + b->nr);
                    if (k % 2 == 0) { // no halo columns: the one-rank widths
                        assert_int_equal(b->wl, L1->blk[k].wl);
                        assert_int_equal(b->wu, L1->blk[k].wu);
                    }
                }
                free(iperm);
            }
            ts_hpcg_opt_destroy(O);
            ts_hpcg_problem_destroy(P);
        }
    }
    ts_hpcg_opt_destroy(O1);
}

// SpMV on the sliced ELL equals the reference CSR SpMV within the bound above (a rank with a
// halo: the halo values are set alike in both).
static void test_spmv(void **s) {
    (void)s;
    ts_hpcg_exec X;
    ts_hpcg_exec_host(&X);
    ts_hpcg_geom g = geom(8, 5, 16, 8, 16, 2, 2, 2);
    ts_hpcg_problem *P = ref_problem(&g, 1);
    ts_hpcg_opt *O = opt_problem(&g, 1, &X, 1);
    const ts_hpcg_level *A = P->A;
    const ts_hpcg_olevel *L = O->A;
    const int32_t n = A->nrow, nc = A->ncol;
    double *x = malloc(sizeof(double) * (size_t)nc), *y = malloc(sizeof(double) * (size_t)nc);
    double *xp = malloc(sizeof(double) * (size_t)nc), *yp = malloc(sizeof(double) * (size_t)nc);
    for (int trial = 0; trial < 3; trial++) {
        hc_random(100 + trial, x, nc);
        for (int32_t i = 0; i < n; i++) xp[L->perm[i]] = x[i];
        for (int32_t i = n; i < nc; i++) xp[i] = x[i]; // halo ids are the same
        OK(ts_hpcg_spmv(&g_comm, (ts_hpcg_level *)A, x, y));
        OK(ts_hpcg_opt_spmv(O, O->A, xp, yp));
        for (int32_t i = 0; i < n; i++) {
            double mag = 0;
            for (int64_t j = A->rowptr[i]; j < A->rowptr[i + 1]; j++) mag += fabs(A->val[j] * x[A->col[j]]);
            if (fabs(yp[L->perm[i]] - y[i]) > 32 * DBL_EPSILON * mag)
                fail_msg("row %d: SpMV %.17g, reference %.17g", i, yp[L->perm[i]], y[i]);
        }
    }
    free(x); free(y); free(xp); free(yp);
    ts_hpcg_opt_destroy(O);
    ts_hpcg_problem_destroy(P);
}

// Sequential Gauss-Seidel on the CSR visiting rows in the colour order (iperm), forward then
// backward; x in natural order with the halo.
static void gs_colour_order(const ts_hpcg_level *A, const int32_t *iperm, const double *r, double *x) {
    for (int dir = 0; dir < 2; dir++)
        for (int32_t q = 0; q < A->nrow; q++) {
            const int32_t i = iperm[dir ? A->nrow - 1 - q : q];
            double sum = r[i], d = 0;
            for (int64_t j = A->rowptr[i]; j < A->rowptr[i + 1]; j++) {
                if (A->col[j] == i) d = A->val[j];
                else sum -= A->val[j] * x[A->col[j]];
            }
            x[i] = sum / d;
        }
}

static void test_symgs_colour_order(void **s) {
    (void)s;
    ts_hpcg_exec X;
    ts_hpcg_exec_host(&X);
    ts_hpcg_geom g = geom(8, 2, 16, 16, 8, 2, 2, 2);
    ts_hpcg_problem *P = ref_problem(&g, 1);
    ts_hpcg_opt *O = opt_problem(&g, 1, &X, 1);
    const ts_hpcg_level *A = P->A;
    const ts_hpcg_olevel *L = O->A;
    const int32_t n = A->nrow, nc = A->ncol;
    int32_t *iperm = malloc(sizeof(int32_t) * (size_t)n);
    for (int32_t i = 0; i < n; i++) iperm[L->perm[i]] = i;
    double *r = malloc(sizeof(double) * (size_t)n), *x = malloc(sizeof(double) * (size_t)nc);
    double *rp = malloc(sizeof(double) * (size_t)n), *xp = malloc(sizeof(double) * (size_t)nc);
    for (int zero = 0; zero <= 1; zero++) {
        hc_random(7, r, n);
        hc_random(8, x, nc);
        if (zero) memset(x, 0, sizeof(double) * (size_t)nc);
        for (int32_t i = 0; i < n; i++) {
            rp[L->perm[i]] = r[i];
            xp[L->perm[i]] = x[i];
        }
        for (int32_t i = n; i < nc; i++) xp[i] = x[i];
        gs_colour_order(A, iperm, r, x);
        OK(ts_hpcg_opt_symgs(O, O->A, rp, xp, zero));
        double d = 0, big = 0;
        for (int32_t i = 0; i < n; i++) {
            d = fmax(d, fabs(xp[L->perm[i]] - x[i]));
            big = fmax(big, fabs(x[i]));
        }
        assert_true(big > 1e-3);
        if (d > 64 * DBL_EPSILON * big) fail_msg("SYMGS (from %s) differs by %.3g (max |x| %.3g)", zero ? "zero" : "x", d, big);
    }
    free(iperm); free(r); free(x); free(rp); free(xp);
    ts_hpcg_opt_destroy(O);
    ts_hpcg_problem_destroy(P);
}

// The optimized implementation passes HPCG's checks: CG converges to the solution, the symmetry
// departures stay below 1, TestCG's iteration counts hold, and CG reaches the reference's residual
// drop in close to 50 iterations.
// On one rank the restriction pairs' fine rows are one colour block's rows in order, and the
// restriction by that block (ts_hpcg_xk_restrict1) gives the general one's coarse residual bit for
// bit, on one rank for all pairs and on a rank with halo blocks for the pairs without halo columns.
static void test_restrict1(void **s) {
    (void)s;
    ts_hpcg_exec X;
    ts_hpcg_exec_host(&X);
    ts_hpcg_geom g = geom(1, 0, 32, 16, 24, 1, 1, 1);
    ts_hpcg_opt *O = opt_problem(&g, TS_HPCG_MG_LEVELS, &X, 1);
    for (ts_hpcg_olevel *L = O->A; L->coarse; L = L->coarse) {
        assert_true(L->rblk >= 0);
        const int32_t n = L->coarse->nrow, nc = L->ncol;
        double *r = malloc(sizeof(double) * (size_t)nc), *x = malloc(sizeof(double) * (size_t)nc);
        double *rc1 = malloc(sizeof(double) * (size_t)n);
        hc_random(11, r, nc);
        hc_random(12, x, nc);
        ts_hpcg_xk_restrict1 a1 = {L->blk[L->rblk], L->cq, r, L->diag, x, rc1};
        OK(ts_hpcg_xk_restrict1_cpu(&a1));
        ts_hpcg_xk_restrict a = {n, L->nblk, L->fr, L->cq, L->xblk, r, L->diag, x, L->rc};
        OK(ts_hpcg_xk_restrict_cpu(&a));
        assert_memory_equal(rc1, L->rc, sizeof(double) * (size_t)n);
        free(r); free(x); free(rc1);
    }
    ts_hpcg_opt_destroy(O);
    // Rank 1 of 2 x 1 x 1: its face x = 0 holds coarse points with halo columns (a block of their
    // own, after the others): the block covers the inner pairs, the general restriction the rest,
    // together bit for bit the general one over all pairs.
    ts_hpcg_geom g2 = geom(2, 1, 16, 16, 16, 2, 1, 1);
    O = opt_problem(&g2, 2, &X, 1);
    ts_hpcg_olevel *L = O->A;
    const int32_t n = L->coarse->nrow, nc = L->ncol;
    assert_true(L->rblk >= 0 && L->nr_inner < n && L->nr_inner == L->blk[L->rblk].nr);
    double *r = malloc(sizeof(double) * (size_t)nc), *x = malloc(sizeof(double) * (size_t)nc);
    double *rc = malloc(sizeof(double) * (size_t)n);
    hc_random(13, r, nc);
    hc_random(14, x, nc);
    ts_hpcg_xk_restrict a = {n, L->nblk, L->fr, L->cq, L->xblk, r, L->diag, x, L->rc};
    OK(ts_hpcg_xk_restrict_cpu(&a));
    memcpy(rc, L->rc, sizeof(double) * (size_t)n);
    memset(L->rc, 0, sizeof(double) * (size_t)n);
    ts_hpcg_xk_restrict1 a1 = {L->blk[L->rblk], L->cq, r, L->diag, x, L->rc};
    OK(ts_hpcg_xk_restrict1_cpu(&a1));
    ts_hpcg_xk_restrict ah = {n - L->nr_inner, L->nblk, L->fr + L->nr_inner, L->cq + L->nr_inner, L->xblk, r, L->diag, x, L->rc};
    OK(ts_hpcg_xk_restrict_cpu(&ah));
    assert_memory_equal(rc, L->rc, sizeof(double) * (size_t)n);
    free(r); free(x); free(rc);
    ts_hpcg_opt_destroy(O);
}

static void test_cg_and_validation(void **s) {
    (void)s;
    ts_hpcg_exec X;
    ts_hpcg_exec_host(&X);
    ts_hpcg_geom g = geom(1, 0, 32, 32, 32, 0, 0, 0);
    ts_hpcg_problem *P = ref_problem(&g, 4);
    ts_hpcg_opt *O = opt_problem(&g, 4, &X, 1);
    ts_hpcg_impl ref, I;
    ts_hpcg_impl_ref(P, &ref);
    ts_hpcg_opt_impl(O, &I);
    ts_hpcg_cg_result cr;
    OK(ts_hpcg_cg(&ref, P->b, P->x, 50, 0.0, 1, NULL, &cr));
    const double drop = cr.normr / cr.normr0;
    OK(I.ops->zero(&I, I.x));
    OK(ts_hpcg_cg(&I, I.b, I.x, 500, drop, 1, NULL, &cr));
    assert_true(cr.normr / cr.normr0 <= drop);
    assert_true(cr.niters >= 45 && cr.niters <= 52);
    double err = 0;
    for (int32_t i = 0; i < I.nrow; i++) err = fmax(err, fabs(I.x[i] - 1.0));
    assert_true(err < 1e-7);
    ts_hpcg_testsym ts;
    OK(ts_hpcg_test_symmetry(&I, &ts));
    assert_int_equal(ts.count_fail, 0);
    assert_true(ts.residual < 1e-12);
    ts_hpcg_testcg tc;
    OK(ts_hpcg_test_cg(&I, &g, &tc));
    assert_int_equal(tc.count_fail, 0);
    double *d = malloc(sizeof(double) * (size_t)I.nrow);
    memcpy(d, O->A->diag, sizeof(double) * (size_t)I.nrow);
    for (int32_t i = 0; i < I.nrow; i++) assert_true(d[i] == 26.0); // diagonal restored
    free(d);
    ts_hpcg_opt_destroy(O);
    ts_hpcg_problem_destroy(P);
}

// One simulated device of 256 MiB, no faults.
static ts_devset *open_sim(void) {
    ts_devset_opts o;
    OK(ts_devset_opts_init(&o));
    o.backend = TS_BACKEND_SIM;
    o.sim_devices = 1;
    o.sim_mem_bytes = (size_t)256 << 20;
    memset(&o.faults, 0, sizeof o.faults);
    o.faults.device = -1;
    ts_devset *set = NULL;
    OK(ts_devset_open(&o, &set));
    return set;
}

// A simulated device builds the same problem and computes the same results as the host.
static void test_sim_device(void **s) {
    (void)s;
    ts_devset *set = open_sim();
    ts_hpcg_exec XH, XD;
    ts_hpcg_exec_host(&XH);
    OK(ts_hpcg_exec_device(&XD, set, ts_devset_device(set, 0)));
    ts_hpcg_geom g = geom(8, 6, 16, 16, 16, 2, 2, 2);
    ts_hpcg_opt *H = opt_problem(&g, 4, &XH, 1), *D = opt_problem(&g, 4, &XD, 1);
    hc_same_problem(H, D);
    hc_same_kernels(H, D, 42);
    ts_hpcg_opt_destroy(H);
    ts_hpcg_opt_destroy(D);
    ts_hpcg_exec_fini(&XD);
    ts_devset_close(set);
}

// What the optimized implementation computes on one problem, for the comparison of two runs.
typedef struct {
    ts_hpcg_cg_result cg50, cgtol;
    double *x;                 // the solution after 50 iterations (natural order)
    ts_hpcg_testsym ts;
    ts_hpcg_testcg tc;
    ts_device_counters ops;    // what the device ran
} graph_run;

static void run_solver(ts_hpcg_opt *O, const ts_hpcg_geom *g, graph_run *out) {
    ts_hpcg_impl I;
    ts_hpcg_opt_impl(O, &I);
    ts_device_counters c0, c1;
    ts_device_counters_get(O->X.dev, &c0);
    OK(I.ops->zero(&I, I.x));
    OK(ts_hpcg_cg(&I, I.b, I.x, 50, 0.0, 1, NULL, &out->cg50));
    out->x = malloc(sizeof(double) * (size_t)I.nrow);
    OK(I.ops->get(&I, out->x, I.x));
    OK(I.ops->zero(&I, I.x));
    OK(ts_hpcg_cg(&I, I.b, I.x, 500, 1e-9, 1, NULL, &out->cgtol));
    OK(ts_hpcg_test_symmetry(&I, &out->ts));
    OK(ts_hpcg_test_cg(&I, g, &out->tc));
    OK(ts_hpcg_xsync(&O->X));
    ts_device_counters_get(O->X.dev, &c1);
    out->ops.kernels = c1.kernels - c0.kernels;
    out->ops.copies = c1.copies - c0.copies;
}

// TESSERA_HPCG_GRAPH=1 on a simulated device: the V-cycle runs as graphs, one captured per (r, z)
// pair (CG's, TestCG's the same; TestSymmetry's two), and CG's residuals and solution, its
// iterations to a tolerance, TestSymmetry's departures and TestCG's counts are those of the
// V-cycle launched kernel by kernel, bit for bit: the graphs replay the same kernels in the same
// order (the device ran as many). A malformed value fails the setup; the host executor has
// nothing to capture.
static void test_sim_mg_graph(void **s) {
    (void)s;
    ts_devset *set = open_sim();
    ts_hpcg_exec X, XH;
    OK(ts_hpcg_exec_device(&X, set, ts_devset_device(set, 0)));
    ts_hpcg_exec_host(&XH);
    ts_hpcg_geom g = geom(1, 0, 32, 32, 32, 0, 0, 0);
    graph_run run[2];
    for (int graph = 0; graph <= 1; graph++) {
        if (graph) setenv("TESSERA_HPCG_GRAPH", "1", 1);
        else setenv("TESSERA_HPCG_GRAPH", "0", 1);
        ts_hpcg_opt *O = opt_problem(&g, 4, &X, 1);
        assert_int_equal(O->graph, graph);
        run_solver(O, &g, &run[graph]);
        assert_int_equal(O->mg_captures, graph ? 3 : 0);
        if (graph) assert_true(O->mg_calls > 50);
        ts_hpcg_opt_destroy(O);
    }
    const graph_run *a = &run[0], *b = &run[1];
    assert_int_equal(a->cg50.niters, 50);
    assert_int_equal(b->cg50.niters, 50);
    assert_true(a->cg50.normr0 == b->cg50.normr0 && a->cg50.normr == b->cg50.normr);
    assert_memory_equal(a->x, b->x, sizeof(double) * (size_t)g.nx * g.ny * g.nz);
    assert_true(a->cgtol.niters > 5);
    assert_int_equal(a->cgtol.niters, b->cgtol.niters);
    assert_true(a->cgtol.normr == b->cgtol.normr);
    assert_true(a->ts.depsym_mg == b->ts.depsym_mg && a->ts.depsym_spmv == b->ts.depsym_spmv);
    assert_int_equal(a->ts.count_fail, 0);
    assert_int_equal(a->tc.niters_max_prec, b->tc.niters_max_prec);
    assert_int_equal(a->tc.niters_max_no_prec, b->tc.niters_max_no_prec);
    assert_int_equal(b->tc.count_fail, 0);
    assert_int_equal(a->ops.kernels, b->ops.kernels);
    assert_int_equal(a->ops.copies, b->ops.copies);
    free(run[0].x);
    free(run[1].x);
    // a malformed value is an error that names the variable
    setenv("TESSERA_HPCG_GRAPH", "sometimes", 1);
    ts_hpcg_opt *O = NULL;
    assert_int_equal(ts_hpcg_opt_setup(&g_comm, &g, 4, &X, &O), TS_ERR_PARSE);
    assert_null(O);
    assert_non_null(strstr(ts_error_last()->message, "TESSERA_HPCG_GRAPH"));
    // the host executor: asked for, not taken
    setenv("TESSERA_HPCG_GRAPH", "1", 1);
    O = opt_problem(&g, 1, &XH, 0);
    assert_int_equal(O->graph, 0);
    ts_hpcg_opt_destroy(O);
    unsetenv("TESSERA_HPCG_GRAPH");
    ts_hpcg_exec_fini(&X);
    ts_devset_close(set);
}

static int setup(void **s) {
    (void)s;
    return ts_comm_world(&g_comm);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_halo_plan),        cmocka_unit_test(test_natural_ell),
        cmocka_unit_test(test_colouring_and_permutation), cmocka_unit_test(test_halo_blocks),
        cmocka_unit_test(test_colour_orders),
        cmocka_unit_test(test_spmv),
        cmocka_unit_test(test_symgs_colour_order), cmocka_unit_test(test_restrict1),
        cmocka_unit_test(test_cg_and_validation),
        cmocka_unit_test(test_sim_device),       cmocka_unit_test(test_sim_mg_graph),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
