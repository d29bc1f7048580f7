// ts_hpcg_problem.c: HPCG geometry, process grid, the 27-point problem, the halo plan and the coarse levels.
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algorithms/hpcg/ts_hpcg.h"
#include "core/ts_error.h"

static int ipow(int b, int e) {
    int v = 1;
    while (e-- > 0) v *= b;
    return v;
}

// Next exponent vector below max (digit 0 counts fastest); 0 once it wraps to all zeros.
static int count_next(int *c, const int *max, int n) {
    for (int i = 0; i < n; i++) {
        if (c[i] < max[i]) {
            c[i]++;
            return 1;
        }
        c[i] = 0;
    }
    return 0;
}

static int count_product(const int *c, const int *p, int n) {
    int v = 1;
    for (int i = 0; i < n; i++) v *= ipow(p[i], c[i]);
    return v;
}

// HPCG 3.1's default process grid: from the prime factors of the rank count in ascending order,
// a power p^k gives x = p^ceil(k/3) >= y >= z = p^floor(k/3); two distinct primes p < q give
// p x q x 1; p^2 q or p q^2 gives p x q x (the repeated one); three distinct primes p x q x r;
// anything else the least surface x y + y z + x z over all splits, the first found in counting
// order. So the first split is in x (2 ranks: 2 x 1 x 1, 4: 2 x 2 x 1, 8: 2 x 2 x 2, 16: 4 x 2 x 2),
// as the reference's runs are laid out; a z split also needs more iterations of the coloured
// smoother to reach the reference's residual drop (2 ranks on the CPU: 51 against 50 at 128^3 per
// rank, 52 against 51 at 64^3).
void ts_hpcg_proc_grid(int size, int *npx, int *npy, int *npz) {
    int p[32], e[32], np = 0, n = size > 0 ? size : 1;
    for (int d = 2; d <= n / d; d += d == 2 ? 1 : 2) {
        if (n % d) continue;
        p[np] = d;
        e[np] = 0;
        while (n % d == 0) {
            n /= d;
            e[np]++;
        }
        np++;
    }
    if (n > 1 || np == 0) { // a last prime, or a rank count of 1
        p[np] = n;
        e[np] = 1;
        np++;
    }
    int x, y, z;
    if (np == 1) {
        int k = e[0];
        z = ipow(p[0], k / 3);
        y = ipow(p[0], k / 3 + (k % 3 >= 2));
        x = ipow(p[0], k / 3 + (k % 3 >= 1));
    } else if (np == 2 && e[0] == 1 && e[1] == 1) {
        x = p[0]; y = p[1]; z = 1;
    } else if (np == 2 && e[0] + e[1] == 3) {
        x = p[0]; y = p[1]; z = e[0] == 2 ? p[0] : p[1];
    } else if (np == 3 && e[0] == 1 && e[1] == 1 && e[2] == 1) {
        x = p[0]; y = p[1]; z = p[2];
    } else {
        double best = 2.0 * size + 1.0;
        int c1[32] = {0};
        x = size; y = 1; z = 1;
        while (count_next(c1, e, np)) {
            int rest[32], c2[32] = {0};
            for (int i = 0; i < np; i++) rest[i] = e[i] - c1[i];
            while (count_next(c2, rest, np)) {
                int f1 = count_product(c1, p, np), f2 = count_product(c2, p, np), f3 = size / f1 / f2;
                double area = (double)f1 * f2 + (double)f2 * f3 + (double)f1 * f3;
                if (area < best) {
                    best = area;
                    x = f1; y = f2; z = f3;
                }
            }
        }
    }
    *npx = x;
    *npy = y;
    *npz = z;
}

int ts_hpcg_geom_init(ts_hpcg_geom *g, int size, int rank, int nx, int ny, int nz, int npx, int npy,
                      int npz) {
    return ts_hpcg_geom_init_z(g, size, rank, nx, ny, nz, npx, npy, npz, 0, 0, 0);
}

