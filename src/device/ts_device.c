// ts_device.c: the public device API: options, opening a backend, arenas, pins, validation, counters.
#include "device/ts_device_impl.h"

#include "core/ts_env.h"
#include "core/ts_error.h"
#include "core/ts_log.h"
#include "ts_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if TS_HAVE_CUDA
#include <dirent.h>
#endif

#define TS_DEVICE_ALIGN 256

#if !TS_HAVE_CUDA
int ts_cuda_available(void) { return 0; }
int ts_cuda_device_count(void) { return 0; }
const ts_backend_ops *ts_cuda_backend_ops(void) { return NULL; }
#endif

const char *ts_backend_name(ts_backend b) {
    switch (b) {
    case TS_BACKEND_AUTO: return "auto";
    case TS_BACKEND_CUDA: return "cuda";
    case TS_BACKEND_SIM: return "sim";
    case TS_BACKEND_NONE: return "none";
    }
    return "unknown";
}

// ---------------------------------------------------------------- options

int ts_sim_faults_parse(const char *spec, ts_sim_faults *f) {
    if (!f) TS_RAISE(TS_ERR_ARG, "ts_sim_faults_parse: NULL result");
    ts_sim_faults r = {.device = -1, .flip_bit = -1};
    if (spec) {
        char buf[512];
        if (strlen(spec) >= sizeof buf) TS_RAISE(TS_ERR_PARSE, "TESSERA_SIM_FAULTS: value too long");
        strcpy(buf, spec);
        char *save = NULL;
        for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            while (*tok == ' ') tok++;
            if (!*tok) continue;
            char *eq = strchr(tok, '=');
            if (!eq)
                TS_RAISE(TS_ERR_PARSE, "TESSERA_SIM_FAULTS: '%s' is not key=value (keys: dev, copy, kernel, flip, bit, lose, tear)",
                         tok);
            *eq = 0;
            const char *key = tok, *val = eq + 1;
            int64_t v;
            char what[64];
            snprintf(what, sizeof what, "TESSERA_SIM_FAULTS %s", key);
            TS_CHECK(ts_parse_i64(val, what, &v));
            long *dst = NULL;
            if (!strcmp(key, "dev") || !strcmp(key, "device")) {
                if (v < -1 || v >= TS_MAX_DEVICES)
                    TS_RAISE(TS_ERR_PARSE, "TESSERA_SIM_FAULTS: dev=%lld out of range -1..%d", (long long)v,
                             TS_MAX_DEVICES - 1);
                r.device = (int)v;
                continue;
            } else if (!strcmp(key, "copy")) dst = &r.fail_copy;
            else if (!strcmp(key, "kernel")) dst = &r.fail_kernel;
            else if (!strcmp(key, "flip")) dst = &r.flip_copy;
            else if (!strcmp(key, "bit")) dst = &r.flip_bit;
            else if (!strcmp(key, "lose")) dst = &r.lose_after;
            else if (!strcmp(key, "tear")) dst = &r.tear_d2h;
            else
                TS_RAISE(TS_ERR_PARSE,
                         "TESSERA_SIM_FAULTS: unknown key '%s' (keys: dev, copy, kernel, flip, bit, lose, tear)", key);
            if (v < (dst == &r.flip_bit ? -1 : 0))
                TS_RAISE(TS_ERR_PARSE, "TESSERA_SIM_FAULTS: %s=%lld must not be negative", key, (long long)v);
            *dst = (long)v;
        }
    }
    *f = r;
    return 0;
}

static int parse_backend(const char *s, ts_backend *b) {
    if (!strcmp(s, "auto")) *b = TS_BACKEND_AUTO;
    else if (!strcmp(s, "cuda")) *b = TS_BACKEND_CUDA;
    else if (!strcmp(s, "sim")) *b = TS_BACKEND_SIM;
    else if (!strcmp(s, "none")) *b = TS_BACKEND_NONE;
    else TS_RAISE(TS_ERR_PARSE, "TESSERA_BACKEND: unknown backend '%s' (auto, cuda, sim, none)", s);
    return 0;
}

