/* acl.c - the user list and its rules (acl.h), with Redis 7's rule
 * grammar (ACLSetUser) and texts.
 *
 * Checks and descriptions are in acl_check.c.
 *
 * ACL SETUSER is all or nothing: the rules are applied to a copy of the
 * user, and only when every rule parsed does the copy's content replace
 * the user's (sessions keep pointing at the same struct). Users are kept
 * sorted by name, as Redis lists them.
 *
 * Command rules are kept twice: as bits (what checks read) and as the
 * ordered rule text after the starting +@all or -@all, for ACL LIST and
 * ACL GETUSER. A command rule replaces an earlier rule for the same
 * command in that text; +@all, -@all, allcommands, nocommands and reset
 * start it again.
 */
#include <stdio.h>
#include <string.h>

#include "acl.h"
#include "commands/respond.h"
#include "session.h"
#include "text.h"

const char *const goblin__acl_cat_names[ACL_NCATS] = {
    "keyspace", "read", "write", "set", "sortedset", "list",
    "hash", "string", "bitmap", "hyperloglog", "geo", "stream",
    "pubsub", "admin", "fast", "slow", "blocking", "dangerous",
    "connection", "transaction", "scripting",
};

static void *dup_bytes(goblin_store *st, const void *p, size_t n)
{
    char *q = goblin__alloc(st, n + 1);

    if (q != NULL) {
        if (n > 0)
            memcpy(q, p, n);
        q[n] = '\0';
    }
    return q;
}

static void free_patterns(goblin_store *st, struct goblin__acl_pattern *v,
                          size_t n)
{
    for (size_t i = 0; i < n; i++)
        goblin__free(st, v[i].pat, v[i].len + 1);
    if (v != NULL)
        goblin__free(st, v, n * sizeof(*v));
}

/* Frees what u holds, not u itself. */
static void user_clear(goblin_store *st, struct goblin__acl_user *u)
{
    if (u->name != NULL)
        goblin__free(st, u->name, u->namelen + 1);
    if (u->pass != NULL)
        goblin__free(st, u->pass, u->npass * sizeof(*u->pass));
    free_patterns(st, u->keys, u->nkeys);
    free_patterns(st, u->channels, u->nchannels);
    if (u->rules != NULL)
        goblin__free(st, u->rules, u->rules_len + 1);
    memset(u, 0, sizeof(*u));
}

static void user_free(goblin_store *st, struct goblin__acl_user *u)
{
    if (u == NULL)
        return;
    user_clear(st, u);
    goblin__free(st, u, sizeof(*u));
}

static struct goblin__acl_pattern *dup_patterns(
    goblin_store *st, const struct goblin__acl_pattern *v, size_t n)
{
    struct goblin__acl_pattern *w;

    if (n == 0)
        return NULL;
    if ((w = goblin__alloc(st, n * sizeof(*w))) == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        w[i] = v[i];
        if ((w[i].pat = dup_bytes(st, v[i].pat, v[i].len)) == NULL) {
            while (i-- > 0)
                goblin__free(st, w[i].pat, w[i].len + 1);
            goblin__free(st, w, n * sizeof(*w));
            return NULL;
        }
    }
    return w;
}

/* A deep copy of u (next not copied), or NULL. */
static struct goblin__acl_user *user_copy(goblin_store *st,
                                          const struct goblin__acl_user *u)
{
    struct goblin__acl_user *c = goblin__alloc(st, sizeof(*c));

    if (c == NULL)
        return NULL;
    *c = *u;
    c->next = NULL;
    c->name = dup_bytes(st, u->name, u->namelen);
    c->rules = dup_bytes(st, u->rules, u->rules_len);
    c->pass = u->npass ? goblin__alloc(st, u->npass * sizeof(*u->pass))
                       : NULL;
    c->keys = dup_patterns(st, u->keys, u->nkeys);
    c->channels = dup_patterns(st, u->channels, u->nchannels);
    if (c->pass != NULL)
        memcpy(c->pass, u->pass, u->npass * sizeof(*u->pass));
    if (c->name == NULL || c->rules == NULL ||
        (u->npass && c->pass == NULL) || (u->nkeys && c->keys == NULL) ||
        (u->nchannels && c->channels == NULL)) {
        c->npass = c->pass ? c->npass : 0;
        c->nkeys = c->keys ? c->nkeys : 0;
        c->nchannels = c->channels ? c->nchannels : 0;
        c->rules_len = c->rules ? c->rules_len : 0;
        c->namelen = c->name ? c->namelen : 0;
        user_free(st, c);
        return NULL;
    }
    return c;
}

