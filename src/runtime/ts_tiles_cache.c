// ts_tiles_cache.c: per-device tile cache: reader-counted approximate LRU, peer fetch, pending releases.
//
// Every device of a call has a pool of T x T slots cut from one arena block. A and B tiles are
// read-only during a call, so a slot holding one is Shared; it stays until evicted. C tiles are
// Modified on exactly one device: written back to the host when their task ends, then Invalid (the
// slot is emptied). A slot is evicted only when no queued work reads it (readers == 0): readers
// are taken when work is enqueued and dropped by the owning worker once an event recorded after
// that work has completed (the pending ring). On a miss, a peer device whose cache holds the tile
// (or is loading it) is the second level: the copy waits for the peer slot's ready event and holds
// a reader on it until the copy is done.
#include "runtime/ts_tiles_internal.h"

#include "core/ts_error.h"
#include "core/ts_log.h"
#include "kernels/ts_tile_ops.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

// ---------------------------------------------------------------- errors

int tl_call_fail(tl_call *c, int code) {
    if (code >= 0) code = TS_ERR_INTERNAL;
    if (!c->fault) {
        const ts_error_info *e = ts_error_last();
        c->fault = code;
        if (e->code == code) snprintf(c->faultmsg, sizeof c->faultmsg, "%s", e->message);
        else snprintf(c->faultmsg, sizeof c->faultmsg, "tile runtime: %s", ts_status_name(code));
    }
    return code;
}

int tl_call_abort(tl_call *c, int code) {
    if (code >= 0) code = TS_ERR_INTERNAL;
    if (!c->err) {
        if (!c->fault) tl_call_fail(c, code);
        c->err = code;
        snprintf(c->errmsg, sizeof c->errmsg, "%s", c->faultmsg);
    }
    c->abort = 1;
    pthread_cond_broadcast(&c->cond);
    return code;
}

// An event of device d reported a failed stream; the stream's own error says what failed (a copy,
// a kernel, a lost device), so record that one. A stream that failed only because it waited for an
// event of a failed stream (the sim says "waited on an event") reports a consequence: the cause is
// preferred when it is on this device.
int tl_event_failed(tl_call *c, int d, int rc) {
    tl_devrt *dr = &c->rt->dev[d];
    int first = 0;
    char msg[sizeof c->errmsg] = "";
    ts_stream *st[TL_NSTREAMS] = {dr->s_h2d, dr->s_p2p, dr->s_comp, dr->s_d2h, dr->s_save};
    for (int i = 0; i < TL_NSTREAMS; i++) {
        int e = st[i] ? ts_stream_error(st[i]) : 0;
        if (e >= 0) continue;
        if (!strstr(ts_error_last()->message, "waited on an event")) return tl_call_fail(c, e);
        if (!first) first = e, snprintf(msg, sizeof msg, "%s", ts_error_last()->message);
    }
    if (first) {
        ts_error_set(first, __FILE__, __LINE__, "%s", msg);
        return tl_call_fail(c, first);
    }
    return tl_call_fail(c, rc);
}

// The code a worker returns when another one failed first.
static int aborted(tl_call *c) { return c->err ? c->err : TS_ERR_STATE; }

// ---------------------------------------------------------------- setup

