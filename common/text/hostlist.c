/* Host lists in Slurm's range syntax: expansion, natural sort and compression.
 *
 * Expansion works in two passes over the expression: the first checks the syntax and
 * computes how many names it yields and how long the longest one is, so that a huge or
 * malformed expression is refused before anything is allocated; the second produces the
 * names into capacity reserved up front.
 *
 * A number inside a host name (for sorting and compression) is the last run of digits;
 * runs longer than HOSTLIST_MAX_WIDTH digits are not treated as numbers, which keeps every
 * value and every "value + 1" far from uint64_t overflow. The same bound refuses wider
 * numbers in ranges, so that whatever compression writes, expansion reads back.
 *
 * The parser itself is bounded before it looks at the text: HOSTLIST_MAX_EXPR characters,
 * HOSTLIST_MAX_RANGES ranges. common/text/hostlist_match.c answers "is this name in the list"
 * without expanding it.
 */
#include "common/text/hostlist.h"
#include "common/text/hostlist_impl.h"

#include "common/util/errors.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Names live in chunks rather than one malloc each: a million-host expansion is then a
 * few hundred allocations. Chunks start small (most lists are short) and double up to
 * HL_CHUNK_MAX. They never move, so hostlist_nth() pointers stay valid until the list is
 * destroyed; names dropped by hostlist_uniq() stay in their chunk. */
#define HL_CHUNK_MIN 256 /* > HOSTLIST_MAX_NAME: any name fits in a fresh chunk */
#define HL_CHUNK_MAX (64 * 1024)
_Static_assert(HOSTLIST_MAX_NAME + 1 <= HL_CHUNK_MIN, "a name must fit in a fresh chunk");

struct chunk {
    struct chunk *prev; /* older chunk */
    size_t size;
    size_t used;
    char data[];
};

struct hostlist {
    char **names;
    size_t count;
    size_t cap;
    struct chunk *chunks; /* newest first */
};

/* Where a list stood before a change, so that a failed change can be undone. */
struct mark {
    size_t count;
    struct chunk *chunk;
    size_t used;
};

/* ---- small helpers ------------------------------------------------------------------ */

int hl_is_digit(char c)
{
    return c >= '0' && c <= '9';
}

int hl_is_name_char(char c)
{
    unsigned char u = (unsigned char)c;
    return u > ' ' && u != 0x7f && c != ',' && c != '[' && c != ']';
}

size_t hl_count_digits(uint64_t v)
{
    size_t n = 1;
    while (v >= 10) {
        v /= 10;
        n++;
    }
    return n;
}

size_t hl_formatted_len(uint64_t v, int width)
{
    size_t d = hl_count_digits(v);
    return d > (size_t)width ? d : (size_t)width;
}

