// ts_mxp_engine.c: HPL-MxP's engine: generation, the LU without pivoting in FP32 with 16-bit GEMMs, FP64 refinement, the check.
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "algorithms/hpl/ts_hpl_internal.h"
#include "algorithms/hpl_mxp/ts_mxp.h"
#include "algorithms/hpl_mxp/ts_mxp_internal.h"
#include "core/ts_error.h"
#include "core/ts_log.h"
#include "core/ts_rng.h"
#include "core/ts_timer.h"

// ---- where the matrix lives: host memory, or one device's memory and one of its streams ----

int ts_mxp_ex_alloc(ts_mxp_exec *e, size_t bytes, void **p) {
    *p = NULL;
    if (bytes == 0) bytes = 8;
    if (e->dev) return ts_dmalloc(e->dev, bytes, p);
    *p = malloc(bytes);
    if (!*p) TS_RAISE(TS_ERR_NOMEM, "hpl-mxp: %.3g GiB of host memory", (double)bytes / (1 << 30));
    return 0;
}

void ts_mxp_ex_free(ts_mxp_exec *e, void *p) {
    if (!p) return;
    if (e->dev) ts_dfree(e->dev, p);
    else free(p);
}

static int ex_copy(ts_mxp_exec *e, ts_copy_kind kind, void *dst, const void *src, size_t bytes) {
    if (!e->dev) {
        memmove(dst, src, bytes);
        return 0;
    }
    TS_CHECK(ts_copy_async(e->st, kind, dst, src, bytes));
    return ts_stream_sync(e->st);
}

int ts_mxp_ex_put(ts_mxp_exec *e, void *x, const void *h, size_t bytes) { return ex_copy(e, TS_COPY_H2D, x, h, bytes); }
int ts_mxp_ex_get(ts_mxp_exec *e, void *h, const void *x, size_t bytes) { return ex_copy(e, TS_COPY_D2H, h, x, bytes); }

#define ex_alloc ts_mxp_ex_alloc
#define ex_free ts_mxp_ex_free
#define ex_put ts_mxp_ex_put
#define ex_get ts_mxp_ex_get
typedef ts_mxp_exec mx_exec;

// ---- one run ----

// One pair of panels for the trailing update: L21 and U12 in 16 bits (FP8 runs: the panel GEMMs'
// FP16 scratch), and on FP8 runs L21^T and U12 in E4M3 (k padded to a multiple of 16 with zeros).
typedef struct {
    uint16_t *L16, *U16;
    uint8_t *L8, *U8;
} mx_pan;

typedef struct {
    const ts_mxp_case *mc;
    const ts_mxp_opts *o;
    ts_mxp_result *r;
    mx_exec ex;
    ts_mxp_kern *k;
    ts_mxp_kern *k1;              // look-ahead: stream 1's kernel context (NULL: no look-ahead)
    ts_stream *st1;
    ts_event *ev_upd, *ev_pan;    // stream 0's next block column and row done; stream 1's panel done
    uint16_t *L16b, *U16b;        // look-ahead: the second pair of 16-bit panels
    int64_t N, NB, lda, ldl, nblk;
    int depth;                    // look-ahead depth (0 or 1; 1 only on devices)
    int fp8;                      // the update in FP8 (L8t, U8, sc8)
    int64_t ld8;                  // FP8 panels' leading dimension: NB rounded up to 16
    uint8_t *L8, *U8, *L8b, *U8b; // FP8: L21^T (ld8 x N) and U12 (ld8 x N), and the look-ahead's pair
    float *sc8;                   // FP8: 1/s of L21 and U12 of every block column (2 nblk, execution memory)
    mx_pan pan[2];                // the panels (pan[1]: look-ahead's second pair)
    float *A, *Linv, *Uinv;       // Linv, Uinv: nblk blocks of NB x NB (ld NB)
    uint16_t *L16, *U16, *I16;    // L16: N x NB (ld ldl), U16: NB x N (ld NB), I16: 4 blocks NB x NB (2 a stream)
    double *d, *b, *x, *rv;       // execution memory (FP64 vectors)
    float *y, *z, *w;             // execution memory (FP32 vectors of the preconditioner)
    double *hd, *hb, *hx, *hr;    // host
    double normA, normb;
} mx_run;

static int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

static int64_t fp8_ld(int64_t NB) { return round_up(NB, 16); }

double ts_mxp_bytes_fmt(int64_t N, int NB, int device, ts_mxp_fmt fmt) {
    double b = ts_mxp_bytes(N, NB, device);
    if (fmt == TS_MXP_FP8) // L21^T and U12 in E4M3 (two pairs on devices: look-ahead), their scales
        b += (device ? 2.0 : 1.0) * 2.0 * (double)fp8_ld(NB) * (double)N + 8.0 * (double)((N + NB - 1) / NB);
    return b;
}

