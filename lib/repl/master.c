/* master.c - the master side of replication (repl.h): replication ids,
 * the backlog as the stream's REPLICATION consumer, replicas' states,
 * the full sync's two ends around the server's fork, PSYNC's choice
 * between +CONTINUE and +FULLRESYNC, the cron (PINGs, timeouts, the
 * backlog's size and TTL), and what INFO and ROLE show. Redis 7.0's
 * replication.c is the model. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/settings.h"
#include "engine/text.h"
#include "goblin/repl.h"
#include "goblin/stream.h"
#include "commands/respond.h"
#include "repl.h"
#include "replica.h"
#include "stream/propagate.h"

static void logf_(goblin_engine *eng, enum goblin_log_level lv,
                  const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void logf_(goblin_engine *eng, enum goblin_log_level lv,
                  const char *fmt, ...)
{
    char line[512];
    va_list ap;

    if (eng->cfg.log == NULL)
        return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    eng->cfg.log(eng->cfg.log_ctx, lv, line);
}

/* A new random replication id (Redis's changeReplicationId). */
static void new_id(goblin_engine *eng, char *out)
{
    struct timespec ts;
    uint64_t seed[4];

    clock_gettime(CLOCK_REALTIME, &ts);
    seed[0] = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    seed[1] = (uint64_t)(uintptr_t)eng;
    seed[2] = (uint64_t)getpid();
    seed[3] = eng->repl != NULL ? ++eng->repl->id_gen : 0;
    for (int i = 0; i < 48; i += 16) {
        char hex[17];
        uint64_t h = goblin__hash_bytes((uint64_t)i * 0x9e3779b97f4a7c15ull,
                                        seed, sizeof(seed));

        snprintf(hex, sizeof(hex), "%016llx", (unsigned long long)h);
        memcpy(out + i, hex, i + 16 <= 40 ? 16 : 40 - i);
    }
    out[40] = '\0';
}

static void clear_id2(struct goblin__repl *r)
{
    memset(r->replid2, '0', 40);
    r->replid2[40] = '\0';
    r->second_off = -1;
}

struct goblin__repl *goblin__repl_get(goblin_engine *eng)
{
    struct goblin__repl *r = eng->repl;

    if (r != NULL)
        return r;
    if ((r = calloc(1, sizeof(*r))) == NULL)
        return NULL;
    eng->repl = r;
    r->link_epfd = -1;
    new_id(eng, r->replid);
    clear_id2(r);
    r->no_replicas_since_ms = goblin__now_ms(eng->st);
    return r;
}

void goblin__repl_change_id(goblin_engine *eng)
{
    struct goblin__repl *r = goblin__repl_get(eng);

    if (r == NULL)
        return;
    new_id(eng, r->replid);
    clear_id2(r);
}

static void backlog_drop(goblin_engine *eng, struct goblin__repl *r)
{
    if (r->subscribed)
        goblin_stream_unsubscribe(eng, r->stream_id);
    r->subscribed = false;
    goblin__backlog_free(&r->backlog);
}

void goblin__repl_free(goblin_engine *eng)
{
    struct goblin__repl *r = eng->repl;

    if (r == NULL)
        return;
    goblin__link_free(eng);
    backlog_drop(eng, r);
    for (size_t i = 0; i < r->nreplicas; i++) {
        goblin_buf_free(&r->replicas[i]->hold);
        free(r->replicas[i]);
    }
    free(r->replicas);
    free(r);
    eng->repl = NULL;
}

struct goblin__replica *goblin__replica_of(goblin_session *s, bool create)
{
    struct goblin__repl *r = create ? goblin__repl_get(s->eng) : s->eng->repl;
    struct goblin__replica *rp;

    if (r == NULL)
        return NULL;
    if (s->flags & SESS_REPLICA)
        for (size_t i = 0; i < r->nreplicas; i++)
            if (r->replicas[i]->s == s)
                return r->replicas[i];
    if (!create)
        return NULL;
    if (r->nreplicas == r->cap) {
        size_t cap = r->cap == 0 ? 4 : r->cap * 2;
        void *p = realloc(r->replicas, cap * sizeof(*r->replicas));

        if (p == NULL)
            return NULL;
        r->replicas = p;
        r->cap = cap;
    }
    if ((rp = calloc(1, sizeof(*rp))) == NULL)
        return NULL;
    rp->s = s;
    rp->hold.alloc = &s->eng->acct;
    r->replicas[r->nreplicas++] = rp;
    s->flags |= SESS_REPLICA;
    return rp;
}