int hl_parse_number(const char *s, size_t len, uint64_t *val, int *width)
{
    uint64_t v = 0;

    if (len == 0 || len > HOSTLIST_MAX_WIDTH)
        return 0;
    for (size_t i = 0; i < len; i++) {
        if (!hl_is_digit(s[i]))
            return 0;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    *val = v;
    *width = (len > 1 && s[0] == '0') ? (int)len : 0;
    return 1;
}

int hl_parse_range(const char **p, struct hl_range *r)
{
    const char *s = *p;
    const char *end = s;
    const char *dash = NULL;
    int hi_width;

    while (*end && *end != ',' && *end != ']') {
        if (*end == '-' && !dash)
            dash = end;
        else if (!hl_is_digit(*end))
            return TS_EHOSTLIST;
        end++;
    }
    if (*end == '\0')
        return TS_EHOSTLIST; /* unterminated group */
    if (!hl_parse_number(s, (size_t)((dash ? dash : end) - s), &r->lo, &r->width))
        return TS_EHOSTLIST;
    r->hi = r->lo;
    if (dash && !hl_parse_number(dash + 1, (size_t)(end - dash - 1), &r->hi, &hi_width))
        return TS_EHOSTLIST;
    if (r->lo > r->hi)
        return TS_EHOSTLIST;
    *p = end;
    return TS_OK;
}

/* ---- expansion, pass 1: syntax, size and name length --------------------------------- */

/* Parse the bracket group whose text starts after '[' at *p; leave *p after ']'. Gives
 * the number of values (saturated above HOSTLIST_MAX_HOSTS) and the widest value. */
static int scan_group(const char **p, uint64_t *count, size_t *maxlen, size_t *nranges)
{
    struct hl_range r;
    int rc;

    *count = 0;
    *maxlen = 0;
    for (;;) {
        rc = hl_parse_range(p, &r);
        if (rc != TS_OK)
            return rc;
        (*nranges)++;
        *count += r.hi - r.lo + 1; /* each term < 10^18: no overflow before the cap */
        if (*count > HOSTLIST_MAX_HOSTS)
            *count = (uint64_t)HOSTLIST_MAX_HOSTS + 1;
        if (hl_formatted_len(r.hi, r.width) > *maxlen)
            *maxlen = hl_formatted_len(r.hi, r.width);
        if (**p == ']')
            break;
        (*p)++; /* skip ',' */
    }
    (*p)++; /* skip ']' */
    return TS_OK;
}

/* Check the item at s, which ends at a comma outside brackets or at the end, and count how
 * many names it expands to, saturated above HOSTLIST_MAX_HOSTS. *next is where it ended. */
static int scan_item(const char *s, const char **next, uint64_t *count, size_t *nranges)
{
    const char *p = s;
    size_t namelen = 0;
    uint64_t total = 1;
    int rc;

    while (*p && *p != ',') {
        if (*p == '[') {
            uint64_t n;
            size_t width;
            p++;
            rc = scan_group(&p, &n, &width, nranges);
            if (rc != TS_OK)
                return rc;
            namelen += width;
            /* n <= MAX+1 and total <= MAX+1: the product fits in 64 bits */
            total *= n;
            if (total > HOSTLIST_MAX_HOSTS)
                total = (uint64_t)HOSTLIST_MAX_HOSTS + 1;
        } else if (hl_is_name_char(*p)) {
            namelen++;
            p++;
        } else {
            return TS_EHOSTLIST; /* ']', blank or control character */
        }
        if (namelen > HOSTLIST_MAX_NAME)
            return TS_EHOSTLIST;
    }
    if (p == s)
        return TS_EHOSTLIST; /* empty name: ",,", leading or trailing comma */
    *next = p;
    *count = total;
    return TS_OK;
}

int hl_scan_expr(const char *expr, uint64_t *count)
{
    const char *p = expr;
    uint64_t total = 0;
    uint64_t n;
    size_t nranges = 0;
    int rc;

    if (strnlen(expr, HOSTLIST_MAX_EXPR + 1) > HOSTLIST_MAX_EXPR)
        return TS_ETOOBIG;
    for (;;) {
        rc = scan_item(p, &p, &n, &nranges);
        if (rc != TS_OK)
            return rc;
        total += n;
        if (total > HOSTLIST_MAX_HOSTS)
            total = (uint64_t)HOSTLIST_MAX_HOSTS + 1;
        if (*p == '\0')
            break;
        p++; /* skip ',' */
    }
    if (nranges > HOSTLIST_MAX_RANGES)
        return TS_ETOOBIG;
    *count = total;
    return TS_OK;
}

/* Whole expression: syntax errors first, then the size limits, the count against room
 * left. */
static int scan_expr(const char *expr, size_t room, uint64_t *count)
{
    int rc = hl_scan_expr(expr, count);
    if (rc == TS_OK && *count > room)
        rc = TS_ETOOBIG;
    return rc;
}

/* ---- expansion, pass 2: produce the names -------------------------------------------- */

/* A bracket group being walked: the literal text before it and its current value. */
struct group {
    const char *lit;   /* literal text before the group */
    size_t lit_len;
    const char *first; /* first range (after '[') */
    const char *next;  /* ',' or ']' after the current range */
    struct hl_range cur_range;
    uint64_t cur;
};

static void group_rewind(struct group *g)
{
    g->next = g->first;
    /* pass 1 validated the syntax */
    (void)hl_parse_range(&g->next, &g->cur_range);
    g->cur = g->cur_range.lo;
}

/* Step to the next value; returns 0 (and rewinds) when the group wrapped around. */
static int group_advance(struct group *g)
{
    if (g->cur < g->cur_range.hi) {
        g->cur++;
        return 1;
    }
    if (*g->next == ',') {
        g->next++;
        (void)hl_parse_range(&g->next, &g->cur_range);
        g->cur = g->cur_range.lo;
        return 1;
    }
    group_rewind(g);
    return 0;
}

/* Split a validated item into groups; returns the number of groups and the tail text. */
static size_t item_groups(const char *s, struct group *groups, const char **tail,
                          const char **end)
{
    size_t n = 0;
    const char *lit = s;
    const char *p = s;

    while (*p && *p != ',') {
        if (*p != '[') {
            p++;
            continue;
        }
        groups[n].lit = lit;
        groups[n].lit_len = (size_t)(p - lit);
        groups[n].first = p + 1;
        group_rewind(&groups[n]);
        p = strchr(p, ']') + 1;
        lit = p;
        n++;
    }
    *tail = lit;
    *end = p;
    return n;
}

static void build_name(const struct group *groups, size_t n, const char *tail,
                       size_t tail_len, char *name)
{
    size_t len = 0;

    for (size_t i = 0; i < n; i++) {
        memcpy(name + len, groups[i].lit, groups[i].lit_len);
        len += groups[i].lit_len;
        /* pass 1 bounded the whole name by HOSTLIST_MAX_NAME */
        len += (size_t)sprintf(name + len, "%0*" PRIu64, groups[i].cur_range.width,
                               groups[i].cur);
    }
    memcpy(name + len, tail, tail_len);
    name[len + tail_len] = '\0';
}

/* Copy name into the newest chunk (a new one when full) and append it; the caller has
 * reserved room in hl->names. */
static int append_copy(struct hostlist *hl, const char *name)
{
    size_t size = strlen(name) + 1; /* <= HOSTLIST_MAX_NAME + 1 <= HL_CHUNK_MIN */
    struct chunk *c = hl->chunks;

    if (!c || c->size - c->used < size) {
        size_t csize = c ? c->size * 2 : HL_CHUNK_MIN;
        if (csize > HL_CHUNK_MAX)
            csize = HL_CHUNK_MAX;
        c = malloc(sizeof(*c) + csize);
        if (!c)
            return TS_ENOMEM;
        c->prev = hl->chunks;
        c->size = csize;
        c->used = 0;
        hl->chunks = c;
    }
    memcpy(c->data + c->used, name, size);
    hl->names[hl->count++] = c->data + c->used;
    c->used += size;
    return TS_OK;
}

/* Produce every name of the validated item at s (cartesian product, last group
 * fastest); *end is where the item ended. Capacity was reserved by the caller. */
static int gen_item(struct hostlist *hl, const char *s, const char **end)
{
    /* each group adds at least one character to a name of at most HOSTLIST_MAX_NAME */
    struct group groups[HOSTLIST_MAX_NAME];
    char name[HOSTLIST_MAX_NAME + 1];
    const char *tail;
    size_t n = item_groups(s, groups, &tail, end);
    size_t tail_len = (size_t)(*end - tail);
    size_t g;
    int rc;

    do {
        build_name(groups, n, tail, tail_len, name);
        rc = append_copy(hl, name);
        if (rc != TS_OK)
            return rc;
        /* odometer: advance the last group, carry into the previous ones */
        for (g = n; g > 0 && !group_advance(&groups[g - 1]); g--)
            ;
    } while (g > 0);
    return TS_OK;
}

static int reserve(struct hostlist *hl, size_t extra)
{
    size_t need = hl->count + extra;
    size_t cap = hl->cap ? hl->cap : 16;
    char **names;

    if (need <= hl->cap)
        return TS_OK;
    while (cap < need)
        cap *= 2;
    names = realloc(hl->names, cap * sizeof(*names));
    if (!names)
        return TS_ENOMEM;
    hl->names = names;
    hl->cap = cap;
    return TS_OK;
}

static struct mark mark_list(const struct hostlist *hl)
{
    struct mark m = {hl->count, hl->chunks, hl->chunks ? hl->chunks->used : 0};
    return m;
}

/* Free the chunks newer than keep (all of them for NULL). */
static void free_chunks(struct hostlist *hl, const struct chunk *keep)
{
    while (hl->chunks != keep) {
        struct chunk *prev = hl->chunks->prev;
        free(hl->chunks);
        hl->chunks = prev;
    }
}

/* Drop everything appended since m was taken. */
static void restore_list(struct hostlist *hl, struct mark m)
{
    free_chunks(hl, m.chunk);
    if (hl->chunks)
        hl->chunks->used = m.used;
    hl->count = m.count;
}

/* ---- public: list basics ------------------------------------------------------------- */

struct hostlist *hostlist_create(void)
{
    return calloc(1, sizeof(struct hostlist));
}

void hostlist_destroy(struct hostlist *hl)
{
    if (!hl)
        return;
    free_chunks(hl, NULL);
    free(hl->names);
    free(hl);
}

int hostlist_push_expr(struct hostlist *hl, const char *expr)
{
    const char *p = expr;
    struct mark m;
    uint64_t count;
    int rc;

    if (!hl)
        return TS_EINVAL;
    if (!expr || !*expr)
        return TS_OK;
    m = mark_list(hl);
    rc = scan_expr(expr, HOSTLIST_MAX_HOSTS - hl->count, &count);
    if (rc == TS_OK)
        rc = reserve(hl, (size_t)count);
    while (rc == TS_OK) {
        rc = gen_item(hl, p, &p);
        if (*p == '\0')
            break;
        p++; /* skip ',' */
    }
    if (rc != TS_OK)
        restore_list(hl, m);
    return rc;
}

int hostlist_expand(const char *expr, struct hostlist **out)
{
    struct hostlist *hl;
    int rc;

    if (!out)
        return TS_EINVAL;
    *out = NULL;
    hl = hostlist_create();
    if (!hl)
        return TS_ENOMEM;
    rc = hostlist_push_expr(hl, expr);
    if (rc != TS_OK) {
        hostlist_destroy(hl);
        return rc;
    }
    *out = hl;
    return TS_OK;
}

int hostlist_push(struct hostlist *hl, const char *name)
{
    size_t len;
    int rc;

    if (!hl || !name)
        return TS_EINVAL;
    len = strlen(name);
    if (len == 0 || len > HOSTLIST_MAX_NAME)
        return TS_EHOSTLIST;
    /* range syntax in a literal name would not survive hostlist_compress */
    for (size_t i = 0; i < len; i++)
        if (!hl_is_name_char(name[i]))
            return TS_EHOSTLIST;
    if (hl->count >= HOSTLIST_MAX_HOSTS)
        return TS_ETOOBIG;
    rc = reserve(hl, 1);
    if (rc != TS_OK)
        return rc;
    return append_copy(hl, name);
}

size_t hostlist_count(const struct hostlist *hl)
{
    return hl ? hl->count : 0;
}

const char *hostlist_nth(const struct hostlist *hl, size_t i)
{
    return (hl && i < hl->count) ? hl->names[i] : NULL;
}

long hostlist_find(const struct hostlist *hl, const char *name)
{
    if (!hl || !name)
        return -1;
    for (size_t i = 0; i < hl->count; i++)
        if (strcmp(hl->names[i], name) == 0)
            return (long)i;
    return -1;
}

/* ---- natural order ------------------------------------------------------------------- */

/* A name split around its last run of digits. Names without a usable number have
 * has_num == 0 and the whole name as prefix. */
struct host_key {
    const char *name;
    size_t prefix_len;
    size_t digits_len;
    uint64_t value;
    const char *suffix;
    int has_num;
};

static void host_key(const char *name, struct host_key *k)
{
    size_t len = strlen(name);
    size_t end = len;
    size_t start;
    int width;

    k->name = name;
    k->has_num = 0;
    k->prefix_len = len;
    k->digits_len = 0;
    k->value = 0;
    k->suffix = name + len;
    while (end > 0 && !hl_is_digit(name[end - 1]))
        end--;
    if (end == 0)
        return;
    start = end;
    while (start > 0 && hl_is_digit(name[start - 1]))
        start--;
    if (!hl_parse_number(name + start, end - start, &k->value, &width))
        return; /* too many digits: keep the name as plain text */
    k->has_num = 1;
    k->prefix_len = start;
    k->digits_len = end - start;
    k->suffix = name + end;
}

static int cmp_prefix(const struct host_key *a, const struct host_key *b)
{
    size_t n = a->prefix_len < b->prefix_len ? a->prefix_len : b->prefix_len;
    int c = memcmp(a->name, b->name, n);
    if (c)
        return c;
    return (a->prefix_len > b->prefix_len) - (a->prefix_len < b->prefix_len);
}

/* prefix, then (names without number first) number by value, width, then suffix */
static int cmp_keys(const void *pa, const void *pb)
{
    const struct host_key *a = pa;
    const struct host_key *b = pb;
    int c = cmp_prefix(a, b);

    if (c)
        return c;
    if (a->has_num != b->has_num)
        return a->has_num - b->has_num;
    if (a->value != b->value)
        return a->value < b->value ? -1 : 1;
    if (a->digits_len != b->digits_len)
        return a->digits_len < b->digits_len ? -1 : 1;
    return strcmp(a->suffix, b->suffix);
}

static int keys_sorted(const struct host_key *keys, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (cmp_keys(&keys[i - 1], &keys[i]) > 0)
            return 0;
    return 1;
}

void hostlist_uniq(struct hostlist *hl)
{
    struct host_key *keys;
    size_t n = 0;

    if (!hl || hl->count < 2)
        return;
    keys = malloc(hl->count * sizeof(*keys));
    if (!keys)
        return; /* no way to report it; the list stays valid, only unsorted */
    for (size_t i = 0; i < hl->count; i++)
        host_key(hl->names[i], &keys[i]);
    if (!keys_sorted(keys, hl->count)) /* expanded ranges usually are already */
        qsort(keys, hl->count, sizeof(*keys), cmp_keys);
    for (size_t i = 0; i < hl->count; i++) {
        if (n > 0 && strcmp(keys[i].name, hl->names[n - 1]) == 0)
            continue; /* duplicate: its bytes stay in the chunk until destroy */
        hl->names[n++] = (char *)keys[i].name;
    }
    hl->count = n;
    free(keys);
}

/* ---- compression --------------------------------------------------------------------- */

struct strbuf {
    char *s;
    size_t len;
    size_t cap;
    int oom;
};

static void sb_add(struct strbuf *sb, const char *s, size_t len)
{
    if (sb->oom)
        return;
    if (sb->len + len + 1 > sb->cap) {
        size_t cap = sb->cap ? sb->cap : 64;
        char *p;
        while (cap < sb->len + len + 1)
            cap *= 2;
        p = realloc(sb->s, cap);
        if (!p) {
            sb->oom = 1;
            return;
        }
        sb->s = p;
        sb->cap = cap;
    }
    memcpy(sb->s + sb->len, s, len);
    sb->len += len;
    sb->s[sb->len] = '\0';
}

static int same_group(const struct host_key *a, const struct host_key *b)
{
    return a->has_num && b->has_num && cmp_prefix(a, b) == 0 &&
           strcmp(a->suffix, b->suffix) == 0;
}

/* b continues a's range when it is the next value and prints with the range's padding,
 * so that expanding "lo-hi" reproduces it exactly. */
static int continues_range(uint64_t hi, int width, const struct host_key *b)
{
    return b->value == hi + 1 && b->digits_len == hl_formatted_len(b->value, width);
}

/* The group hostlist_compress is building: consecutive names sharing prefix and suffix.
 * Finished ranges collect in `ranges`; the open one is lo..hi. */
struct group_out {
    struct host_key first;
    size_t members;
    struct strbuf ranges;
    struct host_key lo;
    uint64_t hi;
    int width;
};

static void open_range(struct group_out *g, const struct host_key *k)
{
    g->lo = *k;
    g->hi = k->value;
    /* a number with leading zeros pads the whole range to its width */
    g->width = (k->digits_len > 1 && k->name[k->prefix_len] == '0') ? (int)k->digits_len : 0;
}

static void close_range(struct group_out *g)
{
    char num[HOSTLIST_MAX_NAME + 2]; /* '-' and a padded number */

    if (g->ranges.len > 0)
        sb_add(&g->ranges, ",", 1);
    sb_add(&g->ranges, g->lo.name + g->lo.prefix_len, g->lo.digits_len);
    if (g->hi != g->lo.value) {
        int n = snprintf(num, sizeof(num), "-%0*" PRIu64, g->width, g->hi);
        sb_add(&g->ranges, num, (size_t)n);
    }
}

/* Write the group to out: a lone name as it is, several as prefix[ranges]suffix. */
static void flush_group(struct strbuf *out, struct group_out *g)
{
    const struct host_key *f = &g->first;

    if (g->members == 0)
        return;
    if (out->len > 0)
        sb_add(out, ",", 1);
    if (g->members == 1) {
        sb_add(out, f->name, strlen(f->name));
    } else {
        close_range(g);
        sb_add(out, f->name, f->prefix_len);
        sb_add(out, "[", 1);
        sb_add(out, g->ranges.s, g->ranges.len);
        sb_add(out, "]", 1);
        sb_add(out, f->suffix, strlen(f->suffix));
    }
    out->oom |= g->ranges.oom;
    g->ranges.len = 0;
    g->ranges.oom = 0;
    g->members = 0;
}

/* One pass, one host_key per name. */
char *hostlist_compress(const struct hostlist *hl)
{
    struct strbuf out = {0};
    struct group_out g = {0};
    struct host_key k;
    size_t count = hostlist_count(hl);

    sb_add(&out, "", 0); /* "" rather than NULL for an empty list */
    for (size_t i = 0; i < count; i++) {
        host_key(hl->names[i], &k);
        if (g.members > 0 && same_group(&g.first, &k)) {
            if (continues_range(g.hi, g.width, &k)) {
                g.hi = k.value;
            } else {
                close_range(&g);
                open_range(&g, &k);
            }
            g.members++;
            continue;
        }
        flush_group(&out, &g);
        g.first = k;
        g.members = 1;
        open_range(&g, &k);
    }
    flush_group(&out, &g);
    free(g.ranges.s);
    if (out.oom) {
        free(out.s);
        return NULL;
    }
    return out.s;
}
