// test_device_semantics.c: stream/event/copy semantics of the device layer (sim by default, CUDA on request).
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/ts_timer.h"
#include "dev_test.h"

#include <pthread.h>
#include <unistd.h>

// ---- small kernels with CPU bodies (the sim's device code) ----

typedef struct {
    double *x;
    size_t n;
    double mul, add;
    int sleep_ms;
} axpb_args;

static int k_axpb_cpu(void *p) {
    axpb_args *a = p;
    if (a->sleep_ms) usleep((useconds_t)a->sleep_ms * 1000);
    for (size_t i = 0; i < a->n; i++) a->x[i] = a->x[i] * a->mul + a->add;
    return 0;
}

static int enqueue_axpb(ts_stream *st, double *x, size_t n, double mul, double add, int sleep_ms, double flops) {
    axpb_args a = {x, n, mul, add, sleep_ms};
    ts_kernel k = {.name = "axpb", .flops = flops, .cpu = k_axpb_cpu, .args = &a, .args_size = sizeof a};
    int rc = ts_kernel_enqueue(st, &k);
    a.x = NULL; // the arguments were copied at enqueue
    return rc;
}

// A chain of dependent copies and kernels on one stream comes out in order.
static void test_stream_order_chain(void **state) {
    ts_devset *s = *state;
    ts_device *d = ts_devset_device(s, 0);
    ts_stream *st;
    assert_int_equal(ts_stream_create(d, &st), 0);
    size_t n = 1 << 16, bytes = n * sizeof(double);
    double *h = malloc(bytes), *out = malloc(bytes), *ref = malloc(bytes);
    for (size_t i = 0; i < n; i++) h[i] = ref[i] = (double)(i % 977) + 0.5;
    double *x, *y;
    assert_int_equal(ts_dmalloc(d, bytes, (void **)&x), 0);
    assert_int_equal(ts_dmalloc(d, bytes, (void **)&y), 0);
    assert_int_equal(ts_copy_async(st, TS_COPY_H2D, x, h, bytes), 0);
    for (int r = 0; r < 8; r++) {
        // x -> y, y = 2y + r (sim), y -> x; each step reads what the previous one wrote.
        assert_int_equal(ts_copy_async(st, TS_COPY_D2D, y, x, bytes), 0);
        if (dev_test_is_sim()) {
            assert_int_equal(enqueue_axpb(st, y, n, 2.0, r, r == 0 ? 20 : 0, 2.0 * n), 0);
            for (size_t i = 0; i < n; i++) ref[i] = ref[i] * 2.0 + r;
        }
        assert_int_equal(ts_copy_async(st, TS_COPY_D2D, x, y, bytes), 0);
    }
    memset(out, 0, bytes);
    assert_int_equal(ts_copy_async(st, TS_COPY_D2H, out, x, bytes), 0);
    assert_int_equal(ts_stream_sync(st), 0);
    assert_memory_equal(out, ref, bytes);
    assert_int_equal(ts_stream_error(st), 0);
    assert_int_equal(ts_stream_destroy(st), 0);
    assert_int_equal(ts_dfree(d, x), 0);
    assert_int_equal(ts_dfree(d, y), 0);
    free(h), free(out), free(ref);
}

// A high-priority stream keeps the stream contract (order, events with a normal stream), says it
// is high, and a bad priority is refused.
static void test_high_priority_stream(void **state) {
    ts_devset *s = *state;
    ts_device *d = ts_devset_device(s, 0);
    ts_stream *hi, *lo, *bad = NULL;
    ts_event *ev;
    assert_int_equal(ts_stream_create_prio(d, 1, &hi), 0);
    assert_int_equal(ts_stream_create(d, &lo), 0);
    assert_int_equal(ts_stream_is_high(hi), 1);
    assert_int_equal(ts_stream_is_high(lo), 0);
    assert_int_equal(ts_stream_create_prio(d, 2, &bad), TS_ERR_ARG);
    assert_null(bad);
    assert_int_equal(ts_event_create(d, &ev), 0);
    size_t n = 1 << 15, bytes = n * sizeof(double);
    double *h = malloc(bytes), *out = malloc(bytes);
    for (size_t i = 0; i < n; i++) h[i] = 1.0 + (double)((i * 7919) % 1013);
    double *x, *y;
    assert_int_equal(ts_dmalloc(d, bytes, (void **)&x), 0);
    assert_int_equal(ts_dmalloc(d, bytes, (void **)&y), 0);
    // normal stream fills x, the high one copies x to y after the event, the normal one reads y
    assert_int_equal(ts_copy_async(lo, TS_COPY_H2D, x, h, bytes), 0);
    assert_int_equal(ts_event_record(ev, lo), 0);
    assert_int_equal(ts_stream_wait_event(hi, ev), 0);
    assert_int_equal(ts_copy_async(hi, TS_COPY_D2D, y, x, bytes), 0);
    assert_int_equal(ts_event_record(ev, hi), 0);
    assert_int_equal(ts_stream_wait_event(lo, ev), 0);
    memset(out, 0, bytes);
    assert_int_equal(ts_copy_async(lo, TS_COPY_D2H, out, y, bytes), 0);
    assert_int_equal(ts_stream_sync(lo), 0);
    assert_memory_equal(out, h, bytes);
    assert_int_equal(ts_event_destroy(ev), 0);
    assert_int_equal(ts_stream_destroy(hi), 0);
    assert_int_equal(ts_stream_destroy(lo), 0);
    assert_int_equal(ts_dfree(d, x), 0);
    assert_int_equal(ts_dfree(d, y), 0);
    free(h), free(out);
}

