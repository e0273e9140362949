/* The resource selection plugin interface (SelectType=select/NAME, plugins/select/).
 *
 * A select plugin decides where a job component's tasks go. It is pure: it sees the nodes
 * through a read-only view (what each node has and what running jobs hold) and answers
 * with a placement, or with why there is none. It does no I/O, keeps no state between
 * calls and reads no clock, so the controller, the scheduler plugins and the unit tests
 * drive exactly the same code.
 */
#ifndef TESSERA_COMMON_SELECT_H
#define TESSERA_COMMON_SELECT_H

#include "common/util/plugin.h"

#include <stddef.h>
#include <stdint.h>

#define SELECT_PLUGIN_TYPE "select"

/* One node as the plugin sees it. */
struct select_node {
    const char *name;
    uint32_t cpus;         /* configured */
    uint32_t alloc_cpus;   /* held by running jobs */
    uint64_t mem_mb;       /* RealMemory */
    uint64_t alloc_mem_mb;
    const char *features;  /* "a,b" */
    uint32_t weight;       /* lower is preferred */
    uint32_t jobs;         /* running job components holding part of it */
    int available;         /* up and not drained: may take new work */
    int exclusive;         /* held whole by a job that asked for --exclusive */
};

struct select_view {
    const struct select_node *nodes;
    size_t nnodes;
    /* Room for nnodes entries the plugin may use while it chooses (a call's scratch);
     * NULL: it uses the placement's own storage, which then needs room for every
     * eligible node. */
    struct select_node_alloc *scratch;
};

/* One job component's request, with the controller's defaults already applied. */
struct select_request {
    const uint32_t *eligible;  /* node indexes it may use (its partition, within -w, not -x),
                                * ascending */
    size_t neligible;
    const uint32_t *required;  /* -w: nodes that must all be part of the placement */
    size_t nrequired;
    const char *constraint;    /* -C feature expression, NULL or "" for none */
    uint32_t min_nodes;        /* >= 1 */
    uint32_t max_nodes;        /* 0: no maximum */
    uint32_t ntasks;           /* >= 1 */
    uint32_t cpus_per_task;    /* >= 1 */
    uint32_t ntasks_per_node;  /* 0: no constraint */
    uint64_t mem_per_node_mb;  /* --mem; 0 with mem_whole_node unset: no per-node request */
    int mem_whole_node;        /* --mem=0: all of each node's memory */
    uint64_t mem_per_cpu_mb;   /* --mem-per-cpu; 0: none */
    int exclusive;             /* --exclusive: whole nodes, shared with nobody */
};

/* What a component gets on one node. */
struct select_node_alloc {
    uint32_t node;             /* index into the view */
    uint32_t cpus;
    uint64_t mem_mb;
    uint32_t tasks;
};

/* A placement: nodes in ascending index order. The caller provides `nodes` with room for
 * max(neligible, min_nodes) entries, or, when the view has scratch, for
 * select_alloc_room(req) entries (a placement never uses more nodes than that). */
struct select_alloc {
    struct select_node_alloc *nodes;
    size_t nnodes;
};

/* The most nodes a placement of req uses: every node it takes holds at least one task. */
static inline size_t select_alloc_room(const struct select_request *req)
{
    size_t most = req->ntasks > req->min_nodes ? req->ntasks : req->min_nodes;
    return most < req->neligible ? most : req->neligible;
}

/* Results of the placement functions. */
enum select_result {
    SELECT_OK = 0,     /* placed */
    SELECT_BUSY = 1,   /* not now: other jobs hold what it needs */
    SELECT_NEVER = 2,  /* not even on an empty cluster (too big, no such features) */
};

struct select_ops {
    struct plugin_header header;
    /* Place one component on the nodes as they are. */
    enum select_result (*place)(const struct select_view *view, const struct select_request *req,
                                struct select_alloc *out);
    /* As place, without telling SELECT_NEVER from SELECT_BUSY (both are SELECT_BUSY):
     * what a planner asks at many future times once it knows the request can run at
     * all, for a fraction of the cost. */
    enum select_result (*try_place)(const struct select_view *view,
                                    const struct select_request *req, struct select_alloc *out);
    /* Place the components of a het job together, all or nothing: each sees what the
     * others take (they may share nodes). outs[i] is the placement of reqs[i]. */
    enum select_result (*place_het)(const struct select_view *view,
                                    const struct select_request *reqs, size_t n,
                                    struct select_alloc *outs);
};

#endif
