/* registry.c - the Pub/Sub channel registry (pubsub.h): the pointer hash
 * tables, subscribing and unsubscribing, and PUBLISH's walk.
 *
 * Tables keep at most half their slots in use (linear probing stays
 * short) and delete by shifting the rest of a probe run back, so there
 * are no tombstones. A subscription sits in three places: the (channel,
 * client) table, its channel's array and its client's array; both arrays
 * remove by moving their last entry into the hole and fixing that entry's
 * index, so nothing is ever searched.
 */
#include <string.h>

#include "pubsub.h"
#include "store/store.h"

static uint64_t obj_hash(const void *obj)
{
    uint64_t h;

    memcpy(&h, obj, sizeof(h));
    return h;
}

void *goblin__ps_table_find(const struct goblin__ps_table *t, uint64_t hash,
                            bool (*eq)(const void *obj, const void *key),
                            const void *key)
{
    size_t i;

    if (t->count == 0)
        return NULL;
    for (i = hash & t->mask; t->slot[i] != NULL; i = (i + 1) & t->mask)
        if (obj_hash(t->slot[i]) == hash && eq(t->slot[i], key))
            return t->slot[i];
    return NULL;
}

static void table_insert(struct goblin__ps_table *t, void *obj)
{
    size_t i = obj_hash(obj) & t->mask;

    while (t->slot[i] != NULL)
        i = (i + 1) & t->mask;
    t->slot[i] = obj;
    t->count++;
}

/* Room for one more object. 0 or GOBLIN_ENOMEM (the table unchanged). */
static int table_reserve(goblin_store *st, struct goblin__ps_table *t)
{
    size_t slots = t->slot == NULL ? 0 : t->mask + 1, grown, i;
    struct goblin__ps_table n;

    if ((t->count + 1) * 2 <= slots)
        return 0;
    grown = slots == 0 ? 8 : slots * 2;
    n.slot = goblin__alloc(st, goblin__mul(grown, sizeof(void *)));
    if (n.slot == NULL)
        return GOBLIN_ENOMEM;
    memset(n.slot, 0, grown * sizeof(void *));
    n.mask = grown - 1;
    n.count = 0;
    for (i = 0; i < slots; i++)
        if (t->slot[i] != NULL)
            table_insert(&n, t->slot[i]);
    goblin__free(st, t->slot, slots * sizeof(void *));
    *t = n;
    return 0;
}

int goblin__ps_table_add(goblin_store *st, struct goblin__ps_table *t,
                         void *obj)
{
    if (table_reserve(st, t) != 0)
        return GOBLIN_ENOMEM;
    table_insert(t, obj);
    return 0;
}

void goblin__ps_table_remove(struct goblin__ps_table *t, void *obj)
{
    size_t i = obj_hash(obj) & t->mask, j;

    while (t->slot[i] != obj)
        i = (i + 1) & t->mask;
    t->slot[i] = NULL;
    t->count--;
    /* Backward shift: an entry further along the run moves into the hole
     * unless its home slot lies cyclically in (hole, its position]. */
    for (j = (i + 1) & t->mask; t->slot[j] != NULL; j = (j + 1) & t->mask) {
        size_t home = obj_hash(t->slot[j]) & t->mask;

        if (((j - home) & t->mask) >= ((j - i) & t->mask)) {
            t->slot[i] = t->slot[j];
            t->slot[j] = NULL;
            i = j;
        }
    }
}

void goblin__ps_table_free(goblin_store *st, struct goblin__ps_table *t)
{
    if (t->slot != NULL)
        goblin__free(st, t->slot, (t->mask + 1) * sizeof(void *));
    *t = (struct goblin__ps_table){0};
}

/* ---- names and subscriptions ---- */

static bool chan_eq(const void *obj, const void *key)
{
    const struct goblin__ps_chan *ch = obj;
    const struct goblin_slice *name = key;

    return ch->len == name->len &&
           (name->len == 0 || memcmp(ch->name, name->ptr, name->len) == 0);
}

struct sub_key {
    const struct goblin__ps_chan *chan;
    const void *owner;
};

static bool sub_eq(const void *obj, const void *key)
{
    const struct goblin__ps_sub *s = obj;
    const struct sub_key *k = key;

    return s->chan == k->chan && s->owner == k->owner;
}

static uint64_t sub_hash(const struct goblin__ps_registry *r,
                         const void *chan, const void *owner)
{
    return goblin__hash_mix((uint64_t)(uintptr_t)chan ^ r->secret,
                            (uint64_t)(uintptr_t)owner ^ GOBLIN__HASH_K1);
}

void goblin__ps_init(struct goblin__ps_registry *r, goblin_store *st)
{
    *r = (struct goblin__ps_registry){.st = st};
    r->secret = goblin__hash_secret(st->hash_seed ^ GOBLIN__HASH_K2);
}

