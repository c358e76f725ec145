/* acl_check.c - what an ACL user may do (acl.h): passwords checked
 * against their SHA-256 without an early exit, the command and key checks
 * every command passes in dispatch.c (Redis's ACLCheckAllPerm), and the
 * rule texts ACL LIST, ACL GETUSER and ACL SAVE show.
 */
#include <stdio.h>
#include <string.h>

#include "acl.h"
#include "commands/handlers.h"
#include "goblin/keys.h"
#include "session.h"
#include "text.h"

bool goblin__acl_auth(const struct goblin__acl_user *u,
                      struct goblin_slice pass)
{
    unsigned char h[32];
    bool ok = false;

    if (u == NULL || !(u->flags & ACL_USER_ON))
        return false;
    if (u->flags & ACL_USER_NOPASS)
        return true;
    goblin__sha256(pass.ptr, pass.len, h);
    for (size_t i = 0; i < u->npass; i++)   /* no early exit */
        ok |= goblin__same_bytes(u->pass[i], h, 32);
    return ok;
}

bool goblin__acl_default_open(const goblin_engine *eng)
{
    const struct goblin__acl_user *d = eng->default_user;

    return d != NULL && (d->flags & ACL_USER_ON) &&
           (d->flags & ACL_USER_NOPASS);
}

static bool has_all_keys(const struct goblin__acl_user *u)
{
    for (size_t i = 0; i < u->nkeys; i++)
        if (u->keys[i].len == 1 && u->keys[i].pat[0] == '*' &&
            u->keys[i].flags == (ACL_KEY_READ | ACL_KEY_WRITE))
            return true;
    return false;
}

bool goblin__acl_reads_all_keys(const struct goblin__acl_user *u)
{
    if (u == NULL || u->unrestricted)
        return true;
    for (size_t i = 0; i < u->nkeys; i++)
        if (u->keys[i].len == 1 && u->keys[i].pat[0] == '*' &&
            (u->keys[i].flags & ACL_KEY_READ))
            return true;
    return false;
}

/* Redis's ACLSelectorCheckKey: the access a key spec asks for. */
static uint8_t key_needs(uint16_t ksflags)
{
    uint8_t need = 0;

    if (ksflags & KS_ACCESS)
        need |= ACL_KEY_READ;
    if (ksflags & (KS_INSERT | KS_DELETE | KS_UPDATE))
        need |= ACL_KEY_WRITE;
    return need;
}

static bool key_ok(const struct goblin__acl_user *u, struct goblin_slice key,
                   uint8_t need)
{
    for (size_t i = 0; i < u->nkeys; i++)
        if ((u->keys[i].flags & need) == need &&
            goblin_glob_match(u->keys[i].pat, u->keys[i].len, key.ptr,
                              key.len, false))
            return true;
    return false;
}

/* Redis's ACLCheckChannelAgainstList: a channel matches a pattern of the
 * user's; a pattern (PSUBSCRIBE) must be one of them literally. */
static bool channel_ok(const struct goblin__acl_user *u,
                       struct goblin_slice ch, bool is_pattern)
{
    for (size_t i = 0; i < u->nchannels; i++) {
        const struct goblin__acl_pattern *p = &u->channels[i];

        if (is_pattern ? p->len == ch.len && memcmp(p->pat, ch.ptr,
                                                    ch.len) == 0
                       : goblin_glob_match(p->pat, p->len, ch.ptr, ch.len,
                                           false))
            return true;
    }
    return false;
}

/* The channels of the commands that name them (getChannelsFromCommand;
 * unsubscribing is never refused): false with *pos at a refused one. */
static bool channels_ok(const struct goblin__acl_user *u,
                        const struct goblin__command *cmd, int argc,
                        const struct goblin_slice *argv, int *pos)
{
    goblin__handler *fn = cmd->fn;
    bool pattern = fn == goblin__cmd_psubscribe;
    int last = argc - 1;

    if (u->flags & ACL_USER_ALLCHANNELS)
        return true;
    if (fn == goblin__cmd_publish || fn == goblin__cmd_spublish)
        last = 1;
    else if (!pattern && fn != goblin__cmd_subscribe &&
             fn != goblin__cmd_ssubscribe)
        return true;
    for (int i = 1; i <= last && i < argc; i++)
        if (!channel_ok(u, argv[i], pattern)) {
            *pos = i;
            return false;
        }
    return true;
}

static bool cmd_ok(const struct goblin__acl_user *u,
                   const struct goblin__command *cmd)
{
    return (cmd->flags & CMD_NO_AUTH) ||
           goblin__acl_allows(u, (size_t)(cmd - goblin__commands));
}

