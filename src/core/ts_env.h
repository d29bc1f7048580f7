// ts_env.h: value parsing (sizes, durations, lists) and the reader of the environment (ts_settings.c).
#ifndef TS_ENV_H
#define TS_ENV_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// Strict parsers: the whole string must be consumed. Return 0 or TS_ERR_PARSE (message names `what`
// and the value). `what` is a label for messages, e.g. "TESSERA_SIM_DEVICES" or "--reps".
int ts_parse_i64(const char *s, const char *what, int64_t *out);
int ts_parse_int(const char *s, const char *what, int *out);
int ts_parse_double(const char *s, const char *what, double *out);
int ts_parse_bool(const char *s, const char *what, int *out);        // 1/0/yes/no/true/false/on/off
// "4096", "64K", "2M", "1.5G", "80%"(rejected here), binary multiples; bytes out.
int ts_parse_size(const char *s, const char *what, size_t *out);
// "10m", "90s", "1h30m", "2.5" (seconds) -> seconds.
int ts_parse_duration(const char *s, const char *what, double *out);
// Comma-separated list: "1,0.5,0.25" -> up to max values; *n gets the count.
int ts_parse_double_list(const char *s, const char *what, double *out, int max, int *n);
int ts_parse_i64_list(const char *s, const char *what, int64_t *out, int max, int *n);
// Sizes list for sweeps: "1024,2048" or a range "1024:8192:1024" (start:stop:step, inclusive)
// or "1024:8192:x2" (geometric).
int ts_parse_size_sweep(const char *s, const char *what, int64_t *out, int max, int *n);

// Environment lookups, the only reads of the environment below the faces (implemented in
// ts_settings.c): `name` must be an entry of the table of settings (core/ts_settings.h) of this type
// (ts_env_str: any type); anything else is a mistake in the code (abort in debug builds).
// *out is untouched and 0 returned when the variable is unset or empty.
// Returns 1 when it was set and parsed, TS_ERR_PARSE when set but malformed.
int ts_env_int(const char *name, int *out);
int ts_env_i64(const char *name, int64_t *out);
int ts_env_double(const char *name, double *out);
int ts_env_size(const char *name, size_t *out);
int ts_env_bool(const char *name, int *out);
const char *ts_env_str(const char *name); // NULL when unset or empty
// The value as set, even empty (CUDA_VISIBLE_DEVICES="" hides every GPU); NULL only when unset.
const char *ts_env_raw(const char *name);
// How many processes the launcher started (mpirun/mpiexec, Slurm): the largest of
// OMPI_COMM_WORLD_SIZE, PMI_SIZE, PMIX_SIZE, MPI_LOCALNRANKS and SLURM_NTASKS; 1 when none is set.
int ts_env_launch_size(void);

#ifdef __cplusplus
}
#endif

#endif
