// test_device_opts.c: device-set options from TESSERA_* variables, fault specs, backend choice, empty sets.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/ts_error.h"
#include "device/ts_device.h"

#include <stdlib.h>
#include <string.h>

static const char *vars[] = {"TESSERA_SIM_DEVICES", "TESSERA_SIM_MEM", "TESSERA_SIM_SPEEDS", "TESSERA_SIM_GFLOPS",
                             "TESSERA_SIM_LINK_GBS", "TESSERA_SIM_FAULTS", "TESSERA_ARENA_FRACTION",
                             "TESSERA_ARENA_BYTES", "TESSERA_MAX_DEVICES", "TESSERA_BACKEND", "TESSERA_SIM_PEER"};

static int clear_env(void **state) {
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) unsetenv(vars[i]);
    return 0;
}

static void test_defaults(void **state) {
    ts_devset_opts o;
    assert_int_equal(ts_devset_opts_init(&o), 0);
    assert_int_equal(o.backend, TS_BACKEND_AUTO);
    assert_int_equal(o.sim_devices, 0);
    assert_int_equal(o.sim_mem_bytes, (size_t)256 << 20);
    assert_int_equal(o.sim_peer, 1);
    assert_true(o.sim_gflops == 0 && o.sim_link_gbs == 0);
    assert_int_equal(o.faults.device, -1);
    assert_int_equal(o.faults.flip_bit, -1);
    assert_int_equal(o.faults.fail_copy, 0);
    assert_int_equal(o.faults.lose_after, 0);
    assert_true(o.arena_fraction == 0.90);
    assert_int_equal(o.arena_bytes, 0);
    assert_int_equal(o.max_devices, 0);
}

static void test_from_env(void **state) {
    setenv("TESSERA_SIM_DEVICES", "3", 1);
    setenv("TESSERA_SIM_MEM", "64M", 1);
    setenv("TESSERA_SIM_SPEEDS", "1,0.5,0.25", 1);
    setenv("TESSERA_SIM_GFLOPS", "2.5", 1);
    setenv("TESSERA_SIM_LINK_GBS", "10", 1);
    setenv("TESSERA_SIM_FAULTS", "dev=1,copy=3,kernel=5,flip=2,bit=7,lose=10", 1);
    setenv("TESSERA_ARENA_FRACTION", "0.5", 1);
    setenv("TESSERA_ARENA_BYTES", "1G", 1);
    setenv("TESSERA_MAX_DEVICES", "2", 1);
    setenv("TESSERA_BACKEND", "sim", 1);
    ts_devset_opts o;
    assert_int_equal(ts_devset_opts_init(&o), 0);
    assert_int_equal(o.backend, TS_BACKEND_SIM);
    assert_int_equal(o.sim_devices, 3);
    assert_int_equal(o.sim_mem_bytes, (size_t)64 << 20);
    assert_true(o.sim_speeds[0] == 1.0 && o.sim_speeds[1] == 0.5 && o.sim_speeds[2] == 0.25 && o.sim_speeds[3] == 0);
    assert_true(o.sim_gflops == 2.5 && o.sim_link_gbs == 10);
    assert_int_equal(o.faults.device, 1);
    assert_int_equal(o.faults.fail_copy, 3);
    assert_int_equal(o.faults.fail_kernel, 5);
    assert_int_equal(o.faults.flip_copy, 2);
    assert_int_equal(o.faults.flip_bit, 7);
    assert_int_equal(o.faults.lose_after, 10);
    assert_true(o.arena_fraction == 0.5);
    assert_int_equal(o.arena_bytes, (size_t)1 << 30);
    assert_int_equal(o.max_devices, 2);
    clear_env(state);
}

static void expect_parse_error(const char *var, const char *val) {
    clear_env(NULL);
    setenv(var, val, 1);
    ts_devset_opts o;
    ts_error_clear();
    int rc = ts_devset_opts_init(&o);
    if (rc != TS_ERR_PARSE) fail_msg("%s=%s gave %d, not TS_ERR_PARSE", var, val, rc);
    assert_non_null(ts_error_last()->message[0] ? ts_error_last()->message : NULL);
    clear_env(NULL);
}

static void test_malformed(void **state) {
    expect_parse_error("TESSERA_SIM_DEVICES", "two");
    expect_parse_error("TESSERA_SIM_DEVICES", "-1");
    expect_parse_error("TESSERA_SIM_DEVICES", "65");
    expect_parse_error("TESSERA_SIM_MEM", "lots");
    expect_parse_error("TESSERA_SIM_SPEEDS", "1,x");
    expect_parse_error("TESSERA_SIM_SPEEDS", "1,-2");
    expect_parse_error("TESSERA_SIM_GFLOPS", "-3");
    expect_parse_error("TESSERA_SIM_LINK_GBS", "fast");
    expect_parse_error("TESSERA_SIM_FAULTS", "copy");
    expect_parse_error("TESSERA_SIM_FAULTS", "paper=3");
    expect_parse_error("TESSERA_SIM_FAULTS", "copy=-2");
    expect_parse_error("TESSERA_SIM_FAULTS", "copy=3x");
    expect_parse_error("TESSERA_ARENA_FRACTION", "1.5");
    expect_parse_error("TESSERA_ARENA_FRACTION", "0");
    expect_parse_error("TESSERA_ARENA_BYTES", "-5");
    expect_parse_error("TESSERA_MAX_DEVICES", "-1");
    expect_parse_error("TESSERA_BACKEND", "opencl");
    // The message names the variable.
    setenv("TESSERA_BACKEND", "opencl", 1);
    ts_devset_opts o;
    assert_int_equal(ts_devset_opts_init(&o), TS_ERR_PARSE);
    assert_non_null(strstr(ts_error_last()->message, "TESSERA_BACKEND"));
    assert_non_null(strstr(ts_error_last()->message, "opencl"));
    clear_env(state);
}

