// ts_log.h: levelled logging to stderr (level from TESSERA_LOG or the CLI's -v/-q).
#ifndef TS_LOG_H
#define TS_LOG_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { TS_LOG_ERROR = 0, TS_LOG_WARN = 1, TS_LOG_INFO = 2, TS_LOG_DEBUG = 3, TS_LOG_TRACE = 4 } ts_log_level;

// Set/get the process-wide level (default INFO; TESSERA_LOG=error|warn|info|debug|trace read by ts_log_init).
void ts_log_set_level(ts_log_level level);
ts_log_level ts_log_get_level(void);
// Reads TESSERA_LOG; returns 0, or TS_ERR_PARSE for an unknown level name (then the level is unchanged).
int ts_log_init_from_env(void);
// Parses "error".."trace" or "0".."4"; returns -1 if unknown.
int ts_log_level_parse(const char *s);

// Thread-safe; each line is prefixed with "tessera: <level>: " (and "[rank R] " when ts_log_set_rank set one).
void ts_log(ts_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ts_log_set_rank(int rank); // -1 = no rank prefix

#define TS_LOG_E(...) ts_log(TS_LOG_ERROR, __VA_ARGS__)
#define TS_LOG_W(...) ts_log(TS_LOG_WARN, __VA_ARGS__)
#define TS_LOG_I(...) ts_log(TS_LOG_INFO, __VA_ARGS__)
#define TS_LOG_D(...) ts_log(TS_LOG_DEBUG, __VA_ARGS__)

#ifdef __cplusplus
}
#endif

#endif
