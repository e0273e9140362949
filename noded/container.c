#include "noded/container.h"

#include "common/util/errors.h"
#include "common/util/log.h"
#include "noded/cgroup.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_TREES 6
#define FREEZE_WAIT_MS 500   /* v1: how long a freeze may take before the kill goes on */
#define KILL_PIDS_MAX 4096   /* v1: processes of one unit killed per pass */

/* Each role names the hierarchy that plays it (NULL: none); several roles may share one
 * (v2 has a single hierarchy). trees lists each distinct hierarchy once. */
struct containers {
    struct cgroup_tree *trees[MAX_TREES];
    size_t ntrees;
    struct cgroup_tree *track;   /* where processes are found and killed */
    struct cgroup_tree *freeze;  /* suspend */
    struct cgroup_tree *cpu;     /* CPU time */
    struct cgroup_tree *memory;
    struct cgroup_tree *cpuset;
    struct cgroup_tree *pids;
    struct cgroup_tree *devices; /* v1 only: v2 refuses devices by a program on track */
    char describe[96];
};

/* ------------------------------------------------------------------------------------ */
/* opening */

struct opening {
    struct containers *c;
    const char *cluster, *node;
    char *errbuf;
    size_t errlen;
};

/* The hierarchy of version v (controller for v1) opened and kept in c->trees. */
static int open_tree(struct opening *o, enum cgroup_version v, const char *controller,
                     struct cgroup_tree **out)
{
    char mount[1024], why[512] = "";
    const char *what = v == CGROUP_V2 ? "cgroup2" : controller;
    int err = cgroup_mount_find(v, controller, mount, sizeof(mount));
    if (err) {
        snprintf(o->errbuf, o->errlen, "no %s hierarchy is mounted", what);
        return err;
    }
    if ((err = cgroup_tree_open(mount, v, controller, o->cluster, o->node, out, why,
                                sizeof(why)))) {
        snprintf(o->errbuf, o->errlen, "%s: %s", what, why);
        return err;
    }
    o->c->trees[o->c->ntrees++] = *out;
    return TS_OK;
}

/* A v2 controller for role, when wanted; required: fail when it is not offered. */
static int v2_role(struct opening *o, const char *controller, int wanted, int required,
                   struct cgroup_tree **role)
{
    if (!wanted)
        return TS_OK;
    int err = cgroup_tree_enable(o->c->track, controller);
    if (!err)
        *role = o->c->track;
    else if (required)
        snprintf(o->errbuf, o->errlen, "the cgroup v2 %s controller is not available",
                 controller);
    return required ? err : TS_OK;
}

static int open_v2(struct opening *o, const struct container_conf *cc)
{
    struct containers *c = o->c;
    int err = open_tree(o, CGROUP_V2, NULL, &c->track);
    if (err)
        return err;
    c->freeze = c->cpu = c->track;
    snprintf(c->describe, sizeof(c->describe), "cgroup/v2");
    if ((err = v2_role(o, "memory", 1, cc->constrain_ram, &c->memory)) ||
        (err = v2_role(o, "cpuset", cc->constrain_cores, 1, &c->cpuset)))
        return err;
    return v2_role(o, "pids", cc->allowed_processes > 0, 1, &c->pids);
}

/* A v1 hierarchy for role, when wanted; required: fail when it is not mounted. */
static int v1_role(struct opening *o, const char *controller, int wanted, int required,
                   struct cgroup_tree **role)
{
    if (!wanted)
        return TS_OK;
    int err = open_tree(o, CGROUP_V1, controller, role);
    return required ? err : TS_OK;
}

static int open_v1(struct opening *o, const struct container_conf *cc)
{
    struct containers *c = o->c;
    char mount[1024];
    int err;
    /* a hybrid host (v1 controllers, v2 mounted beside them) tracks by the v2 core:
     * cgroup.kill and cgroup.freeze need no controller */
    if (cgroup_mount_find(CGROUP_V2, NULL, mount, sizeof(mount)) == TS_OK) {
        if ((err = open_tree(o, CGROUP_V2, NULL, &c->track)))
            return err;
        c->freeze = c->cpu = c->track;
        snprintf(c->describe, sizeof(c->describe), "cgroup/v1 (tracking by the v2 core)");
    } else {
        if ((err = open_tree(o, CGROUP_V1, "freezer", &c->track)) ||
            (err = v1_role(o, "cpuacct", 1, 0, &c->cpu)))
            return err;
        c->freeze = c->track;
        snprintf(c->describe, sizeof(c->describe), "cgroup/v1");
    }
    if ((err = v1_role(o, "memory", 1, cc->constrain_ram, &c->memory)) ||
        (err = v1_role(o, "cpuset", cc->constrain_cores, 1, &c->cpuset)) ||
        (err = v1_role(o, "pids", cc->allowed_processes > 0, 1, &c->pids)))
        return err;
    /* where v2 tracks, its device program refuses devices; else the v1 hierarchy */
    int v2_tracks = cgroup_tree_version(c->track) == CGROUP_V2;
    return v1_role(o, "devices", cc->constrain_devices && !v2_tracks, 1, &c->devices);
}

