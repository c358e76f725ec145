/* pubsub.h - the Pub/Sub channel registry of an engine: who is subscribed
 * to which channel, shard channel and pattern, and the walk PUBLISH makes
 * over the subscribers of one message.
 *
 * The registry knows nothing of sessions or protocols: a subscriber is an
 * opaque owner pointer with a struct goblin__ps_client embedded in it (its
 * subscriptions), and a delivery is a callback.
 *
 * Layout. Each channel (and each pattern) is one goblin__ps_chan holding
 * its name and the array of its subscriptions; a subscription
 * (goblin__ps_sub) links one channel to one client and knows its index in
 * both arrays, so unsubscribing is O(1) in both. Three hash tables of
 * pointers (open addressing, linear probing, the hash kept in each object)
 * find a channel, a shard channel or a pattern by name, and a fourth finds
 * the subscription of a (channel, client) pair: SUBSCRIBE of a channel the
 * client already has is one probe, whatever the fanout.
 *
 * Patterns (pattern.c) are indexed by their literal prefix, the bytes
 * before the first '*', '?', '[' or '\', capped at GOBLIN__PS_PREFIX_MAX:
 * a pattern can only match a channel that starts with its prefix, so
 * PUBLISH probes one bucket per distinct prefix length in use and runs
 * Redis's matcher only on the patterns of the buckets it finds. Thousands
 * of patterns with distinct prefixes cost a few probes, not thousands of
 * matches.
 *
 * Memory comes from the store's allocator (it shows in used_memory); every
 * call that can fail leaves the registry as it was.
 */
#ifndef GOBLIN_PUBSUB_H
#define GOBLIN_PUBSUB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "goblin/common.h"

typedef struct goblin_store goblin_store;

/* The three kinds of subscription, in the order CLIENT LIST shows them. */
enum goblin__ps_kind {
    GOBLIN__PS_CHANNEL = 0, /* SUBSCRIBE */
    GOBLIN__PS_PATTERN = 1, /* PSUBSCRIBE */
    GOBLIN__PS_SHARD = 2,   /* SSUBSCRIBE */
};
#define GOBLIN__PS_KINDS 3

#define GOBLIN__PS_PREFIX_MAX 32

struct goblin__ps_sub;

/* A channel or a pattern and its subscribers. Most channels have one
 * subscriber: until a second one comes (capsubs 0) it is held in `one`,
 * with no array; goblin__ps_subs() gives the subscribers either way.
 * 40 bytes before the name. */
struct goblin__ps_chan {
    uint64_t hash;                 /* of the name */
    union {
        struct goblin__ps_sub **subs; /* capsubs > 0: in subscription
                                       * order, mostly */
        struct goblin__ps_sub *one;   /* capsubs 0: nsubs is 0 or 1 */
    };
    uint32_t nsubs, capsubs;
    uint32_t prefix;               /* patterns: bytes of the indexed prefix */
    uint32_t len;
    struct goblin__ps_chan *pnext; /* patterns: the prefix bucket's chain */
    unsigned char name[];          /* len bytes */
};

struct goblin__ps_sub {
    uint64_t hash; /* of (chan, owner): the subscription table */
    struct goblin__ps_chan *chan;
    void *owner;
    uint32_t ci;   /* index in the client's array */
    uint32_t chi;  /* index in chan->subs */
};

/* The subscribers of ch, nsubs of them. */
static inline struct goblin__ps_sub *const *
goblin__ps_subs(const struct goblin__ps_chan *ch)
{
    return ch->capsubs == 0 ? &ch->one : ch->subs;
}

/* A subscriber's side: its subscriptions of each kind. Zero is empty. */
struct goblin__ps_client {
    struct goblin__ps_sub **v[GOBLIN__PS_KINDS];
    uint32_t n[GOBLIN__PS_KINDS], cap[GOBLIN__PS_KINDS];
};

/* An open-addressing table of pointers to objects whose first member is
 * their uint64_t hash. */
struct goblin__ps_table {
    void **slot;
    size_t mask; /* slots - 1; 0 with no slots */
    size_t count;
};

struct goblin__ps_registry {
    goblin_store *st;
    uint64_t secret; /* hash secret, from the store's seed */
    struct goblin__ps_table names[GOBLIN__PS_KINDS]; /* goblin__ps_chan */
    struct goblin__ps_table subs;                    /* goblin__ps_sub */
    /* Pattern index: buckets by prefix (goblin__ps_chan chains whose
     * first pattern's name holds the prefix bytes), and how many buckets
     * have each prefix length, with one bit per length in use. */
    struct goblin__ps_table buckets;
    uint32_t nlen[GOBLIN__PS_PREFIX_MAX + 1];
    uint64_t lenmask;
};

