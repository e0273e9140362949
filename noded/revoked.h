/* Jobs whose step credentials this node no longer honours: a job that ended or was
 * terminated or killed here. A credential is a signed promise made while its job ran; it
 * stays valid for CRED_STEP_LIFETIME, so without this a user who kept one could start
 * tasks after the job ended, on a node the controller shows idle. A job's credentials
 * issued up to the moment of its revocation are refused; a requeued job that runs again
 * gets new ones, issued later (times are milliseconds of the wall clock, so a run that
 * starts again within the same second is told apart). The revocation is kept until
 * every such credential has expired.
 *
 * A restarted daemon needs none of this: it refuses every credential issued before it
 * started (noded/step.c).
 */
#ifndef TESSERA_NODED_REVOKED_H
#define TESSERA_NODED_REVOKED_H

#include <stddef.h>
#include <stdint.h>

struct revoked;

/* keep_ms: how long a revocation is kept (at least the longest credential lifetime). */
struct revoked *revoked_create(int64_t keep_ms); /* NULL when out of memory */
void revoked_free(struct revoked *r);              /* NULL ok */

/* Revoke job_id's credentials issued at or before now_ms. Forgets revocations older than
 * keep_ms. TS_OK or TS_ENOMEM. */
int revoked_add(struct revoked *r, uint32_t job_id, int64_t now_ms);

/* TS_ECRED_REVOKED when a credential of job_id issued at issued_ms was revoked. */
int revoked_check(const struct revoked *r, uint32_t job_id, int64_t issued_ms);

/* Revocations remembered now (for tests). */
size_t revoked_count(const struct revoked *r);

#endif
