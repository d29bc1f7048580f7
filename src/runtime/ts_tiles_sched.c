// ts_tiles_sched.c: demand-driven task choice: cache-hit priority, reservation stations, tail stealing, CPU limit.
//
// Tasks are C tiles in column-major tile order. A device worker asks for its next task when it has
// room in its pipeline. It keeps a small reservation station (opts.reserve tasks claimed ahead of
// time, BLASX); it refills it from the shared pending queue with the tasks that score best on its
// cache (A tiles of the block row plus B tiles of the block column it already holds; ties go to the
// task nearest after its cursor, so that devices start in separate regions of C and stay there; for
// GEMM the starting tiles are the corners of a near-square grid of blocks, opts.grid, so that a
// device's region shares its panels of A with one neighbour and of B with another),
// and starts the best-scoring reserved task. When nothing is pending and its station is empty, it
// steals the best task from the fullest station of another device (a slow device's claims go to a
// fast one at the tail). The CPU worker takes pending tasks only: the ones the devices like least,
// from the end of the order, and never the last ones (see cpu_may_take).
#include "runtime/ts_tiles_internal.h"

#include "core/ts_timer.h"

#include <string.h>

static int score(const tl_call *c, int d, int t) {
    const tl_devcall *dc = &c->dc[d];
    if (c->l3) return tl_l3_score(c, d, t);
    return dc->rowcnt[t % c->mt] + dc->colcnt[t / c->mt];
}

// The chains (TRMM/TRSM) device d holds (a task of them reserved or running there) in held[];
// whether it may take up another one: fewer than its share of the chains among the live devices.
// Without this a device with a deep pipeline took every chain's head at the start and, forwarding
// each chain's next task to itself, kept them all while its peers idled.
static int chain_room(tl_call *c, int d) {
    const tl_l3 *L = c->l3;
    int live = c->rt->ndev - c->ndead, nheld = 0;
    memset(L->held, 0, (size_t)L->nchains);
    for (int t = 0; t < c->ntasks; t++) {
        int ch = L->tasks[t].chain;
        if (ch < 0 || c->owner[t] != d || (c->state[t] != TL_RUNNING && c->state[t] != TL_RESERVED)) continue;
        if (!L->held[ch]) L->held[ch] = 1, nheld++;
    }
    return live <= 1 || nheld < (L->nchains + live - 1) / live;
}

// GEMM: how far C tile t lies from the device's origin tile, as the side of the square (with
// wrap-around) grown from the origin that holds it. Among tasks that score alike the device takes
// the nearest, so its region of C grows as a square: a new row panel of A and a new column panel
// of B come in turns, each followed by tasks whose panels are all cached, and the loads spread
// over the call instead of the whole of A coming with the first column of C (column order).
// Level-3 tasks without chains (SYMM, SYRK, SYR2K and the complex ones) grow the same way from
// their origin's C tile (tl_l3_origin); the chains of TRMM/TRSM keep their column order.
static int64_t square_dist(const tl_call *c, const tl_devcall *dc, int t) {
    if (c->l3 && c->l3->nchains > 0) return 0;
    int64_t i0, j0, i, j;
    tl_task_tile(c, (int)dc->origin, &i0, &j0);
    tl_task_tile(c, t, &i, &j);
    int64_t di = (i - i0 + c->mt) % c->mt, dj = (j - j0 + c->nt) % c->nt;
    return di > dj ? di : dj;
}