double ts_mxp_bytes(int64_t N, int NB, int device) {
    const double n = (double)N, nb = NB, lda = (double)round_up(N > 0 ? N : 1, 32);
    const double nblk = (double)((N + NB - 1) / NB);
    double b = 4.0 * lda * n                       // A in FP32
               + 2.0 * 4.0 * nblk * nb * nb        // inv(L11), inv(U11) of every block
               + 2.0 * 2.0 * (double)round_up(N, 8) * nb // L and U panels in 16 bits
               + 2.0 * 2.0 * nb * nb               // the inverses in 16 bits
               + 8.0 * 4.0 * n + 4.0 * 3.0 * n;    // vectors
    if (device) // scratch, cuSOLVER, look-ahead's second pair of panels and inverses
        b += 8.0 * TS_MXP_CHUNKS * n + 4.0 * nb * nb + (double)(64 << 20) + 2.0 * 2.0 * (double)round_up(N, 8) * nb +
             2.0 * 2.0 * nb * nb;
    return b;
}

float ts_mxp_scale(int64_t N) {
    if (N <= 4) return 1.0f;
    return ldexpf(1.0f, (int)ceil(log2((double)N / 4.0)));
}

static void run_free(mx_run *s) {
    void *xs[] = {s->A,    s->Linv, s->Uinv, s->L16, s->U16,  s->I16, s->d,   s->b,   s->x,  s->rv,
                  s->y,    s->z,    s->w,    s->L16b, s->U16b, s->L8,  s->U8,  s->L8b, s->U8b, s->sc8};
    for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++) ex_free(&s->ex, xs[i]);
    free(s->hd);
    free(s->hb);
    free(s->hx);
    free(s->hr);
    ts_mxp_kern_destroy(s->k);
    ts_mxp_kern_destroy(s->k1);
    if (s->ev_upd) ts_event_destroy(s->ev_upd);
    if (s->ev_pan) ts_event_destroy(s->ev_pan);
    if (s->st1) ts_stream_destroy(s->st1);
}

static int run_alloc(mx_run *s) {
    const int64_t N = s->N, NB = s->NB;
    mx_exec *e = &s->ex;
    TS_CHECK(ex_alloc(e, sizeof(float) * (size_t)s->lda * (size_t)N, (void **)&s->A));
    TS_CHECK(ex_alloc(e, sizeof(float) * (size_t)(s->nblk * NB * NB), (void **)&s->Linv));
    TS_CHECK(ex_alloc(e, sizeof(float) * (size_t)(s->nblk * NB * NB), (void **)&s->Uinv));
    TS_CHECK(ex_alloc(e, 2 * (size_t)(s->ldl * NB), (void **)&s->L16));
    TS_CHECK(ex_alloc(e, 2 * (size_t)(NB * N), (void **)&s->U16));
    TS_CHECK(ex_alloc(e, 2 * (size_t)(4 * NB * NB), (void **)&s->I16));
    double **dv[] = {&s->d, &s->b, &s->x, &s->rv};
    for (int i = 0; i < 4; i++) TS_CHECK(ex_alloc(e, sizeof(double) * (size_t)N, (void **)dv[i]));
    float **fv[] = {&s->y, &s->z, &s->w};
    for (int i = 0; i < 3; i++) TS_CHECK(ex_alloc(e, sizeof(float) * (size_t)N, (void **)fv[i]));
    s->hd = malloc(sizeof(double) * (size_t)N);
    s->hb = malloc(sizeof(double) * (size_t)N);
    s->hx = malloc(sizeof(double) * (size_t)N);
    s->hr = malloc(sizeof(double) * (size_t)N);
    if (!s->hd || !s->hb || !s->hx || !s->hr) TS_RAISE(TS_ERR_NOMEM, "hpl-mxp: host vectors of %lld", (long long)N);
    TS_CHECK(ts_mxp_kern_create(e->st, s->mc->fmt, NB, N, &s->k));
    if (s->fp8) {
        TS_CHECK(ex_alloc(e, (size_t)(s->ld8 * N), (void **)&s->L8));
        TS_CHECK(ex_alloc(e, (size_t)(s->ld8 * N), (void **)&s->U8));
        TS_CHECK(ex_alloc(e, sizeof(float) * (size_t)(2 * s->nblk), (void **)&s->sc8));
    }
    if (s->depth > 0) {
        TS_CHECK(ex_alloc(e, 2 * (size_t)(s->ldl * NB), (void **)&s->L16b));
        TS_CHECK(ex_alloc(e, 2 * (size_t)(NB * N), (void **)&s->U16b));
        if (s->fp8) {
            TS_CHECK(ex_alloc(e, (size_t)(s->ld8 * N), (void **)&s->L8b));
            TS_CHECK(ex_alloc(e, (size_t)(s->ld8 * N), (void **)&s->U8b));
        }
        TS_CHECK(ts_stream_create(e->dev, &s->st1));
        TS_CHECK(ts_event_create(e->dev, &s->ev_upd));
        TS_CHECK(ts_event_create(e->dev, &s->ev_pan));
        TS_CHECK(ts_mxp_kern_create(s->st1, s->mc->fmt, NB, 1, &s->k1));
    }
    s->pan[0] = (mx_pan){s->L16, s->U16, s->L8, s->U8};
    s->pan[1] = (mx_pan){s->L16b, s->U16b, s->L8b, s->U8b};
    return 0;
}