bool goblin__repl_is_replica(goblin_session *s)
{
    struct goblin__replica *rp;

    if (!(s->flags & SESS_REPLICA))
        return false;
    rp = goblin__replica_of(s, false);
    return rp != NULL && rp->state != GOBLIN__REPLICA_NONE;
}

static size_t count_replicas(const struct goblin__repl *r)
{
    size_t n = 0;

    for (size_t i = 0; i < r->nreplicas; i++)
        n += r->replicas[i]->state != GOBLIN__REPLICA_NONE;
    return n;
}

void goblin__repl_session_gone(goblin_session *s)
{
    struct goblin__repl *r = s->eng->repl;

    s->flags &= ~(uint32_t)SESS_REPLICA;
    if (r == NULL)
        return;
    for (size_t i = 0; i < r->nreplicas; i++)
        if (r->replicas[i]->s == s) {
            struct goblin__replica *rp = r->replicas[i];

            if (rp->state != GOBLIN__REPLICA_NONE)
                logf_(s->eng, GOBLIN_LOG_NOTICE, "Connection with replica "
                      "%s lost.", s->peer != NULL ? s->peer : "?");
            goblin_buf_free(&rp->hold);
            free(rp);
            r->replicas[i] = r->replicas[--r->nreplicas];
            break;
        }
    if (count_replicas(r) == 0)
        r->no_replicas_since_ms = goblin__now_ms(s->eng->st);
}

/* client-output-buffer-limit's replica class over what the replica has
 * not been sent yet. */
static bool over_limit(struct goblin__replica *rp)
{
    goblin_session *s = rp->s;
    const uint64_t *lim = s->eng->obuf_limit[1];
    uint64_t pending = s->out.len - s->out_pos + s->push.len + rp->hold.len;
    int64_t now;

    if (lim[0] != 0 && pending > lim[0])
        return true;
    if (lim[1] == 0 || pending <= lim[1]) {
        s->obuf_soft_since_ms = 0;
        return false;
    }
    now = goblin__now_ms(s->eng->st);
    if (s->obuf_soft_since_ms == 0)
        s->obuf_soft_since_ms = now;
    return (uint64_t)(now - s->obuf_soft_since_ms) / 1000 >= lim[2];
}

static void drop_over_limit(struct goblin__replica *rp)
{
    goblin_session *s = rp->s;

    logf_(s->eng, GOBLIN_LOG_WARNING, "Client id=%llu addr=%s "
          "scheduled to be closed ASAP for overcoming of output buffer "
          "limits.", (unsigned long long)s->id,
          s->peer != NULL ? s->peer : "?");
    s->flags |= SESS_CLOSE | SESS_OBUF_LIMIT;
    s->push.len = 0;
    goblin_buf_free(&rp->hold);
    rp->hold.alloc = &s->eng->acct;
    if (s != s->eng->running)
        goblin__session_wake(s);
}

/* Queues bytes for an online replica and wakes its server. */
static void feed(struct goblin__replica *rp, const void *p, size_t n)
{
    goblin_session *s = rp->s;

    if (s->flags & SESS_CLOSE)
        return;
    goblin_buf_append(&s->push, p, n);
    if (over_limit(rp)) {
        drop_over_limit(rp);
        return;
    }
    if (s != s->eng->running)
        goblin__session_wake(s);
}

static void feed_cb(void *ctx, const void *p, size_t n)
{
    feed(ctx, p, n);
}

/* The stream's REPLICATION consumer. */
static void on_unit(void *ctx, const void *bytes, size_t len, uint64_t off)
{
    goblin_engine *eng = ctx;
    struct goblin__repl *r = eng->repl;

    if (eng->running != NULL)
        eng->running->repl_woff = off;
    goblin__backlog_append(&r->backlog, bytes, len);
    for (size_t i = 0; i < r->nreplicas; i++) {
        struct goblin__replica *rp = r->replicas[i];

        if (rp->state == GOBLIN__REPLICA_ONLINE && !rp->start_on_ack) {
            feed(rp, bytes, len);
        } else if (rp->state != GOBLIN__REPLICA_NONE &&
                   rp->state != GOBLIN__REPLICA_WAIT_START &&
                   !(rp->s->flags & SESS_CLOSE)) {
            goblin_buf_append(&rp->hold, bytes, len);
            if (over_limit(rp))
                drop_over_limit(rp);
        }
    }
}

