/* fuzz_ring.c - the server side of a shared-memory ring (lib/ring) facing
 * a client that controls every shared byte: header words, indices, record
 * stamps, lengths, flags and payloads (docs/ring.md). The input is a
 * script of client moves (raw writes anywhere in the file, forged records
 * with a correct stamp, any sq_tail / cq_head, new sessions) mixed with
 * server calls (peek, poll, release, publish, reserve/commit, flush,
 * wait). Whatever the client does, every record the server hands out
 * must lie inside SQ, and the server must never touch memory outside its
 * mapping (it sits between guard pages, so ASan or a fault would show).
 *
 * The ring is created once per process (4 KiB queues; its file unlinked at
 * once); each input restores the header as created, zeroes both queues
 * and starts a new session, so an input replays alone. */
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "goblin.h"
#include "fuzz.h"
#include "ring/ring_int.h"

#define PAGE 4096u

static goblin_ring *srv;
static unsigned char saved[PAGE];

static void ring_init(void)
{
    struct goblin_ring_config cfg = {0};
    char path[128];

    snprintf(path, sizeof(path), "/dev/shm/goblin-fuzz-%d.ring",
             (int)getpid());
    unlink(path);
    cfg.sq_size = cfg.cq_size = PAGE;
    cfg.idle = GOBLIN_RING_IDLE_SPIN;
    FUZZ_CHECK(goblin_ring_create(path, &cfg, &srv) == 0);
    unlink(path);
    FUZZ_CHECK(srv->hdr->sq_cap == PAGE && srv->hdr->cq_cap == PAGE);
    memcpy(saved, srv->hdr, PAGE);
}

/* The input, read front to back; zeros once it runs out. */
struct script {
    const uint8_t *p;
    size_t n;
};

static uint64_t take(struct script *s, size_t bytes)
{
    uint64_t v = 0;

    for (size_t i = 0; i < bytes; i++) {
        if (s->n > 0) {
            v |= (uint64_t)s->p[0] << (8 * i);
            s->p++;
            s->n--;
        }
    }
    return v;
}

static unsigned char *file_base(void)
{
    return (unsigned char *)srv->hdr;
}

static void check_record(const struct goblin_slice *rec)
{
    const unsigned char *sq = file_base() + PAGE;
    const unsigned char *p = rec->ptr;

    FUZZ_CHECK(p >= sq + RING_REC_HDR && p <= sq + PAGE);
    FUZZ_CHECK(rec->len <= (size_t)(sq + PAGE - p));
    FUZZ_CHECK(rec->len <= PAGE / 2 - RING_REC_HDR);
    /* Touch it: a stray view shows here rather than later. */
    if (rec->len > 0)
        FUZZ_CHECK(((volatile const unsigned char *)p)[rec->len - 1] ==
                   p[rec->len - 1]);
}

static void new_session(void)
{
    atomic_fetch_add(&srv->hdr->epoch, 1);
}

/* One move of the client or one call of the server. */
static void step(struct script *s)
{
    struct goblin__ring_hdr *h = srv->hdr;
    unsigned op = (unsigned)take(s, 1) % 14;

    switch (op) {
    case 0: { /* raw bytes anywhere in the file */
        size_t off = take(s, 2) % (3 * PAGE);
        size_t len = take(s, 1) % 64;

        for (size_t i = 0; i < len && off + i < 3 * PAGE; i++)
            file_base()[off + i] = (unsigned char)take(s, 1);
        break;
    }
    case 1: { /* a record with a correct stamp, any length and flags */
        uint64_t pos = take(s, 2) * RING_LINE;
        unsigned char *p = file_base() + PAGE + (pos & (PAGE - 1));
        uint64_t key = atomic_load(&h->session_key);
        uint32_t len = (uint32_t)take(s, 1 + take(s, 1) % 4);
        uint32_t flags = (uint32_t)take(s, 1) % 3;

        memcpy(p + 8, &len, 4);
        memcpy(p + 12, &flags, 4);
        atomic_store((_Atomic uint64_t *)(void *)p, pos ^ key);
        break;
    }
    case 2: /* sq_tail: near the server's cursor, or anything */
        if (take(s, 1) & 1)
            atomic_store(&h->sq_tail, take(s, 8));
        else
            atomic_store(&h->sq_tail,
                         srv->rx.pos + (take(s, 1) - 128) * RING_LINE);
        break;
    case 3: /* cq_head, the same way */
        if (take(s, 1) & 1)
            atomic_store(&h->cq_head, take(s, 8));
        else
            atomic_store(&h->cq_head,
                         srv->tx.pos + (take(s, 1) - 128) * RING_LINE);
        break;
    case 4:
        new_session();
        break;
    case 5: {
        struct goblin_slice rec;

        if (goblin_ring_peek(srv, &rec) == GOBLIN_RING_RECORD)
            check_record(&rec);
        break;
    }
    case 6: {
        struct goblin_slice recs[8];
        int got = goblin_ring_poll(srv, recs, 1 + (unsigned)take(s, 1) % 8);

        for (int i = 0; i < got && got != GOBLIN_RING_SESSION; i++)
            check_record(&recs[i]);
        break;
    }
    case 7:
        goblin_ring_release(srv);
        break;
    case 8: {
        uint32_t len = (uint32_t)take(s, 2) % (PAGE / 2);
        static unsigned char msg[PAGE];

        (void)goblin_ring_publish(srv, msg, len);
        break;
    }
    case 9: {
        void *buf;
        uint32_t len = (uint32_t)take(s, 2) % (PAGE / 2);

        if (goblin_ring_reserve(srv, len, &buf) == 0) {
            memset(buf, 0xAB, len);
            (void)goblin_ring_commit(srv, len - (len ? take(s, 1) % len : 0));
        }
        break;
    }
    case 10:
        goblin_ring_flush(srv);
        break;
    case 11:
        (void)goblin_ring_wait(srv, 0);
        break;
    case 12: { /* any u64 word of the header's first 768 bytes */
        size_t off = (take(s, 1) % 96) * 8;
        uint64_t v = take(s, 8);

        memcpy(file_base() + off, &v, 8);
        break;
    }
    default: {
        struct goblin_slice batch[2] = {{"ab", 2}, {"cde", 3}};

        (void)goblin_ring_publish_batch(srv, batch, 2);
        break;
    }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct script s = {data, size};
    struct goblin_slice rec;

    if (srv == NULL)
        ring_init();
    /* Back to the ring as created, then a fresh session at base 0. */
    memcpy(file_base(), saved, PAGE);
    memset(file_base() + PAGE, 0, 2 * PAGE);
    atomic_store(&srv->hdr->epoch, srv->epoch + 1);
    FUZZ_CHECK(goblin_ring_peek(srv, &rec) == GOBLIN_RING_SESSION);
    for (unsigned steps = 0; s.n > 0 && steps < 4096; steps++)
        step(&s);
    return 0;
}