int tl_cache_setup(tl_call *c, int d, size_t budget) {
    ts_tiles *rt = c->rt;
    tl_devcall *dc = &c->dc[d];
    ts_device *dev = rt->dev[d].dev;
    // The largest tile of the call (edges of a small problem are shorter than T).
    size_t tm = (size_t)(c->m < c->T ? c->m : c->T), tn = (size_t)(c->n < c->T ? c->n : c->T);
    size_t tk = (size_t)(c->k < c->T ? c->k : c->T);
    size_t tile_bytes = tm * tk;
    if (tk * tn > tile_bytes) tile_bytes = tk * tn;
    if (tm * tn > tile_bytes) tile_bytes = tm * tn;
    int64_t nA = c->mt * c->kt, nB = c->kt * c->nt;
    if (c->l3) { // operand tiles are blocks of the stored matrices, C tiles of C
        nA = tl_l3_nkeys(c, TL_A), nB = tl_l3_nkeys(c, TL_B);
        for (int mat = TL_A; mat <= TL_B; mat++) {
            size_t r = (size_t)(c->l3->rows[mat] < c->T ? c->l3->rows[mat] : c->T);
            size_t q = (size_t)(c->l3->cols[mat] < c->T ? c->l3->cols[mat] : c->T);
            if (r * q > tile_bytes) tile_bytes = r * q;
        }
    }
    tile_bytes = (tile_bytes * c->es + 255) / 256 * 256;
    int depth = c->depth;
    int64_t useful = nA + nB + depth; // more slots than distinct tiles never help
    int need = depth + TL_MIN_AB_SLOTS;
    // Snapshots of loaded C tiles for their saved copies (dc->snap) when they take at most an
    // eighth of the budget (a small cache keeps its slots for reuse: out-of-core calls).
    int snaps = c->c_read && rt->opts.save_c && !(c->l3 && c->beta_zero) &&
                (int64_t)(budget / tile_bytes) >= 8 * (int64_t)TL_DEPTH_MAX &&
                (int64_t)(budget / tile_bytes) >= (int64_t)need + TL_DEPTH_MAX;
    if (snaps) budget -= tile_bytes * TL_DEPTH_MAX;
    int64_t want = (int64_t)(budget / tile_bytes);
    if (useful < need) useful = need;
    if (want > useful) want = useful;
    if (want > 1 << 20) want = 1 << 20;
    if (want < need)
        TS_RAISE(TS_ERR_DEVMEM,
                 "tile runtime: device %d has room for %lld tiles of %lldx%lld %c (%zu bytes each, %zu bytes "
                 "usable), needs at least %d; use a smaller tile (TESSERA_TILE) or a lower depth",
                 d, (long long)want, (long long)c->T, (long long)c->T, c->prec, tile_bytes, budget, need);
    dc->ord = d;
    dc->nslots = (int)want;
    dc->slots = calloc((size_t)dc->nslots, sizeof *dc->slots);
    dc->mapA = malloc(sizeof(int) * (size_t)(nA > 0 ? nA : 1));
    dc->mapB = malloc(sizeof(int) * (size_t)(nB > 0 ? nB : 1));
    dc->rowcnt = calloc((size_t)c->mt, sizeof(int));
    dc->colcnt = calloc((size_t)c->nt, sizeof(int));
    if (!dc->slots || !dc->mapA || !dc->mapB || !dc->rowcnt || !dc->colcnt)
        TS_RAISE(TS_ERR_NOMEM, "tile runtime: out of host memory for the cache of device %d", d);
    memset(dc->mapA, 0xff, sizeof(int) * (size_t)(nA > 0 ? nA : 1));
    memset(dc->mapB, 0xff, sizeof(int) * (size_t)(nB > 0 ? nB : 1));
    void *block = NULL;
    TS_CHECK(ts_dmalloc(dev, tile_bytes * (size_t)(dc->nslots + (snaps ? TL_DEPTH_MAX : 0)), &block));
    for (int i = 0; i < TL_DEPTH_MAX; i++)
        dc->snap[i] = snaps ? (char *)block + (size_t)(dc->nslots + i) * tile_bytes : NULL;
    for (int s = 0; s < dc->nslots; s++) {
        dc->slots[s].ptr = (char *)block + (size_t)s * tile_bytes;
        dc->slots[s].alias = -1;
        TS_CHECK(ts_event_create(dev, &dc->slots[s].ready));
    }
    dc->cursor = (int64_t)d * c->ntasks / (c->nworkers > 0 ? c->nworkers : 1);
    if (rt->opts.grid && !c->l3) dc->cursor = tl_grid_origin(c->mt, c->nt, rt->ndev, d);
    else if (rt->opts.grid && c->l3->nchains == 0) dc->cursor = tl_l3_origin(c, rt->ndev, d);
    dc->origin = dc->cursor;
    return 0;
}

