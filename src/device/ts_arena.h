// ts_arena.h: sub-allocator over one pre-allocated region (device memory comes from here, never
// from cudaMalloc on hot paths). First fit over an address-ordered free list, coalescing on free.
#ifndef TS_ARENA_H
#define TS_ARENA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ts_arena ts_arena;

// Manages [base, base + bytes). `align` is a power of two (256 for device memory). `name` labels
// error messages ("device 0 (NVIDIA H200)"). Thread-safe.
int ts_arena_create(void *base, size_t bytes, size_t align, const char *name, ts_arena **out);
void ts_arena_destroy(ts_arena *a);
// TS_ERR_DEVMEM on exhaustion, message: "<name>: cannot allocate N bytes: F bytes free, largest free block L bytes".
int ts_arena_alloc(ts_arena *a, size_t bytes, void **ptr);
// TS_ERR_ARG if ptr was not returned by this arena (or was freed already).
int ts_arena_free(ts_arena *a, void *ptr);
void ts_arena_info(const ts_arena *a, size_t *used, size_t *free_bytes, size_t *largest_free,
                   int *free_blocks);
int ts_arena_contains(const ts_arena *a, const void *ptr);

#ifdef __cplusplus
}
#endif

#endif
