// ts_tiles_l3.c: SYMM/HEMM, SYRK/HERK, SYR2K/HER2K, TRMM and TRSM as lists of tile products on the tile runtime.
//
// Every routine becomes a set of C-tile tasks (BLASX, equations 1a-1f): task (i, j) is a list of
// tile GEMMs C(i,j) = sum alpha_p op(X_p) op(Y_p) (+ beta C(i,j) on the first), where each operand
// tile is a stored T x T block of A or B with its own op and, for a diagonal block of a symmetric,
// Hermitian or triangular A, a preparation done once on the device's cached copy (ts_tile_ops.h).
// The device worker (ts_tiles_worker.c) queues these through tl_l3_queue instead of its GEMM k-loop
// and writes the tile back through tl_l3_copy_out, which on a diagonal C tile of ?SYRK/?SYR2K/
// ?HERK/?HER2K copies only the uplo triangle (column by column), so the other triangle of C is never
// written. TRMM and TRSM work in place on B; their tasks carry a predecessor (tl_task.prev):
//   TRMM, B := alpha op(A) B: C(i,j) = sum_l op(A)(i,l) B(l,j) reads the original B(l,j) for l on
//     one side of i, so the tasks of a tile column run in the order in which no tile is overwritten
//     before its last reader ran (op(A) upper: i ascending; lower: descending; the right side along
//     the tile row). Tiles are computed in place, nothing is staged.
//   TRSM, X = alpha op(A)^-1 B: task (i,j) is alpha B(i,j) - sum op(A)(i,l) X(l,j) over the solved
//     tiles, then a device TRSM with the diagonal block; a chain per tile column (left) or row (right).
// The scheduler starts a task only when its predecessor is done (written back), so operand tiles
// read from host B are the right version, and caches are per call.
#include "runtime/ts_tiles_l3.h"
#include "runtime/ts_tiles_internal.h"

#include "core/ts_error.h"
#include "kernels/ts_tile_ops.h"

#include <stdlib.h>
#include <string.h>

// ---------------------------------------------------------------- scalars

static void sc_get(char prec, const void *x, double *re, double *im) {
    *im = 0;
    switch (prec) {
    case 's': *re = *(const float *)x; break;
    case 'd': *re = *(const double *)x; break;
    case 'c': *re = ((const float *)x)[0], *im = ((const float *)x)[1]; break;
    default: *re = ((const double *)x)[0], *im = ((const double *)x)[1]; break;
    }
}

static void sc_put(char prec, void *x, double re, double im) {
    switch (prec) {
    case 's': *(float *)x = (float)re; break;
    case 'd': *(double *)x = re; break;
    case 'c': ((float *)x)[0] = (float)re, ((float *)x)[1] = (float)im; break;
    default: ((double *)x)[0] = re, ((double *)x)[1] = im; break;
    }
}

static int sc_is(char prec, const void *x, double v) {
    double re, im;
    sc_get(prec, x, &re, &im);
    return re == v && im == 0;
}

// A real scalar of the precision's real type (?HERK alpha/beta, ?HER2K beta) as a complex one.
static void sc_from_real(char prec, const void *x, unsigned char *out) {
    memset(out, 0, 16);
    sc_put(prec, out, prec == 'c' ? (double)*(const float *)x : *(const double *)x, 0);
}

// C := beta C on the rows x cols block, only the uplo triangle ('L'/'U'; 0 = all); beta == 0 sets
// zeros (NaN are not propagated, as the reference); diag_real: the diagonal's imaginary part := 0.
static void host_scale(char prec, char uplo, int64_t rows, int64_t cols, const void *beta, void *C, int64_t ldc,
                       int diag_real) {
    size_t es = ts_prec_size(prec);
    double br, bi;
    sc_get(prec, beta, &br, &bi);
    int zero = br == 0 && bi == 0;
    for (int64_t j = 0; j < cols; j++) {
        int64_t r0 = uplo == 'L' ? j : 0, r1 = uplo == 'U' ? (j + 1 < rows ? j + 1 : rows) : rows;
        for (int64_t i = r0; i < r1; i++) {
            char *x = (char *)C + ((size_t)i + (size_t)j * (size_t)ldc) * es;
            double xr, xi;
            sc_get(prec, x, &xr, &xi);
            if (diag_real && i == j) xi = 0;
            if (zero) sc_put(prec, x, 0, 0);
            else sc_put(prec, x, br * xr - bi * xi, br * xi + bi * xr);
        }
    }
}

static size_t span_bytes(int64_t rows, int64_t cols, int64_t ld, size_t es) {
    if (rows <= 0 || cols <= 0) return 0;
    return ((size_t)(cols - 1) * (size_t)ld + (size_t)rows) * es;
}

static char up(char x) { return (char)(x >= 'a' && x <= 'z' ? x - 32 : x); }

// ---------------------------------------------------------------- argument checks

static int64_t max1(int64_t a) { return a > 1 ? a : 1; }
static int uplo_ok(char u) { return u == 'L' || u == 'U'; }

int ts_symm_check_args(char side, char uplo, int64_t m, int64_t n, int64_t lda, int64_t ldb, int64_t ldc) {
    side = up(side), uplo = up(uplo);
    if (side != 'L' && side != 'R') return 1;
    if (!uplo_ok(uplo)) return 2;
    if (m < 0) return 3;
    if (n < 0) return 4;
    if (lda < max1(side == 'L' ? m : n)) return 7;
    if (ldb < max1(m)) return 9;
    if (ldc < max1(m)) return 12;
    return 0;
}

static int trans_ok(char prec, int herm, char t) {
    if (t == 'N') return 1;
    if (herm) return t == 'C';
    if (ts_prec_is_complex(prec)) return t == 'T';
    return t == 'T' || t == 'C';
}

// SYRK's (two 0, no B) and SYR2K's arguments; B's position moves C's from 10 to 12.
static int rank_check_args(char prec, int herm, char uplo, char trans, int64_t n, int64_t k, int64_t lda, int two,
                           int64_t ldb, int64_t ldc) {
    uplo = up(uplo), trans = up(trans);
    if (!uplo_ok(uplo)) return 1;
    if (!trans_ok(prec, herm, trans)) return 2;
    if (n < 0) return 3;
    if (k < 0) return 4;
    if (lda < max1(trans == 'N' ? n : k)) return 7;
    if (two && ldb < max1(trans == 'N' ? n : k)) return 9;
    if (ldc < max1(n)) return two ? 12 : 10;
    return 0;
}

