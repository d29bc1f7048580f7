// test_arena.c: the device arena: alignment, first fit, coalescing, exhaustion messages, misuse, stress.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/ts_error.h"
#include "device/ts_arena.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_alignment(void **state) {
    char *buf = malloc(1 << 20);
    ts_arena *a;
    // An unaligned base: the arena aligns its start itself.
    assert_int_equal(ts_arena_create(buf + 3, (1 << 20) - 3, 256, "t", &a), 0);
    size_t sizes[] = {1, 7, 255, 256, 257, 300, 4096, 10000};
    void *p[8];
    for (int i = 0; i < 8; i++) {
        assert_int_equal(ts_arena_alloc(a, sizes[i], &p[i]), 0);
        assert_int_equal((uintptr_t)p[i] % 256, 0);
        assert_true((char *)p[i] >= buf + 3 && (char *)p[i] + sizes[i] <= buf + (1 << 20));
        assert_true(ts_arena_contains(a, p[i]));
        memset(p[i], 0x5a, sizes[i]);
    }
    size_t used;
    ts_arena_info(a, &used, NULL, NULL, NULL);
    assert_int_equal(used, 256 + 256 + 256 + 256 + 512 + 512 + 4096 + 10240);
    for (int i = 0; i < 8; i++) assert_int_equal(ts_arena_free(a, p[i]), 0);
    ts_arena_destroy(a);
    free(buf);
}

static void test_bad_create(void **state) {
    char buf[4096];
    ts_arena *a;
    assert_int_equal(ts_arena_create(buf, sizeof buf, 3, "t", &a), TS_ERR_ARG);
    assert_int_equal(ts_arena_create(NULL, sizeof buf, 256, "t", &a), TS_ERR_ARG);
    assert_int_equal(ts_arena_create(buf, 100, 256, "t", &a), TS_ERR_ARG);
}

static void test_first_fit_and_coalescing(void **state) {
    size_t total = 64 * 1024;
    char *buf = aligned_alloc(256, total);
    ts_arena *a;
    assert_int_equal(ts_arena_create(buf, total, 256, "t", &a), 0);
    void *p[16];
    for (int i = 0; i < 16; i++) assert_int_equal(ts_arena_alloc(a, 4096, &p[i]), 0);
    // Blocks come out in address order (first fit from an empty arena).
    for (int i = 1; i < 16; i++) assert_ptr_equal(p[i], (char *)p[i - 1] + 4096);
    size_t used, fr, largest;
    int blocks;
    ts_arena_info(a, &used, &fr, &largest, &blocks);
    assert_int_equal(used, total);
    assert_int_equal(fr, 0);
    assert_int_equal(blocks, 0);
    // Fragment: free every other block.
    for (int i = 0; i < 16; i += 2) assert_int_equal(ts_arena_free(a, p[i]), 0);
    ts_arena_info(a, &used, &fr, &largest, &blocks);
    assert_int_equal(blocks, 8);
    assert_int_equal(fr, total / 2);
    assert_int_equal(largest, 4096);
    // First fit: a small request lands in the lowest hole.
    void *q;
    assert_int_equal(ts_arena_alloc(a, 100, &q), 0);
    assert_ptr_equal(q, p[0]);
    assert_int_equal(ts_arena_free(a, q), 0);
    // Free the rest in a scrambled order: neighbours merge back into one block.
    int order[8] = {7, 1, 5, 3, 0, 6, 2, 4};
    for (int k = 0; k < 8; k++) assert_int_equal(ts_arena_free(a, p[2 * order[k] + 1]), 0);
    ts_arena_info(a, &used, &fr, &largest, &blocks);
    assert_int_equal(used, 0);
    assert_int_equal(blocks, 1);
    assert_int_equal(largest, total);
    assert_int_equal(ts_arena_alloc(a, total, &q), 0);
    assert_ptr_equal(q, buf);
    assert_int_equal(ts_arena_free(a, q), 0);
    ts_arena_destroy(a);
    free(buf);
}

