/* scontrol: administration commands. Keywords are dispatched through a table; without a
 * keyword on the command line, commands are read from standard input, one per line. */
#include "cmds/cmdutil.h"

#include "cmds/scontrol_resize.h"
#include "cmds/scontrol_update.h"
#include "common/conf/conf.h"
#include "common/format/fairsharefmt.h"
#include "common/format/jobfmt.h"
#include "common/format/nodefmt.h"
#include "common/format/stepfmt.h"
#include "common/jobopt/jobopt.h"
#include "common/text/hostlist.h"
#include "common/text/timefmt.h"
#include "common/util/errors.h"
#include "common/util/version.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define PROG "scontrol"

struct scontrol {
    struct ctl ctl;
    const char *conf_path;
    int conf_loaded;
    int oneliner; /* -o: one record per line */
    int details;  /* -d, -dd: per-node lines of show job */
};

typedef int (*command_fn)(struct scontrol *s, int argc, char **argv);

/* ------------------------------------------------------------------------------------ */

static int need_conf(struct scontrol *s)
{
    if (s->conf_loaded)
        return 0;
    if (ctl_load_conf(&s->ctl, PROG, s->conf_path))
        return 1;
    s->conf_loaded = 1;
    return 0;
}

/* The answer of a call (err, resp from ctl_call_pages), or NULL after Slurm's line for
 * its failure ("<what> error: ..."). */
static Tessera__Response *answer(struct scontrol *s, int err, Tessera__Response *resp,
                                 const char *what)
{
    if (err == TS_ECONNECT) {
        fprintf(stderr, "%s error: Unable to contact slurm controller (connect failure)\n", what);
        return NULL;
    }
    if (err) {
        const char *detail = ctl_error_text(&s->ctl);
        fprintf(stderr, "%s error: %s\n", what, detail[0] ? detail : ts_strerror(err));
        return NULL;
    }
    if (resp->error) {
        fprintf(stderr, "%s error: %s\n", what, resp->error->text);
        tessera__response__free_unpacked(resp, NULL);
        return NULL;
    }
    return resp;
}

/* Send req (all pages of a query); on a failure print Slurm's wording and return NULL. */
static Tessera__Response *call(struct scontrol *s, Tessera__Request *req, const char *what)
{
    Tessera__Response *resp = NULL;
    int err = ctl_call_pages(&s->ctl, req, &resp);
    return answer(s, err, resp, what);
}

/* call() for a query that may name one thing: the controller's refusal missing_code is
 * Slurm's "<kind> NAME not found" line, on stdout. One request either way. */
static Tessera__Response *call_named(struct scontrol *s, Tessera__Request *req,
                                     const char *what, const char *kind, const char *name,
                                     int missing_code)
{
    Tessera__Response *resp = NULL;
    int err = ctl_call_pages(&s->ctl, req, &resp);
    if (!err && resp->error && (int)resp->error->code == missing_code) {
        printf("%s %s not found\n", kind, name);
        tessera__response__free_unpacked(resp, NULL);
        return NULL;
    }
    return answer(s, err, resp, what);
}

static void print_ping_line(const struct scontrol *s, int up)
{
    printf("Slurmctld(primary) at %s is %s\n", s->ctl.conf->ctld_host, up ? "UP" : "DOWN");
}

/* ------------------------------------------------------------------------------------ */

static int cmd_version(struct scontrol *s, int argc, char **argv)
{
    puts(TESSERA_VERSION_LINE);
    return 0;
}

static int cmd_ping(struct scontrol *s, int argc, char **argv)
{
    if (need_conf(s))
        return 1;
    Tessera__PingRequest ping = TESSERA__PING_REQUEST__INIT;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_PING;
    req.ping = &ping;
    Tessera__Response *resp = NULL;
    int err = ctl_call(&s->ctl, &req, &resp);
    int up = err == TS_OK && !resp->error && resp->msg_case == TESSERA__RESPONSE__MSG_PING;
    if (resp)
        tessera__response__free_unpacked(resp, NULL);
    print_ping_line(s, up);
    if (!up) {
        printf("*****************************************\n"
               "** RESTORE SLURMCTLD DAEMON TO SERVICE **\n"
               "*****************************************\n");
        return 1;
    }
    return 0;
}

