/* The node daemon's spool (noded/spool.h). */
#include "noded/spool.h"

#include "noded/noded.h"
#include "noded/procinfo.h"
#include "noded/stepstatus.h"

#include "common/conf/conf.h"
#include "common/util/errors.h"
#include "common/util/hashmap.h"
#include "common/util/log.h"
#include "common/util/safefs.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define STATE_DIR "state"
#define MAX_ENTRIES 65536 /* entries looked at in one folder at start-up */

/* ------------------------------------------------------------------------------------ */
/* the folders */

static int open_node_dir(struct noded *nd, char *errbuf, size_t errlen)
{
    const char *top = nd->conf->spool_dir;
    if (mkdir(top, 0755) != 0 && errno != EEXIST) {
        snprintf(errbuf, errlen, "cannot create SpoolDir %s: %s", top, strerror(errno));
        return TS_ESYS;
    }
    int topfd = open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (topfd < 0) {
        snprintf(errbuf, errlen, "cannot open SpoolDir %s: %s", top, strerror(errno));
        return TS_ESYS;
    }
    int err = safefs_make_dir(topfd, nd->name, 0755, &nd->spool_fd);
    close(topfd);
    if (err == TS_EPERM || err == TS_EINVAL)
        snprintf(errbuf, errlen, "the spool %s is unsafe: not a folder (a link?)", nd->spool);
    else if (err)
        snprintf(errbuf, errlen, "cannot create the spool %s: %s", nd->spool, strerror(errno));
    return err;
}

/* A folder root works in must be root's (the daemon's uid) and closed to others as deny
 * says; otherwise the daemon refuses to start rather than work where a user could swap
 * things under it. */
static int check_dir(int fd, const char *path, mode_t deny, const char *must, char *errbuf,
                     size_t errlen)
{
    char why[128];
    int err = safefs_check_dir(fd, geteuid(), deny, why, sizeof(why));
    if (err)
        snprintf(errbuf, errlen, "the spool %s is unsafe: %s (it must belong to uid %u and %s)",
                 path, why, (unsigned)geteuid(), must);
    return err;
}

int spool_open(struct noded *nd, char *errbuf, size_t errlen)
{
    nd->spool_fd = nd->state_fd = -1;
    if ((size_t)snprintf(nd->spool, sizeof(nd->spool), "%s/%s", nd->conf->spool_dir, nd->name) >=
        sizeof(nd->spool)) {
        snprintf(errbuf, errlen, "SpoolDir %s is too long", nd->conf->spool_dir);
        return TS_ETOOBIG;
    }
    int err = open_node_dir(nd, errbuf, errlen);
    if (!err)
        err = check_dir(nd->spool_fd, nd->spool, S_IWGRP | S_IWOTH,
                        "be writable by nobody else", errbuf, errlen);
    if (err)
        return err;
    char path[600];
    snprintf(path, sizeof(path), "%s/" STATE_DIR, nd->spool);
    err = safefs_make_dir(nd->spool_fd, STATE_DIR, 0700, &nd->state_fd);
    if (err) {
        snprintf(errbuf, errlen, "the spool %s is unsafe: %s", path,
                 err == TS_EPERM ? "not a folder (a link?)" : ts_strerror(err));
        return err;
    }
    return check_dir(nd->state_fd, path, 077, "be closed to everybody else", errbuf, errlen);
}

void spool_close(struct noded *nd)
{
    if (nd->state_fd >= 0)
        close(nd->state_fd);
    if (nd->spool_fd >= 0)
        close(nd->spool_fd);
    nd->state_fd = nd->spool_fd = -1;
}

/* ------------------------------------------------------------------------------------ */
/* records */

void spool_job_name(uint32_t job_id, char *buf, size_t len)
{
    snprintf(buf, len, "job.%" PRIu32, job_id);
}

void spool_step_name(const struct nd_step_id *id, char *buf, size_t len)
{
    snprintf(buf, len, "step.%" PRIu32 ".%" PRIu32 ".%" PRIu32, id->job_id, id->step_job_id,
             id->step_id);
}

int spool_record_make(struct noded *nd, const char *name, int *fd)
{
    safefs_remove_tree(nd->state_fd, name);
    return safefs_make_dir(nd->state_fd, name, 0700, fd);
}

int spool_record_open(struct noded *nd, const char *name, int *fd)
{
    return safefs_open_dir(nd->state_fd, name, fd);
}

void spool_record_remove(struct noded *nd, const char *name)
{
    int err = safefs_remove_tree(nd->state_fd, name);
    if (err)
        log_warn("cannot remove %s/" STATE_DIR "/%s: %s", nd->spool, name, ts_strerror(err));
}

int spool_record_status(struct noded *nd, const char *name, struct stepstatus *st)
{
    int fd;
    int err = spool_record_open(nd, name, &fd);
    if (!err) {
        err = stepstatus_read_at(fd, "status", st);
        close(fd);
    }
    return err;
}

int spool_proc_write(int recfd, const struct spool_proc *p)
{
    char text[96];
    int n = snprintf(text, sizeof(text), "%d %llu %u\n", (int)p->pid, p->start, (unsigned)p->uid);
    return safefs_write_atomic(recfd, "proc", text, (size_t)n, 0600);
}

