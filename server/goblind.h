/* goblind.h - what goblind's files share: the one struct goblind that main
 * passes by pointer (options, the store, the engine, the event loop), and
 * the functions each file offers the others.
 *
 * Threading: the epoll thread serves sockets and the ring threads serve
 * the rings; both call into the one engine under the engine lock (g->lock,
 * goblind_lock), never held while waiting (docs/threading.md).
 */
#ifndef GOBLIND_H
#define GOBLIND_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <goblin.h>
#include <goblin/engine.h>
#include <goblin/resp.h>
#include <goblin/serve.h>

#define GOBLIND_MAX_BIND 16

struct goblind;
struct ring_thread;

struct goblind {
    /* Options: copies of the engine's settings (config.c), refreshed
     * whenever one changes; the engine reads the command line and the
     * config file. */
    long port;                     /* 0 = no TCP */
    char *bind[GOBLIND_MAX_BIND];  /* addresses; a leading '-' = optional */
    int nbind;
    bool bind_default;             /* bind not given: its entries optional */
    char *unixsocket;              /* NULL = no Unix socket */
    long unixsocketperm;           /* shown in octal, as Redis: 700 */
    bool protected_mode;           /* refuse non-loopback clients while
                                    * the default user has no password */
    long tls_port;                 /* 0 = no TLS listener */
    char *tls_cert_file, *tls_key_file, *tls_ca_cert_file;
    char *tls_auth_clients;        /* yes, no or optional */
    long maxclients;
    long timeout;                  /* idle seconds; 0 = never */
    long loglevel;                 /* enum goblin_log_level */
    char *logfile;                 /* NULL = stdout */
    bool sbe_tcp;                  /* the SBE magic switches a TCP, */
    bool sbe_unixsocket;           /* a Unix socket or a ring client */
    bool sbe_ring;                 /* to SBE; no: RESP only */
    long socket_spin_us;           /* poll this long after traffic */
    bool daemonize;
    char *pidfile;                 /* NULL = none */
    char *import_rdb;              /* --import-rdb: a Redis dump to load */
    FILE *logf;
    char *config_file;             /* absolute path, or NULL */
    bool started;                  /* options read: maxclients checked */
    char why[128];                 /* a CONFIG SET error text */

    /* Run time. */
    goblin_store *store;
    goblin_engine *engine;
    pthread_mutex_t lock;          /* the engine lock */
    struct goblin_serve_persist persist;
    goblin_net *net;               /* the socket connections */
    int epfd;
    int sigfd;
    struct goblin_listener listeners[2 * GOBLIND_MAX_BIND + 1];
    int nlisten;
    void *tls;                     /* the goblin_tls_server, or NULL */
    int64_t loop_ms;               /* monotonic ms, read once per wake-up */
    bool accept_paused;            /* out of descriptors: until next cron */
    bool stopping;
    goblin_ring_set *rings;        /* --ring directives, NULL = none */
    struct ring_thread *ring_threads;
    int nring_threads;
    char run_id[41];
    int child_pid;                 /* the BGSAVE child, 0 = none; -1 in
                                      the child itself (logs as "C") */
    char child_tmp[4200];          /* its temporary file */
    bool shutdown_cmd;             /* stopped by SHUTDOWN */
    bool pidfile_written;
    char executable[4096];
};

/* log.c: Redis-style lines "pid:M dd Mon yyyy hh:mm:ss.mmm * text". */
void goblind_log(struct goblind *g, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int goblind_log_open(struct goblind *g);
void goblind_log_close(struct goblind *g);
int goblind_loglevel_parse(const char *text);
const char *goblind_loglevel_name(int level);
void goblind_engine_log(void *ctx, enum goblin_log_level level,
                        const char *text);

/* config.c: options, read by the engine (g->engine must be open);
 * goblind_parse_args returns 0, 1 after --help or --version, or -1. */
void goblind_defaults(struct goblind *g);
int goblind_parse_args(struct goblind *g, int argc, char **argv);
void goblind_free_options(struct goblind *g);

/* maxclients.c: the open-files limit maxclients needs. */
void goblind_maxclients_start(struct goblind *g);
int goblind_maxclients_check(struct goblind *g, const char **why);

/* net_epoll.c: listeners, the connections' epoll loop, signals. */
int goblind_listen(struct goblind *g);
int goblind_run(struct goblind *g);
void goblind_shutdown_net(struct goblind *g);

/* persist.c: BGSAVE's fork, reaping it (SIGCHLD), SHUTDOWN; loading and
 * the final save are the library's (goblin_serve_load, _final_save). */
void goblind_persist_hooks(struct goblind *g,
                           struct goblin_engine_config *ecfg);
int goblind_persist_load(struct goblind *g);
void goblind_persist_reap(struct goblind *g);
void goblind_persist_kill_child(struct goblind *g);

/* notify.c: systemd's sd_notify by hand ("READY=1", "STOPPING=1"). */
void goblind_notify(const char *state);

/* daemon.c: --daemonize and --pidfile. */
int goblind_daemonize(struct goblind *g);
int goblind_pidfile_write(struct goblind *g);
void goblind_pidfile_remove(struct goblind *g);

/* main.c: the engine lock, held around every call into the engine or a
 * session once ring threads may run (docs/threading.md); ctx is the
 * struct goblind, so these are also the library's lock callbacks. */
void goblind_lock(void *ctx);
void goblind_unlock(void *ctx);

/* ring_poll.c: --ring directives (a library ring set) and the threads
 * of its pollers. goblind_ring_option returns 1 for a directive that is
 * not a ring option, 0 once applied, -1 with *why. */
int goblind_ring_option(struct goblind *g, int argc, const char *const *argv,
                        const char **why);
int goblind_ring_register_settings(struct goblind *g);
int goblind_ring_start(struct goblind *g);
void goblind_ring_stop(struct goblind *g);

#endif
