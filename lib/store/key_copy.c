/* key_copy.c - copying a key, with its value, encoding and deadline, to
 * another key of the same store or to another store: COPY, and MOVE
 * between numbered databases (which then deletes the source).
 *
 * Order matters within one store: the destination is looked up (and a
 * lapsed one expired) before the source, so no later deletion can move
 * the source's id while its record is being read. The source's record
 * stays readable through the put (a replaced record is kept until the
 * next write begins, keyspace.h).
 */
#include "keyspace.h"
#include "store.h"

static int copy_str(goblin_store *dst, struct goblin_slice new_key,
                    int found, uint32_t did, const uint8_t *rec,
                    int64_t deadline)
{
    struct goblin_slice v = goblin__rec_str(rec);
    int enc = goblin__rec_str_enc(rec);
    struct goblin__str_put p = {new_key, found, did, v.len, enc, v.len,
                                deadline >= 0 ? GOBLIN__TTL_SET
                                              : GOBLIN__TTL_CLEAR,
                                deadline};
    uint8_t *to = goblin__key_put_str(dst, &p);

    if (to == NULL)
        return GOBLIN_ENOMEM;
    if (v.len != 0)
        memcpy(to, v.ptr, v.len);
    return 0;
}

static int copy_obj(goblin_store *dst, struct goblin_slice new_key,
                    enum goblin_type type, const uint8_t *rec,
                    int64_t deadline)
{
    void *obj;
    uint32_t id;
    int rc = goblin__obj_copy(dst, type, goblin__rec_obj(rec), &obj);

    if (rc != 0)
        return rc;
    if ((rc = goblin__key_replace(dst, new_key, type, obj)) != 0) {
        goblin__obj_free(dst, type, obj);
        return rc;
    }
    if (deadline >= 0 && goblin__key_find(dst, new_key, &id) == 1 &&
        goblin__key_set_deadline(dst, id, deadline) != 0) {
        /* The copy without its deadline would outlive the source. */
        goblin__key_remove(dst, new_key);
        return GOBLIN_ENOMEM;
    }
    return 0;
}

int goblin__key_copy(goblin_store *src, struct goblin_slice key,
                     goblin_store *dst, struct goblin_slice new_key,
                     bool replace)
{
    uint32_t id, did;
    int found, rc;
    const uint8_t *rec;
    int64_t deadline;
    enum goblin_type type;

    goblin__write_begin(dst);
    if (src != dst)
        goblin__write_begin(src);
    found = goblin__key_find(dst, new_key, &did);
    if (found && !replace)
        return 0;
    if (goblin__key_find(src, key, &id) != 1)
        return 0;
    rec = goblin__key_rec(src, id);
    type = goblin__rec_type(rec);
    deadline = goblin__key_deadline(src, id);
    if (type == GOBLIN_TYPE_STRING)
        rc = copy_str(dst, new_key, found, did, rec, deadline);
    else
        rc = copy_obj(dst, new_key, type, rec, deadline);
    if (rc != 0)
        return rc;
    /* A replaced destination is a new key too, as Redis deletes it before
     * adding the copy. */
    if (found)
        goblin__key_created(dst, new_key);
    goblin__key_changed(dst, new_key);
    return 1;
}