/* The first replica creates the backlog, with a new id (as Redis: the
 * history before it cannot be served anyway). */
static int backlog_make(goblin_engine *eng, struct goblin__repl *r)
{
    int64_t size = goblin_engine_config_int(eng, "repl-backlog-size",
                                            1048576);
    int rc;

    if (r->backlog.buf != NULL)
        return 0;
    if (r->link == NULL) { /* a replica's id is its master's */
        new_id(eng, r->replid);
        clear_id2(r);
    }
    if ((rc = goblin__backlog_init(&r->backlog, (size_t)size,
                                   goblin_stream_offset(eng))) != 0)
        return rc;
    if ((rc = goblin_stream_subscribe(eng, GOBLIN_STREAM_REPLICATION,
                                      on_unit, eng, &r->stream_id)) != 0) {
        goblin__backlog_free(&r->backlog);
        return rc;
    }
    r->subscribed = true;
    /* The subscription starts the offset from where it was. */
    r->backlog.end = goblin_stream_offset(eng);
    return 0;
}

static void drop_replica(struct goblin__replica *rp)
{
    goblin__session_kill(rp->s, rp->s->eng->running);
}

/* Whether the replicas waiting for a full sync should have their child
 * now: repl-diskless-sync-delay seconds after the first of them asked,
 * so that replicas arriving together share one fork, or as soon as
 * repl-diskless-sync-max-replicas of them wait (Redis's replicationCron
 * and its checks before a disk-less BGSAVE). */
static bool sync_due(goblin_engine *eng, const struct goblin__repl *r)
{
    int64_t delay = goblin_engine_config_int(eng, "repl-diskless-sync-delay",
                                             5);
    int64_t max = goblin_engine_config_int(
        eng, "repl-diskless-sync-max-replicas", 0);
    int64_t now = goblin__now_ms(eng->st), oldest = now;
    int64_t waiting = 0;

    for (size_t i = 0; i < r->nreplicas; i++) {
        const struct goblin__replica *rp = r->replicas[i];

        if (rp->state != GOBLIN__REPLICA_WAIT_START ||
            (rp->s->flags & SESS_CLOSE))
            continue;
        waiting++;
        if (rp->wait_ms < oldest)
            oldest = rp->wait_ms;
    }
    if (waiting == 0)
        return false;
    return delay <= 0 || (max > 0 && waiting >= max) ||
           now - oldest >= delay * 1000;
}

/* Starts one child for every replica waiting for a full sync (the cron
 * calls it again while the delay lasts). */
static void start_sync(goblin_engine *eng, struct goblin__repl *r)
{
    uint64_t off;
    size_t n = 0;
    int rc;

    if (r->child || eng->cfg.repl_fork == NULL || !sync_due(eng, r))
        return;
    goblin__stream_flush(eng);
    off = goblin_stream_offset(eng);
    for (size_t i = 0; i < r->nreplicas; i++) {
        struct goblin__replica *rp = r->replicas[i];
        char line[80];
        int k;

        if (rp->state != GOBLIN__REPLICA_WAIT_START ||
            (rp->s->flags & SESS_CLOSE))
            continue;
        if (!rp->old_sync) {
            k = snprintf(line, sizeof(line), "+FULLRESYNC %s %llu\r\n",
                         r->replid, (unsigned long long)off);
            goblin_buf_append(&rp->s->out, line, (size_t)k);
        }
        rp->state = GOBLIN__REPLICA_SYNCING;
        rp->hold.len = 0;
        rp->acked = false;
        n++;
    }
    if (n == 0)
        return;
    goblin_stream_reselect(eng, GOBLIN_STREAM_REPLICATION);
    rc = eng->cfg.repl_fork(eng->cfg.repl_fork_ctx);
    for (size_t i = 0; i < r->nreplicas; i++) {
        struct goblin__replica *rp = r->replicas[i];

        if (rp->state != GOBLIN__REPLICA_SYNCING)
            continue;
        if (rc != 0) {
            drop_replica(rp);
            continue;
        }
        /* The child sends what the output held, +FULLRESYNC last. */
        rp->s->out.len = 0;
        rp->s->out_pos = 0;
        r->sync_full++;
    }
    if (rc != 0) {
        logf_(eng, GOBLIN_LOG_WARNING, "Can't start the full sync of "
              "replicas: %s", goblin_strerror(rc));
        return;
    }
    r->child = true;
    logf_(eng, GOBLIN_LOG_NOTICE, "Starting BGSAVE for SYNC with target: "
          "replicas sockets");
}

