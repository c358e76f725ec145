/* hash_ttl.c - per-field deadlines of hashes (hash_ttl.h): the table by
 * id with its min-heap, lazy expiry when a hash is looked up, the active
 * step, and the public calls behind HEXPIRE ... HPERSIST with Redis
 * 7.4's reply codes.
 */
#include <assert.h>
#include <limits.h>

#include "goblin/hash.h"
#include "goblin/keys.h"
#include "hash.h"
#include "hash_ttl.h"
#include "keyspace.h"

#define NONE UINT32_MAX

static inline uint64_t field_hash(const goblin_store *st,
                                  struct goblin_slice f)
{
    return goblin__hash_with(st->hash_secret, f.ptr, f.len);
}

/* ---- the table ---- */

size_t goblin__httl_bytes(const struct goblin__hash_full *hf)
{
    if (hf->ttl == NULL)
        return 0;
    return sizeof(*hf->ttl) +
           (size_t)hf->ttl->cap * (sizeof(int64_t) + 2 * sizeof(uint32_t));
}

void goblin__httl_free(goblin_store *st, struct goblin__hash_full *hf)
{
    struct goblin__hf_ttl *t = hf->ttl;

    if (t == NULL)
        return;
    goblin__free(st, t->when, (size_t)t->cap * sizeof(*t->when));
    goblin__free(st, t->hpos, (size_t)t->cap * sizeof(*t->hpos));
    goblin__free(st, t->heap, (size_t)t->cap * sizeof(*t->heap));
    goblin__free(st, t, sizeof(*t));
    hf->ttl = NULL;
    assert(st->httl_hashes > 0);
    st->httl_hashes--;
}

int goblin__httl_reserve(goblin_store *st, struct goblin__hash_full *hf,
                         uint32_t need)
{
    struct goblin__hf_ttl *t = hf->ttl, *made = NULL;
    uint32_t cap, old;
    int64_t *w;
    uint32_t *p, *h;

    if (t != NULL && t->cap >= need)
        return 0;
    if (t == NULL) {
        if ((made = goblin__alloc(st, sizeof(*made))) == NULL)
            return GOBLIN_ENOMEM;
        memset(made, 0, sizeof(*made));
        t = made;
    }
    old = t->cap;
    cap = old < 8 ? 8 : old;
    while (cap < need)
        cap = cap > UINT32_MAX / 2 ? need : cap * 2;
    /* Fresh arrays, the old ones freed only once all three exist, so a
     * failure leaves the table as it was. */
    w = goblin__alloc(st, (size_t)cap * sizeof(*w));
    p = w != NULL ? goblin__alloc(st, (size_t)cap * sizeof(*p)) : NULL;
    h = p != NULL ? goblin__alloc(st, (size_t)cap * sizeof(*h)) : NULL;
    if (h == NULL) {
        goblin__free(st, p, (size_t)cap * sizeof(*p));
        goblin__free(st, w, (size_t)cap * sizeof(*w));
        goblin__free(st, made, sizeof(*made));
        return GOBLIN_ENOMEM;
    }
    if (old > 0) {
        memcpy(w, t->when, (size_t)old * sizeof(*w));
        memcpy(p, t->hpos, (size_t)old * sizeof(*p));
        memcpy(h, t->heap, (size_t)t->nheap * sizeof(*h));
        goblin__free(st, t->when, (size_t)old * sizeof(*w));
        goblin__free(st, t->hpos, (size_t)old * sizeof(*p));
        goblin__free(st, t->heap, (size_t)old * sizeof(*h));
    }
    for (uint32_t i = old; i < cap; i++) {
        w[i] = -1;
        p[i] = NONE;
    }
    t->when = w;
    t->hpos = p;
    t->heap = h;
    t->cap = cap;
    if (made != NULL) {
        hf->ttl = made;
        st->httl_hashes++;
    }
    return 0;
}

static inline bool before(const struct goblin__hf_ttl *t, uint32_t a,
                          uint32_t b)
{
    return t->when[t->heap[a]] < t->when[t->heap[b]];
}

static inline void heap_put(struct goblin__hf_ttl *t, uint32_t i,
                            uint32_t id)
{
    t->heap[i] = id;
    t->hpos[id] = i;
}

static void sift_up(struct goblin__hf_ttl *t, uint32_t i)
{
    uint32_t id = t->heap[i];

    while (i > 0) {
        uint32_t up = (i - 1) / 2;

        if (t->when[t->heap[up]] <= t->when[id])
            break;
        heap_put(t, i, t->heap[up]);
        i = up;
    }
    heap_put(t, i, id);
}

