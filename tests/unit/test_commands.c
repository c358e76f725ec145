/* test_commands.c - the command layer through a session, in process:
 * RESP bytes in, exact reply bytes out. Dispatch checks, connection
 * commands, CLIENT, CONFIG, COMMAND, INFO and their texts (all checked
 * against Redis 7). */
#include "test_commands_util.h"

#include "commands/command.h"

static void test_ping_echo(void **state)
{
    struct cfix *f = *state;

    EXPECT("PING", "+PONG\r\n");
    EXPECT("ping hello", "$5\r\nhello\r\n");
    EXPECT("ping a b", "-ERR wrong number of arguments for 'ping' command\r\n");
    EXPECT("ECHO abc", "$3\r\nabc\r\n");
    assert_string_equal(FEED("PING\r\n"), "+PONG\r\n");
    assert_string_equal(FEED("echo \"a b\"\r\n"), "$3\r\na b\r\n");
}

static void test_unknown_command_text(void **state)
{
    struct cfix *f = *state;

    EXPECT("foo a b",
           "-ERR unknown command 'foo', with args beginning with: 'a' 'b' "
           "\r\n");
    EXPECT("foo", "-ERR unknown command 'foo', with args beginning with: "
                  "\r\n");
    /* The SBE magic, while SBE is not built, is just an unknown command. */
    assert_string_equal(FEED("GOBLINS!\r\n"),
                        "-ERR unknown command 'GOBLINS!', with args "
                        "beginning with: \r\n");
}

static void test_unknown_command_args_capped_at_128_bytes(void **state)
{
    struct cfix *f = *state;
    char words[400], want[600];

    snprintf(words, sizeof(words), "nope %0100d %0100d %0100d", 1, 2, 3);
    snprintf(want, sizeof(want),
             "-ERR unknown command 'nope', with args beginning with: "
             "'%0100d' '%.25d' \r\n",
             1, 0);
    assert_string_equal(CMD(words), want);
}

static void test_lookup_ignores_case(void **state)
{
    struct cfix *f = *state;

    EXPECT("SeT k v", "+OK\r\n");
    EXPECT("gEt k", "$1\r\nv\r\n");
    EXPECT("CLIENT SETNAME x", "+OK\r\n");
    EXPECT("client GETNAME", "$1\r\nx\r\n");
    EXPECT("zremrangebyscoreX k 1 2",
           "-ERR unknown command 'zremrangebyscoreX', with args beginning "
           "with: 'k' '1' '2' \r\n");
}

/* The session remembers the last name it found, by its bytes: the same
 * name again, a name of the same length, another case of it, a long
 * name and a rename-command after the hint was taken each find what the
 * table says. */
static void test_lookup_hint_follows_each_name(void **state)
{
    struct cfix *f = *state;
    const char *why = "";

    EXPECT("set k 1", "+OK\r\n");
    EXPECT("get k", "$1\r\n1\r\n");
    EXPECT("get k", "$1\r\n1\r\n");
    EXPECT("ttl k", ":-1\r\n");
    EXPECT("GET k", "$1\r\n1\r\n");
    EXPECT("gex k", "-ERR unknown command 'gex', with args beginning with: "
                    "'k' \r\n");
    EXPECT("incr k", ":2\r\n");
    EXPECT("decr k", ":1\r\n");
    EXPECT("exists k", ":1\r\n");
    EXPECT("strlen k", ":1\r\n");
    EXPECT("hgetall h", "*0\r\n");
    EXPECT("hrandfield h", "$-1\r\n");
    EXPECT("zremrangebyscore z 1 2", ":0\r\n");
    EXPECT("zremrangebyscore z 1 2", ":0\r\n");
    EXPECT("zremrangebyrank z 1 2", ":0\r\n");
    EXPECT("get k", "$1\r\n1\r\n");
    assert_int_equal(goblin__command_rename(f->eng,
                                            (struct goblin_slice){"get", 3},
                                            (struct goblin_slice){"gx", 2},
                                            &why),
                     0);
    EXPECT("get k", "-ERR unknown command 'get', with args beginning with: "
                    "'k' \r\n");
    EXPECT("gx k", "$1\r\n1\r\n");
    EXPECT("GX k", "$1\r\n1\r\n");
}

