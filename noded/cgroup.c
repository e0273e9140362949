#include "noded/cgroup.h"

#include "common/util/errors.h"
#include "common/util/safefs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif
#ifndef CGROUP_SUPER_MAGIC
#define CGROUP_SUPER_MAGIC 0x27e0eb
#endif

#define CONTROL_MAX 4096    /* cpu.stat, memory.events and the like are a few lines */
#define MAX_ENABLED 8       /* v2 controllers enabled below the jobs */
#define FOLDER_NAME_MAX 48  /* "step_" and a step's name (at most 31 bytes), or "job_<id>" */

struct cgroup_tree {
    int fd;                         /* <mount>/tessera/<cluster>/<node> */
    enum cgroup_version version;
    char controller[16];            /* v1: the hierarchy's controller */
    char enabled[MAX_ENABLED][16];  /* v2: controllers enabled below the jobs */
    size_t nenabled;
};

/* ------------------------------------------------------------------------------------ */
/* finding and opening */

/* 1 when the comma-separated mount options hold word. */
static int has_option(const char *options, const char *word)
{
    size_t len = strlen(word);
    for (const char *p = options; p && *p;) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n == len && strncmp(p, word, len) == 0)
            return 1;
        p = end ? end + 1 : NULL;
    }
    return 0;
}

int cgroup_mount_find(enum cgroup_version v, const char *controller, char *buf, size_t len)
{
    FILE *f = fopen("/proc/self/mounts", "re");
    if (!f)
        return TS_ESYS;
    char dev[256], dir[4096], type[64], options[1024];
    int err = TS_ENOENT;
    /* mount points with blanks are escaped (\040), so %s takes each field whole */
    while (fscanf(f, "%255s %4095s %63s %1023s %*[^\n]", dev, dir, type, options) == 4) {
        int match = v == CGROUP_V2 ? strcmp(type, "cgroup2") == 0
                                   : strcmp(type, "cgroup") == 0 && controller &&
                                         has_option(options, controller);
        if (!match)
            continue;
        err = snprintf(buf, len, "%s", dir) < (int)len ? TS_OK : TS_ETOOBIG;
        break;
    }
    fclose(f);
    return err;
}