// Events order streams on one device and across devices.
static void test_events_across_streams_and_devices(void **state) {
    ts_devset *s = *state;
    int nd = ts_devset_count(s);
    ts_device *d0 = ts_devset_device(s, 0), *d1 = ts_devset_device(s, nd > 1 ? 1 : 0);
    ts_stream *a, *b, *c;
    assert_int_equal(ts_stream_create(d0, &a), 0);
    assert_int_equal(ts_stream_create(d0, &b), 0);
    assert_int_equal(ts_stream_create(d1, &c), 0);
    size_t n = 1 << 18, bytes = n * sizeof(double);
    double *h = malloc(bytes), *out = malloc(bytes), *out2 = malloc(bytes);
    unsigned seed = 1;
    dev_test_fill(h, bytes, &seed);
    for (size_t i = 0; i < n; i++) h[i] = (double)(i & 1023) + 1.0;
    double *x, *x2, *y;
    assert_int_equal(ts_dmalloc(d0, bytes, (void **)&x), 0);
    assert_int_equal(ts_dmalloc(d0, bytes, (void **)&x2), 0);
    assert_int_equal(ts_dmalloc(d1, bytes, (void **)&y), 0);
    ts_event *ev;
    assert_int_equal(ts_event_create(d0, &ev), 0);
    // Stream a produces x (slowly on sim), b and c consume it only after the event.
    assert_int_equal(ts_copy_async(a, TS_COPY_H2D, x, h, bytes), 0);
    if (dev_test_is_sim()) assert_int_equal(enqueue_axpb(a, x, n, 3.0, 0.0, 60, n), 0);
    assert_int_equal(ts_event_record(ev, a), 0);
    assert_int_equal(ts_stream_wait_event(b, ev), 0);
    assert_int_equal(ts_copy_async(b, TS_COPY_D2D, x2, x, bytes), 0);
    assert_int_equal(ts_copy_async(b, TS_COPY_D2H, out, x2, bytes), 0);
    assert_int_equal(ts_stream_wait_event(c, ev), 0);
    assert_int_equal(ts_copy_peer2d_async(c, d1, y, bytes, d0, x, bytes, bytes, 1), 0);
    assert_int_equal(ts_copy_async(c, TS_COPY_D2H, out2, y, bytes), 0);
    assert_int_equal(ts_stream_sync(b), 0);
    assert_int_equal(ts_stream_sync(c), 0);
    assert_int_equal(ts_event_query(ev), 1);
    double mul = dev_test_is_sim() ? 3.0 : 1.0;
    for (size_t i = 0; i < n; i++) {
        assert_true(out[i] == h[i] * mul);
        assert_true(out2[i] == h[i] * mul);
    }
    // An event never recorded counts as complete, as in CUDA.
    ts_event *fresh;
    assert_int_equal(ts_event_create(d1, &fresh), 0);
    assert_int_equal(ts_event_query(fresh), 1);
    assert_int_equal(ts_stream_wait_event(c, fresh), 0);
    assert_int_equal(ts_event_sync(fresh), 0);
    assert_int_equal(ts_stream_sync(c), 0);
    // Recording on a stream of another device is refused.
    if (nd > 1) assert_int_equal(ts_event_record(fresh, a), TS_ERR_ARG);
    assert_int_equal(ts_event_destroy(fresh), 0);
    assert_int_equal(ts_event_destroy(ev), 0);
    assert_int_equal(ts_stream_destroy(a), 0);
    assert_int_equal(ts_stream_destroy(b), 0);
    assert_int_equal(ts_stream_destroy(c), 0);
    ts_dfree(d0, x), ts_dfree(d0, x2), ts_dfree(d1, y);
    free(h), free(out), free(out2);
}

typedef struct {
    pthread_mutex_t lock;
    int order[64];
    int n;
    const unsigned char *host;   // checked by the callback: the D2H before it has landed
    const unsigned char *want;
    size_t bytes;
    int saw_data;
} cb_log;

typedef struct {
    cb_log *log;
    int idx;
} cb_arg;

