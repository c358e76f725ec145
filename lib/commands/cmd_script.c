/* cmd_script.c - the scripting commands (EVAL, EVALSHA, EVAL_RO,
 * EVALSHA_RO, FCALL, FCALL_RO, SCRIPT and FUNCTION): handed whole to the
 * scripting library attached to the engine (goblin/script.h), or refused
 * with one clear text when the build has none.
 */
#include "engine/session.h"
#include "goblin/script.h"
#include "handlers.h"
#include "respond.h"

void goblin__cmd_scripting(goblin__exec *x, int argc,
                           const struct goblin_slice *argv)
{
    const struct goblin_scripting *ops = x->eng->scripting;

    if (ops == NULL) {
        goblin__reply_error(x, "ERR scripting is not available in this "
                               "build (Goblin was built without Lua)");
        return;
    }
    ops->command(x->eng->scripting_ctx, x->sess, argc, argv, x->sink);
}
