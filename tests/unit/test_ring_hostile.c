/* test_ring_hostile.c - the server facing a client that breaks the rules:
 * lengths, fillers and indices out of range give GOBLIN_EPROTO for that
 * ring only (sticky until the next session), random bytes over the header
 * and data never make the server read or write outside its ring (the
 * mapping sits between guard pages, so a stray access would crash), and a
 * client that stops reading only fills its own CQ. The hostile "client"
 * writes through the server's own mapping. Exit 77 without /dev/shm. */
#include "test_ring_util.h"

#define PAGE 4096u

struct hostile {
    char path[128];
    goblin_ring *srv;
    struct goblin__ring_hdr *h;
    unsigned char *sq, *cq;
};

/* Starts a session the hostile way: bump the epoch, let the server ack. */
static void hostile_session(struct hostile *x)
{
    struct goblin_slice rec;

    atomic_fetch_add(&x->h->epoch, 1);
    assert_int_equal(goblin_ring_peek(x->srv, &rec), GOBLIN_RING_SESSION);
}

static void hostile_open(struct hostile *x, const char *name)
{
    struct goblin_ring_config cfg = {0};

    cfg.sq_size = cfg.cq_size = PAGE;
    cfg.idle = GOBLIN_RING_IDLE_SPIN;
    ring_path(x->path, sizeof(x->path), name);
    assert_int_equal(goblin_ring_create(x->path, &cfg, &x->srv), 0);
    x->h = x->srv->hdr;
    x->sq = (unsigned char *)x->h + PAGE;
    x->cq = x->sq + PAGE;
    hostile_session(x);
}

/* Writes a correctly stamped record header at SQ position pos. */
static void forge(struct hostile *x, uint64_t pos, uint32_t len,
                  uint32_t flags)
{
    unsigned char *p = x->sq + (pos & (PAGE - 1));
    uint64_t key = atomic_load(&x->h->session_key);

    memcpy(p + 8, &len, 4);
    memcpy(p + 12, &flags, 4);
    atomic_store((_Atomic uint64_t *)(void *)p, pos ^ key);
}

/* The ring is failed: the wait path notices and every call says so. */
static void assert_failed(struct hostile *x)
{
    struct goblin_slice rec;
    void *buf;

    assert_int_equal(goblin_ring_wait(x->srv, 0), 1);
    assert_int_equal(goblin_ring_peek(x->srv, &rec), GOBLIN_EPROTO);
    assert_int_equal(goblin_ring_peek(x->srv, &rec), GOBLIN_EPROTO);
    assert_int_equal(goblin_ring_poll(x->srv, &rec, 1), GOBLIN_EPROTO);
    assert_int_equal(goblin_ring_publish(x->srv, "r", 1), GOBLIN_EPROTO);
    assert_int_equal(goblin_ring_reserve(x->srv, 1, &buf), GOBLIN_EPROTO);
    assert_int_equal(goblin_ring_wait(x->srv, 0), 1);
}

/* ... until the client sets sane indices and starts a new session. */
static void assert_failed_until_new_session(struct hostile *x)
{
    struct goblin_slice rec;

    assert_failed(x);
    atomic_store(&x->h->sq_tail, x->srv->rx.pos);
    atomic_store(&x->h->cq_head, x->srv->tx.pos);
    hostile_session(x);
    assert_int_equal(goblin_ring_peek(x->srv, &rec), 0);
    assert_int_equal(goblin_ring_publish(x->srv, "r", 1), 0);
}

static void test_oversize_length_is_a_protocol_error(void **state)
{
    struct hostile x;
    struct goblin_slice rec;

    (void)state;
    hostile_open(&x, "oversize");
    forge(&x, x.srv->rx.pos, PAGE / 2 - 16, 0);     /* the largest: fine */
    assert_int_equal(goblin_ring_peek(x.srv, &rec), GOBLIN_RING_RECORD);
    assert_int_equal(rec.len, PAGE / 2 - 16);
    goblin_ring_release(x.srv);
    forge(&x, x.srv->rx.pos, PAGE / 2 - 15, 0);
    assert_failed_until_new_session(&x);
    forge(&x, x.srv->rx.pos, UINT32_MAX, 0);
    assert_failed_until_new_session(&x);
    goblin_ring_close(x.srv);
}

static void test_a_record_crossing_the_end_is_rejected(void **state)
{
    struct hostile x;

    (void)state;
    hostile_open(&x, "cross");
    atomic_store(&x.h->sq_tail, PAGE - 64);  /* next session starts there */
    hostile_session(&x);
    assert_true(x.srv->rx.pos == PAGE - 64);
    forge(&x, PAGE - 64, 49, 0);             /* 16 + 49 > one line */
    assert_failed_until_new_session(&x);
    goblin_ring_close(x.srv);
}

