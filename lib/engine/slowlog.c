/* slowlog.c - the slow log's entries and settings (slowlog.h). An entry
 * keeps what Redis's slowlogCreateEntry keeps: at most 32 arguments (the
 * last one then says how many more there were), each cut to 128 bytes
 * ("... (N more bytes)"), the client's address and name, the Unix time
 * and the duration. Entries are one allocation each, newest first, from
 * the engine's store allocator.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "latency.h"
#include "session.h"
#include "settings.h"
#include "slowlog.h"

#define SLOW_MAX_ARGC 32
#define SLOW_MAX_ARGLEN 128

static void entry_free(goblin_engine *eng, struct goblin__slow_entry *e)
{
    goblin__free(eng->st, e, e->size);
}

/* Drops entries past slowlog-max-len. */
static void trim(goblin_engine *eng)
{
    struct goblin__slow_entry **pp = &eng->slow_first;
    size_t n = 0;

    while (*pp != NULL && n < (size_t)eng->slow_max_len) {
        pp = &(*pp)->next;
        n++;
    }
    while (*pp != NULL) {
        struct goblin__slow_entry *e = *pp;

        *pp = e->next;
        entry_free(eng, e);
        eng->slow_len--;
    }
}

void goblin__slowlog_reset(goblin_engine *eng)
{
    while (eng->slow_first != NULL) {
        struct goblin__slow_entry *e = eng->slow_first;

        eng->slow_first = e->next;
        entry_free(eng, e);
    }
    eng->slow_len = 0;
}

static uint64_t us_to_ticks(const goblin_engine *eng, double us)
{
    return (uint64_t)(us * 1000.0 / eng->ns_per_tick);
}

/* Every command is timed when the slow log or the latency monitor is on
 * and the clock is the CPU's cycle counter (an instruction, no system
 * call), so each slow execution is seen, as Redis sees it. Without that
 * clock a threshold above 0 is checked on the commandstats sample only
 * (slowlog.h); a threshold of 0 always times everything. */
void goblin__slowlog_ticks(goblin_engine *eng)
{
    bool calibrated = eng->ns_per_tick > 0;

    if (eng->slow_us < 0 || !calibrated)
        eng->slow_ticks = UINT64_MAX;
    else
        eng->slow_ticks = us_to_ticks(eng, (double)eng->slow_us);
    if (eng->latency_ms <= 0 || !calibrated)
        eng->lat_ticks = UINT64_MAX;
    else
        eng->lat_ticks = us_to_ticks(eng, (double)eng->latency_ms * 1000.0);
    eng->watch_ticks = eng->slow_ticks < eng->lat_ticks ? eng->slow_ticks
                                                        : eng->lat_ticks;
    eng->time_all = eng->slow_us == 0 ||
                    (eng->use_tsc && eng->watch_ticks != UINT64_MAX);
}

void goblin__slowlog_watch(goblin__exec *x, int argc,
                           const struct goblin_slice *argv, uint64_t ticks)
{
    goblin__cmdhist_outlier(x->eng, (size_t)(x->cmd - goblin__commands));
    if (ticks >= x->eng->slow_ticks)
        goblin__slowlog_push(x, argc, argv, ticks);
    if (ticks >= x->eng->lat_ticks)
        goblin__latency_add(x->eng, (x->cmd->flags & CMD_FAST)
                                        ? "fast-command" : "command",
                            goblin__ticks_to_us(x->eng, ticks) / 1000);
}

/* One argument as kept: its bytes up to 128, or the note that replaces
 * the last kept one. Writes into p (when not NULL); returns the length. */
static size_t arg_text(const struct goblin_slice *a, int j, int argc,
                       int kept, char *p)
{
    char note[64];
    size_t n;

    if (kept < argc && j == kept - 1) {
        n = (size_t)snprintf(note, sizeof(note), "... (%d more arguments)",
                             argc - kept + 1);
        if (p != NULL)
            memcpy(p, note, n);
        return n;
    }
    if (a->len <= SLOW_MAX_ARGLEN) {
        if (p != NULL && a->len > 0)
            memcpy(p, a->ptr, a->len);
        return a->len;
    }
    n = (size_t)snprintf(note, sizeof(note), "... (%zu more bytes)",
                         a->len - SLOW_MAX_ARGLEN);
    if (p != NULL) {
        memcpy(p, a->ptr, SLOW_MAX_ARGLEN);
        memcpy(p + SLOW_MAX_ARGLEN, note, n);
    }
    return SLOW_MAX_ARGLEN + n;
}

