/* set_bigint.c - the large integer form of a set: sorted chunks of
 * fixed-width integers, with no hash table and no per-member overhead.
 *
 * Layout: a directory of chunks, each holding at most CHUNK sorted
 * values in a block sized to them (grown by half, shrunk when three
 * quarters empty). Chunk c holds values in [chunks[c].min, chunks[c+1].min).
 * All values share one width, the smallest of 2, 4 or 8 bytes that holds
 * every value; a value that needs more re-encodes every chunk (all new
 * blocks are allocated before any old one is dropped). A 1M-member set of
 * 32-bit values costs about 4 bytes a member plus the growth slack.
 *
 * Lookups binary-search the directory, then the chunk. An insert moves at
 * most CHUNK values; a full chunk splits in two, except that a value past
 * the end of the last chunk starts a new chunk, so ascending loads fill
 * every chunk. A chunk that empties is dropped. Positions (for SRANDMEMBER
 * and SPOP) are ranks in sorted order, found by walking the directory.
 */
#include <assert.h>
#include <string.h>

#include "set.h"

#define CHUNK 1024u
#define FIRST_CAP 16u

typedef struct goblin__bigint big_t;
typedef struct goblin__bigint_chunk chunk_t;

static inline int64_t cget(const big_t *b, const chunk_t *c, uint32_t j)
{
    return goblin__set_int_load(c->p + (size_t)j * b->width, b->width);
}

int64_t goblin__bigint_chunk_get(const big_t *b, uint32_t chunk, uint32_t j)
{
    return cget(b, &b->chunks[chunk], j);
}

