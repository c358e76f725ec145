/* cmd_bitmap.c - bitmap commands on strings: SETBIT, GETBIT, BITCOUNT,
 * BITPOS, BITOP, BITFIELD and BITFIELD_RO, with Redis 7.0's argument
 * order and texts (bitops.c).
 *
 * Order matters for which error wins, and 7.0's is kept: BITCOUNT looks
 * its key up before reading its range (a missing key answers 0 whatever
 * the range says), BITPOS reads its bit first, then the key, then the
 * range; BITFIELD reads every operation before touching the key. An
 * offset is "not an integer or out of range" past proto-max-bulk-len
 * bytes (2^32 - 1 bits by default), as Redis's getBitOffsetFromArgument.
 *
 * Each command is an execution function (exec.h) and a RESP handler that
 * parses argv and calls it; SBE reaches the handlers through its argv
 * frame.
 */
#include "exec.h"
#include "goblin/numtext.h"
#include "goblin/str.h"
#include "notify.h"
#include "respond.h"
#include "engine/session.h"
#include "store/bitmap.h"

#define ERR_BIT_OFFSET "ERR bit offset is not an integer or out of range"
#define ERR_BIT_VALUE "ERR bit is not an integer or out of range"
#define ERR_BF_TYPE                                                           \
    "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 "  \
    "is not supported but i64 is."

static void int_reply(goblin__exec *x, int64_t rc)
{
    if (rc < 0)
        goblin__reply_code(x, (int)rc);
    else
        goblin__reply_int(x, rc);
}

static bool parse_i64(struct goblin_slice a, int64_t *v)
{
    return goblin_int64_parse(a.ptr, a.len, v) == 0;
}

/* A bit offset as getBitOffsetFromArgument reads it: with hash, "#n"
 * means n fields of bits bits. */
static bool bit_offset(goblin__exec *x, struct goblin_slice a, bool hash,
                       unsigned bits, uint64_t *off)
{
    const char *p = a.ptr;
    bool usehash = hash && bits > 0 && a.len > 0 && p[0] == '#';
    struct goblin_slice num = {p + usehash, a.len - usehash};
    int64_t v;

    if (!parse_i64(num, &v)) {
        goblin__reply_error(x, ERR_BIT_OFFSET);
        return false;
    }
    if (usehash) /* Redis multiplies in two's complement */
        v = (int64_t)((uint64_t)v * bits);
    if (v < 0 || ((uint64_t)v >> 3) >= x->eng->proto_max_bulk_len) {
        goblin__reply_error(x, ERR_BIT_OFFSET);
        return false;
    }
    *off = (uint64_t)v;
    return true;
}

void goblin__exec_setbit(goblin__exec *x, struct goblin_slice key,
                         uint64_t offset, int on)
{
    int rc = goblin__bit_set(x->st, key, offset, on);

    if (rc >= 0)
        goblin__notify(x, GOBLIN__NOTIFY_STRING, "setbit", key);
    int_reply(x, rc);
}

void goblin__cmd_setbit(goblin__exec *x, int argc,
                        const struct goblin_slice *argv)
{
    uint64_t off;
    int64_t on;

    (void)argc;
    if (!bit_offset(x, argv[2], false, 0, &off))
        return;
    if (!parse_i64(argv[3], &on) || (on & ~1)) {
        goblin__reply_error(x, ERR_BIT_VALUE);
        return;
    }
    goblin__exec_setbit(x, argv[1], off, (int)on);
}

void goblin__exec_getbit(goblin__exec *x, struct goblin_slice key,
                         uint64_t offset)
{
    struct goblin_slice v;
    int rc = goblin_str_get(x->st, key, &v);
    uint64_t byte = offset >> 3;

    if (rc < 0)
        goblin__reply_code(x, rc);
    else if (rc == 0 || byte >= v.len)
        goblin__reply_int(x, 0);
    else
        goblin__reply_int(x, (((const uint8_t *)v.ptr)[byte] >>
                              (7 - (offset & 7))) & 1);
}

void goblin__cmd_getbit(goblin__exec *x, int argc,
                        const struct goblin_slice *argv)
{
    uint64_t off;

    (void)argc;
    if (bit_offset(x, argv[2], false, 0, &off))
        goblin__exec_getbit(x, argv[1], off);
}

/* A BITCOUNT / BITPOS range resolved against a string of len bytes, as
 * Redis resolves it: byte indexes start..end inclusive, with masks for
 * the bits of the first and last bytes outside a BIT range. */
struct span {
    int64_t start, end;
    uint8_t first_mask, last_mask; /* bits to leave out */
};

static void span_resolve(const struct goblin__bitrange *r, size_t len,
                         struct span *s)
{
    int64_t tot = (int64_t)len, start = r->start, end = r->end;