/* The channel flag a new or reset user starts with: acl-pubsub-default
 * (Redis 7.0's default, resetchannels, gives none). */
static uint32_t pubsub_default(const goblin_engine *eng)
{
    char v[32];

    return goblin_engine_config_get(eng, "acl-pubsub-default", v,
                                    sizeof(v)) >= 0 &&
                   strcmp(v, "allchannels") == 0
               ? ACL_USER_ALLCHANNELS
               : 0;
}

/* A new user: off, no passwords, no commands, no keys (Redis's
 * ACLCreateUser; the channels follow acl-pubsub-default). */
static struct goblin__acl_user *user_new(goblin_store *st,
                                         struct goblin_slice name)
{
    struct goblin__acl_user *u = goblin__alloc(st, sizeof(*u));

    if (u == NULL)
        return NULL;
    memset(u, 0, sizeof(*u));
    u->name = dup_bytes(st, name.ptr, name.len);
    u->rules = dup_bytes(st, "", 0);
    if (u->name == NULL || u->rules == NULL) {
        u->namelen = u->name ? name.len : 0;
        user_free(st, u);
        return NULL;
    }
    u->namelen = name.len;
    return u;
}

struct goblin__acl_user *goblin__acl_find(const goblin_engine *eng,
                                          struct goblin_slice name)
{
    struct goblin__acl_user *u;

    for (u = eng->users; u != NULL; u = u->next)
        if (u->namelen == name.len && memcmp(u->name, name.ptr, name.len) == 0)
            return u;
    return NULL;
}

static void list_insert(goblin_engine *eng, struct goblin__acl_user *u)
{
    struct goblin__acl_user **pp = &eng->users;

    while (*pp != NULL) {
        size_t n = (*pp)->namelen < u->namelen ? (*pp)->namelen : u->namelen;
        int c = memcmp((*pp)->name, u->name, n);

        if (c > 0 || (c == 0 && (*pp)->namelen > u->namelen))
            break;
        pp = &(*pp)->next;
    }
    u->next = *pp;
    *pp = u;
}

/* ---- rules ---- */

static void set_bit(struct goblin__acl_user *u, size_t i, bool on)
{
    if (on)
        u->allowed[i / 64] |= 1ull << (i % 64);
    else
        u->allowed[i / 64] &= ~(1ull << (i % 64));
}

bool goblin__acl_allows(const struct goblin__acl_user *u, size_t i)
{
    return (u->allowed[i / 64] >> (i % 64)) & 1;
}

static void set_all(struct goblin__acl_user *u, bool on)
{
    memset(u->allowed, on ? 0xff : 0, sizeof(u->allowed));
}

/* Replaces the rule text with "" (after +@all/-@all), or appends rule
 * after dropping an earlier rule for the same name. */
static int rules_reset(goblin_store *st, struct goblin__acl_user *u)
{
    char *e = dup_bytes(st, "", 0);

    if (e == NULL)
        return GOBLIN_ENOMEM;
    goblin__free(st, u->rules, u->rules_len + 1);
    u->rules = e;
    u->rules_len = 0;
    return 0;
}

static int rules_add(goblin_store *st, struct goblin__acl_user *u,
                     const char *rule, size_t len)
{
    struct goblin__text t;
    const char *p = u->rules, *end = u->rules + u->rules_len;

    goblin__text_init(&t, st);
    while (p < end) {   /* keep every rule not naming the same thing */
        const char *sp = memchr(p, ' ', (size_t)(end - p));
        size_t n = sp != NULL ? (size_t)(sp - p) : (size_t)(end - p);

        if (!(n == len && memcmp(p + 1, rule + 1, len - 1) == 0))
            goblin__text_addf(&t, "%.*s ", (int)n, p);
        p += n + (sp != NULL);
    }
    goblin__text_add(&t, rule, len);
    if (t.oom) {
        goblin__text_free(&t);
        return GOBLIN_ENOMEM;
    }
    goblin__free(st, u->rules, u->rules_len + 1);
    u->rules = dup_bytes(st, t.p != NULL ? t.p : "", t.len);
    u->rules_len = u->rules != NULL ? t.len : 0;
    goblin__text_free(&t);
    if (u->rules == NULL) {
        u->rules = dup_bytes(st, "", 0);
        return GOBLIN_ENOMEM;
    }
    return 0;
}

