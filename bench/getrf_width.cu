// getrf_width: what one HPL panel costs cuSOLVER on one GPU, by the panel's width, and whether a
// recursive split with cuSOLVER at the leaves (left half, its row interchanges on the right half,
// DTRSM, GEMM, right half, its interchanges on the left half; LAPACK dgetrf2's scheme) is cheaper
// than one getrf of the whole NB columns. The GPU runs nothing else: these are the panel's costs
// alone (HPL's depth 0). Each split result is checked against the plain getrf of the same panel
// (pivots equal, factors within 1e-10 relative). One JSON object per line on stdout.
//   nvcc -O3 -arch=sm_90 -o getrfw bench/getrf_width.cu -lcublas -lcusolver
//   ./getrfw [NB]      (NB default 1024; rows 116736, 65536, 32768, 8192)
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <vector>
#include <algorithm>

#include "cuda_check.h"

// HPL-like entries: uniform in [-0.5, 0.5) from a hash of the position
__global__ void fill_kernel(double *A, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i >= n) return;
    uint64_t x = (uint64_t)i * 0x9E3779B97F4A7C15ull + 12345;
    x ^= x >> 33; x *= 0xff51afd7ed558ccdull; x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ull; x ^= x >> 33;
    A[i] = (double)(x >> 11) * (1.0 / 9007199254740992.0) - 0.5;
}

__global__ void join_kernel(int *ipiv, int64_t k, int off, int *info, const int *info2) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < k) ipiv[i] += off;
    if (i == 0 && *info == 0 && *info2 != 0) *info = *info2 + off;
}

struct ctx {
    cusolverDnHandle_t h;
    cublasHandle_t b;
    double *work;
    int *infos; // one per recursion level
};

static void rec(ctx &c, int64_t m, int64_t n, double *A, int64_t lda, int *ipiv, int level, int leaf) {
    int *info = c.infos + level;
    if (n <= leaf) {
        CS(cusolverDnDgetrf(c.h, (int)m, (int)n, A, (int)lda, c.work, ipiv, info));
        return;
    }
    int64_t n1 = n / 2, n2 = n - n1;
    const double one = 1.0, mone = -1.0;
    rec(c, m, n1, A, lda, ipiv, level, leaf);
    CS(cusolverDnDlaswp(c.h, (int)n2, A + n1 * lda, (int)lda, 1, (int)n1, ipiv, 1));
    CS(cublasDtrsm(c.b, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_UNIT, (int)n1, (int)n2,
                   &one, A, (int)lda, A + n1 * lda, (int)lda));
    if (m > n1)
        CS(cublasDgemm(c.b, CUBLAS_OP_N, CUBLAS_OP_N, (int)(m - n1), (int)n2, (int)n1, &mone, A + n1, (int)lda,
                       A + n1 * lda, (int)lda, &one, A + n1 + n1 * lda, (int)lda));
    rec(c, m - n1, n2, A + n1 + n1 * lda, lda, ipiv + n1, level + 1, leaf);
    CS(cusolverDnDlaswp(c.h, (int)n1, A + n1, (int)lda, 1, (int)n2, ipiv + n1, 1));
    join_kernel<<<(unsigned)((n2 + 255) / 256), 256>>>(ipiv + n1, n2, (int)n1, info, c.infos + level + 1);
}

