/* The node daemon's spool under attack by an unprivileged user (nobody, uid 65534), and
 * what a restarted node daemon does with what its earlier life left:
 *   - the job's spool folder is root's and closed to writes: nothing can be planted there
 *     (a link root would write through, a forged process-group record), and the daemon's
 *     own records are in a folder the user cannot enter;
 *   - records naming processes that are not the ones recorded (another user's, a reused
 *     pid) kill nothing after a restart, while what the earlier life started is killed
 *     (steps) or adopted (batch scripts);
 *   - a batch script that ends while its node daemon is down keeps its exit code;
 *   - the daemon refuses to start on a spool others could write, or that is a link.
 */
#include "cluster.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cmdcheck.h"

#define NODES 3
#define NOBODY 65534

static struct harness_cluster cluster;
static char outdir[512];

static int group_setup(void **state)
{
    /* a long NodedTimeout: a node daemon may be down a while without failing its jobs */
    return harness_cluster_up(&cluster, NODES, "CPUs=4 RealMemory=2000",
                              "NodedTimeout=30\nKillWait=2\nMinJobAge=600\nMessageTimeout=5\n",
                              outdir, sizeof(outdir));
}

static int group_teardown(void **state)
{
    harness_cluster_fini(&cluster);
    return 0;
}

/* ------------------------------------------------------------------------------------ */

static void spool_path(int node, const char *rel, char *buf, size_t len)
{
    snprintf(buf, len, "%s/spool/n%d%s%s", cluster.dir, node, rel[0] ? "/" : "", rel);
}

static int path_exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

/* The start time of a process (field 22 of /proc/PID/stat), 0 when gone or a zombie. */
static unsigned long long start_time(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')');
    char state = 0;
    unsigned long long start = 0;
    if (!p || sscanf(p + 2, "%c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d "
                            "%*d %*d %*d %llu", &state, &start) != 2 || state == 'Z')
        return 0;
    return start;
}

/* A process that must survive: sleep as uid, leading a process group of its own. */
static pid_t spawn_victim(uid_t uid)
{
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(1);
        if (uid != 0 && (setgroups(0, NULL) || setgid(uid) || setuid(uid)))
            _exit(1);
        execl("/bin/sleep", "sleep", "300", (char *)NULL);
        _exit(1);
    }
    assert_true(pid > 0);
    for (int i = 0; i < 200 && !start_time(pid); i++)
        usleep(10000);
    /* exec'd and running as uid */
    char path[64];
    struct stat st;
    snprintf(path, sizeof(path), "/proc/%d", (int)pid);
    for (int i = 0; i < 200; i++) {
        if (stat(path, &st) == 0 && st.st_uid == uid)
            break;
        usleep(10000);
    }
    return pid;
}

