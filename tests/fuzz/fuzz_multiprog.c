/* libFuzzer target for common/multiprog: the step daemon parses configuration text it
 * receives from the network, so any bytes must be refused or parsed within the bounds. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/job/multiprog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint32_t ntasks = data[0] % 17; /* the first byte picks a step size */
    char why[512];
    struct multiprog *mp = NULL;
    if (multiprog_parse((const char *)data + 1, size - 1, ntasks, "fuzz", &mp, why,
                        sizeof(why)) != 0)
        return 0;
    char *extra[] = {"x"};
    for (uint32_t r = 0; r < ntasks; r++) {
        char **argv = NULL;
        if (multiprog_argv(mp, r, extra, 1, &argv) == 0)
            multiprog_argv_free(argv);
    }
    multiprog_destroy(mp);
    return 0;
}
