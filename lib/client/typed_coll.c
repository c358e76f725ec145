/* typed_coll.c - the typed calls of goblin/client.h on lists and sets:
 * LPUSH, RPUSH, LPOP and RPOP with a count, LRANGE, LLEN, SADD, SREM,
 * SISMEMBER, SMEMBERS and SCARD. Over SBE each is one typed request with
 * native counts and indices; over RESP the command's words. Replies of
 * strings are read back in place: the slices point into the reply (the
 * client's receive buffer or the ring record), in an array the client
 * owns, all valid until the next call. */
#include <string.h>

#include "client/client.h"
#include "goblin/numtext.h"
#include "sbe/goblin_sbe_gen.h"

#define SL(lit) ((struct goblin_slice){(lit), sizeof(lit) - 1})

static bool sbe(const goblin_client *c)
{
    return c->proto == GOBLIN_CLIENT_SBE;
}

/* An array (or RESP3 set) of bulk strings: how many, with *out; 0 for a
 * null (a missing key's pop). */
static int64_t strings_of(goblin_client *c, int rc,
                          const struct goblin_slice **out)
{
    const struct goblin_resp_value *v = c->reply;
    size_t i;

    if (rc <= 0)
        return rc;
    if (c->decoded) { /* read in place (typed_reply.c) */
        *out = c->strings;
        return (int64_t)v->n;
    }
    if (v->type == GOBLIN_RESP_NULL)
        return 0;
    if (v->type == GOBLIN_RESP_ERROR)
        return goblin__client_reply_error(c, v);
    if (v->type != GOBLIN_RESP_ARRAY && v->type != GOBLIN_RESP_SET)
        return goblin__client_typed_unexpected(c);
    if (goblin__client_strings_room(c, v->n) != 0)
        return GOBLIN_ENOMEM;
    for (i = 0; i < v->n; i++) {
        if (v->items[i].type != GOBLIN_RESP_BULK)
            return goblin__client_typed_unexpected(c);
        c->strings[i] = v->items[i].str;
    }
    *out = c->strings;
    return (int64_t)v->n;
}

static struct goblin_slice int_word(char *buf, int64_t v)
{
    return (struct goblin_slice){buf, goblin_int64_format(buf, v)};
}

/* ---- lists ---- */

/* LPUSH (tail false) and RPUSH: a group of elements. */
static int64_t push(goblin_client *c, struct goblin_slice key,
                    const struct goblin_slice *e, size_t n, bool tail)
{
    const struct goblin_resp_value *v = NULL;
    struct goblin_sbe_writer w;
    size_t i;
    int rc;

    if ((rc = goblin__client_typed_begin(c)) < 0)
        return rc;
    if (!sbe(c))
        return goblin__client_typed_int(
            c, goblin__client_typed_resp_list(c, tail ? SL("RPUSH")
                                                      : SL("LPUSH"),
                                              key, e, n, &v));
    if (goblin__client_typed_room(c, key.len +
                                         goblin__client_typed_bytes(e, n),
                                  &w) != 0)
        return GOBLIN_ENOMEM;
    if (tail) {
        goblin_sbe_rpush_begin(&w);
        goblin_sbe_rpush_elements_begin(&w);
        for (i = 0; i < n; i++)
            goblin_sbe_rpush_elements_add(&w, e[i]);
        rc = goblin_sbe_rpush_end(&w, key);
    } else {
        goblin_sbe_lpush_begin(&w);
        goblin_sbe_lpush_elements_begin(&w);
        for (i = 0; i < n; i++)
            goblin_sbe_lpush_elements_add(&w, e[i]);
        rc = goblin_sbe_lpush_end(&w, key);
    }
    return goblin__client_typed_int(c, goblin__client_typed_sent(c, rc, &v));
}

int64_t goblin_client_lpush(goblin_client *c, struct goblin_slice key,
                            const struct goblin_slice *elems, size_t n)
{
    return push(c, key, elems, n, false);
}

int64_t goblin_client_rpush(goblin_client *c, struct goblin_slice key,
                            const struct goblin_slice *elems, size_t n)
{
    return push(c, key, elems, n, true);
}

/* LPOP (tail false) and RPOP key count. */
static int64_t pop(goblin_client *c, struct goblin_slice key, int64_t count,
                   bool tail, const struct goblin_slice **out)
{
    const struct goblin_resp_value *v = NULL;
    struct goblin_sbe_writer w;
    char num[GOBLIN_INT64_TEXT_MAX];
    struct goblin_slice a[3] = {tail ? SL("RPOP") : SL("LPOP"), key,
                                int_word(num, count)};
    uint8_t f = GOBLIN_SBE_COUNT_FLAGS_HAS_COUNT;
    int rc;

    if ((rc = goblin__client_typed_begin(c)) < 0)
        return rc;
    if (!sbe(c))
        return strings_of(c, goblin__client_typed_resp(c, 3, a, &v), out);
    if (goblin__client_typed_room(c, key.len, &w) != 0)
        return GOBLIN_ENOMEM;
    rc = tail ? goblin_sbe_rpop_encode(&w, count, f, key)
              : goblin_sbe_lpop_encode(&w, count, f, key);
    return strings_of(c,
                      goblin__client_typed_sent_array(
                          c, GOBLIN__WANT_STRINGS, rc, &v),
                      out);
}

int64_t goblin_client_lpop(goblin_client *c, struct goblin_slice key,
                           int64_t count, const struct goblin_slice **out)
{
    return pop(c, key, count, false, out);
}

int64_t goblin_client_rpop(goblin_client *c, struct goblin_slice key,
                           int64_t count, const struct goblin_slice **out)
{
    return pop(c, key, count, true, out);
}

