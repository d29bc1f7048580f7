// ts_hpl_lu.c: right-looking blocked LU of [A|b] over the P x Q grid, lookahead depth 0..TS_HPL_MAX_DEPTH (HPL_pdgesv0 / HPL_pdgesvK2).
//
// Per panel k: factor (process column of the panel), broadcast along process rows, then for the
// trailing columns: row swaps + U (ts_hpl_laswp), U = L11^-1 U, A -= L U. Folded (s->fold, on the
// transposed layout when asked for): L21 <- L21 L11^-1 with the panel, then swaps, A -= L U0. With
// lookahead depth d (HPL_pdgesvK2) d panels are pending: in the step that factors panel j, panel
// j's columns first receive the updates of the pending panels j-d .. j-1 in order, panel j is
// factored and sent, and the rest of the trailing matrix (right of panel j) is updated by the
// oldest pending panel j-d only; every column thus sees the panels' updates in the factorization's
// order, as with depth 0. The first d panels are factored ahead (a prologue folded into iteration
// 0) and the last d steps only drain the pending updates. On a device the rest goes on stream 0
// while the next panel is handled on stream 1. A rank outside a panel's process column receives it
// when it first needs it: at the bulk update it makes (step j) or at the lookahead update of a
// panel of its own (step j' - d for the next own panel j' <= j + d), so with d >= 2 the broadcast
// has more steps to arrive while the device works through queued updates.
#include <stdlib.h>
#include <string.h>

#include "algorithms/hpl/ts_hpl_internal.h"
#include "core/ts_error.h"
#include "core/ts_timer.h"
#include "kernels/ts_lu_kernels.h"

// Events: EV_LOAD0+b the panel in buffer b is loaded (stream 1); EV_S0 the last work on stream 0;
// EV_USED0+b stream 0's last update that read buffer b (its execution copy and swap plan) is done.
// b < s->nbuf <= TS_HPL_NPANBUF (ts_hpl_internal.h).
enum { EV_LOAD0 = TS_HPL_EV_LOAD0, EV_S0 = TS_HPL_EV_S0, EV_USED0 = TS_HPL_EV_USED0 };

// Timing stamps of one iteration, read after the factorization (so that recording them never
// waits): the panel factorizations issued in the iteration (panel k+d under lookahead depth d;
// iteration 0 also has the prologue's panels 0..d-1), and for each update call (the lookahead
// updates of the factored panel's columns, one per pending panel, and the update of the rest) the
// row swaps and the TRSM + GEMM; end0 closes the iteration on stream 0. On a device these are
// events on the stream that ran the step; on the CPU path the host clock.
#define MK_FACT (TS_HPL_MAX_DEPTH + 1)                               // factorizations of iteration 0
#define MK_UPD (TS_HPL_MAX_DEPTH * (TS_HPL_MAX_DEPTH + 1) / 2 + 1) // its update calls
struct ts_hpl_marks {
    int f0[MK_FACT], f1[MK_FACT], nf;
    int sw0[MK_UPD], sw1[MK_UPD], up0[MK_UPD], gm0[MK_UPD], up1[MK_UPD], ust[MK_UPD]; // gm0: after the TRSM and U's copy
    int nup;
    int end0;
};
#define TS_HPL_MAX_STAMPS 65536

static void marks_clear(struct ts_hpl_marks *m) {
    m->end0 = -1;
    for (int i = 0; i < MK_FACT; i++) m->f0[i] = m->f1[i] = -1;
    m->nf = 0;
    for (int i = 0; i < MK_UPD; i++) m->sw0[i] = m->sw1[i] = m->up0[i] = m->gm0[i] = m->up1[i] = -1, m->ust[i] = 0;
    m->nup = 0;
}
static int stamp(ts_hpl_state *s, int st) { return s->marks ? s->x->stamp(s, st) : -1; }

void ts_hpl_panel_geom(ts_hpl_state *s, ts_hpl_panel *p, int64_t k) {
    int64_t NB = s->NB;
    p->k = k;
    p->j = k * NB;
    p->jb = (int)(s->N - p->j < NB ? s->N - p->j : NB);
    p->curr = (int)(k % s->P);
    p->root = (int)(k % s->Q);
    p->lr0 = ts_hpl_nbefore(p->j, NB, s->myrow, s->P);
    p->lr1 = ts_hpl_nbefore(p->j + p->jb, NB, s->myrow, s->P);
    p->mL = s->mp - p->lr1;
    p->ldw = p->jb + p->mL;
    p->pc = ts_hpl_g2l(p->j, NB, s->Q);
    p->len = p->ldw * p->jb + p->jb + 1;
    p->W = p->buf;
    p->info = 0;
    p->loaded = 0;
    p->dev_fact = 0;
}

static int panel_inverse(ts_hpl_state *s, ts_hpl_panel *p, int st);

// Makes the panel buffer free for new contents: sends done, device copies from it done.
static int panel_recycle(ts_hpl_state *s, ts_hpl_panel *p, int b) {
    int rc = ts_hpl_panel_wait_sends(s, p);
    if (rc == 0 && p->loaded && s->x->is_device) rc = s->x->ev_sync(s, EV_LOAD0 + b);
    p->loaded = 0;
    p->inv_ready = 0;
    return ts_hpl_fail(s, rc);
}

