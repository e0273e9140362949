/* Slurm's texts and exit statuses for common mistakes, as a table: each row a command line,
 * the exit status and the standard error Slurm 22.05 gave for it on the reference cluster
 * (four nodes of 4 CPUs and 2000 MB, EnforcePartLimits=ALL: Tessera refuses at submission
 * what can never run, docs/slurm-differences.md). A changed text or status fails the row
 * that names it. Where Tessera deliberately differs, the row is not here but in
 * docs/slurm-differences.md.
 *
 * Node counts are checked as Slurm does: the partition's CPUs first ("More processors
 * requested than permitted" for -N1000000k), then its nodes ("Node count specification
 * invalid" for -N5 on four nodes). */
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

static struct harness_cluster cluster;
static char outdir[512];

static int group_setup(void **state)
{
    char nodes[2048], extra[4096];
    if (harness_cluster_init(&cluster, NULL))
        return -1;
    harness_node_lines(&cluster, 4, "CPUs=4 RealMemory=2000", nodes, sizeof(nodes));
    snprintf(extra, sizeof(extra),
             "MinJobAge=600\n%s"
             "PartitionName=debug Nodes=n[1-4] Default=YES MaxTime=UNLIMITED\n",
             nodes);
    if (harness_cluster_write_conf(&cluster, extra) ||
        harness_cluster_start(&cluster, 4, outdir, sizeof(outdir)))
        return -1;
    char path[700];
    snprintf(path, sizeof(path), "%s/ok.sh", outdir);
    harness_write_file(path, "#!/bin/sh\ntrue\n", 0755);
    snprintf(path, sizeof(path), "%s/nosh.sh", outdir);
    harness_write_file(path, "true\n", 0755);
    snprintf(path, sizeof(path), "%s/empty.sh", outdir);
    harness_write_file(path, "", 0755);
    return 0;
}

static int group_teardown(void **state)
{
    harness_cluster_fini(&cluster);
    return 0;
}

/* A command line ("@" at the start of an argument or of an expected line: the test's
 * output folder), its exit status and its whole standard error. */
struct row {
    const char *cmd;
    const char *args[8];
    int rc;
    const char *err;
};

#define TRY_HELP(cmd) "Try \"" cmd " --help\" for more information\n"

