/* engine.c - opening and closing an engine, its clocks, the store hook
 * that feeds WATCH, and periodic work.
 *
 * Timing: a command's time is counted in ticks. Where the CPU has a
 * constant TSC (x86-64 Linux reports "tsc" as the clock source) a tick is
 * one rdtsc step, about 10 ns to read against about 25 ns for
 * clock_gettime; elsewhere, or when the configuration brings its own
 * now_ns clock, a tick is a nanosecond. Ticks become microseconds only
 * when INFO shows them, with the rate cron measures against now_ns.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "acl.h"
#include "acl_log.h"
#include "commands/notify.h"
#include "goblin/script.h"
#include "block.h"
#include "maxmemory.h"
#include "repl/repl.h"
#include "repl/replica.h"
#include "session.h"
#include "latency.h"
#include "slowlog.h"
#include "monitor.h"
#include "pause.h"
#include "tracking.h"
#include "settings.h"
#include "stream/propagate.h"
#include "stream/aof_int.h"
#include "util/config_size.h"

static uint64_t monotonic_ns(void *ctx)
{
    struct timespec ts;

    (void)ctx;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Whether the CPU's cycle counter can time executions: the kernel's own
 * clock source is the TSC, or the CPU says its TSC runs at a constant
 * rate through every power state (constant_tsc and nonstop_tsc), as it
 * does under KVM, whose guests keep kvm-clock as their clock source. */
static bool tsc_is_constant(void)
{
#if defined(__x86_64__) && defined(__linux__)
    char buf[4096];
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/"
                    "current_clocksource", "r");
    bool ok = false, constant = false, nonstop = false;

    if (f != NULL) {
        if (fgets(buf, sizeof(buf), f) != NULL)
            ok = strncmp(buf, "tsc", 3) == 0;
        fclose(f);
    }
    if (ok || (f = fopen("/proc/cpuinfo", "r")) == NULL)
        return ok;
    while (fgets(buf, sizeof(buf), f) != NULL) {
        if (strncmp(buf, "flags", 5) != 0)
            continue;
        constant = strstr(buf, " constant_tsc") != NULL;
        nonstop = strstr(buf, " nonstop_tsc") != NULL;
        break;
    }
    fclose(f);
    return constant && nonstop;
#else
    return false;
#endif
}

void goblin__engine_direct_update(goblin_engine *eng)
{
    eng->direct_off = eng->maxmemory != 0 || eng->stream_on ||
                      eng->nmonitors != 0 || eng->pause_type != 0 ||
                      eng->refuse_writes;
}

uint64_t goblin__ticks_to_us(const goblin_engine *eng, uint64_t ticks)
{
    return (uint64_t)((double)ticks * eng->ns_per_tick / 1000.0);
}

uint64_t goblin__ticks_to_ns(const goblin_engine *eng, uint64_t ticks)
{
    return (uint64_t)((double)ticks * eng->ns_per_tick);
}

/* Measures ns per tick over the whole life of the engine (so the estimate
 * only gets better). */
static void calibrate(goblin_engine *eng)
{
    uint64_t t = goblin__ticks(eng);
    uint64_t ns = eng->cfg.now_ns(eng->cfg.now_ns_ctx);

    if (!eng->use_tsc || t <= eng->tick0 || ns - eng->ns0 < 1000000)
        return;
    eng->ns_per_tick = (double)(ns - eng->ns0) / (double)(t - eng->tick0);
    goblin__slowlog_ticks(eng); /* its threshold in the new tick rate */
}

/* The allocator handed to the RESP parser and output buffers: the store's,
 * with its accounting. */
static void *acct_malloc(void *ctx, size_t size)
{
    return goblin__alloc(ctx, size);
}

static void *acct_realloc(void *ctx, void *p, size_t old_size,
                          size_t new_size)
{
    return goblin__realloc(ctx, p, old_size, new_size);
}

static void acct_free(void *ctx, void *p, size_t size)
{
    goblin__free(ctx, p, size);
}

static int engine_init(goblin_engine *eng)
{
    size_t n = goblin__command_count * sizeof(*eng->stats);
    int rc;

    eng->stats = goblin__alloc(eng->st, n);
    if (eng->stats == NULL)
        return GOBLIN_ENOMEM;
    memset(eng->stats, 0, n);
    goblin__ps_init(&eng->pubsub, eng->st);
    rc = goblin__db_init(eng, 16);
    if (rc == 0)
        rc = goblin__touch_rules_build(eng);
    if (rc == 0)
        rc = goblin__lookup_build(eng);
    if (rc == 0)
        rc = goblin__acl_init(eng);
    if (rc == 0)
        rc = goblin__settings_init(eng);
    if (rc == 0)
        rc = goblin__db_settings_init(eng);
    if (rc == 0)
        rc = goblin__persist_init(eng);
    if (rc == 0)
        rc = goblin__slowlog_init(eng);
    if (rc == 0)
        rc = goblin__acl_log_init(eng);
    if (rc == 0)
        rc = goblin__latency_init(eng);
    if (rc == 0)
        rc = goblin__script_settings_init(eng);
    if (rc == 0)
        rc = goblin__repl_settings_init(eng);
    if (rc == 0)
        rc = goblin__notify_init(eng);
    if (rc == 0)
        rc = goblin__tracking_init(eng);
    return rc;
}

