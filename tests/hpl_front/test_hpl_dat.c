// test_hpl_dat.c: HPL.dat reading: HPL 2.3's default file, multi-valued files, and every malformed-input class.
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

#ifndef TS_HPL_FRONT_DATA
#define TS_HPL_FRONT_DATA "tests/hpl_front/data"
#endif

// The 31 lines of HPL 2.3's shipped HPL.dat, edited per test.
static const char *default_lines[31] = {
    "HPLinpack benchmark input file",
    "Innovative Computing Laboratory, University of Tennessee",
    "HPL.out      output file name (if any)",
    "6            device out (6=stdout,7=stderr,file)",
    "4            # of problems sizes (N)",
    "29 30 34 35  Ns",
    "4            # of NBs",
    "1 2 3 4      NBs",
    "0            PMAP process mapping (0=Row-,1=Column-major)",
    "3            # of process grids (P x Q)",
    "2 1 4        Ps",
    "2 4 1        Qs",
    "16.0         threshold",
    "3            # of panel fact",
    "0 1 2        PFACTs (0=left, 1=Crout, 2=Right)",
    "2            # of recursive stopping criterium",
    "2 4          NBMINs (>= 1)",
    "1            # of panels in recursion",
    "2            NDIVs",
    "3            # of recursive panel fact.",
    "0 1 2        RFACTs (0=left, 1=Crout, 2=Right)",
    "1            # of broadcast",
    "0            BCASTs (0=1rg,1=1rM,2=2rg,3=2rM,4=Lng,5=LnM)",
    "1            # of lookahead depth",
    "0            DEPTHs (>=0)",
    "2            SWAP (0=bin-exch,1=long,2=mix)",
    "64           swapping threshold",
    "0            L1 in (0=transposed,1=no-transposed) form",
    "0            U  in (0=transposed,1=no-transposed) form",
    "1            Equilibration (0=no,1=yes)",
    "8            memory alignment in double (> 0)",
};

static char tmp_path[256];

// Writes the default lines with line `which` (1-based, 0 = none) replaced by `repl`, and only the
// first `nlines` lines.
static const char *write_dat(int which, const char *repl, int nlines) {
    snprintf(tmp_path, sizeof tmp_path, "/tmp/ts_hpl_front_%d.dat", (int)getpid());
    FILE *f = fopen(tmp_path, "w");
    assert_non_null(f);
    for (int i = 0; i < nlines; i++) fprintf(f, "%s\n", (i + 1 == which) ? repl : default_lines[i]);
    fclose(f);
    return tmp_path;
}

// Reads a file expected to fail with `code`; the message must contain every needle.
static void expect_error(const char *path, int code, const char *n1, const char *n2) {
    ts_hpl_dat d;
    ts_error_clear();
    int rc = ts_hpl_dat_read(path, &d);
    const char *msg = ts_error_last()->message;
    if (rc != code || (n1 && !strstr(msg, n1)) || (n2 && !strstr(msg, n2)))
        print_error("rc=%d (want %d), message: %s\n  want: '%s' '%s'\n", rc, code, msg,
                    n1 ? n1 : "", n2 ? n2 : "");
    assert_int_equal(rc, code);
    if (n1) assert_non_null(strstr(msg, n1));
    if (n2) assert_non_null(strstr(msg, n2));
}

static void expect_line_error(int which, const char *repl, const char *needle) {
    const char *p = write_dat(which, repl, 31);
    char where[300];
    snprintf(where, sizeof where, "%s:%d: ", p, which);
    expect_error(p, TS_ERR_PARSE, where, needle);
    unlink(p);
}

