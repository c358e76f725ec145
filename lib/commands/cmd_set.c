/* cmd_set.c - set commands: SADD, SREM, SISMEMBER, SMISMEMBER, SCARD,
 * SMEMBERS, SRANDMEMBER, SPOP, SMOVE, SSCAN, SINTER, SINTERCARD, SUNION,
 * SDIFF and the STORE forms, with Redis 7.0's argument checks and texts
 * (t_set.c). SMEMBERS, SPOP with a count, SINTER, SUNION and SDIFF reply
 * a set (RESP3 '~'); SRANDMEMBER with a count an array, as Redis does.
 *
 * Each command is an execution function (exec.h), which SBE's typed
 * requests call too, and a RESP handler that parses argv and calls it;
 * the execution functions publish Redis's keyspace events (notify.h).
 */
#include <string.h>

#include "exec.h"
#include "goblin/keys.h"
#include "goblin/set.h"
#include "notify.h"
#include "respond.h"
#include "engine/session.h"
#include "stream/propagate.h"

static void int_reply(goblin__exec *x, int64_t rc)
{
    if (rc < 0)
        goblin__reply_code(x, (int)rc);
    else
        goblin__reply_int(x, rc);
}

/* Streams members as replies: begin writes the header. */
struct stream {
    goblin__exec *x;
    bool set; /* a set reply, else an array */
};

static int stream_begin(void *ctx, uint64_t n)
{
    struct stream *o = ctx;

    if (o->set)
        goblin__reply_set(o->x, (size_t)n);
    else
        goblin__reply_array(o->x, (size_t)n);
    return 0;
}

static int stream_member(void *ctx, struct goblin_slice m)
{
    struct stream *o = ctx;

    goblin__reply_slice(o->x, m);
    return 0;
}

/* Gathers members into the session's scratch: a first pass (count)
 * measures, a second (fill) copies the bytes behind the n slices, since an
 * integer member's text lasts only for its visit. */
struct gather {
    size_t n, bytes;
    struct goblin_slice *v;
    char *text;
};

static int gather_count(void *ctx, struct goblin_slice m)
{
    struct gather *g = ctx;

    g->n++;
    g->bytes += m.len;
    return 0;
}

static int gather_fill(void *ctx, struct goblin_slice m)
{
    struct gather *g = ctx;

    if (m.len != 0)
        memcpy(g->text, m.ptr, m.len);
    g->v[g->n].ptr = g->text;
    g->v[g->n++].len = m.len;
    g->text += m.len;
    return 0;
}

/* Makes room for g's n slices and bytes; then g->n = 0, ready to fill. */
static int gather_reserve(goblin__exec *x, struct gather *g)
{
    size_t slots = g->n + (g->bytes + sizeof(struct goblin_slice) - 1) /
                              sizeof(struct goblin_slice);

    if (goblin__scratch_reserve(x->sess, slots) != 0)
        return GOBLIN_ENOMEM;
    g->v = x->sess->scratch;
    g->text = (char *)(g->v + g->n);
    g->n = 0;
    return 0;
}

void goblin__exec_sadd(goblin__exec *x, struct goblin_slice key,
                       const struct goblin_slice *members, size_t n)
{
    int64_t rc = goblin_set_add(x->st, key, members, n);

    int_reply(x, rc);
    if (rc > 0)
        goblin__notify(x, GOBLIN__NOTIFY_SET, "sadd", key);
}

void goblin__cmd_sadd(goblin__exec *x, int argc,
                      const struct goblin_slice *argv)
{
    goblin__exec_sadd(x, argv[1], argv + 2, (size_t)argc - 2);
}

void goblin__exec_srem(goblin__exec *x, struct goblin_slice key,
                       const struct goblin_slice *members, size_t n)
{
    int64_t rc = goblin_set_rem(x->st, key, members, n);

    int_reply(x, rc);
    if (rc > 0)
        goblin__notify_removed(x, GOBLIN__NOTIFY_SET, "srem", key);
}

void goblin__cmd_srem(goblin__exec *x, int argc,
                      const struct goblin_slice *argv)
{
    goblin__exec_srem(x, argv[1], argv + 2, (size_t)argc - 2);
}

void goblin__exec_sismember(goblin__exec *x, struct goblin_slice key,
                            struct goblin_slice member)
{
    int_reply(x, goblin_set_ismember(x->st, key, member));
}