struct goblin__ps_chan *goblin__ps_find(const struct goblin__ps_registry *r,
                                        enum goblin__ps_kind k,
                                        struct goblin_slice name)
{
    return goblin__ps_table_find(&r->names[k],
                                 goblin__hash_with(r->secret, name.ptr,
                                                   name.len),
                                 chan_eq, &name);
}

static size_t chan_size(size_t len)
{
    return sizeof(struct goblin__ps_chan) + len;
}

static void chan_free(struct goblin__ps_registry *r,
                      struct goblin__ps_chan *ch)
{
    if (ch->capsubs > 0)
        goblin__free(r->st, ch->subs, ch->capsubs * sizeof(*ch->subs));
    goblin__free(r->st, ch, chan_size(ch->len));
}

/* Grows an array of subscription pointers to hold one more. */
static int grow(goblin_store *st, struct goblin__ps_sub ***v, uint32_t n,
                uint32_t *cap)
{
    uint32_t c = *cap == 0 ? 4 : *cap * 2;
    void *p;

    if (n < *cap)
        return 0;
    if (*cap >= UINT32_MAX / 2)
        return GOBLIN_ENOMEM;
    p = goblin__realloc(st, *v, (size_t)*cap * sizeof(**v),
                        (size_t)c * sizeof(**v));
    if (p == NULL)
        return GOBLIN_ENOMEM;
    *v = p;
    *cap = c;
    return 0;
}

/* Room in ch for one more subscriber: the first is held inline, the
 * second moves both into an array. */
static int chan_grow(goblin_store *st, struct goblin__ps_chan *ch)
{
    struct goblin__ps_sub *one = ch->one, **v = NULL;
    uint32_t cap = 0;

    if (ch->capsubs > 0)
        return grow(st, &ch->subs, ch->nsubs, &ch->capsubs);
    if (ch->nsubs == 0)
        return 0;
    if (grow(st, &v, 0, &cap) != 0)
        return GOBLIN_ENOMEM;
    v[0] = one;
    ch->subs = v;
    ch->capsubs = cap;
    return 0;
}

/* A new, empty channel (or pattern, indexed) of kind k in the tables. */
static struct goblin__ps_chan *chan_new(struct goblin__ps_registry *r,
                                        enum goblin__ps_kind k,
                                        struct goblin_slice name,
                                        uint64_t hash)
{
    struct goblin__ps_chan *ch;

    if (name.len > UINT32_MAX ||
        (ch = goblin__alloc(r->st, chan_size(name.len))) == NULL)
        return NULL;
    *ch = (struct goblin__ps_chan){.hash = hash, .len = (uint32_t)name.len};
    if (name.len > 0)
        memcpy(ch->name, name.ptr, name.len);
    if (goblin__ps_table_add(r->st, &r->names[k], ch) != 0)
        goto fail;
    if (k == GOBLIN__PS_PATTERN && goblin__ps_index_add(r, ch) != 0) {
        goblin__ps_table_remove(&r->names[k], ch);
        goto fail;
    }
    return ch;
fail:
    goblin__free(r->st, ch, chan_size(name.len));
    return NULL;
}

static void chan_drop(struct goblin__ps_registry *r, enum goblin__ps_kind k,
                      struct goblin__ps_chan *ch)
{
    if (k == GOBLIN__PS_PATTERN)
        goblin__ps_index_remove(r, ch);
    goblin__ps_table_remove(&r->names[k], ch);
    chan_free(r, ch);
}

int goblin__ps_subscribe(struct goblin__ps_registry *r,
                         struct goblin__ps_client *c, void *owner,
                         enum goblin__ps_kind k, struct goblin_slice name)
{
    uint64_t h = goblin__hash_with(r->secret, name.ptr, name.len);
    struct goblin__ps_chan *ch =
        goblin__ps_table_find(&r->names[k], h, chan_eq, &name);
    bool fresh = ch == NULL;
    struct goblin__ps_sub *sub;
    struct sub_key key;

    if (ch != NULL) {
        key = (struct sub_key){ch, owner};
        if (goblin__ps_table_find(&r->subs, sub_hash(r, ch, owner), sub_eq,
                                  &key) != NULL)
            return 0;
    } else if ((ch = chan_new(r, k, name, h)) == NULL) {
        return GOBLIN_ENOMEM;
    }
    if (chan_grow(r->st, ch) != 0 ||
        grow(r->st, &c->v[k], c->n[k], &c->cap[k]) != 0 ||
        table_reserve(r->st, &r->subs) != 0 ||
        (sub = goblin__alloc(r->st, sizeof(*sub))) == NULL) {
        if (fresh)
            chan_drop(r, k, ch);
        return GOBLIN_ENOMEM;
    }
    *sub = (struct goblin__ps_sub){sub_hash(r, ch, owner), ch, owner,
                                   c->n[k], ch->nsubs};
    table_insert(&r->subs, sub);
    if (ch->capsubs == 0)
        ch->one = sub;
    else
        ch->subs[ch->nsubs] = sub;
    ch->nsubs++;
    c->v[k][c->n[k]++] = sub;
    return 1;
}

