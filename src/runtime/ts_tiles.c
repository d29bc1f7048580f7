// ts_tiles.c: the tile runtime's context, options, host registrations and the GEMM call.
#include "runtime/ts_tiles_internal.h"

#include "core/ts_env.h"
#include "core/ts_error.h"
#include "core/ts_log.h"
#include "core/ts_timer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Default tile edges (one home): CUDA devices want large tiles so that a GEMM hides its copies
// (to be measured against cuBLASXt); simulated devices run CPU kernels, so small ones.
#define TL_TILE_CUDA 4096
#define TL_TILE_SIM 256
#define TL_TILE_CPU 512
#define TL_DEPTH_GEMM 3 // C tiles in flight per device with opts.depth 0: GEMM (heavy tasks; 3 lets a task that
                        // brings a new panel load while two compute, bench/NOTES.md 2026-11-25)
#define TL_DEPTH_L3 4   // ... level-3 routines (light tasks: a TRSM chain's head is one solve)
#define TL_RESERVE_DEFAULT 2
#define TL_RESERVE_MAX 64
#define TL_MEM_FRACTION_DEFAULT 0.9
#define TL_PINS_DEFAULT 8
#define TL_H2D_AHEAD_DEFAULT 4 // GEMM host loads queued ahead per device (~10 ms of a 55 GB/s link at T = 4096)

// ---------------------------------------------------------------- options

static int parse_cpu_share(const char *s, double *out) {
    if (!strcmp(s, "auto")) {
        *out = TS_TILES_CPU_AUTO;
        return 0;
    }
    if (!strcmp(s, "adaptive")) {
        *out = TS_TILES_CPU_ADAPTIVE;
        return 0;
    }
    double v;
    if (ts_parse_double(s, "TESSERA_TILES_CPU", &v) < 0 || !(v >= 0 && v <= 1))
        TS_RAISE(TS_ERR_PARSE, "TESSERA_TILES_CPU='%s': expected auto, adaptive, 0 or a fraction in (0, 1]", s);
    *out = v;
    return 0;
}

int ts_tiles_opts_init(ts_tiles_opts *o) {
    if (!o) TS_RAISE(TS_ERR_ARG, "ts_tiles_opts_init: NULL options");
    memset(o, 0, sizeof *o);
    o->cpu_share = TS_TILES_CPU_AUTO;
    o->depth = 0;
    o->reserve = TL_RESERVE_DEFAULT;
    o->mem_fraction = TL_MEM_FRACTION_DEFAULT;
    o->peer = 1;
    o->keep_pins = TL_PINS_DEFAULT;
    o->engine = TS_ENGINE_AUTO;
    o->save_c = 1;
    o->diag_rank = 1;
    o->diag_trmm = 1;
    o->trans_prep = 1;
    o->forward = 1;
    o->tri_base = -1;
    o->grid = 2;
    o->h2d_ahead = TL_H2D_AHEAD_DEFAULT;
    TS_CHECK(ts_env_int("TESSERA_TILES_H2D_AHEAD", &o->h2d_ahead));
    if (o->h2d_ahead < 0 || o->h2d_ahead > TL_HQ)
        TS_RAISE(TS_ERR_PARSE, "TESSERA_TILES_H2D_AHEAD=%d out of range 0..%d (0: no limit)", o->h2d_ahead, TL_HQ);
    TS_CHECK(ts_env_int("TESSERA_TILES_GRID", &o->grid));
    if (o->grid < 0 || o->grid > 2)
        TS_RAISE(TS_ERR_PARSE, "TESSERA_TILES_GRID=%d: 0 (starts along the task order), 1 (grid of blocks) or 2 "
                               "(grid and rotated k-loops)", o->grid);
    TS_CHECK(ts_env_bool("TESSERA_TILES_SAVE_C", &o->save_c));
    TS_CHECK(ts_env_bool("TESSERA_TILES_DIAG_RANK", &o->diag_rank));
    TS_CHECK(ts_env_bool("TESSERA_TILES_DIAG_TRMM", &o->diag_trmm));
    TS_CHECK(ts_env_bool("TESSERA_TILES_TRANS_PREP", &o->trans_prep));
    TS_CHECK(ts_env_bool("TESSERA_TILES_FORWARD", &o->forward));
    TS_CHECK(ts_env_i64("TESSERA_TILES_TRI_BASE", &o->tri_base));
    if (o->tri_base < -1)
        TS_RAISE(TS_ERR_PARSE, "TESSERA_TILES_TRI_BASE=%lld: an order, 0 (no split) or -1 (tile / 8)",
                 (long long)o->tri_base);
    TS_CHECK(ts_env_i64("TESSERA_TILE", &o->tile));
    if (o->tile < 0) TS_RAISE(TS_ERR_PARSE, "TESSERA_TILE=%lld must be positive", (long long)o->tile);
    const char *s = ts_env_str("TESSERA_TILES_CPU");
    if (s) TS_CHECK(parse_cpu_share(s, &o->cpu_share));
    TS_CHECK(ts_env_int("TESSERA_TILES_DEPTH", &o->depth));
    if (o->depth < 0 || o->depth > TL_DEPTH_MAX)
        TS_RAISE(TS_ERR_PARSE, "TESSERA_TILES_DEPTH=%d out of range 0..%d (0: auto)", o->depth, TL_DEPTH_MAX);
    TS_CHECK(ts_env_int("TESSERA_TILES_RESERVE", &o->reserve));
    if (o->reserve < 0 || o->reserve > TL_RESERVE_MAX)
        TS_RAISE(TS_ERR_PARSE, "TESSERA_TILES_RESERVE=%d out of range 0..%d", o->reserve, TL_RESERVE_MAX);
    TS_CHECK(ts_env_double("TESSERA_TILES_MEM", &o->mem_fraction));
    if (!(o->mem_fraction > 0 && o->mem_fraction <= 1))
        TS_RAISE(TS_ERR_PARSE, "TESSERA_TILES_MEM=%g must be in (0, 1]", o->mem_fraction);
    TS_CHECK(ts_env_bool("TESSERA_TILES_PEER", &o->peer));
    TS_CHECK(ts_env_int("TESSERA_TILES_PINS", &o->keep_pins));
    if (o->keep_pins < 0 || o->keep_pins > TL_PINS_MAX - 3)
        TS_RAISE(TS_ERR_PARSE, "TESSERA_TILES_PINS=%d out of range 0..%d", o->keep_pins, TL_PINS_MAX - 3);
    return 0;
}

