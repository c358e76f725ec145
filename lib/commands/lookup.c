/* lookup.c - finding a command by name in O(1): an open-addressing table
 * built at engine open over the lower-case names of the top-level commands
 * and the "parent|sub" fullnames of subcommands.
 *
 * A slot holds the command's index + 1 (bits 0-15), its name's length
 * (bits 16-30) and whether it is a subcommand (bit 31). Calls look up
 * top-level names only: "CONFIG|GET" is no command to Redis, only a name
 * COMMAND INFO, COMMAND DOCS and ACL rules use.
 *
 * A name is read in fixed-size words, folded to lower case eight bytes at
 * a time (SWAR), hashed, and compared word by word with a zero-padded
 * lower-case copy of the table's name: no strcasecmp chain, no copy. Names
 * longer than GOBLIN__NAME_MAX cannot be commands and miss at once.
 *
 * rename-command changes the table after it is built (see below).
 */
#include <assert.h>
#include <string.h>

#include "engine/session.h"
#include "util/bytes_cmp.h"

#define NAME_MAX_LEN 40
#define NAME_SLOT 48 /* bytes per padded lower-case name copy */
#define SLOT_SUB 0x80000000u

/* Folds 'A'..'Z' to lower case in each byte of w (SWAR; other bytes,
 * including bytes >= 0x80, are left alone). */
static inline uint64_t fold8(uint64_t w)
{
    const uint64_t ones = 0x0101010101010101ull, high = ones * 0x80;
    uint64_t low7 = w & ~high;
    uint64_t ge_a = low7 + ones * (0x80 - 'A');
    uint64_t gt_z = low7 + ones * (0x7f - 'Z');
    uint64_t upper = (ge_a ^ gt_z) & ~w & high;

    return w | (upper >> 2);
}

static inline uint64_t mix(uint64_t h)
{
    h *= 0xff51afd7ed558ccdull;
    return h ^ (h >> 29);
}

/* The i-th word of an n-byte name (n >= 1), covering it with fixed-size
 * loads only: whole words, the last one overlapping its neighbour; below
 * 8 bytes goblin__short_word's one word. The same function reads the
 * input and the padded table copy, so equal names (once folded) give
 * equal words. */
static inline uint64_t word(const unsigned char *p, size_t n, size_t i)
{
    if (n >= 8)
        return goblin__ld64(p + (i + 8 <= n ? i : n - 8));
    return goblin__short_word(p, n);
}

static uint64_t name_hash(const unsigned char *p, size_t n)
{
    uint64_t h = mix(n ^ 0x9e3779b97f4a7c15ull);
    size_t i = 0;

    do {
        h = mix(h ^ fold8(word(p, n, i)));
        i += 8;
    } while (i < n);
    return h ^ (h >> 32);
}

static inline bool name_eq(const unsigned char *p, size_t n,
                           const unsigned char *lower)
{
    size_t i = 0;

    do {
        if (fold8(word(p, n, i)) != word(lower, n, i))
            return false;
        i += 8;
    } while (i < n);
    return true;
}

/* Finds the slot of an n-byte name p (1 <= n <= NAME_MAX_LEN) in a table
 * (slots, with its names). */
static inline uint32_t probe_in(const goblin_engine *eng,
                                const uint32_t *slots,
                                const unsigned char *names,
                                const unsigned char *p, size_t n,
                                bool *found)
{
    uint32_t i = (uint32_t)name_hash(p, n) & eng->slot_mask, v;

    for (;; i = (i + 1) & eng->slot_mask) {
        v = slots[i];
        if (v == 0) {
            *found = false;
            return i;
        }
        if (((v >> 16) & 0x7fff) == n &&
            name_eq(p, n, names + (size_t)((v & 0xffff) - 1) * NAME_SLOT)) {
            *found = true;
            return i;
        }
    }
}

/* In the table calls use. */
static uint32_t probe(const goblin_engine *eng, const unsigned char *p,
                      size_t n, bool *found)
{
    return probe_in(eng, eng->slots, eng->names, p, n, found);
}

int goblin__lookup_build(goblin_engine *eng)
{
    size_t n = goblin__command_count, cap = 64, i, len;
    bool found;
    uint32_t at;

    while (cap < n * 3)
        cap *= 2;
    eng->slot_mask = (uint32_t)cap - 1;
    eng->slots = goblin__alloc(eng->st, cap * sizeof(*eng->slots));
    eng->names = goblin__alloc(eng->st, n * NAME_SLOT);
    if (eng->slots == NULL || eng->names == NULL)
        return GOBLIN_ENOMEM;
    memset(eng->slots, 0, cap * sizeof(*eng->slots));
    memset(eng->names, 0, n * NAME_SLOT);
    for (i = 0; i < n; i++) {
        len = strlen(goblin__commands[i].fullname);
        assert(len <= NAME_MAX_LEN);
        memcpy(eng->names + i * NAME_SLOT, goblin__commands[i].fullname, len);
        at = probe(eng, eng->names + i * NAME_SLOT, len, &found);
        eng->slots[at] = (uint32_t)(i + 1) | (uint32_t)len << 16 |
                         (strchr(goblin__commands[i].fullname, '|') != NULL
                              ? SLOT_SUB
                              : 0);
    }
    return 0;
}

