// fp8_probe: which cuBLASLt E4M3 x E4M3 matmul configurations a GPU and its cuBLASLt accept
// (2048^3, TN, scale pointers): C = D in place or not, FP32 / BF16 / FP16 C, beta 0 / 1; hpl-mxp's FP8
// update was refused as C = D FP32 in place on H100 and H200 (bench/notes/hpl-mxp.md).
// Build: nvcc -O2 -arch=sm_90 bench/fp8_probe.cu -lcublasLt -lcublas -o fp8_probe
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdint>
static const char *st(cublasStatus_t s) { return cublasGetStatusString(s); }
int main() {
    cublasLtHandle_t lt; cublasLtCreate(&lt);
    int ver = (int)cublasLtGetVersion(); printf("cublasLt version %d\n", ver);
    const int n = 2048;
    void *A, *B, *C, *D, *ws, *sc; size_t wsz = 32 << 20;
    cudaMalloc(&A, n * n); cudaMalloc(&B, n * n); cudaMalloc(&C, 4ul * n * n); cudaMalloc(&D, 4ul * n * n);
    cudaMalloc(&ws, wsz); cudaMalloc(&sc, 64);
    cudaMemset(A, 0, n * n); cudaMemset(B, 0, n * n); cudaMemset(C, 0, 4ul * n * n);
    float one = 1.f; cudaMemcpy(sc, &one, 4, cudaMemcpyHostToDevice); cudaMemcpy((char *)sc + 4, &one, 4, cudaMemcpyHostToDevice);
    cudaStream_t s; cudaStreamCreate(&s);
    struct V { const char *name; cudaDataType_t ct, dt; int inplace, scales; float beta; } vs[] = {
        {"C32 D32 in-place scales beta0", CUDA_R_32F, CUDA_R_32F, 1, 1, 0.f},
        {"C32 D32 in-place scales beta1", CUDA_R_32F, CUDA_R_32F, 1, 1, 1.f},
        {"C32 D32 out-of-place scales beta1", CUDA_R_32F, CUDA_R_32F, 0, 1, 1.f},
        {"C32 D32 in-place no-scales beta1", CUDA_R_32F, CUDA_R_32F, 1, 0, 1.f},
        {"C16BF D16BF in-place scales beta1", CUDA_R_16BF, CUDA_R_16BF, 1, 1, 1.f},
        {"C16F D16F in-place scales beta1", CUDA_R_16F, CUDA_R_16F, 1, 1, 1.f},
        {"C16BF D32 out-of-place scales beta1", CUDA_R_16BF, CUDA_R_32F, 0, 1, 1.f},
    };
    for (auto &v : vs) {
        cublasLtMatmulDesc_t op; cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F);
        cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
        cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
        cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
        void *sa = sc, *sb = (char *)sc + 4;
        if (v.scales) {
            cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sa, sizeof sa);
            cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sb, sizeof sb);
        }
        cublasLtMatrixLayout_t la, lb, lc, ld;
        cublasLtMatrixLayoutCreate(&la, CUDA_R_8F_E4M3, n, n, n); cublasLtMatrixLayoutCreate(&lb, CUDA_R_8F_E4M3, n, n, n);
        cublasLtMatrixLayoutCreate(&lc, v.ct, n, n, n); cublasLtMatrixLayoutCreate(&ld, v.dt, n, n, n);
        cublasLtMatmulPreference_t pref; cublasLtMatmulPreferenceCreate(&pref);
        cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsz, sizeof wsz);
        cublasLtMatmulHeuristicResult_t h[4]; int nr = 0;
        cublasStatus_t hs = cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, ld, pref, 4, h, &nr);
        cublasStatus_t ms = CUBLAS_STATUS_NOT_SUPPORTED;
        void *dptr = v.inplace && v.ct == v.dt ? C : D;
        for (int i = 0; i < nr && ms != CUBLAS_STATUS_SUCCESS; i++)
            ms = cublasLtMatmul(lt, op, &one, A, la, B, lb, &v.beta, C, lc, dptr, ld, &h[i].algo, ws, wsz, s);
        cudaError_t ce = cudaStreamSynchronize(s);
        printf("%-40s heuristic %s (%d)  matmul %s  sync %s\n", v.name, st(hs), nr, nr ? st(ms) : "-", cudaGetErrorString(ce));
        cublasLtMatmulPreferenceDestroy(pref); cublasLtMatrixLayoutDestroy(la); cublasLtMatrixLayoutDestroy(lb);
        cublasLtMatrixLayoutDestroy(lc); cublasLtMatrixLayoutDestroy(ld); cublasLtMatmulDescDestroy(op);
    }
    return 0;
}
