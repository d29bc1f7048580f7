// test_core_log_timer.c: log levels, prefixes and TESSERA_LOG; timers, statistics and timestamps.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/ts_error.h"
#include "core/ts_log.h"
#include "core/ts_timer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

// Runs fn with stderr redirected to a temporary file and returns what was written (static buffer).
static const char *capture_stderr(void (*fn)(void)) {
    static char text[4096];
    FILE *tmp = tmpfile();
    assert_non_null(tmp);
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    assert_true(saved >= 0);
    assert_true(dup2(fileno(tmp), STDERR_FILENO) >= 0);
    fn();
    fflush(stderr);
    assert_true(dup2(saved, STDERR_FILENO) >= 0);
    close(saved);
    rewind(tmp);
    size_t n = fread(text, 1, sizeof text - 1, tmp);
    text[n] = '\0';
    fclose(tmp);
    return text;
}

static void log_some(void) {
    ts_log(TS_LOG_ERROR, "bad %d", 1);
    TS_LOG_W("careful");
    TS_LOG_I("info line\n");
    TS_LOG_D("hidden debug");
}

static void log_ranked(void) { TS_LOG_W("from a rank"); }

static void test_levels_and_prefix(void **state) {
    (void)state;
    ts_log_set_rank(-1);
    ts_log_set_level(TS_LOG_INFO);
    assert_int_equal(ts_log_get_level(), TS_LOG_INFO);
    const char *out = capture_stderr(log_some);
    assert_string_equal(out, "tessera: error: bad 1\ntessera: warn: careful\ntessera: info: info line\n");
    ts_log_set_level(TS_LOG_ERROR);
    out = capture_stderr(log_some);
    assert_string_equal(out, "tessera: error: bad 1\n");
    ts_log_set_rank(3);
    ts_log_set_level(TS_LOG_WARN);
    out = capture_stderr(log_ranked);
    assert_string_equal(out, "tessera: [rank 3] warn: from a rank\n");
    ts_log_set_rank(-1);
    ts_log_set_level(TS_LOG_INFO);
}

static void test_parse_and_env(void **state) {
    (void)state;
    assert_int_equal(ts_log_level_parse("error"), TS_LOG_ERROR);
    assert_int_equal(ts_log_level_parse("DEBUG"), TS_LOG_DEBUG);
    assert_int_equal(ts_log_level_parse("trace"), TS_LOG_TRACE);
    assert_int_equal(ts_log_level_parse("2"), TS_LOG_INFO);
    assert_int_equal(ts_log_level_parse("5"), -1);
    assert_int_equal(ts_log_level_parse("loud"), -1);
    assert_int_equal(ts_log_level_parse(""), -1);
    assert_int_equal(ts_log_level_parse(NULL), -1);
    ts_log_set_level(TS_LOG_INFO);
    assert_int_equal(setenv("TESSERA_LOG", "debug", 1), 0);
    assert_int_equal(ts_log_init_from_env(), 0);
    assert_int_equal(ts_log_get_level(), TS_LOG_DEBUG);
    assert_int_equal(setenv("TESSERA_LOG", "noisy", 1), 0);
    assert_int_equal(ts_log_init_from_env(), TS_ERR_PARSE);
    assert_non_null(strstr(ts_error_last()->message, "noisy"));
    assert_int_equal(ts_log_get_level(), TS_LOG_DEBUG); // unchanged
    assert_int_equal(unsetenv("TESSERA_LOG"), 0);
    assert_int_equal(ts_log_init_from_env(), 0);
    ts_log_set_level(TS_LOG_INFO);
}

static void test_timer(void **state) {
    (void)state;
    double a = ts_now();
    double b = ts_now();
    assert_true(b >= a);
    ts_timer t = {0, 0, 0};
    struct timespec ten_ms = {0, 10 * 1000 * 1000};
    for (int k = 0; k < 2; k++) {
        double outer = ts_now();
        ts_timer_start(&t);
        assert_int_equal(nanosleep(&ten_ms, NULL), 0);
        double dt = ts_timer_stop(&t);
        outer = ts_now() - outer;
        // at least the sleep, at most what the caller saw (however long a loaded machine took)
        assert_true(dt >= 0.0099 && dt <= outer);
    }
    assert_int_equal(t.count, 2);
    assert_true(t.total >= 0.0198);
}

static void test_stats(void **state) {
    (void)state;
    double odd[] = {5, 1, 3, 2, 4};
    ts_stats s = ts_stats_of(odd, 5);
    assert_true(s.median == 3 && s.min == 1 && s.max == 5 && s.mean == 3);
    assert_true(odd[0] == 1 && odd[4] == 5); // sorted in place
    double even[] = {4, 1, 3, 2};
    s = ts_stats_of(even, 4);
    assert_true(s.median == 2.5 && s.min == 1 && s.max == 4 && s.mean == 2.5);
    double one[] = {0.25};
    s = ts_stats_of(one, 1);
    assert_true(s.median == 0.25 && s.min == 0.25 && s.max == 0.25);
}

static void test_iso8601(void **state) {
    (void)state;
    char buf[32];
    ts_utc_iso8601(buf, sizeof buf);
    // YYYY-MM-DDTHH:MM:SSZ
    assert_int_equal(strlen(buf), 20);
    assert_true(buf[4] == '-' && buf[7] == '-' && buf[10] == 'T' && buf[13] == ':' && buf[16] == ':' && buf[19] == 'Z');
    int year = atoi(buf);
    assert_true(year >= 2024);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_levels_and_prefix), cmocka_unit_test(test_parse_and_env),
        cmocka_unit_test(test_timer),             cmocka_unit_test(test_stats),
        cmocka_unit_test(test_iso8601),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
