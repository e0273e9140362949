#include "common/util/errors.h"

#include <stdio.h>

struct err_text {
    int code;
    const char *text;
};

static const struct err_text err_table[] = {
#define TS_ERR_ROW(name, num, text) {num, text},
    TS_ERRORS(TS_ERR_ROW)
#undef TS_ERR_ROW
};

static const char *lookup(int code)
{
    for (size_t i = 0; i < sizeof(err_table) / sizeof(err_table[0]); i++)
        if (err_table[i].code == code)
            return err_table[i].text;
    return NULL;
}

const char *ts_strerror(int code)
{
    static _Thread_local char unknown[32];
    const char *text = lookup(code);
    if (text)
        return text;
    snprintf(unknown, sizeof(unknown), "Unknown error %d", code);
    return unknown;
}

int ts_err_known(int code)
{
    return lookup(code) != NULL;
}
