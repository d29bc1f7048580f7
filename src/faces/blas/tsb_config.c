// tsb_config.c: the library's configuration (TESSERA_* variables over $TESSERA_BLAS_CONF) and the call trace.
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tsb_internal.h"

#include "core/ts_settings.h"

// The keys a config file may set, one per line ("KEY = VALUE" or "KEY VALUE", '#' starts a
// comment); the environment variable of the same name wins over the file. The fixed keys, then
// TESSERA_BLAS_DISABLE_<R> and TESSERA_BLAS_THRESHOLD_<R> for every routine R in the order of the
// routine enum (key names made once in config_init).
static const char *const fixed_keys[] = {
    "TESSERA_CPU_BLAS",       "TESSERA_BLAS_THRESHOLD", "TESSERA_BLAS_DEVICES", "TESSERA_BLAS_TILE",
    "TESSERA_BLAS_CPU_RATIO", "TESSERA_BLAS_TRACE",
    "TESSERA_CPU_BLAS_LP64", // ILP64 build only: the 32-bit CPU BLAS of the runtime's own CPU work
};
enum { NFIXED = sizeof fixed_keys / sizeof fixed_keys[0], KEY_DISABLE = NFIXED, KEY_THRESHOLD = NFIXED + TSB_NROUTINES };
enum { NKEYS = NFIXED + 2 * TSB_NROUTINES, KEY_GLOBAL_THRESHOLD = 1 };
static const char *const routine_names[TSB_NROUTINES] = {
    "SGEMM",  "DGEMM",  "CGEMM",  "ZGEMM",  "SSYMM",  "DSYMM",  "CSYMM",  "ZSYMM",  "CHEMM",  "ZHEMM",
    "SSYRK",  "DSYRK",  "CSYRK",  "ZSYRK",  "CHERK",  "ZHERK",  "SSYR2K", "DSYR2K", "CSYR2K", "ZSYR2K",
    "CHER2K", "ZHER2K", "STRMM",  "DTRMM",  "CTRMM",  "ZTRMM",  "STRSM",  "DTRSM",  "CTRSM",  "ZTRSM",
};
static char keys[NKEYS][40];

// Default offload thresholds per routine: the equivalent m*n*k (tsb_internal.h) from which the
// library beat the CPU BLAS by at least 1.2x at every larger size, operands in host memory, as
// `blas_crossover` measured it: the median of each routine over three H100 machines and one H200
// machine of one host kind (16-core Xeon, OpenBLAS; the larger middle value where two differ;
// docs/blas.md "Where offload pays", bench/results/h100/ and h200/blas-crossover-*).
// Edge n, cubed.
#define N3(n) ((int64_t)(n) * (n) * (n))
static const int64_t default_thresholds[TSB_NROUTINES] = {
    N3(512), N3(384), N3(384), N3(256),                                 // S/D/C/ZGEMM
    N3(512), N3(384), N3(384), N3(384), N3(384), N3(256),               // S/D/C/ZSYMM, C/ZHEMM
    N3(768), N3(512), N3(384), N3(192), N3(384), N3(384),               // S/D/C/ZSYRK, C/ZHERK
    N3(512), N3(384), N3(384), N3(256), N3(384), N3(256),               // S/D/C/ZSYR2K, C/ZHER2K
    N3(768), N3(512), N3(384), N3(384), N3(768), N3(512), N3(384), N3(384), // S/D/C/ZTRMM, S/D/C/ZTRSM
};
#undef N3

// The lazily created configuration: part of the library's one documented global context.
static tsb_config cfg;
static pthread_once_t cfg_once = PTHREAD_ONCE_INIT;

static _Noreturn void config_fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("tessera_blas: configuration error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static char *trim(char *s) {
    while (isspace((unsigned char)*s)) s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1])) *--e = '\0';
    return s;
}

static void read_file(const char *path, char vals[NKEYS][1024]) {
    FILE *f = fopen(path, "r");
    if (!f) config_fail("TESSERA_BLAS_CONF=%s: %s", path, strerror(errno));
    char line[2048];
    int lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash) *hash = '\0';
        char *s = trim(line);
        if (!*s) continue;
        size_t klen = strcspn(s, " \t=");
        char *v = s + klen;
        while (*v == ' ' || *v == '\t' || *v == '=') v++;
        int found = 0;
        for (int i = 0; i < NKEYS; i++) {
            if (strlen(keys[i]) == klen && strncasecmp(s, keys[i], klen) == 0) {
                snprintf(vals[i], sizeof vals[i], "%s", trim(v));
                found = 1;
            }
        }
        if (!found) config_fail("%s:%d: unknown key '%.*s'", path, lineno, (int)klen, s);
    }
    fclose(f);
}

static int64_t parse_int(const char *key, const char *v, int64_t lo) {
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 0);
    if (errno || end == v || *trim(end) || x < lo) config_fail("%s='%s' is not an integer >= %lld", key, v, (long long)lo);
    return x;
}

static int parse_bool(const char *key, const char *v) {
    if (!strcasecmp(v, "1") || !strcasecmp(v, "yes") || !strcasecmp(v, "true") || !strcasecmp(v, "on")) return 1;
    if (!strcasecmp(v, "0") || !strcasecmp(v, "no") || !strcasecmp(v, "false") || !strcasecmp(v, "off") || !*v) return 0;
    config_fail("%s='%s' is not a boolean (1/0, yes/no, true/false, on/off)", key, v);
}