// [A|b] with the diagonal set as the generator kind says; ||A||_oo and ||b||_oo.
static int generate(mx_run *s) {
    const int64_t N = s->N;
    TS_CHECK(ts_mxp_gen(s->k, N, 0, 0, N, N, s->A, s->lda, s->rv, s->x)); // row sums in rv, diagonal in x
    TS_CHECK(ts_mxp_kern_sync(s->k));
    TS_CHECK(ex_get(&s->ex, s->hr, s->rv, sizeof(double) * (size_t)N));
    TS_CHECK(ex_get(&s->ex, s->hx, s->x, sizeof(double) * (size_t)N));
    double na = 0.0;
    for (int64_t i = 0; i < N; i++) {
        s->hd[i] = s->o->gen == TS_MXP_GEN_PLAIN ? s->hx[i] : s->hr[i];
        const double row = s->hr[i] + fabs(s->hd[i]);
        if (row > na || isnan(row)) na = row;
    }
    s->normA = na;
    TS_CHECK(ex_put(&s->ex, s->d, s->hd, sizeof(double) * (size_t)N));
    TS_CHECK(ts_mxp_set_diag(s->k, N, s->d, s->A, s->lda));
    // b(i) = X(1 + i) from seed 2
    const ts_lcg64_jump step = ts_lcg64_jump_n(1);
    uint64_t x = ts_lcg64_apply(step, TS_MXP_SEED_B);
    double nb = 0.0;
    for (int64_t i = 0; i < N; i++) {
        s->hb[i] = ts_mxp_value(x);
        if (fabs(s->hb[i]) > nb) nb = fabs(s->hb[i]);
        x = ts_lcg64_apply(step, x);
    }
    s->normb = nb;
    TS_CHECK(ex_put(&s->ex, s->b, s->hb, sizeof(double) * (size_t)N));
    return ts_mxp_kern_sync(s->k);
}

static int64_t block_width(const mx_run *s, int64_t kb) {
    const int64_t j = kb * s->NB;
    return s->N - j < s->NB ? s->N - j : s->NB;
}

// The panel of block column kb on kernel context k: the diagonal block factored and inverted,
// L21 = A21 inv(U11) and U12 = inv(L11) A12 by GEMMs with the inverses, then L21 (scaled) and U12
// in 16 bits into p's L16 and U16 for the update (FP8: L21^T and U12 in E4M3, each with its own
// power-of-two scale, into p's L8 and U8).
static int panel(mx_run *s, ts_mxp_kern *k, int64_t kb, const mx_pan *p) {
    uint16_t *L16 = p->L16, *U16 = p->U16;
    const int64_t NB = s->NB, j = kb * NB, jb = block_width(s, kb), m2 = s->N - j - jb, lda = s->lda;
    float *A11 = s->A + j + j * lda;
    float *Li = s->Linv + kb * NB * NB, *Ui = s->Uinv + kb * NB * NB;
    TS_CHECK(ts_mxp_getrf_inv(k, jb, A11, lda, Li, Ui, NB, j));
    if (m2 <= 0) return 0;
    float *A21 = A11 + jb, *A12 = A11 + jb * lda;
    const float sc = ts_mxp_scale(s->N);
    uint16_t *Ui16 = k == s->k ? s->I16 : s->I16 + 2 * NB * NB, *Li16 = Ui16 + NB * NB;
    // L21 = A21 inv(U11): inv(U11) scaled by sc into 16 bits, the product scaled back by alpha
    TS_CHECK(ts_mxp_cvt(k, jb, jb, Ui, NB, sc, Ui16, NB));
    TS_CHECK(ts_mxp_cvt(k, m2, jb, A21, lda, 1.0f, L16, s->ldl));
    TS_CHECK(ts_mxp_gemm(k, m2, jb, jb, 1.0f / sc, L16, s->ldl, Ui16, NB, 0.0f, A21, lda));
    // U12 = inv(L11) A12
    TS_CHECK(ts_mxp_cvt(k, jb, jb, Li, NB, 1.0f, Li16, NB));
    TS_CHECK(ts_mxp_cvt(k, jb, m2, A12, lda, 1.0f, U16, NB));
    TS_CHECK(ts_mxp_gemm(k, jb, m2, jb, 1.0f, Li16, NB, U16, NB, 0.0f, A12, lda));
    if (s->fp8) { // the operands of A22 -= L21 U12 in E4M3, k padded to 16
        const int64_t kp = round_up(jb, 16);
        TS_CHECK(ts_mxp_cvt8(k, m2, jb, A21, lda, 1, kp, p->L8, s->ld8, s->sc8 + 2 * kb));
        return ts_mxp_cvt8(k, jb, m2, A12, lda, 0, kp, p->U8, s->ld8, s->sc8 + 2 * kb + 1);
    }
    // the operands of A22 -= L21 U12 (L21 scaled by sc, alpha -1/sc)
    TS_CHECK(ts_mxp_cvt(k, m2, jb, A21, lda, sc, L16, s->ldl));
    return ts_mxp_cvt(k, jb, m2, A12, lda, 1.0f, U16, NB);
}

