// test_gpu_cuda.c: smoke test of the CUDA backend and the cuBLAS/cuSOLVER engines on a real GPU (skips without one).
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "ts_config.h"

#if TS_HAVE_CUDA

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "core/ts_error.h"
#include "core/ts_rng.h"
#include "device/ts_device.h"
#include "kernels/cuda/ts_cuda_kernels.h"
#include "kernels/ts_kernels.h"

#define ARENA_BYTES ((size_t)1 << 30) // the test's arena per device: small, a GPU may be shared

static ts_devset *g_set;

#define CHECK_OK(expr)                                                                             \
    do {                                                                                           \
        int rc_ = (expr);                                                                          \
        if (rc_ != 0) fail_msg("%s = %d: %s", #expr, rc_, ts_error_string());                      \
    } while (0)

#define NEED_GPU()                                                                                 \
    do {                                                                                           \
        if (!g_set) skip();                                                                        \
    } while (0)

static int group_setup(void **state)
{
    if (ts_cuda_device_count() == 0) {
        printf("# no CUDA device visible: the GPU tests skip\n");
        return 0;
    }
    ts_devset_opts o;
    if (ts_devset_opts_init(&o) < 0) return -1;
    o.backend = TS_BACKEND_CUDA;
    o.arena_bytes = ARENA_BYTES;
    if (ts_devset_open(&o, &g_set) < 0) {
        printf("# ts_devset_open: %s\n", ts_error_string());
        return -1;
    }
    return 0;
}

static int group_teardown(void **state)
{
    ts_devset_close(g_set);
    g_set = NULL;
    return 0;
}

static double *rand_matrix(uint64_t key, int64_t rows, int64_t cols, int64_t ld)
{
    double *m = malloc((size_t)(ld * cols) * sizeof *m);
    assert_non_null(m);
    ts_fill_uniform_d(key, m, ld * cols);
    for (int64_t i = 0; i < ld * cols; i++)
        if (m[i] == 0.0) m[i] = 0.25; // never zeros: a copy that writes nothing must not pass
    return m;
}

// Page-aligned host buffer (whole pages): pinning it never shares a page with another buffer.
static double *page_alloc(size_t bytes)
{
    double *p = aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
    assert_non_null(p);
    return p;
}

static double max_abs_diff(int64_t rows, int64_t cols, const double *a, int64_t lda, const double *b, int64_t ldb)
{
    double e = 0.0;
    for (int64_t j = 0; j < cols; j++)
        for (int64_t i = 0; i < rows; i++) {
            double d = fabs(a[i + j * lda] - b[i + j * ldb]);
            if (!(d <= e)) e = d; // NaN wins
        }
    return e;
}

// Host matrix -> new device matrix with the same leading dimension (pageable copy, synchronised).
static double *to_device(ts_stream *st, const double *h, int64_t ld, int64_t cols)
{
    void *d = NULL;
    CHECK_OK(ts_dmalloc(ts_stream_device(st), (size_t)(ld * cols) * sizeof(double), &d));
    CHECK_OK(ts_copy_async(st, TS_COPY_H2D, d, h, (size_t)(ld * cols) * sizeof(double)));
    CHECK_OK(ts_stream_sync(st));
    return d;
}

static void from_device(ts_stream *st, double *h, const double *d, int64_t ld, int64_t cols)
{
    CHECK_OK(ts_copy_async(st, TS_COPY_D2H, h, d, (size_t)(ld * cols) * sizeof(double)));
    CHECK_OK(ts_stream_sync(st));
}

// ---- devices and memory ----

static void test_open_props(void **state)
{
    NEED_GPU();
    assert_int_equal(ts_devset_backend(g_set), TS_BACKEND_CUDA);
    assert_int_equal(ts_devset_count(g_set), ts_cuda_device_count());
    for (int i = 0; i < ts_devset_count(g_set); i++) {
        ts_device *d = ts_devset_device(g_set, i);
        const ts_device_props *p = ts_device_props_of(d);
        printf("# device %d: %s, bus %s, cc %d.%d, %d SMs, %.0f MHz, %.0f GB/s, %zu MiB, arena %zu MiB\n", i,
               p->name, p->bus_id, p->cc_major, p->cc_minor, p->sms, p->clock_mhz, p->mem_bw_gbs,
               p->mem_total >> 20, p->arena_bytes >> 20);
        assert_int_equal(p->backend, TS_BACKEND_CUDA);
        assert_int_equal(p->ordinal, i);
        assert_int_equal(p->native_id, i);
        assert_true(strlen(p->name) > 0);
        assert_true(strlen(p->bus_id) > 0);
        assert_true(p->mem_total > ARENA_BYTES);
        assert_int_equal(p->arena_bytes, ARENA_BYTES);
        assert_true(p->sms > 0);
        assert_true(p->cc_major >= 3);
        assert_true(p->clock_mhz > 0);
        assert_true(p->mem_bw_gbs > 100);
        assert_int_equal(ts_device_can_peer(d, d), 1);
        for (int j = 0; j < ts_devset_count(g_set); j++)
            if (j != i) printf("#   peer %d -> %d: %d\n", i, j, ts_device_can_peer(d, ts_devset_device(g_set, j)));
    }
}

static void test_arena(void **state)
{
    NEED_GPU();
    ts_device *d = ts_devset_device(g_set, 0);
    size_t used0, free0, largest0;
    ts_dmem_info(d, &used0, &free0, &largest0);
    void *a = NULL, *b = NULL, *c = NULL;
    CHECK_OK(ts_dmalloc(d, 1000, &a));
    CHECK_OK(ts_dmalloc(d, (size_t)64 << 20, &b));
    CHECK_OK(ts_dmalloc(d, 3, &c));
    assert_true((uintptr_t)a % 256 == 0 && (uintptr_t)b % 256 == 0 && (uintptr_t)c % 256 == 0);
    struct cudaPointerAttributes at;
    assert_int_equal(cudaPointerGetAttributes(&at, b), cudaSuccess);
    assert_int_equal(at.type, cudaMemoryTypeDevice);
    assert_int_equal(at.device, 0);
    CHECK_OK(ts_dfree(d, b));
    CHECK_OK(ts_dfree(d, a));
    CHECK_OK(ts_dfree(d, c));
    size_t used1, free1, largest1;
    ts_dmem_info(d, &used1, &free1, &largest1);
    assert_int_equal(used1, used0);
    void *huge = NULL;
    assert_int_equal(ts_dmalloc(d, 2 * ARENA_BYTES, &huge), TS_ERR_DEVMEM);
    assert_null(huge);
}

static void test_pinned(void **state)
{
    NEED_GPU();
    size_t bytes = (size_t)3 << 20;
    char *buf = aligned_alloc(4096, bytes);
    assert_non_null(buf);
    int h1, h2;
    CHECK_OK(ts_host_pin(g_set, buf, bytes, &h1));
    CHECK_OK(ts_host_pin(g_set, buf + 4096, 8192, &h2)); // overlapping: must not register twice
    size_t reg;
    int handles;
    long calls;
    ts_host_pin_stats(g_set, &reg, &handles, &calls);
    assert_true(reg >= bytes);
    assert_int_equal(handles, 2);
    struct cudaPointerAttributes at;
    assert_int_equal(cudaPointerGetAttributes(&at, buf + 12345), cudaSuccess);
    assert_int_equal(at.type, cudaMemoryTypeHost);
    CHECK_OK(ts_host_unpin(g_set, h1));
    assert_int_equal(cudaPointerGetAttributes(&at, buf + 4096), cudaSuccess);
    assert_int_equal(at.type, cudaMemoryTypeHost); // still held by h2
    CHECK_OK(ts_host_unpin(g_set, h2));
    ts_host_pin_stats(g_set, &reg, &handles, &calls);
    assert_int_equal(reg, 0);
    assert_int_equal(handles, 0);
    free(buf);

    void *p = NULL;
    CHECK_OK(ts_host_alloc(g_set, bytes, &p));
    assert_int_equal(cudaPointerGetAttributes(&at, p), cudaSuccess);
    assert_int_equal(at.type, cudaMemoryTypeHost);
    // Pinning memory that is page-locked already is accepted (nothing to register) and undone cleanly.
    CHECK_OK(ts_host_pin(g_set, p, bytes, &h1));
    CHECK_OK(ts_host_unpin(g_set, h1));
    assert_int_equal(cudaPointerGetAttributes(&at, p), cudaSuccess);
    assert_int_equal(at.type, cudaMemoryTypeHost);
    ts_host_free(g_set, p);
}

// ---- copies, events, callbacks, kernels ----

static void count_cb(void *arg) { (*(int *)arg)++; }

static void test_copy2d_roundtrip(void **state)
{
    NEED_GPU();
    ts_device *d = ts_devset_device(g_set, 0);
    ts_stream *st;
    CHECK_OK(ts_stream_create(d, &st));
    const int64_t m = 1000, n = 300, lda = 1024, ldd = 1100, ldd2 = 1003, ldb = 1017;
    double *A = page_alloc((size_t)(lda * n) * 8), *B = page_alloc((size_t)(ldb * n) * 8);
    ts_fill_uniform_d(11, A, lda * n);
    for (int64_t i = 0; i < ldb * n; i++) B[i] = -7.0; // sentinel outside the block
    int hA, hB;
    CHECK_OK(ts_host_pin(g_set, A, (size_t)(lda * n) * sizeof *A, &hA));
    CHECK_OK(ts_host_pin(g_set, B, (size_t)(ldb * n) * sizeof *B, &hB));
    void *dA = NULL, *dA2 = NULL;
    CHECK_OK(ts_dmalloc(d, (size_t)(ldd * n) * 8, &dA));
    CHECK_OK(ts_dmalloc(d, (size_t)(ldd2 * n) * 8, &dA2));
    ts_event *e0, *e1;
    CHECK_OK(ts_event_create(d, &e0));
    CHECK_OK(ts_event_create(d, &e1));
    int calls = 0;

    CHECK_OK(ts_memset_async(st, dA2, 0, (size_t)(ldd2 * n) * 8));
    CHECK_OK(ts_event_record(e0, st));
    CHECK_OK(ts_copy2d_async(st, TS_COPY_H2D, dA, ldd * 8, A, lda * 8, m * 8, n));
    CHECK_OK(ts_copy2d_async(st, TS_COPY_D2D, dA2, ldd2 * 8, dA, ldd * 8, m * 8, n));
    CHECK_OK(ts_copy2d_async(st, TS_COPY_D2H, B, ldb * 8, dA2, ldd2 * 8, m * 8, n));
    CHECK_OK(ts_event_record(e1, st));
    CHECK_OK(ts_host_callback(st, count_cb, &calls));
    CHECK_OK(ts_stream_sync(st));
    assert_int_equal(calls, 1);
    assert_int_equal(ts_event_query(e1), 1);

    for (int64_t j = 0; j < n; j++) {
        assert_memory_equal(B + j * ldb, A + j * lda, (size_t)m * 8);
        for (int64_t i = m; i < ldb; i++) assert_true(B[i + j * ldb] == -7.0);
    }
    double ms = 0;
    CHECK_OK(ts_event_elapsed_ms(e0, e1, &ms));
    printf("# 2-D round trip of %.1f MB: %.3f ms\n", m * n * 8 * 3 / 1e6, ms);
    assert_true(ms > 0);

    // A large pinned H2D copy, timed.
    size_t big = (size_t)256 << 20;
    void *hbig = NULL, *dbig = NULL;
    CHECK_OK(ts_host_alloc(g_set, big, &hbig));
    memset(hbig, 0x5a, big);
    CHECK_OK(ts_dmalloc(d, big, &dbig));
    CHECK_OK(ts_event_record(e0, st));
    CHECK_OK(ts_copy_async(st, TS_COPY_H2D, dbig, hbig, big));
    CHECK_OK(ts_event_record(e1, st));
    CHECK_OK(ts_event_sync(e1));
    CHECK_OK(ts_event_elapsed_ms(e0, e1, &ms));
    printf("# H2D pinned %zu MiB: %.3f ms, %.1f GB/s\n", big >> 20, ms, big / (ms * 1e6));
    assert_true(ms > 0);

    ts_host_free(g_set, hbig);
    CHECK_OK(ts_dfree(d, dbig));
    CHECK_OK(ts_event_destroy(e0));
    CHECK_OK(ts_event_destroy(e1));
    CHECK_OK(ts_dfree(d, dA));
    CHECK_OK(ts_dfree(d, dA2));
    CHECK_OK(ts_host_unpin(g_set, hA));
    CHECK_OK(ts_host_unpin(g_set, hB));
    CHECK_OK(ts_stream_destroy(st));
    free(A);
    free(B);
}

// One buffer pinned as two handles that share a page: the registry keeps two backend segments,
// and one copy over the whole buffer crosses from one to the other. CUDA refuses an async copy
// whose host range spans two registrations unless the registry merges them.
static void test_pinned_adjacent_ranges(void **state)
{
    NEED_GPU();
    ts_device *d = ts_devset_device(g_set, 0);
    ts_stream *st;
    CHECK_OK(ts_stream_create(d, &st));
    const size_t bytes = (size_t)64 * 4096, half = bytes / 2 + 1000;
    double *h = page_alloc(bytes), *back = page_alloc(bytes);
    ts_fill_uniform_d(31, h, (int64_t)(bytes / 8));
    void *x = NULL;
    CHECK_OK(ts_dmalloc(d, bytes, &x));
    int h1, h2;
    CHECK_OK(ts_host_pin(g_set, h, half, &h1));
    CHECK_OK(ts_host_pin(g_set, (char *)h + half, bytes - half, &h2));
    int rc = ts_copy_async(st, TS_COPY_H2D, x, h, bytes);
    if (rc < 0) printf("# copy over two pinned handles: %s\n", ts_error_string());
    int rs = ts_stream_sync(st);
    CHECK_OK(ts_host_unpin(g_set, h1));
    CHECK_OK(ts_host_unpin(g_set, h2));
    if (rc == 0 && rs == 0) {
        CHECK_OK(ts_copy_async(st, TS_COPY_D2H, back, x, bytes));
        CHECK_OK(ts_stream_sync(st));
        assert_memory_equal(back, h, bytes);
    }
    CHECK_OK(ts_dfree(d, x));
    free(h);
    free(back);
    ts_stream_destroy(st);
    assert_int_equal(rc, 0);
    assert_int_equal(rs, 0);
}

// Two streams (on two devices when there are two): the second waits on an event of the first,
// then copies what the first wrote, over the peer link or staged.
static void test_streams_peer(void **state)
{
    NEED_GPU();
    int nd = ts_devset_count(g_set);
    ts_device *d0 = ts_devset_device(g_set, 0), *d1 = ts_devset_device(g_set, nd > 1 ? 1 : 0);
    ts_stream *s0, *s1;
    CHECK_OK(ts_stream_create(d0, &s0));
    CHECK_OK(ts_stream_create(d1, &s1));
    const int64_t m = 777, n = 129, ld = 800;
    double *A = rand_matrix(21, ld, n, ld);
    double *B = calloc((size_t)(ld * n), sizeof *B);
    void *x0 = NULL, *x1 = NULL;
    CHECK_OK(ts_dmalloc(d0, (size_t)(ld * n) * 8, &x0));
    CHECK_OK(ts_dmalloc(d1, (size_t)(ld * n) * 8, &x1));
    ts_event *ev;
    CHECK_OK(ts_event_create(d0, &ev));
    CHECK_OK(ts_copy2d_async(s0, TS_COPY_H2D, x0, ld * 8, A, ld * 8, m * 8, n));
    CHECK_OK(ts_event_record(ev, s0));
    CHECK_OK(ts_stream_wait_event(s1, ev));
    CHECK_OK(ts_copy_peer2d_async(s1, d1, x1, ld * 8, d0, x0, ld * 8, m * 8, n));
    CHECK_OK(ts_copy2d_async(s1, TS_COPY_D2H, B, ld * 8, x1, ld * 8, m * 8, n));
    CHECK_OK(ts_stream_sync(s1));
    assert_true(max_abs_diff(m, n, A, ld, B, ld) == 0.0);
    CHECK_OK(ts_stream_sync(s0));
    CHECK_OK(ts_event_destroy(ev));
    CHECK_OK(ts_dfree(d0, x0));
    CHECK_OK(ts_dfree(d1, x1));
    CHECK_OK(ts_stream_destroy(s0));
    CHECK_OK(ts_stream_destroy(s1));
    free(A);
    free(B);
}

typedef struct {
    void *dst;
    size_t bytes;
    int value;
} fill_args;

static int fill_cuda(void *native_stream, void *args)
{
    fill_args *a = args;
    return cudaMemsetAsync(a->dst, a->value, a->bytes, (cudaStream_t)native_stream) == cudaSuccess
               ? 0
               : ts_error_set(TS_ERR_CUDA, __FILE__, __LINE__, "fill: cudaMemsetAsync failed");
}

static int failing_cuda(void *native_stream, void *args)
{
    return ts_error_set(TS_ERR_DEVICE, __FILE__, __LINE__, "failing_cuda: injected failure");
}

static void test_kernel_args_copied(void **state)
{
    NEED_GPU();
    ts_device *d = ts_devset_device(g_set, 0);
    ts_stream *st;
    CHECK_OK(ts_stream_create(d, &st));
    size_t bytes = 4096;
    void *x = NULL;
    CHECK_OK(ts_dmalloc(d, bytes, &x));
    fill_args a = {x, bytes, 0x3c};
    ts_kernel k = {.name = "fill", .flops = 0, .cuda = fill_cuda, .args = &a, .args_size = sizeof a};
    CHECK_OK(ts_kernel_enqueue(st, &k));
    a.value = 0x11; // the enqueued kernel has its own copy
    a.dst = NULL;
    unsigned char h[4096];
    CHECK_OK(ts_copy_async(st, TS_COPY_D2H, h, x, bytes));
    CHECK_OK(ts_stream_sync(st));
    for (size_t i = 0; i < bytes; i++) assert_int_equal(h[i], 0x3c);
    CHECK_OK(ts_dfree(d, x));
    CHECK_OK(ts_stream_destroy(st));
}

// ---- cuBLAS / cuSOLVER ----

static double op_el(char t, const double *M, int64_t ld, int64_t r, int64_t c)
{
    return t == 'N' ? M[r + c * ld] : M[c + r * ld];
}

static void test_dgemm_all_ops(void **state)
{
    NEED_GPU();
    ts_device *d = ts_devset_device(g_set, 0);
    ts_stream *st;
    CHECK_OK(ts_stream_create(d, &st));
    const int64_t m = 512, n = 384, k = 256;
    const char ops[2] = {'N', 'T'};
    const double alpha = 1.25, beta = -0.75;
    for (int ia = 0; ia < 2; ia++)
        for (int ib = 0; ib < 2; ib++) {
            char ta = ops[ia], tb = ops[ib];
            int64_t ar = ta == 'N' ? m : k, ac = ta == 'N' ? k : m;
            int64_t br = tb == 'N' ? k : n, bc = tb == 'N' ? n : k;
            int64_t lda = ar + 3, ldb = br + 5, ldc = m + 7;
            double *A = rand_matrix(100 + ia, ar, ac, lda);
            double *B = rand_matrix(200 + ib, br, bc, ldb);
            double *C = rand_matrix(300, m, n, ldc);
            double *ref = malloc((size_t)(ldc * n) * sizeof *ref);
            for (int64_t j = 0; j < n; j++)
                for (int64_t i = 0; i < m; i++) {
                    double s = 0.0;
                    for (int64_t l = 0; l < k; l++) s += op_el(ta, A, lda, i, l) * op_el(tb, B, ldb, l, j);
                    ref[i + j * ldc] = alpha * s + beta * C[i + j * ldc];
                }
            double *dA = to_device(st, A, lda, ac), *dB = to_device(st, B, ldb, bc), *dC = to_device(st, C, ldc, n);
            CHECK_OK(ts_cuda_gemm(st, 'd', ta, tb, m, n, k, &alpha, dA, lda, dB, ldb, &beta, dC, ldc));
            from_device(st, C, dC, ldc, n);
            double err = max_abs_diff(m, n, C, ldc, ref, ldc);
            printf("# DGEMM %c%c %lldx%lldx%lld: max error %.3g (bound %.3g)\n", ta, tb, (long long)m,
                   (long long)n, (long long)k, err, 1e-13 * k);
            assert_true(err <= 1e-13 * k);
            CHECK_OK(ts_dfree(d, dA));
            CHECK_OK(ts_dfree(d, dB));
            CHECK_OK(ts_dfree(d, dC));
            free(A);
            free(B);
            free(C);
            free(ref);
        }
    // Bad arguments are refused before cuBLAS sees them.
    assert_int_equal(ts_cuda_gemm(st, 'd', 'N', 'N', m, n, k, &alpha, NULL, m - 1, NULL, k, &beta, NULL, m),
                     TS_ERR_ARG);
    CHECK_OK(ts_stream_destroy(st));
}

// ZGEMM with conjugate transposes: exercises the complex path and the scalar layout.
static void test_zgemm_conj(void **state)
{
    NEED_GPU();
    ts_device *d = ts_devset_device(g_set, 0);
    ts_stream *st;
    CHECK_OK(ts_stream_create(d, &st));
    const int64_t m = 70, n = 50, k = 90;
    double *A = rand_matrix(401, 2 * k, m, 2 * k); // op 'C': A is k x m
    double *B = rand_matrix(402, 2 * n, k, 2 * n); // op 'T': B is n x k
    double *C = rand_matrix(403, 2 * m, n, 2 * m);
    double *ref = malloc((size_t)(2 * m * n) * sizeof *ref);
    const double alpha[2] = {0.5, -1.0}, beta[2] = {0.25, 0.5};
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) {
            double sr = 0, si = 0;
            for (int64_t l = 0; l < k; l++) {
                double ar = A[2 * (l + i * k)], ai = -A[2 * (l + i * k) + 1]; // conj(A(l, i))
                double br = B[2 * (j + l * n)], bi = B[2 * (j + l * n) + 1];  // B(j, l)
                sr += ar * br - ai * bi;
                si += ar * bi + ai * br;
            }
            double cr = C[2 * (i + j * m)], ci = C[2 * (i + j * m) + 1];
            ref[2 * (i + j * m)] = alpha[0] * sr - alpha[1] * si + beta[0] * cr - beta[1] * ci;
            ref[2 * (i + j * m) + 1] = alpha[0] * si + alpha[1] * sr + beta[0] * ci + beta[1] * cr;
        }
    double *dA = to_device(st, A, 2 * k, m), *dB = to_device(st, B, 2 * n, k), *dC = to_device(st, C, 2 * m, n);
    CHECK_OK(ts_cuda_gemm(st, 'z', 'C', 'T', m, n, k, alpha, dA, k, dB, n, beta, dC, m));
    from_device(st, C, dC, 2 * m, n);
    double err = max_abs_diff(2 * m, n, C, 2 * m, ref, 2 * m);
    printf("# ZGEMM CT %lldx%lldx%lld: max error %.3g\n", (long long)m, (long long)n, (long long)k, err);
    assert_true(err <= 4e-13 * k);
    CHECK_OK(ts_dfree(d, dA));
    CHECK_OK(ts_dfree(d, dB));
    CHECK_OK(ts_dfree(d, dC));
    CHECK_OK(ts_stream_destroy(st));
    free(A);
    free(B);
    free(C);
    free(ref);
}

