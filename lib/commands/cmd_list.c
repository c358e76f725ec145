/* cmd_list.c - list commands: LPUSH, RPUSH, LPUSHX, RPUSHX, LPOP, RPOP,
 * LLEN, LINDEX, LSET, LRANGE, LTRIM, LINSERT, LREM, LPOS, LMOVE,
 * RPOPLPUSH and LMPOP, with Redis 7.0's argument order and texts
 * (t_list.c). Where Redis looks the key up before parsing an argument
 * (LINDEX and LSET look before their index), the RESP handler does too.
 *
 * Popped elements are replied while the store visits them, before it
 * frees them; ranges are gathered as views in the session's scratch and
 * replied whole, so a protocol with typed replies gets one message.
 *
 * Each command is an execution function (exec.h), which SBE's typed
 * requests call too, and a RESP handler that parses argv and calls it.
 * The execution functions publish Redis's keyspace events (notify.h), so
 * every protocol, and a blocked client when it is served, emits them.
 */
#include "exec.h"
#include "goblin/keys.h"
#include "goblin/list.h"
#include "notify.h"
#include "respond.h"
#include "engine/session.h"
#include "stream/propagate.h"

static void int_reply(goblin__exec *x, int64_t rc)
{
    if (rc < 0)
        goblin__reply_code(x, (int)rc);
    else
        goblin__reply_int(x, rc);
}

/* LEFT or RIGHT, as Redis's getListPositionFromObjectOrReply. */
static bool arg_end(goblin__exec *x, struct goblin_slice arg,
                    enum goblin_list_end *end)
{
    if (goblin__arg_is(arg, "left"))
        *end = GOBLIN_LIST_HEAD;
    else if (goblin__arg_is(arg, "right"))
        *end = GOBLIN_LIST_TAIL;
    else {
        goblin__reply_error(x, GOBLIN__ERR_SYNTAX);
        return false;
    }
    return true;
}

/* ---- pushes ---- */

void goblin__exec_listpush(goblin__exec *x, struct goblin_slice key,
                           enum goblin_list_end end,
                           const struct goblin_slice *elems, size_t n,
                           bool exists)
{
    int64_t rc = goblin_list_push(x->st, key, end, elems, n, exists);

    int_reply(x, rc);
    if (rc > 0)
        goblin__notify(x, GOBLIN__NOTIFY_LIST,
                       end == GOBLIN_LIST_HEAD ? "lpush" : "rpush", key);
}

void goblin__cmd_lpush(goblin__exec *x, int argc,
                       const struct goblin_slice *argv)
{
    goblin__exec_listpush(x, argv[1], GOBLIN_LIST_HEAD, argv + 2,
                          (size_t)argc - 2, false);
}

void goblin__cmd_rpush(goblin__exec *x, int argc,
                       const struct goblin_slice *argv)
{
    goblin__exec_listpush(x, argv[1], GOBLIN_LIST_TAIL, argv + 2,
                          (size_t)argc - 2, false);
}

void goblin__cmd_lpushx(goblin__exec *x, int argc,
                        const struct goblin_slice *argv)
{
    goblin__exec_listpush(x, argv[1], GOBLIN_LIST_HEAD, argv + 2,
                          (size_t)argc - 2, true);
}

void goblin__cmd_rpushx(goblin__exec *x, int argc,
                        const struct goblin_slice *argv)
{
    goblin__exec_listpush(x, argv[1], GOBLIN_LIST_TAIL, argv + 2,
                          (size_t)argc - 2, true);
}

/* ---- pops ---- */

static int reply_elem(void *ctx, struct goblin_slice e)
{
    goblin__reply_slice(ctx, e);
    return 0;
}

/* After n elements left key's end: Redis's listElementsRemoved. */
static void popped(goblin__exec *x, struct goblin_slice key,
                   enum goblin_list_end end, int64_t n)
{
    if (n > 0)
        goblin__notify_removed(x, GOBLIN__NOTIFY_LIST,
                               end == GOBLIN_LIST_HEAD ? "lpop" : "rpop",
                               key);
}

void goblin__reply_list_pop(goblin__exec *x, struct goblin_slice key,
                            enum goblin_list_end end, int64_t count)
{
    int64_t len = goblin_list_len(x->st, key);

    if (len < 0) {
        goblin__reply_code(x, (int)len);
        return;
    }
    goblin__reply_array(x, (size_t)(count < len ? count : len));
    popped(x, key, end, goblin_list_pop(x->st, key, end, count, reply_elem,
                                        x));
}

void goblin__exec_listpop(goblin__exec *x, struct goblin_slice key,
                          enum goblin_list_end end, bool has_count,
                          int64_t count)
{
    int64_t len = goblin_list_len(x->st, key);

    if (len < 0) {
        goblin__reply_code(x, (int)len);
    } else if (len == 0) {
        if (has_count)
            goblin__reply_null_array(x);
        else
            goblin__reply_null(x);
    } else if (!has_count) {
        popped(x, key, end, goblin_list_pop(x->st, key, end, 1, reply_elem,
                                            x));
    } else {
        goblin__reply_list_pop(x, key, end, count);
    }
}

static void pop(goblin__exec *x, int argc, const struct goblin_slice *argv,
                enum goblin_list_end end)
{
    int64_t count = 1;

    if (argc > 3) {
        goblin__reply_errorf(x, "ERR wrong number of arguments for '%s' "
                                "command", x->cmd->fullname);
        return;
    }
    if (argc == 3 && !goblin__arg_range(x, argv[2], 0, INT64_MAX, &count,
                                        GOBLIN__ERR_POSITIVE))
        return;
    goblin__exec_listpop(x, argv[1], end, argc == 3, count);
}

void goblin__cmd_lpop(goblin__exec *x, int argc,
                      const struct goblin_slice *argv)
{
    pop(x, argc, argv, GOBLIN_LIST_HEAD);
}

void goblin__cmd_rpop(goblin__exec *x, int argc,
                      const struct goblin_slice *argv)
{
    pop(x, argc, argv, GOBLIN_LIST_TAIL);
}

/* ---- reads ---- */

void goblin__exec_llen(goblin__exec *x, struct goblin_slice key)
{
    int_reply(x, goblin_list_len(x->st, key));
}

void goblin__cmd_llen(goblin__exec *x, int argc,
                      const struct goblin_slice *argv)
{
    (void)argc;
    goblin__exec_llen(x, argv[1]);
}

void goblin__exec_lindex(goblin__exec *x, struct goblin_slice key,
                         int64_t index)
{
    struct goblin_slice e;
    int rc = goblin_list_index(x->st, key, index, &e);

    if (rc < 0)
        goblin__reply_code(x, rc);
    else if (rc == 0)
        goblin__reply_null(x);
    else
        goblin__reply_slice(x, e);
}

/* Redis looks the key up before it parses LINDEX's and LSET's index: a
 * missing key or another type answers first. Returns true when the key
 * holds a list; otherwise has replied (a missing key with missing_code,
 * or a null when it is 0). */
static bool list_first(goblin__exec *x, struct goblin_slice key,
                       int missing_code)
{
    enum goblin_type t = goblin_key_type(x->st, key);

    if (t == GOBLIN_TYPE_LIST)
        return true;
    if (t != GOBLIN_TYPE_NONE)
        goblin__reply_code(x, GOBLIN_EWRONGTYPE);
    else if (missing_code != 0)
        goblin__reply_code(x, missing_code);
    else
        goblin__reply_null(x);
    return false;
}

void goblin__cmd_lindex(goblin__exec *x, int argc,
                        const struct goblin_slice *argv)
{
    int64_t index;

    (void)argc;
    if (list_first(x, argv[1], 0) &&
        goblin__arg_int64(x, argv[2], &index, NULL))
        goblin__exec_lindex(x, argv[1], index);
}

