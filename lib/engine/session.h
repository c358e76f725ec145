/* session.h - the engine and session objects behind goblin/engine.h, shared
 * by the files of lib/engine and lib/commands, and the hooks lib/sbe implements.
 *
 * Memory: everything here is allocated from the engine's store
 * (goblin__alloc with sizes), so it shows in used_memory as client buffers
 * do in Redis, and leaks show in the tests' counting allocator.
 *
 * Sessions of an engine form a list in id order (CLIENT LIST order). The
 * WATCH table maps a key to the sessions watching it; each session keeps
 * the entries it watches, so UNWATCH and close cost what was watched.
 */
#ifndef GOBLIN_SESSION_H
#define GOBLIN_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "commands/command.h"
#include "goblin/engine.h"
#include "goblin/resp.h"
#include "pubsub/pubsub.h"
#include "store/store.h"

struct goblin__cmdstat {
    uint64_t calls;
    uint64_t ticks; /* time spent, in the engine's clock ticks */
    uint64_t sample; /* ticks of the last timed call (goblin__cmdstat_*) */
    uint64_t rejected;
    uint64_t failed;
};

struct goblin__sdesc;

struct goblin__setting {
    struct goblin_setting s; /* name and alias point at the copies below */
    char *name;
    char *alias;
    const struct goblin__sdesc *desc; /* its descriptor, NULL if none */
    bool placeholder; /* kept text only: an engine or server may replace */
    bool changed;     /* set by CONFIG SET: CONFIG REWRITE writes it */
};

/* The value of a descriptor nobody applies: its text (settings.c). */
struct goblin__sval {
    goblin_engine *eng;
    const struct goblin__sdesc *desc;
    char *text; /* NUL-terminated, from the store's allocator */
};

/* One watched key: its database, its bytes and the sessions watching
 * it. */
struct goblin__watch {
    struct goblin__watch *next; /* hash chain */
    uint64_t hash;
    int db;
    goblin_session **watchers;
    uint32_t nwatchers, capwatchers;
    size_t keylen;
    unsigned char key[]; /* keylen bytes */
};

/* Error replies by their first word, for INFO errorstats. */
/* INFO errorstats (errorstats.c): a code word's length at most (Redis
 * looks for its space within 32 characters of the reply, '-' included),
 * and how many codes are kept. */
#define GOBLIN__ERRCODE_MAX 30
#define GOBLIN__ERRCODES_MAX 128

struct goblin__errstat {
    char name[GOBLIN__ERRCODE_MAX];
    uint8_t len;
    uint64_t count;
};

struct goblin__errstats {
    struct goblin__errstat *e; /* sorted by name */
    size_t n, cap;
};

/* One numbered database: its store (NULL until first used, except
 * database 0) and its number; the slot is the ctx of the store's change
 * hook, so a change knows its database (db.c). */
struct goblin__db {
    goblin_engine *eng;
    goblin_store *st;
    int id;
};

struct goblin_engine {
    /* The store the engine was opened on: the one engine memory
     * (sessions, buffers, settings) is charged to. It holds database 0
     * until SWAPDB moves it (dbs[0].st is always database 0). */
    goblin_store *st;
    /* The numbered databases (the "databases" setting, default 16), and
     * how many besides dbs[0] are open: 0 keeps every loop over them to
     * the one store of a program that never SELECTs. */
    struct goblin__db *dbs;
    int ndbs;
    int dbs_open;
    int evict_db; /* where eviction looks next (maxmemory.c) */
    bool active_expire_off; /* DEBUG SET-ACTIVE-EXPIRE 0 */
    /* The slow log (slowlog.h): execution ticks at or over slow_ticks are
     * logged; time_all times every command (a threshold of 0). */
    bool time_all;
    uint64_t slow_ticks;
    /* The latency monitor (latency.h): latency-monitor-threshold in ms
     * (0: off) in ticks, and the lower of the two thresholds, which the
     * command path compares a timed execution with. */
    int64_t latency_ms;
    uint64_t lat_ticks, watch_ticks;
    struct goblin__latency *latency;
    /* LATENCY HISTOGRAM (latency.h): per command, allocated at the first
     * sample; latency-tracking. */
    struct goblin__cmdhist *cmdhist;
    bool latency_tracking;
    int64_t slow_us, slow_max_len;
    struct goblin__slow_entry *slow_first;
    /* ACL LOG (acl_log.h): newest first, acl_log_len of them. */
    struct goblin__acl_log_entry *acl_log;
    size_t acl_log_len;
    int64_t acl_log_max;
    size_t slow_len;
    uint64_t slow_next_id;
    uint32_t replid_gen;    /* DEBUG CHANGE-REPL-ID calls */
    /* Allocation through the store's accounting, for the RESP parser and
     * output buffers (ctx is the store). */
    struct goblin_allocator acct;
    struct goblin_engine_config cfg;
    void (*prev_hook)(void *ctx, struct goblin_slice key);
    void *prev_hook_ctx;

