/* A line the node daemon adds to a user's file (the OOM notice in a batch job's error
 * file, docs/containment.md §3): a child becomes the user (groups, gid, uid), enters the
 * job's folder and appends, so the daemon never opens a user's path as root. The child
 * never blocks on a FIFO and is not waited for: the daemon reaps it when it ends. */
#ifndef TESSERA_NODED_USERFILE_H
#define TESSERA_NODED_USERFILE_H

#include <sys/types.h>

struct noded;

struct userfile_owner {
    uid_t uid;
    gid_t gid;
    const char *user_name;   /* for the supplementary groups */
    const char *work_dir;    /* where a relative path starts */
};

/* text appended to path as owner. TS_OK when the child started. */
int userfile_append(struct noded *nd, const struct userfile_owner *owner, const char *path,
                    const char *text);

#endif
