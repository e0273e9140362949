/* The batch script's environment where Slurm builds it from the user's login: --export=NONE
 * and --export lists without ALL start from what the user's login shell sets up (read by
 * the script's own process, as the user), under the job's variables; so does
 * --get-user-env, under the whole submitter's environment; the default (--export=ALL)
 * does not. A user whose shell refuses logins (nobody: /usr/sbin/nologin)
 * runs with the minimal environment and a warning. SLURM_TASK_PID is the script's pid.
 * Expectations: Slurm 22.05 on the reference cluster (`sbatch --export=NONE --wrap env`).
 */
#include "cluster.h"

#include <pwd.h>
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
    char nodes[1024], extra[2048];
    if (harness_cluster_init(&cluster, NULL))
        return -1;
    harness_node_lines(&cluster, 2, "CPUs=2 RealMemory=1000", nodes, sizeof(nodes));
    snprintf(extra, sizeof(extra),
             "KillWait=1\nMinJobAge=600\n%s"
             "PartitionName=debug Nodes=n[1-2] Default=YES MaxTime=UNLIMITED\n",
             nodes);
    if (harness_cluster_write_conf(&cluster, extra))
        return -1;
    return harness_cluster_start(&cluster, 2, outdir, sizeof(outdir));
}

static int group_teardown(void **state)
{
    harness_cluster_fini(&cluster);
    return 0;
}

/* The submitter's environment: a PATH and a variable of its own. */
static const char *const submitter_env[] = {"PATH=/submitter/bin", "FROM_SUBMITTER=yes", NULL};

/* sbatch as uid with the submitter's environment, ending "--wrap=script"; the job's output
 * once the job has completed (malloc'd). */
static char *run_job(uid_t uid, const char *export_opt, const char *script)
{
    const char *args[] = {"--parsable", "-D", outdir, export_opt, "--wrap", script, NULL};
    char *out = NULL, *err = NULL;
    int rc = harness_cmd_full(&cluster, uid, submitter_env, "sbatch", args, &out, &err);
    if (rc != 0)
        fail_msg("sbatch %s failed (%d): %s", export_opt, rc, err);
    unsigned id = (unsigned)strtoul(out, NULL, 10);
    free(out);
    free(err);
    wait_for(id, "%T", "COMPLETED\n", 30);
    return output_with(id, "END\n", 5);
}

/* The value of NAME in env's output ("" when absent; static storage). */
static const char *value_of(const char *text, const char *name)
{
    static char buf[1024];
    char pat[128];
    snprintf(pat, sizeof(pat), "\n%s=", name);
    const char *p = strstr(text, pat);
    buf[0] = '\0';
    if (p)
        snprintf(buf, sizeof(buf), "%.*s", (int)strcspn(p + strlen(pat), "\n"), p + strlen(pat));
    return buf;
}

static void expect_var(const char *text, const char *name, const char *want)
{
    if (strcmp(value_of(text, name), want) != 0)
        fail_msg("%s=%s, expected %s in:\n%s", name, value_of(text, name), want, text);
}

/* "pid=$$" then env, then END: the script's pid is SLURM_TASK_PID. */
#define SCRIPT "echo; echo pid=$$; /usr/bin/env; echo END"

static void expect_task_pid(const char *text)
{
    const char *pid = strstr(text, "\npid=");
    assert_non_null(pid);
    char want[32];
    snprintf(want, sizeof(want), "%.*s", (int)strcspn(pid + 5, "\n"), pid + 5);
    expect_var(text, "SLURM_TASK_PID", want);
}

/* Root with --export=NONE: root's login environment (HOME, USER, LOGNAME, SHELL from the
 * passwd entry; PATH from the login, not the submitter's), the job's SLURM_* variables and
 * TESSERA_CONF over it, nothing else of the submitter's. */
