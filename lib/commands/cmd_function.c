/* cmd_function.c - FUNCTION FLUSH, so that a tool which clears the
 * function libraries before it starts (Redis's own test harness does,
 * before every unit) starts against goblind.
 *
 * Goblin has no scripting: it holds no function library, ever, so
 * removing every library removes nothing and is done at once, as
 * redis-server answers with none loaded. FUNCTION's other subcommands
 * (LOAD, LIST, ...) are not in the table: they answer "unknown
 * subcommand", as any subcommand Goblin lacks does, and FCALL is an
 * unknown command.
 */
#include "handlers.h"
#include "respond.h"

/* FUNCTION FLUSH [ASYNC|SYNC], with Redis 7.0's texts. */
void goblin__cmd_function_flush(goblin__exec *x, int argc,
                                const struct goblin_slice *argv)
{
    if (argc > 3) {
        goblin__reply_errorf(x, "ERR unknown subcommand or wrong number of "
                                "arguments for '%.*s'. Try FUNCTION HELP.",
                             (int)argv[1].len, (const char *)argv[1].ptr);
        return;
    }
    if (argc == 3 && !goblin__arg_is(argv[2], "sync") &&
        !goblin__arg_is(argv[2], "async")) {
        goblin__reply_error(x, "ERR FUNCTION FLUSH only supports "
                               "SYNC|ASYNC option");
        return;
    }
    goblin__reply_ok(x);
}
