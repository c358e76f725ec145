/* zset_full.c - the full form of sorted sets: arena records (ids are
 * their positions), a swiss index from member bytes to id, and the B+tree
 * of (score, id).
 *
 * Invariants: the arena's live records, the index's entries and the
 * tree's records are the same members; a record's score equals its tree
 * record's score.
 *
 * Compaction: removals leave dead records in the arena; new members of
 * the same size reuse them (zset_arena.c). Once dead bytes pass a fifth
 * of the records anyway, writes move the live records of the oldest chunk
 * to the tail, at most CLEAN_MOVES per write (retargeting the index and
 * the tree), and drop the chunk, until dead bytes are under a ninth. Records only
 * move to younger chunks, so a ZSCAN walking positions upward (zset_ops.c)
 * meets a moved member again rather than missing it. The oldest chunk is
 * taken whatever its dead share: with dead bytes over a fifth, a full
 * round frees at least that much for moving the rest.
 */
#include <assert.h>

#include "zset_impl.h"

#define CLEAN_MIN_DEAD 1024
#define CLEAN_MOVES 8
#define CLEAN_VISITS 64

static uint64_t ops_hash(const void *owner, uint32_t id)
{
    const struct zfull *z = owner;
    size_t len;
    const uint8_t *m = za_member(&z->ar, id, &len);

    return zf_hash(z, m, len);
}

static bool ops_eq(const void *owner, uint32_t id, const void *key,
                   size_t len)
{
    const struct zfull *z = owner;
    size_t n;
    const uint8_t *m = za_member(&z->ar, id, &n);

    return n == len && goblin__bytes_eq(m, key, len);
}

const struct goblin__swiss_ops goblin__zf_swiss_ops = {ops_hash, ops_eq};

struct zfull *goblin__zf_new(goblin_store *st)
{
    struct zfull *z = goblin__alloc(st, sizeof(*z));

    if (z == NULL)
        return NULL;
    memset(z, 0, sizeof(*z));
    z->kind = ZK_FULL;
    z->secret = st->hash_secret;
    z->tag = (uint16_t)(1 + goblin__rand64(st) % 0xFFFF);
    goblin__za_init(&z->ar);
    goblin__swiss_init(&z->idx);
    goblin__zt_init(&z->tree, &z->ar);
    return z;
}

void goblin__zf_free(goblin_store *st, struct zfull *z)
{
    goblin__zt_free(st, &z->tree);
    goblin__swiss_free(st, &z->idx);
    goblin__za_free(st, &z->ar);
    goblin__free(st, z, sizeof(*z));
}

size_t goblin__zf_bytes(const struct zfull *z)
{
    return sizeof(*z) + z->ar.bytes + goblin__swiss_bytes(&z->idx) +
           z->tree.bytes;
}

static uint64_t id_hash(const struct zfull *z, uint32_t id)
{
    return ops_hash(z, id);
}

int goblin__zf_insert(goblin_store *st, struct zfull *z, const void *m, size_t len,
                      double score, uint32_t *id)
{
    uint32_t pos;
    uint64_t h = zf_hash(z, m, len);
    int rc;

    if ((rc = goblin__za_append(st, &z->ar, m, len, score, &pos)) != 0)
        return rc;
    rc = goblin__swiss_insert(st, &z->idx, &goblin__zf_swiss_ops, z, h, pos);
    if (rc != 0)
        goto fail_arena;
    if ((rc = goblin__zt_insert(st, &z->tree, score, pos)) != 0)
        goto fail_index;
    *id = pos;
    return 0;
fail_index:
    goblin__swiss_erase(st, &z->idx, &goblin__zf_swiss_ops, z, h, pos);
fail_arena:
    goblin__za_kill(st, &z->ar, pos);
    return rc;
}

/* Drops id from the index and the arena (not the tree). */
static void forget(goblin_store *st, struct zfull *z, uint32_t id)
{
    goblin__swiss_erase(st, &z->idx, &goblin__zf_swiss_ops, z, id_hash(z, id), id);
    goblin__za_kill(st, &z->ar, id);
}

