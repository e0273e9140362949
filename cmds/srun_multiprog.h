/* srun --multi-prog: reading and checking the configuration file before the step starts
 * (common/job/multiprog.h has its format; the step daemons parse the text again). */
#ifndef TESSERA_CMDS_SRUN_MULTIPROG_H
#define TESSERA_CMDS_SRUN_MULTIPROG_H

#include <stdint.h>

/* The file's text (NUL-terminated), read as the user, at most MULTIPROG_MAX_BYTES; NULL
 * after printing Slurm's error when it cannot be read or is too large. */
char *srun_multiprog_read(const char *prog, const char *path);

/* 0 when the text gives every one of ntasks tasks exactly one program; else prints why,
 * as Slurm's srun does, and returns 1. */
int srun_multiprog_check(const char *prog, const char *text, const char *path,
                         uint32_t ntasks);

#endif
