/* request.h - running SBE requests: the per-session state of lib/sbe,
 * what a request handler sees, and one handler per request template
 * (GOBLIN_SBE_REQUESTS, generated from the schema, lists them; session.c
 * dispatches on the template id with one dense switch).
 *
 * A handler decodes its message in place, calls the store with the
 * native numbers it carries and replies through the command layer's reply
 * helpers (respond.h) on the session's SBE sink, or through the typed
 * replies of sbe.h, so errors count in INFO errorstats as on RESP. Texts
 * are Redis's, as the RESP handlers write them. Views into the message
 * stay valid for the whole handler.
 */
#ifndef GOBLIN_SBE_REQUEST_H
#define GOBLIN_SBE_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "commands/respond.h"
#include "goblin/keys.h"
#include "commands/session.h"
#include "sbe.h"
#include "sbe/goblin_sbe_gen.h"

/* Command table entries cached per template id, for INFO commandstats. */
#define GOBLIN__SBE_TEMPLATE_SLOTS 128

/* lib/sbe's state of one session (s->sbe). */
struct goblin__sbe_state {
    struct goblin__sbe_sink sink; /* replies into the session's output */
    struct goblin_buf scratch;    /* arrays a request gathers */
    struct goblin_buf copies;     /* bytes copied out of the store */
    uint32_t max_frame;           /* longest frame accepted */
    bool magic_done;              /* the magic has been consumed */
    const struct goblin__command *cmds[GOBLIN__SBE_TEMPLATE_SLOTS];
    uint8_t kinds[GOBLIN__SBE_TEMPLATE_SLOTS]; /* session.c: KIND_* */
};

/* One request in flight. */
struct goblin__sbe_req {
    goblin__exec x;                /* x.sink: the SBE sink, or discard */
    struct goblin__sbe_state *ss;
    struct goblin_sbe_msg *m;
    bool quiet;                    /* CLIENT REPLY OFF or SKIP */
};

#define GOBLIN__SBE_DECLARE(ID, name) \
    void goblin__sbe_##name(struct goblin__sbe_req *r);
GOBLIN_SBE_REQUESTS(GOBLIN__SBE_DECLARE)
#undef GOBLIN__SBE_DECLARE

/* ---- helpers (request.c) ---- */

/* Checks a decode result: on failure replies "ERR malformed SBE frame:
 * <why>" and returns false. */
bool goblin__sbe_decoded(struct goblin__sbe_req *r, int rc);

/* The sink typed replies go to, or NULL while replies are suppressed. */
struct goblin__sbe_sink *goblin__sbe_out(struct goblin__sbe_req *r);

/* Replies an int64 result, or the error of a negative one. */
void goblin__sbe_count(struct goblin__sbe_req *r, int64_t rc);

/* Replies a view (rc 1), nil (rc 0) or the error of rc. */
void goblin__sbe_view(struct goblin__sbe_req *r, int rc,
                      struct goblin_slice v);

/* Room for n items of size bytes in the scratch area (previous contents
 * dropped); replies OOM and returns NULL when it cannot grow. */
void *goblin__sbe_scratch(struct goblin__sbe_req *r, size_t n, size_t size);

/* The data fields of every entry of g (nvar per entry, entry by entry)
 * as slices in the scratch area, with one spare slot after them; *n gets
 * how many. NULL after an OOM reply. */
struct goblin_slice *goblin__sbe_gather(struct goblin__sbe_req *r,
                                        struct goblin_sbe_group g,
                                        unsigned nvar, size_t *n);

/* "ERR wrong number of arguments for '<name>' command". */
void goblin__sbe_arity(struct goblin__sbe_req *r, const char *name);

/* Runs argv through the command table (goblin__command_execute) into the
 * request's sink. */
void goblin__sbe_run_argv(struct goblin__sbe_req *r, int argc,
                      const struct goblin_slice *argv);

/* Counts a keyspace hit (found > 0) or miss (found == 0). */
void goblin__sbe_hit(struct goblin__sbe_req *r, int found);

/* Members with scores gathered from a store visitor into the scratch
 * area (goblin__sbe_keep is the visitor). With copy, the member bytes
 * are copied too, for visitors whose views die with the call (ZPOP*,
 * ZUNION, ...). goblin__sbe_kept() gives the array once the call is
 * done. */
struct goblin__sbe_members {
    struct goblin__sbe_req *r;
    size_t n;
    bool copy;
};
void goblin__sbe_members_start(struct goblin__sbe_members *c,
                               struct goblin__sbe_req *r, bool copy);
int goblin__sbe_keep(void *ctx, struct goblin_slice member, double score);
struct goblin__sbe_scored *goblin__sbe_kept(struct goblin__sbe_members *c);

/* ScoredArrayReply of v, or with !scores ArrayReply of the members (v is
 * overwritten). Nothing while replies are suppressed. */
void goblin__sbe_reply_members(struct goblin__sbe_req *r,
                               struct goblin__sbe_scored *v, size_t n,
                               bool scores);

/* req_keys.c: the SCAN family's flags and count into *o; replies a
 * syntax error and returns false for a count below 1, unknown flags, or
 * a type where none is allowed. */
bool goblin__sbe_scan_options(struct goblin__sbe_req *r, unsigned flags,
                              int64_t count, bool allow_type,
                              struct goblin_scan_options *o);

/* session.c: the SBE side of a session's input (input.c calls them).
 * session_input: consumes SBE frames from p[0..len), executing each and
 * appending replies to the session's output; *used gets the bytes
 * consumed (whole frames). Returns 0, or a negative code when the session
 * must close after its output is flushed. session_free: releases s->sbe
 * (installed as s->sbe_free). */
int goblin__sbe_session_input(goblin_session *s, const unsigned char *p,
                              size_t len, size_t *used);
void goblin__sbe_session_free(goblin_session *s);

/* session.c: one ring record that holds exactly one whole frame of an SBE
 * session past its magic, with nothing buffered before it: the frame is
 * copied to the stack (the client may still write the record) and run
 * without going through the session's input. Returns 1 when it ran
 * (with *rc as goblin_session_feed's), 0 when the record must take the
 * general way (goblin_session_feed). */
int goblin__sbe_record(goblin_session *s, const void *rec, size_t len,
                       int *rc);

/* session.c: sets the session's frame limit (tests use small ones). */
void goblin__sbe_set_max_frame(goblin_session *s, uint32_t max);

#endif
