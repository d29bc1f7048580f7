// ts_hpcg_cg.c: HPCG's preconditioned CG and the validation tests (TestCG, TestSymmetry, TestNorms).
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/hpcg/ts_hpcg.h"
#include "core/ts_error.h"
#include "core/ts_timer.h"

#define TIC(t) ((t) = ts_now())
#define TOC(bucket, t) (times[bucket] += ts_now() - (t))

int ts_hpcg_cg(ts_hpcg_problem *P, const double *b, double *x, int max_iters, double tol, int precond,
               double *times, ts_hpcg_cg_result *res) {
    double local_times[TS_HPCG_NTIMES] = {0};
    if (!times) times = local_times;
    const ts_hcomm *c = &P->comm;
    ts_hpcg_level *A = P->A;
    const int32_t n = A->nrow;
    double *r = P->r, *z = P->z, *p = P->p, *Ap = P->Ap;
    double t0 = ts_now(), t;
    double normr = 0, rtz = 0, oldrtz = 0, alpha, beta, pAp;

    // r = b - A*x
    ts_hpcg_waxpby(n, 1.0, x, 0.0, x, p);
    TIC(t); TS_CHECK(ts_hpcg_spmv(c, A, p, Ap)); TOC(TS_HPCG_T_SPMV, t);
    TIC(t); ts_hpcg_waxpby(n, 1.0, b, -1.0, Ap, r); TOC(TS_HPCG_T_WAXPBY, t);
    TIC(t); TS_CHECK(ts_hpcg_dot(c, n, r, r, &normr, &times[TS_HPCG_T_ALLREDUCE])); TOC(TS_HPCG_T_DDOT, t);
    normr = sqrt(normr);
    const double normr0 = normr;
    int k;
    for (k = 1; k <= max_iters && normr / normr0 > tol; k++) {
        if (precond) {
            TIC(t); TS_CHECK(ts_hpcg_mg(c, A, r, z)); TOC(TS_HPCG_T_MG, t);
        } else {
            TIC(t); ts_hpcg_waxpby(n, 1.0, r, 0.0, r, z); TOC(TS_HPCG_T_WAXPBY, t);
        }
        if (k == 1) {
            TIC(t); ts_hpcg_waxpby(n, 1.0, z, 0.0, z, p); TOC(TS_HPCG_T_WAXPBY, t);
            TIC(t); TS_CHECK(ts_hpcg_dot(c, n, r, z, &rtz, &times[TS_HPCG_T_ALLREDUCE])); TOC(TS_HPCG_T_DDOT, t);
        } else {
            oldrtz = rtz;
            TIC(t); TS_CHECK(ts_hpcg_dot(c, n, r, z, &rtz, &times[TS_HPCG_T_ALLREDUCE])); TOC(TS_HPCG_T_DDOT, t);
            beta = rtz / oldrtz;
            TIC(t); ts_hpcg_waxpby(n, 1.0, z, beta, p, p); TOC(TS_HPCG_T_WAXPBY, t);
        }
        TIC(t); TS_CHECK(ts_hpcg_spmv(c, A, p, Ap)); TOC(TS_HPCG_T_SPMV, t);
        TIC(t); TS_CHECK(ts_hpcg_dot(c, n, p, Ap, &pAp, &times[TS_HPCG_T_ALLREDUCE])); TOC(TS_HPCG_T_DDOT, t);
        alpha = rtz / pAp;
        TIC(t);
        ts_hpcg_waxpby(n, 1.0, x, alpha, p, x);
        ts_hpcg_waxpby(n, 1.0, r, -alpha, Ap, r);
        TOC(TS_HPCG_T_WAXPBY, t);
        TIC(t); TS_CHECK(ts_hpcg_dot(c, n, r, r, &normr, &times[TS_HPCG_T_ALLREDUCE])); TOC(TS_HPCG_T_DDOT, t);
        normr = sqrt(normr);
    }
    times[TS_HPCG_T_TOTAL] += ts_now() - t0;
    res->niters = k - 1;
    res->normr = normr;
    res->normr0 = normr0;
    return 0;
}

