// cuda_check.h: the standalone CUDA benchmarks' error checks (bench/*.cu): CK for a CUDA runtime
// call, CS for a library call whose status is 0 on success (cuBLAS, cuSOLVER); either prints the
// call and exits 1.
#ifndef BENCH_CUDA_CHECK_H
#define BENCH_CUDA_CHECK_H

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define CK(x)                                                                                          \
    do {                                                                                               \
        cudaError_t e_ = (x);                                                                          \
        if (e_ != cudaSuccess) {                                                                       \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));         \
            exit(1);                                                                                   \
        }                                                                                              \
    } while (0)
#define CS(x)                                                                                          \
    do {                                                                                               \
        int s_ = (int)(x);                                                                             \
        if (s_ != 0) {                                                                                 \
            fprintf(stderr, "%s:%d %s: status %d\n", __FILE__, __LINE__, #x, s_);                      \
            exit(1);                                                                                   \
        }                                                                                              \
    } while (0)

#endif
