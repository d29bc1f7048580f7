// blas_client.c: a C program linked against -lblas, run through libtessera_blas with LD_PRELOAD: dgemm_ and cblas_dgemm vs the CPU BLAS.
//
// Both GEMMs (m=300, n=280, k=260, sizes that cut into several 256 tiles) are compared with the
// CPU BLAS's own dgemm_ (libopenblas.so.0 opened privately). Bound per element:
// |C - C_cpu| <= 2 k eps (|alpha| |A||B| + |beta| |C0|)_ij, twice the standard GEMM error bound,
// since both results carry at most k eps of rounding each. A replaced xerbla_ must see "DGEMM " 8.
#include <dlfcn.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void dgemm_t(const char *, const char *, const int *, const int *, const int *, const double *,
                     const double *, const int *, const double *, const int *, const double *, double *,
                     const int *, size_t, size_t);
dgemm_t dgemm_;
void cblas_dgemm(int layout, int ta, int tb, int m, int n, int k, double alpha, const double *A, int lda,
                 const double *B, int ldb, double beta, double *C, int ldc);

static char xerbla_name[8];
static int xerbla_info;
void xerbla_(const char *name, const int *info, size_t len);
void xerbla_(const char *name, const int *info, size_t len) {
    snprintf(xerbla_name, sizeof xerbla_name, "%.*s", (int)(len < 7 ? len : 7), name);
    xerbla_info = *info;
}

static double urand(unsigned *s) {
    *s = *s * 1103515245u + 12345u;
    return ((*s >> 8) & 0xffff) / 32768.0 - 1.0;
}

// errors beyond the bound; A is m x k (lda m), B is k x n (ldb k), column-major; C0 the original C
static int check(const char *what, int m, int n, int k, double alpha, const double *A, const double *B,
                 double beta, const double *C0, const double *C, const double *Cref) {
    int bad = 0;
    double worst = 0;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            double ab = 0;
            for (int l = 0; l < k; l++) ab += fabs(A[i + (size_t)l * m]) * fabs(B[l + (size_t)j * k]);
            double bound = 2.0 * k * DBL_EPSILON * (fabs(alpha) * ab + fabs(beta) * fabs(C0[i + (size_t)j * m]));
            double e = fabs(C[i + (size_t)j * m] - Cref[i + (size_t)j * m]);
            if (e / bound > worst) worst = e / bound;
            if (!(e <= bound)) bad++;
        }
    printf("%s: max error / bound = %.3g, %d elements beyond the bound\n", what, worst, bad);
    return bad;
}

int main(void) {
    const int m = 300, n = 280, k = 260;
    const double alpha = 0.75, beta = -1.25;
    double *A = malloc(sizeof(double) * m * k), *B = malloc(sizeof(double) * k * n);
    double *C0 = malloc(sizeof(double) * m * n), *C = malloc(sizeof(double) * m * n);
    double *Cref = malloc(sizeof(double) * m * n), *Ct = malloc(sizeof(double) * m * n);
    unsigned s = 12345;
    for (int i = 0; i < m * k; i++) A[i] = urand(&s);
    for (int i = 0; i < k * n; i++) B[i] = urand(&s);
    for (int i = 0; i < m * n; i++) C0[i] = urand(&s);

    void *h = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
    dgemm_t *cpu = h ? (dgemm_t *)dlsym(h, "dgemm_") : NULL;
    if (!cpu) {
        printf("cannot open the CPU BLAS libopenblas.so.0: %s\n", dlerror());
        return 1;
    }
    memcpy(Cref, C0, sizeof(double) * m * n);
    cpu("N", "N", &m, &n, &k, &alpha, A, &m, B, &k, &beta, Cref, &m, 1, 1);

    int bad = 0;
    memcpy(C, C0, sizeof(double) * m * n);
    dgemm_("N", "N", &m, &n, &k, &alpha, A, &m, B, &k, &beta, C, &m, 1, 1);
    bad += check("dgemm_", m, n, k, alpha, A, B, beta, C0, C, Cref);

    // row-major: C^T (n x m, ld m) = alpha B^T A^T + beta C^T; the same memory as column-major C
    memcpy(Ct, C0, sizeof(double) * m * n);
    cblas_dgemm(101, 111, 111, n, m, k, alpha, B, k, A, m, beta, Ct, m);
    // the row-major call above reads B as n x k row-major (= B column-major k x n, ld k) and A as
    // k x m row-major (= A column-major m x k, ld m)
    bad += check("cblas_dgemm (row-major)", m, n, k, alpha, A, B, beta, C0, Ct, Cref);

    int bad_lda = 1;
    dgemm_("N", "N", &m, &n, &k, &alpha, A, &bad_lda, B, &k, &beta, C, &m, 1, 1);
    printf("xerbla_ saw '%s' info %d (expected 'DGEMM ' 8)\n", xerbla_name, xerbla_info);
    if (strcmp(xerbla_name, "DGEMM ") != 0 || xerbla_info != 8) bad++;
    free(A), free(B), free(C0), free(C), free(Cref), free(Ct);
    dlclose(h);
    return bad ? 1 : 0;
}
