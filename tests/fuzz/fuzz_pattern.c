/* libFuzzer target: a job's file name patterns, expanded as scontrol shows them and as
 * the controller names the files for the node (common/job/stdpath.c). The input is
 * "stdout\0stderr\0stdin\0work_dir\0name\0host\0user": NUL-separated fields, missing
 * ones unset. An expansion must either give a file name shorter than STDPATH_MAX or
 * refuse (TS_EPATH_TOOLONG) with nothing built; scontrol's view, which has no limit,
 * always gives a text. The stdout field is also taken as a step's pattern (srun's fill,
 * then the node's). Built with AddressSanitizer, any write past a buffer aborts. */
#include "common/format/jobfmt.h"
#include "common/util/errors.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NFIELDS 7

static void check_stream(const Tessera__JobRecord *job, enum stdpath_stream which,
                         const struct stdpath_fill *fill, struct jobfmt_ctx *ctx)
{
    char *path = (char *)"unset";
    int err = stdpath_expand(job, which, fill, &path);
    if (err == TS_OK) {
        if (!path || strlen(path) >= STDPATH_MAX)
            abort();
        free(path);
    } else if (err != TS_EPATH_TOOLONG || path) {
        abort();
    }
    char *shown = jobfmt_std_path(job, which, ctx);
    if (!shown)
        abort();
    free(shown);
}

/* The two fills of a step's pattern (srun's, then the node's): each gives a name shorter
 * than the limit or refuses with nothing built; whether the nodes open it is decided
 * without reading past the pattern. */
static void check_step_pattern(const char *pattern, const char *name, const char *host)
{
    struct stdpath_values job = STDPATH_VALUES_INIT;
    job.job_id = 4294967295u;
    job.step_id = 4294967294u;
    job.user = "fuzz";
    job.job_name = name;
    job.quote_inserted = 1;
    (void)stdpath_pattern_per_node(pattern);
    char *partial = (char *)"unset";
    int err = stdpath_pattern_expand(pattern, NULL, &job, STDPATH_MAX - 1, &partial);
    if (err != TS_OK) {
        if (err != TS_EPATH_TOOLONG || partial)
            abort();
        return;
    }
    if (!partial || strlen(partial) >= STDPATH_MAX)
        abort();
    struct stdpath_values node = STDPATH_VALUES_INIT;
    node.task_id = 123456;
    node.node_id = 77;
    node.host = host;
    node.final = 1;
    char *path = (char *)"unset";
    err = stdpath_pattern_expand(partial, "/work", &node, STDPATH_MAX - 1, &path);
    if (err == TS_OK ? !path || strlen(path) >= STDPATH_MAX
                     : err != TS_EPATH_TOOLONG || path)
        abort();
    free(path);
    free(partial);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size + 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    buf[size] = '\0';
    char *field[NFIELDS] = {0};
    char *p = buf;
    for (size_t i = 0; i < NFIELDS && p <= buf + size; i++) {
        field[i] = p;
        p += strlen(p) + 1;
    }

    Tessera__JobDesc d = TESSERA__JOB_DESC__INIT;
    Tessera__JobRecord job = TESSERA__JOB_RECORD__INIT;
    d.std_out = field[0];
    d.std_err = field[1];
    d.std_in = field[2];
    d.work_dir = field[3];
    d.name = field[4];
    d.has_user_id = 1;
    d.user_id = 0; /* root: a name every system has, looked up for scontrol's %u */
    job.desc = &d;
    job.job_id = (uint32_t)size * 2654435761u;
    struct stdpath_fill fill = {.user = field[6] ? field[6] : "fuzz",
                                    .host = field[5] ? field[5] : "n1"};
    struct jobfmt_ctx *ctx = jobfmt_ctx_create(0);
    if (ctx) {
        check_stream(&job, STDPATH_STDOUT, &fill, ctx);
        check_stream(&job, STDPATH_STDERR, &fill, ctx);
        check_stream(&job, STDPATH_STDIN, &fill, ctx);
        check_step_pattern(field[0], field[4] ? field[4] : "", fill.host);
        jobfmt_ctx_destroy(ctx);
    }
    free(buf);
    return 0;
}
