/* cmd_repl.c - the replication commands of a master: REPLCONF, PSYNC,
 * SYNC and ROLE (Redis's replconfCommand, syncCommand, roleCommand);
 * the work is lib/repl. */
#include <stdio.h>
#include <string.h>

#include "goblin/numtext.h"
#include "handlers.h"
#include "repl/repl.h"
#include "respond.h"

void goblin__cmd_replconf(goblin__exec *x, int argc,
                          const struct goblin_slice *argv)
{
    struct goblin__replica *rp;
    int64_t v;

    if (argc % 2 == 0) {
        goblin__reply_error(x, GOBLIN__ERR_SYNTAX);
        return;
    }
    if ((rp = goblin__replica_of(x->sess, true)) == NULL) {
        goblin__reply_code(x, GOBLIN_ENOMEM);
        return;
    }
    for (int j = 1; j < argc; j += 2) {
        const struct goblin_slice *opt = &argv[j], *val = &argv[j + 1];

        if (goblin__arg_is(*opt, "listening-port")) {
            if (!goblin__arg_int64(x, *val, &v, NULL))
                return;
            rp->port = (long)v;
        } else if (goblin__arg_is(*opt, "ip-address")) {
            if (val->len >= sizeof(rp->ip)) {
                goblin__reply_errorf(x, "ERR REPLCONF ip-address provided "
                                        "by replica instance is too long: "
                                        "%zd bytes", (ssize_t)val->len);
                return;
            }
            memcpy(rp->ip, val->ptr, val->len);
            rp->ip[val->len] = '\0';
        } else if (goblin__arg_is(*opt, "capa")) {
            if (goblin__arg_is(*val, "eof"))
                rp->capa_eof = true;
            else if (goblin__arg_is(*val, "psync2"))
                rp->capa_psync2 = true;
        } else if (goblin__arg_is(*opt, "ack") ||
                   goblin__arg_is(*opt, "fack")) {
            /* From a replica: no reply, as Redis. */
            if (rp->state == GOBLIN__REPLICA_NONE)
                return;
            if (goblin_int64_parse(val->ptr, val->len, &v) != 0)
                return;
            if (goblin__arg_is(*opt, "ack")) {
                if ((uint64_t)v > rp->ack_off)
                    rp->ack_off = (uint64_t)v;
                rp->ack_ms = goblin__now_ms(x->eng->st);
            }
            if (j + 2 < argc)
                continue;
            return;
        } else if (goblin__arg_is(*opt, "getack")) {
            /* Only a replica answers it (to its master). */
            return;
        } else if (goblin__arg_is(*opt, "rdb-only")) {
            if (!goblin__arg_int64(x, *val, &v, NULL))
                return;
        } else {
            goblin__reply_errorf(x, "ERR Unrecognized REPLCONF option: %.*s",
                                 goblin__cstr_len(*opt),
                                 (const char *)opt->ptr);
            return;
        }
    }
    goblin__reply_ok(x);
}

void goblin__cmd_psync(goblin__exec *x, int argc,
                       const struct goblin_slice *argv)
{
    int64_t off;

    (void)argc;
    if (goblin_int64_parse(argv[2].ptr, argv[2].len, &off) != 0)
        off = -1;
    goblin__repl_psync(x, argv[1], off, false);
}

void goblin__cmd_sync(goblin__exec *x, int argc,
                      const struct goblin_slice *argv)
{
    (void)argc;
    (void)argv;
    goblin__repl_psync(x, (struct goblin_slice){"?", 1}, -1, true);
}

void goblin__cmd_role(goblin__exec *x, int argc,
                      const struct goblin_slice *argv)
{
    (void)argc;
    (void)argv;
    goblin__repl_role(x);
}