int spool_proc_read(int recfd, struct spool_proc *p)
{
    char text[96];
    size_t len;
    int err = safefs_read_small(recfd, "proc", text, sizeof(text), &len);
    if (err)
        return err;
    int pid;
    unsigned uid;
    unsigned long long start;
    char extra;
    if (sscanf(text, "%d %llu %u %c", &pid, &start, &uid, &extra) != 3 || pid <= 1 || !start)
        return TS_EINVAL;
    *p = (struct spool_proc){.pid = pid, .start = start, .uid = uid};
    return TS_OK;
}

int spool_proc_alive(const struct spool_proc *p)
{
    return p->pid > 1 && procinfo_matches(p->pid, p->start, p->uid);
}

int spool_proc_signal_group(const struct spool_proc *p, int signo)
{
    if (!spool_proc_alive(p))
        return 0;
    return kill(-p->pid, signo) == 0;
}

/* ------------------------------------------------------------------------------------ */
/* the batch script */

int spool_script_write(struct noded *nd, uint32_t job_id, const char *text, uid_t uid,
                       gid_t gid, char *path, size_t len)
{
    char name[32];
    spool_job_name(job_id, name, sizeof(name));
    if ((size_t)snprintf(path, len, "%s/%s/script", nd->spool, name) >= len)
        return TS_ETOOBIG;
    safefs_remove_tree(nd->spool_fd, name); /* a requeued job may come back to the node */
    int dfd = -1, fd = -1;
    int err = safefs_make_dir(nd->spool_fd, name, 0711, &dfd);
    if (!err)
        err = safefs_create(dfd, "script", 0700, &fd);
    /* the user's through the fd just created, never through a name they could change */
    if (!err && geteuid() == 0 && fchown(fd, uid, gid) != 0)
        err = TS_ESYS;
    if (!err && fchmod(fd, 0700) != 0)
        err = TS_ESYS;
    if (!err)
        err = safefs_write_all(fd, text, strlen(text));
    if (fd >= 0 && close(fd) != 0 && !err)
        err = TS_ESYS;
    if (dfd >= 0)
        close(dfd);
    if (err)
        safefs_remove_tree(nd->spool_fd, name);
    return err;
}

void spool_job_forget(struct noded *nd, uint32_t job_id)
{
    char name[32];
    spool_job_name(job_id, name, sizeof(name));
    spool_record_remove(nd, name);
    safefs_remove_tree(nd->spool_fd, name);
}

/* ------------------------------------------------------------------------------------ */
/* start-up */

/* "123" -> 123, the whole text a number that fits. */
static int parse_id(const char *s, const char **end, uint32_t *out)
{
    if (*s < '0' || *s > '9')
        return 0;
    char *e;
    errno = 0;
    unsigned long long v = strtoull(s, &e, 10);
    if (errno || v > UINT32_MAX)
        return 0;
    *end = e;
    *out = (uint32_t)v;
    return 1;
}

/* "job.<id>", "step.<id>.<first component's id>.<step>", or an older version's
 * "step.<id>.<step>" (the step's own job id not known: 0): 1 and the ids, else 0. */
static int parse_record(const char *name, int *is_step, struct nd_step_id *id)
{
    const char *end;
    *id = (struct nd_step_id){0};
    if (!strncmp(name, "job.", 4))
        return *is_step = 0, parse_id(name + 4, &end, &id->job_id) && !*end;
    if (strncmp(name, "step.", 5) || !parse_id(name + 5, &end, &id->job_id) || *end != '.' ||
        !parse_id(end + 1, &end, &id->step_id))
        return 0;
    *is_step = 1;
    if (*end == '.') { /* the second number was the step's own job id */
        id->step_job_id = id->step_id;
        if (!parse_id(end + 1, &end, &id->step_id))
            return 0;
    }
    return !*end;
}

static void recover_records(struct noded *nd)
{
    size_t n;
    char **names = safefs_names(nd->state_fd, MAX_ENTRIES, &n);
    for (size_t i = 0; i < n; i++) {
        int is_step, fd;
        struct nd_step_id id;
        if (!strncmp(names[i], "report.", 7))
            continue; /* noded/report.c's */
        if (!parse_record(names[i], &is_step, &id) ||
            spool_record_open(nd, names[i], &fd) != TS_OK) {
            safefs_remove_tree(nd->state_fd, names[i]); /* what a crash left half-made */
            continue;
        }
        if (is_step)
            step_recover(nd, &id, fd);
        else
            job_recover(nd, id.job_id, fd);
        close(fd);
    }
    safefs_names_free(names, n);
}

/* The node folder keeps state/ and the scripts of adopted jobs; everything else goes
 * (scripts of jobs that ended while the daemon was down, and what an older layout of the
 * spool left: user-owned job folders are removed without following anything in them). */
static void remove_leftovers(struct noded *nd)
{
    size_t n;
    char **names = safefs_names(nd->spool_fd, MAX_ENTRIES, &n);
    for (size_t i = 0; i < n; i++) {
        int is_step;
        struct nd_step_id id;
        if (!strcmp(names[i], STATE_DIR))
            continue;
        if (parse_record(names[i], &is_step, &id) && !is_step) {
            const struct nd_job *j = hashmap_get_u32(nd->jobs, id.job_id);
            if (j && j->pid)
                continue;
        }
        if (!strncmp(names[i], "job.", 4) || !strncmp(names[i], "step.", 5))
            safefs_remove_tree(nd->spool_fd, names[i]);
    }
    safefs_names_free(names, n);
}

void spool_recover(struct noded *nd)
{
    recover_records(nd);
    remove_leftovers(nd);
}
