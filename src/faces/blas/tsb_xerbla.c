// tsb_xerbla.c: the replaceable BLAS/CBLAS error handlers and the reference CBLAS globals.
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tsb_internal.h"

// The reference CBLAS globals (CBLAS/src/cblas_globals.c). The reference testers read
// RowMajorStrg in their own cblas_xerbla and link it by copy relocation, so the library must
// define it. Written only on the error path, right before cblas_xerbla, so that concurrent
// error-free calls never touch them.
TSB_EXPORT int RowMajorStrg = 0;
TSB_EXPORT int CBLAS_CallFromC = 0;

// Reference XERBLA (BLAS/SRC/xerbla.f): prints the message and STOPs, which gfortran ends with exit
// status 0. Weak and exported, so a program's own xerbla_ replaces it (the testers rely on that).
TSB_EXPORT __attribute__((weak)) void xerbla_(const char *srname, const tsb_int *info, size_t len) {
    size_t n = len;
    while (n > 0 && srname[n - 1] == ' ') n--; // SRNAME(1:LEN_TRIM(SRNAME))
    printf(" ** On entry to %.*s parameter number %2d had an illegal value\n", (int)n, srname, (int)*info);
    fflush(stdout);
    exit(0);
}

// For row-major calls the position reported is the one of the transposed column-major problem;
// map it back to the caller's argument (CBLAS/src/cblas_xerbla.c).
static int row_major_position(int info, const char *rout) {
    if (strstr(rout, "gemm")) {
        if (info == 5) return 4;
        if (info == 4) return 5;
        if (info == 11) return 9;
        if (info == 9) return 11;
    } else if (strstr(rout, "symm") || strstr(rout, "hemm")) {
        if (info == 5) return 4;
        if (info == 4) return 5;
    } else if (strstr(rout, "trmm") || strstr(rout, "trsm")) {
        if (info == 7) return 6;
        if (info == 6) return 7;
    } else if (strstr(rout, "gemv")) {
        if (info == 4) return 3;
        if (info == 3) return 4;
    } else if (strstr(rout, "gbmv")) {
        if (info == 4) return 3;
        if (info == 3) return 4;
        if (info == 6) return 5;
        if (info == 5) return 6;
    } else if (strstr(rout, "ger")) {
        if (info == 3) return 2;
        if (info == 2) return 3;
        if (info == 8) return 6;
        if (info == 6) return 8;
    } else if ((strstr(rout, "her2") || strstr(rout, "hpr2")) && !strstr(rout, "her2k")) {
        if (info == 8) return 6;
        if (info == 6) return 8;
    }
    return info;
}

// Reference cblas_xerbla: message on stderr, then exit(-1). Weak: the CBLAS testers define their own.
TSB_EXPORT __attribute__((weak)) void cblas_xerbla(tsb_int info, const char *rout, const char *form, ...) {
    if (RowMajorStrg) info = row_major_position((int)info, rout);
    if (info) fprintf(stderr, "Parameter %d to routine %s was incorrect\n", (int)info, rout);
    va_list ap;
    va_start(ap, form);
    vfprintf(stderr, form, ap);
    va_end(ap);
    exit(-1);
}
