/* hash_full.c - the full form of a hash: pairs in a chunked arena, dense
 * ids, and the shared swiss index from field bytes to id.
 *
 * Layout:
 *  - Arena: entries (hash_entry.h: header, field, value) appended to the
 *    tail chunk. A chunk holds at most CHUNK bytes and no entry straddles
 *    two; an entry above BIG bytes gets a chunk of its own, of its exact
 *    size. A position is (chunk slot << CHUNK_SHIFT) | offset, 32 bits.
 *    The tail grows by realloc (x1.5) up to CHUNK; a chunk that stops
 *    being the tail is trimmed to what it holds.
 *  - Ids: pages of PAGE u32 positions, id -> its entry. Ids are dense:
 *    removing id i moves the last id into i (swap-remove), so scans and
 *    random picks work on 0..n-1.
 *  - Index: the swiss table maps a field to its id; it reads keys back
 *    from the arena through the ops below, so a field costs 4 bytes of
 *    id + 1 control byte there (at the table's load), 4 bytes of position
 *    and its entry in the arena: 2 header bytes for short pairs.
 *
 * Invariants:
 *  - Every live id's entry is live (no dead bit); every live entry is the
 *    entry of exactly one id. live = bytes of live entries; dead = the
 *    rest of [0, used) over all chunks. A chunk other than the tail with
 *    nothing live is freed at once.
 *  - An update whose value keeps its length is written in place; any
 *    other update appends a new entry and marks the old one dead.
 *  - Compaction, a bounded step after each write, works on one chunk:
 *    it either slides the live entries down over the dead ones (the
 *    chunk holds [0, cz_write) compacted, a gap [cz_write, cz_read)
 *    counted as dead, and [cz_read, used) untouched), or, for a chunk
 *    with little left alive, moves them to the tail so the chunk can go.
 *    Positions change; ids and the index do not.
 *  - A multi-pair set is all or nothing: each step is journaled and
 *    undone on failure; in-place overwrites and dead marks wait until
 *    every step has succeeded.
 */
#include <assert.h>

#include "hash_entry.h"
#include "hash_impl.h"
#include "hash_ttl.h"
#include "util/bytes_cmp.h"

#define CHUNK_SHIFT 18
#define CHUNK ((uint32_t)1 << CHUNK_SHIFT)
#define POS_MASK (CHUNK - 1)
#define BIG (CHUNK / 4)
#define MAX_CHUNKS ((uint32_t)1 << (32 - CHUNK_SHIFT))
#define FIRST_CHUNK 1024
#define TRIM_SLACK 256
#define PAGE_SHIFT 12
#define PAGE ((uint32_t)1 << PAGE_SHIFT)
#define FIRST_PAGE 256
#define PAGE_KEEP 512
#define NONE GOBLIN__HF_NONE

/* Compaction: start when dead bytes reach both DEAD_MIN and a quarter of
 * the arena; each step looks at STEP_VISITS entries or moves STEP_BYTES. */
#define DEAD_MIN 4096
#define STEP_VISITS 64
#define STEP_BYTES 16384

typedef struct goblin__hash_full hf_t;

static inline uint8_t *at(const hf_t *hf, uint32_t pos)
{
    return hf->chunks[pos >> CHUNK_SHIFT].p + (pos & POS_MASK);
}

static inline uint32_t *idp(const hf_t *hf, uint32_t id)
{
    return &hf->pages[id >> PAGE_SHIFT][id & (PAGE - 1)];
}

static inline size_t entry_size(const uint8_t *e)
{
    size_t flen, vlen, h = goblin__ent_get_hdr(e, &flen, &vlen);

    return h + flen + vlen;
}

static inline void entry_views(const uint8_t *e, struct goblin_slice *f,
                               struct goblin_slice *v)
{
    size_t flen, vlen, h = goblin__ent_get_hdr(e, &flen, &vlen);

    f->ptr = e + h;
    f->len = flen;
    v->ptr = e + h + flen;
    v->len = vlen;
}

void goblin__hf_pair(const hf_t *hf, uint32_t id, struct goblin_slice *f,
                     struct goblin_slice *v)
{
    entry_views(at(hf, *idp(hf, id)), f, v);
}

static uint64_t ops_hash(const void *owner, uint32_t id)
{
    const hf_t *hf = owner;
    struct goblin_slice f, v;

    goblin__hf_pair(hf, id, &f, &v);
    return goblin__hash_with(hf->secret, f.ptr, f.len);
}