/* Zeroed is not enough: init takes the store. */
void goblin__ps_init(struct goblin__ps_registry *r, goblin_store *st);
/* Frees the registry's memory. Every client must have left first
 * (goblin__ps_leave_all), or its subscriptions are freed under it. */
void goblin__ps_free(struct goblin__ps_registry *r);

/* Subscribes owner (whose side is c) to name of kind k. Returns 1 when it
 * is new, 0 when owner had it already, GOBLIN_ENOMEM (nothing changed). */
int goblin__ps_subscribe(struct goblin__ps_registry *r,
                         struct goblin__ps_client *c, void *owner,
                         enum goblin__ps_kind k, struct goblin_slice name);
/* Returns 1 when owner was subscribed to name of kind k (and no longer
 * is), else 0. */
int goblin__ps_unsubscribe(struct goblin__ps_registry *r,
                           struct goblin__ps_client *c, void *owner,
                           enum goblin__ps_kind k, struct goblin_slice name);
/* Drops every subscription of c (all kinds). */
void goblin__ps_leave_all(struct goblin__ps_registry *r,
                          struct goblin__ps_client *c);

/* Subscriptions of c of kind k, and their total. */
static inline uint32_t goblin__ps_count(const struct goblin__ps_client *c,
                                        enum goblin__ps_kind k)
{
    return c->n[k];
}
static inline uint32_t goblin__ps_total(const struct goblin__ps_client *c)
{
    return c->n[0] + c->n[1] + c->n[2];
}

/* The channel (or pattern) named name of kind k, or NULL. */
struct goblin__ps_chan *goblin__ps_find(const struct goblin__ps_registry *r,
                                        enum goblin__ps_kind k,
                                        struct goblin_slice name);
/* How many distinct channels (patterns) of kind k have subscribers. */
static inline size_t goblin__ps_names(const struct goblin__ps_registry *r,
                                      enum goblin__ps_kind k)
{
    return r->names[k].count;
}
/* Calls fn for every channel of kind k, in table order. */
void goblin__ps_each(const struct goblin__ps_registry *r,
                     enum goblin__ps_kind k,
                     void (*fn)(void *ctx, const struct goblin__ps_chan *ch),
                     void *ctx);

/* What a delivery sees: the subscriber, the channel the message went to,
 * and the pattern it matched (NULL for a channel subscription). */
typedef void goblin__ps_deliver(void *ctx, void *owner,
                                const struct goblin__ps_chan *pattern);

/* PUBLISH (shard false) or SPUBLISH (shard true) of one message: calls
 * deliver for every subscriber of channel, then, for PUBLISH, for every
 * subscription to a pattern that matches it. Returns the number of
 * deliveries. deliver must not change the registry. */
size_t goblin__ps_publish(const struct goblin__ps_registry *r, bool shard,
                          struct goblin_slice channel,
                          goblin__ps_deliver *deliver, void *ctx);

/* Bytes the registry holds for one subscription of a client of kind k (for
 * CLIENT LIST and MEMORY figures), approximately. */
size_t goblin__ps_client_mem(const struct goblin__ps_client *c);

/* pattern.c: the pattern index. */
uint32_t goblin__ps_prefix_len(struct goblin_slice pattern);
int goblin__ps_index_add(struct goblin__ps_registry *r,
                         struct goblin__ps_chan *p);
void goblin__ps_index_remove(struct goblin__ps_registry *r,
                             struct goblin__ps_chan *p);
void goblin__ps_index_free(struct goblin__ps_registry *r);
/* Calls deliver for each subscription to a pattern matching channel;
 * returns how many. */
size_t goblin__ps_index_match(const struct goblin__ps_registry *r,
                              struct goblin_slice channel,
                              goblin__ps_deliver *deliver, void *ctx);

/* registry.c: the table primitives pattern.c shares. */
void *goblin__ps_table_find(const struct goblin__ps_table *t, uint64_t hash,
                            bool (*eq)(const void *obj, const void *key),
                            const void *key);
int goblin__ps_table_add(goblin_store *st, struct goblin__ps_table *t,
                         void *obj);
void goblin__ps_table_remove(struct goblin__ps_table *t, void *obj);
void goblin__ps_table_free(goblin_store *st, struct goblin__ps_table *t);

#endif
