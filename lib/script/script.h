/* script.h - libgoblin-script's private parts: the scripting state an
 * engine carries (one Lua 5.1 interpreter for EVAL, one for FUNCTION
 * libraries, as Redis 7 keeps them apart), and the pieces each file of
 * lib/script implements.
 *
 * Memory: both interpreters allocate through counting allocators (vm.c)
 * whose total INFO shows as used_memory_lua and which refuse to grow past
 * GOBLIN__LUA_HEAP_MAX while a script runs (the script then fails with
 * Lua's "not enough memory"). Outside a script run (building replies,
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
#include "goblin/script.h"

/* The most heap one interpreter may hold while a script runs. */
#define GOBLIN__LUA_HEAP_MAX ((size_t)1 << 30)

/* Deepest table nesting a reply converts (Redis stops at Lua's stack
 * limit, about the same depth). */
#define GOBLIN__LUA_DEPTH_MAX 1000

struct goblin__lua;

/* One interpreter and its accounting. */
struct goblin__vm {
    lua_State *L;
    struct goblin__lua *g;
    size_t used;  /* bytes the allocator holds */
    bool bounded; /* refuse growth past GOBLIN__LUA_HEAP_MAX */
};

struct goblin__lua {
    goblin_engine *eng;
    struct goblin__vm eval; /* EVAL's interpreter (SCRIPT FLUSH renews it) */
    size_t nscripts;        /* scripts in EVAL's cache */
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
/* The counting allocator (its ud is the vm). */
void *goblin__vm_alloc(void *ud, void *ptr, size_t osize, size_t nsize);
/* The engine's state, from any of its interpreters. */
struct goblin__lua *goblin__vm_owner(lua_State *L);
/* Pushes the sandbox's global table (what scripts see as _G). */
void goblin__vm_push_globals(lua_State *L);
/* Sets name in the real global table (KEYS, ARGV), bypassing the
 * read-only guard; pops the value. */
void goblin__vm_set_global(lua_State *L, const char *name);

/* redis_api.c: the redis table (redis.call and the rest) into the table
 * on top of the stack. */
void goblin__redis_api_open(lua_State *L);
/* The error handler scripts run under: turns any error value into
 * Redis's error table {err=, source=, line=}. */
int goblin__lua_error_handler(lua_State *L);
/* Pushes Redis's error table for text ("-CODE msg" or "msg": code ERR). */
void goblin__lua_push_error(lua_State *L, const char *text, size_t len);

/* convert.c: RESP bytes (one whole reply written by libgoblin) to the Lua
 * value redis.call returns; and the value on top of the stack to a reply
 * in sink (popped), shaped by the script's RESP version script_resp. */
void goblin__lua_push_resp(lua_State *L, const char *p, size_t len);
void goblin__lua_reply(lua_State *L, int script_resp, struct goblin_sink *sink);

/* busy.c: the hook of a run (start before, stop after the call), and
 * SCRIPT KILL (eval) or FUNCTION KILL (!eval). */
void goblin__script_hook_start(struct goblin__lua *g, struct goblin__vm *vm);
void goblin__script_hook_stop(struct goblin__lua *g, struct goblin__vm *vm);
void goblin__script_kill(struct goblin__lua *g, bool eval,
                         struct goblin_sink *sink);

/* eval.c: the error a failed run left on top of the stack, written to
 * sink with Redis's " script: NAME, on SOURCE:LINE." (popped). */
void goblin__lua_run_error(lua_State *L, const char *funcname,
                           struct goblin_sink *sink);
/* SCRIPT FLUSH: a fresh EVAL interpreter. Returns 0 or GOBLIN_ENOMEM. */
int goblin__eval_flush(struct goblin__lua *g);

/* eval.c: EVAL, EVALSHA, their _RO forms, SCRIPT. */
void goblin__eval_command(struct goblin__lua *g, goblin_session *s, int argc,
                          const struct goblin_slice *argv,
                          struct goblin_sink *sink);

/* libraries Debian's Lua lacks, written here. */
int goblin__luaopen_cmsgpack(lua_State *L);
int goblin__luaopen_struct(lua_State *L);

#endif
