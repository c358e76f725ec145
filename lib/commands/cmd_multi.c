/* cmd_multi.c - transactions: MULTI, EXEC, DISCARD, WATCH and UNWATCH,
 * with Redis 7's semantics (multi.c).
 *
 * Queued commands keep copies of their arguments in one growing area
 * (qarea): per command, argc slices whose ptr holds the offset of the
 * bytes that follow them. Offsets survive the area moving when it grows;
 * EXEC turns them into pointers once queueing is over.
 *
 * EXEC fails (a null reply) when a watched key changed since WATCH: the
 * store's key_changed hook marks the session (watch.c). A watched key
 * that expired counts as changed, as in Redis 7: EXEC first looks each
 * watched key up, which deletes an expired one and so reports it.
 */
#include <string.h>

#include "engine/acl_log.h"
#include "engine/acl.h"
#include "goblin/keys.h"
#include "respond.h"
#include "engine/session.h"

void goblin__multi_discard(goblin_session *s)
{
    s->nqueue = 0;
    s->qarea_len = 0;
    s->flags &= ~(uint32_t)(SESS_MULTI | SESS_DIRTY_EXEC);
}

static int qarea_reserve(goblin_session *s, size_t extra)
{
    size_t cap = s->qarea_cap == 0 ? 256 : s->qarea_cap;
    unsigned char *p;

    if (s->qarea_cap - s->qarea_len >= extra)
        return 0;
    while (cap - s->qarea_len < extra)
        cap *= 2;
    p = goblin__realloc(s->eng->st, s->qarea, s->qarea_cap, cap);
    if (p == NULL)
        return GOBLIN_ENOMEM;
    s->qarea = p;
    s->qarea_cap = cap;
    return 0;
}

static int queue_reserve(goblin_session *s)
{
    size_t cap = s->capqueue == 0 ? 8 : s->capqueue * 2;
    struct goblin__queued *q;

    if (s->nqueue < s->capqueue)
        return 0;
    q = goblin__realloc(s->eng->st, s->queue, s->capqueue * sizeof(*q),
                        cap * sizeof(*q));
    if (q == NULL)
        return GOBLIN_ENOMEM;
    s->queue = q;
    s->capqueue = cap;
    return 0;
}

/* Copies argv into the queue. */
static int enqueue(goblin_session *s, const struct goblin__command *cmd,
                   int argc, const struct goblin_slice *argv)
{
    size_t need = (size_t)argc * sizeof(struct goblin_slice), off, at;
    struct goblin_slice *v;
    int i;

    for (i = 0; i < argc; i++)
        need += argv[i].len;
    need += sizeof(struct goblin_slice); /* alignment slack */
    if (queue_reserve(s) != 0 || qarea_reserve(s, need) != 0)
        return GOBLIN_ENOMEM;
    off = (s->qarea_len + _Alignof(struct goblin_slice) - 1) &
          ~(size_t)(_Alignof(struct goblin_slice) - 1);
    v = (struct goblin_slice *)(s->qarea + off);
    at = off + (size_t)argc * sizeof(*v);
    for (i = 0; i < argc; i++) {
        if (argv[i].len > 0)
            memcpy(s->qarea + at, argv[i].ptr, argv[i].len);
        v[i].ptr = (const void *)(uintptr_t)at;
        v[i].len = argv[i].len;
        at += argv[i].len;
    }
    s->qarea_len = at;
    s->queue[s->nqueue++] = (struct goblin__queued){cmd, off, argc};
    return 0;
}

void goblin__multi_queue(goblin__exec *x, int argc,
                         const struct goblin_slice *argv)
{
    if (enqueue(x->sess, x->cmd, argc, argv) != 0) {
        x->sess->flags |= SESS_DIRTY_EXEC;
        goblin__reply_code(x, GOBLIN_ENOMEM);
        return;
    }
    goblin__reply_status(x, "QUEUED");
}

void goblin__cmd_multi(goblin__exec *x, int argc,
                       const struct goblin_slice *argv)
{
    (void)argc;
    (void)argv;
    if (x->sess->flags & SESS_MULTI) {
        goblin__reply_error(x, "ERR MULTI calls can not be nested");
        return;
    }
    x->sess->flags |= SESS_MULTI;
    goblin__reply_ok(x);
}

void goblin__cmd_discard(goblin__exec *x, int argc,
                         const struct goblin_slice *argv)
{
    (void)argc;
    (void)argv;
    if (!(x->sess->flags & SESS_MULTI)) {
        goblin__reply_error(x, "ERR DISCARD without MULTI");
        return;
    }
    goblin__multi_discard(x->sess);
    goblin__unwatch_all(x->sess);
    goblin__reply_ok(x);
}

