// ts_hpl_engine.c: the HPL engine's entry points: context, execution choice, memory sizing, one run, timings.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "algorithms/hpl/ts_hpl_env.h"
#include "algorithms/hpl/ts_hpl_internal.h"
#include "algorithms/hpl/ts_hpl_test.h"
#include "core/ts_env.h"
#include "core/ts_error.h"
#include "core/ts_log.h"
#include "core/ts_rng.h"
#include "core/ts_timer.h"
#include "kernels/ts_lu_kernels.h"

// ---- context ----

static void opts_default(ts_hpl_opts *o) {
    memset(o, 0, sizeof *o);
    o->exec = TS_HPL_EXEC_AUTO;
    o->panel_on_device = -1;
    o->seed = (int)TS_HPL_SEED;
    o->engine = "auto";
}

// Opens this rank's device (one per rank; ts_devset_open_rank).
static void open_device(ts_hpl_ctx *c) {
    ts_devset_opts o;
    if (ts_devset_opts_init(&o) < 0) {
        TS_LOG_W("hpl: device options: %s", ts_error_string());
        return;
    }
    if (ts_devset_open_rank(&o, c->local_rank, c->local_size, &c->devs, &c->dev) < 0) {
        if (c->opts.exec == TS_HPL_EXEC_DEVICE) TS_LOG_W("hpl: no device: %s", ts_error_string());
        c->devs = NULL;
        c->dev = NULL;
    }
}

int ts_hpl_ctx_create(const ts_hpl_opts *o, ts_hpl_ctx **out) {
    *out = NULL;
    ts_hpl_ctx *c = calloc(1, sizeof *c);
    if (!c) TS_RAISE(TS_ERR_NOMEM, "hpl context");
    if (o) c->opts = *o;
    else opts_default(&c->opts);
    if (!c->opts.engine) c->opts.engine = "auto";
    int rc = ts_comm_world(&c->world);
    if (rc == 0) rc = ts_comm_node_local(&c->world, &c->local_rank, &c->local_size);
    if (rc < 0) {
        free(c);
        return rc;
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int share = (int)(cores / (c->local_size > 0 ? c->local_size : 1));
    // Ranks sharing a node share its cores: the CPU BLAS gets this rank's share unless told
    if (c->local_size > 1 && !ts_env_raw("OPENBLAS_NUM_THREADS") && !ts_env_raw("OMP_NUM_THREADS"))
        ts_cpu_blas_set_threads(share > 0 ? share : 1);
    int threads = share - 1;
    if (threads > 0) {
        ts_pool_opts po = {threads, 0, NULL, 0};
        if (ts_pool_create(&po, &c->pool) < 0) c->pool = NULL;
    }
    if (c->opts.exec != TS_HPL_EXEC_CPU) open_device(c);
    int have = c->dev != NULL;
    ts_comm_allreduce_i(&c->world, &have, 1, TS_COMM_MIN);
    c->dev_ok = have;
    *out = c;
    return 0;
}

void ts_hpl_ctx_destroy(ts_hpl_ctx *c) {
    if (!c) return;
    if (c->devs) ts_devset_close(c->devs);
    if (c->pool) ts_pool_destroy(c->pool);
    ts_comm_free(&c->world);
    free(c);
}

int ts_hpl_ctx_rank(const ts_hpl_ctx *c) { return c->world.rank; }
int ts_hpl_ctx_size(const ts_hpl_ctx *c) { return c->world.size; }
ts_devset *ts_hpl_ctx_devset(ts_hpl_ctx *c) { return c->devs; }

// ---- memory ----

// Rows of the gathered panel's staging (P > 1): on the diagonal block's owner the other process
// rows' parts (at most N - mp rows), elsewhere this rank's part (at most mp).
static int64_t gather_stage_rows(int64_t N, int64_t mp) { return N - mp > mp ? N - mp : mp; }

typedef struct {
    size_t xmem;   // execution memory (device memory on the device path)
    size_t host;   // host memory besides it
    size_t A;      // the largest single execution allocation (the local matrix)
} mem_need;

static mem_need need_for(int64_t mp, int64_t nq, int64_t N, int64_t NB, int device, int depth) {
    mem_need m;
    size_t d = sizeof(double);
    size_t A = (size_t)ts_hpl_pad_ld(mp) * (size_t)(nq > 0 ? nq : 1) * d, At = (size_t)ts_hpl_pad_ld(nq) * (size_t)mp * d;
    if (At > A) A = At; // the transposed layout's padding
    size_t U = (size_t)(NB * (ts_hpl_pad_ld(nq) + 2)) * d;
    size_t scr = (size_t)(2 * NB * (nq + 16) + 2 * NB * (NB + 16) + 4 * NB) * d;
    // the panel buffers (d + 1 for lookahead depth d, at least 2), each with its inv(L11) (and its
    // transpose in the transposed layout), and the identity (trsm_inv)
    size_t nbuf = (size_t)ts_hpl_nbuf(depth);
    size_t pan = nbuf * ((size_t)((mp + NB) * NB + NB + 1) * d + (size_t)(8 * NB) * sizeof(int64_t)) +
                 (2 * nbuf + 1) * (size_t)(NB * NB) * d;
    size_t stage = 2 * (size_t)(2 * NB * (nq + 16) + 2 * NB * (NB + 16) + 4 * NB) * d;
    m.A = A;
    if (device) {
        m.xmem = A + U + scr + pan + (size_t)(mp + 1) * d;
        if (mp < N) // several process rows: gathered panels and their staging
            m.xmem += (size_t)((N + gather_stage_rows(N, mp)) * NB + NB * NB) * d;
        m.host = pan + stage + (size_t)N * d + (128 << 20); // + generation staging
    } else {
        m.xmem = A + U + scr + pan + (size_t)(mp + 1) * d;
        m.host = stage + (size_t)N * d;
    }
    return m;
}

size_t ts_hpl_host_available(void) {
    FILE *f = fopen("/proc/meminfo", "r");
    size_t kb = 0;
    if (f) {
        char line[256];
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "MemAvailable: %zu kB", &kb) == 1) break;
        fclose(f);
    }
    if (kb) return kb * 1024;
    long pages = sysconf(_SC_AVPHYS_PAGES), ps = sysconf(_SC_PAGESIZE);
    return pages > 0 && ps > 0 ? (size_t)pages * (size_t)ps : 0;
}

// Bytes available to this rank: (execution memory, largest block, host memory).
static void available(ts_hpl_ctx *c, int device, size_t *xmem, size_t *largest, size_t *host) {
    int ls = c->local_size > 0 ? c->local_size : 1;
    *host = ts_hpl_host_available() / (size_t)ls;
    if (device && c->dev) {
        size_t used = 0, fr = 0, lg = 0;
        ts_dmem_info(c->dev, &used, &fr, &lg);
        *xmem = fr;
        *largest = lg;
    } else {
        *xmem = *host;
        *largest = *host;
    }
}

static int fits(mem_need m, size_t xmem, size_t largest, size_t host, int device, double fraction) {
    if (device)
        return (double)m.xmem <= fraction * (double)xmem && m.A <= largest &&
               (double)m.host <= 0.95 * (double)host;
    return (double)(m.xmem + m.host) <= fraction * (double)host;
}

static int64_t max_n_local(ts_hpl_ctx *c, int P, int Q, int NB, double fraction, int device, int depth) {
    size_t xmem, largest, host;
    available(c, device, &xmem, &largest, &host);
    if (xmem == 0 || host == 0) return -1;
    int64_t lo = 0, hi = 1;
    // the rank (0, 0) holds the most
    while (hi < ((int64_t)1 << 40)) {
        mem_need m = need_for(ts_hpl_numroc(hi, NB, 0, P), ts_hpl_numroc(hi + 1, NB, 0, Q), hi, NB, device, depth);
        if (!fits(m, xmem, largest, host, device, fraction)) break;
        lo = hi;
        hi *= 2;
    }
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        mem_need m = need_for(ts_hpl_numroc(mid, NB, 0, P), ts_hpl_numroc(mid + 1, NB, 0, Q), mid, NB, device, depth);
        if (fits(m, xmem, largest, host, device, fraction)) lo = mid;
        else hi = mid;
    }
    return lo - lo % NB;
}

static int exec_device(const ts_hpl_ctx *c) {
    return c->opts.exec == TS_HPL_EXEC_DEVICE || (c->opts.exec == TS_HPL_EXEC_AUTO && c->dev_ok);
}

int64_t ts_hpl_max_n(ts_hpl_ctx *c, int P, int Q, int NB, int depth, double fraction) {
    if (P < 1 || Q < 1 || NB < 1 || depth < 0 || !(fraction > 0)) return -1;
    int64_t n = max_n_local(c, P, Q, NB, fraction, exec_device(c) && c->dev_ok, depth);
    double v = (double)n;
    ts_comm_allreduce_d(&c->world, &v, 1, TS_COMM_MIN);
    return (int64_t)v;
}

// ---- one run ----

static void stamp(char out[32]) {
    time_t t = time(NULL);
    struct tm tmv;
    localtime_r(&t, &tmv);
    if (strftime(out, 32, "%a %b %e %H:%M:%S %Y", &tmv) == 0) out[0] = 0;
}

static const char *case_problem(const ts_hpl_case *hc, int size) {
    static __thread char msg[160];
    if (hc->N < 0) return "N < 0";
    if (hc->NB < 1) return "NB < 1";
    if (hc->NB > TS_HPL_MAX_NB) return "NB too large (at most 8192)";
    if (hc->P < 1 || hc->Q < 1) return "P and Q must be positive";
    if ((int64_t)hc->P * hc->Q > size) {
        snprintf(msg, sizeof msg, "the %d x %d grid needs %d processes, %d given", hc->P, hc->Q,
                 hc->P * hc->Q, size);
        return msg;
    }
    if (hc->pfact < 0 || hc->pfact > 2) return "PFACT must be 0, 1 or 2";
    if (hc->rfact < 0 || hc->rfact > 2) return "RFACT must be 0, 1 or 2";
    if (hc->nbmin < 1) return "NBMIN < 1";
    if (hc->ndiv < 2) return "NDIV < 2";
    if (hc->bcast < 0 || hc->bcast > 5) return "BCAST must be 0..5";
    if (hc->depth < 0) return "DEPTH < 0";
    if (hc->depth > TS_HPL_MAX_DEPTH) {
        snprintf(msg, sizeof msg, "DEPTH %d: the lookahead depth here is 0..%d", hc->depth, TS_HPL_MAX_DEPTH);
        return msg;
    }
    if (hc->swap < 0 || hc->swap > 2) return "SWAP must be 0, 1 or 2";
    return NULL;
}

