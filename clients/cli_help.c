/* cli_help.c - goblin-cli's HELP, as redis-cli's: "help @group" lists
 * the commands of a documentation group (list, set, sorted-set, hash,
 * string, generic, ...) or, when no command has that group, of an ACL
 * category (blocking, read, write, ...); "help command" shows one. Each
 * entry is the command's syntax, summary, version and group, built from
 * the server's own COMMAND DOCS, so it covers exactly what the server
 * implements and works against any Redis 7 server too.
 *
 * COMMAND DOCS answers a map of name to a map of fields (RESP2: flat
 * arrays of the same pairs); "arguments" is a tree of maps whose "type"
 * is key, string, integer, double, pattern, unix-time, pure-token, oneof
 * or block, with optional "token", "flags" (optional, multiple,
 * multiple_token) and nested "arguments".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli_help.h"

/* The value of field name in map-or-pairs v, or NULL. */
static const struct goblin_resp_value *field(const struct goblin_resp_value *v,
                                             const char *name)
{
    size_t len = strlen(name);

    if (v == NULL || (v->type != GOBLIN_RESP_MAP &&
                      v->type != GOBLIN_RESP_ARRAY))
        return NULL;
    for (size_t i = 0; i + 1 < v->n; i += 2)
        if (v->items[i].str.len == len &&
            memcmp(v->items[i].str.ptr, name, len) == 0)
            return &v->items[i + 1];
    return NULL;
}

static bool has_flag(const struct goblin_resp_value *arg, const char *flag)
{
    const struct goblin_resp_value *f = field(arg, "flags");
    size_t len = strlen(flag);

    for (size_t i = 0; f != NULL && i < f->n; i++)
        if (f->items[i].str.len == len &&
            memcmp(f->items[i].str.ptr, flag, len) == 0)
            return true;
    return false;
}

static bool is(const struct goblin_resp_value *v, const char *s)
{
    return v != NULL && v->str.len == strlen(s) &&
           memcmp(v->str.ptr, s, v->str.len) == 0;
}

static void put(FILE *f, const struct goblin_resp_value *v)
{
    if (v != NULL)
        fwrite(v->str.ptr, 1, v->str.len, f);
}

static void args_syntax(FILE *f, const struct goblin_resp_value *args,
                        const char *sep);

/* One argument without its optional brackets and repetition. */
static void arg_body(FILE *f, const struct goblin_resp_value *a)
{
    const struct goblin_resp_value *type = field(a, "type");
    const struct goblin_resp_value *token = field(a, "token");

    if (token != NULL) {
        put(f, token);
        if (is(type, "pure-token"))
            return;
        fputc(' ', f);
    }
    if (is(type, "oneof"))
        args_syntax(f, field(a, "arguments"), "|");
    else if (is(type, "block"))
        args_syntax(f, field(a, "arguments"), " ");
    else
        put(f, field(a, "name"));
}

static void arg_syntax(FILE *f, const struct goblin_resp_value *a)
{
    bool opt = has_flag(a, "optional"), many = has_flag(a, "multiple");
    const struct goblin_resp_value *token = field(a, "token");

    if (opt)
        fputc('[', f);
    arg_body(f, a);
    if (many) {
        fputs(" [", f);
        if (has_flag(a, "multiple_token") || token == NULL)
            arg_body(f, a);
        else /* the token once: "key [key ...]" after "KEYS" */
            put(f, field(a, "name"));
        fputs(" ...]", f);
    }
    if (opt)
        fputc(']', f);
}

static void args_syntax(FILE *f, const struct goblin_resp_value *args,
                        const char *sep)
{
    for (size_t i = 0; args != NULL && i < args->n; i++) {
        if (i > 0)
            fputs(sep, f);
        arg_syntax(f, &args->items[i]);
    }
}

/* One entry, as redis-cli prints it. */
static void entry(FILE *f, struct goblin_slice name,
                  const struct goblin_resp_value *doc)
{
    const struct goblin_resp_value *args = field(doc, "arguments");

    fputs("\n  ", f);
    for (size_t i = 0; i < name.len; i++) {
        char ch = ((const char *)name.ptr)[i];

        fputc(ch == '|' ? ' ' : (ch >= 'a' && ch <= 'z' ? ch - 32 : ch), f);
    }
    if (args != NULL && args->n > 0) {
        fputc(' ', f);
        args_syntax(f, args, " ");
    }
    fputs("\n  summary: ", f);
    put(f, field(doc, "summary"));
    fputs("\n  since: ", f);
    put(f, field(doc, "since"));
    fputs("\n  group: ", f);
    put(f, field(doc, "group"));
    fputc('\n', f);
}

