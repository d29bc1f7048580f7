// ts_burn_check.c: CPU twin of the burn ABFT check (the simulated devices' kernel) and its enqueue.
#include <math.h>
#include <string.h>

#include "core/ts_error.h"
#include "kernels/ts_burn_check.h"
#include "ts_config.h"

// |d| / bound, with NaN/Inf differences and nonzero differences against a zero bound as +Inf.
static double ratio_of(double d, double bound) {
    double a = fabs(d);
    if (!isfinite(a)) return INFINITY;
    if (bound > 0) return a / bound;
    return a == 0 ? 0.0 : INFINITY;
}

int ts_burn_check_cpu(void *args) {
    const ts_burn_check_args *a = args;
    const int64_t m = a->m, n = a->n, ld = a->ldc;
    const double *C = a->C;
    memset(a->rd, 0, (size_t)m * sizeof(double));
    memset(a->rwd, 0, (size_t)m * sizeof(double));
    // Column-major: walk each column once, adding to the row sums on the way.
    for (int64_t j = 0; j < n; j++) {
        const double *c = C + j * ld;
        double t = 0, tw = 0, wj = (double)(j + 1);
        for (int64_t i = 0; i < m; i++) {
            t += c[i];
            tw += (double)(i + 1) * c[i];
            a->rd[i] += c[i];
            a->rwd[i] += wj * c[i];
        }
        a->cd[j] = t - c[m];
        a->cwd[j] = tw - c[m + 1];
    }
    ts_burn_check_result r = {0, 0, 0.0, 0.0};
    for (int64_t i = 0; i < m; i++) {
        a->rd[i] -= C[i + n * ld];
        a->rwd[i] -= C[i + (n + 1) * ld];
        double q = fmax(ratio_of(a->rd[i], a->rb[i]), ratio_of(a->rwd[i], a->rwb[i]));
        if (q == INFINITY || q > 1.0) r.bad_rows++;
        r.max_ratio = fmax(r.max_ratio, q);
    }
    for (int64_t j = 0; j < n; j++) {
        double q = fmax(ratio_of(a->cd[j], a->cb[j]), ratio_of(a->cwd[j], a->cwb[j]));
        if (q == INFINITY || q > 1.0) r.bad_cols++;
        r.max_ratio = fmax(r.max_ratio, q);
    }
    *a->res = r;
    return 0;
}

int ts_burn_check(ts_stream *st, const ts_burn_check_args *a) {
    if (!st || !a || !a->C || !a->res || !a->rd || !a->rwd || !a->cd || !a->cwd || !a->rb || !a->rwb ||
        !a->cb || !a->cwb)
        TS_RAISE(TS_ERR_ARG, "ts_burn_check: NULL argument");
    if (a->m < 1 || a->n < 1 || a->ldc < a->m + 2)
        TS_RAISE(TS_ERR_ARG, "ts_burn_check: m %lld, n %lld, ldc %lld (needs m, n >= 1, ldc >= m + 2)",
                 (long long)a->m, (long long)a->n, (long long)a->ldc);
    ts_kernel k = {"burn_check", 4.0 * (double)a->m * (double)a->n, ts_burn_check_cpu,
#if TS_HAVE_CUDA
                   ts_burn_check_cuda,
#else
                   NULL,
#endif
                   a, sizeof *a};
    return ts_kernel_enqueue(st, &k);
}
