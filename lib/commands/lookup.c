/* lookup.c - finding a command by name in O(1): an open-addressing table
 * built at engine open over the lower-case names of the top-level commands
 * and the "parent|sub" fullnames of subcommands.
 *
 * A name is folded to lower case eight bytes at a time into a small local
 * buffer, hashed, and compared once with memcmp: no strcasecmp chain. Names
 * longer than GOBLIN__NAME_MAX cannot be commands and miss at once.
 */
#include <string.h>

#include "session.h"

#define NAME_MAX_LEN 40

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

/* Copies name folded to lower case into buf (zero-padded to a multiple of
 * 8 bytes) and returns its hash. */
static uint64_t fold_hash(unsigned char *buf, const void *name, size_t len)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ len, w;
    size_t i;

    memset(buf, 0, (len + 7) & ~(size_t)7);
    memcpy(buf, name, len);
    for (i = 0; i < len; i += 8) {
        memcpy(&w, buf + i, 8);
        w = fold8(w);
        memcpy(buf + i, &w, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 29;
    }
    return h ^ (h >> 32);
}

static uint32_t probe(const goblin_engine *eng, const unsigned char *buf,
                      size_t len, uint64_t h, bool *found)
{
    uint32_t i = (uint32_t)h & eng->slot_mask;
    const struct goblin__command *c;

    for (;; i = (i + 1) & eng->slot_mask) {
        if (eng->slots[i] == 0) {
            *found = false;
            return i;
        }
        c = &goblin__commands[(eng->slots[i] & 0xffff) - 1];
        if ((eng->slots[i] >> 16) == len &&
            memcmp(c->fullname, buf, len) == 0) {
            *found = true;
            return i;
        }
    }
}

int goblin__lookup_build(goblin_engine *eng)
{
    unsigned char buf[NAME_MAX_LEN + 8];
    size_t n = goblin__command_count, cap = 64, i, len;
    bool found;
    uint32_t at;

    while (cap < n * 3)
        cap *= 2;
    eng->slots = goblin__alloc(eng->st, cap * sizeof(*eng->slots));
    if (eng->slots == NULL)
        return GOBLIN_ENOMEM;
    memset(eng->slots, 0, cap * sizeof(*eng->slots));
    eng->slot_mask = (uint32_t)cap - 1;
    for (i = 0; i < n; i++) {
        len = strlen(goblin__commands[i].fullname);
        at = probe(eng, buf, len,
                   fold_hash(buf, goblin__commands[i].fullname, len), &found);
        eng->slots[at] = (uint32_t)(i + 1) | (uint32_t)len << 16;
    }
    return 0;
}

void goblin__lookup_free(goblin_engine *eng)
{
    goblin__free(eng->st, eng->slots,
                 ((size_t)eng->slot_mask + 1) * sizeof(*eng->slots));
    eng->slots = NULL;
}

const struct goblin__command *goblin__command_lookup(
    const goblin_engine *eng, struct goblin_slice name)
{
    unsigned char buf[NAME_MAX_LEN + 8];
    bool found;
    uint32_t at;

    if (name.len == 0 || name.len > NAME_MAX_LEN)
        return NULL;
    at = probe(eng, buf, name.len, fold_hash(buf, name.ptr, name.len),
               &found);
    return found ? &goblin__commands[(eng->slots[at] & 0xffff) - 1] : NULL;
}

const struct goblin__command *goblin__command_lookup_sub(
    const goblin_engine *eng, const struct goblin__command *parent,
    struct goblin_slice sub)
{
    unsigned char name[NAME_MAX_LEN];
    size_t plen = strlen(parent->name);

    if (sub.len == 0 || plen + 1 + sub.len > NAME_MAX_LEN)
        return NULL;
    memcpy(name, parent->name, plen);
    name[plen] = '|';
    memcpy(name + plen + 1, sub.ptr, sub.len);
    return goblin__command_lookup(
        eng, (struct goblin_slice){name, plen + 1 + sub.len});
}
