/* tessera.conf: slurm.conf's syntax, Tessera's keys (docs/configuration.md).
 *
 * One "Key=Value" per token, keys case-insensitive, "#" starts a comment, a trailing "\"
 * continues a line, values may be double-quoted, "Include PATH" reads another file.
 * Lines starting with NodeName= or PartitionName= describe nodes and partitions (with
 * hostlist ranges in names, addresses and ports; "DEFAULT" lines set defaults for later
 * lines); every other token sets a cluster-wide key. Errors name the file and line.
 */
#ifndef TESSERA_COMMON_CONF_H
#define TESSERA_COMMON_CONF_H

#include "common/gres/gres.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#define CONF_DEFAULT_PATH "/etc/tessera/tessera.conf"
#define CONF_ENV "TESSERA_CONF"
#define CONF_UNLIMITED INT64_C(-1) /* time limits: no limit */
#define CONF_MAX_NODE_CPUS (1u << 20) /* a node line's CPUs= at most */
#define CONF_MAX_NODES (1u << 18)  /* more nodes than this is a configuration error */
/* The largest MaxScriptSize and MaxEnvSize: with the other fields of a job (bounded in
 * ctld/job_limits.c) one job's record stays well inside a 16 MiB frame. */
#define CONF_MAX_SCRIPT_SIZE (8u << 20)
#define CONF_MAX_ENV_SIZE (4u << 20)

enum conf_part_state { CONF_PART_UP, CONF_PART_DOWN, CONF_PART_DRAIN, CONF_PART_INACTIVE };
enum conf_node_state { CONF_NODE_UNKNOWN, CONF_NODE_DOWN, CONF_NODE_DRAIN, CONF_NODE_FUTURE };

struct conf_node {
    char *name;
    char *hostname;          /* NodeHostname (default: name) */
    char *addr;              /* NodeAddr (default: hostname) */
    uint16_t port;           /* Port (default: NodedPort) */
    uint32_t cpus;
    uint32_t sockets, cores_per_socket, threads_per_core;
    uint64_t real_memory_mb;
    char *features;          /* "a,b" as given, "" when none */
    uint32_t weight;
    enum conf_node_state state;
    struct gres_count *gres; /* Gres=gpu:a100:4,bandwidth:10G (docs/gres.md §1.1) */
    size_t ngres;
};

/* A set of resource amounts; 0: not given. */
struct conf_resources {
    uint64_t cpus;
    uint64_t mem_mb;
    uint64_t nodes;
    int64_t walltime; /* seconds (ResourcesMax only) */
};

struct conf_partition {
    char *name;
    char *nodes;             /* the Nodes= expression as given ("ALL" expanded) */
    size_t *node_index;      /* into conf.nodes, in expression order */
    size_t nnodes;
    int is_default;
    int64_t max_time;        /* seconds or CONF_UNLIMITED */
    int64_t default_time;    /* seconds or CONF_UNLIMITED (none: MaxTime applies) */
    uint32_t max_nodes;      /* UINT32_MAX: unlimited */
    uint32_t min_nodes;
    uint32_t priority_tier;
    enum conf_part_state state;
    uint32_t max_running, max_user_running, max_group_running; /* 0: no limit */
    char *submit_filters;    /* SubmitFilters=/a,/b (NULL: none); run before the cluster's */
    char *activation_filters;
};

struct conf_param {
    char *key;
    char *value; /* "" for a flag */
};

struct conf {
    char *path;
    time_t read_time;

