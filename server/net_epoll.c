/* net_epoll.c - goblind's event loop: the listeners its settings ask for
 * (the library's listener set), the library's epoll loop over them
 * (goblin/serve.h: goblin_epoll, driving goblin_conn's), TLS from
 * libgoblin-tls when built with it, and signals.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "goblind.h"

#ifdef GOBLIND_TLS
#include <goblin/tls.h>
#define HAVE_TLS true
#else
#define HAVE_TLS false /* the listener set refuses tls-port */
#endif

/* SIGTERM, SIGINT: the final save (if a policy is set), then stop;
 * SIGCHLD: a BGSAVE or AOF rewrite child ended. */
static void signal_ready(void *ctx)
{
    struct goblind *g = ctx;
    struct signalfd_siginfo si;
    bool stop = false;

    if (read(g->sigfd, &si, sizeof(si)) != sizeof(si))
        return;
    goblind_lock(g);
    if (si.ssi_signo == SIGCHLD) {
        goblin_persist_reap(g->persist, false);
    } else {
        goblind_log(g, GOBLIN_LOG_WARNING, "Received %s scheduling "
                    "shutdown...", si.ssi_signo == SIGINT ? "SIGINT"
                                                          : "SIGTERM");
        stop = goblin_persist_final_save(g->persist);
    }
    goblind_unlock(g);
    if (stop)
        goblin_epoll_stop(g->loop);
}

/* Blocks SIGTERM, SIGINT and SIGCHLD and reads them from a signalfd in
 * the loop, so shutdown and reaping a BGSAVE child run in the normal
 * flow: no work in a signal handler. */
static int watch_signals(struct goblind *g)
{
    sigset_t set;

    signal(SIGPIPE, SIG_IGN);
    /* An inherited SIG_IGN would drop the signals before signalfd saw
     * them; blocked with the default action they wait for us. */
    signal(SIGTERM, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGCHLD);
    if (sigprocmask(SIG_BLOCK, &set, NULL) < 0 ||
        (g->sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC)) < 0)
        return -errno;
    return goblin_epoll_add(g->loop, g->sigfd, signal_ready, g);
}

int goblind_listen(struct goblind *g)
{
    goblin_engine *e = g->engine;
    struct goblin_net_config ncfg = {
        .engine = e, .lock = goblind_lock, .unlock = goblind_unlock,
        .lock_ctx = g, .log = goblind_engine_log, .log_ctx = g,
        .limits_get = goblin_net_limits_from_settings, .limits_ctx = e,
        .no_sbe_tcp = !goblin_engine_config_int(e, "sbe-tcp", 1),
        .no_sbe_unix = !goblin_engine_config_int(e, "sbe-unixsocket", 1)};
    struct goblin_listen_set_config lcfg = {e, HAVE_TLS, goblind_engine_log,
                                            g};
    struct goblin_epoll_config cfg = {&ncfg, NULL, NULL, NULL};
    int rc;

#ifdef GOBLIND_TLS
    char err[512];

    if (goblin_tls_epoll_settings(e, &cfg, (goblin_tls_server **)&g->tls,
                                  err, sizeof(err)) < 0) {
        goblind_log(g, GOBLIN_LOG_WARNING, "%s", err);
        return -1;
    }
#endif
    if (goblin_listen_set_open(&lcfg, &g->listen) < 0)
        return -1;
    cfg.listen = g->listen;
    if ((rc = goblin_epoll_open(&cfg, &g->loop)) < 0 ||
        (rc = watch_signals(g)) < 0) {
        goblind_log(g, GOBLIN_LOG_WARNING, "epoll/signalfd: %s",
                    goblin_strerror(rc));
        return -1;
    }
    goblin_epoll_busy_hook(g->loop);   /* serving while a script is slow */
    return 0;
}

/* At exit: closes every connection and listener, removes the Unix
 * socket. */
void goblind_shutdown_net(struct goblind *g)
{
    goblin_epoll_close(g->loop);
    goblin_listen_set_close(g->listen);
#ifdef GOBLIND_TLS
    goblin_tls_server_close(g->tls);
#endif
    if (g->sigfd >= 0)
        close(g->sigfd);
}
