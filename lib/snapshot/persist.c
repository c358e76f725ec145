/* persist.c - the save bookkeeping a server keeps for SAVE, BGSAVE,
 * LASTSAVE and INFO persistence (struct goblin_persist_info).
 *
 * The one thing here that needs the store's inside is how a successful
 * save settles the dirty counter: as in Redis, it drops by the changes
 * counted when the save began, so writes made while a forked child was
 * saving still count as unsaved.
 */
#include "goblin/snapshot.h"
#include "store/store.h"

void goblin_persist_init(struct goblin_persist_info *pi,
                         const goblin_store *st)
{
    memset(pi, 0, sizeof(*pi));
    pi->last_save_ms = goblin__now_ms(st);
}

void goblin_persist_begin(struct goblin_persist_info *pi,
                          const goblin_store *st)
{
    pi->in_progress = 1;
    pi->started_ms = goblin__now_ms(st);
    pi->dirty_at_start = st->dirty;
}

void goblin_persist_end(struct goblin_persist_info *pi, goblin_store *st,
                        int status, uint64_t bytes)
{
    int64_t now = goblin__now_ms(st);

    pi->in_progress = 0;
    pi->last_duration_ms = now - pi->started_ms;
    pi->last_status = status;
    if (status != 0)
        return;
    st->dirty = st->dirty > pi->dirty_at_start
                    ? st->dirty - pi->dirty_at_start : 0;
    pi->last_save_ms = now;
    pi->last_bytes = bytes;
    pi->saves++;
}