    char *cluster_name;
    char *ctld_host;
    uint16_t ctld_port;
    uint16_t noded_port;
    char *state_save_location;
    char *spool_dir;
    char *auth_type;
    char *auth_info;
    char *munge_socket;      /* from AuthInfo socket=...; NULL: MUNGE's default */
    uint32_t cred_ttl;       /* from AuthInfo ttl=...; 0: MUNGE's default */
    char *slurm_user;
    uid_t slurm_user_uid;
    char *noded_user;        /* the user node daemons run as (credentials to them) */
    uid_t noded_user_uid;
    char *select_type;
    char *scheduler_type;
    char *priority_type;     /* PriorityType=: the order of the queue (priority/pbs) */
    char *proctrack_type;    /* ProctrackType=: proctrack/pgid (process groups) or
                              * proctrack/cgroup (docs/containment.md) */
    char *cgroup_plugin;     /* CgroupPlugin=: autodetect, cgroup/v1, cgroup/v2 or none */
    int constrain_ram_space; /* ConstrainRAMSpace=: a job's memory is its allocation's */
    int constrain_cores;     /* ConstrainCores=: a job runs on its allocated CPUs only */
    uint32_t allowed_ram_space;  /* AllowedRAMSpace=: percent of the allocation (100) */
    uint32_t allowed_swap_space; /* AllowedSwapSpace=: swap, percent of it (0) */
    uint32_t allowed_processes;  /* AllowedProcesses=: pids.max of a job's folder; 0: none */
    char *scheduler_parameters;
    char *submit_filters;    /* SubmitFilters=: absolute paths, comma-separated (NULL: none) */
    char *activation_filters;
    struct conf_param *sched_params; /* SchedulerParameters, split */
    size_t nsched_params;
    uint32_t min_job_age;
    uint32_t sbcast_max_file_mb; /* SbcastMaxFileMB=: node daemons write no larger file */
    uint32_t state_min_free_mb; /* StateMinFreeMB=: submissions refused below; 0: never */
    uint32_t accounting_retention; /* months accounting records are kept; 0: for ever */
    uint32_t max_running;    /* MaxRunning=: running jobs (components) at most; 0: no limit */
    uint32_t max_user_running;  /* MaxUserRunning=: per user */
    uint32_t max_group_running; /* MaxGroupRunning=: per group */
    /* What one user may put in the controller (docs/configuration.md, "Limits") */
    uint32_t max_job_count;  /* MaxJobCount=: job records in memory at most (finished ones
                              * until MinJobAge too; each component one) */
    uint32_t max_submit_jobs; /* MaxSubmitJobs=: a user's pending and running components
                               * at most; 0: no limit */
    uint32_t max_script_size; /* MaxScriptSize=: bytes of a batch script */
    uint32_t max_env_size;   /* MaxEnvSize=: bytes of a job's environment (each "K=V" and
                              * its NUL) */
    uint32_t max_env_count;  /* MaxEnvCount=: variables of a job's environment */
    /* ResourcesMax= (what one job may ask at most) and ResourcesAvailable= (what running
     * jobs may hold together; where a resource is not given there, ResourcesMax's value
     * is the cap): PBS's server attributes, "cpus=N,mem=SIZE,nodes=N[,walltime=T]" */
    char *resources_max, *resources_available;
    struct conf_resources res_max, res_available;
    uint32_t noded_timeout;
    uint32_t kill_wait;
    uint32_t filter_timeout;
    uint32_t filter_retry_interval;
    uint32_t default_hold_duration;
    uint32_t message_timeout;
    /* RPC servers' limits (docs/configuration.md, "RPC limits"): read at start */
    uint32_t rpc_handshake_timeout;   /* seconds to authenticate */
    uint32_t rpc_frame_timeout;       /* seconds for a frame begun to complete */
    uint32_t rpc_idle_timeout;        /* seconds; 0: never */
    uint32_t rpc_max_connections;
    uint32_t rpc_max_unauth;
    uint32_t rpc_max_unauth_per_host;
    uint32_t rpc_max_user_connections;
    uint32_t first_job_id;
    char *plugin_dir;
    char *policy_file;       /* PolicyFile=: PBS-style scheduling policy (NULL: none) */
    char *holidays_file;     /* HolidaysFile=: prime and non-prime time (NULL: all prime) */
    char *resource_group_file; /* ResourceGroupFile=: the fair-share tree (NULL: root and
                                * unknown only) */
    char *dedicated_time_file; /* DedicatedTimeFile=: dedicated periods (NULL: none) */
    char *ctld_log_file;
    char *ctld_pid_file;
    char *noded_log_file;
    char *noded_pid_file;
    char *ctld_debug;        /* log level names (log.h) */
    char *noded_debug;
    char *cred_private_key;  /* JobCredentialPrivateKey (NULL: in StateSaveLocation) */
    char *cred_public_key;   /* JobCredentialPublicCertificate (NULL: from the controller) */
    char *gres_types;        /* GresTypes=gpu,...: the names node lines may use (NULL: none) */
    char *gres_conf;         /* GresConf=: gres.conf's path (NULL: beside this file) */

