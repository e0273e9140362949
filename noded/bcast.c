/* File broadcast (sbcast; docs/protocol.md "File broadcast", docs/security.md): blocks of
 * a file written on this node as the job's user.
 *
 * The controller's credential decides who may write, and where: checked here as a step
 * launch's is (signature under the controller's key, over the broadcast domain; the
 * requester is the credential's user or root; not expired, not issued before this daemon
 * started, not of a job ended here since; this node named; this cluster's). The daemon
 * then writes nothing itself: a child becomes the user (groups, gid, uid), opens the
 * destination's folder as the user and the file in it without following a link, created
 * exclusively (or truncated with --force) by the first block; later blocks open the
 * existing file, never create one. What the user could not do from a shell, the child
 * cannot do either.
 *
 * Bounds: a block is at most BCAST_BLOCK_MAX bytes, no block reaches past
 * SbcastMaxFileMB (EFBIG, as a full file system would say), at most BCAST_MAX_WRITERS
 * children at once (TS_EBUSY beyond), each killed after BCAST_WRITER_TIMEOUT_MS.
 */
#include "noded/noded.h"
#include "noded/revoked.h"

#include "common/auth/cred.h"
#include "common/conf/conf.h"
#include "common/net/loop.h"
#include "common/rpc/rpc_server.h"
#include "common/util/errors.h"
#include "common/util/log.h"
#include "common/util/namecache.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BCAST_BLOCK_MAX (8u << 20)
#define BCAST_MAX_WRITERS 16
#define BCAST_WRITER_TIMEOUT_MS 60000
#define BCAST_MAX_GROUPS 256

/* A child writing one block, until it ends and its request is answered. */
struct bcast_writer {
    struct bcast_writer *next;
    struct noded *nd;
    struct rpc_request *req;
    pid_t pid;
    struct loop_timer *timer;
    uint32_t job_id, uid;
    uint64_t end;   /* offset + length of the block */
    int last;
    char path[PATH_MAX];
};

/* What the child needs, all computed before the fork (the daemon has threads: after it,
 * only async-signal-safe calls). */
struct write_plan {
    uid_t uid;
    gid_t gid;
    gid_t groups[BCAST_MAX_GROUPS];
    int ngroups;
    char dir[PATH_MAX];
    const char *base;
    int flags;
    mode_t mode;
    const Tessera__FileBcastRequest *msg;
};

/* ------------------------------------------------------------------------------------ */
/* the credential */

static int names_node(const Tessera__BcastCredential *c, const char *name)
{
    for (size_t i = 0; i < c->n_nodes; i++)
        if (c->nodes[i]->name && !strcmp(c->nodes[i]->name, name))
            return 1;
    return 0;
}

/* A job (the leader, or a selected component) ended here after the credential was issued. */
static int revoked_here(const struct noded *nd, const Tessera__BcastCredential *c)
{
    int64_t issued = c->issued_ms ? c->issued_ms : c->issued * 1000 + 999;
    if (revoked_check(nd->revoked, c->job_id, issued) != TS_OK)
        return 1;
    for (size_t i = 0; i < c->n_component_ids; i++)
        if (revoked_check(nd->revoked, c->component_ids[i], issued) != TS_OK)
            return 1;
    return 0;
}

static int refuse(char *errbuf, size_t errlen, int err, const char *why)
{
    snprintf(errbuf, errlen, "%s", why ? why : ts_strerror(err));
    return err;
}

static int check_cred(struct noded *nd, const Tessera__BcastCredential *c, uid_t uid, char *errbuf,
                      size_t errlen)
{
    time_t now = time(NULL);
    if (uid != 0 && uid != c->uid) {
        snprintf(errbuf, errlen, "the credential belongs to uid %u, the request came from uid %u",
                 c->uid, (unsigned)uid);
        return TS_EPERM;
    }
    if (!c->cluster || strcmp(c->cluster, nd->conf->cluster_name) != 0)
        return refuse(errbuf, errlen, TS_ECRED_INVALID, "the credential is for another cluster");
    if (c->expires < (int64_t)now)
        return refuse(errbuf, errlen, TS_ECRED_EXPIRED, NULL);
    if (c->issued < (int64_t)nd->boot_time)
        return refuse(errbuf, errlen, TS_ECRED_REPLAYED,
                      "credential issued before this daemon started");
    if (revoked_here(nd, c))
        return refuse(errbuf, errlen, TS_ECRED_REVOKED, NULL);
    if (!names_node(c, nd->name)) {
        snprintf(errbuf, errlen, "the credential is not for node %s", nd->name);
        return TS_ECRED_INVALID;
    }
    if (geteuid() != 0 && c->uid != geteuid()) {
        snprintf(errbuf, errlen, "a daemon running as uid %u cannot write files of uid %u",
                 (unsigned)geteuid(), c->uid);
        return TS_EPERM;
    }
    return TS_OK;
}

