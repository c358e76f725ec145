/* cmd_command.c - COMMAND and its subcommands: the bare form, COUNT, INFO,
 * DOCS, GETKEYS, GETKEYSANDFLAGS, LIST and HELP, built from the command
 * table as Redis 7 builds them from its own (server.c).
 *
 * A command's COMMAND entry has Redis 7's ten fields: name, arity, flags,
 * first key, last key, step, ACL categories, tips, key specs and
 * subcommands. COMMAND DOCS gives summary, since, group and complexity
 * (and subcommands); argument descriptions are not carried.
 */
#include <string.h>

#include "goblin/keys.h"
#include "goblin/numtext.h"
#include "respond.h"
#include "session.h"

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
    goblin__reply_cstr(x, k->begin_keyword ? "keyword" : "index");
    goblin__reply_cstr(x, "spec");
    if (k->begin_keyword) {
        goblin__reply_map(x, 2);
        goblin__reply_cstr(x, "keyword");
        goblin__reply_cstr(x, k->keyword);
        goblin__reply_cstr(x, "startfrom");
    } else {
        goblin__reply_map(x, 1);
        goblin__reply_cstr(x, "index");
    }
    goblin__reply_int(x, k->bs);
    goblin__reply_cstr(x, "find_keys");
    goblin__reply_map(x, 2);
    goblin__reply_cstr(x, "type");
    goblin__reply_cstr(x, k->find_keynum ? "keynum" : "range");
    goblin__reply_cstr(x, "spec");
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
    reply_bits(x, c->flags, flag_names, CMD_NFLAGS);
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
    goblin__reply_set(x, c->nsub);
    for (i = 0; i < c->nsub; i++)
        reply_info(x, c + 1 + i);
}

/* Steps over a command and its subcommands in the table. */
static size_t next_top(size_t i)
{
    return i + 1 + goblin__commands[i].nsub;
}

static size_t top_count(void)
{
    size_t i, n = 0;

    for (i = 0; i < goblin__command_count; i = next_top(i))
        n++;
    return n;
}

void cmd_command(goblin__exec *x, int argc, const struct goblin_slice *argv)
{
    size_t i;

    (void)argc;
    (void)argv;
    goblin__reply_array(x, top_count());
    for (i = 0; i < goblin__command_count; i = next_top(i))
        reply_info(x, &goblin__commands[i]);
}

void cmd_command_count(goblin__exec *x, int argc,
                       const struct goblin_slice *argv)
{
    (void)argc;
    (void)argv;
    goblin__reply_int(x, (int64_t)top_count());
}

/* A command, or with "parent|sub" one of its subcommands. */
static const struct goblin__command *find_any(const goblin_engine *eng,
                                              struct goblin_slice name)
{
    return goblin__command_lookup(eng, name);
}

