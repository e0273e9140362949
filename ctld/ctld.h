/* The controller: one struct owned by one event-loop thread (docs/architecture.md).
 *
 * Everything the controller knows lives here and is touched only by the loop thread; work
 * that blocks (MUNGE decoding, LMDB commits) runs on other threads and comes back to the
 * loop as events. */
#ifndef TESSERA_CTLD_CTLD_H
#define TESSERA_CTLD_CTLD_H

#include "common/rpc/rpc_server.h"
#include "ctld/job.h"
#include "ctld/job_change.h"
#include "ctld/node.h"

#include <stddef.h>
#include <stdint.h>
#include <time.h>

struct conf;
struct loop;
struct loop_timer;
struct sched_state;
struct sched_priority;
struct alloc_waiter;
struct alloc_unclaimed;
struct cred_key;
struct filter_run;
struct policy;
struct holidays;
struct dedicated;
struct fairshare_usage;
struct filter_submission;
struct activation;
struct store;
struct rpc_server;
struct namecache;

/* Version of the LMDB layout this controller writes (the "meta" record). */
#define CTLD_SCHEMA_VERSION 1

struct ctld {
    struct conf *conf;
    char *conf_path;
    struct loop *loop;
    struct store *store;
    struct rpc_server *server;
    time_t start_time;
    int exit_code;
    int store_low_space;          /* StateMinFreeMB not met at the last look (store_guard.c) */
    struct loop_timer *housekeeping; /* once a second: reasons, expired jobs */

    /* persistent state (ctld/state.c) */
    uint64_t next_job_id;
    struct job_table jobs;
    struct node_table nodes;      /* ctld/node.h */
    struct sched_state *sched;    /* ctld/sched.c */
    struct sched_priority *priority; /* PriorityType= (ctld/sched_order.c) */

    /* who hears of job changes, in order (ctld/job_change.h; ctld_observe_jobs) */
    job_observer_fn *job_observers[JOB_OBSERVERS_MAX];
    size_t njob_observers;

    /* salloc's requests waiting for an allocation or its end (ctld/job_alloc.c) */
    struct alloc_waiter *alloc_waiters;
    int alloc_check_posted;
    int alloc_closed;             /* shutting down: answers are dropped, nothing follows */
    struct alloc_unclaimed *alloc_unclaimed; /* started allocations nobody waits for */

    /* the scheduling policy of PolicyFile= (NULL: none; docs/policies.md) */
    struct policy *policy;
    struct holidays *holidays;    /* HolidaysFile= (NULL: always prime time) */
    struct dedicated *dedicated;  /* DedicatedTimeFile= (NULL: none) */
    struct fairshare_usage *fairshare; /* the fair-share tree and usage (fairshare_usage.c) */

    /* accounting (ctld/acct.c) */
    int64_t acct_max_span;        /* longest eligible-to-end time of any stored record */
    time_t acct_next_purge;       /* when AccountingRetention is next applied */

    /* the key step credentials are signed with (ctld/step_mgr.c) */
    struct cred_key *cred_key;
    char *cred_public_pem;

    /* filters running now (ctld/filter_run.c), and submissions waiting for theirs
     * (ctld/filter_submit.c) */
    struct filter_run *filters;
    struct filter_submission *submissions;
    struct activation *activations;   /* standing activation verdicts (filter_activate.c) */

    /* user and group names: every name the loop needs comes from here, so a slow NSS
     * costs a lookup per id every few minutes, not one per job (common/util/namecache.h) */
    struct namecache *names;
};

struct ctld_options {
    const char *conf_path;
    uint16_t port_override; /* 0: CtldPort from the configuration */
    int foreground;         /* log to stderr (-D); else CtldLogFile or syslog */
    int verbose;            /* each -v raises the log level by one */
};

/* Read the configuration, open the state, listen. On failure returns a ts_err and writes
 * a one-line reason into errbuf. Must be called before any other thread exists (it
 * blocks the signals the loop handles). */
int ctld_create(const struct ctld_options *opts, struct ctld **out, char *errbuf, size_t errlen);
/* The state behind c->conf on c->loop: StateSaveLocation opened (made when missing), the
 * jobs, steps and nodes loaded, the fair-share tree (adopted, freed on failure) in place,
 * the housekeeping timer armed.
 * ctld_create's part that needs no process set-up: unit tests build a controller with it
 * (tests/unit/ctld_fixture.c); ctld_destroy undoes it. */
struct fairshare;
int ctld_state_open(struct ctld *c, struct fairshare *tree, char *errbuf, size_t errlen);
/* Serve until SIGTERM/SIGINT; returns the exit code. */
int ctld_run(struct ctld *c);
/* Stop serving, commit what is queued, close the state. Not TS_OK when changes could not
 * be committed and were given up (none of them had been acknowledged). */
int ctld_destroy(struct ctld *c);

/* Register the observers of job changes in their documented order (ctld/job_change.h):
 * accounting, dependencies, steps, allocation waiters, fair share, activation filters,
 * the scheduler. */
int ctld_observe_jobs(struct ctld *c);

/* Re-read the configuration file (SIGHUP, scontrol reconfigure). Keeps the old one and
 * returns an error when the new one is wrong. */
int ctld_reconfigure(struct ctld *c, char *errbuf, size_t errlen);

/* ctld/state.c: load the persistent state at start-up (creating it on first start). */
int ctld_state_load(struct ctld *c, char *errbuf, size_t errlen);
/* Queue the job id counter's current value; durable with the next group commit. */
int ctld_state_save_next_job_id(struct ctld *c);

/* ctld/rpc.c: the handler table, and the roles a caller holds (the server's roles_of,
 * from the configuration of the moment). */
extern const struct rpc_handler ctld_rpc_handlers[];
extern const size_t ctld_rpc_nhandlers;
unsigned ctld_rpc_roles(void *arg, uid_t uid);

#endif