int ts_hpcg_geom_init_z(ts_hpcg_geom *g, int size, int rank, int nx, int ny, int nz, int npx, int npy,
                        int npz, int pz, int zl, int zu) {
    memset(g, 0, sizeof *g);
    if (nx <= 0 || ny <= 0 || nz <= 0)
        TS_RAISE(TS_ERR_ARG, "local grid %d x %d x %d: every dimension must be positive", nx, ny, nz);
    if (pz < 0 || zl < 0 || zu < 0)
        TS_RAISE(TS_ERR_ARG, "pz=%d zl=%d zu=%d: none may be negative", pz, zl, zu);
    if (!npx && !npy && !npz) {
        ts_hpcg_proc_grid(size, &npx, &npy, &npz);
    } else if (!npx || !npy || !npz) {
        // Some given: fill the rest from the remaining ranks.
        int given = (npx ? npx : 1) * (npy ? npy : 1) * (npz ? npz : 1);
        if (given <= 0 || size % given)
            TS_RAISE(TS_ERR_ARG, "process grid: %d ranks are not a multiple of the given npx*npy*npz=%d",
                     size, given);
        int rest = size / given, a, b, c;
        ts_hpcg_proc_grid(rest, &a, &b, &c);
        int missing = !npx + !npy + !npz;
        if (missing == 1) {
            if (!npx) npx = rest; else if (!npy) npy = rest; else npz = rest;
        } else if (missing == 2) {
            int f = (int)floor(sqrt((double)rest));
            while (f > 1 && rest % f) f--;
            int s = f, l = rest / f;
            if (!npx && !npy) { npx = s; npy = l; }
            else if (!npx) { npx = s; npz = l; }
            else { npy = s; npz = l; }
        }
    }
    if ((int64_t)npx * npy * npz != size)
        TS_RAISE(TS_ERR_ARG, "process grid npx*npy*npz = %d*%d*%d = %lld does not match the %d ranks",
                 npx, npy, npz, (long long)npx * npy * npz, size);
    g->size = size;
    g->rank = rank;
    g->npx = npx; g->npy = npy; g->npz = npz;
    g->ipx = rank % npx;
    g->ipy = (rank / npx) % npy;
    g->ipz = rank / (npx * npy);
    if (pz >= npz)
        TS_RAISE(TS_ERR_ARG, "pz=%d must be below npz=%d (process layers ipz < pz get zl, the others zu)",
                 pz, npz);
    g->pz = pz;
    g->zl = pz && zl ? zl : nz;
    g->zu = pz && zu ? zu : nz;
    g->nx = nx; g->ny = ny;
    g->nz = g->ipz < pz ? g->zl : g->zu;
    g->gnx = (int64_t)npx * nx;
    g->gny = (int64_t)npy * ny;
    g->gnz = (int64_t)pz * g->zl + (int64_t)(npz - pz) * g->zu;
    g->gix0 = (int64_t)g->ipx * nx;
    g->giy0 = (int64_t)g->ipy * ny;
    g->giz0 = g->ipz < pz ? (int64_t)g->ipz * g->zl : (int64_t)pz * g->zl + (int64_t)(g->ipz - pz) * g->zu;
    return 0;
}

void ts_hpcg_geom_halve(ts_hpcg_geom *g) {
    g->nx /= 2; g->ny /= 2; g->nz /= 2;
    g->zl /= 2; g->zu /= 2;
    g->gnx /= 2; g->gny /= 2; g->gnz /= 2;
    g->gix0 /= 2; g->giy0 /= 2; g->giz0 /= 2;
}

void ts_hpcg_geom_nz_text(const ts_hpcg_geom *g, char *buf, size_t len) {
    if (g->pz) snprintf(buf, len, "(%d below layer %d, then %d)", g->zl, g->pz, g->zu);
    else snprintf(buf, len, "%d", g->nz);
}

// The process layer that holds global z index giz.
static int layer_of(const ts_hpcg_geom *g, int64_t giz) {
    const int64_t low = (int64_t)g->pz * g->zl;
    return giz < low ? (int)(giz / g->zl) : g->pz + (int)((giz - low) / g->zu);
}

int64_t ts_hpcg_global_row(const ts_hpcg_geom *g, int64_t gix, int64_t giy, int64_t giz) {
    return giz * g->gnx * g->gny + giy * g->gnx + gix;
}

static double aspect(int a, int b, int c) {
    int mn = a < b ? a : b, mx = a > b ? a : b;
    if (c < mn) mn = c;
    if (c > mx) mx = c;
    return (double)mn / (double)mx;
}

