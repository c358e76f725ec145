/* monitor.h - MONITOR: every command the server runs, as one line to each
 * monitoring session, in Redis 7.0's format (replication.c
 * replicationFeedMonitors):
 *
 *   +1339518083.107412 [0 127.0.0.1:60866] "keys" "*"
 *
 * with "[db unix:<socket path>]" for Unix socket clients, "[db lua]" for
 * a script's commands, every argument quoted as sdscatrepr quotes it, and
 * AUTH's, HELLO AUTH's and MIGRATE AUTH/AUTH2's secrets as "(redacted)".
 * A command is shown after it ran (so SELECT shows its new database),
 * unless the table flags it admin or skip_monitor; the scripting commands
 * are shown before their script's commands, as Redis's EVAL shows itself.
 * Unused (no monitor), the cost is one test in goblin__run.
 */
#ifndef GOBLIN_MONITOR_H
#define GOBLIN_MONITOR_H

#include "session.h"

/* MONITOR: s joins the monitors. */
void goblin__monitor_add(goblin_session *s);
/* s leaves them (RESET, close). */
void goblin__monitor_remove(goblin_session *s);
/* Shows argv of x to every monitor (x->cmd has run, or is a script
 * command about to run). */
void goblin__monitor_feed(goblin__exec *x, int argc,
                          const struct goblin_slice *argv);
void goblin__monitor_free(goblin_engine *eng);

#endif
