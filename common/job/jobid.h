/* Job ids as users type them: "93" (a job, or one component by its own id) and "93+1"
 * (component 1 of het job 93). Steps ("93.0", "93+1.0") arrive with the step issue. */
#ifndef TESSERA_COMMON_JOBID_H
#define TESSERA_COMMON_JOBID_H

#include <stdint.h>

#define JOBID_MAX 0x7fffffffu /* ids are positive 31-bit numbers */

struct jobid {
    uint32_t id;        /* the number before "+" */
    int has_offset;     /* "+N" was given */
    uint32_t offset;
};

/* TS_OK or TS_EINVALID_JOB_ID (empty, not a number, zero, too large, trailing text). */
int jobid_parse(const char *s, struct jobid *out);

#endif
