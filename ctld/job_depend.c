/* Job dependencies (-d/--dependency), as Slurm writes them:
 *
 *   after:ID[+MIN][:ID...]   the target started (or was cancelled) MIN minutes ago
 *   afterany:ID[:ID...]      the target finished, whatever its state
 *   afterok:ID[:ID...]       the target completed with exit code 0
 *   afternotok:ID[:ID...]    the target finished otherwise
 *   aftercorr, afterburstbuffer: taken as afterany (no arrays, no burst buffers here)
 *   singleton                no earlier job of the same user and name is pending or running
 *
 * Items joined by "," must all hold; joined by "?", any one. A dependency naming a het
 * job means the whole job: it has started when any component has, and finished when
 * every component has. At submission every target must exist; a target that later
 * leaves the controller's memory counts as satisfied, as in Slurm.
 *
 * The text is parsed once, when the job arrives, is updated, or is loaded at start-up:
 * items deduplicated (12,000 "singleton"s are one) and at most JOB_DEP_MAX_ITEMS of them.
 * The parsed form stays with the leader, with the answer last computed. The answer is
 * computed again only when it may have changed: a target was saved or left memory (an
 * index from each target to the units that depend on it), the first of the unfinished
 * units of a user and name changed (singleton: those units are kept in id order per user
 * and name), or the time an "after:ID+MIN" waits for has come.
 */
#include "ctld/ctld.h"
#include "ctld/job.h"

#include "common/job/jobid.h"
#include "common/job/jobstate.h"
#include "common/util/errors.h"
#include "common/util/growarray.h"
#include "common/util/hashmap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum dep_type { DEP_AFTER, DEP_AFTERANY, DEP_AFTEROK, DEP_AFTERNOTOK, DEP_SINGLETON };

static const struct {
    const char *name;
    enum dep_type type;
} dep_types[] = {
    {"after", DEP_AFTER},           {"afterany", DEP_AFTERANY},
    {"afterok", DEP_AFTEROK},       {"afternotok", DEP_AFTERNOTOK},
    {"aftercorr", DEP_AFTERANY},    {"afterburstbuffer", DEP_AFTERANY},
    {"singleton", DEP_SINGLETON},
};

enum dep_state { DEP_WAIT, DEP_OK, DEP_NEVER };

struct dep_item {
    uint32_t target;    /* the target unit's leader id (0 for singleton) */
    uint32_t type;      /* enum dep_type */
    int64_t delay_secs; /* after:ID+MIN */
};

/* A leader's dependency, parsed, with its last answer. */
struct job_dep {
    struct dep_item *items; /* sorted by target, type, delay; unique */
    size_t n;
    int any;                /* joined by "?" */
    int never;              /* on its own unit, or malformed: never satisfied */
    int cached;             /* state holds the answer until something changes */
    enum dep_state state;
    int64_t recheck_at;     /* when an after:ID+MIN item turns (0: none) */
};

/* The units that depend on one target (their leaders' ids). */
struct dependents {
    uint32_t *ids;
    size_t n, cap;
};

/* The unfinished units of one user and name, in id order (singleton), under its key. */
struct job_same_name {
    struct job *first, *last;
    size_t klen;
    char key[];
};

struct job_deps {
    struct hashmap *by_target; /* target leader id -> struct dependents */
    struct hashmap *by_name;   /* uid (4 bytes) + name -> struct job_same_name */
};

/* ------------------------------------------------------------------------------------ */
/* parsing */

struct parse {
    const struct job_table *jobs;
    int strict;             /* every target must exist (submission, update) */
    struct dep_item *items;
    size_t n, cap;
};

static int push_item(struct parse *p, uint32_t target, enum dep_type type, int64_t delay)
{
    struct dep_item *grown = growarray_room(p->items, &p->cap, p->n, sizeof(*grown), 8);
    if (!grown)
        return TS_ENOMEM;
    p->items = grown;
    p->items[p->n++] = (struct dep_item){target, (uint32_t)type, delay};
    return TS_OK;
}

/* One id of an item ("12", "12+5" for after). The "+MIN" suffix belongs to "after" only;
 * elsewhere "N+k" is not an id. */