    /* Command lookup: open addressing over the lower-case names (and
     * "parent|sub" fullnames); see lookup.c. */
    uint32_t *slots;
    uint32_t slot_mask;
    unsigned char *names; /* lower-case names, zero-padded to 48 bytes */
    /* After a rename-command: the table as built, and the commands
     * renamed to "" (goblin__command_count entries). NULL before. */
    uint32_t *orig_slots;
    unsigned char *orig_names;
    bool *cmd_gone;
    struct goblin__cmdstat *stats; /* goblin__command_count entries */
    /* Per command (goblin__command_count entries): GOBLIN__TOUCH_NEVER,
     * GOBLIN__TOUCH_ALWAYS or 0 (maxmemory.c, built at open). */
    uint8_t *touch_rule;

    /* Sessions, in id order. */
    goblin_session *first, *last;
    size_t nsessions;
    uint64_t next_id;
    goblin_session *running; /* the session executing a command, if any */
    bool in_exec;            /* EXEC is running its queue (BGSAVE waits) */
    /* While a script or EXEC's queue runs, the time it began (else 0):
     * key deadlines are compared with it (store.h, goblin__expiry_now),
     * as Redis's keyIsExpired does, so a key does not expire halfway
     * through. Every database's store reads it (db.c). */
    int64_t frozen_ms;
    /* What a script found when it began, given back when it ends: it may
     * run inside EXEC's queue (an EVAL queued in MULTI). */
    bool script_outer_exec;
    int64_t script_outer_frozen;
    int script_outer_db; /* the caller's database: a script's SELECT is
                          * its own, as in Redis */
    /* The next error reply of the running scripting command was counted
     * already (goblin_script_error_counted; cmd_script.c). */
    bool script_err_counted;
    struct goblin__block_table *blocking; /* block.c: NULL until a block */

    /* Settings: the registry, the kept values of the descriptors
     * (goblin__nsdescs of them), the config file read at start and the
     * server's hooks (goblin_engine_config_hooks). */
    struct goblin__setting *settings;
    size_t nsettings, capsettings;
    struct goblin__sval *svals;
    char *config_file;
    struct goblin_config_hooks hooks;
    char *requirepass; /* NULL = none */
    struct goblin__acl_user *users;        /* acl.c: sorted by name */
    struct goblin__acl_user *default_user; /* always in users */
    char *aclfile;     /* ACL LOAD and SAVE; NULL = none */
    size_t requirepass_len;
    uint64_t proto_max_bulk_len;
    uint64_t hll_sparse_max_bytes; /* hll-sparse-max-bytes */
    uint64_t qbuf_limit;
    /* client-output-buffer-limit: hard, soft, soft seconds for the classes
     * normal, replica and pubsub (only normal applies to sessions). */
    uint64_t obuf_limit[3][3];
    /* Pending output above which a session checks the limits after a
     * command: the smaller nonzero of hard and soft, or SIZE_MAX. */
    size_t obuf_trip;
    int hz;
    /* maxmemory (0 = none), maxmemory-policy (enum goblin__policy) and
     * maxmemory-samples; mem_startup is used memory once the engine is
     * open (maxmemory.c). */
    uint64_t maxmemory;
    int policy;
    unsigned samples;
    uint64_t mem_startup;

