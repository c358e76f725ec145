/* typed_reply.c - the SBE replies of the typed calls that return arrays,
 * decoded where they lie: a scored array (ZRANGE WITHSCORES) straight
 * into the client's member array, an array of strings (LRANGE, SMEMBERS,
 * LPOP with a count) straight into its string array, each item a view
 * of the reply frame, with no tree in between. The call says which it
 * wants (goblin_client.want) for the one reply it reads; every other
 * reply (an error, a null, a reply of another shape) is read as a tree,
 * as for the generic calls. The arrays are the client's own and live
 * until its next call, as the frame does (a CQ record stays held, the
 * input buffer is not compacted, until the next read).
 */
#include "client/client.h"
#include "resp/value_set.h"
#include "sbe/goblin_sbe_gen.h"

/* Room for n items of size bytes in *arr (*cap of them now), at least
 * min when it grows: 0 or GOBLIN_ENOMEM. */
static int room(goblin_client *c, void **arr, size_t *cap, size_t size,
                size_t n, size_t min)
{
    size_t k = n < min ? min : n;
    void *p;

    if (n <= *cap && *arr != NULL)
        return 0;
    if ((p = goblin__client_mem(c, k * size)) == NULL)
        return GOBLIN_ENOMEM;
    goblin__client_mem_free(c, *arr, *cap * size);
    *arr = p;
    *cap = k;
    return 0;
}

int goblin__client_members_room(goblin_client *c, size_t n)
{
    return room(c, (void **)&c->members, &c->members_cap,
                sizeof(*c->members), n, 1);
}

int goblin__client_strings_room(goblin_client *c, size_t n)
{
    return room(c, (void **)&c->strings, &c->strings_cap,
                sizeof(*c->strings), n, 16);
}

static int scored(goblin_client *c, struct goblin_sbe_msg *m, size_t *n)
{
    struct goblin_sbe_scored_array_reply a;
    struct goblin_sbe_scored_array_reply_items e;
    size_t i;

    if (goblin_sbe_scored_array_reply_decode(&a, m) != 0)
        return GOBLIN_EPROTO;
    *n = a.items.count; /* the walk counts it down */
    if (goblin__client_members_room(c, *n) != 0)
        return GOBLIN_ENOMEM;
    for (i = 0; i < *n; i++) {
        if (!goblin_sbe_scored_array_reply_items_next(&a.items, &e))
            return GOBLIN_EPROTO;
        c->members[i].member = e.member;
        c->members[i].score = goblin_sbe_scored_array_reply_items_score(&e);
    }
    return 1;
}

static int strings(goblin_client *c, struct goblin_sbe_msg *m, size_t *n)
{
    struct goblin_sbe_array_reply a;
    struct goblin_sbe_array_reply_items e;
    size_t i;

    if (goblin_sbe_array_reply_decode(&a, m) != 0)
        return GOBLIN_EPROTO;
    *n = a.items.count; /* the walk counts it down */
    if (goblin__client_strings_room(c, *n) != 0)
        return GOBLIN_ENOMEM;
    for (i = 0; i < *n; i++) {
        if (!goblin_sbe_array_reply_items_next(&a.items, &e))
            return GOBLIN_EPROTO;
        c->strings[i] = e.value;
    }
    return 1;
}

int goblin__client_typed_reply(goblin_client *c, const uint8_t *p,
                               size_t len, const struct goblin_resp_value **v)
{
    struct goblin_sbe_msg m;
    size_t n = 0;
    int rc;

    if (goblin_sbe_msg_wrap(&m, p, len) != 0)
        return 0; /* the tree gives the verdict */
    if (c->want == GOBLIN__WANT_MEMBERS &&
        m.template_id == GOBLIN_SBE_SCORED_ARRAY_REPLY)
        rc = scored(c, &m, &n);
    else if (c->want == GOBLIN__WANT_STRINGS &&
             m.template_id == GOBLIN_SBE_ARRAY_REPLY)
        rc = strings(c, &m, &n);
    else
        return 0;
    if (rc <= 0)
        return rc;
    /* What the reply is to the read path: an array of that many items,
     * which the typed call takes from its own array. */
    goblin__resp_value_set(&c->direct, GOBLIN_RESP_ARRAY, NULL, 0, 0);
    c->direct.n = n;
    c->decoded = true;
    *v = &c->direct;
    return 1;
}
