/* Licence requests (-L name[:count],...): the one check of their form that sbatch, salloc
 * and the controller share. The controller checks every request at submission and at
 * update, so a request that never went through the commands ("matlab:-5") is refused as
 * well; what licences exist and how many are free is for activation filters to count
 * (docs/filters.md). */
#ifndef TESSERA_COMMON_LICENSES_H
#define TESSERA_COMMON_LICENSES_H

#define LICENSES_MAX_LEN 1024     /* characters in a whole request */
#define LICENSES_MAX_ITEMS 64     /* names in one request */
#define LICENSES_MAX_NAME 64      /* characters in one name */
#define LICENSES_MAX_COUNT 100000 /* licences of one name in one item */

/* TS_OK when spec is a list of name[:count] items separated by commas: names of letters,
 * digits, '_', '-', '.', '@'; counts decimal, from 1 to LICENSES_MAX_COUNT; within the
 * bounds above. TS_EINVALID_LICENSES otherwise (NULL included). */
int licenses_check(const char *spec);

#endif
