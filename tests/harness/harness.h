/* Test harness: temporary folders, a private MUNGE daemon, child processes, files.
 *
 * Everything a test starts is its child, in its own process group, and dies with the test
 * process (PR_SET_PDEATHSIG), so even a crashed test leaves nothing running. */
#ifndef TESSERA_TESTS_HARNESS_H
#define TESSERA_TESTS_HARNESS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* mkdtemp under $TMPDIR (or /tmp): "<tmp>/tessera-<tag>-XXXXXX", mode 0755. */
int harness_tmpdir(const char *tag, char *out, size_t len);
/* rm -rf path (refuses "/" and paths outside the temporary folder). */
int harness_rmrf(const char *path);

int harness_write_file(const char *path, const char *content, mode_t mode);
/* Whole file as a NUL-terminated malloc'd string, or NULL. */
char *harness_read_file(const char *path);

/* Start argv[0] (a path) with stdout and stderr appended to log (NULL: inherited), env
 * entries ("K=V", NULL-terminated list or NULL) added to the environment. Returns the
 * pid, or -1. */
pid_t harness_spawn(char *const argv[], char *const env[], const char *log);
/* Wait for pid to exit within timeout_ms; SIGKILL its group if it does not. Returns the
 * waitpid status, or -1 when it had to be killed. */
int harness_wait(pid_t pid, int timeout_ms);
/* Send sig to pid's process group and wait for pid as harness_wait does. */
int harness_stop(pid_t pid, int sig, int timeout_ms);

/* Run a command to completion, capturing stdout and stderr (each malloc'd, may be NULL
 * pointers to skip). Returns the exit status (0-255), 128+signal, or -1. */
int harness_run(char *const argv[], char *const env[], char **out, char **err, int timeout_ms);

/* The same as another user (setgroups, setgid, setuid in the child; the test runs as
 * root). */
int harness_run_as(char *const argv[], char *const env[], uid_t uid, gid_t gid, char **out,
                   char **err, int timeout_ms);

/* A free TCP port on 127.0.0.1 (bound and released: good enough for tests). */
uint16_t harness_free_port(void);

/* A private munged with a throw-away key in its own folder. */
struct harness_munge {
    char dir[256];
    char socket[320];
    pid_t pid;
};
int harness_munge_start(struct harness_munge *m);
void harness_munge_stop(struct harness_munge *m);

/* Remove tessera/<cluster>/<node> and the levels above it, where empty, in every cgroup
 * hierarchy mounted (v1 and v2): what a test's node daemons made (tests/harness/cgroupclean.c). */
void harness_cgroup_cleanup(const char *cluster, const char *node);

#endif
