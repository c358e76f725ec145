/* typed.c - the typed calls of goblin/client.h. Over SBE each is one
 * typed request message carrying native numbers; over RESP it is the
 * command's words, numbers written as Redis reads them. Replies of both
 * arrive as trees (SBE ones without double texts, which the typed calls
 * do not need) and are read back into native values here.
 */
#include <string.h>

#include "client/client.h"
#include "ring/ring_fast.h"
#include "goblin/keys.h"
#include "goblin/numtext.h"
#include "goblin/zset.h"
#include "resp/writer_put.h"
#include "sbe/goblin_sbe_gen.h"

#define SL(lit) ((struct goblin_slice){(lit), sizeof(lit) - 1})

static bool sbe(const goblin_client *c)
{
    return c->proto == GOBLIN_CLIENT_SBE;
}

/* May a typed call start now? */
static inline int begin(goblin_client *c)
{
    if (c->failed)
        return c->failed;
    if (!c->pipelining && c->pending > 0)
        return GOBLIN_EINVAL;
    c->tree.double_text = false;
    return 0;
}

/* Slack added to a request's estimated size (header, block, group
 * headers). */
#define SLACK 64

/* A writer over room for need more request bytes: on a ring, with nothing
 * queued in c->out, straight in an SQ reservation (sent commits it; in a
 * pipeline the commit is published by the next flush, so pipelined
 * requests are not copied either); otherwise at the end of c->out, which
 * then keeps the order: once something waits there, later requests queue
 * behind it. */
static inline int room(goblin_client *c, size_t need,
                       struct goblin_sbe_writer *w)
{
    void *buf;

    c->sq_direct = false;
    if (c->ring != NULL && c->out.len == 0 &&
        need <= c->max_request - SLACK) {
        /* The last reply's record; in a pipeline its views last until
         * the next read. */
        if (!c->pipelining)
            goblin__client_ring_let_go(c);
        if (goblin__ring_reserve_fast(c->ring, (uint32_t)(need + SLACK),
                                      &buf) == 0) {
            goblin_sbe_writer_init(w, buf, need + SLACK, true);
            c->sq_direct = true;
            return 0;
        }
    }
    if (goblin_buf_reserve(&c->out, need + SLACK) != 0)
        return GOBLIN_ENOMEM;
    goblin_sbe_writer_init(w, c->out.data + c->out.len,
                           c->out.cap - c->out.len, true);
    return 0;
}

/* Takes an encoded request and runs the round: 1 with *v, 0 queued. */
static inline int sent(goblin_client *c, int n,
                       const struct goblin_resp_value **v)
{
    bool direct = c->sq_direct;

    c->sq_direct = false;
    if (n < 0)
        return n;
    if (direct) {
        goblin__ring_commit_fast(c->ring, (uint32_t)n);
        if (!c->pipelining)
            goblin__ring_flush_fast(c->ring);
        return goblin__client_round(c, v);
    }
    if (goblin__client_fits(c, n) != 0)
        return GOBLIN_ELIMIT;
    c->out.len += (size_t)n;
    return goblin__client_round(c, v);
}

/* sent() for a call that returns an array: asks for its reply in the
 * shape want (typed_reply.c), read in place when it comes so. */
static int sent_array(goblin_client *c, uint8_t want, int n,
                      const struct goblin_resp_value **v)
{
    int rc;

    goblin__client_want(c, want);
    rc = sent(c, n, v);
    c->want = GOBLIN__WANT_TREE;
    return rc;
}

int goblin__client_typed_sent_array(goblin_client *c, uint8_t want, int n,
                                    const struct goblin_resp_value **v)
{
    return sent_array(c, want, n, v);
}

/* A RESP command's encoded size, at most (goblin__resp_put_command's
 * bound: a 24-byte header per word and for the count), or SIZE_MAX when
 * that does not fit a size_t. */
static size_t resp_size(size_t argc, const struct goblin_slice *a)
{
    size_t total = 24;

    for (size_t i = 0; i < argc; i++)
        if (__builtin_add_overflow(total, a[i].len, &total) ||
            __builtin_add_overflow(total, 26, &total))
            return SIZE_MAX;
    return total;
}

/* On a ring with nothing queued, a command that fits one record is
 * written straight into an SQ reservation, as room() does for SBE: no
 * copy through c->out. True when it went that way. */
