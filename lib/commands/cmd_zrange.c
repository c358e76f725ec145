/* cmd_zrange.c - ZRANGE and the commands Redis 7 builds on the same code
 * (zrangeGenericCommand): ZRANGESTORE, ZREVRANGE, ZRANGEBYSCORE,
 * ZREVRANGEBYSCORE, ZRANGEBYLEX and ZREVRANGEBYLEX, with their option
 * checks in Redis's order and texts.
 *
 * The walk and its reply are goblin__exec_zrange and
 * goblin__exec_zrangestore (exec.h), which SBE's typed range requests
 * call too.
 */
#include <string.h>

#include "exec.h"
#include "goblin/zset.h"
#include "notify.h"
#include "respond.h"
#include "engine/session.h"

enum zkind { Z_AUTO, Z_RANK, Z_SCORE, Z_LEX };
enum zdir { D_AUTO, D_FWD, D_REV };

struct zrange_args {
    enum zkind kind;
    enum zdir dir;
    bool store;
    bool withscores;
    bool limit;
    int64_t offset, count;
};

/* The options after <src> <min> <max>; replies and returns false on a bad
 * one. */
static bool zrange_options(goblin__exec *x, int argc,
                           const struct goblin_slice *argv, int j,
                           struct zrange_args *a)
{
    for (; j < argc; j++) {
        if (!a->store && goblin__arg_is(argv[j], "withscores")) {
            a->withscores = true;
        } else if (goblin__arg_is(argv[j], "limit") && argc - j - 1 >= 2) {
            if (!goblin__arg_int64(x, argv[j + 1], &a->offset, NULL) ||
                !goblin__arg_int64(x, argv[j + 2], &a->count, NULL))
                return false;
            a->limit = true;
            j += 2;
        } else if (a->dir == D_AUTO && goblin__arg_is(argv[j], "rev")) {
            a->dir = D_REV;
        } else if (a->kind == Z_AUTO && goblin__arg_is(argv[j], "bylex")) {
            a->kind = Z_LEX;
        } else if (a->kind == Z_AUTO && goblin__arg_is(argv[j], "byscore")) {
            a->kind = Z_SCORE;
        } else {
            goblin__reply_error(x, GOBLIN__ERR_SYNTAX);
            return false;
        }
    }
    return true;
}

/* Fills r from min and max (already swapped for a reverse score or lex
 * range); replies and returns false on a bad bound. */
static bool zrange_bounds(goblin__exec *x, const struct zrange_args *a,
                          struct goblin_slice min, struct goblin_slice max,
                          struct goblin_zrange *r)
{
    r->rev = a->dir == D_REV;
    r->limit = a->limit;
    r->offset = a->offset;
    r->count = a->limit ? a->count : -1;
    if (a->kind == Z_RANK) {
        r->by = GOBLIN_ZRANGE_BY_RANK;
        return goblin__arg_int64(x, min, &r->start, NULL) &&
               goblin__arg_int64(x, max, &r->stop, NULL);
    }
    if (a->kind == Z_SCORE) {
        r->by = GOBLIN_ZRANGE_BY_SCORE;
        if (goblin_score_bound_parse(min.ptr, min.len, &r->min,
                                     &r->min_excl) == 0 &&
            goblin_score_bound_parse(max.ptr, max.len, &r->max,
                                     &r->max_excl) == 0)
            return true;
        goblin__reply_error(x, "ERR min or max is not a float");
        return false;
    }
    r->by = GOBLIN_ZRANGE_BY_LEX;
    if (goblin_lex_bound_parse(min.ptr, min.len, &r->lmin) == 0 &&
        goblin_lex_bound_parse(max.ptr, max.len, &r->lmax) == 0)
        return true;
    goblin__reply_error(x, "ERR min or max not valid string range item");
    return false;
}

bool goblin__zrange_check(goblin__exec *x, enum goblin_zrange_by by,
                          bool limit, bool withscores)
{
    if (limit && by == GOBLIN_ZRANGE_BY_RANK) {
        goblin__reply_error(x, "ERR syntax error, LIMIT is only supported in "
                               "combination with either BYSCORE or BYLEX");
        return false;
    }
    if (withscores && by == GOBLIN_ZRANGE_BY_LEX) {
        goblin__reply_error(x, "ERR syntax error, WITHSCORES not supported "
                               "in combination with BYLEX");
        return false;
    }
    return true;
}

/* Members of the walk, with scores flat (RESP2) or in pairs (RESP3)
 * when asked. The walk is gathered first, so that a typed protocol sends
 * it as one message. */
