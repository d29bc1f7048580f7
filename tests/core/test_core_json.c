// test_core_json.c: JSON writer layout and escaping, misuse detection, and the results document
// checked by Python's json module and by key substrings.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/ts_error.h"
#include "core/ts_json.h"
#include "ts_commit.h"
#include "ts_config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static void test_layout(void **state) {
    (void)state;
    ts_json *j = ts_json_open_buffer();
    assert_non_null(j);
    ts_json_begin_object(j, NULL);
    ts_json_str(j, "a", "x");
    ts_json_int(j, "n", -42);
    ts_json_num(j, "f", 0.1);
    ts_json_bool(j, "t", 1);
    ts_json_null(j, "z");
    ts_json_begin_array(j, "arr");
    ts_json_int(j, NULL, 1);
    ts_json_num(j, NULL, 2.5);
    ts_json_begin_object(j, NULL);
    ts_json_end_object(j);
    ts_json_end_array(j);
    ts_json_begin_array(j, "empty");
    ts_json_end_array(j);
    ts_json_end_object(j);
    assert_string_equal(ts_json_buffer(j),
                        "{\n"
                        "  \"a\": \"x\",\n"
                        "  \"n\": -42,\n"
                        "  \"f\": 0.1,\n"
                        "  \"t\": true,\n"
                        "  \"z\": null,\n"
                        "  \"arr\": [\n"
                        "    1,\n"
                        "    2.5,\n"
                        "    {}\n"
                        "  ],\n"
                        "  \"empty\": []\n"
                        "}\n");
    assert_int_equal(ts_json_close(j), 0);
}

static void test_escaping_and_numbers(void **state) {
    (void)state;
    ts_json *j = ts_json_open_buffer();
    assert_non_null(j);
    ts_json_begin_array(j, NULL);
    ts_json_str(j, NULL, "q\"b\\s/\n\t\r\b\f\x01\x1f end");
    ts_json_str(j, NULL, "caf\xc3\xa9 \xe2\x82\xac"); // UTF-8 passes through
    ts_json_str(j, NULL, NULL);
    ts_json_num(j, NULL, NAN);
    ts_json_num(j, NULL, INFINITY);
    ts_json_num(j, NULL, -INFINITY);
    ts_json_num(j, NULL, 1.0 / 3.0);
    ts_json_num(j, NULL, 1e300);
    ts_json_int(j, NULL, INT64_MIN);
    ts_json_end_array(j);
    const char *t = ts_json_buffer(j);
    assert_non_null(strstr(t, "\"q\\\"b\\\\s/\\n\\t\\r\\b\\f\\u0001\\u001f end\""));
    assert_non_null(strstr(t, "\"caf\xc3\xa9 \xe2\x82\xac\""));
    assert_non_null(strstr(t, "  null,\n  null,\n  null,\n  null,\n"));
    assert_null(strstr(t, "nan"));
    assert_null(strstr(t, "inf"));
    // Round-trip precision.
    const char *third = strstr(t, "0.333");
    assert_non_null(third);
    assert_true(strtod(third, NULL) == 1.0 / 3.0);
    assert_non_null(strstr(t, "1e+300"));
    assert_non_null(strstr(t, "-9223372036854775808"));
    assert_int_equal(ts_json_close(j), 0);
}

static void test_misuse(void **state) {
    (void)state;
    ts_json *j = ts_json_open_buffer();
    assert_non_null(j);
    ts_json_begin_object(j, NULL);
    ts_json_begin_array(j, "open");
    assert_int_equal(ts_json_close(j), TS_ERR_STATE);
    j = ts_json_open_buffer();
    ts_json_begin_object(j, NULL);
    ts_json_int(j, NULL, 1); // key missing inside an object
    ts_json_end_object(j);
    assert_int_equal(ts_json_close(j), TS_ERR_STATE);
    j = ts_json_open_buffer();
    ts_json_end_array(j); // nothing open
    assert_int_equal(ts_json_close(j), TS_ERR_STATE);
    assert_null(ts_json_open_file(NULL));
}

static void test_file_mode(void **state) {
    (void)state;
    FILE *f = tmpfile();
    assert_non_null(f);
    ts_json *j = ts_json_open_file(f);
    assert_non_null(j);
    ts_json_begin_object(j, NULL);
    ts_json_str(j, "k", "v");
    ts_json_end_object(j);
    assert_int_equal(ts_json_close(j), 0);
    rewind(f);
    char buf[64] = {0};
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    assert_true(n > 0);
    assert_string_equal(buf, "{\n  \"k\": \"v\"\n}\n");
    assert_int_equal(fclose(f), 0);
}

static void two_devices(ts_json *j, void *ctx) {
    int *calls = ctx;
    (*calls)++;
    for (int d = 0; d < 2; d++) {
        ts_json_begin_object(j, NULL);
        ts_json_str(j, "backend", "sim");
        ts_json_str(j, "name", d ? "sim1" : "sim0");
        ts_json_num(j, "memory_gb", 16.0);
        ts_json_int(j, "sms", 4);
        ts_json_end_object(j);
    }
}