static int category(struct goblin_slice name)
{
    for (int i = 0; i < ACL_NCATS; i++)
        if (goblin__arg_is(name, goblin__acl_cat_names[i]))
            return i;
    return -1;
}

/* +cmd, -cmd, +cmd|sub, +@cat, -@cat. 1 unknown, 0 done, <0 error. */
static int command_rule(goblin_engine *eng, struct goblin__acl_user *u,
                        struct goblin_slice r)
{
    bool on = ((const char *)r.ptr)[0] == '+';
    struct goblin_slice name = {(const char *)r.ptr + 1, r.len - 1};
    const struct goblin__command *c;
    const char *bar;
    size_t i;
    int cat;

    if (name.len > 1 && ((const char *)name.ptr)[0] == '@') {
        name.ptr = (const char *)name.ptr + 1;
        name.len--;
        if (goblin__arg_is(name, "all")) {
            set_all(u, on);
            u->flags = on ? u->flags | ACL_USER_ALLCOMMANDS
                          : u->flags & ~(uint32_t)ACL_USER_ALLCOMMANDS;
            return rules_reset(eng->st, u);
        }
        if ((cat = category(name)) < 0)
            return 1;
        for (i = 0; i < goblin__command_count; i++)
            if (goblin__commands[i].acl & (1u << cat))
                set_bit(u, i, on);
        return rules_add(eng->st, u, r.ptr, r.len);
    }
    bar = memchr(name.ptr, '|', name.len);
    if (bar != NULL)
        name.len = (size_t)(bar - (const char *)name.ptr);
    c = goblin__command_lookup_orig(eng, name); /* names as built */
    if (c == NULL)
        return 1;
    i = (size_t)(c - goblin__commands);
    if (bar != NULL) {
        struct goblin_slice sub = {bar + 1, r.len - 2 - name.len};
        const struct goblin__command *sc =
            c->nsub ? goblin__command_lookup_sub(eng, c, sub) : NULL;

        if (sc == NULL)
            return 1;
        set_bit(u, (size_t)(sc - goblin__commands), on);
        if (on)   /* the container itself, so it resolves */
            set_bit(u, i, true);
    } else {
        for (size_t k = 0; k <= c->nsub; k++)
            set_bit(u, i + k, on);
    }
    return rules_add(eng->st, u, r.ptr, r.len);
}

static int add_pattern(goblin_store *st, struct goblin__acl_pattern **v,
                       size_t *n, uint8_t flags, const char *p, size_t len)
{
    struct goblin__acl_pattern *w;

    for (size_t i = 0; i < *n; i++)   /* the same pattern: merge flags */
        if ((*v)[i].len == len && memcmp((*v)[i].pat, p, len) == 0) {
            (*v)[i].flags |= flags;
            return 0;
        }
    w = goblin__alloc(st, (*n + 1) * sizeof(*w));
    if (w == NULL)
        return GOBLIN_ENOMEM;
    if (*n > 0)
        memcpy(w, *v, *n * sizeof(*w));
    w[*n] = (struct goblin__acl_pattern){flags, len, dup_bytes(st, p, len)};
    if (w[*n].pat == NULL) {
        goblin__free(st, w, (*n + 1) * sizeof(*w));
        return GOBLIN_ENOMEM;
    }
    if (*v != NULL)
        goblin__free(st, *v, *n * sizeof(*w));
    *v = w;
    (*n)++;
    return 0;
}

static void reset_patterns(goblin_store *st, struct goblin__acl_pattern **v,
                           size_t *n)
{
    free_patterns(st, *v, *n);
    *v = NULL;
    *n = 0;
}

/* ~pat, %R~pat, %W~pat, %RW~pat. */
/* Redis refuses a pattern after allkeys / allchannels (it would change
 * nothing); only a repeated ~* or &* passes. */
static const char all_keys_why[] =
    "Adding a pattern after the * pattern (or the 'allkeys' flag) is not "
    "valid and does not have any effect. Try 'resetkeys' to start with an "
    "empty list of patterns";
static const char all_channels_why[] =
    "Adding a pattern after the * pattern (or the 'allchannels' flag) is "
    "not valid and does not have any effect. Try 'resetchannels' to start "
    "with an empty list of channels";

static int key_rule(goblin_store *st, struct goblin__acl_user *u,
                    struct goblin_slice r, const char **why)
{
    const char *p = r.ptr;
    uint8_t flags = 0;
    size_t i = 0;

