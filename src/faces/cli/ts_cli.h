// ts_cli.h: the subcommands of `tessera` and the option helpers they share.
#ifndef TS_CLI_H
#define TS_CLI_H

// Each command gets argv without the program name (argv[0] is the command) and returns the
// process exit code: 0 success, 1 a failed check (verification, residual), 2 bad usage/input,
// 3 a runtime failure (device, MPI, memory).
int ts_cmd_info(int argc, char **argv);
int ts_cmd_gemm(int argc, char **argv);
int ts_cmd_hpl(int argc, char **argv);
int ts_cmd_hpl_mxp(int argc, char **argv);
int ts_cmd_hpcg(int argc, char **argv);
int ts_cmd_burn(int argc, char **argv);
int ts_cmd_blas3(int argc, char **argv);

enum { TS_EXIT_OK = 0, TS_EXIT_CHECK = 1, TS_EXIT_USAGE = 2, TS_EXIT_RUNTIME = 3 };

#endif
