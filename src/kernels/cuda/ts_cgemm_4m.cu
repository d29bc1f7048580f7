// ts_cgemm_4m.cu: CGEMM and ZGEMM on our own real kernels by the 4M scheme, or by 3M on request (engine tessera, 'c' and 'z').
//
// C = alpha op(A) op(B) + beta C with interleaved complex column-major operands, as MAGMA built
// its complex GEMM on the real blocking scheme:
//   1. op(A) and op(B) are split into real and imaginary planes in device workspace (a small
//      kernel; 'C' negates the imaginary plane, so the real products run with 'T');
//   2. four real GEMMs on our kernels (ts_cuda_sgemm_tessera for 'c', ts_cuda_dgemm_tessera for 'z'):
//        Cr = Ar Br - Ai Bi,   Ci = Ar Bi + Ai Br;
//   3. a combine kernel writes C = alpha (Cr + i Ci) + beta C (beta == 0 never reads C).
// Every real and imaginary part is a sum of 2k real products, so the error is that of a
// conventional complex GEMM: |err| <= gamma_(k+1) (|Ar||Br| + |Ai||Bi|) per part before alpha and
// beta are applied.
//
// 3M (TESSERA_CPLX_SCHEME=3m; Higham 1992, as MAGMA built its ZGEMM): the split also writes the
// sum planes As = Ar + Ai and Bs = Br + Bi, three real GEMMs give P1 = Ar Br, P2 = Ai Bi,
// P3 = As Bs, and the combine takes Re = P1 - P2, Im = P3 - P1 - P2: 3/4 of the flops and 3/2 of
// the workspace. The real part keeps 4M's bound; the imaginary part does not: per element
//   |err(Im)| <= gamma_(k+4) ((|Ar| + |Ai|)(|Br| + |Bi|) + |Ar||Br| + |Ai||Bi|) + O(u^2),
// at most gamma_(2k+8) |A|_1 |B|_1 (|x|_1 = |re| + |im|): twice 4M's bound in the worst case, and
// large against |Im| itself where Im cancels (ArBi = -AiBr) while P3, P1, P2 do not.
//
// Workspace comes from the stream device's arena; when op(A), op(B) and C do not fit in
// TESSERA_CPLX_WORKSPACE bytes (default TS_CPLX_WORKSPACE_DEFAULT, never more than the arena's
// largest free block), C is computed in row and column blocks (multiples of 128). The call waits
// for its stream before it returns the workspace to the arena.
#include <cuda_runtime.h>

#include <stdint.h>

#include "core/ts_env.h"
#include "core/ts_error.h"
#include "kernels/cuda/ts_cuda_kernels.h"
#include "kernels/ts_kernels.h"

namespace {

constexpr size_t TS_CPLX_WORKSPACE_DEFAULT = (size_t)4 << 30; // 4 GiB: z at n = 8192 in one block
constexpr int64_t CPLX_BLOCK_QUANTUM = 128;                   // row/column blocks: multiples of this
constexpr int64_t CPLX_LD_QUANTUM = 4;                        // plane leading dimensions (float4 loads)

// X(rows x cols, complex, ld) -> re, im (tight, leading dimension ldw); conj negates im.
// sum != NULL (3M): also re + im.
template <typename T>
__global__ void split_kernel(int64_t rows, int64_t cols, const T *X, int64_t ld, int conj, T *re, T *im, T *sum,
                             int64_t ldw) {
    for (int64_t j = blockIdx.y; j < cols; j += gridDim.y)
        for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < rows;
             i += (int64_t)gridDim.x * blockDim.x) {
            const T *x = X + 2 * (i + j * ld);
            const T r = x[0], q = conj ? -x[1] : x[1];
            re[i + j * ldw] = r;
            im[i + j * ldw] = q;
            if (sum) sum[i + j * ldw] = r + q;
        }
}

