/* list.c - the public list calls (goblin/list.h) that reach objects
 * through the keyspace: pushes, pops, point reads and writes, ranges,
 * LTRIM, LINSERT, LREM, LPOS and LMOVE, with Redis's index rules, and
 * the replacement of a whole key by a new list (SORT ... STORE).
 *
 * Invariants:
 *  - A key's list object is never empty: a write that leaves no element
 *    removes the key.
 *  - Every write calls goblin__write_begin first, and reports the key
 *    through goblin__key_changed when it changed something.
 */
#include <assert.h>

#include "goblin/keys.h"
#include "keyspace.h"
#include "list.h"

static int find(goblin_store *st, struct goblin_slice key, void ***slot)
{
    return goblin__key_lookup(st, key, GOBLIN_TYPE_LIST, slot);
}

/* After a removal: drops the key if its list is empty, reports it. */
static void after_removal(goblin_store *st, struct goblin_slice key,
                          void **slot)
{
    if (goblin__list_obj_len(*slot) == 0)
        goblin__key_remove(st, key);
    goblin__key_changed(st, key);
}

int64_t goblin_list_push(goblin_store *st, struct goblin_slice key,
                         enum goblin_list_end end,
                         const struct goblin_slice *elems, size_t n,
                         int exists)
{
    void **slot, *obj = NULL;
    int rc;

    if (n == 0 || n > INT64_MAX)
        return GOBLIN_EINVAL;
    goblin__write_begin(st);
    if ((rc = find(st, key, &slot)) < 0)
        return rc;
    if (rc == 1) {
        if ((rc = goblin__list_obj_push(st, slot, end, elems, n)) != 0)
            return rc;
        goblin__key_changed(st, key);
        return (int64_t)goblin__list_obj_len(*slot);
    }
    if (exists)
        return 0;
    rc = goblin__list_obj_push(st, &obj, end, elems, n);
    if (rc == 0)
        rc = goblin__key_add(st, key, GOBLIN_TYPE_LIST, obj);
    if (rc != 0) {
        goblin__list_free(st, obj);
        return rc;
    }
    goblin__key_changed(st, key);
    return (int64_t)n;
}

int64_t goblin_list_replace(goblin_store *st, struct goblin_slice key,
                            const struct goblin_slice *elems, size_t n)
{
    void *obj = NULL;
    int rc;

    if (n > INT64_MAX)
        return GOBLIN_EINVAL;
    if (n == 0) {
        goblin_key_delete(st, key);
        return 0;
    }
    goblin__write_begin(st);
    /* Built whole before the key is touched: elems may be views of the
     * key's old value (or of any key), and a failure changes nothing. */
    rc = goblin__list_obj_push(st, &obj, GOBLIN_LIST_TAIL, elems, n);
    if (rc == 0)
        rc = goblin__key_replace(st, key, GOBLIN_TYPE_LIST, obj);
    if (rc != 0) {
        goblin__list_free(st, obj);
        return rc;
    }
    goblin__key_changed(st, key);
    return (int64_t)n;
}

int64_t goblin_list_pop(goblin_store *st, struct goblin_slice key,
                        enum goblin_list_end end, int64_t count,
                        goblin_list_visit visit, void *ctx)
{
    struct goblin__list_iter it;
    struct goblin_slice e;
    uint64_t len, n;
    void **slot;
    int rc;

    if (count < 0)
        return GOBLIN_EINVAL;
    goblin__write_begin(st);
    if ((rc = find(st, key, &slot)) <= 0 || count == 0)
        return rc < 0 ? rc : 0;
    len = goblin__list_obj_len(*slot);
    n = (uint64_t)count < len ? (uint64_t)count : len;
    if (visit != NULL) {
        bool tail = end == GOBLIN_LIST_TAIL;

        goblin__list_iter_init(&it, *slot, tail ? len - 1 : 0, tail);
        for (uint64_t i = 0; i < n && goblin__list_iter_next(&it, &e); i++)
            if ((rc = visit(ctx, e)) != 0)
                return rc;
    }
    goblin__list_obj_delete(st, slot, end == GOBLIN_LIST_TAIL ? len - n : 0,
                            n);
    after_removal(st, key, slot);
    return (int64_t)n;
}

int64_t goblin_list_len(goblin_store *st, struct goblin_slice key)
{
    void **slot;
    int rc = find(st, key, &slot);

    if (rc <= 0)
        return rc;
    return (int64_t)goblin__list_obj_len(*slot);
}

