/* test_serve_net.c - the library's socket side (goblin/serve.h): a
 * goblin_conn driven through its bytes-only calls and through
 * goblin_conn_event on a real Unix socket, close after flush (QUIT),
 * CLIENT KILL through the woken list, maxclients' refusal text, and the
 * listener helpers' bind rules. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "testutil.h"

struct net_fx {
    goblin_store *st;
    goblin_engine *eng;
    goblin_net *net;
    int lfd;
    char path[64];
    struct goblin_listener l;
};

static struct net_fx f;   /* static: f.l.path points into it */

static void fx_open(long maxclients)
{
    struct goblin_engine_config ecfg = {0};
    struct goblin_net_config ncfg = {0};
    char msg[256];

    memset(&f, 0, sizeof(f));
    assert_int_equal(goblin_store_open(NULL, &f.st), 0);
    ecfg.store = f.st;
    ecfg.session_wake = goblin_net_session_wake;
    assert_int_equal(goblin_engine_open(&ecfg, &f.eng), 0);
    ncfg.engine = f.eng;
    ncfg.limits.maxclients = maxclients;
    assert_int_equal(goblin_net_open(&ncfg, &f.net), 0);
    snprintf(f.path, sizeof(f.path), "/tmp/goblin-net-%d.sock", getpid());
    f.lfd = goblin_listen_unix(f.path, 0700, msg, sizeof(msg));
    assert_true(f.lfd >= 0);
    f.l = (struct goblin_listener){f.lfd, GOBLIN_TRANSPORT_UNIX, false,
                                   f.path};
}

static void fx_close(struct net_fx *f)
{
    goblin_net_close(f->net);
    close(f->lfd);
    unlink(f->path);
    goblin_engine_close(f->eng);
    goblin_store_close(f->st);
}

/* A client socket connected to the fixture, and the server's conn. */
static int dial(struct net_fx *f, goblin_conn **c)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);

    strcpy(sa.sun_path, f->path);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(goblin_net_accept(f->net, &f->l, c), 1);
    return fd;
}

static void bytes_only(void **state)
{
    goblin_conn *c;
    size_t len;
    const char *out;
    int fd, m;

    (void)state;
    fx_open(0);
    fd = dial(&f, &c);
    assert_non_null(c);
    m = goblin_conn_feed(c, "PING\r\n", 6);
    assert_int_equal(m, GOBLIN_CONN_READ | GOBLIN_CONN_WRITE |
                            GOBLIN_CONN_CHANGED);
    out = goblin_conn_output(c, &len);
    assert_int_equal(len, 7);
    assert_memory_equal(out, "+PONG\r\n", 7);
    assert_int_equal(goblin_conn_consume(c, 7),
                     GOBLIN_CONN_READ | GOBLIN_CONN_CHANGED);
    goblin_conn_feed(c, "QUIT\r\n", 6);
    goblin_conn_output(c, &len);
    assert_int_equal(len, 5);                  /* +OK, then close */
    assert_int_equal(goblin_conn_consume(c, len), GOBLIN_CONN_CLOSE);
    goblin_conn_close(c);
    assert_int_equal(goblin_net_count(f.net), 0);
    close(fd);
    fx_close(&f);
}

static void event_and_kill(void **state)
{
    goblin_conn *a, *b;
    char buf[256], cmd[64];
    ssize_t n;
    int fa, fb, id;

    (void)state;
    fx_open(0);
    fa = dial(&f, &a);
    fb = dial(&f, &b);
    assert_int_equal(write(fb, "CLIENT ID\r\n", 11), 11);
    assert_int_equal(goblin_conn_event(b, true, false), GOBLIN_CONN_READ);
    n = read(fb, buf, sizeof(buf) - 1);
    assert_true(n > 0);
    buf[n] = '\0';
    id = atoi(buf + 1);
    n = snprintf(cmd, sizeof(cmd), "CLIENT KILL ID %d\r\n", id);
    assert_int_equal(write(fa, cmd, (size_t)n), n);
    assert_int_equal(goblin_conn_event(a, true, false), GOBLIN_CONN_READ);
    assert_ptr_equal(goblin_net_woken(f.net), b);
    assert_null(goblin_net_woken(f.net));
    assert_int_equal(goblin_conn_event(b, false, false), GOBLIN_CONN_CLOSE);
    goblin_conn_close(b);
    assert_int_equal(read(fb, buf, sizeof(buf)), 0);   /* closed */
    assert_int_equal(goblin_net_count(f.net), 1);
    close(fa);
    assert_int_equal(goblin_conn_event(a, true, false), GOBLIN_CONN_CLOSE);
    goblin_conn_close(a);
    close(fb);
    fx_close(&f);
}

static void maxclients_refuses(void **state)
{
    static const char full[] = "-ERR max number of clients reached\r\n";
    goblin_conn *a, *b, *none;
    char buf[128];
    int fa, fb;

    (void)state;
    fx_open(1);
    fa = dial(&f, &a);
    fb = dial(&f, &b);
    assert_non_null(a);
    assert_null(b);
    assert_int_equal(read(fb, buf, sizeof(buf)), sizeof(full) - 1);
    assert_memory_equal(buf, full, sizeof(full) - 1);
    assert_int_equal(goblin_net_accept(f.net, &f.l, &none), 0);
    close(fa);
    close(fb);
    fx_close(&f);
}

static void bind_rules(void **state)
{
    char msg[256];
    bool skipped;
    int fd;

    (void)state;
    fd = goblin_listen_tcp("127.0.0.1", 0, false, &skipped, msg,
                           sizeof(msg));
    assert_true(fd >= 0);
    close(fd);
    fd = goblin_listen_tcp("not-an-address", 0, false, &skipped, msg,
                           sizeof(msg));
    assert_true(fd < 0 && !skipped);
    assert_non_null(strstr(msg, "Bad bind address not-an-address"));
    /* 192.0.2.1 (TEST-NET-1) is on no interface here. */
    fd = goblin_listen_tcp("-192.0.2.1", 0, false, &skipped, msg,
                           sizeof(msg));
    assert_true(fd < 0 && skipped);
    assert_non_null(strstr(msg, "Skipping: Could not create server TCP "
                                "listening socket 192.0.2.1:0"));
    fd = goblin_listen_tcp("192.0.2.1", 0, false, &skipped, msg,
                           sizeof(msg));
    assert_true(fd < 0 && !skipped);
    assert_non_null(strstr(msg, "Error: "));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bytes_only),
        cmocka_unit_test(event_and_kill),
        cmocka_unit_test(maxclients_refuses),
        cmocka_unit_test(bind_rules),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