void goblin__exec_zrange(goblin__exec *x, struct goblin_slice key,
                         const struct goblin_zrange *r, bool withscores)
{
    struct goblin_zset_iter it;
    struct goblin__scored *v;
    int64_t n = goblin_zset_range(x->st, key, r, &it);
    size_t i;

    if (n < 0) {
        goblin__reply_code(x, (int)n);
        return;
    }
    v = goblin__scratch_bytes(x->sess, (size_t)n * sizeof(*v));
    if (v == NULL && n > 0) {
        goblin__reply_code(x, GOBLIN_ENOMEM);
        return;
    }
    for (i = 0; i < (size_t)n; i++)
        if (goblin_zset_next(&it, &v[i].member, &v[i].score) != 1)
            break;
    goblin__reply_scored(x, v, i, withscores);
}

void goblin__exec_zrangestore(goblin__exec *x, struct goblin_slice dst,
                              struct goblin_slice src,
                              const struct goblin_zrange *r)
{
    bool existed = goblin__notify_on(x, GOBLIN__NOTIFY_GENERIC) &&
                   goblin_key_exists(x->st, dst);
    int64_t n;

    goblin__read_keys(x, &src, 1); /* Redis's lookupKeyRead of it */
    n = goblin_zset_range_store(x->st, dst, src, r);

    goblin__notify_stored(x, GOBLIN__NOTIFY_ZSET, "zrangestore", dst, n,
                          existed);
    if (n < 0)
        goblin__reply_code(x, (int)n);
    else
        goblin__reply_int(x, n);
}

/* Redis's zrangeGenericCommand: argv[start] is the source key. */
static void zrange_generic(goblin__exec *x, int argc,
                           const struct goblin_slice *argv, int start,
                           struct zrange_args *a)
{
    static const enum goblin_zrange_by bys[] = {
        GOBLIN_ZRANGE_BY_RANK, GOBLIN_ZRANGE_BY_RANK, GOBLIN_ZRANGE_BY_SCORE,
        GOBLIN_ZRANGE_BY_LEX};
    struct goblin_zrange r;
    int minidx = start + 1, maxidx = start + 2;

    if (!zrange_options(x, argc, argv, start + 3, a))
        return;
    a->dir = a->dir == D_AUTO ? D_FWD : a->dir;
    a->kind = a->kind == Z_AUTO ? Z_RANK : a->kind;
    if (!goblin__zrange_check(x, bys[a->kind], a->limit, a->withscores))
        return;
    if (a->dir == D_REV && a->kind != Z_RANK) {
        minidx = start + 2;
        maxidx = start + 1;
    }
    memset(&r, 0, sizeof(r));
    if (!zrange_bounds(x, a, argv[minidx], argv[maxidx], &r))
        return;
    if (a->store)
        goblin__exec_zrangestore(x, argv[1], argv[2], &r);
    else
        goblin__exec_zrange(x, argv[start], &r, a->withscores);
}

static void zrange_fixed(goblin__exec *x, int argc,
                         const struct goblin_slice *argv, enum zkind kind,
                         enum zdir dir)
{
    struct zrange_args a = {kind, dir, false, false, false, 0, 0};

    zrange_generic(x, argc, argv, 1, &a);
}

void goblin__cmd_zrange(goblin__exec *x, int argc,
                        const struct goblin_slice *argv)
{
    zrange_fixed(x, argc, argv, Z_AUTO, D_AUTO);
}

void goblin__cmd_zrangestore(goblin__exec *x, int argc,
                             const struct goblin_slice *argv)
{
    struct zrange_args a = {Z_AUTO, D_AUTO, true, false, false, 0, 0};

    zrange_generic(x, argc, argv, 2, &a);
}

void goblin__cmd_zrevrange(goblin__exec *x, int argc,
                           const struct goblin_slice *argv)
{
    zrange_fixed(x, argc, argv, Z_RANK, D_REV);
}

void goblin__cmd_zrangebyscore(goblin__exec *x, int argc,
                               const struct goblin_slice *argv)
{
    zrange_fixed(x, argc, argv, Z_SCORE, D_FWD);
}

void goblin__cmd_zrevrangebyscore(goblin__exec *x, int argc,
                                  const struct goblin_slice *argv)
{
    zrange_fixed(x, argc, argv, Z_SCORE, D_REV);
}

void goblin__cmd_zrangebylex(goblin__exec *x, int argc,
                             const struct goblin_slice *argv)
{
    zrange_fixed(x, argc, argv, Z_LEX, D_FWD);
}

void goblin__cmd_zrevrangebylex(goblin__exec *x, int argc,
                                const struct goblin_slice *argv)
{
    zrange_fixed(x, argc, argv, Z_LEX, D_REV);
}
