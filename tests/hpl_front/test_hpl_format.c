// test_hpl_format.c: HPL 2.3's output lines byte for byte: T/V, result, residual, parameter echo, summary; the SVG plot.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "algorithms/hpl/ts_hpl.h"
#include "core/ts_error.h"

// Captures what fn prints into a malloc'ed string.
typedef struct {
    char *buf;
    size_t len;
    FILE *f;
} capture;

static FILE *cap_open(capture *c) {
    memset(c, 0, sizeof *c);
    c->f = open_memstream(&c->buf, &c->len);
    assert_non_null(c->f);
    return c->f;
}

static char *cap_close(capture *c) {
    fclose(c->f);
    return c->buf;
}

static ts_hpl_case wr11c2r4(void) {
    ts_hpl_case c;
    memset(&c, 0, sizeof c);
    c.N = 82432; c.NB = 224; c.P = 16; c.Q = 20;
    c.pmap = 0; c.depth = 1; c.bcast = 1; c.rfact = 1; c.ndiv = 2; c.pfact = 2; c.nbmin = 4;
    c.threshold = 16.0;
    return c;
}

static void test_tv(void **state) {
    (void)state;
    char tv[16];
    ts_hpl_case c = wr11c2r4();
    ts_hpl_tv_string(&c, tv);
    assert_string_equal(tv, "WR11C2R4");
    c.pmap = 1; c.depth = 0; c.bcast = 0; c.rfact = 0; c.ndiv = 2; c.pfact = 0; c.nbmin = 2;
    ts_hpl_tv_string(&c, tv);
    assert_string_equal(tv, "WC00L2L2");
    c.pmap = 0; c.depth = 3; c.bcast = 5; c.rfact = 2; c.ndiv = 3; c.pfact = 1; c.nbmin = 8;
    ts_hpl_tv_string(&c, tv);
    assert_string_equal(tv, "WR35R3C8");
    c.bcast = 4; c.nbmin = 16; // %1d is a minimum width: HPL prints all digits
    ts_hpl_tv_string(&c, tv);
    assert_string_equal(tv, "WR34R3C16");
}

// The result line against HPL_pdtest's own format, and against a line of a real HPL 2.3 run.
static void test_result_line(void **state) {
    (void)state;
    ts_hpl_case c = wr11c2r4();
    char got[256], want[256];
    ts_hpl_format_result(got, sizeof got, &c, 73.92, 5.0515e+03, 0);
    assert_string_equal(got, "WR11C2R4       82432   224    16    20              73.92             5.0515e+03");
    const double times[] = {0.01, 1.0, 12345.678, 3.1e6};
    const double rates[] = {1e-3, 42.0, 5.0515e+05, 1.23456789e12};
    for (int i = 0; i < 4; i++) {
        ts_hpl_format_result(got, sizeof got, &c, times[i], rates[i], 0);
        snprintf(want, sizeof want, "W%c%1d%c%c%1d%c%1d%12d %5d %5d %5d %18.2f    %19.4e", 'R', 1,
                 '1', 'C', 2, 'R', 4, 82432, 224, 16, 20, times[i], rates[i]);
        assert_string_equal(got, want);
    }
    // NVIDIA HPL's per-GPU figure after the HPL columns, which stay where they were.
    ts_hpl_format_result(got, sizeof got, &c, 73.92, 5.0515e+03, 4);
    assert_string_equal(got, "WR11C2R4       82432   224    16    20              73.92             5.0515e+03 ( 1.2629e+03)");
}

static void test_gflops(void **state) {
    (void)state;
    // HPL: (N/1e9) (N/t) (2/3 N + 3/2)
    double n = 1000.0, t = 2.0;
    double want = ((n / 1.0e+9) * (n / t)) * ((2.0 / 3.0) * n + (3.0 / 2.0));
    assert_true(ts_hpl_gflops(1000, 2.0) == want);
    assert_true(ts_hpl_flops(3) == 9.0 * (2.0 + 1.5));
}

