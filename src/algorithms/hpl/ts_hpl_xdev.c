// ts_hpl_xdev.c: the HPL engine's device execution: local matrix in device memory, two streams, device BLAS.
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "algorithms/hpl/ts_hpl_internal.h"
#include "comm/ts_dcomm.h"
#include "core/ts_env.h"
#include "core/ts_error.h"
#include "core/ts_log.h"
#include "core/ts_timer.h"
#include "kernels/ts_lu_kernels.h"

#define NEV TS_HPL_NEV // the loop's slots (ts_hpl_internal.h)
#define PANEL_GEMM TS_ENGINE_AUTO // the GEMM engine inside our device panel's recursion

typedef struct {
    ts_device *dev;
    ts_devset *set;
    ts_stream *st[TS_HPL_NSTREAM];
    ts_event *ev[NEV];
    ts_engine engine;           // the update's and U's GEMMs (--gemm, the ceiling's choice or auto)
    ts_lu_solver *solver;       // cuSOLVER panels
    int solver_gather;          // the solver was sized for gathered panels (N rows)
    ts_lu_panel *panel;         // our device panels
    ts_dcomm *row;              // device collectives along the process row (NCCL), or NULL
    ts_dcomm *col[TS_HPL_NSTREAM]; // along the process column, one per stream (row swaps), or NULL
    ts_event **stamp;           // timing events (stamps_reset)
    int nstamp, cap_stamp;
} xdev;

static xdev *X(ts_hpl_state *s) { return s->xs; }

static void d_fini(ts_hpl_state *s) {
    xdev *d = s->xs;
    if (!d) return;
    for (int i = 0; i < TS_HPL_NSTREAM; i++)
        if (d->st[i]) ts_stream_sync(d->st[i]);
    for (int i = 0; i < NEV; i++)
        if (d->ev[i]) ts_event_destroy(d->ev[i]);
    ts_dcomm_destroy(d->row);
    s->nccl = 0;
    for (int i = 0; i < TS_HPL_NSTREAM; i++) ts_dcomm_destroy(d->col[i]);
    s->nccl_col = 0;
    for (int i = 0; i < d->cap_stamp; i++) ts_event_destroy(d->stamp[i]);
    free(d->stamp);
    ts_lu_solver_destroy(d->solver);
    ts_lu_panel_destroy(d->panel);
    for (int i = 0; i < TS_HPL_NSTREAM; i++)
        if (d->st[i]) ts_stream_destroy(d->st[i]);
    free(d);
    s->xs = NULL;
}

// Library handles and first-call costs (cuBLAS per stream, cuSOLVER) are paid here, before the
// timed factorization: one tiny GEMM and TRSM on each stream, one tiny panel LU.
static int warm_up(ts_hpl_state *s, xdev *d) {
    double *m = NULL;
    int *iv = NULL;
    TS_CHECK(ts_dmalloc(d->dev, 64 * 64 * 3 * sizeof(double), (void **)&m));
    int rc = ts_dmalloc(d->dev, 80 * sizeof(int), (void **)&iv);
    double one = 1.0, zero = 0.0;
    if (rc == 0) rc = ts_memset_async(d->st[0], m, 0, 64 * 64 * 3 * sizeof(double));
    if (rc == 0) rc = ts_stream_sync(d->st[0]);
    for (int i = 0; i < TS_HPL_NSTREAM && rc == 0; i++) {
        rc = ts_dev_gemm(d->st[i], d->engine, 'd', 'N', 'N', 64, 64, 64, &one, m, 64, m + 4096, 64,
                         &zero, m + 8192, 64);
        if (rc == 0 && d->panel && d->engine != PANEL_GEMM) // (the device panel's engine)
            rc = ts_dev_gemm(d->st[i], PANEL_GEMM, 'd', 'N', 'N', 64, 64, 64, &one, m, 64, m + 4096, 64,
                             &zero, m + 8192, 64);
        if (rc == 0) rc = ts_dev_dtrsm(d->st[i], 'L', 'L', 'N', 'U', 64, 64, 1.0, m, 64, m + 8192, 64);
    }
    for (int i = 1; i < TS_HPL_NSTREAM && rc == 0 && (d->solver || d->panel); i++) { // the panel streams
        double id[64]; // a unit diagonal keeps the tiny LU regular
        for (int c = 0; c < 64 && rc == 0; c++) {
            memset(id, 0, sizeof id);
            id[c] = 1.0;
            rc = ts_copy_async(d->st[i], TS_COPY_H2D, m + c * 64, id, sizeof id);
            if (rc == 0) rc = ts_stream_sync(d->st[i]);
        }
        if (rc == 0 && d->solver) rc = ts_lu_dgetrf(d->st[i], d->solver, 64, 64, m, 64, iv, iv + 64);
        if (rc == 0 && d->panel) { // every base-case variant's first launch
            for (int pf = 0; pf < 3 && rc == 0; pf++) {
                ts_lu_panel_algo a = {pf, 2, 16, 2, 0};
                rc = ts_lu_panel_factor(d->st[i], d->panel, &a, 64, 32, m, 64, iv, iv + 64);
            }
        }
    }
    for (int i = 0; i < TS_HPL_NSTREAM; i++) {
        int r2 = ts_stream_sync(d->st[i]);
        if (rc == 0) rc = r2;
    }
    if (iv) ts_dfree(d->dev, iv);
    ts_dfree(d->dev, m);
    return rc;
}

