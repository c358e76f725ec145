/* ring_int.h - what the ring's files share: the header layout in the
 * file, one queue as one side sees it, the handle, and helpers.
 *
 * Layout (docs/ring.md is the reference): [header: one page][SQ][CQ].
 * Header offsets are fixed and checked below; every index word sits alone
 * in its own 128-byte block (its own 64-byte line, and no adjacent-line
 * prefetcher pairs it with another index). Records in SQ and CQ start on
 * 64-byte lines: a 16-byte header (u64 stamp, u32 length, u32 flags) then
 * the payload, in the same line, so a record of up to 48 bytes is one
 * line. stamp = position ^ session key: the consumer polls the stamp of
 * the next record, so a round trip moves one line per direction, and
 * nothing left from an earlier lap or session can pass for a record.
 *
 * Invariants of a queue seen by one side (all positions are free-running
 * byte counters, multiples of 64):
 *   producer: peer (cached head) <= published <= pos <= peer + cap
 *   consumer: released <= pos <= released + cap; the tail it reads on the
 *             wait path must satisfy pos <= tail <= released + cap.
 * The producer re-reads the head only when its cached copy says full; the
 * consumer reads the tail only when the queue looks empty. Both are
 * validated before they are believed.
 */
#ifndef GOBLIN_RING_INT_H
#define GOBLIN_RING_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "goblin/common.h"
#include "goblin/ring.h"

#define RING_MAGIC 0x524C4247u /* bytes "GBLR" */
#define RING_VERSION 1u
#define RING_LINE 64u          /* record alignment */
#define RING_REC_HDR 16u       /* u64 stamp, u32 length, u32 flags */
#define RING_FLAG_DATA 0u
#define RING_FLAG_FILLER 1u    /* skip to the end of the region */
#define RING_WINDOW 4096u      /* producer: may wrap early at its edges */

#define RING_SERVER_SLEEPS 1u  /* server_flags: server may sleep on SQ */
#define RING_CLIENT_SLEEPS 1u  /* client_flags: client may sleep on CQ */

/* The header at offset 0 of the file. Line 0-1: configuration written
 * once by the server before magic, plus the epoch words. Block 128: the
 * two futex words. Then the four indices, one per 128-byte block. */
struct goblin__ring_hdr {
    _Atomic uint32_t magic;        /* 0: server, last, release */
    uint32_t version;              /* 4 */
    uint32_t line;                 /* 8: record alignment, 64 */
    uint32_t header_size;          /* 12: page size = SQ offset */
    uint64_t sq_cap;               /* 16 */
    uint64_t cq_cap;               /* 24 */
    uint64_t sq_off;               /* 32 */
    uint64_t cq_off;               /* 40 */
    int32_t owner_pid;             /* 48 */
    uint32_t server_flags;         /* 52 */
    _Atomic uint64_t epoch;        /* 56: client */
    _Atomic uint64_t epoch_ack;    /* 64: server */
    _Atomic uint32_t client_flags; /* 72: client, before its epoch */
    _Atomic int32_t client_pid;    /* 76: client, before its epoch */
    _Atomic uint64_t session_key;  /* 80: server, before epoch_ack */
    _Atomic uint64_t client_pidns; /* 88: client's pid namespace inode */
    unsigned char pad0[128 - 96];
    _Atomic uint32_t sq_sleep;     /* 128: server asleep on SQ */
    _Atomic uint32_t cq_sleep;     /* 132: client asleep on CQ */
    unsigned char pad1[256 - 136];
    _Atomic uint64_t sq_head;      /* 256: server */
    unsigned char pad2[120];
    _Atomic uint64_t sq_tail;      /* 384: client */
    unsigned char pad3[120];
    _Atomic uint64_t cq_head;      /* 512: client */
    unsigned char pad4[120];
    _Atomic uint64_t cq_tail;      /* 640: server */
    unsigned char pad5[120];
};

_Static_assert(offsetof(struct goblin__ring_hdr, epoch) == 56, "layout");
_Static_assert(offsetof(struct goblin__ring_hdr, epoch_ack) == 64, "layout");
_Static_assert(offsetof(struct goblin__ring_hdr, session_key) == 80,
               "layout");
_Static_assert(offsetof(struct goblin__ring_hdr, sq_sleep) == 128, "layout");
_Static_assert(offsetof(struct goblin__ring_hdr, sq_head) == 256, "layout");
_Static_assert(offsetof(struct goblin__ring_hdr, sq_tail) == 384, "layout");
_Static_assert(offsetof(struct goblin__ring_hdr, cq_head) == 512, "layout");
_Static_assert(offsetof(struct goblin__ring_hdr, cq_tail) == 640, "layout");
_Static_assert(sizeof(struct goblin__ring_hdr) == 768, "layout");
_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2, "shared 64-bit atomics");

/* One queue as one side sees it. A handle uses one as producer (tx) and
 * the other as consumer (rx); fields are marked with their role. */