// Root process column: copy the panel to the host, factor it, write it back.
static int panel_factor(ts_hpl_state *s, ts_hpl_panel *p, int b, int64_t k, int st) {
    const ts_hpl_xops *x = s->x;
    panel_recycle(s, p, b);
    ts_hpl_panel_geom(s, p, k);
    double t0 = ts_now();
    int curr = s->myrow == p->curr;
    double *W = p->W;
    if (!curr)
        for (int c = 0; c < p->jb; c++) memset(W + c * p->ldw, 0, (size_t)p->jb * sizeof(double));
    int64_t m = s->mp - p->lr0;
    double *Ap = s->A + p->lr0 + p->pc * s->lda;
    double *Wp = W + (curr ? 0 : p->jb);
    int rc = 0;
    if (m > 0) rc = x->to_host(s, st, Wp, p->ldw, Ap, s->lda, m, p->jb);
    if (rc == 0) rc = x->sync(s, st);
    ts_hpl_fail(s, rc);
    ts_hpl_pfact(s, p); // communicates even after a local failure
    if (s->err == 0 && m > 0) ts_hpl_fail(s, x->to_x(s, st, Ap, s->lda, Wp, p->ldw, m, p->jb));
    double *piv = W + p->ldw * p->jb;
    for (int i = 0; i < p->jb; i++) piv[i] = (double)p->ipiv[i];
    piv[p->jb] = (double)p->info;
    double dt = ts_now() - t0;
    s->t_iter_fact += dt;
    return s->err;
}

// One process row: LU of the local panel columns in execution memory (LAPACK semantics; the
// panel holds every row below the diagonal), pivots to the host, the panel to the host only when
// other process columns need it.
static int panel_factor_dev(ts_hpl_state *s, ts_hpl_panel *p, int b, int64_t k, int st) {
    const ts_hpl_xops *x = s->x;
    panel_recycle(s, p, b);
    ts_hpl_panel_geom(s, p, k);
    double t0 = ts_now();
    int64_t m = s->mp - p->lr0; // = ldw: with P = 1 the panel is the whole local column
    double *Ap = s->A + p->lr0 + p->pc * s->lda;
    struct ts_hpl_marks *mk = s->marks && s->marks->nf < MK_FACT ? s->marks : NULL;
    if (mk) mk->f0[mk->nf] = stamp(s, st);
    int rc;
    if (s->trans) {
        // the panel's rows of A^T (jb x m) transposed into the panel buffer and factored there; only
        // the diagonal block goes back (U11^T for the solve, L11 for nothing after the update): the
        // update reads L21 from the buffer, which its last reader's event keeps until then (nbuf
        // panels later; HPL reads L only in the update, b being a row of A^T). Folded (s->fold): below
        // the block A^T receives (L21 inv(L11))^T = inv(L11)^T L21^T, one GEMM from the buffer, with
        // inv(L11) made here (the buffer's last reader, nbuf panels ago, is waited for first)
        double *Apt = s->A + p->pc + p->lr0 * s->lda;
        rc = x->wait(s, st, EV_USED0 + b);
        if (rc == 0) rc = x->transpose(s, st, p->jb, m, Apt, s->lda, p->xbuf, m);
        if (rc == 0) rc = x->getrf(s, st, m, p->jb, p->xbuf, m, p->xpiv, p->xpiv + p->jb);
        if (rc == 0) rc = x->transpose(s, st, p->jb, p->jb, p->xbuf, m, Apt, s->lda);
        if (rc == 0 && s->fold) {
            p->xW = p->xbuf;
            p->xld = m;
            rc = panel_inverse(s, p, st);
            if (rc == 0 && m > p->jb)
                rc = x->gemm_nt(s, st, p->jb, m - p->jb, p->jb, 1.0, p->xlinv + s->NB * s->NB, s->NB,
                                p->xbuf + p->jb, m, 0.0, Apt + p->jb * s->lda, s->lda);
        }
    } else {
        rc = x->getrf(s, st, m, p->jb, Ap, s->lda, p->xpiv, p->xpiv + p->jb);
    }
    if (mk) mk->f1[mk->nf++] = stamp(s, st);
    if (rc == 0) rc = x->bytes_to_host(s, st, p->hpiv, p->xpiv, (size_t)(p->jb + 1) * sizeof(int));
    // (transposed: the buffer already holds the panel as it is sent, m = ldw rows)
    if (rc == 0 && s->Q > 1 && s->nccl && !s->trans) { // the panel goes device to device: pack it for the broadcast
        rc = x->wait(s, st, EV_USED0 + b);
        if (rc == 0) rc = x->x_copy(s, st, p->xbuf, p->ldw, Ap, s->lda, m, p->jb);
    } else if (rc == 0 && s->Q > 1 && !s->nccl) {
        rc = s->trans ? x->to_host(s, st, p->W, p->ldw, p->xbuf, m, m, p->jb)
                      : x->to_host(s, st, p->W, p->ldw, Ap, s->lda, m, p->jb);
    }
    if (rc == 0) rc = x->sync(s, st);
    ts_hpl_fail(s, rc);
    for (int i = 0; i < p->jb; i++) p->ipiv[i] = rc == 0 ? p->j + p->hpiv[i] - 1 : p->j + i;
    p->info = rc == 0 && p->hpiv[p->jb] ? (int)(p->j + p->hpiv[p->jb]) : 0;
    double *piv = p->W + p->ldw * p->jb;
    for (int i = 0; i < p->jb; i++) piv[i] = (double)p->ipiv[i];
    piv[p->jb] = (double)p->info;
    p->dev_fact = 1;
    p->xW = s->trans ? p->xbuf : Ap; // (transposed: L11 for the inverse, L21 for the update unless folded)
    p->xld = s->trans ? m : s->lda;
    s->t_iter_fact += ts_now() - t0;
    return s->err;
}

