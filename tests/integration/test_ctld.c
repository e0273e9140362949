/* The controller skeleton through the real programs: a private munged, tessera-ctld, and
 * scontrol ping / show config; restarts (clean and kill -9) keep the job id counter;
 * start-up refuses a bad configuration, a taken port and a missing MUNGE with one line;
 * SIGHUP re-reads the configuration; the daemon mode reports start-up failures. */
#include "cluster.h"

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

static struct harness_cluster cluster;

static int group_setup(void **state)
{
    return harness_cluster_init(&cluster, "FirstJobId=1000\n");
}

static int group_teardown(void **state)
{
    harness_cluster_fini(&cluster);
    return 0;
}

/* scontrol ARGS...; returns stdout (caller frees) and checks the exit status. */
static char *scontrol(int expect_rc, const char *a1, const char *a2, char **err)
{
    const char *args[] = {a1, a2, NULL};
    char *out = NULL, *e = NULL;
    int rc = harness_cmd(&cluster, "scontrol", args, &out, &e);
    if (rc != expect_rc)
        fail_msg("scontrol %s %s: exit %d, expected %d; stderr: %s", a1, a2 ? a2 : "", rc,
                 expect_rc, e);
    if (err)
        *err = e;
    else
        free(e);
    return out;
}

static void expect_config_line(const char *out, const char *key, const char *value)
{
    char line[256];
    snprintf(line, sizeof(line), "\n%-23s = %s\n", key, value);
    if (!strstr(out, line))
        fail_msg("no line '%s = %s' in:\n%s", key, value, out);
}

static void test_ping(void **state)
{
    assert_int_equal(harness_ctld_start(&cluster), 0);
    char *out = scontrol(0, "ping", NULL, NULL);
    assert_string_equal(out, "Slurmctld(primary) at 127.0.0.1 is UP\n");
    free(out);
}

static void test_show_config(void **state)
{
    char *out = scontrol(0, "show", "config", NULL);
    assert_memory_equal(out, "Configuration data as of ", 25);
    expect_config_line(out, "ClusterName", "itest");
    expect_config_line(out, "NEXT_JOB_ID", "1000");
    expect_config_line(out, "MinJobAge", "300 sec");
    expect_config_line(out, "SchedulerType", "sched/backfill");
    expect_config_line(out, "TESSERA_CONF", cluster.conf);
    char port[16];
    snprintf(port, sizeof(port), "%u", cluster.ctld_port);
    expect_config_line(out, "CtldPort", port);
    assert_non_null(strstr(out, "\n\nSlurmctld(primary) at 127.0.0.1 is UP\n"));
    free(out);
}

static void test_counter_survives_restarts(void **state)
{
    /* FirstJobId only seeds a new state: once stored, the counter is what counts */
    assert_int_equal(harness_cluster_write_conf(&cluster, "FirstJobId=5\n"), 0);
    int status = harness_ctld_stop(&cluster, SIGTERM);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_int_equal(harness_ctld_start(&cluster), 0);
    char *out = scontrol(0, "show", "config", NULL);
    expect_config_line(out, "NEXT_JOB_ID", "1000");
    expect_config_line(out, "FirstJobId", "5");
    free(out);

    harness_ctld_stop(&cluster, SIGKILL); /* a crash */
    assert_int_equal(harness_ctld_start(&cluster), 0);
    out = scontrol(0, "show", "config", NULL);
    expect_config_line(out, "NEXT_JOB_ID", "1000");
    free(out);
}

