/* cmd_latency.c - LATENCY LATEST, HISTORY, RESET, DOCTOR, GRAPH and HELP
 * over the engine's latency monitor (engine/latency.c), and HISTOGRAM
 * over the per-command histograms (engine/latency_hist.c), with Redis
 * 7.0's replies and texts. GRAPH draws Redis's sparkline: 80 columns,
 * 4 rows, filled, each sample labelled with how long ago it was. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/latency.h"
#include "engine/session.h"
#include "exec.h"
#include "handlers.h"
#include "respond.h"
#include "engine/text.h"
#include "store/store.h"

void goblin__cmd_latency_latest(goblin__exec *x, int argc,
                                const struct goblin_slice *argv)
{
    const struct goblin__latency *l = x->eng->latency;
    int n = l != NULL ? l->nev : 0;

    (void)argc;
    (void)argv;
    goblin__reply_array(x, (size_t)n);
    for (int i = 0; i < n; i++) {
        const struct goblin__latency_ts *ts = l->ev[i];
        int last = (ts->idx + GOBLIN__LATENCY_TS_LEN - 1) %
                   GOBLIN__LATENCY_TS_LEN;

        goblin__reply_array(x, 4);
        goblin__reply_cstr(x, ts->name);
        goblin__reply_int(x, ts->s[last].time_s);
        goblin__reply_int(x, ts->s[last].ms);
        goblin__reply_int(x, ts->max);
    }
}

void goblin__cmd_latency_history(goblin__exec *x, int argc,
                                 const struct goblin_slice *argv)
{
    const struct goblin__latency_ts *ts =
        goblin__latency_find(x->eng, argv[2].ptr, argv[2].len);
    size_t n = 0;

    (void)argc;
    for (int j = 0; ts != NULL && j < GOBLIN__LATENCY_TS_LEN; j++)
        n += ts->s[j].time_s != 0;
    goblin__reply_array(x, n);
    for (int j = 0; ts != NULL && j < GOBLIN__LATENCY_TS_LEN; j++) {
        int i = (ts->idx + j) % GOBLIN__LATENCY_TS_LEN;

        if (ts->s[i].time_s == 0)
            continue;
        goblin__reply_array(x, 2);
        goblin__reply_int(x, ts->s[i].time_s);
        goblin__reply_int(x, ts->s[i].ms);
    }
}

void goblin__cmd_latency_reset(goblin__exec *x, int argc,
                               const struct goblin_slice *argv)
{
    int n = 0;

    if (argc == 2)
        n = goblin__latency_reset(x->eng, NULL, 0);
    for (int j = 2; j < argc; j++)
        n += goblin__latency_reset(x->eng, argv[j].ptr, argv[j].len);
    goblin__reply_int(x, n);
}

/* ---- GRAPH: Redis's sparkline ---- */

#define GRAPH_COLS 80
#define GRAPH_ROWS 4

struct spark {
    double v[GOBLIN__LATENCY_TS_LEN];
    char label[GOBLIN__LATENCY_TS_LEN][32];
    int n;
    double min, max;
};

static void spark_add(struct spark *sp, double v, const char *label)
{
    if (sp->n == 0) {
        sp->min = sp->max = v;
    } else if (v < sp->min) { /* Redis's order: a new low is not also */
        sp->min = v;          /* checked against the high */
    } else if (v > sp->max) {
        sp->max = v;
    }
    sp->v[sp->n] = v;
    snprintf(sp->label[sp->n], sizeof(sp->label[0]), "%s", label);
    sp->n++;
}

/* The rows of samples [off, off + len): GRAPH_ROWS rows of "_o#" and
 * '|', a blank row, then the labels written downwards. */
