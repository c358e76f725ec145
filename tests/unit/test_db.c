/* test_db.c - numbered databases through a session: SELECT, MOVE, COPY,
 * SWAPDB, FLUSHDB and FLUSHALL, DBSIZE and INFO keyspace per database,
 * WATCH per database, RESET, the C API's store handles, COPY under
 * allocation failure (texts checked against redis-server 7.0.15), and
 * files with function libraries refused without scripting. */
#include <unistd.h>

#include "engine/session.h"
#include "goblin/script.h"
#include "goblin/snapshot.h"
#include "test_commands_util.h"

static void test_select_range_and_texts(void **state)
{
    struct cfix *f = *state;

    EXPECT("select 0", "+OK\r\n");
    EXPECT("select 15", "+OK\r\n");
    EXPECT("select 16", "-ERR DB index is out of range\r\n");
    EXPECT("select -1", "-ERR DB index is out of range\r\n");
    EXPECT("select x", "-ERR value is not an integer or out of range\r\n");
    EXPECT("select 99999999999",
           "-ERR value is out of range, value must between -2147483648 and "
           "2147483647\r\n");
    EXPECT("config get databases", "*2\r\n$9\r\ndatabases\r\n$2\r\n16\r\n");
}

static void test_databases_hold_their_own_keys(void **state)
{
    struct cfix *f = *state;

    EXPECT("set k zero", "+OK\r\n");
    EXPECT("select 3", "+OK\r\n");
    EXPECT("get k", "$-1\r\n");
    EXPECT("set k three", "+OK\r\n");
    EXPECT("set j x", "+OK\r\n");
    EXPECT("dbsize", ":2\r\n");
    EXPECT("select 0", "+OK\r\n");
    EXPECT("get k", "$4\r\nzero\r\n");
    EXPECT("dbsize", ":1\r\n");
    assert_non_null(strstr(CMD("info keyspace"),
                           "db0:keys=1,expires=0,avg_ttl=0\r\n"
                           "db3:keys=2,expires=0,avg_ttl=0\r\n"));
    assert_non_null(strstr(CMD("client list"), " db=0 "));
    EXPECT("select 3", "+OK\r\n");
    assert_non_null(strstr(CMD("client info"), " db=3 "));
    EXPECT("reset", "+RESET\r\n");
    EXPECT("get k", "$4\r\nzero\r\n");
}

static void test_flushdb_only_the_selected_one(void **state)
{
    struct cfix *f = *state;

    EXPECT("set a 1", "+OK\r\n");
    EXPECT("select 1", "+OK\r\n");
    EXPECT("set b 1", "+OK\r\n");
    EXPECT("flushdb", "+OK\r\n");
    EXPECT("dbsize", ":0\r\n");
    EXPECT("select 0", "+OK\r\n");
    EXPECT("dbsize", ":1\r\n");
    EXPECT("select 2", "+OK\r\n");
    EXPECT("set c 1", "+OK\r\n");
    EXPECT("flushall", "+OK\r\n");
    EXPECT("dbsize", ":0\r\n");
    EXPECT("select 0", "+OK\r\n");
    EXPECT("dbsize", ":0\r\n");
    EXPECT("info keyspace", "$12\r\n# Keyspace\r\n\r\n");
}

static void test_move(void **state)
{
    struct cfix *f = *state;

    EXPECT("set k v", "+OK\r\n");
    EXPECT("pexpire k 100000", ":1\r\n");
    EXPECT("move k 0",
           "-ERR source and destination objects are the same\r\n");
    EXPECT("move k 16", "-ERR DB index is out of range\r\n");
    EXPECT("move k x", "-ERR value is not an integer or out of range\r\n");
    EXPECT("move nope 1", ":0\r\n");
    EXPECT("move k 1", ":1\r\n");
    EXPECT("exists k", ":0\r\n");
    EXPECT("set k other", "+OK\r\n");
    EXPECT("select 1", "+OK\r\n");
    EXPECT("pttl k", ":100000\r\n");
    EXPECT("move k 0", ":0\r\n"); /* present there: stays here */
    EXPECT("get k", "$1\r\nv\r\n");
}

