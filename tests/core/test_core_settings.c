// test_core_settings.c: the table of settings (lookups, families, the closest name), the warning for
// misspelt TESSERA_* variables, and a read of an unregistered name failing as a mistake in the code.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/ts_env.h"
#include "core/ts_error.h"
#include "core/ts_settings.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void test_table(void **state) {
    (void)state;
    size_t n = 0;
    const ts_setting *t = ts_settings_table(&n);
    assert_true(n >= 60);
    for (size_t i = 0; i < n; i++) {
        assert_non_null(t[i].name);
        assert_non_null(t[i].layer);
        assert_non_null(t[i].kind);
        assert_non_null(t[i].def);
        assert_non_null(t[i].effect);
        assert_non_null(t[i].read_in);
        for (size_t j = 0; j < i; j++)
            if (strcmp(t[i].name, t[j].name) == 0) fail_msg("%s is in the table twice", t[i].name);
        if (!strchr(t[i].name, '<') && !strchr(t[i].name, '*') && ts_settings_find(t[i].name) != &t[i])
            fail_msg("%s is not found as itself", t[i].name);
    }
    assert_int_equal(ts_settings_find("TESSERA_TILE")->type, TS_SET_I64);
    assert_int_equal(ts_settings_find("TESSERA_TILES_PEER")->type, TS_SET_BOOL);
    assert_string_equal(ts_settings_find("TESSERA_SIM_DEVICES")->layer, "device");
    // families: "_<R>" takes its members only, "_*" any suffix
    assert_string_equal(ts_settings_find("TESSERA_BLAS_DISABLE_DGEMM")->name, "TESSERA_BLAS_DISABLE_<R>");
    assert_string_equal(ts_settings_find("TESSERA_BLAS_THRESHOLD_ZHER2K")->name, "TESSERA_BLAS_THRESHOLD_<R>");
    assert_null(ts_settings_find("TESSERA_BLAS_DISABLE_XGEMM"));
    assert_null(ts_settings_find("TESSERA_BLAS_DISABLE_"));
    assert_non_null(ts_settings_find("TESSERA_BENCH_HPL_ARGS"));
    assert_null(ts_settings_find("TESSERA_TILEZ"));
    assert_null(ts_settings_find("TESSERA_"));
    assert_null(ts_settings_find(NULL));
}

static void test_closest(void **state) {
    (void)state;
    assert_string_equal(ts_settings_closest("TESSERA_TILEZ"), "TESSERA_TILE");
    assert_string_equal(ts_settings_closest("TESSERA_SIM_DEVICE"), "TESSERA_SIM_DEVICES");
    assert_string_equal(ts_settings_closest("TESSERA_TILES_CPUS"), "TESSERA_TILES_CPU");
    assert_string_equal(ts_settings_closest("TESERA_HPCG_GRAPH"), "TESSERA_HPCG_GRAPH");
    assert_string_equal(ts_settings_closest("TESSERA_LGO"), "TESSERA_LOG");
}

static void test_check_environ(void **state) {
    (void)state;
    char *envp[] = {"PATH=/bin", "TESSERA_TILEZ=512", "TESSERA_TILE=512", "TESSERA_BLAS_DISABLE_DGEMM=1",
                    "TESSERA_BENCH_QUICK=1", "TESSERA_SIM_DEVICE=2", "TESSERA_SIM_DEVICES=", "TESSERA_X", NULL};
    FILE *f = tmpfile();
    assert_non_null(f);
    assert_int_equal(ts_settings_check_environ(envp, f), 3);
    rewind(f);
    char line[512];
    const char *want[][2] = {{"TESSERA_TILEZ is not", "did you mean TESSERA_TILE?"},
                             {"TESSERA_SIM_DEVICE is not", "did you mean TESSERA_SIM_DEVICES?"},
                             {"TESSERA_X is not", "did you mean "}};
    for (int k = 0; k < 3; k++) {
        assert_non_null(fgets(line, sizeof line, f));
        if (!strstr(line, "tessera: warning: ") || !strstr(line, want[k][0]) || !strstr(line, want[k][1]))
            fail_msg("line %d: '%s'", k, line);
    }
    assert_null(fgets(line, sizeof line, f));
    fclose(f);
    char *none[] = {"HOME=/root", NULL};
    assert_int_equal(ts_settings_check_environ(none, stderr), 0);
}

// Runs fn in a child; returns its wait status.
static int in_child(void (*fn)(void)) {
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        fn();
        _exit(0);
    }
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    return st;
}

static void read_unregistered(void) {
    int v = 0;
    _exit(ts_env_int("TESSERA_NOT_A_SETTING", &v) == TS_ERR_ARG ? 3 : 4);
}

static void read_as_other_type(void) {
    int v = 0;
    _exit(ts_env_bool("TESSERA_TILE", &v) == TS_ERR_ARG ? 3 : 4); // TESSERA_TILE is an integer
}

// A read of a name missing from the table (or as another type) is a mistake in the code: abort in
// debug builds, a failed read (TS_ERR_ARG) in release builds.
static void test_unregistered(void **state) {
    (void)state;
    void (*fns[])(void) = {read_unregistered, read_as_other_type};
    for (int k = 0; k < 2; k++) {
        int st = in_child(fns[k]);
#ifdef NDEBUG
        assert_true(WIFEXITED(st));
        assert_int_equal(WEXITSTATUS(st), 3);
#else
        assert_true(WIFSIGNALED(st));
        assert_int_equal(WTERMSIG(st), SIGABRT);
#endif
    }
    // any registered setting may be read as a string
    assert_int_equal(setenv("TESSERA_TILE", "64", 1), 0);
    assert_string_equal(ts_env_str("TESSERA_TILE"), "64");
    assert_int_equal(unsetenv("TESSERA_TILE"), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_closest),
        cmocka_unit_test(test_check_environ),
        cmocka_unit_test(test_unregistered),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