static int show_config(struct scontrol *s)
{
    if (need_conf(s))
        return 1;
    Tessera__ShowConfigRequest show = TESSERA__SHOW_CONFIG_REQUEST__INIT;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_SHOW_CONFIG;
    req.show_config = &show;
    Tessera__Response *resp = call(s, &req, "slurm_load_ctl_conf");
    if (!resp)
        return 1;
    if (resp->msg_case != TESSERA__RESPONSE__MSG_SHOW_CONFIG) {
        cmd_error(PROG, "unexpected response from the controller");
        tessera__response__free_unpacked(resp, NULL);
        return 1;
    }
    char when[64];
    timefmt_format_timestamp((time_t)resp->show_config->as_of, when, sizeof(when));
    printf("Configuration data as of %s\n", when);
    for (size_t i = 0; i < resp->show_config->n_entries; i++) {
        const Tessera__ConfigEntry *e = resp->show_config->entries[i];
        printf("%-23s = %s\n", e->key, e->value);
    }
    printf("\n");
    print_ping_line(s, 1);
    tessera__response__free_unpacked(resp, NULL);
    return 0;
}

/* "scontrol show hostnames [LIST]": one name per line; LIST defaults to
 * $SLURM_JOB_NODELIST as in Slurm. */
static int show_hostnames(const char *expr)
{
    if (!expr)
        expr = getenv("SLURM_JOB_NODELIST");
    if (!expr) {
        cmd_error(PROG, "host list is empty");
        return 1;
    }
    struct hostlist *hl = NULL;
    int err = hostlist_expand(expr, &hl);
    if (err) {
        cmd_error(PROG, "Invalid hostlist: %s", expr);
        return 1;
    }
    for (size_t i = 0; i < hostlist_count(hl); i++)
        printf("%s\n", hostlist_nth(hl, i));
    hostlist_destroy(hl);
    return 0;
}

/* "scontrol show hostlist LIST": the ranged form, in the order given. */
static int show_hostlist(const char *expr)
{
    if (!expr) {
        cmd_error(PROG, "host list is empty");
        return 1;
    }
    struct hostlist *hl = NULL;
    if (hostlist_expand(expr, &hl) != TS_OK) {
        cmd_error(PROG, "Invalid hostlist: %s", expr);
        return 1;
    }
    char *ranged = hostlist_compress(hl);
    hostlist_destroy(hl);
    if (!ranged) {
        cmd_error(PROG, "%s", ts_strerror(TS_ENOMEM));
        return 1;
    }
    printf("%s\n", ranged);
    free(ranged);
    return 0;
}

/* ------------------------------------------------------------------------------------ */
/* jobs and partitions */

/* The jobs an id names (every job when id is NULL); NULL once the error is printed. */
static Tessera__Response *query_jobs(struct scontrol *s, const char *id, int all_states)
{
    Tessera__JobQueryRequest q = TESSERA__JOB_QUERY_REQUEST__INIT;
    char *ids[1] = {(char *)id};
    if (id) {
        q.job_ids = ids;
        q.n_job_ids = 1;
    }
    q.all_states = all_states;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_JOB_QUERY;
    req.job_query = &q;
    return call(s, &req, "slurm_load_jobs");
}

/* Slurm's scontrol reads the number itself: letters in it are its own error. */
static int job_id_text_bad(const char *id)
{
    if (!isdigit((unsigned char)id[0]))
        return 1;
    for (const char *p = id; *p; p++)
        if (isalpha((unsigned char)*p))
            return 1;
    return 0;
}

static int show_jobs(struct scontrol *s, const char *id)
{
    if (id && job_id_text_bad(id)) {
        fprintf(stderr, "scontrol_print_job error: %s\n", ts_strerror(TS_EINVALID_JOB_ID));
        return 1;
    }
    if (need_conf(s))
        return 1;
    Tessera__Response *resp = query_jobs(s, id, 1);
    if (!resp)
        return 1;
    const Tessera__JobQueryResponse *jq = resp->job_query;
    if (jq->n_jobs == 0 && !id)
        printf("No jobs in the system\n");
    struct jobfmt_ctx *ctx = jobfmt_ctx_create((time_t)jq->now);
    if (ctx)
        jobfmt_ctx_set_details(ctx, s->details);
    for (size_t i = 0; ctx && i < jq->n_jobs; i++) {
        char *text = jobfmt_show_job(jq->jobs[i], ctx, s->oneliner);
        if (text)
            fputs(text, stdout);
        free(text);
    }
    jobfmt_ctx_destroy(ctx);
    tessera__response__free_unpacked(resp, NULL);
    return 0;
}

