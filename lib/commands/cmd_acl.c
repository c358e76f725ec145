/* cmd_acl.c - ACL and its subcommands: CAT, DELUSER, DRYRUN, GENPASS,
 * GETUSER, HELP, LIST, LOAD, LOG, SAVE, SETUSER, USERS and WHOAMI, with Redis 7's
 * replies and texts (acl.c aclCommand). The model is in acl.c; LOAD and
 * SAVE use the file the server named with goblin_engine_acl_file(). */
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "engine/acl.h"
#include "engine/acl_log.h"
#include "respond.h"
#include "engine/session.h"
#include "engine/text.h"
#include "store/store.h"

static const char NO_FILE[] =
    "ERR This Redis instance is not configured to use an ACL file. You may "
    "want to specify users via the ACL SETUSER command and then issue a "
    "CONFIG REWRITE (assuming you have a Redis configuration file set) in "
    "order to store users in the Redis configuration.";

static int cut(struct goblin_slice s)
{
    return s.len > 128 ? 128 : (int)s.len;
}

void goblin__cmd_acl_cat(goblin__exec *x, int argc,
                         const struct goblin_slice *argv)
{
    size_t i, n = 0;
    int cat = -1;

    if (argc > 3) {
        goblin__reply_errorf(x, "ERR wrong number of arguments for '%s' "
                                "command", x->cmd->fullname);
        return;
    }
    if (argc == 2) {
        goblin__reply_array(x, ACL_NCATS);
        for (i = 0; i < ACL_NCATS; i++)
            goblin__reply_cstr(x, goblin__acl_cat_names[i]);
        return;
    }
    for (i = 0; i < ACL_NCATS && cat < 0; i++)
        if (goblin__arg_is(argv[2], goblin__acl_cat_names[i]))
            cat = (int)i;
    if (cat < 0) {
        goblin__reply_errorf(x, "ERR Unknown category '%.*s'", cut(argv[2]),
                             (const char *)argv[2].ptr);
        return;
    }
    for (i = 0; i < goblin__command_count; i++)
        n += goblin__commands[i].fn != NULL &&
             (goblin__commands[i].acl & (1u << cat));
    goblin__reply_array(x, n);
    for (i = 0; i < goblin__command_count; i++)
        if (goblin__commands[i].fn != NULL &&
            (goblin__commands[i].acl & (1u << cat)))
            goblin__reply_cstr(x, goblin__commands[i].fullname);
}

void goblin__cmd_acl_deluser(goblin__exec *x, int argc,
                             const struct goblin_slice *argv)
{
    int64_t n = 0;

    for (int i = 2; i < argc; i++) {
        if (argv[i].len == 7 && memcmp(argv[i].ptr, "default", 7) == 0) {
            goblin__reply_error(x, "ERR The 'default' user cannot be "
                                   "removed");
            return;
        }
        n += goblin__acl_deluser(x->eng, argv[i]);
    }
    goblin__reply_int(x, n);
}

/* The command argv names for DRYRUN, subcommand included; NULL after
 * replying Redis's error. */
static const struct goblin__command *dry_command(
    goblin__exec *x, int argc, const struct goblin_slice *argv)
{
    const struct goblin__command *c = goblin__command_lookup(x->eng,
                                                             argv[0]);

    if (c != NULL && c->nsub > 0)
        c = argc >= 2 ? goblin__command_lookup_sub(x->eng, c, argv[1])
                      : NULL;
    if (c == NULL) {
        goblin__reply_errorf(x, "ERR Command '%.*s' not found",
                             cut(argv[0]), (const char *)argv[0].ptr);
        return NULL;
    }
    if (c->arity > 0 ? argc != c->arity : argc < -c->arity) {
        goblin__reply_errorf(x, "ERR wrong number of arguments for '%s' "
                                "command", c->fullname);
        return NULL;
    }
    return c;
}

