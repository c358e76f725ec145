/* goblin/snapshot.h - persistence: Goblin's own snapshot format (save and
 * load of a whole store), import of Redis dump.rdb files, and the save
 * bookkeeping a server keeps for SAVE, BGSAVE, LASTSAVE and INFO.
 *
 * The snapshot format (docs/snapshot.md has the byte layout): a header
 * (magic, version, creation time, counts), then the records in blocks of
 * at most 256 KiB, each with its own CRC32C, then a trailer whose CRC
 * chains every block's. A record is a key (type, deadline, key bytes) and
 * its value; a hash or sorted set is written whole, as length-prefixed
 * packed pairs.
 *
 * Loading goes into an EMPTY store and is all or nothing: on any error the
 * store is left empty again. Keys whose deadline has passed by the store's
 * clock are skipped. Loading reports no key changes and leaves the dirty
 * counter alone.
 *
 * Every call may be given a struct goblin_snapshot_result (or NULL): on
 * failure it names the problem and the byte offset of the file where it
 * was found; on success it counts what was saved or loaded.
 *
 * A store belongs to one thread at a time: save and load are calls on it
 * like any other. For a background save, fork and call
 * goblin_snapshot_save (or _save_fd) in the child: it only reads.
 */
#ifndef GOBLIN_SNAPSHOT_H
#define GOBLIN_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Error codes of persistence are GOBLIN_ESNAP* in goblin/common.h,
 * besides GOBLIN_ENOMEM, GOBLIN_EINVAL and the system's -errno values
 * (-ENOENT, -EACCES, -ENOSPC, -EIO, ...). */

/* The version of the snapshot format this library writes; it reads this
 * one and every one before it (version 2 added function libraries). */
#define GOBLIN_SNAPSHOT_VERSION 3

/* A short text for any code: persistence codes here, others through
 * goblin_strerror. Never NULL. */
GOBLIN_API const char *goblin_snapshot_strerror(int code);

/* What a call did, or why it failed. */
struct goblin_snapshot_result {
    int code;            /* the call's return */
    uint64_t offset;     /* failure: byte offset in the file of the problem */
    char message[256];   /* failure: what and where, in English; "" on 0 */
    uint32_t version;    /* the file's format (or RDB) version */
    int64_t created_ms;  /* snapshot header: creation time, Unix ms */
    uint64_t bytes;      /* file bytes written or read */
    uint64_t keys;       /* keys saved or loaded */
    uint64_t strings, hashes, zsets;
    uint64_t expires;    /* of the keys, those with a deadline */
    uint64_t expired;    /* keys skipped because their deadline passed */
};

/* Saves the whole store to path atomically: writes path.tmp-PID in the
 * same directory, fsyncs it, renames it over path and fsyncs the
 * directory, so at every instant path holds either the previous complete
 * file or the new one. Keys whose deadline passed are left out. Returns 0,
 * -errno of the failing system call (the temporary file is removed), or
 * GOBLIN_ENOMEM. Only reads the store: the dirty counter is the caller's
 * to reset (goblin_persist_end does it). */
GOBLIN_API int goblin_snapshot_save(goblin_store *st, const char *path,
                                    struct goblin_snapshot_result *res);

/* Saves count stores as the numbered databases 0..count-1 of one file
 * (an engine's databases: goblin_engine_snapshot_save). dbs[0] is
 * required; a NULL entry is a database holding nothing. The keys of a
 * database other than 0 follow a marker naming it (docs/snapshot.md).
 * Returns as goblin_snapshot_save. */
GOBLIN_API int goblin_snapshot_save_dbs(goblin_store *const *dbs,
                                        size_t count, const char *path,
                                        struct goblin_snapshot_result *res);

/* Writes the snapshot to fd from its current position, without fsync or
 * close (both the caller's). For pipes and sockets too. Returns as
 * goblin_snapshot_save. */