static void spark_range(struct goblin__text *b, const struct spark *sp,
                        int off, int len)
{
    static const char fill[] = "_o#";
    const int steps = 3 * GRAPH_ROWS;
    double rel = sp->max - sp->min;
    char chars[GRAPH_COLS];

    if (rel == 0)
        rel = 1;
    for (int row = 0;; row++) {
        bool more = false;

        memset(chars, ' ', (size_t)len);
        for (int j = 0; j < len; j++) {
            int step = (int)((sp->v[j + off] - sp->min) * steps) / rel;
            const char *label = sp->label[j + off];

            if (step < 0)
                step = 0;
            if (step >= steps)
                step = steps - 1;
            if (row < GRAPH_ROWS) {
                int c = step - (GRAPH_ROWS - row - 1) * 3;

                more = true;
                if (c >= 0 && c < 3)
                    chars[j] = fill[c];
                else if (c >= 3)
                    chars[j] = '|';
            } else if (row - GRAPH_ROWS < 1) {
                more = true; /* the blank row above the labels */
                break;
            } else if ((int)strlen(label) > row - GRAPH_ROWS - 1) {
                more = true;
                chars[j] = label[row - GRAPH_ROWS - 1];
            }
        }
        if (!more)
            return;
        goblin__text_add(b, chars, (size_t)len);
        goblin__text_add(b, "\n", 1);
    }
}

static void elapsed_label(char *buf, size_t cap, int64_t elapsed)
{
    if (elapsed < 60)
        snprintf(buf, cap, "%llds", (long long)elapsed);
    else if (elapsed < 3600)
        snprintf(buf, cap, "%lldm", (long long)(elapsed / 60));
    else if (elapsed < 3600 * 24)
        snprintf(buf, cap, "%lldh", (long long)(elapsed / 3600));
    else
        snprintf(buf, cap, "%lldd", (long long)(elapsed / (3600 * 24)));
}

void goblin__cmd_latency_graph(goblin__exec *x, int argc,
                               const struct goblin_slice *argv)
{
    const struct goblin__latency_ts *ts =
        goblin__latency_find(x->eng, argv[2].ptr, argv[2].len);
    struct goblin__text b;
    struct spark *sp;
    uint32_t lo = 0, hi = 0;
    char head[128];
    int64_t now = (int64_t)time(NULL);

    (void)argc;
    if (ts == NULL) {
        goblin__reply_errorf(x, "ERR No samples available for event '%.*s'",
                             goblin__cstr_len(argv[2]),
                             (const char *)argv[2].ptr);
        return;
    }
    if ((sp = goblin__alloc(x->st, sizeof(*sp))) == NULL) {
        goblin__reply_code(x, GOBLIN_ENOMEM);
        return;
    }
    sp->n = 0;
    for (int j = 0; j < GOBLIN__LATENCY_TS_LEN; j++) {
        int i = (ts->idx + j) % GOBLIN__LATENCY_TS_LEN;
        char label[32];

        if (ts->s[i].time_s == 0)
            continue;
        if (sp->n == 0 || ts->s[i].ms > hi)
            hi = ts->s[i].ms;
        if (sp->n == 0 || ts->s[i].ms < lo)
            lo = ts->s[i].ms;
        elapsed_label(label, sizeof(label), now - ts->s[i].time_s);
        spark_add(sp, ts->s[i].ms, label);
    }
    goblin__text_init(&b, x->st);
    snprintf(head, sizeof(head),
             "%s - high %lu ms, low %lu ms (all time high %lu ms)\n",
             ts->name, (unsigned long)hi, (unsigned long)lo,
             (unsigned long)ts->max);
    goblin__text_add(&b, head, strlen(head));
    for (int j = 0; j < GRAPH_COLS; j++)
        goblin__text_add(&b, "-", 1);
    goblin__text_add(&b, "\n", 1);
    for (int j = 0; j < sp->n; j += GRAPH_COLS) {
        if (j != 0)
            goblin__text_add(&b, "\n", 1);
        spark_range(&b, sp, j, sp->n - j < GRAPH_COLS ? sp->n - j
                                                      : GRAPH_COLS);
    }
    goblin__free(x->st, sp, sizeof(*sp));
    if (b.oom)
        goblin__reply_code(x, GOBLIN_ENOMEM);
    else
        goblin__reply_verbatim(x, b.p, b.len);
    goblin__text_free(&b);
}

/* ---- DOCTOR: Redis 7.0's createLatencyReport ---- */

