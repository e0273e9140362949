/* A job's private data (ctld/job_private.h): kept out of every answer but one, and that
 * one given only to the job's owner and administrators. */
#include "ctld/job_private.h"

#include "ctld/ctld.h"
#include "ctld/job.h"
#include "ctld/rpc.h"

#include "common/rpc/rpc_server.h"
#include "common/util/errors.h"
#include "common/util/log.h"

#include <stdlib.h>

struct job_public {
    Tessera__JobRecord rec;
    Tessera__JobDesc desc;
};

struct job_public *job_public_records(Tessera__JobRecord **recs, size_t n)
{
    struct job_public *p = calloc(n ? n : 1, sizeof(*p));
    if (!p)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        p[i].rec = *recs[i];
        if (recs[i]->desc) {
            p[i].desc = *recs[i]->desc;
            /* the answer still says what the script made the job: a batch job */
            p[i].rec.batch = recs[i]->batch || recs[i]->desc->script;
            p[i].desc.script = NULL;
            p[i].desc.environment = NULL;
            p[i].desc.n_environment = 0;
            p[i].desc.argv = NULL;
            p[i].desc.n_argv = 0;
            p[i].rec.desc = &p[i].desc;
        }
        recs[i] = &p[i].rec;
    }
    return p;
}

void job_public_free(struct job_public *p)
{
    free(p);
}

/* The job whose private data text means (a het job's: its leader's), if uid may have
 * them: the owner or an administrator. */
static int private_data_of(struct ctld *c, const char *text, uid_t uid,
                           const Tessera__JobDesc **out)
{
    struct job *found[JOB_MAX_COMPONENTS];
    int whole = 0;
    int n = text && *text ? job_resolve(&c->jobs, text, JOB_SCOPE_DISPLAY, 0, found,
                                        JOB_MAX_COMPONENTS, &whole)
                          : -TS_EINVALID_JOB_ID;
    if (n <= 0)
        return n < 0 ? -n : TS_EINVALID_JOB_ID;
    const Tessera__JobDesc *d = found[0]->leader->rec->desc;
    if (!job_owner_or_admin(c, found[0]->leader, uid))
        return TS_EUSER_ID;
    if (!d->script)
        return TS_ENO_BATCH_SCRIPT;
    *out = d;
    return TS_OK;
}

void ctld_handle_job_script(struct rpc_request *req, const Tessera__Request *msg, void *arg)
{
    struct ctld *c = arg;
    const char *text = msg->job_script->job_id;
    uid_t uid = rpc_request_uid(req);
    const Tessera__JobDesc *d = NULL;
    int err = private_data_of(c, text, uid, &d);
    if (err) {
        rpc_respond_error(req, err, NULL);
        return;
    }
    if (uid != (uid_t)d->user_id)
        log_info("job %s: batch script given to uid %u", text, (unsigned)uid);
    Tessera__JobScriptResponse js = TESSERA__JOB_SCRIPT_RESPONSE__INIT;
    js.script = d->script;
    js.environment = d->environment;
    js.n_environment = d->n_environment;
    js.argv = d->argv;
    js.n_argv = d->n_argv;
    Tessera__Response resp = TESSERA__RESPONSE__INIT;
    resp.msg_case = TESSERA__RESPONSE__MSG_JOB_SCRIPT;
    resp.job_script = &js;
    rpc_respond(req, &resp);
}
