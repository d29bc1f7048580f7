// ts_error.c: status names and the per-thread last error (code, message, file:line).
#include "ts_error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

// Thread-local like errno: a failure on one device worker must not overwrite the error another
// thread is about to report. This is the only mutable global state of the core layer besides the
// log level/rank.
static _Thread_local ts_error_info tl_error;
static _Thread_local char tl_error_text[640];

static const char *const status_names[] = {
    "TS_OK",          "TS_ERR_ARG",    "TS_ERR_NOMEM",       "TS_ERR_DEVMEM",
    "TS_ERR_IO",      "TS_ERR_PARSE",  "TS_ERR_CUDA",        "TS_ERR_CUBLAS",
    "TS_ERR_MPI",     "TS_ERR_DEVICE", "TS_ERR_DEVICE_LOST", "TS_ERR_UNSUPPORTED",
    "TS_ERR_VERIFY",  "TS_ERR_STATE",  "TS_ERR_TIMEOUT",     "TS_ERR_INTERNAL",
};

const char *ts_status_name(int code) {
    int n = (int)(sizeof status_names / sizeof status_names[0]);
    if (code > 0 || code <= -n) return "TS_ERR_UNKNOWN";
    return status_names[-code];
}

int ts_error_set(int code, const char *file, int line, const char *fmt, ...) {
    tl_error.code = code;
    tl_error.file = file;
    tl_error.line = line;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(tl_error.message, sizeof tl_error.message, fmt, ap);
    va_end(ap);
    // A broken format cannot be reported through the error system itself; keep the code.
    if (w < 0) snprintf(tl_error.message, sizeof tl_error.message, "%s", ts_status_name(code));
    return code;
}

int ts_error_wrap(int code, const char *fmt, ...) {
    char context[sizeof tl_error.message];
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(context, sizeof context, fmt, ap);
    va_end(ap);
    if (w < 0) context[0] = '\0';
    if (tl_error.code == 0) {
        // Nothing to wrap: the context becomes the error, without a location.
        tl_error.code = code;
        tl_error.file = NULL;
        tl_error.line = 0;
        snprintf(tl_error.message, sizeof tl_error.message, "%s", context);
        return code;
    }
    // Built by hand because the result may be truncated on purpose: the front (the newest
    // context) matters most to the reader.
    char old[sizeof tl_error.message];
    memcpy(old, tl_error.message, sizeof old);
    size_t cap = sizeof tl_error.message - 1, n = 0;
    const char *parts[3] = {context, ": ", old};
    for (int k = 0; k < 3; k++) {
        size_t len = strlen(parts[k]);
        if (len > cap - n) len = cap - n;
        memcpy(tl_error.message + n, parts[k], len);
        n += len;
    }
    tl_error.message[n] = '\0';
    return code;
}

const ts_error_info *ts_error_last(void) { return &tl_error; }

void ts_error_clear(void) {
    tl_error.code = 0;
    tl_error.message[0] = '\0';
    tl_error.file = NULL;
    tl_error.line = 0;
}

const char *ts_error_string(void) {
    if (tl_error.code == 0) return "no error";
    if (tl_error.file)
        snprintf(tl_error_text, sizeof tl_error_text, "%s:%d: %s", tl_error.file, tl_error.line,
                 tl_error.message);
    else
        snprintf(tl_error_text, sizeof tl_error_text, "%s", tl_error.message);
    return tl_error_text;
}