static void state_free(ts_hpl_state *s) {
    const ts_hpl_xops *x = s->x;
    if (!x) return;
    for (int b = 0; b < TS_HPL_NPANBUF; b++) {
        ts_hpl_panel *p = &s->pan[b];
        if (p->buf) x->hfree(s, p->buf);
        free(p->plan);
        free(p->cnt);
        if (x->is_device) {
            if (p->xbuf) x->xfree(s, p->xbuf);
            if (p->xpiv) x->xfree(s, p->xpiv);
            if (p->hpiv) x->hfree(s, p->hpiv);
            if (p->xplan) x->xfree(s, p->xplan);
        }
    }
    for (int st = 0; st < TS_HPL_NSTREAM; st++) {
        if (s->xscr[st]) x->xfree(s, s->xscr[st]);
        if (s->hsend[st]) x->hfree(s, s->hsend[st]);
        if (s->hrecv[st]) x->hfree(s, s->hrecv[st]);
    }
    if (s->xgat) x->xfree(s, s->xgat);
    if (s->xgst) x->xfree(s, s->xgst);
    s->xgat = s->xgst = NULL;
    for (int b = 0; b < TS_HPL_NPANBUF; b++)
        if (s->pan[b].xlinv) x->xfree(s, s->pan[b].xlinv), s->pan[b].xlinv = NULL;
    if (s->xident) x->xfree(s, s->xident);
    s->xident = NULL;
    if (s->U) x->xfree(s, s->U);
    if (s->A) x->xfree(s, s->A);
    free(s->xsol);
    x->fini(s);
}

