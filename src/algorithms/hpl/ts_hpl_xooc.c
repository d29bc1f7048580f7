// ts_hpl_xooc.c: the HPL engine's out-of-core execution: local matrix in host memory, the update GEMMs through the tile runtime.
//
// CALDGEMM's design: the matrix stays in (pinned) host memory, the trailing-matrix GEMMs stream
// through the rank's devices by the tile runtime (src/runtime/ts_tiles.h), and everything else
// (row swaps, TRSM) runs on the host. The panel is factored on the host, or (panel engine
// cusolver or tessera, P = 1) on the rank's device: copied there, factored, copied back, on a
// high-priority device stream of its own (about 2 x 10 ms of copies and 18 ms of factorization for
// a 65536 x 1024 panel on an H200, against 1.5 s for the host panel competing with the tile
// runtime's copies for host memory). The engine sees the same two streams as
// on a device: each is a host worker thread that runs its operations in order, with events
// between them, so the device path's lookahead applies unchanged: the next panel is factored and
// broadcast by the host while stream 0 streams the update of the rest through the devices.
// Small GEMMs (the solve's matrix-vector products, narrow tails) stay on the CPU BLAS.
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "algorithms/hpl/ts_hpl_internal.h"
#include "core/ts_error.h"
#include "core/ts_env.h"
#include "core/ts_log.h"
#include "core/ts_timer.h"
#include "kernels/ts_lu_kernels.h"
#include "runtime/ts_tiles.h"

#define NEV TS_HPL_NEV // the loop's slots (ts_hpl_internal.h)
#define MAXPIN 32

typedef struct hop hop;
struct hop {
    int (*fn)(ts_hpl_state *s, hop *o);
    hop *next;
    void *p[4];
    int64_t i[6];
    double v[2];
    const int64_t *idx[2];
};

typedef struct {
    pthread_t th;
    int started;
    hop *head, *tail;
    uint64_t issued, done;
    int err;
} hstream;

typedef struct {
    ts_hpl_state *s;
    int id;
} hstart;

typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stop;
    hstream st[TS_HPL_NSTREAM];
    hstart start[TS_HPL_NSTREAM];
    struct {
        int st;
        uint64_t target;
    } ev[NEV];
    ts_tiles *rt;
    ts_devset *set;
    struct {
        void *ptr;
        int handle;
    } pin[MAXPIN];
    // the device panel (s->panel_dev): its stream, the panel's copy, pivots and info, solvers
    ts_stream *pst;
    double *dpan;
    int *dpiv;
    ts_lu_solver *solver;
    ts_lu_panel *panel;
    // statistics of the streamed GEMMs
    int64_t gemms_tiles, gemms_cpu;
    double gemm_flops_tiles;
    size_t bytes_h2d, bytes_d2h;
} xooc;

static xooc *O(ts_hpl_state *s) { return s->xs; }

// ---- host streams ----

static void *worker(void *arg) {
    hstart *h = arg;
    ts_hpl_state *s = h->s;
    xooc *o = O(s);
    hstream *q = &o->st[h->id];
    pthread_mutex_lock(&o->mu);
    for (;;) {
        while (!q->head && !o->stop) pthread_cond_wait(&o->cv, &o->mu);
        if (!q->head) break;
        hop *op = q->head;
        int skip = q->err != 0; // a failed stream runs nothing more (as a device stream)
        pthread_mutex_unlock(&o->mu);
        int rc = skip ? 0 : op->fn(s, op);
        if (rc < 0) TS_LOG_E("hpl (out-of-core): host stream %d: %s", h->id, ts_error_string());
        pthread_mutex_lock(&o->mu);
        q->head = op->next;
        if (!q->head) q->tail = NULL;
        if (rc < 0 && q->err == 0) q->err = rc;
        q->done++;
        pthread_cond_broadcast(&o->cv);
        free(op);
    }
    pthread_mutex_unlock(&o->mu);
    return NULL;
}

