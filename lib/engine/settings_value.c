/* settings_value.c - parsing a value by its descriptor's type, with Redis
 * 7.0's rules and error texts (checked against redis-server 7.0.15 by
 * tests/e2e/test_config_diff.py):
 *
 *   bool     yes or no, in any case;
 *   integer  strict: an optional '-', digits, no leading zero, no '+' or
 *            spaces; then the range, "argument must be between lo and hi
 *            inclusive";
 *   memory   digits (none reads as 0, as Redis's memtoull does) and an
 *            optional unit b, k, kb, m, mb, g, gb in any case (k = 1000,
 *            kb = 1024); maxmemory-clients also takes a percentage "5%";
 *   octal    base 8, range shown in octal;
 *   enum     one of the choices, in any case, shown in the table's case;
 *   special  its own syntax: notify-keyspace-events (flag letters, shown
 *            in Redis's canonical order), oom-score-adj-values,
 *            latency-tracking-info-percentiles, cluster-announce-hostname
 *            and bind; save and client-output-buffer-limit are the
 *            engine's own (cmd_persist.c, settings.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "settings.h"

static bool eq_nocase(const char *a, size_t alen, const char *b, size_t blen)
{
    if (alen != blen)
        return false;
    for (size_t i = 0; i < alen; i++) {
        unsigned char x = (unsigned char)a[i], y = (unsigned char)b[i];

        if (x >= 'A' && x <= 'Z')
            x += 'a' - 'A';
        if (y >= 'A' && y <= 'Z')
            y += 'a' - 'A';
        if (x != y)
            return false;
    }
    return true;
}

const struct goblin__sdesc *goblin__sdesc_find(struct goblin_slice name)
{
    for (size_t i = 0; i < goblin__nsdescs; i++) {
        const struct goblin__sdesc *d = &goblin__sdescs[i];

        if (eq_nocase(d->name, strlen(d->name), name.ptr, name.len) ||
            (d->alias != NULL &&
             eq_nocase(d->alias, strlen(d->alias), name.ptr, name.len)))
            return d;
    }
    return NULL;
}

const char *goblin__stype_name(const struct goblin__sdesc *d)
{
    static const char *const names[] = {"bool", "integer", "memory",
                                        "octal", "enum", "string",
                                        "special"};

    if (d->flags & GOBLIN__SF_PERCENT)
        return "memory or percent";
    return names[d->type];
}

/* Redis's string2ll: no '+', no leading zeros, no "-0", no spaces. */
static bool strict_ll(const char *p, size_t n, int64_t *out)
{
    bool neg = n > 0 && p[0] == '-';
    uint64_t v = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : INT64_MAX;
    size_t i = neg ? 1 : 0;

    if (i == n || p[i] < '0' || p[i] > '9' || (p[i] == '0' && n > i + 1))
        return false;
    if (neg && p[i] == '0')
        return false;
    for (; i < n; i++) {
        if (p[i] < '0' || p[i] > '9' ||
            v > (lim - (uint64_t)(p[i] - '0')) / 10)
            return false;
        v = v * 10 + (uint64_t)(p[i] - '0');
    }
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return true;
}

/* Redis's memtoull: digits (possibly none) then a unit. */
static bool mem_value(const char *p, size_t n, uint64_t *out)
{
    static const struct { const char *u; uint64_t mul; } units[] = {
        {"", 1}, {"b", 1}, {"k", 1000}, {"kb", 1024}, {"m", 1000000},
        {"mb", 1024 * 1024}, {"g", 1000000000}, {"gb", 1024ull << 20},
    };
    size_t digits = 0;
    uint64_t v = 0;

    while (digits < n && p[digits] >= '0' && p[digits] <= '9') {
        unsigned d = (unsigned)(p[digits++] - '0');

        /* strtoull saturates, and Redis does not look at ERANGE */
        v = v > (UINT64_MAX - d) / 10 ? UINT64_MAX : v * 10 + d;
    }
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (!eq_nocase(units[i].u, strlen(units[i].u), p + digits,
                       n - digits))
            continue;
        *out = v * units[i].mul;   /* wraps, as Redis's does */
        return true;
    }
    return false;
}

