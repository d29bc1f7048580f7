// ts_pinreg.c: refcounted registry of pinned host ranges over disjoint, page-aligned backend segments.
#include "device/ts_pinreg.h"

#include "core/ts_error.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// Invariant: the registered segments are exactly the maximal contiguous runs of the union of the
// page-rounded ranges of the live handles (disjoint, never touching). One run is one registration
// because CUDA refuses an async copy whose host range spans two registrations. A registration
// cannot be extended or partly released (cudaHostRegister/Unregister work on whole ones), so a
// range that touches existing segments replaces them by one registration of the merged run, and a
// segment left partly covered by a removal is replaced by registrations of its covered pieces.
typedef struct {
    uintptr_t lo, hi;
} range;

typedef struct {
    int id;              // 0 = free slot
    range r;             // page-rounded
} handle_slot;

struct ts_pinreg {
    pthread_mutex_t lock;
    ts_pinreg_backend be;
    range *segs;         // sorted by lo
    int nsegs, capsegs;
    handle_slot *hs;
    int nhs, caphs;
    int next_id;
    int live;
    long registers;
};

static int be_reg(ts_pinreg *r, range g) {
    int rc = r->be.reg ? r->be.reg(r->be.ctx, (void *)g.lo, g.hi - g.lo) : 0;
    if (rc == 0) r->registers++;
    return rc;
}

static int be_unreg(ts_pinreg *r, range g) {
    return r->be.unreg ? r->be.unreg(r->be.ctx, (void *)g.lo, g.hi - g.lo) : 0;
}

static int seg_insert(ts_pinreg *r, range g) {
    if (r->nsegs == r->capsegs) {
        int cap = r->capsegs ? 2 * r->capsegs : 16;
        range *s = realloc(r->segs, (size_t)cap * sizeof *s);
        if (!s) TS_RAISE(TS_ERR_NOMEM, "pin registry: out of host memory");
        r->segs = s;
        r->capsegs = cap;
    }
    int i = r->nsegs;
    while (i > 0 && r->segs[i - 1].lo > g.lo) {
        r->segs[i] = r->segs[i - 1];
        i--;
    }
    r->segs[i] = g;
    r->nsegs++;
    return 0;
}

static void seg_erase(ts_pinreg *r, int i) {
    memmove(&r->segs[i], &r->segs[i + 1], (size_t)(r->nsegs - i - 1) * sizeof *r->segs);
    r->nsegs--;
}

