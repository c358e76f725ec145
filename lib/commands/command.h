/* command.h - the one command table every protocol shares, and the entry
 * point that runs a command given as argv into any reply sink.
 *
 * The table (goblin_commands_gen.c, generated at build time by
 * table_gen.py from Redis 7.0's own metadata in redis-commands.json and
 * Goblin's list in goblin-commands.json; docs/commands.md) is one flat,
 * constant array in an order of our choosing: each container command
 * (CLIENT, CONFIG, COMMAND, OBJECT, ACL) is followed directly by its
 * subcommands, so a command's index in the array is its statistics slot
 * and its subcommands are cmd + 1 .. cmd + nsub. Names are lower case; a subcommand's fullname is
 * "parent|sub" as Redis 7 shows it in errors, COMMAND and INFO.
 *
 * Arity follows Redis: n > 0 means exactly n arguments counting the command
 * name (and, for a subcommand, its parent's name); n < 0 means at least -n.
 * Key positions are Redis's legacy first/last/step triple (last < 0 counts
 * from the end); key specs carry the Redis 7 description for COMMAND INFO.
 */
#ifndef GOBLIN_COMMAND_H
#define GOBLIN_COMMAND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "goblin/common.h"
#include "goblin/engine.h"
#include "util/bytes_cmp.h"

struct goblin_sink;

/* Command flags, as COMMAND INFO names them (order = bit order). */
enum {
    CMD_WRITE = 1u << 0,
    CMD_READONLY = 1u << 1,
    CMD_DENYOOM = 1u << 2,
    CMD_MODULE = 1u << 3,
    CMD_ADMIN = 1u << 4,
    CMD_PUBSUB = 1u << 5,
    CMD_NOSCRIPT = 1u << 6,
    CMD_BLOCKING = 1u << 7,
    CMD_LOADING = 1u << 8,
    CMD_STALE = 1u << 9,
    CMD_SKIP_MONITOR = 1u << 10,
    CMD_SKIP_SLOWLOG = 1u << 11,
    CMD_ASKING = 1u << 12,
    CMD_FAST = 1u << 13,
    CMD_NO_AUTH = 1u << 14,
    CMD_MAY_REPLICATE = 1u << 15,
    CMD_NO_MANDATORY_KEYS = 1u << 16,
    CMD_NO_ASYNC_LOADING = 1u << 17,
    CMD_NO_MULTI = 1u << 18,
    CMD_MOVABLEKEYS = 1u << 19,
    CMD_ALLOW_BUSY = 1u << 20,
    CMD_NFLAGS = 21,
    /* Goblin's own, not shown by COMMAND: the command's key lookups are
     * read lookups, counted in keyspace_hits/misses (store.h). */
    CMD_READS = 1u << 30,
};

/* The store's read mode for a command (store.h, GOBLIN__READS_COUNT |
 * GOBLIN__READS_NOTIFY when CMD_READS): its lookups count as reads, and
 * misses notify. */
#define GOBLIN__CMD_READ_MODE(c) \
    ((uint8_t)(((c)->flags & CMD_READS) ? 3u : 0u))

/* ACL categories, as COMMAND INFO names them without the '@'. */
enum {
    ACL_KEYSPACE = 1u << 0,
    ACL_READ = 1u << 1,
    ACL_WRITE = 1u << 2,
    ACL_SET = 1u << 3,
    ACL_SORTEDSET = 1u << 4,
    ACL_LIST = 1u << 5,
    ACL_HASH = 1u << 6,
    ACL_STRING = 1u << 7,
    ACL_BITMAP = 1u << 8,
    ACL_HYPERLOGLOG = 1u << 9,
    ACL_GEO = 1u << 10,
    ACL_STREAM = 1u << 11,
    ACL_PUBSUB = 1u << 12,
    ACL_ADMIN = 1u << 13,
    ACL_FAST = 1u << 14,
    ACL_SLOW = 1u << 15,
    ACL_BLOCKING = 1u << 16,
    ACL_DANGEROUS = 1u << 17,
    ACL_CONNECTION = 1u << 18,
    ACL_TRANSACTION = 1u << 19,
    ACL_SCRIPTING = 1u << 20,
    ACL_NCATS = 21,
};

