/* Host lists matched without expanding them (common/text/hostlist.h, "matching").
 *
 * A name matches an item of the expression when it reads as the item's literal text with
 * a number of the right form in place of each bracket group. A number's form is its
 * class: a run with a leading zero ("007") can only come from a range padded to its
 * length; a run without one, from an unpadded range or from a padded range's values that
 * are as wide as the padding. Each group keeps its ranges as spans of one class, sorted
 * and merged, so that membership is a binary search and the group's distinct count is the
 * sum of its spans.
 *
 * Items are kept in three shapes: literal names (a hash set), items of one group (a hash
 * map keyed by "prefix[suffix", so that items sharing their text merge and a name is
 * checked by trying each run of digits in it as the number), and items of several groups
 * (a short list, each matched by a walk over the positions the name can have reached).
 */
#include "common/text/hostlist.h"
#include "common/text/hostlist_impl.h"

#include "common/util/errors.h"
#include "common/util/growarray.h"
#include "common/util/hashmap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SIZE_CAP (UINT64_C(1) << 62) /* distinct counts saturate here */

/* Values of one class: cls 0 for numbers printed without padding, w for numbers printed
 * with w digits and at least one leading zero. */
struct span {
    uint64_t lo, hi;
    int cls;
};

struct group {
    struct span *spans;
    size_t n, cap;
};

/* Items of one group sharing their text around it ("n[1-3]" and "n[7]" are one). */
struct single {
    struct group g;
    uint64_t seen;
};

/* Items of several groups: lits[0] g[0] lits[1] ... g[n-1] lits[n]. */
struct multi {
    char **lits;
    size_t *lit_lens;
    struct group *groups;
    size_t ngroups;
    uint64_t seen;
};

struct literal {
    uint64_t seen;
};

struct hostpattern {
    struct hashmap *literals; /* name -> struct literal */
    struct hashmap *singles;  /* "prefix[suffix" -> struct single */
    struct multi *multis;
    size_t nmultis, capmultis;
};

/* ---- groups --------------------------------------------------------------------------- */

static uint64_t pow10_u64(int e)
{
    uint64_t v = 1;
    while (e-- > 0)
        v *= 10;
    return v;
}

static int push_span(struct group *g, uint64_t lo, uint64_t hi, int cls)
{
    if (lo > hi)
        return TS_OK;
    struct span *grown = growarray_room(g->spans, &g->cap, g->n, sizeof(*grown), 4);
    if (!grown)
        return TS_ENOMEM;
    g->spans = grown;
    g->spans[g->n++] = (struct span){lo, hi, cls};
    return TS_OK;
}

/* A range as spans: a padded range's values narrower than its width are of the padded
 * class; the others print as plain numbers. */
static int add_range(struct group *g, const struct hl_range *r)
{
    if (r->width == 0)
        return push_span(g, r->lo, r->hi, 0);
    uint64_t plain_from = pow10_u64(r->width - 1); /* the first value with width digits */
    int rc = push_span(g, r->lo, r->hi < plain_from ? r->hi : plain_from - 1, r->width);
    if (rc == TS_OK && r->hi >= plain_from)
        rc = push_span(g, r->lo > plain_from ? r->lo : plain_from, r->hi, 0);
    return rc;
}

/* The group text after '[' up to ']' (validated by the scan). */
static int add_group_text(struct group *g, const char **p)
{
    struct hl_range r;
    for (;;) {
        if (hl_parse_range(p, &r) != TS_OK)
            return TS_EHOSTLIST;
        int rc = add_range(g, &r);
        if (rc != TS_OK)
            return rc;
        if (**p == ']')
            break;
        (*p)++;
    }
    (*p)++;
    return TS_OK;
}

static int cmp_span(const void *pa, const void *pb)
{
    const struct span *a = pa, *b = pb;
    if (a->cls != b->cls)
        return a->cls < b->cls ? -1 : 1;
    return a->lo < b->lo ? -1 : a->lo > b->lo;
}

