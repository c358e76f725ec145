/* argv_form.c - the argv form of every typed SBE request (argv_form.h):
 * one table from template id to the command's name and the function that
 * writes the arguments after it, and the run step that hands the form to
 * the write stream and to MONITOR.
 *
 * The words are spelled as a RESP client spells the same request, option
 * words in upper case, in the order docs/sbe.md gives the fields: a typed
 * request and the RESP command with these words leave the same bytes in
 * the AOF and on replicas, since the stream's rewrites
 * (stream/propagate.c) read the words as they read a RESP command's. The
 * range templates all take ZRANGE's spelling (ZRANGE k min max BYSCORE
 * REV ..., max first under REV, as Redis reads it).
 */
#include <string.h>

#include "argv_form.h"
#include "commands/command.h"
#include "engine/monitor.h"
#include "engine/slowlog.h"
#include "goblin/numtext.h"
#include "stream/propagate.h"

typedef int form_fn(struct goblin__argv_form *f, struct goblin_sbe_msg *m);

/* ---- words ---- */

/* A word of the frame's own bytes (or a literal). */
static void word(struct goblin__argv_form *f, const void *p, size_t n)
{
    struct goblin_slice s = {p != NULL ? p : "", n};

    goblin_buf_append(&f->words, &s, sizeof(s));
}

static void lit(struct goblin__argv_form *f, const char *s)
{
    word(f, s, strlen(s));
}

static void W(struct goblin__argv_form *f, struct goblin_slice s)
{
    word(f, s.ptr, s.len);
}

/* A word made here: its bytes go to f->text; the slice is found when the
 * form is complete (ptr NULL until then: text words are laid out in
 * order, so each starts where the previous one ended). */
static void made(struct goblin__argv_form *f, const void *p, size_t n)
{
    struct goblin_slice s = {NULL, n};

    goblin_buf_append(&f->text, p, n);
    goblin_buf_append(&f->words, &s, sizeof(s));
}

static void I(struct goblin__argv_form *f, int64_t v)
{
    char b[GOBLIN_INT64_TEXT_MAX];

    made(f, b, goblin_int64_format(b, v));
}

