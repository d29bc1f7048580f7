// test_pinreg.c: the pinned-range registry against a fake backend that checks every page is registered once.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/ts_error.h"
#include "device/ts_pinreg.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define PAGE 4096
#define NPAGES 256

// The fake backend: a page map over one buffer plus the list of live registrations, so that
// overlapping registrations and unregistrations that do not match a registration are caught.
typedef struct {
    pthread_mutex_t lock;
    char *buf;
    unsigned char page[NPAGES];
    struct {
        uintptr_t lo;
        size_t n;
    } segs[NPAGES];
    int nsegs;
    long regs, unregs;
    int violations;
    int fail_next;           // make the next register fail
} fake;

static int fake_reg(void *ctx, void *p, size_t n) {
    fake *f = ctx;
    pthread_mutex_lock(&f->lock);
    if (f->fail_next) {
        f->fail_next = 0;
        pthread_mutex_unlock(&f->lock);
        return ts_error_set(TS_ERR_CUDA, __FILE__, __LINE__, "fake register failure");
    }
    uintptr_t lo = (uintptr_t)p;
    if (lo % PAGE || n % PAGE || n == 0 || (char *)p < f->buf || (char *)p + n > f->buf + NPAGES * PAGE)
        f->violations++;
    else {
        for (size_t i = 0; i < n / PAGE; i++) {
            size_t pg = ((char *)p - f->buf) / PAGE + i;
            if (f->page[pg]) f->violations++;
            f->page[pg] = 1;
        }
        f->segs[f->nsegs].lo = lo;
        f->segs[f->nsegs].n = n;
        f->nsegs++;
    }
    f->regs++;
    pthread_mutex_unlock(&f->lock);
    return 0;
}

static int fake_unreg(void *ctx, void *p, size_t n) {
    fake *f = ctx;
    pthread_mutex_lock(&f->lock);
    int found = 0;
    for (int i = 0; i < f->nsegs; i++)
        if (f->segs[i].lo == (uintptr_t)p) {
            if (f->segs[i].n != n) f->violations++;
            f->segs[i] = f->segs[--f->nsegs];
            found = 1;
            break;
        }
    if (!found) f->violations++;
    else
        for (size_t i = 0; i < n / PAGE; i++) f->page[((char *)p - f->buf) / PAGE + i] = 0;
    f->unregs++;
    pthread_mutex_unlock(&f->lock);
    return 0;
}

static fake *fake_new(void) {
    fake *f = calloc(1, sizeof *f);
    pthread_mutex_init(&f->lock, NULL);
    f->buf = aligned_alloc(PAGE, NPAGES * PAGE);
    return f;
}

static void fake_free(fake *f) {
    free(f->buf);
    pthread_mutex_destroy(&f->lock);
    free(f);
}

static ts_pinreg *reg_new(fake *f) {
    ts_pinreg_backend b = {fake_reg, fake_unreg, f, PAGE};
    ts_pinreg *r;
    assert_int_equal(ts_pinreg_create(&b, &r), 0);
    return r;
}

// Live handles of a test, to compute the expected page map independently.
typedef struct {
    int h;
    size_t off, n;
} ref_h;

static void check_state(fake *f, ts_pinreg *r, const ref_h *hs, int nh) {
    unsigned char want[NPAGES] = {0};
    int live = 0;
    for (int i = 0; i < nh; i++) {
        if (!hs[i].h) continue;
        live++;
        for (size_t pg = hs[i].off / PAGE; pg < (hs[i].off + hs[i].n + PAGE - 1) / PAGE; pg++) want[pg] = 1;
    }
    size_t want_bytes = 0;
    for (int i = 0; i < NPAGES; i++) {
        assert_int_equal(f->page[i], want[i]);
        want_bytes += want[i] ? PAGE : 0;
    }
    size_t bytes;
    int handles;
    ts_pinreg_stats(r, &bytes, &handles, NULL);
    assert_int_equal(bytes, want_bytes);
    assert_int_equal(handles, live);
    assert_int_equal(f->violations, 0);
    // One registration per contiguous run: no two backend segments touch (CUDA refuses a copy
    // spanning two registrations).
    int runs = 0;
    for (int i = 0; i < NPAGES; i++) runs += want[i] && (i == 0 || !want[i - 1]);
    assert_int_equal(f->nsegs, runs);
}

