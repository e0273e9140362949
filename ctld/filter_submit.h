/* Submission filters (docs/05-filters.md §2, docs/filters.md): the chain of each component runs
 * before the job exists; the reply waits for it, other requests do not. */
#ifndef TESSERA_CTLD_FILTER_SUBMIT_H
#define TESSERA_CTLD_FILTER_SUBMIT_H

#include "common/rpc/rpc_server.h"

#include <sys/types.h>

struct ctld;

/* When filters apply to sub, start them and return 1: req is taken care of (answered
 * later with the job submitted as the filters left it, or refused; or at once when the
 * filters could not be started). 0: no filter applies; the caller submits. */
int filter_submit_start(struct ctld *c, struct rpc_request *req,
                        const Tessera__SubmitRequest *sub, uid_t uid, gid_t gid,
                        const char *host);

/* Shutdown: forget waiting submissions (their filters are killed by filter_run). */
void filter_submit_shutdown(struct ctld *c);

#endif
