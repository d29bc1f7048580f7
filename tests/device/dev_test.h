// dev_test.h: shared helpers of the device tests: which backend to test, opening a set, random bytes.
#ifndef DEV_TEST_H
#define DEV_TEST_H

#include "core/ts_error.h"
#include "device/ts_device.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// TESSERA_TEST_BACKEND=cuda runs the semantic tests on GPUs; the default is the simulator.
static inline ts_backend dev_test_backend(void) {
    const char *s = getenv("TESSERA_TEST_BACKEND");
    return s && !strcmp(s, "cuda") ? TS_BACKEND_CUDA : TS_BACKEND_SIM;
}

// Options for the test sets: 4 simulated devices of unequal speeds, unpaced unless asked.
static inline void dev_test_opts(ts_devset_opts *o) {
    memset(o, 0, sizeof *o);
    o->backend = dev_test_backend();
    o->sim_devices = 4;
    o->sim_mem_bytes = (size_t)32 << 20;
    o->sim_speeds[0] = 1.0;
    o->sim_speeds[1] = 0.5;
    o->sim_speeds[2] = 0.25;
    o->sim_speeds[3] = 0.75;
    o->sim_peer = 1;
    o->faults.device = -1;
    o->faults.flip_bit = -1;
    o->arena_fraction = 0.9;
    o->arena_bytes = (size_t)64 << 20; // keeps CUDA arenas small and quick to create
}

static inline ts_devset *dev_test_open(const ts_devset_opts *o) {
    ts_devset *s = NULL;
    int rc = ts_devset_open(o, &s);
    if (rc != 0) {
        fprintf(stderr, "ts_devset_open: %s\n", ts_error_string());
        return NULL;
    }
    return s;
}

static inline int dev_test_is_sim(void) { return dev_test_backend() == TS_BACKEND_SIM; }

// cmocka set-up and tear-down for tests that take the test set (dev_test_opts) as their state.
static inline int dev_test_setup(void **state) {
    ts_devset_opts o;
    dev_test_opts(&o);
    ts_devset *s = dev_test_open(&o);
    if (!s) return -1;
    *state = s;
    return 0;
}

static inline int dev_test_teardown(void **state) {
    ts_devset_close(*state);
    return 0;
}

// Random bytes with no zero among them (zeros hide copies that did not happen).
static inline void dev_test_fill(void *p, size_t n, unsigned *seed) {
    unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        *seed = *seed * 1103515245u + 12345u;
        unsigned char v = (unsigned char)(*seed >> 16);
        b[i] = v ? v : 1;
    }
}

#endif
