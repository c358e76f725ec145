/* cmd_hll.c - HyperLogLog commands: PFADD, PFCOUNT, PFMERGE, PFDEBUG
 * (GETREG, DECODE, ENCODING, TODENSE) and PFSELFTEST, with Redis 7.0's
 * texts (hyperloglog.c). The values are Redis's own strings
 * (lib/store/hll.c); hll-sparse-max-bytes bounds a sparse one.
 *
 * Each command is an execution function (exec.h) and a RESP handler
 * that parses argv and calls it; SBE reaches the handlers through its
 * argv frame.
 */
#include <stdio.h>

#include "engine/session.h"
#include "exec.h"
#include "notify.h"
#include "respond.h"
#include "store/hll.h"

#define ERR_HLL_NOT "WRONGTYPE Key is not a valid HyperLogLog string value."
#define ERR_HLL_CORRUPT "INVALIDOBJ Corrupted HLL object detected"

/* Replies the error of a store result below 0. */
static void hll_error(goblin__exec *x, int rc)
{
    if (rc == GOBLIN__EHLL_NOT)
        goblin__reply_error(x, ERR_HLL_NOT);
    else if (rc == GOBLIN__EHLL_CORRUPT)
        goblin__reply_error(x, ERR_HLL_CORRUPT);
    else
        goblin__reply_code(x, rc);
}

void goblin__exec_pfadd(goblin__exec *x, struct goblin_slice key,
                        const struct goblin_slice *elems, size_t n)
{
    int rc = goblin__hll_add(x->st, key, elems, n,
                             (size_t)x->eng->hll_sparse_max_bytes);

    if (rc == 1)
        goblin__notify(x, GOBLIN__NOTIFY_STRING, "pfadd", key);
    if (rc < 0)
        hll_error(x, rc);
    else
        goblin__reply_int(x, rc);
}

void goblin__cmd_pfadd(goblin__exec *x, int argc,
                       const struct goblin_slice *argv)
{
    goblin__exec_pfadd(x, argv[1], argv + 2, (size_t)argc - 2);
}

void goblin__exec_pfcount(goblin__exec *x, const struct goblin_slice *keys,
                          size_t n)
{
    uint64_t card = 0;
    int rc = goblin__hll_count(x->st, keys, n, &card);

    if (rc < 0)
        hll_error(x, rc);
    else
        goblin__reply_int(x, (int64_t)card);
}

void goblin__cmd_pfcount(goblin__exec *x, int argc,
                         const struct goblin_slice *argv)
{
    goblin__exec_pfcount(x, argv + 1, (size_t)argc - 1);
}

void goblin__exec_pfmerge(goblin__exec *x, struct goblin_slice dst,
                          const struct goblin_slice *keys, size_t n)
{
    int rc;

    /* Redis reads the destination and each source first. */
    goblin__read_keys(x, keys, n);
    rc = goblin__hll_merge(x->st, dst, keys, n,
                           (size_t)x->eng->hll_sparse_max_bytes);

    if (rc >= 0)
        goblin__notify(x, GOBLIN__NOTIFY_STRING, "pfadd", dst);
    if (rc < 0)
        hll_error(x, rc);
    else
        goblin__reply_ok(x);
}

void goblin__cmd_pfmerge(goblin__exec *x, int argc,
                         const struct goblin_slice *argv)
{
    /* The destination is merged too: argv[1] is the first input. */
    goblin__exec_pfmerge(x, argv[1], argv + 1, (size_t)argc - 1);
}

