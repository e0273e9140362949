/* Slurm's JSON documents: the envelope and the object builder. */
#include "common/format/jsondoc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef TESSERA_VERSION
#define TESSERA_VERSION "unknown"
#endif

void jsondoc_set(struct jsondoc_obj *b, const char *key, json_t *value)
{
    if (!value || json_object_set_new(b->o, key, value) != 0)
        b->failed = 1;
}

json_t *jsondoc_str(const char *s)
{
    return json_string(s ? s : "");
}

json_t *jsondoc_finish(struct jsondoc_obj *b)
{
    if (b->failed) {
        json_decref(b->o);
        return NULL;
    }
    return b->o;
}

/* The format is Slurm 22.05.8's; "Tessera" says what produced it. */
static json_t *meta_object(void)
{
    return json_pack("{s:{s:s,s:s},s:{s:{s:i,s:i,s:i},s:s},s:{s:s}}", "plugin", "type",
                     "openapi/v0.0.38", "name", "Slurm OpenAPI v0.0.38", "Slurm", "version",
                     "major", 22, "micro", 8, "minor", 5, "release", "22.05.8", "Tessera",
                     "release", TESSERA_VERSION);
}

char *jsondoc_jobs(json_t *jobs)
{
    struct jsondoc_obj root = {json_object(), !jobs};
    char *doc = NULL;
    if (!root.o)
        root.failed = 1;
    if (!root.failed) {
        jsondoc_set(&root, "meta", meta_object());
        jsondoc_set(&root, "errors", json_array());
        jsondoc_set(&root, "jobs", json_incref(jobs));
    }
    if (!root.failed) {
        /* Slurm escapes '/' in its JSON; so do we, for byte-for-byte diffs of paths. */
        char *body = json_dumps(root.o, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_ESCAPE_SLASH);
        if (body && (doc = malloc(strlen(body) + 2)))
            sprintf(doc, "%s\n", body);
        free(body);
    }
    json_decref(jobs);
    json_decref(root.o);
    return doc;
}