static bool ops_eq(const void *owner, uint32_t id, const void *key,
                   size_t len)
{
    struct goblin_slice f, v;

    goblin__hf_pair(owner, id, &f, &v);
    return f.len == len && goblin__bytes_eq(f.ptr, key, len);
}

static const struct goblin__swiss_ops ops = {ops_hash, ops_eq};

int goblin__hf_find(const hf_t *hf, uint64_t h, struct goblin_slice field,
                    uint32_t *id)
{
    return goblin__swiss_find(&hf->index, &ops, hf, h, field.ptr, field.len,
                              id);
}

/* ---- chunk slots ---- */

static int slot_get(goblin_store *st, hf_t *hf, uint32_t *idx)
{
    if (hf->free_slot != NONE) {
        *idx = hf->free_slot;
        hf->free_slot = hf->chunks[*idx].used;
        return 0;
    }
    if (hf->nchunks == MAX_CHUNKS)
        return GOBLIN_ELIMIT;
    if (hf->nchunks == hf->chunks_cap) {
        uint32_t cap = hf->chunks_cap ? hf->chunks_cap * 2 : 4;
        size_t sz = sizeof(*hf->chunks);
        void *p;

        if (cap > MAX_CHUNKS)
            cap = MAX_CHUNKS;
        p = goblin__realloc(st, hf->chunks, sz * hf->chunks_cap, sz * cap);
        if (p == NULL)
            return GOBLIN_ENOMEM;
        hf->chunks = p;
        hf->chunks_cap = cap;
    }
    *idx = hf->nchunks++;
    return 0;
}

static void slot_put(hf_t *hf, uint32_t idx)
{
    struct goblin__hf_chunk *c = &hf->chunks[idx];

    c->p = NULL;
    c->cap = c->dead = c->own = 0;
    c->used = hf->free_slot;
    hf->free_slot = idx;
}

/* Frees a chunk's memory and its slot; its dead bytes leave the count. */
static void chunk_release(goblin_store *st, hf_t *hf, uint32_t idx)
{
    struct goblin__hf_chunk *c = &hf->chunks[idx];

    hf->dead -= c->dead;
    goblin__free(st, c->p, c->cap);
    slot_put(hf, idx);
}

static void chunk_trim(goblin_store *st, struct goblin__hf_chunk *c)
{
    void *p;

    if (c->used == 0 || c->cap - c->used < TRIM_SLACK)
        return;
    p = goblin__realloc(st, c->p, c->cap, c->used);
    if (p != NULL) { /* a failed trim only keeps the slack */
        c->p = p;
        c->cap = c->used;
    }
}

/* ---- arena ---- */

static int take_own(goblin_store *st, hf_t *hf, size_t size, uint32_t *pos,
                    uint32_t *made)
{
    struct goblin__hf_chunk *c;
    uint32_t idx;
    uint8_t *p;
    int r = slot_get(st, hf, &idx);

    if (r != 0)
        return r;
    p = goblin__alloc(st, size);
    if (p == NULL) {
        slot_put(hf, idx);
        return GOBLIN_ENOMEM;
    }
    c = &hf->chunks[idx];
    c->p = p;
    c->cap = c->used = (uint32_t)size;
    c->dead = 0;
    c->own = 1;
    *pos = idx << CHUNK_SHIFT;
    *made = idx;
    return 0;
}

static int new_tail(goblin_store *st, hf_t *hf, size_t size, uint32_t *made)
{
    uint32_t idx, cap = hf->tail == NONE ? FIRST_CHUNK : CHUNK;
    struct goblin__hf_chunk *c;
    uint8_t *p;
    int r;

    if (cap < size)
        cap = (uint32_t)size;
    r = slot_get(st, hf, &idx);
    if (r != 0)
        return r;
    p = goblin__alloc(st, cap);
    if (p == NULL) {
        slot_put(hf, idx);
        return GOBLIN_ENOMEM;
    }
    if (hf->tail != NONE)
        chunk_trim(st, &hf->chunks[hf->tail]);
    c = &hf->chunks[idx];
    c->p = p;
    c->cap = cap;
    c->used = c->dead = c->own = 0;
    hf->tail = idx;
    *made = idx;
    return 0;
}

static int grow_tail(goblin_store *st, struct goblin__hf_chunk *c,
                     size_t need)
{
    size_t cap = c->cap + c->cap / 2;
    void *p;

    if (cap < need)
        cap = need;
    if (cap > CHUNK)
        cap = CHUNK;
    p = goblin__realloc(st, c->p, c->cap, cap);
    if (p == NULL)
        return GOBLIN_ENOMEM;
    c->p = p;
    c->cap = (uint32_t)cap;
    return 0;
}

