/* cmd_aof.c - BGREWRITEAOF and INFO persistence's aof_* fields, with
 * Redis 7.0's texts (aof.c bgrewriteaofCommand, server.c genRedisInfoString).
 */
#include "engine/session.h"
#include "engine/text.h"
#include "goblin/aof.h"
#include "handlers.h"
#include "respond.h"
#include "stream/aof_int.h"

void goblin__cmd_bgrewriteaof(goblin__exec *x, int argc,
                              const struct goblin_slice *argv)
{
    int rc;

    (void)argc;
    (void)argv;
    if (x->eng->aof == NULL) {
        goblin__reply_error(x, "ERR Background append only file rewriting "
                               "needs appendonly yes");
        return;
    }
    rc = goblin__aof_bgrewrite(x->eng);
    if (rc == GOBLIN_EBUSY)
        goblin__reply_error(x, "ERR Background append only file rewriting "
                               "already in progress");
    else if (rc == 1)
        goblin__reply_status(x, "Background append only file rewriting "
                                "scheduled");
    else if (rc < 0)
        goblin__reply_error(x, "ERR Can't execute an AOF background "
                               "rewriting. Please check the server logs "
                               "for more information.");
    else
        goblin__reply_status(x, "Background append only file rewriting "
                                "started");
}

void goblin__aof_info_text(goblin__exec *x, struct goblin__text *t)
{
    struct goblin_aof_info i;

    if (x->eng->aof == NULL) {
        goblin__text_addf(t,
            "aof_enabled:0\r\naof_rewrite_in_progress:0\r\n"
            "aof_rewrite_scheduled:0\r\naof_last_rewrite_time_sec:-1\r\n"
            "aof_current_rewrite_time_sec:-1\r\n"
            "aof_last_bgrewrite_status:ok\r\naof_rewrites:0\r\n"
            "aof_rewrites_consecutive_failures:0\r\n"
            "aof_last_write_status:ok\r\naof_last_cow_size:0\r\n");
        return;
    }
    goblin_aof_info(x->eng->aof, &i);
    goblin__text_addf(t,
        "aof_enabled:1\r\naof_rewrite_in_progress:%d\r\n"
        "aof_rewrite_scheduled:%d\r\naof_last_rewrite_time_sec:%lld\r\n"
        "aof_current_rewrite_time_sec:-1\r\n"
        "aof_last_bgrewrite_status:%s\r\naof_rewrites:%llu\r\n"
        "aof_rewrites_consecutive_failures:0\r\n"
        "aof_last_write_status:%s\r\naof_last_cow_size:0\r\n"
        "aof_current_size:%llu\r\naof_base_size:%llu\r\n"
        "aof_pending_rewrite:0\r\naof_buffer_length:%llu\r\n"
        "aof_pending_bio_fsync:0\r\naof_delayed_fsync:%llu\r\n",
        i.rewrite_in_progress, i.rewrite_scheduled,
        (long long)i.last_rewrite_time_sec,
        i.last_rewrite_ok ? "ok" : "err", (unsigned long long)i.rewrites,
        i.last_write_ok ? "ok" : "err",
        (unsigned long long)i.current_size,
        (unsigned long long)i.base_size,
        (unsigned long long)i.buffer_length,
        (unsigned long long)i.delayed_fsync);
}
