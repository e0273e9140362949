/* The step daemon (tessera-stepd): one per step and node, started by the node daemon in a
 * session of its own once a launch passed its checks (noded/step.c). It runs the step's
 * tasks of this node as their user, forwards their output to srun and srun's input to
 * task 0, serves PMI-1 to them (noded/pmi.c) with barriers gathered through srun, tells
 * srun how each task ended, and exits once everything is delivered, leaving the worst
 * task status and what the tasks used in its record folder for the node daemon's report
 * (noded/stepstatus.h, noded/spool.h, docs/steps.md); having written it, it kills its
 * process group (itself included), so what the tasks left ends with the step even when
 * the node daemon is down.
 *
 * Every task is in the step daemon's process group, so a signal to the step reaches all
 * of them; the daemon itself only takes note of such signals (it must outlive its tasks
 * to deliver their last output).
 */
#ifndef TESSERA_NODED_STEPD_H
#define TESSERA_NODED_STEPD_H

#include "noded/deadline.h"

#include "common/text/linelabel.h"

#include "tessera.pb-c.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

struct conf;
struct loop;
struct pmi;
struct rpc_peer;

struct sd_task {
    uint32_t rank;             /* global rank */
    size_t comp;               /* index into the layout's components */
    pid_t pid;
    int out_fd, err_fd;        /* our ends of its stdout and stderr pipes; -1 when closed */
    int in_fd;                 /* our end of its stdin pipe (task 0 with srun's input); -1 */
    int exited;
    int status;
    struct rusage usage;       /* as wait4 measured it at the exit (zero: never started) */
    char **env;                /* prepared before the fork */
    char **argv;               /* NULL-terminated (the message's array is not) */
    int argv_owned;            /* --multi-prog: argv and its strings are the task's own */
    const char *search;        /* where to look for a program named without a '/': the
                                * task's PATH (points into env), searched as the user */
    char *out_path, *err_path, *in_path;  /* files instead of srun ("" none) */
    int out_file, err_file, in_file;      /* their index in stepd.files; -1 none */
    int labelled_fd[2];        /* --label: the file (stdout, stderr) this daemon writes the
                                * task's lines to, read from its pipes; -1 none */
    struct linelabel label[2];
    char *launch_error;        /* why it could not start (for srun), or NULL */
};

/* A file of the tasks, opened once as the user (noded/stepd_files.c). */
struct sd_file {
    char *path;
    int flags;                 /* open(2)'s */
    int fd;                    /* -1 until opened, or when it could not be */
    int err;                   /* errno of the open; 0 when it worked */
};

/* Who the tasks run as. */
struct sd_identity {
    uid_t uid;
    gid_t gid;
    gid_t groups[256];
    int ngroups; /* -1: keep the daemon's identity */
};

struct sd_chunk_buf {          /* output waiting to go to srun in one request */
    Tessera__StepIoChunk **chunks;
    size_t n, cap;
    size_t bytes;
};

struct stepd {
    struct loop *loop;
    struct conf *conf;
    const char *node;
    int record_fd;             /* its record folder in the node daemon's state */
    int status_written;        /* the status is in the record: the group may go */
    Tessera__StepLaunchRequest *launch;
    Tessera__StepLayout *layout;
    uint32_t step_job_id;      /* with layout->step_id, what names the step (steplayout.h) */
    size_t node_index;
    struct sd_task *tasks;
    size_t ntasks;
    struct sd_file *files;     /* the tasks' distinct files */
    size_t nfiles;
    struct pmi *pmi;
    struct rpc_peer *srun;
    int srun_lost;
    int exit_code;

    /* output and exits to srun (noded/stepd_io.c) */
    struct sd_chunk_buf out;
    unsigned io_in_flight;
    int paused;                /* task fds not watched while srun catches up */
    Tessera__TaskExit **exits;
    size_t nexits;
    uint64_t oom_reported;     /* OOM kills of the step's folder srun was told of */

    /* srun's input for task 0 */
    uint8_t *in_buf;
    size_t in_len, in_off;
    int in_eof;
    int in_polling;

    int finished;
    struct deadline kill_after; /* terminate: SIGKILL to the tasks left after KillWait */
    char ctl_buf[64];           /* the node daemon's "T<wait>" lines, a partial one kept */
    size_t ctl_len;
};

/* noded/stepd.c */
int stepd_start(struct stepd *sd, char *errbuf, size_t errlen);
void stepd_stop(struct stepd *sd);
/* Called whenever something ended: exits the loop once the step is done. */
void stepd_check_done(struct stepd *sd);
/* srun cannot be reached: the step's tasks are killed, nothing more is delivered. */
void stepd_srun_lost(struct stepd *sd, int err);

/* noded/stepd_task.c */
/* Everything each local task needs, computed before any fork. */
int stepd_tasks_prepare(struct stepd *sd, char *errbuf, size_t errlen);
/* Fork and exec every local task. pmi_fds[i]: the task's end of its PMI socketpair. */
int stepd_tasks_start(struct stepd *sd, const int *pmi_fds, char *errbuf, size_t errlen);
void stepd_tasks_free(struct stepd *sd);

/* noded/stepd_files.c */
/* Open every file as id (in a child that has become the user): each gets its fd or its
 * err. TS_OK, or TS_ESYS when the child could not be started or answer (all closed). */
int stepd_files_open(const struct sd_identity *id, struct sd_file *files, size_t n);
void stepd_files_close(struct sd_file *files, size_t n);

/* noded/stepd_io.c */
int stepd_io_start(struct stepd *sd);
/* Task ended: queue its exit for srun. */
void stepd_io_task_exit(struct stepd *sd, struct sd_task *t);
/* Task t will never write or read: its pipes are closed (a task that could not start). */
void stepd_io_task_closed(struct stepd *sd, struct sd_task *t);
/* Everything queued has been delivered (or srun is gone). */
int stepd_io_idle(const struct stepd *sd);
/* All task output streams reached their end. */
int stepd_io_drained(const struct stepd *sd);
void stepd_io_stop(struct stepd *sd);

#endif