    /* WATCH. */
    struct goblin__watch **wbuckets;
    size_t wmask, nwatched;

    /* Clocks: ticks come from rdtsc where it is constant, else from now_ns;
     * ns_per_tick is recalibrated by cron. */
    bool use_tsc;
    uint64_t tick0, ns0;
    double ns_per_tick;
    int64_t start_ms;
    int64_t clock_ms; /* the store clock, read by cron: idle times */

    /* Statistics (INFO stats, CONFIG RESETSTAT clears them). */
    uint64_t stat_commands;
    uint64_t stat_connections;
    uint64_t stat_net_in, stat_net_out;
    uint64_t stat_errors;
    uint64_t stat_rejected;
    struct goblin__read_stats stat_keyspace; /* keyspace_hits, _misses */
    uint64_t stat_expired_keys;
    uint64_t stat_evicted_keys;
    uint64_t mem_peak;
    struct goblin__errstats errstats;
    uint64_t ops_samples[16];
    uint64_t ops_last_cmds, ops_last_ns;
    unsigned ops_idx;
    size_t cron_cursor;

    struct goblin__persist *persist; /* cmd_persist.c: SAVE, BGSAVE, policies */
    /* The write stream (stream/propagate.h): stream_on while a consumer
     * is registered, the one branch commands pay for it. */
    struct goblin__stream *stream;
    bool stream_on;
    struct goblin__repl *repl; /* lib/repl: the master side, or NULL */
    /* min-replicas-to-write is not met (lib/repl's cron): writes get
     * NOREPLICAS. */
    bool refuse_writes;
#define GOBLIN__NOREPLICAS_TEXT "NOREPLICAS Not enough good replicas to write."
    int64_t min_replicas_to_write, min_replicas_max_lag;
    struct goblin_aof *aof; /* the AOF appending (goblin/aof.h), or NULL */
    /* Group commit: while input_batch > 0 a session's input is being run
     * and no reply can leave, so appendfsync always defers its fsync to
     * the batch's end (sync_due). */
    int input_batch;
    bool sync_due;

    /* Scripting (script_call.c): the attached library, if any, and the
     * script running now (NULL when none). */
    const struct goblin_scripting *scripting;
    void *scripting_ctx;
    const struct goblin_function_libs *fn_libs; /* files carry these */
    void *fn_libs_ctx;
    struct goblin_script_run *script_run;
    struct goblin__lookup_hint script_hints[16]; /* redis.call's, by name
                                                  * address */
    bool script_busy; /* past busy-reply-threshold: others get BUSY */
    int64_t script_busy_ms;  /* busy-reply-threshold (lua-time-limit) */
    uint64_t lua_heap_max;   /* lua-heap-max, 0: no bound */
    void (*busy_hook)(void *ctx, goblin_session *s);
    void *busy_hook_ctx;
    /* Pub/Sub (cmd_pubsub.c) and keyspace notifications (notify.c):
     * notify_flags holds the classes only while K or E is set. */
    struct goblin__ps_registry pubsub;
    int notify_flags;
    char notify_text[24]; /* as CONFIG GET shows it */
    /* Client-side caching (tracking.c): the table of tracked keys, the
     * sessions tracking and in BCAST mode, messages for the running
     * session waiting for its reply, and track_on, the one test the
     * change hook makes. */
    struct goblin__track_key **tbuckets;
    size_t tmask, tkeys, titems;
    size_t tracking_clients, track_bcast;
    uint64_t track_max_keys;
    unsigned track_effort;
    bool track_on, track_pending;
    struct goblin_buf track_self;
    /* MONITOR (monitor.c): the monitoring sessions. */
    goblin_session **monitors;
    size_t nmonitors, capmonitors;
    /* CLIENT PAUSE (pause.c): GOBLIN__PAUSE_*, and when it ends (store
     * clock). */
    uint8_t pause_type;
    int64_t pause_end_ms;
    /* maxmemory, a write-stream consumer, MONITOR, CLIENT PAUSE or
     * refused writes: while any is on, typed requests take the general
     * path, so the direct path (sbe/direct.c) tests this one flag instead
     * of each. goblin__engine_direct_update keeps it, after each change
     * of one of them. */
    bool direct_off;
};

