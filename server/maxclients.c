/* maxclients.c - maxclients needs open files: at start goblind raises its
 * limit so maxclients connections fit, as Redis does, and when the hard
 * limit is lower brings maxclients down to what fits (32 descriptors stay
 * for listeners, rings, the log...), so extra clients get "max number of
 * clients reached" instead of waiting in the backlog of a server that
 * cannot accept them. CONFIG SET maxclients past what fits is refused
 * with Redis's text.
 */
#include <stdio.h>
#include <sys/resource.h>

#include "goblind.h"

/* Raises the limit towards want + 32; returns how many clients fit. */
static long fit(long want)
{
    struct rlimit rl;
    rlim_t need = (rlim_t)want + 32;

    if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= need)
        return want;
    rl.rlim_cur = need < rl.rlim_max ? need : rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= need)
        return want;
    return rl.rlim_cur > 33 ? (long)(rl.rlim_cur - 32) : 1;
}

void goblind_maxclients_start(struct goblind *g)
{
    long want = g->maxclients, n = fit(want);
    char text[32];

    if (n == want)
        return;
    goblind_log(g, GOBLIN_LOG_WARNING, "You requested maxclients of %ld "
                "requiring at least %ld max file descriptors; the hard "
                "limit allows %ld.", want, want + 32, n + 32);
    goblind_log(g, GOBLIN_LOG_WARNING, "Current maximum open files is %ld. "
                "maxclients has been reduced to %ld to compensate for low "
                "ulimit. If you need higher maxclients increase "
                "'ulimit -n'.", n + 32, n);
    snprintf(text, sizeof(text), "%ld", n);
    g->started = false;   /* this change is ours: not refused */
    goblin_engine_config_set(g->engine, "maxclients", text, NULL, 0);
    g->started = true;
}

int goblind_maxclients_check(struct goblind *g, const char **why)
{
    long want = (long)goblin_engine_config_int(g->engine, "maxclients", 1);
    long n = g->started ? fit(want) : want;

    if (n == want)
        return 0;
    /* Redis's text; the engine puts the old value back. */
    snprintf(g->why, sizeof(g->why), "The operating system is not able to "
             "handle the specified number of clients, try with %ld", n);
    *why = g->why;
    return -1;
}
