/* test_ring.c - goblind's --ring endpoints, end to end, through the C
 * client (goblin/client.h) and the raw ring API (goblin/ring.h).
 *
 *     test_ring RING_A RING_B UNIX_SOCKET
 *
 * run_ring.py starts goblind with two 4 KiB rings and a Unix socket and
 * passes their paths. Checks: PING, SET/GET and a 1,024-request pipeline
 * over a ring while a socket client works; SBE over a ring; a client that
 * detaches mid-request, or one that never reads its replies, leaves the
 * next one a clean session; a hostile
 * process scribbling over ring B's header resets ring B only (ring A and
 * the socket keep working, and ring B accepts a new client); the same
 * command sequence gives the same replies over a ring and the socket;
 * the typed list and set calls over a ring and the socket, in SBE and
 * RESP, and hostile list and set frames over both answered with errors.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <goblin.h>
#include <goblin/client.h>
#include <goblin/ring.h>

static int failures;

#define CHECK(cond)                                                       \
    do {                                                                  \
        if (!(cond)) {                                                    \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__,        \
                    __LINE__, #cond);                                     \
            failures++;                                                   \
        }                                                                 \
    } while (0)

#define SL(s) ((struct goblin_slice){(s), sizeof(s) - 1})

static const char *ring_a, *ring_b, *sock;

static goblin_client *connect_ring(const char *path, int proto)
{
    struct goblin_client_config cfg = {0};
    goblin_client *c = NULL;
    int rc;

    cfg.protocol = (enum goblin_client_protocol)proto;
    cfg.timeout_ms = 10000;
    rc = goblin_client_connect_ring(path, &cfg, &c);
    if (rc != 0)
        fprintf(stderr, "connect to ring %s: %d\n", path, rc);
    return rc == 0 ? c : NULL;
}

static goblin_client *connect_sock_as(int proto)
{
    struct goblin_client_config cfg = {0};
    goblin_client *c = NULL;

    cfg.protocol = (enum goblin_client_protocol)proto;
    cfg.timeout_ms = 10000;
    if (goblin_client_connect_unix(sock, &cfg, &c) != 0)
        return NULL;
    return c;
}

static goblin_client *connect_sock(void)
{
    struct goblin_client_config cfg = {0};
    goblin_client *c = NULL;

    cfg.timeout_ms = 10000;
    if (goblin_client_connect_unix(sock, &cfg, &c) != 0)
        return NULL;
    return c;
}

/* PING, SET k v, GET k on c; true when all answered right. */
static bool basic(goblin_client *c, const char *key)
{
    struct goblin_slice k = {key, strlen(key)}, v;
    bool ok;

    ok = goblin_client_ping(c) == 0 &&
         goblin_client_set(c, k, SL("value"), NULL) == 1 &&
         goblin_client_get(c, k, &v) == 1 && v.len == 5 &&
         memcmp(v.ptr, "value", 5) == 0;
    if (!ok)
        fprintf(stderr, "basic on %s: %s\n", key, goblin_client_error(c));
    return ok;
}

static void test_basic_and_pipeline(void)
{
    goblin_client *c = connect_ring(ring_a, GOBLIN_CLIENT_RESP2);
    goblin_client *s = connect_sock();
    const struct goblin_resp_value *r;
    char key[32];
    int good = 0;

    CHECK(c != NULL && s != NULL);
    if (c == NULL || s == NULL)
        goto out;
    CHECK(basic(c, "ring:k"));
    CHECK(basic(s, "sock:k"));
    goblin_client_pipeline_begin(c);
    for (int i = 0; i < 1024; i++) {
        snprintf(key, sizeof(key), "p:%d", i);
        struct goblin_slice argv[3] = {SL("INCRBY"), {key, strlen(key)},
                                       SL("7")};
        goblin_client_call(c, 3, argv, &r);
    }
    CHECK(basic(s, "sock:k2"));   /* the socket works meanwhile */
    for (int i = 0; i < 1024; i++)
        if (goblin_client_next_reply(c, &r) == 0 &&
            r->type == GOBLIN_RESP_INTEGER && r->integer == 7)
            good++;
    goblin_client_pipeline_end(c);
    CHECK(good == 1024);
    CHECK(basic(c, "ring:k3"));
out:
    goblin_client_close(c);
    goblin_client_close(s);
}

static void test_sbe(void)
{
    goblin_client *c = connect_ring(ring_a, GOBLIN_CLIENT_SBE);

    CHECK(c != NULL);
    if (c != NULL)
        CHECK(basic(c, "sbe:k"));
    goblin_client_close(c);
}

static void nap_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};

    nanosleep(&ts, NULL);
}

/* A client that fills SQ and never reads CQ, then detaches: the server,
 * stuck on a full CQ, still sees the next client's handshake. */
