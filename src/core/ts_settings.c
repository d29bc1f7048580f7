// ts_settings.c: the table of every environment variable Tessera reads, the one reader of the environment, and the misspelling check.
#include "ts_settings.h"

#include "ts_env.h"
#include "ts_error.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

// One entry per variable; docs/settings.md is generated from these lines and checked against them
// (tests/docs/check_docs.py parses the TS_SETTING and TS_FAMILY lines: keep one string per field,
// adjacent literals allowed, no other macros inside).
#define TS_SETTING(layer, name, type, kind, def, effect, read_in) {name, type, layer, kind, def, effect, read_in, NULL}
#define TS_FAMILY(layer, name, type, kind, def, effect, read_in, members) {name, type, layer, kind, def, effect, read_in, members}

#define BLAS_ROUTINES                                                                                          \
    "SGEMM DGEMM CGEMM ZGEMM SSYMM DSYMM CSYMM ZSYMM CHEMM ZHEMM SSYRK DSYRK CSYRK ZSYRK CHERK ZHERK SSYR2K "   \
    "DSYR2K CSYR2K ZSYR2K CHER2K ZHER2K STRMM DTRMM CTRMM ZTRMM STRSM DTRSM CTRSM ZTRSM"

static const ts_setting table[] = {
    // core
    TS_SETTING("core", "TESSERA_LOG", TS_SET_STR, "user", "info",
               "log level: error, warn, info, debug, trace (or 0-4); `-q`/`-v` override it", "core/ts_log.c"),
    TS_SETTING("core", "TESSERA_PROGRESS", TS_SET_INT, "user",
               "live line on a terminal; whole plain lines otherwise (HPL: at most one a second), none from a "
               "multi-rank launch to a non-terminal",
               "0: no progress lines; 1: plain lines even on a terminal and under mpirun (HPL: every iteration) "
               "(a malformed value only warns)",
               "core/ts_progress.c"),
    // device layer
    TS_SETTING("device", "TESSERA_BACKEND", TS_SET_STR, "user", "auto",
               "device backend: auto (CUDA if a GPU is present), cuda, sim, none", "device/ts_device.c"),
    TS_SETTING("device", "TESSERA_MAX_DEVICES", TS_SET_INT, "user", "all", "use at most this many devices",
               "device/ts_device.c"),
    TS_SETTING("device", "TESSERA_ARENA_FRACTION", TS_SET_DOUBLE, "user", "0.90",
               "share of free GPU memory each device arena takes, in (0, 1]", "device/ts_device.c"),
    TS_SETTING("device", "TESSERA_ARENA_BYTES", TS_SET_SIZE, "user", "(from the fraction)",
               "explicit arena size per device (size string)", "device/ts_device.c"),
    TS_SETTING("device", "TESSERA_SIM_DEVICES", TS_SET_INT, "sim/test", "0",
               "number of simulated devices; > 0 uses them instead of GPUs unless `TESSERA_BACKEND=cuda` (the "
               "HPL faces also read it: whether a device can run the Linpack)",
               "device/ts_device.c faces/cli/cmd_hpl.c faces/cli/cmd_hpl_mxp.c"),
    TS_SETTING("device", "TESSERA_SIM_MEM", TS_SET_SIZE, "sim/test", "256M",
               "memory per simulated device (at least 4096 bytes)", "device/ts_device.c"),
    TS_SETTING("device", "TESSERA_SIM_SPEEDS", TS_SET_STR, "sim/test", "1",
               "relative speed per simulated device, e.g. `1,0.5,0.5`", "device/ts_device.c"),
    TS_SETTING("device", "TESSERA_SIM_GFLOPS", TS_SET_DOUBLE, "sim/test", "0",
               "pace simulated kernels at this rate for speed 1.0 (0: as fast as the CPU)", "device/ts_device.c"),
    TS_SETTING("device", "TESSERA_SIM_LINK_GBS", TS_SET_DOUBLE, "sim/test", "0",
               "pace simulated host-link copies in GB/s (0: unpaced)", "device/ts_device.c"),
    TS_SETTING("device", "TESSERA_SIM_PEER", TS_SET_BOOL, "sim/test", "1",
               "simulated devices are peers of each other (0: no peer access, copies through the host)",
               "device/ts_device.c"),
    TS_SETTING("device", "TESSERA_SIM_UNMAPPED", TS_SET_BOOL, "sim/test", "0",
               "1: simulated kernels may not address host memory (the copy paths of unregistered memory run)",
               "device/ts_device.c"),
    TS_SETTING("device", "TESSERA_SIM_FAULTS", TS_SET_STR, "sim/test", "none",
               "fault injection: `dev=D,flip=N,bit=B`, `copy=N`, `kernel=N`, `lose=N`, `tear=N` (README.md, "
               "docs/burn.md)",
               "device/ts_device.c"),
    // kernels
    TS_SETTING("kernels", "TESSERA_SIM_GEMM_REF_FLOPS", TS_SET_DOUBLE, "sim/test", "2·256³",
               "on simulated devices, engine `auto` runs the reference kernel up to this many flops, the CPU BLAS "
               "above (also checked by the burn loop)",
               "kernels/ts_kernels.c algorithms/burn/ts_burn_run.c"),
    TS_SETTING("kernels", "TESSERA_CPLX_WORKSPACE", TS_SET_SIZE, "user", "4G",
               "device workspace cap of CGEMM/ZGEMM by 4M (never more than the arena's largest free block; larger "
               "products run in blocks)",
               "kernels/cuda/ts_cgemm_4m.cu"),
    TS_SETTING("kernels", "TESSERA_TC_TILE", TS_SET_STR, "experiment",
               "by shape (`small`, `large32pf`, `large32`, `rankklpf`; `rankk` unaligned; "
               "bench/notes/gemm-kernels.md)",
               "forces an own-DGEMM variant: rankk, small, large32, large32pf, rankklpf (the others were removed in "
               "bd186b2)",
               "kernels/cuda/ts_dgemm_tc.cu"),
    TS_SETTING("kernels", "TESSERA_SGEMM_TILE", TS_SET_STR, "experiment", "by shape (`small` for few tiles, else `large`)",
               "forces an own-SGEMM variant: large, small (an unknown name is an error; async, async16, wide, large16 "
               "removed in bd186b2)",
               "kernels/cuda/ts_sgemm.cu"),
    // runtime
    TS_SETTING("runtime", "TESSERA_TILE", TS_SET_I64, "user", "4096 CUDA, 256 sim, 512 CPU only", "tile edge T",
               "runtime/ts_tiles.c"),
    TS_SETTING("runtime", "TESSERA_TILES_CPU", TS_SET_STR, "user", "auto",
               "the CPU worker: `auto`, `adaptive`, `0` (off) or a fraction in (0, 1] (out-of-core HPL: 0 unless "
               "set)",
               "runtime/ts_tiles.c algorithms/hpl/ts_hpl_xooc.c"),
    TS_SETTING("runtime", "TESSERA_TILES_MEM", TS_SET_DOUBLE, "user", "0.9",
               "share of the arena's free memory for the tile cache, in (0, 1]", "runtime/ts_tiles.c"),
    TS_SETTING("runtime", "TESSERA_TILES_SAVE_C", TS_SET_BOOL, "user", "1",
               "keep the original of each written C tile until its write-back completed (fault re-runs); 0 skips "
               "them (out-of-core HPL: 0 unless set)",
               "runtime/ts_tiles.c algorithms/hpl/ts_hpl_xooc.c"),
    TS_SETTING("runtime", "TESSERA_PERFDB", TS_SET_STR, "user", "~/.cache/tessera/perfdb.txt",
               "performance database of the `adaptive` CPU share", "runtime/ts_perfdb.c"),
    TS_SETTING("runtime", "TESSERA_TILES_PEER", TS_SET_BOOL, "user", "1", "fetch tiles from peer devices' caches",
               "runtime/ts_tiles.c"),
    TS_SETTING("runtime", "TESSERA_TILES_PINS", TS_SET_INT, "user", "8", "host registrations kept across calls, 0..29",
               "runtime/ts_tiles.c"),
    TS_SETTING("runtime", "TESSERA_TILES_DEPTH", TS_SET_INT, "experiment", "0 (auto: 3 GEMM, 4 level-3)",
               "C tiles in flight per device, 1..8", "runtime/ts_tiles.c"),
    TS_SETTING("runtime", "TESSERA_TILES_RESERVE", TS_SET_INT, "experiment", "2", "reservation station size, 0..64",
               "runtime/ts_tiles.c"),
    TS_SETTING("runtime", "TESSERA_TILES_DIAG_RANK", TS_SET_BOOL, "experiment", "1",
               "diagonal C tiles of ?SYRK/?SYR2K by rank-k kernels (0: whole-tile GEMMs; +9-10% at 32768, 80228cf)",
               "runtime/ts_tiles.c"),
    TS_SETTING("runtime", "TESSERA_TILES_DIAG_TRMM", TS_SET_BOOL, "experiment", "1",
               "diagonal products of TRMM by ?trmm (0: GEMM on the zero-filled block; +1-4%)", "runtime/ts_tiles.c"),
    TS_SETTING("runtime", "TESSERA_TILES_FORWARD", TS_SET_BOOL, "experiment", "1",
               "a TRMM/TRSM chain's next tile may start before its predecessor's write-back (TRSM +6%, 80228cf)",
               "runtime/ts_tiles.c"),
    TS_SETTING("runtime", "TESSERA_TILES_TRI_BASE", TS_SET_I64, "experiment", "-1 (tile / 8, at least 32)",
               "order down to which diagonal TRMM/TRSM blocks are split; 0: not split (no change measured, 573afac)",
               "runtime/ts_tiles.c"),
    // algorithms/hpl
    TS_SETTING("hpl", "TESSERA_HPL_PANEL", TS_SET_STR, "user", "cuSOLVER on CUDA devices, host elsewhere",
               "panel engine when `--panel` is absent: cpu, tessera, cusolver (another value is ignored with a "
               "warning)",
               "algorithms/hpl/ts_hpl_engine.c"),
    TS_SETTING("hpl", "TESSERA_HPL_NCCL", TS_SET_BOOL, "user", "1",
               "device-to-device panel broadcast and row swaps by NCCL between ranks; 0: through host memory and "
               "MPI (agreed by the minimum over ranks)",
               "algorithms/hpl/ts_hpl_xdev.c"),
    TS_SETTING("hpl", "TESSERA_HPL_OOC_THREADS", TS_SET_INT, "user", "every core (half with the panel on the host), at most 32",
               "threads of the out-of-core path's host row swaps", "algorithms/hpl/ts_hpl_xooc.c"),
    TS_SETTING("hpl", "TESSERA_HPL_TRSM", TS_SET_STR, "experiment", "inverse on the device path (P = 1)",
               "`trsm`: U by DTRSM instead of a GEMM with inv(L11) (46.06 against 45.37 TFLOP/s, c93edd1)",
               "algorithms/hpl/ts_hpl_env.c"),
    TS_SETTING("hpl", "TESSERA_HPL_SWAP", TS_SET_STR, "experiment", "fused on devices",
               "`split`: row swaps by pack and unpack (46.51 against 46.11, 1e51177)", "algorithms/hpl/ts_hpl_env.c"),
    TS_SETTING("hpl", "TESSERA_HPL_PIPE", TS_SET_BOOL, "experiment", "0",
               "1: the update pipelined in column chunks (no gain: 46.65 against 46.76, bd0e6e5)",
               "algorithms/hpl/ts_hpl_engine.c algorithms/hpl/ts_hpl_env.c"),
    TS_SETTING("hpl", "TESSERA_HPL_PANEL_SMS", TS_SET_INT, "experiment", "0 (whole device)",
               "confine the panel stream to a green context of N SMs (our panel only; no gain measured)",
               "algorithms/hpl/ts_hpl_env.c"),
    TS_SETTING("hpl", "TESSERA_HPL_PANEL_WIDEN", TS_SET_BOOL, "experiment", "1",
               "0: a confined panel stream is never widened to the whole device",
               "algorithms/hpl/ts_hpl_env.c algorithms/hpl/ts_hpl_xdev.c"),
    TS_SETTING("hpl", "TESSERA_HPL_PANEL_PRIORITY", TS_SET_BOOL, "experiment", "1 (high)",
               "0: the panel stream at normal priority", "algorithms/hpl/ts_hpl_env.c algorithms/hpl/ts_hpl_xdev.c"),
    TS_SETTING("hpl", "TESSERA_HPL_MPI_BCAST", TS_SET_BOOL, "experiment", "0",
               "1: the host-path panel broadcast by MPI_Bcast instead of HPL.dat's BCAST variant (a malformed value "
               "counts as 0)",
               "algorithms/hpl/ts_hpl_bcast.c"),
    TS_SETTING("hpl", "TESSERA_HPL_OOC_MIN_FLOPS", TS_SET_DOUBLE, "experiment", "2·2048²·256",
               "out-of-core path: GEMMs below this many flops stay on the CPU BLAS (a malformed value is ignored)",
               "algorithms/hpl/ts_hpl_xooc.c"),
    TS_SETTING("hpl", "TESSERA_TEST_HPL_COL_EMUL", TS_SET_BOOL, "sim/test", "0",
               "1: on simulated devices the device path of several process rows with the exchange through host "
               "staging",
               "algorithms/hpl/ts_hpl_xdev.c"),
    TS_SETTING("hpl", "TESSERA_TEST_HPL_WIDEN_COL", TS_SET_I64, "sim/test", "(none)",
               "forces the column at which a confined panel stream widens", "algorithms/hpl/ts_hpl_xdev.c"),
    // algorithms/hpcg
    TS_SETTING("hpcg", "TESSERA_HPCG_NCCL", TS_SET_BOOL, "user", "1 on CUDA GPUs, 0 elsewhere",
               "halo exchange device to device by NCCL; 0: pinned host staging and MPI (agreed)",
               "algorithms/hpcg/ts_hpcg_setup.c"),
    TS_SETTING("hpcg", "TESSERA_HPCG_GRAPH", TS_SET_BOOL, "user", "1 on CUDA GPUs, 0 on simulated devices",
               "the V-cycle captured once and replayed as a graph (+2.4%); 0: kernel by kernel (agreed)",
               "algorithms/hpcg/ts_hpcg_setup.c"),
    TS_SETTING("hpcg", "TESSERA_HPCG_REF_DROP", TS_SET_DOUBLE, "dev", "(none)",
               "skip the host's reference CG, use this residual drop in (0, 1); the run is never official",
               "algorithms/hpcg/ts_hpcg_driver.c"),
    TS_SETTING("hpcg", "TESSERA_HPCG_OVERLAP", TS_SET_BOOL, "experiment", "0",
               "1: the halo exchange on a stream of its own, overlapped (1.1% slower on two H200s, eadb540) (agreed)",
               "algorithms/hpcg/ts_hpcg_setup.c"),
    TS_SETTING("hpcg", "TESSERA_HPCG_HALO_BLOCKS", TS_SET_BOOL, "experiment", "1",
               "0: halo rows pad their colour's ELL block instead of blocks of their own (-5.5% on two ranks, "
               "08e58c3)",
               "algorithms/hpcg/ts_hpcg_setup.c"),
    TS_SETTING("hpcg", "TESSERA_HPCG_MIDX", TS_SET_BOOL, "experiment", "0",
               "1: halo exchanged between the smoother's sweeps too (changes the preconditioner: never official; a "
               "study)",
               "algorithms/hpcg/ts_hpcg_setup.c"),
    // algorithms/burn and faces/cli
    TS_SETTING("cli", "TESSERA_BURN_STREAMS", TS_SET_INT, "user", "2",
               "streams per device of `tessera burn` (1-8; `--streams` overrides)", "faces/cli/cmd_burn.c"),
    TS_SETTING("cli", "TESSERA_TEST_CORRUPT_GEMM", TS_SET_STR, "sim/test", "0",
               "1: adds 1e6 to one element of each checked `tessera gemm` result, which must then FAIL",
               "faces/cli/cmd_gemm.c"),
    TS_SETTING("cli", "TESSERA_TEST_CORRUPT_BLAS3", TS_SET_STR, "sim/test", "0", "1: the same for `tessera blas3`",
               "faces/cli/cmd_blas3.c"),
    // faces/blas (read by the face itself, from the environment or $TESSERA_BLAS_CONF)
    TS_SETTING("blas", "TESSERA_BLAS_CONF", TS_SET_STR, "user", "(none)",
               "file of `KEY = VALUE` lines for the keys below; the environment wins", "faces/blas/tsb_config.c"),
    TS_SETTING("blas", "TESSERA_CPU_BLAS", TS_SET_STR, "user", "libopenblas.so.0 (ILP64 build: libopenblas64.so.0)",
               "the CPU BLAS loaded at run time", "faces/blas/tsb_config.c faces/blas/tsb_cpu.c"),
    TS_SETTING("blas", "TESSERA_CPU_BLAS_LP64", TS_SET_STR, "user", "libopenblas.so.0",
               "ILP64 build only: the 32-bit CPU BLAS of the runtime's own CPU work",
               "faces/blas/tsb_config.c faces/blas/tsb_cpu.c"),
    TS_SETTING("blas", "TESSERA_BLAS_THRESHOLD", TS_SET_STR, "user",
               "per routine, measured (DGEMM 384³, ZGEMM 192³, STRMM 768³, ...; docs/blas.md)",
               "offload every level-3 routine when its equivalent m·n·k reaches this; 0 offloads every call, "
               "`none` none",
               "faces/blas/tsb_config.c"),
    TS_FAMILY("blas", "TESSERA_BLAS_THRESHOLD_<R>", TS_SET_STR, "user", "the measured default of routine R",
              "the same for routine R only; wins over `TESSERA_BLAS_THRESHOLD` from the same source",
              "faces/blas/tsb_config.c", BLAS_ROUTINES),
    TS_SETTING("blas", "TESSERA_BLAS_DEVICES", TS_SET_STR, "user", "all", "`all` or the first N devices",
               "faces/blas/tsb_config.c"),
    TS_SETTING("blas", "TESSERA_BLAS_TILE", TS_SET_STR, "user", "the runtime's (`TESSERA_TILE`)",
               "tile edge of offloaded calls", "faces/blas/tsb_config.c"),
    TS_SETTING("blas", "TESSERA_BLAS_CPU_RATIO", TS_SET_STR, "user", "the runtime's (auto)",
               "`auto`, `0` or the CPU's share of tiles", "faces/blas/tsb_config.c"),
    TS_SETTING("blas", "TESSERA_BLAS_TRACE", TS_SET_STR, "user", "off",
               "file (or stderr/stdout), appended to: one line per level-3 call with where it ran",
               "faces/blas/tsb_config.c"),
    TS_FAMILY("blas", "TESSERA_BLAS_DISABLE_<R>", TS_SET_STR, "user", "0",
              "1: routine R always on the CPU BLAS; R is one of SGEMM DGEMM CGEMM ZGEMM, SSYMM DSYMM CSYMM ZSYMM, "
              "CHEMM ZHEMM, SSYRK DSYRK CSYRK ZSYRK, CHERK ZHERK, SSYR2K DSYR2K CSYR2K ZSYR2K, CHER2K ZHER2K, STRMM "
              "DTRMM CTRMM ZTRMM, STRSM DTRSM CTRSM ZTRSM (30 names)",
              "faces/blas/tsb_config.c", BLAS_ROUTINES),
    // variables of other programs that Tessera respects
    TS_SETTING("external", "CUDA_VISIBLE_DEVICES", TS_SET_STR, "external", "(the driver's list)",
               "respected; under MPI each rank takes the GPU of its node-local rank", "device/ts_device.c"),
    TS_SETTING("external", "OMP_NUM_THREADS", TS_SET_STR, "external", "(unset)",
               "when set, `tessera hpl` and `tessera hpcg` keep the OpenMP and CPU BLAS thread counts it gives; "
               "unset, ranks sharing a node share its cores",
               "algorithms/hpl/ts_hpl_engine.c algorithms/hpcg/ts_hpcg_driver.c"),
    TS_SETTING("external", "OPENBLAS_NUM_THREADS", TS_SET_STR, "external", "(unset)",
               "when set, `tessera hpl` keeps it; unset (and no `OMP_NUM_THREADS`), each rank's CPU BLAS gets its "
               "share of the node's cores",
               "algorithms/hpl/ts_hpl_engine.c"),
    TS_SETTING("external", "HOME", TS_SET_STR, "external", "(the user's)",
               "the default performance database lies under it", "runtime/ts_perfdb.c"),
    TS_SETTING("external", "OMPI_COMM_WORLD_SIZE", TS_SET_STR, "external", "(set by Open MPI's launcher)",
               "how many processes were launched (the largest of this and the four below): progress lines "
               "of a multi-rank launch",
               "core/ts_settings.c"),
    TS_SETTING("external", "PMI_SIZE", TS_SET_STR, "external", "(set by MPICH's launcher)", "the same",
               "core/ts_settings.c"),
    TS_SETTING("external", "PMIX_SIZE", TS_SET_STR, "external", "(set by PMIx launchers)", "the same",
               "core/ts_settings.c"),
    TS_SETTING("external", "MPI_LOCALNRANKS", TS_SET_STR, "external", "(set by MPICH's launcher)", "the same",
               "core/ts_settings.c"),
    TS_SETTING("external", "SLURM_NTASKS", TS_SET_STR, "external", "(set by Slurm)", "the same",
               "core/ts_settings.c"),
    // build, test and bench scripts (never read by the library; known so that they draw no warning)
    TS_SETTING("scripts", "TESSERA_COMMIT", TS_SET_STR, "script", "(git describe)", "the commit a build reports",
               "cmake/GitCommit.cmake"),
    TS_SETTING("scripts", "TESSERA_TEST_BACKEND", TS_SET_STR, "script", "(sim)", "tests: run the suite against the GPU",
               "tests/"),
    TS_SETTING("scripts", "TESSERA_TEST_SEED", TS_SET_STR, "script", "(fixed)", "tests: the seed of randomized tests",
               "tests/"),
    TS_SETTING("scripts", "TESSERA_TEST_TIMEOUT_SCALE", TS_SET_STR, "script", "1",
               "tests: multiplies every test's timeout (read at configure time)", "tests/CMakeLists.txt"),
    TS_FAMILY("scripts", "TESSERA_GPU_*", TS_SET_STR, "script", "(unset)", "switches of the GPU tests",
              "tests/gpu/", NULL),
    TS_FAMILY("scripts", "TESSERA_DEVICE_*", TS_SET_STR, "script", "(unset)",
              "bench/device.sh (described in its header)", "bench/device.sh", NULL),
    TS_FAMILY("scripts", "TESSERA_BENCH_*", TS_SET_STR, "script", "(unset)",
              "bench/*.sh (described in each script's header)", "bench/", NULL),
    TS_SETTING("scripts", "TESSERA_RESULTS_DIR", TS_SET_STR, "script", "/tmp/tessera-results",
               "bench/device.sh: where results are collected", "bench/device.sh"),
    TS_SETTING("scripts", "TESSERA_CTEST_ARGS", TS_SET_STR, "script", "(none)", "bench/device.sh: extra ctest arguments",
               "bench/device.sh"),
};