/* Protocol of a session. */
enum goblin__proto {
    GOBLIN__PROTO_UNDECIDED = 0,
    GOBLIN__PROTO_RESP = 1,
    GOBLIN__PROTO_SBE = 2,
};

/* The magic that makes a session SBE (DESIGN.md, Protocol selection). */
#define GOBLIN__SBE_MAGIC "GOBLINS!"
#define GOBLIN__SBE_MAGIC_LEN 8

/* The session's MULTI queue: commands with their argv copied into one
 * growing byte area. */
struct goblin__queued {
    const struct goblin__command *cmd;
    size_t argv_off; /* offset of the argc slices in qarea */
    int argc;
};

enum {
    SESS_MULTI = 1u << 0,      /* inside MULTI */
    SESS_DIRTY_EXEC = 1u << 1, /* a queueing error: EXEC aborts */
    SESS_DIRTY_CAS = 1u << 2,  /* a watched key changed: EXEC fails */
    SESS_CLOSE = 1u << 3,      /* close after output is flushed */
    SESS_KILLED = 1u << 4,     /* CLIENT KILL */
    SESS_AUTHED = 1u << 5,
    SESS_NO_EVICT = 1u << 6,
    SESS_NO_TOUCH = 1u << 7,
    SESS_REPLY_OFF = 1u << 8,  /* CLIENT REPLY OFF */
    SESS_REPLY_SKIP = 1u << 9, /* CLIENT REPLY SKIP: drop next reply */
    SESS_REPLY_SKIP_NEXT = 1u << 10,
    SESS_OBUF_LIMIT = 1u << 11, /* output limit passed: output dropped */
    SESS_MONITOR = 1u << 12,    /* MONITOR (monitor.c) */
    SESS_PAUSED = 1u << 13,     /* its next command waits (pause.c) */
    SESS_NO_PAUSE = 1u << 14,   /* never waits: the AOF's loader */
    SESS_REPLICA = 1u << 20,    /* REPLCONF or PSYNC: a record in lib/repl */
    SESS_MASTER = 1u << 21,     /* runs our master's stream (repl/replica.c) */
    SESS_BLOCKED = 1u << 24,    /* waiting in a blocking command (block.c) */
};

struct goblin_session {
    goblin_engine *eng;
    goblin_store *db; /* the selected database's store (SELECT) */
    int dbid;
    goblin_session *prev, *next; /* the engine's list, in id order */
    uint64_t id;
    uint32_t flags; /* SESS_* */
    enum goblin__proto proto;
    uint8_t magic_seen; /* bytes of the SBE magic matched so far */
    uint8_t resp;       /* 2 or 3 */
    enum goblin_transport transport;
    struct goblin__acl_user *acl; /* the user; NULL once it was deleted */
    int fd;
    void *user;
    char *peer, *local; /* NUL-terminated copies */
    char *name;         /* CLIENT SETNAME; NULL = none */
    char *lib_name, *lib_ver;
    int64_t ctime_ms, last_ms; /* store clock */
    const struct goblin__command *lastcmd;
    uint64_t repl_woff; /* the stream's offset after its last write (WAIT) */
    struct goblin__lookup_hint lookup_hint; /* of the last command name */

    /* Input: bytes [in_pos, in_len) of in are not parsed yet. */
    unsigned char *in;
    size_t in_cap, in_len, in_pos;
    goblin_resp_parser *parser;
    bool parser_unauth;       /* the limits last given to the parser */
    uint64_t parser_bulk_max;