// Several process rows on devices: the root column's ranks gather the panel's rows on the device
// of the diagonal block's owner (curr), which factors the whole panel there (cuSOLVER or ours) and
// scatters the rows back; L11 and the pivots go to every rank of the column. Gather order: curr's
// rows first (the diagonal block on top, as LAPACK's getrf wants it), then the other process rows in
// order. A gathered row index maps to one global row, so the interchanges getrf made in the gathered
// panel are those of the distributed panel: the pivots become global rows and the usual swap code
// applies them to the other columns. xbuf then holds [L11 ; this rank's L rows] for the update.
// Transposed layout (s->trans): each part is transposed out of A^T's rows on its way to the gather
// (staging or, on curr, the gathered panel), and only curr's diagonal block goes back into A^T (as
// in panel_factor_dev: the update reads L21 from xbuf, the solve U11^T from A^T): xbuf is built from
// the gathered panel on curr and from the scattered part elsewhere.
static int panel_factor_gather(ts_hpl_state *s, ts_hpl_panel *p, int b, int64_t k, int st) {
    const ts_hpl_xops *x = s->x;
    panel_recycle(s, p, b);
    ts_hpl_panel_geom(s, p, k);
    double t0 = ts_now();
    const int P = s->P, me = s->myrow, curr = p->curr, jb = p->jb;
    const int64_t NB = s->NB, j = p->j;
    int64_t *m = malloc(sizeof(int64_t) * 5 * (size_t)P);
    if (!m) return ts_hpl_fail(s, TS_ERROR(TS_ERR_NOMEM, "hpl: panel gather counts"));
    int64_t *lr0 = m + P, *off = lr0 + P, *cnt = off + P, *dsp = cnt + P;
    int64_t M = 0;
    for (int q = 0; q < P; q++) {
        lr0[q] = ts_hpl_nbefore(j, NB, q, P);
        m[q] = ts_hpl_numroc(s->N, NB, q, P) - lr0[q];
    }
    off[curr] = 0;
    M = m[curr];
    for (int q = 0; q < P; q++)
        if (q != curr) off[q] = M, M += m[q];
    for (int q = 0; q < P; q++) { // staging layout on curr: the other rows' parts, in gather order
        cnt[q] = q == curr ? 0 : m[q] * jb;
        dsp[q] = q == curr ? 0 : (off[q] - m[curr]) * jb;
    }
    double *G = s->xgat, *S = s->xgst, *D = s->xgat + s->N * NB; // D: L11, jb x jb, contiguous
    const int tr = s->trans;
    double *Ap = tr ? s->A + p->pc + p->lr0 * s->lda : s->A + p->lr0 + p->pc * s->lda; // (tr: jb x mine of A^T)
    const int64_t mine = m[me];
    struct ts_hpl_marks *mk = s->marks && s->marks->nf < MK_FACT ? s->marks : NULL;
    if (mk) mk->f0[mk->nf] = stamp(s, st);
    // 1. the parts to curr (every call below is made even after a failure: the others wait for it)
    int rc = 0;
    double *dst1 = me == curr ? G : S;
    int64_t ld1 = me == curr ? M : mine;
    if (mine > 0)
        rc = tr ? x->transpose(s, st, jb, mine, Ap, s->lda, dst1, ld1) : x->x_copy(s, st, dst1, ld1, Ap, s->lda, mine, jb);
    int xrc = ts_hpl_xdev_col_rooted(s, st, curr, 1, S, cnt, dsp, S, me == curr ? 0 : mine * jb);
    if (rc == 0) rc = xrc;
    // 2. curr: the panel into G, factored, the parts back into the staging, L11 into D
    if (me == curr) {
        for (int q = 0; q < P && rc == 0; q++)
            if (q != curr && m[q] > 0) rc = x->x_copy(s, st, G + off[q], M, S + dsp[q], m[q], m[q], jb);
        if (rc == 0) rc = x->getrf(s, st, M, jb, G, M, p->xpiv, p->xpiv + jb);
        if (rc == 0) rc = x->bytes_to_host(s, st, p->hpiv, p->xpiv, (size_t)(jb + 1) * sizeof(int));
        for (int q = 0; q < P && rc == 0; q++)
            if (q != curr && m[q] > 0) rc = x->x_copy(s, st, S + dsp[q], m[q], G + off[q], M, m[q], jb);
        if (rc == 0 && mine > 0)
            rc = tr ? x->transpose(s, st, jb, jb, G, M, Ap, s->lda) : x->x_copy(s, st, Ap, s->lda, G, M, mine, jb);
        if (rc == 0) rc = x->x_copy(s, st, D, jb, G, M, jb, jb);
    }
    // 3. the factored parts back, L11 to every rank of the column
    xrc = ts_hpl_xdev_col_rooted(s, st, curr, 0, S, cnt, dsp, S, me == curr ? 0 : mine * jb);
    if (rc == 0) rc = xrc;
    if (rc == 0 && me != curr && mine > 0 && !tr) rc = x->x_copy(s, st, Ap, s->lda, S, mine, mine, jb);
    xrc = ts_hpl_xdev_col_bcast(s, st, D, (int64_t)jb * jb, curr);
    if (rc == 0) rc = xrc;
    if (mk) mk->f1[mk->nf++] = stamp(s, st);
    // 4. the update's copy of the panel: [L11 ; local L rows], once its last reader is done
    if (rc == 0) rc = x->wait(s, st, EV_USED0 + b);
    if (rc == 0) rc = x->x_copy(s, st, p->xbuf, p->ldw, D, jb, jb, jb);
    if (rc == 0 && p->mL > 0) {
        const double *Lr = !tr ? s->A + p->lr1 + p->pc * s->lda : me == curr ? G + jb : S;
        int64_t ldl = !tr ? s->lda : me == curr ? M : mine;
        rc = x->x_copy(s, st, p->xbuf + jb, p->ldw, Lr, ldl, p->mL, jb);
    }
    // (to the host for the row broadcast through it; with NCCL the row gets xbuf device to device)
    if (rc == 0 && s->Q > 1 && !s->nccl) rc = x->to_host(s, st, p->W, p->ldw, p->xbuf, p->ldw, p->ldw, jb);
    if (rc == 0) rc = x->sync(s, st);
    ts_hpl_fail(s, rc);
    // 5. the pivots (gathered rows -> global rows) and info, from curr to the column
    double *piv = p->W + p->ldw * p->jb;
    if (me == curr)
        for (int i = 0; i <= jb; i++) piv[i] = rc == 0 ? (double)p->hpiv[i] : (i < jb ? (double)(i + 1) : 0.0);
    int mrc = ts_comm_bcast(&s->col, piv, (size_t)(jb + 1) * sizeof(double), curr);
    ts_hpl_fail(s, mrc);
    for (int i = 0; i < jb; i++) {
        int64_t g = (int64_t)piv[i] - 1, row = j + i;
        for (int q = 0; q < P; q++)
            if (g >= off[q] && g < off[q] + m[q]) row = ts_hpl_l2g(lr0[q] + (g - off[q]), NB, q, P);
        p->ipiv[i] = s->err ? j + i : row;
    }
    p->info = !s->err && piv[jb] != 0.0 ? (int)(j + (int64_t)piv[jb]) : 0;
    for (int i = 0; i < jb; i++) piv[i] = (double)p->ipiv[i];
    piv[jb] = (double)p->info;
    free(m);
    p->dev_fact = 1;
    p->xW = p->xbuf;
    p->xld = p->ldw;
    s->t_iter_fact += ts_now() - t0;
    return s->err;
}