// C = alpha (Cr + i Ci) + beta C; Cr == NULL: the product is zero (k == 0 or alpha == 0).
// 3M (P2 != NULL): Cr holds P1, Ci P3, and the product is (P1 - P2) + i (P3 - P1 - P2).
template <typename T>
__global__ void combine_kernel(int64_t m, int64_t n, T ar, T ai, T br, T bi, const T *Cr, const T *Ci,
                               const T *P2, int64_t ldw, T *C, int64_t ldc) {
    const bool beta0 = br == T(0) && bi == T(0);
    for (int64_t j = blockIdx.y; j < n; j += gridDim.y)
        for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < m;
             i += (int64_t)gridDim.x * blockDim.x) {
            T re = T(0), im = T(0);
            if (Cr) {
                T pr = Cr[i + j * ldw], pi = Ci[i + j * ldw];
                if (P2) {
                    const T p2 = P2[i + j * ldw];
                    pi = pi - pr - p2;
                    pr = pr - p2;
                }
                re = ar * pr - ai * pi;
                im = ar * pi + ai * pr;
            }
            T *c = C + 2 * (i + j * ldc);
            if (!beta0) { // beta == 0: C is never read
                const T cr = c[0], ci = c[1];
                re += br * cr - bi * ci;
                im += br * ci + bi * cr;
            }
            c[0] = re;
            c[1] = im;
        }
}

dim3 grid_for(int64_t rows, int64_t cols) {
    const int64_t bx = (rows + 255) / 256;
    return dim3((unsigned)(bx < 64 ? bx : 64), (unsigned)(cols < 65535 ? cols : 65535));
}