static int check_opts(const ts_tiles_opts *o) {
    if (o->tile < 0) TS_RAISE(TS_ERR_ARG, "ts_tiles: tile %lld must be positive (0 = default)", (long long)o->tile);
    if (!(o->cpu_share == TS_TILES_CPU_AUTO || o->cpu_share == TS_TILES_CPU_ADAPTIVE ||
          (o->cpu_share >= 0 && o->cpu_share <= 1)))
        TS_RAISE(TS_ERR_ARG, "ts_tiles: cpu_share %g: expected TS_TILES_CPU_AUTO, TS_TILES_CPU_ADAPTIVE, 0 or a "
                             "fraction in (0, 1]",
                 o->cpu_share);
    if (o->depth < 0 || o->depth > TL_DEPTH_MAX)
        TS_RAISE(TS_ERR_ARG, "ts_tiles: depth %d out of range 0..%d (0: auto)", o->depth, TL_DEPTH_MAX);
    if (o->grid < 0 || o->grid > 2) TS_RAISE(TS_ERR_ARG, "ts_tiles: grid %d out of range 0..2", o->grid);
    if (o->h2d_ahead < 0 || o->h2d_ahead > TL_HQ)
        TS_RAISE(TS_ERR_ARG, "ts_tiles: h2d_ahead %d out of range 0..%d", o->h2d_ahead, TL_HQ);
    if (o->reserve < 0 || o->reserve > TL_RESERVE_MAX)
        TS_RAISE(TS_ERR_ARG, "ts_tiles: reserve %d out of range 0..%d", o->reserve, TL_RESERVE_MAX);
    if (!(o->mem_fraction > 0 && o->mem_fraction <= 1))
        TS_RAISE(TS_ERR_ARG, "ts_tiles: mem_fraction %g must be in (0, 1]", o->mem_fraction);
    if (o->keep_pins < 0 || o->keep_pins > TL_PINS_MAX - 3)
        TS_RAISE(TS_ERR_ARG, "ts_tiles: keep_pins %d out of range 0..%d", o->keep_pins, TL_PINS_MAX - 3);
    // (cpu is allowed: on simulated devices it is the CPU BLAS standing in as device code)
    if (ts_engine_is_set_wide(o->engine))
        TS_RAISE(TS_ERR_ARG, "ts_tiles: engine '%s' is not a device GEMM engine", ts_engines_name(o->engine));
    return 0;
}

// ---------------------------------------------------------------- context

static void devrt_close(tl_devrt *dr) {
    ts_stream **st[TL_NSTREAMS] = {&dr->s_h2d, &dr->s_p2p, &dr->s_comp, &dr->s_d2h, &dr->s_save};
    for (int i = 0; i < TL_NSTREAMS; i++)
        if (*st[i]) ts_stream_destroy(*st[i]), *st[i] = NULL;
    for (int i = 0; i < TL_RING; i++)
        if (dr->ring_ev[i]) ts_event_destroy(dr->ring_ev[i]), dr->ring_ev[i] = NULL;
    for (int i = 0; i < TL_DEPTH_MAX; i++) {
        if (dr->comp_ev[i]) ts_event_destroy(dr->comp_ev[i]), dr->comp_ev[i] = NULL;
        if (dr->out_ev[i]) ts_event_destroy(dr->out_ev[i]), dr->out_ev[i] = NULL;
        if (dr->save_ev[i]) ts_event_destroy(dr->save_ev[i]), dr->save_ev[i] = NULL;
    }
}

// The save buffers (pinned host memory of the device set).
void tl_save_free(ts_tiles *rt, tl_devrt *dr) {
    for (int i = 0; i < TL_DEPTH_MAX; i++)
        if (dr->save[i]) ts_host_free(rt->devs, dr->save[i]), dr->save[i] = NULL;
    dr->save_bytes = 0;
}