int ts_hpcg_check_geom(const ts_hpcg_geom *g) {
    // Every rank checks both z values (zl, zu), so all ranks reach the same verdict.
    const int two = g->pz > 0;
    const int d[4] = {g->nx, g->ny, two ? g->zl : g->nz, two ? g->zu : g->nz};
    const char *name[4] = {"nx", "ny", two ? "zl" : "nz", two ? "zu" : "nz"};
    for (int i = 0; i < 4; i++)
        if (d[i] < 8 || d[i] % 8)
            TS_RAISE(TS_ERR_ARG, "local %s=%d must be a positive multiple of 8 (the %d-level multigrid "
                     "halves it %d times)", name[i], d[i], TS_HPCG_MG_LEVELS, TS_HPCG_MG_LEVELS - 1);
    for (int i = 2; i < 4; i++) {
        double a = aspect(g->nx, g->ny, d[i]);
        if (a < TS_HPCG_MIN_ASPECT)
            TS_RAISE(TS_ERR_ARG, "local grid %d x %d x %d has aspect ratio min/max = %.4g, below the limit %g",
                     g->nx, g->ny, d[i], a, TS_HPCG_MIN_ASPECT);
    }
    double a = aspect(g->npx, g->npy, g->npz);
    if (a < TS_HPCG_MIN_ASPECT)
        TS_RAISE(TS_ERR_ARG, "process grid %d x %d x %d has aspect ratio min/max = %.4g, below the limit %g",
                 g->npx, g->npy, g->npz, a, TS_HPCG_MIN_ASPECT);
    // Local column ids are 32-bit: rows plus the halo (at most the 26 neighbours' layers).
    const int nz = d[2] > d[3] ? d[2] : d[3];
    int64_t rows = (int64_t)g->nx * g->ny * nz;
    int64_t halo = 2 * ((int64_t)g->nx * g->ny + (int64_t)g->ny * nz + (int64_t)g->nx * nz) +
                   4 * ((int64_t)g->nx + g->ny + nz) + 8;
    if (rows + halo > INT32_MAX)
        TS_RAISE(TS_ERR_ARG, "local grid %d x %d x %d has %lld rows plus %lld halo columns, above the "
                 "32-bit local index limit %d", g->nx, g->ny, nz, (long long)rows, (long long)halo,
                 INT32_MAX);
    return 0;
}

double ts_hpcg_bytes_estimate(int nx, int ny, int nz) {
    // Per fine row: 27 values + 27 column ids + row pointer, diagonal position, global id, the 7
    // CG vectors (b, x, xexact, r, z, p, Ap) and the MG work vectors; the coarse levels add 1/8 +
    // 1/64 + 1/512 of the matrix. Generation briefly adds nothing larger than this.
    double rows = (double)nx * ny * nz;
    double per_row_matrix = 27.0 * (8 + 4) + 8 * 3;
    double mg_vectors = 8.0 * (1.0 + 2.0 / 8.0);
    return rows * (per_row_matrix * (1.0 + 1.0 / 8 + 1.0 / 64 + 1.0 / 512) + 7 * 8.0 + mg_vectors);
}

double ts_hpcg_opt_bytes_estimate(int nx, int ny, int nz) {
    // Per fine row: the 27-slot natural ELL and the sliced ELL (12 bytes a slot each), diagonal,
    // t, permutation and colour, 7 CG vectors; the coarse levels add 1/8 + 1/64 + 1/512.
    double rows = (double)nx * ny * nz;
    double per_row = 2 * 27.0 * 12 + 2 * 8 + 2 * 4;
    return rows * (per_row * (1.0 + 1.0 / 8 + 1.0 / 64 + 1.0 / 512) + 7 * 8.0);
}

// ---- generation ----

// An external column: its owner and global id.
typedef struct {
    int owner;
    int64_t gcol;
} ext_col;

static int ext_cmp(const void *a, const void *b) {
    const ext_col *x = a, *y = b;
    if (x->owner != y->owner) return x->owner < y->owner ? -1 : 1;
    return x->gcol < y->gcol ? -1 : x->gcol > y->gcol;
}

