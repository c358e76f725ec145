/* ring_set.c - rings configured by directives (goblin/serve.h, "ring
 * sets"): ring PATH SIZE, ring-cpus, ring-idle, ring-spin-us and
 * ring-perm, from a command line or a config file; the read-only
 * settings CONFIG GET shows for them; their endpoints, and one poller per
 * ring-cpus CPU (or one) with ring i on poller i mod the count.
 */
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <goblin/serve.h>

#include "util/config_size.h"

#define MAX_CPUS 64
#define NSETTINGS 5

struct ring_ep {
    char *path;
    uint64_t size;
    goblin_ring_endpoint *ep;    /* NULL until opened */
};

struct goblin_ring_set {
    struct ring_ep *v;           /* every ring, in order */
    int n;
    goblin_ring_poller **pollers;
    int npollers;
    char *cpus_text;
    int cpus[MAX_CPUS];
    int ncpus;
    int idle;                    /* GOBLIN_RING_IDLE_SPIN or _BACKOFF */
    long spin_us;
    long perm;
    char setting[NSETTINGS][GOBLIN_SETTING_VALUE_MAX];
};

/* The ring directives, as --help shows them: name, type and what follows
 * the value (an enum's choices, or what the value is). The defaults shown
 * are a fresh set's values (goblin_ring_set_usage). */
static const struct {
    const char *name, *type, *tail;
} info[NSETTINGS] = {
    {"ring", "special", "  (PATH SIZE; once per ring)"},
    {"ring-cpus", "special", "  (CPU list: a poller per CPU)"},
    {"ring-idle", "enum", " of spin|backoff"},
    {"ring-spin-us", "integer", ""},
    {"ring-perm", "octal", ""},
};

int goblin_ring_set_new(goblin_ring_set **out)
{
    goblin_ring_set *rs = calloc(1, sizeof(*rs));

    *out = rs;
    if (rs == NULL)
        return GOBLIN_ENOMEM;
    rs->idle = GOBLIN_RING_IDLE_BACKOFF;
    rs->spin_us = 50;
    rs->perm = 0600;
    return 0;
}

/* ---- directives ---- */

/* "0,2-3" into cpus[]; -1 on bad text. */
static int parse_cpus(goblin_ring_set *rs, const char *text)
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
        for (long c = lo; c <= hi && n < MAX_CPUS; c++)
            rs->cpus[n++] = (int)c;
        p = *end == ',' ? end + 1 : end;
        if (*end != ',' && *end != '\0')
            return -1;
    }
    rs->ncpus = n;
    return n > 0 ? 0 : -1;
}

static int add_ring(goblin_ring_set *rs, const char *path, const char *size,
                    const char **why)
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

int goblin_ring_set_directive(goblin_ring_set *rs, int argc,
                              const char *const *argv, const char **why)
{
    size_t i = 0;
    char *copy;

    while (i < NSETTINGS && strcasecmp(argv[0], info[i].name) != 0)
        i++;
    if (i == NSETTINGS)
        return 1;
    *why = "wrong number of arguments";
    if (argc != (i == 0 ? 3 : 2))
        return -1;
    *why = "bad value";
    switch (i) {
    case 0:
        return add_ring(rs, argv[1], argv[2], why);
    case 1:
        if (parse_cpus(rs, argv[1]) < 0 || (copy = strdup(argv[1])) == NULL)
            return -1;
        free(rs->cpus_text);
        rs->cpus_text = copy;
        return 0;
    case 2:
        *why = "argument must be spin or backoff";
        if (strcasecmp(argv[1], "spin") != 0 &&
            strcasecmp(argv[1], "backoff") != 0)
            return -1;
        rs->idle = strcasecmp(argv[1], "spin") == 0
                       ? GOBLIN_RING_IDLE_SPIN
                       : GOBLIN_RING_IDLE_BACKOFF;
        return 0;
    case 3:
        return parse_long(argv[1], 10, 0, 60000000, &rs->spin_us);
    default:
        return parse_long(argv[1], 8, 0, 0777, &rs->perm);
    }
}

/* ---- settings (read-only; CONFIG GET shows them) ---- */

static int show(void *ctx, char *buf, size_t cap)
{
    size_t len = strlen(ctx);

    len = len < cap ? len : cap;
    memcpy(buf, ctx, len);
    return (int)len;
}

