/* cmd_config.c - CONFIG GET, SET, RESETSTAT and HELP over the settings
 * registry, and TIME, with Redis 7's semantics (config.c, server.c).
 *
 * CONFIG GET takes several patterns; an exact name (no glob characters)
 * is echoed as given, a glob lists the names it matches; each setting is
 * listed once. CONFIG SET takes several pairs and applies all or none:
 * values are set in order and, when one fails, those already set get
 * their old values back.
 */
#include <stdio.h>
#include <string.h>

#include "goblin/keys.h"
#include "respond.h"
#include "session.h"
#include "settings.h"

static bool has_glob(struct goblin_slice p)
{
    const char *s = p.ptr;
    size_t i;

    for (i = 0; i < p.len; i++)
        if (s[i] == '*' || s[i] == '?' || s[i] == '[')
            return true;
    return false;
}

static bool setting_matches(const struct goblin__setting *s,
                            struct goblin_slice pat)
{
    return goblin_glob_match(pat.ptr, pat.len, s->name, strlen(s->name),
                             1) ||
           (s->alias != NULL &&
            goblin_glob_match(pat.ptr, pat.len, s->alias, strlen(s->alias),
                              1));
}

static void reply_value(goblin__exec *x, const struct goblin__setting *s)
{
    char buf[GOBLIN_SETTING_VALUE_MAX];
    int n = s->s.get(s->s.ctx, buf, sizeof(buf));

    goblin__reply_bulk(x, buf, n < 0 ? 0 : (size_t)n);
}

/* Marks in sel (one flag per setting) what the patterns select; returns
 * how many. The name shown for an exact pattern is the pattern itself. */
static size_t config_select(goblin__exec *x, int argc,
                            const struct goblin_slice *argv, int8_t *sel)
{
    size_t i, n = 0;
    int j;

    for (j = 2; j < argc; j++) {
        for (i = 0; i < x->eng->nsettings; i++) {
            const struct goblin__setting *s = &x->eng->settings[i];
            bool hit = has_glob(argv[j])
                           ? setting_matches(s, argv[j])
                           : s == goblin__setting_find(x->eng, argv[j]);

            if (hit && sel[i] == 0) {
                sel[i] = has_glob(argv[j]) ? 1 : (int8_t)(2 + j);
                n++;
            }
        }
    }
    return n;
}

void cmd_config_get(goblin__exec *x, int argc,
                    const struct goblin_slice *argv)
{
    int8_t sel[256] = {0};
    size_t i, n;

    if (x->eng->nsettings > sizeof(sel) || argc > 100) {
        goblin__reply_error(x, GOBLIN__ERR_SYNTAX);
        return;
    }
    n = config_select(x, argc, argv, sel);
    goblin__reply_map(x, n);
    for (i = 0; i < x->eng->nsettings; i++) {
        if (sel[i] == 0)
            continue;
        if (sel[i] == 1)
            goblin__reply_cstr(x, x->eng->settings[i].name);
        else
            goblin__reply_slice(x, argv[sel[i] - 2]);
        reply_value(x, &x->eng->settings[i]);
    }
}

struct old_value {
    const struct goblin__setting *s;
    char buf[GOBLIN_SETTING_VALUE_MAX];
    int len;
};

static void set_failed(goblin__exec *x, const struct goblin__setting *s,
                       const char *why)
{
    goblin__reply_errorf(x, "ERR CONFIG SET failed (possibly related to "
                            "argument '%s') - %s",
                         s->name, why);
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
        if (s->s.set == NULL) {
            set_failed(x, s, "can't set immutable config");
            return false;
        }
        for (k = 0; k < (j - 2) / 2; k++) {
            if (old[k].s == s) {
                set_failed(x, s, "duplicate parameter");
                return false;
            }
        }
        old[(j - 2) / 2].s = s;
    }
    return true;
}

void cmd_config_set(goblin__exec *x, int argc,
                    const struct goblin_slice *argv)
{
    struct old_value old[16];
    const char *why = "argument couldn't be parsed";
    int j, k, n = (argc - 2) / 2;

    if (argc % 2 != 0 || n > 16) {
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
            set_failed(x, old[j].s, why);
            return;
        }
    }
    for (j = 0; j < n; j++)
        ((struct goblin__setting *)old[j].s)->changed = true;
    goblin__reply_ok(x);
}

void cmd_config_resetstat(goblin__exec *x, int argc,
                          const struct goblin_slice *argv)
{
    goblin_engine *e = x->eng;

    (void)argc;
    (void)argv;
    memset(e->stats, 0, goblin__command_count * sizeof(*e->stats));
    memset(e->errstat, 0, sizeof(e->errstat));
    e->stat_commands = e->stat_connections = 0;
    e->stat_net_in = e->stat_net_out = 0;
    e->stat_errors = e->stat_rejected = 0;
    e->stat_keyspace_hits = e->stat_keyspace_misses = 0;
    e->stat_expired_keys = 0;
    e->stat_evicted_keys = 0;
    memset(e->ops_samples, 0, sizeof(e->ops_samples));
    goblin__reply_ok(x);
}

void cmd_config_help(goblin__exec *x, int argc,
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
void cmd_time(goblin__exec *x, int argc, const struct goblin_slice *argv)
{
    int64_t us = goblin_store_now_us(x->st);

    (void)argc;
    (void)argv;
    goblin__reply_array(x, 2);
    goblin_sink_bulk_int64(x->sink, us / 1000000);
    goblin_sink_bulk_int64(x->sink, us % 1000000);
}