    /* Output: bytes [out_pos, out.len) are not sent yet. */
    struct goblin_buf out;
    size_t out_pos, out_peak;
    int64_t obuf_soft_since_ms; /* soft limit passed since; 0 = not */
    struct goblin_resp_writer writer;
    struct goblin_sink discard; /* CLIENT REPLY OFF/SKIP */
    /* While out is redirected (goblin__output_redirect): the borrowed
     * space, the session's own buffer, and the allocator that moves the
     * bytes out of the borrowed space if they outgrow it. */
    void *redirect;
    struct goblin_buf out_saved;
    struct goblin_allocator spill;

    /* MULTI queue. */
    struct goblin__queued *queue;
    size_t nqueue, capqueue;
    unsigned char *qarea;
    size_t qarea_len, qarea_cap;

    /* WATCHed keys. */
    struct goblin__watch **watched;
    uint32_t nwatched, capwatched;

    /* Scratch space for handlers that gather views before replying (KEYS,
     * SCAN, MGET, MSET, ZADD pairs, ...); grows, never shrinks. scratch
     * holds scratch_cap slices (scratch_cap * 16 bytes). */
    struct goblin_slice *scratch;
    size_t scratch_cap;

    /* block.c: the blocked state (waiting, or served and not yet taken),
     * and the transport's own wake hook (goblin_session_set_wake). */
    struct goblin__blocked *blk;
    void (*wake)(void *ctx);
    void *wake_ctx;

    /* lib/sbe's per-session state, NULL at first, and how it is freed
     * (set by lib/sbe with it: lib/engine does not call lib/sbe). */
    void *sbe;
    void (*sbe_free)(goblin_session *s);
    /* lib/sbe: appends a published message to b as an SBE frame. */
    void (*sbe_push)(goblin_session *s, struct goblin_buf *b,
                     struct goblin_slice channel, struct goblin_slice message,
                     struct goblin_slice pattern, bool shard);

    /* Pub/Sub: the subscriptions, and messages delivered while another
     * session ran, moved into out by goblin_session_output(). */
    struct goblin__ps_client ps;
    struct goblin_buf push;

    /* CLIENT TRACKING (tracking.c): TRACK_* flags (0: off), the REDIRECT
     * id and the BCAST prefixes, sorted. */
    uint32_t track;
    uint64_t track_redir;
    struct goblin__track_prefix *tprefix;
    size_t ntprefix;
};

/* session.c */
/* Switches the session's RESP version (HELLO), for the reply being
 * written too. */
void goblin__session_set_resp(goblin_session *s, int resp);

/* The session's output buffer, for lib/sbe's replies. */
struct goblin_buf *goblin__session_out(goblin_session *s);

/* RESET: back to a new connection's state (RESP2, no name, no MULTI, no
 * WATCH, authenticated only when no password is set). */
void goblin__session_reset(goblin_session *s);

/* cmd_client.c */
/* Redis's validateClientName: every byte in '!'..'~'. */
bool goblin__client_name_ok(struct goblin_slice name);
/* Sets (or with an empty name clears) the session's name. 0 or
 * GOBLIN_ENOMEM. */
int goblin__client_set_name(goblin_session *s, struct goblin_slice name);

/* Tells s's transport that s has output or must close, from another
 * session's command (a message, CLIENT KILL). */
void goblin__session_wake(goblin_session *s);

/* cmd_pubsub.c */
/* Delivers message to the subscribers of channel (and, unless shard, of
 * the patterns matching it); returns how many received it. */
size_t goblin__pubsub_publish(goblin_engine *eng, bool shard,
                              struct goblin_slice channel,
                              struct goblin_slice message);
/* Drops every subscription of s and its pending messages. */
void goblin__pubsub_leave(goblin_session *s);
/* False when a subscribed RESP2 session may not run c. */
bool goblin__pubsub_allowed(const goblin_session *s,
                            const struct goblin__command *c);

/* Marks s killed (CLIENT KILL by session by) and wakes its server. */
void goblin__session_kill(goblin_session *s, goblin_session *by);