static void test_export_none_login_environment(void **state)
{
    struct passwd *pw = getpwuid(0);
    assert_non_null(pw);
    char *text = run_job(0, "--export=NONE", SCRIPT);
    expect_var(text, "HOME", pw->pw_dir);
    expect_var(text, "USER", pw->pw_name);
    expect_var(text, "LOGNAME", pw->pw_name);
    expect_var(text, "SHELL", pw->pw_shell);
    expect_var(text, "TESSERA_CONF", cluster.conf);
    expect_var(text, "SLURM_EXPORT_ENV", "NONE");
    expect_var(text, "SLURM_GET_USER_ENV", "1");
    expect_var(text, "FROM_SUBMITTER", "");
    const char *path = value_of(text, "PATH");
    if (!strstr(path, "/usr/bin") || strstr(path, "/submitter/bin"))
        fail_msg("PATH=%s is not the login's", path);
    assert_null(strstr(text, "warning"));
    expect_task_pid(text);
    free(text);
}

/* A list without ALL: the login environment and the variables named. */
static void test_export_list_login_environment(void **state)
{
    struct passwd *pw = getpwuid(0);
    assert_non_null(pw);
    char *text = run_job(0, "--export=FROM_SUBMITTER,EXTRA=1", SCRIPT);
    expect_var(text, "HOME", pw->pw_dir);
    expect_var(text, "FROM_SUBMITTER", "yes");
    expect_var(text, "EXTRA", "1");
    expect_var(text, "SLURM_GET_USER_ENV", "1");
    assert_null(strstr(value_of(text, "PATH"), "/submitter/bin"));
    free(text);
}

/* The default takes the submitter's environment as it is: no login environment. */
static void test_export_all_keeps_submitter_environment(void **state)
{
    char *text = run_job(0, "--export=ALL", SCRIPT);
    expect_var(text, "PATH", "/submitter/bin");
    expect_var(text, "FROM_SUBMITTER", "yes");
    expect_var(text, "SLURM_GET_USER_ENV", "");
    expect_task_pid(text);
    free(text);
}

/* --get-user-env: the login environment under the submitter's whole environment (Slurm
 * 22.05: PATH stays the submitter's, HOME and SHELL come from the login). */
static void test_get_user_env(void **state)
{
    struct passwd *pw = getpwuid(0);
    assert_non_null(pw);
    char *text = run_job(0, "--get-user-env", SCRIPT);
    expect_var(text, "PATH", "/submitter/bin");
    expect_var(text, "FROM_SUBMITTER", "yes");
    expect_var(text, "HOME", pw->pw_dir);
    expect_var(text, "SHELL", pw->pw_shell);
    expect_var(text, "SLURM_GET_USER_ENV", "1");
    free(text);
}

/* nobody's shell refuses the login: the job still runs, as the user, with the minimal
 * environment from the passwd entry and the job's variables, and says why in its output.
 * (Slurm 22.05 runs it with the job's variables alone and logs the failure on the node.) */
static void test_export_none_refused_login(void **state)
{
    struct passwd *pw = getpwnam("nobody");
    assert_non_null(pw);
    char *text = run_job(65534, "--export=NONE", "echo; /usr/bin/id -u; " SCRIPT);
    char want[600];
    snprintf(want, sizeof(want),
             "tessera-noded: warning: the login environment of %s could not be read (the "
             "shell exited with status ",
             pw->pw_shell);
    if (strncmp(text, want, strlen(want)) != 0)
        fail_msg("no warning first in:\n%s", text);
    assert_non_null(strstr(text, "\n65534\n"));
    expect_var(text, "HOME", pw->pw_dir);
    expect_var(text, "USER", "nobody");
    expect_var(text, "LOGNAME", "nobody");
    expect_var(text, "PATH", "/usr/local/bin:/usr/bin:/bin");
    expect_var(text, "FROM_SUBMITTER", "");
    expect_var(text, "SLURM_JOB_USER", "nobody");
    expect_var(text, "TESSERA_CONF", cluster.conf);
    expect_task_pid(text);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_export_none_login_environment),
        cmocka_unit_test(test_export_list_login_environment),
        cmocka_unit_test(test_export_all_keeps_submitter_environment),
        cmocka_unit_test(test_get_user_env),
        cmocka_unit_test(test_export_none_refused_login),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