struct lstats {
    uint32_t avg, min, max, mad;
    int samples;
    int64_t period;
};

static void analyze(const struct goblin__latency_ts *ts, struct lstats *ls)
{
    uint64_t sum = 0;
    int64_t oldest = 0;

    memset(ls, 0, sizeof(*ls));
    for (int j = 0; j < GOBLIN__LATENCY_TS_LEN; j++) {
        uint32_t v = ts->s[j].ms;

        if (ts->s[j].time_s == 0)
            continue;
        if (++ls->samples == 1)
            ls->min = ls->max = v;
        if (v < ls->min)
            ls->min = v;
        if (v > ls->max)
            ls->max = v;
        sum += v;
        if (oldest == 0 || ts->s[j].time_s < oldest)
            oldest = ts->s[j].time_s;
    }
    if (ls->samples == 0)
        return;
    ls->avg = (uint32_t)(sum / (uint64_t)ls->samples);
    ls->period = (int64_t)time(NULL) - oldest;
    if (ls->period == 0)
        ls->period = 1;
    sum = 0;
    for (int j = 0; j < GOBLIN__LATENCY_TS_LEN; j++)
        if (ts->s[j].time_s != 0)
            sum += (uint64_t)llabs((int64_t)ls->avg - (int64_t)ts->s[j].ms);
    ls->mad = (uint32_t)(sum / (uint64_t)ls->samples);
}

enum {
    ADV_SLOWLOG_ENABLE = 1, ADV_SLOWLOG_TUNE = 2, ADV_SLOWLOG_INSPECT = 4,
    ADV_SCHEDULER = 8, ADV_HZ = 16, ADV_LARGE = 32, ADV_MASS_EVICT = 64,
};

/* One event's line of the report; adds the advice it calls for. */
static int event_line(goblin__exec *x, struct goblin__text *t, int num,
                      const struct goblin__latency_ts *ts, unsigned *adv)
{
    const goblin_engine *e = x->eng;
    struct lstats ls;
    int n = 0;

    analyze(ts, &ls);
    goblin__text_addf(t, "%d. %s: %d latency spikes (average %lums, mean "
                      "deviation %lums, period %.2f sec). Worst all time "
                      "event %lums.", num, ts->name, ls.samples,
                      (unsigned long)ls.avg, (unsigned long)ls.mad,
                      (double)ls.period / ls.samples,
                      (unsigned long)ts->max);
    if (strcmp(ts->name, "command") == 0) {
        if (e->slow_us < 0) {
            *adv |= ADV_SLOWLOG_ENABLE;
            n++;
        } else if (e->slow_us / 1000 > e->latency_ms) {
            *adv |= ADV_SLOWLOG_TUNE;
            n++;
        }
        *adv |= ADV_SLOWLOG_INSPECT | ADV_LARGE;
        n += 2;
    } else if (strcmp(ts->name, "fast-command") == 0) {
        *adv |= ADV_SCHEDULER;
        n++;
    } else if (strcmp(ts->name, "expire-cycle") == 0) {
        *adv |= ADV_HZ | ADV_LARGE;
        n += 2;
    } else if (strcmp(ts->name, "eviction-cycle") == 0) {
        *adv |= ADV_MASS_EVICT;
        n++;
    }
    goblin__text_add(t, "\n", 1);
    return n;
}