static void sift_down(struct goblin__hf_ttl *t, uint32_t i)
{
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, m = i, id;

        if (l < t->nheap && before(t, l, m))
            m = l;
        if (r < t->nheap && before(t, r, m))
            m = r;
        if (m == i)
            return;
        id = t->heap[i];
        heap_put(t, i, t->heap[m]);
        heap_put(t, m, id);
        i = m;
    }
}

static void heap_remove(struct goblin__hf_ttl *t, uint32_t id)
{
    uint32_t i = t->hpos[id], moved;

    t->hpos[id] = NONE;
    t->when[id] = -1;
    if (--t->nheap == i)
        return;
    moved = t->heap[t->nheap];
    heap_put(t, i, moved);
    sift_down(t, i);
    sift_up(t, t->hpos[moved]);
}

void goblin__httl_settle(goblin_store *st, struct goblin__hash_full *hf)
{
    if (hf->ttl != NULL && hf->ttl->nheap == 0)
        goblin__httl_free(st, hf);
}

void goblin__httl_set(goblin_store *st, struct goblin__hash_full *hf,
                      uint32_t id, int64_t when)
{
    struct goblin__hf_ttl *t = hf->ttl;

    if (t == NULL) {
        assert(when == -1);
        return;
    }
    assert(id < t->cap);
    if (when == -1) {
        if (t->hpos[id] != NONE)
            heap_remove(t, id);
        goblin__httl_settle(st, hf);
        return;
    }
    if (t->hpos[id] == NONE) {
        t->when[id] = when;
        heap_put(t, t->nheap++, id);
        sift_up(t, t->hpos[id]);
        return;
    }
    t->when[id] = when;
    sift_up(t, t->hpos[id]);
    sift_down(t, t->hpos[id]);
}

void goblin__httl_on_del(goblin_store *st, struct goblin__hash_full *hf,
                         uint32_t id)
{
    struct goblin__hf_ttl *t = hf->ttl;
    uint32_t last = hf->n - 1;

    (void)st;
    if (t == NULL)
        return;
    if (t->hpos[id] != NONE)
        heap_remove(t, id);
    if (id != last) {
        t->when[id] = t->when[last];
        t->hpos[id] = t->hpos[last];
        if (t->hpos[id] != NONE)
            t->heap[t->hpos[id]] = id;
        t->when[last] = -1;
        t->hpos[last] = NONE;
    }
}

int goblin__httl_check(const struct goblin__hash_full *hf)
{
    const struct goblin__hf_ttl *t = hf->ttl;
    uint32_t with = 0;

    if (t == NULL)
        return 0;
    if (t->nheap == 0 || t->cap < hf->n || t->nheap > hf->n)
        return -1;
    for (uint32_t id = 0; id < t->cap; id++) {
        if (id >= hf->n && (t->when[id] != -1 || t->hpos[id] != NONE))
            return -2;
        if ((t->when[id] == -1) != (t->hpos[id] == NONE))
            return -3;
        if (t->hpos[id] == NONE)
            continue;
        with++;
        if (t->hpos[id] >= t->nheap || t->heap[t->hpos[id]] != id)
            return -4;
    }
    if (with != t->nheap)
        return -5;
    for (uint32_t i = 1; i < t->nheap; i++)
        if (t->when[t->heap[(i - 1) / 2]] > t->when[t->heap[i]])
            return -6;
    return 0;
}

/* ---- expiry ---- */

static inline bool due(const struct goblin__hash_full *hf, int64_t now)
{
    return hf->ttl != NULL && hf->ttl->nheap > 0 &&
           now > hf->ttl->when[hf->ttl->heap[0]];
}

/* Expires the due fields of the hash in *slot under key; deletes the key
 * when none is left. Returns 1 when the key stays, 0 when it went. */
