/* test_settings.c - the table of setting descriptors: every type parsed at
 * both sides of every limit, defaults that read back as themselves, old
 * names, CONFIG SET of several pairs rolled back as a whole, the config
 * file reader (quoting, include, save lines, errors naming the line, the
 * directives of Redis 7.0 that are not settings), the
 * command line, and CONFIG REWRITE read back into a new engine.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "engine/settings.h"
#include "test_commands_util.h"

static int parse(const struct goblin__sdesc *d, const char *text,
                 char *norm, const char **why)
{
    static char whybuf[200];
    int64_t num;

    return goblin__sdesc_parse(d, (struct goblin_slice){text, strlen(text)},
                               norm, 600, &num, why, whybuf,
                               sizeof(whybuf));
}

static void expect_ok(const struct goblin__sdesc *d, const char *text,
                      const char *shown)
{
    char norm[600];
    const char *why = NULL;

    if (parse(d, text, norm, &why) != 0)
        fail_msg("%s %s: %s", d->name, text, why);
    assert_string_equal(norm, shown);
}

static void expect_bad(const struct goblin__sdesc *d, const char *text,
                       const char *why_want)
{
    char norm[600];
    const char *why = NULL;

    if (parse(d, text, norm, &why) == 0)
        fail_msg("%s %s accepted", d->name, text);
    if (why_want != NULL && strcmp(why, why_want) != 0)
        fail_msg("%s %s: '%s', want '%s'", d->name, text, why, why_want);
}

static void test_limits_of_every_descriptor(void **state)
{
    char text[64], shown[64], range[160];

    (void)state;
    assert_true(goblin__nsdescs >= 178);
    for (size_t i = 0; i < goblin__nsdescs; i++) {
        const struct goblin__sdesc *d = &goblin__sdescs[i];
        bool uns = d->hi > INT64_MAX;

        if (d->type != GOBLIN__ST_SPECIAL || d->def[0] == '\0')
            expect_ok(d, d->def, d->def);   /* the default reads back */
        if (i > 0)
            assert_true(strcmp(goblin__sdescs[i - 1].name, d->name) < 0);
        if (d->type == GOBLIN__ST_INT || d->type == GOBLIN__ST_MEMORY) {
            snprintf(range, sizeof(range), uns ? "argument must be between "
                     "%lld and %llu inclusive" : "argument must be between "
                     "%lld and %lld inclusive", (long long)d->lo,
                     (unsigned long long)d->hi);
            snprintf(text, sizeof(text), "%lld", (long long)d->lo);
            expect_ok(d, text, d->type == GOBLIN__ST_MEMORY &&
                      d->lo < 16384 && !strcmp(d->name, "repl-backlog-size")
                      ? "16384" : text);
            snprintf(text, sizeof(text), uns ? "%llu" : "%lld",
                     (unsigned long long)d->hi);
            expect_ok(d, text, text);
            if (d->lo > INT64_MIN && (d->type == GOBLIN__ST_INT ||
                                      d->lo > 0)) {
                snprintf(text, sizeof(text), "%lld", (long long)d->lo - 1);
                expect_bad(d, text, d->lo > 0 || d->type == GOBLIN__ST_INT
                                        ? range : NULL);
            }
            if (d->hi < INT64_MAX) {
                snprintf(text, sizeof(text), "%llu",
                         (unsigned long long)d->hi + 1);
                expect_bad(d, text, range);
            }
            expect_bad(d, "1x", NULL);
            expect_bad(d, " 1", NULL);
        }
        if (d->type == GOBLIN__ST_INT) {
            expect_bad(d, "+1", "argument couldn't be parsed into an "
                                "integer");
            expect_bad(d, "01", "argument couldn't be parsed into an "
                                "integer");
            expect_bad(d, "", "argument couldn't be parsed into an integer");
        }
        if (d->type == GOBLIN__ST_BOOL &&
            strcmp(d->name, "activedefrag") != 0) {
            expect_ok(d, "YES", "yes");
            expect_ok(d, "No", "no");
            expect_bad(d, "1", "argument must be 'yes' or 'no'");
        }
        if (d->type == GOBLIN__ST_ENUM) {
            size_t n = strcspn(d->choices, "|");

            snprintf(shown, sizeof(shown), "%.*s", (int)n, d->choices);
            for (size_t k = 0; k < n; k++)
                text[k] = (char)(shown[k] >= 'a' && shown[k] <= 'z'
                                     ? shown[k] - 32 : shown[k]);
            text[n] = '\0';
            expect_ok(d, text, shown);
            expect_bad(d, "nope", NULL);
        }
    }
}