static bool resp_direct(goblin_client *c, size_t argc,
                        const struct goblin_slice *a)
{
    size_t need, n;
    void *buf;

    if (c->ring == NULL || c->out.len != 0 || argc > 64)
        return false;
    need = resp_size(argc, a);
    if (need > c->max_request)
        return false;
    if (!c->pipelining)
        goblin__client_ring_let_go(c); /* the last reply's record */
    if (goblin__ring_reserve_fast(c->ring, (uint32_t)need, &buf) != 0)
        return false;
    /* resp_size is goblin__resp_put_command's bound. */
    n = goblin__resp_put_command(buf, argc, a);
    goblin__ring_commit_fast(c->ring, (uint32_t)n);
    if (!c->pipelining)
        goblin__ring_flush_fast(c->ring);
    return true;
}

static int resp(goblin_client *c, size_t argc, const struct goblin_slice *a,
                const struct goblin_resp_value **v)
{
    int rc;

    if (resp_direct(c, argc, a))
        return goblin__client_round(c, v);
    rc = goblin_resp_command_write(&c->out, argc, a);
    return rc < 0 ? rc : goblin__client_round(c, v);
}

/* Number texts for RESP words. */
struct num {
    char buf[GOBLIN_DOUBLE_TEXT_MAX + GOBLIN_INT64_TEXT_MAX];
};

static struct goblin_slice int_word(struct num *n, int64_t v)
{
    return (struct goblin_slice){n->buf, goblin_int64_format(n->buf, v)};
}

static struct goblin_slice dbl_word(struct num *n, double v)
{
    return (struct goblin_slice){n->buf, goblin_double_format(n->buf, v)};
}

/* ---- reading replies back ---- */

static int unexpected(goblin_client *c)
{
    strcpy(c->err, "unexpected reply type");
    return GOBLIN_EPROTO;
}

static int64_t int_of(goblin_client *c, int rc)
{
    const struct goblin_resp_value *v = c->reply;

    if (rc <= 0)
        return rc;
    if (v->type == GOBLIN_RESP_INTEGER)
        return v->integer;
    return v->type == GOBLIN_RESP_ERROR ? goblin__client_reply_error(c, v)
                                        : unexpected(c);
}

static int view_of(goblin_client *c, int rc, struct goblin_slice *out)
{
    const struct goblin_resp_value *v = c->reply;

    if (rc <= 0)
        return rc;
    if (v->type == GOBLIN_RESP_BULK) {
        *out = v->str;
        return 1;
    }
    if (v->type == GOBLIN_RESP_NULL)
        return 0;
    return v->type == GOBLIN_RESP_ERROR ? goblin__client_reply_error(c, v)
                                        : unexpected(c);
}

/* A double from v: 1 with *out, 0 for nil, or an error. */
static int dbl_from(goblin_client *c, const struct goblin_resp_value *v,
                    double *out)
{
    if (v->type == GOBLIN_RESP_DOUBLE) {
        *out = v->dbl;
        return 1;
    }
    if (v->type == GOBLIN_RESP_BULK)
        return goblin_double_parse(v->str.ptr, v->str.len, out) == 0
                   ? 1 : unexpected(c);
    if (v->type == GOBLIN_RESP_NULL)
        return 0;
    return v->type == GOBLIN_RESP_ERROR ? goblin__client_reply_error(c, v)
                                        : unexpected(c);
}

static int dbl_of(goblin_client *c, int rc, double *out)
{
    return rc <= 0 ? rc : dbl_from(c, c->reply, out);
}

/* OK: 1, nil: 0. */
static int ok_of(goblin_client *c, int rc)
{
    const struct goblin_resp_value *v = c->reply;

    if (rc <= 0)
        return rc;
    if (v->type == GOBLIN_RESP_STATUS)
        return 1;
    if (v->type == GOBLIN_RESP_NULL)
        return 0;
    return v->type == GOBLIN_RESP_ERROR ? goblin__client_reply_error(c, v)
                                        : unexpected(c);
}

/* Members with scores: [m, s] pairs (RESP3, SBE) or flat m, s (RESP2). */
static int64_t members_of(goblin_client *c, int rc,
                          const struct goblin_client_member **out)
{
    const struct goblin_resp_value *v = c->reply, *m, *s;
    bool pairs;
    size_t n, i;

    if (rc <= 0)
        return rc;
    if (c->decoded) { /* read in place (typed_reply.c) */
        *out = c->members;
        return (int64_t)v->n;
    }
    if (v->type == GOBLIN_RESP_ERROR)
        return goblin__client_reply_error(c, v);
    if (v->type != GOBLIN_RESP_ARRAY)
        return unexpected(c);
    pairs = v->n > 0 && v->items[0].type == GOBLIN_RESP_ARRAY;
    n = pairs ? v->n : v->n / 2;
    if (goblin__client_members_room(c, n) != 0)
        return GOBLIN_ENOMEM;
    for (i = 0; i < n; i++) {
        m = pairs ? &v->items[i].items[0] : &v->items[2 * i];
        s = pairs ? &v->items[i].items[1] : &v->items[2 * i + 1];
        if ((pairs && v->items[i].n != 2) ||
            dbl_from(c, s, &c->members[i].score) != 1)
            return unexpected(c);
        c->members[i].member = m->str;
    }
    *out = c->members;
    return (int64_t)n;
}

