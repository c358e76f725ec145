/* ops.h - the request/reply ops the benchmarks time and count (shootout.c,
 * icount.c), and the data they act on, in one place so every benchmark
 * measures the same work.
 *
 * Data: a one-byte key "s" holding a 16-byte value, a 10-field hash "h"
 * (f0 v0 ... f9 v9), a 10-member sorted set "z" (f0 ... f9 scored
 * 1.1 ... 10.1), the same ten fields and members for the all-at-once ops
 * (HSET10, ZADD10 on "h10", "z10"), and "k0001" (GET5, a 5-byte key).
 * Writes update and nothing grows: a ZADD alternates between two scores
 * that keep f5 between f4 (5.1) and f6 (7.1), so every write really
 * changes a value.
 *
 * c_* ops go through a client (on a ring or a pipelined session they
 * only queue), a_* ops call the store's C API. Each returns a negative
 * code on failure. Call ops_data_init() once first.
 */
#ifndef GOBLIN_BENCH_OPS_H
#define GOBLIN_BENCH_OPS_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "goblin.h"

#define KEY(s) ((struct goblin_slice){ (s), sizeof(s) - 1 })

/* What an op needs: a client (client, session rows) or a store (capi). */
struct ctx {
    goblin_client *c;
    goblin_store *st;
    goblin_ring_endpoint *ep; /* icount's ring rows: stepped by hand */
    unsigned i;               /* round trips so far: writes alternate */
};

typedef int op_fn(struct ctx *x);

static const char value16[] = "0123456789abcdef";
static struct goblin_slice fv10[20]; /* f0 v0 ... f9 v9 */
static struct goblin_slice members10[10];
static double scores10[10];
static char fv_text[20][4];

static inline void ops_data_init(void)
{
    for (int j = 0; j < 10; j++) {
        snprintf(fv_text[2 * j], 4, "f%d", j);
        snprintf(fv_text[2 * j + 1], 4, "v%d", j);
        fv10[2 * j] = (struct goblin_slice){ fv_text[2 * j], 2 };
        fv10[2 * j + 1] = (struct goblin_slice){ fv_text[2 * j + 1], 2 };
        members10[j] = (struct goblin_slice){ fv_text[2 * j], 2 };
        scores10[j] = j + 1.1;
    }
}

/* A ZADD score for f5 that changes every time but keeps its rank. */
static inline double zscore_next(struct ctx *x)
{
    return (x->i++ & 1) ? 5.5 : 5.75;
}

/* ---- through a client ---- */

static inline int c_ping(struct ctx *x) { return goblin_client_ping(x->c); }

static inline int c_set(struct ctx *x)
{
    return goblin_client_set(x->c, KEY("s"), KEY(value16), NULL);
}

static inline int c_get(struct ctx *x)
{
    struct goblin_slice v;

    return goblin_client_get(x->c, KEY("s"), &v);
}

static inline int c_get5(struct ctx *x)
{
    struct goblin_slice v;

    return goblin_client_get(x->c, KEY("k0001"), &v);
}

static inline int c_hset(struct ctx *x)
{
    return (int)goblin_client_hset(x->c, KEY("h"), &fv10[10], 1);
}

static inline int c_hget(struct ctx *x)
{
    struct goblin_slice v;

    return goblin_client_hget(x->c, KEY("h"), KEY("f5"), &v);
}

static inline int c_zadd(struct ctx *x)
{
    double s = zscore_next(x);

    return (int)goblin_client_zadd(x->c, KEY("z"), &s, &members10[5], 1, 0);
}

static inline int c_zscore(struct ctx *x)
{
    double s;

    return goblin_client_zscore(x->c, KEY("z"), KEY("f5"), &s);
}

static inline int c_zrank(struct ctx *x)
{
    int64_t r;

    return goblin_client_zrank(x->c, KEY("z"), KEY("f5"), 0, &r);
}

static inline int c_zrange(struct ctx *x)
{
    const struct goblin_client_member *m;

    return (int)goblin_client_zrange(x->c, KEY("z"), 0, 9, 0, &m);
}

static inline int c_hset10(struct ctx *x)
{
    return (int)goblin_client_hset(x->c, KEY("h10"), fv10, 10);
}

static inline int c_zadd10(struct ctx *x)
{
    scores10[5] = zscore_next(x);
    return (int)goblin_client_zadd(x->c, KEY("z10"), scores10, members10, 10,
                                   0);
}

/* ---- scripts: EVALSHA and FCALL of the same three commands ----
 * GET, INCR and EXPIRE on one key ("n"), as a script in the EVAL cache
 * and as function bench3 of library "bench". ops_scripts_init() computes
 * the script's SHA-1 once; c_script_load and c_function_load (SCRIPT
 * LOAD, FUNCTION LOAD REPLACE) put both into the server first. */