void goblin__exec_lset(goblin__exec *x, struct goblin_slice key,
                       int64_t index, struct goblin_slice elem)
{
    int rc = goblin_list_set(x->st, key, index, elem);

    if (rc < 0) {
        goblin__reply_code(x, rc);
    } else {
        goblin__reply_ok(x);
        goblin__notify(x, GOBLIN__NOTIFY_LIST, "lset", key);
    }
}

void goblin__cmd_lset(goblin__exec *x, int argc,
                      const struct goblin_slice *argv)
{
    int64_t index;

    (void)argc;
    if (list_first(x, argv[1], GOBLIN_ENOKEY) &&
        goblin__arg_int64(x, argv[2], &index, NULL))
        goblin__exec_lset(x, argv[1], index, argv[3]);
}

/* Gathers views in the session's scratch. */
struct gather {
    goblin_session *s;
    size_t n;
};

static int gather_elem(void *ctx, struct goblin_slice e)
{
    struct gather *g = ctx;

    if (goblin__scratch_reserve(g->s, g->n + 1) != 0)
        return GOBLIN_ENOMEM;
    g->s->scratch[g->n++] = e;
    return 0;
}

void goblin__exec_lrange(goblin__exec *x, struct goblin_slice key,
                         int64_t start, int64_t stop)
{
    struct gather g = {x->sess, 0};
    int64_t rc = goblin_list_range(x->st, key, start, stop, gather_elem, &g);

    if (rc < 0)
        goblin__reply_code(x, (int)rc);
    else
        goblin__reply_strings(x, x->sess->scratch, g.n, false);
}

void goblin__cmd_lrange(goblin__exec *x, int argc,
                        const struct goblin_slice *argv)
{
    int64_t start, stop;

    (void)argc;
    if (goblin__arg_int64(x, argv[2], &start, NULL) &&
        goblin__arg_int64(x, argv[3], &stop, NULL))
        goblin__exec_lrange(x, argv[1], start, stop);
}

/* ---- writes in the middle ---- */

void goblin__exec_ltrim(goblin__exec *x, struct goblin_slice key,
                        int64_t start, int64_t stop)
{
    /* Redis reports "ltrim" for any list, even when nothing went. */
    bool existed = goblin__notify_on(x, GOBLIN__NOTIFY_LIST |
                                            GOBLIN__NOTIFY_GENERIC) &&
                   goblin_key_type(x->st, key) == GOBLIN_TYPE_LIST;
    int rc = goblin_list_trim(x->st, key, start, stop);

    if (rc < 0) {
        goblin__reply_code(x, rc);
        return;
    }
    goblin__reply_ok(x);
    if (existed)
        goblin__notify_removed(x, GOBLIN__NOTIFY_LIST, "ltrim", key);
}

void goblin__cmd_ltrim(goblin__exec *x, int argc,
                       const struct goblin_slice *argv)
{
    int64_t start, stop;

    (void)argc;
    if (goblin__arg_int64(x, argv[2], &start, NULL) &&
        goblin__arg_int64(x, argv[3], &stop, NULL))
        goblin__exec_ltrim(x, argv[1], start, stop);
}

void goblin__exec_linsert(goblin__exec *x, struct goblin_slice key,
                          bool after, struct goblin_slice pivot,
                          struct goblin_slice elem)
{
    int64_t len;
    int rc = goblin_list_insert(x->st, key, after, pivot, elem, &len);

    if (rc < 0)
        goblin__reply_code(x, rc);
    else
        goblin__reply_int(x, len);
    if (rc == 1)
        goblin__notify(x, GOBLIN__NOTIFY_LIST, "linsert", key);
}

void goblin__cmd_linsert(goblin__exec *x, int argc,
                         const struct goblin_slice *argv)
{
    (void)argc;
    if (goblin__arg_is(argv[2], "after"))
        goblin__exec_linsert(x, argv[1], true, argv[3], argv[4]);
    else if (goblin__arg_is(argv[2], "before"))
        goblin__exec_linsert(x, argv[1], false, argv[3], argv[4]);
    else
        goblin__reply_error(x, GOBLIN__ERR_SYNTAX);
}

