// ts_tile_ops.cu: the diagonal-tile preparation kernel (symmetrize, hermitize, triangle cut) and the
// triangle write-back to mapped host memory on CUDA devices.
#include <cuComplex.h>
#include <cuda_runtime.h>

#include "core/ts_error.h"
#include "kernels/ts_tile_ops.h"

#define TS_PREP_BLOCK 16

template <typename T> __device__ inline T conj_of(T x) { return x; }
template <> __device__ inline cuFloatComplex conj_of(cuFloatComplex x) { return cuConjf(x); }
template <> __device__ inline cuDoubleComplex conj_of(cuDoubleComplex x) { return cuConj(x); }
template <typename T> __device__ inline T real_of(T x) { return x; }
template <> __device__ inline cuFloatComplex real_of(cuFloatComplex x) { return make_cuFloatComplex(x.x, 0.0f); }
template <> __device__ inline cuDoubleComplex real_of(cuDoubleComplex x) { return make_cuDoubleComplex(x.x, 0.0); }
template <typename T> __device__ inline T zero_of() { return T(0); }
template <> __device__ inline cuFloatComplex zero_of() { return make_cuFloatComplex(0.0f, 0.0f); }
template <> __device__ inline cuDoubleComplex zero_of() { return make_cuDoubleComplex(0.0, 0.0); }
template <typename T> __device__ inline T one_of() { return T(1); }
template <> __device__ inline cuFloatComplex one_of() { return make_cuFloatComplex(1.0f, 0.0f); }
template <> __device__ inline cuDoubleComplex one_of() { return make_cuDoubleComplex(1.0, 0.0); }

// One thread per element (i, j); an element of the stored triangle is only read, so no thread
// reads what another writes.
template <typename T>
__global__ void tile_prep_kernel(T *a, int64_t n, int64_t ld, int kind, int upper) {
    int64_t i = (int64_t)blockIdx.x * TS_PREP_BLOCK + threadIdx.x;
    int64_t j = (int64_t)blockIdx.y * TS_PREP_BLOCK + threadIdx.y;
    if (i >= n || j >= n) return;
    T *x = a + i + j * ld;
    if (i == j) {
        if (kind == TS_TILE_HERM || kind == TS_TILE_DIAG_REAL) *x = real_of(*x);
        else if (kind == TS_TILE_TRI_UNIT) *x = one_of<T>();
        return;
    }
    if (upper ? i < j : i > j) return; // stored triangle
    switch (kind) {
    case TS_TILE_SYM: *x = a[j + i * ld]; break;
    case TS_TILE_HERM: *x = conj_of(a[j + i * ld]); break;
    case TS_TILE_TRI:
    case TS_TILE_TRI_UNIT: *x = zero_of<T>(); break;
    default: break;
    }
}

// In-place transpose of a square tile: the block (bx, by) below the diagonal swaps with its mirror
// (by, bx) through shared memory, so that both sides are read and written along columns; a diagonal
// block transposes itself. Blocks above the diagonal return at once.
#define TS_TRANS_BLOCK 32
template <typename T>
__global__ void tile_trans_kernel(T *a, int64_t n, int64_t ld) {
    __shared__ T lo[TS_TRANS_BLOCK][TS_TRANS_BLOCK + 1], hi[TS_TRANS_BLOCK][TS_TRANS_BLOCK + 1];
    int64_t bi = blockIdx.x, bj = blockIdx.y;
    if (bi < bj) return;
    int64_t i0 = bi * TS_TRANS_BLOCK, j0 = bj * TS_TRANS_BLOCK;
    int tx = threadIdx.x;
    for (int ty = threadIdx.y; ty < TS_TRANS_BLOCK; ty += blockDim.y) {
        int64_t i = i0 + tx, j = j0 + ty; // element (i, j) of block (bi, bj), column j
        if (i < n && j < n) lo[ty][tx] = a[i + j * ld];
        int64_t i2 = j0 + tx, j2 = i0 + ty; // element of the mirror block (bj, bi)
        if (i2 < n && j2 < n) hi[ty][tx] = a[i2 + j2 * ld];
    }
    __syncthreads();
    for (int ty = threadIdx.y; ty < TS_TRANS_BLOCK; ty += blockDim.y) {
        int64_t i = i0 + tx, j = j0 + ty; // (i, j) := old (j, i), which is hi[tx][ty]'s element
        if (i < n && j < n) a[i + j * ld] = hi[tx][ty];
        int64_t i2 = j0 + tx, j2 = i0 + ty;
        if (bi != bj && i2 < n && j2 < n) a[i2 + j2 * ld] = lo[tx][ty];
    }
}

// The launchers' precision switch: L<T>::go(args, stream) for prec's element type, then the launch's
// error (what: the kernel's name for the message).
template <template <typename> class L, typename A>
static int launch_typed(const char *who, const char *what, char prec, int64_t n, const A *a, cudaStream_t s) {
    switch (prec) {
    case 's': L<float>::go(a, s); break;
    case 'd': L<double>::go(a, s); break;
    case 'c': L<cuFloatComplex>::go(a, s); break;
    case 'z': L<cuDoubleComplex>::go(a, s); break;
    default: TS_RAISE(TS_ERR_ARG, "%s: precision '%c'", who, prec);
    }
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) TS_RAISE(TS_ERR_CUDA, "%s (%c, n=%lld): %s", what, prec, (long long)n, cudaGetErrorString(e));
    return 0;
}

