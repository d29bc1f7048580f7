// ts_timer.h: monotonic wall-clock timers and small statistics over repeated timings.
#ifndef TS_TIMER_H
#define TS_TIMER_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

// Seconds from an arbitrary origin, CLOCK_MONOTONIC, nanosecond resolution.
double ts_now(void);

typedef struct {
    double start;
    double total; // accumulated seconds over start/stop pairs
    long count;
} ts_timer;

void ts_timer_start(ts_timer *t);
double ts_timer_stop(ts_timer *t); // returns the seconds of this interval and adds them to total

// Median/min/max of n samples (the array is sorted in place). n >= 1.
typedef struct {
    double median, min, max, mean;
} ts_stats;
ts_stats ts_stats_of(double *samples, size_t n);

// "2026-11-22T10:00:00Z" of the current UTC time into buf (>= 21 bytes).
void ts_utc_iso8601(char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif
