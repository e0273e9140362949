/* The standard streams of steps and batch scripts, as Slurm 22.05 treats them on the
 * reference cluster: srun -o FILE with every task's output (labelled under -l, het steps
 * and per-node files too), relative names below srun's working folder, per-task and per-node patterns with
 * every escape and zero padding, "none", task numbers for -o and -i, a task whose file
 * cannot be opened reported to srun's user, sbatch's patterns (%J %s %t %n for a batch
 * script) and "none", a batch job whose output folder is missing failing with its reason,
 * and MPICH's mpirun (Hydra starting its proxies with srun --input none) in a two-node
 * batch job.
 */
#include "cluster.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "cmdcheck.h"

#define NODES 2

static struct harness_cluster cluster;
static char outdir[512];

static int group_setup(void **state)
{
    (void)state;
    return harness_cluster_up(&cluster, NODES, "CPUs=4 RealMemory=2000",
                              "KillWait=1\nMinJobAge=600\n", outdir, sizeof(outdir));
}

static int group_teardown(void **state)
{
    (void)state;
    harness_cluster_fini(&cluster);
    return 0;
}

/* salloc OPTS... sh -c SCRIPT, quietly. */
#define SALLOC_SH(script, ...) RUN("salloc", "-Q", __VA_ARGS__, "sh", "-c", script)

/* outdir/name's text (malloc'd, "" when there is no such file). */
static char *file_text(const char *name)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", outdir, name);
    char *text = harness_read_file(path);
    return text ? text : strdup("");
}

static int file_exists(const char *name)
{
    char path[1024];
    struct stat st;
    snprintf(path, sizeof(path), "%s/%s", outdir, name);
    return stat(path, &st) == 0;
}

/* ------------------------------------------------------------------------------------ */

/* srun -o FILE: every task's output in the file, below srun's working folder (not the
 * node daemon's), labelled under -l; -o out.%t one file per task. */
static void test_every_task_in_the_file(void **state)
{
    (void)state;
    char script[2048];
    snprintf(script, sizeof(script),
             "mkdir -p %s/rel && cd %s/rel && "
             "srun -o out sh -c 'echo t$SLURM_PROCID; echo e$SLURM_PROCID >&2' && "
             "srun -l -o outl sh -c 'echo t$SLURM_PROCID' && "
             "srun -n3 -o out.%%t sh -c 'echo t$SLURM_PROCID' && "
             "srun -l -o lab.%%N sh -c 'echo t$SLURM_PROCID; printf e$SLURM_PROCID >&2' && "
             "echo ran",
             outdir, outdir);
    struct result r = SALLOC_SH(script, "-N2", "-n4");
    expect_ok(&r);
    expect_line(r.out, "ran");
    assert_int_equal(count_lines(r.out), 1); /* nothing else reached srun's output */
    result_free(&r);
    char *text = file_text("rel/out");
    for (int t = 0; t < 4; t++) {
        expect_line(text, "t%d", t);
        expect_line(text, "e%d", t); /* errors go with the output without -e */
    }
    assert_int_equal(count_lines(text), 8);
    free(text);
    text = file_text("rel/outl");
    for (int t = 0; t < 4; t++)
        expect_line(text, "%d: t%d", t, t);
    assert_int_equal(count_lines(text), 4);
    free(text);
    /* per-node files are labelled too, errors with the output, the last line ended */
    char *n1 = file_text("rel/lab.n1"), *n2 = file_text("rel/lab.n2");
    size_t len = strlen(n1) + strlen(n2) + 1;
    text = malloc(len);
    assert_non_null(text);
    snprintf(text, len, "%s%s", n1, n2);
    for (int t = 0; t < 4; t++) {
        expect_line(text, "%d: t%d", t, t);
        expect_line(text, "%d: e%d", t, t);
    }
    assert_int_equal(count_lines(text), 8);
    free(n1);
    free(n2);
    free(text);
    for (int t = 0; t < 3; t++) {
        char name[64];
        snprintf(name, sizeof(name), "rel/out.%d", t);
        text = file_text(name);
        expect_line(text, "t%d", t);
        assert_int_equal(count_lines(text), 1);
        free(text);
    }
}

/* Slurm's "srun -l -o out echo one : echo two": both components' lines, labelled. */
static void test_het_step_labelled_in_file(void **state)
{
    (void)state;
    char script[1024];
    snprintf(script, sizeof(script), "cd %s && srun -l -o outh echo one : echo two", outdir);
    struct result r = SALLOC_SH(script, "-n1", ":", "-n1");
    expect_ok(&r);
    result_free(&r);
    char *text = file_text("outh");
    expect_line(text, "0: one");
    expect_line(text, "1: two");
    assert_int_equal(count_lines(text), 2);
    free(text);
}

