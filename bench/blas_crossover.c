// blas_crossover: where offloading a Level-3 BLAS call through libtessera_blas starts to pay.
//
// For every routine and precision the drop-in library offloads, times the same call (square
// operands in host memory, as a BLAS caller holds them) through the library with every call
// offloaded (TESSERA_BLAS_THRESHOLD=0) and through the CPU BLAS directly, over growing n, and
// reports the crossover: the smallest measured n from which the library is faster by at least the
// margin (default 1.2: a clear win, not the noise of a CPU BLAS's thread choices) at every larger
// measured n. Each size also checks the two results against each other (max |diff| / (max |ref|
// * k * eps), bound 4), so a wrong offload cannot pass for a fast one.
//
// Usage: blas_crossover LIBTESSERA_BLAS [--cpu-blas SONAME] [--routines dgemm,ztrsm,...|all]
//                       [--sizes 16,32,...] [--min-time SECONDS] [--margin M] [--json FILE] [--conf FILE]
// --conf writes a TESSERA_BLAS_CONF file: TESSERA_BLAS_THRESHOLD_<R> = the equivalent size
// (m*n*k of the equivalent GEMM, the number the library compares) at each measured crossover.
// Exit status: 0 done, 1 a result check failed, 2 bad usage or a library that cannot be opened.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef void (*gemm_f)(const char *, const char *, const int *, const int *, const int *, const void *, const void *,
                       const int *, const void *, const int *, const void *, void *, const int *, size_t, size_t);
typedef void (*symm_f)(const char *, const char *, const int *, const int *, const void *, const void *, const int *,
                       const void *, const int *, const void *, void *, const int *, size_t, size_t);
typedef void (*syrk_f)(const char *, const char *, const int *, const int *, const void *, const void *, const int *,
                       const void *, void *, const int *, size_t, size_t);
typedef void (*syr2k_f)(const char *, const char *, const int *, const int *, const void *, const void *, const int *,
                        const void *, const int *, const void *, void *, const int *, size_t, size_t);
typedef void (*trmm_f)(const char *, const char *, const char *, const char *, const int *, const int *, const void *,
                       const void *, const int *, void *, const int *, size_t, size_t, size_t, size_t);

enum kind { GEMM, SYMM, HEMM, SYRK, HERK, SYR2K, HER2K, TRMM, TRSM };
static const char *const kind_names[] = {"gemm", "symm", "hemm", "syrk", "herk", "syr2k", "her2k", "trmm", "trsm"};

typedef struct {
    char name[8]; // "dgemm"
    char prec;    // s d c z
    enum kind kind;
} routine;

static int elem_size(char p) { return p == 's' ? 4 : p == 'd' ? 8 : p == 'c' ? 8 : 16; }
static int is_complex(char p) { return p == 'c' || p == 'z'; }
static double eps_of(char p) { return p == 's' || p == 'c' ? FLT_EPSILON : DBL_EPSILON; }

// Flops of one call at n (standard counts; complex: 4 real multiplies and adds per complex one).
static double flops(const routine *r, double n) {
    double f = r->kind == GEMM || r->kind == SYMM || r->kind == HEMM ? 2 * n * n * n
               : r->kind == SYRK || r->kind == HERK                  ? n * n * n
               : r->kind == SYR2K || r->kind == HER2K                ? 2 * n * n * n
                                                                     : n * n * n;
    return is_complex(r->prec) ? 4 * f : f;
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

// Uniform values in [-0.5, 0.5); triangular operands get 1 on the diagonal and off-diagonals / n so
// that TRSM is well conditioned and repeated TRMM/TRSM calls keep B bounded.
static void fill(void *p, char prec, long count, unsigned *seed) {
    long reals = is_complex(prec) ? 2 * count : count;
    for (long i = 0; i < reals; i++) {
        double v = (double)rand_r(seed) / ((double)RAND_MAX + 1) - 0.5;
        if (prec == 's' || prec == 'c') ((float *)p)[i] = (float)v;
        else ((double *)p)[i] = v;
    }
}

static void make_triangular(void *p, char prec, int n) {
    int cpx = is_complex(prec), dbl = prec == 'd' || prec == 'z';
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            long e = (long)j * n + i;
            for (int c = 0; c <= cpx; c++) {
                long at = cpx ? 2 * e + c : e;
                double v = dbl ? ((double *)p)[at] : ((float *)p)[at];
                v = i == j ? (c == 0 ? 1.0 : 0.0) : v / n;
                if (dbl) ((double *)p)[at] = v;
                else ((float *)p)[at] = (float)v;
            }
        }
}

static double get(const void *p, char prec, long i) {
    return prec == 's' || prec == 'c' ? ((const float *)p)[i] : ((const double *)p)[i];
}

