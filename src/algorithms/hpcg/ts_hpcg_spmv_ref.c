// ts_hpcg_spmv_ref.c: HPCG's ComputeSPMV, reference version (CSR-like rows on the CPU, OpenMP).
#include "algorithms/hpcg/ts_hpcg.h"
#include "core/ts_error.h"

int ts_hpcg_spmv(const ts_comm *c, ts_hpcg_level *A, double *x, double *y) {
    TS_CHECK(ts_hpcg_halo(c, A, x));
    const int64_t *rp = A->rowptr;
    const int32_t *col = A->col;
    const double *val = A->val;
#pragma omp parallel for schedule(static)
    for (int32_t i = 0; i < A->nrow; i++) {
        double s = 0.0;
        for (int64_t j = rp[i]; j < rp[i + 1]; j++) s += val[j] * x[col[j]];
        y[i] = s;
    }
    return 0;
}
