/* keyspec.c - the key positions of a command's arguments, found from the
 * command table's Redis 7 key specs as Redis 7.0 finds them
 * (getKeysFromCommandWithSpecs in db.c): ACL key checks and COMMAND
 * GETKEYS / GETKEYSANDFLAGS use it.
 *
 * Specs come first. SET's spec, whose flags vary with the arguments (GET
 * makes it read its key), is resolved as Redis's setGetKeys does. When a
 * keynum spec cannot be followed (a bad count), Redis falls back to the
 * command's own key procedure, which for every keynum command Goblin has
 * (ZUNIONSTORE, ZINTER, ZINTERCARD, ...) is genericGetKeys: the count
 * read as atoi reads it, the destination last; SORT's is sortGetKeys and
 * SORT_RO's sortROGetKeys.
 * There is no limit
 * on how many keys a call may name: the caller sizes the output with
 * goblin__find_keys_cap.
 */
#include <limits.h>
#include <string.h>

#include "goblin/numtext.h"
#include "respond.h"
#include "engine/session.h"

size_t goblin__find_keys_cap(const struct goblin__command *c, int argc)
{
    return (size_t)(argc > 0 ? argc : 1) *
           (c->nkeyspecs > 0 ? c->nkeyspecs : 1);
}

/* SET's one key: read and written with GET, else only overwritten. */
static int set_keys(int argc, const struct goblin_slice *argv, int *pos,
                    uint16_t *flags)
{
    int i;

    pos[0] = 1;
    flags[0] = KS_OW | KS_UPDATE;
    for (i = 3; i < argc; i++)
        if (goblin__arg_is(argv[i], "get"))
            flags[0] = KS_RW | KS_ACCESS | KS_UPDATE;
    return 1;
}

/* Where spec ks starts in argv: its index, or the argument after its
 * keyword (searched forward from startfrom, stopping before the last
 * argument, or backward from argc + startfrom); 0 if the keyword is
 * absent, -1 for an unknown spec. */
static int spec_begin(const struct goblin__keyspec *ks, int argc,
                      const struct goblin_slice *argv)
{
    int start, end, i;

    if (ks->begin_keyword == 0)
        return ks->bs;
    if (ks->begin_keyword != 1)
        return -1;
    start = ks->bs > 0 ? ks->bs : argc + ks->bs;
    end = ks->bs > 0 ? argc - 1 : 1;
    for (i = start; i != end; i += start <= end ? 1 : -1) {
        if (i >= argc || i < 1)
            break;
        if (goblin__arg_is(argv[i], ks->keyword))
            return i + 1;
    }
    return 0;
}

/* Appends spec ks's keys at pos + n; returns the new count, or -1 when
 * the spec does not fit the arguments. */
static int spec_keys(const struct goblin__keyspec *ks, int argc,
                     const struct goblin_slice *argv, int *pos,
                     uint16_t *flags, int n)
{
    int first = spec_begin(ks, argc, argv), last, step, i;
    int64_t num;

    if (first == 0)
        return n;
    if (first < 0 || ks->find_keynum > 1)
        return -1;
    if (ks->find_keynum == 0) {
        step = ks->fk[1];
        if (ks->fk[0] >= 0)
            last = first + ks->fk[0];
        else if (ks->fk[2] == 0)
            last = argc + ks->fk[0];
        else
            last = first + ((argc - first) / ks->fk[2] + ks->fk[0]);
    } else {
        step = ks->fk[2];
        if (ks->fk[0] >= argc || first + ks->fk[0] >= argc ||
            goblin_int64_parse(argv[first + ks->fk[0]].ptr,
                               argv[first + ks->fk[0]].len, &num) != 0 ||
            num < 0 || num > INT_MAX - first)
            return -1;
        first += ks->fk[1];
        last = first + (int)num - 1;
    }
    if (step <= 0 || last >= argc || last < first || first >= argc)
        return -1;
    for (i = first; i <= last; i += step) {
        pos[n] = i;
        flags[n++] = ks->flags;
    }
    return n;
}

/* A count as C's atoi reads it: leading blanks, a sign, digits, anything
 * after ignored (saturating instead of overflowing). */
