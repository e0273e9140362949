/* Step launches on this node (docs/steps.md): srun sends the launch with the controller's
 * signed layout; the daemon checks the credential and starts a step daemon
 * (tessera-stepd) that runs the tasks, forwards their I/O and serves PMI; when it ends,
 * the step's end is reported to the controller.
 *
 * Checks on a launch, each refused with its own error and logged:
 *   - the signature, under the controller's key (configured or handed at registration);
 *   - the requester is the step's user (or root);
 *   - not expired, and not issued before this daemon started: a replay across a restart
 *     cannot be told from a fresh launch otherwise;
 *   - not of a job that ended, was terminated or was killed here after the credential was
 *     issued (noded/revoked.h);
 *   - this node is one of the step's;
 *   - the same step has not been launched here before (the replay guard remembers
 *     launches until their credential expires). A step is its first component's own id
 *     and its step id (struct nd_step_id): components count their step ids apart, so the
 *     leader's id and the step id name two steps when `--het-group=0` and `--het-group=1`
 *     both ran here.
 *
 * The step daemon runs in a session of its own, so every task it starts is in its process
 * group: signals to the step go to that group, and whatever is left when the step daemon
 * ends is killed. Its record in the daemon's state folder (noded/spool.h) names it before
 * it gets its launch, so a restarted node daemon kills what its earlier life left, after
 * checking that the process is still the one recorded; the step daemon writes how its
 * tasks ended there.
 */
#include "noded/containment.h"
#include "noded/noded.h"
#include "noded/procinfo.h"
#include "noded/revoked.h"
#include "noded/spool.h"
#include "noded/stepstatus.h"

#include "common/auth/cred.h"
#include "common/conf/conf.h"
#include "common/job/steplayout.h"
#include "common/net/loop.h"
#include "common/rpc/rpc_conf.h"
#include "common/util/errors.h"
#include "common/util/hashmap.h"
#include "common/util/log.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Revocations outlive every credential issued before them, with a margin for the clocks
 * of the controller and this node. */
#define REVOKE_KEEP_MS ((CRED_STEP_LIFETIME + 60) * 1000)

int step_setup(struct noded *nd, char *errbuf, size_t errlen)
{
    if (!(nd->replay = cred_replay_create()) || !(nd->revoked = revoked_create(REVOKE_KEEP_MS)))
        return TS_ENOMEM;
    if (!nd->conf->cred_public_key)
        return TS_OK; /* the controller hands its key at registration */
    return cred_key_load_public(nd->conf->cred_public_key, &nd->cred_key, errbuf, errlen);
}

void step_teardown(struct noded *nd)
{
    cred_key_free(nd->cred_key);
    nd->cred_key = NULL;
    cred_replay_free(nd->replay);
    nd->replay = NULL;
    revoked_free(nd->revoked);
    nd->revoked = NULL;
}

/* The wall clock in milliseconds, as credentials carry their issue time. */
static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* When a credential was issued, to the millisecond (one from a controller that sends
 * seconds only counts as issued at the end of its second). */
static int64_t issued_ms(const Tessera__StepLayout *l)
{
    return l->issued_ms ? l->issued_ms : l->issued * 1000 + 999;
}

uint32_t nd_step_shown_id(const struct nd_step_id *id)
{
    return id->step_job_id ? id->step_job_id : id->job_id;
}

/* The replay guard's key. */
static uint64_t replay_key(const struct nd_step_id *id)
{
    return (uint64_t)id->step_job_id << 32 | id->step_id;
}

static struct nd_step_id layout_step_id(const Tessera__StepLayout *l)
{
    return (struct nd_step_id){.job_id = l->job_id, .step_job_id = steplayout_step_job_id(l),
                               .step_id = l->step_id};
}

void step_revoke(struct noded *nd, uint32_t job_id)
{
    if (revoked_add(nd->revoked, job_id, wall_ms()) != TS_OK)
        log_error("job %u: out of memory; its step credentials could not be revoked", job_id);
}

/* ------------------------------------------------------------------------------------ */
/* checking a launch */

static int node_index(const Tessera__StepLayout *l, const char *name)
{
    for (size_t i = 0; i < l->n_nodes; i++)
        if (!strcmp(l->nodes[i]->name, name))
            return (int)i;
    return -1;
}

