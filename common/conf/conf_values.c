/* tessera.conf's values: numbers within bounds, booleans, time limits, sizes, names from
 * a list, and the forms of names and feature lists. */
#include "common/conf/conf_int.h"

#include "common/text/timefmt.h"
#include "common/util/errors.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int conf_value_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
    if (!s || !isdigit((unsigned char)*s))
        return TS_ENUMBER;
    errno = 0;
    char *end = NULL;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v < min || v > max)
        return TS_ENUMBER;
    *out = v;
    return TS_OK;
}

int conf_value_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
    uint64_t v;
    int err = conf_value_u64(s, min, max, &v);
    if (!err)
        *out = (uint32_t)v;
    return err;
}

int conf_value_bool(const char *s, int *out)
{
    if (!strcasecmp(s, "YES") || !strcasecmp(s, "TRUE") || !strcmp(s, "1"))
        *out = 1;
    else if (!strcasecmp(s, "NO") || !strcasecmp(s, "FALSE") || !strcmp(s, "0"))
        *out = 0;
    else
        return TS_EINVAL;
    return TS_OK;
}

/* A time limit in Slurm's formats (bare number: minutes) or UNLIMITED. */
int conf_value_limit(const char *s, int64_t *out)
{
    int64_t v;
    if (timefmt_parse_duration(s, &v) != TS_OK)
        return TS_ETIMEFMT;
    *out = v == TIMEFMT_UNLIMITED ? CONF_UNLIMITED : v;
    return TS_OK;
}

/* The index of value (case-insensitive) among names, or -1. */
static int name_index(const char *value, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcasecmp(value, names[i]))
            return (int)i;
    return -1;
}

int conf_value_state(struct conf_parse *p, const char *what, const char *value,
                     const char *const *names, size_t n, int *out)
{
    char list[128] = "";
    int i = name_index(value, names, n);

    if (i >= 0) {
        *out = i;
        return TS_OK;
    }
    for (size_t k = 0, len = 0; k < n && len < sizeof(list); k++, len = strlen(list))
        snprintf(list + len, sizeof(list) - len, "%s%s",
                 k == 0 ? "" : k + 1 < n ? ", " : " or ", names[k]);
    return conf_fail(p, "%s State must be %s, not '%s'", what, list, value);
}

int conf_replace_str(char **slot, const char *value)
{
    char *copy = strdup(value);
    if (!copy)
        return TS_ENOMEM;
    free(*slot);
    *slot = copy;
    return TS_OK;
}

int conf_valid_name(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && !strchr("_-.", *s))
            return 0;
    return 1;
}

int conf_valid_features(const char *s)
{
    /* "a,b,c": names separated by single commas */
    if (!*s)
        return 1;
    const char *start = s;
    for (;; s++) {
        if (*s == ',' || !*s) {
            if (s == start)
                return 0;
            if (!*s)
                return 1;
            start = s + 1;
        } else if (!isalnum((unsigned char)*s) && !strchr("_-.", *s)) {
            return 0;
        }
    }
}

/* "512", "512M", "64G", "2T": megabytes. */
int conf_value_mem_mb(const char *v, uint64_t *out)
{
    char *end;
    unsigned long long n = strtoull(v, &end, 10);
    if (!isdigit((unsigned char)v[0]) || n == 0)
        return -1;
    uint64_t scale = 1;
    if (*end == 'M' || *end == 'm')
        end++;
    else if (*end == 'G' || *end == 'g')
        scale = 1024, end++;
    else if (*end == 'T' || *end == 't')
        scale = 1024 * 1024, end++;
    if (*end || n > UINT64_MAX / scale)
        return -1;
    *out = n * scale;
    return 0;
}
