/* fn_libs.h - the function libraries in the engine's files: what a
 * snapshot, an RDB file or an AOF base being written carries, and where
 * the libraries a file holds go when it loads (the scripting library's
 * goblin_function_libs hooks).
 */
#ifndef GOBLIN_ENGINE_FN_LIBS_H
#define GOBLIN_ENGINE_FN_LIBS_H

#include "session.h"
#include "snapshot/snapshot_int.h"

/* Fills f with the engine's libraries, for a file being written (none
 * without hooks). Returns 0 or GOBLIN_ENOMEM; goblin__fnlibs_done frees
 * what it took. */
int goblin__fnlibs_save(goblin_engine *eng, struct goblin__fnlibs *f);
void goblin__fnlibs_done(goblin_engine *eng, struct goblin__fnlibs *f);

/* Why a file with libraries is refused by an engine without scripting. */
#define GOBLIN__FNLIBS_NO_SCRIPTING                                          \
    "the file holds function libraries, but scripting is not available "    \
    "in this build (Goblin was built without Lua)"

/* Fills f so that a load adds each library it reads to the engine; an
 * engine without hooks (no scripting) fails the load at the first. */
void goblin__fnlibs_load(goblin_engine *eng, struct goblin__fnlibs *f);

/* Removes every library (a load starting, or one that failed). */
void goblin__fnlibs_flush(goblin_engine *eng);

#endif