/* "scontrol write batch_script JOB [FILE]": the job's script (a het job's leader's), for
 * its owner or an administrator only, into FILE (default slurm-<JOB>.sh here; "-" is
 * standard output). The file is opened as whoever runs the command, only once the script
 * came back, and never through a symbolic link. */
static int write_script_file(const char *path, const char *script)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0666);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        fprintf(stderr, "failed to open file `%s`: %s\n", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return 1;
    }
    int bad = fputs(script, f) == EOF;
    bad |= fclose(f) != 0;
    if (bad) {
        fprintf(stderr, "failed to write file `%s`: %s\n", path, strerror(errno));
        return 1;
    }
    return 0;
}

static Tessera__Response *fetch_script(struct scontrol *s, const char *id)
{
    Tessera__JobScriptRequest js = TESSERA__JOB_SCRIPT_REQUEST__INIT;
    js.job_id = (char *)id;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_JOB_SCRIPT;
    req.job_script = &js;
    Tessera__Response *resp = NULL;
    int err = ctl_call(&s->ctl, &req, &resp);
    const char *why = NULL;
    if (err == TS_ECONNECT)
        why = "Unable to contact slurm controller (connect failure)";
    else if (err)
        why = ctl_error_text(&s->ctl)[0] ? ctl_error_text(&s->ctl) : ts_strerror(err);
    else if (resp->error)
        why = resp->error->text;
    else if (resp->msg_case != TESSERA__RESPONSE__MSG_JOB_SCRIPT)
        why = "unexpected response from the controller";
    if (why) {
        fprintf(stderr, "job script retrieval failed: %s\n", why);
        if (resp)
            tessera__response__free_unpacked(resp, NULL);
        return NULL;
    }
    return resp;
}

static int write_batch_script(struct scontrol *s, const char *id, const char *file)
{
    if (need_conf(s))
        return 1;
    Tessera__Response *resp = fetch_script(s, id);
    if (!resp)
        return 1;
    const char *script = resp->job_script->script;
    int rc;
    if (file && !strcmp(file, "-")) {
        rc = fputs(script, stdout) == EOF;
    } else {
        /* named after the job's number as typed: "93+1" writes slurm-93.sh */
        char path[64];
        if (!file) {
            snprintf(path, sizeof(path), "slurm-%lu.sh", strtoul(id, NULL, 10));
            file = path;
        }
        rc = write_script_file(file, script);
        if (!rc)
            printf("batch script for job %lu written to %s\n", strtoul(id, NULL, 10), file);
    }
    tessera__response__free_unpacked(resp, NULL);
    return rc;
}

static int cmd_write(struct scontrol *s, int argc, char **argv)
{
    /* Slurm takes any abbreviation of the keyword down to "batch" */
    size_t len = strlen(argv[1]);
    if (len < 5 || strncasecmp(argv[1], "batch_script", len) != 0) {
        fprintf(stderr, "invalid write argument:%s\n", argv[1]);
        return 1;
    }
    if (argc < 3) {
        fprintf(stderr, "too few arguments for keyword:write\n");
        return 1;
    }
    return write_batch_script(s, argv[2], argc > 3 ? argv[3] : NULL);
}

/* "scontrol show step [J.S | J]": running steps, and ended ones still remembered. */
static int show_steps(struct scontrol *s, const char *id)
{
    if (need_conf(s))
        return 1;
    Tessera__StepQueryRequest q = TESSERA__STEP_QUERY_REQUEST__INIT;
    char *ids[1] = {(char *)id};
    if (id) {
        q.job_ids = ids;
        q.n_job_ids = 1;
    }
    q.all_states = id != NULL;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_STEP_QUERY;
    req.step_query = &q;
    Tessera__Response *resp = call(s, &req, "slurm_get_job_steps");
    if (!resp)
        return 1;
    Tessera__StepQueryResponse *sq = resp->step_query;
    int rc = 0;
    if (sq->n_steps == 0) {
        if (id) {
            fprintf(stderr, "Job step %s not found\n", id);
            rc = 1;
        } else {
            printf("No job steps in the system\n");
        }
    }
    stepfmt_sort(sq->steps, sq->n_steps);
    struct jobfmt_ctx *ctx = jobfmt_ctx_create((time_t)sq->now);
    for (size_t i = 0; ctx && i < sq->n_steps; i++) {
        char *text = stepfmt_show(sq->steps[i], ctx, s->oneliner);
        if (text)
            fputs(text, stdout);
        free(text);
    }
    jobfmt_ctx_destroy(ctx);
    tessera__response__free_unpacked(resp, NULL);
    return rc;
}

