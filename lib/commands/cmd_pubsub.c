/* cmd_pubsub.c - Pub/Sub: SUBSCRIBE, UNSUBSCRIBE, PSUBSCRIBE, PUNSUBSCRIBE,
 * SSUBSCRIBE, SUNSUBSCRIBE, PUBLISH, SPUBLISH and PUBSUB's subcommands,
 * with Redis 7.0's replies (pubsub.c there), and the delivery of a
 * message into each subscriber's output.
 *
 * A subscribed session (any subscription of any kind) is in Pub/Sub mode:
 * in RESP2 dispatch.c then refuses every command but the (un)subscribe
 * family, PING, QUIT and RESET; in RESP3 replies to the family are push
 * messages and every command runs.
 *
 * Delivery. A message to the session that is running (it published to
 * itself) goes straight into its output, before the PUBLISH reply, as in
 * Redis. A message to any other session goes into its push buffer, which
 * goblin_session_output() moves into the output under the same lock the
 * server already holds for that call: the bytes a server is writing out
 * without the lock never change under it. The session's transport is
 * then woken (goblin__session_wake). Past the pubsub class of
 * client-output-buffer-limit the subscriber is marked to close and its
 * pending messages are dropped: a slow subscriber never blocks the
 * publisher and never grows without bound.
 */
#include <string.h>

#include "exec.h"
#include "handlers.h"
#include "pubsub/pubsub.h"
#include "respond.h"
#include "engine/session.h"

/* Redis's three subscription types, by what their replies say. */
static const char *const sub_word[GOBLIN__PS_KINDS] = {
    "subscribe", "psubscribe", "ssubscribe"};
static const char *const unsub_word[GOBLIN__PS_KINDS] = {
    "unsubscribe", "punsubscribe", "sunsubscribe"};

/* The count a (un)subscribe reply shows: channels and patterns together,
 * shard channels on their own (Redis's subscriptionCount of each type). */
static uint32_t reply_count(const goblin_session *s, enum goblin__ps_kind k)
{
    if (k == GOBLIN__PS_SHARD)
        return goblin__ps_count(&s->ps, GOBLIN__PS_SHARD);
    return goblin__ps_count(&s->ps, GOBLIN__PS_CHANNEL) +
           goblin__ps_count(&s->ps, GOBLIN__PS_PATTERN);
}

static void reply_header(goblin__exec *x, size_t n)
{
    if (x->resp == 3)
        x->sink->ops->push(x->sink, n);
    else
        goblin__reply_array(x, n);
}

static void reply_change(goblin__exec *x, const char *word,
                         const struct goblin_slice *name,
                         enum goblin__ps_kind k)
{
    reply_header(x, 3);
    goblin__reply_cstr(x, word);
    if (name != NULL)
        goblin__reply_slice(x, *name);
    else
        goblin__reply_null(x);
    goblin__reply_int(x, reply_count(x->sess, k));
}

void goblin__exec_subscribe(goblin__exec *x, enum goblin__ps_kind k,
                            const struct goblin_slice *names, size_t n)
{
    goblin_session *s = x->sess;

    for (size_t i = 0; i < n; i++) {
        if (goblin__ps_subscribe(&x->eng->pubsub, &s->ps, s, k, names[i]) <
            0) {
            goblin__reply_code(x, GOBLIN_ENOMEM);
            return;
        }
        reply_change(x, sub_word[k], &names[i], k);
    }
}

/* Every subscription of kind k, one reply each (one with a null name
 * when there were none), as pubsubUnsubscribeAll*. */
static void unsubscribe_all(goblin__exec *x, enum goblin__ps_kind k)
{
    goblin_session *s = x->sess;
    struct goblin__ps_client *c = &s->ps;
    bool any = c->n[k] > 0;

    while (c->n[k] > 0) {
        struct goblin__ps_chan *ch = c->v[k][c->n[k] - 1]->chan;
        struct goblin_slice name = {ch->name, ch->len};

        /* The reply names the channel, whose bytes go with the last
         * subscription: reply first, then drop it. */
        reply_header(x, 3);
        goblin__reply_cstr(x, unsub_word[k]);
        goblin__reply_slice(x, name);
        goblin__ps_unsubscribe(&s->eng->pubsub, c, s, k, name);
        goblin__reply_int(x, reply_count(s, k));
    }
    if (!any)
        reply_change(x, unsub_word[k], NULL, k);
}

