/* request.h - running SBE requests: the per-session state of lib/sbe,
 * what a request handler sees, and one handler per request template
 * (GOBLIN_SBE_REQUESTS, generated from the schema, lists them; session.c
 * dispatches on the template id with one dense switch).
 *
 * A handler decodes its message in place into the arguments of the
 * command's execution function (commands/exec.h) and calls it: the
 * execution is the one RESP's handler calls, so the store calls, the
 * replies and Redis's texts exist once. Decoders refuse only what the
 * frame itself gets wrong (bits or enums the schema does not define, an
 * empty group where RESP's arity needs one, a NaN RESP cannot spell),
 * with the texts RESP gives in the same place. Views into the message
 * stay valid for the whole handler.
 */
#ifndef GOBLIN_SBE_REQUEST_H
#define GOBLIN_SBE_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "commands/respond.h"
#include "goblin/keys.h"
#include "engine/session.h"
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

/* What a template id is to a session (ss->kinds[], learnt by session.c
 * at its first use): a typed request, one routed through the command
 * table (Argv, AUTH, HELLO, INFO), not a request at all, or a typed
 * request whose command rename-command renamed or disabled (refused as
 * an unknown command: a typed frame has no name to call it by). */
enum {
    GOBLIN__SBE_KIND_UNSEEN = 0,
    GOBLIN__SBE_KIND_TYPED,
    GOBLIN__SBE_KIND_ROUTED,
    GOBLIN__SBE_KIND_INVALID,
    GOBLIN__SBE_KIND_RENAMED
};

/* direct.c: every request's handler by template id (NULL: none), the
 * jump table both paths dispatch through. */
typedef void goblin__sbe_handler(struct goblin__sbe_req *r);
extern goblin__sbe_handler *const
    goblin__sbe_handlers[GOBLIN__SBE_TEMPLATE_SLOTS];

/* direct.c: runs typed request r (admitted, its kind learnt) through its
 * handler, counted in INFO commandstats under its command, as both paths
 * run one. */
void goblin__sbe_run_typed(struct goblin__sbe_req *r);

/* typed.c: the typed list replies a request's x.typed points to. */
extern const struct goblin__typed_replies goblin__sbe_typed;

/* ---- helpers (request.c) ---- */

/* Checks a decode result: on failure replies "ERR malformed SBE frame:
 * <why>" and returns false. */
bool goblin__sbe_decoded(struct goblin__sbe_req *r, int rc);

/* Decodes request r->m of template name into v (a struct
 * goblin_sbe_<name>); on failure replies as goblin__sbe_decoded. */
#define GOBLIN__SBE_DECODED(name, v) \
    goblin__sbe_decoded(r, goblin_sbe_##name##_decode(&(v), r->m))

/* Room for n items of size bytes in the scratch area (previous contents
 * dropped); replies OOM and returns NULL when it cannot grow. */
void *goblin__sbe_scratch(struct goblin__sbe_req *r, size_t n, size_t size);

/* The next entry of g, a group of a message its decoder accepted: its
 * block (NULL after the last), and its nvar data fields in out[]. The
 * decoder (goblin_sbe_rt_group) has checked every entry's block and data
 * fields against the frame, which no one writes meanwhile (a ring record
 * is copied first; goblin_session_feed's caller keeps its bytes as they
 * are during the call), so unlike goblin_sbe_rt_entry_next this walk
 * checks nothing. */
static inline const uint8_t *goblin__sbe_next(struct goblin_sbe_group *g,
                                              unsigned nvar,
                                              struct goblin_slice *out)
{
    const uint8_t *block = g->p, *p = g->p + g->block_length;

    if (g->count == 0)
        return NULL;
    for (unsigned j = 0; j < nvar; j++) {
        uint32_t len = goblin_sbe_rd_u32(p);

        out[j].ptr = p + GOBLIN_SBE_VAR_HEADER_LENGTH;
        out[j].len = len;
        p += GOBLIN_SBE_VAR_HEADER_LENGTH + len;
    }
    g->p = p;
    g->count--;
    return block;
}

/* The data fields of every entry of g (nvar per entry, entry by entry)
 * as slices in the scratch area, with one spare slot after them; *n gets
 * how many. NULL after an OOM reply. */
struct goblin_slice *goblin__sbe_gather(struct goblin__sbe_req *r,
                                        struct goblin_sbe_group g,
                                        unsigned nvar, size_t *n);

/* goblin__sbe_gather of a group the command needs entries in: an empty
 * one is RESP's arity error for command name (replied; NULL). */
struct goblin_slice *goblin__sbe_args(struct goblin__sbe_req *r,
                                      struct goblin_sbe_group g,
                                      unsigned nvar, const char *name,
                                      size_t *n);

/* CountFlags of HRANDFIELD and ZRANDMEMBER (withScores standing for
 * WITHVALUES, only with a count, as on RESP) and the count's bounds
 * (goblin__rand_count_ok); replies and returns false on a refused one. */
bool goblin__sbe_count_flags(struct goblin__sbe_req *r, unsigned flags,
                             int64_t count, bool *has_count, bool *with);

/* "ERR wrong number of arguments for '<name>' command". */
void goblin__sbe_arity(struct goblin__sbe_req *r, const char *name);

/* Runs argv through the command table (goblin__command_execute) into the
 * request's sink. */
void goblin__sbe_run_argv(struct goblin__sbe_req *r, int argc,
                      const struct goblin_slice *argv);

/* req_keys.c: the SCAN family's flags, count, pattern and (SCAN only;
 * NULL for HSCAN and ZSCAN) type into *o and *type_known, as
 * goblin__scan_options reads them from text; replies a syntax error and
 * returns false for a count below 1, unknown flags, or a type where none
 * is allowed. */
bool goblin__sbe_scan_options(struct goblin__sbe_req *r, unsigned flags,
                              int64_t count, struct goblin_slice pattern,
                              const struct goblin_slice *type,
                              struct goblin_scan_options *o, bool *type_known);

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

/* direct.c: the direct path of a ring record holding one whole typed
 * frame of a session in its plain state (see direct.c): 1 when it ran
 * (with *rc as goblin_session_feed's), 0 when the record must take
 * goblin__sbe_record or goblin_session_feed; nothing has changed then.
 * rec is a ring record's payload: readable to the end of its 64-byte
 * line, so a short one is copied as one fixed-size block. */
int goblin__sbe_direct(goblin_session *s, const void *rec, size_t len,
                       int *rc);

/* input.c: the same for a ring record of a RESP session with nothing
 * buffered: its whole commands run from a stack copy, a partial one at
 * its end goes to the input buffer. rec is a ring record's payload,
 * readable to the end of its 64-byte line. 1 when it ran (with *rc as
 * goblin_session_feed's), 0 when the record must take goblin_session_feed
 * (another protocol, input buffered, too long). */
int goblin__resp_record(goblin_session *s, const void *rec, size_t len,
                        int *rc);

/* input.c: goblin_session_feed for bytes another party may write while
 * they are read (a ring record in shared memory): copied into the input
 * buffer first, never parsed in place. */
int goblin__session_feed_copy(goblin_session *s, const void *data,
                              size_t len);

/* session.c: sets the session's frame limit (tests use small ones). */
void goblin__sbe_set_max_frame(goblin_session *s, uint32_t max);

#endif
