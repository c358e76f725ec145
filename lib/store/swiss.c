/* swiss.c - the shared byte-key -> uint32 id index (see swiss.h).
 *
 * Layout: one block per table, cap uint32 ids followed by cap control
 * bytes, so a slot costs 5 bytes. cap is a multiple of 16 and groups are
 * aligned: group g is slots [16g, 16g + 16), so no control byte needs
 * mirroring. A key's probe sequence starts at its home group,
 * (hash32 * groups) >> 32 with hash32 the high half of the hash, and walks
 * the following groups linearly, wrapping.
 *
 * Invariants:
 *  - For every full slot, no group between its home group and its own
 *    group holds an EMPTY byte; a probe may therefore stop at the first
 *    group with an EMPTY byte. Erase writes EMPTY only into a group that
 *    already has one (no probe passes such a group), DELETED otherwise.
 *  - used + deleted <= 15/16 cap, so every table keeps EMPTY bytes.
 *  - While an old table exists, every entry is in exactly one of the two.
 *    Each insert or erase moves one old group (at most 16 entries) and a
 *    moved slot turns DELETED, which keeps the old table's probes intact.
 *    The new table is sized for the live entries plus one insert per old
 *    group, so it cannot fill before the old one is empty.
 *  - Tombstones are cleaned by the same mechanism: when used + deleted
 *    reaches the limit the table is rebuilt, incrementally, at a size
 *    chosen from the live entries only. A table at under 1/8 load is
 *    rebuilt smaller; an empty index holds no memory at all.
 */
#include <assert.h>

#include "store.h"
#include "swiss.h"

#define GROUP GOBLIN__SWISS_GROUP
#define CTRL_EMPTY GOBLIN__SWISS_EMPTY
#define CTRL_DELETED 0xFE
#define MAX_CAP ((size_t)1 << 32)

/* High load on purpose: the index is several bytes of every element's
 * cost, and with 16-wide group probes a lookup at 15/16 load still ends in
 * its home group almost always. */
static inline size_t max_load(size_t cap)
{
    return cap - cap / 16;
}

#define match_byte goblin__swiss_match_byte
#define match_free goblin__swiss_match_free
#define match_empty goblin__swiss_match_empty
#define home_group goblin__swiss_home_group
#define fingerprint goblin__swiss_fingerprint

static int table_alloc(goblin_store *st, struct goblin__swiss_table *t,
                       size_t cap)
{
    void *block;

    if (cap > MAX_CAP)
        return GOBLIN_ENOMEM;
    block = goblin__alloc(st, goblin__mul(cap, sizeof(uint32_t) + 1));
    if (block == NULL)
        return GOBLIN_ENOMEM;
    t->ids = block;
    t->ctrl = (uint8_t *)block + cap * sizeof(uint32_t);
    memset(t->ctrl, CTRL_EMPTY, cap);
    t->cap = cap;
    t->used = 0;
    t->deleted = 0;
    return 0;
}

static void table_free(goblin_store *st, struct goblin__swiss_table *t)
{
    if (t->cap != 0)
        goblin__free(st, t->ids, t->cap * (sizeof(uint32_t) + 1));
    memset(t, 0, sizeof(*t));
}

/* A lookup through the owner's ops. */
struct ops_probe {
    const struct goblin__swiss_ops *ops;
    const void *owner, *key;
    size_t len;
};

static bool ops_match(void *ctx, uint32_t id)
{
    const struct ops_probe *p = ctx;

    return p->ops->eq(p->owner, id, p->key, p->len);
}

static int table_find(const struct goblin__swiss_table *t,
                      const struct goblin__swiss_ops *ops, const void *owner,
                      uint64_t hash, const void *key, size_t len,
                      uint32_t *id)
{
    struct ops_probe p = {ops, owner, key, len};

    return goblin__swiss_table_find(t, hash, ops_match, &p, id);
}

/* The slot holding id, whose key hashes to hash, or SIZE_MAX. */
static size_t table_slot_of(const struct goblin__swiss_table *t,
                            uint64_t hash, uint32_t id)
{
    size_t groups = t->cap / GROUP, g;
    uint8_t h2 = fingerprint(hash);

    if (groups == 0)
        return SIZE_MAX;
    g = home_group(hash, groups);
    for (size_t n = 0; n < groups; n++) {
        const uint8_t *c = t->ctrl + g * GROUP;

        for (uint32_t m = match_byte(c, h2); m != 0; m &= m - 1) {
            size_t i = g * GROUP + (size_t)__builtin_ctz(m);

            if (t->ids[i] == id)
                return i;
        }
        if (match_empty(c) != 0)
            return SIZE_MAX;
        if (++g == groups)
            g = 0;
    }
    return SIZE_MAX;
}

/* Puts id into the first free slot of its probe sequence; the caller made
 * sure the table has room. */
static void table_put(struct goblin__swiss_table *t, uint64_t hash,
                      uint32_t id)
{
    size_t groups = t->cap / GROUP, g = home_group(hash, groups);

    for (;;) {
        uint32_t m = match_free(t->ctrl + g * GROUP);

        if (m != 0) {
            size_t i = g * GROUP + (size_t)__builtin_ctz(m);

            if (t->ctrl[i] == CTRL_DELETED)
                t->deleted--;
            t->ctrl[i] = fingerprint(hash);
            t->ids[i] = id;
            t->used++;
            return;
        }
        if (++g == groups)
            g = 0;
    }
}

