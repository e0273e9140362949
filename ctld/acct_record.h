/* Accounting records (docs/accounting.md): what the controller keeps of a job component
 * or a step once it ran or ended, how they are built from the live records, and the keys
 * of the three accounting databases.
 *
 *   acct_jobs    job id (8 bytes)                      -> AcctJob
 *   acct_steps   job id (8 bytes) + step id (4 bytes)  -> AcctStep
 *   acct_by_end  end time (8 bytes) + job id (8 bytes) -> empty; end 0 while it runs
 *
 * All numbers big-endian, so cursor order is numeric order. */
#ifndef TESSERA_COMMON_ACCT_RECORD_H
#define TESSERA_COMMON_ACCT_RECORD_H

#include "tessera.pb-c.h"

#include <stddef.h>
#include <stdint.h>

/* The batch script's step id, as Slurm numbers it (it prints as "<job>.batch"). */
#define ACCT_STEP_BATCH 0xfffffffbu

#define ACCT_JOB_KEY_LEN 8
#define ACCT_STEP_KEY_LEN 12
#define ACCT_END_KEY_LEN 16

void acct_job_key(uint8_t out[ACCT_JOB_KEY_LEN], uint32_t job_id);
void acct_step_key(uint8_t out[ACCT_STEP_KEY_LEN], uint32_t job_id, uint32_t step_id);
void acct_end_key(uint8_t out[ACCT_END_KEY_LEN], int64_t end_time, uint32_t job_id);
/* The job id of an acct_steps or acct_by_end key (0 for a key of the wrong length). */
uint32_t acct_step_key_job(const void *key, size_t len);
uint32_t acct_end_key_job(const void *key, size_t len);
int64_t acct_end_key_time(const void *key, size_t len);

/* Fill *out (initialised by the caller) from a live component. Strings point into rec
 * (or are static): out lives no longer than rec and is not freed with free_unpacked. */
void acct_job_from_record(Tessera__AcctJob *out, const Tessera__JobRecord *rec,
                          const char *cluster);
/* One component's share of a step, the same way. */
void acct_step_from_record(Tessera__AcctStep *out, const Tessera__StepRecord *rec);
/* The batch script of a batch job's leader, as a step: it runs on the batch host from the
 * job's start, and ends with the job (its state follows the script's wait status, or the
 * job's end when the script was ended by a cancel, a time-out or a node failure). */
void acct_batch_step_from_record(Tessera__AcctStep *out, const Tessera__JobRecord *leader);

/* Pack into a malloc'd buffer. NULL on ENOMEM. */
uint8_t *acct_job_pack(const Tessera__AcctJob *j, size_t *len);
uint8_t *acct_step_pack(const Tessera__AcctStep *s, size_t *len);

#endif
