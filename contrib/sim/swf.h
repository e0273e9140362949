/* The Standard Workload Format reader of the trace simulator (contrib/sim/).
 *
 * An SWF trace is one job a line, 18 whitespace-separated numeric fields (-1: unknown;
 * any field may be fractional), and header comments starting with ';'. The reader keeps
 * what the simulator needs, with the conventions of docs/simulator.md:
 *
 * - requested processors: field 8, else field 5 (allocated);
 * - estimate: field 9, raised to the run time (field 4) where smaller or missing;
 * - a record whose run time or processor count is not positive is dropped and counted;
 * - times are whole seconds: submit rounds to the nearest second, run time and estimate
 *   round up (a job that ran 0.3 s still held its processors);
 * - "; MaxNodes: N" and "; MaxProcs: N" in the header give the machine's default size.
 *
 * Plain and gzip-compressed files are read alike (zlib reads plain files as they are).
 * Errors name the line: "trace.swf:12: expected 18 fields, found 9".
 */
#ifndef TESSERA_CONTRIB_SIM_SWF_H
#define TESSERA_CONTRIB_SIM_SWF_H

#include <stddef.h>
#include <stdint.h>

#define SWF_FIELDS 18

struct swf_job {
    uint32_t id;       /* field 1 */
    int64_t submit;    /* field 2, seconds from the log's start */
    int64_t run;       /* field 4, > 0 */
    uint32_t procs;    /* field 8, else field 5; > 0 */
    int64_t estimate;  /* field 9, at least run */
    int32_t user;      /* field 12, -1: unknown */
    int32_t group;     /* field 13, -1: unknown */
};

struct swf_trace {
    struct swf_job *jobs;  /* in file order */
    size_t njobs;
    size_t dropped;        /* records with a run time or size that is not positive */
    uint32_t max_nodes;    /* "; MaxNodes:", 0 when absent */
    uint32_t max_procs;    /* "; MaxProcs:", 0 when absent */
};

/* Reads the file at path (plain or .gz). TS_OK with *out, or TS_ENOENT (cannot open),
 * TS_ESYS (read error), TS_EINVAL (a malformed line) or TS_ENOMEM, with a one-line reason
 * in errbuf. */
int swf_read(const char *path, struct swf_trace **out, char *errbuf, size_t errlen);

/* The same from text in memory; name is used in error messages. */
int swf_parse(const char *name, const char *text, struct swf_trace **out, char *errbuf,
              size_t errlen);

/* NULL is ignored. */
void swf_destroy(struct swf_trace *t);

/* The machine the trace ran on, in processors: MaxNodes, else MaxProcs, else the largest
 * job's processors (0 for an empty trace without a header). */
uint32_t swf_machine_size(const struct swf_trace *t);

#endif
