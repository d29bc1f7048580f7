// ts_tiles_worker.c: the device workers (pipelined C-tile tasks over four streams, and a fifth for saved C tiles) and the CPU worker.
//
// A device worker runs one task at a time on the host side but keeps up to c->depth C tiles in
// flight on the device: while the GEMMs of one tile run on the compute stream, the loads of the
// next tile's A and B tiles run on the H2D (or peer) stream and the copy out of the previous C tile
// on the D2H stream (BLASX's stream interleaving, TianHe's software pipelining). Streams are
// ordered by events: a GEMM waits for the ready events of its tiles, the copy out for the last GEMM.
//
// Failures: a device whose stream reports an error (a failed copy or kernel, a lost device) is
// dropped for the rest of the call (tl_dev_failed) and its unfinished tiles go back to the queue.
// A C tile is written to host memory only by its copy out, after its whole k-loop; a tile whose
// copy out did not complete may be torn (partly new), which matters when beta != 0 because a
// re-run reads C again (and an in-place TRMM/TRSM reads its tiles as operands). So with save_c the
// loaded C tile is copied device-to-host into a pinned save buffer on the save stream, its GEMMs
// wait for that copy (run_task), and a failed device's unconfirmed tiles are restored from it
// (after its streams stopped) before they are re-queued.
#include "runtime/ts_tiles_internal.h"

#include "core/ts_error.h"
#include "core/ts_log.h"
#include "core/ts_timer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double tl_task_flops(const tl_call *c, int t) {
    if (c->l3) return tl_l3_task_flops(c, t);
    int64_t mb = tl_dim(c->m, c->T, t % c->mt), nb = tl_dim(c->n, c->T, t / c->mt);
    return ts_gemm_flops(c->prec, mb, nb, c->k);
}

// Host C tile t <- its saved copy (contiguous).
static void tile_restore(tl_call *c, int t, const void *buf) {
    int64_t T = c->T, i, j;
    tl_task_tile(c, t, &i, &j);
    int64_t mb = tl_dim(c->m, T, i), nb = tl_dim(c->n, T, j);
    char *hc = c->C + ((size_t)(i * T) + (size_t)(j * T) * (size_t)c->ldc) * c->es;
    size_t w = (size_t)mb * c->es;
    for (int64_t q = 0; q < nb; q++) {
        memcpy(hc + (size_t)q * (size_t)c->ldc * c->es, (const char *)buf + (size_t)q * w, w);
    }
}

// This flight's save buffer (pinned; grown when a call's tiles are larger than earlier calls').
static int save_buffer(tl_call *c, tl_devrt *dr, int at) {
    const size_t need = (size_t)c->T * (size_t)c->T * c->es;
    if (dr->save_bytes < need) {
        tl_save_free(c->rt, dr);
        dr->save_bytes = need;
    }
    if (!dr->save[at]) TS_CHECK(ts_host_alloc(c->rt->devs, dr->save_bytes, &dr->save[at]));
    return 0;
}

void tl_flag_set(void *p) { *(volatile int *)p = 1; }
#define flag_set tl_flag_set

// Stamps a trace field from a stream callback (or does nothing when tracing is off).
static int stamp_on(tl_call *c, ts_stream *st, int rec, int field) {
    if (rec < 0) return 0;
    return ts_host_callback(st, tl_trace_stamp, &c->trace[rec].t[field]);
}

