/* text.c - the growing text buffer of text.h. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "store/store.h"
#include "text.h"

void goblin__text_init(struct goblin__text *t, goblin_store *st)
{
    memset(t, 0, sizeof(*t));
    t->st = st;
}

void goblin__text_free(struct goblin__text *t)
{
    goblin__free(t->st, t->p, t->cap);
    t->p = NULL;
    t->len = t->cap = 0;
}

static bool reserve(struct goblin__text *t, size_t n)
{
    size_t cap = t->cap == 0 ? 256 : t->cap;
    char *p;

    if (t->oom)
        return false;
    if (t->len + n < t->cap)
        return true;
    while (cap <= t->len + n)
        cap *= 2;
    p = goblin__realloc(t->st, t->p, t->cap, cap);
    if (p == NULL) {
        t->oom = true;
        return false;
    }
    t->p = p;
    t->cap = cap;
    return true;
}

void goblin__text_add(struct goblin__text *t, const void *p, size_t n)
{
    if (n == 0 || !reserve(t, n))
        return;
    memcpy(t->p + t->len, p, n);
    t->len += n;
}

void goblin__text_addf(struct goblin__text *t, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (!reserve(t, 64))
        return;
    va_start(ap, fmt);
    n = vsnprintf(t->p + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n >= t->cap - t->len) {
        if (!reserve(t, (size_t)n + 1))
            return;
        va_start(ap, fmt);
        vsnprintf(t->p + t->len, t->cap - t->len, fmt, ap);
        va_end(ap);
    }
    t->len += (size_t)n;
}
