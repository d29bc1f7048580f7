// test_tiles_sched.c: tile runtime scheduling and caching on paced simulated devices: speed, reuse, peers, out-of-core, pins, CPU share.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tiles_test.h"
#include "runtime/ts_tiles_internal.h" // rt->cpu_flop_rate: a CPU made slow on purpose

static void run_ok(ts_tiles *rt, tt_prob *p, ts_tiles_stats *st) {
    int rc = tt_run(rt, p, st);
    if (rc != 0) fprintf(stderr, "ts_tiles_gemm: %s\n", ts_error_string());
    assert_int_equal(rc, 0);
    double e = tt_check(p);
    if (!(e <= 1.0)) fprintf(stderr, "error %.3g of the bound\n", e);
    assert_true(e <= 1.0);
}

static void print_stats(const char *what, const ts_tiles_stats *st) {
    printf("%s: %lld tiles in %.3f s; per device", what, (long long)st->tiles, st->seconds);
    for (int d = 0; d < st->ndev; d++) printf(" %lld", (long long)st->tiles_dev[d]);
    printf("; cpu %lld (%.0f%%); hits %lld misses %lld peer %lld evictions %lld steals %lld; "
           "h2d %.1f MiB (no reuse %.1f) d2h %.1f p2p %.1f\n",
           (long long)st->tiles_cpu, 100 * st->cpu_share, (long long)st->cache_hits, (long long)st->cache_misses,
           (long long)st->peer_fetches, (long long)st->evictions, (long long)st->steals, st->bytes_h2d / 1048576.0,
           st->bytes_h2d_noreuse / 1048576.0, st->bytes_d2h / 1048576.0, st->bytes_p2p / 1048576.0);
}

// Paced devices of speeds 1 and 0.25: the fast one does most tiles; with reservation stations the
// fast one steals the slow one's claims at the tail. Four devices: the fastest beats the slowest.
// The pacing must be what sets a device's speed: a simulated device computes its tile on the host
// and then waits out the rest of the paced time, so a tile whose host GEMM takes longer than its
// pacing runs at the host's speed on every device. At 4 GFLOP/s (67 MFLOP tiles: 17 and 67 ms) a
// loaded 2-core machine took ~140 ms per host GEMM and the slow device did 10 of 16 tiles. Small
// tiles paced slowly (4.2 MFLOP at 0.08 GFLOP/s: 52 ms at speed 1, 210 ms at 0.25) leave the host
// GEMM (~1 ms idle) far below the pacing even when the machine is many times oversubscribed; more
// of them (36 and 49) keep the tiles a slow device holds at the end a small part of the whole.
// What a loaded machine still adds is the worker's own time per tile (retiring flights, queueing
// the next tile: thread wake-ups that wait for a core), the same for every device: at 0.08 GFLOP/s
// (52 and 210 ms) a machine at a load average of ~30 under ASan ran the fast device at ~150 ms a
// tile and the slow one at ~350 ms, 25 and 11 tiles, near the bound. At 0.025 GFLOP/s (168 and
// 671 ms) such a ~100-150 ms overhead still leaves the fast device over 2.3 times the other's rate.
#define SLOW_GFLOPS 0.025
static void test_faster_device_more_tiles(void **state) {
    (void)state;
    const double sp2[2] = {1.0, 0.25};
    ts_devset *s = tt_open(2, sp2, 0, SLOW_GFLOPS, 4.0);
    assert_non_null(s);
    ts_tiles_opts o = tt_opts(128, 0);
    o.reserve = 3;
    ts_tiles *rt = NULL;
    assert_int_equal(ts_tiles_create(s, &o, &rt), 0);
    tt_prob p;
    assert_int_equal(tt_make(&p, 'd', 'N', 'N', 768, 768, 128, 0, 31), 0);
    ts_tiles_stats st;
    run_ok(rt, &p, &st);
    print_stats("speeds 1, 0.25", &st);
    assert_int_equal(st.tiles_dev[0] + st.tiles_dev[1], 36);
    assert_true(st.tiles_dev[0] >= 2 * st.tiles_dev[1]);
    assert_true(st.steals > 0);
    tt_free(&p);
    ts_tiles_destroy(rt);
    ts_devset_close(s);

    const double sp4[4] = {1.0, 0.5, 0.25, 0.75};
    s = tt_open(4, sp4, 0, SLOW_GFLOPS, 4.0);
    assert_non_null(s);
    o.reserve = 1;
    assert_int_equal(ts_tiles_create(s, &o, &rt), 0);
    assert_int_equal(tt_make(&p, 's', 'N', 'T', 896, 896, 128, 0, 32), 0);
    run_ok(rt, &p, &st);
    print_stats("speeds 1, 0.5, 0.25, 0.75", &st);
    assert_true(st.tiles_dev[0] > st.tiles_dev[2]);
    assert_true(st.tiles_dev[3] > st.tiles_dev[2]);
    tt_free(&p);
    ts_tiles_destroy(rt);
    ts_devset_close(s);
}