static void test_reconfigure_on_sighup(void **state)
{
    assert_int_equal(harness_cluster_write_conf(&cluster, "MinJobAge=7\n"), 0);
    assert_true(cluster.ctld > 0);
    kill(cluster.ctld, SIGHUP);
    for (int i = 0; i < 100; i++) {
        char *out = scontrol(0, "show", "config", NULL);
        int done = strstr(out, "MinJobAge               = 7 sec\n") != NULL;
        free(out);
        if (done)
            break;
        assert_true(i < 99);
        usleep(50000);
    }
    /* a broken file is refused and the running configuration stays */
    assert_int_equal(harness_cluster_write_conf(&cluster, "MinJobAge=oops\n"), 0);
    assert_true(cluster.ctld > 0);
    kill(cluster.ctld, SIGHUP);
    char *log = NULL;
    for (int i = 0; i < 100; i++) {
        free(log);
        log = harness_read_file(cluster.ctld_log);
        if (strstr(log, "(keeping the previous configuration)"))
            break;
        assert_true(i < 99);
        usleep(50000);
    }
    assert_non_null(strstr(log, "MinJobAge must be a whole number"));
    free(log);
    /* a good file again (for scontrol), not yet read by the controller */
    assert_int_equal(harness_cluster_write_conf(&cluster, "MinJobAge=8\n"), 0);
    char *out = scontrol(0, "show", "config", NULL);
    expect_config_line(out, "MinJobAge", "7 sec");
    free(out);
    assert_int_equal(harness_cluster_write_conf(&cluster, NULL), 0);
}

static void test_controller_down(void **state)
{
    int status = harness_ctld_stop(&cluster, SIGTERM);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    char *log = harness_read_file(cluster.ctld_log);
    assert_non_null(strstr(log, "terminating on signal 15"));
    free(log);

    char *out = scontrol(1, "ping", NULL, NULL);
    assert_string_equal(out, "Slurmctld(primary) at 127.0.0.1 is DOWN\n"
                             "*****************************************\n"
                             "** RESTORE SLURMCTLD DAEMON TO SERVICE **\n"
                             "*****************************************\n");
    free(out);
    char *err = NULL;
    out = scontrol(1, "show", "config", &err);
    assert_string_equal(out, "");
    assert_string_equal(err, "slurm_load_ctl_conf error: Unable to contact slurm controller "
                             "(connect failure)\n");
    free(out);
    free(err);
}

/* Start tessera-ctld (daemon_flag "-D" or NULL for daemon mode) and expect exit status 1
 * with message in the last line of stderr; in daemon mode that line is all there is. */
static void expect_start_failure(const char *daemon_flag, const char *message)
{
    char bin[512];
    snprintf(bin, sizeof(bin), "%s/tessera-ctld", TESSERA_BIN_DIR);
    char *argv[] = {bin, "-f", cluster.conf, (char *)daemon_flag, NULL};
    char *out = NULL, *err = NULL;
    int rc = harness_run(argv, NULL, &out, &err, 20000);
    assert_int_equal(rc, 1);
    size_t len = strlen(err);
    assert_true(len > 0 && err[len - 1] == '\n');
    err[len - 1] = '\0';
    char *last = strrchr(err, '\n') ? strrchr(err, '\n') + 1 : err;
    if (!strstr(last, message))
        fail_msg("expected '%s' in the last line of stderr: %s", message, err);
    if (!daemon_flag && last != err)
        fail_msg("more than one line on stderr in daemon mode: %s", err);
    free(out);
    free(err);
}

