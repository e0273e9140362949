/* AutoDetect=nvidia (docs/gres.md §1.3): the GPUs the NVIDIA kernel driver lists, one
 * folder per GPU under /proc/driver/nvidia/gpus/ (named by its PCI address), each with an
 * "information" file of "Key: value" lines, among them
 *
 *     Model:           NVIDIA A100-SXM4-40GB
 *     Device Minor:    0
 *
 * No library is needed, and a node without the driver simply has no such folder. */
#include "common/gres/gres_conf.h"

#include "common/util/errors.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define INFO_MAX 8192 /* the driver writes a few hundred bytes */
#define MINOR_MAX 255u /* /dev/nvidia0 .. /dev/nvidia254; 255 is nvidiactl */

/* The value of "key:" in text, its blanks trimmed, into buf; 0 when absent. */
static int info_value(const char *text, const char *key, char *buf, size_t len)
{
    size_t klen = strlen(key);
    for (const char *s = text; *s; s += strcspn(s, "\n"), s += *s == '\n') {
        if (strncmp(s, key, klen) || s[klen] != ':')
            continue;
        const char *v = s + klen + 1;
        while (*v == ' ' || *v == '\t')
            v++;
        size_t n = strcspn(v, "\n");
        while (n && isspace((unsigned char)v[n - 1]))
            n--;
        if (n >= len)
            n = len - 1;
        memcpy(buf, v, n);
        buf[n] = '\0';
        return 1;
    }
    return 0;
}

int gres_detect_parse_information(const char *text, char *type, size_t typelen,
                                  uint32_t *minor)
{
    char model[GRES_TYPE_MAX * 2], num[32];
    if (!typelen || !info_value(text, "Model", model, sizeof(model)) || !model[0] ||
        !info_value(text, "Device Minor", num, sizeof(num)) || !isdigit((unsigned char)num[0]))
        return TS_EINVAL;
    char *end;
    unsigned long m = strtoul(num, &end, 10);
    if (*end || m >= MINOR_MAX)
        return TS_EINVAL;
    /* Slurm's type from a model: lower case, blanks as "_"; so are characters a type
     * cannot hold here */
    size_t i = 0;
    for (; model[i] && i + 1 < typelen; i++) {
        unsigned char c = (unsigned char)tolower((unsigned char)model[i]);
        type[i] = isalnum(c) || c == '-' || c == '.' ? (char)c : '_';
    }
    type[i] = '\0';
    *minor = (uint32_t)m;
    return TS_OK;
}

/* One GPU folder's information file, read within INFO_MAX bytes. */
static int read_information(int gpus, const char *name, char *buf, size_t len)
{
    char path[300];
    snprintf(path, sizeof(path), "%s/information", name);
    int fd = openat(gpus, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
    if (fd < 0)
        return TS_ESYS;
    size_t used = 0;
    ssize_t got;
    while (used + 1 < len && (got = read(fd, buf + used, len - 1 - used)) != 0) {
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            close(fd);
            return TS_ESYS;
        }
        used += (size_t)got;
    }
    close(fd);
    buf[used] = '\0';
    return TS_OK;
}

struct found {
    uint32_t minor;
    char type[GRES_TYPE_MAX];
};

static int by_minor(const void *a, const void *b)
{
    uint32_t x = ((const struct found *)a)->minor, y = ((const struct found *)b)->minor;
    return x < y ? -1 : x > y;
}

/* Every GPU folder's minor and type into found (at most GRES_UNITS_MAX). */
static int scan(DIR *dir, const char *where, struct found *found, size_t *n, char *err,
                size_t errlen)
{
    char *info = malloc(INFO_MAX);
    if (!info)
        return TS_ENOMEM;
    int rc = TS_OK;
    struct dirent *e;
    while (!rc && (e = readdir(dir))) {
        if (e->d_name[0] == '.')
            continue;
        if (*n == GRES_UNITS_MAX) {
            snprintf(err, errlen, "%s: more than %d GPUs", where, GRES_UNITS_MAX);
            rc = TS_ECONF;
        } else if (read_information(dirfd(dir), e->d_name, info, INFO_MAX) ||
                   gres_detect_parse_information(info, found[*n].type, GRES_TYPE_MAX,
                                                 &found[*n].minor)) {
            snprintf(err, errlen, "%s/%s/information: cannot be read or has no Model and "
                     "Device Minor", where, e->d_name);
            rc = TS_ECONF;
        } else {
            (*n)++;
        }
    }
    free(info);
    return rc;
}

static int push_found(const struct found *f, struct gres_units *out)
{
    char file[32];
    char *files[1] = {file};
    struct gres_record r = {.name = "gpu", .count = 1, .files = files, .nfiles = 1};
    memcpy(r.type, f->type, sizeof(r.type));
    snprintf(file, sizeof(file), "/dev/nvidia%u", f->minor);
    return gres_units_push(out, &r);
}

int gres_detect_nvidia(const char *root, struct gres_units *out, char *err, size_t errlen)
{
    char where[4096];
    if ((size_t)snprintf(where, sizeof(where), "%s/proc/driver/nvidia/gpus", root ? root : "") >=
        sizeof(where))
        return TS_ETOOBIG;
    DIR *dir = opendir(where);
    if (!dir) {
        if (errno == ENOENT)
            return TS_OK;
        snprintf(err, errlen, "%s: %s", where, strerror(errno));
        return TS_ECONF;
    }
    struct found *found = calloc(GRES_UNITS_MAX, sizeof(*found));
    size_t n = 0;
    int rc = found ? scan(dir, where, found, &n, err, errlen) : TS_ENOMEM;
    closedir(dir);
    if (!rc)
        qsort(found, n, sizeof(*found), by_minor);
    for (size_t i = 0; !rc && i < n; i++)
        rc = push_found(&found[i], out);
    free(found);
    return rc;
}
