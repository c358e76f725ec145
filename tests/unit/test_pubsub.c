/* test_pubsub.c - the Pub/Sub registry (lib/pubsub): Redis's glob rules
 * against a reference port of stringmatchlen, randomized; subscribing,
 * unsubscribing and publishing against a brute-force model; the pattern
 * index's prefix rule; allocation failure at every step. */
#include <ctype.h>
#include <stdio.h>

#include "commands/notify.h"
#include "pubsub/pubsub.h"
#include "testutil.h"

/* ---- the reference: Redis 7.0's stringmatchlen_impl, as written there
 * (NUL-terminated, it reads the terminator past patternLen). ---- */
static int ref_impl(const char *pattern, int patternLen, const char *string,
                    int stringLen, int nocase, int *skipLongerMatches,
                    int nesting)
{
    if (nesting > 1000)
        return 0;
    while (patternLen && stringLen) {
        switch (pattern[0]) {
        case '*':
            while (patternLen && pattern[1] == '*') {
                pattern++;
                patternLen--;
            }
            if (patternLen == 1)
                return 1;
            while (stringLen) {
                if (ref_impl(pattern + 1, patternLen - 1, string, stringLen,
                             nocase, skipLongerMatches, nesting + 1))
                    return 1;
                if (*skipLongerMatches)
                    return 0;
                string++;
                stringLen--;
            }
            *skipLongerMatches = 1;
            return 0;
        case '?':
            string++;
            stringLen--;
            break;
        case '[': {
            int not, match;

            pattern++;
            patternLen--;
            not = pattern[0] == '^';
            if (not) {
                pattern++;
                patternLen--;
            }
            match = 0;
            while (1) {
                if (pattern[0] == '\\' && patternLen >= 2) {
                    pattern++;
                    patternLen--;
                    if (pattern[0] == string[0])
                        match = 1;
                } else if (pattern[0] == ']') {
                    break;
                } else if (patternLen == 0) {
                    pattern--;
                    patternLen++;
                    break;
                } else if (patternLen >= 3 && pattern[1] == '-') {
                    int start = pattern[0];
                    int end = pattern[2];
                    int c = string[0];
                    if (start > end) {
                        int t = start;
                        start = end;
                        end = t;
                    }
                    if (nocase) {
                        start = tolower(start);
                        end = tolower(end);
                        c = tolower(c);
                    }
                    pattern += 2;
                    patternLen -= 2;
                    if (c >= start && c <= end)
                        match = 1;
                } else {
                    if (!nocase) {
                        if (pattern[0] == string[0])
                            match = 1;
                    } else {
                        if (tolower((int)pattern[0]) ==
                            tolower((int)string[0]))
                            match = 1;
                    }
                }
                pattern++;
                patternLen--;
            }
            if (not)
                match = !match;
            if (!match)
                return 0;
            string++;
            stringLen--;
            break;
        }
        case '\\':
            if (patternLen >= 2) {
                pattern++;
                patternLen--;
            }
            /* fall through */
        default:
            if (!nocase) {
                if (pattern[0] != string[0])
                    return 0;
            } else {
                if (tolower((int)pattern[0]) != tolower((int)string[0]))
                    return 0;
            }
            string++;
            stringLen--;
            break;
        }
        pattern++;
        patternLen--;
        if (stringLen == 0) {
            while (*pattern == '*') {
                pattern++;
                patternLen--;
            }
            break;
        }
    }
    if (patternLen == 0 && stringLen == 0)
        return 1;
    return 0;
}

static int ref_match(const char *p, int plen, const char *s, int slen,
                     int nocase)
{
    int skip = 0;

    return ref_impl(p, plen, s, slen, nocase, &skip, 0);
}

static uint64_t rng = 88172645463325252ull;

static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Bytes from a small alphabet heavy in glob syntax, so that sets, ranges,
 * escapes and stars meet each other often. No NUL: the reference reads
 * the terminator. */
static void random_text(char *buf, int len, bool pattern)
{
    static const char pat[] = "ab*?[]^\\-Ac";
    static const char str[] = "abcAB-]^\\*";

    for (int i = 0; i < len; i++)
        buf[i] = pattern ? pat[next_rand() % (sizeof(pat) - 1)]
                         : str[next_rand() % (sizeof(str) - 1)];
    buf[len] = '\0';
}