static void test_default_file(void **state) {
    (void)state;
    ts_hpl_dat d, def;
    assert_int_equal(ts_hpl_dat_read(TS_HPL_FRONT_DATA "/HPL.dat", &d), 0);
    ts_hpl_dat_default(&def);
    assert_string_equal(d.outfile, "HPL.out");
    assert_int_equal(d.device_out, 6);
    assert_int_equal(d.nN, 4);
    assert_true(d.N[0] == 29 && d.N[1] == 30 && d.N[2] == 34 && d.N[3] == 35);
    assert_int_equal(d.nNB, 4);
    assert_true(d.NB[0] == 1 && d.NB[3] == 4);
    assert_int_equal(d.pmap, 0);
    assert_int_equal(d.ngrid, 3);
    assert_true(d.P[0] == 2 && d.P[1] == 1 && d.P[2] == 4);
    assert_true(d.Q[0] == 2 && d.Q[1] == 4 && d.Q[2] == 1);
    assert_true(d.threshold == 16.0);
    assert_int_equal(d.npfact, 3);
    assert_int_equal(d.nnbmin, 2);
    assert_true(d.nbmin[0] == 2 && d.nbmin[1] == 4);
    assert_int_equal(d.nndiv, 1);
    assert_int_equal(d.ndiv[0], 2);
    assert_int_equal(d.nrfact, 3);
    assert_int_equal(d.nbcast, 1);
    assert_int_equal(d.bcast[0], 0);
    assert_int_equal(d.ndepth, 1);
    assert_int_equal(d.depth[0], 0);
    assert_int_equal(d.swap, 2);
    assert_int_equal(d.swap_threshold, 64);
    assert_int_equal(d.l1_notrans, 0);
    assert_int_equal(d.u_notrans, 0);
    assert_int_equal(d.equil, 1);
    assert_int_equal(d.align, 8);
    // The parsed file is exactly HPL 2.3's defaults.
    assert_memory_equal(&d, &def, sizeof d);
    // 3 grids x 4 N x 4 NB x 1 DEPTH x 1 BCAST x 3 RFACT x 3 PFACT x 2 NBMIN x 1 NDIV
    assert_int_equal(ts_hpl_case_count(&d), 864);
}

static void test_case_order(void **state) {
    (void)state;
    ts_hpl_dat d;
    ts_hpl_dat_default(&d);
    ts_hpl_case c;
    // HPL_pddriver: grids, N, NB, DEPTH, BCAST, RFACT, PFACT, NBMIN, NDIV (innermost).
    ts_hpl_case_at(&d, 0, &c);
    assert_true(c.P == 2 && c.Q == 2 && c.N == 29 && c.NB == 1 && c.rfact == 0 && c.pfact == 0 &&
                c.nbmin == 2);
    ts_hpl_case_at(&d, 1, &c);
    assert_true(c.nbmin == 4 && c.pfact == 0 && c.rfact == 0);
    ts_hpl_case_at(&d, 2, &c);
    assert_true(c.nbmin == 2 && c.pfact == 1 && c.rfact == 0);
    ts_hpl_case_at(&d, 6, &c);
    assert_true(c.nbmin == 2 && c.pfact == 0 && c.rfact == 1);
    ts_hpl_case_at(&d, 18, &c); // 3 RFACT x 3 PFACT x 2 NBMIN = 18 per NB
    assert_true(c.NB == 2 && c.N == 29 && c.rfact == 0);
    ts_hpl_case_at(&d, 72, &c); // 4 NB x 18 per N
    assert_true(c.N == 30 && c.NB == 1);
    ts_hpl_case_at(&d, 288, &c); // 4 N x 72 per grid
    assert_true(c.P == 1 && c.Q == 4 && c.N == 29);
    ts_hpl_case_at(&d, 863, &c);
    assert_true(c.P == 4 && c.Q == 1 && c.N == 35 && c.NB == 4 && c.rfact == 2 && c.pfact == 2 &&
                c.nbmin == 4);
    assert_true(c.threshold == 16.0 && c.swap == 2 && c.swap_threshold == 64 && c.align == 8 &&
                c.equil == 1);
}

