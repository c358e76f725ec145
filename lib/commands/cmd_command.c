/* cmd_command.c - COMMAND and its subcommands: the bare form, COUNT, INFO,
 * DOCS, GETKEYS, GETKEYSANDFLAGS, LIST and HELP, built from the command
 * table as Redis 7.0 builds them from its own (server.c).
 *
 * A command's COMMAND entry has Redis 7's ten fields: name, arity, flags,
 * first key, last key, step, ACL categories, tips, key specs and
 * subcommands. Its COMMAND DOCS map has Redis's keys in Redis's order:
 * summary, since, group, complexity, doc_flags, deprecated_since,
 * replaced_by, history, arguments (the nested tree redis-cli's hints and
 * client generators read) and subcommands, each only when present. The
 * table lists only what Goblin implements, so COUNT, LIST and a
 * container's subcommands cover those (docs/commands.md).
 */
#include <string.h>

#include "goblin/keys.h"
#include "goblin/numtext.h"
#include "respond.h"
#include "engine/session.h"

static const char *const flag_names[CMD_NFLAGS] = {
    "write", "readonly", "denyoom", "module", "admin", "pubsub",
    "noscript", "blocking", "loading", "stale", "skip_monitor",
    "skip_slowlog", "asking", "fast", "no_auth", "may_replicate",
    "no_mandatory_keys", "no_async_loading", "no_multi", "movablekeys",
    "allow_busy",
};

static const char *const acl_names[ACL_NCATS] = {
    "@keyspace", "@read", "@write", "@set", "@sortedset", "@list",
    "@hash", "@string", "@bitmap", "@hyperloglog", "@geo", "@stream",
    "@pubsub", "@admin", "@fast", "@slow", "@blocking", "@dangerous",
    "@connection", "@transaction", "@scripting",
};

static const char *const ks_flag_names[KS_NFLAGS] = {
    "RO", "RW", "OW", "RM", "access", "update", "insert", "delete",
    "not_key", "incomplete", "variable_flags",
};

/* A set of status strings, one per bit set in bits. */
static void reply_bits(goblin__exec *x, uint32_t bits,
                       const char *const *names, int n)
{
    int i;

    goblin__reply_set(x, (size_t)__builtin_popcount(bits));
    for (i = 0; i < n; i++)
        if (bits & (1u << i))
            goblin__reply_status(x, names[i]);
}

static void reply_keyspec(goblin__exec *x, const struct goblin__keyspec *k)
{
    goblin__reply_map(x, k->notes != NULL ? 4 : 3);
    if (k->notes != NULL) {
        goblin__reply_cstr(x, "notes");
        goblin__reply_cstr(x, k->notes);
    }
    goblin__reply_cstr(x, "flags");
    reply_bits(x, k->flags, ks_flag_names, KS_NFLAGS);
    goblin__reply_cstr(x, "begin_search");
    goblin__reply_map(x, 2);
    goblin__reply_cstr(x, "type");
    goblin__reply_cstr(x, k->begin_keyword == 0   ? "index"
                          : k->begin_keyword == 1 ? "keyword"
                                                  : "unknown");
    goblin__reply_cstr(x, "spec");
    if (k->begin_keyword > 1) {
        goblin__reply_map(x, 0);
    } else if (k->begin_keyword) {
        goblin__reply_map(x, 2);
        goblin__reply_cstr(x, "keyword");
        goblin__reply_cstr(x, k->keyword);
        goblin__reply_cstr(x, "startfrom");
    } else {
        goblin__reply_map(x, 1);
        goblin__reply_cstr(x, "index");
    }
    if (k->begin_keyword <= 1)
        goblin__reply_int(x, k->bs);
    goblin__reply_cstr(x, "find_keys");
    goblin__reply_map(x, 2);
    goblin__reply_cstr(x, "type");
    goblin__reply_cstr(x, k->find_keynum == 0   ? "range"
                          : k->find_keynum == 1 ? "keynum"
                                                : "unknown");
    goblin__reply_cstr(x, "spec");
    if (k->find_keynum > 1) {
        goblin__reply_map(x, 0);
        return;
    }
    goblin__reply_map(x, 3);
    goblin__reply_cstr(x, k->find_keynum ? "keynumidx" : "lastkey");
    goblin__reply_int(x, k->fk[0]);
    goblin__reply_cstr(x, k->find_keynum ? "firstkey" : "keystep");
    goblin__reply_int(x, k->fk[1]);
    goblin__reply_cstr(x, k->find_keynum ? "keystep" : "limit");
    goblin__reply_int(x, k->fk[2]);
}