int container_open(const struct container_conf *cc, const char *cluster, const char *node,
                   struct containers **out, char *errbuf, size_t errlen)
{
    *out = NULL;
    errbuf[0] = '\0';
    struct containers *c = calloc(1, sizeof(*c));
    if (!c)
        return TS_ENOMEM;
    struct opening o = {c, cluster, node, errbuf, errlen};
    char mount[1024];
    int v2 = strcmp(cc->plugin, "cgroup/v2") == 0 ||
             (strcmp(cc->plugin, "autodetect") == 0 && cgroup_v2_offers("memory")) ||
             (strcmp(cc->plugin, "autodetect") == 0 &&
              cgroup_mount_find(CGROUP_V1, "memory", mount, sizeof(mount)) != TS_OK &&
              cgroup_mount_find(CGROUP_V1, "freezer", mount, sizeof(mount)) != TS_OK);
    int err = v2 ? open_v2(&o, cc) : open_v1(&o, cc);
    if (err) {
        container_close(c);
        return err;
    }
    *out = c;
    return TS_OK;
}

void container_close(struct containers *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->ntrees; i++)
        cgroup_tree_close(c->trees[i]);
    free(c);
}

const char *container_describe(const struct containers *c)
{
    return c->describe;
}

int container_has_memory(const struct containers *c)
{
    return c->memory != NULL;
}

/* ------------------------------------------------------------------------------------ */
/* entering */

static int write_u64(struct cgroup_tree *t, uint32_t job_id, const char *file, uint64_t v)
{
    char text[32];
    snprintf(text, sizeof(text), "%" PRIu64 "\n", v);
    return cgroup_unit_write(t, job_id, NULL, file, text);
}

static int limit_memory(struct cgroup_tree *t, uint32_t job_id, const struct container_limits *lim)
{
    int v2 = cgroup_tree_version(t) == CGROUP_V2;
    int err = write_u64(t, job_id, v2 ? "memory.max" : "memory.limit_in_bytes", lim->mem_bytes);
    if (err)
        return err;
    /* v2 counts swap apart, v1 counts memory and swap together (when the kernel accounts
     * swap at all: without it the file is missing and there is no swap to limit) */
    err = v2 ? write_u64(t, job_id, "memory.swap.max", lim->swap_bytes)
             : write_u64(t, job_id, "memory.memsw.limit_in_bytes",
                         lim->mem_bytes + lim->swap_bytes);
    return err == TS_ENOENT ? TS_OK : err;
}

/* The job's folder refuses the devices listed: v1 by devices.deny lines, v2 by a device
 * program attached to the folder (noded/devcg.c). */
static int limit_devices(struct cgroup_tree *t, uint32_t job_id,
                         const struct container_limits *lim)
{
    int err = TS_OK;
    if (cgroup_tree_version(t) == CGROUP_V1) {
        for (size_t i = 0; !err && i < lim->ndeny_devices; i++) {
            char rule[64];
            snprintf(rule, sizeof(rule), "%c %" PRIu32 ":%" PRIu32 " rwm\n",
                     lim->deny_devices[i].type, lim->deny_devices[i].major,
                     lim->deny_devices[i].minor);
            err = cgroup_unit_write(t, job_id, NULL, "devices.deny", rule);
        }
        return err;
    }
    int dir = -1;
    char why[256];
    if (!(err = cgroup_unit_dir(t, job_id, NULL, &dir)) &&
        (err = devcg_deny(dir, lim->deny_devices, lim->ndeny_devices, why, sizeof(why))))
        log_error("job %u: %s", job_id, why);
    if (dir >= 0)
        close(dir);
    return err;
}