static int name_cmp(const void *a, const void *b)
{
    const struct goblin_resp_value *x = *(const struct goblin_resp_value *
                                          const *)a;
    const struct goblin_resp_value *y = *(const struct goblin_resp_value *
                                          const *)b;
    size_t n = x->str.len < y->str.len ? x->str.len : y->str.len;
    int c = memcmp(x->str.ptr, y->str.ptr, n);

    return c != 0 ? c : (x->str.len > y->str.len) - (x->str.len < y->str.len);
}

/* Prints the entries of docs (name, doc, ...) sorted by name, those whose
 * group is group (NULL: all). Returns how many. */
static size_t print_docs(FILE *f, const struct goblin_resp_value *docs,
                         const char *group)
{
    const struct goblin_resp_value **names;
    size_t n = 0;

    if (docs == NULL || (docs->type != GOBLIN_RESP_MAP &&
                         docs->type != GOBLIN_RESP_ARRAY) ||
        (names = calloc(docs->n / 2 + 1, sizeof(*names))) == NULL)
        return 0;
    for (size_t i = 0; i + 1 < docs->n; i += 2)
        if (group == NULL || is(field(&docs->items[i + 1], "group"), group))
            names[n++] = &docs->items[i];
    qsort(names, n, sizeof(*names), name_cmp);
    for (size_t i = 0; i < n; i++)
        entry(f, names[i]->str, names[i] + 1);
    free(names);
    return n;
}

static void usage(FILE *f)
{
    fprintf(f, "goblin-cli %s\n"
               "To get help about commands type:\n"
               "      \"help @<group>\" to get a list of commands in "
               "<group>\n"
               "      \"help <command>\" for help on <command>\n"
               "      \"quit\" to exit\n\n"
               "Groups: @generic @string @list @set @sorted-set @hash "
               "@bitmap @hyperloglog\n"
               "@geo @transactions @connection @server; ACL categories as "
               "well: @blocking,\n"
               "@read, @write, @fast, @slow, ...\n",
            GOBLIN_VERSION_STRING);
}

/* "help @X": a documentation group, else an ACL category. */
static int help_group(goblin_client *c, FILE *f, struct goblin_slice g)
{
    struct goblin_slice docs_all[2] = {{"COMMAND", 7}, {"DOCS", 4}};
    struct goblin_slice list[5] = {{"COMMAND", 7}, {"LIST", 4},
                                   {"FILTERBY", 8}, {"ACLCAT", 6}, g};
    const struct goblin_resp_value *v;
    struct goblin_slice *words;
    char group[64];
    size_t n;
    int rc;

    if (g.len == 0 || g.len >= sizeof(group))
        return 0;
    for (n = 0; n < g.len; n++) { /* sorted_set is sorted-set */
        char ch = ((const char *)g.ptr)[n];

        group[n] = ch == '_' ? '-' : (ch >= 'A' && ch <= 'Z' ? ch + 32 : ch);
    }
    group[n] = '\0';
    if ((rc = goblin_client_call(c, 2, docs_all, &v)) != 0)
        return rc;
    if (print_docs(f, v, group) > 0)
        return 0;
    if ((rc = goblin_client_call(c, 5, list, &v)) != 0)
        return rc;
    if (v->type != GOBLIN_RESP_ARRAY && v->type != GOBLIN_RESP_SET)
        return 0; /* not a category either: nothing, as redis-cli */
    if ((words = calloc(v->n + 2, sizeof(*words))) == NULL)
        return -1;
    words[0] = docs_all[0];
    words[1] = docs_all[1];
    for (size_t i = 0; i < v->n; i++)
        words[i + 2] = v->items[i].str;
    rc = v->n == 0 ? 0 : goblin_client_call(c, v->n + 2, words, &v);
    if (rc == 0 && v != NULL)
        print_docs(f, v, NULL);
    free(words);
    return rc;
}

int goblin_cli_help(goblin_client *c, size_t argc,
                    const struct goblin_slice *argv, FILE *f)
{
    struct goblin_slice docs[3] = {{"COMMAND", 7}, {"DOCS", 4}};
    const struct goblin_resp_value *v;
    int rc;

    if (argc < 2) {
        usage(f);
        return 0;
    }
    if (argv[1].len > 1 && ((const char *)argv[1].ptr)[0] == '@')
        rc = help_group(c, f, (struct goblin_slice){
                                  (const char *)argv[1].ptr + 1,
                                  argv[1].len - 1});
    else {
        docs[2] = argv[1];
        if ((rc = goblin_client_call(c, 3, docs, &v)) == 0)
            print_docs(f, v, NULL);
    }
    fflush(f);
    return rc;
}

bool goblin_cli_is_help(size_t argc, const struct goblin_slice *argv)
{
    return argc >= 1 && argv[0].len == 4 &&
           strncasecmp(argv[0].ptr, "help", 4) == 0;
}