// Best pending task for device d (score, then the square around its origin, then distance after
// the cursor); -1 if none. A level-3 task whose predecessor is not done yet is not pending in this
// sense.
static int pick_pending(tl_call *c, int d) {
    tl_devcall *dc = &c->dc[d];
    int best = -1, bs = -1;
    int64_t bdist = 0, bsq = 0;
    int room = c->l3 && c->l3->nchains > 0 ? chain_room(c, d) : 1;
    for (int t = 0; t < c->ntasks; t++) {
        if (c->state[t] != TL_PENDING) continue;
        if (c->l3 && !tl_l3_ready(c, t, d)) continue;
        if (!room && c->l3->tasks[t].chain >= 0 && !c->l3->held[c->l3->tasks[t].chain]) continue;
        int s = score(c, d, t);
        int64_t dist = ((int64_t)t - dc->cursor + c->ntasks) % c->ntasks, sq = square_dist(c, dc, t);
        if (s > bs || (s == bs && (sq < bsq || (sq == bsq && dist < bdist)))) best = t, bs = s, bdist = dist, bsq = sq;
    }
    if (best >= 0) dc->cursor = best + 1;
    return best;
}

// Removes and returns the best task of a reservation station for device d; -1 if none (a level-3
// task reserved by a device because its predecessor is in flight there may start only there).
static int take_reserved(tl_call *c, tl_devcall *from, int d) {
    int bi = -1, bs = -1;
    for (int r = 0; r < from->rs_count; r++) {
        if (c->l3 && !tl_l3_ready(c, from->rs[r], d)) continue;
        int s = score(c, d, from->rs[r]);
        if (s > bs) bi = r, bs = s;
    }
    if (bi < 0) return -1;
    int t = from->rs[bi];
    from->rs[bi] = from->rs[--from->rs_count];
    return t;
}

static void start(tl_call *c, int t, int owner) {
    if (c->state[t] == TL_PENDING) c->npending--;
    c->state[t] = TL_RUNNING;
    c->owner[t] = (signed char)owner;
    c->nunstarted--;
}

int tl_sched_next_dev(tl_call *c, int d) {
    tl_devcall *dc = &c->dc[d];
    int reserve = c->rt->opts.reserve;
    if (c->abort) return -1;
    while (dc->rs_count < reserve && c->npending > 0) {
        int t = pick_pending(c, d);
        if (t < 0) break; // pending tasks wait for their predecessors
        c->state[t] = TL_RESERVED;
        c->owner[t] = (signed char)d;
        c->npending--;
        dc->rs[dc->rs_count++] = t;
    }
    int t = take_reserved(c, dc, d);
    if (t < 0 && c->npending > 0) t = pick_pending(c, d);
    if (t < 0) { // steal from the fullest station (ties: the device that has done fewer tiles)
        int v = -1;
        for (int e = 0; e < c->rt->ndev; e++) {
            tl_devcall *de = &c->dc[e];
            if (e == d || de->rs_count == 0 || de->dead) continue;
            if (v < 0 || de->rs_count > c->dc[v].rs_count ||
                (de->rs_count == c->dc[v].rs_count && de->tiles_done < c->dc[v].tiles_done))
                v = e;
        }
        if (v >= 0) {
            t = take_reserved(c, &c->dc[v], d);
            dc->steals++;
        }
    }
    if (t >= 0) start(c, t, d);
    return t;
}

#define TL_CPU_MARGIN 2.0 // the CPU's tile must fit twice in the devices' time left

