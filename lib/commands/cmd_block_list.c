/* cmd_block_list.c - the blocking list commands: BLPOP, BRPOP, BLMPOP,
 * BLMOVE and BRPOPLPUSH (block.h), with Redis 7.0's argument order,
 * replies and texts (t_list.c, blocked.c).
 *
 * Replies: BLPOP and BRPOP [key, element]; BLMPOP [key, [element, ...]];
 * BLMOVE and BRPOPLPUSH the element moved. At their timeout all answer a
 * null array; inside MULTI, with nothing to take, BLPOP, BRPOP and BLMPOP
 * answer a null array at once and BLMOVE and BRPOPLPUSH a null. A BLMOVE
 * waiter served while its destination holds another type gets WRONGTYPE
 * and stops waiting; its push to the destination may serve the next
 * waiter in turn (the destination becomes ready).
 */
#include "engine/block.h"
#include "exec.h"
#include "goblin/list.h"
#include "handlers.h"
#include "respond.h"
#include "stream/propagate.h"

/* BLPOP and BRPOP: one element, with its key. */
static void pop_keyed(goblin__exec *x, struct goblin_slice key,
                      enum goblin_list_end end)
{
    goblin__propagate_pop(x, end == GOBLIN_LIST_HEAD ? "LPOP" : "RPOP", key,
                          -1);
    goblin__reply_array(x, 2);
    goblin__reply_slice(x, key);
    goblin__exec_listpop(x, key, end, false, 0);
}

/* BLMPOP: up to count elements, with their key. */
static void mpop_keyed(goblin__exec *x, struct goblin_slice key,
                       enum goblin_list_end end, int64_t count)
{
    goblin__propagate_pop(x, end == GOBLIN_LIST_HEAD ? "LPOP" : "RPOP", key,
                          count);
    goblin__reply_array(x, 2);
    goblin__reply_slice(x, key);
    goblin__reply_list_pop(x, key, end, count);
}

static bool serve_pop(goblin__exec *x, const struct goblin__blocked *b,
                      struct goblin_slice key)
{
    if (goblin_list_len(x->st, key) <= 0)
        return false;
    if (b->spec.count > 0)
        mpop_keyed(x, key, (enum goblin_list_end)b->spec.where,
                   b->spec.count);
    else
        pop_keyed(x, key, (enum goblin_list_end)b->spec.where);
    return true;
}

static bool serve_move(goblin__exec *x, const struct goblin__blocked *b,
                       struct goblin_slice key)
{
    if (goblin_list_len(x->st, key) <= 0)
        return false;
    goblin__propagate_as(
        x, 5,
        (struct goblin_slice[]){
            {"LMOVE", 5}, key, *b->spec.dst,
            b->spec.where == GOBLIN_LIST_HEAD ? (struct goblin_slice){"LEFT", 4}
                                              : (struct goblin_slice){"RIGHT", 5},
            b->spec.whereto == GOBLIN_LIST_HEAD
                ? (struct goblin_slice){"LEFT", 4}
                : (struct goblin_slice){"RIGHT", 5}});
    goblin__exec_lmove(x, key, *b->spec.dst,
                       (enum goblin_list_end)b->spec.where,
                       (enum goblin_list_end)b->spec.whereto);
    return true;
}

/* Redis's blockingPopGenericCommand: count 0 for BLPOP and BRPOP. */
static void bpop(goblin__exec *x, const struct goblin_slice *keys, size_t n,
                 struct goblin_slice timeout, enum goblin_list_end end,
                 int64_t count)
{
    struct goblin__block_spec spec = {serve_pop, GOBLIN_TYPE_LIST, (int)end,
                                      0, count, NULL, 0};
    int64_t i;

    if (!goblin__block_timeout(x, timeout, &spec.deadline_ms))
        return;
    i = goblin__list_first_nonempty(x->st, keys, n);
    if (i < -1) {
        goblin__reply_code(x, (int)i);
    } else if (i >= 0) {
        if (count > 0)
            mpop_keyed(x, keys[i], end, count);
        else
            pop_keyed(x, keys[i], end);
    } else if (!goblin__block_allowed(x)) {
        goblin__reply_null_array(x);
    } else {
        goblin__block(x, keys, n, &spec);
    }
}

void goblin__cmd_blpop(goblin__exec *x, int argc,
                       const struct goblin_slice *argv)
{
    bpop(x, argv + 1, (size_t)argc - 2, argv[argc - 1], GOBLIN_LIST_HEAD,
         0);
}

void goblin__cmd_brpop(goblin__exec *x, int argc,
                       const struct goblin_slice *argv)
{
    bpop(x, argv + 1, (size_t)argc - 2, argv[argc - 1], GOBLIN_LIST_TAIL,
         0);
}

void goblin__cmd_blmpop(goblin__exec *x, int argc,
                        const struct goblin_slice *argv)
{
    struct goblin__lmpop a;

    if (goblin__lmpop_args(x, argc, argv, 2, &a))
        bpop(x, a.keys, a.nkeys, argv[1], a.end, a.count);
}

/* Redis's blmoveGenericCommand (the timeout already parsed). */
static void bmove(goblin__exec *x, const struct goblin_slice *argv,
                  enum goblin_list_end from, enum goblin_list_end to,
                  struct goblin__block_spec *spec)
{
    int64_t len = goblin_list_len(x->st, argv[1]);

    spec->serve = serve_move;
    spec->type = GOBLIN_TYPE_LIST;
    spec->where = (int)from;
    spec->whereto = (int)to;
    spec->dst = &argv[2];
    if (len < 0)
        goblin__reply_code(x, (int)len);
    else if (len > 0)
        goblin__exec_lmove(x, argv[1], argv[2], from, to);
    else if (!goblin__block_allowed(x))
        goblin__reply_null(x);
    else
        goblin__block(x, &argv[1], 1, spec);
}

static bool arg_end(goblin__exec *x, struct goblin_slice arg,
                    enum goblin_list_end *end)
{
    if (goblin__arg_is(arg, "left"))
        *end = GOBLIN_LIST_HEAD;
    else if (goblin__arg_is(arg, "right"))
        *end = GOBLIN_LIST_TAIL;
    else {
        goblin__reply_error(x, GOBLIN__ERR_SYNTAX);
        return false;
    }
    return true;
}

/* BLMOVE source destination LEFT|RIGHT LEFT|RIGHT timeout: the ends are
 * checked before the timeout, as Redis does. */
void goblin__cmd_blmove(goblin__exec *x, int argc,
                        const struct goblin_slice *argv)
{
    struct goblin__block_spec spec = {0};
    enum goblin_list_end from, to;

    (void)argc;
    if (arg_end(x, argv[3], &from) && arg_end(x, argv[4], &to) &&
        goblin__block_timeout(x, argv[5], &spec.deadline_ms))
        bmove(x, argv, from, to, &spec);
}

void goblin__cmd_brpoplpush(goblin__exec *x, int argc,
                            const struct goblin_slice *argv)
{
    struct goblin__block_spec spec = {0};

    (void)argc;
    if (goblin__block_timeout(x, argv[3], &spec.deadline_ms))
        bmove(x, argv, GOBLIN_LIST_TAIL, GOBLIN_LIST_HEAD, &spec);
}
