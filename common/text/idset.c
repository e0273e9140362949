/* Id sets kept as a sorted array of disjoint, non-adjacent inclusive ranges.
 *
 * Every operation locates ranges by binary search; appending ids in ascending order (the
 * common case: job ids, task ids) only touches the last range or adds one at the end. */
#include "common/text/idset.h"

#include "common/util/errors.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct idrange {
    uint32_t lo;
    uint32_t hi;
};

struct idset {
    struct idrange *r;
    size_t n;
    size_t cap;
};

struct idset *idset_create(void)
{
    return calloc(1, sizeof(struct idset));
}

void idset_destroy(struct idset *set)
{
    if (!set)
        return;
    free(set->r);
    free(set);
}

/* Index of the first range whose hi is >= id (set->n when there is none). */
static size_t first_hi_at_least(const struct idset *set, uint64_t id)
{
    size_t lo = 0;
    size_t hi = set->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((uint64_t)set->r[mid].hi < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Index of the first range whose lo is > id (set->n when there is none). */
static size_t first_lo_above(const struct idset *set, uint64_t id)
{
    size_t lo = 0;
    size_t hi = set->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((uint64_t)set->r[mid].lo <= id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int grow(struct idset *set)
{
    size_t cap = set->cap ? set->cap * 2 : 8;
    struct idrange *r;

    if (set->n < set->cap)
        return TS_OK;
    r = realloc(set->r, cap * sizeof(*r));
    if (!r)
        return TS_ENOMEM;
    set->r = r;
    set->cap = cap;
    return TS_OK;
}

static int insert_at(struct idset *set, size_t i, uint32_t lo, uint32_t hi)
{
    int rc = grow(set);
    if (rc != TS_OK)
        return rc;
    memmove(&set->r[i + 1], &set->r[i], (set->n - i) * sizeof(set->r[0]));
    set->r[i].lo = lo;
    set->r[i].hi = hi;
    set->n++;
    return TS_OK;
}

int idset_add_range(struct idset *set, uint32_t lo, uint32_t hi)
{
    size_t i;
    size_t j;

    if (!set)
        return TS_EINVAL;
    if (lo > hi || hi == IDSET_INVALID)
        return TS_EIDSET;
    /* fast path: strictly after the last range (extending it is found at the end by
     * the searches below and moves nothing) */
    if (set->n == 0 || (uint64_t)set->r[set->n - 1].hi + 1 < lo)
        return insert_at(set, set->n, lo, hi);
    /* ranges [i, j) overlap or touch [lo, hi]; 64-bit bounds avoid wrapping at 0/MAX */
    i = first_hi_at_least(set, (uint64_t)lo == 0 ? 0 : (uint64_t)lo - 1);
    j = first_lo_above(set, (uint64_t)hi + 1);
    if (i == j)
        return insert_at(set, i, lo, hi);
    if (set->r[i].lo < lo)
        lo = set->r[i].lo;
    if (set->r[j - 1].hi > hi)
        hi = set->r[j - 1].hi;
    set->r[i].lo = lo;
    set->r[i].hi = hi;
    memmove(&set->r[i + 1], &set->r[j], (set->n - j) * sizeof(set->r[0]));
    set->n -= j - i - 1;
    return TS_OK;
}

int idset_add(struct idset *set, uint32_t id)
{
    return idset_add_range(set, id, id);
}

/* Removing an id that is not a member is not an error: the set ends up without it. */
int idset_remove(struct idset *set, uint32_t id)
{
    size_t i;
    struct idrange *r;

    if (!set)
        return TS_EINVAL;
    i = first_hi_at_least(set, id);
    if (i == set->n || set->r[i].lo > id)
        return TS_OK;
    r = &set->r[i];
    if (r->lo == id && r->hi == id) {
        memmove(r, r + 1, (set->n - i - 1) * sizeof(*r));
        set->n--;
    } else if (r->lo == id) {
        r->lo++;
    } else if (r->hi == id) {
        r->hi--;
    } else {
        uint32_t hi = r->hi;
        int rc = insert_at(set, i + 1, id + 1, hi); /* may move set->r */
        if (rc != TS_OK)
            return rc;
        set->r[i].hi = id - 1;
    }
    return TS_OK;
}

int idset_contains(const struct idset *set, uint32_t id)
{
    size_t i;

    if (!set)
        return 0;
    i = first_hi_at_least(set, id);
    return i < set->n && set->r[i].lo <= id;
}

size_t idset_count(const struct idset *set)
{
    size_t total = 0;

    if (!set)
        return 0;
    for (size_t i = 0; i < set->n; i++)
        total += (size_t)set->r[i].hi - set->r[i].lo + 1;
    return total;
}

uint32_t idset_first(const struct idset *set)
{
    return (set && set->n > 0) ? set->r[0].lo : IDSET_INVALID;
}

uint32_t idset_next(const struct idset *set, uint32_t prev)
{
    size_t i;

    if (!set || prev == IDSET_INVALID)
        return IDSET_INVALID;
    i = first_hi_at_least(set, (uint64_t)prev + 1);
    if (i == set->n)
        return IDSET_INVALID;
    return set->r[i].lo > prev ? set->r[i].lo : prev + 1;
}

/* ---- parsing ------------------------------------------------------------------------- */

/* Decimal id at *p, advancing it; refuses empty numbers and values >= IDSET_INVALID. */
static int parse_id(const char **p, const char *end, uint32_t *out)
{
    const char *s = *p;
    uint64_t v = 0;

    if (s == end || *s < '0' || *s > '9')
        return TS_EIDSET;
    while (s < end && *s >= '0' && *s <= '9') {
        v = v * 10 + (uint64_t)(*s - '0');
        if (v >= IDSET_INVALID)
            return TS_EIDSET;
        s++;
    }
    *out = (uint32_t)v;
    *p = s;
    return TS_OK;
}

/* One "N" or "N-M" item at *p, which must end at a ',' or at end. */
static int parse_item(struct idset *set, const char **p, const char *end)
{
    uint32_t lo;
    uint32_t hi;
    int rc = parse_id(p, end, &lo);

    if (rc != TS_OK)
        return rc;
    hi = lo;
    if (*p < end && **p == '-') {
        (*p)++;
        rc = parse_id(p, end, &hi);
        if (rc != TS_OK)
            return rc;
    }
    if (*p < end && **p != ',')
        return TS_EIDSET;
    if (lo > hi)
        return TS_EIDSET;
    return idset_add_range(set, lo, hi);
}

static int parse_list(struct idset *set, const char *s, const char *end)
{
    int rc;

    for (;;) {
        rc = parse_item(set, &s, end);
        if (rc != TS_OK)
            return rc;
        if (s == end)
            return TS_OK;
        s++; /* skip ',' */
    }
}

int idset_parse(const char *s, struct idset **out)
{
    struct idset *set;
    const char *end;
    int rc = TS_OK;

    if (!out)
        return TS_EINVAL;
    *out = NULL;
    set = idset_create();
    if (!set)
        return TS_ENOMEM;
    if (!s)
        s = "";
    end = s + strlen(s);
    /* "[1-3]": Slurm prints sets in brackets; the brackets must wrap a non-empty list */
    if (*s == '[') {
        if (end - s < 3 || end[-1] != ']')
            rc = TS_EIDSET;
        s++;
        end--;
    }
    if (rc == TS_OK && s < end)
        rc = parse_list(set, s, end);
    if (rc == TS_OK && idset_count(set) > IDSET_MAX_COUNT)
        rc = TS_ETOOBIG;
    if (rc != TS_OK) {
        idset_destroy(set);
        return rc;
    }
    *out = set;
    return TS_OK;
}

/* ---- formatting ---------------------------------------------------------------------- */

char *idset_format(const struct idset *set)
{
    /* "4294967294-4294967294," is at most 22 bytes per range */
    size_t n = set ? set->n : 0;
    char *buf = malloc(n * 22 + 1);
    size_t len = 0;

    if (!buf)
        return NULL;
    buf[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        const struct idrange *r = &set->r[i];
        const char *sep = i ? "," : "";
        if (r->lo == r->hi)
            len += (size_t)sprintf(buf + len, "%s%" PRIu32, sep, r->lo);
        else
            len += (size_t)sprintf(buf + len, "%s%" PRIu32 "-%" PRIu32, sep, r->lo, r->hi);
    }
    return buf;
}
