/* Nodes in the controller: what each node daemon said when it registered, when it was
 * last heard from, what administrators set (drain, down, with a reason: kept in the
 * "nodes" database), and what running jobs hold of it. The base state shown to users
 * (IDLE, MIXED, ALLOCATED, DOWN, UNKNOWN) follows from these. */
#ifndef TESSERA_CTLD_NODE_H
#define TESSERA_CTLD_NODE_H

#include "tessera.pb-c.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

struct ctld;
struct conf_node;
struct rpc_peer;
struct hashmap;

struct gres_count;

struct node {
    const struct conf_node *cfg;  /* into ctld->conf->nodes: replaced on reconfigure */
    char *name;
    int registered;               /* its daemon registered since the controller started */
    int responding;               /* heard from within NodedTimeout */
    int down;                     /* DOWN: not responding (after registering), or set so */
    int admin_down;               /* set DOWN by an administrator (kept across restarts) */
    int drain;                    /* drained by an administrator (kept across restarts) */
    char *reason;
    time_t reason_time;
    uid_t reason_uid;
    time_t last_seen;
    time_t boot_time;             /* the daemon's start, as it said */
    char *version;
    uint32_t alloc_cpus;
    uint64_t alloc_mem_mb;
    uint32_t njobs;               /* running components holding part of it */
    uint32_t exclusive;           /* of those, ones that asked for --exclusive */
    uint32_t *cpu_holds;          /* per CPU index: running components holding it
                                   * (ctld/node_cpus.c) */
    uint32_t cpu_holds_len;
    struct rpc_peer *peer;        /* the line to its daemon, made on first use */
    char peer_addr[256];          /* where the line goes */
    uint16_t peer_port;
    struct gres_count *gres_found; /* what its daemon reported at registration, summed
                                    * per group (ctld/node_gres.c) */
    size_t ngres_found;
};

struct node_table {
    struct node *nodes;           /* aligned with ctld->conf->nodes */
    size_t count;
    struct hashmap *by_name;      /* name -> struct node */
    time_t started;               /* when the table was built: unregistered nodes time
                                   * out from here */
};

int node_table_build(struct ctld *c, char *errbuf, size_t errlen);
/* After a new configuration is in place: nodes keep their state by name. */
int node_table_rebuild(struct ctld *c, char *errbuf, size_t errlen);
void node_table_free(struct node_table *t);
struct node *node_find(const struct ctld *c, const char *name);
size_t node_index(const struct ctld *c, const struct node *n);

/* Host lists from users (ctld/node_match.c): never longer than this. */
#define NODE_LIST_MAX_LEN (64 * 1024)
/* The configured nodes expr means, by matching their names against it (it is never
 * expanded): indexes ascending (into conf->nodes, which the node table follows) in *out
 * (malloc'd, free it; NULL for an empty list), *complete set when expr names no host
 * that is not configured. TS_EINVALID_NODE_NAME for a malformed or too long list. */
int node_list_match(const struct ctld *c, const char *expr, uint32_t **out, size_t *count,
                    int *complete);

/* May the node take new work? */
int node_available(const struct node *n);
/* "IDLE", "MIXED", "ALLOCATED", "DOWN", "UNKNOWN", with "+DRAIN" and "+NOT_RESPONDING". */
const char *node_state_text(const struct node *n, char *buf, size_t len);

/* Which CPU indices running components hold (ctld/node_cpus.c): ids ("0-1,3", a
 * NodeAlloc's cpu_ids) held (sign 1) or released (-1); TS_OK, TS_ENOMEM, or TS_EIDSET for
 * text that is no id set (nothing changes then). */
int node_cpus_hold(struct node *n, const char *ids, int sign);
/* count CPU indices for a new allocation on n, the lowest nobody holds (the lowest held by
 * the fewest when too few are free): malloc'd id set text, NULL when out of memory. */
char *node_cpus_pick(const struct node *n, uint32_t count);

/* What running components hold (ctld/node_mgr.c keeps the counters). */
void node_hold(struct ctld *c, const Tessera__JobRecord *rec);
void node_release(struct ctld *c, const Tessera__JobRecord *rec);

/* The daemon registered / sent a heartbeat (running_jobs: job ids with processes there,
 * or ends not yet acknowledged). Fills resp's kill list. */
int node_register(struct ctld *c, const Tessera__NodeRegisterRequest *req,
                  Tessera__NodeRegisterResponse *resp, uint32_t **kill, char *errbuf,
                  size_t errlen);
/* The generic resources a registering daemon reports (ctld/node_gres.c): TS_EINVAL with
 * errbuf set for a malformed or oversized report (nothing kept); else TS_OK (or
 * TS_ENOMEM), the report kept on n, and why is Slurm's drain reason when they are fewer
 * than the node's Gres= ("" when not). */
int node_gres_check(struct node *n, const Tessera__NodeRegisterRequest *req, char *why,
                    size_t len, char *errbuf, size_t errlen);
/* Whether what n's daemon last reported is fewer than its Gres= says (after a
 * reconfiguration too); then why is the reason. */
int node_gres_short(const struct node *n, char *why, size_t len);
/* A heartbeat: the node is seen; the jobs it lists are reconciled as at registration
 * (resp->kill_jobs points into *kill, the caller's to free). TS_EINVALID_NODE_NAME when
 * the node is not registered (it must register again). */
int node_heartbeat(struct ctld *c, const Tessera__NodeHeartbeatRequest *req,
                   Tessera__NodeHeartbeatResponse *resp, uint32_t **kill);
/* Nodes silent for NodedTimeout become DOWN and their jobs fail (or are requeued). */
void node_check_timeouts(struct ctld *c, time_t now);
/* scontrol update nodename=... state=drain|resume|down|undrain reason=... */
int node_update(struct ctld *c, const Tessera__NodeUpdateRequest *req, uid_t uid, char *errbuf,
                size_t errlen);
/* The line to the node's daemon (made on first use). NULL when out of memory. */
struct rpc_peer *node_peer(struct ctld *c, struct node *n);
/* Send req to the node's daemon, best effort: a node that does not answer is dealt with by
 * its time-out; a failure is logged as "<what> not delivered". what must be a literal.
 * It leaves once the changes queued before it are durable (store_after_commit), as
 * launches do: a signal never runs ahead of the change that caused it. */
void node_send(struct ctld *c, const char *name, const Tessera__Request *req, const char *what);
/* The node stopped answering (a launch or signal could not reach it). */
void node_set_down(struct ctld *c, struct node *n, const char *reason);

#endif