static void test_glob_agrees_with_redis_stringmatchlen(void **state)
{
    char p[16], s[16];

    (void)state;
    for (int i = 0; i < 400000; i++) {
        int plen = (int)(next_rand() % 10), slen = (int)(next_rand() % 10);
        int nocase = (int)(next_rand() & 1);

        random_text(p, plen, true);
        random_text(s, slen, false);
        if (goblin_glob_match(p, (size_t)plen, s, (size_t)slen, nocase) !=
            ref_match(p, plen, s, slen, nocase)) {
            fail_msg("pattern '%s' string '%s' nocase %d: goblin %d, redis "
                     "%d", p, s, nocase,
                     goblin_glob_match(p, (size_t)plen, s, (size_t)slen,
                                       nocase),
                     ref_match(p, plen, s, slen, nocase));
        }
    }
}

static void test_glob_fixed_cases(void **state)
{
    static const struct {
        const char *p, *s;
        int m;
    } cases[] = {
        {"news.*", "news.tech", 1}, {"news.*", "news.", 1},
        {"h[ae]llo", "hallo", 1},   {"h[^e]llo", "hello", 0},
        {"h[^e]llo", "hallo", 1},   {"h[a-b]llo", "hbllo", 1},
        {"h[b-a]llo", "hallo", 1},  {"h\\*llo", "h*llo", 1},
        {"h\\*llo", "hello", 0},    {"[\\]]", "]", 1},
        {"a[", "a[", 0},            {"*", "", 0},
        {"a*", "a", 1},             {"?", "", 0},
        {"[abc", "a", 1},           {"\\", "\\", 1},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int pl = (int)strlen(cases[i].p), sl = (int)strlen(cases[i].s);

        if (ref_match(cases[i].p, pl, cases[i].s, sl, 0) != cases[i].m)
            fail_msg("case %zu: '%s' '%s'", i, cases[i].p, cases[i].s);
        assert_int_equal(goblin_glob_match(cases[i].p, (size_t)pl,
                                           cases[i].s, (size_t)sl, 0),
                         cases[i].m);
    }
}

static void test_prefix_stops_at_the_first_wildcard(void **state)
{
    (void)state;
    assert_int_equal(goblin__ps_prefix_len(S("news.*")), 5);
    assert_int_equal(goblin__ps_prefix_len(S("*x")), 0);
    assert_int_equal(goblin__ps_prefix_len(S("a?b")), 1);
    assert_int_equal(goblin__ps_prefix_len(S("ab[c]")), 2);
    assert_int_equal(goblin__ps_prefix_len(S("a\\*")), 1);
    assert_int_equal(goblin__ps_prefix_len(S("plain")), 5);
    assert_int_equal(
        goblin__ps_prefix_len(S("0123456789012345678901234567890123456789")),
        GOBLIN__PS_PREFIX_MAX);
}

/* ---- the registry against a model ---- */

#define CLIENTS 6
#define NAMES 24

struct client {
    struct goblin__ps_client ps;
    int id;
    int got;       /* deliveries of the last publish */
    int got_pat;   /* of them, through a pattern */
};

struct model {
    bool sub[CLIENTS][GOBLIN__PS_KINDS][NAMES];
};

static const char *names[NAMES] = {
    "news", "news.tech", "news.art", "n", "", "a*", "news.*", "*",
    "n?ws*", "[nm]ews", "x[^a]y", "xby", "x\\*", "x*", "ne*s", "*s",
    "news.tech.deep", "a", "ab", "abc", "a[b-c]*", "xay", "h\\?", "h?",
};

static void count(void *ctx, void *owner, const struct goblin__ps_chan *pat)
{
    struct client *c = owner;

    (void)ctx;
    c->got++;
    if (pat != NULL)
        c->got_pat++;
}

/* Deliveries client c should get from a publish to names[name]. */
static int expected(const struct model *m, int c, bool shard, int name,
                    int *through_patterns)
{
    struct goblin_slice ch = {names[name], strlen(names[name])};
    int wp = 0;

    for (int p = 0; !shard && p < NAMES; p++)
        wp += m->sub[c][1][p] &&
              goblin_glob_match(names[p], strlen(names[p]), ch.ptr, ch.len,
                                0);
    *through_patterns = wp;
    return m->sub[c][shard ? 2 : 0][name] + wp;
}

