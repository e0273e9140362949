/* scontrol -d / -dd show job: Slurm 22.05's DerivedExitCode= line (the worst exit status
 * of the job's steps), its JOB_GRES= line and one line per group of nodes with the CPU
 * indices and memory the job holds there ("     Nodes=n1 CPU_IDs=0-1 Mem=100 GRES=").
 * The indices are real: chosen by the controller at the start among those no
 * running job holds, freed with the job, and the same after a controller restart.
 * scontrol show partition and show node ask the controller once. */
#include "cluster.h"

#include <setjmp.h>
#include <signal.h>
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
    return harness_cluster_up(&cluster, 2, "CPUs=4 RealMemory=1000", "KillWait=1\nMinJobAge=600\nCtldDebug=debug2\n",
                              outdir, sizeof(outdir));
}

static int group_teardown(void **state)
{
    harness_cluster_fini(&cluster);
    return 0;
}

static void cancel(unsigned id)
{
    char sid[16];
    snprintf(sid, sizeof(sid), "%u", id);
    struct result r = RUN("scancel", sid);
    result_free(&r);
    wait_for(id, "%T", "CANCELLED\n", 20);
}

/* A running job of "sbatch ARGS --wrap 'sleep 300'". */
static unsigned start(const char *const args[])
{
    const char *full[16];
    size_t n = 0;
    for (; args[n] && n < 12; n++)
        full[n] = args[n];
    full[n++] = "--mem=100";
    full[n++] = "--wrap";
    full[n++] = "exec sleep 300";
    full[n] = NULL;
    unsigned id = cmdcheck_submit(&cluster, outdir, full);
    wait_for(id, "%T", "RUNNING\n", 20);
    return id;
}
#define START(...) start((const char *const[]){__VA_ARGS__, NULL})

/* "scontrol [FLAG] show job ID" (flag NULL: none). */
static char *show(const char *flag, unsigned id)
{
    char sid[16];
    snprintf(sid, sizeof(sid), "%u", id);
    struct result r = flag ? RUN("scontrol", flag, "show", "job", sid)
                           : RUN("scontrol", "show", "job", sid);
    expect_ok(&r);
    free(r.err);
    return r.out;
}

/* CPU_IDs= of the line "     Nodes=NODES CPU_IDs=... Mem=100 GRES=" (static; "" if none). */
static const char *cpu_ids(unsigned id, const char *nodes)
{
    static char ids[64];
    char *text = show("-d", id), prefix[64];
    snprintf(prefix, sizeof(prefix), "\n     Nodes=%s CPU_IDs=", nodes);
    const char *p = strstr(text, prefix);
    ids[0] = '\0';
    if (p) {
        p += strlen(prefix);
        size_t len = strcspn(p, " ");
        snprintf(ids, sizeof(ids), "%.*s", (int)len, p);
        char tail[64];
        snprintf(tail, sizeof(tail), " Mem=100 GRES=\n");
        if (strncmp(p + len, tail, strlen(tail)))
            fail_msg("job %u: unexpected line after CPU_IDs=%s in:\n%s", id, ids, text);
    }
    free(text);
    return ids;
}

/* The layout: JOB_GRES and the node lines between Socks/Node and MinCPUsNode, only with
 * -d; -dd shows the same. */
static void test_layout(void **state)
{
    unsigned id = START("-N2", "-n2");
    char *plain = show(NULL, id), *d = show("-d", id), *dd = show("-dd", id);
    assert_null(strstr(plain, "JOB_GRES="));
    assert_null(strstr(plain, "CPU_IDs="));
    const char *want = "CoreSpec=*\n   JOB_GRES=(null)\n     Nodes=n[1-2] CPU_IDs=0 Mem=100 "
                       "GRES=\n   MinCPUsNode=";
    if (!strstr(d, want))
        fail_msg("scontrol -d show job %u:\n%s\nwanted:\n%s", id, d, want);
    if (!strstr(dd, want)) /* RunTime= may have moved on: not compared whole */
        fail_msg("scontrol -dd show job %u:\n%s\nwanted:\n%s", id, dd, want);
    free(plain);
    free(d);
    free(dd);
    cancel(id);
}

