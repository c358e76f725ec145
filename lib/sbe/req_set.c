/* req_set.c - SBE requests on sets: SADD, SREM, SISMEMBER, SMEMBERS and
 * SCARD. Each decodes its frame into the arguments of the command's
 * execution (commands/exec.h), which RESP's handler calls too. SMEMBERS
 * leaves as an ArrayReply (RESP3 sends a set; the members are the same,
 * in the same order). */
#include "commands/exec.h"
#include "goblin/set.h"
#include "request.h"

void goblin__sbe_sadd(struct goblin__sbe_req *r)
{
    struct goblin_sbe_sadd v;
    struct goblin_slice *m;
    size_t n;

    if (GOBLIN__SBE_DECODED(sadd, v) &&
        (m = goblin__sbe_args(r, v.members, 1, "sadd", &n)) != NULL)
        goblin__exec_sadd(&r->x, v.key, m, n);
}

void goblin__sbe_srem(struct goblin__sbe_req *r)
{
    struct goblin_sbe_srem v;
    struct goblin_slice *m;
    size_t n;

    if (GOBLIN__SBE_DECODED(srem, v) &&
        (m = goblin__sbe_args(r, v.members, 1, "srem", &n)) != NULL)
        goblin__exec_srem(&r->x, v.key, m, n);
}

void goblin__sbe_sismember(struct goblin__sbe_req *r)
{
    struct goblin_sbe_sismember v;

    if (GOBLIN__SBE_DECODED(sismember, v))
        goblin__exec_sismember(&r->x, v.key, v.member);
}

void goblin__sbe_smembers(struct goblin__sbe_req *r)
{
    struct goblin_sbe_smembers v;

    if (GOBLIN__SBE_DECODED(smembers, v))
        goblin__exec_smembers(&r->x, v.key);
}

void goblin__sbe_scard(struct goblin__sbe_req *r)
{
    struct goblin_sbe_scard v;

    if (GOBLIN__SBE_DECODED(scard, v))
        goblin__exec_scard(&r->x, v.key);
}