static void test_memory_units_and_texts(void **state)
{
    const struct goblin__sdesc *mm = goblin__sdesc_find(
        (struct goblin_slice){"maxmemory", 9});
    const struct goblin__sdesc *bulk = goblin__sdesc_find(
        (struct goblin_slice){"proto-max-bulk-len", 18});
    const struct goblin__sdesc *mc = goblin__sdesc_find(
        (struct goblin_slice){"maxmemory-clients", 17});
    const struct goblin__sdesc *perm = goblin__sdesc_find(
        (struct goblin_slice){"unixsocketperm", 14});
    const struct goblin__sdesc *ev = goblin__sdesc_find(
        (struct goblin_slice){"notify-keyspace-events", 22});

    (void)state;
    expect_ok(mm, "1k", "1000");
    expect_ok(mm, "1KB", "1024");
    expect_ok(mm, "2gb", "2147483648");
    expect_ok(mm, "", "0");          /* Redis's memtoull reads no digits */
    expect_ok(mm, "010", "10");
    expect_bad(mm, "-1", "argument must be a memory value");
    expect_ok(mm, "18446744073709551616", "18446744073709551615"); /* as
                                                    Redis's strtoull */
    expect_bad(bulk, "1k", "argument must be between 1048576 and "
                           "9223372036854775807 inclusive");
    expect_ok(mc, "5%", "5%");
    expect_bad(mc, "101%", "percentage argument must be less or equal to "
                           "100");
    expect_bad(mc, "x", "argument must be a memory or percent value");
    expect_ok(perm, "750", "750");
    expect_bad(perm, "1000", "argument must be between 0 and 777 inclusive");
    expect_bad(perm, "9", "argument couldn't be parsed as an octal number");
    expect_ok(ev, "KEA", "AKE");
    expect_ok(ev, "Kgxm$n", "g$xnKm");
    expect_bad(ev, "q", "Invalid event class character. Use "
                        "'Ag$lshzxeKEtmdn'.");
}

static void test_old_names(void **state)
{
    struct cfix *f = *state;

    EXPECT("config set hash-max-ziplist-entries 77", "+OK\r\n");
    EXPECT("config get hash-max-listpack-entries",
           "*2\r\n$25\r\nhash-max-listpack-entries\r\n$2\r\n77\r\n");
    EXPECT("config get hash-max-ziplist-entries",
           "*2\r\n$24\r\nhash-max-ziplist-entries\r\n$2\r\n77\r\n");
    EXPECT("config get hash-max-*-entries",
           "*4\r\n$25\r\nhash-max-listpack-entries\r\n$2\r\n77\r\n"
           "$24\r\nhash-max-ziplist-entries\r\n$2\r\n77\r\n");
    EXPECT("config set slave-read-only no", "+OK\r\n");
    EXPECT("config get replica-read-only",
           "*2\r\n$17\r\nreplica-read-only\r\n$2\r\nno\r\n");
    EXPECT("config set lazyfree-lazy-user-del yes activedefrag no "
           "appendonly yes", "+OK\r\n");
    EXPECT("config set databases 4",
           "-ERR CONFIG SET failed (possibly related to argument "
           "'databases') - can't set immutable config\r\n");
}