static void test_residual_line(void **state) {
    (void)state;
    char got[256], want[256];
    ts_hpl_format_residual(got, sizeof got, 1.93387398e-03, 16.0);
    assert_string_equal(got, "||Ax-b||_oo/(eps*(||A||_oo*||x||_oo+||b||_oo)*N)=   1.93387398e-03 ...... PASSED");
    ts_hpl_format_residual(got, sizeof got, 17.25, 16.0);
    snprintf(want, sizeof want, "%s%16.8e%s%s", "||Ax-b||_oo/(eps*(||A||_oo*||x||_oo+||b||_oo)*N)= ",
             17.25, " ...... ", "FAILED");
    assert_string_equal(got, want);
    ts_hpl_format_residual(got, sizeof got, 16.0, 16.0); // strictly less than passes
    assert_non_null(strstr(got, "FAILED"));
}

static ts_hpl_result passed_result(void) {
    ts_hpl_result r;
    memset(&r, 0, sizeof r);
    r.time = 73.92;
    r.gflops = 5.0515e+03;
    r.resid = 1.93387398e-03;
    r.checked = 1;
    r.passed = 1;
    snprintf(r.start_time, sizeof r.start_time, "Mon Feb 14 08:41:17 2022\n");
    snprintf(r.end_time, sizeof r.end_time, "Mon Feb 14 08:42:31 2022");
    snprintf(r.exec_used, sizeof r.exec_used, "cpu");
    return r;
}

static void test_test_block(void **state) {
    (void)state;
    ts_hpl_case c = wr11c2r4();
    ts_hpl_result r = passed_result();
    capture cap;
    FILE *f = cap_open(&cap);
    ts_hpl_print_header(f);
    ts_hpl_print_test(f, &c, &r, 16.0, 0);
    char *s = cap_close(&cap);
    const char *want =
        "================================================================================\n"
        "T/V                N    NB     P     Q               Time                 Gflops\n"
        "--------------------------------------------------------------------------------\n"
        "WR11C2R4       82432   224    16    20              73.92             5.0515e+03\n"
        "HPL_pdgesv() start time Mon Feb 14 08:41:17 2022\n"
        "\n"
        "HPL_pdgesv() end time   Mon Feb 14 08:42:31 2022\n"
        "\n"
        "--------------------------------------------------------------------------------\n"
        "||Ax-b||_oo/(eps*(||A||_oo*||x||_oo+||b||_oo)*N)=   1.93387398e-03 ...... PASSED\n";
    assert_string_equal(s, want);
    free(s);

    // A failed check adds HPL's six norm lines.
    r.resid = 123.5;
    r.passed = 0;
    r.norm_r = 1.5; r.norm_A = 2.5; r.norm_A1 = 3.5; r.norm_x = 4.5; r.norm_x1 = 5.5; r.norm_b = 0.499;
    f = cap_open(&cap);
    ts_hpl_print_test(f, &c, &r, 16.0, 0);
    s = cap_close(&cap);
    const char *tail =
        "||Ax-b||_oo/(eps*(||A||_oo*||x||_oo+||b||_oo)*N)=   1.23500000e+02 ...... FAILED\n"
        "||Ax-b||_oo  . . . . . . . . . . . . . . . . . =           1.500000\n"
        "||A||_oo . . . . . . . . . . . . . . . . . . . =           2.500000\n"
        "||A||_1  . . . . . . . . . . . . . . . . . . . =           3.500000\n"
        "||x||_oo . . . . . . . . . . . . . . . . . . . =           4.500000\n"
        "||x||_1  . . . . . . . . . . . . . . . . . . . =           5.500000\n"
        "||b||_oo . . . . . . . . . . . . . . . . . . . =           0.499000\n";
    assert_non_null(strstr(s, tail));
    free(s);

    // No check (threshold <= 0): only the result and time lines.
    f = cap_open(&cap);
    ts_hpl_print_test(f, &c, &r, -1.0, 0);
    s = cap_close(&cap);
    assert_null(strstr(s, "||Ax-b||"));
    assert_non_null(strstr(s, "HPL_pdgesv() end time"));
    free(s);

    // Skipped (allocation failure): HPL's warning only.
    r.skipped = 1;
    snprintf(r.why, sizeof r.why, "Memory allocation failed for A, x and b");
    f = cap_open(&cap);
    ts_hpl_print_test(f, &c, &r, 16.0, 0);
    s = cap_close(&cap);
    assert_non_null(strstr(s, ">>> [0,0] Memory allocation failed for A, x and b. Skip. <<<"));
    assert_null(strstr(s, "WR11C2R4"));
    free(s);
}

