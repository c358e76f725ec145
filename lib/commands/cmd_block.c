/* cmd_block.c - the sorted-set pops that name their key: ZMPOP, and the
 * blocking BZPOPMIN, BZPOPMAX and BZMPOP (block.h), plus CLIENT UNBLOCK;
 * with Redis 7.0's argument order, replies and texts (t_zset.c,
 * blocked.c, networking.c).
 *
 * Replies: BZPOPMIN and BZPOPMAX answer [key, member, score] (flat in
 * RESP3 too); ZMPOP and BZMPOP [key, [[member, score], ...]]. Nothing to
 * pop is a null array for all four: at once for ZMPOP, for the others at
 * their timeout or at once inside MULTI, where they cannot block.
 */
#include <string.h>

#include "engine/block.h"
#include "exec.h"
#include "goblin/zset.h"
#include "handlers.h"
#include "notify.h"
#include "respond.h"
#include "stream/propagate.h"

struct emit {
    goblin__exec *x;
    bool nested; /* [member, score] arrays */
};

static int emit_member(void *ctx, struct goblin_slice m, double score)
{
    struct emit *e = ctx;

    if (e->nested)
        goblin__reply_array(e->x, 2);
    goblin__reply_slice(e->x, m);
    goblin__reply_double(e->x, score);
    return 0;
}

/* Pops up to count members of the sorted set at key (which has some) and
 * replies them with the key (Redis's genericZpopCommand with emitkey). */
static void zpop_keyed(goblin__exec *x, struct goblin_slice key, int max,
                       int64_t count, bool nested)
{
    struct emit e = {x, nested};
    int64_t card = goblin_zset_card(x->st, key);
    int64_t n = count < card ? count : card;

    /* BZPOPMIN/BZPOPMAX go out as ZPOPMIN/ZPOPMAX key, BZMPOP and ZMPOP
     * with their count. */
    goblin__propagate_pop(x, max ? "ZPOPMAX" : "ZPOPMIN", key,
                          nested ? count : -1);
    if (nested) {
        goblin__reply_array(x, 2);
        goblin__reply_slice(x, key);
        goblin__reply_array(x, (size_t)n);
    } else {
        goblin__reply_array(x, (size_t)n * 2 + 1);
        goblin__reply_slice(x, key);
    }
    if (goblin_zset_pop(x->st, key, max, n, emit_member, &e) > 0)
        goblin__notify_removed(x, GOBLIN__NOTIFY_ZSET,
                               max ? "zpopmax" : "zpopmin", key);
}

/* The first of keys holding a sorted set: 1 with its index in *at, 0 when
 * none exists, or -1 after a WRONGTYPE reply. */
static int first_zset(goblin__exec *x, const struct goblin_slice *keys,
                      size_t n, size_t *at)
{
    size_t i;

    for (i = 0; i < n; i++) {
        enum goblin_type t = goblin_key_type(x->st, keys[i]);

        if (t == GOBLIN_TYPE_NONE)
            continue;
        if (t != GOBLIN_TYPE_ZSET) {
            goblin__reply_code(x, GOBLIN_EWRONGTYPE);
            return -1;
        }
        *at = i;
        return 1;
    }
    return 0;
}

/* Serving a waiter of BZPOPMIN/BZPOPMAX (count 0) or BZMPOP. */
static bool serve_zpop(goblin__exec *x, const struct goblin__blocked *b,
                       struct goblin_slice key)
{
    if (goblin_zset_card(x->st, key) <= 0)
        return false;
    zpop_keyed(x, key, b->spec.where, b->spec.count > 0 ? b->spec.count : 1,
               b->spec.count > 0);
    return true;
}

/* Redis's blockingGenericZpopCommand: count 0 for BZPOPMIN/BZPOPMAX. */
static void bzpop(goblin__exec *x, const struct goblin_slice *keys, size_t n,
                  struct goblin_slice timeout, int max, int64_t count)
{
    struct goblin__block_spec spec = {serve_zpop, GOBLIN_TYPE_ZSET, max, 0,
                                      count, NULL, 0};
    size_t at;
    int rc;

