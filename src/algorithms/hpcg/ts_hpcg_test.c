// ts_hpcg_test.c: HPCG's validation tests: TestCG, TestSymmetry and TestNorms.
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/hpcg/ts_hpcg.h"
#include "core/ts_error.h"

int ts_hpcg_test_cg(ts_hpcg_impl *I, const ts_hpcg_geom *g, ts_hpcg_testcg *out) {
    memset(out, 0, sizeof *out);
    out->expected_no_prec = 12;
    out->expected_prec = 2;
    const ts_hpcg_ops *ops = I->ops;
    const int32_t n = I->nrow;
    // Exaggerate the diagonal (and b) so that the spectrum is clustered: CG then converges in a
    // handful of iterations; rows with global id < 9 get distinct scales (id + 2) * 1e6.
    double *scale = malloc(sizeof(double) * (size_t)n), *bn = malloc(sizeof(double) * (size_t)n);
    double *b = NULL, *x = NULL;
    int rc = 0, scaled = 0;
    if (!scale || !bn) {
        rc = TS_ERROR(TS_ERR_NOMEM, "hpcg: TestCG: out of memory");
        goto done;
    }
    TS_CHECK_GOTO(ops->vnew(I, &b), rc, done);
    TS_CHECK_GOTO(ops->vnew(I, &x), rc, done);
    TS_CHECK_GOTO(ops->get(I, bn, I->b), rc, done);
    for (int32_t i = 0; i < n; i++) {
        const int64_t ix = i % g->nx, iy = (i / g->nx) % g->ny, iz = i / ((int64_t)g->nx * g->ny);
        const int64_t id = ts_hpcg_global_row(g, g->gix0 + ix, g->giy0 + iy, g->giz0 + iz);
        scale[i] = id < 9 ? (double)(id + 2) * 1.0e6 : 1.0e6;
        bn[i] *= scale[i];
    }
    TS_CHECK_GOTO(ops->set(I, b, bn), rc, done);
    TS_CHECK_GOTO(ops->scale_diag(I, scale), rc, done);
    scaled = 1;
    for (int prec = 0; prec <= 1; prec++) {
        for (int call = 0; call < 2; call++) {
            TS_CHECK_GOTO(ops->zero(I, x), rc, done);
            ts_hpcg_cg_result r;
            TS_CHECK_GOTO(ts_hpcg_cg(I, b, x, TS_HPCG_REF_ITERS, 1.0e-12, prec, NULL, &r), rc, done);
            int *mx = prec ? &out->niters_max_prec : &out->niters_max_no_prec;
            if (r.niters > *mx) *mx = r.niters;
            if (r.niters > (prec ? out->expected_prec : out->expected_no_prec)) out->count_fail++;
        }
    }
done:
    if (scaled) {
        int r2 = ops->scale_diag(I, NULL);
        if (rc == 0) rc = r2;
    }
    if (b) ops->vfree(I, b);
    if (x) ops->vfree(I, x);
    free(scale);
    free(bn);
    return rc;
}

// Values in [1, 2) from a per-rank xorshift stream (the reference fills with rand()/RAND_MAX + 1).
static void fill_random(uint64_t *s, double *v, int32_t n) {
    for (int32_t i = 0; i < n; i++) {
        *s ^= *s << 13; *s ^= *s >> 7; *s ^= *s << 17;
        v[i] = 1.0 + (double)(*s >> 11) / 9007199254740992.0;
    }
}

