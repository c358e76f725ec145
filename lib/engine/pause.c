/* pause.c - CLIENT PAUSE and CLIENT UNPAUSE (pause.h). */
#include <string.h>

#include "block.h"
#include "commands/handlers.h"
#include "pause.h"
#include "repl/replica.h"

/* A replica's reads see expired keys as gone without deleting them too
 * (its master's DEL does). */
static void set_expire_paused(goblin_engine *eng, bool on)
{
    on = on || goblin__repl_following(eng);
    for (int i = 0; i < eng->ndbs; i++)
        if (eng->dbs[i].st != NULL)
            eng->dbs[i].st->expire_paused = on;
}

void goblin__pause(goblin_engine *eng, int type, int64_t end_ms)
{
    if (type > eng->pause_type)
        eng->pause_type = (uint8_t)type;
    if (end_ms > eng->pause_end_ms)
        eng->pause_end_ms = end_ms;
    set_expire_paused(eng, true);
    goblin__engine_direct_update(eng);
}

void goblin__unpause(goblin_engine *eng)
{
    eng->pause_type = GOBLIN__PAUSE_NONE;
    eng->pause_end_ms = 0;
    set_expire_paused(eng, false);
    goblin__engine_direct_update(eng);
    for (goblin_session *s = eng->first; s != NULL; s = s->next) {
        if (!(s->flags & SESS_PAUSED))
            continue;
        s->flags &= ~(uint32_t)SESS_PAUSED;
        goblin__session_wake(s);
    }
}

bool goblin__pause_active(goblin_engine *eng)
{
    if (eng->pause_type == GOBLIN__PAUSE_NONE)
        return false;
    if (goblin__now_ms(eng->st) >= eng->pause_end_ms) {
        goblin__unpause(eng);
        return false;
    }
    return true;
}

/* "#!lua flags=...,no-writes,...": EVAL's script declares it writes
 * nothing (Redis then drops the command's may-replicate flag). */
static bool no_writes_shebang(struct goblin_slice script)
{
    const char *p = script.ptr, *end, *f;

    if (script.len < 2 || p[0] != '#' || p[1] != '!')
        return false;
    end = memchr(p, '\n', script.len);
    if (end == NULL)
        end = p + script.len;
    for (f = p; f + 9 <= end; f++)
        if (memcmp(f, "no-writes", 9) == 0 &&
            (f + 9 == end || f[9] == ',' || f[9] == ' ' || f[9] == '\r') &&
            (f[-1] == ',' || f[-1] == '='))
            return true;
    return false;
}

/* Redis 7.0's MAY_REPLICATE commands, a flag its COMMAND INFO hides (so
 * the table, made from that output, lacks it); found with redis-server
 * 7.0.15 under CLIENT PAUSE WRITE. */
static bool writes_or_may_replicate(const struct goblin__command *cmd)
{
    static const char *const names[] = {"publish", "spublish", "eval",
                                        "evalsha", "fcall",   "pfcount"};

    if (cmd->flags & (CMD_WRITE | CMD_MAY_REPLICATE))
        return true;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strcmp(cmd->fullname, names[i]) == 0)
            return true;
    return false;
}

/* Redis's is_may_replicate_command: a write or may-replicate command, or
 * EXEC of a queue that holds one. EVAL with a no-writes shebang is not;
 * EVALSHA and FCALL count by the table (their scripts' own flags are not
 * looked at). */
static bool may_replicate(const goblin_session *s,
                          const struct goblin__command *cmd, int argc,
                          const struct goblin_slice *argv)
{
    if (cmd == NULL)
        return false;
    if (cmd->fn == goblin__cmd_exec && (s->flags & SESS_MULTI)) {
        for (size_t i = 0; i < s->nqueue; i++)
            if (writes_or_may_replicate(s->queue[i].cmd))
                return true;
        return false;
    }
    if (strcmp(cmd->fullname, "eval") == 0 && argc > 1 &&
        no_writes_shebang(argv[1]))
        return false;
    return writes_or_may_replicate(cmd);
}

bool goblin__pause_holds(goblin_session *s, const struct goblin__command *cmd,
                         int argc, const struct goblin_slice *argv)
{
    if (!goblin__pause_active(s->eng) || (s->flags & SESS_NO_PAUSE))
        return false;
    if (s->eng->pause_type != GOBLIN__PAUSE_ALL &&
        !may_replicate(s, cmd, argc, argv))
        return false;
    s->flags |= SESS_PAUSED;
    if (cmd != NULL)
        s->lastcmd = cmd; /* CLIENT LIST's cmd: the held command */
    return true;
}

size_t goblin__pause_count(const goblin_engine *eng)
{
    size_t n = 0;

    for (const goblin_session *s = eng->first; s != NULL; s = s->next)
        n += (s->flags & SESS_PAUSED) != 0;
    return n;
}