#undef TS_SETTING
#undef TS_FAMILY

const ts_setting *ts_settings_table(size_t *n) {
    if (n) *n = sizeof table / sizeof table[0];
    return table;
}

// Length of a family's prefix ("TESSERA_BLAS_DISABLE_" of "TESSERA_BLAS_DISABLE_<R>"), 0 when the
// entry is a single variable.
static size_t family_prefix(const ts_setting *s) {
    size_t len = strlen(s->name);
    if (len > 3 && strcmp(s->name + len - 3, "<R>") == 0) return len - 3;
    if (len > 1 && s->name[len - 1] == '*') return len - 1;
    return 0;
}

// `word` is one of the space-separated words of `list`.
static int in_list(const char *list, const char *word) {
    size_t w = strlen(word);
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, " ");
        if (n == w && strncmp(p, word, n) == 0) return 1;
        p += n;
        p += strspn(p, " ");
    }
    return 0;
}

const ts_setting *ts_settings_find(const char *name) {
    if (!name) return NULL;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        const ts_setting *s = &table[i];
        size_t pre = family_prefix(s);
        if (!pre) {
            if (strcmp(s->name, name) == 0) return s;
        } else if (strncmp(s->name, name, pre) == 0 && name[pre] != '\0') {
            if (!s->members || in_list(s->members, name + pre)) return s;
        }
    }
    return NULL;
}

