/* pubsub_bench.c - closed-loop Pub/Sub latency: one publisher PUBLISHes,
 * waits for its reply and for every expected delivery, then publishes
 * again. The same client code (libgoblin's client: goblin_client_call,
 * goblin_client_subscribe, goblin_client_next_message) and the same timer
 * (CLOCK_MONOTONIC around each round) serve every row: goblind over rings
 * (SBE), goblind over a Unix socket (RESP) and redis-server over a Unix
 * socket (RESP). Everything runs in one thread pinned to --cpu.
 *
 *   pubsub_bench --case CASE --addr unix:PATH|ring:PATH[,ring:PATH...]
 *                [--proto resp|sbe] [--cpu N] [--samples N]
 *                [--payload BYTES] [--listeners N] [--subs N]
 *                [--patterns N] [--generic 1]
 *   pubsub_bench --case floor --cpu N --peer-cpu M [--samples N]
 *   pubsub_bench --case hold ...   subscribes, prints "ready", waits
 *                                  for stdin to close (RSS figures)
 *
 * Cases: one (1 publisher, 1 subscriber), fanout (--listeners
 * subscribers of one channel: the time until the last one has it),
 * literal (one subscriber holding --subs channels, publishing to one),
 * pattern (one subscriber holding --patterns patterns, one matching),
 * floor (the raw cache-line round trip between --cpu and --peer-cpu).
 * Addresses beyond the first are used in turn for the clients after the
 * publisher (rings are one client each). Prints one CSV line:
 * case,samples,p50_ns,p99_ns,p999_ns,per_sec. A benchmark: it reports
 * and never judges.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "goblin.h"

struct opts {
    const char *kase, *addr, *proto;
    int cpu, peer_cpu, samples, payload, listeners, subs, patterns;
    int generic; /* --generic 1: PUBLISH by goblin_client_call (Argv) */
};

static uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void pin(int cpu)
{
    cpu_set_t set;

    if (cpu < 0)
        return;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof(set), &set) != 0)
        perror("pubsub_bench: sched_setaffinity");
}

static void die(const char *what, int rc, goblin_client *c)
{
    fprintf(stderr, "pubsub_bench: %s: %d %s\n", what, rc,
            c != NULL && goblin_client_error(c) != NULL
                ? goblin_client_error(c)
                : "");
    exit(1);
}

/* The n-th address of the comma-separated list (the last one repeats). */
static goblin_client *connect_nth(const struct opts *o, int n)
{
    struct goblin_client_config cfg = {0};
    char addr[512], *p = addr, *next;
    goblin_client *c = NULL;
    int rc;

    snprintf(addr, sizeof(addr), "%s", o->addr);
    for (int i = 0; i < n && (next = strchr(p, ',')) != NULL; i++)
        p = next + 1;
    if ((next = strchr(p, ',')) != NULL)
        *next = '\0';
    cfg.protocol = strcmp(o->proto, "sbe") == 0 ? GOBLIN_CLIENT_SBE
                                                : GOBLIN_CLIENT_RESP2;
    cfg.timeout_ms = 10000;
    cfg.ring_idle = GOBLIN_RING_IDLE_SPIN;
    if (strncmp(p, "unix:", 5) == 0)
        rc = goblin_client_connect_unix(p + 5, &cfg, &c);
    else if (strncmp(p, "ring:", 5) == 0)
        rc = goblin_client_connect_ring(p + 5, &cfg, &c);
    else
        rc = GOBLIN_EINVAL;
    if (rc != 0)
        die(p, rc, c);
    return c;
}

/* Subscribes to n names made from fmt, name `match` (if any) being
 * what matches channel "ch" (mtext). */
static void subscribe(goblin_client *c, const char *cmd, int n,
                      const char *fmt, int match, const char *mtext,
                      int base)
{
    struct goblin_slice *names = calloc((size_t)n, sizeof(*names));
    char *text = malloc((size_t)n * 32);
    int64_t rc;

    for (int i = 0; i < n; i++) {
        char *t = text + (size_t)i * 32;
        int len = i == match ? snprintf(t, 32, "%s", mtext)
                             : snprintf(t, 32, fmt, base + i);

        names[i] = (struct goblin_slice){t, (size_t)len};
    }
    /* In slices of 512: one command per slice keeps requests small. */
    for (int i = 0; i < n; i += 512)
        if ((rc = goblin_client_subscribe(c, cmd, n - i < 512 ? n - i : 512,
                                          names + i)) < 0)
            die(cmd, (int)rc, c);
    free(names);
    free(text);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return (x > y) - (x < y);
}

static void report(const struct opts *o, uint64_t *t, int n, uint64_t total)
{
    qsort(t, (size_t)n, sizeof(*t), cmp_u64);
    printf("%s,%d,%llu,%llu,%llu,%.0f\n", o->kase, n,
           (unsigned long long)t[(size_t)(0.5 * (n - 1))],
           (unsigned long long)t[(size_t)(0.99 * (n - 1))],
           (unsigned long long)t[(size_t)(0.999 * (n - 1))],
           total > 0 ? n * 1e9 / (double)total : 0.0);
}

/* ---- the cache-line floor (as bench/shootout.c measures it) ---- */

static struct {
    _Alignas(64) atomic_uint_fast64_t ping;
    _Alignas(64) atomic_uint_fast64_t pong;
    int cpu;
} lines;

static void *echo(void *arg)
{
    uint64_t seen = 0;

    (void)arg;
    pin(lines.cpu);
    for (;;) {
        uint64_t v = atomic_load_explicit(&lines.ping, memory_order_acquire);

        if (v == UINT64_MAX)
            return NULL;
        if (v != seen) {
            seen = v;
            atomic_store_explicit(&lines.pong, v, memory_order_release);
        }
    }
}

