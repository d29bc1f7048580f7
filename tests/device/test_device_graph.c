// test_device_graph.c: graphs of the device layer: a stream's work captured once and replayed (sim by default, CUDA on request).
//
// A capture records and runs nothing; each launch replays the recorded kernels, memsets and
// device-to-device copies in order, so the results of two launches equal, bit for bit, the same
// operations enqueued directly twice. What a graph cannot replay is refused during the capture,
// which then fails as a whole and leaves the stream usable. (Kernels have CPU bodies only: on
// CUDA the graphs hold memsets and copies.)
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "dev_test.h"

#include <stdatomic.h>

#define OK(expr) assert_int_equal((expr), 0)

// ---- a kernel with a CPU body that counts its runs ----

static atomic_long g_runs;

typedef struct {
    double *x;
    size_t n;
    double mul, add;
} axpb_args;

static int k_axpb_cpu(void *p) {
    const axpb_args *a = p;
    for (size_t i = 0; i < a->n; i++) a->x[i] = a->x[i] * a->mul + a->add;
    atomic_fetch_add(&g_runs, 1);
    return 0;
}

static int axpb(ts_stream *st, double *x, size_t n, double mul, double add) {
    axpb_args a = {x, n, mul, add};
    ts_kernel k = {.name = "axpb", .flops = 2.0 * (double)n, .cpu = k_axpb_cpu, .args = &a, .args_size = sizeof a};
    int rc = ts_kernel_enqueue(st, &k);
    memset(&a, 0, sizeof a); // the graph keeps its own copy of the arguments
    return rc;
}

// The work of the tests: y = 0; x = 3x + 1; y[half] = x[half]; y = y / 2 - 5; x[0..7] = 0x7f; y(2-D) = x.
// Memsets and copies alone on CUDA (kernels have no CUDA body here).
static int work(ts_stream *st, double *x, double *y, size_t n) {
    const size_t bytes = n * sizeof(double), half = bytes / 2;
    TS_CHECK(ts_memset_async(st, y, 0, bytes));
    if (dev_test_is_sim()) TS_CHECK(axpb(st, x, n, 3.0, 1.0));
    TS_CHECK(ts_copy_async(st, TS_COPY_D2D, y, x, half));
    if (dev_test_is_sim()) TS_CHECK(axpb(st, y, n, 0.5, -5.0));
    TS_CHECK(ts_memset_async(st, x, 0x7f, 8));
    // a strided copy: 16 lines of 8 bytes from every 4th double of x into the end of y
    return ts_copy2d_async(st, TS_COPY_D2D, y + n - 64, 4 * sizeof(double), x + 1, 4 * sizeof(double), 8, 16);
}

static void fill(ts_stream *st, double *dx, size_t n) {
    double *h = malloc(n * sizeof(double));
    for (size_t i = 0; i < n; i++) h[i] = 1.0 + (double)((i * 7919) % 1013) / 64.0;
    OK(ts_copy_async(st, TS_COPY_H2D, dx, h, n * sizeof(double)));
    OK(ts_stream_sync(st));
    free(h);
}

static double *host_copy(ts_stream *st, const double *dx, size_t n) {
    double *h = malloc(n * sizeof(double));
    assert_non_null(h);
    OK(ts_copy_async(st, TS_COPY_D2H, h, dx, n * sizeof(double)));
    OK(ts_stream_sync(st));
    return h;
}

