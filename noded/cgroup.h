/* Job containers on cgroup v2's core: a folder per job under a root-only hierarchy of the
 * node daemon's own (<cgroup2 mount>/tessera/<node>/job_<id>), into which a job's
 * processes are placed before they run user code, so that everything they start, however
 * it detaches (setsid, double forks), is found and killed with the job (cgroup.kill).
 * Needs no controller: this works where v2 is mounted without any (a v1 host's
 * /sys/fs/cgroup/unified) as well as on a v2-only host. Limits (memory, cpuset, pids)
 * are the controllers' part and come on top of this.
 *
 * Every path is opened from the node folder's descriptor, one component at a time,
 * never following a link; job folders are named from numbers only. */
#ifndef TESSERA_NODED_CGROUP_H
#define TESSERA_NODED_CGROUP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct cgroup_root;

/* The mount point of the cgroup2 filesystem from /proc/self/mounts (the first one) into
 * buf. TS_OK, TS_ENOENT when none is mounted, TS_ETOOBIG when buf is too small. */
int cgroup_v2_mount(char *buf, size_t len);

/* The node's folder <mount>/tessera/<cluster>/<node> (several clusters and node daemons
 * may share a machine), each level made (0755, root's) when missing and checked to be
 * root's and writable by nobody else. TS_EPERM (why says) when one is not; TS_ENOENT
 * when mount is no cgroup2 filesystem; TS_EINVAL for a name that is no path component;
 * TS_ESYS otherwise. */
int cgroup_root_open(const char *mount, const char *cluster, const char *node,
                     struct cgroup_root **out, char *why, size_t len);
void cgroup_root_close(struct cgroup_root *r);

/* A job's folder made (TS_OK also when it exists). */
int cgroup_job_create(struct cgroup_root *r, uint32_t job_id);
/* pid moved into the job's folder (it and its future children). */
int cgroup_job_attach(struct cgroup_root *r, uint32_t job_id, pid_t pid);
/* 1 when a process is in the job's folder, 0 when none (or no folder), < 0 on error. */
int cgroup_job_populated(struct cgroup_root *r, uint32_t job_id);
/* Every process in the job's folder killed (SIGKILL, by the kernel: none escapes by
 * forking meanwhile). TS_OK also when there is no folder. */
int cgroup_job_kill(struct cgroup_root *r, uint32_t job_id);
/* The job's folder removed: TS_OK also when missing, TS_ESYS (errno EBUSY) while
 * processes remain. */
int cgroup_job_remove(struct cgroup_root *r, uint32_t job_id);

#endif