static int state_alloc(ts_hpl_state *s) {
    const ts_hpl_xops *x = s->x;
    int64_t NB = s->NB, mp = s->mp, nq = s->nq;
    int rc = x->init(s);
    if (rc) return rc;
    // U = inv(L11) A12 by a GEMM (the default on devices, where DTRSM with many right-hand sides ran
    // at ~2 TFLOP/s and took 8-21% of the update; bench/NOTES.md) or by DTRSM (the default elsewhere)
    // (fold, asked for: inv(L11) goes into L instead where the path has it, below)
    int umode = x == &ts_hpl_xops_dev ? 1 : 0;
    TS_CHECK(ts_hpl_env_trsm(&umode));
    s->trsm_inv = umode >= 1;
    // One process row's swaps in one pass where the backend has it (devices: the split pack and
    // unpacks moved each scattered pivot row's sectors three times; bench/NOTES.md)
    s->swap_fused = x->swap_rows != NULL;
    TS_CHECK(ts_hpl_env_swap(&s->swap_fused));
    if (s->swap_fused && !x->swap_rows) s->swap_fused = 0; // fused is the device path's: split elsewhere
    // [A|b] transposed (row swaps as streaming copies instead of one 32-byte sector per element;
    // bench/notes/hpl.md) where the path has it: panels factored on the device (one process row) or
    // gathered on one (several), U by the GEMM with inv(L11), one process row's swaps in one pass.
    // On four H200s: 1 x 4 49.79 TFLOP/s a GPU against 47.15 column-major (call 60); 2 x 2 47.25
    // against 45.58 (call 62)
    int want_t = TS_HPL_TRANS_DEFAULT, asked_t = ts_env_str("TESSERA_HPL_LAYOUT") != NULL;
    TS_CHECK(ts_hpl_env_layout(&want_t));
    // Several process rows: the same where panels are gathered on a device (tentatively here: the
    // column's device exchange is known after the allocation; run_grid stores [A|b] column-major
    // again when it is missing)
    int path_t = s->P == 1 ? s->panel_dev && s->swap_fused : s->gather_wanted && x->copy_cols != NULL;
    s->trans = want_t && x->swap_rows_t && x->transpose && x->gemm_nt && path_t && s->trsm_inv;
    if (want_t && asked_t && !s->trans && s->grid.rank == 0)
        TS_LOG_W("hpl: TESSERA_HPL_LAYOUT=row needs the device path with the device panel (several process rows: "
                 "gathered), U by the GEMM (TESSERA_HPL_TRSM=inverse) and, on one process row, one-pass swaps "
                 "(TESSERA_HPL_SWAP=fused): column-major");
    // inv(L11) folded into L on the transposed path: L21 inv(L11) formed with the panel on stream 1,
    // U kept as the swapped rows U0 = L11 U, so that no GEMM stands between the swaps and the update.
    // Off by default: the same flops moved to the panel's stream gained nothing on an H200
    // (bench/notes/hpl.md, "inv(L11) folded into L")
    s->fold = umode == 2 && s->trans && s->P == 1 && s->Q == 1 && x->gemm_nt; // (other ranks read L21 as sent)
    if (umode == 2 && !s->fold && s->grid.rank == 0)
        TS_LOG_W("hpl: TESSERA_HPL_TRSM=fold needs the transposed layout on one process (1 x 1; TESSERA_HPL_LAYOUT=row and its path): "
                 "U by the GEMM with inv(L11)");
    s->lda = ts_hpl_pad_ld(s->trans ? nq : mp);
    s->ldut = ts_hpl_pad_ld(nq); // (U^T, transposed layout: aligned columns for the GEMMs that read it)
    int64_t ncols = s->trans ? mp : nq; // of the stored matrix
    TS_CHECK(x->xmalloc(s, (size_t)s->lda * (size_t)(ncols > 0 ? ncols : 1) * sizeof(double), (void **)&s->A));
    TS_CHECK(x->xmalloc(s, (size_t)(NB * (s->ldut + 2)) * sizeof(double), (void **)&s->U));
    int nst = x->is_device ? 2 : 1;
    for (int st = 0; st < nst; st++) {
        s->scr_cols[st] = (st == 0 ? nq : NB) + 16; // (room for U^T with a padded ld, form_u)
        size_t n = (size_t)(2 * NB * s->scr_cols[st] + 2 * NB) * sizeof(double);
        TS_CHECK(x->xmalloc(s, n, (void **)&s->xscr[st]));
        TS_CHECK(x->halloc(s, n, (void **)&s->hsend[st]));
        TS_CHECK(x->halloc(s, n, (void **)&s->hrecv[st]));
    }
    if (!x->is_device) s->xscr[1] = NULL;
    s->depth = s->hc->depth;
    s->nbuf = ts_hpl_nbuf(s->depth);
    for (int b = 0; b < s->nbuf; b++) {
        ts_hpl_panel *p = &s->pan[b];
        p->cap = (size_t)((mp + NB) * NB + NB + 1);
        TS_CHECK(x->halloc(s, p->cap * sizeof(double), (void **)&p->buf));
        p->plan = malloc(sizeof(int64_t) * (size_t)(8 * NB));
        p->cnt = malloc(sizeof(int64_t) * (size_t)(4 * s->P + NB + 1));
        if (!p->plan || !p->cnt) TS_RAISE(TS_ERR_NOMEM, "panel plan");
        p->dsp = p->cnt + s->P;
        p->rcnt = p->dsp + s->P;
        p->rdsp = p->rcnt + s->P;
        p->back = p->rdsp + s->P;
        if (x->is_device) {
            TS_CHECK(x->xmalloc(s, (size_t)((mp + NB) * NB) * sizeof(double), (void **)&p->xbuf));
            TS_CHECK(x->xmalloc(s, (size_t)(NB + 1) * sizeof(int), (void **)&p->xpiv));
            TS_CHECK(x->halloc(s, (size_t)(NB + 1) * sizeof(int), (void **)&p->hpiv));
            TS_CHECK(x->xmalloc(s, sizeof(int64_t) * (size_t)(8 * NB), (void **)&p->xplan));
        }
    }
    if (s->trsm_inv) {
        size_t nn = (size_t)(NB * NB);
        double *id = calloc(nn, sizeof(double));
        if (!id) TS_RAISE(TS_ERR_NOMEM, "identity of order NB");
        for (int64_t i = 0; i < NB; i++) id[i + i * NB] = 1.0;
        int rc2 = x->xmalloc(s, nn * sizeof(double), (void **)&s->xident);
        if (rc2 == 0) rc2 = x->to_x(s, 0, s->xident, NB, id, NB, NB, NB);
        if (rc2 == 0) rc2 = x->sync(s, 0);
        free(id);
        TS_CHECK(rc2);
        // (transposed layout: inv(L11)^T beside it, so that U^T's GEMM reads both operands as they are)
        for (int b = 0; b < s->nbuf; b++)
            TS_CHECK(x->xmalloc(s, (s->trans ? 2 : 1) * nn * sizeof(double), (void **)&s->pan[b].xlinv));
    }
    s->xsol = calloc((size_t)(s->N + 1), sizeof(double));
    if (!s->xsol) TS_RAISE(TS_ERR_NOMEM, "solution vector");
    return 0;
}

// [A|b] stored column-major after all (several process rows whose panels cannot be gathered on a
// device: the host panel's path has no transposed layout); the matrix is not generated yet.
static int layout_col(ts_hpl_state *s) {
    s->trans = 0;
    s->x->xfree(s, s->A);
    s->A = NULL;
    s->lda = ts_hpl_pad_ld(s->mp);
    if (s->grid.rank == 0 && ts_env_str("TESSERA_HPL_LAYOUT") != NULL)
        TS_LOG_W("hpl: TESSERA_HPL_LAYOUT=row with several process rows needs the panels gathered on a device: column-major");
    return s->x->xmalloc(s, (size_t)s->lda * (size_t)(s->nq > 0 ? s->nq : 1) * sizeof(double), (void **)&s->A);
}