/* Key-spec flags, as COMMAND INFO names them. */
enum {
    KS_RO = 1u << 0,
    KS_RW = 1u << 1,
    KS_OW = 1u << 2,
    KS_RM = 1u << 3,
    KS_ACCESS = 1u << 4,
    KS_UPDATE = 1u << 5,
    KS_INSERT = 1u << 6,
    KS_DELETE = 1u << 7,
    KS_NOT_KEY = 1u << 8,
    KS_INCOMPLETE = 1u << 9,
    KS_VARIABLE_FLAGS = 1u << 10,
    KS_NFLAGS = 11,
};

/* A Redis 7 key spec: where the search for keys begins (an index, or after
 * a keyword) and how keys are found from there (a range, or a count
 * argument). "unknown" is Redis's word for a spec no rule describes. */
struct goblin__keyspec {
    uint16_t flags;
    uint8_t begin_keyword; /* 0: begin at index bs; 1: after keyword;
                            * 2: unknown */
    uint8_t find_keynum;   /* 0: range(fk0 lastkey, fk1 step, fk2 limit);
                            * 1: keynum(fk0 idx, fk1 firstkey, fk2 step);
                            * 2: unknown */
    int16_t bs;            /* index, or the keyword's startfrom */
    int16_t fk[3];
    const char *keyword;
    const char *notes;
};

/* Argument types, as COMMAND DOCS names them (order = Redis's). */
enum {
    ARGT_STRING,
    ARGT_INTEGER,
    ARGT_DOUBLE,
    ARGT_KEY,
    ARGT_PATTERN,
    ARGT_UNIX_TIME,
    ARGT_PURE_TOKEN,
    ARGT_ONEOF,
    ARGT_BLOCK,
    ARGT_NTYPES,
};

/* Argument flags, as COMMAND DOCS names them (order = bit order). */
enum {
    ARGF_OPTIONAL = 1u << 0,
    ARGF_MULTIPLE = 1u << 1,
    ARGF_MULTIPLE_TOKEN = 1u << 2,
    ARGF_NFLAGS = 3,
};

/* Command doc flags, as COMMAND DOCS names them. */
enum {
    DOCF_DEPRECATED = 1u << 0,
    DOCF_SYSCMD = 1u << 1,
    DOCF_NFLAGS = 2,
};

/* One node of a command's arguments tree (COMMAND DOCS "arguments"): a
 * oneof or a block has nargs children in args. NULL strings are absent
 * fields. */
struct goblin__arg {
    const char *name;
    const char *token;
    const char *since;
    const char *deprecated_since;
    const struct goblin__arg *args;
    int8_t key_spec_index; /* -1: none */
    uint8_t type;          /* ARGT_* */
    uint8_t flags;         /* ARGF_* */
    uint8_t nargs;
};

typedef struct goblin__exec goblin__exec;

/* A handler writes exactly one reply to x->sink. argv[0] is the command
 * name (for a subcommand, argv[1] is the subcommand's); argc has passed
 * the arity check. */
typedef void goblin__handler(goblin__exec *x, int argc,
                             const struct goblin_slice *argv);

struct goblin__command {
    const char *name;     /* "get", or "setname" for a subcommand */
    const char *fullname; /* "get", "client|setname" */
    goblin__handler *fn;  /* NULL for a container */
    int16_t arity;
    int8_t first_key, last_key, key_step;
    uint8_t nsub;   /* subcommands that follow in the table */
    uint8_t ntips, nkeyspecs;
    uint32_t flags; /* CMD_* */
    uint32_t acl;   /* ACL_* */
    const char *since, *group, *summary, *complexity;
    const char *const *tips;
    const struct goblin__keyspec *keyspecs;
    /* COMMAND DOCS beyond the four strings above (NULL: absent). */
    uint8_t doc_flags; /* DOCF_* */
    uint8_t nhistory, nargs;
    const char *deprecated_since, *replaced_by;
    const char *const *history; /* nhistory (version, change) pairs */
    const struct goblin__arg *args;
};

extern const struct goblin__command goblin__commands[];
extern const size_t goblin__command_count;

/* One command in flight: what a handler sees. */
struct goblin__exec {
    goblin_engine *eng;
    goblin_session *sess;
    goblin_store *st;
    struct goblin_sink *sink; /* where replies go (a discarding sink while
                               * CLIENT REPLY OFF or SKIP applies) */
    struct goblin_sink *out;  /* the caller's sink */
    const struct goblin__command *cmd;
    int resp;    /* 2 or 3: the shape of replies that differ by version */
    bool failed; /* set by goblin__reply_error*: counts failed_calls */
    /* Typed list replies (respond.h, goblin__reply_strings and friends)
     * for a protocol that carries them as their own messages (SBE);
     * NULL: they are written item by item to sink. */
    const struct goblin__typed_replies *typed;
};

