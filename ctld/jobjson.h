/* A job component's description (JobDesc) as the JSON object filters read and write
 * (docs/filters.md): one key per field that is set, named as in proto/jobdesc.proto;
 * strings as strings, numbers as numbers, flags as true/false, lists as arrays of
 * strings. Absent keys are unset fields; null is the same as absent. */
#ifndef TESSERA_COMMON_JOBJSON_H
#define TESSERA_COMMON_JOBJSON_H

#include "jobdesc.pb-c.h"

#include <stddef.h>
#include <stdint.h>

/* The object for d, as text ending in a newline (malloc'd; NULL when out of memory or
 * when a string is not UTF-8: JSON cannot carry it, and a filter could not give it back
 * unchanged). */
char *jobjson_dump(const Tessera__JobDesc *d);
/* The same with the component's "job_id" (and, for a het job component, "het_job_id" and
 * "het_job_offset") first: what activation filters get (read only: bytes that are not
 * UTF-8 are shown as '?'). */
char *jobjson_dump_job(const Tessera__JobDesc *d, uint32_t job_id, uint32_t het_job_id,
                       uint32_t het_job_offset);

/* Parse text into a new JobDesc (free with tessera__job_desc__free_unpacked). On error
 * returns a ts_err (TS_EINVAL for a text that is not such an object: unknown key, wrong
 * type, number out of range) and writes the reason into errbuf. */
int jobjson_parse(const char *text, Tessera__JobDesc **out, char *errbuf, size_t errlen);

#endif
