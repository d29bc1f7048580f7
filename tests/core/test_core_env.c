// test_core_env.c: strict parsing of numbers, sizes, durations, lists and sweeps; env lookups.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/ts_env.h"
#include "core/ts_error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

// The last error must be a parse error whose message names the label and the value.
static void expect_msg(const char *what, const char *value) {
    const ts_error_info *e = ts_error_last();
    assert_int_equal(e->code, TS_ERR_PARSE);
    if (!strstr(e->message, what) || (value[0] && !strstr(e->message, value)))
        fail_msg("message '%s' does not name '%s' and '%s'", e->message, what, value);
}

static void test_integers(void **state) {
    (void)state;
    int64_t v;
    int i;
    assert_int_equal(ts_parse_i64("12", "--reps", &v), 0);
    assert_int_equal(v, 12);
    assert_int_equal(ts_parse_i64("-9223372036854775808", "x", &v), 0);
    assert_true(v == INT64_MIN);
    assert_int_equal(ts_parse_i64("+7", "x", &v), 0);
    assert_int_equal(v, 7);
    static const char *bad[] = {"12abc", "", " 12", "12 ", "abc", "1.5", "9223372036854775808", "0x10", "-"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        ts_error_clear();
        v = 42;
        assert_int_equal(ts_parse_i64(bad[k], "--reps", &v), TS_ERR_PARSE);
        assert_int_equal(v, 42); // untouched on failure
        expect_msg("--reps", bad[k]);
    }
    assert_int_equal(ts_parse_i64(NULL, "--reps", &v), TS_ERR_PARSE);
    assert_int_equal(ts_parse_int("2147483647", "n", &i), 0);
    assert_int_equal(i, 2147483647);
    assert_int_equal(ts_parse_int("2147483648", "TESSERA_SIM_DEVICES", &i), TS_ERR_PARSE);
    expect_msg("TESSERA_SIM_DEVICES", "2147483648");
    assert_int_equal(ts_parse_int("-2147483649", "n", &i), TS_ERR_PARSE);
}

static void test_doubles_bools(void **state) {
    (void)state;
    double d;
    assert_int_equal(ts_parse_double("2.5", "x", &d), 0);
    assert_true(d == 2.5);
    assert_int_equal(ts_parse_double("-1e-3", "x", &d), 0);
    assert_true(d == -1e-3);
    static const char *bad[] = {"", "1.5x", "nan", "inf", "1e999", "abc", " 1"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        assert_int_equal(ts_parse_double(bad[k], "--split", &d), TS_ERR_PARSE);
        expect_msg("--split", bad[k]);
    }
    int b = -1;
    static const char *yes[] = {"1", "yes", "TRUE", "on"}, *no[] = {"0", "no", "false", "OFF"};
    for (int k = 0; k < 4; k++) {
        assert_int_equal(ts_parse_bool(yes[k], "x", &b), 0);
        assert_int_equal(b, 1);
        assert_int_equal(ts_parse_bool(no[k], "x", &b), 0);
        assert_int_equal(b, 0);
    }
    assert_int_equal(ts_parse_bool("maybe", "--verify", &b), TS_ERR_PARSE);
    expect_msg("--verify", "maybe");
    assert_int_equal(ts_parse_bool("", "--verify", &b), TS_ERR_PARSE);
}

static void test_sizes(void **state) {
    (void)state;
    size_t z;
    struct { const char *s; size_t v; } ok[] = {
        {"4096", 4096}, {"64K", 65536}, {"2M", 2u << 20}, {"1.5G", 3ull << 29}, {"1T", 1ull << 40},
        {"3g", 3ull << 30}, {"8KiB", 8192}, {"8KB", 8192}, {"0", 0}, {"512B", 512}, {"0.5K", 512},
        {"18446744073709551615", SIZE_MAX},
    };
    for (size_t k = 0; k < sizeof ok / sizeof ok[0]; k++) {
        if (ts_parse_size(ok[k].s, "x", &z) != 0) fail_msg("'%s': %s", ok[k].s, ts_error_string());
        assert_true(z == ok[k].v);
    }
    static const char *bad[] = {"", "-1", "-4K", "12abc", "80%", "1.3", "64X", "K", "16E", "17179869184G",
                                "18446744073709551616", "1.5.2G", " 4K", "4 K"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        z = 7;
        if (ts_parse_size(bad[k], "TESSERA_ARENA", &z) != TS_ERR_PARSE) fail_msg("'%s' accepted", bad[k]);
        assert_true(z == 7);
        expect_msg("TESSERA_ARENA", bad[k]);
    }
}

