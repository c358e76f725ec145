/* test_aof.c - the append-only file (goblin/aof.h): records cut at every
 * byte, manifests good and bad (Redis 7.0's line format), and an AOF
 * written, reopened and loaded in-process, with a torn last record
 * truncated or refused by aof-load-truncated; FUNCTION records refused
 * without scripting. */
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "goblin/aof.h"
#include "stream/aof_int.h"
#include "test_commands_util.h"

static const char records[] =
    "*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n"
    "*3\r\n$3\r\nset\r\n$1\r\na\r\n$0\r\n\r\n"
    "*4\r\n$4\r\nHSET\r\n$1\r\nh\r\n$4\r\nf\r\n\r\r\n$10\r\n0123456789\r\n";

static void test_records_parse_whole_and_need_more_at_every_cut(void **s)
{
    struct goblin_slice v[8];
    size_t len = sizeof(records) - 1, at = 0;
    int argc, n = 0;
    int64_t k;

    (void)s;
    while (at < len) {
        k = goblin_aof_record(records + at, len - at, v, 8, &argc);
        assert_true(k > 0);
        /* every shorter prefix of this record asks for more */
        for (int64_t cut = 0; cut < k; cut++)
            assert_int_equal(goblin_aof_record(records + at, (size_t)cut, v,
                                               8, &argc), 0);
        at += (size_t)k;
        n++;
    }
    assert_int_equal(n, 3);
    assert_int_equal(goblin_aof_record(records, len, v, 8, &argc), 23);
    assert_int_equal(argc, 2);
    assert_memory_equal(v[0].ptr, "SELECT", 6);
    k = goblin_aof_record(records + 23, len - 23, v, 8, &argc);
    assert_int_equal(argc, 3);
    assert_int_equal(v[2].len, 0);
    k = goblin_aof_record(records + 23 + k, len - 23 - (size_t)k, v, 8,
                          &argc);
    assert_int_equal(argc, 4);
    assert_int_equal(v[2].len, 4);
    assert_memory_equal(v[2].ptr, "f\r\n\r", 4);
}

static void test_records_refuse_what_is_not_resp(void **s)
{
    static const char *const bad[] = {
        "set a 1\r\n", "*0\r\n", "*-1\r\n", "*1\r\n+OK\r\n", "*1\r\n$x\r\n",
        "*1\r\n$1\r\nab\r\n", "*1\r\n$-1\r\n", "*1x\r\n", "*1\r\r",
        "*1\r\n$1\r\na\n\n", "*99999999999999999999\r\n",
    };
    struct goblin_slice v[4];
    int argc;

    (void)s;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (goblin_aof_record(bad[i], strlen(bad[i]), v, 4, &argc) !=
            GOBLIN_EPROTO)
            fail_msg("accepted: %s", bad[i]);
    assert_int_equal(goblin_aof_record("*5\r\n", 4, v, 4, &argc),
                     GOBLIN_ELIMIT);
    assert_int_equal(argc, 5);
}

static void test_manifest_reads_and_writes_redis_lines(void **s)
{
    static const char text[] =
        "file appendonly.aof.1.base.rdb seq 1 type b\n"
        "file appendonly.aof.1.incr.aof seq 1 type h\n"
        "file appendonly.aof.2.incr.aof seq 2 type i\n"
        "type i seq 3 file appendonly.aof.3.incr.aof\n";
    struct goblin__aof_manifest m;
    char err[256], out[1024];

    (void)s;
    assert_int_equal(goblin__aof_manifest_parse(&m, text, strlen(text), err,
                                                sizeof(err)), 0);
    assert_string_equal(m.base, "appendonly.aof.1.base.rdb");
    assert_int_equal(m.nincr, 2);
    assert_string_equal(m.incr[1], "appendonly.aof.3.incr.aof");
    assert_true(goblin__aof_manifest_text(&m, out, sizeof(out)) > 0);
    assert_string_equal(out, "file appendonly.aof.1.base.rdb seq 1 type b\n"
                             "file appendonly.aof.2.incr.aof seq 2 type i\n"
                             "file appendonly.aof.3.incr.aof seq 3 type i\n");
}

