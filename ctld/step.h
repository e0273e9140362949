/* Steps in the controller (docs/steps.md): creation for srun (ids, placement, the signed
 * credential), the records of docs/04-steps.md §3's step ids, ends reported by node daemons,
 * queries (squeue -s, scontrol show step) and scancel JOB.STEP.
 *
 * A step over several components has one record per component, all with the same step
 * id, kept with the component (struct job) in step-id order and stored in the "steps"
 * database under the component's id and the step id. What names the step is its first
 * component's own id and its step id (StepRecord.step_job_id, step_id): every component
 * counts its own step ids, so a step id alone may belong to several steps of one job.
 */
#ifndef TESSERA_CTLD_STEP_H
#define TESSERA_CTLD_STEP_H

#include "tessera.pb-c.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

struct ctld;
struct job;

struct step {
    Tessera__StepRecord *rec; /* owned */
    struct step *next;        /* the component's next step (ascending id) */
};

/* Load the signing key (JobCredentialPrivateKey, or one kept in StateSaveLocation and
 * created on first start). */
int step_cred_init(struct ctld *c, char *errbuf, size_t errlen);
void step_cred_fini(struct ctld *c);

/* Attach the stored step records to their components at start-up (after the jobs);
 * records whose job is gone are deleted. */
int step_table_load(struct ctld *c, char *errbuf, size_t errlen);
/* Free a component's steps (the job leaves memory). With forget, their records are
 * deleted from the state too. */
void step_free_all(struct ctld *c, struct job *j, int forget);

/* srun's request: on success *resp is filled (free with step_create_response_clear) and
 * the records are queued in the open batch (reply after the commit). errbuf gets the
 * message srun prints. */
int step_create(struct ctld *c, const Tessera__StepCreateRequest *req, uid_t uid,
                Tessera__StepCreateResponse *resp, char *errbuf, size_t errlen);
void step_create_response_clear(Tessera__StepCreateResponse *resp);

/* A node daemon's report that a step ended there. */
void step_node_ended(struct ctld *c, const Tessera__StepCompleteRequest *msg);
/* A node daemon registered, started at boot_time, with these jobs still there: steps
 * begun on it before that start (or in the same second: a daemon cannot take launches
 * before it has registered) and not listed died with its earlier life (its restart kills
 * what that life left) and end there as killed. */
void step_node_registered(struct ctld *c, const char *node, int64_t boot_time,
                          const uint32_t *running, size_t n);
/* The steps' observer of job changes (ctld/job_change.h): when a unit ended, its steps
 * still running end with it (CANCELLED). */
struct job_change;
void step_job_changed(struct ctld *c, const struct job_change *ch);

/* scancel JOB.STEP (text as typed: "93.2", "93+1.2"; JOB names one component, a leader's
 * own id component 0): signal the step that component's step id names, or with terminate
 * stop it and end every record of it CANCELLED. Returns a ts_err. */
int step_action(struct ctld *c, const char *text, uid_t uid, int signo, int terminate);

/* Records matching the query (owned by the controller; valid until the loop goes on). */
int step_query(struct ctld *c, const Tessera__StepQueryRequest *q,
               Tessera__StepRecord ***out, size_t *n);

#endif