/* ---- the calls ---- */

static int resp_list(goblin_client *c, struct goblin_slice name,
                     struct goblin_slice key, const struct goblin_slice *s,
                     size_t n, const struct goblin_resp_value **v);
static size_t bytes_of(const struct goblin_slice *s, size_t n);

int goblin_client_ping(goblin_client *c)
{
    const struct goblin_resp_value *v = NULL;
    struct goblin_sbe_writer w;
    int rc;

    if ((rc = begin(c)) < 0)
        return rc;
    if (sbe(c))
        rc = room(c, 0, &w) ? GOBLIN_ENOMEM
                            : sent(c, goblin_sbe_ping_encode(&w), &v);
    else
        rc = resp(c, 1, &SL("PING"), &v);
    rc = ok_of(c, rc);
    return rc > 0 ? 0 : rc;
}

/* SET's words after key and value; returns how many. */
static size_t set_words(const struct goblin_set_options *o,
                        struct goblin_slice *a, struct num *n)
{
    static const struct goblin_slice ttl[] = {
        {"", 0}, {"EX", 2}, {"PX", 2}, {"EXAT", 4}, {"PXAT", 4},
        {"KEEPTTL", 7}};
    size_t k = 0;

    if (o->cond == GOBLIN_SET_NX)
        a[k++] = SL("NX");
    else if (o->cond == GOBLIN_SET_XX)
        a[k++] = SL("XX");
    if (o->ttl >= GOBLIN_TTL_EX && o->ttl <= GOBLIN_TTL_KEEP)
        a[k++] = ttl[o->ttl];
    if (o->ttl >= GOBLIN_TTL_EX && o->ttl <= GOBLIN_TTL_PXAT)
        a[k++] = int_word(n, o->ttl_value);
    return k;
}

static int sbe_set(goblin_client *c, struct goblin_slice key,
                   struct goblin_slice value,
                   const struct goblin_set_options *o,
                   const struct goblin_resp_value **v)
{
    struct goblin_sbe_writer w;
    unsigned flags = 0, mode = 0;

    if (o->cond == GOBLIN_SET_NX)
        flags |= GOBLIN_SBE_SET_FLAGS_NX;
    else if (o->cond == GOBLIN_SET_XX)
        flags |= GOBLIN_SBE_SET_FLAGS_XX;
    if (o->ttl == GOBLIN_TTL_KEEP)
        flags |= GOBLIN_SBE_SET_FLAGS_KEEPTTL;
    else if (o->ttl >= GOBLIN_TTL_EX && o->ttl <= GOBLIN_TTL_PXAT)
        mode = (unsigned)o->ttl; /* the schema's ExpireMode numbers */
    if (room(c, key.len + value.len, &w) != 0)
        return GOBLIN_ENOMEM;
    return sent(c, goblin_sbe_set_encode(&w, (uint8_t)flags, (uint8_t)mode,
                                         o->ttl_value, key, value), v);
}

int goblin_client_set(goblin_client *c, struct goblin_slice key,
                      struct goblin_slice value,
                      const struct goblin_set_options *opts)
{
    static const struct goblin_set_options none = {GOBLIN_SET_ALWAYS,
                                                    GOBLIN_TTL_DEFAULT, 0, 0};
    const struct goblin_set_options *o = opts != NULL ? opts : &none;
    const struct goblin_resp_value *v = NULL;
    struct goblin_slice a[6] = {SL("SET"), key, value};
    struct num n;
    int rc;

    if (o->get)
        return GOBLIN_EINVAL;
    if ((rc = begin(c)) < 0)
        return rc;
    if (sbe(c))
        rc = sbe_set(c, key, value, o, &v);
    else
        rc = resp(c, 3 + set_words(o, a + 3, &n), a, &v);
    return ok_of(c, rc);
}

