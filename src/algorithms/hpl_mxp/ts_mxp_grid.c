// ts_mxp_grid.c: HPL-MxP on a P x Q process grid: the LU without pivoting over 2D block-cyclic blocks, the distributed FP64 refinement.
//
// The grid and its block-cyclic maps are HPL's (ts_comm_grid, ts_hpl_numroc/nbefore); one rank a
// device. Rank (myrow, mycol) holds the FP32 blocks (I, J) with I % P = myrow, J % Q = mycol.
// Block column k (diagonal block on (k % P, k % Q)):
//  - the owner factors the diagonal block without pivoting and inverts L11 and U11; inv(U11)
//    (scaled) goes in 16 bits along the process column, inv(L11) along the process row;
//  - the process column forms L21 = A21 inv(U11), the process row U12 = inv(L11) A12 (GEMMs with
//    16-bit operands, FP32 accumulation), as 1 x 1 does; L21 (scaled, 16 bits) is broadcast along
//    the process rows, U12 (16 bits) along the process columns;
//  - every rank updates its trailing blocks by one 16-bit GEMM.
// Broadcasts: NCCL device to device along the rows and columns where the comm layer can join the
// devices (CUDA, NCCL, a GPU a rank; TESSERA_HPL_NCCL=0 turns it off, as for HPL), else MPI
// through host memory. Look-ahead of depth 1 on devices, as on 1 x 1: update k first brings block
// column and block row k+1 up to date, then a second stream factors and broadcasts panel k+1
// (into a second pair of 16-bit panels) while the first runs the rest of update k.
// Refinement: x is held by process columns (the entries of the local columns), b, d and r by
// process rows. r = b - A x with every local block regenerated in FP64 (one launch), reduced along
// the process rows; the correction by a block forward and back substitution with the inverted
// diagonal blocks (per block: the partial sums reduced along the diagonal owner's process row, the
// owner's GEMV with the inverse, the result broadcast along its process column, the next block's
// rows updated first and the rest of the column on the second stream); norms reduced over the grid.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/hpl_mxp/ts_mxp_internal.h"
#include "comm/ts_dcomm.h"
#include "core/ts_env.h"
#include "core/ts_error.h"
#include "core/ts_log.h"
#include "core/ts_rng.h"
#include "core/ts_timer.h"

typedef struct {
    ts_hpl_ctx *c;
    const ts_mxp_case *mc;
    const ts_mxp_opts *o;
    ts_mxp_result *r;
    ts_comm grid, row, col;
    int myrow, mycol, P, Q;
    ts_dcomm *drow, *dcol;       // NCCL along the process row / column, or NULL (MPI through the host)
    ts_mxp_exec ex;
    ts_mxp_kern *k;
    int depth;                   // look-ahead: 0, or 1 (devices: panels on stream 1, k1)
    ts_mxp_exec ex1;             // stream 1 (look-ahead), or ex
    ts_mxp_kern *k1;             // stream 1's kernel context (NULL: none)
    ts_event *ev_upd, *ev_pan;   // stream 0's next block column and row updated; stream 1's panel done
    ts_event *ev_z, *ev_tall[2]; // refinement: a block of the solve's vector ready on stream 0; the last two
    int64_t tall_at[2];          // tall GEMVs on stream 1 (the sweep step each was queued at, -1 none)
    int64_t ntall;               // tall GEMVs queued in this sweep
    ts_mxp_exec *pex;            // where the broadcasts run: ex1 during the look-ahead LU, else ex
    uint16_t *L16b, *U16b;       // look-ahead: the second pair of 16-bit panels
    int64_t N, NB, nblk, mp, nq, lda, nbr, nbc; // nbr, nbc: local block rows, block columns
    float *A;                    // mp x nq (lda)
    float *Linv, *Uinv;          // one NB x NB slot per local block column (its diagonal block, if here)
    uint16_t *L16, *U16, *Di16;  // L21 panel (mp x NB), U12 panel (NB x nq), inv(L11) and inv(U11)
    double *d, *x, *acc;         // execution: diagonal (rows), solution (columns), residual sums (rows)
    float *t, *y, *z, *w;        // execution: partial sums (rows), NB scratch, z and w (columns)
    double *hd, *hb, *hx, *hr, *hv; // host: d, b (rows), x (columns), r (rows), NB doubles
    float *hf;                   // host: NB floats
    float *hzero;                // host: mp zeros (the solve's partial sums reset)
    void *stage;                 // host staging of the broadcasts on the device path without NCCL
    size_t stage_bytes;
    double normA, normb;
    double *ph;                  // the result's refinement phases (seconds, summed), or NULL
    double mark;                 // where the last phase ended (the phases tile the refinement's time)
} mg_run;

static int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }
static int64_t bwidth(const mg_run *s, int64_t kb) { return s->N - kb * s->NB < s->NB ? s->N - kb * s->NB : s->NB; }
static int64_t lrow(const mg_run *s, int64_t g) { return ts_hpl_nbefore(g, s->NB, s->myrow, s->P); }
static int64_t lcol(const mg_run *s, int64_t g) { return ts_hpl_nbefore(g, s->NB, s->mycol, s->Q); }

// Bytes rank (0, 0) (the largest share) needs for a P x Q run of order N.
static double grid_bytes(int64_t N, int NB, int P, int Q, int device) {
    const double mp = (double)ts_hpl_numroc(N, NB, 0, P), nq = (double)ts_hpl_numroc(N, NB, 0, Q), nb = NB;
    const double nbc = ceil(nq / nb) > 0 ? ceil(nq / nb) : 1;
    double b = 4.0 * (double)round_up((int64_t)mp > 0 ? (int64_t)mp : 1, 32) * nq // A in FP32
               + 2.0 * 4.0 * nbc * nb * nb                 // inverses of the diagonal blocks
               + 2.0 * (double)round_up((int64_t)mp, 8) * nb + 2.0 * nb * nq // 16-bit panels
               + 2.0 * 2.0 * nb * nb                       // the inverses in 16 bits
               + 8.0 * nbc * mp                            // the generator's row sums
               + 8.0 * (2.0 * mp + nq) + 4.0 * (mp + 2.0 * nq + nb);
    if (device) // scratch (the residual's, every local row), cuSOLVER, the look-ahead's second pair of panels
        b += 8.0 * TS_MXP_CHUNKS * (mp > nb ? mp : nb) + 4.0 * nb * nb + (double)(64 << 20) +
             2.0 * (double)round_up((int64_t)mp, 8) * nb + 2.0 * nb * nq;
    return b;
}