void goblin__cmd_sismember(goblin__exec *x, int argc,
                           const struct goblin_slice *argv)
{
    (void)argc;
    goblin__exec_sismember(x, argv[1], argv[2]);
}

void goblin__exec_smismember(goblin__exec *x, struct goblin_slice key,
                             const struct goblin_slice *members, size_t n)
{
    uint8_t *out;
    int rc;

    if ((out = goblin__scratch_bytes(x->sess, n)) == NULL) {
        goblin__reply_code(x, GOBLIN_ENOMEM);
        return;
    }
    rc = goblin_set_mismember(x->st, key, members, n, out);
    if (rc < 0) {
        goblin__reply_code(x, rc);
        return;
    }
    goblin__reply_array(x, n);
    for (size_t i = 0; i < n; i++)
        goblin__reply_int(x, out[i]);
}

void goblin__cmd_smismember(goblin__exec *x, int argc,
                            const struct goblin_slice *argv)
{
    goblin__exec_smismember(x, argv[1], argv + 2, (size_t)argc - 2);
}

void goblin__exec_scard(goblin__exec *x, struct goblin_slice key)
{
    int_reply(x, goblin_set_card(x->st, key));
}

void goblin__cmd_scard(goblin__exec *x, int argc,
                       const struct goblin_slice *argv)
{
    (void)argc;
    goblin__exec_scard(x, argv[1]);
}

void goblin__exec_smembers(goblin__exec *x, struct goblin_slice key)
{
    struct stream o = {x, true};
    struct gather g = {0, 0, NULL, NULL};
    int64_t n = goblin_set_card(x->st, key);

    goblin__reads_done(x);
    if (n < 0) {
        goblin__reply_code(x, (int)n);
        return;
    }
    if (x->typed == NULL) {
        stream_begin(&o, (uint64_t)n);
        goblin_set_foreach(x->st, key, stream_member, &o);
        return;
    }
    goblin_set_foreach(x->st, key, gather_count, &g);
    if (gather_reserve(x, &g) != 0) {
        goblin__reply_code(x, GOBLIN_ENOMEM);
        return;
    }
    goblin_set_foreach(x->st, key, gather_fill, &g);
    goblin__reply_strings(x, g.v, g.n, false);
}

void goblin__cmd_smembers(goblin__exec *x, int argc,
                          const struct goblin_slice *argv)
{
    (void)argc;
    goblin__exec_smembers(x, argv[1]);
}

static int first_member(void *ctx, struct goblin_slice m)
{
    goblin__reply_slice(ctx, m);
    return 0;
}

void goblin__exec_srandmember(goblin__exec *x, struct goblin_slice key,
                              bool has_count, int64_t count)
{
    struct stream o = {x, false};
    int64_t rc;

    if (!has_count) {
        rc = goblin_set_random(x->st, key, 1, NULL, first_member, x);
        if (rc == 0)
            goblin__reply_null(x);
        else if (rc < 0)
            goblin__reply_code(x, (int)rc);
        return;
    }
    rc = goblin_set_random(x->st, key, count, stream_begin, stream_member,
                           &o);
    if (rc < 0)
        goblin__reply_code(x, (int)rc);
}

void goblin__cmd_srandmember(goblin__exec *x, int argc,
                             const struct goblin_slice *argv)
{
    int64_t count = 0;

    if (argc > 3) {
        goblin__reply_error(x, GOBLIN__ERR_SYNTAX);
        return;
    }
    if (argc == 3 && !goblin__arg_int64(x, argv[2], &count, NULL))
        return;
    if (count == INT64_MIN) {
        goblin__reply_error(x, "ERR value is out of range, value must "
                               "between -9223372036854775807 and "
                               "9223372036854775807");
        return;
    }
    goblin__exec_srandmember(x, argv[1], argc == 3, count);
}

/* SPOP's members go out as SREM key member each (Redis 7.0's
 * spopWithCountCommand), or as DEL key when the whole set went. */
struct spopped {
    struct stream o;
    struct goblin_slice key;
    bool whole; /* DEL went out: no SREM */
};

static int spop_member(void *ctx, struct goblin_slice m)
{
    struct spopped *p = ctx;

    if (!p->whole)
        goblin__propagate_as(p->o.x, 3,
                             (struct goblin_slice[]){{"SREM", 4}, p->key, m});
    goblin__reply_slice(p->o.x, m);
    return 0;
}

