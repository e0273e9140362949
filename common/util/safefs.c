/* Files and folders through directory fds, never following a link (common/util/safefs.h). */
#include "common/util/safefs.h"

#include "common/util/errors.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int safefs_name_ok(const char *name)
{
    if (!name || !name[0] || !strcmp(name, ".") || !strcmp(name, ".."))
        return 0;
    return strchr(name, '/') == NULL;
}

int safefs_open_dir(int dirfd, const char *name, int *out)
{
    *out = -1;
    if (!safefs_name_ok(name))
        return TS_EINVAL;
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
        *out = fd;
        return TS_OK;
    }
    if (errno == ENOENT)
        return TS_ENOENT;
    /* ELOOP: a link; ENOTDIR: a file */
    return errno == ELOOP || errno == ENOTDIR ? TS_EPERM : TS_ESYS;
}

int safefs_make_dir(int dirfd, const char *name, mode_t mode, int *out)
{
    *out = -1;
    if (!safefs_name_ok(name))
        return TS_EINVAL;
    int made = mkdirat(dirfd, name, mode) == 0;
    if (!made && errno != EEXIST)
        return TS_ESYS;
    int err = safefs_open_dir(dirfd, name, out);
    /* the mode asked for, whatever the umask (fchmod on the fd: never through a link) */
    if (!err && made && fchmod(*out, mode) != 0) {
        close(*out);
        *out = -1;
        return TS_ESYS;
    }
    return err;
}

DIR *safefs_list(int fd)
{
    int dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
    if (!d) {
        if (dup_fd >= 0)
            close(dup_fd);
        return NULL;
    }
    rewinddir(d); /* the copy shares fd's position, wherever an earlier listing left it */
    return d;
}

char **safefs_names(int fd, size_t max, size_t *n)
{
    *n = 0;
    DIR *d = safefs_list(fd);
    if (!d)
        return NULL;
    char **names = NULL;
    size_t cap = 0;
    struct dirent *e;
    while (*n < max && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (*n == cap) {
            size_t ncap = cap ? cap * 2 : 32;
            char **v = realloc(names, ncap * sizeof(*v));
            if (!v)
                break;
            names = v;
            cap = ncap;
        }
        if (!(names[*n] = strdup(e->d_name)))
            break;
        (*n)++;
    }
    closedir(d);
    return names;
}

void safefs_names_free(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

int safefs_check_dir(int fd, uid_t owner, mode_t deny, char *why, size_t len)
{
    struct stat st;
    if (fstat(fd, &st) != 0) {
        snprintf(why, len, "%s", strerror(errno));
        return TS_ESYS;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(why, len, "not a folder");
        return TS_EPERM;
    }
    if (st.st_uid != owner) {
        snprintf(why, len, "owned by uid %u, not %u", (unsigned)st.st_uid, (unsigned)owner);
        return TS_EPERM;
    }
    if (st.st_mode & deny) {
        snprintf(why, len, "mode %04o", (unsigned)(st.st_mode & 07777));
        return TS_EPERM;
    }
    return TS_OK;
}

/* ------------------------------------------------------------------------------------ */
/* removal */

static int remove_entry(int dirfd, const char *name, int depth);

/* Empty the open folder fd. Entries are removed while the folder is read, so it is read
 * again until a pass finds nothing (bounded: a folder that keeps filling is left). */
static int empty_dir(int fd, int depth)
{
    DIR *d = safefs_list(fd);
    if (!d)
        return TS_ESYS;
    int err = TS_OK;
    for (int pass = 0; pass < 8; pass++) {
        int seen = 0;
        struct dirent *e;
        rewinddir(d);
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            seen = 1;
            int r = remove_entry(fd, e->d_name, depth);
            if (r && !err)
                err = r;
        }
        if (!seen || err)
            break;
    }
    closedir(d);
    return err;
}

/* Remove one entry of the folder dirfd: unlinkat first (a file or a link goes, never its
 * target); a folder is opened without following links, emptied, then removed. A folder
 * swapped for a link between the two steps fails to open as a folder and is unlinked as
 * what it has become. */