// Edit distance (insertions, deletions, substitutions) of a and the first bn characters of b.
static size_t edit_distance(const char *a, const char *b, size_t bn) {
    size_t an = strlen(a);
    if (an > 63 || bn > 63) return (size_t)-1;
    size_t row[64];
    for (size_t j = 0; j <= bn; j++) row[j] = j;
    for (size_t i = 1; i <= an; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= bn; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[bn];
}

const char *ts_settings_closest(const char *name) {
    const char *best = NULL;
    size_t best_d = (size_t)-1;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        const ts_setting *s = &table[i];
        if (strncmp(s->name, "TESSERA_", 8) != 0) continue;
        size_t pre = family_prefix(s);
        size_t d = edit_distance(name, s->name, pre ? pre : strlen(s->name));
        if (d < best_d) best_d = d, best = s->name;
    }
    return best;
}

int ts_settings_check_environ(char *const *envp, FILE *f) {
    int n = 0;
    for (char *const *e = envp; e && *e; e++) {
        if (strncmp(*e, "TESSERA_", 8) != 0) continue;
        char name[128];
        size_t len = strcspn(*e, "=");
        if (len >= sizeof name) len = sizeof name - 1;
        memcpy(name, *e, len);
        name[len] = '\0';
        if (ts_settings_find(name)) continue;
        fprintf(f, "tessera: warning: %s is not a Tessera setting (did you mean %s? docs/settings.md lists them)\n",
                name, ts_settings_closest(name));
        n++;
    }
    return n;
}