// Part of block column kb's update A22 -= L21 U12 (16-bit operands, FP32 accumulation): the rows
// [r0, r1) and columns [c0, c1) of A22 (relative to its corner).
static int update(mx_run *s, int64_t kb, const mx_pan *p, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
    const int64_t NB = s->NB, j = kb * NB, jb = block_width(s, kb), lda = s->lda;
    if (r0 >= r1 || c0 >= c1) return 0;
    float *A22 = s->A + (j + jb) + (j + jb) * lda;
    if (s->fp8)
        return ts_mxp_gemm8(s->k, r1 - r0, c1 - c0, round_up(jb, 16), -1.0f, p->L8 + r0 * s->ld8, s->ld8,
                            s->sc8 + 2 * kb, p->U8 + c0 * s->ld8, s->ld8, s->sc8 + 2 * kb + 1, 1.0f,
                            A22 + r0 + c0 * lda, lda);
    return ts_mxp_gemm(s->k, r1 - r0, c1 - c0, jb, -1.0f / ts_mxp_scale(s->N), p->L16 + r0, s->ldl, p->U16 + c0 * NB,
                       NB, 1.0f, A22 + r0 + c0 * lda, lda);
}

// Progress after `done` block columns.
static void report(const ts_mxp_opts *o, int64_t done, int64_t N, int64_t NB, double t0) {
    if (!o->progress || done <= 0) return;
    const int64_t c = done * NB < N ? done * NB : N; // flops of the columns [0, c) by HPL's count
    o->progress(o->progress_ctx, c, N, ts_now() - t0, ts_hpl_flops(N) - ts_hpl_flops(N - c));
}

int ts_mxp_step_done(const ts_mxp_opts *o, int here, int64_t kb, int64_t N, int64_t NB, double t0, ts_event **ev,
                     ts_stream *st) {
    if (!ev[0]) {
        if (here) report(o, kb + 1, N, NB, t0);
        return 0;
    }
    // the host stays one block column ahead of the device: the progress of the one before is real
    TS_CHECK(ts_event_record(ev[kb % 2], st));
    if (kb > 0) TS_CHECK(ts_event_sync(ev[(kb - 1) % 2]));
    if (here) report(o, kb, N, NB, t0);
    return 0;
}

// Without look-ahead: each block column's panel, then its whole update, on one stream (or the host).
static int factor_plain(mx_run *s, double t0, ts_event **ev) {
    for (int64_t kb = 0; kb < s->nblk; kb++) {
        const int64_t m2 = s->N - kb * s->NB - block_width(s, kb);
        TS_CHECK(panel(s, s->k, kb, &s->pan[0]));
        TS_CHECK(update(s, kb, &s->pan[0], 0, m2, 0, m2));
        TS_CHECK(ts_mxp_step_done(s->o, 1, kb, s->N, s->NB, t0, ev, s->ex.st));
    }
    return 0;
}

