/* cmd_migrate.c - MIGRATE host port key|"" destination-db timeout [COPY]
 * [REPLACE] [AUTH password] [AUTH2 username password] [KEYS key ...],
 * as Redis 7.0's migrateCommand (cluster.c): the keys go to the target
 * as RESTORE commands carrying DUMP payloads and their remaining TTL,
 * after AUTH and SELECT, in one write; each key the target accepted is
 * deleted here unless COPY, and the command goes to the write stream as
 * DEL of those keys. The replies and texts are Redis's: NOKEY when no key
 * exists, "Target instance replied with error: ..." with the target's
 * first error (BUSYKEY, WRONGPASS ...), IOERR on a connection that fails
 * or times out, after one retry when nothing was read and the time did
 * not run out.
 *
 * The server waits for the target, up to the timeout per step, as Redis
 * does. Unlike Redis, no connection is kept for the next MIGRATE: each
 * connects and sends SELECT (Redis keeps one per target for 10 seconds).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/session.h"
#include "exec.h"
#include "goblin/buf.h"
#include "goblin/keys.h"
#include "handlers.h"
#include "migrate_io.h"
#include "notify.h"
#include "respond.h"
#include "snapshot/snapshot_int.h"
#include "store/keyspace.h"
#include "stream/propagate.h"

#define LINE_MAX_ 1024 /* Redis's reply buffers */
#define CHUNK (64 * 1024)

struct migrate_args {
    bool copy, replace;
    const struct goblin_slice *user, *pass;
    int first_key, nkeys;
    int64_t db, timeout;
};

/* The options after the timeout, then the numbers, with Redis's texts
 * in its order. */
static bool parse(goblin__exec *x, int argc, const struct goblin_slice *argv,
                  struct migrate_args *a)
{
    memset(a, 0, sizeof(*a));
    a->first_key = 3;
    a->nkeys = 1;
    for (int j = 6; j < argc; j++) {
        int more = argc - 1 - j;

        if (goblin__arg_is(argv[j], "copy")) {
            a->copy = true;
        } else if (goblin__arg_is(argv[j], "replace")) {
            a->replace = true;
        } else if (goblin__arg_is(argv[j], "auth") && more >= 1) {
            a->pass = &argv[++j];
        } else if (goblin__arg_is(argv[j], "auth2") && more >= 2) {
            a->user = &argv[++j];
            a->pass = &argv[++j];
        } else if (goblin__arg_is(argv[j], "keys")) {
            if (argv[3].len != 0) {
                goblin__reply_error(x, "ERR When using MIGRATE KEYS option, "
                                       "the key argument must be set to "
                                       "the empty string");
                return false;
            }
            a->first_key = j + 1;
            a->nkeys = argc - j - 1;
            break;
        } else {
            goblin__reply_error(x, GOBLIN__ERR_SYNTAX);
            return false;
        }
    }
    if (!goblin__arg_int64(x, argv[5], &a->timeout, NULL) ||
        !goblin__arg_int64(x, argv[4], &a->db, NULL))
        return false;
    if (a->timeout <= 0)
        a->timeout = 1000;
    return true;
}

static int bulk(struct goblin_buf *b, const void *p, size_t n)
{
    char head[32];
    int len = snprintf(head, sizeof(head), "$%zu\r\n", n);
    int rc = goblin_buf_append(b, head, (size_t)len);

    if (rc == 0 && n > 0)
        rc = goblin_buf_append(b, p, n);
    return rc != 0 ? rc : goblin_buf_append(b, "\r\n", 2);
}

static int bulk_int(struct goblin_buf *b, int64_t v)
{
    char t[24];

    return bulk(b, t, (size_t)snprintf(t, sizeof(t), "%lld", (long long)v));
}

static int count(struct goblin_buf *b, int n)
{
    char t[24];

    return goblin_buf_append(b, t, (size_t)snprintf(t, sizeof(t), "*%d\r\n",
                                                    n));
}

/* The keys that exist, in order (Redis's first lookup). */
static int present_keys(goblin__exec *x, const struct goblin_slice *argv,
                        const struct migrate_args *a, int *idx)
{
    int n = 0;

    for (int j = 0; j < a->nkeys; j++) {
        uint32_t id;

        if (goblin__key_find(x->st, argv[a->first_key + j], &id) == 1)
            idx[n++] = a->first_key + j;
    }
    return n;
}