static int expire_due(goblin_store *st, struct goblin_slice key, void **slot,
                      int64_t now, size_t *count)
{
    struct goblin__hash_full *hf = goblin__hobj_full(*slot);
    struct goblin_slice f, v;
    size_t n = 0;

    while (due(hf, now) && hf->n > 1) {
        uint32_t id = hf->ttl->heap[0];

        goblin__hf_pair(hf, id, &f, &v);
        if (st->field_gone != NULL)
            st->field_gone(st->key_event_ctx, key, f);
        goblin__hf_del(st, hf, id, field_hash(st, f));
        n++;
    }
    if (due(hf, now)) { /* the last field: the key goes with it */
        goblin__hf_pair(hf, hf->ttl->heap[0], &f, &v);
        if (st->field_gone != NULL)
            st->field_gone(st->key_event_ctx, key, f);
        n++;
        *count += n;
        goblin__key_changed(st, key);
        if (st->fields_done != NULL)
            st->fields_done(st->key_event_ctx, key, true);
        goblin__key_remove(st, key);
        return 0;
    }
    goblin__httl_settle(st, hf);
    *count += n;
    if (n > 0) {
        goblin__key_changed(st, key);
        if (st->fields_done != NULL)
            st->fields_done(st->key_event_ctx, key, false);
    }
    return 1;
}

int goblin__hash_lookup_slow(goblin_store *st, struct goblin_slice key,
                             void ***slot)
{
    int r = goblin__key_lookup(st, key, GOBLIN_TYPE_HASH, slot);
    size_t count = 0;

    if (r == 1 && goblin__hobj_is_full(**slot) &&
        due(goblin__hobj_full(**slot), goblin__expiry_now(st))) {
        r = expire_due(st, key, *slot, goblin__expiry_now(st), &count);
        st->expired_fields += count;
    }
    return r;
}

size_t goblin__hash_expire_step(goblin_store *st, size_t max_work)
{
    struct goblin__keyspace *ks = &st->ks;
    int64_t now;
    size_t count = 0;

    if (st->httl_hashes == 0)
        return 0;
    now = goblin__now_ms(st);
    for (size_t work = 0; work < max_work && ks->count > 0; work++) {
        uint8_t *rec;
        void *obj, **slot = &obj;
        struct goblin__rec r;
        struct goblin_slice key;
        int64_t kd;

        if (st->httl_cursor >= ks->count)
            st->httl_cursor = 0;
        rec = goblin__key_rec(st, (uint32_t)st->httl_cursor);
        if (goblin__rec_type(rec) != GOBLIN_TYPE_HASH) {
            st->httl_cursor++;
            continue;
        }
        kd = goblin__key_deadline(st, (uint32_t)st->httl_cursor);
        goblin__rec_parse(rec, &r);
        obj = goblin__rec_obj(rec);
        if ((kd != -1 && now > kd) || !goblin__hobj_is_full(*slot) ||
            !due(goblin__hobj_full(*slot), now)) {
            st->httl_cursor++;
            continue;
        }
        key.ptr = r.key;
        key.len = r.klen;
        /* When the key goes, the last id moves under the cursor. */
        if (expire_due(st, key, slot, now, &count) == 1)
            st->httl_cursor++;
    }
    st->expired_fields += count;
    return count;
}

/* ---- the object layer ---- */

bool goblin__hash_obj_has_ttl(const void *obj)
{
    return obj != NULL && goblin__hobj_is_full(obj) &&
           goblin__hobj_full(obj)->ttl != NULL;
}

int64_t goblin__hash_obj_field_deadline(const goblin_store *st,
                                        const void *obj,
                                        struct goblin_slice field)
{
    const struct goblin__hash_full *hf;
    uint32_t id;

    if (!goblin__hash_obj_has_ttl(obj))
        return -1;
    hf = goblin__hobj_full(obj);
    if (!goblin__hf_find(hf, field_hash(st, field), field, &id))
        return -1;
    return goblin__httl_get(hf, id);
}

/* Converts a compact *objp to the full form. 0 or GOBLIN_ENOMEM. */
static int to_full(goblin_store *st, void **objp)
{
    struct goblin__hash_full *hf;

    if (goblin__hobj_is_full(*objp))
        return 0;
    if (goblin__hf_from_compact(st, *objp, &hf) != 0)
        return GOBLIN_ENOMEM;
    goblin__hc_free(st, *objp);
    *objp = goblin__hobj_of_full(hf);
    return 0;
}

int goblin__hash_obj_set_deadline(goblin_store *st, void **objp,
                                  struct goblin_slice field, int64_t when)
{
    struct goblin__hash_full *hf;
    uint32_t id;

    if (to_full(st, objp) != 0)
        return GOBLIN_ENOMEM;
    hf = goblin__hobj_full(*objp);
    if (!goblin__hf_find(hf, field_hash(st, field), field, &id))
        return 0;
    if (when == -1) {
        goblin__httl_set(st, hf, id, -1);
        return 1;
    }
    if (goblin__httl_reserve(st, hf, hf->n) != 0)
        return GOBLIN_ENOMEM;
    goblin__httl_set(st, hf, id, when);
    return 1;
}

