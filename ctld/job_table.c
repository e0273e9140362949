/* The in-memory job table: components by id, in id order, het components linked. */
#include "ctld/job.h"
#include "ctld/step.h"

#include "common/util/errors.h"
#include "common/util/hashmap.h"

#include <stdlib.h>

int job_table_init(struct job_table *t)
{
    t->head = t->tail = NULL;
    t->count = 0;
    t->deps = NULL;
    t->by_id = hashmap_create();
    return t->by_id ? TS_OK : TS_ENOMEM;
}

static void job_free(struct job *j)
{
    while (j->steps) {
        struct step *s = j->steps;
        j->steps = s->next;
        tessera__step_record__free_unpacked(s->rec, NULL);
        free(s);
    }
    job_dep_free(j->dep);
    tessera__job_record__free_unpacked(j->rec, NULL);
    free(j->components);
    free(j);
}

void job_table_fini(struct job_table *t)
{
    struct job *j = t->head;
    while (j) {
        struct job *next = j->next;
        job_free(j);
        j = next;
    }
    job_deps_free(t);
    hashmap_destroy(t->by_id);
    t->by_id = NULL;
    t->head = t->tail = NULL;
    t->count = 0;
}

struct job *job_find(const struct job_table *t, uint32_t job_id)
{
    return hashmap_get_u32(t->by_id, job_id);
}

/* Ids grow, so a new component almost always goes at the tail; after a restart the
 * records arrive in key order, which is id order as well. */
static void list_insert(struct job_table *t, struct job *j)
{
    struct job *after = t->tail;
    while (after && after->rec->job_id > j->rec->job_id)
        after = after->prev;
    j->prev = after;
    j->next = after ? after->next : t->head;
    if (j->next)
        j->next->prev = j;
    else
        t->tail = j;
    if (after)
        after->next = j;
    else
        t->head = j;
}

struct job *job_insert(struct job_table *t, Tessera__JobRecord *rec)
{
    struct job *j = calloc(1, sizeof(*j));
    if (!j)
        return NULL;
    j->rec = rec;
    j->leader = j;
    if (hashmap_put_u32(t->by_id, rec->job_id, j) != TS_OK) {
        free(j);
        return NULL;
    }
    list_insert(t, j);
    t->count++;
    return j;
}

int job_link_het(struct job_table *t, struct job *leader)
{
    const Tessera__JobRecord *r = leader->rec;
    if (!r->het_job_id)
        return TS_OK;
    struct job **comps = calloc(r->het_size, sizeof(*comps));
    if (!comps)
        return TS_ENOMEM;
    for (uint32_t i = 0; i < r->het_size; i++) {
        struct job *c = job_find(t, r->het_job_id + i);
        if (!c || c->rec->het_job_id != r->het_job_id || c->rec->het_job_offset != i) {
            free(comps);
            return TS_ESTORE_CORRUPT;
        }
        c->leader = leader;
        comps[i] = c;
    }
    free(leader->components);
    leader->components = comps;
    return TS_OK;
}

void job_table_remove(struct job_table *t, struct job *j)
{
    job_deps_forget(t, j);
    hashmap_del_u32(t->by_id, j->rec->job_id);
    if (j->prev)
        j->prev->next = j->next;
    else
        t->head = j->next;
    if (j->next)
        j->next->prev = j->prev;
    else
        t->tail = j->prev;
    t->count--;
    job_free(j);
}
