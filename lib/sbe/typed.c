/* typed.c - SBE's typed list replies (respond.h, struct
 * goblin__typed_replies): the command executions' string lists, scored
 * members and SCAN pages leave as ArrayReply, NullableArrayReply,
 * ScoredArrayReply, StringScanReply and ScoredScanReply in one step,
 * without the sink recording them item by item. The dispatcher sets
 * x.typed only while replies are not suppressed. */
#include "request.h"

static struct goblin__sbe_sink *sink_of(goblin__exec *x)
{
    /* x is the first member of the request (request.h). */
    return &((struct goblin__sbe_req *)(void *)x)->ss->sink;
}

static void strings(goblin__exec *x, const struct goblin_slice *v, size_t n,
                    bool nullable)
{
    goblin__sbe_reply_strings(sink_of(x), v, n, nullable);
}

static void scored(goblin__exec *x, const struct goblin__scored *v, size_t n)
{
    goblin__sbe_reply_scored(sink_of(x), v, n);
}

static void scan(goblin__exec *x, uint64_t cursor,
                 const struct goblin_slice *v, size_t n)
{
    goblin__sbe_reply_scan(sink_of(x), cursor, v, n);
}

static void scored_scan(goblin__exec *x, uint64_t cursor,
                        const struct goblin__scored *v, size_t n)
{
    goblin__sbe_reply_scored_scan(sink_of(x), cursor, v, n);
}

const struct goblin__typed_replies goblin__sbe_typed = {
    strings, scored, scan, scored_scan,
};
