/* Resource usage as the node daemons measure it (AcctUsage in proto/tessera.proto), kept
 * in the controller's records: combined over a step's nodes, copied for a batch script.
 *
 * The usage a record holds is allocated as protobuf-c's unpack would (malloc, its string
 * owned unless it is protobuf_c_empty_string), so the record's free_unpacked frees it.
 */
#ifndef TESSERA_COMMON_ACCTUSAGE_H
#define TESSERA_COMMON_ACCTUSAGE_H

#include "tessera.pb-c.h"

/* Add from (NULL: nothing) into *into, allocating *into on first use: CPU times are
 * summed; the largest max_rss_kb is kept with its node and task (the earlier one on a
 * tie). TS_OK or TS_ENOMEM (*into then unchanged). */
int acctusage_merge(Tessera__AcctUsage **into, const Tessera__AcctUsage *from);

/* Replace *slot (freed) by a copy of from (NULL: none). TS_OK or TS_ENOMEM (*slot then
 * unchanged). */
int acctusage_replace(Tessera__AcctUsage **slot, const Tessera__AcctUsage *from);

#endif