// Capture runs nothing; two launches give what two direct runs give; counters count launches.
static void test_capture_and_replay(void **state) {
    ts_devset *s = *state;
    ts_device *d = ts_devset_device(s, 0);
    ts_stream *st;
    OK(ts_stream_create(d, &st));
    const size_t n = 4096, bytes = n * sizeof(double);
    double *x, *y, *x2, *y2;
    OK(ts_dmalloc(d, bytes, (void **)&x));
    OK(ts_dmalloc(d, bytes, (void **)&y));
    OK(ts_dmalloc(d, bytes, (void **)&x2));
    OK(ts_dmalloc(d, bytes, (void **)&y2));
    fill(st, x, n);
    fill(st, x2, n);
    OK(ts_memset_async(st, y, 0x11, bytes));
    OK(ts_stream_sync(st));
    double *x0 = host_copy(st, x, n), *y0 = host_copy(st, y, n);

    ts_device_counters before, after, gc;
    ts_device_counters_get(d, &before);
    atomic_store(&g_runs, 0);
    assert_int_equal(ts_stream_capturing(st), 0);
    OK(ts_stream_capture_begin(st));
    assert_int_equal(ts_stream_capturing(st), 1);
    OK(work(st, x, y, n));
    ts_graph *g = NULL;
    OK(ts_stream_capture_end(st, &g));
    assert_non_null(g);
    assert_int_equal(ts_stream_capturing(st), 0);
    // nothing ran: the buffers are as they were, no kernel ran, the device counted nothing
    double *xc = host_copy(st, x, n), *yc = host_copy(st, y, n);
    assert_memory_equal(xc, x0, bytes);
    assert_memory_equal(yc, y0, bytes);
    assert_int_equal(atomic_load(&g_runs), 0);
    ts_device_counters_get(d, &after);
    assert_int_equal(after.kernels, before.kernels);
    assert_int_equal(after.copies, before.copies + 2); // the two host copies above
    ts_graph_counters(g, &gc);
    assert_int_equal(gc.kernels, dev_test_is_sim() ? 2 : 0);
    assert_int_equal(gc.copies, 2);
    assert_int_equal(gc.bytes_d2d, bytes / 2 + 8 * 16);
    assert_true(gc.kernel_flops == (dev_test_is_sim() ? 4.0 * n : 0.0));

    // two launches against the same work enqueued twice
    ts_device_counters_get(d, &before);
    OK(ts_graph_launch(g, st));
    OK(ts_graph_launch(g, st));
    OK(work(st, x2, y2, n));
    OK(work(st, x2, y2, n));
    OK(ts_stream_sync(st));
    ts_device_counters_get(d, &after);
    assert_int_equal(after.kernels - before.kernels, 2 * gc.kernels + (dev_test_is_sim() ? 4 : 0));
    assert_int_equal(after.copies - before.copies, 2 * gc.copies + 4);
    assert_int_equal(atomic_load(&g_runs), dev_test_is_sim() ? 8 : 0);
    double *gx = host_copy(st, x, n), *gy = host_copy(st, y, n), *dx = host_copy(st, x2, n), *dy = host_copy(st, y2, n);
    assert_memory_equal(gx, dx, bytes);
    assert_memory_equal(gy, dy, bytes);
    assert_memory_not_equal(gx, x0, bytes); // the launches did run
    // a graph launches on any stream of its device
    ts_stream *other;
    OK(ts_stream_create(d, &other));
    OK(ts_graph_launch(g, other));
    OK(work(st, x2, y2, n));
    OK(ts_stream_sync(other));
    OK(ts_stream_sync(st));
    free(gx), free(gy), free(dx), free(dy);
    gx = host_copy(st, x, n), gy = host_copy(st, y, n), dx = host_copy(st, x2, n), dy = host_copy(st, y2, n);
    assert_memory_equal(gx, dx, bytes);
    assert_memory_equal(gy, dy, bytes);
    ts_graph_destroy(g);
    ts_graph_destroy(NULL);
    OK(ts_stream_destroy(other));
    OK(ts_stream_destroy(st));
    void *bufs[] = {x, y, x2, y2};
    for (int i = 0; i < 4; i++) OK(ts_dfree(d, bufs[i]));
    free(x0), free(y0), free(xc), free(yc), free(gx), free(gy), free(dx), free(dy);
}

// A graph of peer copies between two devices replays them (their bytes counted as peer bytes).
static void test_peer_copy_graph(void **state) {
    ts_devset *s = *state;
    if (ts_devset_count(s) < 2) skip();
    ts_device *d0 = ts_devset_device(s, 0), *d1 = ts_devset_device(s, 1);
    ts_stream *st, *st1;
    OK(ts_stream_create(d0, &st));
    OK(ts_stream_create(d1, &st1));
    const size_t n = 1024, bytes = n * sizeof(double);
    double *a, *b;
    OK(ts_dmalloc(d0, bytes, (void **)&a));
    OK(ts_dmalloc(d1, bytes, (void **)&b));
    fill(st, a, n);
    OK(ts_memset_async(st1, b, 0, bytes));
    OK(ts_stream_sync(st1));
    OK(ts_stream_capture_begin(st));
    OK(ts_copy_peer2d_async(st, d1, b, bytes, d0, a, bytes, bytes, 1));
    ts_graph *g;
    OK(ts_stream_capture_end(st, &g));
    double *hb = host_copy(st1, b, n), *ha = host_copy(st, a, n);
    for (size_t i = 0; i < n; i++) assert_true(hb[i] == 0.0);
    ts_device_counters gc;
    ts_graph_counters(g, &gc);
    assert_int_equal(gc.bytes_p2p, bytes);
    // a graph of device 0 does not launch on device 1
    assert_int_equal(ts_graph_launch(g, st1), TS_ERR_ARG);
    OK(ts_graph_launch(g, st));
    OK(ts_stream_sync(st));
    free(hb);
    hb = host_copy(st1, b, n);
    assert_memory_equal(hb, ha, bytes);
    ts_graph_destroy(g);
    OK(ts_stream_destroy(st));
    OK(ts_stream_destroy(st1));
    OK(ts_dfree(d0, a));
    OK(ts_dfree(d1, b));
    free(ha), free(hb);
}

