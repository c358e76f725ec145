/* zset_obj.c - sorted-set objects in either form: lookups, ZADD planning
 * and applying, removal, conversions between the forms, walks.
 *
 * ZADD runs in two steps. Planning reads only: pairs are grouped by member
 * (a stable sort, so a member given twice is seen in argument order), each
 * group is played against the member's current score under the flags, and
 * what is left is one change per member that really changes. Applying then
 * makes all the changes or none (goblin__zf_apply, goblin__zc_apply), converting a compact
 * object to the full form first if the result needs it.
 */
#include <assert.h>

#include "zset_impl.h"

static inline uint8_t kind_of(const void *obj)
{
    return *(const uint8_t *)obj;
}

int goblin__zset_obj_new(goblin_store *st, void **out)
{
    void *obj = goblin__zc_new(st, ZC_HDR);

    if (obj == NULL)
        return GOBLIN_ENOMEM;
    *out = obj;
    return 0;
}

void goblin__zset_free(goblin_store *st, void *obj)
{
    if (obj == NULL)
        return;
    if (kind_of(obj) == ZK_COMPACT)
        goblin__zc_free(st, obj);
    else
        goblin__zf_free(st, obj);
}

const char *goblin__zset_encoding(const void *obj)
{
    return kind_of(obj) == ZK_COMPACT && !zc_keeps_sign(obj) ? "listpack"
                                                              : "skiplist";
}

size_t goblin__zset_obj_card(const void *obj)
{
    if (kind_of(obj) == ZK_COMPACT)
        return zc_hdr(obj)->count;
    return ((const struct zfull *)obj)->tree.count;
}

size_t goblin__zset_obj_bytes(const void *obj)
{
    if (kind_of(obj) == ZK_COMPACT)
        return zc_hdr(obj)->cap;
    return goblin__zf_bytes(obj);
}

/* Finds a member: 1 with its score (and id when full), or 0. */
static int lookup(const void *obj, const void *m, size_t len, double *score,
                  uint32_t *id)
{
    if (kind_of(obj) == ZK_COMPACT) {
        struct zc_ent e;

        if (!goblin__zc_find(obj, m, len, &e, NULL))
            return 0;
        *score = e.score;
        return 1;
    } else {
        const struct zfull *z = obj;

        if (!zf_find(z, m, len, id))
            return 0;
        *score = za_score(&z->ar, *id);
        return 1;
    }
}

int goblin__zset_obj_score(const void *obj, struct goblin_slice member,
                           double *score)
{
    uint32_t id;

    return lookup(obj, member.ptr, member.len, score, &id);
}

int goblin__zset_obj_rank(const void *obj, struct goblin_slice member,
                          size_t *rank, double *score)
{
    if (kind_of(obj) == ZK_COMPACT) {
        struct zc_ent e;

        if (!goblin__zc_find(obj, member.ptr, member.len, &e, rank))
            return 0;
        if (score != NULL)
            *score = e.score;
        return 1;
    } else {
        const struct zfull *z = obj;
        uint32_t id;
        double s;

        if (!zf_find(z, member.ptr, member.len, &id))
            return 0;
        s = za_score(&z->ar, id);
        *rank = goblin__zt_rank(&z->tree, s, id);
        if (score != NULL)
            *score = s;
        return 1;
    }
}

size_t goblin__zset_obj_rank_score(const void *obj, double s, bool excl)
{
    if (kind_of(obj) == ZK_COMPACT)
        return goblin__zc_rank_score(obj, s, excl);
    return goblin__zt_rank_score(&((const struct zfull *)obj)->tree, s, excl);
}

size_t goblin__zset_obj_rank_lex(const void *obj, struct goblin_slice m,
                                 bool excl)
{
    if (kind_of(obj) == ZK_COMPACT)
        return goblin__zc_rank_lex(obj, m.ptr, m.len, excl);
    return goblin__zt_rank_lex(&((const struct zfull *)obj)->tree, m.ptr, m.len,
                       excl);
}

/* ---- ZADD planning ---- */

