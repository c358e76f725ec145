/* script.h - libgoblin-script's private parts: the scripting state an
 * engine carries (one Lua 5.1 interpreter for EVAL, one for FUNCTION
 * libraries, as Redis 7 keeps them apart), and the pieces each file of
 * lib/script implements.
 *
 * Memory: both interpreters allocate through counting allocators (vm.c)
 * whose total INFO shows as used_memory_lua and which refuse to grow past
 * the engine's lua-heap-max while a script runs or a library loads (the
 * script then fails with Lua's "not enough memory", and a full collection
 * gives the heap back). Outside a script run (building replies,
 * setting up) nothing is refused, so no Lua API call made outside a
 * protected call can raise.
 */
#ifndef GOBLIN_SCRIPT_INT_H
#define GOBLIN_SCRIPT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <lua.h>

#include "goblin/buf.h"
#include "goblin/reply.h"
#include "goblin/resp.h"
#include "goblin/script.h"

/* Deepest table nesting a reply converts (Redis stops at Lua's stack
 * limit, about the same depth). */
#define GOBLIN__LUA_DEPTH_MAX 1000

struct goblin__lua;

/* KEYS or ARGV: the array the last run had (a registry reference, or
 * LUA_NOREF) and how many strings it was made for; name_ref holds the
 * global's name. */
struct goblin__vm_array {
    int ref, name_ref;
    size_t n;
};

/* One interpreter and its accounting. */
struct goblin__vm {
    lua_State *L;
    struct goblin__lua *g;
    size_t used;  /* bytes the allocator holds */
    size_t limit; /* while bounded: refuse growth past it */
    int ref_real, ref_globals; /* registry slots of the two global tables */
    int ref_handler;           /* and of goblin__lua_error_handler */
    struct goblin__vm_array keys, argv; /* EVAL's KEYS and ARGV */
    bool bounded;
};

/* A function of a library: its callback is a reference in the function
 * interpreter's registry. */
struct goblin__fn {
    char *name;
    size_t name_len;
    char *desc;        /* NULL: none */
    unsigned flags;    /* GOBLIN_SCRIPT_NO_WRITES ... */
    int ref;
    struct goblin__lib *lib;
};

/* A library: its name, its whole code (header included), its functions. */
struct goblin__lib {
    char *name;
    char *code;
    size_t code_len;
    struct goblin__fn *fns;
    size_t nfns, cap_fns;
};

/* A set of libraries, in load order. */
struct goblin__libset {
    struct goblin__lib **v;
    size_t n, cap;
    size_t nfunctions;
};

/* A flag's name, as shebangs, register_function and FUNCTION LIST spell
 * it, in Redis's order. */
struct goblin__flag_name {
    const char *name;
    unsigned flag;
};
extern const struct goblin__flag_name goblin__flag_names[];

/* EVAL's cache index (sha_cache.c): a script's SHA-1 -> its function's
 * registry reference in EVAL's interpreter (never 0, which marks a free
 * slot) and its shebang flags. */
struct goblin__sha_entry {
    char sha[40];
    int ref;
    unsigned flags;
};
struct goblin__sha_cache {
    struct goblin__sha_entry *v;
    size_t n, cap; /* cap: 0 or a power of two */
};

struct goblin__lua {
    goblin_engine *eng;
    struct goblin__vm eval; /* EVAL's interpreter (SCRIPT FLUSH renews it) */
    struct goblin__sha_cache scripts; /* EVAL's cache */
    size_t nscripts;        /* scripts in EVAL's cache */
    size_t scripts_bytes;   /* their source text */
    struct goblin__vm fn;   /* the function libraries' interpreter */
    struct goblin__libset libs;
    struct goblin__lib *loading;   /* register_function's target */
    uint64_t load_started_ms;
    int running_argc;              /* the running FCALL (FUNCTION STATS) */
    const struct goblin_slice *running_argv;
    struct goblin_script_run *run; /* the run in progress, NULL if none */
    const char *funcname;          /* the running script's name (sha) */
    bool timed_out;                /* past busy-reply-threshold (busy.c) */
    uint64_t started_ns;
    uint64_t rand48;               /* math.random's state, Redis's lrand48 */
    /* redis.call's scratch: the argv slices, number texts, the reply. */
    struct goblin_slice *argv;
    size_t cap_argv;
    char *numtext;
    size_t cap_numtext;
    struct goblin_buf reply;
    struct goblin_buf scratch; /* cmsgpack.pack's output */
};