// Look-ahead of depth 1 (devices): the update of block column kb first brings the next block column
// and block row up to date (stream 0), then stream 1 factors the next panel into the other pair of
// 16-bit buffers while stream 0 runs the rest of the update.
static int factor_ahead(mx_run *s, double t0, ts_event **ev) {
    const mx_pan *P = s->pan;
    TS_CHECK(panel(s, s->k, 0, &P[0]));
    for (int64_t kb = 0; kb < s->nblk; kb++) {
        const int cur = (int)(kb % 2);
        const int64_t m2 = s->N - kb * s->NB - block_width(s, kb);
        if (kb > 0) TS_CHECK(ts_stream_wait_event(s->ex.st, s->ev_pan)); // panel kb, from stream 1
        if (m2 > 0) {
            const int64_t jb2 = m2 < s->NB ? m2 : s->NB; // the next block column's width
            TS_CHECK(update(s, kb, &P[cur], 0, m2, 0, jb2));   // the next block column
            TS_CHECK(update(s, kb, &P[cur], 0, jb2, jb2, m2)); // the next block row
            TS_CHECK(ts_event_record(s->ev_upd, s->ex.st));
            TS_CHECK(ts_stream_wait_event(s->st1, s->ev_upd));
            TS_CHECK(panel(s, s->k1, kb + 1, &P[1 - cur]));
            TS_CHECK(ts_event_record(s->ev_pan, s->st1));
            TS_CHECK(update(s, kb, &P[cur], jb2, m2, jb2, m2)); // the rest, beside the panel
        }
        TS_CHECK(ts_mxp_step_done(s->o, 1, kb, s->N, s->NB, t0, ev, s->ex.st));
    }
    return 0;
}

static int factor(mx_run *s, double t0) {
    ts_event *ev[2] = {NULL, NULL};
    int rc = 0;
    if (s->ex.dev)
        for (int i = 0; i < 2 && rc == 0; i++) rc = ts_event_create(s->ex.dev, &ev[i]);
    if (rc == 0) rc = s->k1 ? factor_ahead(s, t0, ev) : factor_plain(s, t0, ev);
    if (rc == 0) rc = ts_mxp_kern_sync(s->k);
    if (rc == 0 && s->k1) rc = ts_mxp_kern_sync(s->k1);
    for (int i = 0; i < 2; i++)
        if (ev[i]) ts_event_destroy(ev[i]);
    return rc;
}

// w = U^-1 L^-1 y with the factors in A and the inverted diagonal blocks (y and z are overwritten).
static int precond(mx_run *s) {
    const int64_t N = s->N, NB = s->NB, lda = s->lda;
    ts_mxp_kern *k = s->k;
    for (int64_t kb = 0; kb < s->nblk; kb++) {
        const int64_t j = kb * NB, jb = N - j < NB ? N - j : NB, m2 = N - j - jb;
        TS_CHECK(ts_mxp_sgemv(k, jb, jb, 1.0f, s->Linv + kb * NB * NB, NB, s->y + j, 0.0f, s->z + j));
        if (m2 > 0)
            TS_CHECK(ts_mxp_sgemv(k, m2, jb, -1.0f, s->A + (j + jb) + j * lda, lda, s->z + j, 1.0f, s->y + j + jb));
    }
    for (int64_t kb = s->nblk - 1; kb >= 0; kb--) {
        const int64_t j = kb * NB, jb = N - j < NB ? N - j : NB;
        TS_CHECK(ts_mxp_sgemv(k, jb, jb, 1.0f, s->Uinv + kb * NB * NB, NB, s->z + j, 0.0f, s->w + j));
        if (j > 0) TS_CHECK(ts_mxp_sgemv(k, j, jb, -1.0f, s->A + j * lda, lda, s->w + j, 1.0f, s->z));
    }
    return 0;
}

// x += U^-1 L^-1 v for v (FP64, execution memory) of largest magnitude vmax: v scaled to 1 in FP32.
static int correct(mx_run *s, const double *v, double vmax) {
    if (!(vmax > 0)) return 0;
    TS_CHECK(ts_mxp_d2s(s->k, s->N, v, 1.0 / vmax, s->y));
    TS_CHECK(precond(s));
    return ts_mxp_axpy(s->k, s->N, vmax, s->w, s->x);
}

// r = b - A x with A regenerated in FP64; the scaled residual and its norms.
static int residual(mx_run *s, double *ratio) {
    const int64_t N = s->N;
    TS_CHECK(ts_mxp_resid(s->k, N, 0, 0, N, N, s->d, s->x, s->b, s->rv));
    TS_CHECK(ts_mxp_kern_sync(s->k));
    TS_CHECK(ex_get(&s->ex, s->hr, s->rv, sizeof(double) * (size_t)N));
    TS_CHECK(ex_get(&s->ex, s->hx, s->x, sizeof(double) * (size_t)N));
    double nr = 0.0, nx = 0.0;
    for (int64_t i = 0; i < N; i++) {
        if (fabs(s->hr[i]) > nr || isnan(s->hr[i])) nr = fabs(s->hr[i]);
        if (fabs(s->hx[i]) > nx || isnan(s->hx[i])) nx = fabs(s->hx[i]);
    }
    *ratio = ts_mxp_check(s->r, N, nr, nx, s->normA, s->normb);
    return 0;
}

