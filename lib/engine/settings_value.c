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
 *   special  its own syntax: the descriptor's parser (settings_special.c:
 *            notify-keyspace-events, save, client-output-buffer-limit,
 *            bind, ...), which a string may also name (dir, dbfilename).
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

bool goblin__strict_ll(const char *p, size_t n, int64_t *out)
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
        p[v.len - 1] == '%' && goblin__strict_ll(p, v.len - 1, &pct) &&
        pct >= 0) {
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
    if (d->parse != NULL)
        return d->parse(v, norm, cap, why);
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
        if (!goblin__strict_ll(p, v.len, &n)) {
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