static void test_exhaustion_message(void **state) {
    size_t total = 64 * 1024;
    char *buf = aligned_alloc(256, total);
    ts_arena *a;
    assert_int_equal(ts_arena_create(buf, total, 256, "device 7 (test)", &a), 0);
    void *p[4];
    for (int i = 0; i < 4; i++) assert_int_equal(ts_arena_alloc(a, 16384, &p[i]), 0);
    assert_int_equal(ts_arena_free(a, p[0]), 0);
    assert_int_equal(ts_arena_free(a, p[2]), 0);
    void *q = (void *)1;
    ts_error_clear();
    assert_int_equal(ts_arena_alloc(a, 20000, &q), TS_ERR_DEVMEM);
    assert_null(q);
    const char *m = ts_error_last()->message;
    assert_int_equal(ts_error_last()->code, TS_ERR_DEVMEM);
    assert_non_null(strstr(m, "device 7 (test): cannot allocate 20000 bytes"));
    assert_non_null(strstr(m, "32768 bytes free in 2 blocks"));
    assert_non_null(strstr(m, "largest free block 16384 bytes"));
    // Huge requests fail cleanly too.
    assert_int_equal(ts_arena_alloc(a, SIZE_MAX, &q), TS_ERR_DEVMEM);
    assert_int_equal(ts_arena_alloc(a, SIZE_MAX - 100, &q), TS_ERR_DEVMEM);
    assert_int_equal(ts_arena_alloc(a, 0, &q), TS_ERR_ARG);
    assert_int_equal(ts_arena_free(a, p[1]), 0);
    assert_int_equal(ts_arena_free(a, p[3]), 0);
    ts_arena_destroy(a);
    free(buf);
}

static void test_misuse(void **state) {
    size_t total = 64 * 1024;
    char *buf = aligned_alloc(256, total);
    ts_arena *a;
    assert_int_equal(ts_arena_create(buf, total, 256, "t", &a), 0);
    void *p;
    assert_int_equal(ts_arena_alloc(a, 1000, &p), 0);
    assert_int_equal(ts_arena_free(a, (char *)p + 256), TS_ERR_ARG); // inside a block
    int outside;
    assert_int_equal(ts_arena_free(a, &outside), TS_ERR_ARG);        // not in the arena
    assert_int_equal(ts_arena_free(a, NULL), 0);
    assert_int_equal(ts_arena_free(a, p), 0);
    ts_error_clear();
    assert_int_equal(ts_arena_free(a, p), TS_ERR_ARG);               // double free
    assert_non_null(strstr(ts_error_last()->message, "not an allocated block"));
    size_t used;
    int blocks;
    ts_arena_info(a, &used, NULL, NULL, &blocks);
    assert_int_equal(used, 0);
    assert_int_equal(blocks, 1);
    ts_arena_destroy(a);
    free(buf);
}

typedef struct {
    char *p;
    size_t n;
} live_t;

static int cmp_live(const void *x, const void *y) {
    const live_t *a = x, *b = y;
    return a->p < b->p ? -1 : a->p > b->p;
}

