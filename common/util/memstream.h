/* Texts built with open_memstream: the one way to finish one. */
#ifndef TESSERA_COMMON_UTIL_MEMSTREAM_H
#define TESSERA_COMMON_UTIL_MEMSTREAM_H

#include <stdio.h>

/* Close f, a stream from open_memstream(text, ...): *text when everything was written,
 * else NULL with *text freed (out of memory mid-way). */
char *memstream_done(FILE *f, char **text);

#endif
