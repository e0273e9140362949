/* Batch scripts: reading and checking them, and their #SBATCH directives.
 *
 * Directives are read as Slurm reads them: lines starting with "#SBATCH" up to the first
 * line that is neither blank nor a comment (an indented "#SBATCH" is a comment). The rest
 * of a directive line is split into words as a shell would split it (quotes, backslash
 * escapes, a '#' starting a word begins a comment) - Slurm cuts "-J a#b" at the '#' and
 * knows no backslashes, which makes "-J a\ b" an error there.
 */
#include "common/jobopt/jobopt_impl.h"

#include "common/util/errors.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- reading ------------------------------------------------------------------------- */

/* Up to JOBOPT_MAX_SCRIPT + 1 bytes, enough to tell that a script is too large. */
static int read_fd(int fd, const char *name, char **out, size_t *len, struct jobopt_err *e)
{
    size_t cap = 0, used = 0;
    char *buf = NULL;

    for (;;) {
        ssize_t r;

        if (used == cap) {
            size_t ncap = cap ? cap * 2 : 65536;
            char *nbuf;

            if (ncap > JOBOPT_MAX_SCRIPT + 1)
                ncap = JOBOPT_MAX_SCRIPT + 1;
            if (ncap == cap)
                break;
            nbuf = realloc(buf, ncap + 1);
            if (!nbuf) {
                free(buf);
                return jobopt_fail(e, TS_ENOMEM, "Out of memory");
            }
            buf = nbuf;
            cap = ncap;
        }
        r = read(fd, buf + used, cap - used);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            free(buf);
            return jobopt_fail(e, TS_ESCRIPT, "Unable to read %s: %s", name, strerror(errno));
        }
        if (r == 0)
            break;
        used += (size_t)r;
    }
    if (!buf && !(buf = malloc(1)))
        return jobopt_fail(e, TS_ENOMEM, "Out of memory");
    buf[used] = '\0';
    *out = buf;
    *len = used;
    return TS_OK;
}

static int read_script(const char *path, char **text, size_t *len, struct jobopt_err *e)
{
    int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : STDIN_FILENO;
    int rc;

    if (fd < 0)
        return jobopt_fail(e, TS_ESCRIPT, "Unable to open file %s", path);
    rc = read_fd(fd, path ? path : "standard input", text, len, e);
    if (path)
        close(fd);
    return rc;
}

/* Slurm's checks and texts, so that a script Slurm refuses is refused the same way. */
static int check_script(const char *text, size_t len, struct jobopt_err *e)
{
    if (len == 0)
        return jobopt_fail(e, TS_ESCRIPT, "Batch script is empty!");
    if (len > JOBOPT_MAX_SCRIPT)
        return jobopt_fail(e, TS_ESCRIPT, "Batch script is larger than the limit of %u bytes",
                           JOBOPT_MAX_SCRIPT);
    if (memchr(text, '\0', len))
        return jobopt_fail(e, TS_ESCRIPT, "The Slurm controller does not allow scripts that "
                                          "contain a NULL character '\\0'.");
    if (strncmp(text, "#!", 2) != 0)
        return jobopt_fail(e, TS_ESCRIPT, /* Slurm's three lines */
                           "This does not look like a batch script.  The first\n"
                           "line must start with #! followed by the path to an interpreter.\n"
                           "For instance: #!/bin/sh");
    if (strstr(text, "\r\n"))
        return jobopt_fail(e, TS_ESCRIPT, "Batch script contains DOS line breaks (\\r\\n) "
                                          "instead of expected UNIX line breaks (\\n).");
    return TS_OK;
}

int jobopt_script_load(const struct jobopt_input *in, const char *path, const char *wrap,
                       char **text, struct jobopt_err *e)
{
    size_t len = 0;
    int rc;

    *text = NULL;
    if (wrap) {
        /* Slurm's text, byte for byte: scripts may look for it. */
        if (asprintf(text, "#!/bin/sh\n# This script was created by sbatch --wrap.\n\n%s\n",
                     wrap) < 0) {
            *text = NULL;
            return jobopt_fail(e, TS_ENOMEM, "Out of memory");
        }
        len = strlen(*text);
    } else if (in->script_text) {
        if (!(*text = strdup(in->script_text)))
            return jobopt_fail(e, TS_ENOMEM, "Out of memory");
        len = strlen(*text);
    } else if ((rc = read_script(path, text, &len, e)) != TS_OK) {
        return rc;
    }
    rc = check_script(*text, len, e);
    if (rc != TS_OK) {
        free(*text);
        *text = NULL;
    }
    return rc;
}

/* ---- directive words ----------------------------------------------------------------- */

struct words {
    char **v;
    int n, cap;
};

static int is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r';
}

