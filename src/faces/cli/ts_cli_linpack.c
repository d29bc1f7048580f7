// ts_cli_linpack.c: the Linpack front shared by `tessera hpl` and `tessera hpl-mxp`: their common options and sizing helper.
#include "faces/cli/ts_cli_linpack.h"

#include <string.h>

#include "core/ts_env.h"
#include "device/ts_device.h"
#include "faces/cli/ts_cli_opts.h"

void ts_linpack_args_init(ts_linpack_args *a) {
    memset(a, 0, sizeof *a);
    a->N = -1;
    a->depth = -1;
    a->exec = TS_HPL_EXEC_AUTO;
}

static int parse_exec(const ts_linpack_spec *sp, const char *v, ts_hpl_exec *e) {
    if (!strcmp(v, "auto")) *e = TS_HPL_EXEC_AUTO;
    else if (!strcmp(v, "cpu")) *e = TS_HPL_EXEC_CPU;
    else if (!strcmp(v, "device")) *e = TS_HPL_EXEC_DEVICE;
    else if (sp->ooc && !strcmp(v, "ooc")) *e = TS_HPL_EXEC_OOC;
    else {
        ts_cli_errorf(sp->cmd, "--exec: '%s' is not one of auto, cpu, device%s", v, sp->ooc ? ", ooc" : "");
        return -1;
    }
    return 0;
}

// argv[*i] when it is a common option (advancing *i past its value): 1 taken, 0 not a common
// option, 2 --help/-h, -1 bad value (reported).
static int common_opt(const ts_linpack_spec *sp, int argc, char **argv, int *i, ts_linpack_args *a) {
    const char *cmd = sp->cmd, *v = NULL;
    int m;
    if (ts_cli_flag(argv[*i], "--help", "-h")) return 2;
    if (ts_cli_flag(argv[*i], "-q", "--quiet")) {
        a->quiet = 1;
        return 1;
    }
    if (ts_cli_flag(argv[*i], "-v", "--verbose")) {
        a->verbose = 1;
        return 1;
    }
    if ((m = ts_cli_value_opt(cmd, argc, argv, i, "--dat", NULL, &v)) != 0) {
        if (m < 0) return -1;
        a->dat = v;
    } else if ((m = ts_cli_value_opt(cmd, argc, argv, i, "-N", "--N", &v)) != 0) {
        if (m < 0 || ts_cli_i64(cmd, "-N", v, sp->n_min, &a->N) < 0) return -1;
    } else if ((m = ts_cli_value_opt(cmd, argc, argv, i, "-NB", "--NB", &v)) != 0) {
        if (m < 0 || ts_cli_int(cmd, "-NB (block size)", v, 1, &a->NB) < 0) return -1;
        if (sp->nb_max > 0 && a->NB > sp->nb_max) {
            ts_cli_errorf(cmd, "-NB %d: at most %d", a->NB, sp->nb_max);
            return -1;
        }
    } else if ((m = ts_cli_value_opt(cmd, argc, argv, i, "-P", "--P", &v)) != 0) {
        if (m < 0 || ts_cli_int(cmd, "-P (process rows)", v, 1, &a->P) < 0) return -1;
    } else if ((m = ts_cli_value_opt(cmd, argc, argv, i, "-Q", "--Q", &v)) != 0) {
        if (m < 0 || ts_cli_int(cmd, "-Q (process columns)", v, 1, &a->Q) < 0) return -1;
    } else if ((m = ts_cli_value_opt(cmd, argc, argv, i, "--depth", NULL, &v)) != 0) {
        if (m < 0 || ts_cli_int(cmd, "--depth", v, 0, &a->depth) < 0) return -1;
        if (a->depth > sp->depth_max) {
            if (sp->depth_max == 1)
                ts_cli_errorf(cmd, "--depth %d: look-ahead depth 0 or 1%s", a->depth, sp->depth_note);
            else
                ts_cli_errorf(cmd, "--depth %d: look-ahead depth 0..%d%s", a->depth, sp->depth_max, sp->depth_note);
            return -1;
        }
    } else if ((m = ts_cli_value_opt(cmd, argc, argv, i, "--exec", NULL, &v)) != 0) {
        if (m < 0 || parse_exec(sp, v, &a->exec) < 0) return -1;
    } else if ((m = ts_cli_value_opt(cmd, argc, argv, i, "--json", NULL, &v)) != 0) {
        if (m < 0) return -1;
        a->json = v;

    } else if ((m = ts_cli_value_opt(cmd, argc, argv, i, "--mem-fraction", NULL, &v)) != 0) {
        if (m < 0 || ts_cli_double(cmd, "--mem-fraction", v, &a->mem_fraction) < 0) return -1;
        if (!(a->mem_fraction > 0.0 && a->mem_fraction <= 1.0)) {
            ts_cli_errorf(cmd, "--mem-fraction: '%s' must be in (0, 1]", v);
            return -1;
        }
    } else {
        return 0;
    }
    return 1;
}

int ts_linpack_parse(const ts_linpack_spec *sp, int argc, char **argv, ts_linpack_args *a,
                     int (*own)(void *ctx, int argc, char **argv, int *i), void *ctx) {
    ts_linpack_args_init(a);
    for (int i = 1; i < argc; i++) {
        int m = common_opt(sp, argc, argv, &i, a);
        if (m == 2) {
            sp->usage(stdout);
            return 1;
        }
        if (m == 0) m = own(ctx, argc, argv, &i);
        if (m == 0) { // --plot FILE, unless the command took it as its own
            const char *v = NULL;
            m = ts_cli_value_opt(sp->cmd, argc, argv, &i, "--plot", NULL, &v);
            if (m > 0) a->plot = v;
        }
        if (m < 0) return -1;
        if (m == 0) {
            ts_cli_errorf(sp->cmd, "unknown option '%s' (tessera %s --help)", argv[i], sp->cmd);
            return -1;
        }
    }
    if (a->quiet) ts_cli_set_verbosity(-1);
    else if (a->verbose) ts_cli_set_verbosity(1);
    return 0;
}

int ts_linpack_device_expected(ts_hpl_exec exec) {
    if (exec == TS_HPL_EXEC_CPU) return 0;
    if (exec == TS_HPL_EXEC_DEVICE || exec == TS_HPL_EXEC_OOC) return 1;
    int sim = 0;
    if (ts_env_int("TESSERA_SIM_DEVICES", &sim) < 0) sim = 0;
    return ts_cuda_device_count() > 0 || sim > 0;
}
