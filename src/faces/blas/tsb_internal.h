// tsb_internal.h: internal interfaces of libtessera_blas.so (the drop-in BLAS/CBLAS face of Tessera).
//
// The library exports only BLAS and CBLAS names (version script generated from the symbol lists
// in this folder). GEMM (tsb_gemm.c) and the other Level-3 routines (tsb_l3.c) are routed here: large calls to the tile runtime, the others
// to the CPU BLAS; every other symbol is forwarded to the CPU BLAS (tsb_forward.c). docs/blas.md.
#ifndef TSB_INTERNAL_H
#define TSB_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "runtime/ts_tiles.h"

#define TSB_EXPORT __attribute__((visibility("default")))

// The integer of the BLAS interface: INTEGER of the Fortran entries and the dimensions of the CBLAS
// ones (CBLAS_INT; the enum arguments stay int). 32-bit in libtessera_blas.so; 64-bit in the ILP64
// build libtessera_blas64.so (TSB_ILP64), which keeps the names as Debian's libblas64.so.3 does
// (-fdefault-integer-8, CBLAS with WeirdNEC).
#ifdef TSB_ILP64
typedef int64_t tsb_int;
#else
typedef int tsb_int;
#endif

// CBLAS enum values (Reference-LAPACK CBLAS/include/cblas.h); the enums are ints in the ABI.
enum { TSB_ROW_MAJOR = 101, TSB_COL_MAJOR = 102 };
enum { TSB_NO_TRANS = 111, TSB_TRANS = 112, TSB_CONJ_TRANS = 113 };

// The size a call is compared with its routine's offload threshold: m*n*k of the equivalent GEMM
// (SYMM/HEMM, TRMM/TRSM: m*n*m side L, m*n*n side R; the rank-k updates: n*n*k). Defaults per
// routine in tsb_config.c, measured by bench/blas_crossover.
// A threshold no call reaches ("none": always the CPU BLAS).
#define TSB_NEVER INT64_MAX

// Index of a routed routine (per-routine disable keys: TESSERA_BLAS_DISABLE_<NAME>).
enum {
    TSB_SGEMM, TSB_DGEMM, TSB_CGEMM, TSB_ZGEMM,
    // the other Level-3 routines (tsb_l3.c)
    TSB_SSYMM, TSB_DSYMM, TSB_CSYMM, TSB_ZSYMM, TSB_CHEMM, TSB_ZHEMM,
    TSB_SSYRK, TSB_DSYRK, TSB_CSYRK, TSB_ZSYRK, TSB_CHERK, TSB_ZHERK,
    TSB_SSYR2K, TSB_DSYR2K, TSB_CSYR2K, TSB_ZSYR2K, TSB_CHER2K, TSB_ZHER2K,
    TSB_STRMM, TSB_DTRMM, TSB_CTRMM, TSB_ZTRMM, TSB_STRSM, TSB_DTRSM, TSB_CTRSM, TSB_ZTRSM,
    TSB_NROUTINES
};
#define TSB_L3_FIRST TSB_SSYMM

// Configuration: environment variables over the optional file $TESSERA_BLAS_CONF.
typedef struct {
    char cpu_blas[1024];         // TESSERA_CPU_BLAS (default libopenblas.so.0; ILP64: libopenblas64.so.0)
    char cpu_blas_core[1024];    // ILP64 build: TESSERA_CPU_BLAS_LP64, the 32-bit CPU BLAS the runtime's
                                 // own CPU work calls (default libopenblas.so.0); the LP64 build uses cpu_blas
    int64_t threshold[TSB_NROUTINES]; // offload routine r when its equivalent m*n*k >= threshold[r]
                                 // (TESSERA_BLAS_THRESHOLD_<R>, TESSERA_BLAS_THRESHOLD, measured defaults)
    int max_devices;             // TESSERA_BLAS_DEVICES: all (0) or the first N devices
    int64_t tile;                // TESSERA_BLAS_TILE (0: the runtime's default)
    double cpu_share;            // TESSERA_BLAS_CPU_RATIO: auto, 0 or a fraction (ts_tiles_opts.cpu_share)
    int cpu_share_set;
    int disabled[TSB_NROUTINES]; // TESSERA_BLAS_DISABLE_SGEMM ... _ZTRSM = 1: always on the CPU BLAS
    FILE *trace;                 // TESSERA_BLAS_TRACE: a file, "stderr" or "stdout"; NULL = off
} tsb_config;

// The configuration, read once (pthread_once). A malformed value stops the program with a message.
const tsb_config *tsb_config_get(void);
// One trace line (prefix "tessera_blas: "), when tracing is on.
void tsb_trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int tsb_trace_on(void);

// The CPU BLAS symbol `name` (dlopen of TESSERA_CPU_BLAS once, then dlsym). Never NULL: a missing
// library or symbol stops the program with a message naming both.
void *tsb_cpu_sym(const char *name);
// The CPU BLAS symbol `name` for the library's internal (tessera_core's, 32-bit) calls: the same
// library as tsb_cpu_sym in the LP64 build, TESSERA_CPU_BLAS_LP64 in the ILP64 build.
void *tsb_core_sym(const char *name);

// The runtime (devices + CPU), created on first use; NULL when it cannot be created (a message is
// printed once and GEMM stays on the CPU BLAS).
ts_tiles *tsb_runtime_get(void);

// Reference CBLAS globals (defined in tsb_xerbla.c).
extern int RowMajorStrg;
extern int CBLAS_CallFromC;
void xerbla_(const char *srname, const tsb_int *info, size_t len);
void cblas_xerbla(tsb_int info, const char *rout, const char *form, ...);

#endif