static int range_error(const struct goblin__sdesc *d, const char **why,
                       char *whybuf, size_t whycap)
{
    if (d->type == GOBLIN__ST_OCTAL)
        snprintf(whybuf, whycap, "argument must be between %llo and %llo "
                 "inclusive", (unsigned long long)d->lo,
                 (unsigned long long)d->hi);
    else if (d->hi > INT64_MAX)
        snprintf(whybuf, whycap, "argument must be between %llu and %llu "
                 "inclusive", (unsigned long long)d->lo,
                 (unsigned long long)d->hi);
    else
        snprintf(whybuf, whycap, "argument must be between %lld and %lld "
                 "inclusive", (long long)d->lo, (long long)d->hi);
    *why = whybuf;
    return GOBLIN_EINVAL;
}

static int parse_enum(const struct goblin__sdesc *d, struct goblin_slice v,
                      char *norm, size_t cap, int64_t *num,
                      const char **why, char *whybuf, size_t whycap)
{
    const char *c = d->choices;
    size_t n = 0;
    int64_t i = 0;

    for (;; i++) {
        size_t len = strcspn(c, "|");

        if (eq_nocase(c, len, v.ptr, v.len)) {
            snprintf(norm, cap, "%.*s", (int)len, c);
            *num = i;
            return 0;
        }
        if (c[len] == '\0')
            break;
        c += len + 1;
    }
    n = (size_t)snprintf(whybuf, whycap, "argument(s) must be one of the "
                         "following: ");
    for (c = d->choices; *c != '\0' && n < whycap; c++)
        n += (size_t)snprintf(whybuf + n, whycap - n, "%s",
                              *c == '|' ? ", " : (char[2]){*c, '\0'});
    *why = whybuf;
    return GOBLIN_EINVAL;
}

/* notify-keyspace-events: letters in, Redis's canonical order out. */
static int parse_notify(struct goblin_slice v, char *norm, size_t cap,
                        const char **why)
{
    static const char all[] = "g$lshzxetd", order[] = "g$lshzxetdn";
    bool on[128] = {false};
    const char *p = v.ptr;
    size_t n = 0;
    bool every = true;

    for (size_t i = 0; i < v.len; i++) {
        unsigned char c = (unsigned char)p[i];

        if (c >= 128 || strchr("Ag$lshzxeKEtmdn", c) == NULL || c == 0) {
            *why = "Invalid event class character. Use "
                   "'Ag$lshzxeKEtmdn'.";
            return GOBLIN_EINVAL;
        }
        if (c == 'A')
            for (const char *a = all; *a != '\0'; a++)
                on[(unsigned char)*a] = true;
        on[c] = true;
    }
    for (const char *a = all; *a != '\0'; a++)
        every = every && on[(unsigned char)*a];
    if (every && cap > 1)
        norm[n++] = 'A';
    for (const char *o = order; *o != '\0' && n + 1 < cap; o++)
        if (on[(unsigned char)*o] && (!every || *o == 'n'))
            norm[n++] = *o;
    for (const char *o = "KEm"; *o != '\0' && n + 1 < cap; o++)
        if (on[(unsigned char)*o])
            norm[n++] = *o;
    norm[n] = '\0';
    return 0;
}

/* Words of v split at spaces, copied NUL-terminated; how many, or -1. */
static int words(struct goblin_slice v, char w[][64], int max)
{
    const char *p = v.ptr, *end = p + v.len;
    int n = 0;

    while (p < end) {
        size_t len;

        while (p < end && *p == ' ')
            p++;
        if (p == end)
            break;
        len = strcspn(p, " ");
        len = len < (size_t)(end - p) ? len : (size_t)(end - p);
        if (n == max || len >= 64)
            return -1;
        memcpy(w[n], p, len);
        w[n++][len] = '\0';
        p += len;
    }
    return n;
}

static int parse_oom_values(struct goblin_slice v, char *norm, size_t cap,
                            const char **why)
{
    char w[4][64];
    int64_t x[3];
    int n = words(v, w, 4);

    if (n != 3) {
        *why = "wrong number of arguments";
        return GOBLIN_EINVAL;
    }
    for (int i = 0; i < 3; i++) {
        if (!strict_ll(w[i], strlen(w[i]), &x[i]) || x[i] < -2000 ||
            x[i] > 2000) {
            *why = "Invalid oom-score-adj-values, elements must be between "
                   "-2000 and 2000.";
            return GOBLIN_EINVAL;
        }
    }
    snprintf(norm, cap, "%lld %lld %lld", (long long)x[0], (long long)x[1],
             (long long)x[2]);
    return 0;
}

