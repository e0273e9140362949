/* srun --multi-prog before the step starts (cmds/srun_multiprog.h). */
#include "cmds/srun_multiprog.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmds/cmdutil.h"
#include "common/job/multiprog.h"
#include "common/util/errors.h"

char *srun_multiprog_read(const char *prog, const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    char *text = fd >= 0 ? malloc(MULTIPROG_MAX_BYTES + 1) : NULL;
    size_t len = 0;
    ssize_t got = 0;
    while (text && len <= MULTIPROG_MAX_BYTES &&
           (got = read(fd, text + len, MULTIPROG_MAX_BYTES + 1 - len)) > 0)
        len += (size_t)got;
    if (fd >= 0)
        close(fd);
    if (!text || got < 0) {
        cmd_error(prog, "Could not open multi_prog config file %s", path); /* Slurm's */
        free(text);
        return NULL;
    }
    if (len > MULTIPROG_MAX_BYTES || memchr(text, '\0', len)) {
        if (len > MULTIPROG_MAX_BYTES)
            cmd_error(prog, "Configuration file %s is larger than %u bytes", path,
                      MULTIPROG_MAX_BYTES);
        else /* the text travels as a string: it cannot hold a NUL */
            cmd_error(prog, "Configuration file %s invalid, it is not text", path);
        free(text);
        return NULL;
    }
    text[len] = '\0';
    return text;
}

int srun_multiprog_check(const char *prog, const char *text, const char *path,
                         uint32_t ntasks)
{
    char why[1024];
    struct multiprog *mp = NULL;
    int err = multiprog_parse(text, strlen(text), ntasks, path, &mp, why, sizeof(why));
    multiprog_destroy(mp);
    if (err == TS_ENOMEM)
        cmd_error(prog, "%s", ts_strerror(err));
    char *line = why;
    while (err && *line) { /* one error line per reason */
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        cmd_error(prog, "%s", line);
        line = nl ? nl + 1 : line + strlen(line);
    }
    return err ? 1 : 0;
}
