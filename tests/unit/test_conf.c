/* tessera.conf: every key, node and partition lines, ranges, defaults, and errors with
 * their file and line. */
#include "common/conf/conf.h"
#include "common/util/errors.h"
#include "harness.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static struct conf *parse_ok(const char *text)
{
    char err[512] = "";
    struct conf *c = NULL;
    int rc = conf_parse_string(text, "t.conf", 0, &c, err, sizeof(err));
    if (rc != TS_OK)
        fail_msg("unexpected error: %s", err);
    assert_non_null(c);
    return c;
}

/* Parse text that must fail with exactly this message. */
static void parse_fails(const char *text, const char *message)
{
    char err[512] = "";
    struct conf *c = (struct conf *)0x1;
    assert_int_equal(conf_parse_string(text, "t.conf", 0, &c, err, sizeof(err)), TS_ECONF);
    assert_null(c);
    assert_string_equal(err, message);
}

static void test_defaults(void **state)
{
    struct conf *c = parse_ok("");
    assert_string_equal(c->cluster_name, "tessera");
    assert_string_equal(c->ctld_host, "localhost");
    assert_int_equal(c->ctld_port, 6917);
    assert_int_equal(c->noded_port, 6918);
    assert_string_equal(c->state_save_location, "/var/lib/tessera");
    assert_string_equal(c->spool_dir, "/var/spool/tessera");
    assert_string_equal(c->auth_type, "auth/munge");
    assert_null(c->auth_info);
    assert_null(c->munge_socket);
    assert_string_equal(c->slurm_user, "root");
    assert_int_equal(c->slurm_user_uid, 0);
    assert_string_equal(c->scheduler_type, "sched/backfill");
    assert_string_equal(c->select_type, "select/consumable");
    assert_string_equal(c->proctrack_type, "proctrack/pgid");
    assert_string_equal(c->noded_user, "root");
    assert_int_equal(c->noded_user_uid, 0);
    assert_null(c->scheduler_parameters);
    assert_int_equal(c->min_job_age, 300);
    assert_int_equal(c->noded_timeout, 300);
    assert_int_equal(c->kill_wait, 30);
    assert_int_equal(c->filter_timeout, 15);
    assert_int_equal(c->filter_retry_interval, 60);
    assert_int_equal(c->default_hold_duration, 900);
    assert_int_equal(c->first_job_id, 1);
    assert_int_equal(c->nnodes, 0);
    assert_int_equal(c->npartitions, 0);
    conf_free(c);
}

static void test_all_keys(void **state)
{
    struct conf *c = parse_ok(
        "# a comment line\n"
        "ClusterName=alpha  CtldHost=127.0.0.1 CtldPort=7000\n"
        "NodedPort=7100 StateSaveLocation=/tmp/state SpoolDir=/tmp/spool # trailing\n"
        "AuthType=auth/munge AuthInfo=socket=/tmp/m.sock,ttl=60\n"
        "slurmuser=0\n" /* keys are case-insensitive; a numeric uid is fine */
        "SchedulerType=sched/builtin\n"
        "SchedulerParameters=bf_window=120,bf_resolution=1,whole_hetjob,bf_mode=whole,"
        "bf_continue\n"
        "MinJobAge=1 NodedTimeout=2 KillWait=3\n"
        "FilterTimeout=4 FilterRetryInterval=5 DefaultHoldDuration=60\n"
        "FirstJobId=1000 MessageTimeout=20 CtldDebug=debug NodedDebug=verbose\n"
        "CtldLogFile=/tmp/ctld.log NodedLogFile=/tmp/noded.log PluginDir=/opt/plugins\n");
    assert_string_equal(c->cluster_name, "alpha");
    assert_string_equal(c->ctld_host, "127.0.0.1");
    assert_int_equal(c->ctld_port, 7000);
    assert_int_equal(c->noded_port, 7100);
    assert_string_equal(c->state_save_location, "/tmp/state");
    assert_string_equal(c->spool_dir, "/tmp/spool");
    assert_string_equal(c->munge_socket, "/tmp/m.sock");
    assert_int_equal(c->cred_ttl, 60);
    assert_string_equal(c->scheduler_type, "sched/builtin");
    assert_int_equal(c->min_job_age, 1);
    assert_int_equal(c->noded_timeout, 2);
    assert_int_equal(c->kill_wait, 3);
    assert_int_equal(c->filter_timeout, 4);
    assert_int_equal(c->filter_retry_interval, 5);
    assert_int_equal(c->default_hold_duration, 60);
    assert_int_equal(c->first_job_id, 1000);
    assert_int_equal(c->message_timeout, 20);
    assert_string_equal(c->ctld_debug, "debug");
    assert_string_equal(c->plugin_dir, "/opt/plugins");

    const char *v = NULL;
    assert_true(conf_sched_param(c, "bf_window", &v));
    assert_string_equal(v, "120");
    assert_true(conf_sched_param(c, "whole_hetjob", &v));
    assert_string_equal(v, "");
    assert_true(conf_sched_param(c, "bf_continue", NULL)); /* kept although unknown */
    assert_false(conf_sched_param(c, "bf_win", NULL));     /* no prefix matches */
    assert_false(conf_sched_param(c, "disable_hetjob_steps", NULL));
    conf_free(c);
}

