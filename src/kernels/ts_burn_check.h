// ts_burn_check.h: the ABFT check of `tessera burn`: row/column checksums of an augmented GEMM result, on a device stream.
#ifndef TS_BURN_CHECK_H
#define TS_BURN_CHECK_H

#include <stdint.h>

#include "device/ts_device.h"

#ifdef __cplusplus
extern "C" {
#endif

// The result C (column-major, ldc) of the augmented product [A; e^T A; w^T A] [B, B e, B w] holds
// the m x n data product in rows 0..m-1, columns 0..n-1; row m the checksums e^T A B, row m+1 the
// weighted checksums w^T A B; column n the checksums A B e, column n+1 the weighted A B w
// (w_i = i + 1). The check computes, per data row i and column j:
//   rd[i]  = sum_{j<n} C_ij           - C_{i,n}      rwd[i] = sum_{j<n} (j+1) C_ij - C_{i,n+1}
//   cd[j]  = sum_{i<m} C_ij           - C_{m,j}      cwd[j] = sum_{i<m} (i+1) C_ij - C_{m+1,j}
// and holds each against its bound (rb, rwb, cb, cwb; see ts_burn_bounds in algorithms/burn):
// a line is bad when !(|d| <= bound) (so NaN and Inf are bad). A single wrong element (i, j) off
// by delta shows as rd[i] = cd[j] = delta, and rwd[i] / rd[i] = j + 1, cwd[j] / cd[j] = i + 1.
typedef struct {
    unsigned long long bad_rows, bad_cols; // lines whose plain or weighted check failed
    double max_ratio;                      // max |d| / bound over all four checks (+Inf for NaN)
    double reserved;
} ts_burn_check_result;

typedef struct {
    const double *C;
    int64_t ldc, m, n;                      // data part m x n; C has m + 2 rows, n + 2 columns
    const double *rb, *rwb, *cb, *cwb;      // bounds (device memory)
    double *rd, *rwd, *cd, *cwd;            // differences out (device memory)
    ts_burn_check_result *res;              // out (device memory)
} ts_burn_check_args;

// Enqueues the check on the stream (CUDA kernel on CUDA devices, the CPU twin on simulated ones).
int ts_burn_check(ts_stream *st, const ts_burn_check_args *a);
// The CPU twin on host-addressable memory (also usable directly on host buffers, as tests do).
int ts_burn_check_cpu(void *args);
// CUDA version (kernels/cuda/ts_burn_check.cu), only in CUDA builds.
int ts_burn_check_cuda(void *native_stream, void *args);

#ifdef __cplusplus
}
#endif

#endif
