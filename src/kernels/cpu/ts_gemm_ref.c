// ts_gemm_ref.c: the reference GEMM (s/d/c/z, any op), cache-blocked plain C; the sim's device code.
#include <stdlib.h>

#include "kernels/ts_kernels.h"

// Blocking: op(A) is packed in TS_REF_MB x TS_REF_KB panels (with the conjugation applied), so the
// innermost loop is a contiguous axpy into one column of C (vectorizable for real precisions).
// A z panel is 128*128*16 = 256 KiB: it stays in L2 while every column of C streams past it.
#define TS_REF_MB 128
#define TS_REF_KB 128

static char op_upper(char t) {
    return (t == 'n' || t == 'N') ? 'N' : (t == 't' || t == 'T') ? 'T' : (t == 'c' || t == 'C') ? 'C' : 0;
}

// ---- real precisions ----
// C(i0:i0+mb, 0:n) += Ap (mb x kb) * alpha * op(B)(p0:p0+kb, 0:n)
#define TS_DEFINE_REAL(L, T)                                                                      \
    static void pack_a_##L(char ta, const T *A, int64_t lda, int64_t i0, int64_t p0, int64_t mb, \
                           int64_t kb, T *Ap) {                                                   \
        for (int64_t p = 0; p < kb; p++)                                                          \
            for (int64_t i = 0; i < mb; i++)                                                      \
                Ap[i + p * mb] = ta == 'N' ? A[(i0 + i) + (p0 + p) * lda]                         \
                                           : A[(p0 + p) + (i0 + i) * lda];                        \
    }                                                                                             \
    static inline T opb_##L(char tb, const T *B, int64_t ldb, int64_t p, int64_t j) {             \
        return tb == 'N' ? B[p + j * ldb] : B[j + p * ldb];                                       \
    }                                                                                             \
    static void scale_c_##L(int64_t m, int64_t n, T beta, T *C, int64_t ldc) {                    \
        if (beta == (T)1) return;                                                                 \
        for (int64_t j = 0; j < n; j++)                                                           \
            for (int64_t i = 0; i < m; i++)                                                       \
                /* beta == 0 must not read C: NaN/Inf there are overwritten (BLAS semantics) */   \
                C[i + j * ldc] = beta == (T)0 ? (T)0 : beta * C[i + j * ldc];                     \
    }                                                                                             \
    static void gemm_##L(char ta, char tb, int64_t m, int64_t n, int64_t k, T alpha, const T *A, \
                         int64_t lda, const T *B, int64_t ldb, T beta, T *C, int64_t ldc,        \
                         T *Ap) {                                                                 \
        scale_c_##L(m, n, beta, C, ldc);                                                          \
        if (alpha == (T)0 || k == 0) return;                                                      \
        for (int64_t p0 = 0; p0 < k; p0 += TS_REF_KB) {                                           \
            int64_t kb = k - p0 < TS_REF_KB ? k - p0 : TS_REF_KB;                                 \
            for (int64_t i0 = 0; i0 < m; i0 += TS_REF_MB) {                                       \
                int64_t mb = m - i0 < TS_REF_MB ? m - i0 : TS_REF_MB;                             \
                pack_a_##L(ta, A, lda, i0, p0, mb, kb, Ap);                                       \
                for (int64_t j = 0; j < n; j++) {                                                 \
                    T *restrict c = C + i0 + j * ldc;                                             \
                    int64_t p = 0;                                                                \
                    for (; p + 4 <= kb; p += 4) { /* 4 columns of Ap per pass over c */           \
                        T b0 = alpha * opb_##L(tb, B, ldb, p0 + p, j);                            \
                        T b1 = alpha * opb_##L(tb, B, ldb, p0 + p + 1, j);                        \
                        T b2 = alpha * opb_##L(tb, B, ldb, p0 + p + 2, j);                        \
                        T b3 = alpha * opb_##L(tb, B, ldb, p0 + p + 3, j);                        \
                        const T *restrict a = Ap + p * mb;                                        \
                        for (int64_t i = 0; i < mb; i++)                                          \
                            c[i] += a[i] * b0 + a[i + mb] * b1 + a[i + 2 * mb] * b2 +             \
                                    a[i + 3 * mb] * b3;                                           \
                    }                                                                             \
                    for (; p < kb; p++) {                                                         \
                        T b = alpha * opb_##L(tb, B, ldb, p0 + p, j);                             \
                        const T *restrict a = Ap + p * mb;                                        \
                        for (int64_t i = 0; i < mb; i++) c[i] += a[i] * b;                        \
                    }                                                                             \
                }                                                                                 \
            }                                                                                     \
        }                                                                                         \
    }

