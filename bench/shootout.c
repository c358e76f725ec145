/* shootout.c - the latency of one synchronous request/reply, the same
 * client and the same timer for every server, transport and protocol, next
 * to the floors it is built on.
 *
 * Targets (--target):
 *   client     goblin's C client (goblin/client.h) to a server over a Unix
 *              socket or a shared-memory ring (--path) or TCP (--host,
 *              --port), speaking RESP2 or SBE (--protocol). On a ring the
 *              client busy-polls for its reply. It speaks plain RESP to
 *              redis-server too, so every socket row shares one client.
 *   session    the same client on an in-process session: no socket, no
 *              other thread; what the protocol and command layers cost.
 *   capi       the store's C API called directly (no PING).
 *   cacheline  the raw floor: a thread on --peer-cpu echoes a counter the
 *              client writes to one cache line into another. An EMPTY
 *              row first gives what the timer adds to every sample.
 *
 * Ops: PING, SET and GET of a 16-byte value, HSET and HGET on a 10-field
 * hash, ZADD and ZSCORE on a 10-member set, HSET10 and ZADD10 (all ten
 * fields or members at once), EVALSHA and FCALL of a script of three
 * commands (GET, INCR, EXPIRE; bench/ops.h). Everything is preloaded
 * first (the script and its library too), so writes update and nothing
 * grows; a ZADD alternates between two scores that keep the member's
 * place, so every write really changes a value.
 *
 * Method: the client thread is pinned to --cpu. Each op runs a warm-up
 * (--warmup-ms) and then a fixed window (--window-ms) of back-to-back
 * round trips, each timed alone with rdtscp when the TSC is invariant
 * (checked through CPUID, else the kernel's constant_tsc + nonstop_tsc
 * flags), its rate calibrated against CLOCK_MONOTONIC after pinning;
 * without an invariant TSC, CLOCK_MONOTONIC itself. Percentiles are exact:
 * the sorted samples' element floor(q * (n - 1)).
 *
 * Output: CSV rows system,transport,protocol,op,p50_ns,p90_ns,p99_ns,
 * p999_ns,min_ns,mean_ns,samples (--header prints the header first).
 * With --cdf FILE, every row's latency distribution is appended to FILE
 * as well, as CSV system,transport,protocol,op,pct,ns: the percentiles
 * 0 to 100 in steps of 0.1 and the tail points 99.95, 99.99, 99.995 and
 * 99.999 (a header is written when FILE is empty). The in-process rows
 * are system inproc, transport call (protocol none for the C API); the
 * floors are system floor: RTT over transport cacheline and EMPTY, the
 * timer alone, over transport timer.
 * A failed op is reported on stderr and skipped; nothing is judged.
 *
 * usage: shootout --target client|session|capi|cacheline [--system NAME]
 *                 [--transport uds|tcp|ring] [--protocol resp|sbe]
 *                 [--path P] [--host H] [--port N] [--cpu N]
 *                 [--peer-cpu N] [--ops LIST] [--window-ms N]
 *                 [--warmup-ms N] [--header] [--cdf FILE]
 */
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "goblin.h"
#include "ops.h"
#ifdef GOBLIN_SCRIPTING
#include "goblin/lua.h"
#endif

#if defined(__x86_64__)
#include <cpuid.h>
#include <x86intrin.h>
#endif

/* ---- the timer ---- */

static bool use_tsc;
static double ns_per_tick = 1.0;

static uint64_t mono_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t ticks(void)
{
#if defined(__x86_64__)
    unsigned aux;

    if (use_tsc)
        return __rdtscp(&aux);
#endif
    return mono_ns();
}

static inline void relax(void)
{
#if defined(__x86_64__)
    _mm_pause();
#else
    atomic_signal_fence(memory_order_seq_cst);
#endif
}

/* Whether the kernel lists every flag in names (space separated). */
static bool cpuinfo_has(const char *a, const char *b)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[4096];
    bool ok = false;

    if (f == NULL)
        return false;
    while (fgets(line, sizeof(line), f) != NULL) {
        if (strncmp(line, "flags", 5) != 0)
            continue;
        ok = strstr(line, a) != NULL && strstr(line, b) != NULL;
        break;
    }
    fclose(f);
    return ok;
}