static void stop_victim(pid_t pid)
{
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

/* How many times node's daemons registered (their log, appended by every start). */
static int registrations(int node)
{
    char *text = harness_read_file(cluster.nodes[node - 1].log);
    int n = 0;
    for (const char *p = text; p && (p = strstr(p, "registered with the controller")); p++)
        n++;
    free(text);
    return n;
}

/* Start node's daemon and wait until it has registered (the controller still shows the
 * node up from before: its time-out is long). */
static void start_noded(int node)
{
    int before = registrations(node);
    assert_int_equal(harness_noded_start(&cluster, node), 0);
    for (int i = 0; i < 150 && registrations(node) == before; i++)
        usleep(100000);
    assert_true(registrations(node) > before);
}

static void restart_noded(int node)
{
    assert_true(harness_noded_stop(&cluster, node, SIGKILL) != 0);
    start_noded(node);
}

/* ------------------------------------------------------------------------------------ */

/* The job's folder and script as nobody's job finds them: the folder root's (0711), the
 * script nobody's (0700); planting a file or a link there fails, and the daemon's state
 * folder cannot even be listed. Everything goes when the job ends. */
static void test_job_folder_is_closed_to_the_user(void **state)
{
    unsigned id = SUBMIT_AS(NOBODY, "n1",
                            "d=$(dirname $0); echo \"dir $(stat -c '%u %a' $d)\"; "
                            "echo \"script $(stat -c '%u %a' $0)\"; "
                            "touch $d/planted 2>/dev/null && echo planted; "
                            "ln -s / $d/link 2>/dev/null && echo linked; "
                            "ls $d/../state >/dev/null 2>&1 && echo state-listed; "
                            "ls $d/../state/job.$SLURM_JOB_ID >/dev/null 2>&1 && "
                            "echo record-listed; "
                            "echo done");
    wait_for(id, "%T", "COMPLETED\n", 20);
    char *text = output_with(id, "done", 5);
    assert_string_equal(text, "dir 0 711\nscript 65534 700\ndone\n");
    free(text);
    char path[600], rel[64];
    snprintf(rel, sizeof(rel), "job.%u", id);
    spool_path(1, rel, path, sizeof(path));
    assert_false(path_exists(path));
    snprintf(rel, sizeof(rel), "state/job.%u", id);
    spool_path(1, rel, path, sizeof(path));
    assert_false(path_exists(path));
}

/* nobody's job forges process-group records naming a root process (the attack on a
 * daemon that read "job.<id>/pgid" from a folder the user owned: its restart killed
 * whatever group the file named); stale records in the state folder name processes that
 * are not the ones recorded. After a restart nothing of them is killed, the job's batch
 * script is adopted (still RUNNING, cancellable), and the step the earlier life started
 * is killed. */
static void test_restart_kills_only_what_it_started(void **state)
{
    pid_t vroot = spawn_victim(0), vnobody = spawn_victim(NOBODY);
    unsigned long long sroot = start_time(vroot), snobody = start_time(vnobody);
    assert_true(sroot && snobody);
    char script[1024];
    snprintf(script, sizeof(script),
             "d=$(dirname $0); "
             "rm -f $d/pgid 2>/dev/null; echo '%d %llu' > $d/pgid 2>/dev/null && echo forged; "
             "echo '%d %llu 0' > $d/../state/job.$SLURM_JOB_ID/proc 2>/dev/null && echo forged; "
             "echo started; exec sleep 2003",
             (int)vroot, sroot, (int)vroot, sroot);
    unsigned id = SUBMIT_AS(NOBODY, "n1", script);
    wait_for(id, "%T", "RUNNING\n", 20);
    free(output_with(id, "started", 20));

    /* a step of the earlier life: killed by the restarted daemon */
    char log[600];
    snprintf(log, sizeof(log), "%s/step2517.log", cluster.dir);
    pid_t srun = harness_cmd_spawn(&cluster, "srun",
                                   (const char *const[]){"-w", "n1", "-n1", "sleep", "2517", NULL},
                                   log);
    assert_true(srun > 0);
    for (int i = 0; i < 200 && !cmdcheck_process_running("^sleep 2517"); i++)
        usleep(50000);
    assert_true(cmdcheck_process_running("^sleep 2517"));

    /* stale records: another user's process, a process that started at another time */
    struct {
        const char *name;
        pid_t pid;
        unsigned long long start;
        unsigned uid;
    } stale[] = {
        {"job.990001", vnobody, snobody, 0},      /* the owner differs */
        {"job.990002", vroot, sroot + 1, 0},      /* the start time differs */
        {"job.990003", vnobody, snobody, NOBODY}, /* a waiter is never nobody's */
        {"step.990004.0", vroot, sroot + 7, 0},
        {"step.990005.0", vnobody, snobody, NOBODY},
        {"step.990006.990007.0", vroot, sroot + 9, 0}, /* job, first component, step */
    };
    for (size_t i = 0; i < sizeof(stale) / sizeof(stale[0]); i++) {
        char rel[64], path[600], text[96];
        snprintf(rel, sizeof(rel), "state/%s", stale[i].name);
        spool_path(1, rel, path, sizeof(path));
        assert_int_equal(mkdir(path, 0700), 0);
        strcat(path, "/proc");
        snprintf(text, sizeof(text), "%d %llu %u\n", (int)stale[i].pid, stale[i].start,
                 stale[i].uid);
        assert_int_equal(harness_write_file(path, text, 0600), 0);
    }

    restart_noded(1);
    cmdcheck_expect_no_process("^sleep 2517", 10);
    int status = harness_wait(srun, 20000);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) != 0);
    assert_int_equal(start_time(vroot), sroot);
    assert_int_equal(start_time(vnobody), snobody);
    char *text = output_with(id, "started", 1);
    assert_null(strstr(text, "forged"));
    free(text);

    /* the adopted batch script is still the job's, and ends with it */
    char *st = query(id, "%T");
    assert_string_equal(st, "RUNNING\n");
    free(st);
    char sid[16];
    snprintf(sid, sizeof(sid), "%u", id);
    struct result r = RUN("scancel", sid);
    expect_ok(&r);
    result_free(&r);
    wait_for(id, "%T", "CANCELLED\n", 20);
    cmdcheck_expect_no_process("^sleep 2003", 10);
    assert_int_equal(start_time(vroot), sroot);
    assert_int_equal(start_time(vnobody), snobody);
    stop_victim(vroot);
    stop_victim(vnobody);
}

/* A file the test creates to let a job go on (jobs wait for it, polling). */
static void go_file(const char *name, char *path, size_t len)
{
    snprintf(path, len, "%s/%s", outdir, name);
}