static int show_partitions(struct scontrol *s, const char *name)
{
    if (need_conf(s))
        return 1;
    Tessera__PartitionQueryRequest q = TESSERA__PARTITION_QUERY_REQUEST__INIT;
    char *names[1] = {(char *)name};
    if (name) {
        q.names = names;
        q.n_names = 1;
    }
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_PARTITION_QUERY;
    req.partition_query = &q;
    Tessera__Response *resp = call_named(s, &req, "slurm_load_partitions", "Partition", name,
                                         TS_EINVALID_PARTITION);
    if (!resp)
        return 1;
    const Tessera__PartitionQueryResponse *pq = resp->partition_query;
    if (pq->n_partitions == 0)
        printf("No partitions in the system\n");
    for (size_t i = 0; i < pq->n_partitions; i++) {
        char *text = jobfmt_show_partition(pq->partitions[i], s->oneliner);
        if (text)
            fputs(text, stdout);
        free(text);
    }
    tessera__response__free_unpacked(resp, NULL);
    return 0;
}

/* "1,2 3" -> every id, in order. */
static size_t split_ids(int argc, char **argv, char **out, size_t max)
{
    size_t n = 0;
    for (int i = 1; i < argc; i++) {
        char *save = NULL;
        for (char *t = strtok_r(argv[i], ",", &save); t && n < max; t = strtok_r(NULL, ",", &save))
            out[n++] = t;
    }
    return n;
}

/* hold, uhold, release, requeue, suspend, resume: "<error> for job <id>" per failure. */
static int job_action(struct scontrol *s, int argc, char **argv, Tessera__JobAction kind)
{
    if (need_conf(s))
        return 1;
    char *ids[256];
    Tessera__JobActionRequest a = TESSERA__JOB_ACTION_REQUEST__INIT;
    a.action = kind;
    a.job_ids = ids;
    a.n_job_ids = split_ids(argc, argv, ids, 256);
    if (a.n_job_ids == 0) {
        fprintf(stderr, "too few arguments for keyword:%s\n", argv[0]);
        return 1;
    }
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_JOB_ACTION;
    req.job_action = &a;
    Tessera__Response *resp = call(s, &req, "slurm_job_action");
    if (!resp)
        return 1;
    int rc = 0;
    for (size_t i = 0; i < resp->job_action->n_results; i++) {
        const Tessera__JobActionResult *r = resp->job_action->results[i];
        if (r->code != TS_OK) {
            fprintf(stderr, "%s for job %s\n", r->text, r->job_id);
            rc = 1;
        }
    }
    tessera__response__free_unpacked(resp, NULL);
    return rc;
}

static int update_nodes(struct scontrol *s, int argc, char **argv);

/* After a change of node count: the job as it is now, for the shell's variables. */
static int resize_scripts(struct scontrol *s, const char *id)
{
    if (!getenv("SLURM_JOBID"))
        return 0; /* no job shell here to bring up to date */
    Tessera__Response *resp = query_jobs(s, id, 0);
    if (!resp)
        return 1;
    const Tessera__JobRecord *job = resp->job_query->n_jobs ? resp->job_query->jobs[0] : NULL;
    int allocated = job && (job->state == TESSERA__JOB_STATE__JOB_RUNNING ||
                            job->state == TESSERA__JOB_STATE__JOB_SUSPENDED);
    int rc = allocated ? scontrol_resize_write(job) : 0; /* a pending job has no nodes yet */
    tessera__response__free_unpacked(resp, NULL);
    return rc;
}