static void test_manifest_refuses_bad_ones(void **s)
{
    static const char *const bad[] = {
        "",
        "file a seq 1\n",
        "file a seq x type b\n",
        "file a seq 0 type b\n",
        "file a seq 1 type z\n",
        "file a seq 1 type b\nfile b seq 2 type b\n",
        "file a seq 2 type i\nfile b seq 1 type i\n",
        "file a/b seq 1 type i\n",
        "file a seq 1 type\n",
        "# only a comment\n",
    };
    struct goblin__aof_manifest m;
    char err[256];

    (void)s;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (goblin__aof_manifest_parse(&m, bad[i], strlen(bad[i]), err,
                                       sizeof(err)) != GOBLIN_EPROTO)
            fail_msg("accepted: %s", bad[i]);
    assert_non_null(strstr(err, "Invalid AOF manifest file format"));
}

/* ---- in-process: write, reopen, load ---- */

static char tmpdir[64];

static void set_dir(struct cfix *f)
{
    char err[256];

    assert_int_equal(goblin_engine_config_set(f->eng, "dir", tmpdir, err,
                                              sizeof(err)), 0);
}

static int aof_setup(void **state)
{
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/goblin-aof-XXXXXX");
    if (mkdtemp(tmpdir) == NULL)
        return -1;
    return cfix_setup(state);
}

static int aof_teardown(void **state)
{
    char cmd[128];

    snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
    if (system(cmd) != 0)
        return -1;
    return cfix_teardown(state);
}

/* A fresh engine on a fresh store (the fixture's own stays), loading the
 * AOF: returns goblin_aof_load's result. */
static int reload(struct cfix *f, const char *truncated, char *err,
                  size_t cap)
{
    char e[256];
    int rc;

    goblin_session_close(f->s);
    goblin_engine_close(f->eng);
    goblin_store_flush(f->base->st);
    assert_int_equal(goblin_engine_open(&(struct goblin_engine_config){
                                            .store = f->base->st},
                                        &f->eng), 0);
    assert_int_equal(goblin_session_open(f->eng, &(struct goblin_session_info){
                                             GOBLIN_TRANSPORT_TCP, "p", "l",
                                             1, NULL}, &f->s), 0);
    if (truncated != NULL)
        assert_int_equal(goblin_engine_config_set(f->eng,
                                                  "aof-load-truncated",
                                                  truncated, e, sizeof(e)),
                         0);
    rc = goblin_aof_load(f->eng, &(struct goblin_aof_config){tmpdir, NULL,
                                                             NULL},
                         err, cap);
    return rc;
}

static goblin_aof *open_aof(struct cfix *f)
{
    goblin_aof *a;
    char err[256];

    assert_int_equal(goblin_aof_open(f->eng, &(struct goblin_aof_config){
                                         tmpdir, NULL, NULL},
                                     &a, err, sizeof(err)), 0);
    return a;
}

static void test_writes_come_back_after_a_restart(void **state)
{
    struct cfix *f = *state;
    goblin_aof *a;
    char err[256];

    set_dir(f);
    EXPECT("set before 1", "+OK\r\n");
    a = open_aof(f);
    EXPECT("set a 1 ex 100", "+OK\r\n");
    EXPECT("rpush l x y z", ":3\r\n");
    EXPECT("select 2", "+OK\r\n");
    EXPECT("hset h f v", ":1\r\n");
    EXPECT("multi", "+OK\r\n");
    EXPECT("incr n", "+QUEUED\r\n");
    EXPECT("incr n", "+QUEUED\r\n");
    EXPECT("exec", "*2\r\n:1\r\n:2\r\n");
    goblin_aof_close(a);
    assert_int_equal(reload(f, NULL, err, sizeof(err)), 1);
    EXPECT("get before", "$1\r\n1\r\n");
    EXPECT("lrange l 0 -1", "*3\r\n$1\r\nx\r\n$1\r\ny\r\n$1\r\nz\r\n");
    EXPECT("pexpiretime a", ":1700000100000\r\n");
    EXPECT("select 2", "+OK\r\n");
    EXPECT("hget h f", "$1\r\nv\r\n");
    EXPECT("get n", "$1\r\n2\r\n");
}

static void append_file(const char *name, const char *bytes)
{
    char path[256];
    int fd;

    snprintf(path, sizeof(path), "%s/appendonlydir/%s", tmpdir, name);
    fd = open(path, O_WRONLY | O_APPEND);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, bytes, strlen(bytes)), (ssize_t)strlen(bytes));
    close(fd);
}

static off_t size_of(const char *name)
{
    char path[256];
    struct stat sb;

    snprintf(path, sizeof(path), "%s/appendonlydir/%s", tmpdir, name);
    assert_int_equal(stat(path, &sb), 0);
    return sb.st_size;
}