void goblin__slowlog_push(goblin__exec *x, int argc,
                          const struct goblin_slice *argv, uint64_t ticks)
{
    goblin_engine *eng = x->eng;
    const char *peer = x->sess->peer != NULL ? x->sess->peer : "";
    const char *name = x->sess->name != NULL ? x->sess->name : "";
    int kept = argc < SLOW_MAX_ARGC ? argc : SLOW_MAX_ARGC;
    size_t size = sizeof(struct goblin__slow_entry) +
                  (size_t)kept * sizeof(struct goblin_slice) +
                  strlen(peer) + strlen(name) + 2;
    struct goblin__slow_entry *e;
    char *p;

    if ((x->cmd->flags & CMD_SKIP_SLOWLOG) || eng->slow_max_len == 0)
        return;
    for (int j = 0; j < kept; j++)
        size += arg_text(&argv[j], j, argc, kept, NULL);
    if ((e = goblin__alloc(eng->st, size)) == NULL)
        return; /* the log is best effort; the command already ran */
    e->size = size;
    e->id = eng->slow_next_id++;
    e->time_s = (int64_t)time(NULL);
    e->us = goblin__ticks_to_us(eng, ticks);
    e->argc = kept;
    e->argv = (struct goblin_slice *)(e + 1);
    p = (char *)(e->argv + kept);
    for (int j = 0; j < kept; j++) {
        size_t n = arg_text(&argv[j], j, argc, kept, p);

        e->argv[j].ptr = p;
        e->argv[j].len = n;
        p += n;
    }
    e->peer = p;
    memcpy(p, peer, strlen(peer) + 1);
    p += strlen(peer) + 1;
    e->name = p;
    memcpy(p, name, strlen(name) + 1);
    e->next = eng->slow_first;
    eng->slow_first = e;
    eng->slow_len++;
    trim(eng);
}

/* ---- settings ---- */

static int get_slower(void *ctx, char *buf, size_t cap)
{
    return snprintf(buf, cap, "%lld", (long long)((goblin_engine *)ctx)->slow_us);
}

static int set_slower(void *ctx, struct goblin_slice v, const char **why)
{
    goblin_engine *eng = ctx;
    int64_t n;

    if (goblin__setting_parse("slowlog-log-slower-than", v, &n, why) != 0)
        return GOBLIN_EINVAL;
    eng->slow_us = n;
    goblin__slowlog_ticks(eng);
    return 0;
}

static int get_max_len(void *ctx, char *buf, size_t cap)
{
    return snprintf(buf, cap, "%lld",
                    (long long)((goblin_engine *)ctx)->slow_max_len);
}

static int set_max_len(void *ctx, struct goblin_slice v, const char **why)
{
    goblin_engine *eng = ctx;
    int64_t n;

    if (goblin__setting_parse("slowlog-max-len", v, &n, why) != 0)
        return GOBLIN_EINVAL;
    eng->slow_max_len = n;
    trim(eng);
    return 0;
}

int goblin__slowlog_init(goblin_engine *eng)
{
    const struct goblin_setting own[] = {
        {"slowlog-log-slower-than", NULL, get_slower, set_slower, eng},
        {"slowlog-max-len", NULL, get_max_len, set_max_len, eng},
    };
    int rc;

    eng->slow_us = 10000;
    eng->slow_max_len = 128;
    goblin__slowlog_ticks(eng);
    for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
        if ((rc = goblin_engine_setting_add(eng, &own[i])) != 0)
            return rc;
    return 0;
}

void goblin__slowlog_free(goblin_engine *eng)
{
    goblin__slowlog_reset(eng);
}
