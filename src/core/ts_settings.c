// ts_settings.c: the table of every environment variable Tessera reads (ts_settings.def), the one reader of the environment, and the misspelling check.
#include "ts_settings.h"

#include "ts_env.h"
#include "ts_error.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define TS_SETTING(layer, name, type, kind, def, effect, read_in) {name, type, layer, kind, def, effect, read_in, NULL}
#define TS_FAMILY(layer, name, type, kind, def, effect, read_in, members) {name, type, layer, kind, def, effect, read_in, members}

static const ts_setting table[] = {
#include "ts_settings.def"
};

#undef TS_SETTING
#undef TS_FAMILY

const ts_setting *ts_settings_table(size_t *n) {
    if (n) *n = sizeof table / sizeof table[0];
    return table;
}

// Length of a family's prefix ("TESSERA_BLAS_DISABLE_" of "TESSERA_BLAS_DISABLE_<R>"), 0 when the
// entry is a single variable.
static size_t family_prefix(const ts_setting *s) {
    size_t len = strlen(s->name);
    if (len > 3 && strcmp(s->name + len - 3, "<R>") == 0) return len - 3;
    if (len > 1 && s->name[len - 1] == '*') return len - 1;
    return 0;
}

// `word` is one of the space-separated words of `list`.
static int in_list(const char *list, const char *word) {
    size_t w = strlen(word);
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, " ");
        if (n == w && strncmp(p, word, n) == 0) return 1;
        p += n;
        p += strspn(p, " ");
    }
    return 0;
}

const ts_setting *ts_settings_find(const char *name) {
    if (!name) return NULL;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        const ts_setting *s = &table[i];
        size_t pre = family_prefix(s);
        if (!pre) {
            if (strcmp(s->name, name) == 0) return s;
        } else if (strncmp(s->name, name, pre) == 0 && name[pre] != '\0') {
            if (!s->members || in_list(s->members, name + pre)) return s;
        }
    }
    return NULL;
}

// Edit distance (insertions, deletions, substitutions) of a and the first bn characters of b.
static size_t edit_distance(const char *a, const char *b, size_t bn) {
    size_t an = strlen(a);
    if (an > 63 || bn > 63) return (size_t)-1;
    size_t row[64];
    for (size_t j = 0; j <= bn; j++) row[j] = j;
    for (size_t i = 1; i <= an; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= bn; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[bn];
}

const char *ts_settings_closest(const char *name) {
    const char *best = NULL;
    size_t best_d = (size_t)-1;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        const ts_setting *s = &table[i];
        if (strncmp(s->name, "TESSERA_", 8) != 0) continue;
        size_t pre = family_prefix(s);
        size_t d = edit_distance(name, s->name, pre ? pre : strlen(s->name));
        if (d < best_d) best_d = d, best = s->name;
    }
    return best;
}

int ts_settings_check_environ(char *const *envp, FILE *f) {
    int n = 0;
    for (char *const *e = envp; e && *e; e++) {
        if (strncmp(*e, "TESSERA_", 8) != 0) continue;
        char name[128];
        size_t len = strcspn(*e, "=");
        if (len >= sizeof name) len = sizeof name - 1;
        memcpy(name, *e, len);
        name[len] = '\0';
        if (ts_settings_find(name)) continue;
        fprintf(f, "tessera: warning: %s is not a Tessera setting (did you mean %s? docs/settings.md lists them)\n",
                name, ts_settings_closest(name));
        n++;
    }
    return n;
}

extern char **environ;

static void check_environ(void) { ts_settings_check_environ(environ, stderr); }

void ts_settings_check_once(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, check_environ);
}

// ---------------------------------------------------------------- the reader (ts_env.h)

// The entry of a variable the code reads as `type`; a name missing from the table or read as
// another type is a mistake in the code: abort in debug builds, a failed read in release builds.
static int registered(const char *name, ts_setting_type type) {
    ts_settings_check_once();
    const ts_setting *s = ts_settings_find(name);
    if (s && (type == TS_SET_STR || s->type == type)) return 1;
    fprintf(stderr, "tessera: internal error: setting %s %s\n", name ? name : "(null)",
            s ? "is read as another type than its entry in src/core/ts_settings.def says"
              : "is not in the table of src/core/ts_settings.def");
#ifndef NDEBUG
    abort();
#else
    return 0;
#endif
}

static const char *value_of(const char *name) {
    const char *v = getenv(name);
    return (v && v[0] != '\0') ? v : NULL;
}

const char *ts_env_str(const char *name) {
    if (!registered(name, TS_SET_STR)) {
        TS_ERROR(TS_ERR_ARG, "setting %s is not in the table of settings", name ? name : "(null)");
        return NULL;
    }
    return value_of(name);
}

const char *ts_env_raw(const char *name) {
    if (!registered(name, TS_SET_STR)) {
        TS_ERROR(TS_ERR_ARG, "setting %s is not in the table of settings", name ? name : "(null)");
        return NULL;
    }
    return getenv(name);
}

#define ENV_LOOKUP(fn_name, type, set_type, parser)                                                         \
    int fn_name(const char *name, type *out) {                                                              \
        if (!registered(name, set_type))                                                                    \
            TS_RAISE(TS_ERR_ARG, "setting %s is not in the table of settings", name ? name : "(null)");     \
        const char *v = value_of(name);                                                                     \
        if (!v) return 0;                                                                                   \
        type tmp = 0;                                                                                       \
        TS_CHECK(parser(v, name, &tmp));                                                                    \
        *out = tmp;                                                                                         \
        return 1;                                                                                           \
    }

ENV_LOOKUP(ts_env_int, int, TS_SET_INT, ts_parse_int)
ENV_LOOKUP(ts_env_i64, int64_t, TS_SET_I64, ts_parse_i64)
ENV_LOOKUP(ts_env_double, double, TS_SET_DOUBLE, ts_parse_double)
ENV_LOOKUP(ts_env_size, size_t, TS_SET_SIZE, ts_parse_size)
ENV_LOOKUP(ts_env_bool, int, TS_SET_BOOL, ts_parse_bool)

int ts_env_launch_size(void) {
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS", "SLURM_NTASKS"};
    int size = 1;
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = ts_env_str(vars[i]);
        int n = v ? atoi(v) : 0;
        if (n > size) size = n;
    }
    return size;
}