static int enqueue(ts_hpl_state *s, int st, hop *proto) {
    xooc *o = O(s);
    hop *op = malloc(sizeof *op);
    if (!op) TS_RAISE(TS_ERR_NOMEM, "host stream operation");
    *op = *proto;
    op->next = NULL;
    pthread_mutex_lock(&o->mu);
    hstream *q = &o->st[st];
    if (q->tail) q->tail->next = op;
    else q->head = op;
    q->tail = op;
    q->issued++;
    pthread_cond_broadcast(&o->cv);
    pthread_mutex_unlock(&o->mu);
    return 0;
}

static int x_sync(ts_hpl_state *s, int st) {
    xooc *o = O(s);
    pthread_mutex_lock(&o->mu);
    hstream *q = &o->st[st];
    while (q->done < q->issued) pthread_cond_wait(&o->cv, &o->mu);
    int rc = q->err;
    pthread_mutex_unlock(&o->mu);
    if (rc) TS_RAISE(rc, "hpl (out-of-core): an operation on host stream %d failed", st);
    return 0;
}

static int op_wait(ts_hpl_state *s, hop *op) {
    xooc *o = O(s);
    pthread_mutex_lock(&o->mu);
    hstream *q = &o->st[op->i[0]];
    while (q->done < (uint64_t)op->i[1]) pthread_cond_wait(&o->cv, &o->mu);
    pthread_mutex_unlock(&o->mu);
    return 0;
}

static int x_record(ts_hpl_state *s, int ev, int st) {
    xooc *o = O(s);
    pthread_mutex_lock(&o->mu);
    o->ev[ev].st = st;
    o->ev[ev].target = o->st[st].issued;
    pthread_mutex_unlock(&o->mu);
    return 0;
}
static int x_wait(ts_hpl_state *s, int st, int ev) {
    xooc *o = O(s);
    hop op = {.fn = op_wait};
    pthread_mutex_lock(&o->mu);
    op.i[0] = o->ev[ev].st;
    op.i[1] = (int64_t)o->ev[ev].target;
    pthread_mutex_unlock(&o->mu);
    if (op.i[0] == st) return 0; // in order on the same stream
    return enqueue(s, st, &op);
}
static int x_evsync(ts_hpl_state *s, int ev) {
    xooc *o = O(s);
    pthread_mutex_lock(&o->mu);
    hstream *q = &o->st[o->ev[ev].st];
    while (q->done < o->ev[ev].target) pthread_cond_wait(&o->cv, &o->mu);
    int rc = q->err;
    pthread_mutex_unlock(&o->mu);
    if (rc) TS_RAISE(rc, "hpl (out-of-core): an operation before event %d failed", ev);
    return 0;
}

// ---- life cycle and memory ----

static void x_fini(ts_hpl_state *s) {
    xooc *o = O(s);
    if (!o) return;
    pthread_mutex_lock(&o->mu);
    o->stop = 1;
    pthread_cond_broadcast(&o->cv);
    pthread_mutex_unlock(&o->mu);
    for (int i = 0; i < TS_HPL_NSTREAM; i++)
        if (o->st[i].started) pthread_join(o->st[i].th, NULL);
    ts_tiles_destroy(o->rt);
    ts_lu_solver_destroy(o->solver);
    ts_lu_panel_destroy(o->panel);
    if (o->dpan) ts_dfree(s->ctx->dev, o->dpan);
    if (o->dpiv) ts_dfree(s->ctx->dev, o->dpiv);
    if (o->pst) ts_stream_destroy(o->pst);
    for (int i = 0; i < MAXPIN; i++)
        if (o->pin[i].ptr) ts_host_unpin(o->set, o->pin[i].handle);
    pthread_cond_destroy(&o->cv);
    pthread_mutex_destroy(&o->mu);
    free(s->hstamp);
    s->hstamp = NULL;
    s->nstamp = s->cap_stamp = 0;
    free(o);
    s->xs = NULL;
}

