/* cmd_conn.c - connection commands: PING, ECHO, SELECT, QUIT, RESET, AUTH
 * and HELLO, with Redis 7's replies and texts (server.c, acl.c,
 * networking.c).
 *
 * Authentication: AUTH and HELLO AUTH check a user of the ACL (acl.c);
 * AUTH with the password alone is for "default", and is an error while
 * "default" is nopass, as Redis warns about it. requirepass sets the
 * default user's password.
 */
#include <string.h>

#include "engine/acl_log.h"
#include "engine/acl.h"
#include "exec.h"
#include "respond.h"
#include "engine/session.h"

void goblin__exec_ping(goblin__exec *x, const struct goblin_slice *message)
{
    /* A subscribed RESP2 connection reads only arrays: ["pong", message]. */
    if (x->resp == 2 && goblin__ps_total(&x->sess->ps) > 0) {
        goblin__reply_array(x, 2);
        goblin__reply_bulk(x, "pong", 4);
        goblin__reply_bulk(x, message ? message->ptr : "",
                           message ? message->len : 0);
        return;
    }
    if (message == NULL)
        goblin__reply_status(x, "PONG");
    else
        goblin__reply_slice(x, *message);
}

void goblin__cmd_ping(goblin__exec *x, int argc,
                      const struct goblin_slice *argv)
{
    if (argc > 2)
        goblin__reply_errorf(x, "ERR wrong number of arguments for '%s' "
                                "command", x->cmd->fullname);
    else
        goblin__exec_ping(x, argc == 2 ? &argv[1] : NULL);
}

void goblin__exec_echo(goblin__exec *x, struct goblin_slice message)
{
    goblin__reply_slice(x, message);
}

void goblin__cmd_echo(goblin__exec *x, int argc,
                      const struct goblin_slice *argv)
{
    (void)argc;
    goblin__exec_echo(x, argv[1]);
}

void goblin__cmd_quit(goblin__exec *x, int argc,
                      const struct goblin_slice *argv)
{
    (void)argc;
    (void)argv;
    goblin__reply_ok(x);
    x->sess->flags |= SESS_CLOSE;
}

void goblin__cmd_reset(goblin__exec *x, int argc,
                       const struct goblin_slice *argv)
{
    (void)argc;
    (void)argv;
    goblin__session_reset(x->sess);
    goblin__reply_status(x, "RESET");
}

struct goblin__acl_user *goblin__auth_ok(const goblin_engine *eng,
                                         struct goblin_slice user,
                                         struct goblin_slice pass)
{
    struct goblin__acl_user *u = goblin__acl_find(eng, user);

    return goblin__acl_auth(u, pass) ? u : NULL;
}

/* Authenticates s as u. */
static void log_in(goblin_session *s, struct goblin__acl_user *u)
{
    s->acl = u;
    s->flags |= SESS_AUTHED;
}

/* A failed AUTH or HELLO AUTH: Redis logs it (ACL LOG, reason "auth",
 * the command's name as sent for object, the user it tried). */
static void auth_failed(goblin__exec *x, const struct goblin_slice *argv,
                        struct goblin_slice user)
{
    goblin__acl_log_add(x->sess, GOBLIN__ACLLOG_AUTH,
                        (x->sess->flags & SESS_MULTI) ? GOBLIN__ACLLOG_MULTI
                                                      : GOBLIN__ACLLOG_TOPLEVEL,
                        argv[0], user);
    goblin__reply_error(
        x, "WRONGPASS invalid username-password pair or user is disabled.");
}