int ts_syrk_check_args(char prec, int herm, char uplo, char trans, int64_t n, int64_t k, int64_t lda, int64_t ldc) {
    return rank_check_args(prec, herm, uplo, trans, n, k, lda, 0, 0, ldc);
}

int ts_syr2k_check_args(char prec, int herm, char uplo, char trans, int64_t n, int64_t k, int64_t lda, int64_t ldb,
                        int64_t ldc) {
    return rank_check_args(prec, herm, uplo, trans, n, k, lda, 1, ldb, ldc);
}

static int bad_arg(const char *who, int pos) {
    TS_RAISE(TS_ERR_ARG, "%s: argument %d is invalid (reference BLAS numbering)", who, pos);
}

static int check_prec(const char *who, char prec, int herm) {
    if (!ts_prec_size(prec) || prec != (prec | 0x20))
        TS_RAISE(TS_ERR_ARG, "%s: precision '%c' (s, d, c or z)", who, prec);
    if (herm && !ts_prec_is_complex(prec))
        TS_RAISE(TS_ERR_ARG, "%s: the Hermitian routines take precision 'c' or 'z', not '%c'", who, prec);
    return 0;
}

// ---------------------------------------------------------------- task lists

typedef struct {
    tl_l3 L;
    int capt, capp;
    int64_t T;
    int diag_rank; // the runtime's opts.diag_rank
    int diag_trmm; // ... and opts.diag_trmm
    int trans_prep; // ... and opts.trans_prep
} builder;

static tl_opnd opnd(int mat, int64_t bi, int64_t bj, char op, int prep) {
    tl_opnd o = {.bi = bi, .bj = bj, .mat = (unsigned char)mat, .op = op, .prep = (unsigned char)prep};
    return o;
}

static void mat_set(builder *b, int mat, const void *p, int64_t ld, int64_t rows, int64_t cols) {
    b->L.ptr[mat] = p, b->L.ld[mat] = ld, b->L.rows[mat] = rows, b->L.cols[mat] = cols;
    b->L.brows[mat] = (rows + b->T - 1) / b->T;
    b->L.bcols[mat] = (cols + b->T - 1) / b->T;
}

static int add_prod(builder *b, tl_opnd x, tl_opnd y, int alpha2) {
    if (b->L.nprods == b->capp) {
        int cap = b->capp ? 2 * b->capp : 256;
        tl_prod *p = realloc(b->L.prods, sizeof *p * (size_t)cap);
        if (!p) TS_RAISE(TS_ERR_NOMEM, "tile runtime: out of host memory for %d tile products", cap);
        b->L.prods = p, b->capp = cap;
    }
    tl_prod *p = &b->L.prods[b->L.nprods++];
    p->a = x, p->b = y, p->alpha2 = (unsigned char)alpha2, p->kind = TL_GEMM;
    return 0;
}

// Opens task (i, j): its products are the ones added until the next task opens.
static int add_task(builder *b, int64_t i, int64_t j, int prev, char mask) {
    if (b->L.ntasks == b->capt) {
        int cap = b->capt ? 2 * b->capt : 64;
        tl_task *t = realloc(b->L.tasks, sizeof *t * (size_t)cap);
        if (!t) TS_RAISE(TS_ERR_NOMEM, "tile runtime: out of host memory for %d tasks", cap);
        b->L.tasks = t, b->capt = cap;
    }
    if (b->L.ntasks > 0) { // close the previous one
        tl_task *q = &b->L.tasks[b->L.ntasks - 1];
        q->np = b->L.nprods - q->p0;
    }
    if ((double)b->L.ntasks + 1 > 2e9) TS_RAISE(TS_ERR_ARG, "tile runtime: too many tasks; use a larger tile");
    tl_task *t = &b->L.tasks[b->L.ntasks++];
    memset(t, 0, sizeof *t);
    t->i = i, t->j = j, t->p0 = b->L.nprods, t->prev = prev, t->mask = mask, t->chain = -1;
    return b->L.ntasks - 1;
}

static void close_tasks(builder *b) {
    if (b->L.ntasks > 0) {
        tl_task *q = &b->L.tasks[b->L.ntasks - 1];
        q->np = b->L.nprods - q->p0;
    }
}

static void builder_free(builder *b) {
    free(b->L.tasks);
    free(b->L.prods);
    free(b->L.held);
}

// Runs the task list: C (m x n) is the output; alpha for the products, beta for C.
static int l3_run(ts_tiles *rt, char prec, builder *b, int64_t m, int64_t n, int64_t kdim, const void *alpha,
                  const void *beta, void *C, int64_t ldc, const void *const pin[3], const size_t pin_bytes[3],
                  ts_tiles_stats *stats) {
    close_tasks(b);
    tl_call *c = calloc(1, sizeof *c);
    if (!c) TS_RAISE(TS_ERR_NOMEM, "%s: out of host memory", b->L.name);
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->cond, NULL);
    c->rt = rt;
    c->prec = prec, c->ta = 'N', c->tb = 'N';
    c->m = m, c->n = n, c->k = kdim > 0 ? kdim : 1;
    c->lda = c->ldb = 1, c->ldc = ldc;
    c->C = C;
    c->es = ts_prec_size(prec);
    memcpy(c->alpha, alpha, c->es);
    memcpy(c->beta, beta, c->es);
    memset(c->one, 0, sizeof c->one);
    sc_put(prec, c->one, 1, 0);
    c->beta_zero = sc_is(prec, c->beta, 0);
    c->c_read = !c->beta_zero || b->L.inplace;
    c->engine = rt->opts.engine;
    c->T = b->T;
    c->l3 = &b->L;
    int rc = tl_call_exec(c, pin, pin_bytes, stats);
    tl_call_free(c);
    return rc;
}

// ---------------------------------------------------------------- the runtime's side