static void reply_info(goblin__exec *x, const struct goblin__command *c)
{
    size_t i;

    goblin__reply_array(x, 10);
    goblin__reply_cstr(x, c->fullname);
    goblin__reply_int(x, c->arity);
    /* Goblin's own flags (CMD_READS) are past the names. */
    reply_bits(x, c->flags & ((1u << CMD_NFLAGS) - 1), flag_names,
               CMD_NFLAGS);
    goblin__reply_int(x, c->first_key);
    goblin__reply_int(x, c->last_key);
    goblin__reply_int(x, c->key_step);
    reply_bits(x, c->acl, acl_names, ACL_NCATS);
    goblin__reply_set(x, c->ntips);
    for (i = 0; i < c->ntips; i++)
        goblin__reply_cstr(x, c->tips[i]);
    goblin__reply_set(x, c->nkeyspecs);
    for (i = 0; i < c->nkeyspecs; i++)
        reply_keyspec(x, &c->keyspecs[i]);
    /* Redis's addReplyCommandSubCommands: an empty set, or an array. */
    if (c->nsub == 0)
        goblin__reply_set(x, 0);
    else
        goblin__reply_array(x, c->nsub);
    for (i = 0; i < c->nsub; i++)
        reply_info(x, c + 1 + i);
}

/* Steps over a command and its subcommands in the table. */
static size_t next_top(size_t i)
{
    return i + 1 + goblin__commands[i].nsub;
}

/* The next top-level command from i on that rename-command left in
 * the table (a renamed one stays, under its own name, as in Redis). */
static size_t next_kept(const goblin_engine *eng, size_t i)
{
    while (i < goblin__command_count &&
           goblin__command_gone(eng, &goblin__commands[i]))
        i = next_top(i);
    return i;
}

#define EACH_TOP(eng, i)                                                    \
    for (i = next_kept(eng, 0); i < goblin__command_count;                  \
         i = next_kept(eng, next_top(i)))

static size_t top_count(const goblin_engine *eng)
{
    size_t i, n = 0;

    EACH_TOP(eng, i)
        n++;
    return n;
}

void goblin__cmd_command(goblin__exec *x, int argc,
                         const struct goblin_slice *argv)
{
    size_t i;

    (void)argc;
    (void)argv;
    goblin__reply_array(x, top_count(x->eng));
    EACH_TOP(x->eng, i)
        reply_info(x, &goblin__commands[i]);
}

void goblin__cmd_command_count(goblin__exec *x, int argc,
                               const struct goblin_slice *argv)
{
    (void)argc;
    (void)argv;
    goblin__reply_int(x, (int64_t)top_count(x->eng));
}

/* A command, or with "parent|sub" one of its subcommands. */
static const struct goblin__command *find_any(const goblin_engine *eng,
                                              struct goblin_slice name)
{
    return goblin__command_lookup_fullname(eng, name);
}

void goblin__cmd_command_info(goblin__exec *x, int argc,
                              const struct goblin_slice *argv)
{
    const struct goblin__command *c;
    int j;

    if (argc == 2) {
        goblin__cmd_command(x, argc, argv);
        return;
    }
    goblin__reply_array(x, (size_t)(argc - 2));
    for (j = 2; j < argc; j++) {
        c = find_any(x->eng, argv[j]);
        if (c == NULL)
            goblin__reply_null(x);
        else
            reply_info(x, c);
    }
}

static const char *const arg_type_names[ARGT_NTYPES] = {
    "string", "integer", "double", "key", "pattern", "unix-time",
    "pure-token", "oneof", "block",
};

static const char *const arg_flag_names[ARGF_NFLAGS] = {
    "optional", "multiple", "multiple_token",
};

static const char *const doc_flag_names[DOCF_NFLAGS] = {
    "deprecated", "syscmd",
};

/* An optional string field of a map: its name and value, if present. */
static void reply_field(goblin__exec *x, const char *name, const char *v)
{
    if (v == NULL)
        return;
    goblin__reply_cstr(x, name);
    goblin__reply_cstr(x, v);
}