static void cb_fn(void *p) {
    cb_arg *a = p;
    pthread_mutex_lock(&a->log->lock);
    a->log->order[a->log->n++] = a->idx;
    if (a->idx == 5 && !memcmp(a->log->host, a->log->want, a->log->bytes)) a->log->saw_data = 1;
    pthread_mutex_unlock(&a->log->lock);
}

static void test_host_callbacks_order(void **state) {
    ts_devset *s = *state;
    ts_device *d = ts_devset_device(s, 0);
    ts_stream *st;
    assert_int_equal(ts_stream_create(d, &st), 0);
    size_t bytes = 1 << 20;
    unsigned char *h = malloc(bytes), *back = calloc(1, bytes);
    unsigned seed = 2;
    dev_test_fill(h, bytes, &seed);
    void *x;
    assert_int_equal(ts_dmalloc(d, bytes, &x), 0);
    cb_log log = {.host = back, .want = h, .bytes = bytes};
    pthread_mutex_init(&log.lock, NULL);
    cb_arg args[16];
    for (int i = 0; i < 16; i++) {
        args[i] = (cb_arg){&log, i};
        if (i == 2) assert_int_equal(ts_copy_async(st, TS_COPY_H2D, x, h, bytes), 0);
        if (i == 5) assert_int_equal(ts_copy_async(st, TS_COPY_D2H, back, x, bytes), 0);
        assert_int_equal(ts_host_callback(st, cb_fn, &args[i]), 0);
    }
    assert_int_equal(ts_stream_sync(st), 0);
    assert_int_equal(log.n, 16);
    for (int i = 0; i < 16; i++) assert_int_equal(log.order[i], i);
    assert_int_equal(log.saw_data, 1);
    ts_device_counters c;
    ts_device_counters_get(d, &c);
    assert_int_equal(c.callbacks, 16);
    assert_int_equal(ts_stream_destroy(st), 0);
    ts_dfree(d, x);
    pthread_mutex_destroy(&log.lock);
    free(h), free(back);
}

// Elapsed time between events follows the pacing of unequal devices (sim): never shorter than the
// pacing, and never longer than the host saw the work take (events are stamped on the host's clock
// while the work runs; no fixed allowance that a loaded machine could exceed).
static void test_elapsed_and_pacing(void **state) {
    if (!dev_test_is_sim()) skip();
    ts_devset_opts o;
    dev_test_opts(&o);
    o.sim_gflops = 1.0;   // a speed-1.0 device does 1 GFLOP/s
    o.sim_link_gbs = 0.25; // 0.25 GB/s host link
    ts_devset *s = dev_test_open(&o);
    assert_non_null(s);
    double flops = 0.04e9; // 40 ms at speed 1
    for (int i = 0; i < 4; i++) {
        ts_device *d = ts_devset_device(s, i);
        double speed = ts_device_props_of(d)->rel_speed;
        assert_true(speed == o.sim_speeds[i]);
        ts_stream *st;
        ts_event *e0, *e1, *e2;
        assert_int_equal(ts_stream_create(d, &st), 0);
        assert_int_equal(ts_event_create(d, &e0), 0);
        assert_int_equal(ts_event_create(d, &e1), 0);
        assert_int_equal(ts_event_create(d, &e2), 0);
        double x = 1;
        void *dx;
        assert_int_equal(ts_dmalloc(d, sizeof x, &dx), 0);
        size_t bytes = 4 << 20; // 16.8 ms at 0.25 GB/s
        void *h = malloc(bytes), *dbuf;
        memset(h, 1, bytes);
        assert_int_equal(ts_dmalloc(d, bytes, &dbuf), 0);
        double host0 = ts_now();
        assert_int_equal(ts_event_record(e0, st), 0);
        assert_int_equal(enqueue_axpb(st, dx, 0, 1, 0, 0, flops), 0);
        assert_int_equal(ts_event_record(e1, st), 0);
        assert_int_equal(ts_copy_async(st, TS_COPY_H2D, dbuf, h, bytes), 0);
        assert_int_equal(ts_event_record(e2, st), 0);
        assert_int_equal(ts_event_sync(e2), 0);
        double host_ms = (ts_now() - host0) * 1e3;
        double kms, cms;
        assert_int_equal(ts_event_elapsed_ms(e0, e1, &kms), 0);
        assert_int_equal(ts_event_elapsed_ms(e1, e2, &cms), 0);
        double want = flops / (1e9 * speed) * 1e3, cwant = bytes / (0.25e9) * 1e3;
        assert_true(kms >= 0.95 * want && cms >= 0.95 * cwant);
        assert_true(kms + cms <= host_ms + 1e-3);
        assert_int_equal(ts_stream_destroy(st), 0);
        ts_event_destroy(e0), ts_event_destroy(e1), ts_event_destroy(e2);
        ts_dfree(d, dx), ts_dfree(d, dbuf);
        free(h);
    }
    ts_devset_close(s);
}