double ts_mxp_bytes_grid(int64_t N, int NB, int P, int Q, int device) {
    if (P * Q == 1) return ts_mxp_bytes(N, NB, device);
    return grid_bytes(N, NB, P, Q, device);
}

// ---- broadcasts of the panels and vectors (16-bit panels, FP32 vectors) ----

// bytes at buf (execution memory) from member root of the row (along = 0) or column (1).
static int bcast(mg_run *s, int along, void *buf, size_t bytes, int root) {
    const ts_comm *cm = along ? &s->col : &s->row;
    ts_dcomm *dc = along ? s->dcol : s->drow;
    if (cm->size < 2 || bytes == 0) return 0;
    ts_mxp_exec *e = s->pex ? s->pex : &s->ex;
    if (dc) return ts_dcomm_bcast(dc, e->st, buf, bytes, root);
    if (!e->dev) return ts_comm_bcast(cm, buf, bytes, root);
    if (bytes > s->stage_bytes) TS_RAISE(TS_ERR_STATE, "hpl-mxp: %zu bytes exceed the staging buffer", bytes);
    if (cm->rank == root) TS_CHECK(ts_mxp_ex_get(e, s->stage, buf, bytes));
    TS_CHECK(ts_comm_bcast(cm, s->stage, bytes, root));
    if (cm->rank != root) TS_CHECK(ts_mxp_ex_put(e, buf, s->stage, bytes));
    return 0;
}

// Device broadcasts (NCCL) along rows and columns when the whole grid can; the host path otherwise.
static int join_devices(mg_run *s) {
    if (!s->ex.dev) return 0;
    int want = 1;
    if (ts_env_bool("TESSERA_HPL_NCCL", &want) < 0) want = 0;
    want = want && ts_dcomm_available() && ts_devset_backend(s->c->devs) == TS_BACKEND_CUDA;
    TS_CHECK(ts_comm_allreduce_i(&s->grid, &want, 1, TS_COMM_MIN));
    if (!want) return 0;
    char why[128] = "";
    if (s->Q > 1) TS_CHECK(ts_dcomm_join(&s->row, s->ex.dev, &s->drow, why, sizeof why, NULL));
    if (s->P > 1) TS_CHECK(ts_dcomm_join(&s->col, s->ex.dev, &s->dcol, why, sizeof why, NULL));
    int ok = (s->Q < 2 || s->drow) && (s->P < 2 || s->dcol);
    TS_CHECK(ts_comm_allreduce_i(&s->grid, &ok, 1, TS_COMM_MIN));
    if (!ok) {
        ts_dcomm_destroy(s->drow);
        ts_dcomm_destroy(s->dcol);
        s->drow = s->dcol = NULL;
        if (s->grid.rank == 0)
            TS_LOG_I("hpl-mxp: panels go through the host%s%s", why[0] ? ": " : "", why);
    }
    return 0;
}

// ---- memory ----

static void mg_free(mg_run *s) {
    void *xs[] = {s->A, s->Linv, s->Uinv, s->L16, s->U16, s->Di16, s->d,    s->x,
                  s->acc, s->t, s->y, s->z, s->w, s->L16b, s->U16b};
    for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++) ts_mxp_ex_free(&s->ex, xs[i]);
    free(s->hd), free(s->hb), free(s->hx), free(s->hr), free(s->hv), free(s->hf), free(s->hzero), free(s->stage);
    ts_mxp_kern_destroy(s->k);
    ts_mxp_kern_destroy(s->k1);
    if (s->ev_upd) ts_event_destroy(s->ev_upd);
    if (s->ev_pan) ts_event_destroy(s->ev_pan);
    if (s->ev_z) ts_event_destroy(s->ev_z);
    for (int i = 0; i < 2; i++)
        if (s->ev_tall[i]) ts_event_destroy(s->ev_tall[i]);
    if (s->ex1.st && s->ex1.st != s->ex.st) ts_stream_destroy(s->ex1.st);
    ts_dcomm_destroy(s->drow);
    ts_dcomm_destroy(s->dcol);
}

