/* goblin/engine.h - the command layer a server drives: an engine (one per
 * store: settings, the client registry, statistics, the WATCH table) and
 * sessions (one per client connection: protocol, parser, RESP version,
 * authentication, name, MULTI queue).
 *
 * A server's whole job is: open a store, open an engine on it, and for each
 * connection open a session, read bytes into goblin_session_input_space(),
 * hand them over with goblin_session_input_commit(), write out what
 * goblin_session_output() shows, and call goblin_engine_cron() about ten
 * times a second.
 *
 * Protocol selection: a session starts undecided. If its first eight bytes
 * are the SBE magic "GOBLINS!" it speaks SBE for its whole life; the moment
 * the bytes differ from the magic it speaks RESP, starting as RESP2 (HELLO 3
 * switches it to RESP3). A "PING\r\n" is therefore answered at once.
 *
 * WATCH: the engine installs its own key_changed hook in the store when it
 * opens (chaining to any hook the store was configured with, which is still
 * called first) and restores the original hook when it closes. The server
 * has nothing to wire up; it must only not open two engines on one store.
 *
 * Threading: an engine and all of its sessions belong to one thread at a
 * time, together with the store they borrow. A server that calls in from
 * several threads must hold one lock around every call on the engine or
 * any of its sessions (and never across I/O). Callbacks run on the calling
 * thread, inside that call. One guarantee lets a server write replies
 * without the lock: the bytes goblin_session_output() shows change only
 * through calls on that same session (feeding it, consuming its output,
 * closing it), never through calls on other sessions or the engine; so a
 * server may drop the lock, write them out, and take it again to consume
 * what was written, provided no other call on that session runs meanwhile.
 */
#ifndef GOBLIN_ENGINE_H
#define GOBLIN_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* goblin_session_input_commit returns GOBLIN_ECONNABORTED (goblin/
 * common.h) when the session ended normally (QUIT, CLIENT KILL). */

typedef struct goblin_engine goblin_engine;
typedef struct goblin_session goblin_session;

/* Log levels, as Redis's loglevel setting names them. */
enum goblin_log_level {
    GOBLIN_LOG_DEBUG = 0,
    GOBLIN_LOG_VERBOSE = 1,
    GOBLIN_LOG_NOTICE = 2,
    GOBLIN_LOG_WARNING = 3,
};

/* What INFO "server" shows about the hosting process. Strings are
 * borrowed until the next call of the callback that filled them; a NULL
 * string or zero number shows as empty or 0. */
struct goblin_server_info {
    int64_t pid;             /* process_id */
    int tcp_port;            /* tcp_port; 0 when not listening on TCP */
    const char *executable;  /* executable: absolute path of the binary */
    const char *config_file; /* config_file: "" when none */
    const char *run_id;      /* run_id: 40 hex characters, or NULL */
    int64_t start_ms;        /* start time in store clock ms; 0 = engine open */
};

/* A setting seen by CONFIG GET and changed by CONFIG SET.
 *
 * name is lower case ("maxclients"); CONFIG GET matches it with Redis's
 * glob rules, case-insensitively. alias, if not NULL, is a second name
 * that CONFIG GET with an exact (non-glob) pattern also finds.
 *
 * get writes the current value as text into buf (cap bytes, no NUL needed)
 * and returns its length, which may not exceed cap.
 *
 * set, which is NULL for a read-only setting, parses value and applies it.
 * It returns 0, or a negative GOBLIN_E* code with *why set to a static text
 * such as "argument couldn't be parsed into an integer" that CONFIG SET
 * shows as "ERR CONFIG SET failed (possibly related to argument 'name') -
 * <why>". A failed set must change nothing.
 *
 * The struct and both strings are copied by goblin_engine_setting_add;
 * ctx is borrowed until the engine is closed. */
#define GOBLIN_SETTING_VALUE_MAX 512
struct goblin_setting {
    const char *name;
    const char *alias;
    int (*get)(void *ctx, char *buf, size_t cap);
    int (*set)(void *ctx, struct goblin_slice value, const char **why);
    void *ctx;
};

/* Engine configuration. A zeroed field means its default; the struct grows
 * only at the end. */
struct goblin_engine_config {
    goblin_store *store; /* borrowed; required; must outlive the engine */

    /* Where the engine logs (client kills, protocol errors at DEBUG, ...).
     * NULL discards. text is borrowed for the call and has no newline. */
    void (*log)(void *ctx, enum goblin_log_level level, const char *text);
    void *log_ctx;

    /* Fills *out for INFO "server". NULL shows defaults. */
    void (*server_info)(void *ctx, struct goblin_server_info *out);
    void *server_info_ctx;

    /* Called when a session other than the one executing needs its
     * server: it must be closed (CLIENT KILL: the server should look at
     * goblin_session_should_close(), flush what output it can and close
     * it), or it was blocked (BLPOP, BZPOPMIN, ...) and has been served,
     * timed out or unblocked (the server calls goblin_session_resume() and
     * sends the output). It may come from any thread that holds the
     * server's lock. user is the session's goblin_session_info.user; a
     * session with its own hook (goblin_session_set_wake) calls that
     * instead. NULL: the server polls after each event. */
    void (*session_wake)(void *ctx, void *user);
    void *session_wake_ctx;

    /* Initial values of the engine's own settings; CONFIG SET changes them
     * later. requirepass: NULL or "" = no password (copied). */
    const char *requirepass;
    uint64_t proto_max_bulk_len;       /* default 512 MiB */
    uint64_t client_query_buffer_limit; /* default 1 GiB */
    int hz;                            /* cron calls per second; default 10 */

    /* Monotonic clock in nanoseconds for command timing and idle times.
     * Default: CLOCK_MONOTONIC. Tests may set their own. */
    uint64_t (*now_ns)(void *ctx);
    void *now_ns_ctx;

    /* Background saves (BGSAVE, BGSAVE SCHEDULE and the save policies of
     * the "save" setting). bgsave starts saving the store to path without
     * blocking the caller and returns 0, or a negative code if it could
     * not start. goblind forks: the child calls goblin_snapshot_save(store,
     * path) and _exit()s, the parent keeps serving. It is called inside a
     * command or goblin_engine_cron, so a server that holds a lock around
     * engine calls forks with it held and the child sees a consistent
     * store. When the save ends the server calls goblin_engine_bgsave_done.
     * NULL: BGSAVE answers an error and the policies do nothing (the
     * library itself never forks); SAVE works either way. */
    int (*bgsave)(void *ctx, const char *path);
    void *bgsave_ctx;
    /* Stops the running background save (SHUTDOWN, before its own final
     * save, so an older file cannot land after it) and reports it with
     * goblin_engine_bgsave_done. NULL: the save is left to finish. */
    void (*bgsave_kill)(void *ctx);

    /* SHUTDOWN: called once the final save (if any) is done; the server
     * stops serving and exits. The session that sent SHUTDOWN gets no
     * reply and is marked to close. NULL: SHUTDOWN answers an error. */
    void (*shutdown)(void *ctx);
    void *shutdown_ctx;

    /* BGREWRITEAOF and the automatic rewrite (goblin/aof.h): the server
     * starts one on the engine's AOF, in a child (goblin_aof_rewrite_start,
     * fork, goblin_aof_write_base in the child, goblin_aof_rewrite_done
     * when it ended). Returns 0, GOBLIN_EBUSY (another child runs: the
     * rewrite is retried by cron), or a negative code. NULL: the engine
     * rewrites in the calling thread, blocking it. */
    int (*aof_rewrite)(void *ctx);
    void *aof_rewrite_ctx;

    /* A full sync for replicas (goblin/repl.h): the server forks, the
     * child calls goblin_repl_sync_child and _exit()s, and once reaped
     * the server calls goblin_repl_sync_done. Returns 0 or a negative
     * code. NULL: PSYNC and SYNC answer an error. */
    int (*repl_fork)(void *ctx);
    void *repl_fork_ctx;
};

/* Opens an engine over cfg->store into *out and installs the engine's
 * key_changed hook in the store (see the top of this file). Returns 0,
 * GOBLIN_EINVAL (no store) or GOBLIN_ENOMEM. cfg is copied. */
GOBLIN_API int goblin_engine_open_sized(
    const struct goblin_engine_config *cfg, size_t cfg_size,
    goblin_engine **out);
static inline int goblin_engine_open(
    const struct goblin_engine_config *cfg, goblin_engine **out)
{
    return goblin_engine_open_sized(cfg, sizeof(*cfg), out);
}

/* Closes every session still open, restores the store's own key_changed
 * hook and frees the engine. The store stays open. NULL is a no-op. */
GOBLIN_API void goblin_engine_close(goblin_engine *eng);

/* Periodic work: one bounded step of active expiry (a few milliseconds at
 * most), statistics such as instantaneous ops/sec. Call it hz times per
 * second (CONFIG GET hz; default 10). */
GOBLIN_API void goblin_engine_cron(goblin_engine *eng);

/* Registers a setting for CONFIG GET/SET (see struct goblin_setting).
 * Returns 0, GOBLIN_EINVAL (no name or get, or the name is already
 * registered) or GOBLIN_ENOMEM. The engine registers its own settings
 * (requirepass, proto-max-bulk-len, client-query-buffer-limit,
 * client-output-buffer-limit, hz, databases, and the persistence
 * settings save, dir and dbfilename) at open, and a read-only placeholder
 * that a server registering the same name replaces: "appendonly" ("no"),
 * which clients such as redis-benchmark read. */
GOBLIN_API int goblin_engine_setting_add(goblin_engine *eng,
                                         const struct goblin_setting *s);

/* ---- settings: the config file and the command line (docs/config.md) ----
 *
 * Every Redis 7.0 directive is known to the engine, with its type, range
 * and default; the ones that concern the hosting process (port, bind,
 * unixsocket, daemonize, pidfile, logfile, maxclients, timeout, ...) are
 * kept by the engine and read by the server with goblin_engine_config_get.
 */

/* What a server hooks into loading and CONFIG SET.
 *
 * directive, if not NULL, is offered each directive the engine does not
 * know (argv[0] its name): it returns 0 when it took it, 1 when it does
 * not know it either, or -1 with *why a static text.
 *
 * changed, if not NULL, is called after a setting the server reads (one
 * whose docs/config.md entry says "server") has a new value, from the
 * config file, the command line or CONFIG SET; name is its Redis name.
 * It returns 0, or nonzero with *why a text to refuse the value (CONFIG
 * SET then puts the old value back and answers the error). */
struct goblin_config_hooks {
    int (*directive)(void *ctx, int argc, const char *const *argv,
                     const char **why);
    int (*changed)(void *ctx, const char *name, const char **why);
    void *ctx;
};

/* Installs hooks (copied); NULL removes them. */
GOBLIN_API void goblin_engine_config_hooks(goblin_engine *eng,
                                           const struct goblin_config_hooks
                                               *hooks);

/* Reads a config file in Redis's syntax (one directive per line, words
 * split and quoted as Redis does, '#' comments, "include PATH", repeated
 * "save" lines adding up); path "-" reads standard input. Immutable
 * settings may be set. On the first bad line it stops and writes Redis's
 * report into err (cap bytes): "*** FATAL CONFIG FILE ERROR (...) ***",
 * the file and line, the line, the reason; then it returns GOBLIN_EINVAL.
 * Directives before the bad line stay applied. */
GOBLIN_API int goblin_engine_config_load(goblin_engine *eng, const char *path,
                                         char *err, size_t cap);

/* Applies a command line as redis-server reads one: argv[0] is the program;
 * a first argument not starting with "--" is a config file (or "-" for
 * standard input), read first; then each "--name word..." is the directive
 * "name word..." ("--save '3600 1'" is "save 3600 1"). Errors as
 * goblin_engine_config_load's. */
GOBLIN_API int goblin_engine_config_args(goblin_engine *eng, int argc,
                                         char *const *argv, char *err,
                                         size_t cap);

/* The absolute path of the config file read at start, or NULL. */
GOBLIN_API const char *goblin_engine_config_file(const goblin_engine *eng);

/* A setting's current value as CONFIG GET shows it, NUL-terminated in buf
 * (cap bytes). Returns its length, or GOBLIN_EINVAL for an unknown name or
 * GOBLIN_ERANGE when it does not fit. */