double ts_mxp_check(ts_mxp_result *r, int64_t N, double nr, double nx, double normA, double normb) {
    r->eps = DBL_EPSILON / 2.0;
    r->norm_r = nr;
    r->norm_x = nx;
    r->norm_A = normA;
    r->norm_b = normb;
    const double den = r->eps * (normA * nx + normb) * (double)N;
    double ratio = den > 0 ? nr / den : (nr == 0 ? 0.0 : INFINITY);
    if (isnan(nr)) ratio = NAN;
    r->resid = ratio;
    r->checked = 1;
    return ratio;
}

void ts_mxp_times(ts_mxp_result *r, int64_t N, double t0, double t1, double t2) {
    ts_mxp_stamp(r->end_time);
    r->t_lu = t1 - t0;
    r->t_ir = t2 - t1;
    r->time = t2 - t0;
    r->gflops = r->time > 0 ? ts_hpl_gflops(N, r->time) : 0.0;
    r->gflops_lu = r->t_lu > 0 ? ts_hpl_flops(N) / r->t_lu / 1e9 : 0.0;
}

int ts_mxp_refine(const ts_mxp_opts *o, double thr, ts_mxp_result *r, const ts_mxp_refiner *f) {
    const int cap = o->max_iter > 0 && o->max_iter < TS_MXP_MAX_ITER ? o->max_iter : TS_MXP_MAX_ITER;
    double best = INFINITY;
    TS_CHECK(f->correct(f->arg, 1));
    r->iterations = 0;
    r->n_history = 0;
    for (;;) {
        double ratio;
        TS_CHECK(f->residual(f->arg, &ratio));
        if (r->n_history < TS_MXP_MAX_ITER + 1) r->history[r->n_history++] = ratio;
        TS_LOG_D("hpl-mxp: refinement %d: ||r||_oo %.3e, scaled residual %.6e", r->iterations, r->norm_r, ratio);
        if (ratio < thr) {
            r->stop = 0;
            r->passed = 1;
            return 0;
        }
        if (!isfinite(ratio) || ratio > TS_MXP_DIVERGED * best) {
            r->stop = 2;
            return 0;
        }
        if (ratio < best) best = ratio;
        if (r->iterations >= cap) {
            r->stop = 1;
            return 0;
        }
        TS_CHECK(f->correct(f->arg, 0));
        r->iterations++;
    }
}

static int refine_residual(void *arg, double *ratio) { return residual(arg, ratio); }

// x = 0, then x += U^-1 L^-1 b (first) or x += U^-1 L^-1 r.
static int refine_correct(void *arg, int first) {
    mx_run *s = arg;
    if (!first) return correct(s, s->rv, s->r->norm_r);
    memset(s->hx, 0, sizeof(double) * (size_t)s->N);
    TS_CHECK(ex_put(&s->ex, s->x, s->hx, sizeof(double) * (size_t)s->N));
    return correct(s, s->b, s->normb);
}

// Classic iterative refinement from x = U^-1 L^-1 b, stopping at the threshold.
static int refine(mx_run *s) {
    const ts_mxp_refiner f = {s, refine_residual, refine_correct};
    return ts_mxp_refine(s->o, s->mc->threshold, s->r, &f);
}

// Devices: one 16-bit GEMM and one GEMV of the LU's and the solves' kinds on each stream before the
// timer, so that loading their kernels is not timed. Their outputs land in the inverse blocks and
// vectors that the LU and the refinement overwrite before reading.
static int warm_up(mx_run *s) {
    const int64_t nb = s->NB < s->N ? s->NB : s->N;
    ts_mxp_kern *ks[2] = {s->k, s->k1};
    TS_CHECK(ts_mxp_cvt(s->k, nb, nb, s->A, s->lda, 1.0f, s->I16, s->NB));
    for (int i = 0; i < 2; i++) {
        if (!ks[i]) continue;
        TS_CHECK(ts_mxp_gemm(ks[i], nb, nb, nb, 1.0f, s->I16, s->NB, s->I16, s->NB, 0.0f, s->Linv, s->NB));
        TS_CHECK(ts_mxp_kern_sync(ks[i]));
    }
    if (s->fp8) { // and the FP8 conversion and GEMM (cuBLASLt)
        const int64_t kp = round_up(nb, 16);
        TS_CHECK(ts_mxp_cvt8(s->k, nb, nb, s->A, s->lda, 1, kp, s->L8, s->ld8, s->sc8));
        TS_CHECK(ts_mxp_cvt8(s->k, nb, nb, s->A, s->lda, 0, kp, s->U8, s->ld8, s->sc8 + 1));
        TS_CHECK(ts_mxp_kern_sync(s->k));
        for (int i = 0; i < 2; i++) {
            if (!ks[i]) continue;
            TS_CHECK(ts_mxp_gemm8(ks[i], nb, nb, kp, 1.0f, s->L8, s->ld8, s->sc8, s->U8, s->ld8, s->sc8 + 1, 0.0f,
                                  s->Linv, s->NB));
            TS_CHECK(ts_mxp_kern_sync(ks[i]));
        }
    }
    TS_CHECK(ts_mxp_sgemv(s->k, nb, nb, 1.0f, s->A, s->lda, s->A, 0.0f, s->z));
    return ts_mxp_kern_sync(s->k);
}