int ts_devset_opts_init(ts_devset_opts *o) {
    if (!o) TS_RAISE(TS_ERR_ARG, "ts_devset_opts_init: NULL options");
    memset(o, 0, sizeof *o);
    o->backend = TS_BACKEND_AUTO;
    o->sim_mem_bytes = (size_t)256 << 20;
    o->sim_peer = 1;
    o->faults.device = -1;
    o->faults.flip_bit = -1;
    o->arena_fraction = 0.90;

    const char *s = ts_env_str("TESSERA_BACKEND");
    if (s) TS_CHECK(parse_backend(s, &o->backend));
    TS_CHECK(ts_env_int("TESSERA_SIM_DEVICES", &o->sim_devices));
    if (o->sim_devices < 0 || o->sim_devices > TS_MAX_DEVICES)
        TS_RAISE(TS_ERR_PARSE, "TESSERA_SIM_DEVICES=%d out of range 0..%d", o->sim_devices, TS_MAX_DEVICES);
    TS_CHECK(ts_env_size("TESSERA_SIM_MEM", &o->sim_mem_bytes));
    if (o->sim_mem_bytes < 4096)
        TS_RAISE(TS_ERR_PARSE, "TESSERA_SIM_MEM=%zu bytes is too small (at least 4096)", o->sim_mem_bytes);
    if ((s = ts_env_str("TESSERA_SIM_SPEEDS"))) {
        int n = 0;
        TS_CHECK(ts_parse_double_list(s, "TESSERA_SIM_SPEEDS", o->sim_speeds, TS_MAX_DEVICES, &n));
        for (int i = 0; i < n; i++)
            if (!(o->sim_speeds[i] >= 0))
                TS_RAISE(TS_ERR_PARSE, "TESSERA_SIM_SPEEDS: speed %g of device %d must not be negative",
                         o->sim_speeds[i], i);
    }
    TS_CHECK(ts_env_double("TESSERA_SIM_GFLOPS", &o->sim_gflops));
    if (!(o->sim_gflops >= 0)) TS_RAISE(TS_ERR_PARSE, "TESSERA_SIM_GFLOPS=%g must not be negative", o->sim_gflops);
    TS_CHECK(ts_env_double("TESSERA_SIM_LINK_GBS", &o->sim_link_gbs));
    if (!(o->sim_link_gbs >= 0))
        TS_RAISE(TS_ERR_PARSE, "TESSERA_SIM_LINK_GBS=%g must not be negative", o->sim_link_gbs);
    TS_CHECK(ts_env_bool("TESSERA_SIM_PEER", &o->sim_peer));
    TS_CHECK(ts_env_bool("TESSERA_SIM_UNMAPPED", &o->sim_unmapped));
    if ((s = ts_env_str("TESSERA_SIM_FAULTS"))) TS_CHECK(ts_sim_faults_parse(s, &o->faults));
    TS_CHECK(ts_env_double("TESSERA_ARENA_FRACTION", &o->arena_fraction));
    if (!(o->arena_fraction > 0 && o->arena_fraction <= 1))
        TS_RAISE(TS_ERR_PARSE, "TESSERA_ARENA_FRACTION=%g must be in (0, 1]", o->arena_fraction);
    TS_CHECK(ts_env_size("TESSERA_ARENA_BYTES", &o->arena_bytes));
    TS_CHECK(ts_env_int("TESSERA_MAX_DEVICES", &o->max_devices));
    if (o->max_devices < 0) TS_RAISE(TS_ERR_PARSE, "TESSERA_MAX_DEVICES=%d must not be negative", o->max_devices);
    return 0;
}

// ---------------------------------------------------------------- the set

ts_device *ts_device_new(ts_devset *s, int ordinal) {
    if (!s || ordinal < 0 || ordinal >= TS_MAX_DEVICES) {
        TS_ERROR(TS_ERR_ARG, "ts_device_new: ordinal %d out of range 0..%d", ordinal, TS_MAX_DEVICES - 1);
        return NULL;
    }
    ts_device *d = calloc(1, sizeof *d);
    if (!d) {
        TS_ERROR(TS_ERR_NOMEM, "ts_device_new: out of host memory");
        return NULL;
    }
    d->set = s;
    d->props.backend = s->backend;
    d->props.ordinal = ordinal;
    d->props.native_id = ordinal;
    d->props.rel_speed = 1.0;
    pthread_mutex_init(&d->lock, NULL);
    s->devices[ordinal] = d;
    return d;
}

static int none_reg(void *ctx, void *p, size_t n) { return 0; }

static void free_devices(ts_devset *s) {
    for (int i = 0; i < TS_MAX_DEVICES; i++) {
        ts_device *d = s->devices[i];
        if (!d) continue;
        pthread_mutex_destroy(&d->lock);
        free(d);
        s->devices[i] = NULL;
    }
}

void ts_devset_close(ts_devset *s) {
    if (!s) return;
    // Unpin before the backend goes away: unregistering needs it.
    ts_pinreg_destroy(s->pins);
    s->pins = NULL;
    for (int i = 0; i < TS_MAX_DEVICES; i++) {
        ts_device *d = s->devices[i];
        if (!d || !d->arena) continue;
        size_t used = 0;
        ts_arena_info(d->arena, &used, NULL, NULL, NULL);
        if (used) TS_LOG_D("device %d: %zu bytes still allocated at close", i, used);
        ts_arena_destroy(d->arena);
        d->arena = NULL;
    }
    if (s->ops && s->ops->close) s->ops->close(s);
    free_devices(s);
    free(s);
}