/* Reserves size bytes for a new entry at *pos. *made is the chunk slot
 * created for it, or NONE. On failure nothing is reserved (a tail may
 * have grown or been trimmed, which only changes capacity). */
static int arena_take(goblin_store *st, hf_t *hf, size_t size, uint32_t *pos,
                      uint32_t *made)
{
    struct goblin__hf_chunk *c;
    int r;

    *made = NONE;
    if (size > BIG)
        r = take_own(st, hf, size, pos, made);
    else {
        c = hf->tail != NONE ? &hf->chunks[hf->tail] : NULL;
        if (c != NULL && c->used + size > c->cap && c->used + size <= CHUNK)
            r = grow_tail(st, c, c->used + size);
        else if (c == NULL || c->used + size > CHUNK)
            r = new_tail(st, hf, size, made);
        else
            r = 0;
        if (r != 0)
            return r;
        c = &hf->chunks[hf->tail];
        *pos = hf->tail << CHUNK_SHIFT | c->used;
        c->used += (uint32_t)size;
    }
    if (r == 0)
        hf->live += size;
    return r;
}

/* Marks the entry at pos dead; frees its chunk if nothing there lives. */
static void arena_kill(goblin_store *st, hf_t *hf, uint32_t pos)
{
    uint32_t idx = pos >> CHUNK_SHIFT;
    struct goblin__hf_chunk *c = &hf->chunks[idx];
    uint8_t *e = c->p + (pos & POS_MASK);
    size_t size = entry_size(e);

    assert(!(e[0] & GOBLIN__ENT_DEAD));
    e[0] |= GOBLIN__ENT_DEAD;
    c->dead += (uint32_t)size;
    hf->dead += size;
    hf->live -= size;
    if (c->dead != c->used)
        return;
    if (idx == hf->cz_chunk)
        hf->cz_chunk = NONE;
    if (idx == hf->tail) {
        hf->dead -= c->dead;
        c->used = c->dead = 0;
    } else {
        chunk_release(st, hf, idx);
    }
}

/* ---- id pages ---- */

static int grow_pages_dir(goblin_store *st, hf_t *hf)
{
    uint32_t cap = hf->pages_cap ? hf->pages_cap * 2 : 4;
    size_t sz = sizeof(*hf->pages);
    void *p = goblin__realloc(st, hf->pages, sz * hf->pages_cap, sz * cap);

    if (p == NULL)
        return GOBLIN_ENOMEM;
    hf->pages = p;
    hf->pages_cap = cap;
    return 0;
}

/* Makes room for id n. */
static int ids_reserve(goblin_store *st, hf_t *hf)
{
    uint32_t pg = hf->n >> PAGE_SHIFT, off = hf->n & (PAGE - 1);
    uint32_t *p;

    if (hf->n == UINT32_MAX)
        return GOBLIN_ELIMIT;
    if (pg + 1 < hf->npages || (pg + 1 == hf->npages && off < hf->last_cap))
        return 0;
    if (pg + 1 == hf->npages) {
        uint32_t cap = hf->last_cap * 2 < PAGE ? hf->last_cap * 2 : PAGE;

        p = goblin__realloc(st, hf->pages[pg], hf->last_cap * 4ul, cap * 4ul);
        if (p == NULL)
            return GOBLIN_ENOMEM;
        hf->pages[pg] = p;
        hf->last_cap = cap;
        return 0;
    }
    if (hf->npages == hf->pages_cap && grow_pages_dir(st, hf) != 0)
        return GOBLIN_ENOMEM;
    p = goblin__alloc(st, FIRST_PAGE * 4ul);
    if (p == NULL)
        return GOBLIN_ENOMEM;
    hf->pages[hf->npages++] = p;
    hf->last_cap = FIRST_PAGE;
    return 0;
}

/* Frees the last page once it is empty and the one before has PAGE_KEEP
 * free ids, so a count moving around a page boundary does not churn. */
static void ids_shrink(goblin_store *st, hf_t *hf)
{
    uint32_t base = (hf->npages - 1) << PAGE_SHIFT;

    if (hf->npages < 2 || hf->n + PAGE_KEEP > base)
        return;
    goblin__free(st, hf->pages[hf->npages - 1], hf->last_cap * 4ul);
    hf->npages--;
    hf->last_cap = PAGE;
}

/* ---- life cycle ---- */

