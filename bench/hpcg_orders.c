// hpcg_orders: searches the smoother's colour order of the optimized HPCG problem.
//
// The optimized CG must reach the residual drop of the reference's 50 iterations; every iteration
// beyond 50 costs the rating 1/50. The JPL colouring with the bit-reversal hash gives the eight
// parity classes of (x, y, z) on power-of-two grids, and the order the colours are swept in
// changes the convergence by several iterations. This tool runs the reference CG once per size,
// then for each colour order (the coarse-point colour last, one order per class of orders that
// differ by a permutation of the axes, which the problem cannot tell apart) rebuilds the optimized
// problem and runs 50 preconditioned CG iterations: the ratio of its residual drop to the
// reference's is the score (<= 1: 50 iterations suffice). The best orders of the first size are
// run again at the second, with the iterations they need.
//
// Under MPI (mpiexec -n R) each rank holds N^3 on the default process grid (HPCG 3.1's shape; the
// environment variable HPCG_ORDERS_GRID="npx npy npz" sets another), one GPU per rank, and the
// classes of orders are those of the axis permutations that leave the process grid unchanged
// (2 x 1 x 1: y and z only, 2520 orders instead of 840). Rank 0 prints.
//
//   hpcg_orders N1 [N2 [TOP]]      e.g. hpcg_orders 128 256 24 (device when one is present)
//   hpcg_orders descent N REF_DROP FILE K PASSES: per-level orders by coordinate descent over the
//     first K orders listed in FILE (lines "N^3 c0 .. c7 ..." as the search prints them)
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/hpcg/ts_hpcg.h"
#include "algorithms/hpcg/ts_hpcg_opt.h"
#include "comm/ts_comm.h"
#include "core/ts_error.h"
#include "core/ts_timer.h"

#define NC 8
// JPL colour -> parity class (bit 0: x odd, bit 1: y odd, bit 2: z odd), checked at start.
static const int jpl_class[NC] = {7, 0, 3, 4, 5, 2, 1, 6};
static int class_jpl[NC];

typedef struct {
    int ord[NC];
    double score;
    int iters;
} cand;

static int cmp_cand(const void *a, const void *b) {
    double x = ((const cand *)a)->score, y = ((const cand *)b)->score;
    return (x > y) - (x < y);
}

static int axis_map(int cls, const int *sig) { // class with its axes permuted
    int out = 0;
    for (int a = 0; a < 3; a++)
        if (cls >> a & 1) out |= 1 << sig[a];
    return out;
}

// Orders of the seven non-coarse colours (coarse colour, JPL 1, last), one per axis class.
static int grid_np[3] = {1, 1, 1}; // the process grid: axis permutations must keep it

