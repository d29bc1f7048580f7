// ts_cli_linpack.h: the Linpack front shared by `tessera hpl` and `tessera hpl-mxp`: their common options and sizing helper.
#ifndef TS_CLI_LINPACK_H
#define TS_CLI_LINPACK_H

#include <stdint.h>
#include <stdio.h>

#include "algorithms/hpl/ts_hpl.h"

// The options both commands take (HPL's face): --dat, -N/-NB/-P/-Q, --depth, --exec, --json,
// --mem-fraction, -q, -v, --help; --plot where the command does not parse it itself.
typedef struct {
    const char *dat;
    int64_t N;              // -1: not given
    int NB, P, Q;           // 0: not given
    int depth;              // -1: not given
    ts_hpl_exec exec;
    const char *json;
    const char *plot;       // --plot FILE when the command's own options leave it, NULL: not given
    double mem_fraction;    // 0: not given
    int quiet, verbose;
} ts_linpack_args;

// What differs between the commands.
typedef struct {
    const char *cmd;        // "hpl", "hpl-mxp" (the messages' prefix)
    void (*usage)(FILE *f); // the command's --help text
    int64_t n_min;          // smallest -N
    int nb_max;             // largest -NB (0: no bound)
    int ooc;                // 1: --exec ooc is accepted
    int depth_max;          // largest --depth
    const char *depth_note; // appended to the --depth > depth_max message ("" for none)
} ts_linpack_spec;

void ts_linpack_args_init(ts_linpack_args *a);
// Parses the command line: the common options into a, every other argument offered to own (ctx,
// argc, argv, &i: 1 taken (i past its value), 0 not the command's, -1 bad value, reported); what
// own leaves may still be --plot FILE (into a->plot).
// Returns 0 (the log's verbosity set by -q / -v), 1 after --help/-h (the usage printed to stdout)
// or -1 (the error reported: a bad value or "unknown option").
int ts_linpack_parse(const ts_linpack_spec *sp, int argc, char **argv, ts_linpack_args *a,
                     int (*own)(void *ctx, int argc, char **argv, int *i), void *ctx);
// 1 when a run with this --exec will use a device (a GPU, or TESSERA_SIM_DEVICES for auto).
int ts_linpack_device_expected(ts_hpl_exec exec);

#endif
