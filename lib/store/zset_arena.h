/* zset_arena.h - member storage of a full sorted set: records packed into
 * chunks, addressed by a 32-bit position that doubles as the member's id.
 *
 * A record is the member's length, its bytes and its score (8 bytes, so
 * ZSCORE reads the score next to the bytes it just compared):
 *
 *   len < 128          [len][bytes][score]                 1 + len + 8 B
 *   128 <= len <= 2047 [0x80 | len >> 8][len & 255][bytes][score]
 *   len > 2047         [0xFF][u32 len][pointer][score]     21 B, the bytes
 *                      live in their own block
 *
 * Nothing is aligned (loads go through memcpy). A position is
 * (chunk sequence number mod 2^16) << 16 | offset in the chunk. Chunks are
 * at most 64 KiB and start with an 8-byte header (bytes used, bytes
 * allocated); the chunk pointers sit in a ring indexed by sequence number,
 * so positions stay valid while chunks come and go at either end. Only the
 * newest chunk (the tail) takes new records, and it grows by realloc from a
 * small size, so a set never holds more than about a third of one chunk of
 * slack.
 *
 * A removed record becomes dead: its score bytes are set to ZA_DEAD, a NaN
 * no live score can have. A dead record at the end of the tail is
 * reclaimed at once. Dead records of up to ZA_FREE_SIZES distinct sizes
 * (members of 8 bytes or more) go on a free list per size, doubly linked
 * through their member bytes and marked ZA_FREE instead, and a new member
 * of that size takes the place of one: a set whose members come and go
 * with similar sizes needs no compaction. What is left is reclaimed by the
 * owner moving the live records of the oldest chunk to the tail and
 * dropping that chunk. Live records therefore only ever move to larger
 * sequence numbers, which is what ZSCAN's guarantee rests on
 * (zset_full.c); a new member may land anywhere.
 *
 * Limits: at most 2^16 chunks are live (a 4 GiB arena) and a member is at
 * most UINT32_MAX bytes.
 */
#ifndef GOBLIN_ZSET_ARENA_H
#define GOBLIN_ZSET_ARENA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "store.h"
#include "util/bytes_cmp.h"

#define ZA_SHIFT 16
#define ZA_CHUNK ((uint32_t)1 << ZA_SHIFT)
#define ZA_OFF_MASK (ZA_CHUNK - 1)
#define ZA_SLOTS ((uint32_t)1 << (32 - ZA_SHIFT))
#define ZA_HDR 8
#define ZA_INLINE_MAX 2047
#define ZA_BIG_REC 21
#define ZA_DEAD 0x7FF8DEADDEADDEADull
#define ZA_FREE 0x7FF8F5EEF5EEF5EEull /* dead and on a free list */
#define ZA_FREE_SIZES 8

/* Free list of dead records of one size; positions, 0 for none. */
struct goblin__za_free {
    uint32_t size;      /* record bytes; 0: the list is unused */
    uint32_t head;
};

struct zarena {
    uint8_t **ring;     /* ring_cap chunk pointers, by seq & (ring_cap - 1) */
    uint32_t ring_cap;  /* 0 or a power of two <= ZA_SLOTS */
    uint32_t nchunks;   /* live chunks: base .. base + nchunks - 1 */
    uint64_t base;      /* sequence number of the oldest chunk */
    bool sealed;        /* the tail takes no more records */
    bool cleaning;      /* the owner is emptying the oldest chunk */
    size_t live;        /* bytes of live records */
    size_t dead;        /* bytes of dead records not yet reclaimed */
    size_t bytes;       /* everything held: chunks, ring, big blocks */
    struct goblin__za_free free[ZA_FREE_SIZES];
};

/* The chunk header, at the start of every chunk. */
struct za_chunk {
    uint32_t used;      /* bytes in use, header included */
    uint32_t size;      /* bytes allocated */
};

static inline uint8_t *za_chunk_at(const struct zarena *a, uint64_t seq)
{
    return a->ring[seq & (a->ring_cap - 1)];
}

static inline uint8_t *za_rec(const struct zarena *a, uint32_t pos)
{
    return a->ring[(pos >> ZA_SHIFT) & (a->ring_cap - 1)] +
           (pos & ZA_OFF_MASK);
}