GOBLIN_API int goblin_snapshot_save_fd(goblin_store *st, int fd,
                                       struct goblin_snapshot_result *res);

/* Loads the snapshot at path into st, which must hold no key
 * (GOBLIN_EINVAL otherwise). Returns 0, or, with st left empty:
 * GOBLIN_ESNAPMAGIC, GOBLIN_ESNAPVERSION, GOBLIN_ESNAPTRUNC,
 * GOBLIN_ESNAPCRC, GOBLIN_ESNAPFORMAT, GOBLIN_ENOMEM, GOBLIN_ELIMIT (a
 * value past a Goblin limit) or -errno. */
GOBLIN_API int goblin_snapshot_load(goblin_store *st, const char *path,
                                    struct goblin_snapshot_result *res);

/* Loads a file of numbered databases into dbs[0..count-1], which must
 * all be empty (NULL entries are databases not given): the keys of
 * database i go to dbs[i]; keys of a database not given fail with
 * GOBLIN_ESNAPDB. All or nothing across every store. goblin_snapshot_load
 * is this with database 0 alone. */
GOBLIN_API int goblin_snapshot_load_dbs(goblin_store *const *dbs,
                                        size_t count, const char *path,
                                        struct goblin_snapshot_result *res);

/* As goblin_snapshot_load, from len bytes at data (borrowed for the call):
 * for snapshots received over a connection. */
GOBLIN_API int goblin_snapshot_load_mem(goblin_store *st, const void *data,
                                        size_t len,
                                        struct goblin_snapshot_result *res);

/* Checks the snapshot at path without loading it: header, every block's
 * checksum, the trailer, and that the records parse. alloc may be NULL
 * (libc). Returns 0 or an error as goblin_snapshot_load; res counts the
 * keys by type. */
GOBLIN_API int goblin_snapshot_verify(const char *path,
                                      const struct goblin_allocator *alloc,
                                      struct goblin_snapshot_result *res);

/* Options of goblin_rdb_import. */
#define GOBLIN_RDB_SKIP_OTHER_DBS 0x1 /* skip keys of databases other
                                         than 0 instead of failing */

/* Imports the Redis dump (RDB version 1 to 11; Redis 7.0 writes 10, 7.2
 * writes 11) at path into st, which must hold no key (GOBLIN_EINVAL).
 * Strings (raw, integer, LZF), hashes (hashtable, zipmap, ziplist,
 * listpack) and sorted sets (skiplist with binary or text scores,
 * ziplist, listpack) are loaded, with their deadlines; keys already
 * expired are skipped; aux fields, RESIZEDB, LRU/LFU hints and function
 * libraries are read and ignored (an engine's import loads the libraries:
 * goblin_engine_import_rdb). The CRC64 at the end is checked unless
 * the file has none (written with rdbchecksum no: all zero). All or
 * nothing; errors besides the snapshot ones:
 *  - GOBLIN_ESNAPTYPE: a list, set, stream or module value (the message
 *    names the type and the key);
 *  - GOBLIN_ESNAPDB: a key in a database other than 0, unless flags has
 *    GOBLIN_RDB_SKIP_OTHER_DBS (then res->expired does not count them and
 *    they are simply left out). */
GOBLIN_API int goblin_rdb_import(goblin_store *st, const char *path,
                                 unsigned flags,
                                 struct goblin_snapshot_result *res);

/* As goblin_rdb_import into the numbered databases dbs[0..count-1] (all
 * empty; NULL entries are databases not given): the keys after SELECTDB
 * n go to dbs[n]. A database not given is GOBLIN_ESNAPDB, or left out
 * with GOBLIN_RDB_SKIP_OTHER_DBS. */
GOBLIN_API int goblin_rdb_import_dbs(goblin_store *const *dbs, size_t count,
                                     const char *path, unsigned flags,
                                     struct goblin_snapshot_result *res);