/* AUTH, SELECT and a RESTORE per key still alive, into b; the keys sent
 * stay in idx[0..*n). 0 or GOBLIN_ENOMEM. */
static int build(goblin__exec *x, const struct goblin_slice *argv,
                 const struct migrate_args *a, int *idx, int *n,
                 struct goblin_buf *b)
{
    struct goblin_buf payload = {NULL, 0, 0, &x->eng->acct, false};
    int64_t now = goblin__now_ms(x->st);
    int rc = 0, kept = 0;

    if (a->pass != NULL) {
        rc = count(b, a->user != NULL ? 3 : 2) || bulk(b, "AUTH", 4);
        if (rc == 0 && a->user != NULL)
            rc = bulk(b, a->user->ptr, a->user->len);
        if (rc == 0)
            rc = bulk(b, a->pass->ptr, a->pass->len);
    }
    if (rc == 0)
        rc = count(b, 2) || bulk(b, "SELECT", 6) || bulk_int(b, a->db);
    for (int j = 0; rc == 0 && j < *n; j++) {
        struct goblin_slice key = argv[idx[j]];
        int64_t ttl = 0, when;
        uint32_t id;

        if (goblin__key_find(x->st, key, &id) != 1)
            continue; /* gone since the first lookup */
        when = goblin__key_deadline(x->st, id);
        if (when >= 0) {
            ttl = when - now;
            if (ttl < 0)
                continue;
            if (ttl < 1)
                ttl = 1;
        }
        idx[kept++] = idx[j];
        payload.len = 0;
        rc = goblin__dump_payload(x->st, goblin__key_rec(x->st, id),
                                  &payload);
        if (rc == 0)
            rc = count(b, a->replace ? 5 : 4) || bulk(b, "RESTORE", 7) ||
                 bulk(b, key.ptr, key.len) || bulk_int(b, ttl) ||
                 bulk(b, payload.data, payload.len);
        if (rc == 0 && a->replace)
            rc = bulk(b, "REPLACE", 7);
    }
    goblin_buf_free(&payload);
    *n = kept;
    return rc != 0 ? GOBLIN_ENOMEM : 0;
}

/* What one attempt came to: the reply sent (OK, or the target's error),
 * or the connection failed, connecting or in a write or a read. */
enum outcome { REPLIED, NO_CONNECT, WRITE_FAILED, READ_FAILED };

/* The target's replies: deletes each key it took (unless COPY) into
 * moved, replies the first error. *final: a read failed after replies
 * were taken, so no retry. */
static enum outcome read_replies(goblin__exec *x,
                                 struct goblin__migrate_conn *c,
                                 const struct goblin_slice *argv,
                                 const struct migrate_args *a,
                                 const int *idx, int n,
                                 struct goblin_slice *moved, int *nmoved,
                                 bool *final)
{
    char auth[LINE_MAX_] = "", sel[LINE_MAX_] = "", line[LINE_MAX_];
    bool target_error = false;
    int j;

    if (a->pass != NULL &&
        goblin__migrate_read_line(c, auth, sizeof(auth), a->timeout) <= 0)
        return READ_FAILED;
    if (goblin__migrate_read_line(c, sel, sizeof(sel), a->timeout) <= 0)
        return READ_FAILED;
    for (j = 0; j < n; j++) {
        struct goblin_slice key = argv[idx[j]];

        if (goblin__migrate_read_line(c, line, sizeof(line),
                                      a->timeout) <= 0)
            break;
        if (auth[0] == '-' || sel[0] == '-' || line[0] == '-') {
            if (!target_error)
                goblin__reply_errorf(
                    x, "ERR Target instance replied with error: %s",
                    (auth[0] == '-' ? auth : sel[0] == '-' ? sel : line) + 1);
            target_error = true;
        } else if (!a->copy && goblin_key_delete(x->st, key) > 0) {
            goblin__notify(x, GOBLIN__NOTIFY_GENERIC, "del", key);
            moved[1 + (*nmoved)++] = key;
        }
    }
    if (target_error)
        return REPLIED;
    if (j < n) {
        *final = j > 0;
        return READ_FAILED;
    }
    goblin__reply_ok(x);
    return REPLIED;
}

