/* fuzz_commands.c - the command layer (lib/commands) with random argv
 * against a live store, checking the store's own invariants
 * (goblin__store_check) after every command.
 *
 * Input: commands one per line ('\n'), arguments split by single spaces,
 * so seeds and the dictionary stay readable ("ZADD z 1 a"); an argument
 * may be empty. Each command is sent RESP-encoded (the parser is
 * fuzz_resp's job), so every input is a sequence of well-formed commands
 * and the fuzzer spends its time on the commands themselves. */
#include <string.h>

#include "fuzz_session.h"

#define MAX_ARGS 64

static void run_line(struct fuzz_live *l, const uint8_t *p, size_t n)
{
    struct goblin_slice argv[MAX_ARGS];
    struct goblin_buf b = {0};
    size_t argc = 0, start = 0;

    for (size_t i = 0; i <= n && argc < MAX_ARGS; i++) {
        if (i == n || p[i] == ' ') {
            argv[argc].ptr = p + start;
            argv[argc].len = i - start;
            argc++;
            start = i + 1;
        }
    }
    FUZZ_CHECK(goblin_resp_command_write(&b, argc, argv) == 0);
    (void)goblin_session_feed(l->s, b.data, b.len);
    goblin_buf_free(&b);
    live_drain(l);
    FUZZ_CHECK(goblin__store_check(l->st) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_live l;
    size_t start = 0;

    live_open(&l);
    for (size_t i = 0; i <= size; i++) {
        if (i < size && data[i] != '\n')
            continue;
        if (i > start)
            run_line(&l, data + start, i - start);
        start = i + 1;
        if (goblin_session_should_close(l.s))
            break;
    }
    goblin_engine_cron(l.eng);
    live_close(&l);
    return 0;
}
