/* Generic resources' counts and a node's Gres= spec ("gpu:a100:4,bandwidth:10G"), the
 * GresTypes= list, and the comparison of what a node reports with its Gres=. */
#include "common/gres/gres_conf.h"

#include "common/util/errors.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* src into dst[size], cut if longer (callers have checked its length). */
static void copy_text(char *dst, size_t size, const char *src)
{
    size_t n = strnlen(src, size - 1);
    memcpy(dst, src, n);
    dst[n] = '\0';
}

static const char suffixes[] = "KMGTP";

int gres_count_parse(const char *s, uint64_t *out)
{
    if (!s || !isdigit((unsigned char)*s))
        return TS_ENUMBER;
    errno = 0;
    char *end = NULL;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno)
        return TS_ENUMBER;
    if (*end) {
        const char *k = strchr(suffixes, toupper((unsigned char)*end));
        if (!k || end[1])
            return TS_ENUMBER;
        for (const char *p = suffixes; p <= k; p++) {
            if (v > GRES_COUNT_MAX / 1024)
                return TS_ENUMBER;
            v *= 1024;
        }
    }
    if (v == 0 || v > GRES_COUNT_MAX)
        return TS_ENUMBER;
    *out = v;
    return TS_OK;
}

void gres_count_format(uint64_t count, char *buf, size_t len)
{
    int k = -1;
    while (count && count % 1024 == 0 && suffixes[k + 1]) {
        count /= 1024;
        k++;
    }
    if (k < 0)
        snprintf(buf, len, "%" PRIu64, count);
    else
        snprintf(buf, len, "%" PRIu64 "%c", count, suffixes[k]);
}

static int valid_chars(const char *s, size_t max, const char *extra)
{
    size_t len = strnlen(s, max);
    if (len == 0 || len >= max)
        return 0;
    for (const char *p = s; *p; p++)
        if (!isalnum((unsigned char)*p) && !strchr(extra, *p))
            return 0;
    return 1;
}

int gres_valid_name(const char *s)
{
    return valid_chars(s, GRES_NAME_MAX, "_");
}

int gres_valid_type(const char *s)
{
    return valid_chars(s, GRES_TYPE_MAX, "_-.");
}

/* One "name[:type][:count]" item (modified in place) into g. */
static int parse_item(char *item, struct gres_count *g, char *err, size_t errlen)
{
    char *fields[3] = {item, NULL, NULL};
    size_t nf = 1;
    for (char *c = strchr(item, ':'); c; c = strchr(c + 1, ':')) {
        if (nf == 3) {
            snprintf(err, errlen, "'%s': too many fields (name[:type][:count])", item);
            return TS_EINVAL;
        }
        *c = '\0';
        fields[nf++] = c + 1;
    }
    memset(g, 0, sizeof(*g));
    g->count = 1;
    if (!gres_valid_name(fields[0])) {
        snprintf(err, errlen, "invalid gres name '%s'", fields[0]);
        return TS_EINVAL;
    }
    copy_text(g->name, sizeof(g->name), fields[0]);
    /* "gpu:4" counts; "gpu:a100" types (one unit); "gpu:a100:4" both */
    const char *type = nf == 3 ? fields[1] : NULL, *count = nf == 3 ? fields[2] : NULL;
    if (nf == 2)
        *(isdigit((unsigned char)fields[1][0]) ? &count : &type) = fields[1];
    if (type && !gres_valid_type(type)) {
        snprintf(err, errlen, "invalid gres type '%s' of %s", type, g->name);
        return TS_EINVAL;
    }
    if (type)
        copy_text(g->type, sizeof(g->type), type);
    if (count && gres_count_parse(count, &g->count)) {
        snprintf(err, errlen, "invalid count '%s' of %s", count, g->name);
        return TS_EINVAL;
    }
    return TS_OK;
}

static int same_resource(const struct gres_count *a, const struct gres_count *b)
{
    return !strcmp(a->name, b->name) && !strcmp(a->type, b->type);
}

