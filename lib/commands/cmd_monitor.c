/* cmd_monitor.c - MONITOR (Redis's monitorCommand); the feed is
 * lib/engine/monitor.c. */
#include "engine/monitor.h"
#include "handlers.h"
#include "respond.h"

void goblin__cmd_monitor(goblin__exec *x, int argc,
                         const struct goblin_slice *argv)
{
    (void)argc;
    (void)argv;
    /* Inside EXEC or a script a reply per command is expected. */
    if (x->eng->in_exec || x->sink != &x->sess->writer.sink) {
        goblin__reply_error(x, "ERR MONITOR isn't allowed for DENY "
                               "BLOCKING client");
        return;
    }
    if (x->sess->flags & SESS_MONITOR)
        return; /* already monitoring: no reply, as Redis */
    goblin__monitor_add(x->sess);
    if (x->sess->flags & SESS_MONITOR)
        goblin__reply_ok(x);
    else
        goblin__reply_code(x, GOBLIN_ENOMEM);
}
