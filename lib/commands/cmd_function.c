/* cmd_function.c - FUNCTION FLUSH in a build without scripting, so that a
 * tool which clears the function libraries before it starts (Redis's own
 * test harness does, before every unit) starts against goblind: with no
 * interpreter there is no library, so removing every library removes
 * nothing and is done at once, as redis-server answers with none loaded.
 * With a scripting library attached, FUNCTION FLUSH is the library's, as
 * FUNCTION's other subcommands are (cmd_script.c).
 */
#include "engine/session.h"
#include "handlers.h"
#include "respond.h"

/* FUNCTION FLUSH [ASYNC|SYNC], with Redis 7.0's texts. */
void goblin__cmd_function_flush(goblin__exec *x, int argc,
                                const struct goblin_slice *argv)
{
    if (x->eng->scripting != NULL) {
        goblin__cmd_scripting(x, argc, argv);
        return;
    }
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
