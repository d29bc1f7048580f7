// ts_hpl_dat.c: HPL 2.3's formats: HPL.dat read as HPL reads it, the parameter echo, T/V, result/residual/summary lines.
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "algorithms/hpl/ts_hpl.h"
#include "core/ts_error.h"
#include "core/ts_json.h"
#include "ts_config.h"

#define TS_HPL_STR_(x) #x
#define TS_HPL_STR(x) TS_HPL_STR_(x)

// ---- reading -------------------------------------------------------------------------------
// HPL_pdinfo reads each line with fgets and its values with sscanf("%s") + atoi/atof, so a bad
// number silently becomes 0, a missing value repeats the previous one, and out-of-range choices are
// replaced (PFACT 7 -> right-looking). Tessera reads the same lines with the same meanings but
// rejects what HPL would misread, naming the file, the line and the value.

struct ts_hpl_datfile {
    FILE *f;
    const char *path;
    const char *shape;  // "HPL.dat has 31 lines" (NULL) or another format's note
    int lineno;     // number of the line in buf (1-based)
    char *buf;
    size_t cap;
    const char *pos; // tokenizer position in buf
};
typedef struct ts_hpl_datfile dat_reader;

static int next_line(dat_reader *r, const char *what) {
    ssize_t n = getline(&r->buf, &r->cap, r->f);
    if (n < 0) {
        int line = r->lineno + 1;
        TS_RAISE(TS_ERR_PARSE, "%s:%d: unexpected end of file: expected %s (%s, "
                 "this file ends after line %d)", r->path, line, what, r->shape ? r->shape : "HPL.dat has 31 lines",
                 r->lineno);
    }
    r->lineno++;
    r->pos = r->buf;
    return 0;
}