// The grid of the devices' starting blocks: pr x pc = ndev, the pair whose block
// (mt/pr x nt/pc tiles) needs the fewest panels (mt/pr + nt/pc); device d starts at the corner of
// block (d / pc, d % pc). Each device then reads the block rows of A of its own block row and the
// block columns of B of its own block column, every panel shared with the devices of the same
// block row or column (by peer copies), instead of all of A (origins along block row 0).
void tl_grid_shape(int64_t mt, int64_t nt, int ndev, int *pr, int *pc) {
    int br = 1;
    double best = -1;
    for (int r = 1; r <= ndev; r++) {
        if (ndev % r) continue;
        int q = ndev / r;
        double cost = (double)mt / r + (double)nt / q;
        if (r <= mt && q <= nt && (best < 0 || cost < best - 1e-9)) best = cost, br = r;
    }
    *pr = br, *pc = ndev / br;
}

int64_t tl_grid_origin(int64_t mt, int64_t nt, int ndev, int d) {
    int pr, pc;
    if (ndev <= 1) return 0;
    tl_grid_shape(mt, nt, ndev, &pr, &pc);
    int64_t i0 = (int64_t)(d / pc) * mt / pr, j0 = (int64_t)(d % pc) * nt / pc;
    return i0 + j0 * mt;
}

void tl_cache_teardown(tl_call *c, int d) {
    tl_devcall *dc = &c->dc[d];
    ts_device *dev = c->rt->dev[d].dev;
    if (dc->slots) {
        for (int s = 0; s < dc->nslots; s++)
            if (dc->slots[s].ready) ts_event_destroy(dc->slots[s].ready);
        if (dc->nslots > 0 && dc->slots[0].ptr) ts_dfree(dev, dc->slots[0].ptr);
    }
    free(dc->slots), free(dc->mapA), free(dc->mapB), free(dc->rowcnt), free(dc->colcnt);
    dc->slots = NULL, dc->mapA = dc->mapB = dc->rowcnt = dc->colcnt = NULL;
}

// ---------------------------------------------------------------- maps

static int *map_of(tl_call *c, int d, int mat, int64_t idx) {
    return mat == TL_A ? &c->dc[d].mapA[idx] : &c->dc[d].mapB[idx];
}

static void count_tile(tl_call *c, int d, int mat, int64_t idx, int delta) {
    if (c->l3) return; // level-3 tasks score by their own operand lists (tl_l3_score)
    if (mat == TL_A) c->dc[d].rowcnt[idx % c->mt] += delta;
    else c->dc[d].colcnt[idx / c->kt] += delta;
}

static void slot_clear(tl_call *c, int d, int s) {
    tl_slot *sl = &c->dc[d].slots[s];
    if (sl->alias >= 0) { // a published C tile
        *map_of(c, d, TL_B, sl->alias) = -1;
        sl->alias = -1;
    }
    if (sl->mat == TL_A || sl->mat == TL_B) {
        *map_of(c, d, sl->mat, sl->idx) = -1;
        count_tile(c, d, sl->mat, sl->idx, -1);
    }
    sl->mat = TL_NONE;
    sl->idx = -1;
}

void tl_slot_forget(tl_call *c, int d, int s) { slot_clear(c, d, s); }

// ---------------------------------------------------------------- pending releases

static void release(tl_call *c, const tl_ref *r) {
    tl_slot *sl = &c->dc[r->dev].slots[r->slot];
    sl->readers--;
    pthread_cond_broadcast(&c->cond); // a device may wait for room in this cache
}