static void test_multi_set_all_or_none(void **state)
{
    struct cfix *f = *state;

    EXPECT("config set hz 20 maxmemory 1mb zset-max-ziplist-value 99 "
           "timeout -1",
           "-ERR CONFIG SET failed (possibly related to argument "
           "'timeout') - argument must be between 0 and 2147483647 "
           "inclusive\r\n");
    EXPECT("config get hz", "*2\r\n$2\r\nhz\r\n$2\r\n10\r\n");
    EXPECT("config get maxmemory", "*2\r\n$9\r\nmaxmemory\r\n$1\r\n0\r\n");
    EXPECT("config get zset-max-listpack-value",
           "*2\r\n$23\r\nzset-max-listpack-value\r\n$2\r\n64\r\n");
    EXPECT("config set maxmemory x hz 5",
           "-ERR CONFIG SET failed (possibly related to argument "
           "'maxmemory') - argument must be a memory value\r\n");
    EXPECT("config set hz 20 port 1",
           "-ERR CONFIG SET failed (possibly related to argument 'port') - "
           "can't set immutable config\r\n");
    EXPECT("config get hz", "*2\r\n$2\r\nhz\r\n$2\r\n10\r\n");
    EXPECT("config set hz 20 maxmemory 1mb", "+OK\r\n");
    EXPECT("config get maxmemory",
           "*2\r\n$9\r\nmaxmemory\r\n$7\r\n1048576\r\n");
}

static char *write_file(const char *text)
{
    static char paths[4][64];
    static int n;
    char *path = paths[n++ % 4];
    FILE *fp;
    int fd;

    snprintf(path, 64, "/tmp/goblin-settings-XXXXXX");
    fd = mkstemp(path);
    assert_true(fd >= 0);
    fp = fdopen(fd, "w");
    fputs(text, fp);
    fclose(fp);
    return path;
}

static int ring_hook(void *ctx, int argc, const char *const *argv,
                     const char **why)
{
    (void)ctx;
    (void)why;
    return strcmp(argv[0], "ring") == 0 && argc == 3 ? 0 : 1;
}

static void test_config_file(void **state)
{
    struct cfix *f = *state;
    struct goblin_config_hooks hooks = {ring_hook, NULL, NULL};
    char text[600], err[1024], *inc, *path;

    inc = write_file("save 60 5\nmaxmemory-policy ALLKEYS-LRU\n");
    snprintf(text, sizeof(text),
             "# comment\n\n  hz 20\r\nsave 3600 1\nsave \"300 100\"\n"
             "include %s\nrequirepass 'a b\\'c'\n"
             "client-output-buffer-limit normal 1mb 0 0\n"
             "ring /dev/shm/x 1m\n", inc);
    path = write_file(text);
    goblin_engine_config_hooks(f->eng, &hooks);
    assert_int_equal(goblin_engine_config_load(f->eng, path, err,
                                               sizeof(err)), 0);
    assert_int_equal(goblin_engine_config_get(f->eng, "save", text,
                                              sizeof(text)), 19);
    assert_string_equal(text, "3600 1 300 100 60 5");
    goblin_engine_config_get(f->eng, "requirepass", text, sizeof(text));
    assert_string_equal(text, "a b'c");
    assert_int_equal(goblin_engine_config_int(f->eng, "hz", 0), 20);
    assert_int_equal(goblin_engine_config_int(f->eng, "maxmemory-policy", -1),
                     4);
    assert_string_equal(goblin_engine_config_file(f->eng) != NULL ?
                        "set" : "", "set");
    unlink(path);

    path = write_file("hz 5\n\nport 1 2\n");
    assert_int_equal(goblin_engine_config_load(f->eng, path, err,
                                               sizeof(err)),
                     GOBLIN_EINVAL);
    assert_non_null(strstr(err, "*** FATAL CONFIG FILE ERROR ("));
    snprintf(text, sizeof(text), "%s:3, at line 3\n>>> 'port \"1\" \"2\"'\n"
             "wrong number of arguments", path);
    assert_non_null(strstr(err, text));
    unlink(path);
    path = write_file("no-such 1\n");
    goblin_engine_config_load(f->eng, path, err, sizeof(err));
    assert_non_null(strstr(err, "Bad directive or wrong number of "
                                "arguments"));
    unlink(path);
    path = write_file("hz \"20\n");
    goblin_engine_config_load(f->eng, path, err, sizeof(err));
    assert_non_null(strstr(err, "Unbalanced quotes in configuration line"));
    unlink(path);
    unlink(inc);
    assert_int_equal(goblin_engine_config_load(f->eng, "/nonexistent/x",
                                               err, sizeof(err)),
                     GOBLIN_EINVAL);
    assert_non_null(strstr(err, "/nonexistent/x"));
}

