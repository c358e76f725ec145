/* maxmemory.c - memory limits in the command layer: the maxmemory,
 * maxmemory-policy and maxmemory-samples settings, eviction before a
 * command runs, the OOM refusal, OBJECT IDLETIME, and INFO's memory
 * section (docs/memory.md).
 *
 * As Redis 7.0's processCommand: with maxmemory set, keys are evicted
 * before every command until used memory is at or under the limit. When
 * that fails (noeviction, or nothing the policy may evict), a command
 * flagged deny-oom is refused with the OOM error, and so is EXEC when a
 * queued command is deny-oom, and any command that would be queued in
 * MULTI (queueing takes memory); EXEC, DISCARD, QUIT and RESET pass.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "repl/replica.h"
#include "goblin/keys.h"
#include "goblin/numtext.h"
#include "commands/handlers.h"
#include "goblin/script.h"
#include "latency.h"
#include "maxmemory.h"
#include "pause.h"
#include "commands/respond.h"
#include "settings.h"
#include "text.h"

static const char *const policy_names[GOBLIN__POLICY_COUNT] = {
    "volatile-lru", "allkeys-lru", "volatile-random", "allkeys-random",
    "volatile-ttl", "noeviction", "volatile-lfu", "allkeys-lfu",
};

static bool is_lfu(int policy)
{
    return policy == GOBLIN__POLICY_VOLATILE_LFU ||
           policy == GOBLIN__POLICY_ALLKEYS_LFU;
}

static int get_maxmemory(void *ctx, char *buf, size_t cap)
{
    return snprintf(buf, cap, "%llu",
                    (unsigned long long)((goblin_engine *)ctx)->maxmemory);
}

static int set_maxmemory(void *ctx, struct goblin_slice v, const char **why)
{
    int64_t n;

    if (goblin__setting_parse("maxmemory", v, &n, why) != 0)
        return GOBLIN_EINVAL;
    ((goblin_engine *)ctx)->maxmemory = (uint64_t)n;
    goblin__engine_direct_update(ctx);
    return 0;
}

static int get_policy(void *ctx, char *buf, size_t cap)
{
    return snprintf(buf, cap, "%s",
                    policy_names[((goblin_engine *)ctx)->policy]);
}

/* The eviction settings live in eng->st; every other database's store
 * takes a copy (clear: its pool's scores meant another policy). */
static void sync_stores(goblin_engine *eng, bool clear)
{
    for (int i = 0; eng->dbs_open > 0 && i < eng->ndbs; i++) {
        goblin_store *st = goblin__db_peek(eng, i);

        if (st == NULL || st == eng->st)
            continue;
        if (clear)
            goblin__evpool_clear(st);
        st->lfu = eng->st->lfu;
        st->lfu_log_factor = eng->st->lfu_log_factor;
        st->lfu_decay_time = eng->st->lfu_decay_time;
    }
}

/* Switching between LRU and LFU reinterprets every key's stamp, as in
 * Redis ("LRU and LFU data will take some time to adjust"). */
static int set_policy(void *ctx, struct goblin_slice v, const char **why)
{
    goblin_engine *eng = ctx;

    for (int i = 0; i < GOBLIN__POLICY_COUNT; i++) {
        if (!goblin__arg_is(v, policy_names[i]))
            continue;
        bool clear = eng->policy != i;

        if (clear) /* the pool's scores meant another thing */
            goblin__evpool_clear(eng->st);
        eng->policy = i;
        eng->st->lfu = is_lfu(i);
        sync_stores(eng, clear);
        return 0;
    }
    return goblin__setting_parse("maxmemory-policy", v, &(int64_t){0}, why);
}

static int get_samples(void *ctx, char *buf, size_t cap)
{
    return snprintf(buf, cap, "%u", ((goblin_engine *)ctx)->samples);
}