static int d_init(ts_hpl_state *s) {
    xdev *d = calloc(1, sizeof *d);
    if (!d) TS_RAISE(TS_ERR_NOMEM, "device state");
    s->xs = d;
    d->dev = s->ctx->dev;
    d->set = s->ctx->devs;
    // The GEMM engine of the trailing update and of U (ts_hpl_gemm.c: forced by --gemm, measured by
    // the ceiling, or auto). The device panel's own small GEMMs keep auto (PANEL_GEMM below): its
    // shapes are not the update's, and the choice was measured on the update's.
    TS_CHECK(ts_engine_parse(s->ctx->opts.engine ? s->ctx->opts.engine : "auto", &d->engine));
    // Stream 1 carries the critical path under lookahead (the next panel's columns, its
    // factorization): high priority, so that its kernels are not queued behind the blocks of the
    // trailing GEMM on stream 0. TESSERA_HPL_PANEL_PRIORITY=0 creates it at normal priority.
    int prio = 1;
    TS_CHECK(ts_env_bool("TESSERA_HPL_PANEL_PRIORITY", &prio) < 0 ? TS_ERR_PARSE : 0);
    for (int i = 0; i < TS_HPL_NSTREAM; i++) TS_CHECK(ts_stream_create_prio(d->dev, i == 1 ? prio : 0, &d->st[i]));
    s->panel_prio = prio;
    for (int i = 0; i < NEV; i++) TS_CHECK(ts_event_create(d->dev, &d->ev[i]));
    ts_engine e = ts_dev_gemm_engine_for(d->st[0], d->engine, 'd', 'N', 'N', s->mp, s->nq, s->NB);
    snprintf(s->r->engine_used, sizeof s->r->engine_used, "%s", ts_engine_name(e));
    int hybrid = s->panel_kind == TS_HPL_PANEL_HYBRID;
    if (s->panel_dev && (s->panel_kind == TS_HPL_PANEL_CUSOLVER || hybrid)) // (64 x 64: the warm-up's LU)
        TS_CHECK(ts_lu_solver_create(d->st[1], s->mp > 64 ? s->mp : 64, s->NB > 64 ? s->NB : 64, &d->solver));
    if (s->panel_dev && (s->panel_kind == TS_HPL_PANEL_TESSERA || hybrid))
        TS_CHECK(ts_lu_panel_create(d->st[1], PANEL_GEMM, s->mp, &d->panel));
    return warm_up(s, d);
}

static int d_malloc(ts_hpl_state *s, size_t bytes, void **p) {
    return ts_dmalloc(X(s)->dev, bytes ? bytes : 256, p);
}
static void d_free(ts_hpl_state *s, void *p) { ts_dfree(X(s)->dev, p); }
static int d_halloc(ts_hpl_state *s, size_t bytes, void **p) {
    return ts_host_alloc(X(s)->set, bytes ? bytes : 64, p);
}
static void d_hfree(ts_hpl_state *s, void *p) { ts_host_free(X(s)->set, p); }

