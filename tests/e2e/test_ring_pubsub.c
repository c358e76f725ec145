/* test_ring_pubsub.c - subscribers on goblind's rings (run by
 * run_ring_pubsub.py with two ring paths and a Unix socket).
 *
 * A subscriber on ring A, over RESP2, RESP3 and SBE, receives through its
 * CQ what a socket client publishes, without a request, in order, with
 * channel, pattern and payload intact; a subscriber over a socket gets
 * what a ring client publishes. A ring subscriber that stops draining
 * its CQ is disconnected at the pubsub output limit, while the publisher
 * and the client of ring B go on unblocked. Under CLIENT PAUSE WRITE a
 * ring client's write (RESP, typed SBE, SBE Argv) and PUBLISH wait, seen
 * by a socket client as blocked_clients, and run when the pause ends.
 * A MONITOR on a ring (RESP, the raw ring API) gets a socket client's
 * commands in its CQ, in MONITOR's line format.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "goblin.h"
#include "goblin/client.h"
#include "goblin/ring.h"

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
    /* The last client's detach is noticed by the server's chores. */
    for (int i = 0; i < 200; i++) {
        rc = goblin_client_connect_ring(path, &cfg, &c);
        if (rc != GOBLIN_EBUSY)
            break;
        nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
    }
    if (rc != 0)
        fprintf(stderr, "connect to ring %s: %d\n", path, rc);
    return rc == 0 ? c : NULL;
}

static goblin_client *connect_sock(int proto)
{
    struct goblin_client_config cfg = {0};
    goblin_client *c = NULL;

    cfg.protocol = (enum goblin_client_protocol)proto;
    cfg.timeout_ms = 10000;
    if (goblin_client_connect_unix(sock, &cfg, &c) != 0)
        return NULL;
    return c;
}

static int64_t publish(goblin_client *c, struct goblin_slice ch,
                       struct goblin_slice msg)
{
    struct goblin_slice argv[3] = {SL("PUBLISH"), ch, msg};
    const struct goblin_resp_value *v;

    if (goblin_client_call(c, 3, argv, &v) != 0 ||
        v->type != GOBLIN_RESP_INTEGER)
        return -1;
    return v->integer;
}

static bool eq(struct goblin_slice s, const char *t)
{
    return s.len == strlen(t) && memcmp(s.ptr, t, s.len) == 0;
}