void goblin_repl_sync_done(goblin_engine *eng, bool ok)
{
    struct goblin__repl *r = eng->repl;
    int64_t now = goblin__now_ms(eng->st);

    if (r == NULL)
        return;
    r->child = false;
    /* Redis's backgroundSaveDoneHandlerSocket lines. */
    if (ok)
        logf_(eng, GOBLIN_LOG_NOTICE, "Background RDB transfer terminated "
              "with success");
    else
        logf_(eng, GOBLIN_LOG_WARNING, "Background transfer error");
    for (size_t i = 0; i < r->nreplicas; i++) {
        struct goblin__replica *rp = r->replicas[i];

        if (rp->state != GOBLIN__REPLICA_SYNCING)
            continue;
        if (!ok) {
            logf_(eng, GOBLIN_LOG_WARNING, "Diskless rdb transfer to "
                  "replica %s failed", rp->s->peer);
            drop_replica(rp);
            continue;
        }
        rp->state = GOBLIN__REPLICA_ONLINE;
        rp->ack_ms = now;
        logf_(eng, GOBLIN_LOG_NOTICE, "Synchronization with replica %s "
              "succeeded", rp->s->peer);
        if (rp->capa_eof && !rp->acked)
            rp->start_on_ack = true;
        else
            goblin__repl_start_stream(rp);
    }
}

void goblin__repl_start_stream(struct goblin__replica *rp)
{
    rp->start_on_ack = false;
    if (rp->hold.len > 0)
        feed(rp, rp->hold.data, rp->hold.len);
    else
        goblin__session_wake(rp->s);
    goblin_buf_free(&rp->hold);
    rp->hold.alloc = &rp->s->eng->acct;
}

void goblin__repl_psync(goblin__exec *x, struct goblin_slice replid,
                        int64_t offset, bool old_sync)
{
    goblin_engine *eng = x->eng;
    goblin_session *s = x->sess;
    struct goblin__replica *rp = goblin__replica_of(s, false);
    struct goblin__repl *r;
    char line[80];
    int rc;

    if (rp != NULL && rp->state != GOBLIN__REPLICA_NONE)
        return; /* already a replica: ignored, as Redis */
    if (s->fd < 0 || s->transport == GOBLIN_TRANSPORT_RING ||
        eng->cfg.repl_fork == NULL) {
        goblin__reply_error(x, "ERR replication needs a socket connection "
                               "to a server that can fork");
        return;
    }
    if ((rp = goblin__replica_of(s, true)) == NULL) {
        goblin__reply_code(x, GOBLIN_ENOMEM);
        return;
    }
    r = eng->repl;
    if (!old_sync && r->backlog.buf != NULL && offset >= 0 &&
        ((replid.len == 40 && memcmp(replid.ptr, r->replid, 40) == 0) ||
         (replid.len == 40 && memcmp(replid.ptr, r->replid2, 40) == 0 &&
          offset <= r->second_off)) &&
        goblin__backlog_covers(&r->backlog, (uint64_t)offset)) {
        size_t sent;

        snprintf(line, sizeof(line), rp->capa_psync2 ? "CONTINUE %s" :
                 "CONTINUE", r->replid);
        goblin__reply_status(x, line);
        rp->state = GOBLIN__REPLICA_ONLINE;
        rp->ack_ms = goblin__now_ms(eng->st);
        s->flags |= SESS_REPLY_OFF;
        sent = goblin__backlog_copy(&r->backlog, (uint64_t)offset, feed_cb,
                                    rp);
        r->sync_partial_ok++;
        logf_(eng, GOBLIN_LOG_NOTICE, "Partial resynchronization request "
              "from %s accepted. Sending %zu bytes of backlog starting "
              "from offset %lld.", s->peer, sent, (long long)offset);
        return;
    }
    if (!old_sync && !(replid.len == 1 && ((const char *)replid.ptr)[0] == '?'))
        r->sync_partial_err++;
    logf_(eng, GOBLIN_LOG_NOTICE, "Replica %s asks for synchronization",
          s->peer);
    if ((rc = backlog_make(eng, r)) != 0) {
        goblin__reply_code(x, rc);
        return;
    }
    rp->state = GOBLIN__REPLICA_WAIT_START;
    rp->wait_ms = goblin__now_ms(eng->st);
    rp->old_sync = old_sync;
    s->flags |= SESS_REPLY_OFF;
    start_sync(eng, r);
}

