/* test_acl.c - access control in process: SHA-256 against the FIPS 180-2
 * vectors, ACL users and their rules (passwords, on/off, categories,
 * commands and subcommands, key patterns for reading and writing), the
 * exact NOPERM/WRONGPASS/NOAUTH texts, all-or-nothing SETUSER (also when
 * an allocation fails), DELUSER closing sessions, MULTI, ACL files, and
 * the same rules over SBE (typed requests and Argv). */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_commands_util.h"

#include "goblin/sbe.h"
#include "sbe/goblin_sbe_gen.h"
#include "util/sha256.h"

#define S(lit) ((struct goblin_slice){(lit), sizeof(lit) - 1})

static const char *hex(const unsigned char *d)
{
    static char buf[65];

    for (int i = 0; i < 32; i++)
        snprintf(buf + 2 * i, 3, "%02x", d[i]);
    return buf;
}

static void test_sha256_matches_the_fips_vectors(void **state)
{
    unsigned char d[32];
    char *million = malloc(1000000);

    (void)state;
    goblin__sha256("abc", 3, d);
    assert_string_equal(hex(d), "ba7816bf8f01cfea414140de5dae2223"
                                "b00361a396177a9cb410ff61f20015ad");
    goblin__sha256("", 0, d);
    assert_string_equal(hex(d), "e3b0c44298fc1c149afbf4c8996fb924"
                                "27ae41e4649b934ca495991b7852b855");
    goblin__sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
                   56, d);
    assert_string_equal(hex(d), "248d6a61d20638b8e5c026930c3e6039"
                                "a33ce45964ff2167f6ecedd419db06c1");
    goblin__sha256("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
                   "hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
                   112, d);
    assert_string_equal(hex(d), "cf5b16a778af8380036ce59e7b0492370"
                                "b249b11e8f07a51afac45037afee9d1");
    assert_non_null(million);
    memset(million, 'a', 1000000);
    goblin__sha256(million, 1000000, d);
    assert_string_equal(hex(d), "cdc76e5c9914fb9281a1c7e284d73e67"
                                "f1809a48a497200e046d39ccc7112cd0");
    free(million);
}

static void test_same_bytes_compares_every_byte(void **state)
{
    (void)state;
    assert_true(goblin__same_bytes("abcd", "abcd", 4));
    assert_false(goblin__same_bytes("abcd", "abce", 4));
    assert_false(goblin__same_bytes("xbcd", "abcd", 4));
    assert_true(goblin__same_bytes("", "", 0));
}

/* ---- users and rules over RESP ---- */

static void test_default_user_is_open_until_a_password(void **state)
{
    struct cfix *f = *state;

    EXPECT("acl list", "*1\r\n$34\r\nuser default on nopass ~* &* +@all"
                       "\r\n");
    EXPECT("acl whoami", "$7\r\ndefault\r\n");
    EXPECT("auth x", "-ERR AUTH <password> called without any password "
                     "configured for the default user. Are you sure your "
                     "configuration is correct?\r\n");
    EXPECT("auth default anything", "+OK\r\n");
    EXPECT("config set requirepass pw", "+OK\r\n");
    assert_false(goblin_engine_default_user_nopass(f->eng));
    EXPECT("acl getuser default",
           "*12\r\n$5\r\nflags\r\n*1\r\n$2\r\non\r\n$9\r\npasswords\r\n"
           "*1\r\n$64\r\n30c952fab122c3f9759f02a6d95c3758b246b4fee239957b2d"
           "4fee46e26170c4\r\n$8\r\ncommands\r\n$5\r\n+@all\r\n$4\r\nkeys"
           "\r\n$2\r\n~*\r\n$8\r\nchannels\r\n$2\r\n&*\r\n$9\r\nselectors"
           "\r\n*0\r\n");
    EXPECT("auth nope", "-WRONGPASS invalid username-password pair or user "
                        "is disabled.\r\n");
    EXPECT("auth pw", "+OK\r\n");
    EXPECT("config set requirepass \"\"", "+OK\r\n");
}

