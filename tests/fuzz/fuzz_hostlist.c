/* libFuzzer target: any expression that expands must survive compress + expand unchanged,
 * and matching without expanding must agree with the expansion.
 *
 * The input is copied into a NUL-terminated buffer (libFuzzer's data is not); anything
 * hostlist_expand refuses is fine, but what it accepts must compress to a text that
 * expands to the same names in the same order, before and after hostlist_uniq; its
 * pattern must contain every name, name no other (tried: each name with a character
 * added or dropped), and count at least as many distinct names as there are. */
#include "common/text/hostlist.h"
#include "common/util/errors.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Compress hl, expand the text again and abort unless the lists are identical. */
static void check_round_trip(const struct hostlist *hl)
{
    struct hostlist *again = NULL;
    char *text = hostlist_compress(hl);

    if (!text)
        return; /* allocation failure: nothing to compare */
    if (strlen(text) > HOSTLIST_MAX_EXPR) { /* a million long names: refused, rightly */
        free(text);
        return;
    }
    if (hostlist_expand(text, &again) != TS_OK)
        abort();
    if (hostlist_count(again) != hostlist_count(hl))
        abort();
    for (size_t i = 0; i < hostlist_count(hl); i++)
        if (strcmp(hostlist_nth(hl, i), hostlist_nth(again, i)) != 0)
            abort();
    hostlist_destroy(again);
    free(text);
}

/* Does the pattern agree with the expansion on name? */
static void check_one(const struct hostpattern *p, const struct hostlist *hl, const char *name)
{
    if (hostpattern_contains(p, name) != (hostlist_find(hl, name) >= 0))
        abort();
}

static void check_pattern(const char *expr, struct hostlist *hl)
{
    struct hostpattern *p = NULL;
    char near[HOSTLIST_MAX_NAME + 2];
    int rc = hostpattern_parse(expr, &p);

    if (rc == TS_ETOOBIG || rc == TS_ENOMEM)
        return; /* too many items of several groups: refused, not mismatched */
    if (rc != TS_OK)
        abort(); /* it expanded, so it parses */
    for (size_t i = 0; i < hostlist_count(hl); i++) {
        const char *name = hostlist_nth(hl, i);
        size_t len = strlen(name);
        check_one(p, hl, name);
        snprintf(near, sizeof(near), "%s0", name);
        check_one(p, hl, near);
        memcpy(near, name, len - 1);
        near[len - 1] = '\0';
        if (len > 1)
            check_one(p, hl, near);
    }
    hostlist_uniq(hl);
    if (hostpattern_size(p) < hostlist_count(hl))
        abort();
    hostpattern_destroy(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct hostlist *hl = NULL;
    char *expr = malloc(size + 1);

    if (!expr)
        return 0;
    memcpy(expr, data, size);
    expr[size] = '\0';
    if (hostlist_expand(expr, &hl) == TS_OK) {
        check_round_trip(hl);
        /* sorted order too; huge lists only cost time here, the small ones give the
         * coverage */
        if (hostlist_count(hl) <= 65536) {
            hostlist_uniq(hl);
            check_round_trip(hl);
        }
        if (hostlist_count(hl) <= 512)
            check_pattern(expr, hl);
        hostlist_destroy(hl);
    } else if (hl) {
        abort(); /* on error *out must be NULL */
    }
    free(expr);
    return 0;
}
