/* sbatch: submit a batch job (of one or more components) and print its id. */
#include "cmds/alloc.h"
#include "cmds/cmdutil.h"

#include "common/conf/conf.h"
#include "common/format/jobfmt.h"
#include "common/jobopt/jobopt.h"
#include "common/util/errors.h"
#include "common/util/version.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define PROG "sbatch"

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: sbatch [OPTIONS(0)...] [ : [OPTIONS(N)...]] script(0) [args(0)...]\n"
            "\n"
            "Components of a heterogeneous job are separated by a lone \":\" argument, or by\n"
            "\"#SBATCH hetjob\" lines in the script.\n"
            "\n"
            "  -A, --account=name          charge the job to this account\n"
            "  -b, --begin=time            defer the job until this time\n"
            "      --comment=text          arbitrary comment\n"
            "  -C, --constraint=list       required node features (a&b, a|b)\n"
            "  -c, --cpus-per-task=n       CPUs per task\n"
            "  -d, --dependency=type:id    defer until the condition on other jobs holds\n"
            "      --deadline=time         remove the job if it cannot end by then\n"
            "  -D, --chdir=path            working directory of the script\n"
            "  -e, --error=pattern         standard error of the script\n"
            "      --exclusive             whole nodes\n"
            "      --export=[ALL|NONE|vars]  environment passed to the job\n"
            "      --get-user-env          start from the user's login environment\n"
            "  -H, --hold                  submit held\n"
            "  -i, --input=file            standard input of the script\n"
            "  -J, --job-name=name         name of the job\n"
            "  -L, --licenses=names        licences (first component only)\n"
            "      --mail-type=types       BEGIN, END, FAIL, ...\n"
            "      --mail-user=user        who gets the mail\n"
            "      --mem=size              memory per node (MB without a unit)\n"
            "      --mem-per-cpu=size      memory per CPU (MB without a unit)\n"
            "  -N, --nodes=min[-max]       number of nodes\n"
            "  -n, --ntasks=n              number of tasks\n"
            "      --nice[=value]          lower the priority\n"
            "      --no-requeue            never requeue the job\n"
            "      --ntasks-per-node=n     tasks per node\n"
            "  -o, --output=pattern        standard output of the script\n"
            "      --open-mode=append|truncate\n"
            "  -p, --partition=name        partition\n"
            "      --parsable              print the job id alone\n"
            "      --priority=value        set the priority (administrators)\n"
            "  -q, --qos=name              quality of service\n"
            "      --requeue               allow requeueing\n"
            "      --signal=[B:]sig[@secs] send sig secs (60) before the time limit\n"
            "  -t, --time=limit            time limit\n"
            "      --time-min=limit        smallest acceptable time limit\n"
            "      --test-only             check the job, do not submit it\n"
            "  -W, --wait                  exit once the job has ended, with its exit code\n"
            "  -w, --nodelist=hosts        run on these nodes\n"
            "      --wrap=command          wrap the command in a shell script\n"
            "  -x, --exclude=hosts         do not run on these nodes\n"
            "  -Q, --quiet                 fewer messages\n"
            "  -v, --verbose               more messages\n"
            "  -h, --help                  this text\n"
            "  -V, --version               print the version\n");
}

/* What scontrol and squeue show as the job's command: the script's absolute path and
 * its arguments (nothing for --wrap or a script from standard input, as Slurm). */
static int set_command(const struct jobopt *opt, const char *cwd)
{
    if (!opt->script_path)
        return 0;
    size_t len = strlen(cwd) + strlen(opt->script_path) + 2;
    const Tessera__JobDesc *lead = opt->components[0];
    for (size_t i = 0; i < lead->n_argv; i++)
        len += strlen(lead->argv[i]) + 1;
    char *cmd = malloc(len);
    if (!cmd)
        return -1;
    if (opt->script_path[0] == '/')
        snprintf(cmd, len, "%s", opt->script_path);
    else
        snprintf(cmd, len, "%s/%s", cwd, opt->script_path);
    for (size_t i = 0; i < lead->n_argv; i++) {
        strcat(cmd, " ");
        strcat(cmd, lead->argv[i]);
    }
    for (size_t i = 0; i < opt->ncomponents; i++) {
        free(opt->components[i]->command);
        opt->components[i]->command = i ? strdup(cmd) : cmd;
        if (!opt->components[i]->command)
            return -1;
    }
    return 0;
}

/* A refused submission as Slurm's sbatch words it; --test-only's refusal is Slurm's
 * "allocation failure: ..." line, without the "sbatch: error:" prefix. */
