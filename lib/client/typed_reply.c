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
#include "sbe/goblin_sbe_gen.h"

int goblin__client_members_room(goblin_client *c, size_t n)
{
    struct goblin_client_member *m;
    size_t size = n * sizeof(*m);

    if (n <= c->members_cap && c->members != NULL)
        return 0;
    m = goblin__client_mem(c, size > 0 ? size : sizeof(*m));
    if (m == NULL)
        return GOBLIN_ENOMEM;
    if (c->members != NULL)
        goblin__client_mem_free(c, c->members,
                                c->members_cap * sizeof(*m));
    c->members = m;
    c->members_cap = n > 0 ? n : 1;
    return 0;
}

int goblin__client_strings_room(goblin_client *c, size_t n)
{
    size_t cap = n < 16 ? 16 : n, size = cap * sizeof(struct goblin_slice);
    struct goblin_slice *s;

    if (n <= c->strings_cap && c->strings != NULL)
        return 0;
    s = goblin__client_mem(c, size);
    if (s == NULL)
        return GOBLIN_ENOMEM;
    if (c->strings != NULL)
        goblin__client_mem_free(c, c->strings,
                                c->strings_cap * sizeof(*c->strings));
    c->strings = s;
    c->strings_cap = cap;
    return 0;
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
    c->direct = (struct goblin_resp_value){.type = GOBLIN_RESP_ARRAY,
                                           .n = n};
    c->decoded = true;
    *v = &c->direct;
    return 1;
}
