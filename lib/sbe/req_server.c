/* req_server.c - SBE requests about the connection and the server: PING,
 * ECHO, AUTH, HELLO, INFO and Argv (any command as words).
 *
 * AUTH, HELLO and INFO carry only strings, so they are turned into argv
 * and run by the command table, which owns authentication, the HELLO map
 * and the INFO text; so does Argv. PING and ECHO call the commands'
 * executions (commands/exec.h), as RESP's handlers do. */
#include "commands/exec.h"
#include "goblin/keys.h"
#include "request.h"

void goblin__sbe_ping(struct goblin__sbe_req *r)
{
    struct goblin_sbe_ping v;

    if (GOBLIN__SBE_DECODED(ping, v))
        goblin__exec_ping(&r->x, NULL);
}

void goblin__sbe_echo(struct goblin__sbe_req *r)
{
    struct goblin_sbe_echo v;

    if (GOBLIN__SBE_DECODED(echo, v))
        goblin__exec_echo(&r->x, v.message);
}

void goblin__sbe_auth(struct goblin__sbe_req *r)
{
    struct goblin_sbe_auth v;
    struct goblin_slice argv[3] = {{"AUTH", 4}};

    if (!goblin__sbe_decoded(r, goblin_sbe_auth_decode(&v, r->m)))
        return;
    if (v.username.len == 0) {
        argv[1] = v.password;
        goblin__sbe_run_argv(r, 2, argv);
        return;
    }
    argv[1] = v.username;
    argv[2] = v.password;
    goblin__sbe_run_argv(r, 3, argv);
}

void goblin__sbe_hello(struct goblin__sbe_req *r)
{
    struct goblin_sbe_hello v;
    struct goblin_slice argv[7] = {{"HELLO", 5}};
    unsigned flags;
    int argc = 1;

    if (!goblin__sbe_decoded(r, goblin_sbe_hello_decode(&v, r->m)))
        return;
    flags = goblin_sbe_hello_flags(&v);
    switch (goblin_sbe_hello_protover(&v)) {
    case 0:
        if (flags == 0)
            break;
        /* HELLO's options need a version: keep the session's. */
        argv[argc++] = (struct goblin_slice){r->x.sess->resp == 2 ? "2"
                                                                  : "3", 1};
        break;
    case 2:
        argv[argc++] = (struct goblin_slice){"2", 1};
        break;
    case 3:
        argv[argc++] = (struct goblin_slice){"3", 1};
        break;
    default:
        goblin__reply_error(&r->x, "NOPROTO unsupported protocol version");
        return;
    }
    if (flags & GOBLIN_SBE_HELLO_FLAGS_AUTH) {
        argv[argc++] = (struct goblin_slice){"AUTH", 4};
        argv[argc++] = v.username.len > 0 ? v.username
                                          : (struct goblin_slice){"default", 7};
        argv[argc++] = v.password;
    }
    if (flags & GOBLIN_SBE_HELLO_FLAGS_SET_NAME) {
        argv[argc++] = (struct goblin_slice){"SETNAME", 7};
        argv[argc++] = v.client_name;
    }
    goblin__sbe_run_argv(r, argc, argv);
}

void goblin__sbe_info(struct goblin__sbe_req *r)
{
    struct goblin_sbe_info v;
    struct goblin_slice *argv;
    size_t n, i;

    if (!goblin__sbe_decoded(r, goblin_sbe_info_decode(&v, r->m)) ||
        (argv = goblin__sbe_gather(r, v.sections, 1, &n)) == NULL)
        return;
    /* Room for "INFO" in front: gather left one spare slot at the end. */
    for (i = n; i > 0; i--)
        argv[i] = argv[i - 1];
    argv[0] = (struct goblin_slice){"INFO", 4};
    goblin__sbe_run_argv(r, (int)(n + 1), argv);
}

void goblin__sbe_argv(struct goblin__sbe_req *r)
{
    struct goblin_sbe_argv v;
    struct goblin_slice *argv;
    size_t n;

    if (!goblin__sbe_decoded(r, goblin_sbe_argv_decode(&v, r->m)) ||
        (argv = goblin__sbe_gather(r, v.args, 1, &n)) == NULL)
        return;
    if (n == 0) {
        goblin__reply_error(&r->x, "ERR empty SBE Argv request");
        return;
    }
    goblin__sbe_run_argv(r, (int)n, argv);
}

