/* srun's -o, -e and -i: see step_streams.h. */
#include "cmds/step_streams.h"

#include "cmds/cmdutil.h"
#include "common/job/stdpath.h"
#include "common/util/errors.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROG "srun"

enum stream_kind { TO_SRUN, TO_RANK, ON_NODES, SRUN_FILE };

static int is_task_number(const char *spec, int64_t *rank)
{
    if (!*spec || strlen(spec) > 9)
        return 0;
    for (const char *p = spec; *p; p++)
        if (!isdigit((unsigned char)*p))
            return 0;
    *rank = strtol(spec, NULL, 10);
    return 1;
}

static void job_values(const struct step_streams_params *p, struct stdpath_values *v)
{
    *v = (struct stdpath_values)STDPATH_VALUES_INIT;
    v->job_id = p->job_id;
    v->step_id = p->step_id;
    v->user = p->user;
    v->job_name = p->job_name;
}

/* What one spec means; *text: the nodes' pattern (ON_NODES) or srun's file (SRUN_FILE). */
static int classify(const struct step_streams_params *p, const char *spec, int input,
                    int64_t *rank, char **text, enum stream_kind *kind)
{
    *text = NULL;
    *rank = -1;
    if (!spec || !*spec || strcmp(spec, "all") == 0) {
        *kind = TO_SRUN;
        return TS_OK;
    }
    if (is_task_number(spec, rank)) {
        *kind = TO_RANK;
        return TS_OK;
    }
    if (stdpath_pattern_is_none(spec)) {
        *kind = ON_NODES;
        return (*text = strdup("/dev/null")) ? TS_OK : TS_ENOMEM;
    }
    struct stdpath_values v;
    job_values(p, &v);
    /* the nodes fill the rest, below the working folder; input is always theirs */
    if (input || stdpath_pattern_per_node(spec)) {
        v.quote_inserted = 1;
        *kind = ON_NODES;
        return stdpath_pattern_expand(spec, NULL, &v, STDPATH_MAX - 1, text);
    }
    *kind = SRUN_FILE;
    v.final = 1;
    return stdpath_pattern_expand(spec, p->work_dir, &v, STDPATH_MAX - 1, text);
}

static int open_file(const struct step_streams_params *p, const char *path, const char *what)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (p->append ? O_APPEND : O_TRUNC),
                  0644);
    if (fd < 0)
        cmd_error(PROG, "Could not open %s file %s: %s", what, path, strerror(errno));
    return fd;
}

/* One output stream (stdout: which 1, stderr: 2). */
static int resolve_output(const struct step_streams_params *p, const char *spec, int which,
                          struct step_streams *s)
{
    int64_t rank;
    char *text;
    enum stream_kind kind;
    int err = classify(p, spec, 0, &rank, &text, &kind);
    if (err) {
        cmd_error(PROG, "%s: %s", which == 1 ? "--output" : "--error", ts_strerror(err));
        return err;
    }
    char **node = which == 1 ? &s->node_out : &s->node_err;
    int *fd = which == 1 ? &s->out_fd : &s->err_fd;
    int *own = which == 1 ? &s->own_out : &s->own_err;
    *(which == 1 ? &s->out_rank : &s->err_rank) = rank;
    if (kind == ON_NODES) {
        free(*node);
        *node = text;
        return TS_OK;
    }
    if (kind == SRUN_FILE) {
        /* the same file as the output: one descriptor, written in order */
        if (which == 2 && s->own_out && s->out_path && strcmp(s->out_path, text) == 0) {
            *fd = s->out_fd;
        } else if ((*fd = open_file(p, text, which == 1 ? "stdout" : "stderr")) < 0) {
            free(text);
            return TS_ESYS;
        } else {
            *own = 1;
        }
        if (which == 1)
            s->out_path = text;
        else
            free(text);
    }
    return TS_OK;
}

static int resolve_input(const struct step_streams_params *p, struct step_streams *s)
{
    int64_t rank;
    char *text;
    enum stream_kind kind;
    int err = classify(p, p->std_in, 1, &rank, &text, &kind);
    if (err) {
        cmd_error(PROG, "--input: %s", ts_strerror(err));
        return err;
    }
    s->stdin_to_task = kind == TO_SRUN || kind == TO_RANK;
    s->stdin_rank = rank > 0 ? (uint32_t)rank : 0;
    if (text) {
        free(s->node_in);
        s->node_in = text;
    }
    return TS_OK;
}

int step_streams_resolve(const struct step_streams_params *p, struct step_streams *s)
{
    *s = (struct step_streams){.out_fd = 1, .err_fd = 2, .out_rank = -1, .err_rank = -1,
                               .append = p->append};
    s->node_out = strdup("");
    s->node_err = strdup("");
    s->node_in = strdup("");
    if (!s->node_out || !s->node_err || !s->node_in) {
        step_streams_close(s);
        cmd_error(PROG, "%s", ts_strerror(TS_ENOMEM));
        return TS_ENOMEM;
    }
    const char *err_spec = p->std_err && *p->std_err ? p->std_err : p->std_out;
    int err = resolve_output(p, p->std_out, 1, s);
    if (!err)
        err = resolve_output(p, err_spec, 2, s);
    if (!err)
        err = resolve_input(p, s);
    if (err)
        step_streams_close(s);
    return err;
}

void step_streams_close(struct step_streams *s)
{
    if (s->own_err && s->err_fd != s->out_fd)
        close(s->err_fd);
    if (s->own_out)
        close(s->out_fd);
    s->own_out = s->own_err = 0;
    s->out_fd = 1;
    s->err_fd = 2;
    free(s->node_out);
    free(s->node_err);
    free(s->node_in);
    free(s->out_path);
    s->node_out = s->node_err = s->node_in = s->out_path = NULL;
}