/* A subscriber speaking proto on ring A, a publisher on the socket. */
static void test_ring_subscriber(int proto)
{
    goblin_client *sub = connect_ring(ring_a, proto);
    goblin_client *pub = connect_sock(GOBLIN_CLIENT_RESP2);
    struct goblin_slice chans[2] = {SL("news"), SL("sport")};
    struct goblin_slice pat = SL("n*");
    struct goblin_client_message m;
    const struct goblin_resp_value *v;
    struct goblin_slice ping = SL("PING");
    static char big[3000];

    CHECK(sub != NULL && pub != NULL);
    if (sub == NULL || pub == NULL)
        goto out;
    CHECK(goblin_client_subscribe(sub, "SUBSCRIBE", 2, chans) == 2);
    CHECK(goblin_client_subscribe(sub, "psubscribe", 1, &pat) == 3);
    /* Nothing yet: the wait times out and the client stays usable. */
    CHECK(goblin_client_next_message(sub, 20, &m) == 0);
    CHECK(publish(pub, SL("news"), SL("hello")) == 2);
    CHECK(publish(pub, SL("sport"), SL("goal")) == 1);
    memset(big, 'b', sizeof(big));
    CHECK(publish(pub, SL("sport"), (struct goblin_slice){big,
                                                          sizeof(big)}) == 1);
    CHECK(goblin_client_next_message(sub, 5000, &m) == 1);
    CHECK(m.kind == GOBLIN_CLIENT_MESSAGE && eq(m.channel, "news") &&
          eq(m.payload, "hello"));
    CHECK(goblin_client_next_message(sub, 5000, &m) == 1);
    CHECK(m.kind == GOBLIN_CLIENT_PMESSAGE && eq(m.pattern, "n*") &&
          eq(m.channel, "news") && eq(m.payload, "hello"));
    CHECK(goblin_client_next_message(sub, 5000, &m) == 1);
    CHECK(m.kind == GOBLIN_CLIENT_MESSAGE && eq(m.channel, "sport") &&
          eq(m.payload, "goal"));
    CHECK(goblin_client_next_message(sub, 5000, &m) == 1);
    CHECK(m.kind == GOBLIN_CLIENT_MESSAGE && m.payload.len == sizeof(big) &&
          memcmp(m.payload.ptr, big, sizeof(big)) == 0);
    if (proto != GOBLIN_CLIENT_RESP2) {
        /* RESP3 and SBE run commands while subscribed; a message that
         * comes before the reply is kept for next_message. */
        CHECK(publish(pub, SL("news"), SL("early")) == 2);
        CHECK(goblin_client_call(sub, 1, &ping, &v) == 0 &&
              (v->type == GOBLIN_RESP_STATUS) && eq(v->str, "PONG"));
        CHECK(goblin_client_next_message(sub, 5000, &m) == 1 &&
              eq(m.payload, "early") && m.kind == GOBLIN_CLIENT_MESSAGE);
        CHECK(goblin_client_next_message(sub, 5000, &m) == 1 &&
              eq(m.payload, "early") && m.kind == GOBLIN_CLIENT_PMESSAGE);
    }
    CHECK(goblin_client_subscribe(sub, "UNSUBSCRIBE", 0, NULL) == 1);
    CHECK(goblin_client_subscribe(sub, "PUNSUBSCRIBE", 0, NULL) == 0);
    CHECK(publish(pub, SL("news"), SL("nobody")) == 0);
out:
    goblin_client_close(sub);
    goblin_client_close(pub);
}

/* A socket subscriber, a publisher on ring B, shard channels. */
static void test_socket_subscriber(void)
{
    goblin_client *sub = connect_sock(GOBLIN_CLIENT_RESP3);
    goblin_client *pub = connect_ring(ring_b, GOBLIN_CLIENT_SBE);
    struct goblin_slice ch = SL("shard1");
    struct goblin_slice argv[3] = {SL("SPUBLISH"), SL("shard1"), SL("s")};
    const struct goblin_resp_value *v;
    struct goblin_client_message m;

    CHECK(sub != NULL && pub != NULL);
    if (sub == NULL || pub == NULL)
        goto out;
    CHECK(goblin_client_subscribe(sub, "SSUBSCRIBE", 1, &ch) == 1);
    CHECK(goblin_client_call(pub, 3, argv, &v) == 0 &&
          v->type == GOBLIN_RESP_INTEGER && v->integer == 1);
    CHECK(goblin_client_next_message(sub, 5000, &m) == 1 &&
          m.kind == GOBLIN_CLIENT_SMESSAGE && eq(m.channel, "shard1") &&
          eq(m.payload, "s"));
out:
    goblin_client_close(sub);
    goblin_client_close(pub);
}

/* goblin_client_publish from a ring: a typed frame over SBE (the direct
 * path for a plain session, the general one for a subscribed session),
 * the command over RESP; the same receivers and messages either way. */
