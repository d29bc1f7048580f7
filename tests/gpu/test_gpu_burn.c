// test_gpu_burn.c: 3 s of burn on GPU 0 (cuBLAS, checked): no error, a sane rate, checking overhead reported (skips without a GPU).
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>

#include "algorithms/burn/ts_burn.h"
#include "core/ts_error.h"
#include "device/ts_device.h"

static void test_burn_gpu0(void **state) {
    (void)state;
    if (ts_cuda_device_count() == 0) {
        printf("# no CUDA device visible: skipped\n");
        skip();
    }
    ts_devset_opts o;
    assert_int_equal(ts_devset_opts_init(&o), 0);
    o.backend = TS_BACKEND_CUDA;
    o.arena_bytes = (size_t)6 << 30; // 4 N^2 doubles at N = 8192 plus vectors
    ts_devset *set;
    if (ts_devset_open(&o, &set) < 0) fail_msg("open: %s", ts_error_string());
    ts_burn_opts b;
    ts_burn_opts_default(&b, TS_BACKEND_CUDA);
    b.seconds = 3.0;
    b.plain_seconds = 1.0;
    int dev = 0, abandoned = 0;
    ts_burn_dev_report r;
    assert_int_equal(ts_burn(set, &dev, 1, &b, &r, &abandoned), 0);
    printf("# %s: %s %.2f TFLOP/s checked, %.2f plain (%.3f), %lld iterations, max error %.3g, %s\n", r.name,
           ts_engine_name(r.engine), r.tflops, r.plain_tflops, r.plain_tflops > 0 ? r.tflops / r.plain_tflops : 0,
           (long long)r.iters, r.max_ratio, r.telemetry ? "telemetry" : "no telemetry");
    if (r.status) fail_msg("device failed: %s", r.message);
    assert_int_equal(abandoned, 0);
    assert_int_equal(r.errors, 0);
    assert_true(r.iters >= 10);
    assert_true(r.max_ratio > 0 && r.max_ratio < 0.1);
    assert_true(r.tflops > 1.0 && r.plain_tflops > 1.0);
    ts_burn_reports_free(&r, 1);
    ts_devset_close(set);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_burn_gpu0)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
