// ts_settings.h: the table of every environment variable Tessera reads, and its one reader.
//
// src/core/ts_settings.def holds ONE table (name, type, layer, kind, default, effect, reader),
// compiled into ts_settings.c; every read of the environment in src/ goes through it (ts_env_* in
// ts_env.h), except the faces, which may read their own keys directly. docs/settings.md's tables
// are generated from it and checked against it (tests/docs/check_docs.py settings). Reading a name
// that is not in the table, or reading it as another type than its entry says, is a mistake in the
// code: it aborts in debug builds (the tests) and fails the read in release builds. A TESSERA_*
// variable in the environment that is not in the table (a misspelling) gets one warning on stderr,
// once per process, naming the closest known setting.
#ifndef TS_SETTINGS_H
#define TS_SETTINGS_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    TS_SET_STR,    // read with ts_env_str (any entry may also be read that way)
    TS_SET_INT,    // ts_env_int
    TS_SET_I64,    // ts_env_i64
    TS_SET_DOUBLE, // ts_env_double
    TS_SET_SIZE,   // ts_env_size
    TS_SET_BOOL,   // ts_env_bool
} ts_setting_type;

typedef struct {
    // The variable. A family ends in "_<R>" (the suffixes are `members`) or "_*" (any suffix).
    const char *name;
    ts_setting_type type;
    const char *layer;   // the docs/settings.md section: core, device, kernels, runtime, hpl, hpcg,
                         // cli, blas, external (variables of other programs), scripts (not read by
                         // the library: build, test and bench scripts)
    const char *kind;    // user, sim/test, experiment, dev, external, script
    const char *def;     // the default, in words
    const char *effect;  // one line (Markdown)
    const char *read_in; // the files that read it
    const char *members; // a "_<R>" family: its suffixes, separated by spaces
} ts_setting;

// The table, in the order of docs/settings.md; *n gets its length.
const ts_setting *ts_settings_table(size_t *n);

// The entry of `name` (a family's entry for one of its members), or NULL.
const ts_setting *ts_settings_find(const char *name);

// The known name closest to `name` by edit distance (family entries by their prefix).
const char *ts_settings_closest(const char *name);

// Writes one warning to f for each TESSERA_* entry of envp ("NAME=value" strings, NULL-ended)
// that is not a known setting, naming the closest known one; returns how many.
int ts_settings_check_environ(char *const *envp, FILE *f);

// ts_settings_check_environ(environ, stderr) once per process; every ts_env_* read calls it first.
void ts_settings_check_once(void);

#ifdef __cplusplus
}
#endif

#endif