static int cmd_update(struct scontrol *s, int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strncasecmp(argv[i], "NodeName=", 9))
            return update_nodes(s, argc, argv);
    Tessera__JobUpdateRequest u;
    char msg[512];
    int rc = 1;
    switch (scontrol_update_parse(argc - 1, argv + 1, time(NULL), &u, msg, sizeof(msg))) {
    case UPDATE_NO_ENTITY:
        fprintf(stderr, "No valid entity in update command\n"
                        "Input line must include \"JobId\"\n");
        break;
    case UPDATE_NO_CHANGES:
        fprintf(stderr, "No changes specified\n");
        break;
    case UPDATE_UNSUPPORTED:
        fprintf(stderr, "Update of this parameter is not supported: %s\nRequest aborted\n", msg);
        break;
    case UPDATE_BAD_VALUE:
        cmd_error(PROG, "%s", msg);
        break;
    case UPDATE_OK: {
        if (need_conf(s))
            break;
        Tessera__Request req = TESSERA__REQUEST__INIT;
        req.msg_case = TESSERA__REQUEST__MSG_JOB_UPDATE;
        req.job_update = &u;
        Tessera__Response *resp = NULL;
        int err = ctl_call(&s->ctl, &req, &resp);
        if (err == TS_ECONNECT)
            fprintf(stderr, "slurm_update error: Unable to contact slurm controller "
                            "(connect failure)\n");
        else if (err)
            fprintf(stderr, "slurm_update error: %s\n", ts_strerror(err));
        else if (resp->error && resp->error->code == TS_ETIME_DECREMENT)
            cmd_error(PROG, "%s", resp->error->text); /* Slurm's scontrol says it itself */
        else if (resp->error)
            fprintf(stderr, "%s for job %s\n", resp->error->text, u.job_id);
        else
            rc = u.changes->has_min_nodes ? resize_scripts(s, u.job_id) : 0;
        if (resp)
            tessera__response__free_unpacked(resp, NULL);
        break;
    }
    }
    scontrol_update_free(&u);
    return rc;
}