static int check_launch(struct noded *nd, const Tessera__StepLaunchRequest *req, uid_t uid,
                        Tessera__StepLayout **out, char *errbuf, size_t errlen)
{
    *out = NULL;
    if (!nd->cred_key) {
        snprintf(errbuf, errlen, "no step credential key yet (not registered)");
        return TS_ECRED_INVALID;
    }
    if (cred_verify(nd->cred_key, req->credential.data, req->credential.len,
                    req->signature.data, req->signature.len) != TS_OK) {
        snprintf(errbuf, errlen, "%s", ts_strerror(TS_ECRED_INVALID));
        return TS_ECRED_INVALID;
    }
    Tessera__StepLayout *l =
        tessera__step_layout__unpack(NULL, req->credential.len, req->credential.data);
    if (!l) {
        snprintf(errbuf, errlen, "%s", ts_strerror(TS_ECRED_INVALID));
        return TS_ECRED_INVALID;
    }
    int err = TS_OK;
    time_t now = time(NULL);
    struct nd_step_id id = layout_step_id(l);
    if (uid != 0 && uid != l->uid) {
        snprintf(errbuf, errlen, "the step belongs to uid %u, the launch came from uid %u",
                 l->uid, (unsigned)uid);
        err = TS_EPERM;
    } else if (l->expires < (int64_t)now) {
        snprintf(errbuf, errlen, "%s", ts_strerror(TS_ECRED_EXPIRED));
        err = TS_ECRED_EXPIRED;
    } else if (l->issued < (int64_t)nd->boot_time) {
        snprintf(errbuf, errlen, "credential issued before this daemon started");
        err = TS_ECRED_REPLAYED;
    } else if (revoked_check(nd->revoked, l->job_id, issued_ms(l)) != TS_OK) {
        snprintf(errbuf, errlen, "%s", ts_strerror(TS_ECRED_REVOKED));
        err = TS_ECRED_REVOKED;
    } else if (node_index(l, nd->name) < 0) {
        snprintf(errbuf, errlen, "the credential is not for node %s", nd->name);
        err = TS_ECRED_INVALID;
    } else if (req->n_components != l->n_components) {
        snprintf(errbuf, errlen, "the launch does not match its credential");
        err = TS_EINVAL;
    } else if (geteuid() != 0 && l->uid != geteuid()) {
        snprintf(errbuf, errlen, "a daemon running as uid %u cannot run tasks of uid %u",
                 (unsigned)geteuid(), l->uid);
        err = TS_EPERM;
    } else if (cred_replay_check(nd->replay, replay_key(&id), l->expires, (int64_t)now) !=
               TS_OK) {
        snprintf(errbuf, errlen, "%s", ts_strerror(TS_ECRED_REPLAYED));
        err = TS_ECRED_REPLAYED;
    }
    if (err)
        tessera__step_layout__free_unpacked(l, NULL);
    else
        *out = l;
    return err;
}

/* ------------------------------------------------------------------------------------ */
/* the step daemon */

/* tessera-stepd next to this program (the build tree and an installation alike). */
static int stepd_path(char *buf, size_t len)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n <= 0)
        return TS_ESYS;
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (!slash)
        return TS_ESYS;
    *slash = '\0';
    if ((size_t)snprintf(buf, len, "%s/tessera-stepd", self) >= len)
        return TS_ETOOBIG;
    return access(buf, X_OK) == 0 ? TS_OK : TS_ENOENT;
}

/* The worst task status and the tasks' usage the step daemon left in its record; else
 * its own status (and no usage). */
static void read_status(struct noded *nd, const struct nd_step *s, int fallback,
                        struct stepstatus *st)
{
    char name[48];
    spool_step_name(&s->id, name, sizeof(name));
    int err = spool_record_status(nd, name, st);
    if (err) {
        if (err != TS_ENOENT)
            log_warn("step %u.%u: unreadable status: %s", nd_step_shown_id(&s->id),
                     s->id.step_id, ts_strerror(err));
        *st = (struct stepstatus){.status = fallback};
    }
}

static void remove_record(struct noded *nd, const struct nd_step_id *id)
{
    char name[48];
    spool_step_name(id, name, sizeof(name));
    spool_record_remove(nd, name);
}

