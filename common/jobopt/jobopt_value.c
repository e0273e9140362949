/* Syntax checks of option values: numbers, sizes, dependencies, mail types (licences:
 * common/text/licenses.c).
 *
 * All numbers are strictly decimal (no sign, no spaces, no "0x"): Slurm reads many of
 * them with strtol and accepts "+3" or "4294967296" (which wraps to 0); a job request is
 * no place for guesses. Every reader caps its value before it can overflow.
 */
#include "common/jobopt/jobopt_impl.h"

#include "common/util/errors.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* A run of digits at *p no larger than max, advancing *p past it. */
static int read_uint(const char **p, uint64_t max, uint64_t *v)
{
    const char *s = *p;
    uint64_t x = 0;

    if (!is_digit(*s))
        return TS_EOPTVALUE;
    for (; is_digit(*s); s++) {
        unsigned d = (unsigned)(*s - '0');

        if (x > (max - d) / 10)
            return TS_EOPTVALUE;
        x = x * 10 + d;
    }
    *p = s;
    *v = x;
    return TS_OK;
}

int jobopt_parse_u64(const char *s, uint64_t max, uint64_t *v)
{
    uint64_t x;

    if (!s || read_uint(&s, max, &x) != TS_OK || *s != '\0')
        return TS_EOPTVALUE;
    *v = x;
    return TS_OK;
}

/* ---- sizes --------------------------------------------------------------------------- */

int jobopt_parse_size_mb(const char *s, uint64_t *mb)
{
    uint64_t v, kb_per_unit;

    if (!s || read_uint(&s, JOBOPT_MAX_SIZE_MB << 20, &v) != TS_OK)
        return TS_EOPTVALUE;
    switch (toupper((unsigned char)*s)) {
    case '\0': kb_per_unit = 1024; break; /* no unit: megabytes, as in Slurm */
    case 'K': kb_per_unit = 1; break;
    case 'M': kb_per_unit = 1024; break;
    case 'G': kb_per_unit = 1024 * 1024; break;
    case 'T': kb_per_unit = 1024 * 1024 * 1024; break;
    default: return TS_EOPTVALUE;
    }
    /* the unit may be followed by B or b ("3GB", "1000mb"), as Slurm allows */
    if (*s != '\0' && s[1] != '\0' && !((s[1] == 'B' || s[1] == 'b') && s[2] == '\0'))
        return TS_EOPTVALUE;
    /* v is at most 2^60 here; compare before multiplying so nothing can wrap. */
    if (v > (JOBOPT_MAX_SIZE_MB << 10) / kb_per_unit)
        return TS_EOPTVALUE;
    *mb = (v * kb_per_unit + 1023) / 1024; /* a partial megabyte counts as one */
    return TS_OK;
}

/* ---- dependencies -------------------------------------------------------------------- */

/* A job id: N, N_M or N_* (array tasks); "+minutes" only where allowed (after:). */
static int dep_jobid(const char **p, int allow_delay)
{
    uint64_t v;

    if (read_uint(p, UINT32_MAX, &v) != TS_OK || v == 0)
        return TS_EOPTVALUE;
    if (**p == '_') {
        (*p)++;
        if (**p == '*')
            (*p)++;
        else if (read_uint(p, UINT32_MAX, &v) != TS_OK)
            return TS_EOPTVALUE;
    }
    if (**p == '+') {
        (*p)++;
        if (!allow_delay || read_uint(p, UINT32_MAX, &v) != TS_OK)
            return TS_EOPTVALUE;
    }
    return TS_OK;
}

/* ":"-separated job ids; max_ids 0 means any number. */
static int dep_jobids(const char **p, int allow_delay, int max_ids)
{
    for (int n = 1;; n++) {
        if (dep_jobid(p, allow_delay) != TS_OK)
            return TS_EOPTVALUE;
        if (**p != ':')
            return TS_OK;
        if (max_ids && n == max_ids)
            return TS_EOPTVALUE;
        (*p)++;
    }
}

/* The dependency types, with what their job ids may carry. */
static const struct {
    const char *name;
    int allow_delay; /* "after:12+30": start 30 minutes after 12 started */
    int max_ids;     /* expand names the one job it grows */
} dep_types[] = {
    {"after", 1, 0},      {"afterany", 0, 0},   {"afterburstbuffer", 0, 0},
    {"aftercorr", 0, 0},  {"afternotok", 0, 0}, {"afterok", 0, 0},
    {"expand", 0, 1},
};

