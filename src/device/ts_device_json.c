// ts_device_json.c: the devices of a set as entries of the results schema's "devices" array.
#include <stdio.h>

#include "core/ts_json.h"
#include "device/ts_device.h"

void ts_devset_json(ts_json *j, void *devset) {
    ts_devset *s = devset;
    if (!s) return;
    for (int i = 0; i < ts_devset_count(s); i++) {
        const ts_device_props *p = ts_device_props_of(ts_devset_device(s, i));
        char cc[16];
        snprintf(cc, sizeof cc, "%d.%d", p->cc_major, p->cc_minor);
        ts_json_begin_object(j, NULL);
        ts_json_str(j, "backend", ts_backend_name(p->backend));
        ts_json_str(j, "name", p->name);
        ts_json_num(j, "memory_gb", (double)p->mem_total / 1e9);
        ts_json_num(j, "arena_gb", (double)p->arena_bytes / 1e9);
        ts_json_int(j, "sms", p->sms);
        ts_json_str(j, "cc", cc);
        ts_json_str(j, "bus_id", p->bus_id);
        ts_json_end_object(j);
    }
}
