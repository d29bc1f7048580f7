// ts_hpl_pfact.c: panel factorization over the process column (HPL's recursive RFACT, base PFACT, NBMIN, NDIV).
//
// The panel is held as W = [T; L]: T (jb x jb) is the diagonal block, kept on every rank of the
// process column (row k of T is set from the pivot reduction at step k), L the rank's local rows
// below it. Every operation on "rows r.." is one BLAS call on W rows r..ldw-1; rows of T below the
// current step are meaningful only on the rank that owns the diagonal block (elsewhere they are
// zeros that get replaced). Contract of a factorization of columns [off, off+n): on entry these
// columns are up to date with respect to columns [0, off); on return they hold L and U.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/hpl/ts_hpl_internal.h"
#include "core/ts_error.h"
#include "kernels/cpu/ts_cpu_blas12.h"
#include "kernels/ts_kernels.h"

typedef struct {
    ts_hpl_state *s;
    ts_hpl_panel *p;
    double *W;
    int64_t ldw;
    int jb;
    int is_curr;
    int64_t *lgrow;   // global row of each local L row
    double *rec;      // pivot record
    int pfact, rfact, nbmin, ndiv;
    int rc;
} pf_t;

// Pivot search, reduction and swap for column k: HPL_pdmxswp.
static void pivot(pf_t *f, int k) {
    double *W = f->W, *rec = f->rec;
    int64_t ldw = f->ldw, jb = f->jb;
    int64_t r0 = f->is_curr ? k : jb; // first candidate row of W
    rec[0] = -1.0;
    rec[1] = 1e300;
    rec[2] = f->is_curr ? 1.0 : 0.0;
    if (ldw > r0) {
        int64_t t = r0 + ts_cpu_idamax(ldw - r0, W + r0 + k * ldw, 1);
        rec[0] = fabs(W[t + k * ldw]);
        rec[1] = (double)(t < jb ? f->p->j + t : f->lgrow[t - jb]);
        for (int c = 0; c < jb; c++) rec[3 + c] = W[t + c * ldw];
    }
    if (f->is_curr)
        for (int c = 0; c < jb; c++) rec[3 + jb + c] = W[k + c * ldw];
    if (f->rc == 0) f->rc = ts_hpl_fail(f->s, ts_hpl_pivot(&f->s->col, rec, (int)jb));
    int64_t g = (int64_t)rec[1];
    if (rec[0] < 0) g = f->p->j + k; // no candidate anywhere (cannot happen): keep the row
    f->p->ipiv[k] = g;
    const double *prow = rec + 3, *top = rec + 3 + jb;
    int64_t j = f->p->j;
    if (g >= j + jb) {
        ts_hpl_state *s = f->s;
        if (ts_hpl_owner(g, s->NB, s->P) == s->myrow) {
            int64_t t = jb + ts_hpl_g2l(g, s->NB, s->P) - f->p->lr1;
            for (int c = 0; c < jb; c++) W[t + c * ldw] = top[c];
        }
    } else if (f->is_curr && g - j != k) {
        int64_t t = g - j;
        for (int c = 0; c < jb; c++) W[t + c * ldw] = W[k + c * ldw];
    }
    for (int c = 0; c < jb; c++) W[k + c * ldw] = prow[c];
    double piv = W[k + k * ldw];
    if (piv != 0.0) {
        if (ldw - k - 1 > 0) ts_cpu_dscal(ldw - k - 1, 1.0 / piv, W + k + 1 + k * ldw, 1);
    } else if (f->p->info == 0) {
        f->p->info = (int)(j + k + 1);
    }
}

// Base case, columns [off, off+n): right-looking, left-looking or Crout (HPL_pdpan{rl,ll,cr}N).
static void base(pf_t *f, int off, int n) {
    double *W = f->W;
    int64_t ldw = f->ldw;
    for (int k = off; k < off + n; k++) {
        int64_t m = ldw - k;     // rows k..
        int right = off + n - k - 1;
        if (f->pfact != 2 && k > off) { // left-looking and Crout bring column k up to date first
            if (f->pfact == 0)
                ts_cpu_dtrsv('L', 'N', 'U', k - off, W + off + off * ldw, ldw, W + off + k * ldw, 1);
            ts_cpu_dgemv('N', m, k - off, -1.0, W + k + off * ldw, ldw, W + off + k * ldw, 1, 1.0,
                         W + k + k * ldw, 1);
        }
        pivot(f, k);
        if (right <= 0) continue;
        if (f->pfact == 2) {
            if (m > 1)
                ts_cpu_dger(m - 1, right, -1.0, W + k + 1 + k * ldw, 1, W + k + (k + 1) * ldw, ldw,
                            W + k + 1 + (k + 1) * ldw, ldw);
        } else if (f->pfact == 1 && k > off) { // Crout: row k of U
            ts_cpu_dgemv('T', k - off, right, -1.0, W + off + (k + 1) * ldw, ldw, W + k + off * ldw, ldw,
                         1.0, W + k + (k + 1) * ldw, ldw);
        }
    }
}