static void test_typed_publish(int proto)
{
    goblin_client *sub = connect_sock(GOBLIN_CLIENT_RESP3);
    goblin_client *pub = connect_ring(ring_b, proto);
    struct goblin_slice ch = SL("typed"), self = SL("self");
    struct goblin_client_message m;
    static char big[1500]; /* an SBE request fits one record of the ring */

    CHECK(sub != NULL && pub != NULL);
    if (sub == NULL || pub == NULL)
        goto out;
    CHECK(goblin_client_subscribe(sub, "SUBSCRIBE", 1, &ch) == 1);
    CHECK(goblin_client_publish(pub, ch, SL("m1")) == 1);
    CHECK(goblin_client_publish(pub, SL("nobody"), SL("m2")) == 0);
    memset(big, 'p', sizeof(big));
    CHECK(goblin_client_publish(pub, ch, (struct goblin_slice){
                                             big, sizeof(big)}) == 1);
    CHECK(goblin_client_next_message(sub, 5000, &m) == 1 &&
          m.kind == GOBLIN_CLIENT_MESSAGE && eq(m.channel, "typed") &&
          eq(m.payload, "m1"));
    CHECK(goblin_client_next_message(sub, 5000, &m) == 1 &&
          m.payload.len == sizeof(big) &&
          memcmp(m.payload.ptr, big, sizeof(big)) == 0);
    if (proto != GOBLIN_CLIENT_RESP2) {
        /* Subscribed itself: it receives its own message, kept until
         * next_message, after the reply. */
        CHECK(goblin_client_subscribe(pub, "SUBSCRIBE", 1, &self) == 1);
        CHECK(goblin_client_publish(pub, self, SL("mine")) == 1);
        CHECK(goblin_client_next_message(pub, 5000, &m) == 1 &&
              eq(m.channel, "self") && eq(m.payload, "mine"));
        CHECK(goblin_client_subscribe(pub, "UNSUBSCRIBE", 0, NULL) == 0);
    }
    CHECK(goblin_client_publish(pub, ch, SL("m3")) == 1);
    CHECK(goblin_client_next_message(sub, 5000, &m) == 1 &&
          eq(m.payload, "m3"));
out:
    goblin_client_close(sub);
    goblin_client_close(pub);
}

/* A ring subscriber that never reads: the server holds it to the pubsub
 * limit and drops it; publishing never waits on it. */
static void test_slow_ring_subscriber(void)
{
    goblin_client *sub = connect_ring(ring_a, GOBLIN_CLIENT_SBE);
    goblin_client *pub = connect_sock(GOBLIN_CLIENT_RESP2);
    goblin_client *other = NULL;
    struct goblin_slice ch = SL("flood");
    struct goblin_slice cfg[4] = {SL("CONFIG"), SL("SET"),
                                  SL("client-output-buffer-limit"),
                                  SL("pubsub 256kb 0 0")};
    struct goblin_slice list[2] = {SL("CLIENT"), SL("LIST")};
    const struct goblin_resp_value *v;
    struct goblin_client_message m;
    static char payload[8192];
    int i, got = 0, rc;

    CHECK(sub != NULL && pub != NULL);
    if (sub == NULL || pub == NULL)
        goto out;
    CHECK(goblin_client_call(pub, 4, cfg, &v) == 0 &&
          v->type == GOBLIN_RESP_STATUS);
    CHECK(goblin_client_subscribe(sub, "SUBSCRIBE", 1, &ch) == 1);
    memset(payload, 'p', sizeof(payload));
    /* 100 x 8 KiB: far past a 4 KiB CQ and the 256 KiB limit. */
    for (i = 0; i < 100; i++)
        CHECK(publish(pub, ch, (struct goblin_slice){payload,
                                                     sizeof(payload)}) >= 0);
    /* Ring B's client is served meanwhile. */
    other = connect_ring(ring_b, GOBLIN_CLIENT_RESP2);
    CHECK(other != NULL && goblin_client_ping(other) == 0);
    /* The subscriber is gone from CLIENT LIST... */
    for (i = 0; i < 200; i++) {
        CHECK(goblin_client_call(pub, 2, list, &v) == 0);
        if (v->type == GOBLIN_RESP_BULK &&
            memmem(v->str.ptr, v->str.len, "sub=1", 5) == NULL)
            break;
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    }
    CHECK(i < 200);
    /* ...and reading now yields what reached CQ, then the reset. */
    while ((rc = goblin_client_next_message(sub, 2000, &m)) == 1)
        got++;
    CHECK(rc < 0);
    CHECK(got < 100);
    cfg[3] = SL("pubsub 32mb 8mb 60");
    CHECK(goblin_client_call(pub, 4, cfg, &v) == 0);
out:
    goblin_client_close(sub);
    goblin_client_close(pub);
    goblin_client_close(other);
}