void ts_mxp_stamp(char out[32]) {
    time_t t = time(NULL);
    struct tm tmv;
    localtime_r(&t, &tmv);
    if (strftime(out, 32, "%a %b %e %H:%M:%S %Y", &tmv) == 0) out[0] = 0;
}

void ts_mxp_skip(ts_mxp_result *r, const char *why) {
    r->skipped = 1;
    snprintf(r->why, sizeof r->why, "%s", why);
}

int ts_mxp_exec_device(const ts_hpl_ctx *c) {
    return c->opts.exec == TS_HPL_EXEC_DEVICE || (c->opts.exec == TS_HPL_EXEC_AUTO && c->dev != NULL);
}

void ts_mxp_available(ts_hpl_ctx *c, int dev, double *avail, double *largest) {
    if (dev && c->dev) {
        size_t used = 0, fr = 0, lg = 0;
        ts_dmem_info(c->dev, &used, &fr, &lg);
        *avail = (double)fr;
        *largest = (double)lg;
    } else {
        *avail = *largest = (double)ts_hpl_host_available();
    }
}

static int64_t max_n_local(ts_hpl_ctx *c, int NB, int P, int Q, double fraction) {
    if (NB < 1 || P < 1 || Q < 1 || !(fraction > 0)) return -1;
    const int dev = ts_mxp_exec_device(c);
    double avail, largest;
    ts_mxp_available(c, dev, &avail, &largest);
    if (!(avail > 0)) return -1;
#define MXP_FITS(n)                                                                                            \
    (ts_mxp_bytes_grid((n), NB, P, Q, dev) <= fraction * avail &&                                              \
     4.0 * (double)round_up(ts_hpl_numroc((n), NB, 0, P), 32) * (double)ts_hpl_numroc((n), NB, 0, Q) <= largest)
    int64_t lo = 0, hi = 1;
    while (hi < ((int64_t)1 << 32) && MXP_FITS(hi)) lo = hi, hi *= 2;
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        if (MXP_FITS(mid)) lo = mid;
        else hi = mid;
    }
#undef MXP_FITS
    return lo - lo % NB;
}

int64_t ts_mxp_max_n(ts_hpl_ctx *c, int NB, double fraction) { return max_n_local(c, NB, 1, 1, fraction); }

int64_t ts_mxp_max_n_grid(ts_hpl_ctx *c, int NB, int P, int Q, double fraction) {
    double v = (double)max_n_local(c, NB, P, Q, fraction);
    ts_comm_allreduce_d(&c->world, &v, 1, TS_COMM_MIN); // one N for every rank
    return (int64_t)v;
}

