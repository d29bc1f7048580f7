// ts_mxp_internal.h: what HPL-MxP's 1 x 1 engine (ts_mxp_engine.c) and its P x Q engine (ts_mxp_grid.c) share.
#ifndef TS_MXP_INTERNAL_H
#define TS_MXP_INTERNAL_H

#include <stdint.h>

#include "algorithms/hpl/ts_hpl_internal.h"
#include "algorithms/hpl_mxp/ts_mxp.h"

// Where a rank's matrix lives: host memory (dev NULL), or one device's memory and one of its streams.
typedef struct {
    ts_device *dev;
    ts_stream *st;
} ts_mxp_exec;

int ts_mxp_ex_alloc(ts_mxp_exec *e, size_t bytes, void **p);
void ts_mxp_ex_free(ts_mxp_exec *e, void *p);
// Host <-> execution memory (synchronous: the stream is waited for).
int ts_mxp_ex_put(ts_mxp_exec *e, void *x, const void *h, size_t bytes);
int ts_mxp_ex_get(ts_mxp_exec *e, void *h, const void *x, size_t bytes);

// 1 when the case runs on the device path (the options ask for it, or auto with a device).
int ts_mxp_exec_device(const ts_hpl_ctx *c);
// Bytes this rank may use for a run: (free device memory, its largest block) or host memory.
void ts_mxp_available(ts_hpl_ctx *c, int dev, double *avail, double *largest);
void ts_mxp_stamp(char out[32]);           // the start/end time's text
void ts_mxp_skip(ts_mxp_result *r, const char *why);

// The LU's step kb (0-based) queued on stream st (both engines' loops): without events (the host,
// or a grid rank that reports nothing: ev[0] NULL) block column kb is done and reported; with them
// the host stays one block column ahead of the device: kb's end is recorded in ev[kb % 2], kb-1's
// waited for, and the kb block columns before reported. here: this rank reports (o's progress).
int ts_mxp_step_done(const ts_mxp_opts *o, int here, int64_t kb, int64_t N, int64_t NB, double t0, ts_event **ev,
                     ts_stream *st);

// The refinement's loop (both engines): from x = 0, the first solve (correct with first = 1), then
// residual / correction until the scaled residual is below the threshold, it diverges or the cap
// (opts' max_iter, at most TS_MXP_MAX_ITER) is reached. residual fills r's norms, resid and
// checked; correct adds U^-1 L^-1 (b, first, or the last residual) to x. The stop, pass, history
// and iteration count into r. Every rank of a grid takes the same decisions (the residual is
// reduced over the grid before it returns).
typedef struct {
    void *arg;
    int (*residual)(void *arg, double *ratio);
    int (*correct)(void *arg, int first);
} ts_mxp_refiner;
int ts_mxp_refine(const ts_mxp_opts *o, double threshold, ts_mxp_result *r, const ts_mxp_refiner *f);

// HPL's check from the reduced norms: eps, the norms, the scaled residual (returned; NaN when
// ||r|| is) and checked into r.
double ts_mxp_check(ts_mxp_result *r, int64_t N, double norm_r, double norm_x, double norm_A, double norm_b);
// The end time and the LU (t0 to t1), refinement (t1 to t2) and credited seconds and rates into r.
void ts_mxp_times(ts_mxp_result *r, int64_t N, double t0, double t1, double t2);

// The P x Q engine (ts_mxp_grid.c): collective over the context's ranks (those outside the grid
// idle); this rank's status (ts_mxp_run agrees it and sends rank 0's result to every rank).
int ts_mxp_run_grid(ts_hpl_ctx *c, const ts_mxp_opts *o, const ts_mxp_case *mc, ts_mxp_result *r);

#endif
