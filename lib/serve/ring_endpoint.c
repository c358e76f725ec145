/* ring_endpoint.c - one ring file and the session of its attached client
 * (goblin/serve.h): the record pump between a ring and an engine.
 *
 * SQ records are a byte stream into the session (RESP may span records;
 * an SBE client sends the magic, then one frame per record, and the
 * session's parser takes the same stream). The fast path: an SBE record
 * holding one whole small frame, or a small RESP record, is copied to the
 * stack, run at once, and its reply encoded straight into a CQ
 * reservation (run_direct); a session with nothing pending peeks and
 * runs its records one by one (step_direct), and a typed frame of a
 * session in its plain state takes the direct path (goblin__sbe_direct:
 * no input buffer, no admission checks, the handler found by template
 * id). Other
 * replies are copied into CQ records of at most goblin_ring_max_record()
 * bytes. One flush per batch.
 *
 * Invariants: ep->s is NULL or the session of the current epoch; ep->s
 * is touched only between lock and unlock; ep->held[0..nheld) are SQ
 * records peeked but neither fed nor released (CQ was full).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "goblin/serve.h"
#include "ring/ring_fast.h"
#include "sbe/request.h"
#include "serve_int.h"
#include "util/config_size.h"

#define BATCH 64             /* SQ records fed per lock hold */
#define HELD_MAX 65537       /* records peeked while CQ is full, at most:
                              * all SQ can hold up to 4 MiB rings */

struct goblin_ring_endpoint {
    struct goblin_ring_endpoint_config cfg;
    struct goblin_ring_config ring; /* cfg.ring points here */
    char *path;
    goblin_ring *r;            /* NULL while re-creation fails */
    goblin_session *s;         /* the current client's, or NULL */
    struct goblin_slice *held; /* peeked, not yet fed: CQ was full */
    size_t nheld, held_cap;
    size_t pending;            /* output bytes CQ had no room for */
    bool closing;              /* close the session once its output is out */
};

static void lock(goblin_ring_endpoint *ep)
{
    if (ep->cfg.lock != NULL)
        ep->cfg.lock(ep->cfg.lock_ctx);
}

static void unlock(goblin_ring_endpoint *ep)
{
    if (ep->cfg.unlock != NULL)
        ep->cfg.unlock(ep->cfg.lock_ctx);
}