static void test_startup_failures(void **state)
{
    char expect[512];
    assert_int_equal(harness_cluster_write_conf(&cluster, "Bogus=1\n"), 0);
    snprintf(expect, sizeof(expect), "tessera-ctld: error: %s:9: unknown key 'Bogus'",
             cluster.conf);
    expect_start_failure("-D", expect);
    expect_start_failure(NULL, expect); /* daemon mode reports it too */

    /* MUNGE unreachable */
    char text[1024];
    snprintf(text, sizeof(text),
             "ClusterName=itest\nCtldHost=127.0.0.1\nCtldPort=%u\nStateSaveLocation=%s\n"
             "AuthInfo=socket=%s/nowhere.socket\n",
             cluster.ctld_port, cluster.state, cluster.dir);
    assert_int_equal(harness_write_file(cluster.conf, text, 0644), 0);
    expect_start_failure("-D", "tessera-ctld: error: MUNGE does not work (socket ");
    expect_start_failure(NULL, "MUNGE daemon unreachable");

    /* port taken */
    assert_int_equal(harness_cluster_write_conf(&cluster, NULL), 0);
    assert_int_equal(harness_ctld_start(&cluster), 0);
    snprintf(expect, sizeof(expect),
             "tessera-ctld: error: cannot listen on 127.0.0.1 port %u: Address already in use",
             cluster.ctld_port);
    expect_start_failure("-D", expect);
    expect_start_failure(NULL, expect);
    harness_ctld_stop(&cluster, SIGTERM);

    /* a state folder that belongs to another cluster */
    snprintf(text, sizeof(text),
             "ClusterName=other\nCtldHost=127.0.0.1\nCtldPort=%u\nStateSaveLocation=%s\n"
             "AuthInfo=socket=%s\n",
             cluster.ctld_port, cluster.state, cluster.munge.socket);
    assert_int_equal(harness_write_file(cluster.conf, text, 0644), 0);
    snprintf(expect, sizeof(expect),
             "tessera-ctld: error: state in %s belongs to cluster itest, not other",
             cluster.state);
    expect_start_failure("-D", expect);
}

static void test_daemon_mode(void **state)
{
    char pidfile[400], extra[1024];
    snprintf(pidfile, sizeof(pidfile), "%s/ctld.pid", cluster.dir);
    snprintf(extra, sizeof(extra), "CtldPidFile=%s\nCtldLogFile=%s/daemon.log\n", pidfile,
             cluster.dir);
    assert_int_equal(harness_cluster_write_conf(&cluster, extra), 0);
    char bin[512];
    snprintf(bin, sizeof(bin), "%s/tessera-ctld", TESSERA_BIN_DIR);
    char *argv[] = {bin, "-f", cluster.conf, NULL};
    char *out = NULL, *err = NULL;
    assert_int_equal(harness_run(argv, NULL, &out, &err, 20000), 0);
    assert_string_equal(err, "");
    free(out);
    free(err);

    char *pidtext = harness_read_file(pidfile);
    assert_non_null(pidtext);
    pid_t pid = (pid_t)atol(pidtext);
    free(pidtext);
    assert_true(pid > 1);
    out = scontrol(0, "ping", NULL, NULL);
    assert_string_equal(out, "Slurmctld(primary) at 127.0.0.1 is UP\n");
    free(out);

    kill(pid, SIGTERM);
    /* the daemon was re-parented to this test (a child subreaper): reap it when it ends */
    int gone = 0;
    for (int i = 0; i < 200 && !gone; i++) {
        gone = waitpid(pid, NULL, WNOHANG) == pid || kill(pid, 0) != 0;
        if (!gone)
            usleep(25000);
    }
    assert_true(gone);
    assert_int_not_equal(access(pidfile, F_OK), 0); /* removed at exit */
    char logpath[400];
    snprintf(logpath, sizeof(logpath), "%s/daemon.log", cluster.dir);
    char *log = harness_read_file(logpath);
    assert_non_null(log);
    assert_non_null(strstr(log, "listening on 127.0.0.1"));
    assert_non_null(strstr(log, "next job id 1000"));
    free(log);
}

/* scontrol with any arguments: exit status, and exact stdout and stderr. */
static void expect_scontrol(const char *const args[], int rc, const char *out, const char *err)
{
    char *o = NULL, *e = NULL;
    int got = harness_cmd(&cluster, "scontrol", args, &o, &e);
    if (got != rc || strcmp(o, out) || strcmp(e, err))
        fail_msg("scontrol %s %s: exit %d, stdout '%s', stderr '%s'; expected %d, '%s', '%s'",
                 args[0], args[1] ? args[1] : "", got, o, e, rc, out, err);
    free(o);
    free(e);
}

