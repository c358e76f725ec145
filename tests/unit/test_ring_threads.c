/* test_ring_threads.c - the ring with both sides running: a sleeping
 * server woken by a publish, many sleep/wake cycles without a lost
 * wake-up, a pipeline deeper than both queues that must not deadlock, and
 * a two-thread stream of records of random sizes checked on the other
 * side (the client attaches to the server's own mapping, so the thread
 * sanitizer sees both sides at the same addresses), and a client whose
 * ring is replaced in the middle of its handshake. Nothing here asserts
 * on timing: bounded waits only turn a hang into a failure. Exit 77
 * without /dev/shm. */
#include <sched.h>

#include "test_ring_util.h"

#define PAGE 4096u
#define LONG_NS 10000000000LL          /* "never", but a test must end */

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define STREAM_RECORDS 150000
#define CYCLES 2000
#else
#define STREAM_RECORDS 1500000
#define CYCLES 5000
#endif

/* An echo server thread: waits, echoes every record, stops at "quit". */
struct echo {
    goblin_ring *srv;
    atomic_int quit;
    int error;
};

static int echo_one(struct echo *e, struct goblin_slice rec)
{
    if (rec.len == 4 && memcmp(rec.ptr, "quit", 4) == 0)
        return 1;
    while (goblin_ring_publish(e->srv, rec.ptr, (uint32_t)rec.len) ==
           GOBLIN_EAGAIN)
        goblin__ring_relax();
    return 0;
}

static void *echo_main(void *arg)
{
    struct echo *e = arg;
    struct goblin_slice rec;
    int rc;

    for (;;) {
        rc = goblin_ring_wait(e->srv, LONG_NS);
        if (rc != 1) {
            e->error = rc;
            return NULL;
        }
        rc = goblin_ring_peek(e->srv, &rec);
        if (rc == GOBLIN_RING_SESSION || rc == 0)
            continue;
        if (rc < 0) {
            e->error = rc;
            return NULL;
        }
        rc = echo_one(e, rec);
        goblin_ring_release(e->srv);
        if (rc)
            return NULL;
    }
}

/* A server in backoff mode that sleeps at once and never wakes on its
 * own (no time slice), a client likewise. */
static void sleepy_pair(struct pair *p, const char *name, struct echo *e,
                        pthread_t *th)
{
    struct goblin_ring_config cfg = {0};

    cfg.sq_size = cfg.cq_size = PAGE;
    cfg.idle = GOBLIN_RING_IDLE_BACKOFF;
    cfg.spin_ns = 1;
    ring_path(p->path, sizeof(p->path), name);
    assert_int_equal(goblin_ring_create(p->path, &cfg, &p->srv), 0);
    p->srv->sleep_slice_ns = INT64_MAX / 2;
    assert_int_equal(connect_client(p->srv, p->path, &cfg, &p->cli), 0);
    p->cli->sleep_slice_ns = INT64_MAX / 2;
    e->srv = p->srv;
    e->error = 0;
    assert_int_equal(pthread_create(th, NULL, echo_main, e), 0);
}

static void stop_echo(struct pair *p, struct echo *e, pthread_t th)
{
    assert_int_equal(goblin_ring_publish(p->cli, "quit", 4), 0);
    pthread_join(th, NULL);
    assert_int_equal(e->error, 0);
}

/* Client: sends n, waits (sleeping) for the echo, checks it. */
static void round_trip(goblin_ring *cli, uint64_t n)
{
    struct goblin_slice rec;

    assert_int_equal(goblin_ring_publish(cli, &n, sizeof(n)), 0);
    assert_int_equal(goblin_ring_wait(cli, LONG_NS), 1);    /* no hang */
    assert_int_equal(goblin_ring_peek(cli, &rec), 1);
    assert_int_equal(rec.len, sizeof(n));
    assert_memory_equal(rec.ptr, &n, sizeof(n));
    goblin_ring_release(cli);
}

static void test_a_sleeping_server_is_woken_by_a_publish(void **state)
{
    struct goblin_ring_stats ss, cs;
    struct echo e;
    struct pair p;
    pthread_t th;
    uint64_t i;
    int64_t until;

    (void)state;
    sleepy_pair(&p, "sleep", &e, &th);
    for (i = 0; i < 200; i++) {
        /* Wait until the server has announced it is asleep. */
        until = goblin__ring_now_ns() + LONG_NS;
        while (atomic_load(&p.srv->hdr->sq_sleep) == 0)
            assert_true(sched_yield() == 0 && goblin__ring_now_ns() < until);
        round_trip(p.cli, i);
    }
    stop_echo(&p, &e, th);
    goblin_ring_get_stats(p.srv, &ss);
    goblin_ring_get_stats(p.cli, &cs);
    assert_true(ss.sleeps >= 200);      /* announced, so it went to sleep */
    assert_true(cs.wakes > 0);
    pair_close(&p);
}

