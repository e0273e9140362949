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
 */
#include "ctld/ctld.h"
#include "ctld/job.h"

#include "common/errors.h"
#include "common/jobid.h"
#include "common/jobstate.h"

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

/* One "type:id:id" item is walked by the caller; each id is checked here. */
struct dep_target {
    struct job *job;     /* leader (or plain job) */
    int64_t delay_secs;  /* after:ID+MIN */
};

/* The "+MIN" suffix belongs to "after" only; elsewhere "N+k" is not an id. */
static int parse_target(const struct ctld *c, enum dep_type type, const char *text,
                        struct dep_target *out)
{
    char buf[32];
    if (strlen(text) >= sizeof(buf))
        return TS_EDEPENDENCY;
    snprintf(buf, sizeof(buf), "%s", text);
    out->delay_secs = 0;
    char *plus = strchr(buf, '+');
    if (plus) {
        if (type != DEP_AFTER)
            return TS_EDEPENDENCY;
        *plus = '\0';
        char *end = NULL;
        long min = strtol(plus + 1, &end, 10);
        if (!plus[1] || *end || min < 0 || min > 525600)
            return TS_EDEPENDENCY;
        out->delay_secs = (int64_t)min * 60;
    }
    struct jobid id;
    if (jobid_parse(buf, &id) != TS_OK || id.has_offset)
        return TS_EDEPENDENCY;
    struct job *j = job_find(&c->jobs, id.id);
    if (!j)
        return TS_ENOENT;
    out->job = j->leader;
    return TS_OK;
}

enum dep_state { DEP_WAIT, DEP_OK, DEP_NEVER };

/* The whole unit's view: started when any component started; finished when all did;
 * "ok" when all completed with status 0. */
static enum dep_state target_state(enum dep_type type, const struct dep_target *t, time_t now)
{
    size_t n = job_ncomponents(t->job);
    int finished = 1, ok = 1, started = 0;
    int64_t start = 0;
    for (size_t i = 0; i < n; i++) {
        const Tessera__JobRecord *r = job_component(t->job, i)->rec;
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
    switch (type) {
    case DEP_AFTER:
        return started && now >= start + t->delay_secs ? DEP_OK : DEP_WAIT;
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

/* singleton: an earlier unit of the same user and name still pending or running. */
static enum dep_state singleton_state(const struct ctld *c, const struct job *self)
{
    const Tessera__JobDesc *d = self->leader->rec->desc;
    for (const struct job *j = c->jobs.head; j && j->rec->job_id < self->leader->rec->job_id;
         j = j->next) {
        const Tessera__JobRecord *r = j->rec;
        if (j->leader != j || jobstate_is_finished(r->state) || !r->desc->has_user_id ||
            r->desc->user_id != d->user_id || !r->desc->name || !d->name ||
            strcmp(r->desc->name, d->name))
            continue;
        return DEP_WAIT;
    }
    return DEP_OK;
}

static int parse_type(const char *item, enum dep_type *type, const char **ids)
{
    size_t len = strcspn(item, ":");
    for (size_t i = 0; i < sizeof(dep_types) / sizeof(dep_types[0]); i++) {
        if (strlen(dep_types[i].name) == len && !strncmp(dep_types[i].name, item, len)) {
            *type = dep_types[i].type;
            *ids = item[len] == ':' ? item + len + 1 : NULL;
            /* singleton takes no ids; every other type needs at least one */
            return (*type == DEP_SINGLETON) == (*ids == NULL) ? TS_OK : TS_EDEPENDENCY;
        }
    }
    return TS_EDEPENDENCY;
}

/* Evaluate one item ("afterok:12:13"); self may be NULL when only checking syntax and
 * targets (at submission). */
static int eval_item(const struct ctld *c, const struct job *self, char *item, time_t now,
                     enum dep_state *state)
{
    enum dep_type type;
    const char *ids;
    int err = parse_type(item, &type, &ids);
    if (err)
        return err;
    if (type == DEP_SINGLETON) {
        *state = self ? singleton_state(c, self) : DEP_OK;
        return TS_OK;
    }
    *state = DEP_OK;
    char *save = NULL;
    char *copy = (char *)ids; /* item is our own copy: tokenizing in place is fine */
    for (char *id = strtok_r(copy, ":", &save); id; id = strtok_r(NULL, ":", &save)) {
        struct dep_target t;
        err = parse_target(c, type, id, &t);
        if (err == TS_ENOENT && self) {
            /* The target left the controller's memory (MinJobAge) after it finished:
             * Slurm counts such a dependency as satisfied, and so do we. */
            err = TS_OK;
            continue;
        }
        if (err)
            return err == TS_ENOENT ? TS_EDEPENDENCY : err;
        if (self && t.job == self->leader)
            return TS_EDEPENDENCY; /* on itself: never */
        enum dep_state s = target_state(type, &t, now);
        if (s == DEP_NEVER)
            *state = DEP_NEVER;
        else if (s == DEP_WAIT && *state == DEP_OK)
            *state = DEP_WAIT;
    }
    return TS_OK;
}

/* Walk "a,b" (all) or "a?b" (any); mixing both is refused, as in Slurm. */
static int evaluate(const struct ctld *c, const struct job *self, const char *spec, time_t now,
                    enum dep_state *result)
{
    if (!spec || !*spec) {
        *result = DEP_OK;
        return TS_OK;
    }
    int any = strchr(spec, '?') != NULL;
    if (any && strchr(spec, ','))
        return TS_EDEPENDENCY;
    char *copy = strdup(spec);
    if (!copy)
        return TS_ENOMEM;
    int err = TS_OK, seen_ok = 0, seen_wait = 0, seen_never = 0;
    char *save = NULL;
    for (char *item = strtok_r(copy, any ? "?" : ",", &save); item && !err;
         item = strtok_r(NULL, any ? "?" : ",", &save)) {
        enum dep_state s;
        err = eval_item(c, self, item, now, &s);
        seen_ok |= s == DEP_OK;
        seen_wait |= s == DEP_WAIT;
        seen_never |= s == DEP_NEVER;
    }
    free(copy);
    if (err)
        return err;
    if (any)
        *result = seen_ok ? DEP_OK : seen_wait ? DEP_WAIT : DEP_NEVER;
    else
        *result = seen_never ? DEP_NEVER : seen_wait ? DEP_WAIT : DEP_OK;
    return TS_OK;
}

int job_dependency_check(const struct ctld *c, const char *spec)
{
    enum dep_state s;
    return evaluate(c, NULL, spec, 0, &s);
}

int job_dependency_state(const struct ctld *c, const struct job *j, time_t now)
{
    enum dep_state s = DEP_OK;
    if (evaluate(c, j, j->leader->rec->desc->dependency, now, &s) != TS_OK)
        return JOB_DEP_NEVER; /* malformed or on itself: it can never be satisfied */
    return s == DEP_OK ? JOB_DEP_OK : s == DEP_WAIT ? JOB_DEP_WAIT : JOB_DEP_NEVER;
}