static int copy2d(ts_hpl_state *s, int st, ts_copy_kind kind, double *dst, int64_t ldd,
                  const double *src, int64_t lds, int64_t m, int64_t n) {
    if (m <= 0 || n <= 0) return 0;
    size_t e = sizeof(double);
    return ts_copy2d_async(X(s)->st[st], kind, dst, (size_t)ldd * e, src, (size_t)lds * e,
                           (size_t)m * e, (size_t)n);
}
static int d_to_host(ts_hpl_state *s, int st, double *h, int64_t ldh, const double *x, int64_t ldx,
                     int64_t m, int64_t n) {
    return copy2d(s, st, TS_COPY_D2H, h, ldh, x, ldx, m, n);
}
static int d_to_x(ts_hpl_state *s, int st, double *x, int64_t ldx, const double *h, int64_t ldh,
                  int64_t m, int64_t n) {
    return copy2d(s, st, TS_COPY_H2D, x, ldx, h, ldh, m, n);
}
static int d_x_copy(ts_hpl_state *s, int st, double *dst, int64_t ldd, const double *src,
                    int64_t lds, int64_t m, int64_t n) {
    return copy2d(s, st, TS_COPY_D2D, dst, ldd, src, lds, m, n);
}
static int d_bytes(ts_hpl_state *s, int st, void *x, const void *h, size_t bytes) {
    if (!bytes) return 0;
    return ts_copy_async(X(s)->st[st], TS_COPY_H2D, x, h, bytes);
}
static int d_bytes_h(ts_hpl_state *s, int st, void *h, const void *x, size_t bytes) {
    if (!bytes) return 0;
    return ts_copy_async(X(s)->st[st], TS_COPY_D2H, h, x, bytes);
}
static int d_getrf(ts_hpl_state *s, int st, int64_t m, int64_t n, double *A, int64_t lda, int *ipiv,
                   int *info) {
    xdev *d = X(s);
    // hybrid: a tall panel by ours on a few SMs (its own algorithm, not the case's PFACT...), where
    // an update runs beside it: not the first panel (m = mp with one process row, N gathered) nor at
    // depth 0
    int beside = s->depth > 0 && m < (s->panel_gather ? s->N : s->mp);
    int ours = s->panel_kind == TS_HPL_PANEL_TESSERA ||
               (s->panel_kind == TS_HPL_PANEL_HYBRID && m >= s->panel_tail && beside);
    if (ours) {
        if (!d->panel)
            TS_CHECK(ts_lu_panel_create(d->st[st], PANEL_GEMM, s->panel_gather ? s->N : s->mp, &d->panel));
        const ts_hpl_case *hc = s->hc;
        ts_lu_panel_algo a = {hc->pfact, hc->rfact, hc->nbmin, hc->ndiv, s->leaf_grid};
        if (s->panel_kind == TS_HPL_PANEL_HYBRID) {
            a = (ts_lu_panel_algo){2, 1, TS_HPL_HYBRID_LEAF, 2, s->leaf_grid};
            s->panels_own++;
        }
        return ts_lu_panel_factor(d->st[st], d->panel, &a, m, n, A, lda, ipiv, info);
    }
    // (gathered panels of several process rows are up to N rows tall)
    if (d->solver && s->panel_gather && !d->solver_gather) { // made for one process row's panels
        ts_lu_solver_destroy(d->solver);
        d->solver = NULL;
    }
    if (!d->solver) {
        TS_CHECK(ts_lu_solver_create(d->st[st], s->panel_gather ? s->N : s->mp, s->NB, &d->solver));
        d->solver_gather = s->panel_gather;
    }
    // (created in d_init when panels go to the device; kept for callers that decide later)
    return ts_lu_dgetrf(d->st[st], d->solver, m, n, A, lda, ipiv, info);
}
static int d_pack(ts_hpl_state *s, int st, const double *A, int64_t lda, const int64_t *idx,
                  int64_t n, int64_t nc, double *buf) {
    return ts_lu_pack_rows(X(s)->st[st], A, lda, idx, n, nc, buf);
}
static int d_unpack(ts_hpl_state *s, int st, const double *buf, const int64_t *bidx, int64_t n,
                    int64_t nc, double *A, int64_t lda, const int64_t *aidx) {
    return ts_lu_unpack_rows(X(s)->st[st], buf, bidx, n, nc, A, lda, aidx);
}
static int d_swap(ts_hpl_state *s, int st, double *A, int64_t lda, const int64_t *pk, int64_t npack,
                  const int64_t *ub, int64_t jb, double *U, int64_t ldu, const int64_t *al, const int64_t *ab,
                  int64_t nown, int64_t nc) {
    return ts_lu_swap_rows(X(s)->st[st], A, lda, pk, npack, ub, jb, U, ldu, al, ab, nown, nc);
}
static int d_trsm(ts_hpl_state *s, int st, int64_t m, int64_t n, const double *L, int64_t ldl,
                  double *B, int64_t ldb) {
    if (m <= 0 || n <= 0) return 0;
    return ts_dev_dtrsm(X(s)->st[st], 'L', 'L', 'N', 'U', m, n, 1.0, L, ldl, B, ldb);
}
static int d_gemm_op(ts_hpl_state *s, int st, char ta, char tb, int64_t m, int64_t n, int64_t k, double alpha,
                     const double *A, int64_t lda, const double *B, int64_t ldb, double beta, double *C,
                     int64_t ldc) {
    if (m <= 0 || n <= 0) return 0;
    return ts_dev_gemm(X(s)->st[st], X(s)->engine, 'd', ta, tb, m, n, k, &alpha, A, lda, B, ldb, &beta, C, ldc);
}
static int d_gemm(ts_hpl_state *s, int st, int64_t m, int64_t n, int64_t k, double alpha,
                  const double *A, int64_t lda, const double *B, int64_t ldb, double beta,
                  double *C, int64_t ldc) {
    return d_gemm_op(s, st, 'N', 'N', m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
static int d_gemm_nt(ts_hpl_state *s, int st, int64_t m, int64_t n, int64_t k, double alpha,
                     const double *A, int64_t lda, const double *B, int64_t ldb, double beta,
                     double *C, int64_t ldc) {
    return d_gemm_op(s, st, 'N', 'T', m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
static int d_swap_t(ts_hpl_state *s, int st, double *At, int64_t ldt, const int64_t *pk, const int64_t *ub,
                    int64_t jb, double *Ut, int64_t ldut, const int64_t *al, const int64_t *ab, int64_t nown,
                    int64_t nc) {
    return ts_lu_swap_rows_t(X(s)->st[st], At, ldt, pk, ub, jb, Ut, ldut, al, ab, nown, nc);
}
static int d_transpose(ts_hpl_state *s, int st, int64_t m, int64_t n, const double *src, int64_t lds, double *dst,
                       int64_t ldd) {
    return ts_lu_transpose(X(s)->st[st], m, n, src, lds, dst, ldd);
}
static int d_copy_cols(ts_hpl_state *s, int st, const double *S, int64_t lds, const int64_t *sidx, int64_t n,
                       int64_t nc, double *D, int64_t ldd, const int64_t *didx) {
    return ts_lu_copy_cols(X(s)->st[st], S, lds, sidx, n, nc, D, ldd, didx);
}
static int d_sync(ts_hpl_state *s, int st) { return ts_stream_sync(X(s)->st[st]); }
static int d_record(ts_hpl_state *s, int ev, int st) { return ts_event_record(X(s)->ev[ev], X(s)->st[st]); }
static int d_wait(ts_hpl_state *s, int st, int ev) { return ts_stream_wait_event(X(s)->st[st], X(s)->ev[ev]); }
static int d_evsync(ts_hpl_state *s, int ev) { return ts_event_sync(X(s)->ev[ev]); }

// Events are created up front so that recording one in the loop costs no allocation.
static int d_stamps_reset(ts_hpl_state *s, int n) {
    xdev *d = X(s);
    d->nstamp = 0;
    if (n <= d->cap_stamp) return 0;
    ts_event **e = realloc(d->stamp, (size_t)n * sizeof(*e));
    if (!e) TS_RAISE(TS_ERR_NOMEM, "timing events");
    d->stamp = e;
    for (; d->cap_stamp < n; d->cap_stamp++)
        TS_CHECK(ts_event_create(d->dev, &d->stamp[d->cap_stamp]));
    return 0;
}
static int d_stamp(ts_hpl_state *s, int st) {
    xdev *d = X(s);
    if (d->nstamp >= d->cap_stamp) return -1;
    if (ts_event_record(d->stamp[d->nstamp], d->st[st]) != 0) return -1;
    return d->nstamp++;
}
static double d_stamp_diff(ts_hpl_state *s, int a, int b) {
    double ms = 0;
    if (a < 0 || b < 0 || ts_event_elapsed_ms(X(s)->stamp[a], X(s)->stamp[b], &ms) != 0) return 0.0;
    return ms / 1e3;
}

// ---- the solve of one process ----

// 1 x 1: U x = y in execution memory, y being column N of A (overwritten with x; the check
// regenerates [A|b]): diagonal blocks from the last, each by DTRSM, the rows above updated by a
// GEMM with the block of x just found; then x to the host, one copy. The grid's solve moves each
// block's triangle to the host and solves it there, ~1.5 ms a block on one GPU (48 ms at N = 32768).
// The transposed layout holds U^T (lower) and y as row N of A^T (stride lda): y is copied into
// the swap scratch first, then each diagonal block solves U_jj x_j = y_j as op(U_jj^T) = U_jj by
// DTRSM ('T'), and the rows above take y -= A(0:j0, j0:j0+w) x_j as a GEMM with A^T's block
// transposed. With inv(L11) folded into L (s->fold) the rows hold U0 = L11 U and y holds L11 y:
// each block first solves L11 (the diagonal block's unit lower part) and then U11, the same system.
static int solve_local_t(ts_hpl_state *s) {
    xdev *d = X(s);
    const int64_t N = s->N, NB = s->NB, lda = s->lda;
    double *A = s->A, *y = s->xscr[0];
    int rc = d_x_copy(s, 0, y, 1, A + N, lda, 1, N);
    for (int64_t j0 = (N - 1) / NB * NB; rc == 0 && j0 >= 0; j0 -= NB) {
        int64_t w = N - j0 < NB ? N - j0 : NB;
        if (s->fold) rc = ts_dev_dtrsm(d->st[0], 'L', 'U', 'T', 'U', w, 1, 1.0, A + j0 + j0 * lda, lda, y + j0, w);
        if (rc == 0) rc = ts_dev_dtrsm(d->st[0], 'L', 'L', 'T', 'N', w, 1, 1.0, A + j0 + j0 * lda, lda, y + j0, w);
        if (rc == 0 && j0 > 0) rc = d_gemm_op(s, 0, 'T', 'N', j0, 1, w, -1.0, A + j0, lda, y + j0, w, 1.0, y, j0);
    }
    if (rc == 0) rc = ts_copy_async(d->st[0], TS_COPY_D2H, s->xsol, y, (size_t)N * sizeof(double));
    int src = ts_stream_sync(d->st[0]);
    return rc ? rc : src;
}

static int d_solve_local(ts_hpl_state *s) {
    if (s->trans) return solve_local_t(s);
    xdev *d = X(s);
    const int64_t N = s->N, NB = s->NB, lda = s->lda;
    double *A = s->A, *y = s->A + N * lda;
    int rc = 0;
    for (int64_t j0 = (N - 1) / NB * NB; rc == 0 && j0 >= 0; j0 -= NB) {
        int64_t w = N - j0 < NB ? N - j0 : NB;
        rc = ts_dev_dtrsm(d->st[0], 'L', 'U', 'N', 'N', w, 1, 1.0, A + j0 + j0 * lda, lda, y + j0, lda);
        if (rc == 0 && j0 > 0) rc = d_gemm(s, 0, j0, 1, w, -1.0, A + j0 * lda, lda, y + j0, lda, 1.0, y, lda);
    }
    if (rc == 0) rc = ts_copy_async(d->st[0], TS_COPY_D2H, s->xsol, y, (size_t)N * sizeof(double));
    int src = ts_stream_sync(d->st[0]);
    return rc ? rc : src;
}

const ts_hpl_xops ts_hpl_xops_dev = {
    "device", 1, d_init, d_fini, d_malloc, d_free, d_halloc, d_hfree, d_to_host, d_to_x, d_x_copy,
    d_bytes, d_bytes_h, d_getrf, d_pack, d_unpack, d_trsm, d_gemm, d_sync, d_record, d_wait, d_evsync,
    d_stamps_reset, d_stamp, d_stamp_diff, d_swap, d_solve_local, d_swap_t, d_transpose, d_gemm_nt,
    d_copy_cols,
};

// ---- device-to-device panel broadcasts ----

int ts_hpl_xdev_nccl_setup(ts_hpl_state *s) {
    xdev *d = X(s);
    s->nccl = 0;
    if (s->Q < 2 || !(s->panel_dev || s->panel_gather)) return 0; // the host path stays
    int want = 1;
    if (ts_env_bool("TESSERA_HPL_NCCL", &want) < 0) want = 0;
    TS_CHECK(ts_comm_allreduce_i(&s->grid, &want, 1, TS_COMM_MIN));
    if (!want) return 0;
    // every rank of the row: a CUDA device of its own, NCCL in the build
    char why[128] = "";
    int failed = 0;
    TS_CHECK(ts_dcomm_join(&s->row, d->dev, &d->row, why, sizeof why, &failed));
    if (failed) TS_LOG_W("hpl: device broadcasts unavailable, panels go through the host: %s", why);
    int ok = d->row != NULL;
    TS_CHECK(ts_comm_allreduce_i(&s->grid, &ok, 1, TS_COMM_MIN));
    if (!ok) {
        ts_dcomm_destroy(d->row);
        d->row = NULL;
        return 0;
    }
    s->nccl = 1;
    return 0;
}

// Row swaps device to device along the process column: one communicator per stream, so that the
// operations of one communicator stay in one stream's order on every rank.
int ts_hpl_xdev_col_setup(ts_hpl_state *s) {
    xdev *d = X(s);
    s->nccl_col = 0;
    if (s->P < 2) return 0;
    int want = 1;
    if (ts_env_bool("TESSERA_HPL_NCCL", &want) < 0) want = 0;
    TS_CHECK(ts_comm_allreduce_i(&s->grid, &want, 1, TS_COMM_MIN));
    if (!want) return 0;
    // Test hook: on simulated devices the same path with the exchange through host staging
    int emul = 0;
    if (ts_env_bool("TESSERA_TEST_HPL_COL_EMUL", &emul) < 0) emul = 0;
    emul = emul && ts_devset_backend(d->set) != TS_BACKEND_CUDA;
    TS_CHECK(ts_comm_allreduce_i(&s->grid, &emul, 1, TS_COMM_MIN));
    if (emul) {
        s->nccl_col = 2;
        return 0;
    }
    char why[128] = "";
    int ok = 1;
    for (int i = 0; i < TS_HPL_NSTREAM; i++) {
        TS_CHECK(ts_dcomm_join(&s->col, d->dev, &d->col[i], why, sizeof why, NULL));
        if (!d->col[i]) ok = 0;
    }
    TS_CHECK(ts_comm_allreduce_i(&s->grid, &ok, 1, TS_COMM_MIN)); // the whole grid, one path
    if (!ok) {
        for (int i = 0; i < TS_HPL_NSTREAM; i++) {
            ts_dcomm_destroy(d->col[i]);
            d->col[i] = NULL;
        }
        if (s->grid.rank == 0)
            TS_LOG_I("hpl: row swaps between process rows go through the host%s%s", why[0] ? ": " : "", why);
        return 0;
    }
    s->nccl_col = 1;
    return 0;
}

int ts_hpl_xdev_col_allgather(ts_hpl_state *s, int st, double *buf, const int64_t *cnt, const int64_t *dsp,
                              int64_t nc) {
    xdev *d = X(s);
    int P = s->P;
    if (s->nccl_col == 2) { // the test hook's exchange: through host staging and MPI
        int64_t me = cnt[s->myrow] * nc, all = (dsp[P - 1] + cnt[P - 1]) * nc;
        int64_t *c2 = malloc(sizeof(int64_t) * 2 * (size_t)P);
        int rc = c2 ? 0 : TS_ERROR(TS_ERR_NOMEM, "hpl: swap counts");
        if (rc == 0) rc = s->x->to_host(s, st, s->hsend[st], me, buf + dsp[s->myrow] * nc, me, me, 1);
        if (rc == 0) rc = s->x->sync(s, st);
        for (int q = 0; c2 && q < P; q++) c2[q] = cnt[q] * nc, c2[P + q] = dsp[q] * nc;
        int mrc = c2 ? ts_comm_allgatherv(&s->col, s->hsend[st], me, s->hrecv[st], c2, c2 + P) : rc;
        if (rc == 0) rc = mrc;
        free(c2);
        if (rc == 0) rc = s->x->to_x(s, st, buf, all, s->hrecv[st], all, all, 1);
        return rc;
    }
    if (!d->col[st]) TS_RAISE(TS_ERR_STATE, "hpl: no device communicator along the column");
    return ts_dcomm_allgatherv(d->col[st], d->st[st], s->myrow, P, buf, cnt, dsp, nc);
}

// Gather to / scatter from member root along the column, and broadcast, on stream st (counts and
// displacements in doubles, per process row; root's own entries are not moved). NCCL, or with
// the test hook (nccl_col == 2) through host memory and MPI.
static int host_stage(ts_hpl_state *s, int st, double **h, const double *x, int64_t n, int64_t room) {
    if (room < n) room = n;
    *h = malloc(sizeof(double) * (size_t)(room > 0 ? room : 1));
    if (!*h) TS_RAISE(TS_ERR_NOMEM, "hpl: host staging of %lld doubles", (long long)n);
    int rc = n > 0 && x ? s->x->bytes_to_host(s, st, *h, x, sizeof(double) * (size_t)n) : 0;
    if (rc == 0) rc = s->x->sync(s, st);
    return rc;
}

int ts_hpl_xdev_col_rooted(ts_hpl_state *s, int st, int root, int to_root, double *rootbuf, const int64_t *cnt,
                           const int64_t *dsp, double *mine, int64_t n) {
    xdev *d = X(s);
    const int P = s->P, me = s->myrow, at_root = me == root;
    if (s->nccl_col == 2) { // the test hook: MPI gatherv/scatterv through host staging
        int64_t tot = 0; // doubles at root
        for (int q = 0; q < P; q++)
            if (q != root && dsp[q] + cnt[q] > tot) tot = dsp[q] + cnt[q];
        const int64_t sn = to_root ? (at_root ? 0 : n) : (at_root ? tot : 0); // staged from the device
        const int64_t rn = to_root ? (at_root ? tot : 0) : (at_root ? 0 : n); // arriving here
        double *hs = NULL, *hr = NULL;
        int rc = host_stage(s, st, &hs, sn ? (to_root ? mine : rootbuf) : NULL, sn, 0);
        if (rc == 0 && !(hr = malloc(sizeof(double) * (size_t)(rn > 0 ? rn : 1))))
            rc = TS_ERROR(TS_ERR_NOMEM, "hpl: host staging");
        int64_t *c2 = malloc(sizeof(int64_t) * 2 * (size_t)P);
        if (!c2 && rc == 0) rc = TS_ERROR(TS_ERR_NOMEM, "hpl: counts");
        for (int q = 0; c2 && q < P; q++) c2[q] = q == root ? 0 : cnt[q], c2[P + q] = dsp[q];
        int mrc = !c2 ? rc
                  : to_root ? ts_comm_gatherv(&s->col, hs, sn, hr, c2, c2 + P, root)
                            : ts_comm_scatterv(&s->col, hs, c2, c2 + P, hr, rn, root);
        if (rc == 0) rc = mrc;
        if (rc == 0 && rn > 0) rc = s->x->bytes_to_x(s, st, to_root ? rootbuf : mine, hr, sizeof(double) * (size_t)rn);
        if (rc == 0) rc = s->x->sync(s, st);
        free(c2), free(hs), free(hr);
        return rc;
    }
    return ts_dcomm_rooted(d->col[st], d->st[st], me, P, root, to_root, rootbuf, cnt, dsp, mine, n);
}

int ts_hpl_xdev_col_bcast(ts_hpl_state *s, int st, double *buf, int64_t n, int root) {
    xdev *d = X(s);
    if (s->nccl_col == 2) {
        double *h = NULL;
        int rc = host_stage(s, st, &h, s->myrow == root ? buf : NULL, s->myrow == root ? n : 0, n);
        int mrc = h ? ts_comm_bcast(&s->col, h, sizeof(double) * (size_t)n, root) : rc;
        if (rc == 0) rc = mrc;
        if (rc == 0 && s->myrow != root) rc = s->x->bytes_to_x(s, st, buf, h, sizeof(double) * (size_t)n);
        if (rc == 0) rc = s->x->sync(s, st);
        free(h);
        return rc;
    }
    return ts_dcomm_bcast(d->col[st], d->st[st], buf, sizeof(double) * (size_t)n, root);
}

int ts_hpl_xdev_panel_bcast(ts_hpl_state *s, int st, void *buf, size_t bytes, int root) {
    xdev *d = X(s);
    if (!d->row) TS_RAISE(TS_ERR_STATE, "hpl: no device communicator");
    return ts_dcomm_bcast(d->row, d->st[st], buf, bytes, root);
}

// ---- the cuSOLVER baseline ----

int ts_hpl_xdev_getrf_solve(ts_hpl_state *s, double *t_fact, double *t_solve, int *info) {
    xdev *d = X(s);
    int64_t N = s->N, lda = s->lda;
    ts_stream *st = d->st[0];
    double *A = s->A, *b = s->A + N * lda; // column N holds b
    *t_fact = *t_solve = 0;
    *info = 0;
    ts_lu_solver *sv = NULL;
    int *piv = NULL, *hpiv = NULL;
    double *hb = NULL;
    int rc = ts_lu_solver_create(st, N, N, &sv);
    if (rc == 0) rc = ts_dmalloc(d->dev, (size_t)(N + 1) * sizeof(int), (void **)&piv);
    if (rc == 0) rc = ts_host_alloc(d->set, (size_t)(N + 1) * sizeof(int), (void **)&hpiv);
    if (rc == 0) rc = ts_host_alloc(d->set, (size_t)N * sizeof(double), (void **)&hb);
    if (rc == 0) rc = ts_stream_sync(st); // [A|b] generated
    // the factorization alone between two events
    if (rc == 0) rc = ts_event_record(d->ev[0], st);
    if (rc == 0) rc = ts_lu_dgetrf(st, sv, N, N, A, lda, piv, piv + N);
    if (rc == 0) rc = ts_event_record(d->ev[1], st);
    if (rc == 0) rc = ts_copy_async(st, TS_COPY_D2H, hpiv, piv, (size_t)(N + 1) * sizeof(int));
    if (rc == 0) rc = ts_stream_sync(st);
    double ms = 0;
    if (rc == 0) rc = ts_event_elapsed_ms(d->ev[0], d->ev[1], &ms);
    if (rc == 0) {
        *t_fact = ms / 1e3;
        *info = hpiv[N];
    }
    // x: b's rows interchanged as the pivots say, then L y = b, U x = y
    if (rc == 0 && *info == 0) {
        double t0 = ts_now();
        rc = ts_copy_async(st, TS_COPY_D2H, hb, b, (size_t)N * sizeof(double));
        if (rc == 0) rc = ts_stream_sync(st);
        for (int64_t i = 0; rc == 0 && i < N; i++) {
            int64_t p = hpiv[i] - 1;
            if (p != i) {
                double t = hb[i];
                hb[i] = hb[p];
                hb[p] = t;
            }
        }
        if (rc == 0) rc = ts_copy_async(st, TS_COPY_H2D, b, hb, (size_t)N * sizeof(double));
        if (rc == 0) rc = ts_dev_dtrsm(st, 'L', 'L', 'N', 'U', N, 1, 1.0, A, lda, b, lda);
        if (rc == 0) rc = ts_dev_dtrsm(st, 'L', 'U', 'N', 'N', N, 1, 1.0, A, lda, b, lda);
        if (rc == 0) rc = ts_copy_async(st, TS_COPY_D2H, hb, b, (size_t)N * sizeof(double));
        if (rc == 0) rc = ts_stream_sync(st);
        if (rc == 0) memcpy(s->xsol, hb, (size_t)N * sizeof(double));
        *t_solve = ts_now() - t0;
    }
    ts_stream_sync(st);
    if (hb) ts_host_free(d->set, hb);
    if (hpiv) ts_host_free(d->set, hpiv);
    if (piv) ts_dfree(d->dev, piv);
    ts_lu_solver_destroy(sv);
    return rc;
}