/* The RPC servers' limits: defaults, values, and a handshake deadline of 0 refused. */
static void test_rpc_limits(void **state)
{
    struct conf *c = parse_ok("");
    assert_int_equal(c->rpc_handshake_timeout, 3);
    assert_int_equal(c->rpc_frame_timeout, 60);
    assert_int_equal(c->rpc_idle_timeout, 600);
    assert_int_equal(c->rpc_max_connections, 8192);
    assert_int_equal(c->rpc_max_unauth, 1024);
    assert_int_equal(c->rpc_max_unauth_per_host, 64);
    assert_int_equal(c->rpc_max_user_connections, 1024);
    conf_free(c);
    c = parse_ok("RpcHandshakeTimeout=5 RpcFrameTimeout=120 RpcIdleTimeout=0\n"
                 "RpcMaxConnections=20000 RpcMaxUnauthConnections=200\n"
                 "RpcMaxUnauthPerHost=8 RpcMaxUserConnections=50\n");
    assert_int_equal(c->rpc_handshake_timeout, 5);
    assert_int_equal(c->rpc_frame_timeout, 120);
    assert_int_equal(c->rpc_idle_timeout, 0);
    assert_int_equal(c->rpc_max_connections, 20000);
    assert_int_equal(c->rpc_max_unauth, 200);
    assert_int_equal(c->rpc_max_unauth_per_host, 8);
    assert_int_equal(c->rpc_max_user_connections, 50);
    conf_free(c);
    parse_fails("RpcHandshakeTimeout=0\n",
                "t.conf:1: RpcHandshakeTimeout must be a whole number from 1 to 60, not '0'");
    parse_fails("RpcMaxUnauthPerHost=0\n",
                "t.conf:1: RpcMaxUnauthPerHost must be a whole number from 1 to 1000000, not '0'");
}

static void test_nodes(void **state)
{
    struct conf *c = parse_ok(
        "NodedPort=7000\n"
        "NodeName=n[1-4] CPUs=4 RealMemory=8000 Features=haswell,ib NodeAddr=127.0.0.1 "
        "Port=7001-7004\n"
        "NodeName=big Sockets=2 CoresPerSocket=8 ThreadsPerCore=2 State=DRAIN\n"
        "NodeName=DEFAULT CPUs=2 RealMemory=100\n"
        "NodeName=nid[00011-00012] NodeAddr=10.0.0.[1-2]\n");
    assert_int_equal(c->nnodes, 7);
    const struct conf_node *n = conf_find_node(c, "n3");
    assert_non_null(n);
    assert_int_equal(n->cpus, 4);
    assert_int_equal(n->real_memory_mb, 8000);
    assert_string_equal(n->features, "haswell,ib");
    assert_string_equal(n->addr, "127.0.0.1");
    assert_string_equal(n->hostname, "n3");
    assert_int_equal(n->port, 7003);

    n = conf_find_node(c, "nid00012");
    assert_non_null(n);
    assert_int_equal(n->cpus, 2); /* from the DEFAULT line */
    assert_int_equal(n->real_memory_mb, 100);
    assert_string_equal(n->addr, "10.0.0.2");
    assert_int_equal(n->port, 7000); /* NodedPort */
    assert_string_equal(n->features, "");

    n = conf_find_node(c, "big");
    assert_int_equal(n->cpus, 32); /* sockets x cores x threads, CPUs not given */
    assert_int_equal(n->state, CONF_NODE_DRAIN);
    assert_null(conf_find_node(c, "n5"));
    conf_free(c);
}

