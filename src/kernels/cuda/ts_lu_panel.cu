// ts_lu_panel.cu: the base case of HPL's panel factorization on CUDA: one cooperative kernel per leaf (pivot, swap, scale, update per column).
//
// The leaf is columns [off, off+nl) (nl <= TS_LU_LEAF_MAX) of an m x ncols panel in device memory.
// Rows [off, m) are split into G contiguous slices, one per block; a block keeps its slice of the
// leaf in shared memory when it fits (else it works on A in place) and only ever writes its own
// rows, so the blocks meet once per column, at one grid barrier:
//
//   after the barrier of step kk (column k = off + kk), every block
//     1. reduces the G published candidates of column k to the pivot row p (max |a|, lowest row
//        on ties) and reads the pivot row and row k as they were published (scratch, not A);
//     2. (block 0) records ipiv[k] = p + 1 and the first zero pivot (the panel columns outside the
//        leaf get all of the leaf's interchanges after the kernel, by lu_leaf_swap_kernel);
//     3. updates its own rows: row k becomes the pivot row, row p becomes the old row k, the rows
//        below k are scaled (and, right-looking, get the rank-1 update);
//     4. left-looking / Crout: brings column k+1 of its rows up to date (the leaf's U rows are
//        kept in every block's shared memory; left-looking forms U's column k+1 by a triangular
//        solve of the raw pivot rows, Crout forms each U row when its pivot is chosen);
//     5. searches its rows for column k+1's candidate and publishes (value, row, the row's nl
//        values), and row k+1 when it owns it, into the other half of a double-buffered scratch;
//   then the barrier of step kk+1. Reading only the published copies is what lets one barrier
//   per column suffice: no block reads a row that another block writes in the same step.
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include "core/ts_error.h"
#include "kernels/ts_lu_kernels.h"

namespace cg = cooperative_groups;

#define LEAF_MAX TS_LU_LEAF_MAX
#define MAX_GRID 4096

// Scratch of one parity: cand value [G], cand row [G], cand rows [G][nl], row k [nl].
struct leaf_scr {
    double *val, *row, *rows, *rowk;
};

__device__ __forceinline__ leaf_scr scr_of(double *scr, int G, int nl, int q) {
    double *b = scr + (size_t)q * ((size_t)G * (nl + 2) + nl);
    leaf_scr s;
    s.val = b;
    s.row = b + G;
    s.rows = b + 2 * G;
    s.rowk = b + 2 * G + (size_t)G * nl;
    return s;
}

// (v, r) better than (bv, br): larger |a|, then the lower row.
__device__ __forceinline__ bool better(double v, int r, double bv, int br) {
    return v > bv || (v == bv && r < br);
}

// Block-wide argmax of (v, r); every thread gets the result.
__device__ void block_argmax(double &v, int &r, double *sv, int *sr) {
    for (int o = 16; o > 0; o >>= 1) {
        double ov = __shfl_down_sync(0xffffffffu, v, o);
        int orr = __shfl_down_sync(0xffffffffu, r, o);
        if (better(ov, orr, v, r)) {
            v = ov;
            r = orr;
        }
    }
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
    __syncthreads(); // sv/sr free from any earlier use
    if (lane == 0) {
        sv[w] = v;
        sr[w] = r;
    }
    __syncthreads();
    if (w == 0) {
        v = lane < nw ? sv[lane] : -1.0;
        r = lane < nw ? sr[lane] : 0x7fffffff;
        for (int o = 16; o > 0; o >>= 1) {
            double ov = __shfl_down_sync(0xffffffffu, v, o);
            int orr = __shfl_down_sync(0xffffffffu, r, o);
            if (better(ov, orr, v, r)) {
                v = ov;
                r = orr;
            }
        }
        if (lane == 0) {
            sv[0] = v;
            sr[0] = r;
        }
    }
    __syncthreads();
    v = sv[0];
    r = sr[0];
}