static int streams_open(tl_devrt *dr) {
    TS_CHECK(ts_stream_create(dr->dev, &dr->s_h2d));
    TS_CHECK(ts_stream_create(dr->dev, &dr->s_p2p));
    TS_CHECK(ts_stream_create(dr->dev, &dr->s_comp));
    TS_CHECK(ts_stream_create(dr->dev, &dr->s_save));
    return ts_stream_create(dr->dev, &dr->s_d2h);
}

int tl_streams_reset(ts_tiles *rt, int d) {
    tl_devrt *dr = &rt->dev[d];
    ts_stream **sp[TL_NSTREAMS] = {&dr->s_h2d, &dr->s_p2p, &dr->s_comp, &dr->s_d2h, &dr->s_save};
    for (int i = 0; i < TL_NSTREAMS; i++)
        if (*sp[i]) ts_stream_destroy(*sp[i]), *sp[i] = NULL;
    return streams_open(dr);
}

static int devrt_open(tl_devrt *dr, ts_device *dev) {
    dr->dev = dev;
    TS_CHECK(streams_open(dr));
    for (int i = 0; i < TL_RING; i++) TS_CHECK(ts_event_create(dev, &dr->ring_ev[i]));
    for (int i = 0; i < TL_DEPTH_MAX; i++) {
        TS_CHECK(ts_event_create(dev, &dr->comp_ev[i]));
        TS_CHECK(ts_event_create(dev, &dr->out_ev[i]));
        TS_CHECK(ts_event_create(dev, &dr->save_ev[i]));
    }
    dr->tile_default = ts_device_props_of(dev)->backend == TS_BACKEND_CUDA ? TL_TILE_CUDA : TL_TILE_SIM;
    return 0;
}

int ts_tiles_create(ts_devset *devs, const ts_tiles_opts *opts, ts_tiles **out) {
    if (!out) TS_RAISE(TS_ERR_ARG, "ts_tiles_create: out is NULL");
    *out = NULL;
    if (!devs) TS_RAISE(TS_ERR_ARG, "ts_tiles_create: NULL device set");
    ts_tiles_opts def;
    if (!opts) {
        TS_CHECK(ts_tiles_opts_init(&def));
        opts = &def;
    }
    TS_CHECK(check_opts(opts));
    if (opts->devices < 0) TS_RAISE(TS_ERR_ARG, "ts_tiles_create: devices %d must be >= 0 (0: all)", opts->devices);
    int ndev = ts_devset_count(devs);
    if (opts->devices > 0 && opts->devices < ndev) ndev = opts->devices;
    if (ndev == 0 && opts->cpu_share == 0)
        TS_RAISE(TS_ERR_ARG, "ts_tiles_create: no devices and the CPU worker is off (cpu_share 0)");
    ts_tiles *rt = calloc(1, sizeof *rt);
    if (!rt) TS_RAISE(TS_ERR_NOMEM, "ts_tiles_create: out of host memory");
    rt->devs = devs;
    rt->opts = *opts;
    rt->cpu_on = opts->cpu_share != 0;
    pthread_mutex_init(&rt->call_lock, NULL);
    rt->opts.perfdb = NULL; // the caller's string need not outlive the call
    if (opts->cpu_share == TS_TILES_CPU_ADAPTIVE) {
        int rc = ts_perfdb_open(opts->perfdb, &rt->perfdb);
        if (rc < 0) {
            ts_tiles_destroy(rt);
            return rc;
        }
        (void)ts_perfdb_load(rt->perfdb); // a corrupt file is ignored with a warning
    }
    for (int d = 0; d < ndev; d++) {
        rt->ndev = d + 1;
        int rc = devrt_open(&rt->dev[d], ts_devset_device(devs, d));
        if (rc < 0) {
            ts_tiles_destroy(rt);
            return rc;
        }
    }
    *out = rt;
    return 0;
}

static void pin_drop(ts_tiles *rt, int p) {
    ts_host_unpin(rt->devs, rt->pins[p].handle);
    rt->pins[p] = rt->pins[--rt->npins];
}

void ts_tiles_destroy(ts_tiles *rt) {
    if (!rt) return;
    while (rt->npins > 0) pin_drop(rt, rt->npins - 1);
    for (int d = 0; d < rt->ndev; d++) tl_save_free(rt, &rt->dev[d]), devrt_close(&rt->dev[d]);
    ts_perfdb_close(rt->perfdb);
    free(rt->trace);
    pthread_mutex_destroy(&rt->call_lock);
    free(rt);
}

int64_t ts_tiles_tile(const ts_tiles *rt) {
    if (!rt) return 0;
    if (rt->opts.tile > 0) return rt->opts.tile;
    return rt->ndev > 0 ? rt->dev[0].tile_default : TL_TILE_CPU;
}

int ts_tiles_device_count(const ts_tiles *rt) { return rt ? rt->ndev : 0; }
int ts_tiles_has_cpu(const ts_tiles *rt) { return rt ? rt->cpu_on : 0; }

// ---------------------------------------------------------------- host registrations