/* GET, and other requests of one key answered by a bulk or nil. */
int goblin_client_get(goblin_client *c, struct goblin_slice key,
                      struct goblin_slice *value)
{
    const struct goblin_resp_value *v = NULL;
    struct goblin_slice a[2] = {SL("GET"), key};
    struct goblin_sbe_writer w;
    int rc;

    if ((rc = begin(c)) < 0)
        return rc;
    if (sbe(c))
        rc = room(c, key.len, &w) ? GOBLIN_ENOMEM
                                  : sent(c, goblin_sbe_get_encode(&w, key),
                                         &v);
    else
        rc = resp(c, 2, a, &v);
    return view_of(c, rc, value);
}

int goblin_client_incrby(goblin_client *c, struct goblin_slice key,
                         int64_t delta, int64_t *result)
{
    const struct goblin_resp_value *v = NULL;
    struct goblin_sbe_writer w;
    struct num n;
    struct goblin_slice a[3] = {SL("INCRBY"), key, int_word(&n, delta)};
    int rc;

    if ((rc = begin(c)) < 0)
        return rc;
    if (sbe(c))
        rc = room(c, key.len, &w)
                 ? GOBLIN_ENOMEM
                 : sent(c, goblin_sbe_incrby_encode(&w, delta, key), &v);
    else
        rc = resp(c, 3, a, &v);
    if (rc <= 0)
        return rc;
    if (v->type != GOBLIN_RESP_INTEGER)
        return (int)int_of(c, rc);
    *result = v->integer;
    return 0;
}

/* DEL and EXISTS: a group of keys. */
static int64_t keys_call(goblin_client *c, const struct goblin_slice *keys,
                         size_t n, bool del)
{
    const struct goblin_resp_value *v = NULL;
    struct goblin_sbe_writer w;
    size_t i;
    int rc;

    if ((rc = begin(c)) < 0)
        return rc;
    if (!sbe(c) && n > 0)
        return int_of(c, resp_list(c, del ? SL("DEL") : SL("EXISTS"), keys[0],
                                   keys + 1, n - 1, &v));
    if (!sbe(c))
        return int_of(c, resp(c, 1, del ? &SL("DEL") : &SL("EXISTS"), &v));
    if (room(c, bytes_of(keys, n), &w) != 0)
        return GOBLIN_ENOMEM;
    if (del) {
        goblin_sbe_del_begin(&w);
        goblin_sbe_del_keys_begin(&w);
        for (i = 0; i < n; i++)
            goblin_sbe_del_keys_add(&w, keys[i]);
        return int_of(c, sent(c, goblin_sbe_del_end(&w), &v));
    }
    goblin_sbe_exists_begin(&w);
    goblin_sbe_exists_keys_begin(&w);
    for (i = 0; i < n; i++)
        goblin_sbe_exists_keys_add(&w, keys[i]);
    return int_of(c, sent(c, goblin_sbe_exists_end(&w), &v));
}

int64_t goblin_client_del(goblin_client *c, const struct goblin_slice *keys,
                          size_t n)
{
    return keys_call(c, keys, n, true);
}

int64_t goblin_client_exists(goblin_client *c, const struct goblin_slice *keys,
                             size_t n)
{
    return keys_call(c, keys, n, false);
}

int goblin_client_pexpire(goblin_client *c, struct goblin_slice key,
                          int64_t ms, int flags)
{
    static const struct goblin_slice conds[] = {
        {"", 0}, {"NX", 2}, {"XX", 2}, {"GT", 2}, {"LT", 2}};
    const struct goblin_resp_value *v = NULL;
    struct goblin_sbe_writer w;
    struct num n;
    struct goblin_slice a[4] = {SL("PEXPIRE"), key, int_word(&n, ms)};
    unsigned cond = flags == GOBLIN_EXPIRE_NX   ? 1
                    : flags == GOBLIN_EXPIRE_XX ? 2
                    : flags == GOBLIN_EXPIRE_GT ? 3
                    : flags == GOBLIN_EXPIRE_LT ? 4 : 0;
    int rc;

    if (cond == 0 && flags != 0)
        return GOBLIN_EINVAL; /* one condition at most */
    if ((rc = begin(c)) < 0)
        return rc;
    a[3] = conds[cond];
    if (sbe(c))
        rc = room(c, key.len, &w)
                 ? GOBLIN_ENOMEM
                 : sent(c, goblin_sbe_pexpire_encode(&w, ms, (uint8_t)cond,
                                                     key), &v);
    else
        rc = resp(c, cond ? 4 : 3, a, &v);
    return (int)int_of(c, rc);
}

