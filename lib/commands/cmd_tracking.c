/* cmd_tracking.c - CLIENT TRACKING, CLIENT CACHING, CLIENT GETREDIR and
 * CLIENT TRACKINGINFO, with Redis 7.0's checks in its order and its texts
 * (networking.c clientCommand, tracking.c checkPrefixCollisionsOrReply).
 * The tracking itself is lib/engine/tracking.c.
 */
#include <stdio.h>
#include <string.h>

#include "engine/session.h"
#include "engine/tracking.h"
#include "handlers.h"
#include "respond.h"

/* Redis's stringCheckPrefix: one is a prefix of the other. */
static bool overlap(const void *a, size_t alen, const void *b, size_t blen)
{
    size_t n = alen < blen ? alen : blen;

    return n == 0 || memcmp(a, b, n) == 0;
}

/* Redis's checkPrefixCollisionsOrReply. It returns the index of the
 * prefix that collides with a later one, so a collision found for any
 * prefix but the first replies the error and then enables tracking
 * anyway (and replies +OK): *go says whether to go on. */
static bool prefixes_ok(goblin__exec *x, const struct goblin_slice *p,
                        size_t n, bool *go)
{
    const goblin_session *s = x->sess;

    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < s->ntprefix; k++) {
            if (!overlap(s->tprefix[k].p, s->tprefix[k].len, p[i].ptr,
                         p[i].len))
                continue;
            goblin__reply_errorf(x, "ERR Prefix '%.*s' overlaps with an "
                                    "existing prefix '%.*s'. Prefixes for a "
                                    "single client must not overlap.",
                                 goblin__cstr_len(p[i]),
                                 (const char *)p[i].ptr,
                                 (int)s->tprefix[k].len,
                                 (const char *)s->tprefix[k].p);
            *go = false;
            return false;
        }
        for (size_t j = i + 1; j < n; j++) {
            if (!overlap(p[i].ptr, p[i].len, p[j].ptr, p[j].len))
                continue;
            goblin__reply_errorf(x, "ERR Prefix '%.*s' overlaps with "
                                    "another provided prefix '%.*s'. "
                                    "Prefixes for a single client must not "
                                    "overlap.",
                                 goblin__cstr_len(p[i]),
                                 (const char *)p[i].ptr,
                                 goblin__cstr_len(p[j]),
                                 (const char *)p[j].ptr);
            *go = i != 0;
            return false;
        }
    }
    *go = true;
    return true;
}

static const char *mode_error(const goblin_session *s, uint32_t opt,
                              size_t nprefix)
{
    if (!(opt & TRACK_BCAST) && nprefix > 0)
        return "ERR PREFIX option requires BCAST mode to be enabled";
    if (s->track & TRACK_ON &&
        !(s->track & TRACK_BCAST) != !(opt & TRACK_BCAST))
        return "ERR You can't switch BCAST mode on/off before disabling "
               "tracking for this client, and then re-enabling it with a "
               "different mode.";
    if (opt & TRACK_BCAST && opt & (TRACK_OPTIN | TRACK_OPTOUT))
        return "ERR OPTIN and OPTOUT are not compatible with BCAST";
    if (opt & TRACK_OPTIN && opt & TRACK_OPTOUT)
        return "ERR You can't specify both OPTIN mode and OPTOUT mode";
    if ((opt & TRACK_OPTIN && s->track & TRACK_OPTOUT) ||
        (opt & TRACK_OPTOUT && s->track & TRACK_OPTIN))
        return "ERR You can't switch OPTIN/OPTOUT mode before disabling "
               "tracking for this client, and then re-enabling it with a "
               "different mode.";
    return NULL;
}

static bool session_exists(const goblin_engine *eng, int64_t id)
{
    for (const goblin_session *s = eng->first; s != NULL; s = s->next)
        if ((int64_t)s->id == id)
            return true;
    return false;
}

/* The options after ON|OFF; the prefixes are left in x->sess->scratch. */
static bool parse_options(goblin__exec *x, int argc,
                          const struct goblin_slice *argv, int64_t *redir,
                          uint32_t *opt, size_t *np)
{
    static const struct { const char *name; uint32_t bit; } flags[] = {
        {"bcast", TRACK_BCAST}, {"optin", TRACK_OPTIN},
        {"optout", TRACK_OPTOUT}, {"noloop", TRACK_NOLOOP}};

    if (goblin__scratch_reserve(x->sess, (size_t)argc) != 0) {
        goblin__reply_code(x, GOBLIN_ENOMEM);
        return false;
    }
    for (int j = 3; j < argc; j++) {
        bool more = j + 1 < argc, known = false;

        for (size_t f = 0; f < 4 && !known; f++)
            if (goblin__arg_is(argv[j], flags[f].name)) {
                *opt |= flags[f].bit;
                known = true;
            }
        if (known)
            continue;
        if (goblin__arg_is(argv[j], "redirect") && more) {
            j++;
            if (*redir != 0) {
                goblin__reply_error(x, "ERR A client can only redirect to a "
                                       "single other client");
                return false;
            }
            if (!goblin__arg_int64(x, argv[j], redir, NULL))
                return false;
            if (!session_exists(x->eng, *redir)) {
                goblin__reply_error(x, "ERR The client ID you want redirect "
                                       "to does not exist");
                return false;
            }
        } else if (goblin__arg_is(argv[j], "prefix") && more) {
            x->sess->scratch[(*np)++] = argv[++j];
        } else {
            goblin__reply_error(x, GOBLIN__ERR_SYNTAX);
            return false;
        }
    }
    return true;
}