    s->first_mask = s->last_mask = 0;
    if (r->isbit)
        tot <<= 3;
    if (start < 0)
        start += tot;
    if (end < 0)
        end += tot;
    if (start < 0)
        start = 0;
    if (end < 0)
        end = 0;
    if (end >= tot)
        end = tot - 1;
    if (r->isbit && start <= end) {
        s->first_mask = (uint8_t)(~((1u << (8 - (start & 7))) - 1) & 0xff);
        s->last_mask = (uint8_t)((1u << (7 - (end & 7))) - 1);
        start >>= 3;
        end >>= 3;
    }
    s->start = start;
    s->end = end;
}

void goblin__exec_bitcount(goblin__exec *x, struct goblin_slice key,
                           const struct goblin__bitrange *r)
{
    struct goblin_slice v;
    const uint8_t *p;
    struct span s;
    uint64_t n;
    int rc = goblin_str_get(x->st, key, &v);

    if (rc <= 0) {
        int_reply(x, rc);
        return;
    }
    p = v.ptr;
    if (r == NULL) {
        goblin__reply_int(x, (int64_t)goblin__popcount(p, v.len));
        return;
    }
    if (r->start < 0 && r->end < 0 && r->start > r->end) {
        goblin__reply_int(x, 0);
        return;
    }
    span_resolve(r, v.len, &s);
    if (s.start > s.end) {
        goblin__reply_int(x, 0);
        return;
    }
    n = goblin__popcount(p + s.start, (size_t)(s.end - s.start + 1));
    /* Bits of the edge bytes outside a BIT range come off again. */
    n -= (uint64_t)__builtin_popcount(p[s.start] & s.first_mask) +
         (uint64_t)__builtin_popcount(p[s.end] & s.last_mask);
    goblin__reply_int(x, (int64_t)n);
}

/* BYTE or BIT at argv[i]; replies the syntax error and returns false. */
static bool range_unit(goblin__exec *x, struct goblin_slice a, bool *isbit)
{
    if (goblin__arg_is(a, "bit"))
        *isbit = true;
    else if (goblin__arg_is(a, "byte"))
        *isbit = false;
    else
        return goblin__reply_error(x, GOBLIN__ERR_SYNTAX), false;
    return true;
}

void goblin__cmd_bitcount(goblin__exec *x, int argc,
                          const struct goblin_slice *argv)
{
    struct goblin__bitrange r = {0, 0, false, true};
    struct goblin_slice v;
    int rc = goblin_str_get(x->st, argv[1], &v);

    if (rc <= 0) {
        int_reply(x, rc);
        return;
    }
    if (argc == 2) {
        goblin__exec_bitcount(x, argv[1], NULL);
        return;
    }
    if (argc != 4 && argc != 5) {
        goblin__reply_error(x, GOBLIN__ERR_SYNTAX);
        return;
    }
    if (!goblin__arg_int64(x, argv[2], &r.start, NULL) ||
        !goblin__arg_int64(x, argv[3], &r.end, NULL))
        return;
    /* A range of negative indexes that is empty wins over BYTE|BIT. */
    if (argc == 5 && !(r.start < 0 && r.end < 0 && r.start > r.end) &&
        !range_unit(x, argv[4], &r.isbit))
        return;
    goblin__exec_bitcount(x, argv[1], &r);
}

/* Where BITPOS's search ends: the position redisBitpos gave, counted
 * from byte start, with bytes the bytes that search covered. */
struct found {
    int64_t pos, start, bytes;
};

/* BITPOS's search in p[s->start..s->end], Redis's way: the edge bytes of
 * a BIT range are searched alone with the bits outside masked. */
static struct found bitpos_span(const uint8_t *p, const struct span *s,
                                int bit)
{
    struct found f = {0, s->start, s->end - s->start + 1};
    int64_t cur;
    uint8_t c;

    if (s->first_mask) {
        c = bit ? p[f.start] & (uint8_t)~s->first_mask
                : p[f.start] | s->first_mask;
        if (s->last_mask && f.bytes == 1)
            c = bit ? c & (uint8_t)~s->last_mask : c | s->last_mask;
        f.pos = goblin__bitpos(&c, 1, bit);
        if (f.bytes == 1 || (f.pos != -1 && f.pos != 8))
            return f;
        f.start++;
        f.bytes--;
    }
    cur = f.bytes - (s->last_mask ? 1 : 0);
    if (cur > 0) {
        f.pos = goblin__bitpos(p + f.start, (size_t)cur, bit);
        if (f.bytes == cur || (f.pos != -1 && f.pos != cur * 8))
            return f;
        f.start += cur;
        f.bytes -= cur;
    }
    c = bit ? p[s->end] & (uint8_t)~s->last_mask : p[s->end] | s->last_mask;
    f.pos = goblin__bitpos(&c, 1, bit);
    return f;
}