static int slice_cmp(struct goblin_slice a, struct goblin_slice b)
{
    return goblin__bytes_cmp(a.ptr, a.len, b.ptr, b.len);
}

/* Pairs up to this many are sorted by insertion, and planned in
 * space on the stack. */
#define SMALL_ZADD 16

/* Stable sort of pair indexes by member bytes: insertion for a few (no
 * more compares than a merge sort's for members already in order, the
 * usual case), merge otherwise. */
static void sort_by_member(const struct goblin_zpair *pairs, uint32_t *ix,
                           uint32_t *tmp, size_t n)
{
    if (n <= SMALL_ZADD) {
        for (size_t i = 1; i < n; i++) {
            uint32_t v = ix[i];
            size_t j = i;

            for (; j > 0 && slice_cmp(pairs[ix[j - 1]].member,
                                      pairs[v].member) > 0;
                 j--)
                ix[j] = ix[j - 1];
            ix[j] = v;
        }
        return;
    }
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n;
            size_t hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t a = lo, b = mid, k = lo;

            while (a < mid && b < hi) {
                if (slice_cmp(pairs[ix[b]].member, pairs[ix[a]].member) < 0)
                    tmp[k++] = ix[b++];
                else
                    tmp[k++] = ix[a++];
            }
            while (a < mid)
                tmp[k++] = ix[a++];
            while (b < hi)
                tmp[k++] = ix[b++];
        }
        memcpy(ix, tmp, n * sizeof(*ix));
    }
}

/* Plays one pair against a member's state, as Redis's zsetAdd. */
static int play(unsigned flags, bool incr, bool *exists, double *cur,
                double score, struct goblin__zadd_result *res)
{
    double ns;

    if (!*exists) {
        if (flags & GOBLIN_ZADD_XX)
            return 0;
        *exists = true;
        *cur = score;
        res->added++;
        res->processed = 1;
        res->score = score;
        return 0;
    }
    if (flags & GOBLIN_ZADD_NX)
        return 0;
    ns = incr ? *cur + score : score;
    if (isnan(ns))
        return GOBLIN_ENAN;
    if (((flags & GOBLIN_ZADD_GT) && ns <= *cur) ||
        ((flags & GOBLIN_ZADD_LT) && ns >= *cur))
        return 0;
    res->processed = 1;
    res->score = ns;
    if (ns != *cur) {
        *cur = ns;
        res->updated++;
    }
    return 0;
}

/* A compact set's members and scores, decoded once for a ZADD of
 * several members, each with its first 8 bytes as a word: a lookup then
 * compares a length and a word per entry (all of a member of up to 8
 * bytes), not decoding every entry it passes. */
struct zc_table {
    size_t n;
    struct zc_ent e[GOBLIN__ZSET_COMPACT_MAX_ENTRIES];
    uint64_t head[GOBLIN__ZSET_COMPACT_MAX_ENTRIES];
};

static uint64_t head_of(const void *m, size_t len)
{
    uint64_t w = 0;

    memcpy(&w, m, len < 8 ? len : 8);
    return w;
}

static void table_fill(const void *obj, struct zc_table *t)
{
    const uint8_t *p = zc_first(obj), *end = zc_end(obj);

    for (t->n = 0; p < end; p += t->e[t->n++].size) {
        zc_decode(p, &t->e[t->n]);
        t->head[t->n] = head_of(t->e[t->n].m, t->e[t->n].len);
    }
}

static bool table_lookup(const struct zc_table *t, struct goblin_slice m,
                         double *score)
{
    uint64_t head = head_of(m.ptr, m.len);

    for (size_t i = 0; i < t->n; i++) {
        if (t->head[i] == head && t->e[i].len == m.len &&
            (m.len <= 8 ||
             memcmp(t->e[i].m + 8, (const uint8_t *)m.ptr + 8, m.len - 8) ==
                 0)) {
            *score = t->e[i].score;
            return true;
        }
    }
    return false;
}