/* Every escape of a step's pattern, zero padding included; a backslash turns them off. */
static void test_step_patterns(void **state)
{
    (void)state;
    char script[1024];
    snprintf(script, sizeof(script),
             "cd %s && srun -N2 -n2 -o 'pat-%%2n-%%3t-%%j-%%J-%%s-%%4j-%%N-%%u-%%x-%%%%' "
             "-J pj true && srun -n1 -o 'lit\\%%t' echo lit && "
             "echo job=$SLURM_JOB_ID",
             outdir);
    struct result r = SALLOC_SH(script, "-N2", "-n2");
    expect_ok(&r);
    unsigned job = 0;
    const char *p = strstr(r.out, "job=");
    assert_non_null(p);
    job = (unsigned)strtoul(p + 4, NULL, 10);
    result_free(&r);
    for (int t = 0; t < 2; t++) {
        char name[256];
        snprintf(name, sizeof(name), "pat-%02d-%03d-%u-%u.0-0-%04u-n%d-root-pj-%%", t, t, job,
                 job, job, t + 1);
        if (!file_exists(name))
            fail_msg("no file %s/%s", outdir, name);
    }
    char *text = file_text("lit%t");
    expect_line(text, "lit");
    free(text);
}

/* "none" is /dev/null; a task number picks the one task whose output is shown, or the
 * one that reads srun's input. */
static void test_none_and_task_numbers(void **state)
{
    (void)state;
    char script[2048];
    snprintf(script, sizeof(script),
             "cd %s && srun -o none echo hidden && srun -e none sh -c 'echo shown; "
             "echo gone >&2' && echo hi | srun -l -i 1 cat && "
             "srun -l -o 1 sh -c 'echo t$SLURM_PROCID' && "
             "(sleep 1; echo late) | srun -l -i none sh -c 'cat; echo end'",
             outdir);
    struct result r = SALLOC_SH(script, "-n3");
    expect_ok(&r);
    assert_null(strstr(r.out, "hidden"));
    assert_null(strstr(r.err, "gone"));
    expect_line(r.out, "shown");
    expect_line(r.out, "1: hi");
    assert_null(strstr(r.out, "0: hi"));
    assert_null(strstr(r.out, "2: hi"));
    expect_line(r.out, "1: t1");
    assert_null(strstr(r.out, "0: t0"));
    for (int t = 0; t < 3; t++)
        expect_line(r.out, "%d: end", t);
    assert_null(strstr(r.out, "late"));
    assert_false(file_exists("none"));
    result_free(&r);
}

/* A task whose file cannot be opened does not start, and srun's user hears why. */
static void test_unopenable_file_reported(void **state)
{
    (void)state;
    char script[2048];
    snprintf(script, sizeof(script),
             "srun -n2 -o %s/nodir/out.%%t true; echo rc=$?; "
             "srun -n1 -i %s/nodir/in cat; echo rc=$?; "
             "srun -n1 -o %s/nodir/out true; echo rc=$?",
             outdir, outdir, outdir);
    struct result r = SALLOC_SH(script, "-n2");
    expect_ok(&r);
    expect_line(r.out, "rc=1");
    assert_int_equal(count_lines(r.out), 3);
    assert_null(strstr(r.out, "rc=0"));
    char line[1024];
    for (int t = 0; t < 2; t++) {
        snprintf(line, sizeof(line),
                 "srun: error: task %d launch failed: Could not open stdout file "
                 "%s/nodir/out.%d: No such file or directory",
                 t, outdir, t);
        expect_line(r.err, "%s", line);
    }
    snprintf(line, sizeof(line),
             "srun: error: task 0 launch failed: Could not open stdin file %s/nodir/in: "
             "No such file or directory",
             outdir);
    expect_line(r.err, "%s", line);
    snprintf(line, sizeof(line),
             "srun: error: Could not open stdout file %s/nodir/out: No such file or directory",
             outdir);
    expect_line(r.err, "%s", line);
    result_free(&r);
}

/* The attack: nobody names a file in a folder only root may write. The step daemon, which
 * runs as root, opens the files in a child that has become the user: the open is refused,
 * the file is not made, and srun says why. */
static void test_files_opened_as_the_user(void **state)
{
    (void)state;
    char dir[700], script[2048];
    snprintf(dir, sizeof(dir), "%s/rootonly", outdir);
    assert_int_equal(mkdir(dir, 0755), 0);
    chmod(outdir, 0755); /* nobody may look in, not write */
    snprintf(script, sizeof(script),
             "srun -D /tmp -n2 -o %s/x.%%t true; echo rc=$?; "
             "srun -D /tmp -n1 -l -o %s/y.%%N true; echo rc=$?",
             dir, dir);
    const char *args[] = {"-Q", "-n2", "sh", "-c", script, NULL};
    struct result r = {0};
    r.rc = harness_cmd_as(&cluster, 65534, "salloc", args, &r.out, &r.err);
    expect_ok(&r);
    expect_line(r.out, "rc=1");
    assert_null(strstr(r.out, "rc=0"));
    char line[1024];
    snprintf(line, sizeof(line),
             "srun: error: task 1 launch failed: Could not open stdout file %s/x.1: "
             "Permission denied",
             dir);
    expect_line(r.err, "%s", line);
    result_free(&r);
    assert_false(file_exists("rootonly/x.0"));
    assert_false(file_exists("rootonly/x.1"));
    assert_false(file_exists("rootonly/y.n1"));
}