/* vm.c: opens vm (the libraries, the sandbox, the redis table) or
 * closes it. Returns 0 or GOBLIN_ENOMEM. */
int goblin__vm_open(struct goblin__lua *g, struct goblin__vm *vm);
void goblin__vm_close(struct goblin__vm *vm);
/* Bounds vm's heap by lua-heap-max (on) or lifts the bound (off). */
void goblin__vm_bound(struct goblin__vm *vm, bool on);
/* After a run refused for memory: collects until the heap stops
 * shrinking, so what the run built is given back at once. */
void goblin__vm_reclaim(struct goblin__vm *vm);
/* After a run that returned rc: gives the heap back after a memory
 * error. */
void goblin__vm_after_run(struct goblin__vm *vm, int rc);
/* The counting allocator (its ud is the vm). */
void *goblin__vm_alloc(void *ud, void *ptr, size_t osize, size_t nsize);
/* The engine's state, from any of its interpreters. */
struct goblin__lua *goblin__vm_owner(lua_State *L);
/* Pushes the sandbox's global table (what scripts see as _G). */
void goblin__vm_push_globals(lua_State *L);
/* Sets the globals KEYS and ARGV to arrays of keys and args, in the real
 * global table (the read-only guard is the proxy's). */
void goblin__vm_set_keys_argv(lua_State *L, const struct goblin_slice *keys,
                              size_t nkeys, const struct goblin_slice *args,
                              size_t nargs);

/* Pushes goblin__lua_error_handler, made once per interpreter (a
 * closure pushed per run would be garbage per run). */
void goblin__vm_push_handler(lua_State *L);

/* Pushes the real global table (the libraries) the proxy reads
 * through. */
void goblin__vm_push_real(lua_State *L);

/* redis_api.c: the redis table (redis.call and the rest) into the table
 * on top of the stack. */
void goblin__redis_api_open(lua_State *L);
/* What a library's code may use while it loads: redis.log, the levels and
 * the version, into the table on top. */
void goblin__redis_load_api_open(lua_State *L);
/* The error handler scripts run under: turns any error value into
 * Redis's error table {err=, source=, line=}. */
int goblin__lua_error_handler(lua_State *L);
/* Pushes Redis's error table for text ("-CODE msg" or "msg": code ERR). */
void goblin__lua_push_error(lua_State *L, const char *text, size_t len);

/* call_reply.c: the sink redis.call's command replies into (plain
 * scalars kept as they are, the rest as RESP in buf), and the Lua value
 * it makes of the reply once the command has returned. */
enum {
    GOBLIN__CALL_NONE, /* nothing written yet */
    GOBLIN__CALL_INT,
    GOBLIN__CALL_BULK,   /* its bytes in buf */
    GOBLIN__CALL_NULL,
    GOBLIN__CALL_STATUS, /* its text in buf */
    GOBLIN__CALL_RESP,   /* the reply as RESP in buf */
};
struct goblin__call_reply {
    struct goblin_sink sink; /* first: the ops find the struct from it */
    struct goblin_resp_writer w;
    struct goblin_buf *buf;
    int kind, resp;
    int64_t i;
};
/* Starts r over buf (emptied) for a script speaking RESP resp_version;
 * returns the sink to reply into. */
struct goblin_sink *goblin__call_reply_init(struct goblin__call_reply *r,
                                            struct goblin_buf *buf,
                                            int resp_version);
/* Pushes the reply's Lua value: returns 1 for an error reply, 0 for any
 * other, -1 (nothing pushed) when no reply could be kept (memory). */
int goblin__call_reply_push(lua_State *L, struct goblin__call_reply *r);

/* convert.c: RESP bytes (one whole reply written by libgoblin) to the Lua
 * value redis.call returns; and the value on top of the stack to a reply
 * in sink (popped), shaped by the script's RESP version script_resp. */
void goblin__lua_push_resp(lua_State *L, const char *p, size_t len);
/* s is the session whose command replies (NULL: none). */
void goblin__lua_reply(lua_State *L, goblin_session *s, int script_resp,
                       struct goblin_sink *sink);
/* An error reply of NUL-terminated text. */
void goblin__lua_reply_error(struct goblin_sink *sink, const char *text);
/* Pushes an array table of the n strings v (KEYS, ARGV). */
void goblin__lua_push_strings(lua_State *L, const struct goblin_slice *v,
                              size_t n);
/* EVAL's and FCALL's numkeys (argv[2], argc arguments in all): 0 with
 * *out set, or -1 after replying the error (parse_error when it is not
 * an integer: the two commands word that one differently). */
