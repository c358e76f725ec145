/* test_client_redis.c - goblin_client_format_reply() prints replies byte
 * for byte as redis-cli does. A real redis-server (skipped when not
 * installed) is loaded with data; then each read-only command runs once
 * through redis-cli and once through the Goblin client over RESP2 and
 * RESP3, and the outputs are compared in redis-cli's terminal form
 * (--no-raw) and its raw form (--raw). */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "goblin.h"
#include "goblin/client.h"

static char sock[64];
static pid_t server = -1;

/* Runs argv, returns its stdout (malloc'd, NUL-ended) or NULL. */
static char *run(char *const argv[], size_t *len)
{
    int fd[2], st;
    pid_t pid;
    char *out = NULL;
    size_t cap = 0, n = 0;
    ssize_t k;

    if (pipe(fd) != 0)
        return NULL;
    pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);

        dup2(fd[1], 1);
        dup2(null, 2);
        close(fd[0]);
        execvp(argv[0], argv);
        _exit(127);
    }
    close(fd[1]);
    for (;;) {
        if (n + 4096 > cap && (out = realloc(out, cap = 2 * cap + 8192)) ==
                                  NULL)
            break;
        if ((k = read(fd[0], out + n, cap - n - 1)) <= 0)
            break;
        n += (size_t)k;
    }
    close(fd[0]);
    waitpid(pid, &st, 0);
    if (out != NULL)
        out[n] = '\0';
    *len = n;
    return out;
}

static bool have(const char *prog)
{
    char *argv[] = {(char *)prog, "--version", NULL};
    size_t n;
    char *out = run(argv, &n);
    bool ok = out != NULL && n > 0;

    free(out);
    return ok;
}

static int start(void **state)
{
    struct stat sb;
    int i;

    (void)state;
    if (!have("redis-server") || !have("redis-cli"))
        return 0;
    snprintf(sock, sizeof(sock), "/tmp/goblin-cli-test-%d.sock", getpid());
    unlink(sock);
    server = fork();
    if (server == 0) {
        int null = open("/dev/null", O_WRONLY);

        dup2(null, 1);
        dup2(null, 2);
        execlp("redis-server", "redis-server", "--port", "0", "--unixsocket",
               sock, "--save", "", "--appendonly", "no", "--daemonize", "no",
               (char *)NULL);
        _exit(127);
    }
    for (i = 0; i < 500 && stat(sock, &sb) != 0; i++)
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    return 0;
}

static int stop(void **state)
{
    (void)state;
    if (server > 0) {
        kill(server, SIGTERM);
        waitpid(server, NULL, 0);
        unlink(sock);
    }
    return 0;
}

/* Splits words at spaces ("\x01" style escapes are not needed here). */
static size_t words_of(char *line, char **w, size_t max)
{
    size_t n = 0;
    char *save = NULL, *t;

    for (t = strtok_r(line, " ", &save); t != NULL && n < max;
         t = strtok_r(NULL, " ", &save))
        w[n++] = t;
    return n;
}

static goblin_client *connect_to(enum goblin_client_protocol p)
{
    struct goblin_client_config cfg = {0};
    goblin_client *c = NULL;

    cfg.protocol = p;
    cfg.timeout_ms = 5000;
    assert_int_equal(goblin_client_connect_unix(sock, &cfg, &c), 0);
    return c;
}

static void call(goblin_client *c, const char *line, struct goblin_buf *out,
                 int raw)
{
    char copy[512], *w[32];
    struct goblin_slice argv[32];
    const struct goblin_resp_value *v;
    size_t n, i;

    snprintf(copy, sizeof(copy), "%s", line);
    n = words_of(copy, w, 32);
    for (i = 0; i < n; i++)
        argv[i] = (struct goblin_slice){w[i], strlen(w[i])};
    assert_int_equal(goblin_client_call(c, n, argv, &v), 0);
    if (out != NULL)
        assert_int_equal(goblin_client_format_reply(v, raw, out), 0);
}

static const char *const setup[] = {
    "flushall",
    "set s hello",
    "set n 42",
    "hset h f1 v1 f2 v2 f3 x\"y",
    "zadd z 1.5 a 2 b -inf c 3.25 d",
    "sadd st one two",
    "rpush l a b c",
    "set bin a\tb\\c",
};

static const char *const reads[] = {
    "get s", "get nothing", "get bin", "incrby n 0", "hgetall h",
    "hgetall nothing", "hmget h f1 nope f3", "zrange z 0 -1",
    "zrange z 0 -1 withscores", "zscore z a", "zmscore z a nope c",
    "zrangebyscore z -inf +inf withscores limit 1 2", "zrange nothing 0 -1",
    "smembers nothing", "lrange l 0 -1", "exists s h nope", "type z",
    "object encoding z", "ttl s", "nosuchcommand x y", "get h",
    "config get maxmemory-policy", "command info get", "command docs get",
    "zscan z 0", "echo x",
};

static void test_printing_matches_redis_cli(void **state)
{
    static const char *const modes[] = {"--no-raw", "--raw"};
    struct goblin_buf mine = {0};
    goblin_client *c[2];
    size_t i, p, m, len;

    (void)state;
    if (server <= 0)
        skip();
    c[0] = connect_to(GOBLIN_CLIENT_RESP2);
    c[1] = connect_to(GOBLIN_CLIENT_RESP3);
    for (i = 0; i < sizeof(setup) / sizeof(setup[0]); i++)
        call(c[0], setup[i], NULL, 0);
    for (i = 0; i < sizeof(reads) / sizeof(reads[0]); i++) {
        for (p = 0; p < 2; p++) {
            for (m = 0; m < 2; m++) {
                char line[512], *argv[48] = {"redis-cli", "-s", sock,
                                             p ? "-3" : "-2",
                                             (char *)modes[m]};
                size_t n = 5 + words_of(strcpy(line, reads[i]), argv + 5, 40);
                char *theirs;

                argv[n] = NULL;
                theirs = run(argv, &len);
                assert_non_null(theirs);
                mine.len = 0;
                call(c[p], reads[i], &mine, (int)m);
                if (mine.len != len || memcmp(mine.data, theirs, len) != 0)
                    fail_msg("%s (RESP%zu %s)\nredis-cli:\n%s\ngoblin:\n%.*s",
                             reads[i], p + 2, modes[m], theirs,
                             (int)mine.len, mine.data);
                free(theirs);
            }
        }
    }
    goblin_buf_free(&mine);
    goblin_client_close(c[0]);
    goblin_client_close(c[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_printing_matches_redis_cli),
    };

    return cmocka_run_group_tests(tests, start, stop);
}
