// test_engines.c: the engine vocabulary (one name per engine, kernels' and runtime's) and ts_engines_gemm/_l3 on cpu, ref, a simulated device and tiles.
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/ts_error.h"
#include "core/ts_rng.h"
#include "runtime/ts_engines.h"
#include "runtime/ts_tiles.h"
#include "tiles_test.h"

static void test_names(void **state) {
    (void)state;
    const char *names[] = {"auto", "cublas", "tessera", "ref", "cpu", "tiles", "cublasxt"};
    assert_int_equal(TS_ENGINE_COUNT, 7);
    for (int i = 0; i < TS_ENGINE_COUNT; i++) {
        ts_engine e = TS_ENGINE_AUTO;
        assert_string_equal(ts_engines_name((ts_engine)i), names[i]);
        assert_int_equal(ts_engines_parse(names[i], &e), 0);
        assert_int_equal((int)e, i);
        assert_int_equal(ts_engine_is_set_wide(e), i >= (int)TS_ENGINE_TILES);
    }
    ts_engine e = TS_ENGINE_CPU;
    assert_int_equal(ts_engines_parse("CublasXT", &e), 0);
    assert_int_equal((int)e, TS_ENGINE_CUBLASXT);
    assert_int_equal(ts_engines_parse("magma", &e), TS_ERR_ARG);
    assert_int_equal((int)e, TS_ENGINE_CUBLASXT);
    assert_non_null(strstr(ts_error_last()->message, "'magma' (choices: auto, cublas, tessera, ref, cpu, tiles, cublasxt)"));
    assert_int_equal(ts_engines_parse(NULL, &e), TS_ERR_ARG);
    assert_string_equal(ts_engines_name((ts_engine)TS_ENGINE_COUNT), "unknown");
    // Without devices neither set-wide engine runs, and each says why.
    assert_non_null(ts_engines_unavailable(NULL, (ts_engine)TS_ENGINE_TILES));
    assert_non_null(ts_engines_unavailable(NULL, (ts_engine)TS_ENGINE_CUBLASXT));
    assert_null(ts_engines_unavailable(NULL, TS_ENGINE_CPU));
}

// C = A B + C on every engine that runs here, against the reference kernel.
static void test_gemm_every_engine(void **state) {
    (void)state;
    ts_devset_opts so = tt_set_opts(2, NULL, 0, 0, 0);
    ts_devset *set = NULL;
    assert_int_equal(ts_devset_open(&so, &set), 0);
    assert_null(ts_engines_unavailable(set, (ts_engine)TS_ENGINE_TILES));
    const char *why = ts_engines_unavailable(set, (ts_engine)TS_ENGINE_CUBLASXT); // simulated, or no CUDA at all
    assert_non_null(why);
    assert_true(strstr(why, "simulated") || strstr(why, "no CUDA backend"));
    ts_engines *x = NULL;
    assert_int_equal(ts_engines_create(set, &x), 0);
    const int64_t m = 70, n = 50, k = 40;
    double *A = malloc(sizeof(double) * m * k), *B = malloc(sizeof(double) * k * n);
    double *C0 = malloc(sizeof(double) * m * n), *C = malloc(sizeof(double) * m * n), *R = malloc(sizeof(double) * m * n);
    ts_fill_uniform_d(1, A, m * k), ts_fill_uniform_d(2, B, k * n), ts_fill_uniform_d(3, C0, m * n);
    const double one = 1;
    memcpy(R, C0, sizeof(double) * m * n);
    ts_gemm_ref('d', 'N', 'N', m, n, k, &one, A, m, B, k, &one, R, m);
    // tiles before it is opened: a state error, not a crash
    assert_int_equal(ts_engines_gemm(x, NULL, (ts_engine)TS_ENGINE_TILES, 'd', 'N', 'N', m, n, k, &one, A, m, B, k,
                                     &one, C, m, NULL), TS_ERR_STATE);
    assert_int_equal(ts_engines_open(x, (ts_engine)TS_ENGINE_TILES, 0), 0);
    assert_non_null(ts_engines_tiles(x));
    ts_engine host[] = {TS_ENGINE_CPU, TS_ENGINE_REF, (ts_engine)TS_ENGINE_TILES};
    for (int e = 0; e < 3; e++) {
        memcpy(C, C0, sizeof(double) * m * n);
        ts_tiles_stats st;
        memset(&st, 0, sizeof st);
        assert_int_equal(ts_engines_gemm(x, NULL, host[e], 'd', 'N', 'N', m, n, k, &one, A, m, B, k, &one, C, m, &st), 0);
        for (int64_t i = 0; i < m * n; i++)
            if (fabs(C[i] - R[i]) > 1e-12) fail_msg("%s: C[%lld] = %g, expected %g", ts_engines_name(host[e]), (long long)i, C[i], R[i]);
        if (host[e] == (ts_engine)TS_ENGINE_TILES) assert_true(st.tiles > 0);
    }
    // A device engine on a stream of a simulated device: device memory, then back.
    ts_device *d = ts_devset_device(set, 0);
    ts_stream *s = NULL;
    void *dA, *dB, *dC;
    assert_int_equal(ts_stream_create(d, &s), 0);
    assert_int_equal(ts_dmalloc(d, sizeof(double) * m * k, &dA), 0);
    assert_int_equal(ts_dmalloc(d, sizeof(double) * k * n, &dB), 0);
    assert_int_equal(ts_dmalloc(d, sizeof(double) * m * n, &dC), 0);
    assert_int_equal(ts_copy_async(s, TS_COPY_H2D, dA, A, sizeof(double) * m * k), 0);
    assert_int_equal(ts_copy_async(s, TS_COPY_H2D, dB, B, sizeof(double) * k * n), 0);
    assert_int_equal(ts_copy_async(s, TS_COPY_H2D, dC, C0, sizeof(double) * m * n), 0);
    assert_int_equal(ts_engines_gemm(x, s, TS_ENGINE_AUTO, 'd', 'N', 'N', m, n, k, &one, dA, m, dB, k, &one, dC, m, NULL), 0);
    assert_int_equal(ts_copy_async(s, TS_COPY_D2H, C, dC, sizeof(double) * m * n), 0);
    assert_int_equal(ts_stream_sync(s), 0);
    for (int64_t i = 0; i < m * n; i++) assert_true(fabs(C[i] - R[i]) <= 1e-12);
    // auto without a stream has no device to resolve to; cuBLASXt does not open on simulated devices
    assert_int_equal(ts_engines_gemm(x, NULL, TS_ENGINE_AUTO, 'd', 'N', 'N', m, n, k, &one, A, m, B, k, &one, C, m, NULL), TS_ERR_ARG);
    assert_int_equal(ts_engines_open(x, (ts_engine)TS_ENGINE_CUBLASXT, 0), TS_ERR_UNSUPPORTED);
    ts_dfree(d, dA), ts_dfree(d, dB), ts_dfree(d, dC);
    ts_stream_destroy(s);
    ts_tiles_unpin_all(ts_engines_tiles(x));
    ts_engines_destroy(x);
    ts_devset_close(set);
    free(A), free(B), free(C0), free(C), free(R);
}

