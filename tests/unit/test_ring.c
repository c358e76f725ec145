/* test_ring.c - the ring transport on one thread: sizes, creating and
 * opening files, records of every length, filling the smallest ring,
 * wrap fillers at every offset, indices across 2^64, batches, sessions,
 * stale files and server restarts. Exit 77 (skip) without /dev/shm. */
#include <signal.h>
#include <sys/wait.h>

#include "ring/ring_fast.h"
#include "test_ring_util.h"

#define PAGE 4096u

static void test_size_parse_accepts_suffixes_in_any_case(void **state)
{
    static const struct { const char *s; uint64_t v; } ok[] = {
        {"0", 0}, {"4096", 4096}, {"512b", 512}, {"512B", 512},
        {"4k", 4096}, {"4K", 4096}, {"4kb", 4096}, {"4KiB", 4096},
        {"1m", 1 << 20}, {"1MB", 1 << 20}, {"3mib", 3 << 20},
        {"1g", 1 << 30}, {"1G", 1 << 30}, {"1Gb", 1 << 30},
        {"1073741824", 1 << 30},
    };
    uint64_t v;
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        v = 7;
        assert_int_equal(goblin_ring_size_parse(ok[i].s, strlen(ok[i].s),
                                                &v), 0);
        assert_true(v == ok[i].v);
    }
    assert_int_equal(goblin_ring_size_parse("4kXX", 2, &v), 0);
    assert_true(v == 4096);
}

static void test_size_parse_rejects_bad_text_and_big_sizes(void **state)
{
    static const char *bad[] = {"", "k", "4x", "4kbb", " 4", "4 ", "-1",
                                "1.5m", "0x10", "4 k", "99999999999999999999x"};
    static const char *big[] = {"2g", "1073741825", "1048577k",
                                "99999999999999999999999", "1025m"};
    uint64_t v = 7;
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(goblin_ring_size_parse(bad[i], strlen(bad[i]), &v),
                         GOBLIN_EINVAL);
    for (i = 0; i < sizeof(big) / sizeof(big[0]); i++)
        assert_int_equal(goblin_ring_size_parse(big[i], strlen(big[i]), &v),
                         GOBLIN_ERANGE);
    assert_true(v == 7);                    /* a failed call stores nothing */
    assert_int_equal(goblin_ring_size_parse(NULL, 0, &v), GOBLIN_EINVAL);
}

static void test_capacity_rounds_up_to_a_power_of_two_page(void **state)
{
    (void)state;
    assert_true(goblin_ring_capacity(0) == GOBLIN_RING_DEFAULT_SIZE);
    assert_true(goblin_ring_capacity(1) == PAGE);
    assert_true(goblin_ring_capacity(PAGE) == PAGE);
    assert_true(goblin_ring_capacity(PAGE + 1) == 2 * PAGE);
    assert_true(goblin_ring_capacity((1 << 20) + 1) == 2 << 20);
    assert_true(goblin_ring_capacity(GOBLIN_RING_MAX_SIZE) ==
                GOBLIN_RING_MAX_SIZE);
    assert_true(goblin_ring_capacity(GOBLIN_RING_MAX_SIZE + 1) == 0);
}

static void test_create_publishes_the_header_and_mode(void **state)
{
    struct goblin_ring_config cfg = {0};
    struct goblin__ring_hdr *h;
    goblin_ring *srv;
    struct stat st;
    char p[128];

    (void)state;
    cfg.sq_size = 1;
    cfg.cq_size = 5000;
    ring_path(p, sizeof(p), "hdr");
    assert_int_equal(goblin_ring_create(p, &cfg, &srv), 0);
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(st.st_size, PAGE + PAGE + 2 * PAGE);
    h = srv->hdr;
    assert_int_equal(h->magic, RING_MAGIC);
    assert_int_equal(h->version, RING_VERSION);
    assert_true(h->sq_cap == PAGE && h->cq_cap == 2 * PAGE);
    assert_true(h->sq_off == PAGE && h->cq_off == 2 * PAGE);
    assert_int_equal(h->owner_pid, getpid());
    assert_int_equal(goblin_ring_max_record(srv), 2 * PAGE / 2 - 16);
    goblin_ring_close(srv);
    assert_int_equal(access(p, F_OK), -1);

    cfg.mode = 0640;
    assert_int_equal(goblin_ring_create(p, &cfg, &srv), 0);
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0640);
    goblin_ring_close(srv);
}