enum goblin__acl_denied goblin__acl_check(goblin_session *s,
                                          const struct goblin__acl_user *u,
                                          const struct goblin__command *cmd,
                                          int argc,
                                          const struct goblin_slice *argv,
                                          int *pos)
{
    size_t cap;
    int n, i, *kpos;
    uint16_t *kfl;

    if (u->unrestricted)
        return ACL_OK;
    if (!cmd_ok(u, cmd))
        return ACL_DENIED_CMD;
    if ((cmd->flags & CMD_PUBSUB) && !channels_ok(u, cmd, argc, argv, pos))
        return ACL_DENIED_CHANNEL;
    if (cmd->nkeyspecs == 0 || has_all_keys(u))
        return ACL_OK;
    cap = goblin__find_keys_cap(cmd, argc);
    kpos = goblin__scratch_bytes(s, cap * (sizeof(int) + 2) + 8);
    if (kpos == NULL)
        return ACL_DENIED_KEY;
    kfl = (uint16_t *)(kpos + cap);
    n = goblin__find_keys(cmd, argc, argv, kpos, kfl);
    for (i = 0; i < n; i++)
        if (!key_ok(u, argv[kpos[i]], key_needs(kfl[i]))) {
            *pos = kpos[i];
            return ACL_DENIED_KEY;
        }
    return ACL_OK;
}

enum goblin__acl_denied goblin__acl_check_typed(
    const struct goblin__acl_user *u, const struct goblin__command *cmd)
{
    if (cmd == NULL)
        return ACL_OK;
    if (!cmd_ok(u, cmd))
        return ACL_DENIED_CMD;
    if (cmd->nkeyspecs == 0 || has_all_keys(u))
        return ACL_OK;
    return ACL_DENIED_KEY;
}

const char *goblin__acl_denied_text(enum goblin__acl_denied d,
                                    const struct goblin__command *cmd,
                                    char *buf, size_t cap)
{
    if (d == ACL_DENIED_KEY)
        return "NOPERM this user has no permissions to access one of the "
               "keys used as arguments";
    if (d == ACL_DENIED_CHANNEL)
        return "NOPERM this user has no permissions to access one of the "
               "channels used as arguments";
    snprintf(buf, cap, "NOPERM this user has no permissions to run the '%s' "
                       "command", cmd->fullname);
    return buf;
}

/* ---- descriptions ---- */

static void describe_patterns(struct goblin__text *t,
                              const struct goblin__acl_pattern *v, size_t n,
                              char lead)
{
    for (size_t i = 0; i < n; i++) {
        if (i > 0)
            goblin__text_add(t, " ", 1);
        if (lead == '~' && v[i].flags == ACL_KEY_READ)
            goblin__text_add(t, "%R", 2);
        else if (lead == '~' && v[i].flags == ACL_KEY_WRITE)
            goblin__text_add(t, "%W", 2);
        goblin__text_add(t, &lead, 1);
        goblin__text_add(t, v[i].pat, v[i].len);
    }
}

void goblin__acl_describe_keys(struct goblin__text *t,
                               const struct goblin__acl_user *u)
{
    describe_patterns(t, u->keys, u->nkeys, '~');
}

void goblin__acl_describe_channels(struct goblin__text *t,
                                   const struct goblin__acl_user *u)
{
    if (u->flags & ACL_USER_ALLCHANNELS)
        goblin__text_add(t, "&*", 2);
    else
        describe_patterns(t, u->channels, u->nchannels, '&');
}

void goblin__acl_describe_commands(struct goblin__text *t,
                                   const struct goblin__acl_user *u)
{
    goblin__text_add(t, u->flags & ACL_USER_ALLCOMMANDS ? "+@all" : "-@all",
                     5);
    if (u->rules_len > 0) {
        goblin__text_add(t, " ", 1);
        goblin__text_add(t, u->rules, u->rules_len);
    }
}

void goblin__acl_describe(struct goblin__text *t,
                          const struct goblin__acl_user *u)
{
    goblin__text_add(t, "user ", 5);
    goblin__text_add(t, u->name, u->namelen);
    goblin__text_add(t, u->flags & ACL_USER_ON ? " on" : " off",
                     u->flags & ACL_USER_ON ? 3 : 4);
    if (u->flags & ACL_USER_NOPASS)
        goblin__text_add(t, " nopass", 7);
    if (u->flags & ACL_USER_SKIP_SANITIZE)
        goblin__text_add(t, " skip-sanitize-payload", 22);
    if (u->flags & ACL_USER_SANITIZE)
        goblin__text_add(t, " sanitize-payload", 17);
    for (size_t i = 0; i < u->npass; i++) {
        goblin__text_add(t, " #", 2);
        for (int k = 0; k < 32; k++)
            goblin__text_addf(t, "%02x", u->pass[i][k]);
    }
    if (u->nkeys > 0) {
        goblin__text_add(t, " ", 1);
        goblin__acl_describe_keys(t, u);
    }
    if (u->flags & ACL_USER_ALLCHANNELS) {
        goblin__text_add(t, " &*", 3);
    } else {
        goblin__text_add(t, " resetchannels", 14);
        if (u->nchannels > 0) {
            goblin__text_add(t, " ", 1);
            goblin__acl_describe_channels(t, u);
        }
    }
    goblin__text_add(t, " ", 1);
    goblin__acl_describe_commands(t, u);
}