void goblin__cmd_auth(goblin__exec *x, int argc,
                      const struct goblin_slice *argv)
{
    struct goblin_slice user = {"default", 7}, pass;
    struct goblin__acl_user *u;

    if (argc > 3) {
        goblin__reply_error(x, GOBLIN__ERR_SYNTAX);
        return;
    }
    if (argc == 2) {
        if (x->eng->default_user->flags & ACL_USER_NOPASS) {
            goblin__reply_error(
                x, "ERR AUTH <password> called without any password "
                   "configured for the default user. Are you sure your "
                   "configuration is correct?");
            return;
        }
        pass = argv[1];
    } else {
        user = argv[1];
        pass = argv[2];
    }
    if ((u = goblin__auth_ok(x->eng, user, pass)) == NULL) {
        auth_failed(x, argv, user);
        return;
    }
    log_in(x->sess, u);
    goblin__reply_ok(x);
}

static void hello_reply(goblin__exec *x)
{
    goblin__reply_map(x, 7);
    goblin__reply_cstr(x, "server");
    goblin__reply_cstr(x, "redis");
    goblin__reply_cstr(x, "version");
    goblin__reply_cstr(x, GOBLIN__REDIS_VERSION);
    goblin__reply_cstr(x, "proto");
    goblin__reply_int(x, x->sess->resp);
    goblin__reply_cstr(x, "id");
    goblin__reply_int(x, (int64_t)x->sess->id);
    goblin__reply_cstr(x, "mode");
    goblin__reply_cstr(x, "standalone");
    goblin__reply_cstr(x, "role");
    goblin__reply_cstr(x, "master");
    goblin__reply_cstr(x, "modules");
    goblin__reply_array(x, 0);
}

struct hello_args {
    int64_t ver;
    const struct goblin_slice *user, *pass, *name;
};

/* Reads HELLO's options; replies the error and returns false on a bad
 * one, as Redis's helloCommand does, in its order. */
static bool hello_parse(goblin__exec *x, int argc,
                        const struct goblin_slice *argv, struct hello_args *h)
{
    int j;

    if (argc >= 2) {
        if (!goblin__arg_int64(x, argv[1], &h->ver,
                               "ERR Protocol version is not an integer or "
                               "out of range"))
            return false;
        if (h->ver < 2 || h->ver > 3) {
            goblin__reply_error(x, "NOPROTO unsupported protocol version");
            return false;
        }
    }
    for (j = 2; j < argc; j++) {
        int more = argc - 1 - j;

        if (goblin__arg_is(argv[j], "auth") && more >= 2) {
            h->user = &argv[j + 1];
            h->pass = &argv[j + 2];
            j += 2;
        } else if (goblin__arg_is(argv[j], "setname") && more >= 1) {
            h->name = &argv[++j];
            if (!goblin__client_name_ok(*h->name)) {
                goblin__reply_error(x, GOBLIN__ERR_CLIENT_NAME);
                return false;
            }
        } else {
            goblin__reply_errorf(x, "ERR Syntax error in HELLO option '%.*s'",
                                 goblin__cstr_len(argv[j]),
                                 (const char *)argv[j].ptr);
            return false;
        }
    }
    return true;
}

void goblin__cmd_hello(goblin__exec *x, int argc,
                       const struct goblin_slice *argv)
{
    struct hello_args h = {0};
    goblin_session *s = x->sess;

    if (!hello_parse(x, argc, argv, &h))
        return;
    if (h.user != NULL) {
        struct goblin__acl_user *u = goblin__auth_ok(x->eng, *h.user,
                                                     *h.pass);
        if (u == NULL) {
            auth_failed(x, argv, *h.user);
            return;
        }
        log_in(s, u);
    }
    if (!(s->flags & SESS_AUTHED)) {
        goblin__reply_error(
            x, "NOAUTH HELLO must be called with the client already "
               "authenticated, otherwise the HELLO AUTH <user> <pass> "
               "option can be used to authenticate the client and select "
               "the RESP protocol version at the same time");
        return;
    }
    if (h.name != NULL && goblin__client_set_name(s, *h.name) != 0) {
        goblin__reply_code(x, GOBLIN_ENOMEM);
        return;
    }
    if (h.ver != 0) {
        goblin__session_set_resp(s, (int)h.ver);
        x->resp = (int)h.ver;
    }
    hello_reply(x);
}