static int make_orders(cand **out) {
    static const int sigs[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    const int fr[7] = {0, 2, 3, 4, 5, 6, 7};
    cand *c = malloc(sizeof(cand) * 5040);
    int n = 0, p[7] = {0, 1, 2, 3, 4, 5, 6};
    for (;;) {
        int o[NC];
        for (int i = 0; i < 7; i++) o[i] = fr[p[i]];
        o[7] = 1;
        int canon = 1;
        for (int s = 1; s < 6 && canon; s++) {
            if (grid_np[sigs[s][0]] != grid_np[0] || grid_np[sigs[s][1]] != grid_np[1] ||
                grid_np[sigs[s][2]] != grid_np[2])
                continue; // not a symmetry of this process grid
            int t[NC];
            for (int i = 0; i < NC; i++) t[i] = class_jpl[axis_map(jpl_class[o[i]], sigs[s])];
            if (memcmp(t, o, sizeof t) < 0) {
                for (int i = 0; i < NC && canon; i++) {
                    if (t[i] < o[i]) canon = 0;
                    if (t[i] != o[i]) break;
                }
            }
        }
        if (canon) {
            memcpy(c[n].ord, o, sizeof o);
            c[n].score = 0;
            c[n].iters = 0;
            n++;
        }
        int i = 5; // next permutation
        while (i >= 0 && p[i] > p[i + 1]) i--;
        if (i < 0) break;
        int j = 6;
        while (p[j] < p[i]) j--;
        int t = p[i]; p[i] = p[j]; p[j] = t;
        for (int a = i + 1, b = 6; a < b; a++, b--) { t = p[a]; p[a] = p[b]; p[b] = t; }
    }
    *out = c;
    return n;
}

typedef struct {
    ts_comm *comm;
    ts_hpcg_geom g;
    ts_hpcg_exec X;
    double ref_tol;
} sizectx;

// One order (NULL: the default) at one size: the score, and the iterations when iters != NULL.
// lv: per-level orders (NULL rows: the default), or ord on the levels with a coarse level.
static int run_levels(sizectx *S, const int *const *lv, double *score, int *iters, int check);
static int run_order(sizectx *S, const int *ord, double *score, int *iters, int check) {
    const int *lv[TS_HPCG_MG_LEVELS] = {0};
    for (int l = 0; l + 1 < TS_HPCG_MG_LEVELS; l++) lv[l] = ord;
    return run_levels(S, lv, score, iters, check);
}

static int rule_order = 0; // 1: the rule by coarse points wherever lv gives no order

static int run_levels(sizectx *S, const int *const *lv, double *score, int *iters, int check) {
    ts_hpcg_opt *O = NULL;
    TS_CHECK(ts_hpcg_opt_setup(S->comm, &S->g, TS_HPCG_MG_LEVELS, &S->X, &O));
    for (int l = 0; l < TS_HPCG_MG_LEVELS; l++)
        if (!lv[l] && rule_order) O->norder[l] = -1;
        else if (lv[l]) {
            O->norder[l] = NC;
            memcpy(O->order[l], lv[l], sizeof O->order[l]);
        }
    int rc = 0;
    TS_CHECK_GOTO(ts_hpcg_opt_optimize(O), rc, out);
    if (check) { // the class table: identity order, colours of the 8 corner rows
        int32_t *col = malloc(sizeof(int32_t) * (size_t)O->A->nrow);
        TS_CHECK_GOTO(ts_hpcg_xcopy(&S->X, TS_COPY_D2H, col, O->A->color, sizeof(int32_t) * (size_t)O->A->nrow),
                      rc, out);
        TS_CHECK_GOTO(ts_hpcg_xsync(&S->X), rc, out);
        const int nx = S->g.nx, ny = S->g.ny;
        for (int cls = 0; cls < NC; cls++) {
            int i = (cls & 1) + nx * ((cls >> 1 & 1) + ny * (cls >> 2 & 1));
            if (jpl_class[col[i]] != cls) {
                fprintf(stderr, "hpcg_orders: class %d has JPL colour %d, the table says otherwise\n", cls, col[i]);
                free(col);
                rc = -1;
                goto out;
            }
        }
        free(col);
    }
    ts_hpcg_impl I;
    ts_hpcg_opt_impl(O, &I);
    double t[TS_HPCG_NTIMES] = {0};
    ts_hpcg_cg_result cr;
    TS_CHECK_GOTO(I.ops->zero(&I, I.x), rc, out);
    TS_CHECK_GOTO(ts_hpcg_cg(&I, I.b, I.x, TS_HPCG_REF_ITERS, 0.0, 1, t, &cr), rc, out);
    *score = cr.normr / cr.normr0 / S->ref_tol;
    if (iters) {
        TS_CHECK_GOTO(I.ops->zero(&I, I.x), rc, out);
        TS_CHECK_GOTO(ts_hpcg_cg(&I, I.b, I.x, 80, S->ref_tol, 1, t, &cr), rc, out);
        *iters = cr.niters;
    }
out:
    ts_hpcg_opt_destroy(O);
    return rc;
}

static int size_init(sizectx *S, ts_comm *comm, ts_devset *set, ts_device *dev, int n, double ref_tol) {
    memset(S, 0, sizeof *S);
    S->comm = comm;
    TS_CHECK(ts_hpcg_geom_init(&S->g, comm->size, comm->rank, n, n, n, grid_np[0], grid_np[1], grid_np[2]));
    if (dev) TS_CHECK(ts_hpcg_exec_device(&S->X, set, dev));
    else ts_hpcg_exec_host(&S->X);
    if (ref_tol > 0) {
        S->ref_tol = ref_tol;
        printf("# %d^3: reference drop %.6e (given)\n", n, ref_tol);
        return 0;
    }
    ts_hpcg_problem *P = NULL;
    TS_CHECK(ts_hpcg_problem_create(comm, &S->g, TS_HPCG_MG_LEVELS, &P));
    ts_hpcg_impl ref;
    ts_hpcg_impl_ref(P, &ref);
    double t[TS_HPCG_NTIMES] = {0}, t0 = ts_now();
    ts_hpcg_cg_result cr;
    memset(P->x, 0, sizeof(double) * (size_t)P->A->ncol);
    int rc = ts_hpcg_cg(&ref, P->b, P->x, TS_HPCG_REF_ITERS, 0.0, 1, t, &cr);
    S->ref_tol = cr.normr / cr.normr0;
    printf("# %d^3: reference drop %.6e after %d iterations (%.1f s)\n", n, S->ref_tol, cr.niters, ts_now() - t0);
    fflush(stdout);
    ts_hpcg_problem_destroy(P);
    return rc;
}

static void print_levels(const char *what, int n, int *const *lv, double score, int iters) {
    printf("%s %d^3", what, n);
    for (int l = 0; l < TS_HPCG_MG_LEVELS; l++) {
        printf(" |");
        if (!lv[l]) printf(" default");
        else
            for (int k = 0; k < NC; k++) printf(" %d", lv[l][k]);
    }
    printf(" | score %.4f", score);
    if (iters) printf(" iterations %d", iters);
    printf("\n");
    fflush(stdout);
}

// Coordinate descent over the levels: each level in turn takes the candidate order that scores
// best with the other levels' orders held; PASSES rounds over the levels.
static int descent(ts_comm *comm, ts_devset *set, ts_device *dev, int n, double ref_tol, const char *file,
                   int k, int passes) {
    FILE *f = fopen(file, "r");
    if (!f) {
        perror(file);
        return 2;
    }
    int (*cand_o)[NC] = malloc(sizeof(int[NC]) * (size_t)k);
    int nc = 0;
    char line[512];
    while (nc < k && fgets(line, sizeof line, f)) {
        int d, *o = cand_o[nc];
        if (sscanf(line, "%d^3 %d %d %d %d %d %d %d %d", &d, &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &o[6],
                   &o[7]) == 9)
            nc++;
    }
    fclose(f);
    printf("# %d candidate orders from %s\n", nc, file);
    sizectx S;
    if (size_init(&S, comm, set, dev, n, ref_tol) < 0) return 3;
    int *lv[TS_HPCG_MG_LEVELS] = {0};
    double best;
    int it;
    rule_order = 1;
    if (run_levels(&S, (const int *const *)lv, &best, &it, 0) < 0) return 3;
    print_levels("rule", n, lv, best, it);
    rule_order = 0;
    if (run_levels(&S, (const int *const *)lv, &best, &it, 0) < 0) return 3;
    print_levels("start", n, lv, best, it);
    for (int p = 0; p < passes; p++)
        for (int l = 0; l < TS_HPCG_MG_LEVELS; l++) {
            int *keep = lv[l];
            for (int c = 0; c < nc; c++) {
                lv[l] = cand_o[c];
                double sc;
                if (run_levels(&S, (const int *const *)lv, &sc, NULL, 0) < 0) return 3;
                if (sc < best) {
                    best = sc;
                    keep = cand_o[c];
                    print_levels("better", n, lv, sc, 0);
                }
            }
            lv[l] = keep;
        }
    if (run_levels(&S, (const int *const *)lv, &best, &it, 0) < 0) return 3;
    print_levels("final", n, lv, best, it);
    ts_hpcg_exec_fini(&S.X);
    free(cand_o);
    return 0;
}

int main(int argc, char **argv) {
    // Every order rebuilds the optimized problem: a NCCL communicator per rebuild would cost ~0.5 s
    // each, so the search keeps the host-staged halo unless told otherwise.
    setenv("TESSERA_HPCG_NCCL", "0", 0);
    if (argc < 2) {
        fprintf(stderr, "usage: hpcg_orders N1 [N2 [TOP]]\n"
                        "       hpcg_orders descent N REF_DROP FILE K PASSES\n");
        return 2;
    }
    if (!strcmp(argv[1], "descent") && argc < 7) {
        fprintf(stderr, "usage: hpcg_orders descent N REF_DROP FILE K PASSES\n");
        return 2;
    }
    const int n1 = atoi(argv[1]), n2 = argc > 2 ? atoi(argv[2]) : 0;
    int top = argc > 3 ? atoi(argv[3]) : 16;
    ts_comm comm;
    if (ts_comm_world(&comm) < 0) return 3;
    int threads = 1; // the host reference CG's threads: the node's cores shared among the ranks
    if (ts_hpcg_share_threads(&comm, &threads) < 0) {
        fprintf(stderr, "hpcg_orders: %s\n", ts_error_last()->message);
        return 3;
    }
    if (comm.rank != 0 && !freopen("/dev/null", "w", stdout)) return 3; // rank 0 prints
    const char *ge = getenv("HPCG_ORDERS_GRID");
    if (ge) {
        if (sscanf(ge, "%d %d %d", &grid_np[0], &grid_np[1], &grid_np[2]) != 3 ||
            grid_np[0] * grid_np[1] * grid_np[2] != comm.size) {
            fprintf(stderr, "hpcg_orders: HPCG_ORDERS_GRID='%s' is not three numbers whose product is %d\n", ge,
                    comm.size);
            return 2;
        }
    } else {
        ts_hpcg_proc_grid(comm.size, &grid_np[0], &grid_np[1], &grid_np[2]);
    }
    printf("# %d rank(s), process grid %d x %d x %d, %d thread(s) each\n", comm.size, grid_np[0], grid_np[1],
           grid_np[2], threads);
    for (int i = 0; i < NC; i++) class_jpl[jpl_class[i]] = i;
    ts_devset *set = NULL;
    ts_device *dev = NULL;
    ts_devset_opts o;
    if (ts_devset_opts_init(&o) == 0 && ts_devset_open_rank(&o, comm.rank, comm.size, &set, &dev) == 0 && dev)
        printf("# device %s\n", ts_device_props_of(dev)->name);
    else {
        dev = NULL;
        printf("# host\n");
    }
    int rc = 0;
    if (!strcmp(argv[1], "descent")) {
        rc = descent(&comm, set, dev, atoi(argv[2]), atof(argv[3]), argv[4], atoi(argv[5]), atoi(argv[6]));
        if (rc == 3) fprintf(stderr, "hpcg_orders: %s\n", ts_error_last()->message);
        if (set) ts_devset_close(set);
        ts_comm_free(&comm);
        return rc;
    }
    sizectx S;
    if (size_init(&S, &comm, set, dev, n1, 0) < 0) goto fail;
    double s0;
    int it0;
    int ident[NC] = {0, 1, 2, 3, 4, 5, 6, 7};
    double sdummy;
    if (run_order(&S, ident, &sdummy, NULL, 1) < 0) goto fail;
    if (run_order(&S, NULL, &s0, &it0, 0) < 0) goto fail;
    printf("default %d^3 score %.4f iterations %d\n", n1, s0, it0);
    cand *c = NULL;
    int nc = make_orders(&c);
    printf("# %d orders\n", nc);
    // HPCG_ORDERS_BUDGET_S: the first size stops after that many seconds (rank 0's clock decides,
    // for every rank); the orders then run in a fixed shuffled order, so that the part searched is
    // a sample of all of them, and those not reached score last.
    double budget = 0;
    const char *bs = getenv("HPCG_ORDERS_BUDGET_S");
    if (bs && *bs) budget = atof(bs);
    if (budget > 0) {
        unsigned long long z = 0x9E3779B97F4A7C15ull;
        for (int k = nc - 1; k > 0; k--) {
            z ^= z << 13, z ^= z >> 7, z ^= z << 17;
            const int j = (int)(z % (unsigned long long)(k + 1));
            cand t = c[k];
            c[k] = c[j];
            c[j] = t;
        }
        for (int k = 0; k < nc; k++) c[k].score = 1e300;
    }
    double t0 = ts_now();
    int ran = 0;
    for (int k = 0; k < nc; k++) {
        if (budget > 0) {
            int stop = comm.rank == 0 && ts_now() - t0 > budget;
            if (ts_comm_allreduce_i(&comm, &stop, 1, TS_COMM_MAX) < 0) goto fail;
            if (stop) break;
        }
        if (run_order(&S, c[k].ord, &c[k].score, NULL, 0) < 0) goto fail;
        ran++;
        if (k == 0) printf("# %.3f s per order\n", ts_now() - t0);
        fflush(stdout);
    }
    if (ran < nc) printf("# %d of the %d orders run in the budget of %.0f s (a random sample)\n", ran, nc, budget);
    if (ran < top) top = ran;
    qsort(c, (size_t)nc, sizeof *c, cmp_cand);
    for (int k = 0; k < ran && k < 3 * top; k++)
        printf("%d^3 %d %d %d %d %d %d %d %d score %.4f\n", n1, c[k].ord[0], c[k].ord[1], c[k].ord[2],
               c[k].ord[3], c[k].ord[4], c[k].ord[5], c[k].ord[6], c[k].ord[7], c[k].score);
    printf("%d^3 worst score %.4f\n", n1, c[ran - 1].score);
    fflush(stdout);
    ts_hpcg_exec_fini(&S.X);
    if (n2 > 0) {
        if (size_init(&S, &comm, set, dev, n2, 0) < 0) goto fail;
        if (run_order(&S, NULL, &s0, &it0, 0) < 0) goto fail;
        printf("default %d^3 score %.4f iterations %d\n", n2, s0, it0);
        fflush(stdout);
        for (int k = 0; k < nc && k < top; k++) {
            if (run_order(&S, c[k].ord, &c[k].score, &c[k].iters, 0) < 0) goto fail;
            printf("%d^3 %d %d %d %d %d %d %d %d score %.4f iterations %d\n", n2, c[k].ord[0], c[k].ord[1],
                   c[k].ord[2], c[k].ord[3], c[k].ord[4], c[k].ord[5], c[k].ord[6], c[k].ord[7], c[k].score,
                   c[k].iters);
            fflush(stdout);
        }
        ts_hpcg_exec_fini(&S.X);
    }
    free(c);
    if (set) ts_devset_close(set);
    ts_comm_free(&comm);
    return rc;
fail:
    fprintf(stderr, "hpcg_orders: %s\n", ts_error_last()->message);
    return 3;
}