static int parse_target(struct parse *p, enum dep_type type, const char *text, size_t len)
{
    char buf[32];
    if (len == 0 || len >= sizeof(buf))
        return TS_EDEPENDENCY;
    memcpy(buf, text, len);
    buf[len] = '\0';
    int64_t delay = 0;
    char *plus = strchr(buf, '+');
    if (plus) {
        if (type != DEP_AFTER)
            return TS_EDEPENDENCY;
        *plus = '\0';
        char *end = NULL;
        long min = strtol(plus + 1, &end, 10);
        if (!plus[1] || *end || min < 0 || min > 525600)
            return TS_EDEPENDENCY;
        delay = (int64_t)min * 60;
    }
    struct jobid id;
    if (jobid_parse(buf, &id) != TS_OK || id.has_offset)
        return TS_EDEPENDENCY;
    const struct job *j = job_find(p->jobs, id.id);
    if (!j && p->strict)
        return TS_EDEPENDENCY;
    /* a target gone already (a restart after it left memory) counts as satisfied: its id
     * stays, matching nothing */
    return push_item(p, j ? j->leader->rec->job_id : id.id, type, delay);
}

static int parse_type(const char *item, size_t len, enum dep_type *type, const char **ids)
{
    const char *colon = memchr(item, ':', len);
    size_t name_len = colon ? (size_t)(colon - item) : len;
    for (size_t i = 0; i < sizeof(dep_types) / sizeof(dep_types[0]); i++) {
        if (strlen(dep_types[i].name) == name_len && !strncmp(dep_types[i].name, item, name_len)) {
            *type = dep_types[i].type;
            *ids = name_len < len ? item + name_len + 1 : NULL;
            /* singleton takes no ids; every other type needs at least one */
            return (*type == DEP_SINGLETON) == (*ids == NULL) ? TS_OK : TS_EDEPENDENCY;
        }
    }
    return TS_EDEPENDENCY;
}

/* One "type:id:id" item of len characters. */
static int parse_item(struct parse *p, const char *item, size_t len)
{
    enum dep_type type;
    const char *ids;
    int err = parse_type(item, len, &type, &ids);
    if (err || type == DEP_SINGLETON)
        return err ? err : push_item(p, 0, DEP_SINGLETON, 0);
    const char *end = item + len;
    while (!err && ids <= end) {
        const char *colon = memchr(ids, ':', (size_t)(end - ids));
        size_t idlen = (size_t)((colon ? colon : end) - ids);
        if (idlen) /* empty ids ("12::13") are skipped, as they always were */
            err = parse_target(p, type, ids, idlen);
        ids += idlen + 1;
    }
    return err;
}

static int cmp_item(const void *pa, const void *pb)
{
    const struct dep_item *a = pa, *b = pb;
    if (a->target != b->target)
        return a->target < b->target ? -1 : 1;
    if (a->type != b->type)
        return a->type < b->type ? -1 : 1;
    return (a->delay_secs > b->delay_secs) - (a->delay_secs < b->delay_secs);
}

static void dedup(struct parse *p)
{
    if (p->n)
        qsort(p->items, p->n, sizeof(*p->items), cmp_item);
    size_t w = 0;
    for (size_t r = 0; r < p->n; r++)
        if (w == 0 || cmp_item(&p->items[w - 1], &p->items[r]))
            p->items[w++] = p->items[r];
    p->n = w;
}

/* Walk "a,b" (all) or "a?b" (any); mixing both is refused, as in Slurm. *out is NULL for
 * an empty text. */
static int parse_spec(struct parse *p, const char *spec, struct job_dep **out, char *why,
                      size_t len)
{
    *out = NULL;
    if (!spec || !*spec)
        return TS_OK;
    if (strnlen(spec, JOB_DEP_MAX_TEXT + 1) > JOB_DEP_MAX_TEXT) {
        snprintf(why, len, "%s (longer than %d bytes)", ts_strerror(TS_EDEPENDENCY),
                 JOB_DEP_MAX_TEXT);
        return TS_EDEPENDENCY;
    }
    int any = strchr(spec, '?') != NULL;
    if (any && strchr(spec, ','))
        return TS_EDEPENDENCY;
    int err = TS_OK;
    for (const char *s = spec; !err && *s;) {
        size_t n = strcspn(s, any ? "?" : ",");
        if (n > 0) /* empty items ("a,,b") are skipped, as strtok did */
            err = parse_item(p, s, n);
        s += n + (s[n] != '\0');
    }
    dedup(p);
    if (!err && p->n > JOB_DEP_MAX_ITEMS) {
        snprintf(why, len, "%s (%zu distinct items; at most %d)", ts_strerror(TS_EDEPENDENCY),
                 p->n, JOB_DEP_MAX_ITEMS);
        err = TS_EDEPENDENCY;
    }
    struct job_dep *dep = err ? NULL : calloc(1, sizeof(*dep));
    if (!err && !dep)
        err = TS_ENOMEM;
    if (err) {
        free(p->items);
        p->items = NULL;
        return err;
    }
    dep->items = p->items;
    dep->n = p->n;
    dep->any = any;
    p->items = NULL;
    *out = dep;
    return TS_OK;
}