static int choose_backend(const ts_devset_opts *o, ts_backend *b) {
    *b = o->backend;
    if (*b == TS_BACKEND_AUTO) {
        // Asking for simulated devices is explicit, so it wins over a GPU that happens to be
        // present: the same tests and runs then behave alike on a GPU machine and in CI.
        if (o->sim_devices > 0) *b = TS_BACKEND_SIM;
        else if (ts_cuda_backend_ops() && ts_cuda_device_count() > 0) *b = TS_BACKEND_CUDA;
        else *b = TS_BACKEND_NONE;
    }
    if (*b == TS_BACKEND_CUDA && !ts_cuda_backend_ops())
        TS_RAISE(TS_ERR_UNSUPPORTED, "backend cuda requested, but this build has no CUDA backend");
    if (*b == TS_BACKEND_SIM && o->sim_devices <= 0)
        TS_RAISE(TS_ERR_ARG, "backend sim requested with %d simulated devices (set TESSERA_SIM_DEVICES)", o->sim_devices);
    if (*b < TS_BACKEND_AUTO || *b > TS_BACKEND_NONE) TS_RAISE(TS_ERR_ARG, "unknown backend %d", (int)*b);
    return 0;
}

int ts_devset_open(const ts_devset_opts *o, ts_devset **out) {
    if (!out) TS_RAISE(TS_ERR_ARG, "ts_devset_open: out is NULL");
    *out = NULL;
    ts_devset_opts def;
    if (!o) {
        TS_CHECK(ts_devset_opts_init(&def));
        o = &def;
    }
    if (o->sim_devices < 0 || o->sim_devices > TS_MAX_DEVICES)
        TS_RAISE(TS_ERR_ARG, "ts_devset_open: %d simulated devices, out of range 0..%d", o->sim_devices, TS_MAX_DEVICES);
    if (o->max_devices < 0) TS_RAISE(TS_ERR_ARG, "ts_devset_open: max_devices %d is negative", o->max_devices);
    ts_backend b;
    TS_CHECK(choose_backend(o, &b));

    ts_devset *s = calloc(1, sizeof *s);
    if (!s) TS_RAISE(TS_ERR_NOMEM, "ts_devset_open: out of host memory");
    s->backend = b;
    s->opts = *o;
    s->opts.backend = b;
    s->ops = b == TS_BACKEND_CUDA ? ts_cuda_backend_ops() : b == TS_BACKEND_SIM ? ts_sim_backend_ops() : NULL;

    ts_pinreg_backend pb = {.reg = none_reg, .unreg = none_reg, .ctx = s, .page = 4096};
    if (s->ops && s->ops->host_register) pb.reg = s->ops->host_register;
    if (s->ops && s->ops->host_unregister) pb.unreg = s->ops->host_unregister;
    int rc = ts_pinreg_create(&pb, &s->pins);
    if (rc < 0) goto fail;
    if (s->ops) {
        TS_CHECK_GOTO(s->ops->open(s), rc, fail);
        if (s->count < 0 || s->count > TS_MAX_DEVICES) {
            rc = TS_ERROR(TS_ERR_INTERNAL, "backend %s reported %d devices", s->ops->name, s->count);
            goto fail;
        }
    }
    for (int i = 0; i < s->count; i++) {
        ts_device *d = s->devices[i];
        if (!d) {
            rc = TS_ERROR(TS_ERR_INTERNAL, "backend %s left device %d unset", s->ops->name, i);
            goto fail;
        }
        if (!d->arena_base || d->props.arena_bytes == 0) continue;
        char name[160];
        snprintf(name, sizeof name, "device %d (%s)", i, d->props.name);
        TS_CHECK_GOTO(ts_arena_create(d->arena_base, d->props.arena_bytes, TS_DEVICE_ALIGN, name, &d->arena), rc,
                      fail);
    }
    TS_LOG_D("device set: backend %s, %d device(s)", ts_backend_name(b), s->count);
    *out = s;
    return 0;
fail:
    // close() runs on the partly opened set: backends tolerate devices without state.
    {
        ts_error_info keep = *ts_error_last();
        ts_devset_close(s);
        ts_error_set(keep.code, keep.file, keep.line, "%s", keep.message);
    }
    return rc;
}