typedef struct {
    void *A, *B, *C;
    int n;
} operands;

// One call of routine r at size n on the library lib (its symbol resolved from handle h).
static void call(void *h, const routine *r, operands *o) {
    static const double one[2] = {1.0, 0.0}, half[2] = {0.5, 0.0};
    static const float onef[2] = {1.0f, 0.0f}, halff[2] = {0.5f, 0.0f};
    int sp = r->prec == 's' || r->prec == 'c';
    const void *alpha = sp ? (const void *)onef : (const void *)one, *beta = sp ? (const void *)halff : (const void *)half;
    char sym[16];
    snprintf(sym, sizeof sym, "%s_", r->name);
    void *f = dlsym(h, sym);
    if (!f) {
        fprintf(stderr, "blas_crossover: %s not found: %s\n", sym, dlerror());
        exit(2);
    }
    int n = o->n;
    switch (r->kind) {
    case GEMM: ((gemm_f)f)("N", "N", &n, &n, &n, alpha, o->A, &n, o->B, &n, beta, o->C, &n, 1, 1); break;
    case SYMM:
    case HEMM: ((symm_f)f)("L", "U", &n, &n, alpha, o->A, &n, o->B, &n, beta, o->C, &n, 1, 1); break;
    case SYRK:
    case HERK: ((syrk_f)f)("U", "N", &n, &n, alpha, o->A, &n, beta, o->C, &n, 1, 1); break; // HERK: real scalars, same bits
    case SYR2K:
    case HER2K: ((syr2k_f)f)("U", "N", &n, &n, alpha, o->A, &n, o->B, &n, beta, o->C, &n, 1, 1); break;
    case TRMM:
    case TRSM: ((trmm_f)f)("L", "U", "N", "N", &n, &n, alpha, o->A, &n, o->B, &n, 1, 1, 1, 1); break;
    }
}

// The output operand of r.
static void *out_of(const routine *r, operands *o) { return r->kind == TRMM || r->kind == TRSM ? o->B : o->C; }

// Median seconds per call over at least 3 calls and at least min_time seconds (one warm-up call first).
static double time_calls(void *h, const routine *r, operands *o, double min_time, int *calls) {
    enum { MAXS = 512 };
    double s[MAXS];
    call(h, r, o);
    int k = 0;
    double t_all = now();
    while (k < MAXS && (k < 3 || now() - t_all < min_time)) {
        double t0 = now();
        call(h, r, o);
        s[k++] = now() - t0;
    }
    for (int i = 1; i < k; i++) // insertion sort: k is small
        for (int j = i; j > 0 && s[j] < s[j - 1]; j--) {
            double t = s[j];
            s[j] = s[j - 1];
            s[j - 1] = t;
        }
    *calls = k;
    return k % 2 ? s[k / 2] : 0.5 * (s[k / 2 - 1] + s[k / 2]);
}

static int parse_routine(const char *s, routine *r) {
    if (strlen(s) < 5 || strlen(s) > 6 || !strchr("sdcz", s[0])) return -1;
    for (int k = 0; k <= TRSM; k++)
        if (!strcmp(s + 1, kind_names[k])) {
            int herm = k == HEMM || k == HERK || k == HER2K;
            if (herm && !is_complex(s[0])) return -1;
            snprintf(r->name, sizeof r->name, "%s", s);
            r->prec = s[0];
            r->kind = (enum kind)k;
            return 0;
        }
    return -1;
}

static void usage(void) {
    fprintf(stderr, "usage: blas_crossover LIBTESSERA_BLAS [--cpu-blas SONAME] [--routines LIST|all] [--sizes N,N,...]\n"
                    "                      [--min-time SECONDS] [--margin M] [--json FILE] [--conf FILE]\n");
    exit(2);
}