static int set_samples(void *ctx, struct goblin_slice v, const char **why)
{
    int64_t n;

    if (goblin__setting_parse("maxmemory-samples", v, &n, why) != 0)
        return GOBLIN_EINVAL;
    ((goblin_engine *)ctx)->samples = (unsigned)n;
    return 0;
}

/* lfu-log-factor and lfu-decay-time: Redis's range 0..INT_MAX. */
static int get_int(const int *p, char *buf, size_t cap)
{
    return snprintf(buf, cap, "%d", *p);
}

static int set_int(int *p, const char *name, struct goblin_slice v,
                   const char **why)
{
    int64_t n;

    if (goblin__setting_parse(name, v, &n, why) != 0)
        return GOBLIN_EINVAL;
    *p = (int)n;
    return 0;
}

static int get_log_factor(void *ctx, char *buf, size_t cap)
{
    return get_int(&((goblin_engine *)ctx)->st->lfu_log_factor, buf, cap);
}

static int set_log_factor(void *ctx, struct goblin_slice v, const char **why)
{
    int rc = set_int(&((goblin_engine *)ctx)->st->lfu_log_factor,
                     "lfu-log-factor", v, why);

    sync_stores(ctx, false);
    return rc;
}

static int get_decay(void *ctx, char *buf, size_t cap)
{
    return get_int(&((goblin_engine *)ctx)->st->lfu_decay_time, buf, cap);
}

static int set_decay(void *ctx, struct goblin_slice v, const char **why)
{
    int rc = set_int(&((goblin_engine *)ctx)->st->lfu_decay_time,
                     "lfu-decay-time", v, why);

    sync_stores(ctx, false);
    return rc;
}

int goblin__maxmemory_init(goblin_engine *eng)
{
    const struct goblin_setting own[] = {
        {"maxmemory", NULL, get_maxmemory, set_maxmemory, eng},
        {"maxmemory-policy", NULL, get_policy, set_policy, eng},
        {"maxmemory-samples", NULL, get_samples, set_samples, eng},
        {"lfu-log-factor", NULL, get_log_factor, set_log_factor, eng},
        {"lfu-decay-time", NULL, get_decay, set_decay, eng},
    };
    int rc;

    eng->policy = GOBLIN__POLICY_NOEVICTION;
    eng->st->lfu = false;
    eng->samples = 5;
    for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
        if ((rc = goblin_engine_setting_add(eng, &own[i])) != 0)
            return rc;
    return 0;
}

void goblin__maxmemory_cron(goblin_engine *eng)
{
    for (int i = 0; i < eng->ndbs; i++) {
        goblin_store *st = goblin__db_peek(eng, i);

        if (st == NULL)
            continue;
        goblin__lru_tick(st);
        /* Every key visited within 2^15 s: count / 16384 per call at 10
         * calls a second walks the keyspace in under half an hour. */
        goblin__lru_age_step(st, st->ks.count / 16384 + 64);
        if (eng->dbs_open == 0)
            break;
    }
}

/* Evicts one key: from the store when there is one database, else from
 * the databases in turn (Redis fills one pool from every database; a
 * pool per store, visited round robin, keeps each store's own). */
static bool evict_one(goblin_engine *eng)
{
    enum goblin__policy p = (enum goblin__policy)eng->policy;

    if (eng->dbs_open == 0)
        return goblin__evict_one(eng->dbs[0].st, p, eng->samples) == 1;
    for (int n = 0; n < eng->ndbs; n++) {
        goblin_store *st;

        eng->evict_db = (eng->evict_db + 1) % eng->ndbs;
        st = goblin__db_peek(eng, eng->evict_db);
        if (st != NULL && goblin__evict_one(st, p, eng->samples) == 1)
            return true;
    }
    return false;
}

/* What maxmemory limits: the databases and the scripting heaps, which
 * INFO's used_memory shows too. */
static size_t used_memory(const goblin_engine *eng)
{
    size_t lua = eng->scripting != NULL && eng->scripting->memory != NULL
                     ? eng->scripting->memory(eng->scripting_ctx)
                     : 0;

    return goblin__db_used_memory(eng) + lua;
}