static void test_arity_errors(void **state)
{
    struct cfix *f = *state;

    EXPECT("GET", "-ERR wrong number of arguments for 'get' command\r\n");
    EXPECT("get a b", "-ERR wrong number of arguments for 'get' command\r\n");
    EXPECT("set a", "-ERR wrong number of arguments for 'set' command\r\n");
    EXPECT("zadd z 1",
           "-ERR wrong number of arguments for 'zadd' command\r\n");
    EXPECT("client",
           "-ERR wrong number of arguments for 'client' command\r\n");
    EXPECT("client setname",
           "-ERR wrong number of arguments for 'client|setname' command\r\n");
    EXPECT("client setname a b",
           "-ERR wrong number of arguments for 'client|setname' command\r\n");
    EXPECT("config get",
           "-ERR wrong number of arguments for 'config|get' command\r\n");
    EXPECT("client foo",
           "-ERR unknown subcommand 'foo'. Try CLIENT HELP.\r\n");
    EXPECT("client FOO",
           "-ERR unknown subcommand 'FOO'. Try CLIENT HELP.\r\n");
    EXPECT("object foo",
           "-ERR unknown subcommand 'foo'. Try OBJECT HELP.\r\n");
}

static void test_select(void **state)
{
    struct cfix *f = *state;

    EXPECT("select 0", "+OK\r\n");
    EXPECT("select 1", "+OK\r\n");
    EXPECT("select 16", "-ERR DB index is out of range\r\n");
    EXPECT("select x", "-ERR value is not an integer or out of range\r\n");
    EXPECT("select 99999999999",
           "-ERR value is out of range, value must between -2147483648 and "
           "2147483647\r\n");
}

static void test_auth_without_password(void **state)
{
    struct cfix *f = *state;

    EXPECT("auth x",
           "-ERR AUTH <password> called without any password configured "
           "for the default user. Are you sure your configuration is "
           "correct?\r\n");
    EXPECT("auth x y", "-WRONGPASS invalid username-password pair or user "
                       "is disabled.\r\n");
    EXPECT("auth default anything", "+OK\r\n");
    EXPECT("auth a b c", "-ERR syntax error\r\n");
}

static void test_hello_errors(void **state)
{
    struct cfix *f = *state;

    EXPECT("hello 4", "-NOPROTO unsupported protocol version\r\n");
    EXPECT("hello 1", "-NOPROTO unsupported protocol version\r\n");
    EXPECT("hello x",
           "-ERR Protocol version is not an integer or out of range\r\n");
    EXPECT("hello 3 auth a", "-ERR Syntax error in HELLO option 'auth'\r\n");
    EXPECT("hello 3 setname",
           "-ERR Syntax error in HELLO option 'setname'\r\n");
    EXPECT("hello 3 foo", "-ERR Syntax error in HELLO option 'foo'\r\n");
    EXPECT("hello 3 auth default wrong setname a b",
           "-ERR Syntax error in HELLO option 'b'\r\n");
    /* Nothing changed: still RESP2. */
    EXPECT("get nope", "$-1\r\n");
}

static void test_hello_replies_map(void **state)
{
    struct cfix *f = *state;

    EXPECT("hello",
           "*14\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n"
           "$6\r\n7.0.15\r\n$5\r\nproto\r\n:2\r\n$2\r\nid\r\n:1\r\n"
           "$4\r\nmode\r\n$10\r\nstandalone\r\n$4\r\nrole\r\n"
           "$6\r\nmaster\r\n$7\r\nmodules\r\n*0\r\n");
    EXPECT("hello 3 setname app",
           "%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n"
           "$6\r\n7.0.15\r\n$5\r\nproto\r\n:3\r\n$2\r\nid\r\n:1\r\n"
           "$4\r\nmode\r\n$10\r\nstandalone\r\n$4\r\nrole\r\n"
           "$6\r\nmaster\r\n$7\r\nmodules\r\n*0\r\n");
    EXPECT("client getname", "$3\r\napp\r\n");
    EXPECT("get nope", "_\r\n");
    EXPECT("hello 2", "*14\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion"
                      "\r\n$6\r\n7.0.15\r\n$5\r\nproto\r\n:2\r\n$2\r\nid\r\n"
                      ":1\r\n$4\r\nmode\r\n$10\r\nstandalone\r\n$4\r\nrole"
                      "\r\n$6\r\nmaster\r\n$7\r\nmodules\r\n*0\r\n");
    EXPECT("get nope", "$-1\r\n");
}