static void test_command_line(void **state)
{
    struct cfix *f = *state;
    char *path = write_file("hz 20\nsave 3600 1\nmaxmemory 1mb\n");
    char *argv[] = {"goblind", path, "--hz", "30", "--save", "300 100",
                    "--client-output-buffer-limit", "normal", "0", "0",
                    "0", "--timeout", "5", NULL};
    char text[200], err[1024];

    assert_int_equal(goblin_engine_config_args(f->eng, 13, argv, err,
                                               sizeof(err)), 0);
    assert_int_equal(goblin_engine_config_int(f->eng, "hz", 0), 30);
    assert_int_equal(goblin_engine_config_int(f->eng, "timeout", 0), 5);
    assert_int_equal(goblin_engine_config_int(f->eng, "maxmemory", 0),
                     1048576);
    goblin_engine_config_get(f->eng, "save", text, sizeof(text));
    assert_string_equal(text, "3600 1 300 100");
    goblin_engine_config_get(f->eng, "client-output-buffer-limit", text,
                             sizeof(text));
    assert_non_null(strstr(text, "normal 0 0 0 "));
    argv[2] = "--port";
    argv[3] = "x";
    assert_int_equal(goblin_engine_config_args(f->eng, 4, argv, err,
                                               sizeof(err)),
                     GOBLIN_EINVAL);
    assert_non_null(strstr(err, "the command line, at --port\n>>> 'port "
                                "\"x\"'\nargument couldn't be parsed into "
                                "an integer"));
    unlink(path);
}

/* Redis 7.0's directives that are not settings: user applies, the others
 * are accepted (and logged), none is a bad directive. */
static void test_other_redis_directives(void **state)
{
    struct cfix *f = *state;
    char text[200], err[1024];
    char *path = write_file("user alice on nopass ~* +@all\n"
                            "rename-command FLUSHALL \"\"\n"
                            "loadmodule /nonexistent/m.so arg\n"
                            "sentinel monitor m 127.0.0.1 6379 2\n"
                            "replicaof no one\n");

    assert_int_equal(goblin_engine_config_load(f->eng, path, err,
                                               sizeof(err)), 0);
    assert_non_null(strstr(CMD("acl list"), "user alice on nopass"));
    goblin_engine_config_get(f->eng, "replicaof", text, sizeof(text));
    assert_string_equal(text, "no one");
    unlink(path);
    path = write_file("user bob on nosuchrule\n");
    assert_int_equal(goblin_engine_config_load(f->eng, path, err,
                                               sizeof(err)),
                     GOBLIN_EINVAL);
    assert_non_null(strstr(err, "Error in user declaration 'nosuchrule'"));
    unlink(path);
}

/* The directives with a syntax of their own that the engine applies
 * (save, client-output-buffer-limit, dir, dbfilename, requirepass): one
 * descriptor parses each, so the descriptor, CONFIG SET/GET, the config
 * file, the command line, CONFIG REWRITE and --help agree. */
static const struct own_case {
    const char *name, *good, *shown, *bad, *why;
} own_cases[] = {
    {"save", "100 10  +200 20", "100 10 200 20", "100",
     "Invalid save parameters"},
    {"client-output-buffer-limit", "replica 1mb 2kb 3",
     "normal 0 0 0 slave 1048576 2048 3 pubsub 33554432 8388608 60",
     "normal 1 2", "Wrong number of arguments in buffer limit "
                   "configuration."},
    {"client-output-buffer-limit", "Normal 64mb 32MB 3 slave 256mb 64mb 60",
     "normal 67108864 33554432 3 slave 268435456 67108864 60 pubsub "
     "33554432 8388608 60", "bogus 1 2 3",
     "Invalid client class specified in buffer limit configuration."},
    {"dir", "/tmp/", "/tmp", "/nonexistent/goblin",
     "No such file or directory"},
    {"dir", "/", "/", "/dev/null", "Not a directory"},
    {"dbfilename", "x.rdb", "x.rdb", "a/b",
     "dbfilename can't be a path, just a filename"},
    {"requirepass", "s3cret", "s3cret", NULL, NULL},
};