/* ------------------------------------------------------------------------------------ */
/* batch scripts */

/* sbatch's patterns: %J is the job id, %s "batch", %t and %n 0, widths pad numbers and
 * mean nothing for names, an unknown escape stays; "none" is /dev/null. */
static void test_batch_patterns_and_none(void **state)
{
    (void)state;
    unsigned id = SUBMIT("-w", "n1", "-J", "wrap", "-o",
                         "o-%J-%s-%t-%n-%5j-%N-%3t-%A-%a-%x-%%-%q-%3N-%03j.out",
                         "--wrap", "echo hi");
    unsigned none = SUBMIT("-o", "none", "-e", "none", "--wrap", "echo hi; echo err >&2");
    wait_for(id, "%T", "COMPLETED\n", 20);
    wait_for(none, "%T", "COMPLETED\n", 20);
    char name[256];
    snprintf(name, sizeof(name), "o-%u-batch-0-0-%05u-n1-000-%u-4294967294-wrap-%%-%%q-n1-%03u.out",
             id, id, id, id);
    char *text = file_text(name);
    expect_line(text, "hi");
    free(text);
    assert_false(file_exists("none"));
    assert_string_equal(show_field(none, "StdOut"), "/dev/null");
    assert_string_equal(show_field(none, "StdErr"), "/dev/null");
}

/* ------------------------------------------------------------------------------------ */
/* MPICH */

/* The way course material starts MPI: mpirun in "sbatch -N2 -n4". Hydra finds the
 * allocation in SLURM_* and starts one proxy per node with "srun --input none"; each
 * rank says who it is. Bounded by the job's time limit and the wait. */
static void test_mpich_mpirun_in_batch_job(void **state)
{
    (void)state;
    if (access("/usr/bin/mpirun.mpich", X_OK) != 0)
        skip();
    unsigned id = SUBMIT("-N2", "-n4", "-t", "1", "-o", "mpi-%j.out", "--wrap",
                         "/usr/bin/mpirun.mpich sh -c 'echo rank $PMI_RANK of $PMI_SIZE'");
    wait_for(id, "%T", "COMPLETED\n", 60);
    char name[64];
    snprintf(name, sizeof(name), "mpi-%u.out", id);
    char *text = file_text(name);
    for (int rank = 0; rank < 4; rank++)
        expect_line(text, "rank %d of 4", rank);
    assert_int_equal(count_lines(text), 4);
    free(text);
    /* the proxies ran as a step of the job, one task per node */
    char steps[32];
    snprintf(steps, sizeof(steps), "%u", id);
    struct result r = RUN("sacct", "-n", "-P", "-j", steps, "-o", "JobID,JobName,NTasks");
    expect_ok(&r);
    char line[128];
    snprintf(line, sizeof(line), "%u.0|hydra_pmi_proxy|2", id);
    expect_line(r.out, "%s", line);
    result_free(&r);
}

/* A batch job whose -o names a missing folder: FAILED, and why is its reason (Slurm
 * says JobLaunchFailure alone, and only in the node's log what failed). */
static void test_missing_output_folder_is_the_reason(void **state)
{
    (void)state;
    char path[700];
    snprintf(path, sizeof(path), "%s/nodir/x-%%j.out", outdir);
    unsigned id = SUBMIT("-o", path, "--wrap", "true");
    wait_for(id, "%T", "FAILED\n", 20);
    char want[1024];
    snprintf(want, sizeof(want),
             "JobLaunchFailure: Could not open stdout file %s/nodir/x-%u.out: No such file or "
             "directory\n",
             outdir, id);
    char *reason = query(id, "%r");
    assert_string_equal(reason, want);
    free(reason);
    char sid[16];
    snprintf(sid, sizeof(sid), "%u", id);
    struct result r = RUN("scontrol", "show", "job", sid);
    expect_ok(&r);
    assert_non_null(strstr(r.out, "Reason=JobLaunchFailure:_Could_not_open_stdout_file_"));
    result_free(&r);
    /* and the node's log says it */
    snprintf(want, sizeof(want), "job %u: the batch script could not start: Could not open", id);
    int logged = 0;
    for (int i = 0; i < NODES && !logged; i++) {
        char *log = harness_read_file(cluster.nodes[i].log);
        logged = log && strstr(log, want);
        free(log);
    }
    assert_true(logged);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_task_in_the_file),
        cmocka_unit_test(test_het_step_labelled_in_file),
        cmocka_unit_test(test_step_patterns),
        cmocka_unit_test(test_none_and_task_numbers),
        cmocka_unit_test(test_unopenable_file_reported),
        cmocka_unit_test(test_files_opened_as_the_user),
        cmocka_unit_test(test_batch_patterns_and_none),
        cmocka_unit_test(test_mpich_mpirun_in_batch_job),
        cmocka_unit_test(test_missing_output_folder_is_the_reason),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