void goblin__lookup_free(goblin_engine *eng)
{
    size_t slots = ((size_t)eng->slot_mask + 1) * sizeof(*eng->slots);

    if (eng->slots != NULL)
        goblin__free(eng->st, eng->slots, slots);
    goblin__free(eng->st, eng->names, goblin__command_count * NAME_SLOT);
    if (eng->orig_slots != NULL)
        goblin__free(eng->st, eng->orig_slots, slots);
    goblin__free(eng->st, eng->orig_names,
                 goblin__command_count * NAME_SLOT);
    goblin__free(eng->st, eng->cmd_gone, goblin__command_count);
    eng->slots = eng->orig_slots = NULL;
    eng->names = eng->orig_names = NULL;
    eng->cmd_gone = NULL;
}

/* The slot naming name, or 0 when none does. */
static uint32_t find_slot(const goblin_engine *eng, struct goblin_slice name)
{
    bool found;
    uint32_t at;

    if (name.len == 0 || name.len > NAME_MAX_LEN)
        return 0;
    at = probe(eng, name.ptr, name.len, &found);
    return found ? eng->slots[at] : 0;
}

const struct goblin__command *goblin__command_lookup(
    const goblin_engine *eng, struct goblin_slice name)
{
    uint32_t v = find_slot(eng, name);

    return v != 0 && !(v & SLOT_SUB) ? &goblin__commands[(v & 0xffff) - 1]
                                     : NULL;
}

const struct goblin__command *goblin__command_lookup_slow(
    const goblin_engine *eng, struct goblin_slice name,
    struct goblin__lookup_hint *hint)
{
    uint32_t v = hint->v;

    if (v != 0 && name.len >= 8 && ((v >> 16) & 0x7fff) == name.len &&
        name_eq(name.ptr, name.len,
                eng->names + (size_t)((v & 0xffff) - 1) * NAME_SLOT))
        return &goblin__commands[(v & 0xffff) - 1];
    v = find_slot(eng, name);
    if (v == 0 || (v & SLOT_SUB))
        return NULL;
    hint->v = v;
    hint->word = name.len < 8 ? goblin__short_word(name.ptr, name.len) : 0;
    return &goblin__commands[(v & 0xffff) - 1];
}

const struct goblin__command *goblin__command_lookup_sub(
    const goblin_engine *eng, const struct goblin__command *parent,
    struct goblin_slice sub)
{
    unsigned char name[NAME_MAX_LEN];
    size_t plen = strlen(parent->name);
    uint32_t v;

    if (sub.len == 0 || plen + 1 + sub.len > NAME_MAX_LEN)
        return NULL;
    memcpy(name, parent->name, plen);
    name[plen] = '|';
    memcpy(name + plen + 1, sub.ptr, sub.len);
    v = find_slot(eng, (struct goblin_slice){name, plen + 1 + sub.len});
    return v != 0 ? &goblin__commands[(v & 0xffff) - 1] : NULL;
}

/* A subcommand is found through its parent's name as calls know it now
 * (after rename-command "cfg|get", not "config|get", as Redis). */
const struct goblin__command *goblin__command_lookup_fullname(
    const goblin_engine *eng, struct goblin_slice name)
{
    const char *bar = memchr(name.ptr, '|', name.len);
    const struct goblin__command *c;
    size_t n = bar != NULL ? (size_t)(bar - (const char *)name.ptr) : 0;

    if (bar == NULL)
        return goblin__command_lookup(eng, name);
    c = goblin__command_lookup(eng, (struct goblin_slice){name.ptr, n});
    if (c == NULL || c->nsub == 0)
        return NULL;
    return goblin__command_lookup_sub(
        eng, c, (struct goblin_slice){bar + 1, name.len - n - 1});
}

