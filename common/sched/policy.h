/* The scheduling policy file (PolicyFile=, docs/07-policy.md §1, docs/policies.md): PBS's
 * sched_config syntax, "name: value [prime | non_prime | all]", '#' comments; every option may take
 * a different value in prime and in non-prime time. */
#ifndef TESSERA_COMMON_POLICY_H
#define TESSERA_COMMON_POLICY_H

#include <stddef.h>
#include <stdint.h>

enum policy_period { POLICY_PRIME = 0, POLICY_NON_PRIME = 1 };

/* sort_by's keys (and multi_sort's key: lines). */
enum policy_sort {
    POLICY_SORT_NONE,               /* no_sort */
    POLICY_SORT_SHORTEST_JOB,       /* shortest_job_first: requested CPU time ascending */
    POLICY_SORT_LONGEST_JOB,        /* longest_job_first */
    POLICY_SORT_SMALLEST_MEMORY,    /* smallest_memory_first: requested memory ascending */
    POLICY_SORT_LARGEST_MEMORY,     /* largest_memory_first */
    POLICY_SORT_HIGH_PRIORITY,      /* high_priority_first */
    POLICY_SORT_LOW_PRIORITY,       /* low_priority_first */
    POLICY_SORT_LARGE_WALLTIME,     /* large_walltime_first: time limit descending */
    POLICY_SORT_SHORT_WALLTIME,     /* short_walltime_first (cmp_job_walltime_asc) */
    POLICY_SORT_FAIR_SHARE,         /* fair_share */
    POLICY_SORT_MULTI,              /* multi_sort: the key: lines, in order */
};

#define POLICY_MAX_KEYS 8

/* fairshare_entity: whom fair share charges a job to (PBS Pro's names are accepted). */
enum policy_entity {
    POLICY_ENTITY_USER,    /* euser (the default) */
    POLICY_ENTITY_GROUP,   /* egroup */
    POLICY_ENTITY_ACCOUNT, /* account, Account_Name: sbatch -A */
};

/* One period's values. */
struct policy_set {
    int round_robin, by_queue, strict_fifo, fair_share, load_balancing, help_starving_jobs;
    enum policy_sort sort_by;
    enum policy_sort keys[POLICY_MAX_KEYS]; /* multi_sort */
    size_t nkeys;
    int64_t starve_max;        /* seconds */
    int64_t half_life;         /* seconds */
    int64_t sync_time;         /* seconds */
    uint32_t unknown_shares;
    uint32_t log_filter;
    char dedicated_prefix[32];
    enum policy_entity fairshare_entity; /* whose usage a job is charged to */
};

struct policy {
    struct policy_set set[2];  /* by enum policy_period */
};

/* PBS's defaults in both periods. */
void policy_defaults(struct policy *p);
/* Parse text (named file in messages) over the defaults. TS_OK, or TS_ECONF with
 * "FILE:LINE: why" in errbuf. */
int policy_parse(const char *text, const char *file, struct policy *p, char *errbuf,
                 size_t errlen);
/* Read and parse a file. */
int policy_load(const char *path, struct policy *p, char *errbuf, size_t errlen);

const char *policy_sort_name(enum policy_sort s);

/* What the sort keys compare, per pending unit (a het job's components summed). */
struct policy_unit {
    uint32_t id;          /* ties: submission order */
    uint32_t priority;
    uint32_t tier;        /* its partition's PriorityTier (by_queue) */
    const char *partition;
    int64_t cput;         /* requested CPU time: limit x CPUs (INT64_MAX: unlimited) */
    int64_t walltime;     /* the longest limit (INT64_MAX: unlimited) */
    uint64_t mem_mb;      /* requested memory */
    int64_t waited;       /* seconds since it became eligible (0: not eligible) */
    int fs_entity;        /* its fair-share node (fairshare_entity()) */
    double fs_norm;       /* that node's normalised share (sort_by: fair_share) */
    void *owner;          /* the caller's: carried along, never read */
    int starving;         /* set by policy_order: waited past starve_max (with
                           * help_starving_jobs) */
};

/* qsort order of two units under one period's policy: by_queue's queues first; then, with
 * help_starving_jobs, the units that waited longer than starve_max (the longest waiting
 * first); then the sort_by key or the multi_sort keys; then submission order. */
int policy_compare(const struct policy_set *s, const struct policy_unit *x,
                   const struct policy_unit *y);

/* Whether the period's values order by fair share (fair_share: true, or a fair_share sort
 * key alone or among multi_sort's). */
int policy_uses_fair_share(const struct policy_set *s);

/* Whether a unit starves under the period's values. */
int policy_starving(const struct policy_set *s, const struct policy_unit *u);

/* The order the scheduler sees units in under one period's values: policy_compare's
 * order; then with fair_share on (and fs given) each queue's units after its starving
 * ones in fair-share order (fairshare_order); then with round_robin the queues (by
 * PriorityTier, then name) interleaved, one unit of each in turn. Sets each unit's
 * starving. TS_OK, or TS_ENOMEM with the units in policy_compare's order. */
struct fairshare;
int policy_order(const struct policy_set *s, struct policy_unit *units, size_t n,
                 const struct fairshare *fs);

#endif
