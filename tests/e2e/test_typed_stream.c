/* test_typed_stream.c - typed SBE writes on goblind's write stream (run
 * by run_typed_stream.py with: RING_A MONITOR_RING_A SOCKET_B).
 *
 * Each step is a request as RESP words. It goes to server A as the
 * typed SBE request of goblin/client.h over ring A, and to server B as
 * those words over its Unix socket (RESP2). Both servers keep an AOF and
 * have a redis-server replica; the driver then compares the AOF files
 * byte for byte and the replicas' contents. A MONITOR on A's second ring
 * (RESP through the raw ring API) must show each typed request as the
 * line of its words, in Redis's format.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "goblin.h"
#include "goblin/client.h"
#include "goblin/ring.h"

static int failures;

#define CHECK(cond)                                                       \
    do {                                                                  \
        if (!(cond)) {                                                    \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__,        \
                    __LINE__, #cond);                                     \
            failures++;                                                   \
        }                                                                 \
    } while (0)

#define MAXW 12

/* The requests, NULL-ended words; every one a write or a read the
 * typed client API has. Deadlines are absolute, so that both servers
 * stream the same bytes. */
static const char *const steps[][MAXW] = {
    {"SET", "s1", "v1"},
    {"SET", "s2", "hello world"},
    {"SET", "s1", "v2", "XX"},
    {"SET", "s3", "x", "NX"},
    {"SET", "s4", "t", "PXAT", "4102444800000"},
    {"SET", "s5", "t", "EXAT", "4102444800"},
    {"INCRBY", "n", "5"},
    {"INCRBY", "n", "-12"},
    {"HSET", "h", "f1", "a", "f2", "b"},
    {"HSET", "h", "f1", "c"},
    {"HDEL", "h", "f2", "nope"},
    {"ZADD", "z", "1.5", "a", "2", "b", "-0.25", "c"},
    {"ZADD", "z", "XX", "CH", "3", "a"},
    {"ZADD", "z", "NX", "10", "d"},
    {"ZINCRBY", "z", "0.5", "b"},
    {"ZREM", "z", "c", "zz"},
    {"LPUSH", "l", "a", "b", "c"},
    {"RPUSH", "l", "d"},
    {"LPOP", "l", "2"},
    {"RPOP", "l", "1"},
    {"SADD", "t", "x", "y", "z", "1"},
    {"SREM", "t", "y"},
    {"DEL", "s2", "missing"},
    {"GET", "s1"},
    {"HGET", "h", "f1"},
    {"ZSCORE", "z", "a"},
    {"PTTL", "s4"},
};

#define NSTEPS (sizeof(steps) / sizeof(steps[0]))

static struct goblin_slice S(const char *s)
{
    return (struct goblin_slice){s, strlen(s)};
}

static int count_words(const char *const *w)
{
    int n = 0;

    while (n < MAXW && w[n] != NULL)
        n++;
    return n;
}

static bool is(const char *a, const char *b)
{
    return strcmp(a, b) == 0;
}

