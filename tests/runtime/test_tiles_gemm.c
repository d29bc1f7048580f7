// test_tiles_gemm.c: tile runtime results against the CPU BLAS: precisions, ops, edges, device counts, CPU worker.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tiles_test.h"

static void run_ok(ts_tiles *rt, tt_prob *p, ts_tiles_stats *st) {
    int rc = tt_run(rt, p, st);
    if (rc != 0) fprintf(stderr, "ts_tiles_gemm: %s\n", ts_error_string());
    assert_int_equal(rc, 0);
    double e = tt_check(p);
    if (!(e <= 1.0))
        fprintf(stderr, "%c %c%c %lldx%lldx%lld: error %.3g of the bound\n", p->prec, p->ta, p->tb, (long long)p->m,
                (long long)p->n, (long long)p->k, e);
    assert_true(e <= 1.0);
}

// Every precision and every op pair, sizes not multiples of the tile, padded leading dimensions,
// two devices of unequal speed.
static void test_all_precs_ops(void **state) {
    (void)state;
    const double sp[2] = {1.0, 0.5};
    ts_devset *s = tt_open(2, sp, 0, 0, 0);
    assert_non_null(s);
    ts_tiles_opts o = tt_opts(64, 0);
    ts_tiles *rt = NULL;
    assert_int_equal(ts_tiles_create(s, &o, &rt), 0);
    const char precs[] = "sdcz", ops[] = "NTC";
    int runs = 0;
    for (int p = 0; p < 4; p++)
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++) {
                tt_prob pr;
                assert_int_equal(tt_make(&pr, precs[p], ops[a], ops[b], 150, 100, 130, 3, (uint64_t)runs + 1), 0);
                ts_tiles_stats st;
                run_ok(rt, &pr, &st);
                assert_int_equal(st.tiles, 3 * 2);
                assert_int_equal(st.tiles_dev[0] + st.tiles_dev[1], 6);
                tt_free(&pr);
                runs++;
            }
    assert_int_equal(runs, 36);
    ts_tiles_destroy(rt);
    ts_devset_close(s);
}

// The case: 1000x700x900 with T=256 on 1, 2 and 4 paced devices of unequal speeds
// (20 GFLOP/s at speed 1, 4 GB/s links: copies and GEMMs both take time, so the order matters).
static void test_uneven_sizes_device_counts(void **state) {
    (void)state;
    const double sp[4] = {1.0, 0.5, 0.25, 0.75};
    const int counts[3] = {1, 2, 4};
    const char *cases[4] = {"sNN", "dTN", "cNC", "zCT"};
    for (int ci = 0; ci < 3; ci++) {
        ts_devset *s = tt_open(counts[ci], sp, 0, 20.0, 4.0);
        assert_non_null(s);
        ts_tiles_opts o = tt_opts(256, 0);
        ts_tiles *rt = NULL;
        assert_int_equal(ts_tiles_create(s, &o, &rt), 0);
        for (int k = 0; k < 4; k++) {
            tt_prob pr;
            assert_int_equal(tt_make(&pr, cases[k][0], cases[k][1], cases[k][2], 1000, 700, 900, 0, 7), 0);
            ts_tiles_stats st;
            run_ok(rt, &pr, &st);
            assert_int_equal(st.tiles, 4 * 3);
            int64_t sum = 0;
            for (int d = 0; d < counts[ci]; d++) sum += st.tiles_dev[d];
            assert_int_equal(sum, 12);
            assert_int_equal(st.tiles_cpu, 0);
            assert_int_equal(st.bytes_d2h, (size_t)1000 * 700 * pr.es);
            tt_free(&pr);
        }
        ts_tiles_destroy(rt);
        ts_devset_close(s);
    }
}