struct goblin__ring_queue {
    unsigned char *data;       /* the region: cap bytes */
    uint64_t cap;
    uint32_t max_len;          /* cap / 2 - RING_REC_HDR */
    _Atomic uint64_t *head_w;  /* shared words of this queue */
    _Atomic uint64_t *tail_w;
    _Atomic uint32_t *sleep_w; /* the consumer's futex word */
    uint64_t pos;              /* tx: committed end; rx: peek cursor */
    uint64_t peer;             /* tx: cached head; rx: cached tail */
    uint64_t published;        /* tx: last tail stored */
    uint64_t released;         /* rx: last head stored */
    uint64_t res_skip;         /* tx: filler before the reservation */
    uint32_t res_len;          /* tx: bytes reserved */
    uint64_t key;              /* session key: stamp = pos ^ key */
    bool reserved;             /* tx */
    bool peer_sleeps;          /* tx: the consumer may sleep: check it */
};

struct goblin_ring {
    struct goblin_allocator alloc;
    struct goblin_ring_config cfg;     /* defaults resolved */
    bool server;
    bool owns_map;                     /* false for an attached client */
    int fd;
    unsigned char *area;               /* reserved span: guard, file, guard */
    size_t area_len;
    size_t map_len;                    /* bytes of the file mapped */
    struct goblin__ring_hdr *hdr;
    struct goblin__ring_queue tx, rx;
    int err;                           /* sticky GOBLIN_EPROTO, or 0 */
    uint64_t epoch;                    /* server: acked; client: ours */
    int32_t owner;                     /* client: server pid at open */
    int32_t peer_pid;                  /* server: client pid, 0 unknown */
    char *path;                        /* server: to unlink at close */
    size_t path_size;
    dev_t dev;                         /* server: identity of its file */
    ino_t ino;
    unsigned char *acc;                /* client: drain buffer */
    size_t acc_cap, acc_len, acc_head, acc_pos;
    struct goblin_ring_stats stats;
    int64_t sleep_slice_ns;            /* longest futex sleep (test hook) */
    _Atomic bool nudged;               /* server: goblin__ring_nudge */
};

/* The stamp word of the record at pos. */
static inline _Atomic uint64_t *goblin__ring_stamp(
    const struct goblin__ring_queue *q, uint64_t pos)
{
    return (_Atomic uint64_t *)(void *)(q->data + (pos & (q->cap - 1)));
}

/* Memory through the handle's allocator. */
void *goblin__ring_alloc(const struct goblin_allocator *a, size_t size);
void goblin__ring_free(const struct goblin_allocator *a, void *p,
                       size_t size);
void *goblin__ring_realloc(const struct goblin_allocator *a, void *p,
                           size_t old_size, size_t new_size);

/* Points q at a region and its words; positions and key are set by
 * goblin__ring_queue_reset. */
void goblin__ring_queue_init(struct goblin__ring_queue *q,
                             unsigned char *data, uint64_t cap,
                             _Atomic uint64_t *head_w,
                             _Atomic uint64_t *tail_w,
                             _Atomic uint32_t *sleep_w);
void goblin__ring_queue_reset(struct goblin__ring_queue *q, uint64_t base,
                              uint64_t key);

/* Marks the ring failed (sticky until the next session). */
int goblin__ring_fail(goblin_ring *r);

/* Server: resets both queues for the client that bumped the epoch to e.
 * Returns GOBLIN_RING_SESSION. */
int goblin__ring_new_session(goblin_ring *r, uint64_t e);

/* Server: starts a new session if the client bumped the epoch. Returns
 * GOBLIN_RING_SESSION if it did, else 0. */
static inline int goblin__ring_sync(goblin_ring *r)
{
    /* Pairs with the client's store of epoch: its flags and indices are
     * visible. */
    uint64_t e = atomic_load_explicit(&r->hdr->epoch, memory_order_acquire);

    if (e == r->epoch)
        return 0;
    return goblin__ring_new_session(r, e);
}

/* True when peek has something to return. With check_tail it also reads
 * the producer's tail (seq_cst: right after announcing sleep, or every
 * so often while spinning) and fails the ring if it is out of range. */
bool goblin__ring_ready(goblin_ring *r, bool check_tail);

/* Server side, from any thread: the server's wait (goblin_ring_wait_any,
 * or one sleeping now) returns for r as if a record had come, until the
 * server thread takes the nudge. A blocked client's reply is ready. */
void goblin__ring_nudge(goblin_ring *r);
/* Server thread: true once per nudge. */
bool goblin__ring_nudge_take(goblin_ring *r);

/* Wakes the consumer of q if it announced it is asleep. */
void goblin__ring_wake(goblin_ring *r, _Atomic uint32_t *w);

int64_t goblin__ring_now_ns(void);
void goblin__ring_nap(int64_t ns);
bool goblin__ring_pid_alive(int32_t pid);

/* The CPU's spin-wait hint: frees the SMT sibling and lets the writer's
 * store land. */
static inline void goblin__ring_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#else
    atomic_signal_fence(memory_order_seq_cst);
#endif
}

/* Test hooks. set_base: server, before any client opened: starts all
 * four indices at base (a multiple of 64). attach: a client handle over
 * the server's own mapping (same addresses, so the thread sanitizer sees
 * both sides); the handshake needs the server polling meanwhile. */
int goblin__ring_set_base(goblin_ring *srv, uint64_t base);
int goblin__ring_attach(goblin_ring *srv,
                        const struct goblin_ring_config *cfg,
                        goblin_ring **out);

/* A random session key, different from old. */
uint64_t goblin__ring_new_key(uint64_t old);

/* Client: the epoch handshake and queue set-up, shared by open and
 * attach. */
int goblin__ring_handshake(goblin_ring *r, int64_t deadline);

#endif
