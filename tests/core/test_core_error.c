// test_core_error.c: status names, messages with file:line, wrapping, and per-thread last errors.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/ts_error.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

static int raise_arg(int v) {
    if (v < 0) TS_RAISE(TS_ERR_ARG, "v = %d must be >= 0", v);
    return 0;
}

static int propagate(int v) {
    TS_CHECK(raise_arg(v));
    return 7;
}

static int cleanup_path(int v, int *cleaned) {
    int rc = 0;
    TS_CHECK_GOTO(raise_arg(v), rc, out);
    rc = 1;
out:
    *cleaned = 1;
    return rc;
}

static void test_names(void **state) {
    (void)state;
    assert_string_equal(ts_status_name(TS_OK), "TS_OK");
    assert_string_equal(ts_status_name(TS_ERR_ARG), "TS_ERR_ARG");
    assert_string_equal(ts_status_name(TS_ERR_DEVICE_LOST), "TS_ERR_DEVICE_LOST");
    assert_string_equal(ts_status_name(TS_ERR_INTERNAL), "TS_ERR_INTERNAL");
    assert_non_null(ts_status_name(-999));
    assert_non_null(ts_status_name(5));
}

static void test_raise_and_string(void **state) {
    (void)state;
    ts_error_clear();
    assert_int_equal(ts_error_last()->code, 0);
    assert_string_equal(ts_error_string(), "no error");
    int line = __LINE__ + 1;
    int rc = raise_arg(-3);
    (void)line;
    assert_int_equal(rc, TS_ERR_ARG);
    const ts_error_info *e = ts_error_last();
    assert_int_equal(e->code, TS_ERR_ARG);
    assert_string_equal(e->message, "v = -3 must be >= 0");
    assert_non_null(strstr(e->file, "test_core_error.c"));
    assert_true(e->line > 0);
    char where[64];
    snprintf(where, sizeof where, "test_core_error.c:%d: v = -3", e->line);
    assert_non_null(strstr(ts_error_string(), where));
    assert_int_equal(propagate(-1), TS_ERR_ARG);
    assert_int_equal(propagate(1), 7);
    int cleaned = 0;
    assert_int_equal(cleanup_path(-1, &cleaned), TS_ERR_ARG);
    assert_int_equal(cleaned, 1);
    assert_int_equal(TS_ERROR(TS_ERR_IO, "disk %s", "full"), TS_ERR_IO);
    assert_string_equal(ts_error_last()->message, "disk full");
    ts_error_clear();
    assert_int_equal(ts_error_last()->code, 0);
}

static void test_wrap(void **state) {
    (void)state;
    ts_error_clear();
    raise_arg(-5);
    int line = ts_error_last()->line;
    assert_int_equal(ts_error_wrap(TS_ERR_ARG, "while reading %s", "HPL.dat"), TS_ERR_ARG);
    assert_string_equal(ts_error_last()->message, "while reading HPL.dat: v = -5 must be >= 0");
    assert_int_equal(ts_error_last()->code, TS_ERR_ARG);
    assert_int_equal(ts_error_last()->line, line);
    // A very long context truncates instead of overflowing.
    char big[700];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    ts_error_wrap(TS_ERR_ARG, "%s", big);
    assert_true(strlen(ts_error_last()->message) < sizeof ts_error_last()->message);
    // Wrapping nothing records the context as the error.
    ts_error_clear();
    assert_int_equal(ts_error_wrap(TS_ERR_IO, "ctx"), TS_ERR_IO);
    assert_int_equal(ts_error_last()->code, TS_ERR_IO);
    assert_string_equal(ts_error_last()->message, "ctx");
}

static pthread_barrier_t barrier;

static void *other_thread(void *arg) {
    (void)arg;
    intptr_t ok = 1;
    ts_error_set(TS_ERR_CUDA, "other.c", 11, "thread error");
    pthread_barrier_wait(&barrier); // main sets its own error now
    pthread_barrier_wait(&barrier);
    const ts_error_info *e = ts_error_last();
    if (e->code != TS_ERR_CUDA || strcmp(e->message, "thread error") != 0 || e->line != 11) ok = 0;
    if (strcmp(ts_error_string(), "other.c:11: thread error") != 0) ok = 0;
    return (void *)ok;
}

static void test_thread_local(void **state) {
    (void)state;
    ts_error_clear();
    assert_int_equal(pthread_barrier_init(&barrier, NULL, 2), 0);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, other_thread, NULL), 0);
    pthread_barrier_wait(&barrier);
    // The other thread's error is not visible here.
    assert_int_equal(ts_error_last()->code, 0);
    ts_error_set(TS_ERR_MPI, "main.c", 22, "main error");
    pthread_barrier_wait(&barrier);
    void *ok = NULL;
    assert_int_equal(pthread_join(t, &ok), 0);
    assert_true((intptr_t)ok == 1);
    assert_int_equal(ts_error_last()->code, TS_ERR_MPI);
    assert_string_equal(ts_error_string(), "main.c:22: main error");
    assert_int_equal(pthread_barrier_destroy(&barrier), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_raise_and_string),
        cmocka_unit_test(test_wrap),
        cmocka_unit_test(test_thread_local),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