static void test_copy_every_type(void **state)
{
    struct cfix *f = *state;

    EXPECT("set s 12345", "+OK\r\n");
    EXPECT("set e hello", "+OK\r\n");
    EXPECT("set r 0123456789012345678901234567890123456789012345", "+OK\r\n");
    EXPECT("hset h f1 v1 f2 v2", ":2\r\n");
    EXPECT("zadd z 1 a 2 b 2.5 c", ":3\r\n");
    EXPECT("expire z 100", ":1\r\n");
    EXPECT("copy s s", "-ERR source and destination objects are the same\r\n");
    EXPECT("copy s s2 bogus", "-ERR syntax error\r\n");
    EXPECT("copy s s2 db", "-ERR syntax error\r\n");
    EXPECT("copy s s2 db 99", "-ERR DB index is out of range\r\n");
    EXPECT("copy nope x", ":0\r\n");
    EXPECT("copy s s2", ":1\r\n");
    EXPECT("object encoding s2", "$3\r\nint\r\n");
    EXPECT("copy e e2", ":1\r\n");
    EXPECT("object encoding e2", "$6\r\nembstr\r\n");
    EXPECT("copy r r2", ":1\r\n");
    EXPECT("object encoding r2", "$3\r\nraw\r\n");
    EXPECT("copy s e", ":0\r\n");
    EXPECT("copy s e replace", ":1\r\n");
    EXPECT("get e", "$5\r\n12345\r\n");
    EXPECT("copy h h2 db 4", ":1\r\n");
    EXPECT("copy z h db 4 replace", ":1\r\n");
    EXPECT("hset h f3 v3", ":1\r\n"); /* the copy is its own */
    EXPECT("select 4", "+OK\r\n");
    EXPECT("hgetall h2", "*4\r\n$2\r\nf1\r\n$2\r\nv1\r\n$2\r\nf2\r\n"
                         "$2\r\nv2\r\n");
    EXPECT("zrange h 0 -1 withscores",
           "*6\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n"
           "$3\r\n2.5\r\n");
    EXPECT("ttl h", ":100\r\n");
    EXPECT("ttl h2", ":-1\r\n");
}

/* Lists and sets: a copy holds the same elements in the same form (a
 * large integer set shrunk below the intset limit stays "hashtable", as
 * Redis's COPY keeps the encoding), and is its own. */
static void test_copy_lists_and_sets(void **state)
{
    struct cfix *f = *state;
    char cmd[64];

    EXPECT("rpush l a 1 b", ":3\r\n");
    for (int i = 0; i < 3000; i++) {
        snprintf(cmd, sizeof(cmd), "rpush lb element-%04d", i);
        CMD(cmd);
        snprintf(cmd, sizeof(cmd), "sadd sb %d", i * 3);
        CMD(cmd);
    }
    for (int i = 0; i < 2900; i++) {
        snprintf(cmd, sizeof(cmd), "srem sb %d", i * 3);
        CMD(cmd);
    }
    EXPECT("sadd si 5 -3 70000", ":3\r\n");
    EXPECT("sadd ss x y 5", ":3\r\n");
    EXPECT("copy l l2", ":1\r\n");
    EXPECT("rpush l c", ":4\r\n");
    EXPECT("lrange l2 0 -1", "*3\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n");
    EXPECT("copy lb lb db 2", ":1\r\n");
    EXPECT("copy si si2", ":1\r\n");
    EXPECT("object encoding si2", "$6\r\nintset\r\n");
    EXPECT("smembers si2", "*3\r\n$2\r\n-3\r\n$1\r\n5\r\n$5\r\n70000\r\n");
    EXPECT("copy ss l replace", ":1\r\n");
    EXPECT("type l", "+set\r\n");
    EXPECT("sismember l y", ":1\r\n");
    EXPECT("copy sb sb2", ":1\r\n");
    EXPECT("object encoding sb2", "$9\r\nhashtable\r\n");
    EXPECT("scard sb2", ":100\r\n");
    EXPECT("sismember sb2 8999", ":0\r\n");
    EXPECT("sismember sb2 8997", ":1\r\n");
    EXPECT("select 2", "+OK\r\n");
    EXPECT("llen lb", ":3000\r\n");
    EXPECT("lindex lb 2999", "$12\r\nelement-2999\r\n");
    EXPECT("lindex lb 1500", "$12\r\nelement-1500\r\n");
}