#if TS_HAVE_CUDA
// GPUs this process may see, without initializing CUDA: the entries of CUDA_VISIBLE_DEVICES, or
// the driver's list. Fills ids (up to 64) and returns the count (0 if unknown).
static int visible_gpus(char ids[][64]) {
    const char *v = ts_env_raw("CUDA_VISIBLE_DEVICES");
    int n = 0;
    if (v) {
        char buf[1024];
        snprintf(buf, sizeof buf, "%s", v);
        for (char *save = NULL, *t = strtok_r(buf, ",", &save); t && n < 64; t = strtok_r(NULL, ",", &save))
            snprintf(ids[n++], 64, "%s", t);
        return n;
    }
    DIR *d = opendir("/proc/driver/nvidia/gpus");
    if (!d) return 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 64)
        if (e->d_name[0] != '.') n++;
    closedir(d);
    for (int i = 0; i < n; i++) snprintf(ids[i], 64, "%d", i);
    return n;
}
#endif

int ts_devset_open_rank(ts_devset_opts *o, int local_rank, int local_size, ts_devset **set, ts_device **dev) {
    *set = NULL;
    *dev = NULL;
    int sim = o->backend == TS_BACKEND_SIM || o->sim_devices > 0;
#if TS_HAVE_CUDA
    if (!sim && local_size > 1) {
        char ids[64][64];
        int n = visible_gpus(ids);
        if (n > 0) setenv("CUDA_VISIBLE_DEVICES", ids[local_rank % n], 1);
    }
#endif
    if (!sim) o->max_devices = 1; // one GPU per rank
    TS_CHECK(ts_devset_open(o, set));
    int n = ts_devset_count(*set);
    if (n > 0) *dev = ts_devset_device(*set, sim ? local_rank % n : 0);
    return 0;
}

int ts_devset_count(const ts_devset *s) { return s ? s->count : 0; }
ts_backend ts_devset_backend(const ts_devset *s) { return s ? s->backend : TS_BACKEND_NONE; }

ts_device *ts_devset_device(ts_devset *s, int i) {
    if (!s || i < 0 || i >= s->count) return NULL;
    return s->devices[i];
}

const ts_device_props *ts_device_props_of(const ts_device *d) { return d ? &d->props : NULL; }
ts_devset *ts_device_set(ts_device *d) { return d ? d->set : NULL; }

int ts_device_can_peer(const ts_device *a, const ts_device *b) {
    if (!a || !b || a->set != b->set) return 0;
    if (a == b) return 1;
    const ts_backend_ops *ops = a->set->ops;
    return ops && ops->can_peer ? ops->can_peer(a, b) : 0;
}

int ts_device_sync(ts_device *d) {
    if (!d) TS_RAISE(TS_ERR_ARG, "ts_device_sync: NULL device");
    return d->set->ops->device_sync(d);
}

// ---------------------------------------------------------------- device memory

int ts_dmalloc(ts_device *d, size_t bytes, void **ptr) {
    if (!ptr) TS_RAISE(TS_ERR_ARG, "ts_dmalloc: NULL result pointer");
    *ptr = NULL;
    if (!d) TS_RAISE(TS_ERR_ARG, "ts_dmalloc: NULL device");
    if (bytes == 0) TS_RAISE(TS_ERR_ARG, "ts_dmalloc: 0 bytes asked on device %d", d->props.ordinal);
    if (!d->arena) TS_RAISE(TS_ERR_STATE, "ts_dmalloc: device %d has no memory arena", d->props.ordinal);
    return ts_arena_alloc(d->arena, bytes, ptr);
}

int ts_dfree(ts_device *d, void *ptr) {
    if (!ptr) return 0;
    if (!d) TS_RAISE(TS_ERR_ARG, "ts_dfree: NULL device");
    if (!d->arena) TS_RAISE(TS_ERR_STATE, "ts_dfree: device %d has no memory arena", d->props.ordinal);
    return ts_arena_free(d->arena, ptr);
}

void ts_dmem_info(ts_device *d, size_t *used, size_t *free_bytes, size_t *largest_free) {
    ts_arena_info(d ? d->arena : NULL, used, free_bytes, largest_free, NULL);
}

// ---------------------------------------------------------------- pinned host memory

int ts_host_pin(ts_devset *s, void *ptr, size_t bytes, int *handle) {
    if (!s || !ptr || !handle) TS_RAISE(TS_ERR_ARG, "ts_host_pin: NULL set, pointer or handle");
    if (bytes == 0) TS_RAISE(TS_ERR_ARG, "ts_host_pin: 0 bytes at %p", ptr);
    return ts_pinreg_add(s->pins, ptr, bytes, handle);
}

int ts_host_unpin(ts_devset *s, int handle) {
    if (!s) TS_RAISE(TS_ERR_ARG, "ts_host_unpin: NULL set");
    return ts_pinreg_remove(s->pins, handle);
}