static void test_elapsed_basic(void **state) {
    ts_devset *s = *state;
    ts_device *d = ts_devset_device(s, 0);
    ts_stream *st;
    ts_event *a, *b;
    assert_int_equal(ts_stream_create(d, &st), 0);
    assert_int_equal(ts_event_create(d, &a), 0);
    assert_int_equal(ts_event_create(d, &b), 0);
    double ms;
    assert_int_not_equal(ts_event_elapsed_ms(a, b, &ms), 0); // never recorded
    void *x, *h = malloc(1 << 20);
    memset(h, 3, 1 << 20);
    assert_int_equal(ts_dmalloc(d, 1 << 20, &x), 0);
    double host0 = ts_now();
    assert_int_equal(ts_event_record(a, st), 0);
    assert_int_equal(ts_copy_async(st, TS_COPY_H2D, x, h, 1 << 20), 0);
    assert_int_equal(ts_event_record(b, st), 0);
    assert_int_equal(ts_event_sync(b), 0);
    assert_int_equal(ts_event_query(a), 1);
    assert_int_equal(ts_event_elapsed_ms(a, b, &ms), 0);
    assert_true(ms >= 0 && ms <= (ts_now() - host0) * 1e3 + 1e-3); // within the host's view of it
    assert_int_equal(ts_stream_destroy(st), 0);
    ts_event_destroy(a), ts_event_destroy(b);
    ts_dfree(d, x);
    free(h);
}

// Peer copies between every pair, 2-D with pitches, then back to the host.
static void check_peer_pairs(ts_devset *s) {
    int nd = ts_devset_count(s);
    if (nd < 2) return;
    size_t width = 3000, rows = 37, sp = 3072, dp = 4096;
    size_t hbytes = width * rows;
    unsigned char *h = malloc(hbytes), *back = malloc(hbytes);
    unsigned seed = 3;
    for (int i = 0; i < nd; i++)
        for (int j = 0; j < nd; j++) {
            if (i == j) continue;
            ts_device *di = ts_devset_device(s, i), *dj = ts_devset_device(s, j);
            ts_stream *st;
            assert_int_equal(ts_stream_create(dj, &st), 0);
            void *src, *dst;
            assert_int_equal(ts_dmalloc(di, sp * rows, &src), 0);
            assert_int_equal(ts_dmalloc(dj, dp * rows, &dst), 0);
            dev_test_fill(h, hbytes, &seed);
            ts_stream *si;
            assert_int_equal(ts_stream_create(di, &si), 0);
            assert_int_equal(ts_copy2d_async(si, TS_COPY_H2D, src, sp, h, width, width, rows), 0);
            assert_int_equal(ts_stream_sync(si), 0);
            assert_int_equal(ts_copy_peer2d_async(st, dj, dst, dp, di, src, sp, width, rows), 0);
            memset(back, 0, hbytes);
            assert_int_equal(ts_copy2d_async(st, TS_COPY_D2H, back, width, dst, dp, width, rows), 0);
            assert_int_equal(ts_stream_sync(st), 0);
            assert_memory_equal(back, h, hbytes);
            ts_device_counters c;
            ts_device_counters_get(dj, &c);
            assert_true(c.bytes_p2p >= hbytes);
            assert_int_equal(ts_stream_destroy(st), 0);
            assert_int_equal(ts_stream_destroy(si), 0);
            ts_dfree(di, src), ts_dfree(dj, dst);
        }
    free(h), free(back);
}

static void test_peer_copies(void **state) {
    ts_devset *s = *state;
    if (ts_devset_count(s) < 2) skip();
    if (dev_test_is_sim()) assert_int_equal(ts_device_can_peer(ts_devset_device(s, 0), ts_devset_device(s, 1)), 1);
    check_peer_pairs(s);
}

static void test_peer_copies_staged(void **state) {
    if (!dev_test_is_sim()) skip();
    ts_devset_opts o;
    dev_test_opts(&o);
    o.sim_peer = 0;
    ts_devset *s = dev_test_open(&o);
    assert_non_null(s);
    assert_int_equal(ts_device_can_peer(ts_devset_device(s, 0), ts_devset_device(s, 1)), 0);
    assert_int_equal(ts_device_can_peer(ts_devset_device(s, 2), ts_devset_device(s, 2)), 1);
    check_peer_pairs(s);
    ts_devset_close(s);
}

// Host reference of a 2-D copy.
static void ref_copy2d(unsigned char *dst, size_t dp, const unsigned char *src, size_t sp, size_t w, size_t rows) {
    for (size_t r = 0; r < rows; r++) memcpy(dst + r * dp, src + r * sp, w);
}