#define ACTION(fn, kind)                                                                    \
    static int fn(struct scontrol *s, int argc, char **argv)                                \
    {                                                                                       \
        return job_action(s, argc, argv, TESSERA__JOB_ACTION__##kind);                      \
    }
ACTION(cmd_hold, JOB_ACTION_HOLD)
ACTION(cmd_uhold, JOB_ACTION_UHOLD)
ACTION(cmd_release, JOB_ACTION_RELEASE)
ACTION(cmd_requeue, JOB_ACTION_REQUEUE)
ACTION(cmd_suspend, JOB_ACTION_SUSPEND)
ACTION(cmd_resume, JOB_ACTION_RESUME)
#undef ACTION


static int show_nodes(struct scontrol *s, const char *names)
{
    if (need_conf(s))
        return 1;
    Tessera__NodeQueryRequest q = TESSERA__NODE_QUERY_REQUEST__INIT;
    char *list[1] = {(char *)names};
    if (names) {
        q.names = list;
        q.n_names = 1;
    }
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_NODE_QUERY;
    req.node_query = &q;
    Tessera__Response *resp = call_named(s, &req, "slurm_load_node", "Node", names,
                                         TS_EINVALID_NODE_NAME);
    if (!resp)
        return 1;
    const Tessera__NodeQueryResponse *nq = resp->node_query;
    if (nq->n_nodes == 0)
        printf("No nodes in the system\n");
    for (size_t i = 0; i < nq->n_nodes; i++) {
        char *text = nodefmt_show_node_port(nq->nodes[i], (time_t)nq->now, s->oneliner,
                                            s->ctl.conf->noded_port);
        if (text)
            fputs(text, stdout);
        free(text);
    }
    tessera__response__free_unpacked(resp, NULL);
    return 0;
}

/* "scontrol show fairshare": the resource-group tree with shares and usage. */
static int show_fairshare(struct scontrol *s)
{
    if (need_conf(s))
        return 1;
    Tessera__FairshareQueryRequest q = TESSERA__FAIRSHARE_QUERY_REQUEST__INIT;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_FAIRSHARE_QUERY;
    req.fairshare_query = &q;
    Tessera__Response *resp = call(s, &req, "slurm_load_shares");
    if (!resp)
        return 1;
    if (resp->msg_case != TESSERA__RESPONSE__MSG_FAIRSHARE_QUERY) {
        cmd_error(PROG, "unexpected response from the controller");
        tessera__response__free_unpacked(resp, NULL);
        return 1;
    }
    char *text = fairsharefmt_table(resp->fairshare_query);
    if (text)
        fputs(text, stdout);
    free(text);
    tessera__response__free_unpacked(resp, NULL);
    return text ? 0 : 1;
}

/* "scontrol show sched": sdiag's main-scheduler section, and cycles by trigger. */
static int show_sched(struct scontrol *s)
{
    if (need_conf(s))
        return 1;
    Tessera__SchedStatsRequest st = TESSERA__SCHED_STATS_REQUEST__INIT;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_SCHED_STATS;
    req.sched_stats = &st;
    Tessera__Response *resp = call(s, &req, "slurm_get_statistics");
    if (!resp)
        return 1;
    const Tessera__SchedStatsResponse *r = resp->sched_stats;
    char when[64];
    timefmt_format_timestamp((time_t)r->last_cycle_time, when, sizeof(when));
    printf("Scheduler: %s\n", r->scheduler);
    printf("Main schedule statistics (microseconds):\n");
    printf("\tLast cycle:   %llu\n", (unsigned long long)r->last_cycle_usecs);
    printf("\tMax cycle:    %llu\n", (unsigned long long)r->max_cycle_usecs);
    printf("\tTotal cycles: %llu\n", (unsigned long long)r->cycles);
    printf("\tLast cycle at: %s\n", r->last_cycle_time ? when : "Unknown");
    printf("\tJobs started: %llu\n", (unsigned long long)r->jobs_started);
    printf("\tLast queue length: %llu\n", (unsigned long long)r->last_queue_length);
    printf("Backfilling stats\n");
    printf("\tTotal backfilled jobs (since last stats cycle start): %llu\n",
           (unsigned long long)r->bf_jobs_started);
    printf("\tTotal cycles: %llu\n", (unsigned long long)r->bf_cycles);
    timefmt_format_timestamp((time_t)r->bf_last_cycle_time, when, sizeof(when));
    printf("\tLast cycle when: %s\n", r->bf_last_cycle_time ? when : "N/A");
    printf("\tLast cycle: %llu\n", (unsigned long long)r->bf_last_cycle_usecs);
    printf("\tMax cycle:  %llu\n", (unsigned long long)r->bf_max_cycle_usecs);
    printf("\tLast cycle without yields: %llu\n", (unsigned long long)r->bf_last_work_usecs);
    printf("\tLast cycle yields: %llu\n", (unsigned long long)r->bf_last_yields);
    printf("\tTotal yields: %llu\n", (unsigned long long)r->bf_yields);
    printf("\tLast queue length: %llu\n", (unsigned long long)r->bf_last_queue_length);
    printf("\tLast reservations: %llu\n", (unsigned long long)r->bf_last_reserved);
    printf("Cycles by trigger:\n");
    for (size_t i = 0; i < r->n_triggers; i++)
        printf("\t%-6s %llu\n", r->triggers[i]->name, (unsigned long long)r->triggers[i]->cycles);
    tessera__response__free_unpacked(resp, NULL);
    return 0;
}

/* reconfigure and schedule: a request and its success or failure. */
static int simple_request(struct scontrol *s, Tessera__Request *req, const char *what)
{
    if (need_conf(s))
        return 1;
    Tessera__Response *resp = call(s, req, what);
    if (!resp)
        return 1;
    tessera__response__free_unpacked(resp, NULL);
    return 0;
}

static int cmd_reconfigure(struct scontrol *s, int argc, char **argv)
{
    Tessera__ReconfigureRequest r = TESSERA__RECONFIGURE_REQUEST__INIT;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_RECONFIGURE;
    req.reconfigure = &r;
    return simple_request(s, &req, "slurm_reconfigure");
}

static int cmd_schedule(struct scontrol *s, int argc, char **argv)
{
    Tessera__ScheduleRequest r = TESSERA__SCHEDULE_REQUEST__INIT;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_SCHEDULE;
    req.schedule = &r;
    return simple_request(s, &req, "slurm_schedule");
}

/* scontrol update nodename=LIST state=drain|resume|down|undrain|idle reason=TEXT */
static int update_nodes(struct scontrol *s, int argc, char **argv)
{
    Tessera__NodeUpdateRequest u = TESSERA__NODE_UPDATE_REQUEST__INIT;
    u.names = NULL;
    for (int i = 1; i < argc; i++) {
        char *eq = strchr(argv[i], '=');
        if (!eq) {
            fprintf(stderr, "Update of this parameter is not supported: %s\nRequest aborted\n",
                    argv[i]);
            return 1;
        }
        const char *v = eq + 1;
        if (!strncasecmp(argv[i], "NodeName=", 9))
            u.names = (char *)v;
        else if (!strncasecmp(argv[i], "State=", 6))
            u.state = (char *)v;
        else if (!strncasecmp(argv[i], "Reason=", 7))
            u.reason = (char *)v;
        else {
            fprintf(stderr, "Update of this parameter is not supported: %s\nRequest aborted\n",
                    argv[i]);
            return 1;
        }
    }
    if (need_conf(s))
        return 1;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_NODE_UPDATE;
    req.node_update = &u;
    return simple_request(s, &req, "slurm_update");
}

static int cmd_show(struct scontrol *s, int argc, char **argv)
{
    const char *entity = argv[1];
    const char *arg = argc > 2 ? argv[2] : NULL;
    /* Slurm's other spelling: "show job=93", "show node=n1" */
    char spelled[64];
    const char *eq = strchr(entity, '=');
    if (eq && !arg && (size_t)(eq - entity) < sizeof(spelled)) {
        snprintf(spelled, sizeof(spelled), "%.*s", (int)(eq - entity), entity);
        entity = spelled;
        arg = eq + 1;
    }
    if (!strcasecmp(entity, "config") || !strcasecmp(entity, "conf")) {
        if (arg) {
            fprintf(stderr, "too many arguments for keyword:show config\n");
            return 1;
        }
        return show_config(s);
    }
    if (!strcasecmp(entity, "job") || !strcasecmp(entity, "jobs"))
        return show_jobs(s, arg);
    if (!strcasecmp(entity, "step") || !strcasecmp(entity, "steps"))
        return show_steps(s, arg);
    if (!strcasecmp(entity, "partition") || !strcasecmp(entity, "partitions"))
        return show_partitions(s, arg);
    if (!strcasecmp(entity, "node") || !strcasecmp(entity, "nodes"))
        return show_nodes(s, arg);
    if (!strcasecmp(entity, "sched") || !strcasecmp(entity, "scheduler"))
        return show_sched(s);
    if (!strcasecmp(entity, "fairshare") || !strcasecmp(entity, "shares"))
        return show_fairshare(s);
    if (!strcasecmp(entity, "hostnames"))
        return show_hostnames(arg);
    if (!strcasecmp(entity, "hostlist") || !strcasecmp(entity, "hostlistsorted")) {
        if (!arg)
            return show_hostlist(NULL);
        if (!strcasecmp(entity, "hostlist"))
            return show_hostlist(arg);
        struct hostlist *hl = NULL;
        if (hostlist_expand(arg, &hl) != TS_OK) {
            cmd_error(PROG, "Invalid hostlist: %s", arg);
            return 1;
        }
        hostlist_uniq(hl);
        char *ranged = hostlist_compress(hl);
        hostlist_destroy(hl);
        if (ranged)
            printf("%s\n", ranged);
        free(ranged);
        return ranged ? 0 : 1;
    }
    fprintf(stderr, "invalid entity:%s for keyword:show \n", entity);
    return 1;
}


/* ------------------------------------------------------------------------------------ */

static const struct {
    const char *keyword;
    int min_args, max_args; /* words after the keyword */
    command_fn fn;
} commands[] = {
    {"hold", 1, 255, cmd_hold},
    {"ping", 0, 0, cmd_ping},
    {"reconfigure", 0, 0, cmd_reconfigure},
    {"release", 1, 255, cmd_release},
    {"requeue", 1, 255, cmd_requeue},
    {"resume", 1, 255, cmd_resume},
    {"schedule", 0, 0, cmd_schedule},
    {"show", 1, 2, cmd_show},
    {"suspend", 1, 255, cmd_suspend},
    {"uhold", 1, 255, cmd_uhold},
    {"update", 1, 255, cmd_update},
    {"version", 0, 0, cmd_version},
    {"write", 1, 3, cmd_write},
};

static int run_command(struct scontrol *s, int argc, char **argv)
{
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
        if (strcasecmp(argv[0], commands[i].keyword))
            continue;
        if (argc - 1 < commands[i].min_args) {
            fprintf(stderr, "too few arguments for keyword:%s\n", commands[i].keyword);
            return 1;
        }
        if (argc - 1 > commands[i].max_args) {
            fprintf(stderr, "too many arguments for keyword:%s\n", commands[i].keyword);
            return 1;
        }
        return commands[i].fn(s, argc, argv);
    }
    fprintf(stderr, "invalid keyword: %s\n", argv[0]);
    return 1;
}