static void test_a_password_keeps_new_sessions_out(void **state)
{
    struct cfix *f = *state;
    goblin_session *s2;

    EXPECT("config set requirepass pw", "+OK\r\n");
    assert_int_equal(goblin_session_open(f->eng, NULL, &s2), 0);
    assert_string_equal(cmd_on(f, s2, "get k"),
                        "-NOAUTH Authentication required.\r\n");
    assert_string_equal(cmd_on(f, s2, "acl whoami"),
                        "-NOAUTH Authentication required.\r\n");
    assert_string_equal(cmd_on(f, s2, "auth default pw"), "+OK\r\n");
    assert_string_equal(cmd_on(f, s2, "get k"), "$-1\r\n");
    goblin_session_close(s2);
}

static void login(struct cfix *f, goblin_session **s, const char *auth)
{
    assert_int_equal(goblin_session_open(f->eng, NULL, s), 0);
    assert_string_equal(cmd_on(f, *s, auth), "+OK\r\n");
}

#define NOPERM_CMD(c) \
    "-NOPERM this user has no permissions to run the '" c "' command\r\n"
#define NOPERM_KEY \
    "-NOPERM this user has no permissions to access one of the keys " \
    "used as arguments\r\n"

static void test_categories_and_commands(void **state)
{
    struct cfix *f = *state;
    goblin_session *a;

    EXPECT("acl setuser alice on >pw ~* +@read -@dangerous +set "
           "+client|setname", "+OK\r\n");
    EXPECT("acl list", "*2\r\n$142\r\nuser alice on #30c952fab122c3f9759f02a6"
           "d95c3758b246b4fee239957b2d4fee46e26170c4 ~* resetchannels "
           "-@all +@read -@dangerous +set +client|setname\r\n"
           "$34\r\nuser default on nopass ~* &* +@all\r\n");
    login(f, &a, "auth alice pw");
    assert_string_equal(cmd_on(f, a, "get k"), "$-1\r\n");
    assert_string_equal(cmd_on(f, a, "set k v"), "+OK\r\n");
    assert_string_equal(cmd_on(f, a, "del k"), NOPERM_CMD("del"));
    assert_string_equal(cmd_on(f, a, "keys *"), NOPERM_CMD("keys"));
    assert_string_equal(cmd_on(f, a, "config get hz"),
                        NOPERM_CMD("config|get"));
    assert_string_equal(cmd_on(f, a, "client setname app"), "+OK\r\n");
    assert_string_equal(cmd_on(f, a, "client id"), NOPERM_CMD("client|id"));
    assert_string_equal(cmd_on(f, a, "acl whoami"),
                        NOPERM_CMD("acl|whoami"));
    assert_string_equal(cmd_on(f, a, "ping"), NOPERM_CMD("ping"));
    /* AUTH and HELLO need no permission. */
    assert_string_equal(cmd_on(f, a, "auth alice wrong"),
                        "-WRONGPASS invalid username-password pair or user "
                        "is disabled.\r\n");
    EXPECT("acl setuser alice -set +@all -@admin", "+OK\r\n");
    assert_string_equal(cmd_on(f, a, "del k"), ":1\r\n");
    assert_string_equal(cmd_on(f, a, "acl list"), NOPERM_CMD("acl|list"));
    EXPECT("acl setuser alice nocommands +config", "+OK\r\n");
    assert_string_equal(cmd_on(f, a, "config get hz"),
                        "*2\r\n$2\r\nhz\r\n$2\r\n10\r\n");
    assert_string_equal(cmd_on(f, a, "get k"), NOPERM_CMD("get"));
    EXPECT("acl setuser alice -config|get", "+OK\r\n");
    assert_string_equal(cmd_on(f, a, "config get hz"),
                        NOPERM_CMD("config|get"));
    EXPECT("acl setuser alice allcommands", "+OK\r\n");
    assert_string_equal(cmd_on(f, a, "config get hz"),
                        "*2\r\n$2\r\nhz\r\n$2\r\n10\r\n");
    goblin_session_close(a);
}