// An operation that cannot be captured is refused and fails the capture: capture_end returns that
// error and no graph, and the stream runs work directly afterwards.
static void expect_failed_capture(ts_stream *st, double *x, size_t n, int op, int code) {
    double h[4] = {1, 2, 3, 4};
    ts_event *ev = NULL;
    OK(ts_event_create(ts_stream_device(st), &ev));
    OK(ts_stream_capture_begin(st));
    OK(ts_memset_async(st, x, 0, n * sizeof(double)));
    int rc = 0;
    switch (op) {
    case 0: rc = ts_copy_async(st, TS_COPY_H2D, x, h, sizeof h); break;
    case 1: rc = ts_copy_async(st, TS_COPY_D2H, h, x, sizeof h); break;
    case 2: rc = ts_host_callback(st, free, NULL); break;
    case 3: rc = ts_event_record(ev, st); break;
    case 4: rc = ts_stream_wait_event(st, ev); break;
    case 5: rc = ts_stream_sync(st); break;
    case 6: rc = ts_stream_error(st); break;
    }
    assert_int_equal(rc, code);
    if (dev_test_is_sim()) OK(axpb(st, x, n, 1.0, 1.0)); // later operations are still taken
    assert_int_equal(ts_stream_capturing(st), 1);
    ts_graph *g = (ts_graph *)st; // overwritten with NULL
    assert_int_equal(ts_stream_capture_end(st, &g), code);
    assert_null(g);
    assert_non_null(strstr(ts_error_last()->message, "capture of a graph on device"));
    assert_int_equal(ts_stream_capturing(st), 0);
    // the stream is usable: direct work runs and syncs without error
    atomic_store(&g_runs, 0);
    OK(ts_memset_async(st, x, 0, n * sizeof(double)));
    if (dev_test_is_sim()) OK(axpb(st, x, n, 1.0, 2.0));
    OK(ts_stream_sync(st));
    OK(ts_stream_error(st));
    double *hx = host_copy(st, x, n);
    for (size_t i = 0; i < n; i++) assert_true(hx[i] == (dev_test_is_sim() ? 2.0 : 0.0));
    assert_int_equal(atomic_load(&g_runs), dev_test_is_sim() ? 1 : 0);
    free(hx);
    OK(ts_event_destroy(ev));
}

static void test_refused_operations(void **state) {
    ts_devset *s = *state;
    ts_device *d = ts_devset_device(s, 0);
    ts_stream *st;
    OK(ts_stream_create(d, &st));
    const size_t n = 256;
    double *x;
    OK(ts_dmalloc(d, n * sizeof(double), (void **)&x));
    // every backend: waiting for a capturing stream
    expect_failed_capture(st, x, n, 5, TS_ERR_STATE);
    expect_failed_capture(st, x, n, 6, TS_ERR_STATE);
    // simulated devices: host copies, callbacks, events (CUDA captures these)
    if (dev_test_is_sim())
        for (int op = 0; op <= 4; op++) expect_failed_capture(st, x, n, op, TS_ERR_UNSUPPORTED);
    OK(ts_dfree(d, x));
    OK(ts_stream_destroy(st));
}

