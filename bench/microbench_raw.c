/* microbench_raw.c - the internal-facing half of the microbenchmark: a
 * standalone sorted-set object, the ZRANGE breakdown structures (a member
 * arena and a B+tree built apart) and the command execute entry point,
 * behind the C interface of microbench_raw.h.
 *
 * Nothing here times anything; the harness does. Each reader returns a
 * checksum of what it read so no load can be optimised away.
 */
#include <stdlib.h>
#include <string.h>

#include "commands/command.h"
#include "microbench_raw.h"
#include "store/keyspace.h"
#include "store/store.h"
#include "store/zset.h"
#include "store/zset_arena.h"
#include "store/zset_tree.h"

/* ---- a standalone sorted-set object ---- */

struct mb_zset {
    goblin_store *st; /* owns the object's memory; holds no keys */
    void *obj;
};

int mb_zset_open(struct mb_zset **out)
{
    struct mb_zset *z = calloc(1, sizeof(*z));
    int rc;

    if (z == NULL)
        return GOBLIN_ENOMEM;
    if ((rc = goblin_store_open(NULL, &z->st)) != 0 ||
        (rc = goblin__zset_obj_new(z->st, &z->obj)) != 0) {
        goblin_store_close(z->st);
        free(z);
        return rc;
    }
    *out = z;
    return 0;
}

void mb_zset_close(struct mb_zset *z)
{
    if (z == NULL)
        return;
    goblin__zset_free(z->st, z->obj);
    goblin_store_close(z->st);
    free(z);
}

size_t mb_zset_bytes(const struct mb_zset *z)
{
    return goblin__zset_obj_bytes(z->obj);
}

size_t mb_zset_card(const struct mb_zset *z)
{
    return goblin__zset_obj_card(z->obj);
}

int mb_zset_add(struct mb_zset *z, struct goblin_slice member, double score)
{
    struct goblin_zpair p = { score, member };
    struct goblin__zadd_result res;
    int rc = goblin__zset_obj_add(z->st, &z->obj, 0, false, &p, 1, &res);

    return rc < 0 ? rc : (int)res.added;
}

int mb_zset_remove(struct mb_zset *z, struct goblin_slice member)
{
    return (int)goblin__zset_obj_remove(z->st, &z->obj, &member, 1);
}

int mb_zset_score(const struct mb_zset *z, struct goblin_slice member,
                  double *score)
{
    return goblin__zset_obj_score(z->obj, member, score);
}

int mb_zset_rank(const struct mb_zset *z, struct goblin_slice member,
                 int rev, int64_t *rank)
{
    size_t r;

    if (goblin__zset_obj_rank(z->obj, member, &r, NULL) == 0)
        return 0;
    *rank = rev ? (int64_t)(goblin__zset_obj_card(z->obj) - 1 - r)
                : (int64_t)r;
    return 1;
}

static uint64_t touch(struct goblin_slice m, double score)
{
    const unsigned char *p = m.ptr;
    uint64_t bits;

    memcpy(&bits, &score, sizeof(bits));
    if (m.len == 0)
        return bits;
    return bits ^ m.len ^ (uint64_t)p[0] << 8 ^ (uint64_t)p[m.len - 1] << 16;
}

uint64_t mb_zset_walk(const struct mb_zset *z, size_t start, size_t n)
{
    struct goblin__zset_walk w;
    struct goblin_slice m;
    double s;
    uint64_t sum = 0;

    goblin__zset_obj_walk(z->obj, start, n, false, &w);
    while (goblin__zset_walk_next(&w, &m, &s))
        sum += touch(m, s);
    return sum;
}

size_t mb_zset_rank_of_score(const struct mb_zset *z, double s)
{
    return goblin__zset_obj_rank_score(z->obj, s, false);
}

/* ---- the ZRANGE breakdown ---- */

struct mb_split {
    goblin_store *st;
    struct zarena ar;
    struct ztree tree;
    uint32_t *rank_id;  /* id at each rank */
    double *rank_score; /* score at each rank */
    size_t n;
};

static const struct zarena *sort_arena; /* qsort has no context argument */

static int cmp_rank(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    double sx = za_score(sort_arena, x), sy = za_score(sort_arena, y);

    if (sx != sy)
        return sx < sy ? -1 : 1;
    return za_cmp_ids(sort_arena, x, y);
}

