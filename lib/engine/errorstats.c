/* errorstats.c - INFO errorstats: error replies counted by their code
 * word, as Redis 7.0 counts them. The code is the text up to its first
 * space when a space comes within Redis's 32-character window of the
 * reply ('-' included), else "ERR" (Redis's fallback).
 *
 * Invariants: eng->errstats.e[0..n) are sorted by name (bytewise, the
 * order of Redis's radix tree, so INFO lists them alike), names are
 * distinct and 0..GOBLIN__ERRCODE_MAX bytes (a reply that begins with a
 * space has the empty code, as in Redis). At most GOBLIN__ERRCODES_MAX
 * names are kept: errors of a new code after that count under
 * ERRORSTATS_OVERFLOW, so a client that invents codes cannot grow the
 * table without bound.
 */
#include <string.h>

#include "session.h"

#define OVERFLOW "ERRORSTATS_OVERFLOW"

/* The code word of text[0..len). */
static size_t code_of(const char *text, size_t len, const char **code)
{
    const char *sp = memchr(text, ' ', len < 31 ? len : 31);

    if (sp == NULL) {
        *code = "ERR";
        return 3;
    }
    *code = text;
    return (size_t)(sp - text);
}

static int name_cmp(const struct goblin__errstat *e, const char *code,
                    size_t len)
{
    size_t n = e->len < len ? e->len : len;
    int c = memcmp(e->name, code, n);

    return c != 0 ? c : (e->len > len) - (e->len < len);
}

/* Where code is, or would go: *found says which. */
static size_t find(const struct goblin__errstats *t, const char *code,
                   size_t len, bool *found)
{
    size_t lo = 0, hi = t->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = name_cmp(&t->e[mid], code, len);

        if (c == 0) {
            *found = true;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = false;
    return lo;
}

static bool room(goblin_engine *eng, struct goblin__errstats *t)
{
    size_t cap = t->cap != 0 ? 2 * t->cap : 16;
    struct goblin__errstat *e;

    if (t->n < t->cap)
        return true;
    e = goblin__alloc(eng->st, cap * sizeof(*e));
    if (e == NULL)
        return false;
    if (t->n != 0)
        memcpy(e, t->e, t->n * sizeof(*e));
    goblin__free(eng->st, t->e, t->cap * sizeof(*e));
    t->e = e;
    t->cap = cap;
    return true;
}

static void add(goblin_engine *eng, const char *code, size_t len)
{
    struct goblin__errstats *t = &eng->errstats;
    bool found;
    size_t i = find(t, code, len, &found);

    if (!found && t->n >= GOBLIN__ERRCODES_MAX &&
        strcmp(code, OVERFLOW) != 0) {
        add(eng, OVERFLOW, sizeof(OVERFLOW) - 1);
        return;
    }
    if (!found) {
        if (!room(eng, t))
            return; /* out of memory: total_error_replies still counts */
        memmove(t->e + i + 1, t->e + i, (t->n - i) * sizeof(*t->e));
        memcpy(t->e[i].name, code, len);
        t->e[i].len = (uint8_t)len;
        t->e[i].count = 0;
        t->n++;
    }
    t->e[i].count++;
}

void goblin__errstat_count(goblin_engine *eng, const char *text, size_t len)
{
    const char *code;
    size_t n = code_of(text, len, &code);

    add(eng, code, n);
    eng->stat_errors++;
}

void goblin__errstats_reset(goblin_engine *eng)
{
    eng->errstats.n = 0;
}

void goblin__errstats_free(goblin_engine *eng)
{
    struct goblin__errstats *t = &eng->errstats;

    goblin__free(eng->st, t->e, t->cap * sizeof(*t->e));
    t->e = NULL;
    t->n = t->cap = 0;
}
