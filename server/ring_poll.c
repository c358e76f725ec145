/* ring_poll.c - goblind's shared-memory ring endpoints (--ring PATH SIZE):
 * one ring file per endpoint (goblin/ring.h), one libgoblin session per
 * attached client, and one polling thread per ring.
 *
 * Threading (docs/threading.md): the engine, its sessions and the store
 * belong to whoever holds the engine lock (goblind_lock). The epoll
 * thread takes it around each socket event, the woken list and cron; a
 * ring thread takes it only around feeding a batch of SQ records to its
 * session and copying the replies into CQ. Nobody holds it while waiting:
 * epoll_wait and the ring's spin/futex wait run unlocked.
 *
 * Per ring: SQ records are a byte stream into the session (RESP may span
 * records; an SBE client sends the magic, then one frame per record, and
 * the session's parser takes the same stream). Replies are copied into
 * CQ records of at most goblin_ring_max_record() bytes. When CQ is full
 * the rest stays in the session output and the thread executes no more
 * requests until CQ has room: it never blocks. Meanwhile it still peeks
 * SQ, without releasing (the client's SQ fills up: backpressure), only
 * to notice a new client epoch; those held records are fed once CQ has
 * room, or dropped with the old session. A new client epoch replaces the
 * session; a protocol violation (GOBLIN_EPROTO), QUIT or CLIENT KILL
 * closes the session and re-creates the ring file, so only that ring's
 * client sees the connection reset.
 *
 * Invariants: e->s is NULL or the session of the current epoch; only the
 * ring's own thread touches e->r; e->s is touched only under the lock.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <goblin/ring.h>

#include "goblind.h"

#define WAIT_NS 100000000   /* a waiting thread looks at stop this often */
#define BATCH 64            /* SQ records fed per lock hold */
#define FULL_NAP_NS 50000   /* backoff, CQ full: first nap, doubling */
#define FULL_NAP_MAX 1000000 /* ... up to 1 ms */
#define MAX_CPUS 64
#define HELD_MAX 65537      /* records peeked while CQ is full, at most:
                             * all SQ can hold up to 4 MiB rings */

struct ring_ep {
    struct goblind *g;
    char *path;
    uint64_t size;
    goblin_ring *r;
    goblin_session *s;
    struct goblin_slice *held; /* peeked, not yet fed: CQ was full */
    size_t nheld, held_cap;
    bool pending;          /* output left that CQ had no room for */
    bool closing;          /* close the session once its output is out */
    bool started;
    pthread_t th;
};

struct goblind_rings {
    struct ring_ep *v;
    int n;
    char *cpus_text;
    int cpus[MAX_CPUS];
    int ncpus;
    long idle;             /* GOBLIN_RING_IDLE_SPIN or _BACKOFF */
    long spin_us;
    long perm;
    atomic_bool stop;
    char setting[6][GOBLIN_SETTING_VALUE_MAX];
};

static pthread_mutex_t engine_lock = PTHREAD_MUTEX_INITIALIZER;

void goblind_lock(void)
{
    pthread_mutex_lock(&engine_lock);
}

void goblind_unlock(void)
{
    pthread_mutex_unlock(&engine_lock);
}

static struct goblind_rings *rings_of(struct goblind *g)
{
    if (g->rings == NULL && (g->rings = calloc(1, sizeof(*g->rings)))) {
        g->rings->idle = GOBLIN_RING_IDLE_BACKOFF;
        g->rings->spin_us = 50;
        g->rings->perm = 0600;
    }
    return g->rings;
}

/* ---- options ---- */

/* "0,2-3" into cpus[]; -1 on bad text. */
static int parse_cpus(struct goblind_rings *rs, const char *text)
{
    int n = 0;
    const char *p = text;

    while (*p != '\0') {
        char *end;
        long lo = strtol(p, &end, 10), hi = lo;

        if (end == p || lo < 0 || lo >= CPU_SETSIZE)
            return -1;
        if (*end == '-') {
            p = end + 1;
            hi = strtol(p, &end, 10);
            if (end == p || hi < lo || hi >= CPU_SETSIZE)
                return -1;
        }
        for (long c = lo; c <= hi && n < MAX_CPUS; c++)
            rs->cpus[n++] = (int)c;
        p = *end == ',' ? end + 1 : end;
        if (*end != ',' && *end != '\0')
            return -1;
    }
    rs->ncpus = n;
    return n > 0 ? 0 : -1;
}