/* The limits that belong to hierarchy t, written on a new job folder. */
static int write_limits(struct containers *c, struct cgroup_tree *t, uint32_t job_id,
                        const struct container_limits *lim)
{
    int err = TS_OK;
    if (t == c->memory && lim->mem_bytes)
        err = limit_memory(t, job_id, lim);
    if (!err && t == c->cpuset && lim->cpus[0])
        err = cgroup_unit_write(t, job_id, NULL, "cpuset.cpus", lim->cpus);
    if (!err && t == c->pids && lim->pids_max)
        err = write_u64(t, job_id, "pids.max", lim->pids_max);
    int devices_here = c->devices ? t == c->devices
                                  : t == c->track && cgroup_tree_version(t) == CGROUP_V2;
    if (!err && devices_here && lim->ndeny_devices)
        err = limit_devices(t, job_id, lim);
    return err;
}

int container_enter(struct containers *c, uint32_t job_id, const char *step, pid_t pid,
                    const struct container_limits *lim)
{
    /* checked before the job's folder is made: a refused name leaves nothing behind */
    if (step && !cgroup_step_name_ok(step))
        return TS_EINVAL;
    for (size_t i = 0; i < c->ntrees; i++) {
        struct cgroup_tree *t = c->trees[i];
        int made = 0;
        int err = cgroup_unit_make(t, job_id, NULL, &made);
        if (!err && made)
            err = write_limits(c, t, job_id, lim);
        if (!err)
            err = cgroup_unit_make(t, job_id, step, NULL);
        if (!err)
            err = cgroup_unit_attach(t, job_id, step, pid);
        if (err)
            return err;
    }
    return TS_OK;
}

/* ------------------------------------------------------------------------------------ */
/* killing, freezing, removing */

static int v1_freeze(struct cgroup_tree *t, uint32_t job_id, const char *step, int frozen)
{
    return cgroup_unit_write(t, job_id, step, "freezer.state", frozen ? "FROZEN" : "THAWED");
}

/* Until the v1 unit reads FROZEN (its processes can no longer fork or exit), a while. */
static void v1_wait_frozen(struct cgroup_tree *t, uint32_t job_id, const char *step)
{
    struct timespec tick = {0, 10 * 1000 * 1000};
    char state[64];
    for (int waited = 0; waited < FREEZE_WAIT_MS; waited += 10) {
        if (cgroup_unit_read(t, job_id, step, "freezer.state", state, sizeof(state)) != TS_OK ||
            strncmp(state, "FROZEN", 6) == 0)
            return;
        nanosleep(&tick, NULL);
    }
}

static void v1_kill_listed(struct cgroup_tree *t, uint32_t job_id, const char *step)
{
    pid_t *pids = malloc(KILL_PIDS_MAX * sizeof(*pids));
    size_t n = 0;
    if (!pids || cgroup_unit_procs(t, job_id, step, pids, KILL_PIDS_MAX, &n) != TS_OK)
        n = 0;
    /* frozen, listed in a root-only folder: these are the job's processes, and none of
     * them can exit (and its pid be reused) before the thaw */
    for (size_t i = 0; i < n; i++)
        kill(pids[i], SIGKILL);
    free(pids);
}

/* v1 has no cgroup.kill: freeze, SIGKILL every process listed, thaw (they die then). */
static int v1_kill(struct cgroup_tree *t, uint32_t job_id, const char *step)
{
    int err = v1_freeze(t, job_id, step, 1);
    if (err)
        return err == TS_ENOENT ? TS_OK : err;
    v1_wait_frozen(t, job_id, step);
    v1_kill_listed(t, job_id, step);
    if (!step) {
        char names[CGROUP_STEPS_MAX][32];
        size_t n = 0;
        cgroup_job_steps(t, job_id, names, CGROUP_STEPS_MAX, &n);
        for (size_t i = 0; i < n; i++)
            v1_kill_listed(t, job_id, names[i]);
    }
    return v1_freeze(t, job_id, step, 0);
}

int container_kill(struct containers *c, uint32_t job_id, const char *step)
{
    if (cgroup_tree_version(c->track) == CGROUP_V1)
        return v1_kill(c->track, job_id, step);
    int err = cgroup_unit_write(c->track, job_id, step, "cgroup.kill", "1\n");
    return err == TS_ENOENT ? TS_OK : err;
}

int container_populated(struct containers *c, uint32_t job_id, const char *step)
{
    return cgroup_unit_populated(c->track, job_id, step);
}

int container_remove(struct containers *c, uint32_t job_id, const char *step)
{
    int err = TS_OK;
    for (size_t i = 0; i < c->ntrees; i++) {
        int e = cgroup_unit_remove(c->trees[i], job_id, step);
        if (e && !err)
            err = e;
    }
    return err;
}

