/* Node formatting: the small value helpers the sinfo table and scontrol show node share.
 * The outputs live in nodefmt_fields.c (format letters), nodefmt_table.c (sinfo's
 * grouping and order), nodefmt_show.c (show node) and nodefmt_state.c (state names). */
#include "common/format/nodefmt.h"

#include "common/format/nodefmt_int.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

int nf_is_set(const char *s)
{
    return s && *s;
}

const char *nf_or_null(const char *s)
{
    return nf_is_set(s) ? s : "(null)";
}

const char *nf_mem_text(uint64_t mb, char *buf, size_t len)
{
    static const char units[] = "MGTP";
    int unit = 0;

    /* Slurm's TRES strings go up a unit only while the value stays whole. */
    while (mb >= 1024 && mb % 1024 == 0 && unit < 3) {
        mb /= 1024;
        unit++;
    }
    snprintf(buf, len, "%" PRIu64 "%c", mb, units[unit]);
    return buf;
}

char *nf_memstream_done(FILE *f, char **text)
{
    int bad = ferror(f);

    if (fclose(f) != 0 || bad) {
        free(*text);
        *text = NULL;
    }
    return *text;
}