static void test_key_patterns_for_reading_and_writing(void **state)
{
    struct cfix *f = *state;
    goblin_session *a;

    EXPECT("set r1 x", "+OK\r\n");
    EXPECT("acl setuser e on nopass %R~r* %W~w* ~a* +@all", "+OK\r\n");
    login(f, &a, "auth e any");
    assert_string_equal(cmd_on(f, a, "get r1"), "$1\r\nx\r\n");
    assert_string_equal(cmd_on(f, a, "set r1 y"), NOPERM_KEY);
    assert_string_equal(cmd_on(f, a, "set w1 y"), "+OK\r\n");
    assert_string_equal(cmd_on(f, a, "get w1"), NOPERM_KEY);
    assert_string_equal(cmd_on(f, a, "exists w1"), ":1\r\n");
    assert_string_equal(cmd_on(f, a, "set a1 1"), "+OK\r\n");
    assert_string_equal(cmd_on(f, a, "mset a1 1 a2 2"), "+OK\r\n");
    assert_string_equal(cmd_on(f, a, "mset a1 1 z 2"), NOPERM_KEY);
    assert_string_equal(cmd_on(f, a, "get z"), NOPERM_KEY);
    assert_string_equal(cmd_on(f, a, "zunionstore a3 2 a1 z"), NOPERM_KEY);
    assert_string_equal(cmd_on(f, a, "zunionstore a3 2 a1 r1"),
                        "-WRONGTYPE Operation against a key holding the "
                        "wrong kind of value\r\n");
    /* A command without keys needs no pattern. */
    assert_string_equal(cmd_on(f, a, "dbsize"), ":4\r\n");
    EXPECT("acl setuser e resetkeys", "+OK\r\n");
    assert_string_equal(cmd_on(f, a, "get a1"), NOPERM_KEY);
    EXPECT("acl setuser e allkeys", "+OK\r\n");
    assert_string_equal(cmd_on(f, a, "get z"), "$-1\r\n");
    EXPECT("acl getuser nobody", "$-1\r\n");
    goblin_session_close(a);
}

/* Every key a call names is checked, however many: the 100th of DEL,
 * the 90th source of ZUNIONSTORE. A "parent|sub" name stays a rule word,
 * never a command. */
static void test_every_key_is_checked(void **state)
{
    struct cfix *f = *state;
    goblin_session *a;
    char del[2048], zu[2048];
    size_t n, m;
    int i;

    EXPECT("acl setuser k on nopass ~a* +@all", "+OK\r\n");
    login(f, &a, "auth k any");
    n = (size_t)snprintf(del, sizeof(del), "del");
    m = (size_t)snprintf(zu, sizeof(zu), "zunionstore a0 90");
    for (i = 0; i < 99; i++)
        n += (size_t)snprintf(del + n, sizeof(del) - n, " a%d", i);
    for (i = 0; i < 89; i++)
        m += (size_t)snprintf(zu + m, sizeof(zu) - m, " a%d", i);
    assert_string_equal(cmd_on(f, a, del), ":0\r\n");
    snprintf(del + n, sizeof(del) - n, " b");
    assert_string_equal(cmd_on(f, a, del), NOPERM_KEY);
    snprintf(zu + m, sizeof(zu) - m, " a89");
    assert_string_equal(cmd_on(f, a, zu), ":0\r\n");
    snprintf(zu + m, sizeof(zu) - m, " b");
    assert_string_equal(cmd_on(f, a, zu), NOPERM_KEY);
    assert_string_equal(cmd_on(f, a, "config|get maxmemory"),
                        "-ERR unknown command 'config|get', with args "
                        "beginning with: 'maxmemory' \r\n");
    goblin_session_close(a);
}

