/* cmd_debug.c - DEBUG, as far as Redis's own test suite and tools use it:
 * HELP, OBJECT, SLEEP, RELOAD [MERGE|NOFLUSH|NOSAVE], DIGEST,
 * DIGEST-VALUE, PROTOCOL, SET-ACTIVE-EXPIRE, CHANGE-REPL-ID, POPULATE,
 * ERROR, LOG, with Redis 7.0's replies and texts.
 *
 * enable-debug-command gates it as in Redis 7.0: "yes" for everyone,
 * "local" for connections over a Unix socket, a ring, in-process or from a
 * loopback address, "no" for nobody. Goblin's default is "local" (Redis's
 * is "no"), so the tools and test harnesses that run next to the server
 * work without a change to its settings.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "debug.h"
#include "engine/session.h"
#include "engine/settings.h"
#include "exec.h"
#include "goblin/keys.h"
#include "goblin/numtext.h"
#include "goblin/snapshot.h"
#include "handlers.h"
#include "repl/repl.h"
#include "respond.h"
#include "snapshot/snapshot_int.h"
#include "store/evict.h"
#include "store/keyspace.h"
#include "store/list.h"

#define ERR_NOT_ALLOWED                                                      \
    "ERR DEBUG command not allowed. If the enable-debug-command option is "  \
    "set to \"local\", you can run it from a local connection, otherwise "   \
    "you need to set this option in the configuration file, and then "       \
    "restart the server."

/* Redis's atoi of an argument: leading digits, anything else 0. */
static int arg_atoi(struct goblin_slice a)
{
    char buf[32];

    snprintf(buf, sizeof(buf), "%.*s", (int)(a.len < 31 ? a.len : 31),
             (const char *)a.ptr);
    return atoi(buf);
}

static bool is_local(const goblin_session *s)
{
    const char *p = s->peer != NULL ? s->peer : "";

    if (s->transport != GOBLIN_TRANSPORT_TCP)
        return true;
    return strncmp(p, "127.", 4) == 0 || strncmp(p, "::1", 3) == 0 ||
           strncmp(p, "[::1]", 5) == 0;
}

static bool allowed(goblin__exec *x)
{
    char v[16];

    if (goblin_engine_config_get(x->eng, "enable-debug-command", v,
                                 sizeof(v)) <= 0)
        return false;
    return strcmp(v, "yes") == 0 || (strcmp(v, "local") == 0 &&
                                     is_local(x->sess));
}

int64_t goblin__refcount(goblin__exec *x, uint32_t id)
{
    const uint8_t *rec = goblin__key_rec(x->st, id);
    char pol[32], mm[32];
    int64_t v;
    struct goblin_slice s;

    if (goblin__rec_type(rec) != GOBLIN_TYPE_STRING ||
        goblin__rec_str_enc(rec) != GOBLIN__STR_INT)
        return 1;
    s = goblin__rec_str(rec);
    if (goblin_int64_parse((const char *)s.ptr, s.len, &v) != 0 || v < 0 ||
        v >= 10000)
        return 1;
    /* Redis shares 0..9999 unless an LRU or LFU maxmemory policy needs
     * each key's own access stamp. */
    if (goblin_engine_config_get(x->eng, "maxmemory", mm, sizeof(mm)) > 0 &&
        strcmp(mm, "0") != 0 &&
        goblin_engine_config_get(x->eng, "maxmemory-policy", pol,
                                 sizeof(pol)) > 0 &&
        (strstr(pol, "lru") != NULL || strstr(pol, "lfu") != NULL))
        return 1;
    return 2147483647; /* OBJ_SHARED_REFCOUNT */
}

