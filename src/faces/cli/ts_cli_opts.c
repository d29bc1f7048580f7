// ts_cli_opts.c: option parsing and reporting helpers shared by the `tessera` subcommands.
#include "faces/cli/ts_cli_opts.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/ts_env.h"
#include "core/ts_error.h"
#include "core/ts_log.h"
#include "faces/cli/ts_cli.h"

static void vprint(const char *cmd, const char *fmt, va_list ap) {
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    fprintf(stderr, "tessera %s: %s\n", cmd, msg);
}

int ts_cli_usage_error(const char *cmd, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vprint(cmd, fmt, ap);
    va_end(ap);
    return TS_EXIT_USAGE;
}

void ts_cli_errorf(const char *cmd, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vprint(cmd, fmt, ap);
    va_end(ap);
}

int ts_cli_flag(const char *arg, const char *name, const char *alias) {
    return !strcmp(arg, name) || (alias && !strcmp(arg, alias));
}

int ts_cli_value_opt(const char *cmd, int argc, char **argv, int *i, const char *name,
                     const char *alias, const char **value) {
    const char *a = argv[*i];
    size_t len = strlen(name);
    if (!strncmp(a, name, len) && a[len] == '=') {
        *value = a + len + 1;
        return 1;
    }
    if (!ts_cli_flag(a, name, alias)) return 0;
    if (*i + 1 >= argc) {
        ts_cli_errorf(cmd, "option %s needs a value", a);
        return -1;
    }
    *value = argv[++*i];
    return 1;
}

// An integer within [lo, hi] (its type's range; "not an integer" outside it) and at least min.
static int cli_integer(const char *cmd, const char *what, const char *s, int64_t lo, int64_t hi, int64_t min,
                       int64_t *out) {
    int64_t v;
    if (ts_parse_i64(s, what, &v) < 0 || v < lo || v > hi) {
        ts_cli_errorf(cmd, "%s: '%s' is not an integer", what, s);
        return -1;
    }
    if (v < min) {
        ts_cli_errorf(cmd, "%s: '%s' is out of range (at least %lld)", what, s, (long long)min);
        return -1;
    }
    *out = v;
    return 0;
}

int ts_cli_int(const char *cmd, const char *what, const char *s, int min, int *out) {
    int64_t v;
    if (cli_integer(cmd, what, s, INT_MIN, INT_MAX, min, &v)) return -1;
    *out = (int)v;
    return 0;
}

int ts_cli_i64(const char *cmd, const char *what, const char *s, int64_t min, int64_t *out) {
    return cli_integer(cmd, what, s, INT64_MIN, INT64_MAX, min, out);
}

int ts_cli_double(const char *cmd, const char *what, const char *s, double *out) {
    double v;
    if (ts_parse_double(s, what, &v) < 0 || v != v) {
        ts_cli_errorf(cmd, "%s: '%s' is not a number", what, s);
        return -1;
    }
    *out = v;
    return 0;
}

void ts_cli_set_verbosity(int verbosity) {
    if (verbosity < 0) ts_log_set_level(TS_LOG_WARN);
    else if (verbosity == 1) ts_log_set_level(TS_LOG_DEBUG);
    else if (verbosity > 1) ts_log_set_level(TS_LOG_TRACE);
}

int ts_cli_open_devices(const char *cmd, ts_devset **out) {
    ts_devset_opts o;
    *out = NULL;
    int rc = ts_devset_opts_init(&o);
    if (rc < 0) {
        ts_cli_errorf(cmd, "%s", ts_error_last()->message);
        return rc;
    }
    rc = ts_devset_open(&o, out);
    if (rc < 0) {
        ts_cli_errorf(cmd, "cannot open devices: %s", ts_error_last()->message);
        *out = NULL;
        return rc;
    }
    return 0;
}

int ts_cli_exit_of(int rc) {
    if (rc >= 0) return TS_EXIT_OK;
    return rc == TS_ERR_PARSE || rc == TS_ERR_ARG || rc == TS_ERR_UNSUPPORTED ? TS_EXIT_USAGE : TS_EXIT_RUNTIME;
}

int ts_cli_check_output(const char *cmd, const char *opt, const char *path) {
    if (!strcmp(opt, "--json") && !strcmp(path, "-")) return 0;
    struct stat st;
    const int existed = stat(path, &st) == 0;
    if (existed && S_ISDIR(st.st_mode))
        return ts_cli_usage_error(cmd, "%s: cannot write '%s': it is a directory", opt, path);
    const int fd = open(path, O_WRONLY | O_CREAT, 0666);
    if (fd < 0) return ts_cli_usage_error(cmd, "%s: cannot write '%s': %s", opt, path, strerror(errno));
    close(fd);
    if (!existed) unlink(path);
    return 0;
}

size_t ts_cli_host_mem_available(void) {
    FILE *f = fopen("/proc/meminfo", "r");
    if (f) {
        char line[256];
        unsigned long long kb = 0;
        int found = 0;
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) {
                found = 1;
                break;
            }
        fclose(f);
        if (found) return (size_t)kb * 1024;
    }
    long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0) return (size_t)-1; // unknown: do not refuse
    return (size_t)pages * (size_t)page;
}

double ts_cli_gib(double bytes) { return bytes / (1024.0 * 1024.0 * 1024.0); }

FILE *ts_cli_json_fopen(const char *cmd, const char *path) {
    if (!strcmp(path, "-")) return stdout;
    FILE *f = fopen(path, "w");
    if (!f) ts_cli_errorf(cmd, "--json: cannot write '%s': %s", path, strerror(errno));
    return f;
}

int ts_cli_json_fclose(const char *cmd, const char *path, FILE *f) {
    if (f == stdout) return fflush(f) == 0 ? 0 : -1;
    if (fclose(f) != 0) {
        ts_cli_errorf(cmd, "--json: error writing '%s': %s", path, strerror(errno));
        return -1;
    }
    return 0;
}
