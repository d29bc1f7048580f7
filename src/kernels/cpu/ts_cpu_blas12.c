// ts_cpu_blas12.c: Level 1 and 2 routines of the system CPU BLAS (CBLAS, column-major) behind ts_cpu_blas12.h.
#include "kernels/cpu/ts_cpu_blas12.h"

#include <cblas.h>

static int is(char c, char want) { return c == want || c == want + ('a' - 'A'); }

int64_t ts_cpu_idamax(int64_t n, const double *x, int64_t incx) {
    return (int64_t)cblas_idamax((int)n, x, (int)incx);
}

void ts_cpu_dscal(int64_t n, double alpha, double *x, int64_t incx) { cblas_dscal((int)n, alpha, x, (int)incx); }

void ts_cpu_dtrsv(char uplo, char trans, char diag, int64_t n, const double *A, int64_t lda, double *x,
                  int64_t incx) {
    cblas_dtrsv(CblasColMajor, is(uplo, 'U') ? CblasUpper : CblasLower, is(trans, 'N') ? CblasNoTrans : CblasTrans,
                is(diag, 'U') ? CblasUnit : CblasNonUnit, (int)n, A, (int)lda, x, (int)incx);
}

void ts_cpu_dgemv(char trans, int64_t m, int64_t n, double alpha, const double *A, int64_t lda,
                  const double *x, int64_t incx, double beta, double *y, int64_t incy) {
    cblas_dgemv(CblasColMajor, is(trans, 'N') ? CblasNoTrans : CblasTrans, (int)m, (int)n, alpha, A, (int)lda, x,
                (int)incx, beta, y, (int)incy);
}

void ts_cpu_dger(int64_t m, int64_t n, double alpha, const double *x, int64_t incx, const double *y,
                 int64_t incy, double *A, int64_t lda) {
    cblas_dger(CblasColMajor, (int)m, (int)n, alpha, x, (int)incx, y, (int)incy, A, (int)lda);
}