static void advice(goblin__exec *x, struct goblin__text *t, unsigned adv)
{
    unsigned long long th = (unsigned long long)x->eng->latency_ms * 1000;

    goblin__text_addf(t, "\nI have a few advices for you:\n\n");
    if (adv & ADV_SLOWLOG_ENABLE)
        goblin__text_addf(t, "- There are latency issues with potentially "
                          "slow commands you are using. Try to enable the "
                          "Slow Log Redis feature using the command 'CONFIG "
                          "SET slowlog-log-slower-than %llu'. If the Slow "
                          "log is disabled Redis is not able to log slow "
                          "commands execution for you.\n", th);
    if (adv & ADV_SLOWLOG_TUNE)
        goblin__text_addf(t, "- Your current Slow Log configuration only "
                          "logs events that are slower than your configured "
                          "latency monitor threshold. Please use 'CONFIG SET "
                          "slowlog-log-slower-than %llu'.\n", th);
    if (adv & ADV_SLOWLOG_INSPECT)
        goblin__text_addf(t, "- Check your Slow Log to understand what are "
                          "the commands you are running which are too slow "
                          "to execute. Please check "
                          "https://redis.io/commands/slowlog for more "
                          "information.\n");
    if (adv & ADV_SCHEDULER)
        goblin__text_addf(t, "- The system is slow to execute Redis code "
                          "paths not containing system calls. This usually "
                          "means the system does not provide Redis CPU time "
                          "to run for long periods. You should try to:\n"
                          "  1) Lower the system load.\n"
                          "  2) Use a computer / VM just for Redis if you "
                          "are running other software in the same system.\n"
                          "  3) Check if you have a \"noisy neighbour\" "
                          "problem.\n"
                          "  4) Check with 'redis-cli --intrinsic-latency "
                          "100' what is the intrinsic latency in your "
                          "system.\n"
                          "  5) Check if the problem is allocator-related by "
                          "recompiling Redis with MALLOC=libc, if you are "
                          "using Jemalloc. However this may create "
                          "fragmentation problems.\n");
    if ((adv & ADV_HZ) && x->eng->hz < 100)
        goblin__text_addf(t, "- In order to make the Redis keys expiring "
                          "process more incremental, try to set the 'hz' "
                          "configuration parameter to 100 using 'CONFIG SET "
                          "hz 100'.\n");
    if (adv & ADV_LARGE)
        goblin__text_addf(t, "- Deleting, expiring or evicting (because of "
                          "maxmemory policy) large objects is a blocking "
                          "operation. If you have very large objects that "
                          "are often deleted, expired, or evicted, try to "
                          "fragment those objects into multiple smaller "
                          "objects.\n");
    if (adv & ADV_MASS_EVICT)
        goblin__text_addf(t, "- Sudden changes to the 'maxmemory' setting "
                          "via 'CONFIG SET', or allocation of large objects "
                          "via sets or sorted sets intersections, STORE "
                          "option of SORT, Redis Cluster large keys "
                          "migrations (RESTORE command), may create sudden "
                          "memory pressure forcing the server to block "
                          "trying to evict keys. \n");
}

void goblin__cmd_latency_doctor(goblin__exec *x, int argc,
                                const struct goblin_slice *argv)
{
    const struct goblin__latency *l = x->eng->latency;
    int nev = l != NULL ? l->nev : 0, advices = 0;
    struct goblin__text t;
    unsigned adv = 0;

    (void)argc;
    (void)argv;
    goblin__text_init(&t, x->st);
    if (nev == 0 && x->eng->latency_ms == 0) {
        goblin__text_addf(&t, "I'm sorry, Dave, I can't do that. Latency "
                          "monitoring is disabled in this Redis instance. "
                          "You may use \"CONFIG SET latency-monitor-"
                          "threshold <milliseconds>.\" in order to enable "
                          "it. If we weren't in a deep space mission I'd "
                          "suggest to take a look at "
                          "https://redis.io/topics/latency-monitor.\n");
    } else {
        for (int i = 0; i < nev; i++) {
            if (i == 0)
                goblin__text_addf(&t, "Dave, I have observed latency "
                                  "spikes in this Redis instance. You don't "
                                  "mind talking about it, do you Dave?\n\n");
            advices += event_line(x, &t, i + 1, l->ev[i], &adv);
        }
        if (nev == 0 && advices == 0)
            goblin__text_addf(&t, "Dave, no latency spike was observed "
                              "during the lifetime of this Redis instance, "
                              "not in the slightest bit. I honestly think "
                              "you ought to sit down calmly, take a stress "
                              "pill, and think things over.\n");
        else if (advices == 0)
            goblin__text_addf(&t, "\nWhile there are latency events logged, "
                              "I'm not able to suggest any easy fix. Please "
                              "use the Redis community to get some help, "
                              "providing this report in your help "
                              "request.\n");
        else
            advice(x, &t, adv);
    }
    if (t.oom)
        goblin__reply_code(x, GOBLIN_ENOMEM);
    else
        goblin__reply_verbatim(x, t.p, t.len);
    goblin__text_free(&t);
}

