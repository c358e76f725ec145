/* acl_log.h - ACL LOG: the refusals the ACL made (Redis 7.0's
 * addACLLogEntry), newest first, at most acllog-max-len of them.
 *
 * An entry records why (a command, a key, a channel, or a failed
 * AUTH/HELLO), where (top level, inside MULTI, in a script), the object
 * refused (the command's full name, the key, the channel, or the
 * command that tried to authenticate), the user, when, and the client's
 * CLIENT LIST line at the time. A refusal like one of the ten newest
 * (same reason, context, object and user, within 60 s of it) counts
 * into that entry and moves it to the front instead of adding one.
 */
#ifndef GOBLIN_ACL_LOG_H
#define GOBLIN_ACL_LOG_H

#include <stdint.h>

#include "session.h"

enum goblin__acl_log_reason {
    GOBLIN__ACLLOG_CMD = 0,
    GOBLIN__ACLLOG_KEY,
    GOBLIN__ACLLOG_CHANNEL,
    GOBLIN__ACLLOG_AUTH,
};

enum goblin__acl_log_context {
    GOBLIN__ACLLOG_TOPLEVEL = 0,
    GOBLIN__ACLLOG_MULTI,
    GOBLIN__ACLLOG_LUA,
};

struct goblin__acl_log_entry {
    struct goblin__acl_log_entry *next;
    uint64_t count;
    int64_t ctime_ms;
    uint8_t reason, context;
    char *object, *username, *cinfo; /* NUL-terminated, lengths below */
    size_t object_len, username_len, cinfo_len;
};

/* Records a refusal by s (object and username copied). Out of memory
 * drops the entry. */
void goblin__acl_log_add(goblin_session *s, int reason, int context,
                         struct goblin_slice object,
                         struct goblin_slice username);

/* The refusal d of goblin__acl_check for the command x runs (argv[pos]
 * names the key or channel), in context. */
void goblin__acl_log_denied(goblin_session *s,
                            const struct goblin__command *cmd, int denied,
                            int context, const struct goblin_slice *argv,
                            int pos);

/* ACL LOG RESET. */
void goblin__acl_log_reset(goblin_engine *eng);

/* Registers acllog-max-len. 0 or GOBLIN_ENOMEM. */
int goblin__acl_log_init(goblin_engine *eng);
void goblin__acl_log_free(goblin_engine *eng);

#endif
