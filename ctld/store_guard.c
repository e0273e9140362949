/* Whether the controller takes changes now (ctld/store_guard.h). */
#include "ctld/store_guard.h"

#include "ctld/ctld.h"
#include "ctld/job_change.h"

#include "common/conf/conf.h"
#include "common/rpc/rpc_server.h"
#include "common/util/errors.h"
#include "common/util/log.h"
#include "ctld/store.h"

/* Below StateMinFreeMB? Logged once when it starts and once when it ends. Read at every
 * submission: one fstatvfs, cheap next to the commit the submission costs. */
static int low_on_space(struct ctld *c)
{
    uint64_t min = (uint64_t)c->conf->state_min_free_mb << 20;
    if (min == 0)
        return 0;
    uint64_t free_bytes;
    if (store_free_space(c->store, &free_bytes) != TS_OK)
        return c->store_low_space; /* cannot tell: keep what we knew */
    int low = free_bytes < min;
    if (low && !c->store_low_space)
        log_error("StateSaveLocation %s has %llu MB free, less than StateMinFreeMB=%u: "
                  "submissions are refused until there is more",
                  c->conf->state_save_location, (unsigned long long)(free_bytes >> 20),
                  c->conf->state_min_free_mb);
    else if (!low && c->store_low_space)
        log_info("StateSaveLocation %s has %llu MB free again: submissions are taken",
                 c->conf->state_save_location, (unsigned long long)(free_bytes >> 20));
    c->store_low_space = low;
    return low;
}

int ctld_change_refusal(struct ctld *c, enum ctld_change kind)
{
    if (store_failing(c->store))
        return TS_ESTORE_FAILING;
    if (kind == CTLD_CHANGE_NEW_WORK && low_on_space(c))
        return TS_ESTORE_LOW_SPACE;
    return TS_OK;
}

int ctld_refuse_change(struct ctld *c, struct rpc_request *req, enum ctld_change kind)
{
    int err = ctld_change_refusal(c, kind);
    if (err == TS_OK)
        return 0;
    rpc_respond_error(req, err, NULL);
    return 1;
}

/* The store logs the failure and the recovery itself; what waited for commits to work
 * (the starts the scheduler held back) goes on now. */
static void on_store_health(void *arg, int err)
{
    struct ctld *c = arg;
    if (err == TS_OK)
        job_changed_store_back(c);
}

void ctld_store_guard_init(struct ctld *c)
{
    store_on_health(c->store, on_store_health, c);
}
