/* pubsub.c - the client's Pub/Sub calls (goblin/client.h): subscribing
 * with every confirmation read, and taking published messages one at a
 * time over any transport and protocol.
 *
 * A message is recognised by its shape, as Redis clients do: a RESP3
 * push (or, while subscribed, a RESP2 array) whose first element is
 * message, pmessage or smessage; an SBE PublishedMessage frame arrives as
 * that same push (sbe_tree.c). A message read while a reply was awaited
 * is copied into msgq (kind byte, three u32 lengths, the bytes) and
 * handed out later in arrival order; one handed out from msgq is copied
 * to msg first, so its views outlive the queue's compaction.
 */
#include <string.h>
#include <strings.h>

#include "client/client.h"
#include "sbe/goblin_sbe_gen.h"

/* v is the word w (n lowercase letters) in any case. */
static bool word_is(const struct goblin_resp_value *v, const char *w,
                    size_t n)
{
    if ((v->type != GOBLIN_RESP_BULK && v->type != GOBLIN_RESP_STATUS) ||
        v->str.len != n)
        return false;
    for (size_t i = 0; i < n; i++)
        if ((((const char *)v->str.ptr)[i] | 0x20) != w[i])
            return false;
    return true;
}

int goblin__client_message_kind(const goblin_client *c,
                                const struct goblin_resp_value *v)
{
    if (v->type != GOBLIN_RESP_PUSH &&
        !(v->type == GOBLIN_RESP_ARRAY && c->subs + c->ssubs > 0))
        return -1;
    if (v->n == 3 && word_is(&v->items[0], "message", 7))
        return GOBLIN_CLIENT_MESSAGE;
    if (v->n == 4 && word_is(&v->items[0], "pmessage", 8))
        return GOBLIN_CLIENT_PMESSAGE;
    if (v->n == 3 && word_is(&v->items[0], "smessage", 8))
        return GOBLIN_CLIENT_SMESSAGE;
    return -1;
}

/* The views of message v of kind. */
static void message_of(const struct goblin_resp_value *v, int kind,
                       struct goblin_client_message *m)
{
    size_t i = 1;

    m->kind = (enum goblin_client_message_kind)kind;
    m->pattern = (struct goblin_slice){"", 0};
    if (kind == GOBLIN_CLIENT_PMESSAGE)
        m->pattern = v->items[i++].str;
    m->channel = v->items[i++].str;
    m->payload = v->items[i].str;
}

static void put_u32(uint8_t *p, size_t v)
{
    uint32_t x = (uint32_t)v;

    memcpy(p, &x, 4);
}

static size_t get_u32(const uint8_t *p)
{
    uint32_t x;

    memcpy(&x, p, 4);
    return x;
}

int goblin__client_message_keep(goblin_client *c,
                                const struct goblin_resp_value *v, int kind)
{
    struct goblin_client_message m;
    struct goblin_slice parts[3];
    uint8_t head[13];

    message_of(v, kind, &m);
    parts[0] = m.channel;
    parts[1] = m.pattern;
    parts[2] = m.payload;
    head[0] = (uint8_t)kind;
    for (int i = 0; i < 3; i++)
        put_u32(head + 1 + 4 * i, parts[i].len);
    if (goblin_buf_append(&c->msgq, head, sizeof(head)) != 0)
        return goblin__client_fail(c, GOBLIN_ENOMEM, "out of memory");
    for (int i = 0; i < 3; i++)
        if (goblin_buf_append(&c->msgq, parts[i].ptr, parts[i].len) != 0)
            return goblin__client_fail(c, GOBLIN_ENOMEM, "out of memory");
    return 0;
}

/* The oldest kept message, moved to c->msg. */
static int message_take(goblin_client *c, struct goblin_client_message *m)
{
    const uint8_t *p = (const uint8_t *)c->msgq.data + c->msgq_pos;
    size_t len[3], total;
    const char *b;

    for (int i = 0; i < 3; i++)
        len[i] = get_u32(p + 1 + 4 * i);
    total = 13 + len[0] + len[1] + len[2];
    c->msg.len = 0;
    if (goblin_buf_append(&c->msg, p, total) != 0)
        return goblin__client_fail(c, GOBLIN_ENOMEM, "out of memory");
    c->msgq_pos += total;
    if (c->msgq_pos == c->msgq.len)
        c->msgq_pos = c->msgq.len = 0;
    b = (const char *)c->msg.data + 13;
    m->kind = (enum goblin_client_message_kind)c->msg.data[0];
    m->channel = (struct goblin_slice){b, len[0]};
    m->pattern = (struct goblin_slice){b + len[0], len[1]};
    m->payload = (struct goblin_slice){b + len[0] + len[1], len[2]};
    return 1;
}

int goblin_client_next_message(goblin_client *c, int timeout_ms,
                               struct goblin_client_message *m)
{
    const struct goblin_resp_value *v;
    int saved = c->timeout_ms, rc, kind;