// Random 2-D copies H2D, D2D, D2H against the host reference, gaps between rows untouched.
static void test_copy2d_random(void **state) {
    ts_devset *s = *state;
    ts_device *d = ts_devset_device(s, 0);
    ts_stream *st;
    assert_int_equal(ts_stream_create(d, &st), 0);
    unsigned seed = 4;
    for (int it = 0; it < 40; it++) {
        seed = seed * 1103515245u + 12345u;
        size_t w = 1 + (seed >> 8) % 2000, rows = 1 + (seed >> 3) % 50;
        size_t p1 = w + (seed >> 12) % 300, p2 = w + (seed >> 15) % 500, p3 = w + (seed >> 18) % 100;
        size_t hs = p1 * rows, d1s = p2 * rows, d2s = p3 * rows + 17;
        unsigned char *h = malloc(hs), *back = malloc(hs), *want = malloc(hs);
        unsigned char *mirror1 = malloc(d1s), *mirror2 = malloc(d2s);
        dev_test_fill(h, hs, &seed);
        dev_test_fill(back, hs, &seed);
        memcpy(want, back, hs);
        void *d1, *d2;
        assert_int_equal(ts_dmalloc(d, d1s, &d1), 0);
        assert_int_equal(ts_dmalloc(d, d2s, &d2), 0);
        // Device buffers start as 0xA5 / 0x5A so untouched gaps are visible.
        assert_int_equal(ts_memset_async(st, d1, 0xA5, d1s), 0);
        assert_int_equal(ts_memset_async(st, d2, 0x5A, d2s), 0);
        memset(mirror1, 0xA5, d1s);
        memset(mirror2, 0x5A, d2s);
        assert_int_equal(ts_copy2d_async(st, TS_COPY_H2D, d1, p2, h, p1, w, rows), 0);
        ref_copy2d(mirror1, p2, h, p1, w, rows);
        assert_int_equal(ts_copy2d_async(st, TS_COPY_D2D, (char *)d2 + 17, p3, d1, p2, w, rows), 0);
        ref_copy2d(mirror2 + 17, p3, mirror1, p2, w, rows);
        assert_int_equal(ts_copy2d_async(st, TS_COPY_D2H, back, p1, (char *)d2 + 17, p3, w, rows), 0);
        ref_copy2d(want, p1, mirror2 + 17, p3, w, rows);
        unsigned char *whole1 = malloc(d1s), *whole2 = malloc(d2s);
        assert_int_equal(ts_copy_async(st, TS_COPY_D2H, whole1, d1, d1s), 0);
        assert_int_equal(ts_copy_async(st, TS_COPY_D2H, whole2, d2, d2s), 0);
        assert_int_equal(ts_stream_sync(st), 0);
        assert_memory_equal(back, want, hs);
        assert_memory_equal(whole1, mirror1, d1s);
        assert_memory_equal(whole2, mirror2, d2s);
        ts_dfree(d, d1), ts_dfree(d, d2);
        free(h), free(back), free(want), free(mirror1), free(mirror2), free(whole1), free(whole2);
    }
    assert_int_equal(ts_stream_destroy(st), 0);
}

static void test_counters(void **state) {
    ts_devset *s = *state;
    ts_device *d = ts_devset_device(s, 0);
    ts_device_counters c;
    ts_device_counters_get(d, &c);
    assert_int_equal(c.copies, 0);
    ts_stream *st;
    assert_int_equal(ts_stream_create(d, &st), 0);
    size_t n = 10000;
    char *h = malloc(n);
    memset(h, 7, n);
    void *x, *y;
    assert_int_equal(ts_dmalloc(d, n, &x), 0);
    assert_int_equal(ts_dmalloc(d, n, &y), 0);
    assert_int_equal(ts_copy_async(st, TS_COPY_H2D, x, h, n), 0);
    assert_int_equal(ts_copy2d_async(st, TS_COPY_H2D, x, 100, h, 200, 50, 10), 0);
    assert_int_equal(ts_copy_async(st, TS_COPY_D2D, y, x, n), 0);
    assert_int_equal(ts_copy_async(st, TS_COPY_D2H, h, y, 123), 0);
    if (dev_test_is_sim()) {
        assert_int_equal(enqueue_axpb(st, x, 0, 1, 0, 0, 1e6), 0);
        assert_int_equal(enqueue_axpb(st, x, 0, 1, 0, 0, 2.5e6), 0);
    }
    assert_int_equal(ts_stream_sync(st), 0);
    ts_device_counters_get(d, &c);
    assert_int_equal(c.copies, 4);
    assert_int_equal(c.bytes_h2d, n + 500);
    assert_int_equal(c.bytes_d2d, n);
    assert_int_equal(c.bytes_d2h, 123);
    assert_int_equal(c.bytes_p2p, 0);
    if (dev_test_is_sim()) {
        assert_int_equal(c.kernels, 2);
        assert_true(c.kernel_flops == 3.5e6);
    }
    // Failed enqueues are not counted.
    assert_int_equal(ts_copy_async(st, TS_COPY_H2D, x, h, 0), TS_ERR_ARG);
    ts_device_counters_get(ts_devset_device(s, 0), &c);
    assert_int_equal(c.copies, 4);
    assert_int_equal(ts_stream_destroy(st), 0);
    ts_dfree(d, x), ts_dfree(d, y);
    free(h);
}