static void test_scontrol_usage_errors(void **state)
{
    expect_scontrol((const char *[]){"foo", NULL}, 1, "", "invalid keyword: foo\n");
    expect_scontrol((const char *[]){"show", NULL}, 1, "", "too few arguments for keyword:show\n");
    expect_scontrol((const char *[]){"show", "foo", NULL}, 1, "",
                    "invalid entity:foo for keyword:show \n");
    expect_scontrol((const char *[]){"ping", "extra", NULL}, 1, "",
                    "too many arguments for keyword:ping\n");
    expect_scontrol((const char *[]){"--bogus", NULL}, 1, "",
                    "scontrol: unrecognized option '--bogus'\n"
                    "Try \"scontrol --help\" for more information\n");
    /* tools read Slurm's release from the second word; Tessera's own follows */
    static const char *const version = "slurm 22.05.8 (tessera " TESSERA_VERSION ")\n";
    expect_scontrol((const char *[]){"--version", NULL}, 0, version, "");
    expect_scontrol((const char *[]){"version", NULL}, 0, version, "");
    static const char *const cmds[] = {"sbatch", "salloc", "srun", "squeue", "scancel",
                                       "sinfo", "sacct"};
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
        char *v = NULL;
        assert_int_equal(harness_cmd(&cluster, cmds[i], (const char *[]){"-V", NULL}, &v, NULL), 0);
        assert_string_equal(v, version);
        free(v);
    }
    char *out = NULL;
    assert_int_equal(harness_cmd(&cluster, "scontrol", (const char *[]){"--help", NULL}, &out,
                                 NULL),
                     0);
    assert_non_null(strstr(out, "show config"));
    free(out);
}

static void test_scontrol_hostlists(void **state)
{
    expect_scontrol((const char *[]){"show", "hostnames", "n[1-3],m7", NULL}, 0,
                    "n1\nn2\nn3\nm7\n", "");
    expect_scontrol((const char *[]){"show", "hostlist", "n1,n2,n3,m7", NULL}, 0, "n[1-3],m7\n",
                    "");
    expect_scontrol((const char *[]){"show", "hostlist", "nid00011,nid00012,nid00001", NULL}, 0,
                    "nid[00011-00012,00001]\n", "");
    expect_scontrol((const char *[]){"show", "hostlistsorted", "n3,n1,n2,n2", NULL}, 0,
                    "n[1-3]\n", "");
    expect_scontrol((const char *[]){"show", "hostnames", NULL}, 1, "",
                    "scontrol: error: host list is empty\n");
    expect_scontrol((const char *[]){"show", "hostnames", "n[1-", NULL}, 1, "",
                    "scontrol: error: Invalid hostlist: n[1-\n");
}

/* Commands read from standard input when none is on the command line. */
static void test_scontrol_interactive(void **state)
{
    char path[400], bin[512], script[1200];
    snprintf(path, sizeof(path), "%s/cmds.txt", cluster.dir);
    assert_int_equal(harness_write_file(path, "show hostlist n1,n2\n\nbogus\nquit\nping\n", 0644),
                     0);
    snprintf(bin, sizeof(bin), "%s/scontrol", TESSERA_BIN_DIR);
    snprintf(script, sizeof(script), "exec %s < %s", bin, path);
    char *argv[] = {"/bin/sh", "-c", script, NULL};
    char *env[] = {cluster.conf_env, NULL};
    char *out = NULL, *err = NULL;
    /* the last command's status; nothing after quit runs */
    assert_int_equal(harness_run(argv, env, &out, &err, 10000), 1);
    assert_string_equal(out, "n[1-2]\n");
    assert_string_equal(err, "invalid keyword: bogus\n");
    free(out);
    free(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ping),
        cmocka_unit_test(test_show_config),
        cmocka_unit_test(test_counter_survives_restarts),
        cmocka_unit_test(test_reconfigure_on_sighup),
        cmocka_unit_test(test_controller_down),
        cmocka_unit_test(test_startup_failures),
        cmocka_unit_test(test_daemon_mode),
        cmocka_unit_test(test_scontrol_usage_errors),
        cmocka_unit_test(test_scontrol_hostlists),
        cmocka_unit_test(test_scontrol_interactive),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
