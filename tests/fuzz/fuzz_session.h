/* fuzz_session.h - a live store, engine and in-process session for the
 * command-layer targets (fuzz_commands.c, fuzz_sbe.c): opened per input
 * so every input starts from an empty store and is reproducible alone. */
#ifndef GOBLIN_FUZZ_SESSION_H
#define GOBLIN_FUZZ_SESSION_H

#include "goblin.h"
#include "fuzz.h"
#include "store/store.h"

struct fuzz_live {
    goblin_store *st;
    goblin_engine *eng;
    goblin_session *s;
};

static inline void live_open(struct fuzz_live *l)
{
    struct goblin_engine_config ec = {0};
    struct goblin_session_info si = {0};

    FUZZ_CHECK(goblin_store_open(NULL, &l->st) == 0);
    ec.store = l->st;
    /* Small limits keep hostile lengths cheap. */
    ec.proto_max_bulk_len = 1 << 16;
    ec.client_query_buffer_limit = 1 << 20;
    FUZZ_CHECK(goblin_engine_open(&ec, &l->eng) == 0);
    si.transport = GOBLIN_TRANSPORT_LOCAL;
    si.fd = -1;
    FUZZ_CHECK(goblin_session_open(l->eng, &si, &l->s) == 0);
}

/* Drops the replies so far; returns their length. */
static inline size_t live_drain(struct fuzz_live *l)
{
    size_t n;

    (void)goblin_session_output(l->s, &n);
    goblin_session_output_consume(l->s, n);
    return n;
}

static inline void live_close(struct fuzz_live *l)
{
    FUZZ_CHECK(goblin__store_check(l->st) == 0);
    goblin_session_close(l->s);
    goblin_engine_close(l->eng);
    FUZZ_CHECK(goblin__store_check(l->st) == 0);
    goblin_store_close(l->st);
}

#endif