static void test_create_rejects_bad_arguments(void **state)
{
    struct goblin_ring_config cfg = {0};
    goblin_ring *srv = NULL;
    char p[128];

    (void)state;
    ring_path(p, sizeof(p), "args");
    cfg.sq_size = GOBLIN_RING_MAX_SIZE + 1;
    assert_int_equal(goblin_ring_create(p, &cfg, &srv), GOBLIN_ERANGE);
    cfg.sq_size = 0;
    cfg.idle = 9;
    assert_int_equal(goblin_ring_create(p, &cfg, &srv), GOBLIN_EINVAL);
    assert_int_equal(goblin_ring_create(NULL, NULL, &srv), GOBLIN_EINVAL);
    assert_int_equal(goblin_ring_create("", NULL, &srv), GOBLIN_EINVAL);
    assert_int_equal(goblin_ring_create("/nonexistent-dir/x.ring", NULL,
                                        &srv), -2);     /* -ENOENT */
    assert_null(srv);
    assert_int_equal(access(p, F_OK), -1);
}

static void test_create_never_clobbers_a_file_that_is_not_a_ring(void **st)
{
    goblin_ring *srv = NULL;
    char p[128], buf[32] = {0};
    int fd;

    (void)st;
    ring_path(p, sizeof(p), "notring");
    fd = open(p, O_RDWR | O_CREAT, 0600);
    for (int i = 0; i < 100; i++)
        assert_int_equal(write(fd, "hello world!", 12), 12);
    assert_int_equal(goblin_ring_create(p, NULL, &srv), GOBLIN_EINCOMPAT);
    assert_int_equal(pread(fd, buf, 12, 0), 12);
    assert_string_equal(buf, "hello world!");
    close(fd);
    unlink(p);
}

static void test_open_times_out_while_no_server_publishes(void **state)
{
    struct goblin_ring_config cfg = {0};
    goblin_ring *cli = NULL;
    char p[128], zero[PAGE] = {0};
    int fd;

    (void)state;
    cfg.open_timeout_ns = 20000000;
    ring_path(p, sizeof(p), "absent");
    assert_int_equal(goblin_ring_open(p, &cfg, &cli), GOBLIN_ETIMEDOUT);
    fd = open(p, O_RDWR | O_CREAT, 0600);               /* short file */
    assert_int_equal(write(fd, zero, 100), 100);
    assert_int_equal(goblin_ring_open(p, &cfg, &cli), GOBLIN_ETIMEDOUT);
    assert_int_equal(pwrite(fd, zero, PAGE, 0), PAGE);  /* no magic yet */
    assert_int_equal(goblin_ring_open(p, &cfg, &cli), GOBLIN_ETIMEDOUT);
    assert_null(cli);
    close(fd);
    unlink(p);
}

static void test_open_rejects_other_layouts(void **state)
{
    struct goblin_ring_config cfg = {0};
    goblin_ring *srv, *cli = NULL;
    char p[128];

    (void)state;
    cfg.sq_size = cfg.cq_size = PAGE;
    ring_path(p, sizeof(p), "layout");
    assert_int_equal(goblin_ring_create(p, &cfg, &srv), 0);
    srv->hdr->version = RING_VERSION + 1;
    assert_int_equal(goblin_ring_open(p, &cfg, &cli), GOBLIN_EINCOMPAT);
    srv->hdr->version = RING_VERSION;
    srv->hdr->cq_cap = 3 * PAGE;                        /* not a power */
    assert_int_equal(goblin_ring_open(p, &cfg, &cli), GOBLIN_EINCOMPAT);
    srv->hdr->cq_cap = 4 * PAGE;                        /* past the end */
    assert_int_equal(goblin_ring_open(p, &cfg, &cli), GOBLIN_EINCOMPAT);
    srv->hdr->cq_cap = PAGE;
    atomic_store(&srv->hdr->magic, 0x12345678);
    assert_int_equal(goblin_ring_open(p, &cfg, &cli), GOBLIN_EINCOMPAT);
    assert_null(cli);
    goblin_ring_close(srv);
}

static void test_a_second_client_is_refused(void **state)
{
    struct goblin_ring_config cfg = {0};
    goblin_ring *other = NULL;
    struct pair p;

    (void)state;
    pair_open(&p, "second", PAGE);
    cfg.open_timeout_ns = 20000000;
    assert_int_equal(goblin_ring_open(p.path, &cfg, &other), GOBLIN_EBUSY);
    assert_null(other);
    goblin_ring_close(p.cli);
    assert_int_equal(connect_client(p.srv, p.path, NULL, &p.cli), 0);
    pair_close(&p);
}

/* Publishes len bytes of seed from one side and checks the other gets
 * exactly them. */
static void pass(goblin_ring *from, goblin_ring *to, uint32_t len,
                 uint64_t seed)
{
    static unsigned char buf[1 << 16];
    struct goblin_slice rec;

    fill_bytes(buf, len, seed);
    assert_int_equal(goblin_ring_publish(from, buf, len), 0);
    assert_int_equal(goblin_ring_peek(to, &rec), GOBLIN_RING_RECORD);
    assert_int_equal(rec.len, len);
    assert_true(((uintptr_t)rec.ptr & 7) == 0);
    assert_memory_equal(rec.ptr, buf, len);
    assert_int_equal(goblin_ring_peek(to, &rec), 0);
    goblin_ring_release(to);
}