size_t goblin__repl_acked(goblin_engine *eng, uint64_t offset)
{
    struct goblin__repl *r = eng->repl;
    size_t n = 0;

    if (r == NULL)
        return 0;
    for (size_t i = 0; i < r->nreplicas; i++)
        n += r->replicas[i]->state == GOBLIN__REPLICA_ONLINE &&
             r->replicas[i]->ack_off >= offset;
    return n;
}

/* min-replicas-to-write / min-replicas-max-lag: Redis's
 * refreshGoodReplicasCount and checkGoodReplicasStatus. Run by the cron
 * and whenever either setting changes, so the refusal holds from the
 * first command on, as in Redis. */
static void good_replicas(goblin_engine *eng, struct goblin__repl *r,
                          int64_t now)
{
    int64_t want = eng->min_replicas_to_write;
    int64_t lag = eng->min_replicas_max_lag;
    int64_t good = 0;

    if (want <= 0 || lag <= 0) {
        if (r != NULL)
            r->noreplicas = false;
        goblin__repl_gate_update(eng);
        return;
    }
    if (r == NULL && (r = goblin__repl_get(eng)) == NULL)
        return;
    for (size_t i = 0; i < r->nreplicas; i++)
        good += r->replicas[i]->state == GOBLIN__REPLICA_ONLINE &&
                (now - r->replicas[i]->ack_ms) / 1000 <= lag;
    r->good = good;
    r->noreplicas = good < want;
    goblin__repl_gate_update(eng);
}

static int get_min_to_write(void *ctx, char *buf, size_t cap)
{
    return snprintf(buf, cap, "%lld",
                    (long long)((goblin_engine *)ctx)->min_replicas_to_write);
}

static int get_min_max_lag(void *ctx, char *buf, size_t cap)
{
    return snprintf(buf, cap, "%lld",
                    (long long)((goblin_engine *)ctx)->min_replicas_max_lag);
}

static int set_min(goblin_engine *eng, const char *name, int64_t *field,
                   struct goblin_slice v, const char **why)
{
    int64_t n;

    if (goblin__setting_parse(name, v, &n, why) != 0)
        return GOBLIN_EINVAL;
    *field = n;
    good_replicas(eng, eng->repl, goblin__now_ms(eng->st));
    return 0;
}

static int set_min_to_write(void *ctx, struct goblin_slice v,
                            const char **why)
{
    goblin_engine *eng = ctx;

    return set_min(eng, "min-replicas-to-write", &eng->min_replicas_to_write,
                   v, why);
}

static int set_min_max_lag(void *ctx, struct goblin_slice v,
                           const char **why)
{
    goblin_engine *eng = ctx;

    return set_min(eng, "min-replicas-max-lag", &eng->min_replicas_max_lag,
                   v, why);
}

int goblin__repl_settings_init(goblin_engine *eng)
{
    const struct goblin_setting own[] = {
        {"min-replicas-to-write", "min-slaves-to-write", get_min_to_write,
         set_min_to_write, eng},
        {"min-replicas-max-lag", "min-slaves-max-lag", get_min_max_lag,
         set_min_max_lag, eng},
    };
    int rc;

    eng->min_replicas_to_write = 0;
    eng->min_replicas_max_lag = 10;
    for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
        if ((rc = goblin_engine_setting_add(eng, &own[i])) != 0)
            return rc;
    return goblin__link_settings_init(eng);
}