/* Picks the timer and measures ns per tick by busy-waiting 200 ms. */
static const char *timer_init(void)
{
#if defined(__x86_64__)
    unsigned a, b, c, d;
    bool inv = __get_cpuid(0x80000007, &a, &b, &c, &d) && (d & (1u << 8));

    if (!inv)
        inv = cpuinfo_has(" constant_tsc", " nonstop_tsc");
    use_tsc = inv;
    if (use_tsc) {
        uint64_t n0 = mono_ns(), t0 = ticks(), n1, t1;

        do
            n1 = mono_ns();
        while (n1 - n0 < 200000000u);
        t1 = ticks();
        ns_per_tick = (double)(n1 - n0) / (double)(t1 - t0);
        return "rdtscp (invariant TSC)";
    }
#endif
    return "CLOCK_MONOTONIC (no invariant TSC)";
}

static int pin(int cpu)
{
    cpu_set_t set;

    if (cpu < 0)
        return 0;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof(set), &set);
}

/* ---- samples ---- */

struct samples {
    uint64_t *v; /* ticks */
    size_t n, cap;
};

static int samples_add(struct samples *s, uint64_t t)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : (size_t)1 << 20;
        uint64_t *v = realloc(s->v, cap * sizeof(*v));

        if (v == NULL)
            return -1;
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = t;
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

static double pct(const struct samples *s, double q)
{
    return (double)s->v[(size_t)(q * (double)(s->n - 1))] * ns_per_tick;
}

struct row {
    const char *system, *transport, *protocol;
};

static FILE *cdf_file; /* --cdf, or NULL */

/* The distribution of sorted samples s as (pct, ns) lines in cdf_file. */
static void print_cdf(const struct row *r, const char *op,
                      const struct samples *s)
{
    static const double tail[] = { 99.95, 99.99, 99.995, 99.999 };
    size_t t = 0;

    for (int k = 0; k <= 1000; k++) {
        double q = k / 10.0;

        /* the tail points go between 99.9 and 100 */
        while (k == 1000 && t < sizeof(tail) / sizeof(tail[0])) {
            fprintf(cdf_file, "%s,%s,%s,%s,%.3f,%.1f\n", r->system,
                    r->transport, r->protocol, op, tail[t],
                    pct(s, tail[t] / 100.0));
            t++;
        }
        fprintf(cdf_file, "%s,%s,%s,%s,%.1f,%.1f\n", r->system, r->transport,
                r->protocol, op, q, pct(s, q / 100.0));
    }
    fflush(cdf_file);
}

static void print_row(const struct row *r, const char *op, struct samples *s)
{
    double sum = 0;

    if (s->n == 0)
        return;
    qsort(s->v, s->n, sizeof(*s->v), cmp_u64);
    for (size_t i = 0; i < s->n; i++)
        sum += (double)s->v[i];
    printf("%s,%s,%s,%s,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%zu\n", r->system,
           r->transport, r->protocol, op, pct(s, 0.5), pct(s, 0.9),
           pct(s, 0.99), pct(s, 0.999), (double)s->v[0] * ns_per_tick,
           sum / (double)s->n * ns_per_tick, s->n);
    fflush(stdout);
    if (cdf_file != NULL)
        print_cdf(r, op, s);
}

/* ---- the ops ---- */

struct op {
    const char *name;
    op_fn *client; /* through a client */
    op_fn *capi;   /* on the store; NULL: not applicable */
};

static const struct op ops[] = {
    { "PING", c_ping, NULL },
    { "SET", c_set, a_set },
    { "GET", c_get, a_get },
    { "HSET", c_hset, a_hset },
    { "HGET", c_hget, a_hget },
    { "ZADD", c_zadd, a_zadd },
    { "ZSCORE", c_zscore, a_zscore },
    { "HSET10", c_hset10, a_hset10 },
    { "ZADD10", c_zadd10, a_zadd10 },
    { "EVALSHA", c_evalsha, NULL },
    { "FCALL", c_fcall, NULL },
};

#define NOPS (sizeof(ops) / sizeof(ops[0]))

/* ---- running ---- */

struct opts {
    const char *target, *system, *transport, *protocol, *path, *host;
    const char *ops, *cdf;
    int port, cpu, peer_cpu, header;
    long window_ms, warmup_ms;
};

