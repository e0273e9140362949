/* libFuzzer target: the job option parser on arbitrary command lines and scripts. The
 * input is "argument\nargument\n...\n\0script": words up to a NUL byte become sbatch's
 * argv (one per line), the rest its script. A parse that succeeds must give at least one
 * component, each with a name and a work_dir; one that fails must say why. */
#include "common/jobopt/jobopt.h"
#include "common/util/errors.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size + 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    buf[size] = '\0';
    char *script = memchr(buf, '\0', size) ? buf + strlen(buf) + 1 : NULL;
    if (script && script > buf + size)
        script = NULL;

    char *argv[64] = {(char *)"sbatch"};
    int argc = 1;
    for (char *save = NULL, *w = strtok_r(buf, "\n", &save); w && argc < 63;
         w = strtok_r(NULL, "\n", &save))
        argv[argc++] = w;
    argv[argc] = NULL;
    char *envp[] = {(char *)"SBATCH_ACCOUNT=fuzz", (char *)"PATH=/bin", NULL};
    struct jobopt_input in = {.cmd = JOBOPT_SBATCH, .argc = argc, .argv = argv, .envp = envp,
                              .now = 1700000000, .cwd = "/tmp",
                              .script_text = script ? script : "#!/bin/sh\ntrue\n"};
    struct jobopt opt;
    char err[512] = "";
    int rc = jobopt_parse(&in, &opt, err, sizeof(err));
    if (rc == TS_OK) {
        if (!opt.help && !opt.version) {
            if (opt.ncomponents == 0)
                abort();
            for (size_t i = 0; i < opt.ncomponents; i++)
                if (!opt.components[i]->name || !opt.components[i]->work_dir)
                    abort();
        }
        jobopt_free(&opt);
    } else if (!err[0]) {
        abort();
    }
    free(buf);
    return 0;
}