int real_gemm(ts_stream *st, char ta, char tb, int64_t m, int64_t n, int64_t k, float alpha, const float *A,
              int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc) {
    return ts_cuda_sgemm_tessera(st, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
int real_gemm(ts_stream *st, char ta, char tb, int64_t m, int64_t n, int64_t k, double alpha, const double *A,
              int64_t lda, const double *B, int64_t ldb, double beta, double *C, int64_t ldc) {
    return ts_cuda_dgemm_tessera(st, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

int cuda_check(const char *who, const char *what) {
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) return 0;
    return ts_error_set(TS_ERR_CUDA, __FILE__, __LINE__, "%s: %s: %s", who, what, cudaGetErrorString(e));
}

int64_t round_up(int64_t x, int64_t q) { return (x + q - 1) / q * q; }

// Workspace bytes for an mb x nb block of C with inner dimension k: `planes` planes of each of op(A),
// op(B) and C (2 for 4M, 3 for 3M), 256-byte aligned.
size_t workspace_bytes(int64_t mb, int64_t nb, int64_t k, size_t es, int planes) {
    const int64_t lm = round_up(mb, CPLX_LD_QUANTUM), lk = round_up(k, CPLX_LD_QUANTUM);
    const int64_t ln = round_up(nb, CPLX_LD_QUANTUM);
    // op(A) block planes hold mb x k (ld lm) or k x mb (ld lk); take the larger, likewise for B.
    const int64_t a = lm * k > lk * mb ? lm * k : lk * mb, b = lk * nb > ln * k ? lk * nb : ln * k;
    return (size_t)planes * (((size_t)a + (size_t)b + (size_t)(lm * nb)) * es + 3 * 256);
}

// Row and column block sizes whose workspace fits in cap: halve the larger until it fits.
int choose_blocks(const char *who, int64_t m, int64_t n, int64_t k, size_t es, int planes, size_t cap, int64_t *mb,
                  int64_t *nb) {
    *mb = m, *nb = n;
    while (workspace_bytes(*mb, *nb, k, es, planes) > cap) {
        int64_t &big = *mb >= *nb ? *mb : *nb, &other = *mb >= *nb ? *nb : *mb;
        if (big > CPLX_BLOCK_QUANTUM) big = round_up((big + 1) / 2, CPLX_BLOCK_QUANTUM);
        else if (other > CPLX_BLOCK_QUANTUM) other = round_up((other + 1) / 2, CPLX_BLOCK_QUANTUM);
        else
            return ts_error_set(TS_ERR_DEVMEM, __FILE__, __LINE__,
                                "%s: k = %lld needs %zu bytes of workspace even for %lldx%lld blocks; %zu "
                                "available (TESSERA_CPLX_WORKSPACE and the arena's largest free block)",
                                who, (long long)k, workspace_bytes(*mb, *nb, k, es, planes), (long long)*mb,
                                (long long)*nb, cap);
    }
    return 0;
}

template <typename T>
struct Planes {
    T *re, *im, *sum; // sum: 3M only
    int64_t ld;
};

// Splits the part of op(X) that a block needs: rows [x0, x0 + xb) of op(A) (a = true) or
// columns of op(B), all k. Returns the planes and the real op that reads them.
template <typename T>
int split_op(cudaStream_t s, const char *who, bool a, char op, const T *X, int64_t ld, int64_t x0, int64_t xb,
             int64_t k, Planes<T> &P, char *rop) {
    const bool trans = !(op == 'N' || op == 'n'), conj = op == 'C' || op == 'c';
    // Stored orientation: rows x cols of X that hold the block.
    int64_t rows, cols;
    const T *src;
    if (a != trans) { // A 'N' or B 'T'/'C': the block is rows x0.. of X, all k columns
        rows = xb, cols = k, src = X + 2 * x0;
    } else { // A 'T'/'C' or B 'N': columns x0.. of X, k rows
        rows = k, cols = xb, src = X + 2 * x0 * ld;
    }
    P.ld = round_up(rows, CPLX_LD_QUANTUM);
    split_kernel<T><<<grid_for(rows, cols), 256, 0, s>>>(rows, cols, src, ld, conj ? 1 : 0, P.re, P.im, P.sum, P.ld);
    *rop = trans ? 'T' : 'N';
    return cuda_check(who, "split kernel launch");
}

template <typename T>
int gemm_4m(ts_stream *st, const char *who, char prec, char ta, char tb, int64_t m, int64_t n, int64_t k,
            const T *alpha, const T *A, int64_t lda, const T *B, int64_t ldb, const T *beta, T *C, int64_t ldc) {
    TS_CHECK(ts_gemm_check_raise(who, prec, ta, tb, m, n, k, lda, ldb, ldc));
    if (m == 0 || n == 0) return 0;
    ts_device *d = ts_stream_device(st);
    const ts_device_props *dp = ts_device_props_of(d);
    if (dp->backend != TS_BACKEND_CUDA) TS_RAISE(TS_ERR_UNSUPPORTED, "%s: the stream's device is not a CUDA device", who);
    cudaError_t e = cudaSetDevice(dp->native_id);
    if (e != cudaSuccess) TS_RAISE(TS_ERR_CUDA, "%s: cudaSetDevice: %s", who, cudaGetErrorString(e));
    cudaStream_t s = (cudaStream_t)ts_stream_native(st);

    if (k == 0 || (alpha[0] == T(0) && alpha[1] == T(0))) { // BLAS: A and B are not referenced
        combine_kernel<T><<<grid_for(m, n), 256, 0, s>>>(m, n, T(0), T(0), beta[0], beta[1], nullptr, nullptr,
                                                          nullptr, 0, C, ldc);
        return cuda_check(who, "scale kernel launch");
    }

    int three = 0;
    TS_CHECK(ts_cplx_scheme_3m(&three));
    const int planes = three ? 3 : 2;
    size_t cap = TS_CPLX_WORKSPACE_DEFAULT, used, free_bytes, largest;
    TS_CHECK(ts_env_size("TESSERA_CPLX_WORKSPACE", &cap));
    ts_dmem_info(d, &used, &free_bytes, &largest);
    if (largest < cap) cap = largest;
    int64_t mb, nb;
    TS_CHECK(choose_blocks(who, m, n, k, sizeof(T), planes, cap, &mb, &nb));
    const size_t bytes = workspace_bytes(mb, nb, k, sizeof(T), planes);
    void *ws = NULL;
    TS_CHECK(ts_dmalloc(d, bytes, &ws));

    // The planes in one block, each 256-byte aligned: A re/im(/sum), B re/im(/sum), C re/im(/P2).
    const int64_t lm = round_up(mb, CPLX_LD_QUANTUM), lk = round_up(k, CPLX_LD_QUANTUM);
    const int64_t ln = round_up(nb, CPLX_LD_QUANTUM);
    const size_t a_el = (size_t)(lm * k > lk * mb ? lm * k : lk * mb);
    const size_t b_el = (size_t)(lk * nb > ln * k ? lk * nb : ln * k), c_el = (size_t)(lm * nb);
    char *w = (char *)ws;
    auto take = [&w](size_t elems) {
        T *p = (T *)w;
        w += (elems * sizeof(T) + 255) / 256 * 256;
        return p;
    };
    Planes<T> pa, pb;
    pa.re = take(a_el), pa.im = take(a_el), pb.re = take(b_el), pb.im = take(b_el);
    pa.sum = three ? take(a_el) : nullptr, pb.sum = three ? take(b_el) : nullptr;
    T *cr = take(c_el), *ci = take(c_el), *p2 = three ? take(c_el) : nullptr;
    const int64_t ldw = lm;

    int rc = 0;
    char rta = 'N', rtb = 'N';
    for (int64_t i0 = 0; i0 < m && rc == 0; i0 += mb) {
        const int64_t mi = m - i0 < mb ? m - i0 : mb;
        rc = split_op<T>(s, who, true, ta, A, lda, i0, mi, k, pa, &rta);
        for (int64_t j0 = 0; j0 < n && rc == 0; j0 += nb) {
            const int64_t nj = n - j0 < nb ? n - j0 : nb;
            if (i0 == 0 || nb < n) rc = split_op<T>(s, who, false, tb, B, ldb, j0, nj, k, pb, &rtb);
            if (three) { // P1 = Ar Br (cr), P3 = As Bs (ci), P2 = Ai Bi
                if (rc == 0) rc = real_gemm(st, rta, rtb, mi, nj, k, T(1), pa.re, pa.ld, pb.re, pb.ld, T(0), cr, ldw);
                if (rc == 0) rc = real_gemm(st, rta, rtb, mi, nj, k, T(1), pa.sum, pa.ld, pb.sum, pb.ld, T(0), ci, ldw);
                if (rc == 0) rc = real_gemm(st, rta, rtb, mi, nj, k, T(1), pa.im, pa.ld, pb.im, pb.ld, T(0), p2, ldw);
            } else { // Cr = Ar Br - Ai Bi, Ci = Ar Bi + Ai Br (real GEMMs in stream order on the same stream)
                if (rc == 0) rc = real_gemm(st, rta, rtb, mi, nj, k, T(1), pa.re, pa.ld, pb.re, pb.ld, T(0), cr, ldw);
                if (rc == 0) rc = real_gemm(st, rta, rtb, mi, nj, k, T(-1), pa.im, pa.ld, pb.im, pb.ld, T(1), cr, ldw);
                if (rc == 0) rc = real_gemm(st, rta, rtb, mi, nj, k, T(1), pa.re, pa.ld, pb.im, pb.ld, T(0), ci, ldw);
                if (rc == 0) rc = real_gemm(st, rta, rtb, mi, nj, k, T(1), pa.im, pa.ld, pb.re, pb.ld, T(1), ci, ldw);
            }
            if (rc == 0) {
                combine_kernel<T><<<grid_for(mi, nj), 256, 0, s>>>(mi, nj, alpha[0], alpha[1], beta[0], beta[1], cr,
                                                                    ci, p2, ldw, C + 2 * (i0 + j0 * ldc), ldc);
                rc = cuda_check(who, "combine kernel launch");
            }
        }
    }
    // The workspace goes back to the arena only when the stream has finished with it.
    const int rs = ts_stream_sync(st);
    ts_dfree(d, ws);
    return rc ? rc : rs;
}

} // namespace

extern "C" int ts_cuda_cgemm_tessera(ts_stream *st, char ta, char tb, int64_t m, int64_t n, int64_t k,
                                     const float alpha[2], const float *A, int64_t lda, const float *B,
                                     int64_t ldb, const float beta[2], float *C, int64_t ldc) {
    return gemm_4m<float>(st, "ts_cuda_cgemm_tessera", 'c', ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

extern "C" int ts_cuda_zgemm_tessera(ts_stream *st, char ta, char tb, int64_t m, int64_t n, int64_t k,
                                     const double alpha[2], const double *A, int64_t lda, const double *B,
                                     int64_t ldb, const double beta[2], double *C, int64_t ldc) {
    return gemm_4m<double>(st, "ts_cuda_zgemm_tessera", 'z', ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
