// ts_hpcg_kernels.c: HPCG's CPU kernels: halo exchange (nonblocking MPI), SpMV, SYMGS, the V-cycle, DDOT, WAXPBY.
#include <math.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "algorithms/hpcg/ts_hpcg.h"
#include "core/ts_error.h"
#include "core/ts_timer.h"

#define HALO_TAG 99

int ts_hpcg_halo_exchange(const ts_comm *c, const ts_hpcg_halo_plan *h, const double *sbuf, double *rbuf) {
#if TS_HAVE_MPI
    if (h->nneigh == 0 || c->size == 1) return 0;
    MPI_Request req[2 * TS_HPCG_MAX_NEIGH];
    int nr = 0;
    for (int k = 0; k < h->nneigh; k++)
        if (MPI_Irecv(rbuf + h->recv_off[k], h->recv_count[k], MPI_DOUBLE, h->neigh[k], HALO_TAG, c->comm,
                      &req[nr++]) != MPI_SUCCESS)
            TS_RAISE(TS_ERR_MPI, "hpcg: halo MPI_Irecv from rank %d failed", h->neigh[k]);
    for (int k = 0; k < h->nneigh; k++)
        if (MPI_Isend(sbuf + h->send_off[k], h->send_count[k], MPI_DOUBLE, h->neigh[k], HALO_TAG, c->comm,
                      &req[nr++]) != MPI_SUCCESS)
            TS_RAISE(TS_ERR_MPI, "hpcg: halo MPI_Isend to rank %d failed", h->neigh[k]);
    if (MPI_Waitall(nr, req, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
        TS_RAISE(TS_ERR_MPI, "hpcg: halo MPI_Waitall failed");
#else
    (void)c; (void)h; (void)sbuf; (void)rbuf;
#endif
    return 0;
}

int ts_hpcg_halo(const ts_comm *c, ts_hpcg_level *A, double *x) {
    if (A->halo.nneigh == 0 || c->size == 1) return 0;
    for (int32_t i = 0; i < A->halo.nsend; i++) A->send_buf[i] = x[A->send_idx[i]];
    return ts_hpcg_halo_exchange(c, &A->halo, A->send_buf, x + A->nrow);
}

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

// One forward and one backward Gauss-Seidel sweep in natural row order (the reference's
// sequential semantics: every row sees the rows updated before it); on several threads as the
// z-plane pipeline below (the same result, bit for bit).
static inline void gs_row(const ts_hpcg_level *A, const double *r, double *x, int32_t i) {
    const double d = A->val[A->diag[i]];
    double s = r[i];
    for (int64_t j = A->rowptr[i]; j < A->rowptr[i + 1]; j++) s -= A->val[j] * x[A->col[j]];
    s += x[i] * d; // the loop took the diagonal term out
    x[i] = s / d;
}

// One x-line of the grid, rows i0 .. i0 + nx - 1, ascending (forward) or descending.
static inline void gs_line(const ts_hpcg_level *A, const double *r, double *x, int32_t i0, int32_t nx, int fwd) {
    if (fwd)
        for (int32_t i = i0; i < i0 + nx; i++) gs_row(A, r, x, i);
    else
        for (int32_t i = i0 + nx - 1; i >= i0; i--) gs_row(A, r, x, i);
}

// Spins briefly, then yields, then sleeps: with more threads than cores (ranks x threads beyond the
// node's cores) the thread waited for may not be running.
static void wait_progress(atomic_int *p, int need) {
    for (int spins = 0; atomic_load_explicit(p, memory_order_acquire) < need; spins++) {
        if (spins < 200) continue;
        if (spins < 400) sched_yield();
        else nanosleep(&(struct timespec){0, 20000}, NULL);
    }
}

// The sweeps as a pipeline over the z-planes of the local box (rows in natural order x fastest):
// a thread sweeps whole planes, line by line in natural order, and starts line y of plane z once
// the plane before it (in sweep order) has finished lines y - 1, y, y + 1 (the neighbours a row
// needs updated, and past which that plane no longer reads this one). Every row sees exactly what
// the sequential sweep shows it, so the result is the same bit for bit, with lines of contiguous
// rows per thread instead of the scattered rows of a wavefront level.
static int symgs_planes(ts_hpcg_level *A, const double *r, double *x, int nt) {
    const int32_t nx = A->g.nx, ny = A->g.ny, nz = A->g.nz;
    atomic_int *prog = malloc(sizeof(atomic_int) * 2 * (size_t)nz);
    if (!prog) TS_RAISE(TS_ERR_NOMEM, "hpcg: out of memory for the Gauss-Seidel pipeline");
    for (int32_t z = 0; z < 2 * nz; z++) atomic_init(&prog[z], 0);
    atomic_int *fp = prog, *bp = prog + nz; // lines done per plane: forward, backward sweep
#pragma omp parallel num_threads(nt)
    {
#ifdef _OPENMP
        const int t = omp_get_thread_num(), T = omp_get_num_threads();
#else
        const int t = 0, T = 1;
#endif
        for (int32_t z = t; z < nz; z += T)
            for (int32_t y = 0; y < ny; y++) {
                if (z > 0) wait_progress(&fp[z - 1], y + 2 < ny ? y + 2 : ny);
                gs_line(A, r, x, nx * (y + ny * z), nx, 1);
                atomic_store_explicit(&fp[z], y + 1, memory_order_release);
            }
#pragma omp barrier
        for (int32_t k = t; k < nz; k += T) {
            const int32_t z = nz - 1 - k;
            for (int32_t m = 0; m < ny; m++) {
                const int32_t y = ny - 1 - m;
                if (k > 0) wait_progress(&bp[z + 1], m + 2 < ny ? m + 2 : ny);
                gs_line(A, r, x, nx * (y + ny * z), nx, 0);
                atomic_store_explicit(&bp[z], m + 1, memory_order_release);
            }
        }
    }
    free(prog);
    return 0;
}

int ts_hpcg_symgs(const ts_comm *c, ts_hpcg_level *A, const double *r, double *x) {
    TS_CHECK(ts_hpcg_halo(c, A, x));
#ifdef _OPENMP
    int nt = omp_get_max_threads();
#else
    int nt = 1;
#endif
    if (nt > A->g.nz) nt = A->g.nz;
    if (nt > 1) return symgs_planes(A, r, x, nt);
    for (int32_t i = 0; i < A->nrow; i++) gs_row(A, r, x, i); // one thread: the sequential sweep itself
    for (int32_t i = A->nrow - 1; i >= 0; i--) gs_row(A, r, x, i);
    return 0;
}

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

// ---- the reference implementation (ts_hpcg_impl) ----

static ts_hpcg_problem *RP(ts_hpcg_impl *I) { return I->state; }

static int r_spmv(ts_hpcg_impl *I, double *x, double *y) { return ts_hpcg_spmv(I->comm, RP(I)->A, x, y); }
static int r_mg(ts_hpcg_impl *I, const double *r, double *z) { return ts_hpcg_mg(I->comm, RP(I)->A, r, z); }
static int r_dot(ts_hpcg_impl *I, const double *x, const double *y, double *out, double *t_allreduce) {
    return ts_hpcg_dot(I->comm, I->nrow, x, y, out, t_allreduce);
}
static int r_waxpby(ts_hpcg_impl *I, double alpha, const double *x, double beta, const double *y, double *w) {
    ts_hpcg_waxpby(I->nrow, alpha, x, beta, y, w);
    return 0;
}
static int r_vnew(ts_hpcg_impl *I, double **v) {
    *v = calloc((size_t)I->ncol, sizeof(double));
    if (!*v) TS_RAISE(TS_ERR_NOMEM, "hpcg: out of memory for a vector of %d", (int)I->ncol);
    return 0;
}
static void r_vfree(ts_hpcg_impl *I, double *v) { free(v); }
static int r_zero(ts_hpcg_impl *I, double *v) {
    memset(v, 0, sizeof(double) * (size_t)I->ncol);
    return 0;
}
static int r_set(ts_hpcg_impl *I, double *v, const double *nat) {
    memcpy(v, nat, sizeof(double) * (size_t)I->nrow);
    return 0;
}
static int r_get(ts_hpcg_impl *I, double *nat, const double *v) {
    memcpy(nat, v, sizeof(double) * (size_t)I->nrow);
    return 0;
}
static int r_scale_diag(ts_hpcg_impl *I, const double *nat) {
    ts_hpcg_problem *P = RP(I);
    ts_hpcg_level *A = P->A;
    if (!nat) {
        if (!P->diag_saved) return 0;
        for (int32_t i = 0; i < A->nrow; i++) A->val[A->diag[i]] = P->diag_saved[i];
        free(P->diag_saved);
        P->diag_saved = NULL;
        return 0;
    }
    if (!P->diag_saved) {
        P->diag_saved = malloc(sizeof(double) * (size_t)A->nrow);
        if (!P->diag_saved) TS_RAISE(TS_ERR_NOMEM, "hpcg: out of memory saving the diagonal");
        for (int32_t i = 0; i < A->nrow; i++) P->diag_saved[i] = A->val[A->diag[i]];
    }
    for (int32_t i = 0; i < A->nrow; i++) A->val[A->diag[i]] *= nat[i];
    return 0;
}
static int r_fence(ts_hpcg_impl *I) { return 0; }

static const ts_hpcg_ops ref_ops = {"ref", r_spmv, r_mg, r_dot, r_waxpby, r_vnew, r_vfree,
                                    r_zero, r_set, r_get, r_scale_diag, r_fence};

void ts_hpcg_impl_ref(ts_hpcg_problem *P, ts_hpcg_impl *I) {
    memset(I, 0, sizeof *I);
    I->ops = &ref_ops;
    I->comm = &P->comm;
    I->nrow = P->A->nrow;
    I->ncol = P->A->ncol;
    I->b = P->b;
    I->x = P->x;
    I->xexact = P->xexact;
    I->r = P->r;
    I->z = P->z;
    I->p = P->p;
    I->Ap = P->Ap;
    I->state = P;
}