static int parse_percentiles(struct goblin_slice v, char *norm, size_t cap,
                             const char **why)
{
    char w[16][64];
    int n = words(v, w, 16);
    size_t len = 0;

    norm[0] = '\0';
    if (n < 0) {
        *why = "Invalid latency-tracking-info-percentiles parameters";
        return GOBLIN_EINVAL;
    }
    for (int i = 0; i < n; i++) {
        char *end;
        double d;

        errno = 0;
        d = strtod(w[i], &end);
        if (errno != 0 || end == w[i] || *end != '\0') {
            *why = "Invalid latency-tracking-info-percentiles parameters";
            return GOBLIN_EINVAL;
        }
        if (!(d >= 0.0 && d <= 100.0)) {
            *why = "latency-tracking-info-percentiles parameters should sit "
                   "between [0.0,100.0]";
            return GOBLIN_EINVAL;
        }
        len += (size_t)snprintf(norm + len, len < cap ? cap - len : 0,
                                "%s%g", i > 0 ? " " : "", d);
    }
    return 0;
}

/* proc-title-template: {variables} Redis knows, and something left once
 * they are expanded with an empty title (Redis's validation). */
static int check_title(struct goblin_slice v, const char **why)
{
    static const char *const vars[] = {"title", "server-mode", "unixsocket",
                                       "config-file", "listen-addr", "port",
                                       "tls-port"};
    const char *p = v.ptr, *end = p + v.len;
    bool shows = false;

    while (p < end) {
        const char *close;
        size_t i;

        if (*p != '{') {
            shows = shows || *p != ' ';
            p++;
            continue;
        }
        close = memchr(p, '}', (size_t)(end - p));
        for (i = 0; close != NULL && i < 7; i++)
            if (eq_nocase(vars[i], strlen(vars[i]), p + 1,
                          (size_t)(close - p - 1)))
                break;
        if (close == NULL || i == 7) {
            *why = "template format is invalid or contains unknown variables";
            return GOBLIN_EINVAL;
        }
        shows = shows || i >= 4;   /* the address and ports are never "" */
        p = close + 1;
    }
    if (!shows) {
        *why = "template format is invalid or contains unknown variables";
        return GOBLIN_EINVAL;
    }
    return 0;
}

static int parse_special(const struct goblin__sdesc *d,
                         struct goblin_slice v, char *norm, size_t cap,
                         const char **why)
{
    const char *p = v.ptr;

    if (strcmp(d->name, "notify-keyspace-events") == 0)
        return parse_notify(v, norm, cap, why);
    if (strcmp(d->name, "oom-score-adj-values") == 0)
        return parse_oom_values(v, norm, cap, why);
    if (strcmp(d->name, "latency-tracking-info-percentiles") == 0)
        return parse_percentiles(v, norm, cap, why);
    if (strcmp(d->name, "proc-title-template") == 0 &&
        check_title(v, why) != 0)
        return GOBLIN_EINVAL;
    if (strcmp(d->name, "cluster-announce-hostname") == 0) {
        for (size_t i = 0; i < v.len; i++) {
            unsigned char c = (unsigned char)p[i];

            if (!(c == '-' || c == '.' || (c >= '0' && c <= '9') ||
                  ((c | 32) >= 'a' && (c | 32) <= 'z'))) {
                *why = "Hostnames may only contain alphanumeric characters, "
                       "hyphens or dots";
                return GOBLIN_EINVAL;
            }
        }
    }
    if (strcmp(d->name, "bind") == 0) {
        char w[GOBLIN__MAX_BIND + 1][64];

        if (words(v, w, GOBLIN__MAX_BIND + 1) > GOBLIN__MAX_BIND) {
            *why = "Too many bind addresses specified.";
            return GOBLIN_EINVAL;
        }
    }
    snprintf(norm, cap, "%.*s", (int)v.len, p);
    return 0;
}