static void test_quit_closes_after_reply(void **state)
{
    struct cfix *f = *state;

    assert_string_equal(FEED("PING\r\nQUIT\r\nPING\r\n"),
                        "+PONG\r\n+OK\r\n");
    assert_int_equal(f->rc, GOBLIN_ECONNABORTED);
    assert_true(goblin_session_should_close(f->s));
    assert_string_equal(FEED("PING\r\n"), "");
    assert_int_equal(f->rc, GOBLIN_ECONNABORTED);
}

static void test_reset(void **state)
{
    struct cfix *f = *state;

    EXPECT("hello 3 setname n", CMD("hello 3"));
    EXPECT("multi", "+OK\r\n");
    EXPECT("reset", "+RESET\r\n");
    EXPECT("client getname", "$-1\r\n");
    EXPECT("exec", "-ERR EXEC without MULTI\r\n");
    EXPECT("get nope", "$-1\r\n");
}

static void test_protocol_error_replies_then_closes(void **state)
{
    struct cfix *f = *state;

    assert_string_equal(FEED("*1\r\n$x\r\n"),
                        "-ERR Protocol error: invalid bulk length\r\n");
    assert_int_equal(f->rc, GOBLIN_EPROTO);
    assert_true(goblin_session_should_close(f->s));
}

/* A second session on the fixture's engine. */
static goblin_session *second(struct cfix *f, const char *peer)
{
    struct goblin_session_info si = {GOBLIN_TRANSPORT_UNIX, peer,
                                     "/tmp/g.sock", 9, NULL};
    goblin_session *s;

    assert_int_equal(goblin_session_open(f->eng, &si, &s), 0);
    return s;
}

static void test_client_id_name_info(void **state)
{
    struct cfix *f = *state;
    const char *r;

    EXPECT("client id", ":1\r\n");
    EXPECT("client getname", "$-1\r\n");
    EXPECT("client setname a\tb",
           "-ERR Client names cannot contain spaces, newlines or special "
           "characters.\r\n");
    EXPECT("client setname app-1", "+OK\r\n");
    EXPECT("client setinfo lib-name redis-py", "+OK\r\n");
    EXPECT("client setinfo LIB-VER 5.0", "+OK\r\n");
    EXPECT("client setinfo foo x", "-ERR Unrecognized option 'foo'\r\n");
    r = CMD("client info");
    assert_non_null(strstr(r, "id=1 addr=127.0.0.1:5000 laddr=127.0.0.1:6379 "
                              "fd=7 name=app-1 age=0 idle=0 flags=N db=0 "
                              "sub=0 psub=0 ssub=0 multi=-1 qbuf="));
    assert_non_null(strstr(r, " cmd=client|info user=default redir=-1 "
                              "resp=2 lib-name=redis-py lib-ver=5.0\n\r\n"));
    EXPECT("client setname", "-ERR wrong number of arguments for "
                             "'client|setname' command\r\n");
    assert_int_equal(strncmp(CMD("client help"), "*43\r\n+CLIENT <subcommand>",
                             25), 0);
}

static void test_client_list_and_kill_between_sessions(void **state)
{
    struct cfix *f = *state;
    goblin_session *b = second(f, "/tmp/g.sock:0");
    const char *r;

    EXPECT("client setname first", "+OK\r\n");
    assert_string_equal(cmd_on(f, b, "client id"), ":2\r\n");
    r = CMD("client list");
    assert_non_null(strstr(r, "id=1 addr=127.0.0.1:5000 "));
    assert_non_null(strstr(r, "\nid=2 addr=/tmp/g.sock:0 laddr=/tmp/g.sock "
                              "fd=9 name= age=0 idle=0 flags=U "));
    assert_non_null(strstr(r, "cmd=client|id"));
    r = CMD("client list id 2");
    assert_null(strstr(r, "id=1 "));
    assert_non_null(strstr(r, "id=2 "));
    EXPECT("client list type foo", "-ERR Unknown client type 'foo'\r\n");
    EXPECT("client list id x", "-ERR Invalid client ID\r\n");
    EXPECT("client list foo", "-ERR syntax error\r\n");
    EXPECT("client kill id 0", "-ERR client-id should be greater than 0\r\n");
    EXPECT("client kill type foo", "-ERR Unknown client type 'foo'\r\n");
    EXPECT("client kill user bob", "-ERR No such user 'bob'\r\n");
    EXPECT("client kill skipme maybe", "-ERR syntax error\r\n");
    EXPECT("client kill 1.2.3.4:5", "-ERR No such client\r\n");
    EXPECT("client kill id 99", ":0\r\n");
    EXPECT("client kill id 2", ":1\r\n");
    assert_true(goblin_session_should_close(b));
    assert_false(goblin_session_should_close(f->s));
    assert_string_equal(cmd_on(f, b, "ping"), "");
    assert_int_equal(f->rc, GOBLIN_ECONNABORTED);
    goblin_session_close(b);
    assert_int_equal(goblin_engine_session_count(f->eng), 1);
    /* The old form kills by address, this session included. */
    EXPECT("client kill 127.0.0.1:5000", "+OK\r\n");
    assert_true(goblin_session_should_close(f->s));
}