// Queues one C tile: C in (unless beta is 0), the k-loop of GEMMs, C out. Lock held (may drop it).
static int run_task(tl_call *c, int d, int t) {
    tl_devrt *dr = &c->rt->dev[d];
    tl_devcall *dc = &c->dc[d];
    int64_t T = c->T, i, j;
    tl_task_tile(c, t, &i, &j);
    int64_t mb = tl_dim(c->m, T, i), nb = tl_dim(c->n, T, j);
    char *hc = c->C + ((size_t)(i * T) + (size_t)(j * T) * (size_t)c->ldc) * c->es;
    size_t cw = (size_t)mb * c->es, cp = (size_t)c->ldc * c->es;
    int cs, rc;
    dc->building = t;
    TS_CHECK(tl_cache_get_c(c, d, &cs));
    tl_slot *csl = &dc->slots[cs];
    int at = (dc->flight_head + dc->flight_count) % TL_DEPTH_MAX;
    tl_flight *f = &dc->flight[at];
    f->task = t, f->cslot = cs, f->comp = dr->comp_ev[at], f->out = dr->out_ev[at];
    f->out_recorded = 0, f->saved = 0;
    f->trace = tl_trace_new(c, d, t);
    if ((rc = stamp_on(c, dr->s_h2d, f->trace, 0)) < 0) goto fail;
    // The original C tile is kept aside (save_c) when a re-run would read it: beta != 0, or an in-place
    // level-3 routine (TRMM, TRSM) whose tiles are operands too. It is loaded for that even when beta
    // is 0 (the first GEMM's beta 0 then ignores it).
    const int save = c->c_read && c->rt->opts.save_c;
    // TRMM (in place, beta 0): the tile's original is one of its own operands, so it is saved from
    // that operand's slot once loaded (tl_l3_queue) instead of being loaded a second time as C.
    const int save_op = save && c->l3 && c->beta_zero;
    const void *snap = save && !save_op ? dc->snap[at] : NULL;
    if (!c->beta_zero || (save && !save_op)) {
        rc = ts_copy2d_async(dr->s_h2d, TS_COPY_H2D, csl->ptr, cw, hc, cp, cw, (size_t)nb);
        if (rc >= 0 && snap) rc = ts_copy_async(dr->s_h2d, TS_COPY_D2D, dc->snap[at], csl->ptr, cw * (size_t)nb);
        if (rc >= 0) rc = ts_event_record(csl->ready, dr->s_h2d);
        if (rc >= 0) rc = ts_stream_wait_event(dr->s_comp, csl->ready);
        if (rc < 0) goto fail;
        dc->bytes_h2d += cw * (size_t)nb;
        if (save) {
            // The original C tile goes from the device slot to this flight's pinned save buffer on
            // its own stream while earlier tiles compute; the GEMMs (and so the copy out) wait for
            // it. `saved` is set by a callback after the copy: unset, the copy out never started.
            if ((rc = save_buffer(c, dr, at)) < 0) goto fail;
            rc = ts_stream_wait_event(dr->s_save, csl->ready);
            if (rc >= 0)
                rc = ts_copy2d_async(dr->s_save, TS_COPY_D2H, dr->save[at], cw, snap ? snap : csl->ptr, cw, cw,
                                     (size_t)nb);
            if (rc >= 0) rc = ts_host_callback(dr->s_save, flag_set, (void *)&f->saved);
            if (rc >= 0) rc = ts_event_record(dr->save_ev[at], dr->s_save);
            // from the snapshot the GEMMs go on at once (the copy out waits for the save below)
            if (rc >= 0 && !snap) rc = ts_stream_wait_event(dr->s_comp, dr->save_ev[at]);
            if (rc < 0) goto fail;
            dc->bytes_save += cw * (size_t)nb;
        }
    }
    if (c->l3) { // a level-3 task: its own list of tile products
        if (save_op && (rc = save_buffer(c, dr, at)) < 0) goto fail;
        if ((rc = tl_l3_queue(c, d, t, cs, f->trace, save_op ? at : -1)) < 0) goto fail;
        // A TRSM tile that later tasks of its chain read: published in this cache once computed
        // (the slot's ready event now follows the compute), so that the chain's next task can
        // start here before the write-back and read it from the device (opts.forward).
        int64_t key = c->rt->opts.forward ? tl_l3_out_key(c, t) : -1;
        if (key >= 0) {
            if ((rc = ts_event_record(csl->ready, dr->s_comp)) < 0) goto fail;
            c->pub[t] = (unsigned char)tl_cache_publish(c, d, cs, key);
        }
    }
    const int64_t l0 = c->l3 ? 0 : tl_k_start(c->rt->opts.grid, c->mt, c->nt, c->kt, i, j);
    for (int64_t s = 0; !c->l3 && s < c->kt; s++) {
        const int64_t l = (l0 + s) % c->kt; // k-steps from l0 on (opts.grid 2), beta with the first
        int64_t kb = tl_dim(c->k, T, l);
        int sa, sb;
        // The C slot cannot move while we wait here: it is read (readers = 1) until the flight retires.
        if ((rc = tl_cache_get(c, d, TL_A, i + l * c->mt, &sa)) < 0) goto fail;
        if ((rc = tl_cache_get(c, d, TL_B, l + j * c->kt, &sb)) < 0) {
            dc->slots[sa].readers--;
            goto fail;
        }
        tl_slot *a = &dc->slots[sa], *b = &dc->slots[sb];
        rc = ts_stream_wait_event(dr->s_comp, a->ready);
        if (rc >= 0) rc = ts_stream_wait_event(dr->s_comp, b->ready);
        if (rc >= 0 && s == 0) rc = stamp_on(c, dr->s_comp, f->trace, 2);
        if (rc >= 0)
            rc = ts_dev_gemm(dr->s_comp, c->engine, c->prec, c->ta, c->tb, mb, nb, kb, c->alpha, a->ptr,
                             c->ta == 'N' ? mb : kb, b->ptr, c->tb == 'N' ? kb : nb, s == 0 ? c->beta : c->one,
                             csl->ptr, mb);
        tl_ref refs[2] = {{d, sa}, {d, sb}};
        if (rc < 0) {
            a->readers--, b->readers--;
            goto fail;
        }
        if ((rc = tl_ring_push(c, d, dr->s_comp, refs, 2)) < 0) goto fail;
    }
    if (c->kt == 0 && !c->l3) { // k == 0 is handled before the workers start; keep the invariant anyway
        rc = TS_ERROR(TS_ERR_INTERNAL, "tile runtime: task without k-steps");
        goto fail;
    }
    if ((rc = stamp_on(c, dr->s_h2d, f->trace, 1)) < 0) goto fail;
    if ((rc = stamp_on(c, dr->s_comp, f->trace, 3)) < 0) goto fail;
    // From here on the flight is what tl_dev_failed looks at: the copy out may touch host C.
    dc->flight_count++;
    dc->building = -1;
    rc = ts_event_record(f->comp, dr->s_comp);
    if (rc >= 0) rc = ts_stream_wait_event(dr->s_d2h, f->comp);
    if (rc >= 0 && (save_op || snap)) rc = ts_stream_wait_event(dr->s_d2h, dr->save_ev[at]); // the original is safe first
    if (rc >= 0) rc = stamp_on(c, dr->s_d2h, f->trace, 4);
    size_t out_bytes = cw * (size_t)nb;
    if (rc >= 0 && c->l3) rc = tl_l3_copy_out(c, d, t, cs, &out_bytes);
    else if (rc >= 0) rc = ts_copy2d_async(dr->s_d2h, TS_COPY_D2H, hc, cp, csl->ptr, cw, cw, (size_t)nb);
    if (rc >= 0) rc = stamp_on(c, dr->s_d2h, f->trace, 5);
    if (rc >= 0) rc = ts_event_record(f->out, dr->s_d2h);
    if (rc < 0) goto fail;
    f->out_recorded = 1;
    dc->bytes_d2h += out_bytes;
    return 0;
fail:
    return tl_call_fail(c, rc);
}

