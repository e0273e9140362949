/* Signals by name or number as Slurm's commands take them (scancel --signal, sbatch
 * --signal): "USR1", "SIGUSR1", "usr1" or "10".
 */
#ifndef TESSERA_COMMON_SIGNAME_H
#define TESSERA_COMMON_SIGNAME_H

#include <stddef.h>

/* The highest signal number accepted: a number above it is no signal of Linux's. */
#define SIGNAME_MAX 64

/* The first len characters of s as a signal: its number (1..SIGNAME_MAX), or -1. */
int signame_parse(const char *s, size_t len);

#endif