static int x_init(ts_hpl_state *s) {
    if (!s->ctx->devs || !s->ctx->dev) TS_RAISE(TS_ERR_UNSUPPORTED, "hpl: out-of-core execution needs a device");
    xooc *o = calloc(1, sizeof *o);
    if (!o) TS_RAISE(TS_ERR_NOMEM, "out-of-core state");
    pthread_mutex_init(&o->mu, NULL);
    pthread_cond_init(&o->cv, NULL);
    s->xs = o;
    o->set = s->ctx->devs;
    ts_tiles_opts to;
    TS_CHECK(ts_tiles_opts_init(&to));
    if (!ts_env_raw("TESSERA_TILES_CPU")) to.cpu_share = 0; // the host factors panels meanwhile
    // No saved copies of C tiles: with k = NB the copy would cost more than the tile's GEMM (it
    // ran at ~5 GB/s on the worker thread, 16 s per iteration at N = 98304). A device failure then
    // ends the run with an error (the residual check would catch a torn tile anyway).
    if (!ts_env_raw("TESSERA_TILES_SAVE_C")) to.save_c = 0;
    TS_CHECK(ts_engine_parse(s->ctx->opts.engine ? s->ctx->opts.engine : "auto", &to.engine));
    if (to.engine == TS_ENGINE_TILES) to.engine = TS_ENGINE_AUTO;
    if (s->panel_dev) {
        // before the tile runtime, whose cache takes what is left of the device memory
        ts_device *dev = s->ctx->dev;
        TS_CHECK(ts_stream_create_prio(dev, 1, &o->pst));
        TS_CHECK(ts_dmalloc(dev, sizeof(double) * (size_t)s->mp * (size_t)s->NB, (void **)&o->dpan));
        TS_CHECK(ts_dmalloc(dev, sizeof(int) * (size_t)(s->NB + 1), (void **)&o->dpiv));
        if (s->panel_kind == TS_HPL_PANEL_TESSERA) TS_CHECK(ts_lu_panel_create(o->pst, to.engine, s->mp, &o->panel));
        else TS_CHECK(ts_lu_solver_create(o->pst, s->mp, s->NB, &o->solver));
    }
    TS_CHECK(ts_tiles_create(o->set, &to, &o->rt));
    for (int i = 0; i < TS_HPL_NSTREAM; i++) {
        o->start[i].s = s;
        o->start[i].id = i;
        if (pthread_create(&o->st[i].th, NULL, worker, &o->start[i]) != 0)
            TS_RAISE(TS_ERR_NOMEM, "hpl: cannot start host stream %d", i);
        o->st[i].started = 1;
    }
    snprintf(s->r->engine_used, sizeof s->r->engine_used, "tiles");
    return 0;
}

// Host memory, page-locked through the device layer's registry so that the tile runtime's copies
// run at the link's speed (its own registrations of sub-ranges then cost nothing).
static int x_malloc(ts_hpl_state *s, size_t bytes, void **p) {
    xooc *o = O(s);
    *p = NULL;
    if (bytes == 0) bytes = 64;
    if (posix_memalign(p, 4096, bytes) != 0 || !*p)
        TS_RAISE(TS_ERR_NOMEM, "cannot allocate %zu bytes of host memory", bytes);
    for (int i = 0; i < MAXPIN; i++) {
        if (o->pin[i].ptr) continue;
        if (ts_host_pin(o->set, *p, bytes, &o->pin[i].handle) == 0) o->pin[i].ptr = *p;
        else {
            TS_LOG_W("hpl (out-of-core): cannot pin %zu bytes (%s); copies run from pageable memory",
                     bytes, ts_error_string());
            ts_error_clear();
        }
        break;
    }
    return 0;
}
static void x_free(ts_hpl_state *s, void *p) {
    xooc *o = O(s);
    if (!p) return;
    for (int i = 0; o && i < MAXPIN; i++)
        if (o->pin[i].ptr == p) {
            ts_tiles_unpin(o->rt, p, 1);
            ts_host_unpin(o->set, o->pin[i].handle);
            o->pin[i].ptr = NULL;
        }
    free(p);
}

// ---- operations ----