int ts_host_alloc(ts_devset *s, size_t bytes, void **ptr) {
    if (!ptr) TS_RAISE(TS_ERR_ARG, "ts_host_alloc: NULL result pointer");
    *ptr = NULL;
    if (!s) TS_RAISE(TS_ERR_ARG, "ts_host_alloc: NULL set");
    if (bytes == 0) TS_RAISE(TS_ERR_ARG, "ts_host_alloc: 0 bytes asked");
    if (s->ops && s->ops->host_alloc) return s->ops->host_alloc(s, bytes, ptr);
    if (posix_memalign(ptr, 4096, bytes) != 0) {
        *ptr = NULL;
        TS_RAISE(TS_ERR_NOMEM, "ts_host_alloc: cannot allocate %zu bytes of host memory", bytes);
    }
    return 0;
}

void ts_host_free(ts_devset *s, void *ptr) {
    if (!ptr) return;
    if (s && s->ops && s->ops->host_free) s->ops->host_free(s, ptr);
    else free(ptr);
}

void ts_host_pin_stats(ts_devset *s, size_t *registered_bytes, int *handles, long *backend_registers) {
    ts_pinreg_stats(s ? s->pins : NULL, registered_bytes, handles, backend_registers);
}

// ---------------------------------------------------------------- streams and events

int ts_stream_create(ts_device *d, ts_stream **out) { return ts_stream_create_prio(d, 0, out); }

int ts_stream_is_high(const ts_stream *st) { return st ? st->high : 0; }

int ts_stream_create_prio(ts_device *d, int high, ts_stream **out) {
    if (!out) TS_RAISE(TS_ERR_ARG, "ts_stream_create: NULL result pointer");
    *out = NULL;
    if (!d) TS_RAISE(TS_ERR_ARG, "ts_stream_create: NULL device");
    if (high != 0 && high != 1) TS_RAISE(TS_ERR_ARG, "ts_stream_create_prio: high must be 0 or 1, not %d", high);
    ts_stream *st = calloc(1, sizeof *st);
    if (!st) TS_RAISE(TS_ERR_NOMEM, "ts_stream_create: out of host memory");
    st->dev = d;
    st->high = high;
    int rc = d->set->ops->stream_create(st);
    if (rc < 0) {
        free(st);
        return rc;
    }
    *out = st;
    return 0;
}

int ts_stream_destroy(ts_stream *st) {
    if (!st) return 0;
    const ts_backend_ops *ops = st->dev->set->ops;
    if (st->capturing) { // a capture left open: ended, its graph dropped
        void *g = NULL;
        st->capturing = 0;
        if (ops->capture_end(st, &g) == 0 && g) ops->graph_destroy(st->dev, g);
    }
    // The sticky error is reported, but the stream is released either way.
    int rc = ops->stream_sync(st);
    if (st->slot_destroy) st->slot_destroy(st->slot);
    st->slot = NULL;
    int rc2 = ops->stream_destroy(st);
    free(st);
    return rc < 0 ? rc : rc2;
}

ts_device *ts_stream_device(ts_stream *st) { return st ? st->dev : NULL; }

// An operation on a capturing stream failed or was refused: the capture fails with the first such
// error (ts_stream_capture_end reports it). Returns rc.
static int capture_fail(ts_stream *st, int rc) {
    if (rc < 0 && st && st->capturing && !st->capture_err) {
        const ts_error_info *e = ts_error_last();
        st->capture_err = rc;
        snprintf(st->capture_msg, sizeof st->capture_msg, "%s", e->code == rc ? e->message : ts_status_name(rc));
    }
    return rc;
}

// Waiting for a capturing stream would wait for work that is only being recorded.
static int refuse_capturing(ts_stream *st, const char *fn) {
    return capture_fail(st, TS_ERROR(TS_ERR_STATE, "%s: the stream of device %d is capturing a graph (end the capture first)",
                                     fn, st->dev->props.ordinal));
}

int ts_stream_sync(ts_stream *st) {
    if (!st) TS_RAISE(TS_ERR_ARG, "ts_stream_sync: NULL stream");
    if (st->capturing) return refuse_capturing(st, "ts_stream_sync");
    return st->dev->set->ops->stream_sync(st);
}

int ts_stream_error(ts_stream *st) {
    if (!st) TS_RAISE(TS_ERR_ARG, "ts_stream_error: NULL stream");
    if (st->capturing) return refuse_capturing(st, "ts_stream_error");
    return st->dev->set->ops->stream_error(st);
}

void *ts_stream_native(ts_stream *st) {
    if (!st || !st->dev->set->ops->stream_native) return NULL;
    return st->dev->set->ops->stream_native(st);
}

void *ts_stream_slot(ts_stream *st) { return st ? st->slot : NULL; }

void ts_stream_set_slot(ts_stream *st, void *value, void (*destroy)(void *value)) {
    if (!st) return;
    st->slot = value;
    st->slot_destroy = destroy;
}

