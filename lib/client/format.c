/* format.c - prints reply trees exactly as redis-cli 7 prints them
 * (cliFormatReplyTTY and cliFormatReplyRaw), whichever protocol carried
 * the reply: goblin_client_format_reply() in goblin/client.h.
 *
 * Terminal form: strings quoted with C-like escapes (sdscatrepr),
 * "(integer) n", "(double) text", "(nil)", "(true)", "(error) text";
 * aggregates numbered "1) ", sets "1~ ", maps "1# key => value", with
 * nested items indented by the width of the index plus two, and a map
 * value that spans several lines starting on its own line. Raw form:
 * values bare, aggregates one item per line, map pairs "key value".
 */
#include <stdio.h>
#include <string.h>

#include "client/client.h"

struct out {
    struct goblin_buf *b;
    int err;
};

static void put(struct out *o, const void *p, size_t n)
{
    if (o->err == 0 && n > 0 && goblin_buf_append(o->b, p, n) != 0)
        o->err = GOBLIN_ENOMEM;
}

static void puts_(struct out *o, const char *s)
{
    put(o, s, strlen(s));
}

static void put_int(struct out *o, int64_t v)
{
    char tmp[32];
    int n = snprintf(tmp, sizeof(tmp), "%lld", (long long)v);

    put(o, tmp, (size_t)n);
}

/* sdscatrepr: a quoted string with \\ \" \n \r \t \a \b and \xHH. */
static void put_repr(struct out *o, struct goblin_slice s)
{
    const unsigned char *p = s.ptr;
    char esc[5];
    size_t i;

    put(o, "\"", 1);
    for (i = 0; i < s.len; i++) {
        switch (p[i]) {
        case '\\': put(o, "\\\\", 2); break;
        case '"': put(o, "\\\"", 2); break;
        case '\n': put(o, "\\n", 2); break;
        case '\r': put(o, "\\r", 2); break;
        case '\t': put(o, "\\t", 2); break;
        case '\a': put(o, "\\a", 2); break;
        case '\b': put(o, "\\b", 2); break;
        default:
            if (p[i] >= 0x20 && p[i] < 0x7f) {
                put(o, &p[i], 1);
            } else {
                snprintf(esc, sizeof(esc), "\\x%02x", p[i]);
                put(o, esc, 4);
            }
        }
    }
    put(o, "\"", 1);
}

static bool aggregate(const struct goblin_resp_value *v)
{
    return v->type == GOBLIN_RESP_ARRAY || v->type == GOBLIN_RESP_MAP ||
           v->type == GOBLIN_RESP_SET || v->type == GOBLIN_RESP_PUSH;
}

/* cliIsMultilineValueTTY. */
static bool multiline(const struct goblin_resp_value *v)
{
    if (!aggregate(v) || v->n == 0)
        return false;
    if (v->type == GOBLIN_RESP_MAP)
        return v->n > 2 || multiline(&v->items[1]);
    return v->n > 1 || multiline(&v->items[0]);
}

static void tty(struct out *o, const struct goblin_resp_value *v,
                const char *prefix, size_t plen);

static void tty_empty(struct out *o, enum goblin_resp_type t)
{
    puts_(o, t == GOBLIN_RESP_ARRAY ? "(empty array)\n"
             : t == GOBLIN_RESP_MAP ? "(empty hash)\n"
             : t == GOBLIN_RESP_SET ? "(empty set)\n" : "(empty push)\n");
}

/* Removes the newline the last item ended with (sdsrange(out, 0, -2)). */
static void unput_newline(struct out *o)
{
    if (o->err == 0 && o->b->len > 0)
        o->b->len--;
}