/* Warm-up, then the window: one sample per round trip. Returns 0, or the
 * first error an op returned. */
static int run_op(const struct opts *o, op_fn *fn, struct ctx *x,
                  struct samples *s)
{
    uint64_t warm = (uint64_t)((double)o->warmup_ms * 1e6 / ns_per_tick);
    uint64_t win = (uint64_t)((double)o->window_ms * 1e6 / ns_per_tick);
    uint64_t t0 = ticks(), end = t0 + warm, a, b;
    int rc;

    while (ticks() < end)
        if ((rc = fn(x)) < 0)
            return rc;
    end = ticks() + win;
    s->n = 0;
    while ((a = ticks()) < end) {
        rc = fn(x);
        b = ticks();
        if (rc < 0)
            return rc;
        if (samples_add(s, b - a) != 0)
            return GOBLIN_ENOMEM;
    }
    return 0;
}

static void run_ops(const struct opts *o, const struct row *r, struct ctx *x,
                    bool capi)
{
    struct samples s = { NULL, 0, 0 };

    for (size_t i = 0; i < NOPS; i++) {
        op_fn *fn = capi ? ops[i].capi : ops[i].client;
        int rc;

        if (fn == NULL || !wanted(o->ops, ops[i].name))
            continue;
        if ((rc = run_op(o, fn, x, &s)) < 0) {
            fprintf(stderr, "shootout: %s %s %s %s: %s\n", r->system,
                    r->transport, r->protocol, ops[i].name,
                    x->c ? goblin_client_error(x->c) : goblin_strerror(rc));
            continue;
        }
        print_row(r, ops[i].name, &s);
    }
    free(s.v);
}

/* Sets up what the ops read and write, through the ops themselves. */
static int preload(struct ctx *x, bool capi)
{
    const char *const first[] = { "SET", "HSET10", "ZADD10" };
    int rc;

    if (capi) {
        struct goblin_zpair p[10];

        for (int j = 0; j < 10; j++)
            p[j] = (struct goblin_zpair){ scores10[j], members10[j] };
        if (goblin_hash_set(x->st, KEY("h"), fv10, 10) < 0 ||
            goblin_zset_add_pairs(x->st, KEY("z"), 0, p, 10) < 0)
            return -1;
    } else if (goblin_client_hset(x->c, KEY("h"), fv10, 10) < 0 ||
               goblin_client_zadd(x->c, KEY("z"), scores10, members10, 10,
                                  0) < 0) {
        return -1;
    }
    for (size_t k = 0; k < 3; k++)
        for (size_t i = 0; i < NOPS; i++)
            if (strcmp(ops[i].name, first[k]) == 0 &&
                (rc = (capi ? ops[i].capi : ops[i].client)(x)) < 0)
                return rc;
    /* EVALSHA's script and FCALL's library; a server without scripting
     * fails only those two ops. */
    if (!capi && (c_script_load(x) < 0 || c_function_load(x) < 0))
        fprintf(stderr, "shootout: scripts not loaded: %s\n",
                goblin_client_error(x->c));
    return 0;
}

/* ---- targets ---- */

static int connect_client(const struct opts *o, goblin_client **c)
{
    struct goblin_client_config cfg = { 0 };

    cfg.protocol = strcmp(o->protocol, "sbe") == 0 ? GOBLIN_CLIENT_SBE
                                                   : GOBLIN_CLIENT_RESP2;
    cfg.timeout_ms = 5000;
    cfg.ring_idle = GOBLIN_RING_IDLE_SPIN;
    if (strcmp(o->transport, "tcp") == 0)
        return goblin_client_connect_tcp(o->host, o->port, &cfg, c);
    if (strcmp(o->transport, "ring") == 0)
        return goblin_client_connect_ring(o->path, &cfg, c);
    return goblin_client_connect_unix(o->path, &cfg, c);
}

static int target_client(const struct opts *o, const struct row *r)
{
    struct ctx x = { NULL, NULL, NULL, 0 };
    int rc = connect_client(o, &x.c);

    if (rc != 0) {
        fprintf(stderr, "shootout: connecting to %s: %s\n",
                strcmp(o->transport, "tcp") == 0 ? o->host : o->path,
                x.c ? goblin_client_error(x.c) : goblin_strerror(rc));
        goblin_client_close(x.c);
        return 1;
    }
    if (preload(&x, false) != 0) {
        fprintf(stderr, "shootout: preload: %s\n", goblin_client_error(x.c));
        goblin_client_close(x.c);
        return 1;
    }
    run_ops(o, r, &x, false);
    goblin_client_close(x.c);
    return 0;
}