/* One "type:jobid[:jobid...]", "singleton", or a bare job id list (afterany). */
static int dep_item(const char **p)
{
    size_t len = strcspn(*p, ":,?");

    if (is_digit(**p))
        return dep_jobids(p, 0, 0);
    if (len == 9 && strncasecmp(*p, "singleton", 9) == 0) {
        *p += len;
        return TS_OK;
    }
    for (size_t i = 0; i < sizeof(dep_types) / sizeof(dep_types[0]); i++) {
        if (strlen(dep_types[i].name) != len || strncasecmp(*p, dep_types[i].name, len) != 0)
            continue;
        *p += len;
        if (**p != ':')
            return TS_EOPTVALUE;
        (*p)++;
        return dep_jobids(p, dep_types[i].allow_delay, dep_types[i].max_ids);
    }
    return TS_EOPTVALUE;
}

int jobopt_check_dependency(const char *s)
{
    char sep = 0;

    if (*s == '\0')
        return TS_OK; /* no dependency: clears one propagated from an earlier component */
    for (;;) {
        if (dep_item(&s) != TS_OK)
            return TS_EOPTVALUE;
        if (*s == '\0')
            return TS_OK;
        /* Slurm's man page: "Only one separator may be used" (Slurm does not check). */
        if ((*s != ',' && *s != '?') || (sep && *s != sep))
            return TS_EOPTVALUE;
        sep = *s++;
    }
}

/* ---- mail types ---------------------------------------------------------------------- */

static const char *const mail_types[] = {
    "NONE", "BEGIN", "END", "FAIL", "REQUEUE", "ALL", "INVALID_DEPEND", "STAGE_OUT",
    "TIME_LIMIT", "TIME_LIMIT_90", "TIME_LIMIT_80", "TIME_LIMIT_50", "ARRAY_TASKS",
};

static const char *mail_type_name(const char *s, size_t len)
{
    for (size_t i = 0; i < sizeof(mail_types) / sizeof(mail_types[0]); i++)
        if (strlen(mail_types[i]) == len && strncasecmp(s, mail_types[i], len) == 0)
            return mail_types[i];
    return NULL;
}

/* Case-insensitive as in Slurm; the result is upper case ("begin,end" -> "BEGIN,END") so
 * that the controller has one spelling to read. */
int jobopt_norm_mail_type(const char *s, char **out)
{
    size_t cap = strlen(s) + 1;
    char *buf = malloc(cap);
    size_t used = 0;

    if (!buf)
        return TS_ENOMEM;
    for (;;) {
        size_t len = strcspn(s, ",");
        const char *name = mail_type_name(s, len);

        if (!name) {
            free(buf);
            return TS_EOPTVALUE;
        }
        memcpy(buf + used, name, len); /* same length as the input word */
        used += len;
        s += len;
        if (*s == '\0')
            break;
        buf[used++] = ',';
        s++;
    }
    buf[used] = '\0';
    *out = buf;
    return TS_OK;
}

/* ---- --array ----------------------------------------------------------------------- */

/* Slurm's default MaxArraySize: indexes run from 0 to 1000. */
#define ARRAY_INDEX_MAX 1000u

/* A decimal index at *p (spaces before it skipped, as Slurm's strtol does). */
static int read_index(const char **p, const char *end, unsigned long *v)
{
    while (*p < end && **p == ' ')
        (*p)++;
    if (*p == end || !isdigit((unsigned char)**p))
        return 0;
    for (*v = 0; *p < end && isdigit((unsigned char)**p); (*p)++)
        if ((*v = *v * 10 + (unsigned long)(**p - '0')) > ARRAY_INDEX_MAX * 10ul)
            return 0;
    return 1;
}

/* Slurm's --array syntax: items "N", "N-M" or "N-M:S" (N <= M, S >= 1, M <= 1000)
 * separated by commas (empty items skipped), then an optional "%limit" that Slurm
 * does not check. */
int jobopt_check_array(const char *s)
{
    const char *end = s + strcspn(s, "%");
    for (const char *p = s; p < end;) {
        if (*p == ',') {
            p++;
            continue;
        }
        unsigned long lo, hi, step = 1;
        if (!read_index(&p, end, &lo))
            return TS_EJOB_ARRAY;
        hi = lo;
        if (p < end && *p == '-') {
            p++;
            if (!read_index(&p, end, &hi) || hi < lo)
                return TS_EJOB_ARRAY;
            if (p < end && *p == ':' && (p++, !read_index(&p, end, &step) || step == 0))
                return TS_EJOB_ARRAY;
        }
        if (hi > ARRAY_INDEX_MAX || (p < end && *p != ','))
            return TS_EJOB_ARRAY;
    }
    return TS_OK;
}