// DTRSM: X = alpha op(A)^-1 B (or B op(A)^-1), checked on the host by the residual op(A) X - alpha B.
static void test_dtrsm(void **state)
{
    NEED_GPU();
    ts_device *d = ts_devset_device(g_set, 0);
    ts_stream *st;
    CHECK_OK(ts_stream_create(d, &st));
    const int64_t m = 200, n = 150;
    const double alpha = 1.5;
    const char sides[2] = {'L', 'R'}, uplos[2] = {'L', 'U'}, trans[2] = {'N', 'T'}, diags[2] = {'N', 'U'};
    for (int is = 0; is < 2; is++)
        for (int iu = 0; iu < 2; iu++)
            for (int it = 0; it < 2; it++) {
                char side = sides[is], uplo = uplos[iu], ta = trans[it], diag = diags[(is + iu + it) % 2];
                int64_t na = side == 'L' ? m : n, lda = na + 2, ldb = m + 1;
                double *A = rand_matrix(500 + is * 4 + iu * 2 + it, na, na, lda);
                // Diagonally dominant (random triangular matrices are exponentially ill-conditioned);
                // with a unit diagonal the off-diagonal part is scaled down instead.
                for (int64_t j = 0; j < na; j++)
                    for (int64_t i = 0; i < na; i++) {
                        if (i == j) A[i + j * lda] += A[i + j * lda] > 0 ? (double)na : -(double)na;
                        else if (diag == 'U') A[i + j * lda] /= (double)na;
                    }
                double *B = rand_matrix(600, m, n, ldb);
                double *X = malloc((size_t)(ldb * n) * sizeof *X);
                double *dA = to_device(st, A, lda, na), *dB = to_device(st, B, ldb, n);
                CHECK_OK(ts_cuda_dtrsm(st, side, uplo, ta, diag, m, n, alpha, dA, lda, dB, ldb));
                from_device(st, X, dB, ldb, n);
                // Triangular op(A) with the unit diagonal where asked.
                double err = 0;
                for (int64_t j = 0; j < n; j++)
                    for (int64_t i = 0; i < m; i++) {
                        double s = 0;
                        for (int64_t l = 0; l < na; l++) {
                            int64_t r = side == 'L' ? i : l, c = side == 'L' ? l : j; // op(A)(r, c)
                            int64_t ar = ta == 'N' ? r : c, ac = ta == 'N' ? c : r;   // A(ar, ac)
                            if (uplo == 'L' ? ar < ac : ar > ac) continue;
                            double a = (ar == ac && diag == 'U') ? 1.0 : A[ar + ac * lda];
                            s += side == 'L' ? a * X[l + j * ldb] : X[i + l * ldb] * a;
                        }
                        double e = fabs(s - alpha * B[i + j * ldb]);
                        if (!(e <= err)) err = e;
                    }
                printf("# DTRSM %c%c%c%c: residual %.3g\n", side, uplo, ta, diag, err);
                assert_true(err <= 1e-13 * na);
                CHECK_OK(ts_dfree(d, dA));
                CHECK_OK(ts_dfree(d, dB));
                free(A);
                free(B);
                free(X);
            }
    CHECK_OK(ts_stream_destroy(st));
}

