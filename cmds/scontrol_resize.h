/* After "scontrol update jobid=N NumNodes=..." from inside a job: the scripts that bring
 * the shell's SLURM_* variables in line with the job's new size (docs/job-states.md,
 * section 7). */
#ifndef TESSERA_CMDS_SCONTROL_RESIZE_H
#define TESSERA_CMDS_SCONTROL_RESIZE_H

#include "tessera.pb-c.h"

#include <stddef.h>

/* The script for sh (csh = 0) or csh (csh = 1): one line per variable of the job's size
 * that is set in this environment (as Slurm, only those), the others' counts unset.
 * Returns a malloc'd text, or NULL when out of memory. */
char *scontrol_resize_script(const Tessera__JobRecord *job, int csh);

/* Writes slurm_job_<id>_resize.sh and .csh in the current folder (as whoever runs the
 * command, never through a symbolic link) and prints how to use them. 0, or 1 after an
 * error line. Only when SLURM_JOBID is set: elsewhere there is no job shell to update. */
int scontrol_resize_write(const Tessera__JobRecord *job);

#endif