void cmd_command_info(goblin__exec *x, int argc,
                      const struct goblin_slice *argv)
{
    const struct goblin__command *c;
    int j;

    if (argc == 2) {
        cmd_command(x, argc, argv);
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

static void reply_docs(goblin__exec *x, const struct goblin__command *c)
{
    size_t i;

    goblin__reply_map(x, c->nsub > 0 ? 5 : 4);
    goblin__reply_cstr(x, "summary");
    goblin__reply_cstr(x, c->summary);
    goblin__reply_cstr(x, "since");
    goblin__reply_cstr(x, c->since);
    goblin__reply_cstr(x, "group");
    goblin__reply_cstr(x, c->group);
    goblin__reply_cstr(x, "complexity");
    goblin__reply_cstr(x, c->complexity);
    if (c->nsub == 0)
        return;
    goblin__reply_cstr(x, "subcommands");
    goblin__reply_map(x, c->nsub);
    for (i = 0; i < c->nsub; i++) {
        goblin__reply_cstr(x, c[1 + i].fullname);
        reply_docs(x, c + 1 + i);
    }
}

void cmd_command_docs(goblin__exec *x, int argc,
                      const struct goblin_slice *argv)
{
    const struct goblin__command *c;
    size_t i, n = 0;
    int j;

    if (argc == 2) {
        goblin__reply_map(x, top_count());
        for (i = 0; i < goblin__command_count; i = next_top(i)) {
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

/* A spec with variable flags gets them from the arguments, as Redis's
 * getkeys procs do: SET without GET only overwrites its key. */
static uint16_t variable_flags(const struct goblin__command *c,
                               uint16_t flags, int argc,
                               const struct goblin_slice *argv)
{
    int i;

    if (!(flags & KS_VARIABLE_FLAGS) || strcmp(c->fullname, "set") != 0)
        return flags;
    for (i = 3; i < argc; i++)
        if (goblin__arg_is(argv[i], "get"))
            return KS_RW | KS_ACCESS | KS_UPDATE;
    return KS_OW | KS_UPDATE;
}

/* Key positions of argv for command c from its key specs, as Redis's
 * getKeysUsingKeySpecs finds them. Writes up to max positions into pos and
 * their spec's flags into flags; returns how many, or -1 when a keynum
 * argument is not a usable count. */
int goblin__find_keys(const struct goblin__command *c, int argc,
                      const struct goblin_slice *argv, int *pos,
                      uint16_t *flags, int max)
{
    int n = 0, s, first, last, step, k;
    int64_t num;

    for (s = 0; s < c->nkeyspecs; s++) {
        const struct goblin__keyspec *ks = &c->keyspecs[s];

        first = ks->bs;
        if (ks->begin_keyword) {
            for (k = ks->bs; k < argc; k++)
                if (goblin__arg_is(argv[k], ks->keyword))
                    break;
            if (k >= argc)
                continue;
            first = k + 1;
        }
        if (first >= argc)
            continue;
        if (ks->find_keynum) {
            if (first + ks->fk[0] >= argc ||
                goblin_int64_parse(argv[first + ks->fk[0]].ptr,
                                   argv[first + ks->fk[0]].len, &num) != 0 ||
                num <= 0 || num > argc)
                return -1;
            step = ks->fk[2];
            first += ks->fk[1];
            last = first + ((int)num - 1) * step;
        } else {
            step = ks->fk[1];
            last = ks->fk[0] >= 0 ? first + ks->fk[0] : argc + ks->fk[0];
            if (ks->fk[0] < 0 && ks->fk[2] > 1)
                last = first + ((argc - first) / ks->fk[2]) - 1;
        }
        if (last >= argc)
            return -1;
        for (k = first; k <= last && n < max; k += step) {
            pos[n] = k;
            flags[n++] = variable_flags(c, ks->flags, argc, argv);
        }
    }
    return n;
}

static void getkeys(goblin__exec *x, int argc,
                    const struct goblin_slice *argv, bool with_flags)
{
    const struct goblin__command *c = goblin__command_lookup(x->eng, argv[2]);
    const struct goblin_slice *cargv = argv + 2;
    int cargc = argc - 2, n, i, pos[64];
    uint16_t fl[64];

    if (c != NULL && c->nsub > 0 && cargc >= 2)
        c = goblin__command_lookup_sub(x->eng, c, cargv[1]);
    if (c == NULL) {
        goblin__reply_error(x, "ERR Invalid command specified");
        return;
    }
    if ((c->arity > 0 && cargc != c->arity) || cargc < -c->arity) {
        goblin__reply_error(
            x, "ERR Invalid number of arguments specified for command");
        return;
    }
    n = goblin__find_keys(c, cargc, cargv, pos, fl, 64);
    if (n <= 0) {
        goblin__reply_error(x, c->flags & CMD_MOVABLEKEYS || n < 0
                                   ? "ERR Invalid arguments specified for "
                                     "command"
                                   : "ERR The command has no key arguments");
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

void cmd_command_getkeys(goblin__exec *x, int argc,
                         const struct goblin_slice *argv)
{
    getkeys(x, argc, argv, false);
}

void cmd_command_getkeysandflags(goblin__exec *x, int argc,
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

void cmd_command_list(goblin__exec *x, int argc,
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
    for (i = 0; i < goblin__command_count; i++)
        n += list_keep(&goblin__commands[i], kind, cat, pat);
    goblin__reply_array(x, n);
    for (i = 0; i < goblin__command_count; i++)
        if (list_keep(&goblin__commands[i], kind, cat, pat))
            goblin__reply_cstr(x, goblin__commands[i].fullname);
}

void cmd_command_help(goblin__exec *x, int argc,
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
