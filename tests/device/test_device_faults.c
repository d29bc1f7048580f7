// test_device_faults.c: every injected sim fault is detected: failed copy/kernel, flipped bit, lost device.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/ts_timer.h"
#include "dev_test.h"

#include <unistd.h>

static ts_devset *open_faulty(ts_sim_faults f) {
    ts_devset_opts o;
    dev_test_opts(&o);
    o.backend = TS_BACKEND_SIM;
    o.faults = f;
    return dev_test_open(&o);
}

static int skip_unless_sim(void **state) {
    if (dev_test_backend() != TS_BACKEND_SIM) skip();
    return 0;
}

typedef struct {
    int *flag;
    int sleep_ms;
    int rc;
} mark_args;

static int k_mark(void *p) {
    mark_args *a = p;
    if (a->sleep_ms) usleep((useconds_t)a->sleep_ms * 1000);
    if (a->rc) return ts_error_set(a->rc, __FILE__, __LINE__, "kernel asked to fail");
    if (a->flag) __atomic_store_n(a->flag, 1, __ATOMIC_RELEASE); // (polled by test_lost_during_pacing)
    return 0;
}

static int mark_kernel(ts_stream *st, int *flag, int sleep_ms, int rc) {
    mark_args a = {flag, sleep_ms, rc};
    ts_kernel k = {.name = "mark", .flops = 1, .cpu = k_mark, .args = &a, .args_size = sizeof a};
    return ts_kernel_enqueue(st, &k);
}

static void set_flag(void *p) { *(int *)p = 1; }

static void test_failed_copy_is_sticky(void **state) {
    skip_unless_sim(state);
    ts_devset *s = open_faulty((ts_sim_faults){.device = 1, .fail_copy = 3, .flip_bit = -1});
    assert_non_null(s);
    ts_device *d1 = ts_devset_device(s, 1), *d0 = ts_devset_device(s, 0);
    ts_stream *st, *ok;
    assert_int_equal(ts_stream_create(d1, &st), 0);
    assert_int_equal(ts_stream_create(d0, &ok), 0);
    size_t n = 8192;
    unsigned char *h = malloc(n), *back = malloc(n);
    unsigned seed = 7;
    dev_test_fill(h, n, &seed);
    memset(back, 0x11, n);
    void *x, *y;
    assert_int_equal(ts_dmalloc(d1, n, &x), 0);
    assert_int_equal(ts_dmalloc(d0, n, &y), 0);
    int cb_ran = 0;
    ts_event *ev;
    assert_int_equal(ts_event_create(d1, &ev), 0);
    assert_int_equal(ts_copy_async(st, TS_COPY_H2D, x, h, n), 0);    // copy 1
    assert_int_equal(ts_copy_async(st, TS_COPY_D2D, x, x, n / 2), 0); // copy 2
    assert_int_equal(ts_copy_async(st, TS_COPY_H2D, x, h, n), 0);    // copy 3: fails
    assert_int_equal(ts_copy_async(st, TS_COPY_D2H, back, x, n), 0); // skipped
    assert_int_equal(ts_host_callback(st, set_flag, &cb_ran), 0);   // skipped
    assert_int_equal(ts_event_record(ev, st), 0);
    ts_error_clear();
    assert_int_equal(ts_stream_sync(st), TS_ERR_DEVICE);
    assert_non_null(strstr(ts_error_last()->message, "copy 3"));
    assert_int_equal(ts_stream_error(st), TS_ERR_DEVICE);
    assert_int_equal(ts_event_sync(ev), TS_ERR_DEVICE);
    assert_true(ts_event_query(ev) < 0);
    assert_int_equal(cb_ran, 0);
    for (size_t i = 0; i < n; i++) assert_int_equal(back[i], 0x11); // the D2H never ran
    // Later work on the stream is skipped too; sync keeps returning the error.
    assert_int_equal(ts_copy_async(st, TS_COPY_D2H, back, x, n), 0);
    assert_int_equal(ts_stream_sync(st), TS_ERR_DEVICE);
    assert_int_equal(back[0], 0x11);
    assert_int_equal(ts_device_sync(d1), TS_ERR_DEVICE);
    // Device 0 has no faults: unaffected.
    for (int i = 0; i < 5; i++) assert_int_equal(ts_copy_async(ok, TS_COPY_H2D, y, h, n), 0);
    assert_int_equal(ts_copy_async(ok, TS_COPY_D2H, back, y, n), 0);
    assert_int_equal(ts_stream_sync(ok), 0);
    assert_memory_equal(back, h, n);
    // A stream waiting on the failed event inherits the failure instead of using bad data.
    ts_stream *w;
    assert_int_equal(ts_stream_create(d0, &w), 0);
    assert_int_equal(ts_stream_wait_event(w, ev), 0);
    assert_int_equal(ts_stream_sync(w), TS_ERR_DEVICE);
    assert_int_equal(ts_stream_destroy(w), TS_ERR_DEVICE);
    assert_int_equal(ts_event_destroy(ev), 0);
    assert_int_equal(ts_stream_destroy(st), TS_ERR_DEVICE);
    assert_int_equal(ts_stream_destroy(ok), 0);
    ts_dfree(d1, x), ts_dfree(d0, y);
    free(h), free(back);
    ts_devset_close(s);
}