static void test_faults_parse(void **state) {
    ts_sim_faults f;
    assert_int_equal(ts_sim_faults_parse("", &f), 0);
    assert_int_equal(f.device, -1);
    assert_int_equal(f.flip_bit, -1);
    assert_int_equal(f.fail_copy + f.fail_kernel + f.flip_copy + f.lose_after, 0);
    assert_int_equal(ts_sim_faults_parse("lose=4, dev=2", &f), 0);
    assert_int_equal(f.lose_after, 4);
    assert_int_equal(f.device, 2);
    assert_int_equal(ts_sim_faults_parse("bit=-1,flip=1", &f), 0);
    assert_int_equal(f.flip_bit, -1);
    assert_int_equal(ts_sim_faults_parse("dev=99", &f), TS_ERR_PARSE);
    assert_int_equal(ts_sim_faults_parse("flip", &f), TS_ERR_PARSE);
    assert_non_null(strstr(ts_error_last()->message, "key=value"));
}

static void test_backend_choice(void **state) {
    assert_string_equal(ts_backend_name(TS_BACKEND_CUDA), "cuda");
    assert_string_equal(ts_backend_name(TS_BACKEND_SIM), "sim");
    assert_string_equal(ts_backend_name(TS_BACKEND_NONE), "none");
    assert_string_equal(ts_backend_name(TS_BACKEND_AUTO), "auto");
    ts_devset_opts o;
    assert_int_equal(ts_devset_opts_init(&o), 0);
    o.sim_mem_bytes = 1 << 20;
    ts_devset *s = NULL;
    int gpus = ts_cuda_device_count();
    if (gpus == 0) {
        // AUTO without GPUs and without sim devices: an empty set, and that is not an error.
        assert_int_equal(ts_devset_open(&o, &s), 0);
        assert_int_equal(ts_devset_count(s), 0);
        assert_int_equal(ts_devset_backend(s), TS_BACKEND_NONE);
        assert_null(ts_devset_device(s, 0));
        void *p;
        assert_int_equal(ts_host_alloc(s, 100, &p), 0);
        int h;
        assert_int_equal(ts_host_pin(s, p, 100, &h), 0);
        assert_int_equal(ts_host_unpin(s, h), 0);
        ts_host_free(s, p);
        ts_devset_close(s);
        // AUTO with sim devices: the simulator.
        o.sim_devices = 3;
        o.max_devices = 2;
        assert_int_equal(ts_devset_open(&o, &s), 0);
        assert_int_equal(ts_devset_backend(s), TS_BACKEND_SIM);
        assert_int_equal(ts_devset_count(s), 2);
        const ts_device_props *p0 = ts_device_props_of(ts_devset_device(s, 1));
        assert_string_equal(p0->bus_id, "sim:1");
        assert_int_equal(p0->backend, TS_BACKEND_SIM);
        assert_int_equal(p0->mem_total, 1 << 20);
        ts_devset_close(s);
    }
    if (!ts_cuda_available()) {
        o.backend = TS_BACKEND_CUDA;
        assert_int_equal(ts_devset_open(&o, &s), TS_ERR_UNSUPPORTED);
        assert_null(s);
    }
    o.backend = TS_BACKEND_SIM;
    o.sim_devices = 0;
    assert_int_equal(ts_devset_open(&o, &s), TS_ERR_ARG);
    assert_non_null(strstr(ts_error_last()->message, "TESSERA_SIM_DEVICES"));
    o.backend = TS_BACKEND_NONE;
    assert_int_equal(ts_devset_open(&o, &s), 0);
    assert_int_equal(ts_devset_count(s), 0);
    ts_devset_close(s);
    assert_int_equal(ts_devset_open(&o, NULL), TS_ERR_ARG);
}

// With NULL options the set is opened from the environment.
static void test_open_from_env(void **state) {
    setenv("TESSERA_BACKEND", "sim", 1);
    setenv("TESSERA_SIM_DEVICES", "2", 1);
    setenv("TESSERA_SIM_MEM", "2M", 1);
    setenv("TESSERA_SIM_SPEEDS", "1,0.5", 1);
    ts_devset *s = NULL;
    assert_int_equal(ts_devset_open(NULL, &s), 0);
    assert_int_equal(ts_devset_count(s), 2);
    assert_true(ts_device_props_of(ts_devset_device(s, 1))->rel_speed == 0.5);
    size_t used, fr;
    ts_dmem_info(ts_devset_device(s, 0), &used, &fr, NULL);
    assert_int_equal(used + fr, 2 << 20);
    ts_devset_close(s);
    setenv("TESSERA_SIM_MEM", "2x", 1);
    assert_int_equal(ts_devset_open(NULL, &s), TS_ERR_PARSE);
    clear_env(state);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_defaults, clear_env),     cmocka_unit_test_setup(test_from_env, clear_env),
        cmocka_unit_test_setup(test_malformed, clear_env),    cmocka_unit_test_setup(test_faults_parse, clear_env),
        cmocka_unit_test_setup(test_backend_choice, clear_env), cmocka_unit_test_setup(test_open_from_env, clear_env),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