    if (r.len == 2 && p[0] == '~' && p[1] == '*') {
        if (u->flags & ACL_USER_ALLKEYS)
            return 0;
        u->flags |= ACL_USER_ALLKEYS;
    } else if (u->flags & ACL_USER_ALLKEYS) {
        *why = all_keys_why;
        return GOBLIN_EINVAL;
    }
    if (p[0] == '%') {
        for (i = 1; i < r.len && p[i] != '~'; i++) {
            if (p[i] == 'R' || p[i] == 'r')
                flags |= ACL_KEY_READ;
            else if (p[i] == 'W' || p[i] == 'w')
                flags |= ACL_KEY_WRITE;
            else
                break;
        }
        if (i >= r.len || p[i] != '~' || flags == 0) {
            *why = "Syntax error";
            return GOBLIN_EINVAL;
        }
    } else {
        flags = ACL_KEY_READ | ACL_KEY_WRITE;
    }
    i++;
    return add_pattern(st, &u->keys, &u->nkeys, flags, p + i, r.len - i);
}

static int hex_hash(struct goblin_slice h, unsigned char out[32])
{
    const char *p = h.ptr;

    if (h.len != 64)
        return -1;
    for (size_t i = 0; i < 64; i++) {
        int v = p[i] >= '0' && p[i] <= '9' ? p[i] - '0'
                : p[i] >= 'a' && p[i] <= 'f' ? p[i] - 'a' + 10 : -1;
        if (v < 0)
            return -1;
        out[i / 2] = (unsigned char)(i % 2 ? out[i / 2] | v : v << 4);
    }
    return 0;
}

static int add_hash(goblin_store *st, struct goblin__acl_user *u,
                    const unsigned char h[32])
{
    unsigned char(*w)[32];

    u->flags &= ~(uint32_t)ACL_USER_NOPASS;
    for (size_t i = 0; i < u->npass; i++)
        if (memcmp(u->pass[i], h, 32) == 0)
            return 0;
    w = goblin__alloc(st, (u->npass + 1) * sizeof(*w));
    if (w == NULL)
        return GOBLIN_ENOMEM;
    if (u->npass > 0)
        memcpy(w, u->pass, u->npass * sizeof(*w));
    memcpy(w[u->npass], h, 32);
    if (u->pass != NULL)
        goblin__free(st, u->pass, u->npass * sizeof(*w));
    u->pass = w;
    u->npass++;
    return 0;
}

/* Removes hash h; GOBLIN_ENOKEY when the user has no such password. */
static int del_hash(struct goblin__acl_user *u, const unsigned char h[32])
{
    for (size_t i = 0; i < u->npass; i++)
        if (memcmp(u->pass[i], h, 32) == 0) {
            /* The array keeps its size until freed; it only shrinks. */
            memmove(u->pass[i], u->pass[i + 1],
                    (u->npass - i - 1) * sizeof(*u->pass));
            memset(u->pass[u->npass - 1], 0, 32);
            return 0;
        }
    return GOBLIN_ENOKEY;
}

static void reset_pass(goblin_store *st, struct goblin__acl_user *u)
{
    if (u->pass != NULL)
        goblin__free(st, u->pass, u->npass * sizeof(*u->pass));
    u->pass = NULL;
    u->npass = 0;
    u->flags &= ~(uint32_t)ACL_USER_NOPASS;
}

/* Password rules: >pass <pass #hash !hash. */
static int pass_rule(goblin_store *st, struct goblin__acl_user *u,
                     struct goblin_slice r, const char **why)
{
    const char op = ((const char *)r.ptr)[0];
    struct goblin_slice arg = {(const char *)r.ptr + 1, r.len - 1};
    unsigned char h[32];
    size_t live = u->npass;
    int rc;

    if (op == '>' || op == '<') {
        goblin__sha256(arg.ptr, arg.len, h);
    } else if (hex_hash(arg, h) != 0) {
        *why = "The password hash must be exactly 64 characters and contain "
               "only lowercase hexadecimal characters";
        return GOBLIN_EINVAL;
    }
    if (op == '>' || op == '#')
        return add_hash(st, u, h);
    rc = del_hash(u, h);
    if (rc != 0) {
        *why = "The password you are trying to remove from the user does "
               "not exist";
        return GOBLIN_EINVAL;
    }
    /* Keep the allocation's size exact: shrink by copying. */
    if (live == 1) {
        reset_pass(st, u);
        return 0;
    }
    {
        unsigned char(*w)[32] = goblin__alloc(st, (live - 1) * sizeof(*w));
        if (w == NULL)
            return GOBLIN_ENOMEM;
        memcpy(w, u->pass, (live - 1) * sizeof(*w));
        goblin__free(st, u->pass, live * sizeof(*w));
        u->pass = w;
        u->npass = live - 1;
    }
    return 0;
}