static void test_summary(void **state) {
    (void)state;
    ts_hpl_tally t = {.kpass = 862, .kfail = 1, .kskip = 1};
    capture cap;
    FILE *f = cap_open(&cap);
    ts_hpl_print_summary(f, &t, 16.0);
    char *s = cap_close(&cap);
    assert_string_equal(s,
        "================================================================================\n"
        "\n"
        "Finished    864 tests with the following results:\n"
        "            862 tests completed and passed residual checks,\n"
        "              1 tests completed and failed residual checks,\n"
        "              1 tests skipped because of illegal input values.\n"
        "--------------------------------------------------------------------------------\n"
        "\n"
        "End of Tests.\n"
        "================================================================================\n");
    free(s);
    t.kfail = 0;
    f = cap_open(&cap);
    ts_hpl_print_summary(f, &t, 0.0);
    s = cap_close(&cap);
    assert_non_null(strstr(s, "Finished    863 tests with the following results:\n"
                              "            862 tests completed without checking,\n"
                              "              1 tests skipped because of illegal input values.\n"));
    free(s);
}

// The echo of HPL 2.3's default HPL.dat, as xhpl 2.3 prints it (the Tessera line is ours).
static void test_params_echo(void **state) {
    (void)state;
    ts_hpl_dat d;
    ts_hpl_dat_default(&d);
    capture cap;
    FILE *f = cap_open(&cap);
    ts_hpl_print_params(f, &d);
    char *s = cap_close(&cap);
    const char *banner =
        "================================================================================\n"
        "HPLinpack 2.3  --  High-Performance Linpack benchmark  --   December 2, 2018\n"
        "Written by A. Petitet and R. Clint Whaley,  Innovative Computing Laboratory, UTK\n"
        "Modified by Piotr Luszczek, Innovative Computing Laboratory, UTK\n"
        "Modified by Julien Langou, University of Colorado Denver\n"
        "================================================================================\n"
        "Tessera ";
    assert_memory_equal(s, banner, strlen(banner));
    const char *rest =
        "\n"
        "An explanation of the input/output parameters follows:\n"
        "T/V    : Wall time / encoded variant.\n"
        "N      : The order of the coefficient matrix A.\n"
        "NB     : The partitioning blocking factor.\n"
        "P      : The number of process rows.\n"
        "Q      : The number of process columns.\n"
        "Time   : Time in seconds to solve the linear system.\n"
        "Gflops : Rate of execution for solving the linear system.\n"
        "\n"
        "The following parameter values will be used:\n"
        "\n"
        "N      :      29       30       34       35 \n"
        "NB     :       1        2        3        4 \n"
        "PMAP   : Row-major process mapping\n"
        "P      :       2        1        4 \n"
        "Q      :       2        4        1 \n"
        "PFACT  :    Left    Crout    Right \n"
        "NBMIN  :       2        4 \n"
        "NDIV   :       2 \n"
        "RFACT  :    Left    Crout    Right \n"
        "BCAST  :   1ring \n"
        "DEPTH  :       0 \n"
        "SWAP   : Mix (threshold = 64)\n"
        "L1     : transposed form\n"
        "U      : transposed form\n"
        "EQUIL  : yes\n"
        "ALIGN  : 8 double precision words\n"
        "\n"
        "--------------------------------------------------------------------------------\n"
        "\n"
        "- The matrix A is randomly generated for each test.\n"
        "- The following scaled residual check will be computed:\n"
        "      ||Ax-b||_oo / ( eps * ( || x ||_oo * || A ||_oo + || b ||_oo ) * N )\n"
        "- The relative machine precision (eps) is taken to be               1.110223e-16\n"
        "- Computational tests pass if scaled residuals are less than                16.0\n"
        "\n";
    // Exactly one Tessera line between the banner and HPL's text.
    const char *nl = strchr(s + strlen(banner), '\n');
    assert_non_null(nl);
    assert_string_equal(nl + 1, rest);
    assert_non_null(strstr(s, "L1, U, EQUIL and ALIGN are accepted and ignored; PFACT, NBMIN, NDIV and RFACT apply"));
    free(s);

    // More than 8 values wrap at 8, continuation lines indented by 8 spaces; other words.
    d.nN = 10;
    for (int i = 0; i < 10; i++) d.N[i] = 1000 * (i + 1);
    d.pmap = 1;
    d.nbcast = 6;
    for (int i = 0; i < 6; i++) d.bcast[i] = i;
    d.swap = 0; d.l1_notrans = 1; d.u_notrans = 1; d.equil = 0;
    d.threshold = -1;
    f = cap_open(&cap);
    ts_hpl_print_params(f, &d);
    s = cap_close(&cap);
    assert_non_null(strstr(s, "N      :    1000     2000     3000     4000     5000     6000     7000     8000 \n"
                              "            9000    10000 \n"));
    assert_non_null(strstr(s, "PMAP   : Column-major process mapping\n"));
    assert_non_null(strstr(s, "BCAST  :   1ring   1ringM    2ring   2ringM    Blong   BlongM \n"));
    assert_non_null(strstr(s, "SWAP   : Binary-exchange\nL1     : no-transposed form\nU      : no-transposed form\nEQUIL  : no\n"));
    assert_null(strstr(s, "- The matrix A is randomly generated")); // no check: no residual text
    free(s);
}

