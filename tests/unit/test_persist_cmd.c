/* test_persist_cmd.c - SAVE, BGSAVE, LASTSAVE, SHUTDOWN, the save, dir
 * and dbfilename settings, the policies run by cron and INFO persistence,
 * through an engine whose bgsave and shutdown hooks the test plays
 * (nothing forks here). */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <goblin/snapshot.h>

#include "test_commands_util.h"

struct hooks {
    int bgsaves, kills, shutdowns;
    int fail;
    goblin_engine *eng;
    char path[4096];
};

static struct hooks H;
static char dir[64];

static int bgsave_hook(void *ctx, const char *path)
{
    struct hooks *h = ctx;

    if (h->fail)
        return GOBLIN_ENOMEM;
    h->bgsaves++;
    snprintf(h->path, sizeof(h->path), "%s", path);
    return 0;
}

static void kill_hook(void *ctx)
{
    struct hooks *h = ctx;

    h->kills++;
    goblin_engine_bgsave_done(h->eng, GOBLIN_ESNAPFORMAT);
}

static void shutdown_hook(void *ctx)
{
    ((struct hooks *)ctx)->shutdowns++;
}

/* The usual fixture, reopened with the hooks and dir set to a fresh
 * directory. */
static int setup(void **state)
{
    struct cfix *f;
    struct goblin_engine_config ec = {0};
    struct goblin_session_info si = {GOBLIN_TRANSPORT_TCP, "127.0.0.1:5000",
                                     "127.0.0.1:6379", 7, NULL};
    char cmd[256];

    if (cfix_setup(state) != 0)
        return -1;
    f = *state;
    goblin_engine_close(f->eng);
    memset(&H, 0, sizeof(H));
    ec.store = f->base->st;
    ec.now_ns = cfix_now_ns;
    ec.now_ns_ctx = f;
    ec.bgsave = bgsave_hook;
    ec.bgsave_ctx = &H;
    ec.bgsave_kill = kill_hook;
    ec.shutdown = shutdown_hook;
    ec.shutdown_ctx = &H;
    if (goblin_engine_open(&ec, &f->eng) != 0 ||
        goblin_session_open(f->eng, &si, &f->s) != 0)
        return -1;
    H.eng = f->eng;
    snprintf(dir, sizeof(dir), "/tmp/goblin-persist-XXXXXX");
    if (mkdtemp(dir) == NULL)
        return -1;
    snprintf(cmd, sizeof(cmd), "config set dir %s", dir);
    return strcmp(CMD(cmd), "+OK\r\n") == 0 ? 0 : -1;
}

static int teardown(void **state)
{
    char path[128];

    snprintf(path, sizeof(path), "%s/dump.goblin", dir);
    unlink(path);
    snprintf(path, sizeof(path), "%s/other.snap", dir);
    unlink(path);
    rmdir(dir);
    return cfix_teardown(state);
}

static bool info_has(struct cfix *f, const char *line)
{
    return strstr(CMD("info persistence"), line) != NULL;
}

static void test_save_and_lastsave(void **state)
{
    struct cfix *f = *state;
    char path[128], want[160];
    struct stat sb;

    f->base->clock.now_ms = 1700000123000;
    EXPECT("set a 1", "+OK\r\n");
    assert_true(info_has(f, "rdb_changes_since_last_save:1\r\n"));
    EXPECT("save", "+OK\r\n");
    snprintf(path, sizeof(path), "%s/dump.goblin", dir);
    assert_int_equal(stat(path, &sb), 0);
    assert_true(info_has(f, "rdb_changes_since_last_save:0\r\n"));
    assert_true(info_has(f, "rdb_saves:1\r\n"));
    assert_true(info_has(f, "rdb_last_bgsave_status:ok\r\n"));
    EXPECT("lastsave", ":1700000123\r\n");
    EXPECT("config set dbfilename other.snap", "+OK\r\n");
    EXPECT("save", "+OK\r\n");
    snprintf(path, sizeof(path), "%s/other.snap", dir);
    assert_int_equal(stat(path, &sb), 0);
    snprintf(want, sizeof(want), "*2\r\n$3\r\ndir\r\n$%zu\r\n%s\r\n",
             strlen(dir), dir);
    EXPECT("config get dir", want);
}

static void test_settings_refused(void **state)
{
    struct cfix *f = *state;

    EXPECT("config get save", "*2\r\n$4\r\nsave\r\n$0\r\n\r\n");
    EXPECT("config set save 1",
           "-ERR CONFIG SET failed (possibly related to argument 'save') - "
           "Invalid save parameters\r\n");
    EXPECT("config set save x 1",
           "-ERR syntax error\r\n");
    EXPECT("config set dbfilename a/b",
           "-ERR CONFIG SET failed (possibly related to argument "
           "'dbfilename') - dbfilename can't be a path, just a "
           "filename\r\n");
    EXPECT("config set dir /nonexistent/goblin",
           "-ERR CONFIG SET failed (possibly related to argument 'dir') - "
           "No such file or directory\r\n");
    assert_string_equal(FEED("*4\r\n$6\r\nconfig\r\n$3\r\nset\r\n$4\r\nsave"
                             "\r\n$14\r\n3600 1 300 100\r\n"), "+OK\r\n");
    EXPECT("config get save",
           "*2\r\n$4\r\nsave\r\n$14\r\n3600 1 300 100\r\n");
    assert_true(goblin_engine_save_policy_set(f->eng));
}

