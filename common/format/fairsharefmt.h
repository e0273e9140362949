/* How "scontrol show fairshare" prints (docs/policies.md): a header line with the entity
 * kind, whether fair share orders the queue now and the half-life; then sshare's columns
 * for every node of the tree, names indented one space per level. */
#ifndef TESSERA_COMMON_FAIRSHAREFMT_H
#define TESSERA_COMMON_FAIRSHAREFMT_H

#include "tessera.pb-c.h"

/* The whole text (malloc'd; NULL when out of memory). */
char *fairsharefmt_table(const Tessera__FairshareQueryResponse *r);

#endif
