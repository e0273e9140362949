/* libFuzzer target: GRES requests (common/gres/gres_req.h).
 *
 * The input is read as an option argument and as a stored form. What an option accepts
 * must come back as a stored form that parses, within the bounds, with the same number
 * of items as the argument has; what the stored-form parser accepts must hold only
 * bounded, well-formed words; the checks, the node fit and the tally of a request over
 * nodes must not fail on anything. */
#include "common/gres/gres_req.h"
#include "common/util/errors.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t items_in(const char *s)
{
    size_t n = 1;
    for (; *s; s++)
        n += *s == ',';
    return n;
}

static void check_list(const struct gres_req_list *l)
{
    if (l->n > GRES_REQ_ITEMS_MAX)
        abort();
    for (size_t i = 0; i < l->n; i++) {
        const struct gres_count *c = &l->item[i];
        if (!c->name[0] || strnlen(c->name, GRES_NAME_MAX) == GRES_NAME_MAX ||
            strnlen(c->type, GRES_TYPE_MAX) == GRES_TYPE_MAX || c->count > GRES_REQ_COUNT_MAX ||
            strchr(c->name, ':') || strchr(c->type, ':') || strchr(c->name, ','))
            abort();
    }
}

static void option(enum gres_req_option opt, const char *arg)
{
    char *out = NULL;
    struct gres_req_list l;
    int rc = gres_req_from_option(opt, arg, &out);

    if (rc != TS_OK) {
        if (out)
            abort(); /* nothing on failure */
        return;
    }
    if (!out)
        return; /* --gres=none */
    if (strlen(out) > GRES_REQ_SPEC_MAX || gres_req_parse(out, &l) != TS_OK ||
        l.n != items_in(arg))
        abort();
    check_list(&l);
    free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    struct gres_req_list l;
    const struct gres_count node[] = {{"gpu", "a100", 4}, {"bandwidth", "", 1u << 30}};

    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    option(GRES_REQ_OPT_GRES, text);
    option(GRES_REQ_OPT_GPUS, text);
    if (gres_req_parse(text, &l) == TS_OK) {
        check_list(&l);
        (void)gres_req_fits(&l, node, 2);
        (void)gres_req_names_known(&l, "gpu,bandwidth");
    }
    char why[256];
    struct gres_req_job j = {.per_node = text, .per_job = text, .per_task = text,
                             .cpus_per_tres = text, .mem_per_tres = text, .flags = text,
                             .has_ntasks = 1, .ntasks = (uint32_t)size};
    (void)gres_req_check(&j, why, sizeof(why));
    struct gres_req_tally t;
    if (gres_req_tally_init(&t, &j, "gpu,bandwidth") == TS_OK) {
        gres_req_tally_node(&t, node, 2);
        (void)gres_req_tally_verdict(&t, 1);
    }
    free(text);
    return 0;
}