void goblin__exec_bitpos(goblin__exec *x, struct goblin_slice key, int bit,
                         const struct goblin__bitrange *r)
{
    struct goblin_slice v;
    struct span s;
    struct found f;
    int rc = goblin_str_get(x->st, key, &v);

    if (rc < 0) {
        goblin__reply_code(x, rc);
        return;
    }
    if (rc == 0) {
        goblin__reply_int(x, bit ? -1 : 0);
        return;
    }
    if (r == NULL) {
        /* An empty string has neither a 0 nor a 1. */
        goblin__reply_int(x, v.len == 0 ? -1
                                        : goblin__bitpos(v.ptr, v.len, bit));
        return;
    }
    span_resolve(r, v.len, &s);
    if (s.start > s.end) {
        goblin__reply_int(x, -1);
        return;
    }
    f = bitpos_span(v.ptr, &s, bit);
    /* With an explicit end, no clear bit in the range is -1, not the
     * first bit past it. */
    if (r->end_given && bit == 0 && f.pos == f.bytes * 8)
        f.pos = -1;
    else if (f.pos != -1)
        f.pos += f.start * 8;
    goblin__reply_int(x, f.pos);
}

void goblin__cmd_bitpos(goblin__exec *x, int argc,
                        const struct goblin_slice *argv)
{
    struct goblin__bitrange r = {0, -1, false, false};
    struct goblin_slice v;
    int64_t bit;
    int rc;

    if (!goblin__arg_int64(x, argv[2], &bit, NULL))
        return;
    if (bit != 0 && bit != 1) {
        goblin__reply_error(x, "ERR The bit argument must be 1 or 0.");
        return;
    }
    rc = goblin_str_get(x->st, argv[1], &v);
    goblin__reads_done(x);
    if (rc <= 0 || argc == 3) {
        goblin__exec_bitpos(x, argv[1], (int)bit, NULL);
        return;
    }
    if (argc > 6) {
        goblin__reply_error(x, GOBLIN__ERR_SYNTAX);
        return;
    }
    if (!goblin__arg_int64(x, argv[3], &r.start, NULL))
        return;
    if (argc == 6 && !range_unit(x, argv[5], &r.isbit))
        return;
    if (argc >= 5) {
        if (!goblin__arg_int64(x, argv[4], &r.end, NULL))
            return;
        r.end_given = true;
    }
    goblin__exec_bitpos(x, argv[1], (int)bit, &r);
}

void goblin__exec_bitop(goblin__exec *x, enum goblin__bitop op,
                        struct goblin_slice dst,
                        const struct goblin_slice *keys, size_t n)
{
    bool existed = goblin__notify_on(x, GOBLIN__NOTIFY_GENERIC) &&
                   goblin_key_exists(x->st, dst);
    int64_t rc;

    goblin__read_keys(x, keys, n); /* Redis's lookupKeyRead of each */
    rc = goblin__bit_op(x->st, op, dst, keys, n);

    goblin__notify_stored(x, GOBLIN__NOTIFY_STRING, "set", dst, rc, existed);
    int_reply(x, rc);
}

void goblin__cmd_bitop(goblin__exec *x, int argc,
                       const struct goblin_slice *argv)
{
    static const char *const names[] = {"and", "or", "xor", "not"};
    int op;

    for (op = 0; op < 4 && !goblin__arg_is(argv[1], names[op]); op++)
        ;
    if (op == 4) {
        goblin__reply_error(x, GOBLIN__ERR_SYNTAX);
        return;
    }
    if (op == GOBLIN__BITOP_NOT && argc != 4) {
        goblin__reply_error(x, "ERR BITOP NOT must be called with a single "
                               "source key.");
        return;
    }
    goblin__exec_bitop(x, (enum goblin__bitop)op, argv[2], argv + 3,
                       (size_t)argc - 3);
}

void goblin__exec_bitfield(goblin__exec *x, struct goblin_slice key,
                           const struct goblin__bf_op *ops, size_t n,
                           struct goblin__bf_result *out)
{
    int rc = goblin__bit_field(x->st, key, ops, n, out);
    size_t changes = 0;

    if (rc < 0) {
        goblin__reply_code(x, rc);
        return;
    }
    goblin__reply_array(x, n);
    for (size_t i = 0; i < n; i++) {
        if (out[i].failed)
            goblin__reply_null(x);
        else
            goblin__reply_int(x, out[i].value);
        /* Redis counts every SET and every INCRBY that did not fail. */
        changes += ops[i].kind != GOBLIN__BF_GET && !out[i].failed;
    }
    if (changes > 0)
        goblin__notify(x, GOBLIN__NOTIFY_STRING, "setbit", key);
}