TS_DEFINE_REAL(s, float)
TS_DEFINE_REAL(d, double)

// ---- complex precisions: interleaved (re, im) pairs of T, explicit arithmetic (no __muldc3) ----
#define TS_DEFINE_COMPLEX(L, T)                                                                   \
    static void pack_a_##L(char ta, const T *A, int64_t lda, int64_t i0, int64_t p0, int64_t mb, \
                           int64_t kb, T *Ap) {                                                   \
        T sgn = ta == 'C' ? (T)-1 : (T)1;                                                         \
        for (int64_t p = 0; p < kb; p++)                                                          \
            for (int64_t i = 0; i < mb; i++) {                                                    \
                const T *a = ta == 'N' ? A + 2 * ((i0 + i) + (p0 + p) * lda)                      \
                                       : A + 2 * ((p0 + p) + (i0 + i) * lda);                     \
                Ap[2 * (i + p * mb)] = a[0];                                                      \
                Ap[2 * (i + p * mb) + 1] = sgn * a[1];                                            \
            }                                                                                     \
    }                                                                                             \
    /* alpha * op(B)(p, j), with the conjugation sign bsgn applied to the imaginary part */     \
    static inline void opb_##L(char tb, const T *B, int64_t ldb, int64_t p, int64_t j, T ar,     \
                               T ai, T bsgn, T *br, T *bi) {                                      \
        const T *bp = tb == 'N' ? B + 2 * (p + j * ldb) : B + 2 * (j + p * ldb);                 \
        T xr = bp[0], xi = bsgn * bp[1];                                                          \
        *br = ar * xr - ai * xi;                                                                  \
        *bi = ar * xi + ai * xr;                                                                  \
    }                                                                                             \
    static void scale_c_##L(int64_t m, int64_t n, const T *beta, T *C, int64_t ldc) {             \
        T br = beta[0], bi = beta[1];                                                             \
        if (br == (T)1 && bi == (T)0) return;                                                     \
        for (int64_t j = 0; j < n; j++)                                                           \
            for (int64_t i = 0; i < m; i++) {                                                     \
                T *c = C + 2 * (i + j * ldc);                                                     \
                if (br == (T)0 && bi == (T)0) {                                                   \
                    c[0] = c[1] = (T)0; /* beta == 0: C is not read */                            \
                } else {                                                                          \
                    T cr = c[0], ci = c[1];                                                       \
                    c[0] = br * cr - bi * ci;                                                     \
                    c[1] = br * ci + bi * cr;                                                     \
                }                                                                                 \
            }                                                                                     \
    }                                                                                             \
    static void gemm_##L(char ta, char tb, int64_t m, int64_t n, int64_t k, const T *alpha,      \
                         const T *A, int64_t lda, const T *B, int64_t ldb, const T *beta, T *C,  \
                         int64_t ldc, T *Ap) {                                                    \
        scale_c_##L(m, n, beta, C, ldc);                                                          \
        T ar = alpha[0], ai = alpha[1];                                                           \
        if ((ar == (T)0 && ai == (T)0) || k == 0) return;                                         \
        T bsgn = tb == 'C' ? (T)-1 : (T)1;                                                        \
        for (int64_t p0 = 0; p0 < k; p0 += TS_REF_KB) {                                           \
            int64_t kb = k - p0 < TS_REF_KB ? k - p0 : TS_REF_KB;                                 \
            for (int64_t i0 = 0; i0 < m; i0 += TS_REF_MB) {                                      \
                int64_t mb = m - i0 < TS_REF_MB ? m - i0 : TS_REF_MB;                             \
                pack_a_##L(ta, A, lda, i0, p0, mb, kb, Ap);                                       \
                for (int64_t j = 0; j < n; j++) {                                                 \
                    T *restrict c = C + 2 * (i0 + j * ldc);                                       \
                    int64_t p = 0;                                                                \
                    for (; p + 2 <= kb; p += 2) { /* 2 columns of Ap per pass over c */           \
                        T br0, bi0, br1, bi1;                                                     \
                        opb_##L(tb, B, ldb, p0 + p, j, ar, ai, bsgn, &br0, &bi0);                 \
                        opb_##L(tb, B, ldb, p0 + p + 1, j, ar, ai, bsgn, &br1, &bi1);             \
                        const T *restrict a = Ap + 2 * p * mb, *restrict a1 = a + 2 * mb;         \
                        for (int64_t i = 0; i < mb; i++) {                                        \
                            T pr = a[2 * i], pi = a[2 * i + 1], qr = a1[2 * i], qi = a1[2 * i + 1]; \
                            c[2 * i] += pr * br0 - pi * bi0 + qr * br1 - qi * bi1;                \
                            c[2 * i + 1] += pr * bi0 + pi * br0 + qr * bi1 + qi * br1;            \
                        }                                                                         \
                    }                                                                             \
                    for (; p < kb; p++) {                                                         \
                        T br, bi;                                                                 \
                        opb_##L(tb, B, ldb, p0 + p, j, ar, ai, bsgn, &br, &bi);                   \
                        const T *restrict a = Ap + 2 * p * mb;                                    \
                        for (int64_t i = 0; i < mb; i++) {                                        \
                            T pr = a[2 * i], pi = a[2 * i + 1];                                   \
                            c[2 * i] += pr * br - pi * bi;                                        \
                            c[2 * i + 1] += pr * bi + pi * br;                                    \
                        }                                                                         \
                    }                                                                             \
                }                                                                                 \
            }                                                                                     \
        }                                                                                         \
    }

