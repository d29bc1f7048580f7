// ts_hpl_env.h: the HPL engine's TESSERA_HPL_* settings that choose a path (one reader, ts_hpl_env.c).
#ifndef TS_HPL_ENV_H
#define TS_HPL_ENV_H

// Each leaves *v as it is when its variable is unset, and returns TS_ERR_PARSE (message set) when
// it is malformed. TESSERA_HPL_TRSM: *inv = 1 (inverse) or 0 (trsm).
int ts_hpl_env_trsm(int *inv);
// TESSERA_HPL_SWAP: *fused = 1 (fused) or 0 (split).
int ts_hpl_env_swap(int *fused);

// TESSERA_HPL_TAIL: narrower panels at the end of a 1 x 1 factorization, "off" or a list of stages
// "ROWS:NB[,ROWS:NB]..." (at most TS_HPL_TAIL_MAX): a panel that starts with at most ROWS rows left
// is at most NB wide. *t->n = 0 for off; unset leaves *t.
#define TS_HPL_TAIL_MAX 4
typedef struct {
    int n;
    long long rows[TS_HPL_TAIL_MAX], nb[TS_HPL_TAIL_MAX];
} ts_hpl_tail;
int ts_hpl_env_tail(ts_hpl_tail *t);

#endif