static inline uint32_t za_pos(uint64_t seq, uint32_t off)
{
    return (uint32_t)((seq & (ZA_SLOTS - 1)) << ZA_SHIFT) | off;
}

/* The member bytes of the record at r; sets *len and *score_at (the
 * offset of the score from r). */
static inline const uint8_t *za_decode(const uint8_t *r, size_t *len,
                                       size_t *score_at)
{
    uint8_t b = r[0];

    if (b < 0x80) {
        *len = b;
        *score_at = 1 + (size_t)b;
        return r + 1;
    }
    if (b != 0xFF) {
        *len = ((size_t)(b & 0x7F) << 8) | r[1];
        *score_at = 2 + *len;
        return r + 2;
    } else {
        uint32_t n;
        const uint8_t *p;

        memcpy(&n, r + 1, 4);
        memcpy(&p, r + 5, sizeof(p));
        *len = n;
        *score_at = 13;
        return p;
    }
}

static inline size_t za_rec_size(const uint8_t *r)
{
    size_t len, at;

    za_decode(r, &len, &at);
    return at + 8;
}

static inline const uint8_t *za_member(const struct zarena *a, uint32_t pos,
                                       size_t *len)
{
    size_t at;

    return za_decode(za_rec(a, pos), len, &at);
}

static inline double za_score(const struct zarena *a, uint32_t pos)
{
    const uint8_t *r = za_rec(a, pos);
    size_t len, at;
    double d;

    za_decode(r, &len, &at);
    memcpy(&d, r + at, 8);
    return d;
}

static inline void za_set_score(struct zarena *a, uint32_t pos, double d)
{
    uint8_t *r = za_rec(a, pos);
    size_t len, at;

    za_decode(r, &len, &at);
    memcpy(r + at, &d, 8);
}

static inline uint64_t za_rec_mark(const uint8_t *r)
{
    size_t len, at;
    uint64_t bits;

    za_decode(r, &len, &at);
    memcpy(&bits, r + at, 8);
    return bits;
}

static inline bool za_rec_dead(const uint8_t *r)
{
    uint64_t bits = za_rec_mark(r);

    return bits == ZA_DEAD || bits == ZA_FREE;
}

/* Compares the member at pos with m[0, len) as memcmp does, a shorter
 * prefix first. */
static inline int za_cmp(const struct zarena *a, uint32_t pos,
                         const void *m, size_t len)
{
    size_t n;
    const uint8_t *p = za_member(a, pos, &n);

    return goblin__bytes_cmp(p, n, m, len);
}

static inline int za_cmp_ids(const struct zarena *a, uint32_t x, uint32_t y)
{
    size_t n;
    const uint8_t *p = za_member(a, y, &n);

    return za_cmp(a, x, p, n);
}

static inline uint64_t za_seq_tail(const struct zarena *a)
{
    return a->base + a->nchunks - 1;
}

void goblin__za_init(struct zarena *a);
void goblin__za_free(goblin_store *st, struct zarena *a);

/* Appends a live record. Returns 0 and sets *pos, GOBLIN_ENOMEM or
 * GOBLIN_ELIMIT, with nothing changed. */
int goblin__za_append(goblin_store *st, struct zarena *a, const void *m, size_t len,
                      double score, uint32_t *pos);

/* Copies the record at pos (live, in a chunk other than the tail) to the
 * tail, big member blocks by pointer. The old copy is left as it is: its
 * chunk is about to be dropped. Returns 0 and sets *npos, or an error with
 * nothing changed. */
int goblin__za_move(goblin_store *st, struct zarena *a, uint32_t pos,
                    uint32_t *npos);

/* Makes the record at pos dead and frees its big block if it has one. */
void goblin__za_kill(goblin_store *st, struct zarena *a, uint32_t pos);

/* The next append goes to a new chunk (so the current tail can be
 * cleaned). */
void goblin__za_seal(goblin_store *st, struct zarena *a);

/* Takes the dead record at pos (in the oldest chunk, being cleaned) off
 * its free list, if it is on one. */
void goblin__za_unlist(struct zarena *a, uint32_t pos);

/* Drops the oldest chunk, whose live records have all been moved and
 * whose dead ones are on no free list. */
void goblin__za_drop_base(goblin_store *st, struct zarena *a);

#endif