bool goblin__maxmemory_fits(goblin_engine *eng)
{
    uint64_t t0;
    bool fits = true;

    if (eng->maxmemory == 0 || used_memory(eng) <= eng->maxmemory)
        return true;
    if (goblin__pause_active(eng)) /* CLIENT PAUSE: eviction waits */
        return true;
    /* A replica is its master's copy: the master evicts, and its DELs
     * come down the stream (Redis's replica-ignore-maxmemory). */
    if (goblin__repl_following(eng) &&
        goblin_engine_config_int(eng, "replica-ignore-maxmemory", 1))
        return true;
    t0 = goblin__latency_start(eng);
    while (used_memory(eng) > eng->maxmemory) {
        if (!evict_one(eng)) {
            fits = false;
            break;
        }
        eng->stat_evicted_keys++;
    }
    goblin__latency_end(eng, "eviction-cycle", t0);
    return fits;
}

/* Whether a queued command of s is deny-oom (EXEC inherits the flag). */
static bool queue_denyoom(const goblin_session *s)
{
    for (size_t i = 0; i < s->nqueue; i++)
        if (s->queue[i].cmd->flags & CMD_DENYOOM)
            return true;
    return false;
}

bool goblin__maxmemory_admit(goblin__exec *x)
{
    const struct goblin__command *c = x->cmd;
    goblin_session *s = x->sess;
    bool deny;

    if (x->eng->maxmemory == 0 || goblin__maxmemory_fits(x->eng))
        return true;
    deny = (c->flags & CMD_DENYOOM) ||
           (c->fn == goblin__cmd_exec && (s->flags & SESS_MULTI) &&
            queue_denyoom(s));
    if ((s->flags & SESS_MULTI) && c->fn != goblin__cmd_exec &&
        c->fn != goblin__cmd_discard && c->fn != goblin__cmd_quit && c->fn != goblin__cmd_reset)
        deny = true;
    return !deny;
}

/* The commands whose lookups leave access times alone in Redis 7.0 (its
 * LOOKUP_NOTOUCH callers, checked against redis-server 7.0.15 with
 * OBJECT IDLETIME): TTL and its kin, TYPE, EXISTS, OBJECT; and WATCH and
 * EXEC, whose looking at watched keys only expires them. SCAN, KEYS,
 * RANDOMKEY and DBSIZE look nothing up. */
static goblin__handler *const never_touch[] = {
    goblin__cmd_exists, goblin__cmd_type, goblin__cmd_ttl, goblin__cmd_pttl, goblin__cmd_expiretime,
    goblin__cmd_pexpiretime, goblin__cmd_object_encoding, goblin__cmd_object_freq,
    goblin__cmd_object_idletime, goblin__cmd_object_refcount, goblin__cmd_watch, goblin__cmd_exec,
};

int goblin__touch_rules_build(goblin_engine *eng)
{
    uint8_t *r = goblin__alloc(eng->st, goblin__command_count);

    if (r == NULL)
        return GOBLIN_ENOMEM;
    for (size_t i = 0; i < goblin__command_count; i++) {
        goblin__handler *fn = goblin__commands[i].fn;

        r[i] = fn == goblin__cmd_touch ? GOBLIN__TOUCH_ALWAYS : 0;
        for (size_t j = 0; j < sizeof(never_touch) / sizeof(*never_touch);
             j++)
            if (fn != NULL && fn == never_touch[j])
                r[i] = GOBLIN__TOUCH_NEVER;
    }
    eng->touch_rule = r;
    return 0;
}

void goblin__touch_rules_free(goblin_engine *eng)
{
    goblin__free(eng->st, eng->touch_rule, goblin__command_count);
    eng->touch_rule = NULL;
}

/* Finds key without touching it. */
static bool find_quietly(goblin_store *st, struct goblin_slice key,
                         uint32_t *id)
{
    bool saved = st->no_touch;
    int found;

    st->no_touch = true;
    found = goblin__key_find(st, key, id);
    st->no_touch = saved;
    goblin__lru_tick(st);
    return found == 1;
}

