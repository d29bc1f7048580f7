// test_comm.c: the communication layer on any number of ranks: the process grid, the same-on-ranks
// check, the v-collectives, and a device communicator's refusal where it cannot be made.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "comm/ts_comm.h"
#include "comm/ts_dcomm.h"
#include "core/ts_error.h"

static ts_comm world;

// The grid of P x Q ranks in either order: positions, sizes and the members of each row and column.
static void check_grid(int P, int Q, int col_major) {
    ts_comm grid, row, col;
    int myrow, mycol;
    assert_int_equal(ts_comm_grid(&world, P, Q, col_major, &grid, &row, &col, &myrow, &mycol), 0);
    if (world.rank >= P * Q) {
        assert_int_equal(grid.rank, -1);
        assert_int_equal(row.rank, -1);
        assert_int_equal(col.rank, -1);
        assert_int_equal(myrow, -1);
        assert_int_equal(mycol, -1);
    } else {
        const int g = world.rank; // grid ranks follow the world's order
        assert_int_equal(grid.rank, g);
        assert_int_equal(grid.size, P * Q);
        assert_int_equal(myrow, col_major ? g % P : g / Q);
        assert_int_equal(mycol, col_major ? g / P : g % Q);
        assert_int_equal(row.size, Q);
        assert_int_equal(col.size, P);
        assert_int_equal(row.rank, mycol);
        assert_int_equal(col.rank, myrow);
        // the row's members are the grid ranks of this process row: their sum, and the column's
        int v[2] = {mycol, myrow};
        assert_int_equal(ts_comm_allreduce_i(&row, &v[0], 1, TS_COMM_SUM), 0);
        assert_int_equal(ts_comm_allreduce_i(&col, &v[1], 1, TS_COMM_SUM), 0);
        assert_int_equal(v[0], Q * (Q - 1) / 2);
        assert_int_equal(v[1], P * (P - 1) / 2);
        double rows[2] = {myrow, myrow};
        assert_int_equal(ts_comm_allreduce_d(&row, &rows[0], 1, TS_COMM_MIN), 0);
        assert_int_equal(ts_comm_allreduce_d(&row, &rows[1], 1, TS_COMM_MAX), 0);
        assert_true(rows[0] == myrow && rows[1] == myrow); // one process row
    }
    ts_comm_free(&row);
    ts_comm_free(&col);
    ts_comm_free(&grid);
}

static void test_grid(void **state) {
    (void)state;
    const int n = world.size;
    const int P = n >= 4 ? 2 : 1, Q = n >= 2 ? 2 : 1; // 5 ranks: one outside the 2 x 2 grid
    check_grid(P, Q, 0);
    check_grid(P, Q, 1);
    check_grid(1, 1, 0);
    if (n >= 3) check_grid(3, 1, 0);
}

static void test_same_on_ranks(void **state) {
    (void)state;
    assert_int_equal(ts_comm_same_on_ranks(&world, 2.5, "x"), 0);
    ts_error_clear();
    int rc = ts_comm_same_on_ranks(&world, world.rank == world.size - 1 ? 1.0 : 0.0, "TESSERA_X");
    if (world.size == 1) {
        assert_int_equal(rc, 0);
    } else { // every rank gets the error, naming the setting
        assert_int_equal(rc, TS_ERR_ARG);
        assert_non_null(strstr(ts_error_string(), "TESSERA_X differs between the ranks"));
    }
    ts_error_clear();
}

// allgatherv, then gatherv to and scatterv from the last rank: rank q has q + 1 values q*100 + i.
static void test_vcollectives(void **state) {
    (void)state;
    const int n = world.size, me = world.rank, root = n - 1;
    int64_t *cnt = malloc(sizeof(int64_t) * 2 * (size_t)n), *dsp = cnt + n;
    int64_t tot = 0;
    for (int q = 0; q < n; q++) cnt[q] = q + 1, dsp[q] = tot, tot += q + 1;
    double *mine = malloc(sizeof(double) * (size_t)(me + 1)), *all = calloc((size_t)tot, sizeof(double));
    for (int i = 0; i <= me; i++) mine[i] = me * 100 + i;
    assert_int_equal(ts_comm_allgatherv(&world, mine, me + 1, all, cnt, dsp), 0);
    for (int q = 0; q < n; q++)
        for (int i = 0; i <= q; i++) assert_true(all[dsp[q] + i] == q * 100 + i);
    memset(all, 0, sizeof(double) * (size_t)tot);
    assert_int_equal(ts_comm_gatherv(&world, mine, me + 1, all, cnt, dsp, root), 0);
    if (me == root)
        for (int q = 0; q < n; q++)
            for (int i = 0; i <= q; i++) assert_true(all[dsp[q] + i] == q * 100 + i);
    if (me == root)
        for (int64_t i = 0; i < tot; i++) all[i] = -all[i];
    memset(mine, 0, sizeof(double) * (size_t)(me + 1));
    assert_int_equal(ts_comm_scatterv(&world, all, cnt, dsp, mine, me + 1, root), 0);
    for (int i = 0; i <= me; i++) assert_true(mine[i] == -(me * 100 + i));
    double s = me + 1.0, sum = 0.0;
    assert_int_equal(ts_comm_reduce_sum_d(&world, &s, &sum, 1, root), 0);
    if (me == root) assert_true(sum == n * (n + 1) / 2.0);
    free(cnt), free(mine), free(all);
}

// Without a CUDA GPU per rank no device communicator is made: the call succeeds, says why, and the
// callers keep their host paths.
static void test_dcomm_refused(void **state) {
    (void)state;
    ts_dcomm *d = (ts_dcomm *)&d;
    char why[128] = "";
    int failed = -1;
    assert_int_equal(ts_dcomm_join(&world, NULL, &d, why, sizeof why, &failed), 0);
    assert_null(d);
    assert_int_equal(failed, 0);
    if (world.size == 1) assert_string_equal(why, "one rank");
    else assert_true(!strcmp(why, "a rank has no CUDA GPU") || !strcmp(why, "the build has no NCCL"));
}

int main(void) {
    if (ts_comm_world(&world) < 0) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grid),
        cmocka_unit_test(test_same_on_ranks),
        cmocka_unit_test(test_vcollectives),
        cmocka_unit_test(test_dcomm_refused),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    ts_comm_free(&world);
    return rc;
}