static int mg_alloc(mg_run *s) {
    ts_mxp_exec *e = &s->ex;
    const int64_t NB = s->NB, mp = s->mp, nq = s->nq;
    TS_CHECK(ts_mxp_ex_alloc(e, sizeof(float) * (size_t)(s->lda * nq), (void **)&s->A));
    const int64_t slots = s->nbc > 0 ? s->nbc : 1; // (one for the warm-up where no column is here)
    TS_CHECK(ts_mxp_ex_alloc(e, sizeof(float) * (size_t)(slots * NB * NB), (void **)&s->Linv));
    TS_CHECK(ts_mxp_ex_alloc(e, sizeof(float) * (size_t)(slots * NB * NB), (void **)&s->Uinv));
    TS_CHECK(ts_mxp_ex_alloc(e, 2 * (size_t)(round_up(mp, 8) * NB), (void **)&s->L16));
    TS_CHECK(ts_mxp_ex_alloc(e, 2 * (size_t)(NB * nq), (void **)&s->U16));
    TS_CHECK(ts_mxp_ex_alloc(e, 2 * (size_t)(2 * NB * NB), (void **)&s->Di16));
    TS_CHECK(ts_mxp_ex_alloc(e, sizeof(double) * (size_t)mp, (void **)&s->d));
    TS_CHECK(ts_mxp_ex_alloc(e, sizeof(double) * (size_t)mp, (void **)&s->acc));
    TS_CHECK(ts_mxp_ex_alloc(e, sizeof(double) * (size_t)nq, (void **)&s->x));
    TS_CHECK(ts_mxp_ex_alloc(e, sizeof(float) * (size_t)mp, (void **)&s->t));
    TS_CHECK(ts_mxp_ex_alloc(e, sizeof(float) * (size_t)NB, (void **)&s->y));
    TS_CHECK(ts_mxp_ex_alloc(e, sizeof(float) * (size_t)nq, (void **)&s->z));
    TS_CHECK(ts_mxp_ex_alloc(e, sizeof(float) * (size_t)nq, (void **)&s->w));
    const size_t hn = (size_t)(mp > nq ? mp : nq) + 1;
    s->hd = malloc(sizeof(double) * hn);
    s->hb = malloc(sizeof(double) * hn);
    s->hx = malloc(sizeof(double) * hn);
    s->hr = malloc(sizeof(double) * 2 * hn);
    s->hv = malloc(sizeof(double) * 2 * (size_t)NB);
    s->hf = malloc(sizeof(float) * 2 * (size_t)NB);
    s->hzero = calloc(hn, sizeof(float));
    if (e->dev) {
        size_t a = 2 * (size_t)(round_up(mp, 8) * NB), b = 2 * (size_t)(NB * nq);
        s->stage_bytes = a > b ? a : b;
        if (s->stage_bytes < 4 * (size_t)NB * NB) s->stage_bytes = 4 * (size_t)NB * NB;
        s->stage = malloc(s->stage_bytes);
        if (!s->stage) TS_RAISE(TS_ERR_NOMEM, "hpl-mxp: host staging of %zu bytes", s->stage_bytes);
    }
    if (!s->hd || !s->hb || !s->hx || !s->hr || !s->hv || !s->hf || !s->hzero)
        TS_RAISE(TS_ERR_NOMEM, "hpl-mxp: host vectors of %zu", hn);
    // the residual regenerates all local blocks in one launch: scratch for every local row
    TS_CHECK(ts_mxp_kern_create(e->st, s->mc->fmt, NB, mp > NB ? mp : NB, &s->k));
    s->ex1 = *e;
    if (s->depth > 0) {
        TS_CHECK(ts_mxp_ex_alloc(e, 2 * (size_t)(round_up(mp, 8) * NB), (void **)&s->L16b));
        TS_CHECK(ts_mxp_ex_alloc(e, 2 * (size_t)(NB * nq), (void **)&s->U16b));
        TS_CHECK(ts_stream_create(e->dev, &s->ex1.st));
        TS_CHECK(ts_event_create(e->dev, &s->ev_upd));
        TS_CHECK(ts_event_create(e->dev, &s->ev_pan));
        TS_CHECK(ts_event_create(e->dev, &s->ev_z));
        for (int i = 0; i < 2; i++) TS_CHECK(ts_event_create(e->dev, &s->ev_tall[i]));
        TS_CHECK(ts_mxp_kern_create(s->ex1.st, s->mc->fmt, NB, 1, &s->k1));
    }
    return 0;
}

// ---- generation ----

// This rank's blocks of A (FP32), its rows' diagonal d and b; ||A||_oo and ||b||_oo over the grid.
static int generate(mg_run *s) {
    const int64_t N = s->N, NB = s->NB, mp = s->mp;
    double *rs = NULL, *ad = NULL, *hrs = NULL;
    int rc = ts_mxp_ex_alloc(&s->ex, sizeof(double) * (size_t)(s->nbc * mp + mp), (void **)&rs);
    if (rc == 0) ad = rs + s->nbc * mp;
    if (rc == 0 && !(hrs = calloc((size_t)(s->nbc * mp + mp) + 1, sizeof(double))))
        rc = TS_ERROR(TS_ERR_NOMEM, "hpl-mxp: row sums");
    if (rc == 0) rc = ts_mxp_ex_put(&s->ex, rs, hrs, sizeof(double) * (size_t)(s->nbc * mp + mp));
    for (int64_t li = 0; li < s->nbr && rc == 0; li++)
        for (int64_t lj = 0; lj < s->nbc && rc == 0; lj++) {
            const int64_t gr = ts_hpl_l2g(li * NB, NB, s->myrow, s->P), gc = ts_hpl_l2g(lj * NB, NB, s->mycol, s->Q);
            const int64_t m = N - gr < NB ? N - gr : NB, n = N - gc < NB ? N - gc : NB;
            rc = ts_mxp_gen(s->k, N, gr, gc, m, n, s->A + li * NB + lj * NB * s->lda, s->lda, rs + lj * mp + li * NB,
                            ad + li * NB);
        }
    if (rc == 0) rc = ts_mxp_kern_sync(s->k);
    if (rc == 0) rc = ts_mxp_ex_get(&s->ex, hrs, rs, sizeof(double) * (size_t)(s->nbc * mp + mp));
    if (rc == 0) { // row sums and generated diagonals of the rows, over the process row
        for (int64_t i = 0; i < mp; i++) {
            double sum = 0.0;
            for (int64_t lj = 0; lj < s->nbc; lj++) sum += hrs[lj * mp + i];
            s->hr[i] = sum;
            s->hr[mp + i] = hrs[s->nbc * mp + i];
        }
        if (mp > 0) rc = ts_comm_allreduce_d(&s->row, s->hr, (int)(2 * mp), TS_COMM_SUM);
    }
    ts_mxp_ex_free(&s->ex, rs);
    free(hrs);
    TS_CHECK(rc);
    double nrm[2] = {0.0, 0.0};
    for (int64_t i = 0; i < mp; i++) {
        s->hd[i] = s->o->gen == TS_MXP_GEN_PLAIN ? s->hr[mp + i] : s->hr[i];
        const double row = s->hr[i] + fabs(s->hd[i]);
        if (row > nrm[0] || isnan(row)) nrm[0] = row;
    }
    TS_CHECK(ts_mxp_ex_put(&s->ex, s->d, s->hd, sizeof(double) * (size_t)(mp > 0 ? mp : 1)));
    for (int64_t kb = 0; kb < s->nblk; kb++) // the diagonal blocks held here
        if (kb % s->P == s->myrow && kb % s->Q == s->mycol) {
            const int64_t r0 = lrow(s, kb * NB), c0 = lcol(s, kb * NB);
            TS_CHECK(ts_mxp_set_diag(s->k, bwidth(s, kb), s->d + r0, s->A + r0 + c0 * s->lda, s->lda));
        }
    // b(i) = X(1 + i) from seed 2, for the rows held here
    const ts_lcg64_jump step = ts_lcg64_jump_n(1);
    for (int64_t li = 0; li < s->nbr; li++) {
        const int64_t gr = ts_hpl_l2g(li * NB, NB, s->myrow, s->P), m = N - gr < NB ? N - gr : NB;
        uint64_t x = ts_lcg64_apply(ts_lcg64_jump_n(1u + (uint64_t)gr), TS_MXP_SEED_B);
        for (int64_t i = 0; i < m; i++) {
            s->hb[li * NB + i] = ts_mxp_value(x);
            if (fabs(s->hb[li * NB + i]) > nrm[1]) nrm[1] = fabs(s->hb[li * NB + i]);
            x = ts_lcg64_apply(step, x);
        }
    }
    TS_CHECK(ts_comm_allreduce_d(&s->grid, nrm, 2, TS_COMM_MAX));
    s->normA = nrm[0];
    s->normb = nrm[1];
    return ts_mxp_kern_sync(s->k);
}

