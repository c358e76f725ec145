/* ring_options.c - goblind's ring options (--ring PATH SIZE, --ring-cpus,
 * --ring-idle, --ring-spin-us, --ring-perm), from the command line or the
 * config file, and the read-only settings CONFIG GET shows for them.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ring_poll.h"

struct goblind_rings *goblind_rings_of(struct goblind *g)
{
    if (g->rings == NULL && (g->rings = calloc(1, sizeof(*g->rings)))) {
        g->rings->idle = GOBLIN_RING_IDLE_BACKOFF;
        g->rings->spin_us = 50;
        g->rings->perm = 0600;
    }
    return g->rings;
}

/* ---- options ---- */

/* "0,2-3" into cpus[]; -1 on bad text. */
static int parse_cpus(struct goblind_rings *rs, const char *text)
{
    int n = 0;
    const char *p = text;

    while (*p != '\0') {
        char *end;
        long lo = strtol(p, &end, 10), hi = lo;

        if (end == p || lo < 0 || lo >= CPU_SETSIZE)
            return -1;
        if (*end == '-') {
            p = end + 1;
            hi = strtol(p, &end, 10);
            if (end == p || hi < lo || hi >= CPU_SETSIZE)
                return -1;
        }
        for (long c = lo; c <= hi && n < RING_MAX_CPUS; c++)
            rs->cpus[n++] = (int)c;
        p = *end == ',' ? end + 1 : end;
        if (*end != ',' && *end != '\0')
            return -1;
    }
    rs->ncpus = n;
    return n > 0 ? 0 : -1;
}

static int add_ring(struct goblind_rings *rs, const char *path,
                    const char *size, const char **why)
{
    struct ring_ep *v;
    uint64_t bytes;

    *why = "size must be bytes or a number with k, m or g";
    if (path[0] == '\0' ||
        goblin_ring_size_parse(size, strlen(size), &bytes) < 0)
        return -1;
    *why = "out of memory";
    v = realloc(rs->v, sizeof(*v) * (size_t)(rs->n + 1));
    if (v == NULL)
        return -1;
    rs->v = v;
    v[rs->n] = (struct ring_ep){.path = strdup(path), .size = bytes};
    if (v[rs->n].path == NULL)
        return -1;
    rs->n++;
    return 0;
}

static int parse_long(const char *text, int base, long lo, long hi,
                      long *out)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(text, &end, base);
    if (errno != 0 || end == text || *end != '\0' || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static int ring_setting(struct goblind_rings *rs, const char *name,
                        const char *arg, const char **why)
{
    *why = "bad value";
    if (strcasecmp(name, "ring-cpus") == 0) {
        if (parse_cpus(rs, arg) < 0)
            return -1;
        free(rs->cpus_text);
        rs->cpus_text = strdup(arg);
        return 0;
    }
    if (strcasecmp(name, "ring-idle") == 0) {
        *why = "argument must be spin or backoff";
        if (strcasecmp(arg, "spin") != 0 && strcasecmp(arg, "backoff") != 0)
            return -1;
        rs->idle = strcasecmp(arg, "spin") == 0 ? GOBLIN_RING_IDLE_SPIN
                                                : GOBLIN_RING_IDLE_BACKOFF;
        return 0;
    }
    if (strcasecmp(name, "ring-spin-us") == 0)
        return parse_long(arg, 10, 0, 60000000, &rs->spin_us);
    return parse_long(arg, 8, 0, 0777, &rs->perm);       /* ring-perm */
}

int goblind_ring_option(struct goblind *g, int argc, const char *const *argv,
                        const char **why)
{
    static const char *const names[] = {"ring", "ring-cpus", "ring-idle",
                                        "ring-spin-us", "ring-perm"};
    struct goblind_rings *rs;
    size_t i = 0;

    while (i < 5 && strcasecmp(argv[0], names[i]) != 0)
        i++;
    if (i == 5)
        return 1;
    *why = "wrong number of arguments";
    if (argc != (i == 0 ? 3 : 2))
        return -1;
    *why = "out of memory";
    if ((rs = goblind_rings_of(g)) == NULL)
        return -1;
    if (i == 0)
        return add_ring(rs, argv[1], argv[2], why);
    return ring_setting(rs, argv[0], argv[1], why);
}

/* ---- settings (read-only; CONFIG GET shows them) ---- */

static int show(void *ctx, char *buf, size_t cap)
{
    size_t len = strlen(ctx);

    len = len < cap ? len : cap;
    memcpy(buf, ctx, len);
    return (int)len;
}

static void setting_texts(struct goblind_rings *rs)
{
    size_t len = 0, cap = sizeof(rs->setting[0]);

    for (int i = 0; i < rs->n && len < cap; i++)
        len += (size_t)snprintf(rs->setting[0] + len, cap - len,
                                "%s%s %llu", i > 0 ? " " : "",
                                rs->v[i].path,
                                (unsigned long long)rs->v[i].size);
    snprintf(rs->setting[1], cap, "%s",
             rs->cpus_text != NULL ? rs->cpus_text : "");
    snprintf(rs->setting[2], cap, "%s",
             rs->idle == GOBLIN_RING_IDLE_SPIN ? "spin" : "backoff");
    snprintf(rs->setting[3], cap, "%ld", rs->spin_us);
    snprintf(rs->setting[4], cap, "%lo", rs->perm);
}

int goblind_ring_register_settings(struct goblind *g)
{
    static const char *const names[] = {"ring", "ring-cpus", "ring-idle",
                                        "ring-spin-us", "ring-perm"};
    struct goblind_rings *rs = goblind_rings_of(g);
    int rc;

    if (rs == NULL)
        return GOBLIN_ENOMEM;
    setting_texts(rs);
    for (int i = 0; i < 5; i++) {
        struct goblin_setting s = {names[i], NULL, show, NULL,
                                   rs->setting[i]};
        if ((rc = goblin_engine_setting_add(g->engine, &s)) < 0)
            return rc;
    }
    return 0;
}
