/* embed_serve.c - an application that embeds the store and lets other
 * processes reach it, with libgoblin's serving calls only (goblin/serve.h):
 * it opens a store, fills it, and serves it to redis-cli over a Unix
 * socket (the library's epoll loop over goblin_conn's, listening where
 * Redis-style settings say) and to goblin-cli over a shared-memory ring (a
 * ring poller on a second thread), both under one engine lock, until
 * SIGINT or SIGTERM. An application with an event loop of its own drives
 * the goblin_conn's from it instead (docs/threading.md, "Embedding").
 *
 *   embed_serve SOCKET RING    e.g. /tmp/app.sock /dev/shm/app.ring
 */
#include <goblin.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static goblin_epoll *loop;

static void lock(void *ctx) { (void)ctx; pthread_mutex_lock(&mu); }
static void unlock(void *ctx) { (void)ctx; pthread_mutex_unlock(&mu); }
static void on_signal(int sig) { (void)sig; goblin_epoll_stop(loop); }
static void *ring_thread(void *p) { goblin_ring_poller_run(p); return NULL; }

int main(int argc, char **argv)
{
    goblin_store *st;
    goblin_engine *eng;
    goblin_listen_set *ls = NULL;
    goblin_ring_endpoint *ep;
    goblin_ring_poller *rp;
    char msg[512], key[16], val[16];
    pthread_t th;

    if (argc != 3 || goblin_store_open(NULL, &st) < 0)
        return 2;
    for (int i = 0; i < 100; i++) {             /* the application's data */
        struct goblin_slice k = {key, (size_t)snprintf(key, 16, "key:%d", i)};
        struct goblin_slice v = {val, (size_t)snprintf(val, 16, "v%d", i)};
        goblin_str_set(st, k, v, NULL, NULL);
    }
    struct goblin_engine_config ecfg = {.store = st,
                                        .session_wake = goblin_net_session_wake};
    /* Where to listen, as redis-server's command line would say it. */
    char *args[] = {argv[0], "--port", "0", "--unixsocket", argv[1],
                    "--unixsocketperm", "700", "--maxclients", "64"};
    if (goblin_engine_open(&ecfg, &eng) < 0 ||
        goblin_engine_config_args(eng, 9, args, msg, sizeof(msg)) < 0) {
        fprintf(stderr, "embed_serve: %s\n", msg);
        return 1;
    }
    struct goblin_listen_set_config lcfg = {.engine = eng};
    struct goblin_net_config ncfg = {.engine = eng, .lock = lock,
                                     .unlock = unlock,
                                     .limits_get = goblin_net_limits_from_settings,
                                     .limits_ctx = eng};
    struct goblin_epoll_config lpcfg = {.net = &ncfg};
    struct goblin_ring_endpoint_config rcfg = {.engine = eng, .path = argv[2],
                                               .lock = lock, .unlock = unlock};
    struct goblin_ring_poller_config pcfg = {&ep, 1, GOBLIN_RING_IDLE_BACKOFF,
                                             50000};
    if (goblin_listen_set_open(&lcfg, &ls) < 0 ||
        (lpcfg.listen = ls, goblin_epoll_open(&lpcfg, &loop) < 0) ||
        goblin_ring_endpoint_open(&rcfg, &ep) < 0 ||
        goblin_ring_poller_open(&pcfg, &rp) < 0 ||
        pthread_create(&th, NULL, ring_thread, rp) != 0)
        return 1;
    signal(SIGPIPE, SIG_IGN);
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    printf("serving %s and %s\n", argv[1], argv[2]);
    fflush(stdout);
    goblin_epoll_run(loop);                     /* until a signal */
    goblin_ring_poller_stop(rp);
    pthread_join(th, NULL);
    goblin_ring_poller_close(rp);
    goblin_ring_endpoint_close(ep);
    goblin_epoll_close(loop);
    goblin_listen_set_close(ls);               /* removes the socket file */
    goblin_engine_close(eng);
    goblin_store_close(st);
    return 0;
}