int tl_ring_retire(tl_call *c, int d, int wait) {
    tl_devcall *dc = &c->dc[d];
    while (dc->ring_count > 0) {
        tl_pending *p = &dc->ring[dc->ring_head];
        int q = ts_event_query(p->ev);
        if (q == 0 && wait) {
            // Only the owner touches its ring, so the entry stays while the lock is dropped.
            pthread_mutex_unlock(&c->lock);
            int rc = ts_event_sync(p->ev);
            pthread_mutex_lock(&c->lock);
            if (rc < 0) return tl_event_failed(c, d, rc);
            q = 1;
        }
        if (q < 0) return tl_event_failed(c, d, q);
        if (q == 0) break;
        for (int r = 0; r < p->nrefs; r++) release(c, &p->refs[r]);
        dc->ring_head = (dc->ring_head + 1) % TL_RING;
        dc->ring_count--;
        wait = 0; // waited for one; the rest only if already complete
    }
    return 0;
}

int tl_ring_push(tl_call *c, int d, ts_stream *st, const tl_ref *refs, int nrefs) {
    tl_devcall *dc = &c->dc[d];
    while (dc->ring_count == TL_RING) {
        TS_CHECK(tl_ring_retire(c, d, 1));
        if (c->abort) return aborted(c);
    }
    int at = (dc->ring_head + dc->ring_count) % TL_RING;
    tl_pending *p = &dc->ring[at];
    p->ev = c->rt->dev[d].ring_ev[at];
    p->nrefs = nrefs;
    for (int r = 0; r < nrefs; r++) p->refs[r] = refs[r];
    int rc = ts_event_record(p->ev, st);
    if (rc < 0) {
        // Not queued: nothing will complete it, release now.
        for (int r = 0; r < nrefs; r++) release(c, &refs[r]);
        return tl_call_fail(c, rc);
    }
    dc->ring_count++;
    return 0;
}

// ---------------------------------------------------------------- flights (C tiles on their way)

int tl_flight_retire(tl_call *c, int d, int wait) {
    tl_devcall *dc = &c->dc[d];
    while (dc->flight_count > 0) {
        tl_flight *f = &dc->flight[dc->flight_head];
        int q = ts_event_query(f->out);
        if (q == 0 && wait) {
            pthread_mutex_unlock(&c->lock);
            int rc = ts_event_sync(f->out);
            pthread_mutex_lock(&c->lock);
            if (rc < 0) return tl_event_failed(c, d, rc);
            q = 1;
        }
        if (q < 0) return tl_event_failed(c, d, q);
        if (q == 0) break;
        tl_cache_drop_c(c, d, f->cslot);
        tl_sched_done(c, f->task, d);
        tl_count_dev_tile(c, d, f->task);
        dc->tiles_done++;
        dc->flight_head = (dc->flight_head + 1) % TL_DEPTH_MAX;
        dc->flight_count--;
        wait = 0;
    }
    return 0;
}

// ---------------------------------------------------------------- slots

// An empty slot, else the least recently used one nobody reads (C slots are never victims).
static int find_victim(tl_call *c, int d) {
    tl_devcall *dc = &c->dc[d];
    int best = -1;
    for (int s = 0; s < dc->nslots; s++) {
        tl_slot *sl = &dc->slots[s];
        if (sl->readers > 0) continue;
        if (sl->mat == TL_NONE) return s;
        if (sl->mat == TL_C) continue;
        if (best < 0 || sl->stamp < dc->slots[best].stamp) best = s;
    }
    return best;
}

void tl_wait_change(tl_call *c) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 5 * 1000 * 1000;
    if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
    pthread_cond_timedwait(&c->cond, &c->lock, &ts);
}

// A slot to fill: empty or evicted. Makes room by retiring this device's own completed work first.
static int take_slot(tl_call *c, int d, int *slot) {
    tl_devcall *dc = &c->dc[d];
    for (;;) {
        if (c->abort) return aborted(c);
        int s = find_victim(c, d);
        if (s >= 0) {
            if (dc->slots[s].mat != TL_NONE) dc->evictions++;
            slot_clear(c, d, s);
            *slot = s;
            return 0;
        }
        if (dc->ring_count > 0) TS_CHECK(tl_ring_retire(c, d, 1));
        else if (dc->flight_count > 0) TS_CHECK(tl_flight_retire(c, d, 1));
        else tl_wait_change(c); // every slot is read by peers' copies, which finish without us
    }
}