// Candidate of column c among this block's rows >= rmin; published with its row, and row rmin by
// its owner.
__device__ void search_publish(const double *S, int64_t ldS, int r0, int nr, int rmin, int c, int nl,
                               leaf_scr sc, double *sv, int *sr) {
    double v = -1.0;
    int r = 0x7fffffff;
    int i0 = rmin - r0 > 0 ? rmin - r0 : 0;
    for (int i = i0 + threadIdx.x; i < nr; i += blockDim.x) {
        double a = fabs(S[i + c * ldS]);
        if (a > v) { // ascending rows per thread: the first maximum stays
            v = a;
            r = r0 + i;
        }
    }
    block_argmax(v, r, sv, sr);
    if (threadIdx.x == 0) {
        sc.val[blockIdx.x] = v;
        sc.row[blockIdx.x] = (double)r;
    }
    if (v >= 0.0)
        for (int j = threadIdx.x; j < nl; j += blockDim.x)
            sc.rows[(size_t)blockIdx.x * nl + j] = S[(r - r0) + j * ldS];
    if (rmin >= r0 && rmin < r0 + nr)
        for (int j = threadIdx.x; j < nl; j += blockDim.x) sc.rowk[j] = S[(rmin - r0) + j * ldS];
}

template <int PF>
__global__ void __launch_bounds__(512, 1) lu_leaf_kernel(double *__restrict__ A, int64_t lda, int m, int ncols,
                                                      int off, int nl, int *__restrict__ ipiv,
                                                      int *__restrict__ info, double *__restrict__ scr, int R,
                                                      int staged, int prefetch) {
    cg::grid_group grid = cg::this_grid();
    extern __shared__ double smem[];
    __shared__ double red_v[32];
    __shared__ int red_r[32];
    __shared__ int s_p, s_wb;
    __shared__ double s_v;
    const int G = gridDim.x, b = blockIdx.x, T = blockDim.x, t = threadIdx.x;
    const int r0 = off + b * R;
    const int nr = r0 < m ? (m - r0 < R ? m - r0 : R) : 0;
    double *sp = smem;
    double *S;
    int64_t ldS;
    if (staged) {
        S = sp;
        ldS = R;
        sp += (size_t)R * nl;
    } else {
        S = A + r0 + (int64_t)off * lda;
        ldS = lda;
    }
    double *Ur = sp;            // the pivot row (nl)
    double *Rk = Ur + LEAF_MAX; // row k before the swap (nl)
    double *Ush = Rk + LEAF_MAX; // U rows of the leaf (nl x nl, row-major; left-looking and Crout)
    double *Praw = Ush + (PF != 2 ? LEAF_MAX * nl : 0); // raw pivot rows (left-looking)
    double *Pre = prefetch ? Praw + (PF == 0 ? LEAF_MAX * nl : 0) : NULL; // all candidate rows (G x nl)

    if (staged) {
        for (int x = t; x < nr * nl; x += T) {
            int c = x / nr, i = x - c * nr;
            S[i + c * ldS] = A[(r0 + i) + (int64_t)(off + c) * lda];
        }
        __syncthreads();
    }
    search_publish(S, ldS, r0, nr, off, 0, nl, scr_of(scr, G, nl, 0), red_v, red_r);
    grid.sync();

    for (int kk = 0; kk < nl; kk++) {
        const int k = off + kk;
        leaf_scr sc = scr_of(scr, G, nl, kk & 1);
        // 1. the pivot; row k and (small grids) every candidate row are read in the same round
        double v = -1.0;
        int r = 0x7fffffff;
        for (int g = t; g < G; g += T) {
            double gv = __ldcg(sc.val + g);
            int gr = (int)__ldcg(sc.row + g);
            if (better(gv, gr, v, r)) {
                v = gv;
                r = gr;
            }
        }
        for (int j = t; j < nl; j += T) Rk[j] = __ldcg(sc.rowk + j);
        if (Pre)
            for (int x = t; x < G * nl; x += T) Pre[x] = __ldcg(sc.rows + x);
        block_argmax(v, r, red_v, red_r);
        if (t == 0) {
            s_v = v;
            s_p = v >= 0.0 ? r : k; // no candidate at all (NaN column): keep the row
            s_wb = v >= 0.0 ? (r - off) / R : -1;
        }
        __syncthreads();
        const int p = s_p, wb = s_wb;
        for (int j = t; j < nl; j += T)
            Ur[j] = wb < 0 ? Rk[j] : Pre ? Pre[wb * nl + j] : __ldcg(sc.rows + (size_t)wb * nl + j);
        // 2. pivots and info (the columns outside the leaf are swapped after the kernel)
        if (b == 0 && t == 0) {
            ipiv[k] = p + 1;
            if (!(s_v > 0.0) && *info == 0) *info = k + 1;
        }
        __syncthreads();
        const double piv = Ur[kk];
        const double rcp = piv != 0.0 ? 1.0 / piv : 1.0;
        if (PF == 1) { // Crout: U row kk from the pivot row and the earlier U rows
            for (int c = kk + 1 + t; c < nl; c += T) {
                double s = Ur[c];
                for (int i = 0; i < kk; i++) s -= Ur[i] * Ush[i * nl + c];
                Ush[kk * nl + c] = s;
            }
        } else if (PF == 0) {
            for (int c = t; c < nl; c += T) Praw[kk * nl + c] = Ur[c];
        }
        if (PF != 2 && t == 0) Ush[kk * nl + kk] = piv;
        // 3. this block's rows
        const int i0 = k - r0 > 0 ? k - r0 : 0; // first own row >= k
        if (nr > i0) {
            for (int i = i0 + t; i < nr; i += T) { // a row per thread: consecutive rows, no conflicts
                const int rr = r0 + i;
                double *e = S + i;
                if (rr == k) {
                    for (int c = kk; c < nl; c++) e[c * ldS] = Ur[c];
                } else if (rr == p) {
                    const double l = Rk[kk] * rcp;
                    e[kk * ldS] = l;
                    for (int c = kk + 1; c < nl; c++) e[c * ldS] = PF == 2 ? fma(-l, Ur[c], Rk[c]) : Rk[c];
                } else {
                    const double l = e[kk * ldS] * rcp;
                    e[kk * ldS] = l;
                    if (PF == 2) // eight loads in flight before their stores (in place: L2, not smem)
                        for (int c0 = kk + 1; c0 < nl; c0 += 8) {
                            double v[8];
#pragma unroll
                            for (int u = 0; u < 8; u++)
                                if (c0 + u < nl) v[u] = e[(c0 + u) * ldS];
#pragma unroll
                            for (int u = 0; u < 8; u++)
                                if (c0 + u < nl) e[(c0 + u) * ldS] = fma(-l, Ur[c0 + u], v[u]);
                        }
                }
            }
            // the L part of the two swapped rows
            if (p != k)
                for (int c = t; c < kk; c += T) {
                    if (k >= r0 && k < r0 + nr) S[(k - r0) + c * ldS] = Ur[c];
                    if (p >= r0 && p < r0 + nr) S[(p - r0) + c * ldS] = Rk[c];
                }
        }
        __syncthreads();
        if (kk + 1 == nl) break;
        // 4. left-looking / Crout: column kk+1 of the rows below k
        if (PF != 2) {
            const int cn = kk + 1;
            if (PF == 0 && t < 32) { // U[0..kk][cn] = L^-1 (raw pivot rows' column cn), one warp
                double u0 = t <= kk ? Praw[t * nl + cn] : 0.0;
                double u1 = t + 32 <= kk ? Praw[(t + 32) * nl + cn] : 0.0;
                for (int j = 0; j <= kk; j++) {
                    double uj = __shfl_sync(0xffffffffu, j < 32 ? u0 : u1, j & 31);
                    if (t > j && t <= kk) u0 = fma(-Praw[t * nl + j], uj, u0);
                    if (t + 32 > j && t + 32 <= kk) u1 = fma(-Praw[(t + 32) * nl + j], uj, u1);
                }
                if (t <= kk) Ush[t * nl + cn] = u0;
                if (t + 32 <= kk) Ush[(t + 32) * nl + cn] = u1;
            }
            __syncthreads();
            const int i1 = k + 1 - r0 > 0 ? k + 1 - r0 : 0;
            for (int i = i1 + t; i < nr; i += T) {
                double s = S[i + cn * ldS];
                for (int j0 = 0; j0 <= kk; j0 += 8) { // eight loads in flight
                    double v[8];
#pragma unroll
                    for (int u = 0; u < 8; u++) v[u] = j0 + u <= kk ? S[i + (j0 + u) * ldS] : 0.0;
#pragma unroll
                    for (int u = 0; u < 8; u++)
                        if (j0 + u <= kk) s = fma(-v[u], Ush[(j0 + u) * nl + cn], s);
                }
                S[i + cn * ldS] = s;
            }
            __syncthreads();
        }
        // 5. candidates of column kk+1
        search_publish(S, ldS, r0, nr, k + 1, kk + 1, nl, scr_of(scr, G, nl, (kk + 1) & 1), red_v, red_r);
        grid.sync();
    }
    // left-looking / Crout: the U rows of the leaf into their rows
    if (PF != 2) {
        for (int x = t; x < nl * nl; x += T) {
            int c = x / nl, jj = x - c * nl;
            int rr = off + jj;
            if (c > jj && rr >= r0 && rr < r0 + nr) S[(rr - r0) + c * ldS] = Ush[jj * nl + c];
        }
        __syncthreads();
    }
    if (staged) {
        for (int x = t; x < nr * nl; x += T) {
            int c = x / nr, i = x - c * nr;
            A[(r0 + i) + (int64_t)(off + c) * lda] = S[i + c * ldS];
        }
    }
}