// Every rank of `c` learns the first failure (the most negative status); returns it.
static int agree(const ts_comm *c, int rc) {
    int v = rc;
    if (ts_comm_allreduce_i(c, &v, 1, TS_COMM_MIN) < 0) return TS_ERR_MPI;
    if (v < 0 && rc == 0) TS_RAISE(v, "hpl: another rank failed (%s)", ts_status_name(v));
    return v;
}

static void skip(ts_hpl_result *r, const char *why) {
    r->skipped = 1;
    snprintf(r->why, sizeof r->why, "%s", why);
}

// Whether the case fits this rank's memory, agreed by the grid; when not, the result is skipped
// with the largest N that fits.
static int check_memory(ts_hpl_ctx *c, ts_hpl_result *r, ts_hpl_state *s, int dev, int *ok) {
    size_t xmem, largest, host;
    double frac = dev ? 0.98 : 0.95;
    available(c, dev, &xmem, &largest, &host);
    mem_need m = need_for(s->mp, s->nq, s->N, s->NB, dev, s->hc->depth);
    *ok = fits(m, xmem, largest, host, dev, frac);
    TS_CHECK(ts_comm_allreduce_i(&s->grid, ok, 1, TS_COMM_MIN));
    if (!*ok) {
        double v = (double)max_n_local(c, s->P, s->Q, (int)s->NB, frac, dev, s->hc->depth);
        TS_CHECK(ts_comm_allreduce_d(&s->grid, &v, 1, TS_COMM_MIN));
        char why[256];
        snprintf(why, sizeof why,
                 "N=%lld does not fit in %s memory (%.2f GiB needed by a rank); the largest N that "
                 "fits is %lld", (long long)s->N, dev ? "device" : "host",
                 (double)(dev ? m.xmem : m.xmem + m.host) / (double)(1 << 30), (long long)v);
        skip(r, why);
    }
    return 0;
}

// Allocation of the run state, agreed by the grid: 1 when memory ran out (the result is skipped).
static int alloc_agreed(ts_hpl_ctx *c, ts_hpl_result *r, ts_hpl_state *s, int *short_of_memory) {
    (void)c;
    *short_of_memory = 0;
    int rc = state_alloc(s);
    if (rc == TS_ERR_NOMEM || rc == TS_ERR_DEVMEM) { // memory taken by someone else meanwhile
        int v = rc;
        TS_CHECK(ts_comm_allreduce_i(&s->grid, &v, 1, TS_COMM_MIN));
    }
    rc = agree(&s->grid, rc);
    if (rc == TS_ERR_NOMEM || rc == TS_ERR_DEVMEM) {
        skip(r, "Memory allocation failed for A, x and b. Skip.");
        ts_error_clear();
        *short_of_memory = 1;
        return 0;
    }
    return rc;
}

// The panel engine the options ask for (asked: named explicitly, by option or environment).
// Explicit options first, then TESSERA_HPL_PANEL, then the default: cuSOLVER on CUDA devices, the
// host elsewhere. Whether it can run (device path, P = 1) is the caller's check.
static ts_hpl_panel_engine panel_choice(const ts_hpl_ctx *c, int dev, int *asked) {
    ts_hpl_panel_engine pe = c->opts.panel;
    int pd = c->opts.panel_on_device;
    *asked = 1;
    if (pe != TS_HPL_PANEL_AUTO) return pe;
    if (pd == 0) return TS_HPL_PANEL_CPU;
    if (pd == 1) return TS_HPL_PANEL_CUSOLVER;
    const char *env = ts_env_str("TESSERA_HPL_PANEL");
    if (env && *env) {
        if (!strcmp(env, "tessera")) return TS_HPL_PANEL_TESSERA;
        if (!strcmp(env, "cusolver")) return TS_HPL_PANEL_CUSOLVER;
        if (!strcmp(env, "cpu")) return TS_HPL_PANEL_CPU;
        if (!strcmp(env, "hybrid")) return TS_HPL_PANEL_HYBRID;
        if (c->world.rank == 0)
            TS_LOG_W("hpl: TESSERA_HPL_PANEL='%s' is not one of tessera, cusolver, hybrid, cpu: ignored", env);
    }
    *asked = 0;
    return dev && c->devs && ts_devset_backend(c->devs) == TS_BACKEND_CUDA ? TS_HPL_PANEL_HYBRID
                                                                          : TS_HPL_PANEL_CPU;
}

static const char *getrf_name(void) {
    int alg = TS_LU_GETRF_LEGACY;
    if (ts_lu_env_getrf(&alg) != 0) alg = TS_LU_GETRF_LEGACY; // (checked before the run)
    return alg == TS_LU_GETRF_X1 ? "xgetrf-alg1" : alg == TS_LU_GETRF_X0 ? "xgetrf" : "dgetrf";
}

static const char *panel_name(const ts_hpl_state *s) {
    switch (s->panel_kind) {
    case TS_HPL_PANEL_TESSERA: return "tessera";
    case TS_HPL_PANEL_HYBRID: return "hybrid";
    case TS_HPL_PANEL_CUSOLVER:
        return ts_devset_backend(s->ctx->devs) == TS_BACKEND_CUDA ? "cusolver" : "getrf-sim";
    default: return "host";
    }
}

