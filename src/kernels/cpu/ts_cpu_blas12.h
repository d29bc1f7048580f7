// ts_cpu_blas12.h: Level 1 and 2 routines of the CPU BLAS (double, column-major) for the algorithms' host code.
//
// Thin calls of the system CBLAS (the same library as ts_gemm_cpu and ts_dtrsm_cpu in
// ts_kernels.h), so that every CPU BLAS call of tessera_core is made in kernels/. For inner loops:
// no argument checks and no status; sizes, increments and leading dimensions must fit in an int.
// Character arguments as in the reference BLAS ('U'/'L', 'N'/'T', 'U'/'N').
#ifndef TS_CPU_BLAS12_H
#define TS_CPU_BLAS12_H

#include <stdint.h>

// Index (0-based) of the first element of largest |x(i)|, i < n (n > 0).
int64_t ts_cpu_idamax(int64_t n, const double *x, int64_t incx);
// x = alpha x
void ts_cpu_dscal(int64_t n, double alpha, double *x, int64_t incx);
// x = op(A)^-1 x, A n x n triangular
void ts_cpu_dtrsv(char uplo, char trans, char diag, int64_t n, const double *A, int64_t lda, double *x,
                  int64_t incx);
// y = alpha op(A) x + beta y, A m x n
void ts_cpu_dgemv(char trans, int64_t m, int64_t n, double alpha, const double *A, int64_t lda,
                  const double *x, int64_t incx, double beta, double *y, int64_t incy);
// A = alpha x y^T + A, A m x n
void ts_cpu_dger(int64_t m, int64_t n, double alpha, const double *x, int64_t incx, const double *y,
                 int64_t incy, double *A, int64_t lda);

#endif