static void test_records_of_every_size_class_go_both_ways(void **state)
{
    static const uint32_t lens[] = {0, 1, 12, 47, 48, 49, 63, 64, 100,
                                    1000, 16368, 16369, 32752};
    struct pair p;
    size_t i;

    (void)state;
    pair_open(&p, "sizes", 64 * 1024);
    assert_int_equal(goblin_ring_max_record(p.cli), 32752);
    for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
        pass(p.cli, p.srv, lens[i], i);
        pass(p.srv, p.cli, lens[i], i + 100);
    }
    pair_close(&p);
}

static void test_record_length_limit_is_half_the_ring(void **state)
{
    static unsigned char buf[PAGE];
    void *at;
    struct pair p;
    uint32_t max;

    (void)state;
    pair_open(&p, "limit", PAGE);
    max = goblin_ring_max_record(p.cli);
    assert_int_equal(max, PAGE / 2 - 16);
    assert_int_equal(goblin_ring_publish(p.cli, buf, max + 1), GOBLIN_EINVAL);
    assert_int_equal(goblin_ring_reserve(p.srv, max + 1, &at), GOBLIN_EINVAL);
    assert_int_equal(goblin_ring_publish(p.srv, buf, UINT32_MAX),
                     GOBLIN_EINVAL);
    pass(p.cli, p.srv, max, 1);
    pass(p.srv, p.cli, max, 2);
    pair_close(&p);
}

static void test_records_exactly_fill_the_smallest_ring(void **state)
{
    static unsigned char buf[PAGE];
    struct goblin_slice recs[80];
    struct pair p;
    int round, i;

    (void)state;
    pair_open(&p, "fill", PAGE);
    for (round = 0; round < 3; round++) {
        for (i = 0; i < 64; i++) {              /* 64 one-line records */
            fill_bytes(buf, 48, (uint64_t)(round * 100 + i));
            assert_int_equal(goblin_ring_publish(p.cli, buf, i % 2 ? 48 : 0),
                             0);
        }
        assert_int_equal(goblin_ring_publish(p.cli, buf, 0), GOBLIN_EAGAIN);
        assert_int_equal(goblin_ring_poll(p.srv, recs, 80), 64);
        for (i = 0; i < 64; i++) {
            fill_bytes(buf, 48, (uint64_t)(round * 100 + i));
            assert_int_equal(recs[i].len, i % 2 ? 48 : 0);
            assert_memory_equal(recs[i].ptr, buf, recs[i].len);
        }
        goblin_ring_release(p.srv);
    }
    /* Two records of the largest size fill it exactly too. */
    assert_int_equal(goblin_ring_publish(p.srv, buf, PAGE / 2 - 16), 0);
    assert_int_equal(goblin_ring_publish(p.srv, buf, PAGE / 2 - 16), 0);
    assert_int_equal(goblin_ring_publish(p.srv, buf, 0), GOBLIN_EAGAIN);
    assert_int_equal(goblin_ring_poll(p.cli, recs, 80), 2);
    goblin_ring_release(p.cli);
    assert_int_equal(goblin_ring_publish(p.srv, buf, PAGE / 2 - 16), 0);
    pair_close(&p);
}

/* Moves both queues of p to line offset k of their region. */
static void move_to_line(struct pair *p, unsigned k)
{
    struct goblin_slice rec;

    while ((p->cli->tx.pos / 64) % (PAGE / 64) != k) {
        assert_int_equal(goblin_ring_publish(p->cli, "x", 1), 0);
        assert_int_equal(goblin_ring_peek(p->srv, &rec), 1);
        goblin_ring_release(p->srv);
    }
    while ((p->srv->tx.pos / 64) % (PAGE / 64) != k) {
        assert_int_equal(goblin_ring_publish(p->srv, "y", 1), 0);
        assert_int_equal(goblin_ring_peek(p->cli, &rec), 1);
        goblin_ring_release(p->cli);
    }
}

/* Every record size (in lines) from every line offset of a one-page ring,
 * so every filler size happens, with indices starting at base. */
static void every_offset(uint64_t base)
{
    struct goblin_ring_config cfg = {0};
    struct pair p;
    unsigned k, n;

    cfg.sq_size = cfg.cq_size = PAGE;
    ring_path(p.path, sizeof(p.path), "offsets");
    assert_int_equal(goblin_ring_create(p.path, &cfg, &p.srv), 0);
    assert_int_equal(goblin__ring_set_base(p.srv, base), 0);
    assert_int_equal(connect_client(p.srv, p.path, &cfg, &p.cli), 0);
    assert_true(p.cli->tx.pos == base && p.cli->rx.pos == base);
    for (k = 0; k < PAGE / 64; k++) {
        for (n = 1; n <= PAGE / 2 / 64; n++) {
            move_to_line(&p, k);
            pass(p.cli, p.srv, n * 64 - 16, k * 100 + n);
            pass(p.srv, p.cli, n * 64 - 16 - (n & 1), k * 100 + n);
        }
    }
    pair_close(&p);
}