static long long atoi_like(struct goblin_slice s)
{
    const unsigned char *p = s.ptr, *end = p + s.len;
    long long v = 0;
    int neg = 0;

    while (p < end && (*p == ' ' || (*p >= '\t' && *p <= '\r')))
        p++;
    if (p < end && (*p == '-' || *p == '+'))
        neg = *p++ == '-';
    for (; p < end && *p >= '0' && *p <= '9'; p++)
        v = v > LLONG_MAX / 10 - 9 ? LLONG_MAX / 10 : v * 10 + (*p - '0');
    return neg ? -v : v;
}

/* genericGetKeys for a command whose keys are a count followed by that
 * many keys (the keynum spec), plus a destination when an index spec
 * precedes it. */
static int count_keys(const struct goblin__command *c, int argc,
                      const struct goblin_slice *argv, int *pos,
                      uint16_t *flags)
{
    const struct goblin__keyspec *kn = NULL;
    int store = 0, countofs, firstofs, i;
    long long num;

    for (i = 0; i < c->nkeyspecs; i++) {
        if (c->keyspecs[i].find_keynum == 1)
            kn = &c->keyspecs[i];
        else if (c->keyspecs[i].begin_keyword == 0)
            store = c->keyspecs[i].bs;
    }
    if (kn == NULL || kn->begin_keyword != 0 || kn->fk[2] != 1)
        return 0;
    countofs = kn->bs + kn->fk[0];
    firstofs = kn->bs + kn->fk[1];
    if (countofs >= argc)
        return 0;
    num = atoi_like(argv[countofs]);
    if (num < 1 || num > argc - firstofs)
        return 0;
    for (i = 0; i < (int)num; i++) {
        pos[i] = firstofs + i;
        flags[i] = 0;
    }
    if (store > 0) {
        pos[i] = store;
        flags[i++] = 0;
    }
    return i;
}

/* SORT's keys, as Redis's sortGetKeys finds them (its second key spec is
 * incomplete): the sorted key, then the destination of the last STORE;
 * LIMIT's two arguments and GET's and BY's one are skipped, a STORE's
 * destination is not (it is read as an option name in turn, as Redis
 * reads it). */
static int sort_keys(int argc, const struct goblin_slice *argv, int *pos,
                     uint16_t *flags)
{
    int n = 1;

    pos[0] = 1;
    flags[0] = KS_RO | KS_ACCESS;
    for (int i = 2; i < argc; i++) {
        if (goblin__arg_is(argv[i], "limit")) {
            i += 2;
        } else if (goblin__arg_is(argv[i], "get") ||
                   goblin__arg_is(argv[i], "by")) {
            i += 1;
        } else if (goblin__arg_is(argv[i], "store") && i + 1 < argc) {
            pos[1] = i + 1;
            flags[1] = KS_OW | KS_UPDATE;
            n = 2;
        }
    }
    return n;
}

int goblin__find_keys(const struct goblin__command *c, int argc,
                      const struct goblin_slice *argv, int *pos,
                      uint16_t *flags)
{
    int n = 0, s;

    if (c->nkeyspecs == 1 && (c->keyspecs[0].flags & KS_VARIABLE_FLAGS) &&
        strcmp(c->fullname, "set") == 0)
        return set_keys(argc, argv, pos, flags);
    if (c->flags & CMD_MOVABLEKEYS && strcmp(c->fullname, "sort") == 0)
        return sort_keys(argc, argv, pos, flags);
    if (c->flags & CMD_MOVABLEKEYS && strcmp(c->fullname, "sort_ro") == 0) {
        /* sortROGetKeys: the sorted key only (the BY/GET spec is
         * unknown, so the specs cannot be followed). */
        pos[0] = 1;
        flags[0] = KS_RO | KS_ACCESS;
        return 1;
    }
    for (s = 0; s < c->nkeyspecs && n >= 0; s++)
        n = spec_keys(&c->keyspecs[s], argc, argv, pos, flags, n);
    if (n >= 0)
        return n;
    return c->flags & CMD_MOVABLEKEYS ? count_keys(c, argc, argv, pos, flags)
                                      : 0;
}
