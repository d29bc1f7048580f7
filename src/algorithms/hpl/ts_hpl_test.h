// ts_hpl_test.h: test hooks of the HPL engine (a changed matrix element, a changed solution).
#ifndef TS_HPL_TEST_H
#define TS_HPL_TEST_H

#include <stdint.h>

#include "algorithms/hpl/ts_hpl.h"

// elem: called for every generated element (i, j) of [A|b] (also when the check regenerates it);
// returns the value to use. x: called on the replicated solution before the check. NULL = off.
void ts_hpl_ctx_set_hooks(ts_hpl_ctx *c, double (*elem)(int64_t i, int64_t j, double v, void *arg),
                          void *elem_arg, void (*x)(double *x, int64_t n, void *arg), void *x_arg);

// The local part of [A|b] of rank (myrow, mycol) of a P x Q grid, generated as the engine does,
// into host A (mp x nq, lda). For tests of the distribution.
void ts_hpl_matgen_local(ts_hpl_ctx *c, int64_t N, int NB, int P, int Q, int myrow, int mycol,
                         double *A, int64_t lda);
int64_t ts_hpl_local_rows(int64_t N, int NB, int myrow, int P);
int64_t ts_hpl_local_cols(int64_t N, int NB, int mycol, int Q); // of the N+1 columns

#endif
