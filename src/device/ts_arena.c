// ts_arena.c: first-fit sub-allocator over one pre-allocated region, metadata kept on the host.
#include "device/ts_arena.h"

#include "core/ts_error.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// One block of the region, free or in use. All blocks form an address-ordered list that tiles
// the region exactly (so coalescing only looks at the physical neighbours); free blocks are also
// threaded on an address-ordered free list, and used blocks sit in a hash table keyed by offset.
// None of this lives inside the region: device memory is not host-addressable under CUDA.
typedef struct block {
    size_t off, size;
    int free;
    struct block *prev, *next;         // physical neighbours
    struct block *fprev, *fnext;       // free list (address order), when free
    struct block *hnext;               // hash chain, when used
} block;

struct ts_arena {
    pthread_mutex_t lock;
    char *base;                        // aligned start of the managed range
    size_t bytes;                      // managed bytes (a multiple of align)
    size_t align;
    char name[128];
    block *head;                       // physical list
    block *free_head;
    block **hash;
    size_t nbuckets, nused;
    size_t used_bytes;
};

static size_t hash_of(const ts_arena *a, size_t off) {
    size_t h = off / a->align;
    h ^= h >> 17;
    h *= (size_t)0x9E3779B97F4A7C15ull;
    return (h >> 7) & (a->nbuckets - 1);
}

static int hash_grow(ts_arena *a) {
    size_t nb = a->nbuckets * 2;
    block **h = calloc(nb, sizeof *h);
    if (!h) TS_RAISE(TS_ERR_NOMEM, "%s: cannot grow the allocation table", a->name);
    block **old = a->hash;
    size_t onb = a->nbuckets;
    a->hash = h;
    a->nbuckets = nb;
    for (size_t i = 0; i < onb; i++) {
        for (block *b = old[i], *n; b; b = n) {
            n = b->hnext;
            size_t k = hash_of(a, b->off);
            b->hnext = h[k];
            h[k] = b;
        }
    }
    free(old);
    return 0;
}

static void hash_put(ts_arena *a, block *b) {
    size_t k = hash_of(a, b->off);
    b->hnext = a->hash[k];
    a->hash[k] = b;
    a->nused++;
}

static block *hash_take(ts_arena *a, size_t off) {
    for (block **pp = &a->hash[hash_of(a, off)]; *pp; pp = &(*pp)->hnext) {
        if ((*pp)->off == off) {
            block *b = *pp;
            *pp = b->hnext;
            b->hnext = NULL;
            a->nused--;
            return b;
        }
    }
    return NULL;
}

static void free_unlink(ts_arena *a, block *b) {
    if (b->fprev) b->fprev->fnext = b->fnext;
    else a->free_head = b->fnext;
    if (b->fnext) b->fnext->fprev = b->fprev;
    b->fprev = b->fnext = NULL;
}

// Inserts b into the free list at its address position: the nearest free block before it in
// physical order is its predecessor, so walk the physical list backwards (neighbours were merged).
static void free_insert(ts_arena *a, block *b) {
    block *p = b->prev;
    while (p && !p->free) p = p->prev;
    b->fprev = p;
    b->fnext = p ? p->fnext : a->free_head;
    if (b->fnext) b->fnext->fprev = b;
    if (p) p->fnext = b;
    else a->free_head = b;
}

int ts_arena_create(void *base, size_t bytes, size_t align, const char *name, ts_arena **out) {
    if (!out) TS_RAISE(TS_ERR_ARG, "ts_arena_create: out is NULL");
    *out = NULL;
    if (!base) TS_RAISE(TS_ERR_ARG, "ts_arena_create: base is NULL");
    if (align == 0 || (align & (align - 1)))
        TS_RAISE(TS_ERR_ARG, "ts_arena_create: alignment %zu is not a power of two", align);
    uintptr_t b0 = (uintptr_t)base, b1 = (b0 + align - 1) & ~(uintptr_t)(align - 1);
    if (bytes < (b1 - b0) + align)
        TS_RAISE(TS_ERR_ARG, "ts_arena_create: region of %zu bytes is too small for alignment %zu", bytes,
                 align);
    ts_arena *a = calloc(1, sizeof *a);
    block *b = calloc(1, sizeof *b);
    block **h = calloc(64, sizeof *h);
    if (!a || !b || !h) {
        free(a), free(b), free(h);
        TS_RAISE(TS_ERR_NOMEM, "ts_arena_create: out of host memory");
    }
    pthread_mutex_init(&a->lock, NULL);
    a->base = (char *)b1;
    a->bytes = (bytes - (b1 - b0)) & ~(align - 1);
    a->align = align;
    snprintf(a->name, sizeof a->name, "%s", name ? name : "arena");
    a->hash = h;
    a->nbuckets = 64;
    b->off = 0;
    b->size = a->bytes;
    b->free = 1;
    a->head = a->free_head = b;
    *out = a;
    return 0;
}

void ts_arena_destroy(ts_arena *a) {
    if (!a) return;
    for (block *b = a->head, *n; b; b = n) {
        n = b->next;
        free(b);
    }
    free(a->hash);
    pthread_mutex_destroy(&a->lock);
    free(a);
}

