/* acl_file.c - the ACL file: one "user NAME rule rule..." per line, as
 * Redis writes it (ACL SAVE) and reads it (ACL LOAD, the aclfile option).
 * Blank lines and lines starting with '#' are skipped; rules are split at
 * spaces and tabs, without quoting.
 *
 * Loading is all or nothing, as in Redis: the lines build a new user list
 * while the old one is set aside; any bad line restores the old list. On
 * success the default user's struct is kept (its content replaced), and
 * sessions authenticated as any other user are closed, since their user
 * object is gone. A file without a default user gets the initial one.
 * Saving writes NAME.tmp (mode 0600: it holds password hashes) and
 * renames it over the file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "acl.h"
#include "session.h"
#include "text.h"

#define MAX_RULES 1024

static const char *const NO_CHANGE = " WARNING: ACL errors detected, no "
    "change to the previously active ACL rules was performed";

/* Applies one line; 0, or GOBLIN_EINVAL with err set. */
static int load_line(goblin_engine *eng, char *line, const char *path,
                     int lineno, char *err, size_t errcap)
{
    struct goblin_slice words[MAX_RULES + 2];
    char why[512];
    int n = 0, bad, rc;
    char *p = line;

    while (*p != '\0' && n < MAX_RULES + 2) {
        size_t len;

        p += strspn(p, " \t");
        if (*p == '\0')
            break;
        len = strcspn(p, " \t");
        words[n++] = (struct goblin_slice){p, len};
        p += len;
    }
    if (n == 0 || ((const char *)words[0].ptr)[0] == '#')
        return 0;
    if (n < 2 || words[0].len != 4 || memcmp(words[0].ptr, "user", 4) != 0 ||
        *p != '\0') {
        snprintf(err, errcap, "ERR %s:%d should start with user keyword "
                 "followed by the username.%s", path, lineno, NO_CHANGE);
        return GOBLIN_EINVAL;
    }
    rc = goblin__acl_setuser(eng, words[1], n - 2, words + 2, why,
                             sizeof(why), &bad);
    if (rc == GOBLIN_EINVAL) {
        /* why is "ERR Error in ACL SETUSER modifier 'r': text". */
        const char *text = strstr(why, "': ");
        snprintf(err, errcap, "ERR %s:%d: %s.%s", path, lineno,
                 text != NULL ? text + 3 : why + 4, NO_CHANGE);
    } else if (rc < 0) {
        snprintf(err, errcap, "ERR out of memory loading ACLs");
    }
    return rc;
}

static int load_lines(goblin_engine *eng, FILE *f, const char *path,
                      char *err, size_t errcap)
{
    char line[65536];
    int lineno = 0, rc = 0;

    while (rc == 0 && fgets(line, sizeof(line), f) != NULL) {
        lineno++;
        line[strcspn(line, "\r\n")] = '\0';
        rc = load_line(eng, line, path, lineno, err, errcap);
    }
    return rc;
}

/* Finds the link that points at u in the list starting at *head. */
static struct goblin__acl_user **link_of(struct goblin__acl_user **head,
                                         const struct goblin__acl_user *u)
{
    while (*head != u)
        head = &(*head)->next;
    return head;
}

/* Exchanges the contents of the new default user nd (in eng->users) and
 * the kept struct old_def (in *old), each staying in the other's list. */
static void keep_default(goblin_engine *eng, struct goblin__acl_user **old,
                         struct goblin__acl_user *old_def)
{
    struct goblin__acl_user *nd = eng->default_user, tmp;
    struct goblin__acl_user **in_new = link_of(&eng->users, nd);
    struct goblin__acl_user **in_old = link_of(old, old_def);

    tmp = *old_def;
    *old_def = *nd;
    *nd = tmp;
    *in_new = old_def;
    *in_old = nd;
    eng->default_user = old_def;
}

int goblin__acl_load_file(goblin_engine *eng, const char *path, char *err,
                          size_t errcap)
{
    struct goblin__acl_user *old = eng->users, *old_def = eng->default_user;
    FILE *f = fopen(path, "re");
    goblin_session *s;
    int rc;

    if (f == NULL) {
        snprintf(err, errcap, "ERR Error loading ACLs, opening file '%s': "
                 "%s", path, strerror(errno));
        return GOBLIN_EINVAL;
    }
    eng->users = NULL;
    rc = goblin__acl_init(eng);
    if (rc == 0)
        rc = load_lines(eng, f, path, err, errcap);
    fclose(f);
    if (rc != 0) {
        if (rc == GOBLIN_ENOMEM)
            snprintf(err, errcap, "ERR out of memory loading ACLs");
        goblin__acl_free(eng);
        eng->users = old;
        eng->default_user = old_def;
        return rc;
    }
    keep_default(eng, &old, old_def);
    for (s = eng->first; s != NULL; s = s->next)
        if (s->acl != NULL && s->acl != old_def) {
            s->acl = NULL;
            s->flags &= ~(uint32_t)SESS_AUTHED;
            goblin__session_kill(s, eng->running);
        }
    {
        struct goblin__acl_user *fresh = eng->users;

        eng->users = old;
        goblin__acl_free(eng);
        eng->users = fresh;
    }
    return 0;
}

int goblin__acl_save_file(goblin_engine *eng, const char *path, char *err,
                          size_t errcap)
{
    struct goblin__text t, tmp;
    const struct goblin__acl_user *u;
    int fd = -1, rc = GOBLIN_EINVAL;

    goblin__text_init(&t, eng->st);
    goblin__text_init(&tmp, eng->st);
    for (u = eng->users; u != NULL; u = u->next) {
        goblin__acl_describe(&t, u);
        goblin__text_add(&t, "\n", 1);
    }
    goblin__text_addf(&tmp, "%s.tmp", path);
    if (t.oom || tmp.oom) {
        snprintf(err, errcap, "ERR out of memory saving ACLs");
        rc = GOBLIN_ENOMEM;
        goto done;
    }
    fd = open(tmp.p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || write(fd, t.p, t.len) != (ssize_t)t.len || fsync(fd) != 0 ||
        close(fd) != 0 || (fd = -1, rename(tmp.p, path) != 0)) {
        snprintf(err, errcap, "ERR There was an error trying to save the "
                 "ACLs. Please check the server logs for more information");
        if (fd >= 0)
            close(fd);
        unlink(tmp.p);
        goto done;
    }
    rc = 0;
done:
    goblin__text_free(&t);
    goblin__text_free(&tmp);
    return rc;
}

int goblin_engine_acl_file(goblin_engine *eng, const char *path, char *err,
                           size_t errcap)
{
    size_t n = path != NULL ? strlen(path) : 0;
    char *copy;
    int rc;

    if (eng == NULL || n == 0) {
        snprintf(err, errcap, "ERR no ACL file given");
        return GOBLIN_EINVAL;
    }
    if ((copy = goblin__alloc(eng->st, n + 1)) == NULL)
        return GOBLIN_ENOMEM;
    memcpy(copy, path, n + 1);
    rc = goblin__acl_load_file(eng, copy, err, errcap);
    if (rc != 0) {
        goblin__free(eng->st, copy, n + 1);
        return rc;
    }
    if (eng->aclfile != NULL)
        goblin__free(eng->st, eng->aclfile, strlen(eng->aclfile) + 1);
    eng->aclfile = copy;
    return 0;
}

bool goblin_engine_default_user_nopass(const goblin_engine *eng)
{
    return (eng->default_user->flags & ACL_USER_NOPASS) != 0;
}
