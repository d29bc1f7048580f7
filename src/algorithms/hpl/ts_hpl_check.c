// ts_hpl_check.c: HPL's verification: regenerate [A|b], r = b - A x, norms, scaled residual.
//
// resid = ||r||_oo / (eps (||A||_oo ||x||_oo + ||b||_oo) N), eps = 2^-53 (HPL_dlamch('eps')).
// The local blocks are regenerated on the host in groups of local row blocks, in parallel.
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/hpl/ts_hpl_internal.h"
#include "core/ts_error.h"
#include "core/ts_rng.h"

typedef struct {
    ts_hpl_state *s;
    int64_t nrb, ngroups;
    const double *x;    // full x
    double *r;          // mp: b - A x (partial over local columns; b only on its column)
    double *rowsum;     // mp
    double *colsum;     // ngroups x nq
    double *b;          // mp: b (on b's process column), else 0
    uint32_t seed;
    int fail;
} chk_t;

static void check_group(int64_t g, void *arg) {
    chk_t *c = arg;
    ts_hpl_state *s = c->s;
    int64_t NB = s->NB, N = s->N;
    double *blk = malloc((size_t)(NB * NB) * sizeof(double));
    if (!blk) {
        c->fail = 1;
        return;
    }
    double *cs = c->colsum + g * s->nq;
    int64_t rb0 = c->nrb * g / c->ngroups, rb1 = c->nrb * (g + 1) / c->ngroups;
    for (int64_t rb = rb0; rb < rb1; rb++) {
        int64_t lr = rb * NB, h = s->mp - lr < NB ? s->mp - lr : NB;
        int64_t gr = ts_hpl_l2g(lr, NB, s->myrow, s->P);
        for (int64_t lc = 0; lc < s->nq; lc += NB) {
            int64_t w = s->nq - lc < NB ? s->nq - lc : NB;
            int64_t gc = ts_hpl_l2g(lc, NB, s->mycol, s->Q);
            ts_hpl_fill(c->seed, N, gr, gc, h, w, blk, h);
            if (s->ctx->elem_hook)
                for (int64_t jj = 0; jj < w; jj++)
                    for (int64_t ii = 0; ii < h; ii++)
                        blk[ii + jj * h] = s->ctx->elem_hook(gr + ii, gc + jj, blk[ii + jj * h],
                                                             s->ctx->elem_hook_arg);
            for (int64_t jj = 0; jj < w; jj++) {
                const double *col = blk + jj * h;
                if (gc + jj == N) { // the right-hand side
                    for (int64_t ii = 0; ii < h; ii++) c->b[lr + ii] = col[ii];
                    continue;
                }
                double xj = c->x[gc + jj], sum = 0.0;
                for (int64_t ii = 0; ii < h; ii++) {
                    c->r[lr + ii] -= col[ii] * xj;
                    c->rowsum[lr + ii] += fabs(col[ii]);
                    sum += fabs(col[ii]);
                }
                cs[lc + jj] += sum;
            }
        }
    }
    free(blk);
}

int ts_hpl_check(ts_hpl_state *s) {
    ts_hpl_result *res = s->r;
    int64_t mp = s->mp, nq = s->nq, N = s->N;
    chk_t c = {s, (mp + s->NB - 1) / s->NB, 1, s->xsol, NULL, NULL, NULL, NULL, ts_hpl_seed(s->ctx), 0};
    int threads = s->ctx->pool ? ts_pool_size(s->ctx->pool) + 1 : 1;
    c.ngroups = c.nrb < 2 * threads ? c.nrb : 2 * threads;
    if (c.ngroups < 1) c.ngroups = 1;
    c.r = calloc((size_t)(3 * mp + 1), sizeof(double));
    c.colsum = calloc((size_t)(c.ngroups * nq + 1), sizeof(double));
    int rc = 0;
    if (!c.r || !c.colsum) rc = TS_ERROR(TS_ERR_NOMEM, "residual check workspace");
    if (rc == 0) {
        c.rowsum = c.r + mp;
        c.b = c.r + 2 * mp;
        if (s->ctx->pool && c.ngroups > 1) ts_pool_parallel_for(s->ctx->pool, c.ngroups, check_group, &c);
        else
            for (int64_t g = 0; g < c.ngroups; g++) check_group(g, &c);
        if (c.fail) rc = TS_ERROR(TS_ERR_NOMEM, "residual check block");
    }
    int e = rc;
    ts_comm_allreduce_i(&s->grid, &e, 1, TS_COMM_MIN);
    if (e < 0) {
        free(c.r);
        free(c.colsum);
        return ts_hpl_fail(s, rc ? rc : TS_ERROR(TS_ERR_NOMEM, "residual check failed on another rank"));
    }
    for (int64_t g = 1; g < c.ngroups; g++)
        for (int64_t q = 0; q < nq; q++) c.colsum[q] += c.colsum[g * nq + q];
    // r = b - A x: b joins on its process column, then the row sums it up
    for (int64_t i = 0; i < mp; i++) c.r[i] += c.b[i];
    // r and the row sums of |A| are added along the process row
    if (mp > 0) ts_hpl_fail(s, ts_comm_allreduce_d(&s->row, c.r, (int)(2 * mp), TS_COMM_SUM));
    if (nq > 0) ts_hpl_fail(s, ts_comm_allreduce_d(&s->col, c.colsum, (int)nq, TS_COMM_SUM));
    double m[4] = {0, 0, 0, 0}; // ||r||_oo, ||A||_oo, ||A||_1, ||b||_oo
    for (int64_t i = 0; i < mp; i++) {
        if (fabs(c.r[i]) > m[0]) m[0] = fabs(c.r[i]);
        if (c.rowsum[i] > m[1]) m[1] = c.rowsum[i];
        if (fabs(c.b[i]) > m[3]) m[3] = fabs(c.b[i]);
    }
    for (int64_t q = 0; q < nq; q++)
        if (ts_hpl_l2g(q, s->NB, s->mycol, s->Q) < N && c.colsum[q] > m[2]) m[2] = c.colsum[q];
    ts_hpl_fail(s, ts_comm_allreduce_d(&s->grid, m, 4, TS_COMM_MAX));
    double xi = 0.0, x1 = 0.0;
    for (int64_t i = 0; i < N; i++) {
        double a = fabs(s->xsol[i]);
        if (a > xi) xi = a;
        x1 += a;
    }
    res->eps = DBL_EPSILON / 2.0;
    res->norm_r = m[0];
    res->norm_A = m[1];
    res->norm_A1 = m[2];
    res->norm_b = m[3];
    res->norm_x = xi;
    res->norm_x1 = x1;
    double den = res->eps * (res->norm_A * res->norm_x + res->norm_b) * (double)N;
    res->resid = den > 0 ? res->norm_r / den : (res->norm_r == 0 ? 0.0 : INFINITY);
    res->checked = 1;
    res->passed = res->resid < s->hc->threshold; // NaN fails
    free(c.r);
    free(c.colsum);
    return s->err;
}
