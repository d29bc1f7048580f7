// hpl_engine_check.c: runs HPL engine cases given on the command line (also under MPI); exits 1 unless each ends as expected.
//
// usage: hpl_engine_check [--exec cpu|device|ooc|auto] [--panel host|device|tessera|cusolver|auto]
//                         [--expect pass|fail|info=K|skip] [--want-panel NAME] [--want-exec NAME]
//                         [--want-swap NAME] [--want-usolve NAME] [--want-layout col|row] [--want-own K]
//                         [--perturb] [--compare-depth R] [--compare-layout] [--sweep-depths LIST]
//                         [--zero-col C] [--sweep] CASE...
// CASE = N[:NB[:P[:Q[:PFACT[:NBMIN[:NDIV[:RFACT[:BCAST[:DEPTH[:SWAP[:PMAP[:SWAPTHR]]]]]]]]]]]]
// --sweep expands each CASE into every PFACT x RFACT x BCAST x DEPTH x SWAP combination (with a few
// NBMIN/NDIV pairs), as HPL.dat lists would. --panel device is the engine's default device panel
// (cuSOLVER, or its stand-in on simulated devices); tessera is our own device panel; hybrid takes
// ours for panels of at least TESSERA_HPL_PANEL_TAIL rows, the stand-in below (--want-own K: rank 0's
// panels factored by ours, every case).
// --sweep-depths 0,2: the DEPTHs the sweep takes (default 0,1). --compare-depth R: each case also
// runs with lookahead depth R first, and the two solutions must agree to rounding:
// ||x - x_R||_oo <= DEPTH_AGREE ||x_R||_oo (any depth applies each column's updates in the same order,
// so they differ only by how the BLAS splits the columns of a call; a lost or repeated update
// moves x by O(1)). Every run must report the depth it was given (result's depth).
// --compare-layout: each case also runs first with TESSERA_HPL_LAYOUT=col (and must report layout
// col), then with TESSERA_HPL_LAYOUT=row; the two solutions must agree to the same bound (the
// transposed layout computes C^T = C^T - U^T L^T: the same products, summed by the BLAS in another
// order; folded, L21 inv(L11) U0 instead of L21 (inv(L11) U0)). --want-usolve then applies to the
// transposed run only.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/hpl/ts_hpl.h"
#include "algorithms/hpl/ts_hpl_test.h"
#include "core/ts_error.h"

static double zero_col_hook(int64_t i, int64_t j, double v, void *arg) {
    return j == *(int64_t *)arg ? 0.0 : v;
}

static void perturb_hook(double *x, int64_t n, void *arg) {
    x[n / 2] += 1e-3 * (fabs(x[n / 2]) + 1.0);
}

#define DEPTH_AGREE 1e-9

// --compare-depth: the solution of a run, copied before the check
typedef struct {
    double *x;
    int64_t n;
} capture;
static void capture_hook(double *x, int64_t n, void *arg) {
    capture *c = arg;
    free(c->x);
    c->x = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    if (c->x) memcpy(c->x, x, sizeof(double) * (size_t)n);
    c->n = c->x ? n : 0;
}

static int parse_case(const char *s, ts_hpl_case *c) {
    memset(c, 0, sizeof *c);
    long long v[13] = {0, 32, 1, 1, 2, 4, 2, 1, 1, 1, 2, 0, 64};
    int n = 0;
    const char *p = s;
    while (*p && n < 13) {
        char *end;
        v[n++] = strtoll(p, &end, 10);
        if (end == p) return -1;
        p = *end == ':' ? end + 1 : end;
        if (*end && *end != ':') return -1;
    }
    c->N = v[0]; c->NB = (int)v[1]; c->P = (int)v[2]; c->Q = (int)v[3];
    c->pfact = (int)v[4]; c->nbmin = (int)v[5]; c->ndiv = (int)v[6]; c->rfact = (int)v[7];
    c->bcast = (int)v[8]; c->depth = (int)v[9]; c->swap = (int)v[10]; c->pmap = (int)v[11];
    c->swap_threshold = (int)v[12];
    c->threshold = 16.0;
    c->l1_notrans = 0; c->u_notrans = 0; c->equil = 1; c->align = 8;
    return 0;
}