int64_t goblin_client_pttl(goblin_client *c, struct goblin_slice key)
{
    const struct goblin_resp_value *v = NULL;
    struct goblin_slice a[2] = {SL("PTTL"), key};
    struct goblin_sbe_writer w;
    int rc;

    if ((rc = begin(c)) < 0)
        return rc;
    if (sbe(c))
        rc = room(c, key.len, &w) ? GOBLIN_ENOMEM
                                  : sent(c, goblin_sbe_pttl_encode(&w, key),
                                         &v);
    else
        rc = resp(c, 2, a, &v);
    if (rc > 0 && v->type == GOBLIN_RESP_INTEGER)
        return v->integer; /* -1 and -2 are answers here */
    return int_of(c, rc);
}

/* Words of a RESP request up to this many are gathered on the stack, not
 * in the client's allocator. */
#define STACK_WORDS 40

/* RESP words: name, key, then n slices (pairs when fv). */
static int resp_list(goblin_client *c, struct goblin_slice name,
                     struct goblin_slice key, const struct goblin_slice *s,
                     size_t n, const struct goblin_resp_value **v)
{
    struct goblin_slice stack[STACK_WORDS];
    size_t size = (n + 2) * sizeof(struct goblin_slice);
    struct goblin_slice *a = n + 2 <= STACK_WORDS ? stack
                                                  : goblin__client_mem(c, size);
    int rc;

    if (a == NULL)
        return GOBLIN_ENOMEM;
    a[0] = name;
    a[1] = key;
    memcpy(a + 2, s, n * sizeof(*a));
    rc = resp(c, n + 2, a, v);
    if (a != stack)
        goblin__client_mem_free(c, a, size);
    return rc;
}

static size_t bytes_of(const struct goblin_slice *s, size_t n)
{
    size_t b = 16 * n, i;

    for (i = 0; i < n; i++)
        b += s[i].len;
    return b;
}

int64_t goblin_client_hset(goblin_client *c, struct goblin_slice key,
                           const struct goblin_slice *fv, size_t npairs)
{
    const struct goblin_resp_value *v = NULL;
    struct goblin_sbe_writer w;
    size_t i;
    int rc;

    if ((rc = begin(c)) < 0)
        return rc;
    if (!sbe(c))
        return int_of(c, resp_list(c, SL("HSET"), key, fv, 2 * npairs, &v));
    if (room(c, key.len + bytes_of(fv, 2 * npairs), &w) != 0)
        return GOBLIN_ENOMEM;
    goblin_sbe_hset_begin(&w);
    goblin_sbe_hset_entries_begin(&w);
    for (i = 0; i < npairs; i++)
        goblin_sbe_hset_entries_add(&w, fv[2 * i], fv[2 * i + 1]);
    return int_of(c, sent(c, goblin_sbe_hset_end(&w, key), &v));
}

int goblin_client_hget(goblin_client *c, struct goblin_slice key,
                       struct goblin_slice field, struct goblin_slice *value)
{
    const struct goblin_resp_value *v = NULL;
    struct goblin_slice a[3] = {SL("HGET"), key, field};
    struct goblin_sbe_writer w;
    int rc;

    if ((rc = begin(c)) < 0)
        return rc;
    if (sbe(c))
        rc = room(c, key.len + field.len, &w)
                 ? GOBLIN_ENOMEM
                 : sent(c, goblin_sbe_hget_encode(&w, key, field), &v);
    else
        rc = resp(c, 3, a, &v);
    return view_of(c, rc, value);
}

int64_t goblin_client_hdel(goblin_client *c, struct goblin_slice key,
                           const struct goblin_slice *fields, size_t n)
{
    const struct goblin_resp_value *v = NULL;
    struct goblin_sbe_writer w;
    size_t i;
    int rc;

    if ((rc = begin(c)) < 0)
        return rc;
    if (!sbe(c))
        return int_of(c, resp_list(c, SL("HDEL"), key, fields, n, &v));
    if (room(c, key.len + bytes_of(fields, n), &w) != 0)
        return GOBLIN_ENOMEM;
    goblin_sbe_hdel_begin(&w);
    goblin_sbe_hdel_fields_begin(&w);
    for (i = 0; i < n; i++)
        goblin_sbe_hdel_fields_add(&w, fields[i]);
    return int_of(c, sent(c, goblin_sbe_hdel_end(&w, key), &v));
}

