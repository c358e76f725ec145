/* busy.c - a script that runs long: the instruction-count hook that
 * notices a run past busy-reply-threshold (lua-time-limit), lets the
 * engine serve other clients meanwhile (they get Redis's BUSY error, and
 * may send SCRIPT KILL or FUNCTION KILL), and stops a killed script, as
 * Redis's luaMaskCountHook and scriptInterrupt do. The hook is set only
 * when a threshold is configured and costs nothing until the count runs
 * out; serving the others is the server's busy hook (goblind: busy.c).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <lauxlib.h>

#include "script.h"

/* Instructions between two looks at the clock (Redis's count). */
#define HOOK_EVERY 100000

static uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void hook(lua_State *L, lua_Debug *ar)
{
    struct goblin__lua *g = goblin__vm_owner(L);
    struct goblin_script_run *run = g->run;

    (void)ar;
    if (run == NULL)
        return;
    if (!g->timed_out) {
        int64_t limit = goblin_script_busy_ms(run->caller);
        uint64_t elapsed_ms = (now_ns() - g->started_ns) / 1000000u;

        if (limit <= 0 || elapsed_ms < (uint64_t)limit)
            return;
        g->timed_out = true;
        {
            char text[200];

            snprintf(text, sizeof(text),
                     "Slow script detected: still in execution after %llu "
                     "milliseconds. You can try killing the script using "
                     "the %s command.",
                     (unsigned long long)elapsed_ms,
                     (run->flags & GOBLIN_SCRIPT_EVAL) ? "SCRIPT KILL"
                                                       : "FUNCTION KILL");
            goblin_script_log(run->caller, GOBLIN_LOG_WARNING, text);
        }
        goblin_script_busy(run, true);
    }
    goblin_script_yield(run);
    if (run->killed) {
        goblin_script_log(run->caller, GOBLIN_LOG_WARNING,
                          "Lua script killed by user with SCRIPT KILL.");
        /* From now on at every line, so a pcall cannot keep it alive. */
        lua_sethook(L, hook, LUA_MASKLINE, 0);
        static const char killed[] = "Script killed by user with SCRIPT "
                                     "KILL...";

        goblin__lua_push_error(L, killed, sizeof(killed) - 1);
        lua_error(L);
    }
}

void goblin__script_hook_start(struct goblin__lua *g, struct goblin__vm *vm)
{
    g->timed_out = false;
    g->started_ns = now_ns();
    if (goblin_script_busy_ms(g->run->caller) > 0)
        lua_sethook(vm->L, hook, LUA_MASKCOUNT, HOOK_EVERY);
}

uint64_t goblin__script_elapsed_ns(const struct goblin__lua *g)
{
    return now_ns() - g->started_ns;
}

void goblin__script_hook_stop(struct goblin__lua *g, struct goblin__vm *vm)
{
    lua_sethook(vm->L, NULL, 0, 0);
    if (g->timed_out && g->run != NULL)
        goblin_script_busy(g->run, false);
    g->timed_out = false;
}

void goblin__script_kill(struct goblin__lua *g, bool eval,
                         struct goblin_sink *sink)
{
    struct goblin_script_run *run = g->run;
    const char *err = NULL;

    if (run == NULL)
        err = "NOTBUSY No scripts in execution right now.";
    else if (run->wrote)
        err = "UNKILLABLE Sorry the script already executed write commands "
              "against the dataset. You can either wait the script "
              "termination or kill the server in a hard way using the "
              "SHUTDOWN NOSAVE command.";
    else if (eval && !(run->flags & GOBLIN_SCRIPT_EVAL))
        err = "BUSY Redis is busy running a script. You can only call "
              "FUNCTION KILL or SHUTDOWN NOSAVE.";
    else if (!eval && (run->flags & GOBLIN_SCRIPT_EVAL))
        err = "BUSY Redis is busy running a script. You can only call "
              "SCRIPT KILL or SHUTDOWN NOSAVE.";
    if (err != NULL) {
        sink->ops->error(sink, err, strlen(err));
        return;
    }
    run->killed = true;
    goblin_sink_ok(sink);
}