struct goblin__text;
/* Appends s's CLIENT LIST line. */
void goblin__client_line(struct goblin__text *t, const goblin_session *s);

/* Memory figures of a session for CLIENT LIST and INFO. */
struct goblin__session_mem {
    size_t qbuf, qbuf_free, argv_mem, multi_mem, rbs, rbp, obl, omem, total;
};
void goblin__session_mem(const goblin_session *s,
                         struct goblin__session_mem *m);

/* script_call.c: the scripting settings the engine keeps
 * (busy-reply-threshold, lua-heap-max). 0 or GOBLIN_ENOMEM. */
int goblin__script_settings_init(goblin_engine *eng);

/* Makes room for n slices in s->scratch. 0 or GOBLIN_ENOMEM. */
int goblin__scratch_reserve(goblin_session *s, size_t n);
/* s->scratch as at least `bytes` bytes (8-byte aligned), or NULL. */
void *goblin__scratch_bytes(goblin_session *s, size_t bytes);

/* cmd_keys.c: SCAN's arguments, shared with HSCAN and ZSCAN. */
struct goblin_scan_options;
bool goblin__scan_cursor(goblin__exec *x, struct goblin_slice arg,
                         uint64_t *out);
bool goblin__scan_options(goblin__exec *x, int argc,
                          const struct goblin_slice *argv, int i,
                          bool allow_type, struct goblin_scan_options *o,
                          bool *type_known);
bool goblin__scan_key(goblin__exec *x, struct goblin_slice key,
                      enum goblin_type type);
/* Starts a SCAN reply: a 2-array whose first element is the cursor. */
void goblin__reply_cursor(goblin__exec *x, uint64_t cursor);
const char *goblin__type_name(enum goblin_type t);
/* cmd_keys.c: "*" as no pattern (ptr NULL), as Redis reads MATCH. */
struct goblin_slice goblin__match_pattern(struct goblin_slice p);
/* cmd_keys.c: the type SCAN's TYPE names; GOBLIN_TYPE_NONE if none. */
enum goblin_type goblin__scan_type(struct goblin_slice name);
/* One bounded step of active expiry (cron). */
void goblin__expire_step(goblin_engine *eng);

/* cmd_hash.c: replies n (field, value) pairs gathered in s->scratch, as
 * [field, value] arrays in RESP3 when nested, else flat; fields only when
 * !values. */
void goblin__reply_pairs(goblin__exec *x, size_t n, bool values,
                         bool nested);

/* cmd_conn.c: the user that user and pass authenticate, or NULL. */
struct goblin__acl_user *goblin__auth_ok(const goblin_engine *eng,
                                         struct goblin_slice user,
                                         struct goblin_slice pass);

/* keyspec.c: the key positions of argv for c (Redis's
 * getKeysFromCommandWithSpecs) into pos, their key-spec flags (KS_*) into
 * flags; returns how many (0 when the arguments name none or do not fit
 * the specs). pos and flags must hold goblin__find_keys_cap(c, argc)
 * entries: there is no other limit. */
int goblin__find_keys(const struct goblin__command *c, int argc,
                      const struct goblin_slice *argv, int *pos,
                      uint16_t *flags);
size_t goblin__find_keys_cap(const struct goblin__command *c, int argc);

/* The clock commands are timed with: the CPU's cycle counter where it is
 * constant (eng->use_tsc, see engine.c), else the configured now_ns.
 * Inline, as every command reads it twice while the slow log watches. */
static inline uint64_t goblin__ticks(const goblin_engine *eng)
{
#if defined(__x86_64__)
    if (__builtin_expect(eng->use_tsc, 1)) {
        uint32_t lo, hi;

        __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
        return (uint64_t)hi << 32 | lo;
    }
#endif
    return eng->cfg.now_ns(eng->cfg.now_ns_ctx);
}
/* engine.c: recomputes eng->direct_off. */
void goblin__engine_direct_update(goblin_engine *eng);
uint64_t goblin__ticks_to_us(const goblin_engine *eng, uint64_t ticks);
uint64_t goblin__ticks_to_ns(const goblin_engine *eng, uint64_t ticks);
uint64_t goblin__ops_per_sec(const goblin_engine *eng);

