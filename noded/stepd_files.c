/* The tasks' files (srun -o/-e/-i naming files on the node): opened by a child that has
 * become the step's user, never by root through a path the user chose; the descriptors
 * come back over a socketpair. Each distinct name is opened once, so tasks that share a
 * file (%N, %n, a name without escapes) share one descriptor, as Slurm's do: a later
 * task's open can never truncate what an earlier one wrote. A sequenced-packet pair: one
 * message per file, and the end of the child (one that could not become the user) reads
 * as the end, never as a wait.
 */
#include "noded/stepd.h"

#include "common/util/errors.h"
#include "common/util/log.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* One open in the child: errno (0: the descriptor follows in the same message). */
static void child_send(int sock, const char *path, int flags)
{
    int fd = open(path, flags | O_CLOEXEC | O_NOCTTY, 0644);
    int err = fd < 0 ? errno : 0;
    char cbuf[CMSG_SPACE(sizeof(int))];
    memset(cbuf, 0, sizeof(cbuf));
    struct iovec iov = {.iov_base = &err, .iov_len = sizeof(err)};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
    if (fd >= 0) {
        mh.msg_control = cbuf;
        mh.msg_controllen = sizeof(cbuf);
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof(int));
    }
    if (sendmsg(sock, &mh, MSG_NOSIGNAL) < 0)
        _exit(1);
    if (fd >= 0)
        close(fd);
}

__attribute__((noreturn)) static void child_main(int sock, const struct sd_identity *id,
                                                 const struct sd_file *files, size_t n)
{
    if (id->ngroups >= 0 && (setgroups((size_t)id->ngroups, id->groups) != 0 ||
                             setgid(id->gid) != 0 || setuid(id->uid) != 0))
        _exit(1);
    for (size_t i = 0; i < n; i++)
        child_send(sock, files[i].path, files[i].flags);
    _exit(0);
}

/* The child's answer for one file: TS_OK with the descriptor or the errno, TS_ESYS when
 * the child said nothing (it could not become the user, or died). */
static int receive_one(int sock, struct sd_file *f)
{
    int err = 0;
    char cbuf[CMSG_SPACE(sizeof(int))];
    struct iovec iov = {.iov_base = &err, .iov_len = sizeof(err)};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
                        .msg_controllen = sizeof(cbuf)};
    ssize_t got;
    do
        got = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
    while (got < 0 && errno == EINTR);
    if (got != (ssize_t)sizeof(err))
        return TS_ESYS;
    struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
    if (err == 0 && c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
        memcpy(&f->fd, CMSG_DATA(c), sizeof(int));
    f->err = err ? err : (f->fd < 0 ? EIO : 0);
    return TS_OK;
}

int stepd_files_open(const struct sd_identity *id, struct sd_file *files, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        files[i].fd = -1;
        files[i].err = 0;
    }
    if (n == 0)
        return TS_OK;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
        return TS_ESYS;
    pid_t pid = fork();
    if (pid == 0) {
        close(sv[0]);
        child_main(sv[1], id, files, n);
    }
    close(sv[1]);
    int err = pid < 0 ? TS_ESYS : TS_OK;
    for (size_t i = 0; !err && i < n; i++)
        err = receive_one(sv[0], &files[i]);
    close(sv[0]);
    if (pid > 0)
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
    if (err) {
        log_error("the step's files could not be opened as uid %u", (unsigned)id->uid);
        stepd_files_close(files, n);
    }
    return err;
}

void stepd_files_close(struct sd_file *files, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (files[i].fd >= 0)
            close(files[i].fd);
        files[i].fd = -1;
    }
}