void goblin__exec_lrem(goblin__exec *x, struct goblin_slice key,
                       int64_t count, struct goblin_slice elem)
{
    int64_t rc = goblin_list_rem(x->st, key, count, elem);

    int_reply(x, rc);
    if (rc > 0)
        goblin__notify_removed(x, GOBLIN__NOTIFY_LIST, "lrem", key);
}

void goblin__cmd_lrem(goblin__exec *x, int argc,
                      const struct goblin_slice *argv)
{
    int64_t count;

    (void)argc;
    if (goblin__arg_int64(x, argv[2], &count, NULL))
        goblin__exec_lrem(x, argv[1], count, argv[3]);
}

/* ---- LPOS ---- */

struct pos_emit {
    goblin__exec *x;
    int64_t first; /* without COUNT: the first match, or -1 */
    bool list;
    int64_t *v;
    size_t n;
};

static int emit_pos(void *ctx, int64_t index)
{
    struct pos_emit *e = ctx;

    if (!e->list) {
        if (e->first < 0)
            e->first = index;
        return 0;
    }
    e->v = goblin__scratch_bytes(e->x->sess, (e->n + 1) * sizeof(int64_t));
    if (e->v == NULL)
        return GOBLIN_ENOMEM;
    e->v[e->n++] = index;
    return 0;
}

void goblin__exec_lpos(goblin__exec *x, struct goblin_slice key,
                       struct goblin_slice elem,
                       const struct goblin_lpos_options *o, bool has_count)
{
    struct pos_emit e = {x, -1, has_count, NULL, 0};
    struct goblin_lpos_options d = *o;
    int64_t rc;

    if (!has_count)
        d.count = 1;
    rc = goblin_list_pos(x->st, key, elem, &d, emit_pos, &e);
    if (rc < 0) {
        goblin__reply_code(x, (int)rc);
    } else if (!has_count) {
        if (e.first < 0)
            goblin__reply_null(x);
        else
            goblin__reply_int(x, e.first);
    } else {
        e.v = goblin__scratch_bytes(x->sess, (e.n + 1) * sizeof(int64_t));
        goblin__reply_array(x, e.n);
        for (size_t i = 0; i < e.n; i++)
            goblin__reply_int(x, e.v[i]);
    }
}

void goblin__cmd_lpos(goblin__exec *x, int argc,
                      const struct goblin_slice *argv)
{
    struct goblin_lpos_options o = {1, 0, 0};
    bool has_count = false;

    for (int i = 3; i < argc; i++) {
        bool more = i + 1 < argc;

        if (goblin__arg_is(argv[i], "rank") && more) {
            if (!goblin__arg_int64(x, argv[++i], &o.rank, NULL))
                return;
            if (o.rank == 0) {
                goblin__reply_error(x, "ERR RANK can't be zero: use 1 to "
                                       "start from the first match, 2 from "
                                       "the second ... or use negative to "
                                       "start from the end of the list");
                return;
            }
        } else if (goblin__arg_is(argv[i], "count") && more) {
            if (!goblin__arg_range(x, argv[++i], 0, INT64_MAX, &o.count,
                                   "ERR COUNT can't be negative"))
                return;
            has_count = true;
        } else if (goblin__arg_is(argv[i], "maxlen") && more) {
            if (!goblin__arg_range(x, argv[++i], 0, INT64_MAX, &o.maxlen,
                                   "ERR MAXLEN can't be negative"))
                return;
        } else {
            goblin__reply_error(x, GOBLIN__ERR_SYNTAX);
            return;
        }
    }
    goblin__exec_lpos(x, argv[1], argv[2], &o, has_count);
}

/* ---- moves ---- */

void goblin__exec_lmove(goblin__exec *x, struct goblin_slice src,
                        struct goblin_slice dst, enum goblin_list_end from,
                        enum goblin_list_end to)
{
    int rc = goblin_list_move(x->st, src, dst, from, to, reply_elem, x);