int tl_cache_get_c(tl_call *c, int d, int *slot) {
    TS_CHECK(take_slot(c, d, slot));
    tl_slot *sl = &c->dc[d].slots[*slot];
    sl->mat = TL_C;
    sl->readers = 1;
    sl->stamp = ++c->clock;
    return 0;
}

void tl_cache_drop_c(tl_call *c, int d, int slot) {
    tl_slot *sl = &c->dc[d].slots[slot];
    if (sl->alias >= 0) {
        // written back and published: the slot stays as the operand tile it is (Shared, like a
        // loaded one); the flight's reference goes, the queued readers' stay
        sl->mat = TL_B;
        sl->idx = sl->alias;
        sl->alias = -1;
        sl->readers--;
        sl->stamp = ++c->clock;
    } else {
        sl->readers = 0;
        sl->mat = TL_NONE; // written back: Invalid
    }
    pthread_cond_broadcast(&c->cond);
}

int tl_cache_publish(tl_call *c, int d, int slot, int64_t key) {
    tl_devcall *dc = &c->dc[d];
    if (dc->mapB[key] >= 0) return 0;
    dc->mapB[key] = slot;
    dc->slots[slot].alias = key;
    return 1;
}

void tl_cache_drop_all_c(tl_call *c, int d) {
    tl_devcall *dc = &c->dc[d];
    for (int s = 0; s < dc->nslots; s++) {
        if (dc->slots[s].mat != TL_C) continue;
        slot_clear(c, d, s);
        dc->slots[s].readers = 0;
    }
}

// Host address and 2-D shape of tile idx of A or B as stored (op applied by the GEMM, not the copy).
static void tile_geom(const tl_call *c, int mat, int64_t idx, const char **src, size_t *spitch, size_t *width,
                      size_t *rows, int64_t *ld) {
    int64_t T = c->T, r, col, nr, nc; // stored block: rows r.., cols col.., nr x nc
    if (c->l3) {
        int prep;
        char uplo;
        tl_l3_tile_geom(c, mat, idx, src, spitch, width, rows, &prep, &uplo);
        *ld = (int64_t)(*width / c->es);
        return;
    }
    if (mat == TL_A) {
        int64_t i = idx % c->mt, l = idx / c->mt, mb = tl_dim(c->m, T, i), kb = tl_dim(c->k, T, l);
        if (c->ta == 'N') r = i * T, col = l * T, nr = mb, nc = kb;
        else r = l * T, col = i * T, nr = kb, nc = mb;
        *src = c->A + ((size_t)r + (size_t)col * (size_t)c->lda) * c->es;
        *spitch = (size_t)c->lda * c->es;
    } else {
        int64_t l = idx % c->kt, j = idx / c->kt, kb = tl_dim(c->k, T, l), nb = tl_dim(c->n, T, j);
        if (c->tb == 'N') r = l * T, col = j * T, nr = kb, nc = nb;
        else r = j * T, col = l * T, nr = nb, nc = kb;
        *src = c->B + ((size_t)r + (size_t)col * (size_t)c->ldb) * c->es;
        *spitch = (size_t)c->ldb * c->es;
    }
    *width = (size_t)nr * c->es;
    *rows = (size_t)nc;
    *ld = nr;
}

// A peer whose load streams already failed, before its worker has noticed (it is not marked dead
// yet): its slots' ready events may be recorded after the failure, and a copy waiting on one fails
// this device too. Two healthy devices could then take each other down in turn, each revival
// leaving the other's copies doomed (3 simulated devices, one copy fault: ~3% of calls ran out of
// revivals). A non-blocking query; the peer is skipped.
static int peer_failed(tl_call *c, int e) {
    tl_devrt *er = &c->rt->dev[e];
    ts_stream *st[2] = {er->s_h2d, er->s_p2p};
    for (int i = 0; i < 2; i++)
        if (st[i] && ts_stream_error(st[i]) < 0) {
            ts_error_clear();
            return 1;
        }
    return 0;
}