static void unlink_step(struct nd_job *j, struct nd_step *s)
{
    for (struct nd_step **p = &j->steps; *p; p = &(*p)->next) {
        if (*p == s) {
            *p = s->next;
            return;
        }
    }
}

static void stepd_exited(struct loop *loop, pid_t pid, int status, const struct rusage *ru,
                         void *arg)
{
    struct nd_step *s = arg;
    struct noded *nd = s->nd;
    struct nd_job *j = s->job;
    kill(-pid, SIGKILL); /* what the step left in its group ends with it */
    struct stepstatus st;
    read_status(nd, s, status, &st);
    /* and what it left anywhere else, with what its container measured */
    containment_unit_end(nd, j->id, &s->id, &st.usage, &st.has_usage);
    int worst = st.status;
    log_info("step %u.%u: ended (%s %d)", nd_step_shown_id(&s->id), s->id.step_id,
             WIFSIGNALED(worst) ? "signal" : "exit",
             WIFSIGNALED(worst) ? WTERMSIG(worst) : WEXITSTATUS(worst));
    report_step_end(nd, &s->id, worst, st.has_usage ? &st.usage : NULL);
    unlink_step(j, s);
    deadline_cancel(nd->loop, &s->kill_after);
    if (s->ctl_fd >= 0)
        close(s->ctl_fd);
    remove_record(nd, &s->id);
    free(s);
    job_maybe_done(nd, j);
}

/* The launch goes to the step daemon on a pipe: its standard input, a length (4 bytes,
 * big endian) and the packed request. */
static int write_launch(int fd, const Tessera__StepLaunchRequest *req)
{
    size_t len = tessera__step_launch_request__get_packed_size(req);
    uint8_t *buf = malloc(len + 4);
    if (!buf)
        return TS_ENOMEM;
    buf[0] = (uint8_t)(len >> 24);
    buf[1] = (uint8_t)(len >> 16);
    buf[2] = (uint8_t)(len >> 8);
    buf[3] = (uint8_t)len;
    tessera__step_launch_request__pack(req, buf + 4);
    size_t off = 0;
    int err = TS_OK;
    while (off < len + 4) {
        ssize_t n = write(fd, buf + off, len + 4 - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            err = TS_ESYS;
            break;
        }
        off += (size_t)n;
    }
    free(buf);
    return err;
}

/* The step daemon finds its record folder at this descriptor ("-r 3"). */
#define STEPD_RECORD_FD 3

struct stepd_argv {
    char path[PATH_MAX];
    char *argv[8];
};

/* Computed before the fork: after it only async-signal-safe calls (the daemon has
 * threads). */
static int stepd_args(struct noded *nd, struct nd_step *s, struct stepd_argv *a)
{
    int err = stepd_path(a->path, sizeof(a->path));
    if (err)
        return err;
    a->argv[0] = a->path;
    a->argv[1] = (char *)"-f";
    a->argv[2] = nd->conf_path;
    a->argv[3] = (char *)"-N";
    a->argv[4] = nd->name;
    a->argv[5] = (char *)"-r";
    a->argv[6] = (char *)"3"; /* STEPD_RECORD_FD */
    a->argv[7] = NULL;
    return TS_OK;
}

__attribute__((noreturn)) static void stepd_child(const struct stepd_argv *a, int rfd,
                                                  int recfd)
{
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    for (int sig = 1; sig < NSIG; sig++)
        signal(sig, SIG_DFL);
    setsid();
    /* dup2 leaves the copies open across exec; the originals are close-on-exec */
    if (dup2(rfd, 0) < 0 || dup2(recfd, STEPD_RECORD_FD) < 0)
        _exit(127);
    execv(a->path, a->argv);
    _exit(127);
}