/* index as an offset from the head of a list of len elements, or -1. */
static int64_t normal_index(int64_t index, uint64_t len)
{
    if (index < 0)
        index += (int64_t)len;
    return index >= 0 && (uint64_t)index < len ? index : -1;
}

int goblin_list_index(goblin_store *st, struct goblin_slice key,
                      int64_t index, struct goblin_slice *out)
{
    void **slot;
    int rc = find(st, key, &slot);
    int64_t i;

    if (rc <= 0)
        return rc;
    if ((i = normal_index(index, goblin__list_obj_len(*slot))) < 0)
        return 0;
    *out = goblin__list_obj_at(*slot, (uint64_t)i);
    return 1;
}

int goblin_list_set(goblin_store *st, struct goblin_slice key, int64_t index,
                    struct goblin_slice elem)
{
    void **slot;
    int rc;
    int64_t i;

    goblin__write_begin(st);
    if ((rc = find(st, key, &slot)) <= 0)
        return rc < 0 ? rc : GOBLIN_ENOKEY;
    if ((i = normal_index(index, goblin__list_obj_len(*slot))) < 0)
        return GOBLIN_ERANGE;
    if ((rc = goblin__list_obj_set(st, slot, (uint64_t)i, elem)) != 0)
        return rc;
    goblin__key_changed(st, key);
    return 0;
}

/* LRANGE's and LTRIM's clamping: the first index and the number of
 * elements in [start, stop] of a list of len elements. */
static uint64_t clamp(int64_t start, int64_t stop, uint64_t len,
                      uint64_t *first)
{
    int64_t l = (int64_t)len;

    if (start < 0)
        start += l;
    if (stop < 0)
        stop += l;
    if (start < 0)
        start = 0;
    if (start > stop || start >= l)
        return 0;
    if (stop >= l)
        stop = l - 1;
    *first = (uint64_t)start;
    return (uint64_t)(stop - start) + 1;
}

int64_t goblin_list_range(goblin_store *st, struct goblin_slice key,
                          int64_t start, int64_t stop,
                          goblin_list_visit visit, void *ctx)
{
    struct goblin__list_iter it;
    struct goblin_slice e;
    uint64_t first = 0, n;
    void **slot;
    int rc = find(st, key, &slot);

    if (rc <= 0)
        return rc;
    n = clamp(start, stop, goblin__list_obj_len(*slot), &first);
    if (n == 0)
        return 0;
    goblin__list_iter_init(&it, *slot, first, false);
    for (uint64_t i = 0; i < n && goblin__list_iter_next(&it, &e); i++)
        if ((rc = visit(ctx, e)) != 0)
            return rc;
    return (int64_t)n;
}

int goblin_list_trim(goblin_store *st, struct goblin_slice key,
                     int64_t start, int64_t stop)
{
    uint64_t first = 0, n, len;
    void **slot;
    int rc;

    goblin__write_begin(st);
    if ((rc = find(st, key, &slot)) <= 0)
        return rc;
    len = goblin__list_obj_len(*slot);
    n = clamp(start, stop, len, &first);
    if (n == 0)
        first = 0; /* nothing kept: the first delete takes everything */
    goblin__list_obj_delete(st, slot, first + n, len - first - n);
    goblin__list_obj_delete(st, slot, 0, first);
    after_removal(st, key, slot);
    return 0;
}

