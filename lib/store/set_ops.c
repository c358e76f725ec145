/* set_ops.c - the public calls on one set key (goblin/set.h): SADD, SREM,
 * SISMEMBER, SMISMEMBER, SCARD, SMEMBERS, SRANDMEMBER, SPOP and SSCAN,
 * reaching objects through the keyspace.
 *
 * A key's set is never empty: a write that would leave no member removes
 * the key instead. Every write reports its key through goblin__key_changed
 * when it changed something.
 */
#include <limits.h>
#include <stdlib.h>

#include "keyspace.h"
#include "set.h"

/* Looks key up as a set: 1 with *obj, 0 if absent, or GOBLIN_EWRONGTYPE. */
static int read_obj(goblin_store *st, struct goblin_slice key,
                    const void **obj)
{
    void **slot;
    int r = goblin__key_lookup(st, key, GOBLIN_TYPE_SET, &slot);

    if (r == 1)
        *obj = *slot;
    return r;
}

/* Carries a public visitor through the internal one. */
struct pub {
    goblin_set_visit visit;
    void *ctx;
};

static int pub_visit(void *ctx, const struct goblin__set_elem *e)
{
    struct pub *p = ctx;

    return p->visit(p->ctx, e->s);
}

int goblin_set_add(goblin_store *st, struct goblin_slice key,
                   const struct goblin_slice *members, size_t n)
{
    void **slot, *obj = NULL;
    int r, added;

    if (n == 0)
        return GOBLIN_EINVAL;
    goblin__write_begin(st);
    r = goblin__key_lookup(st, key, GOBLIN_TYPE_SET, &slot);
    if (r < 0)
        return r;
    if (r == 1)
        obj = *slot;
    added = goblin__set_obj_add(st, &obj, members, n);
    if (added < 0)
        return added;
    if (r == 1) {
        *slot = obj;
    } else if ((r = goblin__key_add(st, key, GOBLIN_TYPE_SET, obj)) != 0) {
        goblin__set_free(st, obj);
        return r;
    }
    if (added > 0)
        goblin__key_changed(st, key);
    return added;
}

int goblin_set_rem(goblin_store *st, struct goblin_slice key,
                   const struct goblin_slice *members, size_t n)
{
    void **slot, *obj;
    size_t before;
    int r, removed;

    if (n == 0)
        return GOBLIN_EINVAL;
    goblin__write_begin(st);
    r = goblin__key_lookup(st, key, GOBLIN_TYPE_SET, &slot);
    if (r != 1)
        return r;
    obj = *slot;
    before = goblin__set_obj_card(obj);
    removed = goblin__set_obj_rem(st, &obj, members, n);
    if (removed <= 0)
        return removed;
    if ((size_t)removed == before)
        goblin__key_remove(st, key);
    else
        *slot = obj;
    goblin__key_changed(st, key);
    return removed;
}

int goblin_set_ismember(goblin_store *st, struct goblin_slice key,
                        struct goblin_slice member)
{
    const void *obj = NULL;
    int r = read_obj(st, key, &obj);

    if (r != 1)
        return r;
    return goblin__set_obj_has(st, obj, member);
}

int goblin_set_mismember(goblin_store *st, struct goblin_slice key,
                         const struct goblin_slice *members, size_t n,
                         uint8_t *out)
{
    const void *obj = NULL;
    int r = read_obj(st, key, &obj), found = 0;

    if (r < 0)
        return r;
    for (size_t i = 0; i < n; i++) {
        out[i] = r == 1 && goblin__set_obj_has(st, obj, members[i]);
        found += out[i];
    }
    return found;
}

int64_t goblin_set_card(goblin_store *st, struct goblin_slice key)
{
    const void *obj = NULL;
    int r = read_obj(st, key, &obj);

    return r == 1 ? (int64_t)goblin__set_obj_card(obj) : r;
}

int64_t goblin_set_foreach(goblin_store *st, struct goblin_slice key,
                           goblin_set_visit visit, void *ctx)
{
    struct pub p = {visit, ctx};
    const void *obj = NULL;
    int r = read_obj(st, key, &obj);

    return r == 1 ? goblin__set_obj_foreach(obj, pub_visit, &p) : r;
}