/* The client on an in-process session: store, engine, session, here. */
static int target_session(const struct opts *o, const struct row *r)
{
    struct goblin_client_config cfg = { 0 };
    struct goblin_engine_config ec = { 0 };
    struct goblin_session_info si = { GOBLIN_TRANSPORT_LOCAL, NULL, NULL, -1,
                                      NULL };
    goblin_engine *eng = NULL;
    goblin_session *sess = NULL;
    struct ctx x = { NULL, NULL, NULL, 0 };
    int rc = 1;

    cfg.protocol = strcmp(o->protocol, "sbe") == 0 ? GOBLIN_CLIENT_SBE
                                                   : GOBLIN_CLIENT_RESP2;
    if (goblin_store_open(NULL, &x.st) != 0)
        return 1;
    ec.store = x.st;
    if (goblin_engine_open(&ec, &eng) == 0 &&
#ifdef GOBLIN_SCRIPTING
        goblin_lua_attach(eng) == 0 &&
#endif
        goblin_session_open(eng, &si, &sess) == 0 &&
        goblin_client_connect_session(sess, &cfg, &x.c) == 0 &&
        preload(&x, false) == 0) {
        run_ops(o, r, &x, false);
        rc = 0;
    } else {
        fprintf(stderr, "shootout: in-process session failed\n");
    }
    goblin_client_close(x.c);
    goblin_session_close(sess);
    goblin_engine_close(eng);
    goblin_store_close(x.st);
    return rc;
}

static int target_capi(const struct opts *o, const struct row *r)
{
    struct ctx x = { NULL, NULL, NULL, 0 };

    if (goblin_store_open(NULL, &x.st) != 0 || preload(&x, true) != 0) {
        fprintf(stderr, "shootout: in-process store failed\n");
        goblin_store_close(x.st);
        return 1;
    }
    run_ops(o, r, &x, true);
    goblin_store_close(x.st);
    return 0;
}

/* The cache-line floor: the client stores a counter in one line, the
 * peer thread sees it and stores it in another, the client sees that. */
struct lines {
    _Alignas(64) atomic_uint_fast64_t ping;
    _Alignas(64) atomic_uint_fast64_t pong;
    _Alignas(64) atomic_bool stop;
    int cpu;
};

static void *echo(void *arg)
{
    struct lines *l = arg;
    uint64_t last = 0, v;

    if (l->cpu >= 0) {
        cpu_set_t set;

        CPU_ZERO(&set);
        CPU_SET(l->cpu, &set);
        pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
    }
    while (!atomic_load_explicit(&l->stop, memory_order_relaxed)) {
        v = atomic_load_explicit(&l->ping, memory_order_acquire);
        if (v == last) {
            relax();
            continue;
        }
        last = v;
        atomic_store_explicit(&l->pong, v, memory_order_release);
    }
    return NULL;
}

static struct lines *the_lines;

/* Nothing: what the timer itself adds to every sample. */
static int empty(struct ctx *x)
{
    (void)x;
    return 0;
}

static int roundtrip(struct ctx *x)
{
    uint64_t v = ++x->i;

    atomic_store_explicit(&the_lines->ping, v, memory_order_release);
    while (atomic_load_explicit(&the_lines->pong, memory_order_acquire) != v)
        relax();
    return 0;
}

static int target_cacheline(const struct opts *o, const struct row *r)
{
    static struct lines l;
    struct samples s = { NULL, 0, 0 };
    struct ctx x = { NULL, NULL, NULL, 0 };
    pthread_t t;
    int rc;

    l.cpu = o->peer_cpu;
    the_lines = &l;
    if (run_op(o, empty, &x, &s) == 0)
        print_row(&(struct row){ r->system, "timer", r->protocol }, "EMPTY",
                  &s);
    if (pthread_create(&t, NULL, echo, &l) != 0)
        return 1;
    rc = run_op(o, roundtrip, &x, &s);
    atomic_store(&l.stop, true);
    pthread_join(t, NULL);
    if (rc == 0)
        print_row(r, "RTT", &s);
    free(s.v);
    return rc != 0;
}