int container_freeze(struct containers *c, uint32_t job_id, int frozen)
{
    if (cgroup_tree_version(c->freeze) == CGROUP_V1)
        return v1_freeze(c->freeze, job_id, NULL, frozen);
    return cgroup_unit_write(c->freeze, job_id, NULL, "cgroup.freeze", frozen ? "1" : "0");
}

/* ------------------------------------------------------------------------------------ */
/* usage */

static void cpu_usage(struct containers *c, uint32_t job_id, const char *step,
                      struct container_usage *u)
{
    if (!c->cpu)
        return;
    if (cgroup_tree_version(c->cpu) == CGROUP_V2) {
        u->has_cpu = cgroup_unit_read_key(c->cpu, job_id, step, "cpu.stat", "user_usec",
                                          &u->user_usec) == TS_OK &&
                     cgroup_unit_read_key(c->cpu, job_id, step, "cpu.stat", "system_usec",
                                          &u->sys_usec) == TS_OK;
        return;
    }
    uint64_t user_ns = 0, sys_ns = 0;
    u->has_cpu = cgroup_unit_read_u64(c->cpu, job_id, step, "cpuacct.usage_user",
                                      &user_ns) == TS_OK &&
                 cgroup_unit_read_u64(c->cpu, job_id, step, "cpuacct.usage_sys",
                                      &sys_ns) == TS_OK;
    u->user_usec = user_ns / 1000;
    u->sys_usec = sys_ns / 1000;
}

static void memory_usage(struct containers *c, uint32_t job_id, const char *step,
                         struct container_usage *u)
{
    if (!c->memory)
        return;
    int v2 = cgroup_tree_version(c->memory) == CGROUP_V2;
    u->has_memory = cgroup_unit_read_u64(c->memory, job_id, step,
                                         v2 ? "memory.peak" : "memory.max_usage_in_bytes",
                                         &u->peak_bytes) == TS_OK;
    /* v2's memory.events counts below the folder too; v1's oom_control counts the folder
     * alone, which is what a step's folder is */
    cgroup_unit_read_key(c->memory, job_id, step, v2 ? "memory.events" : "memory.oom_control",
                         "oom_kill", &u->oom_kills);
}

int container_usage(struct containers *c, uint32_t job_id, const char *step,
                    struct container_usage *u)
{
    memset(u, 0, sizeof(*u));
    cpu_usage(c, job_id, step, u);
    memory_usage(c, job_id, step, u);
    return u->has_cpu || u->has_memory ? TS_OK : TS_ENOENT;
}

int container_jobs(struct containers *c, uint32_t *ids, size_t max, size_t *n)
{
    return cgroup_tree_jobs(c->track, ids, max, n);
}

/* ------------------------------------------------------------------------------------ */
/* a step daemon's own folder */

/* The path of the calling process in the hierarchy /proc/self/cgroup names by key (v1:
 * ":memory:", v2: "0::"), into buf. */
static int self_path(const char *key, char *buf, size_t len)
{
    FILE *f = fopen("/proc/self/cgroup", "re");
    if (!f)
        return TS_ESYS;
    char line[2048];
    int err = TS_ENOENT;
    while (err == TS_ENOENT && fgets(line, sizeof(line), f)) {
        const char *p = strstr(line, key);
        if (!p || (key[0] == '0' && p != line))
            continue;
        p += strlen(key);
        line[strcspn(line, "\n")] = '\0';
        err = snprintf(buf, len, "%s", p) < (int)len ? TS_OK : TS_ETOOBIG;
    }
    fclose(f);
    return err;
}

int container_self_oom_kills(uint64_t *kills)
{
    char mount[1024], path[2048], folder[3200];
    /* the kernel's own names for where this process is */
    if (cgroup_mount_find(CGROUP_V1, "memory", mount, sizeof(mount)) == TS_OK &&
        self_path(":memory:", path, sizeof(path)) == TS_OK && strstr(path, "/tessera/")) {
        snprintf(folder, sizeof(folder), "%s%s", mount, path);
        return cgroup_folder_read_key(folder, "memory.oom_control", "oom_kill", kills);
    }
    if (cgroup_mount_find(CGROUP_V2, NULL, mount, sizeof(mount)) == TS_OK &&
        self_path("0::", path, sizeof(path)) == TS_OK && strstr(path, "/tessera/")) {
        snprintf(folder, sizeof(folder), "%s%s", mount, path);
        return cgroup_folder_read_key(folder, "memory.events", "oom_kill", kills);
    }
    return TS_ENOENT;
}