// The case on the ranks of the grid. Returns 0 or an agreed failure.
static int run_grid(ts_hpl_ctx *c, const ts_hpl_case *hc, ts_hpl_result *r, ts_hpl_state *s) {
    int dev = exec_device(c);
    int ooc = c->opts.exec == TS_HPL_EXEC_OOC;
    if ((dev || ooc) && !c->dev_ok) {
        skip(r, ooc ? "out-of-core execution needs a device on every rank (TESSERA_SIM_DEVICES for "
                      "simulated ones)"
                    : "the device path needs a device on every rank (TESSERA_SIM_DEVICES for simulated ones)");
        return 0;
    }
    // out-of-core: the matrix is sized and held in host memory (dev stays 0 for the sizing)
    s->x = ooc ? &ts_hpl_xops_ooc : dev ? &ts_hpl_xops_dev : &ts_hpl_xops_cpu;
    int ok = 0;
    TS_CHECK(check_memory(c, r, s, dev, &ok));
    if (!ok) return 0;
    // Panels on the device: asked for (one process row only), or by default on CUDA devices
    int asked = 0;
    s->panel_kind = panel_choice(c, dev || ooc, &asked);
    // (the settings were checked before the run; a malformed one leaves the default)
    (void)ts_lu_env_leaf_grid(&s->leaf_grid);
    if (s->panel_kind == TS_HPL_PANEL_HYBRID) {
        // our panel where it was measured to pay: the device path, one process row or the gathered
        // panels of several (their tail 48 NB rows); the out-of-core path takes cuSOLVER's
        if (!dev || ooc) {
            if (asked && (dev || ooc) && s->grid.rank == 0)
                TS_LOG_W("hpl: the hybrid panel runs on the device path (one process row, or the gathered "
                         "panels of several): cuSOLVER's panel instead");
            s->panel_kind = TS_HPL_PANEL_CUSOLVER;
        }
        if (!s->leaf_grid) s->leaf_grid = TS_HPL_HYBRID_LEAF_GRID;
        s->panel_tail = (s->P > 1 ? TS_HPL_HYBRID_TAIL_NB_GATHER : TS_HPL_HYBRID_TAIL_NB) * s->NB;
        (void)ts_hpl_env_panel_tail(&s->panel_tail);
    }
    s->panel_dev = s->panel_kind != TS_HPL_PANEL_CPU && (dev || ooc) && s->x->getrf && s->P == 1;
    // several process rows: the device panel gathered on one device (decided once the column's
    // device communicators are known, below)
    int want_gather = s->panel_kind != TS_HPL_PANEL_CPU && dev && !ooc && s->x->getrf && s->P > 1;
    s->gather_wanted = want_gather;
    s->panel_gather = 0;
    if (!s->panel_dev && !want_gather) {
        if (asked && s->panel_kind != TS_HPL_PANEL_CPU && s->grid.rank == 0)
            TS_LOG_W("hpl: panels are factored on the host: the device panel needs P = 1 and the device or "
                     "out-of-core path");
        s->panel_kind = TS_HPL_PANEL_CPU;
    }
    int short_mem = 0;
    TS_CHECK(alloc_agreed(c, r, s, &short_mem));
    if (short_mem) return 0;
    if (dev && !ooc) TS_CHECK(agree(&s->grid, ts_hpl_xdev_col_setup(s)));
    if (want_gather) {
        size_t n = (size_t)(s->N * s->NB + s->NB * s->NB) * sizeof(double);
        int ok = s->nccl_col != 0 && s->x->xmalloc(s, n, (void **)&s->xgat) == 0 &&
                 s->x->xmalloc(s, (size_t)(gather_stage_rows(s->N, s->mp) * s->NB) * sizeof(double),
                               (void **)&s->xgst) == 0;
        ts_error_clear();
        TS_CHECK(ts_comm_allreduce_i(&s->grid, &ok, 1, TS_COMM_MIN));
        if (ok) {
            s->panel_gather = 1;
        } else {
            if (s->xgat) s->x->xfree(s, s->xgat);
            if (s->xgst) s->x->xfree(s, s->xgst);
            s->xgat = s->xgst = NULL;
            if (asked && s->grid.rank == 0)
                TS_LOG_W("hpl: panels are factored on the host: with several process rows the device panel "
                         "needs device-to-device transfers along the column (NCCL) and room for the gathered panel");
            s->panel_kind = TS_HPL_PANEL_CPU;
            if (s->trans) TS_CHECK(agree(&s->grid, layout_col(s)));
        }
    }
    // the panel broadcast along the rows device to device, where the panel is factored on a device
    // (one process row, or gathered along the column)
    if (dev && !ooc) TS_CHECK(agree(&s->grid, ts_hpl_xdev_nccl_setup(s)));
    int rc;
    snprintf(r->exec_used, sizeof r->exec_used, "%s",
             ooc ? "ooc" : dev ? (ts_devset_backend(c->devs) == TS_BACKEND_CUDA ? "device:cuda" : "device:sim") : "cpu");
    if (!dev && !ooc) snprintf(r->engine_used, sizeof r->engine_used, "cpu");
    TS_CHECK(agree(&s->grid, ts_hpl_matgen(s)));

    // the timed part: factorization and back substitution (HPL_pdgesv)
    TS_CHECK(ts_comm_barrier(&s->grid));
    stamp(r->start_time);
    double t0 = ts_now();
    rc = ts_hpl_lu(s);
    TS_CHECK(agree(&s->grid, rc));
    int info = s->info;
    TS_CHECK(ts_comm_allreduce_i(&s->grid, &info, 1, TS_COMM_MAX)); // every rank saw the same panels
    r->info = info;
    double ts0 = ts_now();
    if (info == 0) TS_CHECK(agree(&s->grid, ts_hpl_solve(s)));
    double t1 = ts_now();
    stamp(r->end_time);
    double tt[2] = {t1 - t0, t1 - ts0};
    TS_CHECK(ts_comm_allreduce_d(&s->grid, tt, 2, TS_COMM_MAX));
    r->time = tt[0];
    r->t_solve = tt[1];
    double n = (double)s->N;
    r->gflops = r->time > 0 ? (2.0 / 3.0 * n * n * n + 1.5 * n * n) / r->time / 1e9 : 0.0;
    r->panel_high = dev && s->panel_prio;
    if (ooc) {
        size_t h2d, d2h;
        ts_hpl_xooc_stats(s, &r->ooc_gemms_tiles, &r->ooc_gemms_cpu, &r->ooc_flops_tiles, &h2d, &d2h);
        r->ooc_bytes_h2d = (double)h2d;
        r->ooc_bytes_d2h = (double)d2h;
    }
    r->t_fact = s->t_fact;
    r->t_bcast = s->t_bcast;
    r->t_swap = s->t_swap;
    r->t_update = s->t_update;
    snprintf(r->panel_used, sizeof r->panel_used, "%s", panel_name(s));
    int uses_getrf = (s->panel_kind == TS_HPL_PANEL_CUSOLVER || s->panel_kind == TS_HPL_PANEL_HYBRID) &&
                     ts_devset_backend(c->devs) == TS_BACKEND_CUDA;
    snprintf(r->getrf, sizeof r->getrf, "%s", uses_getrf ? getrf_name() : "");
    r->leaf_grid = s->leaf_grid;
    r->panel_tail = s->panel_tail;
    r->panels_own = s->panels_own;
    snprintf(r->u_solve, sizeof r->u_solve, "%s", s->fold ? "folded" : s->trsm_inv ? "inverse" : "trsm");
    snprintf(r->layout, sizeof r->layout, "%s", s->trans ? "row" : "col");
    r->depth = s->depth;
    snprintf(r->bcast_used, sizeof r->bcast_used, "%s", s->Q == 1 ? "none" : s->nccl ? "nccl" : s->bcast_used);
    snprintf(r->swap_used, sizeof r->swap_used, "%s",
             s->P == 1 ? (s->swap_used[0] ? s->swap_used : "local") : s->nccl_col == 1 ? "nccl" : s->nccl_col ? "devexch-emul" : hc->swap == 2 ? "mix" : hc->swap == 0 ? "binexch" : "long");
    if (info != 0) return 0; // HPL: "Error code returned by solve is %d, skip"
    if (c->x_hook) c->x_hook(s->xsol, s->N, c->x_hook_arg);
    if (hc->threshold >= 0) TS_CHECK(agree(&s->grid, ts_hpl_check(s)));
    return 0;
}