static void test_durations(void **state) {
    (void)state;
    double d;
    struct { const char *s; double v; } ok[] = {
        {"10m", 600}, {"90s", 90}, {"1h30m", 5400}, {"2.5", 2.5}, {"1h", 3600}, {"1d", 86400},
        {"500ms", 0.5}, {"1m30s", 90}, {"0", 0}, {"1.5h", 5400},
    };
    for (size_t k = 0; k < sizeof ok / sizeof ok[0]; k++) {
        if (ts_parse_duration(ok[k].s, "x", &d) != 0) fail_msg("'%s': %s", ok[k].s, ts_error_string());
        assert_true(fabs(d - ok[k].v) < 1e-12);
    }
    static const char *bad[] = {"", "10x", "-5s", "1m30", "m", "abc", "1e3", "inf", "10 m", " 5", "5s5"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        if (ts_parse_duration(bad[k], "--duration", &d) != TS_ERR_PARSE) fail_msg("'%s' accepted", bad[k]);
        expect_msg("--duration", bad[k]);
    }
}

static void test_lists(void **state) {
    (void)state;
    double d[4];
    int64_t v[4];
    int n = -1;
    assert_int_equal(ts_parse_double_list("1,0.5,0.25", "--split", d, 4, &n), 0);
    assert_int_equal(n, 3);
    assert_true(d[0] == 1 && d[1] == 0.5 && d[2] == 0.25);
    assert_int_equal(ts_parse_double_list("7", "--split", d, 4, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(ts_parse_double_list("1,,2", "--split", d, 4, &n), TS_ERR_PARSE);
    expect_msg("--split", "1,,2");
    assert_int_equal(ts_parse_double_list("1,x", "--split", d, 4, &n), TS_ERR_PARSE);
    expect_msg("--split", "x");
    assert_int_equal(ts_parse_double_list("", "--split", d, 4, &n), TS_ERR_PARSE);
    assert_int_equal(ts_parse_double_list("1,2,", "--split", d, 4, &n), TS_ERR_PARSE);
    assert_int_equal(ts_parse_i64_list("1,2,3,4", "--nb", v, 4, &n), 0);
    assert_int_equal(n, 4);
    assert_true(v[3] == 4);
    assert_int_equal(ts_parse_i64_list("1,2,3,4,5", "--nb", v, 4, &n), TS_ERR_PARSE);
    expect_msg("--nb", "1,2,3,4,5");
    assert_int_equal(ts_parse_i64_list("1,2abc", "--nb", v, 4, &n), TS_ERR_PARSE);
    expect_msg("--nb", "2abc");
}

static void test_sweeps(void **state) {
    (void)state;
    int64_t v[64];
    int n = -1;
    assert_int_equal(ts_parse_size_sweep("1024:8192:1024", "--sizes", v, 64, &n), 0);
    assert_int_equal(n, 8);
    for (int k = 0; k < 8; k++) assert_true(v[k] == 1024 * (k + 1));
    assert_int_equal(ts_parse_size_sweep("1024:8192:x2", "--sizes", v, 64, &n), 0);
    assert_int_equal(n, 4);
    assert_true(v[0] == 1024 && v[1] == 2048 && v[2] == 4096 && v[3] == 8192);
    assert_int_equal(ts_parse_size_sweep("1000:2500:1000", "--sizes", v, 64, &n), 0);
    assert_int_equal(n, 2);
    assert_true(v[1] == 2000);
    assert_int_equal(ts_parse_size_sweep("1024,2048", "--sizes", v, 64, &n), 0);
    assert_int_equal(n, 2);
    assert_int_equal(ts_parse_size_sweep("512,1K:4K:x2,6000", "--sizes", v, 64, &n), 0);
    assert_int_equal(n, 5);
    assert_true(v[0] == 512 && v[1] == 1024 && v[3] == 4096 && v[4] == 6000);
    assert_int_equal(ts_parse_size_sweep("64:64:1", "--sizes", v, 64, &n), 0);
    assert_int_equal(n, 1);
    static const char *bad[] = {"", "8192:1024:1024", "1024:8192", "1024:8192:0", "1024:8192:x1", "1024:8192:x",
                                "-5", "0", "1024:8192:1024:5", "12abc", "1024:8192:-1", "a:b:c", "1,,2"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        if (ts_parse_size_sweep(bad[k], "--sizes", v, 64, &n) != TS_ERR_PARSE) fail_msg("'%s' accepted", bad[k]);
        assert_non_null(strstr(ts_error_last()->message, "--sizes"));
    }
    // Capacity: 1..100 step 1 has 100 values.
    assert_int_equal(ts_parse_size_sweep("1:100:1", "--sizes", v, 64, &n), TS_ERR_PARSE);
    expect_msg("--sizes", "1:100:1");
    // The geometric range stops before overflowing.
    assert_int_equal(ts_parse_size_sweep("1:9223372036854775807:x2", "--sizes", v, 64, &n), 0);
    assert_int_equal(n, 63);
}

// The lookups, on registered settings of each type (the table: core/ts_settings.c); the variables
// are unset again at the end.
static void test_env(void **state) {
    (void)state;
    int i = 5;
    int64_t v = 5;
    double d = 5;
    size_t z = 5;
    int b = 5;
    assert_int_equal(unsetenv("TESSERA_TILES_DEPTH"), 0);
    assert_int_equal(ts_env_int("TESSERA_TILES_DEPTH", &i), 0);
    assert_int_equal(i, 5);
    assert_null(ts_env_str("TESSERA_TILES_DEPTH"));
    assert_null(ts_env_raw("TESSERA_TILES_DEPTH"));
    assert_int_equal(setenv("TESSERA_TILES_DEPTH", "", 1), 0);
    assert_int_equal(ts_env_int("TESSERA_TILES_DEPTH", &i), 0);
    assert_null(ts_env_str("TESSERA_TILES_DEPTH"));
    assert_string_equal(ts_env_raw("TESSERA_TILES_DEPTH"), ""); // set, but empty
    assert_int_equal(setenv("TESSERA_TILES_DEPTH", "12", 1), 0);
    assert_int_equal(ts_env_int("TESSERA_TILES_DEPTH", &i), 1);
    assert_int_equal(i, 12);
    assert_string_equal(ts_env_str("TESSERA_TILES_DEPTH"), "12");
    assert_int_equal(setenv("TESSERA_TILES_DEPTH", "12abc", 1), 0);
    i = 5;
    assert_int_equal(ts_env_int("TESSERA_TILES_DEPTH", &i), TS_ERR_PARSE);
    assert_int_equal(i, 5);
    expect_msg("TESSERA_TILES_DEPTH", "12abc");
    assert_int_equal(setenv("TESSERA_TILE", "12", 1), 0);
    assert_int_equal(ts_env_i64("TESSERA_TILE", &v), 1);
    assert_true(v == 12);
    assert_int_equal(setenv("TESSERA_TILES_MEM", "0.5", 1), 0);
    assert_int_equal(ts_env_double("TESSERA_TILES_MEM", &d), 1);
    assert_true(d == 0.5);
    assert_int_equal(setenv("TESSERA_SIM_MEM", "2G", 1), 0);
    assert_int_equal(ts_env_size("TESSERA_SIM_MEM", &z), 1);
    assert_true(z == (2ull << 30));
    assert_int_equal(setenv("TESSERA_TILES_PEER", "off", 1), 0);
    assert_int_equal(ts_env_bool("TESSERA_TILES_PEER", &b), 1);
    assert_int_equal(b, 0);
    const char *names[] = {"TESSERA_TILES_DEPTH", "TESSERA_TILE", "TESSERA_TILES_MEM", "TESSERA_SIM_MEM",
                           "TESSERA_TILES_PEER"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) assert_int_equal(unsetenv(names[k]), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_integers), cmocka_unit_test(test_doubles_bools), cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_durations), cmocka_unit_test(test_lists),       cmocka_unit_test(test_sweeps),
        cmocka_unit_test(test_env),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