static void test_client_kill_skipme(void **state)
{
    struct cfix *f = *state;

    EXPECT("client kill addr 127.0.0.1:5000", ":0\r\n");
    EXPECT("client kill addr 127.0.0.1:5000 skipme no", ":1\r\n");
    assert_true(goblin_session_should_close(f->s));
}

static void test_client_reply_off_and_skip(void **state)
{
    struct cfix *f = *state;

    EXPECT("client reply foo", "-ERR syntax error\r\n");
    EXPECT("client reply skip", "");
    EXPECT("ping", "");
    EXPECT("ping", "+PONG\r\n");
    EXPECT("client reply off", "");
    EXPECT("set k v", "");
    EXPECT("client reply on", "+OK\r\n");
    EXPECT("get k", "$1\r\nv\r\n");
    EXPECT("client no-evict on", "+OK\r\n");
    EXPECT("client no-touch off", "+OK\r\n");
    EXPECT("client no-evict x", "-ERR syntax error\r\n");
}

static void test_config_get_set(void **state)
{
    struct cfix *f = *state;

    EXPECT("config get hz", "*2\r\n$2\r\nhz\r\n$2\r\n10\r\n");
    EXPECT("config get HZ", "*2\r\n$2\r\nHZ\r\n$2\r\n10\r\n");
    EXPECT("config get nothing", "*0\r\n");
    EXPECT("config get proto-max-* hz",       /* in the table's order */
           "*4\r\n$2\r\nhz\r\n$2\r\n10\r\n"
           "$18\r\nproto-max-bulk-len\r\n$9\r\n536870912\r\n");
    EXPECT("config set hz 5 maxmemory", "-ERR syntax error\r\n");
    EXPECT("config set foo bar", "-ERR Unknown option or number of arguments "
                                 "for CONFIG SET - 'foo'\r\n");
    EXPECT("config set hz x",
           "-ERR CONFIG SET failed (possibly related to argument 'hz') - "
           "argument couldn't be parsed into an integer\r\n");
    EXPECT("config set hz -1",
           "-ERR CONFIG SET failed (possibly related to argument 'hz') - "
           "argument must be between 0 and 2147483647 inclusive\r\n");
    EXPECT("config set hz 5 hz 6",
           "-ERR CONFIG SET failed (possibly related to argument 'hz') - "
           "duplicate parameter\r\n");
    EXPECT("config set databases 3",
           "-ERR CONFIG SET failed (possibly related to argument "
           "'databases') - can't set immutable config\r\n");
    EXPECT("config set proto-max-bulk-len 10",
           "-ERR CONFIG SET failed (possibly related to argument "
           "'proto-max-bulk-len') - argument must be between 1048576 and "
           "9223372036854775807 inclusive\r\n");
    /* All or nothing: hz is back to 10 after the second pair fails. */
    EXPECT("config set hz 20 proto-max-bulk-len abc",
           "-ERR CONFIG SET failed (possibly related to argument "
           "'proto-max-bulk-len') - argument must be a memory value\r\n");
    EXPECT("config get hz", "*2\r\n$2\r\nhz\r\n$2\r\n10\r\n");
    EXPECT("config set hz 1000 proto-max-bulk-len 2mb", "+OK\r\n");
    EXPECT("config get hz", "*2\r\n$2\r\nhz\r\n$3\r\n500\r\n");
    EXPECT("config get proto-max-bulk-len",
           "*2\r\n$18\r\nproto-max-bulk-len\r\n$7\r\n2097152\r\n");
    assert_string_equal(FEED("*4\r\n$6\r\nconfig\r\n$3\r\nset\r\n$26\r\n"
                             "client-output-buffer-limit\r\n$10\r\n"
                             "normal 1 2\r\n"),
           "-ERR CONFIG SET failed (possibly related to argument "
           "'client-output-buffer-limit') - Wrong number of arguments in "
           "buffer limit configuration.\r\n");
    FEED("*4\r\n$6\r\nconfig\r\n$3\r\nset\r\n$26\r\n"
         "client-output-buffer-limit\r\n$16\r\nnormal 1mb 2mb 3\r\n");
    EXPECT("config get client-output-buffer-limit",
           "*2\r\n$26\r\nclient-output-buffer-limit\r\n$79\r\nnormal "
           "1048576 2097152 3 slave 268435456 67108864 60 pubsub 33554432 "
           "8388608 60\r\n");
    EXPECT("hello 3", CMD("hello 3"));
    EXPECT("config get hz", "%1\r\n$2\r\nhz\r\n$3\r\n500\r\n");
    EXPECT("config resetstat", "+OK\r\n");
}

