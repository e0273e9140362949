/* A controller built in-process for the unit tests of ctld/<module>.c: the configuration
 * from text, the state in LMDB in a temporary folder, the tables loaded as ctld_create
 * loads them (ctld_state_open), no MUNGE, no listening socket, no node daemon. Requests
 * are made by calling the controller's functions; the loop turns only when a test turns
 * it (ctld_fixture_turn), so nothing runs behind a test's back. */
#ifndef TESSERA_TESTS_UNIT_CTLD_FIXTURE_H
#define TESSERA_TESTS_UNIT_CTLD_FIXTURE_H

#include "ctld/ctld.h"
#include "tessera.pb-c.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Users of the tests: an owner, another user, the same group. Not root, not SlurmUser. */
#define FIX_UID 1001
#define FIX_OTHER_UID 1002
#define FIX_GID 100

struct ctld_fixture {
    char dir[256];     /* temporary folder: state/ holds the LMDB environment */
    struct ctld *c;
    char *conf_text;
    int with_sched;
};

/* The controller for conf_text (node, partition and other lines; ClusterName, the state
 * folder, SlurmUser (the test's uid) and PluginDir are added). with_sched: the scheduler
 * too (sched_init: its plugins loaded, its cycles run when the loop turns). Fails the
 * test on error. */
void ctld_fixture_up(struct ctld_fixture *f, const char *conf_text, int with_sched);
/* cmocka's group of the two above: *state becomes a new fixture, up for conf_text; the
 * teardown brings it down and frees it. */
int ctld_fixture_setup(void **state, const char *conf_text, int with_sched);
int ctld_fixture_teardown(void **state);
/* ctld_destroy (everything queued is committed), then the controller built again from
 * the same folder, as a restart reads its state. */
void ctld_fixture_restart(struct ctld_fixture *f);
/* ctld_destroy, then the folder removed. */
void ctld_fixture_down(struct ctld_fixture *f);

/* A component as sbatch would send it without a script (an allocation: nothing is
 * launched on a node when it starts): one task, work_dir /tmp, partition part (NULL: the
 * default). The strings are static. */
void ctld_fixture_desc(Tessera__JobDesc *d, const char *part);
/* job_submit of n components for uid (gid FIX_GID) from host "login": its result; the
 * leader's id in *id (may be NULL), the error text in errbuf (may be NULL). */
int ctld_fixture_submit(struct ctld_fixture *f, Tessera__JobDesc **comps, size_t n, uid_t uid,
                        uint32_t *id, char *errbuf, size_t errlen);
/* One plain component d, submitted by uid; asserts success, returns its id. */
uint32_t ctld_fixture_submit_one(struct ctld_fixture *f, Tessera__JobDesc *d, uid_t uid);
/* The component with this id (asserted to exist). */
struct job *ctld_fixture_job(struct ctld_fixture *f, uint32_t id);
/* job_start_unit on the node named, each component given cpus CPUs there, as the
 * scheduler starts a unit it placed. Asserts success. */
void ctld_fixture_start(struct ctld_fixture *f, uint32_t id, const char *node, uint32_t cpus);
/* The node's daemon registers (node_register, as the RPC handler calls it): the node
 * becomes available to the scheduler. */
void ctld_fixture_register(struct ctld_fixture *f, const char *node);
/* Turn the loop (timers, children, commits) until done(arg) is true or timeout_ms passed;
 * returns done's last answer. */
int ctld_fixture_turn(struct ctld_fixture *f, int (*done)(struct ctld_fixture *, void *),
                      void *arg, int timeout_ms);

#endif