int goblin__hf_new(goblin_store *st, hf_t **out)
{
    hf_t *hf = goblin__alloc(st, sizeof(*hf));

    if (hf == NULL)
        return GOBLIN_ENOMEM;
    memset(hf, 0, sizeof(*hf));
    hf->secret = st->hash_secret;
    goblin__swiss_init(&hf->index);
    hf->tail = hf->free_slot = hf->cz_chunk = NONE;
    *out = hf;
    return 0;
}

void goblin__hf_free(goblin_store *st, hf_t *hf)
{
    if (hf == NULL)
        return;
    for (uint32_t i = 0; i < hf->npages; i++)
        goblin__free(st, hf->pages[i],
                     (i + 1 == hf->npages ? hf->last_cap : PAGE) * 4ul);
    goblin__free(st, hf->pages, hf->pages_cap * sizeof(*hf->pages));
    for (uint32_t i = 0; i < hf->nchunks; i++)
        goblin__free(st, hf->chunks[i].p, hf->chunks[i].cap);
    goblin__free(st, hf->chunks, hf->chunks_cap * sizeof(*hf->chunks));
    goblin__swiss_free(st, &hf->index);
    goblin__httl_free(st, hf);
    goblin__free(st, hf, sizeof(*hf));
}

size_t goblin__hf_bytes(const hf_t *hf)
{
    size_t b = sizeof(*hf) + hf->pages_cap * sizeof(*hf->pages) +
               hf->chunks_cap * sizeof(*hf->chunks) +
               goblin__swiss_bytes(&hf->index) + goblin__httl_bytes(hf);

    for (uint32_t i = 0; i < hf->npages; i++)
        b += (i + 1 == hf->npages ? hf->last_cap : PAGE) * 4ul;
    for (uint32_t i = 0; i < hf->nchunks; i++)
        b += hf->chunks[i].cap;
    return b;
}

/* Copies the compact block's entries (same encoding) into a first tail
 * chunk with room to grow by half. */
static int copy_entries(goblin_store *st, hf_t *hf, const uint8_t *b)
{
    struct goblin__hc_iter it;
    struct goblin_slice f, v;
    size_t total, off = 0;
    uint32_t made;

    goblin__hc_iter_init(&it, b);
    total = goblin__hc_bytes(b) - (size_t)(it.p - b);
    assert(total + total / 2 <= BIG);
    if (it.left == 0)
        return 0;
    if (new_tail(st, hf, total + total / 2, &made) != 0)
        return GOBLIN_ENOMEM;
    memcpy(hf->chunks[hf->tail].p, it.p, total);
    hf->chunks[hf->tail].used = (uint32_t)total;
    hf->live = total;
    for (uint32_t id = 0; goblin__hc_next(&it, &f, &v); id++) {
        *idp(hf, id) = hf->tail << CHUNK_SHIFT | (uint32_t)off;
        off += goblin__ent_len(f.len, v.len);
    }
    return 0;
}

int goblin__hf_from_compact(goblin_store *st, const uint8_t *b, hf_t **out)
{
    size_t n = goblin__hc_len(b);
    hf_t *hf;

    assert(n < FIRST_PAGE);
    if (goblin__hf_new(st, &hf) != 0)
        return GOBLIN_ENOMEM;
    if (ids_reserve(st, hf) != 0 || copy_entries(st, hf, b) != 0)
        goto fail;
    for (uint32_t id = 0; id < n; id++) {
        hf->n = id + 1;
        if (goblin__swiss_insert(st, &hf->index, &ops, hf,
                                 ops_hash(hf, id), id) != 0)
            goto fail;
    }
    *out = hf;
    return 0;
fail:
    goblin__hf_free(st, hf);
    return GOBLIN_ENOMEM;
}

/* ---- writes ---- */

enum { J_NEW, J_MOVE, J_INPLACE, J_CHUNK };

struct jrec {
    uint32_t kind, a, b; /* NEW id; MOVE id, old pos; INPLACE pos, pair;
                          * CHUNK slot */
};

struct txn {
    struct jrec *j;
    size_t nj;
    uint32_t tail, tail_used;
    uint64_t live;
};

static int put_entry(goblin_store *st, hf_t *hf, struct txn *t,
                     struct goblin_slice f, struct goblin_slice v,
                     uint32_t *pos)
{
    uint32_t made;
    int r = arena_take(st, hf, goblin__ent_len(f.len, v.len), pos, &made);

    if (r != 0)
        return r;
    if (made != NONE)
        t->j[t->nj++] = (struct jrec){J_CHUNK, made, 0};
    goblin__ent_put(at(hf, *pos), f.ptr, f.len, v.ptr, v.len);
    return 0;
}

