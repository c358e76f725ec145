/* cmd_lcs.c - LCS: the longest common subsequence of two strings, its
 * length (LEN) or its matching ranges (IDX, MINMATCHLEN, WITHMATCHLEN),
 * as Redis 7.0's lcsCommand (t_string.c) computes and orders them.
 *
 * The classic dynamic programme: a table of (alen + 1) * (blen + 1)
 * 32-bit lengths, then one walk back from its corner that spells the
 * subsequence and cuts it into ranges, last first. The table is the
 * command's transient memory: taken from the store's allocator (so it
 * counts while it lives), refused past proto-max-bulk-len bytes as Redis
 * refuses it. IDX's array length comes first on the wire, so the walk
 * runs twice: once to count the ranges kept, once to send them.
 */
#include "exec.h"
#include "engine/session.h"
#include "goblin/numtext.h"
#include "goblin/str.h"
#include "notify.h"
#include "respond.h"

#define ERR_LCS_TYPES "ERR The specified keys must contain string values"

struct lcs_walk {
    const uint8_t *a, *b;
    const uint32_t *dp;
    uint32_t alen, blen;
    uint8_t *result;      /* NULL: the subsequence is not kept */
    int64_t minmatchlen;
    bool withmatchlen;
    goblin__exec *x;      /* NULL: count the ranges only */
};

#define DP(w, i, j) ((w)->dp[(size_t)(j) + (size_t)(i) * ((w)->blen + 1)])

static void emit(struct lcs_walk *w, uint32_t as, uint32_t ae, uint32_t bs,
                 uint32_t be)
{
    goblin__reply_array(w->x, 2 + w->withmatchlen);
    goblin__reply_array(w->x, 2);
    goblin__reply_int(w->x, as);
    goblin__reply_int(w->x, ae);
    goblin__reply_array(w->x, 2);
    goblin__reply_int(w->x, bs);
    goblin__reply_int(w->x, be);
    if (w->withmatchlen)
        goblin__reply_int(w->x, (int64_t)ae - as + 1);
}

/* Walks back from the table's corner; returns the ranges kept. */
static size_t lcs_walk(struct lcs_walk *w)
{
    uint32_t i = w->alen, j = w->blen, idx = DP(w, w->alen, w->blen);
    uint32_t as = w->alen, ae = 0, bs = 0, be = 0; /* as == alen: none */
    size_t kept = 0;

    while (i > 0 && j > 0) {
        bool out = false;

        if (w->a[i - 1] == w->b[j - 1]) {
            if (w->result != NULL)
                w->result[idx - 1] = w->a[i - 1];
            if (as == w->alen) {
                as = ae = i - 1;
                bs = be = j - 1;
            } else if (as == i && bs == j) {
                as--;
                bs--;
            } else {
                out = true;
            }
            if (as == 0 || bs == 0)
                out = true;
            idx--;
            i--;
            j--;
        } else {
            if (DP(w, i - 1, j) > DP(w, i, j - 1))
                i--;
            else
                j--;
            if (as != w->alen)
                out = true;
        }
        if (out) {
            if (w->minmatchlen == 0 ||
                (int64_t)ae - as + 1 >= w->minmatchlen) {
                if (w->x != NULL)
                    emit(w, as, ae, bs, be);
                kept++;
            }
            as = w->alen;
        }
    }
    return kept;
}

static void lcs_fill(struct lcs_walk *w, uint32_t *dp)
{
    size_t row = (size_t)w->blen + 1;

    for (uint32_t i = 0; i <= w->alen; i++) {
        for (uint32_t j = 0; j <= w->blen; j++) {
            uint32_t *c = &dp[j + i * row];

            if (i == 0 || j == 0)
                *c = 0;
            else if (w->a[i - 1] == w->b[j - 1])
                *c = c[-(ptrdiff_t)row - 1] + 1;
            else
                *c = c[-(ptrdiff_t)row] > c[-1] ? c[-(ptrdiff_t)row] : c[-1];
        }
    }
}