GOBLIN_API int goblin_engine_config_get(const goblin_engine *eng,
                                        const char *name, char *buf,
                                        size_t cap);

/* A numeric, boolean (1 or 0) or enum (index in Redis's order) setting's
 * value; dflt when name is unknown or not a number. */
GOBLIN_API int64_t goblin_engine_config_int(const goblin_engine *eng,
                                            const char *name, int64_t dflt);

/* Sets one setting as CONFIG SET does (immutable ones refused), but as a
 * server's own default: CONFIG REWRITE does not write it unless it is in
 * the file or changed later. Returns 0, or GOBLIN_EINVAL with Redis's
 * reason in err. */
GOBLIN_API int goblin_engine_config_set(goblin_engine *eng, const char *name,
                                        const char *value, char *err,
                                        size_t cap);

/* Describes the i-th directive of the table (no engine needed), for a
 * server's --help: 0, or GOBLIN_ERANGE past the end. Strings are static. */
struct goblin_setting_info {
    const char *name;
    const char *alias;   /* its old Redis name, or NULL */
    const char *type;    /* "bool", "integer", "memory", "octal", "enum",
                          * "string" or "special" */
    const char *choices; /* an enum's values "a|b|c", else NULL */
    const char *def;     /* the default */
    bool immutable;      /* only from the config file or command line */
    bool acts;           /* Goblin acts on it (else kept and shown) */
    bool goblin;         /* Goblin's own, not Redis's */
};
GOBLIN_API int goblin_setting_info(size_t i, struct goblin_setting_info *out);

/* Writes one line per directive Goblin acts on to f, with its type, its
 * current value (the default, before the config is read) and its
 * choices: the body of a server's --help. */
GOBLIN_API void goblin_engine_config_usage(const goblin_engine *eng, FILE *f);

/* Names the ACL file (Redis's aclfile directive): loads it at once,
 * replacing every user, and ACL LOAD and ACL SAVE use it from then on.
 * The file holds "user NAME rule..." lines (docs/security.md). Returns 0,
 * or GOBLIN_EINVAL with Redis's text ("ERR <file>:<line>: ...", or the
 * open error) in err[0..errcap) when the file cannot be read or a line is
 * bad (then nothing changes), or GOBLIN_ENOMEM. path is copied. */
GOBLIN_API int goblin_engine_acl_file(goblin_engine *eng, const char *path,
                                      char *err, size_t errcap);

/* True while the default user has no password (nopass): a server in
 * protected mode then refuses clients that do not connect over loopback
 * or a Unix socket, as Redis does. */
GOBLIN_API bool goblin_engine_default_user_nopass(const goblin_engine *eng);

/* ---- persistence (docs/snapshot.md, "Snapshots in the engine") ---- */

struct goblin_snapshot_result;

/* The snapshot file, dir/dbfilename from the settings "dir" (default:
 * the working directory) and "dbfilename" (default "dump.goblin"), into
 * buf. Returns 0, or GOBLIN_EINVAL if it does not fit in cap bytes. */
GOBLIN_API int goblin_engine_snapshot_path(const goblin_engine *eng,
                                           char *buf, size_t cap);

/* The files below carry the engine's function libraries too
 * (goblin_engine_function_libs, goblin/script.h): the writers put each
 * library's code first, and a load replaces the libraries with the file's
 * (all or nothing, with the keys). */

/* Loads the snapshot file into the store, which must be empty: call it
 * after the settings are applied and before serving. Returns 1 when a
 * file was loaded, 0 when there is none, or the goblin_snapshot_load error
 * (res, which is required, names the problem; the store stays empty and
 * the file is left alone). */
GOBLIN_API int goblin_engine_load(goblin_engine *eng,
                                  struct goblin_snapshot_result *res);

/* Saves synchronously to the snapshot file (what SAVE does), with the
 * bookkeeping of INFO persistence and a log line. res may be NULL.
 * Returns 0, GOBLIN_EBUSY while a background save runs, or the error of
 * goblin_snapshot_save. */
GOBLIN_API int goblin_engine_save(goblin_engine *eng,
                                  struct goblin_snapshot_result *res);