extern char **environ;

static void check_environ(void) { ts_settings_check_environ(environ, stderr); }

void ts_settings_check_once(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, check_environ);
}

// ---------------------------------------------------------------- the reader (ts_env.h)

// The entry of a variable the code reads as `type`; a name missing from the table or read as
// another type is a mistake in the code: abort in debug builds, a failed read in release builds.
static int registered(const char *name, ts_setting_type type) {
    ts_settings_check_once();
    const ts_setting *s = ts_settings_find(name);
    if (s && (type == TS_SET_STR || s->type == type)) return 1;
    fprintf(stderr, "tessera: internal error: setting %s %s\n", name ? name : "(null)",
            s ? "is read as another type than its entry in src/core/ts_settings.c says"
              : "is not in the table of src/core/ts_settings.c");
#ifndef NDEBUG
    abort();
#else
    return 0;
#endif
}

static const char *value_of(const char *name) {
    const char *v = getenv(name);
    return (v && v[0] != '\0') ? v : NULL;
}

const char *ts_env_str(const char *name) {
    if (!registered(name, TS_SET_STR)) {
        TS_ERROR(TS_ERR_ARG, "setting %s is not in the table of settings", name ? name : "(null)");
        return NULL;
    }
    return value_of(name);
}

const char *ts_env_raw(const char *name) {
    if (!registered(name, TS_SET_STR)) {
        TS_ERROR(TS_ERR_ARG, "setting %s is not in the table of settings", name ? name : "(null)");
        return NULL;
    }
    return getenv(name);
}