/* A server thread sleeping on three rings at once (one futex_waitv)
 * reports which one a client woke. */
struct any_waiter {
    goblin_ring **srv;
    atomic_int got;
};

static void *any_main(void *arg)
{
    struct any_waiter *w = arg;

    atomic_store(&w->got, goblin_ring_wait_any(w->srv, 3, LONG_NS));
    return NULL;
}

static void test_wait_any_sleeps_on_every_ring(void **state)
{
    struct goblin_ring_config cfg = {0};
    struct pair p[3];
    goblin_ring *srv[3];
    struct any_waiter w = {srv, 0};
    pthread_t th;
    int64_t until;

    (void)state;
    cfg.sq_size = cfg.cq_size = PAGE;
    cfg.idle = GOBLIN_RING_IDLE_BACKOFF;
    cfg.spin_ns = 1;
    for (int i = 0; i < 3; i++) {
        char name[16];

        snprintf(name, sizeof(name), "anysleep%d", i);
        ring_path(p[i].path, sizeof(p[i].path), name);
        assert_int_equal(goblin_ring_create(p[i].path, &cfg, &p[i].srv), 0);
        p[i].srv->sleep_slice_ns = INT64_MAX / 2;
        assert_int_equal(connect_client(p[i].srv, p[i].path, &cfg,
                                        &p[i].cli), 0);
        srv[i] = p[i].srv;
    }
    for (int round = 0; round < 30; round++) {
        int which = round % 3;
        struct goblin_slice rec;

        atomic_store(&w.got, -1000);
        assert_int_equal(pthread_create(&th, NULL, any_main, &w), 0);
        until = goblin__ring_now_ns() + LONG_NS;     /* all announced */
        while (atomic_load(&p[0].srv->hdr->sq_sleep) == 0 ||
               atomic_load(&p[1].srv->hdr->sq_sleep) == 0 ||
               atomic_load(&p[2].srv->hdr->sq_sleep) == 0)
            assert_true(sched_yield() == 0 && goblin__ring_now_ns() < until);
        assert_int_equal(goblin_ring_publish(p[which].cli, "w", 1), 0);
        pthread_join(th, NULL);
        assert_int_equal(atomic_load(&w.got), which);
        assert_int_equal(goblin_ring_peek(srv[which], &rec),
                         GOBLIN_RING_RECORD);
        goblin_ring_release(srv[which]);
    }
    for (int i = 0; i < 3; i++)
        pair_close(&p[i]);
}

static void test_no_wake_up_is_lost_over_many_cycles(void **state)
{
    struct goblin_ring_stats ss, cs;
    uint64_t s = 99, i, k;
    struct echo e;
    struct pair p;
    pthread_t th;

    (void)state;
    sleepy_pair(&p, "cycles", &e, &th);
    for (i = 0; i < CYCLES; i++) {
        for (k = rnd(&s) % 64; k > 0; k--)     /* vary the interleaving */
            goblin__ring_relax();
        if (rnd(&s) % 16 == 0)
            sched_yield();
        round_trip(p.cli, i);
    }
    stop_echo(&p, &e, th);
    goblin_ring_get_stats(p.srv, &ss);
    goblin_ring_get_stats(p.cli, &cs);
    print_message("%d cycles: server slept %llu, woke the client %llu; "
                  "client slept %llu, woke the server %llu\n", CYCLES,
                  (unsigned long long)ss.sleeps, (unsigned long long)ss.wakes,
                  (unsigned long long)cs.sleeps, (unsigned long long)cs.wakes);
    pair_close(&p);
}

/* A server that echoes but never blocks on a full CQ: the reply waits in
 * its own buffer and it stops reading SQ until the reply is out. */
struct holder {
    goblin_ring *srv;
    atomic_int stop;
    unsigned char reply[64];
    size_t len;
    int pending, error;
};

static void *holder_main(void *arg)
{
    struct holder *h = arg;
    struct goblin_slice rec;
    int rc;

    while (!atomic_load(&h->stop)) {
        if (h->pending) {
            rc = goblin_ring_publish(h->srv, h->reply, (uint32_t)h->len);
            if (rc == GOBLIN_EAGAIN) {
                goblin__ring_relax();
                continue;
            }
            h->pending = 0;
        }
        rc = goblin_ring_peek(h->srv, &rec);
        if (rc < 0) {
            h->error = rc;
            return NULL;
        }
        if (rc != GOBLIN_RING_RECORD)
            continue;
        h->len = rec.len < sizeof(h->reply) ? rec.len : sizeof(h->reply);
        memcpy(h->reply, rec.ptr, h->len);
        h->pending = 1;
        goblin_ring_release(h->srv);
    }
    return NULL;
}

