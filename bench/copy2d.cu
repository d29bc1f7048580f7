// copy2d: host-link rates of the copies the tile runtime makes, one at a time and H2D with D2H
// together: a contiguous 128 MiB block, a 4096 x 4096 double tile out of a column-major matrix of
// leading dimension 16384 and 32768 (cudaMemcpy2DAsync, 32 KiB per column), the same tile as
// 4 copies of 1024 columns, and tiles of 2048 x 8192 (16 KiB columns). Host memory from malloc,
// registered with cudaHostRegister as the runtime does, and from cudaMallocHost.
//   nvcc -O2 -o copy2d bench/copy2d.cu && ./copy2d
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_check.h"

typedef struct {
    size_t rows, cols, ld; // a rows x cols block of doubles at leading dimension ld (in elements)
    int pieces;            // split into this many column ranges
} shape;

// GB/s of `reps` copies of the shape in the given direction (with the opposite direction running
// the same copies on a second stream when both).
static double rate(cudaStream_t s1, cudaStream_t s2, double *host, double *dev, double *host2, double *dev2,
                   shape sh, int h2d, int both, int reps) {
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    size_t w = sh.rows * sizeof(double);
    size_t cp = sh.cols / sh.pieces;
    for (int pass = 0; pass < 2; pass++) { // pass 0 warms up
        CK(cudaEventRecord(a, s1));
        for (int r = 0; r < reps; r++) {
            for (int p = 0; p < sh.pieces; p++) {
                double *hp = host + (size_t)p * cp * sh.ld, *dp = dev + (size_t)p * cp * sh.rows;
                if (h2d) CK(cudaMemcpy2DAsync(dp, w, hp, sh.ld * sizeof(double), w, cp, cudaMemcpyHostToDevice, s1));
                else CK(cudaMemcpy2DAsync(hp, sh.ld * sizeof(double), dp, w, w, cp, cudaMemcpyDeviceToHost, s1));
                if (both) {
                    double *hq = host2 + (size_t)p * cp * sh.ld, *dq = dev2 + (size_t)p * cp * sh.rows;
                    if (h2d)
                        CK(cudaMemcpy2DAsync(hq, sh.ld * sizeof(double), dq, w, w, cp, cudaMemcpyDeviceToHost, s2));
                    else CK(cudaMemcpy2DAsync(dq, w, hq, sh.ld * sizeof(double), w, cp, cudaMemcpyHostToDevice, s2));
                }
            }
        }
        CK(cudaEventRecord(b, s1));
        CK(cudaDeviceSynchronize());
    }
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return (double)reps * (double)w * (double)sh.cols / (ms * 1e6);
}

int main(void) {
    const size_t n = 32768; // host matrices of n x n/2 doubles (4 GiB each)
    const size_t cols = n / 2, bytes = n * cols * sizeof(double);
    cudaStream_t s1, s2;
    CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    double *dev, *dev2;
    CK(cudaMalloc(&dev, (size_t)4096 * 8192 * sizeof(double)));
    CK(cudaMalloc(&dev2, (size_t)4096 * 8192 * sizeof(double)));
    for (int kind = 0; kind < 2; kind++) {
        double *host, *host2;
        if (kind == 0) {
            host = (double *)malloc(bytes), host2 = (double *)malloc(bytes);
            if (!host || !host2) return 1;
            memset(host, 1, bytes), memset(host2, 1, bytes);
            CK(cudaHostRegister(host, bytes, cudaHostRegisterDefault));
            CK(cudaHostRegister(host2, bytes, cudaHostRegisterDefault));
        } else {
            CK(cudaMallocHost(&host, bytes));
            CK(cudaMallocHost(&host2, bytes));
            memset(host, 1, bytes), memset(host2, 1, bytes);
        }
        const char *kname = kind == 0 ? "registered" : "cudaMallocHost";
        shape shapes[] = {{(size_t)4096 * 4096, 1, (size_t)4096 * 4096, 1}, // contiguous 128 MiB
                          {4096, 4096, 16384, 1}, {4096, 4096, 32768, 1}, {4096, 4096, 32768, 4},
                          {2048, 8192, 32768, 1}, {8192, 2048, 32768, 1}};
        const char *names[] = {"contiguous 128 MiB", "tile 4096, ld 16384", "tile 4096, ld 32768",
                               "tile 4096, ld 32768, 4 copies", "2048 x 8192, ld 32768", "8192 x 2048, ld 32768"};
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
            double h = rate(s1, s2, host, dev, host2, dev2, shapes[i], 1, 0, 8);
            double d = rate(s1, s2, host, dev, host2, dev2, shapes[i], 0, 0, 8);
            double hb = rate(s1, s2, host, dev, host2, dev2, shapes[i], 1, 1, 8);
            double db = rate(s1, s2, host, dev, host2, dev2, shapes[i], 0, 1, 8);
            printf("%-15s %-30s H2D %6.1f  D2H %6.1f  both: H2D %6.1f D2H %6.1f GB/s\n", kname, names[i], h, d, hb,
                   db);
        }
        if (kind == 0) {
            CK(cudaHostUnregister(host));
            CK(cudaHostUnregister(host2));
            free(host), free(host2);
        } else {
            CK(cudaFreeHost(host));
            CK(cudaFreeHost(host2));
        }
    }
    return 0;
}
