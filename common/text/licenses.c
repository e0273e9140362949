/* Licence requests: their form and bounds (common/text/licenses.h). */
#include "common/text/licenses.h"

#include "common/util/errors.h"

#include <ctype.h>
#include <stddef.h>
#include <string.h>

static int is_name_char(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '-' || c == '.' || c == '@';
}

/* A count after ':': digits only (no sign, no space), 1 to LICENSES_MAX_COUNT. */
static int read_count(const char **p)
{
    const char *s = *p;
    unsigned long count = 0;
    if (!isdigit((unsigned char)*s))
        return TS_EINVALID_LICENSES;
    for (; isdigit((unsigned char)*s); s++) {
        count = count * 10 + (unsigned long)(*s - '0');
        if (count > LICENSES_MAX_COUNT)
            return TS_EINVALID_LICENSES;
    }
    *p = s;
    return count ? TS_OK : TS_EINVALID_LICENSES;
}

int licenses_check(const char *spec)
{
    if (!spec || !*spec || strnlen(spec, LICENSES_MAX_LEN + 1) > LICENSES_MAX_LEN)
        return TS_EINVALID_LICENSES;
    const char *s = spec;
    for (size_t items = 1; items <= LICENSES_MAX_ITEMS; items++) {
        const char *name = s;
        while (is_name_char(*s))
            s++;
        if (s == name || (size_t)(s - name) > LICENSES_MAX_NAME)
            return TS_EINVALID_LICENSES;
        if (*s == ':') {
            s++;
            if (read_count(&s) != TS_OK)
                return TS_EINVALID_LICENSES;
        }
        if (*s == '\0')
            return TS_OK;
        if (*s++ != ',')
            return TS_EINVALID_LICENSES;
    }
    return TS_EINVALID_LICENSES;
}