    if (!goblin__block_timeout(x, timeout, &spec.deadline_ms))
        return;
    if ((rc = first_zset(x, keys, n, &at)) < 0)
        return;
    if (rc > 0) {
        zpop_keyed(x, keys[at], max, count > 0 ? count : 1, count > 0);
        return;
    }
    if (!goblin__block_allowed(x)) {
        goblin__reply_null_array(x);
        return;
    }
    goblin__block(x, keys, n, &spec);
}

void goblin__cmd_bzpopmin(goblin__exec *x, int argc,
                          const struct goblin_slice *argv)
{
    bzpop(x, argv + 1, (size_t)argc - 2, argv[argc - 1], 0, 0);
}

void goblin__cmd_bzpopmax(goblin__exec *x, int argc,
                          const struct goblin_slice *argv)
{
    bzpop(x, argv + 1, (size_t)argc - 2, argv[argc - 1], 1, 0);
}

/* ZMPOP's and BZMPOP's numkeys key... MIN|MAX [COUNT count] from argv[i]
 * on: Redis's zmpopGenericCommand checks, in its order. */
static bool zmpop_args(goblin__exec *x, int argc,
                       const struct goblin_slice *argv, int i, size_t *nkeys,
                       int *max, int64_t *count)
{
    int64_t n;
    int j;

    if (!goblin__arg_range(x, argv[i], 1, INT64_MAX, &n,
                           "ERR numkeys should be greater than 0"))
        return false;
    if (n >= argc - i - 1) {
        goblin__reply_error(x, GOBLIN__ERR_SYNTAX);
        return false;
    }
    j = i + 1 + (int)n;
    if (goblin__arg_is(argv[j], "min"))
        *max = 0;
    else if (goblin__arg_is(argv[j], "max"))
        *max = 1;
    else {
        goblin__reply_error(x, GOBLIN__ERR_SYNTAX);
        return false;
    }
    *count = 0;
    for (j++; j < argc; j++) {
        if (*count == 0 && goblin__arg_is(argv[j], "count") &&
            j + 1 < argc) {
            if (!goblin__arg_range(x, argv[++j], 1, INT64_MAX, count,
                                   "ERR count should be greater than 0"))
                return false;
        } else {
            goblin__reply_error(x, GOBLIN__ERR_SYNTAX);
            return false;
        }
    }
    if (*count == 0)
        *count = 1;
    *nkeys = (size_t)n;
    return true;
}

void goblin__cmd_zmpop(goblin__exec *x, int argc,
                       const struct goblin_slice *argv)
{
    size_t n, at;
    int64_t count;
    int max, rc;

    if (!zmpop_args(x, argc, argv, 1, &n, &max, &count))
        return;
    if ((rc = first_zset(x, argv + 2, n, &at)) < 0)
        return;
    if (rc == 0)
        goblin__reply_null_array(x);
    else
        zpop_keyed(x, argv[2 + at], max, count, true);
}

void goblin__cmd_bzmpop(goblin__exec *x, int argc,
                        const struct goblin_slice *argv)
{
    size_t n;
    int64_t count;
    int max;

    if (zmpop_args(x, argc, argv, 2, &n, &max, &count))
        bzpop(x, argv + 3, n, argv[1], max, count);
}

/* CLIENT UNBLOCK id [TIMEOUT|ERROR]: the reason is checked before the
 * id, as Redis does. */
void goblin__cmd_client_unblock(goblin__exec *x, int argc,
                                const struct goblin_slice *argv)
{
    bool error = false;
    goblin_session *s;
    int64_t id;

    if (argc > 4) {
        goblin__reply_error(x, "ERR unknown subcommand or wrong number of "
                               "arguments for 'unblock'. Try CLIENT HELP.");
        return;
    }
    if (argc == 4) {
        if (goblin__arg_is(argv[3], "error"))
            error = true;
        else if (!goblin__arg_is(argv[3], "timeout")) {
            goblin__reply_error(x, "ERR CLIENT UNBLOCK reason should be "
                                   "TIMEOUT or ERROR");
            return;
        }
    }
    if (!goblin__arg_int64(x, argv[2], &id, NULL))
        return;
    for (s = x->eng->first; s != NULL; s = s->next)
        if (s->id == (uint64_t)id)
            break;
    goblin__reply_int(x, s != NULL && goblin__block_unblock(s, error));
}
