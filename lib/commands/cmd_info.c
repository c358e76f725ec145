/* cmd_info.c - INFO: Redis 7's sections and field names, each section a
 * "# Name" line then "field:value" lines, all ending in CRLF, sections
 * separated by an empty line. With no argument (or "default") INFO shows
 * server, clients, memory, persistence, stats, replication, cpu, modules,
 * errorstats, cluster and keyspace; "all" and "everything" add
 * commandstats and latencystats, in Redis's order. Values are real where
 * Goblin has them and Redis's constants (0, "ok", "master") where the
 * feature does not exist.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "engine/tracking.h"
#include "engine/block.h"
#include "goblin/keys.h"
#include "engine/latency.h"
#include "engine/maxmemory.h"
#include "engine/pause.h"
#include "respond.h"
#include "engine/session.h"
#include "engine/settings.h"
#include "engine/text.h"
#include "repl/repl.h"

/* In the order Redis 7.0 writes them. */
enum {
    SEC_SERVER, SEC_CLIENTS, SEC_MEMORY, SEC_PERSISTENCE, SEC_STATS,
    SEC_REPLICATION, SEC_CPU, SEC_MODULES, SEC_COMMANDSTATS, SEC_ERRORSTATS,
    SEC_LATENCYSTATS, SEC_CLUSTER, SEC_KEYSPACE, SEC_COUNT,
};

static const char *const sec_names[SEC_COUNT] = {
    "server", "clients", "memory", "persistence", "stats", "replication",
    "cpu", "modules", "commandstats", "errorstats", "latencystats",
    "cluster", "keyspace",
};

/* 40 hex digits (out holds 41 bytes) that identify this engine. */
static void run_id(const goblin_engine *eng, char *out)
{
    uint64_t seed = (uint64_t)eng->start_ms ^ (uint64_t)(uintptr_t)eng;
    char hex[49];
    int i;

    for (i = 0; i < 48; i += 16) {
        uint64_t h = goblin__hash_bytes(seed + (uint64_t)i, &seed,
                                        sizeof(seed));

        snprintf(hex + i, 17, "%016llx", (unsigned long long)h);
    }
    memcpy(out, hex, 40);
    out[40] = '\0';
}

static void sec_server(goblin__exec *x, struct goblin__text *t)
{
    struct goblin_server_info si = {0};
    struct utsname u;
    int64_t now = goblin__now_ms(x->st), up;
    char rid[48];

    if (x->eng->cfg.server_info != NULL)
        x->eng->cfg.server_info(x->eng->cfg.server_info_ctx, &si);
    if (si.run_id != NULL && strlen(si.run_id) == 40)
        snprintf(rid, sizeof(rid), "%s", si.run_id);
    else
        run_id(x->eng, rid);
    if (uname(&u) != 0)
        memset(&u, 0, sizeof(u));
    up = (now - (si.start_ms != 0 ? si.start_ms : x->eng->start_ms)) / 1000;
    goblin__text_addf(t, "redis_version:%s\r\nredis_git_sha1:00000000\r\n"
                      "redis_git_dirty:0\r\nredis_build_id:0\r\n"
                      "redis_mode:standalone\r\nos:%s %s %s\r\n"
                      "arch_bits:%d\r\nmonotonic_clock:%s\r\n"
                      "multiplexing_api:epoll\r\ngcc_version:%d.%d.%d\r\n",
                      GOBLIN__REDIS_VERSION, u.sysname, u.release, u.machine,
                      (int)sizeof(void *) * 8,
                      x->eng->use_tsc ? "X86 TSC" : "POSIX clock_gettime",
                      __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__);
    goblin__text_addf(t, "process_id:%lld\r\nprocess_supervised:no\r\n"
                      "run_id:%s\r\ntcp_port:%d\r\nserver_time_usec:%lld\r\n"
                      "uptime_in_seconds:%lld\r\nuptime_in_days:%lld\r\n"
                      "hz:%d\r\nconfigured_hz:%d\r\nlru_clock:%lld\r\n"
                      "executable:%s\r\nconfig_file:%s\r\n"
                      "goblin_version:%s\r\n",
                      (long long)(si.pid != 0 ? si.pid : getpid()), rid,
                      si.tcp_port, (long long)goblin_store_now_us(x->st),
                      (long long)up,
                      (long long)up / 86400, x->eng->hz, x->eng->hz,
                      (long long)(now / 1000) & ((1 << 24) - 1),
                      si.executable != NULL ? si.executable : "",
                      si.config_file != NULL ? si.config_file : "",
                      GOBLIN_VERSION_STRING);
}

/* A registered setting's value as text, or dflt when none is. */
static void setting_text(const goblin_engine *eng, const char *name,
                         const char *dflt, char *buf, size_t cap)
{
    const struct goblin__setting *s =
        goblin__setting_find(eng, (struct goblin_slice){name, strlen(name)});
    int n;

    if (s == NULL || (n = s->s.get(s->s.ctx, buf, cap - 1)) < 0)
        n = snprintf(buf, cap, "%s", dflt);
    buf[(size_t)n < cap ? (size_t)n : cap - 1] = '\0';
}