double tl_l3_task_flops(const tl_call *c, int t) {
    const tl_l3 *L = c->l3;
    const tl_task *tk = &L->tasks[t];
    double mb = (double)tl_dim(c->m, c->T, tk->i), nb = (double)tl_dim(c->n, c->T, tk->j), f = 0;
    double tri = L->side == 'L' ? mb * mb * nb : mb * nb * nb; // a solve or triangular product of the tile
    for (int p = tk->p0; p < tk->p0 + tk->np; p++) {
        const tl_opnd *a = &L->prods[p].a;
        double kb = (double)tl_dim(a->op == 'N' ? L->cols[a->mat] : L->rows[a->mat], c->T, a->op == 'N' ? a->bj : a->bi);
        int kind = L->prods[p].kind;
        if (kind == TL_TRMM) f += tri;
        else f += kind == TL_GEMM ? 2.0 * mb * nb * kb : (kind == TL_RANK2 ? 2.0 : 1.0) * mb * (mb + 1) * kb;
    }
    if (tk->solve) f += tri;
    return f * (ts_prec_is_complex(c->prec) ? 4.0 : 1.0);
}

int tl_l3_ready(const tl_call *c, int t, int d) {
    int p = c->l3->tasks[t].prev;
    if (p < 0 || c->state[p] == TL_DONE) return 1;
    // Forwarded: p is queued on d (running there, not being built) and, if its tile is an operand
    // of later tasks, published in d's cache. By induction every earlier task of the chain is done
    // or in flight on d and published, so t's operands are on the host or in d's cache.
    return d >= 0 && c->rt->opts.forward && c->state[p] == TL_RUNNING && c->owner[p] == d &&
           c->dc[d].building != p && (tl_l3_out_key(c, p) < 0 || c->pub[p]);
}

int64_t tl_l3_out_key(const tl_call *c, int t) {
    const tl_l3 *L = c->l3;
    const tl_task *tk = &L->tasks[t];
    if (!tk->solve) return -1; // TRMM's output is read by no later task (its readers ran before it)
    return (tk->i + tk->j * L->brows[TL_B]) * 2; // the raw TL_B operand (i, j): key_of(opnd(TL_B, i, j, 'N', 0))
}

static int64_t key_of(const tl_l3 *L, const tl_opnd *o) {
    return (o->bi + o->bj * L->brows[o->mat]) * 2 + (o->prep ? 1 : 0);
}

int64_t tl_l3_nkeys(const tl_call *c, int mat) { return c->l3->brows[mat] * c->l3->bcols[mat] * 2; }

int tl_l3_score(const tl_call *c, int d, int t) {
    const tl_l3 *L = c->l3;
    const tl_task *tk = &L->tasks[t];
    const tl_devcall *dc = &c->dc[d];
    int s = 0;
    for (int p = tk->p0; p < tk->p0 + tk->np; p++) {
        const tl_opnd *o[2] = {&L->prods[p].a, &L->prods[p].b};
        for (int q = 0; q < 2; q++) {
            const int *map = o[q]->mat == TL_A ? dc->mapA : dc->mapB;
            s += map[key_of(L, o[q])] >= 0;
        }
    }
    return s;
}

int tl_l3_origin(const tl_call *c, int ndev, int d) {
    int64_t o = tl_grid_origin(c->mt, c->nt, ndev, d), i0 = o % c->mt, j0 = o / c->mt, bd = -1;
    int best = 0;
    for (int t = 0; t < c->l3->ntasks; t++) {
        const tl_task *tk = &c->l3->tasks[t];
        int used = tk->prev >= 0;
        for (int e = 0; e < d && !used; e++) used = c->dc[e].origin == t;
        int64_t di = tk->i > i0 ? tk->i - i0 : i0 - tk->i, dj = tk->j > j0 ? tk->j - j0 : j0 - tk->j;
        int64_t dist = di > dj ? di : dj;
        if (!used && (bd < 0 || dist < bd)) best = t, bd = dist;
    }
    return best;
}

void tl_l3_tile_geom(const tl_call *c, int mat, int64_t idx, const char **src, size_t *spitch, size_t *width,
                     size_t *rows, int *prep, char *uplo) {
    const tl_l3 *L = c->l3;
    int64_t blk = idx / 2, bi = blk % L->brows[mat], bj = blk / L->brows[mat], T = c->T;
    *src = L->ptr[mat] + ((size_t)(bi * T) + (size_t)(bj * T) * (size_t)L->ld[mat]) * c->es;
    *spitch = (size_t)L->ld[mat] * c->es;
    *width = (size_t)tl_dim(L->rows[mat], T, bi) * c->es;
    *rows = (size_t)tl_dim(L->cols[mat], T, bj);
    *prep = idx % 2 ? L->prep_kind[mat] : TS_TILE_NONE;
    *uplo = L->prep_uplo[mat];
}

// Operand tile o in device d's cache, the compute stream waiting for it; its slot in *slot.
// The order the diagonal TRMM products and TRSM solves are split down to (opts.tri_base).
static int64_t tri_base(const tl_call *c) {
    int64_t b = c->rt->opts.tri_base;
    if (b >= 0) return b;
    b = c->T / 8;
    return b < 32 ? 32 : b;
}

static int get_operand(tl_call *c, int d, const tl_opnd *o, int *slot) {
    TS_CHECK(tl_cache_get(c, d, o->mat, key_of(c->l3, o), slot));
    int rc = ts_stream_wait_event(c->rt->dev[d].s_comp, c->dc[d].slots[*slot].ready);
    if (rc < 0) c->dc[d].slots[*slot].readers--;
    return rc;
}

// The q-th product task tk runs (its index in L->prods). With opts.grid 2 the list runs from product
// (i np/mt + j np/nt) mod np on, cyclically, as the GEMM's k-loop (tl_k_start), so that devices whose
// first tasks share operand tiles load different ones from the host first and copy the rest from each
// other. A TRMM tile's diagonal product (it writes the whole tile) stays first. The order depends on
// the tile alone (device and CPU alike); beta goes with the first product run.
static int prod_at(const tl_call *c, const tl_task *tk, int q) {
    const int fixed = tk->np > 0 && c->l3->prods[tk->p0].kind == TL_TRMM, nrot = tk->np - fixed;
    if (q < fixed || nrot <= 1) return tk->p0 + q;
    int64_t r0 = tl_k_start(c->rt->opts.grid, c->mt, c->nt, nrot, tk->i, tk->j);
    return tk->p0 + fixed + (int)((q - fixed + r0) % nrot);
}

