/* acl.h - users and what they may do, as Redis 7's ACL (acl.c) models
 * them: each user is on or off, has SHA-256 hashes of its passwords (or
 * nopass), a set of allowed commands (one bit per entry of the command
 * table, subcommands included) and key patterns, each for reading,
 * writing or both. The user "default" always exists; requirepass sets its
 * password. Selectors are not modelled; channel patterns (&pattern,
 * allchannels, resetchannels) apply to PUBLISH, SPUBLISH and the
 * subscribe commands, as in Redis 7.0.
 *
 * acl.c keeps the users and applies rules; acl_check.c checks and
 * describes them; acl_file.c reads and writes the ACL file.
 *
 * Every check of a command runs in dispatch.c for RESP, SBE Argv and ring
 * sessions alike; lib/sbe asks goblin__acl_check_typed for its typed
 * requests.
 */
#ifndef GOBLIN_ACL_H
#define GOBLIN_ACL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "commands/command.h"
#include "util/sha256.h"

#define GOBLIN__ACL_WORDS 8 /* command bits: up to 512 table entries */

enum {
    ACL_USER_ON = 1u << 0,
    ACL_USER_NOPASS = 1u << 1,
    ACL_USER_ALLCOMMANDS = 1u << 2, /* started from +@all, for display */
    ACL_USER_ALLCHANNELS = 1u << 3,
    ACL_USER_ALLKEYS = 1u << 4,     /* allkeys or ~*: no pattern may follow */
    ACL_USER_SANITIZE = 1u << 5,    /* sanitize-payload (reset sets it) */
    ACL_USER_SKIP_SANITIZE = 1u << 6, /* skip-sanitize-payload */
};

enum { ACL_KEY_READ = 1u << 0, ACL_KEY_WRITE = 1u << 1 };

struct goblin__acl_pattern {
    uint8_t flags; /* ACL_KEY_*; for a channel pattern 0 */
    size_t len;
    char *pat;
};

struct goblin__acl_user {
    struct goblin__acl_user *next; /* the engine's list, by name */
    char *name;
    size_t namelen;
    uint32_t flags; /* ACL_USER_* */
    unsigned char (*pass)[GOBLIN__SHA256_LEN];
    size_t npass;
    uint64_t allowed[GOBLIN__ACL_WORDS];
    struct goblin__acl_pattern *keys;
    size_t nkeys;
    struct goblin__acl_pattern *channels;
    size_t nchannels;
    char *rules; /* command rules after the +@all/-@all start, for
                  * display: "+@read -keys +set" */
    size_t rules_len;
    /* Every command, key and channel (+@all ~* &*, as the default
     * user): the checks are then one predictable branch. Set by every
     * SETUSER. */
    bool unrestricted;
};

/* Why a check refused: which argument, as ACL DRYRUN names it. */
enum goblin__acl_denied {
    ACL_OK = 0,
    ACL_DENIED_CMD = 1,
    ACL_DENIED_KEY = 2,
    ACL_DENIED_CHANNEL = 3,
};

/* Sets up the "default" user (on nopass ~* &* +@all). 0 or ENOMEM. */
int goblin__acl_init(goblin_engine *eng);
void goblin__acl_free(goblin_engine *eng);

struct goblin__acl_user *goblin__acl_find(const goblin_engine *eng,
                                          struct goblin_slice name);

/* True when bit i (a command table index) is set for u. */
bool goblin__acl_allows(const struct goblin__acl_user *u, size_t i);

/* The user's password check: true when it is on and either nopass or
 * one of its hashes is the hash of pass. */
bool goblin__acl_auth(const struct goblin__acl_user *u,
                      struct goblin_slice pass);

/* True when a new connection starts authenticated (the default user is
 * on and nopass). */
bool goblin__acl_default_open(const goblin_engine *eng);

/* Sets the default user's only password (requirepass); an empty one
 * makes it nopass. 0 or ENOMEM. */
int goblin__acl_set_default_pass(goblin_engine *eng, const void *p,
                                 size_t len);

/* Applies rules to user name, creating it when missing, all or nothing.
 * Returns 0, or GOBLIN_EINVAL with the Redis text in err (the failing
 * rule in *bad), or GOBLIN_ENOMEM. */
int goblin__acl_setuser(goblin_engine *eng, struct goblin_slice name,
                        int nrules, const struct goblin_slice *rules,
                        char *err, size_t errcap, int *bad);

/* May u run cmd with argv? ACL_OK, or what was refused; *pos gets the
 * refused key's argument index. */
enum goblin__acl_denied goblin__acl_check(goblin_session *s,
                                          const struct goblin__acl_user *u,
                                          const struct goblin__command *cmd,
                                          int argc,
                                          const struct goblin_slice *argv,
                                          int *pos);

/* For SBE typed requests, whose keys are not argv: the command must be
 * allowed, and a command with keys needs a user with every key. */
/* May user u run anything on any key? The hot path's test before a
 * command's full check (goblin__acl_check, _typed). */
static inline bool goblin__acl_unrestricted(const struct goblin__acl_user *u)
{
    return u->unrestricted;
}

enum goblin__acl_denied goblin__acl_check_typed(
    const struct goblin__acl_user *u, const struct goblin__command *cmd);

/* May u read every key (Redis 7.0's
 * ACLUserCheckCmdWithUnrestrictedKeyAccess for read access: allkeys, ~*
 * or %R~*)? SORT's BY and GET patterns, which name keys no key spec
 * shows, need it. A NULL user (none attached) may. */
bool goblin__acl_reads_all_keys(const struct goblin__acl_user *u);

/* The error reply text for a refusal, with its code word. */
const char *goblin__acl_denied_text(enum goblin__acl_denied d,
                                    const struct goblin__command *cmd,
                                    char *buf, size_t cap);

struct goblin__text;
/* Appends "user NAME on #hash ~keys &chan +@all ..." (ACL LIST, ACL
 * SAVE). */
void goblin__acl_describe(struct goblin__text *t,
                          const struct goblin__acl_user *u);
/* Appends just the command rules ("+@all -@dangerous"). */
void goblin__acl_describe_commands(struct goblin__text *t,
                                   const struct goblin__acl_user *u);
/* Appends the key patterns as rules ("~a* %R~b*"). */
void goblin__acl_describe_keys(struct goblin__text *t,
                               const struct goblin__acl_user *u);
void goblin__acl_describe_channels(struct goblin__text *t,
                                   const struct goblin__acl_user *u);

/* Deletes a user (not "default"); sessions authenticated as it are
 * killed. Returns 1 if deleted, 0 if there was none. */
int goblin__acl_deluser(goblin_engine *eng, struct goblin_slice name);

/* The category names, "keyspace".."scripting", by bit. */
extern const char *const goblin__acl_cat_names[ACL_NCATS];

/* acl_file.c: loads the ACL file into a fresh user list that replaces
 * the current one only when every line is good, and saves the users to
 * path atomically. 0, GOBLIN_EINVAL (a bad line or a file error: err gets
 * Redis's text) or GOBLIN_ENOMEM. */
int goblin__acl_load_file(goblin_engine *eng, const char *path, char *err,
                          size_t errcap);
int goblin__acl_save_file(goblin_engine *eng, const char *path, char *err,
                          size_t errcap);

#endif