static void level_free(ts_hpcg_level *L) {
    if (!L) return;
    free(L->rowptr); free(L->col); free(L->val); free(L->diag); free(L->l2g);
    free(L->send_idx); free(L->send_buf);
    free(L->f2c); free(L->Axf); free(L->rc); free(L->xc);
    free(L);
}

static int owner_of(const ts_hpcg_geom *g, int64_t gix, int64_t giy, int64_t giz) {
    int px = (int)(gix / g->nx), py = (int)(giy / g->ny), pz = layer_of(g, giz);
    return pz * g->npx * g->npy + py * g->npx + px;
}

// Stencil slot of the direction from this rank to the neighbouring rank r.
static int dir_of(const ts_hpcg_geom *g, int r) {
    int dx = r % g->npx - g->ipx, dy = (r / g->npx) % g->npy - g->ipy, dz = r / (g->npx * g->npy) - g->ipz;
    return (dz + 1) * 9 + (dy + 1) * 3 + (dx + 1);
}

int ts_hpcg_halo_plan_geom(const ts_hpcg_geom *g, ts_hpcg_halo_plan *h, int32_t **send_idx) {
    memset(h, 0, sizeof *h);
    *send_idx = NULL;
    // Slots in increasing order visit the neighbours in increasing rank order.
    for (int s = 0; s < 27; s++) {
        const int dz = s / 9 - 1, dy = (s / 3) % 3 - 1, dx = s % 3 - 1;
        const int px = g->ipx + dx, py = g->ipy + dy, pz = g->ipz + dz;
        if (s == 13 || px < 0 || px >= g->npx || py < 0 || py >= g->npy || pz < 0 || pz >= g->npz) continue;
        const int k = h->nneigh++;
        h->neigh[k] = (pz * g->npy + py) * g->npx + px;
        h->dir[k] = s;
        const int32_t cnt = (dx ? 1 : g->nx) * (dy ? 1 : g->ny) * (dz ? 1 : g->nz);
        h->recv_off[k] = h->nrecv;
        h->recv_count[k] = h->send_count[k] = cnt;
        h->send_off[k] = h->nsend;
        h->nrecv += cnt;
        h->nsend += cnt;
    }
    h->send_off[h->nneigh] = h->nsend;
    int32_t *idx = malloc(sizeof(int32_t) * (size_t)(h->nsend ? h->nsend : 1));
    if (!idx) TS_RAISE(TS_ERR_NOMEM, "hpcg: halo plan: out of memory");
    // Our rows on the face, edge or corner toward each neighbour, in increasing order.
    for (int k = 0; k < h->nneigh; k++) {
        const int s = h->dir[k], dz = s / 9 - 1, dy = (s / 3) % 3 - 1, dx = s % 3 - 1;
        int32_t m = h->send_off[k];
        for (int iz = dz > 0 ? g->nz - 1 : 0; iz < (dz < 0 ? 1 : g->nz); iz++)
            for (int iy = dy > 0 ? g->ny - 1 : 0; iy < (dy < 0 ? 1 : g->ny); iy++)
                for (int ix = dx > 0 ? g->nx - 1 : 0; ix < (dx < 0 ? 1 : g->nx); ix++)
                    idx[m++] = (int32_t)(((int64_t)iz * g->ny + iy) * g->nx + ix);
    }
    *send_idx = idx;
    return 0;
}