static int add_ring(struct goblind_rings *rs, const char *path,
                    const char *size, const char **why)
{
    struct ring_ep *v;
    uint64_t bytes;

    *why = "size must be bytes or a number with k, m or g";
    if (path[0] == '\0' ||
        goblin_ring_size_parse(size, strlen(size), &bytes) < 0)
        return -1;
    *why = "out of memory";
    v = realloc(rs->v, sizeof(*v) * (size_t)(rs->n + 1));
    if (v == NULL)
        return -1;
    rs->v = v;
    v[rs->n] = (struct ring_ep){.path = strdup(path), .size = bytes};
    if (v[rs->n].path == NULL)
        return -1;
    rs->n++;
    return 0;
}

static int parse_long(const char *text, int base, long lo, long hi,
                      long *out)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(text, &end, base);
    if (errno != 0 || end == text || *end != '\0' || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static int ring_setting(struct goblind_rings *rs, const char *name,
                        const char *arg, const char **why)
{
    *why = "bad value";
    if (strcasecmp(name, "ring-cpus") == 0) {
        if (parse_cpus(rs, arg) < 0)
            return -1;
        free(rs->cpus_text);
        rs->cpus_text = strdup(arg);
        return 0;
    }
    if (strcasecmp(name, "ring-idle") == 0) {
        *why = "argument must be spin or backoff";
        if (strcasecmp(arg, "spin") != 0 && strcasecmp(arg, "backoff") != 0)
            return -1;
        rs->idle = strcasecmp(arg, "spin") == 0 ? GOBLIN_RING_IDLE_SPIN
                                                : GOBLIN_RING_IDLE_BACKOFF;
        return 0;
    }
    if (strcasecmp(name, "ring-spin-us") == 0)
        return parse_long(arg, 10, 0, 60000000, &rs->spin_us);
    return parse_long(arg, 8, 0, 0777, &rs->perm);       /* ring-perm */
}

int goblind_ring_option(struct goblind *g, int argc, const char *const *argv,
                        const char **why)
{
    static const char *const names[] = {"ring", "ring-cpus", "ring-idle",
                                        "ring-spin-us", "ring-perm"};
    struct goblind_rings *rs;
    size_t i = 0;

    while (i < 5 && strcasecmp(argv[0], names[i]) != 0)
        i++;
    if (i == 5)
        return 1;
    *why = "wrong number of arguments";
    if (argc != (i == 0 ? 3 : 2))
        return -1;
    *why = "out of memory";
    if ((rs = rings_of(g)) == NULL)
        return -1;
    if (i == 0)
        return add_ring(rs, argv[1], argv[2], why);
    return ring_setting(rs, argv[0], argv[1], why);
}

/* ---- settings (read-only; CONFIG GET shows them) ---- */

static int show(void *ctx, char *buf, size_t cap)
{
    size_t len = strlen(ctx);

    len = len < cap ? len : cap;
    memcpy(buf, ctx, len);
    return (int)len;
}

static void setting_texts(struct goblind_rings *rs)
{
    size_t len = 0, cap = sizeof(rs->setting[0]);

    for (int i = 0; i < rs->n && len < cap; i++)
        len += (size_t)snprintf(rs->setting[0] + len, cap - len,
                                "%s%s %llu", i > 0 ? " " : "",
                                rs->v[i].path,
                                (unsigned long long)rs->v[i].size);
    snprintf(rs->setting[1], cap, "%s",
             rs->cpus_text != NULL ? rs->cpus_text : "");
    snprintf(rs->setting[2], cap, "%s",
             rs->idle == GOBLIN_RING_IDLE_SPIN ? "spin" : "backoff");
    snprintf(rs->setting[3], cap, "%ld", rs->spin_us);
    snprintf(rs->setting[4], cap, "%lo", rs->perm);
}

int goblind_ring_register_settings(struct goblind *g)
{
    static const char *const names[] = {"ring", "ring-cpus", "ring-idle",
                                        "ring-spin-us", "ring-perm"};
    struct goblind_rings *rs = rings_of(g);
    int rc;

    if (rs == NULL)
        return GOBLIN_ENOMEM;
    setting_texts(rs);
    for (int i = 0; i < 5; i++) {
        struct goblin_setting s = {names[i], NULL, show, NULL,
                                   rs->setting[i]};
        if ((rc = goblin_engine_setting_add(g->engine, &s)) < 0)
            return rc;
    }
    return 0;
}

/* ---- one ring ---- */

static int ring_create(struct ring_ep *e)
{
    struct goblind_rings *rs = e->g->rings;
    struct goblin_ring_config cfg = {0};
    int rc;

    cfg.sq_size = cfg.cq_size = e->size;
    cfg.mode = (unsigned)rs->perm;
    cfg.idle = (int)rs->idle;
    cfg.spin_ns = rs->spin_us > 0 ? (uint64_t)rs->spin_us * 1000 : 1;
    e->nheld = 0;
    if (e->held == NULL) {          /* every record takes >= 64 bytes */
        e->held_cap = (size_t)(goblin_ring_capacity(e->size) / 64) + 1;
        e->held_cap = e->held_cap < HELD_MAX ? e->held_cap : HELD_MAX;
        e->held = calloc(e->held_cap, sizeof(*e->held));
        if (e->held == NULL)
            return GOBLIN_ENOMEM;
    }
    rc = goblin_ring_create(e->path, &cfg, &e->r);
    if (rc < 0)
        goblind_log(e->g, GOBLIN_LOG_WARNING, "Can't create ring %s: %s",
                    e->path, goblin_strerror(rc));
    return rc;
}

/* Under the lock: closes the session of the last client, if any. */
static void session_end(struct ring_ep *e)
{
    goblin_session_close(e->s);
    e->s = NULL;
    e->pending = e->closing = false;
}

/* A new client attached (new epoch): a fresh session. */
static void session_begin(struct ring_ep *e)
{
    struct goblin_session_info info = {GOBLIN_TRANSPORT_RING, e->path,
                                       e->path, -1, NULL};
    int rc;

    goblind_lock();
    session_end(e);
    e->nheld = 0;
    rc = goblin_session_open(e->g->engine, &info, &e->s);
    if (rc == 0 && !e->g->sbe_ring)
        rc = goblin_session_no_sbe(e->s);
    goblind_unlock();
    if (rc < 0)
        goblind_log(e->g, GOBLIN_LOG_WARNING, "Ring %s: can't open a "
                    "session: %s", e->path, goblin_strerror(rc));
    else
        goblind_log(e->g, GOBLIN_LOG_VERBOSE, "Ring client attached to %s",
                    e->path);
}

/* Drops the client: closes its session and replaces the ring file, so
 * the client sees GOBLIN_ECONNRESET and others are untouched. */
static void ring_reset(struct ring_ep *e)
{
    goblind_lock();
    session_end(e);
    goblind_unlock();
    goblin_ring_close(e->r);
    e->r = NULL;
    ring_create(e);
}

static void broken(struct ring_ep *e)
{
    goblind_log(e->g, GOBLIN_LOG_WARNING, "Ring %s: the client broke the "
                "ring protocol (bad index, length or record); resetting the "
                "ring", e->path);
    ring_reset(e);
}

/* Under the lock: copies the session's output into CQ records, as much
 * as fits, with one flush. Sets e->pending when some is left. */
static void output_to_cq(struct ring_ep *e)
{
    size_t len, done = 0;
    const char *out = goblin_session_output(e->s, &len);
    uint32_t max = goblin_ring_max_record(e->r);

    while (done < len) {
        uint32_t k = len - done < max ? (uint32_t)(len - done) : max;
        void *buf;

        if (goblin_ring_reserve(e->r, k, &buf) < 0)
            break;
        memcpy(buf, out + done, k);
        goblin_ring_commit(e->r, k);
        done += k;
    }
    if (done > 0) {
        goblin_ring_flush(e->r);
        goblin_session_output_consume(e->s, done);
    }
    e->pending = done < len;
    e->closing = e->closing || goblin_session_should_close(e->s);
}

/* Feeds n records to the session, releases them, collects the replies. */
static void feed(struct ring_ep *e, const struct goblin_slice *recs, int n)
{
    goblind_lock();
    for (int i = 0; i < n && e->s != NULL && !e->closing; i++)
        if (recs[i].len > 0 &&
            goblin_session_feed(e->s, recs[i].ptr, recs[i].len) < 0)
            e->closing = true;
    goblin_ring_release(e->r);
    if (e->s != NULL)
        output_to_cq(e);
    goblind_unlock();
}

/* One batch of whatever the ring has: records, a new session or a
 * protocol failure. */
static void serve(struct ring_ep *e)
{
    struct goblin_slice recs[BATCH];
    int n = goblin_ring_poll(e->r, recs, BATCH);

    if (n == GOBLIN_RING_SESSION) {
        session_begin(e);
    } else if (n == GOBLIN_EPROTO) {
        broken(e);
    } else if (n > 0) {
        feed(e, recs, n);
    }
}

/* CQ was full: tries again; true when all output is in CQ. */
static bool retry_output(struct ring_ep *e)
{
    goblind_lock();
    if (e->s != NULL)
        output_to_cq(e);
    else
        e->pending = false;
    goblind_unlock();
    return !e->pending;
}

/* Waits for CQ room without blocking anything: spin mode relaxes, backoff
 * spins for ring-spin-us, then naps. */
static void full_wait(struct ring_ep *e, int64_t *since, long *nap)
{
    struct timespec ts;
    int64_t now;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    now = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    if (*since == 0) {
        *since = now;
        *nap = FULL_NAP_NS;
    }
    if (e->g->rings->idle == GOBLIN_RING_IDLE_SPIN ||
        now - *since < e->g->rings->spin_us * 1000) {
        sched_yield();
        return;
    }
    ts = (struct timespec){0, *nap};
    nanosleep(&ts, NULL);
    *nap = *nap * 2 < FULL_NAP_MAX ? *nap * 2 : FULL_NAP_MAX;
}

/* CQ full: peeks one more SQ record without executing it, to notice a
 * new epoch or a broken ring. True when something happened. */
static bool hold_next(struct ring_ep *e)
{
    struct goblin_slice rec;
    int rc;

    if (e->nheld >= e->held_cap)
        return false;
    rc = goblin_ring_peek(e->r, &rec);
    if (rc == GOBLIN_RING_RECORD)
        e->held[e->nheld++] = rec;
    else if (rc == GOBLIN_RING_SESSION)
        session_begin(e);
    else if (rc == GOBLIN_EPROTO)
        broken(e);
    return rc != 0;
}

/* Session killed from elsewhere (CLIENT KILL), checked when idle. */
static bool killed(struct ring_ep *e)
{
    bool k;

    goblind_lock();
    k = e->s != NULL && goblin_session_should_close(e->s);
    goblind_unlock();
    return k;
}

static void pin(struct ring_ep *e, int index)
{
    struct goblind_rings *rs = e->g->rings;
    cpu_set_t set;

    pthread_setname_np(pthread_self(), "goblind-ring");
    if (rs->ncpus == 0)
        return;
    CPU_ZERO(&set);
    CPU_SET(rs->cpus[index % rs->ncpus], &set);
    if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0)
        goblind_log(e->g, GOBLIN_LOG_WARNING, "Ring %s: can't pin to CPU "
                    "%d", e->path, rs->cpus[index % rs->ncpus]);
}