#define SCRIPT3_BODY                                                      \
    "redis.call('GET', KEYS[1]) "                                         \
    "local n = redis.call('INCR', KEYS[1]) "                              \
    "redis.call('EXPIRE', KEYS[1], 3600) return n"
static const char script3[] = SCRIPT3_BODY;
static const char library3[] =
    "#!lua name=bench\n"
    "redis.register_function('bench3', function(KEYS, ARGV) " SCRIPT3_BODY
    " end)";
static char script3_sha[41];

/* 0, or a negative code (also for an error reply; in a pipeline the call
 * only queues and leaves *r alone). */
static inline int call_ok(struct ctx *x, size_t argc,
                          const struct goblin_slice *argv)
{
    const struct goblin_resp_value *r = NULL;
    int rc = goblin_client_call(x->c, argc, argv, &r);

    if (rc < 0)
        return rc;
    return r != NULL && r->type == GOBLIN_RESP_ERROR ? GOBLIN_EINVAL : 0;
}

static inline void ops_scripts_init(void)
{
    goblin_sha1_hex(script3_sha, script3, sizeof(script3) - 1);
}

static inline int c_script_load(struct ctx *x)
{
    const struct goblin_slice argv[] = { KEY("SCRIPT"), KEY("LOAD"),
                                         KEY(script3) };

    return call_ok(x, 3, argv);
}

static inline int c_function_load(struct ctx *x)
{
    const struct goblin_slice argv[] = { KEY("FUNCTION"), KEY("LOAD"),
                                         KEY("REPLACE"), KEY(library3) };

    return call_ok(x, 4, argv);
}

static inline int c_evalsha(struct ctx *x)
{
    const struct goblin_slice argv[] = {
        KEY("EVALSHA"), { script3_sha, 40 }, KEY("1"), KEY("n") };

    return call_ok(x, 4, argv);
}

static inline int c_fcall(struct ctx *x)
{
    const struct goblin_slice argv[] = { KEY("FCALL"), KEY("bench3"),
                                         KEY("1"), KEY("n") };

    return call_ok(x, 4, argv);
}

/* ---- the store's C API ---- */

static inline int a_set(struct ctx *x)
{
    return goblin_str_set(x->st, KEY("s"), KEY(value16), NULL, NULL);
}

static inline int a_get(struct ctx *x)
{
    struct goblin_slice v;

    return goblin_str_get(x->st, KEY("s"), &v);
}

static inline int a_get5(struct ctx *x)
{
    struct goblin_slice v;

    return goblin_str_get(x->st, KEY("k0001"), &v);
}

static inline int a_hset(struct ctx *x)
{
    return goblin_hash_set(x->st, KEY("h"), &fv10[10], 1);
}

static inline int a_hget(struct ctx *x)
{
    struct goblin_slice v;

    return goblin_hash_get(x->st, KEY("h"), KEY("f5"), &v);
}

static inline int a_zadd(struct ctx *x)
{
    return goblin_zset_add(x->st, KEY("z"), members10[5], zscore_next(x));
}

static inline int a_zscore(struct ctx *x)
{
    double s;

    return goblin_zset_score(x->st, KEY("z"), KEY("f5"), &s);
}

static inline int a_zrank(struct ctx *x)
{
    int64_t r;

    return goblin_zset_rank(x->st, KEY("z"), KEY("f5"), 0, &r, NULL);
}

static inline int a_zrange(struct ctx *x)
{
    struct goblin_zrange r = { 0 };
    struct goblin_zset_iter it;
    struct goblin_slice m;
    double s;
    int64_t n;
    int k = 0;

    r.by = GOBLIN_ZRANGE_BY_RANK;
    r.start = 0;
    r.stop = 9;
    n = goblin_zset_range(x->st, KEY("z"), &r, &it);
    if (n < 0)
        return (int)n;
    while (goblin_zset_next(&it, &m, &s) == 1)
        k++;
    return k == n ? k : GOBLIN_EINVAL;
}

static inline int a_hset10(struct ctx *x)
{
    return goblin_hash_set(x->st, KEY("h10"), fv10, 10);
}

static inline int a_zadd10(struct ctx *x)
{
    struct goblin_zpair p[10];

    scores10[5] = zscore_next(x);
    for (int j = 0; j < 10; j++)
        p[j] = (struct goblin_zpair){ scores10[j], members10[j] };
    return (int)goblin_zset_add_pairs(x->st, KEY("z10"), 0, p, 10);
}

/* Whether name is in the comma-separated list (NULL: all). */
static inline bool wanted(const char *list, const char *name)
{
    size_t n = strlen(name);

    for (const char *p = list; p != NULL && *p != '\0';) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);

        if (len == n && strncasecmp(p, name, n) == 0)
            return true;
        p = e ? e + 1 : NULL;
    }
    return list == NULL;
}

#endif