static int get_port(void *ctx, char *buf, size_t cap)
{
    return snprintf(buf, cap, "%d", *(int *)ctx);
}

static int set_port(void *ctx, struct goblin_slice v, const char **why)
{
    if (v.len == 0 || ((const char *)v.ptr)[0] == 'x') {
        *why = "argument couldn't be parsed into an integer";
        return GOBLIN_EINVAL;
    }
    *(int *)ctx = atoi(v.ptr);
    return 0;
}

static void test_config_server_settings(void **state)
{
    struct cfix *f = *state;
    int port = 6379;
    struct goblin_setting s = {"port", NULL, get_port, set_port, &port};

    assert_int_equal(goblin_engine_setting_add(f->eng, &s), 0);
    assert_int_equal(goblin_engine_setting_add(f->eng, &s), GOBLIN_EINVAL);
    EXPECT("config get port", "*2\r\n$4\r\nport\r\n$4\r\n6379\r\n");
    EXPECT("config set port x",
           "-ERR CONFIG SET failed (possibly related to argument 'port') - "
           "argument couldn't be parsed into an integer\r\n");
    EXPECT("config set port 7000", "+OK\r\n");
    assert_int_equal(port, 7000);
    /* "save" is the engine's own (no policy by default); "appendonly" is
     * a placeholder until a server registers its own. */
    EXPECT("config get save", "*2\r\n$4\r\nsave\r\n$0\r\n\r\n");
    EXPECT("config get appendonly",
           "*2\r\n$10\r\nappendonly\r\n$2\r\nno\r\n");
    s.name = "appendonly";
    assert_int_equal(goblin_engine_setting_add(f->eng, &s), 0);
    EXPECT("config get appendonly",
           "*2\r\n$10\r\nappendonly\r\n$4\r\n7000\r\n");
    assert_int_equal(goblin_engine_setting_add(f->eng, &s), GOBLIN_EINVAL);
}

static void test_requirepass_via_config(void **state)
{
    struct cfix *f = *state;
    goblin_session *b;

    EXPECT("config set requirepass pw", "+OK\r\n");
    /* This session stays authenticated, as in Redis; a new one is not. */
    EXPECT("ping", "+PONG\r\n");
    b = second(f, "/tmp/g.sock:0");
    assert_string_equal(cmd_on(f, b, "ping"),
                        "-NOAUTH Authentication required.\r\n");
    assert_string_equal(cmd_on(f, b, "auth pw"), "+OK\r\n");
    assert_string_equal(cmd_on(f, b, "ping"), "+PONG\r\n");
    EXPECT("config get requirepass",
           "*2\r\n$11\r\nrequirepass\r\n$2\r\npw\r\n");
    assert_string_equal(FEED("*4\r\n$6\r\nconfig\r\n$3\r\nset\r\n$11\r\n"
                             "requirepass\r\n$0\r\n\r\n"),
                        "+OK\r\n");
    goblin_session_close(b);
}

