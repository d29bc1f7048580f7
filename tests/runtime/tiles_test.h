// tiles_test.h: shared helpers of the tile runtime tests: simulated sets, operands, reference check.
#ifndef TILES_TEST_H
#define TILES_TEST_H

#include "core/ts_error.h"
#include "core/ts_rng.h"
#include "device/ts_device.h"
#include "kernels/ts_kernels.h"
#include "runtime/ts_tiles.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Options of a simulated set: n devices, speeds (NULL = all 1), memory per device (0 = 64 MiB),
// pacing (0 = unpaced), peer links, no faults.
static inline ts_devset_opts tt_set_opts(int n, const double *speeds, size_t mem, double gflops, double link_gbs) {
    ts_devset_opts o;
    memset(&o, 0, sizeof o);
    o.backend = n > 0 ? TS_BACKEND_SIM : TS_BACKEND_NONE;
    o.sim_devices = n;
    o.sim_mem_bytes = mem ? mem : (size_t)64 << 20;
    for (int i = 0; i < n; i++) o.sim_speeds[i] = speeds ? speeds[i] : 1.0;
    o.sim_gflops = gflops;
    o.sim_link_gbs = link_gbs;
    o.sim_peer = 1;
    o.faults.device = -1;
    o.faults.flip_bit = -1;
    o.arena_fraction = 0.9;
    return o;
}

static inline ts_devset *tt_open_opts(const ts_devset_opts *o) {
    ts_devset *s = NULL;
    if (ts_devset_open(o, &s) != 0) {
        fprintf(stderr, "ts_devset_open: %s\n", ts_error_string());
        return NULL;
    }
    return s;
}

// A simulated set: n devices, speeds (NULL = all 1), memory per device, pacing (0 = unpaced).
static inline ts_devset *tt_open(int n, const double *speeds, size_t mem, double gflops, double link_gbs) {
    ts_devset_opts o = tt_set_opts(n, speeds, mem, gflops, link_gbs);
    return tt_open_opts(&o);
}

// With faults; gflops > 0 paces the devices, so that a call lasts long enough for every device's
// worker to take tasks even on a loaded machine (a lost device that never ran fails nothing).
static inline ts_devset *tt_open_faults_paced(int n, const ts_sim_faults *f, double gflops) {
    ts_devset_opts o = tt_set_opts(n, NULL, 0, gflops, 0);
    o.backend = TS_BACKEND_SIM;
    o.faults = *f;
    return tt_open_opts(&o);
}

static inline ts_devset *tt_open_faults(int n, const ts_sim_faults *f) { return tt_open_faults_paced(n, f, 0); }

// Runtime options for tests: explicit tile, no CPU worker unless asked, the CPU BLAS as the sim's
// device code (fast; the reference kernel is the default only for small tiles).
static inline ts_tiles_opts tt_opts(int64_t tile, double cpu_share) {
    ts_tiles_opts o;
    ts_tiles_opts_init(&o);
    o.tile = tile;
    o.cpu_share = cpu_share;
    o.engine = TS_ENGINE_CPU;
    return o;
}

// One problem: operands, C0, and the elementwise check against the CPU BLAS.
typedef struct {
    char prec, ta, tb;
    int64_t m, n, k, lda, ldb, ldc;
    size_t es;
    void *A, *B, *C, *C0;
    double alpha[2], beta[2];
} tt_prob;

static inline void tt_fill(char prec, uint64_t key, void *x, size_t bytes) {
    if (prec == 's' || prec == 'c') ts_fill_uniform_s(key, x, (int64_t)(bytes / sizeof(float)));
    else ts_fill_uniform_d(key, x, (int64_t)(bytes / sizeof(double)));
}

// pad: extra rows in every leading dimension. Operands uniform in [-0.5, 0.5).
static inline int tt_make(tt_prob *p, char prec, char ta, char tb, int64_t m, int64_t n, int64_t k, int64_t pad,
                          uint64_t seed) {
    memset(p, 0, sizeof *p);
    p->prec = prec, p->ta = ta, p->tb = tb, p->m = m, p->n = n, p->k = k;
    p->es = ts_prec_size(prec);
    int64_t ra = ta == 'N' ? m : k, ca = ta == 'N' ? k : m, rb = tb == 'N' ? k : n, cb = tb == 'N' ? n : k;
    p->lda = ra + pad, p->ldb = rb + pad, p->ldc = m + pad;
    size_t ba = (size_t)(p->lda * ca) * p->es, bb = (size_t)(p->ldb * cb) * p->es, bc = (size_t)(p->ldc * n) * p->es;
    p->A = malloc(ba), p->B = malloc(bb), p->C = malloc(bc), p->C0 = malloc(bc);
    if (!p->A || !p->B || !p->C || !p->C0) return -1;
    tt_fill(prec, seed * 3 + 1, p->A, ba);
    tt_fill(prec, seed * 3 + 2, p->B, bb);
    tt_fill(prec, seed * 3 + 3, p->C0, bc);
    memcpy(p->C, p->C0, bc);
    p->alpha[0] = 1.5, p->alpha[1] = -0.5;
    p->beta[0] = 0.75, p->beta[1] = 0.25;
    return 0;
}

