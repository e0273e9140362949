/* A node's job containers over whichever cgroup hierarchies the machine has
 * (docs/containment.md §1-§4): which hierarchy tracks processes (the v2 core, with
 * cgroup.kill and cgroup.freeze, wherever a cgroup2 filesystem is mounted; else the v1
 * freezer), which one limits memory, CPUs and processes (v2 controllers when the v2 root
 * offers them, else the v1 hierarchies), and what each limit, freeze and usage figure is
 * called in each version. noded/containment.c decides when; this file knows how. */
#ifndef TESSERA_NODED_CONTAINER_H
#define TESSERA_NODED_CONTAINER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "noded/devcg.h"

/* The configuration's cgroup keys (docs/configuration.md, "Containment"). */
struct container_conf {
    const char *plugin;          /* CgroupPlugin: autodetect, cgroup/v1 or cgroup/v2 */
    int constrain_ram;           /* ConstrainRAMSpace */
    int constrain_cores;         /* ConstrainCores */
    uint32_t allowed_processes;  /* AllowedProcesses: pids.max of a job; 0: none */
    int constrain_devices;       /* device files may be refused (v1: the devices
                                  * hierarchy; v2 needs nothing: an eBPF program) */
};

/* What a job may use on this node, written when its folder is made. */
struct container_limits {
    uint64_t mem_bytes;          /* 0: no memory limit */
    uint64_t swap_bytes;         /* swap allowed on top of mem_bytes */
    char cpus[256];              /* the machine CPUs it may run on ("0-1,3"); "": all */
    uint32_t pids_max;           /* 0: no limit */
    const struct devcg_device *deny_devices; /* device files the job may not open (the
                                              * node's GPUs it was not given) */
    size_t ndeny_devices;        /* at most DEVCG_MAX_DEVICES */
};

/* What a job or step used, as its folders counted it (including processes that left
 * their parents). */
struct container_usage {
    int has_cpu, has_memory;
    uint64_t user_usec, sys_usec;
    uint64_t peak_bytes;         /* the largest memory use of the unit as a whole */
    uint64_t oom_kills;          /* processes the kernel killed for the memory limit */
};

struct containers;

/* The hierarchies the configuration asks for, opened for this node (folders made under
 * tessera/<cluster>/<node>). A limit that is asked for and cannot be enforced fails:
 * errbuf says why. */
int container_open(const struct container_conf *cc, const char *cluster, const char *node,
                   struct containers **out, char *errbuf, size_t errlen);
void container_close(struct containers *c);
/* "cgroup/v2", "cgroup/v1 (tracking by the v2 core)", ...: for the log. */
const char *container_describe(const struct containers *c);
/* 1 when memory limits and usage are available. */
int container_has_memory(const struct containers *c);

/* pid (a child that has not yet run user code) into the step's folders of the job, made
 * when missing; the job's limits are written when its folders are new. */
int container_enter(struct containers *c, uint32_t job_id, const char *step, pid_t pid,
                    const struct container_limits *lim);
/* Every process of the unit (the whole job when step is NULL) killed with SIGKILL. TS_OK
 * also when there is no such unit. */
int container_kill(struct containers *c, uint32_t job_id, const char *step);
/* 1 when a process is left in the unit, 0 when none, < 0 on error. */
int container_populated(struct containers *c, uint32_t job_id, const char *step);
/* The unit's folders removed (TS_ESYS while processes remain: try again later). */
int container_remove(struct containers *c, uint32_t job_id, const char *step);
/* The whole job frozen (1) or thawed (0): its CPU time stops, nothing escapes. */
int container_freeze(struct containers *c, uint32_t job_id, int frozen);
/* What the unit used so far. */
int container_usage(struct containers *c, uint32_t job_id, const char *step,
                    struct container_usage *u);
/* The jobs that have folders here (at most max). */
int container_jobs(struct containers *c, uint32_t *ids, size_t max, size_t *n);

/* OOM kills counted so far in the memory folder the calling process is in (its step's,
 * from /proc/self/cgroup): the step daemon's view of its own step. TS_ENOENT when the
 * process is in no Tessera folder or its memory is not accounted. */
int container_self_oom_kills(uint64_t *kills);

#endif
