// main.c: `tessera <command>`: dispatches to the subcommands.
#include <stdio.h>
#include <string.h>

#include "core/ts_json.h"
#include "core/ts_log.h"
#include "faces/cli/ts_cli.h"

static const struct {
    const char *name;
    int (*fn)(int, char **);
    const char *summary;
} commands[] = {
    {"info", ts_cmd_info, "devices, CPU, BLAS and MPI of this machine; --bench measures them"},
    {"gemm", ts_cmd_gemm, "GEMM benchmark and verification across engines"},
    {"hpl", ts_cmd_hpl, "High Performance Linpack (HPL.dat compatible)"},
    {"hpl-mxp", ts_cmd_hpl_mxp, "HPL-MxP mixed-precision Linpack (FP16/BF16 LU, FP64 refinement)"},
    {"hpcg", ts_cmd_hpcg, "HPCG 3.1 conjugate gradient benchmark (hpcg.dat compatible)"},
    {"burn", ts_cmd_burn, "GPU torture and health test: ABFT-checked DGEMM with telemetry"},
    {"blas3", ts_cmd_blas3, "SYMM, SYRK, SYR2K, TRMM, TRSM benchmark and verification across engines"},
};

static void usage(FILE *f) {
    fprintf(f, "usage: tessera <command> [options]   (tessera <command> --help for its options)\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "  %-8s %s\n", "version", "print the version and the commit it was built from");
}

int main(int argc, char **argv) {
    // Whole lines on stdout even when it is a file or a pipe: the results of HPL and HPCG then
    // never break mid-line where stderr (progress, warnings) or other ranks' output joins them.
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (ts_log_init_from_env() < 0) fprintf(stderr, "tessera: warning: ignoring TESSERA_LOG\n");
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? TS_EXIT_USAGE : TS_EXIT_OK;
    }
    if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version")) {
        if (argc > 2) {
            fprintf(stderr, "tessera version: unexpected argument '%s' (it takes none)\n", argv[2]);
            return TS_EXIT_USAGE;
        }
        printf("tessera %s (commit %s)\n", ts_version(), ts_commit());
        return TS_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name)) return commands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "tessera: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return TS_EXIT_USAGE;
}
