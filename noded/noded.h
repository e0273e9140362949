/* The node daemon: one per node name, on that node's port. It registers with the
 * controller and sends heartbeats (noded/link.c), runs batch scripts as their users in
 * process groups of their own, signals and terminates them, and reports their ends until
 * the controller acknowledges (noded/job.c). One event loop owns everything.
 *
 * The daemon is a child subreaper: processes a job leaves behind are re-parented to it
 * and reaped, never to init. Each batch script runs under a root waiter that records its
 * end in the daemon's root-only state folder, and each process group's leader is recorded
 * there (noded/spool.h): a restarted daemon adopts the batch scripts that still run,
 * reports those that ended meanwhile, and kills the steps its previous life left, after
 * checking that each recorded process is still the one it started.
 */
#ifndef TESSERA_NODED_NODED_H
#define TESSERA_NODED_NODED_H

#include "noded/deadline.h"

#include "common/gres/gres_conf.h"
#include "common/rpc/rpc_server.h"
#include "tessera.pb-c.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

struct conf;
struct conf_node;
struct loop;
struct loop_timer;
struct rpc_peer;
struct hashmap;
struct cred_key;
struct cred_replay;
struct revoked;
struct containment;
struct rusage;
struct stepstatus_usage;

struct nd_job;
struct bcast_writer;
struct noded;

/* A step as the node names it (docs/steps.md, "Step ids"): the step is its first
 * component's own id and its step id, unique where the step id alone is not (every
 * component counts its own); the job is the leader's id (revocation, the job's end). */
struct nd_step_id {
    uint32_t job_id;       /* the leader's id */
    uint32_t step_job_id;  /* the step's first component's own id; 0: not known (a record
                            * or a request from an older version) */
    uint32_t step_id;
};

/* The id printed for the step: step_job_id, or the job's while it is not known. */
uint32_t nd_step_shown_id(const struct nd_step_id *id);

/* A step of a job running here: its step daemon (tessera-stepd) leads a session holding
 * the step's tasks. */
struct nd_step {
    struct nd_step *next;
    struct noded *nd;
    struct nd_job *job;
    struct nd_step_id id;      /* id.job_id is job->id */
    pid_t pid;                 /* the step daemon, leader of the step's process group */
    unsigned long long start;  /* its start time (/proc), to tell it from a reused pid */
    uid_t uid;                 /* the step's user (may signal it) */
    int ctl_fd;                /* the step daemon's standard input: "T" asks it to end its
                                * tasks (SIGKILL after KillWait) */
    int terminating;
    struct deadline kill_after;  /* SIGKILL to the whole group if the daemon hangs */
};

/* A job with processes on this node: its batch script, its steps, or both. */
struct nd_job {
    struct noded *nd;
    uint32_t id;               /* the leader's id */
    pid_t pid;                 /* the batch script's waiter (root, leader of the script's
                                * process group); 0: none */
    unsigned long long start;  /* the waiter's start time (/proc), to tell it from reuse */
    int batch;
    int adopted;               /* the waiter is an earlier life's: not our child, watched
                                * by polling, checked before each signal */
    int terminating;           /* SIGTERM sent; SIGKILL follows after KillWait */
    struct deadline kill_after;
    struct loop_timer *poll_timer; /* adopted: is the waiter still there? */
    struct nd_step *steps;
    /* the batch script's owner and error file, for a notice the daemon adds to it (the
     * OOM line); NULL for an adopted script */
    uid_t uid;
    gid_t gid;
    char *user_name, *work_dir, *err_path;
};

/* An end waiting for the controller's acknowledgement: a job's (batch script, or all its
 * processes after a terminate) or a step's on this node (noded/report.c). The message's
 * usage, when set, points at the report's own, so it lives as long. */