void goblin__httl_clear_pairs(goblin_store *st, void *obj,
                              const struct goblin_slice *fv, size_t npairs)
{
    struct goblin__hash_full *hf;
    uint32_t id;

    if (!goblin__hash_obj_has_ttl(obj))
        return;
    hf = goblin__hobj_full(obj);
    for (size_t i = 0; i < npairs && hf->ttl != NULL; i++)
        if (goblin__hf_find(hf, field_hash(st, fv[2 * i]), fv[2 * i], &id))
            goblin__httl_set(st, hf, id, -1);
}

int goblin__httl_copy(goblin_store *dst_st, void **dstp, const void *src)
{
    const struct goblin__hash_full *s;
    struct goblin_slice f, v;

    if (!goblin__hash_obj_has_ttl(src))
        return 0;
    s = goblin__hobj_full(src);
    for (uint32_t i = 0; i < s->ttl->nheap; i++) {
        uint32_t id = s->ttl->heap[i];

        goblin__hf_pair(s, id, &f, &v);
        if (goblin__hash_obj_set_deadline(dst_st, dstp, f,
                                          s->ttl->when[id]) < 0) {
            if (goblin__hobj_is_full(*dstp))
                goblin__httl_free(dst_st, goblin__hobj_full(*dstp));
            return GOBLIN_ENOMEM;
        }
    }
    return 0;
}

size_t goblin__hash_obj_live_len(const void *obj, int64_t now)
{
    const struct goblin__hash_full *hf;
    size_t n;

    if (!goblin__hash_obj_has_ttl(obj))
        return goblin__hash_obj_len(obj);
    hf = goblin__hobj_full(obj);
    n = hf->n;
    for (uint32_t i = 0; i < hf->ttl->nheap; i++)
        n -= now > hf->ttl->when[hf->ttl->heap[i]];
    return n;
}

int64_t goblin__hash_obj_foreach_ttl(const void *obj, int64_t now,
                                     goblin__hash_ttl_visit visit, void *ctx)
{
    const struct goblin__hash_full *hf;
    struct goblin_slice f, v;
    int64_t count = 0;
    int r;

    if (!goblin__hash_obj_has_ttl(obj)) {
        /* No deadlines: the plain walk, each with -1. */
        if (obj != NULL && goblin__hobj_is_full(obj)) {
            hf = goblin__hobj_full(obj);
            for (uint32_t id = 0; id < hf->n; id++, count++) {
                goblin__hf_pair(hf, id, &f, &v);
                if ((r = visit(ctx, f, v, -1)) != 0)
                    return r;
            }
            return count;
        }
        if (obj != NULL) {
            struct goblin__hc_iter it;

            goblin__hc_iter_init(&it, obj);
            for (; goblin__hc_next(&it, &f, &v); count++)
                if ((r = visit(ctx, f, v, -1)) != 0)
                    return r;
        }
        return count;
    }
    hf = goblin__hobj_full(obj);
    for (uint32_t id = 0; id < hf->n; id++) {
        int64_t when = hf->ttl->when[id];

        if (when != -1 && now > when)
            continue;
        goblin__hf_pair(hf, id, &f, &v);
        if ((r = visit(ctx, f, v, when)) != 0)
            return r;
        count++;
    }
    return count;
}

/* ---- the public calls ---- */

static bool any_field(goblin_store *st, const void *obj,
                      const struct goblin_slice *fields, size_t n)
{
    struct goblin_slice v;

    for (size_t i = 0; i < n; i++)
        if (goblin__hc_find(obj, field_hash(st, fields[i]), fields[i],
                            &v) >= 0)
            return true;
    return false;
}