// ---- the LU ----

// Block column kb's panel on kernel context k: the diagonal block factored and inverted by its
// owner, the inverses, L21 and U12 formed and broadcast (into L16, U16).
static int panel(mg_run *s, ts_mxp_kern *k, int64_t kb, uint16_t *L16, uint16_t *U16) {
    const int64_t NB = s->NB, j = kb * NB, jb = bwidth(s, kb), lda = s->lda;
    const int prow = (int)(kb % s->P), pcol = (int)(kb % s->Q);
    const int inrow = s->myrow == prow, incol = s->mycol == pcol;
    const int64_t lr0 = lrow(s, j), lr1 = lrow(s, j + jb), lc0 = lcol(s, j), lc1 = lcol(s, j + jb);
    const int64_t mL = s->mp - lr1, nL = s->nq - lc1, ldl = round_up(mL > 0 ? mL : 1, 8);
    const float sc = ts_mxp_scale(s->N);
    uint16_t *Ui16 = s->Di16, *Li16 = s->Di16 + NB * NB;
    if (inrow && incol) {
        float *Li = s->Linv + (lc0 / NB) * NB * NB, *Ui = s->Uinv + (lc0 / NB) * NB * NB;
        TS_CHECK(ts_mxp_getrf_inv(k, jb, s->A + lr0 + lc0 * lda, lda, Li, Ui, NB, j));
        TS_CHECK(ts_mxp_cvt(k, jb, jb, Ui, NB, sc, Ui16, NB));
        TS_CHECK(ts_mxp_cvt(k, jb, jb, Li, NB, 1.0f, Li16, NB));
    }
    // the inverted diagonal factors: inv(U11) down the process column, inv(L11) along the row
    if (incol) TS_CHECK(bcast(s, 1, Ui16, 2 * (size_t)(NB * jb), prow));
    if (inrow) TS_CHECK(bcast(s, 0, Li16, 2 * (size_t)(NB * jb), pcol));
    if (incol && mL > 0) { // L21 = A21 inv(U11), then scaled by sc into 16 bits
        float *A21 = s->A + lr1 + lc0 * lda;
        TS_CHECK(ts_mxp_cvt(k, mL, jb, A21, lda, 1.0f, L16, ldl));
        TS_CHECK(ts_mxp_gemm(k, mL, jb, jb, 1.0f / sc, L16, ldl, Ui16, NB, 0.0f, A21, lda));
        TS_CHECK(ts_mxp_cvt(k, mL, jb, A21, lda, sc, L16, ldl));
    }
    if (inrow && nL > 0) { // U12 = inv(L11) A12
        float *A12 = s->A + lr0 + lc1 * lda;
        TS_CHECK(ts_mxp_cvt(k, jb, nL, A12, lda, 1.0f, U16, NB));
        TS_CHECK(ts_mxp_gemm(k, jb, nL, jb, 1.0f, Li16, NB, U16, NB, 0.0f, A12, lda));
        TS_CHECK(ts_mxp_cvt(k, jb, nL, A12, lda, 1.0f, U16, NB));
    }
    // the 16-bit panels: L21 along the process rows, U12 down the process columns
    if (mL > 0) TS_CHECK(bcast(s, 0, L16, 2 * (size_t)(ldl * jb), pcol));
    if (nL > 0) TS_CHECK(bcast(s, 1, U16, 2 * (size_t)(NB * nL), prow));
    return 0;
}

// Part of block column kb's update A22 -= L21 U12 on stream 0 (one 16-bit GEMM): this rank's
// trailing rows [r0, r1) and columns [c0, c1), counted from the trailing corner.
static int update(mg_run *s, int64_t kb, const uint16_t *L16, const uint16_t *U16, int64_t r0, int64_t r1,
                  int64_t c0, int64_t c1) {
    const int64_t NB = s->NB, j = kb * NB, jb = bwidth(s, kb), lr1 = lrow(s, j + jb), lc1 = lcol(s, j + jb);
    const int64_t ldl = round_up(s->mp - lr1 > 0 ? s->mp - lr1 : 1, 8);
    if (r0 >= r1 || c0 >= c1) return 0;
    return ts_mxp_gemm(s->k, r1 - r0, c1 - c0, jb, -1.0f / ts_mxp_scale(s->N), L16 + r0, ldl, U16 + c0 * NB, NB,
                       1.0f, s->A + (lr1 + r0) + (lc1 + c0) * s->lda, s->lda);
}