/* Runs argv on c; the reply's string (status or bulk), or "" for others. */
static bool call_is(goblin_client *c, size_t argc,
                    const struct goblin_slice *argv, const char *want)
{
    const struct goblin_resp_value *v;

    return goblin_client_call(c, argc, argv, &v) == 0 &&
           (v->type == GOBLIN_RESP_STATUS || v->type == GOBLIN_RESP_BULK) &&
           eq(v->str, want);
}

/* Until INFO on ctl shows n waiting clients (false after 20 s). */
static bool wait_blocked(goblin_client *ctl, int n)
{
    struct goblin_slice info[2] = {SL("INFO"), SL("clients")};
    const struct goblin_resp_value *v;
    char want[40];

    snprintf(want, sizeof(want), "blocked_clients:%d\r\n", n);
    for (int i = 0; i < 4000; i++) {
        if (goblin_client_call(ctl, 2, info, &v) == 0 &&
            v->type == GOBLIN_RESP_BULK &&
            memmem(v->str.ptr, v->str.len, want, strlen(want)) != NULL)
            return true;
        nanosleep(&(struct timespec){0, 5 * 1000 * 1000}, NULL);
    }
    return false;
}

/* CLIENT PAUSE WRITE holds a ring client's SET (typed over SBE) and its
 * PUBLISH until CLIENT UNPAUSE; its reads run meanwhile. */
static void test_ring_pause(int proto)
{
    goblin_client *c = connect_ring(ring_b, proto);
    goblin_client *ctl = connect_sock(GOBLIN_CLIENT_RESP2);
    struct goblin_slice pause[4] = {SL("CLIENT"), SL("PAUSE"), SL("60000"),
                                    SL("WRITE")};
    struct goblin_slice unpause[2] = {SL("CLIENT"), SL("UNPAUSE")};
    struct goblin_slice get[2] = {SL("GET"), SL("paused")};
    struct goblin_slice del[2] = {SL("DEL"), SL("paused")};
    struct goblin_slice setv[3] = {SL("SET"), SL("paused"), SL("argv")};
    struct goblin_slice pub[3] = {SL("PUBLISH"), SL("nobody"), SL("x")};
    struct goblin_slice ping = SL("PING");
    const struct goblin_resp_value *v;

    CHECK(c != NULL && ctl != NULL);
    if (c == NULL || ctl == NULL)
        goto out;
    CHECK(goblin_client_call(ctl, 2, del, &v) == 0);
    CHECK(call_is(ctl, 4, pause, "OK"));
    CHECK(call_is(c, 1, &ping, "PONG")); /* reads are not held */
    goblin_client_pipeline_begin(c);
    goblin_client_set(c, SL("paused"), SL("typed"), NULL);
    CHECK(goblin_client_flush(c) == 0);
    CHECK(wait_blocked(ctl, 1));
    CHECK(goblin_client_call(ctl, 2, get, &v) == 0 &&
          v->type == GOBLIN_RESP_NULL);
    CHECK(call_is(ctl, 2, unpause, "OK"));
    CHECK(goblin_client_next_reply(c, &v) == 0 &&
          v->type == GOBLIN_RESP_STATUS && eq(v->str, "OK"));
    goblin_client_pipeline_end(c);
    CHECK(call_is(ctl, 2, get, "typed"));
    /* The command form (an Argv frame over SBE) and PUBLISH wait too. */
    CHECK(call_is(ctl, 4, pause, "OK"));
    goblin_client_pipeline_begin(c);
    CHECK(goblin_client_call(c, 3, setv, &v) == 0); /* queued only */
    CHECK(goblin_client_call(c, 3, pub, &v) == 0);
    CHECK(goblin_client_flush(c) == 0);
    CHECK(wait_blocked(ctl, 1));
    CHECK(call_is(ctl, 2, get, "typed"));
    CHECK(call_is(ctl, 2, unpause, "OK"));
    CHECK(goblin_client_next_reply(c, &v) == 0 &&
          v->type == GOBLIN_RESP_STATUS && eq(v->str, "OK"));
    CHECK(goblin_client_next_reply(c, &v) == 0 &&
          v->type == GOBLIN_RESP_INTEGER && v->integer == 0);
    goblin_client_pipeline_end(c);
    CHECK(call_is(ctl, 2, get, "argv"));
out:
    goblin_client_close(c);
    goblin_client_close(ctl);
}