    if (rc < 0)
        goblin__reply_code(x, rc);
    else if (rc == 0)
        goblin__reply_null(x);
    if (rc == 1) {
        /* Redis's order: the push to dst, then the pop from src. */
        goblin__notify(x, GOBLIN__NOTIFY_LIST,
                       to == GOBLIN_LIST_HEAD ? "lpush" : "rpush", dst);
        popped(x, src, from, 1);
    }
}

void goblin__cmd_lmove(goblin__exec *x, int argc,
                       const struct goblin_slice *argv)
{
    enum goblin_list_end from, to;

    (void)argc;
    if (arg_end(x, argv[3], &from) && arg_end(x, argv[4], &to))
        goblin__exec_lmove(x, argv[1], argv[2], from, to);
}

void goblin__cmd_rpoplpush(goblin__exec *x, int argc,
                           const struct goblin_slice *argv)
{
    (void)argc;
    goblin__exec_lmove(x, argv[1], argv[2], GOBLIN_LIST_TAIL,
                       GOBLIN_LIST_HEAD);
}

/* The first key of keys holding a non-empty list: its index, -1 when
 * none does, or GOBLIN_EWRONGTYPE when a key of another type comes
 * first (Redis's mpopGenericCommand order). */
int64_t goblin__list_first_nonempty(goblin_store *st,
                                    const struct goblin_slice *keys,
                                    size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int64_t len = goblin_list_len(st, keys[i]);

        if (len < 0)
            return len;
        if (len > 0)
            return (int64_t)i;
    }
    return -1;
}

void goblin__exec_lmpop(goblin__exec *x, const struct goblin_slice *keys,
                        size_t n, enum goblin_list_end end, int64_t count)
{
    int64_t i = goblin__list_first_nonempty(x->st, keys, n);

    if (i < -1) {
        goblin__reply_code(x, (int)i);
        return;
    }
    if (i == -1) {
        goblin__reply_null_array(x);
        return;
    }
    goblin__propagate_pop(x, end == GOBLIN_LIST_HEAD ? "LPOP" : "RPOP",
                          keys[i], count);
    goblin__reply_array(x, 2);
    goblin__reply_slice(x, keys[i]);
    goblin__reply_list_pop(x, keys[i], end, count);
}

/* LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count], and BLMPOP's
 * arguments from numkeys on (argv[first] is numkeys): parses them as
 * Redis's lmpopGenericCommand. Returns false after replying an error. */
bool goblin__lmpop_args(goblin__exec *x, int argc,
                        const struct goblin_slice *argv, int first,
                        struct goblin__lmpop *a)
{
    int64_t numkeys;
    int where;

    if (!goblin__arg_range(x, argv[first], 1, INT64_MAX, &numkeys,
                           "ERR numkeys should be greater than 0"))
        return false;
    if (numkeys >= argc - first - 1) {
        goblin__reply_error(x, GOBLIN__ERR_SYNTAX);
        return false;
    }
    where = first + 1 + (int)numkeys;
    if (!arg_end(x, argv[where], &a->end))
        return false;
    a->keys = argv + first + 1;
    a->nkeys = (size_t)numkeys;
    a->count = -1;
    for (int i = where + 1; i < argc; i++) {
        if (a->count == -1 && goblin__arg_is(argv[i], "count") &&
            i + 1 < argc) {
            if (!goblin__arg_range(x, argv[++i], 1, INT64_MAX, &a->count,
                                   "ERR count should be greater than 0"))
                return false;
        } else {
            goblin__reply_error(x, GOBLIN__ERR_SYNTAX);
            return false;
        }
    }
    if (a->count == -1)
        a->count = 1;
    return true;
}

void goblin__cmd_lmpop(goblin__exec *x, int argc,
                       const struct goblin_slice *argv)
{
    struct goblin__lmpop a;

    if (goblin__lmpop_args(x, argc, argv, 1, &a))
        goblin__exec_lmpop(x, a.keys, a.nkeys, a.end, a.count);
}