/* Requests of one key answered by an integer (HLEN, ZCARD). */
static int64_t key_int(goblin_client *c, struct goblin_slice key, bool hlen)
{
    const struct goblin_resp_value *v = NULL;
    struct goblin_slice a[2] = {hlen ? SL("HLEN") : SL("ZCARD"), key};
    struct goblin_sbe_writer w;
    int rc;

    if ((rc = begin(c)) < 0)
        return rc;
    if (!sbe(c))
        return int_of(c, resp(c, 2, a, &v));
    if (room(c, key.len, &w) != 0)
        return GOBLIN_ENOMEM;
    return int_of(c, sent(c, hlen ? goblin_sbe_hlen_encode(&w, key)
                                  : goblin_sbe_zcard_encode(&w, key), &v));
}

int64_t goblin_client_hlen(goblin_client *c, struct goblin_slice key)
{
    return key_int(c, key, true);
}

int64_t goblin_client_zcard(goblin_client *c, struct goblin_slice key)
{
    return key_int(c, key, false);
}

/* ---- sorted sets ---- */

static int zadd_resp(goblin_client *c, struct goblin_slice key,
                     const double *scores, const struct goblin_slice *m,
                     size_t n, int flags, const struct goblin_resp_value **v)
{
    static const struct goblin_slice opt[] = {
        {"NX", 2}, {"XX", 2}, {"GT", 2}, {"LT", 2}, {"CH", 2}};
    enum { STACK_PAIRS = (STACK_WORDS - 7) / 2 };
    struct goblin_slice stack[STACK_WORDS];
    char stack_text[STACK_PAIRS * GOBLIN_DOUBLE_TEXT_MAX];
    size_t size = (2 * n + 7) * sizeof(struct goblin_slice), k = 0, i;
    bool small = n <= STACK_PAIRS;
    struct goblin_slice *a = small ? stack : goblin__client_mem(c, size);
    char *text = small ? stack_text
                       : goblin__client_mem(c, n * GOBLIN_DOUBLE_TEXT_MAX + 1);
    int rc;

    if (a == NULL || text == NULL) {
        goblin__client_mem_free(c, a, size);
        goblin__client_mem_free(c, text, n * GOBLIN_DOUBLE_TEXT_MAX + 1);
        return GOBLIN_ENOMEM;
    }
    a[k++] = SL("ZADD");
    a[k++] = key;
    for (i = 0; i < 5; i++)
        if (flags & (1 << i))
            a[k++] = opt[i];
    for (i = 0; i < n; i++) {
        char *t = text + i * GOBLIN_DOUBLE_TEXT_MAX;

        a[k++] = (struct goblin_slice){t, goblin_double_format(t, scores[i])};
        a[k++] = m[i];
    }
    rc = resp(c, k, a, v);
    if (!small) {
        goblin__client_mem_free(c, a, size);
        goblin__client_mem_free(c, text, n * GOBLIN_DOUBLE_TEXT_MAX + 1);
    }
    return rc;
}

int64_t goblin_client_zadd(goblin_client *c, struct goblin_slice key,
                           const double *scores,
                           const struct goblin_slice *members, size_t n,
                           int flags)
{
    const struct goblin_resp_value *v = NULL;
    struct goblin_sbe_writer w;
    size_t i;
    int rc;

    if (flags & ~0x1f)
        return GOBLIN_EINVAL;
    if ((rc = begin(c)) < 0)
        return rc;
    if (!sbe(c))
        return int_of(c, zadd_resp(c, key, scores, members, n, flags, &v));
    if (room(c, key.len + bytes_of(members, n), &w) != 0)
        return GOBLIN_ENOMEM;
    goblin_sbe_zadd_begin(&w, (uint8_t)flags);
    goblin_sbe_zadd_members_begin(&w);
    for (i = 0; i < n; i++)
        goblin_sbe_zadd_members_add(&w, scores[i], members[i]);
    return int_of(c, sent(c, goblin_sbe_zadd_end(&w, key), &v));
}

int goblin_client_zincrby(goblin_client *c, struct goblin_slice key,
                          struct goblin_slice member, double incr,
                          double *score)
{
    const struct goblin_resp_value *v = NULL;
    struct goblin_sbe_writer w;
    struct num n;
    struct goblin_slice a[4] = {SL("ZINCRBY"), key, dbl_word(&n, incr),
                                member};
    int rc;

    if ((rc = begin(c)) < 0)
        return rc;
    if (sbe(c))
        rc = room(c, key.len + member.len, &w)
                 ? GOBLIN_ENOMEM
                 : sent(c, goblin_sbe_zincrby_encode(&w, incr, key, member),
                        &v);
    else
        rc = resp(c, 4, a, &v);
    rc = dbl_of(c, rc, score);
    return rc > 0 ? 0 : rc == 0 ? unexpected(c) : rc;
}

