// ts_hpcg_symgs_ref.c: HPCG's ComputeSYMGS, reference version (natural row order; a z-plane pipeline on several threads).
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "algorithms/hpcg/ts_hpcg.h"
#include "core/ts_error.h"

// One forward and one backward Gauss-Seidel sweep in natural row order (the reference's
// sequential semantics: every row sees the rows updated before it); on several threads as the
// z-plane pipeline below (the same result, bit for bit).
static inline void gs_row(const ts_hpcg_level *A, const double *r, double *x, int32_t i) {
    const double d = A->val[A->diag[i]];
    double s = r[i];
    for (int64_t j = A->rowptr[i]; j < A->rowptr[i + 1]; j++) s -= A->val[j] * x[A->col[j]];
    s += x[i] * d; // the loop took the diagonal term out
    x[i] = s / d;
}

// One x-line of the grid, rows i0 .. i0 + nx - 1, ascending (forward) or descending.
static inline void gs_line(const ts_hpcg_level *A, const double *r, double *x, int32_t i0, int32_t nx, int fwd) {
    if (fwd)
        for (int32_t i = i0; i < i0 + nx; i++) gs_row(A, r, x, i);
    else
        for (int32_t i = i0 + nx - 1; i >= i0; i--) gs_row(A, r, x, i);
}

// Spins briefly, then yields, then sleeps: with more threads than cores (ranks x threads beyond the
// node's cores) the thread waited for may not be running.
static void wait_progress(atomic_int *p, int need) {
    for (int spins = 0; atomic_load_explicit(p, memory_order_acquire) < need; spins++) {
        if (spins < 200) continue;
        if (spins < 400) sched_yield();
        else nanosleep(&(struct timespec){0, 20000}, NULL);
    }
}

// The sweeps as a pipeline over the z-planes of the local box (rows in natural order x fastest):
// a thread sweeps whole planes, line by line in natural order, and starts line y of plane z once
// the plane before it (in sweep order) has finished lines y - 1, y, y + 1 (the neighbours a row
// needs updated, and past which that plane no longer reads this one). Every row sees exactly what
// the sequential sweep shows it, so the result is the same bit for bit, with lines of contiguous
// rows per thread instead of the scattered rows of a wavefront level.
static int symgs_planes(ts_hpcg_level *A, const double *r, double *x, int nt) {
    const int32_t nx = A->g.nx, ny = A->g.ny, nz = A->g.nz;
    atomic_int *prog = malloc(sizeof(atomic_int) * 2 * (size_t)nz);
    if (!prog) TS_RAISE(TS_ERR_NOMEM, "hpcg: out of memory for the Gauss-Seidel pipeline");
    for (int32_t z = 0; z < 2 * nz; z++) atomic_init(&prog[z], 0);
    atomic_int *fp = prog, *bp = prog + nz; // lines done per plane: forward, backward sweep
#pragma omp parallel num_threads(nt)
    {
#ifdef _OPENMP
        const int t = omp_get_thread_num(), T = omp_get_num_threads();
#else
        const int t = 0, T = 1;
#endif
        for (int32_t z = t; z < nz; z += T)
            for (int32_t y = 0; y < ny; y++) {
                if (z > 0) wait_progress(&fp[z - 1], y + 2 < ny ? y + 2 : ny);
                gs_line(A, r, x, nx * (y + ny * z), nx, 1);
                atomic_store_explicit(&fp[z], y + 1, memory_order_release);
            }
#pragma omp barrier
        for (int32_t k = t; k < nz; k += T) {
            const int32_t z = nz - 1 - k;
            for (int32_t m = 0; m < ny; m++) {
                const int32_t y = ny - 1 - m;
                if (k > 0) wait_progress(&bp[z + 1], m + 2 < ny ? m + 2 : ny);
                gs_line(A, r, x, nx * (y + ny * z), nx, 0);
                atomic_store_explicit(&bp[z], m + 1, memory_order_release);
            }
        }
    }
    free(prog);
    return 0;
}

int ts_hpcg_symgs(const ts_comm *c, ts_hpcg_level *A, const double *r, double *x) {
    TS_CHECK(ts_hpcg_halo(c, A, x));
#ifdef _OPENMP
    int nt = omp_get_max_threads();
#else
    int nt = 1;
#endif
    if (nt > A->g.nz) nt = A->g.nz;
    if (nt > 1) return symgs_planes(A, r, x, nt);
    for (int32_t i = 0; i < A->nrow; i++) gs_row(A, r, x, i); // one thread: the sequential sweep itself
    for (int32_t i = A->nrow - 1; i >= 0; i--) gs_row(A, r, x, i);
    return 0;
}
