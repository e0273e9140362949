#include "noded/userfile.h"

#include "common/net/loop.h"
#include "common/util/errors.h"
#include "common/util/log.h"
#include "common/util/namecache.h"
#include "common/util/safefs.h"
#include "noded/noded.h"

#include <fcntl.h>
#include <grp.h>
#include <string.h>
#include <unistd.h>

#define GROUPS_MAX 256

static void appended(struct loop *loop, pid_t pid, int status, const struct rusage *ru,
                     void *arg)
{
    (void)loop;
    (void)ru;
    (void)arg;
    if (status != 0)
        log_warn("child %d could not add a line to a job's file", (int)pid);
}

/* After the fork: system calls only (the daemon has threads). */
__attribute__((noreturn)) static void append_as_user(const struct userfile_owner *owner,
                                                     const gid_t *groups, int ngroups,
                                                     const char *path, const char *text)
{
    if (ngroups >= 0 && (setgroups((size_t)ngroups, groups) != 0 ||
                         setgid(owner->gid) != 0 || setuid(owner->uid) != 0))
        _exit(1);
    if (path[0] != '/' && (!owner->work_dir || chdir(owner->work_dir) != 0))
        _exit(1);
    int fd = open(path, O_WRONLY | O_APPEND | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        _exit(1);
    _exit(safefs_write_all(fd, text, strlen(text)) == TS_OK ? 0 : 1);
}

int userfile_append(struct noded *nd, const struct userfile_owner *owner, const char *path,
                    const char *text)
{
    gid_t groups[GROUPS_MAX];
    /* a root job's child stays root, as the job itself was; a daemon not running as
     * root runs only its own user's jobs and stays who it is */
    int ngroups = -1;
    if (geteuid() == 0 && owner->uid != 0) {
        if (!owner->user_name)
            return TS_ENOENT;
        ngroups = namecache_user_groups(owner->user_name, owner->gid, groups, GROUPS_MAX);
    }
    pid_t pid = fork();
    if (pid == 0)
        append_as_user(owner, groups, ngroups, path, text); /* never returns */
    if (pid < 0)
        return TS_ESYS;
    return loop_child_watch(nd->loop, pid, appended, NULL);
}