static void spop_whole(struct spopped *p, uint64_t count)
{
    int64_t card;

    if (!p->o.x->eng->stream_on)
        return;
    card = goblin_set_card(p->o.x->st, p->key);
    if (card > 0 && count >= (uint64_t)card) {
        goblin__propagate_as(p->o.x, 2,
                             (struct goblin_slice[]){{"DEL", 3}, p->key});
        p->whole = true;
    }
}

void goblin__exec_spop(goblin__exec *x, struct goblin_slice key,
                       bool has_count, uint64_t count)
{
    struct spopped p = {{x, true}, key, false};
    int64_t rc;

    if (!has_count) {
        rc = goblin_set_pop(x->st, key, 1, NULL, spop_member, &p);
        if (rc == 0)
            goblin__reply_null(x);
        else if (rc < 0)
            goblin__reply_code(x, (int)rc);
    } else {
        spop_whole(&p, count);
        rc = goblin_set_pop(x->st, key, count, stream_begin, spop_member,
                            &p);
        if (rc < 0)
            goblin__reply_code(x, (int)rc);
    }
    if (rc > 0)
        goblin__notify_removed(x, GOBLIN__NOTIFY_SET, "spop", key);
}

void goblin__cmd_spop(goblin__exec *x, int argc,
                      const struct goblin_slice *argv)
{
    int64_t count = 0;

    if (argc > 3) {
        goblin__reply_error(x, GOBLIN__ERR_SYNTAX);
        return;
    }
    if (argc == 3 && !goblin__arg_range(x, argv[2], 0, INT64_MAX, &count,
                                        GOBLIN__ERR_POSITIVE))
        return;
    goblin__exec_spop(x, argv[1], argc == 3, (uint64_t)count);
}

void goblin__exec_smove(goblin__exec *x, struct goblin_slice src,
                        struct goblin_slice dst, struct goblin_slice member)
{
    /* Redis reports "sadd" only when dst did not hold member yet. */
    bool had = goblin__notify_on(x, GOBLIN__NOTIFY_SET) &&
               goblin_set_ismember(x->st, dst, member) == 1;
    /* A new dst's "new" comes after src's "srem" (and "del"), as Redis
     * creates dst only then: the store's event is held back. */
    bool fresh = goblin__notify_on(x, GOBLIN__NOTIFY_NEW) &&
                 goblin_key_exists(x->st, dst) != 1;
    uint8_t events = x->st->key_events;
    int64_t rc;

    if (fresh)
        x->st->key_events &= (uint8_t)~GOBLIN__KEY_NEW;
    rc = goblin_set_move(x->st, src, dst, member);
    x->st->key_events = events;
    int_reply(x, rc);
    if (rc != 1 || (src.len == dst.len &&
                    (src.len == 0 || memcmp(src.ptr, dst.ptr, src.len) == 0)))
        return;
    goblin__notify_removed(x, GOBLIN__NOTIFY_SET, "srem", src);
    if (fresh)
        goblin__notify(x, GOBLIN__NOTIFY_NEW, "new", dst);
    if (!had)
        goblin__notify(x, GOBLIN__NOTIFY_SET, "sadd", dst);
}

void goblin__cmd_smove(goblin__exec *x, int argc,
                       const struct goblin_slice *argv)
{
    (void)argc;
    goblin__exec_smove(x, argv[1], argv[2], argv[3]);
}

void goblin__exec_sscan(goblin__exec *x, struct goblin_slice key,
                        uint64_t cursor, const struct goblin_scan_options *o)
{
    struct gather g = {0, 0, NULL, NULL};
    uint64_t next = 0;
    int64_t rc;

    rc = goblin_set_scan(x->st, key, cursor, o->count, o->match,
                         gather_count, &g, &next);
    if (rc < 0) {
        goblin__reply_code(x, (int)rc);
        return;
    }
    if (gather_reserve(x, &g) != 0) {
        goblin__reply_code(x, GOBLIN_ENOMEM);
        return;
    }
    goblin_set_scan(x->st, key, cursor, o->count, o->match, gather_fill, &g,
                    &next);
    goblin__reply_scan(x, next, g.v, g.n);
}