/* Jobs sharing a node get disjoint indices; an ended job's are free again; after a
 * controller restart the running jobs keep theirs and new ones avoid them. */
static void test_cpu_ids_real(void **state)
{
    unsigned a = START("-w", "n1", "-n2");
    assert_string_equal(cpu_ids(a, "n1"), "0-1");
    unsigned b = START("-w", "n1", "-n1");
    assert_string_equal(cpu_ids(b, "n1"), "2");
    cancel(a);
    unsigned c = START("-w", "n1", "-n1");
    assert_string_equal(cpu_ids(c, "n1"), "0");

    assert_int_equal(harness_ctld_stop(&cluster, SIGTERM), 0);
    assert_int_equal(harness_ctld_start(&cluster), 0);
    assert_int_equal(harness_wait_nodes(&cluster, 2, 20000), 0);
    assert_string_equal(cpu_ids(b, "n1"), "2");
    assert_string_equal(cpu_ids(c, "n1"), "0");
    unsigned d = START("-w", "n1", "-n2");
    assert_string_equal(cpu_ids(d, "n1"), "1,3");
    cancel(b);
    cancel(c);
    cancel(d);
}

/* DerivedExitCode= (with -d only, after ExitCode=): the worst exit status of the job's
 * steps, while the job itself still runs. */
static void test_derived_exit_code(void **state)
{
    unsigned id = cmdcheck_submit(&cluster, outdir,
                                  (const char *const[]){"-w", "n2", "--wrap",
                                                        "srun -n1 sh -c 'exit 3'; srun -n1 true; "
                                                        "echo steps done; exec sleep 300",
                                                        NULL});
    free(output_with(id, "steps done", 30));
    char *text = NULL;
    for (int i = 0; i < 200; i++) { /* the nodes' end reports may still be on their way */
        free(text);
        text = show("-d", id);
        if (strstr(text, "DerivedExitCode=3:0"))
            break;
        usleep(100000);
    }
    if (!strstr(text, " ExitCode=0:0\n   DerivedExitCode=3:0\n   RunTime="))
        fail_msg("scontrol -d show job %u:\n%s", id, text);
    free(text);
    text = show(NULL, id);
    assert_null(strstr(text, "DerivedExitCode"));
    free(text);
    cancel(id);
}

/* How many requests of this kind the controller's log shows ("rpc: PEER: KIND from uid"). */
static int requests_logged(const char *kind)
{
    char pat[64];
    snprintf(pat, sizeof(pat), ": %s from uid ", kind);
    char *log = harness_read_file(cluster.ctld_log);
    int n = 0;
    for (const char *p = log; p && (p = strstr(p, pat)); p++)
        n++;
    free(log);
    return n;
}

/* scontrol ARGS... asks the controller one request of kind, and prints want_line. */
static void expect_one_request(const char *kind, const char *want_line, const char *what,
                               const char *name)
{
    int before = requests_logged(kind);
    struct result r = RUN("scontrol", "show", what, name);
    assert_true(has_prefix_line(r.out, want_line));
    result_free(&r);
    assert_int_equal(requests_logged(kind) - before, 1);
}

/* show partition and show node ask once, whether the name exists or not. */
static void test_show_asks_once(void **state)
{
    (void)state;
    expect_one_request("partition_query", "PartitionName=debug", "partition", "debug");
    expect_one_request("partition_query", "Partition nope not found", "partition", "nope");
    expect_one_request("node_query", "NodeName=n1 ", "node", "n1");
    expect_one_request("node_query", "Node n9 not found", "node", "n9");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout),
        cmocka_unit_test(test_cpu_ids_real),
        cmocka_unit_test(test_derived_exit_code),
        cmocka_unit_test(test_show_asks_once),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