static void test_fillers_are_checked(void **state)
{
    struct goblin_slice rec;
    struct hostile x;

    (void)state;
    hostile_open(&x, "filler");
    forge(&x, 0, 0, RING_FLAG_FILLER);          /* at offset 0 */
    assert_failed_until_new_session(&x);
    forge(&x, 0, 10, 0);
    forge(&x, 64, 10, 0);
    forge(&x, 128, 0, RING_FLAG_FILLER);    /* over records still held */
    assert_int_equal(goblin_ring_poll(x.srv, &rec, 1), 1);
    assert_int_equal(goblin_ring_poll(x.srv, &rec, 1), 1);
    assert_failed_until_new_session(&x);
    atomic_store(&x.h->sq_tail, 3 * PAGE / 4);
    hostile_session(&x);
    forge(&x, 3 * PAGE / 4, 5, RING_FLAG_FILLER);   /* with a length */
    assert_failed_until_new_session(&x);
    forge(&x, 3 * PAGE / 4, 0, 7);                  /* unknown flags */
    assert_failed_until_new_session(&x);
    forge(&x, PAGE, 3, 0);                          /* a good wrap */
    forge(&x, 3 * PAGE / 4, 0, RING_FLAG_FILLER);
    assert_int_equal(goblin_ring_peek(x.srv, &rec), GOBLIN_RING_RECORD);
    assert_true((const unsigned char *)rec.ptr == x.sq + 16);
    goblin_ring_release(x.srv);
    forge(&x, PAGE + 64, 0, RING_FLAG_FILLER);      /* early: fine too */
    forge(&x, 2 * PAGE, 5, 0);
    assert_int_equal(goblin_ring_peek(x.srv, &rec), GOBLIN_RING_RECORD);
    assert_int_equal(rec.len, 5);
    goblin_ring_close(x.srv);
}

static void test_records_past_the_released_head_are_rejected(void **state)
{
    struct goblin_slice recs[70];
    struct hostile x;
    uint64_t pos;

    (void)state;
    hostile_open(&x, "overrun");
    for (pos = 0; pos < PAGE; pos += 64)
        forge(&x, pos, 10, 0);
    assert_int_equal(goblin_ring_poll(x.srv, recs, 70), 64);
    forge(&x, PAGE, 10, 0);                 /* over an unreleased record */
    assert_int_equal(goblin_ring_poll(x.srv, recs, 70), GOBLIN_EPROTO);
    goblin_ring_close(x.srv);
}

static void test_a_tail_out_of_range_fails_on_the_wait_path(void **state)
{
    static const int64_t delta[] = {PAGE + 64, 5, -(int64_t)PAGE - 64, 64};
    struct hostile x;
    size_t i;

    (void)state;
    hostile_open(&x, "tail");
    atomic_store(&x.h->sq_tail, x.srv->rx.pos);
    assert_int_equal(goblin_ring_wait(x.srv, 0), GOBLIN_ETIMEDOUT);
    /* Behind: a producer between its stamp and its tail store. */
    atomic_store(&x.h->sq_tail, x.srv->rx.pos - 128);
    assert_int_equal(goblin_ring_wait(x.srv, 0), GOBLIN_ETIMEDOUT);
    for (i = 0; i < sizeof(delta) / sizeof(delta[0]); i++) {
        /* 64 ahead is in range, but no record is stamped there. */
        atomic_store(&x.h->sq_tail, x.srv->rx.pos + (uint64_t)delta[i]);
        assert_failed_until_new_session(&x);
    }
    goblin_ring_close(x.srv);
}

static void test_a_head_out_of_range_fails_the_producer(void **state)
{
    static const uint64_t bad[] = {PAGE + 64, 5, 2 * PAGE};
    struct hostile x;
    size_t i;
    int n;

    (void)state;
    hostile_open(&x, "head");
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        for (n = 0; goblin_ring_publish(x.srv, "0123456789", 10) == 0; n++)
            ;
        assert_int_equal(n, 64);
        atomic_store(&x.h->cq_head, x.srv->tx.pos - PAGE + bad[i]);
        assert_int_equal(goblin_ring_publish(x.srv, "0", 1), GOBLIN_EPROTO);
        assert_failed(&x);
        atomic_store(&x.h->cq_head, x.srv->tx.pos);
        hostile_session(&x);
    }
    goblin_ring_close(x.srv);
}