static bool same(struct goblin_slice a, struct goblin_slice b)
{
    return a.len == b.len && (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}

int goblin_list_insert(goblin_store *st, struct goblin_slice key, int after,
                       struct goblin_slice pivot, struct goblin_slice elem,
                       int64_t *len)
{
    struct goblin__list_iter it;
    struct goblin_slice e;
    uint64_t idx = 0;
    void **slot;
    int rc;

    goblin__write_begin(st);
    *len = 0;
    if ((rc = find(st, key, &slot)) <= 0)
        return rc;
    goblin__list_iter_init(&it, *slot, 0, false);
    while (goblin__list_iter_next(&it, &e)) {
        if (same(e, pivot))
            break;
        idx++;
    }
    if (idx == goblin__list_obj_len(*slot)) {
        *len = -1;
        return 0;
    }
    rc = goblin__list_obj_insert(st, slot, idx + (after ? 1 : 0), elem);
    if (rc != 0)
        return rc;
    goblin__key_changed(st, key);
    *len = (int64_t)goblin__list_obj_len(*slot);
    return 1;
}

int64_t goblin_list_rem(goblin_store *st, struct goblin_slice key,
                        int64_t count, struct goblin_slice elem)
{
    uint64_t removed;
    void **slot;
    int rc;

    goblin__write_begin(st);
    if ((rc = find(st, key, &slot)) <= 0)
        return rc;
    removed = goblin__list_obj_rem(st, slot, count, elem);
    if (removed > 0)
        after_removal(st, key, slot);
    return (int64_t)removed;
}

int64_t goblin_list_pos(goblin_store *st, struct goblin_slice key,
                        struct goblin_slice elem,
                        const struct goblin_lpos_options *o,
                        goblin_list_pos_visit visit, void *ctx)
{
    struct goblin_lpos_options d = {1, 1, 0};
    struct goblin__list_iter it;
    struct goblin_slice e;
    uint64_t len, skip, seen = 0, found = 0;
    void **slot;
    bool rev;
    int rc;

    if (o == NULL)
        o = &d;
    if (o->rank == 0 || o->count < 0 || o->maxlen < 0)
        return GOBLIN_EINVAL;
    if ((rc = find(st, key, &slot)) <= 0)
        return rc;
    len = goblin__list_obj_len(*slot);
    rev = o->rank < 0;
    /* Redis negates the rank in a long: INT64_MIN stays negative, so
     * every match counts from the first, and no count is reached. */
    skip = o->rank == INT64_MIN ? 0
           : rev                ? (uint64_t)-o->rank - 1
                                : (uint64_t)o->rank - 1;
    uint64_t want = o->rank == INT64_MIN ? 0 : (uint64_t)o->count;

    goblin__list_iter_init(&it, *slot, rev ? len - 1 : 0, rev);
    for (uint64_t i = 0; goblin__list_iter_next(&it, &e); i++) {
        if (o->maxlen != 0 && i >= (uint64_t)o->maxlen)
            break;
        if (!same(e, elem))
            continue;
        if (seen++ < skip)
            continue;
        found++;
        if ((rc = visit(ctx, rev ? (int64_t)(len - 1 - i) : (int64_t)i)) != 0)
            return rc;
        if (want != 0 && found >= want)
            break;
    }
    return (int64_t)found;
}

/* Copies the element at src's end into a buffer of its own, so that a
 * push into the same list cannot move it under the copy. */
static int take_copy(goblin_store *st, void *obj, enum goblin_list_end from,
                     uint8_t **buf, struct goblin_slice *e)
{
    uint64_t len = goblin__list_obj_len(obj);
    struct goblin_slice v =
        goblin__list_obj_at(obj, from == GOBLIN_LIST_TAIL ? len - 1 : 0);

    *buf = goblin__alloc(st, v.len > 0 ? v.len : 1);
    if (*buf == NULL)
        return GOBLIN_ENOMEM;
    if (v.len > 0)
        memcpy(*buf, v.ptr, v.len);
    e->ptr = *buf;
    e->len = v.len;
    return 0;
}

int goblin_list_move(goblin_store *st, struct goblin_slice src,
                     struct goblin_slice dst, enum goblin_list_end from,
                     enum goblin_list_end to, goblin_list_visit visit,
                     void *ctx)
{
    struct goblin_slice e;
    void **slot, **dslot;
    uint8_t *buf;
    int rc;
    int64_t pushed;

    goblin__write_begin(st);
    if ((rc = find(st, src, &slot)) <= 0)
        return rc;
    if ((rc = find(st, dst, &dslot)) < 0)
        return rc;
    if ((rc = take_copy(st, *slot, from, &buf, &e)) != 0)
        return rc;
    pushed = goblin_list_push(st, dst, to, &e, 1, 0);
    if (pushed < 0) {
        goblin__free(st, buf, e.len > 0 ? e.len : 1);
        return (int)pushed;
    }
    /* The push may have moved src's record (a new dst key): look again. */
    rc = find(st, src, &slot);
    assert(rc == 1);
    goblin__list_obj_delete(st, slot,
                            from == GOBLIN_LIST_TAIL
                                ? goblin__list_obj_len(*slot) - 1
                                : 0,
                            1);
    after_removal(st, src, slot);
    rc = visit != NULL ? visit(ctx, e) : 0;
    goblin__free(st, buf, e.len > 0 ? e.len : 1);
    return rc != 0 ? rc : 1;
}
