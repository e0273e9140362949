/* An end report kept in the node daemon's root-only state folder until the controller
 * acknowledges it (noded/link.c, noded/spool.h), so that a daemon killed in between still
 * sends it after its restart: "report.<seq>" (seq: the daemon's report number, decimal)
 * holds a byte, 'J' or 'S', then the packed JobCompleteRequest or StepCompleteRequest.
 * Written atomically; a file that does not decode is not one of ours.
 */
#ifndef TESSERA_NODED_REPORTFILE_H
#define TESSERA_NODED_REPORTFILE_H

#include "tessera.pb-c.h"

#include <stddef.h>
#include <stdint.h>

#define REPORTFILE_MAX_BYTES 65536 /* a larger file is not a report */
#define REPORTFILE_MAX_FILES 10000 /* files kept at most: further reports wait in memory */

/* One report as read back: exactly one of job and step is set. */
struct reportfile {
    Tessera__JobCompleteRequest *job;
    Tessera__StepCompleteRequest *step;
};

/* 1 and the number when name is "report.<seq>". */
int reportfile_parse_name(const char *name, uint64_t *seq);

/* Write the report (job or step, the other NULL) as report.<seq> in dirfd. */
int reportfile_write(int dirfd, uint64_t seq, const Tessera__JobCompleteRequest *job,
                     const Tessera__StepCompleteRequest *step);
/* Read report.<seq>: TS_OK, TS_ENOENT, TS_EDECODE (not a report: too large, unknown kind,
 * undecodable). reportfile_clear frees what was read. */
int reportfile_read(int dirfd, uint64_t seq, struct reportfile *out);
void reportfile_clear(struct reportfile *f);
void reportfile_remove(int dirfd, uint64_t seq);

/* The numbers of the report files in dirfd, ascending (at most max); malloc'd. */
size_t reportfile_list(int dirfd, size_t max, uint64_t **seqs);

#endif
