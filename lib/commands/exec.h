/* exec.h - the execution of each command, shared by every protocol.
 *
 * A command runs in two steps. Its arguments are decoded first: from
 * argv text by its RESP handler (cmd_*.c, which keeps every text-parsing
 * error: "ERR value is not an integer or out of range", "ERR syntax
 * error", ...), or from a typed SBE frame's native fields (lib/sbe
 * req_*.c). Both then call the one execution function below, which runs
 * the command on the store and writes its whole reply through x->sink
 * with Redis's texts, so the two protocols cannot drift.
 *
 * Executions allocate nothing of their own and look nothing up by name:
 * a fast path may call them directly. Slices are borrowed for the call;
 * arrays of keys or pairs may live in the session's scratch array only
 * where the function says so. Grouped by type, as cmd_*.c are.
 */
#ifndef GOBLIN_EXEC_H
#define GOBLIN_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "command.h"
#include "goblin/str.h"

/* ---- strings (cmd_string.c) ---- */

void goblin__exec_get(goblin__exec *x, struct goblin_slice key);
/* SET and its forms (SETEX, PSETEX): so as goblin_str_set takes it. */
void goblin__exec_set(goblin__exec *x, struct goblin_slice key,
                      struct goblin_slice value,
                      const struct goblin_set_options *so);
void goblin__exec_setnx(goblin__exec *x, struct goblin_slice key,
                        struct goblin_slice value);
void goblin__exec_getset(goblin__exec *x, struct goblin_slice key,
                         struct goblin_slice value);
void goblin__exec_getdel(goblin__exec *x, struct goblin_slice key);
/* GETEX with mode DEFAULT (no option), EX, PX, EXAT, PXAT or PERSIST. */
void goblin__exec_getex(goblin__exec *x, struct goblin_slice key,
                        enum goblin_ttl_mode mode, int64_t t);
/* MGET: keys must not be the session's scratch array (the values go
 * there). */
void goblin__exec_mget(goblin__exec *x, const struct goblin_slice *keys,
                       size_t n);
/* MSET and MSETNX: n keys and their n values. */
void goblin__exec_mset(goblin__exec *x, const struct goblin_slice *keys,
                       const struct goblin_slice *values, size_t n);
void goblin__exec_msetnx(goblin__exec *x, const struct goblin_slice *keys,
                         const struct goblin_slice *values, size_t n);
void goblin__exec_append(goblin__exec *x, struct goblin_slice key,
                         struct goblin_slice value);
void goblin__exec_strlen(goblin__exec *x, struct goblin_slice key);
void goblin__exec_setrange(goblin__exec *x, struct goblin_slice key,
                           int64_t offset, struct goblin_slice value);
void goblin__exec_getrange(goblin__exec *x, struct goblin_slice key,
                           int64_t start, int64_t end);
/* INCR, DECR, INCRBY: adds delta. */
void goblin__exec_incrby(goblin__exec *x, struct goblin_slice key,
                         int64_t delta);
/* DECRBY: subtracts decrement (INT64_MIN cannot be negated). */
void goblin__exec_decrby(goblin__exec *x, struct goblin_slice key,
                         int64_t decrement);
/* INCRBYFLOAT: the increment as a native number (incr), or as text that
 * the store reads after checking the key, in Redis's order (incr NULL). */
void goblin__exec_incrbyfloat(goblin__exec *x, struct goblin_slice key,
                              const long double *incr,
                              struct goblin_slice text);

#endif