template <typename T> struct prep_launch {
    static void go(const ts_tile_prep_args *a, cudaStream_t s) {
        if (a->kind == TS_TILE_TRANS) {
            unsigned nb = (unsigned)((a->n + TS_TRANS_BLOCK - 1) / TS_TRANS_BLOCK);
            tile_trans_kernel<T><<<dim3(nb, nb), dim3(TS_TRANS_BLOCK, 8), 0, s>>>((T *)a->p, a->n, a->ld);
            return;
        }
        unsigned nb = (unsigned)((a->n + TS_PREP_BLOCK - 1) / TS_PREP_BLOCK);
        tile_prep_kernel<T><<<dim3(nb, nb), dim3(TS_PREP_BLOCK, TS_PREP_BLOCK), 0, s>>>((T *)a->p, a->n, a->ld, a->kind,
                                                                                       a->uplo == 'U');
    }
};

extern "C" int ts_cuda_tile_prep(void *native_stream, void *args) {
    const ts_tile_prep_args *a = (const ts_tile_prep_args *)args;
    return launch_typed<prep_launch>("ts_cuda_tile_prep", "tile_prep_kernel", a->prec, a->n, a,
                                     (cudaStream_t)native_stream);
}

// One block per column: its threads copy the column's rows of the triangle (consecutive threads,
// consecutive elements: the writes to host memory go out as full lines).
template <typename T>
__global__ void tile_put_kernel(const T *src, int64_t lds, T *dst, int64_t ldd, int64_t n, int upper) {
    int64_t q = blockIdx.x;
    int64_t r0 = upper ? 0 : q, r1 = upper ? q + 1 : n;
    for (int64_t i = r0 + threadIdx.x; i < r1; i += blockDim.x) dst[i + q * ldd] = src[i + q * lds];
}

template <typename T> struct put_launch {
    static void go(const ts_tile_put_args *a, cudaStream_t s) {
        tile_put_kernel<T><<<(unsigned)a->n, 256, 0, s>>>((const T *)a->src, a->lds, (T *)a->dst, a->ldd, a->n,
                                                          a->uplo == 'U');
    }
};

extern "C" int ts_cuda_tile_put(void *native_stream, void *args) {
    const ts_tile_put_args *a = (const ts_tile_put_args *)args;
    return launch_typed<put_launch>("ts_cuda_tile_put", "tile_put_kernel", a->prec, a->n, a, (cudaStream_t)native_stream);
}

extern "C" int ts_cuda_host_mapped(void *p, void **dev) {
    struct cudaPointerAttributes at;
    if (cudaPointerGetAttributes(&at, p) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    if (at.type != cudaMemoryTypeHost || !at.devicePointer) return 0;
    *dev = at.devicePointer;
    return 1;
}

// dst := src^T out of place: a 32 x 32 block read along the columns of src into shared memory and
// written along the columns of dst.
template <typename T>
__global__ void tile_trans_copy_kernel(const T *src, int64_t lds, T *dst, int64_t ldd, int64_t n) {
    __shared__ T b[TS_TRANS_BLOCK][TS_TRANS_BLOCK + 1];
    int64_t i0 = (int64_t)blockIdx.x * TS_TRANS_BLOCK, j0 = (int64_t)blockIdx.y * TS_TRANS_BLOCK;
    int tx = threadIdx.x;
    for (int ty = threadIdx.y; ty < TS_TRANS_BLOCK; ty += blockDim.y)
        if (i0 + tx < n && j0 + ty < n) b[ty][tx] = src[(i0 + tx) + (j0 + ty) * lds];
    __syncthreads();
    for (int ty = threadIdx.y; ty < TS_TRANS_BLOCK; ty += blockDim.y) // dst(j0 + tx, i0 + ty) = src(i0 + ty, j0 + tx)
        if (j0 + tx < n && i0 + ty < n) dst[(j0 + tx) + (i0 + ty) * ldd] = b[tx][ty];
}

template <typename T> struct trans_launch {
    static void go(const ts_tile_put_args *a, cudaStream_t s) {
        unsigned nb = (unsigned)((a->n + TS_TRANS_BLOCK - 1) / TS_TRANS_BLOCK);
        tile_trans_copy_kernel<T><<<dim3(nb, nb), dim3(TS_TRANS_BLOCK, 8), 0, s>>>((const T *)a->src, a->lds,
                                                                                   (T *)a->dst, a->ldd, a->n);
    }
};

extern "C" int ts_cuda_tile_trans(void *native_stream, void *args) {
    const ts_tile_put_args *a = (const ts_tile_put_args *)args;
    return launch_typed<trans_launch>("ts_cuda_tile_trans", "tile_trans_copy_kernel", a->prec, a->n, a,
                                      (cudaStream_t)native_stream);
}
