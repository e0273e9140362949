/* sbcast's credential (docs/protocol.md, "File broadcast"): the controller's signed
 * permission for a job's user to write files on the nodes of the job, or of one of its
 * components, while it runs. The node daemons check it before they write anything, as
 * they check step credentials, and refuse it once the job ended there (revocation). */
#include "ctld/ctld.h"
#include "ctld/job.h"
#include "ctld/rpc.h"

#include "common/auth/cred.h"
#include "common/conf/conf.h"
#include "common/rpc/rpc_server.h"
#include "common/util/errors.h"
#include "common/util/hashmap.h"
#include "common/util/log.h"
#include "common/util/namecache.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The owner (or an administrator) and a running unit, every selected component running:
 * the credential outlives nothing that ended (the nodes revoke it when the job ends). */
static int check_selection(struct ctld *c, struct job **found, int n, uid_t uid)
{
    const Tessera__JobRecord *lr = found[0]->leader->rec;
    if (!job_owner_or_admin(c, found[0]->leader, uid))
        return TS_EUSER_ID;
    if (lr->state == TESSERA__JOB_STATE__JOB_PENDING)
        return TS_EJOB_PENDING;
    if (lr->state == TESSERA__JOB_STATE__JOB_SUSPENDED)
        return TS_EJOB_SUSPENDED;
    for (int i = 0; i < n; i++)
        if (found[i]->rec->state != TESSERA__JOB_STATE__JOB_RUNNING || found[i]->rec->end_pending)
            return TS_EALREADY_DONE;
    return TS_OK;
}

static void free_nodes(Tessera__BcastCredential *cred)
{
    for (size_t i = 0; i < cred->n_nodes; i++)
        free(cred->nodes[i]);
    free(cred->nodes);
    cred->nodes = NULL;
    cred->n_nodes = 0;
}

/* One node into the credential (names and addresses point into the configuration, which
 * does not change while the loop runs this handler). */
static int add_node(struct ctld *c, Tessera__BcastCredential *cred, size_t cap, const char *name)
{
    const struct conf_node *cn = conf_find_node(c->conf, name);
    if (!cn || cred->n_nodes >= cap)
        return TS_EINVALID_NODE_NAME;
    Tessera__BcastNode *bn = malloc(sizeof(*bn));
    if (!bn)
        return TS_ENOMEM;
    tessera__bcast_node__init(bn);
    bn->name = (char *)cn->name;
    bn->addr = (char *)cn->addr;
    bn->port = cn->port;
    cred->nodes[cred->n_nodes++] = bn;
    return TS_OK;
}

/* The selected components' nodes, each once, in the components' order. */
static int collect_nodes(struct ctld *c, struct job **found, int n, Tessera__BcastCredential *cred)
{
    size_t cap = 0;
    for (int i = 0; i < n; i++)
        cap += found[i]->rec->n_allocs;
    struct hashmap *seen = hashmap_create();
    cred->nodes = calloc(cap ? cap : 1, sizeof(*cred->nodes));
    int err = seen && cred->nodes ? TS_OK : TS_ENOMEM;
    for (int i = 0; !err && i < n; i++) {
        const Tessera__JobRecord *r = found[i]->rec;
        for (size_t k = 0; !err && k < r->n_allocs; k++) {
            const char *name = r->allocs[k]->node;
            if (hashmap_get_str(seen, name))
                continue;
            err = hashmap_put_str(seen, name, (void *)name) ? TS_ENOMEM
                                                              : add_node(c, cred, cap, name);
        }
    }
    hashmap_destroy(seen);
    return err;
}

static int sign(struct ctld *c, const Tessera__BcastCredential *cred,
                Tessera__BcastCredResponse *resp)
{
    size_t len = tessera__bcast_credential__get_packed_size(cred);
    resp->credential.data = malloc(len ? len : 1);
    resp->signature.data = malloc(CRED_SIG_LEN);
    if (!resp->credential.data || !resp->signature.data)
        return TS_ENOMEM;
    resp->credential.len = tessera__bcast_credential__pack(cred, resp->credential.data);
    resp->signature.len = CRED_SIG_LEN;
    return cred_sign_bcast(c->cred_key, resp->credential.data, resp->credential.len,
                           resp->signature.data);
}

static void respond(struct rpc_request *req, Tessera__BcastCredResponse *bc)
{
    Tessera__Response resp = TESSERA__RESPONSE__INIT;
    resp.msg_case = TESSERA__RESPONSE__MSG_BCAST_CRED;
    resp.bcast_cred = bc;
    rpc_respond(req, &resp);
}

void ctld_handle_bcast_cred(struct rpc_request *req, const Tessera__Request *msg, void *arg)
{
    struct ctld *c = arg;
    const char *text = msg->bcast_cred->job_id;
    uid_t uid = rpc_request_uid(req);
    struct job *found[JOB_MAX_COMPONENTS];
    int whole = 0;
    int n = text && *text ? job_resolve(&c->jobs, text, JOB_SCOPE_DISPLAY, 0, found,
                                        JOB_MAX_COMPONENTS, &whole)
                          : -TS_EINVALID_JOB_ID;
    int err = n <= 0 ? (n < 0 ? -n : TS_EINVALID_JOB_ID) : check_selection(c, found, n, uid);
    if (err) {
        rpc_respond_error(req, err, NULL);
        return;
    }
    const Tessera__JobRecord *lr = found[0]->leader->rec;
    char uname[256];
    namecache_name(c->names, NAMECACHE_USER, lr->desc->user_id, uname, sizeof(uname));
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    Tessera__BcastCredential cred = TESSERA__BCAST_CREDENTIAL__INIT;
    cred.job_id = lr->job_id;
    cred.uid = lr->desc->user_id;
    cred.gid = lr->desc->group_id;
    cred.user_name = uname;
    cred.issued = now.tv_sec;
    cred.issued_ms = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
    cred.expires = now.tv_sec + CRED_BCAST_LIFETIME;
    cred.cluster = c->conf->cluster_name;
    uint32_t ids[JOB_MAX_COMPONENTS];
    for (int i = 0; i < n; i++)
        ids[i] = found[i]->rec->job_id;
    cred.component_ids = ids;
    cred.n_component_ids = (size_t)n;
    Tessera__BcastCredResponse bc = TESSERA__BCAST_CRED_RESPONSE__INIT;
    err = collect_nodes(c, found, n, &cred);
    if (!err)
        err = sign(c, &cred, &bc);
    if (err) {
        rpc_respond_error(req, err, NULL);
    } else {
        log_info("job %s: file broadcast credential for uid %u (asked by uid %u), %zu nodes", text,
                 cred.uid, (unsigned)uid, cred.n_nodes);
        bc.cred = &cred;
        respond(req, &bc);
    }
    free(bc.credential.data);
    free(bc.signature.data);
    free_nodes(&cred);
}
