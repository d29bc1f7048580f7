// ts_l3.c: the Level-3 routines other than GEMM: names, operand sizes and flop counts of one call.
#include <string.h>

#include "kernels/ts_l3.h"

static const char *const l3_names[TS_L3_COUNT] = {"symm", "hemm", "syrk", "herk", "syr2k", "her2k", "trmm", "trsm"};

const char *ts_l3_name(int r) { return r >= 0 && r < TS_L3_COUNT ? l3_names[r] : "unknown"; }

ts_l3_prob ts_l3_prob_make(int r, char prec, char side, char uplo, char trans, char diag, int64_t a, int64_t b,
                           const double alpha[2], const double beta[2]) {
    ts_l3_prob p;
    memset(&p, 0, sizeof p);
    int cplx = ts_prec_is_complex(prec);
    p.r = r, p.prec = prec, p.side = side, p.uplo = uplo, p.trans = trans, p.diag = diag;
    double are = alpha[0], aim = cplx && r != TS_L3_HERK ? alpha[1] : 0;
    double bre = beta[0], bim = cplx && r != TS_L3_HERK && r != TS_L3_HER2K ? beta[1] : 0;
    p.alpha = ts_scalar_of(prec, are, aim), p.beta = ts_scalar_of(prec, bre, bim);
    p.za[0] = are, p.za[1] = aim, p.zb[0] = bre, p.zb[1] = bim;
    if (ts_l3_is_mm(r) || ts_l3_is_tri(r)) {
        p.m = a, p.n = b;
        p.ka = p.side == 'L' ? p.m : p.n;
        p.ra = p.ca = p.ka;
        p.rb = p.m, p.cb = p.n;
        p.rc = p.m;
        // standard counts: symm 2 m^2 n (side L) / 2 m n^2; trmm and trsm m^2 n / m n^2
        p.flops = (ts_l3_is_mm(r) ? 2.0 : 1.0) * (double)p.ka * (double)p.m * (double)p.n;
    } else {
        p.n = a, p.k = b;
        p.ra = p.trans == 'N' ? p.n : p.k;
        p.ca = p.trans == 'N' ? p.k : p.n;
        if (ts_l3_is_r2k(r)) p.rb = p.ra, p.cb = p.ca;
        p.rc = p.n;
        p.flops = (ts_l3_is_r2k(r) ? 2.0 : 1.0) * (double)p.n * (double)p.n * (double)p.k; // syrk n^2 k, syr2k 2 n^2 k
    }
    if (cplx) p.flops *= 4;
    return p;
}

void ts_l3_flags(const ts_l3_prob *p, char buf[5]) {
    buf[0] = ts_l3_is_rk(p->r) || ts_l3_is_r2k(p->r) ? '-' : p->side;
    buf[1] = p->uplo;
    buf[2] = ts_l3_is_mm(p->r) ? '-' : p->trans;
    buf[3] = ts_l3_is_tri(p->r) ? p->diag : '-';
    buf[4] = 0;
}