typedef struct {
    const char *expect; // pass, fail, skip, info=K
    const char *panel;  // the panel engine that must have run (result's panel_used), or NULL
    const char *exec;   // the execution that must have run (result's exec_used), or NULL
    const char *swap;   // the row-swap path that must have run (result's swap_used), or NULL
    const char *usolve; // how U must have been formed (result's u_solve: trsm, inverse, folded), or NULL
    const char *layout; // how [A|b] must have been stored (result's layout: col, row), or NULL
    int own;            // hybrid: panels our device panel must have factored on rank 0, or -1
    int rank;
    int bad;
    int count;
} tally;

static void run_one(ts_hpl_ctx *ctx, const ts_hpl_case *c, tally *t) {
    ts_hpl_result r;
    int rc = ts_hpl_run(ctx, c, &r);
    const char *what;
    int ok;
    if (rc < 0) {
        what = "ERROR";
        ok = 0;
    } else if (r.skipped) {
        what = "SKIPPED";
        ok = !strcmp(t->expect, "skip");
    } else if (r.info) {
        what = "INFO";
        ok = !strncmp(t->expect, "info=", 5) && atoi(t->expect + 5) == r.info;
    } else if (r.passed) {
        what = "PASSED";
        ok = !strcmp(t->expect, "pass") && r.resid < 1.0;
    } else {
        what = "FAILED";
        ok = !strcmp(t->expect, "fail");
    }
    if (ok && t->panel && rc == 0 && !r.skipped && strcmp(r.panel_used, t->panel) != 0) {
        what = "WRONG PANEL";
        ok = 0;
    }
    if (ok && t->swap && rc == 0 && !r.skipped && strcmp(r.swap_used, t->swap) != 0) {
        what = "WRONG SWAP";
        ok = 0;
    }
    if (ok && t->usolve && rc == 0 && !r.skipped && strcmp(r.u_solve, t->usolve) != 0) {
        what = "WRONG U SOLVE";
        ok = 0;
    }
    if (ok && t->layout && rc == 0 && !r.skipped && strcmp(r.layout, t->layout) != 0) {
        what = "WRONG LAYOUT";
        ok = 0;
    }
    if (ok && t->own >= 0 && rc == 0 && !r.skipped && t->rank == 0 && r.panels_own != t->own) {
        printf("     our panel factored %d panels (of at least %lld rows), expected %d\n", r.panels_own,
               (long long)r.panel_tail, t->own);
        what = "WRONG PANEL SPLIT";
        ok = 0;
    }
    if (ok && rc == 0 && r.depth != c->depth) {
        printf("     ran with lookahead depth %d, given %d\n", r.depth, c->depth);
        what = "WRONG DEPTH";
        ok = 0;
    }
    if (ok && t->exec && rc == 0 && !r.skipped && strcmp(r.exec_used, t->exec) != 0) {
        what = "WRONG EXEC";
        ok = 0;
    }
    if (ok && t->exec && !strcmp(t->exec, "ooc") && rc == 0 && !r.skipped && t->rank == 0 &&
        c->N > 2 * c->NB && r.ooc_gemms_tiles <= 0) {
        what = "NO GEMM STREAMED";
        ok = 0;
    }
    // The per-iteration split (rank 0): one record per panel, no negative time, idle within the
    // iteration, the TRSM part within the update, and the iterations inside the timed
    // factorization (their stamps lie within it).
    if (ok && rc == 0 && !r.skipped && t->rank == 0 && c->N > 0) {
        int64_t npan = (c->N + c->NB - 1) / c->NB;
        double sum = 0;
        int bad = r.n_iters != npan;
        for (int i = 0; !bad && i < r.n_iters; i++) {
            const ts_hpl_iter *it = &r.iters[i];
            bad = !(it->total >= 0 && it->fact >= 0 && it->bcast >= 0 && it->swap >= 0 &&
                    it->update >= 0 && it->idle >= 0 && it->idle <= it->total + 1e-9 && it->trsm >= 0 &&
                    it->trsm <= it->update + 1e-9);
            sum += it->total;
        }
        if (bad || !(sum <= r.time + 1e-3)) {
            printf("     per-iteration split inconsistent: %d records for %lld panels, sum of totals "
                   "%.4f s, factorization and solve %.4f s\n", r.n_iters, (long long)npan, sum, r.time);
            what = "BAD SPLIT";
            ok = 0;
        }
    }
    t->count++;
    if (!ok) t->bad++;
    if (t->rank == 0)
        printf("%s N=%lld NB=%d P=%d Q=%d pmap=%d pfact=%d nbmin=%d ndiv=%d rfact=%d bcast=%d "
               "depth=%d swap=%d: %s resid=%.4e info=%d time=%.3fs exec=%s engine=%s panel=%s%s%s%s\n",
               ok ? "ok  " : "BAD ", (long long)c->N, c->NB, c->P, c->Q, c->pmap, c->pfact,
               c->nbmin, c->ndiv, c->rfact, c->bcast, c->depth, c->swap, what, r.resid, r.info,
               r.time, r.exec_used, r.engine_used, r.panel_used, r.skipped ? " (" : "", r.skipped ? r.why : "",
               r.skipped ? ")" : "");
    if (rc < 0 && t->rank == 0) printf("     error: %s\n", ts_error_string());
    ts_hpl_result_free(&r);
}

