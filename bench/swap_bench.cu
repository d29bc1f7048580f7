// swap_bench: what HPL's per-iteration work beside the trailing GEMM costs on one GPU, piece by piece,
// on HPL's own shapes: one panel's row interchanges (the library's fused kernel, launched with other
// column groups and grids, the split pack/unpack path) against two floors (a gather of the same rows
// into a buffer, a streaming copy of the same bytes); U = inv(L11) U0 written into A's rows (ldc = lda)
// or into a buffer (ldc = NB) and by DTRSM; and the trailing GEMM of the tail iterations at lda = N
// against a packed matrix. Every swap variant is checked once against the plan on every column before
// it is timed. One JSON object per line on stdout.
//   nvcc -O3 -arch=sm_90 -I src -o swapb bench/swap_bench.cu src/core/ts_error.c -lcublas -lcusolver
//   ./swapb [N [NB]]        (N = rows = lda, default 87040; NB default 1024)
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cuda/ts_lu_kernels.cu"
#include "cuda_check.h"

// The matrix holds a value that names its place: f(r, c) = r + 1e-6 * (c % 1000003).
__host__ __device__ static inline double fval(int64_t r, int64_t c) { return (double)r + 1e-6 * (double)(c % 1000003); }

__global__ void fill_kernel(double *A, int64_t lda, int64_t rows, int64_t nc) {
    int64_t n = rows * nc;
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < n; e += (int64_t)gridDim.x * blockDim.x) {
        int64_t c = e / rows, r = e - c * rows;
        A[r + c * lda] = fval(r, c);
    }
}

// Mismatches of U (rows ub: U row i holds old row S[ub[i]]) and of the changed rows al (old row S[ab[t]]).
__global__ void check_kernel(const double *A, int64_t lda, const double *U, int64_t ldu, const int64_t *S,
                             const int64_t *ub, int jb, const int64_t *al, const int64_t *ab, int nown, int64_t nc,
                             int64_t c0, unsigned long long *bad) {
    unsigned long long nb = 0;
    for (int64_t c = blockIdx.x; c < nc; c += gridDim.x) {
        for (int i = threadIdx.x; i < jb; i += blockDim.x)
            if (U[i + c * ldu] != fval(S[ub[i]], c0 + c)) nb++;
        for (int t = threadIdx.x; t < nown; t += blockDim.x)
            if (A[al[t] + c * lda] != fval(S[ab[t]], c0 + c)) nb++;
    }
    if (nb) atomicAdd(bad, nb);
}

// Floor: the npack rows gathered into a row-major buffer (reads only the matrix).
__global__ void gather_kernel(const double *A, int64_t lda, const int64_t *pk, int npack, int64_t nc, double *buf) {
    int64_t n = (int64_t)npack * nc;
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < n; e += (int64_t)gridDim.x * blockDim.x) {
        int64_t c = e / npack, t = e - c * npack;
        buf[e] = A[pk[t] + c * lda];
    }
}

static double now_ms(cudaEvent_t a, cudaEvent_t b) {
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    return ms;
}

static int cmp64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static int64_t findr(const int64_t *S, int64_t n, int64_t r) {
    int64_t lo = 0, hi = n - 1;
    while (lo <= hi) {
        int64_t m = (lo + hi) / 2;
        if (S[m] == r) return m;
        if (S[m] < r) lo = m + 1;
        else hi = m - 1;
    }
    return -1;
}

