/* cmd_config.c - CONFIG GET, SET, RESETSTAT and HELP over the settings
 * registry, and TIME, with Redis 7's semantics (config.c, server.c).
 *
 * CONFIG GET takes several patterns; an exact name (no glob characters)
 * is echoed as given, a glob lists the names it matches (a setting's old
 * name too, as a pair of its own, as Redis 7.0 does); each is listed
 * once. Directives that are not settings (import-rdb) are not shown. CONFIG SET takes several pairs and applies all or none:
 * values are set in order and, when one fails, those already set get
 * their old values back.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "goblin/keys.h"
#include "respond.h"
#include "engine/latency.h"
#include "engine/session.h"
#include "engine/settings.h"

static bool has_glob(struct goblin_slice p)
{
    const char *s = p.ptr;
    size_t i;

    for (i = 0; i < p.len; i++)
        if (s[i] == '*' || s[i] == '?' || s[i] == '[')
            return true;
    return false;
}

/* Glob matches: 1 for the name, 2 for the old name (Redis 7.0 lists
 * both, as two entries). */
static int setting_matches(const struct goblin__setting *s,
                           struct goblin_slice pat)
{
    return (goblin_glob_match(pat.ptr, pat.len, s->name, strlen(s->name),
                              1) ? 1 : 0) |
           (s->alias != NULL &&
                    goblin_glob_match(pat.ptr, pat.len, s->alias,
                                      strlen(s->alias), 1)
                ? 2 : 0);
}

static bool hidden(const struct goblin__setting *s)
{
    return s->desc != NULL && (s->desc->flags & GOBLIN__SF_HIDDEN);
}

static void reply_value(goblin__exec *x, const struct goblin__setting *s)
{
    char buf[GOBLIN_SETTING_VALUE_MAX];
    int n = s->s.get(s->s.ctx, buf, sizeof(buf));

    goblin__reply_bulk(x, buf, n < 0 ? 0 : (size_t)n);
}

/* Marks in sel (one byte per setting) what the patterns select and
 * returns how many pairs: bit 0 the name by a glob, bit 1 the old name by
 * a glob, or 4 + j for the exact pattern argv[j], shown as given. */
static size_t config_select(goblin__exec *x, int argc,
                            const struct goblin_slice *argv, uint8_t *sel)
{
    size_t i, n = 0;
    int j;

    for (j = 2; j < argc; j++) {
        bool glob = has_glob(argv[j]);
        const struct goblin__setting *exact =
            glob ? NULL : goblin__setting_find(x->eng, argv[j]);

        for (i = 0; i < x->eng->nsettings; i++) {
            const struct goblin__setting *s = &x->eng->settings[i];
            int m;

            if (hidden(s) || sel[i] >= 4)
                continue;
            if (!glob) {
                if (s == exact && sel[i] == 0) {
                    sel[i] = (uint8_t)(4 + j);
                    n++;
                }
                continue;
            }
            m = setting_matches(s, argv[j]) & ~sel[i];
            n += (size_t)((m & 1) + ((m & 2) >> 1));
            sel[i] |= (uint8_t)m;
        }
    }
    return n;
}

void goblin__cmd_config_get(goblin__exec *x, int argc,
                            const struct goblin_slice *argv)
{
    uint8_t sel[1024] = {0};
    size_t i, n;

    if (x->eng->nsettings > sizeof(sel) || argc > 200) {
        goblin__reply_error(x, GOBLIN__ERR_SYNTAX);
        return;
    }
    n = config_select(x, argc, argv, sel);
    goblin__reply_map(x, n);
    for (i = 0; i < x->eng->nsettings; i++) {
        const struct goblin__setting *s = &x->eng->settings[i];

        if (sel[i] >= 4) {
            goblin__reply_slice(x, argv[sel[i] - 4]);
            reply_value(x, s);
            continue;
        }
        if (sel[i] & 1) {
            goblin__reply_cstr(x, s->name);
            reply_value(x, s);
        }
        if (sel[i] & 2) {
            goblin__reply_cstr(x, s->alias);
            reply_value(x, s);
        }
    }
}

struct old_value {
    const struct goblin__setting *s;
    const char *shown; /* the name that matched: Redis names it so */
    char buf[GOBLIN_SETTING_VALUE_MAX];
    int len;
};

static void set_failed(goblin__exec *x, const char *name, const char *why)
{
    goblin__reply_errorf(x, "ERR CONFIG SET failed (possibly related to "
                            "argument '%s') - %s",
                         name, why);
}

/* The name of s that arg spells: its old name, or its name. */
static const char *matched_name(const struct goblin__setting *s,
                                struct goblin_slice arg)
{
    if (s->alias != NULL && strlen(s->alias) == arg.len &&
        strncasecmp(s->alias, arg.ptr, arg.len) == 0)
        return s->alias;
    return s->name;
}

