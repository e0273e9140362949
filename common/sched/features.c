#include "common/sched/features.h"

#include "common/util/errors.h"

#include <ctype.h>
#include <string.h>

/* Recursive descent over the expression; `node` NULL means "syntax check only". */
struct parser {
    const char *s;
    const char *node; /* "a,b,c" */
    int error;
    int depth;
};

static int is_name_char(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '-' || c == '.';
}

int features_list_has(const char *node, const char *name, size_t len)
{
    if (!node)
        return 0;
    for (const char *p = node; *p;) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n == len && !memcmp(p, name, len))
            return 1;
        if (!end)
            break;
        p = end + 1;
    }
    return 0;
}

static int parse_or(struct parser *p);

static int parse_factor(struct parser *p)
{
    char open = *p->s;
    if (open == '(' || open == '[') {
        if (++p->depth > 32) {
            p->error = 1;
            return 0;
        }
        p->s++;
        int v = parse_or(p);
        char close = open == '(' ? ')' : ']';
        if (*p->s != close)
            p->error = 1;
        else
            p->s++;
        p->depth--;
        return v;
    }
    const char *start = p->s;
    while (is_name_char(*p->s))
        p->s++;
    if (p->s == start) {
        p->error = 1;
        return 0;
    }
    return features_list_has(p->node, start, (size_t)(p->s - start));
}

static int parse_and(struct parser *p)
{
    int v = parse_factor(p);
    while (!p->error && *p->s == '&') {
        p->s++;
        v = parse_factor(p) && v; /* evaluate both: the syntax must be checked whole */
    }
    return v;
}

static int parse_or(struct parser *p)
{
    int v = parse_and(p);
    while (!p->error && *p->s == '|') {
        p->s++;
        v = parse_and(p) || v;
    }
    return v;
}

static int run(const char *expr, const char *node, int *value)
{
    if (strlen(expr) > FEATURES_MAX_EXPR)
        return TS_EINVALID_FEATURE;
    struct parser p = {.s = expr, .node = node};
    *value = parse_or(&p);
    return p.error || *p.s ? TS_EINVALID_FEATURE : TS_OK;
}

int features_check(const char *expr)
{
    int v;
    return !expr || !*expr ? TS_OK : run(expr, NULL, &v);
}

int features_match(const char *expr, const char *node_features)
{
    if (!expr || !*expr)
        return 1;
    int v;
    return run(expr, node_features, &v) == TS_OK && v;
}

int features_foreach_name(const char *expr, int (*fn)(void *arg, const char *name, size_t len),
                          void *arg)
{
    for (const char *p = expr ? expr : ""; *p;) {
        if (!is_name_char(*p)) {
            p++;
            continue;
        }
        const char *start = p;
        while (is_name_char(*p))
            p++;
        int r = fn(arg, start, (size_t)(p - start));
        if (r)
            return r;
    }
    return 0;
}