int tl_l3_queue(tl_call *c, int d, int t, int cs, int trace, int save_at) {
    tl_devrt *dr = &c->rt->dev[d];
    tl_devcall *dc = &c->dc[d];
    const tl_l3 *L = c->l3;
    const tl_task *tk = &L->tasks[t];
    int64_t T = c->T, mb = tl_dim(c->m, T, tk->i), nb = tl_dim(c->n, T, tk->j);
    int rc = 0;
    if (trace >= 0 && (rc = ts_host_callback(dr->s_comp, tl_trace_stamp, &c->trace[trace].t[2])) < 0)
        return tl_call_fail(c, rc);
    for (int q = 0; q < tk->np; q++) {
        const tl_prod *pr = &L->prods[prod_at(c, tk, q)];
        int sa, sb;
        if ((rc = get_operand(c, d, &pr->a, &sa)) < 0) return tl_call_fail(c, rc);
        if ((rc = get_operand(c, d, &pr->b, &sb)) < 0) {
            dc->slots[sa].readers--;
            return tl_call_fail(c, rc);
        }
        const tl_opnd *a = &pr->a, *b = &pr->b;
        int64_t ra = tl_dim(L->rows[a->mat], T, a->bi), ca = tl_dim(L->cols[a->mat], T, a->bj);
        int64_t rb = tl_dim(L->rows[b->mat], T, b->bi);
        if (save_at >= 0) { // the task's own tile among the operands: its original to the save buffer
            const tl_opnd *own = NULL;
            int so = -1;
            if (a->mat == TL_B && a->bi == tk->i && a->bj == tk->j && !a->prep) own = a, so = sa;
            else if (b->mat == TL_B && b->bi == tk->i && b->bj == tk->j && !b->prep) own = b, so = sb;
            if (own) {
                tl_flight *f = &dc->flight[save_at];
                size_t w = (size_t)mb * c->es;
                tl_slot *sl = &dc->slots[so];
                sl->readers++; // held until the copy is done (released by the ring on the save stream)
                tl_ref ref = {d, so};
                rc = ts_stream_wait_event(dr->s_save, sl->ready);
                if (rc >= 0) rc = ts_copy2d_async(dr->s_save, TS_COPY_D2H, dr->save[save_at], w, sl->ptr, w, w, (size_t)nb);
                if (rc >= 0) rc = ts_host_callback(dr->s_save, tl_flag_set, (void *)&f->saved);
                if (rc >= 0) rc = ts_event_record(dr->save_ev[save_at], dr->s_save);
                if (rc < 0) {
                    sl->readers--, dc->slots[sa].readers--, dc->slots[sb].readers--;
                    return tl_call_fail(c, rc);
                }
                if ((rc = tl_ring_push(c, d, dr->s_save, &ref, 1)) < 0) return rc;
                dc->bytes_save += w * (size_t)nb;
                save_at = -1;
            }
        }
        // The C slot cannot move: it is read (readers = 1) until the flight retires.
        void *cp = dc->slots[cs].ptr;
        if (pr->kind == TL_TRMM) { // the first product of a TRMM tile: C := alpha op(A(x,x)) B or alpha B op(A(x,x))
            int left = L->side == 'L';
            int sblk = left ? sa : sb, sbt = left ? sb : sa;
            int64_t rblk = left ? ra : rb, rbt = left ? rb : ra;
            rc = ts_dev_trmm_blocked(dr->s_comp, c->engine, c->prec, L->side, L->uplo, L->ta, L->diag, mb, nb,
                                     c->alpha, dc->slots[sblk].ptr, rblk, dc->slots[sbt].ptr, rbt, cp, mb,
                                     tri_base(c));
        } else if (pr->kind != TL_GEMM) // a diagonal tile of ?SYRK/?SYR2K: its triangle only
            rc = ts_dev_rank(dr->s_comp, c->prec, pr->kind == TL_RANK2, tk->mask, a->op == 'N' ? 'N' : 'T', mb,
                             a->op == 'N' ? ca : ra, c->alpha, dc->slots[sa].ptr, ra, dc->slots[sb].ptr, rb,
                             q == 0 ? c->beta : c->one, cp, mb);
        else
            rc = ts_dev_gemm(dr->s_comp, c->engine, c->prec, a->op, b->op, mb, nb, a->op == 'N' ? ca : ra,
                             pr->alpha2 ? L->alpha2 : c->alpha, dc->slots[sa].ptr, ra, dc->slots[sb].ptr, rb,
                             q == 0 ? c->beta : c->one, cp, mb);
        tl_ref refs[2] = {{d, sa}, {d, sb}};
        if (rc < 0) {
            dc->slots[sa].readers--, dc->slots[sb].readers--;
            return tl_call_fail(c, rc);
        }
        if ((rc = tl_ring_push(c, d, dr->s_comp, refs, 2)) < 0) return rc;
    }
    if (save_at >= 0)
        return tl_call_fail(c, TS_ERROR(TS_ERR_INTERNAL, "tile runtime: task (%lld, %lld) does not read its own tile",
                                        (long long)tk->i, (long long)tk->j));
    if (tk->solve) { // the diagonal block, raw: the TRSM reads only its triangle
        int64_t kd = L->side == 'L' ? tk->i : tk->j;
        tl_opnd o = opnd(TL_A, kd, kd, 'N', 0);
        int sa;
        if ((rc = get_operand(c, d, &o, &sa)) < 0) return tl_call_fail(c, rc);
        int64_t ra = tl_dim(L->rows[TL_A], T, kd);
        rc = ts_dev_trsm_blocked(dr->s_comp, c->engine, c->prec, L->side, L->uplo, L->ta, L->diag, mb, nb,
                                 tk->np ? c->one : c->beta, dc->slots[sa].ptr, ra, dc->slots[cs].ptr, mb, tri_base(c));
        tl_ref ref = {d, sa};
        if (rc < 0) {
            dc->slots[sa].readers--;
            return tl_call_fail(c, rc);
        }
        if ((rc = tl_ring_push(c, d, dr->s_comp, &ref, 1)) < 0) return rc;
    }
    if (tk->diag_real && (rc = ts_dev_tile_prep(dr->s_comp, c->prec, TS_TILE_DIAG_REAL, 'L', mb, dc->slots[cs].ptr, mb)) < 0)
        return tl_call_fail(c, rc);
    return 0;
}

// Rows [r0, r1) of column q of a tile that the mask lets through.
static void mask_rows(char mask, int64_t q, int64_t mb, int64_t *r0, int64_t *r1) {
    *r0 = mask == 'L' ? q : 0;
    *r1 = mask == 'U' ? (q + 1 < mb ? q + 1 : mb) : mb;
    if (*r0 > mb) *r0 = mb;
}

