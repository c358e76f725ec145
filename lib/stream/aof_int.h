/* aof_int.h - what the append-only file's parts share (goblin/aof.h):
 * the manifest, the loader and the writer. */
#ifndef GOBLIN_AOF_INT_H
#define GOBLIN_AOF_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "goblin/aof.h"

#define GOBLIN__AOF_NAME 256
#define GOBLIN__AOF_MAX_INCR 64

/* The parts a manifest lists: the base (base[0] == '\0': none) and the
 * incremental parts, in order. */
struct goblin__aof_manifest {
    char base[GOBLIN__AOF_NAME];
    int base_seq;
    char incr[GOBLIN__AOF_MAX_INCR][GOBLIN__AOF_NAME];
    int incr_seq[GOBLIN__AOF_MAX_INCR];
    int nincr;
};

/* Parses a manifest's text: 0, or GOBLIN_EPROTO with the reason in err. */
int goblin__aof_manifest_parse(struct goblin__aof_manifest *m,
                               const char *text, size_t len, char *err,
                               size_t cap);
/* The text of m into out: its length or GOBLIN_ERANGE. */
int goblin__aof_manifest_text(const struct goblin__aof_manifest *m,
                              char *out, size_t cap);
/* Writes DIR/NAME.manifest atomically. 0 or -errno. */
int goblin__aof_manifest_write(const struct goblin__aof_manifest *m,
                               const char *dir, const char *name);
/* Reads DIR/NAME.manifest: 1 and *m, 0 when there is none, or a negative
 * code with the reason in err. */
int goblin__aof_manifest_read(struct goblin__aof_manifest *m,
                              const char *dir, const char *name, char *err,
                              size_t cap);
int goblin__aof_sync_dir(const char *dir);

/* The AOF directory of eng's settings under cfg->dir into out, and the
 * file name prefix (appendfilename) into name. */
void goblin__aof_paths(goblin_engine *eng, const struct goblin_aof_config *cfg,
                       char *out, size_t cap, char *name, size_t ncap);

/* The engine's cron: writes, and starts a due rewrite (pending after a
 * busy server hook). */
void goblin__aof_cron(goblin_engine *eng);
/* BGREWRITEAOF: 0 started, 1 scheduled (a child runs), GOBLIN_EBUSY (one
 * runs already), or a negative code. */
int goblin__aof_bgrewrite(goblin_engine *eng);

struct goblin__exec;
struct goblin__text;
/* INFO persistence's aof_* lines (cmd_aof.c). */
void goblin__aof_info_text(struct goblin__exec *x, struct goblin__text *t);

/* appendfsync always at the end of an input batch: writes and fsyncs
 * what the batch appended. */
void goblin__aof_sync(goblin_engine *eng);

/* Group commit over a socket loop's pass (lib/serve/net.c): input run
 * between hold and unhold (under the engine lock) leaves its fsync to the
 * loop, which calls goblin__aof_sync once at the end of the pass when
 * sync_pending says one is due, before the replies it held leave. */
void goblin__aof_hold(goblin_engine *eng);
void goblin__aof_unhold(goblin_engine *eng);
bool goblin__aof_sync_pending(const goblin_engine *eng);

/* Whether database i is open (never opens one), its store in *st. */
bool goblin__aof_db_open(goblin_engine *eng, int i, goblin_store **st);

#endif