static void test_passwords_on_and_off(void **state)
{
    struct cfix *f = *state;
    goblin_session *a;

    EXPECT("acl setuser bob on >one >two +@all ~*", "+OK\r\n");
    login(f, &a, "auth bob one");
    assert_string_equal(cmd_on(f, a, "auth bob two"), "+OK\r\n");
    EXPECT("acl setuser bob <one", "+OK\r\n");
    assert_string_equal(cmd_on(f, a, "auth bob one"),
                        "-WRONGPASS invalid username-password pair or user "
                        "is disabled.\r\n");
    EXPECT("acl setuser bob <one", "-ERR Error in ACL SETUSER modifier "
           "'<one': The password you are trying to remove from the user "
           "does not exist\r\n");
    /* #hash adds the hash of "pw"; !hash removes it. */
    EXPECT("acl setuser bob #30c952fab122c3f9759f02a6d95c3758b246b4fee2399"
           "57b2d4fee46e26170c4", "+OK\r\n");
    assert_string_equal(cmd_on(f, a, "auth bob pw"), "+OK\r\n");
    EXPECT("acl setuser bob !30c952fab122c3f9759f02a6d95c3758b246b4fee2399"
           "57b2d4fee46e26170c4", "+OK\r\n");
    assert_string_equal(cmd_on(f, a, "auth bob pw"),
                        "-WRONGPASS invalid username-password pair or user "
                        "is disabled.\r\n");
    EXPECT("acl setuser bob #ABC", "-ERR Error in ACL SETUSER modifier "
           "'#ABC': The password hash must be exactly 64 characters and "
           "contain only lowercase hexadecimal characters\r\n");
    EXPECT("acl setuser bob off", "+OK\r\n");
    assert_string_equal(cmd_on(f, a, "auth bob two"),
                        "-WRONGPASS invalid username-password pair or user "
                        "is disabled.\r\n");
    EXPECT("acl setuser bob on nopass", "+OK\r\n");
    assert_string_equal(cmd_on(f, a, "auth bob whatever"), "+OK\r\n");
    EXPECT("acl setuser bob resetpass", "+OK\r\n");
    assert_string_equal(cmd_on(f, a, "auth bob whatever"),
                        "-WRONGPASS invalid username-password pair or user "
                        "is disabled.\r\n");
    EXPECT("auth nobody x", "-WRONGPASS invalid username-password pair or "
                            "user is disabled.\r\n");
    goblin_session_close(a);
}

static void test_setuser_is_all_or_nothing(void **state)
{
    struct cfix *f = *state;

    EXPECT("acl setuser c on >pw +get", "+OK\r\n");
    EXPECT("acl setuser c off +set badrule", "-ERR Error in ACL SETUSER "
           "modifier 'badrule': Syntax error\r\n");
    EXPECT("acl setuser c +nosuch", "-ERR Error in ACL SETUSER modifier "
           "'+nosuch': Unknown command or category name in ACL\r\n");
    EXPECT("acl setuser c +@nosuch", "-ERR Error in ACL SETUSER modifier "
           "'+@nosuch': Unknown command or category name in ACL\r\n");
    EXPECT("acl setuser c +get|x", "-ERR Error in ACL SETUSER modifier "
           "'+get|x': Unknown command or category name in ACL\r\n");
    EXPECT("acl setuser d badrule", "-ERR Error in ACL SETUSER modifier "
           "'badrule': Syntax error\r\n");
    EXPECT("acl users", "*2\r\n$1\r\nc\r\n$7\r\ndefault\r\n");
    EXPECT("acl list", "*2\r\n$100\r\nuser c on #30c952fab122c3f9759f02a6d9"
           "5c3758b246b4fee239957b2d4fee46e26170c4 resetchannels -@all +get"
           "\r\n$34\r\nuser default on nopass ~* &* +@all\r\n");
    assert_string_equal(FEED("*3\r\n$3\r\nacl\r\n$7\r\nsetuser\r\n"
                             "$3\r\na b\r\n"),
                        "-ERR Usernames can't contain spaces or null "
                        "characters\r\n");
    EXPECT("acl setuser c reset", "+OK\r\n");
    EXPECT("acl list", "*2\r\n$47\r\nuser c off sanitize-payload "
           "resetchannels -@all\r\n"
           "$34\r\nuser default on nopass ~* &* +@all\r\n");
}

/* As redis-server 7.0.15 answers: a pattern after allkeys / allchannels is
 * refused (a repeated ~* or &* is not), a new or reset user's channels
 * follow acl-pubsub-default, and the payload flags show as Redis's. */