int ts_hpcg_test_symmetry(ts_hpcg_impl *I, ts_hpcg_testsym *out) {
    memset(out, 0, sizeof *out);
    const ts_hpcg_ops *ops = I->ops;
    const int32_t n = I->nrow;
    double *hx = malloc(sizeof(double) * (size_t)n), *hy = malloc(sizeof(double) * (size_t)n);
    double *hb = malloc(sizeof(double) * (size_t)n);
    double *x = NULL, *y = NULL, *z = NULL;
    int rc = 0;
    if (!hx || !hy || !hb) {
        rc = TS_ERROR(TS_ERR_NOMEM, "hpcg: TestSymmetry: out of memory");
        goto done;
    }
    TS_CHECK_GOTO(ops->vnew(I, &x), rc, done);
    TS_CHECK_GOTO(ops->vnew(I, &y), rc, done);
    TS_CHECK_GOTO(ops->vnew(I, &z), rc, done);
    uint64_t seed = 0x9E3779B97F4A7C15ull ^ ((uint64_t)(I->comm->rank + 1) * 0xBF58476D1CE4E5B9ull);
    fill_random(&seed, hx, n);
    fill_random(&seed, hy, n);
    TS_CHECK_GOTO(ops->set(I, x, hx), rc, done);
    TS_CHECK_GOTO(ops->set(I, y, hy), rc, done);
    double xx, yy, xtAy, ytAx;
    const double anorm = 2.0 * 26.0;
    TS_CHECK_GOTO(ops->dot(I, x, x, &xx, NULL), rc, done);
    TS_CHECK_GOTO(ops->dot(I, y, y, &yy, NULL), rc, done);
    // SpMV: |x'Ay - y'Ax|
    TS_CHECK_GOTO(ops->spmv(I, y, z), rc, done);
    TS_CHECK_GOTO(ops->dot(I, x, z, &xtAy, NULL), rc, done);
    TS_CHECK_GOTO(ops->spmv(I, x, z), rc, done);
    TS_CHECK_GOTO(ops->dot(I, y, z, &ytAx, NULL), rc, done);
    out->depsym_spmv = fabs(xtAy - ytAx) / ((xx * anorm * yy + yy * anorm * xx) * DBL_EPSILON);
    if (!(out->depsym_spmv <= 1.0)) out->count_fail++;
    // MG: |x'M^-1 y - y'M^-1 x|
    TS_CHECK_GOTO(ops->mg(I, y, z), rc, done);
    TS_CHECK_GOTO(ops->dot(I, x, z, &xtAy, NULL), rc, done);
    TS_CHECK_GOTO(ops->mg(I, x, z), rc, done);
    TS_CHECK_GOTO(ops->dot(I, y, z, &ytAx, NULL), rc, done);
    out->depsym_mg = fabs(xtAy - ytAx) / ((xx * anorm * yy + yy * anorm * xx) * DBL_EPSILON);
    if (!(out->depsym_mg <= 1.0)) out->count_fail++;
    // A * xexact must give b.
    TS_CHECK_GOTO(ops->get(I, hb, I->b), rc, done);
    TS_CHECK_GOTO(ops->waxpby(I, 1.0, I->xexact, 0.0, I->xexact, x), rc, done);
    double res = 0;
    for (int call = 0; call < 2; call++) {
        TS_CHECK_GOTO(ops->spmv(I, x, z), rc, done);
        TS_CHECK_GOTO(ops->get(I, hx, z), rc, done);
        res = 0;
        for (int32_t i = 0; i < n; i++) {
            double d = fabs(hx[i] - hb[i]);
            if (d > res) res = d;
        }
        TS_CHECK_GOTO(ts_comm_allreduce_d(I->comm, &res, 1, TS_COMM_MAX), rc, done);
    }
    out->residual = res;
done:
    if (x) ops->vfree(I, x);
    if (y) ops->vfree(I, y);
    if (z) ops->vfree(I, z);
    free(hx); free(hy); free(hb);
    return rc;
}

void ts_hpcg_test_norms(const double *v, int n, ts_hpcg_testnorms *out) {
    double mean = 0, var = 0;
    for (int i = 0; i < n; i++) mean += v[i];
    mean /= n > 0 ? n : 1;
    for (int i = 0; i < n; i++) var += (v[i] - mean) * (v[i] - mean);
    var /= n > 0 ? n : 1;
    out->mean = mean;
    out->variance = var;
    out->pass = n > 0 && var < 1.0e-6;
}
