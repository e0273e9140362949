/* What a test's node daemons made in the cgroup hierarchies, removed. */
#include "harness.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

void harness_cgroup_cleanup(const char *cluster, const char *node)
{
    FILE *f = fopen("/proc/self/mounts", "re");
    if (!f)
        return;
    char dev[256], dir[1024], type[64];
    while (fscanf(f, "%255s %1023s %63s %*[^\n]", dev, dir, type) == 3) {
        if (strcmp(type, "cgroup") != 0 && strcmp(type, "cgroup2") != 0)
            continue;
        char path[1400];
        /* the levels others still use stay: rmdir removes empty folders only */
        snprintf(path, sizeof(path), "%s/tessera/%s/%s", dir, cluster, node);
        rmdir(path);
        snprintf(path, sizeof(path), "%s/tessera/%s", dir, cluster);
        rmdir(path);
        snprintf(path, sizeof(path), "%s/tessera", dir);
        rmdir(path);
    }
    fclose(f);
}