static void say(goblin_ring_endpoint *ep, enum goblin_log_level level,
                const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void say(goblin_ring_endpoint *ep, enum goblin_log_level level,
                const char *fmt, ...)
{
    char text[512];
    va_list ap;

    if (ep->cfg.log == NULL)
        return;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    ep->cfg.log(ep->cfg.log_ctx, level, text);
}

static int ring_create(goblin_ring_endpoint *ep)
{
    int rc = goblin_ring_create(ep->path, &ep->ring, &ep->r);

    ep->nheld = 0;
    if (rc < 0)
        say(ep, GOBLIN_LOG_WARNING, "Can't create ring %s: %s", ep->path,
            goblin_strerror(rc));
    return rc;
}

/* Under the lock: closes the session of the last client, if any. */
static void session_end(goblin_ring_endpoint *ep)
{
    goblin_session_close(ep->s);
    ep->s = NULL;
    ep->pending = 0;
    ep->closing = false;
}

/* The session's wake hook (under the lock, from any thread): a blocked
 * command was served, timed out or unblocked, or the session was killed.
 * ep->r is stable while the session exists: the ring is replaced only
 * after session_end. */
static void session_wake(void *ctx)
{
    goblin_ring_endpoint *ep = ctx;

    if (ep->r != NULL)
        goblin__ring_nudge(ep->r);
}

/* A new client attached (new epoch): a fresh session. */
static void session_begin(goblin_ring_endpoint *ep)
{
    struct goblin_session_info info = {GOBLIN_TRANSPORT_RING, ep->path,
                                       ep->path, -1, NULL};
    int rc;

    lock(ep);
    session_end(ep);
    ep->nheld = 0;
    rc = goblin_session_open(ep->cfg.engine, &info, &ep->s);
    if (rc == 0)
        goblin_session_set_wake(ep->s, session_wake, ep);
    if (rc == 0 && ep->cfg.no_sbe)
        rc = goblin_session_no_sbe(ep->s);
    if (rc < 0)
        session_end(ep);
    unlock(ep);
    if (rc < 0)
        say(ep, GOBLIN_LOG_WARNING, "Ring %s: can't open a session: %s",
            ep->path, goblin_strerror(rc));
    else
        say(ep, GOBLIN_LOG_VERBOSE, "Ring client attached to %s", ep->path);
}

/* Drops the client: closes its session and replaces the ring file, so
 * the client sees GOBLIN_ECONNRESET and others are untouched. */
static void ring_reset(goblin_ring_endpoint *ep)
{
    lock(ep);
    session_end(ep);
    unlock(ep);
    goblin_ring_close(ep->r);
    ep->r = NULL;
    ring_create(ep);
}

static void broken(goblin_ring_endpoint *ep)
{
    say(ep, GOBLIN_LOG_WARNING, "Ring %s: the client broke the ring "
        "protocol (bad index, length or record); resetting the ring",
        ep->path);
    ring_reset(ep);
}

/* Under the lock: copies the session's output into CQ records, as much
 * as fits, with one flush. Leaves in ep->pending what did not fit. */
static void output_to_cq(goblin_ring_endpoint *ep)
{
    size_t len, done = 0;
    const char *out = goblin_session_output(ep->s, &len);
    uint32_t max = goblin_ring_max_record(ep->r);

    if (len == 0) {
        ep->pending = 0;
        ep->closing = ep->closing || goblin_session_should_close(ep->s);
        return;
    }
    while (done < len) {
        uint32_t k = len - done < max ? (uint32_t)(len - done) : max;
        void *buf;

        if (goblin_ring_reserve(ep->r, k, &buf) < 0)
            break;
        memcpy(buf, out + done, k);
        goblin_ring_commit(ep->r, k);
        done += k;
    }
    if (done > 0) {
        goblin_ring_flush(ep->r);
        goblin_session_output_consume(ep->s, done);
    }
    ep->pending = len - done;
    ep->closing = ep->closing || goblin_session_should_close(ep->s);
}

/* The CQ room reserved for the reply of a request that runs straight from
 * its record: most replies of single-key requests fit; a longer one moves
 * to the session's output and goes the ordinary way. */
#define DIRECT_REPLY 240

/* Runs an SBE frame that fills rec, or the RESP commands of a small
 * record, its reply encoded straight into a CQ reservation (no copy
 * through the session's output). False when it cannot (protocol not
 * settled yet, a partial SBE frame, input or output pending, CQ short of
 * room): the record then takes goblin__session_feed_copy (a record is
 * shared memory the client may still write: it is copied, never parsed
 * in place). */
static bool run_direct(goblin_ring_endpoint *ep, struct goblin_slice rec,
                       int *rc)
{
    uint32_t max = ep->r->tx.max_len;
    uint32_t k = max < DIRECT_REPLY ? max : DIRECT_REPLY;
    bool sbe = ep->s->proto == GOBLIN__PROTO_SBE;
    int64_t n;
    void *buf;

    if ((!sbe && ep->s->proto != GOBLIN__PROTO_RESP) ||
        goblin__ring_reserve_fast(ep->r, k, &buf) != 0 ||
        !goblin__output_redirect(ep->s, buf, k))
        return false;
    if (!(sbe ? goblin__sbe_direct(ep->s, rec.ptr, rec.len, rc) ||
                    goblin__sbe_record(ep->s, rec.ptr, rec.len, rc)
              : goblin__resp_record(ep->s, rec.ptr, rec.len, rc))) {
        goblin__output_redirect_end(ep->s);
        return false;
    }
    n = goblin__output_redirect_end(ep->s);
    if (n > 0) {
        goblin__ring_commit_fast(ep->r, (uint32_t)n);
        ep->s->eng->stat_net_out += (uint64_t)n;
    }
    return true;
}

/* Feeds n records to the session, releases them, collects the replies. */
static void feed(goblin_ring_endpoint *ep, const struct goblin_slice *recs,
                 int n)
{
    int rc;

    lock(ep);
    for (int i = 0; i < n && ep->s != NULL && !ep->closing; i++) {
        if (recs[i].len == 0)
            continue;
        if (!run_direct(ep, recs[i], &rc))
            rc = goblin__session_feed_copy(ep->s, recs[i].ptr,
                                           recs[i].len);
        if (rc < 0)
            ep->closing = true;
    }
    goblin_ring_release(ep->r);
    if (ep->s != NULL)
        output_to_cq(ep);
    goblin_ring_flush(ep->r);
    unlock(ep);
}

/* The step of a session whose protocol is settled (ep->s and its
 * protocol: the caller's): records are peeked one at a time and each runs
 * at once from its record (run_direct), its reply straight into a CQ
 * reservation; one release and one flush for the batch. Output left in
 * the session (a record that took goblin__session_feed_copy, a reply that
 * spilled) goes the ordinary way after the batch.
 *
 * The first peek checks the epoch and the ring's state, and takes no
 * lock: SQ is this thread's alone, and output other threads leave in the
 * session comes with a nudge (session_wake). So a ring that spins idle
 * never takes the engine's lock, which the socket threads share. Within
 * the batch only the next record's stamp is looked at (a new epoch is
 * seen by the next step's first peek). */
static int step_direct(goblin_ring_endpoint *ep)
{
    struct goblin_slice rec;
    int n = 0, rc, frc;

    rc = goblin__ring_peek_fast(ep->r, &rec);
    if (rc == 0)
        return 0;
    lock(ep);
    if (rc == GOBLIN_RING_RECORD && ep->s->out.len != 0) {
        /* Output is pending: the record queues behind it. */
        unlock(ep);
        feed(ep, &rec, 1);
        return 1;
    }
    while (rc == GOBLIN_RING_RECORD) {
        n++;
        if (rec.len != 0) {
            if (!run_direct(ep, rec, &frc))
                frc = goblin__session_feed_copy(ep->s, rec.ptr, rec.len);
            if (frc < 0)
                ep->closing = true;
        }
        if (n >= BATCH || ep->s == NULL || ep->closing)
            break;
        rc = ep->r->err != 0 ? ep->r->err
                             : goblin__ring_queue_peek_plain(&ep->r->rx, &rec);
        if (rc < 0 && rc != GOBLIN_EPROTO)
            rc = goblin_ring_peek(ep->r, &rec); /* a filler, or broken */
    }
    if (rc != GOBLIN_RING_SESSION && rc != GOBLIN_EPROTO) {
        goblin__ring_release_fast(ep->r);
        if (ep->s != NULL && (ep->s->out.len != ep->s->out_pos ||
                              ep->s->push.len != 0))
            output_to_cq(ep);
        else if (ep->s != NULL && (ep->s->flags & SESS_CLOSE))
            ep->closing = true;
        goblin__ring_flush_fast(ep->r);
    }
    unlock(ep);
    /* What the peek met instead of a record: a new client (the queues
     * are reset already; the old session's output is dropped with it),
     * or a broken ring. */
    if (rc == GOBLIN_RING_SESSION)
        session_begin(ep);
    else if (rc == GOBLIN_EPROTO)
        broken(ep);
    return n > 0 || rc < 0 || rc == GOBLIN_RING_SESSION;
}

/* CQ was full: true once it has room for the next piece of output (no
 * lock needed to ask: a reservation that is not committed is nothing). */
static bool cq_has_room(goblin_ring_endpoint *ep)
{
    uint32_t max = goblin_ring_max_record(ep->r);
    void *buf;

    return goblin_ring_reserve(ep->r, ep->pending < max
                                          ? (uint32_t)ep->pending : max,
                               &buf) == 0;
}

/* CQ full: peeks one more SQ record without executing it, to notice a
 * new epoch or a broken ring. True when something happened. */
static bool hold_next(goblin_ring_endpoint *ep)
{
    struct goblin_slice rec;
    int rc;

    if (ep->nheld >= ep->held_cap)
        return false;
    rc = goblin_ring_peek(ep->r, &rec);
    if (rc == GOBLIN_RING_RECORD)
        ep->held[ep->nheld++] = rec;
    else if (rc == GOBLIN_RING_SESSION)
        session_begin(ep);
    else if (rc == GOBLIN_EPROTO)
        broken(ep);
    return rc != 0;
}

goblin_session *goblin__ring_endpoint_session(const goblin_ring_endpoint *ep)
{
    return ep->s;
}

int goblin_ring_endpoint_step(goblin_ring_endpoint *ep)
{
    struct goblin_slice recs[BATCH];
    int n;

    if (ep->r == NULL)
        return 0;                        /* chores re-creates it */
    if (goblin__ring_nudge_take_fast(ep->r)) {
        /* Woken: resume the session (its served reply, then the input
         * that waited) and send what it has. */
        lock(ep);
        if (ep->s != NULL) {
            if (!ep->closing && goblin_session_resume(ep->s) < 0)
                ep->closing = true;
            output_to_cq(ep);
        }
        unlock(ep);
        return 1;
    }
    if (ep->pending > 0) {
        if (!cq_has_room(ep))
            return hold_next(ep);        /* CQ full: nothing runs */
        lock(ep);
        if (ep->s != NULL)
            output_to_cq(ep);
        else
            ep->pending = 0;
        unlock(ep);
        return 1;
    }
    if (ep->nheld > 0) {
        feed(ep, ep->held, (int)ep->nheld);
        ep->nheld = 0;
        return 1;
    }
    if (ep->closing) {
        ring_reset(ep);
        return 1;
    }
    /* ep->s and its protocol change only on this thread: step_direct
     * takes them as tested here. */
    if (ep->s != NULL && ep->s->proto != GOBLIN__PROTO_UNDECIDED)
        return step_direct(ep);
    n = goblin_ring_poll(ep->r, recs, BATCH);
    if (n == GOBLIN_RING_SESSION)
        session_begin(ep);
    else if (n == GOBLIN_EPROTO)
        broken(ep);
    else if (n > 0)
        feed(ep, recs, n);
    return n != 0;
}

/* A client that was killed (CLIENT KILL) is alive and must see the
 * reset; one whose process exited only leaves its session to close: the
 * ring itself stays, so a client attaching meanwhile is not disturbed
 * (its handshake discards whatever the dead one left in the queues). */
void goblin_ring_endpoint_chores(goblin_ring_endpoint *ep)
{
    bool killed;

    if (ep->r == NULL) {
        ring_create(ep);
        return;
    }
    lock(ep);
    killed = ep->s != NULL && goblin_session_should_close(ep->s);
    unlock(ep);
    if (killed) {
        ring_reset(ep);
    } else if (ep->s != NULL && goblin_ring_client_alive(ep->r) != 0) {
        say(ep, GOBLIN_LOG_VERBOSE, "Ring %s: its client exited; closing "
            "the session", ep->path);
        lock(ep);
        session_end(ep);
        unlock(ep);
        ep->nheld = 0;
    }
}

goblin_ring *goblin_ring_endpoint_ring(goblin_ring_endpoint *ep)
{
    return ep->r;
}

bool goblin_ring_endpoint_full(const goblin_ring_endpoint *ep)
{
    return ep->pending > 0;
}

static int ring_endpoint_open(const struct goblin_ring_endpoint_config *cfg,
                              goblin_ring_endpoint **out)
{
    goblin_ring_endpoint *ep;
    int rc;

    *out = NULL;
    if (cfg == NULL || cfg->engine == NULL || cfg->path == NULL ||
        cfg->path[0] == '\0')
        return GOBLIN_EINVAL;
    ep = calloc(1, sizeof(*ep));
    if (ep == NULL)
        return GOBLIN_ENOMEM;
    ep->cfg = *cfg;
    if (cfg->ring != NULL)
        ep->ring = *cfg->ring;
    ep->cfg.ring = &ep->ring;
    ep->path = strdup(cfg->path);
    ep->cfg.path = ep->path;
    /* Every record takes at least one 64-byte line. */
    ep->held_cap = (size_t)(goblin_ring_capacity(ep->ring.sq_size) / 64) + 1;
    ep->held_cap = ep->held_cap < HELD_MAX ? ep->held_cap : HELD_MAX;
    ep->held = calloc(ep->held_cap, sizeof(*ep->held));
    if (ep->path == NULL || ep->held == NULL) {
        goblin_ring_endpoint_close(ep);
        return GOBLIN_ENOMEM;
    }
    if ((rc = ring_create(ep)) < 0) {
        goblin_ring_endpoint_close(ep);
        return rc;
    }
    *out = ep;
    return 0;
}

int goblin_ring_endpoint_open_sized(
    const struct goblin_ring_endpoint_config *cfg, size_t cfg_size,
    goblin_ring_endpoint **out)
{
    struct goblin_ring_endpoint_config c;

    if (cfg == NULL)
        return ring_endpoint_open(NULL, out);
    if (goblin__config_copy(&c, sizeof(c), cfg, cfg_size,
                            sizeof(cfg->engine)) != 0)
        return GOBLIN_EINVAL;
    return ring_endpoint_open(&c, out);
}

void goblin_ring_endpoint_close(goblin_ring_endpoint *ep)
{
    if (ep == NULL)
        return;
    lock(ep);
    session_end(ep);
    unlock(ep);
    goblin_ring_close(ep->r);            /* removes the file */
    free(ep->held);
    free(ep->path);
    free(ep);
}
