/* Where a command's program is, found the way Slurm's commands find it.
 *
 * A name with a '/' is taken as given; a bare name is the first executable regular file
 * among the folders of PATH, and then in the current folder (Slurm's rule: `salloc
 * myscript.sh` runs ./myscript.sh when PATH has none). Pure file-system lookups by the
 * caller's own identity: a daemon acting for a user calls it only after becoming them. */
#ifndef TESSERA_COMMON_EXECPATH_H
#define TESSERA_COMMON_EXECPATH_H

#include <stddef.h>

/* path: the PATH to search (NULL: "/usr/local/bin:/usr/bin:/bin"); an empty entry is the
 * current folder. The result goes to out (absolute when found through the current
 * folder). TS_OK, TS_ENOENT (nothing executable of that name), TS_ETOOBIG (out too
 * small). */
int execpath_find(const char *prog, const char *path, char *out, size_t len);

#endif
