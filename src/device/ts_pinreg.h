// ts_pinreg.h: refcounted registry of pinned host ranges. The backend's register/unregister calls
// (cudaHostRegister/Unregister) see page-aligned, disjoint segments, each registered exactly once;
// callers register arbitrary (also overlapping) ranges and get handles back.
#ifndef TS_PINREG_H
#define TS_PINREG_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ts_pinreg ts_pinreg;

typedef struct {
    int (*reg)(void *ctx, void *ptr, size_t bytes);   // 0 or negative ts_status
    int (*unreg)(void *ctx, void *ptr, size_t bytes);
    void *ctx;
    size_t page;                                      // granularity (4096 if 0)
} ts_pinreg_backend;

int ts_pinreg_create(const ts_pinreg_backend *b, ts_pinreg **out);
void ts_pinreg_destroy(ts_pinreg *r); // unregisters everything still registered
int ts_pinreg_add(ts_pinreg *r, void *ptr, size_t bytes, int *handle);
int ts_pinreg_remove(ts_pinreg *r, int handle);
// 1 if every byte of [ptr, ptr+bytes) is currently registered.
int ts_pinreg_covers(ts_pinreg *r, const void *ptr, size_t bytes);
void ts_pinreg_stats(ts_pinreg *r, size_t *registered_bytes, int *handles, long *backend_registers);

#ifdef __cplusplus
}
#endif

#endif