void goblin__exec_unsubscribe(goblin__exec *x, enum goblin__ps_kind k,
                              const struct goblin_slice *names, size_t n)
{
    goblin_session *s = x->sess;

    if (n == 0) {
        unsubscribe_all(x, k);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        goblin__ps_unsubscribe(&x->eng->pubsub, &s->ps, s, k, names[i]);
        reply_change(x, unsub_word[k], &names[i], k);
    }
}

void goblin__pubsub_leave(goblin_session *s)
{
    goblin__ps_leave_all(&s->eng->pubsub, &s->ps);
    s->push.len = 0;
}

/* ---- delivery ---- */

struct delivery {
    goblin_engine *eng;
    struct goblin_slice channel, message;
    bool shard;
};

/* "<lead><n>\r\n" at p; returns the bytes written (at most 23). */
static size_t put_len(char *p, char lead, size_t n)
{
    char digits[20];
    size_t k = 0, i = 0;

    do
        digits[k++] = (char)('0' + n % 10);
    while ((n /= 10) != 0);
    p[i++] = lead;
    while (k > 0)
        p[i++] = digits[--k];
    p[i++] = '\r';
    p[i++] = '\n';
    return i;
}

static size_t put_bulk(char *p, const void *v, size_t n)
{
    size_t i = put_len(p, '$', n);

    if (n > 0)
        memcpy(p + i, v, n);
    p[i + n] = '\r';
    p[i + n + 1] = '\n';
    return i + n + 2;
}

/* The RESP form of one message: message, pmessage or smessage, written
 * in place after one reservation. Out of memory the message is lost, as
 * Redis's would be past its limits. */
static void put_resp(struct goblin_buf *b, int resp,
                     const struct delivery *d,
                     const struct goblin__ps_chan *pat)
{
    size_t need = 4 + 4 * 25 + 8 + d->channel.len + d->message.len +
                  (pat != NULL ? pat->len : 0);
    char *p;
    size_t i;

    if (goblin_buf_reserve(b, need) != 0)
        return;
    p = (char *)b->data + b->len;
    i = put_len(p, resp == 3 ? '>' : '*', pat != NULL ? 4 : 3);
    if (pat != NULL) {
        i += put_bulk(p + i, "pmessage", 8);
        i += put_bulk(p + i, pat->name, pat->len);
    } else if (d->shard) {
        i += put_bulk(p + i, "smessage", 8);
    } else {
        i += put_bulk(p + i, "message", 7);
    }
    i += put_bulk(p + i, d->channel.ptr, d->channel.len);
    i += put_bulk(p + i, d->message.ptr, d->message.len);
    b->len += i;
}

/* The pubsub class of client-output-buffer-limit for what t has pending:
 * true when t must be disconnected. */
static bool over_limit(goblin_session *t)
{
    const uint64_t *lim = t->eng->obuf_limit[2];
    uint64_t pending = t->out.len - t->out_pos + t->push.len;
    int64_t now;

    if (lim[0] != 0 && pending > lim[0])
        return true;
    if (lim[1] == 0 || pending <= lim[1]) {
        t->obuf_soft_since_ms = 0;
        return false;
    }
    now = goblin__now_ms(t->eng->st);
    if (t->obuf_soft_since_ms == 0)
        t->obuf_soft_since_ms = now;
    return (uint64_t)(now - t->obuf_soft_since_ms) / 1000 >= lim[2];
}

static void deliver(void *ctx, void *owner, const struct goblin__ps_chan *pat)
{
    const struct delivery *d = ctx;
    goblin_session *t = owner;
    bool self = t == d->eng->running;
    struct goblin_buf *b = self ? &t->out : &t->push;

    if (t->flags & SESS_CLOSE)
        return;
    if (t->proto == GOBLIN__PROTO_SBE && t->sbe_push != NULL)
        t->sbe_push(t, b, d->channel, d->message,
                    pat != NULL ? (struct goblin_slice){pat->name, pat->len}
                                : (struct goblin_slice){NULL, 0},
                    d->shard);
    else
        put_resp(b, t->resp, d, pat);
    if (over_limit(t)) {
        /* goblin_session_output() drops the output once it sees the flag,
         * under the owner's lock. */
        t->flags |= SESS_CLOSE | SESS_OBUF_LIMIT;
        t->push.len = 0;
        if (d->eng->cfg.log != NULL)
            d->eng->cfg.log(d->eng->cfg.log_ctx, GOBLIN_LOG_WARNING,
                            "Client scheduled to be closed ASAP for "
                            "overcoming of output buffer limits.");
    }
    if (!self)
        goblin__session_wake(t);
}