// A square problem on one device: tiles are reused from the cache, so fewer bytes go in than
// without reuse. On two devices a tile one device holds is fetched by the other over the peer
// link; with peer fetch off, nothing goes over it. Peer fetches need both devices to run tiles:
// paced at 2 GFLOP/s (33.5 MFLOP tiles, 17 ms; ~1 s for one device alone), as unpaced one device
// did 61 of the 64 tiles on a loaded machine before the other's worker got going, and could do all.
static void test_cache_reuse_and_peers(void **state) {
    (void)state;
    ts_devset *s = tt_open(2, NULL, 0, 2.0, 0);
    assert_non_null(s);
    ts_tiles_opts o = tt_opts(128, 0);
    ts_tiles *rt = NULL;
    assert_int_equal(ts_tiles_create(s, &o, &rt), 0);
    tt_prob p;
    assert_int_equal(tt_make(&p, 'd', 'N', 'N', 1024, 1024, 1024, 0, 41), 0);
    ts_tiles_stats st;
    run_ok(rt, &p, &st);
    print_stats("square 1024, T=128, 2 devices", &st);
    assert_true(st.cache_hits > 0);
    assert_true(st.bytes_h2d < st.bytes_h2d_noreuse / 2);
    assert_true(st.peer_fetches > 0);
    assert_true(st.bytes_p2p > 0);
    assert_int_equal(st.cache_hits + st.cache_misses, 64 * 8 * 2);
    ts_tiles_destroy(rt);

    o.peer = 0;
    assert_int_equal(ts_tiles_create(s, &o, &rt), 0);
    memcpy(p.C, p.C0, (size_t)(p.ldc * p.n) * p.es);
    run_ok(rt, &p, &st);
    print_stats("same, peer fetch off", &st);
    assert_int_equal(st.bytes_p2p, 0);
    assert_int_equal(st.peer_fetches, 0);
    tt_free(&p);
    ts_tiles_destroy(rt);
    ts_devset_close(s);
}

// Larger than all device memory together: two devices of 8 MiB, operands of 22 + 22 + 44 MiB.
static void test_out_of_core(void **state) {
    (void)state;
    ts_devset *s = tt_open(2, NULL, (size_t)8 << 20, 0, 0);
    assert_non_null(s);
    ts_tiles_opts o = tt_opts(256, 0);
    ts_tiles *rt = NULL;
    assert_int_equal(ts_tiles_create(s, &o, &rt), 0);
    tt_prob p;
    assert_int_equal(tt_make(&p, 'd', 'N', 'T', 2400, 2400, 1200, 0, 51), 0);
    size_t total = (size_t)(p.lda * 1200 + p.ldb * 1200 + p.ldc * 2400) * p.es;
    assert_true(total > (size_t)40 << 20);
    ts_tiles_stats st;
    run_ok(rt, &p, &st);
    print_stats("2400x2400x1200 on 2 x 8 MiB", &st);
    assert_true(st.slots[0] <= 16 && st.slots[1] <= 16);
    assert_true(st.evictions > 0);
    assert_true(st.cache_hits > 0);
    size_t used = 1, freeb = 0, largest = 0;
    ts_dmem_info(ts_devset_device(s, 0), &used, &freeb, &largest);
    assert_int_equal(used, 0); // the cache is returned to the arena after the call
    tt_free(&p);
    ts_tiles_destroy(rt);
    ts_devset_close(s);
}

