// ts_hpcg_opt_kernels.c: the CPU versions of HPCG's optimized kernels (OpenMP over rows); the CPU engine and simulated devices run them.
#include <string.h>

#include "algorithms/hpcg/ts_hpcg_opt_kernels.h"
#include "core/ts_error.h"
#include "ts_config.h"

int ts_hpcg_xk_gen_cpu(void *args) {
    const ts_hpcg_xk_gen *a = args;
#pragma omp parallel for schedule(static)
    for (int32_t i = 0; i < a->nrow; i++) ts_hpcg_gen_row(a, i);
    return 0;
}

int ts_hpcg_xk_jpl_cpu(void *args) {
    const ts_hpcg_xk_jpl *a = args;
    int32_t left = 0;
#pragma omp parallel for schedule(static) reduction(+ : left)
    for (int32_t i = 0; i < a->nrow; i++) left += ts_hpcg_jpl_row(a, i);
    *a->left += left;
    return 0;
}

int ts_hpcg_xk_recolor_cpu(void *args) {
    const ts_hpcg_xk_recolor *a = args;
    if (a->relabel) {
#pragma omp parallel for schedule(static)
        for (int32_t i = 0; i < a->nrow; i++) a->color[i] = a->map[a->color[i]];
        return 0;
    }
    const int32_t n = a->cnx * a->cny * a->cnz;
    for (int32_t k = 0; k < n; k++) a->count[a->color[ts_hpcg_f2c_nat(k, a->cnx, a->cny, a->fnx, a->fny)]]++;
    return 0;
}

int ts_hpcg_xk_cstat_cpu(void *args) {
    const ts_hpcg_xk_cstat *a = args;
    const int M = TS_HPCG_MAX_BLOCKS;
    int32_t *st = a->stats;
    for (int32_t i = 0; i < a->nrow; i++) {
        int nl, nu, nh, same;
        ts_hpcg_cstat_row(a, i, &nl, &nu, &nh, &same);
        const int32_t col = a->color[i];
        if (col < 0 || col >= TS_HPCG_MAX_COLORS) {
            a->key[i] = 0;
            st[3 * M]++; // an uncoloured row or a colour out of range: not a valid colouring
            continue;
        }
        const int32_t c = 2 * col + (a->split && nh > 0);
        a->key[i] = c;
        st[c]++;
        if (nl > st[M + c]) st[M + c] = nl;
        if (nu > st[2 * M + c]) st[2 * M + c] = nu;
        st[3 * M] += same;
    }
    return 0;
}

int ts_hpcg_xk_perm_cpu(void *args) {
    const ts_hpcg_xk_perm *a = args;
    int32_t pos[TS_HPCG_MAX_BLOCKS];
    memcpy(pos, a->cstart, sizeof pos);
    // A counting sort: stable, so rows of one block keep their natural order.
    for (int32_t i = 0; i < a->nrow; i++) {
        const int32_t p = pos[a->bkey[i]]++;
        a->perm[i] = p;
        a->iperm[p] = i;
    }
    return 0;
}

int ts_hpcg_xk_ell_cpu(void *args) {
    const ts_hpcg_xk_ell *a = args;
#pragma omp parallel for schedule(static)
    for (int32_t p = 0; p < a->nrow; p++) ts_hpcg_ell_row(a, p);
    return 0;
}

int ts_hpcg_xk_f2c_cpu(void *args) {
    const ts_hpcg_xk_f2c *a = args;
    const int32_t n = a->cnx * a->cny * a->cnz;
#pragma omp parallel for schedule(static)
    for (int32_t k = 0; k < n; k++) ts_hpcg_f2c_row(a, k);
    return 0;
}

int ts_hpcg_xk_remap_cpu(void *args) {
    const ts_hpcg_xk_remap *a = args;
    for (int32_t k = 0; k < a->n; k++) a->out[k] = a->map[a->in[k]];
    return 0;
}

int ts_hpcg_xk_sweep_cpu(void *args) {
    const ts_hpcg_xk_sweep *a = args;
#pragma omp parallel for schedule(static)
    for (int32_t i = 0; i < a->b.nr; i++) ts_hpcg_sweep_row(a, &a->b, a->mode, i);
#pragma omp parallel for schedule(static)
    for (int32_t i = 0; i < a->h.nr; i++) ts_hpcg_sweep_row(a, &a->h, a->mode, i);
    return 0;
}

int ts_hpcg_xk_spmv_cpu(void *args) {
    const ts_hpcg_xk_spmv *a = args;
    const ts_hpcg_xk_sweep s = {.mode = TS_HPCG_SPMV, .diag = a->diag, .x = (double *)a->x, .t = a->y};
    for (int k = 0; k < a->nb; k++) {
        const ts_hpcg_cblk *b = &a->blk[a->ord[k]];
#pragma omp parallel for schedule(static)
        for (int32_t i = 0; i < b->nr; i++) ts_hpcg_sweep_row(&s, b, TS_HPCG_SPMV, i);
    }
    return 0;
}

int ts_hpcg_xk_restrict_cpu(void *args) {
    const ts_hpcg_xk_restrict *a = args;
#pragma omp parallel for schedule(static)
    for (int32_t k = 0; k < a->n; k++) ts_hpcg_restrict_row(a, k);
    return 0;
}

int ts_hpcg_xk_restrict1_cpu(void *args) {
    const ts_hpcg_xk_restrict1 *a = args;
#pragma omp parallel for schedule(static)
    for (int32_t i = 0; i < a->b.nr; i++) ts_hpcg_restrict1_row(a, i);
    return 0;
}

int ts_hpcg_xk_prolong_cpu(void *args) {
    const ts_hpcg_xk_prolong *a = args;
#pragma omp parallel for schedule(static)
    for (int32_t k = 0; k < a->n; k++) a->x[a->fr[k]] += a->xc[a->cq[k]];
    return 0;
}

int ts_hpcg_xk_waxpby_cpu(void *args) {
    const ts_hpcg_xk_waxpby *a = args;
    const double al = a->alpha, be = a->beta, *x = a->x, *y = a->y;
    double *w = a->w;
#pragma omp parallel for schedule(static)
    for (int32_t i = 0; i < a->n; i++) w[i] = al * x[i] + be * y[i];
    return 0;
}

int ts_hpcg_xk_dot_cpu(void *args) {
    const ts_hpcg_xk_dot *a = args;
    const double *x = a->x, *y = a->y;
    double s = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : s)
    for (int32_t i = 0; i < a->n; i++) s += x[i] * y[i];
    a->out[0] = s;
    return 0;
}

int ts_hpcg_xk_index_cpu(void *args) {
    const ts_hpcg_xk_index *a = args;
#pragma omp parallel for schedule(static)
    for (int32_t k = 0; k < a->n; k++) ts_hpcg_index_row(a, k);
    return 0;
}

#if !TS_HAVE_CUDA
int ts_hpcg_xk_perm_temp_cuda(int32_t nrow, size_t *bytes) {
    (void)nrow;
    *bytes = 0;
    TS_RAISE(TS_ERR_UNSUPPORTED, "hpcg: this build has no CUDA kernels");
}
#endif
