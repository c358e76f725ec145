/* settings.c - the registry of settings behind CONFIG GET/SET: one entry
 * per descriptor of settings_table.c, holding its value as text until the
 * engine's own code or a server registers the setting to act on it
 * (goblin_engine_setting_add replaces the entry and keeps its descriptor);
 * and the engine's own: requirepass, proto-max-bulk-len,
 * client-query-buffer-limit, client-output-buffer-limit and hz.
 *
 * Every setter here first parses its value with the setting's descriptor
 * (the table's one parser for each directive, settings_value.c and
 * settings_special.c), then applies the normal form; a setting's set
 * either applies the whole value or changes nothing.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl.h"
#include "goblin/numtext.h"
#include "maxmemory.h"
#include "settings.h"

static char *dup_cstr(goblin_store *st, const char *s, size_t len)
{
    char *p = goblin__alloc(st, len + 1);

    if (p != NULL) {
        memcpy(p, s, len);
        p[len] = '\0';
    }
    return p;
}

static void free_cstr(goblin_store *st, char *s)
{
    if (s != NULL)
        goblin__free(st, s, strlen(s) + 1);
}

static bool eq_nocase(const char *a, struct goblin_slice b)
{
    size_t i;

    for (i = 0; i < b.len; i++) {
        unsigned char x = (unsigned char)a[i];
        unsigned char y = ((const unsigned char *)b.ptr)[i];

        if (x == '\0')
            return false;
        if (y >= 'A' && y <= 'Z')
            y += 'a' - 'A';
        if (x != y)
            return false;
    }
    return a[b.len] == '\0';
}

const struct goblin__setting *goblin__setting_find(const goblin_engine *eng,
                                                   struct goblin_slice name)
{
    size_t i;

    for (i = 0; i < eng->nsettings; i++) {
        const struct goblin__setting *s = &eng->settings[i];

        if (eq_nocase(s->name, name) ||
            (s->alias != NULL && eq_nocase(s->alias, name)))
            return s;
    }
    return NULL;
}

/* Copies s into e, which is free. */
static int setting_fill(goblin_engine *eng, struct goblin__setting *e,
                        const struct goblin_setting *s)
{
    memset(e, 0, sizeof(*e));
    e->s = *s;
    e->name = dup_cstr(eng->st, s->name, strlen(s->name));
    if (s->alias != NULL)
        e->alias = dup_cstr(eng->st, s->alias, strlen(s->alias));
    if (e->name == NULL || (s->alias != NULL && e->alias == NULL)) {
        free_cstr(eng->st, e->name);
        free_cstr(eng->st, e->alias);
        return GOBLIN_ENOMEM;
    }
    e->s.name = e->name;
    e->s.alias = e->alias;
    return 0;
}

/* Replaces the placeholder e with s. */
static int setting_replace(goblin_engine *eng, struct goblin__setting *e,
                           const struct goblin_setting *s)
{
    struct goblin__setting old = *e;
    int rc = setting_fill(eng, e, s);

    if (rc != 0) {
        *e = old;
        return rc;
    }
    e->desc = old.desc;
    if (e->alias == NULL && old.desc != NULL && old.desc->alias != NULL) {
        e->alias = old.alias;   /* the descriptor's old name stays */
        e->s.alias = e->alias;
        old.alias = NULL;
    }
    free_cstr(eng->st, old.name);
    free_cstr(eng->st, old.alias);
    return 0;
}

int goblin_engine_setting_add(goblin_engine *eng,
                              const struct goblin_setting *s)
{
    const struct goblin__setting *found;
    struct goblin__setting *e;
    size_t cap;
    int rc;

    if (s == NULL || s->name == NULL || s->get == NULL)
        return GOBLIN_EINVAL;
    found = goblin__setting_find(eng, (struct goblin_slice){
                                          s->name, strlen(s->name)});
    if (found != NULL && found->placeholder)
        return setting_replace(eng, &eng->settings[found - eng->settings],
                               s);
    if (found != NULL)
        return GOBLIN_EINVAL;
    if (eng->nsettings == eng->capsettings) {
        cap = eng->capsettings == 0 ? 16 : eng->capsettings * 2;
        e = goblin__realloc(eng->st, eng->settings,
                            eng->capsettings * sizeof(*e), cap * sizeof(*e));
        if (e == NULL)
            return GOBLIN_ENOMEM;
        eng->settings = e;
        eng->capsettings = cap;
    }
    if ((rc = setting_fill(eng, &eng->settings[eng->nsettings], s)) != 0)
        return rc;
    eng->nsettings++;
    return 0;
}

