/* The node daemon's spool: its folder under SpoolDir, the users' batch scripts there, and
 * the daemon's own records in a folder only it can enter. Root works here through folder
 * fds and never follows a link (common/util/safefs.h); nothing a user can write is ever read
 * or written by root.
 *
 *     SpoolDir/<node>/        the daemon's (0755): checked at start-up, owned by the
 *                             daemon's uid and writable by nobody else
 *       job.<id>/             the daemon's (0711): the user passes through, writes nothing
 *         script              the batch script: the user's (0700), created O_EXCL
 *       state/                the daemon's (0700): records, nothing of users
 *         job.<id>/           a batch script's waiter: "proc" (pid, start time, uid),
 *                             "status" (the script's end, written by the waiter)
 *         step.<id>.<sid>.<step>/  a step daemon: "proc", "status" (its tasks' end); <id>
 *                             the job's (leader's) id, <sid> the step's first
 *                             component's own id (noded.h, struct nd_step_id)
 *         report.<seq>        an end report the controller has not acknowledged (noded/report.c)
 *
 * "proc" names the leader of a process group (the waiter or the step daemon, both root):
 * a restarted daemon signals that group only while the process is alive with the start
 * time and the uid recorded, so a stale record never kills a stranger.
 */
#ifndef TESSERA_NODED_SPOOL_H
#define TESSERA_NODED_SPOOL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct noded;
struct nd_step_id;
struct stepstatus;

/* A process group's leader as its record names it. */
struct spool_proc {
    pid_t pid;
    unsigned long long start; /* its start time (/proc), to tell it from a reused pid */
    uid_t uid;                /* its real uid */
};

/* SpoolDir/<node>, made when missing and refused (one line in errbuf) when it is a link,
 * belongs to another uid, or others may write there; then state/ inside. */
int spool_open(struct noded *nd, char *errbuf, size_t errlen);
void spool_close(struct noded *nd);

/* Record folder names: "job.<id>", "step.<id>.<sid>.<step>" (above). */
void spool_job_name(uint32_t job_id, char *buf, size_t len);
void spool_step_name(const struct nd_step_id *id, char *buf, size_t len);

/* state/<name>, made anew (an earlier one removed first); its fd into *fd. */
int spool_record_make(struct noded *nd, const char *name, int *fd);
/* state/<name> opened; TS_ENOENT when there is none. */
int spool_record_open(struct noded *nd, const char *name, int *fd);
void spool_record_remove(struct noded *nd, const char *name);
/* The end recorded in state/<name>/status: TS_OK, TS_ENOENT when there is none, else why
 * it cannot be read. */
int spool_record_status(struct noded *nd, const char *name, struct stepstatus *st);

/* "proc" in a record folder, written atomically, and read back. */
int spool_proc_write(int recfd, const struct spool_proc *p);
int spool_proc_read(int recfd, struct spool_proc *p);
/* p's process is still the one recorded: alive, same start time, same real uid. */
int spool_proc_alive(const struct spool_proc *p);
/* Signal p's process group, only while spool_proc_alive(p). 1 when sent. */
int spool_proc_signal_group(const struct spool_proc *p, int signo);

/* The batch script's folder in the spool: job.<id> made anew (0711) with the script
 * (mode 0700, the user's: uid and gid, unless the daemon is not root), written through
 * an fd from an exclusive create. Its path into path. */
int spool_script_write(struct noded *nd, uint32_t job_id, const char *text, uid_t uid,
                       gid_t gid, char *path, size_t len);
/* A batch script's record and its folder, gone. */
void spool_job_forget(struct noded *nd, uint32_t job_id);

/* Start-up, after spool_open: each record an earlier life left is handed to
 * job_recover() or step_recover(); folders of the node's spool that no adopted job needs
 * (scripts, and whatever an older layout left) are removed. */
void spool_recover(struct noded *nd);

#endif
