#include "noded/cgroup.h"

#include "common/util/errors.h"
#include "common/util/safefs.h"

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

/* Control files are small: "populated 1\nfrozen 0\n" and the like. */
#define CONTROL_MAX 256

struct cgroup_root {
    int fd; /* <mount>/tessera/<node> */
};

int cgroup_v2_mount(char *buf, size_t len)
{
    FILE *f = fopen("/proc/self/mounts", "re");
    if (!f)
        return TS_ESYS;
    char dev[256], dir[4096], type[64];
    int err = TS_ENOENT;
    /* mount points with blanks are escaped (\040), so %s takes each field whole */
    while (fscanf(f, "%255s %4095s %63s %*[^\n]", dev, dir, type) == 3) {
        if (strcmp(type, "cgroup2") != 0)
            continue;
        err = snprintf(buf, len, "%s", dir) < (int)len ? TS_OK : TS_ETOOBIG;
        break;
    }
    fclose(f);
    return err;
}

static void job_name(uint32_t job_id, char name[32])
{
    snprintf(name, 32, "job_%" PRIu32, job_id);
}

/* One level below fd, made when missing, and root's alone to change. */
static int own_dir(int fd, const char *name, int *out, char *why, size_t len)
{
    int err = safefs_make_dir(fd, name, 0755, out);
    if (err) {
        snprintf(why, len, "cannot make %s: %s", name, strerror(errno));
        return err;
    }
    if ((err = safefs_check_dir(*out, 0, S_IWGRP | S_IWOTH, why, len))) {
        close(*out);
        *out = -1;
    }
    return err;
}

int cgroup_root_open(const char *mount, const char *cluster, const char *node,
                     struct cgroup_root **out, char *why, size_t len)
{
    *out = NULL;
    why[0] = '\0';
    if (!safefs_name_ok(cluster) || !safefs_name_ok(node))
        return TS_EINVAL;
    int fd = open(mount, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        snprintf(why, len, "cannot open %s: %s", mount, strerror(errno));
        return errno == ENOENT ? TS_ENOENT : TS_ESYS;
    }
    struct statfs sfs;
    if (fstatfs(fd, &sfs) != 0 || sfs.f_type != CGROUP2_SUPER_MAGIC) {
        snprintf(why, len, "%s is no cgroup2 filesystem", mount);
        close(fd);
        return TS_ENOENT;
    }
    /* tessera/<cluster>/<node>: one level at a time, each root's alone */
    const char *levels[] = {"tessera", cluster, node};
    int err = TS_OK;
    for (size_t i = 0; !err && i < 3; i++) {
        int next = -1;
        err = own_dir(fd, levels[i], &next, why, len);
        close(fd);
        fd = next;
    }
    if (err)
        return err;
    struct cgroup_root *r = malloc(sizeof(*r));
    if (!r) {
        close(fd);
        return TS_ENOMEM;
    }
    r->fd = fd;
    *out = r;
    return TS_OK;
}

void cgroup_root_close(struct cgroup_root *r)
{
    if (!r)
        return;
    close(r->fd);
    free(r);
}

int cgroup_job_create(struct cgroup_root *r, uint32_t job_id)
{
    char name[32];
    job_name(job_id, name);
    if (mkdirat(r->fd, name, 0755) != 0 && errno != EEXIST)
        return TS_ESYS;
    return TS_OK;
}

/* Write text to the control file file of the job's folder. TS_ENOENT when the folder or
 * the file is missing. */
static int control_write(struct cgroup_root *r, uint32_t job_id, const char *file,
                         const char *text)
{
    char name[32];
    job_name(job_id, name);
    int dir = -1;
    int err = safefs_open_dir(r->fd, name, &dir);
    if (err)
        return err;
    int fd = openat(dir, file, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
    close(dir);
    if (fd < 0)
        return errno == ENOENT ? TS_ENOENT : TS_ESYS;
    err = safefs_write_all(fd, text, strlen(text));
    close(fd);
    return err;
}

int cgroup_job_attach(struct cgroup_root *r, uint32_t job_id, pid_t pid)
{
    char text[32];
    snprintf(text, sizeof(text), "%ld\n", (long)pid);
    return control_write(r, job_id, "cgroup.procs", text);
}

int cgroup_job_kill(struct cgroup_root *r, uint32_t job_id)
{
    int err = control_write(r, job_id, "cgroup.kill", "1\n");
    return err == TS_ENOENT ? TS_OK : err;
}

int cgroup_job_populated(struct cgroup_root *r, uint32_t job_id)
{
    char name[32], buf[CONTROL_MAX];
    job_name(job_id, name);
    int dir = -1;
    int err = safefs_open_dir(r->fd, name, &dir);
    if (err)
        return err == TS_ENOENT ? 0 : -err;
    /* cgroup files show a size of 0: read what the kernel gives, not what stat says */
    int fd = openat(dir, "cgroup.events", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    close(dir);
    if (fd < 0)
        return -TS_ESYS;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n < 0)
        return -TS_ESYS;
    buf[n] = '\0';
    const char *p = strstr(buf, "populated ");
    return p ? p[strlen("populated ")] == '1' : -TS_ESYS;
}

int cgroup_job_remove(struct cgroup_root *r, uint32_t job_id)
{
    char name[32];
    job_name(job_id, name);
    /* a cgroup folder is removed as a whole: its control files are not unlinked */
    if (unlinkat(r->fd, name, AT_REMOVEDIR) != 0 && errno != ENOENT)
        return TS_ESYS;
    return TS_OK;
}