/* A batch script that ends while its node daemon is down keeps its exit code (its waiter
 * records it); one that ends after the restart is adopted and reported as usual. */
static void test_end_while_daemon_down(void **state)
{
    char go1[700], go2[700], script[1600];
    go_file("go-quick", go1, sizeof(go1));
    go_file("go-later", go2, sizeof(go2));
    snprintf(script, sizeof(script), "while [ ! -e %s ]; do sleep 0.1; done; exit 3", go1);
    unsigned quick = SUBMIT_AS(NOBODY, "n2", script);
    snprintf(script, sizeof(script), "while [ ! -e %s ]; do sleep 0.1; done; exit 5", go2);
    unsigned later = SUBMIT_AS(NOBODY, "n2", script);
    wait_for(quick, "%T", "RUNNING\n", 20);
    wait_for(later, "%T", "RUNNING\n", 20);
    assert_true(harness_noded_stop(&cluster, 2, SIGKILL) != 0);
    assert_int_equal(harness_write_file(go1, "", 0644), 0); /* quick ends now */
    char rel[64], path[600];
    snprintf(rel, sizeof(rel), "state/job.%u/status", quick);
    spool_path(2, rel, path, sizeof(path));
    for (int i = 0; i < 200 && !path_exists(path); i++)
        usleep(100000);
    assert_true(path_exists(path));
    start_noded(2);
    wait_for(quick, "%T", "FAILED\n", 20);
    assert_string_equal(show_field(quick, "ExitCode"), "3:0");
    char *st = query(later, "%T");
    assert_string_equal(st, "RUNNING\n"); /* adopted */
    free(st);
    assert_int_equal(harness_write_file(go2, "", 0644), 0);
    wait_for(later, "%T", "FAILED\n", 20);
    assert_string_equal(show_field(later, "ExitCode"), "5:0");
}

/* tessera-noded -D for n3 in the foreground: its exit status and standard error. */
static int run_noded(char **err)
{
    char bin[512];
    snprintf(bin, sizeof(bin), "%s/tessera-noded", TESSERA_BIN_DIR);
    char *argv[] = {bin, (char *)"-D", (char *)"-f", cluster.conf, (char *)"-N",
                    (char *)"n3", NULL};
    return harness_run(argv, NULL, NULL, err, 10000);
}

static void expect_refused(const char *why)
{
    char *err = NULL;
    int rc = run_noded(&err);
    if (rc != 1 || !err || !strstr(err, "is unsafe") || !strstr(err, why) ||
        count_lines(err) != 1)
        fail_msg("tessera-noded exit %d, expected a refusal naming '%s':\n%s", rc, why, err);
    free(err);
}

/* The daemon starts only on a spool that is root's and closed to others. */
static void test_unsafe_spool_refused(void **state)
{
    char node[600], moved[620], st[600];
    spool_path(3, "", node, sizeof(node));
    spool_path(3, "state", st, sizeof(st));
    snprintf(moved, sizeof(moved), "%s.real", node);
    harness_noded_stop(&cluster, 3, SIGTERM);

    assert_int_equal(chmod(node, 0777), 0);
    expect_refused("mode 0777");
    assert_int_equal(chmod(node, 0775), 0);
    expect_refused("mode 0775");
    assert_int_equal(chmod(node, 0755), 0);
    assert_int_equal(chown(node, NOBODY, NOBODY), 0);
    expect_refused("owned by uid 65534");
    assert_int_equal(chown(node, 0, 0), 0);
    assert_int_equal(chmod(st, 0755), 0);
    expect_refused("mode 0755");
    assert_int_equal(chmod(st, 0700), 0);
    assert_int_equal(rename(node, moved), 0);
    assert_int_equal(symlink(moved, node), 0);
    expect_refused("a link");
    assert_int_equal(unlink(node), 0);

    /* missing: made, root's, 0755, and the daemon serves */
    assert_int_equal(harness_rmrf(moved), 0);
    start_noded(3);
    struct stat sb;
    assert_int_equal(stat(node, &sb), 0);
    assert_int_equal(sb.st_uid, 0);
    assert_int_equal(sb.st_mode & 07777, 0755);
    assert_int_equal(stat(st, &sb), 0);
    assert_int_equal(sb.st_mode & 07777, 0700);
    unsigned id = SUBMIT_AS(NOBODY, "n3", "true");
    wait_for(id, "%T", "COMPLETED\n", 20);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_job_folder_is_closed_to_the_user),
        cmocka_unit_test(test_restart_kills_only_what_it_started),
        cmocka_unit_test(test_end_while_daemon_down),
        cmocka_unit_test(test_unsafe_spool_refused),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