// Pins [ptr, ptr+bytes) unless a kept registration covers it. A failed pin is not an error: the
// copies still work from pageable memory, only slower (logged).
static void pin_range(ts_tiles *rt, const void *ptr, size_t bytes) {
    if (rt->ndev == 0 || bytes == 0) return;
    uint64_t now = ++rt->pin_clock;
    for (int p = 0; p < rt->npins; p++) {
        uintptr_t lo = (uintptr_t)rt->pins[p].ptr, hi = lo + rt->pins[p].bytes;
        if ((uintptr_t)ptr >= lo && (uintptr_t)ptr + bytes <= hi) {
            rt->pins[p].used = now;
            return;
        }
    }
    if (rt->npins == TL_PINS_MAX) return;
    int h;
    if (ts_host_pin(rt->devs, (void *)ptr, bytes, &h) < 0) {
        TS_LOG_W("tile runtime: cannot pin %zu bytes at %p (%s); copying from pageable memory", bytes, ptr,
                 ts_error_string());
        ts_error_clear();
        return;
    }
    rt->pins[rt->npins].ptr = ptr;
    rt->pins[rt->npins].bytes = bytes;
    rt->pins[rt->npins].handle = h;
    rt->pins[rt->npins].used = now;
    rt->npins++;
}

// After a call: keep the keep_pins most recently used registrations.
static void pin_trim(ts_tiles *rt) {
    while (rt->npins > rt->opts.keep_pins) {
        int oldest = 0;
        for (int p = 1; p < rt->npins; p++)
            if (rt->pins[p].used < rt->pins[oldest].used) oldest = p;
        pin_drop(rt, oldest);
    }
}

int ts_tiles_unpin(ts_tiles *rt, const void *ptr, size_t bytes) {
    if (!rt) TS_RAISE(TS_ERR_ARG, "ts_tiles_unpin: NULL runtime");
    pthread_mutex_lock(&rt->call_lock);
    uintptr_t lo = (uintptr_t)ptr, hi = lo + (bytes ? bytes : 1);
    for (int p = rt->npins - 1; p >= 0; p--) {
        uintptr_t plo = (uintptr_t)rt->pins[p].ptr, phi = plo + rt->pins[p].bytes;
        if (lo < phi && hi > plo) pin_drop(rt, p);
    }
    pthread_mutex_unlock(&rt->call_lock);
    return 0;
}

int ts_tiles_unpin_all(ts_tiles *rt) {
    if (!rt) TS_RAISE(TS_ERR_ARG, "ts_tiles_unpin_all: NULL runtime");
    pthread_mutex_lock(&rt->call_lock);
    while (rt->npins > 0) pin_drop(rt, rt->npins - 1);
    pthread_mutex_unlock(&rt->call_lock);
    return 0;
}

void ts_tiles_pin_info(ts_tiles *rt, int *count, size_t *bytes) {
    int n = 0;
    size_t b = 0;
    if (rt) {
        pthread_mutex_lock(&rt->call_lock);
        n = rt->npins;
        for (int p = 0; p < rt->npins; p++) b += rt->pins[p].bytes;
        pthread_mutex_unlock(&rt->call_lock);
    }
    if (count) *count = n;
    if (bytes) *bytes = b;
}

// Bytes spanned by a column-major rows x cols matrix with leading dimension ld.
static size_t span_bytes(int64_t rows, int64_t cols, int64_t ld, size_t es) {
    if (rows <= 0 || cols <= 0) return 0;
    return ((size_t)(cols - 1) * (size_t)ld + (size_t)rows) * es;
}

// ---------------------------------------------------------------- the call

static void scalar_one(char prec, unsigned char *one) {
    float f = 1.0f;
    double d = 1.0;
    memset(one, 0, 16);
    if (prec == 's' || prec == 'c') memcpy(one, &f, sizeof f);
    else memcpy(one, &d, sizeof d);
}

// Whether a scalar of the precision is zero (+0 or -0, real and imaginary parts).
static int is_zero(char prec, const unsigned char *x) {
    float f[2] = {0, 0};
    double v[2] = {0, 0};
    switch (prec) {
    case 's': memcpy(f, x, 4); return f[0] == 0;
    case 'c': memcpy(f, x, 8); return f[0] == 0 && f[1] == 0;
    case 'd': memcpy(v, x, 8); return v[0] == 0;
    default: memcpy(v, x, 16); return v[0] == 0 && v[1] == 0;
    }
}

void tl_call_free(tl_call *c) {
    free(c->state);
    free(c->owner);
    free(c->rerun);
    free(c->pub);
    free(c->trace);
    pthread_mutex_destroy(&c->lock);
    pthread_cond_destroy(&c->cond);
    free(c);
}