static void test_command_count_info_docs(void **state)
{
    struct cfix *f = *state;
    const char *r;

    EXPECT("command info get",
           "*1\r\n*10\r\n$3\r\nget\r\n:2\r\n*2\r\n+readonly\r\n"
           "+fast\r\n:1\r\n:1\r\n:1\r\n*3\r\n+@read\r\n+@string\r\n"
           "+@fast\r\n*0\r\n*1\r\n*6\r\n$5\r\nflags\r\n*2\r\n+RO\r\n"
           "+access\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n"
           "$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:1\r\n"
           "$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n"
           "$4\r\nspec\r\n*6\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep"
           "\r\n:1\r\n$5\r\nlimit\r\n:0\r\n*0\r\n");
    EXPECT("command info nosuch", "*1\r\n$-1\r\n");
    EXPECT("command docs get",
           "*2\r\n$3\r\nget\r\n*10\r\n$7\r\nsummary\r\n$22\r\nGet the "
           "value of a key\r\n$5\r\nsince\r\n$5\r\n1.0.0\r\n$5\r\ngroup"
           "\r\n$6\r\nstring\r\n$10\r\ncomplexity\r\n$4\r\nO(1)\r\n"
           "$9\r\narguments\r\n*1\r\n*6\r\n$4\r\nname\r\n$3\r\nkey\r\n"
           "$4\r\ntype\r\n$3\r\nkey\r\n$14\r\nkey_spec_index\r\n:0\r\n");
    EXPECT("command docs nosuch", "*0\r\n");
    EXPECT("command count x", "-ERR wrong number of arguments for "
                              "'command|count' command\r\n");
    r = CMD("command count");
    assert_int_equal(r[0], ':');
    /* The bare form lists as many entries as COUNT says. */
    {
        char want[32];

        snprintf(want, sizeof(want), "*%s", r + 1);
        want[strlen(want) - 2] = '\0';
        assert_int_equal(strncmp(CMD("command"), want, strlen(want)), 0);
    }
    EXPECT("command list filterby pattern zrangeby*",
           "*2\r\n$13\r\nzrangebyscore\r\n$11\r\nzrangebylex\r\n");
    EXPECT("command list filterby module x", "*0\r\n");
    EXPECT("command list foo", "-ERR syntax error\r\n");
    EXPECT("command foo",
           "-ERR unknown subcommand 'foo'. Try COMMAND HELP.\r\n");
}

/* Redis finds every key a call names; so does Goblin, past any fixed
 * buffer (64 once stopped GETKEYS). */
static void test_command_getkeys_has_no_key_limit(void **state)
{
    struct cfix *f = *state;
    char words[4096], want[64];
    size_t n = 0;
    const char *r;
    int i;

    n += (size_t)snprintf(words + n, sizeof(words) - n, "command getkeys del");
    for (i = 0; i < 100; i++)
        n += (size_t)snprintf(words + n, sizeof(words) - n, " k%d", i);
    r = CMD(words);
    assert_int_equal(strncmp(r, "*100\r\n$2\r\nk0\r\n", 14), 0);
    snprintf(want, sizeof(want), "$3\r\nk99\r\n");
    assert_non_null(strstr(r, want));
    n = (size_t)snprintf(words, sizeof(words),
                         "command getkeysandflags zunionstore d 90");
    for (i = 0; i < 90; i++)
        n += (size_t)snprintf(words + n, sizeof(words) - n, " z%d", i);
    assert_int_equal(strncmp(CMD(words), "*91\r\n", 5), 0);
}

/* "parent|sub" names a subcommand for COMMAND INFO / DOCS only: as a
 * command name it is unknown, as in Redis. */
static void test_fullname_is_not_a_command_name(void **state)
{
    struct cfix *f = *state;

    EXPECT("CONFIG|GET maxmemory",
           "-ERR unknown command 'CONFIG|GET', with args beginning with: "
           "'maxmemory' \r\n");
    EXPECT("client|id", "-ERR unknown command 'client|id', with args "
                        "beginning with: \r\n");
    EXPECT("command getkeys object|encoding k",
           "-ERR Invalid command specified\r\n");
    assert_int_equal(strncmp(CMD("command info config|get"),
                             "*1\r\n*10\r\n$10\r\nconfig|get\r\n", 26),
                     0);
    assert_int_equal(strncmp(CMD("command docs CONFIG|GET"),
                             "*2\r\n$10\r\nconfig|get\r\n", 21), 0);
    EXPECT("command info config|get|x", "*1\r\n$-1\r\n");
}