int ts_hpcg_test_cg(ts_hpcg_problem *P, ts_hpcg_testcg *out) {
    memset(out, 0, sizeof *out);
    out->expected_no_prec = 12;
    out->expected_prec = 2;
    ts_hpcg_level *A = P->A;
    const int32_t n = A->nrow;
    // Exaggerate the diagonal (and b) so that the spectrum is clustered: CG then converges in a
    // handful of iterations; rows with global id < 9 get distinct scales (id + 2) * 1e6.
    double *diag0 = malloc(sizeof(double) * (size_t)n), *b = malloc(sizeof(double) * (size_t)n);
    double *x = calloc((size_t)A->ncol, sizeof(double));
    if (!diag0 || !b || !x) {
        free(diag0); free(b); free(x);
        TS_RAISE(TS_ERR_NOMEM, "hpcg: TestCG: out of memory");
    }
    for (int32_t i = 0; i < n; i++) {
        diag0[i] = A->val[A->diag[i]];
        double s = A->l2g[i] < 9 ? (double)(A->l2g[i] + 2) * 1.0e6 : 1.0e6;
        A->val[A->diag[i]] = diag0[i] * s;
        b[i] = P->b[i] * s;
    }
    int rc = 0;
    for (int prec = 0; prec <= 1 && rc == 0; prec++) {
        for (int call = 0; call < 2 && rc == 0; call++) {
            memset(x, 0, sizeof(double) * (size_t)A->ncol);
            ts_hpcg_cg_result r;
            rc = ts_hpcg_cg(P, b, x, TS_HPCG_REF_ITERS, 1.0e-12, prec, NULL, &r);
            if (rc < 0) break;
            int *mx = prec ? &out->niters_max_prec : &out->niters_max_no_prec;
            if (r.niters > *mx) *mx = r.niters;
            if (r.niters > (prec ? out->expected_prec : out->expected_no_prec)) out->count_fail++;
        }
    }
    for (int32_t i = 0; i < n; i++) A->val[A->diag[i]] = diag0[i];
    free(diag0); free(b); free(x);
    return rc;
}

// Values in [1, 2) from a per-rank xorshift stream (the reference fills with rand()/RAND_MAX + 1).
static void fill_random(uint64_t *s, double *v, int32_t n) {
    for (int32_t i = 0; i < n; i++) {
        *s ^= *s << 13; *s ^= *s >> 7; *s ^= *s << 17;
        v[i] = 1.0 + (double)(*s >> 11) / 9007199254740992.0;
    }
}

int ts_hpcg_test_symmetry(ts_hpcg_problem *P, ts_hpcg_testsym *out) {
    memset(out, 0, sizeof *out);
    const ts_hcomm *c = &P->comm;
    ts_hpcg_level *A = P->A;
    const int32_t n = A->nrow, nc = A->ncol;
    double *x = calloc((size_t)nc, sizeof(double)), *y = calloc((size_t)nc, sizeof(double));
    double *z = calloc((size_t)nc, sizeof(double));
    if (!x || !y || !z) {
        free(x); free(y); free(z);
        TS_RAISE(TS_ERR_NOMEM, "hpcg: TestSymmetry: out of memory");
    }
    uint64_t seed = 0x9E3779B97F4A7C15ull ^ ((uint64_t)(c->rank + 1) * 0xBF58476D1CE4E5B9ull);
    fill_random(&seed, x, n);
    fill_random(&seed, y, n);
    int rc = 0;
    double xx, yy, xtAy, ytAx;
    const double anorm = 2.0 * 26.0;
    TS_CHECK_GOTO(ts_hpcg_dot(c, n, x, x, &xx, NULL), rc, done);
    TS_CHECK_GOTO(ts_hpcg_dot(c, n, y, y, &yy, NULL), rc, done);
    // SpMV: |x'Ay - y'Ax|
    TS_CHECK_GOTO(ts_hpcg_spmv(c, A, y, z), rc, done);
    TS_CHECK_GOTO(ts_hpcg_dot(c, n, x, z, &xtAy, NULL), rc, done);
    TS_CHECK_GOTO(ts_hpcg_spmv(c, A, x, z), rc, done);
    TS_CHECK_GOTO(ts_hpcg_dot(c, n, y, z, &ytAx, NULL), rc, done);
    out->depsym_spmv = fabs(xtAy - ytAx) / ((xx * anorm * yy + yy * anorm * xx) * DBL_EPSILON);
    if (!(out->depsym_spmv <= 1.0)) out->count_fail++;
    // MG: |x'M^-1 y - y'M^-1 x|
    TS_CHECK_GOTO(ts_hpcg_mg(c, A, y, z), rc, done);
    TS_CHECK_GOTO(ts_hpcg_dot(c, n, x, z, &xtAy, NULL), rc, done);
    TS_CHECK_GOTO(ts_hpcg_mg(c, A, x, z), rc, done);
    TS_CHECK_GOTO(ts_hpcg_dot(c, n, y, z, &ytAx, NULL), rc, done);
    out->depsym_mg = fabs(xtAy - ytAx) / ((xx * anorm * yy + yy * anorm * xx) * DBL_EPSILON);
    if (!(out->depsym_mg <= 1.0)) out->count_fail++;
    // A * xexact must give b.
    memcpy(x, P->xexact, sizeof(double) * (size_t)n);
    double res = 0;
    for (int call = 0; call < 2; call++) {
        TS_CHECK_GOTO(ts_hpcg_spmv(c, A, x, z), rc, done);
        res = 0;
        for (int32_t i = 0; i < n; i++) {
            double d = fabs(z[i] - P->b[i]);
            if (d > res) res = d;
        }
        TS_CHECK_GOTO(ts_hc_allreduce_d(c, &res, 1, TS_HC_MAX), rc, done);
    }
    out->residual = res;
done:
    free(x); free(y); free(z);
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