// Fills the call's problem, tasks and per-device caches.
static int call_setup(tl_call *c) {
    ts_tiles *rt = c->rt;
    c->mt = (c->m + c->T - 1) / c->T;
    c->nt = (c->n + c->T - 1) / c->T;
    c->kt = (c->k + c->T - 1) / c->T;
    if ((double)c->mt * (double)c->nt > 2e9)
        TS_RAISE(TS_ERR_ARG, "ts_tiles_gemm: %lld x %lld C tiles are too many; use a larger tile",
                 (long long)c->mt, (long long)c->nt);
    c->ntasks = c->l3 ? c->l3->ntasks : (int)(c->mt * c->nt);
    c->npending = c->nunstarted = c->ntasks;
    c->state = calloc((size_t)c->ntasks, 1);
    c->owner = malloc((size_t)c->ntasks);
    c->rerun = calloc((size_t)c->ntasks, 1);
    c->pub = calloc((size_t)c->ntasks, 1);
    if (rt->opts.trace) {
        c->captrace = 2 * c->ntasks + 64; // re-runs included; fixed, so records never move
        c->trace = calloc((size_t)c->captrace, sizeof *c->trace);
    }
    for (int d = 0; d < rt->ndev; d++) c->dc[d].building = -1;
    if (!c->state || !c->owner || !c->rerun || !c->pub || (rt->opts.trace && !c->trace)) TS_RAISE(TS_ERR_NOMEM, "ts_tiles_gemm: out of host memory for %d tasks", c->ntasks);
    memset(c->owner, 0xff, (size_t)c->ntasks);
    c->nworkers = rt->ndev + (rt->cpu_on ? 1 : 0);
    c->cpu_planned = -1;
    if (rt->opts.cpu_share > 0) c->cpu_cap = (int64_t)(rt->opts.cpu_share * c->ntasks + 0.5);
    else c->cpu_cap = -1;
    if (rt->opts.cpu_share > 0) c->cpu_planned = rt->opts.cpu_share;
    if (rt->opts.cpu_share == TS_TILES_CPU_ADAPTIVE && rt->ndev > 0 && !c->l3) {
        // The share from the database for this class (none yet: auto, which measures both rates).
        ts_perfdb_key key = ts_perfdb_key_of(c->prec, c->ta, c->tb, c->m, c->n, c->k, rt->ndev);
        const ts_perfdb_entry *e = ts_perfdb_find(rt->perfdb, &key);
        if (e) {
            c->adaptive = 1;
            c->cpu_planned = 1.0 - e->ratio;
            c->cpu_cap = (int64_t)(c->cpu_planned * c->ntasks); // rounded down: rather the CPU idles (CALDGEMM)
        }
    }
    if (rt->ndev == 0) c->cpu_cap = c->ntasks;
    for (int d = 0; d < rt->ndev; d++) {
        size_t used, free_b, largest;
        ts_dmem_info(rt->dev[d].dev, &used, &free_b, &largest);
        size_t budget = (size_t)((double)free_b * rt->opts.mem_fraction);
        if (budget > largest) budget = largest;
        TS_CHECK(tl_cache_setup(c, d, budget));
    }
    return 0;
}

// After the workers stopped: every stream idle, caches released. A stream left with a sticky error
// (a failed call) is replaced so that the next call starts clean.
static void call_teardown(tl_call *c) {
    ts_tiles *rt = c->rt;
    for (int d = 0; d < rt->ndev; d++) {
        tl_devrt *dr = &rt->dev[d];
        ts_stream *st[TL_NSTREAMS] = {dr->s_h2d, dr->s_p2p, dr->s_comp, dr->s_d2h, dr->s_save};
        int bad = 0;
        for (int i = 0; i < TL_NSTREAMS; i++)
            if (st[i] && ts_stream_sync(st[i]) < 0) bad = 1;
        tl_cache_teardown(c, d);
        if (bad) {
            ts_stream **sp[TL_NSTREAMS] = {&dr->s_h2d, &dr->s_p2p, &dr->s_comp, &dr->s_d2h, &dr->s_save};
            for (int i = 0; i < TL_NSTREAMS; i++)
                if (*sp[i]) ts_stream_destroy(*sp[i]), *sp[i] = NULL;
            if (streams_open(dr) < 0)
                TS_LOG_W("tile runtime: device %d: cannot recreate streams after a failure: %s", d, ts_error_string());
        }
    }
    ts_error_clear();
}

// Measured rates of the call: devices together (their flops over the time to the last device's
// end) and the CPU worker (its flops over its busy time); GFLOP/s, 0 when it did nothing.
static void call_rates(const tl_call *c, double *dev, double *cpu, double *dev_sec, double *cpu_sec) {
    double fl = 0, end = 0;
    for (int d = 0; d < c->rt->ndev; d++) {
        fl += c->dc[d].flops;
        if (c->dc[d].tiles_done > 0 && c->dc[d].busy_end > end) end = c->dc[d].busy_end;
    }
    double ts = end > c->t0 ? end - c->t0 : 0;
    *dev = fl > 0 && ts > 0 ? fl / ts * 1e-9 : 0;
    *cpu = c->cpu_flops > 0 && c->cpu_busy > 0 ? c->cpu_flops / c->cpu_busy * 1e-9 : 0;
    if (dev_sec) *dev_sec = ts;
    if (cpu_sec) *cpu_sec = c->cpu_busy;
}

// Adaptive: the call's rates into the database (CALDGEMM's filter, ts_perfdb_update), saved.
static void perfdb_record(tl_call *c) {
    ts_tiles *rt = c->rt;
    if (!rt->perfdb || c->err || rt->ndev == 0 || c->ndead || c->l3) return; // a failed device's rate says nothing
    double g, cr, gs, cs;
    call_rates(c, &g, &cr, &gs, &cs);
    if (g <= 0) return;
    ts_perfdb_key key = ts_perfdb_key_of(c->prec, c->ta, c->tb, c->m, c->n, c->k, rt->ndev);
    ts_perfdb_update(rt->perfdb, &key, g, gs, cr, cs);
    if (ts_perfdb_save(rt->perfdb) < 0) ts_error_clear();
}

