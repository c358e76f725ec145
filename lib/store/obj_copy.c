/* obj_copy.c - deep copies of hash and sorted-set objects, into any store
 * (COPY, MOVE between databases, RESTORE's tests): the pairs are gathered
 * as views of the source, then built in the destination store in the
 * form their count and sizes call for, as a load builds them.
 *
 * The views are borrowed from the source object, which the copy does
 * not change; the gathering array comes from the destination store's
 * allocator and is freed before returning.
 */
#include "hash.h"
#include "keyspace.h"
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