static void test_swapdb(void **state)
{
    struct cfix *f = *state;
    goblin_session *other;

    assert_int_equal(goblin_session_open(f->eng, NULL, &other), 0);
    EXPECT("set k zero", "+OK\r\n");
    EXPECT("select 1", "+OK\r\n");
    EXPECT("set k one", "+OK\r\n");
    EXPECT("swapdb x 1", "-ERR invalid first DB index\r\n");
    EXPECT("swapdb 1 x", "-ERR invalid second DB index\r\n");
    EXPECT("swapdb 0 16", "-ERR DB index is out of range\r\n");
    EXPECT("swapdb 1 1", "+OK\r\n");
    EXPECT("swapdb 0 1", "+OK\r\n");
    EXPECT("get k", "$4\r\nzero\r\n");
    assert_string_equal(cmd_on(f, other, "get k"), "$3\r\none\r\n");
    goblin_session_close(other);
}

static void test_watch_is_per_database(void **state)
{
    struct cfix *f = *state;
    goblin_session *other;

    assert_int_equal(goblin_session_open(f->eng, NULL, &other), 0);
    EXPECT("watch k", "+OK\r\n");
    assert_string_equal(cmd_on(f, other, "select 1"), "+OK\r\n");
    assert_string_equal(cmd_on(f, other, "set k v"), "+OK\r\n");
    EXPECT("multi", "+OK\r\n");
    EXPECT("ping", "+QUEUED\r\n");
    EXPECT("exec", "*1\r\n+PONG\r\n");
    EXPECT("watch k", "+OK\r\n");
    assert_string_equal(cmd_on(f, other, "select 0"), "+OK\r\n");
    assert_string_equal(cmd_on(f, other, "set k v"), "+OK\r\n");
    EXPECT("multi", "+OK\r\n");
    EXPECT("ping", "+QUEUED\r\n");
    EXPECT("exec", "*-1\r\n");
    /* SWAPDB touches a watched key that exists on either side. */
    EXPECT("select 2", "+OK\r\n");
    EXPECT("watch k", "+OK\r\n");
    EXPECT("swapdb 0 2", "+OK\r\n");
    EXPECT("multi", "+OK\r\n");
    EXPECT("ping", "+QUEUED\r\n");
    EXPECT("exec", "*-1\r\n");
    goblin_session_close(other);
}

static void test_c_api_store_handles(void **state)
{
    struct cfix *f = *state;
    goblin_store *db0, *db5;
    struct goblin_slice v;

    assert_int_equal(goblin_engine_db_count(f->eng), 16);
    assert_int_equal(goblin_engine_db(f->eng, 16, &db5), GOBLIN_ERANGE);
    assert_int_equal(goblin_engine_db(f->eng, -1, &db5), GOBLIN_ERANGE);
    assert_int_equal(goblin_engine_db(f->eng, 0, &db0), 0);
    assert_ptr_equal(db0, f->base->st);
    assert_int_equal(goblin_engine_db(f->eng, 5, &db5), 0);
    assert_int_equal(goblin_str_set(db5, S("k"), S("five"), NULL, NULL) >= 0, 1);
    EXPECT("select 5", "+OK\r\n");
    EXPECT("get k", "$4\r\nfive\r\n");
    EXPECT("set k5 x", "+OK\r\n");
    assert_int_equal(goblin_str_get(db5, S("k5"), &v), 1);
    assert_int_equal(goblin_key_count(db0), 0);
}

/* Every allocation of a COPY to another database failing in turn: an
 * error reply, the destination unchanged, nothing leaked. */
