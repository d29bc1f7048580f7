// test_core_progress.c: plain progress lines to a file (percent, ETA, final line), TESSERA_PROGRESS,
// the live line on a pseudo-terminal, and duration formatting.
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/ts_progress.h"
#include "core/ts_timer.h"

#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void sleep_ms(int ms) {
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&t, &t) != 0) {
    }
}

static char *read_all(FILE *f) {
    static char text[8192];
    fflush(f);
    rewind(f);
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    return text;
}

static int count_lines(const char *s) {
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

// A bar writing plain lines to a temporary file (TESSERA_PROGRESS unset: a file is no terminal).
static FILE *plain_bar(ts_progress *p, const char *label, double total) {
    assert_int_equal(unsetenv("TESSERA_PROGRESS"), 0);
    FILE *f = tmpfile();
    assert_non_null(f);
    ts_progress_init(p, f, label, total);
    return f;
}

static void test_plain_lines(void **state) {
    (void)state;
    ts_progress p;
    FILE *f = plain_bar(&p, "hpl", 100.0);
    assert_int_equal(p.tty, 0);
    assert_int_equal(p.enabled, 1);
    p.period = 1000;
    ts_progress_update(&p, 10, "41.2 TFLOP/s"); // before the first period: nothing
    assert_string_equal(read_all(f), "");
    p.period = 0.02;
    double before = 0, after = 0; // the bar's clock just before and after the first line's update
    for (int k = 1; k <= 4; k++) {
        sleep_ms(30);
        if (k == 1) before = ts_now() - p.start;
        ts_progress_update(&p, 20.0 * k, "41.2 TFLOP/s");
        if (k == 1) after = ts_now() - p.start;
    }
    ts_progress_finish(&p, "done");
    const char *t = read_all(f);
    assert_int_equal(count_lines(t), 5);
    assert_null(strchr(t, '\r'));
    // First plain line: 20% done, so ETA = 4 x the time so far (both read inside the update call,
    // however long a loaded machine took around it; each printed rounded to 0.1 s).
    assert_non_null(strstr(t, "hpl:  20.0%, 41.2 TFLOP/s, elapsed "));
    assert_non_null(strstr(t, "hpl:  80.0%"));
    assert_non_null(strstr(t, ", ETA "));
    const char *eta = strstr(t, ", ETA ") + 6;
    double eta_s = strtod(eta, NULL);
    const char *el = strstr(t, "elapsed ") + 8;
    double el_s = strtod(el, NULL);
    assert_true(el_s >= before - 0.05 - 1e-9 && el_s <= after + 0.05 + 1e-9);
    assert_true(eta_s >= 4 * before - 0.05 - 1e-9 && eta_s <= 4 * after + 0.05 + 1e-9);
    // Final line: 100% and the elapsed time.
    assert_non_null(strstr(t, "hpl: 100.0%, done, elapsed "));
    assert_int_equal(fclose(f), 0);
}

// The ETA of ts_progress_update_at comes from the work's own seconds, not from the bar's clock
// (which here includes a 'setup' of 300 ms before the work began): 25% done in 0.5 s of work
// leaves 1.5 s, where the bar's clock (>= 0.3 s of setup) would also count the setup 3 times.
static void test_eta_from_work_clock(void **state) {
    (void)state;
    ts_progress p;
    FILE *f = plain_bar(&p, "hpl", 100.0);
    p.period = 0.0;
    sleep_ms(300);
    ts_progress_update_at(&p, 25.0, 0.5, "column 1/4");
    const char *t = read_all(f);
    assert_non_null(strstr(t, "hpl:  25.0%, column 1/4, elapsed "));
    const char *eta = strstr(t, ", ETA ");
    assert_non_null(eta);
    assert_true(fabs(strtod(eta + 6, NULL) - 1.5) < 1e-9); // "1.5s"
    double el_s = strtod(strstr(t, "elapsed ") + 8, NULL);
    assert_true(el_s >= 0.25); // the bar's clock went on during the setup
    // no work timed yet: no estimate
    ts_progress_update_at(&p, 0.0, 0.0, NULL);
    t = read_all(f);
    assert_non_null(strstr(t, "hpl:   0.0%, elapsed "));
    assert_non_null(strstr(t, "ETA --"));
    assert_int_equal(fclose(f), 0);
}

static void test_rate_limit(void **state) {
    (void)state;
    ts_progress p;
    FILE *f = plain_bar(&p, "gemm", 1000.0);
    assert_true(p.period == 10.0); // the default
    for (int k = 0; k < 1000; k++) ts_progress_update(&p, k, NULL);
    assert_string_equal(read_all(f), ""); // nothing within the first 10 s
    ts_progress_finish(&p, NULL);
    const char *t = read_all(f);
    assert_int_equal(count_lines(t), 1);
    assert_non_null(strstr(t, "gemm: 100.0%, elapsed "));
    assert_int_equal(fclose(f), 0);
}

static void test_env_disable(void **state) {
    (void)state;
    FILE *f = tmpfile();
    assert_non_null(f);
    ts_progress p;
    assert_int_equal(setenv("TESSERA_PROGRESS", "0", 1), 0);
    ts_progress_init(&p, f, "burn", 10.0);
    assert_int_equal(p.enabled, 0);
    p.period = 0;
    ts_progress_update(&p, 5, "x");
    ts_progress_finish(&p, "x");
    assert_string_equal(read_all(f), "");
    assert_int_equal(unsetenv("TESSERA_PROGRESS"), 0);
    assert_int_equal(fclose(f), 0);
}

// A pseudo-terminal: the live line is used there unless TESSERA_PROGRESS=1 forces plain lines.
static void test_tty(void **state) {
    (void)state;
    int master = posix_openpt(O_RDWR | O_NOCTTY);
    if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0) {
        if (master >= 0) close(master);
        skip();
    }
    const char *name = ptsname(master);
    assert_non_null(name);
    int slave = open(name, O_RDWR | O_NOCTTY);
    assert_true(slave >= 0);
    FILE *out = fdopen(slave, "w");
    assert_non_null(out);

    assert_int_equal(setenv("TESSERA_PROGRESS", "1", 1), 0);
    ts_progress p;
    ts_progress_init(&p, out, "x", 1.0);
    assert_int_equal(p.tty, 0);
    assert_int_equal(unsetenv("TESSERA_PROGRESS"), 0);

    ts_progress_init(&p, out, "hpcg", 10.0);
    assert_int_equal(p.tty, 1);
    sleep_ms(250);
    ts_progress_update(&p, 5, "12 GFLOP/s");
    assert_int_equal(p.drawn, 1);
    ts_progress_finish(&p, NULL);

    char buf[1024];
    size_t len = 0;
    struct pollfd pf = {master, POLLIN, 0};
    while (len < sizeof buf - 1 && poll(&pf, 1, 200) > 0) {
        ssize_t r = read(master, buf + len, sizeof buf - 1 - len);
        if (r <= 0) break;
        len += (size_t)r;
    }
    buf[len] = '\0';
    assert_non_null(strstr(buf, "\rhpcg:  50.0%, 12 GFLOP/s, elapsed "));
    assert_non_null(strstr(buf, "ETA "));
    assert_non_null(strstr(buf, "\rhpcg: 100.0%, elapsed "));
    assert_int_equal(fclose(out), 0);
    assert_int_equal(close(master), 0);
}

static void test_format_duration(void **state) {
    (void)state;
    char b[32];
    ts_format_duration(12.5, b, sizeof b);
    assert_string_equal(b, "12.5s");
    ts_format_duration(200, b, sizeof b);
    assert_string_equal(b, "3m20s");
    ts_format_duration(3720, b, sizeof b);
    assert_string_equal(b, "1h02m");
    ts_format_duration(0, b, sizeof b);
    assert_string_equal(b, "0.0s");
    ts_format_duration(-1, b, sizeof b);
    assert_string_equal(b, "--");
    ts_format_duration(100000, b, sizeof b);
    assert_string_equal(b, "27h47m");
    ts_format_duration(3720, b, 3); // truncated, still terminated
    assert_int_equal(strlen(b), 2);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_lines), cmocka_unit_test(test_rate_limit), cmocka_unit_test(test_env_disable),
        cmocka_unit_test(test_tty),         cmocka_unit_test(test_format_duration), cmocka_unit_test(test_eta_from_work_clock),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
