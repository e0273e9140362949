/* How commands print job steps, as Slurm 22.05 prints them: "squeue -s" with its
 * "-o %.15i %.8j ..." formats, and the text of "scontrol show step".
 *
 * Pure functions of the records and a jobfmt context (the current time, user names): no
 * I/O besides name lookups, so the unit tests check exact text.
 *
 * A step over several components of a het job comes as one record per component, and
 * each prints under the component's own id ("544.0" and "545.0", never "544+0.0"), as
 * Slurm prints them.
 *
 * Where Tessera differs from Slurm 22.05 on purpose:
 *  - "%T" (STATE) is a step field here; Slurm refuses it ("Invalid job step format
 *    specification: T"). "squeue -s -t all" lists ended steps too, and their state is
 *    what tells them apart from running ones.
 *  - An unknown letter is an error, not a warning, as for job formats.
 *  - "scontrol show step" also shows ended steps (Slurm forgets a step when it ends), and
 *    for those adds an "EndTime=... ExitCode=a:b" line. Fields Tessera has no notion of
 *    (Network, ResvPorts, CPUFreqReq, Dist, SrunHost:Pid) and memory, which a step
 *    record does not carry, are left out.
 */
#ifndef TESSERA_COMMON_STEPFMT_H
#define TESSERA_COMMON_STEPFMT_H

#include "common/format/jobfmt.h"
#include "tessera.pb-c.h"

#include <stddef.h>

/* squeue -s's default format. */
#define STEPFMT_SQUEUE_DEFAULT "%.15i %.8j %.9P %.8u %.9M %N"

struct stepfmt; /* a compiled squeue -s format */

/* Compile a "-o/--format" string for steps: "%[.][width]X" fields with literal text
 * between them, read by the scanner squeue and sinfo share (common/format/fmtspec.h): "."
 * right-justifies, a longer value is cut to the width, no width (or 0) is the value's
 * own width, "%%" is a percent sign. Letters:
 *   %i step id (job.step)   %j name        %P partition     %u user name   %U user id
 *   %M time used            %l time limit (UNLIMITED: steps have none)
 *   %A tasks                %N nodes       %b TRES per job ("(null)": no GRES)
 *   %S start time           %T state (Tessera only)
 * Errors (ts_err TS_EOPTVALUE) name the bad letter in errbuf, worded as Slurm's squeue
 * does ("Invalid job step format specification: X"). */
int stepfmt_compile(const char *format, struct stepfmt **out, char *errbuf, size_t errlen);
void stepfmt_free(struct stepfmt *fmt);

/* The header line and one line per step, each malloc'd and ending in "\n"; NULL when out
 * of memory. A step's time runs from start_time to ctx's now, or to end_time once the
 * step has ended. */
char *stepfmt_header(const struct stepfmt *fmt);
char *stepfmt_row(const struct stepfmt *fmt, const Tessera__StepRecord *step,
                  struct jobfmt_ctx *ctx);

/* "scontrol show step": the record in Slurm's layout, lines indented by three spaces and
 * a blank line after it; oneliner (scontrol -o) puts it on one line. malloc'd. */
char *stepfmt_show(const Tessera__StepRecord *step, struct jobfmt_ctx *ctx, int oneliner);

/* Sort steps in squeue -s's default order (in place): partition name, then job id, then
 * step id, as Slurm's default step sort "P,i". */
void stepfmt_sort(Tessera__StepRecord **steps, size_t n);

#endif