static void test_all_patterns_and_the_pubsub_default(void **state)
{
    struct cfix *f = *state;

    EXPECT("acl setuser k1 allkeys ~foo", "-ERR Error in ACL SETUSER "
           "modifier '~foo': Adding a pattern after the * pattern (or the "
           "'allkeys' flag) is not valid and does not have any effect. Try "
           "'resetkeys' to start with an empty list of patterns\r\n");
    EXPECT("acl setuser k2 ~* %R~bar", "-ERR Error in ACL SETUSER modifier "
           "'%R~bar': Adding a pattern after the * pattern (or the "
           "'allkeys' flag) is not valid and does not have any effect. Try "
           "'resetkeys' to start with an empty list of patterns\r\n");
    EXPECT("acl setuser k4 allchannels &x", "-ERR Error in ACL SETUSER "
           "modifier '&x': Adding a pattern after the * pattern (or the "
           "'allchannels' flag) is not valid and does not have any effect. "
           "Try 'resetchannels' to start with an empty list of "
           "channels\r\n");
    EXPECT("acl setuser k3 %R~* ~foo", "+OK\r\n");
    EXPECT("acl setuser k5 &* &* ~* ~* allkeys", "+OK\r\n");
    EXPECT("acl setuser k6 resetkeys ~* resetkeys ~foo", "+OK\r\n");
    EXPECT("config set acl-pubsub-default allchannels", "+OK\r\n");
    EXPECT("acl setuser n1", "+OK\r\n");
    EXPECT("acl setuser k6 reset", "+OK\r\n");
    assert_non_null(strstr(CMD("acl getuser n1"), "$8\r\nchannels\r\n$2\r\n&*\r\n"));
    assert_non_null(strstr(CMD("acl getuser k6"), "$8\r\nchannels\r\n$2\r\n&*\r\n"));
    EXPECT("acl setuser n1 &x", "-ERR Error in ACL SETUSER modifier '&x': "
           "Adding a pattern after the * pattern (or the 'allchannels' "
           "flag) is not valid and does not have any effect. Try "
           "'resetchannels' to start with an empty list of channels\r\n");
    EXPECT("config set acl-pubsub-default resetchannels", "+OK\r\n");
    EXPECT("acl setuser n2", "+OK\r\n");
    /* reset sets sanitize-payload; the two payload flags replace each
     * other, whatever their case. */
    EXPECT("acl setuser n3 SKIP-sanitize-payload nopass", "+OK\r\n");
    EXPECT("acl setuser n4 skip-sanitize-payload Sanitize-Payload",
           "+OK\r\n");
    EXPECT("acl setuser n5 sanitize-payload skip-sanitize-payload",
           "+OK\r\n");
    assert_non_null(strstr(CMD("acl list"),
                           "user k6 off sanitize-payload &* -@all\r\n"));
    assert_non_null(strstr(CMD("acl list"), "user n3 off nopass "
                           "skip-sanitize-payload resetchannels -@all\r\n"));
    assert_non_null(strstr(CMD("acl list"), "user n4 off sanitize-payload "
                           "resetchannels -@all\r\n"));
    assert_non_null(strstr(CMD("acl getuser n5"), "*2\r\n$3\r\noff\r\n"
                           "$21\r\nskip-sanitize-payload\r\n"));
    assert_non_null(strstr(CMD("acl getuser n2"), "$8\r\nchannels\r\n$0\r\n\r\n"));
}

static void test_setuser_survives_every_failed_allocation(void **state)
{
    struct cfix *f = *state;
    char line[256];
    long n;

    EXPECT("acl setuser c on >pw ~a* +get", "+OK\r\n");
    for (n = 0;; n++) {
        const char *r;

        f->base->counts.fail_after = n;
        r = CMD("acl setuser c >two %R~b* +@read -get allchannels");
        f->base->counts.fail_after = -1;
        if (strcmp(r, "+OK\r\n") == 0)
            break;
        snprintf(line, sizeof(line), "%s", r);
        assert_true(strncmp(line, "-OOM", 4) == 0 || line[0] == '\0');
        EXPECT("acl getuser c", "*12\r\n$5\r\nflags\r\n*1\r\n$2\r\non\r\n"
               "$9\r\npasswords\r\n*1\r\n$64\r\n30c952fab122c3f9759f02a6d95c"
               "3758b246b4fee239957b2d4fee46e26170c4\r\n$8\r\ncommands\r\n"
               "$10\r\n-@all +get\r\n$4\r\nkeys\r\n$3\r\n~a*\r\n$8\r\n"
               "channels\r\n$0\r\n\r\n$9\r\nselectors\r\n*0\r\n");
    }
    assert_true(n > 3);
}

static void test_deluser_closes_its_sessions(void **state)
{
    struct cfix *f = *state;
    goblin_session *a;

    EXPECT("acl setuser gone on nopass +@all ~*", "+OK\r\n");
    login(f, &a, "auth gone x");
    assert_string_equal(cmd_on(f, a, "acl whoami"), "$4\r\ngone\r\n");
    EXPECT("acl deluser gone nobody", ":1\r\n");
    assert_true(goblin_session_should_close(a));
    goblin_session_close(a);
    EXPECT("acl deluser default", "-ERR The 'default' user cannot be "
                                  "removed\r\n");
    EXPECT("acl deluser gone", ":0\r\n");
}

