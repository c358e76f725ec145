/* prologue.c - what EVAL compiles before a script's first line, when it
 * changes nothing a script can see: "local redis, KEYS = redis, KEYS;"
 * for the globals it reads. In the sandbox each global read goes through
 * the read-only proxy of the globals (two table lookups and a metamethod
 * fetch); a local is a register. Line numbers stay (the prologue has no
 * newline), and so does everything else, because a name gets its local
 * only when every use of it as a variable is indexing it (NAME.x,
 * NAME[k], NAME:m(...)) or taking its length (#NAME):
 *   - the globals never change during a run (the table is read-only), so
 *     the local always holds what the global would give;
 *   - no use assigns the name (NAME = ..., a list NAME, ..., local NAME,
 *     a parameter or loop variable of that name): those would have
 *     raised Redis's read-only error, or shadowed the global;
 *   - no use can fail on the value itself, where Lua's message would say
 *     "local 'KEYS'" instead of "global 'KEYS'" (calling it, arithmetic,
 *     concatenation): indexing a table and its length never fail.
 * Anything else (or source the scanner cannot follow) gets no prologue.
 * The scan follows Lua 5.1's lexer (llex.c) for comments, strings, long
 * brackets and numbers.
 */
#include <string.h>

#include "script.h"

enum tok {
    T_END,
    T_NAME,
    T_STRING, /* short or long string */
    T_NUMBER,
    T_DOT,    /* . */
    T_CONCAT, /* .. */
    T_DOTS,   /* ... */
    T_OTHER,  /* any other operator or punctuation: its first byte */
    T_BAD,    /* unfinished string or comment */
};

struct lexer {
    const char *p, *end;
};

struct token {
    enum tok kind;
    const char *s;
    size_t len;
    char op; /* T_OTHER's byte */
};

static bool is_alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* At '[': the level of a long bracket "[==[" (its '='s), or -1. */
static int long_open(const struct lexer *x)
{
    const char *q = x->p + 1;
    int level = 0;

    while (q < x->end && *q == '=') {
        level++;
        q++;
    }
    return q < x->end && *q == '[' ? level : -1;
}

/* Skips a long bracket of level at x->p; false if it never closes. */
static bool skip_long(struct lexer *x, int level)
{
    const char *q = x->p + level + 2;

    for (; q < x->end; q++) {
        int n = 0;

        if (*q != ']')
            continue;
        while (q + 1 + n < x->end && q[1 + n] == '=')
            n++;
        if (n == level && q + 1 + n < x->end && q[1 + n] == ']') {
            x->p = q + n + 2;
            return true;
        }
    }
    return false;
}

static struct token next(struct lexer *x)
{
    struct token t = {T_END, NULL, 0, 0};
    char c;

