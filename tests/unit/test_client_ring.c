/* test_client_ring.c - the client over a shared-memory ring: libgoblin's
 * ring endpoint (goblin/serve.h) serves an in-process engine from a
 * thread, and the client makes typed calls (lists and sets too) over SBE,
 * RESP2 and RESP3 and pipelines far deeper than the 4 KiB queues (so the
 * endpoint's full-CQ path runs). Exits 77 (skip) without /dev/shm. */
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "test_commands_util.h"

#include "client/client.h"
#include "goblin/client.h"
#include "goblin/ring.h"
#include "goblin/serve.h"

struct server {
    struct cfix *f;
    goblin_ring_endpoint *ep;  /* NULL without shared memory: skip */
    atomic_bool stop;
    pthread_t thread;
    char path[64];
};

/* The server thread: libgoblin's ring endpoint, stepped until idle, then
 * waiting on its ring (goblin/serve.h). */
static void *serve(void *arg)
{
    struct server *sv = arg;

    while (!atomic_load(&sv->stop)) {
        goblin_ring *r;

        if (goblin_ring_endpoint_step(sv->ep) != 0)
            continue;
        r = goblin_ring_endpoint_ring(sv->ep);
        if (r != NULL)
            goblin_ring_wait_any(&r, 1, goblin_ring_endpoint_full(sv->ep)
                                            ? 0 : 1000000);
    }
    return NULL;
}

static int server_setup(void **state)
{
    struct server *sv = calloc(1, sizeof(*sv));
    struct goblin_ring_endpoint_config cfg = {0};
    struct goblin_ring_config ring = {0};
    void *f = NULL;

    if (sv == NULL || cfix_setup(&f) != 0)
        return -1;
    sv->f = f;
    snprintf(sv->path, sizeof(sv->path), "/dev/shm/goblin-client-test-%d",
             (int)getpid());
    cfg.engine = sv->f->eng;
    cfg.path = sv->path;
    ring.sq_size = ring.cq_size = 4096;
    cfg.ring = &ring;
    if (goblin_ring_endpoint_open(&cfg, &sv->ep) != 0) {
        *state = sv;
        return 0; /* no shared memory here: the tests skip */
    }
    pthread_create(&sv->thread, NULL, serve, sv);
    *state = sv;
    return 0;
}

static int server_teardown(void **state)
{
    struct server *sv = *state;
    void *f = sv->f;

    if (sv->ep != NULL) {
        atomic_store(&sv->stop, true);
        pthread_join(sv->thread, NULL);
        goblin_ring_endpoint_close(sv->ep);
        assert_int_equal(access(sv->path, F_OK), -1);  /* file removed */
    }
    free(sv);
    return cfix_teardown(&f);
}

static goblin_client *attach(struct server *sv,
                             enum goblin_client_protocol p)
{
    struct goblin_client_config cfg = {0};
    goblin_client *c = NULL;

    cfg.protocol = p;
    cfg.timeout_ms = 10000;
    assert_int_equal(goblin_client_connect_ring(sv->path, &cfg, &c), 0);
    return c;
}

static const enum goblin_client_protocol protos[] = {
    GOBLIN_CLIENT_SBE, GOBLIN_CLIENT_RESP2, GOBLIN_CLIENT_RESP3};

/* Lists and sets: a reply read in place from its CQ record (SBE) or
 * the receive buffer keeps its views until the next call. */
static void ring_lists_and_sets(goblin_client *c)
{
    struct goblin_slice e[3] = {S("one"), S("two"), S("three")};
    struct goblin_slice keys[2] = {S("rl"), S("rs")};
    const struct goblin_slice *out;

    assert_int_equal(goblin_client_del(c, keys, 2), 0);
    assert_int_equal(goblin_client_rpush(c, S("rl"), e, 3), 3);
    assert_int_equal(goblin_client_llen(c, S("rl")), 3);
    assert_int_equal(goblin_client_lrange(c, S("rl"), -3, -1, &out), 3);
    assert_int_equal(out[2].len, 5);
    assert_memory_equal(out[2].ptr, "three", 5);
    assert_int_equal(goblin_client_lpop(c, S("rl"), 1, &out), 1);
    assert_memory_equal(out[0].ptr, "one", 3);
    assert_int_equal(goblin_client_rpop(c, S("rl"), 1, &out), 1);
    assert_memory_equal(out[0].ptr, "three", 5);
    assert_int_equal(goblin_client_sadd(c, S("rs"), e, 3), 3);
    assert_int_equal(goblin_client_scard(c, S("rs")), 3);
    assert_int_equal(goblin_client_sismember(c, S("rs"), S("two")), 1);
    assert_int_equal(goblin_client_smembers(c, S("rs"), &out), 3);
    assert_int_equal(goblin_client_srem(c, S("rs"), e, 1), 1);
    assert_int_equal(goblin_client_sadd(c, S("rs"), e, 1), 1);
    assert_int_equal(goblin_client_del(c, keys, 2), 2);
}

