/* req_pubsub.c - the SBE request of Pub/Sub: PUBLISH, typed so that a
 * publisher over a ring takes the direct path (direct.c) instead of an
 * Argv frame's lookup by name. It decodes into the arguments of the
 * command's execution (commands/exec.h), which RESP's handler calls too,
 * so deliveries, the reply and the counting are the same.
 * Subscribing stays an Argv frame: it changes the session's state, and
 * its confirmations are ValueReplies as on RESP. */
#include "commands/exec.h"
#include "request.h"

void goblin__sbe_publish(struct goblin__sbe_req *r)
{
    struct goblin_sbe_publish v;

    if (GOBLIN__SBE_DECODED(publish, v))
        goblin__exec_publish(&r->x, false, v.channel, v.message);
}