/* Step w as a typed request of goblin/client.h; false when it failed. */
static bool typed(goblin_client *c, const char *const *w, int n)
{
    struct goblin_slice v[MAXW];
    const struct goblin_slice *out;
    double scores[MAXW];
    int64_t r;
    int i, k = 0;

    for (i = 0; i < n; i++)
        v[i] = S(w[i]);
    if (is(w[0], "SET")) {
        struct goblin_set_options o = {GOBLIN_SET_ALWAYS, GOBLIN_TTL_DEFAULT,
                                       0, 0};

        for (i = 3; i < n; i++) {
            if (is(w[i], "NX"))
                o.cond = GOBLIN_SET_NX;
            else if (is(w[i], "XX"))
                o.cond = GOBLIN_SET_XX;
            else if (is(w[i], "PXAT"))
                o.ttl = GOBLIN_TTL_PXAT, o.ttl_value = atoll(w[++i]);
            else if (is(w[i], "EXAT"))
                o.ttl = GOBLIN_TTL_EXAT, o.ttl_value = atoll(w[++i]);
        }
        return goblin_client_set(c, v[1], v[2], &o) >= 0;
    }
    if (is(w[0], "INCRBY"))
        return goblin_client_incrby(c, v[1], atoll(w[2]), &r) == 0;
    if (is(w[0], "HSET"))
        return goblin_client_hset(c, v[1], v + 2, (size_t)(n - 2) / 2) >= 0;
    if (is(w[0], "HDEL"))
        return goblin_client_hdel(c, v[1], v + 2, (size_t)(n - 2)) >= 0;
    if (is(w[0], "ZADD")) {
        int flags = 0;
        struct goblin_slice m[MAXW];

        for (i = 2; i < n && (w[i][0] < '0' || w[i][0] > '9') &&
                    w[i][0] != '-';
             i++)
            flags |= is(w[i], "NX")   ? GOBLIN_ZADD_NX
                     : is(w[i], "XX") ? GOBLIN_ZADD_XX
                     : is(w[i], "GT") ? GOBLIN_ZADD_GT
                     : is(w[i], "LT") ? GOBLIN_ZADD_LT
                                      : GOBLIN_ZADD_CH;
        for (; i + 1 < n; i += 2, k++) {
            scores[k] = strtod(w[i], NULL);
            m[k] = v[i + 1];
        }
        return goblin_client_zadd(c, v[1], scores, m, (size_t)k, flags) >= 0;
    }
    if (is(w[0], "ZINCRBY"))
        return goblin_client_zincrby(c, v[1], v[3], strtod(w[2], NULL),
                                     &scores[0]) == 0;
    if (is(w[0], "ZREM"))
        return goblin_client_zrem(c, v[1], v + 2, (size_t)(n - 2)) >= 0;
    if (is(w[0], "LPUSH"))
        return goblin_client_lpush(c, v[1], v + 2, (size_t)(n - 2)) >= 0;
    if (is(w[0], "RPUSH"))
        return goblin_client_rpush(c, v[1], v + 2, (size_t)(n - 2)) >= 0;
    if (is(w[0], "LPOP"))
        return goblin_client_lpop(c, v[1], atoll(w[2]), &out) >= 0;
    if (is(w[0], "RPOP"))
        return goblin_client_rpop(c, v[1], atoll(w[2]), &out) >= 0;
    if (is(w[0], "SADD"))
        return goblin_client_sadd(c, v[1], v + 2, (size_t)(n - 2)) >= 0;
    if (is(w[0], "SREM"))
        return goblin_client_srem(c, v[1], v + 2, (size_t)(n - 2)) >= 0;
    if (is(w[0], "DEL"))
        return goblin_client_del(c, v + 1, (size_t)(n - 1)) >= 0;
    if (is(w[0], "GET"))
        return goblin_client_get(c, v[1], &v[0]) >= 0;
    if (is(w[0], "HGET"))
        return goblin_client_hget(c, v[1], v[2], &v[0]) >= 0;
    if (is(w[0], "ZSCORE"))
        return goblin_client_zscore(c, v[1], v[2], &scores[0]) >= 0;
    if (is(w[0], "PTTL"))
        return goblin_client_pttl(c, v[1]) >= -2;
    fprintf(stderr, "no typed call for %s\n", w[0]);
    return false;
}

/* The MONITOR line of words w after its "+<time> [<db> <origin>] ". */
static void line_of(const char *const *w, int n, char *out, size_t cap)
{
    size_t len = 0;

    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(out + len, cap - len, "%s\"%s\"",
                                i ? " " : "", w[i]);
    snprintf(out + len, cap - len, "\r\n");
}