// Without look-ahead: each block column's panel and its whole update, on one stream (or the host).
static int factor_plain(mg_run *s, double t0, ts_event **ev) {
    for (int64_t kb = 0; kb < s->nblk; kb++) {
        const int64_t j = kb * s->NB, jb = bwidth(s, kb);
        TS_CHECK(panel(s, s->k, kb, s->L16, s->U16));
        TS_CHECK(update(s, kb, s->L16, s->U16, 0, s->mp - lrow(s, j + jb), 0, s->nq - lcol(s, j + jb)));
        TS_CHECK(ts_mxp_step_done(s->o, s->grid.rank == 0, kb, s->N, s->NB, t0, ev, s->ex.st));
    }
    return 0;
}

// Look-ahead of depth 1 (devices): update kb brings the next block column and block row up to date
// first (stream 0); stream 1 then factors and broadcasts panel kb+1 into the other pair of panels
// while stream 0 runs the rest of update kb. Stream 1's broadcasts keep one order on every rank.
static int factor_ahead(mg_run *s, double t0, ts_event **ev) {
    uint16_t *L[2] = {s->L16, s->L16b}, *U[2] = {s->U16, s->U16b};
    s->pex = &s->ex1;
    TS_CHECK(panel(s, s->k1, 0, L[0], U[0]));
    TS_CHECK(ts_event_record(s->ev_pan, s->ex1.st));
    for (int64_t kb = 0; kb < s->nblk; kb++) {
        const int cur = (int)(kb % 2);
        const int64_t j = kb * s->NB, jb = bwidth(s, kb);
        const int64_t m2 = s->mp - lrow(s, j + jb), n2 = s->nq - lcol(s, j + jb);
        TS_CHECK(ts_stream_wait_event(s->ex.st, s->ev_pan)); // panel kb, from stream 1
        if (kb + 1 < s->nblk) {
            // this rank's share of block column / block row kb+1 (the first local columns / rows)
            const int64_t w = s->mycol == (kb + 1) % s->Q ? bwidth(s, kb + 1) : 0;
            const int64_t h = s->myrow == (kb + 1) % s->P ? bwidth(s, kb + 1) : 0;
            TS_CHECK(update(s, kb, L[cur], U[cur], 0, m2, 0, w));  // the next block column
            TS_CHECK(update(s, kb, L[cur], U[cur], 0, h, w, n2));  // the next block row
            TS_CHECK(ts_event_record(s->ev_upd, s->ex.st));
            TS_CHECK(update(s, kb, L[cur], U[cur], h, m2, w, n2)); // the rest, beside the panel
            TS_CHECK(ts_stream_wait_event(s->ex1.st, s->ev_upd));
            TS_CHECK(panel(s, s->k1, kb + 1, L[1 - cur], U[1 - cur]));
            TS_CHECK(ts_event_record(s->ev_pan, s->ex1.st));
        } else {
            TS_CHECK(update(s, kb, L[cur], U[cur], 0, m2, 0, n2));
        }
        // (rank 0 with a progress callback has the events; elsewhere nothing is reported)
        if (ev[0]) TS_CHECK(ts_mxp_step_done(s->o, 1, kb, s->N, s->NB, t0, ev, s->ex.st));
    }
    return 0;
}

static int factor(mg_run *s, double t0) {
    ts_event *ev[2] = {NULL, NULL};
    int rc = 0;
    if (s->ex.dev && s->grid.rank == 0 && s->o->progress)
        for (int i = 0; i < 2 && rc == 0; i++) rc = ts_event_create(s->ex.dev, &ev[i]);
    if (rc == 0) rc = s->depth > 0 ? factor_ahead(s, t0, ev) : factor_plain(s, t0, ev);
    s->pex = &s->ex; // the refinement's broadcasts follow stream 0's work
    if (rc == 0) rc = ts_mxp_kern_sync(s->k);
    if (rc == 0 && s->k1) rc = ts_mxp_kern_sync(s->k1);
    for (int i = 0; i < 2; i++)
        if (ev[i]) ts_event_destroy(ev[i]);
    return rc;
}

// ---- the refinement ----
//
// A substitution sweeps the blocks in order (forward: L, then z; back: U, then w). Step n's
// diagonal block kb needs the partial sums of its rows over the block columns before it in the
// sweep, reduced along its process row. So that the chain of diagonal steps does not wait for the
// tall GEMVs, block kb's process column adds its contribution to the next step's rows first (the
// near GEMV, stream 0, right after z_kb), and to the rest of the column after (the tall GEMV: on
// stream 1 where there is one, running while the next steps reduce, solve and broadcast). The tall
// GEMV of step m covers the rows of steps m+2 onward: stream 0 touches the rows of step n only
// after every tall GEMV queued at step n-2 or before (wait_tall).

// Adds the seconds since the last phase ended to phase p.
static void lap(mg_run *s, ts_mxp_phase p) {
    const double now = ts_now();
    if (s->ph) s->ph[p] += now - s->mark;
    s->mark = now;
}

// Stream 0 waits for the latest tall GEMV queued at sweep step n-2 or before (the last two are kept).
static int wait_tall(mg_run *s, int64_t n) {
    if (!s->k1) return 0; // one stream: its order suffices
    int last = -1;
    for (int i = 0; i < 2; i++)
        if (s->tall_at[i] >= 0 && s->tall_at[i] <= n - 2 && (last < 0 || s->tall_at[i] > s->tall_at[last])) last = i;
    return last < 0 ? 0 : ts_stream_wait_event(s->ex.st, s->ev_tall[last]);
}

