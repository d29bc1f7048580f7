// test_device_nvml.c: NVML through the device layer without a GPU: every call says "unavailable" and none fails or writes.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "core/ts_error.h"
#include "device/ts_nvml.h"

// Without NVML (no handle): no energy, no reading, the caller's values left as they were.
static void test_no_handle(void **state) {
    (void)state;
    unsigned long long mj = 12345;
    ts_error_clear();
    assert_int_equal(ts_nvml_energy_mj(NULL, "0000:01:00.0", &mj), TS_ERR_UNSUPPORTED);
    assert_int_equal(mj, 12345);
    assert_non_null(strstr(ts_error_last()->message, "NVML"));
    ts_nvml_sample s = {.temp_c = NAN, .sm_mhz = NAN, .mem_mhz = NAN, .power_w = NAN, .throttle = 7};
    assert_int_equal(ts_nvml_read(NULL, "0000:01:00.0", &s), 0);
    assert_true(isnan(s.temp_c) && isnan(s.sm_mhz) && isnan(s.mem_mhz) && isnan(s.power_w));
    assert_int_equal(s.throttle, 7);
    ts_nvml_close(NULL); // a no-op
}

// Opening: NULL with the reason where NVML is absent (CI); where it is there, a device that does not
// exist has no energy counter and no reading.
static void test_open(void **state) {
    (void)state;
    ts_error_clear();
    ts_nvml *t = ts_nvml_open();
    if (!t) {
        assert_int_equal(ts_error_last()->code, TS_ERR_UNSUPPORTED);
        assert_non_null(strstr(ts_error_last()->message, "NVML"));
        return;
    }
    unsigned long long mj = 99;
    assert_int_equal(ts_nvml_energy_mj(t, "sim:0", &mj), TS_ERR_UNSUPPORTED);
    assert_int_equal(mj, 99);
    ts_nvml_sample s = {.temp_c = NAN};
    assert_int_equal(ts_nvml_read(t, "sim:0", &s), 0);
    assert_true(isnan(s.temp_c));
    ts_nvml_close(t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_handle),
        cmocka_unit_test(test_open),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