static void test_stuck_client(void)
{
    static const char ping[] = "*1\r\n$4\r\nPING\r\n";
    goblin_ring *r = NULL;
    goblin_client *c;
    int sent = 0;

    CHECK(goblin_ring_open(ring_a, NULL, &r) == 0);
    for (int round = 0; r != NULL && round < 20; round++) {
        while (goblin_ring_publish(r, ping, sizeof(ping) - 1) == 0)
            sent++;
        nap_ms(5);
    }
    CHECK(sent > 128);            /* more than both queues hold */
    goblin_ring_close(r);
    c = connect_ring(ring_a, GOBLIN_CLIENT_RESP2);
    CHECK(c != NULL);
    if (c != NULL)
        CHECK(basic(c, "after-stuck"));
    goblin_client_close(c);
}

/* Half a request, then detach: the next client must not see it. */
static void test_reconnect(void)
{
    static const char half[] = "*3\r\n$3\r\nSET\r\n$4\r\nha";
    struct goblin_ring_config cfg = {0};
    goblin_ring *r = NULL;
    goblin_client *c;

    cfg.open_timeout_ns = 2000000000;
    CHECK(goblin_ring_open(ring_a, &cfg, &r) == 0);
    if (r != NULL)
        CHECK(goblin_ring_publish(r, half, sizeof(half) - 1) == 0);
    goblin_ring_close(r);
    c = connect_ring(ring_a, GOBLIN_CLIENT_RESP2);
    CHECK(c != NULL);
    if (c != NULL)
        CHECK(basic(c, "after-reconnect"));
    goblin_client_close(c);
}


/* Attaches to ring B, then writes garbage indices and bytes over the
 * mapped file. */
static void scribble(void)
{
    goblin_ring *r = NULL;
    int fd;
    unsigned char *p;

    CHECK(goblin_ring_open(ring_b, NULL, &r) == 0);
    fd = open(ring_b, O_RDWR);
    CHECK(fd >= 0);
    if (fd < 0)
        return;
    p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK(p != MAP_FAILED);
    if (p != MAP_FAILED) {
        uint64_t bad_tail = 12345;          /* misaligned, past the head */
        memset(p + 4096, 0xa5, 4096);       /* garbage over SQ data */
        memcpy(p + 384, &bad_tail, 8);      /* sq_tail */
        munmap(p, 8192);
    }
    close(fd);
    /* The server notices within its wait slice and replaces the file. */
    for (int i = 0; i < 500 && r != NULL && goblin_ring_check(r) == 0; i++)
        nap_ms(10);
    CHECK(r != NULL && goblin_ring_check(r) == GOBLIN_ECONNRESET);
    goblin_ring_close(r);
}

static void test_hostile(void)
{
    goblin_client *a = connect_ring(ring_a, GOBLIN_CLIENT_RESP2);
    goblin_client *s = connect_sock(), *b;

    CHECK(a != NULL && s != NULL);
    scribble();
    if (a != NULL)
        CHECK(basic(a, "hostile:a"));
    if (s != NULL)
        CHECK(basic(s, "hostile:s"));
    b = connect_ring(ring_b, GOBLIN_CLIENT_RESP2);   /* a fresh ring */
    CHECK(b != NULL);
    if (b != NULL)
        CHECK(basic(b, "hostile:b"));
    goblin_client_close(a);
    goblin_client_close(b);
    goblin_client_close(s);
}

/* The typed list and set calls on c; true when all answered right. */
static bool lists_and_sets(goblin_client *c, const char *tag)
{
    char lk[32], sk[32];
    struct goblin_slice l = {lk, (size_t)snprintf(lk, sizeof(lk), "l:%s",
                                                  tag)};
    struct goblin_slice t = {sk, (size_t)snprintf(sk, sizeof(sk), "t:%s",
                                                  tag)};
    struct goblin_slice e[3] = {SL("a"), SL("b"), SL("c")};
    const struct goblin_slice *out = NULL;
    bool ok;

    ok = goblin_client_rpush(c, l, e, 3) == 3 &&
         goblin_client_lpush(c, l, e + 2, 1) == 4 &&
         goblin_client_llen(c, l) == 4 &&
         goblin_client_lrange(c, l, 0, 1, &out) == 2 && out[0].len == 1 &&
         memcmp(out[0].ptr, "c", 1) == 0 &&
         goblin_client_rpop(c, l, 2, &out) == 2 &&
         memcmp(out[0].ptr, "c", 1) == 0 && memcmp(out[1].ptr, "b", 1) == 0 &&
         goblin_client_lpop(c, l, 9, &out) == 2 &&
         goblin_client_sadd(c, t, e, 3) == 3 &&
         goblin_client_srem(c, t, e, 1) == 1 &&
         goblin_client_sismember(c, t, SL("b")) == 1 &&
         goblin_client_scard(c, t) == 2 &&
         goblin_client_smembers(c, t, &out) == 2 &&
         goblin_client_srem(c, t, e + 1, 2) == 2 &&
         goblin_client_llen(c, l) == 0;
    if (!ok)
        fprintf(stderr, "lists and sets on %s: %s\n", tag,
                goblin_client_error(c));
    return ok;
}

