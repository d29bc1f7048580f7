// ts_hpcg_ddot.c: HPCG's ComputeDotProduct, optimized version: a reduction kernel, then an allreduce.
#include "algorithms/hpcg/ts_hpcg_opt.h"
#include "core/ts_error.h"
#include "core/ts_timer.h"

int ts_hpcg_opt_dot(ts_hpcg_opt *O, int32_t n, const double *x, const double *y, double *out, double *t_allreduce) {
    const ts_hpcg_exec *X = &O->X;
    ts_hpcg_xk_dot a = {n, x, y, O->dot_out, O->dot_part};
    TS_CHECK(TS_HPCG_XRUN(X, dot, a));
    double s;
    if (X->set) {
        TS_CHECK(ts_hpcg_xcopy(X, TS_COPY_D2H, O->dot_host, O->dot_out, sizeof(double)));
        TS_CHECK(ts_hpcg_xsync(X));
        s = O->dot_host[0];
    } else {
        s = O->dot_out[0];
    }
    double t = ts_now();
    TS_CHECK(ts_comm_allreduce_d(O->comm, &s, 1, TS_COMM_SUM));
    if (t_allreduce) *t_allreduce += ts_now() - t;
    *out = s;
    return 0;
}