static void tty_aggregate(struct out *o, const struct goblin_resp_value *v,
                          const char *prefix, size_t plen)
{
    size_t shown = v->type == GOBLIN_RESP_MAP ? v->n / 2 : v->n;
    char sep = v->type == GOBLIN_RESP_SET ? '~'
               : v->type == GOBLIN_RESP_MAP ? '#' : ')';
    char sub[1024], idx[32];
    size_t i, width = (size_t)snprintf(idx, sizeof(idx), "%zu", shown);
    size_t slen = plen + width + 2 < sizeof(sub) ? plen + width + 2 : plen;

    if (v->n == 0) {
        tty_empty(o, v->type);
        return;
    }
    memcpy(sub, prefix, plen);
    memset(sub + plen, ' ', slen - plen);
    sub[slen] = '\0';
    for (i = 0; i < v->n; i++) {
        size_t human = (v->type == GOBLIN_RESP_MAP ? i / 2 : i) + 1;
        int n = snprintf(idx, sizeof(idx), "%*zu%c ", (int)width, human, sep);

        if (i > 0)
            put(o, prefix, plen);
        put(o, idx, (size_t)n);
        tty(o, &v->items[i], sub, slen);
        if (v->type == GOBLIN_RESP_MAP && ++i < v->n) {
            unput_newline(o);
            puts_(o, " => ");
            if (multiline(&v->items[i])) {
                put(o, "\n", 1);
                put(o, sub, slen);
            }
            tty(o, &v->items[i], sub, slen);
        }
    }
}

static void tty(struct out *o, const struct goblin_resp_value *v,
                const char *prefix, size_t plen)
{
    switch (v->type) {
    case GOBLIN_RESP_ERROR:
    case GOBLIN_RESP_BLOB_ERROR:
        puts_(o, "(error) ");
        put(o, v->str.ptr, v->str.len);
        break;
    case GOBLIN_RESP_STATUS:
    case GOBLIN_RESP_VERBATIM:
        put(o, v->str.ptr, v->str.len);
        break;
    case GOBLIN_RESP_INTEGER:
        puts_(o, "(integer) ");
        put_int(o, v->integer);
        break;
    case GOBLIN_RESP_DOUBLE:
        puts_(o, "(double) ");
        put(o, v->str.ptr, v->str.len);
        break;
    case GOBLIN_RESP_BIGNUM:
        puts_(o, "(big number) ");
        put(o, v->str.ptr, v->str.len);
        break;
    case GOBLIN_RESP_BULK:
        put_repr(o, v->str);
        break;
    case GOBLIN_RESP_NULL:
        puts_(o, "(nil)");
        break;
    case GOBLIN_RESP_BOOLEAN:
        puts_(o, v->integer ? "(true)" : "(false)");
        break;
    default:
        tty_aggregate(o, v, prefix, plen);
        return;
    }
    put(o, "\n", 1);
}

static void raw(struct out *o, const struct goblin_resp_value *v)
{
    size_t i;

    switch (v->type) {
    case GOBLIN_RESP_NULL:
        break;
    case GOBLIN_RESP_ERROR:
    case GOBLIN_RESP_BLOB_ERROR:
        put(o, v->str.ptr, v->str.len);
        put(o, "\n", 1);
        break;
    case GOBLIN_RESP_BOOLEAN:
        puts_(o, v->integer ? "(true)" : "(false)");
        break;
    case GOBLIN_RESP_INTEGER:
        put_int(o, v->integer);
        break;
    case GOBLIN_RESP_MAP:
        for (i = 0; i + 1 < v->n; i += 2) {
            if (i > 0)
                put(o, "\n", 1);
            raw(o, &v->items[i]);
            put(o, " ", 1);
            raw(o, &v->items[i + 1]);
        }
        break;
    case GOBLIN_RESP_ARRAY:
    case GOBLIN_RESP_SET:
    case GOBLIN_RESP_PUSH:
    case GOBLIN_RESP_ATTRIBUTE:
        for (i = 0; i < v->n; i++) {
            if (i > 0)
                put(o, "\n", 1);
            raw(o, &v->items[i]);
        }
        break;
    default:
        put(o, v->str.ptr, v->str.len);
        break;
    }
}

int goblin_client_format_reply(const struct goblin_resp_value *v, int raw_,
                               struct goblin_buf *out)
{
    struct out o = {out, 0};
    size_t start = out->len;

    if (raw_) {
        raw(&o, v);
        put(&o, "\n", 1);
    } else {
        tty(&o, v, "", 0);
    }
    if (o.err != 0)
        out->len = start;
    return o.err;
}
