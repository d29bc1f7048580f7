// ts_hpcg_kernels.c: HPCG's CPU kernels: halo exchange (nonblocking MPI), SpMV, SYMGS, the V-cycle, DDOT, WAXPBY.
#include <math.h>
#include <string.h>

#include "algorithms/hpcg/ts_hpcg.h"
#include "core/ts_error.h"
#include "core/ts_timer.h"

#define HALO_TAG 99

int ts_hpcg_halo(const ts_hcomm *c, ts_hpcg_level *A, double *x) {
#if TS_HAVE_MPI
    if (A->nneigh == 0 || c->size == 1) return 0;
    MPI_Request req[2 * 26 + 2];
    int nr = 0;
    // Receives first, straight into the halo part of x; then pack and send.
    for (int k = 0; k < A->nneigh; k++)
        if (MPI_Irecv(x + A->nrow + A->recv_off[k], A->recv_count[k], MPI_DOUBLE, A->neigh[k], HALO_TAG,
                      c->comm, &req[nr++]) != MPI_SUCCESS)
            TS_RAISE(TS_ERR_MPI, "hpcg: halo MPI_Irecv from rank %d failed", A->neigh[k]);
    for (int32_t i = 0; i < A->nsend; i++) A->send_buf[i] = x[A->send_idx[i]];
    for (int k = 0; k < A->nneigh; k++)
        if (MPI_Isend(A->send_buf + A->send_off[k], A->send_count[k], MPI_DOUBLE, A->neigh[k], HALO_TAG,
                      c->comm, &req[nr++]) != MPI_SUCCESS)
            TS_RAISE(TS_ERR_MPI, "hpcg: halo MPI_Isend to rank %d failed", A->neigh[k]);
    if (MPI_Waitall(nr, req, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
        TS_RAISE(TS_ERR_MPI, "hpcg: halo MPI_Waitall failed");
#else
    (void)c; (void)A; (void)x;
#endif
    return 0;
}

int ts_hpcg_spmv(const ts_hcomm *c, ts_hpcg_level *A, double *x, double *y) {
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

// One forward and one backward Gauss-Seidel sweep in natural row order (the reference's
// sequential semantics: every row sees the rows updated before it).
int ts_hpcg_symgs(const ts_hcomm *c, ts_hpcg_level *A, const double *r, double *x) {
    TS_CHECK(ts_hpcg_halo(c, A, x));
    const int64_t *rp = A->rowptr;
    const int32_t *col = A->col;
    const double *val = A->val;
    for (int32_t i = 0; i < A->nrow; i++) {
        const double d = val[A->diag[i]];
        double s = r[i];
        for (int64_t j = rp[i]; j < rp[i + 1]; j++) s -= val[j] * x[col[j]];
        s += x[i] * d; // the loop took the diagonal term out
        x[i] = s / d;
    }
    for (int32_t i = A->nrow - 1; i >= 0; i--) {
        const double d = val[A->diag[i]];
        double s = r[i];
        for (int64_t j = rp[i]; j < rp[i + 1]; j++) s -= val[j] * x[col[j]];
        s += x[i] * d;
        x[i] = s / d;
    }
    return 0;
}

// The V-cycle: zero x, pre-smooth, residual, restrict by injection, recurse, prolong, post-smooth;
// one SYMGS on the coarsest level.
int ts_hpcg_mg(const ts_hcomm *c, ts_hpcg_level *A, const double *r, double *x) {
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

int ts_hpcg_dot(const ts_hcomm *c, int32_t n, const double *x, const double *y, double *out,
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
    TS_CHECK(ts_hc_allreduce_d(c, &s, 1, TS_HC_SUM));
    if (t_allreduce) *t_allreduce += ts_now() - t;
    *out = s;
    return 0;
}

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