static int op_copy2d(ts_hpl_state *s, hop *o) {
    ts_hpl_host_copy2d(o->p[0], o->i[0], o->p[1], o->i[1], o->i[2], o->i[3]);
    return 0;
}
static int copy_op(ts_hpl_state *s, int st, double *dst, int64_t ldd, const double *src, int64_t lds,
                   int64_t m, int64_t n) {
    if (m <= 0 || n <= 0) return 0;
    hop op = {.fn = op_copy2d, .p = {dst, (void *)src}, .i = {ldd, lds, m, n}};
    return enqueue(s, st, &op);
}
static int x_to_host(ts_hpl_state *s, int st, double *h, int64_t ldh, const double *x, int64_t ldx,
                     int64_t m, int64_t n) {
    return copy_op(s, st, h, ldh, x, ldx, m, n);
}
static int x_to_x(ts_hpl_state *s, int st, double *x, int64_t ldx, const double *h, int64_t ldh,
                  int64_t m, int64_t n) {
    return copy_op(s, st, x, ldx, h, ldh, m, n);
}
static int x_x_copy(ts_hpl_state *s, int st, double *d, int64_t ldd, const double *src, int64_t lds,
                    int64_t m, int64_t n) {
    return copy_op(s, st, d, ldd, src, lds, m, n);
}
static int op_bytes(ts_hpl_state *s, hop *o) {
    if (o->p[0] != o->p[1]) memmove(o->p[0], o->p[1], (size_t)o->i[0]);
    return 0;
}
static int x_bytes(ts_hpl_state *s, int st, void *x, const void *h, size_t bytes) {
    if (!bytes) return 0;
    hop op = {.fn = op_bytes, .p = {x, (void *)h}, .i = {(int64_t)bytes}};
    return enqueue(s, st, &op);
}
static int x_bytes_h(ts_hpl_state *s, int st, void *h, const void *x, size_t bytes) {
    return x_bytes(s, st, h, x, bytes);
}

// Row gather/scatter between the column-major matrix and a row-major buffer (nc columns per row),
// over the column range [c0, c1), 32 columns at a time so both sides stay in cache. Large ranges
// are split by columns over threads: on the host these strided copies are the slow part of a swap.
typedef struct {
    int unpack;
    const double *src;
    double *dst;
    int64_t lda, n, nc, c0, c1;
    const int64_t *idx, *aidx; // pack: rows idx of A; unpack: buffer rows idx -> A rows aidx
} rowjob;

static void rows_run(const rowjob *j) {
    const int64_t CB = 32;
    for (int64_t b0 = j->c0; b0 < j->c1; b0 += CB) {
        int64_t b1 = b0 + CB < j->c1 ? b0 + CB : j->c1;
        for (int64_t i = 0; i < j->n; i++) {
            if (!j->unpack) {
                const double *a = j->src + j->idx[i];
                double *b = j->dst + i * j->nc;
                for (int64_t c = b0; c < b1; c++) b[c] = a[c * j->lda];
            } else {
                const double *b = j->src + j->idx[i] * j->nc;
                double *a = j->dst + j->aidx[i];
                for (int64_t c = b0; c < b1; c++) a[c * j->lda] = b[c];
            }
        }
    }
}
static void *rows_thread(void *arg) {
    rows_run(arg);
    return NULL;
}
static int rows_par(rowjob j, int host_panel) {
    enum { MAXT = 32 };
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    // with the panel on the host, the other half of the cores factors the next panel meanwhile;
    // with the panel on the device, the swaps take them all (strided row copies: latency-bound)
    int nt = !host_panel ? (int)ncpu : ncpu > 2 ? (int)(ncpu / 2) : 1;
    int e = 0;
    if (ts_env_int("TESSERA_HPL_OOC_THREADS", &e) == 1 && e >= 1) nt = e;
    if (nt > MAXT) nt = MAXT;
    if (nt < 1) nt = 1;
    if ((double)j.n * (double)j.nc < (double)(1 << 20) || nt == 1 || j.nc < 64 * nt) {
        j.c0 = 0, j.c1 = j.nc;
        rows_run(&j);
        return 0;
    }
    pthread_t th[MAXT];
    rowjob part[MAXT];
    int started[MAXT] = {0};
    for (int t = 0; t < nt; t++) {
        part[t] = j;
        part[t].c0 = j.nc * t / nt;
        part[t].c1 = j.nc * (t + 1) / nt;
        if (t > 0) started[t] = pthread_create(&th[t], NULL, rows_thread, &part[t]) == 0;
    }
    rows_run(&part[0]);
    for (int t = 1; t < nt; t++) {
        if (started[t]) pthread_join(th[t], NULL);
        else rows_run(&part[t]); // no thread: do it here
    }
    return 0;
}

