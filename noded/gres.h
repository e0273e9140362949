/* The node's generic resources (docs/gres.md §1.3-§1.4): resolved once at start from
 * gres.conf's lines for this node, the GPUs the NVIDIA driver lists when AutoDetect asks
 * for them, and the node line's Gres=; reported to the controller at each registration,
 * which drains the node when they are fewer than its Gres= says. */
#ifndef TESSERA_NODED_GRES_H
#define TESSERA_NODED_GRES_H

#include "tessera.pb-c.h"

#include <stddef.h>

struct noded;

/* Fill nd->gres. An unreadable or invalid gres.conf, or a name outside GresTypes, is an
 * error (errbuf names the file and line): the daemon does not start, as Slurm's. */
int noded_gres_resolve(struct noded *nd, char *errbuf, size_t errlen);
void noded_gres_clear(struct noded *nd);

/* The registration's entries: *out points into nd->gres and a malloc'd array (free with
 * noded_gres_report_free); *n 0 and *out NULL when the node has none. TS_OK or TS_ENOMEM. */
int noded_gres_report(struct noded *nd, Tessera__GresUnitReport ***out, size_t *n);
void noded_gres_report_free(Tessera__GresUnitReport **report, size_t n);

#endif
