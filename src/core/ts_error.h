// ts_error.h: error codes, messages with file/line, and the checking macros every layer uses.
#ifndef TS_ERROR_H
#define TS_ERROR_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

// Status codes: 0 is success, every failure is negative. The table of names lives in ts_error.c.
typedef enum {
    TS_OK = 0,
    TS_ERR_ARG = -1,          // an argument is out of range (the message names it)
    TS_ERR_NOMEM = -2,        // host allocation failed
    TS_ERR_DEVMEM = -3,       // device arena exhausted (the message gives needed/available bytes)
    TS_ERR_IO = -4,           // file or stream I/O failed
    TS_ERR_PARSE = -5,        // malformed input file or value (the message names file:line)
    TS_ERR_CUDA = -6,         // a CUDA runtime call failed (the message names the call)
    TS_ERR_CUBLAS = -7,       // a cuBLAS/cuSOLVER call failed
    TS_ERR_MPI = -8,          // an MPI call failed
    TS_ERR_DEVICE = -9,       // a device operation failed (copy or kernel), e.g. an injected fault
    TS_ERR_DEVICE_LOST = -10, // the device stopped answering
    TS_ERR_UNSUPPORTED = -11, // not available in this build or on this device
    TS_ERR_VERIFY = -12,      // a numerical result failed its check
    TS_ERR_STATE = -13,       // call made in the wrong state (e.g. use after close)
    TS_ERR_TIMEOUT = -14,     // waited longer than allowed
    TS_ERR_INTERNAL = -15,    // a bug: an invariant did not hold
} ts_status;

// The last error of the calling thread: code, message, and where it was raised.
typedef struct {
    int code;
    char message[512];
    const char *file;
    int line;
} ts_error_info;

// Short name of a code ("TS_ERR_ARG"), never NULL.
const char *ts_status_name(int code);

// Records an error for the calling thread and returns code (so `return ts_error_set(...)` works).
// The message is printf-formatted. Thread-local, like errno: each thread sees its own last error.
int ts_error_set(int code, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

// Adds context in front of the current message ("while X: <old message>"), keeps code/file/line.
int ts_error_wrap(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

// The calling thread's last error (code 0 when none was recorded since the last clear).
const ts_error_info *ts_error_last(void);
void ts_error_clear(void);

// "file:line: message" of the last error, or "no error".
const char *ts_error_string(void);

// Raise: record and return from the current function.
#define TS_RAISE(code, ...) return ts_error_set((code), __FILE__, __LINE__, __VA_ARGS__)
// Record without returning (evaluates to code).
#define TS_ERROR(code, ...) ts_error_set((code), __FILE__, __LINE__, __VA_ARGS__)
// Propagate a failing status upward.
#define TS_CHECK(expr)                                                                            \
    do {                                                                                          \
        int ts_check_rc_ = (expr);                                                                \
        if (ts_check_rc_ < 0) return ts_check_rc_;                                                \
    } while (0)
// Propagate to a cleanup label: `TS_CHECK_GOTO(f(), rc, out);`
#define TS_CHECK_GOTO(expr, rc, label)                                                            \
    do {                                                                                          \
        (rc) = (expr);                                                                            \
        if ((rc) < 0) goto label;                                                                 \
    } while (0)

#ifdef __cplusplus
}
#endif

#endif
