/* goblin.h - the public API of libgoblin: an in-memory, Redis-compatible
 * data store, embeddable in-process and served by goblind.
 *
 * Each layer has its own header under goblin/; this one includes them all
 * but goblin/tls.h and goblin/lua.h, which belong to the companion
 * libraries libgoblin-tls and libgoblin-script.
 */
#ifndef GOBLIN_H
#define GOBLIN_H

#include "goblin/aof.h"
#include "goblin/buf.h"
#include "goblin/client.h"
#include "goblin/common.h"
#include "goblin/engine.h"
#include "goblin/hash.h"
#include "goblin/keys.h"
#include "goblin/list.h"
#include "goblin/numtext.h"
#include "goblin/reply.h"
#include "goblin/repl.h"
#include "goblin/resp.h"
#include "goblin/ring.h"
#include "goblin/sbe.h"
#include "goblin/script.h"
#include "goblin/serve.h"
#include "goblin/set.h"
#include "goblin/sha1.h"
#include "goblin/snapshot.h"
#include "goblin/str.h"
#include "goblin/stream.h"
#include "goblin/zset.h"

#endif