static void call_stats(const tl_call *c, ts_tiles_stats *s) {
    memset(s, 0, sizeof *s);
    s->seconds = ts_now() - c->t0;
    s->tile = c->T;
    s->tiles = c->ntasks;
    s->ndev = c->rt->ndev;
    for (int d = 0; d < c->rt->ndev; d++) {
        const tl_devcall *dc = &c->dc[d];
        s->tiles_dev[d] = dc->tiles_done;
        s->bytes_h2d += dc->bytes_h2d;
        s->bytes_h2d_dev[d] = dc->bytes_h2d;
        s->bytes_d2h += dc->bytes_d2h;
        s->bytes_save += dc->bytes_save;
        s->bytes_p2p += dc->bytes_p2p;
        s->cache_hits += dc->hits;
        s->cache_misses += dc->misses;
        s->peer_fetches += dc->peer_fetches;
        s->transposes += dc->transposes;
        s->evictions += dc->evictions;
        s->steals += dc->steals;
        s->slots[d] = dc->nslots;
    }
    s->tiles_cpu = c->cpu_tiles;
    s->cpu_share = c->ntasks ? (double)c->cpu_tiles / (double)c->ntasks : 0;
    double cs = c->rt->opts.cpu_share;
    s->cpu_mode = !c->rt->cpu_on ? "off" : cs == TS_TILES_CPU_AUTO ? "auto" : cs == TS_TILES_CPU_ADAPTIVE ? "adaptive"
                                                                                                   : "fixed";
    s->cpu_share_planned = c->cpu_planned;
    s->cpu_gflops_est = c->cpu_rate_start * 1e-9;
    s->cpu_steals = c->cpu_steals;
    s->devices_failed = c->ndead;
    s->reruns = c->reruns;
    call_rates(c, &s->dev_gflops, &s->cpu_gflops, NULL, NULL);
    // Without reuse every task loads its whole block row of op(A) and block column of op(B), and C.
    double es = (double)c->es;
    double v = (double)c->nt * (double)c->m * (double)c->k * es + (double)c->mt * (double)c->k * (double)c->n * es;
    if (c->l3) { // every product loads its two tiles
        v = 0;
        for (int p = 0; p < c->l3->nprods; p++) {
            const tl_opnd *o[2] = {&c->l3->prods[p].a, &c->l3->prods[p].b};
            for (int q = 0; q < 2; q++)
                v += (double)tl_dim(c->l3->rows[o[q]->mat], c->T, o[q]->bi) *
                     (double)tl_dim(c->l3->cols[o[q]->mat], c->T, o[q]->bj) * es;
        }
    }
    if (!c->beta_zero) v += (double)c->m * (double)c->n * es;
    s->bytes_h2d_noreuse = (size_t)v;
}

// Starts the workers, waits for them.
// The CPU BLAS's DGEMM rate for the CPU worker's first decision (flop/s; 0 when it cannot be
// measured): a 1024^3 product timed three times, the median, halved. The probe runs with the cores
// idle; the CPU worker runs beside the device workers and their copies. On 4 x H200 (64 threads),
// with the earlier probe (512^3, best of three; the rate it gave was not recorded) the CPU took a
// 4096-wide SYMM tile that then ran at 0.66 TFLOP/s: 2.5 s against the devices' 1.2 s for
// everything else; this probe gave 51 GFLOP/s there (stats cpu_gflops_est), far under the CPU's
// rate on a real tile, so it errs towards the devices. Once the CPU has run a tile, that tile's
// measured rate replaces the probe (ts_tiles_worker.c).
#define TL_CPU_PROBE_N 1024
#define TL_CPU_PROBE_DERATE 0.5
static double probe_cpu_rate(void) {
    const int64_t n = TL_CPU_PROBE_N;
    double *a = malloc(sizeof(double) * (size_t)(3 * n * n));
    if (!a) return 0;
    for (int64_t i = 0; i < 3 * n * n; i++) a[i] = (double)((i * 7919) % 2003) / 1001.0 - 1.0;
    double one = 1.0, r[3];
    int nr = 0;
    for (; nr < 3; nr++) {
        double t0 = ts_now();
        if (ts_gemm_cpu('d', 'N', 'N', n, n, n, &one, a, n, a + n * n, n, &one, a + 2 * n * n, n) < 0) break;
        double dt = ts_now() - t0;
        r[nr] = dt > 0 ? 2.0 * n * n * n / dt : 0;
    }
    free(a);
    if (nr < 3) return 0;
    double lo = r[0] < r[1] ? r[0] : r[1], hi = r[0] < r[1] ? r[1] : r[0];
    double med = r[2] < lo ? lo : r[2] > hi ? hi : r[2];
    return TL_CPU_PROBE_DERATE * med;
}

