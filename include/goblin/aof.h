/* goblin/aof.h - the append-only file: the write stream (goblin/stream.h)
 * kept on disk in Redis 7's multi-part layout, so that a restart (of
 * goblind, an embedding program, or redis-server) finds every write.
 *
 * Layout, in DIR/appenddirname (Redis 7.0's aof.c):
 *   appendfilename.manifest       the list of parts, one line each:
 *     "file <name> seq <n> type b\n"   the base (one)
 *     "file <name> seq <n> type i\n"   incremental parts, in order
 *   appendfilename.<n>.base.aof   the data when the base was made, as
 *                                 commands (or .base.rdb from Redis)
 *   appendfilename.<n>.incr.aof   every write since, as the stream
 *
 * Durability (appendfsync): "always" writes and fsyncs each unit inside
 * the stream callback, so before the command's reply can leave; a server
 * never acknowledges a write that is not on disk. "everysec" writes units
 * as they come (buffered up to GOBLIN_AOF_BUFFER bytes or a cron tick)
 * and a thread fsyncs once a second; "no" leaves fsync to the kernel.
 *
 * Rewrite: goblin_aof_rewrite_start opens a new incremental part (new
 * writes go there from then on) and names a temporary base file; a
 * forked child (the server's) writes the data into it with
 * goblin_aof_write_base; goblin_aof_rewrite_done installs it as the new
 * base and drops the parts it replaces. Nothing blocks clients but the
 * fork itself.
 *
 * Threading: the engine's thread, except the fsync thread of everysec,
 * which only calls fdatasync on the current file.
 */
#ifndef GOBLIN_AOF_H
#define GOBLIN_AOF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "engine.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct goblin_aof goblin_aof;

typedef void goblin_aof_log_fn(void *ctx, enum goblin_log_level level,
                               const char *text);

/* The directory the AOF directory lives in ("dir"), and the log (NULL:
 * none). The other settings (appenddirname, appendfilename, appendfsync,
 * aof-load-truncated, auto-aof-rewrite-*) are the engine's. */
struct goblin_aof_config {
    const char *dir;
    goblin_aof_log_fn *log;
    void *log_ctx;
};

/* Loads the AOF of the engine's settings under cfg->dir into the engine
 * (its databases empty). Returns 1 when it loaded one, 0 when there is
 * no manifest, or a negative code with the reason in err: a bad manifest
 * (GOBLIN_EPROTO), a missing part (-ENOENT), a torn last record with
 * aof-load-truncated no, or a record that is not RESP (GOBLIN_EPROTO).
 * A torn last record with aof-load-truncated yes is cut off the file,
 * logged at WARNING, and the load succeeds. */
GOBLIN_API int goblin_aof_load(goblin_engine *eng,
                               const struct goblin_aof_config *cfg,
                               char *err, size_t cap);

/* Starts appending: opens (creating the directory, and a base of the
 * current data and a manifest when there is none) the last incremental
 * part and registers on the stream. Returns 0 or a negative code with
 * the reason in err. cfg is copied. */
GOBLIN_API int goblin_aof_open(goblin_engine *eng,
                               const struct goblin_aof_config *cfg,
                               goblin_aof **out, char *err, size_t cap);

/* Writes and fsyncs what is buffered, stops the fsync thread, leaves the
 * stream and frees aof. NULL is a no-op. */
GOBLIN_API void goblin_aof_close(goblin_aof *aof);

/* About ten times a second: writes what everysec buffered, notes write
 * errors. Returns true when an automatic rewrite is due
 * (auto-aof-rewrite-percentage and -min-size against the size after the
 * last rewrite), for the server to start one. */
GOBLIN_API bool goblin_aof_cron(goblin_aof *aof);

/* A rewrite's parent side, before the fork: flushes, opens the next
 * incremental part and writes the manifest naming it; the temporary base
 * path goes in path (cap bytes). Returns 0, GOBLIN_EBUSY during another
 * rewrite, or a negative code. */
GOBLIN_API int goblin_aof_rewrite_start(goblin_aof *aof, char *path,
                                        size_t cap);

/* In the child (or anywhere with a consistent view): writes every key of
 * every database of eng as commands into path, fsynced. 0 or -errno. */
GOBLIN_API int goblin_aof_write_base(goblin_engine *eng, const char *path);

/* The rewrite ended (ok: the child succeeded): installs the base and a
 * manifest of it and the current incremental part, and removes the parts
 * replaced; on failure removes the temporary file and keeps the history. */
GOBLIN_API void goblin_aof_rewrite_done(goblin_aof *aof, bool ok);

/* What INFO persistence shows. */
struct goblin_aof_info {
    bool rewrite_in_progress;
    bool rewrite_scheduled;
    bool last_rewrite_ok;
    bool last_write_ok;
    uint64_t rewrites;
    int64_t last_rewrite_time_sec; /* -1: none yet */
    uint64_t current_size, base_size;
    uint64_t buffer_length;
    uint64_t delayed_fsync;
};
GOBLIN_API void goblin_aof_info(const goblin_aof *aof,
                                struct goblin_aof_info *out);

/* The AOF the engine appends to (the last goblin_aof_open), or NULL. */
GOBLIN_API goblin_aof *goblin_engine_aof(const goblin_engine *eng);

/* ---- records (for tools and tests) ---- */

/* Parses one RESP array of bulk strings at p (len bytes) into at most
 * max slices of argv (views into p), *argc their number. Returns the
 * bytes it takes (> 0), 0 when the record is cut short (more bytes would
 * be needed), GOBLIN_EPROTO (not an array of bulk strings), or
 * GOBLIN_ELIMIT with *argc the number needed when it is above max. */
GOBLIN_API int64_t goblin_aof_record(const void *p, size_t len,
                                     struct goblin_slice *argv, int max,
                                     int *argc);

#ifdef __cplusplus
}
#endif

#endif
