/* rdb_set.c - RDB import of sets, in the three encodings Redis writes
 * them in: RDB_TYPE_SET (2: a count, then the members as strings; a
 * hashtable set), RDB_TYPE_SET_INTSET (11: an intset blob) and
 * RDB_TYPE_SET_LISTPACK (20: a listpack blob, Redis 7.2's small sets).
 *
 * Members go into a set object as they are read, so it takes the form
 * the store would give them (an intset for at most 512 integers, ...).
 * A member given twice, an intset not strictly ascending or of an
 * unknown width, or a blob whose size disagrees with its header is
 * GOBLIN_ESNAPFORMAT, as Redis's own integrity checks refuse them.
 */
#include <string.h>

#include "goblin/numtext.h"
#include "rdb.h"
#include "store/set.h"

struct adder {
    goblin_store *st;
    void *obj;
    uint64_t added;
};

static int add_one(void *ctx, struct goblin_slice m)
{
    struct adder *a = ctx;
    int r = goblin__set_obj_add(a->st, &a->obj, &m, 1);

    if (r < 0)
        return r;
    a->added += (uint64_t)r;
    return 0;
}

static int64_t get_le(const uint8_t *p, unsigned w)
{
    uint64_t v = 0;

    for (unsigned i = 0; i < w; i++)
        v |= (uint64_t)p[i] << (8 * i);
    if (w < 8 && (v >> (8 * w - 1)) & 1u)
        v |= ~(uint64_t)0 << (8 * w); /* sign-extend */
    return (int64_t)v;
}

/* An intset blob: u32 width, u32 count, count little-endian values. */
static int intset_blob(struct adder *a, struct goblin_slice b, uint64_t *n)
{
    const uint8_t *p = b.ptr;
    char txt[GOBLIN_INT64_TEXT_MAX];
    uint32_t w, cnt;
    int64_t prev = 0;

    if (b.len < 8)
        return GOBLIN_ESNAPFORMAT;
    w = (uint32_t)get_le(p, 4) & 0xFFFFFFFFu;
    cnt = (uint32_t)((uint64_t)get_le(p + 4, 4) & 0xFFFFFFFFu);
    if ((w != 2 && w != 4 && w != 8) || (uint64_t)cnt * w != b.len - 8)
        return GOBLIN_ESNAPFORMAT;
    *n = cnt;
    for (uint32_t i = 0; i < cnt; i++) {
        int64_t v = get_le(p + 8 + (size_t)i * w, w);
        struct goblin_slice m = {txt, 0};
        int r;

        if (i > 0 && v <= prev)
            return GOBLIN_ESNAPFORMAT;
        prev = v;
        m.len = goblin_int64_format(txt, v);
        if (a->st != NULL && (r = add_one(a, m)) != 0)
            return r;
    }
    return 0;
}

int goblin__rdb_set(struct goblin__rdb *r, goblin_store *st, unsigned t,
                    void **out, uint64_t *n)
{
    struct adder a = {st, NULL, 0};
    uint64_t off = goblin__rdb_off(r);
    struct goblin_slice s;
    int64_t cnt;
    int rc;

    *out = NULL;
    *n = 0;
    if (t == RDB_TYPE_SET) {
        if ((rc = goblin__rdb_len(r, n, NULL)) != 0)
            return rc;
        if (*n > goblin__rdb_left(r) || *n >= UINT32_MAX)
            return goblin__rdb_fail(r, GOBLIN_ESNAPFORMAT, off,
                                    "element count larger than the file");
        for (uint64_t i = 0; i < *n; i++) {
            if ((rc = goblin__rdb_string(r, &s)) != 0 ||
                (st != NULL && (rc = add_one(&a, s)) != 0))
                goto fail;
        }
    } else {
        if ((rc = goblin__rdb_string(r, &s)) != 0)
            return rc;
        if (t == RDB_TYPE_SET_INTSET) {
            rc = intset_blob(&a, s, n);
        } else {
            cnt = goblin__rdb_listpack(s.ptr, s.len, NULL, NULL);
            rc = cnt < 0 ? (int)cnt : 0;
            *n = cnt < 0 ? 0 : (uint64_t)cnt;
            if (rc == 0 && st != NULL)
                rc = (int)goblin__rdb_listpack(s.ptr, s.len, add_one, &a);
            rc = rc < 0 ? rc : 0;
        }
        if (rc != 0)
            goto fail;
    }
    if (st != NULL && a.added != *n) {
        rc = GOBLIN_ESNAPFORMAT; /* a member given twice */
        goto fail;
    }
    *out = a.obj;
    return 0;
fail:
    goblin__set_free(st, a.obj);
    return rc;
}
