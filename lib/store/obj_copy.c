/* obj_copy.c - deep copies of hash, sorted-set, list and set objects,
 * into any store (COPY, MOVE between databases, RESTORE): the pairs or
 * elements are gathered as views of the source, then built in the
 * destination store in the form their count and sizes call for, as a
 * load builds them. The integer forms of a set are copied as they are:
 * a large integer set that shrank under the intset limit stays the
 * hashtable Redis would still hold (Redis's COPY keeps the encoding).
 *
 * The views are borrowed from the source object, which the copy does
 * not change; the gathering array comes from the destination store's
 * allocator and is freed before returning.
 */
#include <string.h>

#include "hash.h"
#include "hash_ttl.h"
#include "keyspace.h"
#include "list.h"
#include "set.h"
#include "store.h"
#include "zset.h"

struct gather {
    struct goblin_slice *fv;
    struct goblin_zpair *zp;
    size_t n;
};

static int hash_pair(void *ctx, struct goblin_slice f, struct goblin_slice v)
{
    struct gather *g = ctx;

    g->fv[2 * g->n] = f;
    g->fv[2 * g->n + 1] = v;
    g->n++;
    return 0;
}

int goblin__hash_obj_copy(goblin_store *dst, const void *obj, void **out)
{
    size_t n = goblin__hash_obj_len(obj);
    size_t bytes = goblin__mul(2 * n, sizeof(struct goblin_slice));
    struct gather g = {NULL, NULL, 0};
    int rc;

    if (n > SIZE_MAX / 2 || (g.fv = goblin__alloc(dst, bytes)) == NULL)
        return GOBLIN_ENOMEM;
    goblin__hash_obj_foreach(obj, hash_pair, &g);
    rc = goblin__hash_obj_from_pairs(dst, g.fv, g.n, out);
    goblin__free(dst, g.fv, bytes);
    /* The field deadlines go along (COPY, MOVE and RENAME keep them). */
    if (rc == 0 && goblin__httl_copy(dst, out, obj) != 0) {
        goblin__hash_free(dst, *out);
        return GOBLIN_ENOMEM;
    }
    return rc;
}

static int zset_pair(void *ctx, struct goblin_slice m, double score)
{
    struct gather *g = ctx;

    g->zp[g->n].member = m;
    g->zp[g->n].score = score;
    g->n++;
    return 0;
}

int goblin__zset_obj_copy(goblin_store *dst, const void *obj, void **out)
{
    size_t n = goblin__zset_obj_card(obj);
    size_t bytes = goblin__mul(n, sizeof(struct goblin_zpair));
    struct gather g = {NULL, NULL, 0};
    int rc;

    if ((g.zp = goblin__alloc(dst, bytes)) == NULL)
        return GOBLIN_ENOMEM;
    goblin__zset_obj_foreach(obj, zset_pair, &g);
    rc = goblin__zset_obj_from_sorted(dst, g.zp, g.n, out);
    goblin__free(dst, g.zp, bytes);
    return rc;
}

int goblin__list_obj_copy(goblin_store *dst, const void *obj, void **out)
{
    size_t n = goblin__list_obj_len(obj);
    size_t bytes = goblin__mul(n, sizeof(struct goblin_slice));
    struct goblin__list_iter it;
    struct goblin_slice *e;
    size_t i = 0;
    void *copy = NULL;
    int rc;

    if ((e = goblin__alloc(dst, bytes)) == NULL)
        return GOBLIN_ENOMEM;
    goblin__list_iter_init(&it, obj, 0, false);
    while (i < n && goblin__list_iter_next(&it, &e[i]))
        i++;
    rc = goblin__list_obj_push(dst, &copy, GOBLIN_LIST_TAIL, e, i);
    goblin__free(dst, e, bytes);
    if (rc != 0) {
        goblin__list_free(dst, copy); /* a failed push may leave it empty */
        return rc;
    }
    *out = copy;
    return 0;
}

static int set_member(void *ctx, const struct goblin__set_elem *e)
{
    struct gather *g = ctx;

    g->fv[g->n++] = e->s; /* the hash forms' members are borrowed views */
    return 0;
}

static int intset_copy(goblin_store *dst, const struct goblin__intset *is,
                       void **out)
{
    size_t bytes = goblin__intset_bytes(is);
    struct goblin__intset *c = goblin__alloc(dst, bytes);

    if (c == NULL)
        return GOBLIN_ENOMEM;
    memcpy(c, is, bytes);
    *out = goblin__set_tag(c, GOBLIN__SET_INTSET);
    return 0;
}

static int bigint_copy(goblin_store *dst, const struct goblin__bigint *b,
                       void **out)
{
    struct goblin__bigint *c = goblin__alloc(dst, sizeof(*c));
    size_t dir = (size_t)b->chunks_cap * sizeof(*b->chunks);

    if (c == NULL)
        return GOBLIN_ENOMEM;
    *c = *b;
    c->nchunks = 0;
    if ((c->chunks = goblin__alloc(dst, dir)) == NULL) {
        goblin__free(dst, c, sizeof(*c));
        return GOBLIN_ENOMEM;
    }
    for (uint32_t i = 0; i < b->nchunks; i++) {
        size_t cb = (size_t)b->chunks[i].cap * b->width;

        c->chunks[i] = b->chunks[i];
        if ((c->chunks[i].p = goblin__alloc(dst, cb)) == NULL) {
            goblin__bigint_free(dst, c); /* frees the nchunks copied */
            return GOBLIN_ENOMEM;
        }
        memcpy(c->chunks[i].p, b->chunks[i].p, cb);
        c->nchunks++;
    }
    *out = goblin__set_tag(c, GOBLIN__SET_BIGINT);
    return 0;
}

int goblin__set_obj_copy(goblin_store *dst, const void *obj, void **out)
{
    size_t n = goblin__set_obj_card(obj);
    size_t bytes = goblin__mul(n, sizeof(struct goblin_slice));
    struct gather g = {NULL, NULL, 0};
    void *copy = NULL;
    int rc;

    if (goblin__set_form(obj) == GOBLIN__SET_INTSET)
        return intset_copy(dst, goblin__set_ptr(obj), out);
    if (goblin__set_form(obj) == GOBLIN__SET_BIGINT)
        return bigint_copy(dst, goblin__set_ptr(obj), out);
    if ((g.fv = goblin__alloc(dst, bytes)) == NULL)
        return GOBLIN_ENOMEM;
    goblin__set_obj_foreach(obj, set_member, &g);
    rc = goblin__set_obj_add(dst, &copy, g.fv, g.n);
    goblin__free(dst, g.fv, bytes);
    if (rc < 0)
        return rc;
    *out = copy;
    return 0;
}