int ts_event_create(ts_device *d, ts_event **out) {
    if (!out) TS_RAISE(TS_ERR_ARG, "ts_event_create: NULL result pointer");
    *out = NULL;
    if (!d) TS_RAISE(TS_ERR_ARG, "ts_event_create: NULL device");
    ts_event *ev = calloc(1, sizeof *ev);
    if (!ev) TS_RAISE(TS_ERR_NOMEM, "ts_event_create: out of host memory");
    ev->dev = d;
    int rc = d->set->ops->event_create(ev);
    if (rc < 0) {
        free(ev);
        return rc;
    }
    *out = ev;
    return 0;
}

int ts_event_destroy(ts_event *ev) {
    if (!ev) return 0;
    int rc = ev->dev->set->ops->event_destroy(ev);
    free(ev);
    return rc;
}

int ts_event_record(ts_event *ev, ts_stream *st) {
    if (!ev || !st) TS_RAISE(TS_ERR_ARG, "ts_event_record: NULL event or stream");
    // As in CUDA, an event is recorded on a stream of its own device (waits may cross devices).
    if (ev->dev != st->dev)
        TS_RAISE(TS_ERR_ARG, "ts_event_record: event of device %d recorded on a stream of device %d",
                 ev->dev->props.ordinal, st->dev->props.ordinal);
    return capture_fail(st, st->dev->set->ops->event_record(ev, st));
}

int ts_stream_wait_event(ts_stream *st, ts_event *ev) {
    if (!ev || !st) TS_RAISE(TS_ERR_ARG, "ts_stream_wait_event: NULL event or stream");
    if (ev->dev->set != st->dev->set) TS_RAISE(TS_ERR_ARG, "ts_stream_wait_event: event of another device set");
    return capture_fail(st, st->dev->set->ops->stream_wait_event(st, ev));
}

int ts_event_sync(ts_event *ev) {
    if (!ev) TS_RAISE(TS_ERR_ARG, "ts_event_sync: NULL event");
    return ev->dev->set->ops->event_sync(ev);
}

int ts_event_query(ts_event *ev) {
    if (!ev) TS_RAISE(TS_ERR_ARG, "ts_event_query: NULL event");
    return ev->dev->set->ops->event_query(ev);
}

int ts_event_elapsed_ms(ts_event *start, ts_event *end, double *ms) {
    if (!start || !end || !ms) TS_RAISE(TS_ERR_ARG, "ts_event_elapsed_ms: NULL event or result");
    if (start->dev->set != end->dev->set) TS_RAISE(TS_ERR_ARG, "ts_event_elapsed_ms: events of different device sets");
    return start->dev->set->ops->event_elapsed_ms(start, end, ms);
}

// ---------------------------------------------------------------- copies, kernels, callbacks

// The counters an operation enqueued on st adds to: the device's, or the graph's being captured
// (dev->lock held).
static ts_device_counters *counters_of(ts_stream *st) {
    return st->capturing ? &st->capture_counts : &st->dev->counters;
}

static void count_copy(ts_stream *st, ts_copy_kind kind, size_t bytes, int peer) {
    pthread_mutex_lock(&st->dev->lock);
    ts_device_counters *c = counters_of(st);
    c->copies++;
    if (peer) c->bytes_p2p += bytes;
    else if (kind == TS_COPY_H2D) c->bytes_h2d += bytes;
    else if (kind == TS_COPY_D2H) c->bytes_d2h += bytes;
    else c->bytes_d2d += bytes;
    pthread_mutex_unlock(&st->dev->lock);
}

static void counters_add(ts_device_counters *to, const ts_device_counters *c) {
    to->copies += c->copies;
    to->kernels += c->kernels;
    to->callbacks += c->callbacks;
    to->bytes_h2d += c->bytes_h2d;
    to->bytes_d2h += c->bytes_d2h;
    to->bytes_d2d += c->bytes_d2d;
    to->bytes_p2p += c->bytes_p2p;
    to->kernel_flops += c->kernel_flops;
}

static int check_2d(const char *fn, const void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                    size_t rows) {
    if (!dst || !src) TS_RAISE(TS_ERR_ARG, "%s: NULL %s pointer", fn, !dst ? "destination" : "source");
    if (width == 0 || rows == 0) TS_RAISE(TS_ERR_ARG, "%s: empty copy (width %zu bytes, %zu rows)", fn, width, rows);
    if (dpitch < width) TS_RAISE(TS_ERR_ARG, "%s: destination pitch %zu < width %zu bytes", fn, dpitch, width);
    if (spitch < width) TS_RAISE(TS_ERR_ARG, "%s: source pitch %zu < width %zu bytes", fn, spitch, width);
    if ((rows - 1) > (SIZE_MAX - width) / (dpitch > spitch ? dpitch : spitch))
        TS_RAISE(TS_ERR_ARG, "%s: %zu rows of pitch %zu overflow the address space", fn, rows,
                 dpitch > spitch ? dpitch : spitch);
    return 0;
}