/* Commands from standard input, one per line, until EOF, "quit" or "exit". */
static int interactive(struct scontrol *s)
{
    char line[4096];
    int rc = 0, tty = isatty(0);
    for (;;) {
        if (tty) {
            printf("%s: ", PROG);
            fflush(stdout);
        }
        if (!fgets(line, sizeof(line), stdin))
            break;
        char *words[64];
        int n = 0;
        char *save = NULL;
        for (char *w = strtok_r(line, " \t\r\n", &save); w && n < 64;
             w = strtok_r(NULL, " \t\r\n", &save))
            words[n++] = w;
        if (n == 0)
            continue;
        if (!strcasecmp(words[0], "quit") || !strcasecmp(words[0], "exit"))
            break;
        rc = run_command(s, n, words);
        fflush(stdout);
    }
    return rc;
}

static void usage(FILE *out)
{
    fprintf(out,
            "scontrol [<OPTION>] [<COMMAND>]\n"
            "    Valid <OPTION> values are:\n"
            "     --config=FILE  use FILE instead of $TESSERA_CONF or "
            "/etc/tessera/tessera.conf\n"
            "     -d, --details  show job: the CPUs and memory held on each node\n"
            "     -h, --help     print this description of use\n"
            "     -V, --version  print the version\n"
            "\n"
            "    Valid <COMMAND> values are:\n"
            "     ping                      print status of the controller\n"
            "     show config               print the controller's configuration\n"
            "     show job [ID]             jobs (\"93\" every component, \"93+1\" one)\n"
            "     show node [NAMES]         nodes\n"
            "     show partition [NAME]     partitions\n"
            "     show sched                scheduler statistics\n"
            "     show fairshare            the fair-share tree: shares and usage\n"
            "     update jobid=ID k=v...    change a job\n"
            "     update nodename=N state=drain|resume|down|undrain reason=TEXT\n"
            "     hold|uhold|release|requeue|suspend|resume JOBLIST\n"
            "     reconfigure               re-read the configuration\n"
            "     schedule                  run a scheduling cycle now\n"
            "     show hostnames [LIST]     print one host name per line\n"
            "     show hostlist LIST        print the ranged form of LIST\n"
            "     show hostlistsorted LIST  sorted, duplicates removed\n"
            "     write batch_script ID [FILE]  the job's script into FILE (default\n"
            "                               slurm-ID.sh; \"-\": standard output)\n"
            "     quit, exit                leave interactive mode\n"
            "\n"
            "    Without <COMMAND>, commands are read from standard input.\n");
}

int main(int argc, char **argv)
{
    struct scontrol s = {0};
    static const struct option longopts[] = {
        {"config", required_argument, NULL, 'f'},
        {"details", no_argument, NULL, 'd'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {"usage", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    argv[0] = (char *)PROG; /* getopt's messages name the command as Slurm's do */
    int ch;
    /* "+": stop at the first keyword, so its arguments are never taken for options */
    while ((ch = getopt_long(argc, argv, "+dhV", longopts, NULL)) != -1) {
        switch (ch) {
        case 'd': s.details++; break;
        case 'f': s.conf_path = optarg; break;
        case 'h': usage(stdout); return 0;
        case 'V': puts(TESSERA_VERSION_LINE); return 0;
        default: fprintf(stderr, "Try \"scontrol --help\" for more information\n"); return 1;
        }
    }
    int rc = optind < argc ? run_command(&s, argc - optind, argv + optind) : interactive(&s);
    ctl_close(&s.ctl);
    return rc;
}