int job_dependency_check(const struct ctld *c, const char *spec, char *why, size_t len)
{
    char scratch[8];
    struct parse p = {.jobs = &c->jobs, .strict = 1};
    struct job_dep *dep = NULL;
    if (!why) {
        why = scratch;
        len = sizeof(scratch);
    }
    int err = parse_spec(&p, spec, &dep, why, len);
    if (dep)
        free(dep->items);
    free(dep);
    return err;
}

/* ------------------------------------------------------------------------------------ */
/* the indexes */

static struct job_deps *deps_of(struct job_table *t)
{
    if (!t->deps && (t->deps = calloc(1, sizeof(*t->deps)))) {
        t->deps->by_target = hashmap_create();
        t->deps->by_name = hashmap_create();
        if (!t->deps->by_target || !t->deps->by_name) {
            hashmap_destroy(t->deps->by_target);
            hashmap_destroy(t->deps->by_name);
            free(t->deps);
            t->deps = NULL;
        }
    }
    return t->deps;
}

static void invalidate(struct job *leader)
{
    if (leader && leader->dep)
        leader->dep->cached = 0;
}

/* The units depending on target must answer again. */
static void notify_dependents(struct job_table *t, uint32_t target)
{
    struct dependents *d = t->deps ? hashmap_get_u32(t->deps->by_target, target) : NULL;
    for (size_t i = 0; d && i < d->n; i++) {
        struct job *j = job_find(t, d->ids[i]);
        invalidate(j ? j->leader : NULL);
    }
}

static int add_dependent(struct job_deps *deps, uint32_t target, uint32_t id)
{
    struct dependents *d = hashmap_get_u32(deps->by_target, target);
    if (!d) {
        if (!(d = calloc(1, sizeof(*d))))
            return TS_ENOMEM;
        if (hashmap_put_u32(deps->by_target, target, d) != TS_OK) {
            free(d);
            return TS_ENOMEM;
        }
    }
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 4;
        uint32_t *grown = realloc(d->ids, cap * sizeof(*grown));
        if (!grown)
            return TS_ENOMEM;
        d->ids = grown;
        d->cap = cap;
    }
    d->ids[d->n++] = id;
    return TS_OK;
}

static void drop_dependents(struct job_deps *deps, uint32_t target)
{
    struct dependents *d = hashmap_get_u32(deps->by_target, target);
    if (!d)
        return;
    hashmap_del_u32(deps->by_target, target);
    free(d->ids);
    free(d);
}

static void remove_dependent(struct job_deps *deps, uint32_t target, uint32_t id)
{
    struct dependents *d = hashmap_get_u32(deps->by_target, target);
    for (size_t i = 0; d && i < d->n; i++) {
        if (d->ids[i] == id) {
            d->ids[i] = d->ids[--d->n];
            break;
        }
    }
    if (d && d->n == 0)
        drop_dependents(deps, target);
}

/* Each distinct target of a parsed dependency (items are sorted by target). */
static void each_target(const struct job_dep *dep, struct job_deps *deps, uint32_t id,
                        int add, int *err)
{
    for (size_t i = 0; i < dep->n; i++) {
        uint32_t target = dep->items[i].target;
        if (dep->items[i].type == DEP_SINGLETON || (i > 0 && dep->items[i - 1].target == target))
            continue;
        if (add && !*err)
            *err = add_dependent(deps, target, id);
        else if (!add)
            remove_dependent(deps, target, id);
    }
}

static void detach_dependency(struct job_table *t, struct job *leader)
{
    if (!leader->dep)
        return;
    if (t->deps)
        each_target(leader->dep, t->deps, leader->rec->job_id, 0, NULL);
    free(leader->dep->items);
    free(leader->dep);
    leader->dep = NULL;
}

/* singleton: the units of one user and name, unfinished, in id order */

static size_t name_key(const struct job *leader, char *key, size_t len)
{
    const Tessera__JobDesc *d = leader->rec->desc;
    size_t nlen = strlen(d->name);
    if (nlen + 4 > len)
        nlen = len - 4; /* names are bounded (ctld/job_limits.c); never cut in practice */
    memcpy(key, &d->user_id, 4);
    memcpy(key + 4, d->name, nlen);
    return nlen + 4;
}

