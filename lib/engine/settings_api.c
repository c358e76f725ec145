/* settings_api.c - the public calls that read and change settings by name
 * (goblin/engine.h): what a server reads at start and after its changed
 * hook fires, and what an embedder sets without CONFIG SET.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "settings.h"

static const struct goblin__setting *by_name(const goblin_engine *eng,
                                             const char *name)
{
    if (eng == NULL || name == NULL)
        return NULL;
    return goblin__setting_find(eng, (struct goblin_slice){name,
                                                           strlen(name)});
}

int goblin_engine_config_get(const goblin_engine *eng, const char *name,
                             char *buf, size_t cap)
{
    const struct goblin__setting *s = by_name(eng, name);
    char text[GOBLIN_SETTING_VALUE_MAX];
    int n;

    if (s == NULL || buf == NULL)
        return GOBLIN_EINVAL;
    n = s->s.get(s->s.ctx, text, sizeof(text));
    if (n < 0)
        return n;
    if ((size_t)n >= cap)
        return GOBLIN_ERANGE;
    memcpy(buf, text, (size_t)n);
    buf[n] = '\0';
    return n;
}

int64_t goblin_engine_config_int(const goblin_engine *eng, const char *name,
                                 int64_t dflt)
{
    const struct goblin__setting *s = by_name(eng, name);
    char text[GOBLIN_SETTING_VALUE_MAX + 1], norm[GOBLIN_SETTING_VALUE_MAX];
    char whybuf[160];
    const char *why;
    int64_t num;
    char *end;
    int n;

    if (s == NULL || (n = s->s.get(s->s.ctx, text, sizeof(text) - 1)) < 0)
        return dflt;
    text[n] = '\0';
    if (s->desc != NULL && s->desc->type != GOBLIN__ST_STRING &&
        s->desc->type != GOBLIN__ST_SPECIAL)
        return goblin__sdesc_parse(s->desc, (struct goblin_slice){text,
                                                                  (size_t)n},
                                   norm, sizeof(norm), &num, &why, whybuf,
                                   sizeof(whybuf)) == 0
                   ? num
                   : dflt;
    num = strtoll(text, &end, 10);
    return end != text && *end == '\0' ? num : dflt;
}

int goblin_engine_config_set(goblin_engine *eng, const char *name,
                             const char *value, char *err, size_t cap)
{
    struct goblin__setting *s = (struct goblin__setting *)by_name(eng, name);
    const char *why = "Unknown option";
    int rc = GOBLIN_EINVAL;

    if (s != NULL && value != NULL) {
        why = "can't set immutable config";
        if (!goblin__setting_immutable(s) &&
            (rc = s->s.set(s->s.ctx, (struct goblin_slice){value,
                                                           strlen(value)},
                           &why)) == 0)
            return 0;
    }
    if (err != NULL && cap > 0)
        snprintf(err, cap, "%s", why);
    return rc < 0 ? rc : GOBLIN_EINVAL;
}

void goblin_engine_config_usage(const goblin_engine *eng, FILE *f)
{
    struct goblin_setting_info s;
    char v[GOBLIN_SETTING_VALUE_MAX];

    for (size_t i = 0; goblin_setting_info(i, &s) == 0; i++)
        if (s.acts && goblin_engine_config_get(eng, s.name, v,
                                               sizeof(v)) >= 0)
            fprintf(f, "  --%-26s %-8s \"%s\"%s%s\n", s.name, s.type, v,
                    s.choices != NULL ? " of " : "",
                    s.choices != NULL ? s.choices : "");
}
