// ts_env.c: strict parsers for numbers, sizes, durations and lists (the values of flags and settings).
#include "ts_env.h"

#include "ts_error.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

// strtol/strtod accept leading blanks; a value taken from a flag or variable must not have any,
// because "  12" usually means a quoting mistake upstream.
static int starts_clean(const char *s) { return s && s[0] != '\0' && !isspace((unsigned char)s[0]); }

static const char *label(const char *what) { return what ? what : "value"; }

int ts_parse_i64(const char *s, const char *what, int64_t *out) {
    if (!starts_clean(s)) TS_RAISE(TS_ERR_PARSE, "%s: expected an integer, got '%s'", label(what), s ? s : "");
    errno = 0;
    char *end = NULL;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end != '\0')
        TS_RAISE(TS_ERR_PARSE, "%s: expected an integer, got '%s'", label(what), s);
    if (errno == ERANGE) TS_RAISE(TS_ERR_PARSE, "%s: integer '%s' is out of range", label(what), s);
    *out = (int64_t)v;
    return 0;
}

int ts_parse_int(const char *s, const char *what, int *out) {
    int64_t v = 0;
    TS_CHECK(ts_parse_i64(s, what, &v));
    if (v < INT_MIN || v > INT_MAX)
        TS_RAISE(TS_ERR_PARSE, "%s: integer '%s' is out of range", label(what), s);
    *out = (int)v;
    return 0;
}

int ts_parse_double(const char *s, const char *what, double *out) {
    if (!starts_clean(s)) TS_RAISE(TS_ERR_PARSE, "%s: expected a number, got '%s'", label(what), s ? s : "");
    errno = 0;
    char *end = NULL;
    double v = strtod(s, &end);
    if (end == s || *end != '\0')
        TS_RAISE(TS_ERR_PARSE, "%s: expected a number, got '%s'", label(what), s);
    // Underflow to a tiny or zero value is harmless; overflow, NaN and infinity never are.
    if (!isfinite(v) || (errno == ERANGE && fabs(v) > 1.0))
        TS_RAISE(TS_ERR_PARSE, "%s: number '%s' is out of range", label(what), s);
    *out = v;
    return 0;
}

int ts_parse_bool(const char *s, const char *what, int *out) {
    static const char *const yes[] = {"1", "yes", "true", "on"};
    static const char *const no[] = {"0", "no", "false", "off"};
    if (s) {
        for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
            if (strcasecmp(s, yes[i]) == 0) return *out = 1, 0;
            if (strcasecmp(s, no[i]) == 0) return *out = 0, 0;
        }
    }
    TS_RAISE(TS_ERR_PARSE, "%s: expected 1/0, yes/no, true/false or on/off, got '%s'", label(what),
             s ? s : "");
}

// Binary multiplier of a size suffix ("K", "KB", "KiB", ...); 0 when the suffix is not one.
static uint64_t size_suffix(const char *p) {
    static const char units[] = "KMGTP";
    if (*p == '\0') return 1;
    if ((p[0] == 'B' || p[0] == 'b') && p[1] == '\0') return 1;
    const char *u = strchr(units, toupper((unsigned char)p[0]));
    if (!u || p[0] == '\0') return 0;
    const char *rest = p + 1;
    if (!(rest[0] == '\0' || strcasecmp(rest, "B") == 0 || strcasecmp(rest, "iB") == 0)) return 0;
    return 1ull << (10 * (u - units + 1));
}