void goblin__settings_free(goblin_engine *eng)
{
    size_t i;

    for (i = 0; i < eng->nsettings; i++) {
        free_cstr(eng->st, eng->settings[i].name);
        free_cstr(eng->st, eng->settings[i].alias);
    }
    goblin__free(eng->st, eng->settings,
                 eng->capsettings * sizeof(*eng->settings));
    eng->settings = NULL;
    eng->nsettings = eng->capsettings = 0;
    for (i = 0; eng->svals != NULL && i < goblin__nsdescs; i++)
        free_cstr(eng->st, eng->svals[i].text);
    if (eng->svals != NULL)
        goblin__free(eng->st, eng->svals,
                     goblin__nsdescs * sizeof(*eng->svals));
    eng->svals = NULL;
    free_cstr(eng->st, eng->config_file);
    eng->config_file = NULL;
    if (eng->requirepass != NULL)
        goblin__free(eng->st, eng->requirepass, eng->requirepass_len + 1);
    eng->requirepass = NULL;
}

int goblin__parse_memory(struct goblin_slice v, uint64_t *out)
{
    static const struct { const char *unit; uint64_t mul; } units[] = {
        {"", 1}, {"b", 1}, {"k", 1000}, {"kb", 1024},
        {"m", 1000000}, {"mb", 1024 * 1024}, {"g", 1000000000},
        {"gb", 1024ull * 1024 * 1024},
    };
    const char *p = v.ptr;
    size_t i, digits = 0;
    uint64_t n = 0;

    while (digits < v.len && p[digits] >= '0' && p[digits] <= '9') {
        if (n > (UINT64_MAX - 9) / 10)
            return GOBLIN_EINVAL;
        n = n * 10 + (uint64_t)(p[digits++] - '0');
    }
    if (digits == 0)
        return GOBLIN_EINVAL;
    for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        struct goblin_slice u = {p + digits, v.len - digits};

        if (!eq_nocase(units[i].unit, u))
            continue;
        if (n > UINT64_MAX / units[i].mul)
            return GOBLIN_EINVAL;
        *out = n * units[i].mul;
        return 0;
    }
    return GOBLIN_EINVAL;
}

static int fmt_u64(char *buf, size_t cap, uint64_t v)
{
    return snprintf(buf, cap, "%llu", (unsigned long long)v);
}

int goblin__setting_norm(const char *name, struct goblin_slice v,
                         char *norm, size_t cap, const char **why)
{
    static char whybuf[200];
    const struct goblin__sdesc *d =
        goblin__sdesc_find((struct goblin_slice){name, strlen(name)});
    int64_t num;

    return goblin__sdesc_parse(d, v, norm, cap, &num, why, whybuf,
                               sizeof(whybuf));
}

int goblin__setting_parse(const char *name, struct goblin_slice v,
                          int64_t *num, const char **why)
{
    static char norm[GOBLIN_SETTING_VALUE_MAX + 1], whybuf[200];
    const struct goblin__sdesc *d =
        goblin__sdesc_find((struct goblin_slice){name, strlen(name)});

    return goblin__sdesc_parse(d, v, norm, sizeof(norm), num, why, whybuf,
                               sizeof(whybuf));
}

/* A memory setting with Redis's range [1 MiB, LLONG_MAX]. */
static int set_big_memory(const char *name, struct goblin_slice v,
                          uint64_t *dst, const char **why)
{
    int64_t n;

    if (goblin__setting_parse(name, v, &n, why) != 0)
        return GOBLIN_EINVAL;
    *dst = (uint64_t)n;
    return 0;
}

static int get_bulk_len(void *ctx, char *buf, size_t cap)
{
    return fmt_u64(buf, cap, ((goblin_engine *)ctx)->proto_max_bulk_len);
}

static int set_bulk_len(void *ctx, struct goblin_slice v, const char **why)
{
    goblin_engine *eng = ctx;
    int rc = set_big_memory("proto-max-bulk-len", v,
                            &eng->proto_max_bulk_len, why);

    if (rc == 0)
        goblin__db_string_max(eng);
    return rc;
}

static int get_hll_sparse(void *ctx, char *buf, size_t cap)
{
    return fmt_u64(buf, cap, ((goblin_engine *)ctx)->hll_sparse_max_bytes);
}

static int set_hll_sparse(void *ctx, struct goblin_slice v, const char **why)
{
    return set_big_memory("hll-sparse-max-bytes", v,
                          &((goblin_engine *)ctx)->hll_sparse_max_bytes, why);
}

static int get_qbuf(void *ctx, char *buf, size_t cap)
{
    return fmt_u64(buf, cap, ((goblin_engine *)ctx)->qbuf_limit);
}

static int set_qbuf(void *ctx, struct goblin_slice v, const char **why)
{
    return set_big_memory("client-query-buffer-limit", v,
                          &((goblin_engine *)ctx)->qbuf_limit, why);
}