static void test_a_client_that_never_reads_fills_only_its_own_cq(void **st)
{
    struct goblin_slice recs[80], rec;
    struct pair a, b;
    int n;

    (void)st;
    pair_open(&a, "lazy", PAGE);
    pair_open(&b, "busy", PAGE);
    for (n = 0; goblin_ring_publish(a.srv, "reply", 5) == 0; n++)
        ;
    assert_int_equal(n, 64);
    assert_int_equal(goblin_ring_publish(a.srv, "reply", 5), GOBLIN_EAGAIN);
    for (n = 0; n < 1000; n++) {
        assert_int_equal(goblin_ring_publish(b.cli, "ping", 4), 0);
        assert_int_equal(goblin_ring_peek(b.srv, &rec), 1);
        assert_int_equal(goblin_ring_publish(b.srv, rec.ptr, 4), 0);
        goblin_ring_release(b.srv);
        assert_int_equal(goblin_ring_peek(b.cli, &rec), 1);
        goblin_ring_release(b.cli);
    }
    assert_int_equal(goblin_ring_poll(a.cli, recs, 80), 64);
    goblin_ring_release(a.cli);
    assert_int_equal(goblin_ring_publish(a.srv, "reply", 5), 0);
    pair_close(&a);
    pair_close(&b);
}

static void test_a_client_dying_mid_record_published_nothing(void **state)
{
    struct goblin_slice rec;
    struct pair p;
    void *buf;

    (void)state;
    pair_open(&p, "midrec", PAGE);
    assert_int_equal(goblin_ring_reserve(p.cli, 300, &buf), 0);
    memset(buf, 'z', 300);
    assert_int_equal(goblin_ring_commit(p.cli, 300), 0);   /* no flush */
    assert_int_equal(goblin_ring_peek(p.srv, &rec), 0);
    goblin_ring_close(p.cli);
    assert_int_equal(goblin_ring_peek(p.srv, &rec), 0);
    assert_int_equal(connect_client(p.srv, p.path, NULL, &p.cli), 0);
    assert_int_equal(goblin_ring_peek(p.srv, &rec), 0);
    assert_int_equal(goblin_ring_publish(p.cli, "new", 3), 0);
    assert_int_equal(goblin_ring_peek(p.srv, &rec), 1);
    assert_memory_equal(rec.ptr, "new", 3);
    goblin_ring_release(p.srv);
    pair_close(&p);
}

/* A forged header at the server's next position: mostly legal ones, so
 * the server gets deep into records before something breaks. */
static void forge_next(struct hostile *x, uint64_t v)
{
    static const uint32_t lens[] = {0, 10, 48, 49, 2032, 2033, 4096};
    uint32_t len = v % 16 == 0 ? (uint32_t)(v >> 32) : lens[(v >> 4) % 7];
    uint32_t flags = v % 8 == 1 ? (uint32_t)(v >> 20)
                                : (v % 8 == 2 ? RING_FLAG_FILLER : 0);

    forge(x, x->srv->rx.pos, len, flags);
}

/* The index words the client owns: mostly near their sane values. */
static void scribble_index(struct hostile *x, uint64_t v, uint64_t w)
{
    uint64_t near = (x->srv->rx.pos & ~(uint64_t)63) + (w % 9) * 64 - 256;

    if (v % 2)
        atomic_store(&x->h->sq_tail, v % 8 == 1 ? w : near);
    else
        atomic_store(&x->h->cq_head, v % 8 == 0 ? w :
                     x->srv->tx.pos - (w % 70) * 64);
}

/* Bytes over data, header words the server owns (it must never believe
 * them), flags and futex words. */
static void scribble_bytes(struct hostile *x, uint64_t v, uint64_t w)
{
    unsigned char bytes[64];
    size_t n = 1 + w % 64, off = (w >> 8) % (PAGE - n);

    switch (v % 4) {
    case 0:
        fill_bytes(bytes, sizeof(bytes), w);
        memcpy((v & 4 ? x->sq : x->cq) + off, bytes, n);
        break;
    case 1:
        atomic_store(&x->h->client_flags, (uint32_t)w);
        atomic_store(v & 4 ? &x->h->sq_sleep : &x->h->cq_sleep, (uint32_t)w);
        break;
    default:
        atomic_store(&x->h->sq_head, w);
        atomic_store(&x->h->cq_tail, ~w);
        atomic_store(&x->h->epoch_ack, w);
        x->h->sq_cap = w;
        x->h->cq_off = w;
        break;
    }
}

/* One random write by the hostile client. */
static void scribble(struct hostile *x, uint64_t *s)
{
    uint64_t r = rnd(s) % 100, v = rnd(s), w = rnd(s);

    if (r < 50) {
        forge_next(x, v);
    } else if (r < 60) {             /* a session, mostly from sane words */
        if (v % 4 != 0) {
            atomic_store(&x->h->sq_tail, x->srv->rx.pos & ~(uint64_t)63);
            atomic_store(&x->h->cq_head, x->srv->tx.pos & ~(uint64_t)63);
        }
        atomic_fetch_add(&x->h->epoch, 1);
    } else if (r < 70) {
        scribble_index(x, v, w);
    } else if (r < 97) {
        scribble_bytes(x, v, w);
    } else {
        atomic_store(&x->h->session_key, w);    /* forges then miss */
    }
}

