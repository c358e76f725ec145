/* sbe_none.c - the SBE hooks of session.h while lib/sbe does not provide
 * them: SBE is off, so a session that starts with the SBE magic speaks
 * RESP (and "GOBLINS!" is an unknown command). lib/sbe replaces this file
 * in lib/meson.build with its implementation. */
#include "session.h"

bool goblin__sbe_enabled(void)
{
    return false;
}

int goblin__sbe_session_input(goblin_session *s, const unsigned char *p,
                              size_t len, size_t *used)
{
    (void)s;
    (void)p;
    (void)len;
    *used = 0;
    return GOBLIN_EPROTO;
}

void goblin__sbe_session_free(goblin_session *s)
{
    (void)s;
}
