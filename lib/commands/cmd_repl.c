/* cmd_repl.c - the replication commands: REPLCONF, PSYNC, SYNC, ROLE
 * and WAIT of a master, REPLICAOF (and SLAVEOF) to become or stop being
 * a replica (Redis's replconfCommand, syncCommand, roleCommand,
 * waitCommand, replicaofCommand); the work is lib/repl. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "goblin/numtext.h"
#include "engine/block.h"
#include "goblin/stream.h"
#include "handlers.h"
#include "repl/repl.h"
#include "repl/replica.h"
#include "respond.h"

static void waits_offer(goblin_engine *eng);

void goblin__cmd_replconf(goblin__exec *x, int argc,
                          const struct goblin_slice *argv)
{
    struct goblin__replica *rp;
    int64_t v;

    if (argc % 2 == 0) {
        goblin__reply_error(x, GOBLIN__ERR_SYNTAX);
        return;
    }
    if ((rp = goblin__replica_of(x->sess, true)) == NULL) {
        goblin__reply_code(x, GOBLIN_ENOMEM);
        return;
    }
    for (int j = 1; j < argc; j += 2) {
        const struct goblin_slice *opt = &argv[j], *val = &argv[j + 1];

        if (goblin__arg_is(*opt, "listening-port")) {
            if (!goblin__arg_int64(x, *val, &v, NULL))
                return;
            rp->port = (long)v;
        } else if (goblin__arg_is(*opt, "ip-address")) {
            if (val->len >= sizeof(rp->ip)) {
                goblin__reply_errorf(x, "ERR REPLCONF ip-address provided "
                                        "by replica instance is too long: "
                                        "%zd bytes", (ssize_t)val->len);
                return;
            }
            memcpy(rp->ip, val->ptr, val->len);
            rp->ip[val->len] = '\0';
        } else if (goblin__arg_is(*opt, "capa")) {
            if (goblin__arg_is(*val, "eof"))
                rp->capa_eof = true;
            else if (goblin__arg_is(*val, "psync2"))
                rp->capa_psync2 = true;
        } else if (goblin__arg_is(*opt, "ack") ||
                   goblin__arg_is(*opt, "fack")) {
            /* From a replica: no reply, as Redis. */
            if (rp->state == GOBLIN__REPLICA_NONE)
                return;
            if (goblin_int64_parse(val->ptr, val->len, &v) != 0)
                return;
            if (goblin__arg_is(*opt, "ack")) {
                if ((uint64_t)v > rp->ack_off)
                    rp->ack_off = (uint64_t)v;
                rp->ack_ms = goblin__now_ms(x->eng->st);
                if (rp->state == GOBLIN__REPLICA_SYNCING)
                    rp->acked = true; /* its child is not reaped yet */
                else if (rp->start_on_ack)
                    goblin__repl_start_stream(rp);
                waits_offer(x->eng);
            }
            if (j + 2 < argc)
                continue;
            return;
        } else if (goblin__arg_is(*opt, "getack")) {
            /* Only a replica answers it, to its master, through the
             * link (lib/repl/replica.c). */
            if (x->sess->flags & SESS_MASTER)
                goblin__link_getack(x->eng);
            return;
        } else if (goblin__arg_is(*opt, "rdb-only")) {
            if (!goblin__arg_int64(x, *val, &v, NULL))
                return;
        } else {
            goblin__reply_errorf(x, "ERR Unrecognized REPLCONF option: %.*s",
                                 goblin__cstr_len(*opt),
                                 (const char *)opt->ptr);
            return;
        }
    }
    goblin__reply_ok(x);
}

void goblin__cmd_psync(goblin__exec *x, int argc,
                       const struct goblin_slice *argv)
{
    int64_t off;

    (void)argc;
    if (goblin_int64_parse(argv[2].ptr, argv[2].len, &off) != 0)
        off = -1;
    goblin__repl_psync(x, argv[1], off, false);
}

void goblin__cmd_sync(goblin__exec *x, int argc,
                      const struct goblin_slice *argv)
{
    (void)argc;
    (void)argv;
    goblin__repl_psync(x, (struct goblin_slice){"?", 1}, -1, true);
}

void goblin__cmd_role(goblin__exec *x, int argc,
                      const struct goblin_slice *argv)
{
    (void)argc;
    (void)argv;
    goblin__repl_role(x);
}