static void test_copy_allocation_failures(void **state)
{
    struct cfix *f = *state;
    char cmd[160];
    const char *r;
    long n;

    EXPECT("select 1", "+OK\r\n"); /* opened before the loop */
    EXPECT("select 0", "+OK\r\n");
    for (int i = 0; i < 200; i++) {
        snprintf(cmd, sizeof(cmd), "hset big f%d %0*d", i, i % 80, i);
        CMD(cmd);
    }
    EXPECT("zadd z 1 a 2 b", ":2\r\n");
    for (n = 0;; n++) {
        f->base->counts.fail_after = n;
        r = CMD("copy big big db 1");
        f->base->counts.fail_after = -1;
        if (strcmp(r, ":1\r\n") == 0)
            break;
        assert_true(r[0] == '-');
        EXPECT("select 1", "+OK\r\n");
        EXPECT("exists big", ":0\r\n");
        EXPECT("select 0", "+OK\r\n");
        assert_true(n < 1000);
    }
    EXPECT("select 1", "+OK\r\n");
    EXPECT("hlen big", ":200\r\n");
    EXPECT("select 0", "+OK\r\n");
    for (n = 0;; n++) {
        f->base->counts.fail_after = n;
        r = CMD("copy z z2");
        f->base->counts.fail_after = -1;
        if (strcmp(r, ":1\r\n") == 0)
            break;
        EXPECT("exists z2", ":0\r\n");
        assert_true(n < 1000);
    }
    EXPECT("zcard z2", ":2\r\n");
    for (int i = 0; i < 600; i++) {
        snprintf(cmd, sizeof(cmd), "rpush l %0*d", i % 90, i);
        CMD(cmd);
        snprintf(cmd, sizeof(cmd), "sadd si %d", i);
        CMD(cmd);
        snprintf(cmd, sizeof(cmd), "sadd ss m%d", i);
        CMD(cmd);
    }
    EXPECT("sadd sn 1 2 3", ":3\r\n");
    {
        static const char *const keys[] = {"l", "si", "ss", "sn"};

        for (size_t k = 0; k < sizeof(keys) / sizeof(*keys); k++) {
            char dst[16];

            snprintf(dst, sizeof(dst), "%s2", keys[k]);
            for (n = 0;; n++) {
                snprintf(cmd, sizeof(cmd), "copy %s %s db 1", keys[k], dst);
                f->base->counts.fail_after = n;
                r = CMD(cmd);
                f->base->counts.fail_after = -1;
                if (strcmp(r, ":1\r\n") == 0)
                    break;
                assert_true(r[0] == '-');
                EXPECT("select 1", "+OK\r\n");
                snprintf(cmd, sizeof(cmd), "exists %s", dst);
                EXPECT(cmd, ":0\r\n");
                EXPECT("select 0", "+OK\r\n");
                assert_true(n < 1000);
            }
        }
    }
    EXPECT("select 1", "+OK\r\n");
    EXPECT("llen l2", ":600\r\n");
    EXPECT("scard si2", ":600\r\n");
    EXPECT("scard ss2", ":600\r\n");
    EXPECT("object encoding sn2", "$6\r\nintset\r\n");
}

/* A snapshot of three databases comes back into the same numbers; a
 * load given database 0 alone refuses the others, leaving it empty. */
static void test_snapshot_keeps_database_numbers(void **state)
{
    struct cfix *f = *state;
    goblin_store *dbs[3] = {NULL, NULL, NULL}, *one;
    struct goblin_snapshot_result res;
    char path[] = "/tmp/goblin-test-db-XXXXXX";
    int fd = mkstemp(path);
    struct goblin_slice v;

    assert_true(fd >= 0);
    close(fd);
    EXPECT("set a 0", "+OK\r\n");
    EXPECT("select 2", "+OK\r\n");
    EXPECT("hset h f v", ":1\r\n");
    EXPECT("set b 2 px 100000", "+OK\r\n");
    EXPECT("select 1", "+OK\r\n"); /* open, empty: no marker */
    for (int i = 0; i < 3; i++)
        assert_int_equal(goblin_engine_db(f->eng, i, &dbs[i]), 0);
    assert_int_equal(goblin_snapshot_save_dbs(dbs, 3, path, &res), 0);
    assert_int_equal(res.keys, 3);
    for (int i = 0; i < 3; i++)
        goblin_store_flush(dbs[i]);
    assert_int_equal(goblin_snapshot_load_dbs(dbs, 3, path, &res), 0);
    assert_int_equal(res.keys, 3);
    assert_int_equal(goblin_key_count(dbs[0]), 1);
    assert_int_equal(goblin_key_count(dbs[1]), 0);
    assert_int_equal(goblin_key_count(dbs[2]), 2);
    assert_int_equal(goblin_str_get(dbs[2], S("b"), &v), 1);
    assert_int_equal(goblin_snapshot_verify(path, NULL, &res), 0);
    assert_int_equal(goblin_store_open(NULL, &one), 0);
    assert_int_equal(goblin_snapshot_load(one, path, &res), GOBLIN_ESNAPDB);
    assert_int_equal(goblin_key_count(one), 0);
    goblin_store_close(one);
    for (int i = 0; i < 3; i++)
        goblin_store_flush(dbs[i]);
    /* Every allocation failing in turn: nothing loaded anywhere. */
    for (long n = 0;; n++) {
        int rc;

        f->base->counts.fail_after = n;
        rc = goblin_snapshot_load_dbs(dbs, 3, path, &res);
        f->base->counts.fail_after = -1;
        if (rc == 0)
            break;
        assert_int_equal(rc, GOBLIN_ENOMEM);
        for (int i = 0; i < 3; i++)
            assert_int_equal(goblin_key_count(dbs[i]), 0);
        assert_true(n < 1000);
    }
    assert_int_equal(goblin_key_count(dbs[2]), 2);
    unlink(path);
}

