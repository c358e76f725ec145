/* main.c - goblind, Goblin's server: reads its options, opens a store and
 * an engine over it, loads the snapshot (persist.c), listens, tells
 * systemd it is ready, and runs the event loop until SIGTERM, SIGINT or
 * SHUTDOWN; then closes every connection, removes its Unix socket and
 * pidfile and frees everything (so a leak checker sees a clean exit).
 *
 * Everything a command does happens in libgoblin, and so does serving
 * it (goblin/serve.h): goblind drives the library's connections from its
 * epoll loop (net_epoll.c), runs its ring pollers on threads
 * (ring_poll.c), forks for BGSAVE (persist.c) and keeps its own options
 * (config.c) and log (log.c).
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

    out->pid = getpid();
    out->tcp_port = (int)g->port;
    out->executable = g->executable;
    out->config_file = g->config_file != NULL ? g->config_file : "";
    out->run_id = g->run_id;
}

/* A random run id, and a random hash seed so that clients cannot choose
 * keys that collide (the library default seed is fixed for tests). */
static uint64_t process_identity(struct goblind *g)
{
    unsigned char r[28];
    ssize_t n;
    uint64_t seed;

    n = getrandom(r, sizeof(r), 0);
    for (ssize_t i = n < 0 ? 0 : n; i < (ssize_t)sizeof(r); i++)
        r[i] = (unsigned char)(rand() ^ getpid() ^ (int)i);
    for (int i = 0; i < 20; i++)
        snprintf(g->run_id + 2 * i, 3, "%02x", r[i]);
    memcpy(&seed, r + 20, sizeof(seed));
    n = readlink("/proc/self/exe", g->executable, sizeof(g->executable) - 1);
    g->executable[n > 0 ? n : 0] = '\0';
    return seed != 0 ? seed : 1;
}

static int open_engine(struct goblind *g)
{
    struct goblin_config scfg = {0};
    struct goblin_engine_config ecfg = {0};
    int rc;

    scfg.seed = process_identity(g);
    if ((rc = goblin_store_open(&scfg, &g->store)) < 0)
        return rc;
    ecfg.store = g->store;
    ecfg.log = goblind_engine_log;
    ecfg.log_ctx = g;
    ecfg.server_info = server_info;
    ecfg.server_info_ctx = g;
    ecfg.session_wake = goblin_net_session_wake;
    goblind_persist_hooks(g, &ecfg);
    return goblin_engine_open(&ecfg, &g->engine);
}

int main(int argc, char **argv)
{
    struct goblind g;
    int rc;

    goblind_defaults(&g);
    pthread_mutex_init(&g.lock, NULL);
    if ((rc = open_engine(&g)) < 0)
        fprintf(stderr, "goblind: can't open the store: %s\n",
                goblin_strerror(rc));
    rc = rc < 0 ? -1 : goblind_parse_args(&g, argc, argv);
    if (rc == 0 && goblind_ring_register_settings(&g) < 0)
        rc = -1;
    if (rc == 0 && g.daemonize && goblind_daemonize(&g) < 0)
        rc = -1;
    if (rc == 0 && g.pidfile != NULL && goblind_pidfile_write(&g) < 0)
        rc = -1;
    if (rc != 0 || goblind_log_open(&g) < 0) {
        goblind_pidfile_remove(&g);
        goblin_engine_close(g.engine);
        goblin_store_close(g.store);
        goblind_free_options(&g);
        goblind_ring_stop(&g);
        return rc > 0 ? 0 : 1;
    }
    goblind_log(&g, GOBLIN_LOG_NOTICE, "Goblin version=%s, bits=%d, pid=%d, "
                "just started", GOBLIN_VERSION_STRING,
                (int)sizeof(void *) * 8, (int)getpid());
    goblind_maxclients_start(&g);
    if ((rc = goblind_persist_load(&g)) == 0 &&
        (rc = goblind_listen(&g)) == 0 &&
        (rc = goblind_ring_start(&g)) == 0) {
        goblind_log(&g, GOBLIN_LOG_NOTICE, "Ready to accept connections");
        goblind_notify("READY=1\nSTATUS=Ready to accept connections");
        rc = goblind_run(&g);
        goblind_notify("STOPPING=1");
        if (!g.shutdown_cmd)
            goblind_log(&g, GOBLIN_LOG_WARNING, "User requested "
                        "shutdown...");
    }
    goblind_persist_kill_child(&g);
    goblind_ring_stop(&g);
    goblind_shutdown_net(&g);
    goblin_engine_close(g.engine);
    goblin_store_close(g.store);
    if (rc == 0)
        goblind_log(&g, GOBLIN_LOG_WARNING, "Goblin is now ready to exit, "
                    "bye bye...");
    goblind_log_close(&g);
    goblind_pidfile_remove(&g);
    goblind_free_options(&g);
    return rc == 0 ? 0 : 1;
}