void goblin__cmd_acl_dryrun(goblin__exec *x, int argc,
                            const struct goblin_slice *argv)
{
    const struct goblin__acl_user *u = goblin__acl_find(x->eng, argv[2]);
    const struct goblin__command *c;
    enum goblin__acl_denied d;
    int pos = 0;

    if (u == NULL) {
        goblin__reply_errorf(x, "ERR User '%.*s' not found", cut(argv[2]),
                             (const char *)argv[2].ptr);
        return;
    }
    if ((c = dry_command(x, argc - 3, argv + 3)) == NULL)
        return;
    d = goblin__acl_check(x->sess, u, c, argc - 3, argv + 3, &pos);
    if (d == ACL_OK) {
        goblin__reply_ok(x);
    } else if (d == ACL_DENIED_CMD) {
        char text[160];
        snprintf(text, sizeof(text), "This user has no permissions to run "
                 "the '%s' command", c->fullname);
        goblin__reply_cstr(x, text);
    } else {
        struct goblin__text t;
        goblin__text_init(&t, x->st);
        goblin__text_addf(&t, "This user has no permissions to access the "
                          "'%.*s' %s", (int)argv[3 + pos].len,
                          (const char *)argv[3 + pos].ptr,
                          d == ACL_DENIED_CHANNEL ? "channel" : "key");
        if (t.oom)
            goblin__reply_code(x, GOBLIN_ENOMEM);
        else
            goblin__reply_bulk(x, t.p, t.len);
        goblin__text_free(&t);
    }
}

/* A rule description as a bulk string. */
static void reply_text(goblin__exec *x, const struct goblin__acl_user *u,
                       void (*fn)(struct goblin__text *,
                                  const struct goblin__acl_user *))
{
    struct goblin__text t;

    goblin__text_init(&t, x->st);
    fn(&t, u);
    goblin__reply_bulk(x, t.p != NULL ? t.p : "", t.oom ? 0 : t.len);
    goblin__text_free(&t);
}

void goblin__cmd_acl_getuser(goblin__exec *x, int argc,
                             const struct goblin_slice *argv)
{
    const struct goblin__acl_user *u = goblin__acl_find(x->eng, argv[2]);
    char hex[65];

    (void)argc;
    if (u == NULL) {
        goblin__reply_null(x);
        return;
    }
    goblin__reply_map(x, 6);
    goblin__reply_cstr(x, "flags");
    goblin__reply_set(x, 1 + !!(u->flags & ACL_USER_NOPASS) +
                             !!(u->flags & ACL_USER_SKIP_SANITIZE) +
                             !!(u->flags & ACL_USER_SANITIZE));
    goblin__reply_cstr(x, (u->flags & ACL_USER_ON) ? "on" : "off");
    if (u->flags & ACL_USER_NOPASS)
        goblin__reply_cstr(x, "nopass");
    if (u->flags & ACL_USER_SKIP_SANITIZE)
        goblin__reply_cstr(x, "skip-sanitize-payload");
    if (u->flags & ACL_USER_SANITIZE)
        goblin__reply_cstr(x, "sanitize-payload");
    goblin__reply_cstr(x, "passwords");
    goblin__reply_array(x, u->npass);
    for (size_t i = 0; i < u->npass; i++) {
        for (int k = 0; k < 32; k++)
            snprintf(hex + 2 * k, 3, "%02x", u->pass[i][k]);
        goblin__reply_bulk(x, hex, 64);
    }
    goblin__reply_cstr(x, "commands");
    reply_text(x, u, goblin__acl_describe_commands);
    goblin__reply_cstr(x, "keys");
    reply_text(x, u, goblin__acl_describe_keys);
    goblin__reply_cstr(x, "channels");
    reply_text(x, u, goblin__acl_describe_channels);
    goblin__reply_cstr(x, "selectors");
    goblin__reply_array(x, 0);
}

/* The error of a subcommand given too many arguments (its table arity
 * allows any number, as Redis's does). */
