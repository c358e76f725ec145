/* zset_arena.c - chunked record storage of full sorted sets (see
 * zset_arena.h for the record layout and the position scheme).
 *
 * Invariants: every chunk but the tail is sealed (it takes no more
 * records); live + dead equals the record bytes of all chunks; bytes is
 * what the arena holds through the store's allocator.
 */
#include <assert.h>

#include "zset_arena.h"

#define FIRST_CHUNK 256

void goblin__za_init(struct zarena *a)
{
    memset(a, 0, sizeof(*a));
}

static struct za_chunk *chunk_hdr(uint8_t *c)
{
    return (struct za_chunk *)(void *)c;
}

static void free_big_blocks(goblin_store *st, struct zarena *a, uint8_t *c)
{
    uint32_t off = ZA_HDR, used = chunk_hdr(c)->used;

    while (off < used) {
        uint8_t *r = c + off;
        size_t size = za_rec_size(r);

        if (r[0] == 0xFF && !za_rec_dead(r)) {
            uint32_t n;
            void *p;

            memcpy(&n, r + 1, 4);
            memcpy(&p, r + 5, sizeof(p));
            goblin__free(st, p, n);
            a->bytes -= n;
        }
        off += (uint32_t)size;
    }
}

void goblin__za_free(goblin_store *st, struct zarena *a)
{
    for (uint32_t i = 0; i < a->nchunks; i++) {
        uint8_t *c = za_chunk_at(a, a->base + i);

        free_big_blocks(st, a, c);
        goblin__free(st, c, chunk_hdr(c)->size);
    }
    goblin__free(st, a->ring, (size_t)a->ring_cap * sizeof(uint8_t *));
    goblin__za_init(a);
}

static int ring_grow(goblin_store *st, struct zarena *a)
{
    uint32_t cap = a->ring_cap ? a->ring_cap * 2 : 4;
    uint8_t **r;

    if (cap > ZA_SLOTS)
        return GOBLIN_ELIMIT;
    r = goblin__alloc(st, (size_t)cap * sizeof(*r));
    if (r == NULL)
        return GOBLIN_ENOMEM;
    for (uint32_t i = 0; i < a->nchunks; i++) {
        uint64_t seq = a->base + i;

        r[seq & (cap - 1)] = a->ring[seq & (a->ring_cap - 1)];
    }
    goblin__free(st, a->ring, (size_t)a->ring_cap * sizeof(*r));
    a->bytes += (size_t)(cap - a->ring_cap) * sizeof(*r);
    a->ring = r;
    a->ring_cap = cap;
    return 0;
}

static int chunk_add(goblin_store *st, struct zarena *a, size_t need)
{
    size_t size = need + ZA_HDR < FIRST_CHUNK ? FIRST_CHUNK : need + ZA_HDR;
    uint8_t *c;
    int rc;

    if (a->nchunks == ZA_SLOTS)
        return GOBLIN_ELIMIT;
    if (a->nchunks == a->ring_cap && (rc = ring_grow(st, a)) != 0)
        return rc;
    c = goblin__alloc(st, size);
    if (c == NULL)
        return GOBLIN_ENOMEM;
    chunk_hdr(c)->used = ZA_HDR;
    chunk_hdr(c)->size = (uint32_t)size;
    if (a->nchunks == 0)
        a->base = 0;
    a->ring[(a->base + a->nchunks) & (a->ring_cap - 1)] = c;
    a->nchunks++;
    a->sealed = false;
    a->bytes += size;
    return 0;
}

/* Makes room for need more bytes in the tail, growing it by half its size
 * (up to a full chunk) or opening a new chunk. */
static int reserve(goblin_store *st, struct zarena *a, size_t need)
{
    uint64_t seq;
    uint8_t *c;
    struct za_chunk *h;
    size_t size;

    if (a->nchunks == 0 || a->sealed)
        return chunk_add(st, a, need);
    seq = za_seq_tail(a);
    c = za_chunk_at(a, seq);
    h = chunk_hdr(c);
    if (h->used + need <= h->size)
        return 0;
    if (h->used + need > ZA_CHUNK)
        return chunk_add(st, a, need);
    size = h->size + h->size / 2;
    if (size < h->used + need)
        size = h->used + need;
    size = (size + 63) & ~(size_t)63;
    if (size > ZA_CHUNK)
        size = ZA_CHUNK;
    c = goblin__realloc(st, c, h->size, size);
    if (c == NULL)
        return GOBLIN_ENOMEM;
    a->bytes += size - chunk_hdr(c)->size;
    chunk_hdr(c)->size = (uint32_t)size;
    a->ring[seq & (a->ring_cap - 1)] = c;
    return 0;
}

