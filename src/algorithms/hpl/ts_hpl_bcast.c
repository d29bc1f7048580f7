// ts_hpl_bcast.c: panel broadcast along the process row (HPL's 1rg, 1rM, 2rg, 2rM, Lng, LnM; MPI_Bcast).
//
// Rings: the root posts non-blocking sends; a receiving rank waits for the panel, then forwards it
// with non-blocking sends that are completed before the buffer is reused (nbuf panels later), so
// a root never waits for a busy neighbour. Long variants (spread then roll) are collective.
#include <stdlib.h>
#include <string.h>

#include "algorithms/hpl/ts_hpl_internal.h"
#include "core/ts_env.h"
#include "core/ts_error.h"

enum { TAG_RING = 100, TAG_SPREAD = 101, TAG_ROLL = 102 };

void ts_hpl_bcast_name(int bcast, char out[16]) {
    static const char *names[] = {"1rg", "1rM", "2rg", "2rM", "Lng", "LnM"};
    strcpy(out, bcast >= 0 && bcast < 6 ? names[bcast] : "mpi");
}

int ts_hpl_panel_wait_sends(ts_hpl_state *s, ts_hpl_panel *p) {
    int rc = ts_comm_waitall(p->nsreq, p->sreq);
    p->nsreq = 0;
    return ts_hpl_fail(s, rc);
}

// Source and destinations (relative ranks) of relative rank r in the ring variants.
static int ring_links(int bcast, int Q, int r, int *src, int dst[3]) {
    int nd = 0;
    *src = -1;
    switch (bcast) {
    case 0: // 1rg: 0 -> 1 -> 2 -> ...
        if (r > 0) *src = r - 1;
        if (r + 1 < Q) dst[nd++] = r + 1;
        break;
    case 1: // 1rM: the next rank (next panel's owner) is served first and does not forward
        if (r == 0) {
            dst[nd++] = 1;
            if (Q > 2) dst[nd++] = 2;
        } else if (r == 1) {
            *src = 0;
        } else {
            *src = r == 2 ? 0 : r - 1;
            if (r + 1 < Q) dst[nd++] = r + 1;
        }
        break;
    case 2:   // 2rg: two rings 1..h and h+1..Q-1
    case 3: { // 2rM: 1 first, then two rings over 2..Q-1
        int first = bcast == 2 ? 1 : 2;
        int n = Q - first;                 // ranks in the two rings
        int h = first + (n + 1) / 2;       // first rank of the second ring
        if (r == 0) {
            if (bcast == 3 && Q > 1) dst[nd++] = 1;
            if (first < Q) dst[nd++] = first;
            if (h < Q && h != first) dst[nd++] = h;
        } else if (bcast == 3 && r == 1) {
            *src = 0;
        } else {
            int start = r < h ? first : h, end = r < h ? h : Q;
            *src = r == start ? 0 : r - 1;
            if (r + 1 < end) dst[nd++] = r + 1;
        }
        break;
    }
    }
    return nd;
}

static int to_rank(int root, int r, int Q) { return (root + r) % Q; }

// Spread then roll among the relative ranks part[0..n) (part[0] = 0, the root).
static int spread_roll(ts_hpl_state *s, ts_hpl_panel *p, const int *part, int n, int me) {
    int Q = s->Q, root = p->root;
    int64_t L = p->len;
#define PIECE0(i) ((L * (int64_t)(i)) / n)
    int rc = 0;
    ts_comm_req *rq = NULL;
    int nrq = 0;
    if (me == 0) {
        rq = malloc((size_t)n * sizeof(*rq));
        if (!rq) TS_RAISE(TS_ERR_NOMEM, "broadcast requests");
        for (int i = 1; i < n && rc == 0; i++)
            rc = ts_comm_isend(&s->row, p->buf + PIECE0(i), PIECE0(i + 1) - PIECE0(i),
                               to_rank(root, part[i], Q), TAG_SPREAD, &rq[nrq++]);
    } else {
        rc = ts_comm_recv(&s->row, p->buf + PIECE0(me), PIECE0(me + 1) - PIECE0(me),
                          to_rank(root, part[0], Q), TAG_SPREAD);
    }
    int next = to_rank(root, part[(me + 1) % n], Q), prev = to_rank(root, part[(me + n - 1) % n], Q);
    for (int t = 0; t < n - 1 && rc == 0; t++) {
        int sp = ((me - t) % n + n) % n, rp = ((me - t - 1) % n + n) % n;
        rc = ts_comm_sendrecv(&s->row, p->buf + PIECE0(sp), PIECE0(sp + 1) - PIECE0(sp), next,
                              p->buf + PIECE0(rp), PIECE0(rp + 1) - PIECE0(rp), prev, TAG_ROLL);
    }
#undef PIECE0
    if (nrq) { // every piece was needed by the roll, so these are complete or nearly so
        int wrc = ts_comm_waitall(nrq, rq);
        if (rc == 0) rc = wrc;
    }
    free(rq);
    return rc;
}

int ts_hpl_bcast(ts_hpl_state *s, ts_hpl_panel *p) {
    int Q = s->Q, root = p->root;
    int bcast = s->hc->bcast;
    int use_mpi = 0;
    if (ts_env_bool("TESSERA_HPL_MPI_BCAST", &use_mpi) < 0) use_mpi = 0;
    if (use_mpi || bcast < 0 || bcast > 5) bcast = 6;
    ts_hpl_bcast_name(bcast, s->bcast_used);
    int rc = 0;
    if (Q > 1) {
        int r = (s->mycol - root + Q) % Q;
        if (bcast == 6) {
            rc = ts_comm_bcast(&s->row, p->buf, (size_t)p->len * sizeof(double), root);
        } else if (bcast <= 3) {
            int src, dst[3];
            int nd = ring_links(bcast, Q, r, &src, dst);
            if (src >= 0) rc = ts_comm_recv(&s->row, p->buf, p->len, to_rank(root, src, Q), TAG_RING);
            for (int i = 0; i < nd && rc == 0; i++)
                rc = ts_comm_isend(&s->row, p->buf, p->len, to_rank(root, dst[i], Q), TAG_RING,
                                   &p->sreq[p->nsreq++]);
        } else { // Lng, LnM
            int *part = malloc((size_t)Q * sizeof(int));
            int n = 0, me = -1;
            if (!part) return ts_hpl_fail(s, TS_ERROR(TS_ERR_NOMEM, "broadcast ranks"));
            if (bcast == 5) { // LnM: the next rank gets the whole panel first
                if (r == 0) rc = ts_comm_isend(&s->row, p->buf, p->len, to_rank(root, 1, Q), TAG_RING,
                                               &p->sreq[p->nsreq++]);
                else if (r == 1) rc = ts_comm_recv(&s->row, p->buf, p->len, root, TAG_RING);
            }
            for (int i = 0; i < Q; i++) {
                if (bcast == 5 && i == 1) continue;
                if (i == r) me = n;
                part[n++] = i;
            }
            if (rc == 0 && me >= 0 && n > 1) rc = spread_roll(s, p, part, n, me);
            free(part);
        }
    }
    if (rc == 0 && s->mycol != root) { // unpack pivots and info
        double *piv = p->buf + p->ldw * p->jb;
        for (int i = 0; i < p->jb; i++) p->ipiv[i] = (int64_t)piv[i];
        p->info = (int)piv[p->jb];
    }
    return ts_hpl_fail(s, rc);
}