/* COMMAND DOCS "arguments": Redis's addReplyCommandArgList. */
static void reply_args(goblin__exec *x, const struct goblin__arg *a,
                       size_t n)
{
    size_t i;

    goblin__reply_array(x, n);
    for (i = 0; i < n; i++, a++) {
        bool nested = a->type == ARGT_ONEOF || a->type == ARGT_BLOCK;

        goblin__reply_map(x, 2 + (a->key_spec_index >= 0) +
                                 (a->token != NULL) + (a->since != NULL) +
                                 (a->deprecated_since != NULL) +
                                 (a->flags != 0) + nested);
        reply_field(x, "name", a->name);
        reply_field(x, "type", arg_type_names[a->type]);
        if (a->key_spec_index >= 0) {
            goblin__reply_cstr(x, "key_spec_index");
            goblin__reply_int(x, a->key_spec_index);
        }
        reply_field(x, "token", a->token);
        reply_field(x, "since", a->since);
        reply_field(x, "deprecated_since", a->deprecated_since);
        if (a->flags != 0) {
            goblin__reply_cstr(x, "flags");
            reply_bits(x, a->flags, arg_flag_names, ARGF_NFLAGS);
        }
        if (nested) {
            goblin__reply_cstr(x, "arguments");
            reply_args(x, a->args, a->nargs);
        }
    }
}

/* COMMAND DOCS for one command: Redis's addReplyCommandDocs. */
static void reply_docs(goblin__exec *x, const struct goblin__command *c)
{
    size_t i;

    goblin__reply_map(x, 1 + (c->summary != NULL) + (c->since != NULL) +
                             (c->complexity != NULL) +
                             (c->doc_flags != 0) +
                             (c->deprecated_since != NULL) +
                             (c->replaced_by != NULL) +
                             (c->nhistory > 0) + (c->nargs > 0) +
                             (c->nsub > 0));
    reply_field(x, "summary", c->summary);
    reply_field(x, "since", c->since);
    reply_field(x, "group", c->group);
    reply_field(x, "complexity", c->complexity);
    if (c->doc_flags != 0) {
        goblin__reply_cstr(x, "doc_flags");
        reply_bits(x, c->doc_flags, doc_flag_names, DOCF_NFLAGS);
    }
    reply_field(x, "deprecated_since", c->deprecated_since);
    reply_field(x, "replaced_by", c->replaced_by);
    if (c->nhistory > 0) {
        goblin__reply_cstr(x, "history");
        goblin__reply_set(x, c->nhistory); /* a set in Redis's RESP3 */
        for (i = 0; i < c->nhistory; i++) {
            goblin__reply_array(x, 2);
            goblin__reply_cstr(x, c->history[2 * i]);
            goblin__reply_cstr(x, c->history[2 * i + 1]);
        }
    }
    if (c->nargs > 0) {
        goblin__reply_cstr(x, "arguments");
        reply_args(x, c->args, c->nargs);
    }
    if (c->nsub == 0)
        return;
    goblin__reply_cstr(x, "subcommands");
    goblin__reply_map(x, c->nsub);
    for (i = 0; i < c->nsub; i++) {
        goblin__reply_cstr(x, c[1 + i].fullname);
        reply_docs(x, c + 1 + i);
    }
}

void goblin__cmd_command_docs(goblin__exec *x, int argc,
                              const struct goblin_slice *argv)
{
    const struct goblin__command *c;
    size_t i, n = 0;
    int j;

    if (argc == 2) {
        goblin__reply_map(x, top_count(x->eng));
        EACH_TOP(x->eng, i) {
            goblin__reply_cstr(x, goblin__commands[i].fullname);
            reply_docs(x, &goblin__commands[i]);
        }
        return;
    }
    for (j = 2; j < argc; j++)
        n += find_any(x->eng, argv[j]) != NULL;
    goblin__reply_map(x, n);
    for (j = 2; j < argc; j++) {
        if ((c = find_any(x->eng, argv[j])) == NULL)
            continue;
        goblin__reply_cstr(x, c->fullname);
        reply_docs(x, c);
    }
}

/* Whether c has keys at all: a key spec that is not NOT_KEY (Redis's
 * doesCommandHaveKeys). */
static bool has_keys(const struct goblin__command *c)
{
    size_t i;

    for (i = 0; i < c->nkeyspecs; i++)
        if (!(c->keyspecs[i].flags & KS_NOT_KEY))
            return true;
    return false;
}

/* COMMAND GETKEYS and GETKEYSANDFLAGS: Redis's getKeysSubcommandImpl, in
 * its order of checks. The positions live in the session's scratch space,
 * as many as the command names. */