    if (c->failed)
        return c->failed;
    if (c->pending > 0)
        return GOBLIN_EINVAL;
    if (c->msgq_pos < c->msgq.len)
        return message_take(c, m);
    c->timeout_ms = timeout_ms < 0 ? 0 : timeout_ms > 0 ? timeout_ms : 1;
    c->soft_timeout = true;
    for (;;) {
        c->pending++;
        rc = goblin__client_read_any(c, &v);
        if (rc < 0)
            break;
        if ((kind = goblin__client_message_kind(c, v)) >= 0) {
            message_of(v, kind, m);
            rc = 1;
            break;
        }
        /* Anything else unasked (a late confirmation) is passed over. */
    }
    c->soft_timeout = false;
    c->timeout_ms = saved;
    if (rc == GOBLIN_ETIMEDOUT && !c->failed) {
        c->pending--;
        return 0;
    }
    return rc;
}

/* One confirmation [kind-word, name, count] of a call of kind k (0-2
 * subscribe, 3-5 unsubscribe; k % 3 is the subscription kind): keeps the
 * counts, returns the server's, or GOBLIN_EREPLY for an error reply. */
static int64_t confirmation(goblin_client *c, size_t k)
{
    const struct goblin_resp_value *v;
    int64_t *total = k % 3 == 2 ? &c->ssubs : &c->subs, was = *total;
    int rc = goblin__client_read(c, &v);

    if (rc < 0)
        return rc;
    if (v->type == GOBLIN_RESP_ERROR) {
        goblin__client_reply_error(c, v);
        return GOBLIN_EREPLY;
    }
    if ((v->type != GOBLIN_RESP_ARRAY && v->type != GOBLIN_RESP_PUSH) ||
        v->n != 3 || v->items[2].type != GOBLIN_RESP_INTEGER)
        return goblin__client_fail(c, GOBLIN_EPROTO, "unexpected reply to "
                                                     "a subscription");
    *total = v->items[2].integer;
    if (*total > was)
        c->kinds[k % 3]++;
    else if (*total < was && c->kinds[k % 3] > 0)
        c->kinds[k % 3]--;
    return *total;
}

int64_t goblin_client_subscribe(goblin_client *c, const char *command,
                                size_t n, const struct goblin_slice *names)
{
    static const char *const known[] = {"subscribe", "psubscribe",
                                        "ssubscribe", "unsubscribe",
                                        "punsubscribe", "sunsubscribe"};
    const struct goblin_resp_value *v;
    struct goblin_slice one[17], *argv = one;
    size_t replies, i, k;
    int64_t count = 0;
    int rc;

    if (c->failed)
        return c->failed;
    for (k = 0; k < 6; k++)
        if (strcasecmp(command, known[k]) == 0)
            break;
    if (k == 6 || c->pipelining || c->pending > 0 || (n == 0 && k < 3))
        return GOBLIN_EINVAL;
    if (n + 1 > sizeof(one) / sizeof(one[0]) &&
        (argv = goblin__client_mem(c, (n + 1) * sizeof(*argv))) == NULL)
        return GOBLIN_ENOMEM;
    argv[0] = (struct goblin_slice){command, strlen(command)};
    for (i = 0; i < n; i++)
        argv[i + 1] = names[i];
    /* Queued only: the confirmations are read below. */
    c->pipelining = true;
    rc = goblin_client_call(c, n + 1, argv, &v);
    c->pipelining = false;
    if (argv != one)
        goblin__client_mem_free(c, argv, (n + 1) * sizeof(*argv));
    if (rc < 0)
        return rc;
    /* One confirmation per name; an UNSUBSCRIBE of everything gets one
     * per subscription of its kind, or one when there is none. */
    replies = n > 0 ? n : c->kinds[k % 3] > 0 ? (size_t)c->kinds[k % 3] : 1;
    c->pending = replies;
    for (i = 0; i < replies; i++) {
        if ((count = confirmation(c, k)) < 0) {
            if (count == GOBLIN_EREPLY)
                c->pending = 0; /* one error answers the whole command */
            return count;
        }
    }
    return count;
}

int64_t goblin_client_publish(goblin_client *c, struct goblin_slice channel,
                              struct goblin_slice message)
{
    const struct goblin_resp_value *v = NULL;
    struct goblin_slice a[3] = {{"PUBLISH", 7}, channel, message};
    struct goblin_sbe_writer w;
    int rc;

    if ((rc = goblin__client_typed_begin(c)) < 0)
        return rc;
    if (c->proto != GOBLIN_CLIENT_SBE)
        return goblin__client_typed_int(
            c, goblin__client_typed_resp(c, 3, a, &v));
    if (goblin__client_typed_room(c, channel.len + message.len, &w) != 0)
        return GOBLIN_ENOMEM;
    rc = goblin_sbe_publish_encode(&w, channel, message);
    return goblin__client_typed_int(c, goblin__client_typed_sent(c, rc, &v));
}