static int panel_bcast(ts_hpl_state *s, ts_hpl_panel *p) {
    double t0 = ts_now();
    int rc;
    if (s->nccl && s->Q > 1) {
        // pivots and info through the host; the panel from the root's device buffer into every
        // member's, on stream 1, once the update that last read the buffer is done
        int b = (int)(p - s->pan);
        double *piv = p->W + p->ldw * p->jb;
        rc = ts_comm_bcast(&s->row, piv, (size_t)(p->jb + 1) * sizeof(double), p->root);
        if (rc == 0 && s->mycol != p->root) {
            for (int i = 0; i < p->jb; i++) p->ipiv[i] = (int64_t)piv[i];
            p->info = (int)piv[p->jb];
            rc = s->x->wait(s, 1, EV_USED0 + b);
        }
        if (rc == 0)
            rc = ts_hpl_xdev_panel_bcast(s, 1, p->xbuf, (size_t)p->ldw * (size_t)p->jb * sizeof(double), p->root);
        ts_hpl_fail(s, rc);
    } else {
        rc = ts_hpl_bcast(s, p);
    }
    s->t_iter_bcast += ts_now() - t0;
    if (p->info && (s->info == 0 || p->info < s->info)) s->info = p->info;
    return rc;
}

// inv(L11) of the loaded panel (its unit lower diagonal block, on top of xW) on stream st, for
// U = inv(L11) A12 on every process row (trsm_inv): the identity solved by DTRSM, once per panel.
static int panel_inverse(ts_hpl_state *s, ts_hpl_panel *p, int st) {
    p->inv_ready = 0;
    if (!s->trsm_inv || p->jb <= 0) return 0;
    const ts_hpl_xops *x = s->x;
    int rc = x->x_copy(s, st, p->xlinv, s->NB, s->xident, s->NB, p->jb, p->jb);
    if (rc == 0) rc = x->trsm_llnu(s, st, p->jb, p->jb, p->xW, p->xld, p->xlinv, s->NB);
    if (rc == 0 && s->trans) rc = x->transpose(s, st, p->jb, p->jb, p->xlinv, s->NB, p->xlinv + s->NB * s->NB, s->NB);
    p->inv_ready = rc == 0;
    return rc;
}

// Plan the swaps and make the panel available to the update on the execution side.
static int panel_load(ts_hpl_state *s, ts_hpl_panel *p, int b, int st) {
    const ts_hpl_xops *x = s->x;
    int rc = ts_hpl_swap_plan(s, p);
    if (rc) return rc;
    if (s->trans && s->P == 1) { // the transposed swaps read the changed rows' sources in place (ts_lu_swap_rows_t)
        const int64_t *ab = p->plan + p->npack + p->jb, *al = ab + p->nown;
        if (!ts_lu_swap_plan_t_ok(p->plan, al, ab, p->nown))
            return ts_hpl_fail(s, TS_ERROR(TS_ERR_STATE, "hpl: panel at column %lld sends a row from below the "
                                                         "diagonal block below it", (long long)p->j));
    }
    if (!x->is_device) {
        p->xW = p->W;
        p->xld = p->ldw;
        p->xplan = p->plan;
        p->loaded = 1;
        return ts_hpl_fail(s, panel_inverse(s, p, st));
    }
    rc = x->wait(s, st, EV_USED0 + b); // the previous user of this buffer (nbuf panels ago) is done
    if (!p->dev_fact) {
        p->xW = p->xbuf;
        p->xld = p->ldw;
        if (rc == 0 && !s->nccl) rc = x->to_x(s, st, p->xW, p->ldw, p->W, p->ldw, p->ldw, p->jb);
    }
    size_t nplan = (size_t)(p->npack + 2 * p->jb + 3 * p->nown);
    if (rc == 0) rc = x->bytes_to_x(s, st, p->xplan, p->plan, nplan * sizeof(int64_t));
    if (rc == 0 && !(s->fold && p->inv_ready)) rc = panel_inverse(s, p, st); // (folded: made with the panel)
    if (rc == 0) rc = x->record(s, EV_LOAD0 + b, st);
    p->loaded = 1;
    return ts_hpl_fail(s, rc);
}

