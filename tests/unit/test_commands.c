/* test_commands.c - the command layer through a session, in process:
 * RESP bytes in, exact reply bytes out. Generic and connection commands,
 * dispatch checks and their texts. */
#include "test_commands_util.h"

static void test_ping_echo(void **state)
{
    struct cfix *f = *state;

    EXPECT("PING", "+PONG\r\n");
    EXPECT("ping hello", "$5\r\nhello\r\n");
    EXPECT("ECHO abc", "$3\r\nabc\r\n");
    assert_string_equal(FEED("PING\r\n"), "+PONG\r\n");
}

static void test_unknown_command_text(void **state)
{
    struct cfix *f = *state;

    EXPECT("foo a b",
           "-ERR unknown command 'foo', with args beginning with: 'a' 'b' "
           "\r\n");
    EXPECT("foo", "-ERR unknown command 'foo', with args beginning with: "
                  "\r\n");
}

static void test_arity_errors(void **state)
{
    struct cfix *f = *state;

    EXPECT("GET", "-ERR wrong number of arguments for 'get' command\r\n");
    EXPECT("get a b", "-ERR wrong number of arguments for 'get' command\r\n");
    EXPECT("client", "-ERR wrong number of arguments for 'client' command\r\n");
    EXPECT("client setname",
           "-ERR wrong number of arguments for 'client|setname' command\r\n");
    EXPECT("client foo", "-ERR unknown subcommand 'foo'. Try CLIENT HELP.\r\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        CMD_TEST(test_ping_echo),
        CMD_TEST(test_unknown_command_text),
        CMD_TEST(test_arity_errors),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