static void test_multi_valued(void **state) {
    (void)state;
    const char *lines[31];
    memcpy(lines, default_lines, sizeof lines);
    lines[4] = "5            # of problems sizes (N)";
    lines[5] = "1000 2000 3000 4000 5000 trailing words are comments";
    lines[6] = "20           # of NBs";
    lines[7] = "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20";
    lines[8] = "1            PMAP";
    lines[9] = "2            grids";
    lines[10] = "1 2";
    lines[11] = "3 4";
    lines[12] = "-1.0         threshold (negative: no check)";
    lines[21] = "6            # of broadcast";
    lines[22] = "0 1 2 3 4 5  BCASTs";
    lines[23] = "2            # of lookahead depth";
    lines[24] = "0\t   1      DEPTHs, tabs and several spaces";
    snprintf(tmp_path, sizeof tmp_path, "/tmp/ts_hpl_front_multi_%d.dat", (int)getpid());
    FILE *f = fopen(tmp_path, "w");
    assert_non_null(f);
    for (int i = 0; i < 31; i++) fprintf(f, "%s\r\n", lines[i]); // CRLF too
    fprintf(f, "extra lines after 31 are ignored, as in HPL\n");
    fclose(f);
    ts_hpl_dat d;
    int rc = ts_hpl_dat_read(tmp_path, &d);
    if (rc) print_error("%s\n", ts_error_last()->message);
    assert_int_equal(rc, 0);
    unlink(tmp_path);
    assert_int_equal(d.nN, 5);
    assert_true(d.N[4] == 5000);
    assert_int_equal(d.nNB, 20);
    assert_int_equal(d.NB[19], 20);
    assert_int_equal(d.pmap, 1);
    assert_true(d.threshold == -1.0);
    assert_int_equal(d.nbcast, 6);
    assert_int_equal(d.ndepth, 2);
    assert_int_equal(d.depth[1], 1);
    // 2 grids x 5 N x 20 NB x 2 DEPTH x 6 BCAST x 3 RFACT x 3 PFACT x 2 NBMIN x 1 NDIV
    assert_int_equal(ts_hpl_case_count(&d), 2 * 5 * 20 * 2 * 6 * 3 * 3 * 2);
    // Every combination appears exactly once.
    int64_t n = ts_hpl_case_count(&d);
    static unsigned char seen[2][5][20][2][6][3][3][2];
    memset(seen, 0, sizeof seen);
    for (int64_t k = 0; k < n; k++) {
        ts_hpl_case c;
        ts_hpl_case_at(&d, k, &c);
        int g = c.P - 1, in = (int)(c.N / 1000) - 1, inb = c.NB - 1;
        int nbm = c.nbmin == 2 ? 0 : 1;
        assert_true(c.pmap == 1);
        seen[g][in][inb][c.depth][c.bcast][c.rfact][c.pfact][nbm]++;
    }
    for (size_t i = 0; i < sizeof seen; i++) assert_int_equal(((unsigned char *)seen)[i], 1);
}

static void test_missing_file(void **state) {
    (void)state;
    expect_error("/nonexistent/dir/HPL.dat", TS_ERR_IO, "/nonexistent/dir/HPL.dat", NULL);
}

static void test_truncated(void **state) {
    (void)state;
    // A file cut after line k (k = 0..30) names line k+1 and the end of the file.
    for (int k = 0; k < 31; k++) {
        const char *p = write_dat(0, NULL, k);
        char where[300];
        snprintf(where, sizeof where, "%s:%d: unexpected end of file", p, k + 1);
        expect_error(p, TS_ERR_PARSE, where, NULL);
        unlink(p);
    }
    // Cut in the middle of the value line: fewer values than the count says.
    expect_line_error(6, "29 30", "expected 4 values for Ns, found only 2");
    expect_line_error(8, "", "expected 4 values for NBs, found 0");
}

static void test_bad_numbers(void **state) {
    (void)state;
    expect_line_error(6, "29 30 abc 35  Ns", "expected 4 values for Ns, found 'abc'");
    expect_line_error(6, "29 30 34     Ns", "expected 4 values for Ns, found 'Ns'");
    expect_line_error(8, "1 2 3.5 4", "found '3.5'");
    expect_line_error(5, "four         # of problems sizes (N)", "found 'four'");
    expect_line_error(4, "stdout", "device out");
    expect_line_error(13, "sixteen      threshold", "expected the threshold (a number), found 'sixteen'");
    expect_line_error(26, "", "found an empty line");
    expect_line_error(31, "8x", "found '8x'");
    expect_line_error(6, "29 30 34 99999999999999999999999", "found '99999999999999999999999'");
}

static void test_counts(void **state) {
    (void)state;
    expect_line_error(5, "21           # of problems sizes (N)", "HPL takes 1 to 20 values");
    expect_line_error(7, "0            # of NBs", "the number of NBs is 0");
    expect_line_error(10, "-1           # of process grids", "HPL takes 1 to 20");
    expect_line_error(14, "25           # of panel fact", "HPL takes 1 to 20");
    expect_line_error(24, "0            # of lookahead depth", "HPL takes 1 to 20");
}

