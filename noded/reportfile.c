/* End reports in the state folder (noded/reportfile.h). */
#include "noded/reportfile.h"

#include "common/util/errors.h"
#include "common/util/safefs.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PREFIX "report."
#define LIST_MAX_NAMES (1u << 20) /* entries of the state folder looked at */

static void file_name(uint64_t seq, char *buf, size_t len)
{
    snprintf(buf, len, PREFIX "%" PRIu64, seq);
}

int reportfile_parse_name(const char *name, uint64_t *seq)
{
    if (strncmp(name, PREFIX, sizeof(PREFIX) - 1))
        return 0;
    const char *digits = name + sizeof(PREFIX) - 1;
    if (*digits < '0' || *digits > '9')
        return 0;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(digits, &end, 10);
    if (errno || *end)
        return 0;
    *seq = v;
    return 1;
}

int reportfile_write(int dirfd, uint64_t seq, const Tessera__JobCompleteRequest *job,
                     const Tessera__StepCompleteRequest *step)
{
    size_t len = job ? tessera__job_complete_request__get_packed_size(job)
                     : tessera__step_complete_request__get_packed_size(step);
    if (len + 1 > REPORTFILE_MAX_BYTES)
        return TS_ETOOBIG;
    uint8_t *buf = malloc(len + 1);
    if (!buf)
        return TS_ENOMEM;
    buf[0] = job ? 'J' : 'S';
    if (job)
        tessera__job_complete_request__pack(job, buf + 1);
    else
        tessera__step_complete_request__pack(step, buf + 1);
    char name[48];
    file_name(seq, name, sizeof(name));
    int err = safefs_write_atomic(dirfd, name, buf, len + 1, 0600);
    free(buf);
    return err;
}

int reportfile_read(int dirfd, uint64_t seq, struct reportfile *out)
{
    *out = (struct reportfile){0};
    char name[48];
    file_name(seq, name, sizeof(name));
    char *buf = malloc(REPORTFILE_MAX_BYTES + 1);
    if (!buf)
        return TS_ENOMEM;
    size_t len;
    int err = safefs_read_small(dirfd, name, buf, REPORTFILE_MAX_BYTES + 1, &len);
    if (err == TS_ETOOBIG || err == TS_EPERM || (!err && len < 1))
        err = TS_EDECODE;
    if (!err && buf[0] == 'J')
        out->job = tessera__job_complete_request__unpack(NULL, len - 1, (uint8_t *)buf + 1);
    else if (!err && buf[0] == 'S')
        out->step = tessera__step_complete_request__unpack(NULL, len - 1, (uint8_t *)buf + 1);
    if (!err && !out->job && !out->step)
        err = TS_EDECODE;
    free(buf);
    return err;
}

void reportfile_clear(struct reportfile *f)
{
    if (f->job)
        tessera__job_complete_request__free_unpacked(f->job, NULL);
    if (f->step)
        tessera__step_complete_request__free_unpacked(f->step, NULL);
    *f = (struct reportfile){0};
}

void reportfile_remove(int dirfd, uint64_t seq)
{
    char name[48];
    file_name(seq, name, sizeof(name));
    unlinkat(dirfd, name, 0);
}

static int by_value(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

size_t reportfile_list(int dirfd, size_t max, uint64_t **seqs)
{
    size_t nnames, n = 0;
    char **names = safefs_names(dirfd, LIST_MAX_NAMES, &nnames);
    *seqs = nnames ? calloc(nnames, sizeof(**seqs)) : NULL;
    for (size_t i = 0; *seqs && i < nnames; i++)
        if (reportfile_parse_name(names[i], &(*seqs)[n]))
            n++;
    safefs_names_free(names, nnames);
    if (n)
        qsort(*seqs, n, sizeof(**seqs), by_value);
    return n < max ? n : max; /* the oldest first */
}
