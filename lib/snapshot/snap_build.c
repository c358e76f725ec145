/* snap_build.c - building big hash and sorted-set objects for a load,
 * when their size is known up front.
 *
 * The store's own builders insert into an index that grows as it goes
 * (by a fifth at a time, moving old entries a group per insert and
 * rehashing each one it moves), which suits a live store but makes a
 * bulk load pay for every entry several times. A loader knows the final
 * count, so here the index is given its final table before the first
 * insert (reserve_index) and then filled with the store's own calls. For
 * a sorted set the same pass finds repeated members (a probe before each
 * insert), which the bulk path trusts its input not to have.
 */
#include "snapshot_int.h"
#include "store/hash.h"
#include "store/hash_impl.h"
#include "store/swiss.h"
#include "store/zset_arena.h"
#include "store/zset_impl.h"
#include "store/zset_tree.h"

#define CTRL_EMPTY 0x80 /* swiss.h: the control byte of an empty slot */
#define GROUP 16

/* Gives an empty index a table for n entries at about 5/6 load (the load
 * swiss.c's growth aims at), laid out as swiss.c lays its tables: one
 * block of cap ids then cap control bytes. Returns 0 or GOBLIN_ENOMEM
 * (the index stays empty and grows by itself). */
static int reserve_index(goblin_store *st, struct goblin__swiss *s,
                         size_t n)
{
    struct goblin__swiss_table *t = &s->cur;
    size_t cap = (n + n / 5 + 2 * GROUP) / GROUP * GROUP;
    uint8_t *block;

    if (t->cap != 0 || s->old.cap != 0 || cap > ((size_t)1 << 32))
        return 0;
    block = goblin__alloc(st, goblin__mul(cap, sizeof(uint32_t) + 1));
    if (block == NULL)
        return GOBLIN_ENOMEM;
    t->ids = (uint32_t *)(void *)block;
    t->ctrl = block + cap * sizeof(uint32_t);
    memset(t->ctrl, CTRL_EMPTY, cap);
    t->cap = cap;
    t->used = 0;
    t->deleted = 0;
    return 0;
}

/* Asks for the home group of a key with this hash early (swiss.c's
 * home_group: the high half of the hash scaled to the group count), so
 * the misses of many inserts overlap instead of coming one by one. */
static inline void prefetch_home(const struct goblin__swiss *s, uint64_t h)
{
    size_t groups = s->cur.cap / GROUP, g;

    if (groups == 0)
        return;
    g = (size_t)(((h >> 32) * (uint64_t)groups) >> 32);
    __builtin_prefetch(s->cur.ctrl + g * GROUP);
    __builtin_prefetch(s->cur.ids + g * GROUP);
}

#define AHEAD 16

/* ---- sorted sets ---- */

/* Appends the n pairs to an empty full object, indexing each member and
 * refusing one seen before. */
static int zfull_fill(goblin_store *st, struct zfull *z,
                      const struct goblin_zpair *p, size_t n,
                      double *scores, uint32_t *ids)
{
    uint64_t ring[AHEAD];

    for (size_t i = 0; i < n && i < AHEAD; i++) {
        ring[i] = zf_hash(z, p[i].member.ptr, p[i].member.len);
        prefetch_home(&z->idx, ring[i]);
    }
    for (size_t i = 0; i < n; i++) {
        const struct goblin_slice *m = &p[i].member;
        uint64_t h = ring[i % AHEAD];
        uint32_t other;
        int rc;

        if (i + AHEAD < n) {
            const struct goblin_slice *a = &p[i + AHEAD].member;

            ring[i % AHEAD] = zf_hash(z, a->ptr, a->len);
            prefetch_home(&z->idx, ring[i % AHEAD]);
        }
        if (goblin__swiss_find(&z->idx, &goblin__zf_swiss_ops, z, h, m->ptr, m->len,
                               &other))
            return GOBLIN_ESNAPFORMAT;
        scores[i] = p[i].score;
        rc = goblin__za_append(st, &z->ar, m->ptr, m->len, scores[i], &ids[i]);
        if (rc == 0)
            rc = goblin__swiss_insert(st, &z->idx, &goblin__zf_swiss_ops, z, h,
                                      ids[i]);
        if (rc != 0)
            return rc;
    }
    return 0;
}

int goblin__snap_zset_full(goblin_store *st, const struct goblin_zpair *p,
                           size_t n, void **out)
{
    size_t bytes = goblin__mul(n, sizeof(double) + sizeof(uint32_t));
    struct zfull *z = goblin__zf_new(st);
    double *scores;
    int rc;

    if (z == NULL)
        return GOBLIN_ENOMEM;
    scores = goblin__alloc(st, bytes);
    rc = scores == NULL ? GOBLIN_ENOMEM : reserve_index(st, &z->idx, n);
    if (rc == 0)
        rc = zfull_fill(st, z, p, n, scores, (uint32_t *)(void *)(scores + n));
    if (rc == 0)
        rc = goblin__zt_build(st, &z->tree, scores, (uint32_t *)(void *)(scores + n),
                      n);
    if (scores != NULL)
        goblin__free(st, scores, bytes);
    if (rc != 0) {
        goblin__zf_free(st, z);
        return rc;
    }
    *out = z;
    return 0;
}

/* ---- hashes ---- */

int goblin__snap_hash_full(goblin_store *st, size_t n, void **out)
{
    struct goblin__hash_full *hf;
    int rc = goblin__hf_new(st, &hf);

    if (rc != 0)
        return rc;
    if ((rc = reserve_index(st, &hf->index, n)) != 0) {
        goblin__hf_free(st, hf);
        return rc;
    }
    *out = goblin__hobj_of_full(hf);
    return 0;
}

#define SUB 32

int goblin__snap_hash_set(goblin_store *st, void **objp,
                          const struct goblin_slice *fv, size_t n)
{
    struct goblin__hash_full *hf;
    uint64_t h[SUB];
    int added = 0;

    if (*objp == NULL || !goblin__hobj_is_full(*objp))
        return goblin__hash_obj_set(st, objp, fv, n);
    hf = goblin__hobj_full(*objp);
    for (size_t i = 0; i < n; i += SUB) {
        size_t k = n - i < SUB ? n - i : SUB;
        int r;

        for (size_t j = 0; j < k; j++) {
            h[j] = goblin__hash_with(hf->secret, fv[2 * (i + j)].ptr,
                                     fv[2 * (i + j)].len);
            prefetch_home(&hf->index, h[j]);
        }
        r = goblin__hf_set(st, hf, fv + 2 * i, h, k);
        if (r < 0)
            return r;
        added += r;
    }
    goblin__hf_compact_step(st, hf);
    return added;
}