/* Plays a group of pairs (indexes ix[0, g)) for one member and records
 * the change it makes, if any, at *c. Returns 1 if it did, 0, or an
 * error. */
static int plan_group(const void *obj, const struct zc_table *t,
                      unsigned flags, bool incr,
                      const struct goblin_zpair *pairs, const uint32_t *ix,
                      size_t g, struct zchange *c,
                      struct goblin__zadd_result *res)
{
    struct goblin_slice m = pairs[ix[0]].member;
    double old = 0, cur;
    uint32_t id = 0;
    bool was = t != NULL ? table_lookup(t, m, &old)
                         : lookup(obj, m.ptr, m.len, &old, &id),
         now = was;
    int rc;

    cur = old;
    for (size_t i = 0; i < g; i++) {
        if ((rc = play(flags, incr, &now, &cur, pairs[ix[i]].score, res)) != 0)
            return rc;
    }
    if (!now || (was && cur == old))
        return 0;
    c->m = m.ptr;
    c->len = m.len;
    c->old = old;
    c->score = cur;
    c->exists = was;
    c->id = id;
    return 1;
}

/* Applies changes to *objp, converting it to the full form if needed. */
static int apply(goblin_store *st, void **objp, struct zchange *c, size_t n)
{
    struct zfull *z;
    size_t final = goblin__zset_obj_card(*objp);
    bool big = false;
    int rc;

    if (kind_of(*objp) == ZK_FULL) {
        rc = goblin__zf_apply(st, *objp, c, n);
        if (rc == 0)
            goblin__zf_clean_step(st, *objp);
        return rc;
    }
    for (size_t i = 0; i < n; i++) {
        final += !c[i].exists;
        big |= c[i].len > GOBLIN__ZSET_COMPACT_MAX_VALUE;
    }
    if (final <= GOBLIN__ZSET_COMPACT_MAX_ENTRIES && !big)
        return goblin__zc_apply(st, objp, c, n);
    if ((rc = goblin__zc_to_full(st, *objp, &z)) != 0)
        return rc;
    for (size_t i = 0; i < n; i++) {
        if (c[i].exists && !zf_find(z, c[i].m, c[i].len, &c[i].id))
            assert(!"member lost in conversion");
    }
    if ((rc = goblin__zf_apply(st, z, c, n)) != 0) {
        goblin__zf_free(st, z);
        return rc;
    }
    goblin__zc_free(st, *objp);
    *objp = z;
    return 0;
}

int goblin__zset_obj_add(goblin_store *st, void **objp, unsigned flags,
                         bool incr, const struct goblin_zpair *pairs,
                         size_t n, struct goblin__zadd_result *res)
{
    struct zchange small_c[SMALL_ZADD], *c = small_c;
    struct zc_table table, *t = NULL;
    uint32_t small_ix[SMALL_ZADD], *ix = small_ix, *tmp = NULL;
    size_t k = 0, bytes = 0;
    int rc = 0;

    memset(res, 0, sizeof(*res));
    if (n > SMALL_ZADD) {
        bytes = goblin__mul(n, 2 * sizeof(uint32_t) + sizeof(*c));
        if (n > UINT32_MAX || (ix = goblin__alloc(st, bytes)) == NULL)
            return GOBLIN_ENOMEM;
        tmp = ix + n;
        c = (struct zchange *)(void *)(tmp + n);
    }
    for (size_t i = 0; i < n; i++)
        ix[i] = (uint32_t)i;
    if (n > 1)
        sort_by_member(pairs, ix, tmp, n);
    if (n > 1 && kind_of(*objp) == ZK_COMPACT) {
        table_fill(*objp, &table);
        t = &table;
    }
    for (size_t i = 0, g; i < n; i += g) {
        for (g = 1; i + g < n; g++)
            if (slice_cmp(pairs[ix[i]].member, pairs[ix[i + g]].member) != 0)
                break;
        rc = plan_group(*objp, t, flags, incr, pairs, ix + i, g, &c[k],
                        res);
        if (rc < 0)
            goto out;
        k += (size_t)rc;
        rc = 0;
    }
    if (k > 0)
        rc = apply(st, objp, c, k);
out:
    if (n > SMALL_ZADD)
        goblin__free(st, ix, bytes);
    return rc;
}