int tl_l3_copy_out(tl_call *c, int d, int t, int cs, size_t *bytes) {
    ts_stream *st = c->rt->dev[d].s_d2h;
    const tl_task *tk = &c->l3->tasks[t];
    int64_t T = c->T, mb = tl_dim(c->m, T, tk->i), nb = tl_dim(c->n, T, tk->j);
    size_t es = c->es, cp = (size_t)c->ldc * es;
    char *hc = c->C + ((size_t)(tk->i * T) + (size_t)(tk->j * T) * (size_t)c->ldc) * es;
    const char *src = c->dc[d].slots[cs].ptr;
    if (!tk->mask) {
        *bytes = (size_t)mb * (size_t)nb * es;
        return ts_copy2d_async(st, TS_COPY_D2H, hc, cp, src, (size_t)mb * es, (size_t)mb * es, (size_t)nb);
    }
    // A diagonal tile: its triangle only (the other triangle of C stays untouched): one kernel writing
    // host memory through the device's mapping of the registered C, else one copy per column.
    if (mb == nb) {
        int rc = ts_dev_tile_put_tri(st, c->prec, tk->mask, mb, src, mb, hc, c->ldc);
        if (rc < 0) return rc;
        if (rc == 0) {
            *bytes = (size_t)mb * (size_t)(mb + 1) / 2 * es;
            return 0;
        }
    }
    *bytes = 0;
    for (int64_t q = 0; q < nb; q++) {
        int64_t r0, r1;
        mask_rows(tk->mask, q, mb, &r0, &r1);
        if (r1 <= r0) continue;
        size_t w = (size_t)(r1 - r0) * es;
        TS_CHECK(ts_copy_async(st, TS_COPY_D2H, hc + (size_t)r0 * es + (size_t)q * cp,
                               src + ((size_t)r0 + (size_t)q * (size_t)mb) * es, w));
        *bytes += w;
    }
    return 0;
}

// Host operand: a pointer into the stored matrix, or a prepared copy in buf (T x T elements).
static const void *host_operand(const tl_call *c, const tl_opnd *o, void *buf, int64_t *ld) {
    const tl_l3 *L = c->l3;
    int64_t T = c->T, r = tl_dim(L->rows[o->mat], T, o->bi), q = tl_dim(L->cols[o->mat], T, o->bj);
    const char *p = L->ptr[o->mat] + ((size_t)(o->bi * T) + (size_t)(o->bj * T) * (size_t)L->ld[o->mat]) * c->es;
    if (!o->prep) {
        *ld = L->ld[o->mat];
        return p;
    }
    for (int64_t j = 0; j < q; j++)
        memcpy((char *)buf + (size_t)j * (size_t)r * c->es, p + (size_t)j * (size_t)L->ld[o->mat] * c->es,
               (size_t)r * c->es);
    ts_tile_prep_host(c->prec, (ts_tile_kind)L->prep_kind[o->mat], L->prep_uplo[o->mat], r, buf, r);
    *ld = r;
    return buf;
}

int tl_l3_cpu_task(tl_call *c, int t) {
    const tl_l3 *L = c->l3;
    const tl_task *tk = &L->tasks[t];
    int64_t T = c->T, mb = tl_dim(c->m, T, tk->i), nb = tl_dim(c->n, T, tk->j);
    size_t es = c->es, tile = (size_t)T * (size_t)T * es;
    char *hc = c->C + ((size_t)(tk->i * T) + (size_t)(tk->j * T) * (size_t)c->ldc) * es;
    char *w = malloc((size_t)mb * (size_t)nb * es), *pa = malloc(tile), *pb = malloc(tile);
    int rc = 0;
    if (!w || !pa || !pb) {
        rc = ts_error_set(TS_ERR_NOMEM, __FILE__, __LINE__, "%s: out of host memory for a CPU tile", L->name);
        goto out;
    }
    // The tile is computed aside and written back through the mask, like a device's copy out.
    if (!c->beta_zero)
        for (int64_t q = 0; q < nb; q++)
            memcpy(w + (size_t)q * (size_t)mb * es, hc + (size_t)q * (size_t)c->ldc * es, (size_t)mb * es);
    for (int p = 0; p < tk->np && rc == 0; p++) {
        const tl_prod *pr = &L->prods[prod_at(c, tk, p)];
        int64_t lda, ldb, kb = pr->a.op == 'N' ? tl_dim(L->cols[pr->a.mat], T, pr->a.bj)
                                               : tl_dim(L->rows[pr->a.mat], T, pr->a.bi);
        const void *a = host_operand(c, &pr->a, pa, &lda), *b = host_operand(c, &pr->b, pb, &ldb);
        if (pr->kind == TL_TRMM) {
            int left = L->side == 'L';
            rc = ts_trmm_cpu(c->prec, L->side, L->uplo, L->ta, L->diag, mb, nb, c->alpha, left ? a : b, left ? lda : ldb,
                             left ? b : a, left ? ldb : lda, w, mb);
        } else if (pr->kind != TL_GEMM)
            rc = ts_rank_cpu(c->prec, pr->kind == TL_RANK2, tk->mask, pr->a.op == 'N' ? 'N' : 'T', mb, kb, c->alpha, a,
                             lda, b, ldb, p == 0 ? c->beta : c->one, w, mb);
        else
            rc = ts_gemm_cpu(c->prec, pr->a.op, pr->b.op, mb, nb, kb, pr->alpha2 ? L->alpha2 : c->alpha, a, lda, b,
                             ldb, p == 0 ? c->beta : c->one, w, mb);
    }
    if (rc == 0 && tk->solve) {
        int64_t kd = L->side == 'L' ? tk->i : tk->j, ld;
        tl_opnd o = opnd(TL_A, kd, kd, 'N', 0);
        const void *a = host_operand(c, &o, pa, &ld);
        rc = ts_trsm_cpu(c->prec, L->side, L->uplo, L->ta, L->diag, mb, nb, tk->np ? c->one : c->beta, a, ld, w, mb);
    }
    if (rc == 0) {
        if (tk->diag_real) ts_tile_prep_host(c->prec, TS_TILE_DIAG_REAL, 'L', mb, w, mb);
        for (int64_t q = 0; q < nb; q++) {
            int64_t r0 = 0, r1 = mb;
            if (tk->mask) mask_rows(tk->mask, q, mb, &r0, &r1);
            if (r1 > r0)
                memcpy(hc + ((size_t)r0 + (size_t)q * (size_t)c->ldc) * es, w + ((size_t)r0 + (size_t)q * (size_t)mb) * es,
                       (size_t)(r1 - r0) * es);
        }
    }
out:
    free(w), free(pa), free(pb);
    return rc;
}

