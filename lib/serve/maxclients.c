/* maxclients.c - the connection limits a server takes from its settings
 * (goblin/serve.h, "serving from the settings"): maxclients, timeout and
 * protected-mode for a goblin_net, and the open files maxclients needs.
 * At start the descriptor limit is raised so maxclients connections fit,
 * as Redis does, and when the hard limit is lower maxclients comes down
 * to what fits (32 descriptors stay for listeners, rings, the log...), so
 * extra clients get "max number of clients reached" instead of waiting in
 * the backlog of a server that cannot accept them. CONFIG SET maxclients
 * past what fits is refused with Redis's text.
 */
#include <stdio.h>
#include <sys/resource.h>

#include <goblin/serve.h>

void goblin_net_limits_from_settings(void *engine,
                                     struct goblin_net_limits *out)
{
    const goblin_engine *eng = engine;

    *out = (struct goblin_net_limits){
        (long)goblin_engine_config_int(eng, "maxclients", 10000),
        (long)goblin_engine_config_int(eng, "timeout", 0),
        goblin_engine_config_int(eng, "protected-mode", 1) != 0};
}

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

void goblin_serve_maxclients_fit(goblin_engine *eng,
                                 void (*log)(void *ctx,
                                             enum goblin_log_level level,
                                             const char *text),
                                 void *log_ctx)
{
    long want = (long)goblin_engine_config_int(eng, "maxclients", 10000);
    long n = fit(want);
    char text[512];

    if (n == want)
        return;
    if (log != NULL) {
        snprintf(text, sizeof(text), "You requested maxclients of %ld "
                 "requiring at least %ld max file descriptors; the hard "
                 "limit allows %ld.", want, want + 32, n + 32);
        log(log_ctx, GOBLIN_LOG_WARNING, text);
        snprintf(text, sizeof(text), "Current maximum open files is %ld. "
                 "maxclients has been reduced to %ld to compensate for low "
                 "ulimit. If you need higher maxclients increase "
                 "'ulimit -n'.", n + 32, n);
        log(log_ctx, GOBLIN_LOG_WARNING, text);
    }
    snprintf(text, sizeof(text), "%ld", n);
    goblin_engine_config_set(eng, "maxclients", text, NULL, 0);
}

int goblin_serve_maxclients_check(const goblin_engine *eng, char *why,
                                  size_t cap)
{
    long want = (long)goblin_engine_config_int(eng, "maxclients", 10000);
    long n = fit(want);

    if (n == want)
        return 0;
    snprintf(why, cap, "The operating system is not able to handle the "
             "specified number of clients, try with %ld", n);
    return -1;
}
