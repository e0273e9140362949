/* A job's private data: its script, the environment it was submitted with and the
 * script's arguments. Only the job's owner and administrators may have them, and only
 * through the job_script request (scontrol write batch_script); every other answer that
 * carries job records carries them without (docs/protocol.md). */
#ifndef TESSERA_CTLD_JOB_PRIVATE_H
#define TESSERA_CTLD_JOB_PRIVATE_H

#include "tessera.pb-c.h"

#include <stddef.h>

/* Shallow copies of records without their private data, for an answer. */
struct job_public;

/* Point each of recs[0..n) at a copy of itself without script, environment and argv (the
 * copies share every other field with the originals: pack the answer before the
 * originals change, then free the copies). NULL when out of memory (recs unchanged). */
struct job_public *job_public_records(Tessera__JobRecord **recs, size_t n);
void job_public_free(struct job_public *p);

#endif
