/* One project-wide set of error codes with stable texts.
 *
 * Codes travel on the wire (Response.error.code) and are kept in logs, so a code's number
 * and text never change once released: add new codes at the end of their group.  Texts
 * that Slurm users and scripts know are Slurm's own wording. */
#ifndef TESSERA_COMMON_ERRORS_H
#define TESSERA_COMMON_ERRORS_H

/* X(name, number, text) */
#define TS_ERRORS(X)                                                                     \
    X(TS_OK, 0, "Success")                                                               \
    /* generic */                                                                        \
    X(TS_ENOMEM, 1, "Out of memory")                                                     \
    X(TS_EINVAL, 2, "Invalid argument")                                                  \
    X(TS_ESYS, 3, "System call failed")                                                  \
    X(TS_ENOENT, 4, "No such file or directory")                                         \
    X(TS_ETOOBIG, 5, "Value too large")                                                  \
    X(TS_ETIMEDOUT, 6, "Operation timed out")                                            \
    X(TS_EAGAIN, 7, "Resource temporarily unavailable")                                  \
    X(TS_ESHUTDOWN, 8, "Daemon is shutting down")                                        \
    X(TS_ENOTSUP, 9, "Operation not supported")                                          \
    X(TS_EPERM, 10, "Access/permission denied")                                          \
    X(TS_EEXIST, 11, "Already exists")                                                   \
    X(TS_EADDRINUSE, 12, "Address already in use")                                       \
    X(TS_EBUSY, 13, "Too many requests or connections")                                  \
    X(TS_EINTR, 14, "Interrupted")                                                       \
    /* parsing (100s) */                                                                 \
    X(TS_EHOSTLIST, 100, "Invalid hostlist")                                             \
    X(TS_EIDSET, 101, "Invalid id set")                                                  \
    X(TS_ETIMEFMT, 102, "Invalid time specification")                                   \
    X(TS_ECONF, 103, "Invalid configuration")                                            \
    X(TS_ECONF_NOTFOUND, 104, "Configuration file not found")                            \
    X(TS_ENUMBER, 105, "Invalid number")                                                 \
    /* wire protocol (200s) */                                                           \
    X(TS_EFRAME_TOOBIG, 200, "Frame exceeds the maximum size")                           \
    X(TS_EFRAME_TRUNCATED, 201, "Connection closed in the middle of a frame")            \
    X(TS_EDECODE, 202, "Message could not be decoded")                                   \
    X(TS_EVERSION, 203, "Protocol version mismatch")                                     \
    X(TS_EPROTO, 204, "Protocol violation")                                              \
    X(TS_ECONNECT, 205, "Unable to contact the daemon")                                  \
    X(TS_ECLOSED, 206, "Connection closed by peer")                                      \
    X(TS_EUNKNOWN_RPC, 207, "Unknown request type")                                      \
    /* authentication (300s) */                                                          \
    X(TS_EAUTH, 300, "Authentication failed")                                            \
    X(TS_EAUTH_CRED, 301, "Invalid authentication credential")                           \
    X(TS_EAUTH_EXPIRED, 302, "Authentication credential expired")                        \
    X(TS_EAUTH_REPLAYED, 303, "Authentication credential replayed")                      \
    X(TS_EAUTH_BINDING, 304, "Authentication credential does not match the message")     \
    X(TS_EAUTH_UNAUTHORIZED, 305, "Authentication credential is for another user")       \
    X(TS_EAUTH_HMAC, 306, "Message authentication code mismatch")                        \
    X(TS_EAUTH_SEQ, 307, "Message sequence number out of order")                         \
    X(TS_EAUTH_MUNGE, 308, "MUNGE daemon unreachable")                                   \
    X(TS_EAUTH_TARGET, 310, "Authentication credential is for another daemon")          \
    X(TS_EAUTH_CLOCK, 311, "Authentication credential time is outside the accepted window") \
    /* storage (400s) */                                                                 \
    X(TS_ESTORE, 400, "State store error")                                               \
    X(TS_ESTORE_FULL, 401, "State store is full")                                        \
    X(TS_ESTORE_CORRUPT, 402, "State store record is corrupt")                           \
    X(TS_ESTORE_DAMAGED, 403, "State store file is damaged")                             \
    X(TS_ESTORE_FAILING, 404, "State store cannot commit; changes are refused until it can") \
    X(TS_ESTORE_LOW_SPACE, 405, "Too little free disk space for the controller's state") \
    /* plugins (500s) */                                                                 \
    X(TS_EPLUGIN_NOTFOUND, 500, "Plugin not found")                                      \
    X(TS_EPLUGIN_ABI, 501, "Plugin ABI version mismatch")                                \
    X(TS_EPLUGIN_TYPE, 502, "Plugin is of another type")                                 \
    X(TS_EPLUGIN_INIT, 503, "Plugin initialisation failed")                              \
    /* command lines (600s) */                                                           \
    X(TS_EOPTION, 600, "Unrecognized option or missing argument")                       \
    X(TS_EOPTVALUE, 601, "Invalid option value")                                         \
    X(TS_ESCRIPT, 602, "Invalid batch script")                                           \
    /* jobs (1000s); Slurm's wording */                                                  \
    X(TS_EINVALID_JOB_ID, 1000, "Invalid job id specified")                             \
    X(TS_ENO_PARTITION, 1001, "No partition specified or system default partition")     \
    X(TS_EINVALID_PARTITION, 1002, "Invalid partition name specified")                  \
    X(TS_ENODES_NOT_IN_PARTITION, 1003, "Requested nodes not in this partition")        \
    X(TS_ETOO_MANY_CPUS, 1004, "More processors requested than permitted")              \
    X(TS_ENODE_COUNT, 1005, "Node count specification invalid")                         \
    X(TS_ENODE_CONFIG, 1006, "Requested node configuration is not available")           \
    X(TS_EALREADY_DONE, 1007, "Job/step already completing or completed")               \
    X(TS_EJOB_PENDING, 1008, "Job is pending execution")                                \
    X(TS_EINVALID_FEATURE, 1009, "Invalid feature specification")                       \
    X(TS_EINVALID_NODE_NAME, 1010, "Invalid node name specified")                       \
    X(TS_EDEPENDENCY, 1011, "Job dependency problem")                                   \
    X(TS_EINVALID_LICENSES, 1012, "Invalid license specification")                      \
    X(TS_EINVALID_TIME_LIMIT, 1013, "Requested time limit is invalid (missing or exceeds some limit)") \
    X(TS_EJOB_NOT_PENDING, 1014, "Job is no longer pending execution")                  \
    X(TS_EJOB_SUSPENDED, 1015, "Job is current suspended, requested operation disabled") \
    X(TS_EJOB_NOT_RUNNING, 1016, "Job is not running")                                  \
    X(TS_EJOB_NOT_SUSPENDED, 1017, "Job is not suspended")                              \
    X(TS_ENOT_HET_JOB, 1018, "Job not heterogeneous job")                               \
    X(TS_ENOT_HET_LEADER, 1019, "Job not heterogeneous job leader")                     \
    X(TS_ENOT_WHOLE_HET_JOB, 1020, "Operation not permitted on individual component of heterogeneous job") \
    X(TS_EINVALID_NICE, 1021, "Invalid --nice value")                                   \
    X(TS_EINVALID_TIME_MIN, 1022, "Invalid time-min specification (exceeds job's time or other limits)") \
    X(TS_EDISABLED, 1023, "Requested operation is presently disabled")                  \
    X(TS_EPARTITION_NOT_AVAIL, 1024, "Required partition not available (inactive or drain)") \
    X(TS_ETASK_COUNT, 1025, "Task count specification invalid")                         \
    X(TS_ECPU_COUNT, 1026, "CPU count specification invalid")                           \
    X(TS_EJOB_HELD, 1027, "Job is in held state, pending scheduler release")            \
    X(TS_EMEMORY, 1028, "Memory required by task is not available")                     \
    X(TS_EJOB_ARRAY, 1029, "Invalid job array specification")                           \
    X(TS_EINVALID_QOS, 1030, "Invalid qos specification")                               \
    X(TS_EJOB_NOT_FINISHED, 1031, "Job is not finished")                                \
    X(TS_EUSER_ID, 1032, "Invalid user id")                                             \
    X(TS_EINVALID_TIME, 1033, "Invalid time specified")                                 \
    X(TS_ETRANSITION, 1034, "Job can not be altered now, try again later")              \
    X(TS_ESTEP_NOT_FOUND, 1035, "Job step not found")                                   \
    X(TS_EHET_GROUP, 1036, "Invalid het group")                                         \
    X(TS_EHETJOB_STEPS, 1037, "Job steps that span multiple components of a heterogeneous job are not currently supported") \
    X(TS_ESUBMIT_FILTER_FAILED, 1040, "submission filter failed the job")                \
    X(TS_ESUBMIT_FILTER_TIMEOUT, 1041, "submission filter timed out")                    \
    X(TS_ESUBMIT_FILTER_NOT_FOUND, 1042, "submission filter not found")                  \
    X(TS_ESUBMIT_FILTER_INVALID, 1043, "submission filter wrote an invalid job")         \
    X(TS_EMAX_JOB_COUNT, 1044, "Slurm temporarily unable to accept job, sleeping and retrying") \
    X(TS_EACCOUNTING_POLICY, 1045, "Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)") \
    X(TS_ESCRIPT_TOOBIG, 1046, "Batch job script is larger than the controller accepts") \
    X(TS_EENV_TOOBIG, 1047, "Job environment is larger than the controller accepts")   \
    X(TS_EPATH_TOOLONG, 1048, "File name pattern is too long")                          \
    X(TS_ENO_BATCH_SCRIPT, 1055, "Job script not specified")                            \
    X(TS_EINVALID_SIGNAL, 1060, "Invalid --signal specification")                       \
    X(TS_ENOT_SUPPORTED_HERE, 1064, "Requested operation not supported on this system") \
    X(TS_ETIME_DECREMENT, 1065, "TimeLimit decrement larger than current time limit")  \
    X(TS_ESTEP_BUSY, 1068, "Requested nodes are busy")                                  \
    X(TS_ESTEP_COMPONENTS, 1069, "The step's components do not fit in the allocation")  \
    X(TS_ESTEP_NODELIST, 1070, "Requested nodelist overlaps with excluded nodes")         \
    X(TS_EOPTSPEC, 1076, "Invalid option specification")                                \
                                                                                         \
    X(TS_ECRED_INVALID, 1100, "Invalid job credential")                                 \
    X(TS_ECRED_EXPIRED, 1101, "Job credential expired")                                 \
    X(TS_ECRED_REPLAYED, 1102, "Job credential replayed")                               \
    X(TS_ECRED_REVOKED, 1103, "Job credential revoked")                                 \
    /* generic resources (410s, requests); Slurm's wording */                           \
    X(TS_EINVALID_GRES, 410, "Invalid generic resource (gres) specification")            \
    X(TS_EINVALID_TRES, 411, "Invalid Trackable RESource (TRES) specification")            \
    X(TS_EGRES_NOT_SCHEDULED, 412,                                                       \
      "Generic resources are not scheduled yet: a job asking for them is refused rather "  \
      "than run without them")

typedef enum ts_err {
#define TS_ERR_ENUM(name, num, text) name = num,
    TS_ERRORS(TS_ERR_ENUM)
#undef TS_ERR_ENUM
} ts_err;

/* The stable text of a code; "Unknown error N" style text for codes this build does not
 * know (a newer peer may send them). Never NULL. The returned text for unknown codes is
 * in a thread-local buffer. */
const char *ts_strerror(int code);

/* True when code is a member of the enum. */
int ts_err_known(int code);

#endif