// Host registrations are kept across calls (a second call on the same buffers registers nothing
// new) and dropped by ts_tiles_unpin_all; keep_pins 0 keeps none.
static void test_pins(void **state) {
    (void)state;
    ts_devset *s = tt_open(1, NULL, 0, 0, 0);
    ts_tiles_opts o = tt_opts(64, 0);
    ts_tiles *rt = NULL;
    assert_int_equal(ts_tiles_create(s, &o, &rt), 0);
    tt_prob p;
    assert_int_equal(tt_make(&p, 'd', 'N', 'N', 200, 150, 100, 0, 61), 0);
    run_ok(rt, &p, NULL);
    long reg1, reg2;
    int handles, count;
    size_t bytes;
    ts_host_pin_stats(s, NULL, &handles, &reg1);
    assert_int_equal(handles, 3);
    ts_tiles_pin_info(rt, &count, &bytes);
    assert_int_equal(count, 3);
    memcpy(p.C, p.C0, (size_t)(p.ldc * p.n) * p.es);
    run_ok(rt, &p, NULL);
    ts_host_pin_stats(s, NULL, &handles, &reg2);
    assert_int_equal(reg2, reg1);
    assert_int_equal(handles, 3);
    assert_int_equal(ts_tiles_unpin(rt, p.B, 8), 0);
    ts_host_pin_stats(s, NULL, &handles, NULL);
    assert_int_equal(handles, 2);
    assert_int_equal(ts_tiles_unpin_all(rt), 0);
    ts_host_pin_stats(s, NULL, &handles, NULL);
    assert_int_equal(handles, 0);
    ts_tiles_destroy(rt);

    o.keep_pins = 0;
    assert_int_equal(ts_tiles_create(s, &o, &rt), 0);
    memcpy(p.C, p.C0, (size_t)(p.ldc * p.n) * p.es);
    run_ok(rt, &p, NULL);
    ts_host_pin_stats(s, NULL, &handles, NULL);
    assert_int_equal(handles, 0);
    tt_free(&p);
    ts_tiles_destroy(rt);
    ts_devset_close(s);
}

// Two slow paced devices, the CPU worker on auto, tile 128, and a d 1024 x 768 x 256 problem.
// 0.5 GFLOP/s each: 48 tiles of 8.4 MFLOP (17 ms each), ~0.4 s per call. The CPU worker may take a
// tile only while more than devices x (depth + reserve) tasks are pending and once two device tiles
// are written back (their rate), so it must be scheduled within that part of the call: at 2 GFLOP/s
// (~0.1 s per call) that window was ~50 ms, which a loaded 2-core machine under ASan can keep one
// thread waiting; now it is ~0.25 s.
static void paced_auto(uint64_t key, ts_devset **s, ts_tiles_opts *o, ts_tiles **rt, tt_prob *p) {
    *s = tt_open(2, NULL, 0, 0.5, 4.0);
    *o = tt_opts(128, TS_TILES_CPU_AUTO);
    *rt = NULL;
    assert_int_equal(ts_tiles_create(*s, o, rt), 0);
    assert_int_equal(tt_make(p, 'd', 'N', 'N', 1024, 768, 256, 0, key), 0);
}