// ---------------------------------------------------------------- routines

static int begin(ts_tiles *rt, builder *b, const char *name) {
    if (!rt) TS_RAISE(TS_ERR_ARG, "%s: NULL runtime", name);
    memset(b, 0, sizeof *b);
    b->T = ts_tiles_tile(rt);
    b->diag_rank = rt->opts.diag_rank;
    b->diag_trmm = rt->opts.diag_trmm;
    b->trans_prep = rt->opts.trans_prep;
    b->L.name = name;
    return 0;
}

// Block (r, q) of the symmetric/Hermitian matrix A (uplo stored) as an operand: the stored block or
// the mirror of one; the diagonal block prepared.
static tl_opnd sym_block(char uplo, char conj, int64_t r, int64_t q) {
    if (r == q) return opnd(TL_A, r, q, 'N', 1);
    int stored = uplo == 'L' ? r > q : r < q;
    return stored ? opnd(TL_A, r, q, 'N', 0) : opnd(TL_A, q, r, conj, 0);
}

static int symm_impl(ts_tiles *rt, char prec, int herm, char side, char uplo, int64_t m, int64_t n,
                     const void *alpha, const void *A, int64_t lda, const void *B, int64_t ldb, const void *beta,
                     void *C, int64_t ldc, ts_tiles_stats *stats) {
    const char *who = herm ? "ts_tiles_hemm" : "ts_tiles_symm";
    if (stats) memset(stats, 0, sizeof *stats);
    TS_CHECK(check_prec(who, prec, herm));
    side = up(side), uplo = up(uplo);
    int pos = ts_symm_check_args(side, uplo, m, n, lda, ldb, ldc);
    if (pos) return bad_arg(who, pos);
    if (!alpha || !beta) TS_RAISE(TS_ERR_ARG, "%s: alpha and beta must point to scalars", who);
    if (m == 0 || n == 0 || (sc_is(prec, alpha, 0) && sc_is(prec, beta, 1))) return 0;
    if (sc_is(prec, alpha, 0)) {
        host_scale(prec, 0, m, n, beta, C, ldc, 0);
        return 0;
    }
    builder b;
    TS_CHECK(begin(rt, &b, who));
    int64_t ka = side == 'L' ? m : n;
    char conj = herm ? 'C' : 'T';
    mat_set(&b, TL_A, A, lda, ka, ka);
    mat_set(&b, TL_B, B, ldb, m, n);
    b.L.prep_kind[TL_A] = herm ? TS_TILE_HERM : TS_TILE_SYM;
    b.L.prep_uplo[TL_A] = uplo;
    int64_t mt = (m + b.T - 1) / b.T, nt = (n + b.T - 1) / b.T, lt = (ka + b.T - 1) / b.T;
    int rc = 0;
    for (int64_t j = 0; j < nt && rc == 0; j++)
        for (int64_t i = 0; i < mt && rc == 0; i++) {
            if ((rc = add_task(&b, i, j, -1, 0)) < 0) break;
            rc = 0;
            for (int64_t l = 0; l < lt && rc == 0; l++)
                rc = side == 'L' ? add_prod(&b, sym_block(uplo, conj, i, l), opnd(TL_B, l, j, 'N', 0), 0)
                                 : add_prod(&b, opnd(TL_B, i, l, 'N', 0), sym_block(uplo, conj, l, j), 0);
        }
    if (rc == 0) {
        const void *pin[3] = {A, B, C};
        size_t pb[3] = {span_bytes(ka, ka, lda, ts_prec_size(prec)), span_bytes(m, n, ldb, ts_prec_size(prec)),
                        span_bytes(m, n, ldc, ts_prec_size(prec))};
        rc = l3_run(rt, prec, &b, m, n, ka, alpha, beta, C, ldc, pin, pb, stats);
    }
    builder_free(&b);
    return rc;
}

int ts_tiles_symm(ts_tiles *rt, char prec, char side, char uplo, int64_t m, int64_t n, const void *alpha,
                  const void *A, int64_t lda, const void *B, int64_t ldb, const void *beta, void *C, int64_t ldc,
                  ts_tiles_stats *stats) {
    return symm_impl(rt, prec, 0, side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc, stats);
}

int ts_tiles_hemm(ts_tiles *rt, char prec, char side, char uplo, int64_t m, int64_t n, const void *alpha,
                  const void *A, int64_t lda, const void *B, int64_t ldb, const void *beta, void *C, int64_t ldc,
                  ts_tiles_stats *stats) {
    return symm_impl(rt, prec, 1, side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc, stats);
}

