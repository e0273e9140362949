/* srun as scripts written for Slurm use it inside their jobs, with Slurm 22.05's behaviour
 * on the reference cluster as the expectation (docs/steps.md):
 *   - a step inherits the job's --cpus-per-task (SLURM_CPUS_PER_TASK in srun's
 *     environment; SLURM_CPUS_PER_TASK_HET_GROUP_<n> per component of a het job);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_step_inherits_cpus_per_task),
        cmocka_unit_test(test_het_components_inherit_their_cpus),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