// Slow paced devices and the CPU worker on auto: the CPU does a share of the tiles, but not the
// last ones, and the result is right.
static void test_cpu_share_auto(void **state) {
    (void)state;
    ts_devset *s;
    ts_tiles_opts o;
    ts_tiles *rt;
    tt_prob p;
    paced_auto(71, &s, &o, &rt, &p);
    ts_tiles_stats st;
    run_ok(rt, &p, &st);
    print_stats("cpu auto, 2 paced devices", &st);
    assert_true(st.tiles_cpu > 0);
    assert_true(st.tiles_dev[0] + st.tiles_dev[1] >= 2 * (o.depth + o.reserve) - 1);
    assert_true(st.cpu_share > 0 && st.cpu_share < 1);
    tt_free(&p);
    ts_tiles_destroy(rt);
    ts_devset_close(s);
}

// The same devices with a CPU whose known rate makes each of its tiles last far longer than the
// devices need for everything: it takes none (an H200 against a 16-core CPU is this case, about
// 100x). The rule compares twice the CPU's tile time with the devices' time left at their measured
// rate (flops since their first written-back tile over the time since), so the rate set here must
// leave no doubt under load: at 1 kFLOP/s a tile is 8389 s, and the CPU could take one only if the
// devices, paced at 1 GFLOP/s together with <= 0.4 GFLOP left, were measured over 40000 times
// slower (at 1 MFLOP/s it was 40 times at the old 4 GFLOP/s pacing: a stall of ~0.4 s with no tile
// written back, which a busy machine can give).
static void test_cpu_auto_slow_cpu(void **state) {
    (void)state;
    ts_devset *s;
    ts_tiles_opts o;
    ts_tiles *rt;
    tt_prob p;
    paced_auto(72, &s, &o, &rt, &p);
    ts_tiles_stats st;
    for (int rep = 0; rep < 2; rep++) {
        rt->cpu_flop_rate = 1e3; // 1 kFLOP/s: 8389 s per 128 x 128 x 256 tile, the devices need ~0.4 s
        memcpy(p.C, p.C0, (size_t)(p.ldc * p.n) * p.es);
        run_ok(rt, &p, &st);
        assert_int_equal(st.tiles_cpu, 0);
        assert_int_equal(st.tiles_dev[0] + st.tiles_dev[1], st.tiles);
    }
    // and with its real (fast) rate it takes a share again
    rt->cpu_flop_rate = 0;
    memcpy(p.C, p.C0, (size_t)(p.ldc * p.n) * p.es);
    run_ok(rt, &p, &st);
    assert_true(st.tiles_cpu > 0);
    tt_free(&p);
    ts_tiles_destroy(rt);
    ts_devset_close(s);
}

// Level-3 origins (opts.grid): the task nearest each device's grid corner, not taken by a device
// before it, never a task with a predecessor. On a full 12 x 12 C (SYMM) the GEMM's corners; on the
// lower triangle (SYRK/SYR2K) the corner (0, 6) off the triangle moves to (3, 3), so that the four
// first tasks read three block rows of A ((0,0): row 0, (3,3): row 3, (6,0): rows 6 and 0, (6,6):
// row 6) instead of six from the column-major starts (0,0), (3,1), (7,2), (10,3).
static void test_l3_origins(void **state) {
    (void)state;
    tl_call *c = calloc(1, sizeof *c);
    tl_l3 *L = calloc(1, sizeof *L);
    tl_task *tasks = calloc(144, sizeof *tasks);
    assert_true(c && L && tasks);
    c->mt = c->nt = 12;
    c->l3 = L;
    L->tasks = tasks;
    for (int lower = 0; lower < 3; lower++) { // 0: full, 1: lower triangle, 2: lower, chains down columns
        L->ntasks = 0;
        for (int j = 0; j < 12; j++)
            for (int i = lower ? j : 0; i < 12; i++) {
                tl_task *tk = &tasks[L->ntasks++];
                memset(tk, 0, sizeof *tk);
                tk->i = i, tk->j = j, tk->chain = -1;
                tk->prev = lower == 2 && i > j ? L->ntasks - 2 : -1;
            }
        const int want[2][4][2] = {{{0, 0}, {0, 6}, {6, 0}, {6, 6}}, {{0, 0}, {3, 3}, {6, 0}, {6, 6}}};
        for (int d = 0; d < 4; d++) {
            c->dc[d].origin = tl_l3_origin(c, 4, d);
            const tl_task *tk = &tasks[c->dc[d].origin];
            printf("case %d device %d: origin (%lld, %lld)\n", lower, d, (long long)tk->i, (long long)tk->j);
            assert_int_equal(tk->prev, -1);
            if (lower < 2) {
                assert_int_equal(tk->i, want[lower][d][0]);
                assert_int_equal(tk->j, want[lower][d][1]);
            }
            for (int e = 0; e < d; e++) assert_int_not_equal(c->dc[e].origin, c->dc[d].origin);
        }
    }
    // more devices than tasks: the last ones start from task 0
    L->ntasks = 2;
    for (int d = 0; d < 3; d++) c->dc[d].origin = tl_l3_origin(c, 3, d);
    assert_int_equal(c->dc[2].origin, 0);
    free(tasks), free(L), free(c);
}

