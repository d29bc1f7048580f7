// ts_log.c: levelled, thread-safe logging to stderr with an optional MPI rank prefix.
#include "ts_log.h"

#include "ts_env.h"
#include "ts_error.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

// Process-wide settings, atomics so that any thread may log while the CLI changes the level.
static atomic_int log_level = TS_LOG_INFO;
static atomic_int log_rank = -1;

static const char *const level_names[] = {"error", "warn", "info", "debug", "trace"};

void ts_log_set_level(ts_log_level level) {
    if (level < TS_LOG_ERROR) level = TS_LOG_ERROR;
    if (level > TS_LOG_TRACE) level = TS_LOG_TRACE;
    atomic_store(&log_level, (int)level);
}

ts_log_level ts_log_get_level(void) { return (ts_log_level)atomic_load(&log_level); }

void ts_log_set_rank(int rank) { atomic_store(&log_rank, rank < 0 ? -1 : rank); }

int ts_log_level_parse(const char *s) {
    if (!s) return -1;
    for (int i = 0; i <= TS_LOG_TRACE; i++) {
        if (strcasecmp(s, level_names[i]) == 0) return i;
    }
    if (s[0] >= '0' && s[0] <= '4' && s[1] == '\0') return s[0] - '0';
    if (strcasecmp(s, "warning") == 0) return TS_LOG_WARN;
    return -1;
}

int ts_log_init_from_env(void) {
    const char *v = ts_env_str("TESSERA_LOG");
    if (!v) return 0;
    int level = ts_log_level_parse(v);
    if (level < 0)
        TS_RAISE(TS_ERR_PARSE, "TESSERA_LOG: unknown level '%s' (error, warn, info, debug, trace or 0-4)",
                 v);
    ts_log_set_level((ts_log_level)level);
    return 0;
}

void ts_log(ts_log_level level, const char *fmt, ...) {
    if ((int)level > atomic_load(&log_level)) return;
    int lv = level < TS_LOG_ERROR ? 0 : level > TS_LOG_TRACE ? TS_LOG_TRACE : (int)level;
    // The line is formatted first and written with one call, so lines of concurrent threads do not
    // interleave.
    char line[2048];
    int rank = atomic_load(&log_rank);
    int n = rank >= 0 ? snprintf(line, sizeof line, "tessera: [rank %d] %s: ", rank, level_names[lv])
                      : snprintf(line, sizeof line, "tessera: %s: ", level_names[lv]);
    if (n < 0) return;
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    va_end(ap);
    if (m < 0) return;
    size_t len = strlen(line);
    if (len == 0 || line[len - 1] != '\n') {
        if (len + 1 >= sizeof line) len = sizeof line - 2; // truncated: keep room for the newline
        line[len++] = '\n';
        line[len] = '\0';
    }
    // Logging has nowhere to report its own failure; a lost stderr line is ignored deliberately.
    flockfile(stderr);
    (void)fwrite(line, 1, len, stderr);
    funlockfile(stderr);
}
