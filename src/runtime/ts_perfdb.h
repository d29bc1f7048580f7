// ts_perfdb.h: the tile runtime's performance database: measured device and CPU rates per workload class, and the CPU share they imply.
//
// A workload class is (precision, op class, size class of m, n, k rounded to powers of 2, device
// count). For each class the database keeps the last measured rates of the devices together and of
// the CPU worker (GFLOP/s) and the device ratio r (the share of the work the devices should take),
// updated after every call with CALDGEMM's filter (see ts_perfdb_update). The file format is one
// class per line: "prec ops lm ln lk ndev ratio dev_gflops cpu_gflops calls"; '#' starts a comment.
#ifndef TS_PERFDB_H
#define TS_PERFDB_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    char prec;        // 's', 'd', 'c', 'z'
    char ops[3];      // op class: "NN", "NT", "TN", "TT" (C counts as T: same memory pattern)
    int lm, ln, lk;   // size class: round(log2(m)), ... (so 3000 and 4096 share a class)
    int ndev;         // devices of the set
} ts_perfdb_key;

typedef struct {
    ts_perfdb_key key;
    double ratio;       // device share of the work, in [0, 1]
    double dev_gflops;  // devices together, last measurement
    double cpu_gflops;  // CPU worker, last measurement (0 = never measured)
    int64_t calls;      // updates so far
} ts_perfdb_entry;

typedef struct ts_perfdb ts_perfdb;

// The class of a call.
ts_perfdb_key ts_perfdb_key_of(char prec, char ta, char tb, int64_t m, int64_t n, int64_t k, int ndev);

// An empty database bound to `path` (NULL: $TESSERA_PERFDB, else ~/.cache/tessera/perfdb.txt).
// Nothing is read; see ts_perfdb_load.
int ts_perfdb_open(const char *path, ts_perfdb **out);
void ts_perfdb_close(ts_perfdb *db);
const char *ts_perfdb_path(const ts_perfdb *db);
// Reads the file. A missing file is an empty database (0). A malformed file is ignored with a
// warning (1 is returned, the database stays empty) so that a corrupt cache never stops a run.
int ts_perfdb_load(ts_perfdb *db);
// Writes the file (directories created, written to a temporary name then renamed, so a crash
// never leaves half a file). Returns 0 or a negative status (also logged as a warning).
int ts_perfdb_save(const ts_perfdb *db);

// The entry of a class, or NULL.
const ts_perfdb_entry *ts_perfdb_find(const ts_perfdb *db, const ts_perfdb_key *key);
// Records one call of the class: dev_gflops over dev_sec, cpu_gflops over cpu_sec (cpu_sec 0:
// the CPU did no work this time and its last rate is kept). Filter (CALDGEMM, Linpack mode):
// r' = (r + g / (c' + g)) / 2 with c' = c t_c / t_g: the new ratio is the mean of the old one and
// the ratio the measured rates call for, where the CPU rate is scaled by the share of the device
// time the CPU was actually computing. A first call sets r = g / (c' + g). Returns the new entry.
const ts_perfdb_entry *ts_perfdb_update(ts_perfdb *db, const ts_perfdb_key *key, double dev_gflops, double dev_sec,
                                        double cpu_gflops, double cpu_sec);
int ts_perfdb_count(const ts_perfdb *db);

#ifdef __cplusplus
}
#endif

#endif