static void test_command_getkeys(void **state)
{
    struct cfix *f = *state;

    EXPECT("command getkeys get",
           "-ERR wrong number of arguments for 'command|getkeys' command\r\n");
    EXPECT("command getkeys ping x",
           "-ERR The command has no key arguments\r\n");
    EXPECT("command getkeys get a b",
           "-ERR Invalid number of arguments specified for command\r\n");
    EXPECT("command getkeys foo a", "-ERR Invalid command specified\r\n");
    EXPECT("command getkeys set a b", "*1\r\n$1\r\na\r\n");
    EXPECT("command getkeys mset a 1 b 2",
           "*2\r\n$1\r\na\r\n$1\r\nb\r\n");
    EXPECT("command getkeys zunionstore d 2 a b",
           "*3\r\n$1\r\nd\r\n$1\r\na\r\n$1\r\nb\r\n");
    EXPECT("command getkeys zunion 0 a",
           "-ERR Invalid arguments specified for command\r\n");
    EXPECT("command getkeysandflags zunionstore d 2 a b",
           "*3\r\n*2\r\n$1\r\nd\r\n*2\r\n+OW\r\n+update\r\n*2\r\n"
           "$1\r\na\r\n*2\r\n+RO\r\n+access\r\n*2\r\n$1\r\nb\r\n*2"
           "\r\n+RO\r\n+access\r\n");
}

/* Checks that an INFO reply is "# Section" headers and "key:value"
 * lines, CRLF-ended, sections parted by one empty line; returns how many
 * sections. */
static int info_sections(const char *r, const char *must)
{
    const char *p = strstr(r, "\r\n") + 2, *end = r + strlen(r) - 2;
    int sections = 0;
    bool blank_ok = false;

    assert_non_null(strstr(r, must));
    while (p < end) {
        const char *eol = strstr(p, "\r\n");

        assert_non_null(eol);
        if (eol == p) {
            assert_true(blank_ok);
            blank_ok = false;
        } else if (*p == '#') {
            sections++;
            blank_ok = true;
        } else {
            const char *colon = memchr(p, ':', (size_t)(eol - p));

            assert_non_null(colon);
            assert_true(colon > p);
            blank_ok = true;
        }
        p = eol + 2;
    }
    return sections;
}

static void test_info_sections_parse(void **state)
{
    struct cfix *f = *state;

    EXPECT("set k v", "+OK\r\n");
    EXPECT("get k", "$1\r\nv\r\n");
    EXPECT("foo", CMD("foo"));
    assert_int_equal(info_sections(CMD("info"), "db0:keys=1,expires=0,"
                                                "avg_ttl=0\r\n"),
                     11);
    assert_int_equal(info_sections(CMD("info keyspace"), "# Keyspace"), 1);
    EXPECT("info keyspace",
           "$44\r\n# Keyspace\r\ndb0:keys=1,expires=0,avg_ttl=0\r\n\r\n");
    EXPECT("info foo", "$0\r\n\r\n");
    assert_int_equal(info_sections(CMD("info server clients"),
                                   "redis_version:"),
                     2);
    /* The Redis version Goblin follows, and its own beside it. */
    assert_non_null(strstr(CMD("info server"), "\r\nredis_version:7.0.15\r\n"));
    assert_non_null(strstr(CMD("info server"),
                           "\r\ngoblin_version:" GOBLIN_VERSION_STRING
                           "\r\n"));
    assert_int_equal(info_sections(CMD("info all"), "cmdstat_get:calls=1,"),
                     13);
    assert_non_null(strstr(CMD("info commandstats"),
                           "cmdstat_set:calls=1,usec="));
    assert_non_null(strstr(CMD("info stats"), "total_error_replies:2\r\n"));
    assert_non_null(strstr(CMD("info errorstats"),
                           "errorstat_ERR:count=2\r\n"));
    assert_non_null(strstr(CMD("info persistence"),
                           "rdb_changes_since_last_save:1\r\n"));
    assert_non_null(strstr(CMD("info replication"), "role:master\r\n"));
    EXPECT("hello 3", CMD("hello 3"));
    assert_int_equal(strncmp(CMD("info keyspace"), "=48\r\ntxt:# Keyspace",
                             19),
                     0);
}

static void test_commandstats_count_rejected_and_failed(void **state)
{
    struct cfix *f = *state;

    EXPECT("set k v", "+OK\r\n");
    EXPECT("incr k", "-ERR value is not an integer or out of range\r\n");
    EXPECT("incr", "-ERR wrong number of arguments for 'incr' command\r\n");
    assert_non_null(strstr(CMD("info commandstats"),
                           "cmdstat_incr:calls=1,usec=0,usec_per_call=0.00,"
                           "rejected_calls=1,failed_calls=1\r\n"));
}