// ?SYRK/?HERK (two = 0) and ?SYR2K/?HER2K (two = 1). alpha/beta: scalars as the routine takes them.
static int rank_impl(ts_tiles *rt, char prec, int herm, int two, char uplo, char trans, int64_t n, int64_t k,
                     const void *alpha, const void *A, int64_t lda, const void *B, int64_t ldb, const void *beta,
                     void *C, int64_t ldc, ts_tiles_stats *stats) {
    const char *who = two ? (herm ? "ts_tiles_her2k" : "ts_tiles_syr2k") : (herm ? "ts_tiles_herk" : "ts_tiles_syrk");
    if (stats) memset(stats, 0, sizeof *stats);
    TS_CHECK(check_prec(who, prec, herm));
    uplo = up(uplo), trans = up(trans);
    int pos = two ? ts_syr2k_check_args(prec, herm, uplo, trans, n, k, lda, ldb, ldc)
                  : ts_syrk_check_args(prec, herm, uplo, trans, n, k, lda, ldc);
    if (pos) return bad_arg(who, pos);
    if (!alpha || !beta) TS_RAISE(TS_ERR_ARG, "%s: alpha and beta must point to scalars", who);
    _Alignas(16) unsigned char al[16], be[16], al2[16];
    memset(al, 0, 16), memset(al2, 0, 16);
    size_t es = ts_prec_size(prec);
    if (herm && !two) sc_from_real(prec, alpha, al);
    else memcpy(al, alpha, es);
    if (herm) sc_from_real(prec, beta, be);
    else memcpy(be, beta, es);
    if (n == 0 || ((sc_is(prec, al, 0) || k == 0) && sc_is(prec, be, 1))) return 0;
    if (sc_is(prec, al, 0) || k == 0) {
        host_scale(prec, uplo, n, n, be, C, ldc, herm);
        return 0;
    }
    double ar, ai;
    sc_get(prec, al, &ar, &ai);
    sc_put(prec, al2, ar, herm ? -ai : ai); // the second term of ?HER2K: conj(alpha)
    builder b;
    TS_CHECK(begin(rt, &b, who));
    if (!ts_prec_is_complex(prec) && trans == 'C') trans = 'T';
    char t = herm ? 'C' : 'T';
    int64_t ra = trans == 'N' ? n : k, ca = trans == 'N' ? k : n;
    mat_set(&b, TL_A, A, lda, ra, ca);
    mat_set(&b, TL_B, two ? B : A, two ? ldb : lda, ra, ca);
    memcpy(b.L.alpha2, al2, 16);
    int64_t nt = (n + b.T - 1) / b.T, kt = (k + b.T - 1) / b.T;
    // trans 'N' (symmetric): the products X(i,l) Y(j,l)^T read Y transposed, which cuBLAS runs ~8% below
    // its NN rate (H100: 55.8 against 60.8 TFLOP/s at 8192). A full T x T tile Y(j,l) is read from its
    // transposed copy instead (TS_TILE_TRANS: made from the plain copy the device holds, else loaded and
    // transposed), so that the product is NN; edge tiles stay as they are.
    const int tprep = trans == 'N' && !herm && b.trans_prep;
    if (tprep) b.L.prep_kind[TL_A] = b.L.prep_kind[TL_B] = TS_TILE_TRANS;
    int rc = 0;
    for (int64_t j = 0; j < nt && rc == 0; j++)
        for (int64_t i = uplo == 'L' ? j : 0; i < (uplo == 'L' ? nt : j + 1) && rc == 0; i++) {
            int task = add_task(&b, i, j, -1, i == j ? uplo : 0);
            if ((rc = task) < 0) break;
            rc = 0;
            b.L.tasks[task].diag_real = (unsigned char)(herm && i == j);
            // A diagonal tile of a symmetric (not Hermitian) update: one rank-k (2k) product per l on
            // its triangle: X(i,l) X(i,l)^T (+ the mirror term of ?SYR2K, alpha2 == alpha there).
            int rank = i == j && !herm && b.diag_rank;
            for (int64_t l = 0; rank && l < kt && rc == 0; l++) {
                tl_opnd x = trans == 'N' ? opnd(TL_A, i, l, 'N', 0) : opnd(TL_A, l, i, 'T', 0);
                tl_opnd y = x;
                y.mat = two ? TL_B : TL_A;
                if ((rc = add_prod(&b, x, y, 0)) == 0) b.L.prods[b.L.nprods - 1].kind = two ? TL_RANK2 : TL_RANK;
            }
            for (int64_t l = 0; !rank && l < kt && rc == 0; l++) {
                const int full = tprep && tl_dim(ra, b.T, j) == b.T && tl_dim(ca, b.T, l) == b.T;
                // trans 'N': X(i,l) Y(j,l)^T; else X(l,i)^T Y(l,j) (X, Y = A, A or A, B then B, A)
                int xm = TL_A, ym = two ? TL_B : TL_A;
                for (int term = 0; term < (two ? 2 : 1) && rc == 0; term++) {
                    // trans 'N': Y(j,l)^T, or Y(j,l)'s transposed copy read as it is
                    tl_opnd y = full ? opnd(ym, j, l, 'N', 1) : opnd(ym, j, l, t, 0);
                    if (trans == 'N') rc = add_prod(&b, opnd(xm, i, l, 'N', 0), y, term);
                    else rc = add_prod(&b, opnd(xm, l, i, t, 0), opnd(ym, l, j, 'N', 0), term);
                    int s = xm;
                    xm = ym, ym = s;
                }
            }
        }
    if (rc == 0) {
        const void *pin[3] = {A, two ? B : NULL, C};
        size_t pb[3] = {span_bytes(ra, ca, lda, es), two ? span_bytes(ra, ca, ldb, es) : 0, span_bytes(n, n, ldc, es)};
        rc = l3_run(rt, prec, &b, n, n, k, al, be, C, ldc, pin, pb, stats);
    }
    builder_free(&b);
    return rc;
}

int ts_tiles_syrk(ts_tiles *rt, char prec, char uplo, char trans, int64_t n, int64_t k, const void *alpha,
                  const void *A, int64_t lda, const void *beta, void *C, int64_t ldc, ts_tiles_stats *stats) {
    return rank_impl(rt, prec, 0, 0, uplo, trans, n, k, alpha, A, lda, NULL, 1, beta, C, ldc, stats);
}

int ts_tiles_herk(ts_tiles *rt, char prec, char uplo, char trans, int64_t n, int64_t k, const void *alpha,
                  const void *A, int64_t lda, const void *beta, void *C, int64_t ldc, ts_tiles_stats *stats) {
    return rank_impl(rt, prec, 1, 0, uplo, trans, n, k, alpha, A, lda, NULL, 1, beta, C, ldc, stats);
}

int ts_tiles_syr2k(ts_tiles *rt, char prec, char uplo, char trans, int64_t n, int64_t k, const void *alpha,
                   const void *A, int64_t lda, const void *B, int64_t ldb, const void *beta, void *C, int64_t ldc,
                   ts_tiles_stats *stats) {
    return rank_impl(rt, prec, 0, 1, uplo, trans, n, k, alpha, A, lda, B, ldb, beta, C, ldc, stats);
}

int ts_tiles_her2k(ts_tiles *rt, char prec, char uplo, char trans, int64_t n, int64_t k, const void *alpha,
                   const void *A, int64_t lda, const void *B, int64_t ldb, const void *beta, void *C, int64_t ldc,
                   ts_tiles_stats *stats) {
    return rank_impl(rt, prec, 1, 1, uplo, trans, n, k, alpha, A, lda, B, ldb, beta, C, ldc, stats);
}

// Block (r, q) of op(A) for triangular A (stored uplo, op ta) as an operand; raw, or with the
// diagonal block cut to its triangle (prepare = 1, TRMM). Only blocks inside op(A)'s triangle are asked.
static tl_opnd tri_block(char ta, int64_t r, int64_t q, int prepare) {
    if (ta == 'N') return opnd(TL_A, r, q, 'N', prepare && r == q);
    return opnd(TL_A, q, r, ta, prepare && r == q);
}