// beta = 0 must not read C (NaN there is overwritten); alpha = 0; k = 0 scales C by beta;
// m or n = 0 does nothing; a 1x1x1 problem; tiles larger than the problem.
static void test_edges(void **state) {
    (void)state;
    ts_devset *s = tt_open(2, NULL, 0, 0, 0);
    assert_non_null(s);
    ts_tiles_opts o = tt_opts(32, 0);
    ts_tiles *rt = NULL;
    assert_int_equal(ts_tiles_create(s, &o, &rt), 0);
    tt_prob p;
    assert_int_equal(tt_make(&p, 'd', 'N', 'T', 70, 45, 33, 2, 11), 0);
    memset(p.C, 0xff, (size_t)(p.ldc * p.n) * p.es); // NaN everywhere, padding included
    memcpy(p.C0, p.C, (size_t)(p.ldc * p.n) * p.es);
    p.beta[0] = 0;
    assert_int_equal(tt_run(rt, &p, NULL), 0);
    for (int64_t j = 0; j < p.n; j++)
        for (int64_t i = 0; i < p.m; i++) assert_false(isnan(((double *)p.C)[i + j * p.ldc]));
    tt_free(&p);

    assert_int_equal(tt_make(&p, 'z', 'N', 'N', 40, 50, 60, 0, 12), 0);
    p.alpha[0] = p.alpha[1] = 0;
    run_ok(rt, &p, NULL);
    tt_free(&p);

    assert_int_equal(tt_make(&p, 's', 'N', 'N', 40, 50, 1, 0, 13), 0);
    p.k = 0;
    run_ok(rt, &p, NULL);
    tt_free(&p);

    assert_int_equal(tt_make(&p, 'c', 'C', 'N', 1, 1, 1, 0, 14), 0);
    run_ok(rt, &p, NULL);
    tt_free(&p);

    double one = 1, x = 5;
    assert_int_equal(ts_tiles_gemm(rt, 'd', 'N', 'N', 0, 4, 4, &one, NULL, 1, NULL, 4, &one, &x, 1, NULL), 0);
    assert_true(x == 5);
    ts_tiles_destroy(rt);

    o.tile = 4096; // one tile covers everything
    assert_int_equal(ts_tiles_create(s, &o, &rt), 0);
    assert_int_equal(tt_make(&p, 'd', 'T', 'T', 90, 80, 70, 1, 15), 0);
    ts_tiles_stats st;
    run_ok(rt, &p, &st);
    assert_int_equal(st.tiles, 1);
    tt_free(&p);
    ts_tiles_destroy(rt);
    ts_devset_close(s);
}

// Bad arguments are refused in BLAS order with the argument named; nothing runs.
static void test_bad_args(void **state) {
    (void)state;
    ts_devset *s = tt_open(1, NULL, 0, 0, 0);
    ts_tiles *rt = NULL;
    ts_tiles_opts o = tt_opts(64, 0);
    assert_int_equal(ts_tiles_create(s, &o, &rt), 0);
    double one = 1, buf[16] = {0};
    assert_int_equal(ts_tiles_gemm(rt, 'd', 'X', 'N', 4, 4, 4, &one, buf, 4, buf, 4, &one, buf, 4, NULL), TS_ERR_ARG);
    assert_int_equal(ts_tiles_gemm(rt, 'd', 'N', 'N', 4, 4, 4, &one, buf, 3, buf, 4, &one, buf, 4, NULL), TS_ERR_ARG);
    assert_non_null(strstr(ts_error_last()->message, "8"));
    assert_int_equal(ts_tiles_gemm(rt, 'q', 'N', 'N', 4, 4, 4, &one, buf, 4, buf, 4, &one, buf, 4, NULL), TS_ERR_ARG);
    assert_int_equal(ts_tiles_gemm(rt, 'd', 'N', 'N', 4, 4, 4, NULL, buf, 4, buf, 4, &one, buf, 4, NULL), TS_ERR_ARG);
    assert_int_equal(ts_tiles_gemm(NULL, 'd', 'N', 'N', 4, 4, 4, &one, buf, 4, buf, 4, &one, buf, 4, NULL), TS_ERR_ARG);
    ts_tiles_destroy(rt);
    o.cpu_share = 2;
    assert_int_equal(ts_tiles_create(s, &o, &rt), TS_ERR_ARG);
    o.cpu_share = 0, o.depth = -1; // 0 is auto
    assert_int_equal(ts_tiles_create(s, &o, &rt), TS_ERR_ARG);
    ts_devset_close(s);
    // No devices and no CPU worker: nothing could run.
    ts_devset *none = tt_open(0, NULL, 0, 0, 0);
    assert_non_null(none);
    o = tt_opts(64, 0);
    assert_int_equal(ts_tiles_create(none, &o, &rt), TS_ERR_ARG);
    ts_devset_close(none);
}