/* Writes every database's keys to path (goblin_snapshot_save_dbs), as
 * SAVE does, without the bookkeeping: what a forked child of BGSAVE calls
 * (it only reads). Returns as goblin_snapshot_save. */
GOBLIN_API int goblin_engine_snapshot_save(goblin_engine *eng,
                                           const char *path,
                                           struct goblin_snapshot_result
                                               *res);

/* Writes every database to path as a Redis RDB file (goblin_rdb_write,
 * no replication aux fields): what redis-server 7.0 loads. res may be
 * NULL. */
struct goblin_rdb_aux;
GOBLIN_API int goblin_engine_export_rdb(goblin_engine *eng, const char *path,
                                        struct goblin_snapshot_result *res);

/* Writes every database as an RDB file to fd (goblin_rdb_write_fd),
 * with aux: a full resynchronisation's payload. Only reads. */
GOBLIN_API int goblin_engine_rdb_write_fd(goblin_engine *eng, int fd,
                                          const struct goblin_rdb_aux *aux,
                                          struct goblin_snapshot_result *res);

/* Imports a Redis dump into the engine's databases, all empty (each
 * SELECTDB's keys into that database), as goblin_rdb_import_dbs with
 * flags. res may be NULL. */
GOBLIN_API int goblin_engine_import_rdb(goblin_engine *eng, const char *path,
                                        unsigned flags,
                                        struct goblin_snapshot_result *res);

/* Reports the end of the background save started by the bgsave hook:
 * status 0 when the file is complete and in place, else any negative
 * code. */
GOBLIN_API void goblin_engine_bgsave_done(goblin_engine *eng, int status);

/* True between a successful bgsave hook call and goblin_engine_bgsave_done. */
GOBLIN_API bool goblin_engine_bgsave_running(const goblin_engine *eng);

/* True when the "save" setting holds at least one policy: a server saves
 * on SIGTERM then, as Redis does. */
GOBLIN_API bool goblin_engine_save_policy_set(const goblin_engine *eng);

/* ---- numbered databases (SELECT, SWAPDB) ----
 *
 * Each database is its own store: commands of a session run on the store
 * of the database it selected. Database 0 starts as the store the engine
 * was opened on; the others open on first use with its allocator, clock
 * and seed, and the engine closes them. SWAPDB exchanges the stores of
 * two databases, so a handle follows its data: ask again after a SWAPDB.
 * A handle is used under the same rule as the engine (one thread at a
 * time, the engine lock in goblind). */

/* The "databases" setting (default 16). */
GOBLIN_API int goblin_engine_db_count(const goblin_engine *eng);

/* The store of database index into *out (opening it if needed). Returns
 * 0, GOBLIN_ERANGE (index outside 0..count-1) or GOBLIN_ENOMEM. */
GOBLIN_API int goblin_engine_db(goblin_engine *eng, int index,
                                goblin_store **out);

/* Number of sessions open on the engine. */
GOBLIN_API size_t goblin_engine_session_count(const goblin_engine *eng);

/* How a session's bytes arrive; CLIENT LIST shows it. */
enum goblin_transport {
    GOBLIN_TRANSPORT_TCP = 0,
    GOBLIN_TRANSPORT_UNIX = 1,
    GOBLIN_TRANSPORT_RING = 2,
    GOBLIN_TRANSPORT_LOCAL = 3, /* in-process, no connection */
};

/* Describes a new connection. Strings are copied; NULL means "". */
struct goblin_session_info {
    enum goblin_transport transport;
    const char *peer;  /* "127.0.0.1:53412", "/tmp/goblin.sock:0", ring path */
    const char *local; /* "127.0.0.1:6379", the socket path, ring path */
    int fd;            /* shown as fd= in CLIENT LIST; -1 if none */
    void *user;        /* passed back to session_wake; not touched */
};

/* Opens a session on eng into *out, with a new client id. Returns 0,
 * GOBLIN_EINVAL or GOBLIN_ENOMEM. */
GOBLIN_API int goblin_session_open(goblin_engine *eng,
                                   const struct goblin_session_info *info,
                                   goblin_session **out);

/* Frees the session, its buffers and its WATCHes. NULL is a no-op. */
GOBLIN_API void goblin_session_close(goblin_session *s);