static void test_device_memory(void **state) {
    ts_devset *s = *state;
    for (int i = 0; i < ts_devset_count(s); i++) {
        ts_device *d = ts_devset_device(s, i);
        const ts_device_props *p = ts_device_props_of(d);
        assert_int_equal(p->ordinal, i);
        assert_true(p->arena_bytes > 0);
        assert_ptr_equal(ts_device_set(d), s);
        size_t used, fr, largest;
        ts_dmem_info(d, &used, &fr, &largest);
        assert_int_equal(used, 0);
        void *x;
        assert_int_equal(ts_dmalloc(d, 1000, &x), 0);
        assert_int_equal((uintptr_t)x % 256, 0);
        ts_dmem_info(d, &used, &fr, &largest);
        assert_int_equal(used, 1024);
        void *big;
        ts_error_clear();
        assert_int_equal(ts_dmalloc(d, fr + 1, &big), TS_ERR_DEVMEM);
        char want[32];
        snprintf(want, sizeof want, "device %d (", i);
        assert_non_null(strstr(ts_error_last()->message, want));
        assert_non_null(strstr(ts_error_last()->message, "cannot allocate"));
        assert_int_equal(ts_dmalloc(d, 0, &big), TS_ERR_ARG);
        assert_int_equal(ts_dfree(d, x), 0);
        assert_int_equal(ts_dfree(d, x), TS_ERR_ARG);
        assert_int_equal(ts_dfree(d, NULL), 0);
    }
    assert_null(ts_devset_device(s, -1));
    assert_null(ts_devset_device(s, ts_devset_count(s)));
}

static void test_argument_errors(void **state) {
    ts_devset *s = *state;
    ts_device *d = ts_devset_device(s, 0);
    ts_stream *st;
    assert_int_equal(ts_stream_create(d, &st), 0);
    char h[4096];
    memset(h, 1, sizeof h);
    void *x;
    assert_int_equal(ts_dmalloc(d, 4096, &x), 0);
    ts_error_clear();
    assert_int_equal(ts_copy_async(st, TS_COPY_H2D, NULL, h, 10), TS_ERR_ARG);
    assert_non_null(strstr(ts_error_last()->message, "NULL destination"));
    assert_int_equal(ts_copy_async(st, TS_COPY_H2D, x, NULL, 10), TS_ERR_ARG);
    assert_int_equal(ts_copy_async(NULL, TS_COPY_H2D, x, h, 10), TS_ERR_ARG);
    assert_int_equal(ts_copy_async(st, (ts_copy_kind)9, x, h, 10), TS_ERR_ARG);
    assert_int_equal(ts_copy2d_async(st, TS_COPY_H2D, x, 10, h, 100, 20, 2), TS_ERR_ARG);
    assert_non_null(strstr(ts_error_last()->message, "destination pitch 10 < width 20"));
    assert_int_equal(ts_copy2d_async(st, TS_COPY_H2D, x, 100, h, 10, 20, 2), TS_ERR_ARG);
    assert_non_null(strstr(ts_error_last()->message, "source pitch 10 < width 20"));
    assert_int_equal(ts_copy2d_async(st, TS_COPY_H2D, x, 100, h, 100, 20, 0), TS_ERR_ARG);
    assert_int_equal(ts_memset_async(st, x, 0, 0), TS_ERR_ARG);
    assert_int_equal(ts_memset_async(st, NULL, 0, 10), TS_ERR_ARG);
    assert_int_equal(ts_host_callback(st, NULL, NULL), TS_ERR_ARG);
    ts_kernel k = {.name = "big", .cpu = k_axpb_cpu, .args = h, .args_size = TS_KERNEL_ARGS_MAX + 1};
    assert_int_equal(ts_kernel_enqueue(st, &k), TS_ERR_ARG);
    k.args_size = 8;
    k.args = NULL;
    assert_int_equal(ts_kernel_enqueue(st, &k), TS_ERR_ARG);
    assert_int_equal(ts_kernel_enqueue(st, NULL), TS_ERR_ARG);
    ts_stream *none;
    assert_int_equal(ts_stream_create(NULL, &none), TS_ERR_ARG);
    assert_null(none);
    assert_int_equal(ts_event_record(NULL, NULL), TS_ERR_ARG);
    assert_int_equal(ts_host_pin(s, h, 0, &(int){0}), TS_ERR_ARG);
    if (dev_test_is_sim()) {
        // Host and device pointers mixed up: caught at enqueue, as a GPU would fault.
        assert_int_equal(ts_copy_async(st, TS_COPY_H2D, h, x, 10), TS_ERR_ARG);
        assert_non_null(strstr(ts_error_last()->message, "H2D copy destination"));
        assert_int_equal(ts_copy_async(st, TS_COPY_D2H, x, h, 10), TS_ERR_ARG);
        assert_int_equal(ts_copy_async(st, TS_COPY_D2D, x, h, 10), TS_ERR_ARG);
        assert_int_equal(ts_copy_async(st, TS_COPY_H2D, x, x, 10), TS_ERR_ARG); // source is device memory
        assert_non_null(strstr(ts_error_last()->message, "not host memory"));
        void *other;
        ts_device *d1 = ts_devset_device(s, 1);
        assert_int_equal(ts_dmalloc(d1, 64, &other), 0);
        assert_int_equal(ts_copy_async(st, TS_COPY_H2D, other, h, 10), TS_ERR_ARG); // another device's memory
        assert_int_equal(ts_memset_async(st, h, 0, 10), TS_ERR_ARG);
        assert_int_equal(ts_copy_peer2d_async(st, d1, other, 64, d, h, 64, 64, 1), TS_ERR_ARG);
        ts_kernel nk = {.name = "gpu-only", .cuda = NULL, .cpu = NULL};
        assert_int_equal(ts_kernel_enqueue(st, &nk), TS_ERR_UNSUPPORTED);
        assert_null(ts_stream_native(st));
        ts_dfree(d1, other);
    }
    // Nothing bad was queued: the stream is clean.
    assert_int_equal(ts_stream_sync(st), 0);
    assert_int_equal(ts_stream_destroy(st), 0);
    ts_dfree(d, x);
}

