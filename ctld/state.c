/* The controller's persistent state: schema record and counters.
 *
 * On first start the environment is empty: we write the schema record and the first job
 * id (FirstJobId) and wait for the commit before serving. Later starts read them back;
 * FirstJobId then no longer matters, so ids never repeat across restarts. */
#include "ctld/ctld.h"

#include "common/conf/conf.h"
#include "common/util/errors.h"
#include "common/util/log.h"
#include "ctld/store.h"
#include "ctld/store_file.h"
#include "tessera.pb-c.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define META_KEY "schema"
#define NEXT_JOB_ID_KEY "next_job_id"

static int put_meta(struct ctld *c)
{
    Tessera__StoreMeta meta = TESSERA__STORE_META__INIT;
    meta.schema_version = CTLD_SCHEMA_VERSION;
    meta.created = (int64_t)c->start_time;
    meta.cluster = c->conf->cluster_name;
    uint8_t buf[512];
    size_t len = tessera__store_meta__get_packed_size(&meta);
    if (len > sizeof(buf))
        return TS_ETOOBIG;
    tessera__store_meta__pack(&meta, buf);
    return store_put(c->store, STORE_DB_META, META_KEY, strlen(META_KEY), buf, len);
}

static int check_meta(struct ctld *c, const void *val, size_t len, char *errbuf, size_t errlen)
{
    Tessera__StoreMeta *meta = tessera__store_meta__unpack(NULL, len, val);
    if (!meta) {
        snprintf(errbuf, errlen, "state in %s: schema record is corrupt",
                 c->conf->state_save_location);
        return TS_ESTORE_CORRUPT;
    }
    int err = TS_OK;
    if (meta->schema_version > CTLD_SCHEMA_VERSION) {
        snprintf(errbuf, errlen, "state in %s has schema version %u, newer than this "
                 "controller's %u", c->conf->state_save_location, meta->schema_version,
                 CTLD_SCHEMA_VERSION);
        err = TS_ESTORE;
    } else if (strcmp(meta->cluster, c->conf->cluster_name) != 0) {
        snprintf(errbuf, errlen, "state in %s belongs to cluster %s, not %s",
                 c->conf->state_save_location, meta->cluster, c->conf->cluster_name);
        err = TS_ESTORE;
    }
    tessera__store_meta__free_unpacked(meta, NULL);
    return err;
}

int ctld_state_save_next_job_id(struct ctld *c)
{
    Tessera__Counter ctr = TESSERA__COUNTER__INIT;
    ctr.value = c->next_job_id;
    uint8_t buf[16];
    size_t len = tessera__counter__pack(&ctr, buf);
    return store_put(c->store, STORE_DB_COUNTERS, NEXT_JOB_ID_KEY, strlen(NEXT_JOB_ID_KEY), buf,
                     len);
}

static int load_next_job_id(struct ctld *c, char *errbuf, size_t errlen)
{
    void *val = NULL;
    size_t len = 0;
    int err = store_get(c->store, STORE_DB_COUNTERS, NEXT_JOB_ID_KEY, strlen(NEXT_JOB_ID_KEY),
                        &val, &len);
    if (err == TS_ENOENT) {
        c->next_job_id = c->conf->first_job_id;
        return ctld_state_save_next_job_id(c);
    }
    if (err)
        return err;
    Tessera__Counter *ctr = tessera__counter__unpack(NULL, len, val);
    free(val);
    if (!ctr || ctr->value == 0) {
        if (ctr)
            tessera__counter__free_unpacked(ctr, NULL);
        snprintf(errbuf, errlen, "state in %s: job id counter is corrupt",
                 c->conf->state_save_location);
        return TS_ESTORE_CORRUPT;
    }
    c->next_job_id = ctr->value;
    tessera__counter__free_unpacked(ctr, NULL);
    return TS_OK;
}

int ctld_state_load(struct ctld *c, char *errbuf, size_t errlen)
{
    void *val = NULL;
    size_t len = 0;
    int err = store_get(c->store, STORE_DB_META, META_KEY, strlen(META_KEY), &val, &len);
    if (err == TS_ENOENT && store_had_state(c->store)) {
        /* an environment without our records where one was kept: never a new cluster */
        snprintf(errbuf, errlen,
                 "the state in %s is damaged: it holds no schema record, but %s says a state "
                 "was kept there; restore data.mdb from a backup made with mdb_copy, or "
                 "remove %s/%s to start a new cluster deliberately",
                 c->conf->state_save_location, STORE_FILE_MARKER,
                 c->conf->state_save_location, STORE_FILE_MARKER);
        return TS_ESTORE_DAMAGED;
    }
    if (err == TS_ENOENT) {
        log_info("state: new state in %s", c->conf->state_save_location);
        err = put_meta(c);
    } else if (err == TS_OK) {
        err = check_meta(c, val, len, errbuf, errlen);
        free(val);
    }
    if (!err)
        err = load_next_job_id(c, errbuf, errlen);
    if (!err)
        err = store_sync(c->store); /* what we just wrote is on disk before we serve */
    if (err && !errbuf[0])
        snprintf(errbuf, errlen, "state in %s: %s", c->conf->state_save_location,
                 ts_strerror(err));
    if (!err)
        log_info("state: next job id %llu", (unsigned long long)c->next_job_id);
    /* from now on a missing or empty data.mdb here is damage, not a new cluster (also
     * for a state kept from before markers existed) */
    if (!err && !store_had_state(c->store) &&
        store_file_mark(c->conf->state_save_location) != TS_OK)
        log_error("state: cannot write %s/%s (%s); a lost data.mdb would pass for a new "
                  "cluster until it is written at the next start",
                  c->conf->state_save_location, STORE_FILE_MARKER, strerror(errno));
    return err;
}
