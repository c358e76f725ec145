/* debug_digest.c - DEBUG DIGEST and DEBUG DIGEST-VALUE: Redis 7.0's
 * digest of a dataset or of values (debug.c computeDatasetDigest and
 * xorObjectDigest), the same 40 hex digits redis-server gives for the
 * same data.
 *
 * Unordered things (keys, set members, hash pairs, sorted-set pairs) are
 * combined by xor of their SHA-1s, ordered ones (list elements, the parts
 * of one pair) by mixing: digest = SHA1(digest xor SHA1(data)). A value
 * starts with its Redis type number (string 0, list 1, set 2, zset 3,
 * hash 4, big-endian); a key with a deadline xors in "!!expire!!"; each
 * non-empty database mixes its number into the whole first. Scores are
 * written "%.17g", as Redis 7.0 writes them here.
 */
#include <stdio.h>
#include <string.h>

#include "debug.h"
#include "engine/session.h"
#include "goblin/keys.h"
#include "store/hash.h"
#include "store/keyspace.h"
#include "store/list.h"
#include "store/set.h"
#include "store/zset.h"
#include "goblin/sha1.h"

static void xor_digest(uint8_t d[20], const void *p, size_t n)
{
    uint8_t h[GOBLIN_SHA1_LEN];

    goblin_sha1(p, n, h);
    for (int i = 0; i < 20; i++)
        d[i] ^= h[i];
}

static void mix_digest(uint8_t d[20], const void *p, size_t n)
{
    xor_digest(d, p, n);
    goblin_sha1(d, 20, d);
}

static void mix_u32(uint8_t d[20], uint32_t v)
{
    uint8_t b[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8),
                    (uint8_t)v};

    mix_digest(d, b, 4);
}

static int hash_pair(void *ctx, struct goblin_slice f, struct goblin_slice v)
{
    uint8_t e[20] = {0};

    mix_digest(e, f.ptr, f.len);
    mix_digest(e, v.ptr, v.len);
    xor_digest(ctx, e, 20);
    return 0;
}

static int zset_pair(void *ctx, struct goblin_slice m, double score)
{
    uint8_t e[20] = {0};
    char buf[64];
    int n = snprintf(buf, sizeof(buf), "%.17g", score);

    mix_digest(e, m.ptr, m.len);
    mix_digest(e, buf, (size_t)n);
    xor_digest(ctx, e, 20);
    return 0;
}

static int set_member(void *ctx, const struct goblin__set_elem *e)
{
    xor_digest(ctx, e->s.ptr, e->s.len);
    return 0;
}

void goblin__value_digest(goblin_store *st, uint32_t id, uint8_t d[20])
{
    const uint8_t *rec = goblin__key_rec(st, id);
    enum goblin_type type = goblin__rec_type(rec);
    struct goblin__list_iter it;
    struct goblin_slice e;
    const void *obj;

    switch (type) {
    case GOBLIN_TYPE_STRING:
        mix_u32(d, 0);
        e = goblin__rec_str(rec);
        mix_digest(d, e.ptr, e.len);
        break;
    case GOBLIN_TYPE_LIST:
        mix_u32(d, 1);
        obj = goblin__rec_obj(rec);
        goblin__list_iter_init(&it, obj, 0, false);
        while (goblin__list_iter_next(&it, &e))
            mix_digest(d, e.ptr, e.len);
        break;
    case GOBLIN_TYPE_SET:
        mix_u32(d, 2);
        goblin__set_obj_foreach(goblin__rec_obj(rec), set_member, d);
        break;
    case GOBLIN_TYPE_ZSET:
        mix_u32(d, 3);
        goblin__zset_obj_foreach(goblin__rec_obj(rec), zset_pair, d);
        break;
    default:
        mix_u32(d, 4);
        goblin__hash_obj_foreach(goblin__rec_obj(rec), hash_pair, d);
        break;
    }
    if (goblin__key_deadline(st, id) >= 0)
        xor_digest(d, "!!expire!!", 10);
}

void goblin__dataset_digest(goblin_engine *eng, uint8_t out[20])
{
    memset(out, 0, 20);
    for (int db = 0; db < eng->ndbs; db++) {
        goblin_store *st = goblin__db_peek(eng, db);
        size_t n = st != NULL ? goblin_key_count(st) : 0;

        if (n == 0)
            continue;
        mix_u32(out, (uint32_t)db);
        for (uint32_t id = 0; id < n; id++) {
            struct goblin__rec r;
            uint8_t d[20] = {0};

            goblin__rec_parse(goblin__key_rec(st, id), &r);
            mix_digest(d, r.key, r.klen);
            goblin__value_digest(st, id, d);
            xor_digest(out, d, 20);
        }
    }
}
