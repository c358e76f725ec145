/* settings.h - the typed descriptors of every directive (settings_table.c),
 * their parsing (settings_value.c), the registry CONFIG GET and CONFIG SET
 * read and change, and the engine's own settings. */
#ifndef GOBLIN_SETTINGS_H
#define GOBLIN_SETTINGS_H

#include "session.h"

/* A descriptor's type: how a value is parsed and shown. */
enum goblin__stype {
    GOBLIN__ST_BOOL,    /* yes or no, any case */
    GOBLIN__ST_INT,     /* a strict integer in [lo, hi] */
    GOBLIN__ST_MEMORY,  /* bytes with an optional unit (k, kb, m, ...) */
    GOBLIN__ST_OCTAL,   /* a mode such as 700 */
    GOBLIN__ST_ENUM,    /* one of choices, any case */
    GOBLIN__ST_STRING,  /* any text */
    GOBLIN__ST_SPECIAL, /* its own syntax (settings_value.c) */
};

#define GOBLIN__SF_IMMUTABLE 0x01u /* only from the config file or argv */
#define GOBLIN__SF_SENSITIVE 0x02u /* a secret: never logged */
#define GOBLIN__SF_MULTI_ARG 0x04u /* a directive's words join into one value */
#define GOBLIN__SF_APPEND 0x08u    /* repeated lines add up (save) */
#define GOBLIN__SF_ENGINE 0x10u    /* the engine acts on it */
#define GOBLIN__SF_SERVER 0x20u    /* the server reads it and acts on it */
#define GOBLIN__SF_PERCENT 0x40u   /* memory, or a percentage "5%" */
#define GOBLIN__SF_HIDDEN 0x80u    /* a directive CONFIG GET does not show */
#define GOBLIN__SF_GOBLIN 0x100u   /* Goblin's own, not one of Redis's */

#define GOBLIN__MAX_BIND 16 /* addresses in bind, as Redis's CONFIG_BINDADDR_MAX */
#define GOBLIN__SAVE_POLICIES 16 /* "seconds changes" pairs in save */

/* A descriptor's own parser (settings_special.c): checks v and writes its
 * normal form into norm (cap bytes, cut short if longer); 0, or
 * GOBLIN_EINVAL with *why Redis's text (static). */
typedef int goblin__sparse_fn(struct goblin_slice v, char *norm, size_t cap,
                              const char **why);

struct goblin__sdesc {
    const char *name;    /* Redis 7.0's name, lower case */
    const char *alias;   /* its old name, or NULL */
    uint8_t type;        /* enum goblin__stype */
    uint16_t flags;      /* GOBLIN__SF_* */
    int64_t lo;          /* INT, MEMORY, OCTAL: the range; above */
    uint64_t hi;         /* INT64_MAX the values are unsigned */
    const char *choices; /* ENUM: "a|b|c", in Redis's order */
    const char *def;     /* the default, as CONFIG GET shows it */
    goblin__sparse_fn *parse; /* SPECIAL (or a STRING with rules): its
                               * syntax; NULL: the type's */
};

extern const struct goblin__sdesc goblin__sdescs[];
extern const size_t goblin__nsdescs;

/* The descriptor called name or whose alias is name, any case; NULL. */
const struct goblin__sdesc *goblin__sdesc_find(struct goblin_slice name);

/* Parses v as d's type into norm (the text CONFIG GET will show: "yes",
 * bytes for a memory value, the enum's own spelling...) and *num (the
 * number, enum index or boolean; 0 for text). Returns 0, or
 * GOBLIN_EINVAL with *why Redis's text (static, or in whybuf). */
int goblin__sdesc_parse(const struct goblin__sdesc *d, struct goblin_slice v,
                        char *norm, size_t cap, int64_t *num,
                        const char **why, char *whybuf, size_t whycap);

/* Parses v as the descriptor called name (which must exist) does: for the
 * engine's own setters, so each value is checked in one place. */
int goblin__setting_parse(const char *name, struct goblin_slice v,
                          int64_t *num, const char **why);

/* Parses v as the descriptor called name (which must exist) into the
 * caller's norm (cap bytes): for an owner whose values may be longer than
 * GOBLIN_SETTING_VALUE_MAX. */
int goblin__setting_norm(const char *name, struct goblin_slice v,
                         char *norm, size_t cap, const char **why);

/* Redis's string2ll: no '+', no leading zeros, no "-0", no spaces. */
bool goblin__strict_ll(const char *p, size_t n, int64_t *out);

/* The descriptors' own parsers (settings_special.c). */
goblin__sparse_fn goblin__sparse_notify, goblin__sparse_oom_values,
    goblin__sparse_percentiles, goblin__sparse_title, goblin__sparse_hostname,
    goblin__sparse_bind, goblin__sparse_save, goblin__sparse_obuf,
    goblin__sparse_dir, goblin__sparse_dbfilename;

/* A descriptor's type as docs and --help name it ("bool", "integer"...). */
const char *goblin__stype_name(const struct goblin__sdesc *d);

/* Registers the engine's own settings. */
int goblin__settings_init(goblin_engine *eng);

/* Applies the initial values given in the engine configuration. */
int goblin__settings_apply_config(goblin_engine *eng,
                                  const struct goblin_engine_config *cfg);

void goblin__settings_free(goblin_engine *eng);

/* Recomputes eng->obuf_trip from client-output-buffer-limit. */
void goblin__obuf_trip_update(goblin_engine *eng);

/* Sets requirepass to len bytes at p; len 0 removes the password. */
int goblin__set_requirepass(goblin_engine *eng, const void *p, size_t len);

/* The setting called name (or whose alias is name), case-insensitively;
 * NULL if none. */
const struct goblin__setting *goblin__setting_find(const goblin_engine *eng,
                                                   struct goblin_slice name);

/* True when CONFIG SET may not change s: it has no set, or it is a kept
 * value whose descriptor is immutable (a setting a server registers with
 * a set is its own to change). */
static inline bool goblin__setting_immutable(const struct goblin__setting *s)
{
    return s->s.set == NULL ||
           (s->placeholder && (s->desc->flags & GOBLIN__SF_IMMUTABLE));
}

/* Parses a memory amount as Redis's memtoull: digits and an optional unit
 * (b, k, kb, m, mb, g, gb in any case; k = 1000, kb = 1024). Returns 0 or
 * GOBLIN_EINVAL. */
int goblin__parse_memory(struct goblin_slice v, uint64_t *out);

/* cmd_persist.c: the save, dir and dbfilename settings and the save
 * state (init registers the settings), the save policies run by cron,
 * and INFO persistence. */
struct goblin__text;
int goblin__persist_init(goblin_engine *eng);
void goblin__persist_free(goblin_engine *eng);
void goblin__persist_cron(goblin_engine *eng);
void goblin__persist_info(goblin__exec *x, struct goblin__text *t);

#endif
