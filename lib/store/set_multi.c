/* set_multi.c - the set calls over several keys: SMOVE, SUNION, SINTER,
 * SDIFF (and their STORE forms) and SINTERCARD.
 *
 * The combining calls look every key up first (Redis type-checks every
 * key, even after a missing one), then build the result as a set object
 * of its own, which is either stored or visited and freed. So the result
 * takes the form its members call for (an intset when they are at most
 * 512 integers, in ascending order, as Redis's reply then is), and the
 * sources are never written while they are read.
 *
 * SINTER walks the smallest set and keeps the members every other set
 * holds; SDIFF walks the first and keeps those no other set holds.
 */
#include <stdlib.h>

#include "keyspace.h"
#include "set.h"

#define BATCH 256

/* Gathers members into a new object, BATCH at a time. */
struct builder {
    goblin_store *st;
    void *obj;
    const void *const *sets;
    size_t nsets;
    enum goblin_set_op op;
    uint64_t limit, count; /* SINTERCARD: counting only */
    struct goblin_slice m[BATCH];
    char txt[BATCH][24];
    size_t k;
};

static int flush(struct builder *b)
{
    int r = 0;

    if (b->k != 0)
        r = goblin__set_obj_add(b->st, &b->obj, b->m, b->k);
    b->k = 0;
    return r < 0 ? r : 0;
}

/* Whether e belongs to the result, against the sets other than the one
 * walked (sets[0]). */
static bool keep(const struct builder *b, const struct goblin__set_elem *e)
{
    for (size_t j = 1; j < b->nsets; j++) {
        bool has = b->sets[j] != NULL &&
                   goblin__set_obj_has(b->st, b->sets[j], e->s);

        if (has != (b->op == GOBLIN_SET_INTER))
            return false;
    }
    return true;
}

static int gather(void *ctx, const struct goblin__set_elem *e)
{
    struct builder *b = ctx;

    if (b->op != GOBLIN_SET_UNION && !keep(b, e))
        return 0;
    if (b->limit != UINT64_MAX) {
        /* SINTERCARD: 1 stops the walk once the limit is reached. */
        return ++b->count == b->limit;
    }
    if (e->is_int) {
        memcpy(b->txt[b->k], e->s.ptr, e->s.len);
        b->m[b->k].ptr = b->txt[b->k];
    } else {
        b->m[b->k].ptr = e->s.ptr;
    }
    b->m[b->k++].len = e->s.len;
    return b->k == BATCH ? flush(b) : 0;
}

static int by_card(const void *a, const void *b)
{
    size_t x = goblin__set_obj_card(*(const void *const *)a);
    size_t y = goblin__set_obj_card(*(const void *const *)b);

    return (x > y) - (x < y);
}

/* Looks every key up: sets[i] its object or NULL. 0, or WRONGTYPE. */
static int open_sets(goblin_store *st, const struct goblin_slice *keys,
                     size_t n, const void **sets, size_t *missing)
{
    void **slot;

    *missing = 0;
    for (size_t i = 0; i < n; i++) {
        int r = goblin__key_lookup(st, keys[i], GOBLIN_TYPE_SET, &slot);

        if (r < 0)
            return r;
        sets[i] = r == 1 ? *slot : NULL;
        *missing += r == 0;
    }
    return 0;
}

/* Builds the result of op over the keys into *out (NULL when empty).
 * limit != UINT64_MAX only counts (SINTER), into *count. */
static int compute(goblin_store *st, enum goblin_set_op op,
                   const struct goblin_slice *keys, size_t n, uint64_t limit,
                   void **out, uint64_t *count)
{
    size_t bytes = goblin__mul(n, sizeof(void *)), missing;
    struct builder *b;
    const void **sets;
    int r;

    *out = NULL;
    *count = 0;
    if (n == 0)
        return GOBLIN_EINVAL;
    if ((sets = goblin__alloc(st, bytes)) == NULL)
        return GOBLIN_ENOMEM;
    if ((b = goblin__alloc(st, sizeof(*b))) == NULL) {
        goblin__free(st, sets, bytes);
        return GOBLIN_ENOMEM;
    }
    b->st = st;
    b->obj = NULL;
    b->count = 0;
    b->sets = sets;
    b->nsets = n;
    b->op = op;
    b->limit = limit;
    b->k = 0;
    r = open_sets(st, keys, n, sets, &missing);
    if (r != 0 || (op == GOBLIN_SET_INTER && missing > 0) ||
        (op == GOBLIN_SET_DIFF && sets[0] == NULL))
        goto done;
    if (op == GOBLIN_SET_INTER)
        qsort(sets, n, sizeof(*sets), by_card);
    for (size_t i = 0; i < (op == GOBLIN_SET_UNION ? n : 1) && r == 0; i++) {
        if (sets[i] != NULL)
            r = (int)goblin__set_obj_foreach(sets[i], gather, b);
        r = r > 0 ? 0 : r;
    }
    if (r == 0)
        r = flush(b);
    if (r != 0) {
        goblin__set_free(st, b->obj);
        b->obj = NULL;
    }
done:
    *out = b->obj;
    *count = limit != UINT64_MAX ? b->count : goblin__set_obj_card(b->obj);
    goblin__free(st, b, sizeof(*b));
    goblin__free(st, sets, bytes);
    return r;
}

