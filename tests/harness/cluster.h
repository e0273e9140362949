/* A private cluster for integration tests: its own munged, a configuration in a
 * temporary folder, the controller started from the build tree, and the commands run
 * with TESSERA_CONF pointing at it. Everything is stopped and removed by
 * harness_cluster_fini. */
#ifndef TESSERA_TESTS_CLUSTER_H
#define TESSERA_TESTS_CLUSTER_H

#include "harness.h"

#include <stdint.h>
#include <sys/types.h>

#define HARNESS_MAX_NODES 8
/* The controller's name in credentials (rpc_conf.h) for the cluster "itest". */
#define HARNESS_CTLD_NAME "itest/ctld"

struct harness_node {
    char name[32];
    uint16_t port;   /* reserved at init: tests write it into their node lines */
    pid_t pid;
    char log[320];
};

struct harness_cluster {
    char dir[256];
    char conf[320];
    char state[320];
    char ctld_log[320];
    char conf_env[340]; /* "TESSERA_CONF=..." */
    char path_env[4096]; /* "PATH=<build bin>:...": scripts find Tessera's commands first */
    struct harness_munge munge;
    uint16_t ctld_port;
    pid_t ctld;
    struct harness_node nodes[HARNESS_MAX_NODES]; /* n1, n2, ... */
};

/* Start munged and write tessera.conf: the basics (ClusterName=itest, CtldHost=127.0.0.1,
 * a free CtldPort, StateSaveLocation and AuthInfo in the folder) followed by extra lines
 * (may be NULL). */
int harness_cluster_init(struct harness_cluster *c, const char *extra);
/* Rewrite tessera.conf with other extra lines (same basics, same port). */
int harness_cluster_write_conf(struct harness_cluster *c, const char *extra);
/* Start tessera-ctld -D and wait until it answers a ping (10 s at most). */
int harness_ctld_start(struct harness_cluster *c);
/* Stop it with sig (SIGTERM: clean stop; SIGKILL: crash). Returns its waitpid status. */
int harness_ctld_stop(struct harness_cluster *c, int sig);
/* Stop it with SIGTERM and say whether it exited 0 (under the sanitizers a leak or an error
 * makes it non-zero); if not, the end of its log goes to stderr. 0 when clean, -1 if not. */
int harness_ctld_stop_clean(struct harness_cluster *c);
/* Run a command from the build tree (bin/<cmd>) with the cluster's TESSERA_CONF.
 * args: NULL-terminated, without the command itself. Returns the exit status. */
int harness_cmd(struct harness_cluster *c, const char *cmd, const char *const args[], char **out,
                char **err);
/* The same as user uid (its group id taken equal to uid, as nobody/nogroup 65534). */
int harness_cmd_as(struct harness_cluster *c, uid_t uid, const char *cmd, const char *const args[],
                   char **out, char **err);
/* Start a command in the background (its own process group), stdout and stderr appended
 * to log. Returns its pid (wait with harness_wait), or -1. */
pid_t harness_cmd_spawn(struct harness_cluster *c, const char *cmd, const char *const args[],
                        const char *log);
/* "NodeName=n1 NodeAddr=127.0.0.1 Port=P1 <attrs>\n..." for nodes n1..nn, with the ports
 * reserved at init, into buf. */
const char *harness_node_lines(struct harness_cluster *c, int n, const char *attrs, char *buf,
                               size_t len);
/* The usual live cluster in one call: munged and tessera.conf (the basics, then extra,
 * then n node lines with attrs, then "PartitionName=debug Nodes=n[1-n] Default=YES
 * MaxTime=UNLIMITED"), a folder <dir>/out that everybody may write (its path into outdir),
 * the controller and the n node daemons, registered. 0 or -1. */
int harness_cluster_up(struct harness_cluster *c, int n, const char *attrs, const char *extra,
                       char *outdir, size_t outlen);
/* The second half of harness_cluster_up, for a test that wrote its own configuration:
 * <dir>/out for everybody (into outdir), the controller, n node daemons, registered. */
int harness_cluster_start(struct harness_cluster *c, int n, char *outdir, size_t outlen);
/* Start tessera-noded -D for node n<i> (1-based). */
int harness_noded_start(struct harness_cluster *c, int i);
int harness_noded_stop(struct harness_cluster *c, int i, int sig);
/* Wait (up to timeout_ms) until the controller shows `count` nodes registered and
 * responding. */
int harness_wait_nodes(struct harness_cluster *c, int count, int timeout_ms);
/* Kill every process left under this test (jobs whose daemon is gone are re-parented to
 * the test process, a child subreaper). */
void harness_kill_leftovers(void);

/* The name the daemon listening on port proves in credentials (rpc_conf.h):
 * HARNESS_CTLD_NAME for the controller, "itest/noded/<node>" for a node daemon of this
 * cluster; "" for any other port. buf holds at least 64 bytes. */
const char *harness_daemon_name(struct harness_cluster *c, uint16_t port, char *buf, size_t len);

/* The same with extra environment entries ("K=V", NULL-terminated). */
int harness_cmd_full(struct harness_cluster *c, uid_t uid, const char *const extra_env[],
                     const char *cmd, const char *const args[], char **out, char **err);
void harness_cluster_fini(struct harness_cluster *c);

#endif