// Misuse: end without begin, begin twice, NULL arguments; a stream destroyed while capturing
// drops its capture (the sanitizer build checks that nothing leaks).
static void test_capture_state(void **state) {
    ts_devset *s = *state;
    ts_device *d = ts_devset_device(s, 0);
    ts_stream *st;
    ts_graph *g = NULL;
    OK(ts_stream_create(d, &st));
    assert_int_equal(ts_stream_capture_end(st, &g), TS_ERR_STATE);
    assert_null(g);
    assert_int_equal(ts_stream_capture_begin(NULL), TS_ERR_ARG);
    assert_int_equal(ts_stream_capture_end(st, NULL), TS_ERR_ARG);
    assert_int_equal(ts_graph_launch(NULL, st), TS_ERR_ARG);
    OK(ts_stream_capture_begin(st));
    assert_int_equal(ts_stream_capture_begin(st), TS_ERR_STATE);
    double *x;
    OK(ts_dmalloc(d, 1024, (void **)&x));
    OK(ts_memset_async(st, x, 0, 1024));
    if (dev_test_is_sim()) OK(axpb(st, x, 128, 2.0, 0.0));
    OK(ts_stream_destroy(st)); // still capturing
    // an empty graph launches and does nothing
    OK(ts_stream_create(d, &st));
    OK(ts_stream_capture_begin(st));
    OK(ts_stream_capture_end(st, &g));
    assert_non_null(g);
    OK(ts_graph_launch(g, st));
    OK(ts_stream_sync(st));
    ts_graph_destroy(g);
    OK(ts_stream_destroy(st));
    OK(ts_dfree(d, x));
}

// A graph captured inside another capture: its operations are recorded there.
static void test_graph_in_capture(void **state) {
    if (!dev_test_is_sim()) skip();
    ts_devset *s = *state;
    ts_device *d = ts_devset_device(s, 0);
    ts_stream *st;
    OK(ts_stream_create(d, &st));
    const size_t n = 64;
    double *x;
    OK(ts_dmalloc(d, n * sizeof(double), (void **)&x));
    OK(ts_memset_async(st, x, 0, n * sizeof(double)));
    ts_graph *inner, *outer;
    OK(ts_stream_capture_begin(st));
    OK(axpb(st, x, n, 1.0, 1.0));
    OK(ts_stream_capture_end(st, &inner));
    OK(ts_stream_capture_begin(st));
    OK(ts_graph_launch(inner, st));
    OK(axpb(st, x, n, 2.0, 0.0));
    OK(ts_graph_launch(inner, st));
    OK(ts_stream_capture_end(st, &outer));
    ts_graph_destroy(inner); // the outer graph has its own copy
    ts_device_counters gc;
    ts_graph_counters(outer, &gc);
    assert_int_equal(gc.kernels, 3);
    OK(ts_graph_launch(outer, st)); // x = 2 (x + 1) + 1 = 3
    OK(ts_graph_launch(outer, st)); // 9
    double *hx = host_copy(st, x, n);
    for (size_t i = 0; i < n; i++) assert_true(hx[i] == 9.0);
    free(hx);
    ts_graph_destroy(outer);
    OK(ts_dfree(d, x));
    OK(ts_stream_destroy(st));
}

// A fault injected into the Nth kernel hits the replayed kernels like any other: the stream's
// sticky error reports it at the next sync.
static void test_replay_fault(void **state) {
    (void)state;
    if (!dev_test_is_sim()) skip();
    ts_devset_opts o;
    dev_test_opts(&o);
    o.sim_devices = 1;
    o.faults.fail_kernel = 3; // the third kernel the device runs: the first of the second launch
    ts_devset *s = dev_test_open(&o);
    assert_non_null(s);
    ts_device *d = ts_devset_device(s, 0);
    ts_stream *st;
    OK(ts_stream_create(d, &st));
    double *x;
    OK(ts_dmalloc(d, 64 * sizeof(double), (void **)&x));
    ts_graph *g;
    OK(ts_stream_capture_begin(st));
    OK(axpb(st, x, 64, 1.0, 1.0));
    OK(axpb(st, x, 64, 1.0, 1.0));
    OK(ts_stream_capture_end(st, &g));
    OK(ts_graph_launch(g, st));
    OK(ts_stream_sync(st)); // kernels 1 and 2
    OK(ts_graph_launch(g, st));
    assert_int_equal(ts_stream_sync(st), TS_ERR_DEVICE); // kernel 3
    assert_non_null(strstr(ts_error_last()->message, "injected failure of kernel 3"));
    ts_graph_destroy(g);
    ts_stream_destroy(st);
    ts_dfree(d, x);
    ts_devset_close(s);
}

int main(void) {
#define T(f) cmocka_unit_test_setup_teardown(f, dev_test_setup, dev_test_teardown)
    const struct CMUnitTest tests[] = {
        T(test_capture_and_replay), T(test_peer_copy_graph), T(test_refused_operations),
        T(test_capture_state),      T(test_graph_in_capture), cmocka_unit_test(test_replay_fault),
    };
    fprintf(stderr, "device graphs on backend %s\n", ts_backend_name(dev_test_backend()));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