// A failed BLAS call (bad arguments: a defect) is recorded in the run's sticky error, agreed at the
// next checkpoint; the pivot reductions go on meanwhile, since the whole process column takes part.
static void trsm_rows(pf_t *f, int r, int nr, int c, int nc) { // W[r:r+nr, c:c+nc] = L_rr^-1 (.)
    if (nr <= 0 || nc <= 0) return;
    ts_hpl_fail(f->s, ts_dtrsm_cpu('L', 'L', 'N', 'U', nr, nc, 1.0, f->W + r + r * f->ldw, f->ldw,
                                   f->W + r + c * f->ldw, f->ldw));
}

// W[r:r+m, c:c+nc] -= W[r:r+m, a:a+ka] * W[a:a+ka, c:c+nc]
static void gemm_rows(pf_t *f, int64_t r, int64_t m, int c, int nc, int a, int ka) {
    if (m <= 0 || nc <= 0 || ka <= 0) return;
    int64_t ldw = f->ldw;
    const double alpha = -1.0, beta = 1.0;
    ts_hpl_fail(f->s, ts_gemm_cpu('d', 'N', 'N', m, nc, ka, &alpha, f->W + r + a * ldw, ldw, f->W + a + c * ldw,
                                  ldw, &beta, f->W + r + c * ldw, ldw));
}

// Recursive factorization of columns [off, off+n) (HPL_pdrpan{ll,cr,rl}N).
static void rec(pf_t *f, int off, int n) {
    if (n <= f->nbmin || n < 2) {
        base(f, off, n);
        return;
    }
    int w = (n + f->ndiv - 1) / f->ndiv;
    if (w >= n) w = (n + 1) / 2;
    int end = off + n;
    int64_t ldw = f->ldw;
    for (int c = off; c < end; c += w) {
        int wc = end - c < w ? end - c : w;
        int rest = end - c - wc;
        if (f->rfact == 0) { // left-looking: bring the sub-panel up to date, then factor it
            trsm_rows(f, off, c - off, c, wc);
            gemm_rows(f, c, ldw - c, c, wc, off, c - off);
            rec(f, c, wc);
        } else if (f->rfact == 1) { // Crout: sub-panel columns, factor, then its rows of U
            gemm_rows(f, c, ldw - c, c, wc, off, c - off);
            rec(f, c, wc);
            if (rest > 0) {
                gemm_rows(f, c, wc, c + wc, rest, off, c - off);
                trsm_rows(f, c, wc, c + wc, rest);
            }
        } else { // right-looking: factor, then update everything to the right
            rec(f, c, wc);
            if (rest > 0) {
                trsm_rows(f, c, wc, c + wc, rest);
                gemm_rows(f, c + wc, ldw - c - wc, c + wc, rest, c, wc);
            }
        }
    }
}

int ts_hpl_pfact(ts_hpl_state *s, ts_hpl_panel *p) {
    const ts_hpl_case *hc = s->hc;
    pf_t f = {s, p, p->W, p->ldw, p->jb, s->myrow == p->curr, NULL, NULL, hc->pfact, hc->rfact,
              hc->nbmin < 1 ? 1 : hc->nbmin, hc->ndiv < 2 ? 2 : hc->ndiv, 0};
    f.lgrow = malloc((size_t)(p->mL + 1) * sizeof(int64_t));
    f.rec = malloc((size_t)TS_HPL_PIVOT_LEN(p->jb) * sizeof(double));
    if (!f.lgrow || !f.rec) {
        free(f.lgrow);
        free(f.rec);
        return ts_hpl_fail(s, TS_ERROR(TS_ERR_NOMEM, "panel factorization workspace"));
    }
    for (int64_t i = 0; i < p->mL; i++) f.lgrow[i] = ts_hpl_l2g(p->lr1 + i, s->NB, s->myrow, s->P);
    p->info = 0;
    rec(&f, 0, p->jb);
    free(f.lgrow);
    free(f.rec);
    return f.rc;
}