static void lcs_reply(goblin__exec *x, struct lcs_walk *w,
                      const struct goblin__lcs_options *o)
{
    uint32_t len = DP(w, w->alen, w->blen);
    struct goblin_slice sub = {NULL, 0};
    size_t n;

    if (o->idx) {
        n = lcs_walk(w);
        w->x = x;
        goblin__reply_map(x, 2);
        goblin__reply_cstr(x, "matches");
        goblin__reply_array(x, n);
        lcs_walk(w);
        goblin__reply_cstr(x, "len");
        goblin__reply_int(x, len);
    } else if (o->len) {
        goblin__reply_int(x, len);
    } else {
        if (len != 0) {
            w->result = goblin__alloc(x->st, len);
            if (w->result == NULL) {
                goblin__reply_code(x, GOBLIN_ENOMEM);
                return;
            }
            lcs_walk(w);
        }
        sub.ptr = w->result != NULL ? (const char *)w->result : "";
        sub.len = len;
        goblin__reply_slice(x, sub);
        if (w->result != NULL)
            goblin__free(x->st, w->result, len);
    }
}

void goblin__exec_lcs(goblin__exec *x, struct goblin_slice key1,
                      struct goblin_slice key2,
                      const struct goblin__lcs_options *o)
{
    struct goblin_slice a = {"", 0}, b = {"", 0};
    struct lcs_walk w = {0};
    uint64_t cells, bytes;
    uint32_t *dp;

    if (goblin_str_get(x->st, key1, &a) < 0 ||
        goblin_str_get(x->st, key2, &b) < 0) {
        goblin__reply_error(x, ERR_LCS_TYPES);
        return;
    }
    if (o->idx && o->len) {
        goblin__reply_error(x, "ERR If you want both the length and "
                               "indexes, please just use IDX.");
        return;
    }
    if (a.len >= UINT32_MAX - 1 || b.len >= UINT32_MAX - 1) {
        goblin__reply_error(x, "ERR String too long for LCS");
        return;
    }
    cells = (uint64_t)(a.len + 1) * (b.len + 1);
    bytes = cells * sizeof(uint32_t);
    if (bytes > x->eng->proto_max_bulk_len) {
        goblin__reply_error(x, "ERR Insufficient memory, transient memory "
                               "for LCS exceeds proto-max-bulk-len");
        return;
    }
    if ((dp = goblin__alloc(x->st, (size_t)bytes)) == NULL) {
        goblin__reply_error(x, "ERR Insufficient memory, failed allocating "
                               "transient memory for LCS");
        return;
    }
    w.a = (const uint8_t *)a.ptr;
    w.b = (const uint8_t *)b.ptr;
    w.alen = (uint32_t)a.len;
    w.blen = (uint32_t)b.len;
    w.dp = dp;
    w.minmatchlen = o->minmatchlen;
    w.withmatchlen = o->withmatchlen;
    lcs_fill(&w, dp);
    lcs_reply(x, &w, o);
    goblin__free(x->st, dp, (size_t)bytes);
}

void goblin__cmd_lcs(goblin__exec *x, int argc,
                     const struct goblin_slice *argv)
{
    struct goblin__lcs_options o = {false, false, false, 0};
    struct goblin_slice v;
    int j;

    /* The keys' types are checked before the options are read. */
    if (goblin_str_get(x->st, argv[1], &v) < 0 ||
        goblin_str_get(x->st, argv[2], &v) < 0) {
        goblin__reply_error(x, ERR_LCS_TYPES);
        return;
    }
    goblin__reads_done(x);
    for (j = 3; j < argc; j++) {
        if (goblin__arg_is(argv[j], "idx")) {
            o.idx = true;
        } else if (goblin__arg_is(argv[j], "len")) {
            o.len = true;
        } else if (goblin__arg_is(argv[j], "withmatchlen")) {
            o.withmatchlen = true;
        } else if (goblin__arg_is(argv[j], "minmatchlen") && j + 1 < argc) {
            if (!goblin__arg_int64(x, argv[j + 1], &o.minmatchlen, NULL))
                return;
            if (o.minmatchlen < 0)
                o.minmatchlen = 0;
            j++;
        } else {
            goblin__reply_error(x, GOBLIN__ERR_SYNTAX);
            return;
        }
    }
    goblin__exec_lcs(x, argv[1], argv[2], &o);
}
