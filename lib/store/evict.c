/* evict.c - access times and eviction by sampling (evict.h).
 *
 * Each key carries a 16-bit stamp of st->lru_clock, the store clock in
 * seconds modulo 2^16, set whenever a lookup finds the key (keyspace.c
 * keeps it in the spare top bits of the key's page slot). The idle time
 * is the clock minus the stamp, modulo 2^16. So that it never wraps, the
 * cron caps every stamp older than 2^15 seconds (about 9 hours) at that
 * age, walking the keyspace a few keys per call.
 *
 * With an LFU policy (st->lfu) the stamp holds Redis's LFU data in 16
 * bits: the minute of its last decay, modulo 256, in the high byte and the
 * logarithmic access counter in the low byte. An access first decays the
 * counter by one per lfu-decay-time minutes elapsed, then increments it
 * with probability 1 / ((counter - 5) * lfu-log-factor + 1), as Redis's
 * updateLFU. The cron's walk applies the decay to any key whose last
 * decay is over 128 minutes old, so the 8-bit minute never wraps.
 *
 * Eviction works as Redis's evict.c does: draw `samples` random keys
 * (from all keys, or from the expiry array for the volatile policies),
 * score each (idle seconds for LRU, the time left turned around for TTL),
 * merge them into a pool of the best 16 candidates seen so far, then
 * evict the best candidate that still exists. Pool entries hold copies of
 * key names, since ids move when keys are removed. Random policies evict
 * one random key without a pool.
 */
#include <assert.h>
#include <stdlib.h>

#include "evict.h"
#include "store.h"

#define AGE_CAP 0x8000u

void goblin__lru_tick(goblin_store *st)
{
    int64_t now = goblin__now_ms(st);
    uint64_t ms = (uint64_t)(now < 0 ? 0 : now);

    st->lru_clock = (uint16_t)(ms / 1000);
    st->lfu_minute = (uint8_t)(ms / 60000);
}

uint16_t goblin__stamp_new(const goblin_store *st)
{
    if (st->lfu)
        return (uint16_t)(st->lfu_minute << 8 | GOBLIN__LFU_INIT);
    return st->lru_clock;
}

/* Minutes since the stamp's last decay (modulo 256). */
static unsigned lfu_elapsed(const goblin_store *st, uint16_t stamp)
{
    return (uint8_t)(st->lfu_minute - (stamp >> 8));
}

/* The stamp's counter after its decay to now. */
static unsigned lfu_decayed(const goblin_store *st, uint16_t stamp)
{
    unsigned c = stamp & 0xFF, periods;

    if (st->lfu_decay_time <= 0)
        return c;
    periods = lfu_elapsed(st, stamp) / (unsigned)st->lfu_decay_time;
    return periods > c ? 0 : c - periods;
}

uint16_t goblin__stamp_touch(goblin_store *st, uint16_t old)
{
    unsigned c = lfu_decayed(st, old);

    if (c < 255) {
        double base = c > GOBLIN__LFU_INIT ? c - GOBLIN__LFU_INIT : 0;
        double p = 1.0 / (base * st->lfu_log_factor + 1);
        double r = (double)(goblin__rand64(st) >> 11) * 0x1p-53;

        if (r < p)
            c++;
    }
    return (uint16_t)(st->lfu_minute << 8 | c);
}

unsigned goblin__key_freq(const goblin_store *st, uint32_t id)
{
    return lfu_decayed(st, goblin__key_stamp(st, id));
}

uint64_t goblin__key_idle(const goblin_store *st, uint32_t id)
{
    return (uint16_t)(st->lru_clock - goblin__key_stamp(st, id));
}

void goblin__lru_age_step(goblin_store *st, size_t n)
{
    struct goblin__keyspace *ks = &st->ks;

    while (n-- > 0 && ks->count > 0) {
        uint32_t id;

        if (ks->lru_cursor >= ks->count)
            ks->lru_cursor = 0;
        id = (uint32_t)ks->lru_cursor++;
        if (st->lfu) {
            uint16_t stamp = goblin__key_stamp(st, id);
            unsigned el = lfu_elapsed(st, stamp);
            unsigned keep = st->lfu_decay_time > 0
                                ? el % (unsigned)st->lfu_decay_time : 0;

            /* Decay now, keeping the part of a period not yet due. */
            if (el > 128)
                goblin__key_set_stamp(
                    st, id, (uint16_t)((uint8_t)(st->lfu_minute - keep) << 8 |
                                       lfu_decayed(st, stamp)));
        } else if (goblin__key_idle(st, id) > AGE_CAP) {
            goblin__key_set_stamp(st, id,
                                  (uint16_t)(st->lru_clock - AGE_CAP));
        }
    }
}

static struct goblin_slice key_of(const goblin_store *st, uint32_t id)
{
    struct goblin__rec r;

    goblin__rec_parse(goblin__key_rec(st, id), &r);
    return (struct goblin_slice){r.key, r.klen};
}

static void evict_id(goblin_store *st, uint32_t id)
{
    goblin__key_gone(st, GOBLIN__GONE_EVICTED, key_of(st, id));
    goblin__key_drop_id(st, id);
}

static void ent_free(goblin_store *st, struct goblin__evpool_ent *e)
{
    if (e->key != NULL)
        goblin__free(st, e->key, e->klen == 0 ? 1 : e->klen);
    e->key = NULL;
}

