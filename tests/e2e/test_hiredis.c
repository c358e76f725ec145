/* test_hiredis.c - hiredis (Debian's libhiredis) against a running goblind:
 * binary-safe strings, integer, nil, status and error replies, arrays,
 * pipelining with redisAppendCommand, hashes, sorted sets and MULTI/EXEC,
 * over the Unix socket and over TCP.
 *
 *     test_hiredis UNIX-SOCKET-PATH TCP-PORT
 *
 * run_with_goblind.py starts goblind and passes both. Exits 0 when every
 * check passes; prints each failure with its line.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis.h>

static int failures;

#define CHECK(cond)                                                        \
    do {                                                                   \
        if (!(cond)) {                                                     \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__,         \
                    __LINE__, #cond);                                      \
            failures++;                                                    \
        }                                                                  \
    } while (0)

/* Runs a command and checks the reply's type and, for strings, status
 * and errors, its text (prefix for errors); returns the reply. */
static redisReply *expect(redisContext *c, int type, const char *text,
                          const char *fmt, ...)
{
    va_list ap;
    redisReply *r;

    va_start(ap, fmt);
    r = redisvCommand(c, fmt, ap);
    va_end(ap);
    if (r == NULL) {
        fprintf(stderr, "'%s': no reply: %s\n", fmt, c->errstr);
        failures++;
        exit(1);
    }
    if (r->type != type ||
        (text != NULL && (r->str == NULL ||
                          strncmp(r->str, text, strlen(text)) != 0))) {
        fprintf(stderr, "'%s': reply type %d '%s', want type %d '%s'\n",
                fmt, r->type, r->str != NULL ? r->str : "", type,
                text != NULL ? text : "");
        failures++;
    }
    return r;
}

static void strings(redisContext *c)
{
    const char bin[] = "a\0b\r\nc";
    redisReply *r;

    freeReplyObject(expect(c, REDIS_REPLY_STATUS, "OK", "SET %b %b", "k\0ey",
                           (size_t)4, bin, sizeof(bin) - 1));
    r = expect(c, REDIS_REPLY_STRING, NULL, "GET %b", "k\0ey", (size_t)4);
    CHECK(r->len == sizeof(bin) - 1 && memcmp(r->str, bin, r->len) == 0);
    freeReplyObject(r);
    freeReplyObject(expect(c, REDIS_REPLY_NIL, NULL, "GET missing"));
    r = expect(c, REDIS_REPLY_INTEGER, NULL, "INCRBY n %lld", 40LL);
    CHECK(r->integer == 40);
    freeReplyObject(r);
    r = expect(c, REDIS_REPLY_INTEGER, NULL, "INCR n");
    CHECK(r->integer == 41);
    freeReplyObject(r);
    freeReplyObject(expect(c, REDIS_REPLY_ERROR, "WRONGTYPE", "HSET %b f v",
                           "k\0ey", (size_t)4));
    freeReplyObject(expect(c, REDIS_REPLY_ERROR,
                           "ERR wrong number of arguments for 'get' command",
                           "GET"));
    r = expect(c, REDIS_REPLY_ARRAY, NULL, "MGET n missing");
    CHECK(r->elements == 2 && r->element[0]->type == REDIS_REPLY_STRING &&
          strcmp(r->element[0]->str, "41") == 0 &&
          r->element[1]->type == REDIS_REPLY_NIL);
    freeReplyObject(r);
}

static void pipeline(redisContext *c)
{
    enum { N = 2000 };
    redisReply *r;
    int ok = 1;

    for (int i = 0; i < N; i++)
        redisAppendCommand(c, "SET p:%d %d", i, i * 3);
    for (int i = 0; i < N; i++)
        redisAppendCommand(c, "GET p:%d", i);
    for (int i = 0; i < 2 * N; i++) {
        if (redisGetReply(c, (void **)&r) != REDIS_OK) {
            fprintf(stderr, "pipeline: %s\n", c->errstr);
            exit(1);
        }
        if (i < N)
            ok &= r->type == REDIS_REPLY_STATUS;
        else
            ok &= r->type == REDIS_REPLY_STRING &&
                  atoi(r->str) == (i - N) * 3;
        freeReplyObject(r);
    }
    CHECK(ok);
}

static void hashes_and_zsets(redisContext *c)
{
    redisReply *r;

    r = expect(c, REDIS_REPLY_INTEGER, NULL, "HSET h a 1 b 2");
    CHECK(r->integer == 2);
    freeReplyObject(r);
    r = expect(c, REDIS_REPLY_ARRAY, NULL, "HGETALL h");
    CHECK(r->elements == 4);
    freeReplyObject(r);
    r = expect(c, REDIS_REPLY_INTEGER, NULL, "ZADD z 1.5 a 2 b -inf c");
    CHECK(r->integer == 3);
    freeReplyObject(r);
    r = expect(c, REDIS_REPLY_ARRAY, NULL, "ZRANGE z 0 -1 WITHSCORES");
    CHECK(r->elements == 6 && strcmp(r->element[0]->str, "c") == 0 &&
          strcmp(r->element[1]->str, "-inf") == 0 &&
          strcmp(r->element[3]->str, "1.5") == 0);
    freeReplyObject(r);
    r = expect(c, REDIS_REPLY_STRING, "1.5", "ZSCORE z a");
    freeReplyObject(r);
    r = expect(c, REDIS_REPLY_INTEGER, NULL, "ZRANK z b");
    CHECK(r->integer == 2);
    freeReplyObject(r);
}

static void transaction(redisContext *c)
{
    redisReply *r;

    freeReplyObject(expect(c, REDIS_REPLY_STATUS, "OK", "MULTI"));
    freeReplyObject(expect(c, REDIS_REPLY_STATUS, "QUEUED", "INCR tx"));
    freeReplyObject(expect(c, REDIS_REPLY_STATUS, "QUEUED", "HGET h a"));
    r = expect(c, REDIS_REPLY_ARRAY, NULL, "EXEC");
    CHECK(r->elements == 2 && r->element[0]->integer == 1 &&
          strcmp(r->element[1]->str, "1") == 0);
    freeReplyObject(r);
    freeReplyObject(expect(c, REDIS_REPLY_ERROR, "ERR EXEC without MULTI",
                           "EXEC"));
}

static void run(redisContext *c, const char *where)
{
    if (c == NULL || c->err) {
        fprintf(stderr, "%s: can't connect: %s\n", where,
                c != NULL ? c->errstr : "out of memory");
        exit(1);
    }
    freeReplyObject(expect(c, REDIS_REPLY_STATUS, "PONG", "PING"));
    strings(c);
    pipeline(c);
    hashes_and_zsets(c);
    transaction(c);
    freeReplyObject(expect(c, REDIS_REPLY_INTEGER, NULL, "DEL %s %s %s %s "
                           "%s %s", "k", "n", "h", "z", "tx", "p:0"));
    redisFree(c);
}

int main(int argc, char **argv)
{
    struct timeval tv = {20, 0};

    if (argc != 3) {
        fprintf(stderr, "usage: test_hiredis UNIX-SOCKET TCP-PORT\n");
        return 2;
    }
    run(redisConnectUnixWithTimeout(argv[1], tv), "unix");
    run(redisConnectWithTimeout("127.0.0.1", atoi(argv[2]), tv), "tcp");
    if (failures == 0)
        printf("hiredis: all checks passed\n");
    return failures == 0 ? 0 : 1;
}