/* ---- removal ---- */

/* A full set small enough again turns compact (if memory allows). */
static void maybe_compact(goblin_store *st, void **objp)
{
    struct zfull *z = *objp;
    void *c = NULL;

    if (kind_of(z) != ZK_FULL) {
        goblin__zc_shrink(st, objp);
        return;
    }
    if (z->tree.count > 0 && goblin__zf_to_compact(st, z, &c) == 0 && c != NULL) {
        goblin__zf_free(st, z);
        *objp = c;
        return;
    }
    goblin__zf_clean_step(st, z);
}

size_t goblin__zset_obj_remove(goblin_store *st, void **objp,
                               const struct goblin_slice *members, size_t n)
{
    size_t removed = 0;

    for (size_t i = 0; i < n; i++) {
        const void *m = members[i].ptr;
        size_t len = members[i].len, r;
        uint32_t id;

        if (kind_of(*objp) == ZK_COMPACT) {
            if (goblin__zc_find(*objp, m, len, NULL, &r)) {
                goblin__zc_delete(*objp, r, 1);
                removed++;
            }
        } else if (zf_find(*objp, m, len, &id)) {
            goblin__zf_remove(st, *objp, id);
            removed++;
        }
    }
    if (removed > 0)
        maybe_compact(st, objp);
    return removed;
}

void goblin__zset_obj_remove_ranks(goblin_store *st, void **objp,
                                   size_t from, size_t n)
{
    if (n == 0)
        return;
    if (kind_of(*objp) == ZK_COMPACT)
        goblin__zc_delete(*objp, from, n);
    else
        goblin__zf_remove_range(st, *objp, from, n);
    maybe_compact(st, objp);
}

int goblin__zf_to_compact(goblin_store *st, const struct zfull *z, void **out)
{
    const struct ztree *t = &z->tree;
    size_t need = ZC_HDR;
    struct zt_path p;
    void *obj;

    *out = NULL;
    if (t->count > GOBLIN__ZSET_COMPACT_DOWN || t->count == 0)
        return 0;
    goblin__zt_seek(t, 0, &p);
    do {
        double s;
        uint32_t id;
        size_t len;

        zt_get(t, &p, &s, &id);
        za_member(&z->ar, id, &len);
        if (len > GOBLIN__ZSET_COMPACT_MAX_VALUE)
            return 0;
        need += goblin__zc_entry_size(len, s, ZC_F_SKIPLIST);
    } while (goblin__zt_next(t, &p));
    if ((obj = goblin__zc_new(st, need)) == NULL)
        return GOBLIN_ENOMEM;
    ((struct zc_hdr *)obj)->flags = ZC_F_SKIPLIST; /* Redis keeps it one */
    goblin__zt_seek(t, 0, &p);
    do {
        double s;
        uint32_t id;
        size_t len;
        const uint8_t *m;

        zt_get(t, &p, &s, &id);
        m = za_member(&z->ar, id, &len);
        goblin__zc_insert(obj, m, len, s); /* appends: every entry is larger */
    } while (goblin__zt_next(t, &p));
    *out = obj;
    return 0;
}

/* ---- building ---- */

static int check_sorted(const struct goblin_zpair *pairs, size_t n,
                        bool *compact)
{
    *compact = n <= GOBLIN__ZSET_COMPACT_MAX_ENTRIES;
    for (size_t i = 0; i < n; i++) {
        if (isnan(pairs[i].score))
            return GOBLIN_EINVAL;
        if (pairs[i].member.len > GOBLIN__ZSET_COMPACT_MAX_VALUE)
            *compact = false;
        if (i > 0 && (pairs[i - 1].score > pairs[i].score ||
                      (pairs[i - 1].score == pairs[i].score &&
                       slice_cmp(pairs[i - 1].member, pairs[i].member) >= 0)))
            return GOBLIN_EINVAL;
    }
    return 0;
}

