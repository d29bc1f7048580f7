// ts_hpcg_cg.c: HPCG's CG: the preconditioned conjugate gradient over an implementation's operations (reference or optimized).
#include <math.h>

#include "algorithms/hpcg/ts_hpcg.h"
#include "core/ts_error.h"
#include "core/ts_timer.h"

#define TIC(t) ((t) = ts_now())
// A phase ends when its queued work has finished (device implementations run asynchronously).
#define TOC(bucket, t)                                                                            \
    do {                                                                                          \
        TS_CHECK(ops->fence(I));                                                                  \
        times[bucket] += ts_now() - (t);                                                          \
    } while (0)

int ts_hpcg_cg(ts_hpcg_impl *I, const double *b, double *x, int max_iters, double tol, int precond,
               double *times, ts_hpcg_cg_result *res) {
    double local_times[TS_HPCG_NTIMES] = {0};
    if (!times) times = local_times;
    const ts_hpcg_ops *ops = I->ops;
    double *r = I->r, *z = I->z, *p = I->p, *Ap = I->Ap;
    double *tar = &times[TS_HPCG_T_ALLREDUCE];
    double t0 = ts_now(), t;
    double normr = 0, rtz = 0, oldrtz = 0, alpha, beta, pAp;

    // r = b - A*x
    TS_CHECK(ops->waxpby(I, 1.0, x, 0.0, x, p));
    TIC(t); TS_CHECK(ops->spmv(I, p, Ap)); TOC(TS_HPCG_T_SPMV, t);
    TIC(t); TS_CHECK(ops->waxpby(I, 1.0, b, -1.0, Ap, r)); TOC(TS_HPCG_T_WAXPBY, t);
    TIC(t); TS_CHECK(ops->dot(I, r, r, &normr, tar)); TOC(TS_HPCG_T_DDOT, t);
    normr = sqrt(normr);
    const double normr0 = normr;
    int k;
    for (k = 1; k <= max_iters && normr / normr0 > tol; k++) {
        if (precond) {
            TIC(t); TS_CHECK(ops->mg(I, r, z)); TOC(TS_HPCG_T_MG, t);
        } else {
            TIC(t); TS_CHECK(ops->waxpby(I, 1.0, r, 0.0, r, z)); TOC(TS_HPCG_T_WAXPBY, t);
        }
        if (k == 1) {
            TIC(t); TS_CHECK(ops->waxpby(I, 1.0, z, 0.0, z, p)); TOC(TS_HPCG_T_WAXPBY, t);
            TIC(t); TS_CHECK(ops->dot(I, r, z, &rtz, tar)); TOC(TS_HPCG_T_DDOT, t);
        } else {
            oldrtz = rtz;
            TIC(t); TS_CHECK(ops->dot(I, r, z, &rtz, tar)); TOC(TS_HPCG_T_DDOT, t);
            beta = rtz / oldrtz;
            TIC(t); TS_CHECK(ops->waxpby(I, 1.0, z, beta, p, p)); TOC(TS_HPCG_T_WAXPBY, t);
        }
        TIC(t); TS_CHECK(ops->spmv(I, p, Ap)); TOC(TS_HPCG_T_SPMV, t);
        TIC(t); TS_CHECK(ops->dot(I, p, Ap, &pAp, tar)); TOC(TS_HPCG_T_DDOT, t);
        alpha = rtz / pAp;
        TIC(t);
        TS_CHECK(ops->waxpby(I, 1.0, x, alpha, p, x));
        TS_CHECK(ops->waxpby(I, 1.0, r, -alpha, Ap, r));
        TOC(TS_HPCG_T_WAXPBY, t);
        TIC(t); TS_CHECK(ops->dot(I, r, r, &normr, tar)); TOC(TS_HPCG_T_DDOT, t);
        normr = sqrt(normr);
    }
    times[TS_HPCG_T_TOTAL] += ts_now() - t0;
    res->niters = k - 1;
    res->normr = normr;
    res->normr0 = normr0;
    return 0;
}
