// ts_hpcg_mg_ref.c: HPCG's ComputeMG, reference version (the V-cycle, injection).
#include <string.h>

#include "algorithms/hpcg/ts_hpcg.h"
#include "core/ts_error.h"

// The V-cycle: zero x, pre-smooth, residual, restrict by injection, recurse, prolong, post-smooth;
// one SYMGS on the coarsest level.
int ts_hpcg_mg(const ts_comm *c, ts_hpcg_level *A, const double *r, double *x) {
    memset(x, 0, sizeof(double) * (size_t)A->ncol);
    if (!A->coarse) return ts_hpcg_symgs(c, A, r, x);
    TS_CHECK(ts_hpcg_symgs(c, A, r, x));
    TS_CHECK(ts_hpcg_spmv(c, A, x, A->Axf));
    const ts_hpcg_level *C = A->coarse;
    const int32_t *f2c = A->f2c;
#pragma omp parallel for schedule(static)
    for (int32_t i = 0; i < C->nrow; i++) A->rc[i] = r[f2c[i]] - A->Axf[f2c[i]];
    TS_CHECK(ts_hpcg_mg(c, A->coarse, A->rc, A->xc));
#pragma omp parallel for schedule(static)
    for (int32_t i = 0; i < C->nrow; i++) x[f2c[i]] += A->xc[i];
    return ts_hpcg_symgs(c, A, r, x);
}