static int build_full(goblin_store *st, const struct goblin_zpair *pairs,
                      size_t n, struct zfull **out)
{
    struct zfull *z = goblin__zf_new(st);
    size_t bytes = goblin__mul(n, sizeof(double) + sizeof(uint32_t));
    double *scores;
    uint32_t *ids;
    int rc = 0;

    if (z == NULL)
        return GOBLIN_ENOMEM;
    if ((scores = goblin__alloc(st, bytes)) == NULL) {
        goblin__zf_free(st, z);
        return GOBLIN_ENOMEM;
    }
    ids = (uint32_t *)(void *)(scores + n);
    for (size_t i = 0; i < n && rc == 0; i++) {
        const struct goblin_slice *m = &pairs[i].member;

        scores[i] = pairs[i].score;
        rc = goblin__za_append(st, &z->ar, m->ptr, m->len, scores[i], &ids[i]);
        if (rc == 0)
            rc = goblin__swiss_insert(st, &z->idx, &goblin__zf_swiss_ops, z,
                                      zf_hash(z, m->ptr, m->len), ids[i]);
    }
    if (rc == 0)
        rc = goblin__zt_build(st, &z->tree, scores, ids, n);
    goblin__free(st, scores, bytes);
    if (rc != 0) {
        goblin__zf_free(st, z);
        return rc;
    }
    *out = z;
    return 0;
}

int goblin__zset_obj_from_sorted(goblin_store *st,
                                 const struct goblin_zpair *pairs, size_t n,
                                 void **out)
{
    size_t need = ZC_HDR;
    bool compact;
    void *obj;
    int rc;

    if ((rc = check_sorted(pairs, n, &compact)) != 0)
        return rc;
    if (!compact)
        return build_full(st, pairs, n, (struct zfull **)out);
    for (size_t i = 0; i < n; i++)
        need += goblin__zc_entry_size(pairs[i].member.len, pairs[i].score, 0);
    if ((obj = goblin__zc_new(st, need)) == NULL)
        return GOBLIN_ENOMEM;
    for (size_t i = 0; i < n; i++)
        goblin__zc_insert(obj, pairs[i].member.ptr, pairs[i].member.len,
                  pairs[i].score);
    *out = obj;
    return 0;
}

/* ---- walks ---- */

/* A walk over a full set reads records scattered over the arena: ask for
 * the one WALK_AHEAD entries on early, so their misses overlap. */
#define WALK_AHEAD 6

static void walk_prefetch(const struct goblin__zset_walk *w, unsigned ahead)
{
    const struct zfull *z = w->obj;
    unsigned lv = z->tree.height - 1;
    const struct zt_leaf *l = w->pos.node[lv];
    uint32_t i = w->pos.idx[lv];

    if (w->rev ? i < ahead : i + ahead >= l->n)
        return; /* in the next leaf: not worth the walk */
    i = w->rev ? i - ahead : i + ahead;
    __builtin_prefetch(za_rec(&z->ar, zt_leaf_ids(l)[i]));
}

void goblin__zset_obj_walk(const void *obj, size_t r, size_t n, bool rev,
                           struct goblin__zset_walk *w)
{
    w->obj = obj;
    w->left = n;
    w->rev = rev;
    w->kind = kind_of(obj);
    if (n == 0)
        return;
    if (w->kind == ZK_FULL) {
        goblin__zt_seek(&((const struct zfull *)obj)->tree, r, &w->pos);
        for (unsigned k = 0; k < WALK_AHEAD && k < n; k++)
            walk_prefetch(w, k);
        return;
    }
    if (!rev) {
        w->off = (uint32_t)goblin__zc_offset_of_rank(obj, r);
        return;
    }
    /* Down: remember the offsets of ranks r - n + 1 .. r. */
    w->off = (uint32_t)goblin__zc_offset_of_rank(obj, r + 1 - n);
    w->noffs = 0;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *p = (const uint8_t *)obj + w->off;
        struct zc_ent e;