/* Finds and checks every name first, as Redis does before setting
 * anything; replies the error and returns false. */
static bool config_check(goblin__exec *x, int argc,
                         const struct goblin_slice *argv,
                         struct old_value *old)
{
    int j, k;

    for (j = 2; j < argc; j += 2) {
        const struct goblin__setting *s = goblin__setting_find(x->eng,
                                                               argv[j]);

        if (s == NULL) {
            goblin__reply_errorf(x, "ERR Unknown option or number of "
                                    "arguments for CONFIG SET - '%.*s'",
                                 goblin__cstr_len(argv[j]),
                                 (const char *)argv[j].ptr);
            return false;
        }
        if (goblin__setting_immutable(s)) {
            set_failed(x, matched_name(s, argv[j]),
                       "can't set immutable config");
            return false;
        }
        /* Redis keeps an old name as a setting of its own: the same
         * setting under both names is not a duplicate. */
        for (k = 0; k < (j - 2) / 2; k++) {
            if (old[k].s == s && old[k].shown == matched_name(s, argv[j])) {
                goblin__reply_errorf(x, "ERR CONFIG SET failed (possibly "
                                        "related to argument '%.*s') - "
                                        "duplicate parameter",
                                     goblin__cstr_len(argv[j]),
                                     (const char *)argv[j].ptr);
                return false;
            }
        }
        old[(j - 2) / 2].s = s;
        old[(j - 2) / 2].shown = matched_name(s, argv[j]);
    }
    return true;
}

void goblin__cmd_config_set(goblin__exec *x, int argc,
                            const struct goblin_slice *argv)
{
    struct old_value old[64];
    const char *why = "argument couldn't be parsed";
    int j, k, n = (argc - 2) / 2;

    if (argc % 2 != 0 || n > 64) {
        goblin__reply_error(x, GOBLIN__ERR_SYNTAX);
        return;
    }
    memset(old, 0, sizeof(old));
    if (!config_check(x, argc, argv, old))
        return;
    for (k = 0; k < n; k++)
        old[k].len = old[k].s->s.get(old[k].s->s.ctx, old[k].buf,
                                     sizeof(old[k].buf));
    for (j = 0; j < n; j++) {
        if (old[j].s->s.set(old[j].s->s.ctx, argv[3 + 2 * j], &why) != 0) {
            for (k = j - 1; k >= 0; k--)
                old[k].s->s.set(old[k].s->s.ctx,
                                (struct goblin_slice){old[k].buf,
                                                      (size_t)old[k].len},
                                &why);
            set_failed(x, old[j].shown, why);
            return;
        }
    }
    for (j = 0; j < n; j++)
        ((struct goblin__setting *)old[j].s)->changed = true;
    goblin__reply_ok(x);
}

void goblin__cmd_config_resetstat(goblin__exec *x, int argc,
                                  const struct goblin_slice *argv)
{
    goblin_engine *e = x->eng;

    (void)argc;
    (void)argv;
    memset(e->stats, 0, goblin__command_count * sizeof(*e->stats));
    goblin__cmdhist_reset(e);
    goblin__errstats_reset(e);
    e->stat_commands = e->stat_connections = 0;
    e->stat_net_in = e->stat_net_out = 0;
    e->stat_errors = e->stat_rejected = 0;
    e->stat_keyspace.hits = e->stat_keyspace.misses = 0;
    e->stat_expired_keys = 0;
    e->stat_evicted_keys = 0;
    memset(e->ops_samples, 0, sizeof(e->ops_samples));
    goblin__reply_ok(x);
}

void goblin__cmd_config_help(goblin__exec *x, int argc,
                             const struct goblin_slice *argv)
{
    static const char *const help[] = {
        "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "GET <pattern>",
        ("    Return parameters matching the glob-like <pattern> and their "
         "values."),
        "SET <directive> <value>",
        "    Set the configuration <directive> to <value>.",
        "RESETSTAT",
        "    Reset statistics reported by the INFO command.",
        "REWRITE",
        "    Rewrite the configuration file.",
        "HELP",
        "    Prints this help.",
    };

    (void)argc;
    (void)argv;
    goblin__reply_help(x, help, sizeof(help) / sizeof(help[0]));
}

/* TIME: the store's clock in microseconds (goblin_config.now_us). */
void goblin__cmd_time(goblin__exec *x, int argc,
                      const struct goblin_slice *argv)
{
    int64_t us = goblin_store_now_us(x->st);

    (void)argc;
    (void)argv;
    goblin__reply_array(x, 2);
    goblin_sink_bulk_int64(x->sink, us / 1000000);
    goblin_sink_bulk_int64(x->sink, us % 1000000);
}