// t[r0, r1) += A[r0, r1) of block column lc0 (jb wide) times vec (stream 1 after vec is ready on stream 0).
static int tall(mg_run *s, int64_t n, int64_t r0, int64_t r1, int64_t lc0, int64_t jb, const float *vec) {
    const float *A = s->A + r0 + lc0 * s->lda;
    if (!s->k1) return ts_mxp_sgemv(s->k, r1 - r0, jb, 1.0f, A, s->lda, vec, 1.0f, s->t + r0);
    TS_CHECK(ts_stream_wait_event(s->ex1.st, s->ev_z));
    TS_CHECK(ts_mxp_sgemv(s->k1, r1 - r0, jb, 1.0f, A, s->lda, vec, 1.0f, s->t + r0));
    const int slot = s->ntall++ % 2;
    s->tall_at[slot] = n;
    return ts_event_record(s->ev_tall[slot], s->ex1.st);
}

// One substitution over the grid (back 0: forward with L into z; 1: back with U into w). v (forward:
// this rank's rows of the right-hand side, scaled by 1/vmax) feeds the diagonal owners.
static int substitute(mg_run *s, int back, const double *v, double vmax) {
    const int64_t NB = s->NB, lda = s->lda;
    ts_mxp_kern *k = s->k;
    float *out = back ? s->w : s->z;
    if (s->mp > 0) TS_CHECK(ts_mxp_ex_put(&s->ex, s->t, s->hzero, sizeof(float) * (size_t)s->mp)); // t = 0
    s->ntall = 0;
    s->tall_at[0] = s->tall_at[1] = -1;
    for (int64_t n = 0; n < s->nblk; n++) {
        const int64_t kb = back ? s->nblk - 1 - n : n, j = kb * NB, jb = bwidth(s, kb);
        const int prow = (int)(kb % s->P), pcol = (int)(kb % s->Q);
        const int inrow = s->myrow == prow, incol = s->mycol == pcol;
        const int64_t lr0 = lrow(s, j), lc0 = lcol(s, j);
        if (inrow) { // the partial sums of block kb's rows, summed on the diagonal owner
            TS_CHECK(wait_tall(s, n));
            TS_CHECK(ts_mxp_ex_get(&s->ex, s->hf, s->t + lr0, sizeof(float) * (size_t)jb)); // (waits for stream 0)
            for (int64_t i = 0; i < jb; i++) s->hv[i] = s->hf[i];
            if (s->Q > 1) TS_CHECK(ts_comm_reduce_sum_d(&s->row, s->hv, s->hv + NB, (int)jb, pcol));
            else memcpy(s->hv + NB, s->hv, sizeof(double) * (size_t)jb);
        }
        if (inrow && incol) {
            if (back) TS_CHECK(ts_mxp_ex_get(&s->ex, s->hf + NB, s->z + lc0, sizeof(float) * (size_t)jb));
            for (int64_t i = 0; i < jb; i++)
                s->hf[i] = (back ? s->hf[NB + i] : (float)(v[lr0 + i] / vmax)) - (float)s->hv[NB + i];
            TS_CHECK(ts_mxp_ex_put(&s->ex, s->y, s->hf, sizeof(float) * (size_t)jb));
            const float *Di = (back ? s->Uinv : s->Linv) + (lc0 / NB) * NB * NB;
            TS_CHECK(ts_mxp_sgemv(k, jb, jb, 1.0f, Di, NB, s->y, 0.0f, out + lc0));
        }
        if (!incol) continue;
        TS_CHECK(bcast(s, 1, out + lc0, sizeof(float) * (size_t)jb, prow));
        if (s->k1) TS_CHECK(ts_event_record(s->ev_z, s->ex.st));
        // the local rows of the next step's block [a0, a1) and the rest of the sweep's side [b0, b1)
        // (forward: L below block kb, t += L z_kb; back: U above it, t += U w_kb)
        int64_t a0, a1, b0, b1;
        if (!back) {
            const int64_t e1 = j + jb, e2 = e1 + NB < s->N ? e1 + NB : s->N;
            a0 = lrow(s, e1), a1 = lrow(s, e2), b0 = a1, b1 = s->mp;
        } else {
            a0 = lrow(s, j - NB > 0 ? j - NB : 0), a1 = lr0, b0 = 0, b1 = a0;
        }
        if (a1 > a0) {
            TS_CHECK(wait_tall(s, n + 1));
            TS_CHECK(ts_mxp_sgemv(k, a1 - a0, jb, 1.0f, s->A + a0 + lc0 * lda, lda, out + lc0, 1.0f, s->t + a0));
        }
        if (b1 > b0) TS_CHECK(tall(s, n, b0, b1, lc0, jb, out + lc0));
    }
    TS_CHECK(ts_mxp_kern_sync(k));
    return s->k1 ? ts_mxp_kern_sync(s->k1) : 0;
}

// x += U^-1 L^-1 v, v this rank's rows (host), of largest magnitude vmax over the grid.
static int correct(mg_run *s, const double *v, double vmax, int first) {
    if (!(vmax > 0)) return 0;
    TS_CHECK(substitute(s, 0, v, vmax));
    lap(s, first ? TS_MXP_PH_FIRST_FWD : TS_MXP_PH_CORR_FWD);
    TS_CHECK(substitute(s, 1, v, vmax));
    lap(s, first ? TS_MXP_PH_FIRST_BACK : TS_MXP_PH_CORR_BACK);
    if (s->nq > 0) TS_CHECK(ts_mxp_axpy(s->k, s->nq, vmax, s->w, s->x));
    TS_CHECK(ts_mxp_kern_sync(s->k));
    lap(s, TS_MXP_PH_UPDATE);
    return 0;
}