/* One word at *pp into out (at least end - *pp + 1 bytes), shell quoting removed. */
static int read_word(const char **pp, const char *end, char *out, struct jobopt_err *e)
{
    const char *p = *pp;
    size_t o = 0;

    while (p < end && !is_blank(*p)) {
        if (*p == '\'') {
            const char *q = memchr(p + 1, '\'', (size_t)(end - p - 1));

            if (!q)
                return jobopt_fail(e, TS_ESCRIPT, "unmatched ' in #SBATCH directive");
            memcpy(out + o, p + 1, (size_t)(q - p - 1));
            o += (size_t)(q - p - 1);
            p = q + 1;
        } else if (*p == '"') {
            /* Inside double quotes a backslash escapes only what the shell lets it. */
            for (p++; p < end && *p != '"'; out[o++] = *p++)
                if (*p == '\\' && p + 1 < end && strchr("\"\\$`", p[1]))
                    p++;
            if (p >= end)
                return jobopt_fail(e, TS_ESCRIPT, "unmatched \" in #SBATCH directive");
            p++;
        } else if (*p == '\\') {
            if (p + 1 >= end)
                return jobopt_fail(e, TS_ESCRIPT, "backslash at the end of a #SBATCH line");
            out[o++] = p[1];
            p += 2;
        } else {
            out[o++] = *p++;
        }
    }
    out[o] = '\0';
    *pp = p;
    return TS_OK;
}

static int words_add(struct words *w, char *word)
{
    if (w->n == w->cap) {
        int ncap = w->cap ? w->cap * 2 : 8;
        char **nv = realloc(w->v, (size_t)ncap * sizeof(*nv));

        if (!nv)
            return TS_ENOMEM;
        w->v = nv;
        w->cap = ncap;
    }
    w->v[w->n++] = word;
    return TS_OK;
}

/* The words of s..end; the strings belong to pool (options keep pointers into them). */
static int tokenize(const char *s, const char *end, struct words *w, struct jobopt_pool *pool,
                    struct jobopt_err *e)
{
    for (;;) {
        char *word;
        int rc;

        while (s < end && is_blank(*s))
            s++;
        if (s >= end || *s == '#')
            return TS_OK;
        if (!(word = malloc((size_t)(end - s) + 1)))
            return jobopt_fail(e, TS_ENOMEM, "Out of memory");
        rc = read_word(&s, end, word, e);
        if (rc != TS_OK) {
            free(word);
            return rc;
        }
        if (!(word = jobopt_pool_keep(pool, word)) || words_add(w, word) != TS_OK)
            return jobopt_fail(e, TS_ENOMEM, "Out of memory");
    }
}

/* ---- directives ---------------------------------------------------------------------- */

static int is_separator(const char *word)
{
    return strcmp(word, "hetjob") == 0 || strcmp(word, "packjob") == 0; /* packjob: legacy */
}

/* The options of one directive line into the last segment, or a new segment. Errors are
 * recorded and scanning goes on, so that the message can tell the component count. */
static int directive_line(enum jobopt_cmd cmd, const char *s, const char *end, unsigned line,
                          struct jobopt_segs *segs, struct jobopt_pool *pool,
                          struct jobopt_err *e)
{
    struct words w = {0};
    int rc = tokenize(s, end, &w, pool, e);

    if (rc == TS_OK && w.n > 0 && is_separator(w.v[0])) {
        /* Slurm ignores the rest of this line; options there were surely meant for the
         * new component, so say so instead. */
        if (w.n > 1)
            rc = jobopt_fail(e, TS_EOPTION, "#SBATCH %s takes no options (found %s)", w.v[0],
                             w.v[1]);
        else if (!jobopt_segs_add(segs))
            rc = jobopt_fail(e, TS_ENOMEM, "Out of memory");
        free(w.v);
        return rc;
    }
    for (int i = 0; rc != TS_ENOMEM && i < w.n;) {
        if (jobopt_is_option(w.v[i]))
            rc = jobopt_scan_option(cmd, w.v, w.n, &i, 0, line, &segs->v[segs->n - 1], e,
                                    NULL);
        else
            rc = jobopt_fail(e, TS_EOPTION, "Invalid directive found in batch script: %s",
                             w.v[i++]);
    }
    free(w.v);
    return rc;
}

int jobopt_script_directives(enum jobopt_cmd cmd, const char *text, struct jobopt_segs *segs,
                             struct jobopt_pool *pool, struct jobopt_err *e)
{
    unsigned line = 0;

    if (!jobopt_segs_add(segs))
        return jobopt_fail(e, TS_ENOMEM, "Out of memory");
    for (const char *p = text; *p;) {
        const char *eol = strchrnul(p, '\n'), *q = p;

        line++;
        if (strncmp(p, "#SBATCH", 7) == 0) {
            e->cur_comp = (long)segs->n - 1;
            snprintf(e->cur_where, sizeof(e->cur_where), "batch script line %u", line);
            if (directive_line(cmd, p + 7, eol, line, segs, pool, e) == TS_ENOMEM)
                return TS_ENOMEM;
        } else {
            while (q < eol && is_blank(*q))
                q++;
            if (q < eol && *q != '#')
                break; /* the first command: directives after it are comments */
        }
        p = *eol ? eol + 1 : eol;
    }
    e->cur_where[0] = '\0';
    return e->code;
}