// The median over reps of the milliseconds work() takes on the default stream; prep() runs before
// each repetition, untimed.
template <class Prep, class Work>
static double median_ms(cudaEvent_t e0, cudaEvent_t e1, int reps, Prep prep, Work work) {
    std::vector<float> t;
    for (int r = 0; r < reps; r++) {
        prep();
        CK(cudaEventRecord(e0));
        work();
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

// One panel factored from the pristine copy A0 (recursion with leaves of `leaf` columns).
static double time_it(ctx &c, cudaEvent_t e0, cudaEvent_t e1, double *A, const double *A0, int64_t m, int64_t nb,
                      int *ipiv, int leaf, int reps) {
    return median_ms(
        e0, e1, reps,
        [&] {
            CK(cudaMemcpy(A, A0, (size_t)m * nb * sizeof(double), cudaMemcpyDeviceToDevice));
            CK(cudaMemset(c.infos, 0, 64 * sizeof(int)));
        },
        [&] { rec(c, m, nb, A, m, ipiv, 0, leaf); });
}

int main(int argc, char **argv) {
    int64_t nb = argc > 1 ? atoll(argv[1]) : 1024;
    const int64_t rows[] = {116736, 65536, 32768, 8192};
    int64_t mmax = rows[0];
    ctx c;
    CS(cusolverDnCreate(&c.h));
    CS(cublasCreate(&c.b));
    int lwork = 0;
    CS(cusolverDnDgetrf_bufferSize(c.h, (int)mmax, (int)nb, NULL, (int)mmax, &lwork));
    double *A0, *A, *R;
    int *ipiv, *ipiv_ref;
    size_t bytes = (size_t)mmax * nb * sizeof(double);
    CK(cudaMalloc(&A0, bytes));
    CK(cudaMalloc(&A, bytes));
    CK(cudaMalloc(&R, bytes));
    CK(cudaMalloc(&c.work, (size_t)(lwork + 1) * sizeof(double)));
    CK(cudaMalloc(&c.infos, 64 * sizeof(int)));
    CK(cudaMalloc(&ipiv, nb * sizeof(int)));
    CK(cudaMalloc(&ipiv_ref, nb * sizeof(int)));
    fill_kernel<<<(unsigned)((mmax * nb + 255) / 256), 256>>>(A0, mmax * nb);
    CK(cudaDeviceSynchronize());
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (int64_t m : rows) {
        // the reference: one getrf of the whole panel, kept for the check
        double t_ref = time_it(c, e0, e1, A, A0, m, nb, ipiv_ref, (int)nb, 5);
        CK(cudaMemcpy(R, A, (size_t)m * nb * sizeof(double), cudaMemcpyDeviceToDevice));
        std::vector<int> pr(nb), pv(nb);
        CK(cudaMemcpy(pr.data(), ipiv_ref, nb * sizeof(int), cudaMemcpyDeviceToHost));
        std::vector<double> hr((size_t)m * nb), ha((size_t)m * nb);
        CK(cudaMemcpy(hr.data(), R, (size_t)m * nb * sizeof(double), cudaMemcpyDeviceToHost));
        double amax = 0;
        for (double v : hr) amax = fmax(amax, fabs(v));
        printf("{\"m\": %lld, \"nb\": %lld, \"leaf\": %lld, \"ms\": %.4f, \"us_per_col\": %.3f, \"ratio\": 1.0}\n",
               (long long)m, (long long)nb, (long long)nb, t_ref, 1e3 * t_ref / nb);
        for (int leaf : {512, 256, 128, 64}) {
            if (leaf >= nb) continue;
            double t = time_it(c, e0, e1, A, A0, m, nb, ipiv, leaf, 5);
            CK(cudaMemcpy(pv.data(), ipiv, nb * sizeof(int), cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(ha.data(), A, (size_t)m * nb * sizeof(double), cudaMemcpyDeviceToHost));
            int pdiff = 0;
            for (int64_t i = 0; i < nb; i++) pdiff += pr[i] != pv[i];
            double d = 0;
            for (size_t i = 0; i < ha.size(); i++) d = fmax(d, fabs(ha[i] - hr[i]));
            printf("{\"m\": %lld, \"nb\": %lld, \"leaf\": %d, \"ms\": %.4f, \"us_per_col\": %.3f, \"ratio\": %.3f, "
                   "\"pivots_differ\": %d, \"max_diff_rel\": %.2e, \"ok\": %s}\n",
                   (long long)m, (long long)nb, leaf, t, 1e3 * t / nb, t / t_ref, pdiff, d / amax,
                   pdiff == 0 && d <= 1e-10 * amax ? "true" : "false");
        }
        // one piece of the top split level: the left half's interchanges on the right half
        int64_t n1 = nb / 2;
        double tl = median_ms(
            e0, e1, 5, [] {},
            [&] { CS(cusolverDnDlaswp(c.h, (int)(nb - n1), A + n1 * m, (int)m, 1, (int)n1, ipiv_ref, 1)); });
        printf("{\"m\": %lld, \"piece\": \"dlaswp %lld pivots on %lld columns\", \"ms\": %.4f}\n", (long long)m,
               (long long)n1, (long long)(nb - n1), tl);
    }
    return 0;
}
