/* goblind.h - what goblind's files share: the one struct goblind that main
 * passes by pointer, and the functions each file offers the others.
 * Settings live in the engine (goblin_engine_config_*); goblind copies
 * only loglevel, which the log reads without the engine lock.
 *
 * Threading: the epoll thread serves sockets and the ring threads serve
 * the rings; both call into the one engine under the engine lock (g->lock,
 * goblind_lock), never held while waiting (docs/threading.md).
 */
#ifndef GOBLIND_H
#define GOBLIND_H

#include <pthread.h>
#include <stdio.h>

#include <goblin.h>
#include <goblin/lua.h> /* goblin_lua_attach, if built with scripting */

struct goblind {
    goblin_store *store;
    goblin_engine *engine;
    pthread_mutex_t lock;          /* the engine lock */
    long loglevel;
    bool started;                  /* serving: CONFIG SET maxclients fits */
    bool shutdown_cmd;             /* stopped by SHUTDOWN */
    bool in_child;                 /* a BGSAVE or AOF child (logs as "C") */
    char why[128];                 /* a refused setting's text */
    char *pidfile;                 /* written: removed at exit */
    FILE *logf;                    /* NULL: stdout */
    goblin_persist *persist;       /* BGSAVE, the AOF, the final save */
    goblin_epoll *loop;            /* the socket connections' loop */
    goblin_listen_set *listen;
    void *tls;                     /* the goblin_tls_server, or NULL */
    int sigfd;
    goblin_ring_set *rings;
    struct ring_thread *ring_threads;
    int nring_threads;
    char executable[4096];
};

/* main.c: the engine lock (ctx is the struct goblind: these are also the
 * library's lock callbacks). config.c: the command line and config file;
 * 0, 1 after --help or --version, or -1. net_epoll.c: the listeners,
 * signals and the library's epoll loop. ring_poll.c: the ring threads. */
void goblind_lock(void *ctx);
void goblind_unlock(void *ctx);
int goblind_parse_args(struct goblind *g, int argc, char **argv);
int goblind_listen(struct goblind *g);
void goblind_shutdown_net(struct goblind *g);
int goblind_ring_start(struct goblind *g);
void goblind_ring_stop(struct goblind *g);

/* process.c: the log (Redis's line format), the fork behind BGSAVE and
 * the AOF rewrite (the library's fork hook), daemonizing, the pidfile
 * and sd_notify; goblind_process_end removes the pidfile, closes the
 * log. */
void goblind_log(struct goblind *g, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void goblind_engine_log(void *ctx, enum goblin_log_level level,
                        const char *text);
int goblind_fork(void *ctx, int *keep_fd);
int goblind_log_open(struct goblind *g);
int goblind_daemonize(void);
int goblind_pidfile_write(struct goblind *g);
void goblind_process_end(struct goblind *g);
void goblind_notify(const char *state);

#endif
