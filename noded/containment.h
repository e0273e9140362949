/* The node daemon's job containers (ProctrackType=proctrack/cgroup; docs/containment.md):
 * a batch script's waiter and every step daemon are placed in their job's cgroup before
 * they start user code, so all the job starts on the node, detached or not, is in it; when the job has nothing left here its
 * cgroup is killed and removed. With proctrack/pgid (the default) all of this does
 * nothing and process groups are what is tracked. */
#ifndef TESSERA_NODED_CONTAINMENT_H
#define TESSERA_NODED_CONTAINMENT_H

#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>

struct noded;

/* The node's folder of job containers, when the configuration asks for them: a node that
 * must contain jobs and cannot does not start (errbuf says why). */
int containment_open(struct noded *nd, char *errbuf, size_t errlen);
/* Killed what is still pending removal, and the folder closed. */
void containment_close(struct noded *nd);
/* pid (and what it will start) into the job's container, made when missing (a removal
 * still pending for it is called off). */
int containment_job_enter(struct noded *nd, uint32_t job_id, pid_t pid);
/* The job has nothing left here: whatever is still in its container is killed, and the
 * container removed once empty (retried a while; a line in the log when it stays). */
void containment_job_end(struct noded *nd, uint32_t job_id);

#endif
