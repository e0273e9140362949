/* Time a job has used, the one rule squeue, scontrol, accounting and the controller's
 * limits share. */
#ifndef TESSERA_COMMON_JOB_JOBTIME_H
#define TESSERA_COMMON_JOB_JOBTIME_H

#include "tessera.pb-c.h"

#include <stdint.h>
#include <time.h>

/* Seconds the job has run (squeue TIME, scontrol RunTime): 0 before it starts; while
 * suspended, pre_suspend_secs; otherwise the time since it started, or, when it was
 * suspended and resumed, since suspend_time (the last suspend or resume, as in Slurm)
 * plus pre_suspend_secs. Up to end_time for a finished job, to now for a running one. */
int64_t jobtime_used(const Tessera__JobRecord *job, time_t now);

#endif
