// ts_json.c: streaming JSON writer (file or buffer) and the results-schema document.
#include "ts_json.h"

#include "ts_commit.h"
#include "ts_config.h"
#include "ts_error.h"
#include "ts_timer.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define JSON_MAX_DEPTH 64

struct ts_json {
    FILE *f;        // file mode when non-NULL
    char *buf;      // buffer mode
    size_t len, cap;
    int depth;
    char kind[JSON_MAX_DEPTH];   // 'o' object, 'a' array
    long count[JSON_MAX_DEPTH];  // members written so far at each level
    int status;                  // first failure (I/O, memory, misuse), reported by close
};

ts_json *ts_json_open_file(FILE *f) {
    if (!f) {
        ts_error_set(TS_ERR_ARG, __FILE__, __LINE__, "ts_json_open_file: NULL file");
        return NULL;
    }
    ts_json *j = calloc(1, sizeof *j);
    if (!j) {
        ts_error_set(TS_ERR_NOMEM, __FILE__, __LINE__, "ts_json_open_file: out of memory");
        return NULL;
    }
    j->f = f;
    return j;
}

ts_json *ts_json_open_buffer(void) {
    ts_json *j = calloc(1, sizeof *j);
    if (!j || !(j->buf = malloc(256))) {
        free(j);
        ts_error_set(TS_ERR_NOMEM, __FILE__, __LINE__, "ts_json_open_buffer: out of memory");
        return NULL;
    }
    j->cap = 256;
    j->buf[0] = '\0';
    return j;
}

const char *ts_json_buffer(const ts_json *j) { return (j && j->buf) ? j->buf : ""; }

static void fail(ts_json *j, int code, const char *what) {
    if (j->status == 0) j->status = ts_error_set(code, __FILE__, __LINE__, "json writer: %s", what);
}

static void put(ts_json *j, const char *s, size_t n) {
    if (j->status) return;
    if (j->f) {
        if (fwrite(s, 1, n, j->f) != n) fail(j, TS_ERR_IO, "write failed");
        return;
    }
    if (j->len + n + 1 > j->cap) {
        size_t cap = j->cap;
        while (j->len + n + 1 > cap) cap *= 2;
        char *nb = realloc(j->buf, cap);
        if (!nb) { fail(j, TS_ERR_NOMEM, "out of memory"); return; }
        j->buf = nb;
        j->cap = cap;
    }
    memcpy(j->buf + j->len, s, n);
    j->len += n;
    j->buf[j->len] = '\0';
}

static void puts_(ts_json *j, const char *s) { put(j, s, strlen(s)); }

static void indent(ts_json *j, int depth) {
    static const char spaces[] = "                                ";
    put(j, "\n", 1);
    for (int d = 0; d < depth; d++) put(j, spaces, 2);
}

static void put_string(ts_json *j, const char *s) {
    put(j, "\"", 1);
    const char *run = s;
    for (const char *p = s; *p; p++) {
        unsigned char c = (unsigned char)*p;
        // Bytes >= 0x80 pass through: UTF-8 is valid JSON text as it is.
        if (c >= 0x20 && c != '"' && c != '\\') continue;
        put(j, run, (size_t)(p - run));
        char esc[8];
        switch (c) {
        case '"': puts_(j, "\\\""); break;
        case '\\': puts_(j, "\\\\"); break;
        case '\n': puts_(j, "\\n"); break;
        case '\r': puts_(j, "\\r"); break;
        case '\t': puts_(j, "\\t"); break;
        case '\b': puts_(j, "\\b"); break;
        case '\f': puts_(j, "\\f"); break;
        default:
            snprintf(esc, sizeof esc, "\\u%04x", c);
            puts_(j, esc);
        }
        run = p + 1;
    }
    put(j, run, strlen(run));
    put(j, "\"", 1);
}

