/* rdb_list.c - Redis lists in an RDB file, in each encoding Redis has
 * written: a linked list (type 1: a count, then strings), a ziplist
 * (type 10), a quicklist of ziplists (type 14) and, from Redis 7.0, a
 * quicklist of nodes that are each a listpack or one plain element
 * (type 18: per node a container, 1 plain or 2 packed, then a string).
 *
 * Elements are pushed at the tail as they are read (the store copies
 * them), so nothing but the list itself is allocated. Node and element
 * counts are checked against the bytes left in the file before they are
 * trusted. An empty list is dropped, as Redis drops it.
 */
#include "rdb.h"
#include "store/list.h"

#define QUICKLIST_NODE_PLAIN 1
#define QUICKLIST_NODE_PACKED 2

struct lbuild {
    goblin_store *st;
    void *obj;
    bool skip;
};

static int push_elem(void *ctx, struct goblin_slice e)
{
    struct lbuild *b = ctx;

    if (b->skip)
        return 0;
    return goblin__list_obj_push(b->st, &b->obj, GOBLIN_LIST_TAIL, &e, 1);
}

/* One packed blob: a ziplist or a listpack. */
static int packed(struct goblin__rdb *r, struct lbuild *b, bool listpack)
{
    struct goblin_slice blob;
    int64_t n;
    int rc = goblin__rdb_string(r, &blob);

    if (rc != 0)
        return rc;
    n = listpack ? goblin__rdb_listpack(blob.ptr, blob.len, NULL, NULL)
                 : goblin__rdb_ziplist(blob.ptr, blob.len, NULL, NULL);
    if (n < 0)
        return GOBLIN_ESNAPFORMAT;
    n = listpack ? goblin__rdb_listpack(blob.ptr, blob.len, push_elem, b)
                 : goblin__rdb_ziplist(blob.ptr, blob.len, push_elem, b);
    return n < 0 ? (int)n : 0;
}

static int read_list(struct goblin__rdb *r, unsigned t, struct lbuild *b)
{
    uint64_t off = goblin__rdb_off(r), n, container;
    struct goblin_slice s;
    int rc;

    if (t == RDB_TYPE_LIST_ZIPLIST)
        return packed(r, b, false);
    if ((rc = goblin__rdb_len(r, &n, NULL)) != 0)
        return rc;
    if (n > goblin__rdb_left(r))
        return goblin__rdb_fail(r, GOBLIN_ESNAPFORMAT, off,
                                "element count larger than the file");
    for (uint64_t i = 0; i < n; i++) {
        if (t == RDB_TYPE_LIST_QUICKLIST) {
            rc = packed(r, b, false);
        } else if (t == RDB_TYPE_LIST) {
            if ((rc = goblin__rdb_string(r, &s)) == 0)
                rc = push_elem(b, s);
        } else {
            if ((rc = goblin__rdb_len(r, &container, NULL)) != 0)
                return rc;
            if (container == QUICKLIST_NODE_PACKED) {
                rc = packed(r, b, true);
            } else if (container == QUICKLIST_NODE_PLAIN) {
                if ((rc = goblin__rdb_string(r, &s)) == 0)
                    rc = push_elem(b, s);
            } else {
                return goblin__rdb_fail(r, GOBLIN_ESNAPFORMAT,
                                        goblin__rdb_off(r),
                                        "bad quicklist node container");
            }
        }
        if (rc != 0)
            return rc;
    }
    return 0;
}

int goblin__rdb_list(struct goblin__rdb *r, goblin_store *st, unsigned t,
                     struct goblin_slice key, int64_t deadline, bool skip,
                     bool *stored)
{
    struct lbuild b = {st, NULL, skip};
    int rc = read_list(r, t, &b);

    *stored = false;
    if (rc != 0 || b.obj == NULL) {
        goblin__list_free(st, b.obj);
        return rc;
    }
    rc = goblin__snap_put_obj(st, key, GOBLIN_TYPE_LIST, b.obj, deadline);
    *stored = rc == 0;
    return rc;
}
