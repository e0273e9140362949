/* "scontrol update jobid=... key=value...": the words turned into a JobUpdateRequest. */
#ifndef TESSERA_CMDS_SCONTROL_UPDATE_H
#define TESSERA_CMDS_SCONTROL_UPDATE_H

#include "tessera.pb-c.h"

#include <stddef.h>
#include <time.h>

/* Outcome of reading the words. */
enum update_parse {
    UPDATE_OK,
    UPDATE_NO_ENTITY,     /* no JobId= among the words */
    UPDATE_NO_CHANGES,    /* JobId= alone */
    UPDATE_UNSUPPORTED,   /* a key scontrol does not update: msg holds "key=value" */
    UPDATE_BAD_VALUE,     /* msg holds Slurm's complaint */
};

/* words: argv after "update". *req's job_id and changes are malloc'd: free with
 * scontrol_update_free. */
enum update_parse scontrol_update_parse(int nwords, char **words, time_t now,
                                        Tessera__JobUpdateRequest *req, char *msg, size_t len);
void scontrol_update_free(Tessera__JobUpdateRequest *req);

#endif