static void test_ranges(void **state) {
    (void)state;
    expect_line_error(6, "29 -30 34 35", "Ns value -30 is out of range");
    expect_line_error(8, "1 0 3 4      NBs", "NBs value 0 is out of range: NB must be >= 1");
    expect_line_error(9, "2            PMAP", "PMAP value 2 is out of range");
    expect_line_error(11, "2 0 4        Ps", "Ps value 0 is out of range: P must be >= 1");
    expect_line_error(12, "2 4 -1       Qs", "Qs value -1 is out of range: Q must be >= 1");
    expect_line_error(15, "0 1 3        PFACTs", "PFACTs value 3 is out of range");
    expect_line_error(17, "0 4          NBMINs", "NBMINs value 0 is out of range");
    expect_line_error(19, "1            NDIVs", "NDIVs value 1 is out of range: NDIV must be >= 2");
    expect_line_error(21, "0 1 7        RFACTs", "RFACTs value 7 is out of range");
    expect_line_error(23, "6            BCASTs", "BCASTs value 6 is out of range");
    expect_line_error(25, "-1           DEPTHs", "DEPTHs value -1 is out of range");
    expect_line_error(25, "5            DEPTHs", "DEPTHs value 5 is out of range: look-ahead depth 0 to 4");
    expect_line_error(26, "3            SWAP", "SWAP value 3 is out of range");
    expect_line_error(27, "-5           swapping threshold", "swapping threshold value -5");
    expect_line_error(28, "2            L1", "L1 value 2 is out of range");
    expect_line_error(29, "2            U", "U value 2 is out of range");
    expect_line_error(30, "5            Equilibration", "equilibration value 5 is out of range");
    expect_line_error(31, "0            memory alignment", "ALIGN value 0 is out of range");
}

// DEPTH 0..4 are read as given (the engine runs each: never replaced by another depth).
static void test_depths(void **state) {
    (void)state;
    ts_hpl_dat d;
    for (int v = 0; v <= 4; v++) {
        char line[64];
        snprintf(line, sizeof line, "%d            DEPTHs", v);
        const char *p = write_dat(25, line, 31);
        assert_int_equal(ts_hpl_dat_read(p, &d), 0);
        assert_int_equal(d.ndepth, 1);
        assert_int_equal(d.depth[0], v);
        ts_hpl_case c;
        ts_hpl_case_at(&d, 0, &c);
        assert_int_equal(c.depth, v);
        char tv[32];
        ts_hpl_tv_format(&c, tv, sizeof tv);
        assert_int_equal(tv[2], '0' + v); // WR<depth>...: the T/V code names it
        unlink(p);
    }
}

static void test_device_out_file(void **state) {
    (void)state;
    // Line 3 may be empty while device out is 6 or 7; device out 8 then names no file.
    ts_hpl_dat d;
    const char *p = write_dat(3, "", 31);
    assert_int_equal(ts_hpl_dat_read(p, &d), 0);
    assert_string_equal(d.outfile, "");
    unlink(p);
    snprintf(tmp_path, sizeof tmp_path, "/tmp/ts_hpl_front_dev_%d.dat", (int)getpid());
    FILE *f = fopen(tmp_path, "w");
    for (int i = 0; i < 31; i++)
        fprintf(f, "%s\n", i == 2 ? "" : i == 3 ? "8    device out" : default_lines[i]);
    fclose(f);
    char where[400];
    snprintf(where, sizeof where, "%s:4: device out 8 means the file named on line 3", tmp_path);
    expect_error(tmp_path, TS_ERR_PARSE, where, NULL);
    // With a name it is accepted.
    f = fopen(tmp_path, "w");
    for (int i = 0; i < 31; i++) fprintf(f, "%s\n", i == 3 ? "8    device out" : default_lines[i]);
    fclose(f);
    assert_int_equal(ts_hpl_dat_read(tmp_path, &d), 0);
    assert_int_equal(d.device_out, 8);
    assert_string_equal(d.outfile, "HPL.out");
    unlink(tmp_path);
}

static void test_check_grids(void **state) {
    (void)state;
    ts_hpl_dat d;
    ts_hpl_dat_default(&d);
    assert_int_equal(ts_hpl_check_grids(&d, 4), 0);
    assert_int_equal(ts_hpl_check_grids(&d, 8), 0);
    assert_int_equal(ts_hpl_check_grids(&d, 1), TS_ERR_ARG);
    assert_non_null(strstr(ts_error_last()->message, "Need at least 4 processes for these tests"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_file),   cmocka_unit_test(test_case_order),
        cmocka_unit_test(test_multi_valued),   cmocka_unit_test(test_missing_file),
        cmocka_unit_test(test_truncated),      cmocka_unit_test(test_bad_numbers),
        cmocka_unit_test(test_counts),         cmocka_unit_test(test_ranges),
        cmocka_unit_test(test_depths),
        cmocka_unit_test(test_device_out_file), cmocka_unit_test(test_check_grids),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