static int slot_destroyed;
static void slot_free(void *v) {
    slot_destroyed += *(int *)v;
    free(v);
}

static void test_stream_slot(void **state) {
    ts_devset *s = *state;
    ts_stream *st;
    assert_int_equal(ts_stream_create(ts_devset_device(s, 0), &st), 0);
    assert_ptr_equal(ts_stream_device(st), ts_devset_device(s, 0));
    assert_null(ts_stream_slot(st));
    int *v = malloc(sizeof *v);
    *v = 42;
    ts_stream_set_slot(st, v, slot_free);
    assert_ptr_equal(ts_stream_slot(st), v);
    slot_destroyed = 0;
    assert_int_equal(ts_stream_destroy(st), 0);
    assert_int_equal(slot_destroyed, 42);
}

// device_sync waits for every stream of the device.
static void test_device_sync_all_streams(void **state) {
    ts_devset *s = *state;
    ts_device *d = ts_devset_device(s, ts_devset_count(s) - 1);
    enum { NS = 3 };
    ts_stream *st[NS];
    ts_event *ev[NS];
    size_t bytes = 4 << 20;
    char *h = malloc(bytes);
    memset(h, 9, bytes);
    void *x[NS];
    for (int i = 0; i < NS; i++) {
        assert_int_equal(ts_stream_create(d, &st[i]), 0);
        assert_int_equal(ts_event_create(d, &ev[i]), 0);
        assert_int_equal(ts_dmalloc(d, bytes, &x[i]), 0);
        for (int r = 0; r < 4; r++) assert_int_equal(ts_copy_async(st[i], TS_COPY_H2D, x[i], h, bytes), 0);
        if (dev_test_is_sim()) assert_int_equal(enqueue_axpb(st[i], x[i], 0, 1, 0, 30 * (i + 1), 0), 0);
        assert_int_equal(ts_event_record(ev[i], st[i]), 0);
    }
    assert_int_equal(ts_device_sync(d), 0);
    for (int i = 0; i < NS; i++) {
        assert_int_equal(ts_event_query(ev[i]), 1);
        assert_int_equal(ts_event_destroy(ev[i]), 0);
        assert_int_equal(ts_stream_destroy(st[i]), 0);
        ts_dfree(d, x[i]);
    }
    free(h);
}

typedef struct {
    ts_devset *s;
    int id, bad;
} thr_arg;

static void *thr_main(void *p) {
    thr_arg *t = p;
    ts_device *d = ts_devset_device(t->s, t->id % ts_devset_count(t->s));
    ts_stream *st;
    if (ts_stream_create(d, &st)) {
        t->bad = 1;
        return NULL;
    }
    unsigned seed = 100u + (unsigned)t->id;
    size_t n = 64 << 10;
    unsigned char *h = malloc(n), *back = malloc(n);
    for (int it = 0; it < 50; it++) {
        dev_test_fill(h, n, &seed);
        void *x;
        if (ts_dmalloc(d, n, &x)) {
            t->bad = 1;
            break;
        }
        ts_copy_async(st, TS_COPY_H2D, x, h, n);
        ts_copy_async(st, TS_COPY_D2H, back, x, n);
        if (ts_stream_sync(st) || memcmp(h, back, n)) t->bad = 1;
        ts_dfree(d, x);
    }
    free(h), free(back);
    if (ts_stream_destroy(st)) t->bad = 1;
    return NULL;
}