static int call_run(tl_call *c) {
    ts_tiles *rt = c->rt;
    if (rt->cpu_on && rt->ndev > 0 && !(rt->cpu_flop_rate > 0)) rt->cpu_flop_rate = probe_cpu_rate();
    c->cpu_rate_start = rt->cpu_on ? rt->cpu_flop_rate : 0;
    pthread_t th[TS_MAX_DEVICES + 1];
    tl_worker_arg wa[TS_MAX_DEVICES];
    int started[TS_MAX_DEVICES + 1] = {0};
    c->t0 = ts_now();
    for (int d = 0; d < rt->ndev; d++) {
        wa[d].c = c, wa[d].d = d;
        if (pthread_create(&th[d], NULL, tl_dev_worker, &wa[d]) == 0) started[d] = 1;
        else {
            pthread_mutex_lock(&c->lock);
            tl_call_abort(c, TS_ERROR(TS_ERR_NOMEM, "ts_tiles_gemm: cannot start the worker of device %d", d));
            pthread_mutex_unlock(&c->lock);
        }
    }
    if (rt->cpu_on) {
        if (pthread_create(&th[rt->ndev], NULL, tl_cpu_worker, c) == 0) started[rt->ndev] = 1;
        else if (rt->ndev == 0) {
            pthread_mutex_lock(&c->lock);
            tl_call_abort(c, TS_ERROR(TS_ERR_NOMEM, "ts_tiles_gemm: cannot start the CPU worker"));
            pthread_mutex_unlock(&c->lock);
        }
    }
    for (int w = 0; w <= rt->ndev; w++)
        if (started[w]) pthread_join(th[w], NULL);
    if (!c->err) {
        int left = 0;
        for (int t = 0; t < c->ntasks; t++) left += c->state[t] != TL_DONE;
        if (left) {
            c->err = TS_ERR_INTERNAL;
            snprintf(c->errmsg, sizeof c->errmsg, "ts_tiles_gemm: %d of %d C tiles were not computed", left, c->ntasks);
        }
    }
    return c->err;
}

int ts_tiles_gemm(ts_tiles *rt, char prec, char ta, char tb, int64_t m, int64_t n, int64_t k,
                  const void *alpha, const void *A, int64_t lda, const void *B, int64_t ldb,
                  const void *beta, void *C, int64_t ldc, ts_tiles_stats *stats) {
    if (stats) memset(stats, 0, sizeof *stats);
    if (!rt) TS_RAISE(TS_ERR_ARG, "ts_tiles_gemm: NULL runtime");
    if (!alpha || !beta) TS_RAISE(TS_ERR_ARG, "ts_tiles_gemm: alpha and beta must point to scalars");
    ta = (char)(ta & ~0x20), tb = (char)(tb & ~0x20);
    TS_CHECK(ts_gemm_check_raise("ts_tiles_gemm", prec, ta, tb, m, n, k, lda, ldb, ldc));
    if (m == 0 || n == 0) return 0;
    if (!C || (k > 0 && (!A || !B))) TS_RAISE(TS_ERR_ARG, "ts_tiles_gemm: NULL matrix pointer");
    if (k == 0) { // C = beta C: nothing for the devices
        ts_gemm_ref(prec, ta, tb, m, n, 0, alpha, A, lda, B, ldb, beta, C, ldc);
        return 0;
    }
    tl_call *c = calloc(1, sizeof *c);
    if (!c) TS_RAISE(TS_ERR_NOMEM, "ts_tiles_gemm: out of host memory");
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->cond, NULL);
    c->rt = rt;
    c->prec = prec, c->ta = ta, c->tb = tb, c->m = m, c->n = n, c->k = k;
    c->lda = lda, c->ldb = ldb, c->ldc = ldc;
    c->A = A, c->B = B, c->C = C;
    c->es = ts_prec_size(prec);
    memcpy(c->alpha, alpha, c->es);
    memcpy(c->beta, beta, c->es);
    scalar_one(prec, c->one);
    c->beta_zero = is_zero(prec, c->beta);
    c->c_read = !c->beta_zero;
    c->engine = rt->opts.engine;
    c->T = ts_tiles_tile(rt);
    const void *pin[3] = {A, B, C};
    size_t pin_bytes[3] = {span_bytes(ta == 'N' ? m : k, ta == 'N' ? k : m, lda, c->es),
                           span_bytes(tb == 'N' ? k : n, tb == 'N' ? n : k, ldb, c->es), span_bytes(m, n, ldc, c->es)};
    int rc = tl_call_exec(c, pin, pin_bytes, stats);
    tl_call_free(c);
    return rc;
}

int tl_call_exec(tl_call *c, const void *const pin[3], const size_t pin_bytes[3], ts_tiles_stats *stats) {
    ts_tiles *rt = c->rt;
    pthread_mutex_lock(&rt->call_lock);
    c->depth = rt->opts.depth ? rt->opts.depth : c->l3 ? TL_DEPTH_L3 : TL_DEPTH_GEMM;
    double t0 = ts_now();
    for (int q = 0; q < 3; q++)
        if (pin[q]) pin_range(rt, pin[q], pin_bytes[q]);
    int rc = call_setup(c);
    if (rc < 0) {
        c->err = rc;
        snprintf(c->errmsg, sizeof c->errmsg, "%s", ts_error_last()->message);
    } else {
        call_run(c);
    }
    call_teardown(c);
    perfdb_record(c);
    if (rt->opts.trace) { // the call's timeline becomes the runtime's last one
        free(rt->trace);
        rt->trace = c->trace, rt->ntrace = c->ntrace, rt->trace_t0 = c->t0, rt->trace_ndev = rt->ndev;
        c->trace = NULL;
    }
    pin_trim(rt);
    if (stats) {
        call_stats(c, stats);
        stats->seconds = ts_now() - t0;
    }
    pthread_mutex_unlock(&rt->call_lock);
    rc = c->err;
    if (rc < 0) ts_error_set(rc, __FILE__, __LINE__, "%s", c->errmsg);
    return rc < 0 ? rc : 0;
}