/* As goblin_rdb_import, from len bytes at data (borrowed for the call). */
GOBLIN_API int goblin_rdb_import_mem(goblin_store *st, const void *data,
                                     size_t len, unsigned flags,
                                     struct goblin_snapshot_result *res);

/* ---- Redis RDB files written (rdb_save.c) ----
 *
 * A whole RDB file of version 10 (what Redis 7.0 writes and loads): the
 * aux fields, then for each database holding a live key SELECTDB and
 * RESIZEDB and its keys (EXPIRETIME_MS before those with a deadline;
 * keys whose deadline passed are left out), EOF and the CRC64 of
 * everything before it. Values use DUMP's encodings (strings, hashes,
 * sorted sets, lists as quicklist 2, sets as intset or plain). The file
 * is what redis-server 7.0 loads as its dump.rdb, what a full
 * resynchronisation sends a replica, and what goblin_rdb_import reads. */

/* The aux fields besides redis-ver, redis-bits, ctime and used-mem. */
struct goblin_rdb_aux {
    const char *repl_id;         /* 40 characters, or NULL: no repl-id,
                                    repl-stream-db or repl-offset */
    int64_t repl_offset;
    int repl_stream_db;
    bool aof_base;               /* aof-base 1 (an AOF's base file) */
};

/* Writes count stores as databases 0..count-1 (NULL entries hold
 * nothing) to fd from its position, without fsync or close. A
 * non-blocking descriptor (a socket) is waited on when full. aux may be
 * NULL. Returns 0, -errno of the write, GOBLIN_EINVAL (dbs[0] NULL) or
 * GOBLIN_ENOMEM; res (may be NULL) counts keys and bytes. Only reads the
 * stores (a forked child may call it). */
GOBLIN_API int goblin_rdb_write_fd(goblin_store *const *dbs, size_t count,
                                   int fd, const struct goblin_rdb_aux *aux,
                                   struct goblin_snapshot_result *res);

/* As goblin_rdb_write_fd to path, atomically as goblin_snapshot_save. */
GOBLIN_API int goblin_rdb_write(goblin_store *const *dbs, size_t count,
                                const char *path,
                                const struct goblin_rdb_aux *aux,
                                struct goblin_snapshot_result *res);

/* ---- save bookkeeping (SAVE, BGSAVE, LASTSAVE, INFO persistence) ---- */

/* A server keeps one of these per store. Plain data: read the fields. */
struct goblin_persist_info {
    int64_t last_save_ms;      /* LASTSAVE (in ms): last good save, or
                                  when the info was initialized */
    int last_status;           /* 0, or the code of the last failed save
                                  (rdb_last_bgsave_status:err) */
    int64_t last_duration_ms;  /* of the last save, good or not */
    uint64_t last_bytes;       /* size of the last good file */
    uint64_t saves;            /* good saves (rdb_saves) */
    int in_progress;           /* between begin and end */
    int64_t started_ms;        /* begin's time, while in progress */
    uint64_t dirty_at_start;   /* goblin_store_dirty at begin */
};

/* Starts the bookkeeping: last_save_ms is now, nothing in progress. */
GOBLIN_API void goblin_persist_init(struct goblin_persist_info *pi,
                                    const goblin_store *st);

/* Marks a save as started (call right before SAVE's goblin_snapshot_save
 * or before BGSAVE's fork): remembers the time and the dirty counter. */
GOBLIN_API void goblin_persist_begin(struct goblin_persist_info *pi,
                                     const goblin_store *st);

/* Ends the save begun last with its status (0, or an error code; a failed
 * child is GOBLIN_EIO-like: pass any negative code) and the file's size.
 * On success the dirty counter drops by the changes the file holds (those
 * made before begin; changes made during a background save still count),
 * last_save_ms becomes now and saves grows. */
GOBLIN_API void goblin_persist_end(struct goblin_persist_info *pi,
                                   goblin_store *st, int status,
                                   uint64_t bytes);

#ifdef __cplusplus
}
#endif

#endif