static bool rule_is(struct goblin_slice r, const char *word)
{
    return goblin__arg_is(r, word);
}

/* Applies one rule to u; 0, or <0 with *why. */
static int apply_rule(goblin_engine *eng, struct goblin__acl_user *u,
                      struct goblin_slice r, const char **why)
{
    goblin_store *st = eng->st;
    const char *p = r.ptr;
    int rc;

    *why = "Syntax error";
    if (r.len == 0)
        return GOBLIN_EINVAL;
    if (rule_is(r, "on"))
        u->flags |= ACL_USER_ON;
    else if (rule_is(r, "off"))
        u->flags &= ~(uint32_t)ACL_USER_ON;
    else if (rule_is(r, "nopass")) {
        reset_pass(st, u);
        u->flags |= ACL_USER_NOPASS;
    } else if (rule_is(r, "resetpass"))
        reset_pass(st, u);
    else if (rule_is(r, "sanitize-payload") ||
             rule_is(r, "skip-sanitize-payload")) {
        /* Shown and saved as Redis does; RESTORE checks every payload
         * whole either way (lib/snapshot's reader trusts nothing). */
        u->flags &= ~(uint32_t)(ACL_USER_SANITIZE | ACL_USER_SKIP_SANITIZE);
        u->flags |= rule_is(r, "sanitize-payload") ? ACL_USER_SANITIZE
                                                   : ACL_USER_SKIP_SANITIZE;
    }
    else if (rule_is(r, "allkeys"))
        return u->flags & ACL_USER_ALLKEYS
                   ? 0
                   : key_rule(st, u, (struct goblin_slice){"~*", 2}, why);
    else if (rule_is(r, "resetkeys")) {
        reset_patterns(st, &u->keys, &u->nkeys);
        u->flags &= ~(uint32_t)ACL_USER_ALLKEYS;
    }
    else if (rule_is(r, "allchannels")) {
        reset_patterns(st, &u->channels, &u->nchannels);
        u->flags |= ACL_USER_ALLCHANNELS;
    } else if (rule_is(r, "resetchannels")) {
        reset_patterns(st, &u->channels, &u->nchannels);
        u->flags &= ~(uint32_t)ACL_USER_ALLCHANNELS;
    } else if (rule_is(r, "allcommands") || rule_is(r, "nocommands")) {
        struct goblin_slice all = {rule_is(r, "allcommands") ? "+@all"
                                                             : "-@all", 5};
        return command_rule(eng, u, all);
    } else if (rule_is(r, "reset")) {
        reset_pass(st, u);
        reset_patterns(st, &u->keys, &u->nkeys);
        reset_patterns(st, &u->channels, &u->nchannels);
        u->flags = pubsub_default(eng) | ACL_USER_SANITIZE;
        set_all(u, false);
        return rules_reset(st, u);
    } else if (p[0] == '>' || p[0] == '<' || p[0] == '#' || p[0] == '!')
        return pass_rule(st, u, r, why);
    else if (p[0] == '~' || p[0] == '%')
        return key_rule(st, u, r, why);
    else if (p[0] == '&') {
        if (r.len == 2 && p[1] == '*') {
            u->flags |= ACL_USER_ALLCHANNELS;
            return 0;
        }
        if (u->flags & ACL_USER_ALLCHANNELS) {
            *why = all_channels_why;
            return GOBLIN_EINVAL;
        }
        return add_pattern(st, &u->channels, &u->nchannels, 0, p + 1,
                           r.len - 1);
    } else if ((p[0] == '+' || p[0] == '-') && r.len > 1) {
        rc = command_rule(eng, u, r);
        if (rc == 1)
            *why = "Unknown command or category name in ACL";
        return rc == 1 ? GOBLIN_EINVAL : rc;
    } else
        return GOBLIN_EINVAL;
    return 0;
}

static bool name_ok(struct goblin_slice name)
{
    return memchr(name.ptr, ' ', name.len) == NULL &&
           memchr(name.ptr, '\0', name.len) == NULL;
}