static int grid_correct(void *arg, int first) {
    mg_run *s = arg;
    if (!first) return correct(s, s->hr, s->r->norm_r, 0);
    memset(s->hx, 0, sizeof(double) * (size_t)(s->nq + 1));
    TS_CHECK(ts_mxp_ex_put(&s->ex, s->x, s->hx, sizeof(double) * (size_t)(s->nq > 0 ? s->nq : 1)));
    lap(s, TS_MXP_PH_UPDATE);
    return correct(s, s->hb, s->normb, 1);
}

// r = b - A x with this rank's blocks regenerated in FP64 (one launch over all of them), summed
// along the process rows; the scaled residual from norms reduced over the grid (the same on every
// rank).
static int grid_residual(void *arg, double *ratio) {
    mg_run *s = arg;
    const int64_t N = s->N, mp = s->mp;
    if (mp > 0)
        TS_CHECK(ts_mxp_resid_bc(s->k, N, s->NB, s->P, s->myrow, s->Q, s->mycol, mp, s->nq, s->d, s->x, NULL, s->acc));
    TS_CHECK(ts_mxp_kern_sync(s->k));
    lap(s, TS_MXP_PH_RESID_GEN);
    if (mp > 0) TS_CHECK(ts_mxp_ex_get(&s->ex, s->hr, s->acc, sizeof(double) * (size_t)mp));
    if (s->nq > 0) TS_CHECK(ts_mxp_ex_get(&s->ex, s->hx, s->x, sizeof(double) * (size_t)s->nq));
    if (mp > 0 && s->Q > 1) TS_CHECK(ts_comm_allreduce_d(&s->row, s->hr, (int)mp, TS_COMM_SUM));
    double nrm[4] = {0.0, 0.0, 0.0, 0.0}; // ||r||, ||x||, r or x not a number
    for (int64_t i = 0; i < mp; i++) {
        s->hr[i] += s->hb[i];
        if (isnan(s->hr[i])) nrm[2] = 1.0;
        else if (fabs(s->hr[i]) > nrm[0]) nrm[0] = fabs(s->hr[i]);
    }
    for (int64_t i = 0; i < s->nq; i++) {
        if (isnan(s->hx[i])) nrm[3] = 1.0;
        else if (fabs(s->hx[i]) > nrm[1]) nrm[1] = fabs(s->hx[i]);
    }
    TS_CHECK(ts_comm_allreduce_d(&s->grid, nrm, 4, TS_COMM_MAX));
    *ratio = ts_mxp_check(s->r, N, nrm[2] > 0 ? NAN : nrm[0], nrm[3] > 0 ? NAN : nrm[1], s->normA, s->normb);
    lap(s, TS_MXP_PH_RESID_RED);
    return 0;
}

// The whole solution on rank 0 (tests): every rank of process row 0 gives its columns' entries.
static int gather_x(mg_run *s, double *x_out) {
    double *all = calloc((size_t)s->N, sizeof(double));
    if (!all) TS_RAISE(TS_ERR_NOMEM, "hpl-mxp: the solution's %lld entries", (long long)s->N);
    if (s->myrow == 0)
        for (int64_t l = 0; l < s->nq; l++) all[ts_hpl_l2g(l, s->NB, s->mycol, s->Q)] = s->hx[l];
    int rc = ts_comm_allreduce_d(&s->grid, all, (int)s->N, TS_COMM_SUM);
    if (rc == 0 && s->grid.rank == 0) memcpy(x_out, all, sizeof(double) * (size_t)s->N);
    free(all);
    return rc;
}

// ---- one run on the grid ----

// The refinement's phases on rank 0 (debug: -v).
static void log_phases(const ts_mxp_result *r) {
    char line[512];
    int at = 0;
    double sum = 0.0;
    for (int p = 0; p < TS_MXP_PHASES && at < (int)sizeof line; p++) {
        at += snprintf(line + at, sizeof line - (size_t)at, "%s%s %.4f", p ? ", " : "",
                       ts_mxp_phase_name((ts_mxp_phase)p), r->phase_s[p]);
        sum += r->phase_s[p];
    }
    TS_LOG_D("hpl-mxp: refinement phases on rank 0 (s): %s; sum %.4f", line, sum);
}

// Collective over the grid: 1 when every rank's flag is 1.
static int all_ok(mg_run *s, int ok) {
    ts_comm_allreduce_i(&s->grid, &ok, 1, TS_COMM_MIN);
    return ok;
}