static void test_noded_port_after_nodes(void **state)
{
    /* a node without Port= uses NodedPort wherever it is set in the file */
    struct conf *c = parse_ok("NodeName=a NodeAddr=h1\nNodedPort=7777\n");
    assert_int_equal(c->nodes[0].port, 7777);
    conf_free(c);
}

static void test_partitions(void **state)
{
    struct conf *c = parse_ok(
        "NodeName=n[1-4] CPUs=4 NodeAddr=127.0.0.1 Port=7001-7004\n"
        "PartitionName=debug Nodes=n[1-4] Default=YES MaxTime=60 DefaultTime=10 State=UP\n"
        "PartitionName=DEFAULT MaxTime=1-00:00:00\n"
        "PartitionName=long Nodes=n[3-4],n1 State=DRAIN MaxNodes=2 PriorityTier=5\n"
        "PartitionName=all Nodes=ALL MaxTime=UNLIMITED\n"
        "PartitionName=empty\n");
    assert_int_equal(c->npartitions, 4);
    const struct conf_partition *p = conf_find_partition(c, "debug");
    assert_true(p->is_default);
    assert_int_equal(p->max_time, 3600); /* bare numbers are minutes */
    assert_int_equal(p->default_time, 600);
    assert_int_equal(p->nnodes, 4);
    assert_ptr_equal(conf_default_partition(c), p);

    p = conf_find_partition(c, "long");
    assert_int_equal(p->max_time, 86400); /* from the DEFAULT line */
    assert_int_equal(p->default_time, CONF_UNLIMITED);
    assert_int_equal(p->state, CONF_PART_DRAIN);
    assert_string_equal(conf_partition_state_name(p->state), "DRAIN");
    assert_string_equal(conf_partition_state_name(CONF_PART_INACTIVE), "INACTIVE");
    assert_int_equal(p->max_nodes, 2);
    assert_int_equal(p->priority_tier, 5);
    assert_int_equal(p->nnodes, 3); /* sorted: n1, n3, n4 */
    assert_string_equal(c->nodes[p->node_index[0]].name, "n1");
    assert_string_equal(c->nodes[p->node_index[2]].name, "n4");

    p = conf_find_partition(c, "all");
    assert_int_equal(p->nnodes, 4);
    assert_int_equal(p->max_time, CONF_UNLIMITED);
    assert_int_equal(conf_find_partition(c, "empty")->nnodes, 0);
    conf_free(c);
}

static void test_quotes_and_continuation(void **state)
{
    struct conf *c = parse_ok("ClusterName=\"x#y\" \\\n"
                              "  CtldPort=7010   \\\n"
                              "\n"
                              "SchedulerParameters=\"bf_window=60\"\r\n");
    assert_string_equal(c->cluster_name, "x#y");
    assert_int_equal(c->ctld_port, 7010);
    assert_string_equal(c->scheduler_parameters, "bf_window=60");
    conf_free(c);
}