const struct goblin__command *goblin__command_lookup_orig(
    const goblin_engine *eng, struct goblin_slice name)
{
    bool found;
    uint32_t at, v;

    if (eng->orig_slots == NULL)
        return goblin__command_lookup(eng, name);
    if (name.len == 0 || name.len > NAME_MAX_LEN)
        return NULL;
    at = probe_in(eng, eng->orig_slots, eng->orig_names, name.ptr, name.len,
                  &found);
    v = found ? eng->orig_slots[at] : 0;
    return v != 0 && !(v & SLOT_SUB) ? &goblin__commands[(v & 0xffff) - 1]
                                     : NULL;
}

bool goblin__command_gone(const goblin_engine *eng,
                          const struct goblin__command *c)
{
    return eng->cmd_gone != NULL && eng->cmd_gone[c - goblin__commands];
}

/* ---- rename-command ----
 *
 * A rename changes the table calls look in: the old name's slot goes
 * (backward-shift deletion keeps every probe chain whole) and, unless the
 * new name is empty, the command's padded name becomes the new one and
 * gets a slot of its own. Subcommands keep their "parent|sub" slots: they
 * are reached through the parent. The first rename keeps a copy of the
 * table as built, which ACL rules use, as Redis keeps orig_commands; a
 * command renamed to "" is marked gone, for COMMAND and COMMAND COUNT. */

static void slot_remove(goblin_engine *eng, uint32_t at)
{
    uint32_t mask = eng->slot_mask, j = at, v, home;

    for (;;) {
        j = (j + 1) & mask;
        if ((v = eng->slots[j]) == 0)
            break;
        home = (uint32_t)name_hash(eng->names + (size_t)((v & 0xffff) - 1) *
                                                    NAME_SLOT,
                                   (v >> 16) & 0x7fff) & mask;
        /* v may fill the hole when the hole lies between home and j. */
        if (((j - home) & mask) >= ((j - at) & mask)) {
            eng->slots[at] = v;
            at = j;
        }
    }
    eng->slots[at] = 0;
}

static int keep_orig(goblin_engine *eng)
{
    size_t slots = ((size_t)eng->slot_mask + 1) * sizeof(*eng->slots);
    size_t names = goblin__command_count * NAME_SLOT;

    if (eng->orig_slots != NULL)
        return 0;
    eng->orig_slots = goblin__alloc(eng->st, slots);
    eng->orig_names = goblin__alloc(eng->st, names);
    eng->cmd_gone = goblin__alloc(eng->st, goblin__command_count);
    if (eng->orig_slots == NULL || eng->orig_names == NULL ||
        eng->cmd_gone == NULL)
        return GOBLIN_ENOMEM;
    memcpy(eng->orig_slots, eng->slots, slots);
    memcpy(eng->orig_names, eng->names, names);
    memset(eng->cmd_gone, 0, goblin__command_count);
    return 0;
}

int goblin__command_rename(goblin_engine *eng, struct goblin_slice from,
                           struct goblin_slice to, const char **why)
{
    const struct goblin__command *c = goblin__command_lookup(eng, from);
    unsigned char *name;
    bool found;
    uint32_t at;
    size_t i;

    if (c == NULL) {
        *why = "No such command in rename-command";
        return GOBLIN_EINVAL;
    }
    /* Sessions and scripts remember what they looked up: a RESP
     * session's hints and the scripts' are forgotten here; an SBE
     * session's typed requests cannot be. */
    for (goblin_session *s = eng->first; s != NULL; s = s->next) {
        if (s->proto == GOBLIN__PROTO_SBE) {
            *why = "rename-command is read at start, before any SBE client";
            return GOBLIN_EINVAL;
        }
        s->lookup_hint = (struct goblin__lookup_hint){0, 0};
    }
    memset(eng->script_hints, 0, sizeof(eng->script_hints));
    if (to.len > NAME_MAX_LEN) {
        *why = "rename-command: Goblin's command names are at most 40 "
               "bytes";
        return GOBLIN_EINVAL;
    }
    if (keep_orig(eng) < 0) {
        *why = "rename-command: out of memory";
        return GOBLIN_ENOMEM;
    }
    i = (size_t)(c - goblin__commands);
    slot_remove(eng, probe(eng, from.ptr, from.len, &found));
    eng->cmd_gone[i] = to.len == 0;
    if (to.len == 0)
        return 0;
    name = eng->names + i * NAME_SLOT;
    memset(name, 0, NAME_SLOT);
    for (size_t k = 0; k < to.len; k++) {
        unsigned char b = ((const unsigned char *)to.ptr)[k];

        name[k] = b >= 'A' && b <= 'Z' ? (unsigned char)(b | 0x20) : b;
    }
    at = probe(eng, name, to.len, &found);
    if (found) {
        *why = "Target command name already exists";
        return GOBLIN_EINVAL;
    }
    eng->slots[at] = (uint32_t)(i + 1) | (uint32_t)to.len << 16;
    return 0;
}