static int parse_memory(const struct goblin__sdesc *d, struct goblin_slice v,
                        char *norm, size_t cap, int64_t *num,
                        const char **why, char *whybuf, size_t whycap)
{
    const char *p = v.ptr;
    uint64_t n;
    int64_t pct;

    if (mem_value(p, v.len, &n)) {
        if ((d->lo > 0 && n < (uint64_t)d->lo) || n > d->hi)
            return range_error(d, why, whybuf, whycap);
        if (strcmp(d->name, "repl-backlog-size") == 0 && n < 16384)
            n = 16384;   /* Redis's smallest backlog */
        snprintf(norm, cap, "%llu", (unsigned long long)n);
        *num = (int64_t)n;
        return 0;
    }
    if ((d->flags & GOBLIN__SF_PERCENT) && v.len > 1 &&
        p[v.len - 1] == '%' && strict_ll(p, v.len - 1, &pct) && pct >= 0) {
        if (pct > 100) {
            *why = "percentage argument must be less or equal to 100";
            return GOBLIN_EINVAL;
        }
        snprintf(norm, cap, "%lld%%", (long long)pct);
        *num = -pct;   /* Redis keeps a percentage as a negative number */
        return 0;
    }
    *why = (d->flags & GOBLIN__SF_PERCENT)
               ? "argument must be a memory or percent value"
               : "argument must be a memory value";
    return GOBLIN_EINVAL;
}

int goblin__sdesc_parse(const struct goblin__sdesc *d, struct goblin_slice v,
                        char *norm, size_t cap, int64_t *num,
                        const char **why, char *whybuf, size_t whycap)
{
    const char *p = v.ptr;
    char text[32], *end;
    int64_t n;

    *num = 0;
    switch (d->type) {
    case GOBLIN__ST_BOOL:
        if (eq_nocase("yes", 3, p, v.len) &&
            strcmp(d->name, "activedefrag") == 0) {
            /* Goblin has no defragmentation: Redis's answer when built
             * without its jemalloc, which Redis's tests look for. */
            *why = "Active defragmentation cannot be enabled: it requires a "
                   "Redis server compiled with a modified Jemalloc like the "
                   "one shipped by default with the Redis source "
                   "distribution";
            return GOBLIN_EINVAL;
        }
        if (eq_nocase("yes", 3, p, v.len) || eq_nocase("no", 2, p, v.len)) {
            *num = v.len == 3;
            snprintf(norm, cap, "%s", *num ? "yes" : "no");
            return 0;
        }
        *why = "argument must be 'yes' or 'no'";
        return GOBLIN_EINVAL;
    case GOBLIN__ST_INT:
        if (!strict_ll(p, v.len, &n)) {
            *why = "argument couldn't be parsed into an integer";
            return GOBLIN_EINVAL;
        }
        if (n < d->lo || (d->hi <= INT64_MAX && n > (int64_t)d->hi))
            return range_error(d, why, whybuf, whycap);
        snprintf(norm, cap, "%lld", (long long)n);
        *num = n;
        return 0;
    case GOBLIN__ST_MEMORY:
        return parse_memory(d, v, norm, cap, num, why, whybuf, whycap);
    case GOBLIN__ST_OCTAL:
        snprintf(text, sizeof(text), "%.*s",
                 (int)(v.len < sizeof(text) ? v.len : sizeof(text) - 1), p);
        errno = 0;
        n = strtoll(text, &end, 8);
        if (v.len >= sizeof(text) || *end != '\0' || errno != 0) {
            *why = "argument couldn't be parsed as an octal number";
            return GOBLIN_EINVAL;
        }
        if (n < d->lo || n > (int64_t)d->hi)
            return range_error(d, why, whybuf, whycap);
        snprintf(norm, cap, "%llo", (unsigned long long)n);
        *num = n;
        return 0;
    case GOBLIN__ST_ENUM:
        return parse_enum(d, v, norm, cap, num, why, whybuf, whycap);
    case GOBLIN__ST_SPECIAL:
        return parse_special(d, v, norm, cap, why);
    default:
        snprintf(norm, cap, "%.*s", (int)v.len, p);
        return 0;
    }
}

int goblin_setting_info(size_t i, struct goblin_setting_info *out)
{
    const struct goblin__sdesc *d;

    if (i >= goblin__nsdescs || out == NULL)
        return GOBLIN_ERANGE;
    d = &goblin__sdescs[i];
    out->name = d->name;
    out->alias = d->alias;
    out->type = goblin__stype_name(d);
    out->choices = d->choices;
    out->def = d->def;
    out->immutable = (d->flags & GOBLIN__SF_IMMUTABLE) != 0;
    out->acts = (d->flags & (GOBLIN__SF_ENGINE | GOBLIN__SF_SERVER)) != 0;
    out->goblin = (d->flags & GOBLIN__SF_GOBLIN) != 0;
    return 0;
}