int main(int argc, char **argv) {
    ts_hpl_opts o;
    memset(&o, 0, sizeof o);
    o.exec = TS_HPL_EXEC_CPU;
    o.seed = 100;
    o.panel_on_device = -1;
    o.engine = "auto";
    o.record_iterations = 1;
    tally t = {.expect = "pass", .own = -1};
    int perturb = 0, sweep = 0, cmp_depth = -1, cmp_layout = 0;
    int depths[8] = {0, 1}, ndepths = 2;
    capture cap = {NULL, 0};
    int64_t zero_col = -1;
    int first = 1;
    for (; first < argc && !strncmp(argv[first], "--", 2); first++) {
        const char *a = argv[first];
        if (!strcmp(a, "--exec") && first + 1 < argc) {
            const char *e = argv[++first];
            o.exec = !strcmp(e, "device") ? TS_HPL_EXEC_DEVICE : !strcmp(e, "auto") ? TS_HPL_EXEC_AUTO
                     : !strcmp(e, "ooc") ? TS_HPL_EXEC_OOC : TS_HPL_EXEC_CPU;
        } else if (!strcmp(a, "--expect") && first + 1 < argc) {
            t.expect = argv[++first];
        } else if (!strcmp(a, "--panel") && first + 1 < argc) {
            const char *e = argv[++first];
            o.panel_on_device = !strcmp(e, "device") || !strcmp(e, "tessera") || !strcmp(e, "cusolver") ||
                                        !strcmp(e, "hybrid") ? 1
                                : !strcmp(e, "host") ? 0 : -1;
            o.panel = !strcmp(e, "tessera") ? TS_HPL_PANEL_TESSERA
                      : !strcmp(e, "hybrid") ? TS_HPL_PANEL_HYBRID
                      : !strcmp(e, "cusolver") ? TS_HPL_PANEL_CUSOLVER
                      : !strcmp(e, "host") ? TS_HPL_PANEL_CPU : TS_HPL_PANEL_AUTO;
        } else if (!strcmp(a, "--want-panel") && first + 1 < argc) {
            t.panel = argv[++first];
        } else if (!strcmp(a, "--want-own") && first + 1 < argc) {
            t.own = atoi(argv[++first]);
        } else if (!strcmp(a, "--want-swap") && first + 1 < argc) {
            t.swap = argv[++first];
        } else if (!strcmp(a, "--want-usolve") && first + 1 < argc) {
            t.usolve = argv[++first];
        } else if (!strcmp(a, "--want-layout") && first + 1 < argc) {
            t.layout = argv[++first];
        } else if (!strcmp(a, "--want-exec") && first + 1 < argc) {
            t.exec = argv[++first];
        } else if (!strcmp(a, "--perturb")) {
            perturb = 1;
        } else if (!strcmp(a, "--sweep")) {
            sweep = 1;
        } else if (!strcmp(a, "--compare-layout")) {
            cmp_layout = 1;
        } else if (!strcmp(a, "--compare-depth") && first + 1 < argc) {
            cmp_depth = atoi(argv[++first]);
        } else if (!strcmp(a, "--sweep-depths") && first + 1 < argc) {
            ndepths = 0;
            for (const char *q = argv[++first]; *q && ndepths < 8;) {
                char *end;
                depths[ndepths++] = (int)strtol(q, &end, 10);
                q = *end == ',' ? end + 1 : end;
                if (end == q && *q) break;
            }
        } else if (!strcmp(a, "--zero-col") && first + 1 < argc) {
            zero_col = atoll(argv[++first]);
        } else {
            fprintf(stderr, "unknown option %s\n", a);
            return 2;
        }
    }
    ts_hpl_ctx *ctx;
    if (ts_hpl_ctx_create(&o, &ctx) < 0) {
        fprintf(stderr, "ts_hpl_ctx_create: %s\n", ts_error_string());
        return 1;
    }
    t.rank = ts_hpl_ctx_rank(ctx);
    if (perturb && (cmp_depth >= 0 || cmp_layout)) {
        fprintf(stderr, "--perturb and --compare-depth or --compare-layout exclude each other\n");
        return 2;
    }
    ts_hpl_ctx_set_hooks(ctx, zero_col >= 0 ? zero_col_hook : NULL, &zero_col,
                         perturb ? perturb_hook : cmp_depth >= 0 || cmp_layout ? capture_hook : NULL,
                         perturb ? NULL : &cap);
    for (int i = first; i < argc; i++) {
        ts_hpl_case c;
        if (parse_case(argv[i], &c) < 0) {
            fprintf(stderr, "bad case '%s'\n", argv[i]);
            t.bad++;
            continue;
        }
        if (cmp_depth >= 0 || cmp_layout) { // the case at depth R or column-major, then as given: the same solution
            ts_hpl_case ref = c;
            if (cmp_depth >= 0) ref.depth = cmp_depth;
            const char *want_layout = t.layout, *want_usolve = t.usolve;
            if (cmp_layout) { // (--want-usolve is the transposed run's: folded exists only there)
                setenv("TESSERA_HPL_LAYOUT", "col", 1);
                t.layout = "col";
                t.usolve = NULL;
            }
            run_one(ctx, &ref, &t);
            if (cmp_layout) {
                setenv("TESSERA_HPL_LAYOUT", "row", 1);
                t.layout = want_layout;
                t.usolve = want_usolve;
            }
            double *xr = cap.x;
            int64_t nr = cap.n;
            cap.x = NULL;
            cap.n = 0;
            run_one(ctx, &c, &t);
            double dmax = 0, xmax = 0;
            int same = xr && cap.x && nr == c.N && cap.n == c.N;
            if (t.rank != 0) { // (x is replicated on the grid; rank 0 is in it, an idle rank is not)
                free(xr);
                free(cap.x);
                cap.x = NULL;
                cap.n = 0;
                continue;
            }
            for (int64_t k = 0; same && k < nr; k++) {
                double dk = fabs(cap.x[k] - xr[k]);
                if (!(dk <= dmax)) dmax = dk; // (NaN counts)
                if (fabs(xr[k]) > xmax) xmax = fabs(xr[k]);
            }
            int ok = same && dmax <= DEPTH_AGREE * xmax;
            if (!ok) t.bad++;
            if (t.rank == 0)
                printf("%s %s %d against %s %d, N=%lld: ||x - x_ref||_oo = %.3e, ||x_ref||_oo = %.3e "
                       "(bound %.0e relative)%s\n", ok ? "ok  " : "BAD ", cmp_layout ? "row layout, depth" : "depth",
                       c.depth, cmp_layout ? "col layout, depth" : "depth", ref.depth, (long long)c.N, dmax, xmax,
                       DEPTH_AGREE, same ? "" : " (a solution is missing)");
            free(xr);
            free(cap.x);
            cap.x = NULL;
            cap.n = 0;
            continue;
        }
        if (!sweep) {
            run_one(ctx, &c, &t);
            continue;
        }
        static const int nbmin_ndiv[][2] = {{1, 2}, {4, 2}, {2, 3}};
        for (int pf = 0; pf < 3; pf++)
            for (int rf = 0; rf < 3; rf++)
                for (int bc = 0; bc < 6; bc++)
                    for (int di = 0; di < ndepths; di++)
                        for (int sw = 0; sw < 3; sw++) {
                            ts_hpl_case v = c;
                            v.pfact = pf; v.rfact = rf; v.bcast = bc; v.depth = depths[di]; v.swap = sw;
                            const int *nn = nbmin_ndiv[(pf + rf + bc + sw) % 3];
                            v.nbmin = nn[0]; v.ndiv = nn[1];
                            v.swap_threshold = (bc % 2) ? 8 : 64;
                            run_one(ctx, &v, &t);
                        }
    }
    if (t.rank == 0) printf("%d cases, %d not as expected\n", t.count, t.bad);
    ts_hpl_ctx_destroy(ctx);
    return t.bad ? 1 : 0;
}
