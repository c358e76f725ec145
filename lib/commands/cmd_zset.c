/* cmd_zset.c - sorted-set commands that add, read and remove single
 * members and ranges: ZADD, ZINCRBY, ZSCORE, ZMSCORE, ZCARD, ZCOUNT,
 * ZLEXCOUNT, ZRANK, ZREVRANK, the ZRANGE family, ZRANGESTORE, ZREM and
 * ZREMRANGEBY*, with Redis 7's argument order and texts (t_zset.c).
 *
 * Scores are doubles in replies: RESP3 doubles, RESP2 bulk strings in
 * Redis's format. WITHSCORES replies are flat in RESP2 and [member, score]
 * pairs in RESP3.
 *
 * Each command is an execution function (exec.h), which SBE's typed
 * requests call too, and a RESP handler that parses argv and calls it.
 */
#include <math.h>
#include <string.h>

#include "exec.h"
#include "goblin/zset.h"
#include "notify.h"
#include "respond.h"
#include "engine/session.h"

#define ERR_MINMAX_FLOAT "ERR min or max is not a float"
#define ERR_MINMAX_LEX "ERR min or max not valid string range item"

static void int_reply(goblin__exec *x, int64_t rc)
{
    if (rc < 0)
        goblin__reply_code(x, (int)rc);
    else
        goblin__reply_int(x, rc);
}

static bool parse_score(goblin__exec *x, struct goblin_slice a, double *out,
                        const char *msg)
{
    if (goblin_double_parse(a.ptr, a.len, out) == 0)
        return true;
    goblin__reply_error(x, msg != NULL ? msg
                                       : "ERR value is not a valid float");
    return false;
}

struct zadd_args {
    unsigned flags;
    bool incr;
    int first; /* argv index of the first score */
};

bool goblin__zadd_check(goblin__exec *x, unsigned flags, bool incr, size_t n)
{
    unsigned excl = flags & (GOBLIN_ZADD_NX | GOBLIN_ZADD_GT |
                             GOBLIN_ZADD_LT);

    if ((flags & GOBLIN_ZADD_NX) && (flags & GOBLIN_ZADD_XX)) {
        goblin__reply_error(x, "ERR XX and NX options at the same time are "
                               "not compatible");
        return false;
    }
    /* More than one of them: a bit left after clearing the lowest (no
     * popcount call on CPUs the build does not assume have one). */
    if ((excl & (excl - 1)) != 0) {
        goblin__reply_error(x, "ERR GT, LT, and/or NX options at the same "
                               "time are not compatible");
        return false;
    }
    if (incr && n > 1) {
        goblin__reply_error(x, "ERR INCR option supports a single "
                               "increment-element pair");
        return false;
    }
    return true;
}

/* ZADD's options and checks, in Redis's order; replies and returns false
 * on a bad one. */
static bool zadd_parse(goblin__exec *x, int argc,
                       const struct goblin_slice *argv, struct zadd_args *a)
{
    static const struct { const char *name; unsigned flag; } opts[] = {
        {"nx", GOBLIN_ZADD_NX}, {"xx", GOBLIN_ZADD_XX},
        {"ch", GOBLIN_ZADD_CH}, {"gt", GOBLIN_ZADD_GT},
        {"lt", GOBLIN_ZADD_LT},
    };
    size_t i;

    for (a->first = 2; a->first < argc; a->first++) {
        for (i = 0; i < 5; i++)
            if (goblin__arg_is(argv[a->first], opts[i].name))
                break;
        if (i < 5)
            a->flags |= opts[i].flag;
        else if (goblin__arg_is(argv[a->first], "incr"))
            a->incr = true;
        else
            break;
    }
    if ((argc - a->first) % 2 != 0 || argc == a->first) {
        goblin__reply_error(x, GOBLIN__ERR_SYNTAX);
        return false;
    }
    return goblin__zadd_check(x, a->flags, a->incr,
                              (size_t)(argc - a->first) / 2);
}