    for (;;) {
        if (x->p >= x->end)
            return t;
        c = *x->p;
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' ||
            c == '\f') {
            x->p++;
            continue;
        }
        if (c == '-' && x->p + 1 < x->end && x->p[1] == '-') {
            int level;

            x->p += 2;
            if (x->p < x->end && *x->p == '[' &&
                (level = long_open(x)) >= 0) {
                if (!skip_long(x, level)) {
                    t.kind = T_BAD;
                    return t;
                }
                continue;
            }
            while (x->p < x->end && *x->p != '\n' && *x->p != '\r')
                x->p++;
            continue;
        }
        break;
    }
    t.s = x->p;
    if (is_alpha(c)) {
        while (x->p < x->end && (is_alpha(*x->p) || is_digit(*x->p)))
            x->p++;
        t.kind = T_NAME;
    } else if (is_digit(c) ||
               (c == '.' && x->p + 1 < x->end && is_digit(x->p[1]))) {
        /* read_numeral: digits and dots, an exponent's sign, then
         * letters, digits and '_'. */
        while (x->p < x->end && (is_digit(*x->p) || *x->p == '.'))
            x->p++;
        if (x->p < x->end && (*x->p == 'e' || *x->p == 'E')) {
            x->p++;
            if (x->p < x->end && (*x->p == '+' || *x->p == '-'))
                x->p++;
        }
        while (x->p < x->end && (is_alpha(*x->p) || is_digit(*x->p)))
            x->p++;
        t.kind = T_NUMBER;
    } else if (c == '"' || c == '\'') {
        x->p++;
        for (;;) {
            if (x->p >= x->end || *x->p == '\n' || *x->p == '\r') {
                t.kind = T_BAD;
                return t;
            }
            if (*x->p == c)
                break;
            /* An escape takes the next byte, a newline included. */
            x->p += *x->p == '\\' && x->p + 1 < x->end ? 2 : 1;
        }
        x->p++;
        t.kind = T_STRING;
    } else if (c == '[' && long_open(x) >= 0) {
        if (!skip_long(x, long_open(x))) {
            t.kind = T_BAD;
            return t;
        }
        t.kind = T_STRING;
    } else if (c == '.') {
        size_t n = 1;

        while (n < 3 && x->p + n < x->end && x->p[n] == '.')
            n++;
        x->p += n;
        t.kind = n == 1 ? T_DOT : n == 2 ? T_CONCAT : T_DOTS;
    } else {
        /* == ~= <= >= are one token; only '[', ':' and '#' are ever
         * looked at. */
        x->p++;
        if ((c == '=' || c == '~' || c == '<' || c == '>') &&
            x->p < x->end && *x->p == '=')
            x->p++;
        t.kind = T_OTHER;
        t.op = x->p - t.s == 2 ? '=' : c;
    }
    t.len = (size_t)(x->p - t.s);
    return t;
}

static const char *const names[] = {"redis", "KEYS", "ARGV"};
#define NNAMES (sizeof(names) / sizeof(*names))

static int name_index(const struct token *t)
{
    for (size_t i = 0; i < NNAMES; i++)
        if (t->len == strlen(names[i]) && memcmp(t->s, names[i], t->len) == 0)
            return (int)i;
    return -1;
}

size_t goblin__script_prologue(const char *body, size_t len, char *out,
                               size_t cap)
{
    struct lexer x = {body, body + len};
    struct token prev = {T_END, NULL, 0, 0}, cur = next(&x), ahead;
    bool used[NNAMES] = {false}, unsafe[NNAMES] = {false};
    char list[32];
    size_t n = 0, i;

    while (cur.kind != T_END) {
        int which;

        if (cur.kind == T_BAD)
            return 0;
        ahead = next(&x);
        which = cur.kind == T_NAME ? name_index(&cur) : -1;
        /* After "." or ":" a name is a field's or a method's. */
        if (which >= 0 && prev.kind != T_DOT &&
            !(prev.kind == T_OTHER && prev.op == ':')) {
            used[which] = true;
            if (!(prev.kind == T_OTHER && prev.op == '#') &&
                !(ahead.kind == T_DOT ||
                  (ahead.kind == T_OTHER &&
                   (ahead.op == '[' || ahead.op == ':'))))
                unsafe[which] = true;
        }
        prev = cur;
        cur = ahead;
    }
    /* "local a, b = a, b; " */
    for (i = 0; i < NNAMES; i++) {
        size_t m = strlen(names[i]);

        if (!used[i] || unsafe[i])
            continue;
        if (n + m + 2 > sizeof(list))
            return 0;
        if (n > 0) {
            memcpy(list + n, ", ", 2);
            n += 2;
        }
        memcpy(list + n, names[i], m);
        n += m;
    }
    if (n == 0 || 6 + n + 3 + n + 2 > cap)
        return 0;
    memcpy(out, "local ", 6);
    memcpy(out + 6, list, n);
    memcpy(out + 6 + n, " = ", 3);
    memcpy(out + 9 + n, list, n);
    memcpy(out + 9 + 2 * n, "; ", 2);
    return 11 + 2 * n;
}