static void sec_clients(goblin__exec *x, struct goblin__text *t)
{
    char maxclients[32];
    size_t in = 0, out = 0;
    goblin_session *s;

    for (s = x->eng->first; s != NULL; s = s->next) {
        if (s->in_len - s->in_pos > in)
            in = s->in_len - s->in_pos;
        if (s->out_peak > out)
            out = s->out_peak;
    }
    setting_text(x->eng, "maxclients", "10000", maxclients,
                 sizeof(maxclients));
    goblin__text_addf(t, "connected_clients:%zu\r\ncluster_connections:0\r\n"
                      "maxclients:%s\r\nclient_recent_max_input_buffer:%zu\r\n"
                      "client_recent_max_output_buffer:%zu\r\n"
                      "blocked_clients:%zu\r\ntracking_clients:%zu\r\n"
                      "clients_in_timeout_table:%zu\r\n",
                      x->eng->nsessions, maxclients, in, out,
                      goblin__block_count(x->eng) +
                          goblin__pause_count(x->eng),
                      x->eng->tracking_clients,
                      goblin__block_timed_count(x->eng));
}

static void sec_persistence(goblin__exec *x, struct goblin__text *t)
{
    goblin__persist_info(x, t);
}

static void sec_stats(goblin__exec *x, struct goblin__text *t)
{
    const goblin_engine *e = x->eng;

    goblin__text_addf(t, "total_connections_received:%llu\r\n"
                      "total_commands_processed:%llu\r\n"
                      "instantaneous_ops_per_sec:%llu\r\n"
                      "total_net_input_bytes:%llu\r\n"
                      "total_net_output_bytes:%llu\r\n"
                      "rejected_connections:0\r\n",
                      (unsigned long long)e->stat_connections,
                      (unsigned long long)e->stat_commands,
                      (unsigned long long)goblin__ops_per_sec(e),
                      (unsigned long long)e->stat_net_in,
                      (unsigned long long)e->stat_net_out);
    goblin__repl_stats(e, t);
    goblin__text_addf(t, "expired_keys:%llu\r\n"
                      "evicted_keys:%llu\r\nkeyspace_hits:%llu\r\n"
                      "keyspace_misses:%llu\r\npubsub_channels:%zu\r\n"
                      "pubsub_patterns:%zu\r\npubsubshard_channels:%zu\r\n"
                      "tracking_total_keys:%zu\r\n"
                      "tracking_total_items:%zu\r\n"
                      "tracking_total_prefixes:%zu\r\n"
                      "total_error_replies:%llu\r\n"
                      "unexpected_error_replies:0\r\n",
                      (unsigned long long)e->stat_expired_keys,
                      (unsigned long long)e->stat_evicted_keys,
                      (unsigned long long)e->stat_keyspace.hits,
                      (unsigned long long)e->stat_keyspace.misses,
                      goblin__ps_names(&e->pubsub, GOBLIN__PS_CHANNEL),
                      goblin__ps_names(&e->pubsub, GOBLIN__PS_PATTERN),
                      goblin__ps_names(&e->pubsub, GOBLIN__PS_SHARD),
                      e->tkeys, e->titems,
                      goblin__tracking_total_prefixes(e),
                      (unsigned long long)e->stat_errors);
}

static void sec_replication(goblin__exec *x, struct goblin__text *t)
{
    goblin__repl_info(x->eng, t);
}

static void sec_cpu(struct goblin__text *t)
{
    struct rusage ru;

    if (getrusage(RUSAGE_SELF, &ru) != 0)
        memset(&ru, 0, sizeof(ru));
    goblin__text_addf(t, "used_cpu_sys:%ld.%06ld\r\nused_cpu_user:%ld.%06ld\r\n"
                      "used_cpu_sys_children:0.000000\r\n"
                      "used_cpu_user_children:0.000000\r\n",
                      (long)ru.ru_stime.tv_sec, (long)ru.ru_stime.tv_usec,
                      (long)ru.ru_utime.tv_sec, (long)ru.ru_utime.tv_usec);
}

static void sec_errorstats(goblin__exec *x, struct goblin__text *t)
{
    const struct goblin__errstats *e = &x->eng->errstats;

    for (size_t i = 0; i < e->n; i++)
        goblin__text_addf(t, "errorstat_%.*s:count=%llu\r\n",
                          (int)e->e[i].len, e->e[i].name,
                          (unsigned long long)e->e[i].count);
}

static void sec_keyspace(goblin__exec *x, struct goblin__text *t)
{
    for (int i = 0; i < x->eng->ndbs; i++) {
        goblin_store *st = goblin__db_peek(x->eng, i);
        size_t keys, expires;

        if (st == NULL)
            continue;
        keys = goblin_key_count(st);
        expires = goblin_key_expires_count(st);
        if (keys > 0 || expires > 0)
            goblin__text_addf(t, "db%d:keys=%zu,expires=%zu,avg_ttl=0\r\n",
                              i, keys, expires);
    }
}