// Comma, newline and indentation before a value, then its key inside an object.
static void begin_value(ts_json *j, const char *key) {
    if (j->depth == 0) {
        if (key) fail(j, TS_ERR_STATE, "key given for a top-level value");
        return;
    }
    int d = j->depth - 1;
    if (j->count[d] > 0) put(j, ",", 1);
    j->count[d]++;
    indent(j, j->depth);
    if (j->kind[d] == 'o') {
        if (!key) { fail(j, TS_ERR_STATE, "value without a key inside an object"); return; }
        put_string(j, key);
        put(j, ": ", 2);
    } else if (key) {
        fail(j, TS_ERR_STATE, "key given for a value inside an array");
    }
}

static void end_value(ts_json *j) {
    if (j->depth == 0) put(j, "\n", 1); // a complete document ends with a newline
}

static void open_container(ts_json *j, const char *key, char kind) {
    begin_value(j, key);
    if (j->depth >= JSON_MAX_DEPTH) { fail(j, TS_ERR_STATE, "nesting too deep"); return; }
    put(j, kind == 'o' ? "{" : "[", 1);
    j->kind[j->depth] = kind;
    j->count[j->depth] = 0;
    j->depth++;
}

static void close_container(ts_json *j, char kind) {
    if (j->depth == 0 || j->kind[j->depth - 1] != kind)
        { fail(j, TS_ERR_STATE, kind == 'o' ? "end_object without an open object"
                                                 : "end_array without an open array"); return; }
    j->depth--;
    if (j->count[j->depth] > 0) indent(j, j->depth);
    put(j, kind == 'o' ? "}" : "]", 1);
    end_value(j);
}

void ts_json_begin_object(ts_json *j, const char *key) { open_container(j, key, 'o'); }
void ts_json_end_object(ts_json *j) { close_container(j, 'o'); }
void ts_json_begin_array(ts_json *j, const char *key) { open_container(j, key, 'a'); }
void ts_json_end_array(ts_json *j) { close_container(j, 'a'); }

void ts_json_str(ts_json *j, const char *key, const char *value) {
    begin_value(j, key);
    if (value) put_string(j, value);
    else puts_(j, "null");
    end_value(j);
}

void ts_json_int(ts_json *j, const char *key, int64_t value) {
    char b[32];
    snprintf(b, sizeof b, "%lld", (long long)value);
    begin_value(j, key);
    puts_(j, b);
    end_value(j);
}

void ts_json_num(ts_json *j, const char *key, double value) {
    begin_value(j, key);
    if (!isfinite(value)) {
        puts_(j, "null");
    } else {
        // The shortest of %.15g/%.16g/%.17g that reads back to the same double: 0.1 stays "0.1".
        char b[40];
        for (int prec = 15; prec <= 17; prec++) {
            snprintf(b, sizeof b, "%.*g", prec, value);
            if (strtod(b, NULL) == value) break;
        }
        puts_(j, b);
    }
    end_value(j);
}

void ts_json_bool(ts_json *j, const char *key, int value) {
    begin_value(j, key);
    puts_(j, value ? "true" : "false");
    end_value(j);
}

void ts_json_null(ts_json *j, const char *key) {
    begin_value(j, key);
    puts_(j, "null");
    end_value(j);
}

int ts_json_close(ts_json *j) {
    if (!j) return 0;
    int rc = j->status;
    if (rc == 0 && j->depth != 0)
        rc = ts_error_set(TS_ERR_STATE, __FILE__, __LINE__, "json writer closed with %d object(s)/array(s) open",
                          j->depth);
    if (rc == 0 && j->f && fflush(j->f) != 0)
        rc = ts_error_set(TS_ERR_IO, __FILE__, __LINE__, "json writer: flush failed");
    free(j->buf);
    free(j);
    return rc;
}

// --- results schema (../shared/results-schema.md) ---