/* Command timing for INFO commandstats without a clock read per command:
 * one call in GOBLIN__TIME_SAMPLE of each command is timed (two clock
 * reads around its handler), and every call is charged the time of the
 * last timed one. The first call of a command is always timed. */
#define GOBLIN__TIME_SAMPLE 16u
static inline bool goblin__cmdstat_timed(const struct goblin__cmdstat *st)
{
    return (st->calls & (GOBLIN__TIME_SAMPLE - 1)) == 0;
}
/* latency_hist.c: puts a timed call (st->sample) in its command's
 * LATENCY HISTOGRAM: one in GOBLIN__TIME_SAMPLE, even while every call
 * is timed (latency.h). */
void goblin__cmdhist_sample(goblin_engine *eng,
                            const struct goblin__cmdstat *st);

/* Counts one call; t0 is the clock read before it when it was timed. */
static inline void goblin__cmdstat_count(goblin_engine *eng,
                                         struct goblin__cmdstat *st,
                                         bool timed, uint64_t t0)
{
    if (timed) {
        st->sample = goblin__ticks(eng) - t0;
        if ((st->calls & (GOBLIN__TIME_SAMPLE - 1)) == 0)
            goblin__cmdhist_sample(eng, st);
    }
    st->calls++;
    st->ticks += st->sample;
}

/* dispatch.c */
/* Runs argv for s into sink with every check (see command.h's
 * goblin__command_execute). */
int goblin__dispatch(goblin_session *s, int argc,
                     const struct goblin_slice *argv,
                     struct goblin_sink *sink);
/* goblin__dispatch into the session's own RESP writer. */
int goblin__execute(goblin_session *s, int argc,
                    const struct goblin_slice *argv);
/* Runs x->cmd's handler, which passed every check, and counts it. */
void goblin__run(goblin__exec *x, int argc, const struct goblin_slice *argv);

/* cmd_multi.c */
void goblin__multi_queue(goblin__exec *x, int argc,
                         const struct goblin_slice *argv);
/* Leaves MULTI, dropping the queue (WATCHes stay). */
void goblin__multi_discard(goblin_session *s);

/* session_io.c: applies the output buffer limits after a batch. */
void goblin__output_check(goblin_session *s);

/* session_io.c: replies written straight into a transport's buffer (a
 * CQ reservation): with the output empty, points it at dst[0..cap) for
 * the commands that follow (false, and nothing changes, when output is
 * pending). redirect_end gives the session its own buffer back and
 * returns how many bytes are in dst, or -1 when the replies outgrew it
 * (or failed) and are in the session's output as usual. */
void goblin__output_spill_init(goblin_session *s);
void goblin__output_spilled(goblin_session *s);
static inline bool goblin__output_redirect(goblin_session *s, void *dst,
                                           size_t cap)
{
    if (s->out.len != 0 || s->redirect != NULL || dst == NULL ||
        s->blk != NULL)
        return false;
    if (__builtin_expect(s->spill.ctx != s, 0))
        goblin__output_spill_init(s);
    s->out_saved = s->out;
    s->redirect = dst;
    s->out.data = dst;
    s->out.cap = cap;
    s->out.alloc = &s->spill;
    s->out_pos = 0;
    return true;
}

static inline int64_t goblin__output_redirect_end(goblin_session *s)
{
    int64_t n;

    if (s->redirect == NULL)
        return -1;
    if (__builtin_expect(s->out.data != s->redirect, 0)) {
        goblin__output_spilled(s);
        return -1;
    }
    /* Everything fit (or nothing was written): the session's own buffer
     * comes back, as empty as it was. */
    n = s->out.failed ? -1 : (int64_t)s->out.len;
    s->out_saved.failed = s->out.failed;
    s->out = s->out_saved;
    s->out_pos = 0;
    s->redirect = NULL;
    return n;
}

