// test_tiles_stats_json.c: the tile runtime's statistics as JSON: every key its readers use, with the values of the stats.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/ts_json.h"
#include "runtime/ts_tiles.h"

static char *stats_doc(const ts_tiles_stats *t) {
    ts_json *j = ts_json_open_buffer();
    assert_non_null(j);
    ts_json_begin_object(j, NULL);
    ts_tiles_stats_json(j, t);
    ts_json_end_object(j);
    char *doc = strdup(ts_json_buffer(j));
    assert_non_null(doc);
    assert_int_equal(ts_json_close(j), 0);
    return doc;
}

static void expect(const char *doc, const char *member) {
    if (!strstr(doc, member)) fail_msg("missing %s in:\n%s", member, doc);
}

static void test_every_key(void **state) {
    (void)state;
    ts_tiles_stats t;
    memset(&t, 0, sizeof t);
    t.tile = 256, t.tiles = 12, t.ndev = 2, t.tiles_dev[0] = 5, t.tiles_dev[1] = 4, t.tiles_cpu = 3;
    t.cpu_share = 0.25, t.bytes_h2d = 1000, t.bytes_d2h = 2000, t.bytes_p2p = 300, t.bytes_save = 40;
    t.bytes_h2d_noreuse = 5000, t.cache_hits = 17, t.cache_misses = 19, t.peer_fetches = 7, t.steals = 2;
    t.transposes = 9;
    t.cpu_mode = "adaptive", t.cpu_share_planned = 0.5, t.cpu_steals = 1, t.dev_gflops = 12.5;
    t.cpu_gflops = 1.5, t.cpu_gflops_est = 2.25, t.devices_failed = 1, t.reruns = 6;
    char *doc = stats_doc(&t);
    static const char *members[] = {
        "\"bytes_h2d\": 1000", "\"bytes_d2h\": 2000", "\"bytes_save\": 40", "\"bytes_p2p\": 300",
        "\"bytes_h2d_noreuse\": 5000", "\"cache_hits\": 17", "\"cache_misses\": 19", "\"peer_fetches\": 7", "\"transposes\": 9",
        "\"cpu_share\": 0.25", "\"tile\": 256", "\"tiles\": 12", "\"tiles_cpu\": 3", "\"steals\": 2",
        "\"cpu_mode\": \"adaptive\"", "\"cpu_share_planned\": 0.5", "\"cpu_steals\": 1", "\"dev_gflops\": 12.5",
        "\"cpu_gflops\": 1.5", "\"cpu_gflops_est\": 2.25", "\"devices_failed\": 1", "\"reruns\": 6", "\"tiles_per_device\": ["};
    for (size_t k = 0; k < sizeof members / sizeof members[0]; k++) expect(doc, members[k]);
    const char *arr = strstr(doc, "\"tiles_per_device\": [");
    const char *five = strstr(arr, "5"), *four = strstr(arr, "4"), *end = strchr(arr, ']');
    assert_true(five && four && end && five < four && four < end); // per device, in device order
    free(doc);
}

// No planned share (auto) and no mode set: null and "off", not a made-up number.
static void test_unset_fields(void **state) {
    (void)state;
    ts_tiles_stats t;
    memset(&t, 0, sizeof t);
    t.cpu_share_planned = -1;
    char *doc = stats_doc(&t);
    expect(doc, "\"cpu_share_planned\": null");
    expect(doc, "\"cpu_mode\": \"off\"");
    expect(doc, "\"tiles_per_device\": []");
    free(doc);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_key),
        cmocka_unit_test(test_unset_fields),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