int64_t goblin_client_lrange(goblin_client *c, struct goblin_slice key,
                             int64_t start, int64_t stop,
                             const struct goblin_slice **out)
{
    const struct goblin_resp_value *v = NULL;
    struct goblin_sbe_writer w;
    char n1[GOBLIN_INT64_TEXT_MAX], n2[GOBLIN_INT64_TEXT_MAX];
    struct goblin_slice a[4] = {SL("LRANGE"), key, int_word(n1, start),
                                int_word(n2, stop)};
    int rc;

    if ((rc = goblin__client_typed_begin(c)) < 0)
        return rc;
    if (!sbe(c))
        return strings_of(c, goblin__client_typed_resp(c, 4, a, &v), out);
    if (goblin__client_typed_room(c, key.len, &w) != 0)
        return GOBLIN_ENOMEM;
    rc = goblin_sbe_lrange_encode(&w, start, stop, key);
    return strings_of(c,
                      goblin__client_typed_sent_array(
                          c, GOBLIN__WANT_STRINGS, rc, &v),
                      out);
}

/* Requests of one key answered by an integer: LLEN, SCARD. */
static int64_t key_int(goblin_client *c, struct goblin_slice key, bool llen)
{
    const struct goblin_resp_value *v = NULL;
    struct goblin_slice a[2] = {llen ? SL("LLEN") : SL("SCARD"), key};
    struct goblin_sbe_writer w;
    int rc;

    if ((rc = goblin__client_typed_begin(c)) < 0)
        return rc;
    if (!sbe(c))
        return goblin__client_typed_int(c,
                                        goblin__client_typed_resp(c, 2, a,
                                                                  &v));
    if (goblin__client_typed_room(c, key.len, &w) != 0)
        return GOBLIN_ENOMEM;
    rc = llen ? goblin_sbe_llen_encode(&w, key)
              : goblin_sbe_scard_encode(&w, key);
    return goblin__client_typed_int(c, goblin__client_typed_sent(c, rc, &v));
}

int64_t goblin_client_llen(goblin_client *c, struct goblin_slice key)
{
    return key_int(c, key, true);
}

/* ---- sets ---- */

/* SADD (rem false) and SREM: a group of members. */
static int64_t members(goblin_client *c, struct goblin_slice key,
                       const struct goblin_slice *m, size_t n, bool rem)
{
    const struct goblin_resp_value *v = NULL;
    struct goblin_sbe_writer w;
    size_t i;
    int rc;

    if ((rc = goblin__client_typed_begin(c)) < 0)
        return rc;
    if (!sbe(c))
        return goblin__client_typed_int(
            c, goblin__client_typed_resp_list(c, rem ? SL("SREM")
                                                     : SL("SADD"),
                                              key, m, n, &v));
    if (goblin__client_typed_room(c, key.len +
                                         goblin__client_typed_bytes(m, n),
                                  &w) != 0)
        return GOBLIN_ENOMEM;
    if (rem) {
        goblin_sbe_srem_begin(&w);
        goblin_sbe_srem_members_begin(&w);
        for (i = 0; i < n; i++)
            goblin_sbe_srem_members_add(&w, m[i]);
        rc = goblin_sbe_srem_end(&w, key);
    } else {
        goblin_sbe_sadd_begin(&w);
        goblin_sbe_sadd_members_begin(&w);
        for (i = 0; i < n; i++)
            goblin_sbe_sadd_members_add(&w, m[i]);
        rc = goblin_sbe_sadd_end(&w, key);
    }
    return goblin__client_typed_int(c, goblin__client_typed_sent(c, rc, &v));
}

int64_t goblin_client_sadd(goblin_client *c, struct goblin_slice key,
                           const struct goblin_slice *m, size_t n)
{
    return members(c, key, m, n, false);
}

int64_t goblin_client_srem(goblin_client *c, struct goblin_slice key,
                           const struct goblin_slice *m, size_t n)
{
    return members(c, key, m, n, true);
}

int goblin_client_sismember(goblin_client *c, struct goblin_slice key,
                            struct goblin_slice member)
{
    const struct goblin_resp_value *v = NULL;
    struct goblin_slice a[3] = {SL("SISMEMBER"), key, member};
    struct goblin_sbe_writer w;
    int rc;

    if ((rc = goblin__client_typed_begin(c)) < 0)
        return rc;
    if (!sbe(c))
        return (int)goblin__client_typed_int(
            c, goblin__client_typed_resp(c, 3, a, &v));
    if (goblin__client_typed_room(c, key.len + member.len, &w) != 0)
        return GOBLIN_ENOMEM;
    rc = goblin_sbe_sismember_encode(&w, key, member);
    return (int)goblin__client_typed_int(c,
                                         goblin__client_typed_sent(c, rc, &v));
}

int64_t goblin_client_smembers(goblin_client *c, struct goblin_slice key,
                               const struct goblin_slice **out)
{
    const struct goblin_resp_value *v = NULL;
    struct goblin_slice a[2] = {SL("SMEMBERS"), key};
    struct goblin_sbe_writer w;
    int rc;

    if ((rc = goblin__client_typed_begin(c)) < 0)
        return rc;
    if (!sbe(c))
        return strings_of(c, goblin__client_typed_resp(c, 2, a, &v), out);
    if (goblin__client_typed_room(c, key.len, &w) != 0)
        return GOBLIN_ENOMEM;
    rc = goblin_sbe_smembers_encode(&w, key);
    return strings_of(c,
                      goblin__client_typed_sent_array(
                          c, GOBLIN__WANT_STRINGS, rc, &v),
                      out);
}

int64_t goblin_client_scard(goblin_client *c, struct goblin_slice key)
{
    return key_int(c, key, false);
}