static void test_time_from_store_clock(void **state)
{
    struct cfix *f = *state;

    f->base->clock.now_ms = 1700000000123;
    EXPECT("time", "*2\r\n$10\r\n1700000000\r\n$6\r\n123000\r\n");
}

/* rename-command over the whole table: every top-level command renamed
 * (each removal shifts probe chains), then every other one disabled;
 * each name finds what it should, the old ones nothing, and ACL rules
 * still know the names as built. */
static void test_rename_every_command(void **state)
{
    struct cfix *f = *state;
    const char *why = "";
    char name[32];
    size_t i, n = goblin__command_count;

    for (i = 0; i < n; i++) {
        const char *old = goblin__commands[i].fullname;

        if (strchr(old, '|') != NULL)
            continue;
        snprintf(name, sizeof(name), "R%zu", i);
        assert_int_equal(goblin__command_rename(
                             f->eng, (struct goblin_slice){old, strlen(old)},
                             (struct goblin_slice){name, strlen(name)},
                             &why), 0);
    }
    for (i = 0; i < n; i++) {
        const char *old = goblin__commands[i].fullname;
        struct goblin_slice o = {old, strlen(old)};

        if (strchr(old, '|') != NULL)
            continue;
        snprintf(name, sizeof(name), "r%zu", i);
        assert_null(goblin__command_lookup(f->eng, o));
        assert_ptr_equal(goblin__command_lookup_orig(f->eng, o),
                         &goblin__commands[i]);
        assert_ptr_equal(goblin__command_lookup(
                             f->eng, (struct goblin_slice){name,
                                                           strlen(name)}),
                         &goblin__commands[i]);
        if (i % 2 == 0)
            assert_int_equal(goblin__command_rename(
                                 f->eng, (struct goblin_slice){name,
                                                               strlen(name)},
                                 (struct goblin_slice){"", 0}, &why), 0);
    }
    for (i = 0; i < n; i++) {
        if (strchr(goblin__commands[i].fullname, '|') != NULL)
            continue;
        snprintf(name, sizeof(name), "r%zu", i);
        assert_int_equal(goblin__command_lookup(
                             f->eng, (struct goblin_slice){name,
                                                           strlen(name)}) ==
                             NULL,
                         i % 2 == 0);
        assert_int_equal(goblin__command_gone(f->eng, &goblin__commands[i]),
                         i % 2 == 0);
    }
    assert_int_equal(goblin__command_rename(
                         f->eng, (struct goblin_slice){"nosuch", 6},
                         (struct goblin_slice){"x", 1}, &why),
                     GOBLIN_EINVAL);
    assert_string_equal(why, "No such command in rename-command");
    EXPECT("r0 x", "-ERR unknown command 'r0', with args beginning with: "
                   "'x' \r\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        CMD_TEST(test_ping_echo),
        CMD_TEST(test_unknown_command_text),
        CMD_TEST(test_unknown_command_args_capped_at_128_bytes),
        CMD_TEST(test_lookup_ignores_case),
        CMD_TEST(test_lookup_hint_follows_each_name),
        CMD_TEST(test_arity_errors),
        CMD_TEST(test_select),
        CMD_TEST(test_auth_without_password),
        CMD_TEST(test_hello_errors),
        CMD_TEST(test_hello_replies_map),
        CMD_TEST(test_quit_closes_after_reply),
        CMD_TEST(test_reset),
        CMD_TEST(test_protocol_error_replies_then_closes),
        CMD_TEST(test_client_id_name_info),
        CMD_TEST(test_client_list_and_kill_between_sessions),
        CMD_TEST(test_client_kill_skipme),
        CMD_TEST(test_client_reply_off_and_skip),
        CMD_TEST(test_config_get_set),
        CMD_TEST(test_config_server_settings),
        CMD_TEST(test_requirepass_via_config),
        CMD_TEST(test_command_count_info_docs),
        CMD_TEST(test_command_getkeys),
        CMD_TEST(test_command_getkeys_has_no_key_limit),
        CMD_TEST(test_fullname_is_not_a_command_name),
        CMD_TEST(test_info_sections_parse),
        CMD_TEST(test_commandstats_count_rejected_and_failed),
        CMD_TEST(test_time_from_store_clock),
        CMD_TEST(test_rename_every_command),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