/* For a listener that does not speak SBE: the magic is just bytes of a
 * RESP command, and the session is RESP from the first byte. Call it
 * right after goblin_session_open(). Returns 0, or GOBLIN_EINVAL when
 * the session has already begun SBE (nothing changes then). */
GOBLIN_API int goblin_session_no_sbe(goblin_session *s);

/* Zero-copy input: returns where the server may write up to *room bytes
 * of newly received data, then calls goblin_session_input_commit() with
 * how many it wrote. The space grows as needed, capped by the query
 * buffer limit; at the limit it returns NULL with *room = 0 and the
 * session should be closed. The pointer is valid until the next call on
 * the session. */
GOBLIN_API void *goblin_session_input_space(goblin_session *s, size_t *room);

/* Takes n bytes just written at goblin_session_input_space(): detects the
 * protocol if still undecided, then parses and executes every complete
 * command, appending replies to the output. Returns 0, or a negative
 * GOBLIN_E* code when the session must be closed once its output has been
 * flushed: GOBLIN_ECONNABORTED (QUIT, CLIENT KILL), GOBLIN_EPROTO (a
 * protocol error, whose -ERR reply is already in the output),
 * GOBLIN_ELIMIT (the query buffer limit, or the output buffer limit: then
 * the output was dropped), GOBLIN_ENOMEM, GOBLIN_EINVAL (n larger than the
 * room given). After such a return further input is ignored and the same
 * code is returned again. */
GOBLIN_API int goblin_session_input_commit(goblin_session *s, size_t n);

/* Runs the requests in data[0..len), as goblin_session_input_space() and
 * goblin_session_input_commit() would with the same bytes: with nothing
 * buffered, whole requests are parsed and run where they lie, and only
 * what is left (a request not whole yet, or requests held behind a
 * blocked or paused command) is copied into the input space. data must
 * not change during the call (bytes another party may write, such as
 * shared memory, go through input_space and input_commit). Returns what
 * goblin_session_input_commit() returns. */
GOBLIN_API int goblin_session_feed(goblin_session *s, const void *data,
                                   size_t len);

/* The reply bytes not yet consumed, contiguous, into *len (0 when none).
 * Never NULL. Valid until the next call on the session. */
GOBLIN_API const void *goblin_session_output(goblin_session *s, size_t *len);

/* Marks the first n bytes of the output as sent. */
GOBLIN_API void goblin_session_output_consume(goblin_session *s, size_t n);

/* True when the session must be closed after its output is flushed: QUIT,
 * protocol error, CLIENT KILL (also from another session), or the output
 * buffer limit passed (then the output is dropped; close at once). */
GOBLIN_API bool goblin_session_should_close(const goblin_session *s);

/* Blocking commands (BLPOP, BZPOPMIN, ...): a session that waits runs
 * none of its input behind the blocking command and shows no reply until
 * a write to one of its keys serves it, its timeout passes (checked by
 * goblin_engine_cron) or CLIENT UNBLOCK ends it. Then the engine wakes the
 * session (the engine's session_wake, or the session's own hook below),
 * from whichever thread ran the command that served it, and the session's
 * server calls goblin_session_resume() on its own thread: the reply moves
 * into the output and the input that waited runs. Returns what
 * goblin_session_input_commit() returns. A session that is not waking
 * just runs its pending input (none: nothing happens). */
GOBLIN_API int goblin_session_resume(goblin_session *s);

/* Gives the session its own wake hook, called (under the server's lock,
 * on any thread) instead of the engine's session_wake when the session
 * needs its server (see session_wake). NULL restores the engine's. */
GOBLIN_API void goblin_session_set_wake(goblin_session *s,
                                        void (*wake)(void *ctx), void *ctx);

/* True while the session waits in a blocking command (CLIENT LIST flag
 * b): a server's idle timeout does not apply to it, as in Redis. */
GOBLIN_API bool goblin_session_blocked(const goblin_session *s);

/* The session's client id (CLIENT ID). */
GOBLIN_API uint64_t goblin_session_id(const goblin_session *s);

#ifdef __cplusplus
}
#endif

#endif
