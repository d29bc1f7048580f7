// ts_tiles_worker.c: the device workers (pipelined C-tile tasks over four streams) and the CPU worker.
//
// A device worker runs one task at a time on the host side but keeps up to opts.depth C tiles in
// flight on the device: while the GEMMs of one tile run on the compute stream, the loads of the
// next tile's A and B tiles run on the H2D (or peer) stream and the copy out of the previous C tile
// on the D2H stream (BLASX's stream interleaving, TianHe's software pipelining). Streams are
// ordered by events: a GEMM waits for the ready events of its tiles, the copy out for the last GEMM.
#include "runtime/ts_tiles_internal.h"

#include "core/ts_error.h"
#include "core/ts_timer.h"

// Queues one C tile: C in (unless beta is 0), the k-loop of GEMMs, C out. Lock held (may drop it).
static int run_task(tl_call *c, int d, int t) {
    tl_devrt *dr = &c->rt->dev[d];
    tl_devcall *dc = &c->dc[d];
    int64_t T = c->T, i = t % c->mt, j = t / c->mt;
    int64_t mb = tl_dim(c->m, T, i), nb = tl_dim(c->n, T, j);
    char *hc = c->C + ((size_t)(i * T) + (size_t)(j * T) * (size_t)c->ldc) * c->es;
    size_t cw = (size_t)mb * c->es, cp = (size_t)c->ldc * c->es;
    int cs, rc;
    TS_CHECK(tl_cache_get_c(c, d, &cs));
    tl_slot *csl = &dc->slots[cs];
    int at = (dc->flight_head + dc->flight_count) % TL_DEPTH_MAX;
    tl_flight *f = &dc->flight[at];
    f->task = t, f->cslot = cs, f->comp = dr->comp_ev[at], f->out = dr->out_ev[at];
    if (!c->beta_zero) {
        rc = ts_copy2d_async(dr->s_h2d, TS_COPY_H2D, csl->ptr, cw, hc, cp, cw, (size_t)nb);
        if (rc >= 0) rc = ts_event_record(csl->ready, dr->s_h2d);
        if (rc >= 0) rc = ts_stream_wait_event(dr->s_comp, csl->ready);
        if (rc < 0) goto fail;
        dc->bytes_h2d += cw * (size_t)nb;
    }
    for (int64_t l = 0; l < c->kt; l++) {
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
        if (rc >= 0)
            rc = ts_dev_gemm(dr->s_comp, c->engine, c->prec, c->ta, c->tb, mb, nb, kb, c->alpha, a->ptr,
                             c->ta == 'N' ? mb : kb, b->ptr, c->tb == 'N' ? kb : nb, l == 0 ? c->beta : c->one,
                             csl->ptr, mb);
        tl_ref refs[2] = {{d, sa}, {d, sb}};
        if (rc < 0) {
            a->readers--, b->readers--;
            goto fail;
        }
        if ((rc = tl_ring_push(c, d, dr->s_comp, refs, 2)) < 0) goto fail;
    }
    if (c->kt == 0) { // k == 0 is handled before the workers start; keep the invariant anyway
        rc = TS_ERROR(TS_ERR_INTERNAL, "tile runtime: task without k-steps");
        goto fail;
    }
    rc = ts_event_record(f->comp, dr->s_comp);
    if (rc >= 0) rc = ts_stream_wait_event(dr->s_d2h, f->comp);
    if (rc >= 0) rc = ts_copy2d_async(dr->s_d2h, TS_COPY_D2H, hc, cp, csl->ptr, cw, cw, (size_t)nb);
    if (rc >= 0) rc = ts_event_record(f->out, dr->s_d2h);
    if (rc < 0) goto fail;
    dc->bytes_d2h += cw * (size_t)nb;
    dc->flight_count++;
    return 0;
fail:
    return tl_call_fail(c, rc);
}

void *tl_dev_worker(void *arg) {
    tl_worker_arg *wa = arg;
    tl_call *c = wa->c;
    int d = wa->d;
    tl_devcall *dc = &c->dc[d];
    int depth = c->rt->opts.depth;
    pthread_mutex_lock(&c->lock);
    while (!c->abort) {
        if (tl_flight_retire(c, d, dc->flight_count >= depth) < 0) break;
        if (dc->flight_count >= depth) continue;
        if (tl_ring_retire(c, d, 0) < 0) break;
        int t = tl_sched_next_dev(c, d);
        if (t < 0) break;
        if (run_task(c, d, t) < 0) break;
    }
    while (!c->abort && dc->flight_count > 0)
        if (tl_flight_retire(c, d, 1) < 0) break;
    while (!c->abort && dc->ring_count > 0)
        if (tl_ring_retire(c, d, 1) < 0) break;
    pthread_mutex_unlock(&c->lock);
    return NULL;
}

// One C tile on the CPU BLAS, straight on host memory (whole k).
static int cpu_task(tl_call *c, int t) {
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
    for (;;) {
        int t = tl_sched_next_cpu(c);
        if (t < 0) break;
        pthread_mutex_unlock(&c->lock);
        double t0 = ts_now();
        int rc = cpu_task(c, t);
        double dt = ts_now() - t0;
        pthread_mutex_lock(&c->lock);
        if (rc < 0) {
            tl_call_fail(c, rc);
            break;
        }
        // Mean time per tile (edge tiles are smaller; the mean errs on the fast side, which is safe
        // only because the devices keep a reserve of tiles anyway).
        c->cpu_sec_per_tile = (c->cpu_sec_per_tile * (double)c->cpu_tiles + dt) / (double)(c->cpu_tiles + 1);
        c->cpu_tiles++;
        tl_sched_done(c, t, -1);
    }
    pthread_mutex_unlock(&c->lock);
    return NULL;
}