int main(int argc, char **argv) {
    const char *lib = NULL, *cpu = "libopenblas.so.0", *routines = "all", *sizes_s = NULL, *json = NULL, *conf = NULL;
    double min_time = 0.05, margin = 1.2;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--cpu-blas") && i + 1 < argc) cpu = argv[++i];
        else if (!strcmp(a, "--routines") && i + 1 < argc) routines = argv[++i];
        else if (!strcmp(a, "--sizes") && i + 1 < argc) sizes_s = argv[++i];
        else if (!strcmp(a, "--min-time") && i + 1 < argc) min_time = atof(argv[++i]);
        else if (!strcmp(a, "--margin") && i + 1 < argc) margin = atof(argv[++i]);
        else if (!strcmp(a, "--json") && i + 1 < argc) json = argv[++i];
        else if (!strcmp(a, "--conf") && i + 1 < argc) conf = argv[++i];
        else if (a[0] != '-' && !lib) lib = a;
        else usage();
    }
    if (!lib || !(min_time >= 0) || !(margin > 0)) usage();
    int sizes[64], nsizes = 0;
    if (sizes_s) {
        for (const char *p = sizes_s; *p && nsizes < 64;) {
            char *end;
            long v = strtol(p, &end, 10);
            if (end == p || v < 1 || v > 32768 || (*end && *end != ',')) usage();
            sizes[nsizes++] = (int)v;
            p = *end ? end + 1 : end;
        }
    } else {
        static const int dflt[] = {16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096};
        for (size_t i = 0; i < sizeof dflt / sizeof dflt[0]; i++) sizes[nsizes++] = dflt[i];
    }
    routine rs[64];
    int nr = 0;
    if (!strcmp(routines, "all")) {
        const char *all[] = {"sgemm", "dgemm", "cgemm", "zgemm", "ssymm", "dsymm", "csymm", "zsymm", "chemm", "zhemm",
                             "ssyrk", "dsyrk", "csyrk", "zsyrk", "cherk", "zherk", "ssyr2k", "dsyr2k", "csyr2k", "zsyr2k",
                             "cher2k", "zher2k", "strmm", "dtrmm", "ctrmm", "ztrmm", "strsm", "dtrsm", "ctrsm", "ztrsm"};
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) parse_routine(all[i], &rs[nr++]);
    } else {
        char buf[1024];
        snprintf(buf, sizeof buf, "%s", routines);
        for (char *t = strtok(buf, ","); t && nr < 64; t = strtok(NULL, ","))
            if (parse_routine(t, &rs[nr++])) {
                fprintf(stderr, "blas_crossover: unknown routine '%s'\n", t);
                return 2;
            }
    }
    // every call through the library is offloaded; set before the library reads its configuration
    setenv("TESSERA_BLAS_THRESHOLD", "0", 1);
    unsetenv("TESSERA_BLAS_CONF");
    for (int again = 1; again;) { // and no per-routine threshold (unsetenv changes environ: rescan)
        again = 0;
        for (char **e = environ; *e; e++)
            if (!strncmp(*e, "TESSERA_BLAS_THRESHOLD_", 23)) {
                char name[64];
                snprintf(name, sizeof name, "%.*s", (int)strcspn(*e, "="), *e);
                unsetenv(name);
                again = 1;
                break;
            }
    }
    void *hl = dlopen(lib, RTLD_NOW | RTLD_LOCAL), *hc = dlopen(cpu, RTLD_NOW | RTLD_LOCAL);
    if (!hl || !hc) {
        fprintf(stderr, "blas_crossover: cannot open %s: %s\n", !hl ? lib : cpu, dlerror());
        return 2;
    }
    FILE *js = json ? fopen(json, "w") : NULL, *cf = conf ? fopen(conf, "w") : NULL;
    if ((json && !js) || (conf && !cf)) {
        fprintf(stderr, "blas_crossover: cannot write %s\n", json && !js ? json : conf);
        return 2;
    }
    char date[32];
    time_t t = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d", gmtime(&t));
    const char *commit = getenv("TESSERA_COMMIT");
    if (js) fprintf(js, "{\"bench\": \"blas-crossover\", \"commit\": \"%s\", \"date\": \"%s\", \"library\": \"%s\", \"cpu_blas\": \"%s\", \"min_time\": %g, \"margin\": %g, \"routines\": [", commit ? commit : "", date, lib, cpu,
                    min_time, margin);
    if (cf) fprintf(cf, "# TESSERA_BLAS_CONF written by blas_crossover: offload each routine from its measured crossover on\n"
                        "# (the equivalent m*n*k); 'none' where the CPU BLAS won at every measured size.\n");
    printf("%-7s %6s %12s %12s %8s %10s %s\n", "routine", "n", "cpu_ms", "tessera_ms", "speedup", "check", "");
    int bad = 0;
    unsigned seed = 12345;
    for (int ri = 0; ri < nr; ri++) {
        const routine *r = &rs[ri];
        int es = elem_size(r->prec), crossover = -1, wins_in_row = 0, measured = 0;
        double last_cpu = 0;
        if (js) fprintf(js, "%s\n  {\"routine\": \"%s\", \"points\": [", ri ? "," : "", r->name);
        for (int si = 0; si < nsizes; si++) {
            int n = sizes[si];
            long cnt = (long)n * n;
            operands o = {malloc(cnt * es), malloc(cnt * es), malloc(cnt * es), n}, w = o;
            void *A0 = malloc(cnt * es), *B0 = malloc(cnt * es), *C0 = malloc(cnt * es), *ref = malloc(cnt * es);
            if (!o.A || !o.B || !o.C || !A0 || !B0 || !C0 || !ref) {
                fprintf(stderr, "blas_crossover: out of memory at n = %d\n", n);
                return 2;
            }
            fill(A0, r->prec, cnt, &seed);
            fill(B0, r->prec, cnt, &seed);
            fill(C0, r->prec, cnt, &seed);
            if (r->kind == TRMM || r->kind == TRSM) make_triangular(A0, r->prec, n);
            // the check: one call each from the same inputs
            memcpy(o.A, A0, cnt * es), memcpy(o.B, B0, cnt * es), memcpy(o.C, C0, cnt * es);
            call(hc, r, &o);
            memcpy(ref, out_of(r, &o), cnt * es);
            memcpy(o.A, A0, cnt * es), memcpy(o.B, B0, cnt * es), memcpy(o.C, C0, cnt * es);
            call(hl, r, &o);
            double dmax = 0, rmax = 0;
            const void *got = out_of(r, &o);
            long reals = is_complex(r->prec) ? 2 * cnt : cnt;
            int upper_only = r->kind == SYRK || r->kind == HERK || r->kind == SYR2K || r->kind == HER2K;
            for (long i = 0; i < reals; i++) {
                long e = is_complex(r->prec) ? i / 2 : i;
                if (upper_only && e % n > e / n) continue; // the strictly lower triangle is not referenced
                double g = get(got, r->prec, i), x = get(ref, r->prec, i);
                if (!(fabs(g - x) <= dmax)) dmax = isnan(g - x) ? INFINITY : fabs(g - x);
                if (fabs(x) > rmax) rmax = fabs(x);
            }
            double check = dmax / ((rmax > 0 ? rmax : 1) * n * eps_of(r->prec));
            int ok = check <= 4;
            if (!ok) bad = 1;
            // the timings: repeated calls on the same operands (TRMM/TRSM: B stays bounded)
            int calls_c, calls_l;
            double tc = time_calls(hc, r, &w, min_time, &calls_c);
            double tl = time_calls(hl, r, &w, min_time, &calls_l);
            last_cpu = tc;
            measured++;
            int win = tc >= margin * tl;
            if (win) {
                if (crossover < 0) crossover = n;
                wins_in_row++;
            } else {
                crossover = -1;
                wins_in_row = 0;
            }
            printf("%-7s %6d %12.4f %12.4f %8.2f %10.3f %s\n", r->name, n, 1e3 * tc, 1e3 * tl, tc / tl, check, ok ? "" : "CHECK FAILED");
            fflush(stdout);
            if (js)
                fprintf(js, "%s\n    {\"n\": %d, \"cpu_s\": %.6e, \"tessera_s\": %.6e, \"cpu_gflops\": %.3f, \"tessera_gflops\": %.3f, "
                            "\"calls_cpu\": %d, \"calls_tessera\": %d, \"check\": %.4f, \"check_ok\": %s}",
                        si ? "," : "", n, tc, tl, flops(r, n) / tc * 1e-9, flops(r, n) / tl * 1e-9, calls_c, calls_l, check,
                        ok ? "true" : "false");
            free(o.A), free(o.B), free(o.C), free(A0), free(B0), free(C0), free(ref);
            // three wins in a row past the crossover settle it; a CPU call of over 2 s ends the series
            if (wins_in_row >= 3 || last_cpu > 2.0) break;
        }
        double eq = crossover > 0 ? (double)crossover * crossover * crossover : -1;
        if (js) fprintf(js, "\n  ], \"crossover_n\": %d, \"threshold\": %.0f, \"sizes_measured\": %d}", crossover, eq, measured);
        printf("%-7s crossover: %s", r->name, crossover > 0 ? "" : "none in the measured sizes\n");
        if (crossover > 0) printf("n = %d (threshold %.0f)\n", crossover, eq);
        if (cf) {
            char up[8];
            for (int i = 0; i < 8; i++) up[i] = (char)(r->name[i] >= 'a' && r->name[i] <= 'z' ? r->name[i] - 32 : r->name[i]);
            if (crossover > 0) fprintf(cf, "TESSERA_BLAS_THRESHOLD_%s = %.0f\n", up, eq);
            else fprintf(cf, "TESSERA_BLAS_THRESHOLD_%s = none\n", up);
        }
    }
    if (js) {
        fprintf(js, "\n], \"check_ok\": %s}\n", bad ? "false" : "true");
        if (fclose(js)) bad = 2;
    }
    if (cf && fclose(cf)) bad = 2;
    if (bad) fprintf(stderr, "blas_crossover: %s\n", bad == 2 ? "cannot write the output" : "a result check FAILED");
    return bad;
}