/* Applies pair i (f, v, field hash h). Returns 1 if the field is new, 0 if
 * it existed, or a negative code (the journal says what to undo). */
static int set_one(goblin_store *st, hf_t *hf, struct txn *t,
                   struct goblin_slice f, struct goblin_slice v, uint64_t h,
                   uint32_t i)
{
    uint32_t id, pos, old;
    size_t flen, vlen;
    int r;

    if (goblin__hf_find(hf, h, f, &id)) {
        old = *idp(hf, id);
        goblin__ent_get_hdr(at(hf, old), &flen, &vlen);
        if (vlen == v.len) {
            t->j[t->nj++] = (struct jrec){J_INPLACE, old, i};
            return 0;
        }
        r = put_entry(st, hf, t, f, v, &pos);
        if (r != 0)
            return r;
        t->j[t->nj++] = (struct jrec){J_MOVE, id, old};
        *idp(hf, id) = pos;
        return 0;
    }
    r = ids_reserve(st, hf);
    if (r == 0)
        r = put_entry(st, hf, t, f, v, &pos);
    if (r != 0)
        return r;
    *idp(hf, hf->n) = pos;
    r = goblin__swiss_insert(st, &hf->index, &ops, hf, h, hf->n);
    if (r != 0)
        return r;
    t->j[t->nj++] = (struct jrec){J_NEW, hf->n, 0};
    hf->n++;
    return 1;
}

static void rollback(goblin_store *st, hf_t *hf, const struct txn *t)
{
    for (size_t k = t->nj; k-- > 0;) {
        const struct jrec *r = &t->j[k];

        if (r->kind == J_NEW) {
            goblin__swiss_erase(st, &hf->index, &ops, hf,
                                ops_hash(hf, r->a), r->a);
            hf->n--;
        } else if (r->kind == J_MOVE) {
            *idp(hf, r->a) = r->b;
        } else if (r->kind == J_CHUNK) {
            chunk_release(st, hf, r->a);
        }
    }
    hf->tail = t->tail;
    if (t->tail != NONE)
        hf->chunks[t->tail].used = t->tail_used;
    hf->live = t->live;
}

static void commit(goblin_store *st, hf_t *hf, const struct txn *t,
                   const struct goblin_slice *fv)
{
    for (size_t k = 0; k < t->nj; k++) {
        const struct jrec *r = &t->j[k];
        struct goblin_slice f, v, nv;

        if (r->kind == J_MOVE) {
            arena_kill(st, hf, r->b);
        } else if (r->kind == J_INPLACE) {
            nv = fv[2 * (size_t)r->b + 1];
            entry_views(at(hf, r->a), &f, &v);
            if (nv.len != 0)
                memcpy((uint8_t *)v.ptr, nv.ptr, nv.len);
        }
    }
}

int goblin__hf_set(goblin_store *st, hf_t *hf, const struct goblin_slice *fv,
                   const uint64_t *hashes, size_t npairs)
{
    struct jrec local[16];
    struct txn t = {local, 0, hf->tail, 0, hf->live};
    size_t jbytes = goblin__mul(npairs, 2 * sizeof(struct jrec));
    int added = 0, r = 0;

    /* New ids need their "no deadline" entries first. */
    if (hf->ttl != NULL &&
        (npairs > UINT32_MAX - hf->n ||
         goblin__httl_reserve(st, hf, hf->n + (uint32_t)npairs) != 0))
        return GOBLIN_ENOMEM;
    if (npairs > 8) {
        t.j = goblin__alloc(st, jbytes);
        if (t.j == NULL)
            return GOBLIN_ENOMEM;
    }
    if (t.tail != NONE)
        t.tail_used = hf->chunks[t.tail].used;
    for (size_t i = 0; i < npairs && r >= 0; i++) {
        struct goblin_slice f = fv[2 * i];
        uint64_t h = hashes != NULL ? hashes[i]
                                    : goblin__hash_with(hf->secret, f.ptr,
                                                        f.len);

        r = set_one(st, hf, &t, f, fv[2 * i + 1], h, (uint32_t)i);
        added += r > 0;
    }
    if (r < 0)
        rollback(st, hf, &t);
    else
        commit(st, hf, &t, fv);
    if (t.j != local)
        goblin__free(st, t.j, jbytes);
    return r < 0 ? r : added;
}

