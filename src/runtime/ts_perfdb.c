// ts_perfdb.c: the tile runtime's performance database (workload class -> device/CPU rates and ratio), kept in a text file.
#include "runtime/ts_perfdb.h"

#include "core/ts_env.h"
#include "core/ts_error.h"
#include "core/ts_log.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PERFDB_MAX 4096 // classes kept; a file with more is treated as corrupt

struct ts_perfdb {
    char path[1024];
    ts_perfdb_entry *e;
    int n, cap;
};

static int log2_class(int64_t x) { return x <= 1 ? 0 : (int)lround(log2((double)x)); }

ts_perfdb_key ts_perfdb_key_of(char prec, char ta, char tb, int64_t m, int64_t n, int64_t k, int ndev) {
    ts_perfdb_key key;
    memset(&key, 0, sizeof key);
    key.prec = prec;
    key.ops[0] = (ta == 'N' || ta == 'n') ? 'N' : 'T';
    key.ops[1] = (tb == 'N' || tb == 'n') ? 'N' : 'T';
    key.lm = log2_class(m), key.ln = log2_class(n), key.lk = log2_class(k);
    key.ndev = ndev;
    return key;
}

static int key_eq(const ts_perfdb_key *a, const ts_perfdb_key *b) {
    return a->prec == b->prec && a->ops[0] == b->ops[0] && a->ops[1] == b->ops[1] && a->lm == b->lm &&
           a->ln == b->ln && a->lk == b->lk && a->ndev == b->ndev;
}

int ts_perfdb_open(const char *path, ts_perfdb **out) {
    if (!out) TS_RAISE(TS_ERR_ARG, "ts_perfdb_open: out is NULL");
    *out = NULL;
    ts_perfdb *db = calloc(1, sizeof *db);
    if (!db) TS_RAISE(TS_ERR_NOMEM, "ts_perfdb_open: out of host memory");
    const char *env = ts_env_str("TESSERA_PERFDB"), *home = ts_env_str("HOME");
    if (path && *path) snprintf(db->path, sizeof db->path, "%s", path);
    else if (env && *env) snprintf(db->path, sizeof db->path, "%s", env);
    else snprintf(db->path, sizeof db->path, "%s/.cache/tessera/perfdb.txt", home && *home ? home : ".");
    *out = db;
    return 0;
}

void ts_perfdb_close(ts_perfdb *db) {
    if (!db) return;
    free(db->e);
    free(db);
}

const char *ts_perfdb_path(const ts_perfdb *db) { return db ? db->path : ""; }
int ts_perfdb_count(const ts_perfdb *db) { return db ? db->n : 0; }

static ts_perfdb_entry *add(ts_perfdb *db, const ts_perfdb_key *key) {
    if (db->n == db->cap) {
        int cap = db->cap ? 2 * db->cap : 32;
        ts_perfdb_entry *e = realloc(db->e, sizeof *e * (size_t)cap);
        if (!e) return NULL;
        db->e = e, db->cap = cap;
    }
    ts_perfdb_entry *e = &db->e[db->n++];
    memset(e, 0, sizeof *e);
    e->key = *key;
    return e;
}

// One line into an entry; 0 when it is well formed and its values are in range.
static int parse_line(const char *line, ts_perfdb_entry *e) {
    char prec, ops[8];
    long long calls;
    memset(e, 0, sizeof *e);
    if (sscanf(line, " %c %7s %d %d %d %d %lf %lf %lf %lld", &prec, ops, &e->key.lm, &e->key.ln, &e->key.lk,
               &e->key.ndev, &e->ratio, &e->dev_gflops, &e->cpu_gflops, &calls) != 10)
        return -1;
    if (!strchr("sdcz", prec) || strlen(ops) != 2 || !strchr("NT", ops[0]) || !strchr("NT", ops[1])) return -1;
    if (e->key.lm < 0 || e->key.lm > 62 || e->key.ln < 0 || e->key.ln > 62 || e->key.lk < 0 || e->key.lk > 62 ||
        e->key.ndev < 0 || e->key.ndev > 4096)
        return -1;
    if (!(e->ratio >= 0 && e->ratio <= 1) || !(e->dev_gflops >= 0 && e->dev_gflops < 1e9) ||
        !(e->cpu_gflops >= 0 && e->cpu_gflops < 1e9) || calls < 0)
        return -1;
    e->key.prec = prec;
    e->key.ops[0] = ops[0], e->key.ops[1] = ops[1];
    e->calls = calls;
    return 0;
}

