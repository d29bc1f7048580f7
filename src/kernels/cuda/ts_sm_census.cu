// ts_sm_census.cu: which multiprocessors run a stream's blocks (a check that a stream made by
// ts_stream_create_sms is confined to its SMs, and a diagnostic for `tessera info`).
#include <cuda_runtime.h>

#include "core/ts_error.h"
#include "kernels/cuda/ts_cuda_kernels.h"

// Each block marks the SM it runs on, then spins about `spin` clocks so that the launch's blocks
// are spread over every SM the stream may use instead of being served by the first few.
__global__ void sm_census_kernel(unsigned *seen, long long spin) {
    unsigned smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    if (threadIdx.x == 0) atomicOr(&seen[smid / 32], 1u << (smid % 32));
    long long t0 = clock64();
    while (clock64() - t0 < spin) {
    }
}

extern "C" int ts_cuda_sm_census(ts_stream *st, int blocks, int *distinct) {
    enum { WORDS = 32 }; // up to 1024 SMs
    if (!st || !distinct || blocks < 1) TS_RAISE(TS_ERR_ARG, "ts_cuda_sm_census: bad arguments");
    const ts_device_props *dp = ts_device_props_of(ts_stream_device(st));
    if (dp->backend != TS_BACKEND_CUDA) TS_RAISE(TS_ERR_UNSUPPORTED, "ts_cuda_sm_census: not a CUDA device");
    cudaStream_t s = (cudaStream_t)ts_stream_native(st);
    unsigned *d = NULL, h[WORDS];
    cudaError_t e = cudaSetDevice(dp->native_id);
    if (e == cudaSuccess) e = cudaMalloc((void **)&d, sizeof h);
    if (e == cudaSuccess) e = cudaMemsetAsync(d, 0, sizeof h, s);
    if (e == cudaSuccess) {
        sm_census_kernel<<<blocks, 32, 0, s>>>(d, 200000); // ~0.1 ms per block at 2 GHz
        e = cudaGetLastError();
    }
    if (e == cudaSuccess) e = cudaMemcpyAsync(h, d, sizeof h, cudaMemcpyDeviceToHost, s);
    if (e == cudaSuccess) e = cudaStreamSynchronize(s);
    if (d) {
        cudaError_t f = cudaFree(d);
        if (e == cudaSuccess) e = f;
    }
    if (e != cudaSuccess)
        TS_RAISE(TS_ERR_CUDA, "ts_cuda_sm_census on device %d: %s", dp->ordinal, cudaGetErrorString(e));
    int n = 0;
    for (int w = 0; w < WORDS; w++) n += __builtin_popcount(h[w]);
    *distinct = n;
    return 0;
}
