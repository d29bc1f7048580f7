// ts_hpl_solve.c: back substitution U x = y over the grid (HPL_pdtrsv), y being the factored column N+1.
//
// Block columns from the last to the first: the ranks of the diagonal block's process row sum their
// partial products for that block into the diagonal owner, which solves the small triangle; the
// block of x goes down its process column, whose ranks add U(:, block) x(block) to their partial
// products (a GEMV in execution memory). At the end x is replicated on every rank of the grid.
// One process whose backend solves where the matrix lives (x->solve_local: the device path) does
// that instead. In the transposed layout (s->trans: one process row, [A|b] stored as A^T) y is row
// lb of the local A^T, the diagonal block comes to the host as U^T (solved as its transpose), and the
// partial products read U's block column as rows of A^T.
#include <stdlib.h>
#include <string.h>

#include "algorithms/hpl/ts_hpl_internal.h"
#include "core/ts_error.h"
#include "kernels/cpu/ts_cpu_blas12.h"

int ts_hpl_solve(ts_hpl_state *s) {
    const ts_hpl_xops *x = s->x;
    if (s->P == 1 && s->Q == 1 && x->solve_local) {
        ts_hpl_fail(s, x->solve_local(s));
        return s->err;
    }
    int64_t N = s->N, NB = s->NB, mp = s->mp;
    int P = s->P, Q = s->Q;
    int qb = ts_hpl_owner(N, NB, Q);
    int64_t lb = ts_hpl_g2l(N, NB, Q);
    int64_t nblk = (N + NB - 1) / NB;
    double *xs = s->xsol;
    memset(xs, 0, (size_t)N * sizeof(double));
    double *bh = malloc((size_t)(mp + 1) * sizeof(double));
    double *work = malloc((size_t)(3 * NB + NB * NB) * sizeof(double));
    double *acc = NULL;
    int rc = 0;
    if (!bh || !work) rc = TS_ERROR(TS_ERR_NOMEM, "solve workspace");
    if (rc == 0 && mp > 0) rc = x->xmalloc(s, (size_t)mp * sizeof(double), (void **)&acc);
    if (rc == 0 && mp > 0) { // acc = 0 (copied from a zeroed host vector)
        memset(bh, 0, (size_t)mp * sizeof(double));
        rc = x->to_x(s, 0, acc, mp, bh, mp, mp, 1);
        if (rc == 0) rc = x->sync(s, 0);
    }
    if (rc == 0 && s->mycol == qb && mp > 0) {
        rc = s->trans ? x->to_host(s, 0, bh, 1, s->A + lb, s->lda, 1, mp)
                      : x->to_host(s, 0, bh, mp, s->A + lb * s->lda, s->lda, mp, 1);
        if (rc == 0) rc = x->sync(s, 0);
    }
    ts_hpl_fail(s, rc);
    double *part = work, *r = work + NB, *D = work + 3 * NB;
    for (int64_t bj = nblk - 1; bj >= 0; bj--) {
        int64_t j0 = bj * NB, w = N - j0 < NB ? N - j0 : NB;
        int pj = (int)(bj % P), qj = (int)(bj % Q);
        int64_t lr = ts_hpl_g2l(j0, NB, P), lc = ts_hpl_g2l(j0, NB, Q);
        if (s->myrow == pj) {
            if (s->err == 0) {
                rc = x->to_host(s, 0, part, w, acc + lr, mp, w, 1);
                if (rc == 0 && s->mycol == qj) // (transposed: D = U^T)
                    rc = x->to_host(s, 0, D, NB, s->A + (s->trans ? lc + lr * s->lda : lr + lc * s->lda), s->lda, w, w);
                if (rc == 0) rc = x->sync(s, 0);
                ts_hpl_fail(s, rc);
            }
            for (int64_t i = 0; i < w; i++) part[i] = (s->mycol == qb ? bh[lr + i] : 0.0) - part[i];
            ts_hpl_fail(s, ts_comm_reduce_sum_d(&s->row, part, r, (int)w, qj));
            if (s->mycol == qj) {
                if (s->trans) ts_cpu_dtrsv('L', 'T', 'N', w, D, NB, r, 1);
                else ts_cpu_dtrsv('U', 'N', 'N', w, D, NB, r, 1);
                memcpy(xs + j0, r, (size_t)w * sizeof(double));
            }
        }
        if (s->mycol == qj) {
            ts_hpl_fail(s, ts_comm_bcast(&s->col, xs + j0, (size_t)w * sizeof(double), pj));
            int64_t nr = ts_hpl_nbefore(j0, NB, s->myrow, P);
            if (nr > 0 && s->err == 0) {
                // xs + j0 stays untouched until the end, so the copy may run late
                double *xd = s->U; // execution-memory scratch (NB x nq, free after the LU)
                rc = x->to_x(s, 0, xd + (bj % 2) * NB, NB, xs + j0, w, w, 1);
                // acc(0:nr) += U(0:nr, block) x(block); transposed: acc^T += x^T (rows lc.. of A^T)
                if (rc == 0 && s->trans)
                    rc = x->gemm_nn(s, 0, 1, nr, w, 1.0, xd + (bj % 2) * NB, 1, s->A + lc, s->lda, 1.0, acc, 1);
                else if (rc == 0)
                    rc = x->gemm_nn(s, 0, nr, 1, w, 1.0, s->A + lc * s->lda, s->lda,
                                    xd + (bj % 2) * NB, w, 1.0, acc, mp);
                ts_hpl_fail(s, rc);
            }
        }
    }
    ts_hpl_fail(s, x->sync(s, 0));
    // replicate x: the ranks of process row 0 contribute the blocks of their process column
    for (int64_t bj = 0; bj < nblk; bj++) {
        int64_t j0 = bj * NB, w = N - j0 < NB ? N - j0 : NB;
        if (s->myrow != 0 || s->mycol != (int)(bj % Q)) memset(xs + j0, 0, (size_t)w * sizeof(double));
    }
    int64_t done = 0;
    while (done < N) { // allreduce in pieces that fit an int count
        int64_t n = N - done > (1 << 28) ? (1 << 28) : N - done;
        ts_hpl_fail(s, ts_comm_allreduce_d(&s->grid, xs + done, (int)n, TS_COMM_SUM));
        done += n;
    }
    if (acc) x->xfree(s, acc);
    free(bh);
    free(work);
    return s->err;
}