int ts_parse_size(const char *s, const char *what, size_t *out) {
    if (!starts_clean(s)) TS_RAISE(TS_ERR_PARSE, "%s: expected a size such as 4096, 64K or 1.5G, got '%s'", label(what), s ? s : "");
    if (s[0] == '-') TS_RAISE(TS_ERR_PARSE, "%s: size '%s' is negative", label(what), s);
    if (strchr(s, '%'))
        TS_RAISE(TS_ERR_PARSE, "%s: a percentage ('%s') is not accepted here; give bytes (e.g. 64G)", label(what), s);
    // The digits: an integer is parsed exactly (sizes near 2^64 must not lose bits through double),
    // a decimal such as 1.5G through strtod.
    size_t ndig = strspn(s, "0123456789");
    int decimal = s[ndig] == '.';
    char *end = NULL;
    errno = 0;
    uint64_t ival = 0;
    double dval = 0.0;
    if (decimal) {
        dval = strtod(s, &end);
    } else {
        if (ndig == 0 && s[0] != '+') end = (char *)s;
        else ival = strtoull(s, &end, 10);
    }
    if (end == s || (decimal && !(ndig > 0 || isdigit((unsigned char)s[ndig + 1]))))
        TS_RAISE(TS_ERR_PARSE, "%s: expected a size such as 4096, 64K or 1.5G, got '%s'", label(what), s);
    if (errno == ERANGE) TS_RAISE(TS_ERR_PARSE, "%s: size '%s' is out of range", label(what), s);
    uint64_t mult = size_suffix(end);
    if (mult == 0)
        TS_RAISE(TS_ERR_PARSE, "%s: unknown size suffix in '%s' (K, M, G, T, P: binary multiples)", label(what), s);
    uint64_t bytes;
    if (decimal) {
        double b = dval * (double)mult;
        if (!(b >= 0.0) || b >= 18446744073709551616.0 || b > (double)SIZE_MAX)
            TS_RAISE(TS_ERR_PARSE, "%s: size '%s' is out of range", label(what), s);
        if (b != floor(b))
            TS_RAISE(TS_ERR_PARSE, "%s: size '%s' is not a whole number of bytes", label(what), s);
        bytes = (uint64_t)b;
    } else {
        if (ival > UINT64_MAX / mult || ival * mult > SIZE_MAX)
            TS_RAISE(TS_ERR_PARSE, "%s: size '%s' is out of range", label(what), s);
        bytes = ival * mult;
    }
    *out = (size_t)bytes;
    return 0;
}

// Seconds per duration unit; 0 for an unknown unit. `len` is the unit's length in characters.
static double duration_unit(const char *p, size_t *len) {
    if (strncmp(p, "ms", 2) == 0) return *len = 2, 1e-3;
    switch (*p) {
    case 'd': return *len = 1, 86400.0;
    case 'h': return *len = 1, 3600.0;
    case 'm': return *len = 1, 60.0;
    case 's': return *len = 1, 1.0;
    default: return *len = 0, 0.0;
    }
}

int ts_parse_duration(const char *s, const char *what, double *out) {
    if (!starts_clean(s) || s[0] == '-' || s[0] == '+')
        TS_RAISE(TS_ERR_PARSE, "%s: expected a duration such as 90s, 10m, 1h30m or 2.5, got '%s'", label(what), s ? s : "");
    double total = 0.0;
    const char *p = s;
    int parts = 0;
    while (*p) {
        // Only plain decimals: strtod would also take "inf", hex floats and exponents like "1e3m".
        size_t n = strspn(p, "0123456789.");
        if (n == 0) break;
        char num[64];
        if (n >= sizeof num) break;
        memcpy(num, p, n);
        num[n] = '\0';
        char *end = NULL;
        double v = strtod(num, &end);
        if (end != num + n) break;
        p += n;
        size_t ulen = 0;
        double unit = duration_unit(p, &ulen);
        if (ulen == 0) {
            // A bare number is seconds, and only as the whole string ("1m30" is ambiguous).
            if (*p == '\0' && parts == 0) {
                total = v;
                parts = 1;
            } else {
                parts = -1;
            }
            break;
        }
        total += v * unit;
        p += ulen;
        parts++;
    }
    if (parts <= 0 || *p != '\0' || !isfinite(total))
        TS_RAISE(TS_ERR_PARSE, "%s: expected a duration such as 90s, 10m, 1h30m or 2.5, got '%s'", label(what), s);
    *out = total;
    return 0;
}

// Splits `s` at commas and calls parse(item) for each; the items are copied so that the parsers
// see one value at a time and their messages show that value.
typedef int (*item_parser)(const char *item, const char *what, void *out, int idx);

