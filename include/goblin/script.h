/* goblin/script.h - how an engine runs scripts (EVAL, EVALSHA, FCALL,
 * SCRIPT, FUNCTION) without knowing their language.
 *
 * libgoblin carries no interpreter: a scripting library (libgoblin-script,
 * Lua 5.1, goblin/lua.h) attaches itself to an engine with
 * goblin_engine_scripting(). Until one is attached, every scripting
 * command answers "ERR scripting is not available in this build".
 *
 * While a script runs, the scripting library calls back into the engine
 * for each redis.call: goblin_script_begin() once (Redis's checks before a
 * script runs), goblin_script_call() per command (the checks Redis makes
 * on a command called from a script, then the command, its reply written
 * to the caller's sink), goblin_script_end() once. All of this happens
 * inside the scripting command's own call, on the thread that holds the
 * engine (goblin/engine.h, Threading).
 */
#ifndef GOBLIN_SCRIPT_H
#define GOBLIN_SCRIPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "common.h"
#include "engine.h"
#include "reply.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What INFO memory shows of scripting, as Redis 7.0 names it. */
struct goblin_scripting_info {
    size_t vm_eval;        /* used_memory_vm_eval (= used_memory_lua) */
    size_t vm_functions;   /* used_memory_vm_functions */
    size_t scripts_eval;   /* used_memory_scripts_eval: the EVAL cache */
    size_t functions;      /* used_memory_functions: the libraries */
    size_t cached_scripts; /* number_of_cached_scripts */
    size_t nfunctions;     /* number_of_functions */
    size_t nlibraries;     /* number_of_libraries */
};

/* What a scripting library provides. */
struct goblin_scripting {
    /* Runs one scripting command (argv[0] is EVAL, EVALSHA, EVAL_RO,
     * EVALSHA_RO, FCALL, FCALL_RO, SCRIPT or FUNCTION; the engine has
     * checked its arity and the caller's permissions) for session s and
     * writes exactly one reply to sink. */
    void (*command)(void *ctx, goblin_session *s, int argc,
                    const struct goblin_slice *argv, struct goblin_sink *sink);
    /* Bytes the interpreter's heap holds (INFO used_memory_lua; counted in
     * used_memory). May be NULL. */
    size_t (*memory)(void *ctx);
    /* Scripts in the EVAL cache (INFO number_of_cached_scripts). May be
     * NULL. */
    size_t (*cached)(void *ctx);
    /* Called by goblin_engine_close; frees ctx. May be NULL. */
    void (*close)(void *ctx);
    /* INFO memory's scripting figures (below). May be NULL. */
    void (*info)(void *ctx, struct goblin_scripting_info *out);
};

/* Attaches ops (borrowed: it must outlive the engine) with its ctx; a
 * second call replaces the first without closing it. NULL detaches. */
GOBLIN_API void goblin_engine_scripting(goblin_engine *eng,
                                        const struct goblin_scripting *ops,
                                        void *ctx);

/* A script's flags: from a shebang line (#!lua flags=no-writes,...) or a
 * function's flags, plus how it was called. */
enum {
    GOBLIN_SCRIPT_NO_WRITES = 1u << 0,
    GOBLIN_SCRIPT_ALLOW_OOM = 1u << 1,
    GOBLIN_SCRIPT_ALLOW_STALE = 1u << 2,
    GOBLIN_SCRIPT_NO_CLUSTER = 1u << 3,
    GOBLIN_SCRIPT_ALLOW_CROSS_SLOT = 1u << 4,
    /* An EVAL script without a shebang: Redis 6's rules. */
    GOBLIN_SCRIPT_EVAL_COMPAT = 1u << 5,
    /* Called as EVAL_RO, EVALSHA_RO or FCALL_RO. */
    GOBLIN_SCRIPT_RO = 1u << 6,
    /* Run by EVAL or EVALSHA (SCRIPT KILL's kind), not FCALL. */
    GOBLIN_SCRIPT_EVAL = 1u << 7,
};

/* One script run, between goblin_script_begin and goblin_script_end. The
 * caller sets flags and resp (2 until redis.setresp changes it); the
 * engine keeps the rest. */
struct goblin_script_run {
    unsigned flags; /* GOBLIN_SCRIPT_* */
    int resp;       /* the shape of the replies redis.call converts */
    bool wrote;     /* a write command ran: the script cannot be killed */
    bool oom;       /* used memory was over maxmemory when it began */
    bool read_only; /* write commands are refused */
    bool killed;    /* SCRIPT KILL or FUNCTION KILL asked it to stop */
    uint64_t start_ns;
    goblin_session *caller;
};

/* Prepares run for session s with Redis's checks (an OOM engine and a
 * script without allow-oom, a script with writes called through *_RO):
 * returns 0, or writes the refusal to sink and returns GOBLIN_EINVAL. */
GOBLIN_API int goblin_script_begin(goblin_session *s,
                                   struct goblin_script_run *run,
                                   struct goblin_sink *sink);

/* Runs argv (argv[0] the command name) as redis.call does: the checks
 * Redis makes on a command called from a script, with its texts ("ERR
 * Unknown Redis command called from script", the caller's ACL, "ERR Write
 * commands are not allowed from read-only scripts.", ...), then the
 * command, as the script's caller, replying into sink in run->resp's
 * shape. Exactly one reply is written. argv is borrowed for the call. */
GOBLIN_API void goblin_script_call(struct goblin_script_run *run, int argc,
                                   const struct goblin_slice *argv,
                                   struct goblin_sink *sink);