/* respond.c: the name of errorstat slot i. */
/* errorstats.c: counts an error reply's text (by its code word) in INFO
 * errorstats and total_error_replies; CONFIG RESETSTAT; the engine's
 * close. */
void goblin__errstat_count(goblin_engine *eng, const char *text, size_t len);
void goblin__errstats_reset(goblin_engine *eng);
void goblin__errstats_free(goblin_engine *eng);

/* lookup.c */
int goblin__lookup_build(goblin_engine *eng);
void goblin__lookup_free(goblin_engine *eng);

/* watch.c: keys are watched in the session's database. */
int goblin__watch_key(goblin_session *s, struct goblin_slice key);
void goblin__unwatch_all(goblin_session *s);
void goblin__watch_touch(goblin_engine *eng, int db, struct goblin_slice key);
/* Marks dirty the sessions watching a key of database db (-1: of every
 * database) for which changed(store of that database, key) is true. */
void goblin__watch_touch_if(goblin_engine *eng, int db,
                            bool (*changed)(goblin_store *st,
                                            struct goblin_slice key));
void goblin__watch_free(goblin_engine *eng);

/* db.c: the numbered databases. init makes the slots (n of them) with
 * database 0 on eng->st; free closes every store but eng->st. */
int goblin__db_init(goblin_engine *eng, int n);
void goblin__db_free(goblin_engine *eng);
/* Installs the change hook on database 0's store, keeping the store's
 * own hook (called first, for changes in eng->st). */
void goblin__db_hook_install(goblin_engine *eng);
/* The store of database id (0 <= id < ndbs), opened on first use with
 * the configuration of eng->st. NULL on GOBLIN_ENOMEM. */
goblin_store *goblin__db_store(goblin_engine *eng, int id);
/* Gives eng->st and every open database the string limit
 * proto-max-bulk-len asks for (at least 512 MB: below that the commands
 * check it, as Redis's checkStringLength does). */
void goblin__db_string_max(goblin_engine *eng);
/* The store of database id if it is open, else NULL (for loops that only
 * read: an unopened database holds nothing). */
static inline goblin_store *goblin__db_peek(const goblin_engine *eng, int id)
{
    return eng->dbs[id].st;
}
/* Swaps databases a and b (SWAPDB): the stores change slots, and the
 * sessions that selected either follow the slot. 0 or GOBLIN_ENOMEM. */
int goblin__db_swap(goblin_engine *eng, int a, int b);
/* Tells every open database's store which key events to report
 * (after notify-keyspace-events changed). */
void goblin__db_key_events(goblin_engine *eng);
/* Memory of every open database's store. */
size_t goblin__db_used_memory(const goblin_engine *eng);
/* Points s at database id; 0 or GOBLIN_ENOMEM. */
int goblin__db_select(goblin_session *s, int id);
/* Loads the snapshot file at path into every database (all empty);
 * as goblin_snapshot_load_dbs. */
int goblin__db_load(goblin_engine *eng, const char *path,
                    struct goblin_snapshot_result *res);
/* Registers the "databases" setting. */
int goblin__db_settings_init(goblin_engine *eng);

/* session_io.c: the pieces of a session's input that lib/sbe/input.c
 * (goblin_session_input_commit, goblin_session_feed) puts together.
 * detect: reads the first bytes against the SBE magic and settles
 * s->proto once they match or differ. verdict: what the session's state
 * means for the server once input is done (rc, or the close/limit/OOM
 * codes). */
void goblin__input_compact(goblin_session *s);
void goblin__session_detect(goblin_session *s);
/* resp_run: the RESP loop over in[0..len), the session's input buffer or
 * bytes run where they lie (a ring record's stack copy, what
 * goblin_session_feed was given); *used gets the bytes of the whole
 * commands it consumed. */
int goblin__resp_run(goblin_session *s, const char *in, size_t len,
                     size_t *used);
int goblin__input_verdict(goblin_session *s, int rc);

#endif