static void *ring_main(void *arg)
{
    struct ring_ep *e = arg;
    struct goblind_rings *rs = e->g->rings;
    int64_t full_since = 0;
    long nap = 0;

    pin(e, (int)(e - rs->v));
    while (!atomic_load_explicit(&rs->stop, memory_order_relaxed)) {
        if (e->r == NULL) {                  /* re-creation failed */
            struct timespec ts = {0, WAIT_NS};
            nanosleep(&ts, NULL);
            ring_create(e);
        } else if (e->pending && !retry_output(e)) {
            if (!hold_next(e))               /* CQ full: nothing runs */
                full_wait(e, &full_since, &nap);
        } else if (e->nheld > 0) {
            full_since = 0;
            feed(e, e->held, (int)e->nheld);
            e->nheld = 0;
        } else if (e->closing) {
            ring_reset(e);
        } else if (goblin_ring_wait(e->r, WAIT_NS) > 0) {
            full_since = 0;
            serve(e);
        } else if (killed(e)) {
            ring_reset(e);
        }
    }
    return NULL;
}

/* ---- start and stop ---- */

int goblind_ring_start(struct goblind *g)
{
    struct goblind_rings *rs = g->rings;

    for (int i = 0; rs != NULL && i < rs->n; i++) {
        rs->v[i].g = g;
        if (ring_create(&rs->v[i]) < 0)
            return -1;
        goblind_log(g, GOBLIN_LOG_NOTICE, "Ring ready at %s (%llu bytes "
                    "each way, %s)", rs->v[i].path,
                    (unsigned long long)goblin_ring_capacity(rs->v[i].size),
                    rs->idle == GOBLIN_RING_IDLE_SPIN ? "spin" : "backoff");
    }
    for (int i = 0; rs != NULL && i < rs->n; i++) {
        if (pthread_create(&rs->v[i].th, NULL, ring_main, &rs->v[i]) != 0) {
            goblind_log(g, GOBLIN_LOG_WARNING, "Can't start a ring thread");
            return -1;
        }
        rs->v[i].started = true;
    }
    return 0;
}

void goblind_ring_stop(struct goblind *g)
{
    struct goblind_rings *rs = g->rings;

    if (rs == NULL)
        return;
    atomic_store(&rs->stop, true);
    for (int i = 0; i < rs->n; i++)
        if (rs->v[i].started) {
            pthread_join(rs->v[i].th, NULL);
            rs->v[i].started = false;
        }
    for (int i = 0; i < rs->n; i++) {
        session_end(&rs->v[i]);
        goblin_ring_close(rs->v[i].r);        /* unlinks the file */
        rs->v[i].r = NULL;
    }
}

void goblind_ring_free(struct goblind *g)
{
    struct goblind_rings *rs = g->rings;

    if (rs == NULL)
        return;
    for (int i = 0; i < rs->n; i++) {
        free(rs->v[i].path);
        free(rs->v[i].held);
    }
    free(rs->v);
    free(rs->cpus_text);
    free(rs);
    g->rings = NULL;
}
