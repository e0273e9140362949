/* srun as scripts written for Slurm use it inside their jobs, with Slurm 22.05's behaviour
 * on the reference cluster as the expectation (docs/steps.md):
 *   - a step inherits the job's --cpus-per-task (SLURM_CPUS_PER_TASK in srun's
 *     environment; SLURM_CPUS_PER_TASK_HET_GROUP_<n> per component of a het job);
 *   - "srun A : B" in a plain allocation runs one step of two parts laid out within it,
 *     one MPI world, with Slurm's refusals when they do not fit;
 *   - a step waits for CPUs other steps hold ("step creation temporarily disabled"),
 *     unless it or they run with --overlap; -O runs more tasks than CPUs;
 *   - srun --jobid adds a step to a running job from outside it: its owner may, another
 *     user may not.
 */
#include "cluster.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cmdcheck.h"

#define NODES 4

static struct harness_cluster cluster;
static char outdir[512];

static int group_setup(void **state)
{
    (void)state;
    return harness_cluster_up(&cluster, NODES, "CPUs=4 RealMemory=2000",
                              "NodedTimeout=5\nKillWait=1\nMinJobAge=600\nMessageTimeout=10\n",
                              outdir, sizeof(outdir));
}

static int group_teardown(void **state)
{
    (void)state;
    harness_cluster_fini(&cluster);
    return 0;
}

/* The batch job's output once its script printed "done"; malloc'd. */
static char *batch_output(const char *const args[])
{
    unsigned id = cmdcheck_submit(&cluster, outdir, args);
    return output_with(id, "done\n", 30);
}
#define BATCH(...) batch_output((const char *const[]){__VA_ARGS__, NULL})

/* ------------------------------------------------------------------------------------ */

/* Issue: "sbatch -c 4 --wrap 'srun env'" ran the step on one CPU without
 * SLURM_CPUS_PER_TASK. Slurm 22.05: SLURM_CPUS_PER_TASK=4, SLURM_CPUS_ON_NODE=4,
 * SLURM_NTASKS=1; -c on srun's command line still wins. */
static void test_step_inherits_cpus_per_task(void **state)
{
    (void)state;
    char *out = BATCH("-c", "4", "--wrap",
                      "srun env | grep -E '^SLURM_(CPUS_PER_TASK|CPUS_ON_NODE|NTASKS)=' | sort; "
                      "echo ==; srun -c 2 env | grep -E '^SLURM_CPUS_(PER_TASK|ON_NODE)=' | "
                      "sort; echo done");
    assert_non_null(strstr(out, "SLURM_CPUS_ON_NODE=4\nSLURM_CPUS_PER_TASK=4\nSLURM_NTASKS=1\n=="));
    assert_non_null(strstr(out, "==\nSLURM_CPUS_ON_NODE=2\nSLURM_CPUS_PER_TASK=2\ndone"));
    free(out);
}

/* The same in "#SBATCH hetjob" components with their own -c: each component's step gets
 * its own CPUs per task (Slurm 22.05: SLURM_CPUS_ON_NODE 2 and 3). */
