/* cmd_db.c - the numbered databases' commands: SELECT, MOVE, SWAPDB and
 * COPY, with Redis 7.0's texts (db.c keeps the databases).
 *
 * A database index is read as Redis's getIntFromObjectOrReply reads it:
 * not an integer is "ERR value is not an integer or out of range" (or
 * the command's own text), outside int "value is out of range, value
 * must between ..." (or that text); outside the configured count "ERR DB
 * index is out of range".
 */
#include <stdint.h>

#include "handlers.h"
#include "notify.h"
#include "respond.h"
#include "engine/block.h"
#include "engine/session.h"
#include "goblin/keys.h"
#include "store/keyspace.h"

#define ERR_DB_RANGE "ERR DB index is out of range"
#define ERR_SAME "ERR source and destination objects are the same"

/* Reads a database index (an int; range checked by the caller). */
static bool db_index(goblin__exec *x, struct goblin_slice arg,
                     const char *msg, int *out)
{
    int64_t v;

    if (!goblin__arg_int64(x, arg, &v, msg))
        return false;
    if (v < INT32_MIN || v > INT32_MAX) {
        goblin__reply_error(x, msg != NULL
                                   ? msg
                                   : "ERR value is out of range, value "
                                     "must between -2147483648 and "
                                     "2147483647");
        return false;
    }
    *out = (int)v;
    return true;
}

static bool db_valid(const goblin_engine *eng, int id)
{
    return id >= 0 && id < eng->ndbs;
}

void goblin__cmd_select(goblin__exec *x, int argc,
                        const struct goblin_slice *argv)
{
    int id;

    (void)argc;
    if (!db_index(x, argv[1], NULL, &id))
        return;
    if (!db_valid(x->eng, id)) {
        goblin__reply_error(x, ERR_DB_RANGE);
        return;
    }
    if (goblin__db_select(x->sess, id) != 0) {
        goblin__reply_code(x, GOBLIN_ENOMEM);
        return;
    }
    /* Inside EXEC the commands that follow run on the new database. */
    x->st = x->sess->db;
    goblin__reply_ok(x);
}

/* MOVE key db: 1 when moved, 0 when the key is absent here or present
 * there. */
void goblin__cmd_move(goblin__exec *x, int argc,
                      const struct goblin_slice *argv)
{
    goblin_store *dst;
    int id, rc;

    (void)argc;
    if (!db_index(x, argv[2], NULL, &id))
        return;
    if (!db_valid(x->eng, id)) {
        goblin__reply_error(x, ERR_DB_RANGE);
        return;
    }
    if (id == x->sess->dbid) {
        goblin__reply_error(x, ERR_SAME);
        return;
    }
    if ((dst = goblin__db_store(x->eng, id)) == NULL) {
        goblin__reply_code(x, GOBLIN_ENOMEM);
        return;
    }
    rc = goblin__key_copy(x->st, argv[1], dst, argv[1], false);
    if (rc == 1) {
        goblin_key_delete(x->st, argv[1]);
        goblin__notify(x, GOBLIN__NOTIFY_GENERIC, "move_from", argv[1]);
        goblin__notify_emit(x->eng, GOBLIN__NOTIFY_GENERIC, "move_to",
                            argv[1], id);
        goblin__reply_int(x, 1);
    } else if (rc == 0) {
        goblin__reply_int(x, 0);
    } else {
        goblin__reply_code(x, rc);
    }
}

static bool watched_key_exists(goblin_store *st, struct goblin_slice key)
{
    return goblin_key_exists(st, key) == 1;
}

void goblin__cmd_swapdb(goblin__exec *x, int argc,
                        const struct goblin_slice *argv)
{
    goblin_engine *eng = x->eng;
    int a, b;

    (void)argc;
    if (!db_index(x, argv[1], "ERR invalid first DB index", &a) ||
        !db_index(x, argv[2], "ERR invalid second DB index", &b))
        return;
    if (!db_valid(eng, a) || !db_valid(eng, b)) {
        goblin__reply_error(x, ERR_DB_RANGE);
        return;
    }
    /* Redis's touchAllWatchedKeysInDb both ways: a watched key changes
     * when it exists on either side; before and after the swap cover
     * both. */
    goblin__watch_touch_if(eng, a, watched_key_exists);
    goblin__watch_touch_if(eng, b, watched_key_exists);
    if (goblin__db_swap(eng, a, b) != 0) {
        goblin__reply_code(x, GOBLIN_ENOMEM);
        return;
    }
    goblin__watch_touch_if(eng, a, watched_key_exists);
    goblin__watch_touch_if(eng, b, watched_key_exists);
    goblin__block_touch_db(eng, a);
    goblin__block_touch_db(eng, b);
    x->st = x->sess->db;
    eng->st->dirty++;
    goblin__reply_ok(x);
}

/* COPY source destination [DB destination-db] [REPLACE] */
void goblin__cmd_copy(goblin__exec *x, int argc,
                      const struct goblin_slice *argv)
{
    goblin_store *dst = x->st;
    bool replace = false;
    int id = x->sess->dbid, rc;

    for (int j = 3; j < argc; j++) {
        if (goblin__arg_is(argv[j], "replace")) {
            replace = true;
        } else if (goblin__arg_is(argv[j], "db") && j + 1 < argc) {
            if (!db_index(x, argv[j + 1], NULL, &id))
                return;
            if (!db_valid(x->eng, id)) {
                goblin__reply_error(x, ERR_DB_RANGE);
                return;
            }
            j++;
        } else {
            goblin__reply_error(x, GOBLIN__ERR_SYNTAX);
            return;
        }
    }
    if (id == x->sess->dbid && argv[1].len == argv[2].len &&
        memcmp(argv[1].ptr, argv[2].ptr, argv[1].len) == 0) {
        goblin__reply_error(x, ERR_SAME);
        return;
    }
    if (id != x->sess->dbid && (dst = goblin__db_store(x->eng, id)) == NULL) {
        goblin__reply_code(x, GOBLIN_ENOMEM);
        return;
    }
    goblin__read_keys(x, &argv[1], 1); /* Redis's lookupKeyRead of it */
    rc = goblin__key_copy(x->st, argv[1], dst, argv[2], replace);
    if (rc == 1)
        goblin__notify_emit(x->eng, GOBLIN__NOTIFY_GENERIC, "copy_to",
                            argv[2], id);
    if (rc < 0)
        goblin__reply_code(x, rc);
    else
        goblin__reply_int(x, rc);
}
