// swap_plan_util.h: random row-interchange plans of one HPL panel on one process row, and their reference result (tests of ts_lu_swap_rows).
//
// A plan is built the way ts_hpl_swap_plan builds it for P = 1: jb pivots ipiv[i] drawn in
// [i, mp) as partial pivoting finds them; S = the diagonal block's rows and the pivot rows,
// ascending; pk = S; the content that ends up in row S[t] is the old row S[cur[t]]; U's row i is
// the new row i; al/ab list the rows below the diagonal block whose content changed and where it
// comes from. The reference applies the pivots one by one to a copy of the columns, as LAPACK's
// dlaswp does; U is its first jb rows.
#ifndef SWAP_PLAN_UTIL_H
#define SWAP_PLAN_UTIL_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int64_t mp, jb, npack, nown;
    int64_t *ipiv;            // 0-based pivot rows, jb
    int64_t *pk, *ub, *al, *ab;
} swap_plan;

static uint64_t swap_plan_rand(uint64_t *x) { // splitmix64
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// near = 1: every fourth pivot is drawn close to its row (within 4), so that S also holds pivot
// rows inside the diagonal block and chains of interchanges, not only far rows; near = 0: every
// pivot anywhere in [i, mp), as on HPL's random matrices.
static int swap_plan_make(uint64_t key, int64_t mp, int64_t jb, int near, swap_plan *p) {
    memset(p, 0, sizeof *p);
    p->mp = mp;
    p->jb = jb;
    int64_t *idx = malloc(sizeof(int64_t) * (size_t)mp); // row -> position in S, or -1
    int64_t *S = malloc(sizeof(int64_t) * (size_t)(2 * jb)), *cur = malloc(sizeof(int64_t) * (size_t)(2 * jb));
    p->ipiv = malloc(sizeof(int64_t) * (size_t)jb);
    p->pk = malloc(sizeof(int64_t) * (size_t)(2 * jb));
    p->ub = malloc(sizeof(int64_t) * (size_t)jb);
    p->al = malloc(sizeof(int64_t) * (size_t)(2 * jb));
    p->ab = malloc(sizeof(int64_t) * (size_t)(2 * jb));
    if (!idx || !S || !cur || !p->ipiv || !p->pk || !p->ub || !p->al || !p->ab) return -1;
    uint64_t x = key;
    for (int64_t i = 0; i < jb; i++) {
        uint64_t r = swap_plan_rand(&x);
        int64_t span = (near && i % 4 == 3) ? (mp - i < 4 ? mp - i : 4) : mp - i;
        p->ipiv[i] = i + (int64_t)(r % (uint64_t)span);
    }
    for (int64_t r = 0; r < mp; r++) idx[r] = -1;
    int64_t ns = 0;
    for (int64_t i = 0; i < jb; i++) idx[i] = 0;
    for (int64_t i = 0; i < jb; i++) idx[p->ipiv[i]] = 0;
    for (int64_t r = 0; r < mp; r++)
        if (idx[r] == 0) {
            idx[r] = ns;
            S[ns++] = r;
        }
    for (int64_t t = 0; t < ns; t++) cur[t] = t;
    for (int64_t i = 0; i < jb; i++) {
        int64_t a = idx[i], b = idx[p->ipiv[i]], tmp = cur[a];
        cur[a] = cur[b];
        cur[b] = tmp;
    }
    p->npack = ns;
    memcpy(p->pk, S, sizeof(int64_t) * (size_t)ns);
    for (int64_t i = 0; i < jb; i++) p->ub[i] = cur[idx[i]];
    for (int64_t t = 0; t < ns; t++)
        if (S[t] >= jb && cur[t] != t) {
            p->al[p->nown] = S[t];
            p->ab[p->nown] = cur[t];
            p->nown++;
        }
    free(idx);
    free(S);
    free(cur);
    return 0;
}

static void swap_plan_free(swap_plan *p) {
    free(p->ipiv);
    free(p->pk);
    free(p->ub);
    free(p->al);
    free(p->ab);
}

// Aout (mp x nc, lda) = A with the pivots applied in order; U (jb x nc, ldu) = its first jb rows.
static void swap_plan_ref(const swap_plan *p, const double *A, int64_t lda, int64_t nc, double *Aout,
                          double *U, int64_t ldu) {
    memcpy(Aout, A, sizeof(double) * (size_t)(lda * nc));
    for (int64_t c = 0; c < nc; c++) {
        double *col = Aout + c * lda;
        for (int64_t i = 0; i < p->jb; i++) {
            double t = col[i];
            col[i] = col[p->ipiv[i]];
            col[p->ipiv[i]] = t;
        }
        for (int64_t i = 0; i < p->jb; i++) U[i + c * ldu] = col[i];
    }
}

#endif
