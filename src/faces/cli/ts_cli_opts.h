// ts_cli_opts.h: option parsing and reporting helpers shared by the `tessera` subcommands.
#ifndef TS_CLI_OPTS_H
#define TS_CLI_OPTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/ts_json.h"
#include "device/ts_device.h"

// Prints "tessera <cmd>: <message>" to stderr and returns TS_EXIT_USAGE.
int ts_cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
// Prints "tessera <cmd>: <message>" to stderr (no return value semantics).
void ts_cli_errorf(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

// Matches argv[*i] against a long option that takes a value: "--name value" or "--name=value"
// (and a short alias such as "-m", may be NULL). Returns 1 and sets *value when it matched, 0 when
// the argument is another option, -1 when the value is missing (the message is printed).
int ts_cli_value_opt(const char *cmd, int argc, char **argv, int *i, const char *name,
                     const char *alias, const char **value);
// 1 if argv[i] equals the flag name or its alias.
int ts_cli_flag(const char *arg, const char *name, const char *alias);

// Strict numeric parsers for option values; on error print "tessera <cmd>: <what>: ..." naming
// the value and return -1.
int ts_cli_int(const char *cmd, const char *what, const char *s, int min, int *out);
int ts_cli_i64(const char *cmd, const char *what, const char *s, int64_t min, int64_t *out);
int ts_cli_double(const char *cmd, const char *what, const char *s, double *out);

// -q / -v: set the log level (quiet: warnings and errors only; verbose: debug).
void ts_cli_set_verbosity(int verbosity);

// Opens the devices as configured by the TESSERA_* variables (backend AUTO). On failure prints the
// reason and returns a negative status; an empty set (no GPU, no sim devices) is a success.
int ts_cli_open_devices(const char *cmd, ts_devset **out);
// The exit code of a failure (README "Exit codes"): bad input, a malformed TESSERA_* value or an
// engine this device cannot run (TS_ERR_PARSE, TS_ERR_ARG, TS_ERR_UNSUPPORTED) is 2; anything that
// failed while running is 3.
int ts_cli_exit_of(int rc);
// Whether an output file (option opt, e.g. "--json") can be written, checked before a run so that
// a long run never ends in "cannot write": opens it without truncating, removes a file it created;
// "-" (stdout) passes for --json. Prints the reason and returns TS_EXIT_USAGE, else 0.
int ts_cli_check_output(const char *cmd, const char *opt, const char *path);


// Host memory the process can still use, in bytes (MemAvailable, else sysconf free pages).
size_t ts_cli_host_mem_available(void);
double ts_cli_gib(double bytes);

// Opens FILE for a results document ("-" = stdout). Prints the error and returns NULL on failure.
FILE *ts_cli_json_fopen(const char *cmd, const char *path);
int ts_cli_json_fclose(const char *cmd, const char *path, FILE *f);

#endif
