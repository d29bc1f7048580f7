// ts_lu_kernels.h: LU helper kernels on device streams (row gather/scatter for HPL's row swaps), CPU and CUDA versions.
#ifndef TS_LU_KERNELS_H
#define TS_LU_KERNELS_H

#include <stdint.h>

#include "device/ts_device.h"

#ifdef __cplusplus
extern "C" {
#endif

// buf (row-major n x nc: row i at buf + i*nc) <- rows idx[0..n) of the column-major A (lda).
// idx is in device memory. Asynchronous on st.
int ts_lu_pack_rows(ts_stream *st, const double *A, int64_t lda, const int64_t *idx, int64_t n,
                    int64_t nc, double *buf);
// Rows aidx[i] of A <- rows bidx[i] of the row-major buf (nc per row), i < n. Index arrays in
// device memory; the destination rows must be distinct. Asynchronous on st.
int ts_lu_unpack_rows(ts_stream *st, const double *buf, const int64_t *bidx, int64_t n, int64_t nc,
                      double *A, int64_t lda, const int64_t *aidx);

// ---- shared by the CPU and CUDA versions ----
typedef struct {
    int unpack;            // 0: pack, 1: unpack
    const double *src;
    double *dst;
    const int64_t *bidx;   // buffer rows (unpack; NULL = identity)
    const int64_t *aidx;   // matrix rows
    int64_t n, nc, lda;
} ts_lu_rows_args;

int ts_lu_rows_cpu(void *args);
int ts_lu_rows_cuda(void *native_stream, void *args); // kernels/cuda/ts_lu_kernels.cu

#ifdef __cplusplus
}
#endif

#endif