// The devices' starting grid (opts.grid): pr x pc blocks with the fewest panels per block.
static void test_grid_shape(void **state) {
    (void)state;
    int cases[][5] = {{12, 12, 4, 2, 2}, {12, 12, 2, 1, 2}, {12, 12, 3, 1, 3}, {12, 12, 8, 2, 4},
                      {4, 40, 4, 1, 4},  {40, 4, 4, 4, 1},  {12, 12, 1, 1, 1}, {1, 1, 4, 1, 4}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int pr = 0, pc = 0;
        tl_grid_shape(cases[i][0], cases[i][1], cases[i][2], &pr, &pc);
        assert_int_equal(pr, cases[i][3]);
        assert_int_equal(pc, cases[i][4]);
    }
    // 12 x 12 tiles on 4 devices: the corners of the four 6 x 6 quadrants
    assert_int_equal(tl_grid_origin(12, 12, 4, 0), 0);
    assert_int_equal(tl_grid_origin(12, 12, 4, 1), 0 + 6 * 12);
    assert_int_equal(tl_grid_origin(12, 12, 4, 2), 6);
    assert_int_equal(tl_grid_origin(12, 12, 4, 3), 6 + 6 * 12);
}

// Four paced devices, 12 x 12 C tiles, beta 0, no CPU worker. A and B come from the host once
// either way (a miss is served by a peer that holds or loads the tile). Started from the corners of
// a 2 x 2 grid each device's region needs 6 block rows of A and 6 block columns of B, each shared
// with one neighbour: the peer copies are about A + B once more (their minimum for four regions).
// Started along block row 0 (grid 0, the old order) every device reads all of A: ~1.5-1.8x that.
// Byte counts, not times.
static void test_grid_peer_bytes(void **state) {
    (void)state;
    ts_devset *s = tt_open(4, NULL, 0, 0.2, 0);
    assert_non_null(s);
    tt_prob p;
    assert_int_equal(tt_make(&p, 'd', 'N', 'N', 768, 768, 768, 0, 43), 0);
    p.beta[0] = p.beta[1] = 0;
    double ab = 2.0 * 768 * 768 * 8;
    // The regions hold when the four devices run at one pace: a device that a loaded machine holds
    // back (seen under ASan at a load average of ~45: 38 30 38 38 tiles, peer copies 1.33 A + B)
    // leaves part of its region to the others, which then copy its panels. That is the machine's
    // and does not repeat call after call; a lost grid would show in every pair of calls: up to
    // three pairs, and both bounds must hold in one of them.
    int ok = 0;
    for (int pair = 0; pair < 3 && !ok; pair++) {
        size_t p2p[2];
        for (int g = 1; g >= 0; g--) {
            ts_tiles_opts o = tt_opts(64, 0);
            o.grid = g;
            ts_tiles *rt = NULL;
            assert_int_equal(ts_tiles_create(s, &o, &rt), 0);
            ts_tiles_stats st;
            run_ok(rt, &p, &st);
            print_stats(g ? "4 devices, grid 2 x 2" : "4 devices, along block row 0", &st);
            assert_true((double)st.bytes_h2d <= 1.05 * ab);
            p2p[g] = st.bytes_p2p;
            ts_tiles_destroy(rt);
        }
        ok = (double)p2p[1] <= 1.25 * ab && (double)p2p[0] >= 1.35 * ab;
        printf("pair %d: peer copies %.2f (grid) and %.2f (row 0) x (A + B)%s\n", pair, (double)p2p[1] / ab,
               (double)p2p[0] / ab, ok ? "" : ": outside <= 1.25 and >= 1.35");
    }
    assert_true(ok);
    tt_free(&p);
    ts_devset_close(s);
}