static int run_member(mg_run *s) {
    ts_hpl_ctx *c = s->c;
    ts_mxp_result *r = s->r;
    const int dev = ts_mxp_exec_device(c);
    if (!all_ok(s, !dev || c->dev != NULL)) {
        ts_mxp_skip(r, "the device path needs a device on every rank (TESSERA_SIM_DEVICES for simulated ones)");
        return 0;
    }
    double avail, largest;
    ts_mxp_available(c, dev, &avail, &largest);
    const double need = grid_bytes(s->N, (int)s->NB, s->P, s->Q, dev);
    if (!all_ok(s, need <= 0.98 * avail)) {
        char why[256];
        snprintf(why, sizeof why, "N=%lld does not fit in %s memory on every rank of the %d x %d grid (%.2f GiB needed "
                 "a rank, %.2f GiB free on rank 0)", (long long)s->N, dev ? "device" : "host", s->P, s->Q,
                 need / (1 << 30), avail / (1 << 30));
        ts_mxp_skip(r, why);
        return 0;
    }
    int rc = 0;
    s->depth = dev && s->o->depth != 0 ? 1 : 0; // look-ahead needs a second stream
    if (dev) {
        s->ex.dev = c->dev;
        rc = ts_stream_create(c->dev, &s->ex.st);
    }
    if (rc == 0) rc = mg_alloc(s);
    const int mem = rc == TS_ERR_NOMEM || rc == TS_ERR_DEVMEM;
    char msg[200] = "";
    if (mem) snprintf(msg, sizeof msg, "%.160s", ts_error_last()->message);
    int st = rc;
    ts_comm_allreduce_i(&s->grid, &st, 1, TS_COMM_MIN);
    if (st == TS_ERR_NOMEM || st == TS_ERR_DEVMEM || (st < 0 && mem)) {
        char why[256];
        snprintf(why, sizeof why, "memory allocation failed for N=%lld on the %d x %d grid%s%s", (long long)s->N, s->P,
                 s->Q, msg[0] ? ": " : "", msg);
        ts_error_clear();
        ts_mxp_skip(r, why);
        return 0;
    }
    if (st < 0) return rc < 0 ? rc : TS_ERROR(st, "hpl-mxp: another rank of the grid failed to set up");
    snprintf(r->exec_used, sizeof r->exec_used, "%s",
             dev ? (ts_devset_backend(c->devs) == TS_BACKEND_CUDA ? "device:cuda" : "device:sim") : "cpu");
    snprintf(r->engine_used, sizeof r->engine_used, "%s", ts_mxp_kern_engine(s->k));
    TS_CHECK(join_devices(s));
    r->depth = s->depth;

    const double tg = ts_now();
    TS_CHECK(generate(s));
    r->t_gen = ts_now() - tg;
    if (dev) { // load the kernels before the timer (outputs overwritten before they are read)
        const int64_t nb = s->NB < s->N ? s->NB : s->N;
        TS_CHECK(ts_mxp_cvt(s->k, nb, nb, s->Linv, s->NB, 1.0f, s->Di16, s->NB));
        TS_CHECK(ts_mxp_kern_sync(s->k));
        ts_mxp_kern *ks[2] = {s->k, s->k1};
        for (int i = 0; i < 2; i++) {
            if (!ks[i]) continue;
            TS_CHECK(ts_mxp_gemm(ks[i], nb, nb, nb, 1.0f, s->Di16, s->NB, s->Di16, s->NB, 0.0f, s->Uinv, s->NB));
            TS_CHECK(ts_mxp_sgemv(ks[i], nb, nb, 1.0f, s->Uinv, s->NB, s->Uinv, 0.0f, s->Linv)); // the solves' GEMV
            TS_CHECK(ts_mxp_kern_sync(ks[i]));
        }
    }
    TS_CHECK(ts_comm_barrier(&s->grid));

    // the timed part: the LU and the refinement
    ts_mxp_stamp(r->start_time);
    const double t0 = ts_now();
    TS_CHECK(factor(s, t0));
    TS_CHECK(ts_comm_barrier(&s->grid));
    const double t1 = ts_now();
    memset(r->phase_s, 0, sizeof r->phase_s); // the phases from here to the last residual
    r->phases = 1;
    s->ph = r->phase_s;
    s->mark = t1;
    int64_t bk = 0, bk1 = 0;
    TS_CHECK(ts_mxp_kern_breakdown(s->k, &bk));
    if (s->k1) TS_CHECK(ts_mxp_kern_breakdown(s->k1, &bk1));
    if (bk1 > 0 && (bk == 0 || bk1 < bk)) bk = bk1;
    double bd = bk > 0 ? (double)bk : INFINITY; // the first breakdown column over the grid
    TS_CHECK(ts_comm_allreduce_d(&s->grid, &bd, 1, TS_COMM_MIN));
    r->breakdown = isfinite(bd) ? (int64_t)bd : 0;
    lap(s, TS_MXP_PH_CHECK);
    if (r->breakdown == 0) {
        const ts_mxp_refiner f = {s, grid_residual, grid_correct};
        TS_CHECK(ts_mxp_refine(s->o, s->mc->threshold, r, &f));
    } else {
        r->stop = 3;
    }
    ts_mxp_times(r, s->N, t0, t1, ts_now());
    if (s->grid.rank == 0) log_phases(r);
    // the verdict and its figures are the grid's, not a rank's
    TS_CHECK(ts_comm_same_on_ranks(&s->grid, r->passed, "hpl-mxp: the verdict"));
    TS_CHECK(ts_comm_same_on_ranks(&s->grid, r->iterations, "hpl-mxp: the iteration count"));
    // (a residual that is not a number compares unequal to itself: its class is checked instead)
    TS_CHECK(ts_comm_same_on_ranks(&s->grid, isnan(r->resid) ? -1.0 : r->resid, "hpl-mxp: the scaled residual"));
    if (s->o->x_out && r->breakdown == 0) TS_CHECK(gather_x(s, s->o->x_out));
    return 0;
}

int ts_mxp_run_grid(ts_hpl_ctx *c, const ts_mxp_opts *o, const ts_mxp_case *mc, ts_mxp_result *r) {
    mg_run s = {.c = c, .mc = mc, .o = o, .r = r, .N = mc->N, .NB = mc->NB, .P = mc->P, .Q = mc->Q,
                .nblk = (mc->N + mc->NB - 1) / mc->NB};
    int rc = ts_comm_grid(&c->world, s.P, s.Q, mc->pmap == 1, &s.grid, &s.row, &s.col, &s.myrow, &s.mycol);
    if (rc == 0 && s.grid.rank >= 0) {
        s.mp = ts_hpl_numroc(s.N, s.NB, s.myrow, s.P);
        s.nq = ts_hpl_numroc(s.N, s.NB, s.mycol, s.Q);
        s.lda = round_up(s.mp > 0 ? s.mp : 1, 32);
        s.nbr = (s.mp + s.NB - 1) / s.NB;
        s.nbc = (s.nq + s.NB - 1) / s.NB;
        rc = run_member(&s);
        mg_free(&s);
        if (s.ex.st) ts_stream_destroy(s.ex.st);
    }
    ts_comm_free(&s.row);
    ts_comm_free(&s.col);
    ts_comm_free(&s.grid);
    return rc;
}