static int verify(struct noded *nd, const Tessera__FileBcastRequest *msg, uid_t uid,
                  Tessera__BcastCredential **out, char *errbuf, size_t errlen)
{
    *out = NULL;
    if (!nd->cred_key)
        return refuse(errbuf, errlen, TS_ECRED_INVALID, "no credential key yet (not registered)");
    if (cred_verify_bcast(nd->cred_key, msg->credential.data, msg->credential.len,
                          msg->signature.data, msg->signature.len) != TS_OK)
        return refuse(errbuf, errlen, TS_ECRED_INVALID, NULL);
    Tessera__BcastCredential *c =
        tessera__bcast_credential__unpack(NULL, msg->credential.len, msg->credential.data);
    if (!c)
        return refuse(errbuf, errlen, TS_ECRED_INVALID, NULL);
    int err = check_cred(nd, c, uid, errbuf, errlen);
    if (err)
        tessera__bcast_credential__free_unpacked(c, NULL);
    else
        *out = c;
    return err;
}

/* ------------------------------------------------------------------------------------ */
/* the request */

/* An absolute path naming a file in a folder: its folder and last name into the plan. */
static int split_path(const char *path, struct write_plan *p)
{
    size_t len = path ? strlen(path) : 0;
    if (len == 0 || path[0] != '/' || len >= sizeof(p->dir))
        return EINVAL;
    const char *slash = strrchr(path, '/');
    const char *base = slash + 1;
    if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
        return EISDIR;
    size_t dlen = slash == path ? 1 : (size_t)(slash - path);
    memcpy(p->dir, path, dlen);
    p->dir[dlen] = '\0';
    p->base = base;
    return 0;
}

/* errno-style: 0, or why the block cannot be written (answered as the block's errnum). */
static int plan_write(struct noded *nd, const Tessera__FileBcastRequest *msg,
                      const Tessera__BcastCredential *c, struct write_plan *p)
{
    uint64_t max = (uint64_t)nd->conf->sbcast_max_file_mb << 20;
    if (msg->data.len > BCAST_BLOCK_MAX || msg->offset > max || msg->data.len > max - msg->offset)
        return EFBIG;
    int err = split_path(msg->path, p);
    if (err)
        return err;
    p->msg = msg;
    p->uid = (uid_t)c->uid;
    p->gid = (gid_t)c->gid;
    p->mode = (mode_t)(msg->mode & 0777);
    p->flags = O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
    if (msg->offset == 0)
        p->flags |= O_CREAT | (msg->force ? O_TRUNC : O_EXCL);
    p->ngroups = -1; /* a daemon that is not root writes as itself (check_cred) */
    if (geteuid() == 0)
        p->ngroups = namecache_user_groups(c->user_name ? c->user_name : "", p->gid,
                                           p->groups, BCAST_MAX_GROUPS);
    return 0;
}

/* ------------------------------------------------------------------------------------ */
/* the child: async-signal-safe calls only; its exit status is the errno of the failure */

static int write_all(int fd, const uint8_t *data, size_t len, uint64_t offset)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = pwrite(fd, data + done, len - done, (off_t)(offset + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? errno : EIO;
        done += (size_t)n;
    }
    return 0;
}

static int finish(int fd, const Tessera__FileBcastRequest *msg)
{
    if (msg->last && msg->preserve) {
        struct timespec times[2] = {{.tv_sec = (time_t)msg->atime}, {.tv_sec = (time_t)msg->mtime}};
        if (futimens(fd, times) != 0)
            return errno;
    }
    return close(fd) == 0 ? 0 : errno;
}