// An offload threshold: an integer >= 0 or "none" (never offload).
static int64_t parse_threshold(const char *key, const char *v) {
    if (!strcasecmp(v, "none")) return TSB_NEVER;
    return parse_int(key, v, 0);
}

// Applies the value of a key other than the thresholds (resolved in config_init).
static void apply(int i, const char *v) {
    const char *key = keys[i];
    if (!strcmp(key, "TESSERA_CPU_BLAS")) {
        if (!*v || strlen(v) >= sizeof cfg.cpu_blas) config_fail("%s: empty or too long", key);
        snprintf(cfg.cpu_blas, sizeof cfg.cpu_blas, "%s", v);
    } else if (!strcmp(key, "TESSERA_CPU_BLAS_LP64")) {
        if (!*v || strlen(v) >= sizeof cfg.cpu_blas_core) config_fail("%s: empty or too long", key);
        snprintf(cfg.cpu_blas_core, sizeof cfg.cpu_blas_core, "%s", v);
    } else if (!strcmp(key, "TESSERA_BLAS_DEVICES")) {
        cfg.max_devices = strcasecmp(v, "all") == 0 ? 0 : (int)parse_int(key, v, 1);
        if (cfg.max_devices > TS_MAX_DEVICES) config_fail("%s=%s: at most %d devices", key, v, TS_MAX_DEVICES);
    } else if (!strcmp(key, "TESSERA_BLAS_TILE")) {
        cfg.tile = parse_int(key, v, 1);
    } else if (!strcmp(key, "TESSERA_BLAS_CPU_RATIO")) {
        if (!strcasecmp(v, "auto")) {
            cfg.cpu_share = TS_TILES_CPU_AUTO;
        } else {
            char *end;
            double x = strtod(v, &end);
            if (end == v || *trim(end) || !(x >= 0 && x <= 1)) config_fail("%s='%s': auto or a fraction in [0, 1]", key, v);
            cfg.cpu_share = x;
        }
        cfg.cpu_share_set = 1;
    } else if (!strcmp(key, "TESSERA_BLAS_TRACE")) {
        if (!*v) return;
        if (!strcmp(v, "stderr")) cfg.trace = stderr;
        else if (!strcmp(v, "stdout")) cfg.trace = stdout;
        else if (!(cfg.trace = fopen(v, "a"))) config_fail("%s=%s: %s", key, v, strerror(errno));
        if (cfg.trace != stderr && cfg.trace != stdout) setvbuf(cfg.trace, NULL, _IOLBF, 0);
    } else if (i >= KEY_DISABLE && i < KEY_DISABLE + TSB_NROUTINES) {
        cfg.disabled[i - KEY_DISABLE] = parse_bool(key, v);
    }
}

static void config_init(void) {
    ts_settings_check_once(); // a misspelt TESSERA_* variable: one warning, as from the commands
    for (int i = 0; i < NFIXED; i++) snprintf(keys[i], sizeof keys[i], "%s", fixed_keys[i]);
    for (int r = 0; r < TSB_NROUTINES; r++) {
        snprintf(keys[KEY_DISABLE + r], sizeof keys[0], "TESSERA_BLAS_DISABLE_%s", routine_names[r]);
        snprintf(keys[KEY_THRESHOLD + r], sizeof keys[0], "TESSERA_BLAS_THRESHOLD_%s", routine_names[r]);
    }
#ifdef TSB_ILP64
    snprintf(cfg.cpu_blas, sizeof cfg.cpu_blas, "libopenblas64.so.0"); // Debian's ILP64 OpenBLAS
#else
    snprintf(cfg.cpu_blas, sizeof cfg.cpu_blas, "libopenblas.so.0");
#endif
    snprintf(cfg.cpu_blas_core, sizeof cfg.cpu_blas_core, "libopenblas.so.0");
    static char vals[NKEYS][1024]; // only used during this one-time initialisation
    const char *path = getenv("TESSERA_BLAS_CONF");
    if (path && *path) read_file(path, vals);
    const char *env[NKEYS];
    for (int i = 0; i < NKEYS; i++) {
        env[i] = getenv(keys[i]);
        const char *v = env[i] ? env[i] : vals[i][0] ? vals[i] : NULL;
        if (v && i != KEY_GLOBAL_THRESHOLD && (i < KEY_THRESHOLD || i >= KEY_THRESHOLD + TSB_NROUTINES)) apply(i, v);
    }
    // A routine's threshold: the environment before the file; in each, the routine's own key
    // before TESSERA_BLAS_THRESHOLD; then the measured default.
    const int g = KEY_GLOBAL_THRESHOLD;
    for (int r = 0; r < TSB_NROUTINES; r++) {
        const int k = KEY_THRESHOLD + r;
        const char *v = env[k] ? env[k] : env[g] ? env[g] : vals[k][0] ? vals[k] : vals[g][0] ? vals[g] : NULL;
        int key = env[k] || (!env[g] && vals[k][0]) ? k : g;
        cfg.threshold[r] = v ? parse_threshold(keys[key], v) : default_thresholds[r];
    }
}

const tsb_config *tsb_config_get(void) {
    pthread_once(&cfg_once, config_init);
    return &cfg;
}

int tsb_trace_on(void) { return tsb_config_get()->trace != NULL; }

void tsb_trace(const char *fmt, ...) {
    FILE *f = tsb_config_get()->trace;
    if (!f) return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    // one fprintf per line: stdio locks the stream, so lines of concurrent callers do not mix
    fprintf(f, "tessera_blas: %s\n", line);
}