static void expect_get(goblin_engine *eng, const struct own_case *c)
{
    char text[600];

    assert_true(goblin_engine_config_get(eng, c->name, text,
                                         sizeof(text)) >= 0);
    if (strcmp(text, c->shown) != 0)
        fail_msg("%s %s: '%s', want '%s'", c->name, c->good, text,
                 c->shown);
}

/* CONFIG SET name value, value sent as one bulk string. */
static const char *config_set(struct cfix *f, const char *name,
                              const char *value)
{
    static char req[1024];

    snprintf(req, sizeof(req), "*4\r\n$6\r\nconfig\r\n$3\r\nset\r\n"
             "$%zu\r\n%s\r\n$%zu\r\n%s\r\n", strlen(name), name,
             strlen(value), value);
    return FEED(req);
}

static void test_own_syntax_on_every_path(void **state)
{
    struct cfix *f = *state;
    static char help[1 << 16];
    char text[1024], err[1024], *path;
    FILE *fp;

    for (size_t i = 0; i < sizeof(own_cases) / sizeof(own_cases[0]); i++) {
        const struct own_case *c = &own_cases[i];
        const struct goblin__sdesc *d = goblin__sdesc_find(
            (struct goblin_slice){c->name, strlen(c->name)});
        char *argv[] = {"goblind", "--", (char *)c->good, NULL};
        struct goblin_engine_config ec = {0};
        goblin_engine *eng;
        goblin_store *st;

        if (strcmp(c->name, "client-output-buffer-limit") != 0)
            expect_ok(d, c->good, c->shown);
        if (c->bad != NULL)
            expect_bad(d, c->bad, c->why);

        assert_string_equal(config_set(f, c->name, c->good), "+OK\r\n");
        expect_get(f->eng, c);
        if (c->bad != NULL) {
            char want[300];

            snprintf(want, sizeof(want), "-ERR CONFIG SET failed (possibly "
                     "related to argument '%s') - %s\r\n", c->name, c->why);
            assert_string_equal(config_set(f, c->name, c->bad), want);
            expect_get(f->eng, c);   /* a refused value changes nothing */
        }

        /* A config file, the command line, and what CONFIG REWRITE wrote
         * back, each into a fresh engine. */
        for (int way = 0; way < 3; way++) {
            assert_int_equal(goblin_store_open(NULL, &st), 0);
            ec.store = st;
            assert_int_equal(goblin_engine_open(&ec, &eng), 0);
            snprintf(text, sizeof(text), "%s \"%s\"\n", c->name, c->good);
            path = write_file(text);
            if (way == 1) {
                snprintf(text, sizeof(text), "--%s", c->name);
                argv[1] = text;
                assert_int_equal(goblin_engine_config_args(eng, 3, argv, err,
                                                           sizeof(err)), 0);
            } else {
                assert_int_equal(goblin_engine_config_load(eng, path, err,
                                                           sizeof(err)), 0);
            }
            if (way == 2) {   /* rewritten from the first, read again */
                struct goblin_session_info si = {GOBLIN_TRANSPORT_LOCAL, "",
                                                 "", -1, NULL};
                goblin_session *s;

                assert_int_equal(goblin_session_open(eng, &si, &s), 0);
                if (strcmp(c->name, "requirepass") == 0)
                    cmd_on(f, s, "auth s3cret");
                assert_string_equal(cmd_on(f, s, "config rewrite"),
                                    "+OK\r\n");
                goblin_session_close(s);
                goblin_engine_close(eng);
                goblin_store_close(st);
                assert_int_equal(goblin_store_open(NULL, &st), 0);
                ec.store = st;
                assert_int_equal(goblin_engine_open(&ec, &eng), 0);
                assert_int_equal(goblin_engine_config_load(eng, path, err,
                                                           sizeof(err)), 0);
            }
            expect_get(eng, c);
            unlink(path);
            if (c->bad != NULL && way == 0) {
                snprintf(text, sizeof(text), "%s \"%s\"\n", c->name,
                         c->bad);
                path = write_file(text);
                assert_int_equal(goblin_engine_config_load(eng, path, err,
                                                           sizeof(err)),
                                 GOBLIN_EINVAL);
                assert_non_null(strstr(err, c->why));
                unlink(path);
            }
            goblin_engine_close(eng);
            goblin_store_close(st);
        }
    }

    /* The descriptor's own normal form of a partial limit. */
    expect_ok(goblin__sdesc_find(S("client-output-buffer-limit")),
              "replica 1mb 2kb 3", "slave 1048576 2048 3");

    /* --help lists each with the value it has now. */
    assert_non_null(fp = fmemopen(help, sizeof(help), "w"));
    goblin_engine_config_usage(f->eng, fp);
    fclose(fp);
    for (size_t i = 0; i < sizeof(own_cases) / sizeof(own_cases[0]); i++) {
        const struct own_case *c = &own_cases[i];

        snprintf(text, sizeof(text), "--%s", c->name);
        assert_non_null(strstr(help, text));
    }
    assert_non_null(strstr(help, "\"x.rdb\""));
    assert_non_null(strstr(help, "\"normal 67108864 33554432 3 slave"));
}

