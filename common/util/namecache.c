/* User and group names for ids, cached (common/util/namecache.h).
 *
 * The entries live in one array allocated at creation and reused in insertion order (a
 * ring): the table never grows past its bound, and a full table forgets its oldest
 * entry. A hash map finds an id's entry. An expired entry is looked up again in place. */
#include "common/util/namecache.h"

#include "common/util/errors.h"
#include "common/util/hashmap.h"

#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct entry {
    uint64_t key;      /* kind << 32 | id */
    char *name;        /* NULL: the slot is free */
    time_t fetched;
    int ttl;
};

struct namecache {
    struct namecache_config cfg;
    struct entry *slots;
    size_t next;       /* the slot the next new id takes */
    struct hashmap *index;
};

static time_t system_clock(void *arg)
{
    (void)arg;
    return time(NULL);
}

struct namecache *namecache_create(const struct namecache_config *cfg)
{
    struct namecache *nc = calloc(1, sizeof(*nc));
    if (!nc)
        return NULL;
    if (cfg)
        nc->cfg = *cfg;
    if (!nc->cfg.max_entries)
        nc->cfg.max_entries = NAMECACHE_DEFAULT_ENTRIES;
    if (nc->cfg.ttl <= 0)
        nc->cfg.ttl = NAMECACHE_DEFAULT_TTL;
    if (nc->cfg.negative_ttl <= 0)
        nc->cfg.negative_ttl = NAMECACHE_DEFAULT_NEGATIVE_TTL;
    if (!nc->cfg.lookup)
        nc->cfg.lookup = namecache_nss_lookup;
    if (!nc->cfg.clock)
        nc->cfg.clock = system_clock;
    nc->slots = calloc(nc->cfg.max_entries, sizeof(*nc->slots));
    nc->index = hashmap_create();
    if (!nc->slots || !nc->index)
        goto error;
    return nc;
error:
    namecache_destroy(nc);
    return NULL;
}

void namecache_destroy(struct namecache *nc)
{
    if (!nc)
        return;
    for (size_t i = 0; nc->slots && i < nc->cfg.max_entries; i++)
        free(nc->slots[i].name);
    free(nc->slots);
    hashmap_destroy(nc->index);
    free(nc);
}

size_t namecache_count(const struct namecache *nc)
{
    return nc ? hashmap_count(nc->index) : 0;
}

/* A slot for a new key: the next one in the ring, its old entry forgotten. NULL when the
 * index cannot take the key (out of memory): the name is then simply not cached. */
static struct entry *take_slot(struct namecache *nc, uint64_t key)
{
    struct entry *e = &nc->slots[nc->next];
    if (e->name) {
        hashmap_del(nc->index, &e->key, sizeof(e->key));
        free(e->name);
        e->name = NULL;
    }
    if (hashmap_put(nc->index, &key, sizeof(key), e) != TS_OK)
        return NULL;
    e->key = key;
    nc->next = (nc->next + 1) % nc->cfg.max_entries;
    return e;
}

/* Fresh: fetched no longer than its ttl ago (a clock that went back counts as stale). */
static int fresh(const struct entry *e, time_t now)
{
    return e->name && now >= e->fetched && now - e->fetched < e->ttl;
}

static int ask(namecache_lookup_fn lookup, void *arg, enum namecache_kind kind, uint32_t id,
               char *name, size_t len)
{
    int found = lookup(arg, kind, id, name, len);
    if (found != 1)
        snprintf(name, len, "%" PRIu32, id);
    return found;
}

const char *namecache_name(struct namecache *nc, enum namecache_kind kind, uint32_t id,
                           char *buf, size_t len)
{
    if (!buf || !len)
        return "";
    if (!nc) {
        ask(namecache_nss_lookup, NULL, kind, id, buf, len);
        return buf;
    }
    uint64_t key = (uint64_t)kind << 32 | id;
    time_t now = nc->cfg.clock(nc->cfg.arg);
    struct entry *e = hashmap_get(nc->index, &key, sizeof(key));
    if (e && fresh(e, now)) {
        snprintf(buf, len, "%s", e->name);
        return buf;
    }
    char name[NAMECACHE_NAME_MAX];
    /* a failed lookup is kept as briefly as a missing name: asking a failing NSS on every
     * call is what the cache is there to prevent */
    int found = ask(nc->cfg.lookup, nc->cfg.arg, kind, id, name, sizeof(name));
    snprintf(buf, len, "%s", name);
    char *copy = strdup(name);
    if (!e)
        e = copy ? take_slot(nc, key) : NULL;
    if (!e) {
        free(copy);
        return buf;
    }
    free(e->name);
    e->name = copy;
    e->fetched = now;
    e->ttl = found == 1 ? nc->cfg.ttl : nc->cfg.negative_ttl;
    if (!copy) /* out of memory: the slot is free again */
        hashmap_del(nc->index, &key, sizeof(key));
    return buf;
}

/* One NSS entry, by id (name NULL) or by name: its name into buf, its id into *id. 1 found,
 * 0 none, -1 the lookup failed. getpwuid_r and friends want a buffer whose size sysconf
 * only suggests: it grows on ERANGE rather than being trusted. */
static int nss_entry(enum namecache_kind kind, const char *name, uint32_t *id, char *buf,
                     size_t len)
{
    size_t blen = 1024;
    for (int tries = 0; tries < 8; tries++, blen *= 4) {
        char *tmp = malloc(blen);
        if (!tmp)
            return -1;
        const char *found = NULL;
        int rc;
        if (kind == NAMECACHE_GROUP) {
            struct group gr, *res = NULL;
            rc = name ? getgrnam_r(name, &gr, tmp, blen, &res)
                      : getgrgid_r((gid_t)*id, &gr, tmp, blen, &res);
            if (rc == 0 && res) {
                found = gr.gr_name;
                *id = (uint32_t)gr.gr_gid;
            }
        } else {
            struct passwd pw, *res = NULL;
            rc = name ? getpwnam_r(name, &pw, tmp, blen, &res)
                      : getpwuid_r((uid_t)*id, &pw, tmp, blen, &res);
            if (rc == 0 && res) {
                found = pw.pw_name;
                *id = (uint32_t)pw.pw_uid;
            }
        }
        if (found && buf)
            snprintf(buf, len, "%s", found);
        free(tmp);
        if (found)
            return 1;
        if (rc == 0 || rc == ENOENT || rc == ESRCH)
            return 0;
        if (rc != ERANGE)
            return -1;
    }
    return -1;
}

int namecache_nss_lookup(void *arg, enum namecache_kind kind, uint32_t id, char *buf,
                         size_t len)
{
    (void)arg;
    return nss_entry(kind, NULL, &id, buf, len);
}

int namecache_nss_id(enum namecache_kind kind, const char *name, uint32_t *id)
{
    uint32_t found = 0;
    int rc = nss_entry(kind, name, &found, NULL, 0);
    if (rc == 1)
        *id = found;
    return rc;
}

int namecache_user_groups(const char *user, gid_t gid, gid_t *groups, int max)
{
    int n = max;
    if (getgrouplist(user, gid, groups, &n) < 0)
        n = 0; /* more groups than we keep, or none known: the primary group alone */
    if (n == 0) {
        groups[0] = gid;
        n = 1;
    }
    return n;
}