static int parse_list(const char *s, const char *what, item_parser parse, void *out, int max, int *n) {
    if (!s || s[0] == '\0') TS_RAISE(TS_ERR_PARSE, "%s: expected a comma-separated list, got ''", label(what));
    int count = 0;
    const char *p = s;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char item[128];
        if (len == 0) TS_RAISE(TS_ERR_PARSE, "%s: empty item in list '%s'", label(what), s);
        if (len >= sizeof item) TS_RAISE(TS_ERR_PARSE, "%s: item too long in list '%s'", label(what), s);
        if (count >= max)
            TS_RAISE(TS_ERR_PARSE, "%s: too many values in '%s' (at most %d)", label(what), s, max);
        memcpy(item, p, len);
        item[len] = '\0';
        int rc = parse(item, what, out, count);
        if (rc < 0) return ts_error_wrap(rc, "in list '%s'", s);
        count += rc;
        if (!comma) break;
        p = comma + 1;
    }
    *n = count;
    return 0;
}

static int double_item(const char *item, const char *what, void *out, int idx) {
    TS_CHECK(ts_parse_double(item, what, (double *)out + idx));
    return 1;
}

static int i64_item(const char *item, const char *what, void *out, int idx) {
    TS_CHECK(ts_parse_i64(item, what, (int64_t *)out + idx));
    return 1;
}

int ts_parse_double_list(const char *s, const char *what, double *out, int max, int *n) {
    return parse_list(s, what, double_item, out, max, n);
}

int ts_parse_i64_list(const char *s, const char *what, int64_t *out, int max, int *n) {
    return parse_list(s, what, i64_item, out, max, n);
}

// One positive size of a sweep (suffixes allowed: "8K" = 8192).
static int sweep_value(const char *s, const char *what, int64_t *v) {
    size_t z;
    TS_CHECK(ts_parse_size(s, what, &z));
    if (z == 0 || z > (size_t)INT64_MAX)
        TS_RAISE(TS_ERR_PARSE, "%s: sweep size '%s' must be positive", label(what), s);
    *v = (int64_t)z;
    return 0;
}

typedef struct {
    int64_t *out;
    int max;
} sweep_out;

// A sweep item expands to one value or a range; returns how many values it appended.
static int sweep_item(const char *item, const char *what, void *vout, int idx) {
    sweep_out *so = vout;
    char *c1 = strchr(item, ':');
    if (!c1) {
        TS_CHECK(sweep_value(item, what, so->out + idx));
        return 1;
    }
    char *c2 = strchr(c1 + 1, ':');
    if (!c2 || strchr(c2 + 1, ':'))
        TS_RAISE(TS_ERR_PARSE, "%s: range '%s' must be start:stop:step or start:stop:xFACTOR", label(what), item);
    *c1 = '\0';
    *c2 = '\0';
    int64_t start = 0, stop = 0, step = 0, factor = 0;
    TS_CHECK(sweep_value(item, what, &start));
    TS_CHECK(sweep_value(c1 + 1, what, &stop));
    const char *st = c2 + 1;
    if (st[0] == 'x' || st[0] == 'X') {
        TS_CHECK(ts_parse_i64(st + 1, what, &factor));
        if (factor < 2) TS_RAISE(TS_ERR_PARSE, "%s: sweep factor '%s' must be an integer >= 2", label(what), st);
    } else {
        TS_CHECK(sweep_value(st, what, &step));
    }
    if (start > stop)
        TS_RAISE(TS_ERR_PARSE, "%s: sweep start %lld is larger than stop %lld", label(what), (long long)start,
                 (long long)stop);
    int k = 0;
    for (int64_t v = start; v <= stop;) {
        if (idx + k >= so->max)
            TS_RAISE(TS_ERR_PARSE, "%s: sweep %lld:%lld:%s has more than %d values", label(what),
                     (long long)start, (long long)stop, st, so->max);
        so->out[idx + k++] = v;
        // Stop before the next value would overflow.
        if (factor ? v > INT64_MAX / factor : v > INT64_MAX - step) break;
        v = factor ? v * factor : v + step;
    }
    return k;
}

int ts_parse_size_sweep(const char *s, const char *what, int64_t *out, int max, int *n) {
    sweep_out so = {out, max};
    // parse_list checks capacity per item; a range checks its own values against max.
    return parse_list(s, what, sweep_item, &so, max, n);
}

// The environment lookups (ts_env_str, ts_env_int, ...) are in ts_settings.c, beside the table of settings.