static void test_plot(void **state) {
    (void)state;
    ts_hpl_case c = wr11c2r4();
    c.N = 4096; c.NB = 512;
    ts_hpl_result r = passed_result();
    ts_hpl_iter it[8];
    for (int i = 0; i < 8; i++) {
        it[i] = (ts_hpl_iter){.col = 512 * i, .total = 0.1 * (8 - i), .fact = 0.01, .bcast = 0.005,
                              .swap = 0.01, .update = 0.07 * (8 - i), .idle = 0.001};
    }
    r.iters = it;
    r.n_iters = 8;
    char path[128];
    snprintf(path, sizeof path, "/tmp/ts_hpl_front_plot_%d.svg", (int)getpid());
    assert_int_equal(ts_hpl_plot_svg(path, &c, &r), 0);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char buf[65536];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    unlink(path);
    assert_non_null(strstr(buf, "<svg"));
    assert_non_null(strstr(buf, "</svg>"));
    assert_non_null(strstr(buf, "<polyline"));
    assert_non_null(strstr(buf, "update"));
    // ~21 GFLOP/s per iteration: the axis in GFLOP/s (below 1 TFLOP/s)
    assert_non_null(strstr(buf, "GFLOP/s per iteration"));
    for (int i = 0; i < 8; i++) it[i].total *= 1e-4; // ~0.2 PFLOP/s: TFLOP/s
    assert_int_equal(ts_hpl_plot_svg(path, &c, &r), 0);
    f = fopen(path, "r");
    assert_non_null(f);
    n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    unlink(path);
    assert_non_null(strstr(buf, "TFLOP/s per iteration"));
    r.n_iters = 0;
    assert_int_equal(ts_hpl_plot_svg(path, &c, &r), TS_ERR_ARG);
    r.n_iters = 8;
    assert_int_equal(ts_hpl_plot_svg("/nonexistent/dir/p.svg", &c, &r), TS_ERR_IO);
}

static void test_output_stream(void **state) {
    (void)state;
    ts_hpl_dat d;
    ts_hpl_dat_default(&d);
    FILE *f = NULL;
    assert_int_equal(ts_hpl_open_output(&d, &f), 0);
    assert_ptr_equal(f, stdout);
    d.device_out = 7;
    assert_int_equal(ts_hpl_open_output(&d, &f), 0);
    assert_ptr_equal(f, stderr);
    d.device_out = 8;
    snprintf(d.outfile, sizeof d.outfile, "/nonexistent/dir/HPL.out");
    assert_int_equal(ts_hpl_open_output(&d, &f), TS_ERR_IO);
    assert_non_null(strstr(ts_error_last()->message, "cannot open file /nonexistent/dir/HPL.out"));
    snprintf(d.outfile, sizeof d.outfile, "/tmp/ts_hpl_front_out_%d.txt", (int)getpid());
    assert_int_equal(ts_hpl_open_output(&d, &f), 0);
    fputs("x\n", f);
    ts_hpl_close_output(f);
    unlink(d.outfile);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tv),           cmocka_unit_test(test_result_line),
        cmocka_unit_test(test_gflops),       cmocka_unit_test(test_residual_line),
        cmocka_unit_test(test_test_block),   cmocka_unit_test(test_summary),
        cmocka_unit_test(test_params_echo),  cmocka_unit_test(test_plot),
        cmocka_unit_test(test_output_stream),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