static void info_locked(const ts_arena *a, size_t *free_bytes, size_t *largest, int *blocks) {
    size_t f = 0, l = 0;
    int n = 0;
    for (const block *b = a->free_head; b; b = b->fnext) {
        f += b->size;
        if (b->size > l) l = b->size;
        n++;
    }
    *free_bytes = f;
    *largest = l;
    *blocks = n;
}

int ts_arena_alloc(ts_arena *a, size_t bytes, void **ptr) {
    if (!a || !ptr) TS_RAISE(TS_ERR_ARG, "ts_arena_alloc: NULL arena or result pointer");
    *ptr = NULL;
    if (bytes == 0) TS_RAISE(TS_ERR_ARG, "%s: cannot allocate 0 bytes", a->name);
    if (bytes > SIZE_MAX - a->align)
        TS_RAISE(TS_ERR_DEVMEM, "%s: cannot allocate %zu bytes: larger than the arena (%zu bytes)", a->name,
                 bytes, a->bytes);
    size_t need = (bytes + a->align - 1) & ~(a->align - 1);
    pthread_mutex_lock(&a->lock);
    if (a->nused + 1 > a->nbuckets * 2 && hash_grow(a) < 0) {
        pthread_mutex_unlock(&a->lock);
        return TS_ERR_NOMEM;
    }
    block *b = a->free_head;
    while (b && b->size < need) b = b->fnext;
    if (!b) {
        size_t f, l;
        int n;
        info_locked(a, &f, &l, &n);
        pthread_mutex_unlock(&a->lock);
        TS_RAISE(TS_ERR_DEVMEM,
                 "%s: cannot allocate %zu bytes: %zu bytes free in %d blocks, largest free block %zu bytes",
                 a->name, bytes, f, n, l);
    }
    if (b->size > need) {
        // Split: the tail stays free, in b's place on the free list.
        block *t = calloc(1, sizeof *t);
        if (!t) {
            pthread_mutex_unlock(&a->lock);
            TS_RAISE(TS_ERR_NOMEM, "%s: out of host memory for arena metadata", a->name);
        }
        t->off = b->off + need;
        t->size = b->size - need;
        t->free = 1;
        t->prev = b;
        t->next = b->next;
        if (b->next) b->next->prev = t;
        b->next = t;
        t->fprev = b->fprev;
        t->fnext = b->fnext;
        if (t->fprev) t->fprev->fnext = t;
        else a->free_head = t;
        if (t->fnext) t->fnext->fprev = t;
        b->fprev = b->fnext = NULL;
        b->size = need;
    } else {
        free_unlink(a, b);
    }
    b->free = 0;
    hash_put(a, b);
    a->used_bytes += b->size;
    *ptr = a->base + b->off;
    pthread_mutex_unlock(&a->lock);
    return 0;
}

// Merges b's physical successor (free, not on the free list any more) into b.
static void absorb_next(block *b) {
    block *n = b->next;
    b->size += n->size;
    b->next = n->next;
    if (n->next) n->next->prev = b;
    free(n);
}

int ts_arena_free(ts_arena *a, void *ptr) {
    if (!a) TS_RAISE(TS_ERR_ARG, "ts_arena_free: NULL arena");
    if (!ptr) return 0;
    char *p = ptr;
    if (p < a->base || p >= a->base + a->bytes)
        TS_RAISE(TS_ERR_ARG, "%s: free of %p, which is not in this arena", a->name, ptr);
    pthread_mutex_lock(&a->lock);
    block *b = hash_take(a, (size_t)(p - a->base));
    if (!b) {
        pthread_mutex_unlock(&a->lock);
        TS_RAISE(TS_ERR_ARG, "%s: free of %p, which is not an allocated block (freed twice?)", a->name, ptr);
    }
    a->used_bytes -= b->size;
    b->free = 1;
    block *prev = b->prev, *next = b->next;
    if (next && next->free) {
        free_unlink(a, next);
        absorb_next(b);
    }
    if (prev && prev->free) {
        absorb_next(prev); // prev keeps its free-list position
    } else {
        free_insert(a, b);
    }
    pthread_mutex_unlock(&a->lock);
    return 0;
}

void ts_arena_info(const ts_arena *a, size_t *used, size_t *free_bytes, size_t *largest_free, int *free_blocks) {
    size_t f = 0, l = 0, u = 0;
    int n = 0;
    if (a) {
        ts_arena *m = (ts_arena *)a; // the lock is not part of the logical state
        pthread_mutex_lock(&m->lock);
        info_locked(a, &f, &l, &n);
        u = a->used_bytes;
        pthread_mutex_unlock(&m->lock);
    }
    if (used) *used = u;
    if (free_bytes) *free_bytes = f;
    if (largest_free) *largest_free = l;
    if (free_blocks) *free_blocks = n;
}

int ts_arena_contains(const ts_arena *a, const void *ptr) {
    if (!a || !ptr) return 0;
    const char *p = ptr;
    return p >= a->base && p < a->base + a->bytes;
}