TS_DEFINE_COMPLEX(c, float)
TS_DEFINE_COMPLEX(z, double)

// Arguments are expected to pass ts_gemm_check_args (callers above this check and report);
// invalid ones, an unknown precision, or a failed panel allocation leave C untouched.
void ts_gemm_ref(char prec, char ta, char tb, int64_t m, int64_t n, int64_t k, const void *alpha,
                 const void *A, int64_t lda, const void *B, int64_t ldb, const void *beta, void *C,
                 int64_t ldc) {
    size_t es = ts_prec_size(prec);
    if (es == 0 || ts_gemm_check_args(ta, tb, m, n, k, lda, ldb, ldc) != 0) return;
    if (m == 0 || n == 0) return;
    ta = op_upper(ta);
    tb = op_upper(tb);
    int real = !ts_prec_is_complex(prec);
    if (real) { // 'C' is 'T' for real data
        if (ta == 'C') ta = 'T';
        if (tb == 'C') tb = 'T';
    }
    void *Ap = malloc((size_t)TS_REF_MB * (size_t)TS_REF_KB * es);
    if (!Ap) return;
    switch (prec) {
    case 's':
        gemm_s(ta, tb, m, n, k, *(const float *)alpha, A, lda, B, ldb, *(const float *)beta, C, ldc, Ap);
        break;
    case 'd':
        gemm_d(ta, tb, m, n, k, *(const double *)alpha, A, lda, B, ldb, *(const double *)beta, C, ldc, Ap);
        break;
    case 'c':
        gemm_c(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, Ap);
        break;
    default:
        gemm_z(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, Ap);
        break;
    }
    free(Ap);
}