static void test_errors_with_lines(void **state)
{
    parse_fails("ClusterName=a\nFoo=bar\n", "t.conf:2: unknown key 'Foo'");
    parse_fails("\n\nCtldPort=70000\n", "t.conf:3: CtldPort: invalid port '70000'");
    parse_fails("CtldPort=\n", "t.conf:1: CtldPort: invalid port ''");
    parse_fails("MinJobAge=-1\n",
                "t.conf:1: MinJobAge must be a whole number from 0 to 31536000, not '-1'");
    parse_fails("DefaultHoldDuration=59\n",
                "t.conf:1: DefaultHoldDuration must be a whole number from 60 to 604800, "
                "not '59'");
    parse_fails("DefaultHoldDuration=604801\n",
                "t.conf:1: DefaultHoldDuration must be a whole number from 60 to 604800, "
                "not '604801'");
    parse_fails("ClusterName=a\nClusterName=b\n",
                "t.conf:2: ClusterName is set twice (first at line 1)");
    parse_fails("ClusterName\n", "t.conf:1: expected Key=Value, found 'ClusterName'");
    parse_fails("ClusterName=\"abc\n", "t.conf:1: unterminated quote");
    parse_fails("AuthType=auth/none\n",
                "t.conf:1: AuthType 'auth/none' is not supported (only auth/munge)");
    parse_fails("AuthInfo=sock=/x\n",
                "t.conf:1: AuthInfo: unknown item 'sock=/x' (expected socket=PATH or "
                "ttl=SECONDS)");
    parse_fails("SlurmUser=no_such_user_here\n",
                "t.conf:1: SlurmUser 'no_such_user_here': no such user");
    parse_fails("SchedulerType=backfill\n",
                "t.conf:1: SchedulerType must be sched/NAME, not 'backfill'");
    parse_fails("ProctrackType=proctrack/linuxproc\n",
                "t.conf:1: ProctrackType must be proctrack/pgid or proctrack/cgroup, not "
                "'proctrack/linuxproc'");
    parse_fails("SchedulerParameters=bf_window=0\n",
                "t.conf:1: SchedulerParameters: bf_window needs a number from 1 to 43200");
    parse_fails("SchedulerParameters=bf_mode=sometimes\n",
                "t.conf:1: SchedulerParameters: bf_mode must be partial, whole or off");
    parse_fails("SchedulerParameters=whole_hetjob=1\n",
                "t.conf:1: SchedulerParameters: whole_hetjob takes no value");
    parse_fails("StateSaveLocation=relative/path\n",
                "t.conf:1: StateSaveLocation must be an absolute path, not 'relative/path'");
    parse_fails("CtldDebug=loud\n", "t.conf:1: CtldDebug: unknown log level 'loud'");
    /* a continued line reports the line it started on */
    parse_fails("ClusterName=a \\\n Bad=1\n", "t.conf:1: unknown key 'Bad'");
    parse_fails("Include other.conf\n", "t.conf:1: Include is not allowed here");
}

static void test_node_errors(void **state)
{
    parse_fails("NodeName=n[1-3 CPUs=1\n",
                "t.conf:1: invalid NodeName 'n[1-3': Invalid hostlist");
    parse_fails("NodeName=n1 CPUs=0\n",
                "t.conf:1: CPUs must be a number from 1 to 1048576, not '0'");
    parse_fails("NodeName=n1 RealMemory=8G\n",
                "t.conf:1: RealMemory must be a number of megabytes, not '8G'");
    parse_fails("NodeName=n1 Bogus=1\n", "t.conf:1: unknown node key 'Bogus'");
    parse_fails("NodeName=n1\n\nNodeName=n[0-2]\n",
                "t.conf:3: node n1 is defined twice (first at line 1)");
    parse_fails("NodeName=n[1-3] Port=7001-7002\n",
                "t.conf:1: Port '7001-7002' gives 2 ports for 3 nodes");
    parse_fails("NodeName=n[1-3] NodeAddr=a,b\n",
                "t.conf:1: NodeAddr 'a,b' names 2 hosts for 3 nodes");
    parse_fails("NodeName=n1 Port=0\n", "t.conf:1: invalid Port 0");
    parse_fails("NodeName=n1 Port=70000\n", "t.conf:1: invalid Port 70000");
    parse_fails("NodeName=n[1-2] NodeAddr=127.0.0.1 Port=7001\n",
                "t.conf:1: nodes n1 and n2 both use 127.0.0.1 port 7001");
    parse_fails("NodeName=n1 Features=a,,b\n",
                "t.conf:1: invalid Features 'a,,b' (names separated by commas)");
    parse_fails("NodeName=n1 State=IDLE\n",
                "t.conf:1: node State must be UNKNOWN, DOWN, DRAIN or FUTURE, not 'IDLE'");
    parse_fails("NodeName=n[0-9999999]\n",
                "t.conf:1: invalid NodeName 'n[0-9999999]': Value too large");
}

static void test_many_nodes(void **state)
{
    /* checks are hash lookups: 200000 nodes parse at once */
    struct conf *c = parse_ok("NodeName=n[1-200000] CPUs=64\n"
                              "NodedPort=9\n"
                              "PartitionName=all Nodes=n[1-200000]\n");
    assert_int_equal(c->nnodes, 200000);
    assert_int_equal(c->partitions[0].nnodes, 200000);
    conf_free(c);
    parse_fails("NodeName=n[0-262144]\n", "t.conf:1: more than 262144 nodes");
}