static void U(struct goblin__argv_form *f, uint64_t v)
{
    char b[24], *p = b + sizeof(b);

    do {
        *--p = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    made(f, p, (size_t)(b + sizeof(b) - p));
}

static void D(struct goblin__argv_form *f, double v)
{
    char b[GOBLIN_DOUBLE_TEXT_MAX];

    made(f, b, goblin_double_format(b, v));
}

/* A score bound, "(" first when exclusive. */
static void bound(struct goblin__argv_form *f, double v, bool excl)
{
    char b[GOBLIN_DOUBLE_TEXT_MAX + 1] = "(";
    size_t n = goblin_double_format(b + 1, v);

    if (excl)
        made(f, b, n + 1);
    else
        made(f, b + 1, n);
}

/* A lex bound of LexBoundKind kind; false for a kind the schema lacks. */
static bool lex(struct goblin__argv_form *f, unsigned kind,
                struct goblin_slice v)
{
    if (!goblin_sbe_lex_bound_kind_valid(kind))
        return false;
    if (kind >= 2) {
        lit(f, kind == 2 ? "-" : "+");
        return true;
    }
    goblin_buf_append(&f->text, kind == 0 ? "[" : "(", 1);
    made(f, v.ptr, v.len);
    ((struct goblin_slice *)(void *)(f->words.data + f->words.len))[-1]
        .len++;
    return true;
}

/* The data fields of every entry of g, nvar each. */
static void entries(struct goblin__argv_form *f, struct goblin_sbe_group g,
                    unsigned nvar)
{
    struct goblin_slice v[2];

    while (goblin_sbe_rt_entry_next(&g, nvar, v) != NULL)
        for (unsigned i = 0; i < nvar; i++)
            W(f, v[i]);
}

/* ---- one function per template ---- */

#define FN(name) \
    static int form_##name(struct goblin__argv_form *f, struct goblin_sbe_msg *m)
#define DECODE(name)                                                          \
    struct goblin_sbe_##name v;                                               \
    if (goblin_sbe_##name##_decode(&v, m) != 0)                               \
    return 0

/* Requests whose words are their fields in order. */
#define PLAIN(name, ...)                                                      \
    FN(name)                                                                  \
    {                                                                         \
        DECODE(name);                                                         \
        __VA_ARGS__;                                                          \
        return 1;                                                             \
    }
/* key, then every entry of a group RESP needs one entry of at least. */
#define KEY_GROUP(name, grp, nvar)                                            \
    FN(name)                                                                  \
    {                                                                         \
        DECODE(name);                                                         \
        if (v.grp.count == 0)                                                 \
            return 0;                                                         \
        W(f, v.key);                                                          \
        entries(f, v.grp, nvar);                                              \
        return 1;                                                             \
    }
/* Every entry of a group, no key before it. */
#define GROUP_ONLY(name, grp, nvar)                                           \
    FN(name)                                                                  \
    {                                                                         \
        DECODE(name);                                                         \
        if (v.grp.count == 0)                                                 \
            return 0;                                                         \
        entries(f, v.grp, nvar);                                              \
        return 1;                                                             \
    }

PLAIN(ping, (void)v, (void)f)
PLAIN(echo, W(f, v.message))
PLAIN(dbsize, (void)v, (void)f)
PLAIN(randomkey, (void)v, (void)f)
PLAIN(get, W(f, v.key))
PLAIN(getdel, W(f, v.key))
PLAIN(strlen, W(f, v.key))
PLAIN(incr, W(f, v.key))
PLAIN(decr, W(f, v.key))
PLAIN(type, W(f, v.key))
PLAIN(persist, W(f, v.key))
PLAIN(ttl, W(f, v.key))
PLAIN(pttl, W(f, v.key))
PLAIN(expiretime, W(f, v.key))
PLAIN(pexpiretime, W(f, v.key))
PLAIN(hlen, W(f, v.key))
PLAIN(hkeys, W(f, v.key))
PLAIN(hvals, W(f, v.key))
PLAIN(hgetall, W(f, v.key))
PLAIN(zcard, W(f, v.key))
PLAIN(llen, W(f, v.key))
PLAIN(smembers, W(f, v.key))
PLAIN(scard, W(f, v.key))
PLAIN(publish, W(f, v.channel), W(f, v.message))
PLAIN(keys, W(f, v.pattern))
PLAIN(rename, W(f, v.key), W(f, v.new_key))
PLAIN(renamenx, W(f, v.key), W(f, v.new_key))
PLAIN(setnx, W(f, v.key), W(f, v.value))
PLAIN(getset, W(f, v.key), W(f, v.value))
PLAIN(append, W(f, v.key), W(f, v.value))
PLAIN(setex, W(f, v.key), I(f, goblin_sbe_setex_seconds(&v)),
      W(f, v.value))
PLAIN(psetex, W(f, v.key), I(f, goblin_sbe_psetex_milliseconds(&v)),
      W(f, v.value))
PLAIN(incrby, W(f, v.key), I(f, goblin_sbe_incrby_increment(&v)))
PLAIN(decrby, W(f, v.key), I(f, goblin_sbe_decrby_decrement(&v)))
PLAIN(incrbyfloat, W(f, v.key), D(f, goblin_sbe_incrbyfloat_increment(&v)))
PLAIN(getrange, W(f, v.key), I(f, goblin_sbe_getrange_start(&v)),
      I(f, goblin_sbe_getrange_end(&v)))
PLAIN(setrange, W(f, v.key), I(f, goblin_sbe_setrange_offset(&v)),
      W(f, v.value))
PLAIN(hget, W(f, v.key), W(f, v.field))
PLAIN(hstrlen, W(f, v.key), W(f, v.field))
PLAIN(hexists, W(f, v.key), W(f, v.field))
PLAIN(hsetnx, W(f, v.key), W(f, v.field), W(f, v.value))
PLAIN(hincrby, W(f, v.key), W(f, v.field),
      I(f, goblin_sbe_hincrby_increment(&v)))
PLAIN(hincrbyfloat, W(f, v.key), W(f, v.field),
      D(f, goblin_sbe_hincrbyfloat_increment(&v)))
PLAIN(zincrby, W(f, v.key), D(f, goblin_sbe_zincrby_increment(&v)),
      W(f, v.member))
PLAIN(zscore, W(f, v.key), W(f, v.member))
PLAIN(zrank, W(f, v.key), W(f, v.member))
PLAIN(zrevrank, W(f, v.key), W(f, v.member))
PLAIN(sismember, W(f, v.key), W(f, v.member))
PLAIN(lrange, W(f, v.key), I(f, goblin_sbe_lrange_start(&v)),
      I(f, goblin_sbe_lrange_stop(&v)))
PLAIN(zremrangebyrank, W(f, v.key), I(f, goblin_sbe_zremrangebyrank_start(&v)),
      I(f, goblin_sbe_zremrangebyrank_stop(&v)))

GROUP_ONLY(del, keys, 1)
GROUP_ONLY(unlink, keys, 1)
GROUP_ONLY(exists, keys, 1)
GROUP_ONLY(touch, keys, 1)
GROUP_ONLY(mget, keys, 1)
GROUP_ONLY(mset, entries, 2)
GROUP_ONLY(msetnx, entries, 2)
KEY_GROUP(hset, entries, 2)
KEY_GROUP(hmset, entries, 2)
KEY_GROUP(hmget, fields, 1)
KEY_GROUP(hdel, fields, 1)
KEY_GROUP(zmscore, members, 1)
KEY_GROUP(zrem, members, 1)
KEY_GROUP(lpush, elements, 1)
KEY_GROUP(rpush, elements, 1)
KEY_GROUP(sadd, members, 1)
KEY_GROUP(srem, members, 1)

/* FLUSHDB, FLUSHALL [SYNC|ASYNC]. */
static bool flush_mode(struct goblin__argv_form *f, unsigned mode)
{
    if (!goblin_sbe_flush_mode_valid(mode))
        return false;
    if (mode != 0)
        lit(f, mode == 1 ? "SYNC" : "ASYNC");
    return true;
}

FN(flushdb)
{
    DECODE(flushdb);
    return flush_mode(f, goblin_sbe_flushdb_mode(&v));
}

FN(flushall)
{
    DECODE(flushall);
    return flush_mode(f, goblin_sbe_flushall_mode(&v));
}

/* SET k v [NX|XX] [EX|PX|EXAT|PXAT n | KEEPTTL] [GET]. */
FN(set)
{
    static const char *const modes[] = {NULL, "EX", "PX", "EXAT", "PXAT"};
    unsigned flags, mode;

    DECODE(set);
    flags = goblin_sbe_set_flags(&v);
    mode = goblin_sbe_set_expire_mode(&v);
    if ((flags & ~GOBLIN_SBE_SET_FLAGS_MASK) ||
        !goblin_sbe_expire_mode_valid(mode))
        return 0;
    W(f, v.key);
    W(f, v.value);
    if (flags & GOBLIN_SBE_SET_FLAGS_NX)
        lit(f, "NX");
    if (flags & GOBLIN_SBE_SET_FLAGS_XX)
        lit(f, "XX");
    if (mode != 0) {
        lit(f, modes[mode]);
        I(f, goblin_sbe_set_expire_value(&v));
    }
    if (flags & GOBLIN_SBE_SET_FLAGS_KEEPTTL)
        lit(f, "KEEPTTL");
    if (flags & GOBLIN_SBE_SET_FLAGS_GET)
        lit(f, "GET");
    return 1;
}

/* GETEX k [EX|PX|EXAT|PXAT n | PERSIST]. */
FN(getex)
{
    static const char *const modes[] = {NULL, "EX", "PX", "EXAT", "PXAT",
                                        "PERSIST"};
    unsigned mode;

    DECODE(getex);
    mode = goblin_sbe_getex_mode(&v);
    if (!goblin_sbe_get_ex_mode_valid(mode))
        return 0;
    W(f, v.key);
    if (mode != 0)
        lit(f, modes[mode]);
    if (mode >= 1 && mode <= 4)
        I(f, goblin_sbe_getex_value(&v));
    return 1;
}

/* EXPIRE k t [NX|XX|GT|LT], and the other three. */
static int expire_form(struct goblin__argv_form *f, struct goblin_slice key,
                       int64_t t, unsigned cond)
{
    static const char *const conds[] = {NULL, "NX", "XX", "GT", "LT"};

    if (!goblin_sbe_expire_condition_valid(cond))
        return 0;
    W(f, key);
    I(f, t);
    if (cond != 0)
        lit(f, conds[cond]);
    return 1;
}

#define EXPIRE_FORM(name)                                                     \
    FN(name)                                                                  \
    {                                                                         \
        DECODE(name);                                                         \
        return expire_form(f, v.key, goblin_sbe_##name##_value(&v),           \
                           goblin_sbe_##name##_condition(&v));                \
    }

EXPIRE_FORM(expire)
EXPIRE_FORM(pexpire)
EXPIRE_FORM(expireat)
EXPIRE_FORM(pexpireat)

/* [MATCH p] [COUNT n] [TYPE t] of the SCAN family (type: SCAN only). */
static int scan_tail(struct goblin__argv_form *f, unsigned flags,
                     int64_t count, struct goblin_slice pattern,
                     const struct goblin_slice *type)
{
    if ((flags & ~GOBLIN_SBE_SCAN_FLAGS_MASK) ||
        (type == NULL && (flags & GOBLIN_SBE_SCAN_FLAGS_HAS_TYPE)))
        return 0;
    if (flags & GOBLIN_SBE_SCAN_FLAGS_HAS_MATCH)
        lit(f, "MATCH"), W(f, pattern);
    if (flags & GOBLIN_SBE_SCAN_FLAGS_HAS_COUNT)
        lit(f, "COUNT"), I(f, count);
    if (flags & GOBLIN_SBE_SCAN_FLAGS_HAS_TYPE)
        lit(f, "TYPE"), W(f, *type);
    return 1;
}

FN(scan)
{
    DECODE(scan);
    U(f, goblin_sbe_scan_cursor(&v));
    return scan_tail(f, goblin_sbe_scan_flags(&v), goblin_sbe_scan_count(&v),
                     v.pattern, &v.type);
}

FN(hscan)
{
    DECODE(hscan);
    W(f, v.key);
    U(f, goblin_sbe_hscan_cursor(&v));
    return scan_tail(f, goblin_sbe_hscan_flags(&v),
                     goblin_sbe_hscan_count(&v), v.pattern, NULL);
}

FN(zscan)
{
    DECODE(zscan);
    W(f, v.key);
    U(f, goblin_sbe_zscan_cursor(&v));
    return scan_tail(f, goblin_sbe_zscan_flags(&v),
                     goblin_sbe_zscan_count(&v), v.pattern, NULL);
}

/* k [count [WITHVALUES|WITHSCORES]] of HRANDFIELD and ZRANDMEMBER. */
static int rand_form(struct goblin__argv_form *f, struct goblin_slice key,
                     unsigned flags, int64_t count, const char *with)
{
    if ((flags & ~GOBLIN_SBE_COUNT_FLAGS_MASK) ||
        ((flags & GOBLIN_SBE_COUNT_FLAGS_WITH_SCORES) &&
         !(flags & GOBLIN_SBE_COUNT_FLAGS_HAS_COUNT)))
        return 0;
    W(f, key);
    if (flags & GOBLIN_SBE_COUNT_FLAGS_HAS_COUNT)
        I(f, count);
    if (flags & GOBLIN_SBE_COUNT_FLAGS_WITH_SCORES)
        lit(f, with);
    return 1;
}

FN(hrandfield)
{
    DECODE(hrandfield);
    return rand_form(f, v.key, goblin_sbe_hrandfield_flags(&v),
                     goblin_sbe_hrandfield_count(&v), "WITHVALUES");
}

FN(zrandmember)
{
    DECODE(zrandmember);
    return rand_form(f, v.key, goblin_sbe_zrandmember_flags(&v),
                     goblin_sbe_zrandmember_count(&v), "WITHSCORES");
}

/* k [count] of LPOP, RPOP, ZPOPMIN and ZPOPMAX (hasCount only). */
static int pop_form(struct goblin__argv_form *f, struct goblin_slice key,
                    unsigned flags, int64_t count)
{
    if (flags & ~(unsigned)GOBLIN_SBE_COUNT_FLAGS_HAS_COUNT)
        return 0;
    W(f, key);
    if (flags & GOBLIN_SBE_COUNT_FLAGS_HAS_COUNT)
        I(f, count);
    return 1;
}

#define POP_FORM(name)                                                        \
    FN(name)                                                                  \
    {                                                                         \
        DECODE(name);                                                         \
        return pop_form(f, v.key, goblin_sbe_##name##_flags(&v),              \
                        goblin_sbe_##name##_count(&v));                       \
    }

POP_FORM(lpop)
POP_FORM(rpop)
POP_FORM(zpopmin)
POP_FORM(zpopmax)

/* ZADD k [NX] [XX] [GT] [LT] [CH] [INCR] score member ... */
FN(zadd)
{
    static const char *const opt[] = {"NX", "XX", "GT", "LT", "CH", "INCR"};
    struct goblin_sbe_zadd_members e;
    unsigned flags;

    DECODE(zadd);
    flags = goblin_sbe_zadd_flags(&v);
    if ((flags & ~GOBLIN_SBE_ZADD_FLAGS_MASK) || v.members.count == 0)
        return 0;
    W(f, v.key);
    for (unsigned i = 0; i < 6; i++)
        if (flags & (1u << i))
            lit(f, opt[i]);
    while (goblin_sbe_zadd_members_next(&v.members, &e)) {
        D(f, goblin_sbe_zadd_members_score(&e));
        W(f, e.member);
    }
    return 1;
}

/* ZCOUNT and ZREMRANGEBYSCORE: k min max (exclusive bits only). */
static int score_pair(struct goblin__argv_form *f, struct goblin_slice key,
                      double min, double max, unsigned flags)
{
    if (flags & ~(unsigned)(GOBLIN_SBE_RANGE_FLAGS_MIN_EXCLUSIVE |
                            GOBLIN_SBE_RANGE_FLAGS_MAX_EXCLUSIVE))
        return 0;
    W(f, key);
    bound(f, min, flags & GOBLIN_SBE_RANGE_FLAGS_MIN_EXCLUSIVE);
    bound(f, max, flags & GOBLIN_SBE_RANGE_FLAGS_MAX_EXCLUSIVE);
    return 1;
}

FN(zcount)
{
    DECODE(zcount);
    return score_pair(f, v.key, goblin_sbe_zcount_min(&v),
                      goblin_sbe_zcount_max(&v), goblin_sbe_zcount_flags(&v));
}

FN(zremrangebyscore)
{
    DECODE(zremrangebyscore);
    return score_pair(f, v.key, goblin_sbe_zremrangebyscore_min(&v),
                      goblin_sbe_zremrangebyscore_max(&v),
                      goblin_sbe_zremrangebyscore_flags(&v));
}

/* ZLEXCOUNT and ZREMRANGEBYLEX: k min max. */
#define LEX_PAIR(name)                                                        \
    FN(name)                                                                  \
    {                                                                         \
        DECODE(name);                                                         \
        W(f, v.key);                                                          \
        return lex(f, goblin_sbe_##name##_min_kind(&v), v.min) &&             \
               lex(f, goblin_sbe_##name##_max_kind(&v), v.max);               \
    }

LEX_PAIR(zlexcount)
LEX_PAIR(zremrangebylex)

/* What follows the bounds of a ZRANGE: [BYSCORE|BYLEX] [REV]
 * [LIMIT o c] [WITHSCORES]; false for bits outside allowed. */
static int range_tail(struct goblin__argv_form *f, const char *by,
                      unsigned flags, unsigned allowed, int64_t offset,
                      int64_t count)
{
    if (flags & ~allowed)
        return 0;
    if (by != NULL)
        lit(f, by);
    if (flags & GOBLIN_SBE_RANGE_FLAGS_REV)
        lit(f, "REV");
    if (flags & GOBLIN_SBE_RANGE_FLAGS_HAS_LIMIT)
        lit(f, "LIMIT"), I(f, offset), I(f, count);
    if (flags & GOBLIN_SBE_RANGE_FLAGS_WITH_SCORES)
        lit(f, "WITHSCORES");
    return 1;
}

/* Score bounds in ZRANGE's order: max first under REV. */
static void score_bounds(struct goblin__argv_form *f, double min, double max,
                         unsigned flags)
{
    bool lo = flags & GOBLIN_SBE_RANGE_FLAGS_MIN_EXCLUSIVE;
    bool hi = flags & GOBLIN_SBE_RANGE_FLAGS_MAX_EXCLUSIVE;

    if (flags & GOBLIN_SBE_RANGE_FLAGS_REV) {
        bound(f, max, hi);
        bound(f, min, lo);
    } else {
        bound(f, min, lo);
        bound(f, max, hi);
    }
}

static bool lex_bounds(struct goblin__argv_form *f, unsigned min_kind,
                       struct goblin_slice min, unsigned max_kind,
                       struct goblin_slice max, unsigned flags)
{
    if (flags & GOBLIN_SBE_RANGE_FLAGS_REV)
        return lex(f, max_kind, max) && lex(f, min_kind, min);
    return lex(f, min_kind, min) && lex(f, max_kind, max);
}

#define SCORE_BITS                                                            \
    (GOBLIN_SBE_RANGE_FLAGS_MIN_EXCLUSIVE |                                   \
     GOBLIN_SBE_RANGE_FLAGS_MAX_EXCLUSIVE)
#define WALK_BITS (GOBLIN_SBE_RANGE_FLAGS_REV | GOBLIN_SBE_RANGE_FLAGS_HAS_LIMIT)

/* ZRANGE k start stop [REV] [WITHSCORES]. */
FN(zrange)
{
    DECODE(zrange);
    W(f, v.key);
    I(f, goblin_sbe_zrange_start(&v));
    I(f, goblin_sbe_zrange_stop(&v));
    if (goblin_sbe_zrange_rev(&v))
        lit(f, "REV");
    if (goblin_sbe_zrange_with_scores(&v))
        lit(f, "WITHSCORES");
    return 1;
}

FN(zrangebyscore)
{
    unsigned flags;

    DECODE(zrangebyscore);
    flags = goblin_sbe_zrangebyscore_flags(&v);
    W(f, v.key);
    score_bounds(f, goblin_sbe_zrangebyscore_min(&v),
                 goblin_sbe_zrangebyscore_max(&v), flags);
    return range_tail(f, "BYSCORE", flags & ~(unsigned)SCORE_BITS,
                      GOBLIN_SBE_RANGE_FLAGS_MASK,
                      goblin_sbe_zrangebyscore_offset(&v),
                      goblin_sbe_zrangebyscore_count(&v));
}

FN(zrangebylex)
{
    unsigned flags;

    DECODE(zrangebylex);
    flags = goblin_sbe_zrangebylex_flags(&v);
    W(f, v.key);
    if (!lex_bounds(f, goblin_sbe_zrangebylex_min_kind(&v), v.min,
                    goblin_sbe_zrangebylex_max_kind(&v), v.max, flags))
        return 0;
    return range_tail(f, "BYLEX", flags,
                      GOBLIN_SBE_RANGE_FLAGS_MASK & ~(unsigned)SCORE_BITS,
                      goblin_sbe_zrangebylex_offset(&v),
                      goblin_sbe_zrangebylex_count(&v));
}

/* ZRANGESTORE d src start stop [REV] (LIMIT by rank, which Redis refuses
 * inside the command, as LIMIT 0 0: the handler's offset and count). */
FN(zrangestore)
{
    DECODE(zrangestore);
    W(f, v.destination);
    W(f, v.source);
    I(f, goblin_sbe_zrangestore_start(&v));
    I(f, goblin_sbe_zrangestore_stop(&v));
    return range_tail(f, NULL, goblin_sbe_zrangestore_flags(&v), WALK_BITS,
                      0, 0);
}

FN(zrangestorebyscore)
{
    unsigned flags;

    DECODE(zrangestorebyscore);
    flags = goblin_sbe_zrangestorebyscore_flags(&v);
    W(f, v.destination);
    W(f, v.source);
    score_bounds(f, goblin_sbe_zrangestorebyscore_min(&v),
                 goblin_sbe_zrangestorebyscore_max(&v), flags);
    return range_tail(f, "BYSCORE", flags & ~(unsigned)SCORE_BITS, WALK_BITS,
                      goblin_sbe_zrangestorebyscore_offset(&v),
                      goblin_sbe_zrangestorebyscore_count(&v));
}

FN(zrangestorebylex)
{
    unsigned flags;

    DECODE(zrangestorebylex);
    flags = goblin_sbe_zrangestorebylex_flags(&v);
    W(f, v.destination);
    W(f, v.source);
    if (!lex_bounds(f, goblin_sbe_zrangestorebylex_min_kind(&v), v.min,
                    goblin_sbe_zrangestorebylex_max_kind(&v), v.max, flags))
        return 0;
    return range_tail(f, "BYLEX", flags, WALK_BITS,
                      goblin_sbe_zrangestorebylex_offset(&v),
                      goblin_sbe_zrangestorebylex_count(&v));
}

/* [dst] numkeys key ... [WEIGHTS w ...] [AGGREGATE MIN|MAX] [WITHSCORES]
 * of ZUNION, ZINTER, ZDIFF and their STORE forms. */
static int combine_form(struct goblin__argv_form *f,
                        const struct goblin_slice *dst,
                        struct goblin_sbe_group g, unsigned agg,
                        unsigned flags, unsigned allowed)
{
    static const char *const aggs[] = {"SUM", "MIN", "MAX"};
    struct goblin_sbe_group w = g;
    struct goblin_slice key;
    const uint8_t *block;

    if (!goblin_sbe_aggregate_valid(agg) || (flags & ~allowed))
        return 0;
    if (dst != NULL)
        W(f, *dst);
    I(f, g.count);
    entries(f, g, 1);
    if (flags & GOBLIN_SBE_SET_OP_FLAGS_HAS_WEIGHTS) {
        lit(f, "WEIGHTS");
        while ((block = goblin_sbe_rt_entry_next(&w, 1, &key)) != NULL)
            D(f, goblin_sbe_rd_f64(block));
    }
    if (agg != 0)
        lit(f, "AGGREGATE"), lit(f, aggs[agg]);
    if (flags & GOBLIN_SBE_SET_OP_FLAGS_WITH_SCORES)
        lit(f, "WITHSCORES");
    return 1;
}

#define COMBINE_FORM(name, DST, ALLOWED)                                      \
    FN(name)                                                                  \
    {                                                                         \
        DECODE(name);                                                         \
        return combine_form(f, DST, v.keys, goblin_sbe_##name##_aggregate(&v), \
                            goblin_sbe_##name##_flags(&v), ALLOWED);          \
    }

COMBINE_FORM(zunionstore, &v.destination, GOBLIN_SBE_SET_OP_FLAGS_HAS_WEIGHTS)
COMBINE_FORM(zinterstore, &v.destination, GOBLIN_SBE_SET_OP_FLAGS_HAS_WEIGHTS)
COMBINE_FORM(zunion, NULL, GOBLIN_SBE_SET_OP_FLAGS_MASK)
COMBINE_FORM(zinter, NULL, GOBLIN_SBE_SET_OP_FLAGS_MASK)

FN(zdiffstore)
{
    DECODE(zdiffstore);
    return combine_form(f, &v.destination, v.keys, 0, 0, 0);
}

FN(zdiff)
{
    DECODE(zdiff);
    return combine_form(f, NULL, v.keys, 0, goblin_sbe_zdiff_flags(&v),
                        GOBLIN_SBE_SET_OP_FLAGS_WITH_SCORES);
}

/* ZINTERCARD numkeys key ... [LIMIT l] (0: none). */
FN(zintercard)
{
    int64_t limit;

    DECODE(zintercard);
    I(f, v.keys.count);
    entries(f, v.keys, 1);
    limit = goblin_sbe_zintercard_limit(&v);
    if (limit != 0)
        lit(f, "LIMIT"), I(f, limit);
    return 1;
}

/* ---- the table ---- */

struct form_entry {
    const char *name;
    form_fn *fn;
};

#define E(ID, NAME, fn) [GOBLIN_SBE_##ID] = {NAME, form_##fn}

static const struct form_entry forms[GOBLIN__SBE_TEMPLATE_SLOTS] = {
    E(PING, "PING", ping),
    E(ECHO, "ECHO", echo),
    E(DBSIZE, "DBSIZE", dbsize),
    E(FLUSHDB, "FLUSHDB", flushdb),
    E(FLUSHALL, "FLUSHALL", flushall),
    E(GET, "GET", get),
    E(SET, "SET", set),
    E(SETNX, "SETNX", setnx),
    E(SETEX, "SETEX", setex),
    E(PSETEX, "PSETEX", psetex),
    E(GETSET, "GETSET", getset),
    E(GETDEL, "GETDEL", getdel),
    E(GETEX, "GETEX", getex),
    E(MGET, "MGET", mget),
    E(MSET, "MSET", mset),
    E(MSETNX, "MSETNX", msetnx),
    E(APPEND, "APPEND", append),
    E(STRLEN, "STRLEN", strlen),
    E(INCR, "INCR", incr),
    E(DECR, "DECR", decr),
    E(INCRBY, "INCRBY", incrby),
    E(DECRBY, "DECRBY", decrby),
    E(INCRBYFLOAT, "INCRBYFLOAT", incrbyfloat),
    E(GETRANGE, "GETRANGE", getrange),
    E(SETRANGE, "SETRANGE", setrange),
    E(UNLINK, "UNLINK", unlink),
    E(EXISTS, "EXISTS", exists),
    E(DEL, "DEL", del),
    E(TOUCH, "TOUCH", touch),
    E(TYPE, "TYPE", type),
    E(RENAME, "RENAME", rename),
    E(RENAMENX, "RENAMENX", renamenx),
    E(KEYS, "KEYS", keys),
    E(SCAN, "SCAN", scan),
    E(RANDOMKEY, "RANDOMKEY", randomkey),
    E(PERSIST, "PERSIST", persist),
    E(EXPIRE, "EXPIRE", expire),
    E(PEXPIRE, "PEXPIRE", pexpire),
    E(EXPIREAT, "EXPIREAT", expireat),
    E(PEXPIREAT, "PEXPIREAT", pexpireat),
    E(TTL, "TTL", ttl),
    E(PTTL, "PTTL", pttl),
    E(EXPIRETIME, "EXPIRETIME", expiretime),
    E(PEXPIRETIME, "PEXPIRETIME", pexpiretime),
    E(HSET, "HSET", hset),
    E(HSETNX, "HSETNX", hsetnx),
    E(HMSET, "HMSET", hmset),
    E(HGET, "HGET", hget),
    E(HMGET, "HMGET", hmget),
    E(HDEL, "HDEL", hdel),
    E(HLEN, "HLEN", hlen),
    E(HSTRLEN, "HSTRLEN", hstrlen),
    E(HEXISTS, "HEXISTS", hexists),
    E(HKEYS, "HKEYS", hkeys),
    E(HVALS, "HVALS", hvals),
    E(HGETALL, "HGETALL", hgetall),
    E(HINCRBY, "HINCRBY", hincrby),
    E(HINCRBYFLOAT, "HINCRBYFLOAT", hincrbyfloat),
    E(HSCAN, "HSCAN", hscan),
    E(HRANDFIELD, "HRANDFIELD", hrandfield),
    E(ZADD, "ZADD", zadd),
    E(ZINCRBY, "ZINCRBY", zincrby),
    E(ZSCORE, "ZSCORE", zscore),
    E(ZMSCORE, "ZMSCORE", zmscore),
    E(ZRANK, "ZRANK", zrank),
    E(ZREVRANK, "ZREVRANK", zrevrank),
    E(ZREM, "ZREM", zrem),
    E(ZCARD, "ZCARD", zcard),
    E(ZCOUNT, "ZCOUNT", zcount),
    E(ZLEXCOUNT, "ZLEXCOUNT", zlexcount),
    E(ZRANGE, "ZRANGE", zrange),
    E(ZRANGEBYSCORE, "ZRANGE", zrangebyscore),
    E(ZRANGEBYLEX, "ZRANGE", zrangebylex),
    E(ZRANGESTORE, "ZRANGESTORE", zrangestore),
    E(ZRANGESTOREBYSCORE, "ZRANGESTORE", zrangestorebyscore),
    E(ZRANGESTOREBYLEX, "ZRANGESTORE", zrangestorebylex),
    E(ZREMRANGEBYRANK, "ZREMRANGEBYRANK", zremrangebyrank),
    E(ZREMRANGEBYSCORE, "ZREMRANGEBYSCORE", zremrangebyscore),
    E(ZREMRANGEBYLEX, "ZREMRANGEBYLEX", zremrangebylex),
    E(ZPOPMIN, "ZPOPMIN", zpopmin),
    E(ZPOPMAX, "ZPOPMAX", zpopmax),
    E(ZRANDMEMBER, "ZRANDMEMBER", zrandmember),
    E(ZSCAN, "ZSCAN", zscan),
    E(ZUNIONSTORE, "ZUNIONSTORE", zunionstore),
    E(ZINTERSTORE, "ZINTERSTORE", zinterstore),
    E(ZDIFFSTORE, "ZDIFFSTORE", zdiffstore),
    E(ZUNION, "ZUNION", zunion),
    E(ZINTER, "ZINTER", zinter),
    E(ZDIFF, "ZDIFF", zdiff),
    E(ZINTERCARD, "ZINTERCARD", zintercard),
    E(LPUSH, "LPUSH", lpush),
    E(RPUSH, "RPUSH", rpush),
    E(LPOP, "LPOP", lpop),
    E(RPOP, "RPOP", rpop),
    E(LRANGE, "LRANGE", lrange),
    E(LLEN, "LLEN", llen),
    E(SADD, "SADD", sadd),
    E(SREM, "SREM", srem),
    E(SISMEMBER, "SISMEMBER", sismember),
    E(SMEMBERS, "SMEMBERS", smembers),
    E(SCARD, "SCARD", scard),
    E(PUBLISH, "PUBLISH", publish),
};

#undef E

const char *goblin__argv_form_name(unsigned id)
{
    return id < GOBLIN__SBE_TEMPLATE_SLOTS ? forms[id].name : NULL;
}

void goblin__argv_form_free(struct goblin__argv_form *f)
{
    goblin_buf_free(&f->words);
    goblin_buf_free(&f->text);
    f->argv = NULL;
    f->argc = 0;
}

int goblin__argv_form_build(struct goblin__argv_form *f,
                            struct goblin_sbe_msg *m,
                            const struct goblin_allocator *alloc)
{
    unsigned id = m->template_id;
    struct goblin_slice *v;
    size_t n, at = 0;

    memset(f, 0, sizeof(*f));
    f->words.alloc = alloc;
    f->text.alloc = alloc;
    if (id >= GOBLIN__SBE_TEMPLATE_SLOTS || forms[id].fn == NULL)
        return 0;
    lit(f, forms[id].name);
    if (!forms[id].fn(f, m)) {
        goblin__argv_form_free(f);
        return 0;
    }
    if (f->words.failed || f->text.failed) {
        goblin__argv_form_free(f);
        return GOBLIN_ENOMEM;
    }
    v = (struct goblin_slice *)(void *)f->words.data;
    n = f->words.len / sizeof(*v);
    for (size_t i = 0; i < n; i++) {
        if (v[i].ptr != NULL)
            continue;
        v[i].ptr = f->text.data + at;
        at += v[i].len;
    }
    f->argv = v;
    f->argc = (int)n;
    return 1;
}

/* ---- running a typed request with its argv form ---- */

struct typed_run {
    struct goblin__sbe_req *r;
    goblin__sbe_handler *fn;
};

static void run_handler(void *ctx)
{
    struct typed_run *t = ctx;

    t->fn(t->r);
}

void goblin__sbe_run_logged(struct goblin__sbe_req *r,
                            goblin__sbe_handler *fn)
{
    goblin__exec *x = &r->x;
    goblin_engine *eng = x->eng;
    const struct goblin__command *cmd = x->cmd;
    struct goblin__argv_form f;
    struct typed_run t = {r, fn};
    int rc = goblin__argv_form_build(&f, r->m, &eng->acct);

    if (rc == GOBLIN_ENOMEM && eng->stream_on && cmd != NULL &&
        (cmd->flags & CMD_WRITE)) {
        goblin__reply_code(x, GOBLIN_ENOMEM);
        return;
    }
    if (eng->stream_on)
        goblin__stream_run_as(x, rc == 1 ? f.argc : 0,
                              rc == 1 ? f.argv : NULL, run_handler, &t);
    else
        fn(r);
    if (rc == 1 && eng->nmonitors != 0 && cmd != NULL &&
        !(cmd->flags & (CMD_SKIP_MONITOR | CMD_ADMIN)))
        goblin__monitor_feed(x, f.argc, f.argv);
    if (rc == 1)
        goblin__argv_form_free(&f);
}

void goblin__sbe_slowlog_watch(struct goblin__sbe_req *r, uint64_t ticks)
{
    goblin__exec *x = &r->x;
    struct goblin__argv_form f;
    struct goblin_slice name;

    if (goblin__argv_form_build(&f, r->m, &x->eng->acct) == 1) {
        goblin__slowlog_watch(x, f.argc, f.argv, ticks);
        goblin__argv_form_free(&f);
        return;
    }
    name = (struct goblin_slice){x->cmd->name, strlen(x->cmd->name)};
    goblin__slowlog_watch(x, 1, &name, ticks);
}