static void test_typed_calls_over_the_ring(void **state)
{
    struct server *sv = *state;
    struct goblin_slice members[2] = {S("alice"), S("bob")}, v;
    double scores[2] = {1.5, 2.5}, d = 0;
    goblin_client *c;
    size_t i;

    if (sv->ep == NULL)
        skip();
    for (i = 0; i < 3; i++) {
        c = attach(sv, protos[i]);
        assert_int_equal(goblin_client_ping(c), 0);
        assert_int_equal(goblin_client_set(c, S("k"), S("v"), NULL), 1);
        assert_int_equal(goblin_client_get(c, S("k"), &v), 1);
        assert_memory_equal(v.ptr, "v", 1);
        assert_int_equal(goblin_client_zadd(c, S("lb"), scores, members, 2,
                                            0), i == 0 ? 2 : 0);
        assert_int_equal(goblin_client_zscore(c, S("lb"), S("bob"), &d), 1);
        assert_true(d == 2.5);
        ring_lists_and_sets(c);
        goblin_client_close(c);
    }
}

/* Over SBE a typed call that returns an array reads its reply where it
 * lies, into the client's array (no tree): small, empty and large
 * replies, an error reply, and the same call in a pipeline (a tree, as
 * for the generic calls) all give the same results. */
static void test_array_replies_are_read_in_place(void **state)
{
    struct server *sv = *state;
    struct goblin_slice e[3] = {S("one"), S("two"), S("three")};
    const struct goblin_resp_value *v;
    const struct goblin_client_member *m;
    const struct goblin_slice *out;
    char name[16][16];
    struct goblin_slice big[16];
    double sc[16];
    goblin_client *c;
    int64_t i;

    if (sv->ep == NULL)
        skip();
    c = attach(sv, GOBLIN_CLIENT_SBE);
    for (i = 0; i < 16; i++) {
        snprintf(name[i], sizeof(name[i]), "member-%02d", (int)i);
        big[i] = (struct goblin_slice){name[i], strlen(name[i])};
        sc[i] = (double)i + 0.5;
    }
    assert_int_equal(goblin_client_zadd(c, S("iz"), sc, big, 16, 0), 16);
    assert_int_equal(goblin_client_zrange(c, S("iz"), 0, 2, 1, &m), 3);
    assert_true(c->decoded);
    assert_memory_equal(m[0].member.ptr, "member-15", 9);
    assert_true(m[0].score == 15.5 && m[2].score == 13.5);
    assert_int_equal(goblin_client_zrange_by_score(c, S("iz"), 0, 0, 2, 0,
                                                   0, 0, -1, &m), 2);
    assert_true(c->decoded);
    assert_memory_equal(m[1].member.ptr, "member-01", 9);
    assert_int_equal(goblin_client_zrange(c, S("nokey"), 0, -1, 0, &m), 0);
    assert_int_equal(goblin_client_set(c, S("str"), S("x"), NULL), 1);
    assert_int_equal(goblin_client_zrange(c, S("str"), 0, -1, 0, &m),
                     GOBLIN_EWRONGTYPE);
    assert_false(c->decoded);
    assert_int_equal(goblin_client_rpush(c, S("il"), e, 3), 3);
    assert_int_equal(goblin_client_lrange(c, S("il"), 0, -1, &out), 3);
    assert_true(c->decoded);
    assert_memory_equal(out[2].ptr, "three", 5);
    assert_int_equal(goblin_client_lrange(c, S("str"), 0, -1, &out),
                     GOBLIN_EWRONGTYPE);
    assert_int_equal(goblin_client_lpop(c, S("il"), 2, &out), 2);
    assert_memory_equal(out[1].ptr, "two", 3);
    assert_int_equal(goblin_client_lpop(c, S("il"), 2, &out), 1);
    assert_int_equal(goblin_client_lpop(c, S("il"), 2, &out), 0);
    assert_int_equal(goblin_client_sadd(c, S("is"), e, 3), 3);
    assert_int_equal(goblin_client_smembers(c, S("is"), &out), 3);
    assert_true(c->decoded);
    /* In a pipeline the reply is read later, as a tree. */
    goblin_client_pipeline_begin(c);
    assert_int_equal(goblin_client_zrange(c, S("iz"), 0, 0, 0, &m), 0);
    assert_int_equal(goblin_client_flush(c), 0);
    assert_int_equal(goblin_client_next_reply(c, &v), 0);
    goblin_client_pipeline_end(c);
    assert_int_equal(v->type, GOBLIN_RESP_ARRAY);
    assert_int_equal(v->n, 1);
    assert_memory_equal(v->items[0].items[0].str.ptr, "member-00", 9);
    assert_int_equal(goblin_client_zrange(c, S("iz"), 0, -1, 0, &m), 16);
    assert_true(m[15].score == 15.5);
    /* 400 members: a reply larger than the 4 KiB queues, which arrives in
     * pieces and is read from the input buffer. */
    for (i = 16; i < 400; i++) {
        double s1 = (double)i;
        char n1[16];
        struct goblin_slice m1;

        snprintf(n1, sizeof(n1), "member-%03d", (int)i);
        m1 = (struct goblin_slice){n1, strlen(n1)};
        assert_int_equal(goblin_client_zadd(c, S("iz"), &s1, &m1, 1, 0), 1);
    }
    assert_int_equal(goblin_client_zrange(c, S("iz"), 0, -1, 0, &m), 400);
    assert_true(c->decoded);
    assert_memory_equal(m[399].member.ptr, "member-399", 10);
    assert_true(m[399].score == 399 && m[15].score == 15.5 &&
                m[16].score == 16);
    goblin_client_close(c);
}