static void test_partition_errors(void **state)
{
    parse_fails("NodeName=n1\nPartitionName=p Nodes=n[1-2]\n",
                "t.conf:2: partition p: node n2 is not defined");
    parse_fails("PartitionName=p MaxTime=forever\n", "t.conf:1: invalid MaxTime 'forever'");
    parse_fails("PartitionName=p MaxTime=10 DefaultTime=20\n",
                "t.conf:1: partition p: DefaultTime is longer than MaxTime");
    parse_fails("PartitionName=a Default=YES\nPartitionName=b Default=yes\n",
                "t.conf:2: partition b: a default partition is already set at line 1");
    parse_fails("PartitionName=a Default=maybe\n",
                "t.conf:1: Default must be YES or NO, not 'maybe'");
    parse_fails("PartitionName=a\nPartitionName=a\n",
                "t.conf:2: partition a is defined twice (first at line 1)");
    parse_fails("PartitionName=a Color=blue\n", "t.conf:1: unknown partition key 'Color'");
    parse_fails("PartitionName=a State=OPEN\n",
                "t.conf:1: partition State must be UP, DOWN, DRAIN or INACTIVE, not 'OPEN'");
    parse_fails("PartitionName=a/b\n", "t.conf:1: invalid partition name 'a/b'");
}

/* docs/05-filters.md §1.1: filter chains, the partition's before the cluster's; DEFAULT lines carry
 * them. */
static void test_filters(void **state)
{
    (void)state;
    struct conf *c = parse_ok("SubmitFilters=/etc/f/a,/etc/f/b\nActivationFilters=/x\n"
                              "DefaultHoldDuration=60\n"
                              "PartitionName=DEFAULT SubmitFilters=/p/d\n"
                              "PartitionName=p1 ActivationFilters=/p/act\n"
                              "PartitionName=p2 SubmitFilters=/p/two\n");
    char **paths;
    size_t n;
    assert_int_equal(conf_filters(c, conf_find_partition(c, "p1"), CONF_FILTER_SUBMIT, &paths, &n),
                     TS_OK);
    assert_int_equal(n, 3);
    assert_string_equal(paths[0], "/p/d");
    assert_string_equal(paths[1], "/etc/f/a");
    assert_string_equal(paths[2], "/etc/f/b");
    conf_filters_free(paths, n);
    assert_int_equal(conf_filters(c, conf_find_partition(c, "p2"), CONF_FILTER_SUBMIT, &paths, &n),
                     TS_OK);
    assert_int_equal(n, 3);
    assert_string_equal(paths[0], "/p/two");
    conf_filters_free(paths, n);
    assert_int_equal(conf_filters(c, conf_find_partition(c, "p1"), CONF_FILTER_ACTIVATION, &paths,
                                  &n), TS_OK);
    assert_int_equal(n, 2);
    assert_string_equal(paths[0], "/p/act");
    assert_string_equal(paths[1], "/x");
    conf_filters_free(paths, n);
    assert_int_equal(conf_filters(c, NULL, CONF_FILTER_ACTIVATION, &paths, &n), TS_OK);
    assert_int_equal(n, 1);
    conf_filters_free(paths, n);
    conf_free(c);
    c = parse_ok("ClusterName=x\n");
    assert_int_equal(conf_filters(c, NULL, CONF_FILTER_SUBMIT, &paths, &n), TS_OK);
    assert_int_equal(n, 0);
    conf_filters_free(paths, n);
    conf_free(c);
    parse_fails("SubmitFilters=relative/f\n",
                "t.conf:1: filters are absolute paths separated by commas, not 'relative/f'");
    parse_fails("SubmitFilters=/a,,/b\n",
                "t.conf:1: filters are absolute paths separated by commas, not '/a,,/b'");
    parse_fails("PartitionName=p ActivationFilters=x\n",
                "t.conf:1: filters are absolute paths separated by commas, not 'x'");
    parse_fails("DefaultHoldDuration=59\n",
                "t.conf:1: DefaultHoldDuration must be a whole number from 60 to 604800, not '59'");
}

