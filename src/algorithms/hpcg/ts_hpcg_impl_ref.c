// ts_hpcg_impl_ref.c: the reference implementation (ts_hpcg_impl): the operations CG runs, over the *_ref kernels.
#include <stdlib.h>
#include <string.h>

#include "algorithms/hpcg/ts_hpcg.h"
#include "core/ts_error.h"

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

void ts_hpcg_impl_init(ts_hpcg_impl *I, const ts_hpcg_ops *ops, void *state, const ts_comm *comm, int32_t nrow,
                       int32_t ncol, double *const v[7]) {
    memset(I, 0, sizeof *I);
    I->ops = ops, I->state = state, I->comm = comm, I->nrow = nrow, I->ncol = ncol;
    double **member[7] = {&I->b, &I->x, &I->xexact, &I->r, &I->z, &I->p, &I->Ap};
    for (int q = 0; q < 7; q++) *member[q] = v[q];
}

void ts_hpcg_impl_ref(ts_hpcg_problem *P, ts_hpcg_impl *I) {
    double *v[7] = {P->b, P->x, P->xexact, P->r, P->z, P->p, P->Ap};
    ts_hpcg_impl_init(I, &ref_ops, P, &P->comm, P->A->nrow, P->A->ncol, v);
}
