/* replica_info.c - what being a replica changes outside the link
 * (replica.h): the gates on commands (READONLY, MASTERDOWN, and the
 * master's NOREPLICAS), INFO replication's replica fields and ROLE, and
 * the settings replica-read-only and replica-serve-stale-data. Texts
 * and fields are Redis 7.0's (server.c processCommand, genRedisInfoString,
 * roleCommand).
 */
#include <stdio.h>
#include <string.h>

#include "commands/respond.h"
#include "engine/settings.h"
#include "engine/text.h"
#include "goblin/stream.h"
#include "repl.h"
#include "replica.h"

#define READONLY_TEXT "READONLY You can't write against a read only replica."
#define MASTERDOWN_TEXT "MASTERDOWN Link with MASTER is down and " \
    "replica-serve-stale-data is set to 'no'."

const char *goblin__repl_gate(const goblin__exec *x)
{
    const struct goblin__repl *r = x->eng->repl;
    const struct goblin__link *l = r != NULL ? r->link : NULL;
    uint32_t flags = x->cmd->flags;

    if (r == NULL || (x->sess->flags & SESS_MASTER))
        return NULL;
    if (l == NULL)
        return r->noreplicas && (flags & CMD_WRITE) ? GOBLIN__NOREPLICAS_TEXT
                                                     : NULL;
    if (r->read_only && (flags & CMD_WRITE))
        return READONLY_TEXT;
    if (!r->serve_stale && l->state != GOBLIN__LINK_CONNECTED &&
        !(flags & CMD_STALE))
        return MASTERDOWN_TEXT;
    return NULL;
}

void goblin__repl_gate_update(goblin_engine *eng)
{
    const struct goblin__repl *r = eng->repl;
    const struct goblin__link *l = r != NULL ? r->link : NULL;

    if (r == NULL)
        eng->refuse_writes = false;
    else if (l == NULL)
        eng->refuse_writes = r->noreplicas;
    else
        eng->refuse_writes = r->read_only ||
                             (!r->serve_stale &&
                              l->state != GOBLIN__LINK_CONNECTED);
    goblin__engine_direct_update(eng);
}

static const char *link_status(const struct goblin__link *l)
{
    return l->state == GOBLIN__LINK_CONNECTED ? "up" : "down";
}

bool goblin__link_info(goblin_engine *eng, struct goblin__text *t)
{
    const struct goblin__repl *r = eng->repl;
    const struct goblin__link *l = r != NULL ? r->link : NULL;
    int64_t now = goblin__now_ms(eng->st);
    uint64_t off;

    if (l == NULL)
        return false;
    off = l->state == GOBLIN__LINK_CONNECTED ? goblin_stream_offset(eng)
          : l->cached ? l->cached_off : goblin_stream_offset(eng);
    goblin__text_addf(
        t, "role:slave\r\nmaster_host:%s\r\nmaster_port:%d\r\n"
        "master_link_status:%s\r\nmaster_last_io_seconds_ago:%lld\r\n"
        "master_sync_in_progress:%d\r\nslave_read_repl_offset:%llu\r\n"
        "slave_repl_offset:%llu\r\n", l->host, l->port, link_status(l),
        l->state == GOBLIN__LINK_CONNECTED
            ? (long long)((now - l->last_io_ms) / 1000) : -1ll,
        l->state == GOBLIN__LINK_TRANSFER,
        (unsigned long long)(l->state == GOBLIN__LINK_CONNECTED
                                 ? l->read_off : off),
        (unsigned long long)off);
    if (l->state == GOBLIN__LINK_TRANSFER) {
        uint64_t size = l->eof_form ? 0 : l->size;

        goblin__text_addf(
            t, "master_sync_total_bytes:%lld\r\nmaster_sync_read_bytes:"
            "%llu\r\nmaster_sync_left_bytes:%lld\r\nmaster_sync_perc:%.2f\r\n"
            "master_sync_last_io_seconds_ago:%lld\r\n",
            l->eof_form ? -1ll : (long long)size,
            (unsigned long long)l->got,
            l->eof_form ? -1ll : (long long)(size - l->got),
            size > 0 ? (double)l->got * 100 / (double)size : 0.0,
            (long long)((now - l->last_io_ms) / 1000));
    }
    if (l->state != GOBLIN__LINK_CONNECTED)
        goblin__text_addf(t, "master_link_down_since_seconds:%lld\r\n",
                          l->down_since_ms != 0
                              ? (long long)((now - l->down_since_ms) / 1000)
                              : -1ll);
    goblin__text_addf(
        t, "slave_priority:%lld\r\nslave_read_only:%d\r\n"
        "replica_announced:%d\r\n",
        (long long)goblin_engine_config_int(eng, "replica-priority", 100),
        r->read_only,
        (int)goblin_engine_config_int(eng, "replica-announced", 1));
    return true;
}

static const char *role_state(const struct goblin__link *l)
{
    switch (l->state) {
    case GOBLIN__LINK_CONNECT:
        return "connect";
    case GOBLIN__LINK_CONNECTING:
        return "connecting";
    case GOBLIN__LINK_TRANSFER:
        return "sync";
    case GOBLIN__LINK_CONNECTED:
        return "connected";
    default:
        return "handshake";
    }
}

void goblin__link_role(goblin__exec *x)
{
    const struct goblin__link *l = goblin__link_of(x->eng);

    goblin__reply_array(x, 5);
    goblin__reply_bulk(x, "slave", 5);
    goblin__reply_cstr(x, l->host);
    goblin__reply_int(x, l->port);
    goblin__reply_cstr(x, role_state(l));
    goblin__reply_int(x, l->state == GOBLIN__LINK_CONNECTED
                             ? (int64_t)goblin_stream_offset(x->eng) : -1);
}

/* ---- settings ---- */

static int get_bool(bool v, char *buf, size_t cap)
{
    return snprintf(buf, cap, "%s", v ? "yes" : "no");
}

static int set_bool(goblin_engine *eng, const char *name, bool *field,
                    struct goblin_slice v, const char **why)
{
    int64_t n;

    if (goblin__setting_parse(name, v, &n, why) != 0)
        return GOBLIN_EINVAL;
    *field = n != 0;
    goblin__repl_gate_update(eng);
    return 0;
}

static int get_ro(void *ctx, char *buf, size_t cap)
{
    return get_bool(((goblin_engine *)ctx)->repl->read_only, buf, cap);
}

static int set_ro(void *ctx, struct goblin_slice v, const char **why)
{
    goblin_engine *eng = ctx;

    return set_bool(eng, "replica-read-only", &eng->repl->read_only, v, why);
}

static int get_stale(void *ctx, char *buf, size_t cap)
{
    return get_bool(((goblin_engine *)ctx)->repl->serve_stale, buf, cap);
}

static int set_stale(void *ctx, struct goblin_slice v, const char **why)
{
    goblin_engine *eng = ctx;

    return set_bool(eng, "replica-serve-stale-data", &eng->repl->serve_stale,
                    v, why);
}

int goblin__link_settings_init(goblin_engine *eng)
{
    const struct goblin_setting own[] = {
        {"replica-read-only", "slave-read-only", get_ro, set_ro, eng},
        {"replica-serve-stale-data", "slave-serve-stale-data", get_stale,
         set_stale, eng},
    };
    struct goblin__repl *r = goblin__repl_get(eng);
    int rc;

    if (r == NULL)
        return GOBLIN_ENOMEM;
    r->read_only = true;
    r->serve_stale = true;
    for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
        if ((rc = goblin_engine_setting_add(eng, &own[i])) != 0)
            return rc;
    return 0;
}