/* Function library hooks as a scripting library would attach them, with
 * one library, so that the engine's files carry it. */
static const char lib_code[] = "#!lua name=x\nredis.register_function("
                               "'f', function() return 1 end)";

static size_t one_count(void *ctx)
{
    (void)ctx;
    return 1;
}

static struct goblin_slice one_code(void *ctx, size_t i)
{
    (void)ctx;
    (void)i;
    return S(lib_code);
}

static int one_load(void *ctx, struct goblin_slice code, char *err,
                    size_t cap)
{
    (void)ctx;
    (void)code;
    (void)err;
    (void)cap;
    return 0;
}

static void one_flush(void *ctx)
{
    (void)ctx;
}

/* An engine without scripting refuses a snapshot or RDB file holding
 * function libraries (loading the keys alone would lose them at the next
 * save), as redis-server refuses one whose library it cannot load. */
static void test_files_with_libraries_need_scripting(void **state)
{
    static const struct goblin_function_libs hooks = {
        one_count, one_code, one_load, one_flush};
    struct cfix *f = *state;
    struct goblin_snapshot_result res;
    char snap[] = "/tmp/goblin-test-fnlib-XXXXXX";
    char rdb[] = "/tmp/goblin-test-fnrdb-XXXXXX";
    int fd;

    assert_true((fd = mkstemp(snap)) >= 0);
    close(fd);
    assert_true((fd = mkstemp(rdb)) >= 0);
    close(fd);
    EXPECT("set a 1", "+OK\r\n");
    goblin_engine_function_libs(f->eng, &hooks, NULL);
    assert_int_equal(goblin_engine_snapshot_save(f->eng, snap, &res), 0);
    assert_int_equal(goblin_engine_export_rdb(f->eng, rdb, &res), 0);
    goblin_engine_function_libs(f->eng, NULL, NULL);
    EXPECT("flushall", "+OK\r\n");
    memset(&res, 0, sizeof(res));
    assert_true(goblin__db_load(f->eng, snap, &res) < 0);
    assert_non_null(strstr(res.message, "the file holds function libraries, "
                                        "but scripting is not available in "
                                        "this build"));
    EXPECT("dbsize", ":0\r\n");
    memset(&res, 0, sizeof(res));
    assert_true(goblin_engine_import_rdb(f->eng, rdb, 0, &res) < 0);
    assert_non_null(strstr(res.message, "scripting is not available"));
    EXPECT("dbsize", ":0\r\n");
    /* With the hooks back, both load. */
    goblin_engine_function_libs(f->eng, &hooks, NULL);
    assert_int_equal(goblin__db_load(f->eng, snap, &res), 0);
    EXPECT("get a", "$1\r\n1\r\n");
    EXPECT("flushall", "+OK\r\n");
    assert_int_equal(goblin_engine_import_rdb(f->eng, rdb, 0, &res), 0);
    EXPECT("get a", "$1\r\n1\r\n");
    goblin_engine_function_libs(f->eng, NULL, NULL);
    unlink(snap);
    unlink(rdb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        CMD_TEST(test_select_range_and_texts),
        CMD_TEST(test_databases_hold_their_own_keys),
        CMD_TEST(test_flushdb_only_the_selected_one),
        CMD_TEST(test_move),
        CMD_TEST(test_copy_every_type),
        CMD_TEST(test_swapdb),
        CMD_TEST(test_watch_is_per_database),
        CMD_TEST(test_c_api_store_handles),
        CMD_TEST(test_copy_lists_and_sets),
        CMD_TEST(test_copy_allocation_failures),
        CMD_TEST(test_snapshot_keeps_database_numbers),
        CMD_TEST(test_files_with_libraries_need_scripting),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