static inline void tt_free(tt_prob *p) {
    free(p->A), free(p->B), free(p->C), free(p->C0);
    memset(p, 0, sizeof *p);
}

static inline void tt_scalar(char prec, const double v[2], unsigned char out[16]) {
    memset(out, 0, 16);
    if (prec == 's' || prec == 'c') {
        float f[2] = {(float)v[0], (float)v[1]};
        memcpy(out, f, sizeof f);
    } else {
        memcpy(out, v, 2 * sizeof(double));
    }
}

static inline int tt_run(ts_tiles *rt, tt_prob *p, ts_tiles_stats *st) {
    unsigned char al[16], be[16];
    tt_scalar(p->prec, p->alpha, al);
    tt_scalar(p->prec, p->beta, be);
    return ts_tiles_gemm(rt, p->prec, p->ta, p->tb, p->m, p->n, p->k, al, p->A, p->lda, p->B, p->ldb, be, p->C,
                         p->ldc, st);
}

static inline double tt_get(char prec, const void *x, int64_t idx, int part) {
    switch (prec) {
    case 's': return part ? 0 : ((const float *)x)[idx];
    case 'd': return part ? 0 : ((const double *)x)[idx];
    case 'c': return ((const float *)x)[2 * idx + part];
    default: return ((const double *)x)[2 * idx + part];
    }
}

// Max elementwise error of C against the CPU BLAS on C0, divided by the rounding bound
// 3 k eps (|alpha| k max|a||b| + |beta| max|c|): <= 1 passes; a wrong or missing tile gives >> 1.
static inline double tt_check(const tt_prob *p) {
    size_t bc = (size_t)(p->ldc * p->n) * p->es;
    void *R = malloc(bc);
    if (!R) return INFINITY;
    memcpy(R, p->C0, bc);
    unsigned char al[16], be[16];
    tt_scalar(p->prec, p->alpha, al);
    tt_scalar(p->prec, p->beta, be);
    ts_gemm_cpu(p->prec, p->ta, p->tb, p->m, p->n, p->k, al, p->A, p->lda, p->B, p->ldb, be, R, p->ldc);
    int cplx = ts_prec_is_complex(p->prec);
    double eps = (p->prec == 's' || p->prec == 'c') ? FLT_EPSILON : DBL_EPSILON;
    double amax = cplx ? 0.5 : 0.25, cmax = cplx ? 0.75 : 0.5;
    double anorm = cplx ? hypot(p->alpha[0], p->alpha[1]) : fabs(p->alpha[0]);
    double bnorm = cplx ? hypot(p->beta[0], p->beta[1]) : fabs(p->beta[0]);
    double tol = 3.0 * (double)(p->k + 2) * eps * (anorm * (double)p->k * amax + bnorm * cmax);
    double worst = 0;
    for (int64_t j = 0; j < p->n; j++)
        for (int64_t i = 0; i < p->m; i++)
            for (int part = 0; part < (cplx ? 2 : 1); part++) {
                double d = fabs(tt_get(p->prec, p->C, i + j * p->ldc, part) - tt_get(p->prec, R, i + j * p->ldc, part));
                if (!(d <= tol)) d = isnan(d) ? INFINITY : d;
                if (d / tol > worst) worst = d / tol;
            }
    // The padding rows of C must be untouched.
    for (int64_t j = 0; j < p->n; j++)
        for (int64_t i = p->m; i < p->ldc; i++)
            for (int part = 0; part < (cplx ? 2 : 1); part++)
                if (tt_get(p->prec, p->C, i + j * p->ldc, part) != tt_get(p->prec, p->C0, i + j * p->ldc, part))
                    worst = INFINITY;
    free(R);
    return worst;
}

#endif