static int counts_for_singleton(const struct job *leader)
{
    const Tessera__JobRecord *r = leader->rec;
    return leader->leader == leader && !jobstate_is_finished(r->state) &&
           r->desc->has_user_id && r->desc->name;
}

static void name_unlink(struct job_table *t, struct job *leader)
{
    struct job_same_name *b = leader->same_name;
    if (!b)
        return;
    if (leader->same_prev)
        leader->same_prev->same_next = leader->same_next;
    else
        b->first = leader->same_next;
    if (leader->same_next)
        leader->same_next->same_prev = leader->same_prev;
    else
        b->last = leader->same_prev;
    if (!leader->same_prev)
        invalidate(b->first); /* the next one is the first now */
    leader->same_name = NULL;
    leader->same_prev = leader->same_next = NULL;
    if (!b->first) {
        hashmap_del(t->deps->by_name, b->key, b->klen);
        free(b);
    }
}

static int name_link(struct job_deps *deps, struct job *leader, const char *key, size_t klen)
{
    struct job_same_name *b = hashmap_get(deps->by_name, key, klen);
    if (!b) {
        if (!(b = calloc(1, sizeof(*b) + klen)))
            return TS_ENOMEM;
        memcpy(b->key, key, klen);
        b->klen = klen;
        if (hashmap_put(deps->by_name, key, klen, b) != TS_OK) {
            free(b);
            return TS_ENOMEM;
        }
    }
    /* new units have the highest ids: they go last, but for requeued ones */
    struct job *after = b->last;
    while (after && after->rec->job_id > leader->rec->job_id)
        after = after->same_prev;
    leader->same_prev = after;
    leader->same_next = after ? after->same_next : b->first;
    if (leader->same_next)
        leader->same_next->same_prev = leader;
    else
        b->last = leader;
    if (after) {
        after->same_next = leader;
    } else {
        invalidate(leader->same_next); /* it was the first */
        b->first = leader;
    }
    leader->same_name = b;
    invalidate(leader);
    return TS_OK;
}

/* Put the unit where it belongs among the units of its user and name (or nowhere). */
static int name_sync(struct job_table *t, struct job *leader)
{
    char key[4 + 1024 + 1];
    size_t klen = 0;
    int wanted = counts_for_singleton(leader);
    if (wanted)
        klen = name_key(leader, key, sizeof(key));
    if (leader->same_name && wanted && t->deps &&
        hashmap_get(t->deps->by_name, key, klen) == leader->same_name)
        return TS_OK; /* where it was */
    name_unlink(t, leader);
    struct job_deps *deps = wanted ? deps_of(t) : NULL;
    if (wanted && !deps)
        return TS_ENOMEM;
    return wanted ? name_link(deps, leader, key, klen) : TS_OK;
}

/* ------------------------------------------------------------------------------------ */
/* keeping the indexes with the table */

int job_dependency_attach(struct ctld *c, struct job *j)
{
    struct job_table *t = &c->jobs;
    struct job *leader = j->leader;
    detach_dependency(t, leader);
    int err = name_sync(t, leader);
    const char *spec = leader->rec->desc->dependency;
    if (err || !spec || !*spec)
        return err;
    struct job_deps *deps = deps_of(t);
    if (!deps)
        return TS_ENOMEM;
    char why[8];
    struct parse p = {.jobs = t};
    struct job_dep *dep = NULL;
    err = parse_spec(&p, spec, &dep, why, sizeof(why));
    if (err == TS_ENOMEM)
        return err;
    if (err && !(dep = calloc(1, sizeof(*dep)))) /* stored text no longer parses */
        return TS_ENOMEM;
    dep->never = err != TS_OK;
    leader->dep = dep;
    err = TS_OK;
    each_target(dep, deps, leader->rec->job_id, 1, &err);
    return err;
}

void job_dependency_changed(struct ctld *c, const struct job_change *ch)
{
    if (ch->kind != JOB_CHANGE_SAVED)
        return; /* a forgotten unit's dependents learnt it from job_deps_forget */
    struct job *j = ch->job;
    notify_dependents(&c->jobs, j->leader->rec->job_id);
    name_sync(&c->jobs, j->leader); /* out of memory: the unit is left out of singleton */
}