static void test_dgetrf(void **state)
{
    NEED_GPU();
    ts_device *d = ts_devset_device(g_set, 0);
    ts_stream *st;
    CHECK_OK(ts_stream_create(d, &st));
    const int64_t n = 256, lda = 260;
    double *A = rand_matrix(700, n, n, lda);
    double *LU = malloc((size_t)(lda * n) * sizeof *LU);
    int ipiv[256];
    double *dA = to_device(st, A, lda, n);
    void *dpiv = NULL;
    CHECK_OK(ts_dmalloc(d, sizeof ipiv, &dpiv));
    int info = -1;
    size_t used0;
    ts_dmem_info(d, &used0, NULL, NULL);
    CHECK_OK(ts_cuda_dgetrf(st, n, dA, lda, dpiv, &info));
    size_t used1;
    ts_dmem_info(d, &used1, NULL, NULL);
    assert_int_equal(used1, used0); // the workspace went back to the arena
    assert_int_equal(info, 0);
    from_device(st, LU, dA, lda, n);
    CHECK_OK(ts_copy_async(st, TS_COPY_D2H, ipiv, dpiv, sizeof ipiv));
    CHECK_OK(ts_stream_sync(st));
    // P^T A: the row interchanges applied to A in order (LAPACK's ipiv, 1-based).
    for (int64_t i = 0; i < n; i++) {
        assert_true(ipiv[i] >= i + 1 && ipiv[i] <= n);
        int64_t p = ipiv[i] - 1;
        if (p != i)
            for (int64_t j = 0; j < n; j++) {
                double t = A[i + j * lda];
                A[i + j * lda] = A[p + j * lda];
                A[p + j * lda] = t;
            }
    }
    double err = 0, umax = 0;
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < n; i++) {
            double s = 0;
            for (int64_t l = 0; l <= (i < j ? i : j); l++) {
                double lv = l == i ? 1.0 : LU[i + l * lda];
                s += lv * LU[l + j * lda];
            }
            double e = fabs(s - A[i + j * lda]);
            if (!(e <= err)) err = e;
            if (i <= j && fabs(LU[i + j * lda]) > umax) umax = fabs(LU[i + j * lda]);
        }
    printf("# DGETRF n=%lld: max |P L U - A| %.3g, max |U| %.3g\n", (long long)n, err, umax);
    assert_true(err <= 1e-13 * n * (umax > 1 ? umax : 1));
    CHECK_OK(ts_dfree(d, dA));
    CHECK_OK(ts_dfree(d, dpiv));
    CHECK_OK(ts_stream_destroy(st));
    free(A);
    free(LU);
}

