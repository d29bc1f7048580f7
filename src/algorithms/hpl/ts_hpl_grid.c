// ts_hpl_grid.c: block-cyclic index maps of the P x Q grid (numroc, global <-> local).
#include "algorithms/hpl/ts_hpl_internal.h"

int64_t ts_hpl_nbefore(int64_t g, int64_t nb, int iproc, int nprocs) {
    if (g <= 0) return 0;
    int64_t blocks = g / nb, rem = g % nb;
    int64_t n = (blocks / nprocs) * nb;
    int64_t extra = blocks % nprocs;
    if (iproc < extra) n += nb;
    else if (iproc == extra) n += rem;
    return n;
}

int64_t ts_hpl_numroc(int64_t n, int64_t nb, int iproc, int nprocs) {
    return ts_hpl_nbefore(n, nb, iproc, nprocs);
}

int ts_hpl_owner(int64_t g, int64_t nb, int nprocs) { return (int)((g / nb) % nprocs); }

int64_t ts_hpl_g2l(int64_t g, int64_t nb, int nprocs) {
    return (g / nb / nprocs) * nb + g % nb;
}

int64_t ts_hpl_l2g(int64_t l, int64_t nb, int iproc, int nprocs) {
    return ((l / nb) * nprocs + iproc) * nb + l % nb;
}