// Random alloc/free against a shadow model: no overlap, alignment, exact accounting.
static void test_stress_shadow(void **state) {
    size_t total = 4 << 20, align = 512;
    char *buf = aligned_alloc(4096, total);
    ts_arena *a;
    assert_int_equal(ts_arena_create(buf, total, align, "t", &a), 0);
    enum { MAXLIVE = 400 };
    live_t live[MAXLIVE];
    int nlive = 0;
    size_t shadow_used = 0;
    unsigned seed = 12345;
    for (int step = 0; step < 20000; step++) {
        seed = seed * 1103515245u + 12345u;
        unsigned r = seed >> 8;
        if (nlive < MAXLIVE && (r % 3 != 0 || nlive == 0)) {
            size_t n = 1 + (r / 3) % 40000;
            void *p;
            int rc = ts_arena_alloc(a, n, &p);
            size_t rounded = (n + align - 1) / align * align;
            if (rc == TS_ERR_DEVMEM) {
                size_t fr, largest;
                ts_arena_info(a, NULL, &fr, &largest, NULL);
                assert_true(largest < rounded);
                continue;
            }
            assert_int_equal(rc, 0);
            assert_int_equal((uintptr_t)p % align, 0);
            live[nlive++] = (live_t){p, rounded};
            shadow_used += rounded;
        } else {
            int k = (int)((r / 3) % (unsigned)nlive);
            assert_int_equal(ts_arena_free(a, live[k].p), 0);
            shadow_used -= live[k].n;
            live[k] = live[--nlive];
        }
        if (step % 97 == 0) {
            qsort(live, (size_t)nlive, sizeof *live, cmp_live);
            for (int i = 0; i < nlive; i++) {
                assert_true(live[i].p >= buf && live[i].p + live[i].n <= buf + total);
                if (i) assert_true(live[i - 1].p + live[i - 1].n <= live[i].p);
            }
            size_t used, fr;
            ts_arena_info(a, &used, &fr, NULL, NULL);
            assert_int_equal(used, shadow_used);
            assert_int_equal(used + fr, total);
        }
    }
    for (int i = 0; i < nlive; i++) assert_int_equal(ts_arena_free(a, live[i].p), 0);
    size_t used, largest;
    int blocks;
    ts_arena_info(a, &used, NULL, &largest, &blocks);
    assert_int_equal(used, 0);
    assert_int_equal(blocks, 1);
    assert_int_equal(largest, total);
    ts_arena_destroy(a);
    free(buf);
}

typedef struct {
    ts_arena *a;
    int id;
    int bad;
} thr_arg;

static void *thr_main(void *arg) {
    thr_arg *t = arg;
    unsigned seed = 777u + (unsigned)t->id;
    void *mine[32] = {0};
    size_t sz[32] = {0};
    for (int it = 0; it < 4000; it++) {
        seed = seed * 1103515245u + 12345u;
        int k = (int)((seed >> 10) % 32);
        if (mine[k]) {
            // Our pattern must still be intact: nobody else got overlapping memory.
            unsigned char *p = mine[k];
            for (size_t i = 0; i < sz[k]; i += 61)
                if (p[i] != (unsigned char)(t->id * 31 + k)) t->bad = 1;
            if (ts_arena_free(t->a, mine[k]) != 0) t->bad = 1;
            mine[k] = NULL;
        } else {
            size_t n = 1 + (seed >> 4) % 5000;
            if (ts_arena_alloc(t->a, n, &mine[k]) == 0) {
                sz[k] = n;
                memset(mine[k], t->id * 31 + k, n);
            } else {
                mine[k] = NULL;
            }
        }
    }
    for (int k = 0; k < 32; k++)
        if (mine[k] && ts_arena_free(t->a, mine[k]) != 0) t->bad = 1;
    return NULL;
}

static void test_threads(void **state) {
    size_t total = 2 << 20;
    char *buf = aligned_alloc(4096, total);
    ts_arena *a;
    assert_int_equal(ts_arena_create(buf, total, 256, "t", &a), 0);
    pthread_t th[6];
    thr_arg args[6];
    for (int i = 0; i < 6; i++) {
        args[i] = (thr_arg){a, i, 0};
        pthread_create(&th[i], NULL, thr_main, &args[i]);
    }
    for (int i = 0; i < 6; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(args[i].bad, 0);
    }
    size_t used;
    int blocks;
    ts_arena_info(a, &used, NULL, NULL, &blocks);
    assert_int_equal(used, 0);
    assert_int_equal(blocks, 1);
    ts_arena_destroy(a);
    free(buf);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alignment),
        cmocka_unit_test(test_bad_create),
        cmocka_unit_test(test_first_fit_and_coalescing),
        cmocka_unit_test(test_exhaustion_message),
        cmocka_unit_test(test_misuse),
        cmocka_unit_test(test_stress_shadow),
        cmocka_unit_test(test_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