static goblin_client *connect_ring(const char *path)
{
    struct goblin_client_config cfg = {0};
    goblin_client *c = NULL;
    int rc = GOBLIN_EBUSY;

    cfg.protocol = GOBLIN_CLIENT_SBE;
    cfg.timeout_ms = 10000;
    for (int i = 0; i < 200 && rc == GOBLIN_EBUSY; i++) {
        rc = goblin_client_connect_ring(path, &cfg, &c);
        if (rc == GOBLIN_EBUSY)
            nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
    }
    return rc == 0 ? c : NULL;
}

/* Everything ring r's CQ holds now, appended to got. */
static void drain(goblin_ring *r, char *got, size_t cap, size_t *n)
{
    struct goblin_slice rec;

    while (goblin_ring_peek(r, &rec) == GOBLIN_RING_RECORD) {
        if (*n + rec.len <= cap) {
            memcpy(got + *n, rec.ptr, rec.len);
            *n += rec.len;
        }
        goblin_ring_release(r);
    }
}

int main(int argc, char **argv)
{
    static const char mon[] = "*1\r\n$7\r\nMONITOR\r\n";
    static char got[1 << 16];
    struct goblin_client_config cfg = {0};
    goblin_client *a, *b = NULL;
    goblin_ring *m = NULL;
    size_t n = 0, i;
    int rc = GOBLIN_EBUSY;

    if (argc < 4) {
        fprintf(stderr, "usage: test_typed_stream RING_A MONITOR_RING SOCKET_B\n");
        return 2;
    }
    for (int t = 0; t < 200 && rc == GOBLIN_EBUSY; t++) {
        rc = goblin_ring_open(argv[2], NULL, &m);
        if (rc == GOBLIN_EBUSY)
            nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
    }
    a = connect_ring(argv[1]);
    cfg.protocol = GOBLIN_CLIENT_RESP2;
    cfg.timeout_ms = 10000;
    CHECK(goblin_client_connect_unix(argv[3], &cfg, &b) == 0);
    CHECK(rc == 0 && a != NULL && b != NULL);
    if (rc != 0 || a == NULL || b == NULL)
        return 1;
    CHECK(goblin_ring_publish(m, mon, sizeof(mon) - 1) == 0);
    goblin_ring_flush(m);
    for (int t = 0; t < 5000 && n < 5; t++) {
        drain(m, got, sizeof(got), &n);
        if (n < 5)
            nanosleep(&(struct timespec){0, 1000 * 1000}, NULL);
    }
    CHECK(n >= 5 && memcmp(got, "+OK\r\n", 5) == 0);
    for (i = 0; i < NSTEPS; i++) {
        struct goblin_slice v[MAXW];
        const struct goblin_resp_value *reply;
        int k = count_words(steps[i]);

        for (int j = 0; j < k; j++)
            v[j] = S(steps[i][j]);
        if (!typed(a, steps[i], k)) {
            fprintf(stderr, "typed %s failed: %s\n", steps[i][0],
                    goblin_client_error(a));
            failures++;
        }
        CHECK(goblin_client_call(b, (size_t)k, v, &reply) == 0 &&
              reply->type != GOBLIN_RESP_ERROR);
    }
    /* Every typed request reached the monitor as its words' line. */
    for (i = 0; i < NSTEPS; i++) {
        char line[512];
        const char *at = NULL;

        line_of(steps[i], count_words(steps[i]), line, sizeof(line));
        for (int t = 0; t < 5000 && at == NULL; t++) {
            drain(m, got, sizeof(got), &n);
            at = memmem(got, n, line, strlen(line));
            if (at == NULL)
                nanosleep(&(struct timespec){0, 1000 * 1000}, NULL);
        }
        if (at == NULL) {
            fprintf(stderr, "no MONITOR line %s", line);
            failures++;
        }
    }
    CHECK(memmem(got, n, "+", 1) != NULL && memmem(got, n, " [0 ", 4));
    goblin_ring_close(m);
    goblin_client_close(a);
    goblin_client_close(b);
    printf("%s\n", failures == 0 ? "ok" : "FAILED");
    return failures == 0 ? 0 : 1;
}