static void test_client_list_and_kill_name_the_user(void **state)
{
    struct cfix *f = *state;
    goblin_session *a;

    EXPECT("acl setuser u on nopass +@all", "+OK\r\n");
    login(f, &a, "auth u x");
    assert_non_null(strstr(cmd_on(f, a, "client list"), " user=u "));
    assert_non_null(strstr(CMD("client list"), " user=default "));
    EXPECT("client kill user nobody", "-ERR No such user 'nobody'\r\n");
    EXPECT("client kill user u", ":1\r\n");
    assert_true(goblin_session_should_close(a));
    goblin_session_close(a);
}

static void test_refusals_abort_multi(void **state)
{
    struct cfix *f = *state;
    goblin_session *a;

    EXPECT("acl setuser m on nopass +@all -flushall ~*", "+OK\r\n");
    login(f, &a, "auth m x");
    assert_string_equal(cmd_on(f, a, "multi"), "+OK\r\n");
    assert_string_equal(cmd_on(f, a, "set k v"), "+QUEUED\r\n");
    assert_string_equal(cmd_on(f, a, "flushall"), NOPERM_CMD("flushall"));
    assert_string_equal(cmd_on(f, a, "exec"), "-EXECABORT Transaction "
                        "discarded because of previous errors.\r\n");
    EXPECT("exists k", ":0\r\n");
    goblin_session_close(a);
}

static void test_exec_checks_again(void **state)
{
    struct cfix *f = *state;
    goblin_session *a;

    EXPECT("acl setuser m on nopass +@all ~*", "+OK\r\n");
    login(f, &a, "auth m x");
    assert_string_equal(cmd_on(f, a, "multi"), "+OK\r\n");
    assert_string_equal(cmd_on(f, a, "set k v"), "+QUEUED\r\n");
    assert_string_equal(cmd_on(f, a, "get j"), "+QUEUED\r\n");
    assert_string_equal(cmd_on(f, a, "get k"), "+QUEUED\r\n");
    EXPECT("acl setuser m -set resetkeys ~k", "+OK\r\n");
    assert_string_equal(cmd_on(f, a, "exec"),
                        "*3\r\n-NOPERM ACLs rules changed between the "
                        "moment the transaction was accumulated and the "
                        "EXEC call. This command is no longer allowed for "
                        "the following reason: no permission to execute the "
                        "command or subcommand\r\n"
                        "-NOPERM ACLs rules changed between the moment the "
                        "transaction was accumulated and the EXEC call. This "
                        "command is no longer allowed for the following "
                        "reason: no permission to touch the specified keys"
                        "\r\n$-1\r\n");
    goblin_session_close(a);
}

static void test_dryrun_and_cat(void **state)
{
    struct cfix *f = *state;

    EXPECT("acl setuser al on nopass ~c* %R~ro* +@read +set", "+OK\r\n");
    EXPECT("acl dryrun al get c1", "+OK\r\n");
    EXPECT("acl dryrun al set ro1 v", "$52\r\nThis user has no permissions "
           "to access the 'ro1' key\r\n");
    EXPECT("acl dryrun al flushall", "$58\r\nThis user has no permissions "
           "to run the 'flushall' command\r\n");
    EXPECT("acl dryrun al config get x", "$60\r\nThis user has no "
           "permissions to run the 'config|get' command\r\n");
    EXPECT("acl dryrun nobody get x", "-ERR User 'nobody' not found\r\n");
    EXPECT("acl dryrun al nocmd x", "-ERR Command 'nocmd' not found\r\n");
    EXPECT("acl dryrun al get", "-ERR wrong number of arguments for 'get' "
                                "command\r\n");
    EXPECT("acl cat nosuch", "-ERR Unknown category 'nosuch'\r\n");
    assert_non_null(strstr(CMD("acl cat"), "$8\r\nkeyspace\r\n$4\r\nread"));
    assert_non_null(strstr(CMD("acl cat dangerous"), "$8\r\nflushall\r\n"));
    EXPECT("acl load", "-ERR This Redis instance is not configured to use "
           "an ACL file. You may want to specify users via the ACL SETUSER "
           "command and then issue a CONFIG REWRITE (assuming you have a "
           "Redis configuration file set) in order to store users in the "
           "Redis configuration.\r\n");
}