#define ENV_LOOKUP(fn_name, type, set_type, parser)                                                         \
    int fn_name(const char *name, type *out) {                                                              \
        if (!registered(name, set_type))                                                                    \
            TS_RAISE(TS_ERR_ARG, "setting %s is not in the table of settings", name ? name : "(null)");     \
        const char *v = value_of(name);                                                                     \
        if (!v) return 0;                                                                                   \
        type tmp = 0;                                                                                       \
        TS_CHECK(parser(v, name, &tmp));                                                                    \
        *out = tmp;                                                                                         \
        return 1;                                                                                           \
    }

ENV_LOOKUP(ts_env_int, int, TS_SET_INT, ts_parse_int)
ENV_LOOKUP(ts_env_i64, int64_t, TS_SET_I64, ts_parse_i64)
ENV_LOOKUP(ts_env_double, double, TS_SET_DOUBLE, ts_parse_double)
ENV_LOOKUP(ts_env_size, size_t, TS_SET_SIZE, ts_parse_size)
ENV_LOOKUP(ts_env_bool, int, TS_SET_BOOL, ts_parse_bool)

int ts_env_launch_size(void) {
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS", "SLURM_NTASKS"};
    int size = 1;
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = ts_env_str(vars[i]);
        int n = v ? atoi(v) : 0;
        if (n > size) size = n;
    }
    return size;
}
