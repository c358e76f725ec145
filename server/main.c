/* main.c - goblind, Goblin's server: reads its options (config.c), opens
 * a store and an engine, loads the snapshot or AOF (the library's
 * goblin_persist), listens and runs the library's epoll loop
 * (net_epoll.c) and ring threads (ring_poll.c) until SIGTERM, SIGINT or
 * SHUTDOWN; then closes everything, so a leak checker sees a clean exit.
 * Commands, serving and persistence are libgoblin's (goblin/serve.h);
 * goblind keeps the process (process.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "goblind.h"

void goblind_lock(void *ctx)
{
    pthread_mutex_lock(&((struct goblind *)ctx)->lock);
}

void goblind_unlock(void *ctx)
{
    pthread_mutex_unlock(&((struct goblind *)ctx)->lock);
}

static void server_info(void *ctx, struct goblin_server_info *out)
{
    struct goblind *g = ctx;
    const char *file = goblin_engine_config_file(g->engine);

    *out = (struct goblin_server_info){
        getpid(), (int)goblin_engine_config_int(g->engine, "port", 0),
        g->executable, file != NULL ? file : "", NULL, 0};
}

/* SHUTDOWN (after the engine's own final save, if any). */
static void shutdown_cmd(void *ctx)
{
    struct goblind *g = ctx;

    goblin_persist_kill(g->persist);
    g->shutdown_cmd = true;
    goblin_epoll_stop(g->loop);
}

/* The store with a random hash seed, so that clients cannot choose keys
 * that collide (the library's default seed is fixed, for tests), and the
 * engine with goblind's hooks. */
static int open_engine(struct goblind *g)
{
    struct goblin_config scfg = {0};
    ssize_t n = readlink("/proc/self/exe", g->executable,
                         sizeof(g->executable) - 1);
    int rc;

    g->executable[n > 0 ? n : 0] = '\0';
    if (getrandom(&scfg.seed, sizeof(scfg.seed), 0) != sizeof(scfg.seed) ||
        scfg.seed == 0)
        scfg.seed = (uint64_t)getpid() * 0x9e3779b97f4a7c15u | 1;
    if ((rc = goblin_store_open(&scfg, &g->store)) < 0 ||
        (rc = goblin_persist_new(&(struct goblin_persist_config){
             goblind_fork, g, goblind_engine_log, g}, &g->persist)) < 0)
        return rc;
    struct goblin_engine_config ecfg = {
        .store = g->store, .log = goblind_engine_log, .log_ctx = g,
        .server_info = server_info, .server_info_ctx = g,
        .session_wake = goblin_net_session_wake, .shutdown = shutdown_cmd,
        .shutdown_ctx = g};
    goblin_persist_engine_hooks(g->persist, &ecfg);
    rc = goblin_engine_open(&ecfg, &g->engine);
#ifdef GOBLIN_SCRIPTING
    rc = rc < 0 ? rc : goblin_lua_attach(g->engine);
#endif
    return rc;
}

/* Before serving: the library's load, which logs; with a log file, the
 * reason goes where whoever started us looks too. 1 after --export-rdb
 * wrote its file. */
static int load(struct goblind *g)
{
    char err[4400];
    int rc = goblin_persist_load(g->persist, g->engine, err, sizeof(err));

    if (rc < 0 && g->logf != NULL)
        fprintf(stderr, "goblind: %s\n", err);
    return rc < 0 ? -1 : rc;
}

int main(int argc, char **argv)
{
    struct goblind g;
    int rc;

    memset(&g, 0, sizeof(g));
    g.sigfd = -1;
    pthread_mutex_init(&g.lock, NULL);
    if ((rc = open_engine(&g)) < 0)
        fprintf(stderr, "goblind: can't open the store: %s\n",
                goblin_strerror(rc));
    rc = rc < 0 ? -1 : goblind_parse_args(&g, argc, argv);
    if (rc == 0 && goblin_engine_config_int(g.engine, "daemonize", 0) &&
        goblind_daemonize() < 0)
        rc = -1;
    if (rc == 0 && (goblind_pidfile_write(&g) < 0 ||
                    goblind_log_open(&g) < 0))
        rc = -1;
    if (rc != 0) /* an error, or --help / --version (rc > 0) */
        goto out;
    goblind_log(&g, GOBLIN_LOG_NOTICE, "Goblin version=%s, bits=%d, pid=%d, "
                "just started", GOBLIN_VERSION_STRING,
                (int)sizeof(void *) * 8, (int)getpid());
    goblin_serve_maxclients_fit(g.engine, goblind_engine_log, &g);
    g.started = true;
    if ((rc = load(&g)) == 0 &&
        (rc = goblind_listen(&g)) == 0 &&
        (rc = goblind_ring_start(&g)) == 0) {
        goblind_log(&g, GOBLIN_LOG_NOTICE, "Ready to accept connections");
        goblind_notify("READY=1\nSTATUS=Ready to accept connections");
        rc = goblin_epoll_run(g.loop) < 0 ? -1 : 0;
        goblind_notify("STOPPING=1");
        if (!g.shutdown_cmd)
            goblind_log(&g, GOBLIN_LOG_WARNING, "User requested "
                        "shutdown...");
    }
    rc = rc > 0 ? 0 : rc; /* 1: --export-rdb done */
out:
    goblin_persist_kill(g.persist);
    goblind_ring_stop(&g);
    goblind_shutdown_net(&g);
    goblin_persist_close(g.persist);
    goblin_engine_close(g.engine);
    goblin_store_close(g.store);
    if (rc == 0)
        goblind_log(&g, GOBLIN_LOG_WARNING, "Goblin is now ready to exit, "
                    "bye bye...");
    goblind_process_end(&g);
    return rc < 0;
}