void goblin__zf_remove(goblin_store *st, struct zfull *z, uint32_t id)
{
    goblin__zt_erase(st, &z->tree, za_score(&z->ar, id), id);
    forget(st, z, id);
}

struct range_ctx {
    goblin_store *st;
    struct zfull *z;
};

static void range_forget(void *ctx, double score, uint32_t id)
{
    struct range_ctx *c = ctx;

    (void)score;
    forget(c->st, c->z, id);
}

void goblin__zf_remove_range(goblin_store *st, struct zfull *z, size_t from,
                             size_t n)
{
    struct range_ctx c = {st, z};

    goblin__zt_erase_range(st, &z->tree, from, n, range_forget, &c);
}

int goblin__zf_apply(goblin_store *st, struct zfull *z, struct zchange *c, size_t n)
{
    size_t i;
    int rc = 0;

    /* One member changing its score: the common ZADD / ZINCRBY. */
    if (n == 1 && c->exists) {
        if ((rc = goblin__zt_update(st, &z->tree, c->old, c->score, c->id)) == 0)
            za_set_score(&z->ar, c->id, c->score);
        return rc;
    }
    /* First everything that may fail: new members, and a second tree
     * record at the new score for members that move. */
    for (i = 0; i < n; i++) {
        if (!c[i].exists)
            rc = goblin__zf_insert(st, z, c[i].m, c[i].len, c[i].score, &c[i].id);
        else
            rc = goblin__zt_insert(st, &z->tree, c[i].score, c[i].id);
        if (rc != 0)
            goto undo;
    }
    /* Then what cannot: drop the old records, store the new scores. */
    for (i = 0; i < n; i++) {
        if (c[i].exists) {
            goblin__zt_erase(st, &z->tree, c[i].old, c[i].id);
            za_set_score(&z->ar, c[i].id, c[i].score);
        }
    }
    return 0;
undo:
    while (i-- > 0) {
        goblin__zt_erase(st, &z->tree, c[i].score, c[i].id);
        if (!c[i].exists)
            forget(st, z, c[i].id);
    }
    return rc;
}

/* Moves the record at pos to the tail. */
static int clean_move(goblin_store *st, struct zfull *z, uint32_t pos)
{
    uint32_t npos;
    double score = za_score(&z->ar, pos);
    int rc;

    if ((rc = goblin__za_move(st, &z->ar, pos, &npos)) != 0)
        return rc;
    goblin__swiss_retarget(&z->idx, id_hash(z, npos), pos, npos);
    goblin__zt_retarget(&z->tree, score, pos, npos);
    return 0;
}

static bool clean_wanted(const struct zarena *a)
{
    return a->dead >= CLEAN_MIN_DEAD && a->dead * 4 > a->live;
}

void goblin__zf_clean_step(goblin_store *st, struct zfull *z)
{
    struct zarena *a = &z->ar;
    unsigned moves = 0, visits = 0;
    uint8_t *c;

    if (!a->cleaning) {
        if (!clean_wanted(a))
            return;
        a->cleaning = true;
        z->clean_off = ZA_HDR;
    }
    if (a->nchunks == 1)
        goblin__za_seal(st, a);
    c = za_chunk_at(a, a->base);
    while (z->clean_off < ((struct za_chunk *)(void *)c)->used) {
        uint32_t pos = za_pos(a->base, z->clean_off);
        uint8_t *r = c + z->clean_off;
        size_t size = za_rec_size(r);

        if (moves == CLEAN_MOVES || visits++ == CLEAN_VISITS)
            return;
        if (!za_rec_dead(r)) {
            if (clean_move(st, z, pos) != 0)
                return; /* no memory now: try again on a later write */
            moves++;
            c = za_chunk_at(a, a->base);
        } else {
            goblin__za_unlist(a, pos);
        }
        z->clean_off += (uint32_t)size;
    }
    goblin__za_drop_base(st, a);
    z->clean_off = ZA_HDR;
    if (a->dead * 9 <= a->live + a->dead)
        a->cleaning = false;
}