static int child_write(const struct write_plan *p)
{
    const Tessera__FileBcastRequest *msg = p->msg;
    if (p->ngroups >= 0 && (setgroups((size_t)p->ngroups, p->groups) != 0 ||
                            setgid(p->gid) != 0 || setuid(p->uid) != 0))
        return errno ? errno : EPERM;
    umask(0);
    int dfd = open(p->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return errno;
    int fd = openat(dfd, p->base, p->flags, p->mode);
    int err = fd < 0 ? errno : 0;
    close(dfd);
    if (err)
        return err;
    struct stat st;
    if (fstat(fd, &st) != 0)
        return errno;
    if (!S_ISREG(st.st_mode))
        return EINVAL; /* a fifo or a device: never written, never waited on */
    if (msg->offset == 0 && msg->force && fchmod(fd, p->mode) != 0)
        return errno; /* a replaced file takes the source's mode too */
    err = write_all(fd, msg->data.data, msg->data.len, msg->offset);
    if (err)
        return err;
    return finish(fd, msg);
}

__attribute__((noreturn)) static void writer_main(const struct write_plan *p)
{
    close_range(3, ~0u, 0); /* the daemon's sockets and records are not the user's */
    sigset_t none;
    sigemptyset(&none);
    for (int sig = 1; sig < NSIG; sig++)
        signal(sig, SIG_DFL);
    sigprocmask(SIG_SETMASK, &none, NULL);
    int err = child_write(p);
    _exit(err > 0 && err < 256 ? err : (err ? EIO : 0));
}

/* ------------------------------------------------------------------------------------ */
/* the daemon's side */

static void respond_errnum(struct rpc_request *req, int errnum)
{
    Tessera__FileBcastResponse fb = TESSERA__FILE_BCAST_RESPONSE__INIT;
    fb.errnum = errnum;
    Tessera__Response resp = TESSERA__RESPONSE__INIT;
    resp.msg_case = TESSERA__RESPONSE__MSG_FILE_BCAST;
    resp.file_bcast = &fb;
    rpc_respond(req, &resp);
}

static void unlink_writer(struct noded *nd, struct bcast_writer *w)
{
    for (struct bcast_writer **p = &nd->bcast_writers; *p; p = &(*p)->next) {
        if (*p == w) {
            *p = w->next;
            nd->bcast_nwriters--;
            return;
        }
    }
}

static void writer_free(struct noded *nd, struct bcast_writer *w)
{
    unlink_writer(nd, w);
    loop_timer_cancel(nd->loop, w->timer);
    free(w);
}

static void writer_timed_out(struct loop *loop, struct loop_timer *timer, void *arg)
{
    struct bcast_writer *w = arg;
    w->timer = NULL;
    log_warn("sbcast: job %u: writing %s as uid %u takes too long: killed", w->job_id, w->path,
             w->uid);
    kill(w->pid, SIGKILL);
}

static void writer_exited(struct loop *loop, pid_t pid, int status, const struct rusage *ru,
                          void *arg)
{
    struct bcast_writer *w = arg;
    int errnum = WIFEXITED(status) ? WEXITSTATUS(status) : ETIMEDOUT;
    if (errnum)
        log_info("sbcast: job %u: %s as uid %u: %s", w->job_id, w->path, w->uid, strerror(errnum));
    else if (w->last)
        log_info("sbcast: job %u: wrote %s as uid %u (%llu bytes)", w->job_id, w->path, w->uid,
                 (unsigned long long)w->end);
    respond_errnum(w->req, errnum);
    writer_free(w->nd, w);
}

static int start_writer(struct noded *nd, struct rpc_request *req, const struct write_plan *p,
                        const Tessera__BcastCredential *c)
{
    struct bcast_writer *w = calloc(1, sizeof(*w));
    if (!w)
        return TS_ENOMEM;
    w->nd = nd;
    w->req = req;
    w->job_id = c->job_id;
    w->uid = c->uid;
    w->end = p->msg->offset + p->msg->data.len;
    w->last = p->msg->last;
    snprintf(w->path, sizeof(w->path), "%s", p->msg->path);
    w->pid = fork();
    if (w->pid == 0)
        writer_main(p); /* never returns */
    if (w->pid < 0 || loop_child_watch(nd->loop, w->pid, writer_exited, w) != TS_OK) {
        if (w->pid > 0) {
            kill(w->pid, SIGKILL);
            waitpid(w->pid, NULL, 0);
        }
        free(w);
        return TS_ESYS;
    }
    w->timer = loop_timer_add(nd->loop, BCAST_WRITER_TIMEOUT_MS, 0, writer_timed_out, w);
    w->next = nd->bcast_writers;
    nd->bcast_writers = w;
    nd->bcast_nwriters++;
    return TS_OK;
}

void bcast_write(struct noded *nd, struct rpc_request *req, const Tessera__FileBcastRequest *msg)
{
    uid_t uid = rpc_request_uid(req);
    char why[512] = "";
    Tessera__BcastCredential *c = NULL;
    int err = verify(nd, msg, uid, &c, why, sizeof(why));
    if (err) {
        log_warn("sbcast from uid %u at %s refused: %s", (unsigned)uid, rpc_request_peer(req), why);
        rpc_respond_error(req, err, why);
        return;
    }
    struct write_plan *plan = malloc(sizeof(*plan));
    int errnum = plan ? plan_write(nd, msg, c, plan) : ENOMEM;
    if (errnum) {
        respond_errnum(req, errnum);
    } else if (nd->bcast_nwriters >= BCAST_MAX_WRITERS) {
        rpc_respond_error(req, TS_EBUSY, NULL);
    } else if ((err = start_writer(nd, req, plan, c)) != TS_OK) {
        log_error("sbcast: job %u: cannot start a writer: %s", c->job_id, ts_strerror(err));
        rpc_respond_error(req, err, NULL);
    }
    free(plan);
    tessera__bcast_credential__free_unpacked(c, NULL);
}

void bcast_teardown(struct noded *nd)
{
    while (nd->bcast_writers) {
        struct bcast_writer *w = nd->bcast_writers;
        kill(w->pid, SIGKILL);
        waitpid(w->pid, NULL, 0); /* reaped here: the loop never calls back for it */
        rpc_respond_error(w->req, TS_ECLOSED, NULL);
        writer_free(nd, w);
    }
}
