// ts_hpl_env.h: the HPL engine's TESSERA_HPL_* settings that choose a path (one reader, ts_hpl_env.c).
#ifndef TS_HPL_ENV_H
#define TS_HPL_ENV_H

#include <stdint.h>

// Each leaves *v as it is when its variable is unset, and returns TS_ERR_PARSE (message set) when
// it is malformed. TESSERA_HPL_TRSM: *mode = 2 (fold: inv(L11) folded into L where the path has
// it), 1 (inverse: U by a GEMM with inv(L11)) or 0 (trsm).
int ts_hpl_env_trsm(int *mode);
// TESSERA_HPL_SWAP: *fused = 1 (fused) or 0 (split).
int ts_hpl_env_swap(int *fused);
// TESSERA_HPL_LAYOUT: *trans = 1 (row: [A|b] stored transposed where the path allows it) or 0 (col).
int ts_hpl_env_layout(int *trans);
// TESSERA_HPL_PANEL_TAIL: *rows = the hybrid panel's switch (>= 0: panels of fewer rows go to cuSOLVER).
int ts_hpl_env_panel_tail(int64_t *rows);

#endif