static void test_wrap_fillers_at_every_offset(void **state)
{
    (void)state;
    every_offset(0);
}

static void test_indices_run_across_the_top_of_uint64(void **state)
{
    (void)state;
    every_offset(UINT64_MAX - 63);                  /* 2^64 - 64 */
    every_offset((UINT64_MAX - 5 * PAGE + 1) + 64 * 7);
}

static void test_random_traffic_from_near_uint64_max(void **state)
{
    static unsigned char buf[PAGE];
    struct goblin_ring_config cfg = {0};
    struct goblin_slice rec;
    uint64_t s = 3, sent = 0, got = 0;
    struct pair p;
    uint32_t len;

    (void)state;
    cfg.sq_size = cfg.cq_size = PAGE;
    ring_path(p.path, sizeof(p.path), "top");
    assert_int_equal(goblin_ring_create(p.path, &cfg, &p.srv), 0);
    assert_int_equal(goblin__ring_set_base(p.srv, UINT64_MAX - 40 * PAGE + 1),
                     0);
    assert_int_equal(connect_client(p.srv, p.path, &cfg, &p.cli), 0);
    while (got < 20000) {
        len = (uint32_t)(rnd(&s) % (PAGE / 2 - 15));
        fill_bytes(buf, len, sent);
        if (goblin_ring_publish(p.cli, buf, len) == 0)
            sent++;
        while (rnd(&s) % 3 != 0 &&
               goblin_ring_peek(p.srv, &rec) == GOBLIN_RING_RECORD) {
            fill_bytes(buf, rec.len, got++);
            assert_memory_equal(rec.ptr, buf, rec.len);
            goblin_ring_release(p.srv);
        }
    }
    assert_true(p.cli->tx.pos < UINT64_MAX - 40 * PAGE);  /* passed 2^64 */
    pair_close(&p);
}

static void test_a_ping_pong_stays_in_the_first_page(void **state)
{
    struct goblin_slice recs[200];
    uint64_t i, far = 0;
    struct pair p;

    (void)state;
    pair_open(&p, "window", 64 * 1024);
    for (i = 0; i < 1000; i++) {            /* caught up: wraps at 4 KiB */
        pass(p.cli, p.srv, 48, i);
        pass(p.srv, p.cli, (uint32_t)(i % 300), i);
        assert_true((p.cli->tx.pos & 0xffff) <= PAGE);
        assert_true((p.srv->tx.pos & 0xffff) <= PAGE);
    }
    for (i = 0; i < 200; i++)               /* a backlog uses it all */
        assert_int_equal(goblin_ring_publish(p.cli, &i, 8), 0);
    assert_int_equal(goblin_ring_poll(p.srv, recs, 200), 200);
    for (i = 0; i < 200; i++) {
        assert_memory_equal(recs[i].ptr, &i, 8);
        far |= (uint64_t)((const unsigned char *)recs[i].ptr -
                          (const unsigned char *)p.srv->rx.data);
    }
    assert_true(far >= PAGE);
    goblin_ring_release(p.srv);
    pair_close(&p);
}

/* Records show through their stamps before the producer stores its
 * tail: a consumer that took them and then waits sees a tail behind it. */
static void test_a_consumer_ahead_of_the_tail_waits_quietly(void **state)
{
    struct goblin_slice rec;
    uint64_t before;
    struct pair p;

    (void)state;
    pair_open(&p, "ahead", PAGE);
    before = atomic_load(&p.srv->hdr->cq_tail);
    assert_int_equal(goblin_ring_publish(p.srv, "abc", 3), 0);
    atomic_store(&p.srv->hdr->cq_tail, before);     /* not stored yet */
    assert_int_equal(goblin_ring_peek(p.cli, &rec), 1);
    goblin_ring_release(p.cli);
    assert_int_equal(goblin_ring_wait(p.cli, 0), GOBLIN_ETIMEDOUT);
    assert_int_equal(goblin_ring_wait(p.cli, 1000000), GOBLIN_ETIMEDOUT);
    assert_int_equal(goblin_ring_peek(p.cli, &rec), 0);
    atomic_store(&p.srv->hdr->cq_tail, p.srv->tx.pos);
    pass(p.srv, p.cli, 4, 1);
    pair_close(&p);
}

