/* pattern.c - the pattern index of the Pub/Sub registry (pubsub.h):
 * patterns bucketed by their literal prefix.
 *
 * A pattern's prefix is its bytes before the first '*', '?', '[' or '\'
 * (at most GOBLIN__PS_PREFIX_MAX of them). Redis's matcher compares those
 * bytes one to one with the channel's first bytes, so a pattern matches
 * only channels that start with its prefix: PUBLISH of a channel probes,
 * for each prefix length L in use (a bit in lenmask), the bucket of the
 * channel's first L bytes, and runs the matcher only on that bucket's
 * patterns. The cost is a few hash probes plus the candidates, whatever
 * the number of patterns; patterns that start with a wildcard share the
 * empty prefix's bucket and are always tried, as Redis tries all.
 */
#include <string.h>

#include "goblin/keys.h"
#include "pubsub.h"
#include "store/store.h"

/* The patterns sharing one prefix; the prefix bytes are the first
 * pattern's first len bytes. */
struct bucket {
    uint64_t hash;
    struct goblin__ps_chan *first;
    uint32_t len;
};

uint32_t goblin__ps_prefix_len(struct goblin_slice pattern)
{
    const unsigned char *p = pattern.ptr;
    uint32_t i;

    for (i = 0; i < pattern.len && i < GOBLIN__PS_PREFIX_MAX; i++)
        if (p[i] == '*' || p[i] == '?' || p[i] == '[' || p[i] == '\\')
            break;
    return i;
}

static uint64_t bucket_hash(const struct goblin__ps_registry *r,
                            const void *p, size_t len)
{
    return goblin__hash_with(r->secret ^ GOBLIN__HASH_K0, p, len);
}

static bool bucket_eq(const void *obj, const void *key)
{
    const struct bucket *b = obj;
    const struct goblin_slice *k = key;

    return b->len == k->len &&
           (k->len == 0 || memcmp(b->first->name, k->ptr, k->len) == 0);
}

static struct bucket *bucket_of(const struct goblin__ps_registry *r,
                                const void *p, uint32_t len)
{
    struct goblin_slice k = {p, len};

    return goblin__ps_table_find(&r->buckets, bucket_hash(r, p, len),
                                 bucket_eq, &k);
}

int goblin__ps_index_add(struct goblin__ps_registry *r,
                         struct goblin__ps_chan *p)
{
    uint32_t len = goblin__ps_prefix_len(
        (struct goblin_slice){p->name, p->len});
    struct bucket *b = bucket_of(r, p->name, len);

    p->prefix = len;
    if (b == NULL) {
        if ((b = goblin__alloc(r->st, sizeof(*b))) == NULL)
            return GOBLIN_ENOMEM;
        *b = (struct bucket){bucket_hash(r, p->name, len), p, len};
        if (goblin__ps_table_add(r->st, &r->buckets, b) != 0) {
            goblin__free(r->st, b, sizeof(*b));
            return GOBLIN_ENOMEM;
        }
        p->pnext = NULL;
        if (r->nlen[len]++ == 0)
            r->lenmask |= 1ull << len;
        return 0;
    }
    p->pnext = b->first;
    b->first = p;
    return 0;
}

void goblin__ps_index_remove(struct goblin__ps_registry *r,
                             struct goblin__ps_chan *p)
{
    struct bucket *b = bucket_of(r, p->name, p->prefix);
    struct goblin__ps_chan **pp = &b->first;

    while (*pp != p)
        pp = &(*pp)->pnext;
    *pp = p->pnext;
    if (b->first != NULL)
        return;
    /* The bucket's key bytes lived in p: remove it by pointer, before p
     * goes (the table reads only the stored hash). */
    goblin__ps_table_remove(&r->buckets, b);
    goblin__free(r->st, b, sizeof(*b));
    if (--r->nlen[p->prefix] == 0)
        r->lenmask &= ~(1ull << p->prefix);
}

void goblin__ps_index_free(struct goblin__ps_registry *r)
{
    struct goblin__ps_table *t = &r->buckets;

    for (size_t i = 0; t->slot != NULL && i <= t->mask; i++)
        if (t->slot[i] != NULL)
            goblin__free(r->st, t->slot[i], sizeof(struct bucket));
    goblin__ps_table_free(r->st, t);
    memset(r->nlen, 0, sizeof(r->nlen));
    r->lenmask = 0;
}

size_t goblin__ps_index_match(const struct goblin__ps_registry *r,
                              struct goblin_slice channel,
                              goblin__ps_deliver *deliver, void *ctx)
{
    uint64_t lens = r->lenmask;
    size_t n = 0;

    if (channel.len < GOBLIN__PS_PREFIX_MAX)
        lens &= (2ull << channel.len) - 1; /* prefixes no longer than it */
    while (lens != 0) {
        uint32_t len = (uint32_t)__builtin_ctzll(lens);
        const struct bucket *b = bucket_of(r, channel.ptr, len);

        lens &= lens - 1;
        for (const struct goblin__ps_chan *p = b ? b->first : NULL;
             p != NULL; p = p->pnext) {
            if (!goblin_glob_match(p->name, p->len, channel.ptr, channel.len,
                                   0))
                continue;
            for (uint32_t i = 0; i < p->nsubs; i++)
                deliver(ctx, goblin__ps_subs(p)[i]->owner, p);
            n += p->nsubs;
        }
    }
    return n;
}
