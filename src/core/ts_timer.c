// ts_timer.c: monotonic timers, statistics over repeated timings, and UTC timestamps.
#include "ts_timer.h"

#include <stdlib.h>
#include <time.h>

double ts_now(void) {
    struct timespec ts;
    // CLOCK_MONOTONIC cannot fail on Linux with a valid pointer; 0 keeps callers' arithmetic sane.
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) return 0.0;
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void ts_timer_start(ts_timer *t) { t->start = ts_now(); }

double ts_timer_stop(ts_timer *t) {
    double dt = ts_now() - t->start;
    t->total += dt;
    t->count++;
    return dt;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

ts_stats ts_stats_of(double *samples, size_t n) {
    ts_stats s = {0.0, 0.0, 0.0, 0.0};
    if (n == 0 || !samples) return s;
    qsort(samples, n, sizeof *samples, cmp_double);
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) sum += samples[i];
    s.min = samples[0];
    s.max = samples[n - 1];
    s.mean = sum / (double)n;
    // Even counts take the mean of the two middle samples.
    s.median = (n % 2) ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
    return s;
}

void ts_utc_iso8601(char *buf, size_t len) {
    if (!buf || len == 0) return;
    time_t now = time(NULL);
    struct tm tm;
    if (now == (time_t)-1 || !gmtime_r(&now, &tm) ||
        strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        buf[0] = '\0';
}