// The case on rank 0 (the 1 x 1 grid).
static int run_one(ts_hpl_ctx *c, const ts_mxp_opts *o, const ts_mxp_case *mc, ts_mxp_result *r) {
    const int dev = ts_mxp_exec_device(c);
    if (dev && !c->dev) {
        ts_mxp_skip(r, "the device path needs a device (TESSERA_SIM_DEVICES for simulated ones)");
        return 0;
    }
    mx_run s = {.mc = mc, .o = o, .r = r, .N = mc->N, .NB = mc->NB, .lda = round_up(mc->N, 32),
                .ldl = round_up(mc->N, 8), .nblk = (mc->N + mc->NB - 1) / mc->NB,
                .depth = dev && o->depth != 0 ? 1 : 0, // look-ahead needs a second stream
                .fp8 = mc->fmt == TS_MXP_FP8, .ld8 = fp8_ld(mc->NB)};
    r->depth = s.depth;
    double avail, largest;
    ts_mxp_available(c, dev, &avail, &largest);
    const double need = ts_mxp_bytes_fmt(s.N, mc->NB, dev, mc->fmt);
    if (need > 0.98 * avail) {
        char why[256];
        int64_t fit = ts_mxp_max_n(c, mc->NB, 0.98);
        snprintf(why, sizeof why, "N=%lld does not fit in %s memory (%.2f GiB needed, %.2f GiB free); the largest N "
                 "that fits is %lld", (long long)s.N, dev ? "device" : "host", need / (1 << 30), avail / (1 << 30),
                 (long long)fit);
        ts_mxp_skip(r, why);
        return 0;
    }
    int rc = 0;
    if (dev) {
        s.ex.dev = c->dev;
        rc = ts_stream_create(c->dev, &s.ex.st);
    }
    if (rc == 0) rc = run_alloc(&s);
    if (rc == TS_ERR_UNSUPPORTED) { // FP8 on a device without FP8 GEMMs
        char why[256];
        snprintf(why, sizeof why, "%.250s", ts_error_last()->message);
        ts_error_clear();
        ts_mxp_skip(r, why);
        rc = 0;
        goto out;
    }
    if (rc == TS_ERR_NOMEM || rc == TS_ERR_DEVMEM) {
        char why[256];
        snprintf(why, sizeof why, "memory allocation failed for N=%lld: %.160s", (long long)s.N, ts_error_last()->message);
        ts_error_clear();
        ts_mxp_skip(r, why);
        rc = 0;
        goto out;
    }
    if (rc < 0) goto out;
    snprintf(r->exec_used, sizeof r->exec_used, "%s",
             dev ? (ts_devset_backend(c->devs) == TS_BACKEND_CUDA ? "device:cuda" : "device:sim") : "cpu");
    snprintf(r->engine_used, sizeof r->engine_used, "%s", ts_mxp_kern_engine(s.k));

    double tg = ts_now();
    TS_CHECK_GOTO(generate(&s), rc, out);
    r->t_gen = ts_now() - tg;
    if (dev) TS_CHECK_GOTO(warm_up(&s), rc, out);

    // the timed part: the LU and the refinement (with its first solve and every residual)
    ts_mxp_stamp(r->start_time);
    const double t0 = ts_now();
    TS_CHECK_GOTO(factor(&s, t0), rc, out);
    const double t1 = ts_now();
    TS_CHECK_GOTO(ts_mxp_kern_breakdown(s.k, &r->breakdown), rc, out);
    if (s.k1) { // the panels after the first were factored on stream 1
        int64_t b1 = 0;
        TS_CHECK_GOTO(ts_mxp_kern_breakdown(s.k1, &b1), rc, out);
        if (b1 > 0 && (r->breakdown == 0 || b1 < r->breakdown)) r->breakdown = b1;
    }
    if (r->breakdown == 0) {
        TS_CHECK_GOTO(refine(&s), rc, out);
        if (o->x_out) memcpy(o->x_out, s.hx, sizeof(double) * (size_t)s.N);
    } else {
        r->stop = 3;
    }
    ts_mxp_times(r, s.N, t0, t1, ts_now());
out:
    run_free(&s);
    if (s.ex.st) ts_stream_destroy(s.ex.st);
    return rc;
}

int ts_mxp_run(ts_hpl_ctx *c, const ts_mxp_opts *o, const ts_mxp_case *mc, ts_mxp_result *r) {
    memset(r, 0, sizeof *r);
    snprintf(r->exec_used, sizeof r->exec_used, "none");
    snprintf(r->engine_used, sizeof r->engine_used, "none");
    int rc = 0;
    if (mc->N < 1) ts_mxp_skip(r, "N must be >= 1");
    else if (mc->NB < 1 || mc->NB > TS_HPL_MAX_NB) ts_mxp_skip(r, "NB must be in 1..8192");
    else if (mc->P < 1 || mc->Q < 1) ts_mxp_skip(r, "P and Q must be positive");
    else if ((int64_t)mc->P * mc->Q > c->world.size) ts_mxp_skip(r, "the grid needs more processes than are running");
    else if (mc->P * mc->Q != 1 && mc->fmt == TS_MXP_FP8)
        ts_mxp_skip(r, "fp8 runs on 1 x 1 grids only");
    else if (mc->P * mc->Q != 1)
        rc = ts_mxp_run_grid(c, o, mc, r);
    else if (c->world.rank == 0)
        rc = run_one(c, o, mc, r);
    // every rank (idle ones too) gets rank 0's result and the agreed status
    int st = rc;
    ts_comm_allreduce_i(&c->world, &st, 1, TS_COMM_MIN);
    ts_comm_bcast(&c->world, r, sizeof *r, 0);
    if (st < 0 && rc == 0)
        return ts_error_set(st, __FILE__, __LINE__, "hpl-mxp: another rank failed (%s)", ts_status_name(st));
    return st;
}