int goblin_client_zscore(goblin_client *c, struct goblin_slice key,
                         struct goblin_slice member, double *score)
{
    const struct goblin_resp_value *v = NULL;
    struct goblin_slice a[3] = {SL("ZSCORE"), key, member};
    struct goblin_sbe_writer w;
    int rc;

    if ((rc = begin(c)) < 0)
        return rc;
    if (sbe(c))
        rc = room(c, key.len + member.len, &w)
                 ? GOBLIN_ENOMEM
                 : sent(c, goblin_sbe_zscore_encode(&w, key, member), &v);
    else
        rc = resp(c, 3, a, &v);
    return dbl_of(c, rc, score);
}

int goblin_client_zrank(goblin_client *c, struct goblin_slice key,
                        struct goblin_slice member, int rev, int64_t *rank)
{
    const struct goblin_resp_value *v = NULL;
    struct goblin_slice a[3] = {rev ? SL("ZREVRANK") : SL("ZRANK"), key,
                                member};
    struct goblin_sbe_writer w;
    int rc;

    if ((rc = begin(c)) < 0)
        return rc;
    if (sbe(c) && room(c, key.len + member.len, &w) != 0)
        return GOBLIN_ENOMEM;
    if (sbe(c))
        rc = sent(c, rev ? goblin_sbe_zrevrank_encode(&w, key, member)
                         : goblin_sbe_zrank_encode(&w, key, member), &v);
    else
        rc = resp(c, 3, a, &v);
    if (rc <= 0 || v->type == GOBLIN_RESP_NULL)
        return rc > 0 ? 0 : rc;
    if (v->type != GOBLIN_RESP_INTEGER)
        return (int)int_of(c, rc);
    *rank = v->integer;
    return 1;
}

int64_t goblin_client_zrem(goblin_client *c, struct goblin_slice key,
                           const struct goblin_slice *members, size_t n)
{
    const struct goblin_resp_value *v = NULL;
    struct goblin_sbe_writer w;
    size_t i;
    int rc;

    if ((rc = begin(c)) < 0)
        return rc;
    if (!sbe(c))
        return int_of(c, resp_list(c, SL("ZREM"), key, members, n, &v));
    if (room(c, key.len + bytes_of(members, n), &w) != 0)
        return GOBLIN_ENOMEM;
    goblin_sbe_zrem_begin(&w);
    goblin_sbe_zrem_members_begin(&w);
    for (i = 0; i < n; i++)
        goblin_sbe_zrem_members_add(&w, members[i]);
    return int_of(c, sent(c, goblin_sbe_zrem_end(&w, key), &v));
}

int64_t goblin_client_zrange(goblin_client *c, struct goblin_slice key,
                             int64_t start, int64_t stop, int rev,
                             const struct goblin_client_member **out)
{
    const struct goblin_resp_value *v = NULL;
    struct goblin_sbe_writer w;
    struct num n1, n2;
    struct goblin_slice a[6] = {SL("ZRANGE"), key, int_word(&n1, start),
                                int_word(&n2, stop), SL("WITHSCORES"),
                                SL("REV")};
    int rc;

    if ((rc = begin(c)) < 0)
        return rc;
    if (sbe(c))
        rc = room(c, key.len, &w)
                 ? GOBLIN_ENOMEM
                 : sent_array(c, GOBLIN__WANT_MEMBERS,
                              goblin_sbe_zrange_encode(&w, start, stop, 1,
                                                       rev != 0, key),
                              &v);
    else
        rc = resp(c, rev ? 6 : 5, a, &v);
    return members_of(c, rc, out);
}

/* ZRANGE key min max BYSCORE [REV] [LIMIT offset count] WITHSCORES. */
static int zrange_by_score_resp(goblin_client *c, struct goblin_slice key,
                                double min, int minx, double max, int maxx,
                                int rev, int64_t offset, int64_t count,
                                const struct goblin_resp_value **v)
{
    char lo[GOBLIN_DOUBLE_TEXT_MAX + 1], hi[GOBLIN_DOUBLE_TEXT_MAX + 1];
    struct num o, k;
    struct goblin_slice a[10] = {SL("ZRANGE"), key};
    size_t n = 4;

    lo[0] = '(';
    hi[0] = '(';
    a[rev ? 3 : 2] = (struct goblin_slice){lo + !minx,
                                           goblin_double_format(lo + 1, min) +
                                               (minx != 0)};
    a[rev ? 2 : 3] = (struct goblin_slice){hi + !maxx,
                                           goblin_double_format(hi + 1, max) +
                                               (maxx != 0)};
    a[n++] = SL("BYSCORE");
    if (rev)
        a[n++] = SL("REV");
    if (offset != 0 || count >= 0) {
        a[n++] = SL("LIMIT");
        a[n++] = int_word(&o, offset);
        a[n++] = int_word(&k, count);
    }
    a[n++] = SL("WITHSCORES");
    return resp(c, n, a, v);
}

