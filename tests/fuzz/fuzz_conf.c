/* libFuzzer target: the tessera.conf parser on arbitrary text. A configuration that
 * parses must be usable: every node a partition names exists, and its entries can be
 * listed. */
#include "common/conf/conf.h"
#include "common/util/errors.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void visit(void *arg, const char *key, const char *value)
{
    if (!key || !value)
        abort();
    (*(size_t *)arg)++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    struct conf *c = NULL;
    char err[512];
    if (conf_parse_string(text, "fuzz.conf", 0, &c, err, sizeof(err)) == TS_OK) {
        for (size_t i = 0; i < c->npartitions; i++)
            for (size_t j = 0; j < c->partitions[i].nnodes; j++)
                if (c->partitions[i].node_index[j] >= c->nnodes)
                    abort();
        size_t n = 0;
        conf_foreach_entry(c, visit, &n);
        conf_free(c);
    } else if (c || !err[0]) {
        abort(); /* a failure always explains itself and returns nothing */
    }
    free(text);
    return 0;
}