/* PFDEBUG DECODE's text of a sparse HLL: "z:N", "Z:N", "v:V,N" runs. */
static void pfdebug_decode(goblin__exec *x, struct goblin_slice v)
{
    const uint8_t *p = (const uint8_t *)v.ptr + GOBLIN__HLL_HDR;
    const uint8_t *end = (const uint8_t *)v.ptr + v.len;
    size_t cap = (v.len - GOBLIN__HLL_HDR) * 12 + 1, n = 0;
    char *out;

    if (((const uint8_t *)v.ptr)[4] != 1) {
        goblin__reply_error(x, "ERR HLL encoding is not sparse");
        return;
    }
    if ((out = goblin__alloc(x->st, cap)) == NULL) {
        goblin__reply_code(x, GOBLIN_ENOMEM);
        return;
    }
    while (p < end) {
        if ((*p & 0xc0) == 0) {
            n += (size_t)snprintf(out + n, cap - n, "z:%d ", (*p & 0x3f) + 1);
            p++;
        } else if ((*p & 0xc0) == 0x40) {
            int len = (((*p & 0x3f) << 8) | (p + 1 < end ? p[1] : 0)) + 1;

            n += (size_t)snprintf(out + n, cap - n, "Z:%d ", len);
            p += 2;
        } else {
            n += (size_t)snprintf(out + n, cap - n, "v:%d,%d ",
                                  ((*p >> 2) & 0x1f) + 1, (*p & 3) + 1);
            p++;
        }
    }
    goblin__reply_bulk(x, out, n > 0 ? n - 1 : 0); /* sdstrim's space */
    goblin__free(x->st, out, cap);
}

static void pfdebug_getreg(goblin__exec *x, struct goblin_slice key)
{
    uint8_t *regs = goblin__scratch_bytes(x->sess, GOBLIN__HLL_REGISTERS);
    int rc;

    if (regs == NULL) {
        goblin__reply_code(x, GOBLIN_ENOMEM);
        return;
    }
    if ((rc = goblin__hll_todense(x->st, key, regs)) < 0) {
        hll_error(x, rc);
        return;
    }
    goblin__reply_array(x, GOBLIN__HLL_REGISTERS);
    for (size_t i = 0; i < GOBLIN__HLL_REGISTERS; i++)
        goblin__reply_int(x, regs[i]);
}

void goblin__cmd_pfdebug(goblin__exec *x, int argc,
                         const struct goblin_slice *argv)
{
    struct goblin_slice v, sub = argv[1];
    int rc = goblin__hll_debug_view(x->st, argv[2], &v);
    int sl = goblin__cstr_len(sub);

    if (rc == 0) {
        goblin__reply_error(x, "ERR The specified key does not exist");
        return;
    }
    if (rc < 0) {
        hll_error(x, rc);
        return;
    }
    if (!goblin__arg_is(sub, "getreg") && !goblin__arg_is(sub, "decode") &&
        !goblin__arg_is(sub, "encoding") && !goblin__arg_is(sub, "todense")) {
        goblin__reply_errorf(x, "ERR Unknown PFDEBUG subcommand '%.*s'", sl,
                             (const char *)sub.ptr);
        return;
    }
    if (argc != 3) {
        goblin__reply_errorf(x, "ERR Wrong number of arguments for the '%.*s' "
                                "subcommand", sl, (const char *)sub.ptr);
        return;
    }
    if (goblin__arg_is(sub, "getreg")) {
        pfdebug_getreg(x, argv[2]);
    } else if (goblin__arg_is(sub, "decode")) {
        pfdebug_decode(x, v);
    } else if (goblin__arg_is(sub, "encoding")) {
        goblin__reply_status(x, ((const uint8_t *)v.ptr)[4] == 0 ? "dense"
                                                                 : "sparse");
    } else if ((rc = goblin__hll_todense(x->st, argv[2], NULL)) < 0) {
        hll_error(x, rc);
    } else {
        goblin__reply_int(x, rc);
    }
}

void goblin__cmd_pfselftest(goblin__exec *x, int argc,
                            const struct goblin_slice *argv)
{
    const char *err = goblin__hll_selftest(x->st);

    (void)argc;
    (void)argv;
    if (err != NULL)
        goblin__reply_error(x, err);
    else
        goblin__reply_ok(x);
}