static void incr_reply(goblin__exec *x, int rc, double score)
{
    if (rc == 1)
        goblin__reply_double(x, score);
    else if (rc == 0)
        goblin__reply_null(x);
    else if (rc == GOBLIN_EINVAL)
        goblin__reply_code(x, GOBLIN_ENOTFLOAT);
    else
        goblin__reply_code(x, rc);
}

void goblin__exec_zadd(goblin__exec *x, struct goblin_slice key,
                       unsigned flags, bool incr,
                       const struct goblin_zpair *pairs, size_t n)
{
    double score = 0;
    int rc;

    if (incr) {
        rc = goblin_zset_incr(x->st, key, flags, pairs[0].member,
                              pairs[0].score, &score);
        if (rc == 1)
            goblin__notify(x, GOBLIN__NOTIFY_ZSET, "zincr", key);
        incr_reply(x, rc, score);
    } else {
        rc = goblin_zset_add_pairs(x->st, key, flags, pairs, n);
        /* Redis notifies on any addition or score change; the count does
         * not show unchanged-score updates apart, so only NX without an
         * addition is known to have changed nothing. */
        if (rc > 0 || (rc == 0 && !(flags & GOBLIN_ZADD_NX)))
            goblin__notify(x, GOBLIN__NOTIFY_ZSET, "zadd", key);
        int_reply(x, rc);
    }
}

void goblin__cmd_zadd(goblin__exec *x, int argc,
                      const struct goblin_slice *argv)
{
    struct zadd_args a = {0, false, 2};
    struct goblin_zpair *pairs;
    size_t n, i;

    if (!zadd_parse(x, argc, argv, &a))
        return;
    n = (size_t)(argc - a.first) / 2;
    pairs = goblin__scratch_bytes(x->sess, n * sizeof(*pairs));
    if (pairs == NULL) {
        goblin__reply_code(x, GOBLIN_ENOMEM);
        return;
    }
    for (i = 0; i < n; i++) {
        if (!parse_score(x, argv[a.first + 2 * i], &pairs[i].score, NULL))
            return;
        pairs[i].member = argv[a.first + 2 * i + 1];
    }
    goblin__exec_zadd(x, argv[1], a.flags, a.incr, pairs, n);
}

void goblin__exec_zincrby(goblin__exec *x, struct goblin_slice key,
                          double incr, struct goblin_slice member)
{
    double score = 0;
    int rc = goblin_zset_incr(x->st, key, 0, member, incr, &score);

    if (rc == 1)
        goblin__notify(x, GOBLIN__NOTIFY_ZSET, "zincr", key);
    incr_reply(x, rc, score);
}

void goblin__cmd_zincrby(goblin__exec *x, int argc,
                         const struct goblin_slice *argv)
{
    double incr;

    (void)argc;
    if (parse_score(x, argv[2], &incr, NULL))
        goblin__exec_zincrby(x, argv[1], incr, argv[3]);
}

void goblin__exec_zscore(goblin__exec *x, struct goblin_slice key,
                         struct goblin_slice member)
{
    double score = 0;
    int rc = goblin_zset_score(x->st, key, member, &score);

    if (rc == 1)
        goblin__reply_double(x, score);
    else if (rc == 0)
        goblin__reply_null(x);
    else
        goblin__reply_code(x, rc);
}

void goblin__cmd_zscore(goblin__exec *x, int argc,
                        const struct goblin_slice *argv)
{
    (void)argc;
    goblin__exec_zscore(x, argv[1], argv[2]);
}