/* MONITOR over ring A (RESP through the raw ring API): a socket client's
 * SET reaches the monitor's CQ as its MONITOR line, without a request. */
static void test_ring_monitor(void)
{
    static const char mon[] = "*1\r\n$7\r\nMONITOR\r\n";
    static char got[65536];
    struct goblin_slice set[3] = {SL("SET"), SL("monkey"), SL("v 1")};
    const char *line = "\"SET\" \"monkey\" \"v 1\"\r\n";
    goblin_client *c = connect_sock(GOBLIN_CLIENT_RESP2);
    const struct goblin_resp_value *v;
    struct goblin_slice rec;
    goblin_ring *r = NULL;
    size_t n = 0;
    int rc = GOBLIN_EBUSY;
    bool ok = false, sent = false;

    for (int i = 0; i < 200 && rc == GOBLIN_EBUSY; i++) {
        rc = goblin_ring_open(ring_a, NULL, &r);
        if (rc == GOBLIN_EBUSY)
            nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
    }
    CHECK(rc == 0 && c != NULL);
    if (rc != 0 || c == NULL)
        goto out;
    CHECK(goblin_ring_publish(r, mon, sizeof(mon) - 1) == 0);
    goblin_ring_flush(r);
    for (int i = 0; i < 10000 && !ok; i++) {
        while (goblin_ring_peek(r, &rec) == GOBLIN_RING_RECORD) {
            if (n + rec.len <= sizeof(got)) {
                memcpy(got + n, rec.ptr, rec.len);
                n += rec.len;
            }
            goblin_ring_release(r);
        }
        if (!sent && n >= 5 && memcmp(got, "+OK\r\n", 5) == 0) {
            CHECK(goblin_client_call(c, 3, set, &v) == 0);
            sent = true;
        }
        ok = sent && memmem(got, n, line, strlen(line)) != NULL;
        if (!ok)
            nanosleep(&(struct timespec){0, 1000 * 1000}, NULL);
    }
    CHECK(sent && ok);
    /* "+<seconds>.<micros> [0 unix:<path>] ..." as on a socket. */
    CHECK(n > 5 && got[5] == '+' && memmem(got, n, " [0 unix:", 9) != NULL);
out:
    if (r != NULL)
        goblin_ring_close(r);
    goblin_client_close(c);
}


int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: test_ring_pubsub RING_A RING_B SOCKET\n");
        return 2;
    }
    ring_a = argv[1];
    ring_b = argv[2];
    sock = argv[3];
    test_ring_subscriber(GOBLIN_CLIENT_RESP2);
    test_ring_subscriber(GOBLIN_CLIENT_RESP3);
    test_ring_subscriber(GOBLIN_CLIENT_SBE);
    test_socket_subscriber();
    test_typed_publish(GOBLIN_CLIENT_SBE);
    test_typed_publish(GOBLIN_CLIENT_RESP2);
    test_typed_publish(GOBLIN_CLIENT_RESP3);
    test_slow_ring_subscriber();
    test_ring_pause(GOBLIN_CLIENT_RESP2);
    test_ring_pause(GOBLIN_CLIENT_RESP3);
    test_ring_pause(GOBLIN_CLIENT_SBE);
    test_ring_monitor();
    printf("%s\n", failures == 0 ? "ok" : "FAILED");
    return failures == 0 ? 0 : 1;
}
