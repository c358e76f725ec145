/* cmd_slowlog.c - SLOWLOG GET [count], LEN, RESET and HELP over the
 * engine's slow log (engine/slowlog.c), with Redis 7.0's replies. */
#include "engine/session.h"
#include "engine/slowlog.h"
#include "exec.h"
#include "handlers.h"
#include "respond.h"

void goblin__cmd_slowlog_get(goblin__exec *x, int argc,
                             const struct goblin_slice *argv)
{
    const char *why = "ERR count should be greater than or equal to -1";
    int64_t count = 10, n = 0;
    const struct goblin__slow_entry *e;

    if (argc > 3) { /* its table arity allows any count, as Redis's */
        goblin__reply_errorf(x, "ERR unknown subcommand or wrong number of "
                             "arguments for '%.*s'. Try SLOWLOG HELP.",
                             goblin__cstr_len(argv[1]) < 128
                                 ? goblin__cstr_len(argv[1]) : 128,
                             (const char *)argv[1].ptr);
        return;
    }
    if (argc == 3 && !goblin__arg_range(x, argv[2], -1, INT64_MAX, &count,
                                        why))
        return;
    if (count == -1 || (uint64_t)count > x->eng->slow_len)
        count = (int64_t)x->eng->slow_len;
    goblin__reply_array(x, (size_t)count);
    for (e = x->eng->slow_first; e != NULL && n < count; e = e->next, n++) {
        goblin__reply_array(x, 6);
        goblin__reply_int(x, (int64_t)e->id);
        goblin__reply_int(x, e->time_s);
        goblin__reply_int(x, (int64_t)e->us);
        goblin__reply_array(x, (size_t)e->argc);
        for (int j = 0; j < e->argc; j++)
            goblin__reply_slice(x, e->argv[j]);
        goblin__reply_cstr(x, e->peer);
        goblin__reply_cstr(x, e->name);
    }
}

void goblin__cmd_slowlog_len(goblin__exec *x, int argc,
                             const struct goblin_slice *argv)
{
    (void)argc;
    (void)argv;
    goblin__reply_int(x, (int64_t)x->eng->slow_len);
}

void goblin__cmd_slowlog_reset(goblin__exec *x, int argc,
                               const struct goblin_slice *argv)
{
    (void)argc;
    (void)argv;
    goblin__slowlog_reset(x->eng);
    goblin__reply_ok(x);
}

void goblin__cmd_slowlog_help(goblin__exec *x, int argc,
                              const struct goblin_slice *argv)
{
    static const char *const lines[] = {
        "SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "GET [<count>]",
        "    Return top <count> entries from the slowlog (default: 10, -1 "
        "mean all).",
        "    Entries are made of:",
        "    id, timestamp, time in microseconds, arguments array, client IP "
        "and port,",
        "    client name",
        "LEN",
        "    Return the length of the slowlog.",
        "RESET",
        "    Reset the slowlog.",
        "HELP",
        "    Prints this help.",
    };

    (void)argc;
    (void)argv;
    goblin__reply_help(x, lines, sizeof(lines) / sizeof(*lines));
}