static void hex_reply(goblin__exec *x, const uint8_t d[20])
{
    char hex[41];

    for (int i = 0; i < 20; i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
    goblin__reply_status(x, hex);
}

static void help(goblin__exec *x)
{
    static const char *const lines[] = {
        "DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CHANGE-REPL-ID",
        "    Change the replication IDs of the instance.",
        "    Dangerous: should be used only for testing the replication "
        "subsystem.",
        "DIGEST",
        "    Output a hex signature representing the current DB content.",
        "DIGEST-VALUE <key> [<key> ...]",
        "    Output a hex signature of the values of all the specified keys.",
        "ERROR <string>",
        "    Return a Redis protocol error with <string> as message. Useful "
        "for clients",
        "    unit tests to simulate Redis errors.",
        "LOG <message>",
        "    Write <message> to the server log.",
        "OBJECT <key>",
        "    Show low level info about `key` and associated value.",
        "POPULATE <count> [<prefix>] [<size>]",
        "    Create <count> string keys named key:<num>. If <prefix> is "
        "specified then",
        "    it is used instead of the 'key' prefix. These are not "
        "propagated to",
        "    replicas. Cluster slots are not respected so keys not belonging "
        "to the",
        "    current node can be created in cluster mode.",
        "PROTOCOL <type>",
        "    Reply with a test value of the specified type. <type> can be: "
        "string,",
        "    integer, double, bignum, null, array, set, map, attrib, push, "
        "verbatim,",
        "    true, false.",
        "RELOAD [option ...]",
        "    Save the RDB on disk and reload it back to memory. Valid <option>"
        " values:",
        "    * MERGE: conflicting keys will be loaded from RDB.",
        "    * NOFLUSH: the existing database will not be removed before "
        "load, but",
        "      conflicting keys will generate an exception and kill the "
        "server.",
        "    * NOSAVE: the database will be loaded from an existing RDB file.",
        "    Examples:",
        "    * DEBUG RELOAD: verify that the server is able to persist, flush"
        " and reload",
        "      the database.",
        "    * DEBUG RELOAD NOSAVE: replace the current database with the "
        "contents of an",
        "      existing RDB file.",
        "    * DEBUG RELOAD NOSAVE NOFLUSH MERGE: add the contents of an "
        "existing RDB",
        "      file to the database.",
        "SET-ACTIVE-EXPIRE <0|1>",
        "    Setting it to 0 disables expiring keys in background when they "
        "are not",
        "    accessed (otherwise the Redis behavior). Setting it to 1 "
        "reenables back the",
        "    default.",
        "SLEEP <seconds>",
        "    Stop the server for <seconds>. Decimals allowed.",
        "HELP",
        "    Prints this help.",
    };

    goblin__reply_help(x, lines, sizeof(lines) / sizeof(*lines));
}

/* DEBUG OBJECT key: Redis's line; serializedlength is the RDB value's
 * length (without Redis's LZF compression), lru the access stamp. */
static void object(goblin__exec *x, struct goblin_slice key)
{
    struct goblin_buf b = {NULL, 0, 0, &x->eng->acct, false};
    const char *enc = "";
    char line[512], extra[160] = "";
    const uint8_t *rec;
    uint32_t id;

    if (goblin__key_find(x->st, key, &id) != 1) {
        goblin__reply_error(x, "ERR no such key");
        return;
    }
    goblin_key_encoding(x->st, key, &enc);
    rec = goblin__key_rec(x->st, id);
    if (goblin__rdb_write_value(rec, goblin__now_ms(x->st), &b) != 0) {
        goblin_buf_free(&b);
        goblin__reply_code(x, GOBLIN_ENOMEM);
        return;
    }
    if (goblin__rec_type(rec) == GOBLIN_TYPE_LIST) {
        const void *obj = goblin__rec_obj(rec);
        size_t n = goblin__list_obj_len(obj), nodes, bytes;

        goblin__rdb_list_shape(obj, &nodes, &bytes);
        snprintf(extra, sizeof(extra), " ql_nodes:%zu ql_avg_node:%.2f "
                 "ql_listpack_max:-2 ql_compressed:0 "
                 "ql_uncompressed_size:%zu", nodes,
                 (double)n / (double)nodes, bytes);
    }
    snprintf(line, sizeof(line), "Value at:%p refcount:%lld encoding:%s "
             "serializedlength:%zu lru:%u lru_seconds_idle:%llu%s",
             (const void *)rec, (long long)goblin__refcount(x, id), enc,
             b.len > 0 ? b.len - 1 : 0,
             (unsigned)((goblin__now_ms(x->st) / 1000 -
                         (int64_t)goblin__key_idle(x->st, id)) & 0xffffff),
             (unsigned long long)goblin__key_idle(x->st, id), extra);
    goblin_buf_free(&b);
    goblin__reply_status(x, line);
}

static void sleep_for(goblin__exec *x, struct goblin_slice arg)
{
    char buf[64];
    double s;
    long long us;
    struct timespec ts;

    snprintf(buf, sizeof(buf), "%.*s", (int)(arg.len < 63 ? arg.len : 63),
             (const char *)arg.ptr);
    s = strtod(buf, NULL); /* as Redis: anything else reads as 0 */
    us = (long long)(s * 1000000);
    if (us > 0) {
        ts.tv_sec = us / 1000000;
        ts.tv_nsec = (us % 1000000) * 1000;
        while (nanosleep(&ts, &ts) != 0)
            ;
    }
    goblin__reply_ok(x);
}

/* Loads the snapshot into scratch stores, then copies every key into
 * its database, replacing the one there (RELOAD ... MERGE). */
static int load_merge(goblin_engine *eng, struct goblin_snapshot_result *res)
{
    size_t n = (size_t)eng->ndbs, bytes = goblin__mul(n, sizeof(goblin_store *));
    goblin_store **a = goblin__alloc(eng->st, bytes);
    char path[4096];
    int rc = 0;

    if (a == NULL)
        return GOBLIN_ENOMEM;
    memset(a, 0, bytes);
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = goblin__store_open_like(eng->st, &a[i]);
    if (rc == 0)
        rc = goblin_engine_snapshot_path(eng, path, sizeof(path));
    if (rc == 0 && access(path, F_OK) == 0)
        rc = goblin_snapshot_load_dbs(a, n, path, res);
    for (size_t i = 0; i < n && rc >= 0; i++) {
        size_t keys = goblin_key_count(a[i]);
        goblin_store *dst = keys > 0 ? goblin__db_store(eng, (int)i) : NULL;

        if (keys > 0 && dst == NULL)
            rc = GOBLIN_ENOMEM;
        for (uint32_t id = 0; rc >= 0 && id < keys; id++) {
            struct goblin__rec r;

            goblin__rec_parse(goblin__key_rec(a[i], id), &r);
            rc = goblin__key_copy(a[i], (struct goblin_slice){r.key, r.klen},
                                  dst, (struct goblin_slice){r.key, r.klen},
                                  true);
        }
    }
    for (size_t i = 0; i < n; i++)
        if (a[i] != NULL)
            goblin_store_close(a[i]);
    goblin__free(eng->st, a, bytes);
    return rc < 0 ? rc : 0;
}

/* DEBUG RELOAD: save the snapshot (unless NOSAVE), empty every database
 * (unless NOFLUSH), load it back. With MERGE a loaded key replaces the
 * one in memory; without it, after NOFLUSH, a key in both fails the
 * load with an error (Redis stops the server there). */
static void reload(goblin__exec *x, int argc, const struct goblin_slice *argv)
{
    struct goblin_snapshot_result res;
    bool save = true, flush = true, merge = false;
    int rc;

    for (int i = 2; i < argc; i++) {
        if (goblin__arg_is(argv[i], "merge")) {
            merge = true;
        } else if (goblin__arg_is(argv[i], "noflush")) {
            flush = false;
        } else if (goblin__arg_is(argv[i], "nosave")) {
            save = false;
        } else {
            goblin__reply_error(x, "ERR DEBUG RELOAD only supports the "
                                   "MERGE, NOFLUSH and NOSAVE options.");
            return;
        }
    }
    if (save && goblin_engine_save(x->eng, &res) != 0) {
        goblin__reply_error(x, "ERR");
        return;
    }
    if (flush) {
        goblin__exec y = *x;

        y.sink = &x->sess->discard; /* the flush's OK is not the reply */
        goblin__exec_flush(&y, true);
    }
    rc = merge ? load_merge(x->eng, &res) : goblin_engine_load(x->eng, &res);
    x->st = x->sess->db;
    if (rc < 0) {
        goblin__reply_error(x, "ERR Error trying to load the RDB dump, "
                               "check server logs.");
        return;
    }
    goblin__reply_ok(x);
}

static void digest_value(goblin__exec *x, int argc,
                         const struct goblin_slice *argv)
{
    goblin__reply_array(x, (size_t)(argc - 2));
    for (int i = 2; i < argc; i++) {
        uint8_t d[20] = {0};
        uint32_t id;

        if (goblin__key_find(x->st, argv[i], &id) == 1)
            goblin__value_digest(x->st, id, d);
        hex_reply(x, d);
    }
}

/* DEBUG PROTOCOL: Redis's test values. The sink has no big-number or
 * attribute reply, so in RESP3 "bignum" comes as the bulk string RESP2
 * has and "attrib" without its attribute. */
static void protocol(goblin__exec *x, struct goblin_slice t)
{
    if (goblin__arg_is(t, "string")) {
        goblin__reply_cstr(x, "Hello World");
    } else if (goblin__arg_is(t, "integer")) {
        goblin__reply_int(x, 12345);
    } else if (goblin__arg_is(t, "double")) {
        goblin__reply_double(x, 3.141);
    } else if (goblin__arg_is(t, "bignum")) {
        goblin__reply_cstr(x, "1234567999999999999999999999999999999");
    } else if (goblin__arg_is(t, "null")) {
        goblin__reply_null(x);
    } else if (goblin__arg_is(t, "array") || goblin__arg_is(t, "set")) {
        if (goblin__arg_is(t, "set"))
            goblin__reply_set(x, 3);
        else
            goblin__reply_array(x, 3);
        for (int j = 0; j < 3; j++)
            goblin__reply_int(x, j);
    } else if (goblin__arg_is(t, "map")) {
        goblin__reply_map(x, 3);
        for (int j = 0; j < 3; j++) {
            goblin__reply_int(x, j);
            x->sink->ops->boolean(x->sink, j == 1);
        }
    } else if (goblin__arg_is(t, "attrib")) {
        goblin__reply_cstr(x, "Some real reply following the attribute");
    } else if (goblin__arg_is(t, "push")) {
        if (x->resp < 3) {
            goblin__reply_error(x, "ERR RESP2 is not supported by this "
                                   "command");
            return;
        }
        x->sink->ops->push(x->sink, 2);
        goblin__reply_cstr(x, "server-cpu-usage");
        goblin__reply_int(x, 42);
        goblin__reply_cstr(x, "Some real reply following the push reply");
    } else if (goblin__arg_is(t, "verbatim")) {
        goblin__reply_verbatim(x, "This is a verbatim\nstring", 25);
    } else if (goblin__arg_is(t, "true") || goblin__arg_is(t, "false")) {
        x->sink->ops->boolean(x->sink, goblin__arg_is(t, "true"));
    } else {
        goblin__reply_error(x, "ERR Wrong protocol type name. Please use one "
                               "of the following: string|integer|double|"
                               "bignum|null|array|set|map|attrib|push|"
                               "verbatim|true|false");
    }
}

/* DEBUG POPULATE count [prefix] [size]: string keys prefix:N holding
 * value:N (padded with zeros or cut to size); existing keys are kept. */
static void populate(goblin__exec *x, int argc,
                     const struct goblin_slice *argv)
{
    int64_t count, size = -1;
    struct goblin_slice prefix = {"key", 3};
    char key[256], val[64];

    if (!goblin__arg_int64(x, argv[2], &count, GOBLIN__ERR_POSITIVE))
        return;
    if (count < 0) {
        goblin__reply_error(x, GOBLIN__ERR_POSITIVE);
        return;
    }
    if (argc >= 4)
        prefix = argv[3];
    if (argc >= 5 && !goblin__arg_int64(x, argv[4], &size,
                                        GOBLIN__ERR_POSITIVE))
        return;
    if (size < -1 || (argc >= 5 && size < 0)) {
        goblin__reply_error(x, GOBLIN__ERR_POSITIVE);
        return;
    }
    if (prefix.len > 200) {
        goblin__reply_code(x, GOBLIN_ELIMIT);
        return;
    }
    for (int64_t j = 0; j < count; j++) {
        int kl = snprintf(key, sizeof(key), "%.*s:%lld", (int)prefix.len,
                          (const char *)prefix.ptr, (long long)j);
        int vl = snprintf(val, sizeof(val), "value:%lld", (long long)j);
        struct goblin_slice k = {key, (size_t)kl};
        int rc;

        if (goblin_key_exists(x->st, k) == 1)
            continue;
        if (size < 0) {
            rc = goblin_str_set(x->st, k, (struct goblin_slice){val,
                                                               (size_t)vl},
                                NULL, NULL);
        } else {
            char *buf = goblin__alloc(x->st, (size_t)size + 1);

            if (buf == NULL) {
                goblin__reply_code(x, GOBLIN_ENOMEM);
                return;
            }
            memset(buf, 0, (size_t)size + 1);
            memcpy(buf, val, (size_t)vl < (size_t)size ? (size_t)vl
                                                        : (size_t)size);
            rc = goblin_str_set(x->st, k, (struct goblin_slice){buf,
                                                               (size_t)size},
                                NULL, NULL);
            goblin__free(x->st, buf, (size_t)size + 1);
        }
        if (rc < 0) {
            goblin__reply_code(x, rc);
            return;
        }
    }
    goblin__reply_ok(x);
}

void goblin__cmd_debug(goblin__exec *x, int argc,
                       const struct goblin_slice *argv)
{
    struct goblin_slice sub = argv[1];
    uint8_t d[20];

    if (!allowed(x)) {
        goblin__reply_error(x, ERR_NOT_ALLOWED);
        return;
    }
    if (argc == 2 && goblin__arg_is(sub, "help")) {
        help(x);
    } else if (argc == 3 && goblin__arg_is(sub, "object")) {
        object(x, argv[2]);
    } else if (argc == 3 && goblin__arg_is(sub, "sleep")) {
        sleep_for(x, argv[2]);
    } else if (goblin__arg_is(sub, "reload")) {
        reload(x, argc, argv);
    } else if (argc == 2 && goblin__arg_is(sub, "digest")) {
        goblin__dataset_digest(x->eng, d);
        hex_reply(x, d);
    } else if (goblin__arg_is(sub, "digest-value")) {
        digest_value(x, argc, argv);
    } else if (argc == 3 && goblin__arg_is(sub, "protocol")) {
        protocol(x, argv[2]);
    } else if (argc == 3 && goblin__arg_is(sub, "set-active-expire")) {
        x->eng->active_expire_off = arg_atoi(argv[2]) == 0;
        goblin__reply_ok(x);
    } else if (argc == 2 && goblin__arg_is(sub, "change-repl-id")) {
        x->eng->replid_gen++;
        goblin__repl_change_id(x->eng);
        goblin__reply_ok(x);
    } else if (argc >= 3 && argc <= 5 && goblin__arg_is(sub, "populate")) {
        populate(x, argc, argv);
    } else if (argc == 3 && goblin__arg_is(sub, "error")) {
        /* Written as it is, not counted: Redis sends this reply raw, so
         * it is not in INFO errorstats nor a failed call. */
        x->sink->ops->error(x->sink, (const char *)argv[2].ptr, argv[2].len);
    } else if (argc == 3 && goblin__arg_is(sub, "log")) {
        if (x->eng->cfg.log != NULL) {
            char text[1024];

            snprintf(text, sizeof(text), "DEBUG LOG: %.*s",
                     (int)(argv[2].len < 1000 ? argv[2].len : 1000),
                     (const char *)argv[2].ptr);
            x->eng->cfg.log(x->eng->cfg.log_ctx, GOBLIN_LOG_WARNING, text);
        }
        goblin__reply_ok(x);
    } else {
        goblin__reply_errorf(x, "ERR unknown subcommand or wrong number of "
                             "arguments for '%.*s'. Try DEBUG HELP.",
                             goblin__cstr_len(sub) < 128 ? goblin__cstr_len(sub)
                                                         : 128,
                             (const char *)sub.ptr);
    }
}