static void test_a_pipeline_deeper_than_both_queues_drains(void **state)
{
    struct goblin_ring_stats stats;
    struct goblin_slice rec;
    struct holder h = {0};
    char req[16];
    struct pair p;
    pthread_t th;
    int i;

    (void)state;
    pair_open(&p, "pipeline", PAGE);        /* 64 records each way */
    h.srv = p.srv;
    assert_int_equal(pthread_create(&th, NULL, holder_main, &h), 0);
    for (i = 0; i < 1024; i++) {
        snprintf(req, sizeof(req), "request %04d", i);
        assert_int_equal(goblin_ring_send(p.cli, req, 12, LONG_NS), 0);
    }
    for (i = 0; i < 1024; i++) {
        snprintf(req, sizeof(req), "request %04d", i);
        assert_int_equal(goblin_ring_wait(p.cli, LONG_NS), 1);
        assert_int_equal(goblin_ring_peek(p.cli, &rec), 1);
        assert_int_equal(rec.len, 12);
        assert_memory_equal(rec.ptr, req, 12);
        goblin_ring_release(p.cli);
    }
    atomic_store(&h.stop, 1);
    pthread_join(th, NULL);
    assert_int_equal(h.error, 0);
    goblin_ring_get_stats(p.cli, &stats);
    assert_true(stats.drained > 0);
    pair_close(&p);
}

/* Record i of a stream: its length and bytes follow from i and the
 * stream's seed; the first 8 bytes of a long one hold a checksum of the
 * rest. */
static uint32_t stream_len(uint64_t seed, uint64_t i, uint32_t max)
{
    uint64_t s = (seed ^ i) * 0x9e3779b97f4a7c15ull + 7;
    uint64_t r = rnd(&s);

    if (r % 1000 < 700)
        return (uint32_t)(r >> 32) % 49;        /* one line */
    if (r % 1000 < 950)
        return (uint32_t)(r >> 32) % 512;
    if (r % 1000 < 999)
        return (uint32_t)(r >> 32) % 4096;
    return (uint32_t)(r >> 32) % (max + 1);
}

static void stream_fill(unsigned char *p, uint32_t len, uint64_t seed,
                        uint64_t i)
{
    uint64_t sum;

    fill_bytes(p, len, seed ^ i);
    if (len >= 8) {
        sum = checksum(p + 8, len - 8);
        memcpy(p, &sum, 8);
    }
}

struct stream {
    goblin_ring *r;
    uint64_t seed_out, seed_in;
    uint64_t sent, got;
    unsigned char *buf, *want;
    int error;
    uint64_t built;             /* record number + 1 that buf holds */
};

/* Appends what fits, in the three producer styles. */
static void stream_send(struct stream *st)
{
    uint32_t len = stream_len(st->seed_out, st->sent,
                              goblin_ring_max_record(st->r));
    struct goblin_slice m;
    void *at;

    if (st->built != st->sent + 1) {
        stream_fill(st->buf, len, st->seed_out, st->sent);
        st->built = st->sent + 1;
    }
    switch (st->sent % 3) {
    case 0:
        if (goblin_ring_publish(st->r, st->buf, len) == 0)
            st->sent++;
        break;
    case 1:
        if (goblin_ring_reserve(st->r, len + 7, &at) == 0 ||
            goblin_ring_reserve(st->r, len, &at) == 0) {
            memcpy(at, st->buf, len);
            goblin_ring_commit(st->r, len);
            st->sent++;
        }
        if (st->sent % 5 == 0)
            goblin_ring_flush(st->r);
        break;
    default:
        m = slice_of(st->buf, len);
        if (goblin_ring_publish_batch(st->r, &m, 1) == 1)
            st->sent++;
        break;
    }
}

/* Takes whatever is ready and checks it against the generator. */
static int stream_recv(struct stream *st)
{
    struct goblin_slice recs[16];
    uint64_t sum;
    int n, i;

    n = goblin_ring_poll(st->r, recs, 16);
    if (n == GOBLIN_RING_SESSION || n <= 0)
        return n == GOBLIN_RING_SESSION ? 0 : n;
    for (i = 0; i < n; i++, st->got++) {
        uint32_t len = stream_len(st->seed_in, st->got,
                                  goblin_ring_max_record(st->r));

        stream_fill(st->want, len, st->seed_in, st->got);
        if (recs[i].len != len || memcmp(recs[i].ptr, st->want, len) != 0)
            return GOBLIN_EPROTO;
        if (len >= 8) {
            memcpy(&sum, recs[i].ptr, 8);
            if (sum != checksum((const char *)recs[i].ptr + 8, len - 8))
                return GOBLIN_EPROTO;
        }
    }
    goblin_ring_release(st->r);
    return n;
}