void goblin__cmd_sscan(goblin__exec *x, int argc,
                       const struct goblin_slice *argv)
{
    struct goblin_scan_options o = {{NULL, 0}, GOBLIN_TYPE_NONE, 0};
    uint64_t cursor;
    bool known;

    if (goblin__scan_cursor(x, argv[2], &cursor) &&
        goblin__scan_key(x, argv[1], GOBLIN_TYPE_SET) &&
        goblin__scan_options(x, argc, argv, 3, false, &o, &known))
        goblin__exec_sscan(x, argv[1], cursor, &o);
}

void goblin__exec_scombine(goblin__exec *x, enum goblin_set_op op,
                           const struct goblin_slice *dst,
                           const struct goblin_slice *keys, size_t n)
{
    struct stream o = {x, true};
    int64_t rc;

    if (dst != NULL) {
        static const char *const events[] = {
            [GOBLIN_SET_INTER] = "sinterstore",
            [GOBLIN_SET_UNION] = "sunionstore",
            [GOBLIN_SET_DIFF] = "sdiffstore",
        };
        bool existed = goblin__notify_on(x, GOBLIN__NOTIFY_GENERIC) &&
                       goblin_key_exists(x->st, *dst);

        goblin__reads_begin(x); /* the sources; the store ends it */
        rc = goblin_set_combine_store(x->st, op, *dst, keys, n);
        int_reply(x, rc);
        goblin__notify_stored(x, GOBLIN__NOTIFY_SET, events[op], *dst, rc,
                              existed);
        return;
    }
    rc = goblin_set_combine(x->st, op, keys, n, stream_begin, stream_member,
                            &o);
    if (rc < 0)
        goblin__reply_code(x, (int)rc);
}

void goblin__cmd_sinter(goblin__exec *x, int argc,
                        const struct goblin_slice *argv)
{
    goblin__exec_scombine(x, GOBLIN_SET_INTER, NULL, argv + 1,
                          (size_t)argc - 1);
}

void goblin__cmd_sunion(goblin__exec *x, int argc,
                        const struct goblin_slice *argv)
{
    goblin__exec_scombine(x, GOBLIN_SET_UNION, NULL, argv + 1,
                          (size_t)argc - 1);
}

void goblin__cmd_sdiff(goblin__exec *x, int argc,
                       const struct goblin_slice *argv)
{
    goblin__exec_scombine(x, GOBLIN_SET_DIFF, NULL, argv + 1,
                          (size_t)argc - 1);
}

void goblin__cmd_sinterstore(goblin__exec *x, int argc,
                             const struct goblin_slice *argv)
{
    goblin__exec_scombine(x, GOBLIN_SET_INTER, &argv[1], argv + 2,
                          (size_t)argc - 2);
}

void goblin__cmd_sunionstore(goblin__exec *x, int argc,
                             const struct goblin_slice *argv)
{
    goblin__exec_scombine(x, GOBLIN_SET_UNION, &argv[1], argv + 2,
                          (size_t)argc - 2);
}

void goblin__cmd_sdiffstore(goblin__exec *x, int argc,
                            const struct goblin_slice *argv)
{
    goblin__exec_scombine(x, GOBLIN_SET_DIFF, &argv[1], argv + 2,
                          (size_t)argc - 2);
}

void goblin__exec_sintercard(goblin__exec *x, const struct goblin_slice *keys,
                             size_t n, uint64_t limit)
{
    int_reply(x, goblin_set_intercard(x->st, keys, n, limit));
}

void goblin__cmd_sintercard(goblin__exec *x, int argc,
                            const struct goblin_slice *argv)
{
    int64_t numkeys, limit = 0;
    int i;

    if (!goblin__arg_range(x, argv[1], 1, INT64_MAX, &numkeys,
                           "ERR numkeys should be greater than 0"))
        return;
    if (numkeys > argc - 2) {
        goblin__reply_error(
            x, "ERR Number of keys can't be greater than number of args");
        return;
    }
    for (i = 2 + (int)numkeys; i < argc; i += 2) {
        if (goblin__arg_is(argv[i], "limit") && argc - i >= 2) {
            if (!goblin__arg_range(x, argv[i + 1], 0, INT64_MAX, &limit,
                                   GOBLIN__ERR_LIMIT_NEGATIVE))
                return;
        } else {
            goblin__reply_error(x, GOBLIN__ERR_SYNTAX);
            return;
        }
    }
    goblin__exec_sintercard(x, argv + 2, (size_t)numkeys, (uint64_t)limit);
}
