/* User and group names for ids, cached: a bounded table whose entries expire, names that
 * do not exist (or whose lookup failed) cached as their number for a shorter while.
 *
 * The controller keeps one for everything its loop resolves (SLURM_JOB_USER, %u in output
 * patterns, fair-share entities): a slow NSS then costs one lookup per id every few
 * minutes instead of one per job and cycle. The lookup and the clock are injectable so
 * that tests need no real NSS and no waiting. */
#ifndef TESSERA_COMMON_NAMECACHE_H
#define TESSERA_COMMON_NAMECACHE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#define NAMECACHE_DEFAULT_ENTRIES 4096
#define NAMECACHE_DEFAULT_TTL 300          /* seconds a found name is kept */
#define NAMECACHE_DEFAULT_NEGATIVE_TTL 60  /* seconds "no such id" is kept */
#define NAMECACHE_NAME_MAX 256             /* longer names are cut (never in practice) */

enum namecache_kind {
    NAMECACHE_USER,
    NAMECACHE_GROUP,
};

/* Look id up: write its name (NUL-terminated) into buf and return 1; 0 when it has
 * none; a negative value when the lookup itself failed. */
typedef int (*namecache_lookup_fn)(void *arg, enum namecache_kind kind, uint32_t id,
                                   char *buf, size_t len);
typedef time_t (*namecache_clock_fn)(void *arg);

struct namecache_config {
    size_t max_entries;          /* 0: NAMECACHE_DEFAULT_ENTRIES */
    int ttl;                     /* seconds; 0: NAMECACHE_DEFAULT_TTL */
    int negative_ttl;            /* seconds; 0: NAMECACHE_DEFAULT_NEGATIVE_TTL */
    namecache_lookup_fn lookup;  /* NULL: namecache_nss_lookup */
    namecache_clock_fn clock;    /* NULL: time(NULL) */
    void *arg;                   /* for lookup and clock */
};

struct namecache;

/* cfg may be NULL (all defaults). NULL when out of memory. */
struct namecache *namecache_create(const struct namecache_config *cfg);
void namecache_destroy(struct namecache *nc);

/* The name of a user or group into buf (the id as a number when it has none), returned.
 * nc may be NULL: then every call asks the lookup (the system's). */
const char *namecache_name(struct namecache *nc, enum namecache_kind kind, uint32_t id,
                           char *buf, size_t len);

/* The system's lookups, uncached (NSS through getpwuid_r and friends, their buffer grown
 * on ERANGE); every user and group lookup of the daemons and commands goes through these
 * or the cache. By id: the name into buf. */
int namecache_nss_lookup(void *arg, enum namecache_kind kind, uint32_t id, char *buf,
                         size_t len);
/* By name: the id into *id. 1 found, 0 no such name, -1 the lookup failed. */
int namecache_nss_id(enum namecache_kind kind, const char *name, uint32_t *id);
/* The groups a process of user (primary group gid) gets: at most max into groups (at
 * least one: gid alone when the user's are unknown or too many). */
int namecache_user_groups(const char *user, gid_t gid, gid_t *groups, int max);

/* How many entries are held (for tests). */
size_t namecache_count(const struct namecache *nc);

#endif