static void test_torn_last_record_is_cut_or_refused(void **state)
{
    struct cfix *f = *state;
    goblin_aof *a;
    char err[512];
    off_t whole;

    set_dir(f);
    a = open_aof(f);
    EXPECT("set a 1", "+OK\r\n");
    goblin_aof_close(a);
    whole = size_of("appendonly.aof.1.incr.aof");
    append_file("appendonly.aof.1.incr.aof", "*3\r\n$3\r\nset\r\n$1\r\nb");
    assert_true(reload(f, "no", err, sizeof(err)) < 0);
    assert_non_null(strstr(err, "Unexpected end of file"));
    assert_int_equal(reload(f, "yes", err, sizeof(err)), 1);
    EXPECT("get a", "$1\r\n1\r\n");
    EXPECT("exists b", ":0\r\n");
    assert_int_equal(size_of("appendonly.aof.1.incr.aof"), whole);
    /* An unfinished MULTI is torn too. */
    append_file("appendonly.aof.1.incr.aof",
                "*1\r\n$5\r\nMULTI\r\n*3\r\n$3\r\nset\r\n$1\r\nc\r\n$1\r\n1\r\n");
    assert_int_equal(reload(f, "yes", err, sizeof(err)), 1);
    EXPECT("exists c", ":0\r\n");
    assert_int_equal(size_of("appendonly.aof.1.incr.aof"), whole);
    /* Garbage is never loaded. */
    append_file("appendonly.aof.1.incr.aof", "garbage\r\n");
    assert_true(reload(f, "yes", err, sizeof(err)) < 0);
    assert_non_null(strstr(err, "Bad file format"));
}

static void test_rewrite_replaces_the_parts_and_keeps_every_write(void **st)
{
    struct cfix *f = *st;
    goblin_aof *a;
    char err[256], path[512];
    struct dirent *de;
    DIR *d;
    int n = 0;

    set_dir(f);
    a = open_aof(f);
    EXPECT("set a 1", "+OK\r\n");
    EXPECT("zadd z 1.5 m 2 n", ":2\r\n");
    EXPECT("sadd s x", ":1\r\n");
    EXPECT("bgrewriteaof", "+Background append only file rewriting "
                           "started\r\n");
    EXPECT("set after 1", "+OK\r\n");
    EXPECT("expire a 100", ":1\r\n");
    goblin_aof_close(a);
    snprintf(path, sizeof(path), "%s/appendonlydir", tmpdir);
    assert_non_null(d = opendir(path));
    while ((de = readdir(d)) != NULL)
        n += de->d_name[0] != '.';
    closedir(d);
    assert_int_equal(n, 3); /* a base, one incr, the manifest */
    assert_int_equal(size_of("appendonly.aof.2.base.aof") > 0, 1);
    assert_int_equal(reload(f, NULL, err, sizeof(err)), 1);
    EXPECT("zscore z m", "$3\r\n1.5\r\n");
    EXPECT("get after", "$1\r\n1\r\n");
    EXPECT("pexpiretime a", ":1700000100000\r\n");
    EXPECT("scard s", ":1\r\n");
}

/* A FUNCTION command in the file needs scripting, which this engine
 * lacks: the load is refused, not run without the library (the next
 * rewrite would lose it). */
static void test_function_records_need_scripting(void **state)
{
    struct cfix *f = *state;
    goblin_aof *a;
    char err[512];

    set_dir(f);
    a = open_aof(f);
    EXPECT("set a 1", "+OK\r\n");
    goblin_aof_close(a);
    append_file("appendonly.aof.1.incr.aof",
                "*3\r\n$8\r\nFUNCTION\r\n$4\r\nLOAD\r\n"
                "$12\r\n#!lua name=x\r\n");
    err[0] = '\0';
    assert_true(reload(f, NULL, err, sizeof(err)) < 0);
    assert_non_null(strstr(err, "the file holds function libraries, but "
                                "scripting is not available in this "
                                "build"));
}

#define A(fn) cmocka_unit_test_setup_teardown(fn, aof_setup, aof_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_records_parse_whole_and_need_more_at_every_cut),
        cmocka_unit_test(test_records_refuse_what_is_not_resp),
        cmocka_unit_test(test_manifest_reads_and_writes_redis_lines),
        cmocka_unit_test(test_manifest_refuses_bad_ones),
        A(test_writes_come_back_after_a_restart),
        A(test_torn_last_record_is_cut_or_refused),
        A(test_rewrite_replaces_the_parts_and_keeps_every_write),
        A(test_function_records_need_scripting),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