static void test_het_components_inherit_their_cpus(void **state)
{
    (void)state;
    char path[600];
    snprintf(path, sizeof(path), "%s/het-c.sh", outdir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("#!/bin/sh\n#SBATCH -c 2 -n1\n#SBATCH hetjob\n#SBATCH -c 3 -n1\n"
          "srun sh -c 'echo g0 $SLURM_CPUS_ON_NODE $SLURM_CPUS_PER_TASK'\n"
          "srun --het-group=1 sh -c 'echo g1 $SLURM_CPUS_ON_NODE $SLURM_CPUS_PER_TASK'\n"
          "srun -l --het-group=0,1 sh -c 'echo both $SLURM_CPUS_ON_NODE' | sort\n"
          "echo done\n",
          f);
    fclose(f);
    char *out = BATCH(path);
    expect_line(out, "g0 2 2");
    expect_line(out, "g1 3 3");
    expect_line(out, "0: both 2");
    expect_line(out, "1: both 3");
    free(out);
}

/* Issue 16: "srun -N1 -n4 A : -N1 -n1 B" inside "sbatch -N2" is one step of 5 tasks, the
 * first part's 4 on one node and the second's 1 on the other, without SLURM_HET_SIZE
 * (Slurm 22.05: SLURM_NTASKS=5, SLURM_STEP_TASKS_PER_NODE=4,1, one step id). */
#define RANKS "sh -c 'echo r$SLURM_PROCID/$SLURM_NTASKS n$SLURM_NODEID pmi$PMI_RANK/$PMI_SIZE " \
              "$SLURM_STEP_TASKS_PER_NODE s$SLURM_STEP_ID h$SLURM_HET_SIZE'"
static void test_het_step_in_plain_allocation(void **state)
{
    (void)state;
    char *out = BATCH("-N2", "-n8", "--wrap",
                      "srun -l -N1 -n4 " RANKS " : -N1 -n1 " RANKS " | sort; "
                      /* without -N each part packs onto as few nodes as it fits on */
                      "srun -l -n2 " RANKS " : -n2 " RANKS " | sort; "
                      "srun -N1 -n5 true : -N1 -n1 true 2>&1; echo rc=$?; "
                      "srun -n1 true : -n1 true : -n1 true 2>&1; echo rc=$?; "
                      "srun --het-group=1 true 2>&1; echo rc=$?; "
                      "srun -w $SLURMD_NODENAME -n1 true : -w $SLURMD_NODENAME -n1 true 2>&1; "
                      "echo rc=$?; echo node=$SLURMD_NODENAME; echo done");
    for (int r = 0; r < 4; r++)
        expect_line(out, "%d: r%d/5 n0 pmi%d/5 4,1 s0 h", r, r, r);
    expect_line(out, "4: r4/5 n1 pmi4/5 4,1 s0 h");
    expect_line(out, "0: r0/4 n0 pmi0/4 2(x2) s1 h");
    expect_line(out, "1: r1/4 n0 pmi1/4 2(x2) s1 h");
    expect_line(out, "2: r2/4 n1 pmi2/4 2(x2) s1 h");
    expect_line(out, "3: r3/4 n1 pmi3/4 2(x2) s1 h");
    assert_true(has_prefix_line(out, "srun: error: Unable to create step for job "));
    assert_non_null(strstr(out, ": More processors requested than permitted"));
    expect_line(out, "srun: error: Allocation failure of 1 nodes: job size of 2, already "
                     "allocated 2 nodes to previous components.");
    expect_line(out, "srun: error: Requested het-group offset exceeds highest hetjob index "
                     "(1 > 0)");
    const char *node = strstr(out, "node=");
    assert_non_null(node);
    char name[64];
    snprintf(name, sizeof(name), "%.*s", (int)strcspn(node + 5, "\n"), node + 5);
    expect_line(out, "srun: error: Requested nodelist %s overlaps with excluded %s.", name, name);
    expect_line(out, "srun: error: Job not submitted.");
    expect_line(out, "rc=1");
    assert_null(strstr(out, "rc=0"));
    free(out);

    /* salloc -N2 gives one CPU a node: four tasks do not fit on one of them */
    struct result r = RUN("salloc", "-Q", "-N2", "sh", "-c",
                          "srun -l -n1 " RANKS " : -n1 " RANKS " | sort; "
                          "srun -N1 -n4 true : -N1 -n1 true");
    assert_int_equal(r.rc, 1);
    expect_line(r.out, "0: r0/2 n0 pmi0/2 1(x2) s0 h");
    expect_line(r.out, "1: r1/2 n1 pmi1/2 1(x2) s0 h");
    assert_true(has_prefix_line(r.err, "srun: error: Unable to create step for job "));
    assert_non_null(strstr(r.err, ": More processors requested than permitted"));
    result_free(&r);
}

/* Slurm 22.05 in "sbatch -N1 -n2": while "srun -n2" runs, "srun -n1" waits ("srun: Job N
 * step creation temporarily disabled, retrying (Requested nodes are busy)", then "srun:
 * Step created for job N"); "srun --overlap -n1" runs at once. -O runs 5 tasks on the 2
 * CPUs (SLURM_CPUS_ON_NODE=2); without it 3 tasks are refused. Nothing is timed: the first
 * step runs until the file "go" exists, made once the waiting srun has said it waits. */
static void test_steps_share_cpus_only_with_overlap(void **state)
{
    (void)state;
    char *out = BATCH("-N1", "-n2", "--wrap",
                      "rm -f go second.out; "
                      "srun -n2 sh -c 'while [ ! -e go ]; do sleep 0.1; done' & "
                      "for i in $(seq 100); do squeue -h -s -j $SLURM_JOB_ID -o %i | "
                      "grep -q '[.]0$' && break; sleep 0.1; done; "
                      "timeout 20 srun --overlap -n1 echo overlapped; "
                      "srun -n1 echo second > second.out 2>&1 & "
                      "for i in $(seq 200); do grep -q retrying second.out && break; "
                      "sleep 0.1; done; "
                      "squeue -h -s -j $SLURM_JOB_ID -o %i | grep -c '[.][0-9]*$'; "
                      "touch go; wait; cat second.out; "
                      "srun -O -n5 sh -c 'echo on $SLURM_CPUS_ON_NODE' | sort | uniq -c; "
                      "srun -n3 true 2>&1; echo done");
    expect_line(out, "overlapped");
    expect_line(out, "1"); /* the waiting srun had no step while it waited */
    char line[160];
    unsigned id = (unsigned)strtoul(strstr(out, "job ") ? strstr(out, "job ") + 4 : "0", NULL,
                                    10);
    snprintf(line, sizeof(line), "srun: Job %u step creation temporarily disabled, retrying "
                                 "(Requested nodes are busy)", id);
    expect_line(out, "%s", line);
    expect_line(out, "srun: Step created for job %u", id);
    expect_line(out, "second");
    expect_line(out, "      5 on 2");
    assert_non_null(strstr(out, ": More processors requested than permitted"));
    free(out);
}

/* srun --jobid=N from outside the job: its owner runs a step in it (Slurm 22.05: yes),
 * another user is refused ("Unable to create step for job N: Access/permission denied"),
 * and an unknown job gets Slurm's two lines. */
static void test_jobid_from_outside(void **state)
{
    (void)state;
    unsigned id = SUBMIT("-N1", "--wrap", "sleep 60");
    char sid[16], opt[32];
    snprintf(sid, sizeof(sid), "%u", id);
    snprintf(opt, sizeof(opt), "--jobid=%u", id);
    wait_for(id, "%T", "RUNNING\n", 20);

    struct result r = RUN("srun", opt, "sh", "-c", "echo in $SLURM_JOB_ID");
    expect_ok(&r);
    expect_line(r.out, "in %u", id);
    result_free(&r);

    char *out = NULL, *err = NULL;
    int rc = harness_cmd_as(&cluster, 65534, "srun",
                            (const char *const[]){opt, "echo", "intruder", NULL}, &out, &err);
    assert_int_equal(rc, 1);
    assert_null(strstr(out ? out : "", "intruder"));
    expect_line(err, "srun: error: Unable to create step for job %u: Access/permission denied",
                id);
    free(out);
    free(err);

    r = RUN("srun", "--jobid=999999", "true");
    assert_int_equal(r.rc, 1);
    expect_line(r.err, "srun: error: Unable to confirm allocation for job 999999: Invalid job "
                       "id specified");
    expect_line(r.err, "srun: Check SLURM_JOB_ID environment variable. Expired or invalid job "
                       "999999");
    result_free(&r);
    r = RUN("srun", "--jobid=abc", "true");
    assert_int_equal(r.rc, 1);
    expect_line(r.err, "srun: error: Invalid numeric value \"abc\" for --jobid.");
    result_free(&r);
    r = RUN("scancel", sid);
    result_free(&r);

    /* a het job's component from outside: srun learns the job's components */
    id = SUBMIT("-n1", ":", "-n1", "--wrap", "sleep 60");
    snprintf(sid, sizeof(sid), "%u", id);
    snprintf(opt, sizeof(opt), "--jobid=%u", id);
    wait_for(id, "%T", "RUNNING\nRUNNING\n", 20);
    r = RUN("srun", opt, "--het-group=1", "sh", "-c", "echo het $SLURM_HET_SIZE $SLURM_PROCID");
    expect_ok(&r);
    expect_line(r.out, "het 2 0");
    result_free(&r);
    r = RUN("scancel", sid);
    result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_step_inherits_cpus_per_task),
        cmocka_unit_test(test_het_components_inherit_their_cpus),
        cmocka_unit_test(test_het_step_in_plain_allocation),
        cmocka_unit_test(test_steps_share_cpus_only_with_overlap),
        cmocka_unit_test(test_jobid_from_outside),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