static void test_bgsave(void **state)
{
    struct cfix *f = *state;

    EXPECT("set a 1", "+OK\r\n");
    EXPECT("bgsave", "+Background saving started\r\n");
    assert_int_equal(H.bgsaves, 1);
    assert_non_null(strstr(H.path, "/dump.goblin"));
    assert_true(goblin_engine_bgsave_running(f->eng));
    assert_true(info_has(f, "rdb_bgsave_in_progress:1\r\n"));
    EXPECT("bgsave", "-ERR Background save already in progress\r\n");
    EXPECT("save", "-ERR Background save already in progress\r\n");
    /* Redis: SCHEDULE waits only for another kind of child. */
    EXPECT("bgsave schedule",
           "-ERR Background save already in progress\r\n");
    EXPECT("bgsave now", "-ERR syntax error\r\n");
    EXPECT("set b 2", "+OK\r\n");   /* during the save: still unsaved */
    goblin_engine_bgsave_done(f->eng, 0);
    assert_true(info_has(f, "rdb_bgsave_in_progress:0\r\n"));
    assert_true(info_has(f, "rdb_changes_since_last_save:1\r\n"));
    assert_true(info_has(f, "rdb_last_bgsave_status:ok\r\n"));
    /* Inside EXEC, Redis schedules the save for after the transaction. */
    EXPECT("multi", "+OK\r\n");
    EXPECT("bgsave", "+QUEUED\r\n");
    EXPECT("exec", "*1\r\n+Background saving scheduled\r\n");
    assert_int_equal(H.bgsaves, 1);
    goblin_engine_cron(f->eng);   /* starts the scheduled one */
    assert_int_equal(H.bgsaves, 2);
    goblin_engine_bgsave_done(f->eng, GOBLIN_ESNAPFORMAT);
    assert_true(info_has(f, "rdb_last_bgsave_status:err\r\n"));
    H.fail = 1;
    EXPECT("bgsave", "-ERR\r\n");
    assert_false(goblin_engine_bgsave_running(f->eng));
}

static void test_policy_from_cron(void **state)
{
    struct cfix *f = *state;

    EXPECT("config set save 10 2", "-ERR syntax error\r\n");
    assert_string_equal(FEED("*4\r\n$6\r\nconfig\r\n$3\r\nset\r\n$4\r\nsave"
                             "\r\n$4\r\n10 2\r\n"), "+OK\r\n");
    EXPECT("set a 1", "+OK\r\n");
    f->base->clock.now_ms += 11000;
    goblin_engine_cron(f->eng);
    assert_int_equal(H.bgsaves, 0);   /* one change of two */
    EXPECT("set b 1", "+OK\r\n");
    goblin_engine_cron(f->eng);
    assert_int_equal(H.bgsaves, 1);
    goblin_engine_cron(f->eng);
    assert_int_equal(H.bgsaves, 1);   /* one at a time */
    goblin_engine_bgsave_done(f->eng, GOBLIN_ESNAPFORMAT);
    goblin_engine_cron(f->eng);
    assert_int_equal(H.bgsaves, 1);   /* 5 s before a retry */
    f->base->clock.now_ms += 6000;
    goblin_engine_cron(f->eng);
    assert_int_equal(H.bgsaves, 2);
    goblin_engine_bgsave_done(f->eng, 0);
    assert_true(info_has(f, "rdb_changes_since_last_save:0\r\n"));
    goblin_engine_cron(f->eng);
    assert_int_equal(H.bgsaves, 2);
}

static void test_shutdown(void **state)
{
    struct cfix *f = *state;

    EXPECT("shutdown abort", "-ERR No shutdown in progress.\r\n");
    EXPECT("shutdown save nosave", "-ERR syntax error\r\n");
    EXPECT("shutdown later", "-ERR syntax error\r\n");
    EXPECT("bgsave", "+Background saving started\r\n");
    EXPECT("shutdown now save", "");
    assert_int_equal(H.kills, 1);
    assert_int_equal(H.shutdowns, 1);
    assert_true(goblin_session_should_close(f->s));
}

/* SAVE and SHUTDOWN carry Redis's no-multi flag: refused while queueing
 * (the hooks never run), and EXEC then aborts; DISCARD still works.
 * Texts compared with redis-server 7.0.15. */
static void test_no_multi(void **state)
{
    struct cfix *f = *state;

    EXPECT("multi", "+OK\r\n");
    EXPECT("set foo bar", "+QUEUED\r\n");
    EXPECT("shutdown nosave",
           "-ERR Command not allowed inside a transaction\r\n");
    EXPECT("save", "-ERR Command not allowed inside a transaction\r\n");
    EXPECT("save x", "-ERR wrong number of arguments for 'save' "
                     "command\r\n");
    EXPECT("bgsave", "+QUEUED\r\n");
    EXPECT("exec", "-EXECABORT Transaction discarded because of previous "
                   "errors.\r\n");
    EXPECT("get foo", "$-1\r\n");
    assert_int_equal(H.shutdowns, 0);
    assert_int_equal(H.bgsaves, 0);
    assert_false(goblin_session_should_close(f->s));
    EXPECT("multi", "+OK\r\n");
    EXPECT("shutdown", "-ERR Command not allowed inside a transaction\r\n");
    EXPECT("discard", "+OK\r\n");
    EXPECT("exec", "-ERR EXEC without MULTI\r\n");
    assert_int_equal(H.shutdowns, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_save_and_lastsave, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_settings_refused, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_bgsave, setup, teardown),
        cmocka_unit_test_setup_teardown(test_policy_from_cron, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_shutdown, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_multi, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
