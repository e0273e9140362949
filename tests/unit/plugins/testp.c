/* Plugins for test_plugin: one source built several times with different definitions
 * (see tests/unit/CMakeLists.txt): a good one, one of another ABI, one of another type,
 * one whose init fails, and one without an ops table. */
#include "common/util/plugin.h"

#include <stdint.h>

#ifndef TESTP_ABI
#define TESTP_ABI PLUGIN_ABI_VERSION
#endif
#ifndef TESTP_TYPE
#define TESTP_TYPE "testp"
#endif
#ifndef TESTP_INIT_RESULT
#define TESTP_INIT_RESULT 0
#endif

struct testp_ops {
    struct plugin_header header;
    int (*answer)(void);
};

/* Set by init and fini, read through answer(): shows they were called. */
static int state;

static int init(void *arg)
{
    state = arg ? *(const int *)arg : 1;
    return TESTP_INIT_RESULT;
}

static void fini(void)
{
    state = -1;
}

static int answer(void)
{
    return state;
}

#ifndef TESTP_NO_TABLE
const struct testp_ops tessera_plugin = {
    .header = {.type = TESTP_TYPE, .name = TESTP_NAME, .abi_version = TESTP_ABI,
               .init = init, .fini = fini},
    .answer = answer,
};
#else
int not_a_plugin(void);
int not_a_plugin(void)
{
    return answer() + init(0) + (fini(), 0);
}
#endif