static void test_overlapping(void **state) {
    fake *f = fake_new();
    ts_pinreg *r = reg_new(f);
    ref_h hs[3] = {{0, 100, 10 * PAGE}, {0, 5 * PAGE + 7, 10 * PAGE}, {0, 30 * PAGE, 3}};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(ts_pinreg_add(r, f->buf + hs[i].off, hs[i].n, &hs[i].h), 0);
        assert_true(hs[i].h > 0);
        check_state(f, r, hs, 3);
    }
    // The second range only added its new pages: 3 registrations in all.
    assert_int_equal(f->regs, 3);
    assert_true(ts_pinreg_covers(r, f->buf + 100, 15 * PAGE));
    assert_false(ts_pinreg_covers(r, f->buf + 100, 20 * PAGE));
    // Removing the first keeps the overlap with the second pinned.
    assert_int_equal(ts_pinreg_remove(r, hs[0].h), 0);
    hs[0].h = 0;
    check_state(f, r, hs, 3);
    assert_int_equal(ts_pinreg_remove(r, hs[1].h), 0);
    hs[1].h = 0;
    check_state(f, r, hs, 3);
    assert_int_equal(ts_pinreg_remove(r, hs[2].h), 0);
    hs[2].h = 0;
    check_state(f, r, hs, 3);
    assert_int_equal(f->nsegs, 0);
    ts_pinreg_destroy(r);
    fake_free(f);
}

// Two handles that share a page, or merely touch, make one registration covering both.
static void test_adjacent_ranges_merge(void **state) {
    fake *f = fake_new();
    ts_pinreg *r = reg_new(f);
    size_t half = 32 * PAGE + 1000;
    ref_h hs[4] = {{0, 0, half}, {0, half, 32 * PAGE}, {0, 100 * PAGE, PAGE}, {0, 101 * PAGE, PAGE}};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(ts_pinreg_add(r, f->buf + hs[i].off, hs[i].n, &hs[i].h), 0);
        check_state(f, r, hs, 4);
    }
    assert_int_equal(f->nsegs, 2);
    assert_true(ts_pinreg_covers(r, f->buf, half + 32 * PAGE));
    // Removing one side splits the run back.
    assert_int_equal(ts_pinreg_remove(r, hs[0].h), 0);
    hs[0].h = 0;
    check_state(f, r, hs, 4);
    assert_int_equal(ts_pinreg_remove(r, hs[3].h), 0);
    hs[3].h = 0;
    check_state(f, r, hs, 4);
    // A range bridging two runs joins them.
    int hb;
    assert_int_equal(ts_pinreg_add(r, f->buf + 50 * PAGE, 60 * PAGE, &hb), 0);
    assert_int_equal(f->nsegs, 1);
    ts_pinreg_destroy(r);
    assert_int_equal(f->nsegs, 0);
    assert_int_equal(f->violations, 0);
    fake_free(f);
}

static void test_nested_and_repeated(void **state) {
    fake *f = fake_new();
    ts_pinreg *r = reg_new(f);
    ref_h hs[5] = {{0, 0, 64 * PAGE}, {0, 10 * PAGE, PAGE}, {0, 10 * PAGE, PAGE}, {0, 3, 5}, {0, 0, 64 * PAGE}};
    for (int i = 0; i < 5; i++) assert_int_equal(ts_pinreg_add(r, f->buf + hs[i].off, hs[i].n, &hs[i].h), 0);
    check_state(f, r, hs, 5);
    assert_int_equal(f->regs, 1); // every later range was inside the first
    for (int i = 0; i < 5; i++) {
        for (int j = 0; j < i; j++) assert_int_not_equal(hs[i].h, hs[j].h);
    }
    // Remove the outer ones first: pages stay while nested users remain.
    int order[5] = {0, 4, 1, 3, 2};
    for (int k = 0; k < 5; k++) {
        assert_int_equal(ts_pinreg_remove(r, hs[order[k]].h), 0);
        hs[order[k]].h = 0;
        check_state(f, r, hs, 5);
    }
    assert_int_equal(f->nsegs, 0);
    long regs;
    ts_pinreg_stats(r, NULL, NULL, &regs);
    assert_int_equal(regs, f->regs);
    ts_pinreg_destroy(r);
    fake_free(f);
}

static void test_bad_handles(void **state) {
    fake *f = fake_new();
    ts_pinreg *r = reg_new(f);
    int h;
    assert_int_equal(ts_pinreg_add(r, f->buf, 0, &h), TS_ERR_ARG);
    assert_int_equal(ts_pinreg_add(r, NULL, 10, &h), TS_ERR_ARG);
    assert_int_equal(ts_pinreg_add(r, f->buf, 10, &h), 0);
    assert_int_equal(ts_pinreg_remove(r, h + 1000), TS_ERR_ARG);
    assert_int_equal(ts_pinreg_remove(r, 0), TS_ERR_ARG);
    assert_int_equal(ts_pinreg_remove(r, h), 0);
    assert_int_equal(ts_pinreg_remove(r, h), TS_ERR_ARG);
    // A failing backend leaves the registry as it was.
    int h1, h2;
    assert_int_equal(ts_pinreg_add(r, f->buf, PAGE, &h1), 0);
    f->fail_next = 1;
    assert_int_equal(ts_pinreg_add(r, f->buf + 2 * PAGE, PAGE, &h2), TS_ERR_CUDA);
    ref_h hs[1] = {{h1, 0, PAGE}};
    check_state(f, r, hs, 1);
    // A failed merge (the old run is unregistered first) registers the old run again.
    f->fail_next = 1;
    assert_int_equal(ts_pinreg_add(r, f->buf + PAGE, PAGE, &h2), TS_ERR_CUDA);
    check_state(f, r, hs, 1);
    assert_int_equal(ts_pinreg_remove(r, h1), 0);
    ts_pinreg_destroy(r);
    fake_free(f);
}