int64_t goblin_set_combine(goblin_store *st, enum goblin_set_op op,
                           const struct goblin_slice *keys, size_t nkeys,
                           goblin_set_begin begin, goblin_set_visit visit,
                           void *ctx)
{
    struct goblin__set_elem e;
    uint64_t card;
    void *obj;
    int64_t r = compute(st, op, keys, nkeys, UINT64_MAX, &obj, &card);

    if (r != 0)
        return r;
    if (begin != NULL && (r = begin(ctx, card)) != 0)
        goto done;
    for (uint64_t i = 0; obj != NULL && i < card; i++) {
        goblin__set_obj_at(obj, i, &e);
        if ((r = visit(ctx, e.s)) != 0)
            goto done;
    }
    r = (int64_t)card;
done:
    goblin__set_free(st, obj);
    return r;
}

int64_t goblin_set_combine_store(goblin_store *st, enum goblin_set_op op,
                                 struct goblin_slice dst,
                                 const struct goblin_slice *keys,
                                 size_t nkeys)
{
    uint64_t card;
    uint32_t id;
    void *obj;
    int r;

    goblin__write_begin(st);
    r = compute(st, op, keys, nkeys, UINT64_MAX, &obj, &card);
    st->reads = 0; /* the sources were read lookups, dst is not */
    if (r != 0)
        return r;
    if (obj == NULL || card == 0) {
        goblin__set_free(st, obj);
        if (goblin__key_find(st, dst, &id)) {
            goblin__key_delete_id(st, id);
            goblin__key_changed(st, dst);
        }
        return 0;
    }
    if ((r = goblin__key_replace(st, dst, GOBLIN_TYPE_SET, obj)) != 0) {
        goblin__set_free(st, obj);
        return r;
    }
    goblin__key_changed(st, dst);
    return (int64_t)card;
}

int64_t goblin_set_intercard(goblin_store *st,
                             const struct goblin_slice *keys, size_t nkeys,
                             uint64_t limit)
{
    uint64_t count;
    void *obj;
    int r = compute(st, GOBLIN_SET_INTER, keys, nkeys,
                    limit == 0 ? UINT64_MAX - 1 : limit, &obj, &count);

    return r != 0 ? r : (int64_t)count;
}

/* ---- SMOVE ---- */

int goblin_set_move(goblin_store *st, struct goblin_slice src,
                    struct goblin_slice dst, struct goblin_slice member)
{
    void **sslot, **dslot, *dobj = NULL, *next = NULL;
    uint64_t pos;
    size_t card;
    int rs, rd, r;

    goblin__write_begin(st);
    rs = goblin__key_lookup(st, src, GOBLIN_TYPE_SET, &sslot);
    if (rs == 0)
        return 0;
    rd = goblin__key_lookup(st, dst, GOBLIN_TYPE_SET, &dslot);
    if (rs < 0 || rd < 0)
        return GOBLIN_EWRONGTYPE;
    /* dst's lookup may have moved src's slot (a lazily expired key). */
    goblin__key_lookup(st, src, GOBLIN_TYPE_SET, &sslot);
    if (!goblin__set_obj_pos(st, *sslot, member, &pos))
        return 0;
    if (src.len == dst.len && memcmp(src.ptr, dst.ptr, src.len) == 0)
        return 1;
    /* What can fail comes first: src's new block (block forms), then
     * dst's add; only then is src changed, which cannot fail. */
    card = goblin__set_obj_card(*sslot);
    if (card > 1 &&
        (r = goblin__set_obj_without(st, *sslot, &pos, 1, &next)) != 0)
        return r;
    if (rd == 1)
        dobj = *dslot;
    r = goblin__set_obj_add(st, &dobj, &member, 1);
    if (r >= 0 && rd == 1) {
        *dslot = dobj;
    } else if (r >= 0 &&
               (r = goblin__key_add(st, dst, GOBLIN_TYPE_SET, dobj)) != 0) {
        goblin__set_free(st, dobj);
    }
    if (r < 0) {
        goblin__set_free(st, next);
        return r;
    }
    goblin__key_lookup(st, src, GOBLIN_TYPE_SET, &sslot);
    if (card == 1) {
        goblin__key_remove(st, src);
    } else if (next != NULL) {
        goblin__set_free(st, *sslot);
        *sslot = next;
    } else {
        goblin__set_obj_del_at(st, *sslot, pos);
    }
    goblin__key_changed(st, src);
    goblin__key_changed(st, dst);
    return 1;
}
