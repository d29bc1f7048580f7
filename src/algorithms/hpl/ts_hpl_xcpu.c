// ts_hpl_xcpu.c: the HPL engine's CPU execution: local matrix in host memory, CPU BLAS, no streams.
#include <stdlib.h>
#include <string.h>

#include "algorithms/hpl/ts_hpl_internal.h"
#include "core/ts_error.h"
#include "core/ts_timer.h"

static int c_init(ts_hpl_state *s) { return 0; }
static void c_fini(ts_hpl_state *s) {
    free(s->hstamp);
    s->hstamp = NULL;
    s->nstamp = s->cap_stamp = 0;
}

static int c_malloc(ts_hpl_state *s, size_t bytes, void **p) {
    *p = NULL;
    if (bytes == 0) bytes = 64;
    if (posix_memalign(p, 64, bytes) != 0 || !*p)
        TS_RAISE(TS_ERR_NOMEM, "cannot allocate %zu bytes of host memory", bytes);
    return 0;
}
static void c_free(ts_hpl_state *s, void *p) { free(p); }

void ts_hpl_host_copy2d(double *dst, int64_t ldd, const double *src, int64_t lds, int64_t m, int64_t n) {
    if (m <= 0 || n <= 0 || dst == src) return;
    if (ldd == m && lds == m) {
        memmove(dst, src, (size_t)(m * n) * sizeof(double));
        return;
    }
    for (int64_t j = 0; j < n; j++) memmove(dst + j * ldd, src + j * lds, (size_t)m * sizeof(double));
}

static int c_to_host(ts_hpl_state *s, int st, double *h, int64_t ldh, const double *x, int64_t ldx,
                     int64_t m, int64_t n) {
    ts_hpl_host_copy2d(h, ldh, x, ldx, m, n);
    return 0;
}
static int c_to_x(ts_hpl_state *s, int st, double *x, int64_t ldx, const double *h, int64_t ldh,
                  int64_t m, int64_t n) {
    ts_hpl_host_copy2d(x, ldx, h, ldh, m, n);
    return 0;
}
static int c_x_copy(ts_hpl_state *s, int st, double *d, int64_t ldd, const double *src, int64_t lds,
                    int64_t m, int64_t n) {
    ts_hpl_host_copy2d(d, ldd, src, lds, m, n);
    return 0;
}
static int c_bytes(ts_hpl_state *s, int st, void *x, const void *h, size_t bytes) {
    if (x != h && bytes) memmove(x, h, bytes);
    return 0;
}

// Row gather/scatter between the column-major matrix and a row-major buffer, 32 columns at a
// time so that both sides stay in cache.
#define CB 32
static int c_bytes_h(ts_hpl_state *s, int st, void *h, const void *x, size_t bytes) {
    if (x != h && bytes) memmove(h, x, bytes);
    return 0;
}

static int c_pack(ts_hpl_state *s, int st, const double *A, int64_t lda, const int64_t *idx, int64_t n,
                  int64_t nc, double *buf) {
    for (int64_t c0 = 0; c0 < nc; c0 += CB) {
        int64_t c1 = c0 + CB < nc ? c0 + CB : nc;
        for (int64_t i = 0; i < n; i++) {
            const double *a = A + idx[i];
            double *b = buf + i * nc;
            for (int64_t c = c0; c < c1; c++) b[c] = a[c * lda];
        }
    }
    return 0;
}
static int c_unpack(ts_hpl_state *s, int st, const double *buf, const int64_t *bidx, int64_t n,
                    int64_t nc, double *A, int64_t lda, const int64_t *aidx) {
    for (int64_t c0 = 0; c0 < nc; c0 += CB) {
        int64_t c1 = c0 + CB < nc ? c0 + CB : nc;
        for (int64_t i = 0; i < n; i++) {
            double *a = A + aidx[i];
            const double *b = buf + bidx[i] * nc;
            for (int64_t c = c0; c < c1; c++) a[c * lda] = b[c];
        }
    }
    return 0;
}

static int c_trsm(ts_hpl_state *s, int st, int64_t m, int64_t n, const double *L, int64_t ldl,
                  double *B, int64_t ldb) {
    if (m <= 0 || n <= 0) return 0;
    return ts_dtrsm_cpu('L', 'L', 'N', 'U', m, n, 1.0, L, ldl, B, ldb);
}
static int c_gemm(ts_hpl_state *s, int st, int64_t m, int64_t n, int64_t k, double alpha,
                  const double *A, int64_t lda, const double *B, int64_t ldb, double beta, double *C,
                  int64_t ldc) {
    if (m <= 0 || n <= 0) return 0;
    return ts_gemm_cpu('d', 'N', 'N', m, n, k, &alpha, A, lda, B, ldb, &beta, C, ldc);
}
static int c_sync(ts_hpl_state *s, int st) { return 0; }
static int c_record(ts_hpl_state *s, int ev, int st) { return 0; }
static int c_wait(ts_hpl_state *s, int st, int ev) { return 0; }
static int c_evsync(ts_hpl_state *s, int ev) { return 0; }

// Everything runs on the calling thread, so the host clock is the timeline.
int ts_hpl_host_stamps_reset(ts_hpl_state *s, int n) {
    s->nstamp = 0;
    if (n <= s->cap_stamp) return 0;
    double *t = realloc(s->hstamp, (size_t)n * sizeof(double));
    if (!t) TS_RAISE(TS_ERR_NOMEM, "timing stamps");
    s->hstamp = t;
    s->cap_stamp = n;
    return 0;
}
static int c_stamp(ts_hpl_state *s, int st) {
    if (s->nstamp >= s->cap_stamp) return -1;
    s->hstamp[s->nstamp] = ts_now();
    return s->nstamp++;
}
double ts_hpl_host_stamp_diff(ts_hpl_state *s, int a, int b) {
    if (a < 0 || b < 0) return 0.0;
    return s->hstamp[b] - s->hstamp[a];
}

const ts_hpl_xops ts_hpl_xops_cpu = {
    "cpu", 0, c_init, c_fini, c_malloc, c_free, c_malloc, c_free, c_to_host, c_to_x, c_x_copy,
    c_bytes, c_bytes_h, NULL, c_pack, c_unpack, c_trsm, c_gemm, c_sync, c_record, c_wait, c_evsync,
    ts_hpl_host_stamps_reset, c_stamp, ts_hpl_host_stamp_diff, NULL, NULL,
    NULL, NULL, NULL, NULL,
};