static uint64_t rng = 88172645463325252ull;
static uint64_t xs(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

int main(int argc, char **argv) {
    int64_t N = argc > 1 ? atoll(argv[1]) : 87040, NB = argc > 2 ? atoll(argv[2]) : 1024;
    int64_t nc = N - NB, jb = NB; // the first iteration's trailing columns
    int dev = 0;
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, dev));
    printf("{\"device\": \"%s\", \"N\": %lld, \"NB\": %lld, \"sms\": %d}\n", prop.name, (long long)N, (long long)NB,
           prop.multiProcessorCount);
    fflush(stdout);
    // the plan, as the HPL engine builds it for one process row and the panel at column 0 (pivots
    // uniform over the rows at or below the diagonal, like a random matrix's)
    int64_t *ipiv = (int64_t *)malloc(sizeof(int64_t) * jb), *S = (int64_t *)malloc(sizeof(int64_t) * 2 * jb);
    int64_t *cur = (int64_t *)malloc(sizeof(int64_t) * 2 * jb);
    for (int64_t i = 0; i < jb; i++) ipiv[i] = i + (int64_t)(xs() % (uint64_t)(N - i));
    int64_t ns = 0;
    for (int64_t i = 0; i < jb; i++) S[ns++] = i;
    for (int64_t i = 0; i < jb; i++)
        if (ipiv[i] >= jb) S[ns++] = ipiv[i];
    qsort(S, (size_t)ns, sizeof(int64_t), cmp64);
    int64_t u = 0;
    for (int64_t t = 0; t < ns; t++)
        if (u == 0 || S[t] != S[u - 1]) S[u++] = S[t];
    ns = u;
    for (int64_t t = 0; t < ns; t++) cur[t] = t;
    for (int64_t i = 0; i < jb; i++) {
        int64_t a = findr(S, ns, i), b = findr(S, ns, ipiv[i]), tmp = cur[a];
        cur[a] = cur[b];
        cur[b] = tmp;
    }
    int64_t *plan = (int64_t *)malloc(sizeof(int64_t) * (ns + 3 * jb + 2 * ns)); // pk | ub | al | ab
    int64_t *pk = plan, *ub = pk + ns, *al = ub + jb, *ab = al + ns;
    int64_t nown = 0;
    for (int64_t t = 0; t < ns; t++) {
        pk[t] = S[t];
        if (S[t] >= jb && cur[t] != t) {
            al[nown] = S[t];
            ab[nown] = cur[t];
            nown++;
        }
    }
    for (int64_t i = 0; i < jb; i++) ub[i] = cur[findr(S, ns, i)];
    int64_t npack = ns;
    printf("{\"plan\": {\"npack\": %lld, \"jb\": %lld, \"nown\": %lld, \"nc\": %lld}}\n", (long long)npack,
           (long long)jb, (long long)nown, (long long)nc);

    size_t abytes = (size_t)N * (size_t)N * 8;
    double *A, *U, *buf, *L;
    CK(cudaMalloc(&A, abytes));
    CK(cudaMalloc(&U, (size_t)NB * nc * 8));
    CK(cudaMalloc(&buf, (size_t)2 * NB * nc * 8));
    CK(cudaMalloc(&L, (size_t)NB * NB * 8));
    int64_t *dS, *dpk, *dub, *dal, *dab, *dident;
    CK(cudaMalloc(&dS, sizeof(int64_t) * ns));
    CK(cudaMalloc(&dpk, sizeof(int64_t) * ns));
    CK(cudaMalloc(&dub, sizeof(int64_t) * jb));
    CK(cudaMalloc(&dal, sizeof(int64_t) * (nown + 1)));
    CK(cudaMalloc(&dab, sizeof(int64_t) * (nown + 1)));
    CK(cudaMalloc(&dident, sizeof(int64_t) * jb));
    int64_t *ident = (int64_t *)malloc(sizeof(int64_t) * jb);
    for (int64_t i = 0; i < jb; i++) ident[i] = i;
    CK(cudaMemcpy(dS, S, sizeof(int64_t) * ns, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dpk, pk, sizeof(int64_t) * ns, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dub, ub, sizeof(int64_t) * jb, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dal, al, sizeof(int64_t) * (nown + 1), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dab, ab, sizeof(int64_t) * (nown + 1), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dident, ident, sizeof(int64_t) * jb, cudaMemcpyHostToDevice));
    unsigned long long *dbad;
    CK(cudaMalloc(&dbad, sizeof(*dbad)));
    cudaStream_t st;
    CK(cudaStreamCreate(&st));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    const int reps = 5;
    // bytes the swap must move at least: U's rows read and written, the changed rows read and written
    double need = ((double)jb * 2 + (double)nown * 2) * (double)nc * 8;

    // ---- row interchanges ----
    struct {
        const char *name;
        int cb, grid, kind; // kind 0 fused kernel, 1 split pack/unpack, 2 gather floor, 3 copy floor
    } vs[] = {{"fused-lib", 0, 0, 0},  {"fused-cb1", 1, 0, 0},      {"fused-cb2", 2, 0, 0},
              {"fused-cb8", 8, 0, 0},  {"fused-cb4-all", 4, -1, 0}, {"fused-cb4-264", 4, 264, 0},
              {"fused-cb1-all", 1, -1, 0}, {"split", 0, 0, 1},     {"gather-floor", 0, 0, 2},
              {"copy-floor", 0, 0, 3}};
    size_t idx = TS_LU_SWAP_SMEM(npack, jb, nown) - (size_t)npack * 8, col = (size_t)npack * 8;
    for (size_t v = 0; v < sizeof(vs) / sizeof(vs[0]); v++) {
        double best = 1e30, sum = 0;
        unsigned long long bad = 0;
        for (int r = -1; r < reps; r++) {
            if (r == -1) {
                fill_kernel<<<4096, 256, 0, st>>>(A, N, N, N);
                CK(cudaMemsetAsync(U, 0, (size_t)NB * nc * 8, st));
            }
            CK(cudaEventRecord(e0, st));
            if (vs[v].kind == 0 && vs[v].cb == 0) {
                ts_lu_swap_args a = {A + jb * N, U, dpk, dub, dal, dab, N, NB, npack, jb, nown, nc};
                if (ts_lu_swap_cuda(st, &a)) {
                    fprintf(stderr, "swap: %s\n", ts_error_string());
                    return 1;
                }
            } else if (vs[v].kind == 0) {
                int cb = vs[v].cb;
                size_t smem = (idx + (size_t)cb * col + 7) & ~(size_t)7;
                CK(cudaFuncSetAttribute(lu_swap_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
                int64_t ng = (nc + cb - 1) / cb;
                int grid = vs[v].grid == -1 ? (int)ng : vs[v].grid ? vs[v].grid : (ng < 2048 ? (int)ng : 2048);
                lu_swap_kernel<<<grid, SWAP_THREADS, smem, st>>>(A + jb * N, N, dpk, (int)npack, dub, (int)jb, U, NB,
                                                                 dal, dab, (int)nown, nc, cb);
            } else if (vs[v].kind == 1) {
                ts_lu_rows_args p = {0, A + jb * N, buf, NULL, dpk, npack, nc, N};
                ts_lu_rows_args q = {1, buf, U, dub, dident, jb, nc, NB};
                ts_lu_rows_args w = {1, buf, A + jb * N, dab, dal, nown, nc, N};
                if (ts_lu_rows_cuda(st, &p) || ts_lu_rows_cuda(st, &q) || ts_lu_rows_cuda(st, &w)) {
                    fprintf(stderr, "split: %s\n", ts_error_string());
                    return 1;
                }
            } else if (vs[v].kind == 2) {
                gather_kernel<<<4096, 256, 0, st>>>(A + jb * N, N, dpk, (int)npack, nc, buf);
            } else {
                CK(cudaMemcpyAsync(buf, A + jb * N, (size_t)npack * nc * 8, cudaMemcpyDeviceToDevice, st));
            }
            CK(cudaEventRecord(e1, st));
            CK(cudaGetLastError());
            CK(cudaStreamSynchronize(st));
            double ms = now_ms(e0, e1);
            if (r == -1 && vs[v].kind <= 1) {
                CK(cudaMemsetAsync(dbad, 0, sizeof(*dbad), st));
                check_kernel<<<2048, 256, 0, st>>>(A + jb * N, N, U, NB, dS, dub, (int)jb, dal, dab, (int)nown, nc,
                                                   jb, dbad);
                CK(cudaMemcpyAsync(&bad, dbad, sizeof(bad), cudaMemcpyDeviceToHost, st));
                CK(cudaStreamSynchronize(st));
            }
            if (r >= 0) {
                sum += ms;
                if (ms < best) best = ms;
            }
        }
        printf("{\"swap\": \"%s\", \"ms_min\": %.3f, \"ms_mean\": %.3f, \"GBps_needed\": %.1f, \"bad\": %llu%s}\n",
               vs[v].name, best, sum / reps, need / best / 1e6, bad, vs[v].kind >= 2 ? ", \"floor\": true" : "");
        fflush(stdout);
    }

    // ---- U = inv(L11) U0 (HPL's u_solve inverse) and DTRSM ----
    cublasHandle_t h;
    CS(cublasCreate(&h));
    CS(cublasSetStream(h, st));
    fill_kernel<<<4096, 256, 0, st>>>(A, N, N, N);
    fill_kernel<<<256, 256, 0, st>>>(L, NB, NB, NB);
    const double one = 1.0, zero = 0.0, mone = -1.0;
    for (int v = 0; v < 3; v++) {
        double best = 1e30;
        for (int r = 0; r < reps; r++) {
            CK(cudaEventRecord(e0, st));
            if (v == 0) CS(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, (int)jb, (int)nc, (int)jb, &one, L, (int)NB, U,
                                       (int)NB, &zero, A + jb * N, (int)N));
            else if (v == 1) CS(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, (int)jb, (int)nc, (int)jb, &one, L, (int)NB,
                                            U, (int)NB, &zero, buf, (int)NB));
            else CS(cublasDtrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_UNIT, (int)jb,
                                (int)nc, &one, L, (int)NB, U, (int)NB));
            CK(cudaEventRecord(e1, st));
            CK(cudaStreamSynchronize(st));
            double ms = now_ms(e0, e1);
            if (ms < best) best = ms;
        }
        const char *nm[] = {"gemm-inv-into-A", "gemm-inv-into-buffer", "dtrsm"};
        double fl = v < 2 ? 2.0 * jb * jb * nc : 1.0 * jb * jb * nc;
        printf("{\"u\": \"%s\", \"m\": %lld, \"n\": %lld, \"k\": %lld, \"ms_min\": %.3f, \"TFLOPs\": %.2f}\n", nm[v],
               (long long)jb, (long long)nc, (long long)jb, best, fl / best / 1e9);
        fflush(stdout);
    }

    // ---- the trailing GEMM of late iterations: lda = N against packed operands ----
    int64_t ms_[] = {4096, 8192, 12288, 16384, 24576, 32768};
    int64_t ks[] = {256, 512, 1024};
    for (size_t a = 0; a < sizeof(ms_) / sizeof(ms_[0]); a++)
        for (size_t b = 0; b < sizeof(ks) / sizeof(ks[0]); b++)
            for (int packed = 0; packed < 2; packed++) {
                int64_t m = ms_[a], k = ks[b];
                if (m + k > N) continue;
                int64_t ld = packed ? m : N;
                if (packed && (size_t)m * m * 8 + 2 * (size_t)m * k * 8 > (size_t)2 * NB * nc * 8 + (size_t)NB * nc * 8)
                    continue;
                // operands: L below the panel, U beside it, C the trailing block (packed: in buf/U)
                const double *Lp = packed ? buf : A + k;
                const double *Up = packed ? buf + m * k : A + k * N;
                double *Cp = packed ? buf + 2 * m * k : A + k + k * N;
                int64_t ldl = packed ? m : N, ldu = packed ? k : N;
                if (packed && 2 * m * k + m * m > 2 * NB * nc) continue;
                double best = 1e30;
                int rr = m <= 8192 ? 20 : 5;
                for (int r = -1; r < rr; r++) {
                    CK(cudaEventRecord(e0, st));
                    CS(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, (int)m, (int)m, (int)k, &mone, Lp, (int)ldl, Up,
                                   (int)ldu, &one, Cp, (int)(packed ? m : ld)));
                    CK(cudaEventRecord(e1, st));
                    CK(cudaStreamSynchronize(st));
                    double ms = now_ms(e0, e1);
                    if (r >= 0 && ms < best) best = ms;
                }
                printf("{\"tail_gemm\": {\"m\": %lld, \"k\": %lld, \"ld\": \"%s\"}, \"ms_min\": %.3f, \"TFLOPs\": %.2f}\n",
                       (long long)m, (long long)k, packed ? "packed" : "N", best, 2.0 * m * m * k / best / 1e9);
                fflush(stdout);
            }
    cublasDestroy(h);
    return 0;
}