/* ---- the ACL file ---- */

static char *write_file(const char *text)
{
    static char path[64];
    int fd;

    snprintf(path, sizeof(path), "/tmp/goblin-acl-XXXXXX");
    fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

static void test_acl_file_load_and_save(void **state)
{
    struct cfix *f = *state;
    char err[512], *path, copy[64];
    struct stat sb;
    goblin_session *a;

    path = write_file("user default on nopass ~* &* +@all\n"
                      "\n# a comment\nuser bob on >x ~k* +get\n");
    snprintf(copy, sizeof(copy), "%s", path);
    assert_int_equal(goblin_engine_acl_file(f->eng, copy, err, sizeof(err)),
                     0);
    EXPECT("acl users", "*2\r\n$3\r\nbob\r\n$7\r\ndefault\r\n");
    login(f, &a, "auth bob x");
    EXPECT("acl setuser carol on nopass", "+OK\r\n");
    EXPECT("acl save", "+OK\r\n");
    assert_int_equal(stat(copy, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);
    EXPECT("acl deluser carol", ":1\r\n");
    EXPECT("acl load", "+OK\r\n");
    EXPECT("acl users", "*3\r\n$3\r\nbob\r\n$5\r\ncarol\r\n$7\r\ndefault"
                        "\r\n");
    /* bob's old user object is gone: its session is closed. */
    assert_true(goblin_session_should_close(a));
    goblin_session_close(a);
    /* A bad line changes nothing. */
    path = write_file("user bob on >x\nuser eve on badrule\n");
    assert_int_equal(goblin_engine_acl_file(f->eng, path, err, sizeof(err)),
                     GOBLIN_EINVAL);
    assert_non_null(strstr(err, ":2: Syntax error. WARNING: ACL errors "
                                "detected, no change to the previously "
                                "active ACL rules was performed"));
    unlink(path);
    path = write_file("nouser bob\n");
    assert_int_equal(goblin_engine_acl_file(f->eng, path, err, sizeof(err)),
                     GOBLIN_EINVAL);
    assert_non_null(strstr(err, ":1 should start with user keyword "
                                "followed by the username."));
    unlink(path);
    EXPECT("acl users", "*3\r\n$3\r\nbob\r\n$5\r\ncarol\r\n$7\r\ndefault"
                        "\r\n");
    /* Without a default line the file gets the initial default user. */
    path = write_file("user solo on nopass\n");
    assert_int_equal(goblin_engine_acl_file(f->eng, path, err, sizeof(err)),
                     0);
    unlink(path);
    EXPECT("acl list", "*2\r\n$34\r\nuser default on nopass ~* &* +@all"
           "\r\n$39\r\nuser solo on nopass resetchannels -@all\r\n");
    unlink(copy);
    snprintf(err, sizeof(err), "%s", "");
    assert_int_equal(goblin_engine_acl_file(f->eng, "/nonexistent/acl",
                                            err, sizeof(err)),
                     GOBLIN_EINVAL);
    assert_string_equal(err, "ERR Error loading ACLs, opening file "
                             "'/nonexistent/acl': No such file or "
                             "directory");
}

/* ---- SBE ---- */

static const char *sbe_feed(struct cfix *f, goblin_session *s,
                            const void *p, size_t n)
{
    f->rc = goblin_session_feed(s, p, n);
    return take_output(f, s);
}

/* True when the SBE output holds an ErrorReply with text in it. */
static bool sbe_has(struct cfix *f, const char *text)
{
    return memmem(f->out, f->outlen, text, strlen(text)) != NULL;
}

static void test_sbe_requests_follow_the_same_rules(void **state)
{
    struct cfix *f = *state;
    goblin_session *a;
    uint8_t buf[512];
    struct goblin_sbe_writer w;

    EXPECT("acl setuser s on >pw ~k* +@read +set", "+OK\r\n");
    EXPECT("acl setuser t on >pw ~* +@read", "+OK\r\n");
    assert_int_equal(goblin_session_open(f->eng, NULL, &a), 0);
    sbe_feed(f, a, GOBLIN_SBE_MAGIC, 8);
    goblin_sbe_writer_init(&w, buf, sizeof(buf), true);
    goblin_sbe_auth_encode(&w, S("s"), S("pw"));
    sbe_feed(f, a, w.buf, w.pos);
    assert_true(sbe_has(f, "OK"));
    /* Typed requests: the command must be allowed ... */
    w.pos = 0;
    goblin_sbe_del_begin(&w);
    goblin_sbe_del_keys_begin(&w);
    goblin_sbe_del_keys_add(&w, S("k1"));
    assert_true(goblin_sbe_del_end(&w) > 0);
    sbe_feed(f, a, w.buf, w.pos);
    assert_true(sbe_has(f, "this user has no permissions to run the 'del' "
                           "command"));
    /* ... and a user limited to key patterns sends keys as Argv. */
    w.pos = 0;
    goblin_sbe_get_encode(&w, S("k1"));
    sbe_feed(f, a, w.buf, w.pos);
    assert_true(sbe_has(f, "this user has no permissions to access one of "
                           "the keys used as arguments"));
    w.pos = 0;
    goblin_sbe_argv_begin(&w);
    goblin_sbe_argv_args_begin(&w);
    goblin_sbe_argv_args_add(&w, S("SET"));
    goblin_sbe_argv_args_add(&w, S("k1"));
    goblin_sbe_argv_args_add(&w, S("v"));
    assert_true(goblin_sbe_argv_end(&w) > 0);
    goblin_sbe_argv_begin(&w);
    goblin_sbe_argv_args_begin(&w);
    goblin_sbe_argv_args_add(&w, S("SET"));
    goblin_sbe_argv_args_add(&w, S("z"));
    goblin_sbe_argv_args_add(&w, S("v"));
    assert_true(goblin_sbe_argv_end(&w) > 0);
    sbe_feed(f, a, w.buf, w.pos);
    assert_true(sbe_has(f, "OK"));
    assert_true(sbe_has(f, "this user has no permissions to access one of "
                           "the keys used as arguments"));
    EXPECT("get k1", "$1\r\nv\r\n");
    EXPECT("exists z", ":0\r\n");
    /* A user with every key may use typed requests with keys. */
    w.pos = 0;
    goblin_sbe_auth_encode(&w, S("t"), S("pw"));
    goblin_sbe_get_encode(&w, S("k1"));
    sbe_feed(f, a, w.buf, w.pos);
    assert_false(sbe_has(f, "NOPERM"));
    assert_true(sbe_has(f, "v"));
    goblin_session_close(a);
}

static void test_sbe_needs_auth_when_default_has_a_password(void **state)
{
    struct cfix *f = *state;
    goblin_session *a;
    uint8_t buf[256];
    struct goblin_sbe_writer w;

    EXPECT("acl setuser default resetpass >pw", "+OK\r\n");
    assert_int_equal(goblin_session_open(f->eng, NULL, &a), 0);
    sbe_feed(f, a, GOBLIN_SBE_MAGIC, 8);
    goblin_sbe_writer_init(&w, buf, sizeof(buf), true);
    goblin_sbe_get_encode(&w, S("k"));
    sbe_feed(f, a, w.buf, w.pos);
    assert_true(sbe_has(f, "Authentication required."));
    goblin_session_close(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sha256_matches_the_fips_vectors),
        cmocka_unit_test(test_same_bytes_compares_every_byte),
        CMD_TEST(test_default_user_is_open_until_a_password),
        CMD_TEST(test_a_password_keeps_new_sessions_out),
        CMD_TEST(test_categories_and_commands),
        CMD_TEST(test_key_patterns_for_reading_and_writing),
        CMD_TEST(test_every_key_is_checked),
        CMD_TEST(test_passwords_on_and_off),
        CMD_TEST(test_setuser_is_all_or_nothing),
        CMD_TEST(test_all_patterns_and_the_pubsub_default),
        CMD_TEST(test_setuser_survives_every_failed_allocation),
        CMD_TEST(test_deluser_closes_its_sessions),
        CMD_TEST(test_client_list_and_kill_name_the_user),
        CMD_TEST(test_refusals_abort_multi),
        CMD_TEST(test_exec_checks_again),
        CMD_TEST(test_dryrun_and_cat),
        CMD_TEST(test_acl_file_load_and_save),
        CMD_TEST(test_sbe_requests_follow_the_same_rules),
        CMD_TEST(test_sbe_needs_auth_when_default_has_a_password),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