static int op_pack(ts_hpl_state *s, hop *o) {
    rowjob j = {0, o->p[0], o->p[1], o->i[0], o->i[1], o->i[2], 0, 0, o->idx[0], NULL};
    return rows_par(j, !s->panel_dev);
}
static int x_pack(ts_hpl_state *s, int st, const double *A, int64_t lda, const int64_t *idx, int64_t n,
                  int64_t nc, double *buf) {
    if (n <= 0 || nc <= 0) return 0;
    hop op = {.fn = op_pack, .p = {(void *)A, buf}, .i = {lda, n, nc}, .idx = {idx}};
    return enqueue(s, st, &op);
}
static int op_unpack(ts_hpl_state *s, hop *o) {
    rowjob j = {1, o->p[0], o->p[1], o->i[2], o->i[0], o->i[1], 0, 0, o->idx[0], o->idx[1]};
    return rows_par(j, !s->panel_dev);
}
static int x_unpack(ts_hpl_state *s, int st, const double *buf, const int64_t *bidx, int64_t n,
                    int64_t nc, double *A, int64_t lda, const int64_t *aidx) {
    if (n <= 0 || nc <= 0) return 0;
    hop op = {.fn = op_unpack, .p = {(void *)buf, A}, .i = {n, nc, lda}, .idx = {bidx, aidx}};
    return enqueue(s, st, &op);
}

// The panel on the device: in, factored, out (A, then the pivots and info), in order on the
// panel stream, waited for by this host stream.
static int op_getrf(ts_hpl_state *s, hop *o) {
    xooc *x = O(s);
    int64_t m = o->i[0], n = o->i[1], lda = o->i[2];
    double *A = o->p[0];
    const size_t e = sizeof(double);
    TS_CHECK(ts_copy2d_async(x->pst, TS_COPY_H2D, x->dpan, (size_t)m * e, A, (size_t)lda * e, (size_t)m * e,
                             (size_t)n));
    if (x->panel) {
        const ts_hpl_case *hc = s->hc;
        ts_lu_panel_algo a = {hc->pfact, hc->rfact, hc->nbmin, hc->ndiv, s->leaf_grid};
        TS_CHECK(ts_lu_panel_factor(x->pst, x->panel, &a, m, n, x->dpan, m, x->dpiv, x->dpiv + n));
    } else {
        TS_CHECK(ts_lu_dgetrf(x->pst, x->solver, m, n, x->dpan, m, x->dpiv, x->dpiv + n));
    }
    TS_CHECK(ts_copy2d_async(x->pst, TS_COPY_D2H, A, (size_t)lda * e, x->dpan, (size_t)m * e, (size_t)m * e,
                             (size_t)n));
    TS_CHECK(ts_copy_async(x->pst, TS_COPY_D2H, o->p[1], x->dpiv, sizeof(int) * (size_t)n));
    TS_CHECK(ts_copy_async(x->pst, TS_COPY_D2H, o->p[2], x->dpiv + n, sizeof(int)));
    return ts_stream_sync(x->pst);
}
static int x_getrf(ts_hpl_state *s, int st, int64_t m, int64_t n, double *A, int64_t lda, int *ipiv, int *info) {
    if (!O(s)->pst) TS_RAISE(TS_ERR_INTERNAL, "hpl (out-of-core): device panel asked for but not set up");
    if (m <= 0 || n <= 0) return 0;
    hop op = {.fn = op_getrf, .p = {A, ipiv, info}, .i = {m, n, lda}};
    return enqueue(s, st, &op);
}

static int op_trsm(ts_hpl_state *s, hop *o) {
    return ts_hpl_xops_cpu.trsm_llnu(s, 0, o->i[0], o->i[1], o->p[0], o->i[2], o->p[1], o->i[3]);
}
static int x_trsm(ts_hpl_state *s, int st, int64_t m, int64_t n, const double *L, int64_t ldl,
                  double *B, int64_t ldb) {
    if (m <= 0 || n <= 0) return 0;
    hop op = {.fn = op_trsm, .p = {(void *)L, B}, .i = {m, n, ldl, ldb}};
    return enqueue(s, st, &op);
}