static void *stream_main(void *arg)
{
    struct stream *st = arg;
    int rc, idle = 0;

    while (st->sent < STREAM_RECORDS || st->got < STREAM_RECORDS) {
        uint64_t before = st->sent;

        if (st->sent < STREAM_RECORDS)
            stream_send(st);
        rc = stream_recv(st);
        if (rc < 0) {
            st->error = rc;
            return NULL;
        }
        if (rc > 0 || st->sent != before) {
            idle = 0;
            continue;
        }
        goblin_ring_flush(st->r);
        if (++idle % 64 == 0)   /* let the peer run on a busy machine */
            sched_yield();
    }
    goblin_ring_flush(st->r);
    return NULL;
}

static void test_two_threads_stream_checked_records(void **state)
{
    struct goblin_ring_config cfg = {0};
    struct stream a = {0}, b = {0};
    pthread_t ta, tb;
    struct pair p;

    (void)state;
    cfg.sq_size = cfg.cq_size = 64 * 1024;
    cfg.idle = GOBLIN_RING_IDLE_SPIN;
    ring_path(p.path, sizeof(p.path), "stream");
    assert_int_equal(goblin_ring_create(p.path, &cfg, &p.srv), 0);
    assert_int_equal(connect_client(p.srv, NULL, &cfg, &p.cli), 0);
    a = (struct stream){p.cli, 1, 2, 0, 0, malloc(1 << 16), malloc(1 << 16),
                        0, 0};
    b = (struct stream){p.srv, 2, 1, 0, 0, malloc(1 << 16), malloc(1 << 16),
                        0, 0};
    assert_int_equal(pthread_create(&ta, NULL, stream_main, &a), 0);
    assert_int_equal(pthread_create(&tb, NULL, stream_main, &b), 0);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    assert_int_equal(a.error, 0);
    assert_int_equal(b.error, 0);
    assert_true(a.got == STREAM_RECORDS && b.got == STREAM_RECORDS);
    free(a.buf);
    free(a.want);
    free(b.buf);
    free(b.want);
    pair_close(&p);
}

/* The server closes the file (to reset the ring) while a client waits
 * for its ack, and puts a new file at the path: the client's open goes
 * on with the new file instead of waiting out its timeout. And a server
 * judging its last client's death ignores it while a new epoch waits. */
static void test_open_follows_a_ring_replaced_mid_handshake(void **state)
{
    struct goblin_ring_config cfg = {.sq_size = PAGE, .cq_size = PAGE,
                                     .open_timeout_ns = 5000000000ull};
    struct opener o = {0};
    struct goblin_slice rec;
    goblin_ring *srv, *srv2;
    pthread_t t;
    char path[128];
    uint64_t e = 0;

    (void)state;
    ring_path(path, sizeof(path), "replaced");
    assert_int_equal(goblin_ring_create(path, &cfg, &srv), 0);
    o.path = path;
    o.cfg = &cfg;
    assert_int_equal(pthread_create(&t, NULL, opener_main, &o), 0);
    /* Wait, without peeking (a peek would ack), for the client's epoch. */
    for (int i = 0; i < 100000 && e == 0; i++) {
        e = atomic_load(&((struct goblin__ring_hdr *)srv->hdr)->epoch);
        if (e == 0)
            sched_yield();
    }
    assert_int_not_equal(e, 0);
    assert_int_equal(goblin_ring_client_alive(srv), 0);
    goblin_ring_close(srv);                    /* magic 0, file unlinked */
    assert_int_equal(goblin_ring_create(path, &cfg, &srv2), 0);
    while (!atomic_load(&o.done))
        if (goblin_ring_peek(srv2, &rec) == 0)
            sched_yield();
    pthread_join(t, NULL);
    assert_int_equal(o.rc, 0);                 /* not GOBLIN_ETIMEDOUT */
    assert_int_equal(goblin_ring_check(o.cli), 0);
    goblin_ring_close(o.cli);
    goblin_ring_close(srv2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_sleeping_server_is_woken_by_a_publish),
        cmocka_unit_test(test_wait_any_sleeps_on_every_ring),
        cmocka_unit_test(test_no_wake_up_is_lost_over_many_cycles),
        cmocka_unit_test(test_a_pipeline_deeper_than_both_queues_drains),
        cmocka_unit_test(test_two_threads_stream_checked_records),
        cmocka_unit_test(test_open_follows_a_ring_replaced_mid_handshake),
    };

    if (!shm_available())
        return SKIP_EXIT;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
