/* argv_form.h - the argv form of a typed SBE request: the words of the
 * RESP command that does what the frame does, numbers written as Redis
 * writes them (integers in decimal, doubles as goblin_double_format, score
 * bounds with "(" when exclusive, lex bounds as "[m", "(m", "-", "+").
 *
 * Typed frames carry native values and no words, but the write stream
 * (the AOF and replicas) and MONITOR are made of words: while either has
 * a consumer, a typed request runs through goblin__sbe_run_logged, so
 * that its effect goes out exactly as its RESP form's would, and a
 * monitor sees the line the RESP form would show.
 *
 * Frames whose RESP form would not reach the command (a frame that does
 * not decode, flag bits or enum values the schema does not define, an
 * empty group where RESP's arity needs an argument) have no argv form;
 * their handlers refuse them without touching the store.
 */
#ifndef GOBLIN_SBE_ARGV_FORM_H
#define GOBLIN_SBE_ARGV_FORM_H

#include "goblin/buf.h"
#include "request.h"

struct goblin__argv_form {
    int argc;
    struct goblin_slice *argv; /* argc words, valid until _free */
    struct goblin_buf words;   /* the slices */
    struct goblin_buf text;    /* numbers and bounds the words point to */
};

/* Builds the argv form of message m into f (alloc: the allocator of its
 * buffers). Returns 1 (f->argc, f->argv set), 0 when the frame has none
 * (see above), or GOBLIN_ENOMEM. The words point into m's bytes too. */
int goblin__argv_form_build(struct goblin__argv_form *f,
                            struct goblin_sbe_msg *m,
                            const struct goblin_allocator *alloc);

void goblin__argv_form_free(struct goblin__argv_form *f);

/* The name of the command template id's argv form starts with, or NULL
 * for templates without one (replies, and the requests the command table
 * runs from words: AUTH, HELLO, INFO, Argv). */
const char *goblin__argv_form_name(unsigned id);

/* Runs typed request r (admitted, r->x.cmd set) through handler fn while
 * the write stream has a consumer or a monitor is connected: the stream
 * gets its effect as the argv form's (stream/propagate.h), monitors its
 * line after it ran. A write whose form cannot be built for lack of
 * memory is refused (OOM reply) rather than left out of the stream. */
void goblin__sbe_run_logged(struct goblin__sbe_req *r,
                            goblin__sbe_handler *fn);

/* A typed request r that ran and took ticks, at or over the slow log's or
 * the latency monitor's threshold: logged as its argv form, as a RESP
 * command is (engine/slowlog.h); by its command's name alone when the
 * form cannot be built for lack of memory. */
void goblin__sbe_slowlog_watch(struct goblin__sbe_req *r, uint64_t ticks);

#endif