/* A BITFIELD type: i1..i64 or u1..u63 (lower case, as Redis reads it). */
static bool bf_type(goblin__exec *x, struct goblin_slice a,
                    struct goblin__bf_op *op)
{
    const char *p = a.ptr;
    int len = goblin__cstr_len(a);
    int64_t bits;

    if (len < 1 || (p[0] != 'i' && p[0] != 'u') ||
        goblin_int64_parse(p + 1, (size_t)len - 1, &bits) != 0 ||
        bits < 1 || bits > (p[0] == 'i' ? 64 : 63)) {
        goblin__reply_error(x, ERR_BF_TYPE);
        return false;
    }
    op->sign = p[0] == 'i';
    op->bits = (unsigned)bits;
    return true;
}

/* The operation at argv[j] (GET, SET or INCRBY with its arguments) into
 * *op; returns the arguments it took, or 0 after replying an error. */
static int bf_parse_op(goblin__exec *x, int argc,
                       const struct goblin_slice *argv, int j,
                       struct goblin__bf_op *op)
{
    int rem = argc - j - 1;

    if (goblin__arg_is(argv[j], "get") && rem >= 2)
        op->kind = GOBLIN__BF_GET;
    else if (goblin__arg_is(argv[j], "set") && rem >= 3)
        op->kind = GOBLIN__BF_SET;
    else if (goblin__arg_is(argv[j], "incrby") && rem >= 3)
        op->kind = GOBLIN__BF_INCRBY;
    else
        return goblin__reply_error(x, GOBLIN__ERR_SYNTAX), 0;
    if (!bf_type(x, argv[j + 1], op) ||
        !bit_offset(x, argv[j + 2], true, op->bits, &op->off))
        return 0;
    op->value = 0;
    if (op->kind != GOBLIN__BF_GET &&
        !goblin__arg_int64(x, argv[j + 3], &op->value, NULL))
        return 0;
    return op->kind == GOBLIN__BF_GET ? 3 : 4;
}

/* OVERFLOW's argument; replies the error and returns false. */
static bool bf_overflow(goblin__exec *x, struct goblin_slice a,
                        enum goblin__bf_overflow *ow)
{
    if (goblin__arg_is(a, "wrap"))
        *ow = GOBLIN__BF_WRAP;
    else if (goblin__arg_is(a, "sat"))
        *ow = GOBLIN__BF_SAT;
    else if (goblin__arg_is(a, "fail"))
        *ow = GOBLIN__BF_FAIL;
    else
        return goblin__reply_error(x, "ERR Invalid OVERFLOW type specified"),
               false;
    return true;
}

static void bitfield_common(goblin__exec *x, int argc,
                            const struct goblin_slice *argv, bool ro)
{
    size_t cap = (size_t)argc / 3 + 1, n = 0;
    size_t osz = cap * sizeof(struct goblin__bf_op);
    enum goblin__bf_overflow ow = GOBLIN__BF_WRAP;
    struct goblin__bf_op *ops;
    struct goblin__bf_result *out;
    bool writes = false;
    int j, took;

    ops = goblin__scratch_bytes(x->sess,
                                osz + cap * sizeof(struct goblin__bf_result));
    if (ops == NULL) {
        goblin__reply_code(x, GOBLIN_ENOMEM);
        return;
    }
    out = (struct goblin__bf_result *)((char *)ops + osz);
    for (j = 2; j < argc; j += took) {
        if (goblin__arg_is(argv[j], "overflow") && j + 1 < argc) {
            if (!bf_overflow(x, argv[j + 1], &ow))
                return;
            took = 2;
            continue;
        }
        if ((took = bf_parse_op(x, argc, argv, j, &ops[n])) == 0)
            return;
        ops[n].ow = ow;
        writes = writes || ops[n].kind != GOBLIN__BF_GET;
        n++;
    }
    if (ro && writes) {
        goblin__reply_error(x, "ERR BITFIELD_RO only supports the GET "
                               "subcommand");
        return;
    }
    /* Only GETs: Redis looks the key up for reading, BITFIELD_RO or not. */
    if (!writes)
        goblin__reads_begin(x);
    goblin__exec_bitfield(x, argv[1], ops, n, out);
    goblin__reads_done(x);
}

void goblin__cmd_bitfield(goblin__exec *x, int argc,
                          const struct goblin_slice *argv)
{
    bitfield_common(x, argc, argv, false);
}

void goblin__cmd_bitfield_ro(goblin__exec *x, int argc,
                             const struct goblin_slice *argv)
{
    bitfield_common(x, argc, argv, true);
}