// The first wave (opts.grid 2, h2d_ahead 4): four paced devices, 2 x 2 C tiles of 64 with 12 k-steps,
// one tile per device. Each tile's panels of A and B are shared with one neighbour; the rotated
// k-loops and the limit on queued host loads make every device load its half of its panels from the
// host (12 of its 24 tiles) and take the rest from its neighbours, instead of the first worker to
// take the lock loading all 48 (and taking three of the four tiles with its depth). Byte counts.
// A and B come from the host once in every call (a miss is served by a peer that holds or loads the
// tile). The split needs the four workers to start within a few host loads (3.3 ms each) of each
// other: the limit holds a worker on its own loads only as long as they take. A machine at a load
// average of ~30-40 sometimes starts one worker 100 ms or more late (3 of 60 calls: splits like
// 16 13 4 15, or 25 23 0 0 with two tiles on each of the first two devices); pacing ten times
// slower only made it rarer (1 of 60). Such a late start is the machine's, and does not repeat
// call after call, while a scheduler that lost the split would lose it in every call: so up to
// four calls, on fresh devices, and the split must hold in one of them.
static void test_first_wave_loads(void **state) {
    (void)state;
    tt_prob p;
    assert_int_equal(tt_make(&p, 'd', 'N', 'N', 128, 128, 768, 0, 47), 0);
    p.beta[0] = p.beta[1] = 0;
    const size_t tile = 64 * 64 * 8;
    int split = 0;
    for (int call = 0; call < 4 && !split; call++) {
        ts_devset *s = tt_open(4, NULL, 0, 0.17, 0.01);
        assert_non_null(s);
        ts_tiles_opts o = tt_opts(64, 0);
        ts_tiles *rt = NULL;
        assert_int_equal(ts_tiles_create(s, &o, &rt), 0);
        ts_tiles_stats st;
        run_ok(rt, &p, &st);
        print_stats("4 devices, one tile each", &st);
        assert_int_equal(st.bytes_h2d, 48 * tile); // A and B once
        printf("call %d: tiles and host loads (tiles) per device:", call);
        split = 1;
        for (int d = 0; d < 4; d++) {
            printf(" %lld/%zu", (long long)st.tiles_dev[d], st.bytes_h2d_dev[d] / tile);
            // one tile each, and its half of 24 host loads, give or take a few taken in another order
            if (st.tiles_dev[d] != 1 || st.bytes_h2d_dev[d] < 8 * tile || st.bytes_h2d_dev[d] > 16 * tile) split = 0;
        }
        printf("%s\n", split ? "" : " (outside 1 tile and 8..16 loads each: a worker started late?)");
        ts_tiles_destroy(rt);
        ts_devset_close(s);
    }
    assert_true(split);
    tt_free(&p);
}

int main(void) {
    ts_cpu_blas_set_threads(1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_faster_device_more_tiles),
        cmocka_unit_test(test_cache_reuse_and_peers),
        cmocka_unit_test(test_out_of_core),
        cmocka_unit_test(test_pins),
        cmocka_unit_test(test_cpu_share_auto),
        cmocka_unit_test(test_cpu_auto_slow_cpu),
        cmocka_unit_test(test_grid_shape),
        cmocka_unit_test(test_l3_origins),
        cmocka_unit_test(test_grid_peer_bytes),
        cmocka_unit_test(test_first_wave_loads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
