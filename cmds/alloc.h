/* Interactive allocations, shared by salloc and srun outside a job: submit the
 * components, wait for the grant (the controller holds the request open), watch for the
 * allocation's end, release it; sbatch -W waits here for a batch job's end. Messages are
 * Slurm's, prefixed with the command's name. */
#ifndef TESSERA_CMDS_ALLOC_H
#define TESSERA_CMDS_ALLOC_H

#include "cmds/cmdutil.h"

#include "tessera.pb-c.h"

#include <signal.h>
#include <stdint.h>

struct jobopt;

struct alloc {
    struct ctl *ctl;
    int quiet;
    uint32_t job_id;                   /* the leader's id, once submitted */
    Tessera__AllocWaitResponse *grant; /* the records as granted (owned) */
    Tessera__Response *grant_resp;
    int revoked;                       /* "has been revoked" was printed */
    int srun;                          /* srun's wording: quiet unless it has to wait */
};

/* Submit the components as an allocation ("Pending job allocation N"). Returns 0, or the
 * command's exit status after printing "Job submit/allocate failed: ...". */
int alloc_submit(struct alloc *a, const struct jobopt *opt);

enum alloc_wait_result {
    ALLOC_GRANTED,     /* a->grant holds the running components */
    ALLOC_REVOKED,     /* ended before it ran (cancelled, say): messages printed */
    ALLOC_INTERRUPTED, /* *intr was set */
};

/* Wait for the grant ("queued and waiting", "has been allocated resources", "Granted job
 * allocation N"). A lost connection (the controller restarting) is retried. */
enum alloc_wait_result alloc_wait_grant(struct alloc *a, const volatile sig_atomic_t *intr);

/* Wait until the allocation ends or is being ended: returns 1 then (after printing
 * "Job allocation N has been revoked." or the time-limit form), 0 when *intr was set. */
int alloc_watch_end(struct alloc *a, const volatile sig_atomic_t *intr);

/* Wait until the job (an allocation or a batch job) has ended, its nodes included: its
 * leader's final state and wait status. TS_EINTR when *intr was set, or the controller's
 * refusal (TS_EINVALID_JOB_ID for a job it no longer knows). */
int alloc_wait_ended(struct alloc *a, const volatile sig_atomic_t *intr, Tessera__JobState *state,
                     int32_t *status);

/* End the allocation with the command's wait status ("Relinquishing job allocation N"
 * unless it was revoked); a pending one is withdrawn. */
void alloc_release(struct alloc *a, int status);

/* Cancel it (Ctrl-C while pending), quietly. */
void alloc_cancel(struct alloc *a);

void alloc_free(struct alloc *a);

#endif
