/* goblin/lua.h - libgoblin-script: Redis's scripting (EVAL, EVALSHA,
 * SCRIPT, FUNCTION, FCALL) with Lua 5.1, a companion library of
 * libgoblin (which carries no interpreter, see goblin/script.h).
 *
 * Lua 5.1 and its cjson and bit libraries link statically into the
 * program that links this library (Debian's liblua5.1.a is not
 * position-independent, so none of it can live in libgoblin.so).
 */
#ifndef GOBLIN_LUA_H
#define GOBLIN_LUA_H

#include "goblin/engine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Attaches Lua scripting to eng (goblin_engine_scripting): from now on
 * the scripting commands run. The state is freed with the engine.
 * Returns 0 or GOBLIN_ENOMEM. */
GOBLIN_API int goblin_lua_attach(goblin_engine *eng);

#ifdef __cplusplus
}
#endif

#endif
