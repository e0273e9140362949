/* Jobs in LMDB: one JobRecord per component in the "jobs" database, keyed by the
 * component's id (8 bytes, big-endian, so cursor order is id order). */
#include "ctld/acct.h"
#include "ctld/ctld.h"
#include "ctld/job.h"
#include "ctld/job_change.h"
#include "ctld/step.h"

#include "common/util/errors.h"
#include "common/util/log.h"
#include "ctld/store.h"

#include <stdio.h>
#include <stdlib.h>

int job_save(struct ctld *c, struct job *j)
{
    size_t len = tessera__job_record__get_packed_size(j->rec);
    uint8_t *buf = malloc(len ? len : 1);
    if (!buf)
        return TS_ENOMEM;
    tessera__job_record__pack(j->rec, buf);
    uint8_t key[8];
    store_key_u64(key, j->rec->job_id);
    int err = store_put(c->store, STORE_DB_JOBS, key, sizeof(key), buf, len);
    free(buf);
    struct job_change ch = {.kind = JOB_CHANGE_SAVED, .job_id = j->rec->job_id, .job = j,
                            .stored = err == TS_OK};
    job_changed(c, &ch); /* accounting's record goes into the same batch: one commit */
    return err;
}

int job_forget(struct ctld *c, struct job *j)
{
    step_free_all(c, j, 1);
    uint8_t key[8];
    struct job_change ch = {.kind = JOB_CHANGE_FORGOTTEN, .job_id = j->rec->job_id};
    store_key_u64(key, j->rec->job_id);
    int err = store_del(c->store, STORE_DB_JOBS, key, sizeof(key));
    job_table_remove(&c->jobs, j);
    job_changed(c, &ch);
    return err;
}

struct load_state {
    struct ctld *c;
    size_t loaded;
    char *errbuf;
    size_t errlen;
};

static int load_one(void *arg, const void *key, size_t klen, const void *val, size_t vlen)
{
    struct load_state *ls = arg;
    Tessera__JobRecord *rec = tessera__job_record__unpack(NULL, vlen, val);
    if (!rec || klen != 8 || store_key_get_u64(key) != rec->job_id || !rec->desc) {
        if (rec)
            tessera__job_record__free_unpacked(rec, NULL);
        snprintf(ls->errbuf, ls->errlen, "state: job record %llu is corrupt",
                 klen == 8 ? (unsigned long long)store_key_get_u64(key) : 0ull);
        return TS_ESTORE_CORRUPT;
    }
    if (!job_insert(&ls->c->jobs, rec)) {
        tessera__job_record__free_unpacked(rec, NULL);
        return TS_ENOMEM;
    }
    ls->loaded++;
    return TS_OK;
}

int job_table_load(struct ctld *c, char *errbuf, size_t errlen)
{
    struct load_state ls = {.c = c, .errbuf = errbuf, .errlen = errlen};
    int err = store_foreach(c->store, STORE_DB_JOBS, load_one, &ls);
    /* every component is in: link het jobs to their leaders */
    for (struct job *j = c->jobs.head; !err && j; j = j->next) {
        if (j->rec->het_job_id && j->rec->het_job_offset == 0) {
            err = job_link_het(&c->jobs, j);
            if (err)
                snprintf(errbuf, errlen, "state: het job %u is missing components",
                         j->rec->job_id);
        }
    }
    for (struct job *j = c->jobs.head; !err && j; j = j->next) {
        if (j->rec->het_job_id && j->leader->rec->job_id != j->rec->het_job_id) {
            snprintf(errbuf, errlen, "state: component %u of het job %u has no leader",
                     j->rec->job_id, j->rec->het_job_id);
            err = TS_ESTORE_CORRUPT;
        }
    }
    /* dependencies are parsed once, here, not at every evaluation */
    for (struct job *j = c->jobs.head; !err && j; j = j->next)
        if (j->leader == j)
            err = job_dependency_attach(c, j);
    if (!err)
        log_info("state: %zu job records loaded", ls.loaded);
    return err;
}