static int remove_entry(int dirfd, const char *name, int depth)
{
    for (int tries = 0; tries < 4; tries++) {
        if (unlinkat(dirfd, name, 0) == 0 || errno == ENOENT)
            return TS_OK;
        if (errno != EISDIR && errno != EPERM)
            return TS_ESYS;
        int fd;
        int err = safefs_open_dir(dirfd, name, &fd);
        if (err == TS_ENOENT)
            return TS_OK;
        if (err == TS_EPERM)
            continue; /* no longer a folder: unlink what is there now */
        if (err)
            return err;
        if (depth >= SAFEFS_MAX_DEPTH) {
            close(fd);
            return TS_ETOOBIG;
        }
        err = empty_dir(fd, depth + 1);
        close(fd);
        if (err)
            return err;
        if (unlinkat(dirfd, name, AT_REMOVEDIR) == 0 || errno == ENOENT)
            return TS_OK;
        if (errno != ENOTEMPTY && errno != ENOTDIR)
            return TS_ESYS;
    }
    return TS_ESYS;
}

int safefs_remove_tree(int dirfd, const char *name)
{
    if (!safefs_name_ok(name))
        return TS_EINVAL;
    return remove_entry(dirfd, name, 0);
}

/* ------------------------------------------------------------------------------------ */
/* small files */

int safefs_create(int dirfd, const char *name, mode_t mode, int *out)
{
    *out = -1;
    if (!safefs_name_ok(name))
        return TS_EINVAL;
    int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0)
        return errno == EEXIST ? TS_EEXIST : TS_ESYS;
    *out = fd;
    return TS_OK;
}

int safefs_write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return TS_ESYS;
        p += n;
        len -= (size_t)n;
    }
    return TS_OK;
}

int safefs_write_atomic(int dirfd, const char *name, const void *buf, size_t len, mode_t mode)
{
    static const char suffix[] = ".tmp";
    char tmp[256];
    size_t nlen = safefs_name_ok(name) ? strlen(name) : sizeof(tmp);
    if (nlen + sizeof(suffix) > sizeof(tmp))
        return TS_EINVAL;
    memcpy(tmp, name, nlen);
    memcpy(tmp + nlen, suffix, sizeof(suffix));
    unlinkat(dirfd, tmp, 0); /* left by a writer that died */
    int fd;
    int err = safefs_create(dirfd, tmp, mode, &fd);
    if (err)
        return err;
    err = safefs_write_all(fd, buf, len);
    if (!err && fsync(fd) != 0)
        err = TS_ESYS;
    if (close(fd) != 0 && !err)
        err = TS_ESYS;
    if (!err && renameat(dirfd, tmp, dirfd, name) != 0)
        err = TS_ESYS;
    if (err)
        unlinkat(dirfd, tmp, 0);
    return err;
}

int safefs_read_small(int dirfd, const char *name, char *buf, size_t cap, size_t *len)
{
    *len = 0;
    if (cap == 0 || !safefs_name_ok(name))
        return TS_EINVAL;
    buf[0] = '\0';
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? TS_ENOENT : errno == ELOOP ? TS_EPERM : TS_ESYS;
    struct stat st;
    int err = fstat(fd, &st) != 0 ? TS_ESYS : !S_ISREG(st.st_mode) ? TS_EPERM : TS_OK;
    size_t off = 0;
    while (!err) {
        /* one byte more than fits: its arrival says the file is too large */
        char extra;
        ssize_t n = off < cap - 1 ? read(fd, buf + off, cap - 1 - off) : read(fd, &extra, 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            err = TS_ESYS;
        else if (n == 0)
            break;
        else if (off >= cap - 1)
            err = TS_ETOOBIG;
        else
            off += (size_t)n;
    }
    close(fd);
    buf[err ? 0 : off] = '\0';
    if (!err)
        *len = off;
    return err;
}