static const struct row rows[] = {
    /* node and CPU counts: CPUs first, then nodes (issue 16, item 11) */
    {"sbatch", {"-N5", "@/ok.sh"}, 1,
     "sbatch: error: Batch job submission failed: Node count specification invalid\n"},
    {"sbatch", {"-N1000000k", "@/ok.sh"}, 1,
     "sbatch: error: Batch job submission failed: More processors requested than permitted\n"},
    {"sbatch", {"-N5k", "@/ok.sh"}, 1,
     "sbatch: error: Batch job submission failed: More processors requested than permitted\n"},
    {"sbatch", {"-n1000000", "@/ok.sh"}, 1,
     "sbatch: error: Batch job submission failed: More processors requested than permitted\n"},
    {"sbatch", {"-n1000000", "-N1", "@/ok.sh"}, 1,
     "sbatch: error: Batch job submission failed: More processors requested than permitted\n"},
    {"sbatch", {"-n17", "@/ok.sh"}, 1,
     "sbatch: error: Batch job submission failed: More processors requested than permitted\n"},
    {"sbatch", {"-N4", "-n17", "@/ok.sh"}, 1,
     "sbatch: error: Batch job submission failed: More processors requested than permitted\n"},
    {"sbatch", {"-N", "2-1", "@/ok.sh"}, 255,
     "sbatch: error: Maximum node count 1 is less than minimum node count 2\n"},
    {"sbatch", {"-Nx", "@/ok.sh"}, 255, "sbatch: error: \"x\" is not a valid node count\n"},
    {"srun", {"-N5", "true"}, 1,
     "srun: error: Unable to allocate resources: Node count specification invalid\n"},
    {"srun", {"-N1000000k", "true"}, 1,
     "srun: error: Unable to allocate resources: More processors requested than permitted\n"},
    {"srun", {"-n1000000", "true"}, 1,
     "srun: error: Unable to allocate resources: More processors requested than permitted\n"},
    {"srun", {"-N", "2-1", "true"}, 255,
     "srun: error: Maximum node count 1 is less than minimum node count 2\n"},
    {"srun", {"-N", "abc", "true"}, 255, "srun: error: \"abc\" is not a valid node count\n"},
    {"salloc", {"-N5", "true"}, 1,
     "salloc: error: Job submit/allocate failed: Node count specification invalid\n"},
    {"salloc", {"-N1000000k", "true"}, 1,
     "salloc: error: Job submit/allocate failed: More processors requested than permitted\n"},
    {"salloc", {"-N", "abc", "true"}, 255, "salloc: error: \"abc\" is not a valid node count\n"},

    /* --array (not built, but a malformed list is Slurm's error) */
    {"sbatch", {"--array=x", "@/ok.sh"}, 1,
     "sbatch: error: Batch job submission failed: Invalid job array specification\n"},
    {"sbatch", {"--array=5-1", "@/ok.sh"}, 1,
     "sbatch: error: Batch job submission failed: Invalid job array specification\n"},
    {"sbatch", {"--array=0-2000000", "@/ok.sh"}, 1,
     "sbatch: error: Batch job submission failed: Invalid job array specification\n"},

    /* values Slurm's commands refuse with 255 */
    {"sbatch", {"-t", "abc", "@/ok.sh"}, 255, "sbatch: error: Invalid --time specification\n"},
    {"sbatch", {"-t", "1:2:3:4", "@/ok.sh"}, 255, "sbatch: error: Invalid --time specification\n"},
    {"sbatch", {"--time-min=abc", "@/ok.sh"}, 255,
     "sbatch: error: Invalid --time-min specification\n"},
    {"sbatch", {"--mem=abc", "@/ok.sh"}, 255, "sbatch: error: Invalid --mem specification\n"},
    {"sbatch", {"--mem=1X", "@/ok.sh"}, 255, "sbatch: error: Invalid --mem specification\n"},
    {"sbatch", {"--mem=-1", "@/ok.sh"}, 255, "sbatch: error: Invalid --mem specification\n"},
    {"sbatch", {"--mem-per-cpu=abc", "@/ok.sh"}, 255,
     "sbatch: error: Invalid --mem-per-cpu specification\n"},
    {"sbatch", {"--mail-type=bogus", "@/ok.sh"}, 255,
     "sbatch: error: Invalid --mail-type specification\n"},
    {"sbatch", {"--open-mode=x", "@/ok.sh"}, 255,
     "sbatch: error: Invalid --open-mode specification\n"},
    {"sbatch", {"--exclusive=x", "@/ok.sh"}, 255,
     "sbatch: error: Invalid --exclusive specification\n"},
    {"srun", {"-t", "abc", "true"}, 255, "srun: error: Invalid --time specification\n"},
    {"srun", {"--mem=abc", "true"}, 255, "srun: error: Invalid --mem specification\n"},
    {"salloc", {"-t", "abc", "true"}, 255, "salloc: error: Invalid --time specification\n"},
    {"salloc", {"--mem=abc", "true"}, 255, "salloc: error: Invalid --mem specification\n"},

    /* numbers: 1 */
    {"sbatch", {"-c", "abc", "@/ok.sh"}, 1,
     "sbatch: error: Invalid numeric value \"abc\" for --cpus-per-task.\n"},
    {"sbatch", {"-n", "abc", "@/ok.sh"}, 1,
     "sbatch: error: Invalid numeric value \"abc\" for --ntasks.\n"},
    {"sbatch", {"-n0", "@/ok.sh"}, 1, "sbatch: error: Invalid numeric value \"0\" for --ntasks.\n"},
    {"sbatch", {"--ntasks-per-node=abc", "@/ok.sh"}, 1,
     "sbatch: error: Invalid numeric value \"abc\" for --ntasks-per-node.\n"},

    /* what the controller refuses */
    {"sbatch", {"-p", "nosuch", "@/ok.sh"}, 1,
     "sbatch: error: invalid partition specified: nosuch\n"
     "sbatch: error: Batch job submission failed: Invalid partition name specified\n"},
    {"srun", {"-p", "nosuch", "true"}, 1,
     "srun: error: invalid partition specified: nosuch\n"
     "srun: error: Unable to allocate resources: Invalid partition name specified\n"},
    {"salloc", {"-p", "nosuch", "true"}, 1,
     "salloc: error: invalid partition specified: nosuch\n"
     "salloc: error: Job submit/allocate failed: Invalid partition name specified\n"},
    {"sbatch", {"-w", "nosuch", "@/ok.sh"}, 1,
     "sbatch: error: Batch job submission failed: Invalid node name specified\n"},
    {"sbatch", {"-d", "foo", "@/ok.sh"}, 1,
     "sbatch: error: Batch job submission failed: Job dependency problem\n"},
    {"sbatch", {"-d", "afterok:abc", "@/ok.sh"}, 1,
     "sbatch: error: Batch job submission failed: Job dependency problem\n"},

    /* options and scripts */
    {"sbatch", {"--bogus", "@/ok.sh"}, 255, "sbatch: unrecognized option '--bogus'\n" TRY_HELP("sbatch")},
    {"srun", {"--bogus", "true"}, 255, "srun: unrecognized option '--bogus'\n" TRY_HELP("srun")},
    {"salloc", {"--bogus", "true"}, 255, "salloc: unrecognized option '--bogus'\n" TRY_HELP("salloc")},
    {"squeue", {"--bogus"}, 1, "squeue: unrecognized option '--bogus'\n" TRY_HELP("squeue")},
    {"scancel", {"--bogus", "1"}, 1, "scancel: unrecognized option '--bogus'\n" TRY_HELP("scancel")},
    {"sinfo", {"--bogus"}, 1, "sinfo: unrecognized option '--bogus'\n" TRY_HELP("sinfo")},
    {"sbatch", {"missing.sh"}, 1, "sbatch: error: Unable to open file missing.sh\n"},
    {"sbatch", {"@/nosh.sh"}, 1,
     "sbatch: error: This does not look like a batch script.  The first\n"
     "sbatch: error: line must start with #! followed by the path to an interpreter.\n"
     "sbatch: error: For instance: #!/bin/sh\n"},
    {"sbatch", {"@/empty.sh"}, 1, "sbatch: error: Batch script is empty!\n"},
    {"srun", {NULL}, 1, "srun: fatal: No command given to execute.\n"},
    /* Slurm's daemon calls itself slurmstepd-n2 */
    {"srun", {"-w", "n2", "nosuchcmd"}, 2,
     "tessera-stepd: error: execve(): nosuchcmd: No such file or directory\n"
     "srun: error: n2: task 0: Exited with exit code 2\n"},

    /* job ids */
    {"squeue", {"-j", "abc"}, 1, "squeue: error: Invalid job id: abc\n"},
    {"squeue", {"-j", "0"}, 1, "squeue: error: Invalid job id: 0\n"},
    {"squeue", {"-j", "999999"}, 1, "slurm_load_jobs error: Invalid job id specified\n"},
    {"scancel", {"abc"}, 1, "scancel: error: Invalid job id abc\n"},
    {"scancel", {NULL}, 1, "scancel: error: No job identification provided\n"},
    {"scontrol", {"show", "job", "999999"}, 1, "slurm_load_jobs error: Invalid job id specified\n"},
    {"scontrol", {"show", "job", "abc"}, 1, "scontrol_print_job error: Invalid job id specified\n"},
    {"scontrol", {"show", "job", "5x"}, 1, "scontrol_print_job error: Invalid job id specified\n"},
    {"scontrol", {"update", "jobid=999999", "timelimit=5"}, 1,
     "Invalid job id specified for job 999999\n"},
    {"scontrol", {"bogus"}, 1, "invalid keyword: bogus\n"},
};

