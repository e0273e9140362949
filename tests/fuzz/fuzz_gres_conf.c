/* libFuzzer target: the gres.conf parser and the node Gres= spec parser on arbitrary
 * text. What parses must be usable: every record's counts and files within their bounds,
 * a node's units resolvable, a spec formatted back to a text that parses the same. */
#include "common/gres/gres_conf.h"
#include "common/util/errors.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_conf(const char *text)
{
    struct gres_conf *gc = NULL;
    char err[512] = "";
    if (gres_conf_parse(text, "fuzz.conf", &gc, err, sizeof(err)) != TS_OK) {
        if (gc || !err[0])
            abort(); /* a failure always explains itself and returns nothing */
        return;
    }
    for (size_t i = 0; i < gc->nrecords; i++) {
        const struct gres_record *r = &gc->records[i];
        if (r->nfiles > GRES_UNITS_MAX || (r->name[0] && (r->count == 0 ||
                                                          r->count > GRES_COUNT_MAX)))
            abort();
    }
    struct gres_units u;
    if (gres_node_units(gc, "n1", "gpu,mps,bandwidth", NULL, 0, "/nonexistent", &u, err,
                        sizeof(err)) == TS_OK)
        gres_units_clear(&u);
    gres_conf_destroy(gc);
}

static void check_spec(const char *text)
{
    struct gres_count *g = NULL, *again = NULL;
    size_t n = 0, m = 0;
    char err[256], buf[GRES_SPEC_MAX_LEN * 2];
    if (gres_spec_parse(text, &g, &n, err, sizeof(err)) != TS_OK)
        return;
    if (gres_spec_format(g, n, buf, sizeof(buf)) != TS_OK ||
        gres_spec_parse(buf, &again, &m, err, sizeof(err)) != TS_OK || m != n ||
        (n && memcmp(g, again, n * sizeof(*g))))
        abort();
    free(g);
    free(again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    check_conf(text);
    check_spec(text);
    free(text);
    return 0;
}