static int64_t random_distinct(goblin_store *st, const void *obj,
                               uint64_t count, goblin_set_begin begin,
                               struct pub *p)
{
    size_t bytes = (size_t)count * sizeof(uint64_t);
    uint64_t *pos = goblin__alloc(st, bytes);
    int64_t r;

    if (pos == NULL)
        return GOBLIN_ENOMEM;
    r = goblin__set_obj_pick(st, obj, count, pos);
    if (r == 0 && begin != NULL)
        r = begin(p->ctx, count);
    if (r == 0)
        r = goblin__set_obj_visit_at(obj, pos, count, pub_visit, p);
    goblin__free(st, pos, bytes);
    return r;
}

int64_t goblin_set_random(goblin_store *st, struct goblin_slice key,
                          int64_t count, goblin_set_begin begin,
                          goblin_set_visit visit, void *ctx)
{
    struct pub p = {visit, ctx};
    struct goblin__set_elem e;
    const void *obj = NULL;
    uint64_t n;
    int r;

    if (count == INT64_MIN)
        return GOBLIN_ERANGE;
    r = read_obj(st, key, &obj);
    if (r < 0)
        return r;
    if (r == 0 || count == 0)
        return begin != NULL && (r = begin(ctx, 0)) != 0 ? r : 0;
    n = goblin__set_obj_card(obj);
    if (count < 0) {
        if (begin != NULL && (r = begin(ctx, (uint64_t)-count)) != 0)
            return r;
        for (int64_t k = 0; k < -count; k++) {
            goblin__set_obj_at(obj, goblin__set_rand_below(st, n), &e);
            if ((r = visit(ctx, e.s)) != 0)
                return r;
        }
        return -count;
    }
    if ((uint64_t)count >= n) {
        if (begin != NULL && (r = begin(ctx, n)) != 0)
            return r;
        return goblin__set_obj_foreach(obj, pub_visit, &p);
    }
    return random_distinct(st, obj, (uint64_t)count, begin, &p);
}

int64_t goblin_set_scan(goblin_store *st, struct goblin_slice key,
                        uint64_t cursor, size_t count,
                        struct goblin_slice match, goblin_set_visit visit,
                        void *ctx, uint64_t *next)
{
    struct pub p = {visit, ctx};
    const void *obj = NULL;
    int r = read_obj(st, key, &obj);

    if (r != 1) {
        if (r == 0)
            *next = 0;
        return r;
    }
    return goblin__set_obj_scan(obj, cursor, count, match, pub_visit, &p,
                                next);
}

/* ---- SPOP ---- */

int64_t goblin_set_pop(goblin_store *st, struct goblin_slice key,
                       uint64_t count, goblin_set_begin begin,
                       goblin_set_visit visit, void *ctx)
{
    struct pub p = {visit, ctx};
    void **slot, *obj, *next = NULL;
    uint64_t n, *pos;
    size_t bytes;
    int64_t r;

    goblin__write_begin(st);
    r = goblin__key_lookup(st, key, GOBLIN_TYPE_SET, &slot);
    if (r < 0)
        return r;
    if (r == 0 || count == 0)
        return begin != NULL && (r = begin(ctx, 0)) != 0 ? r : 0;
    obj = *slot;
    n = goblin__set_obj_card(obj);
    if (count >= n) {
        if (begin != NULL)
            begin(ctx, n);
        goblin__set_obj_foreach(obj, pub_visit, &p);
        goblin__key_remove(st, key);
        goblin__key_changed(st, key);
        return (int64_t)n;
    }
    /* Everything that can fail happens before the first visit. */
    bytes = (size_t)count * sizeof(*pos);
    if ((pos = goblin__alloc(st, bytes)) == NULL)
        return GOBLIN_ENOMEM;
    r = goblin__set_obj_pick(st, obj, count, pos);
    if (r == 0)
        r = goblin__set_obj_without(st, obj, pos, count, &next);
    if (r < 0) {
        goblin__free(st, pos, bytes);
        return r;
    }
    if (begin == NULL || begin(ctx, count) == 0)
        goblin__set_obj_visit_at(obj, pos, count, pub_visit, &p);
    if (next != NULL) {
        goblin__set_free(st, obj);
        *slot = next;
    } else {
        for (uint64_t i = count; i-- > 0;)
            goblin__set_obj_del_at(st, obj, pos[i]);
    }
    goblin__free(st, pos, bytes);
    goblin__key_changed(st, key);
    return (int64_t)count;
}
