// tsb_extras.c: the reference BLAS's CBLAS helper subroutines (*sub_) and cblas_?cabs1, which OpenBLAS lacks.
//
// The reference CBLAS calls Fortran functions through subroutine wrappers (CBLAS/src/*sub.f:
// SUBROUTINE DDOTSUB(N,X,INCX,Y,INCY,DOT)); libblas.so.3 exports them, so a drop-in must too.
// Each calls the CPU BLAS's function of the same family.
#include <complex.h>
#include <math.h>

#include "tsb_internal.h"

typedef const tsb_int cint;

// result = f(n, x, incx, y, incy)
#define TSB_DOT_SUB(name, fn, R, T)                                                           \
    TSB_EXPORT void name(cint *n, const T *x, cint *incx, const T *y, cint *incy, R *res);      \
    void name(cint *n, const T *x, cint *incx, const T *y, cint *incy, R *res) {                \
        R (*f)(cint *, const T *, cint *, const T *, cint *) =                                  \
            (R(*)(cint *, const T *, cint *, const T *, cint *))tsb_cpu_sym(fn);                \
        *res = f(n, x, incx, y, incy);                                                          \
    }
// result = f(n, x, incx)
#define TSB_VEC_SUB(name, fn, R, T)                                                           \
    TSB_EXPORT void name(cint *n, const T *x, cint *incx, R *res);                              \
    void name(cint *n, const T *x, cint *incx, R *res) {                                        \
        R (*f)(cint *, const T *, cint *) = (R(*)(cint *, const T *, cint *))tsb_cpu_sym(fn);   \
        *res = f(n, x, incx);                                                                   \
    }

TSB_DOT_SUB(sdotsub_, "sdot_", float, float)
TSB_DOT_SUB(ddotsub_, "ddot_", double, double)
TSB_DOT_SUB(dsdotsub_, "dsdot_", double, float)
TSB_DOT_SUB(cdotcsub_, "cdotc_", float complex, float complex)
TSB_DOT_SUB(cdotusub_, "cdotu_", float complex, float complex)
TSB_DOT_SUB(zdotcsub_, "zdotc_", double complex, double complex)
TSB_DOT_SUB(zdotusub_, "zdotu_", double complex, double complex)
TSB_VEC_SUB(snrm2sub_, "snrm2_", float, float)
TSB_VEC_SUB(dnrm2sub_, "dnrm2_", double, double)
TSB_VEC_SUB(scnrm2sub_, "scnrm2_", float, float complex)
TSB_VEC_SUB(dznrm2sub_, "dznrm2_", double, double complex)
TSB_VEC_SUB(sasumsub_, "sasum_", float, float)
TSB_VEC_SUB(dasumsub_, "dasum_", double, double)
TSB_VEC_SUB(scasumsub_, "scasum_", float, float complex)
TSB_VEC_SUB(dzasumsub_, "dzasum_", double, double complex)
TSB_VEC_SUB(isamaxsub_, "isamax_", tsb_int, float)
TSB_VEC_SUB(idamaxsub_, "idamax_", tsb_int, double)
TSB_VEC_SUB(icamaxsub_, "icamax_", tsb_int, float complex)
TSB_VEC_SUB(izamaxsub_, "izamax_", tsb_int, double complex)

// SUBROUTINE SDSDOTSUB(N,SB,X,INCX,Y,INCY,DOT)
TSB_EXPORT void sdsdotsub_(cint *n, const float *sb, const float *x, cint *incx, const float *y, cint *incy, float *res);
void sdsdotsub_(cint *n, const float *sb, const float *x, cint *incx, const float *y, cint *incy, float *res) {
    float (*f)(cint *, const float *, const float *, cint *, const float *, cint *) =
        (float (*)(cint *, const float *, const float *, cint *, const float *, cint *))tsb_cpu_sym("sdsdot_");
    *res = f(n, sb, x, incx, y, incy);
}

// |Re z| + |Im z| (BLAS/SRC/scabs1.f), computed here: no CPU BLAS needed.
TSB_EXPORT void scabs1sub_(const float complex *z, float *res);
void scabs1sub_(const float complex *z, float *res) { *res = fabsf(crealf(*z)) + fabsf(cimagf(*z)); }
TSB_EXPORT void dcabs1sub_(const double complex *z, double *res);
void dcabs1sub_(const double complex *z, double *res) { *res = fabs(creal(*z)) + fabs(cimag(*z)); }
TSB_EXPORT float cblas_scabs1(const void *z);
float cblas_scabs1(const void *z) {
    const float *p = z;
    return fabsf(p[0]) + fabsf(p[1]);
}
TSB_EXPORT double cblas_dcabs1(const void *z);
double cblas_dcabs1(const void *z) {
    const double *p = z;
    return fabs(p[0]) + fabs(p[1]);
}