static int split_fill(struct mb_split *sp, const struct goblin_zpair *pairs)
{
    int rc;

    for (size_t i = 0; i < sp->n; i++) {
        rc = goblin__za_append(sp->st, &sp->ar, pairs[i].member.ptr,
                       pairs[i].member.len, pairs[i].score, &sp->rank_id[i]);
        if (rc != 0)
            return rc;
    }
    sort_arena = &sp->ar;
    qsort(sp->rank_id, sp->n, sizeof(*sp->rank_id), cmp_rank);
    for (size_t i = 0; i < sp->n; i++)
        sp->rank_score[i] = za_score(&sp->ar, sp->rank_id[i]);
    return goblin__zt_build(sp->st, &sp->tree, sp->rank_score, sp->rank_id, sp->n);
}

int mb_split_open(const struct goblin_zpair *pairs, size_t n,
                  struct mb_split **out)
{
    struct mb_split *sp = calloc(1, sizeof(*sp));
    int rc = GOBLIN_ENOMEM;

    if (sp == NULL)
        return rc;
    sp->n = n;
    goblin__za_init(&sp->ar);
    goblin__zt_init(&sp->tree, &sp->ar);
    sp->rank_id = malloc((n ? n : 1) * sizeof(*sp->rank_id));
    sp->rank_score = malloc((n ? n : 1) * sizeof(*sp->rank_score));
    if (sp->rank_id == NULL || sp->rank_score == NULL ||
        (rc = goblin_store_open(NULL, &sp->st)) != 0 ||
        (rc = split_fill(sp, pairs)) != 0) {
        mb_split_close(sp);
        return rc;
    }
    *out = sp;
    return 0;
}

void mb_split_close(struct mb_split *sp)
{
    if (sp == NULL)
        return;
    if (sp->st != NULL) {
        goblin__zt_free(sp->st, &sp->tree);
        goblin__za_free(sp->st, &sp->ar);
        goblin_store_close(sp->st);
    }
    free(sp->rank_id);
    free(sp->rank_score);
    free(sp);
}

uint32_t mb_split_id_at(const struct mb_split *sp, size_t rank)
{
    return sp->rank_id[rank];
}

double mb_split_score_at(const struct mb_split *sp, size_t rank)
{
    return sp->rank_score[rank];
}

uint64_t mb_split_traverse(const struct mb_split *sp, size_t start,
                           size_t n)
{
    struct zt_path p;
    uint64_t sum = 0, bits;
    uint32_t id;
    double s;

    goblin__zt_seek(&sp->tree, start, &p);
    for (size_t i = 0; i < n; i++) {
        zt_get(&sp->tree, &p, &s, &id);
        memcpy(&bits, &s, sizeof(bits));
        sum += bits ^ id;
        if (i + 1 < n)
            goblin__zt_next(&sp->tree, &p);
    }
    return sum;
}

struct goblin_slice mb_split_member(const struct mb_split *sp, uint32_t id)
{
    struct goblin_slice m;

    m.ptr = za_member(&sp->ar, id, &m.len);
    return m;
}

uint64_t mb_split_members(const struct mb_split *sp, const uint32_t *ids,
                          size_t n)
{
    uint64_t sum = 0;

    for (size_t i = 0; i < n; i++)
        sum += touch(mb_split_member(sp, ids[i]), 0.0);
    return sum;
}

void mb_split_resp_members(const struct mb_split *sp, const uint32_t *ids,
                           size_t n, struct goblin_sink *out)
{
    out->ops->array(out, n);
    for (size_t i = 0; i < n; i++) {
        struct goblin_slice m = mb_split_member(sp, ids[i]);

        out->ops->bulk(out, m.ptr, m.len);
    }
}

void mb_split_resp_withscores(const struct mb_split *sp, const uint32_t *ids,
                              size_t n, struct goblin_sink *out)
{
    out->ops->array(out, 2 * n);
    for (size_t i = 0; i < n; i++) {
        const uint8_t *r = za_rec(&sp->ar, ids[i]);
        size_t len, at;
        const uint8_t *m = za_decode(r, &len, &at);
        double score;

        memcpy(&score, r + at, sizeof(score));
        out->ops->bulk_dbl(out, m, len, score);
    }
}

/* ---- the command layer ---- */

int mb_command_execute(goblin_session *s, int argc,
                       const struct goblin_slice *argv,
                       struct goblin_sink *sink)
{
    return goblin__command_execute(s, argc, argv, sink);
}