// Whether the CPU may take task t now. With a fraction: up to its cap. With auto: not the last
// tiles (a reserve of a few per device stays for the devices), and not when the devices at their
// measured rate would finish everything unstarted before the CPU finished t twice over (a CPU tile
// that ends after the devices' last one holds the whole call; one that ends just before gains
// little). Rates and work are in flops, so that the unequal tasks of the level-3 routines (a TRMM
// tile row near the bottom costs many times one near the top) are judged by their own cost.
// Adaptive: up to the share from the database, then by the auto rule (CALDGEMM's 2nd and 3rd phase:
// the CPU that finished early takes further tiles while it can still finish one before the devices
// are done; those count as CPU steals). With no live device (none, or all failed): everything.
static int cpu_may_take(tl_call *c, int t, int *steal) {
    int ndev = c->rt->ndev - c->ndead;
    *steal = 0;
    if (ndev == 0) return 1;
    if (c->cpu_cap >= 0 && !c->adaptive) return c->cpu_tiles < c->cpu_cap;
    if (c->adaptive && c->cpu_tiles < c->cpu_cap) return 1;
    int64_t keep = (int64_t)ndev * (c->depth + c->rt->opts.reserve);
    if (c->npending <= keep) return 0;
    // Not a task of a TRMM/TRSM chain: every later tile of its column waits for it, so a CPU tile
    // there delays the chain by the CPU's time, not only the tile (on 4 x H200 one TRSM tile at
    // 0.19 TFLOP/s held DTRSM at 0.77x the tile DGEMM).
    if (c->l3 && c->l3->tasks[t].chain >= 0) return 0;
    // The devices' rate counts from their first written-back tile: the time before it (pinning,
    // the first loads, filling the pipeline) is not their rate, and counting it made a GPU 100x
    // faster than the CPU look slow enough for the CPU to take a tile at the start of every call.
    double dev_flops = -c->dev_first_flops;
    for (int d = 0; d < c->rt->ndev; d++) dev_flops += c->dc[d].flops;
    double el = c->dev_t_first > 0 ? ts_now() - c->dev_t_first : 0;
    // the CPU's time for t from its rate (its own last tile in this or an earlier call, or the
    // probe at the runtime's first call)
    double cpu_tile = c->rt->cpu_flop_rate > 0 ? tl_task_flops(c, t) / c->rt->cpu_flop_rate : 0;
    if (cpu_tile > 0 && dev_flops > 0 && el > 0) {
        double left = 0; // flops of the unstarted tasks (pending and reserved)
        for (int u = 0; u < c->ntasks; u++)
            if (c->state[u] == TL_PENDING || c->state[u] == TL_RESERVED) left += tl_task_flops(c, u);
        double dev_left = left / (dev_flops / el);
        if (TL_CPU_MARGIN * cpu_tile > dev_left) return 0;
    } else if (c->adaptive || c->rt->cpu_flop_rate > 0) {
        // past its share, or the devices' rate not known yet: a CPU tile may take far longer than
        // everything the devices have left (one 4096 tile on a CPU against a GPU 100x faster)
        return 0;
    }
    *steal = c->adaptive;
    return 1;
}

int tl_sched_next_cpu(tl_call *c) {
    if (c->abort || c->npending == 0) return -1;
    int best = -1, bs = 0;
    for (int t = c->ntasks - 1; t >= 0; t--) {
        if (c->state[t] != TL_PENDING) continue;
        if (c->l3 && !tl_l3_ready(c, t, -1)) continue;
        int s = 0; // the devices' liking: the best score any device gives it
        for (int d = 0; d < c->rt->ndev; d++) {
            if (c->dc[d].dead) continue;
            int x = score(c, d, t);
            if (x > s) s = x;
        }
        if (best < 0 || s < bs) best = t, bs = s;
        if (s == 0) break;
    }
    int steal;
    if (best < 0 || !cpu_may_take(c, best, &steal)) return -1;
    start(c, best, -1);
    c->cpu_steals += steal;
    return best;
}

void tl_sched_done(tl_call *c, int task, int d) {
    (void)d;
    c->state[task] = TL_DONE;
    c->ndone++;
    pthread_cond_broadcast(&c->cond); // idle workers wait for the end of the call
}

void tl_sched_requeue(tl_call *c, int task, int rerun) {
    if (c->state[task] == TL_DONE || c->state[task] == TL_PENDING) return;
    int running = c->state[task] == TL_RUNNING;
    c->state[task] = TL_PENDING;
    c->owner[task] = -1;
    c->pub[task] = 0;
    c->npending++;
    if (running) c->nunstarted++; // reserved tasks are still counted as unstarted
    if (running && rerun) {
        c->reruns++;
        if (c->rerun) c->rerun[task] = 1;
    }
}