static void test_batches_become_visible_at_flush(void **state)
{
    struct goblin_slice recs[8], msgs[5];
    struct pair p;
    void *buf;
    int i;

    (void)state;
    pair_open(&p, "batch", PAGE);
    for (i = 0; i < 3; i++) {
        assert_int_equal(goblin_ring_reserve(p.cli, 40, &buf), 0);
        memset(buf, 'a' + i, 40);
        assert_int_equal(goblin_ring_commit(p.cli, (uint32_t)(10 * i)), 0);
    }
    assert_int_equal(goblin_ring_peek(p.srv, &recs[0]), 0);
    goblin_ring_flush(p.cli);
    assert_int_equal(goblin_ring_poll(p.srv, recs, 8), 3);
    for (i = 0; i < 3; i++) {
        assert_int_equal(recs[i].len, 10 * i);
        if (i > 0)
            assert_int_equal(((const char *)recs[i].ptr)[0], 'a' + i);
    }
    goblin_ring_release(p.srv);
    for (i = 0; i < 5; i++)
        msgs[i] = slice_of("12345678", (size_t)i + 1);
    assert_int_equal(goblin_ring_publish_batch(p.srv, msgs, 5), 5);
    assert_int_equal(goblin_ring_poll(p.cli, recs, 2), 2);
    assert_int_equal(goblin_ring_poll(p.cli, recs + 2, 8), 3);
    assert_memory_equal(recs[4].ptr, "12345", 5);
    goblin_ring_release(p.cli);
    pair_close(&p);
}

static void test_batch_stops_where_the_ring_is_full(void **state)
{
    static unsigned char big[PAGE];
    struct goblin_slice msgs[3], recs[4];
    struct pair p;

    (void)state;
    pair_open(&p, "batchfull", PAGE);
    msgs[0] = slice_of(big, 1000);
    msgs[1] = slice_of(big, 1500);
    msgs[2] = slice_of(big, 1600);
    assert_int_equal(goblin_ring_publish_batch(p.cli, msgs, 3), 2);
    assert_int_equal(goblin_ring_publish_batch(p.cli, msgs + 2, 1),
                     GOBLIN_EAGAIN);
    msgs[0] = slice_of(big, PAGE);
    assert_int_equal(goblin_ring_publish_batch(p.cli, msgs, 1),
                     GOBLIN_EINVAL);
    assert_int_equal(goblin_ring_poll(p.srv, recs, 4), 2);
    goblin_ring_release(p.srv);
    assert_int_equal(goblin_ring_publish_batch(p.cli, msgs + 2, 1), 1);
    assert_int_equal(goblin_ring_publish_batch(p.cli, msgs, 0), 0);
    pair_close(&p);
}

static void test_commit_checks_its_reservation(void **state)
{
    struct goblin_slice rec;
    struct pair p;
    void *buf;

    (void)state;
    pair_open(&p, "commit", PAGE);
    assert_int_equal(goblin_ring_commit(p.cli, 0), GOBLIN_EINVAL);
    assert_int_equal(goblin_ring_reserve(p.cli, 100, &buf), 0);
    assert_int_equal(goblin_ring_commit(p.cli, 101), GOBLIN_EINVAL);
    memcpy(buf, "zero copy", 9);
    assert_int_equal(goblin_ring_commit(p.cli, 9), 0);
    assert_int_equal(goblin_ring_commit(p.cli, 9), GOBLIN_EINVAL);
    goblin_ring_flush(p.cli);
    goblin_ring_flush(p.cli);
    assert_int_equal(goblin_ring_peek(p.srv, &rec), 1);
    assert_int_equal(rec.len, 9);
    assert_memory_equal(rec.ptr, "zero copy", 9);
    goblin_ring_release(p.srv);
    assert_int_equal(goblin_ring_poll(p.srv, &rec, 65537), GOBLIN_EINVAL);
    assert_int_equal(goblin_ring_poll(p.srv, &rec, 0), 0);
    assert_int_equal(goblin_ring_drain(p.srv), GOBLIN_EINVAL);
    assert_int_equal(goblin_ring_send(p.srv, "x", 1, 0), GOBLIN_EINVAL);
    pair_close(&p);
}