// Next whitespace-separated word of the current line into tok (NUL-terminated); 0 if none left.
static int next_token(dat_reader *r, char *tok, size_t len) {
    const char *p = r->pos;
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n' || *p == '\v' || *p == '\f') p++;
    if (!*p) { r->pos = p; return 0; }
    size_t n = 0;
    while (*p && !(*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n' || *p == '\v' || *p == '\f')) {
        if (n + 1 < len) tok[n++] = *p;
        p++;
    }
    tok[n] = 0;
    r->pos = p;
    return 1;
}

static int parse_i64(const char *tok, int64_t *v) {
    char *end;
    errno = 0;
    long long x = strtoll(tok, &end, 10);
    if (end == tok || *end || errno) return -1;
    *v = x;
    return 0;
}

static int parse_int(const char *tok, int *v) {
    int64_t x;
    if (parse_i64(tok, &x) || x < INT32_MIN || x > INT32_MAX) return -1;
    *v = (int)x;
    return 0;
}

// A line whose first word is one integer (device out, PMAP, SWAP, ...).
static int read_single_int(dat_reader *r, const char *what, int *v) {
    char tok[128];
    TS_CHECK(next_line(r, what));
    if (!next_token(r, tok, sizeof tok))
        TS_RAISE(TS_ERR_PARSE, "%s:%d: expected %s (an integer), found an empty line", r->path,
                 r->lineno, what);
    if (parse_int(tok, v))
        TS_RAISE(TS_ERR_PARSE, "%s:%d: expected %s (an integer), found '%s'", r->path, r->lineno,
                 what, tok);
    return 0;
}

// A count line: 1..TS_HPL_MAX_PARAM values follow on the next line.
static int read_count(dat_reader *r, const char *name, int *n) {
    char what[96];
    snprintf(what, sizeof what, "the number of %s", name);
    int v = 0;
    TS_CHECK(read_single_int(r, what, &v));
    if (v < 1 || v > TS_HPL_MAX_PARAM)
        TS_RAISE(TS_ERR_PARSE, "%s:%d: the number of %s is %d; HPL takes 1 to %d values", r->path,
                 r->lineno, name, v, TS_HPL_MAX_PARAM);
    *n = v;
    return 0;
}

// A value line: n integers (words after them are comments, as in HPL), each >= lo and <= hi.
static int read_values(dat_reader *r, const char *name, int n, int64_t lo, int64_t hi,
                       const char *rule, int64_t *out) {
    char tok[128], what[96];
    snprintf(what, sizeof what, "%d value%s for %s", n, n == 1 ? "" : "s", name);
    TS_CHECK(next_line(r, what));
    for (int i = 0; i < n; i++) {
        if (!next_token(r, tok, sizeof tok))
            TS_RAISE(TS_ERR_PARSE, "%s:%d: expected %d value%s for %s, found %s%d", r->path,
                     r->lineno, n, n == 1 ? "" : "s", name, i ? "only " : "", i);
        int64_t v;
        if (parse_i64(tok, &v))
            TS_RAISE(TS_ERR_PARSE, "%s:%d: expected %d value%s for %s, found '%s'", r->path,
                     r->lineno, n, n == 1 ? "" : "s", name, tok);
        if (v < lo || v > hi)
            TS_RAISE(TS_ERR_PARSE, "%s:%d: %s value %" PRId64 " is out of range: %s", r->path,
                     r->lineno, name, v, rule);
        out[i] = v;
    }
    return 0;
}

static int read_int_list(dat_reader *r, const char *name, int n, int lo, int hi, const char *rule,
                         int *out) {
    int64_t v[TS_HPL_MAX_PARAM];
    TS_CHECK(read_values(r, name, n, lo, hi, rule, v));
    for (int i = 0; i < n; i++) out[i] = (int)v[i];
    return 0;
}

static int check_range(dat_reader *r, const char *name, int v, int lo, int hi, const char *rule) {
    if (v < lo || v > hi)
        TS_RAISE(TS_ERR_PARSE, "%s:%d: %s value %d is out of range: %s", r->path, r->lineno, name,
                 v, rule);
    return 0;
}

// Lines 1-13: titles, output, device out, Ns, NBs, PMAP, grids, threshold.
static int read_head(dat_reader *r, ts_hpl_dat *d) {
    char tok[512];
    // 1-2: free text
    TS_CHECK(next_line(r, "the title line"));
    TS_CHECK(next_line(r, "the second title line"));
    // 3: output file name (first word)
    TS_CHECK(next_line(r, "the output file name"));
    d->outfile[0] = 0;
    if (next_token(r, tok, sizeof tok)) {
        if (strlen(tok) >= sizeof d->outfile)
            TS_RAISE(TS_ERR_PARSE, "%s:%d: output file name '%.40s...' is longer than %zu characters",
                     r->path, r->lineno, tok, sizeof d->outfile - 1);
        strcpy(d->outfile, tok);
    }
    int outline = r->lineno;
    // 4: device out
    TS_CHECK(read_single_int(r, "the device out (6=stdout, 7=stderr, else the file)", &d->device_out));
    if (d->device_out != 6 && d->device_out != 7 && !d->outfile[0])
        TS_RAISE(TS_ERR_PARSE, "%s:%d: device out %d means the file named on line %d, which is empty",
                 r->path, r->lineno, d->device_out, outline);
    // 5-6: Ns
    TS_CHECK(read_count(r, "problem sizes (N)", &d->nN));
    TS_CHECK(read_values(r, "Ns", d->nN, 0, INT64_MAX, "N must be >= 0", d->N));
    // 7-8: NBs
    TS_CHECK(read_count(r, "NBs", &d->nNB));
    TS_CHECK(read_int_list(r, "NBs", d->nNB, 1, INT32_MAX, "NB must be >= 1", d->NB));
    // 9: PMAP
    TS_CHECK(read_single_int(r, "the PMAP process mapping (0=Row-,1=Column-major)", &d->pmap));
    TS_CHECK(check_range(r, "PMAP", d->pmap, 0, 1, "0 = row-major, 1 = column-major"));
    // 10-12: grids
    TS_CHECK(read_count(r, "process grids (P x Q)", &d->ngrid));
    TS_CHECK(read_int_list(r, "Ps", d->ngrid, 1, INT32_MAX, "P must be >= 1", d->P));
    TS_CHECK(read_int_list(r, "Qs", d->ngrid, 1, INT32_MAX, "Q must be >= 1", d->Q));
    // 13: threshold (any value; <= 0 skips the check, as in HPL)
    TS_CHECK(next_line(r, "the residual threshold"));
    if (!next_token(r, tok, sizeof tok))
        TS_RAISE(TS_ERR_PARSE, "%s:%d: expected the threshold (a number), found an empty line",
                 r->path, r->lineno);
    char *end;
    errno = 0;
    d->threshold = strtod(tok, &end);
    if (end == tok || *end || errno || !isfinite(d->threshold))
        TS_RAISE(TS_ERR_PARSE, "%s:%d: expected the threshold (a number), found '%s'", r->path,
                 r->lineno, tok);
    return 0;
}

static int read_lines(dat_reader *r, ts_hpl_dat *d) {
    TS_CHECK(read_head(r, d));
    // 14-25: the algorithm lists
    TS_CHECK(read_count(r, "panel factorizations (PFACT)", &d->npfact));
    TS_CHECK(read_int_list(r, "PFACTs", d->npfact, 0, 2, "0 = left, 1 = Crout, 2 = right "
                           "(HPL 2.3 would silently use right)", d->pfact));
    TS_CHECK(read_count(r, "recursive stopping criteria (NBMIN)", &d->nnbmin));
    TS_CHECK(read_int_list(r, "NBMINs", d->nnbmin, 1, INT32_MAX, "NBMIN must be >= 1", d->nbmin));
    TS_CHECK(read_count(r, "panels in recursion (NDIV)", &d->nndiv));
    TS_CHECK(read_int_list(r, "NDIVs", d->nndiv, 2, INT32_MAX, "NDIV must be >= 2", d->ndiv));
    TS_CHECK(read_count(r, "recursive panel factorizations (RFACT)", &d->nrfact));
    TS_CHECK(read_int_list(r, "RFACTs", d->nrfact, 0, 2, "0 = left, 1 = Crout, 2 = right "
                           "(HPL 2.3 would silently use right)", d->rfact));
    TS_CHECK(read_count(r, "broadcasts (BCAST)", &d->nbcast));
    TS_CHECK(read_int_list(r, "BCASTs", d->nbcast, 0, 5, "0=1rg 1=1rM 2=2rg 3=2rM 4=Lng 5=LnM "
                           "(HPL 2.3 would silently use 1rM)", d->bcast));
    TS_CHECK(read_count(r, "lookahead depths (DEPTH)", &d->ndepth));
    // HPL 2.3 runs any depth; the engine here has depths 0..TS_HPL_MAX_DEPTH, and a deeper one is
    // refused with its line rather than run shallower under a result line that names it.
    TS_CHECK(read_int_list(r, "DEPTHs", d->ndepth, 0, TS_HPL_MAX_DEPTH, "look-ahead depth 0 to "
                           TS_HPL_STR(TS_HPL_MAX_DEPTH) " (deeper look-ahead is not implemented here)", d->depth));
    // 26-31: single values
    TS_CHECK(read_single_int(r, "SWAP (0=bin-exch,1=long,2=mix)", &d->swap));
    TS_CHECK(check_range(r, "SWAP", d->swap, 0, 2, "0 = binary exchange, 1 = long, 2 = mix "
                         "(HPL 2.3 would silently use long)"));
    TS_CHECK(read_single_int(r, "the swapping threshold", &d->swap_threshold));
    TS_CHECK(check_range(r, "swapping threshold", d->swap_threshold, 0, INT32_MAX,
                         "it is a number of columns, >= 0"));
    TS_CHECK(read_single_int(r, "L1 form (0=transposed,1=no-transposed)", &d->l1_notrans));
    TS_CHECK(check_range(r, "L1", d->l1_notrans, 0, 1, "0 = transposed, 1 = no-transposed "
                         "(HPL 2.3 would silently use 0)"));
    TS_CHECK(read_single_int(r, "U form (0=transposed,1=no-transposed)", &d->u_notrans));
    TS_CHECK(check_range(r, "U", d->u_notrans, 0, 1, "0 = transposed, 1 = no-transposed "
                         "(HPL 2.3 would silently use 0)"));
    TS_CHECK(read_single_int(r, "equilibration (0=no,1=yes)", &d->equil));
    TS_CHECK(check_range(r, "equilibration", d->equil, 0, 1, "0 = no, 1 = yes "
                         "(HPL 2.3 would silently use 1)"));
    TS_CHECK(read_single_int(r, "the memory alignment in doubles (> 0)", &d->align));
    TS_CHECK(check_range(r, "ALIGN", d->align, 1, INT32_MAX, "the alignment must be > 0 "
                         "(HPL 2.3 would silently use 4)"));
    // Lines after 31 are ignored, as HPL does.
    return 0;
}

int ts_hpl_dat_read(const char *path, ts_hpl_dat *d) {
    if (!path || !d) TS_RAISE(TS_ERR_ARG, "ts_hpl_dat_read: NULL argument");
    FILE *f = fopen(path, "r");
    if (!f) TS_RAISE(TS_ERR_IO, "cannot open HPL input file '%s': %s", path, strerror(errno));
    ts_hpl_dat tmp;
    memset(&tmp, 0, sizeof tmp);
    dat_reader r = {.f = f, .path = path};
    int rc = read_lines(&r, &tmp);
    free(r.buf);
    fclose(f);
    if (rc < 0) return rc;
    *d = tmp;
    return 0;
}

int ts_hpl_dat_read_head(const char *path, const char *shape, ts_hpl_dat *d,
                         int (*tail)(ts_hpl_datfile *f, void *arg), void *arg) {
    if (!path || !d) TS_RAISE(TS_ERR_ARG, "ts_hpl_dat_read_head: NULL argument");
    FILE *f = fopen(path, "r");
    if (!f) TS_RAISE(TS_ERR_IO, "cannot open input file '%s': %s", path, strerror(errno));
    ts_hpl_dat tmp;
    ts_hpl_dat_default(&tmp);
    dat_reader r = {.f = f, .path = path, .shape = shape};
    int rc = read_head(&r, &tmp);
    if (rc == 0 && tail) rc = tail(&r, arg);
    free(r.buf);
    fclose(f);
    if (rc < 0) return rc;
    *d = tmp;
    return 0;
}

int ts_hpl_datfile_count(ts_hpl_datfile *f, const char *name, int *n) { return read_count(f, name, n); }

int ts_hpl_datfile_words(ts_hpl_datfile *f, const char *name, int n, char (*words)[32]) {
    char what[96];
    snprintf(what, sizeof what, "%d value%s for %s", n, n == 1 ? "" : "s", name);
    TS_CHECK(next_line(f, what));
    for (int i = 0; i < n; i++)
        if (!next_token(f, words[i], 32))
            TS_RAISE(TS_ERR_PARSE, "%s:%d: expected %d value%s for %s, found %s%d", f->path, f->lineno, n,
                     n == 1 ? "" : "s", name, i ? "only " : "", i);
    return 0;
}

const char *ts_hpl_datfile_path(const ts_hpl_datfile *f) { return f->path; }
int ts_hpl_datfile_line(const ts_hpl_datfile *f) { return f->lineno; }

// HPL 2.3's testing/ptest/HPL.dat as shipped.
void ts_hpl_dat_default(ts_hpl_dat *d) {
    memset(d, 0, sizeof *d);
    strcpy(d->outfile, "HPL.out");
    d->device_out = 6;
    d->nN = 4;
    d->N[0] = 29; d->N[1] = 30; d->N[2] = 34; d->N[3] = 35;
    d->nNB = 4;
    for (int i = 0; i < 4; i++) d->NB[i] = i + 1;
    d->pmap = 0;
    d->ngrid = 3;
    d->P[0] = 2; d->P[1] = 1; d->P[2] = 4;
    d->Q[0] = 2; d->Q[1] = 4; d->Q[2] = 1;
    d->threshold = 16.0;
    d->npfact = 3;
    for (int i = 0; i < 3; i++) d->pfact[i] = i;
    d->nnbmin = 2;
    d->nbmin[0] = 2; d->nbmin[1] = 4;
    d->nndiv = 1;
    d->ndiv[0] = 2;
    d->nrfact = 3;
    for (int i = 0; i < 3; i++) d->rfact[i] = i;
    d->nbcast = 1;
    d->bcast[0] = 0;
    d->ndepth = 1;
    d->depth[0] = 0;
    d->swap = 2;
    d->swap_threshold = 64;
    d->l1_notrans = 0;
    d->u_notrans = 0;
    d->equil = 1;
    d->align = 8;
}

// ---- the parameter echo (HPL_pdinfo) -------------------------------------------------------


static const char *fact_word(int f) {
    return f == 0 ? "    Left " : f == 1 ? "   Crout " : "   Right ";
}

static const char *bcast_word(int b) {
    static const char *w[6] = {"   1ring ", "  1ringM ", "   2ring ", "  2ringM ", "   Blong ",
                               "  BlongM "};
    return (b >= 0 && b < 6) ? w[b] : w[1];
}

// HPL prints 8 values a line, continuation lines indented by 8 spaces.
static void list_break(FILE *f, int i) {
    if (i > 0 && i % 8 == 0) fprintf(f, "\n        ");
}

static void print_ints(FILE *f, const char *label, const int *v, int n) {
    fprintf(f, "\n%s", label);
    for (int i = 0; i < n; i++) {
        list_break(f, i);
        fprintf(f, "%8d ", v[i]);
    }
}

static void print_words(FILE *f, const char *label, const int *v, int n, const char *(*word)(int)) {
    fprintf(f, "\n%s", label);
    for (int i = 0; i < n; i++) {
        list_break(f, i);
        fputs(word(v[i]), f);
    }
}

void ts_hpl_print_params(FILE *f, const ts_hpl_dat *d) {
    fprintf(f, "%s\n", TS_HPL_RULE_EQ);
    fprintf(f, "HPLinpack 2.3  --  High-Performance Linpack benchmark  --   December 2, 2018\n");
    fprintf(f, "Written by A. Petitet and R. Clint Whaley,  Innovative Computing Laboratory, UTK\n");
    fprintf(f, "Modified by Piotr Luszczek, Innovative Computing Laboratory, UTK\n");
    fprintf(f, "Modified by Julien Langou, University of Colorado Denver\n");
    fprintf(f, "%s\n", TS_HPL_RULE_EQ);
    fprintf(f, "Tessera %s (commit %s, CUDA %s, MPI %s, %s): L1, U, EQUIL and ALIGN are accepted and "
            "ignored; PFACT, NBMIN, NDIV and RFACT apply to the host panel and to --panel device, not "
            "to the GPU default (hybrid: cuSOLVER's getrf, our own panel for tall panels)\n",
            ts_version(), ts_commit(), TS_HAVE_CUDA ? "on" : "off", TS_HAVE_MPI ? "on" : "off",
            TS_BLAS_NAME);

    fprintf(f, "\n%s\n", "An explanation of the input/output parameters follows:");
    fprintf(f, "T/V    : Wall time / encoded variant.\n");
    fprintf(f, "N      : The order of the coefficient matrix A.\n");
    fprintf(f, "NB     : The partitioning blocking factor.\n");
    fprintf(f, "P      : The number of process rows.\n");
    fprintf(f, "Q      : The number of process columns.\n");
    fprintf(f, "Time   : Time in seconds to solve the linear system.\n");
    fprintf(f, "Gflops : Rate of execution for solving the linear system.\n\n");
    fprintf(f, "The following parameter values will be used:\n");

    fprintf(f, "\nN      :");
    for (int i = 0; i < d->nN; i++) {
        list_break(f, i);
        fprintf(f, "%8" PRId64 " ", d->N[i]);
    }
    print_ints(f, "NB     :", d->NB, d->nNB);
    fprintf(f, "\nPMAP   :%s", d->pmap == 1 ? " Column-major process mapping" : " Row-major process mapping");
    print_ints(f, "P      :", d->P, d->ngrid);
    print_ints(f, "Q      :", d->Q, d->ngrid);
    print_words(f, "PFACT  :", d->pfact, d->npfact, fact_word);
    print_ints(f, "NBMIN  :", d->nbmin, d->nnbmin);
    print_ints(f, "NDIV   :", d->ndiv, d->nndiv);
    print_words(f, "RFACT  :", d->rfact, d->nrfact, fact_word);
    print_words(f, "BCAST  :", d->bcast, d->nbcast, bcast_word);
    print_ints(f, "DEPTH  :", d->depth, d->ndepth);
    fprintf(f, "\nSWAP   :");
    if (d->swap == 0) fprintf(f, " Binary-exchange");
    else if (d->swap == 2) fprintf(f, " Mix (threshold = %d)", d->swap_threshold);
    else fprintf(f, " Spread-roll (long)");
    fprintf(f, "\nL1     :%s", d->l1_notrans ? " no-transposed form" : " transposed form");
    fprintf(f, "\nU      :%s", d->u_notrans ? " no-transposed form" : " transposed form");
    fprintf(f, "\nEQUIL  :%s", d->equil ? " yes" : " no");
    fprintf(f, "\nALIGN  : %d double precision words", d->align);
    fprintf(f, "\n\n");

    if (d->threshold > 0.0) {
        fprintf(f, "%s\n\n", TS_HPL_RULE_DASH);
        fprintf(f, "- The matrix A is randomly generated for each test.\n");
        fprintf(f, "- The following scaled residual check will be computed:\n");
        fprintf(f, "      ||Ax-b||_oo / ( eps * ( || x ||_oo * || A ||_oo + || b ||_oo ) * N )\n");
        fprintf(f, "%s %21.6e\n", "- The relative machine precision (eps) is taken to be     ",
                DBL_EPSILON / 2.0);
        fprintf(f, "%s   %11.1f\n\n",
                "- Computational tests pass if scaled residuals are less than      ", d->threshold);
    }
}

// ---- T/V ------------------------------------------------------------------------------------

static char fact_letter(int f) { return f == 0 ? 'L' : f == 1 ? 'C' : 'R'; }

void ts_hpl_tv_format(const ts_hpl_case *c, char *out, size_t len) {
    int bc = (c->bcast >= 0 && c->bcast <= 5) ? c->bcast : 1;
    snprintf(out, len, "W%c%1d%c%c%1d%c%1d", c->pmap == 1 ? 'C' : 'R', c->depth, '0' + bc,
             fact_letter(c->rfact), c->ndiv, fact_letter(c->pfact), c->nbmin);
}

void ts_hpl_tv_string(const ts_hpl_case *c, char out[16]) { ts_hpl_tv_format(c, out, 16); }

// ---- the combinations ------------------------------------------------------------------------

int64_t ts_hpl_case_count(const ts_hpl_dat *d) {
    int64_t n = 1;
    const int counts[9] = {d->ngrid, d->nN, d->nNB, d->ndepth, d->nbcast,
                           d->nrfact, d->npfact, d->nnbmin, d->nndiv};
    for (int i = 0; i < 9; i++) n *= counts[i] > 0 ? counts[i] : 0;
    return n;
}

void ts_hpl_case_at(const ts_hpl_dat *d, int64_t index, ts_hpl_case *c) {
    // Mixed-radix digits, innermost loop (NDIV) first.
    int64_t k = index;
    int indv = (int)(k % d->nndiv); k /= d->nndiv;
    int inbm = (int)(k % d->nnbmin); k /= d->nnbmin;
    int ipfa = (int)(k % d->npfact); k /= d->npfact;
    int irfa = (int)(k % d->nrfact); k /= d->nrfact;
    int itop = (int)(k % d->nbcast); k /= d->nbcast;
    int indh = (int)(k % d->ndepth); k /= d->ndepth;
    int inb = (int)(k % d->nNB); k /= d->nNB;
    int in = (int)(k % d->nN); k /= d->nN;
    int ipq = (int)k;
    memset(c, 0, sizeof *c);
    c->N = d->N[in];
    c->NB = d->NB[inb];
    c->P = d->P[ipq];
    c->Q = d->Q[ipq];
    c->pmap = d->pmap;
    c->threshold = d->threshold;
    c->pfact = d->pfact[ipfa];
    c->nbmin = d->nbmin[inbm];
    c->ndiv = d->ndiv[indv];
    c->rfact = d->rfact[irfa];
    c->bcast = d->bcast[itop];
    c->depth = d->depth[indh];
    c->swap = d->swap;
    c->swap_threshold = d->swap_threshold;
    c->l1_notrans = d->l1_notrans;
    c->u_notrans = d->u_notrans;
    c->equil = d->equil;
    c->align = d->align;
}

int ts_hpl_check_grids(const ts_hpl_dat *d, int nranks) {
    int maxp = 0, which = 0;
    for (int i = 0; i < d->ngrid; i++) {
        int64_t np = (int64_t)d->P[i] * d->Q[i];
        if (np > maxp) { maxp = np > INT32_MAX ? INT32_MAX : (int)np; which = i; }
    }
    if (maxp > nranks)
        TS_RAISE(TS_ERR_ARG, "Need at least %d processes for these tests (grid %d of HPL.dat lines "
                 "11-12 is P=%d x Q=%d; %d process%s running)", maxp, which + 1, d->P[which],
                 d->Q[which], nranks, nranks == 1 ? " is" : "es are");
    return 0;
}

// ---- numbers and lines -----------------------------------------------------------------------

double ts_hpl_flops(int64_t N) {
    double n = (double)N;
    return n * n * (2.0 / 3.0 * n + 3.0 / 2.0);
}

// Exactly HPL_pdtest's expression (same rounding).
double ts_hpl_gflops(int64_t N, double seconds) {
    return (((double)N / 1.0e+9) * ((double)N / seconds)) * ((2.0 / 3.0) * (double)N + (3.0 / 2.0));
}

int ts_hpl_format_result(char *buf, size_t len, const ts_hpl_case *c, double seconds, double gflops,
                         int ngpus) {
    char tv[64];
    ts_hpl_tv_format(c, tv, sizeof tv);
    return ts_hpl_format_result_tv(buf, len, tv, c->N, c->NB, c->P, c->Q, seconds, gflops, ngpus);
}

int ts_hpl_format_result_tv(char *buf, size_t len, const char *tv, int64_t N, int NB, int P, int Q,
                            double seconds, double gflops, int ngpus) {
    int n = snprintf(buf, len, "%s%12" PRId64 " %5d %5d %5d %18.2f    %19.4e", tv, N, NB, P, Q, seconds,
                     gflops);
    if (ngpus > 0 && n >= 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, " ( %.4e)", gflops / ngpus);
    return n;
}

int ts_hpl_format_residual(char *buf, size_t len, double resid, double threshold) {
    return snprintf(buf, len, "%s%16.8e%s%s", "||Ax-b||_oo/(eps*(||A||_oo*||x||_oo+||b||_oo)*N)= ",
                    resid, " ...... ", resid < threshold ? "PASSED" : "FAILED");
}

void ts_hpl_print_header(FILE *f) {
    fprintf(f, "%s\n", TS_HPL_RULE_EQ);
    fprintf(f, "T/V                N    NB     P     Q               Time                 Gflops\n");
    fprintf(f, "%s\n", TS_HPL_RULE_DASH);
}

// HPL prints ctime(), which ends in a newline, followed by its own "\n".
static void print_time_line(FILE *f, const char *label, const char *when) {
    char buf[64];
    if (when && when[0]) {
        snprintf(buf, sizeof buf, "%s", when);
    } else {
        time_t t = time(NULL);
        snprintf(buf, sizeof buf, "%s", ctime(&t));
    }
    size_t n = strlen(buf);
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r')) buf[--n] = 0;
    fprintf(f, "%s%s\n\n", label, buf);
}

// HPL_pwarn's shape, so that scripts grepping ">>> ... <<<" still see it.
static void print_warn(FILE *f, int line, const char *func, const char *msg) {
    fprintf(f, "HPL ERROR from process # %d, on line %d of function %s:\n>>> %s <<<\n\n", 0, line,
            func, msg);
}

void ts_hpl_print_test(FILE *f, const ts_hpl_case *c, const ts_hpl_result *r, double threshold,
                       int ngpus) {
    char line[320];
    if (r->skipped) {
        // HPL_pdtest's allocation failure: only the warning, counted as skipped.
        snprintf(line, sizeof line, "[0,0] %s. Skip.",
                 r->why[0] ? r->why : "Memory allocation failed for A, x and b");
        print_warn(f, __LINE__, "HPL_pdtest", line);
        return;
    }
    if (r->time > 0.0) {
        ts_hpl_format_result(line, sizeof line, c, r->time, r->gflops, ngpus);
        fprintf(f, "%s\n", line);
        print_time_line(f, "HPL_pdgesv() start time ", r->start_time);
        print_time_line(f, "HPL_pdgesv() end time   ", r->end_time);
    }
    if (threshold <= 0.0) return;
    if (r->info != 0) {
        snprintf(line, sizeof line, "Error code returned by solve is %d, skip", r->info);
        print_warn(f, __LINE__, "HPL_pdtest", line);
        return;
    }
    fprintf(f, "%s\n", TS_HPL_RULE_DASH);
    ts_hpl_format_residual(line, sizeof line, r->resid, threshold);
    fprintf(f, "%s\n", line);
    if (!(r->resid < threshold)) {
        fprintf(f, "%s%18.6f\n", "||Ax-b||_oo  . . . . . . . . . . . . . . . . . = ", r->norm_r);
        fprintf(f, "%s%18.6f\n", "||A||_oo . . . . . . . . . . . . . . . . . . . = ", r->norm_A);
        fprintf(f, "%s%18.6f\n", "||A||_1  . . . . . . . . . . . . . . . . . . . = ", r->norm_A1);
        fprintf(f, "%s%18.6f\n", "||x||_oo . . . . . . . . . . . . . . . . . . . = ", r->norm_x);
        fprintf(f, "%s%18.6f\n", "||x||_1  . . . . . . . . . . . . . . . . . . . = ", r->norm_x1);
        fprintf(f, "%s%18.6f\n", "||b||_oo . . . . . . . . . . . . . . . . . . . = ", r->norm_b);
    }
}

void ts_hpl_print_summary(FILE *f, const ts_hpl_tally *t, double threshold) {
    int ktest = t->kpass + t->kfail + t->kskip;
    fprintf(f, "%s\n", TS_HPL_RULE_EQ);
    fprintf(f, "\n%s %6d %s\n", "Finished", ktest, "tests with the following results:");
    if (threshold > 0.0) {
        fprintf(f, "         %6d %s\n", t->kpass, "tests completed and passed residual checks,");
        fprintf(f, "         %6d %s\n", t->kfail, "tests completed and failed residual checks,");
        fprintf(f, "         %6d %s\n", t->kskip, "tests skipped because of illegal input values.");
    } else {
        fprintf(f, "         %6d %s\n", t->kpass, "tests completed without checking,");
        fprintf(f, "         %6d %s\n", t->kskip, "tests skipped because of illegal input values.");
    }
    fprintf(f, "%s\n", TS_HPL_RULE_DASH);
    fprintf(f, "\nEnd of Tests.\n");
    fprintf(f, "%s\n", TS_HPL_RULE_EQ);
}

int ts_hpl_open_output(const ts_hpl_dat *d, FILE **out) {
    if (d->device_out == 6) { *out = stdout; return 0; }
    if (d->device_out == 7) { *out = stderr; return 0; }
    FILE *f = fopen(d->outfile, "w");
    if (!f) TS_RAISE(TS_ERR_IO, "cannot open file %s. (HPL.dat line 3, device out %d)", d->outfile,
                     d->device_out);
    *out = f;
    return 0;
}

void ts_hpl_close_output(FILE *f) {
    if (!f) return;
    if (f == stdout || f == stderr) fflush(f);
    else fclose(f);
}