// The leaf's nl row interchanges on the panel columns outside it ([0, off) and [off+nl, ncols)),
// as one permutation: the rows involved (at most 2 nl) are read, then written to their final
// places, so a column costs one round of loads instead of nl dependent swaps. 32 columns a block.
#define SWAP_COLS 32
__global__ void __launch_bounds__(256) lu_leaf_swap_kernel(double *__restrict__ A, int64_t lda, int ncols,
                                                           int off, int nl, const int *__restrict__ ipiv) {
    __shared__ int rows[2 * LEAF_MAX], src[2 * LEAF_MAX], s_n;
    __shared__ double val[2 * LEAF_MAX][SWAP_COLS + 1];
    if (threadIdx.x == 0) {
        int n = 0;
        for (int kk = 0; kk < nl; kk++) {
            int k = off + kk, p = ipiv[k] - 1, ik = -1, ip = -1;
            for (int i = 0; i < n; i++) {
                if (rows[i] == k) ik = i;
                if (rows[i] == p) ip = i;
            }
            if (ik < 0) {
                rows[n] = k;
                src[n] = k;
                ik = n++;
            }
            if (ip < 0) {
                rows[n] = p;
                src[n] = p;
                ip = n++;
            }
            int x = src[ik]; // row k now holds what row p held, and the other way round
            src[ik] = src[ip];
            src[ip] = x;
        }
        s_n = n;
    }
    __syncthreads();
    const int n = s_n, nout = ncols - nl;
    const int j0 = blockIdx.x * SWAP_COLS;
    for (int x = threadIdx.x; x < n * SWAP_COLS; x += blockDim.x) {
        int i = x / SWAP_COLS, j = x - i * SWAP_COLS;
        if (j0 + j >= nout) continue;
        int c = j0 + j < off ? j0 + j : j0 + j + nl;
        val[i][j] = A[src[i] + (int64_t)c * lda];
    }
    __syncthreads();
    for (int x = threadIdx.x; x < n * SWAP_COLS; x += blockDim.x) {
        int i = x / SWAP_COLS, j = x - i * SWAP_COLS;
        if (j0 + j >= nout) continue;
        int c = j0 + j < off ? j0 + j : j0 + j + nl;
        A[rows[i] + (int64_t)c * lda] = val[i][j];
    }
}

