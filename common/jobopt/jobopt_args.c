/* A small getopt_long without global state: the same scan runs over several argv
 * segments and over the words of #SBATCH lines.
 *
 * It behaves as getopt_long does for Slurm's commands: long options take "=value" or the
 * next word, unique prefixes abbreviate long options (an exact name always wins), short
 * options cluster ("-Hn4"), a required argument is the next word even when it starts with
 * '-' ("-J -x" names the job "-x"), and an optional argument must be attached ("--nice=5",
 * "-k0"). Messages are glibc's, so users see what Slurm prints.
 */
#include "common/jobopt/jobopt_impl.h"

#include "common/util/errors.h"

#include <stdio.h>
#include <string.h>

int jobopt_is_option(const char *a)
{
    return a[0] == '-' && a[1] != '\0' && strcmp(a, "--") != 0;
}

static int visible(const struct jobopt_def *d, enum jobopt_cmd cmd)
{
    return (d->cmds & JOBOPT_CMD(cmd)) != 0;
}

/* The word after args[*i] as an option's argument, or NULL; a lone ":" ends the
 * component on the command line, so it cannot be an argument there. */
static const char *next_word(char **args, int n, int *i, int colon_splits)
{
    if (*i + 1 >= n || (colon_splits && strcmp(args[*i + 1], ":") == 0))
        return NULL;
    (*i)++;
    return args[*i];
}

static int record(const struct jobopt_def *def, const char *arg, unsigned line,
                  struct jobopt_seg *seg, struct jobopt_err *e, const struct jobopt_def **stop)
{
    /* Unsupported options are refused here, before any script is read, since nothing
     * else can make them acceptable. */
    if (def->flags & JOBOPT_F_UNSUPPORTED)
        return jobopt_fail(e, TS_EOPTVALUE, "--%s is not supported", def->name);
    /* --help after a bad option is not reached in Slurm either: getopt reports in order. */
    if ((def->flags & JOBOPT_F_STOP) && stop && e->code == TS_OK)
        *stop = def;
    if (jobopt_seg_add(seg, def, arg, line) != TS_OK)
        return jobopt_fail(e, TS_ENOMEM, "Out of memory");
    return TS_OK;
}

static int ambiguous(enum jobopt_cmd cmd, const char *word, const char *name, size_t len,
                     struct jobopt_err *e)
{
    size_t n, used = 0;
    const struct jobopt_def *t = jobopt_table(&n);
    char list[400] = "";

    for (size_t k = 0; k < n; k++) {
        int w;

        if (!visible(&t[k], cmd) || strncmp(t[k].name, name, len) != 0)
            continue;
        w = snprintf(list + used, sizeof(list) - used, " '--%s'", t[k].name);
        if (w < 0 || (size_t)w >= sizeof(list) - used)
            break; /* a long list is cut; the first candidates make the point */
        used += (size_t)w;
    }
    return jobopt_fail(e, TS_EOPTION, "option '%s' is ambiguous; possibilities:%s", word,
                       list);
}

/* An exact name, else the only option the prefix starts. */
static int resolve_long(enum jobopt_cmd cmd, const char *word, const char *name, size_t len,
                        const struct jobopt_def **out, struct jobopt_err *e)
{
    size_t n;
    const struct jobopt_def *t = jobopt_table(&n), *found = NULL;
    int nfound = 0;

    for (size_t k = 0; k < n && len > 0; k++) {
        if (!visible(&t[k], cmd) || strncmp(t[k].name, name, len) != 0)
            continue;
        if (t[k].name[len] == '\0') {
            *out = &t[k];
            return TS_OK;
        }
        found = &t[k];
        nfound++;
    }
    if (nfound == 1) {
        *out = found;
        return TS_OK;
    }
    if (nfound > 1)
        return ambiguous(cmd, word, name, len, e);
    return jobopt_fail(e, TS_EOPTION, "unrecognized option '%s'", word);
}

static int scan_long(enum jobopt_cmd cmd, char **args, int n, int *i, int colon_splits,
                     unsigned line, struct jobopt_seg *seg, struct jobopt_err *e,
                     const struct jobopt_def **stop)
{
    const char *word = args[*i], *name = word + 2;
    const char *eq = strchr(name, '=');
    const struct jobopt_def *def = NULL;
    const char *arg = NULL;
    int rc = resolve_long(cmd, word, name, eq ? (size_t)(eq - name) : strlen(name), &def, e);

    if (rc != TS_OK)
        return rc;
    switch (def->arg) {
    case JOBOPT_ARG_NONE:
        if (eq)
            return jobopt_fail(e, TS_EOPTION, "option '--%s' doesn't allow an argument",
                               def->name);
        break;
    case JOBOPT_ARG_REQUIRED:
        arg = eq ? eq + 1 : next_word(args, n, i, colon_splits);
        if (!arg)
            return jobopt_fail(e, TS_EOPTION, "option '--%s' requires an argument",
                               def->name);
        break;
    case JOBOPT_ARG_OPTIONAL:
        arg = eq ? eq + 1 : NULL;
        break;
    }
    return record(def, arg, line, seg, e, stop);
}

static const struct jobopt_def *find_short(enum jobopt_cmd cmd, char letter)
{
    size_t n;
    const struct jobopt_def *t = jobopt_table(&n);

    for (size_t k = 0; k < n; k++)
        if (t[k].letter == letter && visible(&t[k], cmd))
            return &t[k];
    return NULL;
}

/* A cluster of short options; an option with an argument takes the rest of the word. */
static int scan_short(enum jobopt_cmd cmd, char **args, int n, int *i, int colon_splits,
                      unsigned line, struct jobopt_seg *seg, struct jobopt_err *e,
                      const struct jobopt_def **stop)
{
    const char *word = args[*i];
    int rc = TS_OK;

    for (size_t k = 1; word[k] && !(stop && *stop); k++) {
        const struct jobopt_def *def = find_short(cmd, word[k]);
        const char *arg;
        int r;

        if (!def) {
            r = jobopt_fail(e, TS_EOPTION, "invalid option -- '%c'", word[k]);
        } else if (def->arg == JOBOPT_ARG_NONE) {
            r = record(def, NULL, line, seg, e, stop);
        } else {
            arg = word[k + 1] ? word + k + 1 : NULL;
            if (!arg && def->arg == JOBOPT_ARG_REQUIRED)
                arg = next_word(args, n, i, colon_splits);
            if (!arg && def->arg == JOBOPT_ARG_REQUIRED)
                r = jobopt_fail(e, TS_EOPTION, "option requires an argument -- '%c'",
                                word[k]);
            else
                r = record(def, arg, line, seg, e, stop);
            if (rc == TS_OK)
                rc = r;
            break;
        }
        if (rc == TS_OK)
            rc = r;
    }
    return rc;
}

int jobopt_scan_option(enum jobopt_cmd cmd, char **args, int n, int *i, int colon_splits,
                       unsigned line, struct jobopt_seg *seg, struct jobopt_err *e,
                       const struct jobopt_def **stop)
{
    int rc;

    if (args[*i][1] == '-')
        rc = scan_long(cmd, args, n, i, colon_splits, line, seg, e, stop);
    else
        rc = scan_short(cmd, args, n, i, colon_splits, line, seg, e, stop);
    (*i)++;
    return rc;
}