static int get_requirepass(void *ctx, char *buf, size_t cap)
{
    goblin_engine *eng = ctx;
    size_t n = eng->requirepass == NULL ? 0 : eng->requirepass_len;

    if (n > cap)
        n = cap;
    if (n > 0)
        memcpy(buf, eng->requirepass, n);
    return (int)n;
}

/* Sets the password; an empty one removes it. Sessions already
 * authenticated stay so, as in Redis. */
int goblin__set_requirepass(goblin_engine *eng, const void *p, size_t len)
{
    char *copy = NULL;

    if (len > 0 && (copy = dup_cstr(eng->st, p, len)) == NULL)
        return GOBLIN_ENOMEM;
    if (goblin__acl_set_default_pass(eng, p, len) != 0) {
        if (copy != NULL)
            goblin__free(eng->st, copy, len + 1);
        return GOBLIN_ENOMEM;
    }
    if (eng->requirepass != NULL)
        goblin__free(eng->st, eng->requirepass, eng->requirepass_len + 1);
    eng->requirepass = copy;
    eng->requirepass_len = len;
    return 0;
}

/* Checked by its descriptor; the password itself is taken as given, of
 * any length and binary. */
static int set_requirepass(void *ctx, struct goblin_slice v,
                           const char **why)
{
    char norm[GOBLIN_SETTING_VALUE_MAX + 1];

    if (goblin__setting_norm("requirepass", v, norm, sizeof(norm), why) != 0)
        return GOBLIN_EINVAL;
    *why = "out of memory";
    return goblin__set_requirepass(ctx, v.ptr, v.len);
}

static int get_hz(void *ctx, char *buf, size_t cap)
{
    return snprintf(buf, cap, "%d", ((goblin_engine *)ctx)->hz);
}

/* Redis accepts 0..INT_MAX and clamps what it runs with to 1..500. */
static int set_hz(void *ctx, struct goblin_slice v, const char **why)
{
    int64_t n;

    if (goblin__setting_parse("hz", v, &n, why) != 0)
        return GOBLIN_EINVAL;
    ((goblin_engine *)ctx)->hz = n < 1 ? 1 : n > 500 ? 500 : (int)n;
    return 0;
}

static const char *const obuf_class[3] = {"normal", "slave", "pubsub"};

static int get_obuf(void *ctx, char *buf, size_t cap)
{
    goblin_engine *eng = ctx;
    size_t n = 0;
    int c;

    for (c = 0; c < 3 && n < cap; c++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%s %llu %llu %llu",
                              c > 0 ? " " : "", obuf_class[c],
                              (unsigned long long)eng->obuf_limit[c][0],
                              (unsigned long long)eng->obuf_limit[c][1],
                              (unsigned long long)eng->obuf_limit[c][2]);
    return (int)(n < cap ? n : cap);
}

/* The descriptor's normal form: "class hard soft seconds" groups with
 * Redis's class names and the amounts in bytes; classes not named keep
 * their limits. */
static int set_obuf(void *ctx, struct goblin_slice v, const char **why)
{
    goblin_engine *eng = ctx;
    char norm[GOBLIN_SETTING_VALUE_MAX + 1], *p = norm, *end;
    uint64_t lim[3][3];

    if (goblin__setting_norm("client-output-buffer-limit", v, norm,
                             sizeof(norm), why) != 0)
        return GOBLIN_EINVAL;
    memcpy(lim, eng->obuf_limit, sizeof(lim));
    while (*p != '\0') {
        size_t len = strcspn(p, " ");
        int c = 0;

        while (c < 2 && (strlen(obuf_class[c]) != len ||
                         memcmp(obuf_class[c], p, len) != 0))
            c++;
        p += len;
        for (int k = 0; k < 3; k++) {
            lim[c][k] = strtoull(p, &end, 10);
            p = end;
        }
        p += strspn(p, " ");
    }
    memcpy(eng->obuf_limit, lim, sizeof(lim));
    goblin__obuf_trip_update(eng);
    return 0;
}

void goblin__obuf_trip_update(goblin_engine *eng)
{
    uint64_t hard = eng->obuf_limit[0][0], soft = eng->obuf_limit[0][1];
    uint64_t t = hard == 0 ? soft : soft == 0 || hard < soft ? hard : soft;

    eng->obuf_trip = t == 0 || t > SIZE_MAX ? SIZE_MAX : (size_t)t;
}

/* A kept value: the descriptor's text. */
static int sval_get(void *ctx, char *buf, size_t cap)
{
    const struct goblin__sval *v = ctx;
    size_t n = strlen(v->text);

    n = n < cap ? n : cap;
    memcpy(buf, v->text, n);
    return (int)n;
}