static void too_many(goblin__exec *x, const struct goblin_slice *argv)
{
    goblin__reply_errorf(x, "ERR unknown subcommand or wrong number of "
                         "arguments for '%.*s'. Try ACL HELP.",
                         cut(argv[1]), (const char *)argv[1].ptr);
}

/* ACL GENPASS [bits]: bits of the kernel's randomness as lower-case hex,
 * (bits + 3) / 4 characters (Redis's getRandomHexChars). */
void goblin__cmd_acl_genpass(goblin__exec *x, int argc,
                             const struct goblin_slice *argv)
{
    static const char hex[] = "0123456789abcdef";
    unsigned char raw[512];
    char out[1024];
    int64_t bits = 256;
    size_t chars, got = 0;

    if (argc > 3) {
        too_many(x, argv);
        return;
    }
    if (argc == 3 && !goblin__arg_int64(x, argv[2], &bits, NULL))
        return;
    if (bits <= 0 || bits > 4096) {
        goblin__reply_error(x, "ERR ACL GENPASS argument must be the number "
                               "of bits for the output password, a positive "
                               "number up to 4096");
        return;
    }
    chars = (size_t)(bits + 3) / 4;
    while (got < (chars + 1) / 2) {
        ssize_t r = getrandom(raw + got, (chars + 1) / 2 - got, 0);

        if (r <= 0) {
            goblin__reply_error(x, "ERR failed to read random bytes");
            return;
        }
        got += (size_t)r;
    }
    for (size_t i = 0; i < chars; i++)
        out[i] = hex[(raw[i / 2] >> (i % 2 ? 0 : 4)) & 0xF];
    goblin__reply_bulk(x, out, chars);
}

/* ACL LOG [count | RESET]: the newest count entries (10 by default), each
 * a map of Redis 7.0's seven fields. */
void goblin__cmd_acl_log(goblin__exec *x, int argc,
                         const struct goblin_slice *argv)
{
    static const char *const reasons[] = {"command", "key", "channel",
                                          "auth"};
    static const char *const contexts[] = {"toplevel", "multi", "lua"};
    const struct goblin__acl_log_entry *e = x->eng->acl_log;
    int64_t count = 10, now = goblin__now_ms(x->eng->st);

    if (argc > 3) {
        too_many(x, argv);
        return;
    }
    if (argc == 3) {
        if (goblin__arg_is(argv[2], "reset")) {
            goblin__acl_log_reset(x->eng);
            goblin__reply_ok(x);
            return;
        }
        if (!goblin__arg_int64(x, argv[2], &count, NULL))
            return;
        if (count < 0)
            count = 0;
    }
    if ((uint64_t)count > x->eng->acl_log_len)
        count = (int64_t)x->eng->acl_log_len;
    goblin__reply_array(x, (size_t)count);
    for (int64_t i = 0; i < count && e != NULL; i++, e = e->next) {
        goblin__reply_map(x, 7);
        goblin__reply_cstr(x, "count");
        goblin__reply_int(x, (int64_t)e->count);
        goblin__reply_cstr(x, "reason");
        goblin__reply_cstr(x, reasons[e->reason]);
        goblin__reply_cstr(x, "context");
        goblin__reply_cstr(x, contexts[e->context]);
        goblin__reply_cstr(x, "object");
        goblin__reply_bulk(x, e->object, e->object_len);
        goblin__reply_cstr(x, "username");
        goblin__reply_bulk(x, e->username, e->username_len);
        goblin__reply_cstr(x, "age-seconds");
        goblin__reply_double(x, (double)(now - e->ctime_ms) / 1000.0);
        goblin__reply_cstr(x, "client-info");
        goblin__reply_bulk(x, e->cinfo, e->cinfo_len);
    }
}

