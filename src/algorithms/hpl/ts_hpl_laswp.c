// ts_hpl_laswp.c: row interchanges of a panel's pivots on the trailing columns and the U broadcast along the process column.
//
// The pivots of one panel move at most 2*jb distinct rows S: the diagonal-block rows and the pivot
// rows. Every rank derives the same plan from the pivots; then, for a range of local columns,
//  - long (SWAP 1, HPL's spread-roll): the ranks allgather the old contents of S (gathered by
//    process row) and each builds U and its own changed rows;
//  - binary exchange (SWAP 0): the rows are gathered on the diagonal-block owner, which builds U
//    and scatters the changed rows back, then broadcasts U;
//  - mix (SWAP 2): binary exchange up to swap_threshold columns, long above.
// With one process row no message is needed and everything stays in execution memory. On devices
// with a device communicator along the column (NCCL) the rows go device to device, as by long.
#include <stdlib.h>
#include <string.h>

#include "algorithms/hpl/ts_hpl_internal.h"
#include "core/ts_error.h"
#include "core/ts_log.h"
#include "core/ts_timer.h"
#include "kernels/ts_lu_kernels.h"

static int64_t find_row(const int64_t *S, int64_t n, int64_t r) {
    int64_t lo = 0, hi = n - 1;
    while (lo <= hi) {
        int64_t mid = (lo + hi) / 2;
        if (S[mid] == r) return mid;
        if (S[mid] < r) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

int ts_hpl_swap_plan(ts_hpl_state *s, ts_hpl_panel *p) {
    int jb = p->jb, P = s->P;
    int64_t j = p->j, NB = s->NB;
    int64_t *S = malloc(sizeof(int64_t) * (size_t)(2 * jb) * 4);
    if (!S) return ts_hpl_fail(s, TS_ERROR(TS_ERR_NOMEM, "swap plan"));
    int64_t *cur = S + 2 * jb, *pos = S + 4 * jb, *order = S + 6 * jb;
    int64_t ns = 0;
    for (int i = 0; i < jb; i++) S[ns++] = j + i;
    for (int i = 0; i < jb; i++)
        if (p->ipiv[i] >= j + jb) S[ns++] = p->ipiv[i];
    qsort(S, (size_t)ns, sizeof(int64_t), cmp_i64);
    int64_t u = 0;
    for (int64_t t = 0; t < ns; t++)
        if (u == 0 || S[t] != S[u - 1]) S[u++] = S[t];
    ns = u;
    for (int64_t t = 0; t < ns; t++) cur[t] = t; // S index of the content now at S[t]
    for (int i = 0; i < jb; i++) {
        int64_t a = find_row(S, ns, j + i), b = find_row(S, ns, p->ipiv[i]);
        int64_t tmp = cur[a];
        cur[a] = cur[b];
        cur[b] = tmp;
    }
    // gather order: by owning process row, ascending rows within
    int64_t n = 0;
    for (int q = 0; q < P; q++) {
        p->cnt[q] = 0;
        p->rcnt[q] = 0;
        for (int64_t t = 0; t < ns; t++) {
            if (ts_hpl_owner(S[t], NB, P) != q) continue;
            pos[t] = n;
            order[n++] = t;
            p->cnt[q]++;
            if (S[t] >= j + jb && cur[t] != t) p->rcnt[q]++;
        }
    }
    p->dsp[0] = p->rdsp[0] = 0;
    for (int q = 1; q < P; q++) {
        p->dsp[q] = p->dsp[q - 1] + p->cnt[q - 1];
        p->rdsp[q] = p->rdsp[q - 1] + p->rcnt[q - 1];
    }
    p->ns = ns;
    p->npack = p->cnt[s->myrow];
    p->nown = p->rcnt[s->myrow];
    int64_t *pk = p->plan, *ub = pk + p->npack, *ab = ub + jb, *al = ab + p->nown, *uid = al + p->nown,
            *ab0 = uid + jb;
    int64_t np = 0, no = 0;
    for (int64_t t = 0; t < ns; t++) {
        if (ts_hpl_owner(S[t], NB, P) != s->myrow) continue;
        pk[np++] = ts_hpl_g2l(S[t], NB, P);
        if (S[t] >= j + jb && cur[t] != t) {
            al[no] = ts_hpl_g2l(S[t], NB, P);
            ab[no] = pos[cur[t]];
            ab0[no] = jb + no;
            no++;
        }
    }
    for (int i = 0; i < jb; i++) {
        ub[i] = pos[cur[find_row(S, ns, j + i)]];
        uid[i] = i;
    }
    if (s->myrow == p->curr) { // SWAP 0: gather-order source of each row sent back, by process row
        int64_t nb = 0;
        for (int q = 0; q < P; q++)
            for (int64_t t = 0; t < ns; t++)
                if (ts_hpl_owner(S[t], NB, P) == q && S[t] >= j + jb && cur[t] != t)
                    p->back[nb++] = pos[cur[t]];
    }
    free(S);
    return 0;
}

static void copy_rows_host(double *dst, const double *src, const int64_t *sidx, int64_t n, int64_t nc) {
    for (int64_t i = 0; i < n; i++) memcpy(dst + i * nc, src + sidx[i] * nc, (size_t)nc * sizeof(double));
}

int ts_hpl_laswp(ts_hpl_state *s, ts_hpl_panel *p, int64_t c0, int64_t c1, int st) {
    int64_t nc = c1 - c0;
    if (nc <= 0) return 0;
    const ts_hpl_xops *x = s->x;
    int jb = p->jb;
    double *A0 = s->A + c0 * s->lda, *U0 = s->U + c0 * s->NB;
    const int64_t *xp = p->xplan;
    const int64_t *xpk = xp, *xub = xpk + p->npack, *xab = xub + jb, *xal = xab + p->nown,
                  *xuid = xal + p->nown, *xab0 = xuid + jb;
    double *scr = s->xscr[st];
    int rc = 0;
    double t0 = ts_now();
    if (s->trans && s->P == 1) { // rows of A are columns of A^T: U0^T (nc x jb, ld ldut) and the changed rows by
        // copies (the plan was checked for it when the panel was loaded)
        rc = x->swap_rows_t(s, st, s->A + c0, s->lda, xpk, xub, jb, s->U + c0, s->ldut, xal, xab, p->nown, nc);
        strcpy(s->swap_used, "local-rows");
        s->t_iter_swap += ts_now() - t0;
        return ts_hpl_fail(s, rc);
    }
    if (s->trans) {
        // several process rows (the gathered panel's path, which has the column's device
        // communicator): own rows of A^T copied as columns of the scratch (ld nc) to their
        // gather-order place, every process row's rows received at theirs, then U0^T and the changed
        // rows copied out of it; each row a streaming copy. The exchange is called even after a
        // failed copy: the other ranks wait for it.
        if (!s->nccl_col) return ts_hpl_fail(s, TS_ERROR(TS_ERR_STATE, "hpl: transposed swaps need the column's device exchange"));
        strcpy(s->swap_used, s->nccl_col == 1 ? "nccl" : "devexch-emul");
        rc = x->copy_cols(s, st, s->A + c0, s->lda, xpk, p->npack, nc, scr + p->dsp[s->myrow] * nc, nc, NULL);
        int xrc = ts_hpl_xdev_col_allgather(s, st, scr, p->cnt, p->dsp, nc);
        if (rc == 0) rc = xrc;
        if (rc == 0) rc = x->copy_cols(s, st, scr, nc, xub, jb, nc, s->U + c0, s->ldut, NULL);
        if (rc == 0) rc = x->copy_cols(s, st, scr, nc, xab, p->nown, nc, s->A + c0, s->lda, xal);
        s->t_iter_swap += ts_now() - t0;
        return ts_hpl_fail(s, rc);
    }
    if (s->P == 1 && s->swap_fused && ts_lu_swap_rows_fits(p->npack, jb, p->nown, s->lda)) {
        rc = x->swap_rows(s, st, A0, s->lda, xpk, p->npack, xub, jb, U0, s->NB, xal, xab, p->nown, nc);
        // the device grants a block too little shared memory: split from here on
        if (rc == TS_ERR_UNSUPPORTED) {
            if (s->grid.rank == 0) TS_LOG_W("hpl: row swaps split (pack and unpack): %s", ts_error_string());
            ts_error_clear();
            s->swap_fused = 0;
        } else {
            strcpy(s->swap_used, "local-fused");
            s->t_iter_swap += ts_now() - t0;
            return ts_hpl_fail(s, rc);
        }
    }
    if (s->P == 1) {
        strcpy(s->swap_used, "local");
        rc = x->pack_rows(s, st, A0, s->lda, xpk, p->npack, nc, scr);
        if (rc == 0) rc = x->unpack_rows(s, st, scr, xub, jb, nc, U0, s->NB, xuid);
        if (rc == 0) rc = x->unpack_rows(s, st, scr, xab, p->nown, nc, A0, s->lda, xal);
        s->t_iter_swap += ts_now() - t0;
        return ts_hpl_fail(s, rc);
    }
    if (x->is_device && s->nccl_col) {
        // device to device: own rows packed at their gather-order place, every process row's rows
        // received at theirs (NCCL on stream st), then unpacked as by the long variant. The
        // exchange is called even after a failed pack: the other ranks wait for it.
        strcpy(s->swap_used, s->nccl_col == 1 ? "nccl" : "devexch-emul");
        rc = x->pack_rows(s, st, A0, s->lda, xpk, p->npack, nc, scr + p->dsp[s->myrow] * nc);
        int xrc = ts_hpl_xdev_col_allgather(s, st, scr, p->cnt, p->dsp, nc);
        if (rc == 0) rc = xrc;
        if (rc == 0) rc = x->unpack_rows(s, st, scr, xub, jb, nc, U0, s->NB, xuid);
        if (rc == 0) rc = x->unpack_rows(s, st, scr, xab, p->nown, nc, A0, s->lda, xal);
        s->t_iter_swap += ts_now() - t0;
        return ts_hpl_fail(s, rc);
    }
    int v = s->hc->swap;
    if (v == 2) v = nc <= s->hc->swap_threshold ? 0 : 1;
    strcpy(s->swap_used, v == 0 ? "binexch" : "long");
    rc = x->pack_rows(s, st, A0, s->lda, xpk, p->npack, nc, scr);
    double *hs = scr, *hr = s->hrecv[st];
    if (rc == 0 && x->is_device) {
        hs = s->hsend[st];
        rc = x->to_host(s, st, hs, p->npack * nc, scr, p->npack * nc, p->npack * nc, 1);
        if (rc == 0) rc = x->sync(s, st);
    }
    int P = s->P;
    int64_t *cnt = malloc(sizeof(int64_t) * 2 * (size_t)P);
    if (!cnt) rc = TS_ERROR(TS_ERR_NOMEM, "swap counts");
    int64_t *dsp = cnt ? cnt + P : NULL;
    int64_t nhb = 0; // rows of the host result
    const int64_t *bu = xub, *ba = xab;
    if (v == 1) {
        for (int q = 0; cnt && q < P; q++) {
            cnt[q] = p->cnt[q] * nc;
            dsp[q] = p->dsp[q] * nc;
        }
        // on failure keep the collective pattern: every rank still calls it
        int mrc = ts_comm_allgatherv(&s->col, hs, p->npack * nc, hr, cnt, dsp);
        if (rc == 0) rc = mrc;
        nhb = p->ns;
    } else {
        for (int q = 0; cnt && q < P; q++) {
            cnt[q] = p->cnt[q] * nc;
            dsp[q] = p->dsp[q] * nc;
        }
        int mrc = ts_comm_gatherv(&s->col, hs, p->npack * nc, hr, cnt, dsp, p->curr);
        if (rc == 0) rc = mrc;
        double *hb = s->hsend[st]; // the gathered rows are in hr; build [U | rows sent back]
        if (s->myrow == p->curr && rc == 0) {
            copy_rows_host(hb, hr, p->plan + p->npack, jb, nc);
            int64_t nback = p->rdsp[P - 1] + p->rcnt[P - 1];
            copy_rows_host(hb + (int64_t)jb * nc, hr, p->back, nback, nc);
        }
        for (int q = 0; cnt && q < P; q++) {
            cnt[q] = p->rcnt[q] * nc;
            dsp[q] = p->rdsp[q] * nc;
        }
        mrc = ts_comm_scatterv(&s->col, hb + (int64_t)jb * nc, cnt, dsp, hr + (int64_t)jb * nc,
                               p->nown * nc, p->curr);
        if (rc == 0) rc = mrc;
        if (s->myrow == p->curr) memcpy(hr, hb, (size_t)jb * (size_t)nc * sizeof(double));
        mrc = ts_comm_bcast(&s->col, hr, (size_t)jb * (size_t)nc * sizeof(double), p->curr);
        if (rc == 0) rc = mrc;
        nhb = jb + p->nown;
        bu = xuid;
        ba = xab0;
    }
    free(cnt);
    double *xb = hr;
    if (rc == 0 && x->is_device) {
        xb = scr;
        rc = x->to_x(s, st, scr, nhb * nc, hr, nhb * nc, nhb * nc, 1);
    }
    if (rc == 0) rc = x->unpack_rows(s, st, xb, bu, jb, nc, U0, s->NB, xuid);
    if (rc == 0) rc = x->unpack_rows(s, st, xb, ba, p->nown, nc, A0, s->lda, xal);
    s->t_iter_swap += ts_now() - t0;
    return ts_hpl_fail(s, rc);
}