static void failure(const struct jobopt *opt, const char *why)
{
    if (opt->test_only)
        fprintf(stderr, "allocation failure: %s\n", why);
    else
        cmd_error(PROG, "Batch job submission failed: %s", why);
}

/* The controller holds as many jobs as it may (MaxJobCount): wait and ask again, as Slurm's
 * sbatch does, 1 s, then 2 s, ... 15 times, saying so once. */
#define SUBMIT_RETRIES 15

static int call_retrying(struct ctl *ctl, const Tessera__Request *req, Tessera__Response **resp,
                         int *gave_up)
{
    *gave_up = 0;
    for (unsigned retries = 0;; retries++) {
        int err = ctl_call(ctl, req, resp);
        if (err || !(*resp)->error || (*resp)->error->code != TS_EMAX_JOB_COUNT)
            return err;
        if (retries == SUBMIT_RETRIES) {
            *gave_up = 1;
            return TS_OK;
        }
        if (retries == 0)
            cmd_error(PROG, "%s.", (*resp)->error->text);
        tessera__response__free_unpacked(*resp, NULL);
        *resp = NULL;
        sleep(retries + 1);
    }
}

/* -W: the job's exit code once it has ended, as Slurm's sbatch: the script's exit status,
 * 1 when it was killed by a signal (cancelled, out of time) or the end cannot be learnt. */
static int wait_for_end(struct ctl *ctl, const struct jobopt *opt, uint32_t job_id)
{
    struct alloc a = {.ctl = ctl, .quiet = opt->quiet, .job_id = job_id};
    Tessera__JobState state;
    int32_t status = 0;
    int err = alloc_wait_ended(&a, NULL, &state, &status);
    if (err) {
        cmd_error(PROG, "Unable to wait for job %u: %s", job_id, ts_strerror(err));
        return 1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

static int submit(struct ctl *ctl, const struct jobopt *opt)
{
    Tessera__SubmitRequest sub = TESSERA__SUBMIT_REQUEST__INIT;
    sub.components = opt->components;
    sub.n_components = opt->ncomponents;
    sub.test_only = opt->test_only;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_SUBMIT;
    req.submit = &sub;
    Tessera__Response *resp = NULL;
    int gave_up;
    int err = call_retrying(ctl, &req, &resp, &gave_up);
    if (err) {
        failure(opt, err == TS_ECONNECT ? "Unable to contact slurm controller (connect failure)"
                     : ctl_error_text(ctl)[0] ? ctl_error_text(ctl)
                                              : ts_strerror(err));
        return 1;
    }
    int rc = 0;
    if (resp->error) {
        if (!opt->test_only)
            cmd_refusal_detail(PROG, opt->components, opt->ncomponents, resp->error);
        /* after the retries, what Slurm says: its errno's text */
        failure(opt, gave_up ? ts_strerror(TS_EAGAIN) : resp->error->text);
        rc = 1;
    } else if (resp->msg_case != TESSERA__RESPONSE__MSG_SUBMIT) {
        failure(opt, "unexpected response");
        rc = 1;
    } else if (opt->test_only) {
        /* When and where the scheduler's plan would start the job, on stderr as Slurm. */
        char *line = jobfmt_test_only(resp->submit);
        if (line)
            fprintf(stderr, "%s: %s\n", PROG, line);
        else
            cmd_error(PROG, "%s", ts_strerror(TS_ENOMEM));
        rc = line ? 0 : 1;
        free(line);
    } else if (opt->parsable) {
        printf("%u\n", resp->submit->job_id);
    } else {
        printf("Submitted batch job %u\n", resp->submit->job_id);
    }
    if (!rc && opt->wait_end && !opt->test_only) {
        fflush(stdout);
        rc = wait_for_end(ctl, opt, resp->submit->job_id);
    }
    tessera__response__free_unpacked(resp, NULL);
    return rc;
}

/* The command, once its options are parsed (cmd_job_main frees them). */
static int sbatch_run(struct jobopt *opt, const struct jobopt_input *in)
{
    cmd_fit_nodes_to_tasks(PROG, opt);
    struct ctl ctl;
    int rc = 1;
    if (set_command(opt, in->cwd) || cmd_set_origin(opt, in->cwd)) {
        cmd_error(PROG, "%s", ts_strerror(TS_ENOMEM));
    } else if (ctl_load_conf(&ctl, PROG, NULL) == 0) {
        rc = submit(&ctl, opt);
        ctl_close(&ctl);
    }
    return rc;
}

int main(int argc, char **argv)
{
    static const struct cmd_start start = {PROG, JOBOPT_SBATCH, "Batch job submission failed",
                                           usage, sbatch_run};
    return cmd_job_main(&start, argc, argv);
}
