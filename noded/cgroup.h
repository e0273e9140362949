/* One cgroup hierarchy as the node daemon uses it (docs/containment.md §1): a root-only
 * folder of its own, <mount>/tessera/<cluster>/<node>, holding a folder per job and below
 * it one per step (job_<id>/step_<name>), into which a job's processes are placed before
 * they run user code. cgroup v2 has one such hierarchy; cgroup v1 one per controller
 * (memory, cpuset, freezer, pids, cpuacct), each with the same layout. What the control
 * files mean (limits, freezing, usage) is noded/container.c's part; this file only makes,
 * reads, writes and removes folders and files safely.
 *
 * Every path is opened from the node folder's descriptor, one component at a time,
 * never following a link; job and step folders are named from numbers only. */
#ifndef TESSERA_NODED_CGROUP_H
#define TESSERA_NODED_CGROUP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum cgroup_version { CGROUP_V1 = 1, CGROUP_V2 = 2 };

struct cgroup_tree;

/* The mount point of the cgroup2 filesystem (controller NULL) or of the cgroup v1
 * hierarchy that carries controller (from /proc/self/mounts, the first one) into buf.
 * TS_OK, TS_ENOENT when none is mounted, TS_ETOOBIG when buf is too small. */
int cgroup_mount_find(enum cgroup_version v, const char *controller, char *buf, size_t len);

/* 1 when the cgroup2 root offers controller to its children (a v2 host with it enabled;
 * on a hybrid host the controllers are bound to v1 and the v2 root offers none). */
int cgroup_v2_offers(const char *controller);

/* The node's folder <mount>/tessera/<cluster>/<node> in the hierarchy at mount (several
 * clusters and node daemons may share a machine), each level made (0755, root's) when
 * missing and checked to be root's and writable by nobody else. In a v1 cpuset hierarchy
 * each new level takes its parent's CPUs and memory nodes (v1 starts them empty).
 * TS_EPERM (why says) when a level is not safe; TS_ENOENT when mount is no cgroup
 * filesystem of version v; TS_EINVAL for a name that is no path component; TS_ESYS
 * otherwise. */
int cgroup_tree_open(const char *mount, enum cgroup_version v, const char *controller,
                     const char *cluster, const char *node, struct cgroup_tree **out,
                     char *why, size_t len);
void cgroup_tree_close(struct cgroup_tree *t);
enum cgroup_version cgroup_tree_version(const struct cgroup_tree *t);
/* "memory", "cpuset", ... for a v1 hierarchy; NULL for v2. */
const char *cgroup_tree_controller(const struct cgroup_tree *t);

/* v2: controller enabled for the jobs' folders (each level's cgroup.subtree_control from
 * the tessera folder down to the node's). TS_ENOENT when the hierarchy does not offer it
 * (bound to v1, or not enabled above Tessera's folder). */
int cgroup_tree_enable(struct cgroup_tree *t, const char *controller);

/* A unit is a job's folder (step NULL) or a step's below it (step "batch", "3", "94.3":
 * the folder is step_<step>). */

/* 1 when step is such a name (digits, dots, lower-case letters, not starting with a dot):
 * every call below refuses others with TS_EINVAL. */
int cgroup_step_name_ok(const char *step);

/* The unit made with the job's folder above it (TS_OK also when they exist); *job_made
 * (may be NULL) says whether the job's folder is new, i.e. its limits are still to be
 * written. v2: the controllers enabled on the tree are enabled below the job too. */
int cgroup_unit_make(struct cgroup_tree *t, uint32_t job_id, const char *step, int *job_made);
/* The unit's folder itself, opened (O_DIRECTORY) into *fd for what works on the folder
 * rather than on a file in it (attaching a program). The caller closes it. */
int cgroup_unit_dir(struct cgroup_tree *t, uint32_t job_id, const char *step, int *fd);
/* pid moved into the unit (it and its future children). */
int cgroup_unit_attach(struct cgroup_tree *t, uint32_t job_id, const char *step, pid_t pid);
/* text written to the unit's control file. TS_ENOENT when the unit or file is missing. */
int cgroup_unit_write(struct cgroup_tree *t, uint32_t job_id, const char *step,
                      const char *file, const char *text);
/* The unit's control file into buf (always terminated; one bounded read). */
int cgroup_unit_read(struct cgroup_tree *t, uint32_t job_id, const char *step,
                     const char *file, char *buf, size_t len);
/* "key value" lines of a control file (memory.events, cpu.stat): the value of key. */
int cgroup_unit_read_key(struct cgroup_tree *t, uint32_t job_id, const char *step,
                         const char *file, const char *key, uint64_t *value);
/* The same for the control file of a folder named by its full path (a process's own
 * folder, from /proc/self/cgroup): the last component is opened without following a
 * link, and cgroup filesystems have none. */
int cgroup_folder_read_key(const char *folder, const char *file, const char *key,
                           uint64_t *value);
/* A control file holding one number. */
int cgroup_unit_read_u64(struct cgroup_tree *t, uint32_t job_id, const char *step,
                         const char *file, uint64_t *value);
/* The processes in the unit itself (not below), at most max of them. */
int cgroup_unit_procs(struct cgroup_tree *t, uint32_t job_id, const char *step, pid_t *pids,
                      size_t max, size_t *n);
/* 1 when a process is in the unit or below it, 0 when none (or no unit), < 0 on error. */
int cgroup_unit_populated(struct cgroup_tree *t, uint32_t job_id, const char *step);
/* The unit removed, a job's with its steps' folders: TS_OK also when missing, TS_ESYS
 * (errno EBUSY) while processes remain. */
int cgroup_unit_remove(struct cgroup_tree *t, uint32_t job_id, const char *step);

/* Steps of one job a node daemon acts on at once (listing, killing, removing): a job
 * with more concurrent steps on one node is cleaned up over several passes. */
#define CGROUP_STEPS_MAX 512

/* The steps' names below a job (at most max, each at most 32 bytes), for acting on each. */
int cgroup_job_steps(struct cgroup_tree *t, uint32_t job_id, char (*names)[32], size_t max,
                     size_t *n);
/* The jobs that have a folder (at most max). */
int cgroup_tree_jobs(struct cgroup_tree *t, uint32_t *ids, size_t max, size_t *n);

#endif
