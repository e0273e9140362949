#include "common/job/acctusage.h"

#include "common/util/errors.h"
#include "common/util/pbutil.h"

#include <stdlib.h>

int acctusage_merge(Tessera__AcctUsage **into, const Tessera__AcctUsage *from)
{
    if (!from)
        return TS_OK;
    Tessera__AcctUsage *u = *into;
    if (!u)
        return acctusage_replace(into, from);
    if (from->max_rss_kb > u->max_rss_kb) {
        if (pbutil_set_string(&u->max_rss_node, from->max_rss_node) != 0)
            return TS_ENOMEM;
        u->max_rss_kb = from->max_rss_kb;
        u->max_rss_task = from->max_rss_task;
    }
    u->user_usec += from->user_usec;
    u->sys_usec += from->sys_usec;
    u->oom_kills += from->oom_kills;
    return TS_OK;
}

int acctusage_replace(Tessera__AcctUsage **slot, const Tessera__AcctUsage *from)
{
    Tessera__AcctUsage *copy = NULL;
    if (from && !(copy = pbutil_copy(&from->base)))
        return TS_ENOMEM;
    if (*slot)
        tessera__acct_usage__free_unpacked(*slot, NULL);
    *slot = copy;
    return TS_OK;
}