int tl_is_device_error(int rc) {
    return rc == TS_ERR_DEVICE || rc == TS_ERR_DEVICE_LOST || rc == TS_ERR_CUDA || rc == TS_ERR_CUBLAS;
}

// Devices being judged (tl_dev_failed, lock released while their streams drain) may yet recover:
// they count as alive until judged, or a peer's failure judged meanwhile would end the call.
int tl_sched_alive(const tl_call *c) { return c->rt->ndev - c->ndead + c->njudging + (c->rt->cpu_on ? 1 : 0); }

void tl_dev_failed(tl_call *c, int d, int rc) {
    tl_devcall *dc = &c->dc[d];
    tl_devrt *dr = &c->rt->dev[d];
    if (dc->dead || c->abort) return;
    if (!tl_is_device_error(rc)) {
        tl_call_abort(c, rc);
        return;
    }
    dc->dead = 1;
    c->ndead++;
    c->njudging++;
    char why[400];
    snprintf(why, sizeof why, "%.390s", ts_error_last()->code == rc ? ts_error_last()->message : ts_status_name(rc));
    // Nothing of this device may run any more before its tiles are judged: wait for its streams
    // (a lost device returns at once; a sticky error skips the rest of the queued work).
    pthread_mutex_unlock(&c->lock);
    ts_stream *st[TL_NSTREAMS] = {dr->s_h2d, dr->s_p2p, dr->s_comp, dr->s_d2h, dr->s_save};
    // A failure that is only the consequence of another device's (a stream waited on an event of a
    // failed or lost peer: a peer copy) leaves this device healthy: it recovers below.
    int waited = 0, other = 0;
    for (int s = 0; s < TL_NSTREAMS; s++) {
        if (!st[s] || ts_stream_sync(st[s]) >= 0) continue;
        if (strstr(ts_error_last()->message, "waited on an event")) waited = 1;
        else other = 1;
    }
    int consequence = waited && !other;
    pthread_mutex_lock(&c->lock);
    c->njudging--;
    // References it holds on slots (its own and peers') go: none of its work runs any more.
    while (dc->ring_count > 0) {
        tl_pending *p = &dc->ring[dc->ring_head];
        for (int r = 0; r < p->nrefs; r++) {
            c->dc[p->refs[r].dev].slots[p->refs[r].slot].readers--;
        }
        dc->ring_head = (dc->ring_head + 1) % TL_RING;
        dc->ring_count--;
    }
    dc->hq_count = 0; // its host loads are not waited for any more (events of failed streams)
    int given = 0;
    while (dc->flight_count > 0) {
        tl_flight *f = &dc->flight[dc->flight_head];
        if (f->out_recorded && ts_event_query(f->out) == 1) { // written back: done
            tl_sched_done(c, f->task, d);
            tl_count_dev_tile(c, d, f->task);
            dc->tiles_done++;
        } else if (!c->c_read || c->rt->opts.save_c) {
            // beta == 0: C is not read, a torn tile is simply overwritten by the re-run. With
            // save_c every flight's C tile was being saved: not saved yet, its copy out (which
            // waits for the save) never started.
            if (f->saved) tile_restore(c, f->task, dr->save[(dc->flight_head) % TL_DEPTH_MAX]);
            tl_sched_requeue(c, f->task, 1);
            given++;
        } else {
            c->err = TS_ERR_DEVICE;
            snprintf(c->errmsg, sizeof c->errmsg,
                     "tile runtime: device %d failed (%s) while C tile %d may have been written back in part; "
                     "it cannot be re-run without its original (TESSERA_TILES_SAVE_C=1 keeps one)", d, why, f->task);
            c->abort = 1;
        }
        dc->flight_head = (dc->flight_head + 1) % TL_DEPTH_MAX;
        dc->flight_count--;
    }
    if (dc->building >= 0) { // queued in part, host C untouched
        tl_sched_requeue(c, dc->building, 1);
        dc->building = -1;
        given++;
    }
    while (dc->rs_count > 0) {
        tl_sched_requeue(c, dc->rs[--dc->rs_count], 0); // reserved, never started: not a re-run
    }
    tl_cache_drop_all_c(c, d); // its cache is gone for the peers (find_peer skips it too)
    if (consequence && !c->abort && dc->revivals < TL_REVIVALS) {
        // Its own streams failed only by waiting on a peer: new streams, an empty cache (tiles may
        // be missing or stale; readers held by peers' copies stay), and it takes tasks again.
        for (int s = 0; s < dc->nslots; s++)
            if (dc->slots[s].mat == TL_A || dc->slots[s].mat == TL_B) tl_slot_forget(c, d, s);
        if (tl_streams_reset(c->rt, d) == 0) {
            dc->revivals++;
            dc->dead = 0;
            c->ndead--;
            TS_LOG_W("tile runtime: device %d: its streams failed waiting on a failed peer (%s); %d C tiles given back, "
                     "the device goes on with new streams", d, why, given);
            pthread_cond_broadcast(&c->cond);
            return;
        }
        ts_error_clear();
    }
    TS_LOG_W("tile runtime: device %d failed during the call (%s); %d of its C tiles are run again elsewhere", d, why,
             given);
    if (!c->abort && tl_sched_alive(c) == 0) {
        c->err = rc;
        snprintf(c->errmsg, sizeof c->errmsg, "tile runtime: no worker left (device %d failed: %s)", d, why);
        c->abort = 1;
    }
    pthread_cond_broadcast(&c->cond);
}

