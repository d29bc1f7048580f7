// test_tiles_perfdb.c: the performance database (CALDGEMM filter, file round trip, corrupt file) and the adaptive CPU share.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <unistd.h>

#include "runtime/ts_perfdb.h"
#include "tiles_test.h"

static void tmp_path(char *buf, size_t n, const char *tag) {
    snprintf(buf, n, "/tmp/tessera-perfdb-%ld-%s.txt", (long)getpid(), tag);
    remove(buf);
}

// r = g/(c'+g) on the first call, then r' = (r + g/(c'+g))/2, with c' = c t_c/t_g.
static void test_filter(void **state) {
    (void)state;
    char path[256];
    tmp_path(path, sizeof path, "filter");
    ts_perfdb *db = NULL;
    assert_int_equal(ts_perfdb_open(path, &db), 0);
    ts_perfdb_key k = ts_perfdb_key_of('d', 'N', 'T', 3000, 4096, 5000, 2);
    assert_int_equal(k.lm, 12); // 3000 -> 2^12 (rounded), 5000 -> 2^12
    assert_int_equal(k.lk, 12);
    const ts_perfdb_entry *e = ts_perfdb_update(db, &k, 100, 2.0, 50, 2.0);
    assert_true(fabs(e->ratio - 100.0 / 150.0) < 1e-12);
    e = ts_perfdb_update(db, &k, 100, 2.0, 100, 2.0);
    assert_true(fabs(e->ratio - 0.5 * (100.0 / 150.0 + 0.5)) < 1e-12);
    // The CPU computed half the devices' time: c' = c/2.
    e = ts_perfdb_update(db, &k, 100, 2.0, 100, 1.0);
    double r = 0.5 * (0.5 * (100.0 / 150.0 + 0.5) + 100.0 / 150.0);
    assert_true(fabs(e->ratio - r) < 1e-12);
    assert_int_equal(e->calls, 3);
    // Another class is another entry; C counts as T.
    ts_perfdb_key k2 = ts_perfdb_key_of('d', 'N', 'C', 3000, 4096, 5000, 1);
    assert_int_equal(k2.ops[1], 'T');
    ts_perfdb_update(db, &k2, 80, 1.0, 0, 0); // no CPU measurement: devices only
    assert_true(fabs(ts_perfdb_find(db, &k2)->ratio - 1.0) < 1e-12);
    assert_int_equal(ts_perfdb_count(db), 2);
    assert_int_equal(ts_perfdb_save(db), 0);
    ts_perfdb_close(db);
    // Round trip.
    assert_int_equal(ts_perfdb_open(path, &db), 0);
    assert_int_equal(ts_perfdb_load(db), 0);
    assert_int_equal(ts_perfdb_count(db), 2);
    e = ts_perfdb_find(db, &k);
    assert_non_null(e);
    assert_true(fabs(e->ratio - r) < 1e-6);
    assert_true(fabs(e->dev_gflops - 100) < 1e-3 && fabs(e->cpu_gflops - 100) < 1e-3);
    ts_perfdb_close(db);
    remove(path);
}

// A corrupt file is ignored (warning), the database is empty and the next save rewrites it.
static void test_corrupt(void **state) {
    (void)state;
    char path[256];
    tmp_path(path, sizeof path, "corrupt");
    static const char *bad[] = {"d NN 10 10 10 1 0.5 100 50 3\ngarbage line\n", "d NN 10 10 10 1 1.5 100 50 3\n",
                                "x NN 10 10 10 1 0.5 100 50 3\n", "d NN 10 10 10 1 nan 100 50 3\n"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(bad[i], f);
        fclose(f);
        ts_perfdb *db = NULL;
        assert_int_equal(ts_perfdb_open(path, &db), 0);
        assert_int_equal(ts_perfdb_load(db), 1);
        assert_int_equal(ts_perfdb_count(db), 0);
        ts_perfdb_key k = ts_perfdb_key_of('d', 'N', 'N', 1024, 1024, 1024, 1);
        ts_perfdb_update(db, &k, 10, 1, 10, 1);
        assert_int_equal(ts_perfdb_save(db), 0);
        assert_int_equal(ts_perfdb_load(db), 0);
        assert_int_equal(ts_perfdb_count(db), 1);
        ts_perfdb_close(db);
    }
    remove(path);
}

