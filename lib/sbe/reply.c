/* reply.c - typed SBE replies written straight from native values (sbe.h),
 * for the request dispatcher: no recording, one exact-size frame each.
 * A reply past 65535 entries or the sink's frame limit becomes an
 * ErrorReply, as in sink.c. */
#include <assert.h>

#include "sbe.h"
#include "sbe/goblin_sbe_gen.h"
#include "util/copy_short.h"

#define FRAME_HDR (4 + GOBLIN_SBE_HEADER_LENGTH)
#define VAR GOBLIN_SBE_VAR_HEADER_LENGTH
#define GRP GOBLIN_SBE_GROUP_HEADER_LENGTH

static const char too_large[] = "ERR result too large for one SBE array reply";

static bool begin(struct goblin__sbe_sink *k, size_t size, size_t n,
                  struct goblin_sbe_writer *w)
{
    if (n > GOBLIN_SBE_GROUP_MAX || size > k->max_reply) {
        goblin__sbe_reply_error(k, too_large, sizeof(too_large) - 1);
        return false;
    }
    if (goblin_buf_reserve(k->out, size) != 0)
        return false;
    goblin_sbe_writer_init(w, k->out->data + k->out->len, size, true);
    return true;
}

static void end(struct goblin__sbe_sink *k, int n)
{
    assert(n > 0);
    if (n > 0)
        k->out->len += (size_t)n;
}

/* The entries of a group written by hand, the frame's exact size
 * reserved and its count checked already (begin): per entry its block
 * (the score's 8 bytes; none for an ArrayReply), the member's length and
 * bytes, then the group's count once, where the generated
 * writer checks and counts entry by entry. The layout is the schema's;
 * these pin what the loops rely on. */
_Static_assert(GOBLIN_SBE_ARRAY_REPLY_ITEMS_BLOCK_LENGTH == 0 &&
                   GOBLIN_SBE_SCORED_ARRAY_REPLY_ITEMS_BLOCK_LENGTH == 8 &&
                   VAR == 4 && GRP == 4,
               "ArrayReply and ScoredArrayReply entries as reply.c writes them");

static inline uint8_t *put_var(uint8_t *p, struct goblin_slice v)
{
    goblin_sbe_wr_u32(p, (uint32_t)v.len);
    goblin__copy_short(p + VAR, v.ptr, v.len);
    return p + VAR + v.len;
}

/* Ends the group begun at w->group with n entries that end at p. */
static void group_done(struct goblin_sbe_writer *w, uint8_t *p, size_t n)
{
    goblin_sbe_wr_u16(w->buf + w->group + 2, (uint16_t)n);
    w->pos = (size_t)(p - w->buf);
}

static size_t strings_size(const struct goblin_slice *v, size_t n,
                           size_t per)
{
    size_t i, size = 0;

    for (i = 0; i < n; i++)
        size += per + VAR + v[i].len;
    return size;
}

void goblin__sbe_reply_strings(struct goblin__sbe_sink *k,
                               const struct goblin_slice *v, size_t n,
                               bool nullable)
{
    size_t i, size = FRAME_HDR + GRP + strings_size(v, n, nullable);
    struct goblin_sbe_writer w;

    if (!begin(k, size, n, &w))
        return;
    if (!nullable) {
        uint8_t *p;

        goblin_sbe_array_reply_begin(&w);
        goblin_sbe_array_reply_items_begin(&w);
        p = w.buf + w.pos;
        for (i = 0; i < n; i++)
            p = put_var(p, v[i]);
        group_done(&w, p, n);
        end(k, goblin_sbe_array_reply_end(&w));
        return;
    }
    goblin_sbe_nullable_array_reply_begin(&w);
    goblin_sbe_nullable_array_reply_items_begin(&w);
    for (i = 0; i < n; i++)
        goblin_sbe_nullable_array_reply_items_add(&w, v[i].ptr != NULL,
                                                  v[i]);
    end(k, goblin_sbe_nullable_array_reply_end(&w));
}

static size_t scored_size(const struct goblin__scored *v, size_t n)
{
    size_t i, size = 0;

    for (i = 0; i < n; i++)
        size += 8 + VAR + v[i].member.len;
    return size;
}

void goblin__sbe_reply_scored(struct goblin__sbe_sink *k,
                              const struct goblin__scored *v, size_t n)
{
    size_t i, size = FRAME_HDR + GRP + scored_size(v, n);
    struct goblin_sbe_writer w;
    uint8_t *p;

    if (!begin(k, size, n, &w))
        return;
    goblin_sbe_scored_array_reply_begin(&w);
    goblin_sbe_scored_array_reply_items_begin(&w);
    p = w.buf + w.pos;
    for (i = 0; i < n; i++) {
        goblin_sbe_wr_f64(p, v[i].score);
        p = put_var(p + 8, v[i].member);
    }
    group_done(&w, p, n);
    end(k, goblin_sbe_scored_array_reply_end(&w));
}

void goblin__sbe_reply_doubles(struct goblin__sbe_sink *k, const double *v,
                               const bool *present, size_t n)
{
    size_t i, size = FRAME_HDR + GRP + 9 * n;
    struct goblin_sbe_writer w;

    if (!begin(k, size, n, &w))
        return;
    goblin_sbe_nullable_double_array_reply_begin(&w);
    goblin_sbe_nullable_double_array_reply_items_begin(&w);
    for (i = 0; i < n; i++)
        goblin_sbe_nullable_double_array_reply_items_add(&w, present[i],
                                                         present[i] ? v[i]
                                                                    : 0.0);
    end(k, goblin_sbe_nullable_double_array_reply_end(&w));
}

void goblin__sbe_reply_map(struct goblin__sbe_sink *k,
                           const struct goblin_slice *kv, size_t npairs)
{
    size_t i, size = FRAME_HDR + GRP + strings_size(kv, 2 * npairs, 0);
    struct goblin_sbe_writer w;

    if (!begin(k, size, npairs, &w))
        return;
    goblin_sbe_map_reply_begin(&w);
    goblin_sbe_map_reply_entries_begin(&w);
    for (i = 0; i < npairs; i++)
        goblin_sbe_map_reply_entries_add(&w, kv[2 * i], kv[2 * i + 1]);
    end(k, goblin_sbe_map_reply_end(&w));
}

void goblin__sbe_reply_scan(struct goblin__sbe_sink *k, uint64_t cursor,
                            const struct goblin_slice *v, size_t n)
{
    size_t i, size = FRAME_HDR + 8 + GRP + strings_size(v, n, 0);
    struct goblin_sbe_writer w;

    if (!begin(k, size, n, &w))
        return;
    goblin_sbe_string_scan_reply_begin(&w, cursor);
    goblin_sbe_string_scan_reply_items_begin(&w);
    for (i = 0; i < n; i++)
        goblin_sbe_string_scan_reply_items_add(&w, v[i]);
    end(k, goblin_sbe_string_scan_reply_end(&w));
}

void goblin__sbe_reply_scored_scan(struct goblin__sbe_sink *k,
                                   uint64_t cursor,
                                   const struct goblin__scored *v,
                                   size_t n)
{
    size_t i, size = FRAME_HDR + 8 + GRP + scored_size(v, n);
    struct goblin_sbe_writer w;

    if (!begin(k, size, n, &w))
        return;
    goblin_sbe_scored_scan_reply_begin(&w, cursor);
    goblin_sbe_scored_scan_reply_items_begin(&w);
    for (i = 0; i < n; i++)
        goblin_sbe_scored_scan_reply_items_add(&w, v[i].score, v[i].member);
    end(k, goblin_sbe_scored_scan_reply_end(&w));
}