// A peer whose cache holds (or is loading) the tile, nearest ordinal first; -1 if none.
static int find_peer(tl_call *c, int d, int mat, int64_t idx, int *pslot) {
    ts_tiles *rt = c->rt;
    if (!rt->opts.peer) return -1;
    for (int dist = 1; dist < rt->ndev; dist++)
        for (int sgn = 0; sgn < 2; sgn++) {
            int e = sgn ? d - dist : d + dist;
            if (e < 0 || e >= rt->ndev || !c->dc[e].slots || c->dc[e].dead) continue;
            int s = *map_of(c, e, mat, idx);
            if (s < 0 || !ts_device_can_peer(rt->dev[d].dev, rt->dev[e].dev) || peer_failed(c, e)) continue;
            *pslot = s;
            return e;
        }
    return -1;
}

// opts.h2d_ahead: waits until fewer than that many of device d's host loads are unfinished
// (dropping the lock while it waits for the oldest). A slot's ready event may have been recorded
// again for a later load of the slot: waiting for that one waits longer, never forever.
static int h2d_room(tl_call *c, int d) {
    tl_devcall *dc = &c->dc[d];
    int cap = c->rt->opts.h2d_ahead;
    if (cap <= 0) return 0;
    while (dc->hq_count > 0) {
        ts_event *ev = dc->slots[dc->hq[dc->hq_head]].ready;
        int q = ts_event_query(ev);
        if (q < 0) return tl_event_failed(c, d, q);
        if (q == 0) {
            if (dc->hq_count < cap) break;
            // only this worker records this device's load events and fills its queue
            pthread_mutex_unlock(&c->lock);
            int rc = ts_event_sync(ev);
            pthread_mutex_lock(&c->lock);
            if (rc < 0) return tl_event_failed(c, d, rc);
            if (c->abort) return aborted(c);
        }
        dc->hq_head = (dc->hq_head + 1) % TL_HQ;
        dc->hq_count--;
    }
    return 0;
}

// Whether matrix mat's tiles are also read transposed (TS_TILE_TRANS): keys idx and idx ^ 1 are then
// the plain and the transposed copy of one block, each the other's transpose (load_tile).
static int trans_pair(const tl_call *c, int mat) { return c->l3 && c->l3->prep_kind[mat] == TS_TILE_TRANS; }