/* Runs one command given as argv (argv[0] the name) for session s into
 * sink, with every check the RESP path makes: lookup, arity, auth, MULTI
 * queueing, statistics. Writes exactly one reply (for a MULTI queued
 * command "+QUEUED"). argv is borrowed for the call. Returns 0, or a
 * negative code when the session must close after the reply is flushed
 * (QUIT, CLIENT KILL of itself). This is how the SBE layer reuses the
 * table. */
int goblin__command_execute(goblin_session *s, int argc,
                            const struct goblin_slice *argv,
                            struct goblin_sink *sink);

/* Finds a top-level command by name, case-insensitively, in O(1) through
 * the engine's lookup table, without allocating; NULL if unknown. This is
 * the lookup for calls: a "parent|sub" fullname is not a command name
 * (Redis answers "unknown command 'CONFIG|GET'"). */
const struct goblin__command *goblin__command_lookup(
    const goblin_engine *eng, struct goblin_slice name);

/* What goblin__command_lookup_hinted remembers of the last name it found
 * (all zero at first): the table slot's value and, for a name of under 8
 * bytes, the name's bytes as sent (goblin__short_word). rename-command
 * forgets every hint. */
struct goblin__lookup_hint {
    uint64_t word;
    uint32_t v;
};

/* The bytes of an n-byte string (1 <= n < 8) in one word, by fixed-size
 * loads only: two overlapping halves from 4 bytes, else the first,
 * middle and last bytes. For one n, equal words mean equal strings. */
static inline uint64_t goblin__short_word(const unsigned char *p, size_t n)
{
    if (n >= 4)
        return goblin__ld32(p) | (uint64_t)goblin__ld32(p + n - 4) << 32;
    return (uint64_t)p[0] | (uint64_t)p[n >> 1] << 8 |
           (uint64_t)p[n - 1] << 16;
}

const struct goblin__command *goblin__command_lookup_slow(
    const goblin_engine *eng, struct goblin_slice name,
    struct goblin__lookup_hint *hint);

/* goblin__command_lookup for a caller that keeps *hint: when name is,
 * byte for byte, the short name the hint remembers (a client sending the
 * same command again), one comparison of words finds it, inline
 * (goblin__lookup_hint_hit, NULL otherwise); else the table is looked in
 * (a longer name the hint remembers is compared with the table's copy
 * first) and the hint set. */
static inline const struct goblin__command *goblin__lookup_hint_hit(
    const struct goblin__lookup_hint *hint, struct goblin_slice name)
{
    uint32_t v = hint->v;

    if (v != 0 && name.len < 8 && ((v >> 16) & 0x7fff) == name.len &&
        goblin__short_word(name.ptr, name.len) == hint->word)
        return &goblin__commands[(v & 0xffff) - 1];
    return NULL;
}

static inline const struct goblin__command *goblin__command_lookup_hinted(
    const goblin_engine *eng, struct goblin_slice name,
    struct goblin__lookup_hint *hint)
{
    const struct goblin__command *c = goblin__lookup_hint_hit(hint, name);

    return c != NULL ? c : goblin__command_lookup_slow(eng, name, hint);
}

/* Finds a command or, by its "parent|sub" fullname, a subcommand, as
 * COMMAND INFO and COMMAND DOCS name them (the parent by the name calls
 * use, after rename-command); NULL if unknown. */
const struct goblin__command *goblin__command_lookup_fullname(
    const goblin_engine *eng, struct goblin_slice name);

/* goblin__command_lookup by the names the commands had before any
 * rename-command, as ACL rules name them (Redis's orig_commands). */
const struct goblin__command *goblin__command_lookup_orig(
    const goblin_engine *eng, struct goblin_slice name);

/* Whether rename-command NAME "" removed c (and its subcommands) from
 * the table calls use: COMMAND, COMMAND COUNT, LIST and DOCS leave it
 * out. A renamed command stays, under its own name, as in Redis. */
bool goblin__command_gone(const goblin_engine *eng,
                          const struct goblin__command *c);

/* rename-command from to (to empty: the command is disabled), at start.
 * 0, or a negative code with Redis's reason in *why. */
int goblin__command_rename(goblin_engine *eng, struct goblin_slice from,
                           struct goblin_slice to, const char **why);

/* Finds the subcommand of container parent named sub; NULL if none. */
const struct goblin__command *goblin__command_lookup_sub(
    const goblin_engine *eng, const struct goblin__command *parent,
    struct goblin_slice sub);

#endif