/* "@" at the start of s: the output folder instead. */
static const char *fill(const char *s, char *buf, size_t len)
{
    if (s[0] != '@')
        return s;
    snprintf(buf, len, "%s%s", outdir, s + 1);
    return buf;
}

static void test_slurm_texts(void **state)
{
    int failed = 0;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const struct row *r = &rows[i];
        char bufs[8][700];
        const char *args[9];
        size_t n = 0;
        for (; n < 8 && r->args[n]; n++)
            args[n] = fill(r->args[n], bufs[n], sizeof(bufs[n]));
        args[n] = NULL;
        struct result got = cmdcheck_run(&cluster, r->cmd, args);
        if (got.rc != r->rc || strcmp(got.err, r->err) != 0) {
            print_error("%s %s %s %s: exit %d, expected %d\nstderr:   %sexpected: %s\n", r->cmd,
                        n > 0 ? args[0] : "", n > 1 ? args[1] : "", n > 2 ? args[2] : "",
                        got.rc, r->rc, got.err, r->err);
            failed++;
        }
        result_free(&got);
    }
    assert_int_equal(failed, 0);
    /* nothing was submitted but the allocation of the srun that ran */
    struct result q = RUN("squeue", "-h", "-t", "all", "-o", "%j");
    assert_int_equal(q.rc, 0);
    assert_string_equal(q.out, "nosuchcmd\n");
    result_free(&q);
}

/* Fewer tasks than nodes: as many nodes as tasks, with Slurm's warning (sbatch and
 * salloc; Slurm 22.05 accepts -N1000000k -n1 this way). */
static void test_nodes_fitted_to_tasks(void **state)
{
    static const struct {
        const char *nodes, *tasks, *warning, *shown;
    } cases[] = {
        {"-N5", "-n2", "sbatch: Warning: can't run 2 processes on 5 nodes, setting nnodes to 2\n",
         "2 2\n"},
        {"-N1000000k", "-n1",
         "sbatch: Warning: can't run 1 processes on 1024000000 nodes, setting nnodes to 1\n",
         "1 1\n"},
        {"-N2-4", "-n1", "sbatch: Warning: can't run 1 processes on 2 nodes, setting nnodes to 1\n",
         "1 1\n"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct result r = RUN("sbatch", "--parsable", "-H", cases[i].nodes, cases[i].tasks,
                              "--wrap=true");
        assert_int_equal(r.rc, 0);
        assert_string_equal(r.err, cases[i].warning);
        unsigned id = (unsigned)strtoul(r.out, NULL, 10);
        result_free(&r);
        char *shown = query(id, "%D %C");
        assert_string_equal(shown, cases[i].shown);
        free(shown);
        char sid[16];
        snprintf(sid, sizeof(sid), "%u", id);
        r = RUN("scancel", sid);
        expect_ok(&r);
        result_free(&r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slurm_texts),
        cmocka_unit_test(test_nodes_fitted_to_tasks),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