void job_deps_forget(struct job_table *t, struct job *j)
{
    if (j->leader != j)
        return;
    name_unlink(t, j);
    detach_dependency(t, j);
    if (t->deps) { /* its dependents find it gone: satisfied */
        notify_dependents(t, j->rec->job_id);
        drop_dependents(t->deps, j->rec->job_id);
    }
}

void job_deps_free(struct job_table *t)
{
    if (!t->deps)
        return;
    size_t cursor = 0;
    void *value;
    while (hashmap_next(t->deps->by_target, &cursor, NULL, NULL, &value)) {
        free(((struct dependents *)value)->ids);
        free(value);
    }
    cursor = 0;
    while (hashmap_next(t->deps->by_name, &cursor, NULL, NULL, &value))
        free(value);
    hashmap_destroy(t->deps->by_target);
    hashmap_destroy(t->deps->by_name);
    free(t->deps);
    t->deps = NULL;
}

void job_dep_free(struct job_dep *dep)
{
    if (dep)
        free(dep->items);
    free(dep);
}

/* ------------------------------------------------------------------------------------ */
/* the answer */

/* The whole unit's view: started when any component started; finished when all did;
 * "ok" when all completed with status 0. */
static enum dep_state target_state(const struct dep_item *it, const struct job *target,
                                   time_t now, int64_t *recheck)
{
    size_t n = job_ncomponents(target);
    int finished = 1, ok = 1, started = 0;
    int64_t start = 0;
    for (size_t i = 0; i < n; i++) {
        const Tessera__JobRecord *r = job_component(target, i)->rec;
        if (!jobstate_is_finished(r->state))
            finished = 0;
        if (r->state != TESSERA__JOB_STATE__JOB_COMPLETED || r->exit_code != 0)
            ok = 0;
        if (r->start_time || jobstate_is_finished(r->state)) {
            started = 1;
            if (r->start_time > start)
                start = r->start_time;
        }
    }
    switch (it->type) {
    case DEP_AFTER:
        if (started && now < start + it->delay_secs &&
            (!*recheck || start + it->delay_secs < *recheck))
            *recheck = start + it->delay_secs;
        return started && now >= start + it->delay_secs ? DEP_OK : DEP_WAIT;
    case DEP_AFTERANY:
        return finished ? DEP_OK : DEP_WAIT;
    case DEP_AFTEROK:
        return !finished ? DEP_WAIT : ok ? DEP_OK : DEP_NEVER;
    case DEP_AFTERNOTOK:
        return !finished ? DEP_WAIT : ok ? DEP_NEVER : DEP_OK;
    default:
        return DEP_OK;
    }
}

static enum dep_state item_state(const struct ctld *c, const struct job *self,
                                 const struct dep_item *it, time_t now, int64_t *recheck)
{
    if (it->type == DEP_SINGLETON) /* an earlier unfinished unit of its user and name */
        return self->same_prev ? DEP_WAIT : DEP_OK;
    const struct job *target = job_find(&c->jobs, it->target);
    if (!target)
        return DEP_OK; /* left memory (MinJobAge) after it finished */
    if (target->leader == self)
        return DEP_NEVER; /* on itself: never */
    return target_state(it, target->leader, now, recheck);
}

static enum dep_state evaluate(const struct ctld *c, const struct job *self,
                               const struct job_dep *dep, time_t now, int64_t *recheck)
{
    int seen_ok = 0, seen_wait = 0, seen_never = 0;
    if (dep->never)
        return DEP_NEVER;
    for (size_t i = 0; i < dep->n; i++) {
        enum dep_state s = item_state(c, self, &dep->items[i], now, recheck);
        seen_ok |= s == DEP_OK;
        seen_wait |= s == DEP_WAIT;
        seen_never |= s == DEP_NEVER;
    }
    if (dep->any)
        return seen_ok ? DEP_OK : seen_wait ? DEP_WAIT : DEP_NEVER;
    return seen_never ? DEP_NEVER : seen_wait ? DEP_WAIT : DEP_OK;
}

int job_dependency_state(const struct ctld *c, const struct job *j, time_t now)
{
    struct job_dep *dep = j->leader->dep;
    if (!dep)
        return JOB_DEP_OK;
    if (!dep->cached || (dep->recheck_at && now >= dep->recheck_at)) {
        dep->recheck_at = 0;
        dep->state = evaluate(c, j->leader, dep, now, &dep->recheck_at);
        dep->cached = 1;
    }
    return dep->state == DEP_OK ? JOB_DEP_OK : dep->state == DEP_WAIT ? JOB_DEP_WAIT
                                                                      : JOB_DEP_NEVER;
}