// Several host threads, each with its own stream, sharing devices and arenas.
static void test_threads(void **state) {
    ts_devset *s = *state;
    pthread_t th[8];
    thr_arg a[8];
    for (int i = 0; i < 8; i++) {
        a[i] = (thr_arg){s, i, 0};
        pthread_create(&th[i], NULL, thr_main, &a[i]);
    }
    for (int i = 0; i < 8; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(a[i].bad, 0);
    }
}

static void test_pinned_host(void **state) {
    ts_devset *s = *state;
    void *p;
    size_t bytes = 1 << 20;
    p = aligned_alloc(4096, bytes);
    int h1, h2, h3;
    assert_int_equal(ts_host_pin(s, p, bytes, &h1), 0);
    assert_int_equal(ts_host_pin(s, (char *)p + 100, 5000, &h2), 0);
    size_t reg;
    int handles;
    long regs;
    ts_host_pin_stats(s, &reg, &handles, &regs);
    assert_int_equal(reg, bytes);
    assert_int_equal(handles, 2);
    assert_int_equal(regs, 1);
    char *q = malloc(3 * 4096 + 50);
    assert_int_equal(ts_host_pin(s, q + 10, 3 * 4096, &h3), 0);
    ts_host_pin_stats(s, &reg, &handles, &regs);
    assert_true(reg >= bytes + 3 * 4096);
    assert_int_equal(ts_host_unpin(s, h1), 0);
    assert_int_equal(ts_host_unpin(s, h2), 0);
    assert_int_equal(ts_host_unpin(s, h2), TS_ERR_ARG);
    // Copies from pinned memory work as from any host memory.
    ts_device *d = ts_devset_device(s, 0);
    ts_stream *st;
    void *x;
    assert_int_equal(ts_stream_create(d, &st), 0);
    assert_int_equal(ts_dmalloc(d, 3 * 4096, &x), 0);
    memset(q + 10, 0x3c, 3 * 4096);
    assert_int_equal(ts_copy_async(st, TS_COPY_H2D, x, q + 10, 3 * 4096), 0);
    assert_int_equal(ts_copy_async(st, TS_COPY_D2H, p, x, 3 * 4096), 0);
    assert_int_equal(ts_stream_sync(st), 0);
    assert_memory_equal(p, q + 10, 3 * 4096);
    assert_int_equal(ts_stream_destroy(st), 0);
    assert_int_equal(ts_host_unpin(s, h3), 0);
    ts_host_pin_stats(s, &reg, &handles, NULL);
    assert_int_equal(reg, 0);
    assert_int_equal(handles, 0);
    ts_dfree(d, x);
    free(q);
    free(p);
}

// Memory from ts_host_alloc is page-locked already; pinning it again (a caller that does not know
// where its buffer came from) must work and must not unpin it early.
static void test_pin_host_alloc_memory(void **state) {
    ts_devset *s = *state;
    void *p;
    size_t bytes = 1 << 20;
    assert_int_equal(ts_host_alloc(s, bytes, &p), 0);
    int h;
    if (ts_host_pin(s, p, bytes, &h) != 0) fail_msg("pinning ts_host_alloc memory: %s", ts_error_string());
    assert_int_equal(ts_host_unpin(s, h), 0);
    ts_device *d = ts_devset_device(s, 0);
    ts_stream *st;
    void *x;
    assert_int_equal(ts_stream_create(d, &st), 0);
    assert_int_equal(ts_dmalloc(d, bytes, &x), 0);
    memset(p, 0x42, bytes);
    assert_int_equal(ts_copy_async(st, TS_COPY_H2D, x, p, bytes), 0);
    assert_int_equal(ts_memset_async(st, x, 0x42, 16), 0);
    assert_int_equal(ts_copy_async(st, TS_COPY_D2H, p, x, bytes), 0);
    assert_int_equal(ts_stream_sync(st), 0);
    assert_int_equal(((unsigned char *)p)[bytes - 1], 0x42);
    assert_int_equal(ts_stream_destroy(st), 0);
    ts_dfree(d, x);
    ts_host_free(s, p);
}

int main(void) {
#define T(f) cmocka_unit_test_setup_teardown(f, dev_test_setup, dev_test_teardown)
    const struct CMUnitTest tests[] = {
        T(test_stream_order_chain),   T(test_events_across_streams_and_devices),
        T(test_host_callbacks_order), cmocka_unit_test(test_elapsed_and_pacing),
        T(test_elapsed_basic),        T(test_peer_copies),
        cmocka_unit_test(test_peer_copies_staged),
        T(test_copy2d_random),        T(test_counters),
        T(test_device_memory),        T(test_argument_errors),
        T(test_stream_slot),          T(test_device_sync_all_streams),
        T(test_threads),              T(test_pinned_host),
        T(test_pin_host_alloc_memory), T(test_high_priority_stream),
    };
    fprintf(stderr, "device semantics on backend %s\n", ts_backend_name(dev_test_backend()));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