static int have_python3(void) { return system("command -v python3 >/dev/null 2>&1") == 0; }

// Feeds `doc` to python3 running `script` on stdin; returns the exit status.
static int run_python(const char *script, const char *doc, int quiet) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "python3 -c '%s'%s", script, quiet ? " 2>/dev/null" : "");
    FILE *p = popen(cmd, "w");
    assert_non_null(p);
    assert_true(fputs(doc, p) >= 0);
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_results_document(void **state) {
    (void)state;
    ts_json *j = ts_json_open_buffer();
    assert_non_null(j);
    int calls = 0;
    ts_results_begin(j, "tessera gemm", 1, two_devices, &calls);
    assert_int_equal(calls, 1);
    ts_result_common r = {.bench = "gemm", .engine = "tessera", .precision = 'd', .where = "device", .reps = 10,
                          .sec_median = 0.0183, .sec_min = 0.0181, .sec_max = 0.019,
                          .tf_median = 60.1, .tf_min = 57.9, .tf_max = 60.7,
                          .verified = 1, .error = 3.1e-16, .bound = 1e-13};
    ts_results_entry_begin(j, &r);
    ts_json_begin_object(j, "shape");
    ts_json_int(j, "m", 8192);
    ts_json_str(j, "transa", "N");
    ts_json_end_object(j);
    ts_json_begin_object(j, "extra");
    ts_json_end_object(j);
    ts_results_entry_end(j);
    // A second entry with the optional parts omitted.
    ts_result_common r2 = {.bench = "copy", .engine = "cpu", .precision = 0, .where = NULL, .reps = 3,
                           .sec_median = 1, .sec_min = 1, .sec_max = 1, .tf_median = -1,
                           .verified = 0, .error = NAN, .bound = NAN};
    ts_results_entry_begin(j, &r2);
    ts_results_entry_end(j);
    ts_results_end(j);
    const char *doc = ts_json_buffer(j);
    char *copy = strdup(doc);
    assert_non_null(copy);
    assert_int_equal(ts_json_close(j), 0);

    static const char *keys[] = {"\"tool\": \"tessera gemm\"", "\"version\": \"" TS_VERSION "\"",
                                 "\"commit\": \"" TS_GIT_COMMIT "\"", "\"date\": \"20", "\"host\": {", "\"cpu\": ",
                                 "\"cores\": ", "\"mpi_ranks\": 1", "\"devices\": [", "\"name\": \"sim1\"",
                                 "\"results\": [", "\"bench\": \"gemm\"", "\"engine\": \"tessera\"",
                                 "\"precision\": \"d\"", "\"where\": \"device\"", "\"reps\": 10",
                                 "\"seconds\": {", "\"median\": 0.0183", "\"tflops\": {", "\"max\": 60.7",
                                 "\"verified\": true", "\"error\": 3.1e-16", "\"bound\": 1e-13", "\"shape\": {",
                                 "\"extra\": {}", "\"verified\": false"};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        if (!strstr(copy, keys[k])) fail_msg("missing %s in:\n%s", keys[k], copy);
    assert_string_equal(ts_version(), TS_VERSION);
    assert_string_equal(ts_commit(), TS_GIT_COMMIT);
    assert_true(ts_cpu_cores() >= 1);
    assert_non_null(ts_cpu_model());
    assert_true(strlen(ts_cpu_model()) > 0);

    if (!have_python3()) {
        print_message("python3 not found: JSON validity check skipped\n");
    } else {
        assert_int_equal(run_python("import json,sys; json.load(sys.stdin)", copy, 0), 0);
        // Structure: the second entry omits tflops, precision, where, error and bound.
        assert_int_equal(run_python("import json,sys,re\n"
                                    "d=json.load(sys.stdin)\n"
                                    "assert re.fullmatch(r\"\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ\", d[\"date\"])\n"
                                    "assert d[\"host\"][\"mpi_ranks\"]==1 and len(d[\"devices\"])==2\n"
                                    "a,b=d[\"results\"]\n"
                                    "assert a[\"seconds\"]==dict(median=0.0183,min=0.0181,max=0.019)\n"
                                    "assert a[\"tflops\"][\"min\"]==57.9 and a[\"shape\"][\"m\"]==8192\n"
                                    "assert \"tflops\" not in b and \"error\" not in b and \"where\" not in b\n"
                                    "assert \"precision\" not in b and b[\"verified\"] is False\n",
                                    copy, 0),
                         0);
        // The check itself can fail.
        assert_int_not_equal(run_python("import json,sys; json.load(sys.stdin)", "{\"a\": 1,}", 1), 0);
    }
    free(copy);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout),    cmocka_unit_test(test_escaping_and_numbers),
        cmocka_unit_test(test_misuse),    cmocka_unit_test(test_file_mode),
        cmocka_unit_test(test_results_document),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