static void check_record(const struct hostile *x, struct goblin_slice rec)
{
    const unsigned char *p = rec.ptr;

    assert_true(p >= x->sq + 16 && p <= x->sq + PAGE);
    assert_true(rec.len <= (size_t)(x->sq + PAGE - p));
}

/* What the fuzz saw: records handed out and protocol errors. */
static uint64_t seen_records, seen_eproto;

/* One random call by the server; its result must be a legal one. */
static void serve(struct hostile *x, uint64_t *s)
{
    static unsigned char buf[PAGE];
    struct goblin_slice recs[8];
    uint32_t len = (uint32_t)(rnd(s) % 2100);
    int rc, i;
    void *at;

    switch (rnd(s) % 6) {
    case 0:
        rc = goblin_ring_peek(x->srv, recs);
        assert_true(rc == 0 || rc == 1 || rc == GOBLIN_RING_SESSION ||
                    rc == GOBLIN_EPROTO);
        if (rc == 1)
            check_record(x, recs[0]);
        seen_records += rc == 1;
        seen_eproto += rc == GOBLIN_EPROTO;
        break;
    case 1:
        rc = goblin_ring_poll(x->srv, recs, 8);
        assert_true((rc >= 0 && rc <= 8) || rc == GOBLIN_RING_SESSION ||
                    rc == GOBLIN_EPROTO);
        for (i = 0; rc != GOBLIN_RING_SESSION && i < rc; i++)
            check_record(x, recs[i]);
        seen_records += rc > 0 && rc <= 8 ? (uint64_t)rc : 0;
        break;
    case 2:
        goblin_ring_release(x->srv);
        break;
    case 3:
        rc = goblin_ring_publish(x->srv, buf, len);
        assert_true(rc == 0 || rc == GOBLIN_EAGAIN || rc == GOBLIN_EINVAL ||
                    rc == GOBLIN_EPROTO);
        break;
    case 4:
        rc = goblin_ring_reserve(x->srv, len, &at);
        assert_true(rc == 0 || rc == GOBLIN_EAGAIN || rc == GOBLIN_EINVAL ||
                    rc == GOBLIN_EPROTO);
        if (rc == 0) {
            memset(at, 'q', len);
            assert_int_equal(goblin_ring_commit(x->srv, len / 2), 0);
        }
        goblin_ring_flush(x->srv);
        break;
    default:
        rc = goblin_ring_wait(x->srv, 0);
        assert_true(rc == 1 || rc == GOBLIN_ETIMEDOUT);
        break;
    }
}

static void test_random_scribbles_never_escape_the_ring(void **state)
{
    struct goblin_slice rec;
    struct goblin_ring_stats stats;
    struct hostile x;
    struct pair good;
    uint64_t s = 0x5eed, it;

    (void)state;
    hostile_open(&x, "fuzz");
    pair_open(&good, "fuzzgood", PAGE);
    for (it = 0; it < 300000; it++) {
        scribble(&x, &s);
        serve(&x, &s);
        serve(&x, &s);
        if (it % 97 != 0)
            continue;
        assert_int_equal(goblin_ring_publish(good.cli, &it, 8), 0);
        assert_int_equal(goblin_ring_peek(good.srv, &rec), 1);
        assert_memory_equal(rec.ptr, &it, 8);
        goblin_ring_release(good.srv);
    }
    goblin_ring_get_stats(x.srv, &stats);
    print_message("%llu sessions, %llu records, %llu protocol errors\n",
                  (unsigned long long)stats.sessions,
                  (unsigned long long)seen_records,
                  (unsigned long long)seen_eproto);
    assert_true(stats.sessions > 1000 && seen_records > 1000 &&
                seen_eproto > 1000);
    goblin_ring_close(x.srv);
    pair_close(&good);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_oversize_length_is_a_protocol_error),
        cmocka_unit_test(test_a_record_crossing_the_end_is_rejected),
        cmocka_unit_test(test_fillers_are_checked),
        cmocka_unit_test(test_records_past_the_released_head_are_rejected),
        cmocka_unit_test(test_a_tail_out_of_range_fails_on_the_wait_path),
        cmocka_unit_test(test_a_head_out_of_range_fails_the_producer),
        cmocka_unit_test(test_a_client_that_never_reads_fills_only_its_own_cq),
        cmocka_unit_test(test_a_client_dying_mid_record_published_nothing),
        cmocka_unit_test(test_random_scribbles_never_escape_the_ring),
    };

    if (!shm_available())
        return SKIP_EXIT;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