static void check_publish(struct goblin__ps_registry *r, struct client *cl,
                          const struct model *m, int kind, int name)
{
    struct goblin_slice ch = {names[name], strlen(names[name])};
    bool shard = kind == GOBLIN__PS_SHARD;
    size_t want = 0, got;
    int wp;

    for (int c = 0; c < CLIENTS; c++)
        cl[c].got = cl[c].got_pat = 0;
    got = goblin__ps_publish(r, shard, ch, count, NULL);
    for (int c = 0; c < CLIENTS; c++) {
        int w = expected(m, c, shard, name, &wp);

        want += (size_t)w;
        assert_int_equal(cl[c].got, w);
        assert_int_equal(cl[c].got_pat, wp);
    }
    assert_int_equal(got, want);
}

static void test_registry_follows_the_model(void **state)
{
    struct fixture *f = *state;
    struct goblin__ps_registry r;
    struct client cl[CLIENTS] = {0};
    static struct model m;

    memset(&m, 0, sizeof(m));
    goblin__ps_init(&r, f->st);
    for (int i = 0; i < 20000; i++) {
        int c = (int)(next_rand() % CLIENTS);
        int k = (int)(next_rand() % GOBLIN__PS_KINDS);
        int n = (int)(next_rand() % NAMES);
        struct goblin_slice name = {names[n], strlen(names[n])};
        uint64_t op = next_rand() % 10;

        if (op < 4) {
            assert_int_equal(goblin__ps_subscribe(&r, &cl[c].ps, &cl[c],
                                                  (enum goblin__ps_kind)k,
                                                  name),
                             m.sub[c][k][n] ? 0 : 1);
            m.sub[c][k][n] = true;
        } else if (op < 7) {
            assert_int_equal(goblin__ps_unsubscribe(&r, &cl[c].ps, &cl[c],
                                                    (enum goblin__ps_kind)k,
                                                    name),
                             m.sub[c][k][n] ? 1 : 0);
            m.sub[c][k][n] = false;
        } else if (op < 9) {
            check_publish(&r, cl, &m, k == 1 ? 0 : k, n);
        } else if (next_rand() % 50 == 0) {
            goblin__ps_leave_all(&r, &cl[c].ps);
            memset(m.sub[c], 0, sizeof(m.sub[c]));
        }
        if (i % 1000 == 0) {
            for (int kk = 0; kk < GOBLIN__PS_KINDS; kk++) {
                size_t distinct = 0;

                for (int nn = 0; nn < NAMES; nn++) {
                    uint32_t subs = 0;
                    const struct goblin__ps_chan *ch = goblin__ps_find(
                        &r, (enum goblin__ps_kind)kk,
                        (struct goblin_slice){names[nn], strlen(names[nn])});

                    for (int cc = 0; cc < CLIENTS; cc++)
                        subs += m.sub[cc][kk][nn];
                    distinct += subs > 0;
                    assert_int_equal(ch ? ch->nsubs : 0, subs);
                }
                assert_int_equal(goblin__ps_names(&r,
                                                  (enum goblin__ps_kind)kk),
                                 distinct);
            }
        }
    }
    for (int c = 0; c < CLIENTS; c++) {
        uint32_t total = 0;

        for (int k = 0; k < GOBLIN__PS_KINDS; k++)
            for (int n = 0; n < NAMES; n++)
                total += m.sub[c][k][n];
        assert_int_equal(goblin__ps_total(&cl[c].ps), total);
        goblin__ps_leave_all(&r, &cl[c].ps);
    }
    assert_int_equal(r.lenmask, 0);
    goblin__ps_free(&r);
}

/* Thousands of patterns with distinct prefixes: one match, found through
 * its bucket. */
static void test_many_patterns_one_match(void **state)
{
    struct fixture *f = *state;
    struct goblin__ps_registry r;
    struct client c = {0};
    char buf[32];

    goblin__ps_init(&r, f->st);
    for (int i = 0; i < 8192; i++) {
        int n = snprintf(buf, sizeof(buf), "chan:%d:*", i);

        assert_int_equal(goblin__ps_subscribe(&r, &c.ps, &c,
                                              GOBLIN__PS_PATTERN,
                                              slice_of(buf, (size_t)n)),
                         1);
    }
    assert_int_equal(goblin__ps_publish(&r, false, S("chan:4711:x"), count,
                                        NULL),
                     1);
    assert_int_equal(goblin__ps_publish(&r, false, S("chan:4711"), count,
                                        NULL),
                     0);
    /* Shard publishes never reach patterns. */
    assert_int_equal(goblin__ps_publish(&r, true, S("chan:4711:x"), count,
                                        NULL),
                     0);
    goblin__ps_leave_all(&r, &c.ps);
    goblin__ps_free(&r);
}