static void test_drain_sets_replies_aside_in_order(void **state)
{
    struct goblin_ring_config cfg = {0};
    struct goblin_slice rec;
    char msg[32];
    struct pair p;
    int i;

    (void)state;
    cfg.sq_size = cfg.cq_size = PAGE;
    cfg.drain_limit = 200;                  /* six 32-byte entries */
    ring_path(p.path, sizeof(p.path), "drain");
    assert_int_equal(goblin_ring_create(p.path, &cfg, &p.srv), 0);
    assert_int_equal(connect_client(p.srv, p.path, &cfg, &p.cli), 0);
    for (i = 0; i < 10; i++) {
        snprintf(msg, sizeof(msg), "reply number %06d..", i);
        assert_int_equal(goblin_ring_publish(p.srv, msg, 20), 0);
    }
    assert_int_equal(goblin_ring_drain(p.cli), 6);
    assert_int_equal(goblin_ring_drain(p.cli), GOBLIN_ELIMIT);
    assert_int_equal(goblin_ring_peek(p.cli, &rec), 1);  /* from the side */
    assert_int_equal(goblin_ring_drain(p.cli), 0);       /* one is held */
    goblin_ring_release(p.cli);
    assert_int_equal(goblin_ring_drain(p.cli), 1);
    for (i = 1; i < 10; i++) {
        snprintf(msg, sizeof(msg), "reply number %06d..", i);
        assert_int_equal(goblin_ring_peek(p.cli, &rec), 1);
        assert_int_equal(rec.len, 20);
        assert_memory_equal(rec.ptr, msg, 20);
        if (i % 3 == 0)
            goblin_ring_release(p.cli);
    }
    assert_int_equal(goblin_ring_peek(p.cli, &rec), 0);
    goblin_ring_release(p.cli);
    while (goblin_ring_publish(p.cli, "fill", 4) == 0)
        ;
    assert_int_equal(goblin_ring_send(p.cli, "late", 4, 1000000),
                     GOBLIN_ETIMEDOUT);     /* nobody consumes SQ */
    pair_close(&p);
}

static void test_a_new_session_discards_what_the_old_client_left(void **st)
{
    struct goblin_ring_stats stats;
    struct goblin_slice rec;
    struct pair p;
    void *buf;

    (void)st;
    pair_open(&p, "session", PAGE);
    assert_int_equal(goblin_ring_publish(p.cli, "old1", 4), 0);
    assert_int_equal(goblin_ring_publish(p.cli, "old2", 4), 0);
    assert_int_equal(goblin_ring_publish(p.srv, "reply", 5), 0);
    assert_int_equal(goblin_ring_reserve(p.cli, 10, &buf), 0);
    memcpy(buf, "half", 4);                 /* dies mid-record */
    goblin_ring_close(p.cli);
    assert_int_equal(connect_client(p.srv, p.path, NULL, &p.cli), 0);
    assert_int_equal(goblin_ring_peek(p.srv, &rec), 0);
    assert_int_equal(goblin_ring_peek(p.cli, &rec), 0);
    pass(p.cli, p.srv, 3, 1);
    pass(p.srv, p.cli, 4, 2);
    goblin_ring_get_stats(p.srv, &stats);
    assert_true(stats.sessions == 2);
    pair_close(&p);
}

/* The server looks at the next stamp before the epoch: a record found
 * while a new client bumps the epoch must still not be handed out, by
 * any of the three ways a server peeks. */
static void test_a_record_met_as_the_epoch_moves_is_dropped(void **state)
{
    struct goblin_slice rec;
    struct pair p;
    int way, rc;

    (void)state;
    pair_open(&p, "moved", PAGE);
    for (way = 0; way < 3; way++) {
        assert_int_equal(goblin_ring_publish(p.cli, "old", 3), 0);
        atomic_fetch_add(&p.srv->hdr->epoch, 1);    /* a new client */
        if (way == 0)
            rc = goblin__ring_peek_fast(p.srv, &rec);
        else if (way == 1)
            rc = goblin_ring_peek(p.srv, &rec);
        else
            rc = goblin_ring_poll(p.srv, &rec, 1);
        assert_int_equal(rc, GOBLIN_RING_SESSION);
        assert_int_equal(goblin_ring_peek(p.srv, &rec), 0);
        assert_int_equal(goblin__ring_peek_fast(p.srv, &rec), 0);
    }
    pair_close(&p);
}

static void test_the_server_reports_each_new_session(void **state)
{
    struct goblin_slice rec;
    struct opener o = {0};
    struct pair p;
    pthread_t th;
    int rc;

    (void)state;
    pair_open(&p, "report", PAGE);
    goblin_ring_close(p.cli);
    o.path = p.path;
    assert_int_equal(pthread_create(&th, NULL, opener_main, &o), 0);
    while ((rc = goblin_ring_peek(p.srv, &rec)) == 0)
        usleep(10);
    assert_int_equal(rc, GOBLIN_RING_SESSION);
    pthread_join(th, NULL);
    assert_int_equal(o.rc, 0);
    p.cli = o.cli;
    assert_int_equal(goblin_ring_peek(p.srv, &rec), 0);
    pair_close(&p);
}