static int start_stepd(struct noded *nd, struct nd_step *s, const Tessera__StepLaunchRequest *req,
                       const Tessera__StepLayoutNode *here, int recfd, char *errbuf,
                       size_t errlen)
{
    struct stepd_argv a;
    int err = stepd_args(nd, s, &a);
    if (err) {
        snprintf(errbuf, errlen, "cannot find tessera-stepd: %s", ts_strerror(err));
        return err;
    }
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        snprintf(errbuf, errlen, "pipe: %s", strerror(errno));
        return TS_ESYS;
    }
    if (fds[0] == STEPD_RECORD_FD || recfd == 0) { /* dup2 in the child would mix them */
        close(fds[0]);
        close(fds[1]);
        snprintf(errbuf, errlen, "unexpected descriptors");
        return TS_ESYS;
    }
    pid_t pid = fork();
    if (pid == 0)
        stepd_child(&a, fds[0], recfd); /* never returns */
    int fork_errno = errno;
    close(fds[0]);
    if (pid < 0) {
        close(fds[1]);
        snprintf(errbuf, errlen, "fork: %s", strerror(fork_errno));
        return TS_ESYS;
    }
    s->pid = pid;
    s->start = procinfo_start_time(pid);
    /* in the step's container before it reads its launch: its tasks start inside, under
     * the job's limits (from the signed layout) */
    struct containment_alloc alloc = {.mem_mb = here->job_mem_mb, .cpu_ids = here->job_cpu_ids};
    if ((err = containment_enter(nd, s->job->id, &s->id, pid, &alloc)) != TS_OK) {
        int enter_errno = errno;
        kill(pid, SIGKILL); /* unwatched: reaped as an orphan */
        close(fds[1]);
        snprintf(errbuf, errlen, "cannot place the step in its container: %s",
                 err == TS_ESYS ? strerror(enter_errno) : ts_strerror(err));
        return err;
    }
    /* watched in the same iteration as the fork: its exit cannot be reaped unwatched */
    if (loop_child_watch(nd->loop, pid, stepd_exited, s) != TS_OK) {
        kill(pid, SIGKILL);
        close(fds[1]);
        snprintf(errbuf, errlen, "%s", ts_strerror(TS_ENOMEM));
        return TS_ENOMEM;
    }
    /* recorded before it gets its launch: a step daemon without a launch runs nothing */
    struct spool_proc p = {.pid = pid, .start = s->start, .uid = getuid()};
    if (!s->start || spool_proc_write(recfd, &p) != TS_OK) {
        log_error("step %u.%u: cannot record its step daemon", nd_step_shown_id(&s->id),
                  s->id.step_id);
        close(fds[1]); /* it reads no launch and ends; its end is reported */
        return TS_OK;
    }
    /* a step daemon that dies before reading gets EPIPE here, and its exit is reported */
    if (write_launch(fds[1], req) != TS_OK)
        log_warn("step %u.%u: the launch did not reach the step daemon",
                 nd_step_shown_id(&s->id), s->id.step_id);
    s->ctl_fd = fds[1]; /* kept: the line for "terminate" */
    fcntl(s->ctl_fd, F_SETFL, O_NONBLOCK);
    return TS_OK;
}

static int make_record(struct noded *nd, struct nd_step *s, int *recfd, char *errbuf,
                       size_t errlen)
{
    char name[48];
    spool_step_name(&s->id, name, sizeof(name));
    int err = spool_record_make(nd, name, recfd);
    if (err)
        snprintf(errbuf, errlen, "cannot make the step's record: %s", ts_strerror(err));
    return err;
}

int step_launch(struct noded *nd, const Tessera__StepLaunchRequest *req, uid_t uid,
                char *errbuf, size_t errlen)
{
    Tessera__StepLayout *l = NULL;
    int err = check_launch(nd, req, uid, &l, errbuf, errlen);
    if (err)
        return err;
    struct nd_job *j = job_get_or_add(nd, l->job_id);
    struct nd_step *s = j ? calloc(1, sizeof(*s)) : NULL;
    if (!s) {
        if (j)
            job_maybe_done(nd, j);
        tessera__step_layout__free_unpacked(l, NULL);
        snprintf(errbuf, errlen, "%s", ts_strerror(TS_ENOMEM));
        return TS_ENOMEM;
    }
    s->nd = nd;
    s->job = j;
    s->ctl_fd = -1;
    s->id = layout_step_id(l);
    s->uid = (uid_t)l->uid;
    if (j->terminating) {
        snprintf(errbuf, errlen, "job %u is ending here", j->id);
        err = TS_EALREADY_DONE;
    }
    int recfd = -1;
    if (!err && !(err = make_record(nd, s, &recfd, errbuf, errlen))) {
        err = start_stepd(nd, s, req, l->nodes[node_index(l, nd->name)], recfd, errbuf, errlen);
        close(recfd);
    }
    if (err) {
        if (recfd >= 0)
            remove_record(nd, &s->id);
        free(s);
        job_maybe_done(nd, j);
    } else {
        s->next = j->steps;
        j->steps = s;
        log_info("step %u.%u (job %u): started for uid %u (%zu tasks here)",
                 s->id.step_job_id, l->step_id, l->job_id, l->uid,
                 l->nodes[node_index(l, nd->name)]->n_ranks);
    }
    tessera__step_layout__free_unpacked(l, NULL);
    return err;
}