void goblin__object_idletime(goblin__exec *x, struct goblin_slice key)
{
    uint32_t id;

    if (!find_quietly(x->st, key, &id))
        goblin__reply_null(x);
    else if (x->st->lfu)
        goblin__reply_error(x, "ERR An LFU maxmemory policy is selected, "
                               "idle time not tracked. Please note that "
                               "when switching between policies at runtime "
                               "LRU and LFU data will take some time to "
                               "adjust.");
    else
        goblin__reply_int(x, (int64_t)goblin__key_idle(x->st, id));
}

void goblin__object_freq(goblin__exec *x, struct goblin_slice key)
{
    uint32_t id;

    if (!find_quietly(x->st, key, &id))
        goblin__reply_null(x);
    else if (!x->st->lfu)
        goblin__reply_error(x, "ERR An LFU maxmemory policy is not "
                               "selected, access frequency not tracked. "
                               "Please note that when switching between "
                               "policies at runtime LRU and LFU data will "
                               "take some time to adjust.");
    else
        goblin__reply_int(x, goblin__key_freq(x->st, id));
}

/* ---- INFO memory ---- */

static uint64_t rss_bytes(void)
{
    unsigned long long size = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");

    if (f == NULL)
        return 0;
    if (fscanf(f, "%llu %llu", &size, &resident) != 2)
        resident = 0;
    fclose(f);
    return resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* Bytes as Redis's bytesToHuman writes them ("1.50K", "2.48M"). */
static void human(char *buf, size_t cap, uint64_t n)
{
    static const char units[] = "KMGTPE";
    double d = (double)n;
    int u = -1;

    while (d >= 1024 && u < 5) {
        d /= 1024;
        u++;
    }
    if (u < 0)
        snprintf(buf, cap, "%lluB", (unsigned long long)n);
    else
        snprintf(buf, cap, "%.2f%c", d, units[u]);
}

static uint64_t clients_bytes(const goblin_engine *eng)
{
    struct goblin__session_mem m;
    uint64_t sum = 0;

    for (const goblin_session *s = eng->first; s != NULL; s = s->next) {
        goblin__session_mem(s, &m);
        sum += m.total;
    }
    return sum;
}

static double pct(uint64_t a, uint64_t b)
{
    return b > 0 ? 100.0 * (double)a / (double)b : 0.0;
}

/* Redis 7.0's scripting lines: the two interpreters' heaps, the EVAL
 * cache and the function libraries. */
static void info_scripting(struct goblin__text *t,
                           const struct goblin_scripting_info *si)
{
    char h[3][32];

    human(h[0], sizeof(h[0]), si->vm_eval);
    human(h[1], sizeof(h[1]), si->vm_eval + si->vm_functions);
    human(h[2], sizeof(h[2]), si->scripts_eval + si->functions);
    goblin__text_addf(t, "used_memory_lua:%zu\r\nused_memory_vm_eval:%zu\r\n"
                      "used_memory_lua_human:%s\r\n"
                      "used_memory_scripts_eval:%zu\r\n"
                      "number_of_cached_scripts:%zu\r\n"
                      "number_of_functions:%zu\r\n"
                      "number_of_libraries:%zu\r\n"
                      "used_memory_vm_functions:%zu\r\n"
                      "used_memory_vm_total:%zu\r\n"
                      "used_memory_vm_total_human:%s\r\n"
                      "used_memory_functions:%zu\r\n"
                      "used_memory_scripts:%zu\r\n"
                      "used_memory_scripts_human:%s\r\n",
                      si->vm_eval, si->vm_eval, h[0], si->scripts_eval,
                      si->cached_scripts, si->nfunctions, si->nlibraries,
                      si->vm_functions, si->vm_eval + si->vm_functions, h[1],
                      si->functions, si->scripts_eval + si->functions, h[2]);
}

void goblin__mem_overhead(goblin_engine *e, struct goblin__mem_overhead *m)
{
    m->used = goblin__db_used_memory(e);
    m->rss = rss_bytes();
    m->startup = e->mem_startup;
    m->clients = clients_bytes(e);
    m->overhead = m->startup + m->clients;
    m->keys = 0;
    for (int i = 0; i < e->ndbs; i++) {
        goblin_store *st = goblin__db_peek(e, i);

        if (st != NULL) {
            m->overhead += goblin__keyspace_overhead(st);
            m->keys += goblin_key_count(st);
        }
    }
    if (m->used > e->mem_peak)
        e->mem_peak = m->used;
    m->peak = e->mem_peak;
    if (m->overhead > m->used)
        m->overhead = m->used;
    m->dataset = m->used - m->overhead;
}

void goblin__info_memory(goblin__exec *x, struct goblin__text *t)
{
    goblin_engine *e = x->eng;
    struct goblin__mem_overhead m;
    struct goblin_scripting_info si = {0};
    uint64_t total = (uint64_t)sysconf(_SC_PHYS_PAGES) *
                     (uint64_t)sysconf(_SC_PAGESIZE);
    uint64_t used, rss, clients, overhead, dataset;
    char h[5][32];

    goblin__mem_overhead(e, &m);
    if (e->scripting != NULL && e->scripting->info != NULL)
        e->scripting->info(e->scripting_ctx, &si);
    /* The interpreters' heaps count in used_memory, as maxmemory counts
     * them (Redis leaves them out). */
    used = m.used + si.vm_eval + si.vm_functions;
    rss = m.rss;
    clients = m.clients;
    overhead = m.overhead;
    dataset = m.dataset;
    human(h[0], sizeof(h[0]), used);
    human(h[1], sizeof(h[1]), rss);
    human(h[2], sizeof(h[2]), e->mem_peak);
    human(h[3], sizeof(h[3]), total);
    human(h[4], sizeof(h[4]), e->maxmemory);
    goblin__text_addf(t, "used_memory:%llu\r\nused_memory_human:%s\r\n"
                      "used_memory_rss:%llu\r\nused_memory_rss_human:%s\r\n"
                      "used_memory_peak:%llu\r\nused_memory_peak_human:%s\r\n"
                      "used_memory_peak_perc:%.2f%%\r\n"
                      "used_memory_overhead:%llu\r\n"
                      "used_memory_startup:%llu\r\n"
                      "used_memory_dataset:%llu\r\n"
                      "used_memory_dataset_perc:%.2f%%\r\n",
                      (unsigned long long)used, h[0],
                      (unsigned long long)rss, h[1],
                      (unsigned long long)e->mem_peak, h[2],
                      pct(used, e->mem_peak), (unsigned long long)overhead,
                      (unsigned long long)e->mem_startup,
                      (unsigned long long)dataset,
                      pct(dataset, used > e->mem_startup
                                       ? used - e->mem_startup : 0));
    goblin__text_addf(t, "total_system_memory:%llu\r\n"
                      "total_system_memory_human:%s\r\n",
                      (unsigned long long)total, h[3]);
    info_scripting(t, &si);
    goblin__text_addf(t, "maxmemory:%llu\r\n"
                      "maxmemory_human:%s\r\nmaxmemory_policy:%s\r\n"
                      "mem_fragmentation_ratio:%.2f\r\n"
                      "mem_fragmentation_bytes:%lld\r\n"
                      "mem_not_counted_for_evict:0\r\n"
                      "mem_clients_slaves:0\r\nmem_clients_normal:%llu\r\n"
                      "mem_allocator:%s\r\nlazyfree_pending_objects:0\r\n",
                      (unsigned long long)e->maxmemory, h[4],
                      policy_names[e->policy],
                      used > 0 ? (double)rss / (double)used : 0.0,
                      (long long)rss - (long long)used,
                      (unsigned long long)clients,
                      e->st->libc ? "libc" : "custom");
}