/* Whether the script's caller may run argv (redis.acl_check_cmd): 1 or
 * 0, or GOBLIN_EINVAL when argv names no command. */
GOBLIN_API int goblin_script_acl_check(struct goblin_script_run *run,
                                       int argc,
                                       const struct goblin_slice *argv);

/* Ends run (begun with goblin_script_begin). */
GOBLIN_API void goblin_script_end(struct goblin_script_run *run);

/* Every error reply a scripting command (EVAL, FCALL, SCRIPT, FUNCTION)
 * writes to the sink it was given counts as Redis counts an error: in INFO
 * errorstats and total_error_replies, and the command as failed. Called
 * just before writing an error that a command the script called replied
 * already (and so was counted then: Redis's ignore_error_stats_update on
 * the error table), this says to count the next one as the command's
 * failure only. */
GOBLIN_API void goblin_script_error_counted(goblin_session *s);

/* A run past busy-reply-threshold (on) or back (off): while it is busy,
 * other clients' commands get Redis's BUSY error, but for those Redis
 * lets through (SCRIPT KILL, FUNCTION KILL, SHUTDOWN NOSAVE, ...). */
GOBLIN_API void goblin_script_busy(struct goblin_script_run *run, bool on);

/* Called by a busy script every so often: runs the engine's busy hook
 * (goblin_engine_busy_hook), which lets other clients in. */
GOBLIN_API void goblin_script_yield(struct goblin_script_run *run);

/* What a server does while a script is busy: fn(ctx, s) is called under
 * the engine's lock, on the thread running the script of session s; it
 * may release the lock for a moment so that other threads serve their
 * clients (who are then answered BUSY), and serve other socket clients
 * itself, but must not feed s. NULL: nobody is served until the script
 * ends. */
GOBLIN_API void goblin_engine_busy_hook(goblin_engine *eng,
                                        void (*fn)(void *ctx,
                                                   goblin_session *s),
                                        void *ctx);

/* Stops the running script at its next look at the clock, even one that
 * has written (SHUTDOWN NOSAVE, or a signal, while a script is busy):
 * its caller gets the killed script's error. No script: nothing. */
GOBLIN_API void goblin_engine_script_stop(goblin_engine *eng);

/* The session whose script is busy now, or NULL. */
GOBLIN_API goblin_session *goblin_engine_busy_session(
    const goblin_engine *eng);

/* Logs text at level through the engine's log hook, as redis.log does.
 * Levels below the engine's loglevel are dropped. */
GOBLIN_API void goblin_script_log(goblin_session *s,
                                  enum goblin_log_level level,
                                  const char *text);

/* The engine's busy-reply-threshold (lua-time-limit) in milliseconds, 0
 * for none. */
GOBLIN_API int64_t goblin_script_busy_ms(const goblin_session *s);

/* The engine's lua-heap-max: the most bytes one interpreter's heap may
 * hold while a script runs or a library loads (0: no bound). */
GOBLIN_API uint64_t goblin_script_heap_max(const goblin_engine *eng);

/* The RESP version of session s's client (2 or 3): how a script's return
 * value is shaped (RESP3 booleans, maps, doubles). */
GOBLIN_API int goblin_session_resp(const goblin_session *s);

/* What a scripting library lets the engine's files carry: its function
 * libraries (FUNCTION LOAD's code). Snapshots, RDB files and AOF bases
 * hold each library's whole code and load them back through load. */
struct goblin_function_libs {
    /* The number of libraries, and library i's whole code (a view, valid
     * until the libraries change), in load order. */
    size_t (*count)(void *ctx);
    struct goblin_slice (*code)(void *ctx, size_t i);
    /* Loads one library as FUNCTION LOAD does (a library of the same name
     * fails): 0, or GOBLIN_EINVAL (GOBLIN_ENOMEM) with Redis's text in
     * err (cap bytes). */
    int (*load)(void *ctx, struct goblin_slice code, char *err, size_t cap);
    /* Removes every library (FUNCTION FLUSH). */
    void (*flush)(void *ctx);
};

/* Attaches ops (borrowed: it must outlive the engine) with its ctx; NULL
 * detaches. Until one is attached, files are written without libraries
 * and the libraries a file holds are read past. */
GOBLIN_API void goblin_engine_function_libs(
    goblin_engine *eng, const struct goblin_function_libs *ops, void *ctx);

/* The function libraries changed (FUNCTION LOAD, DELETE, FLUSH, RESTORE,
 * called by session s): one change for the save policies, and the
 * command goes out in the write stream as it was sent, as Redis
 * propagates it. */
GOBLIN_API void goblin_script_functions_changed(goblin_session *s);

/* FUNCTION DUMP's payload, as Redis 7.0 writes it: each library's whole
 * code (header line included) as an RDB function record, then the RDB
 * version and a CRC64. Appends to out; returns 0 or GOBLIN_ENOMEM. */
GOBLIN_API int goblin_function_dump(struct goblin_buf *out,
                                    const struct goblin_slice *codes,
                                    size_t n);

/* Reads a FUNCTION RESTORE payload (from goblind or redis-server): checks
 * its version and CRC64, then calls fn with each library's code in order
 * (a view, valid for the call). Returns 0; GOBLIN_EINVAL with *err set to
 * Redis's text ("ERR DUMP payload version or checksum are wrong", ...);
 * GOBLIN_ENOMEM; or fn's negative return, which stops the walk. */
GOBLIN_API int goblin_function_undump(const void *payload, size_t len,
                                      int (*fn)(void *ctx,
                                                struct goblin_slice code),
                                      void *ctx, const char **err);

#ifdef __cplusplus
}
#endif

#endif