int gres_spec_parse(const char *spec, struct gres_count **items, size_t *n, char *err,
                    size_t errlen)
{
    *items = NULL;
    *n = 0;
    size_t len = strnlen(spec, GRES_SPEC_MAX_LEN + 1);
    if (len > GRES_SPEC_MAX_LEN) {
        snprintf(err, errlen, "gres specification longer than %d characters", GRES_SPEC_MAX_LEN);
        return TS_EINVAL;
    }
    if (len == 0)
        return TS_OK;
    char buf[GRES_SPEC_MAX_LEN + 1];
    memcpy(buf, spec, len + 1);
    struct gres_count *v = calloc(GRES_SPEC_MAX_ITEMS, sizeof(*v));
    if (!v)
        return TS_ENOMEM;
    int rc = TS_OK;
    size_t count = 0;
    for (char *item = buf, *next; item && !rc; item = next) {
        next = strchr(item, ',');
        if (next)
            *next++ = '\0';
        if (count == GRES_SPEC_MAX_ITEMS) {
            snprintf(err, errlen, "more than %d generic resources", GRES_SPEC_MAX_ITEMS);
            rc = TS_EINVAL;
        } else if (!(rc = parse_item(item, &v[count], err, errlen))) {
            for (size_t i = 0; i < count && !rc; i++)
                if (same_resource(&v[i], &v[count])) {
                    snprintf(err, errlen, "gres %s%s%s given twice", v[i].name,
                             v[i].type[0] ? ":" : "", v[i].type);
                    rc = TS_EINVAL;
                }
            count++;
        }
    }
    if (rc) {
        free(v);
        return rc;
    }
    *items = v;
    *n = count;
    return TS_OK;
}

int gres_spec_format(const struct gres_count *items, size_t n, char *buf, size_t len)
{
    size_t used = 0;
    if (len)
        buf[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        char count[32];
        gres_count_format(items[i].count, count, sizeof(count));
        int w = snprintf(buf + used, len - used, "%s%s%s%s:%s", i ? "," : "", items[i].name,
                         items[i].type[0] ? ":" : "", items[i].type, count);
        if (w < 0 || (size_t)w >= len - used)
            return TS_ETOOBIG;
        used += (size_t)w;
    }
    return TS_OK;
}

int gres_types_valid(const char *types)
{
    if (strnlen(types, GRES_SPEC_MAX_LEN + 1) > GRES_SPEC_MAX_LEN)
        return 0;
    size_t n = 0;
    for (const char *s = types; *s;) {
        size_t len = strcspn(s, ",");
        char name[GRES_NAME_MAX];
        if (len == 0 || len >= sizeof(name) || ++n > GRES_SPEC_MAX_ITEMS)
            return 0;
        memcpy(name, s, len);
        name[len] = '\0';
        if (!gres_valid_name(name))
            return 0;
        s += len;
        if (*s == ',' && !*++s)
            return 0;
    }
    return n > 0;
}

int gres_types_contains(const char *types, const char *name)
{
    size_t nlen = strlen(name);
    for (const char *s = types ? types : ""; *s;) {
        size_t len = strcspn(s, ",");
        if (len == nlen && !strncmp(s, name, len))
            return 1;
        s += len;
        if (*s == ',')
            s++;
    }
    return 0;
}

int gres_check_reported(const struct gres_count *configured, size_t nconfigured,
                        const struct gres_count *reported, size_t nreported, char *why,
                        size_t len)
{
    for (size_t i = 0; i < nconfigured; i++) {
        const struct gres_count *c = &configured[i];
        uint64_t found = 0;
        for (size_t j = 0; j < nreported; j++)
            if (!strcmp(reported[j].name, c->name) &&
                (!c->type[0] || !strcmp(reported[j].type, c->type)))
                found = reported[j].count > UINT64_MAX - found ? UINT64_MAX
                                                               : found + reported[j].count;
        if (found < c->count) {
            snprintf(why, len, "gres/%s count reported lower than configured (%" PRIu64
                               " < %" PRIu64 ")", c->name, found, c->count);
            return 1;
        }
    }
    return 0;
}