// The halo plan: external columns sorted by (owner, global id) get ids nrow..ncol-1; each
// neighbour is sent our rows that reference its columns (the stencil is symmetric, so these are
// exactly the columns of ours it holds), in increasing row order = increasing global order.
static int setup_halo(ts_hpcg_level *L, ext_col *ext, int64_t next, int64_t *ext_pos) {
    // ext[k] is the external column of the nonzero at ext_pos[k]; col[ext_pos[k]] = -1 - k.
    ext_col *u = malloc(sizeof *u * (size_t)(next ? next : 1));
    if (!u) TS_RAISE(TS_ERR_NOMEM, "hpcg: halo setup: out of memory");
    memcpy(u, ext, sizeof *u * (size_t)next);
    qsort(u, (size_t)next, sizeof *u, ext_cmp);
    int64_t nu = 0;
    for (int64_t k = 0; k < next; k++)
        if (nu == 0 || ext_cmp(&u[nu - 1], &u[k]) != 0) u[nu++] = u[k];
    L->ncol = L->nrow + (int32_t)nu;
    for (int64_t k = 0; k < next; k++) {
        ext_col *hit = bsearch(&ext[k], u, (size_t)nu, sizeof *u, ext_cmp);
        L->col[ext_pos[k]] = L->nrow + (int32_t)(hit - u);
    }
    ts_hpcg_halo_plan *h = &L->halo;
    memset(h, 0, sizeof *h);
    int nn = 0;
    for (int64_t k = 0; k < nu; k++) {
        if (k == 0 || u[k].owner != u[k - 1].owner) {
            if (nn == TS_HPCG_MAX_NEIGH) {
                free(u);
                TS_RAISE(TS_ERR_INTERNAL, "hpcg: halo setup: more than %d neighbours", TS_HPCG_MAX_NEIGH);
            }
            h->neigh[nn] = u[k].owner;
            h->recv_off[nn] = (int32_t)k;
            nn++;
        }
        h->recv_count[nn - 1]++;
    }
    h->nneigh = nn;
    h->nrecv = (int32_t)nu;
    for (int k = 0; k < nn; k++) h->dir[k] = dir_of(&L->g, h->neigh[k]);
    free(u);
    // Sends: count, then fill, row by row (a row goes once to each neighbour it touches).
    int seen[32];
    for (int pass = 0; pass < 2; pass++) {
        int32_t *fill = NULL;
        if (pass == 1) {
            h->send_off[0] = 0;
            for (int k = 0; k < nn; k++) h->send_off[k + 1] = h->send_off[k] + h->send_count[k];
            h->nsend = h->send_off[nn];
            L->send_idx = malloc(sizeof(int32_t) * (size_t)(h->nsend ? h->nsend : 1));
            L->send_buf = malloc(sizeof(double) * (size_t)(h->nsend ? h->nsend : 1));
            fill = calloc((size_t)(nn ? nn : 1), sizeof(int32_t));
            if (!L->send_idx || !L->send_buf || !fill) {
                free(fill);
                TS_RAISE(TS_ERR_NOMEM, "hpcg: halo setup: out of memory");
            }
        }
        for (int32_t i = 0; i < L->nrow; i++) {
            int ns = 0;
            for (int64_t j = L->rowptr[i]; j < L->rowptr[i + 1]; j++) {
                int32_t c = L->col[j];
                if (c < L->nrow) continue;
                // neighbour index of column c: the last k with recv_off[k] <= c - nrow
                int lo = 0, hi = nn - 1, e = c - L->nrow;
                while (lo < hi) {
                    int mid = (lo + hi + 1) / 2;
                    if (h->recv_off[mid] <= e) lo = mid; else hi = mid - 1;
                }
                int dup = 0;
                for (int s = 0; s < ns; s++) dup |= seen[s] == lo;
                if (dup) continue;
                seen[ns++] = lo;
                if (pass == 0) h->send_count[lo]++;
                else L->send_idx[h->send_off[lo] + fill[lo]++] = i;
            }
        }
        free(fill);
    }
    return 0;
}

