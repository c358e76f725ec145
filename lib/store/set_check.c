/* set_check.c - the invariants of a set object, for tests and fuzz
 * targets (goblin__store_check): an intset is sorted, distinct, within
 * its limit and wide enough for its values (as in Redis, the width never
 * narrows); a big integer set's chunks
 * are sorted and agree with their minimums and the count; a hash form
 * holds only empty values and passes the hash checks.
 */
#include "hash.h"
#include "hash_impl.h"
#include "set.h"

static int check_intset(const struct goblin__intset *is)
{
    if (is->n == 0 || is->n > GOBLIN__SET_INTSET_MAX)
        return -1;
    for (size_t i = 0; i < is->n; i++) {
        int64_t v = goblin__intset_get(is, i);

        if (goblin__iset_width(v) > is->width)
            return -2;
        if (i > 0 && goblin__intset_get(is, i - 1) >= v)
            return -3;
    }
    return 0;
}

static int check_bigint(const struct goblin__bigint *b)
{
    uint64_t total = 0;
    bool first = true;
    int64_t prev = 0;

    for (uint32_t c = 0; c < b->nchunks; c++) {
        const struct goblin__bigint_chunk *ch = &b->chunks[c];

        if (ch->n == 0 || ch->n > ch->cap)
            return -11;
        if (goblin__bigint_chunk_get(b, c, 0) != ch->min)
            return -12;
        for (uint32_t j = 0; j < ch->n; j++) {
            int64_t v = goblin__bigint_chunk_get(b, c, j);

            if (!first && v <= prev)
                return -13;
            first = false;
            prev = v;
        }
        total += ch->n;
    }
    return total == b->n && b->n > 0 ? 0 : -14;
}

static int no_value(void *ctx, struct goblin_slice f, struct goblin_slice v)
{
    (void)ctx;
    (void)f;
    return v.len == 0 ? 0 : -21;
}

int goblin__set_obj_check(const goblin_store *st, const void *obj)
{
    int64_t r;

    switch (goblin__set_form(obj)) {
    case GOBLIN__SET_INTSET:
        return check_intset(goblin__set_ptr(obj));
    case GOBLIN__SET_BIGINT:
        return check_bigint(goblin__set_ptr(obj));
    default:
        if (goblin__hash_obj_len(obj) == 0)
            return -20;
        r = goblin__hash_obj_foreach(obj, no_value, NULL);
        if (r < 0)
            return (int)r;
        return goblin__hash_obj_check(st, obj);
    }
}