int ts_perfdb_load(ts_perfdb *db) {
    if (!db) TS_RAISE(TS_ERR_ARG, "ts_perfdb_load: NULL database");
    db->n = 0;
    FILE *f = fopen(db->path, "r");
    if (!f) return 0; // no file yet: an empty database
    char line[512];
    int lineno = 0, bad = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (!strchr(line, '\n') && !feof(f)) { bad = lineno; break; } // overlong line
        const char *p = line;
        while (*p == ' ' || *p == '\t') p++;
        if (*p == '#' || *p == '\n' || *p == 0) continue;
        ts_perfdb_entry e;
        if (parse_line(p, &e) < 0 || db->n >= PERFDB_MAX) { bad = lineno; break; }
        ts_perfdb_entry *slot = NULL;
        for (int i = 0; i < db->n && !slot; i++)
            if (key_eq(&db->e[i].key, &e.key)) slot = &db->e[i];
        if (!slot) slot = add(db, &e.key);
        if (!slot) { bad = lineno; break; }
        *slot = e;
    }
    fclose(f);
    if (bad) {
        TS_LOG_W("tile runtime: performance database %s is malformed at line %d; ignoring it (it is rewritten "
                 "after the next call)", db->path, bad);
        db->n = 0;
        return 1;
    }
    return 0;
}

// mkdir -p of the directories of path.
static void make_dirs(const char *path) {
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", path);
    for (char *p = dir + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            (void)mkdir(dir, 0755);
            *p = '/';
        }
}

int ts_perfdb_save(const ts_perfdb *db) {
    if (!db) TS_RAISE(TS_ERR_ARG, "ts_perfdb_save: NULL database");
    make_dirs(db->path);
    char tmp[1100];
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", db->path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) {
        TS_LOG_W("tile runtime: cannot write the performance database %s: %s", tmp, strerror(errno));
        TS_RAISE(TS_ERR_IO, "cannot write %s: %s", tmp, strerror(errno));
    }
    fprintf(f, "# tessera tile runtime performance database: prec ops lm ln lk ndev ratio dev_gflops cpu_gflops calls\n");
    for (int i = 0; i < db->n; i++) {
        const ts_perfdb_entry *e = &db->e[i];
        fprintf(f, "%c %c%c %d %d %d %d %.6f %.6g %.6g %lld\n", e->key.prec, e->key.ops[0], e->key.ops[1], e->key.lm,
                e->key.ln, e->key.lk, e->key.ndev, e->ratio, e->dev_gflops, e->cpu_gflops, (long long)e->calls);
    }
    int bad = ferror(f);
    if (fclose(f) != 0) bad = 1;
    if (bad || rename(tmp, db->path) != 0) {
        TS_LOG_W("tile runtime: cannot write the performance database %s", db->path);
        (void)remove(tmp);
        TS_RAISE(TS_ERR_IO, "cannot write %s", db->path);
    }
    return 0;
}

const ts_perfdb_entry *ts_perfdb_find(const ts_perfdb *db, const ts_perfdb_key *key) {
    if (!db || !key) return NULL;
    for (int i = 0; i < db->n; i++)
        if (key_eq(&db->e[i].key, key)) return &db->e[i];
    return NULL;
}

const ts_perfdb_entry *ts_perfdb_update(ts_perfdb *db, const ts_perfdb_key *key, double dev_gflops, double dev_sec,
                                        double cpu_gflops, double cpu_sec) {
    if (!db || !key) return NULL;
    ts_perfdb_entry *e = (ts_perfdb_entry *)ts_perfdb_find(db, key);
    int fresh = !e;
    if (!e && !(e = add(db, key))) return NULL;
    if (dev_gflops > 0 && dev_sec > 0) e->dev_gflops = dev_gflops;
    if (cpu_gflops > 0 && cpu_sec > 0) e->cpu_gflops = cpu_gflops;
    double g = e->dev_gflops, c = e->cpu_gflops;
    // c' = c t_c / t_g: the CPU's rate counted only for the part of the devices' time it computed
    // (with t_c = 0 this call, the last rate stands at full weight).
    double cp = c;
    if (cpu_sec > 0 && dev_sec > 0) cp = c * fmin(1.0, cpu_sec / dev_sec);
    double target = g > 0 ? g / (cp + g) : (c > 0 ? 0.0 : 1.0);
    e->ratio = fresh ? target : 0.5 * (e->ratio + target);
    if (!(e->ratio >= 0)) e->ratio = 1; // NaN guard: devices only
    if (e->ratio > 1) e->ratio = 1;
    e->calls++;
    return e;
}