// Generates one level: matrix, global ids, halo. b/x/xexact (may be NULL) get the right-hand side,
// zero and ones.
static int generate_level(const ts_hpcg_geom *g, ts_hpcg_level **out, double *b, double *x, double *xexact) {
    ts_hpcg_level *L = calloc(1, sizeof *L);
    if (!L) TS_RAISE(TS_ERR_NOMEM, "hpcg: out of memory");
    L->g = *g;
    const int nx = g->nx, ny = g->ny, nz = g->nz;
    L->nrow = (int32_t)((int64_t)nx * ny * nz);
    const int64_t cap = 27 * (int64_t)L->nrow;
    L->rowptr = malloc(sizeof(int64_t) * ((size_t)L->nrow + 1));
    L->col = malloc(sizeof(int32_t) * (size_t)cap);
    L->val = malloc(sizeof(double) * (size_t)cap);
    L->diag = malloc(sizeof(int64_t) * (size_t)L->nrow);
    L->l2g = malloc(sizeof(int64_t) * (size_t)L->nrow);
    // External columns lie on the 6 faces: at most 9 per boundary row.
    int64_t ext_cap = 9 * 2 * ((int64_t)nx * ny + (int64_t)ny * nz + (int64_t)nx * nz) + 64;
    ext_col *ext = malloc(sizeof *ext * (size_t)ext_cap);
    int64_t *ext_pos = malloc(sizeof(int64_t) * (size_t)ext_cap);
    if (!L->rowptr || !L->col || !L->val || !L->diag || !L->l2g || !ext || !ext_pos) {
        free(ext); free(ext_pos); level_free(L);
        TS_RAISE(TS_ERR_NOMEM, "hpcg: out of memory generating a %d x %d x %d level", nx, ny, nz);
    }
    int64_t nnz = 0, next = 0;
    for (int iz = 0; iz < nz; iz++) {
        const int64_t giz = g->giz0 + iz;
        for (int iy = 0; iy < ny; iy++) {
            const int64_t giy = g->giy0 + iy;
            for (int ix = 0; ix < nx; ix++) {
                const int64_t gix = g->gix0 + ix;
                const int32_t row = (int32_t)(((int64_t)iz * ny + iy) * nx + ix);
                const int64_t grow = ts_hpcg_global_row(g, gix, giy, giz);
                L->rowptr[row] = nnz;
                L->l2g[row] = grow;
                int nrow_nz = 0;
                for (int sz = -1; sz <= 1; sz++) {
                    if (giz + sz < 0 || giz + sz >= g->gnz) continue;
                    for (int sy = -1; sy <= 1; sy++) {
                        if (giy + sy < 0 || giy + sy >= g->gny) continue;
                        for (int sx = -1; sx <= 1; sx++) {
                            if (gix + sx < 0 || gix + sx >= g->gnx) continue;
                            const int lx = ix + sx, ly = iy + sy, lz = iz + sz;
                            if (lx >= 0 && lx < nx && ly >= 0 && ly < ny && lz >= 0 && lz < nz) {
                                L->col[nnz] = (int32_t)(((int64_t)lz * ny + ly) * nx + lx);
                            } else {
                                ext[next].owner = owner_of(g, gix + sx, giy + sy, giz + sz);
                                ext[next].gcol = ts_hpcg_global_row(g, gix + sx, giy + sy, giz + sz);
                                ext_pos[next] = nnz;
                                L->col[nnz] = -1;
                                next++;
                            }
                            if (sx == 0 && sy == 0 && sz == 0) {
                                L->val[nnz] = 26.0;
                                L->diag[row] = nnz;
                            } else {
                                L->val[nnz] = -1.0;
                            }
                            nnz++;
                            nrow_nz++;
                        }
                    }
                }
                if (b) b[row] = 26.0 - (double)(nrow_nz - 1);
                if (x) x[row] = 0.0;
                if (xexact) xexact[row] = 1.0;
            }
        }
    }
    L->rowptr[L->nrow] = nnz;
    L->nnz = nnz;
    int rc = setup_halo(L, ext, next, ext_pos);
    free(ext);
    free(ext_pos);
    if (rc < 0) {
        level_free(L);
        return rc;
    }
    L->bytes = sizeof(int64_t) * ((size_t)L->nrow * 3 + 1) + (size_t)cap * (sizeof(int32_t) + sizeof(double)) +
               (size_t)L->halo.nsend * (sizeof(int32_t) + sizeof(double));
    *out = L;
    return 0;
}

void ts_hpcg_problem_destroy(ts_hpcg_problem *P) {
    if (!P) return;
    ts_hpcg_level *L = P->A;
    while (L) {
        ts_hpcg_level *c = L->coarse;
        level_free(L);
        L = c;
    }
    free(P->b); free(P->x); free(P->xexact);
    free(P->r); free(P->z); free(P->p); free(P->Ap);
    free(P->diag_saved);
    free(P);
}

static int global_counts(const ts_comm *c, ts_hpcg_level *L) {
    double v[2] = {(double)L->nrow, (double)L->nnz};
    TS_CHECK(ts_comm_allreduce_d(c, v, 2, TS_COMM_SUM));
    L->gnrow = (int64_t)llround(v[0]);
    L->gnnz = (int64_t)llround(v[1]);
    return 0;
}