typedef int (*grid_body)(ts_hpl_ctx *c, const ts_hpl_case *hc, ts_hpl_result *r, ts_hpl_state *s);
static int run_case(ts_hpl_ctx *c, const ts_hpl_case *hc, ts_hpl_result *r, grid_body body);

int ts_hpl_run(ts_hpl_ctx *c, const ts_hpl_case *hc, ts_hpl_result *r) {
    return run_case(c, hc, r, run_grid);
}

// ---- the cuSOLVER baseline ----

// On the 1 x 1 grid: [A|b] as the HPL run generates it, one timed cusolverDnDgetrf, the solve with
// its LU, HPL's check.
static int baseline_grid(ts_hpl_ctx *c, const ts_hpl_case *hc, ts_hpl_result *r, ts_hpl_state *s) {
    s->x = &ts_hpl_xops_dev;
    s->panel_kind = TS_HPL_PANEL_CPU; // no panel engine objects: the state only holds [A|b]
    s->panel_dev = 0;
    int ok = 0;
    TS_CHECK(check_memory(c, r, s, 1, &ok));
    if (!ok) return 0;
    int short_mem = 0;
    TS_CHECK(alloc_agreed(c, r, s, &short_mem));
    if (short_mem) return 0;
    snprintf(r->exec_used, sizeof r->exec_used, "device:cuda");
    snprintf(r->engine_used, sizeof r->engine_used, "cusolver");
    snprintf(r->panel_used, sizeof r->panel_used, "cusolver");
    snprintf(r->getrf, sizeof r->getrf, "%s", getrf_name());
    TS_CHECK(agree(&s->grid, ts_hpl_matgen(s)));
    stamp(r->start_time);
    double t_fact = 0, t_solve = 0;
    int info = 0;
    TS_CHECK(agree(&s->grid, ts_hpl_xdev_getrf_solve(s, &t_fact, &t_solve, &info)));
    stamp(r->end_time);
    double n = (double)s->N;
    r->info = info;
    r->time = t_fact;
    r->t_fact = t_fact;
    r->t_solve = t_solve;
    r->gflops = t_fact > 0 ? 2.0 / 3.0 * n * n * n / t_fact / 1e9 : 0.0;
    if (info != 0) return 0;
    if (hc->threshold >= 0) TS_CHECK(agree(&s->grid, ts_hpl_check(s)));
    return 0;
}