/* The five settings' texts, as CONFIG GET and --help show them. */
static void describe(goblin_ring_set *rs)
{
    size_t len = 0, cap = sizeof(rs->setting[0]);

    rs->setting[0][0] = '\0';
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

int goblin_ring_set_settings(goblin_ring_set *rs, goblin_engine *eng)
{
    int rc;

    describe(rs);
    for (int i = 0; i < NSETTINGS; i++) {
        struct goblin_setting s = {info[i].name, NULL, show, NULL,
                                   rs->setting[i]};
        if ((rc = goblin_engine_setting_add(eng, &s)) < 0)
            return rc;
    }
    return 0;
}

void goblin_ring_set_usage(FILE *f)
{
    goblin_ring_set *rs;

    if (goblin_ring_set_new(&rs) < 0)
        return;
    describe(rs);
    for (int i = 0; i < NSETTINGS; i++)
        fprintf(f, "  --%-26s %-8s \"%s\"%s\n", info[i].name, info[i].type,
                rs->setting[i], info[i].tail);
    goblin_ring_set_close(rs);
}

/* ---- endpoints and pollers ---- */

static void say(const struct goblin_ring_set_config *cfg,
                enum goblin_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void say(const struct goblin_ring_set_config *cfg,
                enum goblin_log_level level, const char *fmt, ...)
{
    char text[512];
    va_list ap;

    if (cfg->log == NULL)
        return;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    cfg->log(cfg->log_ctx, level, text);
}

static int open_endpoint(goblin_ring_set *rs,
                         const struct goblin_ring_set_config *sc,
                         struct ring_ep *e)
{
    struct goblin_ring_endpoint_config cfg = {0};
    struct goblin_ring_config ring = {0};
    int rc;

    cfg.engine = sc->engine;
    cfg.path = e->path;
    ring.sq_size = ring.cq_size = e->size;
    ring.mode = (unsigned)rs->perm;
    ring.idle = rs->idle;
    ring.spin_ns = rs->spin_us > 0 ? (uint64_t)rs->spin_us * 1000 : 1;
    cfg.ring = &ring;
    cfg.no_sbe = sc->no_sbe;
    cfg.lock = sc->lock;
    cfg.unlock = sc->unlock;
    cfg.lock_ctx = sc->lock_ctx;
    cfg.log = sc->log;
    cfg.log_ctx = sc->log_ctx;
    if ((rc = goblin_ring_endpoint_open(&cfg, &e->ep)) < 0)
        return rc;                       /* the endpoint logged why */
    say(sc, GOBLIN_LOG_NOTICE, "Ring ready at %s (%llu bytes each way, %s)",
        e->path, (unsigned long long)goblin_ring_capacity(e->size),
        rs->idle == GOBLIN_RING_IDLE_SPIN ? "spin" : "backoff");
    return 0;
}

/* One poller per ring-cpus CPU (at most one per ring), or one. */
static int make_pollers(goblin_ring_set *rs)
{
    int np = rs->ncpus > 0 ? rs->ncpus : 1;
    goblin_ring_endpoint *eps[GOBLIN_RING_WAIT_MAX];
    int rc;

    np = np < rs->n ? np : rs->n;
    if ((rs->pollers = calloc((size_t)np, sizeof(*rs->pollers))) == NULL)
        return GOBLIN_ENOMEM;
    rs->npollers = np;
    for (int t = 0; t < np; t++) {
        struct goblin_ring_poller_config cfg = {
            eps, 0, rs->idle, (uint64_t)rs->spin_us * 1000};

        for (int i = t; i < rs->n; i += np)
            eps[cfg.n++] = rs->v[i].ep;
        if ((rc = goblin_ring_poller_open(&cfg, &rs->pollers[t])) < 0)
            return rc;
    }
    return 0;
}

int goblin_ring_set_open_sized(goblin_ring_set *rs,
                               const struct goblin_ring_set_config *in,
                               size_t in_size)
{
    struct goblin_ring_set_config c;
    const struct goblin_ring_set_config *cfg = &c;
    int rc;

    if (in == NULL || goblin__config_copy(&c, sizeof(c), in, in_size,
                                          sizeof(in->engine)) != 0)
        return GOBLIN_EINVAL;
    if (rs->n == 0)
        return 0;
    if (rs->n > GOBLIN_RING_WAIT_MAX * (rs->ncpus > 0 ? rs->ncpus : 1)) {
        say(cfg, GOBLIN_LOG_WARNING, "Too many rings: at most %d per ring "
            "thread", GOBLIN_RING_WAIT_MAX);
        return GOBLIN_EINVAL;
    }
    for (int i = 0; i < rs->n; i++)
        if ((rc = open_endpoint(rs, cfg, &rs->v[i])) < 0)
            return rc;
    if ((rc = make_pollers(rs)) < 0)
        say(cfg, GOBLIN_LOG_WARNING, "Can't start the ring threads: out of "
            "memory");
    return rc;
}

int goblin_ring_set_npollers(const goblin_ring_set *rs)
{
    return rs != NULL ? rs->npollers : 0;
}

goblin_ring_poller *goblin_ring_set_poller(goblin_ring_set *rs, int i,
                                           int *cpu)
{
    *cpu = rs->ncpus > 0 ? rs->cpus[i] : -1;
    return rs->pollers[i];
}

void goblin_ring_set_close(goblin_ring_set *rs)
{
    if (rs == NULL)
        return;
    for (int t = 0; t < rs->npollers; t++)
        goblin_ring_poller_close(rs->pollers[t]);
    for (int i = 0; i < rs->n; i++) {
        goblin_ring_endpoint_close(rs->v[i].ep);   /* removes the file */
        free(rs->v[i].path);
    }
    free(rs->pollers);
    free(rs->v);
    free(rs->cpus_text);
    free(rs);
}