// ---------------------------------------------------------------- trace

// Lanes (Chrome trace threads): three per device (copy in, GEMM, copy out), then one for the CPU.
static void trace_event(FILE *f, int *first, const char *name, int tid, double t0, double t1, double base,
                        const tl_trace_rec *r) {
    if (!(t0 > 0 && t1 >= t0)) return; // a stage that never ran (failed device)
    fprintf(f, "%s\n{\"name\":\"%s\",\"cat\":\"tiles\",\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"ts\":%.3f,"
               "\"dur\":%.3f,\"args\":{\"task\":%d,\"i\":%lld,\"j\":%lld,\"rerun\":%d}}",
            *first ? "" : ",", name, tid, (t0 - base) * 1e6, (t1 - t0) * 1e6, r->task, (long long)r->i,
            (long long)r->j, r->rerun);
    *first = 0;
}

static void trace_lane(FILE *f, int *first, int tid, const char *name) {
    fprintf(f, "%s\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"args\":{\"name\":\"%s\"}}",
            *first ? "" : ",", tid, name);
    *first = 0;
}

int ts_tiles_trace_write(ts_tiles *rt, const char *path) {
    if (!rt || !path) TS_RAISE(TS_ERR_ARG, "ts_tiles_trace_write: NULL argument");
    pthread_mutex_lock(&rt->call_lock);
    FILE *f = fopen(path, "w");
    if (!f) {
        pthread_mutex_unlock(&rt->call_lock);
        TS_RAISE(TS_ERR_IO, "cannot write the trace %s", path);
    }
    int first = 1, nd = rt->trace_ndev;
    fprintf(f, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[");
    fprintf(f, "\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"args\":{\"name\":\"tessera tiles\"}}");
    first = 0;
    char name[64];
    static const char *lane[3] = {"copy in", "gemm", "copy out"};
    for (int d = 0; d < nd; d++)
        for (int l = 0; l < 3; l++) {
            snprintf(name, sizeof name, "device %d %s", d, lane[l]);
            trace_lane(f, &first, 3 * d + l, name);
        }
    trace_lane(f, &first, 3 * nd, "cpu gemm");
    for (int i = 0; i < rt->ntrace; i++) {
        const tl_trace_rec *r = &rt->trace[i];
        if (r->worker < 0) {
            trace_event(f, &first, "gemm", 3 * nd, r->t[2], r->t[3], rt->trace_t0, r);
            continue;
        }
        for (int l = 0; l < 3; l++)
            trace_event(f, &first, lane[l], 3 * r->worker + l, r->t[2 * l], r->t[2 * l + 1], rt->trace_t0, r);
    }
    fprintf(f, "\n]}\n");
    int bad = ferror(f);
    if (fclose(f) != 0) bad = 1;
    pthread_mutex_unlock(&rt->call_lock);
    if (bad) TS_RAISE(TS_ERR_IO, "cannot write the trace %s", path);
    return 0;
}

void ts_tiles_stats_json(ts_json *j, const ts_tiles_stats *t) {
    ts_json_int(j, "bytes_h2d", (int64_t)t->bytes_h2d);
    ts_json_int(j, "bytes_d2h", (int64_t)t->bytes_d2h);
    ts_json_int(j, "bytes_save", (int64_t)t->bytes_save);
    ts_json_int(j, "bytes_p2p", (int64_t)t->bytes_p2p);
    ts_json_int(j, "bytes_h2d_noreuse", (int64_t)t->bytes_h2d_noreuse);
    ts_json_int(j, "cache_hits", t->cache_hits);
    ts_json_int(j, "cache_misses", t->cache_misses);
    ts_json_int(j, "peer_fetches", t->peer_fetches);
    ts_json_int(j, "transposes", t->transposes);
    ts_json_num(j, "cpu_share", t->cpu_share);
    ts_json_int(j, "tile", t->tile);
    ts_json_int(j, "tiles", t->tiles);
    ts_json_int(j, "tiles_cpu", t->tiles_cpu);
    ts_json_begin_array(j, "tiles_per_device");
    for (int d = 0; d < t->ndev; d++) ts_json_int(j, NULL, t->tiles_dev[d]);
    ts_json_end_array(j);
    ts_json_int(j, "steals", t->steals);
    ts_json_str(j, "cpu_mode", t->cpu_mode ? t->cpu_mode : "off");
    if (t->cpu_share_planned >= 0) ts_json_num(j, "cpu_share_planned", t->cpu_share_planned);
    else ts_json_null(j, "cpu_share_planned");
    ts_json_int(j, "cpu_steals", t->cpu_steals);
    ts_json_num(j, "dev_gflops", t->dev_gflops);
    ts_json_num(j, "cpu_gflops", t->cpu_gflops);
    ts_json_num(j, "cpu_gflops_est", t->cpu_gflops_est);
    ts_json_int(j, "devices_failed", t->devices_failed);
    ts_json_int(j, "reruns", t->reruns);
    ts_json_begin_array(j, "bytes_h2d_per_device");
    for (int d = 0; d < t->ndev; d++) ts_json_int(j, NULL, (int64_t)t->bytes_h2d_dev[d]);
    ts_json_end_array(j);
}
