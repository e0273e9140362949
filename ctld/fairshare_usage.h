/* Fair share in the controller (docs/policies.md): the resource-group tree in use, the
 * usage charged to it from running jobs (allocated CPU-seconds), decay with half_life,
 * and the usage kept in the "fairshare" database every sync_time and at shutdown. */
#ifndef TESSERA_CTLD_FAIRSHARE_USAGE_H
#define TESSERA_CTLD_FAIRSHARE_USAGE_H

#include "tessera.pb-c.h"

#include <stddef.h>
#include <time.h>

struct ctld;
struct fairshare;
struct rpc_request;

/* The tree of conf's ResourceGroupFile= (root and unknown alone without one) with the
 * policy's unknown_shares. TS_OK or TS_ECONF with the file and line in errbuf. */
struct conf;
struct policy;
int fairshare_usage_load_tree(const struct conf *conf, const struct policy *policy,
                              struct fairshare **out, char *errbuf, size_t errlen);

/* Start-up: take tree (owned from now) and restore the saved usage into it. */
int fairshare_usage_init(struct ctld *c, struct fairshare *tree, char *errbuf, size_t errlen);
/* Reconfigure: the new tree (owned from now) takes over the usage by name. */
void fairshare_usage_replace_tree(struct ctld *c, struct fairshare *tree);
/* Shutdown: the usage saved (queued before the store closes), everything freed. */
void fairshare_usage_fini(struct ctld *c);

/* Once a second: every 30 s decay and charge the running jobs; every sync_time save. */
void fairshare_usage_tick(struct ctld *c, time_t now);
/* A component stops running (it ends or is requeued): charge what it used since the
 * last charge. */
struct job_change;
void fairshare_usage_job_changed(struct ctld *c, const struct job_change *ch);

/* Whether the current period's policy uses fair share (fair_share: true or a fair_share
 * sort key). */
int fairshare_usage_wanted(const struct ctld *c, time_t now);
/* The tree node a job is charged to under the current period's fairshare_entity (-1:
 * none, out of memory). */
int fairshare_usage_entity(struct ctld *c, const Tessera__JobRecord *r, time_t now);
const struct fairshare *fairshare_usage_tree(const struct ctld *c);

void ctld_handle_fairshare_query(struct rpc_request *req, const Tessera__Request *msg,
                                 void *arg);

#endif
