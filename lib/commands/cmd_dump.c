/* cmd_dump.c - DUMP and RESTORE in Redis's format (an RDB version 10
 * value, its 2-byte version and CRC64 footer: snapshot/rdb_write.c), so
 * values move between redis-server and goblind both ways.
 *
 * RESTORE checks in Redis 7.0's order (cluster.c restoreCommand): the
 * options, BUSYKEY, the TTL, the footer ("DUMP payload version or
 * checksum are wrong"), then the value ("Bad data format"). The value is
 * loaded into a scratch store first, so a bad payload changes nothing,
 * then copied into the session's database.
 */
#include <stdint.h>

#include "engine/session.h"
#include "exec.h"
#include "goblin/buf.h"
#include "goblin/keys.h"
#include "handlers.h"
#include "respond.h"
#include "snapshot/snapshot_int.h"
#include "store/evict.h"
#include "store/keyspace.h"
#include "notify.h"

void goblin__cmd_dump(goblin__exec *x, int argc,
                      const struct goblin_slice *argv)
{
    struct goblin_buf b = {NULL, 0, 0, &x->eng->acct, false};
    uint32_t id;
    int rc;

    (void)argc;
    if (goblin__key_find(x->st, argv[1], &id) != 1) {
        goblin__reply_null(x);
        return;
    }
    rc = goblin__dump_payload(x->st, goblin__key_rec(x->st, id), &b);
    if (rc == 0)
        goblin__reply_bulk(x, b.data, b.len);
    else
        goblin__reply_code(x, GOBLIN_ENOMEM);
    goblin_buf_free(&b);
}

struct restore_opts {
    bool replace, absttl;
    int64_t idle, freq; /* -1: not given */
};

/* RESTORE's options after the payload, with Redis's texts. */
static bool restore_options(goblin__exec *x, int argc,
                            const struct goblin_slice *argv,
                            struct restore_opts *o)
{
    for (int j = 4; j < argc; j++) {
        bool more = j + 1 < argc;

        if (goblin__arg_is(argv[j], "replace")) {
            o->replace = true;
        } else if (goblin__arg_is(argv[j], "absttl")) {
            o->absttl = true;
        } else if (goblin__arg_is(argv[j], "idletime") && more &&
                   o->freq == -1) {
            if (!goblin__arg_int64(x, argv[++j], &o->idle, NULL))
                return false;
            if (o->idle < 0) {
                goblin__reply_error(x, "ERR Invalid IDLETIME value, must "
                                       "be >= 0");
                return false;
            }
        } else if (goblin__arg_is(argv[j], "freq") && more &&
                   o->idle == -1) {
            if (!goblin__arg_int64(x, argv[++j], &o->freq, NULL))
                return false;
            if (o->freq < 0 || o->freq > 255) {
                goblin__reply_error(x, "ERR Invalid FREQ value, must be "
                                       ">= 0 and <= 255");
                return false;
            }
        } else {
            goblin__reply_error(x, GOBLIN__ERR_SYNTAX);
            return false;
        }
    }
    return true;
}

/* Redis's objectSetLRUOrLFU: FREQ under an LFU policy, IDLETIME under
 * an LRU one; the other is ignored. */
static void set_stamp(goblin_store *st, struct goblin_slice key,
                      const struct restore_opts *o)
{
    uint32_t id;

    if ((o->idle < 0 && o->freq < 0) || goblin__key_find(st, key, &id) != 1)
        return;
    if (st->lfu && o->freq >= 0)
        goblin__key_set_stamp(st, id, (uint16_t)(st->lfu_minute << 8 |
                                                 (unsigned)o->freq));
    else if (!st->lfu && o->idle >= 0)
        goblin__key_set_stamp(st, id,
                              (uint16_t)(st->lru_clock -
                                         (o->idle > 32767 ? 32767
                                                          : o->idle)));
}

/* Copies the key loaded into scratch to the session's database with
 * deadline (-1: none). */
static int restore_into(goblin__exec *x, goblin_store *scratch,
                        struct goblin_slice key, int64_t deadline)
{
    uint32_t id;
    int rc = goblin__key_copy(scratch, key, x->st, key, true);

    if (rc < 0)
        return rc;
    if (deadline >= 0 && goblin__key_find(x->st, key, &id) == 1 &&
        goblin__key_set_deadline(x->st, id, deadline) != 0) {
        goblin_key_delete(x->st, key);
        return GOBLIN_ENOMEM;
    }
    return 0;
}

void goblin__cmd_restore(goblin__exec *x, int argc,
                         const struct goblin_slice *argv)
{
    struct restore_opts o = {false, false, -1, -1};
    struct goblin_slice key = argv[1], p = argv[3];
    goblin_store *scratch;
    int64_t ttl, now;
    int rc;

    if (!restore_options(x, argc, argv, &o))
        return;
    if (!o.replace && goblin_key_exists(x->st, key) == 1) {
        goblin__reply_error(x, "BUSYKEY Target key name already exists.");
        return;
    }
    if (!goblin__arg_int64(x, argv[2], &ttl, NULL))
        return;
    if (ttl < 0) {
        goblin__reply_error(x, "ERR Invalid TTL value, must be >= 0");
        return;
    }
    rc = goblin__dump_verify(x->st, p.ptr, p.len);
    if (rc == GOBLIN_ENOMEM) {
        goblin__reply_code(x, rc);
        return;
    }
    if (rc != 0) {
        goblin__reply_error(x, "ERR DUMP payload version or checksum are "
                               "wrong");
        return;
    }
    if (goblin__store_open_like(x->st, &scratch) != 0) {
        goblin__reply_code(x, GOBLIN_ENOMEM);
        return;
    }
    rc = goblin__dump_restore(scratch, key, p.ptr, p.len);
    if (rc == 0 && goblin_key_count(scratch) != 1)
        rc = GOBLIN_ESNAPFORMAT; /* an empty collection */
    if (rc != 0) {
        goblin_store_close(scratch);
        if (rc == GOBLIN_ENOMEM)
            goblin__reply_code(x, rc);
        else
            goblin__reply_error(x, "ERR Bad data format");
        return;
    }
    now = goblin__now_ms(x->st);
    if (ttl > 0 && !o.absttl)
        ttl = ttl > INT64_MAX - now ? INT64_MAX : ttl + now;
    if (ttl > 0 && ttl <= now) {
        /* Already expired: only the REPLACE's deletion happens. */
        if (o.replace)
            goblin_key_delete(x->st, key);
        goblin_store_close(scratch);
        goblin__reply_ok(x);
        return;
    }
    rc = restore_into(x, scratch, key, ttl > 0 ? ttl : -1);
    goblin_store_close(scratch);
    if (rc != 0) {
        goblin__reply_code(x, rc);
        return;
    }
    set_stamp(x->st, key, &o);
    goblin__notify(x, GOBLIN__NOTIFY_GENERIC, "restore", key);
    goblin__reply_ok(x);
}