// TESSERA_TILE and TESSERA_TILES_CPU are read by ts_tiles_opts_init; malformed values are refused.
static void test_env(void **state) {
    (void)state;
    ts_tiles_opts o;
    setenv("TESSERA_TILE", "128", 1);
    setenv("TESSERA_TILES_CPU", "0.25", 1);
    assert_int_equal(ts_tiles_opts_init(&o), 0);
    assert_int_equal(o.tile, 128);
    assert_true(o.cpu_share == 0.25);
    setenv("TESSERA_TILES_CPU", "auto", 1);
    assert_int_equal(ts_tiles_opts_init(&o), 0);
    assert_true(o.cpu_share == TS_TILES_CPU_AUTO);
    setenv("TESSERA_TILES_CPU", "1.5", 1);
    assert_int_equal(ts_tiles_opts_init(&o), TS_ERR_PARSE);
    assert_non_null(strstr(ts_error_last()->message, "TESSERA_TILES_CPU"));
    unsetenv("TESSERA_TILES_CPU");
    setenv("TESSERA_TILE", "-3", 1);
    assert_int_equal(ts_tiles_opts_init(&o), TS_ERR_PARSE);
    unsetenv("TESSERA_TILE");
    assert_int_equal(ts_tiles_opts_init(&o), 0);
    assert_int_equal(o.tile, 0);
    // Defaults by device: 256 on simulated devices.
    ts_devset *s = tt_open(1, NULL, 0, 0, 0);
    ts_tiles *rt = NULL;
    assert_int_equal(ts_tiles_create(s, &o, &rt), 0);
    assert_int_equal(ts_tiles_tile(rt), 256);
    ts_tiles_destroy(rt);
    ts_devset_close(s);
}

// The CPU worker: alone (no devices) it does every tile; with a fraction it stays within it.
static void test_cpu_worker(void **state) {
    (void)state;
    ts_devset *none = tt_open(0, NULL, 0, 0, 0);
    ts_tiles_opts o = tt_opts(64, TS_TILES_CPU_AUTO);
    ts_tiles *rt = NULL;
    assert_int_equal(ts_tiles_create(none, &o, &rt), 0);
    tt_prob p;
    assert_int_equal(tt_make(&p, 'd', 'T', 'N', 200, 130, 90, 1, 21), 0);
    ts_tiles_stats st;
    run_ok(rt, &p, &st);
    assert_int_equal(st.tiles_cpu, st.tiles);
    assert_true(st.cpu_share == 1.0);
    tt_free(&p);
    ts_tiles_destroy(rt);
    ts_devset_close(none);

    ts_devset *s = tt_open(2, NULL, 0, 0, 0);
    o = tt_opts(64, 0.25);
    assert_int_equal(ts_tiles_create(s, &o, &rt), 0);
    assert_int_equal(tt_make(&p, 'z', 'N', 'C', 300, 256, 100, 0, 22), 0);
    run_ok(rt, &p, &st);
    assert_int_equal(st.tiles, 20);
    assert_true(st.tiles_cpu <= 5);
    assert_int_equal(st.tiles_cpu + st.tiles_dev[0] + st.tiles_dev[1], 20);
    tt_free(&p);
    ts_tiles_destroy(rt);
    ts_devset_close(s);
}

int main(void) {
    ts_cpu_blas_set_threads(1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_precs_ops),
        cmocka_unit_test(test_uneven_sizes_device_counts),
        cmocka_unit_test(test_edges),
        cmocka_unit_test(test_bad_args),
        cmocka_unit_test(test_env),
        cmocka_unit_test(test_cpu_worker),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
