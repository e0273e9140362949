/* Placing a job step (docs/04-steps.md §4): from the job's components, with their allocations, and
 * srun's request for each of them, the step's layout as the controller signs it: which
 * nodes, how many tasks on each, which global ranks. Pure: no I/O, no clock, no globals
 * (node addresses come from a callback, times from the caller).
 *
 * Per component, with r = srun's request for it (StepComponentRequest):
 *
 *   Candidates  the component's allocation (rec->allocs) in natural host order, minus
 *               r->exclude. With r->nodelist (-w) every listed node must be in the
 *               allocation and not excluded (else TS_ENODE_CONFIG); the listed nodes are
 *               the step's, followed by the rest of the candidates when -N asks for
 *               more.
 *   Nodes N     the preferred count is the -w nodes' when given; else r->ntasks (Slurm's
 *               srun spreads its tasks over the allocation's nodes, whose count it takes
 *               from SLURM_NNODES: "srun -n2" in a 2-node allocation uses both, "srun -n1"
 *               one), or ceil(ntasks / ntasks_per_node) when both are given; else every
 *               candidate. -N min[-max] bounds it (min_nodes above the candidates:
 *               TS_ENODE_CONFIG; max_nodes 0 means min_nodes, below min_nodes:
 *               TS_EINVAL); never more than the candidates; and with ntasks < N, N
 *               becomes ntasks (Slurm warns and does so). A -w list longer than N is
 *               refused (TS_ENODE_CONFIG) where Slurm drops nodes from it (deliberate:
 *               the user named them). The first N candidates are used, sorted again in
 *               natural order.
 *   Tasks T     r->ntasks; else ntasks_per_node x N when given; else N (one per node).
 *   Capacity    of a node: its allocated CPUs / cpus_per_task (0 means 1), at most
 *               ntasks_per_node when given. A node of capacity 0 (fewer CPUs than -c), or
 *               T above the summed capacity: TS_ETOO_MANY_CPUS. Every node gets a task.
 *   Counts      dealt round by round, one task per node that still has room (3 tasks on
 *               two 4-CPU nodes: 2,1; 5: 3,2), for both distributions.
 *   Ranks       block: consecutive per node, nodes in order; cyclic: in dealing order
 *               (4 tasks on a, b: a has 0,2 and b 1,3). Components are numbered in
 *               ascending offset whatever the input order; first_rank is the sum of the
 *               tasks of the components before.
 *
 *   Busy CPUs   a node's capacity counts only the CPUs no other step holds there (the busy
 *               callback); candidates with no room for a task come after those with room.
 *               -O (overcommit) lifts the CPU bound: up to STEPLAYOUT_MAX_TASKS_PER_NODE
 *               tasks a node (or --ntasks-per-node), taking at most its CPUs.
 *
 * Parts of one allocation (one_allocation: "srun -N1 -n4 a : -N1 -n1 b" in a plain job)
 * are placed in index order as above, each on nodes no earlier part took: a -w naming
 * such a node is TS_ESTEP_NODELIST, a part asking for more nodes than are left (its -N,
 * one node with -n or -w, else all of the allocation) TS_ESTEP_COMPONENTS, each with
 * Slurm's text. A part
 * with -n and without -N or -w takes as few candidates as its tasks fit on.
 *
 * The step's node list (`nodes`, index = SLURM_NODEID) is the union of the components'
 * step nodes in natural order; a node shared by components appears once, with every rank
 * of the step there (ascending), rank_components[i] the index into `components` of
 * ranks[i], and cpus = the sum of the CPUs each component takes there (tasks x cpus_per_task,
 * at most the allocation's CPUs with -O: StepLayoutComponent.node_cpus). */
#ifndef TESSERA_COMMON_STEPLAYOUT_H
#define TESSERA_COMMON_STEPLAYOUT_H

#include "tessera.pb-c.h"

#include <stddef.h>
#include <stdint.h>

struct steplayout_component {
    const Tessera__JobRecord *rec;              /* the job component, with allocs */
    const Tessera__StepComponentRequest *req;   /* srun's request for it */
};

struct steplayout_input {
    uint32_t job_id;            /* the leader's id */
    uint32_t step_id;
    uint32_t uid, gid;
    const char *user_name, *cluster;
    uint32_t het_size;          /* the job's component count; 0 for a plain job */
    const struct steplayout_component *components;  /* any order, distinct offsets */
    size_t ncomponents;
    /* where a node's daemon listens; TS_OK or an error. NULL: addresses left empty. */
    int (*node_addr)(void *arg, const char *node, const char **addr, uint16_t *port);
    void *arg;
    int64_t issued, expires;
    int64_t issued_ms;          /* issued, to the millisecond */
    /* srun A : B in a plain job: every component is the same record, req->het_group the
     * part's index (0..n-1, the layout's offset); see "Parts of one allocation" above */
    int one_allocation;
    /* CPUs other steps hold on node within the component whose own id is job_id (NULL:
     * none); a step places its tasks on what is left */
    uint32_t (*busy)(void *arg, uint32_t job_id, const char *node);
};

/* With -O a node takes tasks beyond its CPUs, up to this many (Slurm's MaxTasksPerNode
 * default). */
#define STEPLAYOUT_MAX_TASKS_PER_NODE 512

/* Place the step. On success *out is a new layout (free with steplayout_free) and TS_OK
 * is returned. On error *out is NULL, errbuf (when errlen > 0) gets a one-line reason
 * ("component 1: node n9 is not in the job's allocation") and the code is returned:
 * TS_ENODE_CONFIG, TS_ETOO_MANY_CPUS (above), TS_EHOSTLIST (malformed -w/-x),
 * TS_EINVAL (no component, duplicate offsets, an offset that is not the request's
 * het_group or not below het_size, several components of a plain job, max_nodes below
 * min_nodes, more than 2^32-1 tasks, an unknown distribution, an allocation node that is
 * not a host name), TS_ENOMEM, or node_addr's error. */
int steplayout_build(const struct steplayout_input *in, Tessera__StepLayout **out,
                     char *errbuf, size_t errlen);
void steplayout_free(Tessera__StepLayout *l);   /* NULL ok */

/* What names the step with its step_id: the own id of its first component (ascending
 * offset). Every component counts its own step ids, so two steps of one job can share a
 * step id (1721.1 on component 0, 1722.1 on component 1) but never this pair; the leader's
 * id (job_id) names the job, not the step. Layouts signed by an older controller lack the
 * field: it is then taken from the components. */
uint32_t steplayout_step_job_id(const Tessera__StepLayout *l);

/* MPICH's PMI_process_mapping value for the layout: "(vector,(0,2,2),(2,1,1))" when the
 * ranks on each node are one consecutive block and the nodes follow rank order (run-length
 * form of the counts), "(vector,(0,N,1))" when rank r is on node r mod N (MPICH repeats
 * the vector, so uneven cyclic counts fit too), "" otherwise (MPICH then works without
 * it). TS_OK; TS_ETOOBIG when the text does not fit in len (buf gets ""); TS_EINVAL for
 * a NULL layout or buffer. */
int steplayout_process_mapping(const Tessera__StepLayout *l, char *buf, size_t len);

#endif