/* Looks every watched key up, so one that expired is deleted now and
 * reported through the hook (marking the session dirty). */
static void expire_watched(goblin_session *s)
{
    uint32_t i;

    for (i = 0; i < s->nwatched && !(s->flags & SESS_DIRTY_CAS); i++) {
        goblin_store *st = goblin__db_peek(s->eng, s->watched[i]->db);

        if (st != NULL)
            goblin_key_exists(st, (struct goblin_slice){
                                      s->watched[i]->key,
                                      s->watched[i]->keylen});
    }
}

/* ACL rules may have changed since a command was queued: Redis checks
 * again at EXEC and answers the command with an error instead. */
static bool still_allowed(goblin__exec *x, int argc,
                          const struct goblin_slice *argv)
{
    int pos = 0;
    enum goblin__acl_denied d = x->sess->acl == NULL
        ? ACL_DENIED_CMD
        : goblin__acl_check(x->sess, x->sess->acl, x->cmd, argc, argv, &pos);

    if (d == ACL_OK)
        return true;
    if (x->sess->acl != NULL)
        goblin__acl_log_denied(x->sess, x->cmd, d, GOBLIN__ACLLOG_MULTI, argv,
                               pos);
    goblin__reply_errorf(x, "NOPERM ACLs rules changed between the moment "
                            "the transaction was accumulated and the EXEC "
                            "call. This command is no longer allowed for "
                            "the following reason: %s",
                         d == ACL_DENIED_CMD
                             ? "no permission to execute the command or "
                               "subcommand"
                             : "no permission to touch the specified keys");
    return false;
}

static void exec_queued(goblin__exec *x)
{
    goblin_session *s = x->sess;
    const struct goblin__command *exec_cmd = x->cmd;
    size_t i;
    int j;

    goblin__reply_array(x, s->nqueue);
    x->eng->in_exec = true;
    /* Keys expire by the time EXEC began, as Redis's keyIsExpired while
     * one call runs the queue. */
    x->eng->frozen_ms = goblin__now_ms(x->eng->st);
    for (i = 0; i < s->nqueue; i++) {
        struct goblin__queued *q = &s->queue[i];
        struct goblin_slice *v = (struct goblin_slice *)(s->qarea +
                                                         q->argv_off);

        for (j = 0; j < q->argc; j++)
            v[j].ptr = s->qarea + (uintptr_t)v[j].ptr;
        x->cmd = q->cmd;
        if (still_allowed(x, q->argc, v))
            goblin__run(x, q->argc, v);
    }
    x->eng->in_exec = false;
    x->eng->frozen_ms = 0;
    x->cmd = exec_cmd;
    x->failed = false;
    s->lastcmd = exec_cmd;
}

void goblin__cmd_exec(goblin__exec *x, int argc,
                      const struct goblin_slice *argv)
{
    goblin_session *s = x->sess;

    (void)argc;
    (void)argv;
    if (!(s->flags & SESS_MULTI)) {
        goblin__reply_error(x, "ERR EXEC without MULTI");
        return;
    }
    if (s->flags & SESS_DIRTY_EXEC) {
        goblin__multi_discard(s);
        goblin__unwatch_all(s);
        goblin__reply_error(x, "EXECABORT Transaction discarded because of "
                               "previous errors.");
        return;
    }
    expire_watched(s);
    if (s->flags & SESS_DIRTY_CAS) {
        goblin__multi_discard(s);
        goblin__unwatch_all(s);
        goblin__reply_null_array(x);
        return;
    }
    goblin__unwatch_all(s);
    s->flags &= ~(uint32_t)SESS_MULTI;
    exec_queued(x);
    goblin__multi_discard(s);
}

void goblin__cmd_watch(goblin__exec *x, int argc,
                       const struct goblin_slice *argv)
{
    goblin_session *s = x->sess;
    int j;

    if (s->flags & SESS_MULTI) {
        goblin__reply_error(x, "ERR WATCH inside MULTI is not allowed");
        return;
    }
    if (s->flags & SESS_DIRTY_CAS) {
        goblin__reply_ok(x);
        return;
    }
    for (j = 1; j < argc; j++) {
        /* An expired key is deleted (and reported) before it is watched:
         * its expiry happened before the WATCH. */
        goblin_key_exists(x->st, argv[j]);
        if (goblin__watch_key(s, argv[j]) != 0) {
            goblin__reply_code(x, GOBLIN_ENOMEM);
            return;
        }
    }
    goblin__reply_ok(x);
}

void goblin__cmd_unwatch(goblin__exec *x, int argc,
                         const struct goblin_slice *argv)
{
    (void)argc;
    (void)argv;
    goblin__unwatch_all(x->sess);
    goblin__reply_ok(x);
}