// Candidate rows read by every block in the barrier's first round when the grid is small.
#define PREFETCH_MAX 2048

static size_t leaf_smem(int pf, int R, int nl, int staged, int pre) {
    size_t d = (size_t)2 * LEAF_MAX + (size_t)pre;
    if (pf != 2) d += (size_t)LEAF_MAX * nl;
    if (pf == 0) d += (size_t)LEAF_MAX * nl;
    if (staged) d += (size_t)R * nl;
    return d * sizeof(double);
}

template <int PF>
static int launch(const ts_lu_leaf_args *a, cudaStream_t s) {
    int dev = 0, sms = 0, optin = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
    if (e != cudaSuccess)
        return ts_error_set(TS_ERR_CUDA, __FILE__, __LINE__, "lu leaf: device attributes: %s", cudaGetErrorString(e));
    const int nl = (int)a->nl, M = (int)(a->m - a->off);
    const int T = 512;
    // Blocks of at least 256 rows, at most one per multiprocessor (and at most a->grid: a few blocks
    // leave the other SMs to a concurrent GEMM, and a launch waits only for that many to free up).
    int G = (M + 255) / 256;
    if (G > sms) G = sms;
    if (a->grid > 0 && G > a->grid) G = a->grid;
    if (G < 1) G = 1;
    int R = (M + G - 1) / G;
    G = (M + R - 1) / R;
    size_t static_smem = 32 * (sizeof(double) + sizeof(int)) + 64;
    int pre = G * nl <= PREFETCH_MAX ? G * nl : 0;
    int staged = leaf_smem(PF, R, nl, 1, pre) + static_smem <= (size_t)optin;
    if (!staged && pre) { // staging the rows matters more than the prefetch
        pre = 0;
        staged = leaf_smem(PF, R, nl, 1, 0) + static_smem <= (size_t)optin;
    }
    int prefetch = pre > 0;
    size_t smem = leaf_smem(PF, R, nl, staged, pre);
    if (smem + static_smem > (size_t)optin)
        return ts_error_set(TS_ERR_UNSUPPORTED, __FILE__, __LINE__,
                            "lu leaf: %lld rows need %zu bytes of shared memory per block (at most %d)",
                            (long long)M, smem, optin);
    e = cudaFuncSetAttribute(lu_leaf_kernel<PF>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    int per_sm = 0;
    if (e == cudaSuccess) e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, lu_leaf_kernel<PF>, T, smem);
    if (e != cudaSuccess)
        return ts_error_set(TS_ERR_CUDA, __FILE__, __LINE__, "lu leaf: occupancy: %s", cudaGetErrorString(e));
    if (per_sm < 1 || G > per_sm * sms || G > MAX_GRID)
        return ts_error_set(TS_ERR_UNSUPPORTED, __FILE__, __LINE__, "lu leaf: a grid of %d blocks cannot be co-resident",
                            G);
    double *A = a->A;
    int64_t lda = a->lda;
    int m = (int)a->m, ncols = (int)a->ncols, off = (int)a->off;
    int *ipiv = a->ipiv, *info = a->info;
    double *scr = a->scratch;
    void *kargs[] = {&A, &lda, &m, &ncols, &off, (void *)&nl, &ipiv, &info, &scr, &R, &staged, &prefetch};
    e = cudaLaunchCooperativeKernel((const void *)lu_leaf_kernel<PF>, dim3(G), dim3(T), kargs, smem, s);
    if (e != cudaSuccess)
        return ts_error_set(TS_ERR_CUDA, __FILE__, __LINE__, "lu leaf launch (%d blocks, %zu bytes): %s", G, smem,
                            cudaGetErrorString(e));
    int nout = ncols - nl;
    if (nout > 0) {
        lu_leaf_swap_kernel<<<(nout + SWAP_COLS - 1) / SWAP_COLS, 256, 0, s>>>(A, lda, ncols, off, nl, ipiv);
        e = cudaGetLastError();
        if (e != cudaSuccess)
            return ts_error_set(TS_ERR_CUDA, __FILE__, __LINE__, "lu leaf swap launch: %s", cudaGetErrorString(e));
    }
    return 0;
}

extern "C" int ts_lu_leaf_cuda(void *native_stream, void *vargs) {
    const ts_lu_leaf_args *a = (const ts_lu_leaf_args *)vargs;
    if (a->nl <= 0 || a->m <= a->off) return 0;
    if (a->nl > LEAF_MAX || !a->scratch || a->scratch_doubles < TS_LU_LEAF_SCRATCH)
        return ts_error_set(TS_ERR_ARG, __FILE__, __LINE__, "lu leaf: %lld columns (at most %d) or no scratch",
                            (long long)a->nl, LEAF_MAX);
    cudaStream_t s = (cudaStream_t)native_stream;
    switch (a->pfact) {
    case 0: return launch<0>(a, s);
    case 1: return launch<1>(a, s);
    default: return launch<2>(a, s);
    }
}