void goblin__hf_del(goblin_store *st, hf_t *hf, uint32_t id, uint64_t h)
{
    uint32_t last = hf->n - 1, pos = *idp(hf, id);

    goblin__httl_on_del(st, hf, id);
    goblin__swiss_erase(st, &hf->index, &ops, hf, h, id);
    if (id != last) {
        uint32_t lpos = *idp(hf, last);

        *idp(hf, id) = lpos;
        goblin__swiss_retarget(&hf->index, ops_hash(hf, id), last, id);
    }
    hf->n--;
    arena_kill(st, hf, pos);
    ids_shrink(st, hf);
}

/* ---- compaction ---- */

static bool should_compact(const hf_t *hf)
{
    return hf->dead >= DEAD_MIN && hf->dead * 4 >= hf->live + hf->dead;
}

/* Starts on the chunk with the most dead bytes, if any. */
static bool compact_start(hf_t *hf)
{
    uint32_t best = NONE, most = 0;

    for (uint32_t i = 0; i < hf->nchunks; i++) {
        const struct goblin__hf_chunk *c = &hf->chunks[i];

        if (c->p != NULL && !c->own && c->dead > most) {
            most = c->dead;
            best = i;
        }
    }
    if (best == NONE)
        return false;
    hf->cz_chunk = best;
    hf->cz_read = hf->cz_write = 0;
    hf->cz_evac = best != hf->tail &&
                  hf->chunks[best].used - hf->chunks[best].dead <= BIG;
    return true;
}

/* Ends a slide: the gap goes, and a chunk other than the tail is trimmed
 * (or freed when empty). */
static void compact_finish(goblin_store *st, hf_t *hf)
{
    uint32_t idx = hf->cz_chunk;
    struct goblin__hf_chunk *c = &hf->chunks[idx];
    uint32_t gap = c->used - hf->cz_write;

    hf->cz_chunk = NONE;
    if (hf->cz_evac)
        return;
    c->used -= gap;
    c->dead -= gap;
    hf->dead -= gap;
    if (idx == hf->tail)
        return;
    if (c->used == 0)
        chunk_release(st, hf, idx);
    else
        chunk_trim(st, c);
}

/* Moves one live entry of the chunk being compacted; false if the move
 * could not get memory (the step then ends and is retried later). */
static bool compact_move(goblin_store *st, hf_t *hf, size_t size)
{
    uint32_t from = hf->cz_chunk << CHUNK_SHIFT | hf->cz_read, id, pos;
    uint32_t made;
    struct goblin_slice f, v;
    int found;

    entry_views(at(hf, from), &f, &v);
    found = goblin__hf_find(hf, goblin__hash_with(hf->secret, f.ptr,
                                                  f.len),
                            f, &id);
    assert(found && *idp(hf, id) == from);
    (void)found;
    if (!hf->cz_evac) {
        pos = hf->cz_chunk << CHUNK_SHIFT | hf->cz_write;
        memmove(at(hf, pos), at(hf, from), size);
        *idp(hf, id) = pos;
        hf->cz_write += (uint32_t)size;
        hf->cz_read += (uint32_t)size;
        return true;
    }
    if (arena_take(st, hf, size, &pos, &made) != 0)
        return false;
    memcpy(at(hf, pos), at(hf, from), size);
    *idp(hf, id) = pos;
    hf->cz_read += (uint32_t)size;
    arena_kill(st, hf, from); /* may free the chunk and end compaction */
    return true;
}

void goblin__hf_compact_step(goblin_store *st, hf_t *hf)
{
    size_t moved = 0;

    if (hf->cz_chunk == NONE && (!should_compact(hf) || !compact_start(hf)))
        return;
    for (int k = 0; k < STEP_VISITS && moved < STEP_BYTES; k++) {
        struct goblin__hf_chunk *c;
        const uint8_t *e;
        size_t size;

        if (hf->cz_chunk == NONE)
            return;
        c = &hf->chunks[hf->cz_chunk];
        if (hf->cz_read >= c->used) {
            compact_finish(st, hf);
            return;
        }
        e = c->p + hf->cz_read;
        size = entry_size(e);
        if ((e[0] & GOBLIN__ENT_DEAD) ||
            (!hf->cz_evac && hf->cz_write == hf->cz_read)) {
            if (!(e[0] & GOBLIN__ENT_DEAD))
                hf->cz_write += (uint32_t)size;
            hf->cz_read += (uint32_t)size;
            continue;
        }
        if (!compact_move(st, hf, size))
            return;
        moved += size;
    }
}
