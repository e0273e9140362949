/* libFuzzer target: any expression that expands must survive compress + expand unchanged.
 *
 * The input is copied into a NUL-terminated buffer (libFuzzer's data is not); anything
 * hostlist_expand refuses is fine, but what it accepts must compress to a text that
 * expands to the same names in the same order, before and after hostlist_uniq. */
#include "common/errors.h"
#include "common/hostlist.h"

#include <stddef.h>
#include <stdint.h>
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
        hostlist_destroy(hl);
    } else if (hl) {
        abort(); /* on error *out must be NULL */
    }
    free(expr);
    return 0;
}