int ts_hpl_baseline_cusolver(ts_hpl_ctx *c, const ts_hpl_case *hc, ts_hpl_result *r) {
    if (hc->P != 1 || hc->Q != 1) {
        memset(r, 0, sizeof *r);
        skip(r, "the cuSOLVER baseline runs on a 1 x 1 grid only");
        return 0;
    }
    if (!c->dev_ok || !c->devs || ts_devset_backend(c->devs) != TS_BACKEND_CUDA ||
        c->opts.exec == TS_HPL_EXEC_CPU) {
        memset(r, 0, sizeof *r);
        skip(r, "cuSOLVER needs a CUDA device (the devices here are simulated, or there are none)");
        return 0;
    }
    return run_case(c, hc, r, baseline_grid);
}

int ts_hpl_ctx_has_cuda(const ts_hpl_ctx *c) {
    return c->dev_ok && c->devs && ts_devset_backend(c->devs) == TS_BACKEND_CUDA;
}

static int run_case(ts_hpl_ctx *c, const ts_hpl_case *hc, ts_hpl_result *r, grid_body body) {
    memset(r, 0, sizeof *r);
    r->depth = hc->depth;
    snprintf(r->exec_used, sizeof r->exec_used, "none");
    snprintf(r->engine_used, sizeof r->engine_used, "none");
    const char *bad = case_problem(hc, c->world.size);
    if (bad) {
        skip(r, bad);
        return 0;
    }
    ts_hpl_state s;
    memset(&s, 0, sizeof s);
    s.ctx = c;
    s.hc = hc;
    s.r = r;
    s.N = hc->N;
    s.NB = hc->NB;
    s.P = hc->P;
    s.Q = hc->Q;
    int rc = ts_comm_grid(&c->world, hc->P, hc->Q, hc->pmap == 1, &s.grid, &s.row, &s.col, &s.myrow, &s.mycol);
    if (s.grid.rank >= 0) { // a member of the grid
        s.mp = ts_hpl_numroc(s.N, s.NB, s.myrow, s.P);
        s.nq = ts_hpl_numroc(s.N + 1, s.NB, s.mycol, s.Q);
        if (rc == 0 && s.N > 0) rc = body(c, hc, r, &s);
        else if (rc == 0) r->passed = 1;
        state_free(&s);
    }
    ts_comm_free(&s.row);
    ts_comm_free(&s.col);
    ts_comm_free(&s.grid);
    // every rank (idle ones too) gets rank 0's result and the agreed status
    int st = rc;
    ts_comm_allreduce_i(&c->world, &st, 1, TS_COMM_MIN);
    ts_hpl_iter *iters = r->iters;
    int n_iters = r->n_iters;
    ts_comm_bcast(&c->world, r, sizeof *r, 0);
    if (c->world.rank == 0) {
        r->iters = iters;
        r->n_iters = n_iters;
    } else {
        free(iters);
        r->iters = NULL;
        r->n_iters = 0;
    }
    if (st < 0 && rc == 0) return ts_error_set(st, __FILE__, __LINE__, "hpl: another rank failed (%s)", ts_status_name(st));
    return st;
}

void ts_hpl_result_free(ts_hpl_result *r) {
    if (!r) return;
    free(r->iters);
    r->iters = NULL;
    r->n_iters = 0;
}

// ---- test hooks (ts_hpl_test.h) ----

void ts_hpl_ctx_set_hooks(ts_hpl_ctx *c, double (*elem)(int64_t, int64_t, double, void *),
                          void *elem_arg, void (*x)(double *, int64_t, void *), void *x_arg) {
    c->elem_hook = elem;
    c->elem_hook_arg = elem_arg;
    c->x_hook = x;
    c->x_hook_arg = x_arg;
}

void ts_hpl_matgen_local(ts_hpl_ctx *c, int64_t N, int NB, int P, int Q, int myrow, int mycol,
                         double *A, int64_t lda) {
    int64_t nq = ts_hpl_numroc(N + 1, NB, mycol, Q);
    ts_hpl_matgen_host(c, ts_hpl_seed(c), N, NB, P, Q, myrow, mycol, 0, (nq + NB - 1) / NB, A, lda);
}

int64_t ts_hpl_local_rows(int64_t N, int NB, int myrow, int P) { return ts_hpl_numroc(N, NB, myrow, P); }
int64_t ts_hpl_local_cols(int64_t N, int NB, int mycol, int Q) { return ts_hpl_numroc(N + 1, NB, mycol, Q); }
