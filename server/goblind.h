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
    char why[128];                 /* a refused setting's text */
    char *pidfile;                 /* written: removed at exit */
    FILE *logf;                    /* NULL: stdout */
    struct goblin_serve_persist persist;
    goblin_epoll *loop;            /* the socket connections' loop */
    pthread_t loop_thread;         /* the thread running it */
    goblin_listen_set *listen;
    void *tls;                     /* the goblin_tls_server, or NULL */
    int sigfd;
    goblin_ring_set *rings;
    struct ring_thread *ring_threads;
    int nring_threads;
    int child_pid;                 /* the BGSAVE child, 0 = none; -1 in
                                      the child itself (logs as "C") */
    char child_path[4096];         /* where it saves */
    int aof_child;                 /* the AOF rewrite child, 0 = none */
    int repl_child;                /* a replicas' full sync, 0 = none */
    goblin_aof *aof;               /* appendonly yes: the AOF, or NULL */
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

/* busy.c: serving while a script is busy (from the loop's thread, before
 * the ring threads start); each ring thread names its poller. */
void goblind_busy_start(struct goblind *g);
void goblind_busy_ring_thread(goblin_ring_poller *p);

/* persist.c: BGSAVE's fork, reaping it (SIGCHLD), SHUTDOWN. */
void goblind_persist_hooks(struct goblind *g, struct goblin_engine_config *e);
int goblind_persist_load(struct goblind *g);
void goblind_persist_reap(struct goblind *g, int flags);
void goblind_persist_kill_child(void *ctx);
int goblind_aof_switch(struct goblind *g, bool on);

/* process.c: the log (Redis's line format), daemonizing, the pidfile and
 * sd_notify; goblind_process_end removes the pidfile, closes the log. */
void goblind_log(struct goblind *g, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void goblind_engine_log(void *ctx, enum goblin_log_level level,
                        const char *text);
int goblind_log_open(struct goblind *g);
int goblind_daemonize(void);
int goblind_pidfile_write(struct goblind *g);
void goblind_process_end(struct goblind *g);
void goblind_notify(const char *state);

#endif
