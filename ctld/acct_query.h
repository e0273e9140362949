/* sacct's question (AcctQueryRequest) as the controller answers it: which jobs the -j
 * items name (the het rules of docs/06-sacct.md §2), whether a record passes the filters and the
 * time window (Slurm's rules), and which index to walk (the plan). Pure functions over
 * records, so that the rules are tested apart from LMDB. docs/accounting.md. */
#ifndef TESSERA_COMMON_ACCT_QUERY_H
#define TESSERA_COMMON_ACCT_QUERY_H

#include "tessera.pb-c.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* One -j item: "93", "93+1", "93.2", "93+1.batch" (the step part is the command's). */
struct acct_sel {
    uint32_t id;
    int has_offset;
    uint32_t offset;
};

struct acct_query {
    const Tessera__AcctQueryRequest *req;
    struct acct_sel *sels;
    size_t nsels;
    const uint32_t *uids;   /* the users whose jobs may be returned; NULL: anybody's */
    size_t nuids;
    uint32_t caller_uid;
    int windowed;           /* -S or -E given: the window applies */
    int64_t start, end;     /* the window; end resolved (the end of this second when not
                             * given) */
};

/* Parse the request for a caller (admin: may see every user's jobs). TS_OK,
 * TS_EINVALID_JOB_ID for a bad -j item, TS_ENOMEM. */
int acct_query_init(struct acct_query *q, const Tessera__AcctQueryRequest *req, uid_t caller,
                    int admin, time_t now);
void acct_query_fini(struct acct_query *q);

/* What a -j lookup needs to know of a job id: does it exist, and its het fields. */
typedef int (*acct_lookup_fn)(void *arg, uint32_t job_id, uint32_t *het_job_id,
                              uint32_t *het_job_offset);

/* The components the -j items name, ascending and unique (docs/06-sacct.md §2 with
 * --whole-hetjob). *ids is malloc'd (NULL when none). */
int acct_query_select_ids(const struct acct_query *q, acct_lookup_fn lookup, void *arg,
                          uint32_t **ids, size_t *n);

/* Every filter but -j: users, accounts, partitions, names, groups, states and the window
 * (Slurm's: a job is in [start, end] when it was eligible before end and had not ended
 * before start; with -s, when it was in one of those states during the window). */
int acct_query_matches(const struct acct_query *q, const Tessera__AcctJob *j);

/* Which records to look at. */
enum acct_plan_kind {
    ACCT_PLAN_IDS,       /* the -j items' ids: direct lookups */
    ACCT_PLAN_END_RANGE, /* acct_by_end keys with end in [end_from, end_to], and end 0 */
    ACCT_PLAN_SCAN,      /* every record */
};

struct acct_plan {
    enum acct_plan_kind kind;
    int64_t end_from, end_to;
    int running_too;     /* END_RANGE: also the records that have not ended (end 0) */
};

/* max_span: the longest time any stored record spent between eligible and end; no record
 * eligible before the window's end can have ended after end + max_span. */
void acct_query_plan(const struct acct_query *q, int64_t max_span, struct acct_plan *out);

#endif
