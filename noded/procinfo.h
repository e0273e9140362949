/* What /proc says about a process: when it started (which tells it from a later process
 * that got the same pid), its real uid, and its state. The node daemon checks both the
 * start time and the owner it recorded at launch before it signals a process group that
 * an earlier life of the daemon left (noded/spool.h).
 */
#ifndef TESSERA_NODED_PROCINFO_H
#define TESSERA_NODED_PROCINFO_H

#include <sys/types.h>

struct procinfo {
    unsigned long long start; /* clock ticks after boot (field 22 of /proc/PID/stat) */
    uid_t uid;                /* the real uid ("Uid:" in /proc/PID/status) */
    char state;               /* 'R', 'S', ..., 'Z' for a zombie */
    pid_t ppid;               /* its parent (field 4 of stat) */
};

/* TS_OK, TS_ENOENT when there is no such process, TS_EINVAL when /proc cannot be read
 * as expected. Both files are read through one fd of /proc/PID, so they describe the
 * same process even if the pid is reused meanwhile. */
int procinfo_read(pid_t pid, struct procinfo *out);

/* The start time of a process, 0 when it is gone. */
unsigned long long procinfo_start_time(pid_t pid);

/* 1 when pid is a live process (not a zombie) that started at start and whose real uid
 * is uid. */
int procinfo_matches(pid_t pid, unsigned long long start, uid_t uid);

/* signo to each live child of parent (from /proc/PARENT/task/PARENT/children): each is
 * pinned by a pidfd, then checked to be parent's child still, then signalled through the
 * pidfd, so a pid reused meanwhile is never signalled. Returns how many were signalled,
 * or -1 when the children cannot be listed. */
int procinfo_signal_children(pid_t parent, int signo);

/* The calling process's OOM score adjustment (/proc/self/oom_score_adj): protect (-1000)
 * keeps a job's root helpers (the batch waiter, the step daemon) from being the kernel's
 * choice when the job exceeds its memory; 0 gives the job's own processes back to it.
 * Async-signal-safe. 0 on success, -1 otherwise. */
int procinfo_oom_protect(int protect);

#endif