// ?TRMM (solve = 0) and ?TRSM (solve = 1).
static int tri_impl(ts_tiles *rt, char prec, int solve, char side, char uplo, char ta, char diag, int64_t m, int64_t n,
                    const void *alpha, const void *A, int64_t lda, void *B, int64_t ldb, ts_tiles_stats *stats) {
    const char *who = solve ? "ts_tiles_trsm" : "ts_tiles_trmm";
    if (stats) memset(stats, 0, sizeof *stats);
    TS_CHECK(check_prec(who, prec, 0));
    side = up(side), uplo = up(uplo), ta = up(ta), diag = up(diag);
    int pos = ts_dtrsm_check_args(side, uplo, ta, diag, m, n, lda, ldb);
    if (pos) return bad_arg(who, pos);
    if (!alpha) TS_RAISE(TS_ERR_ARG, "%s: alpha must point to a scalar", who);
    if (m == 0 || n == 0) return 0;
    size_t es = ts_prec_size(prec);
    _Alignas(16) unsigned char zero[16] = {0};
    if (sc_is(prec, alpha, 0)) {
        host_scale(prec, 0, m, n, zero, B, ldb, 0);
        return 0;
    }
    if (!ts_prec_is_complex(prec) && ta == 'C') ta = 'T';
    builder b;
    TS_CHECK(begin(rt, &b, who));
    int left = side == 'L';
    int64_t ka = left ? m : n;
    mat_set(&b, TL_A, A, lda, ka, ka);
    mat_set(&b, TL_B, B, ldb, m, n);
    b.L.prep_kind[TL_A] = diag == 'U' ? TS_TILE_TRI_UNIT : TS_TILE_TRI;
    b.L.prep_uplo[TL_A] = uplo;
    b.L.side = side, b.L.uplo = uplo, b.L.ta = ta, b.L.diag = diag;
    b.L.inplace = 1;
    // op(A) upper or lower
    int opup = (uplo == 'U') == (ta == 'N');
    int64_t mt = (m + b.T - 1) / b.T, nt = (n + b.T - 1) / b.T;
    // Chains: along i for the left side (over j), along j for the right side (over i). The order
    // within a chain: TRMM reads the original tiles on op(A)'s side and must run so that a tile is
    // overwritten only after its readers; TRSM reads solved tiles and must run after them.
    int64_t outer = left ? nt : mt, inner = left ? mt : nt;
    // ascending when the chain's task s reads tiles s' > s (TRMM) or solved tiles s' < s (TRSM)
    int ascending = left ? (solve ? !opup : opup) : (solve ? opup : !opup);
    int rc = 0;
    for (int64_t o = 0; o < outer && rc == 0; o++) {
        int prev = -1;
        for (int64_t s = 0; s < inner && rc == 0; s++) {
            int64_t x = ascending ? s : inner - 1 - s; // position along the chain
            int64_t i = left ? x : o, j = left ? o : x;
            int task = add_task(&b, i, j, prev, 0);
            if ((rc = task) < 0) break;
            rc = 0;
            prev = task;
            b.L.tasks[task].solve = (unsigned char)solve;
            b.L.tasks[task].chain = (int)o;
            // TRMM: the diagonal product first, by ?trmm on the raw block (the task's beta 0 is its
            // own: ?trmm writes C whole), the other blocks then accumulate
            int trmm_diag = !solve && b.diag_trmm;
            if (trmm_diag) {
                tl_opnd blk = opnd(TL_A, x, x, ta, 0);
                if (left) rc = add_prod(&b, blk, opnd(TL_B, x, j, 'N', 0), 0);
                else rc = add_prod(&b, opnd(TL_B, i, x, 'N', 0), blk, 0);
                if (rc == 0) b.L.prods[b.L.nprods - 1].kind = TL_TRMM;
            }
            // l over op(A)'s nonzero blocks of row x (left) or column x (right)
            for (int64_t l = 0; l < inner && rc == 0; l++) {
                int in = left ? (opup ? l >= x : l <= x) : (opup ? l <= x : l >= x);
                if (!in || ((solve || trmm_diag) && l == x)) continue;
                if (left) rc = add_prod(&b, tri_block(ta, x, l, !solve), opnd(TL_B, l, j, 'N', 0), 0);
                else rc = add_prod(&b, opnd(TL_B, i, l, 'N', 0), tri_block(ta, l, x, !solve), 0);
            }
        }
    }
    b.L.nchains = (int)outer;
    if (rc == 0 && !(b.L.held = calloc((size_t)outer, 1)))
        rc = ts_error_set(TS_ERR_NOMEM, __FILE__, __LINE__, "%s: out of host memory", who);
    if (rc == 0) {
        _Alignas(16) unsigned char minus1[16] = {0};
        sc_put(prec, minus1, -1, 0);
        const void *pin[3] = {A, NULL, B};
        size_t pb[3] = {span_bytes(ka, ka, lda, es), 0, span_bytes(m, n, ldb, es)};
        // TRMM: C = alpha sum (beta 0: the tile is not loaded as C; it is an operand);
        // TRSM: C = alpha B - sum op(A) X, then the solve
        if (solve) rc = l3_run(rt, prec, &b, m, n, ka, minus1, alpha, B, ldb, pin, pb, stats);
        else rc = l3_run(rt, prec, &b, m, n, ka, alpha, zero, B, ldb, pin, pb, stats);
    }
    builder_free(&b);
    return rc;
}

int ts_tiles_trmm(ts_tiles *rt, char prec, char side, char uplo, char transa, char diag, int64_t m, int64_t n,
                  const void *alpha, const void *A, int64_t lda, void *B, int64_t ldb, ts_tiles_stats *stats) {
    return tri_impl(rt, prec, 0, side, uplo, transa, diag, m, n, alpha, A, lda, B, ldb, stats);
}

int ts_tiles_trsm(ts_tiles *rt, char prec, char side, char uplo, char transa, char diag, int64_t m, int64_t n,
                  const void *alpha, const void *A, int64_t lda, void *B, int64_t ldb, ts_tiles_stats *stats) {
    return tri_impl(rt, prec, 1, side, uplo, transa, diag, m, n, alpha, A, lda, B, ldb, stats);
}
