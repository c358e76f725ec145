/* req_list.c - SBE requests on lists: LPUSH, RPUSH, LPOP and RPOP (with
 * an optional native count), LRANGE (native indices) and LLEN. Each
 * decodes its frame into the arguments of the command's execution
 * (commands/exec.h), which RESP's handler calls too. */
#include "commands/exec.h"
#include "goblin/list.h"
#include "request.h"

void goblin__sbe_lpush(struct goblin__sbe_req *r)
{
    struct goblin_sbe_lpush v;
    struct goblin_slice *e;
    size_t n;

    if (GOBLIN__SBE_DECODED(lpush, v) &&
        (e = goblin__sbe_args(r, v.elements, 1, "lpush", &n)) != NULL)
        goblin__exec_listpush(&r->x, v.key, GOBLIN_LIST_HEAD, e, n, false);
}

void goblin__sbe_rpush(struct goblin__sbe_req *r)
{
    struct goblin_sbe_rpush v;
    struct goblin_slice *e;
    size_t n;

    if (GOBLIN__SBE_DECODED(rpush, v) &&
        (e = goblin__sbe_args(r, v.elements, 1, "rpush", &n)) != NULL)
        goblin__exec_listpush(&r->x, v.key, GOBLIN_LIST_TAIL, e, n, false);
}

/* CountFlags: hasCount only (withScores means nothing to a list). A
 * count RESP would refuse gets RESP's text; a pop whose reply could not
 * be sent would lose elements, so it is refused before anything is
 * popped, as ZPOPMIN's is. */
static void pop(struct goblin__sbe_req *r, struct goblin_slice key,
                unsigned flags, int64_t count, enum goblin_list_end end)
{
    bool has_count = (flags & GOBLIN_SBE_COUNT_FLAGS_HAS_COUNT) != 0;

    if (flags & ~(unsigned)GOBLIN_SBE_COUNT_FLAGS_HAS_COUNT)
        goblin__reply_error(&r->x, GOBLIN__ERR_SYNTAX);
    else if (has_count && count < 0)
        goblin__reply_error(&r->x, GOBLIN__ERR_POSITIVE);
    else if (has_count && count > GOBLIN_SBE_GROUP_MAX &&
             goblin_list_len(r->x.st, key) > GOBLIN_SBE_GROUP_MAX)
        goblin__reply_error(&r->x, "ERR result too large for one SBE array "
                                   "reply");
    else
        goblin__exec_listpop(&r->x, key, end, has_count, count);
}

void goblin__sbe_lpop(struct goblin__sbe_req *r)
{
    struct goblin_sbe_lpop v;

    if (GOBLIN__SBE_DECODED(lpop, v))
        pop(r, v.key, goblin_sbe_lpop_flags(&v), goblin_sbe_lpop_count(&v),
            GOBLIN_LIST_HEAD);
}

void goblin__sbe_rpop(struct goblin__sbe_req *r)
{
    struct goblin_sbe_rpop v;

    if (GOBLIN__SBE_DECODED(rpop, v))
        pop(r, v.key, goblin_sbe_rpop_flags(&v), goblin_sbe_rpop_count(&v),
            GOBLIN_LIST_TAIL);
}

void goblin__sbe_lrange(struct goblin__sbe_req *r)
{
    struct goblin_sbe_lrange v;

    if (GOBLIN__SBE_DECODED(lrange, v))
        goblin__exec_lrange(&r->x, v.key, goblin_sbe_lrange_start(&v),
                            goblin_sbe_lrange_stop(&v));
}

void goblin__sbe_llen(struct goblin__sbe_req *r)
{
    struct goblin_sbe_llen v;

    if (GOBLIN__SBE_DECODED(llen, v))
        goblin__exec_llen(&r->x, v.key);
}