static void test_a_client_reconnects_after_a_server_restart(void **state)
{
    struct goblin_slice rec;
    struct pair p;

    (void)state;
    pair_open(&p, "restart", PAGE);
    pass(p.cli, p.srv, 5, 1);
    goblin_ring_close(p.srv);
    assert_int_equal(goblin_ring_check(p.cli), GOBLIN_ECONNRESET);
    assert_int_equal(goblin_ring_wait(p.cli, -1), GOBLIN_ECONNRESET);
    assert_int_equal(goblin_ring_peek(p.cli, &rec), 0);
    assert_int_equal(goblin_ring_create(p.path, NULL, &p.srv), 0);
    assert_int_equal(goblin_ring_check(p.cli), GOBLIN_ECONNRESET);
    goblin_ring_close(p.cli);
    assert_int_equal(connect_client(p.srv, p.path, NULL, &p.cli), 0);
    assert_int_equal(goblin_ring_check(p.cli), 0);
    assert_int_equal(goblin_ring_check(p.srv), 0);
    pass(p.cli, p.srv, 6, 2);
    pass(p.srv, p.cli, 7, 3);
    pair_close(&p);
}

/* Forks a server that creates path and dies without closing it. */
static void leave_stale_file(const char *path)
{
    goblin_ring *srv;
    pid_t pid = fork();
    int status;

    assert_true(pid >= 0);
    if (pid == 0)
        _exit(goblin_ring_create(path, NULL, &srv) == 0 ? 0 : 1);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void test_a_stale_file_is_refused_then_taken_over(void **state)
{
    struct goblin_ring_config cfg = {0};
    goblin_ring *cli = NULL;
    struct pair p;

    (void)state;
    ring_path(p.path, sizeof(p.path), "stale");
    leave_stale_file(p.path);
    cfg.open_timeout_ns = 1000000000;
    assert_int_equal(goblin_ring_open(p.path, &cfg, &cli),
                     GOBLIN_ECONNREFUSED);
    assert_null(cli);
    assert_int_equal(goblin_ring_create(p.path, NULL, &p.srv), 0);
    assert_int_equal(p.srv->hdr->owner_pid, getpid());
    assert_int_equal(connect_client(p.srv, p.path, NULL, &p.cli), 0);
    pass(p.cli, p.srv, 8, 4);
    pair_close(&p);
}

static void test_a_live_server_file_is_not_taken_over(void **state)
{
    int up[2], down[2], status;
    goblin_ring *srv = NULL;
    char path[128], c;
    pid_t pid;

    (void)state;
    ring_path(path, sizeof(path), "live");
    assert_int_equal(pipe(up), 0);
    assert_int_equal(pipe(down), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        goblin_ring *mine;
        int ok = goblin_ring_create(path, NULL, &mine) == 0;

        if (write(up[1], "r", 1) != 1 || read(down[0], &c, 1) != 1)
            _exit(2);
        goblin_ring_close(mine);
        _exit(ok ? 0 : 1);
    }
    assert_int_equal(read(up[0], &c, 1), 1);
    assert_int_equal(goblin_ring_create(path, NULL, &srv), GOBLIN_EBUSY);
    assert_int_equal(write(down[1], "x", 1), 1);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_int_equal(goblin_ring_create(path, NULL, &srv), 0);
    goblin_ring_close(srv);
    close(up[0]);
    close(up[1]);
    close(down[0]);
    close(down[1]);
}

static void test_a_client_notices_its_server_died(void **state)
{
    int up[2], status;
    goblin_ring *cli = NULL;
    char path[128], c;
    pid_t pid;

    (void)state;
    ring_path(path, sizeof(path), "died");
    assert_int_equal(pipe(up), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {                 /* serves one handshake, then dies */
        struct goblin_slice rec;
        goblin_ring *srv;

        if (goblin_ring_create(path, NULL, &srv) != 0 ||
            write(up[1], "r", 1) != 1)
            _exit(1);
        while (goblin_ring_peek(srv, &rec) != GOBLIN_RING_SESSION)
            usleep(10);
        usleep(20000);
        _exit(0);
    }
    assert_int_equal(read(up[0], &c, 1), 1);
    assert_int_equal(goblin_ring_open(path, NULL, &cli), 0);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_int_equal(goblin_ring_check(cli), GOBLIN_ECONNRESET);
    assert_int_equal(goblin_ring_wait(cli, 5000000000), GOBLIN_ECONNRESET);
    assert_int_equal(goblin_ring_send(cli, "x", 1, 0), 0);
    goblin_ring_close(cli);
    unlink(path);
    close(up[0]);
    close(up[1]);
}

static void test_wait_any_returns_the_first_ready_ring(void **state)
{
    struct pair p[3];
    goblin_ring *srv[3];
    struct goblin_slice rec;

    (void)state;
    for (int i = 0; i < 3; i++) {
        char name[16];

        snprintf(name, sizeof(name), "any%d", i);
        pair_open(&p[i], name, PAGE);
        srv[i] = p[i].srv;
    }
    assert_int_equal(goblin_ring_wait_any(srv, 3, 0), GOBLIN_ETIMEDOUT);
    assert_int_equal(goblin_ring_wait_any(srv, 3, 1000000), GOBLIN_ETIMEDOUT);
    assert_int_equal(goblin_ring_publish(p[2].cli, "c", 1), 0);
    assert_int_equal(goblin_ring_wait_any(srv, 3, -1), 2);
    assert_int_equal(goblin_ring_publish(p[1].cli, "b", 1), 0);
    assert_int_equal(goblin_ring_wait_any(srv, 3, 0), 1);   /* priority */
    assert_int_equal(goblin_ring_peek(srv[1], &rec), GOBLIN_RING_RECORD);
    goblin_ring_release(srv[1]);
    assert_int_equal(goblin_ring_wait_any(srv, 3, 0), 2);
    assert_int_equal(goblin_ring_wait_any(srv, 0, 0), GOBLIN_EINVAL);
    assert_int_equal(goblin_ring_wait_any(&p[0].cli, 1, 0), GOBLIN_EINVAL);
    for (int i = 0; i < 3; i++)
        pair_close(&p[i]);
}

static void test_the_server_notices_its_client_died(void **state)
{
    int up[2], down[2], status;
    struct goblin_slice rec;
    goblin_ring *srv;
    char path[128], c;
    pid_t pid;

    (void)state;
    ring_path(path, sizeof(path), "clientdied");
    assert_int_equal(goblin_ring_create(path, NULL, &srv), 0);
    assert_int_equal(goblin_ring_client_alive(srv), 0);     /* none yet */
    assert_int_equal(pipe(up), 0);
    assert_int_equal(pipe(down), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {                 /* a client that dies without a word */
        goblin_ring *cli;

        if (goblin_ring_open(path, NULL, &cli) != 0 ||
            write(up[1], "o", 1) != 1 || read(down[0], &c, 1) != 1)
            _exit(1);
        _exit(0);
    }
    while (goblin_ring_peek(srv, &rec) != GOBLIN_RING_SESSION)
        usleep(10);
    assert_int_equal(read(up[0], &c, 1), 1);
    assert_int_equal(goblin_ring_client_alive(srv), 0);
    assert_int_equal(write(down[1], "x", 1), 1);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_int_equal(goblin_ring_client_alive(srv), GOBLIN_ECONNRESET);
    goblin_ring_close(srv);
    close(up[0]);
    close(up[1]);
    close(down[0]);
    close(down[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_size_parse_accepts_suffixes_in_any_case),
        cmocka_unit_test(test_size_parse_rejects_bad_text_and_big_sizes),
        cmocka_unit_test(test_capacity_rounds_up_to_a_power_of_two_page),
        cmocka_unit_test(test_create_publishes_the_header_and_mode),
        cmocka_unit_test(test_create_rejects_bad_arguments),
        cmocka_unit_test(test_create_never_clobbers_a_file_that_is_not_a_ring),
        cmocka_unit_test(test_open_times_out_while_no_server_publishes),
        cmocka_unit_test(test_open_rejects_other_layouts),
        cmocka_unit_test(test_a_second_client_is_refused),
        cmocka_unit_test(test_records_of_every_size_class_go_both_ways),
        cmocka_unit_test(test_record_length_limit_is_half_the_ring),
        cmocka_unit_test(test_records_exactly_fill_the_smallest_ring),
        cmocka_unit_test(test_wrap_fillers_at_every_offset),
        cmocka_unit_test(test_indices_run_across_the_top_of_uint64),
        cmocka_unit_test(test_random_traffic_from_near_uint64_max),
        cmocka_unit_test(test_a_ping_pong_stays_in_the_first_page),
        cmocka_unit_test(test_a_consumer_ahead_of_the_tail_waits_quietly),
        cmocka_unit_test(test_batches_become_visible_at_flush),
        cmocka_unit_test(test_batch_stops_where_the_ring_is_full),
        cmocka_unit_test(test_commit_checks_its_reservation),
        cmocka_unit_test(test_drain_sets_replies_aside_in_order),
        cmocka_unit_test(test_a_new_session_discards_what_the_old_client_left),
        cmocka_unit_test(test_a_record_met_as_the_epoch_moves_is_dropped),
        cmocka_unit_test(test_the_server_reports_each_new_session),
        cmocka_unit_test(test_a_client_reconnects_after_a_server_restart),
        cmocka_unit_test(test_a_stale_file_is_refused_then_taken_over),
        cmocka_unit_test(test_a_live_server_file_is_not_taken_over),
        cmocka_unit_test(test_a_client_notices_its_server_died),
        cmocka_unit_test(test_wait_any_returns_the_first_ready_ring),
        cmocka_unit_test(test_the_server_notices_its_client_died),
    };

    if (!shm_available())
        return SKIP_EXIT;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