/* ---- main ---- */

static int finish(int rc)
{
    if (cdf_file != NULL && fclose(cdf_file) != 0)
        rc = 1;
    return rc;
}

static void usage(void)
{
    fputs("usage: shootout --target client|session|capi|cacheline "
          "[--system NAME]\n"
          "                [--transport uds|tcp|ring] [--protocol resp|sbe] "
          "[--path P]\n"
          "                [--host H] [--port N] [--cpu N] [--peer-cpu N] "
          "[--ops LIST]\n"
          "                [--window-ms N] [--warmup-ms N] [--header] "
          "[--cdf FILE]\n",
          stderr);
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
    static const struct option lo[] = {
        { "target", required_argument, NULL, 'T' },
        { "system", required_argument, NULL, 'S' },
        { "transport", required_argument, NULL, 't' },
        { "protocol", required_argument, NULL, 'P' },
        { "path", required_argument, NULL, 'p' },
        { "host", required_argument, NULL, 'H' },
        { "port", required_argument, NULL, 'n' },
        { "cpu", required_argument, NULL, 'c' },
        { "peer-cpu", required_argument, NULL, 'C' },
        { "ops", required_argument, NULL, 'o' },
        { "window-ms", required_argument, NULL, 'w' },
        { "warmup-ms", required_argument, NULL, 'W' },
        { "header", no_argument, NULL, 'h' },
        { "cdf", required_argument, NULL, 'D' },
        { NULL, 0, NULL, 0 },
    };
    int ch;

    while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        switch (ch) {
        case 'T': o->target = optarg; break;
        case 'S': o->system = optarg; break;
        case 't': o->transport = optarg; break;
        case 'P': o->protocol = optarg; break;
        case 'p': o->path = optarg; break;
        case 'H': o->host = optarg; break;
        case 'n': o->port = atoi(optarg); break;
        case 'c': o->cpu = atoi(optarg); break;
        case 'C': o->peer_cpu = atoi(optarg); break;
        case 'o': o->ops = optarg; break;
        case 'w': o->window_ms = atol(optarg); break;
        case 'W': o->warmup_ms = atol(optarg); break;
        case 'h': o->header = 1; break;
        case 'D': o->cdf = optarg; break;
        default: return -1;
        }
    }
    return optind == argc && o->window_ms > 0 && o->warmup_ms >= 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    struct opts o = { NULL, NULL, NULL, "resp", "/tmp/goblin.sock",
                      "127.0.0.1", NULL, NULL, 6379, 1, 0, 0, 2000, 300 };
    struct row r;
    const char *timer;

    if (parse_opts(argc, argv, &o) != 0 || o.target == NULL) {
        usage();
        return 2;
    }
    if (pin(o.cpu) != 0)
        perror("shootout: sched_setaffinity");
    timer = timer_init();
    ops_data_init();
    ops_scripts_init();
    fprintf(stderr, "shootout: timer %s, %.4f ns/tick, cpu %d\n", timer,
            ns_per_tick, o.cpu);
    if (o.cdf != NULL) {
        if ((cdf_file = fopen(o.cdf, "a")) == NULL) {
            perror(o.cdf);
            return 1;
        }
        if (ftell(cdf_file) == 0)
            fputs("system,transport,protocol,op,pct,ns\n", cdf_file);
    }
    if (o.header)
        puts("system,transport,protocol,op,p50_ns,p90_ns,p99_ns,p999_ns,"
             "min_ns,mean_ns,samples");
    r.system = o.system ? o.system : "goblind";
    r.protocol = o.protocol;
    r.transport = o.transport ? o.transport : "uds";
    if (strcmp(o.target, "client") == 0)
        return finish(target_client(&o, &r));
    r.system = o.system ? o.system : "inproc";
    r.transport = "call";
    if (strcmp(o.target, "session") == 0)
        return finish(target_session(&o, &r));
    r.protocol = "none";
    if (strcmp(o.target, "capi") == 0)
        return finish(target_capi(&o, &r));
    if (strcmp(o.target, "cacheline") == 0) {
        r.system = o.system ? o.system : "floor";
        r.transport = "cacheline";
        return finish(target_cacheline(&o, &r));
    }
    usage();
    return finish(2);
}