int goblin__lua_numkeys(int argc, const struct goblin_slice *argv,
                        const char *parse_error, struct goblin_sink *sink,
                        int64_t *out);

/* busy.c: the hook of a run (start before, stop after the call), and
 * SCRIPT KILL (eval) or FUNCTION KILL (!eval). */
void goblin__script_hook_start(struct goblin__lua *g, struct goblin__vm *vm);
void goblin__script_hook_stop(struct goblin__lua *g, struct goblin__vm *vm);
void goblin__script_kill(struct goblin__lua *g, bool eval,
                         struct goblin_sink *sink);
/* How long the running script has run. */
uint64_t goblin__script_elapsed_ns(const struct goblin__lua *g);

/* prologue.c: writes into out (cap bytes) what EVAL compiles before the
 * script body (after its shebang): locals for the globals redis, KEYS and
 * ARGV where that changes nothing a script sees. Returns its length, or
 * 0 for none. */
size_t goblin__script_prologue(const char *body, size_t len, char *out,
                               size_t cap);

/* sha_cache.c: the entry of sha (lower case), or NULL; adding one (0 or
 * GOBLIN_ENOMEM); emptying the cache. */
const struct goblin__sha_entry *
goblin__sha_cache_find(const struct goblin__sha_cache *c, const char sha[40]);
int goblin__sha_cache_add(struct goblin__sha_cache *c, const char sha[40],
                          int ref, unsigned flags);
void goblin__sha_cache_clear(struct goblin__sha_cache *c);

/* eval.c: the error a failed run left on top of the stack, written to
 * sink with Redis's " script: NAME, on SOURCE:LINE." (popped). */
void goblin__lua_run_error(lua_State *L, goblin_session *s,
                           const char *funcname, struct goblin_sink *sink);
/* SCRIPT FLUSH: a fresh EVAL interpreter. Returns 0 or GOBLIN_ENOMEM. */
int goblin__eval_flush(struct goblin__lua *g);

/* eval.c: EVAL, EVALSHA, their _RO forms, SCRIPT. */
void goblin__eval_command(struct goblin__lua *g, goblin_session *s, int argc,
                          const struct goblin_slice *argv,
                          struct goblin_sink *sink);

/* function.c: the function interpreter (0 or GOBLIN_ENOMEM), names,
 * the library sets, FUNCTION LOAD's work and FCALL. */
int goblin__fn_vm_open(struct goblin__lua *g);
bool goblin__fn_name_ok(const char *p, size_t len);
struct goblin__lib *goblin__lib_find(const struct goblin__libset *set,
                                     const char *name, size_t len);
struct goblin__fn *goblin__fn_find(const struct goblin__libset *set,
                                   const char *name, size_t len);
void goblin__lib_unlink(struct goblin__libset *set, struct goblin__lib *lib);
int goblin__lib_link(struct goblin__libset *set, struct goblin__lib *lib);
void goblin__lib_delete(struct goblin__lua *g, struct goblin__libset *set,
                        struct goblin__lib *lib);
/* Deletes every library of set and its array. */
void goblin__lib_flush(struct goblin__lua *g, struct goblin__libset *set);
size_t goblin__lib_memory(const struct goblin__libset *set);
/* Builds a library from code (checked against set: replace allows one of
 * the same name) into *out, not yet in any set. Returns 0, or an error
 * with Redis's text ("ERR ...") in err. */
int goblin__lib_create(struct goblin__lua *g,
                       const struct goblin__libset *set,
                       struct goblin_slice code, bool replace,
                       struct goblin__lib **out, char *err, size_t cap);
/* Puts lib into set in place of the library of its name, if any. On
 * GOBLIN_ENOMEM lib is freed and set is unchanged. */
int goblin__lib_commit(struct goblin__lua *g, struct goblin__libset *set,
                       struct goblin__lib *lib);
void goblin__lib_discard(struct goblin__lua *g, struct goblin__lib *lib);
void goblin__fcall(struct goblin__lua *g, goblin_session *s, int argc,
                   const struct goblin_slice *argv, bool ro,
                   struct goblin_sink *sink);

/* function_cmd.c: FUNCTION's subcommands. */
void goblin__function_command(struct goblin__lua *g, goblin_session *s,
                              int argc, const struct goblin_slice *argv,
                              struct goblin_sink *sink);

/* libraries Debian's Lua lacks, written here. */
int goblin__luaopen_cmsgpack(lua_State *L);
int goblin__luaopen_struct(lua_State *L);

#endif