static int sval_set(void *ctx, struct goblin_slice value, const char **why)
{
    struct goblin__sval *v = ctx;
    char norm[GOBLIN_SETTING_VALUE_MAX + 1], *copy, *old;
    static char whybuf[160];
    int64_t num;
    int rc;

    if (value.len > GOBLIN_SETTING_VALUE_MAX) {
        *why = "argument too long";
        return GOBLIN_EINVAL;
    }
    rc = goblin__sdesc_parse(v->desc, value, norm, sizeof(norm), &num, why,
                             whybuf, sizeof(whybuf));
    if (rc != 0)
        return rc;
    if ((copy = dup_cstr(v->eng->st, norm, strlen(norm))) == NULL) {
        *why = "out of memory";
        return GOBLIN_ENOMEM;
    }
    old = v->text;
    v->text = copy;
    if ((v->desc->flags & GOBLIN__SF_SERVER) &&
        v->eng->hooks.changed != NULL &&
        v->eng->hooks.changed(v->eng->hooks.ctx, v->desc->name, why) != 0) {
        v->text = old;
        free_cstr(v->eng->st, copy);
        return GOBLIN_EINVAL;
    }
    free_cstr(v->eng->st, old);
    return 0;
}

/* One registry entry per descriptor, keeping its text. */
static int svals_init(goblin_engine *eng)
{
    size_t n = goblin__nsdescs, i;
    int rc;

    if ((eng->svals = goblin__alloc(eng->st, n * sizeof(*eng->svals))) ==
        NULL)
        return GOBLIN_ENOMEM;
    memset(eng->svals, 0, n * sizeof(*eng->svals));
    for (i = 0; i < n; i++) {
        const struct goblin__sdesc *d = &goblin__sdescs[i];
        struct goblin__sval *v = &eng->svals[i];
        struct goblin_setting s = {d->name, d->alias, sval_get, sval_set, v};

        v->eng = eng;
        v->desc = d;
        if ((v->text = dup_cstr(eng->st, d->def, strlen(d->def))) == NULL)
            return GOBLIN_ENOMEM;
        if ((rc = goblin_engine_setting_add(eng, &s)) != 0)
            return rc;
        eng->settings[eng->nsettings - 1].desc = d;
        eng->settings[eng->nsettings - 1].placeholder = true;
    }
    return 0;
}

int goblin__settings_init(goblin_engine *eng)
{
    const struct goblin_setting own[] = {
        {"requirepass", NULL, get_requirepass, set_requirepass, eng},
        {"proto-max-bulk-len", NULL, get_bulk_len, set_bulk_len, eng},
        {"client-query-buffer-limit", NULL, get_qbuf, set_qbuf, eng},
        {"client-output-buffer-limit", NULL, get_obuf, set_obuf, eng},
        {"hz", NULL, get_hz, set_hz, eng},
        {"hll-sparse-max-bytes", NULL, get_hll_sparse, set_hll_sparse, eng},
    };
    size_t i;
    int rc;

    eng->proto_max_bulk_len = 512ull * 1024 * 1024;
    eng->qbuf_limit = 1024ull * 1024 * 1024;
    eng->hz = 10;
    eng->hll_sparse_max_bytes = 3000;
    eng->obuf_limit[1][0] = 256ull * 1024 * 1024;
    eng->obuf_limit[1][1] = 64ull * 1024 * 1024;
    eng->obuf_limit[1][2] = 60;
    eng->obuf_limit[2][0] = 32ull * 1024 * 1024;
    eng->obuf_limit[2][1] = 8ull * 1024 * 1024;
    eng->obuf_limit[2][2] = 60;
    goblin__obuf_trip_update(eng);
    if ((rc = svals_init(eng)) != 0)
        return rc;
    for (i = 0; i < sizeof(own) / sizeof(own[0]); i++)
        if ((rc = goblin_engine_setting_add(eng, &own[i])) != 0)
            return rc;
    return goblin__maxmemory_init(eng);
}

int goblin__settings_apply_config(goblin_engine *eng,
                                  const struct goblin_engine_config *cfg)
{
    if (cfg->proto_max_bulk_len != 0)
        eng->proto_max_bulk_len = cfg->proto_max_bulk_len;
    if (cfg->client_query_buffer_limit != 0)
        eng->qbuf_limit = cfg->client_query_buffer_limit;
    if (cfg->hz != 0)
        eng->hz = cfg->hz < 1 ? 1 : cfg->hz > 500 ? 500 : cfg->hz;
    if (cfg->requirepass != NULL && cfg->requirepass[0] != '\0')
        return goblin__set_requirepass(eng, cfg->requirepass,
                                       strlen(cfg->requirepass));
    return 0;
}