void goblin__cmd_acl_help(goblin__exec *x, int argc,
                          const struct goblin_slice *argv)
{
    static const char *const help[] = {
        "ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CAT [<category>]",
        "    List all commands that belong to <category>, or all command "
        "categories",
        "    when no category is specified.",
        "DELUSER <username> [<username> ...]",
        "    Delete a list of users.",
        "DRYRUN <username> <command> [<arg> ...]",
        "    Returns whether the user can execute the given command without "
        "executing the command.",
        "GETUSER <username>",
        "    Get the user's details.",
        "GENPASS [<bits>]",
        "    Generate a secure 256-bit user password. The optional `bits` "
        "argument can",
        "    be used to specify a different size.",
        "LIST",
        "    Show users details in config file format.",
        "LOAD",
        "    Reload users from the ACL file.",
        "LOG [<count> | RESET]",
        "    Show the ACL log entries.",
        "SAVE",
        "    Save the current config to the ACL file.",
        "SETUSER <username> <attribute> [<attribute> ...]",
        "    Create or modify a user with the specified attributes.",
        "USERS",
        "    List all the registered usernames.",
        "WHOAMI",
        "    Return the current connection username.",
        "HELP",
        "    Prints this help.",
    };

    (void)argc;
    (void)argv;
    goblin__reply_help(x, help, sizeof(help) / sizeof(help[0]));
}

void goblin__cmd_acl_list(goblin__exec *x, int argc,
                          const struct goblin_slice *argv)
{
    const struct goblin__acl_user *u;
    size_t n = 0;

    (void)argc;
    (void)argv;
    for (u = x->eng->users; u != NULL; u = u->next)
        n++;
    goblin__reply_array(x, n);
    for (u = x->eng->users; u != NULL; u = u->next)
        reply_text(x, u, goblin__acl_describe);
}

static void file_op(goblin__exec *x, bool load)
{
    char err[1024];
    int rc;

    if (x->eng->aclfile == NULL) {
        goblin__reply_error(x, NO_FILE);
        return;
    }
    rc = load ? goblin__acl_load_file(x->eng, x->eng->aclfile, err,
                                      sizeof(err))
              : goblin__acl_save_file(x->eng, x->eng->aclfile, err,
                                      sizeof(err));
    if (rc == 0)
        goblin__reply_ok(x);
    else
        goblin__reply_error(x, err);
}

void goblin__cmd_acl_load(goblin__exec *x, int argc,
                          const struct goblin_slice *argv)
{
    (void)argc;
    (void)argv;
    file_op(x, true);
}

void goblin__cmd_acl_save(goblin__exec *x, int argc,
                          const struct goblin_slice *argv)
{
    (void)argc;
    (void)argv;
    file_op(x, false);
}

void goblin__cmd_acl_setuser(goblin__exec *x, int argc,
                             const struct goblin_slice *argv)
{
    char err[512];
    int bad, rc;

    rc = goblin__acl_setuser(x->eng, argv[2], argc - 3, argv + 3, err,
                             sizeof(err), &bad);
    if (rc == GOBLIN_EINVAL)
        goblin__reply_error(x, err);
    else if (rc < 0)
        goblin__reply_code(x, rc);
    else
        goblin__reply_ok(x);
}

void goblin__cmd_acl_users(goblin__exec *x, int argc,
                           const struct goblin_slice *argv)
{
    const struct goblin__acl_user *u;
    size_t n = 0;

    (void)argc;
    (void)argv;
    for (u = x->eng->users; u != NULL; u = u->next)
        n++;
    goblin__reply_array(x, n);
    for (u = x->eng->users; u != NULL; u = u->next)
        goblin__reply_bulk(x, u->name, u->namelen);
}

void goblin__cmd_acl_whoami(goblin__exec *x, int argc,
                            const struct goblin_slice *argv)
{
    const struct goblin__acl_user *u = x->sess->acl;

    (void)argc;
    (void)argv;
    if (u == NULL)
        goblin__reply_null(x);
    else
        goblin__reply_bulk(x, u->name, u->namelen);
}