void goblin__repl_cron(goblin_engine *eng)
{
    struct goblin__repl *r = eng->repl;
    int64_t now = goblin__now_ms(eng->st), period, ttl, timeout, size;
    size_t n;

    good_replicas(eng, r, now);
    if (r == NULL)
        return;
    goblin__link_cron(eng);
    n = count_replicas(r);
    if (n > 0) {
        period = goblin_engine_config_int(eng, "repl-ping-replica-period",
                                          10);
        /* A replica passes its master's PINGs on instead. */
        if (r->link == NULL && now - r->last_ping_ms >= period * 1000) {
            static const struct goblin_slice ping = {"PING", 4};

            r->last_ping_ms = now;
            goblin_stream_emit(eng, GOBLIN_STREAM_REPLICATION, -1, 1, &ping);
        }
        timeout = goblin_engine_config_int(eng, "repl-timeout", 60);
        for (size_t i = 0; i < r->nreplicas; i++) {
            struct goblin__replica *rp = r->replicas[i];

            if (rp->state == GOBLIN__REPLICA_ONLINE && !rp->old_sync &&
                now - rp->ack_ms > timeout * 1000 &&
                !(rp->s->flags & SESS_CLOSE)) {
                logf_(eng, GOBLIN_LOG_WARNING, "Disconnecting timedout "
                      "replica (streaming sync): %s", rp->s->peer);
                drop_replica(rp);
            }
        }
        start_sync(eng, r);
    }
    if (r->backlog.buf == NULL)
        return;
    size = goblin_engine_config_int(eng, "repl-backlog-size", 1048576);
    if ((size_t)size != r->backlog.size)
        goblin__backlog_resize(&r->backlog, (size_t)size);
    ttl = goblin_engine_config_int(eng, "repl-backlog-ttl", 3600);
    if (n == 0 && ttl > 0 && r->link == NULL &&
        now - r->no_replicas_since_ms >= ttl * 1000) {
        logf_(eng, GOBLIN_LOG_NOTICE, "Replication backlog freed after %lld "
              "seconds without connected replicas.", (long long)ttl);
        backlog_drop(eng, r);
        new_id(eng, r->replid);
        clear_id2(r);
    }
}

/* The replica's address: what it announced, else its peer's host. */
static void replica_ip(const struct goblin__replica *rp, char *out,
                       size_t cap)
{
    const char *peer = rp->s->peer != NULL ? rp->s->peer : "";
    const char *colon = strrchr(peer, ':');
    size_t len = colon != NULL ? (size_t)(colon - peer) : strlen(peer);

    if (rp->ip[0] != '\0') {
        snprintf(out, cap, "%s", rp->ip);
        return;
    }
    if (len >= 2 && peer[0] == '[' && peer[len - 1] == ']') {
        peer++;
        len -= 2;
    }
    snprintf(out, cap, "%.*s", (int)len, peer);
}

static const char *state_name(enum goblin__replica_state st)
{
    return st == GOBLIN__REPLICA_ONLINE ? "online" : "wait_bgsave";
}

void goblin__repl_info(goblin_engine *eng, struct goblin__text *t)
{
    struct goblin__repl *r = goblin__repl_get(eng);
    int64_t now = goblin__now_ms(eng->st);
    size_t k = 0;

    if (r == NULL)
        return;
    if (!goblin__link_info(eng, t))
        goblin__text_addf(t, "role:master\r\n");
    goblin__text_addf(t, "connected_slaves:%zu\r\n", count_replicas(r));
    if (eng->min_replicas_to_write > 0 && eng->min_replicas_max_lag > 0)
        goblin__text_addf(t, "min_slaves_good_slaves:%lld\r\n",
                          (long long)r->good);
    for (size_t i = 0; i < r->nreplicas; i++) {
        const struct goblin__replica *rp = r->replicas[i];
        char ip[64];

        if (rp->state == GOBLIN__REPLICA_NONE)
            continue;
        replica_ip(rp, ip, sizeof(ip));
        goblin__text_addf(t, "slave%zu:ip=%s,port=%ld,state=%s,"
                          "offset=%llu,lag=%lld\r\n", k++, ip, rp->port,
                          state_name(rp->state),
                          (unsigned long long)rp->ack_off,
                          (long long)((now - rp->ack_ms) / 1000));
    }
    goblin__text_addf(
        t, "master_failover_state:no-failover\r\nmaster_replid:%s\r\n"
        "master_replid2:%s\r\nmaster_repl_offset:%llu\r\n"
        "second_repl_offset:%lld\r\nrepl_backlog_active:%d\r\n"
        "repl_backlog_size:%lld\r\nrepl_backlog_first_byte_offset:%llu\r\n"
        "repl_backlog_histlen:%zu\r\n",
        r->replid, r->replid2, (unsigned long long)goblin_stream_offset(eng),
        (long long)r->second_off, r->backlog.buf != NULL,
        (long long)goblin_engine_config_int(eng, "repl-backlog-size",
                                            1048576),
        r->backlog.buf != NULL ?
            (unsigned long long)goblin__backlog_first(&r->backlog) : 0ull,
        r->backlog.histlen);
}