void ts_results_begin(ts_json *j, const char *tool, int mpi_ranks, ts_json_devices_fn devices,
                      void *ctx) {
    char date[32];
    ts_utc_iso8601(date, sizeof date);
    ts_json_begin_object(j, NULL);
    ts_json_str(j, "tool", tool);
    ts_json_str(j, "version", ts_version());
    ts_json_str(j, "commit", ts_commit());
    ts_json_str(j, "date", date);
    ts_json_begin_object(j, "host");
    ts_json_str(j, "cpu", ts_cpu_model());
    ts_json_int(j, "cores", ts_cpu_cores());
    ts_json_int(j, "mpi_ranks", mpi_ranks);
    ts_json_end_object(j);
    ts_json_begin_array(j, "devices");
    if (devices) devices(j, ctx);
    ts_json_end_array(j);
    ts_json_begin_array(j, "results");
}

void ts_results_entry_begin(ts_json *j, const ts_result_common *r) {
    ts_json_begin_object(j, NULL);
    ts_json_str(j, "bench", r->bench);
    ts_json_str(j, "engine", r->engine);
    if (r->precision) {
        char p[2] = {r->precision, '\0'};
        ts_json_str(j, "precision", p);
    }
    if (r->where) ts_json_str(j, "where", r->where);
    ts_json_int(j, "reps", r->reps);
    ts_json_begin_object(j, "seconds");
    ts_json_num(j, "median", r->sec_median);
    ts_json_num(j, "min", r->sec_min);
    ts_json_num(j, "max", r->sec_max);
    ts_json_end_object(j);
    if (r->tf_median >= 0.0) {
        ts_json_begin_object(j, "tflops");
        ts_json_num(j, "median", r->tf_median);
        ts_json_num(j, "min", r->tf_min);
        ts_json_num(j, "max", r->tf_max);
        ts_json_end_object(j);
    }
    ts_json_bool(j, "verified", r->verified);
    if (!isnan(r->error)) ts_json_num(j, "error", r->error);
    if (!isnan(r->bound)) ts_json_num(j, "bound", r->bound);
}

void ts_results_entry_end(ts_json *j) { ts_json_end_object(j); }

void ts_results_end(ts_json *j) {
    ts_json_end_array(j);
    ts_json_end_object(j);
}

int ts_results_finish(ts_json *j, FILE *f, const char *path) {
    ts_results_end(j);
    int rc = ts_json_close(j);
    if (f == stdout) return rc;
    if (fclose(f) != 0 && rc == 0)
        rc = ts_error_set(TS_ERR_IO, __FILE__, __LINE__, "writing the JSON file '%s' failed", path);
    return rc;
}

const char *ts_version(void) { return TS_VERSION; }
const char *ts_commit(void) { return TS_GIT_COMMIT; }

// The CPU model is read once: it cannot change while the process runs, so the buffer is
// write-once state behind pthread_once rather than mutable global state.
static pthread_once_t cpu_model_once = PTHREAD_ONCE_INIT;
static char cpu_model[128] = "unknown";

static void read_cpu_model(void) {
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        // x86 says "model name"; some arm64 kernels only give "Model" or "Hardware".
        if (strncmp(line, "model name", 10) != 0 && strncmp(line, "Model", 5) != 0 &&
            strncmp(line, "Hardware", 8) != 0)
            continue;
        char *colon = strchr(line, ':');
        if (!colon) continue;
        char *v = colon + 1;
        while (*v == ' ' || *v == '\t') v++;
        size_t n = strcspn(v, "\r\n");
        while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t')) n--;
        if (n == 0) continue;
        if (n >= sizeof cpu_model) n = sizeof cpu_model - 1;
        memcpy(cpu_model, v, n);
        cpu_model[n] = '\0';
        break;
    }
    if (fclose(f) != 0) return; // read-only stream: nothing was lost
}

const char *ts_cpu_model(void) {
    if (pthread_once(&cpu_model_once, read_cpu_model) != 0) return "unknown";
    return cpu_model;
}

int ts_cpu_cores(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n >= 1 ? (int)n : 1;
}
