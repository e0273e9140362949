#include "common/util/execpath.h"

#include "common/util/errors.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int executable_file(const char *file)
{
    struct stat st;
    return stat(file, &st) == 0 && S_ISREG(st.st_mode) && access(file, X_OK) == 0;
}

static int put(char *out, size_t len, const char *dir, size_t dlen, const char *prog)
{
    int n = dlen ? snprintf(out, len, "%.*s/%s", (int)dlen, dir, prog)
                 : snprintf(out, len, "%s", prog);
    return n < 0 || (size_t)n >= len ? TS_ETOOBIG : TS_OK;
}

int execpath_find(const char *prog, const char *path, char *out, size_t len)
{
    if (!prog || !*prog)
        return TS_ENOENT;
    if (strchr(prog, '/')) {
        if (put(out, len, NULL, 0, prog) != TS_OK)
            return TS_ETOOBIG;
        return executable_file(out) ? TS_OK : TS_ENOENT;
    }
    char cwd[4096];
    if (!getcwd(cwd, sizeof(cwd)))
        cwd[0] = '\0';
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    for (const char *p = path;; p++) {
        size_t dlen = strcspn(p, ":");
        const char *dir = dlen ? p : cwd;
        size_t n = dlen ? dlen : strlen(cwd);
        if (n && put(out, len, dir, n, prog) == TS_OK && executable_file(out))
            return TS_OK;
        p += dlen;
        if (*p != ':')
            break;
    }
    if (cwd[0] && put(out, len, cwd, strlen(cwd), prog) == TS_OK && executable_file(out))
        return TS_OK;
    return TS_ENOENT;
}
