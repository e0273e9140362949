/* Inside common/acctfmt*: the field table shared by the layout and the formatters. */
#ifndef TESSERA_COMMON_ACCTFMT_INT_H
#define TESSERA_COMMON_ACCTFMT_INT_H

#include "common/format/acctfmt.h"

/* Writes the field's value for the row into buf (len >= 1; buf starts empty). */
typedef void (*acctfmt_fn)(const struct acctfmt_row *row, struct jobfmt_ctx *ctx, char *buf,
                           size_t len);

struct acctfmt_field {
    const char *name;
    int width; /* Slurm's default: negative left-justifies */
    acctfmt_fn fn;
};

/* Slurm 22.05's fields in its order (the order "-o" prefixes are tried in and
 * --helpformat prints), then Tessera's own. */
extern const struct acctfmt_field acctfmt_fields[];
extern const size_t acctfmt_nfields;

/* The job's requested memory in MB over the whole job, 0 when none was asked for. */
uint64_t acctfmt_req_mem_mb(const Tessera__AcctJob *job);
/* Sum of user and system CPU time over the finished steps of a job row (or the step's
 * own), in microseconds. */
void acctfmt_cpu_usec(const struct acctfmt_row *row, uint64_t *user, uint64_t *sys);
/* A job row's DerivedExitCode: the worst wait status of its steps other than the batch
 * script (a signal ranks over any exit code), 0 without steps. */
int32_t acctfmt_derived_exit(const struct acctfmt_row *row);
/* The end of a row as printed: a step without an end takes its job's. */
int64_t acctfmt_end(const struct acctfmt_row *row);

#endif