// Queues the load of (mat, idx) into slot s of device d: from a peer's cache or from the host.
static int load_tile(tl_call *c, int d, int mat, int64_t idx, int s) {
    tl_devrt *dr = &c->rt->dev[d];
    tl_devcall *dc = &c->dc[d];
    tl_slot *sl = &dc->slots[s];
    const char *src;
    size_t spitch, width, rows;
    int64_t ld;
    tile_geom(c, mat, idx, &src, &spitch, &width, &rows, &ld);
    int rc;
    // A matrix whose tiles are also read transposed (TS_TILE_TRANS): keys idx and idx ^ 1 (plain and
    // transposed copy of one block) are each other's transposes. A miss on one is served, before any
    // host load, from the other: by a kernel from this device's copy, else from a peer's copy of the
    // tile itself (below), else from a peer's copy of the other, transposed here after the copy; so a
    // block comes from the host once, whichever form a device asks for first.
    const int tp = trans_pair(c, mat);
    int loc = tp ? *map_of(c, d, mat, idx ^ 1) : -1;
    if (loc >= 0) {
        tl_slot *rsl = &dc->slots[loc];
        rsl->readers++;
        tl_ref ref = {d, loc};
        rc = ts_stream_wait_event(dr->s_p2p, rsl->ready);
        if (rc >= 0) rc = ts_dev_tile_trans(dr->s_p2p, c->prec, (int64_t)rows, rsl->ptr, ld, sl->ptr, ld);
        if (rc >= 0) rc = ts_event_record(sl->ready, dr->s_p2p);
        if (rc < 0) {
            rsl->readers--;
            return tl_call_fail(c, rc);
        }
        dc->transposes++;
        TS_CHECK(tl_ring_push(c, d, dr->s_p2p, &ref, 1));
        return 0;
    }
    int ps = -1, e = find_peer(c, d, mat, idx, &ps), flip = 0;
    if (e < 0 && tp) flip = (e = find_peer(c, d, mat, idx ^ 1, &ps)) >= 0;
    if (e >= 0) {
        tl_slot *psl = &c->dc[e].slots[ps];
        psl->readers++;
        tl_ref ref = {e, ps};
        rc = ts_stream_wait_event(dr->s_p2p, psl->ready);
        if (rc >= 0)
            rc = ts_copy_peer2d_async(dr->s_p2p, dr->dev, sl->ptr, width, c->rt->dev[e].dev, psl->ptr, width, width,
                                      rows);
        if (rc >= 0 && flip) rc = ts_dev_tile_prep(dr->s_p2p, c->prec, TS_TILE_TRANS, 'L', ld, sl->ptr, ld);
        if (rc >= 0) rc = ts_event_record(sl->ready, dr->s_p2p);
        if (rc < 0) {
            psl->readers--;
            return tl_call_fail(c, rc);
        }
        dc->peer_fetches++;
        dc->transposes += flip;
        dc->bytes_p2p += width * rows;
        TS_CHECK(tl_ring_push(c, d, dr->s_p2p, &ref, 1));
    } else {
        rc = ts_copy2d_async(dr->s_h2d, TS_COPY_H2D, sl->ptr, width, src, spitch, width, rows);
        if (rc >= 0 && c->l3) { // a diagonal tile is prepared once, on its cached copy (peers copy it prepared)
            int prep;
            char uplo;
            tl_l3_tile_geom(c, mat, idx, &src, &spitch, &width, &rows, &prep, &uplo);
            if (prep != TS_TILE_NONE) rc = ts_dev_tile_prep(dr->s_h2d, c->prec, (ts_tile_kind)prep, uplo, ld, sl->ptr, ld);
        }
        if (rc >= 0) rc = ts_event_record(sl->ready, dr->s_h2d);
        if (rc < 0) return tl_call_fail(c, rc);
        dc->bytes_h2d += width * rows;
        if (c->rt->opts.h2d_ahead > 0 && dc->hq_count < TL_HQ) {
            dc->hq[(dc->hq_head + dc->hq_count) % TL_HQ] = s;
            dc->hq_count++;
        }
    }
    return 0;
}

int tl_cache_get(tl_call *c, int d, int mat, int64_t idx, int *slot) {
    tl_devcall *dc = &c->dc[d];
    int s = *map_of(c, d, mat, idx);
    if (s >= 0) {
        dc->hits++;
    } else {
        // Room for a host load first (opts.h2d_ahead), while the tile is not in this device's map:
        // a peer that looked it up during the wait would copy a slot whose ready event is stale.
        // The wait may let a peer start loading it: load_tile then takes it from there.
        int ps; // (or served by its transpose, load_tile)
        if (find_peer(c, d, mat, idx, &ps) < 0 &&
            !(trans_pair(c, mat) && (*map_of(c, d, mat, idx ^ 1) >= 0 || find_peer(c, d, mat, idx ^ 1, &ps) >= 0)))
            TS_CHECK(h2d_room(c, d));
        dc->misses++;
        TS_CHECK(take_slot(c, d, &s));
        // take_slot may have dropped the lock, but only this worker fills this device's cache.
        tl_slot *sl = &dc->slots[s];
        sl->mat = mat;
        sl->idx = idx;
        *map_of(c, d, mat, idx) = s;
        count_tile(c, d, mat, idx, +1);
        sl->readers++; // held while loading, so that a wait in load_tile cannot evict it
        int rc = load_tile(c, d, mat, idx, s);
        sl->readers--;
        if (rc < 0) {
            slot_clear(c, d, s);
            return rc;
        }
    }
    dc->slots[s].readers++;
    dc->slots[s].stamp = ++c->clock;
    *slot = s;
    return 0;
}
