// ts_sim.c: simulated devices, the test double of a GPU: own memory, one worker thread per stream, pacing, faults.
#include "device/ts_device_impl.h"

#include "core/ts_error.h"
#include "core/ts_log.h"
#include "core/ts_timer.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

// Locking: one mutex per set guards every queue, stream, event and device-state field below; the
// workers drop it while they move bytes or run kernels. `cond` is broadcast whenever an operation
// completes, an event fires or a device is lost (sync waiters and event waiters all sleep on it);
// each stream has its own condition to wake its worker when work arrives.

typedef enum { OP_COPY, OP_PEER, OP_MEMSET, OP_KERNEL, OP_CALLBACK, OP_RECORD, OP_WAIT } op_kind;

typedef struct sim_dev sim_dev;

typedef struct sim_event {
    sim_dev *dev;
    int refs;                 // the ts_event plus every queued op that names it
    uint64_t rec_gen;         // records enqueued
    uint64_t done_gen;        // the latest record that has executed
    int err;                  // error the latest completed record carried (a failed stream)
    double t;                 // ts_now() when the latest record executed
} sim_event;

typedef struct op {
    struct op *next;
    op_kind kind;
    ts_copy_kind ckind;
    void *dst;
    const void *src;
    size_t dpitch, spitch, width, rows;
    sim_dev *dd, *sd;
    int value;
    ts_kernel k;
    void (*fn)(void *);
    void *arg;
    sim_event *ev;
    uint64_t gen;
    unsigned char args[];     // kernel arguments, copied at enqueue
} op;

typedef struct sim_stream {
    ts_stream *pub;
    sim_dev *dev;
    pthread_t thread;
    pthread_cond_t wake;
    op *head, *tail;
    long pending;             // queued, including the one executing
    int executing;
    int stop;
    int err;                  // sticky error (first one wins)
    char msg[512];
    int capturing;            // a graph capture: enqueue records operations instead of queueing them
    op *cap_head, *cap_tail;  // the operations recorded so far
    struct sim_stream *next;  // in the device's list
} sim_stream;

// A captured graph: the recorded operations, copied into the stream's queue at each launch.
typedef struct {
    op *head;
} sim_graph;

typedef struct {
    uintptr_t lo, hi;
} range;

typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    range *regs;              // host ranges registered as pinned (checks the registry's promise)
    int nregs, capregs;
} sim_set;

struct sim_dev {
    ts_device *pub;
    sim_set *ss;
    int ordinal;
    char *region;
    size_t region_bytes;
    double speed;
    double gflops, link_gbs;  // pacing (0 = unpaced)
    int peer;
    ts_sim_faults f;          // faults for this device (all zero when none)
    long n_ops, n_copies, n_kernels, n_d2h;
    int lost;
    double compute_free_at, h2d_free_at, d2h_free_at, p2p_free_at; // pacing: one engine of each kind
    sim_stream *streams;
};

static sim_set *set_of(ts_devset *s) { return s->impl; }
static sim_dev *dev_of(const ts_device *d) { return d->impl; }
static sim_stream *stream_of(ts_stream *st) { return st->impl; }

// Sets a sticky error on a stream (lock held); the first error stays.
static void stream_fail(sim_stream *ss, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void stream_fail(sim_stream *ss, int code, const char *fmt, ...) {
    if (ss->err) return;
    ss->err = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ss->msg, sizeof ss->msg, fmt, ap);
    va_end(ap);
}

// Raises a stream's sticky error in the calling thread (messages are thread-local).
static int raise_sticky(int code, const char *msg) {
    return ts_error_set(code, __FILE__, __LINE__, "%s", msg);
}

static void event_unref(sim_event *e) {
    if (--e->refs == 0) free(e);
}

// ---------------------------------------------------------------- pacing