/* Runs words (split at spaces) as a generic call; the reply's type. */
static int call_words(goblin_client *c, const char *words,
                      const struct goblin_resp_value **v)
{
    struct goblin_slice a[8];
    size_t n = 0;
    const char *p = words, *q;

    while (*p != '\0' && n < 8) {
        for (q = p; *q != '\0' && *q != ' '; q++)
            ;
        a[n++] = (struct goblin_slice){p, (size_t)(q - p)};
        p = *q == ' ' ? q + 1 : q;
    }
    assert_int_equal(goblin_client_call(c, n, a, v), 0);
    return (int)(*v)->type;
}

/* A typed request on the ring's direct path reaches the slow log as its
 * words, as a RESP command does. */
static void test_typed_requests_over_the_ring_reach_the_slow_log(
    void **state)
{
    struct server *sv = *state;
    const struct goblin_resp_value *v;
    double d = 0;
    goblin_client *c;

    if (sv->ep == NULL)
        skip();
    c = attach(sv, GOBLIN_CLIENT_SBE);
    call_words(c, "CONFIG SET slowlog-log-slower-than 0", &v);
    call_words(c, "SLOWLOG RESET", &v);
    assert_int_equal(goblin_client_zscore(c, S("nokey"), S("m"), &d), 0);
    assert_int_equal(call_words(c, "SLOWLOG GET 1", &v), GOBLIN_RESP_ARRAY);
    assert_int_equal(v->n, 1);
    v = &v->items[0].items[3];
    assert_int_equal(v->n, 3);
    assert_memory_equal(v->items[0].str.ptr, "ZSCORE", 6);
    assert_memory_equal(v->items[1].str.ptr, "nokey", 5);
    call_words(c, "CONFIG SET slowlog-log-slower-than 10000", &v);
    goblin_client_close(c);
}

/* Replies bigger than a record arrive in pieces; requests far more than
 * the queues hold go through because sending drains CQ. */