static int copy2d(ts_stream *st, ts_copy_kind kind, void *dst, size_t dpitch, const void *src, size_t spitch,
                  size_t width, size_t rows) {
    if (kind != TS_COPY_H2D && kind != TS_COPY_D2H && kind != TS_COPY_D2D)
        TS_RAISE(TS_ERR_ARG, "ts_copy2d_async: unknown copy kind %d", (int)kind);
    TS_CHECK(check_2d("ts_copy2d_async", dst, dpitch, src, spitch, width, rows));
    TS_CHECK(st->dev->set->ops->copy2d(st, kind, dst, dpitch, src, spitch, width, rows));
    count_copy(st, kind, width * rows, 0);
    return 0;
}

int ts_copy2d_async(ts_stream *st, ts_copy_kind kind, void *dst, size_t dpitch, const void *src, size_t spitch,
                    size_t width, size_t rows) {
    if (!st) TS_RAISE(TS_ERR_ARG, "ts_copy2d_async: NULL stream");
    return capture_fail(st, copy2d(st, kind, dst, dpitch, src, spitch, width, rows));
}

int ts_copy_async(ts_stream *st, ts_copy_kind kind, void *dst, const void *src, size_t bytes) {
    return ts_copy2d_async(st, kind, dst, bytes, src, bytes, bytes, 1);
}

static int copy_peer2d(ts_stream *st, ts_device *dst_dev, void *dst, size_t dpitch, ts_device *src_dev,
                       const void *src, size_t spitch, size_t width, size_t rows) {
    if (!dst_dev || !src_dev) TS_RAISE(TS_ERR_ARG, "ts_copy_peer2d_async: NULL device");
    if (dst_dev->set != st->dev->set || src_dev->set != st->dev->set)
        TS_RAISE(TS_ERR_ARG, "ts_copy_peer2d_async: devices of another device set");
    TS_CHECK(check_2d("ts_copy_peer2d_async", dst, dpitch, src, spitch, width, rows));
    TS_CHECK(st->dev->set->ops->copy_peer2d(st, dst_dev, dst, dpitch, src_dev, src, spitch, width, rows));
    count_copy(st, TS_COPY_D2D, width * rows, dst_dev != src_dev);
    return 0;
}

int ts_copy_peer2d_async(ts_stream *st, ts_device *dst_dev, void *dst, size_t dpitch, ts_device *src_dev,
                         const void *src, size_t spitch, size_t width, size_t rows) {
    if (!st) TS_RAISE(TS_ERR_ARG, "ts_copy_peer2d_async: NULL stream");
    return capture_fail(st, copy_peer2d(st, dst_dev, dst, dpitch, src_dev, src, spitch, width, rows));
}

static int memset_async(ts_stream *st, void *dst, int value, size_t bytes) {
    if (!dst) TS_RAISE(TS_ERR_ARG, "ts_memset_async: NULL destination");
    if (bytes == 0) TS_RAISE(TS_ERR_ARG, "ts_memset_async: 0 bytes");
    return st->dev->set->ops->memset(st, dst, value, bytes);
}

int ts_memset_async(ts_stream *st, void *dst, int value, size_t bytes) {
    if (!st) TS_RAISE(TS_ERR_ARG, "ts_memset_async: NULL stream");
    return capture_fail(st, memset_async(st, dst, value, bytes));
}

int ts_host_callback(ts_stream *st, void (*fn)(void *arg), void *arg) {
    if (!st || !fn) TS_RAISE(TS_ERR_ARG, "ts_host_callback: NULL stream or function");
    TS_CHECK(capture_fail(st, st->dev->set->ops->host_callback(st, fn, arg)));
    pthread_mutex_lock(&st->dev->lock);
    counters_of(st)->callbacks++;
    pthread_mutex_unlock(&st->dev->lock);
    return 0;
}

static int kernel_enqueue(ts_stream *st, const ts_kernel *k) {
    if (!k) TS_RAISE(TS_ERR_ARG, "ts_kernel_enqueue: NULL kernel");
    const char *name = k->name ? k->name : "(unnamed)";
    if (k->args_size > TS_KERNEL_ARGS_MAX)
        TS_RAISE(TS_ERR_ARG, "ts_kernel_enqueue: kernel %s has %zu bytes of arguments (at most %d)", name, k->args_size,
                 TS_KERNEL_ARGS_MAX);
    if (k->args_size > 0 && !k->args)
        TS_RAISE(TS_ERR_ARG, "ts_kernel_enqueue: kernel %s has %zu bytes of arguments but args is NULL", name,
                 k->args_size);
    if (!(k->flops >= 0)) TS_RAISE(TS_ERR_ARG, "ts_kernel_enqueue: kernel %s has flops %g", name, k->flops);
    TS_CHECK(st->dev->set->ops->kernel(st, k));
    pthread_mutex_lock(&st->dev->lock);
    ts_device_counters *c = counters_of(st);
    c->kernels++;
    c->kernel_flops += k->flops;
    pthread_mutex_unlock(&st->dev->lock);
    return 0;
}