static void test_failed_kernel(void **state) {
    skip_unless_sim(state);
    ts_devset *s = open_faulty((ts_sim_faults){.device = -1, .fail_kernel = 2, .flip_bit = -1});
    assert_non_null(s);
    for (int dev = 0; dev < 2; dev++) { // device -1: the fault is on every device
        ts_stream *st;
        assert_int_equal(ts_stream_create(ts_devset_device(s, dev), &st), 0);
        int f1 = 0, f2 = 0, f3 = 0;
        assert_int_equal(mark_kernel(st, &f1, 0, 0), 0);
        assert_int_equal(mark_kernel(st, &f2, 0, 0), 0);
        assert_int_equal(mark_kernel(st, &f3, 0, 0), 0);
        ts_error_clear();
        assert_int_equal(ts_stream_sync(st), TS_ERR_DEVICE);
        assert_non_null(strstr(ts_error_last()->message, "kernel 2 (mark)"));
        assert_int_equal(f1, 1);
        assert_int_equal(f2, 0);
        assert_int_equal(f3, 0);
        assert_int_equal(ts_stream_destroy(st), TS_ERR_DEVICE);
    }
    ts_devset_close(s);
}

// A kernel whose CPU body fails makes the stream's sticky error its status.
static void test_kernel_error_is_sticky(void **state) {
    skip_unless_sim(state);
    ts_devset *s = open_faulty((ts_sim_faults){.device = -1, .flip_bit = -1});
    assert_non_null(s);
    ts_stream *st;
    assert_int_equal(ts_stream_create(ts_devset_device(s, 2), &st), 0);
    int after = 0;
    assert_int_equal(mark_kernel(st, NULL, 0, TS_ERR_VERIFY), 0);
    assert_int_equal(mark_kernel(st, &after, 0, 0), 0);
    ts_error_clear();
    assert_int_equal(ts_stream_sync(st), TS_ERR_VERIFY);
    assert_non_null(strstr(ts_error_last()->message, "kernel asked to fail"));
    assert_int_equal(after, 0);
    assert_int_equal(ts_stream_destroy(st), TS_ERR_VERIFY);
    ts_devset_close(s);
}

// Counts the differing bits; returns the index of the last one in *where.
static long diff_bits(const unsigned char *a, const unsigned char *b, size_t n, size_t *where) {
    long d = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char x = a[i] ^ b[i];
        for (int k = 0; k < 8; k++)
            if (x & (1u << k)) {
                d++;
                *where = i * 8 + (size_t)k;
            }
    }
    return d;
}