void goblin__exec_zmscore(goblin__exec *x, struct goblin_slice key,
                          const struct goblin_slice *members, size_t n)
{
    double *scores = goblin__scratch_bytes(x->sess, n * sizeof(double));
    int64_t rc;
    size_t i;

    if (scores == NULL) {
        goblin__reply_code(x, GOBLIN_ENOMEM);
        return;
    }
    rc = goblin_zset_mscore(x->st, key, members, n, scores);
    if (rc < 0) {
        goblin__reply_code(x, (int)rc);
        return;
    }
    goblin__reply_array(x, n);
    for (i = 0; i < n; i++) {
        if (isnan(scores[i]))
            goblin__reply_null(x);
        else
            goblin__reply_double(x, scores[i]);
    }
}

void goblin__cmd_zmscore(goblin__exec *x, int argc,
                         const struct goblin_slice *argv)
{
    goblin__exec_zmscore(x, argv[1], argv + 2, (size_t)argc - 2);
}

void goblin__exec_zcard(goblin__exec *x, struct goblin_slice key)
{
    int_reply(x, goblin_zset_card(x->st, key));
}

void goblin__cmd_zcard(goblin__exec *x, int argc,
                       const struct goblin_slice *argv)
{
    (void)argc;
    goblin__exec_zcard(x, argv[1]);
}

/* Parses min and max as score bounds into r. */
static bool score_bounds(goblin__exec *x, struct goblin_slice min,
                         struct goblin_slice max, struct goblin_zrange *r)
{
    r->by = GOBLIN_ZRANGE_BY_SCORE;
    if (goblin_score_bound_parse(min.ptr, min.len, &r->min,
                                 &r->min_excl) != 0 ||
        goblin_score_bound_parse(max.ptr, max.len, &r->max,
                                 &r->max_excl) != 0) {
        goblin__reply_error(x, ERR_MINMAX_FLOAT);
        return false;
    }
    return true;
}

static bool lex_bounds(goblin__exec *x, struct goblin_slice min,
                       struct goblin_slice max, struct goblin_zrange *r)
{
    r->by = GOBLIN_ZRANGE_BY_LEX;
    if (goblin_lex_bound_parse(min.ptr, min.len, &r->lmin) != 0 ||
        goblin_lex_bound_parse(max.ptr, max.len, &r->lmax) != 0) {
        goblin__reply_error(x, ERR_MINMAX_LEX);
        return false;
    }
    return true;
}

static bool rank_bounds(goblin__exec *x, struct goblin_slice start,
                        struct goblin_slice stop, struct goblin_zrange *r)
{
    r->by = GOBLIN_ZRANGE_BY_RANK;
    return goblin__arg_int64(x, start, &r->start, NULL) &&
           goblin__arg_int64(x, stop, &r->stop, NULL);
}

void goblin__exec_zcount(goblin__exec *x, struct goblin_slice key,
                         const struct goblin_zrange *r)
{
    int_reply(x, goblin_zset_count(x->st, key, r));
}

void goblin__cmd_zcount(goblin__exec *x, int argc,
                        const struct goblin_slice *argv)
{
    struct goblin_zrange r;

    (void)argc;
    memset(&r, 0, sizeof(r));
    if (score_bounds(x, argv[2], argv[3], &r))
        goblin__exec_zcount(x, argv[1], &r);
}

void goblin__cmd_zlexcount(goblin__exec *x, int argc,
                           const struct goblin_slice *argv)
{
    struct goblin_zrange r;

    (void)argc;
    memset(&r, 0, sizeof(r));
    if (lex_bounds(x, argv[2], argv[3], &r))
        goblin__exec_zcount(x, argv[1], &r);
}

void goblin__exec_zrank(goblin__exec *x, struct goblin_slice key,
                        struct goblin_slice member, int rev, bool withscore)
{
    int64_t rank = 0;
    double score = 0;
    int rc = goblin_zset_rank(x->st, key, member, rev, &rank, &score);

    if (rc < 0) {
        goblin__reply_code(x, rc);
    } else if (rc == 0) {
        if (withscore)
            goblin__reply_null_array(x);
        else
            goblin__reply_null(x);
    } else if (withscore) {
        goblin__reply_array(x, 2);
        goblin__reply_int(x, rank);
        goblin__reply_double(x, score);
    } else {
        goblin__reply_int(x, rank);
    }
}

