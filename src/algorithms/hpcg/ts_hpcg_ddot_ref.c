// ts_hpcg_ddot_ref.c: HPCG's ComputeDotProduct, reference version (OpenMP, then an allreduce).
#include "algorithms/hpcg/ts_hpcg.h"
#include "core/ts_error.h"
#include "core/ts_timer.h"

int ts_hpcg_dot(const ts_comm *c, int32_t n, const double *x, const double *y, double *out,
                double *t_allreduce) {
    double s = 0.0;
    if (x == y) {
#pragma omp parallel for schedule(static) reduction(+ : s)
        for (int32_t i = 0; i < n; i++) s += x[i] * x[i];
    } else {
#pragma omp parallel for schedule(static) reduction(+ : s)
        for (int32_t i = 0; i < n; i++) s += x[i] * y[i];
    }
    double t = ts_now();
    TS_CHECK(ts_comm_allreduce_d(c, &s, 1, TS_COMM_SUM));
    if (t_allreduce) *t_allreduce += ts_now() - t;
    *out = s;
    return 0;
}