struct nd_report {
    struct nd_report *next;
    int is_step;
    Tessera__JobCompleteRequest msg;
    Tessera__StepCompleteRequest step;
    Tessera__AcctUsage usage;
    int in_flight;
    int persisted;             /* its file is in the state folder */
    int warned;                /* a refusal was logged */
    unsigned backoff_ms;       /* after a refusal: the wait before the next try */
    uint64_t retry_at;         /* loop ms before which it is not sent again */
};

struct noded {
    struct conf *conf;
    char *conf_path;
    const struct conf_node *node;
    char *name;
    char spool[512];           /* SpoolDir/<name> */
    int spool_fd;              /* that folder (noded/spool.h) */
    int state_fd;              /* its state/ folder: the daemon's records */
    struct loop *loop;
    struct rpc_server *server;
    time_t boot_time;
    int exit_code;
    int pid_written;

    /* the controller (noded/link.c) */
    struct rpc_peer *ctl;
    int registered;
    int registering;
    unsigned heartbeat_secs;
    struct loop_timer *link_timer;  /* next heartbeat, or next registration attempt */
    struct nd_report *reports, *reports_tail; /* noded/report.c */
    uint64_t report_seq;
    struct loop_timer *report_timer;  /* the next refused report's retry */
    int reports_persisted;            /* report files in the state folder */
    int reports_cap_warned;

    /* jobs (noded/job.c) */
    struct hashmap *jobs;      /* id -> struct nd_job */

    /* step launches (noded/step.c) */
    struct cred_key *cred_key; /* verifies step credentials: configured, or the
                                * controller's (registration) */
    struct cred_replay *replay;
    struct revoked *revoked;   /* jobs ended here: their credentials are refused */
    /* file broadcasts (noded/bcast.c) */
    struct bcast_writer *bcast_writers; /* children writing a block now */
    unsigned bcast_nwriters;
    /* job containers (noded/containment.c; NULL with proctrack/pgid) */
    struct containment *containment;
    char contain_failure[640]; /* why jobs cannot be contained; "": they can (or need not) */
    /* generic resources (noded/gres.c) */
    struct gres_units gres;
};

struct noded_options {
    const char *conf_path;
    const char *node_name;
    int foreground;
    int verbose;
};

int noded_create(const struct noded_options *opts, struct noded **out, char *errbuf,
                 size_t errlen);
int noded_run(struct noded *nd);
void noded_destroy(struct noded *nd);

/* noded/bcast.c: sbcast's blocks, written by a child that became the job's user; the
 * answer leaves when the child ended. */
void bcast_write(struct noded *nd, struct rpc_request *req, const Tessera__FileBcastRequest *msg);
void bcast_teardown(struct noded *nd);

/* noded/link.c */
int link_start(struct noded *nd);
void link_stop(struct noded *nd);
/* The line failed under a request: register again (after a second), then resend. */
void link_lost(struct noded *nd, int err);
/* The controller handed its public key (PEM) at registration. */
void link_take_cred_key(struct noded *nd, const char *pem);

/* noded/report.c */
/* Queue a job end for the controller (kept on disk, sent now if registered, else after
 * registering). batch: the batch script ended, and usage (NULL: unknown) is what it used,
 * as wait4 measured it (the report's usage then names this node). */
void report_job_end(struct noded *nd, uint32_t job_id, int status, int batch,
                    const struct stepstatus_usage *usage);
/* The batch script's end, with why it could not start ("" or NULL: it started), which
 * becomes the job's reason. */
#define JOB_WHY_MAX (PATH_MAX + 256)
void report_batch_end(struct noded *nd, uint32_t job_id, int status,
                      const struct stepstatus_usage *usage, const char *why);
/* The same for a step's end on this node (status: the worst task wait status; usage:
 * what its tasks used, NULL when unknown). */
void report_step_end(struct noded *nd, const struct nd_step_id *id, int status,
                     const struct stepstatus_usage *usage);