/* CONFIG GET * of an engine, as one string. */
static void config_all(struct cfix *f, goblin_engine *eng, char *out,
                       size_t cap)
{
    struct goblin_session_info si = {GOBLIN_TRANSPORT_LOCAL, "", "", -1,
                                     NULL};
    goblin_session *s;

    assert_int_equal(goblin_session_open(eng, &si, &s), 0);
    cmd_on(f, s, "config get *");
    assert_true(f->outlen < cap);
    memcpy(out, f->out, f->outlen + 1);
    goblin_session_close(s);
}

static void test_rewrite_round_trip(void **state)
{
    struct cfix *f = *state;
    struct goblin_config_hooks hooks = {ring_hook, NULL, NULL};
    struct goblin_engine_config ec = {0};
    static char before[1 << 16], after[1 << 16];
    char *path = write_file("# keep me\nhz 20\nring /dev/shm/x 1m\n"
                            "save 3600 1\nsave 300 100\n");
    char err[1024], text[4096];
    goblin_engine *eng2;
    goblin_store *st2;
    FILE *fp;
    size_t n;

    goblin_engine_config_hooks(f->eng, &hooks);
    assert_int_equal(goblin_engine_config_load(f->eng, path, err,
                                               sizeof(err)), 0);
    EXPECT("config set hz 30 maxmemory 2mb hash-max-ziplist-entries 9 "
           "requirepass \"q\" notify-keyspace-events KEA",
           "+OK\r\n");
    EXPECT("config rewrite", "+OK\r\n");
    fp = fopen(path, "r");
    n = fread(text, 1, sizeof(text) - 1, fp);
    fclose(fp);
    text[n] = '\0';
    assert_non_null(strstr(text, "# keep me\nhz 30\nring /dev/shm/x 1m\n"
                                 "save 3600 1 300 100\n"));
    assert_non_null(strstr(text, "# Generated by CONFIG REWRITE\n"));
    assert_non_null(strstr(text, "\nmaxmemory 2097152\n"));
    assert_non_null(strstr(text, "\nhash-max-listpack-entries 9\n"));
    config_all(f, f->eng, before, sizeof(before));

    assert_int_equal(goblin_store_open(NULL, &st2), 0);
    ec.store = st2;
    assert_int_equal(goblin_engine_open(&ec, &eng2), 0);
    goblin_engine_config_hooks(eng2, &hooks);
    assert_int_equal(goblin_engine_config_load(eng2, path, err,
                                               sizeof(err)), 0);
    config_all(f, eng2, after, sizeof(after));
    assert_string_equal(before, after);
    goblin_engine_close(eng2);
    goblin_store_close(st2);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_limits_of_every_descriptor),
        cmocka_unit_test(test_memory_units_and_texts),
        CMD_TEST(test_old_names),
        CMD_TEST(test_multi_set_all_or_none),
        CMD_TEST(test_config_file),
        CMD_TEST(test_command_line),
        CMD_TEST(test_other_redis_directives),
        CMD_TEST(test_rewrite_round_trip),
        CMD_TEST(test_own_syntax_on_every_path),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