void goblin__repl_role(goblin__exec *x)
{
    struct goblin__repl *r = goblin__repl_get(x->eng);
    size_t n = 0;

    if (r != NULL && r->link != NULL) {
        goblin__link_role(x);
        return;
    }
    goblin__reply_array(x, 3);
    goblin__reply_bulk(x, "master", 6);
    goblin__reply_int(x, (int64_t)goblin_stream_offset(x->eng));
    for (size_t i = 0; r != NULL && i < r->nreplicas; i++)
        n += r->replicas[i]->state == GOBLIN__REPLICA_ONLINE;
    goblin__reply_array(x, n);
    for (size_t i = 0; r != NULL && i < r->nreplicas; i++) {
        const struct goblin__replica *rp = r->replicas[i];
        char ip[64], num[24];

        if (rp->state != GOBLIN__REPLICA_ONLINE)
            continue;
        replica_ip(rp, ip, sizeof(ip));
        goblin__reply_array(x, 3);
        goblin__reply_cstr(x, ip);
        snprintf(num, sizeof(num), "%ld", rp->port);
        goblin__reply_cstr(x, num);
        snprintf(num, sizeof(num), "%llu", (unsigned long long)rp->ack_off);
        goblin__reply_cstr(x, num);
    }
}

void goblin__repl_stats(const goblin_engine *eng, struct goblin__text *t)
{
    const struct goblin__repl *r = eng->repl;

    goblin__text_addf(t, "sync_full:%llu\r\nsync_partial_ok:%llu\r\n"
                      "sync_partial_err:%llu\r\n",
                      r != NULL ? (unsigned long long)r->sync_full : 0ull,
                      r != NULL ? (unsigned long long)r->sync_partial_ok : 0ull,
                      r != NULL ? (unsigned long long)r->sync_partial_err :
                                  0ull);
}

/* ---- a replica's ids and backlog (replica.h) ---- */

int goblin__repl_backlog_ensure(goblin_engine *eng)
{
    struct goblin__repl *r = goblin__repl_get(eng);

    return r == NULL ? GOBLIN_ENOMEM : backlog_make(eng, r);
}

int goblin__repl_adopt(goblin_engine *eng, const char *replid,
                       uint64_t offset)
{
    struct goblin__repl *r = goblin__repl_get(eng);

    if (r == NULL)
        return GOBLIN_ENOMEM;
    backlog_drop(eng, r);
    memcpy(r->replid, replid, 40);
    r->replid[40] = '\0';
    clear_id2(r);
    goblin_stream_set_offset(eng, offset);
    return backlog_make(eng, r);
}

void goblin__repl_shift_id(goblin_engine *eng, const char *newid)
{
    struct goblin__repl *r = goblin__repl_get(eng);

    if (r == NULL)
        return;
    memcpy(r->replid2, r->replid, 41);
    r->second_off = (int64_t)goblin_stream_offset(eng) + 1;
    if (newid != NULL) {
        memcpy(r->replid, newid, 40);
        r->replid[40] = '\0';
    } else {
        new_id(eng, r->replid);
    }
    logf_(eng, GOBLIN_LOG_NOTICE, "Setting secondary replication ID to "
          "%s, valid up to offset: %lld. New replication ID is %s",
          r->replid2, (long long)r->second_off, r->replid);
}

void goblin__repl_drop_replicas(goblin_engine *eng)
{
    struct goblin__repl *r = eng->repl;

    for (size_t i = 0; r != NULL && i < r->nreplicas; i++)
        if (r->replicas[i]->state != GOBLIN__REPLICA_NONE &&
            !(r->replicas[i]->s->flags & SESS_CLOSE))
            drop_replica(r->replicas[i]);
}