/* Running-job limits, for the cluster and on partition lines. */
static void test_limits(void **state)
{
    (void)state;
    struct conf *c = parse_ok("MaxRunning=100\nMaxUserRunning=10\n"
                              "PartitionName=p MaxRunning=5 MaxUserRunning=2 MaxGroupRunning=3\n"
                              "PartitionName=q\n");
    assert_int_equal(c->max_running, 100);
    assert_int_equal(c->max_user_running, 10);
    assert_int_equal(c->max_group_running, 0);
    const struct conf_partition *p = conf_find_partition(c, "p"), *q = conf_find_partition(c, "q");
    assert_int_equal(p->max_running, 5);
    assert_int_equal(p->max_user_running, 2);
    assert_int_equal(p->max_group_running, 3);
    assert_int_equal(q->max_running, 0);
    conf_free(c);
    parse_fails("PartitionName=p MaxUserRunning=many\n",
                "t.conf:1: invalid MaxUserRunning 'many'");
    /* PBS's resources_max and resources_available */
    c = parse_ok("ResourcesMax=cpus=64,mem=2G,nodes=4,walltime=1-00:00:00\n"
                 "ResourcesAvailable=ncpus=128,mem=1T\n");
    assert_int_equal(c->res_max.cpus, 64);
    assert_int_equal(c->res_max.mem_mb, 2048);
    assert_int_equal(c->res_max.nodes, 4);
    assert_int_equal(c->res_max.walltime, 86400);
    assert_int_equal(c->res_available.cpus, 128);
    assert_int_equal(c->res_available.mem_mb, 1024 * 1024);
    assert_int_equal(c->res_available.nodes, 0);
    conf_free(c);
    parse_fails("ResourcesMax=cpus=0\n",
                "t.conf:1: ResourcesMax: cpus must be a positive number, not '0'");
    parse_fails("ResourcesMax=mem=lots\n",
                "t.conf:1: ResourcesMax: mem must be a size (M, G or T), not 'lots'");
    parse_fails("ResourcesAvailable=walltime=10\n",
                "t.conf:1: ResourcesAvailable: unknown resource 'walltime' (cpus, mem, nodes)");
    parse_fails("ResourcesMax=gpus=2\n",
                "t.conf:1: ResourcesMax: unknown resource 'gpus' (cpus, mem, nodes, walltime)");
    parse_fails("ResourcesMax=cpus\n", "t.conf:1: ResourcesMax: 'cpus' is not name=value");
}

static void test_files_and_include(void **state)
{
    char dir[256], main_path[300], inc_path[300], bad_path[300];
    assert_int_equal(harness_tmpdir("conf", dir, sizeof(dir)), 0);
    snprintf(main_path, sizeof(main_path), "%s/tessera.conf", dir);
    snprintf(inc_path, sizeof(inc_path), "%s/nodes.conf", dir);
    snprintf(bad_path, sizeof(bad_path), "%s/bad.conf", dir);
    harness_write_file(main_path, "ClusterName=files\nInclude nodes.conf\nCtldPort=7020\n", 0644);
    harness_write_file(inc_path, "NodeName=n[1-2] NodeAddr=127.0.0.1 Port=7001-7002\n", 0644);
    harness_write_file(bad_path, "ClusterName=x\nInclude nodes.conf\nInclude missing.conf\n",
                       0644);

    struct conf *c = NULL;
    char err[512] = "";
    assert_int_equal(conf_load(main_path, &c, err, sizeof(err)), TS_OK);
    assert_string_equal(c->cluster_name, "files");
    assert_int_equal(c->nnodes, 2);
    assert_int_equal(c->ctld_port, 7020);
    assert_string_equal(c->path, main_path);
    conf_free(c);

    /* an error inside an included file names that file and its line */
    harness_write_file(inc_path, "NodeName=n1\nNodeName=n1\n", 0644);
    assert_int_equal(conf_load(main_path, &c, err, sizeof(err)), TS_ECONF);
    char expect[700];
    snprintf(expect, sizeof(expect), "%s:2: node n1 is defined twice (first at line 1)",
             inc_path);
    assert_string_equal(err, expect);

    harness_write_file(inc_path, "\n", 0644);
    assert_int_equal(conf_load(bad_path, &c, err, sizeof(err)), TS_ECONF);
    snprintf(expect, sizeof(expect), "%s:3: cannot read %s/missing.conf: No such file or directory",
             bad_path, dir);
    assert_string_equal(err, expect);

    char missing[300];
    snprintf(missing, sizeof(missing), "%s/none.conf", dir);
    assert_int_equal(conf_load(missing, &c, err, sizeof(err)), TS_ECONF_NOTFOUND);
    snprintf(expect, sizeof(expect), "%s: cannot read %s: No such file or directory", missing,
             missing);
    assert_string_equal(err, expect);
    assert_null(c);
    harness_rmrf(dir);
}