void *tl_dev_worker(void *arg) {
    tl_worker_arg *wa = arg;
    tl_call *c = wa->c;
    int d = wa->d;
    tl_devcall *dc = &c->dc[d];
    int depth = c->depth;
    int rc = 0;
    pthread_mutex_lock(&c->lock);
    for (;;) {
        while (!c->abort && !dc->dead) {
            if ((rc = tl_flight_retire(c, d, dc->flight_count >= depth)) < 0) break;
            if (dc->flight_count >= depth) continue;
            if ((rc = tl_ring_retire(c, d, 0)) < 0) break;
            int t = tl_sched_next_dev(c, d);
            if (t < 0) {
                if (dc->flight_count > 0) {
                    if ((rc = tl_flight_retire(c, d, 1)) < 0) break;
                    continue;
                }
                if (c->ndone >= c->ntasks) break;
                // Tasks still run elsewhere: a failed worker may give some back.
                tl_wait_change(c);
                continue;
            }
            if ((rc = run_task(c, d, t)) < 0) break;
        }
        while (rc >= 0 && !c->abort && !dc->dead && dc->flight_count > 0) rc = tl_flight_retire(c, d, 1);
        while (rc >= 0 && !c->abort && !dc->dead && dc->ring_count > 0) rc = tl_ring_retire(c, d, 1);
        if (rc >= 0) break;
        tl_dev_failed(c, d, rc);
        if (dc->dead || c->abort) break;
        rc = 0; // recovered (the failure was a peer's): go on
    }
    dc->busy_end = ts_now();
    pthread_mutex_unlock(&c->lock);
    return NULL;
}