// Transposed layout: C = alpha A op(B) + beta C where the rows of A and C are the local columns
// [c0, c1) of [A|b], op(B) = B (tb 'N', k x n) or B^T (tb 'T', B n x k). b's row (the last of A^T,
// on the process column that holds column N) goes apart when it is among them: an odd M cost
// cuBLAS's GEMM its vector loads (17% on an H100, bench/notes/hpl.md). The other columns' last row
// is an ordinary one, kept in (split off, it left them an odd M: 1 x 4 lost 9%, call 57).
static int gemm_rows_t(ts_hpl_state *s, int st, int64_t c0, int64_t c1, int64_t n, int64_t k, double alpha,
                       const double *A, int64_t lda, char tb, const double *B, int64_t ldb, double beta, double *C,
                       int64_t ldc) {
    const int has_b = s->mycol == ts_hpl_owner(s->N, s->NB, s->Q);
    int64_t nc = c1 - c0, nb = has_b && c1 == s->nq && nc > 1 ? 1 : 0;
    int (*gemm)(ts_hpl_state *, int, int64_t, int64_t, int64_t, double, const double *, int64_t, const double *,
                int64_t, double, double *, int64_t) = tb == 'T' ? s->x->gemm_nt : s->x->gemm_nn;
    int rc = gemm(s, st, nc - nb, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    if (rc == 0 && nb) rc = gemm(s, st, 1, n, k, alpha, A + nc - 1, lda, B, ldb, beta, C + nc - 1, ldc);
    return rc;
}

// U of local columns [c0, c1) after their row swaps, on stream st. With trsm_inv, U = inv(L11) U0
// by one GEMM: the owner row writes it straight into its rows of A, the other process rows into
// the stream's swap scratch (free again once the swap's rows are unpacked; the next reader of that
// scratch is a later swap on the same stream, after this update's GEMM). Otherwise U0 is solved in
// place by DTRSM and the owner row copies it into A. Folded (s->fold): U0 itself, copied into A^T's
// rows. *Us, *ldu: U as the GEMM reads it.
static int form_u(ts_hpl_state *s, ts_hpl_panel *p, int64_t c0, int64_t c1, int st, const double **Us,
                  int64_t *ldu) {
    const ts_hpl_xops *x = s->x;
    int64_t nc = c1 - c0;
    if (s->trans) { // U^T = U0^T inv(L11)^T: the owner row into its rows of A^T, the others into the scratch
        // (with a padded leading dimension: ld = nc, odd on the column holding b, cost the update's
        // GEMM its aligned loads on every other panel of 2 x 2, call 61)
        int owner = s->myrow == p->curr;
        double *Ut = owner ? s->A + c0 + p->lr0 * s->lda : s->xscr[st];
        *Us = Ut;
        *ldu = owner ? s->lda : ts_hpl_pad_ld(nc);
        if (s->fold) // U0 as the swaps left it (inv(L11) is in L), copied into A^T's rows (one process)
            return x->x_copy(s, st, Ut, *ldu, s->U + c0, s->ldut, nc, p->jb);
        const double *Z = p->xlinv + s->NB * s->NB; // inv(L11)^T (panel_inverse)
        return gemm_rows_t(s, st, c0, c1, p->jb, p->jb, 1.0, s->U + c0, s->ldut, 'N', Z, s->NB, 0.0, Ut, *ldu);
    }
    double *U0 = s->U + c0 * s->NB;
    double *Ar = s->A + p->lr0 + c0 * s->lda; // the owner row's U rows in A
    *Us = U0;
    *ldu = s->NB;
    if (p->inv_ready) {
        int owner = s->myrow == p->curr;
        double *Ux = owner ? Ar : s->xscr[st];
        int64_t ldx = owner ? s->lda : p->jb;
        *Us = Ux;
        *ldu = ldx;
        return x->gemm_nn(s, st, p->jb, nc, p->jb, 1.0, p->xlinv, s->NB, U0, s->NB, 0.0, Ux, ldx);
    }
    int rc = x->trsm_llnu(s, st, p->jb, nc, p->xW, p->xld, U0, s->NB);
    if (rc == 0 && s->myrow == p->curr) rc = x->x_copy(s, st, Ar, s->lda, U0, s->NB, p->jb, nc);
    return rc;
}

// A(below the panel, [c0, c1)) -= L U on stream st.
static int gemm_l_u(ts_hpl_state *s, ts_hpl_panel *p, int64_t c0, int64_t c1, int st, const double *Us, int64_t ldu) {
    if (p->mL <= 0) return 0;
    if (s->trans && s->fold) // A^T(c0:c1, below) -= U0^T (L21 inv(L11))^T, written into the panel's rows of A^T
        return gemm_rows_t(s, st, c0, c1, p->mL, p->jb, -1.0, Us, ldu, 'N', s->A + p->pc + p->lr1 * s->lda, s->lda,
                           1.0, s->A + c0 + p->lr1 * s->lda, s->lda);
    if (s->trans) // A^T(c0:c1, below) -= U^T L21^T, L21 read where it was factored (column-major, below L11)
        return gemm_rows_t(s, st, c0, c1, p->mL, p->jb, -1.0, Us, ldu, 'T', p->xW + p->jb, p->xld, 1.0,
                           s->A + c0 + p->lr1 * s->lda, s->lda);
    return s->x->gemm_nn(s, st, p->mL, c1 - c0, p->jb, -1.0, p->xW + p->jb, p->xld, Us, ldu, 1.0,
                         s->A + p->lr1 + c0 * s->lda, s->lda);
}

// Trailing update of local columns [c0, c1) with panel p on stream st.
static int update(ts_hpl_state *s, ts_hpl_panel *p, int64_t c0, int64_t c1, int st) {
    int64_t nc = c1 - c0;
    if (nc <= 0) return 0;
    struct ts_hpl_marks *mk = s->marks && s->marks->nup < MK_UPD ? s->marks : NULL;
    int u = mk ? mk->nup++ : 0;
    if (mk) mk->ust[u] = st, mk->sw0[u] = stamp(s, st);
    ts_hpl_laswp(s, p, c0, c1, st);
    if (mk) mk->sw1[u] = mk->up0[u] = stamp(s, st);
    if (s->err) return s->err;
    double t0 = ts_now();
    const double *Us;
    int64_t ldu;
    int rc = form_u(s, p, c0, c1, st, &Us, &ldu);
    if (mk) mk->gm0[u] = stamp(s, st);
    if (rc == 0) rc = gemm_l_u(s, p, c0, c1, st, Us, ldu);
    if (mk) mk->up1[u] = stamp(s, st);
    s->t_iter_update += ts_now() - t0;
    return ts_hpl_fail(s, rc);
}

static int factor(ts_hpl_state *s, ts_hpl_panel *p, int b, int64_t k, int st) {
    return s->panel_dev      ? panel_factor_dev(s, p, b, k, st)
           : s->panel_gather ? panel_factor_gather(s, p, b, k, st)
                             : panel_factor(s, p, b, k, st);
}

// One iteration's step times from its stamps: the factorizations, the swaps and updates per stream
// (U's part of both), stream 0's busy time, and the iteration's time on stream 0 from *prev (the
// previous iteration's end, moved on to this one's).
struct iter_times {
    double fact, swap[2], upd[2], trsm, busy0, total;
};
static struct iter_times iter_times(ts_hpl_state *s, const struct ts_hpl_marks *m, int *prev) {
    const ts_hpl_xops *x = s->x;
    struct iter_times t = {0};
    for (int i = 0; i < m->nf; i++) t.fact += x->stamp_diff(s, m->f0[i], m->f1[i]);
    for (int u = 0; u < m->nup; u++) {
        double a = x->stamp_diff(s, m->sw0[u], m->sw1[u]), b = x->stamp_diff(s, m->up0[u], m->up1[u]);
        t.swap[m->ust[u] != 0] += a;
        t.upd[m->ust[u] != 0] += b;
        t.trsm += x->stamp_diff(s, m->up0[u], m->gm0[u]);
        if (m->ust[u] == 0) t.busy0 += a + b;
    }
    t.total = x->stamp_diff(s, *prev, m->end0);
    if (m->end0 >= 0) *prev = m->end0;
    return t;
}

// After the factorization: the per-iteration phase times from the stamps. fact, swap and update
// are the time each step ran (on its stream; under lookahead the next panel's steps overlap the
// update of the rest), bcast the host time of the panel broadcast, total the time from the end of
// the previous iteration's work on stream 0 to the end of this one's, and idle the part of total
// in which stream 0 had nothing to run (it waited for the panel); without lookahead, idle is total
// less the steps.
static void phase_split(ts_hpl_state *s, const struct ts_hpl_marks *marks, int64_t npan, int start0,
                        int overlap) {
    ts_hpl_result *r = s->r;
    double tf = 0, tw = 0, tu = 0;
    int prev = start0;
    for (int64_t k = 0; k < npan; k++) {
        const struct ts_hpl_marks *m = &marks[k];
        struct iter_times t = iter_times(s, m, &prev);
        double fact = t.fact, swap = t.swap[0] + t.swap[1], upd = t.upd[0] + t.upd[1];
        tw += swap;
        tu += upd;
        if (k < r->n_iters && s->ctx->opts.record_iterations) {
            ts_hpl_iter *it = &r->iters[k];
            if (m->nf > 0) it->fact = fact;
            else fact = it->fact; // factored on the host: its host time stays
            it->swap = swap;
            it->update = upd;
            it->trsm = t.trsm;
            it->total = t.total;
            double idle = overlap ? t.total - t.busy0 : t.total - fact - it->bcast - swap - upd;
            it->idle = idle > 0 ? idle : 0.0;
        }
        tf += m->nf > 0 ? fact : 0;
    }
    if (tf > 0) s->t_fact = tf;
    s->t_swap = tw;
    s->t_update = tu;
}

// Every rank's phase sums from its own stamps (iter_times, as phase_split's, split by stream) into
// r->rank_phases on rank 0 of the grid (the first TS_HPL_MAX_RANK_PHASES ranks): a grid-wide call,
// made by every rank.
static void rank_phases(ts_hpl_state *s, const struct ts_hpl_marks *marks, int64_t npan, int start0, int overlap) {
    enum { W = TS_HPL_RANK_NPH + 3 }; // [0]: 1 when the rank's sums are there, [1], [2]: its row, column
    int n = s->grid.size < TS_HPL_MAX_RANK_PHASES ? s->grid.size : TS_HPL_MAX_RANK_PHASES;
    double all[TS_HPL_MAX_RANK_PHASES * W];
    memset(all, 0, sizeof all);
    int every = marks != NULL && s->err == 0; // (agreed below: every rank had its stamps)
    if (every && s->grid.rank < n) {
        double *v = all + (size_t)s->grid.rank * W;
        int prev = start0;
        v[0] = 1.0;
        v[1] = s->myrow;
        v[2] = s->mycol;
        for (int64_t k = 0; k < npan; k++) {
            struct iter_times t = iter_times(s, &marks[k], &prev);
            v[3 + TS_HPL_RANK_FACT] += t.fact;
            v[3 + TS_HPL_RANK_SWAP0] += t.swap[0];
            v[3 + TS_HPL_RANK_SWAP1] += t.swap[1];
            v[3 + TS_HPL_RANK_UPD0] += t.upd[0];
            v[3 + TS_HPL_RANK_UPD1] += t.upd[1];
            v[3 + TS_HPL_RANK_TRSM] += t.trsm;
            v[3 + TS_HPL_RANK_TOTAL] += t.total;
            if (overlap && t.total > t.busy0) v[3 + TS_HPL_RANK_IDLE0] += t.total - t.busy0;
        }
    }
    int rc1 = ts_comm_allreduce_i(&s->grid, &every, 1, TS_COMM_MIN); // (both made by every rank)
    int rc2 = ts_comm_allreduce_d(&s->grid, all, n * W, TS_COMM_SUM);
    if (rc1 != 0 || rc2 != 0) every = 0;
    s->r->n_rank_phases = every ? n : 0;
    for (int q = 0; every && q < n; q++) {
        s->r->rank_grid[q][0] = (int)all[(size_t)q * W + 1];
        s->r->rank_grid[q][1] = (int)all[(size_t)q * W + 2];
        for (int i = 0; i < TS_HPL_RANK_NPH; i++) s->r->rank_phases[q][i] = all[(size_t)q * W + 3 + i];
    }
}

static double lu_flops_left(double n) { return 2.0 / 3.0 * n * n * n; }

static int record_iter(ts_hpl_state *s, ts_hpl_panel *p, double t_it) {
    ts_hpl_result *r = s->r;
    s->t_fact += s->t_iter_fact;
    s->t_bcast += s->t_iter_bcast;
    s->t_swap += s->t_iter_swap;
    s->t_update += s->t_iter_update;
    if (s->ctx->opts.record_iterations) {
        if ((r->n_iters & (r->n_iters - 1)) == 0) {
            size_t cap = r->n_iters ? 2 * (size_t)r->n_iters : 16;
            ts_hpl_iter *ni = realloc(r->iters, cap * sizeof(*ni));
            if (!ni) return TS_ERROR(TS_ERR_NOMEM, "iteration records");
            r->iters = ni;
        }
        ts_hpl_iter *it = &r->iters[r->n_iters++];
        it->col = p->j;
        it->total = t_it;
        it->fact = s->t_iter_fact;
        it->bcast = s->t_iter_bcast;
        it->swap = s->t_iter_swap;
        it->update = s->t_iter_update;
        it->trsm = 0.0; // (from the stamps, in phase_split)
        double busy = it->fact + it->bcast + it->swap + it->update;
        it->idle = t_it > busy ? t_it - busy : 0.0;
    }
    s->t_iter_fact = s->t_iter_bcast = s->t_iter_swap = s->t_iter_update = 0;
    return 0;
}

// The step in which a rank of process column mycol, which does not own panel i, first needs it:
// its bulk update (step i), or the lookahead update of its own next panel m <= i + d (step m - d).
// Non-decreasing in i, so the ranks receive the panels in order.
static int64_t need_step(const ts_hpl_state *s, int64_t i) {
    int64_t m = i + 1 + ((s->mycol - (i + 1)) % s->Q + s->Q) % s->Q; // next panel of this column
    return m - s->depth < i ? m - s->depth : i;
}

// Panel k from the process row (this rank's column does not own it), into buffer k % nbuf, loaded
// on stream 1.
static void panel_receive(ts_hpl_state *s, int64_t k) {
    int b = (int)(k % s->nbuf);
    ts_hpl_panel *p = &s->pan[b];
    panel_recycle(s, p, b);
    ts_hpl_panel_geom(s, p, k);
    panel_bcast(s, p);
    panel_load(s, p, b, s->x->is_device ? 1 : 0);
}

// The update of the rest with the oldest pending panel k: the local columns right of panel jl (the
// last panel factored so far), on stream 0.
static void update_rest(ts_hpl_state *s, int64_t k, int64_t jl) {
    const ts_hpl_xops *x = s->x;
    int b = (int)(k % s->nbuf);
    ts_hpl_panel *p = &s->pan[b];
    int64_t end = (jl + 1) * s->NB < s->N ? (jl + 1) * s->NB : s->N;
    int64_t c0 = ts_hpl_nbefore(end, s->NB, s->mycol, s->Q);
    if (x->is_device) ts_hpl_fail(s, x->wait(s, 0, EV_LOAD0 + b));
    update(s, p, c0, s->nq, 0);
    if (x->is_device) {
        ts_hpl_fail(s, x->record(s, EV_S0, 0));
        ts_hpl_fail(s, x->record(s, EV_USED0 + b, 0));
    }
}

// Receives, in order, the panels up to `last` that this rank needs by step t.
static void receive_needed(ts_hpl_state *s, int64_t *next, int64_t t, int64_t last) {
    int64_t npan = (s->N + s->NB - 1) / s->NB;
    for (; *next < npan && *next <= last; (*next)++) {
        if (*next % s->Q == s->mycol) continue; // factored here
        if (need_step(s, *next) > t) break;
        panel_receive(s, *next);
    }
}

// Whether a panel from another process column is still to be received in step t.
static int receive_pending(const ts_hpl_state *s, int64_t next, int64_t t) {
    int64_t npan = (s->N + s->NB - 1) / s->NB;
    for (; next < npan; next++)
        if (next % s->Q != s->mycol) return need_step(s, next) <= t;
    return 0;
}

int ts_hpl_lu(ts_hpl_state *s) {
    const ts_hpl_xops *x = s->x;
    int64_t N = s->N, NB = s->NB;
    int64_t npan = (N + NB - 1) / NB;
    const int d = s->depth, nbuf = s->nbuf;
    int dev = x->is_device;
    int s0 = 0, s1 = dev ? 1 : 0;
    double t_start = ts_now();
    if (d < 0 || d > TS_HPL_MAX_DEPTH || nbuf != ts_hpl_nbuf(d))
        return ts_hpl_fail(s, TS_ERROR(TS_ERR_ARG, "hpl: lookahead depth %d with %d panel buffers", d, nbuf));
    // timing stamps: per iteration 2 per factorization and 4 per update call (d lookahead updates and
    // the rest) and the end; iteration 0 has the prologue's too; plus the start
    struct ts_hpl_marks *marks = NULL;
    int start0 = -1;
    int64_t per = 2 + 4 * (d + 1) + 1;
    int64_t nstamps = npan * per + 2 * d + 2 * d * (d + 1) + 1;
    if (nstamps <= TS_HPL_MAX_STAMPS && x->stamps_reset(s, (int)nstamps) == 0)
        marks = malloc(sizeof(*marks) * (size_t)npan);
    for (int64_t k = 0; marks && k < npan; k++) marks_clear(&marks[k]);
    if (marks) start0 = x->stamp(s, s0);
    for (int b = 0; b < TS_HPL_NPANBUF; b++) {
        s->pan[b].k = -1;
        s->pan[b].nsreq = 0;
        s->pan[b].loaded = 0;
    }
    if (dev) ts_hpl_fail(s, x->record(s, EV_S0, s0));
    int64_t rnext = 0; // the next panel this rank may have to receive
    double t_it = ts_now();
    // Step t factors panel j = t + d (when there is one) and, for t >= 0, updates the rest with
    // panel t; steps t < 0 are the prologue, counted in iteration 0.
    for (int64_t t = -d; t < npan; t++) {
        int64_t k = t < 0 ? 0 : t; // the iteration this step belongs to
        int64_t j = t + d;
        s->marks = marks ? &marks[k] : NULL;
        // 1. the panels of other process columns this rank needs by now, in order: first those the
        // update of the rest needs (depth 0: panel j itself)
        receive_needed(s, &rnext, t, t);
        int own = j < npan && s->mycol == (int)(j % s->Q);
        int bulk_done = t < 0;
        int64_t cj = own ? ts_hpl_nbefore(j * NB, NB, s->mycol, s->Q) : 0;
        if (own && dev) ts_hpl_fail(s, x->wait(s, s1, EV_S0));
        // a device runs the update of the rest while the host waits for lookahead panels still in
        // flight (depth >= 2: the panels after t that panel j's columns need)
        if (dev && !bulk_done && receive_pending(s, rnext, t)) {
            update_rest(s, t, j < npan ? j : npan - 1);
            bulk_done = 1;
        }
        receive_needed(s, &rnext, t, npan);
        // 2. panel j on its process column: its columns receive the pending updates, then it is
        // factored, sent and loaded; on a device the update of the rest is queued before the factorization
        if (own) {
            int bj = (int)(j % nbuf);
            ts_hpl_panel *pn = &s->pan[bj];
            int64_t jbj = N - j * NB < NB ? N - j * NB : NB;
            for (int64_t i = t < 0 ? 0 : t; i < j; i++) update(s, &s->pan[i % nbuf], cj, cj + jbj, s1);
            if (dev && !bulk_done && t < j) { // (depth 0: the rest needs panel j itself)
                update_rest(s, t, j);
                bulk_done = 1;
            }
            factor(s, pn, bj, j, s1);
            panel_bcast(s, pn);
            panel_load(s, pn, bj, s1);
        }
        // 3. the rest with the oldest pending panel (depth 0: panel j, just received or factored)
        if (!bulk_done) update_rest(s, t, j < npan ? j : npan - 1);
        if (t < 0) continue;
        if (s->marks) s->marks->end0 = stamp(s, s0);
        s->marks = NULL;
        // 4. bookkeeping. A failure is not agreed here: a grid-wide call inside the loop would
        // deadlock with a lookahead broadcast; a failed rank keeps communicating (its device calls
        // fail at once) and all ranks agree after the factorization.
        ts_hpl_panel *p = &s->pan[t % nbuf];
        if (s->grid.rank == 0) {
            double now = ts_now();
            record_iter(s, p, now - t_it);
            if (s->ctx->opts.progress) {
                // On a device this iteration's update was only queued; the one before has finished
                // when the host got here on the panel's owner (the lookahead panel just factored
                // waited for it on its columns), so the display counts the columns up to this panel:
                // the rate it shows is not the rate of queued work.
                int64_t done = dev ? p->j : p->j + p->jb;
                double left = (double)(N - done);
                s->ctx->opts.progress(s->ctx->opts.progress_ctx, done, N, now - t_start,
                                      lu_flops_left((double)N) - lu_flops_left(left));
            }
        } else {
            s->t_iter_fact = s->t_iter_bcast = s->t_iter_swap = s->t_iter_update = 0;
        }
        t_it = ts_now();
    }
    for (int b = 0; b < nbuf; b++) panel_recycle(s, &s->pan[b], b);
    for (int st = 0; st <= s1; st++) ts_hpl_fail(s, x->sync(s, st));
    if (marks && s->err == 0 && s->grid.rank == 0) phase_split(s, marks, npan, start0, d >= 1 && dev);
    if (s->ctx->opts.record_iterations) rank_phases(s, marks, npan, start0, d >= 1 && dev);
    free(marks);
    return s->err;
}