// Adaptive: the first call of a class measures (auto rule), the next ones take the share from the
// database (reported as planned), C is right every time, and the file holds the class.
// Paced at 0.5 GFLOP/s each, so the CPU matters and a call (36 tiles of 8.4 MFLOP) lasts ~0.3 s:
// the CPU worker is started after the devices' and takes only pending tiles, so it must be
// scheduled before the devices have claimed them all (at 2 GFLOP/s, ~75 ms, which a loaded 2-core
// machine can keep one thread waiting).
static void test_adaptive(void **state) {
    (void)state;
    char path[256];
    tmp_path(path, sizeof path, "adaptive");
    ts_devset *s = tt_open(2, NULL, 0, 0.5, 0);
    assert_non_null(s);
    ts_tiles_opts o = tt_opts(128, TS_TILES_CPU_ADAPTIVE);
    o.perfdb = path;
    ts_tiles *rt = NULL;
    assert_int_equal(ts_tiles_create(s, &o, &rt), 0);
    tt_prob p;
    assert_int_equal(tt_make(&p, 'd', 'N', 'N', 768, 768, 256, 0, 71), 0);
    ts_tiles_stats st;
    for (int call = 0; call < 3; call++) {
        memcpy(p.C, p.C0, (size_t)(p.ldc * p.n) * p.es);
        assert_int_equal(tt_run(rt, &p, &st), 0);
        assert_true(tt_check(&p) <= 1.0);
        assert_string_equal(st.cpu_mode, "adaptive");
        // two devices paced at 0.5 GFLOP/s each: at most 1 (< 2); at least their flops over the whole
        // call (their rate's time ends at their last tile, within the call): no fixed floor, which a
        // loaded machine's slower host GEMMs could go below
        double dev_flops = (double)(st.tiles_dev[0] + st.tiles_dev[1]) * 2.0 * 128 * 128 * 256;
        assert_true(st.dev_gflops >= dev_flops / st.seconds * 1e-9 * (1 - 1e-9) && st.dev_gflops < 2);
        assert_true(st.tiles_cpu > 0);
        if (call == 0) {
            assert_true(st.cpu_share_planned < 0); // nothing known yet: auto
            assert_true(st.cpu_gflops > 0);
            assert_int_equal(st.cpu_steals, 0);
        } else {
            assert_true(st.cpu_share_planned > 0 && st.cpu_share_planned < 1);
            // The CPU is offered its planned tiles (rounded down) first and takes further ones only
            // once it has done them all (by the auto rule, counted as steals). It is not promised
            // them: the devices take pending tiles too, and a CPU worker that a loaded machine
            // schedules late (or a CPU slower in this call than in the calls the share came from)
            // finds fewer left; so no lower bound beyond > 0.
            int64_t cap = (int64_t)(st.cpu_share_planned * (double)st.tiles);
            assert_true(st.cpu_steals >= 0 && st.tiles_cpu - st.cpu_steals <= cap);
            if (st.cpu_steals > 0) assert_int_equal(st.tiles_cpu, cap + st.cpu_steals);
        }
        assert_int_equal(st.tiles_dev[0] + st.tiles_dev[1] + st.tiles_cpu, st.tiles);
    }
    ts_tiles_destroy(rt);
    ts_perfdb *db = NULL;
    assert_int_equal(ts_perfdb_open(path, &db), 0);
    assert_int_equal(ts_perfdb_load(db), 0);
    ts_perfdb_key k = ts_perfdb_key_of('d', 'N', 'N', 768, 768, 256, 2);
    const ts_perfdb_entry *e = ts_perfdb_find(db, &k);
    assert_non_null(e);
    assert_int_equal(e->calls, 3);
    assert_true(e->ratio > 0 && e->ratio < 1);
    ts_perfdb_close(db);
    tt_free(&p);
    ts_devset_close(s);
    remove(path);
}

// The trace of a call: one record per C tile and stage, written as Chrome trace JSON.
static void test_trace(void **state) {
    (void)state;
    char path[256];
    tmp_path(path, sizeof path, "trace");
    ts_devset *s = tt_open(2, NULL, 0, 0, 0);
    ts_tiles_opts o = tt_opts(128, TS_TILES_CPU_AUTO);
    o.trace = 1;
    ts_tiles *rt = NULL;
    assert_int_equal(ts_tiles_create(s, &o, &rt), 0);
    tt_prob p;
    assert_int_equal(tt_make(&p, 's', 'N', 'N', 512, 384, 256, 0, 72), 0);
    assert_int_equal(tt_run(rt, &p, NULL), 0);
    assert_true(tt_check(&p) <= 1.0);
    assert_int_equal(ts_tiles_trace_write(rt, path), 0);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    assert_non_null(strstr(buf, "\"traceEvents\""));
    assert_non_null(strstr(buf, "\"device 1 gemm\""));
    assert_non_null(strstr(buf, "\"name\":\"copy out\""));
    tt_free(&p);
    ts_tiles_destroy(rt);
    ts_devset_close(s);
    remove(path);
}

int main(void) {
    ts_cpu_blas_set_threads(1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_filter),
        cmocka_unit_test(test_corrupt),
        cmocka_unit_test(test_adaptive),
        cmocka_unit_test(test_trace),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