    struct conf_node *nodes;
    size_t nnodes;
    struct conf_partition *partitions;
    size_t npartitions;
};

/* The file to read: path when given, else $TESSERA_CONF, else CONF_DEFAULT_PATH. */
const char *conf_locate(const char *path);

/* Read and check a configuration. On error returns TS_ECONF (or TS_ECONF_NOTFOUND) and
 * writes "FILE:LINE: what is wrong" (or "FILE: ...") into errbuf; *out is NULL. */
int conf_load(const char *path, struct conf **out, char *errbuf, size_t errlen);
/* The same from text in memory; name stands for the file name in messages. Include
 * directives are refused (there is no folder to resolve them in) unless allow_include. */
int conf_parse_string(const char *text, const char *name, int allow_include,
                      struct conf **out, char *errbuf, size_t errlen);
void conf_free(struct conf *conf);

const struct conf_node *conf_find_node(const struct conf *conf, const char *name);
const struct conf_partition *conf_find_partition(const struct conf *conf, const char *name);
const struct conf_partition *conf_default_partition(const struct conf *conf);

/* The filters that run for a job in partition part (NULL: none known), docs/05-filters.md §1.1: the
 * partition's, then the cluster's. *paths is a malloc'd array of malloc'd paths (free
 * with conf_filters_free); *n may be 0. TS_OK or TS_ENOMEM. */
enum conf_filter_kind { CONF_FILTER_SUBMIT, CONF_FILTER_ACTIVATION };
int conf_filters(const struct conf *conf, const struct conf_partition *part,
                 enum conf_filter_kind kind, char ***paths, size_t *n);
void conf_filters_free(char **paths, size_t n);
/* "UP", "DOWN", "DRAIN", "INACTIVE". */
const char *conf_partition_state_name(enum conf_part_state state);

/* The whole text of a file the configuration names (policy, holidays, ...), at most max
 * bytes: *text malloc'd. TS_OK, or TS_ECONF with "PATH: cannot be read" or "PATH: too
 * large" in errbuf. */
int conf_read_text(const char *path, size_t max, char **text, char *errbuf, size_t errlen);

/* gres.conf's path: GresConf=, else "gres.conf" in the folder of conf's file (Slurm's
 * place for it). TS_OK or TS_ETOOBIG. */
int conf_gres_conf_path(const struct conf *conf, char *buf, size_t len);

/* Look a SchedulerParameters entry up: returns 1 and sets *value (the text after "=",
 * or "" for a flag) when present, 0 when absent. value may be NULL. */
int conf_sched_param(const struct conf *conf, const char *key, const char **value);

/* Every cluster-wide key with its value as shown by "scontrol show config", in
 * alphabetical order of keys. Values are formatted back to text (defaults included); a
 * value is valid only during its callback. */
typedef void (*conf_entry_cb)(void *arg, const char *key, const char *value);
/* How many entries conf_foreach_entry lists. */
size_t conf_entry_count(void);
void conf_foreach_entry(const struct conf *conf, conf_entry_cb cb, void *arg);

#endif
