/* Accounting in the controller (docs/accounting.md): records written in the same group
 * commit as the changes they describe, kept past MinJobAge and restarts, purged after
 * AccountingRetention months, and sacct's queries answered from the indexes. */
#ifndef TESSERA_CTLD_ACCT_H
#define TESSERA_CTLD_ACCT_H

#include "common/rpc/rpc_server.h"

#include <time.h>

struct ctld;
struct job;
struct step;

/* At start-up, after the state: read the span counter. */
int acct_init(struct ctld *c, char *errbuf, size_t errlen);

/* Accounting's observer of job changes (ctld/job_change.h): when a component's record
 * was queued (job_save) and it started, ended or was requeued since the last accounting
 * record, queue its record (and a batch job's script step) in the same batch. */
struct job_change;
void acct_job_changed(struct ctld *c, const struct job_change *ch);
/* The unit's run ends in a requeue: record each component's run as REQUEUED before the
 * component is reset to pending. */
void acct_job_requeued(struct ctld *c, struct job *j, time_t now);
/* A step record was saved: queue its accounting record. */
void acct_step_saved(struct ctld *c, const struct step *s);

/* Once a second from housekeeping: apply AccountingRetention now and then. */
void acct_housekeeping(struct ctld *c, time_t now);

void ctld_handle_acct_query(struct rpc_request *req, const Tessera__Request *msg, void *arg);

#endif