void goblin__cmd_client_tracking(goblin__exec *x, int argc,
                                 const struct goblin_slice *argv)
{
    goblin_session *s = x->sess;
    int64_t redir = 0;
    uint32_t opt = 0;
    size_t np = 0;
    const char *err;
    bool go = true;

    if (!parse_options(x, argc, argv, &redir, &opt, &np))
        return;
    if (goblin__arg_is(argv[2], "off")) {
        goblin__tracking_disable(s);
        goblin__reply_ok(x);
        return;
    }
    if (!goblin__arg_is(argv[2], "on")) {
        goblin__reply_error(x, GOBLIN__ERR_SYNTAX);
        return;
    }
    if ((err = mode_error(s, opt, np)) != NULL) {
        goblin__reply_error(x, err);
        return;
    }
    if (opt & TRACK_BCAST && !prefixes_ok(x, s->scratch, np, &go) && !go)
        return;
    if (goblin__tracking_enable(s, (uint64_t)redir, opt, s->scratch, np) !=
        0) {
        goblin__reply_code(x, GOBLIN_ENOMEM);
        return;
    }
    goblin__reply_ok(x);
}

void goblin__cmd_client_caching(goblin__exec *x, int argc,
                                const struct goblin_slice *argv)
{
    goblin_session *s = x->sess;

    (void)argc;
    if (!(s->track & TRACK_ON)) {
        goblin__reply_error(x, "ERR CLIENT CACHING can be called only when "
                               "the client is in tracking mode with OPTIN "
                               "or OPTOUT mode enabled");
    } else if (goblin__arg_is(argv[2], "yes")) {
        if (!(s->track & TRACK_OPTIN)) {
            goblin__reply_error(x, "ERR CLIENT CACHING YES is only valid "
                                   "when tracking is enabled in OPTIN "
                                   "mode.");
            return;
        }
        s->track |= TRACK_CACHING;
        goblin__reply_ok(x);
    } else if (goblin__arg_is(argv[2], "no")) {
        if (!(s->track & TRACK_OPTOUT)) {
            goblin__reply_error(x, "ERR CLIENT CACHING NO is only valid "
                                   "when tracking is enabled in OPTOUT "
                                   "mode.");
            return;
        }
        s->track |= TRACK_CACHING;
        goblin__reply_ok(x);
    } else {
        goblin__reply_error(x, GOBLIN__ERR_SYNTAX);
    }
}

static int64_t redirect_of(const goblin_session *s)
{
    return s->track & TRACK_ON ? (int64_t)s->track_redir : -1;
}

void goblin__cmd_client_getredir(goblin__exec *x, int argc,
                                 const struct goblin_slice *argv)
{
    (void)argc;
    (void)argv;
    goblin__reply_int(x, redirect_of(x->sess));
}

void goblin__cmd_client_trackinginfo(goblin__exec *x, int argc,
                                     const struct goblin_slice *argv)
{
    const goblin_session *s = x->sess;
    uint32_t f = s->track;
    const char *flags[8];
    size_t n = 0;

    (void)argc;
    (void)argv;
    flags[n++] = f & TRACK_ON ? "on" : "off";
    if (f & TRACK_BCAST)
        flags[n++] = "bcast";
    if (f & TRACK_OPTIN) {
        flags[n++] = "optin";
        if (f & TRACK_CACHING)
            flags[n++] = "caching-yes";
    }
    if (f & TRACK_OPTOUT) {
        flags[n++] = "optout";
        if (f & TRACK_CACHING)
            flags[n++] = "caching-no";
    }
    if (f & TRACK_NOLOOP)
        flags[n++] = "noloop";
    if (f & TRACK_BROKEN)
        flags[n++] = "broken_redirect";
    goblin__reply_map(x, 3);
    goblin__reply_cstr(x, "flags");
    goblin__reply_set(x, n);
    for (size_t i = 0; i < n; i++)
        goblin__reply_cstr(x, flags[i]);
    goblin__reply_cstr(x, "redirect");
    goblin__reply_int(x, redirect_of(s));
    goblin__reply_cstr(x, "prefixes");
    goblin__reply_array(x, s->ntprefix);
    for (size_t i = 0; i < s->ntprefix; i++)
        goblin__reply_bulk(x, s->tprefix[i].p, s->tprefix[i].len);
}