// GEMMs of at least this many flops, and at least 64 wide both ways, stream through the devices;
// smaller ones (the solve's matrix-vector products, the last panels) run on the CPU BLAS, where
// their operands are. TESSERA_HPL_OOC_MIN_FLOPS replaces both limits by its flop count (0: every
// GEMM through the tile runtime, for tests).
static int through_tiles(int64_t m, int64_t n, double flops) {
    static double lim = -1;
    static int narrow = 1;
    if (lim < 0) {
        double e = 0;
        if (ts_env_double("TESSERA_HPL_OOC_MIN_FLOPS", &e) == 1 && e >= 0) {
            lim = e;
            narrow = 0;
        } else {
            lim = 2.0 * 2048 * 2048 * 256;
        }
    }
    return flops >= lim && (!narrow || (m >= 64 && n >= 64));
}
static int op_gemm(ts_hpl_state *s, hop *o) {
    xooc *x = O(s);
    int64_t m = o->i[0], n = o->i[1], k = o->i[2];
    double alpha = o->v[0], beta = o->v[1];
    double flops = 2.0 * (double)m * (double)n * (double)k;
    if (!through_tiles(m, n, flops)) {
        x->gemms_cpu++;
        return ts_gemm_cpu('d', 'N', 'N', m, n, k, &alpha, o->p[0], o->i[3], o->p[1], o->i[4], &beta,
                           o->p[2], o->i[5]);
    }
    ts_tiles_stats st;
    int rc = ts_tiles_gemm(x->rt, 'd', 'N', 'N', m, n, k, &alpha, o->p[0], o->i[3], o->p[1], o->i[4],
                           &beta, o->p[2], o->i[5], &st);
    if (rc == 0) {
        x->gemms_tiles++;
        x->gemm_flops_tiles += flops;
        x->bytes_h2d += st.bytes_h2d;
        x->bytes_d2h += st.bytes_d2h;
    }
    return rc;
}
static int x_gemm(ts_hpl_state *s, int st, int64_t m, int64_t n, int64_t k, double alpha,
                  const double *A, int64_t lda, const double *B, int64_t ldb, double beta, double *C,
                  int64_t ldc) {
    if (m <= 0 || n <= 0) return 0;
    hop op = {.fn = op_gemm, .p = {(void *)A, (void *)B, C}, .i = {m, n, k, lda, ldb, ldc},
              .v = {alpha, beta}};
    return enqueue(s, st, &op);
}

// ---- timing stamps: the host clock when the stream reaches them ----

static int x_stamps_reset(ts_hpl_state *s, int n) {
    for (int i = 0; i < TS_HPL_NSTREAM; i++) TS_CHECK(x_sync(s, i));
    return ts_hpl_host_stamps_reset(s, n);
}
static int op_stamp(ts_hpl_state *s, hop *o) {
    s->hstamp[o->i[0]] = ts_now();
    return 0;
}
static int x_stamp(ts_hpl_state *s, int st) {
    if (s->nstamp >= s->cap_stamp) return -1;
    int id = s->nstamp++;
    hop op = {.fn = op_stamp, .i = {id}};
    return enqueue(s, st, &op) == 0 ? id : -1;
}

const ts_hpl_xops ts_hpl_xops_ooc = {
    "ooc", 1, x_init, x_fini, x_malloc, x_free, x_malloc, x_free, x_to_host, x_to_x, x_x_copy,
    x_bytes, x_bytes_h, x_getrf, x_pack, x_unpack, x_trsm, x_gemm, x_sync, x_record, x_wait, x_evsync,
    x_stamps_reset, x_stamp, ts_hpl_host_stamp_diff, NULL, NULL,
    NULL, NULL, NULL, NULL,
};

void ts_hpl_xooc_stats(ts_hpl_state *s, int64_t *gemms_tiles, int64_t *gemms_cpu, double *flops_tiles,
                       size_t *h2d, size_t *d2h) {
    xooc *o = O(s);
    *gemms_tiles = o ? o->gemms_tiles : 0;
    *gemms_cpu = o ? o->gemms_cpu : 0;
    *flops_tiles = o ? o->gemm_flops_tiles : 0;
    *h2d = o ? o->bytes_h2d : 0;
    *d2h = o ? o->bytes_d2h : 0;
}