/* ------------------------------------------------------------------------------------ */
/* signals */

void step_signal_all(struct noded *nd, struct nd_job *j, int signo)
{
    for (struct nd_step *s = j->steps; s; s = s->next)
        kill(-s->pid, signo);
}

static void step_kill_wait_over(struct loop *loop, struct loop_timer *t, void *arg)
{
    struct nd_step *s = arg;
    deadline_fired(&s->kill_after);
    log_warn("step %u.%u: its daemon did not end its tasks; killing the group",
             nd_step_shown_id(&s->id), s->id.step_id);
    kill(-s->pid, SIGKILL);
}

void step_terminate(struct noded *nd, struct nd_step *s, unsigned kill_wait)
{
    if (!s->terminating) {
        kill(-s->pid, SIGCONT); /* a suspended step must be able to act on SIGTERM */
        kill(-s->pid, SIGTERM);
    }
    /* the step daemon's own deadline: it shortens an earlier one, as this one does */
    char msg[32];
    int n = snprintf(msg, sizeof(msg), "T%u\n", kill_wait);
    if (s->ctl_fd < 0 || write(s->ctl_fd, msg, (size_t)n) != n)
        kill(-s->pid, SIGKILL); /* no way to ask: end it now */
    s->terminating = 1;
    uint64_t backstop = (uint64_t)kill_wait * 1000 * 2 + 5000;
    if (deadline_at_most(nd->loop, &s->kill_after, backstop, step_kill_wait_over, s) < 0)
        kill(-s->pid, SIGKILL);
}

/* The request names the step by its pair; one without step_job_id (an older sender) the
 * first step of its job with that step id. */
static int names_step(const Tessera__StepSignalRequest *req, const struct nd_step *s)
{
    return s->id.step_id == req->step_id &&
           (!req->step_job_id || !s->id.step_job_id || s->id.step_job_id == req->step_job_id);
}

int step_signal(struct noded *nd, const Tessera__StepSignalRequest *req, uid_t uid)
{
    struct nd_job *j = hashmap_get_u32(nd->jobs, req->job_id);
    struct nd_step *s = j ? j->steps : NULL;
    while (s && !names_step(req, s))
        s = s->next;
    if (!s)
        return TS_OK; /* it ended here already */
    int privileged = (rpc_conf_roles(nd->conf, uid) & RPC_ROLE_ADMIN) != 0; /* the controller */
    if (!privileged && uid != s->uid)
        return TS_EPERM;
    if (!req->terminate) {
        kill(-s->pid, (int)req->signal);
        return TS_OK;
    }
    /* a user's own wait would let them outlast scancel and their time limit */
    step_terminate(nd, s, privileged ? req->kill_wait : nd->conf->kill_wait);
    return TS_OK;
}

/* ------------------------------------------------------------------------------------ */
/* an earlier life's steps */

void step_recover(struct noded *nd, const struct nd_step_id *id, int recfd)
{
    struct spool_proc p;
    struct stepstatus st = {.status = SIGKILL};
    /* a step daemon is ours (our uid), and killed only while still the process recorded */
    if (spool_proc_read(recfd, &p) == TS_OK && p.uid == getuid() &&
        spool_proc_signal_group(&p, SIGKILL))
        log_info("step %u.%u: killed what an earlier daemon left (step daemon %d)",
                 nd_step_shown_id(id), id->step_id, (int)p.pid);
    else if (stepstatus_read_at(recfd, "status", &st) != TS_OK)
        st = (struct stepstatus){.status = SIGKILL};
    else
        log_info("step %u.%u: ended while the daemon was down", nd_step_shown_id(id),
                 id->step_id);
    report_step_end(nd, id, st.status, st.has_usage ? &st.usage : NULL);
    remove_record(nd, id);
}
