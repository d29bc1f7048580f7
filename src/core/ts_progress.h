// ts_progress.h: progress of long work: a live line with ETA on a terminal, periodic plain lines otherwise.
#ifndef TS_PROGRESS_H
#define TS_PROGRESS_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    FILE *out;          // usually stderr
    int tty;            // 1: redraw one line with \r; 0: print a full line every `period` seconds
    double period;      // seconds between plain lines (default 10)
    double start, last;
    double total;       // total work units (e.g. flops or iterations)
    char label[64];
    int enabled;
    int forced;         // TESSERA_PROGRESS=1: plain lines asked for
    int drawn;          // a live line is on screen
} ts_progress;

// tty is detected from `out` (isatty); TESSERA_PROGRESS=0 disables, =1 forces plain lines.
// Not a terminal and one of several launched processes (ts_env_launch_size > 1): off unless
// TESSERA_PROGRESS=1, since mpirun forwards each rank's stdout and stderr separately and a plain
// line could land anywhere in a log that merges them (e.g. between a result and its residual).
// Every line is written whole with one call.
void ts_progress_init(ts_progress *p, FILE *out, const char *label, double total);
// done in [0, total]; `detail` is appended (e.g. "41.2 TFLOP/s"); may be NULL.
// Prints at most every 0.2 s on a terminal, every `period` seconds otherwise.
void ts_progress_update(ts_progress *p, double done, const char *detail);
// The same, with the ETA extrapolated from `work_s`, the seconds the work done so far took (for work
// that starts after a setup the bar's own clock includes, e.g. a Linpack after its matrix
// generation): ETA = work_s * (total - done) / done. "elapsed" stays the time since init.
void ts_progress_update_at(ts_progress *p, double done, double work_s, const char *detail);
// Final line (newline on a terminal); prints elapsed time.
void ts_progress_finish(ts_progress *p, const char *detail);
// "1h02m", "3m20s", "12.5s"
void ts_format_duration(double seconds, char *buf, int len);

#ifdef __cplusplus
}
#endif

#endif