/* One attempt: connect, send b in 64 KB writes, read the replies. */
static enum outcome attempt(goblin__exec *x, const struct goblin_slice *argv,
                            const struct migrate_args *a, const int *idx,
                            int n, const struct goblin_buf *b,
                            struct goblin_slice *moved, int *nmoved,
                            bool *final)
{
    struct goblin__migrate_conn *c;
    char host[256], port[32];
    enum outcome o = REPLIED;
    int saved;

    /* Redis's atoi() of the port: its leading digits, else 0. */
    snprintf(port, sizeof(port), "%.*s",
             (int)(argv[2].len < 31 ? argv[2].len : 31),
             (const char *)argv[2].ptr);
    snprintf(port, sizeof(port), "%d", atoi(port));
    snprintf(host, sizeof(host), "%.*s",
             (int)(argv[1].len < 255 ? argv[1].len : 255),
             (const char *)argv[1].ptr);
    if (memchr(argv[1].ptr, '\0', argv[1].len) != NULL ||
        (c = goblin__alloc(x->st, sizeof(*c))) == NULL)
        return NO_CONNECT;
    if (goblin__migrate_connect(c, host, port, a->timeout) != 0) {
        goblin__free(x->st, c, sizeof(*c));
        return NO_CONNECT;
    }
    for (size_t pos = 0; pos < b->len && o == REPLIED; pos += CHUNK) {
        size_t len = b->len - pos < CHUNK ? b->len - pos : CHUNK;

        if (goblin__migrate_write(c, b->data + pos, len, a->timeout) != 0)
            o = WRITE_FAILED;
    }
    if (o == REPLIED)
        o = read_replies(x, c, argv, a, idx, n, moved, nmoved, final);
    saved = errno;
    goblin__migrate_close(c);
    goblin__free(x->st, c, sizeof(*c));
    errno = saved;
    return o;
}

void goblin__cmd_migrate(goblin__exec *x, int argc,
                         const struct goblin_slice *argv)
{
    struct goblin_buf b = {NULL, 0, 0, &x->eng->acct, false};
    struct migrate_args a;
    struct goblin_slice *moved;
    int *idx, n, nmoved = 0;
    bool may_retry = true, final = false;
    enum outcome o;
    size_t isz, msz;

    if (!parse(x, argc, argv, &a))
        return;
    isz = (size_t)a.nkeys * sizeof(*idx) + 1;
    msz = ((size_t)a.nkeys + 1) * sizeof(*moved);
    idx = goblin__alloc(x->st, isz);
    moved = goblin__alloc(x->st, msz);
    if (idx == NULL || moved == NULL) {
        goblin__reply_code(x, GOBLIN_ENOMEM);
        goto out;
    }
    if ((n = present_keys(x, argv, &a, idx)) == 0) {
        goblin__reply_status(x, "NOKEY");
        goto out;
    }
    if (build(x, argv, &a, idx, &n, &b) != 0) {
        goblin__reply_code(x, GOBLIN_ENOMEM);
        goto out;
    }
    for (;;) {
        o = attempt(x, argv, &a, idx, n, &b, moved, &nmoved, &final);
        /* A failed connection is retried once, when the time did not run
         * out and no reply was taken: a target that closed at once. */
        if ((o == WRITE_FAILED || o == READ_FAILED) && may_retry &&
            !final && errno != ETIMEDOUT) {
            may_retry = false;
            continue;
        }
        break;
    }
    if (o == NO_CONNECT)
        goblin__reply_error(x, "IOERR error or timeout connecting to the "
                               "client");
    else if (o != REPLIED)
        goblin__reply_errorf(x, "IOERR error or timeout %s to target "
                                "instance",
                             o == WRITE_FAILED ? "writing" : "reading");
out:
    if (nmoved > 0) {
        moved[0] = (struct goblin_slice){"DEL", 3};
        goblin__propagate_as(x, nmoved + 1, moved);
    } else {
        goblin__propagate_none(x);
    }
    goblin_buf_free(&b);
    if (idx != NULL)
        goblin__free(x->st, idx, isz);
    if (moved != NULL)
        goblin__free(x->st, moved, msz);
}