/* ---- HISTOGRAM: each command's cumulative distribution ---- */

/* Command i's entry when it has a histogram (see latency.h); returns
 * whether it had one. With reply false, only says so. */
static bool histogram_entry(goblin__exec *x, size_t i, bool reply)
{
    struct goblin__cmdhist h;
    uint64_t cum = 0, prev = 0, calls = 0;
    size_t levels = 0;

    if (!goblin__cmdhist_get(x->eng, i, &h))
        return false;
    if (!reply)
        return true;
    for (int j = 0; j < GOBLIN__CMDHIST_LEVELS; j++) {
        levels += h.n[j] != 0;
        calls += h.n[j];
    }
    goblin__reply_cstr(x, goblin__commands[i].fullname);
    goblin__reply_map(x, 2);
    goblin__reply_cstr(x, "calls");
    goblin__reply_int(x, (int64_t)calls);
    goblin__reply_cstr(x, "histogram_usec");
    goblin__reply_map(x, levels);
    for (int j = 0; j < GOBLIN__CMDHIST_LEVELS; j++) {
        cum += h.n[j];
        if (cum == prev)
            continue; /* Redis reports a level only when it adds calls */
        goblin__reply_int(x, (int64_t)goblin__cmdhist_bound_us(j));
        goblin__reply_int(x, (int64_t)cum);
        prev = cum;
    }
    return true;
}

/* The entries argv[2..] name, as Redis's latencySpecificCommandsFillCDF:
 * a command or "parent|sub", then a container's subcommands; unknown
 * names and commands without calls are left out, repeats repeated.
 * Returns how many (with reply false, only counts). */
static size_t histogram_named(goblin__exec *x, int argc,
                              const struct goblin_slice *argv, bool reply)
{
    size_t n = 0;

    for (int j = 2; j < argc; j++) {
        const struct goblin__command *c =
            goblin__command_lookup_fullname(x->eng, argv[j]);
        size_t i;

        if (c == NULL)
            continue;
        i = (size_t)(c - goblin__commands);
        n += histogram_entry(x, i, reply);
        for (size_t k = 1; k <= c->nsub; k++)
            n += histogram_entry(x, i + k, reply);
    }
    return n;
}

void goblin__cmd_latency_histogram(goblin__exec *x, int argc,
                                   const struct goblin_slice *argv)
{
    size_t n = 0;

    if (argc > 2) {
        goblin__reply_map(x, histogram_named(x, argc, argv, false));
        histogram_named(x, argc, argv, true);
        return;
    }
    for (size_t i = 0; i < goblin__command_count; i++)
        n += histogram_entry(x, i, false);
    goblin__reply_map(x, n);
    for (size_t i = 0; i < goblin__command_count; i++)
        histogram_entry(x, i, true);
}

void goblin__cmd_latency_help(goblin__exec *x, int argc,
                              const struct goblin_slice *argv)
{
    static const char *const lines[] = {
        "LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "DOCTOR",
        "    Return a human readable latency analysis report.",
        "GRAPH <event>",
        "    Return an ASCII latency graph for the <event> class.",
        "HISTORY <event>",
        "    Return time-latency samples for the <event> class.",
        "LATEST",
        "    Return the latest latency samples for all events.",
        "RESET [<event> ...]",
        "    Reset latency data of one or more <event> classes.",
        "    (default: reset all data for all event classes)",
        "HISTOGRAM [COMMAND ...]",
        "    Return a cumulative distribution of latencies in the format of "
        "a histogram for the specified command names.",
        "    If no commands are specified then all histograms are replied.",
        "HELP",
        "    Prints this help.",
    };

    (void)argc;
    (void)argv;
    goblin__reply_help(x, lines, sizeof(lines) / sizeof(*lines));
}