static void abs_time(double t_now_target, struct timespec *ts) {
    // pthread_cond_timedwait uses CLOCK_REALTIME by default; convert a ts_now() deadline.
    double d = t_now_target - ts_now();
    if (d < 0) d = 0;
    clock_gettime(CLOCK_REALTIME, ts);
    double sec = floor(d);
    ts->tv_sec += (time_t)sec;
    ts->tv_nsec += (long)((d - sec) * 1e9);
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

// Reserves `seconds` on one engine of the device (lock held); returns the end time.
static double engine_reserve(double *free_at, double seconds) {
    double now = ts_now(), start = *free_at > now ? *free_at : now;
    *free_at = start + seconds;
    return *free_at;
}

// Sleeps until `until` (lock held) unless the device is lost first.
static void pace_until(sim_dev *d, double until) {
    sim_set *ss = d->ss;
    while (!d->lost && ts_now() < until) {
        struct timespec ts;
        abs_time(until, &ts);
        int rc = pthread_cond_timedwait(&ss->cond, &ss->lock, &ts);
        if (rc == ETIMEDOUT) continue;
    }
}

// ---------------------------------------------------------------- execution

static void copy_rows(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t rows) {
    if (dpitch == width && spitch == width) {
        memmove(dst, src, width * rows);
        return;
    }
    for (size_t r = 0; r < rows; r++) memmove((char *)dst + r * dpitch, (const char *)src + r * spitch, width);
}

// Flips one bit of the logical (packed) destination of a 2-D copy.
static void flip_bit(op *o, long bit) {
    size_t total = o->width * o->rows;
    size_t b = bit < 0 ? total * 4 : (size_t)bit % (total * 8);
    size_t byte = b / 8, row = byte / o->width, col = byte % o->width;
    unsigned char *p = (unsigned char *)o->dst + row * o->dpitch + col;
    *p ^= (unsigned char)(1u << (b % 8));
}

static double copy_seconds(const sim_dev *d, size_t bytes) {
    return d->link_gbs > 0 ? (double)bytes / (d->link_gbs * 1e9) : 0;
}

// Runs a copy (lock held on entry and exit, dropped while bytes move).
static void exec_copy(sim_stream *s, op *o) {
    sim_dev *d = s->dev;
    long n = ++d->n_copies;
    if (d->f.fail_copy && n == d->f.fail_copy) {
        stream_fail(s, TS_ERR_DEVICE, "sim device %d: injected failure of copy %ld", d->ordinal, n);
        return;
    }
    if (o->kind == OP_COPY && o->ckind == TS_COPY_D2H && d->f.tear_d2h && ++d->n_d2h == d->f.tear_d2h) {
        // half the rows arrive, then the device is gone
        size_t half = o->rows / 2;
        pthread_mutex_unlock(&d->ss->lock);
        copy_rows(o->dst, o->dpitch, o->src, o->spitch, o->width, half);
        pthread_mutex_lock(&d->ss->lock);
        stream_fail(s, TS_ERR_DEVICE, "sim device %d: injected tear of device-to-host copy %ld (%zu of %zu rows written)",
                    d->ordinal, d->n_d2h, half, o->rows);
        return;
    }
    int flip = d->f.flip_copy && n == d->f.flip_copy;
    size_t bytes = o->width * o->rows;
    double until = 0;
    if (o->kind == OP_PEER) {
        int staged = !(o->dd == o->sd || d->peer);
        until = engine_reserve(&d->p2p_free_at, copy_seconds(d, bytes) * (staged ? 2 : 1));
        pthread_mutex_unlock(&d->ss->lock);
        if (staged) {
            // No peer link: through host memory, as a real staged copy would go.
            char *tmp = malloc(bytes);
            if (tmp) {
                copy_rows(tmp, o->width, o->src, o->spitch, o->width, o->rows);
                copy_rows(o->dst, o->dpitch, tmp, o->width, o->width, o->rows);
                free(tmp);
            }
            pthread_mutex_lock(&d->ss->lock);
            if (!tmp) {
                stream_fail(s, TS_ERR_NOMEM, "sim device %d: no host memory to stage a %zu-byte peer copy", d->ordinal,
                            bytes);
                return;
            }
        } else {
            copy_rows(o->dst, o->dpitch, o->src, o->spitch, o->width, o->rows);
            pthread_mutex_lock(&d->ss->lock);
        }
    } else {
        double *eng = o->ckind == TS_COPY_H2D ? &d->h2d_free_at : o->ckind == TS_COPY_D2H ? &d->d2h_free_at : NULL;
        if (eng) until = engine_reserve(eng, copy_seconds(d, bytes));
        pthread_mutex_unlock(&d->ss->lock);
        copy_rows(o->dst, o->dpitch, o->src, o->spitch, o->width, o->rows);
        pthread_mutex_lock(&d->ss->lock);
    }
    if (flip) flip_bit(o, d->f.flip_bit);
    pace_until(d, until);
}

static void exec_kernel(sim_stream *s, op *o) {
    sim_dev *d = s->dev;
    long n = ++d->n_kernels;
    const char *name = o->k.name ? o->k.name : "(unnamed)";
    if (d->f.fail_kernel && n == d->f.fail_kernel) {
        stream_fail(s, TS_ERR_DEVICE, "sim device %d: injected failure of kernel %ld (%s)", d->ordinal, n, name);
        return;
    }
    double secs = d->gflops > 0 ? o->k.flops / (d->gflops * 1e9 * d->speed) : 0;
    double until = engine_reserve(&d->compute_free_at, secs);
    // The kernel runs when the engine gets to it (after earlier kernels of other streams), so its
    // results appear no earlier than a real device would show them.
    pace_until(d, until - secs);
    if (d->lost) {
        stream_fail(s, TS_ERR_DEVICE_LOST, "sim device %d is lost (injected after %ld operations)", d->ordinal,
                    d->f.lose_after);
        return;
    }
    pthread_mutex_unlock(&d->ss->lock);
    ts_error_clear();
    int rc = o->k.cpu(o->args);
    const ts_error_info *e = ts_error_last();
    pthread_mutex_lock(&d->ss->lock);
    if (rc < 0) {
        if (e->code == rc) stream_fail(s, rc, "sim device %d: kernel %s: %s", d->ordinal, name, e->message);
        else stream_fail(s, rc, "sim device %d: kernel %s failed (%s)", d->ordinal, name, ts_status_name(rc));
        return;
    }
    pace_until(d, until);
}

// Blocks the stream until the event's record has run (lock held).
static void exec_wait(sim_stream *s, op *o) {
    sim_set *ss = s->dev->ss;
    sim_event *e = o->ev;
    while (e->done_gen < o->gen && !e->dev->lost && !s->dev->lost) pthread_cond_wait(&ss->cond, &ss->lock);
    if (s->dev->lost) return; // reported by the caller's lost check
    if (e->done_gen < o->gen)
        stream_fail(s, TS_ERR_DEVICE_LOST, "sim device %d: waited on an event of sim device %d, which is lost",
                    s->dev->ordinal, e->dev->ordinal);
    else if (e->err)
        stream_fail(s, e->err, "sim device %d: waited on an event recorded after a failure (%s)", s->dev->ordinal,
                    ts_status_name(e->err));
}

static void complete_record(sim_stream *s, op *o) {
    sim_event *e = o->ev;
    e->t = ts_now();
    if (o->gen > e->done_gen) {
        e->done_gen = o->gen;
        e->err = s->err;
    }
}

// Executes the op at the head of the queue (lock held).
static void exec_op(sim_stream *s, op *o) {
    sim_dev *d = s->dev;
    if (!d->lost && !s->err) {
        d->n_ops++;
        if (d->f.lose_after && d->n_ops > d->f.lose_after) {
            d->lost = 1;
            pthread_cond_broadcast(&d->ss->cond);
            TS_LOG_D("sim device %d: lost after %ld operations (injected)", d->ordinal, d->f.lose_after);
        }
    }
    if (d->lost) stream_fail(s, TS_ERR_DEVICE_LOST, "sim device %d is lost (injected after %ld operations)", d->ordinal,
                             d->f.lose_after);
    if (s->err) {
        // Sticky: later work is skipped, but events still fire so nobody waits forever.
        if (o->kind == OP_RECORD) complete_record(s, o);
        return;
    }
    switch (o->kind) {
    case OP_COPY:
    case OP_PEER: exec_copy(s, o); break;
    case OP_MEMSET:
        pthread_mutex_unlock(&d->ss->lock);
        memset(o->dst, o->value, o->width);
        pthread_mutex_lock(&d->ss->lock);
        break;
    case OP_KERNEL: exec_kernel(s, o); break;
    case OP_CALLBACK:
        pthread_mutex_unlock(&d->ss->lock);
        o->fn(o->arg);
        pthread_mutex_lock(&d->ss->lock);
        break;
    case OP_RECORD: complete_record(s, o); break;
    case OP_WAIT: exec_wait(s, o); break;
    }
}

static void *worker(void *arg) {
    sim_stream *s = arg;
    sim_set *ss = s->dev->ss;
    pthread_mutex_lock(&ss->lock);
    for (;;) {
        while (!s->head && !s->stop) pthread_cond_wait(&s->wake, &ss->lock);
        if (!s->head) break;
        op *o = s->head;
        s->executing = 1;
        exec_op(s, o);
        s->head = o->next;
        if (!s->head) s->tail = NULL;
        s->pending--;
        s->executing = 0;
        if (o->ev) event_unref(o->ev);
        free(o);
        pthread_cond_broadcast(&ss->cond);
    }
    pthread_mutex_unlock(&ss->lock);
    return NULL;
}

// ---------------------------------------------------------------- enqueue

static op *op_new(op_kind kind, size_t extra) {
    op *o = calloc(1, sizeof *o + extra);
    if (!o) ts_error_set(TS_ERR_NOMEM, __FILE__, __LINE__, "sim: out of host memory for a queued operation");
    else o->kind = kind;
    return o;
}

// What a graph cannot replay: work that meets the host, and events (NULL: it can).
static const char *not_replayable(const op *o) {
    switch (o->kind) {
    case OP_COPY:
        return o->ckind == TS_COPY_H2D ? "a host-to-device copy" : o->ckind == TS_COPY_D2H ? "a device-to-host copy" : NULL;
    case OP_CALLBACK: return "a host callback";
    case OP_RECORD: return "an event record";
    case OP_WAIT: return "an event wait";
    default: return NULL;
    }
}

static void free_ops(op *o) {
    while (o) {
        op *next = o->next;
        free(o);
        o = next;
    }
}

static int enqueue(ts_stream *st, op *o) {
    sim_stream *s = stream_of(st);
    sim_set *ss = s->dev->ss;
    pthread_mutex_lock(&ss->lock);
    const char *refused = s->capturing ? not_replayable(o) : NULL;
    if (s->dev->lost || refused) {
        if (o->ev) event_unref(o->ev);
        pthread_mutex_unlock(&ss->lock);
        free(o);
        if (refused)
            TS_RAISE(TS_ERR_UNSUPPORTED, "sim device %d: %s cannot be captured in a graph (kernels, memsets and "
                     "device-to-device copies can)", s->dev->ordinal, refused);
        TS_RAISE(TS_ERR_DEVICE_LOST, "sim device %d is lost", s->dev->ordinal);
    }
    if (s->capturing) { // recorded, not run: a launch of the graph queues a copy
        if (s->cap_tail) s->cap_tail->next = o;
        else s->cap_head = o;
        s->cap_tail = o;
        pthread_mutex_unlock(&ss->lock);
        return 0;
    }
    if (o->kind == OP_RECORD) o->gen = ++o->ev->rec_gen;
    if (o->kind == OP_WAIT) o->gen = o->ev->rec_gen;
    if (s->tail) s->tail->next = o;
    else s->head = o;
    s->tail = o;
    s->pending++;
    pthread_cond_signal(&s->wake);
    pthread_mutex_unlock(&ss->lock);
    return 0;
}

static size_t extent_2d(size_t pitch, size_t width, size_t rows) { return (rows - 1) * pitch + width; }

static int in_dev(const sim_dev *d, const void *p, size_t n) {
    uintptr_t a = (uintptr_t)p, lo = (uintptr_t)d->region;
    return a >= lo && a - lo <= d->region_bytes && n <= d->region_bytes - (a - lo);
}

// The device whose memory overlaps [p, p+n), or NULL: host pointers must not point there.
static const sim_dev *any_dev(ts_devset *s, const void *p, size_t n) {
    uintptr_t a = (uintptr_t)p;
    for (int i = 0; i < s->count; i++) {
        const sim_dev *d = dev_of(s->devices[i]);
        uintptr_t lo = (uintptr_t)d->region, hi = lo + d->region_bytes;
        if (a < hi && a + n > lo) return d;
    }
    return NULL;
}

static int check_dev_ptr(const sim_dev *d, const char *what, const void *p, size_t n) {
    if (!in_dev(d, p, n))
        TS_RAISE(TS_ERR_ARG, "sim device %d: %s %p (%zu bytes) is not memory of this device", d->ordinal, what, p, n);
    return 0;
}

static int check_host_ptr(ts_devset *s, const sim_dev *d, const char *what, const void *p, size_t n) {
    const sim_dev *o = any_dev(s, p, n);
    if (o) TS_RAISE(TS_ERR_ARG, "sim device %d: %s %p (%zu bytes) is device memory (of sim device %d), not host memory",
                    d->ordinal, what, p, n, o->ordinal);
    return 0;
}

static int sim_copy2d(ts_stream *st, ts_copy_kind kind, void *dst, size_t dpitch, const void *src, size_t spitch,
                      size_t width, size_t rows) {
    sim_dev *d = stream_of(st)->dev;
    ts_devset *set = st->dev->set;
    size_t dn = extent_2d(dpitch, width, rows), sn = extent_2d(spitch, width, rows);
    if (kind == TS_COPY_H2D) {
        TS_CHECK(check_dev_ptr(d, "H2D copy destination", dst, dn));
        TS_CHECK(check_host_ptr(set, d, "H2D copy source", src, sn));
    } else if (kind == TS_COPY_D2H) {
        TS_CHECK(check_dev_ptr(d, "D2H copy source", src, sn));
        TS_CHECK(check_host_ptr(set, d, "D2H copy destination", dst, dn));
    } else {
        TS_CHECK(check_dev_ptr(d, "D2D copy destination", dst, dn));
        TS_CHECK(check_dev_ptr(d, "D2D copy source", src, sn));
    }
    op *o = op_new(OP_COPY, 0);
    if (!o) return TS_ERR_NOMEM;
    o->ckind = kind;
    o->dst = dst, o->dpitch = dpitch, o->src = src, o->spitch = spitch, o->width = width, o->rows = rows;
    return enqueue(st, o);
}

static int sim_copy_peer2d(ts_stream *st, ts_device *dd, void *dst, size_t dpitch, ts_device *sd, const void *src,
                           size_t spitch, size_t width, size_t rows) {
    TS_CHECK(check_dev_ptr(dev_of(dd), "peer copy destination", dst, extent_2d(dpitch, width, rows)));
    TS_CHECK(check_dev_ptr(dev_of(sd), "peer copy source", src, extent_2d(spitch, width, rows)));
    op *o = op_new(OP_PEER, 0);
    if (!o) return TS_ERR_NOMEM;
    o->dd = dev_of(dd), o->sd = dev_of(sd);
    o->dst = dst, o->dpitch = dpitch, o->src = src, o->spitch = spitch, o->width = width, o->rows = rows;
    return enqueue(st, o);
}

static int sim_memset(ts_stream *st, void *dst, int value, size_t bytes) {
    TS_CHECK(check_dev_ptr(stream_of(st)->dev, "memset destination", dst, bytes));
    op *o = op_new(OP_MEMSET, 0);
    if (!o) return TS_ERR_NOMEM;
    o->dst = dst, o->value = value, o->width = bytes, o->rows = 1;
    return enqueue(st, o);
}

static int sim_host_callback(ts_stream *st, void (*fn)(void *), void *arg) {
    op *o = op_new(OP_CALLBACK, 0);
    if (!o) return TS_ERR_NOMEM;
    o->fn = fn, o->arg = arg;
    return enqueue(st, o);
}

static int sim_kernel(ts_stream *st, const ts_kernel *k) {
    if (!k->cpu)
        TS_RAISE(TS_ERR_UNSUPPORTED, "sim device %d: kernel %s has no CPU implementation", st->dev->props.ordinal,
                 k->name ? k->name : "(unnamed)");
    op *o = op_new(OP_KERNEL, k->args_size);
    if (!o) return TS_ERR_NOMEM;
    o->k = *k;
    if (k->args_size) memcpy(o->args, k->args, k->args_size);
    o->k.args = o->args;
    return enqueue(st, o);
}

// ---------------------------------------------------------------- streams

static int sim_stream_create(ts_stream *st) {
    sim_dev *d = dev_of(st->dev);
    sim_stream *s = calloc(1, sizeof *s);
    if (!s) TS_RAISE(TS_ERR_NOMEM, "sim device %d: out of host memory for a stream", d->ordinal);
    s->pub = st;
    s->dev = d;
    pthread_cond_init(&s->wake, NULL);
    int e = pthread_create(&s->thread, NULL, worker, s);
    if (e) {
        pthread_cond_destroy(&s->wake);
        free(s);
        TS_RAISE(TS_ERR_STATE, "sim device %d: cannot start a stream worker thread (%s)", d->ordinal, strerror(e));
    }
    pthread_mutex_lock(&d->ss->lock);
    s->next = d->streams;
    d->streams = s;
    pthread_mutex_unlock(&d->ss->lock);
    st->impl = s;
    return 0;
}

// Stops and frees a stream's worker after its queue drained (lock not held).
static void stream_stop(sim_stream *s) {
    sim_set *ss = s->dev->ss;
    pthread_mutex_lock(&ss->lock);
    s->stop = 1;
    pthread_cond_signal(&s->wake);
    for (sim_stream **pp = &s->dev->streams; *pp; pp = &(*pp)->next)
        if (*pp == s) {
            *pp = s->next;
            break;
        }
    pthread_mutex_unlock(&ss->lock);
    pthread_join(s->thread, NULL);
    pthread_cond_destroy(&s->wake);
    free_ops(s->cap_head);
    free(s);
}

static int sim_stream_destroy(ts_stream *st) {
    stream_stop(stream_of(st));
    st->impl = NULL;
    return 0;
}

// Whether the stream is idle, or its device lost with nothing running (lock held).
static int stream_settled(const sim_stream *s) { return s->pending == 0 || (s->dev->lost && !s->executing); }

static int stream_result(sim_stream *s) {
    if (s->dev->lost && !s->err)
        stream_fail(s, TS_ERR_DEVICE_LOST, "sim device %d is lost (injected after %ld operations)", s->dev->ordinal,
                    s->dev->f.lose_after);
    return s->err;
}

static int sim_stream_sync(ts_stream *st) {
    sim_stream *s = stream_of(st);
    sim_set *ss = s->dev->ss;
    char msg[512];
    pthread_mutex_lock(&ss->lock);
    while (!stream_settled(s)) pthread_cond_wait(&ss->cond, &ss->lock);
    int rc = stream_result(s);
    memcpy(msg, s->msg, sizeof msg);
    pthread_mutex_unlock(&ss->lock);
    return rc ? raise_sticky(rc, msg) : 0;
}

static int sim_stream_error(ts_stream *st) {
    sim_stream *s = stream_of(st);
    sim_set *ss = s->dev->ss;
    char msg[512];
    pthread_mutex_lock(&ss->lock);
    int rc = stream_result(s);
    memcpy(msg, s->msg, sizeof msg);
    pthread_mutex_unlock(&ss->lock);
    return rc ? raise_sticky(rc, msg) : 0;
}

static void *sim_stream_native(ts_stream *st) { return NULL; }

static int sim_device_sync(ts_device *pd) {
    sim_dev *d = dev_of(pd);
    sim_set *ss = d->ss;
    char msg[512] = "";
    int rc = 0;
    pthread_mutex_lock(&ss->lock);
    for (;;) {
        int busy = 0;
        for (sim_stream *s = d->streams; s; s = s->next) busy |= !stream_settled(s);
        if (!busy) break;
        pthread_cond_wait(&ss->cond, &ss->lock);
    }
    for (sim_stream *s = d->streams; s && !rc; s = s->next)
        if ((rc = stream_result(s))) memcpy(msg, s->msg, sizeof msg);
    if (!rc && d->lost) {
        rc = TS_ERR_DEVICE_LOST;
        snprintf(msg, sizeof msg, "sim device %d is lost", d->ordinal);
    }
    pthread_mutex_unlock(&ss->lock);
    return rc ? raise_sticky(rc, msg) : 0;
}

// ---------------------------------------------------------------- events

static int sim_event_create(ts_event *ev) {
    sim_event *e = calloc(1, sizeof *e);
    if (!e) TS_RAISE(TS_ERR_NOMEM, "sim: out of host memory for an event");
    e->dev = dev_of(ev->dev);
    e->refs = 1;
    ev->impl = e;
    return 0;
}

static int sim_event_destroy(ts_event *ev) {
    sim_event *e = ev->impl;
    sim_set *ss = e->dev->ss;
    // Queued records and waits keep their own reference, as CUDA lets an event go while in use.
    pthread_mutex_lock(&ss->lock);
    event_unref(e);
    pthread_mutex_unlock(&ss->lock);
    ev->impl = NULL;
    return 0;
}

// A record or a wait of event ev queued on st; the operation holds a reference to the event.
static int enqueue_event_op(ts_stream *st, ts_event *ev, op_kind kind) {
    sim_event *e = ev->impl;
    op *o = op_new(kind, 0);
    if (!o) return TS_ERR_NOMEM;
    pthread_mutex_lock(&e->dev->ss->lock);
    e->refs++;
    pthread_mutex_unlock(&e->dev->ss->lock);
    o->ev = e;
    return enqueue(st, o);
}

static int sim_event_record(ts_event *ev, ts_stream *st) { return enqueue_event_op(st, ev, OP_RECORD); }

static int sim_stream_wait_event(ts_stream *st, ts_event *ev) { return enqueue_event_op(st, ev, OP_WAIT); }

// 1 complete, 0 pending, or a negative status (lock held); fills msg on error.
static int event_state(sim_event *e, uint64_t gen, char *msg, size_t len) {
    if (e->done_gen >= gen) {
        if (e->err) snprintf(msg, len, "sim device %d: event recorded on a failed stream (%s)", e->dev->ordinal,
                             ts_status_name(e->err));
        return e->err ? e->err : 1;
    }
    if (e->dev->lost) {
        snprintf(msg, len, "sim device %d is lost: the event will never complete", e->dev->ordinal);
        return TS_ERR_DEVICE_LOST;
    }
    return 0;
}

static int sim_event_sync(ts_event *ev) {
    sim_event *e = ev->impl;
    sim_set *ss = e->dev->ss;
    char msg[256];
    pthread_mutex_lock(&ss->lock);
    uint64_t gen = e->rec_gen;
    int st;
    while ((st = event_state(e, gen, msg, sizeof msg)) == 0) pthread_cond_wait(&ss->cond, &ss->lock);
    pthread_mutex_unlock(&ss->lock);
    return st < 0 ? raise_sticky(st, msg) : 0;
}

static int sim_event_query(ts_event *ev) {
    sim_event *e = ev->impl;
    sim_set *ss = e->dev->ss;
    char msg[256];
    pthread_mutex_lock(&ss->lock);
    int st = event_state(e, e->rec_gen, msg, sizeof msg);
    pthread_mutex_unlock(&ss->lock);
    return st < 0 ? raise_sticky(st, msg) : st;
}

static int sim_event_elapsed_ms(ts_event *a, ts_event *b, double *ms) {
    sim_event *x = a->impl, *y = b->impl;
    sim_set *ss = x->dev->ss;
    pthread_mutex_lock(&ss->lock);
    int ready = x->rec_gen && y->rec_gen && x->done_gen == x->rec_gen && y->done_gen == y->rec_gen;
    double t = (y->t - x->t) * 1e3;
    pthread_mutex_unlock(&ss->lock);
    if (!ready) TS_RAISE(TS_ERR_STATE, "ts_event_elapsed_ms: an event is not recorded or not complete yet");
    *ms = t;
    return 0;
}

// ---------------------------------------------------------------- graphs

static int sim_capture_begin(ts_stream *st) {
    sim_stream *s = stream_of(st);
    pthread_mutex_lock(&s->dev->ss->lock);
    s->capturing = 1;
    s->cap_head = s->cap_tail = NULL;
    pthread_mutex_unlock(&s->dev->ss->lock);
    return 0;
}

static int sim_capture_end(ts_stream *st, void **graph) {
    sim_stream *s = stream_of(st);
    *graph = NULL;
    sim_graph *g = calloc(1, sizeof *g);
    pthread_mutex_lock(&s->dev->ss->lock);
    op *head = s->cap_head;
    s->capturing = 0;
    s->cap_head = s->cap_tail = NULL;
    pthread_mutex_unlock(&s->dev->ss->lock);
    if (!g) {
        free_ops(head);
        TS_RAISE(TS_ERR_NOMEM, "sim device %d: out of host memory for a graph", s->dev->ordinal);
    }
    g->head = head;
    *graph = g;
    return 0;
}

// Queues a copy of every recorded operation, kernel arguments included, in the recorded order.
static int sim_graph_launch(ts_stream *st, void *graph) {
    const sim_graph *g = graph;
    for (const op *o = g->head; o; o = o->next) {
        const size_t extra = o->kind == OP_KERNEL ? o->k.args_size : 0;
        op *c = op_new(o->kind, extra);
        if (!c) return TS_ERR_NOMEM;
        *c = *o;
        c->next = NULL;
        if (o->kind == OP_KERNEL) {
            if (extra) memcpy(c->args, o->args, extra);
            c->k.args = c->args;
        }
        TS_CHECK(enqueue(st, c));
    }
    return 0;
}

static void sim_graph_destroy(ts_device *d, void *graph) {
    sim_graph *g = graph;
    if (!g) return;
    free_ops(g->head);
    free(g);
}

// ---------------------------------------------------------------- host memory

static int sim_host_register(void *ctx, void *p, size_t n) {
    ts_devset *s = ctx;
    sim_set *ss = set_of(s);
    uintptr_t lo = (uintptr_t)p, hi = lo + n;
    if ((lo | n) & 4095) TS_RAISE(TS_ERR_ARG, "sim: host register of %p (%zu bytes) is not page-aligned", p, n);
    pthread_mutex_lock(&ss->lock);
    for (int i = 0; i < ss->nregs; i++)
        if (lo < ss->regs[i].hi && hi > ss->regs[i].lo) {
            pthread_mutex_unlock(&ss->lock);
            // As cudaHostRegister: overlapping an existing registration is an error.
            TS_RAISE(TS_ERR_ARG, "sim: host range %p (%zu bytes) is already registered", p, n);
        }
    if (ss->nregs == ss->capregs) {
        int cap = ss->capregs ? ss->capregs * 2 : 16;
        range *r = realloc(ss->regs, (size_t)cap * sizeof *r);
        if (!r) {
            pthread_mutex_unlock(&ss->lock);
            TS_RAISE(TS_ERR_NOMEM, "sim: out of host memory");
        }
        ss->regs = r;
        ss->capregs = cap;
    }
    ss->regs[ss->nregs++] = (range){lo, hi};
    pthread_mutex_unlock(&ss->lock);
    return 0;
}

static int sim_host_unregister(void *ctx, void *p, size_t n) {
    sim_set *ss = set_of((ts_devset *)ctx);
    uintptr_t lo = (uintptr_t)p;
    pthread_mutex_lock(&ss->lock);
    for (int i = 0; i < ss->nregs; i++)
        if (ss->regs[i].lo == lo) {
            int exact = ss->regs[i].hi == lo + n;
            ss->regs[i] = ss->regs[--ss->nregs];
            pthread_mutex_unlock(&ss->lock);
            if (!exact) TS_RAISE(TS_ERR_ARG, "sim: host unregister of %p with %zu bytes, registered with another size", p, n);
            return 0;
        }
    pthread_mutex_unlock(&ss->lock);
    TS_RAISE(TS_ERR_ARG, "sim: host unregister of %p, which is not registered", p);
}

static int sim_host_alloc(ts_devset *s, size_t n, void **p) {
    if (posix_memalign(p, 4096, n) != 0) {
        *p = NULL;
        TS_RAISE(TS_ERR_NOMEM, "sim: cannot allocate %zu bytes of host memory", n);
    }
    return 0;
}

static void sim_host_free(ts_devset *s, void *p) { free(p); }

static int sim_can_peer(const ts_device *a, const ts_device *b) { return dev_of(a)->peer; }

// ---------------------------------------------------------------- the set

static void sim_close(ts_devset *s) {
    sim_set *ss = set_of(s);
    for (int i = 0; i < TS_MAX_DEVICES; i++) {
        ts_device *pd = s->devices[i];
        if (!pd || !pd->impl) continue;
        sim_dev *d = pd->impl;
        // Streams the caller left open: stop their workers so nothing touches freed memory.
        while (d->streams) {
            TS_LOG_W("sim device %d: a stream was not destroyed before close", d->ordinal);
            sim_stream *st = d->streams;
            if (st->pub) st->pub->impl = NULL;
            stream_stop(st);
        }
        free(d->region);
        free(d);
        pd->impl = NULL;
        pd->arena_base = NULL;
    }
    if (ss) {
        pthread_mutex_destroy(&ss->lock);
        pthread_cond_destroy(&ss->cond);
        free(ss->regs);
        free(ss);
        s->impl = NULL;
    }
}

static int sim_open(ts_devset *s) {
    const ts_devset_opts *o = &s->opts;
    int n = o->sim_devices;
    if (o->max_devices > 0 && n > o->max_devices) n = o->max_devices;
    sim_set *ss = calloc(1, sizeof *ss);
    if (!ss) TS_RAISE(TS_ERR_NOMEM, "sim: out of host memory");
    pthread_mutex_init(&ss->lock, NULL);
    pthread_cond_init(&ss->cond, NULL);
    s->impl = ss;
    size_t bytes = o->sim_mem_bytes;
    if (o->arena_bytes > 0 && o->arena_bytes < bytes) bytes = o->arena_bytes;
    for (int i = 0; i < n; i++) {
        ts_device *pd = ts_device_new(s, i);
        if (!pd) return ts_error_last()->code ? ts_error_last()->code : TS_ERR_NOMEM;
        s->count = i + 1;
        sim_dev *d = calloc(1, sizeof *d);
        if (!d) TS_RAISE(TS_ERR_NOMEM, "sim: out of host memory for device %d", i);
        pd->impl = d;
        d->pub = pd;
        d->ss = ss;
        d->ordinal = i;
        d->speed = o->sim_speeds[i] > 0 ? o->sim_speeds[i] : 1.0;
        d->gflops = o->sim_gflops;
        d->link_gbs = o->sim_link_gbs;
        d->peer = o->sim_peer ? 1 : 0;
        if (o->faults.device < 0 || o->faults.device == i) d->f = o->faults;
        if (posix_memalign((void **)&d->region, 4096, bytes) != 0) {
            d->region = NULL;
            TS_RAISE(TS_ERR_NOMEM, "sim device %d: cannot allocate %zu bytes of simulated device memory", i, bytes);
        }
        d->region_bytes = bytes;
        ts_device_props *p = &pd->props;
        snprintf(p->name, sizeof p->name, "Tessera simulated device %d", i);
        snprintf(p->bus_id, sizeof p->bus_id, "sim:%d", i);
        p->native_id = i;
        p->host_mapped = !o->sim_unmapped;
        p->mem_total = o->sim_mem_bytes;
        p->arena_bytes = bytes;
        p->sms = 1;
        p->clock_mhz = 0;
        p->mem_bw_gbs = 0;
        p->rel_speed = d->speed;
        pd->arena_base = d->region;
    }
    return 0;
}

static const ts_backend_ops sim_ops = {
    .name = "sim",
    .open = sim_open,
    .close = sim_close,
    .host_register = sim_host_register,
    .host_unregister = sim_host_unregister,
    .host_alloc = sim_host_alloc,
    .host_free = sim_host_free,
    .device_sync = sim_device_sync,
    .stream_create = sim_stream_create,
    .stream_destroy = sim_stream_destroy,
    .stream_sync = sim_stream_sync,
    .stream_error = sim_stream_error,
    .stream_native = sim_stream_native,
    .event_create = sim_event_create,
    .event_destroy = sim_event_destroy,
    .event_record = sim_event_record,
    .stream_wait_event = sim_stream_wait_event,
    .event_sync = sim_event_sync,
    .event_query = sim_event_query,
    .event_elapsed_ms = sim_event_elapsed_ms,
    .copy2d = sim_copy2d,
    .copy_peer2d = sim_copy_peer2d,
    .memset = sim_memset,
    .host_callback = sim_host_callback,
    .kernel = sim_kernel,
    .can_peer = sim_can_peer,
    .capture_begin = sim_capture_begin,
    .capture_end = sim_capture_end,
    .graph_launch = sim_graph_launch,
    .graph_destroy = sim_graph_destroy,
};

const ts_backend_ops *ts_sim_backend_ops(void) { return &sim_ops; }
