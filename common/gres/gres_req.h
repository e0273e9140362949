/* Requests for generic resources, in Slurm 22.05's textual forms (docs/gres.md §2).
 *
 * The commands turn the options into the stored forms, which a job description keeps as
 * text, as Slurm shows them; the controller parses the stored forms again at every
 * submission, since a request need not come from the commands:
 *   --gres=gpu:a100:2,bandwidth:1G -> tres_per_node "gres:gpu:a100:2,gres:bandwidth:1G"
 *   --gpus-per-node=2              -> tres_per_node "gres:gpu:2"
 *   --gpus=a100:4                  -> tres_per_job  "gres:gpu:a100:4"
 *   --gpus-per-task=1              -> tres_per_task "gres:gpu:1"
 *   --cpus-per-gpu=4               -> cpus_per_tres "gres:gpu:4"
 *   --mem-per-gpu=1G               -> mem_per_tres  "gres:gpu:1024" (megabytes)
 * An item is NAME[:TYPE][:COUNT]. A field after the name that starts with a digit is the
 * count, which may end in K, M, G, T or P (times 1024 each, as in Slurm); any other is
 * the type ("gpu:a100" is one a100). A missing count is 1; a count of 0 is accepted and
 * asks for nothing, as in Slurm.
 *
 * Pure functions: no configuration is read here. Which names exist (GresTypes) and what
 * the nodes have are the caller's to pass in (gres_req_names_known, gres_req_fits).
 */
#ifndef TESSERA_COMMON_GRES_REQ_H
#define TESSERA_COMMON_GRES_REQ_H

#include "common/gres/gres.h"

#include <stddef.h>
#include <stdint.h>

#define GRES_REQ_SPEC_MAX 1024                /* characters in one stored form */
#define GRES_REQ_ITEMS_MAX 16                 /* items in one list */
#define GRES_REQ_COUNT_MAX (UINT64_C(1) << 50) /* units in one item (1P) */

struct gres_req_list {
    struct gres_count item[GRES_REQ_ITEMS_MAX];
    size_t n;
};

enum gres_req_option {
    GRES_REQ_OPT_GRES, /* --gres: NAME[:TYPE][:COUNT],...; or "none" */
    GRES_REQ_OPT_GPUS, /* --gpus, --gpus-per-node, --gpus-per-task: [TYPE:]COUNT,... */
};

/* An option's argument in its stored form, in *out (malloc'ed; NULL for --gres=none, in
 * any case). TS_EINVALID_TRES for a malformed count, TS_EINVALID_GRES for anything else
 * malformed or out of bounds, TS_ENOMEM. */
int gres_req_from_option(enum gres_req_option opt, const char *arg, char **out);

/* A stored form. NULL and "" are the empty list. Errors as gres_req_from_option. */
int gres_req_parse(const char *stored, struct gres_req_list *out);

/* Units of the one GPU kind that --cpus-per-gpu and --mem-per-gpu store. */
int gres_req_per_gpu(uint64_t value, char *buf, size_t len);

/* One component's GRES fields (stored forms, NULL when not given) and the fields they are
 * checked against. */
struct gres_req_job {
    const char *per_node, *per_job, *per_task;
    const char *cpus_per_tres, *mem_per_tres;
    const char *flags;  /* "enforce-binding" or "disable-binding" */
    int has_ntasks;     /* -n */
    uint32_t ntasks;
    int has_task_shape; /* -n, -N or --ntasks-per-node: a task count can be derived */
    int has_cpus_per_task;
    int has_mem;        /* --mem or --mem-per-cpu */
};

/* Syntax, bounds and how the options combine, with Slurm's sentence for each refusal in
 * why. TS_OK, TS_EINVALID_TRES or TS_EINVALID_GRES. */
int gres_req_check(const struct gres_req_job *j, char *why, size_t len);

/* Every item's name is one of types, a comma-separated list (GresTypes): TS_OK or
 * TS_EINVALID_GRES. */
int gres_req_names_known(const struct gres_req_list *l, const char *types);

/* Units a node with the units node[0..n) has of what item asks: of its type when it
 * names one, of its name otherwise. */
uint64_t gres_req_available(const struct gres_count *node, size_t n,
                            const struct gres_count *item);

/* Whether such a node could hold all of l at once: each typed item by its type, the items
 * of one name (typed or not) together by the name. 1 or 0. */
int gres_req_fits(const struct gres_req_list *l, const struct gres_count *node, size_t n);

/* Whether a component's request could ever be met by the nodes it may use, counted one
 * node at a time (the controller's loop over the candidate nodes at submission):
 *   gres_req_tally_init: parse the lists (gres_req_check passed them) and check every name
 *     against types (GresTypes): TS_OK, TS_EINVALID_GRES;
 *   gres_req_tally_node: one candidate node's units;
 *   gres_req_tally_verdict: TS_OK when at least min_nodes nodes could each hold the
 *     per-node list and one task's per-task list, and the candidates together hold the
 *     per-job list; else TS_ENODE_CONFIG ("Requested node configuration is not
 *     available", as Slurm refuses a typed request no node has).
 * Placing units on nodes over time is the scheduler's; this only refuses what never fits. */
struct gres_req_tally {
    struct gres_req_list per_node, per_job, per_task, one_node; /* one_node: node + task */
    int asks;                                 /* any item with a count above 0 */
    uint32_t fitting_nodes;                   /* nodes that hold one_node */
    uint64_t job_units[GRES_REQ_ITEMS_MAX];   /* per_job's items over every node */
};
int gres_req_tally_init(struct gres_req_tally *t, const struct gres_req_job *j,
                        const char *types);
void gres_req_tally_node(struct gres_req_tally *t, const struct gres_count *units, size_t n);
int gres_req_tally_verdict(const struct gres_req_tally *t, uint32_t min_nodes);

/* The units of name that l asks for, all types together. */
uint64_t gres_req_total(const struct gres_req_list *l, const char *name);

#endif
