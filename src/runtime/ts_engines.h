// ts_engines.h: the GEMM engines a user names, and one entry that runs a GEMM or a Level-3 routine on any of them.
//
// The kernels layer owns the engines that run on one device stream or the CPU (ts_engine in
// kernels/ts_kernels.h: auto, cublas, tessera, ref, cpu). The runtime adds the engines that take
// host-resident operands over every device of a set: the tile runtime (tiles) and NVIDIA's
// cuBLASXt (cublasxt, CUDA builds only) as a baseline. Their values follow the kernels' ones in
// the same ts_engine type, so that one variable holds any engine and each name is written once.
#ifndef TS_ENGINES_H
#define TS_ENGINES_H

#include <stdint.h>

#include "device/ts_device.h"
#include "kernels/ts_kernels.h"
#include "kernels/ts_l3.h"

#define TS_ENGINE_TILES ((ts_engine)(TS_ENGINE_CPU + 1))    // the tile runtime (ts_tiles.h): every device + the CPU
#define TS_ENGINE_CUBLASXT ((ts_engine)(TS_ENGINE_CPU + 2)) // cuBLASXt over every CUDA device of the set
#define TS_ENGINE_COUNT ((int)TS_ENGINE_CPU + 3)                 // engines in all (kernels' and the runtime's)

// Every engine's name ("auto", "cublas", "tessera", "ref", "cpu", "tiles", "cublasxt"); "unknown"
// for other values. The parser is case-insensitive; TS_ERR_ARG names the value and the choices.
const char *ts_engines_name(ts_engine e);
int ts_engines_parse(const char *s, ts_engine *out);
// 1 for the engines of this header (tiles, cublasxt): host operands, the whole device set.
int ts_engine_is_set_wide(ts_engine e);
// Why a set-wide engine cannot run over `devs` ("no GPU found", "the devices are simulated
// (cuBLASXt needs GPUs)", ...), or NULL when it can (and for every other engine).
const char *ts_engines_unavailable(ts_devset *devs, ts_engine e);

// Whether device engine e runs on dev in this build: a 1x1x1 DGEMM on a scratch stream. 0, or the
// failure's status with its message (the scratch stream and memory are released either way).
int ts_engines_probe(ts_device *dev, ts_engine e);

typedef struct ts_tiles ts_tiles;
struct ts_tiles_stats;

// The set-wide engines opened over one device set (which must outlive it).
typedef struct ts_engines ts_engines;
int ts_engines_create(ts_devset *devs, ts_engines **out);
void ts_engines_destroy(ts_engines *x); // NULL is fine
// Opens engine e once (tiles: the tile runtime from ts_tiles_opts_init, with its timeline recorded
// when trace is 1; cublasxt: the handle over every CUDA device); other engines need nothing.
// TS_ERR_PARSE: a malformed TESSERA_* variable of the runtime; TS_ERR_UNSUPPORTED: not in this build
// or not on these devices.
int ts_engines_open(ts_engines *x, ts_engine e, int trace);
ts_tiles *ts_engines_tiles(const ts_engines *x); // NULL until tiles is opened
// The set-wide engines use the first ndev devices of the set from now on (0 or the set's size: all):
// those already open are closed and opened again over that many (the tile runtime with its trace
// flag; cuBLASXt's block dimension must be set again). TS_ERR_ARG when the set has fewer.
int ts_engines_set_devices(ts_engines *x, int ndev);
int ts_engines_devices(const ts_engines *x); // devices the set-wide engines use
// cuBLASXt's block dimension (cublasXtSetBlockDim) for the calls that follow.
int ts_engines_set_xt_block(ts_engines *x, int block);

// C = alpha op(A) op(B) + beta C on engine e, column-major, as ts_dev_gemm. With a stream, the
// device engines run on it (device pointers, asynchronous); without one (st NULL), or for cpu,
// tiles and cublasxt, the operands are in host memory and the call returns when C is complete
// (ref: the reference kernel on the host). stats (tiles only, may be NULL): what the runtime did.
int ts_engines_gemm(ts_engines *x, ts_stream *st, ts_engine e, char prec, char ta, char tb, int64_t m, int64_t n,
                    int64_t k, const void *alpha, const void *A, int64_t lda, const void *B, int64_t ldb,
                    const void *beta, void *C, int64_t ldc, struct ts_tiles_stats *stats);
// The Level-3 call p on host operands with engine cpu, tiles or cublasxt: W is C (symm, syrk,
// syr2k) or B in place (trmm, trsm); cuBLASXt's TRMM is out of place and reads B from B.
int ts_engines_l3(ts_engines *x, ts_engine e, const ts_l3_prob *p, const void *A, const void *B, void *W,
                  struct ts_tiles_stats *stats);

#endif