int ts_hpcg_problem_create(const ts_comm *comm, const ts_hpcg_geom *g, int levels, ts_hpcg_problem **out) {
    *out = NULL;
    if (levels < 1 || levels > TS_HPCG_MG_LEVELS)
        TS_RAISE(TS_ERR_ARG, "hpcg: %d multigrid levels; 1 to %d are possible", levels, TS_HPCG_MG_LEVELS);
    for (int l = 1; l < levels; l++) {
        int f = 1 << l;
        if (g->nx % f || g->ny % f || g->nz % f)
            TS_RAISE(TS_ERR_ARG, "hpcg: local grid %d x %d x %d cannot be halved %d times", g->nx, g->ny,
                     g->nz, levels - 1);
    }
    ts_hpcg_problem *P = calloc(1, sizeof *P);
    if (!P) TS_RAISE(TS_ERR_NOMEM, "hpcg: out of memory");
    P->comm = *comm;
    const size_t nr = (size_t)g->nx * g->ny * g->nz;
    P->b = malloc(sizeof(double) * nr);
    // xexact is an SpMV input, so it gets the halo too: it is resized once ncol is known.
    P->xexact = malloc(sizeof(double) * nr);
    int rc = 0;
    if (!P->b || !P->xexact) {
        rc = TS_ERROR(TS_ERR_NOMEM, "hpcg: out of memory for the vectors");
        goto fail;
    }
    // x0 = 0 is set once ncol (rows + halo) is known.
    TS_CHECK_GOTO(generate_level(g, &P->A, P->b, NULL, P->xexact), rc, fail);
    const size_t nc = (size_t)P->A->ncol;
    double *xe = realloc(P->xexact, sizeof(double) * nc);
    if (!xe) {
        rc = TS_ERROR(TS_ERR_NOMEM, "hpcg: out of memory for the vectors");
        goto fail;
    }
    P->xexact = xe;
    memset(xe + nr, 0, sizeof(double) * (nc - nr));
    P->x = calloc(nc, sizeof(double));
    P->r = calloc(nc, sizeof(double));
    P->z = calloc(nc, sizeof(double));
    P->p = calloc(nc, sizeof(double));
    P->Ap = calloc(nc, sizeof(double));
    if (!P->x || !P->r || !P->z || !P->p || !P->Ap) {
        rc = TS_ERROR(TS_ERR_NOMEM, "hpcg: out of memory for the CG vectors");
        goto fail;
    }
    TS_CHECK_GOTO(global_counts(comm, P->A), rc, fail);
    ts_hpcg_level *F = P->A;
    for (int l = 1; l < levels; l++) {
        ts_hpcg_geom cg = F->g;
        ts_hpcg_geom_halve(&cg);
        TS_CHECK_GOTO(generate_level(&cg, &F->coarse, NULL, NULL, NULL), rc, fail);
        ts_hpcg_level *C = F->coarse;
        TS_CHECK_GOTO(global_counts(comm, C), rc, fail);
        F->f2c = malloc(sizeof(int32_t) * (size_t)C->nrow);
        F->Axf = calloc((size_t)F->ncol, sizeof(double));
        F->rc = calloc((size_t)C->nrow, sizeof(double));
        F->xc = calloc((size_t)C->ncol, sizeof(double));
        if (!F->f2c || !F->Axf || !F->rc || !F->xc) {
            rc = TS_ERROR(TS_ERR_NOMEM, "hpcg: out of memory for multigrid level %d", l);
            goto fail;
        }
        // Injection: coarse point (i, j, k) is fine point (2i, 2j, 2k).
        for (int kz = 0; kz < cg.nz; kz++)
            for (int ky = 0; ky < cg.ny; ky++)
                for (int kx = 0; kx < cg.nx; kx++)
                    F->f2c[((int64_t)kz * cg.ny + ky) * cg.nx + kx] =
                        (int32_t)(((int64_t)2 * kz * F->g.ny + 2 * ky) * F->g.nx + 2 * kx);
        F->bytes += sizeof(int32_t) * (size_t)C->nrow + sizeof(double) * ((size_t)F->ncol + C->nrow + C->ncol);
        F = C;
    }
    // Every level's bytes plus the vectors.
    P->bytes = sizeof(double) * (nr + nc * 6);
    for (ts_hpcg_level *L = P->A; L; L = L->coarse) P->bytes += L->bytes;
    *out = P;
    return 0;
fail:
    ts_hpcg_problem_destroy(P);
    return rc;
}