/* Every command bit set and a "~*" pattern for reads and writes. */
static bool all_perms(const struct goblin__acl_user *u)
{
    if (!(u->flags & ACL_USER_ALLCHANNELS))
        return false;
    for (size_t w = 0; w < GOBLIN__ACL_WORDS; w++)
        if (u->allowed[w] != ~(uint64_t)0)
            return false;
    for (size_t i = 0; i < u->nkeys; i++)
        if (u->keys[i].len == 1 && u->keys[i].pat[0] == '*' &&
            u->keys[i].flags == (ACL_KEY_READ | ACL_KEY_WRITE))
            return true;
    return false;
}

int goblin__acl_setuser(goblin_engine *eng, struct goblin_slice name,
                        int nrules, const struct goblin_slice *rules,
                        char *err, size_t errcap, int *bad)
{
    struct goblin__acl_user *u = goblin__acl_find(eng, name), *c, tmp;
    const char *why = NULL;
    int rc = 0, i;

    if (!name_ok(name)) {
        snprintf(err, errcap, "ERR Usernames can't contain spaces or null "
                              "characters");
        *bad = -1;
        return GOBLIN_EINVAL;
    }
    c = u != NULL ? user_copy(eng->st, u) : user_new(eng->st, name);
    if (c == NULL)
        return GOBLIN_ENOMEM;
    if (u == NULL)
        c->flags |= pubsub_default(eng);
    for (i = 0; i < nrules && rc == 0; i++)
        rc = apply_rule(eng, c, rules[i], &why);
    if (rc != 0) {
        *bad = i - 1;
        if (rc == GOBLIN_EINVAL)
            snprintf(err, errcap, "ERR Error in ACL SETUSER modifier "
                     "'%.*s': %s", (int)(rules[i - 1].len > 128 ? 128 :
                     rules[i - 1].len), (const char *)rules[i - 1].ptr, why);
        user_free(eng->st, c);
        return rc;
    }
    c->unrestricted = all_perms(c);
    if (u == NULL) {
        list_insert(eng, c);
        return 0;
    }
    tmp = *u;     /* swap contents: sessions keep u */
    *u = *c;
    u->next = tmp.next;
    tmp.next = NULL;
    *c = tmp;
    user_free(eng->st, c);
    return 0;
}

int goblin__acl_init(goblin_engine *eng)
{
    static const struct goblin_slice rules[] = {
        {"on", 2}, {"nopass", 6}, {"~*", 2}, {"&*", 2}, {"+@all", 5}};
    char err[16];
    int bad, rc;

    rc = goblin__acl_setuser(eng, (struct goblin_slice){"default", 7}, 5,
                             rules, err, sizeof(err), &bad);
    eng->default_user = goblin__acl_find(eng,
                                         (struct goblin_slice){"default", 7});
    return rc;
}

void goblin__acl_free(goblin_engine *eng)
{
    while (eng->users != NULL) {
        struct goblin__acl_user *u = eng->users;
        eng->users = u->next;
        user_free(eng->st, u);
    }
}

int goblin__acl_deluser(goblin_engine *eng, struct goblin_slice name)
{
    struct goblin__acl_user **pp = &eng->users, *u;
    goblin_session *s;

    while (*pp != NULL && !((*pp)->namelen == name.len &&
                            memcmp((*pp)->name, name.ptr, name.len) == 0))
        pp = &(*pp)->next;
    if ((u = *pp) == NULL)
        return 0;
    *pp = u->next;
    for (s = eng->first; s != NULL; s = s->next)
        if (s->acl == u) {
            s->acl = NULL;
            s->flags &= ~(uint32_t)SESS_AUTHED;
            goblin__session_kill(s, eng->running);
        }
    user_free(eng->st, u);
    return 1;
}

int goblin__acl_set_default_pass(goblin_engine *eng, const void *p,
                                 size_t len)
{
    struct goblin_slice r[2] = {{"resetpass", 9}, {"nopass", 6}};
    struct goblin__text t;
    char err[256];
    int bad, rc;

    if (len == 0)
        return goblin__acl_setuser(eng, (struct goblin_slice){"default", 7},
                                   2, r, err, sizeof(err), &bad);
    goblin__text_init(&t, eng->st);
    goblin__text_add(&t, ">", 1);
    goblin__text_add(&t, p, len);
    if (t.oom)
        return GOBLIN_ENOMEM;
    r[1] = (struct goblin_slice){t.p, t.len};
    rc = goblin__acl_setuser(eng, (struct goblin_slice){"default", 7}, 2, r,
                             err, sizeof(err), &bad);
    memset(t.p, 0, t.len);
    goblin__text_free(&t);
    return rc;
}