static void test_bit_flip(void **state) {
    skip_unless_sim(state);
    size_t n = 10000;
    unsigned char *h = malloc(n), *back = malloc(n);
    unsigned seed = 11;
    long bits[2] = {7 + 8 * 123, -1};
    for (int c = 0; c < 2; c++) {
        ts_devset *s = open_faulty((ts_sim_faults){.device = 3, .flip_copy = 2, .flip_bit = bits[c]});
        assert_non_null(s);
        ts_device *d = ts_devset_device(s, 3);
        ts_stream *st;
        assert_int_equal(ts_stream_create(d, &st), 0);
        void *x;
        assert_int_equal(ts_dmalloc(d, n, &x), 0);
        dev_test_fill(h, n, &seed);
        assert_int_equal(ts_memset_async(st, x, 0, n), 0);              // not a copy
        assert_int_equal(ts_copy_async(st, TS_COPY_H2D, x, h, n), 0);    // copy 1
        assert_int_equal(ts_copy_async(st, TS_COPY_D2H, back, x, n), 0); // copy 2: flipped
        assert_int_equal(ts_stream_sync(st), 0);                         // silent, as on real hardware
        size_t where = 0;
        assert_int_equal(diff_bits(h, back, n, &where), 1);
        assert_int_equal(where, bits[c] >= 0 ? (size_t)bits[c] : n * 8 / 2);
        // Later copies are clean again.
        assert_int_equal(ts_copy_async(st, TS_COPY_D2H, back, x, n), 0);
        assert_int_equal(ts_stream_sync(st), 0);
        assert_memory_equal(h, back, n);
        assert_int_equal(ts_stream_destroy(st), 0);
        ts_dfree(d, x);
        ts_devset_close(s);
    }
    // In a 2-D copy the bit index counts over the packed rows; the flip lands inside a row.
    ts_devset *s = open_faulty((ts_sim_faults){.device = 0, .flip_copy = 1, .flip_bit = 8 * 250 + 3});
    assert_non_null(s);
    ts_device *d = ts_devset_device(s, 0);
    ts_stream *st;
    assert_int_equal(ts_stream_create(d, &st), 0);
    size_t w = 100, rows = 10, dp = 160;
    void *x;
    assert_int_equal(ts_dmalloc(d, dp * rows, &x), 0);
    dev_test_fill(h, w * rows, &seed);
    assert_int_equal(ts_copy2d_async(st, TS_COPY_H2D, x, dp, h, w, w, rows), 0); // flipped
    assert_int_equal(ts_copy2d_async(st, TS_COPY_D2H, back, w, x, dp, w, rows), 0);
    assert_int_equal(ts_stream_sync(st), 0);
    size_t where = 0;
    assert_int_equal(diff_bits(h, back, w * rows, &where), 1);
    assert_int_equal(where, 8 * 250 + 3);
    assert_int_equal(ts_stream_destroy(st), 0);
    ts_dfree(d, x);
    ts_devset_close(s);
    free(h), free(back);
}

static void test_lost_device(void **state) {
    skip_unless_sim(state);
    ts_devset *s = open_faulty((ts_sim_faults){.device = 2, .lose_after = 5, .flip_bit = -1});
    assert_non_null(s);
    ts_device *d = ts_devset_device(s, 2), *other = ts_devset_device(s, 0);
    ts_stream *a, *b, *w;
    assert_int_equal(ts_stream_create(d, &a), 0);
    assert_int_equal(ts_stream_create(d, &b), 0);
    assert_int_equal(ts_stream_create(other, &w), 0);
    ts_event *ev;
    assert_int_equal(ts_event_create(d, &ev), 0);
    int flags[10] = {0};
    // Ops 1..5 run; the 6th and everything after fail. Slow kernels (2 s each, 10 s together) show
    // sync does not wait them out: the bound below is half their time, not a guess at how fast a
    // loaded machine runs the first five.
    for (int i = 0; i < 10; i++) assert_int_equal(mark_kernel(a, &flags[i], i < 5 ? 1 : 2000, 0), 0);
    assert_int_equal(ts_event_record(ev, a), 0);
    // A stream of a healthy device waits on the lost device's event: it must not hang.
    assert_int_equal(ts_stream_wait_event(w, ev), 0);
    double t0 = ts_now();
    ts_error_clear();
    assert_int_equal(ts_stream_sync(a), TS_ERR_DEVICE_LOST);
    assert_int_equal(ts_error_last()->code, TS_ERR_DEVICE_LOST);
    assert_int_equal(ts_event_sync(ev), TS_ERR_DEVICE_LOST);
    assert_int_equal(ts_stream_sync(w), TS_ERR_DEVICE_LOST);
    assert_int_equal(ts_stream_sync(b), TS_ERR_DEVICE_LOST); // idle stream of the lost device
    assert_int_equal(ts_device_sync(d), TS_ERR_DEVICE_LOST);
    double dt = ts_now() - t0;
    assert_true(dt < 5.0);
    for (int i = 0; i < 5; i++) assert_int_equal(flags[i], 1);
    for (int i = 5; i < 10; i++) assert_int_equal(flags[i], 0);
    // Later work is refused at once.
    void *x;
    assert_int_equal(ts_dmalloc(d, 64, &x), 0);
    char h[64] = {1};
    assert_int_equal(ts_copy_async(b, TS_COPY_H2D, x, h, 64), TS_ERR_DEVICE_LOST);
    assert_int_equal(ts_event_record(ev, b), TS_ERR_DEVICE_LOST);
    assert_int_equal(ts_stream_sync(b), TS_ERR_DEVICE_LOST);
    // Other devices keep working.
    ts_stream *ok;
    ts_device *d3 = ts_devset_device(s, 3);
    assert_int_equal(ts_stream_create(d3, &ok), 0);
    int f = 0;
    assert_int_equal(mark_kernel(ok, &f, 0, 0), 0);
    assert_int_equal(ts_stream_sync(ok), 0);
    assert_int_equal(f, 1);
    assert_int_equal(ts_device_sync(other), TS_ERR_DEVICE_LOST); // w's sticky error
    assert_int_equal(ts_stream_destroy(ok), 0);
    assert_int_equal(ts_stream_destroy(a), TS_ERR_DEVICE_LOST);
    assert_int_equal(ts_stream_destroy(b), TS_ERR_DEVICE_LOST);
    assert_int_equal(ts_stream_destroy(w), TS_ERR_DEVICE_LOST);
    assert_int_equal(ts_event_destroy(ev), 0);
    ts_dfree(d, x);
    ts_devset_close(s);
}

