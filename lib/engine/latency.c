/* latency.c - the latency monitor's time series and its setting
 * (latency.h), as Redis 7.0's latency.c keeps them: a sample per second
 * (the worst one when an event happens several times in one second) in
 * a ring of 160, and the worst of all time. The series are allocated
 * when an event is first recorded. */
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "latency.h"
#include "settings.h"
#include "slowlog.h"

static struct goblin__latency_ts *series(goblin_engine *eng,
                                         const char *event)
{
    struct goblin__latency *l = eng->latency;
    struct goblin__latency_ts *ts;

    if (l == NULL) {
        if ((l = goblin__alloc(eng->st, sizeof(*l))) == NULL)
            return NULL;
        memset(l, 0, sizeof(*l));
        eng->latency = l;
    }
    if ((ts = goblin__latency_find(eng, event, strlen(event))) != NULL)
        return ts;
    if (l->nev == GOBLIN__LATENCY_EVENTS ||
        (ts = goblin__alloc(eng->st, sizeof(*ts))) == NULL)
        return NULL;
    memset(ts, 0, sizeof(*ts));
    snprintf(ts->name, sizeof(ts->name), "%s", event);
    l->ev[l->nev++] = ts;
    return ts;
}

void goblin__latency_add(goblin_engine *eng, const char *event, uint64_t ms)
{
    struct goblin__latency_ts *ts;
    int64_t now = (int64_t)time(NULL);
    uint32_t v = ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms;
    int prev;

    if (eng->latency_ms <= 0 || ms < (uint64_t)eng->latency_ms ||
        (ts = series(eng, event)) == NULL)
        return; /* the monitor is best effort: no memory, no sample */
    if (v > ts->max)
        ts->max = v;
    prev = (ts->idx + GOBLIN__LATENCY_TS_LEN - 1) % GOBLIN__LATENCY_TS_LEN;
    if (ts->s[prev].time_s == now) {
        if (v > ts->s[prev].ms)
            ts->s[prev].ms = v;
        return;
    }
    ts->s[ts->idx].time_s = now;
    ts->s[ts->idx].ms = v;
    ts->idx = (ts->idx + 1) % GOBLIN__LATENCY_TS_LEN;
}

uint64_t goblin__latency_start(const goblin_engine *eng)
{
    return eng->latency_ms > 0 ? goblin__ticks(eng) : 0;
}

void goblin__latency_end(goblin_engine *eng, const char *event, uint64_t t0)
{
    if (eng->latency_ms > 0 && t0 != 0)
        goblin__latency_add(eng, event,
                            goblin__ticks_to_us(eng, goblin__ticks(eng) -
                                                         t0) / 1000);
}

struct goblin__latency_ts *goblin__latency_find(const goblin_engine *eng,
                                                const char *event,
                                                size_t len)
{
    const struct goblin__latency *l = eng->latency;

    for (int i = 0; l != NULL && i < l->nev; i++)
        if (strlen(l->ev[i]->name) == len &&
            memcmp(l->ev[i]->name, event, len) == 0)
            return l->ev[i];
    return NULL;
}

int goblin__latency_reset(goblin_engine *eng, const char *event, size_t len)
{
    struct goblin__latency *l = eng->latency;
    int n = 0, k = 0;

    for (int i = 0; l != NULL && i < l->nev; i++) {
        struct goblin__latency_ts *ts = l->ev[i];

        if (event == NULL || (strlen(ts->name) == len &&
                              strncasecmp(ts->name, event, len) == 0)) {
            goblin__free(eng->st, ts, sizeof(*ts));
            n++;
        } else {
            l->ev[k++] = ts;
        }
    }
    if (l != NULL)
        l->nev = k;
    return n;
}

/* ---- settings ---- */

static int get_threshold(void *ctx, char *buf, size_t cap)
{
    return snprintf(buf, cap, "%lld",
                    (long long)((goblin_engine *)ctx)->latency_ms);
}

static int set_threshold(void *ctx, struct goblin_slice v, const char **why)
{
    goblin_engine *eng = ctx;
    int64_t n;

    if (goblin__setting_parse("latency-monitor-threshold", v, &n, why) != 0)
        return GOBLIN_EINVAL;
    eng->latency_ms = n;
    goblin__slowlog_ticks(eng); /* the command path's thresholds */
    return 0;
}

int goblin__latency_init(goblin_engine *eng)
{
    const struct goblin_setting own = {"latency-monitor-threshold", NULL,
                                       get_threshold, set_threshold, eng};
    int rc;

    eng->latency_ms = 0;
    eng->latency = NULL;
    rc = goblin_engine_setting_add(eng, &own);
    return rc == 0 ? goblin__cmdhist_init(eng) : rc;
}

void goblin__latency_free(goblin_engine *eng)
{
    goblin__latency_reset(eng, NULL, 0);
    if (eng->latency != NULL)
        goblin__free(eng->st, eng->latency, sizeof(*eng->latency));
    eng->latency = NULL;
    goblin__cmdhist_free(eng);
}
