// ts_hpcg_waxpby_ref.c: HPCG's ComputeWAXPBY, reference version (OpenMP).
#include "algorithms/hpcg/ts_hpcg.h"

void ts_hpcg_waxpby(int32_t n, double alpha, const double *x, double beta, const double *y, double *w) {
    if (alpha == 1.0) {
#pragma omp parallel for schedule(static)
        for (int32_t i = 0; i < n; i++) w[i] = x[i] + beta * y[i];
    } else if (beta == 1.0) {
#pragma omp parallel for schedule(static)
        for (int32_t i = 0; i < n; i++) w[i] = alpha * x[i] + y[i];
    } else {
#pragma omp parallel for schedule(static)
        for (int32_t i = 0; i < n; i++) w[i] = alpha * x[i] + beta * y[i];
    }
}
