/* hash_check.c - the invariants of a hash object, for tests and fuzz
 * targets (goblin__store_check): a compact block finds each of its fields
 * at its own index and keeps within the compact limits; a full hash's
 * chunks, byte accounting, id pages and index agree. */
#include "hash.h"
#include "hash_entry.h"
#include "hash_impl.h"
#include "hash_ttl.h"
#include "keyspace.h"

static int check_compact(const goblin_store *st, const uint8_t *b)
{
    size_t n = goblin__hc_len(b);

    if (n == 0 || n > GOBLIN__HASH_COMPACT_MAX_ENTRIES)
        return -1;
    for (size_t i = 0; i < n; i++) {
        struct goblin_slice f, v, got;

        goblin__hc_pair(b, i, &f, &v);
        if (f.len > GOBLIN__HASH_COMPACT_MAX_VALUE ||
            v.len > GOBLIN__HASH_COMPACT_MAX_VALUE)
            return -2;
        if (goblin__hc_find(b, goblin__hash_bytes(st->hash_seed, f.ptr,
                                                  f.len),
                            f, &got) != (int)i)
            return -3;
        if (got.ptr != v.ptr || got.len != v.len)
            return -3;
    }
    return 0;
}

/* Walks every chunk, then every id back through the index. */
static int check_full(const goblin_store *st,
                      const struct goblin__hash_full *hf)
{
    uint64_t live = 0, dead = 0;
    size_t entries = 0;

    if (hf->n == 0)
        return -10;
    for (uint32_t c = 0; c < hf->nchunks; c++) {
        const struct goblin__hf_chunk *ch = &hf->chunks[c];
        uint32_t off = 0, cdead = 0;

        if (ch->p == NULL)
            continue;
        if (ch->used > ch->cap)
            return -11;
        while (off < ch->used) {
            size_t fl, vl, h;

            if (c == hf->cz_chunk && !hf->cz_evac && off == hf->cz_write &&
                hf->cz_read > hf->cz_write) {
                cdead += hf->cz_read - hf->cz_write; /* the gap */
                off = hf->cz_read;
                continue;
            }
            h = goblin__ent_get_hdr(ch->p + off, &fl, &vl);
            if (ch->p[off] & GOBLIN__ENT_DEAD) {
                cdead += (uint32_t)(h + fl + vl);
            } else {
                live += h + fl + vl;
                entries++;
            }
            off += (uint32_t)(h + fl + vl);
        }
        if (off != ch->used || cdead != ch->dead)
            return -12;
        if (c != hf->tail && ch->dead >= ch->used)
            return -13;
        dead += cdead;
    }
    if (live != hf->live || dead != hf->dead || entries != hf->n)
        return -14;
    if (goblin__swiss_count(&hf->index) != hf->n)
        return -15;
    for (uint32_t id = 0; id < hf->n; id++) {
        struct goblin_slice f, v;
        uint32_t pos = hf->pages[id >> 12][id & 4095], found;
        const uint8_t *e = hf->chunks[pos >> 18].p + (pos & ((1u << 18) - 1));

        if (e[0] & GOBLIN__ENT_DEAD)
            return -16;
        goblin__hf_pair(hf, id, &f, &v);
        if (goblin__hf_find(hf, goblin__hash_bytes(st->hash_seed, f.ptr,
                                                   f.len),
                            f, &found) != 1 || found != id)
            return -17;
    }
    if (goblin__httl_check(hf) != 0)
        return -18;
    return 0;
}

int goblin__hash_obj_check(const goblin_store *st, const void *obj)
{
    if (goblin__hobj_is_full(obj))
        return check_full(st, goblin__hobj_full(obj));
    return check_compact(st, obj);
}