static int cmp_range(const void *a, const void *b) {
    const range *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

// The union of the live handles' ranges clipped to w, as sorted disjoint pieces (caller frees).
static int covered_pieces(ts_pinreg *r, range w, range **out, int *n) {
    range *v = malloc((size_t)(r->nhs + 1) * sizeof *v);
    if (!v) TS_RAISE(TS_ERR_NOMEM, "pin registry: out of host memory");
    int k = 0;
    for (int i = 0; i < r->nhs; i++) {
        if (!r->hs[i].id) continue;
        range h = r->hs[i].r;
        uintptr_t lo = h.lo > w.lo ? h.lo : w.lo, hi = h.hi < w.hi ? h.hi : w.hi;
        if (lo < hi) v[k++] = (range){lo, hi};
    }
    qsort(v, (size_t)k, sizeof *v, cmp_range);
    int m = 0;
    for (int i = 0; i < k; i++) {
        if (m > 0 && v[i].lo <= v[m - 1].hi) {
            if (v[i].hi > v[m - 1].hi) v[m - 1].hi = v[i].hi;
        } else {
            v[m++] = v[i];
        }
    }
    *out = v;
    *n = m;
    return 0;
}

int ts_pinreg_create(const ts_pinreg_backend *b, ts_pinreg **out) {
    if (!out) TS_RAISE(TS_ERR_ARG, "ts_pinreg_create: out is NULL");
    *out = NULL;
    ts_pinreg *r = calloc(1, sizeof *r);
    if (!r) TS_RAISE(TS_ERR_NOMEM, "ts_pinreg_create: out of host memory");
    if (b) r->be = *b;
    if (r->be.page == 0) r->be.page = 4096;
    if (r->be.page & (r->be.page - 1)) {
        free(r);
        TS_RAISE(TS_ERR_ARG, "ts_pinreg_create: page size %zu is not a power of two", b->page);
    }
    pthread_mutex_init(&r->lock, NULL);
    r->next_id = 1;
    *out = r;
    return 0;
}

void ts_pinreg_destroy(ts_pinreg *r) {
    if (!r) return;
    for (int i = 0; i < r->nsegs; i++) be_unreg(r, r->segs[i]);
    free(r->segs);
    free(r->hs);
    pthread_mutex_destroy(&r->lock);
    free(r);
}

static int handle_new(ts_pinreg *r, range g) {
    int slot = -1;
    for (int i = 0; i < r->nhs; i++)
        if (!r->hs[i].id) {
            slot = i;
            break;
        }
    if (slot < 0) {
        if (r->nhs == r->caphs) {
            int cap = r->caphs ? 2 * r->caphs : 16;
            handle_slot *h = realloc(r->hs, (size_t)cap * sizeof *h);
            if (!h) TS_RAISE(TS_ERR_NOMEM, "pin registry: out of host memory");
            r->hs = h;
            r->caphs = cap;
        }
        slot = r->nhs++;
    }
    // Ids are never reused (until they wrap), so a stale handle cannot release someone else's range.
    int id = r->next_id++;
    if (r->next_id == INT32_MAX) r->next_id = 1;
    r->hs[slot].id = id;
    r->hs[slot].r = g;
    r->live++;
    return id;
}

// Replaces segments first..last (none when first < 0) by one registration of `run` (lock held).
// On failure the old segments are registered again, so the registry is as before.
static int merge_run(ts_pinreg *r, int first, int last, range run) {
    int n = first < 0 ? 0 : last - first + 1;
    range *old = malloc((size_t)(n + 1) * sizeof *old);
    if (!old) TS_RAISE(TS_ERR_NOMEM, "pin registry: out of host memory");
    if (n) memcpy(old, &r->segs[first], (size_t)n * sizeof *old);
    int rc = 0;
    for (int k = 0; k < n; k++) {
        int u = be_unreg(r, old[k]);
        if (u < 0 && rc == 0) rc = u;
    }
    if (n) {
        memmove(&r->segs[first], &r->segs[last + 1], (size_t)(r->nsegs - last - 1) * sizeof *r->segs);
        r->nsegs -= n;
    }
    if (rc == 0) {
        rc = be_reg(r, run);
        if (rc == 0) {
            rc = seg_insert(r, run);
            if (rc < 0) be_unreg(r, run);
        }
    }
    if (rc < 0) {
        ts_error_info keep = *ts_error_last();
        for (int k = 0; k < n; k++)
            if (be_reg(r, old[k]) == 0) seg_insert(r, old[k]);
        ts_error_set(keep.code, keep.file, keep.line, "%s", keep.message);
    }
    free(old);
    return rc;
}

int ts_pinreg_add(ts_pinreg *r, void *ptr, size_t bytes, int *handle) {
    if (!r || !ptr || !handle) TS_RAISE(TS_ERR_ARG, "ts_pinreg_add: NULL registry, pointer or handle");
    if (bytes == 0) TS_RAISE(TS_ERR_ARG, "ts_pinreg_add: 0 bytes at %p", ptr);
    uintptr_t p = (uintptr_t)ptr, pg = r->be.page;
    if (bytes > UINTPTR_MAX - p - pg) TS_RAISE(TS_ERR_ARG, "ts_pinreg_add: range at %p of %zu bytes wraps", ptr, bytes);
    range g = {p & ~(pg - 1), (p + bytes + pg - 1) & ~(pg - 1)};
    pthread_mutex_lock(&r->lock);
    // The run g joins: every segment overlapping or touching it.
    int first = -1, last = -1;
    range run = g;
    for (int i = 0; i < r->nsegs; i++) {
        range sg = r->segs[i];
        if (sg.hi < g.lo || sg.lo > g.hi) continue;
        if (first < 0) first = i;
        last = i;
        if (sg.lo < run.lo) run.lo = sg.lo;
        if (sg.hi > run.hi) run.hi = sg.hi;
    }
    int rc = 0;
    if (!(first >= 0 && first == last && r->segs[first].lo == run.lo && r->segs[first].hi == run.hi)) {
        rc = merge_run(r, first, last, run);
    }
    if (rc == 0) {
        rc = handle_new(r, g);
        if (rc > 0) {
            *handle = rc;
            rc = 0;
        }
    }
    pthread_mutex_unlock(&r->lock);
    return rc;
}

int ts_pinreg_remove(ts_pinreg *r, int handle) {
    if (!r) TS_RAISE(TS_ERR_ARG, "ts_pinreg_remove: NULL registry");
    pthread_mutex_lock(&r->lock);
    int slot = -1;
    for (int i = 0; handle > 0 && i < r->nhs; i++)
        if (r->hs[i].id == handle) {
            slot = i;
            break;
        }
    if (slot < 0) {
        pthread_mutex_unlock(&r->lock);
        TS_RAISE(TS_ERR_ARG, "ts_pinreg_remove: %d is not a live pin handle (released twice?)", handle);
    }
    range g = r->hs[slot].r;
    r->hs[slot].id = 0;
    r->live--;
    int rc = 0;
    for (int i = 0; i < r->nsegs;) {
        range s = r->segs[i];
        if (s.hi <= g.lo || s.lo >= g.hi) {
            i++;
            continue;
        }
        range *pc = NULL;
        int npc = 0;
        rc = covered_pieces(r, s, &pc, &npc);
        if (rc < 0) break;
        if (npc == 1 && pc[0].lo == s.lo && pc[0].hi == s.hi) {
            free(pc);
            i++;
            continue;
        }
        int urc = be_unreg(r, s);
        if (urc < 0 && rc == 0) rc = urc;
        seg_erase(r, i);
        for (int k = 0; k < npc; k++) {
            int rrc = be_reg(r, pc[k]);
            if (rrc == 0) rrc = seg_insert(r, pc[k]);
            if (rrc < 0 && rc == 0) rc = rrc;
            if (rrc == 0) i++; // pieces sort where s was; skip over them
        }
        free(pc);
    }
    pthread_mutex_unlock(&r->lock);
    return rc;
}

int ts_pinreg_covers(ts_pinreg *r, const void *ptr, size_t bytes) {
    if (!r || !ptr || bytes == 0) return 0;
    uintptr_t lo = (uintptr_t)ptr, hi = lo + bytes;
    pthread_mutex_lock(&r->lock);
    uintptr_t cur = lo;
    for (int i = 0; i < r->nsegs && cur < hi; i++) {
        if (r->segs[i].hi <= cur) continue;
        if (r->segs[i].lo > cur) break;
        cur = r->segs[i].hi;
    }
    pthread_mutex_unlock(&r->lock);
    return cur >= hi;
}

void ts_pinreg_stats(ts_pinreg *r, size_t *registered_bytes, int *handles, long *backend_registers) {
    size_t b = 0;
    int h = 0;
    long n = 0;
    if (r) {
        pthread_mutex_lock(&r->lock);
        for (int i = 0; i < r->nsegs; i++) b += r->segs[i].hi - r->segs[i].lo;
        h = r->live;
        n = r->registers;
        pthread_mutex_unlock(&r->lock);
    }
    if (registered_bytes) *registered_bytes = b;
    if (handles) *handles = h;
    if (backend_registers) *backend_registers = n;
}