static size_t rec_size_for(size_t len)
{
    if (len < 0x80)
        return 1 + len + 8;
    if (len <= ZA_INLINE_MAX)
        return 2 + len + 8;
    return ZA_BIG_REC;
}

/* Writes the record header and bytes at r; returns the score offset. */
static size_t write_rec(uint8_t *r, const void *m, size_t len, void *big)
{
    if (len < 0x80) {
        r[0] = (uint8_t)len;
        if (len > 0)
            memcpy(r + 1, m, len);
        return 1 + len;
    }
    if (len <= ZA_INLINE_MAX) {
        r[0] = (uint8_t)(0x80 | (len >> 8));
        r[1] = (uint8_t)len;
        memcpy(r + 2, m, len);
        return 2 + len;
    } else {
        uint32_t n = (uint32_t)len;

        r[0] = 0xFF;
        memcpy(r + 1, &n, 4);
        memcpy(r + 5, &big, sizeof(big));
        return 13;
    }
}

/* ---- free lists ---- */

/* Where a listed record keeps its links: right after its header. */
static uint8_t *links(uint8_t *r)
{
    return r + (r[0] >= 0x80 && r[0] != 0xFF ? 2 : 1);
}

static uint32_t link_get(uint8_t *r, int which)
{
    uint32_t v;

    memcpy(&v, links(r) + 4 * which, 4);
    return v;
}

static void link_set(uint8_t *r, int which, uint32_t v)
{
    memcpy(links(r) + 4 * which, &v, 4);
}

/* The free list for records of size bytes, claiming an unused one if
 * claim is set; NULL if none. Records with members under 8 bytes have no
 * room for the links. */
static struct goblin__za_free *free_list(struct zarena *a, size_t size, bool claim)
{
    struct goblin__za_free *spare = NULL;

    if (size < 1 + 8 + 8)
        return NULL;
    for (int i = 0; i < ZA_FREE_SIZES; i++) {
        if (a->free[i].size == size)
            return &a->free[i];
        if (a->free[i].head == 0 && spare == NULL)
            spare = &a->free[i];
    }
    if (!claim || spare == NULL)
        return NULL;
    spare->size = (uint32_t)size;
    return spare;
}

/* Puts the dead record at pos (marked ZA_DEAD) on its free list. */
static void list_push(struct zarena *a, uint32_t pos, size_t size)
{
    struct goblin__za_free *f = free_list(a, size, true);
    uint64_t mark = ZA_FREE;
    uint8_t *r = za_rec(a, pos);

    if (f == NULL)
        return;
    link_set(r, 0, 0);
    link_set(r, 1, f->head);
    if (f->head != 0)
        link_set(za_rec(a, f->head), 0, pos);
    f->head = pos;
    memcpy(r + size - 8, &mark, 8);
}

static void list_remove(struct zarena *a, struct goblin__za_free *f, uint32_t pos)
{
    uint8_t *r = za_rec(a, pos);
    uint32_t prev = link_get(r, 0), next = link_get(r, 1);

    if (prev != 0)
        link_set(za_rec(a, prev), 1, next);
    else
        f->head = next;
    if (next != 0)
        link_set(za_rec(a, next), 0, prev);
}

void goblin__za_unlist(struct zarena *a, uint32_t pos)
{
    uint8_t *r = za_rec(a, pos);

    if (za_rec_mark(r) == ZA_FREE)
        list_remove(a, free_list(a, za_rec_size(r), false), pos);
}

/* A dead record of size bytes to reuse, taken off its list; 0 if none.
 * Holes in the chunk being cleaned are not reused (the chunk is about to
 * go): they leave the list as plain dead records. */
static uint32_t list_pop(struct zarena *a, size_t size)
{
    struct goblin__za_free *f = free_list(a, size, false);
    uint64_t dead = ZA_DEAD;

    while (f != NULL && f->head != 0) {
        uint32_t pos = f->head;

        list_remove(a, f, pos);
        if (a->cleaning && (pos >> ZA_SHIFT) == (a->base & (ZA_SLOTS - 1))) {
            memcpy(za_rec(a, pos) + size - 8, &dead, 8);
            continue;
        }
        a->dead -= size;
        return pos;
    }
    return 0;
}