// A Level-3 routine on cpu and tiles gives results that pass the randomized check.
static void test_l3_cpu_and_tiles(void **state) {
    (void)state;
    ts_devset_opts so = tt_set_opts(2, NULL, 0, 0, 0);
    ts_devset *set = NULL;
    assert_int_equal(ts_devset_open(&so, &set), 0);
    ts_engines *x = NULL;
    assert_int_equal(ts_engines_create(set, &x), 0);
    assert_int_equal(ts_engines_open(x, (ts_engine)TS_ENGINE_TILES, 0), 0);
    const double al[2] = {1.25, 0}, be[2] = {0.5, 0};
    ts_l3_prob p = ts_l3_prob_make(TS_L3_SYR2K, 'd', 'L', 'U', 'T', 'N', 90, 33, al, be);
    size_t ea = ts_l3_elems_a(&p), ec = ts_l3_elems_c(&p);
    double *A = malloc(sizeof(double) * ea), *B = malloc(sizeof(double) * ea), *C0 = malloc(sizeof(double) * ec);
    double *W = malloc(sizeof(double) * ec);
    ts_fill_uniform_d(4, A, (int64_t)ea), ts_fill_uniform_d(5, B, (int64_t)ea), ts_fill_uniform_d(6, C0, (int64_t)ec);
    ts_l3_verify *v = NULL;
    assert_int_equal(ts_l3_verify_prepare(&p, A, B, C0, 2, 3, &v), 0);
    ts_engine es[] = {TS_ENGINE_CPU, (ts_engine)TS_ENGINE_TILES};
    for (int e = 0; e < 2; e++) {
        memcpy(W, C0, sizeof(double) * ec);
        assert_int_equal(ts_engines_l3(x, es[e], &p, A, B, W, NULL), 0);
        int outside = -1;
        double err = ts_l3_verify_error(v, W, &outside);
        if (!(err <= TS_L3_VERIFY_BOUND)) fail_msg("%s: error %g", ts_engines_name(es[e]), err);
        assert_int_equal(outside, 0);
    }
    assert_int_equal(ts_engines_l3(x, TS_ENGINE_REF, &p, A, B, W, NULL), TS_ERR_UNSUPPORTED);
    ts_l3_verify_free(v);
    ts_tiles_unpin_all(ts_engines_tiles(x));
    ts_engines_destroy(x);
    ts_devset_close(set);
    free(A), free(B), free(C0), free(W);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_gemm_every_engine),
        cmocka_unit_test(test_l3_cpu_and_tiles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