// ---- errors ----

static void test_errors(void **state)
{
    NEED_GPU();
    ts_device *d = ts_devset_device(g_set, 0);
    ts_stream *st;
    CHECK_OK(ts_stream_create(d, &st));
    void *x = NULL;
    CHECK_OK(ts_dmalloc(d, 1 << 20, &x));
    double h[64];
    for (int i = 0; i < 64; i++) h[i] = i + 0.5;
    // Width larger than the pitch: refused at once, nothing crashes, the stream stays usable.
    assert_int_equal(ts_copy2d_async(st, TS_COPY_H2D, x, 64, h, 64, 128, 4), TS_ERR_ARG);
    assert_int_equal(ts_stream_error(st), 0);
    CHECK_OK(ts_copy_async(st, TS_COPY_H2D, x, h, sizeof h));
    CHECK_OK(ts_stream_sync(st));

    // A kernel that fails to enqueue: the failure is sticky on its stream, other streams are clean.
    ts_stream *bad;
    CHECK_OK(ts_stream_create(d, &bad));
    ts_kernel k = {.name = "failing", .cuda = failing_cuda};
    assert_int_equal(ts_kernel_enqueue(bad, &k), TS_ERR_DEVICE);
    assert_int_equal(ts_stream_error(bad), TS_ERR_DEVICE);
    CHECK_OK(ts_copy_async(bad, TS_COPY_D2H, h, x, sizeof h));
    assert_int_equal(ts_stream_sync(bad), TS_ERR_DEVICE);
    assert_non_null(strstr(ts_error_string(), "injected failure"));
    assert_int_equal(ts_stream_sync(bad), TS_ERR_DEVICE); // still
    CHECK_OK(ts_stream_sync(st));
    assert_int_equal(ts_stream_destroy(bad), TS_ERR_DEVICE);
    CHECK_OK(ts_dfree(d, x));
    CHECK_OK(ts_stream_destroy(st));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_open_props),      cmocka_unit_test(test_arena),
        cmocka_unit_test(test_pinned),          cmocka_unit_test(test_copy2d_roundtrip),
        cmocka_unit_test(test_pinned_adjacent_ranges),
        cmocka_unit_test(test_streams_peer),    cmocka_unit_test(test_kernel_args_copied),
        cmocka_unit_test(test_dgemm_all_ops),   cmocka_unit_test(test_zgemm_conj),
        cmocka_unit_test(test_dtrsm),           cmocka_unit_test(test_dgetrf),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}

#else // this build has no CUDA backend: one test that says so and skips

static void test_no_cuda_build(void **state) { skip(); }

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_no_cuda_build)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#endif
