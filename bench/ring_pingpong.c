/* ring_pingpong.c - what an unpipelined round trip over the ring costs,
 * next to the floor it is built on: two threads handing one cache line
 * back and forth.
 *
 * A client thread and a server thread are pinned to two CPUs. Two
 * measurements alternate in short windows (so both see the same machine
 * state, which on a shared or virtual host drifts):
 *   raw:  the client stores i in a 64-byte-aligned word, the server sees
 *         it and stores i in another, the client sees that;
 *   ring: the client publishes a record (12 bytes by default) to SQ, the
 *         server peeks it, publishes a copy to CQ and releases it, the
 *         client peeks and releases the reply. Both sides busy-poll
 *         with their own loop of peek and the relax hint (-i spin), or
 *         wait with goblin_ring_wait as libgoblin's client and server
 *         do: on rings that never sleep (-i wait), or that spin then
 *         sleep (-i backoff).
 * Each round trip is timed with rdtscp (calibrated against
 * CLOCK_MONOTONIC after pinning); results are exact percentiles from a
 * one-cycle histogram.
 *
 * usage: ring_pingpong [-c CPU] [-s CPU] [-t SECONDS] [-w WINDOWS]
 *                      [-l LEN] [-z SIZE] [-p PATH]
 *                      [-i spin|wait|backoff]
 */
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "goblin.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
static inline uint64_t ticks(void)
{
    unsigned aux;

    return __rdtscp(&aux);
}
static inline void relax(void)
{
    __builtin_ia32_pause();
}
#else
static inline uint64_t ticks(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
static inline void relax(void)
{
    atomic_signal_fence(memory_order_seq_cst);
}
#endif

#define HIST_BINS 65536
#define OVERFLOW_MAX (1u << 20)
#define CTL_RAW 0xFE        /* first byte of a 1-byte control record */
#define CTL_QUIT 0xFF
#define RAW_END UINT64_MAX

struct hist {
    uint64_t bins[HIST_BINS];
    uint64_t *over;          /* samples of HIST_BINS ticks or more */
    size_t nover;
    uint64_t n, sum, min;
};

struct opts {
    int client_cpu, server_cpu, windows, idle;
    int wait;           /* wait with goblin_ring_wait */
    double seconds;
    uint32_t len;
    uint64_t size;
    char path[256];
};

struct line {
    _Alignas(64) _Atomic uint64_t v;
    char pad[56];
};

struct shared {
    struct line ping, pong;
    goblin_ring *srv;
    int cpu;
    int wait;           /* wait with goblin_ring_wait */
};

static int pin(int cpu)
{
    cpu_set_t set;

    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Nanoseconds per tick, by busy-waiting 200 ms against the clock. */
static double calibrate(void)
{
    double t0 = now_s(), t1;
    uint64_t c0 = ticks(), c1;

    do
        t1 = now_s();
    while (t1 - t0 < 0.2);
    c1 = ticks();
    return (t1 - t0) * 1e9 / (double)(c1 - c0);
}

static void hist_add(struct hist *h, uint64_t v)
{
    if (v < HIST_BINS)
        h->bins[v]++;
    else if (h->nover < OVERFLOW_MAX)
        h->over[h->nover++] = v;
    h->n++;
    h->sum += v;
    if (h->n == 1 || v < h->min)
        h->min = v;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

/* The sample of rank floor(q * (n - 1)) in sorted order. */
static uint64_t hist_rank(const struct hist *h, double q)
{
    uint64_t want = (uint64_t)(q * (double)(h->n - 1)), seen = 0;
    size_t i;

    for (i = 0; i < HIST_BINS; i++) {
        seen += h->bins[i];
        if (seen > want)
            return i;
    }
    i = (size_t)(want - seen);
    return i < h->nover ? h->over[i] : (h->nover ? h->over[h->nover - 1]
                                                 : HIST_BINS);
}

/* Server: echoes ring records; a control record switches to raw mode or
 * quits. */
static void *server_main(void *arg)
{
    struct shared *sh = arg;
    struct goblin_slice rec;
    uint64_t last = 0, v;
    int rc;

    pin(sh->cpu);
    for (;;) {
        rc = goblin_ring_peek(sh->srv, &rec);
        if (rc == 0 || rc == GOBLIN_RING_SESSION) {
            if (sh->wait)
                (void)goblin_ring_wait(sh->srv, -1);
            else
                relax();
            continue;
        }
        if (rc < 0) {
            fprintf(stderr, "server: %s\n", goblin_strerror(rc));
            return NULL;
        }
        if (rec.len == 1 && *(const unsigned char *)rec.ptr == CTL_QUIT)
            return NULL;
        if (rec.len == 1 && *(const unsigned char *)rec.ptr == CTL_RAW) {
            goblin_ring_release(sh->srv);
            while ((v = atomic_load_explicit(
                        &sh->ping.v, memory_order_acquire)) != RAW_END) {
                if (v == last) {
                    relax();
                    continue;
                }
                atomic_store_explicit(&sh->pong.v, v, memory_order_release);
                last = v;
            }
            atomic_store_explicit(&sh->ping.v, last, memory_order_relaxed);
            continue;
        }
        while (goblin_ring_publish(sh->srv, rec.ptr, (uint32_t)rec.len) ==
               GOBLIN_EAGAIN)
            relax();
        goblin_ring_release(sh->srv);
    }
}

/* Client: raw cache-line round trips for secs; i counts across windows. */
static void run_raw(struct shared *sh, goblin_ring *cli, double secs,
                    uint64_t *i, struct hist *h)
{
    unsigned char ctl = CTL_RAW;
    double end = now_s() + secs;
    uint64_t t0, t1;

    goblin_ring_publish(cli, &ctl, 1);
    do {
        for (int k = 0; k < 1024; k++) {
            ++*i;
            t0 = ticks();
            atomic_store_explicit(&sh->ping.v, *i, memory_order_release);
            while (atomic_load_explicit(&sh->pong.v, memory_order_acquire) !=
                   *i)
                relax();
            t1 = ticks();
            if (h != NULL)
                hist_add(h, t1 - t0);
        }
    } while (now_s() < end);
    atomic_store_explicit(&sh->ping.v, RAW_END, memory_order_release);
    while (atomic_load_explicit(&sh->ping.v, memory_order_acquire) ==
           RAW_END)
        relax();
}

/* Client: ring round trips of len-byte records for secs. */
static int run_ring(goblin_ring *cli, const unsigned char *msg, uint32_t len,
                    int wait, double secs, struct hist *h)
{
    double end = now_s() + secs;
    struct goblin_slice rec;
    uint64_t t0, t1;
    int rc;

    do {
        for (int k = 0; k < 1024; k++) {
            t0 = ticks();
            if ((rc = goblin_ring_publish(cli, msg, len)) != 0)
                return rc;
            while ((rc = goblin_ring_peek(cli, &rec)) == 0) {
                if (wait)
                    (void)goblin_ring_wait(cli, -1);
                else
                    relax();
            }
            if (rc < 0)
                return rc;
            goblin_ring_release(cli);
            t1 = ticks();
            if (h != NULL)
                hist_add(h, t1 - t0);
        }
    } while (now_s() < end);
    return 0;
}

/* Mean of the samples up to the p99 one: finer than the percentiles when
 * the tick counter is coarse, and free of preemptions. */
static double trimmed_mean(const struct hist *h)
{
    uint64_t lim = hist_rank(h, 0.99), n = 0, sum = 0, i;

    for (i = 0; i <= lim && i < HIST_BINS; i++) {
        n += h->bins[i];
        sum += h->bins[i] * i;
    }
    return n ? (double)sum / (double)n : 0;
}

static void report(const char *name, const struct hist *h, double ns)
{
    printf("%-5s p50 %6.1f  p90 %6.1f  p99 %6.1f  p99.9 %8.1f  min %6.1f  "
           "mean %8.1f  mean<p99 %6.1f ns  samples %llu\n",
           name, hist_rank(h, 0.5) * ns, hist_rank(h, 0.9) * ns,
           hist_rank(h, 0.99) * ns, hist_rank(h, 0.999) * ns, h->min * ns,
           (double)h->sum / (double)h->n * ns, trimmed_mean(h) * ns,
           (unsigned long long)h->n);
}

static void usage(void)
{
    fprintf(stderr, "usage: ring_pingpong [-c CLIENT_CPU] [-s SERVER_CPU] "
                    "[-t SECONDS] [-w WINDOWS] [-l LEN] [-z SIZE] [-p PATH] "
                    "[-i spin|wait|backoff]\n");
    exit(2);
}

static void parse(int argc, char **argv, struct opts *o)
{
    int c;

    *o = (struct opts){0, 1, 20, GOBLIN_RING_IDLE_SPIN, 0, 2.0, 12, 1 << 20,
                       ""};
    snprintf(o->path, sizeof(o->path), "/dev/shm/goblin-pingpong-%d.ring",
             (int)getpid());
    while ((c = getopt(argc, argv, "c:s:t:w:l:z:p:i:")) != -1) {
        if (c == 'c') o->client_cpu = atoi(optarg);
        else if (c == 's') o->server_cpu = atoi(optarg);
        else if (c == 't') o->seconds = atof(optarg);
        else if (c == 'w') o->windows = atoi(optarg);
        else if (c == 'l') o->len = (uint32_t)atoi(optarg);
        else if (c == 'z' && goblin_ring_size_parse(optarg, strlen(optarg),
                                                    &o->size) == 0) ;
        else if (c == 'p') snprintf(o->path, sizeof(o->path), "%s", optarg);
        else if (c == 'i' && strcmp(optarg, "spin") == 0) {
            o->idle = GOBLIN_RING_IDLE_SPIN;
            o->wait = 0;
        } else if (c == 'i' && strcmp(optarg, "wait") == 0) {
            o->idle = GOBLIN_RING_IDLE_SPIN;
            o->wait = 1;
        } else if (c == 'i' && strcmp(optarg, "backoff") == 0) {
            o->idle = GOBLIN_RING_IDLE_BACKOFF;
            o->wait = 1;
        } else
            usage();
    }
    if (o->windows < 1 || o->seconds <= 0 || o->len < 2)
        usage();
}

static int setup(const struct opts *o, struct shared *sh, pthread_t *th,
                 goblin_ring **cli)
{
    struct goblin_ring_config cfg = {0};
    int rc;

    cfg.sq_size = cfg.cq_size = o->size;
    cfg.idle = o->idle;
    if ((rc = goblin_ring_create(o->path, &cfg, &sh->srv)) != 0)
        return rc;
    sh->cpu = o->server_cpu;
    sh->wait = o->wait;
    if (pthread_create(th, NULL, server_main, sh) != 0)
        return GOBLIN_ENOMEM;
    return goblin_ring_open(o->path, &cfg, cli);
}

/* Futex calls made while measuring: none expected while the ring is busy,
 * even with the backoff strategy. */
static void print_syscalls(const goblin_ring *cli, const goblin_ring *srv)
{
    struct goblin_ring_stats c, s;

    goblin_ring_get_stats(cli, &c);
    goblin_ring_get_stats(srv, &s);
    printf("futex sleeps client %llu server %llu, wakes client %llu "
           "server %llu\n", (unsigned long long)c.sleeps,
           (unsigned long long)s.sleeps, (unsigned long long)c.wakes,
           (unsigned long long)s.wakes);
}

static void print_results(const struct opts *o, double ns, struct hist *raw,
                          struct hist *ring)
{
    qsort(raw->over, raw->nover, sizeof(uint64_t), cmp_u64);
    qsort(ring->over, ring->nover, sizeof(uint64_t), cmp_u64);
    printf("cpus %d/%d, %.2f ns/tick, %u-byte records, %llu-byte queues, "
           "%s, %d windows of each, %.1f s of each in all\n", o->client_cpu,
           o->server_cpu, ns, (unsigned)o->len,
           (unsigned long long)goblin_ring_capacity(o->size),
           o->idle == GOBLIN_RING_IDLE_BACKOFF ? "backoff"
           : o->wait                           ? "wait"
                                               : "spin",
           o->windows, o->seconds);
    report("raw", raw, ns);
    report("ring", ring, ns);
    printf("ring/raw p50 %.2f  p99 %.2f  min %.2f  mean<p99 %.2f\n",
           (double)hist_rank(ring, 0.5) / (double)hist_rank(raw, 0.5),
           (double)hist_rank(ring, 0.99) / (double)hist_rank(raw, 0.99),
           (double)ring->min / (double)raw->min,
           trimmed_mean(ring) / trimmed_mean(raw));
}

/* Warms up, then alternates raw and ring windows. */
static int measure(const struct opts *o, struct shared *sh, goblin_ring *cli,
                   struct hist *raw, struct hist *ring)
{
    static unsigned char msg[65536];
    double win = o->seconds / o->windows;
    uint64_t i = 0;
    int rc, w;

    memset(msg, 'x', sizeof(msg));
    run_raw(sh, cli, 0.3, &i, NULL);
    rc = run_ring(cli, msg, o->len, sh->wait, 0.3, NULL);
    for (w = 0; w < o->windows && rc == 0; w++) {
        run_raw(sh, cli, win, &i, raw);
        rc = run_ring(cli, msg, o->len, sh->wait, win, ring);
    }
    return rc;
}

int main(int argc, char **argv)
{
    static struct shared sh;
    static struct hist raw, ring;
    unsigned char quit = CTL_QUIT;
    goblin_ring *cli = NULL;
    struct opts o;
    pthread_t th;
    double ns;
    int rc;

    parse(argc, argv, &o);
    if (o.len > 65536 || pin(o.client_cpu) != 0)
        usage();
    raw.over = calloc(OVERFLOW_MAX, sizeof(uint64_t));
    ring.over = calloc(OVERFLOW_MAX, sizeof(uint64_t));
    if ((rc = setup(&o, &sh, &th, &cli)) != 0) {
        fprintf(stderr, "ring: %s (%d)\n", goblin_strerror(rc), rc);
        return 1;
    }
    ns = calibrate();
    rc = measure(&o, &sh, cli, &raw, &ring);
    if (rc != 0) {
        fprintf(stderr, "ring: %s (%d)\n", goblin_strerror(rc), rc);
        return 1;
    }
    goblin_ring_publish(cli, &quit, 1);
    pthread_join(th, NULL);
    print_syscalls(cli, sh.srv);
    goblin_ring_close(cli);
    goblin_ring_close(sh.srv);
    print_results(&o, ns, &raw, &ring);
    return 0;
}