static void run_floor(const struct opts *o)
{
    uint64_t *t = malloc((size_t)o->samples * sizeof(*t)), t0 = now_ns();
    pthread_t th;

    lines.cpu = o->peer_cpu;
    pthread_create(&th, NULL, echo, NULL);
    for (int i = -1000; i < o->samples; i++) {
        uint64_t a = now_ns();

        atomic_store_explicit(&lines.ping, (uint64_t)(i + 1001),
                              memory_order_release);
        while (atomic_load_explicit(&lines.pong, memory_order_acquire) !=
               (uint64_t)(i + 1001))
            __builtin_ia32_pause();
        if (i >= 0)
            t[i] = now_ns() - a;
        else
            t0 = now_ns();
    }
    atomic_store_explicit(&lines.ping, UINT64_MAX, memory_order_release);
    pthread_join(th, NULL);
    report(o, t, o->samples, now_ns() - t0);
    free(t);
}

/* ---- publish rounds ---- */

static int64_t generic_publish(goblin_client *c, struct goblin_slice ch,
                               struct goblin_slice msg)
{
    struct goblin_slice argv[3] = {{"PUBLISH", 7}, ch, msg};
    const struct goblin_resp_value *r;
    int rc = goblin_client_call(c, 3, argv, &r);

    if (rc != 0)
        return rc;
    return r->type == GOBLIN_RESP_INTEGER ? r->integer : GOBLIN_EREPLY;
}

static void run_rounds(const struct opts *o, int nsub, goblin_client **sub)
{
    goblin_client *pub = connect_nth(o, 0);
    char *payload = malloc((size_t)o->payload + 1);
    uint64_t *t = malloc((size_t)o->samples * sizeof(*t)), t0 = 0;
    struct goblin_slice ch = {"ch", 2}, msg = {payload, (size_t)o->payload};
    int warm = o->samples / 10 + 10;

    memset(payload, 'x', (size_t)o->payload);
    for (int i = -warm; i < o->samples; i++) {
        struct goblin_client_message m;
        uint64_t a = now_ns();
        /* A typed frame over SBE, the PUBLISH command over RESP; with
         * --generic, the command as words (an Argv frame over SBE). */
        int64_t got = o->generic ? generic_publish(pub, ch, msg)
                                 : goblin_client_publish(pub, ch, msg);
        int rc;

        if (got != nsub)
            die("PUBLISH", (int)got, pub);
        for (int k = 0; k < nsub; k++)
            if ((rc = goblin_client_next_message(sub[k], 10000, &m)) != 1)
                die("message", rc, sub[k]);
        if (i >= 0)
            t[i] = now_ns() - a;
        else
            t0 = now_ns();
    }
    report(o, t, o->samples, now_ns() - t0);
    goblin_client_close(pub);
    free(t);
    free(payload);
}

static void parse(int argc, char **argv, struct opts *o)
{
    *o = (struct opts){"one", NULL, "resp", -1, -1, 20000, 16, 8, 1, 8192, 0};
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *k = argv[i], *v = argv[i + 1];

        if (!strcmp(k, "--case")) o->kase = v;
        else if (!strcmp(k, "--addr")) o->addr = v;
        else if (!strcmp(k, "--proto")) o->proto = v;
        else if (!strcmp(k, "--cpu")) o->cpu = atoi(v);
        else if (!strcmp(k, "--peer-cpu")) o->peer_cpu = atoi(v);
        else if (!strcmp(k, "--samples")) o->samples = atoi(v);
        else if (!strcmp(k, "--payload")) o->payload = atoi(v);
        else if (!strcmp(k, "--listeners")) o->listeners = atoi(v);
        else if (!strcmp(k, "--subs")) o->subs = atoi(v);
        else if (!strcmp(k, "--patterns")) o->patterns = atoi(v);
        else if (!strcmp(k, "--generic")) o->generic = atoi(v);
        else {
            fprintf(stderr, "pubsub_bench: unknown option %s\n", k);
            exit(2);
        }
    }
    if (o->samples < 1)
        o->samples = 1;
}

int main(int argc, char **argv)
{
    goblin_client *sub[256];
    struct opts o;
    int n = 1;

    parse(argc, argv, &o);
    pin(o.cpu);
    if (!strcmp(o.kase, "floor")) {
        run_floor(&o);
        return 0;
    }
    if (o.addr == NULL) {
        fprintf(stderr, "pubsub_bench: --addr is required\n");
        return 2;
    }
    if (!strcmp(o.kase, "fanout"))
        n = o.listeners < 256 ? o.listeners : 256;
    if (!strcmp(o.kase, "hold"))
        n = o.listeners < 256 ? o.listeners : 256;
    for (int k = 0; k < n; k++) {
        sub[k] = connect_nth(&o, k + 1);
        if (!strcmp(o.kase, "literal") || !strcmp(o.kase, "hold"))
            subscribe(sub[k], "SUBSCRIBE", o.subs, "chan:%d:", 0, "ch",
                      k * o.subs);
        else if (!strcmp(o.kase, "pattern"))
            subscribe(sub[k], "PSUBSCRIBE", o.patterns, "p:%d:*", 0, "c*", 0);
        else
            subscribe(sub[k], "SUBSCRIBE", 1, "ch%d", 0, "ch", 0);
    }
    if (!strcmp(o.kase, "hold")) {
        char buf[16];

        printf("ready\n");
        fflush(stdout);
        while (fread(buf, 1, sizeof(buf), stdin) > 0)
            ;
    } else {
        run_rounds(&o, n, sub);
    }
    for (int k = 0; k < n; k++)
        goblin_client_close(sub[k]);
    return 0;
}
