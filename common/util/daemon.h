/* Going to the background without losing start-up errors: the parent waits on a pipe
 * for the child's verdict ("ok" or a one-line reason) and exits with it, so a daemon
 * started from a terminal or a script still fails loudly. Call before any thread exists. */
#ifndef TESSERA_COMMON_DAEMON_H
#define TESSERA_COMMON_DAEMON_H

/* In the parent: never returns (exits 0 on "ok", 1 with "prog: error: reason" otherwise).
 * In the daemon: returns the pipe's write end for daemon_report. */
int daemon_start(const char *prog);
/* Send the verdict (msg "ok", or the reason) and close fd; then stderr goes to /dev/null
 * when the verdict was "ok". fd < 0 is ignored. */
void daemon_report(int fd, const char *msg);

/* Raise the soft limit on open files to the hard limit: every connection is a descriptor,
 * and a daemon that runs out of them cannot even refuse a flood politely. Processes
 * forked afterwards get the soft limit the daemon started with back (a pthread_atfork
 * handler), so batch scripts and step daemons run with what the site set. Call once,
 * early. Returns the soft limit now in force (0 when it could not be read). */
unsigned long daemon_raise_nofile(void);

/* Write the pid to path (NULL: nothing). ts_err; errbuf says why. */
int daemon_write_pid(const char *path, char *errbuf, unsigned long errlen);

/* pattern with "%n" replaced by name (several node daemons on one machine, one file
 * each): the result in buf, which is returned. */
const char *daemon_expand_name(const char *pattern, const char *name, char *buf,
                               unsigned long len);

/* An absolute form of path (relative to the current folder) in buf. */
const char *daemon_absolute_path(const char *path, char *buf, unsigned long len);

#endif