static void group_finish(struct group *g)
{
    size_t w = 0;
    qsort(g->spans, g->n, sizeof(*g->spans), cmp_span);
    for (size_t r = 0; r < g->n; r++) {
        struct span *last = w ? &g->spans[w - 1] : NULL;
        if (last && last->cls == g->spans[r].cls && g->spans[r].lo <= last->hi + 1) {
            if (g->spans[r].hi > last->hi)
                last->hi = g->spans[r].hi;
        } else {
            g->spans[w++] = g->spans[r];
        }
    }
    g->n = w;
}

static uint64_t group_size(const struct group *g)
{
    uint64_t n = 0;
    for (size_t i = 0; i < g->n && n < SIZE_CAP; i++)
        n += g->spans[i].hi - g->spans[i].lo + 1;
    return n < SIZE_CAP ? n : SIZE_CAP;
}

/* Whether the len digits at s are one of the group's numbers. */
static int group_has(const struct group *g, const char *s, size_t len)
{
    uint64_t v;
    int width;
    if (!hl_parse_number(s, len, &v, &width))
        return 0;
    int cls = width; /* a leading zero: padded to exactly this length */
    size_t lo = 0, hi = g->n;
    while (lo < hi) { /* the first span after (cls, v) */
        size_t mid = lo + (hi - lo) / 2;
        const struct span *m = &g->spans[mid];
        if (m->cls < cls || (m->cls == cls && m->lo <= v))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 && g->spans[lo - 1].cls == cls && v <= g->spans[lo - 1].hi;
}

static size_t digit_run(const char *s)
{
    size_t n = 0;
    while (n < HOSTLIST_MAX_WIDTH && hl_is_digit(s[n]))
        n++;
    return n;
}

/* ---- building ------------------------------------------------------------------------- */

/* Where the item at s ends (',' outside brackets or the end) and how many groups it has. */
static const char *item_end(const char *s, size_t *ngroups)
{
    *ngroups = 0;
    while (*s && *s != ',') {
        if (*s == '[') {
            (*ngroups)++;
            s = strchr(s, ']');
        }
        s++;
    }
    return s;
}

static int add_literal(struct hostpattern *p, const char *s, size_t len)
{
    if (hashmap_get(p->literals, s, len))
        return TS_OK;
    struct literal *l = calloc(1, sizeof(*l));
    if (!l || hashmap_put(p->literals, s, len, l) != TS_OK) {
        free(l);
        return TS_ENOMEM;
    }
    return TS_OK;
}

/* "prefix[ranges]suffix": the key is "prefix[suffix" ('[' is no name character). */
static int add_single(struct hostpattern *p, const char *s, const char *end)
{
    const char *open = strchr(s, '['), *close = strchr(open, ']');
    char key[HOSTLIST_MAX_NAME + 2];
    size_t plen = (size_t)(open - s), slen = (size_t)(end - close - 1);
    memcpy(key, s, plen + 1);
    memcpy(key + plen + 1, close + 1, slen);
    struct single *one = hashmap_get(p->singles, key, plen + 1 + slen);
    if (!one) {
        if (!(one = calloc(1, sizeof(*one))))
            return TS_ENOMEM;
        if (hashmap_put(p->singles, key, plen + 1 + slen, one) != TS_OK) {
            free(one);
            return TS_ENOMEM;
        }
    }
    const char *q = open + 1;
    return add_group_text(&one->g, &q);
}

static int add_multi(struct hostpattern *p, const char *s, const char *end, size_t ngroups)
{
    if (p->nmultis == HOSTLIST_MAX_MULTI_ITEMS)
        return TS_ETOOBIG;
    if (p->nmultis == p->capmultis) {
        size_t cap = p->capmultis ? p->capmultis * 2 : 4;
        struct multi *grown = realloc(p->multis, cap * sizeof(*grown));
        if (!grown)
            return TS_ENOMEM;
        p->multis = grown;
        p->capmultis = cap;
    }
    struct multi *m = &p->multis[p->nmultis++];
    memset(m, 0, sizeof(*m));
    m->lits = calloc(ngroups + 1, sizeof(*m->lits));
    m->lit_lens = calloc(ngroups + 1, sizeof(*m->lit_lens));
    m->groups = calloc(ngroups, sizeof(*m->groups));
    if (!m->lits || !m->lit_lens || !m->groups)
        return TS_ENOMEM;
    m->ngroups = ngroups;
    const char *q = s;
    for (size_t k = 0; k <= ngroups; k++) {
        const char *open = k < ngroups ? strchr(q, '[') : end;
        m->lit_lens[k] = (size_t)(open - q);
        if (!(m->lits[k] = strndup(q, m->lit_lens[k])))
            return TS_ENOMEM;
        if (k == ngroups)
            break;
        q = open + 1;
        int rc = add_group_text(&m->groups[k], &q);
        if (rc != TS_OK)
            return rc;
        group_finish(&m->groups[k]);
    }
    return TS_OK;
}

int hostpattern_parse(const char *expr, struct hostpattern **out)
{
    *out = NULL;
    uint64_t count;
    int rc = expr && *expr ? hl_scan_expr(expr, &count) : TS_OK;
    if (rc != TS_OK)
        return rc;
    struct hostpattern *p = calloc(1, sizeof(*p));
    if (!p || !(p->literals = hashmap_create()) || !(p->singles = hashmap_create())) {
        hostpattern_destroy(p);
        return TS_ENOMEM;
    }
    for (const char *s = expr; rc == TS_OK && s && *s;) {
        size_t ngroups;
        const char *end = item_end(s, &ngroups);
        rc = ngroups == 0   ? add_literal(p, s, (size_t)(end - s))
             : ngroups == 1 ? add_single(p, s, end)
                            : add_multi(p, s, end, ngroups);
        s = *end ? end + 1 : end;
    }
    size_t cursor = 0;
    void *value;
    while (rc == TS_OK && hashmap_next(p->singles, &cursor, NULL, NULL, &value))
        group_finish(&((struct single *)value)->g);
    if (rc != TS_OK) {
        hostpattern_destroy(p);
        return rc;
    }
    *out = p;
    return TS_OK;
}

void hostpattern_destroy(struct hostpattern *p)
{
    if (!p)
        return;
    size_t cursor = 0;
    void *value;
    while (p->literals && hashmap_next(p->literals, &cursor, NULL, NULL, &value))
        free(value);
    cursor = 0;
    while (p->singles && hashmap_next(p->singles, &cursor, NULL, NULL, &value)) {
        free(((struct single *)value)->g.spans);
        free(value);
    }
    for (size_t i = 0; i < p->nmultis; i++) {
        struct multi *m = &p->multis[i];
        for (size_t k = 0; m->lits && k <= m->ngroups; k++)
            free(m->lits[k]);
        for (size_t k = 0; m->groups && k < m->ngroups; k++)
            free(m->groups[k].spans);
        free(m->lits);
        free(m->lit_lens);
        free(m->groups);
    }
    hashmap_destroy(p->literals);
    hashmap_destroy(p->singles);
    free(p->multis);
    free(p);
}

/* ---- matching ------------------------------------------------------------------------- */

/* Positions of the name a walk over a multi item has reached (names are short). */
typedef unsigned char reach_t[HOSTLIST_MAX_NAME + 1];

static int multi_matches(const struct multi *m, const char *name, size_t len)
{
    reach_t at, next;
    memset(at, 0, sizeof(at));
    at[0] = 1;
    for (size_t k = 0; k <= m->ngroups; k++) {
        memset(next, 0, sizeof(next));
        int any = 0;
        for (size_t pos = 0; pos <= len; pos++) {
            if (!at[pos] || pos + m->lit_lens[k] > len ||
                memcmp(name + pos, m->lits[k], m->lit_lens[k]))
                continue;
            size_t from = pos + m->lit_lens[k];
            if (k == m->ngroups) {
                next[from] = 1;
                any = 1;
                continue;
            }
            size_t run = digit_run(name + from);
            for (size_t l = 1; l <= run; l++)
                if (group_has(&m->groups[k], name + from, l))
                    next[from + l] = any = 1;
        }
        if (!any)
            return 0;
        memcpy(at, next, sizeof(at));
    }
    return at[len];
}

/* Whether any item matches the name; visit(&seen) for each item that does (each once). */
static int match_all(const struct hostpattern *p, const char *name, int stop_at_first,
                     void (*visit)(uint64_t *seen))
{
    size_t len = strlen(name);
    int found = 0;
    if (len == 0 || len > HOSTLIST_MAX_NAME)
        return 0;
    struct literal *lit = hashmap_get(p->literals, name, len);
    if (lit) {
        found = 1;
        if (visit)
            visit(&lit->seen);
        if (stop_at_first)
            return 1;
    }
    char key[HOSTLIST_MAX_NAME + 2];
    for (size_t i = 0; i < len && hashmap_count(p->singles); i++) {
        size_t run = digit_run(name + i);
        for (size_t l = 1; l <= run; l++) {
            memcpy(key, name, i);
            key[i] = '[';
            memcpy(key + i + 1, name + i + l, len - i - l);
            struct single *one = hashmap_get(p->singles, key, len - l + 1);
            if (!one || !group_has(&one->g, name + i, l))
                continue;
            found = 1;
            if (visit)
                visit(&one->seen);
            if (stop_at_first)
                return 1;
        }
    }
    for (size_t i = 0; i < p->nmultis; i++) {
        if (!multi_matches(&p->multis[i], name, len))
            continue;
        found = 1;
        if (visit)
            visit(&p->multis[i].seen);
        if (stop_at_first)
            return 1;
    }
    return found;
}

static void count_seen(uint64_t *seen)
{
    (*seen)++;
}

int hostpattern_contains(const struct hostpattern *p, const char *name)
{
    return p && name && match_all(p, name, 1, NULL);
}

int hostpattern_tally(struct hostpattern *p, const char *name)
{
    return p && name && match_all(p, name, 0, count_seen);
}

static uint64_t multi_size(const struct multi *m)
{
    uint64_t n = 1;
    for (size_t k = 0; k < m->ngroups; k++) {
        uint64_t g = group_size(&m->groups[k]);
        n = g && n > SIZE_CAP / g ? SIZE_CAP : n * g;
    }
    return n;
}

/* Visit every item with its size and what was tallied: returns 0 as soon as f does. */
static int each_item(const struct hostpattern *p, int (*f)(uint64_t size, uint64_t *seen, void *arg),
                     void *arg)
{
    size_t cursor = 0;
    void *value;
    while (hashmap_next(p->literals, &cursor, NULL, NULL, &value))
        if (!f(1, &((struct literal *)value)->seen, arg))
            return 0;
    cursor = 0;
    while (hashmap_next(p->singles, &cursor, NULL, NULL, &value)) {
        struct single *one = value;
        if (!f(group_size(&one->g), &one->seen, arg))
            return 0;
    }
    for (size_t i = 0; i < p->nmultis; i++)
        if (!f(multi_size(&p->multis[i]), &p->multis[i].seen, arg))
            return 0;
    return 1;
}

static int all_seen(uint64_t size, uint64_t *seen, void *arg)
{
    (void)arg;
    return *seen == size;
}

static int add_size(uint64_t size, uint64_t *seen, void *arg)
{
    uint64_t *total = arg;
    (void)seen;
    *total = *total + size < SIZE_CAP ? *total + size : SIZE_CAP;
    return 1;
}

static int clear_seen(uint64_t size, uint64_t *seen, void *arg)
{
    (void)size;
    (void)arg;
    *seen = 0;
    return 1;
}

int hostpattern_complete(const struct hostpattern *p)
{
    return p && each_item(p, all_seen, NULL);
}

uint64_t hostpattern_size(const struct hostpattern *p)
{
    uint64_t total = 0;
    if (p)
        each_item(p, add_size, &total);
    return total;
}

void hostpattern_tally_reset(struct hostpattern *p)
{
    if (p)
        each_item(p, clear_seen, NULL);
}
