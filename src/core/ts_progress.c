// ts_progress.c: progress display: a live \r line with ETA on a terminal, periodic lines otherwise.
#include "ts_progress.h"

#include "ts_env.h"
#include "ts_error.h"
#include "ts_log.h"
#include "ts_timer.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define TTY_INTERVAL 0.2     // seconds between redraws of the live line
#define DEFAULT_PERIOD 10.0  // seconds between plain lines

void ts_format_duration(double seconds, char *buf, int len) {
    if (!buf || len <= 0) return;
    if (!isfinite(seconds) || seconds < 0) {
        snprintf(buf, (size_t)len, "--");
    } else if (seconds < 60.0) {
        snprintf(buf, (size_t)len, "%.1fs", seconds);
    } else if (seconds < 3600.0) {
        long s = (long)(seconds + 0.5);
        snprintf(buf, (size_t)len, "%ldm%02lds", s / 60, s % 60);
    } else {
        long m = (long)(seconds / 60.0 + 0.5);
        snprintf(buf, (size_t)len, "%ldh%02ldm", m / 60, m % 60);
    }
}

void ts_progress_init(ts_progress *p, FILE *out, const char *label, double total) {
    memset(p, 0, sizeof *p);
    p->out = out ? out : stderr;
    p->period = DEFAULT_PERIOD;
    p->total = total;
    p->start = ts_now();
    p->last = p->start;
    p->enabled = 1;
    snprintf(p->label, sizeof p->label, "%s", label ? label : "progress");
    int fd = fileno(p->out);
    p->tty = fd >= 0 && isatty(fd);
    int mode = -1;
    int rc = ts_env_int("TESSERA_PROGRESS", &mode);
    if (rc < 0) {
        // A bad value must not stop the work it is meant to display.
        ts_log(TS_LOG_WARN, "%s; progress display left on", ts_error_string());
    } else if (rc == 1 && mode == 0) {
        p->enabled = 0;
    } else if (rc == 1 && mode == 1) {
        p->tty = 0;
        p->forced = 1;
    }
    if (!p->tty && !p->forced && ts_env_launch_size() > 1) p->enabled = 0;
}

// "label: 42.0%, detail, elapsed 3m20s, ETA 4m36s" (no line ending).
static void format_line(const ts_progress *p, double done, double work_s, const char *detail, double now,
                        char *line, size_t len) {
    double elapsed = now - p->start;
    double frac = p->total > 0 ? done / p->total : 0.0;
    if (!(frac >= 0.0)) frac = 0.0;
    if (frac > 1.0) frac = 1.0;
    char el[32], eta[32];
    ts_format_duration(elapsed, el, sizeof el);
    // Linear extrapolation from the rate so far: work_s * (total - done) / done.
    double rest = (done > 0 && p->total > 0 && work_s >= 0) ? work_s * (p->total - done) / done : NAN;
    if (rest < 0) rest = 0;
    ts_format_duration(rest, eta, sizeof eta);
    snprintf(line, len, "%s: %5.1f%%%s%s, elapsed %s, ETA %s", p->label, 100.0 * frac,
             detail && detail[0] ? ", " : "", detail ? detail : "", el, eta);
}

// Output errors on a progress stream are ignored on purpose: the display is advisory and the work
// it reports on must go on.
void ts_progress_update(ts_progress *p, double done, const char *detail) {
    if (!p->enabled) return;
    ts_progress_update_at(p, done, ts_now() - p->start, detail);
}

void ts_progress_update_at(ts_progress *p, double done, double work_s, const char *detail) {
    if (!p->enabled) return;
    double now = ts_now();
    if (now - p->last < (p->tty ? TTY_INTERVAL : p->period)) return;
    if (done > p->total) done = p->total;
    p->last = now;
    char line[512];
    format_line(p, done, work_s, detail, now, line, sizeof line);
    if (p->tty) {
        // \033[K clears what is left of a longer previous line.
        (void)fprintf(p->out, "\r%s\033[K", line);
        p->drawn = 1;
    } else {
        size_t n = strlen(line);
        if (n + 1 < sizeof line) line[n++] = '\n';
        (void)fwrite(line, 1, n, p->out); // one write: the line stays whole beside other output
    }
    (void)fflush(p->out);
}

void ts_progress_finish(ts_progress *p, const char *detail) {
    if (!p->enabled) return;
    double now = ts_now();
    char el[32];
    ts_format_duration(now - p->start, el, sizeof el);
    const char *sep = detail && detail[0] ? ", " : "";
    if (p->tty)
        (void)fprintf(p->out, "\r%s: 100.0%%%s%s, elapsed %s\033[K\n", p->label, sep, detail ? detail : "",
                      el);
    else
        (void)fprintf(p->out, "%s: 100.0%%%s%s, elapsed %s\n", p->label, sep, detail ? detail : "", el);
    (void)fflush(p->out);
    p->drawn = 0;
    p->last = now;
}