// A device lost in the middle of a paced kernel: sync returns without waiting the pacing out.
static void test_lost_during_pacing(void **state) {
    skip_unless_sim(state);
    ts_devset_opts o;
    dev_test_opts(&o);
    o.backend = TS_BACKEND_SIM;
    o.sim_gflops = 1.0;
    o.faults = (ts_sim_faults){.device = 0, .lose_after = 2, .flip_bit = -1};
    ts_devset *s = dev_test_open(&o);
    assert_non_null(s);
    ts_device *d = ts_devset_device(s, 0);
    ts_stream *a, *b;
    assert_int_equal(ts_stream_create(d, &a), 0);
    assert_int_equal(ts_stream_create(d, &b), 0);
    // Stream a: one 30-second kernel (op 1). Stream b: op 2, then op 3 loses the device. The kernel
    // must be op 1: b's work is enqueued only once the kernel's body ran (its flag; no sleep stands
    // in for that on a loaded machine), and the pacing that follows it is what the loss cuts short.
    int f0 = 0;
    mark_args m = {&f0, 0, 0};
    ts_kernel k = {.name = "long", .flops = 30e9, .cpu = k_mark, .args = &m, .args_size = sizeof m};
    assert_int_equal(ts_kernel_enqueue(a, &k), 0);
    while (!__atomic_load_n(&f0, __ATOMIC_ACQUIRE)) usleep(1000);
    void *x;
    assert_int_equal(ts_dmalloc(d, 4096, &x), 0);
    assert_int_equal(ts_memset_async(b, x, 1, 4096), 0);
    assert_int_equal(ts_memset_async(b, x, 2, 4096), 0);
    double t0 = ts_now();
    assert_int_equal(ts_stream_sync(b), TS_ERR_DEVICE_LOST);
    assert_int_equal(ts_stream_sync(a), TS_ERR_DEVICE_LOST);
    assert_true(ts_now() - t0 < 15.0); // half the kernel's pacing: it was cut short by the loss
    assert_int_equal(f0, 1);
    ts_dfree(d, x);
    ts_stream_destroy(a);
    ts_stream_destroy(b);
    ts_devset_close(s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_failed_copy_is_sticky),
        cmocka_unit_test(test_failed_kernel),
        cmocka_unit_test(test_kernel_error_is_sticky),
        cmocka_unit_test(test_bit_flip),
        cmocka_unit_test(test_lost_device),
        cmocka_unit_test(test_lost_during_pacing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