/* The chunk v belongs to: the last whose min is <= v, or 0. */
static uint32_t chunk_for(const big_t *b, int64_t v)
{
    uint32_t lo = 0, hi = b->nchunks;

    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;

        if (b->chunks[mid].min <= v)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* Position of the first value >= v in chunk c; *found if it equals v. */
static uint32_t chunk_search(const big_t *b, const chunk_t *c, int64_t v,
                             bool *found)
{
    uint32_t lo = 0, hi = c->n;

    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;

        if (cget(b, c, mid) < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = lo < c->n && cget(b, c, lo) == v;
    return lo;
}

size_t goblin__bigint_bytes(const big_t *b)
{
    size_t s = sizeof(*b) + (size_t)b->chunks_cap * sizeof(chunk_t);

    for (uint32_t i = 0; i < b->nchunks; i++)
        s += (size_t)b->chunks[i].cap * b->width;
    return s;
}

void goblin__bigint_free(goblin_store *st, big_t *b)
{
    if (b == NULL)
        return;
    for (uint32_t i = 0; i < b->nchunks; i++)
        goblin__free(st, b->chunks[i].p, (size_t)b->chunks[i].cap * b->width);
    goblin__free(st, b->chunks, (size_t)b->chunks_cap * sizeof(chunk_t));
    goblin__free(st, b, sizeof(*b));
}

/* Room for one more chunk in the directory. */
static int dir_reserve(goblin_store *st, big_t *b)
{
    uint32_t cap;
    chunk_t *nc;

    if (b->nchunks < b->chunks_cap)
        return 0;
    cap = b->chunks_cap != 0 ? b->chunks_cap * 2 : 4;
    nc = goblin__realloc(st, b->chunks, (size_t)b->chunks_cap * sizeof(*nc),
                         (size_t)cap * sizeof(*nc));
    if (nc == NULL)
        return GOBLIN_ENOMEM;
    b->chunks = nc;
    b->chunks_cap = cap;
    return 0;
}

int goblin__bigint_from_intset(goblin_store *st,
                               const struct goblin__intset *is, big_t **out)
{
    big_t *b = goblin__alloc(st, sizeof(*b));
    size_t i = 0;

    if (b == NULL)
        return GOBLIN_ENOMEM;
    memset(b, 0, sizeof(*b));
    b->width = is->width;
    while (i < is->n) {
        uint32_t k = is->n - i < CHUNK ? (uint32_t)(is->n - i) : CHUNK;
        chunk_t *c;

        if (dir_reserve(st, b) != 0)
            goto fail;
        c = &b->chunks[b->nchunks];
        c->p = goblin__alloc(st, (size_t)k * b->width);
        if (c->p == NULL)
            goto fail;
        memcpy(c->p, is->data + i * b->width, (size_t)k * b->width);
        c->n = c->cap = k;
        c->min = goblin__intset_get(is, i);
        b->nchunks++;
        i += k;
    }
    b->n = is->n;
    *out = b;
    return 0;
fail:
    goblin__bigint_free(st, b);
    return GOBLIN_ENOMEM;
}

/* Re-encodes every chunk at width w (> b->width): all or nothing. */
static int widen(goblin_store *st, big_t *b, unsigned w)
{
    uint8_t **np = goblin__alloc(st, (size_t)b->nchunks * sizeof(*np));
    uint32_t i;

    if (np == NULL)
        return GOBLIN_ENOMEM;
    for (i = 0; i < b->nchunks; i++) {
        np[i] = goblin__alloc(st, (size_t)b->chunks[i].cap * w);
        if (np[i] == NULL)
            break;
    }
    if (i < b->nchunks) {
        while (i-- > 0)
            goblin__free(st, np[i], (size_t)b->chunks[i].cap * w);
        goblin__free(st, np, (size_t)b->nchunks * sizeof(*np));
        return GOBLIN_ENOMEM;
    }
    for (i = 0; i < b->nchunks; i++) {
        chunk_t *c = &b->chunks[i];

        for (uint32_t j = 0; j < c->n; j++)
            goblin__set_int_store(np[i] + (size_t)j * w, w, cget(b, c, j));
        goblin__free(st, c->p, (size_t)c->cap * b->width);
        c->p = np[i];
    }
    goblin__free(st, np, (size_t)b->nchunks * sizeof(*np));
    b->width = (uint8_t)w;
    return 0;
}

/* Inserts an empty chunk at directory slot at, with room for cap values. */
static int chunk_insert(goblin_store *st, big_t *b, uint32_t at,
                        uint32_t cap)
{
    uint8_t *p;

    if (dir_reserve(st, b) != 0)
        return GOBLIN_ENOMEM;
    p = goblin__alloc(st, (size_t)cap * b->width);
    if (p == NULL)
        return GOBLIN_ENOMEM;
    memmove(&b->chunks[at + 1], &b->chunks[at],
            (size_t)(b->nchunks - at) * sizeof(chunk_t));
    b->chunks[at] = (chunk_t){0, 0, cap, p};
    b->nchunks++;
    return 0;
}

/* Makes room for one more value in a full chunk c, which holds v's place
 * at pos: splits it, or starts a new last chunk. Sets *c and *pos to
 * where v now goes. */
static int make_room(goblin_store *st, big_t *b, uint32_t *c, uint32_t *pos)
{
    chunk_t *old = &b->chunks[*c];
    uint32_t half = CHUNK / 2, w = b->width;

    if (*c + 1 == b->nchunks && *pos == old->n) {
        if (chunk_insert(st, b, *c + 1, FIRST_CAP) != 0)
            return GOBLIN_ENOMEM;
        (*c)++;
        *pos = 0;
        return 0;
    }
    if (chunk_insert(st, b, *c + 1, CHUNK) != 0)
        return GOBLIN_ENOMEM;
    old = &b->chunks[*c];
    memcpy(b->chunks[*c + 1].p, old->p + (size_t)half * w,
           (size_t)(old->n - half) * w);
    b->chunks[*c + 1].n = old->n - half;
    b->chunks[*c + 1].min = cget(b, old, half);
    old->n = half;
    if (*pos > half) {
        (*c)++;
        *pos -= half;
    }
    return 0;
}

static int grow(goblin_store *st, big_t *b, chunk_t *c)
{
    uint32_t cap = c->cap + c->cap / 2 + 4;
    uint8_t *p;

    if (cap > CHUNK)
        cap = CHUNK;
    p = goblin__realloc(st, c->p, (size_t)c->cap * b->width,
                        (size_t)cap * b->width);
    if (p == NULL)
        return GOBLIN_ENOMEM;
    c->p = p;
    c->cap = cap;
    return 0;
}

int goblin__bigint_add(goblin_store *st, big_t *b, int64_t v)
{
    uint32_t ci, pos;
    chunk_t *c;
    bool found;

    if (b->nchunks == 0 && chunk_insert(st, b, 0, FIRST_CAP) != 0)
        return GOBLIN_ENOMEM;
    ci = chunk_for(b, v);
    pos = chunk_search(b, &b->chunks[ci], v, &found);
    if (found)
        return 0;
    if (goblin__iset_width(v) > b->width &&
        widen(st, b, goblin__iset_width(v)) != 0)
        return GOBLIN_ENOMEM;
    if (b->chunks[ci].n == CHUNK && make_room(st, b, &ci, &pos) != 0)
        return GOBLIN_ENOMEM;
    c = &b->chunks[ci];
    if (c->n == c->cap && grow(st, b, c) != 0)
        return GOBLIN_ENOMEM;
    memmove(c->p + (size_t)(pos + 1) * b->width, c->p + (size_t)pos * b->width,
            (size_t)(c->n - pos) * b->width);
    goblin__set_int_store(c->p + (size_t)pos * b->width, b->width, v);
    c->n++;
    if (pos == 0)
        c->min = v;
    b->n++;
    return 1;
}

int goblin__bigint_del(goblin_store *st, big_t *b, int64_t v)
{
    uint32_t ci, pos, w = b->width;
    chunk_t *c;
    bool found;

    if (b->nchunks == 0)
        return 0;
    ci = chunk_for(b, v);
    c = &b->chunks[ci];
    pos = chunk_search(b, c, v, &found);
    if (!found)
        return 0;
    memmove(c->p + (size_t)pos * w, c->p + (size_t)(pos + 1) * w,
            (size_t)(c->n - pos - 1) * w);
    c->n--;
    b->n--;
    if (c->n == 0 && b->nchunks > 1) {
        goblin__free(st, c->p, (size_t)c->cap * w);
        memmove(c, c + 1, (size_t)(b->nchunks - ci - 1) * sizeof(*c));
        b->nchunks--;
        return 1;
    }
    if (pos == 0 && c->n > 0)
        c->min = cget(b, c, 0);
    if (c->cap > 4 * FIRST_CAP && c->n < c->cap / 4) {
        /* Shrinking is optional: a failed realloc keeps the old block. */
        uint32_t cap = c->n * 2;
        uint8_t *p = goblin__realloc(st, c->p, (size_t)c->cap * w,
                                     (size_t)cap * w);

        if (p != NULL) {
            c->p = p;
            c->cap = cap;
        }
    }
    return 1;
}

bool goblin__bigint_has(const big_t *b, int64_t v)
{
    bool found = false;

    if (b->nchunks != 0)
        chunk_search(b, &b->chunks[chunk_for(b, v)], v, &found);
    return found;
}

void goblin__bigint_locate(const big_t *b, uint64_t i, uint32_t *chunk,
                           uint64_t *base)
{
    uint32_t c = *chunk;
    uint64_t at = *base;

    if (c >= b->nchunks || at > i) {
        c = 0;
        at = 0;
    }
    while (i - at >= b->chunks[c].n) {
        at += b->chunks[c].n;
        c++;
        assert(c < b->nchunks);
    }
    *chunk = c;
    *base = at;
}

int64_t goblin__bigint_get(const big_t *b, uint64_t i)
{
    uint32_t c = 0;
    uint64_t base = 0;

    goblin__bigint_locate(b, i, &c, &base);
    return cget(b, &b->chunks[c], (uint32_t)(i - base));
}

uint64_t goblin__bigint_lower_bound(const big_t *b, int64_t v)
{
    uint32_t ci;
    uint64_t at = 0;
    bool found;

    if (b->nchunks == 0)
        return 0;
    ci = chunk_for(b, v);
    for (uint32_t c = 0; c < ci; c++)
        at += b->chunks[c].n;
    return at + chunk_search(b, &b->chunks[ci], v, &found);
}