static void sec_commandstats(goblin__exec *x, struct goblin__text *t)
{
    size_t i;

    for (i = 0; i < goblin__command_count; i++) {
        const struct goblin__cmdstat *c = &x->eng->stats[i];
        uint64_t us = goblin__ticks_to_us(x->eng, c->ticks);

        if (c->calls == 0 && c->rejected == 0 && c->failed == 0)
            continue;
        goblin__text_addf(t, "cmdstat_%s:calls=%llu,usec=%llu,"
                          "usec_per_call=%.2f,rejected_calls=%llu,"
                          "failed_calls=%llu\r\n",
                          goblin__commands[i].fullname,
                          (unsigned long long)c->calls,
                          (unsigned long long)us,
                          c->calls > 0 ? (double)us / (double)c->calls : 0.0,
                          (unsigned long long)c->rejected,
                          (unsigned long long)c->failed);
    }
}

/* Redis's fillPercentileDistributionLatencies: per command timed while
 * latency-tracking was on, each percentile of
 * latency-tracking-info-percentiles, labelled as CONFIG GET shows it. */
static void sec_latencystats(goblin__exec *x, struct goblin__text *t)
{
    char list[256], label[16][64];
    double pct[16], us[16];
    int np = 0;
    char *w, *save = NULL;

    if (!x->eng->latency_tracking)
        return;
    setting_text(x->eng, "latency-tracking-info-percentiles", "50 99 99.9",
                 list, sizeof(list));
    for (w = strtok_r(list, " ", &save); w != NULL && np < 16;
         w = strtok_r(NULL, " ", &save)) {
        snprintf(label[np], sizeof(label[np]), "%s", w);
        pct[np++] = strtod(w, NULL);
    }
    for (size_t i = 0; i < goblin__command_count; i++) {
        if (!goblin__cmdhist_percentiles(x->eng, i, pct, np, us))
            continue;
        goblin__text_addf(t, "latency_percentiles_usec_%s:",
                          goblin__commands[i].fullname);
        for (int j = 0; j < np; j++)
            goblin__text_addf(t, "%sp%s=%.3f", j > 0 ? "," : "", label[j],
                              us[j]);
        goblin__text_add(t, "\r\n", 2);
    }
}

static void section(goblin__exec *x, struct goblin__text *t, int sec)
{
    static const char *const titles[SEC_COUNT] = {
        "Server", "Clients", "Memory", "Persistence", "Stats",
        "Replication", "CPU", "Modules", "Commandstats", "Errorstats",
        "Latencystats", "Cluster", "Keyspace",
    };

    if (t->len > 0)
        goblin__text_add(t, "\r\n", 2);
    goblin__text_addf(t, "# %s\r\n", titles[sec]);
    switch (sec) {
    case SEC_SERVER: sec_server(x, t); break;
    case SEC_CLIENTS: sec_clients(x, t); break;
    case SEC_MEMORY: goblin__info_memory(x, t); break;
    case SEC_PERSISTENCE: sec_persistence(x, t); break;
    case SEC_STATS: sec_stats(x, t); break;
    case SEC_REPLICATION: sec_replication(x, t); break;
    case SEC_CPU: sec_cpu(t); break;
    case SEC_ERRORSTATS: sec_errorstats(x, t); break;
    case SEC_CLUSTER: goblin__text_add(t, "cluster_enabled:0\r\n", 19); break;
    case SEC_KEYSPACE: sec_keyspace(x, t); break;
    case SEC_COMMANDSTATS: sec_commandstats(x, t); break;
    case SEC_LATENCYSTATS: sec_latencystats(x, t); break;
    default: break;
    }
}

/* Which sections argv asks for, as bits. */
static unsigned wanted(int argc, const struct goblin_slice *argv)
{
    unsigned bits = 0, dflt = ((1u << SEC_COUNT) - 1) &
                              ~(1u << SEC_COMMANDSTATS | 1u << SEC_LATENCYSTATS);
    int j, i;

    if (argc == 1)
        return dflt;
    for (j = 1; j < argc; j++) {
        if (goblin__arg_is(argv[j], "default"))
            bits |= dflt;
        else if (goblin__arg_is(argv[j], "all") ||
                 goblin__arg_is(argv[j], "everything"))
            bits |= (1u << SEC_COUNT) - 1;
        for (i = 0; i < SEC_COUNT; i++)
            if (goblin__arg_is(argv[j], sec_names[i]))
                bits |= 1u << i;
    }
    return bits;
}

void goblin__cmd_info(goblin__exec *x, int argc,
                      const struct goblin_slice *argv)
{
    unsigned bits = wanted(argc, argv);
    struct goblin__text t;
    int i;

    goblin__text_init(&t, x->st);
    for (i = 0; i < SEC_COUNT; i++)
        if (bits & (1u << i))
            section(x, &t, i);
    if (t.oom)
        goblin__reply_code(x, GOBLIN_ENOMEM);
    else
        goblin__reply_verbatim(x, t.p != NULL ? t.p : "", t.len);
    goblin__text_free(&t);
}