void goblin__evpool_clear(goblin_store *st)
{
    struct goblin__evpool *p = &st->evpool;

    for (size_t i = 0; i < p->n; i++)
        ent_free(st, &p->e[i]);
    p->n = 0;
}

static bool pool_has(const struct goblin__evpool *p, struct goblin_slice k)
{
    for (size_t i = 0; i < p->n; i++)
        if (p->e[i].klen == k.len &&
            (k.len == 0 || memcmp(p->e[i].key, k.ptr, k.len) == 0))
            return true;
    return false;
}

/* Puts key with score into the pool, kept sorted ascending; when full,
 * only a score above the worst one gets in, pushing that one out. */
static void pool_insert(goblin_store *st, struct goblin_slice key,
                        uint64_t score)
{
    struct goblin__evpool *p = &st->evpool;
    struct goblin__evpool_ent e = {score, NULL, key.len};
    size_t at = 0;

    if (pool_has(p, key))
        return;
    while (at < p->n && p->e[at].score < score)
        at++;
    if (p->n == GOBLIN__EVPOOL && at == 0)
        return;
    e.key = goblin__alloc(st, key.len == 0 ? 1 : key.len);
    if (e.key == NULL)
        return; /* the pool is a help, not a need */
    if (key.len > 0)
        memcpy(e.key, key.ptr, key.len);
    if (p->n == GOBLIN__EVPOOL) { /* drop the lowest, shift left */
        ent_free(st, &p->e[0]);
        memmove(p->e, p->e + 1, (at - 1) * sizeof(p->e[0]));
        at--;
    } else {
        memmove(p->e + at + 1, p->e + at, (p->n - at) * sizeof(p->e[0]));
        p->n++;
    }
    p->e[at] = e;
}

/* The score of the key at id: for TTL the deadline turned around, for
 * LFU 255 minus the counter, for LRU the idle seconds. */
enum { SCORE_LRU, SCORE_LFU, SCORE_TTL };

static uint64_t score_of(const goblin_store *st, uint32_t id, int kind)
{
    if (kind == SCORE_TTL)
        return UINT64_MAX - (uint64_t)goblin__key_deadline(st, id);
    if (kind == SCORE_LFU)
        return 255 - goblin__key_freq(st, id);
    return goblin__key_idle(st, id);
}

static uint32_t random_id(goblin_store *st, bool volatile_only)
{
    const struct goblin__keyspace *ks = &st->ks;

    if (volatile_only)
        return goblin__exp_id(st, goblin__rand64(st) % ks->exp_count);
    return (uint32_t)(goblin__rand64(st) % ks->count);
}

/* Takes the best pool entry whose key still exists (with a deadline, for
 * the volatile policies) and evicts it. */
static int evict_from_pool(goblin_store *st, bool volatile_only)
{
    struct goblin__evpool *p = &st->evpool;

    while (p->n > 0) {
        struct goblin__evpool_ent e = p->e[--p->n];
        uint32_t id;
        bool found;

        st->no_touch = true; /* looking is not an access */
        found = goblin__key_find(st, (struct goblin_slice){e.key, e.klen},
                                 &id);
        st->no_touch = false;
        if (found && volatile_only && goblin__key_deadline(st, id) < 0)
            found = false;
        ent_free(st, &e);
        if (found) {
            evict_id(st, id);
            return 1;
        }
    }
    return 0;
}

int goblin__evict_one(goblin_store *st, enum goblin__policy policy,
                      unsigned samples)
{
    bool vol = policy == GOBLIN__POLICY_VOLATILE_LRU ||
               policy == GOBLIN__POLICY_VOLATILE_LFU ||
               policy == GOBLIN__POLICY_VOLATILE_RANDOM ||
               policy == GOBLIN__POLICY_VOLATILE_TTL;
    int ttl = policy == GOBLIN__POLICY_VOLATILE_TTL ? SCORE_TTL
              : policy == GOBLIN__POLICY_VOLATILE_LFU ||
                      policy == GOBLIN__POLICY_ALLKEYS_LFU
                  ? SCORE_LFU
                  : SCORE_LRU;
    size_t have;

    if (policy == GOBLIN__POLICY_NOEVICTION)
        return 0;
    goblin__write_begin(st); /* no view of an earlier call is in use */
    goblin__lru_tick(st);
    have = vol ? st->ks.exp_count : st->ks.count;
    if (have == 0)
        return 0;
    if (policy == GOBLIN__POLICY_ALLKEYS_RANDOM ||
        policy == GOBLIN__POLICY_VOLATILE_RANDOM) {
        evict_id(st, random_id(st, vol));
        return 1;
    }
    if (samples == 0)
        samples = 1;
    /* Sampling can only miss when the pool's keys are all gone; a few
     * rounds refill it (Redis loops the same way). */
    for (int round = 0; round < 16; round++) {
        have = vol ? st->ks.exp_count : st->ks.count;
        if (have == 0)
            return 0;
        for (unsigned i = 0; i < samples; i++) {
            uint32_t id = random_id(st, vol);

            pool_insert(st, key_of(st, id), score_of(st, id, ttl));
        }
        if (evict_from_pool(st, vol))
            return 1;
    }
    /* The pool could not hold a copy: evict the best of one sample. */
    {
        uint32_t best = random_id(st, vol);

        for (unsigned i = 1; i < samples; i++) {
            uint32_t id = random_id(st, vol);

            if (score_of(st, id, ttl) > score_of(st, best, ttl))
                best = id;
        }
        evict_id(st, best);
    }
    return 1;
}