// One C tile on the CPU BLAS, straight on host memory (whole k).
static int cpu_task(tl_call *c, int t) {
    if (c->l3) return tl_l3_cpu_task(c, t);
    int64_t T = c->T, i = t % c->mt, j = t / c->mt;
    int64_t mb = tl_dim(c->m, T, i), nb = tl_dim(c->n, T, j);
    size_t es = c->es;
    const char *a = c->ta == 'N' ? c->A + (size_t)(i * T) * es : c->A + (size_t)(i * T) * (size_t)c->lda * es;
    const char *b = c->tb == 'N' ? c->B + (size_t)(j * T) * (size_t)c->ldb * es : c->B + (size_t)(j * T) * es;
    char *cc = c->C + ((size_t)(i * T) + (size_t)(j * T) * (size_t)c->ldc) * es;
    return ts_gemm_cpu(c->prec, c->ta, c->tb, mb, nb, c->k, c->alpha, a, c->lda, b, c->ldb, c->beta, cc, c->ldc);
}

void *tl_cpu_worker(void *arg) {
    tl_call *c = arg;
    pthread_mutex_lock(&c->lock);
    while (!c->abort && c->ndone < c->ntasks) {
        int t = tl_sched_next_cpu(c);
        if (t < 0) { // nothing for the CPU now; a failed device may still give tiles back
            tl_wait_change(c);
            continue;
        }
        int rec = tl_trace_new(c, -1, t);
        pthread_mutex_unlock(&c->lock);
        double t0 = ts_now();
        int rc = cpu_task(c, t);
        double t1 = ts_now(), dt = t1 - t0;
        pthread_mutex_lock(&c->lock);
        if (rec >= 0) c->trace[rec].t[2] = t0, c->trace[rec].t[3] = t1;
        if (rc < 0) {
            tl_call_abort(c, rc);
            break;
        }
        c->cpu_tiles++;
        c->cpu_busy += dt;
        c->cpu_flops += tl_task_flops(c, t);
        if (dt > 0) c->rt->cpu_flop_rate = tl_task_flops(c, t) / dt;
        tl_sched_done(c, t, -1);
    }
    pthread_mutex_unlock(&c->lock);
    return NULL;
}

// ---------------------------------------------------------------- trace

int tl_trace_new(tl_call *c, int worker, int task) {
    if (!c->trace || c->ntrace >= c->captrace) return -1;
    tl_trace_rec *r = &c->trace[c->ntrace];
    memset(r, 0, sizeof *r);
    r->worker = worker, r->task = task, r->rerun = c->rerun ? c->rerun[task] : 0;
    tl_task_tile(c, task, &r->i, &r->j);
    return c->ntrace++;
}

void tl_trace_stamp(void *slot) { *(double *)slot = ts_now(); }

void tl_count_dev_tile(tl_call *c, int d, int t) {
    if (!(c->dev_t_first > 0)) c->dev_t_first = ts_now(), c->dev_first_flops = tl_task_flops(c, t);
    c->dc[d].flops += tl_task_flops(c, t);
}