/* WAIT's blocked state: answers once numreplicas (spec.count) replicas
 * acknowledged spec.woff, or at the timeout with however many did. */
static bool wait_serve(goblin__exec *x, const struct goblin__blocked *b,
                       struct goblin_slice key)
{
    size_t n = goblin__repl_acked(x->eng, b->woff);

    (void)key;
    if ((int64_t)n < b->spec.count && !b->timed_out)
        return false;
    goblin__reply_int(x, (int64_t)n);
    return true;
}

/* A replica's ACK moved: offers every WAIT to its serve function. */
static void waits_offer(goblin_engine *eng)
{
    struct goblin__blocked *b, *next;

    if (eng->blocking == NULL)
        return;
    for (b = eng->blocking->first; b != NULL; b = next) {
        next = b->next;
        if (b->spec.serve == wait_serve)
            goblin__block_offer(b->s);
    }
}

void goblin__cmd_wait(goblin__exec *x, int argc,
                      const struct goblin_slice *argv)
{
    static const struct goblin_slice getack[3] = {
        {"REPLCONF", 8}, {"GETACK", 6}, {"*", 1}};
    struct goblin__block_spec spec = {0};
    int64_t num, tmo;
    uint64_t off;
    size_t n;

    (void)argc;
    if (goblin__repl_following(x->eng)) {
        goblin__reply_error(x, "ERR WAIT cannot be used with replica "
                               "instances. Please also note that since "
                               "Redis 4.0 if a replica is configured to be "
                               "writable (which is not the default) writes "
                               "to replicas are just local and are not "
                               "propagated.");
        return;
    }
    if (!goblin__arg_int64(x, argv[2], &tmo, "ERR timeout is not an "
                           "integer or out of range"))
        return;
    if (tmo < 0) {
        goblin__reply_error(x, "ERR timeout is negative");
        return;
    }
    if (!goblin__arg_int64(x, argv[1], &num, NULL))
        return;
    off = x->sess->repl_woff;
    n = goblin__repl_acked(x->eng, off);
    if ((int64_t)n >= num || !goblin__block_allowed(x) ||
        (x->sess->flags & SESS_MULTI)) {
        goblin__reply_int(x, (int64_t)n);
        return;
    }
    spec.serve = wait_serve;
    spec.count = num;
    spec.deadline_ms = tmo == 0 ? 0 : goblin__now_ms(x->st) + tmo;
    if (goblin__block(x, NULL, 0, &spec) != 0)
        return;
    x->sess->blk->serve_on_timeout = true;
    x->sess->blk->woff = off;
    goblin_stream_emit(x->eng, GOBLIN_STREAM_REPLICATION, -1, 3, getack);
    x->sess->repl_woff = off; /* the GETACK is not this client's write */
}

/* The client for REPLICAOF's log lines, as Redis's catClientInfoString
 * (shortened to id and addr). */
static void who(const goblin__exec *x, char *buf, size_t cap)
{
    snprintf(buf, cap, "id=%llu addr=%s", (unsigned long long)x->sess->id,
             x->sess->peer != NULL ? x->sess->peer : "");
}

void goblin__cmd_replicaof(goblin__exec *x, int argc,
                           const struct goblin_slice *argv)
{
    char host[256], by[320];
    int64_t port;
    int rc;

    (void)argc;
    who(x, by, sizeof(by));
    if (goblin__arg_is(argv[1], "no") && goblin__arg_is(argv[2], "one")) {
        if (goblin__link_set(x->eng, NULL, 0, by) < 0)
            goblin__reply_code(x, GOBLIN_ENOMEM);
        else
            goblin__reply_ok(x);
        return;
    }
    if (goblin__repl_is_replica(x->sess)) {
        goblin__reply_error(x, "ERR Command is not valid when client is a "
                               "replica.");
        return;
    }
    if (!goblin__arg_int64(x, argv[2], &port, "ERR Invalid master port"))
        return;
    if (port < 0 || port > 65535) {
        goblin__reply_error(x, "ERR Invalid master port");
        return;
    }
    snprintf(host, sizeof(host), "%.*s", goblin__cstr_len(argv[1]),
             (const char *)argv[1].ptr);
    rc = goblin__link_set(x->eng, host, (int)port, by);
    if (rc < 0)
        goblin__reply_code(x, rc);
    else if (rc == 1)
        goblin__reply_status(x, "OK Already connected to specified master");
    else
        goblin__reply_ok(x);
}