int goblin__za_append(goblin_store *st, struct zarena *a, const void *m, size_t len,
                      double score, uint32_t *pos)
{
    size_t size = rec_size_for(len), at;
    void *big = NULL;
    uint8_t *r;
    int rc;

    if (len > UINT32_MAX)
        return GOBLIN_ELIMIT;
    if (len > ZA_INLINE_MAX) {
        big = goblin__alloc(st, len);
        if (big == NULL)
            return GOBLIN_ENOMEM;
        memcpy(big, m, len);
    }
    if ((*pos = list_pop(a, size)) != 0) {
        r = za_rec(a, *pos);
    } else {
        uint8_t *c;
        struct za_chunk *h;

        if ((rc = reserve(st, a, size)) != 0) {
            goblin__free(st, big, len);
            return rc;
        }
        c = za_chunk_at(a, za_seq_tail(a));
        h = chunk_hdr(c);
        r = c + h->used;
        *pos = za_pos(za_seq_tail(a), h->used);
        h->used += (uint32_t)size;
    }
    at = write_rec(r, m, len, big);
    memcpy(r + at, &score, 8);
    if (big != NULL)
        a->bytes += len;
    a->live += size;
    return 0;
}

int goblin__za_move(goblin_store *st, struct zarena *a, uint32_t pos,
                    uint32_t *npos)
{
    uint8_t *r = za_rec(a, pos), *c;
    size_t size = za_rec_size(r);
    uint64_t dead = ZA_DEAD;
    struct za_chunk *h;
    int rc;

    assert(!za_rec_dead(r));
    if ((rc = reserve(st, a, size)) != 0)
        return rc;
    r = za_rec(a, pos); /* the tail may have moved, never this chunk */
    c = za_chunk_at(a, za_seq_tail(a));
    h = chunk_hdr(c);
    memcpy(c + h->used, r, size);
    *npos = za_pos(za_seq_tail(a), h->used);
    h->used += (uint32_t)size;
    /* The old copy turns dead without freeing a big block: the new copy
     * owns it now. */
    memcpy(r + size - 8, &dead, 8);
    a->dead += size;
    return 0;
}

void goblin__za_kill(goblin_store *st, struct zarena *a, uint32_t pos)
{
    uint8_t *r = za_rec(a, pos), *c;
    size_t size = za_rec_size(r);
    uint64_t dead = ZA_DEAD;
    struct za_chunk *h;

    assert(!za_rec_dead(r));
    if (r[0] == 0xFF) {
        uint32_t n;
        void *p;

        memcpy(&n, r + 1, 4);
        memcpy(&p, r + 5, sizeof(p));
        goblin__free(st, p, n);
        a->bytes -= n;
    }
    a->live -= size;
    c = za_chunk_at(a, za_seq_tail(a));
    h = chunk_hdr(c);
    if (c + h->used == r + size && !a->sealed) {
        h->used -= (uint32_t)size;
        return;
    }
    memcpy(r + size - 8, &dead, 8);
    a->dead += size;
    list_push(a, pos, size);
}

void goblin__za_seal(goblin_store *st, struct zarena *a)
{
    uint64_t seq;
    uint8_t *c, *n;
    struct za_chunk *h;

    if (a->nchunks == 0 || a->sealed)
        return;
    seq = za_seq_tail(a);
    c = za_chunk_at(a, seq);
    h = chunk_hdr(c);
    a->sealed = true;
    if (h->used == h->size)
        return;
    /* Give the slack back; a failed shrink just keeps it. */
    n = goblin__realloc(st, c, h->size, h->used);
    if (n == NULL)
        return;
    a->bytes -= chunk_hdr(n)->size - chunk_hdr(n)->used;
    chunk_hdr(n)->size = chunk_hdr(n)->used;
    a->ring[seq & (a->ring_cap - 1)] = n;
}

void goblin__za_drop_base(goblin_store *st, struct zarena *a)
{
    uint8_t *c = za_chunk_at(a, a->base);
    struct za_chunk *h = chunk_hdr(c);

    assert(a->nchunks > 1 || a->sealed);
    a->dead -= h->used - ZA_HDR;
    a->bytes -= h->size;
    goblin__free(st, c, h->size);
    a->base++;
    a->nchunks--;
    if (a->nchunks == 0)
        a->sealed = false;
}
