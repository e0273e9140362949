/* The PMI-1 server of one step on one node: the simple line protocol that MPICH's
 * PMI_FD client speaks (src/pmi/simple in MPICH), so that the tasks srun starts join
 * one MPI world.
 *
 * The step daemon makes a socketpair per task, gives the task one end as PMI_FD (with
 * PMI_RANK and PMI_SIZE in its environment) and hands the other end to pmi_add_client().
 * The module owns those ends from then on: non-blocking, watched on the loop, each with
 * an output buffer flushed as the task reads. It answers the protocol and keeps the
 * key-value space (KVS) of the step.
 *
 * Barriers span nodes, so they are split between the module and its caller. When every
 * local task has entered barrier seq, ops->fence reports the pairs put on this node since
 * the previous barrier; the caller gathers them from all nodes (through srun) and calls
 * pmi_fence_done() with every pair put anywhere so far; the module merges those into its
 * KVS and answers barrier_out to the waiting tasks. pmi_fence_done() may be called from
 * within ops->fence (a step on a single node), and pmi_destroy() from within either
 * callback.
 *
 * A task whose connection closes (it exited, with or without finalize, or broke the
 * protocol and was cut off) is forgotten, but an entry it made into the current barrier
 * still counts. A task that closes before entering a barrier keeps that barrier from
 * ever completing: the module never guesses at a partial world; the step daemon sees
 * the task die and ends the step.
 *
 * One thread (the loop's) owns a struct pmi.
 */
#ifndef TESSERA_NODED_PMI_H
#define TESSERA_NODED_PMI_H

#include <stddef.h>
#include <stdint.h>

struct loop;
struct pmi;

/* What the protocol announces in cmd=maxes. They are buffer sizes, NUL included, as the
 * client uses them: a kvsname, key or value must be shorter. */
#define PMI_KVSNAME_MAX 256
#define PMI_KEYLEN_MAX 256
#define PMI_VALLEN_MAX 1024
/* The longest request line (newline excluded); a longer one closes that client. */
#define PMI_LINE_MAX 8192
/* What one step's KVS may hold on a node, every pair counted (preset ones, local puts
 * and those merged from other nodes at barriers): a put beyond is refused with
 * "rc=-1 msg=kvs_full", a barrier whose pairs would not fit ends with
 * "barrier_out rc=-1 msg=kvs_full" for its tasks. The bytes are those of keys and values;
 * the whole KVS travels to srun and back in one message at every barrier, so it stays
 * well below a frame (common/net/frame.h). The step daemon, which runs as root, holds the
 * KVS and a copy of the pairs put here since the last barrier: two caps' worth at most. */
#define PMI_KVS_MAX_PAIRS 131072u
#define PMI_KVS_MAX_BYTES (8u << 20)

struct pmi_kv {
    const char *key;
    const char *value;
};

struct pmi_config {
    uint32_t size;          /* PMI_SIZE: ranks of the whole step (all nodes) */
    uint32_t universe_size; /* 0: same as size */
    uint32_t appnum;        /* usually 0 */
    const char *kvsname;    /* e.g. "tessera.12.0": no spaces, shorter than PMI_KVSNAME_MAX */
    size_t local_tasks;     /* tasks on this node: each barrier waits for them all */
    /* Pairs known from the start, answered by get like any put pair but never reported
     * to ops->fence. MPICH needs PMI_process_mapping, e.g. "(vector,(0,2,4))" for two
     * nodes of four tasks each in block order; the caller computes it. Copied. */
    const struct pmi_kv *preset;
    size_t npreset;
    size_t max_pairs, max_bytes; /* the KVS's caps; 0: PMI_KVS_MAX_PAIRS, _BYTES */
};

struct pmi_ops {
    /* Every local task has entered barrier number seq (0, 1, ...): pairs are the ones put
     * on this node since the previous barrier, in the order of their first put, each
     * once with its latest value (valid during the call). The caller must later call
     * pmi_fence_done() once for this seq. Required. */
    void (*fence)(void *arg, uint32_t seq, const struct pmi_kv *pairs, size_t n);
    /* The task of rank asked to abort the job (cmd=abort); msg is its message, "" when
     * it gave none. No answer goes back: the task exits. May be NULL (logged only). */
    void (*abort)(void *arg, uint32_t rank, int exit_code, const char *msg);
};

/* TS_OK, TS_EINVAL (a config that could not work: no fence callback, size 0, local_tasks
 * 0 or over size, a kvsname or preset pair the protocol cannot carry) or TS_ENOMEM. */
int pmi_create(struct loop *loop, const struct pmi_config *cfg, const struct pmi_ops *ops,
               void *arg, struct pmi **out);

/* Take fd, the server's end of the socketpair of the task of global rank `rank`: it is
 * made non-blocking and close-on-exec and is closed by the module. On failure the caller
 * keeps fd. TS_EINVAL (rank >= size, bad fd), TS_EEXIST (rank already added), TS_EBUSY
 * (local_tasks clients were already added), TS_ENOMEM, or a loop error. */
int pmi_add_client(struct pmi *p, int fd, uint32_t rank);

/* Barrier seq completed everywhere: pairs is every pair put on any node so far. They are
 * merged into the KVS (a key already there takes the new value), then every local task
 * still connected gets barrier_out. TS_OK; TS_EINVAL when seq is not the barrier
 * reported by ops->fence and still open, or a pair is not one the protocol can carry
 * (nothing is changed then); TS_ETOOBIG when the pairs would take the KVS beyond its
 * caps (nothing is merged, and the barrier ends with barrier_out rc=-1 for its tasks);
 * TS_ENOMEM (the barrier stays open: call again). */
int pmi_fence_done(struct pmi *p, uint32_t seq, const struct pmi_kv *pairs, size_t n);

/* Closes every client fd. NULL ok. */
void pmi_destroy(struct pmi *p);

#endif