static void test_deep_pipelines_and_big_replies(void **state)
{
    struct server *sv = *state;
    static char big[20000];
    const struct goblin_resp_value *v;
    struct goblin_slice val;
    goblin_client *c;
    int64_t r, i;
    size_t p;

    if (sv->ep == NULL)
        skip();
    memset(big, 'x', sizeof(big));
    for (p = 0; p < 3; p++) {
        c = attach(sv, protos[p]);
        /* An SBE request must fit one record; RESP ones are chopped. */
        assert_int_equal(goblin_client_set(c, S("big"),
                                           (struct goblin_slice){big,
                                                                 sizeof(big)},
                                           NULL),
                         p == 0 ? GOBLIN_ELIMIT : 1);
        assert_int_equal(goblin_client_ping(c), 0);
        assert_int_equal(goblin_client_del(c, &S("big"), 1), p == 0 ? 0 : 1);
        for (i = 0; i < 20; i++) {
            struct goblin_slice app[3] = {S("append"), S("big"),
                                          {big, sizeof(big) / 20}};

            assert_int_equal(goblin_client_call(c, 3, app, &v), 0);
            assert_int_equal(v->integer, (i + 1) * (int64_t)sizeof(big) / 20);
        }
        assert_int_equal(goblin_client_get(c, S("big"), &val), 1);
        assert_int_equal(val.len, sizeof(big));
        goblin_client_pipeline_begin(c);
        for (i = 0; i < 3000; i++)
            assert_int_equal(goblin_client_incrby(c, S("n"), 1, &r), 0);
        for (i = 1; i <= 3000; i++) {
            assert_int_equal(goblin_client_next_reply(c, &v), 0);
            assert_int_equal(v->integer, (int64_t)p * 3000 + i);
        }
        goblin_client_close(c);
    }
}

/* Pipelined typed calls go straight into SQ and are published by the
 * flush; a reply read in place from CQ keeps its views while the next
 * requests are queued, until the next read. Generic calls queued between
 * typed ones keep their order. */
static void test_pipelined_calls_keep_order_and_views(void **state)
{
    struct server *sv = *state;
    const struct goblin_resp_value *v, *w;
    struct goblin_slice val;
    goblin_client *c;
    size_t p;
    int64_t i;

    if (sv->ep == NULL)
        skip();
    for (p = 0; p < 3; p++) {
        struct goblin_slice get[2] = {S("get"), S("pk")};

        c = attach(sv, protos[p]);
        assert_int_equal(goblin_client_set(c, S("pk"), S("first"), NULL), 1);
        goblin_client_pipeline_begin(c);
        assert_int_equal(goblin_client_get(c, S("pk"), &val), 0);
        assert_int_equal(goblin_client_flush(c), 0);
        assert_int_equal(goblin_client_next_reply(c, &v), 0);
        assert_int_equal(v->type, GOBLIN_RESP_BULK);
        /* Queued while v is held: v must not move. */
        assert_int_equal(goblin_client_set(c, S("pk"), S("second"), NULL), 0);
        assert_int_equal(goblin_client_call(c, 2, get, &w), 0);
        assert_int_equal(goblin_client_get(c, S("pk"), &val), 0);
        assert_int_equal(v->str.len, 5);
        assert_memory_equal(v->str.ptr, "first", 5);
        assert_int_equal(goblin_client_next_reply(c, &v), 0);
        assert_int_equal(v->type, GOBLIN_RESP_STATUS);
        for (i = 0; i < 2; i++) {
            assert_int_equal(goblin_client_next_reply(c, &v), 0);
            assert_int_equal(v->type, GOBLIN_RESP_BULK);
            assert_int_equal(v->str.len, 6);
            assert_memory_equal(v->str.ptr, "second", 6);
        }
        assert_int_equal(goblin_client_pending(c), 0);
        goblin_client_pipeline_end(c);
        assert_int_equal(goblin_client_get(c, S("pk"), &val), 1);
        assert_int_equal(val.len, 6);
        goblin_client_close(c);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_typed_calls_over_the_ring,
                                        server_setup, server_teardown),
        cmocka_unit_test_setup_teardown(test_deep_pipelines_and_big_replies,
                                        server_setup, server_teardown),
        cmocka_unit_test_setup_teardown(
            test_typed_requests_over_the_ring_reach_the_slow_log,
            server_setup, server_teardown),
        cmocka_unit_test_setup_teardown(test_array_replies_are_read_in_place,
                                        server_setup, server_teardown),
        cmocka_unit_test_setup_teardown(
            test_pipelined_calls_keep_order_and_views, server_setup,
            server_teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
