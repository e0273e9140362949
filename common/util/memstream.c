#include "common/util/memstream.h"

#include <stdlib.h>

char *memstream_done(FILE *f, char **text)
{
    int failed = ferror(f);

    /* the buffer pointer is only final once the stream is closed */
    if (fclose(f) != 0 || failed) {
        free(*text);
        return NULL;
    }
    return *text;
}
