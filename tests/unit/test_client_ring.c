/* test_client_ring.c - the client over a shared-memory ring: a small
 * ring server runs in a thread (each record fed to a session of an
 * in-process engine, its output published back in records), and the
 * client makes typed calls over SBE, RESP2 and RESP3 and pipelines far
 * deeper than the 4 KiB queues. Exits 77 (skip) without /dev/shm. */
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "test_commands_util.h"

#include "goblin/client.h"
#include "goblin/ring.h"

struct server {
    struct cfix *f;
    goblin_ring *ring;
    goblin_session *s;
    atomic_bool stop;
    pthread_t thread;
    char path[64];
};

/* Publishes everything the session has written, record by record. */
static void publish_output(struct server *sv)
{
    uint32_t max = goblin_ring_max_record(sv->ring);
    const char *p;
    size_t len, k;

    for (;;) {
        p = goblin_session_output(sv->s, &len);
        if (len == 0 || atomic_load(&sv->stop))
            return;
        k = len < max ? len : max;
        if (goblin_ring_publish(sv->ring, p, (uint32_t)k) == 0)
            goblin_session_output_consume(sv->s, k);
    }
}

static void new_session(struct server *sv)
{
    struct goblin_session_info si = {GOBLIN_TRANSPORT_RING, "ring", "ring",
                                     -1, NULL};

    goblin_session_close(sv->s);
    assert_int_equal(goblin_session_open(sv->f->eng, &si, &sv->s), 0);
}

static void *serve(void *arg)
{
    struct server *sv = arg;
    struct goblin_slice rec;
    int rc;

    while (!atomic_load(&sv->stop)) {
        rc = goblin_ring_peek(sv->ring, &rec);
        if (rc == GOBLIN_RING_SESSION) {
            new_session(sv);
        } else if (rc == GOBLIN_RING_RECORD) {
            goblin_session_feed(sv->s, rec.ptr, rec.len);
            goblin_ring_release(sv->ring);
            publish_output(sv);
        } else {
            goblin_ring_wait(sv->ring, 1000000);
        }
    }
    return NULL;
}

static int server_setup(void **state)
{
    struct server *sv = calloc(1, sizeof(*sv));
    struct goblin_ring_config rc = {0};
    void *f = NULL;

    if (sv == NULL || cfix_setup(&f) != 0)
        return -1;
    sv->f = f;
    rc.sq_size = 4096;
    rc.cq_size = 4096;
    snprintf(sv->path, sizeof(sv->path), "/dev/shm/goblin-client-test-%d",
             (int)getpid());
    if (goblin_ring_create(sv->path, &rc, &sv->ring) != 0) {
        *state = sv;
        return 0; /* no shared memory here: the tests skip */
    }
    new_session(sv);
    pthread_create(&sv->thread, NULL, serve, sv);
    *state = sv;
    return 0;
}

static int server_teardown(void **state)
{
    struct server *sv = *state;
    void *f = sv->f;

    if (sv->ring != NULL) {
        atomic_store(&sv->stop, true);
        pthread_join(sv->thread, NULL);
        goblin_session_close(sv->s);
        goblin_ring_close(sv->ring);
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

static void test_typed_calls_over_the_ring(void **state)
{
    struct server *sv = *state;
    struct goblin_slice members[2] = {S("alice"), S("bob")}, v;
    double scores[2] = {1.5, 2.5}, d = 0;
    goblin_client *c;
    size_t i;

    if (sv->ring == NULL)
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
        goblin_client_close(c);
    }
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

    if (sv->ring == NULL)
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_typed_calls_over_the_ring,
                                        server_setup, server_teardown),
        cmocka_unit_test_setup_teardown(test_deep_pipelines_and_big_replies,
                                        server_setup, server_teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