static void getkeys(goblin__exec *x, int argc,
                    const struct goblin_slice *argv, bool with_flags)
{
    const struct goblin__command *c = goblin__command_lookup(x->eng, argv[2]);
    const struct goblin_slice *cargv = argv + 2;
    int cargc = argc - 2, n, i, *pos;
    uint16_t *fl;
    size_t cap;

    if (c != NULL && c->nsub > 0 && cargc >= 2)
        c = goblin__command_lookup_sub(x->eng, c, cargv[1]);
    if (c == NULL) {
        goblin__reply_error(x, "ERR Invalid command specified");
        return;
    }
    if (!has_keys(c)) {
        goblin__reply_error(x, "ERR The command has no key arguments");
        return;
    }
    if ((c->arity > 0 && cargc != c->arity) || cargc < -c->arity) {
        goblin__reply_error(
            x, "ERR Invalid number of arguments specified for command");
        return;
    }
    cap = goblin__find_keys_cap(c, cargc);
    pos = goblin__scratch_bytes(x->sess, cap * (sizeof(int) + 2) + 8);
    if (pos == NULL) {
        goblin__reply_code(x, GOBLIN_ENOMEM);
        return;
    }
    fl = (uint16_t *)(pos + cap);
    n = goblin__find_keys(c, cargc, cargv, pos, fl);
    if (n == 0) {
        if (c->flags & CMD_NO_MANDATORY_KEYS)
            goblin__reply_array(x, 0);
        else
            goblin__reply_error(x, "ERR Invalid arguments specified for "
                                   "command");
        return;
    }
    goblin__reply_array(x, (size_t)n);
    for (i = 0; i < n; i++) {
        if (with_flags)
            goblin__reply_array(x, 2);
        goblin__reply_slice(x, cargv[pos[i]]);
        if (with_flags)
            reply_bits(x, fl[i], ks_flag_names, KS_NFLAGS);
    }
}

void goblin__cmd_command_getkeys(goblin__exec *x, int argc,
                                 const struct goblin_slice *argv)
{
    getkeys(x, argc, argv, false);
}

void goblin__cmd_command_getkeysandflags(goblin__exec *x, int argc,
                                         const struct goblin_slice *argv)
{
    getkeys(x, argc, argv, true);
}

static int acl_category(struct goblin_slice name)
{
    int i;

    for (i = 0; i < ACL_NCATS; i++)
        if (goblin__arg_is(name, acl_names[i] + 1))
            return i;
    return -1;
}

/* Whether c passes COMMAND LIST's filter (kind 0: none, 1: ACLCAT with
 * category cat, 2: PATTERN pat). */
static bool list_keep(const struct goblin__command *c, int kind, int cat,
                      struct goblin_slice pat)
{
    if (kind == 1)
        return cat >= 0 && (c->acl & (1u << cat));
    if (kind == 2)
        return goblin_glob_match(pat.ptr, pat.len, c->fullname,
                                 strlen(c->fullname), true);
    return true;
}

void goblin__cmd_command_list(goblin__exec *x, int argc,
                              const struct goblin_slice *argv)
{
    struct goblin_slice pat = {NULL, 0};
    int kind = 0, cat = -1;
    size_t i, n = 0;

    if (argc == 5 && goblin__arg_is(argv[2], "filterby")) {
        if (goblin__arg_is(argv[3], "module")) {
            goblin__reply_array(x, 0);
            return;
        } else if (goblin__arg_is(argv[3], "aclcat")) {
            kind = 1;
            cat = acl_category(argv[4]);
        } else if (goblin__arg_is(argv[3], "pattern")) {
            kind = 2;
            pat = argv[4];
        }
    }
    if (argc != 2 && kind == 0) {
        goblin__reply_error(x, GOBLIN__ERR_SYNTAX);
        return;
    }
    EACH_TOP(x->eng, i)
        for (size_t k = i; k < next_top(i); k++)
            n += list_keep(&goblin__commands[k], kind, cat, pat);
    goblin__reply_array(x, n);
    EACH_TOP(x->eng, i)
        for (size_t k = i; k < next_top(i); k++)
            if (list_keep(&goblin__commands[k], kind, cat, pat))
                goblin__reply_cstr(x, goblin__commands[k].fullname);
}

void goblin__cmd_command_help(goblin__exec *x, int argc,
                              const struct goblin_slice *argv)
{
    static const char *const help[] = {
        "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "(no subcommand)",
        "    Return details about all Redis commands.",
        "COUNT",
        "    Return the total number of commands in this Redis server.",
        "LIST",
        "    Return a list of all commands in this Redis server.",
        "INFO [<command-name> ...]",
        "    Return details about multiple Redis commands.",
        "    If no command names are given, documentation details for all",
        "    commands are returned.",
        "DOCS [<command-name> ...]",
        "    Return documentation details about multiple Redis commands.",
        "    If no command names are given, documentation details for all",
        "    commands are returned.",
        "GETKEYS <full-command>",
        "    Return the keys from a full Redis command.",
        "GETKEYSANDFLAGS <full-command>",
        "    Return the keys and the access flags from a full Redis command.",
        "HELP",
        "    Prints this help.",
    };

    (void)argc;
    (void)argv;
    goblin__reply_help(x, help, sizeof(help) / sizeof(help[0]));
}