size_t goblin__pubsub_publish(goblin_engine *eng, bool shard,
                              struct goblin_slice channel,
                              struct goblin_slice message)
{
    struct delivery d = {eng, channel, message, shard};

    return goblin__ps_publish(&eng->pubsub, shard, channel, deliver, &d);
}

void goblin__exec_publish(goblin__exec *x, bool shard,
                          struct goblin_slice channel,
                          struct goblin_slice message)
{
    goblin__reply_int(x, (int64_t)goblin__pubsub_publish(x->eng, shard,
                                                         channel, message));
}

/* ---- the RESP handlers ---- */

void goblin__cmd_subscribe(goblin__exec *x, int argc,
                           const struct goblin_slice *argv)
{
    goblin__exec_subscribe(x, GOBLIN__PS_CHANNEL, argv + 1,
                           (size_t)argc - 1);
}

void goblin__cmd_psubscribe(goblin__exec *x, int argc,
                            const struct goblin_slice *argv)
{
    goblin__exec_subscribe(x, GOBLIN__PS_PATTERN, argv + 1,
                           (size_t)argc - 1);
}

void goblin__cmd_ssubscribe(goblin__exec *x, int argc,
                            const struct goblin_slice *argv)
{
    /* EXEC denies blocking to the commands it runs: SUBSCRIBE and
     * PSUBSCRIBE are let through for compatibility, SSUBSCRIBE is not. */
    if (x->eng->in_exec) {
        goblin__reply_error(x, "ERR SSUBSCRIBE isn't allowed for a DENY "
                               "BLOCKING client");
        return;
    }
    goblin__exec_subscribe(x, GOBLIN__PS_SHARD, argv + 1, (size_t)argc - 1);
}

void goblin__cmd_unsubscribe(goblin__exec *x, int argc,
                             const struct goblin_slice *argv)
{
    goblin__exec_unsubscribe(x, GOBLIN__PS_CHANNEL, argv + 1,
                             (size_t)argc - 1);
}

void goblin__cmd_punsubscribe(goblin__exec *x, int argc,
                              const struct goblin_slice *argv)
{
    goblin__exec_unsubscribe(x, GOBLIN__PS_PATTERN, argv + 1,
                             (size_t)argc - 1);
}

void goblin__cmd_sunsubscribe(goblin__exec *x, int argc,
                              const struct goblin_slice *argv)
{
    goblin__exec_unsubscribe(x, GOBLIN__PS_SHARD, argv + 1,
                             (size_t)argc - 1);
}

void goblin__cmd_publish(goblin__exec *x, int argc,
                         const struct goblin_slice *argv)
{
    (void)argc;
    goblin__exec_publish(x, false, argv[1], argv[2]);
}

void goblin__cmd_spublish(goblin__exec *x, int argc,
                          const struct goblin_slice *argv)
{
    (void)argc;
    goblin__exec_publish(x, true, argv[1], argv[2]);
}

/* ---- PUBSUB ---- */

static void syntax_error(goblin__exec *x, const struct goblin_slice *argv)
{
    goblin__reply_errorf(x, "ERR unknown subcommand or wrong number of "
                            "arguments for '%.*s'. Try PUBSUB HELP.",
                         goblin__cstr_len(argv[1]) > 128
                             ? 128 : goblin__cstr_len(argv[1]),
                         (const char *)argv[1].ptr);
}

struct listing {
    goblin__exec *x;
    struct goblin_slice pattern; /* ptr NULL: all */
    size_t n;
    bool write;
};