/* Removes sub from everything; frees its channel once it has no one. */
static void sub_drop(struct goblin__ps_registry *r,
                     struct goblin__ps_client *c, enum goblin__ps_kind k,
                     struct goblin__ps_sub *sub)
{
    struct goblin__ps_chan *ch = sub->chan;
    struct goblin__ps_sub *last;

    goblin__ps_table_remove(&r->subs, sub);
    if (ch->capsubs == 0) {
        ch->one = NULL;
        ch->nsubs = 0;
    } else {
        last = ch->subs[--ch->nsubs];
        ch->subs[sub->chi] = last;
        last->chi = sub->chi;
    }
    last = c->v[k][--c->n[k]];
    c->v[k][sub->ci] = last;
    last->ci = sub->ci;
    goblin__free(r->st, sub, sizeof(*sub));
    if (ch->nsubs == 0)
        chan_drop(r, k, ch);
}

int goblin__ps_unsubscribe(struct goblin__ps_registry *r,
                           struct goblin__ps_client *c, void *owner,
                           enum goblin__ps_kind k, struct goblin_slice name)
{
    struct goblin__ps_chan *ch = goblin__ps_find(r, k, name);
    struct goblin__ps_sub *sub;
    struct sub_key key = {ch, owner};

    if (ch == NULL)
        return 0;
    sub = goblin__ps_table_find(&r->subs, sub_hash(r, ch, owner), sub_eq,
                                &key);
    if (sub == NULL)
        return 0;
    sub_drop(r, c, k, sub);
    return 1;
}

void goblin__ps_leave_all(struct goblin__ps_registry *r,
                          struct goblin__ps_client *c)
{
    for (int k = 0; k < GOBLIN__PS_KINDS; k++) {
        while (c->n[k] > 0)
            sub_drop(r, c, (enum goblin__ps_kind)k, c->v[k][c->n[k] - 1]);
        goblin__free(r->st, c->v[k], (size_t)c->cap[k] * sizeof(*c->v[k]));
        c->v[k] = NULL;
        c->cap[k] = 0;
    }
}

void goblin__ps_free(struct goblin__ps_registry *r)
{
    for (int k = 0; k < GOBLIN__PS_KINDS; k++) {
        struct goblin__ps_table *t = &r->names[k];

        for (size_t i = 0; t->slot != NULL && i <= t->mask; i++) {
            struct goblin__ps_chan *ch = t->slot[i];

            if (ch == NULL)
                continue;
            for (uint32_t j = 0; j < ch->nsubs; j++)
                goblin__free(r->st, goblin__ps_subs(ch)[j],
                             sizeof(struct goblin__ps_sub));
            chan_free(r, ch);
        }
        goblin__ps_table_free(r->st, t);
    }
    goblin__ps_table_free(r->st, &r->subs);
    goblin__ps_index_free(r);
}

void goblin__ps_each(const struct goblin__ps_registry *r,
                     enum goblin__ps_kind k,
                     void (*fn)(void *ctx, const struct goblin__ps_chan *ch),
                     void *ctx)
{
    const struct goblin__ps_table *t = &r->names[k];

    for (size_t i = 0; t->slot != NULL && i <= t->mask; i++)
        if (t->slot[i] != NULL)
            fn(ctx, t->slot[i]);
}

size_t goblin__ps_publish(const struct goblin__ps_registry *r, bool shard,
                          struct goblin_slice channel,
                          goblin__ps_deliver *deliver, void *ctx)
{
    enum goblin__ps_kind k = shard ? GOBLIN__PS_SHARD : GOBLIN__PS_CHANNEL;
    const struct goblin__ps_chan *ch;
    size_t n = 0;

    if (r->names[k].count > 0 && (ch = goblin__ps_find(r, k, channel))) {
        struct goblin__ps_sub *const *v = goblin__ps_subs(ch);

        for (uint32_t i = 0; i < ch->nsubs; i++)
            deliver(ctx, v[i]->owner, NULL);
        n = ch->nsubs;
    }
    if (!shard && r->names[GOBLIN__PS_PATTERN].count > 0)
        n += goblin__ps_index_match(r, channel, deliver, ctx);
    return n;
}

size_t goblin__ps_client_mem(const struct goblin__ps_client *c)
{
    size_t m = 0;

    for (int k = 0; k < GOBLIN__PS_KINDS; k++)
        m += (size_t)c->cap[k] * sizeof(void *) +
             (size_t)c->n[k] * (sizeof(struct goblin__ps_sub) +
                                2 * sizeof(void *));
    return m;
}