int goblin_hash_field_expire(goblin_store *st, struct goblin_slice key,
                             const struct goblin_slice *fields, size_t n,
                             int64_t unix_ms, int flags, int8_t *codes)
{
    struct goblin__hash_full *hf;
    void **slot;
    int64_t now;
    int r, changed = 0;

    if ((r = goblin__expire_flags_check(flags)) != 0)
        return r;
    if (n == 0 || n > INT_MAX || unix_ms < 0)
        return GOBLIN_EINVAL;
    goblin__write_begin(st);
    r = goblin__hash_lookup(st, key, &slot);
    if (r < 0)
        return r;
    if (r == 0 || (!goblin__hobj_is_full(*slot) &&
                   !any_field(st, *slot, fields, n))) {
        memset(codes, -2, n);
        return 0;
    }
    if (goblin__hobj_is_full(*slot)) {
        hf = goblin__hobj_full(*slot);
        if (goblin__httl_reserve(st, hf, hf->n) != 0)
            return GOBLIN_ENOMEM;
    } else {
        /* Converted and given a table before the key sees it, so a
         * failure leaves the compact form in place. */
        if (goblin__hf_from_compact(st, *slot, &hf) != 0)
            return GOBLIN_ENOMEM;
        if (goblin__httl_reserve(st, hf, hf->n) != 0) {
            goblin__hf_free(st, hf);
            return GOBLIN_ENOMEM;
        }
        goblin__hc_free(st, *slot);
        *slot = goblin__hobj_of_full(hf);
    }
    now = goblin__now_ms(st);
    for (size_t i = 0; i < n; i++) {
        uint64_t h = field_hash(st, fields[i]);
        uint32_t id;

        if (!goblin__hf_find(hf, h, fields[i], &id)) {
            codes[i] = -2;
            continue;
        }
        if (!goblin__expire_allowed(flags, goblin__httl_get(hf, id), unix_ms)) {
            codes[i] = 0;
            continue;
        }
        changed++;
        if (unix_ms > now) {
            goblin__httl_set(st, hf, id, unix_ms);
            codes[i] = 1;
            continue;
        }
        codes[i] = 2;
        if (hf->n == 1) { /* the last field: the key goes */
            for (size_t j = i + 1; j < n; j++)
                codes[j] = -2;
            goblin__key_changed(st, key);
            goblin__key_remove(st, key);
            return changed;
        }
        goblin__hf_del(st, hf, id, h);
    }
    goblin__httl_settle(st, hf);
    if (changed > 0) {
        goblin__hf_compact_step(st, hf);
        goblin__key_changed(st, key);
    }
    return changed;
}

int goblin_hash_field_deadline(goblin_store *st, struct goblin_slice key,
                               const struct goblin_slice *fields, size_t n,
                               int64_t *out)
{
    struct goblin_slice v;
    void **slot;
    int r;

    if (n > INT_MAX)
        return GOBLIN_EINVAL;
    r = goblin__hash_lookup(st, key, &slot);
    if (r < 0)
        return r;
    for (size_t i = 0; i < n; i++) {
        uint64_t h = field_hash(st, fields[i]);
        uint32_t id;

        if (r == 0) {
            out[i] = -2;
        } else if (!goblin__hobj_is_full(*slot)) {
            out[i] = goblin__hc_find(*slot, h, fields[i], &v) >= 0 ? -1 : -2;
        } else {
            struct goblin__hash_full *hf = goblin__hobj_full(*slot);

            out[i] = goblin__hf_find(hf, h, fields[i], &id)
                         ? goblin__httl_get(hf, id)
                         : -2;
        }
    }
    return 0;
}

int goblin_hash_field_persist(goblin_store *st, struct goblin_slice key,
                              const struct goblin_slice *fields, size_t n,
                              int8_t *codes)
{
    void **slot;
    int r, changed = 0;

    if (n == 0 || n > INT_MAX)
        return GOBLIN_EINVAL;
    goblin__write_begin(st);
    r = goblin__hash_lookup(st, key, &slot);
    if (r < 0)
        return r;
    for (size_t i = 0; i < n; i++) {
        struct goblin__hash_full *hf;
        uint32_t id;
        struct goblin_slice v;

        if (r == 0) {
            codes[i] = -2;
            continue;
        }
        if (!goblin__hobj_is_full(*slot)) {
            codes[i] = goblin__hc_find(*slot, field_hash(st, fields[i]),
                                       fields[i], &v) >= 0 ? -1 : -2;
            continue;
        }
        hf = goblin__hobj_full(*slot);
        if (!goblin__hf_find(hf, field_hash(st, fields[i]), fields[i], &id)) {
            codes[i] = -2;
            continue;
        }
        if (goblin__httl_get(hf, id) == -1) {
            codes[i] = -1;
            continue;
        }
        goblin__httl_set(st, hf, id, -1);
        codes[i] = 1;
        changed++;
    }
    if (changed > 0)
        goblin__key_changed(st, key);
    return changed;
}