int ts_kernel_enqueue(ts_stream *st, const ts_kernel *k) {
    if (!st) TS_RAISE(TS_ERR_ARG, "ts_kernel_enqueue: NULL stream");
    return capture_fail(st, kernel_enqueue(st, k));
}

// ---------------------------------------------------------------- graphs

int ts_stream_capturing(const ts_stream *st) { return st ? st->capturing : 0; }

int ts_stream_capture_begin(ts_stream *st) {
    if (!st) TS_RAISE(TS_ERR_ARG, "ts_stream_capture_begin: NULL stream");
    const int ord = st->dev->props.ordinal;
    const ts_backend_ops *ops = st->dev->set->ops;
    if (st->capturing) TS_RAISE(TS_ERR_STATE, "ts_stream_capture_begin: the stream of device %d is capturing already", ord);
    if (!ops->capture_begin)
        TS_RAISE(TS_ERR_UNSUPPORTED, "ts_stream_capture_begin: backend %s cannot capture graphs", ops->name);
    TS_CHECK(ops->capture_begin(st));
    pthread_mutex_lock(&st->dev->lock);
    memset(&st->capture_counts, 0, sizeof st->capture_counts);
    st->capture_err = 0;
    st->capture_msg[0] = '\0';
    st->capturing = 1;
    pthread_mutex_unlock(&st->dev->lock);
    return 0;
}

int ts_stream_capture_end(ts_stream *st, ts_graph **out) {
    if (!out) TS_RAISE(TS_ERR_ARG, "ts_stream_capture_end: NULL result pointer");
    *out = NULL;
    if (!st) TS_RAISE(TS_ERR_ARG, "ts_stream_capture_end: NULL stream");
    const int ord = st->dev->props.ordinal;
    const ts_backend_ops *ops = st->dev->set->ops;
    if (!st->capturing) TS_RAISE(TS_ERR_STATE, "ts_stream_capture_end: the stream of device %d is not capturing", ord);
    pthread_mutex_lock(&st->dev->lock);
    st->capturing = 0;
    pthread_mutex_unlock(&st->dev->lock);
    void *impl = NULL;
    int rc = ops->capture_end(st, &impl); // ends the capture whatever happened during it
    if (st->capture_err) // the cause, rather than the backend's word that the capture broke
        rc = TS_ERROR(st->capture_err, "capture of a graph on device %d failed: %s", ord, st->capture_msg);
    ts_graph *g = NULL;
    if (rc == 0 && !(g = calloc(1, sizeof *g)))
        rc = TS_ERROR(TS_ERR_NOMEM, "ts_stream_capture_end: out of host memory");
    if (rc < 0) {
        if (impl) ops->graph_destroy(st->dev, impl);
        return rc;
    }
    g->dev = st->dev;
    g->impl = impl;
    g->counts = st->capture_counts;
    *out = g;
    return 0;
}

int ts_graph_launch(ts_graph *g, ts_stream *st) {
    if (!g || !st) TS_RAISE(TS_ERR_ARG, "ts_graph_launch: NULL graph or stream");
    if (g->dev != st->dev)
        TS_RAISE(TS_ERR_ARG, "ts_graph_launch: a graph of device %d launched on a stream of device %d",
                 g->dev->props.ordinal, st->dev->props.ordinal);
    TS_CHECK(capture_fail(st, st->dev->set->ops->graph_launch(st, g->impl)));
    pthread_mutex_lock(&st->dev->lock);
    counters_add(counters_of(st), &g->counts);
    pthread_mutex_unlock(&st->dev->lock);
    return 0;
}

void ts_graph_destroy(ts_graph *g) {
    if (!g) return;
    g->dev->set->ops->graph_destroy(g->dev, g->impl);
    free(g);
}

void ts_graph_counters(const ts_graph *g, ts_device_counters *c) {
    if (!c) return;
    memset(c, 0, sizeof *c);
    if (g) *c = g->counts;
}

void ts_device_counters_get(ts_device *d, ts_device_counters *c) {
    if (!c) return;
    memset(c, 0, sizeof *c);
    if (!d) return;
    pthread_mutex_lock(&d->lock);
    *c = d->counters;
    pthread_mutex_unlock(&d->lock);
}
