/* embed_serve.c - an application that embeds the store and lets other
 * processes reach it, with libgoblin's serving calls only (goblin/serve.h):
 * it opens a store, fills it, and serves it to redis-cli over a Unix
 * socket (a poll(2) loop driving goblin_conn's) and to goblin-cli over a
 * shared-memory ring (a ring poller on a second thread), both under one
 * engine lock, until SIGINT or SIGTERM.
 *
 *   embed_serve SOCKET RING    e.g. /tmp/app.sock /dev/shm/app.ring
 */
#include <goblin.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#define MAXFD 64

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static volatile sig_atomic_t stop;

static void lock(void *ctx) { (void)ctx; pthread_mutex_lock(&mu); }
static void unlock(void *ctx) { (void)ctx; pthread_mutex_unlock(&mu); }
static void on_signal(int sig) { (void)sig; stop = 1; }
static void *ring_thread(void *p) { goblin_ring_poller_run(p); return NULL; }

int main(int argc, char **argv)
{
    goblin_store *st;
    goblin_engine *eng;
    goblin_net *net;
    goblin_ring_endpoint *ep;
    goblin_ring_poller *rp;
    goblin_conn *conns[MAXFD] = {0};
    struct pollfd fds[MAXFD];
    char msg[256], key[16], val[16];
    pthread_t th;
    int n;

    if (argc != 3 || goblin_store_open(NULL, &st) < 0)
        return 2;
    for (int i = 0; i < 100; i++) {             /* the application's data */
        struct goblin_slice k = {key, (size_t)snprintf(key, 16, "key:%d", i)};
        struct goblin_slice v = {val, (size_t)snprintf(val, 16, "v%d", i)};
        goblin_str_set(st, k, v, NULL, NULL);
    }
    struct goblin_engine_config ecfg = {.store = st,
                                        .session_wake = goblin_net_session_wake};
    struct goblin_listener l = {-1, GOBLIN_TRANSPORT_UNIX, false, argv[1]};
    if (goblin_engine_open(&ecfg, &eng) < 0 ||
        (l.fd = goblin_listen_unix(argv[1], 0700, msg, sizeof(msg))) < 0) {
        fprintf(stderr, "embed_serve: %s\n", msg);
        return 1;
    }
    struct goblin_net_config ncfg = {.engine = eng, .lock = lock,
                                     .unlock = unlock,
                                     .limits = {.maxclients = MAXFD - 1}};
    struct goblin_ring_endpoint_config rcfg = {.engine = eng, .path = argv[2],
                                               .lock = lock, .unlock = unlock};
    struct goblin_ring_poller_config pcfg = {&ep, 1, GOBLIN_RING_IDLE_BACKOFF,
                                             50000};
    if (goblin_net_open(&ncfg, &net) < 0 ||
        goblin_ring_endpoint_open(&rcfg, &ep) < 0 ||
        goblin_ring_poller_open(&pcfg, &rp) < 0 ||
        pthread_create(&th, NULL, ring_thread, rp) != 0)
        return 1;
    signal(SIGPIPE, SIG_IGN);
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    printf("serving %s and %s\n", argv[1], argv[2]);
    fflush(stdout);
    while (!stop) {
        /* fds[0] is the listener; fds[i] is conns[i]'s socket. */
        fds[0] = (struct pollfd){l.fd, POLLIN, 0};
        for (int i = 1; i < MAXFD; i++) {
            int m = conns[i] ? goblin_conn_interest(conns[i]) : 0;
            fds[i] = (struct pollfd){conns[i] ? goblin_conn_fd(conns[i]) : -1,
                                     (short)((m & GOBLIN_CONN_READ ? POLLIN : 0) |
                                             (m & GOBLIN_CONN_WRITE ? POLLOUT : 0)),
                                     0};
        }
        if ((n = poll(fds, MAXFD, 100)) == 0)
            goblin_net_cron(net);              /* about 10 times a second */
        for (int i = 1; n > 0 && i < MAXFD; i++) {
            if (conns[i] == NULL || fds[i].revents == 0)
                continue;
            int m = goblin_conn_event(conns[i], fds[i].revents & ~POLLOUT,
                                      fds[i].revents & POLLOUT);
            if (m & GOBLIN_CONN_CLOSE) {
                goblin_conn_close(conns[i]);
                conns[i] = NULL;
            }
        }
        for (goblin_conn *c; (c = goblin_net_woken(net)) != NULL;)
            for (int i = 1; i < MAXFD; i++)    /* CLIENT KILL */
                if (conns[i] == c &&
                    (goblin_conn_event(c, false, false) & GOBLIN_CONN_CLOSE)) {
                    goblin_conn_close(c);
                    conns[i] = NULL;
                }
        for (int i = 1; n > 0 && (fds[0].revents & POLLIN) && i < MAXFD; i++)
            if (conns[i] == NULL && goblin_net_accept(net, &l, &conns[i]) <= 0)
                break;
    }
    goblin_ring_poller_stop(rp);
    pthread_join(th, NULL);
    goblin_ring_poller_close(rp);
    goblin_ring_endpoint_close(ep);
    goblin_net_close(net);
    close(l.fd);
    goblin_engine_close(eng);
    goblin_store_close(st);
    unlink(argv[1]);
    return 0;
}
