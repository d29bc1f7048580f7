// ts_json.h: a streaming JSON writer, and the results-schema document every tool writes.
#ifndef TS_JSON_H
#define TS_JSON_H

#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

// Streaming writer with automatic commas and indentation. Keys are required inside objects.
// Non-finite doubles are written as null (JSON has no NaN/Inf).
typedef struct ts_json ts_json;

ts_json *ts_json_open_file(FILE *f);   // caller keeps ownership of f
ts_json *ts_json_open_buffer(void);     // writes to a growing in-memory buffer
const char *ts_json_buffer(const ts_json *j); // NUL-terminated text written so far (buffer mode)
int ts_json_close(ts_json *j);          // returns TS_ERR_STATE if objects/arrays are left open

void ts_json_begin_object(ts_json *j, const char *key); // key NULL at top level / in arrays
void ts_json_end_object(ts_json *j);
void ts_json_begin_array(ts_json *j, const char *key);
void ts_json_end_array(ts_json *j);
void ts_json_str(ts_json *j, const char *key, const char *value); // NULL value -> null; escapes
void ts_json_int(ts_json *j, const char *key, int64_t value);
void ts_json_num(ts_json *j, const char *key, double value);      // %.17g (shortest round-trip)
void ts_json_bool(ts_json *j, const char *key, int value);
void ts_json_null(ts_json *j, const char *key);

// The results schema (../shared/results-schema.md): a document with tool/version/commit/date/
// host/devices filled in, and `results` entries added one by one.
typedef struct {
    const char *bench;      // "gemm", "hpl", "copy", ...
    const char *engine;     // "cublas", "cpu", "tessera", ...
    char precision;         // 'd', 's', 'c', 'z', or 0 to omit
    const char *where;      // "device" | "host" | NULL
    int reps;
    double sec_median, sec_min, sec_max;
    double tf_median, tf_min, tf_max; // TFLOP/s; negative = omit the tflops object
    int verified;           // 1 verified, 0 explicitly skipped
    double error, bound;    // verification figure and its bound (NaN = omit)
} ts_result_common;

// Writes the header fields and opens "results": [. `devices_writer` (may be NULL) writes the
// entries of the "devices" array; the host object gets cpu model, cores and mpi_ranks.
typedef void (*ts_json_devices_fn)(ts_json *j, void *ctx);
void ts_results_begin(ts_json *j, const char *tool, int mpi_ranks, ts_json_devices_fn devices,
                      void *ctx);
// Opens one result entry and writes the common fields; the caller then writes "shape" and "extra"
// objects and calls ts_results_entry_end.
void ts_results_entry_begin(ts_json *j, const ts_result_common *r);
void ts_results_entry_end(ts_json *j);
void ts_results_end(ts_json *j); // closes results and the document
// ts_results_end, the writer closed (ts_json_close), then the file unless it is stdout (flushed
// then); 0, or the first failure (TS_ERR_IO "writing the JSON file 'path' failed" for fclose).
int ts_results_finish(ts_json *j, FILE *f, const char *path);

// Build identity: version (from CMake), git commit (short hash at configure time, "unknown" else).
const char *ts_version(void);
const char *ts_commit(void);
// CPU model name from /proc/cpuinfo and the number of online cores.
const char *ts_cpu_model(void);
int ts_cpu_cores(void);

#ifdef __cplusplus
}
#endif

#endif
