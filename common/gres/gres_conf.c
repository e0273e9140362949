/* gres.conf in Slurm's syntax (docs/gres.md §1.2): one record per line of Key=Value
 * tokens, "#" comments, a trailing "\" continues a line. Every value is checked and
 * bounded here; which records concern a node is gres_node_units' work (gres_node.c). */
#include "common/gres/gres_conf.h"

#include "common/text/hostlist.h"
#include "common/text/idset.h"
#include "common/util/errors.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* The parser's position, for messages. */
struct gc_parse {
    struct gres_conf *gc;
    int line;
    char *err;
    size_t errlen;
};

__attribute__((format(printf, 2, 3))) static int gc_fail(struct gc_parse *p, const char *fmt,
                                                         ...)
{
    int n = snprintf(p->err, p->errlen, "%s:%d: ", p->gc->file, p->line);
    if (n >= 0 && (size_t)n < p->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return TS_ECONF;
}

void gres_record_clear(struct gres_record *r)
{
    free(r->nodes);
    for (size_t i = 0; i < r->nfiles; i++)
        free(r->files[i]);
    free(r->files);
    free(r->cores);
    free(r->links);
    memset(r, 0, sizeof(*r));
}

void gres_conf_destroy(struct gres_conf *gc)
{
    if (!gc)
        return;
    for (size_t i = 0; i < gc->nrecords; i++)
        gres_record_clear(&gc->records[i]);
    free(gc->records);
    free(gc->file);
    free(gc);
}

/* File=/dev/nvidia[0-3] or a comma list: absolute paths, at most GRES_UNITS_MAX. */
static int set_files(struct gc_parse *p, struct gres_record *r, const char *v)
{
    struct hostpattern *pat = NULL;
    if (hostpattern_parse(v, &pat) != TS_OK)
        return gc_fail(p, "invalid File '%s'", v);
    uint64_t n = hostpattern_size(pat);
    hostpattern_destroy(pat);
    if (n == 0 || n > GRES_UNITS_MAX)
        return gc_fail(p, "File '%s' names %s than %d files", v, n ? "more" : "fewer",
                       n ? GRES_UNITS_MAX : 1);
    struct hostlist *hl = NULL;
    if (hostlist_expand(v, &hl) != TS_OK)
        return gc_fail(p, "invalid File '%s'", v);
    size_t count = hostlist_count(hl);
    int rc = (r->files = calloc(count, sizeof(*r->files))) ? TS_OK : TS_ENOMEM;
    for (size_t i = 0; !rc && i < count; i++) {
        const char *f = hostlist_nth(hl, i);
        if (f[0] != '/' || strlen(f) > GRES_FILE_MAX)
            rc = gc_fail(p, "File '%s' is not an absolute path of at most %d characters", f,
                         GRES_FILE_MAX);
        else if (!(r->files[r->nfiles++] = strdup(f)))
            rc = TS_ENOMEM;
    }
    hostlist_destroy(hl);
    return rc;
}

static const struct {
    const char *name;
    unsigned bit;
} flag_names[] = {
    {"CountOnly", GRES_FLAG_COUNT_ONLY}, {"nvidia_gpu_env", 0x2}, {"amd_gpu_env", 0x4},
    {"intel_gpu_env", 0x8},              {"opencl_env", 0x10},    {"no_gpu_env", 0x20},
    {"one_sharing", 0x40},               {"all_sharing", 0x40},
};

static int set_flags(struct gc_parse *p, struct gres_record *r, const char *v)
{
    for (const char *s = v; *s;) {
        size_t len = strcspn(s, ",");
        size_t i = 0, n = sizeof(flag_names) / sizeof(flag_names[0]);
        while (i < n && (strlen(flag_names[i].name) != len ||
                         strncasecmp(flag_names[i].name, s, len)))
            i++;
        if (i == n)
            return gc_fail(p, "unknown flag '%.*s' in Flags", (int)len, s);
        r->flags |= flag_names[i].bit;
        s += len;
        if (*s == ',')
            s++;
    }
    return TS_OK;
}

static int set_autodetect(struct gc_parse *p, struct gres_record *r, const char *v)
{
    if (!strcasecmp(v, "off") || !strcasecmp(v, "none"))
        r->autodetect = GRES_AUTODETECT_OFF;
    else if (!strcasecmp(v, "nvidia") || !strcasecmp(v, "nvml"))
        r->autodetect = GRES_AUTODETECT_NVIDIA;
    else
        return gc_fail(p, "unknown autodetect flag '%s' (nvidia, nvml or off)", v);
    return TS_OK;
}

/* Cores=0-15: an id set; Links=-1,0,2: numbers. Kept as given. */
static int set_cores(struct gc_parse *p, struct gres_record *r, const char *v)
{
    struct idset *set = NULL;
    int rc = idset_parse(v, &set);
    idset_destroy(set);
    if (rc)
        return gc_fail(p, "invalid Cores '%s'", v);
    return (r->cores = strdup(v)) ? TS_OK : TS_ENOMEM;
}

static int set_links(struct gc_parse *p, struct gres_record *r, const char *v)
{
    for (const char *s = v; *s; s++)
        if (!isdigit((unsigned char)*s) && *s != ',' && *s != '-')
            return gc_fail(p, "invalid Links '%s'", v);
    return (r->links = strdup(v)) ? TS_OK : TS_ENOMEM;
}

static int set_key(struct gc_parse *p, struct gres_record *r, const char *key, const char *v,
                   const char **count)
{
    if (!strcasecmp(key, "NodeName")) {
        struct hostpattern *pat = NULL;
        int rc = hostpattern_parse(v, &pat);
        hostpattern_destroy(pat);
        if (rc)
            return gc_fail(p, "invalid NodeName '%s'", v);
        free(r->nodes);
        return (r->nodes = strdup(v)) ? TS_OK : TS_ENOMEM;
    }
    if (!strcasecmp(key, "Name")) {
        if (!gres_valid_name(v))
            return gc_fail(p, "invalid name '%s'", v);
        snprintf(r->name, sizeof(r->name), "%.*s", GRES_NAME_MAX - 1, v); /* checked */
    } else if (!strcasecmp(key, "Type")) {
        if (!gres_valid_type(v))
            return gc_fail(p, "invalid Type '%s'", v);
        snprintf(r->type, sizeof(r->type), "%.*s", GRES_TYPE_MAX - 1, v); /* checked */
    } else if (!strcasecmp(key, "File") || !strcasecmp(key, "Files")) {
        return r->files ? gc_fail(p, "File is given twice") : set_files(p, r, v);
    } else if (!strcasecmp(key, "Count")) {
        *count = v;
    } else if (!strcasecmp(key, "Cores")) {
        return r->cores ? gc_fail(p, "Cores is given twice") : set_cores(p, r, v);
    } else if (!strcasecmp(key, "Links")) {
        return r->links ? gc_fail(p, "Links is given twice") : set_links(p, r, v);
    } else if (!strcasecmp(key, "Flags")) {
        return set_flags(p, r, v);
    } else if (!strcasecmp(key, "AutoDetect")) {
        return set_autodetect(p, r, v);
    } else {
        return gc_fail(p, "Parsing error at unrecognized key: %s", key);
    }
    return TS_OK;
}

/* Count= against File=: Slurm's "count does not match File value" when both are given. */
static int finish_record(struct gc_parse *p, struct gres_record *r, const char *count)
{
    if (!r->name[0]) {
        if (r->autodetect == GRES_AUTODETECT_UNSET)
            return gc_fail(p, "a line needs Name= (or AutoDetect=)");
        if (r->type[0] || r->files || r->cores || r->links || r->flags || count)
            return gc_fail(p, "Type, File, Cores, Links, Count and Flags need Name=");
        return TS_OK;
    }
    r->count = r->nfiles ? r->nfiles : 1;
    if (count) {
        uint64_t n;
        if (gres_count_parse(count, &n))
            return gc_fail(p, "Invalid GRES record for %s, invalid count %s", r->name, count);
        if (r->nfiles && n != r->nfiles)
            return gc_fail(p, "Invalid GRES record for %s, count does not match File value",
                           r->name);
        r->count = n;
    }
    return TS_OK;
}

/* One logical line (modified in place) into a new record, unless it is empty. */
static int parse_line(struct gc_parse *p, char *line)
{
    struct gres_conf *gc = p->gc;
    struct gres_record r = {.line = p->line};
    const char *count = NULL;
    int rc = TS_OK, any = 0;
    for (char *save = NULL, *tok = strtok_r(line, " \t\r", &save); tok && !rc;
         tok = strtok_r(NULL, " \t\r", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq || eq == tok || !eq[1]) {
            rc = gc_fail(p, "'%s' is not Key=Value", tok);
            break;
        }
        *eq = '\0';
        any = 1;
        rc = set_key(p, &r, tok, eq + 1, &count);
    }
    if (!rc && any)
        rc = finish_record(p, &r, count);
    if (!rc && any && gc->nrecords == GRES_CONF_MAX_RECORDS)
        rc = gc_fail(p, "more than %d lines", GRES_CONF_MAX_RECORDS);
    if (!rc && any) {
        struct gres_record *grown =
            realloc(gc->records, (gc->nrecords + 1) * sizeof(*gc->records));
        if (!grown)
            rc = TS_ENOMEM;
        else
            (gc->records = grown)[gc->nrecords++] = r;
    }
    if (rc || !any)
        gres_record_clear(&r);
    return rc;
}

/* Walk text line by line, joining continued lines and dropping comments. */
static int parse_text(struct gc_parse *p, const char *text)
{
    char line[GRES_CONF_MAX_LINE + 1];
    size_t used = 0;
    int next_line = 1;
    for (const char *s = text; *s || used;) {
        size_t len = strcspn(s, "\n");
        const char *hash = memchr(s, '#', len);
        size_t keep = hash ? (size_t)(hash - s) : len;
        int continued = !hash && keep > 0 && s[keep - 1] == '\\';
        if (continued)
            keep--;
        if (used == 0)
            p->line = next_line;
        next_line++;
        if (used + keep + 1 > sizeof(line))
            return gc_fail(p, "line longer than %d characters", GRES_CONF_MAX_LINE);
        memcpy(line + used, s, keep);
        used += keep;
        line[used++] = ' ';
        s += len + (s[len] == '\n');
        if (continued && *s)
            continue;
        line[used - 1] = '\0';
        used = 0;
        int rc = parse_line(p, line);
        if (rc)
            return rc;
    }
    return TS_OK;
}

int gres_conf_parse(const char *text, const char *file, struct gres_conf **out, char *err,
                    size_t errlen)
{
    *out = NULL;
    struct gres_conf *gc = calloc(1, sizeof(*gc));
    if (!gc || !(gc->file = strdup(file ? file : "gres.conf"))) {
        free(gc);
        return TS_ENOMEM;
    }
    struct gc_parse p = {.gc = gc, .err = err, .errlen = errlen};
    if (strnlen(text, GRES_CONF_MAX_SIZE + 1) > GRES_CONF_MAX_SIZE) {
        gres_conf_destroy(gc);
        snprintf(err, errlen, "%s: larger than %u bytes", file, GRES_CONF_MAX_SIZE);
        return TS_ECONF;
    }
    int rc = parse_text(&p, text);
    if (rc) {
        gres_conf_destroy(gc);
        return rc;
    }
    *out = gc;
    return TS_OK;
}

/* The whole of fd, at most max bytes: *text malloc'd and NUL-terminated. TS_OK, TS_ENOMEM,
 * TS_ETOOBIG (larger, or not text) or TS_ESYS (errno says why). */
static int read_bounded(int fd, size_t max, char **text)
{
    char *buf = malloc(max + 2);
    if (!buf)
        return TS_ENOMEM;
    size_t used = 0;
    ssize_t got = 1;
    while (got > 0 && used <= max) {
        got = read(fd, buf + used, max + 1 - used);
        if (got < 0 && errno == EINTR)
            got = 1;
        else if (got > 0)
            used += (size_t)got;
    }
    int rc = got < 0 ? TS_ESYS : used > max || memchr(buf, '\0', used) ? TS_ETOOBIG : TS_OK;
    if (rc) {
        free(buf);
        return rc;
    }
    buf[used] = '\0';
    *text = buf;
    return TS_OK;
}

int gres_conf_load(const char *path, struct gres_conf **out, char *err, size_t errlen)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0 && errno == ENOENT)
        return gres_conf_parse("", path, out, err, errlen);
    char *text = NULL;
    int rc = fd < 0 ? TS_ESYS : read_bounded(fd, GRES_CONF_MAX_SIZE, &text);
    int saved = errno;
    if (fd >= 0)
        close(fd);
    if (rc == TS_ESYS)
        snprintf(err, errlen, "%s: cannot be read: %s", path, strerror(saved));
    else if (rc == TS_ETOOBIG)
        snprintf(err, errlen, "%s: larger than %u bytes or not text", path, GRES_CONF_MAX_SIZE);
    if (!rc)
        rc = gres_conf_parse(text, path, out, err, errlen);
    free(text);
    return rc == TS_ESYS || rc == TS_ETOOBIG ? TS_ECONF : rc;
}