        w->offs[w->noffs++] = (uint16_t)w->off;
        zc_decode(p, &e);
        w->off += (uint32_t)e.size;
    }
}

int goblin__zset_walk_next(struct goblin__zset_walk *w,
                           struct goblin_slice *member, double *score)
{
    if (w->left == 0)
        return 0;
    w->left--;
    if (w->kind == ZK_FULL) {
        const struct zfull *z = w->obj;
        uint32_t id;

        zt_get(&z->tree, &w->pos, score, &id);
        member->ptr = za_member(&z->ar, id, &member->len);
        if (w->left >= WALK_AHEAD)
            walk_prefetch(w, WALK_AHEAD);
        if (w->left > 0) {
            if (w->rev)
                goblin__zt_prev(&z->tree, &w->pos);
            else
                goblin__zt_next(&z->tree, &w->pos);
        }
    } else {
        const uint8_t *base = w->obj;
        struct zc_ent e;

        if (w->rev) {
            zc_decode(base + w->offs[--w->noffs], &e);
        } else {
            zc_decode(base + w->off, &e);
            w->off += (uint32_t)e.size;
        }
        member->ptr = e.m;
        member->len = e.len;
        *score = e.score;
    }
    return 1;
}

int64_t goblin__zset_obj_foreach(const void *obj, goblin_zset_visit visit,
                                 void *ctx)
{
    struct goblin__zset_walk w;
    struct goblin_slice m;
    double s;
    int64_t n = 0;
    int rc;

    goblin__zset_obj_walk(obj, 0, goblin__zset_obj_card(obj), false, &w);
    while (goblin__zset_walk_next(&w, &m, &s)) {
        if ((rc = visit(ctx, m, s)) != 0)
            return rc;
        n++;
    }
    return n;
}

/* ---- checking ---- */

#define FAIL() return -__LINE__

static int check_compact(const void *obj)
{
    const struct zc_hdr *h = zc_hdr(obj);
    const uint8_t *p = zc_first(obj), *end = zc_end(obj);
    struct zc_ent e, prev = {0};
    size_t n = 0;

    if (h->used > h->cap || h->used < ZC_HDR || (h->flags & ~ZC_F_SKIPLIST))
        FAIL();
    for (; p < end; p += e.size, n++) {
        zc_decode(p, &e);
        if (isnan(e.score) || e.len > GOBLIN__ZSET_COMPACT_MAX_VALUE)
            FAIL();
        if (e.score == 0 && signbit(e.score) && !zc_keeps_sign(obj))
            FAIL();
        if (n > 0 && (prev.score > e.score ||
                      (prev.score == e.score &&
                       slice_cmp((struct goblin_slice){prev.m, prev.len},
                                 (struct goblin_slice){e.m, e.len}) >= 0)))
            FAIL();
        prev = e;
    }
    if (p != end || n != h->count || n > GOBLIN__ZSET_COMPACT_MAX_ENTRIES)
        FAIL();
    return 0;
}

static int check_full(const struct zfull *z)
{
    const struct ztree *t = &z->tree;
    struct zt_path p;
    int rc;

    if ((rc = goblin__zt_check(t, NULL)) != 0)
        return rc;
    if (goblin__swiss_count(&z->idx) != t->count)
        FAIL();
    if (t->count == 0)
        return 0;
    goblin__zt_seek(t, 0, &p);
    do {
        double s;
        uint32_t id, found;
        size_t len;
        const uint8_t *m;

        zt_get(t, &p, &s, &id);
        m = za_member(&z->ar, id, &len);
        if (za_rec_dead(za_rec(&z->ar, id)) || za_score(&z->ar, id) != s)
            FAIL();
        if (!zf_find(z, m, len, &found) || found != id)
            FAIL();
    } while (goblin__zt_next(t, &p));
    return 0;
}

int goblin__zset_obj_check(const void *obj)
{
    if (kind_of(obj) == ZK_COMPACT)
        return check_compact(obj);
    if (kind_of(obj) == ZK_FULL)
        return check_full(obj);
    FAIL();
}