/* Read a control file of the folder dir into buf (terminated). */
static int read_at(int dir, const char *file, char *buf, size_t len)
{
    /* cgroup files show a size of 0: read what the kernel gives, not what stat says */
    int fd = openat(dir, file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return errno == ENOENT ? TS_ENOENT : TS_ESYS;
    ssize_t n = read(fd, buf, len - 1);
    close(fd);
    if (n < 0)
        return TS_ESYS;
    buf[n] = '\0';
    return TS_OK;
}

static int write_at(int dir, const char *file, const char *text)
{
    int fd = openat(dir, file, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return errno == ENOENT ? TS_ENOENT : TS_ESYS;
    int err = safefs_write_all(fd, text, strlen(text));
    close(fd);
    return err;
}

/* v1 cpuset starts a folder with no CPU and no memory node, where nothing can run: it
 * takes its parent's (a job's own CPUs are written over them afterwards). */
static int cpuset_inherit(const struct cgroup_tree *t, int parent, int child)
{
    if (t->version != CGROUP_V1 || strcmp(t->controller, "cpuset") != 0)
        return TS_OK;
    static const char *const files[] = {"cpuset.cpus", "cpuset.mems"};
    for (size_t i = 0; i < 2; i++) {
        char mine[CONTROL_MAX], theirs[CONTROL_MAX];
        int err = read_at(child, files[i], mine, sizeof(mine));
        if (!err && mine[0] != '\0' && mine[0] != '\n')
            continue;
        if (err || (err = read_at(parent, files[i], theirs, sizeof(theirs))) ||
            (err = write_at(child, files[i], theirs)))
            return err;
    }
    return TS_OK;
}

/* One level below fd, made when missing, and root's alone to change. */
static int own_dir(const struct cgroup_tree *t, int fd, const char *name, int *out,
                   char *why, size_t len)
{
    int err = safefs_make_dir(fd, name, 0755, out);
    if (err) {
        snprintf(why, len, "cannot make %s: %s", name, strerror(errno));
        return err;
    }
    if (!(err = safefs_check_dir(*out, 0, S_IWGRP | S_IWOTH, why, len)) &&
        (err = cpuset_inherit(t, fd, *out)))
        snprintf(why, len, "cannot give %s its parent's CPUs: %s", name, strerror(errno));
    if (err) {
        close(*out);
        *out = -1;
    }
    return err;
}

int cgroup_tree_open(const char *mount, enum cgroup_version v, const char *controller,
                     const char *cluster, const char *node, struct cgroup_tree **out,
                     char *why, size_t len)
{
    *out = NULL;
    why[0] = '\0';
    if (!safefs_name_ok(cluster) || !safefs_name_ok(node))
        return TS_EINVAL;
    struct cgroup_tree *t = calloc(1, sizeof(*t));
    if (!t)
        return TS_ENOMEM;
    t->version = v;
    snprintf(t->controller, sizeof(t->controller), "%s", controller ? controller : "");
    int fd = open(mount, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        snprintf(why, len, "cannot open %s: %s", mount, strerror(errno));
        free(t);
        return errno == ENOENT ? TS_ENOENT : TS_ESYS;
    }
    struct statfs sfs;
    long magic = v == CGROUP_V2 ? CGROUP2_SUPER_MAGIC : CGROUP_SUPER_MAGIC;
    if (fstatfs(fd, &sfs) != 0 || sfs.f_type != magic) {
        snprintf(why, len, "%s is no cgroup%s filesystem", mount, v == CGROUP_V2 ? "2" : "");
        close(fd);
        free(t);
        return TS_ENOENT;
    }
    /* tessera/<cluster>/<node>: one level at a time, each root's alone */
    const char *levels[] = {"tessera", cluster, node};
    int err = TS_OK;
    for (size_t i = 0; !err && i < 3; i++) {
        int next = -1;
        err = own_dir(t, fd, levels[i], &next, why, len);
        close(fd);
        fd = next;
    }
    if (err) {
        free(t);
        return err;
    }
    t->fd = fd;
    *out = t;
    return TS_OK;
}

void cgroup_tree_close(struct cgroup_tree *t)
{
    if (!t)
        return;
    close(t->fd);
    free(t);
}

enum cgroup_version cgroup_tree_version(const struct cgroup_tree *t)
{
    return t->version;
}

const char *cgroup_tree_controller(const struct cgroup_tree *t)
{
    return t->version == CGROUP_V1 ? t->controller : NULL;
}

/* 1 when the space-separated list holds word. */
static int has_word(const char *list, const char *word)
{
    size_t len = strlen(word);
    for (const char *p = list; (p = strstr(p, word)); p += len)
        if ((p == list || p[-1] == ' ') && (p[len] == ' ' || p[len] == '\n' || !p[len]))
            return 1;
    return 0;
}

/* "+controller" into the subtree_control of dir, when dir offers it. */
static int enable_in(int dir, const char *controller)
{
    char offered[CONTROL_MAX], text[32];
    int err = read_at(dir, "cgroup.controllers", offered, sizeof(offered));
    if (err)
        return err;
    if (!has_word(offered, controller))
        return TS_ENOENT;
    snprintf(text, sizeof(text), "+%s", controller);
    return write_at(dir, "cgroup.subtree_control", text);
}

int cgroup_tree_enable(struct cgroup_tree *t, const char *controller)
{
    if (t->version != CGROUP_V2 || t->nenabled == MAX_ENABLED ||
        strlen(controller) >= sizeof(t->enabled[0]))
        return TS_EINVAL;
    /* the tessera and cluster folders are reached from the node's: "..", which the
     * kernel resolves inside the hierarchy (cgroupfs has no links) */
    int levels[3] = {-1, -1, dup(t->fd)};
    int err = levels[2] < 0 ? TS_ESYS : TS_OK;
    for (int i = 2; !err && i > 0; i--)
        if ((levels[i - 1] = openat(levels[i], "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
            err = TS_ESYS;
    for (int i = 0; !err && i < 3; i++)
        err = enable_in(levels[i], controller);
    for (int i = 0; i < 3; i++)
        if (levels[i] >= 0)
            close(levels[i]);
    if (!err)
        snprintf(t->enabled[t->nenabled++], sizeof(t->enabled[0]), "%s", controller);
    return err;
}

/* ------------------------------------------------------------------------------------ */
/* units */

/* A step's name: digits, dots and lower-case letters ("batch", "3", "94.3"). */
static int step_ok(const char *step)
{
    size_t n = strlen(step);
    if (n == 0 || n > 24)
        return 0;
    for (const char *p = step; *p; p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') || *p == '.'))
            return 0;
    return step[0] != '.';
}

static void job_name(uint32_t job_id, char name[FOLDER_NAME_MAX])
{
    snprintf(name, FOLDER_NAME_MAX, "job_%" PRIu32, job_id);
}

/* The unit's folder into *out. TS_ENOENT when missing. */
static int unit_open(struct cgroup_tree *t, uint32_t job_id, const char *step, int *out)
{
    char name[FOLDER_NAME_MAX];
    if (step && !step_ok(step))
        return TS_EINVAL;
    job_name(job_id, name);
    int job = -1;
    int err = safefs_open_dir(t->fd, name, &job);
    if (err || !step) {
        *out = job;
        return err;
    }
    snprintf(name, sizeof(name), "step_%s", step);
    err = safefs_open_dir(job, name, out);
    close(job);
    return err;
}

/* name made in dir (kept when there); *made says whether it is new; *out its folder. */
static int make_in(int dir, const char *name, int *made, int *out)
{
    *made = mkdirat(dir, name, 0755) == 0;
    if (!*made && errno != EEXIST)
        return TS_ESYS;
    return safefs_open_dir(dir, name, out);
}

/* What a new job's folder needs before a step goes below it: v1 cpuset's CPUs, and the
 * v2 controllers enabled for its steps. */
static int job_prepare(struct cgroup_tree *t, int job)
{
    int err = cpuset_inherit(t, t->fd, job);
    char text[32];
    for (size_t i = 0; !err && i < t->nenabled; i++) {
        snprintf(text, sizeof(text), "+%s", t->enabled[i]);
        err = write_at(job, "cgroup.subtree_control", text);
    }
    return err;
}

int cgroup_unit_make(struct cgroup_tree *t, uint32_t job_id, const char *step, int *job_made)
{
    char name[FOLDER_NAME_MAX];
    int made = 0, job = -1, err;
    if (step && !step_ok(step))
        return TS_EINVAL;
    job_name(job_id, name);
    if ((err = make_in(t->fd, name, &made, &job)))
        return err;
    if (made && (err = job_prepare(t, job)))
        goto out;
    if (job_made)
        *job_made = made;
    if (step) {
        int step_made = 0, dir = -1;
        snprintf(name, sizeof(name), "step_%s", step);
        if (!(err = make_in(job, name, &step_made, &dir)) && step_made)
            err = cpuset_inherit(t, job, dir);
        if (dir >= 0)
            close(dir);
    }
out:
    close(job);
    return err;
}

int cgroup_unit_dir(struct cgroup_tree *t, uint32_t job_id, const char *step, int *fd)
{
    return unit_open(t, job_id, step, fd);
}

int cgroup_unit_write(struct cgroup_tree *t, uint32_t job_id, const char *step,
                      const char *file, const char *text)
{
    int dir = -1;
    int err = unit_open(t, job_id, step, &dir);
    if (err)
        return err;
    err = write_at(dir, file, text);
    close(dir);
    return err;
}

int cgroup_unit_read(struct cgroup_tree *t, uint32_t job_id, const char *step,
                     const char *file, char *buf, size_t len)
{
    int dir = -1;
    int err = unit_open(t, job_id, step, &dir);
    if (err)
        return err;
    err = read_at(dir, file, buf, len);
    close(dir);
    return err;
}

/* The value of key in "key value" lines (memory.events, cpu.stat, memory.oom_control). */
static int key_in(const char *text, const char *key, uint64_t *value)
{
    size_t len = strlen(key);
    for (const char *line = text; *line;) {
        if (strncmp(line, key, len) == 0 && line[len] == ' ')
            return sscanf(line + len + 1, "%" SCNu64, value) == 1 ? TS_OK : TS_ESYS;
        const char *next = strchr(line, '\n');
        if (!next)
            break;
        line = next + 1;
    }
    return TS_ENOENT;
}

int cgroup_unit_read_key(struct cgroup_tree *t, uint32_t job_id, const char *step,
                         const char *file, const char *key, uint64_t *value)
{
    char buf[CONTROL_MAX];
    int err = cgroup_unit_read(t, job_id, step, file, buf, sizeof(buf));
    return err ? err : key_in(buf, key, value);
}

int cgroup_folder_read_key(const char *folder, const char *file, const char *key,
                           uint64_t *value)
{
    char buf[CONTROL_MAX];
    int dir = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    if (dir < 0)
        return errno == ENOENT ? TS_ENOENT : TS_ESYS;
    int err = read_at(dir, file, buf, sizeof(buf));
    close(dir);
    return err ? err : key_in(buf, key, value);
}

int cgroup_v2_offers(const char *controller)
{
    char mount[1024], offered[CONTROL_MAX];
    if (cgroup_mount_find(CGROUP_V2, NULL, mount, sizeof(mount)) != TS_OK)
        return 0;
    int dir = open(mount, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0)
        return 0;
    int err = read_at(dir, "cgroup.subtree_control", offered, sizeof(offered));
    close(dir);
    return !err && has_word(offered, controller);
}

int cgroup_unit_read_u64(struct cgroup_tree *t, uint32_t job_id, const char *step,
                         const char *file, uint64_t *value)
{
    char buf[64];
    int err = cgroup_unit_read(t, job_id, step, file, buf, sizeof(buf));
    if (!err && sscanf(buf, "%" SCNu64, value) != 1)
        err = TS_ESYS;
    return err;
}

int cgroup_unit_attach(struct cgroup_tree *t, uint32_t job_id, const char *step, pid_t pid)
{
    char text[32];
    snprintf(text, sizeof(text), "%ld\n", (long)pid);
    return cgroup_unit_write(t, job_id, step, "cgroup.procs", text);
}

int cgroup_unit_procs(struct cgroup_tree *t, uint32_t job_id, const char *step, pid_t *pids,
                      size_t max, size_t *n)
{
    *n = 0;
    int dir = -1;
    int err = unit_open(t, job_id, step, &dir);
    if (err)
        return err == TS_ENOENT ? TS_OK : err;
    int fd = openat(dir, "cgroup.procs", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    close(dir);
    FILE *f = fd >= 0 ? fdopen(fd, "re") : NULL;
    if (!f) {
        if (fd >= 0)
            close(fd);
        return TS_ESYS;
    }
    long pid;
    while (*n < max && fscanf(f, "%ld", &pid) == 1)
        pids[(*n)++] = (pid_t)pid;
    fclose(f);
    return TS_OK;
}

/* v1 has no populated flag: a unit is in use while it or a step below lists a process. */
static int v1_populated(struct cgroup_tree *t, uint32_t job_id, const char *step)
{
    pid_t pid;
    size_t n = 0;
    int err = cgroup_unit_procs(t, job_id, step, &pid, 1, &n);
    if (err || n || step)
        return err ? -err : n > 0;
    char names[CGROUP_STEPS_MAX][32];
    size_t nsteps = 0;
    if ((err = cgroup_job_steps(t, job_id, names, CGROUP_STEPS_MAX, &nsteps)))
        return -err;
    for (size_t i = 0; i < nsteps; i++) {
        if ((err = cgroup_unit_procs(t, job_id, names[i], &pid, 1, &n)))
            return -err;
        if (n)
            return 1;
    }
    return 0;
}

int cgroup_unit_populated(struct cgroup_tree *t, uint32_t job_id, const char *step)
{
    if (t->version == CGROUP_V1)
        return v1_populated(t, job_id, step);
    uint64_t populated = 0;
    int err = cgroup_unit_read_key(t, job_id, step, "cgroup.events", "populated", &populated);
    if (err)
        return err == TS_ENOENT ? 0 : -err;
    return populated != 0;
}

/* Calls fn for each sub-folder of dir whose name starts with prefix (the rest of the name
 * passed), at most max; *n counts them. */
static int list_prefixed(int dir, const char *prefix, void (*fn)(const char *rest, size_t i,
                         void *arg), void *arg, size_t max, size_t *n)
{
    *n = 0;
    DIR *d = safefs_list(dir);
    if (!d)
        return TS_ESYS;
    size_t plen = strlen(prefix);
    struct dirent *e;
    while (*n < max && (e = readdir(d)))
        if (e->d_type == DT_DIR && strncmp(e->d_name, prefix, plen) == 0 && e->d_name[plen])
            fn(e->d_name + plen, (*n)++, arg);
    closedir(d);
    return TS_OK;
}

static void keep_step(const char *rest, size_t i, void *arg)
{
    snprintf(((char (*)[32])arg)[i], 32, "%s", rest);
}

int cgroup_job_steps(struct cgroup_tree *t, uint32_t job_id, char (*names)[32], size_t max,
                     size_t *n)
{
    *n = 0;
    int job = -1;
    int err = unit_open(t, job_id, NULL, &job);
    if (err)
        return err == TS_ENOENT ? TS_OK : err;
    err = list_prefixed(job, "step_", keep_step, names, max, n);
    close(job);
    return err;
}

static void keep_job(const char *rest, size_t i, void *arg)
{
    char *end;
    unsigned long id = strtoul(rest, &end, 10);
    ((uint32_t *)arg)[i] = *end || id > UINT32_MAX ? 0 : (uint32_t)id;
}

int cgroup_tree_jobs(struct cgroup_tree *t, uint32_t *ids, size_t max, size_t *n)
{
    int err = list_prefixed(t->fd, "job_", keep_job, ids, max, n);
    /* a folder named job_<not a number> is no job's */
    size_t k = 0;
    for (size_t i = 0; i < *n; i++)
        if (ids[i])
            ids[k++] = ids[i];
    *n = k;
    return err;
}

int cgroup_unit_remove(struct cgroup_tree *t, uint32_t job_id, const char *step)
{
    char name[FOLDER_NAME_MAX];
    int dir = -1;
    /* the step's name becomes a path below the job's folder: "1/../../job_9" would
     * remove another job's folder */
    if (step && !step_ok(step))
        return TS_EINVAL;
    int err = unit_open(t, job_id, NULL, &dir);
    if (err)
        return err == TS_ENOENT ? TS_OK : err;
    /* a cgroup folder is removed as a whole: its control files are not unlinked */
    if (step) {
        snprintf(name, sizeof(name), "step_%s", step);
        err = unlinkat(dir, name, AT_REMOVEDIR) != 0 && errno != ENOENT ? TS_ESYS : TS_OK;
        close(dir);
        return err;
    }
    char names[CGROUP_STEPS_MAX][32];
    size_t n = 0;
    err = list_prefixed(dir, "step_", keep_step, names, CGROUP_STEPS_MAX, &n);
    for (size_t i = 0; !err && i < n; i++) {
        snprintf(name, sizeof(name), "step_%s", names[i]);
        if (unlinkat(dir, name, AT_REMOVEDIR) != 0 && errno != ENOENT)
            err = TS_ESYS;
    }
    close(dir);
    job_name(job_id, name);
    if (!err && unlinkat(t->fd, name, AT_REMOVEDIR) != 0 && errno != ENOENT)
        err = TS_ESYS;
    return err;
}

int cgroup_step_name_ok(const char *step)
{
    return step_ok(step);
}