static void engine_free(goblin_engine *eng)
{
    goblin_store *st = eng->st;

    goblin__slowlog_free(eng);
    goblin__errstats_free(eng);
    goblin__acl_log_free(eng);
    goblin__latency_free(eng);
    goblin__repl_free(eng);
    goblin__stream_free(eng);
    goblin__persist_free(eng);
    goblin__settings_free(eng);
    goblin__acl_free(eng);
    if (eng->aclfile != NULL)
        goblin__free(st, eng->aclfile, strlen(eng->aclfile) + 1);
    goblin__lookup_free(eng);
    goblin__free(st, eng->stats, goblin__command_count * sizeof(*eng->stats));
    goblin__touch_rules_free(eng);
    goblin__watch_free(eng);
    goblin__tracking_free(eng);
    goblin__monitor_free(eng);
    goblin__ps_free(&eng->pubsub);
    goblin__block_free(eng);
    goblin__db_free(eng);
    goblin__free(st, eng, sizeof(*eng));
}

static int engine_open(const struct goblin_engine_config *cfg,
                       goblin_engine **out)
{
    goblin_engine *eng;
    int rc;

    if (cfg == NULL || cfg->store == NULL || out == NULL)
        return GOBLIN_EINVAL;
    eng = goblin__alloc(cfg->store, sizeof(*eng));
    if (eng == NULL)
        return GOBLIN_ENOMEM;
    memset(eng, 0, sizeof(*eng));
    eng->st = cfg->store;
    eng->acct = (struct goblin_allocator){acct_malloc, acct_realloc,
                                          acct_free, cfg->store};
    eng->cfg = *cfg;
    eng->cfg.requirepass = NULL;
    if (eng->cfg.now_ns == NULL) {
        eng->cfg.now_ns = monotonic_ns;
        eng->use_tsc = tsc_is_constant();
    }
    eng->ns_per_tick = 1.0;
    eng->tick0 = goblin__ticks(eng);
    eng->ns0 = eng->cfg.now_ns(eng->cfg.now_ns_ctx);
    if (eng->use_tsc)
        eng->ns_per_tick = 1.0 / 3.0; /* until cron measures it */
    eng->start_ms = eng->clock_ms = goblin__now_ms(eng->st);
    eng->next_id = 1;
    rc = engine_init(eng);
    if (rc == 0)
        rc = goblin__settings_apply_config(eng, cfg);
    if (rc != 0) {
        engine_free(eng);
        return rc;
    }
    goblin__db_hook_install(eng);
    goblin__db_string_max(eng);
    eng->mem_startup = goblin_store_used_memory(eng->st);
    *out = eng;
    return 0;
}

int goblin_engine_open_sized(const struct goblin_engine_config *cfg,
                             size_t cfg_size, goblin_engine **out)
{
    struct goblin_engine_config c;

    if (cfg == NULL)
        return engine_open(NULL, out);
    if (goblin__config_copy(&c, sizeof(c), cfg, cfg_size,
                            sizeof(cfg->store)) != 0)
        return GOBLIN_EINVAL;
    return engine_open(&c, out);
}

void goblin_engine_close(goblin_engine *eng)
{
    if (eng == NULL)
        return;
    while (eng->first != NULL)
        goblin_session_close(eng->first);
    /* The scripting library goes after the sessions (none is running a
     * script) and before the store it may still free keys into. */
    if (eng->scripting != NULL && eng->scripting->close != NULL)
        eng->scripting->close(eng->scripting_ctx);
    eng->scripting = NULL;
    engine_free(eng);
}

size_t goblin_engine_session_count(const goblin_engine *eng)
{
    return eng->nsessions;
}

/* Samples commands per second over the last cron interval, as Redis's
 * trackInstantaneousMetric does over 16 samples. */
static void sample_ops(goblin_engine *eng)
{
    uint64_t ns = eng->cfg.now_ns(eng->cfg.now_ns_ctx);
    uint64_t dt = ns - eng->ops_last_ns;

    if (eng->ops_last_ns != 0 && dt > 0)
        eng->ops_samples[eng->ops_idx++ % 16] =
            (eng->stat_commands - eng->ops_last_cmds) * 1000000000u / dt;
    eng->ops_last_ns = ns;
    eng->ops_last_cmds = eng->stat_commands;
}

uint64_t goblin__ops_per_sec(const goblin_engine *eng)
{
    uint64_t sum = 0;
    unsigned i;

    for (i = 0; i < 16; i++)
        sum += eng->ops_samples[i];
    return sum / 16;
}

void goblin_engine_cron(goblin_engine *eng)
{
    eng->clock_ms = goblin__now_ms(eng->dbs[0].st);
    calibrate(eng);
    sample_ops(eng);
    /* CLIENT PAUSE: ends on time here; while it lasts, nothing expires. */
    /* A replica waits for its master's DEL (replicas never expire). */
    if (!eng->active_expire_off && !goblin__pause_active(eng) &&
        !goblin__repl_following(eng)) {
        uint64_t t0 = goblin__latency_start(eng);

        goblin__expire_step(eng);
        goblin__latency_end(eng, "expire-cycle", t0);
    }
    goblin__maxmemory_cron(eng);
    goblin__persist_cron(eng);
    goblin__block_cron(eng);
    if (eng->tracking_clients != 0 || eng->tkeys != 0)
        goblin__tracking_cron(eng);
    goblin__stream_flush(eng); /* expired and timed-out work */
    if (eng->aof != NULL)
        goblin__aof_cron(eng);
    goblin__repl_cron(eng);
}