static void test_lists_and_sets(void)
{
    static const int protos[] = {GOBLIN_CLIENT_SBE, GOBLIN_CLIENT_RESP2,
                                 GOBLIN_CLIENT_RESP3};
    char tag[32];

    for (int i = 0; i < 3; i++) {
        goblin_client *r = connect_ring(ring_a, protos[i]);
        goblin_client *s = connect_sock_as(protos[i]);

        CHECK(r != NULL && s != NULL);
        snprintf(tag, sizeof(tag), "ring%d", protos[i]);
        if (r != NULL)
            CHECK(lists_and_sets(r, tag));
        snprintf(tag, sizeof(tag), "sock%d", protos[i]);
        if (s != NULL)
            CHECK(lists_and_sets(s, tag));
        goblin_client_close(r);
        goblin_client_close(s);
    }
}

/* Hostile list and set frames: an LPUSH whose group claims 65,535
 * elements and holds one, an SADD member whose length runs past the
 * frame. Each gets an ErrorReply and the connection goes on. */
static const uint8_t lying_frames[] = {
    17, 0, 0, 0, 0, 0, 110, 0, 7, 0, 1, 0, 0, 0, 0xff, 0xff,
    1, 0, 0, 0, 'a',
    22, 0, 0, 0, 0, 0, 116, 0, 7, 0, 1, 0, 0, 0, 1, 0,
    0xff, 0xff, 0xff, 0x3f, 'a', 1, 0, 0, 0, 't',
    8, 0, 0, 0, 0, 0, 16, 0, 7, 0, 1, 0, /* PING */
};

