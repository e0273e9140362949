/* The node daemon: one per node name, on that node's port. It registers with the
 * controller and sends heartbeats (noded/link.c), runs batch scripts as their users in
 * process groups of their own, signals and terminates them, and reports their ends until
 * the controller acknowledges (noded/job.c). One event loop owns everything.
 *
 * The daemon is a child subreaper: processes a job leaves behind are re-parented to it
 * and reaped, never to init. Each job's process group is recorded in the spool, so a
 * restarted daemon kills what its previous life left running.
 */
#ifndef TESSERA_NODED_NODED_H
#define TESSERA_NODED_NODED_H

#include "common/rpc_server.h"
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

/* A job with processes on this node. */
struct nd_job {
    uint32_t id;
    pid_t pid;                 /* the batch script (leader of its process group) */
    unsigned long long start;  /* the process's start time (/proc), to tell it from reuse */
    int batch;
    int terminating;           /* SIGTERM sent; SIGKILL follows after KillWait */
    struct loop_timer *kill_timer;
    char spool[600];           /* its folder in the spool */
};

/* A job end waiting for the controller's acknowledgement. */
struct nd_report {
    struct nd_report *next;
    Tessera__JobCompleteRequest msg;
    int in_flight;
};

struct noded {
    struct conf *conf;
    char *conf_path;
    const struct conf_node *node;
    char *name;
    char spool[512];           /* SpoolDir/<name> */
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
    struct nd_report *reports, *reports_tail;
    uint64_t report_seq;

    /* jobs (noded/job.c) */
    struct hashmap *jobs;      /* id -> struct nd_job */
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

/* noded/link.c */
int link_start(struct noded *nd);
void link_stop(struct noded *nd);
/* Queue a job end for the controller (sent now if registered, else after registering). */
void link_report_end(struct noded *nd, uint32_t job_id, int status, int batch);

/* noded/job.c */
int job_table_create(struct noded *nd);
void job_table_destroy(struct noded *nd);
/* Kill what a previous life of the daemon left in the spool. */
void job_clean_spool(struct noded *nd);
int job_launch_batch(struct noded *nd, const Tessera__BatchLaunchRequest *req, char *errbuf,
                     size_t errlen);
/* Signal a job's process group; terminate: SIGCONT+SIGTERM, SIGKILL after kill_wait.
 * TS_OK also when the job has no processes here. */
int job_signal(struct noded *nd, uint32_t job_id, int signo, int terminate, unsigned kill_wait);
/* Ids of the jobs with processes here, and of ends not yet acknowledged. */
size_t job_running_ids(struct noded *nd, uint32_t **ids);

/* noded/rpc.c */
extern const struct rpc_handler noded_rpc_handlers[];
extern const size_t noded_rpc_nhandlers;

#endif