static void table_clear(struct goblin__swiss_table *t, size_t i)
{
    if (match_empty(t->ctrl + (i & ~(size_t)(GROUP - 1))) != 0) {
        t->ctrl[i] = CTRL_EMPTY;
    } else {
        t->ctrl[i] = CTRL_DELETED;
        t->deleted++;
    }
    t->used--;
}

/* A capacity with room for the live entries grown by a fifth, and in any
 * case for the live entries plus one insert per group of the table being
 * left. Growing by 1.2x rather than 2x keeps the load between about 78%
 * and 94%, so a slot costs 5.3-6.4 bytes per entry instead of up to 10. */
static size_t pick_cap(size_t live, size_t old_cap)
{
    size_t need = live + live / 5, floor = live + old_cap / GROUP + 2;
    size_t cap;

    if (need < floor)
        need = floor;
    cap = (need + need / 15 + GROUP - 1) / GROUP * GROUP;
    while (max_load(cap) < need)
        cap += GROUP;
    return cap;
}

/* Moves the old group at migrate_pos into the current table and frees the
 * old table once it is empty. */
static void migrate_step(goblin_store *st, struct goblin__swiss *s,
                         const struct goblin__swiss_ops *ops,
                         const void *owner)
{
    struct goblin__swiss_table *o = &s->old;
    size_t base = s->migrate_pos;

    if (o->cap == 0)
        return;
    for (uint32_t m = (~match_free(o->ctrl + base)) & 0xFFFFu; m != 0;
         m &= m - 1) {
        size_t i = base + (size_t)__builtin_ctz(m);
        uint32_t id = o->ids[i];

        assert(s->cur.used + s->cur.deleted < max_load(s->cur.cap));
        table_put(&s->cur, ops->hash(owner, id), id);
        o->ctrl[i] = CTRL_DELETED;
        o->used--;
    }
    s->migrate_pos = base + GROUP;
    if (s->migrate_pos >= o->cap || o->used == 0) {
        table_free(st, o);
        s->migrate_pos = 0;
    }
}

/* Starts moving everything into a new table of cap slots. Only called
 * with no old table. */
static int start_resize(goblin_store *st, struct goblin__swiss *s,
                        size_t cap)
{
    struct goblin__swiss_table t;

    assert(s->old.cap == 0);
    if (table_alloc(st, &t, cap) != 0)
        return GOBLIN_ENOMEM;
    if (s->cur.used == 0) {
        table_free(st, &s->cur);
    } else {
        s->old = s->cur;
        s->migrate_pos = 0;
    }
    s->cur = t;
    return 0;
}

void goblin__swiss_init(struct goblin__swiss *s)
{
    memset(s, 0, sizeof(*s));
}

void goblin__swiss_free(goblin_store *st, struct goblin__swiss *s)
{
    table_free(st, &s->cur);
    table_free(st, &s->old);
    s->migrate_pos = 0;
}

size_t goblin__swiss_count(const struct goblin__swiss *s)
{
    return s->cur.used + s->old.used;
}

size_t goblin__swiss_bytes(const struct goblin__swiss *s)
{
    return (s->cur.cap + s->old.cap) * (sizeof(uint32_t) + 1);
}

int goblin__swiss_find(const struct goblin__swiss *s,
                       const struct goblin__swiss_ops *ops, const void *owner,
                       uint64_t hash, const void *key, size_t len,
                       uint32_t *id)
{
    if (table_find(&s->cur, ops, owner, hash, key, len, id))
        return 1;
    if (s->old.cap != 0 &&
        table_find(&s->old, ops, owner, hash, key, len, id))
        return 1;
    return 0;
}

int goblin__swiss_insert(goblin_store *st, struct goblin__swiss *s,
                         const struct goblin__swiss_ops *ops,
                         const void *owner, uint64_t hash, uint32_t id)
{
    struct goblin__swiss_table *c = &s->cur;

    if (s->old.cap == 0 && c->used + c->deleted + 1 > max_load(c->cap)) {
        if (start_resize(st, s, pick_cap(c->used + 1, c->cap)) != 0)
            return GOBLIN_ENOMEM;
    }
    migrate_step(st, s, ops, owner);
    assert(c->used + c->deleted < max_load(c->cap));
    table_put(c, hash, id);
    return 0;
}

void goblin__swiss_erase(goblin_store *st, struct goblin__swiss *s,
                         const struct goblin__swiss_ops *ops,
                         const void *owner, uint64_t hash, uint32_t id)
{
    size_t i = table_slot_of(&s->cur, hash, id);

    if (i != SIZE_MAX) {
        table_clear(&s->cur, i);
    } else {
        i = table_slot_of(&s->old, hash, id);
        assert(i != SIZE_MAX);
        if (i == SIZE_MAX)
            return;
        table_clear(&s->old, i);
    }
    migrate_step(st, s, ops, owner);
    if (goblin__swiss_count(s) == 0) {
        goblin__swiss_free(st, s);
    } else if (s->old.cap == 0 && s->cur.cap > 4 * GROUP &&
               s->cur.used < s->cur.cap / 8) {
        /* Very sparse: rebuild smaller. Failing to is harmless. */
        (void)start_resize(st, s, pick_cap(s->cur.used, s->cur.cap));
    }
}

void goblin__swiss_retarget(struct goblin__swiss *s, uint64_t hash,
                            uint32_t old_id, uint32_t new_id)
{
    size_t i = table_slot_of(&s->cur, hash, old_id);

    if (i != SIZE_MAX) {
        s->cur.ids[i] = new_id;
        return;
    }
    i = table_slot_of(&s->old, hash, old_id);
    assert(i != SIZE_MAX);
    if (i != SIZE_MAX)
        s->old.ids[i] = new_id;
}