static void test_locate(void **state)
{
    unsetenv(CONF_ENV);
    assert_string_equal(conf_locate(NULL), CONF_DEFAULT_PATH);
    setenv(CONF_ENV, "/env/tessera.conf", 1);
    assert_string_equal(conf_locate(NULL), "/env/tessera.conf");
    assert_string_equal(conf_locate("/cli.conf"), "/cli.conf");
    unsetenv(CONF_ENV);
}

struct seen {
    int count;
    int sorted;
    char last[64];
    char port[16];
    char age[16];
};

static void collect(void *arg, const char *key, const char *value)
{
    struct seen *s = arg;
    if (s->count && strcasecmp(s->last, key) > 0)
        s->sorted = 0;
    snprintf(s->last, sizeof(s->last), "%s", key);
    if (!strcmp(key, "CtldPort"))
        snprintf(s->port, sizeof(s->port), "%s", value);
    if (!strcmp(key, "MinJobAge"))
        snprintf(s->age, sizeof(s->age), "%s", value);
    s->count++;
}

static void test_entries(void **state)
{
    struct conf *c = parse_ok("CtldPort=7123\nMinJobAge=5\n");
    struct seen s = {.sorted = 1};
    conf_foreach_entry(c, collect, &s);
    assert_true(s.count >= 20);
    assert_true(s.sorted);
    assert_string_equal(s.port, "7123");
    assert_string_equal(s.age, "5 sec");
    conf_free(c);
}

/* Gres= on node lines (templates too), GresTypes= in any order, gres.conf's place. */
static void test_gres(void **state)
{
    (void)state;
    struct conf *c = parse_ok("NodeName=DEFAULT Gres=gpu:2\n"
                              "NodeName=n[1-2]\n"
                              "NodeName=n3 Gres=gpu:a100:4,bandwidth:10G\n"
                              "NodeName=n4 Gres=\n"
                              "GresTypes=gpu,bandwidth\n");
    assert_string_equal(c->gres_types, "gpu,bandwidth");
    const struct conf_node *n = conf_find_node(c, "n2");
    assert_int_equal(n->ngres, 1);
    assert_int_equal(n->gres[0].count, 2);
    n = conf_find_node(c, "n3");
    assert_int_equal(n->ngres, 2);
    assert_string_equal(n->gres[0].type, "a100");
    assert_int_equal(n->gres[1].count, UINT64_C(10737418240));
    assert_int_equal(conf_find_node(c, "n4")->ngres, 0);
    char path[256];
    assert_int_equal(conf_gres_conf_path(c, path, sizeof(path)), TS_OK);
    assert_string_equal(path, "./gres.conf");
    conf_free(c);
    c = parse_ok("GresConf=/etc/gpus/gres.conf\n");
    assert_int_equal(conf_gres_conf_path(c, path, sizeof(path)), TS_OK);
    assert_string_equal(path, "/etc/gpus/gres.conf");
    conf_free(c);

    parse_fails("GresTypes=gpu\nNodeName=n1\nNodeName=n4 Gres=foo:1\n",
                "t.conf:3: Invalid GRES configured on node n4: foo:1");
    parse_fails("NodeName=n1 Gres=gpu:2\n", "t.conf:1: Invalid GRES configured on node n1: gpu:2");
    parse_fails("GresTypes=gpu\nNodeName=n1 Gres=gpu:0\n",
                "t.conf:2: invalid Gres 'gpu:0': invalid count '0' of gpu");
    parse_fails("GresTypes=gpu,\n",
                "t.conf:1: GresTypes must be at most 32 names separated by commas, not 'gpu,'");
    parse_fails("GresConf=gres.conf\n",
                "t.conf:1: GresConf must be an absolute path, not 'gres.conf'");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_all_keys),
        cmocka_unit_test(test_rpc_limits),
        cmocka_unit_test(test_nodes),
        cmocka_unit_test(test_noded_port_after_nodes),
        cmocka_unit_test(test_partitions),
        cmocka_unit_test(test_quotes_and_continuation),
        cmocka_unit_test(test_errors_with_lines),
        cmocka_unit_test(test_node_errors),
        cmocka_unit_test(test_many_nodes),
        cmocka_unit_test(test_partition_errors),
        cmocka_unit_test(test_filters),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_files_and_include),
        cmocka_unit_test(test_locate),
        cmocka_unit_test(test_entries),
        cmocka_unit_test(test_gres),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
