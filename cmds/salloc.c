/* salloc: obtain an allocation (of one or more components), run a command in it here,
 * and release it when the command exits (docs/03-env.md §3, docs/08-ops.md §2.3).
 *
 * The command runs with salloc's own environment plus the allocation's SLURM_* variables
 * (common/job/jobenv.c, "salloc" context). While it runs, salloc watches the allocation: if
 * it is cancelled or times out, salloc says so, and the command goes on (as Slurm's
 * does); its steps will find no allocation. Exit status: the command's; a command killed
 * by SIGHUP, SIGINT, SIGQUIT or SIGKILL counts as 0 and by another signal as 1, as
 * Slurm's salloc reports them. SIGTERM and SIGHUP to salloc go on to the command, and the
 * allocation is released once it ends; while pending they withdraw the request, as
 * Ctrl-C does.
 */
#include "cmds/alloc.h"
#include "cmds/cmdutil.h"

#include "common/conf/conf.h"
#include "common/job/jobenv.h"
#include "common/jobopt/jobopt.h"
#include "common/util/errors.h"
#include "common/util/execpath.h"
#include "common/util/version.h"

#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define PROG "salloc"

extern char **environ;

static volatile sig_atomic_t got_int;  /* Ctrl-C, SIGTERM or SIGHUP while pending */
static volatile sig_atomic_t got_term; /* SIGTERM or SIGHUP while the command runs */
static volatile sig_atomic_t wake;     /* any: ends a wait for the controller */

static void on_int(int sig)
{
    got_int = 1;
    if (sig != SIGINT)
        got_term = sig;
    wake = 1;
}

static void on_chld(int sig)
{
    (void)sig;
    wake = 1;
}

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: salloc [OPTIONS(0)...] [ : [OPTIONS(N)...]] [command(0) [args(0)...]]\n"
            "\n"
            "Components of a heterogeneous allocation are separated by a lone \":\".\n"
            "Without a command, $SHELL runs.\n"
            "\n"
            "  -A, --account=name          charge the job to this account\n"
            "      --begin=time            defer the allocation until this time\n"
            "      --comment=text          arbitrary comment\n"
            "  -C, --constraint=list       required node features (a&b, a|b)\n"
            "  -c, --cpus-per-task=n       CPUs per task\n"
            "  -d, --dependency=type:id    defer until the condition on other jobs holds\n"
            "      --deadline=time         remove the job if it cannot end by then\n"
            "  -D, --chdir=path            working directory\n"
            "      --exclusive             whole nodes\n"
            "  -H, --hold                  submit held\n"
            "  -J, --job-name=name         name of the job\n"
            "  -L, --licenses=names        licences (first component only)\n"
            "      --mem=size              memory per node (MB without a unit)\n"
            "      --mem-per-cpu=size      memory per CPU (MB without a unit)\n"
            "  -N, --nodes=min[-max]       number of nodes\n"
            "  -n, --ntasks=n              number of tasks\n"
            "      --nice[=value]          lower the priority\n"
            "      --ntasks-per-node=n     tasks per node\n"
            "  -p, --partition=name        partition\n"
            "  -q, --qos=name              quality of service\n"
            "  -t, --time=limit            time limit\n"
            "      --time-min=limit        smallest acceptable time limit\n"
            "  -w, --nodelist=hosts        run on these nodes\n"
            "  -x, --exclude=hosts         do not run on these nodes\n"
            "  -Q, --quiet                 fewer messages\n"
            "  -v, --verbose               more messages\n"
            "  -h, --help                  this text\n"
            "  -V, --version               print the version\n");
}

/* The command to run: the one given, else the user's shell. */
static char **command_of(const struct jobopt *opt, char **shell_argv)
{
    if (opt->command && opt->command[0])
        return opt->command;
    const char *shell = getenv("SHELL");
    if (!shell || !*shell) {
        struct passwd *pw = getpwuid(getuid());
        shell = pw && pw->pw_shell && *pw->pw_shell ? pw->pw_shell : "/bin/sh";
    }
    shell_argv[0] = (char *)shell;
    shell_argv[1] = NULL;
    return shell_argv;
}

static char **allocation_env(const struct alloc *a)
{
    const Tessera__AllocWaitResponse *g = a->grant;
    char cluster[256] = "";
    if (a->ctl->conf->cluster_name)
        snprintf(cluster, sizeof(cluster), "%s", a->ctl->conf->cluster_name);
    struct jobenv_context ctx = {.cluster = cluster};
    return jobenv_salloc((const Tessera__JobRecord *const *)g->components, g->n_components,
                         environ, &ctx);
}

/* The command in the foreground of the terminal, when salloc is: job control keeps
 * working in an interactive shell. */
static int foreground_tty(void)
{
    return isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();
}