int64_t goblin_client_zrange_by_score(goblin_client *c, struct goblin_slice key,
                                      double min, int min_exclusive,
                                      double max, int max_exclusive, int rev,
                                      int64_t offset, int64_t count,
                                      const struct goblin_client_member **out)
{
    const struct goblin_resp_value *v = NULL;
    struct goblin_sbe_writer w;
    unsigned f = GOBLIN_SBE_RANGE_FLAGS_WITH_SCORES;
    int rc;

    if ((rc = begin(c)) < 0)
        return rc;
    if (!sbe(c))
        return members_of(c, zrange_by_score_resp(c, key, min, min_exclusive,
                                                  max, max_exclusive, rev,
                                                  offset, count, &v), out);
    f |= min_exclusive ? GOBLIN_SBE_RANGE_FLAGS_MIN_EXCLUSIVE : 0;
    f |= max_exclusive ? GOBLIN_SBE_RANGE_FLAGS_MAX_EXCLUSIVE : 0;
    f |= rev ? GOBLIN_SBE_RANGE_FLAGS_REV : 0;
    f |= offset != 0 || count >= 0 ? GOBLIN_SBE_RANGE_FLAGS_HAS_LIMIT : 0;
    if (room(c, key.len, &w) != 0)
        return GOBLIN_ENOMEM;
    rc = sent_array(c, GOBLIN__WANT_MEMBERS,
                    goblin_sbe_zrangebyscore_encode(&w, min, max, offset,
                                                    count, (uint8_t)f, key),
                    &v);
    return members_of(c, rc, out);
}

int64_t goblin_client_dbsize(goblin_client *c)
{
    const struct goblin_resp_value *v = NULL;
    struct goblin_sbe_writer w;
    int rc;

    if ((rc = begin(c)) < 0)
        return rc;
    if (sbe(c))
        rc = room(c, 0, &w) ? GOBLIN_ENOMEM
                            : sent(c, goblin_sbe_dbsize_encode(&w), &v);
    else
        rc = resp(c, 1, &SL("DBSIZE"), &v);
    return int_of(c, rc);
}

int goblin_client_flushall(goblin_client *c)
{
    const struct goblin_resp_value *v = NULL;
    struct goblin_sbe_writer w;
    int rc;

    if ((rc = begin(c)) < 0)
        return rc;
    if (sbe(c))
        rc = room(c, 0, &w) ? GOBLIN_ENOMEM
                            : sent(c, goblin_sbe_flushall_encode(&w, 0), &v);
    else
        rc = resp(c, 1, &SL("FLUSHALL"), &v);
    rc = ok_of(c, rc);
    return rc > 0 ? 0 : rc;
}

/* ---- the steps shared with typed_coll.c (client/client.h) ---- */

int goblin__client_typed_begin(goblin_client *c)
{
    return begin(c);
}

int goblin__client_typed_room(goblin_client *c, size_t need,
                              struct goblin_sbe_writer *w)
{
    return room(c, need, w);
}

int goblin__client_typed_sent(goblin_client *c, int n,
                              const struct goblin_resp_value **v)
{
    return sent(c, n, v);
}

int goblin__client_typed_resp(goblin_client *c, size_t argc,
                              const struct goblin_slice *a,
                              const struct goblin_resp_value **v)
{
    return resp(c, argc, a, v);
}

int goblin__client_typed_resp_list(goblin_client *c, struct goblin_slice name,
                                   struct goblin_slice key,
                                   const struct goblin_slice *s, size_t n,
                                   const struct goblin_resp_value **v)
{
    return resp_list(c, name, key, s, n, v);
}

int64_t goblin__client_typed_int(goblin_client *c, int rc)
{
    return int_of(c, rc);
}

int goblin__client_typed_unexpected(goblin_client *c)
{
    return unexpected(c);
}

size_t goblin__client_typed_bytes(const struct goblin_slice *s, size_t n)
{
    return bytes_of(s, n);
}