static void test_subscribe_fails_cleanly_at_every_allocation(void **state)
{
    struct fixture *f = *state;
    struct goblin__ps_registry r;
    struct client a = {0}, b = {0};
    int rc;

    goblin__ps_init(&r, f->st);
    /* A failure may leave a table or an array grown (capacity, freed with
     * the registry), never a channel or a subscription. */
    for (long n = 0;; n++) {
        f->counts.fail_after = n;
        rc = goblin__ps_subscribe(&r, &a.ps, &a, GOBLIN__PS_PATTERN,
                                  S("p.*"));
        f->counts.fail_after = -1;
        if (rc == 1)
            break;
        assert_int_equal(rc, GOBLIN_ENOMEM);
        assert_int_equal(goblin__ps_names(&r, GOBLIN__PS_PATTERN), 0);
        assert_int_equal(r.lenmask, 0);
        assert_int_equal(goblin__ps_total(&a.ps), 0);
    }
    for (long n = 0;; n++) {
        f->counts.fail_after = n;
        rc = goblin__ps_subscribe(&r, &b.ps, &b, GOBLIN__PS_PATTERN,
                                  S("p.*"));
        f->counts.fail_after = -1;
        if (rc == 1)
            break;
        assert_int_equal(rc, GOBLIN_ENOMEM);
        assert_int_equal(goblin__ps_find(&r, GOBLIN__PS_PATTERN, S("p.*"))
                             ->nsubs,
                         1);
    }
    assert_int_equal(goblin__ps_publish(&r, false, S("p.x"), count, NULL), 2);
    goblin__ps_leave_all(&r, &a.ps);
    goblin__ps_leave_all(&r, &b.ps);
    goblin__ps_free(&r);
}

static void test_notify_flags_read_like_redis(void **state)
{
    (void)state;
    assert_int_equal(goblin__notify_parse("", 0), 0);
    assert_int_equal(goblin__notify_parse("K$", 2),
                     GOBLIN__NOTIFY_KEYSPACE | GOBLIN__NOTIFY_STRING);
    assert_int_equal(goblin__notify_parse("Elshzxetdgm", 11),
                     GOBLIN__NOTIFY_KEYEVENT | GOBLIN__NOTIFY_LIST |
                         GOBLIN__NOTIFY_SET | GOBLIN__NOTIFY_HASH |
                         GOBLIN__NOTIFY_ZSET | GOBLIN__NOTIFY_EXPIRED |
                         GOBLIN__NOTIFY_EVICTED | GOBLIN__NOTIFY_STREAM |
                         GOBLIN__NOTIFY_MODULE | GOBLIN__NOTIFY_GENERIC |
                         GOBLIN__NOTIFY_KEY_MISS);
    /* A is every class but key misses and new keys. */
    assert_int_equal(goblin__notify_parse("A", 1) &
                         (GOBLIN__NOTIFY_KEY_MISS | GOBLIN__NOTIFY_NEW |
                          GOBLIN__NOTIFY_KEYSPACE),
                     0);
    assert_int_equal(goblin__notify_parse("An", 2) & GOBLIN__NOTIFY_NEW,
                     GOBLIN__NOTIFY_NEW);
    assert_int_equal(goblin__notify_parse("KS", 2), -1);
    assert_int_equal(goblin__notify_parse("K\0", 2), -1);
    assert_int_equal(goblin__notify_parse("Kq", 2), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_glob_agrees_with_redis_stringmatchlen),
        cmocka_unit_test(test_glob_fixed_cases),
        cmocka_unit_test(test_prefix_stops_at_the_first_wildcard),
        FIXTURE_TEST(test_registry_follows_the_model),
        FIXTURE_TEST(test_many_patterns_one_match),
        FIXTURE_TEST(test_subscribe_fails_cleanly_at_every_allocation),
        cmocka_unit_test(test_notify_flags_read_like_redis),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