/* Send what is due (registered, not in flight, no back-off pending). */
void reports_send(struct noded *nd);
/* The line broke: nothing is in flight any more. */
void reports_line_lost(struct noded *nd);
/* Start-up: the reports an earlier life left on disk, queued in their order. */
void reports_load(struct noded *nd);
/* Shutdown: forget them in memory (their files stay for the next start). */
void reports_free(struct noded *nd);

/* noded/job.c */
int job_table_create(struct noded *nd);
void job_table_destroy(struct noded *nd);
int job_launch_batch(struct noded *nd, const Tessera__BatchLaunchRequest *req, char *errbuf,
                     size_t errlen);
/* Signal a job's processes here that scope names (its batch script's group and its steps,
 * the steps alone, or the batch shell alone); terminate (all of them): SIGCONT+SIGTERM,
 * SIGKILL after kill_wait (a later terminate may bring the SIGKILL forward, never put it
 * off). TS_OK also when the job has no processes here. */
int job_signal(struct noded *nd, uint32_t job_id, int signo, int terminate, unsigned kill_wait,
               Tessera__JobSignalScope scope);
/* The controller does not run job_id here (registration, heartbeat): its credentials are
 * revoked and its processes killed, unless they are being ended already (within
 * KillWait). */
void job_kill_listed(struct noded *nd, uint32_t job_id);
/* Ids of the jobs with processes here, and of ends not yet acknowledged. */
size_t job_running_ids(struct noded *nd, uint32_t **ids);
/* The job's entry, made (without processes) when missing; NULL when out of memory. */
struct nd_job *job_get_or_add(struct noded *nd, uint32_t job_id);
/* A process of j ended: when nothing of it is left, report the end of a terminate and
 * forget it. */
void job_maybe_done(struct noded *nd, struct nd_job *j);
/* A batch script's record (the folder recfd) left by an earlier life of the daemon: its
 * waiter still runs (adopted: watched, signalled, reported as ours), or the end it recorded
 * is reported, or nothing is known and the record goes (the controller, not hearing of the
 * job, ends it). */
void job_recover(struct noded *nd, uint32_t job_id, int recfd);

/* noded/step.c */
int step_setup(struct noded *nd, char *errbuf, size_t errlen);
void step_teardown(struct noded *nd);
/* srun's launch (uid: the proven requester). errbuf gets the refusal's reason. */
int step_launch(struct noded *nd, const Tessera__StepLaunchRequest *req, uid_t uid,
                char *errbuf, size_t errlen);
/* Signal a step's tasks (uid: the requester; the controller's or the step's user). A
 * terminate from the step's user waits KillWait whatever kill_wait it asks for; root's
 * and SlurmUser's wait what they ask. */
int step_signal(struct noded *nd, const Tessera__StepSignalRequest *req, uid_t uid);
/* job_id ended or is being ended here: launches with its credentials issued until now are
 * refused (noded/revoked.h). */
void step_revoke(struct noded *nd, uint32_t job_id);
/* Signal every step of j. */
void step_signal_all(struct noded *nd, struct nd_job *j, int signo);
/* A step daemon's record left by an earlier life: a step daemon still running (checked to
 * be the one recorded) is killed with its group; either way the step's end here is
 * reported (what its daemon recorded, else killed). */
void step_recover(struct noded *nd, const struct nd_step_id *id, int recfd);
/* End a step: SIGCONT and SIGTERM to its group, and its step daemon kills the tasks left
 * after kill_wait seconds (it must outlive them to report their ends); the group is
 * killed outright if the daemon is still there well after that. A step already ending
 * gets the shorter of the two waits, here and in its step daemon. */
void step_terminate(struct noded *nd, struct nd_step *s, unsigned kill_wait);

/* noded/rpc.c: the handler table, and the roles a caller holds (the server's roles_of) */
extern const struct rpc_handler noded_rpc_handlers[];
extern const size_t noded_rpc_nhandlers;
unsigned noded_rpc_roles(void *arg, uid_t uid);

#endif