/* The template ids of the reply frames in p[0..n). */
static int reply_ids(const uint8_t *p, size_t n, unsigned *ids, int max)
{
    int k = 0;

    while (n >= 12 && k < max) {
        uint32_t len = (uint32_t)p[0] | (uint32_t)p[1] << 8 |
                       (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;

        if (len + 4 > n)
            break;
        ids[k++] = (unsigned)p[6] | (unsigned)p[7] << 8;
        p += 4 + len;
        n -= 4 + len;
    }
    return k;
}

static void test_hostile_list_frames_over_the_socket(void)
{
    struct sockaddr_un a = {0};
    struct timeval tv = {10, 0};
    uint8_t buf[4096];
    unsigned ids[8];
    size_t got = 0;
    int fd = socket(AF_UNIX, SOCK_STREAM, 0), k = 0;

    a.sun_family = AF_UNIX;
    snprintf(a.sun_path, sizeof(a.sun_path), "%s", sock);
    CHECK(fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    CHECK(write(fd, "GOBLINS!", 8) == 8);
    CHECK(write(fd, lying_frames, sizeof(lying_frames)) ==
          (ssize_t)sizeof(lying_frames));
    for (int i = 0; i < 200 && k < 3; i++) {
        ssize_t n = read(fd, buf + got, sizeof(buf) - got);

        if (n <= 0)
            break;
        got += (size_t)n;
        k = reply_ids(buf, got, ids, 8);
    }
    CHECK(k == 3 && ids[0] == 3 && ids[1] == 3 && ids[2] == 2);
    close(fd);
}

static void test_hostile_list_frames_over_the_ring(void)
{
    goblin_ring *r = NULL;
    struct goblin_slice rec;
    unsigned ids[8];
    size_t off = 0;
    int k = 0, seen = 0;

    CHECK(goblin_ring_open(ring_a, NULL, &r) == 0);
    if (r == NULL)
        return;
    CHECK(goblin_ring_publish(r, "GOBLINS!", 8) == 0);
    /* One frame per record, as the client sends them. */
    while (off < sizeof(lying_frames)) {
        uint32_t len = lying_frames[off] | (uint32_t)lying_frames[off + 1]
                                               << 8;

        CHECK(goblin_ring_publish(r, lying_frames + off, len + 4) == 0);
        off += len + 4;
    }
    goblin_ring_flush(r);
    for (int i = 0; i < 2000 && seen < 3; i++) {
        int rc = goblin_ring_peek(r, &rec);

        if (rc == GOBLIN_RING_RECORD) {
            k = reply_ids(rec.ptr, rec.len, ids + seen, 8 - seen);
            seen += k;
            goblin_ring_release(r);
            continue;
        }
        nap_ms(1);
    }
    CHECK(seen == 3 && ids[0] == 3 && ids[1] == 3 && ids[2] == 2);
    goblin_ring_close(r);
}

/* How many sessions of ring path CLIENT LIST shows, or -1. */
static int ring_sessions(goblin_client *s, const char *path)
{
    struct goblin_slice argv[2] = {SL("CLIENT"), SL("LIST")};
    const struct goblin_resp_value *r;
    char pat[512];
    size_t len = (size_t)snprintf(pat, sizeof(pat), "laddr=%s ", path);
    int n = 0;

    if (goblin_client_call(s, 2, argv, &r) != 0 ||
        r->type != GOBLIN_RESP_BULK)
        return -1;
    for (const char *p = r->str.ptr, *end = p + r->str.len;
         (p = memmem(p, (size_t)(end - p), pat, len)) != NULL; p += len)
        n++;
    return n;
}

/* A client process that exits without a word (no reconnect follows):
 * the server notices the process is gone and closes its session. */
static void test_client_process_exits(void)
{
    goblin_client *s = connect_sock();
    int status, n = -1;
    pid_t pid;

    CHECK(s != NULL);
    if (s == NULL)
        return;
    pid = fork();
    if (pid == 0) {
        goblin_client *c = connect_ring(ring_b, GOBLIN_CLIENT_RESP2);
        _exit(c != NULL && basic(c, "exits") ? 0 : 1);  /* no close */
    }
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid &&
          WIFEXITED(status) && WEXITSTATUS(status) == 0);
    for (int i = 0; i < 100 && (n = ring_sessions(s, ring_b)) != 0; i++)
        nap_ms(50);
    CHECK(n == 0);
    goblin_client_close(s);
}

static const char *const script[][4] = {
    {"FLUSHALL"}, {"SET", "a", "1"}, {"INCR", "a"}, {"GET", "a"},
    {"GET", "missing"}, {"LPUSH", "l", "x", "y"}, {"LRANGE", "l", "0", "-1"},
    {"HSET", "h", "f", "v"}, {"HGETALL", "h"}, {"INCR", "l"},
    {"ZADD", "z", "1.5", "m"}, {"ZRANGE", "z", "0", "-1"}, {"NOSUCH"},
    {"SET", "a"}, {"EXISTS", "a", "l", "q"}, {"TYPE", "h"}, {"DEL", "a"},
    {"ECHO", "ring"}, {"MGET", "a", "l", "h"}, {"DBSIZE"},
};

/* The script's replies as redis-cli prints them, into out. */
static void run_script(goblin_client *c, struct goblin_buf *out)
{
    for (size_t i = 0; i < sizeof(script) / sizeof(script[0]); i++) {
        struct goblin_slice argv[4];
        const struct goblin_resp_value *r;
        size_t n = 0;

        while (n < 4 && script[i][n] != NULL) {
            argv[n] = (struct goblin_slice){script[i][n],
                                            strlen(script[i][n])};
            n++;
        }
        if (goblin_client_call(c, n, argv, &r) != 0) {
            goblin_buf_append(out, "FAILED\n", 7);
            return;
        }
        goblin_client_format_reply(r, 0, out);
    }
}

static void test_differential(void)
{
    goblin_client *c = connect_ring(ring_a, GOBLIN_CLIENT_RESP2);
    goblin_client *s = connect_sock();
    struct goblin_buf x = {0}, y = {0};

    CHECK(c != NULL && s != NULL);
    if (c != NULL && s != NULL) {
        run_script(c, &x);
        run_script(s, &y);
        CHECK(x.len > 0 && x.len == y.len &&
              memcmp(x.data, y.data, x.len) == 0);
        if (x.len != y.len || memcmp(x.data, y.data, x.len) != 0)
            fprintf(stderr, "ring:\n%.*s\nsocket:\n%.*s\n", (int)x.len,
                    (const char *)x.data, (int)y.len, (const char *)y.data);
    }
    goblin_buf_free(&x);
    goblin_buf_free(&y);
    goblin_client_close(c);
    goblin_client_close(s);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: test_ring RING_A RING_B SOCKET\n");
        return 2;
    }
    ring_a = argv[1];
    ring_b = argv[2];
    sock = argv[3];
    test_basic_and_pipeline();
    test_sbe();
    test_reconnect();
    test_stuck_client();
    test_hostile();
    test_differential();
    test_lists_and_sets();
    test_hostile_list_frames_over_the_socket();
    test_hostile_list_frames_over_the_ring();
    test_client_process_exits();
    printf("%s\n", failures == 0 ? "ok" : "FAILED");
    return failures == 0 ? 0 : 1;
}
