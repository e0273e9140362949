/* Slurm's "%[.#][width]X" output formats (squeue -o, sinfo -o) as a scan: literal text,
 * "%%" for a percent, and fields, each handed to the caller, which knows what the
 * letters mean. */
#ifndef TESSERA_COMMON_FMTSPEC_H
#define TESSERA_COMMON_FMTSPEC_H

#include <stddef.h>

#define FMTSPEC_MAX_WIDTH 65535

struct fmtspec_field {
    char letter;
    int width; /* 0: none given */
    int right; /* "." */
    int grow;  /* "#" */
};

struct fmtspec_ops {
    /* Each returns TS_OK, or an error that ends the scan (TS_EOPTVALUE for a letter the
     * caller does not know). */
    int (*literal)(void *arg, const char *text, size_t len);
    int (*field)(void *arg, const struct fmtspec_field *f);
};

/* Scan format. On TS_EOPTVALUE, *bad and *badlen point at the offending text (the
 * letter, an empty string at the end of the format, or the rest of the format from a
 * field whose width is too large) for the caller's message. */
int fmtspec_scan(const char *format, const struct fmtspec_ops *ops, void *arg, const char **bad,
                 size_t *badlen);

#endif