static void list_one(void *ctx, const struct goblin__ps_chan *ch)
{
    struct listing *l = ctx;

    if (l->pattern.ptr != NULL &&
        !goblin_glob_match(l->pattern.ptr, l->pattern.len, ch->name, ch->len,
                           0))
        return;
    l->n++;
    if (l->write)
        goblin__reply_bulk(l->x, ch->name, ch->len);
}

/* CHANNELS and SHARDCHANNELS: counts, then replies (no deferred length
 * needed). */
static void channel_list(goblin__exec *x, int argc,
                         const struct goblin_slice *argv,
                         enum goblin__ps_kind k)
{
    struct listing l = {x, {NULL, 0}, 0, false};

    if (argc > 3) {
        syntax_error(x, argv);
        return;
    }
    if (argc == 3)
        l.pattern = argv[2];
    goblin__ps_each(&x->eng->pubsub, k, list_one, &l);
    goblin__reply_array(x, l.n);
    l.write = true;
    goblin__ps_each(&x->eng->pubsub, k, list_one, &l);
}

static void numsub(goblin__exec *x, int argc, const struct goblin_slice *argv,
                   enum goblin__ps_kind k)
{
    goblin__reply_array(x, (size_t)(argc - 2) * 2);
    for (int i = 2; i < argc; i++) {
        const struct goblin__ps_chan *ch =
            goblin__ps_find(&x->eng->pubsub, k, argv[i]);

        goblin__reply_slice(x, argv[i]);
        goblin__reply_int(x, ch != NULL ? ch->nsubs : 0);
    }
}

void goblin__cmd_pubsub_channels(goblin__exec *x, int argc,
                                 const struct goblin_slice *argv)
{
    channel_list(x, argc, argv, GOBLIN__PS_CHANNEL);
}

void goblin__cmd_pubsub_shardchannels(goblin__exec *x, int argc,
                                      const struct goblin_slice *argv)
{
    channel_list(x, argc, argv, GOBLIN__PS_SHARD);
}

void goblin__cmd_pubsub_numsub(goblin__exec *x, int argc,
                               const struct goblin_slice *argv)
{
    numsub(x, argc, argv, GOBLIN__PS_CHANNEL);
}

void goblin__cmd_pubsub_shardnumsub(goblin__exec *x, int argc,
                                    const struct goblin_slice *argv)
{
    numsub(x, argc, argv, GOBLIN__PS_SHARD);
}

void goblin__cmd_pubsub_numpat(goblin__exec *x, int argc,
                               const struct goblin_slice *argv)
{
    (void)argc, (void)argv;
    goblin__reply_int(x, (int64_t)goblin__ps_names(&x->eng->pubsub,
                                                   GOBLIN__PS_PATTERN));
}

void goblin__cmd_pubsub_help(goblin__exec *x, int argc,
                             const struct goblin_slice *argv)
{
    static const char *const lines[] = {
        "PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CHANNELS [<pattern>]",
        "    Return the currently active channels matching a <pattern> "
        "(default: '*').",
        "NUMPAT",
        "    Return number of subscriptions to patterns.",
        "NUMSUB [<channel> ...]",
        "    Return the number of subscribers for the specified channels, "
        "excluding",
        "    pattern subscriptions(default: no channels).",
        "SHARDCHANNELS [<pattern>]",
        "    Return the currently active shard level channels matching a "
        "<pattern> (default: '*').",
        "SHARDNUMSUB [<shardchannel> ...]",
        "    Return the number of subscribers for the specified shard level "
        "channel(s)",
        "HELP",
        "    Prints this help.",
    };

    (void)argc, (void)argv;
    goblin__reply_help(x, lines, sizeof(lines) / sizeof(lines[0]));
}

/* ---- the subscribed state ---- */

bool goblin__pubsub_allowed(const goblin_session *s,
                            const struct goblin__command *c)
{
    goblin__handler *fn = c->fn;

    if (s->resp != 2 || goblin__ps_total(&s->ps) == 0)
        return true;
    return fn == goblin__cmd_ping || fn == goblin__cmd_subscribe ||
           fn == goblin__cmd_ssubscribe || fn == goblin__cmd_unsubscribe ||
           fn == goblin__cmd_sunsubscribe || fn == goblin__cmd_psubscribe ||
           fn == goblin__cmd_punsubscribe || fn == goblin__cmd_quit ||
           fn == goblin__cmd_reset;
}
