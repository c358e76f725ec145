/* pause.h - CLIENT PAUSE and CLIENT UNPAUSE, as Redis 7.0's pauseClients.
 *
 * While a pause is in effect, a command that it covers waits: it is not
 * run, not answered and not consumed. With ALL that is every command;
 * with WRITE it is every command that may write or replicate: the write
 * and may-replicate ones of the table (PUBLISH, EVAL without a no-writes
 * shebang, ...), and EXEC of a queue holding one. The check comes after
 * every refusal (unknown command, arity, NOAUTH, ACL, ...), which is
 * still answered at once, as in Redis's processCommand. The session
 * (SESS_PAUSED) then runs none of its input; when the pause ends, by its
 * timeout or CLIENT UNPAUSE, each waiting session is woken and its
 * transport runs the held command and what follows, on sockets and
 * rings alike. A held session shows in INFO's blocked_clients and as
 * flag b in CLIENT LIST, with the held command as cmd.
 *
 * A pause also stops expiry and eviction: a read command treats an
 * expired key as missing but leaves it in place (no "expired" event, no
 * DEL for replicas), the cron deletes none, and eviction waits.
 */
#ifndef GOBLIN_PAUSE_H
#define GOBLIN_PAUSE_H

#include <stdbool.h>
#include <stdint.h>

#include "session.h"

enum { GOBLIN__PAUSE_NONE = 0, GOBLIN__PAUSE_WRITE = 1, GOBLIN__PAUSE_ALL = 2 };

/* CLIENT PAUSE: the stronger of the two types, the later of the two
 * ends (end_ms on the store clock). */
void goblin__pause(goblin_engine *eng, int type, int64_t end_ms);

/* CLIENT UNPAUSE, or the pause's end: wakes every waiting session. */
void goblin__unpause(goblin_engine *eng);

/* Does the command cmd (argv[0..argc), or none for a typed request)
 * wait? Ends a pause whose time has passed. Only called while
 * eng->pause_type != 0. */
bool goblin__pause_holds(goblin_session *s, const struct goblin__command *cmd,
                         int argc, const struct goblin_slice *argv);

/* Is a pause in effect (expiry and eviction wait)? Ends one whose time
 * has passed. */
bool goblin__pause_active(goblin_engine *eng);

/* Sessions waiting for the pause to end (INFO blocked_clients). */
size_t goblin__pause_count(const goblin_engine *eng);

#endif