static void test_destroy_unregisters(void **state) {
    fake *f = fake_new();
    ts_pinreg *r = reg_new(f);
    int h;
    assert_int_equal(ts_pinreg_add(r, f->buf + 5, 3 * PAGE, &h), 0);
    assert_int_equal(ts_pinreg_add(r, f->buf + 20 * PAGE, 3 * PAGE, &h), 0);
    assert_int_equal(ts_pinreg_add(r, f->buf + PAGE, 30 * PAGE, &h), 0);
    assert_true(f->nsegs > 0);
    ts_pinreg_destroy(r);
    assert_int_equal(f->nsegs, 0);
    assert_int_equal(f->violations, 0);
    for (int i = 0; i < NPAGES; i++) assert_int_equal(f->page[i], 0);
    fake_free(f);
}

// Random adds and removes in random order; after each step the backend's pages equal the union.
static void test_random_sequences(void **state) {
    fake *f = fake_new();
    ts_pinreg *r = reg_new(f);
    enum { MAXH = 40 };
    ref_h hs[MAXH] = {{0}};
    unsigned seed = 99;
    for (int step = 0; step < 3000; step++) {
        seed = seed * 1103515245u + 12345u;
        int k = (int)((seed >> 9) % MAXH);
        if (hs[k].h) {
            assert_int_equal(ts_pinreg_remove(r, hs[k].h), 0);
            hs[k].h = 0;
        } else {
            size_t off = (seed >> 3) % (NPAGES * PAGE - 1);
            seed = seed * 1103515245u + 12345u;
            size_t maxn = NPAGES * PAGE - off;
            size_t n = 1 + (seed >> 5) % (maxn < 20 * PAGE ? maxn : 20 * PAGE);
            hs[k].off = off;
            hs[k].n = n;
            assert_int_equal(ts_pinreg_add(r, f->buf + off, n, &hs[k].h), 0);
        }
        check_state(f, r, hs, MAXH);
    }
    for (int k = 0; k < MAXH; k++)
        if (hs[k].h) {
            assert_int_equal(ts_pinreg_remove(r, hs[k].h), 0);
            hs[k].h = 0;
        }
    check_state(f, r, hs, MAXH);
    assert_int_equal(f->nsegs, 0);
    assert_int_equal(f->regs, f->unregs);
    ts_pinreg_destroy(r);
    fake_free(f);
}

typedef struct {
    ts_pinreg *r;
    fake *f;
    int id, bad;
} thr_arg;

static void *thr_main(void *arg) {
    thr_arg *t = arg;
    unsigned seed = 5u + (unsigned)t->id;
    for (int it = 0; it < 2000; it++) {
        seed = seed * 1103515245u + 12345u;
        size_t off = (seed >> 4) % (NPAGES * PAGE / 2);
        size_t n = 1 + (seed >> 12) % (8 * PAGE);
        int h;
        if (ts_pinreg_add(t->r, t->f->buf + off, n, &h) != 0) t->bad = 1;
        if (!ts_pinreg_covers(t->r, t->f->buf + off, n)) t->bad = 1;
        if (ts_pinreg_remove(t->r, h) != 0) t->bad = 1;
    }
    return NULL;
}

static void test_threads(void **state) {
    fake *f = fake_new();
    ts_pinreg *r = reg_new(f);
    pthread_t th[4];
    thr_arg a[4];
    for (int i = 0; i < 4; i++) {
        a[i] = (thr_arg){r, f, i, 0};
        pthread_create(&th[i], NULL, thr_main, &a[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(a[i].bad, 0);
    }
    size_t bytes;
    int handles;
    ts_pinreg_stats(r, &bytes, &handles, NULL);
    assert_int_equal(bytes, 0);
    assert_int_equal(handles, 0);
    assert_int_equal(f->nsegs, 0);
    assert_int_equal(f->violations, 0);
    ts_pinreg_destroy(r);
    fake_free(f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_overlapping),
        cmocka_unit_test(test_adjacent_ranges_merge),
        cmocka_unit_test(test_nested_and_repeated),
        cmocka_unit_test(test_bad_handles),
        cmocka_unit_test(test_destroy_unregisters),
        cmocka_unit_test(test_random_sequences),
        cmocka_unit_test(test_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
