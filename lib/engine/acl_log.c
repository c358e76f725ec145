/* acl_log.c - ACL LOG's entries (acl_log.h), in the engine's memory. */
#include <stdio.h>
#include <string.h>

#include "acl.h"
#include "acl_log.h"
#include "settings.h"
#include "text.h"
#include "store/store.h"

/* Redis's ACL_LOG_GROUPING_MAX_TIME_DELTA. */
#define GROUP_MS 60000

static char *dup_bytes(goblin_engine *eng, const void *p, size_t n)
{
    char *c = goblin__alloc(eng->st, n + 1);

    if (c != NULL) {
        if (n != 0)
            memcpy(c, p, n);
        c[n] = '\0';
    }
    return c;
}

static void entry_free(goblin_engine *eng, struct goblin__acl_log_entry *e)
{
    goblin__free(eng->st, e->object, e->object_len + 1);
    goblin__free(eng->st, e->username, e->username_len + 1);
    goblin__free(eng->st, e->cinfo, e->cinfo_len + 1);
    goblin__free(eng->st, e, sizeof(*e));
}

/* Drops entries past acllog-max-len. */
static void trim(goblin_engine *eng)
{
    struct goblin__acl_log_entry **pp = &eng->acl_log;
    size_t n = 0;

    while (*pp != NULL && n < (size_t)eng->acl_log_max) {
        pp = &(*pp)->next;
        n++;
    }
    while (*pp != NULL) {
        struct goblin__acl_log_entry *e = *pp;

        *pp = e->next;
        entry_free(eng, e);
        eng->acl_log_len--;
    }
}

static bool same(const struct goblin__acl_log_entry *e, int reason,
                 int context, struct goblin_slice object,
                 struct goblin_slice user, int64_t now)
{
    return e->reason == reason && e->context == context &&
           now - e->ctime_ms <= GROUP_MS && e->object_len == object.len &&
           (object.len == 0 || memcmp(e->object, object.ptr, object.len) == 0) &&
           e->username_len == user.len &&
           (user.len == 0 || memcmp(e->username, user.ptr, user.len) == 0);
}

void goblin__acl_log_add(goblin_session *s, int reason, int context,
                         struct goblin_slice object,
                         struct goblin_slice username)
{
    goblin_engine *eng = s->eng;
    struct goblin__acl_log_entry **pp = &eng->acl_log, *e;
    int64_t now = goblin__now_ms(eng->st);
    struct goblin__text t;
    int scan = 10;

    goblin__text_init(&t, eng->st);
    goblin__client_line(&t, s);
    if (t.oom) {
        goblin__text_free(&t);
        return;
    }
    if (t.len > 0 && t.p[t.len - 1] == '\n') /* the line, not the list */
        t.len--;
    for (; *pp != NULL && scan-- > 0; pp = &(*pp)->next) {
        e = *pp;
        if (!same(e, reason, context, object, username, now))
            continue;
        char *ci = dup_bytes(eng, t.p, t.len);

        goblin__text_free(&t);
        if (ci == NULL)
            return;
        goblin__free(eng->st, e->cinfo, e->cinfo_len + 1);
        e->cinfo = ci;
        e->cinfo_len = strlen(ci);
        e->ctime_ms = now;
        e->count++;
        *pp = e->next; /* to the front */
        e->next = eng->acl_log;
        eng->acl_log = e;
        return;
    }
    e = goblin__alloc(eng->st, sizeof(*e));
    if (e != NULL) {
        memset(e, 0, sizeof(*e));
        e->object = dup_bytes(eng, object.ptr, object.len);
        e->username = dup_bytes(eng, username.ptr, username.len);
        e->cinfo = dup_bytes(eng, t.p, t.len);
        e->object_len = object.len;
        e->username_len = username.len;
        e->cinfo_len = t.len;
    }
    goblin__text_free(&t);
    if (e == NULL)
        return;
    if (e->object == NULL || e->username == NULL || e->cinfo == NULL) {
        goblin__free(eng->st, e->object, e->object != NULL ? e->object_len + 1 : 0);
        goblin__free(eng->st, e->username,
                     e->username != NULL ? e->username_len + 1 : 0);
        goblin__free(eng->st, e->cinfo, e->cinfo != NULL ? e->cinfo_len + 1 : 0);
        goblin__free(eng->st, e, sizeof(*e));
        return;
    }
    e->count = 1;
    e->ctime_ms = now;
    e->reason = (uint8_t)reason;
    e->context = (uint8_t)context;
    e->next = eng->acl_log;
    eng->acl_log = e;
    eng->acl_log_len++;
    trim(eng);
}

void goblin__acl_log_denied(goblin_session *s,
                            const struct goblin__command *cmd, int denied,
                            int context, const struct goblin_slice *argv,
                            int pos)
{
    struct goblin_slice user = {"default", 7}, object;
    int reason;

    if (s->acl != NULL) {
        user.ptr = s->acl->name;
        user.len = s->acl->namelen;
    }
    if (denied == ACL_DENIED_CMD) {
        reason = GOBLIN__ACLLOG_CMD;
        object.ptr = cmd->fullname;
        object.len = strlen(cmd->fullname);
    } else {
        reason = denied == ACL_DENIED_KEY ? GOBLIN__ACLLOG_KEY
                                          : GOBLIN__ACLLOG_CHANNEL;
        object = argv[pos];
    }
    goblin__acl_log_add(s, reason, context, object, user);
}

void goblin__acl_log_reset(goblin_engine *eng)
{
    while (eng->acl_log != NULL) {
        struct goblin__acl_log_entry *e = eng->acl_log;

        eng->acl_log = e->next;
        entry_free(eng, e);
    }
    eng->acl_log_len = 0;
}

static int get_max(void *ctx, char *buf, size_t cap)
{
    return snprintf(buf, cap, "%lld",
                    (long long)((goblin_engine *)ctx)->acl_log_max);
}

static int set_max(void *ctx, struct goblin_slice v, const char **why)
{
    goblin_engine *eng = ctx;
    int64_t n;

    if (goblin__setting_parse("acllog-max-len", v, &n, why) != 0)
        return GOBLIN_EINVAL;
    eng->acl_log_max = n;
    trim(eng);
    return 0;
}

int goblin__acl_log_init(goblin_engine *eng)
{
    const struct goblin_setting s = {"acllog-max-len", NULL, get_max,
                                     set_max, eng};

    eng->acl_log_max = 128;
    return goblin_engine_setting_add(eng, &s);
}

void goblin__acl_log_free(goblin_engine *eng)
{
    goblin__acl_log_reset(eng);
}