/* ZRANK and ZREVRANK with Redis 7.2's WITHSCORE (the table's arity -3,
 * docs/errors.md): a fourth argument other than WITHSCORE is a syntax
 * error, a fifth an arity error, as in 7.2. */
static void rank_common(goblin__exec *x, int argc,
                        const struct goblin_slice *argv, int rev)
{
    if (argc > 4) {
        goblin__reply_errorf(x, "ERR wrong number of arguments for '%s' "
                                "command", x->cmd->fullname);
        return;
    }
    if (argc == 4 && !goblin__arg_is(argv[3], "withscore")) {
        goblin__reply_error(x, GOBLIN__ERR_SYNTAX);
        return;
    }
    goblin__exec_zrank(x, argv[1], argv[2], rev, argc == 4);
}

void goblin__cmd_zrank(goblin__exec *x, int argc,
                       const struct goblin_slice *argv)
{
    rank_common(x, argc, argv, 0);
}

void goblin__cmd_zrevrank(goblin__exec *x, int argc,
                          const struct goblin_slice *argv)
{
    rank_common(x, argc, argv, 1);
}

void goblin__exec_zrem(goblin__exec *x, struct goblin_slice key,
                       const struct goblin_slice *members, size_t n)
{
    int rc = goblin_zset_rem(x->st, key, members, n);

    if (rc > 0)
        goblin__notify_removed(x, GOBLIN__NOTIFY_ZSET, "zrem", key);
    int_reply(x, rc);
}

void goblin__cmd_zrem(goblin__exec *x, int argc,
                      const struct goblin_slice *argv)
{
    goblin__exec_zrem(x, argv[1], argv + 2, (size_t)argc - 2);
}

void goblin__exec_zremrange(goblin__exec *x, struct goblin_slice key,
                            const struct goblin_zrange *r)
{
    static const char *const events[] = {
        "zremrangebyrank", "zremrangebyscore", "zremrangebylex"};
    int64_t rc = goblin_zset_rem_range(x->st, key, r);

    if (rc > 0)
        goblin__notify_removed(x, GOBLIN__NOTIFY_ZSET,
                               events[r->by == GOBLIN_ZRANGE_BY_RANK    ? 0
                                      : r->by == GOBLIN_ZRANGE_BY_SCORE ? 1
                                                                        : 2],
                               key);
    int_reply(x, rc);
}

static void remrange(goblin__exec *x, const struct goblin_slice *argv,
                     enum goblin_zrange_by by)
{
    struct goblin_zrange r;
    bool ok;

    memset(&r, 0, sizeof(r));
    ok = by == GOBLIN_ZRANGE_BY_RANK    ? rank_bounds(x, argv[2], argv[3], &r)
         : by == GOBLIN_ZRANGE_BY_SCORE ? score_bounds(x, argv[2], argv[3], &r)
                                        : lex_bounds(x, argv[2], argv[3], &r);
    if (ok)
        goblin__exec_zremrange(x, argv[1], &r);
}

void goblin__cmd_zremrangebyrank(goblin__exec *x, int argc,
                                 const struct goblin_slice *argv)
{
    (void)argc;
    remrange(x, argv, GOBLIN_ZRANGE_BY_RANK);
}

void goblin__cmd_zremrangebyscore(goblin__exec *x, int argc,
                                  const struct goblin_slice *argv)
{
    (void)argc;
    remrange(x, argv, GOBLIN_ZRANGE_BY_SCORE);
}

void goblin__cmd_zremrangebylex(goblin__exec *x, int argc,
                                const struct goblin_slice *argv)
{
    (void)argc;
    remrange(x, argv, GOBLIN_ZRANGE_BY_LEX);
}