/* The command's program, found as Slurm's salloc finds it (PATH, then the current
 * folder), before the fork: a miss is said once, plainly. */
static int find_command(const char *prog, char **envp, char *exe, size_t len)
{
    const char *path = NULL;
    for (size_t i = 0; envp[i]; i++)
        if (!strncmp(envp[i], "PATH=", 5))
            path = envp[i] + 5;
    if (execpath_find(prog, path, exe, len) == TS_OK)
        return 0;
    cmd_error(PROG, "Unable to find command \"%s\"", prog);
    return -1;
}

static pid_t start_command(char **argv, const char *exe, char **envp, int tty)
{
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    if (tty)
        setpgid(0, 0);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    for (int s = 1; s < NSIG; s++)
        if (s != SIGKILL && s != SIGSTOP)
            signal(s, SIG_DFL);
    execve(exe, argv, envp);
    fprintf(stderr, "%s: error: Unable to exec command \"%s\": %s\n", PROG, exe, strerror(errno));
    _exit(1);
}

/* Slurm's salloc: a command ended by a signal a user sends to stop it counts as a normal
 * end (0); any other signal as 1. */
static int exit_code(int status)
{
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    switch (WTERMSIG(status)) {
    case SIGHUP:
    case SIGINT:
    case SIGQUIT:
    case SIGKILL:
        return 0;
    default:
        return 1;
    }
}

/* Run the command and watch the allocation meanwhile. Returns its wait status. */
static int run_command(struct alloc *a, char **argv)
{
    char **envp = allocation_env(a);
    if (!envp) {
        cmd_error(PROG, "%s", ts_strerror(TS_ENOMEM));
        return 1 << 8;
    }
    char exe[PATH_MAX];
    if (find_command(argv[0], envp, exe, sizeof(exe))) {
        jobenv_free(envp);
        return 1 << 8;
    }
    int tty = foreground_tty();
    signal(SIGINT, SIG_IGN); /* the command's to handle; salloc waits for it */
    signal(SIGQUIT, SIG_IGN);
    signal(SIGTTOU, SIG_IGN);
    pid_t pid = start_command(argv, exe, envp, tty);
    jobenv_free(envp);
    if (pid < 0) {
        cmd_error(PROG, "fork: %s", strerror(errno));
        return 1 << 8;
    }
    if (tty) {
        setpgid(pid, pid);
        tcsetpgrp(STDIN_FILENO, pid);
    }
    int status = 0;
    int watching = 1;
    for (;;) {
        wake = 0; /* before the check: an exit after it wakes the watch */
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid || (w < 0 && errno != EINTR))
            break;
        if (got_term) { /* salloc is told to end: the command first, then the allocation */
            kill(tty ? -pid : pid, got_term);
            got_term = 0;
        }
        if (watching) {
            if (alloc_watch_end(a, &wake))
                watching = 0; /* revoked: the command goes on, as Slurm's does */
        } else if (waitpid(pid, &status, 0) == pid) {
            break;
        }
    }
    if (tty)
        tcsetpgrp(STDIN_FILENO, getpgrp());
    return status;
}

/* The command, once its options are parsed (cmd_job_main frees them). */
static int salloc_run(struct jobopt *opt, const struct jobopt_input *in)
{
    cmd_fit_nodes_to_tasks(PROG, opt);
    struct sigaction sa = {.sa_handler = on_int};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sa.sa_handler = on_chld;
    sa.sa_flags = SA_NOCLDSTOP;
    sigaction(SIGCHLD, &sa, NULL);

    struct ctl ctl;
    struct alloc a = {.ctl = &ctl, .quiet = opt->quiet};
    int rc = 1;
    if (cmd_set_origin(opt, in->cwd)) {
        cmd_error(PROG, "%s", ts_strerror(TS_ENOMEM));
        return 1;
    }
    if (ctl_load_conf(&ctl, PROG, NULL) != 0)
        return 1;
    if (alloc_submit(&a, opt) == 0) {
        switch (alloc_wait_grant(&a, &got_int)) {
        case ALLOC_GRANTED: {
            char *shell_argv[2];
            int status = run_command(&a, command_of(opt, shell_argv));
            rc = exit_code(status);
            alloc_release(&a, status);
            break;
        }
        case ALLOC_INTERRUPTED:
            alloc_cancel(&a);
            fprintf(stderr, "%s: Job allocation %u has been revoked.\n", PROG, a.job_id);
            fprintf(stderr, "%s: Job aborted due to signal\n", PROG);
            break;
        case ALLOC_REVOKED:
            break;
        }
    }
    alloc_free(&a);
    ctl_close(&ctl);
    return rc;
}

int main(int argc, char **argv)
{
    static const struct cmd_start start = {PROG, JOBOPT_SALLOC, "Job submit/allocate failed",
                                           usage, salloc_run};
    return cmd_job_main(&start, argc, argv);
}
